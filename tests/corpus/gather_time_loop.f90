! Irregular 2-D gathers inside time loops, as in unstructured-mesh codes: the
! rows of C that each row of B reads go through index arrays. IDX is set
! once, so the schedule of its gather is computed in the first step and
! reused (only the values move again); PERM is rotated every step, so its
! gather inspects again each time. A and B are (BLOCK, BLOCK), C is
! (CYCLIC, BLOCK) on a 2x2 arrangement. The second time loop is an
! uncounted DO that ends by an EXIT.
program gather_time_loop
  implicit none
  integer, parameter :: n = 24, m = 6, steps = 5
  real :: a(n, m), b(n, m), c(n, m)
  integer :: idx(n), perm(n), i, j, t, first
!HPF$ PROCESSORS P(2, 2)
!HPF$ DISTRIBUTE A(BLOCK, BLOCK) ONTO P
!HPF$ ALIGN B(I, J) WITH A(I, J)
!HPF$ DISTRIBUTE C(CYCLIC, BLOCK) ONTO P
  do i = 1, n
    idx(i) = mod(7 * i, n) + 1
    perm(i) = n + 1 - i
  end do
  forall (i = 1:n, j = 1:m) a(i, j) = real(i) + 0.25 * real(j)
  forall (i = 1:n, j = 1:m) c(i, j) = real(100 * j + i)
  b = 0.0
  do t = 1, steps
    ! The same rows every step: inspected once.
    do j = 1, m
      do i = 1, n
        b(i, j) = 0.5 * b(i, j) + a(i, j) + 0.125 * c(idx(i), j)
      end do
    end do
    c = c * 0.5 + 1.0
    ! Other rows every step: inspected every step.
    first = perm(1)
    do i = 1, n - 1
      perm(i) = perm(i + 1)
    end do
    perm(n) = first
    do j = 1, m
      do i = 1, n
        a(i, j) = 0.75 * a(i, j) + 0.25 * c(perm(i), m + 1 - j)
      end do
    end do
    print '(a, i2, 2f12.4)', 'step', t, b(1, 1), a(n, m)
  end do
  t = 0
  do
    t = t + 1
    if (t > 3) exit
    do j = 2, m
      do i = 1, n
        b(i, j) = b(i, j) - 0.5 * c(idx(n + 1 - i), j - 1)
      end do
    end do
    c = c - 2.0
  end do
  print '(a, 6f10.3)', 'b(1,:) =', b(1, :)
  print '(a, 6f10.3)', 'b(n,:) =', b(n, :)
  print '(a, 2f14.3)', 'sums =', sum(a), sum(b)
end program gather_time_loop
