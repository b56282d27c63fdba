! 1-D three-point smoothing (a halo: B(I-1) + B(I+1)); SHADOW in statement
! form and attribute form, INDEPENDENT before a DO loop and before a FORALL.
program stencil1d_halo
  implicit none
  integer, parameter :: n = 32
  real :: a(n), b(n)
  integer :: i, it
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE(BLOCK), SHADOW(1:2) :: A
!HPF$ DISTRIBUTE B(BLOCK) ONTO P
!HPF$ SHADOW B(1)
  a = 0.0
  a(n/2) = 64.0
  a(n/4) = 32.0
  b = a
  do it = 1, 4
!HPF$ INDEPENDENT
    do i = 2, n-1
      b(i) = 0.25*a(i-1) + 0.5*a(i) + 0.25*a(i+1)
    end do
!HPF$ INDEPENDENT
    forall (i = 2:n-1) a(i) = 0.25*b(i-1) + 0.5*b(i) + 0.25*b(i+1)
  end do
  print '(A,F10.4)', 'sum  =', sum(a)
  print '(A,F10.4)', 'peak =', maxval(a)
  print '(8F8.4)', a(9:24)
end program stencil1d_halo
