! INTEGER(2) counters and LOGICAL(1) masks, as codes short of memory kept
! them: a sieve marks multiples, masks select cells, counts and extrema.
program short_masks
  implicit none
  integer, parameter :: n = 60
  integer(kind=2) :: counter(n), level(n)
  logical(1) :: marked(n)
  logical(kind=1) :: odd(n)
  integer :: i, step
!HPF$ PROCESSORS P(3)
!HPF$ DISTRIBUTE (BLOCK) ONTO P :: counter, marked
!HPF$ ALIGN (i) WITH counter(i) :: level, odd

  do i = 1, n
    counter(i) = int(0, 2)
    level(i) = int(mod(7 * i, 23), 2)
    marked(i) = .false.
    odd(i) = mod(i, 2) == 1
  end do
  do step = 2, 7
    do i = 2 * step, n, step
      marked(i) = .true.
      counter(i) = counter(i) + int(1, 2)
    end do
  end do
  where (marked) level = level * int(2, 2)
  print '(a, i4)', 'marked', count(marked)
  print '(a, i4)', 'odd and marked', count(odd .and. marked)
  print '(a, l2, l2)', 'any, all', any(marked), all(marked(2 * 7:n:7))
  print '(a, 2i6)', 'level extrema', maxval(level), minval(level)
  print '(a, i6)', 'divisor count', sum(counter)
  print '(20i3)', counter
  print '(30l2)', marked
end program short_masks
