! Hand-written MPI version of jacobi2d.f90, for comparison: columns of
! T(0:N+1, 0:N+1) in blocks, one-column halo exchanges per iteration.
program jacobi2d_mpi
  use mpi_f08
  implicit none
  integer, parameter :: n = 4000, iters = @SWEEPS@
  double precision, allocatable :: u(:, :), v(:, :)
  double precision :: picked(3), total(3)
  integer :: rank, np, chunk, lo, hi, left, right, i, j, k
  integer :: wanted(3)
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  chunk = (n + 2 + np - 1) / np
  lo = rank * chunk
  hi = min(lo + chunk - 1, n + 1)
  allocate (u(0:n+1, lo-1:hi+1), v(0:n+1, lo:hi))
  left = merge(MPI_PROC_NULL, rank - 1, rank == 0)
  right = merge(MPI_PROC_NULL, rank + 1, rank == np - 1)
  do j = lo, hi
    do i = 0, n+1
      u(i, j) = dble(mod(i + 2*j, 7))
    end do
  end do
  do k = 1, iters
    call MPI_Sendrecv(u(1:n, hi), n, MPI_DOUBLE_PRECISION, right, 1, u(1:n, lo-1), n, MPI_DOUBLE_PRECISION, &
                      left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call MPI_Sendrecv(u(1:n, lo), n, MPI_DOUBLE_PRECISION, left, 2, u(1:n, hi+1), n, MPI_DOUBLE_PRECISION, &
                      right, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    do j = max(lo, 1), min(hi, n)
      do i = 1, n
        v(i, j) = 0.25d0 * (u(i-1, j) + u(i+1, j) + u(i, j-1) + u(i, j+1))
      end do
    end do
    do j = max(lo, 1), min(hi, n)
      do i = 1, n
        u(i, j) = v(i, j)
      end do
    end do
  end do
  wanted = [1, n/2, n]
  picked = 0
  do k = 1, 3
    if (wanted(k) >= lo .and. wanted(k) <= hi) picked(k) = u(wanted(k), wanted(k))
  end do
  call MPI_Reduce(picked, total, 3, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD)
  if (rank == 0) print '(3F16.6)', total
  call MPI_Finalize()
end program jacobi2d_mpi
