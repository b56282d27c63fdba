! Free-form sentinel spellings: !HPF$, !hpf$, !Hpf$, indented !HPF$, continued
! directives ('&' then !HPF$, and !HPF$& with a leading '&'), trailing comments,
! and foreign sentinels (!$omp, !$xmp) that must pass through as comments.
program sentinels_free
  implicit none
  integer, parameter :: n = 20
  real :: x(n), y(n), z(n)
  real :: s, tmp
  integer :: i
!HPF$ PROCESSORS P(4)
!hpf$ template t(n)
   !HPF$ DISTRIBUTE T(CYCLIC(2)) ONTO P
!Hpf$ align x(i) with t(i)   ! trailing commentary on a directive
      !hpf$ align y(i) &
      !hpf$ with t(i)
!HPF$ ALIGN &
! (an ordinary comment line inside a continued directive)
!HPF$&   Z(I) WITH &
!HPF$    T(I)
!$xmp nodes q(4)
!$xmp template tx(20)
!$xmp distribute tx(block) onto q
  do i = 1, n
    x(i) = real(i)
    y(i) = real(n - i)
  end do
!$omp parallel do private(tmp)
!HPF$ INDEPENDENT, NEW(TMP)
  do i = 1, n
    tmp = x(i) * y(i)
    z(i) = tmp + 1.0
  end do
!$omp end parallel do
  s = 0.0
!$omp parallel do reduction(+:s)
!hpf$ independent, reduction(s)
  do i = 1, n
    s = s + z(i)
  end do
  print '(A,F8.1)', 's      =', s
  print '(A,F8.1)', 'max(z) =', maxval(z)
end program sentinels_free
