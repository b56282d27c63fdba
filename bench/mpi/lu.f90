! Benchmark: LU factorisation without pivoting of a diagonally dominant
! N x N matrix with columns CYCLIC (as tests/corpus/lu_cyclic.f), then the
! two triangular solves. The right-hand side (a row of A per I) and the
! solves are DO nests with inner loops: the distributed fallback
! (nest_fetch.rs) runs them; the update by columns broadcasts column K.
program lu
  implicit none
  integer, parameter :: n = 1200
  double precision :: a(n, n), b(n), x(n), y(n)
  integer :: i, j, k
!HPF$ PROCESSORS P(NUMBER_OF_PROCESSORS())
!HPF$ DISTRIBUTE A(*, CYCLIC) ONTO P
!HPF$ ALIGN (:) WITH A(*, :) :: X, Y
!HPF$ ALIGN B(I) WITH X(I)
  do j = 1, n
    do i = 1, n
      a(i, j) = 1.0d0 / dble(i + j)
      if (i == j) a(i, j) = a(i, j) + dble(n)
    end do
  end do
  do i = 1, n
    b(i) = 0.0d0
    do j = 1, n
      b(i) = b(i) + a(i, j) * dble(mod(j, 10))
    end do
  end do
  do k = 1, n - 1
    do i = k + 1, n
      a(i, k) = a(i, k) / a(k, k)
    end do
!HPF$ INDEPENDENT, NEW(I)
    do j = k + 1, n
      do i = k + 1, n
        a(i, j) = a(i, j) - a(i, k) * a(k, j)
      end do
    end do
  end do
  do i = 1, n
    y(i) = b(i)
    do j = 1, i - 1
      y(i) = y(i) - a(i, j) * y(j)
    end do
  end do
  do i = n, 1, -1
    x(i) = y(i)
    do j = i + 1, n
      x(i) = x(i) - a(i, j) * x(j)
    end do
    x(i) = x(i) / a(i, i)
  end do
  print '(a, 3f14.8)', 'x(1), x(n/2), x(n) =', x(1), x(n/2), x(n)
end program lu
