! Runs for minutes (about 10^11 updates): for the checks that a run past its
! timeout is stopped and leaves no Slurm job behind.
program spin
  implicit none
  integer, parameter :: n = 64
  double precision :: a(n)
  integer :: i, it
!HPF$ PROCESSORS p(2)
!HPF$ DISTRIBUTE a(BLOCK) ONTO p
  a = 1.0d0
  do it = 1, 2000000000
!HPF$ INDEPENDENT
    do i = 1, n
      a(i) = a(i) * 1.0000001d0
    end do
  end do
  print *, a(1)
end program spin
