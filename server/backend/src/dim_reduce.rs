//! `r = RED(x, DIM=k)` (SUM, PRODUCT, MAXVAL, MINVAL, COUNT, ANY, ALL; SUM,
//! PRODUCT, MAXVAL, MINVAL with a MASK lined up with `x`) of a rank-2
//! expression of distributed arrays laid out alike (whole arrays or
//! sections, elemental operators and intrinsics), distributed in BLOCKs
//! along one dimension, into a replicated array or section `r` (also as
//! the one operand of an expression that reads distributed data,
//! `q = q + minval(t, dim=1)`), or into an array aligned with the
//! remaining dimension (each process assigns its own part).
//!
//! - Along the undistributed dimension: each process reduces its own
//!   columns (rows) with the intrinsic itself, in the sequential order, and
//!   the pieces are gathered in rank order by one `MPI_Allgatherv`
//!   (`hpf_dimred_gather_*`): the sequential result bit for bit.
//! - Along the distributed dimension: each process reduces its part for
//!   every index of the other dimension, then the partial vectors are
//!   combined in one collective: `MPI_Allreduce` on the whole vector for
//!   MAXVAL, MINVAL, COUNT, ANY, ALL and integer SUM and PRODUCT; by default
//!   floating SUM and PRODUCT gathered and folded in rank order
//!   (`hpf_dimred_combine_*`: the same bits on every process, as
//!   `hpf_combine_*` for scalars); with ordered reductions the running
//!   vector passes along the processes in order, each adding its elements
//!   one index of the reduced dimension at a time (`hpf_dimred_chain_*`):
//!   the sequential result bit for bit.
//!
//! CYCLIC data, 2-D grids, reversed alignments and sections with negative
//! or run-time strides run on rank 0 with a note.

use std::fmt::Write;

use syntax::{Expr, ExprKind, Stmt, StmtKind, Subscript};

use crate::assign::SectionAssign;
use crate::element_type::{ElementType, ReductionOp};
use crate::Lowering;

/// One `r = RED(x, DIM=k)`.
pub(crate) struct DimReduce<'a> {
    stmt: &'a Stmt,
    /// The intrinsic, lower case.
    intrinsic: &'static str,
    /// The element type of the result.
    suffix: ElementType,
    /// The local sections of the argument and mask (whole local part).
    section: SectionAssign<'a>,
    /// With ordered floating SUM or PRODUCT along the distributed
    /// dimension: the element form (`hpf_i`) of the argument and mask.
    chain: Option<SectionAssign<'a>>,
    value: &'a Expr,
    mask: Option<&'a Expr>,
    /// DIM, 1 or 2.
    dim: usize,
    /// Whether DIM is the distributed dimension of the expression.
    across: bool,
    /// The extent of the result (the expression's other dimension), as text.
    extent: String,
    /// A distributed result aligned with the remaining dimension: its
    /// section's bounds (each process keeps its own part).
    aligned: Option<(String, String)>,
    /// The reduction's call in the right side (replaced by its value).
    call: syntax::TextRange,
    /// The allocatable temporaries of the partial (or local) vector and of
    /// the gathered one.
    part: String,
    full: String,
}

const WHY_GRID: &str = "a reduction with DIM= of an array distributed in two dimensions runs on rank 0";

impl<'a> Lowering<'a> {
    /// The plan of `stmt` when it is `r = RED(x, DIM=k)` of a rank-2
    /// expression of distributed data into a replicated array; `None` when
    /// it has another form, `Err` (the reason) when it runs on rank 0.
    pub(crate) fn dim_reduction<'s>(&mut self, stmt: &'s Stmt) -> Option<Result<DimReduce<'s>, String>>
    where
        'a: 's,
    {
        let StmtKind::Assign { lhs, rhs } = &stmt.kind else { return None };
        // The reduction is the right side, or its one operand that reads
        // distributed data (`q = q + minval(t, dim=1)`).
        let mut calls = Vec::new();
        self.dim_calls(rhs, &mut calls);
        let [(call, intrinsic, value, dim, mask, kind)] = calls[..] else { return None };
        let occurrences = self.distributed_occurrences(rhs.range);
        if occurrences.iter().any(|(range, _)| !call.range.contains_range(*range)) {
            return None;
        }
        let plan = self.dim_reduction_plan(stmt, lhs, intrinsic, value, dim, mask, kind);
        Some(plan.and_then(|mut plan| {
            if plan.aligned.is_some() && call.range != rhs.range {
                return Err(format!(
                    "{} with DIM= inside an expression is assigned to a distributed array",
                    intrinsic.to_uppercase()
                ));
            }
            plan.call = call.range;
            Ok(plan)
        }))
    }

    /// The calls `RED(x, DIM=k)` of a rank-2 `x` that reads distributed
    /// data in `expr`, outside other calls but elemental intrinsics: the
    /// call, the intrinsic, `x`, DIM, MASK and whether it has KIND.
    #[allow(clippy::type_complexity)]
    fn dim_calls<'s>(
        &self,
        expr: &'s Expr,
        calls: &mut Vec<(&'s Expr, &'static str, &'s Expr, &'s Expr, Option<&'s Expr>, bool)>,
    ) {
        match &expr.kind {
            ExprKind::Ref { name, args } => {
                let intrinsic = match name.key().as_str() {
                    "sum" => "sum",
                    "product" => "product",
                    "maxval" => "maxval",
                    "minval" => "minval",
                    "count" => "count",
                    "any" => "any",
                    "all" => "all",
                    _ => "",
                };
                // The intrinsic, not a function or array of the program with its name.
                if !intrinsic.is_empty() && self.lookup(&name.key()).is_none() {
                    let logical = matches!(intrinsic, "count" | "any" | "all");
                    let keywords: &[&str] = if logical { &["mask", "dim", "kind"] } else { &["array", "dim", "mask"] };
                    let Some(values) = crate::permute::intrinsic_arguments(args, keywords) else { return };
                    if let (Some(value), Some(dim)) = (values[0], values[1]) {
                        if !self.distributed_occurrences(value.range).is_empty() && self.rank_of(value) == Some(2) {
                            let mask = if logical { None } else { values[2] };
                            calls.push((expr, intrinsic, value, dim, mask, logical && values[2].is_some()));
                        }
                    }
                    return;
                }
                if self.lookup(&name.key()).is_none() && crate::assign::ELEMENTAL.contains(&name.key().as_str()) {
                    for arg in args {
                        if let Some(value) = arg.as_expr() {
                            self.dim_calls(value, calls);
                        }
                    }
                }
            }
            ExprKind::Unary { operand, .. } | ExprKind::Paren(operand) => self.dim_calls(operand, calls),
            ExprKind::Binary { lhs, rhs, .. } => {
                self.dim_calls(lhs, calls);
                self.dim_calls(rhs, calls);
            }
            _ => {}
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn dim_reduction_plan<'s>(
        &mut self,
        stmt: &'s Stmt,
        lhs: &'s Expr,
        intrinsic: &'static str,
        value: &'s Expr,
        dim: &'s Expr,
        mask: Option<&'s Expr>,
        kind: bool,
    ) -> Result<DimReduce<'s>, String>
    where
        'a: 's,
    {
        let what = intrinsic.to_uppercase();
        if kind {
            return Err(format!("{what} with KIND= runs on rank 0"));
        }
        let dim = match self.constant_of(dim) {
            Some(1) => 1,
            Some(2) => 2,
            _ => return Err(format!("the DIM of {what} is not the constant 1 or 2")),
        };
        // The left side: a replicated array or section of one.
        let target = match &lhs.kind {
            ExprKind::Name(name) | ExprKind::Ref { name, .. } => self.lookup(&name.key()),
            _ => None,
        };
        let Some(target) = target.filter(|id| self.analysis.model.symbol(*id).is_array()) else {
            return Err(format!("the result of {what} with DIM= is not assigned to an array"));
        };
        let subscripts = match &lhs.kind {
            ExprKind::Ref { name, .. } => syntax::TextRange::new(name.range.end, lhs.range.end),
            _ => syntax::TextRange::new(lhs.range.end, lhs.range.end),
        };
        if !self.distributed_occurrences(subscripts).is_empty() {
            return Err("a subscript of the left side reads a distributed array".to_string());
        }
        let target_key = self.analysis.model.symbol(target).name.key();
        if self.names_in(value.range).contains(&target_key)
            || mask.is_some_and(|it| self.names_in(it.range).contains(&target_key))
        {
            return Err(format!("{what} with DIM= reads the array it assigns"));
        }
        if self.touches_grid(value.range) || mask.is_some_and(|it| self.touches_grid(it.range)) {
            return Err(WHY_GRID.to_string());
        }
        if mask.is_some_and(|it| self.rank_of(it) != Some(2)) {
            return Err(format!("the MASK of {what} is not of rank 2"));
        }
        let types: Option<Vec<ElementType>> = std::iter::once(value).chain(mask).map(|it| self.type_of(it)).collect();
        let types = types.ok_or("the type of a reduced expression is not plainly known")?;
        if mask.is_some() && !types[1].is_logical() {
            return Err("a MASK is not LOGICAL".to_string());
        }
        let suffix = match intrinsic {
            "count" | "any" | "all" if !types[0].allows(ReductionOp::Logical) => {
                return Err(format!("{what} of a non-logical expression"));
            }
            "count" => ElementType::I4,
            "any" | "all" => ElementType::L4,
            "maxval" | "minval" if !types[0].allows(ReductionOp::Order) || !types[0].mpi_orders() => {
                return Err(format!("{what} of a {} expression", types[0].declaration()));
            }
            "sum" | "product" if !types[0].allows(ReductionOp::Arithmetic) => {
                return Err(format!("{what} of a {} expression", types[0].declaration()));
            }
            _ => types[0],
        };
        let lined_up: Vec<&'s Expr> = std::iter::once(value).chain(mask).collect();
        let section = self.reduced_section(stmt, &lined_up, false)?;
        let home = &self.distributed[&section.home()];
        if section.courses() || home.block != 0 {
            return Err(format!("{what} with DIM= of CYCLIC or BLOCK(m) data runs on rank 0"));
        }
        if home.stride < 0 || !home.plain {
            return Err(format!("{what} with DIM= of data aligned reversed or transposed runs on rank 0"));
        }
        if section.runtime_step() || section.constant_step() < 0 {
            return Err(format!("{what} with DIM= of a section with a negative or run-time stride runs on rank 0"));
        }
        if home.lbs.len() != 2 {
            return Err(format!("{what} with DIM= of a section of an array of rank other than 2 runs on rank 0"));
        }
        // Where the distributed dimension lies in the expression, and the
        // extent of the other one (the result's).
        let Some((first, args, _)) = self.first_distributed(value) else {
            return Err("a reduction reads no distributed array".to_string());
        };
        let home_dim = self.distributed[&first].dim;
        let other_dim = 1 - home_dim;
        let extent = match args {
            None => {
                let d = &self.distributed[&first];
                crate::extent_text(&d.lbs[other_dim], &d.ubs[other_dim])
            }
            Some(args) => {
                if args.iter().any(|it| !matches!(it, Subscript::Range { .. })) {
                    return Err(format!("{what} with DIM= of a section that is not of rank 2"));
                }
                self.range_extent(first, other_dim, &args[other_dim])
            }
        };
        let across = dim - 1 == home_dim;
        let aligned = if self.distributed.contains_key(&target) {
            Some(
                self.aligned_result(lhs, target, first, args, across)
                    .map_err(|why| format!("{what} with DIM= {why}"))?,
            )
        } else {
            None
        };
        let ordered =
            self.ordered_reductions && across && suffix.is_floating() && matches!(intrinsic, "sum" | "product");
        let chain = if ordered { Some(self.reduced_section(stmt, &lined_up, true)?) } else { None };
        self.grow_shadows(section.home(), 0, section.reads());
        // Declared with the unit's temporaries (not in a BLOCK: the
        // statement's label stays on the statement that ends it).
        let part = format!("hpf_dpart{}", self.temps.len() + 1);
        self.temps.push((format!("{}, allocatable", suffix.declaration()), format!("{part}(:)")));
        let full = format!("hpf_dfull{}", self.temps.len() + 1);
        if !across && aligned.is_none() {
            self.temps.push((format!("{}, allocatable", suffix.declaration()), format!("{full}(:)")));
        }
        Ok(DimReduce {
            stmt,
            intrinsic,
            suffix,
            section,
            chain,
            value,
            mask,
            dim,
            across,
            extent,
            aligned,
            call: value.range,
            part,
            full,
        })
    }

    /// A distributed left side whose elements live with the reduced
    /// expression's remaining dimension (`colmax(j)` aligned with
    /// `t(*, j)`, reduced along `t`'s first dimension): its section's
    /// bounds, each process assigning its own part.
    fn aligned_result(
        &self,
        lhs: &Expr,
        target: crate::SymbolId,
        home: crate::SymbolId,
        home_args: Option<&[Subscript]>,
        across: bool,
    ) -> Result<(String, String), String> {
        let (result, data) = (&self.distributed[&target], &self.distributed[&home]);
        if across {
            return Err(format!("is assigned to the distributed {} along the reduced dimension", result.name));
        }
        let simple = |it: &crate::Distributed| it.plain && !it.cyclic && it.block == 0 && it.second.is_none();
        let same_template = result.target == data.target
            || (result.template_lo == data.template_lo && result.template_hi == data.template_hi);
        if result.lbs.len() != 1 || !simple(result) || !simple(data) || !same_template {
            return Err(format!("is assigned to {}, distributed otherwise than {}", result.name, data.name));
        }
        // The first element of each section and its template cell.
        let first = |args: Option<&[Subscript]>, dim: usize, lb: &crate::Bound| -> Option<(i64, String)> {
            match args.map(|it| &it[dim]) {
                None => Some((lb.known()?, lb.to_string())),
                Some(Subscript::Range { lo, stride, .. }) => {
                    if stride.as_ref().is_some_and(|it| self.constant_of(it) != Some(1)) {
                        return None;
                    }
                    match lo {
                        None => Some((lb.known()?, lb.to_string())),
                        Some(lo) => Some((self.constant_of(lo)?, self.one_line(lo.range))),
                    }
                }
                _ => None,
            }
        };
        let result_args = match &lhs.kind {
            ExprKind::Ref { args, .. } => Some(args.as_slice()),
            _ => None,
        };
        let (Some((result_lo, lo_text)), Some((data_lo, _))) =
            (first(result_args, 0, &result.lb), first(home_args, data.dim, &data.lb))
        else {
            return Err(format!("is assigned to a section of {} not known to line up with {}", result.name, data.name));
        };
        if result_lo + result.offset != data_lo + data.offset {
            return Err(format!("is assigned to {}, whose elements do not lie with {}'s", result.name, data.name));
        }
        let hi_text = match result_args.map(|it| &it[0]) {
            Some(Subscript::Range { hi: Some(hi), .. }) => self.one_line(hi.range),
            _ => result.ub.to_string(),
        };
        Ok((lo_text, hi_text))
    }

    /// The lower-case names in `range`.
    fn names_in(&self, range: syntax::TextRange) -> Vec<String> {
        self.slice(range)
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .filter(|it| !it.is_empty())
            .map(str::to_ascii_lowercase)
            .collect()
    }

    /// The number of elements of the section `sub` along dimension `dim` of `id`, as text.
    fn range_extent(&self, id: crate::SymbolId, dim: usize, sub: &Subscript) -> String {
        let d = &self.distributed[&id];
        let Subscript::Range { lo, hi, stride, .. } = sub else { return "1".to_string() };
        let constant = |bound: &Option<Expr>, default: &crate::Bound| match bound {
            Some(it) => self.constant_of(it),
            None => default.known(),
        };
        if let (Some(lo), Some(hi), Some(stride)) =
            (constant(lo, &d.lbs[dim]), constant(hi, &d.ubs[dim]), constant(stride, &crate::Bound::Known(1)))
        {
            if stride != 0 {
                return ((hi - lo + stride) / stride).max(0).to_string();
            }
        }
        let lo = lo.as_ref().map_or(d.lbs[dim].to_string(), |it| self.one_line(it.range));
        let hi = hi.as_ref().map_or(d.ubs[dim].to_string(), |it| self.one_line(it.range));
        let stride = stride.as_ref().map_or("1".to_string(), |it| self.one_line(it.range));
        format!("max(0, ((({hi}) - ({lo})) + ({stride})) / ({stride}))")
    }

    pub(crate) fn emit_dim_reduce(&self, out: &mut String, plan: &DimReduce) {
        let one_line = self.copy(plan.stmt.range).replace(['&', '\n'], " ");
        let how = if plan.aligned.is_some() {
            "each process reduces its own part, where the result's elements live"
        } else if !plan.across {
            "each process reduces its own part, the pieces gathered"
        } else if plan.chain.is_some() {
            "the partial vectors passed along the processes in order"
        } else {
            "each process reduces its part, the partial vectors combined"
        };
        let _ = writeln!(out, "  ! hpf-ls: {} ({how})", one_line.trim());
        let suffix = plan.suffix;
        let (p, f) = (&plan.part, &plan.full);
        self.emit_section_bounds(out, &plan.section);
        let intrinsic = plan.intrinsic;
        let local = |section: &SectionAssign| {
            let mut args = vec![self.edited(plan.value.range, section.edits()), format!("dim={}", plan.dim)];
            args.extend(plan.mask.map(|it| format!("mask={}", self.edited(it.range, section.edits()))));
            format!("{intrinsic}({})", args.join(", "))
        };
        if let Some(chain) = &plan.chain {
            let (identity, op) = if intrinsic == "product" { ("1", "*") } else { ("0", "+") };
            let step = chain.step();
            let element = self.edited(plan.value.range, chain.edits());
            let _ = writeln!(out, "  if (allocated({p})) deallocate ({p})");
            let _ = writeln!(out, "  allocate ({p}({}))\n  {p} = {identity}", plan.extent);
            let _ = writeln!(out, "  call hpf_dimred_chain_recv_{suffix}({p}, size({p}))");
            let _ = writeln!(out, "  do hpf_i = hpf_lo, hpf_hi, {step}");
            match plan.mask {
                Some(mask) => {
                    let mask = self.edited(mask.range, chain.edits());
                    let _ = writeln!(out, "    {p} = merge({p} {op} ({element}), {p}, {mask})");
                }
                None => {
                    let _ = writeln!(out, "    {p} = {p} {op} ({element})");
                }
            }
            let _ = writeln!(out, "  end do");
            let _ = writeln!(out, "  call hpf_dimred_chain_send_{suffix}({p}, size({p}))");
            let _ = writeln!(out, "{}", self.edited_statement(plan.stmt, &[(plan.call, p.clone())]));
            return;
        }
        let _ = writeln!(out, "  {p} = {}", local(&plan.section));
        if let (Some((lo, hi)), StmtKind::Assign { lhs, .. }) = (&plan.aligned, &plan.stmt.kind) {
            let name = match &lhs.kind {
                ExprKind::Name(name) | ExprKind::Ref { name, .. } => match self.lookup(&name.key()) {
                    Some(id) => self.distributed[&id].name.clone(),
                    None => return,
                },
                _ => return,
            };
            let _ = writeln!(out, "  call hpf_local_bounds(hpf_d_{name}, 0, ({lo}), ({hi}), 1, hpf_lo, hpf_hi)");
            let label =
                self.slice(syntax::TextRange::new(self.copy_start(plan.stmt.range.start), plan.stmt.range.start));
            let label = if label.trim().is_empty() { " " } else { label.trim_end() };
            let _ = writeln!(out, "{label} {name}(hpf_lo:hpf_hi) = {p}");
            return;
        }
        if !plan.across {
            let _ = writeln!(out, "  call hpf_dimred_gather_{suffix}({p}, size({p}), {f})");
            let _ = writeln!(out, "{}", self.edited_statement(plan.stmt, &[(plan.call, f.clone())]));
            return;
        }
        let op = match intrinsic {
            "sum" | "count" => "MPI_SUM",
            "product" => "MPI_PROD",
            "maxval" => "MPI_MAX",
            "minval" => "MPI_MIN",
            "any" => "MPI_LOR",
            _ => "MPI_LAND",
        };
        if suffix.is_floating() && matches!(op, "MPI_SUM" | "MPI_PROD") {
            let product = if op == "MPI_PROD" { ".true." } else { ".false." };
            let _ = writeln!(out, "  call hpf_dimred_combine_{suffix}({p}, size({p}), {product})");
        } else {
            let _ = writeln!(
                out,
                "  call MPI_Allreduce(MPI_IN_PLACE, {p}, size({p}), {}, {op}, MPI_COMM_WORLD)",
                crate::mpi_type(suffix)
            );
        }
        let _ = writeln!(out, "{}", self.edited_statement(plan.stmt, &[(plan.call, p.clone())]));
    }
}

/// The runtime routines of one element type (`fortran_type`, MPI datatype `mpi`).
pub(crate) fn gather_runtime(suffix: &str, fortran_type: &str, mpi: &str) -> String {
    format!(
        r#"
  ! The pieces part(1:n) of a vector, one per rank in rank order, gathered
  ! into full on every rank (a reduction with DIM= along an undistributed
  ! dimension).
  subroutine hpf_dimred_gather_{suffix}(part, n, full)
    {fortran_type}, intent(in) :: part(*)
    integer, intent(in) :: n
    {fortran_type}, allocatable, intent(out) :: full(:)
    integer :: counts(0:hpf_nprocs - 1), displs(0:hpf_nprocs - 1), r
    call MPI_Allgather(n, 1, MPI_INTEGER, counts, 1, MPI_INTEGER, MPI_COMM_WORLD)
    displs(0) = 0
    do r = 1, hpf_nprocs - 1
      displs(r) = displs(r - 1) + counts(r - 1)
    end do
    allocate (full(sum(counts)))
    call MPI_Allgatherv(part, n, {mpi}, full, counts, displs, {mpi}, MPI_COMM_WORLD)
    if (hpf_stats) then
      hpf_stat_messages = hpf_stat_messages + hpf_nprocs - 1
      hpf_stat_elements = hpf_stat_elements + size(full) - n
    end if
  end subroutine hpf_dimred_gather_{suffix}
"#
    )
}

/// Floating SUM and PRODUCT with DIM= across the processes: by default
/// the partial vectors folded in rank order on every rank; ordered, the
/// running vector passed from rank to rank, the last one's broadcast.
pub(crate) fn combine_runtime(suffix: &str, fortran_type: &str, mpi: &str) -> String {
    format!(
        r#"
  subroutine hpf_dimred_combine_{suffix}(acc, n, product)
    integer, intent(in) :: n
    {fortran_type}, intent(inout) :: acc(n)
    logical, intent(in) :: product
    {fortran_type}, allocatable :: partials(:, :)
    integer :: r
    allocate (partials(n, 0:hpf_nprocs - 1))
    call MPI_Allgather(acc, n, {mpi}, partials, n, {mpi}, MPI_COMM_WORLD)
    acc = partials(:, 0)
    do r = 1, hpf_nprocs - 1
      if (product) then
        acc = acc * partials(:, r)
      else
        acc = acc + partials(:, r)
      end if
    end do
    if (hpf_stats) then
      hpf_stat_messages = hpf_stat_messages + hpf_nprocs - 1
      hpf_stat_elements = hpf_stat_elements + n * (hpf_nprocs - 1)
    end if
  end subroutine hpf_dimred_combine_{suffix}

  subroutine hpf_dimred_chain_recv_{suffix}(acc, n)
    integer, intent(in) :: n
    {fortran_type}, intent(inout) :: acc(n)
    if (hpf_rank > 0) then
      call MPI_Recv(acc, n, {mpi}, hpf_rank - 1, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    end if
  end subroutine hpf_dimred_chain_recv_{suffix}

  subroutine hpf_dimred_chain_send_{suffix}(acc, n)
    integer, intent(in) :: n
    {fortran_type}, intent(inout) :: acc(n)
    if (hpf_rank < hpf_nprocs - 1) then
      call MPI_Send(acc, n, {mpi}, hpf_rank + 1, 11, MPI_COMM_WORLD)
      if (hpf_stats) then
        hpf_stat_messages = hpf_stat_messages + 1
        hpf_stat_elements = hpf_stat_elements + n
      end if
    end if
    call MPI_Bcast(acc, n, {mpi}, hpf_nprocs - 1, MPI_COMM_WORLD)
  end subroutine hpf_dimred_chain_send_{suffix}
"#
    )
}
