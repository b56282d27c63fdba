! expect: format-count errors: DISTRIBUTE A(BLOCK) for a rank-2 A and DISTRIBUTE T(BLOCK,BLOCK,*) for a rank-2 T
program distribute_rank_mismatch
  implicit none
  integer, parameter :: n = 8
  real :: a(n, n), b(n, n)
!HPF$ PROCESSORS P(4)
!HPF$ TEMPLATE T(N,N)
! error: one format for a rank-2 array
!HPF$ DISTRIBUTE A(BLOCK) ONTO P
! error: three formats for a rank-2 template
!HPF$ DISTRIBUTE T(BLOCK,BLOCK,*) ONTO P
!HPF$ ALIGN B(I,J) WITH T(I,J)
  a = 1.0
  b = a + 1.0
  print '(F8.1)', sum(b)
end program distribute_rank_mismatch
