! Arrays aligned at different offsets with a template cut (BLOCK, CYCLIC(2))
! on a 2x2 arrangement (run on 1 to 5 processes, so also on grids that are
! not 2x2), and a 1-D CYCLIC(3) template with offsets. DO nests that no
! other rule plans run on the owners of their left sides: a read of another
! array at the same indices lies on another template cell (fetched), a read
! at the indices that compensate the offsets lies on the same cell (local).
program grid_cyclic_offsets
  implicit none
  integer, parameter :: n = 9, m = 10
  integer :: a(n, m), b(n, m), x(20), y(20), i, j, k
!HPF$ PROCESSORS P(2, 2)
!HPF$ TEMPLATE T(1:n + 1, 1:m)
!HPF$ DISTRIBUTE T(BLOCK, CYCLIC(2)) ONTO P
!HPF$ ALIGN A(I, J) WITH T(I + 1, J)
!HPF$ ALIGN B(I, J) WITH T(I, J)
!HPF$ PROCESSORS Q(4)
!HPF$ TEMPLATE U(24)
!HPF$ DISTRIBUTE U(CYCLIC(3)) ONTO Q
!HPF$ ALIGN X(I) WITH U(I + 2)
!HPF$ ALIGN Y(I) WITH U(I)
  do j = 1, m
    do i = 1, n
      a(i, j) = mod(i * 5 + j * 3, 17)
      b(i, j) = mod(i * 2 - j * 5, 13)
    end do
  end do
  do k = 1, 20
    x(k) = mod(k * 7, 11)
    y(k) = mod(k * 3, 5) - 2
  end do
  ! B(I,J) is one cell left of A(I,J): fetched.
  do j = 3, m, 3
    do i = 2, n, 2
      a(i, j) = mod(a(i, j) + b(i - 1, j - 1) + b(i, j) + b(i, j - 2), 101)
    end do
  end do
  ! B(I+1,J) is on A(I,J)'s cell: read where it lives.
  do i = 1, n - 1
    do j = m, 1, -1
      a(i, j) = mod(a(i, j) * 2 + b(i + 1, j) + i - j, 103)
    end do
  end do
  ! The other way round, with a row and a column read at fixed indices.
  do j = 2, m
    do i = 2, n
      b(i, j) = mod(b(i, j) + a(i - 1, j) + a(i, j) + a(1, j - 1) + a(i, 1), 97)
    end do
  end do
  ! 1-D: Y(I+2) is on X(I)'s cell, Y(I) two cells left.
  do k = 1, 18
    x(k) = x(k) + 3 * y(k + 2) - y(k)
  end do
  do k = 20, 3, -1
    y(k) = y(k) - x(k - 2) + 2 * x(k)
  end do
  print *, a
  print *, b
  print *, x
  print *, y
end program grid_cyclic_offsets
