//! Floating-point SUM, PRODUCT and DOT_PRODUCT whose sequential order
//! interleaves the processes: sections of `(BLOCK, *)` arrays, of arrays on
//! 2-D grids, sections that cut the columns of `(*, BLOCK)` arrays, CYCLIC(m)
//! arrays with long runs. The sequential program adds the elements one by
//! one in array element order; to get its result bit for bit, the running
//! value visits the owners in that order: every process walks the
//! section's indices, the owner of an element adds it, and where the owner
//! changes the running value is sent from the previous owner to the next
//! (`hpf_pass_*`). No array is gathered; the messages are one value per
//! change of owner along the order (`(BLOCK, *)` of n x m on p processes:
//! about m * p). A CYCLIC(m) dimension with m below [`MIN_CYCLIC_RUN`] would
//! change owner every few elements, where gathering the data on rank 0 costs
//! less: those keep the rank-0 path.

use std::fmt::Write;

use syntax::{Expr, ExprKind, Subscript, TextRange};

use crate::{Lowering, SymbolId};

/// The shortest CYCLIC(m) run along which the running value travels.
const MIN_CYCLIC_RUN: i64 = 64;

/// A reduction computed along the owners, in the sequential order.
pub(crate) struct OrderedChain {
    /// `(index, first, last, step)` of the section's loops, outermost first.
    loops: Vec<(String, String, String, String)>,
    /// The rank owning the element at the current indices.
    owner: String,
    /// The value to combine for the current element.
    element: String,
    mask: Option<String>,
}

/// One reference to a distributed array inside the reduced expressions.
struct DistributedRef {
    id: SymbolId,
    range: TextRange,
    /// Per dimension: a triplet `(first, last, step)` or a scalar subscript.
    dims: Vec<Dim>,
}

#[derive(Clone)]
enum Dim {
    Triplet(String, String, String),
    Scalar(String),
}

impl Dim {
    fn key(&self) -> String {
        match self {
            Dim::Triplet(lo, hi, step) => format!("{lo}:{hi}:{step}").replace(' ', "").to_ascii_lowercase(),
            Dim::Scalar(text) => text.replace(' ', "").to_ascii_lowercase(),
        }
    }
}

impl<'a> Lowering<'a> {
    /// The ordered chain of a floating-point reduction of `values` (and
    /// `mask`), or why it cannot run this way.
    pub(crate) fn ordered_chain(&mut self, values: &[&Expr], mask: Option<&Expr>) -> Result<OrderedChain, String> {
        let mut refs = Vec::new();
        for expr in values.iter().copied().chain(mask) {
            self.collect_distributed_refs(expr, &mut refs, 0)?;
            // Every distributed name in it must be one of those references
            // (none inside a subscript of another).
            let inside = refs.iter().filter(|it| expr.range.contains_range(it.range)).count();
            if self.distributed_occurrences(expr.range).len() != inside {
                return Err("a distributed array is read inside a subscript".to_string());
            }
        }
        let Some(driver) = refs.first() else {
            return Err("it reduces no distributed array".to_string());
        };
        let keys: Vec<String> = driver.dims.iter().map(Dim::key).collect();
        let home = self.distributed[&driver.id].clone();
        for other in &refs[1..] {
            let distributed = &self.distributed[&other.id];
            // The same index on the same process: the same alignment, or the
            // same blocks at the same offsets.
            let same_offsets = distributed.offset == home.offset
                && distributed.second.as_ref().map(|it| it.offset) == home.second.as_ref().map(|it| it.offset);
            let same_place = distributed.same_alignment(&home) || (distributed.same_blocks(&home) && same_offsets);
            if !same_place || other.dims.iter().map(Dim::key).ne(keys.iter().cloned()) {
                return Err(format!(
                    "{} and {} are not sectioned alike on the same processes",
                    home.name, distributed.name
                ));
            }
        }
        for (dim, cyclic) in [(home.dim, home.cyclic.then_some(home.block))]
            .into_iter()
            .chain(home.second.as_ref().map(|it| (it.dim, it.cyclic.then_some(it.block))))
        {
            if let Some(m) = cyclic.filter(|m| *m < MIN_CYCLIC_RUN) {
                if matches!(driver.dims[dim], Dim::Triplet(..)) {
                    let (layout, every) = if m == 1 {
                        ("CYCLIC".to_string(), "element".to_string())
                    } else {
                        (format!("CYCLIC({m})"), format!("{m} elements"))
                    };
                    return Err(format!(
                        "a floating-point reduction of the {layout} array {} keeps its order only on rank 0 (passing the running value from owner to owner would cost a message every {every}: gathering costs less)",
                        home.name
                    ));
                }
            }
        }
        // The section's loops, first dimension innermost (array element order).
        let mut loops = Vec::new();
        let mut indices = Vec::new();
        for (dim, spec) in driver.dims.iter().enumerate() {
            match spec {
                Dim::Triplet(lo, hi, step) => {
                    let index = format!("hpf_q{}", dim + 1);
                    self.declare_integer(&index);
                    loops.push((index.clone(), lo.clone(), hi.clone(), step.clone()));
                    indices.push(index);
                }
                Dim::Scalar(text) => indices.push(format!("({text})")),
            }
        }
        loops.reverse();
        let descriptor = |id: SymbolId, axis: usize| {
            let distributed = &self.distributed[&id];
            match distributed.second {
                Some(_) => format!("hpf_d_{}({axis})", distributed.name),
                None => format!("hpf_d_{}", distributed.name),
            }
        };
        let owner = match &home.second {
            None => format!("hpf_owner({}, {})", descriptor(driver.id, 1), indices[home.dim]),
            Some(second) => format!(
                "hpf_owner({first}, {}) + hpf_owner({second_desc}, {}) * hpf_np({first})",
                indices[home.dim],
                indices[second.dim],
                first = descriptor(driver.id, 1),
                second_desc = descriptor(driver.id, 2),
            ),
        };
        let mut edits = Vec::new();
        for reference in &refs {
            let distributed = &self.distributed[&reference.id];
            let local: Vec<String> = indices
                .iter()
                .enumerate()
                .map(|(dim, index)| {
                    let axis = if dim == distributed.dim && distributed.cyclic {
                        Some(1)
                    } else {
                        distributed.second.as_ref().and_then(|it| (it.dim == dim && it.cyclic).then_some(2))
                    };
                    match axis {
                        Some(axis) => format!("hpf_lx({}, {index})", descriptor(reference.id, axis)),
                        None => index.clone(),
                    }
                })
                .collect();
            edits.push((reference.range, format!("{}({})", distributed.name, local.join(", "))));
        }
        let texts: Vec<String> =
            values.iter().map(|it| self.edited(it.range, &edits).replace(['&', '\n'], " ")).collect();
        let element = match texts.as_slice() {
            [x, y] => format!("({x}) * ({y})"),
            [x] => format!("({x})"),
            _ => return Err("a reduction of more than two arguments".to_string()),
        };
        let mask = mask.map(|it| self.edited(it.range, &edits).replace(['&', '\n'], " "));
        for name in ["hpf_cown", "hpf_cprev"] {
            self.declare_integer(name);
        }
        Ok(OrderedChain { loops, owner, element, mask })
    }

    fn declare_integer(&mut self, name: &str) {
        if !self.temps.iter().any(|it| it.1 == name) {
            self.temps.push(("integer".to_string(), name.to_string()));
        }
    }

    /// The references to distributed arrays in `expr`, which may otherwise
    /// hold scalars, literals, operators and elemental intrinsics only.
    fn collect_distributed_refs(
        &self,
        expr: &Expr,
        refs: &mut Vec<DistributedRef>,
        depth: usize,
    ) -> Result<(), String> {
        if depth > 64 {
            return Err("the reduced expression nests too deeply".to_string());
        }
        let array = |key: &str| self.lookup(key).filter(|id| self.analysis.model.symbol(*id).is_array());
        match &expr.kind {
            ExprKind::Int(_) | ExprKind::Literal(_) => Ok(()),
            ExprKind::Name(name) => match array(&name.key()) {
                Some(id) if self.distributed.contains_key(&id) => {
                    let distributed = &self.distributed[&id];
                    let dims = (0..distributed.lbs.len())
                        .map(|dim| {
                            Dim::Triplet(
                                distributed.lbs[dim].to_string(),
                                distributed.ubs[dim].to_string(),
                                "1".to_string(),
                            )
                        })
                        .collect();
                    refs.push(DistributedRef { id, range: expr.range, dims });
                    Ok(())
                }
                Some(_) => Err(format!("it reduces the array {}, which is not distributed", name.text)),
                None => Ok(()),
            },
            ExprKind::Ref { name, args } => match array(&name.key()) {
                Some(id) if self.distributed.contains_key(&id) => {
                    let distributed = &self.distributed[&id];
                    if args.len() != distributed.lbs.len() {
                        return Err(format!("{} is referenced with another rank", name.text));
                    }
                    let mut dims = Vec::new();
                    for (dim, arg) in args.iter().enumerate() {
                        dims.push(match arg {
                            Subscript::Range { lo, hi, stride, .. } => Dim::Triplet(
                                lo.as_ref().map_or(distributed.lbs[dim].to_string(), |it| self.one_line(it.range)),
                                hi.as_ref().map_or(distributed.ubs[dim].to_string(), |it| self.one_line(it.range)),
                                stride.as_ref().map_or("1".to_string(), |it| self.one_line(it.range)),
                            ),
                            Subscript::Expr(index) => {
                                if self.mentions_array(index) {
                                    return Err(format!("a subscript of {} is an array", name.text));
                                }
                                Dim::Scalar(self.one_line(index.range))
                            }
                            _ => return Err(format!("a subscript of {} is not a triplet or a scalar", name.text)),
                        });
                    }
                    refs.push(DistributedRef { id, range: expr.range, dims });
                    Ok(())
                }
                Some(_) => Err(format!("it reduces the array {}, which is not distributed", name.text)),
                None if crate::assign::ELEMENTAL.contains(&name.key().as_str()) => args
                    .iter()
                    .filter_map(Subscript::as_expr)
                    .try_for_each(|it| self.collect_distributed_refs(it, refs, depth + 1)),
                None => Err(format!("it calls {}, which is not an elemental intrinsic", name.text)),
            },
            ExprKind::Unary { operand, .. } | ExprKind::Paren(operand) => {
                self.collect_distributed_refs(operand, refs, depth + 1)
            }
            ExprKind::Binary { lhs, rhs, .. } => {
                self.collect_distributed_refs(lhs, refs, depth + 1)?;
                self.collect_distributed_refs(rhs, refs, depth + 1)
            }
            ExprKind::Other(_) => {
                Err("the reduced expression holds a construct the backend does not lower".to_string())
            }
        }
    }

    /// Whether `expr` names an array anywhere.
    fn mentions_array(&self, expr: &Expr) -> bool {
        let mut stack = vec![expr];
        while let Some(expr) = stack.pop() {
            match &expr.kind {
                ExprKind::Name(name) | ExprKind::Ref { name, .. }
                    if self.lookup(&name.key()).is_some_and(|id| self.analysis.model.symbol(id).is_array()) =>
                {
                    return true;
                }
                ExprKind::Ref { args, .. } => stack.extend(args.iter().filter_map(Subscript::as_expr)),
                ExprKind::Unary { operand, .. } | ExprKind::Paren(operand) => stack.push(operand),
                ExprKind::Binary { lhs, rhs, .. } => stack.extend([&**lhs, &**rhs]),
                ExprKind::Other(parts) => stack.extend(parts.iter()),
                ExprKind::Int(_) | ExprKind::Literal(_) | ExprKind::Name(_) => {}
            }
        }
        false
    }

    /// Computes `temp` (of type `suffix`) as `temp op element` over the
    /// chain's section, then gives every process the result.
    pub(crate) fn emit_ordered_chain(
        &self,
        out: &mut String,
        chain: &OrderedChain,
        temp: &str,
        suffix: crate::element_type::ElementType,
        (identity, op): (&str, &str),
        what: &str,
    ) {
        let _ = writeln!(out, "  ! hpf-ls: {what} in the sequential order: the running value goes from owner to owner");
        let _ = writeln!(out, "  {temp} = {identity}\n  hpf_cprev = -1");
        for (index, lo, hi, step) in &chain.loops {
            let _ = writeln!(out, "  do {index} = {lo}, {hi}, {step}");
        }
        let _ = writeln!(out, "    hpf_cown = {}", chain.owner);
        let _ = writeln!(out, "    if (hpf_cown /= hpf_cprev) then");
        let _ = writeln!(out, "      if (hpf_cprev >= 0) call hpf_pass_{suffix}({temp}, hpf_cprev, hpf_cown)");
        let _ = writeln!(out, "      hpf_cprev = hpf_cown\n    end if");
        let update = format!("{temp} = {temp} {op} {}", chain.element);
        match &chain.mask {
            Some(mask) => {
                let _ = writeln!(out, "    if (hpf_cown == hpf_rank) then\n      if ({mask}) {update}\n    end if");
            }
            None => {
                let _ = writeln!(out, "    if (hpf_cown == hpf_rank) {update}");
            }
        }
        for _ in &chain.loops {
            let _ = writeln!(out, "  end do");
        }
        let _ = writeln!(
            out,
            "  if (hpf_cprev >= 0) call MPI_Bcast({temp}, 1, {}, hpf_cprev, MPI_COMM_WORLD)",
            crate::mpi_type(suffix)
        );
    }
}
