! Alternating-direction implicit (ADI) diffusion on a square: each time
! step does implicit line solves along x, then along y. The field is
! DYNAMIC: it is redistributed so that the lines being solved are never
! cut, (*, BLOCK) for the x sweep and (BLOCK, *) for the y sweep.
program adi
  implicit none
  integer, parameter :: n = 24, nsteps = 6
  real(8) :: u(n, n), rhs(n, n)
!HPF$ PROCESSORS p(4)
!HPF$ DYNAMIC u, rhs
!HPF$ DISTRIBUTE (*, BLOCK) ONTO p :: u, rhs
  real(8) :: cp(n), dp(n), r, denom, total
  integer :: i, j, step

  r = 0.8d0
  u = 0.0d0
  u(n/3:2*n/3, n/3:2*n/3) = 1.0d0
  u(2, :) = 0.5d0

  do step = 1, nsteps
     ! x sweep: explicit in y, implicit in x, lines u(:, j) are local
     rhs = u
     rhs(:, 2:n-1) = u(:, 2:n-1) + 0.5d0 * r * (u(:, 1:n-2) - 2.0d0 * u(:, 2:n-1) + u(:, 3:n))
!HPF$ INDEPENDENT, NEW(cp, dp, denom, i)
     do j = 1, n
        cp(1) = 0.0d0
        dp(1) = rhs(1, j)
        do i = 2, n - 1
           denom = 1.0d0 + r + 0.5d0 * r * cp(i-1)
           cp(i) = -0.5d0 * r / denom
           dp(i) = (rhs(i, j) + 0.5d0 * r * dp(i-1)) / denom
        end do
        u(n, j) = rhs(n, j)
        do i = n - 1, 2, -1
           u(i, j) = dp(i) - cp(i) * u(i+1, j)
        end do
        u(1, j) = rhs(1, j)
     end do

!HPF$ REDISTRIBUTE (BLOCK, *) ONTO p :: u, rhs
     ! y sweep: explicit in x, implicit in y, lines u(i, :) are local
     rhs = u
     rhs(2:n-1, :) = u(2:n-1, :) + 0.5d0 * r * (u(1:n-2, :) - 2.0d0 * u(2:n-1, :) + u(3:n, :))
!HPF$ INDEPENDENT, NEW(cp, dp, denom, j)
     do i = 1, n
        cp(1) = 0.0d0
        dp(1) = rhs(i, 1)
        do j = 2, n - 1
           denom = 1.0d0 + r + 0.5d0 * r * cp(j-1)
           cp(j) = -0.5d0 * r / denom
           dp(j) = (rhs(i, j) + 0.5d0 * r * dp(j-1)) / denom
        end do
        u(i, n) = rhs(i, n)
        do j = n - 1, 2, -1
           u(i, j) = dp(j) - cp(j) * u(i, j+1)
        end do
        u(i, 1) = rhs(i, 1)
     end do
!HPF$ REDISTRIBUTE (*, BLOCK) ONTO p :: u, rhs

     if (mod(step, 2) == 0) then
        total = sum(u)
        write (*, '(a, i3, a, f14.8, a, f10.6)') 'step', step, '  total', total, '  peak', maxval(u)
     end if
  end do
  write (*, '(a, 4f10.6)') 'diagonal: ', (u(i, i), i = 4, n, 6)
  write (*, '(a, 2i4)') 'peak at ', maxloc(u)
  write (*, '(a, i5)') 'cells above 0.25: ', count(u > 0.25d0)
end program adi
