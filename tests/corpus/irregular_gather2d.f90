! Irregular 2-D gather, as in unstructured-mesh codes: each row of B takes
! row IDX(I) of C, through an index array computed at run time (a
! permutation), and adds its own row of A. A and B are distributed (BLOCK, BLOCK),
! C (CYCLIC, BLOCK), so most of the rows read live on other processes.
program irregular_gather2d
  implicit none
  integer, parameter :: n = 24, m = 6
  real :: a(n, m), b(n, m), c(n, m)
  integer :: idx(n)
  integer :: i, j
!HPF$ PROCESSORS P(2, 2)
!HPF$ DISTRIBUTE A(BLOCK, BLOCK) ONTO P
!HPF$ ALIGN B(I, J) WITH A(I, J)
!HPF$ DISTRIBUTE C(CYCLIC, BLOCK) ONTO P
  do i = 1, n
    idx(i) = mod(7 * i, n) + 1
  end do
  forall (i = 1:n, j = 1:m) a(i, j) = real(i) + 0.25 * real(j)
  forall (i = 1:n, j = 1:m) c(i, j) = real(100 * j + i)
  b = 0.0
  do j = 1, m
    do i = 1, n
      b(i, j) = a(i, j) + 0.5 * c(idx(i), j) - c(idx(n + 1 - i), m + 1 - j)
    end do
  end do
  print '(a, 6f9.2)', 'b(1,:) =', b(1, :)
  print '(a, 6f9.2)', 'b(n,:) =', b(n, :)
  print '(a, f12.2)', 'sum(b) =', sum(b)
end program irregular_gather2d
