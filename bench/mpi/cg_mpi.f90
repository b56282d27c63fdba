! Hand-written MPI version of cg.f90, for comparison: the same BLOCK split of
! the vectors, a one-element halo of p exchanged with MPI_Sendrecv before each
! matvec, MPI_Allreduce for the two dot products of each iteration. The loops
! are those of the sequential program (no fusion of a dot product into the
! loop before it), so the comparison is of the same algorithm.
program cg_mpi
  use mpi_f08
  implicit none
  integer, parameter :: n = 2000000, itmax = @SWEEPS@
  double precision, allocatable :: x(:), r(:), p(:), q(:), b(:)
  double precision :: rho, rho_old, alpha, pq, tol, local, total
  integer :: rank, np, chunk, lo, hi, left, right, i, iter
  integer(8) :: t0, t1, rate
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  chunk = (n + np - 1) / np
  lo = rank * chunk + 1
  hi = min(lo + chunk - 1, n)
  allocate (x(lo:hi), r(lo:hi), p(lo-1:hi+1), q(lo:hi), b(lo:hi))
  left = merge(MPI_PROC_NULL, rank - 1, rank == 0)
  right = merge(MPI_PROC_NULL, rank + 1, rank == np - 1)
  do i = lo, hi
    b(i) = 1.0d0 + dble(mod(i, 7))
    x(i) = 0.0d0
    r(i) = b(i)
    p(i) = b(i)
  end do
  ! Outside the matrix: p(0) and p(n+1) stay 0, so rows 1 and n need no case.
  p(lo-1) = 0.0d0
  p(hi+1) = 0.0d0
  local = 0.0d0
  do i = lo, hi
    local = local + r(i) * r(i)
  end do
  call MPI_Allreduce(local, rho, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  tol = 1.0d-20 * rho
  iter = 0
  call system_clock(t0, rate)
  do while (rho > tol .and. iter < itmax)
    iter = iter + 1
    call MPI_Sendrecv(p(hi), 1, MPI_DOUBLE_PRECISION, right, 1, p(lo-1), 1, MPI_DOUBLE_PRECISION, left, 1, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call MPI_Sendrecv(p(lo), 1, MPI_DOUBLE_PRECISION, left, 2, p(hi+1), 1, MPI_DOUBLE_PRECISION, right, 2, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    do i = lo, hi
      q(i) = 2.001d0 * p(i) - p(i - 1) - p(i + 1)
    end do
    local = 0.0d0
    do i = lo, hi
      local = local + p(i) * q(i)
    end do
    call MPI_Allreduce(local, pq, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
    alpha = rho / pq
    local = 0.0d0
    do i = lo, hi
      x(i) = x(i) + alpha * p(i)
      r(i) = r(i) - alpha * q(i)
    end do
    local = 0.0d0
    do i = lo, hi
      local = local + r(i) * r(i)
    end do
    rho_old = rho
    call MPI_Allreduce(local, rho, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
    do i = lo, hi
      p(i) = r(i) + (rho / rho_old) * p(i)
    end do
  end do
  call system_clock(t1)
  if (rank == 0) write (0, '(a,f8.3)') 'kernel seconds: ', dble(t1 - t0) / dble(rate)
  local = sum(x)
  call MPI_Allreduce(local, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    print '(a,i0,a,es12.4)', 'iterations ', iter, ' residual ', sqrt(rho)
    print '(a,es18.10)', 'sum(x) ', total
  end if
  call MPI_Finalize()
end program cg_mpi
