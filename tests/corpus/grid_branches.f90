! IF statements and constructs and CYCLE in DO nests on 2-D grids: their
! conditions read neighbours (fetched before the nest like the assignments'
! reads), on (BLOCK, BLOCK) and on (CYCLIC, BLOCK) (course by course).
program grid_branches
  integer, parameter :: n = 12
  double precision :: u(0:n+1, 0:n+1), v(0:n+1, 0:n+1)
  integer :: i, j, k(n, n), m(n, n)
!HPF$ PROCESSORS P(2, 2)
!HPF$ DISTRIBUTE (BLOCK, BLOCK) ONTO P :: u
!HPF$ ALIGN v(i, j) WITH u(i, j)
!HPF$ DISTRIBUTE (CYCLIC, BLOCK) ONTO P :: k
!HPF$ ALIGN m(i, j) WITH k(i, j)
  do j = 0, n + 1
    do i = 0, n + 1
      u(i, j) = dble(mod(i * 7 + j * 3, 11)) / 4.0d0
      v(i, j) = 0.0d0
    end do
  end do
  do j = 1, n
    do i = 1, n
      k(i, j) = mod(i * j, 5)
      m(i, j) = 0
    end do
  end do
  ! IFs reading neighbours, and a CYCLE.
  do j = 1, n
    do i = 1, n
      if (mod(i + j, 3) == 0) cycle
      if (u(i - 1, j) > u(i + 1, j)) then
        v(i, j) = u(i, j - 1) + u(i, j + 1)
      else if (u(i, j) > 1.0d0) then
        v(i, j) = -u(i, j)
      else
        v(i, j) = 0.5d0 * u(i, j)
      end if
    end do
  end do
  print '(6f10.4)', v(1:n:2, 1:n:3)
  print *, sum(v)
  ! On a CYCLIC dimension.
  do j = 1, n
    do i = 1, n
      if (k(i, j) == 0) cycle
      if (k(i, j) > 2) m(i, j) = k(i, j) * i
      if (k(i, j) == 1) then
        m(i, j) = -j
      end if
    end do
  end do
  print '(12i4)', m
end program grid_branches
