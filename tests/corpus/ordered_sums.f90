! Floating-point SUM, PRODUCT and DOT_PRODUCT whose sequential order
! interleaves the processes: (BLOCK,*) arrays, sections cutting the columns
! of (*,BLOCK) arrays, a (BLOCK,BLOCK) grid, CYCLIC(64), masks and
! elementwise expressions; MAX and products accumulated in loops. The sums
! mix magnitudes, so any other order of the additions changes the digits.
program ordered_sums
  implicit none
  integer, parameter :: n = 37, m = 11, nc = 300
  real :: rows(n, m), tall(3, m)
  double precision :: cols(m, n), grid(n, 13), w(n, 13)
  double precision :: x(nc), y(nc)
  double precision :: s, t
  integer :: i, j, k
!HPF$ PROCESSORS P(4)
!HPF$ PROCESSORS Q(2, 2)
!HPF$ DISTRIBUTE (BLOCK, *) ONTO P :: ROWS, TALL
!HPF$ DISTRIBUTE (*, BLOCK) ONTO P :: COLS
!HPF$ DISTRIBUTE (BLOCK, BLOCK) ONTO Q :: GRID
!HPF$ ALIGN W(I, J) WITH GRID(I, J)
!HPF$ DISTRIBUTE (CYCLIC(64)) ONTO P :: X, Y
  do j = 1, m
    do i = 1, n
      rows(i, j) = 1.0 / real(i + 7 * j) + real(mod(i * j, 5)) * 1000.0
    end do
  end do
  do j = 1, m
    do i = 1, 3
      tall(i, j) = 0.1 * real(i) + 1.0e4 * real(j)
    end do
  end do
  do j = 1, n
    do i = 1, m
      cols(i, j) = 1.0d0 / dble(3 * i + j) + dble(mod(i + j, 7)) * 1.0d6
    end do
  end do
  do j = 1, 13
    do i = 1, n
      grid(i, j) = 1.0d0 / dble(i * j) + dble(mod(i, 3)) * 1.0d8
      w(i, j) = dble(mod(i + 2 * j, 4)) - 1.5d0
    end do
  end do
  do i = 1, nc
    x(i) = 1.0d0 / dble(i) + dble(mod(i, 9)) * 1.0d7
    y(i) = dble(mod(3 * i, 11)) - 5.0d0
  end do
  ! (BLOCK, *): each column crosses every process.
  print '(A,ES24.16)', 'sum(rows)            =', sum(rows)
  print '(A,ES24.16)', 'sum(rows(2:n:3,:))   =', sum(rows(2:n:3, :))
  print '(A,ES24.16)', 'sum(rows(n:1:-2,m))  =', sum(rows(n:1:-2, m))
  print '(A,ES24.16)', 'product(rows(5:9,2)) =', product(rows(5:9, 2) / 1000.0 + 0.5)
  print '(A,ES24.16)', 'sum(tall)            =', sum(tall)
  print '(A,ES24.16)', 'sum(rows, mask)      =', sum(rows, mask=rows > 2000.0)
  ! (*, BLOCK): sections that cut the columns.
  print '(A,ES24.16)', 'sum(cols(2:5,:))     =', sum(cols(2:5, :))
  print '(A,ES24.16)', 'sum(cols(m:1:-3,::2))=', sum(cols(m:1:-3, ::2))
  print '(A,ES24.16)', 'sum(cols(4,:))       =', sum(cols(4, :))
  ! A 2-D grid: elementwise expressions of arrays on the same cells.
  s = sum(grid)
  t = sum(grid(3:n, 2:12) * w(3:n, 2:12))
  print '(A,2ES24.16)', 'grid sums            =', s, t
  print '(A,ES24.16)', 'sum(grid**2, mask)   =', sum(grid**2, mask=w > 0.0d0)
  print '(A,ES24.16)', 'sum(abs(w)*grid)     =', sum(abs(w(:, 1:13)) * grid(:, 1:13))
  ! CYCLIC(64): runs of 64 elements.
  print '(A,ES24.16)', 'sum(x)               =', sum(x)
  print '(A,ES24.16)', 'dot_product(x, y)    =', dot_product(x, y)
  print '(A,ES24.16)', 'sum(x(nc:1:-1)*y(nc:1:-1)) =', sum(x(nc:1:-1) * y(nc:1:-1))
  ! Empty sections, and a reduction in a loop.
  print '(A,ES24.16)', 'sum(rows(5:4,:))     =', sum(rows(5:4, :))
  s = 0.0d0
  do k = 1, 3
    s = s + sum(grid(k:n:k, k))
  end do
  print '(A,ES24.16)', 'looped grid sums     =', s
  ! Floating-point MAX and a product accumulated in a loop: along the chain.
  t = -1.0d300
  do j = 1, n
    t = max(t, cols(3, j) - 1.0d6 * dble(j))
  end do
  s = 1.0d0
  do j = 1, n
    s = s * (1.0d0 + cols(2, j) * 1.0d-7)
  end do
  print '(A,2ES24.16)', 'loop max, product    =', t, s
end program ordered_sums
