! Block-cyclic 2-D layout (ScaLAPACK style): DISTRIBUTE (CYCLIC(2),CYCLIC(2))
! ONTO a 2x2 grid for A, B, C; an INTEGER triple loop checked against MATMUL.
program block_cyclic_matmul
  implicit none
  integer, parameter :: n = 12
  integer :: a(n, n), b(n, n), c(n, n)
  integer :: i, j, k
!HPF$ PROCESSORS GRID(2,2)
!HPF$ DISTRIBUTE (CYCLIC(2), CYCLIC(2)) ONTO GRID :: A, B, C
  forall (i = 1:n, j = 1:n)
    a(i, j) = mod(i + 2*j, 5) - 1
    b(i, j) = mod(3*i - j + 20, 4) - 1
  end forall
  c = 0
!HPF$ INDEPENDENT(I,J)
  do j = 1, n
    do i = 1, n
      do k = 1, n
        c(i, j) = c(i, j) + a(i, k) * b(k, j)
      end do
    end do
  end do
  print *, 'trace =', sum((/ (c(i, i), i = 1, n) /))
  print *, 'sum   =', sum(c), ' c(3,4) =', c(3, 4)
  print *, 'agrees with MATMUL:', all(c == matmul(a, b))
end program block_cyclic_matmul
