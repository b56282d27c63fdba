! The driver of `the_runtime_grid_maps_agree_with_enumeration` (tests.rs): it
! checks the 2-D grid shapes, block owners, boxes and local loop bounds of
! the runtime against a brute-force enumeration on 1 to 7 processes, and
! the boxes of a CYCLIC(m) first axis (local positions, their elements).
program grid_maps
  use hpf_runtime
  implicit none
  type(hpf_desc) :: d(2)
  integer :: p, r, g1, g2, shape_case, p1, p2, lb1, n1, n2, bl1, bl2, off1, i, j, c1, c2, m1, m2
  integer :: owner, owners, errors, lo(2), hi(2), q, step, first, last, lo1, hi1, k, n_brute, n_local
  integer, parameter :: shapes(2, 5) = reshape([2, 2, 1, 3, 3, 1, 4, 2, 0, 0], [2, 5])
  integer :: seen, x
  errors = 0
  do p = 1, 7
    hpf_nprocs = p
    do shape_case = 1, 5
      p1 = shapes(1, shape_case)
      p2 = shapes(2, shape_case)
      call hpf_grid_shape(p1, p2, g1, g2)
      if (g1 * g2 /= p .or. g1 < 1 .or. g2 < 1) errors = errors + 1
      if (p1 * p2 == p .and. (g1 /= p1 .or. g2 /= p2)) errors = errors + 1
      if (p1 * p2 /= p .and. p2 > p1 .and. g1 > g2) errors = errors + 1
      do lb1 = -1, 1
        do n1 = 1, 9, 4
          do n2 = 1, 8, 3
            do bl1 = 0, 3, 3
              do bl2 = 0, 2, 2
                do off1 = 0, 2, 2
                  ! The block sizes by their definition (BLOCK(m) when the
                  ! blocks cover the template, else BLOCK).
                  m1 = (n1 + off1 + g1 - 1) / g1
                  if (bl1 > 0 .and. bl1 * g1 >= n1 + off1) m1 = bl1
                  m2 = (n2 + g2 - 1) / g2
                  if (bl2 > 0 .and. bl2 * g2 >= n2) m2 = bl2
                  do j = 1, n2
                    do i = lb1, lb1 + n1 - 1
                      ! Template cell i + off1 - lb1 + 1 of 1 .. n1 + off1.
                      c1 = (i + off1 - lb1) / m1
                      c2 = (j - 1) / m2
                      owner = c1 + c2 * g1
                      owners = 0
                      do r = 0, p - 1
                        hpf_rank = r
                        d(1) = hpf_make_grid_desc(lb1, lb1 + n1 - 1, off1 - lb1 + 1, 1, n1 + off1, bl1, 0, 1, p1, p2)
                        d(2) = hpf_make_grid_desc(1, n2, 0, 1, n2, bl2, 0, 2, p1, p2)
                        call hpf_box_i4_212(d, r, lo, hi)
                        if (i >= lo(1) .and. i <= hi(1) .and. j >= lo(2) .and. j <= hi(2)) then
                          owners = owners + 1
                          if (r /= owner) errors = errors + 1
                        end if
                        if ((hpf_owns(d(1), i) .and. hpf_owns(d(2), j)) .neqv. r == owner) errors = errors + 1
                        if (r == owner .and. (hpf_owner(d(1), i) /= c1 .or. hpf_owner(d(2), j) /= c2)) then
                          errors = errors + 1
                        end if
                      end do
                      if (owners /= 1) errors = errors + 1
                    end do
                  end do
                  ! CYCLIC(bl1 + 1) along the first axis: each element once, at
                  ! a local position of its owner's box that maps back to it.
                  seen = 0
                  do r = 0, p - 1
                    hpf_rank = r
                    d(1) = hpf_make_grid_desc(lb1, lb1 + n1 - 1, off1 - lb1 + 1, 1, n1 + off1, bl1 + 1, 1, 1, p1, p2)
                    d(2) = hpf_make_grid_desc(1, n2, 0, 1, n2, bl2, 0, 2, p1, p2)
                    call hpf_box_i4_212(d, r, lo, hi)
                    if (r / g1 /= 0) cycle
                    do x = lo(1), hi(1)
                      i = hpf_gx(d(1), mod(r, g1), x)
                      seen = seen + 1
                      if (i < lb1 .or. i > lb1 + n1 - 1) errors = errors + 1
                      if (mod((i + off1 - lb1) / (bl1 + 1), g1) /= mod(r, g1)) errors = errors + 1
                      if (hpf_lx(d(1), i) /= x .or. .not. hpf_owns(d(1), i)) errors = errors + 1
                    end do
                  end do
                  if (seen /= n1) errors = errors + 1
                  ! The local iterations along the first axis, per process.
                  do r = 0, p - 1
                    hpf_rank = r
                    d(1) = hpf_make_grid_desc(lb1, lb1 + n1 - 1, off1 - lb1 + 1, 1, n1 + off1, bl1, 0, 1, p1, p2)
                    do q = -1, 1
                      do step = -2, 2
                        if (step == 0) cycle
                        first = lb1 - q
                        last = lb1 + n1 - 1 - q
                        if (step < 0) then
                          first = last
                          last = lb1 - q
                        end if
                        n_brute = 0
                        do k = first, last, step
                          if ((k + q + off1 - lb1) / m1 == mod(r, g1)) n_brute = n_brute + 1
                        end do
                        call hpf_local_bounds(d(1), q, first, last, step, lo1, hi1)
                        n_local = 0
                        do k = lo1, hi1, step
                          n_local = n_local + 1
                          if ((k + q + off1 - lb1) / m1 /= mod(r, g1)) errors = errors + 1
                        end do
                        if (n_local /= n_brute) errors = errors + 1
                      end do
                    end do
                  end do
                end do
              end do
            end do
          end do
        end do
      end do
    end do
  end do
  print '(a, i0)', 'errors: ', errors
end program grid_maps
