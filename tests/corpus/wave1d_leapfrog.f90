! Vibrating string, leapfrog in time: three time levels aligned with one
! template (ALIGN WITH T :: ...), DISTRIBUTE without ONTO, whole-array swaps.
program wave1d_leapfrog
  implicit none
  integer, parameter :: n = 64
  real, parameter :: c2 = 0.25            ! (c dt / dx)**2
  real :: uold(n), u(n), unew(n)
  integer :: i, step
!HPF$ TEMPLATE T(N)
!HPF$ DISTRIBUTE T(BLOCK)
!HPF$ ALIGN WITH T :: UOLD, U, UNEW
  do i = 1, n
    u(i) = max(0.0, 1.0 - abs(real(i - 20)) / 6.0)   ! a triangular pluck
  end do
  uold = u
  unew = 0.0
  do step = 1, 60
!HPF$ INDEPENDENT
    do i = 2, n-1
      unew(i) = 2.0*u(i) - uold(i) + c2 * (u(i-1) - 2.0*u(i) + u(i+1))
    end do
    unew(1) = 0.0
    unew(n) = 0.0
    uold = u
    u = unew
  end do
  print '(A,F10.5)', 'max(u) =', maxval(u)
  print '(A,F10.5)', 'min(u) =', minval(u)
  print '(A,I4)',    'argmax =', maxloc(u)
  print '(A,F10.5)', 'sum(u) =', sum(u)
end program wave1d_leapfrog
