//! A DO loop whose assignments each write one distributed array, at the
//! loop index, from data the loop does not write (`do i; a(i) = i; b(i) =
//! 2*i; end do` with a and b distributed differently) has no single home:
//! run as written, every process would walk every iteration and test the
//! owner of each element. Such a loop is split into one loop per
//! assignment (loop fission), each run by the owners of its array's
//! elements. The split keeps the loop's meaning: no assignment reads what
//! another writes, and no element is written twice.

use std::fmt::Write;

use syntax::{ExprKind, LoopControl, Stmt, StmtKind, Subscript, TextRange};

use crate::{Lowering, Plan, SymbolId};

/// One assignment of a split loop and the array it writes at `index + offset`.
pub(crate) struct SplitPart<'a> {
    stmt: &'a Stmt,
    array: SymbolId,
    offset: i64,
    /// For a CYCLIC array: its distributed subscript as a local position.
    edits: Vec<(TextRange, String)>,
}

pub(crate) struct Split<'a> {
    stmt: &'a Stmt,
    control: &'a LoopControl,
    step: i64,
    parts: Vec<SplitPart<'a>>,
}

impl<'a> Lowering<'a> {
    /// The split form of the DO loop `stmt`, or why it has none.
    pub(crate) fn fission<'s>(&self, stmt: &'s Stmt) -> Result<Plan<'s>, String>
    where
        'a: 's,
    {
        let StmtKind::Do { control: Some(control), body, .. } = &stmt.kind else {
            return Err("it is not a counted DO loop".to_string());
        };
        let step = match &control.step {
            Some(step) => self.constant_of(step).ok_or("its step is not a constant")?,
            None => 1,
        };
        if step == 0 {
            return Err("its step is zero".to_string());
        }
        let mut bounds = vec![control.lo.range, control.hi.range];
        bounds.extend(control.step.as_ref().map(|it| it.range));
        if bounds.iter().any(|it| !self.distributed_occurrences(*it).is_empty()) {
            return Err("its bounds read distributed arrays".to_string());
        }
        let var = control.var.key();
        let mut parts: Vec<SplitPart<'s>> = Vec::new();
        for assignment in body {
            let (lhs, rhs) = match &assignment.kind {
                StmtKind::Assign { lhs, rhs } => (lhs, rhs),
                // The loop's terminating `CONTINUE` (fixed form).
                StmtKind::Other { exprs, body } if exprs.is_empty() && body.is_empty() => {
                    if self.slice(assignment.header).trim().to_ascii_lowercase().ends_with("continue") {
                        continue;
                    }
                    return Err("its body holds more than assignments".to_string());
                }
                _ => return Err("its body holds more than assignments".to_string()),
            };
            let ExprKind::Ref { name, args } = &lhs.kind else {
                return Err("an assignment of it writes a scalar or a whole array".to_string());
            };
            let array = self
                .lookup(&name.key())
                .filter(|id| self.distributed.get(id).is_some_and(|it| it.second.is_none()))
                .ok_or("an assignment of it writes an array not distributed in one dimension")?;
            let distributed = &self.distributed[&array];
            if args.len() != distributed.lbs.len() || args.iter().any(|it| !matches!(it, Subscript::Expr(_))) {
                return Err(format!("it assigns a section of {}", name.text));
            }
            let Some(Subscript::Expr(subscript)) = args.get(distributed.dim) else {
                return Err(format!("it assigns a section of {}", name.text));
            };
            let form = self.linear_of(subscript).ok_or("a distributed subscript is not affine")?;
            if form.coefs.len() != 1 || form.coefs.get(&var) != Some(&1) {
                return Err(format!("the distributed subscript of {} is not `{}+c`", name.text, control.var.text));
            }
            // Only replicated data on the right and in the subscripts.
            let name_end = name.range.end;
            if !self.distributed_occurrences(rhs.range).is_empty()
                || !self.distributed_occurrences(TextRange::new(name_end, lhs.range.end)).is_empty()
            {
                return Err("an assignment of it reads distributed data".to_string());
            }
            if parts.iter().any(|it| it.array == array) {
                return Err(format!("two of its assignments write {}", name.text));
            }
            let edits =
                if distributed.cyclic { self.cyclic_subscript_edits(assignment.range, &[lhs])? } else { Vec::new() };
            parts.push(SplitPart { stmt: assignment, array, offset: form.constant, edits });
        }
        if parts.len() < 2 {
            return Err("it writes fewer than two arrays".to_string());
        }
        Ok(Plan::Split(Split { stmt, control, step, parts }))
    }

    pub(crate) fn emit_split(&self, out: &mut String, split: &Split) {
        let control = split.control;
        let (var, step) = (&control.var.text, split.step);
        let lo = self.one_line(control.lo.range);
        let hi = self.one_line(control.hi.range);
        let _ = writeln!(
            out,
            "  ! hpf-ls: owner computes {}, one loop per array it writes",
            self.slice(split.stmt.header).trim()
        );
        for part in &split.parts {
            let distributed = &self.distributed[&part.array];
            let name = &distributed.name;
            let offset = part.offset;
            if distributed.cyclic {
                let mut edits = part.edits.clone();
                let shifts = self.course_shifts(var, &mut edits);
                let text = self.edited(part.stmt.range, &edits).replace(['&', '\n'], " ");
                let _ = writeln!(out, "  do hpf_c = 0, hpf_courses(hpf_d_{name}) - 1");
                let _ = writeln!(
                    out,
                    "  call hpf_course_bounds(hpf_d_{name}, {offset}, ({lo}), ({hi}), {step}, hpf_c, hpf_lo, hpf_hi)"
                );
                let _ = write!(out, "{}", shifts.open);
                let _ =
                    writeln!(out, "  do {var} = hpf_lo, hpf_hi, {step}\n  {text}\n  end do\n{}  end do", shifts.close);
            } else {
                let text = self.edited(part.stmt.range, &part.edits).replace(['&', '\n'], " ");
                let _ = writeln!(
                    out,
                    "  call hpf_local_bounds(hpf_d_{name}, {offset}, ({lo}), ({hi}), {step}, hpf_lo, hpf_hi)"
                );
                let _ = writeln!(out, "  do {var} = hpf_lo, hpf_hi, {step}\n  {text}\n  end do");
            }
        }
        let _ = writeln!(out, "  {var} = hpf_final(({lo}), ({hi}), {step})");
    }
}
