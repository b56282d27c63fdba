! CYCLIC in two dimensions: (CYCLIC(3), BLOCK) through a template, with an
! alignment offset, and (CYCLIC, CYCLIC), both on a 2x2 arrangement.
! Owner-local DO nests (negative and non-unit steps, a time loop around
! them), FORALLs, element and whole-array assignments, integer, logical
! and extremum reductions and single elements run in parallel; a shifted
! read and a floating-point sum run on rank 0 on gathered copies.
program cyclic2d_mix
  implicit none
  integer, parameter :: n = 13, m = 10
  integer :: a(n, m), b(n, m), w(0:n, m), v(n + 1, m)
  real :: x(n, n), y(n, n)
  integer :: i, j, step, total
!HPF$ PROCESSORS P(2, 2)
!HPF$ TEMPLATE T(0:n, m)
!HPF$ DISTRIBUTE T(CYCLIC(3), BLOCK) ONTO P
!HPF$ ALIGN (I, J) WITH T(I, J) :: A, B, W
!HPF$ ALIGN V(I, J) WITH T(I - 1, J)
!HPF$ DISTRIBUTE (CYCLIC, CYCLIC) ONTO P :: X, Y
  a = 0
  b = 1
  do j = 1, m
    do i = 1, n
      a(i, j) = mod(7 * i + 3 * j, 11) - 5
    end do
  end do
  forall (i = 1:n, j = 1:m) b(i, j) = a(i, j) * a(i, j) + i - j
  w = -1
  do step = 1, 3
    do j = m, 1, -1
      do i = 1, n, 2
        w(i, j) = w(i, j) + a(i, j) * step - b(i, j)
      end do
    end do
  end do
  v = 7
  do j = 1, m
    do i = 2, n + 1
      v(i, j) = a(i - 1, j) + 2 * w(i - 1, j)
    end do
  end do
  a(5, 7) = 100
  b(n, m) = -100
  print *, 'sum a =', sum(a), ' max b =', maxval(b), ' min w =', minval(w)
  print *, 'count =', count(a > b), ' any =', any(w == 0), ' all =', all(b >= -100)
  print *, 'a(5,7) =', a(5, 7), ' w(0,1) =', w(0, 1), ' b(13,10) =', b(n, m), ' v(1,2) =', v(1, 2)
  print *, 'sum v =', sum(v), ' max v =', maxval(v)
  ! A read at the next cell along the CYCLIC dimension: on rank 0.
  do j = 1, m
    do i = 1, n - 1
      b(i, j) = a(i + 1, j) - b(i, j)
    end do
  end do
  print *, 'shifted =', sum(b), b(1, 1), b(n - 1, m)
  forall (i = 1:n, j = 1:n)
    x(i, j) = real(mod(i * j, 7)) / 4.0 + 0.1 * i
  end forall
  y = 2.0
  do j = 1, n
    do i = n, j, -1
      y(i, j) = x(i, j) * y(i, j) - 0.5
    end do
  end do
  x(2, 3) = -1.5
  print *, 'max x =', maxval(x), ' min y =', minval(y), ' y(n,1) =', y(n, 1)
  print *, 'sum x*y =', sum(x * y)
  total = count(y > 1.0)
  print *, 'count y > 1:', total, ' final i, j:', i, j
end program cyclic2d_mix
