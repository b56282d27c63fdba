! Hand-written MPI version of gather2d.f90: rows of A and B in blocks, rows
! of C round robin; the rows each process reads of the others' C are listed
! once (the inspector), then every step sends them by one MPI_Alltoallv.
program gather2d_mpi
  use mpi_f08
  implicit none
  integer, parameter :: n = 4000, m = 400, steps = @SWEEPS@
  real, allocatable :: a(:, :), b(:, :), c(:, :), sendbuf(:, :), recvbuf(:, :)
  integer, allocatable :: scount(:), rcount(:), sdispl(:), rdispl(:), want(:), asked(:), slot(:)
  integer :: idx(n), i, j, t, me, np, lo, hi, nc, r, k, g, row
  real :: probe(3), found(3)
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  lo = me * ((n + np - 1) / np) + 1
  hi = min(n, lo + (n + np - 1) / np - 1)
  nc = (n - me + np - 1) / np  ! rows me+1, me+1+np, ... of C
  allocate (a(lo:hi, m), b(lo:hi, m), c(nc, m))
  do i = 1, n
    idx(i) = mod(7 * i, n) + 1
  end do
  do j = 1, m
    do i = lo, hi
      a(i, j) = real(mod(i + 3 * j, 17))
    end do
    do k = 1, nc
      g = me + 1 + (k - 1) * np
      c(k, j) = real(mod(5 * g + j, 23))
    end do
  end do
  b = 0.0
  ! Inspector: the rows this process reads, by owner; each owner learns which to send.
  allocate (scount(0:np - 1), rcount(0:np - 1), sdispl(0:np - 1), rdispl(0:np - 1), slot(n))
  rcount = 0
  do i = lo, hi
    r = mod(idx(i) - 1, np)
    rcount(r) = rcount(r) + 1
  end do
  rdispl(0) = 0
  do r = 1, np - 1
    rdispl(r) = rdispl(r - 1) + rcount(r - 1)
  end do
  allocate (want(hi - lo + 1))
  scount = rdispl  ! running positions
  do i = lo, hi
    r = mod(idx(i) - 1, np)
    scount(r) = scount(r) + 1
    want(scount(r)) = idx(i)
    slot(i) = scount(r)
  end do
  call MPI_Alltoall(rcount, 1, MPI_INTEGER, scount, 1, MPI_INTEGER, MPI_COMM_WORLD)
  sdispl(0) = 0
  do r = 1, np - 1
    sdispl(r) = sdispl(r - 1) + scount(r - 1)
  end do
  allocate (asked(max(sum(scount), 1)))
  call MPI_Alltoallv(want, rcount, rdispl, MPI_INTEGER, asked, scount, sdispl, MPI_INTEGER, MPI_COMM_WORLD)
  allocate (sendbuf(m, max(sum(scount), 1)), recvbuf(m, max(hi - lo + 1, 1)))
  do t = 1, steps
    do k = 1, sum(scount)
      sendbuf(:, k) = c((asked(k) - 1) / np + 1, :)
    end do
    call MPI_Alltoallv(sendbuf, m * scount, m * sdispl, MPI_REAL, recvbuf, m * rcount, m * rdispl, MPI_REAL, &
      MPI_COMM_WORLD)
    do j = 1, m
      do i = lo, hi
        b(i, j) = 0.5 * b(i, j) + a(i, j) + 0.125 * recvbuf(j, slot(i))
      end do
    end do
    c = c * 0.5 + 1.0
  end do
  probe = 0.0
  row = n / 2
  if (lo <= 1 .and. 1 <= hi) probe(1) = b(1, 1)
  if (lo <= row .and. row <= hi) probe(2) = b(row, m / 2)
  if (lo <= n .and. n <= hi) probe(3) = b(n, m)
  call MPI_Reduce(probe, found, 3, MPI_REAL, MPI_SUM, 0, MPI_COMM_WORLD)
  if (me == 0) print *, found
  call MPI_Finalize()
end program gather2d_mpi
