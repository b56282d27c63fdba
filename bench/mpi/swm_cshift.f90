! Benchmark: a periodic shallow-water model (Sadourny's SWM equations) on a
! 512 x 512 grid written with CSHIFT, as array-syntax codes of the HPF era
! wrote it: every neighbour is a CSHIFT of a whole (*, BLOCK) field.
! bench/mpi/run.sh substitutes the steps.
program swm_cshift
  implicit none
  integer, parameter :: n = 512, itmax = @SWEEPS@
  double precision :: u(n, n), v(n, n), p(n, n), unew(n, n), vnew(n, n), pnew(n, n)
  double precision :: uold(n, n), vold(n, n), pold(n, n), cu(n, n), cv(n, n), z(n, n), h(n, n)
  double precision :: dt, dx, dy, a, alpha, el, pi, tpi, di, dj, pcf
  double precision :: fsdx, fsdy, tdts8, tdtsdx, tdtsdy
  integer :: i, j, ncycle
!HPF$ PROCESSORS PR(NUMBER_OF_PROCESSORS())
!HPF$ DISTRIBUTE (*, BLOCK) ONTO PR :: u, v, p, unew, vnew, pnew, uold, vold, pold, cu, cv, z, h
  dt = 90.d0
  dx = 1.d5
  dy = 1.d5
  a = 1.d6
  alpha = .001d0
  el = n * dx
  pi = 4.d0 * atan(1.d0)
  tpi = pi + pi
  di = tpi / n
  dj = tpi / n
  pcf = pi * pi * a * a / (el * el)
  fsdx = 4.d0 / dx
  fsdy = 4.d0 / dy
  tdts8 = dt / 8.d0
  tdtsdx = dt / dx
  tdtsdy = dt / dy
!HPF$ INDEPENDENT, NEW(i)
  do j = 1, n
    do i = 1, n
      p(i, j) = pcf * (cos(2.d0 * (i - 1) * di) + cos(2.d0 * (j - 1) * dj)) + 50000.d0
      u(i, j) = 0.1d0 * sin((i - 1) * di) * cos((j - 1) * dj)
      v(i, j) = 0.1d0 * cos((i - 1) * di) * sin((j - 1) * dj)
    end do
  end do
  uold = u
  vold = v
  pold = p
  do ncycle = 1, itmax
    ! Mass fluxes, vorticity and height.
    cu = .5d0 * (p + cshift(p, -1, 1)) * u
    cv = .5d0 * (p + cshift(p, -1, 2)) * v
    z = (fsdx * (v - cshift(v, -1, 1)) - fsdy * (u - cshift(u, -1, 2))) &
      / (cshift(cshift(p, -1, 1), -1, 2) + cshift(p, -1, 2) + p + cshift(p, -1, 1))
    h = p + .25d0 * (cshift(u, 1, 1)**2 + u * u + cshift(v, 1, 2)**2 + v * v)
    ! New velocities and height.
    unew = uold + tdts8 * (cshift(z, 1, 2) + z) &
      * (cshift(cv, 1, 2) + cshift(cshift(cv, -1, 1), 1, 2) + cshift(cv, -1, 1) + cv) &
      - tdtsdx * (h - cshift(h, -1, 1))
    vnew = vold - tdts8 * (cshift(z, 1, 1) + z) &
      * (cshift(cu, 1, 1) + cu + cshift(cu, -1, 2) + cshift(cshift(cu, 1, 1), -1, 2)) &
      - tdtsdy * (h - cshift(h, -1, 2))
    pnew = pold - tdtsdx * (cshift(cu, 1, 1) - cu) - tdtsdy * (cshift(cv, 1, 2) - cv)
    ! Time smoothing.
    uold = u + alpha * (unew - 2.d0 * u + uold)
    vold = v + alpha * (vnew - 2.d0 * v + vold)
    pold = p + alpha * (pnew - 2.d0 * p + pold)
    u = unew
    v = vnew
    p = pnew
  end do
  print '(a, es20.10)', ' mean height', sum(p) / (n * n)
  print '(3es20.10)', p(n/2, n/2), u(n/4, 3*n/4), v(3*n/4, n/4)
end program swm_cshift
