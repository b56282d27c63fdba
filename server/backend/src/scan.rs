//! Scans written as loops: `s = s + x(i)` with `y(i) = s` in an
//! owner-computes nest (`loop_reductions.rs` finds them), run as a parallel
//! prefix in two passes over each process's iterations:
//! 1. the nest with its array stores and other reductions left out, from
//!    the operation's identity: the process's total;
//! 2. the totals gathered on every process (`hpf_scan_start_*`), each
//!    process starting from the scalar's value before the loop combined with
//!    the totals of the processes whose iterations come before its own, in
//!    that order (down from the last rank for a negative step);
//! 3. the nest as written, from that start; the process of the last
//!    iterations then broadcasts the value the scalar ends with.
//!
//! Rerunning the nest instead of adding an offset to the stored elements
//! keeps any use of the running value (`y(i) = 2*s`, an exclusive scan
//! `y(i) = s` before `s = s + x(i)`) and reads `x` twice where the offset
//! would read and write `y` a second time. INTEGER scans are exact in any
//! order; floating-point ones start each process from a value rounded
//! differently than the sequential loop's (bit for bit the same from run
//! to run on the same number of processes). With ordered reductions a
//! floating-point scan runs along the chain of processes instead.
//!
//! The same two passes run a recurrence on a rank-1 BLOCK array,
//! `y(i) = y(i-1) + x(i)` (or `*`, `max`, `min`; `y(i+1)` for a step of
//! -1), whose dependence otherwise crosses the processes: the running value
//! is a temporary started from `y(lo-1)`, which its owner broadcasts
//! ([`Recurrence`]).

use crate::element_type::ElementType;
use std::fmt::Write;

use analysis::model::SymbolId;
use syntax::{BinaryOp, Expr, ExprKind, Stmt, StmtKind, Subscript, TextRange};

use crate::loop_reductions::{LoopReduction, Op};
use crate::{Distributed, Lowering};

/// A DO loop whose one statement is `y(i) = y(i-step) op e`, on a rank-1
/// BLOCK array `y`, run as a parallel prefix.
pub(crate) struct Recurrence<'a> {
    pub(crate) stmt: &'a Stmt,
    array: SymbolId,
    /// `y(i-step)` in the right side: the running value.
    previous: TextRange,
    op: Op,
    step: i64,
}

impl Lowering<'_> {
    /// Why the scans of a nest cannot run as a parallel prefix, or `Ok`:
    /// the processes must run the iterations in order (up or down the
    /// ranks), and the first pass must compute the same increments as the
    /// second.
    pub(crate) fn check_scans(
        &self,
        nest: &Stmt,
        reductions: &[LoopReduction],
        (home, home_coef): (&Distributed, i64),
        (outermost, exits): (bool, bool),
    ) -> Result<(), String> {
        let Some(scan) = reductions.iter().find(|it| it.is_prefix()) else { return Ok(()) };
        let why = |why: &str| Err(format!("it is a scan of {} {why}", scan.name()));
        if home.cyclic || home.stride <= 0 || home.second.is_some() {
            return why("over a CYCLIC, reversed or 2-D distribution (its processes would not run in the order of the iterations)");
        }
        if !outermost || home_coef != 1 {
            return why(
                "whose iterations do not run along the processes in order (an inner or strided distributing loop)",
            );
        }
        if exits {
            return why("in a loop with an EXIT");
        }
        self.scan_first_pass_drops(nest, reductions).map(|_| ())
    }

    /// The statements the first pass leaves out: stores into arrays and the
    /// accumulations of the nest's other reductions. Refused when a kept
    /// statement might read what a store wrote in the same pass.
    fn scan_first_pass_drops(&self, nest: &Stmt, reductions: &[LoopReduction]) -> Result<Vec<TextRange>, String> {
        let key = |name: &syntax::Name| name.key();
        let others: Vec<String> =
            reductions.iter().filter(|it| !it.is_prefix()).map(|it| it.name().to_ascii_lowercase()).collect();
        let mut drops: Vec<TextRange> = Vec::new();
        // Stores: (array, subscripts as written, where).
        let mut stores: Vec<(String, String, TextRange)> = Vec::new();
        let mut kept: Vec<&Expr> = Vec::new();
        let mut inner_loops = false;
        let mut stack: Vec<&Stmt> = nest.children();
        while let Some(stmt) = stack.pop() {
            stack.extend(stmt.children());
            match &stmt.kind {
                StmtKind::Assign { lhs, rhs } => match &lhs.kind {
                    ExprKind::Name(name) if others.contains(&key(name)) => drops.push(stmt.range),
                    // The scans' accumulations and private scalars.
                    ExprKind::Name(_) => kept.push(rhs),
                    ExprKind::Ref { name, .. } => {
                        drops.push(stmt.range);
                        stores.push((key(name), self.reference_text(lhs.range), stmt.range));
                    }
                    _ => return Err("it assigns something other than a scalar or an element".to_string()),
                },
                StmtKind::Do { control, .. } => {
                    inner_loops = true;
                    if let Some(control) = control {
                        kept.extend([&control.lo, &control.hi]);
                        kept.extend(control.step.as_ref());
                    }
                }
                StmtKind::DoWhile { cond, .. } => {
                    inner_loops = true;
                    kept.extend(cond.as_ref());
                }
                StmtKind::If { branches } => kept.extend(branches.iter().filter_map(|it| it.0.as_ref())),
                // CONTINUE, CYCLE.
                StmtKind::Other { exprs, body } if exprs.is_empty() && body.is_empty() => {}
                _ => return Err("its body holds a statement that a scan's first pass cannot run".to_string()),
            }
        }
        let written: Vec<String> = stores.iter().map(|it| it.0.clone()).collect();
        for expr in kept {
            for (name, range) in array_references(expr) {
                if !written.contains(&name) {
                    continue;
                }
                // `s = s + x(i)` then `x(i) = s`: the element read before
                // its store, in a single loop, reads the same in both passes.
                let before_its_stores = !inner_loops
                    && stores
                        .iter()
                        .filter(|it| it.0 == name)
                        .all(|it| it.1 == self.reference_text(range) && range.end <= it.2.start);
                if !before_its_stores {
                    return Err(format!(
                        "it is a scan whose running value depends on elements of {name} that the loop stores"
                    ));
                }
            }
        }
        Ok(drops)
    }

    /// A reference's text, blanks removed, lower case.
    fn reference_text(&self, range: TextRange) -> String {
        self.one_line(range).replace(' ', "").to_ascii_lowercase()
    }

    /// Before the second pass (the nest as written, `hpf_lo:hpf_hi` its
    /// iterations): the first pass and each process's start. Opens a block
    /// that `emit_scan_ends` closes.
    pub(crate) fn emit_scan_starts(
        &self,
        out: &mut String,
        (nest, nest_range, edits): (&Stmt, TextRange, &[(TextRange, String)]),
        reductions: &[LoopReduction],
        step: i64,
    ) {
        let scans: Vec<&LoopReduction> = reductions.iter().filter(|it| it.is_prefix()).collect();
        if scans.is_empty() {
            return;
        }
        let Ok(drops) = self.scan_first_pass_drops(nest, reductions) else { return };
        let _ = writeln!(out, "  block");
        for (k, scan) in scans.iter().enumerate() {
            let type_name = scan.suffix().declaration();
            let _ = writeln!(out, "    {type_name} :: hpf_scan_first{}\n    integer :: hpf_scan_last{}", k + 1, k + 1);
        }
        let _ = writeln!(out, "  ! hpf-ls: scan, first pass: each process's total over its iterations");
        for (k, scan) in scans.iter().enumerate() {
            let name = scan.name();
            let _ = writeln!(out, "  hpf_scan_first{} = {name}", k + 1);
            match scan.op() {
                Op::Sum => {
                    let _ = writeln!(out, "  {name} = 0");
                }
                Op::Product => {
                    let _ = writeln!(out, "  {name} = 1");
                }
                // From the value itself: max(s, s) is s.
                Op::Max | Op::Min | Op::Or | Op::And => {}
            }
        }
        // The stores and other reductions left out (a label stays: it may end a DO).
        let mut first_pass: Vec<(TextRange, String)> =
            drops.iter().map(|range| (*range, label_of(self.slice(*range)).to_string() + "continue")).collect();
        first_pass.extend(edits.iter().filter(|it| !drops.iter().any(|drop| drop.contains_range(it.0))).cloned());
        let text = crate::assign::close_shared_label(self.edited(nest_range, &first_pass));
        let _ = writeln!(out, "{}", self.relabelled(&text));
        let _ = writeln!(out, "  ! hpf-ls: scan: each process starts from the totals of the processes before it");
        for (k, scan) in scans.iter().enumerate() {
            let op = match scan.op() {
                Op::Sum => 1,
                Op::Product => 2,
                Op::Max => 3,
                Op::Min | Op::Or | Op::And => 4,
            };
            let _ = writeln!(
                out,
                "  call hpf_scan_start_{}({}, hpf_scan_first{k1}, (hpf_hi - hpf_lo) * ({step}) >= 0, {op}, {step}, hpf_scan_last{k1})",
                scan.suffix(),
                scan.name(),
                k1 = k + 1
            );
        }
    }

    /// After the second pass: every process gets the value the scalar has
    /// after the last iteration, from the process that ran it.
    pub(crate) fn emit_scan_ends(&self, out: &mut String, reductions: &[LoopReduction]) {
        let scans: Vec<&LoopReduction> = reductions.iter().filter(|it| it.is_prefix()).collect();
        if scans.is_empty() {
            return;
        }
        for (k, scan) in scans.iter().enumerate() {
            let _ = writeln!(
                out,
                "  if (hpf_scan_last{k1} >= 0) call MPI_Bcast({}, 1, {}, hpf_scan_last{k1}, MPI_COMM_WORLD)",
                scan.name(),
                crate::mpi_type(scan.suffix()),
                k1 = k + 1
            );
        }
        let _ = writeln!(out, "  end block");
    }
}

impl<'a> Lowering<'a> {
    /// The recurrence `stmt` is, or why it is none the backend runs so.
    pub(crate) fn recurrence<'s>(&self, stmt: &'s Stmt) -> Result<Recurrence<'s>, String>
    where
        'a: 's,
    {
        let StmtKind::Do { label: None, control: Some(control), body } = &stmt.kind else {
            return Err("it is not an unlabelled counted DO loop".to_string());
        };
        let [Stmt { kind: StmtKind::Assign { lhs, rhs }, .. }] = &body[..] else {
            return Err("its body is not one assignment".to_string());
        };
        let step = match &control.step {
            Some(step) => self.constant_of(step).ok_or("its step is not a constant")?,
            None => 1,
        };
        let var = control.var.key();
        let ExprKind::Ref { name, args } = &lhs.kind else { return Err("it assigns no element".to_string()) };
        let array = self
            .lookup(&name.key())
            .filter(|it| self.distributed.contains_key(it))
            .ok_or("it assigns no distributed array")?;
        let home = &self.distributed[&array];
        let at_index = |arg: &Subscript, offset: i64| match arg {
            Subscript::Expr(index) => self
                .linear_of(index)
                .is_some_and(|it| it.constant == offset && it.coefs.len() == 1 && it.coefs.get(&var) == Some(&1)),
            _ => false,
        };
        if !home.is_rank_one_block() || home.stride != 1 || step == 0 || !matches!(&args[..], [arg] if at_index(arg, 0))
        {
            return Err(format!("{} is not a rank-1 BLOCK array assigned at the loop's index", home.name));
        }
        if [ElementType::R4, ElementType::R8].contains(&home.suffix) && self.ordered_reductions {
            return Err("a floating-point recurrence keeps the sequential order".to_string());
        }
        if ![ElementType::I4, ElementType::R4, ElementType::R8].contains(&home.suffix) {
            return Err(format!("{} is not INTEGER, REAL or DOUBLE PRECISION", home.name));
        }
        let key = name.key();
        let is_previous = |expr: &Expr| matches!(&expr.kind, ExprKind::Ref { name, args } if name.key() == key && matches!(&args[..], [arg] if at_index(arg, -step)));
        let (op, previous) = recurrence_op(rhs, &is_previous).ok_or("its right side is not `y(i-1) op e`")?;
        // `e`: no other element of y than `y(i)`, distributed arrays only at
        // the loop's index on y's processes, no procedure but elemental
        // intrinsics.
        let mut stack = vec![rhs];
        while let Some(expr) = stack.pop() {
            if expr.range == previous.range {
                continue;
            }
            match &expr.kind {
                ExprKind::Ref { name, args } => {
                    match self.lookup(&name.key()) {
                        // The element it assigns, before it does: the same in both passes.
                        Some(id) if id == array && matches!(&args[..], [arg] if at_index(arg, 0)) => {}
                        Some(id) if id == array => return Err(format!("it reads {} elsewhere", home.name)),
                        Some(id) if self.distributed.contains_key(&id) => {
                            let other = &self.distributed[&id];
                            let same_place = other.same_alignment(home)
                                || (other.same_blocks(home)
                                    && other.offset == home.offset
                                    && other.is_rank_one_block());
                            if !same_place || !matches!(&args[..], [arg] if at_index(arg, 0)) {
                                return Err(format!("it reads {} off the elements it assigns", other.name));
                            }
                        }
                        Some(id) if self.analysis.model.symbol(id).is_array() => {}
                        _ if crate::assign::ELEMENTAL.contains(&name.key().as_str()) => {}
                        _ => return Err(format!("it calls {}", name.text)),
                    }
                    stack.extend(args.iter().filter_map(Subscript::as_expr));
                }
                ExprKind::Name(name) if self.is_distributed_name(name) => {
                    return Err(format!("it reads the whole array {}", name.text));
                }
                ExprKind::Unary { operand, .. } | ExprKind::Paren(operand) => stack.push(operand),
                ExprKind::Binary { lhs, rhs, .. } => stack.extend([&**lhs, &**rhs]),
                ExprKind::Other(_) => {
                    return Err("its right side holds a construct the backend does not lower".to_string())
                }
                ExprKind::Name(_) | ExprKind::Int(_) | ExprKind::Literal(_) => {}
            }
        }
        Ok(Recurrence { stmt, array, previous: previous.range, op, step })
    }

    /// The recurrence's two passes over each process's iterations.
    pub(crate) fn emit_recurrence(&self, out: &mut String, recurrence: &Recurrence) {
        let StmtKind::Do { control: Some(control), body, .. } = &recurrence.stmt.kind else { return };
        let StmtKind::Assign { lhs, rhs } = &body[0].kind else { return };
        let home = &self.distributed[&recurrence.array];
        let (name, step) = (&home.name, recurrence.step);
        let type_name = home.suffix.declaration();
        let (lo, hi, var) = (self.one_line(control.lo.range), self.one_line(control.hi.range), &control.var.text);
        let before = format!("({lo}) - ({step})");
        let value =
            self.edited(rhs.range, &[(recurrence.previous, "hpf_scan_run".to_string())]).replace(['&', '\n'], " ");
        let element = self.one_line(lhs.range);
        let (identity, op) = match recurrence.op {
            Op::Sum => ("0", 1),
            Op::Product => ("1", 2),
            Op::Max => ("hpf_scan_first", 3),
            Op::Min | Op::Or | Op::And => ("hpf_scan_first", 4),
        };
        let _ = writeln!(out, "  ! hpf-ls: the recurrence {} as a parallel prefix", self.one_line(control.var.range));
        let _ = writeln!(out, "  if ((({hi}) - ({lo})) * ({step}) >= 0) then");
        let _ = writeln!(out, "  call hpf_local_bounds(hpf_d_{name}, 0, ({lo}), ({hi}), {step}, hpf_lo, hpf_hi)");
        let _ = writeln!(out, "  block\n    {type_name} :: hpf_scan_run, hpf_scan_first\n    integer :: hpf_scan_last");
        let _ = writeln!(out, "  if (hpf_owns(hpf_d_{name}, {before})) hpf_scan_first = {name}({before})");
        let _ = writeln!(
            out,
            "  call MPI_Bcast(hpf_scan_first, 1, {}, hpf_owner(hpf_d_{name}, {before}), MPI_COMM_WORLD)",
            crate::mpi_type(home.suffix)
        );
        let _ = writeln!(out, "  hpf_scan_run = {identity}");
        let _ = writeln!(out, "  do {var} = hpf_lo, hpf_hi, {step}\n    hpf_scan_run = {value}\n  end do");
        let _ = writeln!(
            out,
            "  call hpf_scan_start_{}(hpf_scan_run, hpf_scan_first, (hpf_hi - hpf_lo) * ({step}) >= 0, {op}, {step}, hpf_scan_last)",
            home.suffix
        );
        let _ = writeln!(
            out,
            "  do {var} = hpf_lo, hpf_hi, {step}\n    {element} = {value}\n    hpf_scan_run = {element}\n  end do"
        );
        let _ = writeln!(out, "  end block\n  end if");
        let _ = writeln!(out, "  {var} = hpf_final(({lo}), ({hi}), {step})");
    }

    /// `text` with its statement labels (and the DO and GO TO statements
    /// naming them) renamed to labels of the generated code: the first pass
    /// is a copy of the nest in the same scoping unit.
    fn relabelled(&self, text: &str) -> String {
        let mut renamed: Vec<(String, String)> = Vec::new();
        for line in text.lines() {
            let label = label_of(line.trim_start()).trim();
            if !label.is_empty() && !renamed.iter().any(|it| it.0 == label) {
                let taken = self.labels_taken.get() + 1;
                self.labels_taken.set(taken);
                renamed.push((label.to_string(), (90000 + taken).to_string()));
            }
        }
        let new_label = |label: &str| renamed.iter().find(|it| it.0 == label).map(|it| it.1.clone());
        let mut res = String::new();
        for line in text.lines() {
            let indent = &line[..line.len() - line.trim_start().len()];
            let mut rest = line.trim_start();
            res.push_str(indent);
            let label = label_of(rest);
            if let Some(new) = new_label(label.trim()) {
                res.push_str(&new);
                res.push(' ');
                rest = &rest[label.len()..];
            }
            // `do 10 i = ...`, `go to 10`, `goto 10`.
            let lower = rest.to_ascii_lowercase();
            let mut at = 0;
            for keyword in ["do ", "go to ", "goto "] {
                let Some(start) = lower.find(keyword) else { continue };
                let before_ok = start == 0 || !lower.as_bytes()[start - 1].is_ascii_alphanumeric();
                let after = start + keyword.len();
                let blanks = lower[after..].len() - lower[after..].trim_start().len();
                let digits = lower[after + blanks..].len()
                    - lower[after + blanks..].trim_start_matches(|it: char| it.is_ascii_digit()).len();
                let old = &rest[after + blanks..after + blanks + digits];
                if before_ok && digits > 0 && at <= start {
                    if let Some(new) = new_label(old) {
                        res.push_str(&rest[at..after + blanks]);
                        res.push_str(&new);
                        at = after + blanks + digits;
                    }
                }
            }
            res.push_str(&rest[at..]);
            res.push('\n');
        }
        res.truncate(res.trim_end().len());
        res
    }
}

/// The operation of `rhs` when it is `p op e` with `p` the reference
/// `is_previous` accepts (sums may chain: `p + a - b`), or `max(p, e)`,
/// `min(e, p)`; and that reference.
fn recurrence_op<'e>(rhs: &'e Expr, is_previous: &dyn Fn(&Expr) -> bool) -> Option<(Op, &'e Expr)> {
    match &rhs.kind {
        ExprKind::Binary { op: BinaryOp::Add | BinaryOp::Sub, lhs, .. } => {
            if is_previous(lhs) {
                return Some((Op::Sum, lhs));
            }
            recurrence_op(lhs, is_previous).filter(|it| it.0 == Op::Sum)
        }
        ExprKind::Binary { op: BinaryOp::Mul, lhs, .. } if is_previous(lhs) => Some((Op::Product, lhs)),
        ExprKind::Ref { name, args } if args.len() == 2 && matches!(name.key().as_str(), "max" | "min") => {
            let op = if name.key() == "max" { Op::Max } else { Op::Min };
            let [Subscript::Expr(first), Subscript::Expr(second)] = &args[..] else { return None };
            [first, second].into_iter().find(|it| is_previous(it)).map(|it| (op, it))
        }
        _ => None,
    }
}

/// The statement label at the start of `text` with the blanks after it
/// (empty when there is none).
fn label_of(text: &str) -> &str {
    let digits = text.len() - text.trim_start_matches(|it: char| it.is_ascii_digit()).len();
    if digits == 0 {
        return "";
    }
    let blanks = text[digits..].len() - text[digits..].trim_start().len();
    if blanks == 0 {
        return "";
    }
    &text[..digits + blanks]
}

/// The names and references in `expr` (key, range), outermost first.
fn array_references(expr: &Expr) -> Vec<(String, TextRange)> {
    let mut res = Vec::new();
    let mut stack = vec![expr];
    while let Some(expr) = stack.pop() {
        match &expr.kind {
            ExprKind::Ref { name, args } => {
                res.push((name.key(), expr.range));
                stack.extend(args.iter().filter_map(Subscript::as_expr));
            }
            ExprKind::Name(name) => res.push((name.key(), expr.range)),
            ExprKind::Unary { operand, .. } | ExprKind::Paren(operand) => stack.push(operand),
            ExprKind::Binary { lhs, rhs, .. } => stack.extend([&**lhs, &**rhs]),
            ExprKind::Other(parts) => stack.extend(parts.iter()),
            ExprKind::Int(_) | ExprKind::Literal(_) => {}
        }
    }
    res
}

#[cfg(test)]
mod tests {
    use analysis::model::ModelConfig;
    use syntax::SourceForm;

    /// The notes and the generated source of `body` over BLOCK arrays `x`,
    /// `y`, an integer `k` and a CYCLIC `c`, lowered as `hpf-ls build` does.
    fn lower(body: &str, ordered_reductions: bool) -> (Vec<String>, String) {
        let text = format!(
            "program p
  integer, parameter :: n = 100
  double precision :: x(n), y(n), c(n), s
  integer :: k(n), i, m
!HPF$ DISTRIBUTE (BLOCK) :: X
!HPF$ ALIGN Y(I) WITH X(I)
!HPF$ ALIGN K(I) WITH X(I)
!HPF$ DISTRIBUTE (CYCLIC) :: C
  x = 1.0d0
  k = 1
  c = 2.0d0
{body}  print *, s, m, sum(y), sum(k)
end program p
"
        );
        let analysis = analysis::analyze(&text, SourceForm::Free, ModelConfig { number_of_processors: None });
        let options = crate::LowerOptions { ordered_reductions };
        let generated = crate::lower_with(&analysis, &text, &options).unwrap();
        (generated.notes.into_iter().map(|it| it.message).collect(), generated.source)
    }

    #[test]
    fn a_running_sum_stored_into_elements_runs_in_two_passes() {
        let (notes, source) = lower("  s = 0\n  do i = 1, n\n    s = s + x(i)\n    y(i) = s\n  end do\n", false);
        assert!(notes.is_empty(), "{notes:?}");
        // The first pass leaves the store out; the second is the loop as written.
        assert!(
            source.contains("  s = 0\n  do i = hpf_lo, hpf_hi, 1\n    s = s + x(i)\n    continue\n  end do\n"),
            "{source}"
        );
        assert!(
            source.contains(
                "call hpf_scan_start_r8(s, hpf_scan_first1, (hpf_hi - hpf_lo) * (1) >= 0, 1, 1, hpf_scan_last1)"
            ),
            "{source}"
        );
        assert!(source.contains("    y(i) = s\n  end do\n  if (hpf_scan_last1 >= 0) call MPI_Bcast(s, 1,"), "{source}");
        assert!(crate::runtime::runtime_for(&source).contains("subroutine hpf_scan_start_r8("));
    }

    #[test]
    fn ordered_floating_point_scans_chain_and_integer_ones_do_not() {
        let body = "  s = 0\n  m = 0\n  do i = 1, n\n    s = s + x(i)\n    m = m + k(i)\n    y(i) = s\n    k(i) = m\n  end do\n";
        let (notes, source) = lower(body, true);
        assert!(notes.is_empty(), "{notes:?}");
        assert!(source.contains("call hpf_chain_recv_r8(s, 1)"), "{source}");
        assert!(source.contains("call hpf_scan_start_i4(m,"), "{source}");
        assert!(!source.contains("hpf_scan_start_r8"), "{source}");
    }

    #[test]
    fn recurrences_on_block_arrays_run_as_prefixes_and_cyclic_scans_say_why_not() {
        let (notes, source) = lower("  do i = 2, n\n    y(i) = y(i-1) + x(i) * 2.0d0\n  end do\n", false);
        assert!(notes.is_empty(), "{notes:?}");
        assert!(source.contains("    hpf_scan_run = hpf_scan_run + x(i) * 2.0d0\n"), "{source}");
        assert!(source.contains("    y(i) = hpf_scan_run + x(i) * 2.0d0\n    hpf_scan_run = y(i)\n"), "{source}");
        assert!(source.contains("hpf_scan_first = y((2) - (1))"), "{source}");
        let (notes, _) = lower("  s = 0\n  do i = 1, n\n    s = s + c(i)\n    c(i) = s\n  end do\n", false);
        assert!(
            notes.iter().any(|it| it.contains("it is a scan of s over a CYCLIC, reversed or 2-D distribution")),
            "{notes:?}"
        );
    }
}
