! Implicit (backward Euler) vertical diffusion in many independent columns,
! as in a column physics package: the field is distributed over columns
! (*, BLOCK) and each process solves the tridiagonal systems of its own
! columns by the Thomas algorithm along the undistributed dimension.
! The solver takes the field with a prescriptive mapping, the diagnostics
! routine inherits it.
module column_physics
  implicit none
  integer, parameter :: nz = 16, ncol = 20
contains
  subroutine diffuse(t, kappa, dt)
    real(8), intent(inout) :: t(nz, ncol)
    real(8), intent(in) :: kappa(ncol), dt
!HPF$ PROCESSORS q(4)
!HPF$ DISTRIBUTE t(*, BLOCK) ONTO q
!HPF$ ALIGN kappa(j) WITH t(*, j)
    real(8) :: cp(nz), dp(nz), r, denom
    integer :: j, k
!HPF$ INDEPENDENT, NEW(cp, dp, r, denom, k)
    do j = 1, ncol
       r = kappa(j) * dt
       ! rows: -r*t(k-1) + (1+2r)*t(k) - r*t(k+1) = t_old(k); insulated ends
       cp(1) = -r / (1.0d0 + r)
       dp(1) = t(1, j) / (1.0d0 + r)
       do k = 2, nz - 1
          denom = 1.0d0 + 2.0d0 * r + r * cp(k-1)
          cp(k) = -r / denom
          dp(k) = (t(k, j) + r * dp(k-1)) / denom
       end do
       denom = 1.0d0 + r + r * cp(nz-1)
       dp(nz) = (t(nz, j) + r * dp(nz-1)) / denom
       t(nz, j) = dp(nz)
       do k = nz - 1, 1, -1
          t(k, j) = dp(k) - cp(k) * t(k+1, j)
       end do
    end do
  end subroutine diffuse

  subroutine column_stats(t, heat, top)
    real(8), intent(in) :: t(:, :)
!HPF$ INHERIT t
    real(8), intent(out) :: heat, top
    heat = sum(t)
    top = maxval(t(1, :))
  end subroutine column_stats
end module column_physics

program columns
  use column_physics
  implicit none
  real(8) :: temp(nz, ncol), kap(ncol), src(nz, ncol)
!HPF$ PROCESSORS q(4)
!HPF$ DISTRIBUTE temp(*, BLOCK) ONTO q
!HPF$ ALIGN src(k, j) WITH temp(k, j)
!HPF$ ALIGN kap(j) WITH temp(*, j)
  real(8) :: dt, heat, top
  integer :: j, k, step

  dt = 0.5d0
  forall (j = 1:ncol) kap(j) = 0.2d0 + 0.05d0 * mod(j, 7)
  forall (k = 1:nz, j = 1:ncol) temp(k, j) = 280.0d0 + 0.5d0 * (nz - k)
  src = 0.0d0
  ! surface heating on every third column
  forall (j = 1:ncol:3) src(1, j) = 2.0d0

  do step = 1, 30
     temp = temp + dt * src
     call diffuse(temp, kap, dt)
     if (mod(step, 10) == 0) then
        call column_stats(temp, heat, top)
        write (*, '(a, i3, a, f14.6, a, f11.5)') 'step', step, '  heat', heat, '  max top', top
     end if
  end do
  write (*, '(a, 4f11.5)') 'column 1, levels 1 4 8 16: ', temp(1, 1), temp(4, 1), temp(8, 1), temp(16, 1)
  write (*, '(a, 4f11.5)') 'column 2, levels 1 4 8 16: ', temp(1, 2), temp(4, 2), temp(8, 2), temp(16, 2)
  write (*, '(a, f11.5, a, f11.5)') 'bottom min ', minval(temp(nz, :)), '  bottom max ', maxval(temp(nz, :))
end program columns
