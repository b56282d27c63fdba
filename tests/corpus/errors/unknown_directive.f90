! expect: unknown-directive errors: ALIGNN, FOO, DISTRIBUT, INDEPENDANT are not HPF directives (other sentinels like !$omp stay silent)
program unknown_directive
  implicit none
  integer, parameter :: n = 16
  real :: a(n), b(n)
  integer :: i
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE A(BLOCK) ONTO P
! error: misspelt ALIGN
!HPF$ ALIGNN B(I) WITH A(I)
! error: not a directive at all
!HPF$ FOO
! error: misspelt DISTRIBUTE
!hpf$ distribut b(cyclic) onto p
!$omp parallel do
! error: misspelt INDEPENDENT
!HPF$ INDEPENDANT
  do i = 1, n
    a(i) = real(i)
  end do
  b = a
  print '(F8.1)', sum(b)
end program unknown_directive
