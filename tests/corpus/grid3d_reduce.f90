! A 3-D nest with an inner reduction loop on a (BLOCK, BLOCK) grid: each
! column (i, j) of W sums over k the product of U's column with its mirror
! image U(n+1-i, n+1-j, :), which lives on the opposite process of the grid.
program grid3d_reduce
  implicit none
  integer, parameter :: n = 12, nz = 8
  real :: u(n, n, nz), w(n, n)
  integer :: i, j, k
!HPF$ PROCESSORS G(2, 2)
!HPF$ DISTRIBUTE U(BLOCK, BLOCK, *) ONTO G
!HPF$ DISTRIBUTE W(BLOCK, BLOCK) ONTO G
  forall (i = 1:n, j = 1:n, k = 1:nz) u(i, j, k) = real(mod(i + 2 * j + 3 * k, 11)) - 5.0
  w = 0.0
  do j = 1, n
    do i = 1, n
      do k = 1, nz
        w(i, j) = w(i, j) + u(i, j, k) * u(n + 1 - i, n + 1 - j, k)
      end do
    end do
  end do
  print '(a, 4f8.1)', 'w(1:4,1) =', w(1:4, 1)
  print '(a, 2f8.1)', 'w(n,n), w(1,n) =', w(n, n), w(1, n)
  print '(a, f10.1)', 'sum(w) =', sum(w)
end program grid3d_reduce
