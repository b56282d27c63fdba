! Pivot searches with MAXLOC and MINLOC on BLOCK-distributed vectors and
! (BLOCK, *) and (*, CYCLIC) matrices: in assignments and expressions (`ipiv = maxloc(abs(
! x(k:n)), 1) + k - 1`), with DIM and MASK, on sections with a stride,
! with ties (the first position wins, as in the sequential program) and on
! an empty section (0).
program maxloc_pivot
  implicit none
  integer, parameter :: n = 17
  double precision :: x(n), a(n, 4), c(6, 5)
  real :: r(n)
  integer :: k(n), i, j, ipiv, lo, hi
  integer :: found(4)
!HPF$ DISTRIBUTE (BLOCK) :: x, r, k
!HPF$ DISTRIBUTE (BLOCK, *) :: a
!HPF$ DISTRIBUTE c(*, CYCLIC)
  do i = 1, n
    x(i) = mod(7 * i, 11) - 5.d0
    r(i) = real(mod(3 * i, 5))
    k(i) = mod(5 * i, 7)
  end do
  forall (i = 1:n, j = 1:4) a(i, j) = mod(i * j + 3, 13) * 0.5d0
  do lo = 1, n, 4
    ipiv = maxloc(abs(x(lo:n)), 1) + lo - 1
    print '(a, 2i4, f8.2)', ' pivot', lo, ipiv, x(ipiv)
  end do
  ! Ties: the first of the largest and of the smallest.
  print *, maxloc(r, 1), minloc(r, 1), maxloc(k, dim=1), minloc(k, 1)
  print *, maxloc(k, 1, mask=k < 6), minloc(x, 1, x > 0.d0), maxloc(x(n:1:-2), 1)
  hi = 0
  print *, maxloc(x(1:hi), 1), minloc(k(3:hi), 1, k(3:hi) > 0)
  do j = 1, 4
    found(j) = maxloc(a(:, j), 1) - minloc(a(2:n-1, j), 1)
  end do
  print '(4i5)', found
  ! The pivot column of a matrix distributed by columns, on its owner.
  forall (i = 1:6, j = 1:5) c(i, j) = mod(i * 5 + j * 3, 7) - 3.d0
  do j = 1, 5
    ipiv = maxloc(abs(c(j:6, j)), 1) + j - 1
    print '(2i3)', j, ipiv
  end do
  do lo = 2, n - 1, 5
    if (maxloc(x(lo:n), 1) > 3) then
      print *, 'far', lo
    end if
  end do
end program maxloc_pivot
