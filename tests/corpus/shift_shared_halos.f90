! Shifts of the same arrays in one statement and in consecutive statements,
! as stencil codes written with CSHIFT and EOSHIFT have them: equal shifts
! share one temporary (and one exchange), a CSHIFT along both dimensions
! reuses the shift along the distributed one, and an assignment to a shifted
! array (or to a shift amount) in between makes the next statement shift
! anew. EOSHIFTs with different boundaries are applied in the order written.
! CSHIFTs by constants along the dimension that is not distributed are read
! in sections (wrapping around at both ends, with scalars and
! elemental intrinsics around them), unless the array assigned is shifted.
program shift_shared_halos
  implicit none
  integer, parameter :: n = 9, m = 13
  real(8) :: p(n, m), u(n, m), a(n, m), b(n, m), c(n, m)
  real(8) :: x(m), y(m)
  integer :: i, j, k, s
  integer, parameter :: two = 2
!HPF$ PROCESSORS PR(NUMBER_OF_PROCESSORS())
!HPF$ DISTRIBUTE (*, BLOCK) ONTO PR :: p, u, a, b, c
!HPF$ DISTRIBUTE (BLOCK) ONTO PR :: x, y
  do j = 1, m
    do i = 1, n
      p(i, j) = mod(7 * i + 3 * j, 11) + 0.25d0 * i
      u(i, j) = mod(5 * i + j * j, 13) - 0.5d0 * j
    end do
  end do
  do j = 1, m
    x(j) = j * j - 3 * j
  end do
  s = 2
  do k = 1, 3
    a = p + cshift(p, -1, 2) + cshift(cshift(p, -1, 1), -1, 2)
    b = cshift(p, -1, 2) * u - cshift(cshift(p, -1, 2), -1, 1)
    c = cshift(u, 1, 2) + cshift(cshift(u, 1, 1), 1, 2)
    ! u is written: its shift below is taken anew.
    u = u + 0.125d0 * (a - b)
    c = c - cshift(u, 1, 2) + cshift(p, s, 2)
    ! So is the shift by s once s changes.
    s = s + 1
    c = c + cshift(p, s, 2)
    a = eoshift(eoshift(p, 1, 2.0d0, 1), -2, -1.0d0, 2) + eoshift(p, -2, -1.0d0, 2)
    b = eoshift(eoshift(p, -2, -1.0d0, 2), 1, 2.0d0, 1)
    where (cshift(a, 1, 2) > b) c = c + cshift(a, 1, 2)
    y = cshift(x, 3) - eoshift(x, -1) + cshift(x, 3) * 0.5d0
    x = y
    p = p + 0.01d0 * c
    b = 0.5d0 * (cshift(p, 1, 1) - cshift(p, -two, 1)) + max(u, cshift(cshift(u, 1, 2), -1, 1)) + s
    a = abs(cshift(b, n - 1, 1)) + sqrt(abs(cshift(cshift(c, -3, 1), 2, 2))) * dble(k)
    u = u - 0.25d0 * cshift(u, 1, 1)
  end do
  print '(9f11.4)', p
  print '(9f11.4)', u
  print '(9f11.4)', a
  print '(9f11.4)', b
  print '(9f11.4)', c
  print '(13f9.2)', y
end program shift_shared_halos
