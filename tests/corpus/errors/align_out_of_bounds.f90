! expect: align-out-of-bounds errors: B(I) WITH T(I+10), C(I) WITH T(2*I) run past T's upper bound 16; D(I) WITH T(I-1) before its lower bound 1
program align_out_of_bounds
  implicit none
  integer, parameter :: n = 16
  real :: a(n), b(n), c(n), d(n)
  integer :: i
!HPF$ PROCESSORS P(4)
!HPF$ TEMPLATE T(N)
!HPF$ DISTRIBUTE T(BLOCK) ONTO P
!HPF$ ALIGN A(I) WITH T(I)
! error: triple [11:26:1] leaves T(1:16)
!HPF$ ALIGN B(I) WITH T(I+10)
! error: triple [2:32:2] leaves T(1:16)
!HPF$ ALIGN C(I) WITH T(2*I)
! error: triple [0:15:1] leaves T(1:16)
!HPF$ ALIGN D(I) WITH T(I-1)
  do i = 1, n
    a(i) = real(i)
  end do
  b = a
  c = b
  d = c
  print '(F8.1)', sum(d)
end program align_out_of_bounds
