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
//!
//! A CSHIFT or EOSHIFT by a constant along the one BLOCK-distributed
//! dimension of an array reads it in place instead: the source array gets
//! a shadow as wide as the shift, `hpf_shadow_*` fills it (the periodic
//! neighbour's slabs for CSHIFT, the boundary past the array's end for
//! EOSHIFT; one message per neighbour), and `X = CSHIFT(Y, c, d)` is the
//! local copy `X(.., j, ..) = Y(.., j + c, ..)`. For a temporary of
//! `hoist.rs` the fill takes the place of the temporary's assignment and
//! its readers read `Y(.., hpf_lo + c:hpf_hi + c, ..)` in its place
//! (`resolve_shadow_reads`), when every one reads it at the owned
//! positions of its own layout; otherwise the temporary is assigned as
//! before.

use std::fmt::Write;

use crate::permute::{Permute, PermuteKind};
use crate::{Distributed, Lowering};

/// The comment lines around a temporary's two forms in the lowered text:
/// `MARK temp array dim shift mode`, the shadow fill, `ELSE`, the
/// temporary's assignment, `END`.
pub(crate) const SHADOW_MARK: &str = "!hpf-ls-shadow";
pub(crate) const SHADOW_ELSE: &str = "!hpf-ls-shadow-else";
pub(crate) const SHADOW_END: &str = "!hpf-ls-shadow-end";
/// Before any other assignment of a temporary by `permute.rs`.
pub(crate) const SHADOW_WRITE: &str = "!hpf-ls-shadow-write";

impl Lowering<'_> {
    /// The constant shift of `permute` when it reads its array in place
    /// from a shadow: a CSHIFT or EOSHIFT by a nonzero constant (at most a
    /// quarter of the extent) along the one distributed dimension, BLOCK,
    /// stride 1, of arrays laid out alike.
    pub(crate) fn shadow_shift(&self, permute: &Permute) -> Option<i64> {
        if !matches!(permute.kind, PermuteKind::Cshift | PermuteKind::Eoshift) {
            return None;
        }
        let (x, y) = (self.distributed.get(&permute.to)?, self.distributed.get(&permute.from)?);
        let value = permute.shift_value.filter(|it| *it != 0)?;
        let extent = y.ubs.get(permute.dim)?.known()? - y.lbs.get(permute.dim)?.known()? + 1;
        let fits = y.second.is_none()
            && !y.cyclic
            && y.plain
            && y.stride == 1
            && y.dim == permute.dim
            && value.abs() * 4 <= extent
            && crate::permute::laid_out_alike(x, y)
            // A temporary may be assigned anew while a shift of it is read.
            && !self.hoisted.is_some_and(|it| it.is_temporary(&y.name));
        fits.then_some(value)
    }

    /// Widens the shadow of the array `permute` shifts in place.
    pub(crate) fn grow_shift_shadow(&mut self, permute: &Permute) {
        let Some(value) = self.shadow_shift(permute).filter(|_| permute.to != permute.from) else { return };
        let Some(y) = self.distributed.get_mut(&permute.from) else { return };
        if value > 0 {
            y.shadow_high = y.shadow_high.max(value);
        } else {
            y.shadow_low = y.shadow_low.max(-value);
        }
    }

    /// The call filling the shadow of `permute`'s array for the shift `value`.
    pub(crate) fn shadow_fill_call(&self, permute: &Permute, value: i64, fill: &str) -> String {
        let y = &self.distributed[&permute.from];
        format!(
            "  call hpf_shadow_{suffix}({y}, lbound({y}), ubound({y}), hpf_d_{y}, {kind}, {value}, {dim}, {glb}, {ext}, {fill})",
            suffix = y.suffix,
            y = y.name,
            kind = permute.kind as i32,
            dim = permute.dim + 1,
            glb = y.lbs[permute.dim],
            ext = crate::extent_text(&y.lbs[permute.dim], &y.ubs[permute.dim]),
        )
    }
}

/// `x = y` shifted by `value` along `dim` on this process's part of x,
/// reading y's shadow.
pub(crate) fn shifted_copy(x: &Distributed, y: &Distributed, dim: usize, value: i64) -> String {
    let subscripts = |name: &str, offset: i64| {
        let list: Vec<String> = (0..x.lbs.len())
            .map(|it| match (it == dim, offset) {
                (false, _) => ":".to_string(),
                (true, 0) => "hpf_s_lo:hpf_s_hi".to_string(),
                (true, _) => format!("hpf_s_lo+({offset}):hpf_s_hi+({offset})"),
            })
            .collect();
        format!("{name}({})", list.join(", "))
    };
    let mut out = String::new();
    let _ = writeln!(out, "  block");
    let _ = writeln!(out, "    integer :: hpf_s_lo, hpf_s_hi");
    let _ = writeln!(out, "    call hpf_alloc_bounds(hpf_d_{}, 0, 0, hpf_s_lo, hpf_s_hi)", x.name);
    let _ = writeln!(out, "    {} = {}", subscripts(&x.name, 0), subscripts(&y.name, value));
    let _ = write!(out, "  end block");
    out
}

/// One temporary's two forms in the lowered text (see `SHADOW_MARK`).
struct ShadowBlock {
    temp: String,
    array: String,
    dim: usize,
    value: i64,
    mode: String,
    /// Byte ranges: the whole block, its fill lines, its assignment lines.
    whole: (usize, usize),
    fill: (usize, usize),
    assignment: (usize, usize),
}

/// The lowered program with every temporary's block resolved: the shadow
/// fill, and the temporary's reads up to its next block rewritten into
/// reads of the array's shadow, when each of them is `temp(.., hpf_lo:hpf_hi:1, ..)`
/// (the distributed dimension's subscript) and the array's blocks all fill
/// its shadow alike; else the temporary's assignment. A temporary whose
/// blocks all resolve to fills is not allocated.
pub(crate) fn resolve_shadow_reads(text: &str) -> String {
    if !text.contains(SHADOW_MARK) {
        return text.to_string();
    }
    // The blocks, in text order.
    let mut blocks: Vec<ShadowBlock> = Vec::new();
    // The lines marking other assignments of a temporary: (start, end, temp).
    let mut writes: Vec<(usize, usize, String)> = Vec::new();
    let mut offset = 0;
    let mut open: Option<(ShadowBlock, usize)> = None;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let trimmed = line.trim();
        if trimmed == SHADOW_ELSE {
            if let Some((block, _)) = open.as_mut() {
                block.fill.1 = start;
                block.assignment.0 = offset;
            }
        } else if trimmed == SHADOW_END {
            if let Some((mut block, _)) = open.take() {
                block.assignment.1 = start;
                block.whole.1 = offset;
                blocks.push(block);
            }
        } else if let Some(rest) = trimmed.strip_prefix(SHADOW_WRITE).filter(|it| it.starts_with(' ')) {
            writes.push((start, offset, rest.trim().to_ascii_lowercase()));
        } else if let Some(rest) = trimmed.strip_prefix(SHADOW_MARK).filter(|it| it.starts_with(' ')) {
            let fields: Vec<&str> = rest.split_whitespace().collect();
            if let [temp, array, dim, value, mode] = fields[..] {
                if let (Ok(dim), Ok(value)) = (dim.parse::<usize>(), value.parse::<i64>()) {
                    let block = ShadowBlock {
                        temp: temp.to_ascii_lowercase(),
                        array: array.to_string(),
                        dim,
                        value,
                        mode: mode.to_string(),
                        whole: (start, 0),
                        fill: (offset, 0),
                        assignment: (0, 0),
                    };
                    open = Some((block, start));
                }
            }
        }
    }
    // Arrays whose blocks fill their shadow differently keep their temporaries.
    // (The two sides of a shadow hold different elements past the ends.)
    let mut modes: std::collections::BTreeMap<(&str, bool), &str> = std::collections::BTreeMap::new();
    let mut mixed: Vec<&str> = Vec::new();
    for block in &blocks {
        match modes.insert((&block.array, block.value > 0), &block.mode) {
            Some(mode) if mode != block.mode => mixed.push(&block.array),
            _ => {}
        }
    }
    // Per block: the edits of its reads when it resolves to the fill.
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let mut all_filled: std::collections::BTreeMap<&str, bool> = std::collections::BTreeMap::new();
    for (at, block) in blocks.iter().enumerate() {
        let next_block = blocks[at + 1..].iter().find(|it| it.temp == block.temp).map(|it| it.whole.0);
        let next_write = writes.iter().find(|it| it.0 > block.whole.0 && it.2 == block.temp).map(|it| it.0);
        let end = next_block.into_iter().chain(next_write).min().unwrap_or(text.len());
        let reads = if mixed.contains(&block.array.as_str()) {
            None
        } else if block.temp == "-" {
            // `X = CSHIFT(Y, ...)` itself: no temporary to read.
            Some(Vec::new())
        } else {
            shadow_reads(text, block, block.whole.1, end, &blocks)
        };
        let filled = reads.is_some();
        *all_filled.entry(&block.temp).or_insert(true) &= filled;
        match reads {
            Some(reads) => {
                edits.push((block.whole.0, block.fill.0, String::new()));
                edits.push((block.fill.1, block.whole.1, String::new()));
                edits.extend(reads);
            }
            None => {
                edits.push((block.whole.0, block.assignment.0, String::new()));
                edits.push((block.assignment.1, block.whole.1, String::new()));
            }
        }
    }
    for (start, end, temp) in &writes {
        edits.push((*start, *end, String::new()));
        all_filled.insert(temp, false);
    }
    // The allocations of the temporaries no statement assigns any more.
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let trimmed = line.trim_start().to_ascii_lowercase();
        for (temp, filled) in &all_filled {
            if *filled && trimmed.starts_with(&format!("allocate ({temp}(")) {
                edits.push((start, offset, String::new()));
            }
        }
    }
    edits.sort_by_key(|it| (it.0, it.1));
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end, replacement) in edits {
        if start < at {
            continue;
        }
        out.push_str(&text[at..start]);
        out.push_str(&replacement);
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

/// The rewrites of the reads of `block`'s temporary in `text[from..to]`
/// (outside the blocks) into reads of its array's shadow, or `None` when
/// one is not `temp(.., hpf_lo:hpf_hi:1, ..)` along the shifted dimension.
fn shadow_reads(
    text: &str,
    block: &ShadowBlock,
    from: usize,
    to: usize,
    blocks: &[ShadowBlock],
) -> Option<Vec<(usize, usize, String)>> {
    let bytes = text.as_bytes();
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let lower = text[..to].to_ascii_lowercase();
    let mut edits = Vec::new();
    let mut search = from;
    while let Some(found) = lower[search..].find(&block.temp) {
        let start = search + found;
        let end = start + block.temp.len();
        search = end;
        if (start > 0 && is_ident(bytes[start - 1])) || (end < bytes.len() && is_ident(bytes[end])) {
            continue;
        }
        // Inside another temporary's block: its fill or assignment reads this one.
        if blocks.iter().any(|it| it.whole.0 <= start && start < it.whole.1) {
            return None;
        }
        // A comment line.
        let line_start = text[..start].rfind('\n').map_or(0, |it| it + 1);
        if text[line_start..start].trim_start().starts_with('!') {
            continue;
        }
        if bytes.get(end) != Some(&b'(') {
            return None;
        }
        // The subscripts, split at the commas outside parentheses.
        let mut depth = 0;
        let mut args: Vec<(usize, usize)> = Vec::new();
        let mut arg_start = end + 1;
        let mut close = None;
        for (at, c) in text[end..].bytes().enumerate().map(|(at, c)| (end + at, c)) {
            match c {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        args.push((arg_start, at));
                        close = Some(at);
                        break;
                    }
                }
                b',' if depth == 1 => {
                    args.push((arg_start, at));
                    arg_start = at + 1;
                }
                _ => {}
            }
        }
        let close = close?;
        let &(lo, hi) = args.get(block.dim.checked_sub(1)?)?;
        let squeezed: String = text[lo..hi].chars().filter(|it| !it.is_whitespace()).collect();
        if squeezed != "hpf_lo:hpf_hi:1" {
            return None;
        }
        // Not assigned itself (`==` compares).
        let after = text[close + 1..].trim_start();
        if after.starts_with('=') && !after.starts_with("==") {
            return None;
        }
        let value = block.value;
        let subscripts: Vec<String> = args
            .iter()
            .enumerate()
            .map(|(at, (lo, hi))| {
                if at + 1 == block.dim {
                    format!("hpf_lo+({value}):hpf_hi+({value}):1")
                } else {
                    text[*lo..*hi].to_string()
                }
            })
            .collect();
        edits.push((start, close + 1, format!("{}({})", block.array, subscripts.join(","))));
        search = close + 1;
    }
    Some(edits)
}

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

/// The runtime routine filling the shadow of an array along its one
/// distributed dimension for a read shifted by a constant (`shadow_fill`).
pub(crate) fn shadow_runtime(suffix: &str, fortran_type: &str, mpi: &str) -> String {
    format!(
        r#"
  ! The shadow of y (local bounds ylo:yhi, shadows included; descriptor d
  ! along its distributed dimension pdim; glb and ext the first global index
  ! and the extent along pdim) that y(..., j + shift, ...) reads at every
  ! owned j: for cshift (kind 2) the elements at j + shift wrapped around,
  ! for eoshift (kind 3) those inside the array, fill outside. One message
  ! per neighbour that holds them. Every process calls it.
  subroutine hpf_shadow_{suffix}(y, ylo, yhi, d, kind, shift, pdim, glb, ext, fill)
    {fortran_type}, intent(inout) :: y(*)
    integer, intent(in) :: ylo(:), yhi(:)
    type(hpf_desc), intent(in) :: d
    integer, intent(in) :: kind, shift, pdim, glb, ext
    {fortran_type}, intent(in) :: fill
    integer :: yl(3), yh(3)
    yl = 1
    yh = 1
    yl(1:size(ylo)) = ylo
    yh(1:size(yhi)) = yhi
    call hpf_shadow_box_{suffix}(y, yl, yh, d, kind, shift, pdim, glb, ext, fill)
  end subroutine hpf_shadow_{suffix}

  ! hpf_shadow_{suffix} on the array seen as a 3-D box.
  subroutine hpf_shadow_box_{suffix}(y, yl, yh, d, kind, shift, pdim, glb, ext, fill)
    integer, intent(in) :: yl(3), yh(3)
    {fortran_type}, intent(inout) :: y(yl(1):yh(1), yl(2):yh(2), yl(3):yh(3))
    type(hpf_desc), intent(in) :: d
    integer, intent(in) :: kind, shift, pdim, glb, ext
    {fortran_type}, intent(in) :: fill
    integer :: lo(3), hi(3), e(3), slab, me, np, o, rk, g, src, rlo, rhi, first, last, k, pass, nreq
    integer :: scount(0:hpf_nprocs - 1), rcount(0:hpf_nprocs - 1)
    integer :: sdispl(0:hpf_nprocs - 1), rdispl(0:hpf_nprocs - 1), snext(0:hpf_nprocs - 1)
    type(MPI_Request) :: req(2 * hpf_nprocs)
    {fortran_type}, allocatable, asynchronous :: sent(:), got(:)
    if (shift == 0) return
    me = hpf_me(d)
    np = hpf_np(d)
    lo = yl
    hi = yh
    e = yh - yl + 1
    e(pdim) = 1
    slab = product(e)
    scount = 0
    rcount = 0
    ! Pass 1 counts the slabs each partner sends and receives, pass 2 packs
    ! them, in the order of the receiver's shadow indices on both sides.
    do pass = 1, 2
      if (pass == 2) then
        sdispl(0) = 0
        rdispl(0) = 0
        do rk = 1, hpf_nprocs - 1
          sdispl(rk) = sdispl(rk - 1) + scount(rk - 1)
          rdispl(rk) = rdispl(rk - 1) + rcount(rk - 1)
        end do
        allocate (sent(sum(scount)), got(sum(rcount)))
        snext = 0
      end if
      do o = 0, np - 1
        call hpf_owned(d, o, rlo, rhi)
        if (rhi < rlo) cycle
        if (shift > 0) then
          first = rhi + 1
          last = rhi + shift
        else
          first = rlo + shift
          last = rlo - 1
        end if
        rk = hpf_rank + (o - me)
        do g = first, last
          src = g
          if (kind == 2) src = glb + modulo(g - glb, ext)
          if (src < glb .or. src > glb + ext - 1) then
            if (o == me .and. pass == 1) call put_fill(g)
            cycle
          end if
          k = hpf_owner(d, src)
          if (o == me) then
            if (k == me) then
              if (pass == 1) call copy_slab(src, g)
            else if (pass == 1) then
              rcount(hpf_rank + (k - me)) = rcount(hpf_rank + (k - me)) + slab
            end if
          else if (k == me) then
            if (pass == 1) then
              scount(rk) = scount(rk) + slab
            else
              call pack_slab(src, sent(sdispl(rk) + snext(rk) + 1:sdispl(rk) + snext(rk) + slab))
              snext(rk) = snext(rk) + slab
            end if
          end if
        end do
      end do
    end do
    nreq = 0
    do rk = 0, hpf_nprocs - 1
      if (rcount(rk) > 0) then
        nreq = nreq + 1
        call MPI_Irecv(got(rdispl(rk) + 1:rdispl(rk) + rcount(rk)), rcount(rk), {mpi}, rk, 31, &
          MPI_COMM_WORLD, req(nreq))
      end if
    end do
    do rk = 0, hpf_nprocs - 1
      if (scount(rk) > 0) then
        nreq = nreq + 1
        call MPI_Isend(sent(sdispl(rk) + 1:sdispl(rk) + scount(rk)), scount(rk), {mpi}, rk, 31, &
          MPI_COMM_WORLD, req(nreq))
      end if
    end do
    call MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE)
    call hpf_stat_sent(scount)
    ! Unpack in the order the senders packed: this process's shadow indices.
    if (nreq > 0) then
      call hpf_owned(d, me, rlo, rhi)
      if (shift > 0) then
        first = rhi + 1
        last = rhi + shift
      else
        first = rlo + shift
        last = rlo - 1
      end if
      snext = 0
      do g = first, last
        src = g
        if (kind == 2) src = glb + modulo(g - glb, ext)
        if (src < glb .or. src > glb + ext - 1) cycle
        k = hpf_owner(d, src)
        if (k == me) cycle
        rk = hpf_rank + (k - me)
        call unpack_slab(got(rdispl(rk) + snext(rk) + 1:rdispl(rk) + snext(rk) + slab), g)
        snext(rk) = snext(rk) + slab
      end do
    end if
  contains
    subroutine put_fill(at)
      integer, intent(in) :: at
      select case (pdim)
      case (1)
        y(at, lo(2):hi(2), lo(3):hi(3)) = fill
      case (2)
        y(lo(1):hi(1), at, lo(3):hi(3)) = fill
      case default
        y(lo(1):hi(1), lo(2):hi(2), at) = fill
      end select
    end subroutine put_fill
    subroutine copy_slab(from, at)
      integer, intent(in) :: from, at
      select case (pdim)
      case (1)
        y(at, lo(2):hi(2), lo(3):hi(3)) = y(from, lo(2):hi(2), lo(3):hi(3))
      case (2)
        y(lo(1):hi(1), at, lo(3):hi(3)) = y(lo(1):hi(1), from, lo(3):hi(3))
      case default
        y(lo(1):hi(1), lo(2):hi(2), at) = y(lo(1):hi(1), lo(2):hi(2), from)
      end select
    end subroutine copy_slab
    subroutine pack_slab(from, buffer)
      integer, intent(in) :: from
      {fortran_type}, intent(out) :: buffer(:)
      select case (pdim)
      case (1)
        buffer = reshape(y(from, lo(2):hi(2), lo(3):hi(3)), [slab])
      case (2)
        buffer = reshape(y(lo(1):hi(1), from, lo(3):hi(3)), [slab])
      case default
        buffer = reshape(y(lo(1):hi(1), lo(2):hi(2), from), [slab])
      end select
    end subroutine pack_slab
    subroutine unpack_slab(buffer, at)
      {fortran_type}, intent(in) :: buffer(:)
      integer, intent(in) :: at
      select case (pdim)
      case (1)
        y(at, lo(2):hi(2), lo(3):hi(3)) = reshape(buffer, [e(2), e(3)])
      case (2)
        y(lo(1):hi(1), at, lo(3):hi(3)) = reshape(buffer, [e(1), e(3)])
      case default
        y(lo(1):hi(1), lo(2):hi(2), at) = reshape(buffer, [e(1), e(2)])
      end select
    end subroutine unpack_slab
  end subroutine hpf_shadow_box_{suffix}
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lowered text with one temporary `t` of `p` shifted by `shift`
    /// (mode `mode`) and the statements `reads` after it.
    fn lowered(shift: i64, mode: &str, reads: &str) -> String {
        format!(
            "  allocate (t(1:9, hpf_lo:hpf_hi))\n{SHADOW_MARK} t p 2 {shift} {mode}\n  ! hpf-ls: t = cshift(p, {shift}, 2)\n  \
             call hpf_shadow_r8(p)\n{SHADOW_ELSE}\n  call hpf_shift_r8(p, t)\n{SHADOW_END}\n{reads}"
        )
    }

    #[test]
    fn reads_at_owned_positions_read_the_shadow() {
        let text = lowered(-1, "c", "  a(1:1, hpf_lo:hpf_hi:1) = t(9:9, hpf_lo:hpf_hi:1) + t(1:1,hpf_lo:hpf_hi:1)\n");
        let out = resolve_shadow_reads(&text);
        assert_eq!(
            out,
            "  ! hpf-ls: t = cshift(p, -1, 2)\n  call hpf_shadow_r8(p)\n  a(1:1, hpf_lo:hpf_hi:1) = \
             p(9:9,hpf_lo+(-1):hpf_hi+(-1):1) + p(1:1,hpf_lo+(-1):hpf_hi+(-1):1)\n"
        );
    }

    #[test]
    fn other_reads_keep_the_temporary() {
        for reads in [
            "  a(:, hpf_lo:hpf_hi:1) = t(:, hpf_lo+(-1):hpf_hi+(-1):1)\n",
            "  call hpf_gather_r8_22(t, hpf_d_t, hpf_g_t)\n",
            "  t(:, hpf_lo:hpf_hi:1) = 0\n",
        ] {
            let out = resolve_shadow_reads(&lowered(2, "c", reads));
            assert!(out.contains("call hpf_shift_r8(p, t)") && !out.contains("hpf_shadow_r8"), "{out}");
            assert!(out.contains("allocate (t(") && out.ends_with(reads) && !out.contains("!hpf-ls-shadow"), "{out}");
        }
    }

    #[test]
    fn reads_end_at_the_next_assignment_of_the_temporary() {
        let reads = format!(
            "  a(:, hpf_lo:hpf_hi:1) = t(:, hpf_lo:hpf_hi:1)\n{SHADOW_WRITE} t\n  call hpf_shift_r8(u, t)\n  \
             b(:, hpf_lo:hpf_hi:1) = t(:, hpf_lo:hpf_hi:1)\n"
        );
        let out = resolve_shadow_reads(&lowered(1, "c", &reads));
        assert!(out.contains("a(:, hpf_lo:hpf_hi:1) = p(:,hpf_lo+(1):hpf_hi+(1):1)"), "{out}");
        assert!(out.contains("b(:, hpf_lo:hpf_hi:1) = t(:, hpf_lo:hpf_hi:1)"), "{out}");
        // Still assigned by the other statement.
        assert!(out.contains("allocate (t("), "{out}");
    }

    #[test]
    fn fills_of_one_side_alike_or_the_temporaries() {
        let second = |shift: i64, mode: &str| {
            format!(
                "{SHADOW_MARK} - p 2 {shift} {mode}\n  call hpf_shadow_r8(p, {shift})\n  x = p\n{SHADOW_ELSE}\n  \
                 call hpf_shift_r8(p, x)\n{SHADOW_END}\n"
            )
        };
        let reads = "  a(:, hpf_lo:hpf_hi:1) = t(:, hpf_lo:hpf_hi:1)\n";
        // An EOSHIFT past the other end fills other elements.
        let text = lowered(1, "c", reads) + &second(-2, "e0.0d0");
        let out = resolve_shadow_reads(&text);
        assert!(!out.contains("hpf_shift_r8") && out.contains("hpf_shadow_r8(p, -2)"), "{out}");
        // On the same side, neither.
        let text = lowered(1, "c", reads) + &second(2, "e0.0d0");
        let out = resolve_shadow_reads(&text);
        assert!(!out.contains("hpf_shadow_r8") && out.contains("hpf_shift_r8(p, x)"), "{out}");
    }
}
