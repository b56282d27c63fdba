! Fields renormalised inside procedures, the way models split a time step
! into subroutines: a module holds the fields and the procedures; they take
! distributed dummies (INHERIT, or their own DISTRIBUTE/ALIGN) and use the
! module's arrays, and centre, scale and project the fields with SUM, MAXVAL,
! MINVAL and DOT_PRODUCT inside array assignments and WHEREs. Each reduction
! is computed first into a scalar by every process in the procedure's copy
! that every process runs, the assignment by the owners (issue 27). A weight
! vector of run-time length n multiplies a section `z(2:n+1)`: each process
! reads the part of it that goes with its own elements.
module normalise
  implicit none
  integer, parameter :: nx = 48
  real(8) :: temp(nx), salt(nx), wind(nx)
!hpf$ distribute temp(block)
!hpf$ align salt(i) with temp(i)
!hpf$ align wind(i) with temp(i)
contains
  ! The mean taken out of a field passed in (any BLOCK mapping).
  subroutine centre(f)
    real(8), intent(inout) :: f(nx)
!hpf$ inherit f
    f = f - sum(f) / nx
  end subroutine centre

  ! Module arrays scaled by their largest magnitude; a WHERE clips the
  ! salinity above half its maximum and lifts the rest by its minimum.
  subroutine rescale()
    temp = temp / maxval(abs(temp)) + 0.125d0 * salt
    where (salt > 0.5d0 * maxval(salt))
      salt = salt - 0.25d0 * minval(salt)
    elsewhere
      salt = salt + 0.5d0 * maxval(abs(temp))
    end where
  end subroutine rescale

  ! The part of g along h taken out (a Gram-Schmidt step), on dummies
  ! with their own mapping.
  subroutine project(g, h)
    real(8), intent(inout) :: g(nx)
    real(8), intent(in) :: h(nx)
!hpf$ distribute g(block)
!hpf$ align h(i) with g(i)
    g = g - dot_product(g, h) / dot_product(h, h) * h
    g(2:nx-1) = g(2:nx-1) + 0.0625d0 * sum(wind) / nx
  end subroutine project

  ! A section of run-time extent n scaled by a replicated weight of length n.
  subroutine weigh(z, w, n)
    integer, intent(in) :: n
    real(8), intent(inout) :: z(nx)
    real(8), intent(in) :: w(n)
!hpf$ inherit z
    z(2:n+1) = z(2:n+1) * w
  end subroutine weigh
end module normalise

program normalised_procedures
  use normalise
  implicit none
  real(8) :: weights(nx)
  integer :: i, step, n
  do i = 1, nx
    temp(i) = dble(mod(i * 7, 11)) - 3.0d0
    salt(i) = dble(mod(i * 5, 13)) * 0.25d0 + 1.0d0
    wind(i) = dble(i) * 0.5d0
    weights(i) = 1.0d0 + dble(mod(i, 4)) * 0.125d0
  end do
  n = nx - 8
  do step = 1, 4
    call centre(temp)
    call rescale()
    call project(wind, salt)
    call centre(wind)
    call weigh(temp, weights, n)
    call weigh(salt, weights(5:nx), n)
  end do
  print '(4f14.8)', temp(1:8)
  print '(4f14.8)', temp(nx-7:nx)
  print '(4f14.8)', salt(1:8)
  print '(4f14.8)', wind(1:8)
  print '(f18.10)', sum(temp), sum(salt), sum(abs(wind))
end program normalised_procedures
