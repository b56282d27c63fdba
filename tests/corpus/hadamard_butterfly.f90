! Fast Walsh-Hadamard transform by radix-2 butterflies on a CYCLIC
! distribution (the butterfly partners of stage h are h apart: for h below
! the process count they live on other processes, above it on the same
! one), then a spectral filter and the inverse transform.
program hadamard
  implicit none
  integer, parameter :: logn = 6, n = 2**logn
  real(8) :: x(0:n-1), y(0:n-1), orig(0:n-1)
!HPF$ PROCESSORS p(4)
!HPF$ TEMPLATE t(0:n-1)
!HPF$ DISTRIBUTE t(CYCLIC) ONTO p
!HPF$ ALIGN (i) WITH t(i) :: x, y, orig
  integer :: i, h, k, j, stage
  real(8) :: energy_x, energy_s, cutoff

  ! a square wave plus a ramp
  forall (i = 0:n-1) x(i) = merge(1.0d0, -1.0d0, mod(i / 8, 2) == 0) + 0.125d0 * i
  orig = x
  energy_x = sum(x * x)

  call fwht(x)
  energy_s = sum(x * x) / n
  write (*, '(a, 2f14.6)') 'Parseval: ', energy_x, energy_s
  write (*, '(a, 8f9.3)') 'spectrum(0:7) = ', x(0:7)
  write (*, '(a, f10.3, a, i3)') 'largest coefficient ', maxval(abs(x(1:))), ' at ', maxloc(abs(x(1:)))

  ! keep the coefficients above a cutoff, transform back
  cutoff = 0.1d0 * maxval(abs(x))
  where (abs(x) < cutoff) x = 0.0d0
  write (*, '(a, i4)') 'kept coefficients: ', count(x /= 0.0d0)
  call fwht(x)
  x = x / n
  write (*, '(a, f12.6)') 'filter error (max) = ', maxval(abs(x - orig))
  write (*, '(a, 4f10.4)') 'x(0), x(9), x(31), x(63) = ', x(0), x(9), x(31), x(63)

contains

  subroutine fwht(a)
    real(8), intent(inout) :: a(0:n-1)
!HPF$ INHERIT a
    real(8) :: b(0:n-1)
!HPF$ ALIGN b(i) WITH a(i)
    integer :: i, h
    h = 1
    do while (h < n)
!HPF$ INDEPENDENT
       do i = 0, n-1
          if (iand(i, h) == 0) then
             b(i) = a(i) + a(i + h)
          else
             b(i) = a(i - h) - a(i)
          end if
       end do
       a = b
       h = 2 * h
    end do
  end subroutine fwht
end program hadamard
