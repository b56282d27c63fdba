! Computation placement: single-statement ON HOME(A(I)), the block form
! ON HOME(...) BEGIN ... END ON, ON HOME of a template element, RESIDENT as
! a clause and as a stand-alone directive; a red/black update of a 1-D rod.
program on_home
  implicit none
  integer, parameter :: n = 32
  real :: a(n), b(n)
  integer :: i, it
!HPF$ PROCESSORS P(4)
!HPF$ TEMPLATE T(N)
!HPF$ DISTRIBUTE T(BLOCK) ONTO P
!HPF$ ALIGN A(I) WITH T(I)
!HPF$ ALIGN B(I) WITH T(I)
  do i = 1, n
    b(i) = real(mod(3*i, 11))
  end do
  a = 0.0
!HPF$ INDEPENDENT
  do i = 1, n
!HPF$ ON HOME(A(I))
    a(i) = 2.0 * b(i)
  end do
  do it = 1, 3
!HPF$ INDEPENDENT
    do i = 2, n-1, 2
!HPF$ ON HOME(A(I)), RESIDENT(B(I)) BEGIN
      a(i) = 0.5 * (a(i-1) + a(i+1))
      b(i) = b(i) + 1.0
!HPF$ END ON
    end do
!HPF$ INDEPENDENT
    do i = 3, n-1, 2
!HPF$ ON HOME(T(I)) BEGIN
!HPF$ RESIDENT(B(I))
      b(i) = b(i) - 1.0
      a(i) = 0.5 * (a(i-1) + a(i+1))
!HPF$ END ON
    end do
  end do
  print '(A,F10.4)', 'sum(a) =', sum(a)
  print '(A,F10.4)', 'sum(b) =', sum(b)
  print '(8F8.3)', a(1:8)
end program on_home
