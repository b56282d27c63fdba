! Loops reducing into one element or scalar invariant in the loop, each
! term on the owner of the loop's element: forward and backward
! substitution on (*, BLOCK) columns (a backward loop), MAX into
! elements, scalar sums and products, integer sums and a scalar sum on
! CYCLIC data. The sums mix magnitudes, so another order of the
! additions changes the digits.
program element_reductions
  implicit none
  integer, parameter :: n = 23
  double precision :: a(n, n), b(n), x(n), y(n), big(n), s, prod
  double precision :: c(n), d(n)
  integer :: k(n), m(n), total
  integer :: i, j
!HPF$ PROCESSORS PR(4)
!HPF$ DISTRIBUTE A(*, BLOCK) ONTO PR
!HPF$ ALIGN (:) WITH A(*, :) :: B, X, Y, BIG
!HPF$ DISTRIBUTE (CYCLIC) ONTO PR :: C, D, K, M
  do j = 1, n
    do i = 1, n
      a(i, j) = 1.0d-2 / dble(i + 2 * j) + dble(mod(i * j, 7)) * 1.0d-2
      if (i == j) a(i, j) = a(i, j) + 1.0d1
    end do
    b(j) = dble(mod(7 * j, 11)) * 1.0d4 + 1.0d0 / dble(j)
  end do
  ! L y = b with L the lower triangle of a (unit diagonal)
  do i = 1, n
    y(i) = b(i)
    do j = 1, i - 1
      y(i) = y(i) - a(i, j) * y(j)
    end do
  end do
  ! U x = y backwards, step -1
  do i = n, 1, -1
    x(i) = y(i)
    do j = n, i + 1, -1
      x(i) = x(i) - a(i, j) * x(j)
    end do
    x(i) = x(i) / a(i, i)
  end do
  print '(A,3ES24.16)', 'x(1), x(n/2), x(n)  =', x(1), x(n / 2), x(n)
  print '(A,3ES24.16)', 'y(1), y(n/2), y(n)  =', y(1), y(n / 2), y(n)
  ! MAX into an element: the largest entry of row i left of the diagonal
  big(1) = 1.0d0
  do i = 2, n
    big(i) = 0.5d0 * big(i - 1)
    do j = 1, i - 1
      big(i) = max(big(i), a(i, j) * big(j))
    end do
  end do
  print '(A,3ES24.16)', 'big(2), big(9), big(n) =', big(2), big(9), big(n)
  ! A scalar sum and product per row
  s = 0.0d0
  prod = 1.0d0
  do i = 1, n, 5
    do j = 1, n
      s = s + a(i, j) * x(j)
    end do
    do j = 2, n, 3
      prod = prod * (1.0d0 + 1.0d-3 * x(j))
    end do
  end do
  print '(A,2ES24.16)', 's, p                =', s, prod
  ! CYCLIC vectors: integer sums into elements, MIN into a scalar
  do i = 1, n
    k(i) = mod(13 * i, 17) - 8
    c(i) = 1.0d0 / dble(i) - 0.1d0 * dble(mod(i, 4))
  end do
  do i = 1, n
    m(i) = 0
    do j = i, n, 2
      m(i) = m(i) + k(j) * j
    end do
  end do
  total = 0
  do i = 1, n
    total = total + m(i) * i
  end do
  s = 1.0d300
  do j = 1, n
    s = min(s, c(j) * dble(k(j)))
  end do
  print '(A,I12,ES24.16)', 'total, min          =', total, s
  ! A scalar sum of CYCLIC vectors, scaled down in every round
  do i = 1, n
    d(i) = dble(mod(5 * i, 9)) * 1.0d3 + 1.0d0 / dble(i + 3)
  end do
  s = 0.0d0
  do i = 1, 3
    s = s * 0.5d0
    do j = i, n
      s = s + c(j) * d(j)
    end do
  end do
  print '(A,ES24.16)', 'cyclic sums         =', s
  s = 1.0d0
  do j = n, 1, -2
    s = s - c(j) * d(j)
  end do
  print '(A,ES24.16)', 'backward cyclic sum =', s
end program element_reductions
