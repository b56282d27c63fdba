! expect: directive syntax errors: unbalanced '(' and ')', ALIGN without WITH, unknown format BLOK, missing ONTO target, trailing junk
program directive_syntax
  implicit none
  integer, parameter :: n = 16
  real :: a(n), b(n), c(n), d(n), e(n)
  integer :: i
!HPF$ PROCESSORS P(4)
! error: unclosed parenthesis
!HPF$ PROCESSORS Q(4
! error: unmatched closing parenthesis
!HPF$ TEMPLATE T(N))
!HPF$ TEMPLATE T1(N)
! error: BLOK is not a distribution format
!HPF$ DISTRIBUTE A(BLOK) ONTO P
! error: ALIGN without WITH
!HPF$ ALIGN B(I) T1(I)
! error: trailing junk after a complete directive
!HPF$ ALIGN C(I) WITH A(I) EXTRA JUNK
! error: ONTO without a processors name
!HPF$ DISTRIBUTE D(BLOCK) ONTO
! error: unclosed parenthesis inside a format
!HPF$ DISTRIBUTE E(CYCLIC(2) ONTO P
  do i = 1, n
    a(i) = real(i)
  end do
  b = a
  c = 2.0 * b
  d = c
  e = d
  print '(F8.1)', sum(e)
end program directive_syntax
