! A TEMPLATE distributed CYCLIC(3), arrays aligned with it at offsets, and a
! rank-2 array whose second dimension is CYCLIC: owner-computes loop nests
! (the distributed loop outermost), a time loop whose stencil reads
! neighbours on other processes (on rank 0), whole-array and element
! assignments.
program cyclic_template
  implicit none
  integer, parameter :: n = 17, m = 5
  real :: u(0:n+1), v(0:n+1), w(1:n+2)
  integer :: g(m, n), i, j, step
!HPF$ PROCESSORS P(3)
!HPF$ TEMPLATE T(0:N+1)
!HPF$ DISTRIBUTE T(CYCLIC(3)) ONTO P
!HPF$ ALIGN (I) WITH T(I) :: U, V
!HPF$ ALIGN W(I) WITH T(I-1)
!HPF$ DISTRIBUTE G(*, CYCLIC) ONTO P
  u = 0.0
  v = 1.0
  do i = 0, n + 1
    u(i) = real(mod(3 * i, 7))
    w(i + 1) = u(i) * 0.5
  end do
  do j = 1, n
    do i = 1, m
      g(i, j) = i * 100 + j
    end do
  end do
  do j = n, 1, -2
    do i = 2, m
      g(i, j) = g(i, j) - g(i - 1, j)
    end do
  end do
  do step = 1, 3
    do i = 1, n
      v(i) = u(i) + 0.25 * (u(i - 1) - 2.0 * u(i) + u(i + 1))
    end do
    do i = 1, n
      u(i) = v(i) + w(i + 1)
    end do
  end do
  ! W(I+1) lives where U(I) does: this loop runs on the owners.
  do i = 0, n
    v(i) = u(i) * 2.0 - w(i + 1)
  end do
  u(n + 1) = 42.0
  g(2, 5) = -7
  print '(a, 4f12.5)', ' u(1:4) =', u(1:4)
  print '(a, 2f14.5)', ' sum(v), u(n+1) =', sum(v), u(n + 1)
  print '(a, f14.5)', ' sum(u) =', sum(u)
  print *, 'g(:, 1) =', g(:, 1)
  print *, 'g(3, 16), sum(g) =', g(3, 16), sum(g)
  print *, 'w(n+2) =', w(n + 2)
end program cyclic_template
