! Benchmark: 2-D five-point Jacobi on a (*, BLOCK) template, 4000 x 4000
! doubles, ITERS iterations (bench/mpi/run.sh substitutes them).
program jacobi2d
  implicit none
  integer, parameter :: n = 4000, iters = @SWEEPS@
  double precision :: u(0:n+1, 0:n+1), v(0:n+1, 0:n+1)
  integer :: i, j, k
!HPF$ PROCESSORS P(NUMBER_OF_PROCESSORS())
!HPF$ TEMPLATE T(0:N+1, 0:N+1)
!HPF$ DISTRIBUTE T(*, BLOCK) ONTO P
!HPF$ ALIGN U(I,J) WITH T(I,J)
!HPF$ ALIGN V(I,J) WITH T(I,J)
!HPF$ INDEPENDENT, NEW(I)
  do j = 0, n+1
    do i = 0, n+1
      u(i, j) = dble(mod(i + 2*j, 7))
    end do
  end do
  do k = 1, iters
!HPF$ INDEPENDENT, NEW(I)
    do j = 1, n
      do i = 1, n
        v(i, j) = 0.25d0 * (u(i-1, j) + u(i+1, j) + u(i, j-1) + u(i, j+1))
      end do
    end do
!HPF$ INDEPENDENT, NEW(I)
    do j = 1, n
      do i = 1, n
        u(i, j) = v(i, j)
      end do
    end do
  end do
  print '(3F16.6)', u(1, 1), u(n/2, n/2), u(n, n)
end program jacobi2d
