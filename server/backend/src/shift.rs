//! CSHIFT and EOSHIFT between arrays laid out alike, by what they mean: a
//! shift along a dimension that is not distributed is a local copy; along a
//! distributed dimension each process receives from the owners of the
//! elements its part needs the slabs (its owned elements at one index of
//! that dimension) it does not hold itself — the halo the shift crosses,
//! |SHIFT| slabs for BLOCK — and copies the rest of its part locally in
//! runs of consecutive slabs. Both sides of every transfer are computed
//! from the descriptor alone (a loop over the shifted dimension's global
//! indices), so the counts need no exchange, and the slabs go by messages
//! between the partners alone (no collective over all processes).
//! `permute.rs` plans the assignments (and `hoist.rs` puts shifts inside
//! expressions into such assignments); arrays laid out differently take
//! its general permutation.

/// The runtime routine of one element type.
pub(crate) fn runtime(suffix: &str, fortran_type: &str, mpi: &str) -> String {
    format!(
        r#"
  ! x = cshift(y, shift, pdim) (kind 2) or eoshift(y, shift, fill, pdim)
  ! (kind 3), x and y laid out alike (local bounds xlo:xhi, ylo:yhi;
  ! descriptors dx along the distributed dimensions xdim; glb and ext the
  ! first global index and the extent along pdim). Every process calls it.
  subroutine hpf_shift_{suffix}(y, ylo, yhi, x, xlo, xhi, dx, xdim, kind, shift, pdim, glb, ext, fill)
    {fortran_type}, intent(in) :: y(*)
    {fortran_type}, intent(inout) :: x(*)
    integer, intent(in) :: ylo(:), yhi(:), xlo(:), xhi(:), xdim(:)
    type(hpf_desc), intent(in) :: dx(:)
    integer, intent(in) :: kind, shift, pdim, glb, ext
    {fortran_type}, intent(in) :: fill
    integer :: yl(3), yh(3), xl(3), xh(3)
    yl = 1
    yh = 1
    xl = 1
    xh = 1
    yl(1:size(ylo)) = ylo
    yh(1:size(yhi)) = yhi
    xl(1:size(xlo)) = xlo
    xh(1:size(xhi)) = xhi
    call hpf_shift_box_{suffix}(y, yl, yh, x, xl, xh, dx, xdim, kind, shift, pdim, glb, ext, fill)
  end subroutine hpf_shift_{suffix}

  ! hpf_shift_{suffix} on the arrays seen as 3-D boxes.
  subroutine hpf_shift_box_{suffix}(y, yl, yh, x, xl, xh, dx, xdim, kind, shift, pdim, glb, ext, fill)
    integer, intent(in) :: yl(3), yh(3), xl(3), xh(3), xdim(:)
    {fortran_type}, intent(in) :: y(yl(1):yh(1), yl(2):yh(2), yl(3):yh(3))
    {fortran_type}, intent(inout) :: x(xl(1):xh(1), xl(2):xh(2), xl(3):xh(3))
    type(hpf_desc), intent(in) :: dx(:)
    integer, intent(in) :: kind, shift, pdim, glb, ext
    {fortran_type}, intent(in) :: fill
    integer :: lo(3), hi(3), e(3), k, axis, me, slab, g, r, ox, oy, rk, p, q, pass, step
    integer :: scount(0:hpf_nprocs - 1), rcount(0:hpf_nprocs - 1)
    integer :: sdispl(0:hpf_nprocs - 1), rdispl(0:hpf_nprocs - 1)
    integer :: snext(0:hpf_nprocs - 1), rnext(0:hpf_nprocs - 1), nreq
    type(MPI_Request) :: req(2 * hpf_nprocs)
    ! Per owned index p along pdim: its slab is fill (0), the slab at(p) of
    ! y (1) or the received slab starting after got(at(p)) (2).
    integer, allocatable :: mode(:), at(:)
    {fortran_type}, allocatable, asynchronous :: sent(:), got(:)
    lo = xl
    hi = xh
    axis = 0
    do k = 1, size(xdim)
      call hpf_owned_local(dx(k), hpf_me(dx(k)), lo(xdim(k)), hi(xdim(k)))
      if (xdim(k) == pdim) axis = k
    end do
    e = max(0, hi - lo + 1)
    e(pdim) = 1
    slab = product(e)
    allocate (mode(lo(pdim):max(lo(pdim), hi(pdim))), at(lo(pdim):max(lo(pdim), hi(pdim))))
    if (axis == 0) then
      do p = lo(pdim), hi(pdim)
        r = p - glb + shift
        if (kind == 2) r = modulo(r, ext)
        mode(p) = 0
        if (r >= 0 .and. r < ext) then
          mode(p) = 1
          at(p) = glb + r
        end if
      end do
    else
      me = hpf_me(dx(axis))
      ! The rank one step along this axis of the grid away.
      step = 1
      if (axis == 2) step = hpf_np(dx(1))
      scount = 0
      rcount = 0
      allocate (sent(0), got(0))
      do pass = 1, 2
        do g = glb, glb + ext - 1
          r = g - glb + shift
          if (kind == 2) r = modulo(r, ext)
          ox = hpf_owner(dx(axis), g)
          if (r < 0 .or. r >= ext) then
            if (ox == me) mode(hpf_lx(dx(axis), g)) = 0
            cycle
          end if
          oy = hpf_owner(dx(axis), glb + r)
          if (ox == me .and. oy == me) then
            mode(hpf_lx(dx(axis), g)) = 1
            at(hpf_lx(dx(axis), g)) = hpf_lx(dx(axis), glb + r)
          else if (ox == me) then
            rk = hpf_rank + (oy - me) * step
            if (pass == 1) then
              rcount(rk) = rcount(rk) + slab
            else
              mode(hpf_lx(dx(axis), g)) = 2
              at(hpf_lx(dx(axis), g)) = rdispl(rk) + rnext(rk)
              rnext(rk) = rnext(rk) + slab
            end if
          else if (oy == me) then
            rk = hpf_rank + (ox - me) * step
            if (pass == 1) then
              scount(rk) = scount(rk) + slab
            else
              q = hpf_lx(dx(axis), glb + r)
              k = sdispl(rk) + snext(rk)
              select case (pdim)
              case (1)
                sent(k + 1:k + slab) = reshape(y(q, lo(2):hi(2), lo(3):hi(3)), [slab])
              case (2)
                sent(k + 1:k + slab) = reshape(y(lo(1):hi(1), q, lo(3):hi(3)), [slab])
              case default
                sent(k + 1:k + slab) = reshape(y(lo(1):hi(1), lo(2):hi(2), q), [slab])
              end select
              snext(rk) = snext(rk) + slab
            end if
          end if
        end do
        if (pass == 1) then
          sdispl(0) = 0
          rdispl(0) = 0
          do rk = 1, hpf_nprocs - 1
            sdispl(rk) = sdispl(rk - 1) + scount(rk - 1)
            rdispl(rk) = rdispl(rk - 1) + rcount(rk - 1)
          end do
          deallocate (sent, got)
          allocate (sent(sum(scount)), got(sum(rcount)))
          snext = 0
          rnext = 0
        end if
      end do
      ! Messages to and from the partners only: no collective over all ranks.
      nreq = 0
      do rk = 0, hpf_nprocs - 1
        if (rcount(rk) > 0) then
          nreq = nreq + 1
          call MPI_Irecv(got(rdispl(rk) + 1:rdispl(rk) + rcount(rk)), rcount(rk), {mpi}, rk, 29, &
            MPI_COMM_WORLD, req(nreq))
        end if
      end do
      do rk = 0, hpf_nprocs - 1
        if (scount(rk) > 0) then
          nreq = nreq + 1
          call MPI_Isend(sent(sdispl(rk) + 1:sdispl(rk) + scount(rk)), scount(rk), {mpi}, rk, 29, &
            MPI_COMM_WORLD, req(nreq))
        end if
      end do
      call MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE)
      call hpf_stat_sent(scount)
    end if
    ! The local runs of consecutive slabs in one copy each, then the rest.
    p = lo(pdim)
    do while (p <= hi(pdim))
      q = p
      if (mode(p) == 1) then
        do while (q < hi(pdim))
          if (mode(q + 1) /= 1 .or. at(q + 1) /= at(q) + 1) exit
          q = q + 1
        end do
        select case (pdim)
        case (1)
          x(p:q, lo(2):hi(2), lo(3):hi(3)) = y(at(p):at(p) + q - p, lo(2):hi(2), lo(3):hi(3))
        case (2)
          x(lo(1):hi(1), p:q, lo(3):hi(3)) = y(lo(1):hi(1), at(p):at(p) + q - p, lo(3):hi(3))
        case default
          x(lo(1):hi(1), lo(2):hi(2), p:q) = y(lo(1):hi(1), lo(2):hi(2), at(p):at(p) + q - p)
        end select
      else if (mode(p) == 2) then
        k = at(p)
        select case (pdim)
        case (1)
          x(p, lo(2):hi(2), lo(3):hi(3)) = reshape(got(k + 1:k + slab), [e(2), e(3)])
        case (2)
          x(lo(1):hi(1), p, lo(3):hi(3)) = reshape(got(k + 1:k + slab), [e(1), e(3)])
        case default
          x(lo(1):hi(1), lo(2):hi(2), p) = reshape(got(k + 1:k + slab), [e(1), e(2)])
        end select
      else
        select case (pdim)
        case (1)
          x(p, lo(2):hi(2), lo(3):hi(3)) = fill
        case (2)
          x(lo(1):hi(1), p, lo(3):hi(3)) = fill
        case default
          x(lo(1):hi(1), lo(2):hi(2), p) = fill
        end select
      end if
      p = q + 1
    end do
  end subroutine hpf_shift_box_{suffix}
"#
    )
}
