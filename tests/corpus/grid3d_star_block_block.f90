! A rank-3 array distributed (*, BLOCK, BLOCK(5)) onto P(2,2): the first
! dimension stays local. A DO nest over all three dimensions reading
! diagonal neighbours in the distributed ones (and a permuted index in the
! local one), a three-index FORALL, a section assignment with a whole
! local dimension, reductions and elements; INTEGER.
program grid3d_star_block_block
  implicit none
  integer, parameter :: n = 9, m = 8, q = 3
  integer :: a(q, n, m), b(q, n, m), i, j, l
!HPF$ PROCESSORS P(2, 2)
!HPF$ DISTRIBUTE (*, BLOCK, BLOCK(5)) ONTO P :: A, B
  do j = 1, m
    do i = 1, n
      do l = 1, q
        a(l, i, j) = l + 10 * i + 100 * j
      end do
    end do
  end do
  b = 0
  do j = 2, m - 1
    do i = 2, n - 1
      do l = 1, q
        b(l, i, j) = a(l, i-1, j+1) + a(mod(l, q) + 1, i+1, j-1) - a(l, i, j)
      end do
    end do
  end do
  forall (l = 1:q, i = 1:n, j = 2:m) a(l, i, j) = b(l, i, j-1) * 2
  a(:, 2:n, 1) = b(:, 1:n-1, 2) + 1
  print *, a
  print *, b(2, :, :)
  print *, sum(a), maxval(b), a(2, 3, 4), count(b > 500)
end program grid3d_star_block_block
