! Floating-point SUM and PRODUCT of whole arrays distributed by columns:
! (*, BLOCK) REAL and DOUBLE PRECISION, a 0-based first dimension, a
! rank-3 (*, *, BLOCK) PRODUCT; each process accumulates its columns in
! the sequential order along the chain; whole columns of sections too
! (`A(:, 3:11)`, reversed `D(:, M:1:-2)`). A section cutting the columns
! (`A(2:5, :)`) runs on rank 0.
program column_sums
  implicit none
  integer, parameter :: n = 7, m = 13
  real :: a(n, m), c(0:n, m), w(2, 3, m)
  double precision :: d(n, m)
  real :: s, pr
  double precision :: t
  integer :: i, j, k
!HPF$ PROCESSORS P(NUMBER_OF_PROCESSORS())
!HPF$ DISTRIBUTE A(*, BLOCK) ONTO P
!HPF$ ALIGN D(I, J) WITH A(I, J)
!HPF$ DISTRIBUTE C(*, BLOCK) ONTO P
!HPF$ DISTRIBUTE W(*, *, BLOCK) ONTO P
  do j = 1, m
    do i = 1, n
      a(i, j) = 1.0 / real(i + 3 * j) + 1.0e-7 * i
      d(i, j) = 1.0d0 / dble(i * j + 1) + 1.0d-12 * j
    end do
    do i = 0, n
      c(i, j) = real(i) * 0.1 + 1.0 / j
    end do
    do k = 1, 3
      do i = 1, 2
        w(i, k, j) = 1.0 + 1.0 / real(i + k + j)
      end do
    end do
  end do
  s = sum(a)
  t = sum(d)
  pr = product(w)
  print '(ES20.10)', s
  print '(ES25.16)', t
  print '(ES20.10)', pr
  print '(ES20.10)', sum(c)
  print '(ES20.10)', sum(a(2:5, :))
  print '(ES20.10)', sum(a(:, 3:11))
  print '(ES25.16)', sum(d(:, m:1:-2))
  print '(ES20.10)', product(w(:, :, 2:m))
end program column_sums
