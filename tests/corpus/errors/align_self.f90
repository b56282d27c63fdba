! expect: align-self errors: ALIGN A(I) WITH A(I) and ALIGN (:) WITH B(:) :: B align an array with itself
program align_self
  implicit none
  integer, parameter :: n = 16
  real :: a(n), b(n), c(n)
  integer :: i
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE C(BLOCK) ONTO P
! error: A aligned with itself
!HPF$ ALIGN A(I) WITH A(I)
! error: B aligned with itself (attribute form)
!HPF$ ALIGN (:) WITH B(:) :: B
  do i = 1, n
    c(i) = real(i)
  end do
  a = c
  b = a
  print '(F8.1)', sum(b)
end program align_self
