! Benchmark: 1-D shift A(I) = B(I-1) + B(I+1) on a BLOCK template,
! N = 5*10^7 doubles, SWEEPS sweeps (bench/mpi/run.sh substitutes them).
program shift1d
  implicit none
  integer, parameter :: n = 50000000, sweeps = @SWEEPS@
  double precision :: a(n), b(0:n+1)
  integer :: i, s
!HPF$ PROCESSORS P(NUMBER_OF_PROCESSORS())
!HPF$ TEMPLATE T(0:N+1)
!HPF$ DISTRIBUTE T(BLOCK) ONTO P
!HPF$ ALIGN A(I) WITH T(I)
!HPF$ ALIGN B(I) WITH T(I)
!HPF$ INDEPENDENT
  do i = 0, n+1
    b(i) = dble(mod(i, 1000))
  end do
  do s = 1, sweeps
!HPF$ INDEPENDENT
    do i = 1, n
      a(i) = b(i-1) + b(i+1)
    end do
!HPF$ INDEPENDENT
    do i = 1, n
      b(i) = 0.5d0 * a(i)
    end do
  end do
  print '(3F16.6)', b(1), b(n/2), b(n)
end program shift1d
