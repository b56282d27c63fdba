! Hand-written MPI version of sor.f90, for comparison: rows in blocks; per
! sweep the first row of the process above arrives (old values), then for
! each strip of columns the last row of the process below (new values), the
! strip is computed and the process's last row goes to the process above.
program sor_mpi
  use mpi_f08
  implicit none
  integer, parameter :: n = 2000, sweeps = @SWEEPS@
  double precision, allocatable :: u(:, :)
  double precision :: omega, picked(3), total(3)
  integer :: rank, np, chunk, lo, hi, below, above, i, j, k, s, e, w
  integer :: wanted(3)
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  chunk = (n + np - 1) / np
  lo = rank * chunk + 1
  hi = min(lo + chunk - 1, n)
  allocate (u(lo-1:hi+1, n))
  below = merge(MPI_PROC_NULL, rank - 1, rank == 0)
  above = merge(MPI_PROC_NULL, rank + 1, rank == np - 1)
  do j = 1, n
    do i = lo, hi
      u(i, j) = dble(mod(i + 2*j, 7))
    end do
  end do
  ! The boundary columns of the row below never change.
  call MPI_Sendrecv(u(hi, :), n, MPI_DOUBLE_PRECISION, above, 1, u(lo-1, :), n, MPI_DOUBLE_PRECISION, &
                    below, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  omega = 1.25d0
  w = max(1, (n - 2) / (4 * np))
  do k = 1, sweeps
    call MPI_Sendrecv(u(lo, :), n, MPI_DOUBLE_PRECISION, below, 2, u(hi+1, :), n, MPI_DOUBLE_PRECISION, &
                      above, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    do s = 2, n - 1, w
      e = min(s + w - 1, n - 1)
      call MPI_Recv(u(lo-1, s:e), e - s + 1, MPI_DOUBLE_PRECISION, below, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
      do j = s, e
        do i = max(lo, 2), min(hi, n - 1)
          u(i, j) = (1.0d0 - omega) * u(i, j) + omega * 0.25d0 * (u(i-1, j) + u(i+1, j) + u(i, j-1) + u(i, j+1))
        end do
      end do
      call MPI_Send(u(hi, s:e), e - s + 1, MPI_DOUBLE_PRECISION, above, 3, MPI_COMM_WORLD)
    end do
  end do
  wanted = [2, n/2, n-1]
  picked = 0
  do k = 1, 3
    if (wanted(k) >= lo .and. wanted(k) <= hi) picked(k) = u(wanted(k), wanted(k))
  end do
  call MPI_Reduce(picked, total, 3, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD)
  if (rank == 0) print '(3F20.12)', total
  call MPI_Finalize()
end program sor_mpi
