! Internal procedures of the main program (after CONTAINS) that use its
! distributed arrays and scalars by host association: a boundary update,
! an explicit heat step, an energy function, a counter of calls, and a
! subroutine that takes a distributed array as its argument. The program's
! own loops run in parallel; the statements that call these run on rank 0
! on gathered copies, and what the procedures set is scattered and
! broadcast back.
program internal_procedures
  implicit none
  integer, parameter :: n = 40, steps = 25
  double precision :: u(0:n+1), unew(0:n+1), w(n)
  double precision :: alpha, e0
  integer :: i, k, calls
!HPF$ PROCESSORS P(4)
!HPF$ TEMPLATE T(0:N+1)
!HPF$ DISTRIBUTE T(BLOCK) ONTO P
!HPF$ ALIGN (I) WITH T(I) :: U, UNEW
!HPF$ DISTRIBUTE W(CYCLIC(3)) ONTO P
  alpha = 0.25d0
  calls = 0
  do i = 0, n + 1
    u(i) = dble(mod(13 * i, 17)) / 4.0d0
  end do
  call boundaries()
  e0 = energy()
  do k = 1, steps
    do i = 1, n
      unew(i) = u(i) + alpha * (u(i-1) - 2.0d0 * u(i) + u(i+1))
    end do
    do i = 1, n
      u(i) = unew(i)
    end do
    if (mod(k, 10) == 0) call boundaries()
  end do
  do i = 1, n
    w(i) = u(i) * i
  end do
  call halve(w, n)
  print '(A,F14.8)', ' energy before =', e0
  print '(A,F14.8)', ' energy after  =', energy()
  print '(A,I4)', ' boundary calls =', calls
  print '(A,3F12.6)', ' u(1:3) =', u(1:3)
  print '(A,F14.6)', ' sum(w) =', sum(w)
contains
  subroutine boundaries()
    u(0) = u(1)
    u(n+1) = u(n)
    calls = calls + 1
  end subroutine boundaries

  double precision function energy()
    energy = sum(u(1:n)**2)
  end function energy

  subroutine halve(x, m)
    integer, intent(in) :: m
    double precision :: x(m)
    integer :: j
    do j = 1, m
      x(j) = x(j) / 2.0d0
    end do
  end subroutine halve
end program internal_procedures
