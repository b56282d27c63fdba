! Hand-written MPI version of shallow_water.f90: the columns cut in blocks
! as HPF's (*, BLOCK) cuts them, one halo column exchanged with each
! neighbour before each subroutine that reads across columns, the periodic
! boundary columns sent between the first and the last process, and the
! sums taken along the chain of processes in the sequential order (so the
! output is the sequential program's, bit for bit).
program shallow_mpi
  use mpi_f08
  implicit none
  integer, parameter :: m = 2048, n = 2048, itmax = @SWEEPS@
  double precision, allocatable, dimension(:, :) :: u, v, p, unew, vnew, pnew, uold, vold, pold, cu, cv, z, h
  double precision :: col(m+1)
  double precision :: dt, tdt, dx, dy, alpha, el, pi, tpi, di, dj, pcf, a
  double precision :: fsdx, fsdy, tdts8, tdtsdx, tdtsdy, csum
  integer :: i, j, ncycle, rank, np, b, jlo, jhi, left, right, first, last
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  b = (n + 1 + np - 1) / np
  jlo = rank * b + 1
  jhi = min((rank + 1) * b, n + 1)
  first = 0
  last = n / b
  left = merge(rank - 1, MPI_PROC_NULL, rank > 0)
  right = merge(rank + 1, MPI_PROC_NULL, rank < last)
  if (rank > last) right = MPI_PROC_NULL
  allocate (u(m+1, jlo-1:jhi+1))
  allocate (v(m+1, jlo-1:jhi+1))
  allocate (p(m+1, jlo-1:jhi+1))
  allocate (unew(m+1, jlo-1:jhi+1))
  allocate (vnew(m+1, jlo-1:jhi+1))
  allocate (pnew(m+1, jlo-1:jhi+1))
  allocate (uold(m+1, jlo-1:jhi+1))
  allocate (vold(m+1, jlo-1:jhi+1))
  allocate (pold(m+1, jlo-1:jhi+1))
  allocate (cu(m+1, jlo-1:jhi+1))
  allocate (cv(m+1, jlo-1:jhi+1))
  allocate (z(m+1, jlo-1:jhi+1))
  allocate (h(m+1, jlo-1:jhi+1))
  u = 0.d0
  v = 0.d0
  p = 0.d0
  unew = 0.d0
  vnew = 0.d0
  pnew = 0.d0
  uold = 0.d0
  vold = 0.d0
  pold = 0.d0
  cu = 0.d0
  cv = 0.d0
  z = 0.d0
  h = 0.d0
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
  do j = jlo, jhi
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
      csum = chain_sum(p)
      if (rank == 0) print '(a, i6, es22.12)', ' step', ncycle, csum
    end if
  end do
  csum = chain_sum(p)
  csum = csum + chain_sum(u)
  csum = csum + chain_sum(v)
  if (rank == 0) print '(a, es22.12)', ' checksum', csum
  call print_elements()
  call MPI_Finalize()
contains
  ! The halo columns jlo-1 and jhi+1 of x from the neighbours.
  subroutine exchange(x)
    double precision, intent(inout) :: x(:, jlo-1:)
    call MPI_Sendrecv(x(:, jhi), m + 1, MPI_DOUBLE_PRECISION, right, 1, x(:, jlo-1), m + 1, &
      MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call MPI_Sendrecv(x(:, jlo), m + 1, MPI_DOUBLE_PRECISION, left, 2, x(:, jhi+1), m + 1, &
      MPI_DOUBLE_PRECISION, right, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  end subroutine exchange

  ! Column `from` of x, on the process that owns column `to` (into col).
  subroutine column(x, from, to)
    double precision, intent(in) :: x(:, jlo-1:)
    integer, intent(in) :: from, to
    integer :: src, dst
    src = (from - 1) / b
    dst = (to - 1) / b
    if (src == dst) then
      if (rank == src) col = x(:, from)
    else if (rank == src) then
      call MPI_Send(x(:, from), m + 1, MPI_DOUBLE_PRECISION, dst, 3, MPI_COMM_WORLD)
    else if (rank == dst) then
      call MPI_Recv(col, m + 1, MPI_DOUBLE_PRECISION, src, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    end if
  end subroutine column

  ! sum(x(1:m, 1:n)) in the sequential order: each process adds its
  ! columns to its left neighbour's partial sum; every process gets it.
  double precision function chain_sum(x)
    double precision, intent(in) :: x(:, jlo-1:)
    double precision :: s
    s = 0.d0
    if (rank > 0 .and. rank <= last) call MPI_Recv(s, 1, MPI_DOUBLE_PRECISION, rank - 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    do j = jlo, min(jhi, n)
      do i = 1, m
        s = s + x(i, j)
      end do
    end do
    if (rank < last) call MPI_Send(s, 1, MPI_DOUBLE_PRECISION, rank + 1, 4, MPI_COMM_WORLD)
    call MPI_Bcast(s, 1, MPI_DOUBLE_PRECISION, last, MPI_COMM_WORLD)
    chain_sum = s
  end function chain_sum

  subroutine print_elements()
    double precision :: e(3)
    e = 0.d0
    if (n/2 >= jlo .and. n/2 <= jhi) e(1) = p(m/2, n/2)
    if (3*n/4 >= jlo .and. 3*n/4 <= jhi) e(2) = u(m/4, 3*n/4)
    if (n/4 >= jlo .and. n/4 <= jhi) e(3) = v(3*m/4, n/4)
    if (rank == 0) then
      call MPI_Reduce(MPI_IN_PLACE, e, 3, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD)
      print '(3es22.12)', e
    else
      call MPI_Reduce(e, e, 3, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD)
    end if
  end subroutine print_elements

  subroutine calc1()
    fsdx = 4.d0 / dx
    fsdy = 4.d0 / dy
    call exchange(p)
    call exchange(u)
    call exchange(v)
    do j = jlo, min(jhi, n)
      do i = 1, m
        cu(i+1, j) = .5d0 * (p(i+1, j) + p(i, j)) * u(i+1, j)
      end do
    end do
    do j = max(jlo, 2), jhi
      do i = 1, m
        cv(i, j) = .5d0 * (p(i, j) + p(i, j-1)) * v(i, j)
      end do
    end do
    do j = max(jlo, 2), jhi
      do i = 1, m
        z(i+1, j) = (fsdx * (v(i+1, j) - v(i, j)) - fsdy * (u(i+1, j) - u(i+1, j-1))) &
          / (p(i, j-1) + p(i+1, j-1) + p(i+1, j) + p(i, j))
      end do
    end do
    do j = jlo, min(jhi, n)
      do i = 1, m
        h(i, j) = p(i, j) + .25d0 * (u(i+1, j) * u(i+1, j) + u(i, j) * u(i, j) &
          + v(i, j+1) * v(i, j+1) + v(i, j) * v(i, j))
      end do
    end do
    do j = jlo, min(jhi, n)
      cu(1, j) = cu(m+1, j)
      h(m+1, j) = h(1, j)
    end do
    do j = max(jlo, 2), jhi
      cv(m+1, j) = cv(1, j)
      z(1, j) = z(m+1, j)
    end do
    call column(cu, 1, n + 1)
    if (rank == last) then
      cu(2:m+1, n+1) = col(2:m+1)
      cu(1, n+1) = col(m+1)
    end if
    call column(cv, n + 1, 1)
    if (rank == first) then
      cv(1:m, 1) = col(1:m)
      cv(m+1, 1) = col(1)
    end if
    call column(z, n + 1, 1)
    if (rank == first) then
      z(2:m+1, 1) = col(2:m+1)
      z(1, 1) = col(m+1)
    end if
    call column(h, 1, n + 1)
    if (rank == last) then
      h(1:m, n+1) = col(1:m)
      h(m+1, n+1) = col(1)
    end if
  end subroutine calc1

  subroutine calc2()
    tdts8 = tdt / 8.d0
    tdtsdx = tdt / dx
    tdtsdy = tdt / dy
    call exchange(z)
    call exchange(cv)
    call exchange(cu)
    call exchange(h)
    do j = jlo, min(jhi, n)
      do i = 1, m
        unew(i+1, j) = uold(i+1, j) + tdts8 * (z(i+1, j+1) + z(i+1, j)) &
          * (cv(i+1, j+1) + cv(i, j+1) + cv(i, j) + cv(i+1, j)) - tdtsdx * (h(i+1, j) - h(i, j))
      end do
    end do
    do j = max(jlo, 2), jhi
      do i = 1, m
        vnew(i, j) = vold(i, j) - tdts8 * (z(i+1, j) + z(i, j)) &
          * (cu(i+1, j) + cu(i, j) + cu(i, j-1) + cu(i+1, j-1)) - tdtsdy * (h(i, j) - h(i, j-1))
      end do
    end do
    do j = jlo, min(jhi, n)
      do i = 1, m
        pnew(i, j) = pold(i, j) - tdtsdx * (cu(i+1, j) - cu(i, j)) - tdtsdy * (cv(i, j+1) - cv(i, j))
      end do
    end do
    do j = jlo, min(jhi, n)
      unew(1, j) = unew(m+1, j)
      pnew(m+1, j) = pnew(1, j)
    end do
    do j = max(jlo, 2), jhi
      vnew(m+1, j) = vnew(1, j)
    end do
    call column(unew, 1, n + 1)
    if (rank == last) then
      unew(2:m+1, n+1) = col(2:m+1)
      unew(1, n+1) = col(m+1)
    end if
    call column(vnew, n + 1, 1)
    if (rank == first) then
      vnew(1:m, 1) = col(1:m)
      vnew(m+1, 1) = col(1)
    end if
    call column(pnew, 1, n + 1)
    if (rank == last) then
      pnew(1:m, n+1) = col(1:m)
      pnew(m+1, n+1) = col(1)
    end if
  end subroutine calc2

  subroutine calc3()
    if (ncycle > 1) then
      do j = jlo, jhi
        do i = 1, m + 1
          uold(i, j) = u(i, j) + alpha * (unew(i, j) - 2.d0 * u(i, j) + uold(i, j))
          vold(i, j) = v(i, j) + alpha * (vnew(i, j) - 2.d0 * v(i, j) + vold(i, j))
          pold(i, j) = p(i, j) + alpha * (pnew(i, j) - 2.d0 * p(i, j) + pold(i, j))
        end do
      end do
    else
      uold(:, jlo:jhi) = u(:, jlo:jhi)
      vold(:, jlo:jhi) = v(:, jlo:jhi)
      pold(:, jlo:jhi) = p(:, jlo:jhi)
    end if
    tdt = tdt + tdt
    u(:, jlo:jhi) = unew(:, jlo:jhi)
    v(:, jlo:jhi) = vnew(:, jlo:jhi)
    p(:, jlo:jhi) = pnew(:, jlo:jhi)
    tdt = min(tdt, 2.d0 * dt)
  end subroutine calc3
end program shallow_mpi
