! expect: misplaced-INDEPENDENT errors: before an assignment, before an IF, and as the last line of the execution part
program independent_not_before_loop
  implicit none
  integer, parameter :: n = 16
  real :: a(n), b(n)
  integer :: i
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE (BLOCK) ONTO P :: A, B
! error: followed by an assignment, not a DO or FORALL
!HPF$ INDEPENDENT
  a = 0.0
  do i = 1, n
    a(i) = real(i)
  end do
! error: followed by an IF statement
!HPF$ INDEPENDENT, NEW(I)
  if (a(1) > 0.0) b = a
!HPF$ INDEPENDENT
  forall (i = 1:n) b(i) = 2.0 * a(i)
  print '(F8.1)', sum(b)
! error: nothing follows
!HPF$ INDEPENDENT
end program independent_not_before_loop
