//! Replicated scalars an owner-computes DO nest assigns: private
//! temporaries. A scalar that every iteration of the distributing loop
//! assigns before it reads it carries nothing from one iteration to the
//! next, so each process computes it for the iterations it owns. After the
//! nest its value differs from process to process, so the scalar must not
//! be read there: every other mention of it in the program unit must sit
//! in another loop that assigns it first. Or, when the distributing loop
//! itself assigns it first (so its last iteration leaves the sequential
//! value), the owner of that iteration broadcasts it after the nest. A
//! scalar in the NEW list of the loop's INDEPENDENT directive is private
//! as HPF says, unless it is read after the nest.

use std::fmt::Write;

use analysis::model::SymbolKind;
use syntax::{Expr, Name, Stmt, StmtKind};

use crate::{mentions, Lowering, ParallelNest};

/// What becomes of a private scalar after its nest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum After {
    /// Nothing reads it before assigning it again.
    Unread,
    /// It may be read: the last iteration's value is broadcast.
    LastValue,
}

impl Lowering<'_> {
    /// Whether the scalar `name`, assigned in the nest `nest`, is private
    /// to the iterations of its `distributing` loop and unread after the
    /// nest (or else left there as the last iteration leaves it), or why it
    /// is not. `loops` are the nest's DO loops.
    pub(crate) fn private_scalar(
        &self,
        nest: &Stmt,
        distributing: &Stmt,
        loops: &[&Stmt],
        name: &Name,
    ) -> Result<After, String> {
        let key = name.key();
        let not_private = |why: &str| Err(format!("it assigns the scalar {}, {why}", name.text));
        if let Some(id) = self.lookup(&key) {
            let symbol = self.analysis.model.symbol(id);
            if id.unit != self.main || symbol.is_dummy {
                return not_private("which is not a local variable of this program unit");
            }
            if symbol.kind != SymbolKind::Variable || !symbol.shape.is_empty() {
                return not_private("which is not a scalar variable");
            }
        }
        if self.aliased(&key) {
            return not_private("which may be reached through another name (EQUIVALENCE, TARGET)");
        }
        // NEW in the loop's INDEPENDENT directive asserts it: HPF makes such
        // a variable undefined at the start of every iteration.
        let new = crate::independent_before(&self.analysis.file, self.text, distributing.range.start)
            .is_some_and(|(_, independent)| independent.new.iter().any(|it| it.key() == key));
        let defining = self.defining_loop(distributing, &key);
        if defining.is_none() && !new {
            return not_private("which an iteration may read before it assigns it");
        }
        // Loop bounds are read before the loop's iterations: only an inner
        // loop's, once the iteration has assigned it (`ISTART = ...` then
        // `DO I = ISTART, N, 2`), and only when that loop's index is not read
        // after the nest (its final value there would need the last
        // iteration's bounds; it is not set).
        let unit = analysis::model::flatten_units(&self.analysis.file)[self.main].0;
        let bounded = loops.iter().filter(|it| self.mentions_scalar(it, &key));
        for lp in bounded {
            let StmtKind::Do { control: Some(control), .. } = &lp.kind else {
                return not_private("which the bounds of a loop of the nest read");
            };
            let inside = defining.is_some_and(|it| it.range.contains_range(lp.range) && !std::ptr::eq(it, *lp));
            let index = control.var.key();
            let index_new = crate::independent_before(&self.analysis.file, self.text, distributing.range.start)
                .is_some_and(|(_, independent)| independent.new.iter().any(|it| it.key() == index));
            let index_read_after = !index_new && self.index_read_elsewhere(&unit.body, nest, &index);
            if !inside || index_read_after {
                return not_private("which the bounds of a loop of the nest read");
            }
        }
        if !self.read_elsewhere(&unit.body, nest, &key) || !self.live_after(unit, nest, &key) {
            return Ok(After::Unread);
        }
        // Assigned first in every iteration of the distributing loop, its
        // last iteration leaves the sequential value.
        if !defining.is_some_and(|it| std::ptr::eq(it, distributing)) {
            return not_private(
                "which may be read after the loop, and the last iteration may not assign it (an inner loop does)",
            );
        }
        Ok(After::LastValue)
    }

    /// After the nest `nest` of the distributing loop `lo, hi`: every
    /// private scalar read later gets the value the last iteration left,
    /// from the process that ran it (none: the loop ran no iteration and
    /// every process kept the value from before it).
    pub(crate) fn emit_last_values(&self, out: &mut String, nest: &ParallelNest, lo: &str, hi: &str) {
        if nest.last_values.is_empty() {
            return;
        }
        let step = nest.step;
        let home = &self.distributed[&nest.home].name;
        let _ = writeln!(
            out,
            "  block
  integer :: hpf_last_owner
  hpf_last_owner = -1"
        );
        let _ = writeln!(
            out,
            "  if ((({hi}) - ({lo})) * ({step}) >= 0) then
    if (hpf_owns(hpf_d_{home}, hpf_final(({lo}), ({hi}), {step}) - ({step}) + ({}))) hpf_last_owner = hpf_rank
  end if",
            nest.home_offset
        );
        let _ = writeln!(
            out,
            "  call MPI_Allreduce(MPI_IN_PLACE, hpf_last_owner, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD)"
        );
        for name in &nest.last_values {
            let _ = writeln!(
                out,
                "  if (hpf_last_owner >= 0) call MPI_Bcast({name}, storage_size({name}) / 8, MPI_BYTE, hpf_last_owner, MPI_COMM_WORLD)"
            );
        }
        let _ = writeln!(out, "  end block");
    }

    /// The DO loop whose iterations each assign the scalar `key` before
    /// reading it, with every mention of `key` in `lp`'s body inside it: `lp`
    /// itself or a loop in its body. `None` when an iteration of `lp` may
    /// read a value of `key` from before it.
    fn defining_loop<'s>(&self, lp: &'s Stmt, key: &str) -> Option<&'s Stmt> {
        // The statements of `lp`'s body in text order, with their parents.
        let mut order: Vec<(&'s Stmt, &'s Stmt)> = Vec::new();
        let mut stack: Vec<(&'s Stmt, &'s Stmt)> = lp.children().into_iter().rev().map(|it| (it, lp)).collect();
        while let Some((stmt, parent)) = stack.pop() {
            order.push((stmt, parent));
            stack.extend(stmt.children().into_iter().rev().map(|it| (it, stmt)));
        }
        let mut mentioning = order.iter().filter(|(stmt, _)| self.mentions_scalar(stmt, key));
        let (first, parent) = mentioning.next()?;
        let StmtKind::Assign { lhs, rhs } = &first.kind else { return None };
        let keys = [key.to_string()];
        let defines = lhs.as_name().is_some_and(|it| it.key() == key) && !mentions(rhs, &keys);
        let parent_loops = matches!(parent.kind, StmtKind::Do { control: Some(_), .. });
        if !defines || !parent_loops || mentioning.any(|(stmt, _)| !parent.range.contains_range(stmt.range)) {
            return None;
        }
        Some(parent)
    }

    /// Whether `stmt` itself (not the statements inside it) may name `key`.
    pub(crate) fn mentions_scalar(&self, stmt: &Stmt, key: &str) -> bool {
        let keys = [key.to_string()];
        let mut exprs: Vec<&Expr> = Vec::new();
        match &stmt.kind {
            StmtKind::Do { control: Some(control), .. } => {
                if control.var.key() == key {
                    return true;
                }
                exprs.extend([&control.lo, &control.hi]);
                exprs.extend(control.step.as_ref());
            }
            StmtKind::Do { control: None, .. } => {}
            StmtKind::DoWhile { cond, .. } => exprs.extend(cond.as_ref()),
            StmtKind::Forall { specs, mask, .. } => {
                for spec in specs {
                    exprs.extend([&spec.lo, &spec.hi]);
                    exprs.extend(spec.step.as_ref());
                }
                exprs.extend(mask.as_ref());
            }
            StmtKind::Assign { lhs, rhs } => exprs.extend([lhs, rhs]),
            StmtKind::Where { mask, elsewhere, .. } => {
                exprs.extend(mask.as_ref());
                exprs.extend(elsewhere.iter().filter_map(|it| it.0.as_ref()));
            }
            StmtKind::If { branches } => exprs.extend(branches.iter().filter_map(|it| it.0.as_ref())),
            StmtKind::Call { args, .. } => exprs.extend(args),
            StmtKind::Output { items } => exprs.extend(items),
            StmtKind::Other { exprs: others, .. } => {
                // Not every part of these statements is parsed: their text decides.
                exprs.extend(others);
                if mentions_word(self.slice(stmt.header), key) {
                    return true;
                }
            }
        }
        exprs.iter().any(|it| mentions(it, &keys))
    }

    /// Whether a statement among `stmts` (at any depth, the nest `nest`
    /// left out) may read the scalar `key` other than after assigning it in
    /// the same iteration of a loop: then it may see the value the nest
    /// leaves, which differs from process to process.
    fn read_elsewhere(&self, stmts: &[Stmt], nest: &Stmt, key: &str) -> bool {
        let defines = |lp: &Stmt| self.defining_loop(lp, key).is_some();
        self.read_outside(stmts, nest, key, &defines, &|stmt| self.mentions_scalar(stmt, key))
    }

    /// Whether a statement among `stmts` (at any depth, `nest` left out)
    /// `reads` the variable `key`, loops that do not mention it in their
    /// header and `define` it first in every iteration left out (what they
    /// read is their own value). A loop around the nest runs the nest again
    /// after its other statements: it is looked into.
    pub(crate) fn read_outside(
        &self,
        stmts: &[Stmt],
        nest: &Stmt,
        key: &str,
        defines: &dyn Fn(&Stmt) -> bool,
        reads: &dyn Fn(&Stmt) -> bool,
    ) -> bool {
        stmts.iter().any(|stmt| {
            if std::ptr::eq(stmt, nest) {
                return false;
            }
            let holds_nest = stmt.range.contains_range(nest.range);
            if !holds_nest
                && matches!(stmt.kind, StmtKind::Do { control: Some(_), .. })
                && !self.mentions_scalar(stmt, key)
                && defines(stmt)
            {
                return false;
            }
            if reads(stmt) {
                return true;
            }
            stmt.children()
                .iter()
                .any(|child| self.read_outside(std::slice::from_ref(*child), nest, key, defines, reads))
        })
    }

    /// Whether the value of the scalar `key` that `nest` leaves may be read:
    /// following the statements from `nest` on (around the loops that hold
    /// it), the first one that mentions `key` must read it, not assign it
    /// anew (`t = 0.0` after a nest that used `t` as a temporary). In a unit
    /// with branches by label (GO TO, ERR=, END=, an arithmetic IF) or where
    /// the value survives the call (SAVE, DATA), always.
    fn live_after(&self, unit: &syntax::Unit, nest: &Stmt, key: &str) -> bool {
        let text = self.slice(syntax::TextRange::new(unit.header.start, unit.range.end)).to_ascii_lowercase();
        let squeezed: String = text.chars().filter(|it| !it.is_whitespace()).collect();
        let arithmetic_if = text.lines().any(|line| {
            let line = line.trim_start_matches(|it: char| it.is_ascii_digit() || it.is_whitespace());
            line.starts_with("if")
                && line.rsplit(')').next().is_some_and(|tail| {
                    let labels: Vec<&str> = tail.split(',').map(str::trim).collect();
                    labels.len() == 3
                        && labels.iter().all(|it| !it.is_empty() && it.chars().all(|c| c.is_ascii_digit()))
                })
        });
        if ["goto", "err=", "end=", "eor=", "save", "data"].iter().any(|it| squeezed.contains(it)) || arithmetic_if {
            return true;
        }
        // The lists of statements from the unit's body down to `nest`.
        fn path<'s>(stmts: &'s [Stmt], nest: &Stmt, out: &mut Vec<(&'s [Stmt], usize, bool)>, looped: bool) -> bool {
            for (at, stmt) in stmts.iter().enumerate() {
                if std::ptr::eq(stmt, nest) {
                    out.push((stmts, at, looped));
                    return true;
                }
                if stmt.range.contains_range(nest.range) {
                    out.push((stmts, at, looped));
                    let loops = matches!(stmt.kind, StmtKind::Do { .. } | StmtKind::DoWhile { .. });
                    if let StmtKind::If { branches } = &stmt.kind {
                        return branches.iter().any(|branch| path(&branch.1, nest, out, false));
                    }
                    return match &stmt.kind {
                        StmtKind::Do { body, .. } | StmtKind::DoWhile { body, .. } => path(body, nest, out, loops),
                        _ => false,
                    };
                }
            }
            false
        }
        let mut levels = Vec::new();
        if !path(&unit.body, nest, &mut levels, false) {
            return true;
        }
        let mentions_anywhere = |stmt: &Stmt| -> bool {
            let mut stack = vec![stmt];
            while let Some(stmt) = stack.pop() {
                if self.mentions_scalar(stmt, key) {
                    return true;
                }
                stack.extend(stmt.children());
            }
            false
        };
        let keys = [key.to_string()];
        // Some(live) at the first statement that mentions it.
        let first = |stmts: &[Stmt]| -> Option<bool> {
            let stmt = stmts.iter().find(|it| mentions_anywhere(it))?;
            Some(match &stmt.kind {
                // (`t = 0.0` assigns it anew; `t = t + 1` reads it.)
                StmtKind::Assign { lhs, rhs } => lhs.as_name().is_none_or(|it| it.key() != key) || mentions(rhs, &keys),
                _ => true,
            })
        };
        for (depth, (stmts, at, looped)) in levels.iter().enumerate().rev() {
            if let Some(live) = first(&stmts[at + 1..]) {
                return live;
            }
            if *looped {
                // The loop runs its body again: its header, then the statements before.
                let (parents, parent_at, _) = levels[depth - 1];
                if self.mentions_scalar(&parents[parent_at], key) {
                    return true;
                }
                if let Some(live) = first(&stmts[..*at]) {
                    return live;
                }
            }
        }
        false
    }

    /// Whether a statement of `stmts` other than `nest` may read the loop
    /// index `key`: a DO loop over `key` elsewhere assigns it before its
    /// body reads it, so only its bounds count.
    fn index_read_elsewhere(&self, stmts: &[Stmt], nest: &Stmt, key: &str) -> bool {
        let keys = [key.to_string()];
        stmts.iter().any(|stmt| {
            if std::ptr::eq(stmt, nest) {
                return false;
            }
            if let StmtKind::Do { control: Some(control), .. } = &stmt.kind {
                if control.var.key() == key {
                    let mut bounds = vec![&control.lo, &control.hi];
                    bounds.extend(control.step.as_ref());
                    return bounds.into_iter().any(|it| mentions(it, &keys));
                }
            }
            // `WRITE (*, *) (A(I), I = 1, N)`: the implied DO assigns it.
            if let StmtKind::Output { .. } = &stmt.kind {
                return mentions_word(&without_implied_dos(self.slice(stmt.range), key), key);
            }
            if self.mentions_scalar(stmt, key) {
                return true;
            }
            stmt.children().iter().any(|child| self.index_read_elsewhere(std::slice::from_ref(*child), nest, key))
        })
    }

    /// Whether the specification part may give the scalar `key` another
    /// name: EQUIVALENCE, or TARGET (a pointer), VOLATILE, ASYNCHRONOUS.
    pub(crate) fn aliased(&self, key: &str) -> bool {
        let unit = analysis::model::flatten_units(&self.analysis.file)[self.main].0;
        let spec = syntax::TextRange::new(unit.header.end, unit.execution_start.max(unit.header.end));
        let text = self.slice(spec).to_ascii_lowercase();
        text.lines().any(|line| {
            let code = line.split('!').next().unwrap_or("");
            mentions_word(code, key)
                && ["equivalence", "target", "volatile", "asynchronous", "pointer"]
                    .iter()
                    .any(|it| mentions_word(code, it))
        })
    }
}

/// Whether `text` holds the identifier `key` (lower case) as a whole word.
/// `text` without the implied DO loops over `key` (`(A(I), I = 1, N)`):
/// the parenthesised lists in which `, key =` follows an item.
fn without_implied_dos(text: &str, key: &str) -> String {
    let mut text = text.to_ascii_lowercase();
    let is_ident = |byte: u8| byte.is_ascii_alphanumeric() || byte == b'_';
    loop {
        let bytes = text.as_bytes();
        let control = text.match_indices(key).map(|(at, _)| at).find(|&at| {
            let before = text[..at].trim_end();
            let after = text[at + key.len()..].trim_start();
            before.ends_with(',')
                && !bytes.get(at + key.len()).copied().is_some_and(is_ident)
                && after.starts_with('=')
                && !after.starts_with("==")
        });
        let Some(at) = control else { return text };
        // The unmatched `(` before it and its `)`.
        let mut depth = 0;
        let open = (0..at).rev().find(|&it| match bytes[it] {
            b')' => {
                depth += 1;
                false
            }
            b'(' if depth == 0 => true,
            b'(' => {
                depth -= 1;
                false
            }
            _ => false,
        });
        let Some(open) = open else { return text };
        let mut depth = 0;
        let close = (open..bytes.len()).find(|&it| match bytes[it] {
            b'(' => {
                depth += 1;
                false
            }
            b')' => {
                depth -= 1;
                depth == 0
            }
            _ => false,
        });
        let Some(close) = close else { return text };
        text.replace_range(open..=close, " ");
    }
}

pub(crate) fn mentions_word(text: &str, key: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    let is_ident = |byte: u8| byte.is_ascii_alphanumeric() || byte == b'_';
    lower.match_indices(key).any(|(at, _)| {
        let before = at.checked_sub(1).and_then(|it| lower.as_bytes().get(it)).copied();
        let after = lower.as_bytes().get(at + key.len()).copied();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}
