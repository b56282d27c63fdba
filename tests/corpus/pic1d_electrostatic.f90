! 1-D electrostatic particle-in-cell: linear (cloud-in-cell) charge
! deposit, field from Gauss's law, field gathered to the particles, leapfrog
! push with periodic wrap. Particles are spread CYCLIC, the mesh BLOCK.
program pic1d
  implicit none
  integer, parameter :: ng = 32, npart = 128, nsteps = 12, nout = 4
  real(8), parameter :: length = 32.0d0, dt = 0.2d0, qm = -1.0d0
  real(8) :: x(npart), v(npart), ep(npart), w(npart)
  integer :: cell(npart)
  real(8) :: rho(ng), efield(ng)
!HPF$ PROCESSORS procs(4)
!HPF$ DISTRIBUTE (CYCLIC) ONTO procs :: x
!HPF$ ALIGN (k) WITH x(k) :: v, ep, w, cell
!HPF$ DISTRIBUTE (BLOCK) ONTO procs :: rho, efield
  real(8) :: dx, frac, mean, ekin, efld
  integer :: k, i, step, ip1

  dx = length / ng
  ! a cold beam with a small sinusoidal-like (triangular) displacement
  forall (k = 1:npart) x(k) = (k - 0.5d0) * length / npart
  forall (k = 1:npart) x(k) = x(k) + 0.05d0 * dx * (1 - 2 * mod(k, 2))
  v = 0.1d0
  where (mod((/ (k, k = 1, npart) /), 4) == 0) v = -0.1d0

  do step = 1, nsteps
     ! cell index and weight of every particle
!HPF$ INDEPENDENT
     do k = 1, npart
        cell(k) = int(x(k) / dx) + 1
        w(k) = x(k) / dx - (cell(k) - 1)
     end do
     ! charge deposit: particles of one cell collide, no INDEPENDENT
     rho = 0.0d0
     do k = 1, npart
        ip1 = mod(cell(k), ng) + 1
        rho(cell(k)) = rho(cell(k)) + (1.0d0 - w(k))
        rho(ip1) = rho(ip1) + w(k)
     end do
     mean = sum(rho) / ng
     rho = rho - mean
     ! Gauss's law: a running sum of the charge, then zero mean field
     efield(1) = rho(1) * dx
     do i = 2, ng
        efield(i) = efield(i-1) + rho(i) * dx
     end do
     efield = efield - sum(efield) / ng
     ! gather the field at the particles and push them
!HPF$ INDEPENDENT, NEW(ip1, frac)
     do k = 1, npart
        ip1 = mod(cell(k), ng) + 1
        frac = w(k)
        ep(k) = (1.0d0 - frac) * efield(cell(k)) + frac * efield(ip1)
        v(k) = v(k) + qm * ep(k) * dt
        x(k) = modulo(x(k) + v(k) * dt, length)
     end do
     if (mod(step, nout) == 0) then
        ekin = 0.5d0 * sum(v * v)
        efld = 0.5d0 * dx * sum(efield * efield)
        write (*, '(a, i3, a, f12.7, a, f12.7, a, f9.5)') 'step', step, '  kinetic', ekin, &
             '  field', efld, '  max|E|', maxval(abs(efield))
     end if
  end do
  write (*, '(a, 4f10.5)') 'x(1:4) = ', x(1:4)
  write (*, '(a, f10.5, a, f10.5)') 'min v = ', minval(v), '  max v = ', maxval(v)
  write (*, '(a, i4)') 'particles right of centre: ', count(x > 0.5d0 * length)
end program pic1d
