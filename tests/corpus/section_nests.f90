! DO nests whose bodies assign sections taken at the loops' indices, the way
! solver codes write their component dimension: r(:, i, j, k) = ... on
! (*, *, *, BLOCK), v(:, j, k) on a 2-D grid, strided and reversed sections,
! whole arrays of the section's rank, and a section read at the left side's
! own elements.
program section_nests
  implicit none
  integer, parameter :: nx = 7, ny = 6, nz = 9, nc = 5
  double precision :: u(nc, nx, ny, nz), r(nc, nx, ny, nz)
  double precision :: v(nx, ny, nz), b(nx, ny, nz), w(nc), coef(nc)
  integer :: i, j, k, step
!HPF$ PROCESSORS P(4)
!HPF$ PROCESSORS G(2, 2)
!HPF$ DISTRIBUTE u(*, *, *, BLOCK) ONTO P
!HPF$ ALIGN r(:, :, :, :) WITH u(:, :, :, :)
!HPF$ DISTRIBUTE v(*, BLOCK, BLOCK) ONTO G
!HPF$ ALIGN b(:, :, :) WITH v(:, :, :)
  do i = 1, nc
    coef(i) = 1.0d0 / dble(i + 1)
    w(i) = dble(i) * 0.5d0
  end do
  do k = 1, nz
    do j = 1, ny
      do i = 1, nx
        u(:, i, j, k) = w * dble(i + 2 * j) + dble(k) * 0.01d0
        b(i, j, k) = dble(i - j + k)
      end do
    end do
  end do
  r = 0.0d0
  v = 1.0d0
  do step = 1, 3
    do k = 2, nz - 1
      do j = 2, ny - 1
        do i = 2, nx - 1
          r(:, i, j, k) = u(:, i, j, k+1) - 2.0d0 * u(:, i, j, k) + u(:, i, j, k-1) &
               + coef * (u(:, i+1, j, k) - u(:, i-1, j, k)) + sqrt(abs(u(1:nc, i, j+1, k)))
        end do
      end do
    end do
    do k = 2, nz - 1
      do j = 2, ny - 1
        do i = 2, nx - 1
          u(:, i, j, k) = u(:, i, j, k) + 0.1d0 * r(:, i, j, k)
        end do
      end do
    end do
  end do
  do k = 2, nz
    u(nc:1:-2, 1, 1, k) = u(1:nc:2, 2, 2, k-1) * 0.5d0
  end do
  do k = 2, nz
    do j = 2, ny
      v(:, j, k) = b(:, j, k) + b(:, j-1, k-1) - v(:, j, k) * 0.5d0
    end do
  end do
  print '(a, es24.15)', 'sum(u) =', sum(u)
  print '(a, es24.15)', 'sum(r) =', sum(r)
  print '(a, 5f12.6)', 'u(:, 3, 3, 5) =', u(:, 3, 3, 5)
  print '(a, 5f12.6)', 'u(:, 1, 1, 4) =', u(:, 1, 1, 4)
  print '(a, f14.4)', 'sum(v) =', sum(v)
  print '(a, 4f10.3)', 'v(2:5, 3, 4) =', v(2:5, 3, 4)
end program section_nests
