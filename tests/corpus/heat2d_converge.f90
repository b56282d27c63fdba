! Steady 2-D heat conduction on a plate: Jacobi iteration until the largest
! update falls below a tolerance, with a progress line every NPRINT sweeps.
! Parameters live in a module; the fields are distributed (BLOCK, BLOCK)
! over a 2x2 grid of processors.
module heat_params
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  integer, parameter :: nx = 24, ny = 20
  real(dp), parameter :: tol = 1.0d-3
  integer, parameter :: maxit = 400, nprint = 50
end module heat_params

program heat2d
  use heat_params
  implicit none
  real(dp) :: t(0:nx+1, 0:ny+1), tnew(0:nx+1, 0:ny+1)
  logical :: hot(0:nx+1, 0:ny+1)
!HPF$ PROCESSORS grid(2, 2)
!HPF$ DISTRIBUTE (BLOCK, BLOCK) ONTO grid :: t, tnew
!HPF$ ALIGN hot(i, j) WITH t(i, j)
  real(dp) :: err, total
  integer :: i, j, it, nhot

  ! boundary conditions: hot left wall, a linear profile on the top wall
  t = 0.0_dp
  t(0, :) = 100.0_dp
  forall (i = 1:nx) t(i, ny+1) = 50.0_dp * real(i, dp) / real(nx, dp)
  tnew = t

  err = 1.0_dp
  it = 0
  do while (err > tol .and. it < maxit)
     it = it + 1
!HPF$ INDEPENDENT, NEW(i)
     do j = 1, ny
        do i = 1, nx
           tnew(i, j) = 0.25_dp * (t(i-1, j) + t(i+1, j) + t(i, j-1) + t(i, j+1))
        end do
     end do
     err = maxval(abs(tnew(1:nx, 1:ny) - t(1:nx, 1:ny)))
     t(1:nx, 1:ny) = tnew(1:nx, 1:ny)
     if (mod(it, nprint) == 0) then
        write (*, '(a, i5, a, es12.4, a, f10.4)') 'it = ', it, '  err = ', err, &
             '  t(mid) = ', t(nx/2, ny/2)
     end if
  end do

  hot = t > 25.0_dp
  nhot = count(hot(1:nx, 1:ny))
  total = sum(t(1:nx, 1:ny))
  write (*, '(a, i5, a, es12.4)') 'stopped after ', it, ' sweeps, err = ', err
  write (*, '(a, f14.6)') 'mean interior temperature = ', total / real(nx*ny, dp)
  write (*, '(a, 6f9.3)') 'row ny/2: ', (t(i, ny/2), i = 2, nx, 4)
  write (*, '(a, f9.3, a, f9.3)') 'max = ', maxval(t(1:nx, 1:ny)), '  min = ', minval(t(1:nx, 1:ny))
  write (*, '(a, i4, a, 2i4)') 'cells above 25: ', nhot, '  hottest at ', maxloc(t(1:nx, 1:ny))
end program heat2d
