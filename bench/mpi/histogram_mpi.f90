! Hand-written MPI version of histogram.f90, for comparison: the same BLOCK
! splits of the particles and of the bins; per sweep each process counts
! its particles into a local array of all the bins, and one
! MPI_Reduce_scatter sums each block of bins onto its owner.
program histogram_mpi
  use mpi_f08
  implicit none
  integer, parameter :: n = 10000000, nb = 1000, sweeps = @SWEEPS@
  integer, allocatable :: cell(:), hist(:), counts(:), mine(:), blocks(:)
  integer :: rank, np, chunk, lo, hi, bchunk, blo, bhi, p, s, r, stats(3)
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  chunk = (n + np - 1) / np
  lo = rank * chunk + 1
  hi = min(lo + chunk - 1, n)
  bchunk = (nb + np - 1) / np
  blo = rank * bchunk + 1
  bhi = min(blo + bchunk - 1, nb)
  allocate (cell(lo:hi), hist(blo:bhi), mine(blo:bhi), counts(nb), blocks(0:np - 1))
  do r = 0, np - 1
    blocks(r) = max(0, min(nb, (r + 1) * bchunk) - r * bchunk)
  end do
  do p = lo, hi
    cell(p) = mod(p, 997) + 1
  end do
  hist = 0
  do s = 1, sweeps
    counts = 0
    do p = lo, hi
      counts(cell(p)) = counts(cell(p)) + 1
    end do
    call MPI_Reduce_scatter(counts, mine, blocks, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    hist = hist + mine
    do p = lo, hi
      cell(p) = mod(3 * cell(p) + mod(p, 13), nb) + 1
    end do
  end do
  stats = [sum(hist), huge(0), huge(0)]
  if (bhi >= blo) stats(2:3) = [-maxval(hist), minval(hist)]
  call MPI_Allreduce(MPI_IN_PLACE, stats(1), 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call MPI_Allreduce(MPI_IN_PLACE, stats(2:3), 2, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD)
  if (rank == 0) print *, stats(1), -stats(2), stats(3)
  call MPI_Finalize()
end program histogram_mpi
