! Strided and reversed alignments: ALIGN X(I) WITH T(2*I-1), ALIGN Z(:) WITH
! T(2:N:2), ALIGN Y(I) WITH T(N+1-I); loops A(I)=B(2*I), A(I)=B(N+1-I),
! broadcast A(I)=B(5), negative-stride and stride-2 DO loops.
program stride_reverse
  implicit none
  integer, parameter :: n = 32, m = n/2
  integer :: a(n), b(n), y(n), x(m), z(m), c(m)
  integer :: i
!HPF$ PROCESSORS P(4)
!HPF$ TEMPLATE T(N)
!HPF$ DISTRIBUTE T(BLOCK) ONTO P
!HPF$ ALIGN A(I) WITH T(I)
!HPF$ ALIGN B(I) WITH T(I)
!HPF$ ALIGN C(I) WITH T(I)
!HPF$ ALIGN X(I) WITH T(2*I-1)      ! the odd template cells
!HPF$ ALIGN Z(:) WITH T(2:N:2)      ! the even template cells
!HPF$ ALIGN Y(I) WITH T(N+1-I)      ! reversed
  do i = 1, n
    b(i) = i * i
  end do
  do i = 1, m
    c(i) = b(2*i)                   ! stride ratio 2: C would want T(2*I)
  end do
  do i = 1, m
    x(i) = b(2*i-1)                 ! local: X sits on T(2*I-1)
    z(i) = b(2*i)                   ! local: Z sits on T(2*I)
  end do
  do i = 1, n
    y(i) = b(n+1-i)                 ! local: Y is reversed
  end do
  do i = 1, n
    a(i) = b(n+1-i)                 ! reversal: not expressible by a shift
  end do
  print *, 'c(1:4) =', c(1:4), ' sum(c-z) =', sum(c - z)
  print *, 'x(1:4) =', x(1:4), ' y(1:4) =', y(1:4)
  print *, 'sum(a-y) =', sum(a - y)
  do i = n, 2, -1
    a(i) = a(i-1)                   ! backward loop shifts right in place
  end do
  a(1) = 0
  print *, 'a(1:4) =', a(1:4)
  do i = 1, n
    a(i) = b(5)                     ! broadcast of one element
  end do
  do i = 1, n, 2
    a(i) = a(i) + i                 ! stride-2 update
  end do
  print *, 'sum(a) =', sum(a), ' a(31) =', a(31), ' a(32) =', a(32)
end program stride_reverse
