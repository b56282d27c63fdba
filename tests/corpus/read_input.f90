! Problem size, a scale and a flag read from standard input (rank 0 reads,
! the values are broadcast), then a distributed array read element by
! element and as a section, and a shifted sum over it.
program read_input
  implicit none
  integer, parameter :: nmax = 40
  integer :: n, i, status
  double precision :: scale
  logical :: verbose
  double precision :: a(nmax), b(nmax)
  integer :: k(nmax)
!HPF$ PROCESSORS p(4)
!HPF$ DISTRIBUTE a(BLOCK) ONTO p
!HPF$ ALIGN b(i) WITH a(i)
!HPF$ ALIGN k(i) WITH a(i)
  read *, n
  read (*, *) scale, verbose
  read (*, *, iostat=status) k(1:n)
  if (status /= 0) then
    print *, 'bad input', status
    stop
  end if
  read *, k(n + 1)
  do i = 1, nmax
    a(i) = scale * dble(i)
  end do
!HPF$ INDEPENDENT
  do i = 2, n
    b(i) = a(i - 1) + dble(k(i))
  end do
  if (verbose) print *, 'n =', n, ' scale =', scale
  print '(5F10.2)', b(2:n)
  print *, sum(k(1:n + 1))
end program read_input
