! Hand-written MPI version of gauss.f90: columns dealt out cyclically, the
! owner of column k finds the pivot, swaps and scales its column and
! broadcasts the pivot row's index with the multipliers in one message;
! every process swaps the two rows in its own columns and updates them.
! Same arithmetic, in the same order, as the HPF version.
program gauss_mpi
  use mpi_f08
  implicit none
  integer, parameter :: n = 1200, nsteps = @SWEEPS@
  double precision, allocatable :: a(:, :), full(:, :)
  double precision :: x(n), t, pivot, buf(n + 1)
  integer :: rank, np, nlocal, i, j, jl, k, kl, ipiv, owner, first
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  ! Global column j lives on rank mod(j - 1, np) at local index (j - 1) / np + 1.
  nlocal = max(0, (n + 1 - rank + np - 1) / np)
  allocate (a(n, max(nlocal, 1)))
  do jl = 1, nlocal
    j = rank + 1 + (jl - 1) * np
    do i = 1, n
      a(i, jl) = modulo(sin(dble(i * (n + 1) + j)) * 1000.d0, 1.d0) - 0.5d0
    end do
  end do
  do k = 1, min(nsteps, n - 1)
    owner = mod(k - 1, np)
    if (rank == owner) then
      kl = (k - 1) / np + 1
      ipiv = maxloc(abs(a(k:n, kl)), 1) + k - 1
      t = a(k, kl)
      a(k, kl) = a(ipiv, kl)
      a(ipiv, kl) = t
      pivot = a(k, kl)
      do i = k + 1, n
        a(i, kl) = a(i, kl) / pivot
      end do
      buf(1) = ipiv
      buf(2:n - k + 1) = a(k + 1:n, kl)
    end if
    call MPI_Bcast(buf, n - k + 1, MPI_DOUBLE_PRECISION, owner, MPI_COMM_WORLD)
    ipiv = nint(buf(1))
    ! This rank's first column after k.
    first = (k - rank + np - 1) / np + 1
    if (rank + 1 + (first - 1) * np <= k) first = first + 1
    do jl = first, nlocal
      if (ipiv /= k) then
        t = a(k, jl)
        a(k, jl) = a(ipiv, jl)
        a(ipiv, jl) = t
      end if
      do i = k + 1, n
        a(i, jl) = a(i, jl) - buf(i - k + 1) * a(k, jl)
      end do
    end do
  end do
  ! The matrix on rank 0 for the back substitution.
  if (rank == 0) allocate (full(n, n + 1))
  do j = 1, n + 1
    owner = mod(j - 1, np)
    jl = (j - 1) / np + 1
    if (rank == 0 .and. owner == 0) then
      full(:, j) = a(:, jl)
    else if (rank == 0) then
      call MPI_Recv(full(:, j), n, MPI_DOUBLE_PRECISION, owner, j, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    else if (rank == owner) then
      call MPI_Send(a(:, jl), n, MPI_DOUBLE_PRECISION, 0, j, MPI_COMM_WORLD)
    end if
  end do
  if (rank == 0) then
    do i = n, 1, -1
      x(i) = full(i, n + 1)
      do j = i + 1, n
        x(i) = x(i) - full(i, j) * x(j)
      end do
      x(i) = x(i) / full(i, i)
    end do
    print '(a, es20.10)', ' sum of x', sum(x)
    print '(3es20.10)', x(1), x(n / 2), x(n)
  end if
  call MPI_Finalize()
end program gauss_mpi
