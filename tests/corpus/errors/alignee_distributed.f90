! expect: alignee-is-distributed errors: B is both DISTRIBUTEd and ALIGNed; C gets ALIGN and DISTRIBUTE in one combined directive
program alignee_distributed
  implicit none
  integer, parameter :: n = 16
  real :: a(n), b(n), c(n)
  integer :: i
!HPF$ PROCESSORS P(4)
!HPF$ TEMPLATE T(N)
!HPF$ DISTRIBUTE T(BLOCK) ONTO P
!HPF$ DISTRIBUTE A(BLOCK) ONTO P
! error: B is a distributee and an alignee
!HPF$ DISTRIBUTE B(CYCLIC) ONTO P
!HPF$ ALIGN B(I) WITH A(I)
! error: C given both attributes at once
!HPF$ ALIGN WITH T, DISTRIBUTE(BLOCK) :: C
  do i = 1, n
    a(i) = real(i)
  end do
  b = a
  c = b
  print '(F8.1)', sum(c)
end program alignee_distributed
