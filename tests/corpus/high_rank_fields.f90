! Arrays of rank 4 to 7 laid out the way solver codes lay them out: the
! components first and whole, the grid dimensions after them, one, two or
! three of them distributed (BT/SP-style u(5, i, j, k) fields).
program high_rank_fields
  implicit none
  integer, parameter :: nx = 9, ny = 8, nz = 10
  double precision :: u(5, nx, ny, nz), rhs(5, nx, ny, nz), flux(5, nx, ny, nz)
  double precision :: v(3, 2, nx, ny, nz)
  real :: w(2, 2, 2, 3, nx, ny)
  integer :: tag(2, 2, 2, 2, 2, 4, nz)
  double precision :: q(2, nx, ny, nz)
  double precision :: total, biggest
  integer :: i, j, k, m, step, count_pos
!HPF$ PROCESSORS P(4)
!HPF$ PROCESSORS G(2, 2)
!HPF$ DISTRIBUTE u(*, *, *, BLOCK) ONTO P
!HPF$ ALIGN rhs(m, i, j, k) WITH u(m, i, j, k)
!HPF$ ALIGN flux(:, :, :, :) WITH u(:, :, :, :)
!HPF$ DISTRIBUTE v(*, *, *, BLOCK, BLOCK) ONTO G
!HPF$ DISTRIBUTE w(*, *, *, *, CYCLIC, *) ONTO P
!HPF$ DISTRIBUTE tag(*, *, *, *, *, *, BLOCK) ONTO P
!HPF$ PROCESSORS C(1, 2, 2)
!HPF$ DISTRIBUTE q(*, BLOCK, BLOCK, BLOCK) ONTO C
  do k = 1, nz
    do j = 1, ny
      do i = 1, nx
        do m = 1, 5
          u(m, i, j, k) = dble(m) + 0.1d0 * dble(i) + 0.01d0 * dble(j) + 0.001d0 * dble(k)
        end do
      end do
    end do
  end do
  rhs = 0.0d0
  flux = 0.0d0
  ! A time loop: seven-point differences in every grid direction.
  do step = 1, 4
    do k = 2, nz - 1
      do j = 2, ny - 1
        do i = 2, nx - 1
          do m = 1, 5
            rhs(m, i, j, k) = u(m, i, j, k+1) + u(m, i, j, k-1) + u(m, i, j+1, k) + u(m, i, j-1, k) &
                 + u(m, i+1, j, k) + u(m, i-1, j, k) - 6.0d0 * u(m, i, j, k)
          end do
        end do
      end do
    end do
    forall (m = 1:5, i = 1:nx, j = 1:ny, k = 1:nz) flux(m, i, j, k) = 0.5d0 * u(m, i, j, k) * dble(m)
    u(:, 2:nx-1, 2:ny-1, 2:nz-1) = u(:, 2:nx-1, 2:ny-1, 2:nz-1) + 0.05d0 * rhs(:, 2:nx-1, 2:ny-1, 2:nz-1) &
         - 0.001d0 * flux(:, 2:nx-1, 2:ny-1, 2:nz-1)
  end do
  total = sum(u)
  biggest = maxval(rhs(2, :, :, :))
  print '(a, 2es24.15)', 'u: sum, max rhs(2) =', total, biggest
  print '(a, 5f12.6)', 'u(:, 4, 4, 5) =', u(:, 4, 4, 5)
  print '(a, 3f12.6)', 'u(1, 2, 3, nz-2:nz) =', u(1, 2, 3, nz-2:nz)
  ! Rank 5 on a 2-D grid of processes.
  do k = 1, nz
    do j = 1, ny
      do i = 1, nx
        v(:, 1, i, j, k) = [dble(i), dble(j), dble(k)]
        v(:, 2, i, j, k) = dble(i * j - k)
      end do
    end do
  end do
  v(1, 2, :, 2:ny, 2:nz) = v(1, 2, :, 2:ny, 2:nz) + v(1, 1, :, 1:ny-1, 1:nz-1)
  print '(a, 2es24.15)', 'v: sum, sum(v(3,2,...)) =', sum(v), sum(v(3, 2, :, :, :))
  ! Rank 6, CYCLIC in its fifth dimension.
  do j = 1, ny
    do i = 1, nx
      w(:, :, :, :, i, j) = real(i + 2 * j) * 0.25
    end do
  end do
  w(1, 1, 1, :, 2:nx, :) = w(2, 2, 2, :, 2:nx, :) * 2.0 + real(nx) - w(1, 2, 1, :, 2:nx, :)
  print '(a, f14.4, f10.4)', 'w: sum, w(1,1,1,2,5,3) =', sum(w), w(1, 1, 1, 2, 5, 3)
  ! Rank 7, integer.
  do k = 1, nz
    tag(:, :, :, :, :, :, k) = k - 4
  end do
  tag(1, 1, 1, 1, 1, :, 2:nz) = tag(1, 1, 1, 1, 1, :, 1:nz-1) * 3
  count_pos = count(tag > 0)
  print '(a, 3i8)', 'tag: sum, count > 0, max =', sum(tag), count_pos, maxval(tag)
  ! Three distributed dimensions.
  do k = 1, nz
    do j = 1, ny
      do i = 1, nx
        q(1, i, j, k) = dble(i + j + k)
        q(2, i, j, k) = dble(i - j) * 0.5d0
      end do
    end do
  end do
  do k = 2, nz - 1
    do j = 2, ny - 1
      do i = 2, nx - 1
        q(2, i, j, k) = q(2, i, j, k) + q(1, i-1, j, k) + q(1, i, j+1, k) - q(1, i, j, k-1)
      end do
    end do
  end do
  print '(a, 2f14.4)', 'q: sum, sum(q(2,...)) =', sum(q), sum(q(2, :, :, :))
end program high_rank_fields
