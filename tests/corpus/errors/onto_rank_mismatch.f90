! expect: ONTO rank-mismatch errors: two distributed dims onto 1-D P, one onto 2-D Q, and (BLOCK,*,CYCLIC) onto 1-D P
program onto_rank_mismatch
  implicit none
  integer, parameter :: n = 8
  real :: a(n, n), b(n), c(n, n, n)
  integer :: i
!HPF$ PROCESSORS P(4)
!HPF$ PROCESSORS Q(2,2)
!HPF$ TEMPLATE T(N,N)
! error: 2 distributed dimensions, P has rank 1
!HPF$ DISTRIBUTE T(BLOCK,BLOCK) ONTO P
!HPF$ ALIGN A(I,J) WITH T(I,J)
! error: 1 distributed dimension, Q has rank 2
!HPF$ DISTRIBUTE B(BLOCK) ONTO Q
! error: 2 distributed dimensions, P has rank 1
!HPF$ DISTRIBUTE C(BLOCK,*,CYCLIC) ONTO P
  a = 1.0
  c = 2.0
  do i = 1, n
    b(i) = sum(a(i, :)) + sum(c(i, :, :))
  end do
  print '(F8.1)', sum(b)
end program onto_rank_mismatch
