! WHERE statements and constructs on BLOCK arrays: a WHERE / ELSEWHERE
! construct over two arrays, a one-line WHERE on an INTEGER array, masked
! ELSEWHERE, a LOGICAL mask array, sections; and one whose assignment
! reads a neighbour's element (runs on rank 0); a WHERE construct on
! (*, BLOCK) arrays, each process on its columns.
program where_masks
  implicit none
  integer, parameter :: n = 23
  real :: s(n), t(n), u(n), r(n)
  integer :: k(n), i, j
  real :: c(4, 7), e(4, 7)
  logical :: big(n)
!HPF$ PROCESSORS P(NUMBER_OF_PROCESSORS())
!HPF$ DISTRIBUTE S(BLOCK) ONTO P
!HPF$ ALIGN (I) WITH S(I) :: T, U, K, BIG
!HPF$ DISTRIBUTE C(*, BLOCK) ONTO P
!HPF$ ALIGN E(I, J) WITH C(I, J)
  do i = 1, n
    s(i) = real(mod(i * 7, 11)) - 5.0
    k(i) = mod(i * 5, 9)
    r(i) = 0.5 * i
  end do
  where (s > 0.0)
    t = s
  elsewhere
    t = -s
  end where
  where (k > 3) k = k * 2
  where (s > 1.0)
    u = sqrt(s)
    s = s + u
  elsewhere (s < -2.0)
    u = -1.0
    s = 0.0
  elsewhere
    u = 0.0
  end where
  big = t > 2.0
  where (big .and. k < 10)
    t = t + 100.0
  end where
  where (t(2:n) > 3.0) u(2:n) = t(2:n)
  where (t(2:n) > 3.0) u(1:n-1) = t(2:n)
  do j = 1, 7
    do i = 1, 4
      c(i, j) = real(mod(i * 3 + j * 5, 7)) - 3.0
    end do
  end do
  where (c > 0.0)
    e = sqrt(c)
    c = c + e
  elsewhere
    e = -c
  end where
  print *, c
  print *, e
  print *, t
  print *, u
  print *, s
  print *, k
end program where_masks
