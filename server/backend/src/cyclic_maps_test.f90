! The driver of `the_runtime_cyclic_maps_agree_with_enumeration` (tests.rs): it
! checks the runtime's CYCLIC maps against a brute-force enumeration.
program cyclic_maps
  use hpf_runtime
  implicit none
  type(hpf_desc) :: d
  integer :: p, r, i, m, lb, n, off, toff, j, jj, owner, lx, plo, phi, owned, first_lx, errors
  integer :: q, step, first, last, c, lo, hi, k, n_brute, n_courses
  integer :: brute(200), courses(200)
  errors = 0
  do p = 1, 5
    hpf_nprocs = p
    do m = 1, 4
      do lb = -1, 2
        do n = 0, 13
          do toff = 0, 3, 3
            off = 1 - lb
            d = hpf_make_desc(lb, lb + n - 1, off, 1 - toff, 40, m, 1)
            ! The owner and the local position of each element, by enumeration.
            do i = d%lb, d%ub
              j = i + d%off - d%tl
              owner = mod(j / m, p)
              lx = 0
              do jj = 0, j - 1
                if (mod(jj / m, p) == owner) lx = lx + 1
              end do
              if (hpf_owner(d, i) /= owner .or. hpf_lx(d, i) /= lx .or. hpf_cyclic_global(d, owner, lx) /= i) then
                errors = errors + 1
              end if
              do r = 0, p - 1
                hpf_rank = r
                if (hpf_owns(d, i) .neqv. r == owner) errors = errors + 1
              end do
            end do
            do r = 0, p - 1
              hpf_rank = r
              owned = 0
              first_lx = -1
              do i = d%lb, d%ub
                if (mod((i + d%off - d%tl) / m, p) == r) then
                  owned = owned + 1
                  if (first_lx < 0) first_lx = hpf_lx(d, i)
                end if
              end do
              call hpf_cyclic_owned(d, r, plo, phi)
              if (phi - plo + 1 /= owned .or. (owned > 0 .and. plo /= first_lx)) errors = errors + 1
              ! The iterations of each loop the courses give, in order.
              do q = -1, 1
                do step = -3, 3
                  if (step == 0) cycle
                  first = d%lb - q
                  last = d%ub - q
                  if (step < 0) then
                    first = d%ub - q
                    last = d%lb - q + 1
                  end if
                  n_brute = 0
                  do i = first, last, step
                    if (mod((i + q + d%off - d%tl) / m, p) == r) then
                      n_brute = n_brute + 1
                      brute(n_brute) = i
                    end if
                  end do
                  n_courses = 0
                  do c = 0, hpf_courses(d) - 1
                    call hpf_course_bounds(d, q, first, last, step, c, lo, hi)
                    do k = lo, hi, step
                      n_courses = n_courses + 1
                      courses(n_courses) = k
                    end do
                  end do
                  if (n_courses /= n_brute) then
                    errors = errors + 1
                  else if (any(courses(1:n_courses) /= brute(1:n_brute))) then
                    errors = errors + 1
                  end if
                end do
              end do
            end do
          end do
        end do
      end do
    end do
  end do
  print '(a, i0)', 'errors: ', errors
end program cyclic_maps
