! Reads of elements no neighbour fetch brings: B(2*I) and B(N+1-I) of a
! BLOCK array twice as long, an indirect A(IDX(I)), a CYCLIC array read by a
! BLOCK loop, inside a time loop. Each loop runs on the owners of its home
! after the elements it reads are fetched (inspector/executor); a nest with
! an inner loop reads a whole copy of the array instead.
program replicated_reads
  implicit none
  integer, parameter :: n = 24
  real :: a(n), b(2*n), c(n), e(n)
  integer :: idx(n), k(n), i, j, step
!HPF$ PROCESSORS P(NUMBER_OF_PROCESSORS())
!HPF$ DISTRIBUTE A(BLOCK) ONTO P
!HPF$ DISTRIBUTE B(BLOCK) ONTO P
!HPF$ DISTRIBUTE E(CYCLIC) ONTO P
!HPF$ ALIGN (I) WITH A(I) :: C, IDX, K
  do i = 1, 2*n
    b(i) = real(mod(i * 7, 13)) + 0.25 * i
  end do
  do i = 1, n
    idx(i) = mod(i * 5, n) + 1
    e(i) = 1.0 / i
    k(i) = i
  end do
  do step = 1, 3
!HPF$ INDEPENDENT
    do i = 1, n
      a(i) = b(2*i) + b(n+1-i) * step
    end do
    do i = 1, n
      c(i) = a(idx(i)) + e(i)
    end do
    do i = 2, n
      k(i) = k(i) + int(b(i+n))
    end do
  end do
  do i = 1, n
    do j = 1, 2
      c(i) = c(i) + b(2*i - 2 + j)
    end do
  end do
  print *, a
  print *, c
  print *, k
end program replicated_reads
