! Triangular nests: a lower-triangular matrix-vector product with the
! matrix's columns dealt out CYCLIC (X and Y with them), and the
! upper triangle of S (rows CYCLIC) accumulated from the transpose of T,
! distributed by columns.
program triangular_nest
  implicit none
  integer, parameter :: n = 20
  double precision :: l(n, n), x(n), y(n), s(n, n), t(n, n)
  integer :: i, j
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE L(*, CYCLIC) ONTO P
!HPF$ ALIGN (:) WITH L(*, :) :: X, Y
!HPF$ DISTRIBUTE S(CYCLIC, *) ONTO P
!HPF$ DISTRIBUTE T(*, BLOCK) ONTO P
  forall (i = 1:n, j = 1:n) l(i, j) = 1.0d0 / dble(i + j - 1)
  forall (i = 1:n) x(i) = dble(mod(3 * i, 7)) - 2.0d0
  forall (i = 1:n, j = 1:n) t(i, j) = dble(i - 2 * j)
  s = 1.0d0
  do i = 1, n
    y(i) = 0.0d0
    do j = 1, i
      y(i) = y(i) + l(i, j) * x(j)
    end do
  end do
  do i = 1, n
    do j = i, n
      s(i, j) = s(i, j) + t(j, i) * dble(j - i + 1)
    end do
  end do
  print '(a, 4f14.8)', 'y(1:4) =', y(1:4)
  print '(a, f16.8)', 'sum(y) =', sum(y)
  print '(a, 3f10.1)', 's(1,n), s(n,n), s(n,1) =', s(1, n), s(n, n), s(n, 1)
  print '(a, f12.1)', 'sum(s) =', sum(s)
end program triangular_nest
