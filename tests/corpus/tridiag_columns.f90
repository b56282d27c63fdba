! Implicit diffusion down the columns of a field distributed by columns.
! Every time step solves one tridiagonal system per column (the Thomas
! algorithm) with work arrays private to the column (NEW), then smooths
! each column through a work copy with reflecting ends that every
! iteration fills before it reads it (private without NEW).
program tridiag_columns
  implicit none
  integer, parameter :: m = 30, n = 17, nsteps = 5
  real(8) :: u(m, n), f(m, n)
!HPF$ PROCESSORS p(4)
!HPF$ DISTRIBUTE (*, BLOCK) ONTO p :: u, f
  real(8) :: c(m), d(m), w(0:m+1), a, b, denom, total
  integer :: i, j, step

  a = 0.35d0
  do j = 1, n
     do i = 1, m
        u(i, j) = sin(0.3d0 * i) * cos(0.2d0 * j) + 0.01d0 * mod(i * j, 7)
     end do
  end do

  do step = 1, nsteps
     f = u
     ! (1 + 2a + 0.01 j) u(i) - a u(i-1) - a u(i+1) = f(i), column by column
!HPF$ INDEPENDENT, NEW(c, d, b, denom, i)
     do j = 1, n
        b = 1.0d0 + 2.0d0 * a + 0.01d0 * j
        c(1) = -a / b
        d(1) = f(1, j) / b
        do i = 2, m
           denom = b + a * c(i-1)
           c(i) = -a / denom
           d(i) = (f(i, j) + a * d(i-1)) / denom
        end do
        u(m, j) = d(m)
        do i = m - 1, 1, -1
           u(i, j) = d(i) - c(i) * u(i+1, j)
        end do
     end do
     ! w is written at 1..m, then at 0 and m+1, before any read of it
     do j = 1, n
        do i = 1, m
           w(i) = u(i, j)
        end do
        w(0) = w(2)
        w(m+1) = w(m-1)
        do i = 1, m
           u(i, j) = 0.25d0 * w(i-1) + 0.5d0 * w(i) + 0.25d0 * w(i+1)
        end do
     end do
     total = sum(u)
     write (*, '(a, i2, a, f20.14, a, f16.12)') 'step', step, '  sum', total, '  max', maxval(abs(u))
  end do
  write (*, '(a, 3f16.12)') 'column 1, middle, last: ', sum(u(:, 1)), sum(u(:, n/2)), sum(u(:, n))
  write (*, '(a, 4f16.12)') 'diagonal: ', (u(i, i), i = 3, 15, 4)
end program tridiag_columns
