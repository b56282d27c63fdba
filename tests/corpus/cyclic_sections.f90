! Array assignments, FORALLs, WHERE constructs and reductions on CYCLIC and
! CYCLIC(3) arrays outside DO loops: whole arrays, sections with strides 1,
! 3 and -2, a rank-2 array CYCLIC along its columns, an array aligned one
! template cell away (`ALIGN B(I) WITH T(I-1)`); each runs course by course
! when its reads lie on the left side's template cells. A shifted section
! `A(1:N) = A(0:N-1)` and a floating-point SUM stay on rank 0.
program cyclic_sections
  implicit none
  integer, parameter :: n = 29
  real :: a(0:n), b(n), s
  integer :: k(0:n), g(3, 0:n), i, total, big
  integer :: c(n), d(n)
  logical :: pos(0:n)
!HPF$ PROCESSORS P(4)
!HPF$ TEMPLATE T(0:N)
!HPF$ DISTRIBUTE T(CYCLIC(3)) ONTO P
!HPF$ ALIGN A(I) WITH T(I)
!HPF$ ALIGN B(I) WITH T(I-1)
!HPF$ ALIGN (I) WITH T(I) :: K, POS
!HPF$ ALIGN G(*, I) WITH T(I)
!HPF$ DISTRIBUTE C(CYCLIC) ONTO P
!HPF$ ALIGN D(I) WITH C(I)
  do i = 0, n
    k(i) = mod(7 * i, 11) - 4
    a(i) = real(i) / 4.0
  end do
  b = 1.5
  c = 2
  ! Sections with strides 1, 3 and -2, reads on the same template cells.
  a(2:n:3) = a(2:n:3) + real(k(2:n:3))
  b(n:1:-2) = b(n:1:-2) * a(n-1:0:-2) + 0.25
  k(1:n) = k(1:n) * 3 + mod(k(1:n), 5)
  d = c + 10
  d(n:2:-3) = c(n:2:-3) * d(n:2:-3) - 1
  c(5:n:4) = max(d(5:n:4), 40) + c(5:n:4)
  ! A rank-2 array CYCLIC along its columns.
  g = 1
  g(2, :) = g(1, :) + 4
  g(3, 1:n:5) = g(2, 1:n:5) * 2 - g(1, 1:n:5)
  g(1:3:2, n:0:-7) = g(1:3:2, n:0:-7) + 5
  ! FORALLs on the home's cells, with a mask and a negative stride.
  forall (i = 1:n) b(i) = b(i) + a(i-1)
  forall (i = n:0:-3, k(i) > 0) k(i) = -k(i)
  forall (i = 1:n) c(i) = c(i) + d(i) * i
  ! WHERE statements and constructs.
  pos = k > 0
  where (pos) k = k + 100
  where (a > 3.0)
    a = a - 3.0
  elsewhere (a > 1.0)
    a = 2.0 * a
  elsewhere
    a = -a
  end where
  ! Elements from the same cells of other arrays.
  k(7) = k(7) + int(a(7))
  d(4) = c(4) - d(4)
  ! Reductions that do not depend on the order of the operations (some masked).
  total = sum(k) + maxval(c(2:n:2)) - minval(d(n:1:-3))
  big = count(pos) * 1000 + product(g(2, 1:4))
  print '(A,I8,I8)', 'total, big =', total, big
  print '(A,L2,L2,I6)', 'any, all, dot =', any(k > 100), all(c > 0), dot_product(c(1:6), d(1:6))
  print '(A,2F10.4)', 'max, min a =', maxval(a), minval(b(2:n))
  print '(A,2I6,F10.4)', 'masked =', sum(k, mask=pos), minval(c(n:1:-2), mask=d(n:1:-2) > 20), &
    maxval(a(1:n:4), mask=a(1:n:4) < 2.0)
  ! A shift: other processes' data, fetched first.
  a(1:n) = a(0:n-1)
  s = sum(a)
  print '(A,F10.4)', 'sum a =', s
  print '(10I6)', k
  print '(10I6)', c
  print '(10I6)', d
  print '(10I5)', g(2, :)
  print '(10I5)', g(3, :)
  print '(5F10.4)', a
  print '(5F10.4)', b
end program cyclic_sections
