! Where the extremes are: MAXLOC and MINLOC without DIM of distributed
! arrays of rank 1 to 3 ((*, BLOCK), (BLOCK, *), (*, *, BLOCK), BLOCK),
! whole, as sections, strided, of expressions, with a MASK (an empty one
! too), into replicated position arrays and in output. Every process finds
! its part's first extreme; the smallest position in array element order
! among equal values wins, as the sequential intrinsic's first one.
program peak_locations
  implicit none
  integer, parameter :: n = 23, m = 17
  integer :: a(n, m), b(n, m), c(n, m, 3), i, j, k, l2(2), l1(1), l3(3)
  real(8) :: x(n), y(n, m)
!hpf$ distribute a(*, block)
!hpf$ distribute b(block, *)
!hpf$ distribute c(*, *, block)
!hpf$ distribute (block) :: x
!hpf$ align y(i, j) with b(i, j)
  do j = 1, m
    do i = 1, n
      a(i, j) = mod(i * 7 + j * 13, 19)
    end do
  end do
  do j = 1, m
    do i = 1, n
      b(i, j) = mod(i * 5 + j * 3, 11)
      y(i, j) = sin(0.3d0 * i) * cos(0.2d0 * j)
    end do
  end do
  do k = 1, 3
    do j = 1, m
      do i = 1, n
        c(i, j, k) = mod(i + j * k, 9)
      end do
    end do
  end do
  do i = 1, n
    x(i) = cos(0.7d0 * i)
  end do
  l2 = maxloc(a)
  print *, 'maxloc a', l2
  l2 = minloc(a)
  print *, 'minloc a', l2
  l2 = maxloc(b)
  print *, 'maxloc b', l2
  l2 = minloc(b(3:n-2, 2:m))
  print *, 'minloc b section', l2
  l2 = maxloc(a, mask=a < 10)
  print *, 'maxloc a masked', l2
  l2 = maxloc(abs(y))
  print *, 'maxloc |y|', l2
  l2 = maxloc(b, mask=b > 100)
  print *, 'empty mask', l2
  l1 = maxloc(x)
  print *, 'maxloc x', l1
  l1 = minloc(x(2:n:3))
  print *, 'minloc x strided', l1
  l3 = maxloc(c)
  print *, 'maxloc c', l3
  l3 = minloc(c(2:n, :, 2:3))
  print *, 'minloc c section', l3
  print *, maxloc(a(:, 5:m))
end program peak_locations
