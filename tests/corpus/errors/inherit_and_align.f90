! expect: INHERIT-with-ALIGN errors: dummy X has INHERIT and ALIGN; dummy Z has INHERIT and ALIGN in one combined directive
module relax_mod
  implicit none
!HPF$ PROCESSORS P(4)
contains
  subroutine relax(x, y, z, n)
    integer, intent(in) :: n
    real, intent(inout) :: x(n), y(n), z(n)
!HPF$ DISTRIBUTE *(BLOCK) ONTO *P :: Y
! error: X both inherited and aligned
!HPF$ INHERIT X
!HPF$ ALIGN X(I) WITH Y(I)
! error: Z both inherited and aligned (combined form)
!HPF$ INHERIT, ALIGN WITH Y :: Z
    x = 0.5 * (x + y)
    z = x
  end subroutine relax
end module relax_mod

program inherit_and_align
  use relax_mod
  implicit none
  real :: a(16), b(16), c(16)
!HPF$ DISTRIBUTE (BLOCK) ONTO P :: A, B, C
  a = 1.0
  b = 3.0
  c = 0.0
  call relax(a, b, c, 16)
  print '(F8.1)', sum(c)
end program inherit_and_align
