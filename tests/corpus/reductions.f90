! Reductions on distributed INTEGER, REAL, DOUBLE PRECISION and LOGICAL arrays:
! SUM, PRODUCT, MAXVAL, MINVAL, COUNT, ANY, ALL, DOT_PRODUCT, and a DO loop
! with INDEPENDENT, NEW(X), REDUCTION(S); CYCLIC and CYCLIC(4) distributions.
program reductions
  implicit none
  integer, parameter :: n = 40
  integer :: k(n), i, s, x, isum
  real :: r(n)
  double precision :: d(n), e(n), dsum
  logical :: even(n)
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE K(CYCLIC) ONTO P
!HPF$ DISTRIBUTE (CYCLIC(4)) ONTO P :: D, E
!HPF$ ALIGN R(I) WITH K(I)
!HPF$ ALIGN EVEN(I) WITH K(I)
  do i = 1, n
    k(i) = mod(7 * i, 23) - 11
    r(i) = real(i) / 4.0
    d(i) = 1.0d0 / dble(i)
    e(i) = dble(i)
    even(i) = mod(k(i), 2) == 0
  end do
  s = 0
!HPF$ INDEPENDENT, NEW(X), REDUCTION(S)
  do i = 1, n
    x = k(i) * k(i)
    s = s + x
  end do
  print *, 'sum of squares ', s, sum(k * k)
  print *, 'sum  ', sum(k), ' max ', maxval(k), ' min ', minval(k)
  print *, 'maxloc ', maxloc(k), ' minloc ', minloc(k)
  print *, 'prod ', product(k(1:6)), ' count ', count(even)
  print *, 'any  ', any(k > 10), ' all ', all(k >= -11), all(even)
  print *, 'dot  ', dot_product(k(1:10), k(11:20))
  isum = sum(k, mask=.not. even)
  print *, 'odd sum ', isum
  print '(A,F10.4)', 'sum r     =', sum(r)
  dsum = dot_product(d, e)
  print '(A,F10.4)', 'dot(d,e)  =', dsum
  print '(A,F12.8)', 'harmonic  =', sum(d)
end program reductions
