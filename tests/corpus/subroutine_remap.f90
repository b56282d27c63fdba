! Subroutine calls whose dummies are laid out otherwise than their
! actuals, run on every process: a BLOCK actual passed to a CYCLIC dummy
! and copied back, a CYCLIC(2) actual to a BLOCK INTENT(IN) dummy (copied
! in only), sections with odd bounds and strides (negative too) passed to
! INHERIT dummies (the section keeps its place: nothing moves) and to a
! prescriptive CYCLIC dummy, a dummy without a mapping directive, a small
! array that leaves processes without elements, and a call in a loop;
! 2-D actuals for dummies mapped otherwise: (BLOCK, BLOCK) to (BLOCK, *),
! (BLOCK, *) to (*, CYCLIC) and to an INTENT(IN) (CYCLIC, BLOCK) grid;
! inside a subroutine's copy, a section of its dummy and a remapped dummy.
program subroutine_remap
  implicit none
  integer, parameter :: n = 23, m = 3, l = 6
  real :: a(n), s
  double precision :: c(n), t
  integer :: k(n), d(m), step, isum
  real :: g(l, l), e(l, 5), r
!HPF$ PROCESSORS P(4), Q(2, 2)
!HPF$ DISTRIBUTE (BLOCK) ONTO P :: A, D
!HPF$ DISTRIBUTE C(CYCLIC(3)) ONTO P
!HPF$ DISTRIBUTE K(CYCLIC(2)) ONTO P
!HPF$ DISTRIBUTE G(BLOCK, BLOCK) ONTO Q
!HPF$ DISTRIBUTE E(BLOCK, *) ONTO P
  integer :: i, j
  do i = 1, n
    a(i) = real(mod(i * 5, 11)) + 0.25
    c(i) = dble(i) / 7.0d0
    k(i) = mod(i * i, 13)
  end do
  do i = 1, m
    d(i) = i + 3
  end do
  forall (i = 1:l, j = 1:l) g(i, j) = real(i + 10 * j)
  forall (i = 1:l, j = 1:5) e(i, j) = real(3 * i - j)
  ! BLOCK actual, CYCLIC dummy, written: copied in and back.
  call rotate_cyclic(a, n, 1.5)
  print '(A)', 'after rotate_cyclic(a):'
  print '(8F9.3)', a
  ! CYCLIC(2) actual, BLOCK INTENT(IN) dummy: copied in only.
  call weigh_block(k, n, isum)
  print '(A,I8)', 'weigh_block(k) =', isum
  ! Sections to an INHERIT dummy: stride 2, negative stride, CYCLIC(3) runs.
  call scale_inherit(a(3:21:2), 10, 2.0)
  call scale_inherit(a(20:4:-3), 6, -1.0)
  print '(A)', 'after scale_inherit on sections of a:'
  print '(8F9.3)', a
  call damp_inherit(c(4:17), 14, 0.5d0)
  call damp_inherit(c(2:23:4), 6, 3.0d0)
  t = sum(c)
  print '(A,F16.10)', 'sum(c) =', t
  print '(6F12.6)', c
  ! A section to a prescriptive CYCLIC dummy.
  call rotate_cyclic(a(2:22), 21, -0.5)
  print '(A,F12.5)', 'sum(a) =', sum(a)
  print '(8F9.3)', a
  ! A dummy without a mapping directive takes the section's place.
  call bump(k(5:19:2), 8)
  print '(12I5)', k
  ! Three elements over up to five processes, to a CYCLIC(2) dummy.
  call spread2(d, m)
  print '(A,3I6)', 'd =', d
  ! In a loop: every iteration copies in and out.
  do step = 1, 3
    call rotate_cyclic(a, n, real(step))
    call weigh_block(k, n, isum)
    k(step) = isum
  end do
  print '(8F9.3)', a
  print '(12I5)', k
  s = sum(a)
  print '(A,F12.5)', 'final sum(a) =', s
  call nested(a, n)
  print '(8F9.3)', a
  ! 2-D: remapped whole arrays, copied back unless INTENT(IN).
  call rows2d(g, l)
  print '(6F8.1)', g
  call cols_cyclic(e, l, 5)
  print '(5F8.1)', e
  call weigh_grid(e, l, 5, r)
  print '(A,F12.3)', 'weigh_grid(e) =', r
end program subroutine_remap

subroutine rotate_cyclic(x, len, shift)
  integer, intent(in) :: len
  real, intent(inout) :: x(len)
  real, intent(in) :: shift
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE X(CYCLIC) ONTO P
  integer :: i
  do i = 1, len
    x(i) = x(i) * 0.5 + shift * real(mod(i, 4))
  end do
end subroutine rotate_cyclic

subroutine weigh_block(y, len, total)
  integer, intent(in) :: len
  integer, intent(in) :: y(len)
  integer, intent(out) :: total
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE Y(BLOCK) ONTO P
  integer :: i
  total = 0
  do i = 1, len
    total = total + i * y(i)
  end do
end subroutine weigh_block

subroutine scale_inherit(x, len, f)
  integer, intent(in) :: len
  real, intent(inout) :: x(len)
  real, intent(in) :: f
!HPF$ INHERIT X
  integer :: i
  do i = 1, len
    x(i) = f * x(i) + real(i)
  end do
end subroutine scale_inherit

subroutine damp_inherit(z, len, w)
  integer, intent(in) :: len
  double precision, intent(inout) :: z(len)
  double precision, intent(in) :: w
!HPF$ INHERIT Z
  integer :: i
  do i = 1, len
    z(i) = z(i) * w + dble(i * i) / 3.0d0
  end do
end subroutine damp_inherit

subroutine bump(v, len)
  integer, intent(in) :: len
  integer, intent(inout) :: v(len)
  integer :: i
  do i = 1, len
    v(i) = v(i) + 100 * i
  end do
end subroutine bump

subroutine spread2(v, len)
  integer, intent(in) :: len
  integer, intent(inout) :: v(len)
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE V(CYCLIC(2)) ONTO P
  integer :: i
  do i = 1, len
    v(i) = v(i) * 10 + i
  end do
end subroutine spread2

subroutine rows2d(h, len)
  integer, intent(in) :: len
  real, intent(inout) :: h(len, len)
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE H(BLOCK, *) ONTO P
  integer :: i, j
  do j = 1, len
    do i = 1, len
      h(i, j) = h(i, j) + real(i * j)
    end do
  end do
end subroutine rows2d

subroutine cols_cyclic(y, m1, m2)
  integer, intent(in) :: m1, m2
  real, intent(inout) :: y(m1, m2)
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE Y(*, CYCLIC) ONTO P
  integer :: i, j
  do j = 1, m2
    do i = 1, m1
      y(i, j) = y(i, j) * real(j) - real(i)
    end do
  end do
end subroutine cols_cyclic

subroutine weigh_grid(y, m1, m2, res)
  integer, intent(in) :: m1, m2
  real, intent(in) :: y(m1, m2)
  real, intent(out) :: res
!HPF$ PROCESSORS Q(2, 2)
!HPF$ DISTRIBUTE Y(CYCLIC, BLOCK) ONTO Q
  res = maxval(y) + minval(y)
end subroutine weigh_grid

subroutine nested(x, len)
  integer, intent(in) :: len
  real, intent(inout) :: x(len)
!HPF$ INHERIT X
  integer :: i
  do i = 1, len
    x(i) = x(i) + 0.5
  end do
  call scale_inherit(x(2:len:3), (len + 1) / 3, 3.0)
  call rotate_cyclic(x, len, 0.25)
end subroutine nested
