! Distributed module arrays used from the main program: PROCESSORS with a
! NUMBER_OF_PROCESSORS() extent, ALIGN WITH TT :: U, F, R in the module, a
! module FUNCTION (residual norm) and SUBROUTINE (weighted Jacobi sweep).
module grid
  implicit none
  integer, parameter :: n = 48
  double precision :: u(0:n+1), f(0:n+1), r(0:n+1)
!HPF$ PROCESSORS PROCS(NUMBER_OF_PROCESSORS())
!HPF$ TEMPLATE TT(0:N+1)
!HPF$ DISTRIBUTE TT(BLOCK) ONTO PROCS
!HPF$ ALIGN WITH TT :: U, F, R
contains
  double precision function residual_norm()
    integer :: i
!HPF$ INDEPENDENT
    do i = 1, n
      r(i) = f(i) - (2.0d0*u(i) - u(i-1) - u(i+1))
    end do
    residual_norm = sqrt(sum(r(1:n)**2))
  end function residual_norm

  subroutine jacobi_sweep(omega)
    double precision, intent(in) :: omega
    integer :: i
    double precision :: unew(0:n+1)
!HPF$ ALIGN UNEW(I) WITH TT(I)
    unew = u
!HPF$ INDEPENDENT
    do i = 1, n
      unew(i) = (1.0d0 - omega)*u(i) + omega*0.5d0*(f(i) + u(i-1) + u(i+1))
    end do
    u = unew
  end subroutine jacobi_sweep
end module grid

program module_arrays
  use grid
  implicit none
  integer :: k
  double precision :: r0
  u = 0.0d0
  f = 0.0d0
  f(1:n) = 1.0d0 / dble(n+1)**2
  r0 = residual_norm()
  do k = 1, 100
    call jacobi_sweep(2.0d0/3.0d0)
  end do
  print '(A,ES12.5)', 'initial residual =', r0
  print '(A,ES12.5)', 'final residual   =', residual_norm()
  print '(A,F12.8)',  'u(n/2)           =', u(n/2)
end program module_arrays
