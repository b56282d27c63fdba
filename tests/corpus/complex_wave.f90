! A free Schroedinger wave packet on a ring of COMPLEX(8) amplitudes,
! explicit steps with the three-point Laplacian (a halo of one on each
! side), its norm and centre, and a complex phase sum.
program complex_wave
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  integer, parameter :: n = 64, steps = 30
  complex(kind=dp) :: psi(0:n + 1), next(0:n + 1)
  double complex :: phase(n)
  real(dp) :: density(n), dt, norm, centre
  integer :: i, step
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE psi(BLOCK) ONTO P
!HPF$ ALIGN next(i) WITH psi(i)
!HPF$ ALIGN (i) WITH psi(i) :: phase, density

  dt = 0.05d0
  do i = 0, n + 1
    psi(i) = exp(-((i - 20) / 6.0d0)**2) * exp(cmplx(0.0d0, 0.8d0 * i, kind=dp))
  end do
  psi(0) = (0.0d0, 0.0d0)
  psi(n + 1) = (0.0d0, 0.0d0)
  next = psi
  do step = 1, steps
    do i = 1, n
      next(i) = psi(i) + cmplx(0.0d0, dt, kind=dp) * (psi(i - 1) - 2.0d0 * psi(i) + psi(i + 1))
    end do
    do i = 1, n
      psi(i) = next(i)
    end do
  end do
  do i = 1, n
    density(i) = abs(psi(i))**2
    phase(i) = psi(i) / max(abs(psi(i)), 1.0d-12)
  end do
  norm = sum(density)
  centre = 0.0d0
  do i = 1, n
    centre = centre + i * density(i)
  end do
  print '(a, f14.8)', 'norm', norm
  print '(a, f14.8)', 'centre', centre / norm
  print '(a, 2f14.8)', 'phase sum', sum(phase)
  print '(a, 2f14.8)', 'amplitude sum', sum(psi(1:n))
  print '(2f12.6)', psi(18:21)
end program complex_wave
