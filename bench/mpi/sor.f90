! Benchmark: Gauss-Seidel SOR sweeps on a (BLOCK, *) array, 2000 x 2000
! doubles, SWEEPS sweeps (bench/mpi/run.sh substitutes them). The sweep
! reads the row below it has just updated: hpf-ls runs it as a pipeline
! (a wavefront over strips of columns).
program sor
  implicit none
  integer, parameter :: n = 2000, sweeps = @SWEEPS@
  double precision :: u(n, n), omega
  integer :: i, j, k
!HPF$ DISTRIBUTE u(BLOCK, *)
  do j = 1, n
    do i = 1, n
      u(i, j) = dble(mod(i + 2*j, 7))
    end do
  end do
  omega = 1.25d0
  do k = 1, sweeps
    do j = 2, n - 1
      do i = 2, n - 1
        u(i, j) = (1.0d0 - omega) * u(i, j) + omega * 0.25d0 * (u(i-1, j) + u(i+1, j) + u(i, j-1) + u(i, j+1))
      end do
    end do
  end do
  print '(3F20.12)', u(2, 2), u(n/2, n/2), u(n-1, n-1)
end program sor
