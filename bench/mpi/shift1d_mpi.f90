! Hand-written MPI version of shift1d.f90, for comparison: the same BLOCK
! split of the template T(0:N+1), one-element halo exchanges per sweep.
program shift1d_mpi
  use mpi_f08
  implicit none
  integer, parameter :: n = 50000000, sweeps = @SWEEPS@
  double precision, allocatable :: a(:), b(:)
  double precision :: picked(3), total(3)
  integer :: rank, np, chunk, lo, hi, left, right, i, s, k
  integer :: wanted(3)
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  chunk = (n + 2 + np - 1) / np
  lo = rank * chunk
  hi = min(lo + chunk - 1, n + 1)
  allocate (a(lo:hi), b(lo-1:hi+1))
  left = merge(MPI_PROC_NULL, rank - 1, rank == 0)
  right = merge(MPI_PROC_NULL, rank + 1, rank == np - 1)
  do i = lo, hi
    b(i) = dble(mod(i, 1000))
  end do
  do s = 1, sweeps
    call MPI_Sendrecv(b(hi), 1, MPI_DOUBLE_PRECISION, right, 1, b(lo-1), 1, MPI_DOUBLE_PRECISION, left, 1, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call MPI_Sendrecv(b(lo), 1, MPI_DOUBLE_PRECISION, left, 2, b(hi+1), 1, MPI_DOUBLE_PRECISION, right, 2, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    do i = max(lo, 1), min(hi, n)
      a(i) = b(i-1) + b(i+1)
    end do
    do i = max(lo, 1), min(hi, n)
      b(i) = 0.5d0 * a(i)
    end do
  end do
  wanted = [1, n/2, n]
  picked = 0
  do k = 1, 3
    if (wanted(k) >= lo .and. wanted(k) <= hi) picked(k) = b(wanted(k))
  end do
  call MPI_Reduce(picked, total, 3, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD)
  if (rank == 0) print '(3F16.6)', total
  call MPI_Finalize()
end program shift1d_mpi
