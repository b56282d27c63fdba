! Array assignments, FORALLs and an element assignment between arrays
! distributed differently: BLOCK, CYCLIC, CYCLIC(2), BLOCK(3), BLOCK on
! another template and a reversed alignment. Each process computes its part
! of the left side; the elements it reads of the other arrays come through
! one all-to-all of counts, indices and values per array (an inspector/
! executor), fetched before the statement assigns anything, so a statement
! may read the array it writes. A CYCLIC left side is assigned course by
! course; a masked FORALL which reads its home reversed fetches it first.
program remap_sections
  implicit none
  integer, parameter :: n = 24, m = 12
  integer :: a(n), b(n), r(n), k(m), c(m)
  real :: x(n), y(n)
  double precision :: d(m)
  integer :: i, s
!HPF$ PROCESSORS P(4)
!HPF$ TEMPLATE T(N)
!HPF$ DISTRIBUTE T(BLOCK) ONTO P
!HPF$ ALIGN (I) WITH T(I) :: A, X
!HPF$ ALIGN R(I) WITH T(N+1-I)
!HPF$ DISTRIBUTE B(CYCLIC) ONTO P
!HPF$ DISTRIBUTE Y(CYCLIC(2)) ONTO P
!HPF$ DISTRIBUTE C(BLOCK(3)) ONTO P
!HPF$ DISTRIBUTE (BLOCK) ONTO P :: K, D
  do i = 1, n
    b(i) = mod(7 * i, 11) - 5
    r(i) = 100 + i
    y(i) = real(i) / 8.0
  end do
  do i = 1, m
    c(i) = i * i
    k(i) = 3 * i - 20
  end do
  a = 0
  x = 0.0
  d = 0.0d0
  ! Another distribution, a reversed alignment, strides between them.
  a = b + r
  print '(a, 24i5)', 'a =', a
  a(1:n:2) = b(n:1:-2) - r(2:n:2)
  print '(a, 24i5)', 'a =', a
  a(n:n-2*m+2:-2) = c + k(m:1:-1)
  print '(a, 24i5)', 'a =', a
  ! Reading the array it writes: the values from before the statement.
  a(2:n) = a(n-1:1:-1) + a(1)
  print '(a, 24i5)', 'a =', a
  a(1:n-2:3) = a(n:3:-3) - b(5)
  print '(a, 24i5)', 'a =', a
  ! Reals: a CYCLIC(2) array reversed, a neighbour of the home.
  x(2:n-1) = y(n-1:2:-1) * 2.0 + x(1:n-2)
  print '(a, 6f9.4)', 'x =', x(1:n:4)
  d(1:m) = dble(y(1:m)) + dble(c) / 4.0d0
  print '(a, 4f10.4)', 'd =', d(1:m:3)
  ! FORALLs of one index: any element of the arrays read.
  forall (i = 1:m) c(i) = b(2*i) + r(n+1-i) + k(i)
  print '(a, 12i5)', 'c =', c
  forall (i = 2:n:2) a(i) = a(n+2-i) * 2 - c(i/2)
  print '(a, 24i5)', 'a =', a
  forall (i = n:1:-1) x(i) = y(n+1-i) - x(i)
  print '(a, 6f9.4)', 'x =', x(n:1:-5)
  ! One element from an array aligned otherwise.
  a(5) = r(7) + b(3)
  ! A WHERE of one assignment reads its neighbours.
  where (a(2:n) > 0) x(1:n-1) = x(2:n) + 1.0
  print '(a, 6f9.4)', 'x =', x(1:n:5)
  ! A CYCLIC left side, reading itself too.
  b(n:1:-1) = a + b
  print '(a, 24i5)', 'b =', b
  ! A mask reading the home, a reversed read: on owners.
  forall (i = 1:n, a(i) > 0) x(i) = x(n+1-i) * 0.5
  s = sum(c) + maxval(a) + sum(a(1:n:2))
  print '(a, i8, a, i6, a, f10.4)', 's =', s, '  b(1) =', b(1), '  sum(x) =', sum(x)
end program remap_sections
