! Conjugate gradient on the 1-D Poisson-like matrix tridiag(-1, 2.001, -1):
! 1-D BLOCK, a matvec reading both neighbours, two dot products per iteration
! and a DO WHILE convergence loop (issue 29), at most ITMAX iterations
! (bench/mpi/run.sh substitutes them). The kernel time goes to stderr. The
! results print with 10 digits: the dot products of the parallel versions add
! in another order than the sequential program, which moves the last bits.
program cg
  implicit none
  integer, parameter :: n = 2000000, itmax = @SWEEPS@
  double precision :: x(n), r(n), p(n), q(n), b(n)
  double precision :: rho, rho_old, alpha, pq, tol
  integer :: i, iter
  integer(8) :: t0, t1, rate
!HPF$ DISTRIBUTE X(BLOCK)
!HPF$ ALIGN R(I) WITH X(I)
!HPF$ ALIGN P(I) WITH X(I)
!HPF$ ALIGN Q(I) WITH X(I)
!HPF$ ALIGN B(I) WITH X(I)
  do i = 1, n
    b(i) = 1.0d0 + dble(mod(i, 7))
    x(i) = 0.0d0
    r(i) = b(i)
    p(i) = b(i)
  end do
  rho = dot_product(r, r)
  tol = 1.0d-20 * rho
  iter = 0
  call system_clock(t0, rate)
  do while (rho > tol .and. iter < itmax)
    iter = iter + 1
    q(1) = 2.001d0 * p(1) - p(2)
    q(n) = 2.001d0 * p(n) - p(n - 1)
    do i = 2, n - 1
      q(i) = 2.001d0 * p(i) - p(i - 1) - p(i + 1)
    end do
    pq = dot_product(p, q)
    alpha = rho / pq
    do i = 1, n
      x(i) = x(i) + alpha * p(i)
      r(i) = r(i) - alpha * q(i)
    end do
    rho_old = rho
    rho = dot_product(r, r)
    do i = 1, n
      p(i) = r(i) + (rho / rho_old) * p(i)
    end do
  end do
  call system_clock(t1)
  write (0, '(a,f8.3)') 'kernel seconds: ', dble(t1 - t0) / dble(rate)
  print '(a,i0,a,es12.4)', 'iterations ', iter, ' residual ', sqrt(rho)
  print '(a,es18.10)', 'sum(x) ', sum(x)
end program cg
