! Broadcasts from one owner fused: in each iteration of a loop every
! process runs, an INTEGER element, a REAL(8) element and a column section
! come from the process that owns column k (A and IDX are aligned), with
! statements in between that change the column on its owner only. The
! owner runs them first and sends the three values in one message.
program fused_broadcasts
  implicit none
  integer, parameter :: n = 13
  double precision :: a(n, n), p, total
  integer :: idx(n, n), i, j, k, m
!HPF$ PROCESSORS PR(NUMBER_OF_PROCESSORS())
!HPF$ DISTRIBUTE a(*, CYCLIC) ONTO PR
!HPF$ ALIGN idx(i, j) WITH a(i, j)
!HPF$ INDEPENDENT, NEW(i)
  do j = 1, n
    do i = 1, n
      a(i, j) = dble(mod(i * 7 + j * 3, 11)) / 4.0d0 + 1.0d0
      idx(i, j) = mod(i + 2 * j, n) + 1
    end do
  end do
  total = 0.0d0
  do k = 1, n - 1
    m = idx(k, k)
    p = a(m, k)
    total = total + p * m
    do i = k + 1, n
      a(i, k) = a(i, k) / p
    end do
!HPF$ INDEPENDENT, NEW(i)
    do j = k + 1, n
      do i = k + 1, n
        a(i, j) = a(i, j) - a(i, k) * a(k, j) * 0.125d0
      end do
    end do
  end do
  print '(a, es22.14)', ' total', total
  print '(3es22.14)', a(n, n), a(n, 1), a(n / 2, n / 2)
  print '(a, es22.14)', ' sum of the last column', sum(a(:, n))
end program fused_broadcasts
