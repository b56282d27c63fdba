! DO nests whose iterations update several arrays: every array written on
! the home element's template cell is written by its owner (one owner-
! computes loop), arrays aligned with offsets included; a read of another
! written array ahead of where the loop writes it reads the old values
! (fetched before the loop), one behind it is a loop-carried dependence.
program multi_update
  implicit none
  integer, parameter :: n = 23, m = 9
  integer :: u(n), v(n), w(n+1), s(n), c(n), d(n)
  integer :: g(m, m), h(m, m), e(m+1, m)
  integer :: i, j
!HPF$ PROCESSORS P(4)
!HPF$ TEMPLATE T(0:N+1)
!HPF$ DISTRIBUTE T(BLOCK) ONTO P
!HPF$ ALIGN U(I) WITH T(I)
!HPF$ ALIGN V(I) WITH T(I)
!HPF$ ALIGN W(I) WITH T(I-1)
!HPF$ ALIGN S(I) WITH T(I)
!HPF$ DISTRIBUTE (CYCLIC(2)) ONTO P :: C, D
!HPF$ PROCESSORS Q(2, 2)
!HPF$ TEMPLATE TG(0:M+1, M)
!HPF$ DISTRIBUTE TG(BLOCK, BLOCK) ONTO Q
!HPF$ ALIGN (I, J) WITH TG(I, J) :: G, H
!HPF$ ALIGN E(I, J) WITH TG(I - 1, J)
  w = 0
  e = 0
  do i = 1, n
    u(i) = 3 * i - 7
    v(i) = mod(i * i, 11)
    w(i+1) = u(i) + v(i)
  end do
  print '(23I4)', u
  print '(23I4)', v
  print '(24I4)', w(1:n+1)
  ! Reads ahead of the writes: the old values.
  do i = 1, n - 2
    s(i) = u(i+2) - v(i+1)
    u(i) = u(i) + 1
    v(i) = v(i+1) * 2
  end do
  print '(23I4)', s(1:n-2)
  print '(23I4)', u
  print '(23I4)', v
  ! A read behind the write: carried from the previous iteration.
  do i = 2, n
    u(i) = u(i) + 1
    v(i) = u(i-1) + v(i)
  end do
  print '(23I4)', v
  do i = 1, n
    c(i) = i * 5
    d(i) = c(i) - i
  end do
  print '(23I4)', d
  do j = 1, m
    do i = 1, m
      g(i, j) = i + 10 * j
      h(i, j) = g(i, j) * 2 - j
      e(i + 1, j) = h(i, j) - g(i, j)
    end do
  end do
  print '(9I5)', h
  print '(9I5)', e(2:m+1, :)
  print *, sum(u), sum(v), sum(w), sum(h), sum(e)
end program multi_update
