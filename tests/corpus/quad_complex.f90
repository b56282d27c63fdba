! COMPLEX(16) (gfortran's quad-precision complex, 32 bytes, MPI_COMPLEX32)
! distributed arrays: BLOCK with a halo read, CYCLIC(2) read across
! processes, a sum folded in rank order, a matrix product, a transpose and
! gathered output, with values that quad precision holds exactly.
program quad_complex
  implicit none
  integer, parameter :: qp = 16, n = 10
  complex(kind=qp) :: u(n), v(n), w(n)
  complex(kind=qp) :: a(n, n), b(n, n), c(n, n)
  integer :: i, j
!HPF$ DISTRIBUTE u(BLOCK)
!HPF$ DISTRIBUTE (CYCLIC(2)) :: v, w
!HPF$ DISTRIBUTE (BLOCK, *) :: a, c
!HPF$ DISTRIBUTE b(*, CYCLIC)
  do i = 1, n
    u(i) = cmplx(i, -2 * i, qp) / 4.0_qp
    v(i) = cmplx(1, i, qp)
  end do
  do i = 2, n - 1
    w(i) = u(i - 1) + u(i + 1) - v(n + 1 - i)
  end do
  w(1) = u(1)
  w(n) = v(n)
  do j = 1, n
    do i = 1, n
      a(i, j) = cmplx(mod(i + j, 4), mod(i * j, 3) - 1, qp)
    end do
  end do
  b = transpose(a)
  c = matmul(a, b)
  print '(2F12.4)', w(1:4)
  print '(2F12.4)', sum(w)
  print '(2F12.4)', c(2, 3), c(n, 1)
  print '(2F14.4)', sum(c)
  print '(A,L2)', 'c is symmetric:', all(c == transpose(c))
  print '(2ES44.34)', sum(u) / 3.0_qp
end program quad_complex
