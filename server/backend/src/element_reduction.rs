//! A DO loop that reduces into one target invariant in the loop:
//! `DO J = L, H, S; t = t op term(J); END DO` (op `+`, `-`, `*`, MAX, MIN;
//! `t` an element of a distributed array or a replicated scalar) whose
//! term reads distributed arrays only at their J-th element along their
//! distributed dimension, all of them laid out alike along it
//! (`Y(I) = Y(I) - A(I,J) * Y(J)` with `A(*, CYCLIC)` and Y aligned with A's
//! columns): the term of iteration J is local to the owner of the J-th
//! element. By default each process reduces its own J's, the partials are
//! combined on every process (`emit_combine`) and `t`'s owner (every process
//! for a scalar) applies the result. With ordered reductions (floating
//! point), the running value starts at `t`'s owner and goes from owner to
//! owner in the loop's order, each applying its own iterations, then back to
//! `t`'s owner (a scalar: broadcast): the sequential result bit for bit.
//! A term reading the target's array must not read the target element (its
//! J stays on one side of the target's subscript).

use std::fmt::Write;

use analysis::model::SymbolId;
use syntax::{BinaryOp, Expr, ExprKind, Stmt, StmtKind, Subscript, TextRange};

use crate::element_type::{ElementType, ReductionOp};
use crate::{Distributed, Lowering};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Sum,
    Difference,
    Product,
    Max,
    Min,
}

/// Where the reduction lands.
enum Target {
    /// A replicated scalar, as written.
    Scalar(String),
    /// An element of a distributed array: its owner test and its local text.
    Element { array: SymbolId, index: String, local: String },
}

pub(crate) struct ElementReduction<'a> {
    control: &'a syntax::LoopControl,
    op: Op,
    target: Target,
    /// The array whose J-th element's owner computes term J.
    home: SymbolId,
    /// The term, its distributed subscripts made local positions.
    term: String,
    /// The whole right side with the target replaced by `temp` (ordered mode).
    update: String,
    suffix: ElementType,
    ordered: bool,
    temp: String,
}

/// One line, lower case, without blanks: to compare two references.
fn squeeze(text: &str) -> String {
    text.chars().filter(|it| !it.is_whitespace() && *it != '&').flat_map(char::to_lowercase).collect()
}

/// Whether `x`'s element i lives where `home`'s element i does (both
/// distributed along one dimension, on the same template cells of the same
/// target, or of targets of the same bounds cut alike: the runtime spreads
/// every distribution over all the processes).
pub(crate) fn lined_up(x: &Distributed, home: &Distributed) -> bool {
    x.second.is_none()
        && home.second.is_none()
        && x.offset == home.offset
        && x.stride == home.stride
        && x.template_lo == home.template_lo
        && x.template_hi == home.template_hi
        && x.block == home.block
        && x.cyclic == home.cyclic
}

impl<'a> Lowering<'a> {
    /// Whether the reference of `expr` whose name is at `range` reads the
    /// element of `id` that lives with the element `index_form` of `home`
    /// along a dimension of another rank (`A(I, I)` with `A(*, CYCLIC)` for
    /// `X(I)` aligned with A's columns): the same cell, no fetch.
    pub(crate) fn lined_up_element(
        &self,
        expr: &Expr,
        range: TextRange,
        id: SymbolId,
        home: SymbolId,
        index_form: &analysis::eval::Linear,
    ) -> bool {
        let distributed = &self.distributed[&id];
        if !lined_up(distributed, &self.distributed[&home]) {
            return false;
        }
        let Some(args) = crate::assign::find_reference(expr, range) else { return false };
        if args.len() != distributed.lbs.len()
            || args.iter().any(|it| !matches!(it, Subscript::Expr(_)))
            || args.iter().any(|it| !self.distributed_occurrences(it.range()).is_empty())
        {
            return false;
        }
        let Some(form) = args[distributed.dim].as_expr().and_then(|it| self.linear_of(it)) else { return false };
        form.coefs == index_form.coefs && form.constant == index_form.constant
    }

    /// The loop `stmt` as a reduction into an invariant target, or why not.
    pub(crate) fn element_reduction<'s>(&mut self, stmt: &'s Stmt) -> Result<ElementReduction<'s>, String>
    where
        'a: 's,
    {
        let StmtKind::Do { control: Some(control), body, .. } = &stmt.kind else {
            return Err("it is not a counted DO loop".to_string());
        };
        let key = control.var.key();
        let keys = [key.clone()];
        let mut assigns = body.iter().filter(|it| {
            !(matches!(it.kind, StmtKind::Other { .. })
                && self.slice(it.range).split_whitespace().last().is_some_and(|w| w.eq_ignore_ascii_case("continue")))
        });
        let (Some(assign), None) = (assigns.next(), assigns.next()) else {
            return Err("its body is not one assignment".to_string());
        };
        let StmtKind::Assign { lhs, rhs } = &assign.kind else {
            return Err("its body is not one assignment".to_string());
        };
        let bounds: Vec<&Expr> = [&control.lo, &control.hi].into_iter().chain(control.step.as_ref()).collect();
        if bounds.iter().any(|it| !self.distributed_occurrences(it.range).is_empty()) {
            return Err("its bounds read distributed arrays".to_string());
        }
        let step = match &control.step {
            Some(step) => self.constant_of(step).ok_or("its step is not a constant")?,
            None => 1,
        };
        if step == 0 {
            return Err("its step is zero".to_string());
        }
        if crate::mentions(lhs, &keys) {
            return Err("its target moves with the loop".to_string());
        }
        let target_text = squeeze(&self.one_line(lhs.range));
        let is_target = |expr: &Expr| squeeze(&self.one_line(expr.range)) == target_text;
        let (op, target_expr, term) = match &rhs.kind {
            ExprKind::Binary { op, lhs: first, rhs: second } if is_target(first) => {
                let op = match op {
                    BinaryOp::Add => Op::Sum,
                    BinaryOp::Sub => Op::Difference,
                    BinaryOp::Mul => Op::Product,
                    _ => return Err("it is not a reduction".to_string()),
                };
                (op, &**first, &**second)
            }
            ExprKind::Ref { name, args } if args.len() == 2 && self.lookup(&name.key()).is_none() => {
                let op = match name.key().as_str() {
                    // The specific names of FORTRAN 77 (`DMAX1(RMAX, DABS(R))`).
                    "max" | "amax0" | "amax1" | "dmax1" | "max0" | "max1" => Op::Max,
                    "min" | "amin0" | "amin1" | "dmin1" | "min0" | "min1" => Op::Min,
                    _ => return Err("it is not a reduction".to_string()),
                };
                match &args[..] {
                    [Subscript::Expr(first), Subscript::Expr(second)] if is_target(first) => (op, first, second),
                    [Subscript::Expr(first), Subscript::Expr(second)] if is_target(second) => (op, second, first),
                    _ => return Err("it is not a reduction".to_string()),
                }
            }
            _ => return Err("it is not a reduction".to_string()),
        };
        let suffix = self.type_of(lhs).ok_or("the type of its target is not plainly known")?;
        let allowed = match op {
            Op::Max | Op::Min => suffix.allows(ReductionOp::Order),
            _ => suffix.allows(ReductionOp::Arithmetic),
        };
        if !allowed {
            return Err("its target's type takes no such reduction".to_string());
        }
        // The target: a replicated scalar or an element of a distributed array.
        let mut target_edits = Vec::new();
        let (target, target_array, target_index) = match &lhs.kind {
            ExprKind::Name(name) => {
                let id = self.lookup(&name.key()).ok_or("an unknown target")?;
                if self.distributed.contains_key(&id) || self.analysis.model.symbol(id).is_array() {
                    return Err("its target is an array".to_string());
                }
                if crate::mentions(term, &[name.key()]) {
                    return Err("its term reads its target".to_string());
                }
                (Target::Scalar(self.one_line(lhs.range)), None, None)
            }
            ExprKind::Ref { name, args } => {
                let id = self.lookup(&name.key()).ok_or("an unknown target")?;
                let distributed = self.distributed.get(&id).ok_or("its target is an element of a replicated array")?;
                if distributed.second.is_some() || args.len() != distributed.lbs.len() {
                    return Err("its target is not an element of an array distributed along one dimension".to_string());
                }
                if args.iter().any(|it| !matches!(it, Subscript::Expr(_)))
                    || !self.distributed_occurrences(TextRange::new(name.range.end, lhs.range.end)).is_empty()
                {
                    return Err("its target is not one element".to_string());
                }
                let index = args[distributed.dim].as_expr().expect("an expression");
                let index_text = self.one_line(index.range);
                if distributed.cyclic {
                    target_edits.push((index.range, format!("hpf_lx(hpf_d_{}, {index_text})", distributed.name)));
                }
                let local = self.edited(lhs.range, &target_edits).replace(['&', '\n'], " ");
                (Target::Element { array: id, index: index_text, local }, Some(id), Some(index))
            }
            _ => return Err("its target is not a scalar or an element".to_string()),
        };
        // Every distributed reference of the term at the J-th element, laid out alike.
        let mut home: Option<SymbolId> = None;
        let mut edits: Vec<(TextRange, String)> = Vec::new();
        for (range, id) in self.distributed_occurrences(term.range) {
            let distributed = &self.distributed[&id];
            let args = crate::assign::find_reference(term, range)
                .ok_or_else(|| format!("its term reads {} whole", distributed.name))?;
            if distributed.second.is_some() || args.len() != distributed.lbs.len() {
                return Err(format!("its term reads {} other than by elements", distributed.name));
            }
            if args.iter().any(|it| !matches!(it, Subscript::Expr(_))) {
                return Err(format!("its term reads a section of {}", distributed.name));
            }
            let index = args[distributed.dim].as_expr().expect("an expression");
            if index.as_name().is_none_or(|it| it.key() != key) {
                return Err(format!("its term reads {} off the loop's element", distributed.name));
            }
            if args.iter().any(|it| !self.distributed_occurrences(it.range()).is_empty()) {
                return Err("a subscript of its term reads a distributed array".to_string());
            }
            match home {
                None => home = Some(id),
                Some(home) if lined_up(distributed, &self.distributed[&home]) => {}
                Some(home) => {
                    return Err(format!(
                        "{} and {} are distributed differently",
                        distributed.name, self.distributed[&home].name
                    ))
                }
            }
            if distributed.cyclic {
                edits.push((index.range, format!("hpf_lx(hpf_d_{}, {})", distributed.name, control.var.text)));
            }
            // The target's array read at J: never at the target element.
            if Some(id) == target_array {
                let target_index = target_index.and_then(|it| self.linear_of(it));
                let [lo, hi] = [&control.lo, &control.hi].map(|it| self.linear_of(it));
                let below_or_above = |bound: Option<analysis::eval::Linear>, above: bool| match (bound, &target_index) {
                    (Some(bound), Some(target)) if bound.coefs == target.coefs => {
                        if above {
                            bound.constant > target.constant
                        } else {
                            bound.constant < target.constant
                        }
                    }
                    _ => false,
                };
                // The iterations run from the first bound towards the second.
                let (low, high) = if step > 0 { (lo, hi) } else { (hi, lo) };
                if !(below_or_above(low, true) || below_or_above(high, false)) {
                    return Err(format!("its term may read its target element of {}", distributed.name));
                }
            }
        }
        let home = home.ok_or("its term reads no distributed array")?;
        let term_text = self.edited(term.range, &edits).replace(['&', '\n'], " ");
        let temp = format!("hpf_r{}", self.temps.len() + 1);
        self.temps.push((suffix.declaration(), temp.clone()));
        let mut update_edits = edits.clone();
        update_edits.push((target_expr.range, temp.clone()));
        let update = self.edited(rhs.range, &update_edits).replace(['&', '\n'], " ");
        let ordered = self.ordered_reductions && suffix.is_floating();
        if ordered {
            for name in ["hpf_cown", "hpf_cprev"] {
                if !self.temps.iter().any(|it| it.1 == name) {
                    self.temps.push(("integer".to_string(), name.to_string()));
                }
            }
        }
        Ok(ElementReduction { control, op, target, home, term: term_text, update, suffix, ordered, temp })
    }

    pub(crate) fn emit_element_reduction(&self, out: &mut String, plan: &ElementReduction) {
        let control = plan.control;
        let one_line = |range: TextRange| self.copy(range).replace(['&', '\n'], " ");
        let step = control.step.as_ref().map_or(String::new(), |it| format!(", {}", one_line(it.range)));
        let var = &control.var.text;
        let header = format!("  do {var} = {}, {}{step}", one_line(control.lo.range), one_line(control.hi.range));
        let home = &self.distributed[&plan.home].name;
        let temp = &plan.temp;
        let suffix = plan.suffix;
        let (owns_target, target_owner, target_text) = match &plan.target {
            Target::Scalar(name) => (None, None, name.clone()),
            Target::Element { array, index, local } => {
                let name = &self.distributed[array].name;
                (
                    Some(format!("hpf_owns(hpf_d_{name}, {index})")),
                    Some(format!("hpf_owner(hpf_d_{name}, {index})")),
                    local.clone(),
                )
            }
        };
        let target_what = match &plan.target {
            Target::Scalar(name) => name.clone(),
            Target::Element { .. } => "one element".to_string(),
        };
        if plan.ordered {
            let _ = writeln!(
                out,
                "  ! hpf-ls: {target_what} reduced over {var} in the sequential order: the running value goes from owner to owner"
            );
            match (&owns_target, &target_owner) {
                (Some(owns), Some(owner)) => {
                    let _ = writeln!(out, "  hpf_cprev = {owner}\n  if ({owns}) {temp} = {target_text}");
                }
                _ => {
                    let _ = writeln!(out, "  hpf_cprev = -1\n  {temp} = {target_text}");
                }
            }
            let _ = writeln!(out, "{header}");
            let _ = writeln!(out, "    hpf_cown = hpf_owner(hpf_d_{home}, {var})");
            let _ = writeln!(out, "    if (hpf_cown /= hpf_cprev) then");
            let _ = writeln!(out, "      if (hpf_cprev >= 0) call hpf_pass_{suffix}({temp}, hpf_cprev, hpf_cown)");
            let _ = writeln!(out, "      hpf_cprev = hpf_cown\n    end if");
            let _ = writeln!(out, "    if (hpf_cown == hpf_rank) {temp} = {}", plan.update);
            let _ = writeln!(out, "  end do");
            match (&owns_target, &target_owner) {
                (Some(owns), Some(owner)) => {
                    let _ = writeln!(
                        out,
                        "  if (hpf_cprev /= {owner}) call hpf_pass_{suffix}({temp}, hpf_cprev, {owner})\n  if ({owns}) {target_text} = {temp}"
                    );
                }
                _ => {
                    let _ = writeln!(
                        out,
                        "  if (hpf_cprev >= 0) call MPI_Bcast({temp}, 1, {}, hpf_cprev, MPI_COMM_WORLD)\n  {target_text} = {temp}",
                        crate::mpi_type(suffix)
                    );
                }
            }
            return;
        }
        let (identity, fold, mpi_op) = match plan.op {
            Op::Sum | Op::Difference => ("0".to_string(), format!("{temp} + ({})", plan.term), "MPI_SUM"),
            Op::Product => ("1".to_string(), format!("{temp} * ({})", plan.term), "MPI_PROD"),
            Op::Max => (format!("-huge({temp})"), format!("max({temp}, {})", plan.term), "MPI_MAX"),
            Op::Min => (format!("huge({temp})"), format!("min({temp}, {})", plan.term), "MPI_MIN"),
        };
        let _ =
            writeln!(out, "  ! hpf-ls: {target_what} reduced over {var}: each process its own {var}, then combined");
        let _ = writeln!(out, "  {temp} = {identity}");
        let _ = writeln!(out, "{header}");
        let _ = writeln!(out, "    if (hpf_owns(hpf_d_{home}, {var})) {temp} = {fold}");
        let _ = writeln!(out, "  end do");
        crate::reduce::emit_combine(out, temp, suffix, mpi_op);
        let apply = match plan.op {
            Op::Sum => format!("{target_text} = {target_text} + {temp}"),
            Op::Difference => format!("{target_text} = {target_text} - {temp}"),
            Op::Product => format!("{target_text} = {target_text} * {temp}"),
            Op::Max => format!("{target_text} = max({target_text}, {temp})"),
            Op::Min => format!("{target_text} = min({target_text}, {temp})"),
        };
        match owns_target {
            Some(owns) => {
                let _ = writeln!(out, "  if ({owns}) {apply}");
            }
            None => {
                let _ = writeln!(out, "  {apply}");
            }
        }
    }
}
