! expect: alignment-cycle errors: X -> Y -> X, and U -> V -> W -> U (no final alignment target)
program align_cycle
  implicit none
  integer, parameter :: n = 16
  real :: x(n), y(n), u(n), v(n), w(n), a(n)
  integer :: i
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE A(BLOCK) ONTO P
! error: two-element cycle
!HPF$ ALIGN X(I) WITH Y(I)
!HPF$ ALIGN Y(I) WITH X(I)
! error: three-element cycle
!HPF$ ALIGN U(I) WITH V(I)
!HPF$ ALIGN V(I) WITH W(I)
!HPF$ ALIGN W(I) WITH U(I)
  do i = 1, n
    a(i) = real(i)
  end do
  x = a
  y = x
  u = y
  v = u
  w = v
  print '(F8.1)', sum(w)
end program align_cycle
