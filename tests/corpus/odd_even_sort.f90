! Odd-even transposition sort of a BLOCK-distributed INTEGER array: stride-2
! DO loops with INDEPENDENT, a LOGICAL flag, DO WHILE until no swap.
program odd_even_sort
  implicit none
  integer, parameter :: n = 40
  integer :: key(n), tmp, i, phase, rounds
  logical :: swapped
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE KEY(BLOCK) ONTO P
!HPF$ SHADOW KEY(1:1)
  do i = 1, n
    key(i) = mod(37 * i + 11, 101)
  end do
  swapped = .true.
  rounds = 0
  do while (swapped)
    swapped = .false.
    rounds = rounds + 1
    do phase = 1, 2
!HPF$ INDEPENDENT, NEW(TMP)
      do i = phase, n-1, 2
        if (key(i) > key(i+1)) then
          tmp = key(i)
          key(i) = key(i+1)
          key(i+1) = tmp
          swapped = .true.
        end if
      end do
    end do
  end do
  print *, 'rounds =', rounds
  print *, 'sorted =', all(key(1:n-1) <= key(2:n))
  print *, 'first  =', key(1:5)
  print *, 'last   =', key(n-4:n)
end program odd_even_sort
