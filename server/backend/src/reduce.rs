//! Reductions of distributed arrays (SUM, PRODUCT, MAXVAL, MINVAL, COUNT,
//! ANY, ALL, DOT_PRODUCT; SUM, PRODUCT, MAXVAL and MINVAL also with a MASK
//! by keyword, lined up with the argument; MAXLOC and MINLOC along DIM=1
//! of rank-1 BLOCK data, and without DIM of BLOCK data of any rank cut in
//! one dimension (into a whole replicated array too), with
//! `MPI_MAXLOC`/`MPI_MINLOC`) in output
//! statements and in assignments to replicated scalars, computed where the
//! data lives.
//!
//! Each process reduces the part of the section it owns (of a CYCLIC
//! array: course by course, `assign.rs`), then the partial values are
//! combined (`emit_combine`): integers, logicals, MAXVAL and MINVAL with
//! `MPI_Allreduce`; by default floating-point SUM, PRODUCT and DOT_PRODUCT
//! too, their partials summed in rank order on every process, so a run
//! repeats bit for bit on the same number of processes (HPF leaves the
//! order of these intrinsics to the processor).
//!
//! With ordered reductions (`LowerOptions::ordered_reductions`) the
//! floating-point ones keep the sequential program's result bit for bit:
//! of rank-1 arrays, and of whole arrays distributed in BLOCKs along their
//! last dimension only or of sections of whole columns of them
//! (`A(:, L:H:S)`: each process holds whole columns, one run of the
//! sequential order), they are accumulated in the sequential order: the
//! running value passes from the process owning the first elements to the
//! next (a chain), each adding its elements one by one as the sequential
//! loop does. Those whose sequential order interleaves the processes
//! (`(BLOCK, *)` arrays, 2-D grids, sections cutting the columns, CYCLIC(m)
//! with long runs) pass the running value from owner to owner instead
//! (`ordered_chain.rs`). A single distributed element comes from its owner
//! by a broadcast. Anything else runs on rank 0 on gathered copies.

use std::fmt::Write;

use analysis::model::SymbolKind;
use syntax::{BinaryOp, Expr, ExprKind, Stmt, StmtKind, Subscript, TextRange, UnaryOp};

use crate::assign::SectionAssign;
use crate::element_type::{Base, ElementType, ReductionOp};
use crate::{Lowering, Plan};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Sum,
    Product,
    MaxVal,
    MinVal,
    Count,
    Any,
    All,
    DotProduct,
    /// MAXLOC and MINLOC along DIM=1 of a rank-1 expression (`location`).
    MaxLoc,
    MinLoc,
    /// One element, sent by its owner.
    Element,
}

impl Kind {
    fn from_name(name: &str) -> Option<Kind> {
        Some(match name {
            "sum" => Kind::Sum,
            "product" => Kind::Product,
            "maxval" => Kind::MaxVal,
            "minval" => Kind::MinVal,
            "count" => Kind::Count,
            "any" => Kind::Any,
            "all" => Kind::All,
            "dot_product" => Kind::DotProduct,
            "maxloc" => Kind::MaxLoc,
            "minloc" => Kind::MinLoc,
            _ => return None,
        })
    }

    fn intrinsic(self) -> &'static str {
        match self {
            Kind::Sum => "sum",
            Kind::Product => "product",
            Kind::MaxVal => "maxval",
            Kind::MinVal => "minval",
            Kind::Count => "count",
            Kind::Any => "any",
            Kind::All => "all",
            Kind::DotProduct => "dot_product",
            Kind::MaxLoc => "maxloc",
            Kind::MinLoc => "minloc",
            Kind::Element => "element",
        }
    }

    fn mpi_op(self) -> &'static str {
        match self {
            Kind::Sum | Kind::Count | Kind::DotProduct | Kind::Element => "MPI_SUM",
            Kind::Product => "MPI_PROD",
            Kind::MaxVal => "MPI_MAX",
            Kind::MinVal => "MPI_MIN",
            Kind::MaxLoc => "MPI_MAXLOC",
            Kind::MinLoc => "MPI_MINLOC",
            Kind::Any => "MPI_LOR",
            Kind::All => "MPI_LAND",
        }
    }
}

/// One reduction, computed into the replicated temporary `temp`.
pub(crate) struct Reduction<'a> {
    kind: Kind,
    temp: String,
    /// Element type of the result.
    suffix: ElementType,
    /// The local sections (or, for a chain, the elements `hpf_i + c`) of
    /// the arguments; `None` for an element.
    section: Option<SectionAssign<'a>>,
    /// For an element: its array, its reference and its distributed subscript.
    element: Option<(crate::SymbolId, TextRange, TextRange)>,
    /// The arguments (one, two for DOT_PRODUCT).
    args: Vec<&'a Expr>,
    /// The MASK of SUM, PRODUCT, MAXVAL or MINVAL (by keyword), lined up
    /// with the argument.
    mask: Option<&'a Expr>,
    /// Accumulate in the sequential order (floating-point SUM, PRODUCT, DOT_PRODUCT).
    chain: bool,
    /// On arrays distributed in two dimensions: the local parts of the
    /// arguments' sections, or (for an element) its two distributed subscripts.
    grid: Option<crate::grid::GridSection>,
    grid_element: Option<[TextRange; 2]>,
    /// For an element of an array with a CYCLIC dimension on a 2-D grid:
    /// its subscripts along them as local positions.
    element_edits: Vec<(TextRange, String)>,
    /// Accumulated along the owners in the sequential order (`ordered_chain.rs`).
    ordered: Option<crate::ordered_chain::OrderedChain>,
    /// MAXLOC, MINLOC: the integer temporary of the position (`temp`
    /// holds the extreme value beside it).
    location: Option<String>,
    /// MAXLOC, MINLOC without DIM: the positions' array that replaces the
    /// call, and which of the section's dimensions (0-based) is cut.
    locations: Option<Locations>,
}

/// MAXLOC or MINLOC without DIM of a section of rank `rank` whose
/// dimension `cut` is the distributed one: each process's first extreme
/// element becomes a position in the whole section in array element order,
/// combined by `MPI_MAXLOC`/`MPI_MINLOC`, then turned back into subscripts.
struct Locations {
    rank: usize,
    cut: usize,
    /// The local positions (`maxloc` of the local part), then the result.
    local: String,
    result: String,
}

/// A statement whose reductions are computed first.
pub(crate) struct Reduce<'a> {
    stmt: &'a Stmt,
    reductions: Vec<Reduction<'a>>,
    /// Every reduction call replaced by its temporary.
    edits: Vec<(TextRange, String)>,
    output: bool,
}

/// Whether `expr` is a call of MAXLOC or MINLOC.
fn is_location_call(expr: &Expr) -> bool {
    matches!(&expr.kind, ExprKind::Ref { name, .. } if ["maxloc", "minloc"].contains(&name.key().as_str()))
}

fn promote(a: ElementType, b: ElementType) -> Option<ElementType> {
    ElementType::promote(a, b)
}

impl<'a> Lowering<'a> {
    /// The element type of an expression, when it is plainly known.
    pub(crate) fn type_of(&self, expr: &Expr) -> Option<ElementType> {
        let model = &self.analysis.model;
        let implicit = |key: &str| {
            if key.starts_with(|c: char| ('i'..='n').contains(&c)) {
                ElementType::I4
            } else {
                ElementType::R4
            }
        };
        match &expr.kind {
            ExprKind::Int(_) => Some(ElementType::I4),
            ExprKind::Literal(text) => {
                let lower = text.to_ascii_lowercase();
                if lower == ".true." || lower == ".false." {
                    Some(ElementType::L4)
                } else if lower.contains('_') || lower.starts_with(['\'', '"']) {
                    None
                } else if lower.contains('d') {
                    Some(ElementType::R8)
                } else if lower.contains(['.', 'e']) {
                    Some(ElementType::R4)
                } else {
                    None
                }
            }
            ExprKind::Name(name) => match self.lookup(&name.key()) {
                Some(id) => {
                    let symbol = model.symbol(id);
                    match symbol.kind {
                        SymbolKind::Variable | SymbolKind::Constant(_) if symbol.type_name.is_empty() => {
                            Some(implicit(&name.key()))
                        }
                        SymbolKind::Variable | SymbolKind::Constant(_) => crate::element_suffix(symbol),
                        _ => None,
                    }
                }
                None => Some(implicit(&name.key())),
            },
            ExprKind::Ref { name, args } => {
                if let Some(id) = self.lookup(&name.key()) {
                    let symbol = model.symbol(id);
                    if symbol.is_array() {
                        return if symbol.type_name.is_empty() {
                            Some(implicit(&name.key()))
                        } else {
                            crate::element_suffix(symbol)
                        };
                    }
                }
                if args.iter().any(|it| matches!(it, Subscript::Keyword { .. })) {
                    return None;
                }
                let values: Vec<&Expr> = args.iter().filter_map(Subscript::as_expr).collect();
                let promoted = || values.iter().try_fold(ElementType::I4, |acc, it| promote(acc, self.type_of(it)?));
                match name.key().as_str() {
                    "real" | "float" | "sngl" if values.len() == 1 => Some(ElementType::R4),
                    "dble" | "dprod" => Some(ElementType::R8),
                    "int" | "nint" | "floor" | "ceiling" | "ifix" if values.len() == 1 => Some(ElementType::I4),
                    "max" | "min" | "mod" | "modulo" | "sign" | "dim" | "sqrt" | "exp" | "log" | "sin" | "cos"
                    | "tan" | "aint" | "anint" => promoted(),
                    // |z| of a complex z is real.
                    "abs" | "cabs" => promoted().map(|it| ElementType { base: it.base.min(Base::Real), ..it }),
                    _ => None,
                }
            }
            ExprKind::Unary { op: UnaryOp::Not, operand } => {
                self.type_of(operand)?.is_logical().then_some(ElementType::L4)
            }
            ExprKind::Unary { operand, .. } | ExprKind::Paren(operand) => self.type_of(operand),
            ExprKind::Binary { op: BinaryOp::Other, lhs, rhs } => {
                self.type_of(lhs)?;
                self.type_of(rhs)?;
                Some(ElementType::L4)
            }
            ExprKind::Binary { lhs, rhs, .. } => promote(self.type_of(lhs)?, self.type_of(rhs)?),
            ExprKind::Other(_) => None,
        }
    }

    /// The plan of a statement whose reductions of distributed arrays can be
    /// computed in parallel, leaving no other reference to distributed data.
    pub(crate) fn reduction_statement<'s>(&mut self, stmt: &'s Stmt) -> Result<Plan<'s>, String>
    where
        'a: 's,
    {
        let mut assigned_array: Option<String> = None;
        let (exprs, output): (Vec<&'s Expr>, bool) = match &stmt.kind {
            StmtKind::Assign { lhs, rhs } => {
                match &lhs.kind {
                    ExprKind::Name(name) => {
                        if let Some(id) = self.lookup(&name.key()) {
                            let symbol = self.analysis.model.symbol(id);
                            // (`loc = maxloc(t)`: checked below.)
                            if symbol.is_array() {
                                if self.distributed.contains_key(&id) || !is_location_call(rhs) {
                                    return Err(format!("it assigns the array {} as a whole", name.text));
                                }
                                assigned_array = Some(name.text.clone());
                            }
                        }
                    }
                    // An element of a replicated array (`found(j) = maxloc(a(:, j), 1)`):
                    // every process holds the combined value and assigns it alike.
                    // Subscripts that read distributed data are left uncovered below.
                    ExprKind::Ref { name, args }
                        if args.iter().all(|it| matches!(it, Subscript::Expr(_)))
                            && self.lookup(&name.key()).is_some_and(|id| {
                                !self.distributed.contains_key(&id) && self.analysis.model.symbol(id).is_array()
                            }) => {}
                    _ => return Err("its left side is not a scalar or an element of a replicated array".to_string()),
                }
                (vec![rhs], false)
            }
            StmtKind::Output { items } => (items.iter().collect(), true),
            _ => return Err("it is not an assignment or an output statement".to_string()),
        };
        let mut calls: Vec<(&'s Expr, Kind, &'s [Subscript])> = Vec::new();
        for expr in exprs {
            self.collect_reductions(expr, &mut calls);
        }
        if calls.is_empty() {
            return Err("it reads distributed elements outside reductions".to_string());
        }
        // An element of a replicated array takes reductions only: an element
        // read from its owner in every iteration of a loop over the array is
        // the distributed fallback's (`nest_fetch.rs`), fetched at once.
        if matches!(&stmt.kind, StmtKind::Assign { lhs, .. } if matches!(lhs.kind, ExprKind::Ref { .. }))
            && calls.iter().any(|it| it.1 == Kind::Element)
        {
            return Err("it assigns an element of a replicated array from distributed elements".to_string());
        }
        // Nothing distributed may remain outside the reductions.
        let covered: Vec<TextRange> = calls.iter().map(|it| it.0.range).collect();
        if self
            .distributed_occurrences(stmt.range)
            .iter()
            .any(|(range, _)| !covered.iter().any(|it| it.contains_range(*range)))
        {
            return Err("it reads distributed elements outside reductions".to_string());
        }
        let mut reductions = Vec::new();
        let mut edits = Vec::new();
        for (call, kind, args) in calls {
            let reduction = self.reduction(stmt, call, kind, args)?;
            let replacement = match (&reduction.locations, &reduction.location) {
                (Some(locations), _) => locations.result.clone(),
                (None, Some(position)) => position.clone(),
                (None, None) => reduction.temp.clone(),
            };
            edits.push((call.range, replacement));
            reductions.push(reduction);
        }
        // A whole array takes the positions of a MAXLOC or MINLOC without DIM only.
        if let Some(array) = assigned_array {
            let positions_only = matches!(&reductions[..], [only] if only.locations.is_some())
                && matches!(&stmt.kind, StmtKind::Assign { rhs, .. } if rhs.range == edits[0].0);
            if !positions_only {
                return Err(format!("it assigns the array {array} as a whole"));
            }
        }
        Ok(Plan::Reduce(Reduce { stmt, reductions, edits, output }))
    }

    fn reduction<'s>(
        &mut self,
        stmt: &'s Stmt,
        call: &'s Expr,
        kind: Kind,
        args: &'s [Subscript],
    ) -> Result<Reduction<'s>, String>
    where
        'a: 's,
    {
        if kind == Kind::Element {
            let ExprKind::Ref { name, args } = &call.kind else {
                return Err("an element reference without subscripts".to_string());
            };
            let id = self.lookup(&name.key()).ok_or("an unknown array")?;
            let distributed = &self.distributed[&id];
            if let Some(second) = &distributed.second {
                // An element of an array distributed in two dimensions.
                if args.len() != distributed.lbs.len()
                    || args.iter().any(|it| !matches!(it, Subscript::Expr(_)))
                    || !self.distributed_occurrences(TextRange::new(name.range.end, call.range.end)).is_empty()
                {
                    return Err(format!("it reads a section of {} outside reductions", distributed.name));
                }
                let index = [args[distributed.dim].range(), args[second.dim].range()];
                let suffix = distributed.suffix;
                let temp = self.reduction_temp(suffix);
                return Ok(Reduction {
                    kind,
                    temp,
                    suffix,
                    section: None,
                    element: Some((id, call.range, index[0])),
                    args: Vec::new(),
                    mask: None,
                    chain: false,
                    grid: None,
                    grid_element: Some(index),
                    element_edits: self.cyclic_element_edits(call)?,
                    ordered: None,
                    location: None,
                    locations: None,
                });
            }
            let Some(Subscript::Expr(index)) = args.get(distributed.dim) else {
                return Err(format!("it reads a section of {} outside reductions", distributed.name));
            };
            if args.len() != distributed.lbs.len()
                || args.iter().any(|it| !matches!(it, Subscript::Expr(_)))
                || !self.distributed_occurrences(TextRange::new(name.range.end, call.range.end)).is_empty()
            {
                return Err(format!("it reads a section of {} outside reductions", distributed.name));
            }
            let suffix = distributed.suffix;
            // A CYCLIC array's owner holds the element at its local position.
            let element_edits = if distributed.cyclic {
                vec![(index.range, format!("hpf_lx(hpf_d_{}, {})", distributed.name, self.one_line(index.range)))]
            } else {
                Vec::new()
            };
            let temp = self.reduction_temp(suffix);
            return Ok(Reduction {
                kind,
                temp,
                suffix,
                section: None,
                element: Some((id, call.range, index.range)),
                args: Vec::new(),
                mask: None,
                chain: false,
                grid: None,
                grid_element: None,
                element_edits,
                ordered: None,
                location: None,
                locations: None,
            });
        }
        if let ExprKind::Ref { name, .. } = &call.kind {
            if self.lookup(&name.key()).is_some_and(|id| self.analysis.model.symbol(id).is_array()) {
                return Err(format!("{} is an array here, not the intrinsic", name.text));
            }
        }
        if matches!(kind, Kind::MaxLoc | Kind::MinLoc) {
            return self.location(stmt, call, kind, args);
        }
        let arity = if kind == Kind::DotProduct { 2 } else { 1 };
        let values: Vec<&'s Expr> = args.iter().filter_map(Subscript::as_expr).collect();
        // `SUM(X, MASK=M)`: M is reduced alongside X, element for element.
        let mask = match args {
            [_, Subscript::Keyword { name, value }]
                if name.key() == "mask" && matches!(kind, Kind::Sum | Kind::Product | Kind::MaxVal | Kind::MinVal) =>
            {
                Some(value)
            }
            _ => None,
        };
        if args.len() - usize::from(mask.is_some()) != arity || values.len() != arity {
            return Err(format!("{} has DIM, MASK or other arguments", kind.intrinsic().to_uppercase()));
        }
        if mask.is_some_and(|it| self.type_of(it).is_some_and(|it| !it.is_logical())) {
            return Err("a MASK is not LOGICAL".to_string());
        }
        let types: Option<Vec<ElementType>> = values.iter().map(|it| self.type_of(it)).collect();
        let types = types.ok_or("the type of a reduced expression is not plainly known")?;
        let suffix = match kind {
            Kind::Count => {
                if !types[0].allows(ReductionOp::Logical) {
                    return Err("COUNT of a non-logical expression".to_string());
                }
                ElementType::I4
            }
            Kind::Any | Kind::All => {
                if !types[0].allows(ReductionOp::Logical) {
                    return Err("ANY or ALL of a non-logical expression".to_string());
                }
                // ANY and ALL are of the default kind whatever their argument's.
                ElementType::L4
            }
            Kind::DotProduct => {
                let promoted = promote(types[0], types[1]).ok_or("DOT_PRODUCT of non-numeric arrays")?;
                if promoted.base == Base::Complex {
                    // DOT_PRODUCT conjugates its first argument.
                    return Err("DOT_PRODUCT of COMPLEX arrays".to_string());
                }
                promoted
            }
            Kind::MaxVal | Kind::MinVal => {
                if !types[0].allows(ReductionOp::Order) {
                    return Err(format!(
                        "{} of a {} expression",
                        kind.intrinsic().to_uppercase(),
                        types[0].declaration()
                    ));
                }
                types[0]
            }
            _ => {
                if !types[0].allows(ReductionOp::Arithmetic) {
                    return Err(format!("a numeric reduction of a {} expression", types[0].declaration()));
                }
                types[0]
            }
        };
        let chain = self.ordered_reductions
            && matches!(kind, Kind::Sum | Kind::Product | Kind::DotProduct)
            && suffix.is_floating();
        match self.local_reduction(stmt, kind, suffix, values.clone(), mask, chain) {
            Err(_) if chain => {
                // Each process holds no single run of the sequential order:
                // the running value travels from owner to owner instead.
                let ordered = self.ordered_chain(&values, mask)?;
                let temp = self.reduction_temp(suffix);
                Ok(Reduction {
                    kind,
                    temp,
                    suffix,
                    section: None,
                    element: None,
                    args: values,
                    mask,
                    chain,
                    grid: None,
                    grid_element: None,
                    element_edits: Vec::new(),
                    ordered: Some(ordered),
                    location: None,
                    locations: None,
                })
            }
            result => result,
        }
    }

    /// `MAXLOC(ARRAY, DIM=1 [, MASK])` of a rank-1 expression of
    /// distributed BLOCK data: each process finds its first extreme
    /// element and its value, and `MPI_Allreduce` with `MPI_MAXLOC` or
    /// `MPI_MINLOC` on (value, global position) keeps the smallest
    /// position among equal values: the first, as the sequential MAXLOC.
    fn location<'s>(
        &mut self,
        stmt: &'s Stmt,
        call: &'s Expr,
        kind: Kind,
        args: &'s [Subscript],
    ) -> Result<Reduction<'s>, String>
    where
        'a: 's,
    {
        let what = kind.intrinsic().to_uppercase();
        let values = crate::permute::intrinsic_arguments(args, &["array", "dim", "mask", "kind", "back"])
            .ok_or_else(|| format!("{what} has arguments it does not know"))?;
        let (Some(array), dim, mask, None, None) = (values[0], values[1], values[2], values[3], values[4]) else {
            return Err(format!("{what} with KIND or BACK runs on rank 0"));
        };
        let rank = self.rank_of(array).filter(|it| *it > 0);
        let rank = rank.ok_or_else(|| format!("{what} of an expression whose rank is not plain"))?;
        if dim.is_some_and(|dim| self.constant_of(dim) != Some(1) || rank != 1) {
            return Err(format!("{what} of an expression that is not of rank 1 along DIM=1"));
        }
        if mask.is_some_and(|it| self.type_of(it) != Some(ElementType::L4) || self.rank_of(it) != Some(rank)) {
            return Err(format!("a MASK is not a LOGICAL expression of rank {rank}"));
        }
        let suffix = self.type_of(array).filter(|it| [ElementType::I4, ElementType::R4, ElementType::R8].contains(it));
        let suffix = suffix.ok_or_else(|| format!("{what} of an expression whose type is not plainly numeric"))?;
        if dim.is_some() {
            if let Some(reduction) = self.owner_location(call, kind) {
                return Ok(reduction);
            }
        }
        let mut reduction = self.local_reduction(stmt, kind, suffix, vec![array], mask, false)?;
        if reduction.grid.is_some() || reduction.section.as_ref().is_none_or(|it| it.courses()) {
            return Err(format!("{what} of CYCLIC data or of a 2-D grid runs on rank 0"));
        }
        if dim.is_none() {
            let cut = self
                .cut_dimension(array, rank)
                .ok_or_else(|| format!("{what} of an expression whose distributed dimension is not a section"))?;
            let mut positions = || {
                let name = format!("hpf_r{}", self.temps.len() + 1);
                self.temps.push((format!("integer, dimension({rank})"), name.clone()));
                name
            };
            let (local, result) = (positions(), positions());
            reduction.locations = Some(Locations { rank, cut, local, result });
        }
        let position = format!("hpf_r{}", self.temps.len() + 1);
        self.temps.push(("integer".to_string(), position.clone()));
        reduction.location = Some(position);
        Ok(reduction)
    }

    /// Which dimension of the section `expr` (of rank `rank`) its
    /// distributed arrays are cut along: the count of section subscripts
    /// before the distributed one, alike in every distributed reference.
    fn cut_dimension(&self, expr: &Expr, rank: usize) -> Option<usize> {
        let mut cut = None;
        let mut agree = |here: usize| {
            let same = cut.is_none_or(|it| it == here);
            cut = Some(here);
            same
        };
        let mut stack = vec![expr];
        while let Some(expr) = stack.pop() {
            match &expr.kind {
                ExprKind::Name(name) => {
                    let Some(id) = self.lookup(&name.key()).filter(|id| self.distributed.contains_key(id)) else {
                        continue;
                    };
                    // A whole array: every dimension is a section.
                    let distributed = &self.distributed[&id];
                    if distributed.second.is_some() || distributed.lbs.len() != rank || !agree(distributed.dim) {
                        return None;
                    }
                }
                ExprKind::Ref { name, args } => {
                    let Some(id) = self.lookup(&name.key()).filter(|id| self.distributed.contains_key(id)) else {
                        stack.extend(args.iter().filter_map(Subscript::as_expr));
                        continue;
                    };
                    let distributed = &self.distributed[&id];
                    if distributed.second.is_some() || args.len() != distributed.lbs.len() {
                        return None;
                    }
                    let sections =
                        |args: &[Subscript]| args.iter().filter(|it| matches!(it, Subscript::Range { .. })).count();
                    if !matches!(args.get(distributed.dim), Some(Subscript::Range { .. }))
                        || sections(args) != rank
                        || !agree(sections(&args[..distributed.dim]))
                    {
                        return None;
                    }
                }
                ExprKind::Unary { operand, .. } | ExprKind::Paren(operand) => stack.push(operand),
                ExprKind::Binary { lhs, rhs, .. } => stack.extend([&**lhs, &**rhs]),
                ExprKind::Other(_) => return None,
                ExprKind::Int(_) | ExprKind::Literal(_) => {}
            }
        }
        cut
    }

    /// A MAXLOC or MINLOC whose distributed data all lie at one index of
    /// the distributed dimension (`maxloc(abs(a(k:n, k)), 1)` of a matrix
    /// distributed by columns): the owner of that index computes it and
    /// broadcasts the position (the element path of `emit_reduce`).
    fn owner_location<'s>(&mut self, call: &'s Expr, kind: Kind) -> Option<Reduction<'s>> {
        let mut refs = Vec::new();
        distributed_refs(
            call,
            &|name| self.lookup(&name.key()).filter(|id| self.distributed.contains_key(id)),
            &mut refs,
        );
        let &(id, _) = refs.first()?;
        let distributed = &self.distributed[&id];
        if distributed.second.is_some() || refs.len() != self.distributed_occurrences(call.range).len() {
            return None;
        }
        let mut index = None;
        let mut edits = Vec::new();
        for (other, args) in &refs {
            let Some(Subscript::Expr(at)) = args.get(distributed.dim) else { return None };
            let text = self.one_line(at.range);
            let same =
                *other == id && args.len() == distributed.lbs.len() && index.as_ref().is_none_or(|(_, it)| *it == text);
            if !same || !self.distributed_occurrences(at.range).is_empty() {
                return None;
            }
            if distributed.cyclic {
                edits.push((at.range, format!("hpf_lx(hpf_d_{}, {text})", distributed.name)));
            }
            index.get_or_insert((at.range, text));
        }
        let (index, _) = index?;
        let temp = self.reduction_temp(ElementType::I4);
        Some(Reduction {
            kind,
            temp,
            suffix: ElementType::I4,
            section: None,
            element: Some((id, call.range, index)),
            args: Vec::new(),
            mask: None,
            chain: false,
            grid: None,
            grid_element: None,
            element_edits: edits,
            ordered: None,
            location: None,
            locations: None,
        })
    }

    /// The rank of an expression made of array references with at most
    /// one section subscript each, scalars and elemental operations.
    pub(crate) fn rank_of(&self, expr: &Expr) -> Option<usize> {
        let model = &self.analysis.model;
        match &expr.kind {
            ExprKind::Int(_) | ExprKind::Literal(_) => Some(0),
            ExprKind::Name(name) => Some(self.lookup(&name.key()).map_or(0, |id| model.symbol(id).shape.len())),
            ExprKind::Ref { name, args } => {
                if self.lookup(&name.key()).is_some_and(|id| model.symbol(id).is_array()) {
                    let mut rank = 0;
                    for arg in args {
                        match arg {
                            Subscript::Range { .. } => rank += 1,
                            Subscript::Expr(value) if self.rank_of(value) == Some(0) => {}
                            _ => return None,
                        }
                    }
                    return Some(rank);
                }
                // An elemental intrinsic: the rank of its arguments.
                let ranks: Option<Vec<usize>> = args.iter().map(|it| self.rank_of(it.as_expr()?)).collect();
                let ranks = ranks?;
                let rank = ranks.iter().copied().max().unwrap_or(0);
                ranks.iter().all(|it| *it == 0 || *it == rank).then_some(rank)
            }
            ExprKind::Unary { operand, .. } | ExprKind::Paren(operand) => self.rank_of(operand),
            ExprKind::Binary { lhs, rhs, .. } => match (self.rank_of(lhs)?, self.rank_of(rhs)?) {
                (0, rank) | (rank, 0) => Some(rank),
                (a, b) => (a == b).then_some(a),
            },
            ExprKind::Other(_) => None,
        }
    }

    /// A new replicated temporary of element type `suffix` for a reduction's value.
    fn reduction_temp(&mut self, suffix: ElementType) -> String {
        let temp = format!("hpf_r{}", self.temps.len() + 1);
        self.temps.push((suffix.declaration(), temp.clone()));
        temp
    }

    /// A reduction each process computes on the part of the section it
    /// holds (a chain when that part is one run of the sequential order).
    fn local_reduction<'s>(
        &mut self,
        stmt: &'s Stmt,
        kind: Kind,
        suffix: ElementType,
        values: Vec<&'s Expr>,
        mask: Option<&'s Expr>,
        chain: bool,
    ) -> Result<Reduction<'s>, String>
    where
        'a: 's,
    {
        if chain && mask.is_some() {
            return Err(format!(
                "a floating-point {} with MASK keeps its order only on rank 0",
                kind.intrinsic().to_uppercase()
            ));
        }
        if mask.is_some_and(|it| self.touches_grid(it.range)) {
            return Err("a MASK of an array distributed in two dimensions is reduced only on rank 0".to_string());
        }
        if values.iter().any(|it| self.touches_grid(it.range)) {
            if chain {
                return Err(
                    "a floating-point reduction of an array distributed in two dimensions keeps its order only on rank 0"
                        .to_string(),
                );
            }
            let grid = self.grid_reduction(&values)?;
            let temp = self.reduction_temp(suffix);
            return Ok(Reduction {
                kind,
                temp,
                suffix,
                section: None,
                element: None,
                args: values,
                mask: None,
                chain,
                grid: Some(grid),
                grid_element: None,
                element_edits: Vec::new(),
                ordered: None,
                location: None,
                locations: None,
            });
        }
        let lined_up: Vec<&'s Expr> = values.iter().copied().chain(mask).collect();
        let section = self.reduced_section(stmt, &lined_up, chain)?;
        if chain && section.runtime_step() {
            // The direction of the chain is known only at run time: from owner to owner.
            return Err("a floating-point reduction with a run-time stride keeps its order owner to owner".to_string());
        }
        if chain && section.courses() {
            return Err(
                "a floating-point reduction of a CYCLIC array keeps its order only on rank 0 (its sequential order interleaves the processes)"
                    .to_string(),
            );
        }
        if chain && self.distributed[&section.home()].lbs.len() != 1 {
            self.whole_columns(&values, section.home())?;
        }
        self.grow_shadows(section.home(), 0, section.reads());
        let temp = self.reduction_temp(suffix);
        Ok(Reduction {
            kind,
            temp,
            suffix,
            section: Some(section),
            element: None,
            args: values,
            mask,
            chain,
            grid: None,
            grid_element: None,
            element_edits: Vec::new(),
            ordered: None,
            location: None,
            locations: None,
        })
    }

    /// A floating-point SUM or PRODUCT of a rank-2 or rank-3 array keeps
    /// the sequential order along the chain of processes when each holds
    /// one run of that order: the whole array or whole columns of it
    /// (`A(:, L:H:S)`), distributed in BLOCKs along its last dimension only
    /// (the columns of a `(*, BLOCK)` array, in the section's order; a
    /// negative step runs the chain from the last process). Declares the
    /// loop indices of the leading dimensions.
    fn whole_columns(&mut self, values: &[&Expr], home: crate::SymbolId) -> Result<(), String> {
        let why = "a floating-point reduction of a rank-2 or rank-3 array keeps its order only on rank 0";
        let distributed = &self.distributed[&home];
        let rank = distributed.lbs.len();
        // The whole array, or whole columns of it: `:` along every leading
        // dimension and any section of the last (the chain follows its step).
        let whole = match values {
            [value] => match &value.kind {
                ExprKind::Name(name) => self.lookup(&name.key()) == Some(home),
                ExprKind::Ref { name, args } => {
                    self.lookup(&name.key()) == Some(home)
                        && args.len() == rank
                        && args[..rank - 1]
                            .iter()
                            .all(|it| matches!(it, Subscript::Range { lo: None, hi: None, stride: None, .. }))
                        && matches!(args[rank - 1], Subscript::Range { .. })
                }
                _ => false,
            },
            _ => false,
        };
        if !whole || distributed.dim != rank - 1 || distributed.cyclic || !distributed.plain {
            return Err(format!(
                "{why} (unless it is whole columns of the array, `:` along its leading dimensions, BLOCK along its last dimension only)"
            ));
        }
        for dim in 1..rank {
            let index = format!("hpf_j{dim}");
            if !self.temps.iter().any(|it| it.1 == index) {
                self.temps.push(("integer".to_string(), index));
            }
        }
        Ok(())
    }

    /// MAXLOC or MINLOC without DIM ([`Locations`]): the first extreme of
    /// the process's part, its position in the whole section in array
    /// element order, combined across processes (the smallest position
    /// among equal values, as the sequential intrinsic's first one), then
    /// one subscript per dimension again.
    fn emit_locations(
        &self,
        out: &mut String,
        reduction: &Reduction,
        section: &SectionAssign,
        (position, locations): (&str, &Locations),
        args: &[String],
    ) {
        let value = if reduction.kind == Kind::MaxLoc { "maxval" } else { "minval" };
        let local_args = args.join(", ");
        let (temp, local, result) = (&reduction.temp, &locations.local, &locations.result);
        let (step, lo, hi) = (section.step(), section.lo(), section.hi());
        let cut = locations.cut + 1;
        // The whole section's extents (along the others the process holds all of it).
        let extents: Vec<String> = (1..=locations.rank)
            .map(|k| {
                if k == cut {
                    format!("max(0, (({hi}) - ({lo}) + ({step})) / ({step}))")
                } else {
                    format!("size({}, {k})", args[0])
                }
            })
            .collect();
        let strides: Vec<String> =
            (0..locations.rank).map(|k| if k == 0 { "1".to_string() } else { extents[..k].join(" * ") }).collect();
        let _ = writeln!(out, "  {local} = {}({local_args})", reduction.kind.intrinsic());
        let _ = writeln!(out, "  {temp} = {value}({local_args})");
        let _ = writeln!(out, "  if ({local}(1) > 0) then");
        let _ =
            writeln!(out, "    {local}({cut}) = (hpf_lo + ({local}({cut}) - 1) * ({step}) - ({lo})) / ({step}) + 1");
        let terms: Vec<String> =
            strides.iter().enumerate().map(|(k, stride)| format!("({local}({}) - 1) * ({stride})", k + 1)).collect();
        let _ = writeln!(
            out,
            "    {position} = 1 + {}
  else
    {position} = 0
  end if",
            terms.join(" + ")
        );
        let _ = writeln!(
            out,
            "  call hpf_location_{}({temp}, {position}, {})",
            reduction.suffix,
            if reduction.kind == Kind::MaxLoc { ".true." } else { ".false." }
        );
        let _ = writeln!(out, "  if ({position} > 0) then");
        for (k, (stride, extent)) in strides.iter().zip(&extents).enumerate() {
            let _ = writeln!(out, "    {result}({}) = mod(({position} - 1) / ({stride}), {extent}) + 1", k + 1);
        }
        let _ = writeln!(
            out,
            "  else
    {result} = 0
  end if"
        );
    }

    pub(crate) fn emit_reduce(&self, out: &mut String, reduce: &Reduce) {
        for reduction in &reduce.reductions {
            if let (Some((array, reference, _)), Some(index)) = (reduction.element, reduction.grid_element) {
                let name = &self.distributed[&array].name;
                let [first, second] = index.map(|it| self.one_line(it));
                let _ = writeln!(
                    out,
                    "  if (hpf_owns(hpf_d_{name}(1), {first}) .and. hpf_owns(hpf_d_{name}(2), {second})) {} = {}",
                    reduction.temp,
                    self.edited(reference, &reduction.element_edits).replace(['&', '\n'], " ")
                );
                let root = format!(
                    "hpf_owner(hpf_d_{name}(1), {first}) + hpf_owner(hpf_d_{name}(2), {second}) * hpf_np(hpf_d_{name}(1))"
                );
                self.emit_element_bcast(out, &reduction.temp, (&root, &root), reduction.suffix);
                continue;
            }
            if let Some(grid) = &reduction.grid {
                let _ = writeln!(
                    out,
                    "  ! hpf-ls: {} in parallel (on a 2-D grid)",
                    reduction.kind.intrinsic().to_uppercase()
                );
                self.emit_grid_section_bounds(out, grid);
                let temp = &reduction.temp;
                let args: Vec<String> = reduction.args.iter().map(|it| self.edited(it.range, grid.edits())).collect();
                let _ = writeln!(out, "  {temp} = {}({})", reduction.kind.intrinsic(), args.join(", "));
                emit_combine(out, temp, reduction.suffix, reduction.kind.mpi_op());
                continue;
            }
            if let Some((array, reference, index)) = reduction.element {
                let name = &self.distributed[&array].name;
                let index = self.one_line(index);
                let _ = writeln!(
                    out,
                    "  if (hpf_owns(hpf_d_{name}, {index})) {} = {}",
                    reduction.temp,
                    self.edited(reference, &reduction.element_edits).replace(['&', '\n'], " ")
                );
                let root = format!("hpf_owner(hpf_d_{name}, {index})");
                let key = self.owner_key(array, &index);
                self.emit_element_bcast(out, &reduction.temp, (&root, &key), reduction.suffix);
                continue;
            }
            if let Some(ordered) = &reduction.ordered {
                let identity = match reduction.kind {
                    Kind::Product => ("1", "*"),
                    _ => ("0", "+"),
                };
                let what = reduction.kind.intrinsic().to_uppercase();
                self.emit_ordered_chain(out, ordered, &reduction.temp, reduction.suffix, identity, &what);
                continue;
            }
            let Some(section) = &reduction.section else { continue };
            let step = section.step();
            let temp = &reduction.temp;
            let mut args: Vec<String> =
                reduction.args.iter().map(|it| self.edited(it.range, section.edits())).collect();
            // (Never with a chain.)
            args.extend(reduction.mask.map(|it| format!("mask={}", self.edited(it.range, section.edits()))));
            if section.courses() {
                // Course by course (the order does not matter: no chain
                // here): the first course's value, combined with the next ones'.
                let _ = writeln!(
                    out,
                    "  ! hpf-ls: {} in parallel (CYCLIC, course by course)",
                    reduction.kind.intrinsic().to_uppercase()
                );
                self.emit_course_bounds(out, section);
                let value = format!("{}({})", reduction.kind.intrinsic(), args.join(", "));
                let combined = match reduction.kind {
                    Kind::Product => format!("{temp} * {value}"),
                    Kind::MaxVal => format!("max({temp}, {value})"),
                    Kind::MinVal => format!("min({temp}, {value})"),
                    Kind::Any => format!("{temp} .or. {value}"),
                    Kind::All => format!("{temp} .and. {value}"),
                    Kind::Sum | Kind::Count | Kind::DotProduct | Kind::Element | Kind::MaxLoc | Kind::MinLoc => {
                        format!("{temp} + {value}")
                    }
                };
                let _ = writeln!(
                    out,
                    "  if (hpf_c == 0) then\n    {temp} = {value}\n  else\n    {temp} = {combined}\n  end if\n  end do"
                );
                emit_combine(out, temp, reduction.suffix, reduction.kind.mpi_op());
                continue;
            }
            let _ = writeln!(out, "  ! hpf-ls: {} in parallel", reduction.kind.intrinsic().to_uppercase());
            self.emit_section_bounds(out, section);
            if let (Some(position), Some(locations)) = (&reduction.location, &reduction.locations) {
                self.emit_locations(out, reduction, section, (position, locations), &args);
                continue;
            }
            if let Some(position) = &reduction.location {
                // The local extreme and its position in the section.
                let value = match reduction.kind {
                    Kind::MaxLoc => "maxval",
                    _ => "minval",
                };
                let local = args.join(", ");
                let (lo, what) = (section.lo(), reduction.kind.intrinsic());
                let _ = writeln!(out, "  {position} = {what}({}, 1{})", args[0], &local[args[0].len()..]);
                let _ = writeln!(out, "  {temp} = {value}({local})");
                let _ = writeln!(
                    out,
                    "  if ({position} > 0) {position} = (hpf_lo + ({position} - 1) * ({step}) - ({lo})) / ({step}) + 1"
                );
                let _ = writeln!(
                    out,
                    "  call hpf_location_{}({temp}, {position}, {})",
                    reduction.suffix,
                    if reduction.kind == Kind::MaxLoc { ".true." } else { ".false." }
                );
                continue;
            }
            if reduction.chain {
                let (identity, op) = match reduction.kind {
                    Kind::Product => ("1", "*"),
                    _ => ("0", "+"),
                };
                let distributed = &self.distributed[&section.home()];
                // A reversed array holds its first elements on the last rank:
                // the chain runs the other way.
                let direction = section.constant_step() * distributed.stride.signum();
                let _ = writeln!(out, "  {temp} = {identity}");
                let _ = writeln!(out, "  call hpf_chain_recv_{}({temp}, {direction})", reduction.suffix);
                if distributed.lbs.len() > 1 {
                    // The whole array by columns (`whole_columns`): its local
                    // columns, each element in the sequential order.
                    let rank = distributed.lbs.len();
                    let _ = writeln!(out, "  do hpf_i = hpf_lo, hpf_hi, {step}");
                    for dim in (1..rank).rev() {
                        let (lb, ub) = (&distributed.lbs[dim - 1], &distributed.ubs[dim - 1]);
                        let _ = writeln!(out, "  do hpf_j{dim} = {lb}, {ub}");
                    }
                    let indices: Vec<String> = (1..rank).map(|dim| format!("hpf_j{dim}")).collect();
                    let _ =
                        writeln!(out, "    {temp} = {temp} {op} {}({}, hpf_i)", distributed.name, indices.join(", "));
                    for _ in 0..rank {
                        let _ = writeln!(out, "  end do");
                    }
                } else {
                    let element = match reduction.kind {
                        Kind::DotProduct => format!("({}) * ({})", args[0], args[1]),
                        _ => format!("({})", args[0]),
                    };
                    let _ = writeln!(
                        out,
                        "  do hpf_i = hpf_lo, hpf_hi, {step}\n    {temp} = {temp} {op} {element}\n  end do"
                    );
                }
                let _ = writeln!(out, "  call hpf_chain_send_{}({temp}, {direction})", reduction.suffix);
            } else {
                let _ = writeln!(out, "  {temp} = {}({})", reduction.kind.intrinsic(), args.join(", "));
                emit_combine(out, temp, reduction.suffix, reduction.kind.mpi_op());
            }
        }
        let text = self.edited_statement(reduce.stmt, &reduce.edits);
        if reduce.output {
            let _ = writeln!(out, "  if (hpf_rank == 0) then\n{text}\n  end if");
        } else {
            let _ = writeln!(out, "{text}");
        }
    }
}

/// Combines the partial values `temp` of every process with `op` so that
/// each holds the result: floating-point sums and products in rank order
/// (`hpf_combine_*`: the same bits on every process and in every run on as
/// many processes, which `MPI_Allreduce` does not promise), anything else
/// (exact in any order) with `MPI_Allreduce`.
pub(crate) fn emit_combine(out: &mut String, temp: &str, suffix: ElementType, op: &str) {
    if suffix.is_floating() && matches!(op, "MPI_SUM" | "MPI_PROD") {
        let product = if op == "MPI_PROD" { ".true." } else { ".false." };
        let _ = writeln!(out, "  call hpf_combine_{suffix}({temp}, {product})");
    } else if !suffix.mpi_orders() && matches!(op, "MPI_MAX" | "MPI_MIN") {
        let larger = if op == "MPI_MAX" { ".true." } else { ".false." };
        let _ = writeln!(out, "  call hpf_extremum_{suffix}({temp}, {larger})");
    } else {
        let _ = writeln!(
            out,
            "  call MPI_Allreduce(MPI_IN_PLACE, {temp}, 1, {}, {op}, MPI_COMM_WORLD)",
            crate::mpi_type(suffix)
        );
    }
}

impl Lowering<'_> {
    /// The reduction calls and distributed element references in `expr`,
    /// outermost first (a reduction inside another one is part of the outer
    /// one's argument).
    fn collect_reductions<'s>(&self, expr: &'s Expr, calls: &mut Vec<(&'s Expr, Kind, &'s [Subscript])>) {
        collect_reductions(expr, calls, &|name: &syntax::Name| {
            let model = &self.analysis.model;
            let id = self.lookup(&name.key());
            if id.is_some_and(|id| self.distributed.contains_key(&id)) {
                Some(Kind::Element)
            } else if id.is_some_and(|id| model.symbol(id).is_array()) {
                None
            } else {
                Kind::from_name(&name.key())
            }
        });
    }
}

fn collect_reductions<'s>(
    expr: &'s Expr,
    calls: &mut Vec<(&'s Expr, Kind, &'s [Subscript])>,
    kind_of: &dyn Fn(&syntax::Name) -> Option<Kind>,
) {
    match &expr.kind {
        ExprKind::Ref { name, args } => {
            if let Some(kind) = kind_of(name) {
                calls.push((expr, kind, args));
                return;
            }
            for arg in args {
                match arg {
                    Subscript::Expr(value) | Subscript::Keyword { value, .. } => {
                        collect_reductions(value, calls, kind_of)
                    }
                    Subscript::Range { lo, hi, stride, .. } => {
                        for it in [lo, hi, stride].into_iter().flatten() {
                            collect_reductions(it, calls, kind_of);
                        }
                    }
                    Subscript::Star(_) => {}
                }
            }
        }
        ExprKind::Unary { operand, .. } | ExprKind::Paren(operand) => collect_reductions(operand, calls, kind_of),
        ExprKind::Binary { lhs, rhs, .. } => {
            collect_reductions(lhs, calls, kind_of);
            collect_reductions(rhs, calls, kind_of);
        }
        // Implied DO loops and constructors may bind their own indices: what
        // they read stays with the statement (and sends it to rank 0).
        ExprKind::Other(_) => {}
        _ => {}
    }
}

/// The references with subscripts to arrays `distributed` knows in `expr`,
/// with their subscripts.
fn distributed_refs<'s>(
    expr: &'s Expr,
    distributed: &dyn Fn(&syntax::Name) -> Option<crate::SymbolId>,
    refs: &mut Vec<(crate::SymbolId, &'s [Subscript])>,
) {
    match &expr.kind {
        ExprKind::Ref { name, args } => {
            if let Some(id) = distributed(name) {
                refs.push((id, args));
            }
            for arg in args {
                match arg {
                    Subscript::Expr(value) | Subscript::Keyword { value, .. } => {
                        distributed_refs(value, distributed, refs)
                    }
                    Subscript::Range { lo, hi, stride, .. } => {
                        for it in [lo, hi, stride].into_iter().flatten() {
                            distributed_refs(it, distributed, refs);
                        }
                    }
                    Subscript::Star(_) => {}
                }
            }
        }
        ExprKind::Unary { operand, .. } | ExprKind::Paren(operand) => distributed_refs(operand, distributed, refs),
        ExprKind::Binary { lhs, rhs, .. } => {
            distributed_refs(lhs, distributed, refs);
            distributed_refs(rhs, distributed, refs);
        }
        _ => {}
    }
}
