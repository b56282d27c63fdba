! Mapping of dummy arguments in module procedures: INHERIT, descriptive
! DISTRIBUTE *(BLOCK) ONTO *P :: X, transcriptive DISTRIBUTE Y *, descriptive
! ALIGN Z(I) WITH *X(I); the actual arguments are BLOCK-distributed.
module smoothers
  implicit none
!HPF$ PROCESSORS P(4)
contains
  subroutine smooth3(x, z, n)
    integer, intent(in) :: n
    real, intent(in) :: x(n)
    real, intent(out) :: z(n)
    integer :: i
!HPF$ DISTRIBUTE *(BLOCK) ONTO *P :: X
!HPF$ ALIGN Z(I) WITH *X(I)
    z(1) = x(1)
    z(n) = x(n)
!HPF$ INDEPENDENT
    do i = 2, n-1
      z(i) = (x(i-1) + 2.0*x(i) + x(i+1)) / 4.0
    end do
  end subroutine smooth3

  subroutine scale_inherit(y, n, f)
    integer, intent(in) :: n
    real, intent(inout) :: y(n)
    real, intent(in) :: f
!HPF$ INHERIT Y
    y = f * y
  end subroutine scale_inherit

  subroutine copy_any(src, dst, n)
    integer, intent(in) :: n
    real, intent(in) :: src(n)
    real, intent(out) :: dst(n)
!HPF$ DISTRIBUTE SRC *
!HPF$ DISTRIBUTE DST * ONTO *
    dst(1:n) = src(n:1:-1)
  end subroutine copy_any
end module smoothers

program inherit_dummies
  use smoothers
  implicit none
  integer, parameter :: n = 24
  real :: a(n), b(n), c(n)
  integer :: i
!HPF$ DISTRIBUTE (BLOCK) ONTO P :: A, B
!HPF$ DISTRIBUTE C(CYCLIC) ONTO P
  do i = 1, n
    a(i) = real(mod(i, 4) * 8)
  end do
  call smooth3(a, b, n)
  call scale_inherit(b, n, 0.5)
  call copy_any(b, c, n)
  print '(A,F9.3)', 'sum(b) =', sum(b)
  print '(6F7.2)', c(1:12)
end program inherit_dummies
