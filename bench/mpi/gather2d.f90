! Irregular gather in a time loop, as in unstructured-mesh codes: each row
! of B takes row IDX(I) of C (a permutation computed at run time) and its
! own row of A, @SWEEPS@ times, C changing between steps. A and B are
! (BLOCK, BLOCK), C (CYCLIC, BLOCK) on P(2, 1): most rows read live on the
! other processes. hpf-ls runs the nest on the owners of B (nest_fetch.rs):
! the inspector computes the schedule in the first step only (IDX does not
! change in the loop), every step moves C's values by one all-to-all.
program gather2d
  implicit none
  integer, parameter :: n = 4000, m = 400, steps = @SWEEPS@
  real :: a(n, m), b(n, m), c(n, m)
  integer :: idx(n), i, j, t
!HPF$ PROCESSORS P(2, 1)
!HPF$ DISTRIBUTE (BLOCK, BLOCK) ONTO P :: A, B
!HPF$ DISTRIBUTE C(CYCLIC, BLOCK) ONTO P
  do i = 1, n
    idx(i) = mod(7 * i, n) + 1
  end do
  forall (i = 1:n, j = 1:m) a(i, j) = real(mod(i + 3 * j, 17))
  forall (i = 1:n, j = 1:m) c(i, j) = real(mod(5 * i + j, 23))
  b = 0.0
  do t = 1, steps
    do j = 1, m
      do i = 1, n
        b(i, j) = 0.5 * b(i, j) + a(i, j) + 0.125 * c(idx(i), j)
      end do
    end do
    c = c * 0.5 + 1.0
  end do
  print *, b(1, 1), b(n / 2, m / 2), b(n, m)
end program gather2d
