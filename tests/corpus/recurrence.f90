! First-order linear recurrences over BLOCK arrays: x(i) depends on x(i-1)
! computed by the process before, so the processes run one after the other
! (a pipeline), each from the boundary value its lower neighbour sends.
program recurrence
  implicit none
  integer, parameter :: n = 200
  real(8) :: x(n), a(n), b(n)
  real :: y(n)
  integer :: i, step
!HPF$ DISTRIBUTE (BLOCK) :: x, a, b
!HPF$ ALIGN y(i) WITH x(i)
  do i = 1, n
    a(i) = 0.5d0 + real(mod(i, 7), 8) / 10.0d0
    b(i) = real(mod(i * 3, 11), 8) / 11.0d0
    y(i) = real(mod(i, 5))
  end do
  x(1) = 1.0d0
  do step = 1, 3
    do i = 2, n
      x(i) = x(i-1) * a(i) + b(i) / real(step, 8)
    end do
    ! A second-order recurrence (two elements below).
    do i = 3, n
      y(i) = 0.5 * y(i-1) - 0.25 * y(i-2) + real(a(i))
    end do
    print '(i3, 2es25.16)', step, sum(x), real(sum(y), 8)
  end do
  print '(4es25.16)', x(1), x(n/2), x(n/2 + 1), x(n)
  print '(3es16.7)', y(2), y(n/2), y(n)
end program recurrence
