! Subroutines that receive distributed arrays whole and run on every
! process: INHERIT (1-D BLOCK with a halo, 2-D BLOCK,BLOCK, CYCLIC, an
! offset alignment), an explicit DISTRIBUTE equal to the actual's, a
! transcriptive DISTRIBUTE *, a nested call, reductions into a dummy
! scalar and output inside; a section actual and a mapping that differs
! from the actual's (both copied in and out of a temporary).
program subroutine_spmd
  implicit none
  integer, parameter :: n = 30, m = 12
  real :: u(n), v(n), g(m, m), h(m, m)
  double precision :: w(0:n+1), e(n)
  integer :: k(n), step, total
  real :: norm
!HPF$ PROCESSORS P(4), Q(2, 2)
!HPF$ DISTRIBUTE (BLOCK) ONTO P :: U, V
!HPF$ DISTRIBUTE (BLOCK, BLOCK) ONTO Q :: G, H
!HPF$ TEMPLATE T(0:N+2)
!HPF$ DISTRIBUTE T(BLOCK) ONTO P
!HPF$ ALIGN W(I) WITH T(I+1)
!HPF$ ALIGN E(I) WITH T(I+1)
!HPF$ DISTRIBUTE K(CYCLIC(2)) ONTO P
  call fill(u, n, 1.0)
  call fill(v, n, 0.0)
  do step = 1, 4
    call relax(u, v, n, norm)
    call relax(v, u, n, norm)
  end do
  print '(A,F12.5)', 'norm =', norm
  print '(6F10.5)', u(1:6)
  call smooth2d(g, h, m)
  print '(A,F14.5)', 'sum(h) =', sum(h)
  print '(4F10.4)', h(5:8, 6)
  call ramp(w, e, n)
  print '(A,F16.8)', 'sum(e) =', sum(e)
  call count_up(k, n, total)
  print '(A,I8)', 'total =', total
  print '(10I5)', k(1:10)
  call block_only(u, n)
  print '(A,F12.5)', 'u(n) =', u(n)
  call fill(u(1:n/2), n/2, 3.0)
  call cyclic_only(v, n)
  print '(A,F12.5)', 'sum(u+v) =', sum(u + v)
end program subroutine_spmd

subroutine fill(x, len, base)
  integer, intent(in) :: len
  real, intent(out) :: x(len)
  real, intent(in) :: base
!HPF$ INHERIT X
  integer :: i
  do i = 1, len
    x(i) = base + real(mod(i * 7, 13))
  end do
end subroutine fill

subroutine relax(x, y, len, norm)
  integer, intent(in) :: len
  real :: x(len), y(len)
  real, intent(out) :: norm
!HPF$ INHERIT X, Y
  integer :: i
  y(1) = x(1)
  y(len) = x(len)
!HPF$ INDEPENDENT
  do i = 2, len - 1
    y(i) = 0.25 * x(i-1) + 0.5 * x(i) + 0.25 * x(i+1)
  end do
  call scale_by(y, len, 1.0 / 1.5)
  norm = sum(y * y)
end subroutine relax

subroutine scale_by(z, len, f)
  integer, intent(in) :: len
  real, intent(inout) :: z(len)
  real, intent(in) :: f
!HPF$ DISTRIBUTE Z *
  z = f * z
end subroutine scale_by

subroutine smooth2d(a, b, len)
  integer, intent(in) :: len
  real :: a(len, len), b(len, len)
!HPF$ INHERIT A, B
  integer :: i, j
  forall (i = 1:len, j = 1:len) a(i, j) = real(mod(i * 3 + j * 5, 11))
  b = a
  do j = 2, len - 1
    do i = 2, len - 1
      b(i, j) = 0.2 * (a(i, j) + a(i-1, j) + a(i+1, j) + a(i, j-1) + a(i, j+1))
    end do
  end do
end subroutine smooth2d

subroutine ramp(x, y, len)
  integer, intent(in) :: len
  double precision :: x(0:len+1), y(len)
!HPF$ INHERIT X, Y
  integer :: i
  x = 0.5d0
  do i = 1, len
    x(i) = dble(i) / 3.0d0
  end do
  do i = 1, len
    y(i) = x(i-1) + x(i+1) - 2.0d0 * x(i) + x(i) * x(i)
  end do
end subroutine ramp

subroutine count_up(c, len, total)
  integer, intent(in) :: len
  integer :: c(len), total
!HPF$ INHERIT C
  integer :: i
  do i = 1, len
    c(i) = mod(i * i, 17)
  end do
  total = sum(c) + maxval(c)
  print '(A,I6)', 'count_up: max =', maxval(c)
end subroutine count_up

subroutine block_only(x, len)
  integer, intent(in) :: len
  real :: x(len)
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE X(BLOCK) ONTO P
  integer :: i
  do i = 1, len
    x(i) = x(i) * 2.0 + 1.0
  end do
end subroutine block_only

subroutine cyclic_only(x, len)
  integer, intent(in) :: len
  real :: x(len)
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE X(CYCLIC) ONTO P
  integer :: i
  do i = 1, len
    x(i) = x(i) - 1.0
  end do
end subroutine cyclic_only
