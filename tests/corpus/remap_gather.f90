! Reads of distributed arrays at elements that are not neighbours, fetched
! before each loop by an inspector/executor (one all-to-all of counts, one of
! indices, one of values): strided, reversed and indirect reads, between
! arrays cut in the same or in different blocks; INTEGER and REAL data.
program remap_gather
  implicit none
  integer, parameter :: n = 20
  integer :: i
  integer :: ia(n), ib(2*n), idx(n), perm(n)
  real :: ra(n), rb(n), rc(n), rd(n)
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE ia(BLOCK) ONTO P
!HPF$ DISTRIBUTE ib(BLOCK) ONTO P
!HPF$ ALIGN idx(I) WITH ia(I)
!HPF$ DISTRIBUTE ra(CYCLIC) ONTO P
!HPF$ DISTRIBUTE rb(BLOCK) ONTO P
!HPF$ DISTRIBUTE rc(CYCLIC(3)) ONTO P
!HPF$ DISTRIBUTE rd(BLOCK(6)) ONTO P
  do i = 1, 2*n
    ib(i) = 3*i + 1
  end do
  do i = 1, n
    perm(i) = mod(11*i, n) + 1
  end do
  do i = 1, n
    idx(i) = mod(7*i, n) + 1
    rb(i) = 0.5 * i
    rc(i) = 0.25 * i
    ra(i) = 1.5 * i - 4.0
  end do
  ! Strided read, INTEGER, both arrays BLOCK.
  do i = 1, n
    ia(i) = ib(2*i) + ib(i)
  end do
  print *, 'strided:', ia
  ! Reversed read of a CYCLIC(3) array into a BLOCK one.
  do i = 1, n
    rb(i) = rc(n + 1 - i) * 2.0
  end do
  print *, 'reversed:', rb
  ! Indirect read through an index array aligned with the home, negative step.
  do i = n, 1, -1
    ia(i) = ib(idx(i)) - idx(i)
  end do
  print *, 'indirect:', ia
  ! Indirect read through a replicated permutation, into BLOCK(6), step 3.
  do i = 2, n, 3
    rd(i) = ra(perm(i)) + rb(perm(i)) + rb(i)
  end do
  do i = 1, n, 3
    rd(i) = 0.0
  end do
  do i = 3, n, 3
    rd(i) = ra(i)
  end do
  print *, 'permuted:', rd
  ! A read of an array the loop writes: stays on rank 0.
  do i = 1, n / 2
    rb(i) = rb(n + 1 - i)
  end do
  print *, 'written:', rb
end program remap_gather
