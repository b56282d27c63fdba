//! SPMD calls whose dummy is not laid out as its actual is: a section of a
//! 1-D distributed array passed as the actual, or a dummy whose explicit
//! DISTRIBUTE differs from its whole actual's mapping, of any rank, on a
//! 2-D grid too (`procedures.rs` decides which calls run on every process).
//!
//! HPF remaps such an actual on entry to the dummy's mapping and back on
//! return. Every process allocates its part of a temporary laid out as the
//! dummy (with the shadow the subroutine's copy needs), fills it from the
//! actual by the inspector/executor all-to-all of `remap.rs`
//! (`hpf_copy_in_*`: each owner of a temporary element asks the owner of
//! the actual's element for it), calls the specialised copy with it, and
//! unless the dummy is INTENT(IN) copies it back the same way the other
//! direction (`hpf_copy_out_*`). Whole arrays of rank 2 and 3 are copied
//! by `hpf_copy_nd_*`, the same exchange with three indices per element
//! (the owner is found along one or two distributed dimensions; it is
//! `hpf_permute_*` of `permute.rs` with the identity map). `--stats`
//! counts the values and messages of both copies (they belong to no loop).
//!
//! The temporary's layout: the dummy's own DISTRIBUTE when it prescribes
//! one; for an INHERIT (or transcriptive, or undirected) dummy of a
//! section, the section's own place on the actual's template (element `i`
//! on the template cell of the actual's element `lo + (i - 1) * st`: the
//! inherited mapping of HPF, so the copies move nothing between processes),
//! or, for a strided section of a CYCLIC array (which the runtime cannot
//! describe), the actual's format over the dummy's own index range (the
//! mapping is the implementation's choice there; any is correct).

use std::fmt::Write;

use analysis::model::{Format, SymbolId, UnitId};
use syntax::{Expr, ExprKind, Stmt, Subscript, TextRange};

use crate::{Distributed, Lowering};

/// A section `lo:hi:st` of a 1-D distributed actual, with constant bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Section {
    pub(crate) lo: i64,
    pub(crate) hi: i64,
    pub(crate) st: i64,
}

impl Section {
    pub(crate) fn extent(&self) -> i64 {
        ((self.hi - self.lo + self.st) / self.st).max(0)
    }
}

/// One actual copied into a temporary laid out as its dummy.
#[derive(Clone, Debug)]
pub(crate) struct CallRemap {
    /// The argument's position and text range in the CALL.
    pub(crate) position: usize,
    pub(crate) range: TextRange,
    /// The actual and the section of it passed (the whole array: its bounds).
    pub(crate) actual: SymbolId,
    pub(crate) section: Section,
    /// The temporary's name, layout and Fortran type.
    pub(crate) temp: Distributed,
    pub(crate) type_name: String,
    /// The dummy may be written: copy the temporary back.
    pub(crate) copy_out: bool,
}

impl<'a> Lowering<'a> {
    /// The section of a 1-D distributed array that `arg` passes (`U(2:N:3)`),
    /// when its name is at `name_range` and its bounds are constants.
    pub(crate) fn section_actual(&self, arg: &Expr, name_range: TextRange, actual: SymbolId) -> Option<Section> {
        let ExprKind::Ref { name, args } = &arg.kind else { return None };
        let layout = self.distributed.get(&actual)?;
        if name.range != name_range || layout.lbs.len() != 1 || layout.second.is_some() || args.len() != 1 {
            return None;
        }
        let Subscript::Range { lo, hi, stride, .. } = &args[0] else { return None };
        // Constants of the caller (in a copy, its constant scalar dummies too).
        let env = self.caller_env();
        let value = |it: &Option<Expr>, default: i64| {
            it.as_ref().map_or(Some(default), |it| analysis::eval::eval_int(it, &env).ok())
        };
        let st = value(stride, 1)?;
        // Bounds known only at run time: no section layout.
        let (lb, ub) = (layout.lbs[0].known()?, layout.ubs[0].known()?);
        let (lo, hi) = if st > 0 { (value(lo, lb)?, value(hi, ub)?) } else { (value(lo, ub)?, value(hi, lb)?) };
        let section = Section { lo, hi, st };
        // Inside the array, not empty.
        let last = lo + (section.extent() - 1) * st;
        let inside = |i: i64| (lb..=ub).contains(&i);
        (st != 0 && section.extent() > 0 && inside(lo) && inside(last)).then_some(section)
    }

    /// The layout an INHERIT (or transcriptive, or undirected) dummy of
    /// bounds `lb:ub` takes for the section `section` of `actual`.
    pub(crate) fn inherited_section_layout(
        &self,
        actual: SymbolId,
        section: Section,
        (lb, ub): (i64, i64),
        dummy: SymbolId,
    ) -> Result<Distributed, String> {
        let layout = &self.distributed[&actual];
        if ub - lb + 1 != section.extent() {
            return Err(format!(
                "the section of {} passed has {} elements and its dummy {}",
                layout.name,
                section.extent(),
                ub - lb + 1
            ));
        }
        let mut res = layout.clone();
        res.lbs = vec![lb.into()];
        res.ubs = vec![ub.into()];
        res.lb = lb.into();
        res.ub = ub.into();
        res.shadow_low = 0;
        res.shadow_high = 0;
        if !layout.cyclic || section.st == 1 {
            // Dummy element i is the actual's element lo + (i - lb) * st,
            // on template cell stride * (lo + (i - lb) * st) + offset.
            res.stride = layout.stride * section.st;
            res.offset = layout.offset + layout.stride * (section.lo - lb * section.st);
            res.plain = res.stride == 1;
        } else {
            res.stride = 1;
            res.offset = 0;
            res.plain = true;
            res.template_lo = lb.into();
            res.template_hi = ub.into();
            res.target = dummy;
        }
        Ok(res)
    }

    /// The layout a dummy laid out as `like` (its bounds) has when its
    /// DISTRIBUTE prescribes BLOCK, BLOCK(m), CYCLIC or CYCLIC(m) along one
    /// dimension, or two over a 2-D arrangement (its own template), or `None`.
    pub(crate) fn prescribed_layout(
        &self,
        callee_id: UnitId,
        dummy: SymbolId,
        like: &Distributed,
    ) -> Option<Distributed> {
        let model = &self.analysis.model;
        let symbol = model.symbol(dummy);
        let mapping = &symbol.mapping;
        let distribution = mapping.distribution.as_ref()?;
        if dummy.unit != callee_id
            || mapping.inherit.is_some()
            || mapping.align.is_some()
            || symbol.rank() != like.lbs.len()
            || distribution.formats.len() != like.lbs.len()
        {
            return None;
        }
        let layout = |format: Format| match format {
            Format::Block => Some((0, false)),
            Format::BlockOf(Some(m)) if m >= 1 => Some((m, false)),
            Format::Cyclic(Some(m)) if m >= 1 => Some((m, true)),
            _ => None,
        };
        let cut: Vec<(usize, Format)> =
            distribution.formats.iter().copied().enumerate().filter(|it| it.1 != Format::Collapsed).collect();
        let (dim, (block, cyclic)) = match cut.first() {
            Some(&(dim, format)) => (dim, layout(format)?),
            None => return None,
        };
        let second = match cut[..] {
            [_] => None,
            [_, (second_dim, format)] => {
                let (block, cyclic) = layout(format)?;
                // The declared arrangement's shape, as for the program's arrays.
                let shape = &model.symbol(distribution.onto?).shape;
                let extent = |it: &analysis::model::Dim| Some(it.hi.known()? - it.lo.known()? + 1);
                let procs = match &shape[..] {
                    [a, b] => (extent(a)?, extent(b)?),
                    _ => return None,
                };
                Some(crate::SecondAxis {
                    dim: second_dim,
                    lb: like.lbs[second_dim].clone(),
                    ub: like.ubs[second_dim].clone(),
                    offset: 0,
                    stride: 1,
                    template_lo: like.lbs[second_dim].clone(),
                    template_hi: like.ubs[second_dim].clone(),
                    block,
                    cyclic,
                    shadow_low: 0,
                    shadow_high: 0,
                    procs,
                })
            }
            _ => return None,
        };
        let mut res = like.clone();
        res.dim = dim;
        res.lb = like.lbs[dim].clone();
        res.ub = like.ubs[dim].clone();
        res.offset = 0;
        res.stride = 1;
        res.plain = true;
        res.template_lo = res.lb.clone();
        res.template_hi = res.ub.clone();
        res.block = block;
        res.cyclic = cyclic;
        res.target = dummy;
        res.shadow_low = 0;
        res.shadow_high = 0;
        res.second = second;
        Some(res)
    }

    /// Whether the dummy `key` of `callee` is declared INTENT(IN).
    pub(crate) fn intent_in(&self, callee: &syntax::Unit, key: &str) -> bool {
        callee.decls.iter().any(|decl| {
            let prefix = match decl.entities.first() {
                Some(first) => self.slice(TextRange::new(decl.range.start, first.range.start)),
                None => "",
            };
            let prefix: String =
                prefix.chars().filter(|it| !it.is_whitespace()).collect::<String>().to_ascii_lowercase();
            prefix.contains("intent(in)") && decl.entities.iter().any(|it| it.name.key() == key)
        })
    }

    /// Whether the statement is labelled (the copies put it in a BLOCK,
    /// which a branch from outside may not enter).
    pub(crate) fn labelled(&self, stmt: &Stmt) -> bool {
        labelled(self.text, stmt)
    }

    /// The CALL `call_text` (already edited to pass the temporaries) with
    /// the copies around it, in a BLOCK that declares the temporaries.
    pub(crate) fn emit_remapped_call(&self, out: &mut String, remaps: &[CallRemap], call_text: &str) {
        let _ = writeln!(out, "  ! hpf-ls: the dummies are laid out otherwise than their actuals: copy in and out");
        let _ = writeln!(out, "  block");
        for remap in remaps {
            let temp = &remap.temp;
            let name = &temp.name;
            let _ = writeln!(out, "  {}, allocatable :: {name}({})", remap.type_name, temp.colons());
            let descriptors = if temp.second.is_some() { "(2)" } else { "" };
            let _ = writeln!(out, "  type(hpf_desc) :: hpf_d_{name}{descriptors}");
        }
        for remap in remaps {
            let temp = &remap.temp;
            let name = &temp.name;
            let actual = &self.distributed[&remap.actual].name;
            crate::emit_alloc(out, temp);
            if temp.lbs.len() == 1 {
                let Section { lo, st, .. } = remap.section;
                let _ = writeln!(
                    out,
                    "  call hpf_copy_in_{}({actual}, hpf_d_{actual}, {lo}, {st}, {name}, hpf_d_{name})",
                    temp.suffix
                );
            } else {
                let _ = writeln!(out, "{}", copy_nd_call(&self.distributed[&remap.actual], temp));
            }
        }
        let _ = writeln!(out, "{call_text}");
        for remap in remaps.iter().filter(|it| it.copy_out) {
            let temp = &remap.temp;
            let name = &temp.name;
            let actual = &self.distributed[&remap.actual].name;
            if temp.lbs.len() == 1 {
                let Section { lo, hi, st } = remap.section;
                let _ = writeln!(
                    out,
                    "  call hpf_copy_out_{}({name}, hpf_d_{name}, {actual}, hpf_d_{actual}, {lo}, {hi}, {st})",
                    temp.suffix
                );
            } else {
                let _ = writeln!(out, "{}", copy_nd_call(temp, &self.distributed[&remap.actual]));
            }
        }
        let _ = writeln!(out, "  end block");
    }
}

/// The call that fills the elements of the whole array `to` each process
/// owns from the same elements of `from` (any rank, laid out differently).
pub(crate) fn copy_nd_call(from: &Distributed, to: &Distributed) -> String {
    let args = |it: &Distributed| {
        let name = &it.name;
        match &it.second {
            Some(second) => {
                format!("{name}, lbound({name}), ubound({name}), hpf_d_{name}, [{}, {}]", it.dim + 1, second.dim + 1)
            }
            None => format!("{name}, lbound({name}), ubound({name}), [hpf_d_{name}], [{}]", it.dim + 1),
        }
    };
    format!("  call hpf_copy_nd_{}({}, &\n    {})", to.suffix, args(from), args(to))
}

/// The copy-in and copy-out of one element type (runtime): both pull the
/// values with `hpf_remote_read_*`.
pub(crate) fn copy_in_out(suffix: &str, fortran_type: &str) -> String {
    format!(
        r#"
  ! The copy-in of a CALL whose dummy is laid out otherwise than its actual
  ! (call_remap.rs): each element i of the temporary t (descriptor dt) that
  ! this process owns gets the element lo + (i - dt%lb) * st of the 1-D
  ! array a, wherever it lives. Every process calls it.
  subroutine hpf_copy_in_{suffix}(a, da, lo, st, t, dt)
    {fortran_type}, allocatable, intent(in) :: a(:)
    type(hpf_desc), intent(in) :: da, dt
    integer, intent(in) :: lo, st
    {fortran_type}, allocatable, intent(inout) :: t(:)
    integer :: plo, phi, p
    integer, allocatable :: idx(:)
    {fortran_type}, allocatable :: vals(:)
    call hpf_owned_local(dt, hpf_me(dt), plo, phi)
    allocate (idx(max(0, phi - plo + 1)), vals(max(0, phi - plo + 1)))
    do p = plo, phi
      idx(p - plo + 1) = lo + (hpf_gx(dt, hpf_me(dt), p) - dt%lb) * st
    end do
    call hpf_remote_read_{suffix}(a, da, idx, vals)
    do p = plo, phi
      t(p) = vals(p - plo + 1)
    end do
  end subroutine hpf_copy_in_{suffix}

  ! The copy-out: each element i of the section lo:hi:st of a that this
  ! process owns gets the element dt%lb + (i - lo) / st of t.
  subroutine hpf_copy_out_{suffix}(t, dt, a, da, lo, hi, st)
    {fortran_type}, allocatable, intent(in) :: t(:)
    type(hpf_desc), intent(in) :: dt, da
    {fortran_type}, allocatable, intent(inout) :: a(:)
    integer, intent(in) :: lo, hi, st
    integer :: plo, phi, p, i, n
    integer, allocatable :: idx(:), at(:)
    {fortran_type}, allocatable :: vals(:)
    call hpf_owned_local(da, hpf_me(da), plo, phi)
    allocate (idx(max(0, phi - plo + 1)), at(max(0, phi - plo + 1)))
    n = 0
    do p = plo, phi
      i = hpf_gx(da, hpf_me(da), p)
      if ((i - lo) * st < 0 .or. (hi - i) * st < 0 .or. mod(i - lo, st) /= 0) cycle
      n = n + 1
      idx(n) = dt%lb + (i - lo) / st
      at(n) = p
    end do
    allocate (vals(n))
    call hpf_remote_read_{suffix}(t, dt, idx(1:n), vals)
    do p = 1, n
      a(at(p)) = vals(p)
    end do
  end subroutine hpf_copy_out_{suffix}
"#
    )
}

/// The copy between two whole arrays laid out differently (runtime): one
/// or two distributed dimensions on either side; `hpf_permute_*` (kind 0,
/// the identity) does the exchange.
pub(crate) fn copy_nd(suffix: &str, fortran_type: &str) -> String {
    format!(
        r#"
  ! The elements of dst (local bounds dlo:dhi, descriptors dd along its
  ! distributed dimensions ddim) this process owns get the same elements of
  ! src (slo:shi, ds, sdim), wherever they live. Every process calls it.
  subroutine hpf_copy_nd_{suffix}(src, slo, shi, ds, sdim, dst, dlo, dhi, dd, ddim)
    {fortran_type}, intent(in) :: src(*)
    integer, intent(in) :: slo(:), shi(:), sdim(:), dlo(:), dhi(:), ddim(:)
    type(hpf_desc), intent(in) :: ds(:), dd(:)
    {fortran_type}, intent(inout) :: dst(*)
    integer :: first(size(slo))
    first = 0
    call hpf_permute_{suffix}(src, slo, shi, ds, sdim, first, shi - slo + 1, dst, dlo, dhi, dd, ddim, first, 0, 0, 1)
  end subroutine hpf_copy_nd_{suffix}
"#
    )
}

/// Whether something stands before the statement on its line of `text`
/// (its label; or another statement and `;`, which is treated alike).
pub(crate) fn labelled(text: &str, stmt: &Stmt) -> bool {
    let line_start = text[..stmt.range.start].rfind('\n').map_or(0, |it| it + 1);
    !text[line_start..stmt.range.start].trim().is_empty()
}
