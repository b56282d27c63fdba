! CYCLIC and CYCLIC(2) distributions given directly: owner-computes DO loops
! over each process's elements (also with a negative and a non-unit step), a
! read at other elements (fetched before the loop by the inspector/executor),
! reductions and single elements in output.
program cyclic_basic
  implicit none
  integer, parameter :: n = 23
  real :: a(n), b(n)
  integer :: k(n), i
  double precision :: d(n)
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE A(CYCLIC) ONTO P
!HPF$ ALIGN B(I) WITH A(I)
!HPF$ DISTRIBUTE (CYCLIC(2)) ONTO P :: K, D
  do i = 1, n
    a(i) = real(i) / 8.0
  end do
  b = 0.0
  do i = n, 1, -1
    k(i) = mod(5 * i, 11) - 4
  end do
  do i = n, 1, -1
    d(i) = 1.0d0 / dble(i)
  end do
  do i = 2, n, 3
    b(i) = a(i) * a(i) + 1.0
  end do
  do i = n - 1, 1, -4
    k(i) = k(i) * 2
  end do
  do i = 1, n - 1
    d(i) = d(i) + dble(k(i))
  end do
  ! B(I+1) lives on another process: fetched before the loop (inspector/executor).
  do i = 1, n - 1
    a(i) = b(i + 1) - a(i)
  end do
  print *, 'a(1), a(n) =', a(1), a(n)
  print *, 'sum(b) =', sum(b)
  print *, 'k =', k
  print *, 'maxval(k), count(k > 0) =', maxval(k), count(k > 0)
  print '(a, f16.10)', ' sum(d) =', sum(d)
  print '(a, 3f10.5)', ' d(1:3) =', d(1:3)
end program cyclic_basic
