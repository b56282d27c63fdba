! Gauss-Seidel and SOR sweeps whose dependence crosses the processes: u is
! distributed by columns, so each sweep reads the column its left neighbour
! has just computed (a chain of processes); v by rows, so each sweep runs as
! a wavefront over strips of columns. Reads at I+1 / J+1 read old values.
program gauss_seidel
  implicit none
  integer, parameter :: n = 50, m = 41
  real(8) :: u(n, n), v(m, n), f(m, n)
  real(8) :: omega
  integer :: i, j, it
!HPF$ DISTRIBUTE u(*, BLOCK)
!HPF$ DISTRIBUTE (BLOCK, *) :: v, f
  do j = 1, n
    do i = 1, n
      u(i, j) = real(mod(i * 7 + j * 13, 17), 8) / 17.0d0
    end do
  end do
  do j = 1, n
    do i = 1, m
      v(i, j) = real(mod(i * 5 + j * 3, 11), 8) / 11.0d0
      f(i, j) = real(mod(i + 2 * j, 7), 8) / 700.0d0
    end do
  end do
  omega = 1.5d0
  do it = 1, 4
    ! Gauss-Seidel, columns in order.
    do j = 2, n - 1
      do i = 2, n - 1
        u(i, j) = 0.25d0 * (u(i-1, j) + u(i+1, j) + u(i, j-1) + u(i, j+1))
      end do
    end do
    ! SOR with a source term, rows distributed: a wavefront.
    do j = 2, n - 1
      do i = 2, m - 1
        v(i, j) = (1.0d0 - omega) * v(i, j) &
                  + omega * 0.25d0 * (v(i-1, j) + v(i+1, j) + v(i, j-1) + v(i, j+1) - f(i, j))
      end do
    end do
    print '(i3, 2es25.16)', it, sum(u), sum(v)
  end do
  print '(3es25.16)', u(n/2, n/2), u(2, n-1), u(n-1, 2)
  print '(3es25.16)', v(m/2, n/2), v(2, n-1), v(m-1, 2)
end program gauss_seidel
