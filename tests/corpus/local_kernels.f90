! EXTRINSIC(HPF_LOCAL) routines the way codes use them: an elementwise
! kernel on each process's own elements, called in a time loop, and a
! local reduction whose partial results the caller combines with SUM.
! The arrays are BLOCK and CYCLIC(3); every value is a short binary
! fraction, so the sums are exact in any order.
module local_kernels
  implicit none
contains
  ! One damped relaxation step of each element towards its target.
  extrinsic(hpf_local) subroutine relax(u, f, w)
    double precision, intent(inout) :: u(:)
    double precision, intent(in) :: f(:)
    double precision, intent(in) :: w
    integer :: i
    do i = 1, size(u)
      u(i) = u(i) + w * (f(i) - u(i))
    end do
  end subroutine relax

  ! This process's sums of u and of u*v, put at the first of its own
  ! elements of sums and dots (aligned with u), zero elsewhere.
  extrinsic(hpf_local) subroutine partial_sums(u, v, sums, dots)
    double precision, intent(in) :: u(:), v(:)
    double precision, intent(out) :: sums(:), dots(:)
    sums = 0.0d0
    dots = 0.0d0
    if (size(u) > 0) then
      sums(1) = sum(u)
      dots(1) = dot_product(u, v)
    end if
  end subroutine partial_sums
end module local_kernels

program local_kernels_demo
  use local_kernels
  implicit none
  integer, parameter :: n = 40, steps = 10
  double precision :: u(n), f(n), s(n), d(n)
  double precision :: w(n), g(n), s2(n), d2(n)
  double precision :: total, dot
  integer :: i, t
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE U(BLOCK) ONTO P
!HPF$ ALIGN (I) WITH U(I) :: F, S, D
!HPF$ DISTRIBUTE W(CYCLIC(3)) ONTO P
!HPF$ ALIGN (I) WITH W(I) :: G, S2, D2
  do i = 1, n
    u(i) = dble(mod(7 * i, 13))
    f(i) = dble(mod(3 * i, 11)) / 8.0d0
  end do
  do i = 1, n
    w(i) = dble(mod(5 * i, 9)) - 4.0d0
    g(i) = dble(i) / 4.0d0
  end do
  do t = 1, steps
    call relax(u, f, 0.5d0)
    call relax(w, g, 0.25d0)
    call partial_sums(u, f, s, d)
    call partial_sums(w, g, s2, d2)
    total = sum(s)
    dot = sum(d)
    if (mod(t, 2) == 0) then
      write (*, '(a, i3, 2f22.12)') ' block step', t, total, dot
      write (*, '(a, i3, 2f22.12)') ' cyclic step', t, sum(s2), sum(d2)
    end if
  end do
  write (*, '(4f18.12)') u(1), u(n / 2), u(n - 1), u(n)
  write (*, '(4f18.12)') w(1), w(n / 2), w(n - 1), w(n)
end program local_kernels_demo
