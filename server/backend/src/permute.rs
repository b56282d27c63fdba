//! Whole arrays assigned a TRANSPOSE, CSHIFT or EOSHIFT of another whole
//! distributed array: `X = TRANSPOSE(Y)`, `X = CSHIFT(Y, SHIFT [, DIM])`,
//! `X = EOSHIFT(Y, SHIFT [, BOUNDARY] [, DIM])` (positional or by keyword).
//! Every process lists the elements of Y its part of X needs (the index
//! map of the intrinsic, from X's global indices), and one all-to-all of
//! the indices and one of the values bring them (`hpf_permute_*`, the
//! exchange of `hpf_copy_nd_*` with an index map); EOSHIFT's vacated
//! elements take the boundary value without asking. TRANSPOSE needs no
//! indices: each process sends the elements of Y it owns to the owners of
//! their places in X in an order both sides derive (`hpf_transpose_*`, one
//! `MPI_Alltoallv` of values, counts computed on each side). SHIFT and BOUNDARY
//! are replicated scalars every process evaluates. Nothing is gathered,
//! and no element moves twice.
//!
//! A CSHIFT or EOSHIFT between arrays laid out alike exchanges only the
//! halo the shift crosses instead (`shift.rs`).
//!
//! When X is Y, the values go into a temporary laid out as X, which then
//! takes X's place. Other uses of these intrinsics (inside expressions, on
//! sections) take the rank-0 path.

use std::fmt::Write;

use analysis::model::SymbolId;
use syntax::{Expr, ExprKind, Stmt, StmtKind, Subscript, TextRange};

use crate::element_type::{Base, ElementType};
use crate::{Distributed, Lowering};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PermuteKind {
    Transpose = 1,
    Cshift = 2,
    Eoshift = 3,
}

/// One such assignment.
pub(crate) struct Permute<'a> {
    pub(crate) stmt: &'a Stmt,
    pub(crate) kind: PermuteKind,
    pub(crate) from: SymbolId,
    pub(crate) to: SymbolId,
    shift: Option<TextRange>,
    /// SHIFT's value when it is a constant.
    pub(crate) shift_value: Option<i64>,
    /// The dimension shifted (0-based).
    pub(crate) dim: usize,
    pub(crate) boundary: Option<TextRange>,
}

impl Permute<'_> {
    pub(crate) fn is_transpose(&self) -> bool {
        self.kind == PermuteKind::Transpose
    }
}

/// The intrinsic named `key` with its argument keywords in order.
pub(crate) fn permute_intrinsic(key: &str) -> Option<(PermuteKind, &'static [&'static str])> {
    match key {
        "transpose" => Some((PermuteKind::Transpose, &["matrix"])),
        "cshift" => Some((PermuteKind::Cshift, &["array", "shift", "dim"])),
        "eoshift" => Some((PermuteKind::Eoshift, &["array", "shift", "boundary", "dim"])),
        _ => None,
    }
}

/// The arguments of an intrinsic call by position of `keywords`
/// (positional or by keyword), or `None` when one is neither.
pub(crate) fn intrinsic_arguments<'e>(args: &'e [Subscript], keywords: &[&str]) -> Option<Vec<Option<&'e Expr>>> {
    let mut values: Vec<Option<&Expr>> = vec![None; keywords.len()];
    for (position, arg) in args.iter().enumerate() {
        match arg {
            Subscript::Expr(expr) => *values.get_mut(position)? = Some(expr),
            Subscript::Keyword { name, value } => {
                let at = keywords.iter().position(|it| *it == name.key())?;
                values[at] = Some(value);
            }
            _ => return None,
        }
    }
    Some(values)
}

impl<'a> Lowering<'a> {
    /// The plan of `stmt` when it has the form above.
    pub(crate) fn permute_plan<'s>(&self, stmt: &'s Stmt) -> Option<Permute<'s>> {
        let StmtKind::Assign { lhs, rhs } = &stmt.kind else { return None };
        let ExprKind::Name(target) = &lhs.kind else { return None };
        let ExprKind::Ref { name, args } = &rhs.kind else { return None };
        let (kind, keywords) = permute_intrinsic(&name.key())?;
        // The intrinsic, not a function of the program with its name.
        if self.lookup(&name.key()).is_some() {
            return None;
        }
        let values = intrinsic_arguments(args, keywords)?;
        let ExprKind::Name(source) = &values[0]?.kind else { return None };
        let to = self.lookup(&target.key()).filter(|it| self.distributed.contains_key(it))?;
        let from = self.lookup(&source.key()).filter(|it| self.distributed.contains_key(it))?;
        let (x, y) = (&self.distributed[&to], &self.distributed[&from]);
        if x.suffix != y.suffix {
            return None;
        }
        // An extent known at compile time, or the run-time bounds that
        // give it (equal when they are known equal).
        let extents = |it: &Distributed| {
            it.lbs
                .iter()
                .zip(&it.ubs)
                .map(|(lo, hi)| match (lo.known(), hi.known()) {
                    (Some(lo), Some(hi)) => Ok(hi - lo + 1),
                    _ => Err((lo.clone(), hi.clone())),
                })
                .collect::<Vec<_>>()
        };
        let (x_extents, y_extents) = (extents(x), extents(y));
        let shape_fits = match kind {
            PermuteKind::Transpose => y_extents.len() == 2 && x_extents == [y_extents[1].clone(), y_extents[0].clone()],
            _ => x_extents == y_extents,
        };
        if !shape_fits {
            return None;
        }
        // SHIFT and BOUNDARY: scalars every process has.
        let replicated = |expr: &Expr| self.distributed_occurrences(expr.range).is_empty();
        let shift = match kind {
            PermuteKind::Transpose => None,
            _ => Some(values[1].filter(|it| replicated(it))?.range),
        };
        let shift_value = match kind {
            PermuteKind::Transpose => None,
            _ => values[1].and_then(|it| self.constant_of(it)),
        };
        let boundary = match kind {
            PermuteKind::Eoshift => match values[2] {
                Some(expr) if replicated(expr) => Some(expr.range),
                Some(_) => return None,
                None => None,
            },
            _ => None,
        };
        let dim_value = match kind {
            PermuteKind::Transpose => None,
            PermuteKind::Cshift => values[2],
            PermuteKind::Eoshift => values[3],
        };
        let dim = match dim_value {
            None => 0,
            Some(expr) => usize::try_from(self.constant_of(expr)? - 1).ok().filter(|it| *it < y_extents.len())?,
        };
        Some(Permute { stmt, kind, from, to, shift, shift_value, dim, boundary })
    }

    pub(crate) fn emit_permute(&self, out: &mut String, permute: &Permute) {
        let (x, y) = (&self.distributed[&permute.to], &self.distributed[&permute.from]);
        let ints = |it: &[crate::Bound]| it.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
        let extents: Vec<String> = y.lbs.iter().zip(&y.ubs).map(|(lo, hi)| crate::extent_text(lo, hi)).collect();
        let descriptors = |it: &Distributed| {
            let name = &it.name;
            match &it.second {
                Some(second) => format!("hpf_d_{name}, [{}, {}]", it.dim + 1, second.dim + 1),
                None => format!("[hpf_d_{name}], [{}]", it.dim + 1),
            }
        };
        let one_line = |range: TextRange| self.copy(range).replace(['&', '\n'], " ");
        let shift = permute.shift.map_or("0".to_string(), one_line);
        // The boundary converted to the element type (`0.0` for a DOUBLE array).
        let fill = match permute.boundary.map(one_line) {
            None => default_fill(x.suffix),
            Some(value) => converted(&value, x.suffix),
        };
        let into_temporary = self.hoisted.is_some_and(|it| it.is_temporary(&x.name));
        // In place from Y's shadow, or as below (`shift::resolve_shadow_reads` decides).
        let shadow = self.shadow_shift(permute).filter(|_| into_temporary || permute.to != permute.from);
        if into_temporary && shadow.is_none() {
            // Ends the reads of the temporary's earlier value.
            let _ = writeln!(out, "{} {}", crate::shift::SHADOW_WRITE, x.name);
        }
        if let Some(value) = shadow {
            let mode = if permute.kind == PermuteKind::Cshift { "c".to_string() } else { format!("e{fill}") };
            let temp = if into_temporary { x.name.as_str() } else { "-" };
            let (dim, mode) = (permute.dim + 1, mode.replace(' ', ""));
            let _ = writeln!(out, "{} {temp} {} {dim} {value} {mode}", crate::shift::SHADOW_MARK, y.name);
            let how = if into_temporary { "its readers read it in place" } else { "then a local copy" };
            let _ = writeln!(
                out,
                "  ! hpf-ls: {} (the halo the shift crosses into the shadow of {}, {how})",
                one_line(permute.stmt.range).trim(),
                y.name
            );
            let _ = writeln!(out, "{}", self.shadow_fill_call(permute, value, &fill));
            if !into_temporary {
                let _ = writeln!(out, "{}", crate::shift::shifted_copy(x, y, permute.dim, value));
            }
            let _ = writeln!(out, "{}", crate::shift::SHADOW_ELSE);
        }
        if permute.kind != PermuteKind::Transpose && laid_out_alike(x, y) {
            let _ = writeln!(
                out,
                "  ! hpf-ls: {} (the halo the shift crosses from the neighbours, the rest copied locally)",
                one_line(permute.stmt.range).trim()
            );
            // X is written after every slab it needs of Y has been read or sent.
            let temp = permute.to == permute.from;
            let mut x = x.clone();
            if temp {
                x.name = format!("hpf_m_{}", x.name);
                let _ = writeln!(out, "  block");
                crate::emit_block_temp(out, &x);
            }
            let _ = writeln!(
                out,
                "  call hpf_shift_{suffix}({from}, lbound({from}), ubound({from}), {to}, lbound({to}), ubound({to}), &\n    {to_desc}, {kind}, {shift}, {dim}, {glb}, {ext}, {fill})",
                suffix = x.suffix,
                from = y.name,
                to = x.name,
                to_desc = descriptors(&x),
                kind = permute.kind as i32,
                dim = permute.dim + 1,
                glb = y.lbs[permute.dim],
                ext = extents[permute.dim],
            );
            if temp {
                crate::emit_move_temp(out, &x.name, &y.name);
                let _ = writeln!(out, "  end block");
            }
            if shadow.is_some() {
                let _ = writeln!(out, "{}", crate::shift::SHADOW_END);
            }
            return;
        }
        let how = if permute.kind == PermuteKind::Transpose {
            "each process sends what it owns to where it goes"
        } else {
            "each process asks for the elements its part needs"
        };
        let _ = writeln!(out, "  ! hpf-ls: {} ({how})", one_line(permute.stmt.range).trim());
        // Into a temporary laid out as X when X is also Y, then in X's place.
        let temp = (permute.to == permute.from).then(|| {
            let mut temp = x.clone();
            temp.name = format!("hpf_m_{}", x.name);
            let _ = writeln!(out, "  block");
            crate::emit_block_temp(out, &temp);
            temp
        });
        let x = temp.as_ref().unwrap_or(x);
        if permute.kind == PermuteKind::Transpose {
            let _ = writeln!(
                out,
                "  call hpf_transpose_{suffix}({from}, lbound({from}), ubound({from}), {from_desc}, [{from_lbs}], [{from_extents}], &\n    {to}, lbound({to}), ubound({to}), {to_desc}, [{to_lbs}])",
                suffix = x.suffix,
                from = y.name,
                from_desc = descriptors(y),
                from_lbs = ints(&y.lbs),
                from_extents = extents.join(", "),
                to = x.name,
                to_desc = descriptors(x),
                to_lbs = ints(&x.lbs),
            );
        } else {
            let _ = writeln!(
            out,
            "  call hpf_permute_{suffix}({from}, lbound({from}), ubound({from}), {from_desc}, [{from_lbs}], [{from_extents}], &\n    {to}, lbound({to}), ubound({to}), {to_desc}, [{to_lbs}], &\n    {kind}, {shift}, {dim}, {fill})",
            suffix = x.suffix,
            from = y.name,
            from_desc = descriptors(y),
            from_lbs = ints(&y.lbs),
            from_extents = extents.join(", "),
            to = x.name,
            to_desc = descriptors(x),
            to_lbs = ints(&x.lbs),
            kind = permute.kind as i32,
            dim = permute.dim + 1,
        );
        }
        if let Some(temp) = &temp {
            crate::emit_move_temp(out, &temp.name, &y.name);
            let _ = writeln!(out, "  end block");
        }
    }
}

/// Whether X and Y have the same local parts on every process (the
/// descriptors of one serve for both), shadows aside.
pub(crate) fn laid_out_alike(x: &Distributed, y: &Distributed) -> bool {
    x.lbs == y.lbs
        && x.ubs == y.ubs
        && (x.dim, &x.lb, &x.ub, x.offset, x.stride) == (y.dim, &y.lb, &y.ub, y.offset, y.stride)
        && (&x.template_lo, &x.template_hi, x.block, x.cyclic) == (&y.template_lo, &y.template_hi, y.block, y.cyclic)
        && match (&x.second, &y.second) {
            (None, None) => true,
            (Some(a), Some(b)) => {
                (a.dim, &a.lb, &a.ub, a.offset, a.stride, &a.template_lo, &a.template_hi, a.block, a.cyclic, a.procs)
                    == (
                        b.dim,
                        &b.lb,
                        &b.ub,
                        b.offset,
                        b.stride,
                        &b.template_lo,
                        &b.template_hi,
                        b.block,
                        b.cyclic,
                        b.procs,
                    )
            }
            _ => false,
        }
}

/// EOSHIFT's default boundary of an element type.
fn default_fill(element: ElementType) -> String {
    match element {
        ElementType::R4 => "0.0".to_string(),
        ElementType::R8 => "0.0d0".to_string(),
        ElementType::L4 => ".false.".to_string(),
        ElementType::I4 => "0".to_string(),
        _ => element.default_fill(),
    }
}

/// `value` converted to the element type, as an assignment would.
fn converted(value: &str, element: ElementType) -> String {
    let kind = element.kind;
    match element.base {
        _ if element == ElementType::R4 => format!("real({value})"),
        _ if element == ElementType::R8 => format!("dble({value})"),
        _ if element == ElementType::I4 => format!("int({value})"),
        Base::Integer => format!("int({value}, {kind})"),
        Base::Real => format!("real({value}, {kind})"),
        Base::Complex => format!("cmplx({value}, kind={kind})"),
        Base::Logical => format!("logical({value}, {kind})"),
        Base::Character => value.to_string(),
    }
}

/// The runtime routine of one element type.
pub(crate) fn runtime(suffix: &str, fortran_type: &str, mpi: &str) -> String {
    format!(
        r#"
  ! x = y (kind 0), transpose(y) (1), cshift(y, shift, dim) (2) or
  ! eoshift(y, shift, fill, dim) (3), both distributed (local bounds xlo:xhi, ylo:yhi,
  ! descriptors dx, dy along their distributed dimensions xdim, ydim; xg
  ! and yg the first global indices, ye the extents of y): every element
  ! of x this process owns gets its element of y, wherever it lives (one
  ! all-to-all of the indices, one of the values back); eoshift's vacated
  ! elements get fill. Every process calls it.
  subroutine hpf_permute_{suffix}(y, ylo, yhi, dy, ydim, yg, ye, x, xlo, xhi, dx, xdim, xg, kind, shift, pdim, fill)
    {fortran_type}, intent(in) :: y(*)
    integer, intent(in) :: ylo(:), yhi(:), ydim(:), yg(:), ye(:), xlo(:), xhi(:), xdim(:), xg(:)
    type(hpf_desc), intent(in) :: dy(:), dx(:)
    {fortran_type}, intent(inout) :: x(*)
    integer, intent(in) :: kind, shift, pdim
    {fortran_type}, intent(in), optional :: fill
    integer :: lo(3), hi(3), sl(3), se(3), dl(3), de(3), g(3), p(3), q(3), r(3), ygl(3), yext(3)
    integer :: scount(0:hpf_nprocs - 1), rcount(0:hpf_nprocs - 1)
    integer :: sdispl(0:hpf_nprocs - 1), rdispl(0:hpf_nprocs - 1), next(0:hpf_nprocs - 1)
    integer :: n, k, owner_rank, kk, i1, i2, i3
    integer, allocatable :: gl(:, :), at(:), owner(:), order(:), sorted(:, :), asked(:, :)
    logical, allocatable :: filled(:)
    {fortran_type}, allocatable :: answer(:), got(:)
    lo = 1
    hi = 1
    sl = 1
    se = 1
    dl = 1
    de = 1
    ygl = 1
    yext = 1
    do k = 1, size(xlo)
      lo(k) = xlo(k)
      hi(k) = xhi(k)
      dl(k) = xlo(k)
      de(k) = xhi(k) - xlo(k) + 1
    end do
    do k = 1, size(ylo)
      sl(k) = ylo(k)
      se(k) = yhi(k) - ylo(k) + 1
      ygl(k) = yg(k)
      yext(k) = ye(k)
    end do
    ! The owned box of x, in local positions (no shadow).
    do k = 1, size(xdim)
      call hpf_owned_local(dx(k), hpf_me(dx(k)), lo(xdim(k)), hi(xdim(k)))
    end do
    n = product(max(0, hi - lo + 1))
    allocate (gl(3, n), at(n), owner(n), order(n), sorted(3, n), filled(n))
    scount = 0
    kk = 0
    do i3 = lo(3), hi(3)
      do i2 = lo(2), hi(2)
        do i1 = lo(1), hi(1)
          kk = kk + 1
          p = [i1, i2, i3]
          g = p
          do k = 1, size(xdim)
            g(xdim(k)) = hpf_gx(dx(k), hpf_me(dx(k)), p(xdim(k)))
          end do
          at(kk) = 1 + (i1 - dl(1)) + de(1) * ((i2 - dl(2)) + de(2) * (i3 - dl(3)))
          ! The element of y, relative to its first one.
          r = 0
          do k = 1, size(xg)
            r(k) = g(k) - xg(k)
          end do
          select case (kind)
          case (1)
            r(1:2) = [r(2), r(1)]
          case (2)
            r(pdim) = modulo(r(pdim) + shift, yext(pdim))
          case (3)
            r(pdim) = r(pdim) + shift
          end select
          filled(kk) = kind == 3 .and. (r(pdim) < 0 .or. r(pdim) >= yext(pdim))
          owner(kk) = -1
          if (filled(kk)) cycle
          q = ygl + r
          gl(:, kk) = q
          owner_rank = hpf_owner(dy(1), q(ydim(1)))
          if (size(ydim) > 1) owner_rank = owner_rank + hpf_owner(dy(2), q(ydim(2))) * hpf_np(dy(1))
          owner(kk) = owner_rank
          scount(owner_rank) = scount(owner_rank) + 1
        end do
      end do
    end do
    call hpf_exchange_counts(scount, rcount, sdispl, rdispl)
    next = sdispl
    do kk = 1, n
      if (owner(kk) < 0) cycle
      owner_rank = owner(kk)
      next(owner_rank) = next(owner_rank) + 1
      order(kk) = next(owner_rank)
      sorted(:, next(owner_rank)) = gl(:, kk)
    end do
    allocate (asked(3, sum(rcount)), answer(sum(rcount)), got(sum(scount)))
    call MPI_Alltoallv(sorted, 3 * scount, 3 * sdispl, MPI_INTEGER, asked, 3 * rcount, 3 * rdispl, &
      MPI_INTEGER, MPI_COMM_WORLD)
    do kk = 1, size(answer)
      q = asked(:, kk)
      do k = 1, size(ydim)
        q(ydim(k)) = hpf_lx(dy(k), asked(ydim(k), kk))
      end do
      answer(kk) = y(1 + (q(1) - sl(1)) + se(1) * ((q(2) - sl(2)) + se(2) * (q(3) - sl(3))))
    end do
    call MPI_Alltoallv(answer, rcount, rdispl, {mpi}, got, scount, sdispl, {mpi}, MPI_COMM_WORLD)
    do kk = 1, n
      if (filled(kk)) then
        x(at(kk)) = fill
      else
        x(at(kk)) = got(order(kk))
      end if
    end do
    call hpf_stat_sent(rcount)
  end subroutine hpf_permute_{suffix}
"#
    )
}

/// The runtime routine of TRANSPOSE between two distributed matrices.
pub(crate) fn transpose_runtime(suffix: &str, fortran_type: &str, mpi: &str) -> String {
    format!(
        r#"
  ! x = transpose(y), both distributed (arguments as for hpf_permute_{suffix}):
  ! one MPI_Alltoallv of the values and nothing else. Each process sends
  ! the elements of y it owns to the owners of their places in x, walking
  ! y by rows; each receiver walks its part of x by columns, which meets
  ! the elements of each sender in the same order (local indices grow with
  ! global ones), so no index travels and both sides count for themselves.
  ! Where a part is held by several processes (an array replicated along a
  ! grid axis), the general exchange runs instead.
  subroutine hpf_transpose_{suffix}(y, ylo, yhi, dy, ydim, yg, ye, x, xlo, xhi, dx, xdim, xg)
    {fortran_type}, intent(in) :: y(*)
    {fortran_type}, intent(inout) :: x(*)
    integer, intent(in) :: ylo(2), yhi(2), ydim(:), yg(2), ye(2), xlo(2), xhi(2), xdim(:), xg(2)
    type(hpf_desc), intent(in) :: dy(:), dx(:)
    integer :: scount(0:hpf_nprocs - 1), rcount(0:hpf_nprocs - 1)
    integer :: sdispl(0:hpf_nprocs - 1), rdispl(0:hpf_nprocs - 1), next(0:hpf_nprocs - 1)
    integer :: lo(2), hi(2), k, i1, i2, r
    integer, allocatable :: by_row(:), by_col(:)
    {fortran_type}, allocatable :: sendbuf(:), recvbuf(:)
    if (product([(hpf_np(dy(k)), k = 1, size(dy))]) /= hpf_nprocs .or. &
        product([(hpf_np(dx(k)), k = 1, size(dx))]) /= hpf_nprocs) then
      call hpf_permute_{suffix}(y, ylo, yhi, dy, ydim, yg, ye, x, xlo, xhi, dx, xdim, xg, 1, 0, 1)
      return
    end if
    ! Send: y's owned box by rows, each element to the owner of x(j, i).
    ! An owner's rank is a sum of one term per dimension, each a function
    ! of one index: the terms are computed once per row and per column.
    lo = ylo
    hi = yhi
    do k = 1, size(ydim)
      call hpf_owned_local(dy(k), hpf_me(dy(k)), lo(ydim(k)), hi(ydim(k)))
    end do
    ! y's column i2 is x's row, y's row i1 is x's column.
    call terms(dy, ydim, 2, lo(2), hi(2), dx, xdim, 1, xg(1) - yg(2), by_col)
    call terms(dy, ydim, 1, lo(1), hi(1), dx, xdim, 2, xg(2) - yg(1), by_row)
    scount = 0
    do i1 = lo(1), hi(1)
      do i2 = lo(2), hi(2)
        r = by_row(i1) + by_col(i2)
        scount(r) = scount(r) + 1
      end do
    end do
    sdispl(0) = 0
    do r = 1, hpf_nprocs - 1
      sdispl(r) = sdispl(r - 1) + scount(r - 1)
    end do
    allocate (sendbuf(max(1, sum(scount))))
    next = sdispl
    do i1 = lo(1), hi(1)
      do i2 = lo(2), hi(2)
        r = by_row(i1) + by_col(i2)
        next(r) = next(r) + 1
        sendbuf(next(r)) = y(1 + (i1 - ylo(1)) + (yhi(1) - ylo(1) + 1) * (i2 - ylo(2)))
      end do
    end do
    ! Receive: x's owned box by columns, each element from the owner of y(j, i).
    lo = xlo
    hi = xhi
    do k = 1, size(xdim)
      call hpf_owned_local(dx(k), hpf_me(dx(k)), lo(xdim(k)), hi(xdim(k)))
    end do
    call terms(dx, xdim, 2, lo(2), hi(2), dy, ydim, 1, yg(1) - xg(2), by_col)
    call terms(dx, xdim, 1, lo(1), hi(1), dy, ydim, 2, yg(2) - xg(1), by_row)
    rcount = 0
    do i2 = lo(2), hi(2)
      do i1 = lo(1), hi(1)
        r = by_row(i1) + by_col(i2)
        rcount(r) = rcount(r) + 1
      end do
    end do
    rdispl(0) = 0
    do r = 1, hpf_nprocs - 1
      rdispl(r) = rdispl(r - 1) + rcount(r - 1)
    end do
    allocate (recvbuf(max(1, sum(rcount))))
    call MPI_Alltoallv(sendbuf, scount, sdispl, {mpi}, recvbuf, rcount, rdispl, {mpi}, MPI_COMM_WORLD)
    next = rdispl
    do i2 = lo(2), hi(2)
      do i1 = lo(1), hi(1)
        r = by_row(i1) + by_col(i2)
        next(r) = next(r) + 1
        x(1 + (i1 - xlo(1)) + (xhi(1) - xlo(1) + 1) * (i2 - xlo(2))) = recvbuf(next(r))
      end do
    end do
    call hpf_stat_sent(scount)

  contains

    ! For local indices plo..phi along dimension pdim of the array walked
    ! (descriptors dp along pdims), the term of the owner's rank that the
    ! other array's dimension odim contributes (descriptors d_o along odims),
    ! where that dimension's global index is the walked one's plus shift.
    subroutine terms(dp, pdims, pdim, plo, phi, d_o, odims, odim, shift, term)
      type(hpf_desc), intent(in) :: dp(:), d_o(:)
      integer, intent(in) :: pdims(:), pdim, plo, phi, odims(:), odim, shift
      integer, allocatable, intent(out) :: term(:)
      integer :: p, g, j
      allocate (term(plo:phi))
      do p = plo, phi
        g = p
        do j = 1, size(pdims)
          if (pdims(j) == pdim) g = hpf_gx(dp(j), hpf_me(dp(j)), p)
        end do
        term(p) = 0
        do j = 1, size(odims)
          if (odims(j) /= odim) cycle
          if (j == 1) then
            term(p) = term(p) + hpf_owner(d_o(1), g + shift)
          else
            term(p) = term(p) + hpf_owner(d_o(2), g + shift) * hpf_np(d_o(1))
          end if
        end do
      end do
    end subroutine terms
  end subroutine hpf_transpose_{suffix}
"#
    )
}
