! Embedding and arrangements: ALIGN U(I) WITH T2(I,5) (constant target subscript),
! scalar PROCESSORS, NUMBER_OF_PROCESSORS() extents, TEMPLATE, DIMENSION(N,N),
! extents like N/2+1; a column/row extraction followed by a rank-1 update.
program embed_constant
  implicit none
  integer, parameter :: n = 16
  integer :: g(n, n), u(n), v(n), h(n/2+1), hist(4)
  integer :: i, j
!HPF$ PROCESSORS SOLO
!HPF$ PROCESSORS PALL(NUMBER_OF_PROCESSORS())
!HPF$ PROCESSORS PGRID(2, NUMBER_OF_PROCESSORS()/2)
!HPF$ TEMPLATE, DIMENSION(N,N) :: T2
!HPF$ TEMPLATE TH(N/2+1)
!HPF$ DISTRIBUTE T2(BLOCK, BLOCK) ONTO PGRID
!HPF$ DISTRIBUTE TH(BLOCK) ONTO PALL
!HPF$ DISTRIBUTE HIST(*) ONTO SOLO
!HPF$ ALIGN G(I,J) WITH T2(I,J)
!HPF$ ALIGN U(I) WITH T2(I,5)          ! U lives in column 5 of the grid
!HPF$ ALIGN V(J) WITH T2(N/2,J)        ! V lives in row N/2
!HPF$ ALIGN H(I) WITH TH(I)
  forall (i = 1:n, j = 1:n) g(i, j) = mod(i * j, 9)
  do i = 1, n
    u(i) = g(i, 5)                     ! local: same template column
  end do
  do j = 1, n
    v(j) = g(n/2, j)                   ! local: same template row
  end do
!HPF$ INDEPENDENT, NEW(I)
  do j = 1, n
    do i = 1, n
      g(i, j) = g(i, j) - u(i) * v(j)
    end do
  end do
  do i = 1, n/2+1
    h(i) = u(i) + u(n+1-i)
  end do
  hist = 0
  do i = 1, n
    hist(mod(abs(g(i, i)), 4) + 1) = hist(mod(abs(g(i, i)), 4) + 1) + 1
  end do
  print *, 'sum(g) =', sum(g), ' g(3,7) =', g(3, 7)
  print *, 'h =', h
  print *, 'hist =', hist
end program embed_constant
