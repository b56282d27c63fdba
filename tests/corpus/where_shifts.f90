! WHEREs whose masks and assigned sections are misaligned, section shifts
! along a CYCLIC dimension, and reductions of sections with run-time
! strides, in a time loop (issue 27). Every statement runs on every process:
! the owners of the assigned sections compute, the elements they read on
! other processes fetched before the statement.
program where_shifts
  implicit none
  integer, parameter :: n = 30, nx = 14, nsteps = 4
  real :: a(n), b(n), c(n), x(n)
  integer :: k(n), m(n)
  real :: w(3, nx, 2), v(3, nx, 2)
  real :: s, big
  integer :: i, j, step, kk, lo, hi, total
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE a(CYCLIC) ONTO P
!HPF$ DISTRIBUTE b(BLOCK) ONTO P
!HPF$ ALIGN c(i) WITH b(i)
!HPF$ DISTRIBUTE k(CYCLIC(2)) ONTO P
!HPF$ DISTRIBUTE x(BLOCK) ONTO P
!HPF$ DISTRIBUTE m(CYCLIC(3)) ONTO P
!HPF$ DISTRIBUTE w(*, CYCLIC, *) ONTO P
!HPF$ ALIGN v(i, j, l) WITH w(i, j, l)

  do i = 1, n
    a(i) = real(mod(i * 7, 5)) - 2.0
    b(i) = 0.0
    c(i) = real(i) * 0.5
    x(i) = real(mod(i * 3, 11))
    k(i) = mod(i, 3) - 1
    m(i) = mod(i * 5, 13)
  end do
  do i = 1, nx
    do j = 1, 3
      w(j, i, 1) = real(i + j)
      w(j, i, 2) = real(i - j)
    end do
  end do
  v = 1.0

  do step = 1, nsteps
    ! A WHERE statement on a CYCLIC section, its mask another CYCLIC(2) array.
    where (k(1:n-1) > 0) a(2:n) = a(2:n) + 1.0
    ! A BLOCK left side, mask and operand on the CYCLIC array shifted.
    where (a(2:n) > 0.0) b(1:n-1) = a(2:n) * c(1:n-1)
    ! A construct with ELSEWHERE: both assignments read the CYCLIC a fetched.
    where (a(1:n-2) > 0.5)
      b(3:n) = b(3:n) + a(1:n-2)
    elsewhere
      b(3:n) = b(3:n) - c(3:n)
    end where
    ! The CYCLIC left side, the masks and operands on BLOCK arrays.
    where (b(2:n) > 4.0)
      a(1:n-1) = a(1:n-1) - 1.0
    elsewhere (c(2:n) > 10.0)
      a(1:n-1) = -a(1:n-1) + x(2:n)
    end where
    ! Section shifts along the CYCLIC dimension, read before written.
    w(:, 2:nx, :) = w(:, 1:nx-1, :) + v(:, 2:nx, :)
    w(:, 1:nx-2, 1) = w(:, 3:nx, 2) * 0.5
    ! Reductions of sections with run-time strides.
    do kk = 1, 5
      lo = kk
      hi = n - kk
      s = sum(x(kk:n:kk))
      big = maxval(a(lo:hi:kk)) + minval(c(hi:lo:-kk))
      total = sum(m(kk:n:kk)) + maxval(m(hi:lo:-kk)) + count(k(lo:n:kk + 1) > 0)
      print *, step, kk, s, big, total
    end do
    x(2:n) = x(2:n) + 1.0
  end do
  print *, a
  print *, b
  print *, w
  print *, sum(w), sum(a), sum(b)
end program where_shifts
