! FORALLs that no shift or aligned-read rule plans: masks (one of them
! guarding an index that would leave the array), reversed, strided and
! indirect reads of the array they assign and of arrays distributed
! differently, FORALL constructs whose assignments read what the ones
! before them assigned, FORALLs of two and three indices on a (BLOCK,
! BLOCK) grid and a 3-D array. Each runs on the owners of its left side
! after fetching what it reads (an inspector/executor).
program forall_fallback
  implicit none
  integer, parameter :: n = 20, m = 9
  integer :: i, j, l, idx(n), k(n), w(n)
  real :: x(n), y(n), z(n), v(n), c(6, 5, 4)
  integer :: g(m, m), h(m, m)
!HPF$ PROCESSORS P(4)
!HPF$ PROCESSORS Q(2, 2)
!HPF$ DISTRIBUTE (BLOCK) ONTO P :: X, W
!HPF$ ALIGN V(I) WITH X(I)
!HPF$ DISTRIBUTE Y(CYCLIC) ONTO P
!HPF$ DISTRIBUTE Z(CYCLIC(3)) ONTO P
!HPF$ DISTRIBUTE C(*, *, BLOCK) ONTO P
!HPF$ DISTRIBUTE (BLOCK, BLOCK) ONTO Q :: G, H
  do i = 1, n
    x(i) = real(mod(7 * i, 13)) - 6.0
    y(i) = real(i) / 4.0
    z(i) = real(n - i) * 0.5
    idx(i) = mod(5 * i, n) + 1
    k(i) = mod(3 * i, 11) - 2
    w(i) = mod(3 * i, 7) - 3
    v(i) = real(i)
  end do
  do j = 1, m
    do i = 1, m
      g(i, j) = i + 10 * j
      h(i, j) = mod(i * j, 5)
    end do
  end do
  c = 1.0
  ! Reversed, masked by its own elements.
  forall (i = 1:n, x(i) > 0.0) x(i) = x(n + 1 - i) + y(i)
  print '(a, 20f7.2)', 'x =', x
  ! A negative stride reading itself and a CYCLIC array at other strides.
  forall (i = n:2:-2, w(i) /= 0) x(i) = x(i - 1) * 2.0 - y(n + 2 - i)
  print '(a, 20f7.2)', 'x =', x
  ! Indirect reads of itself (CYCLIC(3)) and of a BLOCK array.
  forall (i = 1:n, idx(i) > 3) z(i) = x(idx(i)) + z(idx(n + 1 - i))
  print '(a, 20f7.2)', 'z =', z
  ! A replicated mask keeping an indirect subscript inside the array.
  forall (i = 1:n, k(i) >= 1 .and. k(i) <= n) y(i) = y(k(i)) + 1.0
  print '(a, 20f7.2)', 'y =', y
  ! A distributed mask keeping a subscript inside the array.
  forall (i = 1:n, x(n + 1 - i) > 0.0 .and. i > 2) w(i) = w(i - 2) + int(x(n + 1 - i))
  print '(a, 20i4)', 'w =', w
  ! A construct: the second assignment reads what the first assigned.
  forall (i = 2:n - 1)
    x(i) = y(n + 1 - i) + z(i)
    y(i) = x(i - 1) + x(i + 1)
  end forall
  print '(a, 20f7.2)', 'x =', x
  print '(a, 20f7.2)', 'y =', y
  ! A masked construct, indirect reads of itself.
  forall (i = 1:n, idx(i) <= n / 2)
    w(i) = w(idx(i)) + 1
    x(i) = real(w(i)) + x(n + 1 - i)
  end forall
  print '(a, 20i4)', 'w =', w
  print '(a, 20f7.2)', 'x =', x
  ! A masked construct of one home: the second assignment reads what the
  ! first assigned (indirectly), after it assigned it.
  forall (i = 1:n, idx(i) <= n / 2)
    x(i) = real(w(idx(i))) + x(n + 1 - i)
    v(i) = x(idx(i)) * 0.5 + v(n + 1 - i)
  end forall
  print '(a, 20f7.2)', 'x =', x
  print '(a, 20f7.2)', 'v =', v
  ! Two indices on a (BLOCK, BLOCK) grid: transposed and reversed reads.
  forall (i = 1:m, j = 1:m, mod(i + j, 3) /= 0) g(i, j) = g(j, i) + h(m + 1 - i, j)
  forall (i = 1:m, j = m:1:-2) h(i, j) = g(i, m + 1 - j) * 2 - h(j, i)
  print '(a / (9i5))', 'g =', g
  print '(a / (9i5))', 'h =', h
  ! Three indices.
  forall (i = 1:6, j = 1:5, l = 1:4, i /= j) c(i, j, l) = c(7 - i, j, 5 - l) + real(i * j + l)
  forall (i = 1:6:2, j = 5:1:-1, l = 1:4) c(i, j, l) = c(i + 1, 6 - j, 5 - l) * 0.5
  print '(a / (10f6.1))', 'c =', c
  ! A time loop: the mask reads elements the loop changes (inspected
  ! again in every step), the indirect read keeps its schedule otherwise.
  do l = 1, 3
    forall (i = 1:n, z(i) < 4.0) z(i) = z(idx(i)) * 0.5 + y(n + 1 - i)
    z(1:n) = z(1:n) - 1.0
  end do
  print '(a, 20f7.2)', 'z =', z
end program forall_fallback
