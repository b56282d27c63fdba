! The driver of `the_runtime_stride_maps_agree_with_enumeration` (tests.rs):
! it checks the owners and owned ranges of BLOCK dimensions aligned with
! strides other than 1 (reversed too) against a brute-force enumeration.
program stride_maps
  use hpf_runtime
  implicit none
  type(hpf_desc) :: d
  integer :: p, r, i, s, lb, n, toff, off, tl, tu, block, owner, lo, hi, holders, errors
  errors = 0
  tl = 1
  tu = 60
  do p = 1, 5
    hpf_nprocs = p
    do s = -3, 3
      if (s == 0) cycle
      do block = 0, 15, 5
        if (block * p < tu - tl + 1) cycle
        do lb = -1, 2
          do n = 0, 13
            do toff = 0, 4
              ! The array's lowest cell is tl + toff.
              if (s > 0) then
                off = tl + toff - s * lb
              else
                off = tl + toff - s * (lb + n - 1)
              end if
              d = hpf_make_desc(lb, lb + n - 1, off, tl, tu, block, 0)
              d%s = s
              do i = d%lb, d%ub
                owner = (s * i + off - tl) / d%m
                holders = 0
                do r = 0, p - 1
                  call hpf_owned(d, r, lo, hi)
                  if (lo <= i .and. i <= hi) then
                    holders = holders + 1
                    if (r /= owner) errors = errors + 1
                  end if
                end do
                if (holders /= 1 .or. hpf_owner(d, i) /= owner) errors = errors + 1
                hpf_rank = owner
                if (.not. hpf_owns(d, i)) errors = errors + 1
              end do
              ! Nothing owned outside the bounds.
              do r = 0, p - 1
                call hpf_owned(d, r, lo, hi)
                if (lo <= hi .and. (lo < d%lb .or. hi > d%ub)) errors = errors + 1
              end do
            end do
          end do
        end do
      end do
    end do
  end do
  print '(a,i0)', 'errors: ', errors
end program stride_maps
