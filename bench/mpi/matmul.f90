! Matrix product C = MATMUL(A, B) of N x N matrices distributed by columns
! (*, BLOCK), SWEEPS times (bench/mpi/run.sh substitutes them; issue 29).
! hpf-ls runs it on every process: each computes its columns of C from
! panels of 128 columns of A gathered from their owners and its own columns
! of B. The values are small integers, so every order of summation prints
! the same. The kernel time goes to stderr.
program matmul_bench
  implicit none
  integer, parameter :: n = 1200, sweeps = @SWEEPS@
  double precision :: a(n, n), b(n, n), c(n, n)
  integer :: i, j, s
  integer(8) :: t0, t1, rate
!HPF$ DISTRIBUTE (*, BLOCK) :: a, b, c
  do j = 1, n
    do i = 1, n
      a(i, j) = dble(mod(i + 2 * j, 7) - 3)
      b(i, j) = dble(mod(3 * i + j, 5) - 1)
    end do
  end do
  c = 0.0d0
  call system_clock(t0, rate)
  do s = 1, sweeps
    c = matmul(a, b)
  end do
  call system_clock(t1)
  write (0, '(a,f8.3)') 'kernel seconds: ', dble(t1 - t0) / dble(rate)
  print '(a,f16.1)', 'sum(c) ', sum(c)
  print '(a,2f10.1)', 'c(1,1), c(n,n) ', c(1, 1), c(n, n)
end program matmul_bench
