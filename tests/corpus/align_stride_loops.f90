! Stride-2 and reversed alignments in loops, sections and reductions:
! U, V, K on the even template cells T(2*I), R and S reversed on T(N+1-I).
! Loops, sections and reductions among arrays of the same alignment run in
! parallel (stencils fetch their neighbours, floating-point sums chain in
! the sequential order, reversed: from the last process), and so do loops
! reading the identity-aligned A on their home's cells (A(2*I) for V(I));
! statements that mix them otherwise run on rank 0.
program align_stride_loops
  implicit none
  integer, parameter :: n = 40, m = n/2
  real :: u(m), v(m), r(n), s(n), a(n)
  integer :: k(m)
  integer :: i
  real :: acc
!HPF$ PROCESSORS P(4)
!HPF$ TEMPLATE T(N)
!HPF$ DISTRIBUTE T(BLOCK) ONTO P
!HPF$ ALIGN (I) WITH T(2*I) :: U, V, K
!HPF$ ALIGN R(I) WITH T(N+1-I)
!HPF$ ALIGN S(J) WITH R(J)
!HPF$ ALIGN A(I) WITH T(I)
  do i = 1, m
    u(i) = 1.0 / real(i) + 0.125 * real(mod(7 * i, 5))
  end do
  do i = 1, n
    r(i) = 1.0 / real(i * i) + 0.5 * real(i)
    a(i) = real(i)
  end do
  v = 0.0
  do i = 2, m - 1                   ! stencil on the stride-2 cells
    v(i) = u(i - 1) - 2.0 * u(i) + u(i + 1)
  end do
  s = 0.0
  do i = 2, n - 1                   ! stencil on the reversed cells
    s(i) = 0.25 * r(i - 1) + 0.5 * r(i) + 0.25 * r(i + 1)
  end do
  do i = n, 2, -1                   ! shifts the reversed array in place
    r(i) = r(i - 1)
  end do
  r(1) = -1.0
  print '(A,3F12.6)', 'v(2), v(10), v(19) =', v(2), v(10), v(19)
  print '(A,3F12.6)', 's(2), s(20), s(39) =', s(2), s(20), s(39)
  print '(A,3F12.6)', 'r(1), r(2), r(40)  =', r(1), r(2), r(40)
  print '(A,F14.7)', 'sum(u)     =', sum(u)
  print '(A,F14.7)', 'sum(r)     =', sum(r)
  print '(A,F14.7)', 'sum(s*s)   =', sum(s * s)
  print '(A,F14.7)', 'dot(u, v)  =', dot_product(u, v)
  print '(A,2F12.6)', 'max, min   =', maxval(s), minval(v)
  ! Sections with strides, within one alignment.
  u(1:m:2) = v(1:m:2) + 1.0
  s(2:n) = r(1:n-1) * 2.0
  s(n:2:-2) = s(n:2:-2) + 0.5
  k = int(10.0 * u)
  print '(A,I8,I4)', 'sum(k), count(k>5) =', sum(k), count(k > 5)
  print '(A,F14.7)', 'sum(u(2:m:3)) =', sum(u(2:m:3))
  print '(A,F14.7)', 'sum(s(n:1:-3)) =', sum(s(n:1:-3))
  acc = 0.0
  do i = 1, m                        ! mixes alignments: rank 0
    acc = acc + u(i) * a(2 * i)
  end do
  do i = 1, m                        ! A(2*I) sits on V(I)'s cell: local
    v(i) = a(2 * i) * u(i)
  end do
  do i = 1, n                        ! A(N+1-I) sits on R(I)'s cell: local
    r(i) = r(i) + a(n + 1 - i)
  end do
  print '(A,2F14.7)', 'sum(v), sum(r) =', sum(v), sum(r)
  do i = 1, n                        ! S(N+1-I) is on A(I)'s cell, R(I) is fetched first
    a(i) = s(n + 1 - i) - r(i)
  end do
  u(5) = r(7) + a(3)
  print '(A,F14.7)', 'acc        =', acc
  print '(A,F14.7)', 'sum(a)     =', sum(a)
  print '(A,2F12.6)', 'u(5), u(m) =', u(5), u(m)
end program align_stride_loops
