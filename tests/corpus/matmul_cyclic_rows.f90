! MATMUL where the operands are laid out differently from the result:
! A by rows CYCLIC(2), B by columns CYCLIC, C by rows BLOCK and by columns
! CYCLIC(3), a replicated operand, INTEGER and COMPLEX(8) elements.
program matmul_cyclic_rows
  implicit none
  integer, parameter :: n = 13, l = 10
  integer :: a(n, l), b(l, n), c(n, n), d(n, n), e(n, n)
  complex(8) :: p(n, l), q(l, n), s(n, n)
  integer :: i, j
!HPF$ DISTRIBUTE a(CYCLIC(2), *)
!HPF$ DISTRIBUTE b(*, CYCLIC)
!HPF$ DISTRIBUTE c(BLOCK, *)
!HPF$ DISTRIBUTE d(*, CYCLIC(3))
!HPF$ DISTRIBUTE (BLOCK, *) :: p, s
  do j = 1, l
    do i = 1, n
      a(i, j) = mod(i * j + 3, 11) - 5
      b(j, i) = mod(2 * i + j, 7) - 3
      p(i, j) = cmplx(mod(i + j, 3) - 1, mod(i - j, 4), 8)
      q(j, i) = cmplx(mod(i, 2), mod(j, 3) - 1, 8)
    end do
  end do
  c = matmul(a, b)
  d = matmul(a, b)
  e = matmul(a, b)
  print *, 'c row 1:', c(1, :)
  print *, 'c col n:', c(:, n)
  print *, 'sums:', sum(c), sum(d), sum(e)
  print *, 'layouts agree:', all(c == d), all(d == e)
  s = matmul(p, q)
  print '(A,2F8.1)', ' s(1,1) =', s(1, 1)
  print '(A,2F8.1)', ' s(n,2) =', s(n, 2)
  print '(A,2F10.1)', ' sum(s) =', sum(s)
end program matmul_cyclic_rows
