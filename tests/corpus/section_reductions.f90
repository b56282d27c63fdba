! Array assignments on BLOCK-distributed arrays (whole arrays, shifted and
! strided sections, reversed sections, rank-2 rows), element assignments,
! a time loop with a convergence test, and reductions of INTEGER, REAL,
! DOUBLE PRECISION and LOGICAL data: SUM, PRODUCT, MAXVAL, MINVAL, COUNT,
! ANY, ALL, DOT_PRODUCT.
program section_reductions
  implicit none
  integer, parameter :: n = 37, m = 3
  real :: a(n), b(n), c(0:n+1)
  double precision :: d(n), e(n)
  integer :: k(n), g(m, n), i, j, step, total, first
  logical :: big(n)
  real :: err, s
  double precision :: dsum
!HPF$ TEMPLATE T(0:N+1)
!HPF$ DISTRIBUTE T(BLOCK)
!HPF$ ALIGN (I) WITH T(I) :: A, B, D, E, K, BIG
!HPF$ ALIGN C(I) WITH T(I)
!HPF$ DISTRIBUTE G(*, BLOCK(10))
  do i = 1, n
    a(i) = real(mod(7 * i, 11)) / 4.0
    k(i) = mod(5 * i, 13) - 6
    d(i) = 1.0d0 / dble(i)
  end do
  b = 0.0
  c = 1.0
  c(0) = 0.0
  c(n+1) = 2.0
  e = d * 2.0d0 + 1.0d0
  b(2:n) = a(1:n-1) + c(2:n)
  b(1) = a(n)
  a(2:n) = a(1:n-1)
  k(n:1:-1) = k(1:n)
  g = 0
  g(2, :) = k
  g(1, 1:n:2) = k(1:n:2) * 2
  g(m, 3:n) = g(2, 1:n-2) - g(1, 3:n)
  big = a > 1.0
  forall (i = 2:n-1) b(i) = b(i) + a(i-1) - a(i+1)
  forall (i = 1:m, j = 2:n, g(i, j) >= 0) g(i, j) = g(i, j-1) + i
  ! A time loop whose body runs in parallel: a stencil, a norm, a test.
  first = 0
  do step = 1, 60
    c(1:n) = 0.5 * c(1:n) + 0.25 * (c(0:n-1) + c(2:n+1))
    err = maxval(abs(c(1:n) - 1.0))
    if (err < 0.86 .and. first == 0) first = step
    if (mod(step, 20) == 0) then
      print '(A,I4,F10.5)', 'step, sum(c) =', step, sum(c(1:n))
    else if (step == 1) then
      print '(A,F10.5)', 'c(2) =', c(2)
    end if
  end do
  i = 0
  do while (i < 3)
    i = i + 1
    b(1:n-1) = b(2:n) * 0.5
  end do
  print '(A,2I4,F10.5)', 'steps, err  =', step, first, err
  print '(A,3F10.5)', 'c(1),c(n/2),c(n) =', c(1), c(n/2), c(n)
  print '(A,F12.5)', 'sum(a)      =', sum(a)
  print '(A,F12.5)', 'sum(b(2:n)) =', sum(b(2:n))
  print '(A,F12.5)', 'b(1)        =', b(1)
  print *, 'k sum, max, min ', sum(k), maxval(k), minval(k)
  print *, 'k(1:5) ', k(1:5)
  print *, 'product(k(1:7)) ', product(k(1:7)), ' count ', count(big), count(k > 0)
  print *, 'any/all ', any(big), all(big), any(k < -5), all(k >= -6)
  print *, 'dot(k,k) ', dot_product(k, k), ' g sums ', sum(g(2, :)), sum(g(m, :)), sum(g)
  print '(A,F14.9)', 'dot(d,e)    =', dot_product(d, e)
  print '(A,F14.9)', 'sum(d)      =', sum(d)
  print '(A,F14.9)', 'product(e)  =', product(e(1:9))
  print '(A,F12.5)', 'maxval(a)   =', maxval(a), 'minval(a+b) =', minval(a + b)
  print '(A,F12.5)', 'sum(a(n:1:-2)) =', sum(a(n:1:-2))
  total = sum(k(2:n) - k(1:n-1))
  s = sum(a * b) / real(n)
  dsum = dot_product(d(1:n-1), e(2:n))
  print *, 'total ', total
  print '(A,F12.5,F14.9)', 's, dsum =', s, dsum
end program section_reductions
