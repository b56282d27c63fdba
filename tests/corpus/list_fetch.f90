! The DO-nest fallback fetches lists of the elements read where a box would
! hold many it does not read: a back substitution (a triangle and a
! diagonal read into a replicated X), a strided read of a rank-3 array and
! an irregular gather in a time loop (the schedule computed once).
program list_fetch
  implicit none
  integer, parameter :: n = 9
  double precision :: a(n, n + 1), x(n), u(n, 4, 3), w(n, 4)
  integer :: idx(n), i, j, k, t
!HPF$ DISTRIBUTE a(*, CYCLIC)
!HPF$ DISTRIBUTE u(BLOCK, *, *)
!HPF$ DISTRIBUTE w(CYCLIC, *)
  do j = 1, n + 1
    do i = 1, n
      a(i, j) = dble(mod(i * 7 + j * 3, 11)) + merge(20.0d0, 0.0d0, i == j)
    end do
  end do
  do k = 1, 3
    do j = 1, 4
      do i = 1, n
        u(i, j, k) = dble(i + 10 * j + 100 * k)
      end do
    end do
  end do
  do i = 1, n
    idx(i) = mod(4 * i, n) + 1
  end do
  do i = n, 1, -1
    x(i) = a(i, n + 1)
    do j = i + 1, n
      x(i) = x(i) - a(i, j) * x(j)
    end do
    x(i) = x(i) / a(i, i)
  end do
  w = 0.0d0
  do t = 1, 3
    do j = 1, 4
      do i = 1, n
        w(i, j) = w(i, j) + u(idx(i), j, t) + u(n + 1 - i, 5 - j, 2)
      end do
    end do
    do j = 1, 4
      do i = 1, n, 2
        w(i, j) = w(i, j) + 0.5d0 * u(i, j, 2 * (t / 2) + 1)
      end do
    end do
  end do
  print '(3es24.15)', x
  print '(4f12.3)', w
end program list_fetch
