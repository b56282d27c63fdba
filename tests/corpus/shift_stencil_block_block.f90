! A diffusion stencil on a (BLOCK,BLOCK) grid written with shifts: EOSHIFT
! with a fixed boundary value along the first dimension, CSHIFT (periodic)
! along the second, nested shifts for the diagonal neighbours, shifts in
! WHERE masks and bodies, a shift by a loop index and one longer than a
! block; integer and logical grids too.
program shift_stencil_block_block
  implicit none
  integer, parameter :: n = 12, m = 10
  double precision :: t(n, m), tnew(n, m)
  integer :: k(n, m), kk(n, m)
  logical :: hot(n, m)
  integer :: i, j, step, s
!HPF$ PROCESSORS P(2, 2)
!HPF$ DISTRIBUTE (BLOCK, BLOCK) ONTO P :: t, tnew, k, kk, hot
  forall (i = 1:n, j = 1:m) t(i, j) = mod(7 * i + 3 * j, 11) * 1.5d0
  forall (i = 1:n, j = 1:m) k(i, j) = 10 * i + j
  do step = 1, 6
    tnew = 0.5d0 * t + 0.125d0 * (eoshift(t, 1, 100.d0, 1) + eoshift(t, -1, 0.d0, 1) &
      + cshift(t, 1, 2) + cshift(t, -1, 2))
    ! The diagonal neighbours, periodic both ways.
    tnew = tnew + 0.01d0 * (cshift(cshift(t, 1, 1), -1, 2) - cshift(cshift(t, -1, 1), 1, 2))
    t = tnew
  end do
  print '(10F9.3)', t
  hot = t > 20.d0
  where (cshift(hot, 1, 1) .or. eoshift(hot, -1, dim = 2)) k = -k
  print '(10L2)', hot
  print '(10I5)', k
  ! Shifts by a loop index, one of them longer than a block on 5 processes.
  do s = -7, 7, 7
    kk = cshift(k, s, 1) + eoshift(k, s, -1000, 2)
    print '(10I6)', kk(:, 1), kk(n, :)
  end do
  where (k > 0)
    kk = eoshift(cshift(k, 5, 2), -3, 0, 1)
  elsewhere
    kk = cshift(k, -5, 1)
  end where
  print '(10I5)', kk
  k = cshift(k, 2, 1)
  print '(10I5)', k
end program shift_stencil_block_block
