! External subroutines and a function after the main program. Every CALL
! runs on rank 0 on gathered copies of its distributed arguments, which are
! scattered back, and the variables it is passed are broadcast; a subroutine
! that prints prints once; a function without side effects is used in a
! parallel loop on every process.
program calls
  implicit none
  integer, parameter :: n = 24
  integer :: a(n), b(n), i, total, steps
  real :: scale
  integer, external :: twice
!HPF$ PROCESSORS p(4)
!HPF$ DISTRIBUTE a(BLOCK) ONTO p
!HPF$ ALIGN b(i) WITH a(i)
  steps = 0
  scale = 1.5
  do i = 1, n
    a(i) = mod(i * 7, 11)
  end do
  call smooth(a, b, n)
  call count_steps(steps, scale)
  call count_steps(steps, scale)
!HPF$ INDEPENDENT
  do i = 1, n
    a(i) = twice(b(i)) + steps
  end do
  call report('after smoothing', a, n)
  total = sum(a)
  print *, 'total =', total, ' steps =', steps, ' scale =', scale
end program calls

subroutine smooth(x, y, m)
  integer, intent(in) :: m
  integer, intent(in) :: x(m)
  integer, intent(out) :: y(m)
!HPF$ INHERIT x, y
  integer :: i
  y(1) = x(1)
  y(m) = x(m)
  do i = 2, m - 1
    y(i) = x(i - 1) + x(i) + x(i + 1)
  end do
end subroutine smooth

subroutine count_steps(k, f)
  integer, intent(inout) :: k
  real, intent(inout) :: f
  k = k + 1
  f = f * 2.0
end subroutine count_steps

subroutine report(title, x, m)
  character(len=*), intent(in) :: title
  integer, intent(in) :: m
  integer, intent(in) :: x(m)
  print '(A)', title
  print '(12I4)', x
end subroutine report

integer function twice(v)
  integer, intent(in) :: v
  twice = 2 * v
end function twice
