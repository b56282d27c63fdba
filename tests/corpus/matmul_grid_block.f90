! MATMUL of distributed matrices and vectors, run in parallel: each process
! computes its part of the result from panels of the operands. Shapes:
! matrix x matrix on a 2-D (BLOCK, BLOCK) grid with uneven blocks and an
! inner extent past one panel, matrix x vector and vector x matrix with the
! vector replicated or distributed, results replicated or distributed.
! Values are small integers in REAL(8), so every order of summation gives
! the same bits.
program matmul_grid_block
  implicit none
  integer, parameter :: m = 9, k = 150, n = 7
  double precision :: a(m, k), b(k, n), c(m, n), r(m, n)
  double precision :: x(k), y(m), xr(m), z(k), w(k)
  integer :: i, j
!HPF$ PROCESSORS GRID(2, 2)
!HPF$ PROCESSORS LINE(4)
!HPF$ DISTRIBUTE (BLOCK, BLOCK) ONTO GRID :: a, b, c
!HPF$ DISTRIBUTE y(BLOCK) ONTO LINE
!HPF$ DISTRIBUTE z(CYCLIC) ONTO LINE
  do j = 1, k
    do i = 1, m
      a(i, j) = dble(mod(i + 3*j, 7) - 3)
    end do
    x(j) = dble(mod(j, 5) - 2)
  end do
  do j = 1, n
    do i = 1, k
      b(i, j) = dble(mod(2*i - j, 5) - 2)
    end do
  end do
  do i = 1, m
    xr(i) = dble(mod(3*i, 4) - 1)
  end do
  c = matmul(a, b)
  r = matmul(a, b)
  print '(A,7F8.1)', 'c(1,:) =', c(1, :)
  print '(A,7F8.1)', 'c(m,:) =', c(m, :)
  print '(A,F10.1)', 'sum(c) =', sum(c)
  y = matmul(a, x)
  print '(A,9F8.1)', 'y      =', y
  z = matmul(xr, a)
  print '(A,F10.1,2F8.1)', 'sum(z), z(1), z(k) =', sum(z), z(1), z(k)
  w = matmul(xr, a)
  print '(A,L2)', 'replicated equals cyclic:', all(w == z)
  print '(A,L2)', 'r equals c:', all(r == c)
end program matmul_grid_block
