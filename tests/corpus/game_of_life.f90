! Conway's game of life on a periodic (BLOCK,BLOCK) board: LOGICAL and INTEGER
! arrays, CSHIFT neighbour sums, WHERE / ELSEWHERE, COUNT, ANY.
program game_of_life
  implicit none
  integer, parameter :: n = 16
  logical :: alive(n, n)
  integer :: nbr(n, n)
  integer :: gen, i, j, di, dj
!HPF$ PROCESSORS P(2,2)
!HPF$ DISTRIBUTE (BLOCK,BLOCK) ONTO P :: ALIVE, NBR
  alive = .false.
  alive(2, 3) = .true.          ! a glider
  alive(3, 4) = .true.
  alive(4, 2:4) = .true.
  alive(14, 2:4) = .true.       ! a blinker
  do gen = 1, 24
    nbr = 0
    do dj = -1, 1
      do di = -1, 1
        if (di == 0 .and. dj == 0) cycle
        where (cshift(cshift(alive, di, 1), dj, 2)) nbr = nbr + 1
      end do
    end do
    where (alive)
      alive = nbr == 2 .or. nbr == 3
    elsewhere
      alive = nbr == 3
    end where
  end do
  print *, 'alive cells =', count(alive)
  do i = 1, n
    do j = 1, n
      if (alive(i, j)) write (*, '(A,2I3)') ' cell', i, j
    end do
  end do
  print *, 'row 14 has life:', any(alive(14, :))
end program game_of_life
