! CSHIFT and EOSHIFT by constants along the distributed dimension, read in
! place from the shifted array's shadow: positive and negative shifts by
! more than one (on five processes some own less than the shift, one owns
! nothing), EOSHIFT with and without a boundary, 1-D and 2-D, inside
! expressions of a time loop, in a whole-array assignment of the shift
! itself, in a reduction, and printed.
program shift_shadow_reads
  implicit none
  integer, parameter :: n = 16, m = 12
  real(8) :: x(n), y(n), w(n)
  real(8) :: a(m, n), b(m, n), c(m, n)
  integer :: i, j, k
  real(8) :: s
!HPF$ PROCESSORS PR(NUMBER_OF_PROCESSORS())
!HPF$ DISTRIBUTE (BLOCK) ONTO PR :: x, y, w
!HPF$ DISTRIBUTE (*, BLOCK) ONTO PR :: a, b, c
  do i = 1, n
    x(i) = mod(7 * i, 11) + 0.5d0 * i
    w(i) = i
  end do
  do j = 1, n
    do i = 1, m
      a(i, j) = mod(3 * i + 5 * j, 13) - 0.25d0 * j
      c(i, j) = i - j
    end do
  end do
  s = 0
  do k = 1, 4
    ! 1-D: a CSHIFT by 3 and by -2 of one array, EOSHIFTs with a boundary of another.
    y = 0.5d0 * (cshift(x, 3) + cshift(x, -2)) - 0.25d0 * x
    w = eoshift(y, 2, -1.0d0) + eoshift(y, -3, 2.5d0) + y
    x = y + 0.125d0 * w
    ! 2-D, along the distributed dimension, and along both.
    b = a + cshift(a, -3, 2) - cshift(a, 2, 2) + cshift(cshift(a, 1, 1), 2, 2)
    c = eoshift(b, -1, dim=2) + eoshift(b, 2, dim=2) * 0.5d0 + c * 0.25d0
    a = 0.5d0 * (a + b) - 0.125d0 * c
    s = s + sum(cshift(x, 1) * x) + sum(cshift(c, -1, 2))
  end do
  ! The shift assigned whole, and printed.
  y = cshift(x, -3)
  b = eoshift(c, 2, 9.0d0, 2)
  print '(8f12.4)', y
  print '(12f10.3)', b
  print '(8f12.4)', cshift(w, 2)
  print '(f16.4)', s
end program shift_shadow_reads
