! Power iteration for the dominant eigenvalue of a symmetric matrix.
! The matrix is distributed by rows; the result vector Y is aligned with
! the rows, the iterate X with the (undistributed) columns, so each process
! computes its rows of A*X from its rows of A and a full copy of X.
program power_matvec
  implicit none
  integer, parameter :: n = 48, maxit = 200
  real(8), parameter :: tol = 1.0d-10
  real(8) :: a(n, n), x(n), y(n), d(n)
!HPF$ PROCESSORS p(4)
!HPF$ DISTRIBUTE a(BLOCK, *) ONTO p
!HPF$ ALIGN y(i) WITH a(i, *)
!HPF$ ALIGN d(i) WITH a(i, *)
!HPF$ ALIGN x(j) WITH a(*, j)
  real(8) :: lambda, lambda_old, ynorm, s, err
  integer :: i, j, it

  ! a(i,j) = min(i,j)/n plus a diagonal shift: symmetric positive definite
  forall (i = 1:n, j = 1:n) a(i, j) = dble(min(i, j)) / n
  forall (i = 1:n) a(i, i) = a(i, i) + 0.5d0
  forall (i = 1:n) d(i) = a(i, i)
  x = 1.0d0 / sqrt(dble(n))
  lambda = 0.0d0
  err = 1.0d0
  it = 0
  do while (err > tol .and. it < maxit)
     it = it + 1
     lambda_old = lambda
!HPF$ INDEPENDENT, NEW(j, s)
     do i = 1, n
        s = 0.0d0
        do j = 1, n
           s = s + a(i, j) * x(j)
        end do
        y(i) = s
     end do
     lambda = dot_product(x, y)
     ynorm = sqrt(sum(y * y))
     x = y / ynorm
     err = abs(lambda - lambda_old) / abs(lambda)
     if (mod(it, 5) == 0) write (*, '(a, i4, a, f16.10, a, es10.2)') 'it', it, '  lambda', lambda, '  rel', err
  end do
  write (*, '(a, i4, a, f16.10)') 'converged in', it, ' iterations, lambda =', lambda
  write (*, '(a, 4f11.7)') 'x(1), x(n/2), x(n-1), x(n):', x(1), x(n/2), x(n-1), x(n)
  write (*, '(a, f11.7, a, i3)') 'max component', maxval(x), ' at', maxloc(x)
  write (*, '(a, f12.7)') 'trace = ', sum(d)
end program power_matvec
