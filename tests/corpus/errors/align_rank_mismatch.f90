! expect: rank-mismatch errors: source list length differs from alignee rank (A, C), subscript count differs from target rank (B, D)
program align_rank_mismatch
  implicit none
  integer, parameter :: n = 8
  real :: a(n, n), b(n), c(n), d(n, n)
  integer :: i, j
!HPF$ PROCESSORS P(2,2)
!HPF$ TEMPLATE T2(N,N)
!HPF$ DISTRIBUTE T2(BLOCK,BLOCK) ONTO P
! error: A has rank 2 but one align-source
!HPF$ ALIGN A(I) WITH T2(I,1)
! error: T2 has rank 2 but one subscript
!HPF$ ALIGN B(I) WITH T2(I)
! error: C has rank 1 but two align-sources
!HPF$ ALIGN C(I,J) WITH T2(I,J)
! error: T2 has rank 2 but three subscripts
!HPF$ ALIGN D(I,J) WITH T2(I,J,1)
  do j = 1, n
    do i = 1, n
      a(i, j) = real(i + j)
    end do
  end do
  d = a
  b = a(:, 1)
  c = d(1, :)
  print '(F8.1)', sum(b) + sum(c)
end program align_rank_mismatch
