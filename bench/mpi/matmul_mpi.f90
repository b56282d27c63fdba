! Hand-written MPI version of matmul.f90: A, B and C in column blocks as
! HPF's (*, BLOCK) cuts them; each sweep gathers all of A on every process
! (one MPI_Allgatherv) and multiplies it by the process's columns of B with
! the intrinsic, which is what such codes usually do (memory: all of A).
program matmul_mpi
  use mpi_f08
  implicit none
  integer, parameter :: n = 1200, sweeps = @SWEEPS@
  double precision, allocatable :: a(:, :), b(:, :), c(:, :), a_all(:, :)
  double precision :: total, corner(2)
  integer, allocatable :: counts(:), displs(:)
  integer :: rank, np, m, lo, hi, i, j, s, p
  integer(8) :: t0, t1, rate
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  ! HPF's BLOCK: ceil(n / np) columns per process.
  m = (n + np - 1) / np
  allocate (counts(0:np - 1), displs(0:np - 1))
  do p = 0, np - 1
    counts(p) = n * max(0, min(n, (p + 1) * m) - p * m)
    displs(p) = n * min(n, p * m)
  end do
  lo = min(n, rank * m) + 1
  hi = min(n, (rank + 1) * m)
  allocate (a(n, lo:hi), b(n, lo:hi), c(n, lo:hi), a_all(n, n))
  do j = lo, hi
    do i = 1, n
      a(i, j) = dble(mod(i + 2 * j, 7) - 3)
      b(i, j) = dble(mod(3 * i + j, 5) - 1)
    end do
  end do
  c = 0.0d0
  call system_clock(t0, rate)
  do s = 1, sweeps
    call MPI_Allgatherv(a, counts(rank), MPI_DOUBLE_PRECISION, a_all, counts, displs, MPI_DOUBLE_PRECISION, &
      MPI_COMM_WORLD)
    c = matmul(a_all, b)
  end do
  call system_clock(t1)
  if (rank == 0) write (0, '(a,f8.3)') 'kernel seconds: ', dble(t1 - t0) / dble(rate)
  call MPI_Reduce(sum(c), total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD)
  ! c(1,1) lives on rank 0, c(n,n) on the last process with columns.
  corner = 0.0d0
  if (lo == 1 .and. hi >= 1) corner(1) = c(1, 1)
  if (lo <= n .and. hi == n) corner(2) = c(n, n)
  call MPI_Allreduce(MPI_IN_PLACE, corner, 2, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    print '(a,f16.1)', 'sum(c) ', total
    print '(a,2f10.1)', 'c(1,1), c(n,n) ', corner(1), corner(2)
  end if
  call MPI_Finalize()
end program matmul_mpi
