! Array assignments on a (BLOCK, BLOCK) 2-D grid: sections at constant
! distances (shifted, with diagonal reads), a left side read shifted
! (array semantics), negative and stride-2 sections, a scalar subscript
! along a distributed dimension (one row at a time in a loop), arrays
! aligned at different offsets of one template, integer reductions and
! elements; INTEGER, printed whole.
program sections_block_block
  implicit none
  integer, parameter :: n = 11, m = 9
  integer :: a(n, m), b(n, m), c(0:n+1, m), i, j
!HPF$ PROCESSORS P(2, 2)
!HPF$ TEMPLATE T(0:n+1, m)
!HPF$ DISTRIBUTE T(BLOCK, BLOCK) ONTO P
!HPF$ ALIGN A(I, J) WITH T(I, J)
!HPF$ ALIGN B(I, J) WITH T(I-1, J)
!HPF$ ALIGN C(I, J) WITH T(I, J)
  do j = 1, m
    do i = 1, n
      a(i, j) = i * 10 + j
      b(i, j) = i - 3 * j
    end do
  end do
  c = 7
  a(2:n-1, 2:m-1) = b(1:n-2, 3:m) + b(3:n, 1:m-2) * 2
  print *, a
  a(2:n, :) = a(1:n-1, :)
  print *, a
  b(n:1:-1, 1:m:2) = a(n:1:-1, 1:m:2) + 1
  print *, b
  c(1:n:3, 5) = -4
  c(0:n-1, 2:m) = b(1:n, 1:m-1) - a(1:n, 2:m)
  print *, c
  b = a + b
  print *, sum(b), b(3, 4)
  ! One row or column at a time, read from the next one.
  do j = 1, n - 1
    a(j, 2:m) = a(j + 1, 1:m-1) + b(j, 2:m)
    b(2:n:2, 3) = a(1:n-1:2, 4) * 2 + b(1:n-1:2, 2)
  end do
  print *, a
  print *, b
  print *, maxval(b), count(a > b), minval(a(2:n, 2:m) - b(1:n-1, 1:m-1)), a(n, m), b(1, 1)
end program sections_block_block
