! Alignments that change rank, run in parallel by the MPI backend:
! a collapsed dimension ALIGN A(I,*) WITH T(I), constants embedded in the
! target ALIGN D(I) WITH T2(I,3) (along a `*` axis) and ALIGN W(J) WITH
! T2(5,J) (along the distributed axis), replication ALIGN X(J) WITH T2(*,J)
! and ALIGN E(I) WITH T2(I,*); halo reads of a collapsed array, FORALL,
! sections with a scalar subscript along the collapsed dimension, reductions.
program embed_rank_change
  implicit none
  integer, parameter :: n = 21, m = 6
  integer :: a(n, m), s(n, m), y(n), d(n), e(n), x(m), w(m)
  integer :: i, j, k
!HPF$ PROCESSORS P(4)
!HPF$ TEMPLATE T(N)
!HPF$ TEMPLATE T2(N, M)
!HPF$ DISTRIBUTE T(BLOCK) ONTO P
!HPF$ DISTRIBUTE T2(BLOCK, *) ONTO P
!HPF$ ALIGN A(I,*) WITH T(I)          ! a whole row of A lives with cell I
!HPF$ ALIGN Y(I) WITH T(I)
!HPF$ ALIGN S(I,J) WITH T2(I,J)
!HPF$ ALIGN D(I) WITH T2(I,3)         ! constant along the `*` axis
!HPF$ ALIGN E(I) WITH T2(I,*)         ! replicated along the `*` axis
!HPF$ ALIGN X(J) WITH T2(*,J)         ! a copy on every process
!HPF$ ALIGN W(J) WITH T2(5,J)         ! the processes holding row 5
  do j = 1, m
    x(j) = mod(3 * j, 5) - 2
    do i = 1, n
      a(i, j) = mod(i * j + 2 * i, 11) - 5
    end do
  end do
!HPF$ INDEPENDENT, NEW(J)
  do i = 1, n
    y(i) = 0
    do j = 1, m
      y(i) = y(i) + a(i, j) * x(j)
    end do
  end do
  d = y + a(:, 3)
  do i = 2, n - 1
    e(i) = a(i - 1, 2) - a(i + 1, m) + d(i + 1)
  end do
  e(1) = d(1)
  e(n) = -d(n)
  forall (i = 1:n, j = 1:m) s(i, j) = a(i, j) * x(j) + e(i)
  a(:, 1) = d - e
  do j = 1, m
    w(j) = s(5, j) + x(j)
  end do
  k = sum(a(:, 1))
  print '(a, 6i6)', 'x =', x
  print '(a, 6i6)', 'w =', w
  print '(a, 7i6)', 'y(1:7) =', y(1:7)
  print '(a, 3i8)', 'sum(y), sum(d), sum(e) =', sum(y), sum(d), sum(e)
  print '(a, 3i8)', 'sum(s), maxval(s), minval(a) =', sum(s), maxval(s), minval(a)
  print '(a, i8, i4, l3)', 'k, count(s > 0), any(d == 0) =', k, count(s > 0), any(d == 0)
  print '(a, 2i6)', 'e(n/2), s(n, m) =', e(n/2), s(n, m)
end program embed_rank_change
