! expect: block-size errors: BLOCK(2) on 4 processors covers 8 < 16 cells of T; BLOCK(3) covers 12 < 20 elements of A
program block_too_small
  implicit none
  integer, parameter :: n = 16
  real :: a(20), b(n)
  integer :: i
!HPF$ PROCESSORS P(4)
!HPF$ TEMPLATE T(N)
! error: 2*4 = 8 < 16
!HPF$ DISTRIBUTE T(BLOCK(2)) ONTO P
!HPF$ ALIGN B(I) WITH T(I)
! error: 3*4 = 12 < 20
!HPF$ DISTRIBUTE A(BLOCK(3)) ONTO P
  do i = 1, 20
    a(i) = real(i)
  end do
  b = a(1:n)
  print '(F8.1)', sum(b)
end program block_too_small
