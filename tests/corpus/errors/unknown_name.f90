! expect: unknown-name errors: ONTO Q (no such processors), WITH TT (no such template/array), ALIGN ZZ and DISTRIBUTE W (no such arrays)
program unknown_name
  implicit none
  integer, parameter :: n = 16
  real :: a(n), b(n)
  integer :: i
!HPF$ PROCESSORS P(4)
!HPF$ TEMPLATE T(N)
! error: Q is not a declared processors arrangement
!HPF$ DISTRIBUTE T(BLOCK) ONTO Q
! error: TT is neither a template nor an array
!HPF$ ALIGN A(I) WITH TT(I)
! error: ZZ is not a declared array
!HPF$ ALIGN ZZ(I) WITH T(I)
! error: W is not a declared array or template
!HPF$ DISTRIBUTE W(BLOCK) ONTO P
!HPF$ ALIGN B(I) WITH T(I)
  do i = 1, n
    a(i) = real(i)
  end do
  b = a + 1.0
  print '(F8.1)', sum(b)
end program unknown_name
