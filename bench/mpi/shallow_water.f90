! Benchmark: a shallow-water model on a C-grid (after Sadourny's SWM
! benchmark), 2049 x 2049 points of each field, (*, BLOCK): an uncounted
! time loop calling three internal subroutines, periodic boundary copies
! between their sections. bench/mpi/run.sh substitutes the steps.
program shallow
  implicit none
  integer, parameter :: m = 2048, n = 2048, itmax = @SWEEPS@
  double precision :: u(m+1, n+1), v(m+1, n+1), p(m+1, n+1)
  double precision :: unew(m+1, n+1), vnew(m+1, n+1), pnew(m+1, n+1)
  double precision :: uold(m+1, n+1), vold(m+1, n+1), pold(m+1, n+1)
  double precision :: cu(m+1, n+1), cv(m+1, n+1), z(m+1, n+1), h(m+1, n+1)
  double precision :: dt, tdt, dx, dy, alpha, el, pi, tpi, di, dj, pcf, a
  double precision :: fsdx, fsdy, tdts8, tdtsdx, tdtsdy, csum
  integer :: i, j, ncycle
!HPF$ PROCESSORS PR(NUMBER_OF_PROCESSORS())
!HPF$ TEMPLATE T(m+1, n+1)
!HPF$ DISTRIBUTE T(*, BLOCK) ONTO PR
!HPF$ ALIGN (I, J) WITH T(I, J) :: u, v, p, unew, vnew, pnew
!HPF$ ALIGN (I, J) WITH T(I, J) :: uold, vold, pold, cu, cv, z, h
  dt = 90.d0
  tdt = dt
  dx = 1.d5
  dy = 1.d5
  a = 1.d6
  alpha = .001d0
  el = n * dx
  pi = 4.d0 * atan(1.d0)
  tpi = pi + pi
  di = tpi / m
  dj = tpi / n
  pcf = pi * pi * a * a / (el * el)
!HPF$ INDEPENDENT, NEW(i)
  do j = 1, n + 1
    do i = 1, m + 1
      p(i, j) = pcf * (cos(2.d0 * (i - 1) * di) + cos(2.d0 * (j - 1) * dj)) + 50000.d0
      u(i, j) = 0.1d0 * sin((i - 1) * di) * cos((j - 1) * dj)
      v(i, j) = 0.1d0 * cos((i - 1) * di) * sin((j - 1) * dj)
    end do
  end do
  uold = u
  vold = v
  pold = p
  ncycle = 0
  do
    if (ncycle >= itmax) exit
    ncycle = ncycle + 1
    call calc1()
    call calc2()
    call calc3()
    if (mod(ncycle, 50) == 0) then
      print '(a, i6, es22.12)', ' step', ncycle, sum(p(1:m, 1:n))
    end if
  end do
  csum = sum(p(1:m, 1:n)) + sum(u(1:m, 1:n)) + sum(v(1:m, 1:n))
  print '(a, es22.12)', ' checksum', csum
  print '(3es22.12)', p(m/2, n/2), u(m/4, 3*n/4), v(3*m/4, n/4)
contains
  ! Mass fluxes, vorticity and height from u, v, p.
  subroutine calc1()
    fsdx = 4.d0 / dx
    fsdy = 4.d0 / dy
!HPF$ INDEPENDENT, NEW(i)
    do j = 1, n
      do i = 1, m
        cu(i+1, j) = .5d0 * (p(i+1, j) + p(i, j)) * u(i+1, j)
      end do
    end do
!HPF$ INDEPENDENT, NEW(i)
    do j = 2, n + 1
      do i = 1, m
        cv(i, j) = .5d0 * (p(i, j) + p(i, j-1)) * v(i, j)
      end do
    end do
!HPF$ INDEPENDENT, NEW(i)
    do j = 2, n + 1
      do i = 1, m
        z(i+1, j) = (fsdx * (v(i+1, j) - v(i, j)) - fsdy * (u(i+1, j) - u(i+1, j-1))) &
          / (p(i, j-1) + p(i+1, j-1) + p(i+1, j) + p(i, j))
      end do
    end do
!HPF$ INDEPENDENT, NEW(i)
    do j = 1, n
      do i = 1, m
        h(i, j) = p(i, j) + .25d0 * (u(i+1, j) * u(i+1, j) + u(i, j) * u(i, j) &
          + v(i, j+1) * v(i, j+1) + v(i, j) * v(i, j))
      end do
    end do
    ! Periodic continuation.
    cu(1, 1:n) = cu(m+1, 1:n)
    cv(m+1, 2:n+1) = cv(1, 2:n+1)
    z(1, 2:n+1) = z(m+1, 2:n+1)
    h(m+1, 1:n) = h(1, 1:n)
    cu(2:m+1, n+1) = cu(2:m+1, 1)
    cv(1:m, 1) = cv(1:m, n+1)
    z(2:m+1, 1) = z(2:m+1, n+1)
    h(1:m, n+1) = h(1:m, 1)
    cu(1, n+1) = cu(m+1, 1)
    cv(m+1, 1) = cv(1, n+1)
    z(1, 1) = z(m+1, n+1)
    h(m+1, n+1) = h(1, 1)
  end subroutine calc1

  ! New u, v, p from the fluxes.
  subroutine calc2()
    tdts8 = tdt / 8.d0
    tdtsdx = tdt / dx
    tdtsdy = tdt / dy
!HPF$ INDEPENDENT, NEW(i)
    do j = 1, n
      do i = 1, m
        unew(i+1, j) = uold(i+1, j) + tdts8 * (z(i+1, j+1) + z(i+1, j)) &
          * (cv(i+1, j+1) + cv(i, j+1) + cv(i, j) + cv(i+1, j)) - tdtsdx * (h(i+1, j) - h(i, j))
      end do
    end do
!HPF$ INDEPENDENT, NEW(i)
    do j = 2, n + 1
      do i = 1, m
        vnew(i, j) = vold(i, j) - tdts8 * (z(i+1, j) + z(i, j)) &
          * (cu(i+1, j) + cu(i, j) + cu(i, j-1) + cu(i+1, j-1)) - tdtsdy * (h(i, j) - h(i, j-1))
      end do
    end do
!HPF$ INDEPENDENT, NEW(i)
    do j = 1, n
      do i = 1, m
        pnew(i, j) = pold(i, j) - tdtsdx * (cu(i+1, j) - cu(i, j)) - tdtsdy * (cv(i, j+1) - cv(i, j))
      end do
    end do
    unew(1, 1:n) = unew(m+1, 1:n)
    vnew(m+1, 2:n+1) = vnew(1, 2:n+1)
    pnew(m+1, 1:n) = pnew(1, 1:n)
    unew(2:m+1, n+1) = unew(2:m+1, 1)
    vnew(1:m, 1) = vnew(1:m, n+1)
    pnew(1:m, n+1) = pnew(1:m, 1)
    unew(1, n+1) = unew(m+1, 1)
    vnew(m+1, 1) = vnew(1, n+1)
    pnew(m+1, n+1) = pnew(1, 1)
  end subroutine calc2

  ! Time smoothing, then the new fields become the current ones.
  subroutine calc3()
    if (ncycle > 1) then
!HPF$ INDEPENDENT, NEW(i)
      do j = 1, n + 1
        do i = 1, m + 1
          uold(i, j) = u(i, j) + alpha * (unew(i, j) - 2.d0 * u(i, j) + uold(i, j))
          vold(i, j) = v(i, j) + alpha * (vnew(i, j) - 2.d0 * v(i, j) + vold(i, j))
          pold(i, j) = p(i, j) + alpha * (pnew(i, j) - 2.d0 * p(i, j) + pold(i, j))
        end do
      end do
      tdt = tdt + tdt
    else
      uold = u
      vold = v
      pold = p
      tdt = tdt + tdt
    end if
    u = unew
    v = vnew
    p = pnew
    tdt = min(tdt, 2.d0 * dt)
  end subroutine calc3
end program shallow
