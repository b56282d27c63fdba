! expect: not-DYNAMIC errors: REDISTRIBUTE A and REALIGN B without a DYNAMIC directive; REDISTRIBUTE of the alignee B
program redistribute_not_dynamic
  implicit none
  integer, parameter :: n = 16
  real :: a(n), b(n)
  integer :: i
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE A(BLOCK) ONTO P
!HPF$ ALIGN B(I) WITH A(I)
  do i = 1, n
    a(i) = real(i)
  end do
! error: A is not DYNAMIC
!HPF$ REDISTRIBUTE A(CYCLIC) ONTO P
  b = a
! error: B is not DYNAMIC
!HPF$ REALIGN B(I) WITH A(N+1-I)
! error: B is an alignee, not a distributee
!HPF$ REDISTRIBUTE B(BLOCK)
  print '(F8.1)', sum(b)
end program redistribute_not_dynamic
