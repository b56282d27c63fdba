! DO loops that leave early or skip iterations: an IF (...) EXIT whose
! condition reads nothing the loop writes, or first in the body the element
! the iteration writes (the first iteration where it
! holds is found before the loop, and the loop ends there), and CYCLE
! statements (they end an iteration on the process that owns it).
program loop_exits
  integer, parameter :: n = 23
  integer :: a(n), b(n), c(n), i, k, total
  real :: x(n), s
  double precision :: d(n), ds
  integer :: e(n), f(n)
!HPF$ DISTRIBUTE (BLOCK) :: a, b, c
!HPF$ DISTRIBUTE (CYCLIC(3)) :: e, f
!HPF$ ALIGN x(i) WITH a(i)
!HPF$ ALIGN d(i) WITH a(i)
  do i = 1, n
    a(i) = mod(7 * i, 11)
    b(i) = 3 * i
    c(i) = 0
    x(i) = 1.0 / real(i)
    d(i) = 1.0d0 / dble(i + 2)
  end do
  ! Leaves in the middle: statements before the EXIT run in its iteration.
  do i = 1, n
    c(i) = c(i) + 1
    if (b(i) > 40) exit
    c(i) = c(i) + a(i)
  end do
  print *, 'exit at', i
  print '(23i4)', c
  ! Never leaves: the index ends past the last iteration.
  do i = 1, n
    if (a(i) > 100) exit
    c(i) = c(i) + 2
  end do
  print *, 'no exit, i =', i
  ! Leaves at the first iteration.
  do i = 1, n
    if (b(i) > 0) exit
    c(i) = -1
  end do
  print *, 'first, i =', i
  ! Backwards, a neighbour's element in the condition, and sums that must
  ! keep their sequential order.
  total = 0
  s = 0.0
  do i = n - 1, 2, -1
    if (a(i + 1) == 0 .and. i < 15) exit
    total = total + b(i)
    s = s + x(i)
    c(i) = c(i) + i
  end do
  print *, 'backwards exit at', i, total
  print '(a, es15.8)', ' s =', s
  print '(23i4)', c
  ! CYCLE: skipped iterations, with a double precision sum under it.
  ds = 0.0d0
  k = 0
  do i = 1, n
    if (mod(a(i), 3) == 0) cycle
    k = k + 1
    ds = ds + d(i)
    c(i) = c(i) * 2
  end do
  print *, 'cycled, k =', k
  print '(a, es23.16)', ' ds =', ds
  print '(23i4)', c
  ! CYCLE inside an IF construct, and a strided loop with an EXIT.
  do i = 2, n, 3
    if (a(i) > 8) exit
    if (b(i) > 9) then
      if (mod(i, 2) == 0) cycle
      c(i) = 100
    end if
  end do
  print *, 'strided exit at', i
  print '(23i4)', c
  ! The condition reads the element the iteration then writes.
  do i = 1, n
    if (c(i) > 30) exit
    c(i) = c(i) * 3
  end do
  print *, 'own element exit at', i
  print '(23i4)', c
  ! On a CYCLIC(3) distribution: course by course, the search too.
  do i = 1, n
    e(i) = mod(5 * i, 13)
    f(i) = i
  end do
  total = 0
  do i = n, 1, -1
    f(i) = f(i) + e(i)
    if (e(i) == 1) exit
    total = total + e(i) * i
  end do
  print *, 'cyclic exit at', i, total
  do i = 2, n, 2
    if (e(i) > 10) cycle
    if (e(i) == 0) exit
    f(i) = -f(i)
  end do
  print *, 'cyclic strided exit at', i
  print '(23i4)', f
end program loop_exits
