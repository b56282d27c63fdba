! Benchmark: Gaussian elimination with partial pivoting on a 1200 x 1200
! system (the right-hand side as column n+1), columns CYCLIC: the classic
! HPF layout, which keeps every process working to the end. MAXLOC finds
! the pivot in column k, rows k and ipiv are swapped, then the trailing
! columns are updated. run.sh substitutes the number of elimination steps
! (0: none; the back substitution runs in both).
program gauss
  implicit none
  integer, parameter :: n = 1200, nsteps = @SWEEPS@
  double precision :: a(n, n + 1), x(n), t, pivot
  integer :: i, j, k, ipiv
!HPF$ PROCESSORS PR(NUMBER_OF_PROCESSORS())
!HPF$ DISTRIBUTE a(*, CYCLIC) ONTO PR
!HPF$ INDEPENDENT, NEW(i)
  do j = 1, n + 1
    do i = 1, n
      a(i, j) = modulo(sin(dble(i * (n + 1) + j)) * 1000.d0, 1.d0) - 0.5d0
    end do
  end do
  do k = 1, min(nsteps, n - 1)
    ipiv = maxloc(abs(a(k:n, k)), 1) + k - 1
    if (ipiv /= k) then
!HPF$ INDEPENDENT, NEW(t)
      do j = k, n + 1
        t = a(k, j)
        a(k, j) = a(ipiv, j)
        a(ipiv, j) = t
      end do
    end if
    pivot = a(k, k)
    do i = k + 1, n
      a(i, k) = a(i, k) / pivot
    end do
!HPF$ INDEPENDENT, NEW(i)
    do j = k + 1, n + 1
      do i = k + 1, n
        a(i, j) = a(i, j) - a(i, k) * a(k, j)
      end do
    end do
  end do
  ! Back substitution.
  do i = n, 1, -1
    x(i) = a(i, n + 1)
    do j = i + 1, n
      x(i) = x(i) - a(i, j) * x(j)
    end do
    x(i) = x(i) / a(i, i)
  end do
  print '(a, es20.10)', ' sum of x', sum(x)
  print '(3es20.10)', x(1), x(n / 2), x(n)
end program gauss
