! Hand-written MPI version of swm_cshift.f90: columns in blocks over the
! processes, the one halo column each field needs (left or right)
! exchanged with the periodic neighbours, explicit loops (the first dimension's wrap through index
! tables). Same arithmetic, in the same order, as the CSHIFT version.
program swm_cshift_mpi
  use mpi_f08
  implicit none
  integer, parameter :: n = 512, itmax = @SWEEPS@
  double precision, allocatable :: u(:, :), v(:, :), p(:, :), unew(:, :), vnew(:, :), pnew(:, :)
  double precision, allocatable :: uold(:, :), vold(:, :), pold(:, :), cu(:, :), cv(:, :), z(:, :), h(:, :)
  double precision :: dt, dx, dy, a, alpha, el, pi, tpi, di, dj, pcf
  double precision :: fsdx, fsdy, tdts8, tdtsdx, tdtsdy, local, total, probe(3)
  integer :: rank, np, nb, jlo, jhi, nl, left, right, i, j, jg, ncycle, k
  integer :: ip(n), im(n), owner(3), at(3, 2)
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  nb = (n + np - 1) / np
  jlo = rank * nb + 1
  jhi = min(n, jlo + nb - 1)
  nl = max(0, jhi - jlo + 1)
  left = modulo(rank - 1, np)
  right = modulo(rank + 1, np)
  allocate (u(n, 0:nl+1), v(n, 0:nl+1), p(n, 0:nl+1), unew(n, 0:nl+1), vnew(n, 0:nl+1), pnew(n, 0:nl+1))
  allocate (uold(n, 0:nl+1), vold(n, 0:nl+1), pold(n, 0:nl+1), cu(n, 0:nl+1), cv(n, 0:nl+1))
  allocate (z(n, 0:nl+1), h(n, 0:nl+1))
  do i = 1, n
    ip(i) = modulo(i, n) + 1
    im(i) = modulo(i - 2, n) + 1
  end do
  dt = 90.d0
  dx = 1.d5
  dy = 1.d5
  a = 1.d6
  alpha = .001d0
  el = n * dx
  pi = 4.d0 * atan(1.d0)
  tpi = pi + pi
  di = tpi / n
  dj = tpi / n
  pcf = pi * pi * a * a / (el * el)
  fsdx = 4.d0 / dx
  fsdy = 4.d0 / dy
  tdts8 = dt / 8.d0
  tdtsdx = dt / dx
  tdtsdy = dt / dy
  do j = 1, nl
    jg = jlo + j - 1
    do i = 1, n
      p(i, j) = pcf * (cos(2.d0 * (i - 1) * di) + cos(2.d0 * (jg - 1) * dj)) + 50000.d0
      u(i, j) = 0.1d0 * sin((i - 1) * di) * cos((jg - 1) * dj)
      v(i, j) = 0.1d0 * cos((i - 1) * di) * sin((jg - 1) * dj)
    end do
  end do
  uold = u
  vold = v
  pold = p
  do ncycle = 1, itmax
    call from_left(p)
    call from_left(u)
    call from_right(v)
    do j = 1, nl
      do i = 1, n
        cu(i, j) = .5d0 * (p(i, j) + p(im(i), j)) * u(i, j)
        cv(i, j) = .5d0 * (p(i, j) + p(i, j-1)) * v(i, j)
        z(i, j) = (fsdx * (v(i, j) - v(im(i), j)) - fsdy * (u(i, j) - u(i, j-1))) &
          / (p(im(i), j-1) + p(i, j-1) + p(i, j) + p(im(i), j))
        h(i, j) = p(i, j) + .25d0 * (u(ip(i), j)**2 + u(i, j) * u(i, j) + v(i, j+1)**2 + v(i, j) * v(i, j))
      end do
    end do
    call from_left(cu)
    call from_right(cv)
    call from_right(z)
    call from_left(h)
    do j = 1, nl
      do i = 1, n
        unew(i, j) = uold(i, j) + tdts8 * (z(i, j+1) + z(i, j)) &
          * (cv(i, j+1) + cv(im(i), j+1) + cv(im(i), j) + cv(i, j)) &
          - tdtsdx * (h(i, j) - h(im(i), j))
        vnew(i, j) = vold(i, j) - tdts8 * (z(ip(i), j) + z(i, j)) &
          * (cu(ip(i), j) + cu(i, j) + cu(i, j-1) + cu(ip(i), j-1)) &
          - tdtsdy * (h(i, j) - h(i, j-1))
        pnew(i, j) = pold(i, j) - tdtsdx * (cu(ip(i), j) - cu(i, j)) - tdtsdy * (cv(i, j+1) - cv(i, j))
      end do
    end do
    do j = 1, nl
      do i = 1, n
        uold(i, j) = u(i, j) + alpha * (unew(i, j) - 2.d0 * u(i, j) + uold(i, j))
        vold(i, j) = v(i, j) + alpha * (vnew(i, j) - 2.d0 * v(i, j) + vold(i, j))
        pold(i, j) = p(i, j) + alpha * (pnew(i, j) - 2.d0 * p(i, j) + pold(i, j))
        u(i, j) = unew(i, j)
        v(i, j) = vnew(i, j)
        p(i, j) = pnew(i, j)
      end do
    end do
  end do
  local = sum(p(:, 1:nl))
  call MPI_Reduce(local, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD)
  ! The three probes, from their owners to rank 0.
  at(:, 1) = [n/2, n/4, 3*n/4]
  at(:, 2) = [n/2, 3*n/4, n/4]
  probe = 0
  do k = 1, 3
    owner(k) = (at(k, 2) - 1) / nb
    if (owner(k) == rank) then
      select case (k)
      case (1)
        probe(k) = p(at(k, 1), at(k, 2) - jlo + 1)
      case (2)
        probe(k) = u(at(k, 1), at(k, 2) - jlo + 1)
      case default
        probe(k) = v(at(k, 1), at(k, 2) - jlo + 1)
      end select
    end if
  end do
  call MPI_Allreduce(MPI_IN_PLACE, probe, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    print '(a, es20.10)', ' mean height', total / (n * n)
    print '(3es20.10)', probe
  end if
  call MPI_Finalize()
contains
  ! The left neighbour's last column into the halo column 0 (periodic).
  subroutine from_left(x)
    double precision, intent(inout) :: x(:, 0:)
    call MPI_Sendrecv(x(:, nl), n, MPI_DOUBLE_PRECISION, right, 1, x(:, 0), n, MPI_DOUBLE_PRECISION, left, 1, &
      MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  end subroutine from_left

  ! The right neighbour's first column into the halo column nl+1.
  subroutine from_right(x)
    double precision, intent(inout) :: x(:, 0:)
    call MPI_Sendrecv(x(:, 1), n, MPI_DOUBLE_PRECISION, left, 2, x(:, nl+1), n, MPI_DOUBLE_PRECISION, right, 2, &
      MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  end subroutine from_right
end program swm_cshift_mpi
