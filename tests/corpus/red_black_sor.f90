! Red-black SOR for the 2-D Poisson equation on (BLOCK,BLOCK): masked
! multi-index FORALL for red points, stride-2 DO nest for black points.
program red_black_sor
  implicit none
  integer, parameter :: n = 20
  double precision :: u(0:n+1, 0:n+1), f(0:n+1, 0:n+1)
  double precision, parameter :: omega = 1.5d0, h2 = 1.0d0 / dble(n+1)**2
  integer :: i, j, sweep
!HPF$ PROCESSORS PQ(2,2)
!HPF$ TEMPLATE G(0:N+1, 0:N+1)
!HPF$ DISTRIBUTE G(BLOCK, BLOCK) ONTO PQ
!HPF$ ALIGN U(I,J) WITH G(I,J)
!HPF$ ALIGN F(I,J) WITH G(I,J)
  u = 0.0d0
  f = 1.0d0
  do sweep = 1, 30
!HPF$ INDEPENDENT
    forall (i = 1:n, j = 1:n, mod(i + j, 2) == 0)
      u(i, j) = (1.0d0 - omega) * u(i, j) + omega * 0.25d0 * &
                (u(i-1, j) + u(i+1, j) + u(i, j-1) + u(i, j+1) + h2 * f(i, j))
    end forall
!HPF$ INDEPENDENT, NEW(I)
    do j = 1, n
      do i = 1 + mod(j, 2), n, 2
        u(i, j) = (1.0d0 - omega) * u(i, j) + omega * 0.25d0 * &
                  (u(i-1, j) + u(i+1, j) + u(i, j-1) + u(i, j+1) + h2 * f(i, j))
      end do
    end do
  end do
  print '(A,F12.8)', 'u(centre) =', u(n/2, n/2)
  print '(A,F12.8)', 'u(1,1)    =', u(1, 1)
  print '(A,F12.6)', 'sum(u)    =', sum(u)
end program red_black_sor
