! Histogram of particles: N particles (BLOCK) deposit one count each into
! NB bins (BLOCK) through their cell index, @SWEEPS@ times, the particles
! moving between sweeps. The deposit is a scatter: hpf-ls runs each
! process's particles and sends the bins' counts to their owners.
program histogram
  implicit none
  integer, parameter :: n = 10000000, nb = 1000, sweeps = @SWEEPS@
  integer :: cell(n), hist(nb), p, s
!HPF$ DISTRIBUTE CELL(BLOCK)
!HPF$ DISTRIBUTE HIST(BLOCK)
  do p = 1, n
    cell(p) = mod(p, 997) + 1
  end do
  hist = 0
  do s = 1, sweeps
    do p = 1, n
      hist(cell(p)) = hist(cell(p)) + 1
    end do
!HPF$ INDEPENDENT
    do p = 1, n
      cell(p) = mod(3 * cell(p) + mod(p, 13), nb) + 1
    end do
  end do
  print *, sum(hist), maxval(hist), minval(hist)
end program histogram
