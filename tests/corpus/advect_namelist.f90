! 1-D advection of a tracer by a first-order upwind scheme with a minmod
! limited correction. The run's parameters come from a NAMELIST read on
! standard input (advect_namelist.in), as production codes read theirs; a
! line every NOUT steps reports mass and extrema.
program advect
  implicit none
  integer, parameter :: nmax = 120
  real(8) :: q(0:nmax+1), qnew(0:nmax+1), slope(0:nmax+1)
!HPF$ PROCESSORS p(4)
!HPF$ TEMPLATE t(0:nmax+1)
!HPF$ DISTRIBUTE t(BLOCK) ONTO p
!HPF$ ALIGN (i) WITH t(i) :: q, qnew, slope
  integer :: n, nsteps, nout, i, step
  real(8) :: courant, width, mass0, dql, dqr
  namelist /run/ n, nsteps, nout, courant, width

  ! defaults, overridden by the namelist
  n = 100
  nsteps = 10
  nout = 5
  courant = 0.5d0
  width = 10.0d0
  read (*, nml=run)
  if (n > nmax) stop 'n too large'
  write (*, '(a, 3i5, 2f8.3)') 'parameters: ', n, nsteps, nout, courant, width

  q = 0.0d0
  forall (i = 1:nmax, abs(i - n/4) < width) q(i) = 1.0d0 - abs(i - n/4) / width
  mass0 = sum(q(1:n))

  do step = 1, nsteps
     ! periodic ghost cells
     q(0) = q(n)
     q(n+1) = q(1)
!HPF$ INDEPENDENT, NEW(dql, dqr)
     do i = 1, n
        dql = q(i) - q(i-1)
        dqr = q(i+1) - q(i)
        if (dql * dqr <= 0.0d0) then
           slope(i) = 0.0d0
        else if (abs(dql) < abs(dqr)) then
           slope(i) = dql
        else
           slope(i) = dqr
        end if
     end do
     slope(0) = slope(n)
!HPF$ INDEPENDENT
     do i = 1, n
        qnew(i) = q(i) - courant * (q(i) - q(i-1)) &
             - 0.5d0 * courant * (1.0d0 - courant) * (slope(i) - slope(i-1))
     end do
     q(1:n) = qnew(1:n)
     if (mod(step, nout) == 0) then
        write (*, '(a, i4, a, f12.8, a, 2f11.7)') 'step', step, '  mass', sum(q(1:n)) - mass0, &
             '  min/max', minval(q(1:n)), maxval(q(1:n))
     end if
  end do
  write (*, '(a, i4)') 'centre of the pulse at cell', maxloc(q(1:n))
  write (*, '(a, 5f9.5)') 'q(20:60:10) = ', q(20:60:10)
end program advect
