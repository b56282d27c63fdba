! CRLF line endings (this file is written with \r\n): explicit 1-D heat
! equation on a BLOCK(8) template with a boundary layer T(0:N+1).
program crlf_heat
  implicit none
  integer, parameter :: n = 30
  real :: u(0:n+1), un(0:n+1)
  integer :: i, step
!HPF$ PROCESSORS P(4)
!HPF$ TEMPLATE T(0:N+1)
!HPF$ DISTRIBUTE T(BLOCK(8)) ONTO P
!HPF$ ALIGN U(I) WITH T(I)
!HPF$ ALIGN UN(I) WITH T(I)
  u = 0.0
  u(0) = 100.0
  un = u
  do step = 1, 40
!HPF$ INDEPENDENT
    do i = 1, n
      un(i) = u(i) + 0.25 * (u(i-1) - 2.0*u(i) + u(i+1))
    end do
    u(1:n) = un(1:n)
  end do
  print '(A,F10.4)', 'u(1)   =', u(1)
  print '(A,F10.4)', 'u(10)  =', u(10)
  print '(A,F10.4)', 'energy =', sum(u(1:n))
end program crlf_heat
