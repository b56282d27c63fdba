! Sections that DO nests assign at their indices inside procedures: a
! module subroutine on module arrays, an internal subroutine on its host's
! arrays, an external subroutine on distributed dummies, a module function
! that assigns sections of a module array and returns a reduction, and a
! recurrence along the non-distributed dimension of a (BLOCK, BLOCK, *)
! field.
module flow
  implicit none
  integer, parameter :: nc = 4, nx = 7, ny = 6, nz = 10
  double precision :: u(nc, nx, ny, nz), r(nc, nx, ny, nz)
  double precision :: q(nx, ny, nz)
  double precision, parameter :: c0 = 0.01d0
!HPF$ PROCESSORS P(4)
!HPF$ PROCESSORS G(2, 2)
!HPF$ DISTRIBUTE u(*, *, *, BLOCK) ONTO P
!HPF$ ALIGN r(:, :, :, :) WITH u(:, :, :, :)
!HPF$ DISTRIBUTE q(BLOCK, BLOCK, *) ONTO G
contains
  subroutine residual(c)
    double precision, intent(in) :: c(nc)
    integer :: i, j, k
    do k = 2, nz - 1
      do j = 2, ny - 1
        do i = 2, nx - 1
          r(:, i, j, k) = u(:, i, j, k+1) - 2.0d0 * u(:, i, j, k) + u(:, i, j, k-1) &
               + c * (u(:, i+1, j, k) - u(:, i-1, j, k))
        end do
      end do
    end do
  end subroutine residual

  subroutine sweep(alpha)
    double precision, intent(in) :: alpha
    integer :: k
    do k = 2, nz
      q(:, :, k) = q(:, :, k) + alpha * q(:, :, k-1)
    end do
    do k = nz - 1, 1, -1
      q(2:nx-1, :, k) = q(2:nx-1, :, k) - 0.25d0 * q(2:nx-1, :, k+1) * alpha
    end do
  end subroutine sweep

  double precision function damped(f)
    double precision, intent(in) :: f
    integer :: i, j, k
    do k = 1, nz
      do j = 1, ny
        do i = 1, nx
          r(:, i, j, k) = r(:, i, j, k) * f + c0
        end do
      end do
    end do
    damped = sum(r)
  end function damped
end module flow

subroutine relax(v, w, n, factor)
  implicit none
  integer, intent(in) :: n
  double precision, intent(inout) :: v(4, 7, 6, 10)
  double precision, intent(in) :: w(4, 7, 6, 10), factor
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE v(*, *, *, BLOCK) ONTO P
!HPF$ DISTRIBUTE w(*, *, *, BLOCK) ONTO P
  integer :: j, k
  do k = 2, n - 1
    do j = 1, 6
      v(:, :, j, k) = v(:, :, j, k) + factor * w(:, :, j, k)
    end do
  end do
end subroutine relax

program section_procedures
  use flow
  implicit none
  interface
    subroutine relax(v, w, n, factor)
      integer, intent(in) :: n
      double precision, intent(inout) :: v(4, 7, 6, 10)
      double precision, intent(in) :: w(4, 7, 6, 10), factor
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE v(*, *, *, BLOCK) ONTO P
!HPF$ DISTRIBUTE w(*, *, *, BLOCK) ONTO P
    end subroutine relax
  end interface
  double precision :: coef(nc)
  integer :: i, j, k, m, step
  do m = 1, nc
    coef(m) = 1.0d0 / dble(m + 1)
  end do
  call fill()
  do step = 1, 3
    call residual(coef)
    call relax(u, r, nz, 0.1d0)
    call sweep(0.5d0)
  end do
  print '(a, es24.15)', 'damped =', damped(0.75d0)
  print '(a, es24.15)', 'sum(u) =', sum(u)
  print '(a, es24.15)', 'sum(r) =', sum(r)
  print '(a, 4f12.6)', 'u(:, 3, 3, 5) =', u(:, 3, 3, 5)
  print '(a, es24.15)', 'sum(q) =', sum(q)
  print '(a, 6f12.6)', 'q(3, :, 10) =', q(3, :, 10)
contains
  subroutine fill()
    do k = 1, nz
      do j = 1, ny
        do i = 1, nx
          u(:, i, j, k) = coef * dble(mod(i + 2 * j + 3 * k, 9)) + 1.0d0
          r(:, i, j, k) = 0.0d0
          q(i, j, k) = dble(mod(i * 3 + j * 5 + k, 11)) * 0.1d0
        end do
      end do
    end do
  end subroutine fill
end program section_procedures
