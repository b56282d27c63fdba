! Named kinds, as most Fortran 90 codes write them: REAL(KIND=DP) with
! DP = KIND(1.0D0), REAL(WP) with WP = SELECTED_REAL_KIND(15, 307),
! REAL(SP) with SP = SELECTED_REAL_KIND(P=6) and INTEGER(KIND=IK) with
! IK = SELECTED_INT_KIND(9). Distributed arrays of these kinds keep their
! precision in the parallel program.
program named_kinds
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  integer, parameter :: wp = selected_real_kind(15, 307)
  integer, parameter :: sp = selected_real_kind(p=6)
  integer, parameter :: ik = selected_int_kind(9)
  integer, parameter :: n = 24
  real(kind=dp) :: x(n), y(n)
  real(wp) :: z(n)
  real(sp) :: s(n)
  integer(kind=ik) :: k(n)
  real(dp) :: total
  integer :: i
!HPF$ PROCESSORS P(NUMBER_OF_PROCESSORS())
!HPF$ DISTRIBUTE X(BLOCK) ONTO P
!HPF$ ALIGN Y(I) WITH X(I)
!HPF$ ALIGN Z(I) WITH X(I)
!HPF$ ALIGN S(I) WITH X(I)
!HPF$ ALIGN K(I) WITH X(I)
  do i = 1, n
    x(i) = 1.0_dp / real(i, dp) + 2.0_dp**(-40)
    k(i) = i * 3
  end do
!HPF$ INDEPENDENT
  do i = 2, n - 1
    y(i) = x(i - 1) + x(i + 1) + 1.0d-13 * k(i)
  end do
  y(1) = x(1)
  y(n) = x(n)
  z = y * 3.0_wp
  s = real(y, sp)
  total = sum(z)
  print '(4ES25.16)', y
  print '(ES25.16)', total
  print *, s(5), k(7)
end program named_kinds
