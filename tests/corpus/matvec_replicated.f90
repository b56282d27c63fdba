! Matrix-vector products with collapsed and replicated alignments:
! ALIGN A(I,*) WITH R(I), ALIGN X(J) WITH W(*,J), ALIGN Z(I) WITH W(I,*),
! and the combined TEMPLATE, DISTRIBUTE(BLOCK,*) :: W(64,64).
program matvec
  implicit none
  integer, parameter :: n = 64
  real :: a(n, n), b(n, n), x(n), y(n), z(n)
  integer :: i, j
!HPF$ PROCESSORS PR(4)
!HPF$ TEMPLATE, DISTRIBUTE(BLOCK,*) :: W(64,64)
!HPF$ TEMPLATE R(N)
!HPF$ DISTRIBUTE R(BLOCK) ONTO PR
!HPF$ ALIGN A(I,*) WITH R(I)       ! a whole row lives with template cell I
!HPF$ ALIGN Y(I) WITH R(I)
!HPF$ ALIGN B(I,J) WITH W(I,J)
!HPF$ ALIGN X(J) WITH W(*,J)       ! x replicated over the distributed axis
!HPF$ ALIGN Z(I) WITH W(I,*)
  do j = 1, n
    x(j) = real(mod(j, 5) - 2)
    do i = 1, n
      a(i, j) = real(mod(i + 2*j, 7) - 3)
    end do
  end do
  b = a
!HPF$ INDEPENDENT, NEW(J)
  do i = 1, n
    y(i) = 0.0
    do j = 1, n
      y(i) = y(i) + a(i, j) * x(j)
    end do
  end do
  z = matmul(b, x)
  print '(A,8F6.1)', 'y(1:8)  =', y(1:8)
  print '(A,F8.1)', 'sum(y)  =', sum(y)
  print '(A,F8.1)', 'maxabs(y-z) =', maxval(abs(y - z))
  print '(A,F8.1)', 'x.y     =', dot_product(x, y)
end program matvec
