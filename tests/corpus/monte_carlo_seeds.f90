! A Monte Carlo estimate of pi, one Park-Miller generator per element:
! 64-bit seeds (the product of a seed and the multiplier needs 46 bits),
! block distributed with the tallies aligned to them.
program monte_carlo_seeds
  use iso_fortran_env, only: int64
  implicit none
  integer, parameter :: i8 = selected_int_kind(18)
  integer, parameter :: n = 48, rounds = 40
  integer(kind=i8), parameter :: mult = 16807_i8, modulus = 2147483647_i8
  integer(i8) :: seed(n)
  integer(kind=int64) :: draws(n)
  integer*8 :: total
  double precision :: x(n), y(n)
  integer :: hits(n), i, round
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE seed(BLOCK) ONTO P
!HPF$ ALIGN (i) WITH seed(i) :: draws, x, y, hits

  do i = 1, n
    seed(i) = mod(1000003_i8 * i * i + 12345_i8, modulus)
  end do
  hits = 0
  draws = 0
  do round = 1, rounds
!HPF$ INDEPENDENT
    do i = 1, n
      seed(i) = mod(mult * seed(i), modulus)
      x(i) = dble(seed(i)) / dble(modulus)
      seed(i) = mod(mult * seed(i), modulus)
      y(i) = dble(seed(i)) / dble(modulus)
      draws(i) = draws(i) + 1
      if (x(i)**2 + y(i)**2 <= 1.0d0) hits(i) = hits(i) + 1
    end do
  end do
  total = sum(hits)
  print '(a, f10.6)', 'pi estimate', 4.0d0 * total / (n * rounds)
  print '(a, i14)', 'draws', sum(draws)
  print '(a, i14)', 'largest seed', maxval(seed)
  print '(a, i14)', 'smallest seed', minval(seed)
  print '(a, i20)', 'seed checksum', sum(seed)
  print '(4i14)', seed(1:8)
  print '(a, 6i4)', 'hits', hits(n - 5:n)
end program monte_carlo_seeds
