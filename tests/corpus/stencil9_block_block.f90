! A 9-point integer stencil on a 2-D grid of processes: (BLOCK, BLOCK(5))
! of a template onto P(2,3), arrays aligned with it at an offset and with
! other bounds, diagonal neighbours (the corners of the shadow areas),
! DO nests in either order and with a negative step, a FORALL, element
! assignments, rank-3 arrays distributed (BLOCK, BLOCK, *), a section
! assignment, and output of elements, sections, whole arrays and
! reductions. Integer data: every process count prints the same.
program stencil9_block_block
  implicit none
  integer, parameter :: n = 18, m = 13, k = 3
  integer :: a(n, m), b(n, m), c(0:n+1, m)
  integer :: h(n, m, k), g(n, m, k)
  integer :: i, j, l, step
!HPF$ PROCESSORS P(2, 3)
!HPF$ TEMPLATE T(0:n+1, m)
!HPF$ DISTRIBUTE T(BLOCK, BLOCK(5)) ONTO P
!HPF$ ALIGN A(I, J) WITH T(I, J)
!HPF$ ALIGN B(I, J) WITH T(I+1, J)
!HPF$ ALIGN C(I, J) WITH T(I, J)
!HPF$ DISTRIBUTE (BLOCK, BLOCK, *) ONTO P :: H, G
  do j = 1, m
    do i = 1, n
      a(i, j) = mod(i * 7 + j * 13, 10)
    end do
  end do
  b = 0
  c = -1
  a(1, 1) = 5
  a(n, m) = 9
  do l = 1, k
    do j = 1, m
      do i = 1, n
        h(i, j, l) = i + 2 * j + 3 * l
      end do
    end do
  end do
  g = 0
  do step = 1, 6
    ! All 9 neighbours, the corners included.
    do j = 2, m - 1
      do i = 2, n - 1
        b(i, j) = mod(a(i-1, j-1) + a(i, j-1) + a(i+1, j-1) + a(i-1, j) + 2 * a(i, j) + a(i+1, j) &
                      + a(i-1, j+1) + a(i, j+1) + a(i+1, j+1) + step, 97)
      end do
    end do
    forall (i = 2:n-1, j = 2:m-1) a(i, j) = mod(b(i-1, j+1) + 3 * b(i+1, j-1) + b(i, j), 89)
    ! The loops the other way round, one of them downwards.
    do i = 2, n - 1
      do j = m - 1, 2, -1
        b(i, j) = b(i, j) + a(i+1, j+1) - a(i-1, j-1)
      end do
    end do
    do l = 1, k
      do j = 2, m - 1
        do i = 2, n - 1
          g(i, j, l) = mod(h(i-1, j-1, l) + h(i+1, j+1, l) + h(i, j, mod(l, k) + 1) * l, 1000)
        end do
      end do
    end do
    h = g + 1
  end do
  c(1:n, :) = a
  print *, 'a(5,7) =', a(5, 7), ' b(2,2) =', b(2, 2), ' i, j, l =', i, j, l
  print *, 'row 3 of a:', a(3, :)
  print *, 'sum a =', sum(a), ' sum b =', sum(b), ' max h =', maxval(h)
  print *, 'h(:,4,2):', h(:, 4, 2)
  print '(10I4)', c
  print *, 'count g > 500:', count(g > 500), ' g(17,12,3) =', g(17, 12, 3)
end program stencil9_block_block
