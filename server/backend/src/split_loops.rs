//! A rewriting pass (run by `hoist::rewrite`): a DO loop of the main
//! program whose body is element assignments to rank-1 distributed arrays
//! that sit on different template cells (`x(i) = b(2*i-1)` and
//! `z(i) = b(2*i)` with X on `T(2*I-1)` and Z on `T(2*I)`) has no single
//! home, so the lowering would run it element by element. It becomes one
//! loop per assignment (loop fission), each run by the owners of its own
//! left side's elements.
//!
//! The split keeps the loop's meaning when no assignment reads or writes an
//! array another one writes, the body calls no function but elemental
//! intrinsics, and the bounds read none of the arrays written (each loop
//! evaluates them again); each loop then leaves its index at the same
//! final value. An INDEPENDENT directive before the loop is repeated
//! before each part: the parts' iterations are a subset of the loop's.

use analysis::model::{flatten_units, Model, UnitId};
use analysis::FileAnalysis;
use syntax::{Expr, ExprKind, SourceForm, Stmt, StmtKind, Subscript, TextRange, UnitKind};

use crate::assign::{Constants, ELEMENTAL};

/// The edits (range, replacement) that split the main program's loops, or
/// `None` when no loop is split.
pub(crate) fn split_loops(analysis: &FileAnalysis, text: &str) -> Option<Vec<(TextRange, String)>> {
    let file = &analysis.file;
    let unit = file.units.iter().map(|it| &**it).find(|it| it.kind == UnitKind::Program)?;
    let unit_id = flatten_units(file).iter().position(|(it, _)| std::ptr::eq(*it, unit))?;
    let splitter = Splitter { analysis, model: &analysis.model, unit: unit_id, text };
    let line_end = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut edits = Vec::new();
    let mut stack: Vec<&Stmt> = unit.body.iter().collect();
    while let Some(stmt) = stack.pop() {
        match splitter.insertions(stmt, line_end) {
            Some(inserted) => edits.extend(inserted),
            None => stack.extend(stmt.children()),
        }
    }
    if edits.is_empty() {
        return None;
    }
    edits.sort_by_key(|it: &(TextRange, String)| it.0.start);
    Some(edits)
}

struct Splitter<'a> {
    analysis: &'a FileAnalysis,
    model: &'a Model,
    unit: UnitId,
    text: &'a str,
}

impl Splitter<'_> {
    /// The lines inserted after each assignment of `stmt` but the last
    /// (`end do`, the INDEPENDENT directive if any, the loop's header), or
    /// `None` when the loop is not split.
    fn insertions(&self, stmt: &Stmt, line_end: &str) -> Option<Vec<(TextRange, String)>> {
        if let StmtKind::Forall { .. } = stmt.kind {
            return self.forall_insertions(stmt, line_end);
        }
        let StmtKind::Do { control: Some(control), body, .. } = &stmt.kind else { return None };
        if body.len() < 2 {
            return None;
        }
        let var = control.var.key();
        // A loop ended by `END DO`, without a label or a construct name.
        let header_start = line_start(self.text, stmt.range.start);
        let header_line = &self.text[header_start..line_end_at(self.text, stmt.header.start)];
        let header = header_line.trim_start().to_ascii_lowercase();
        let closing = self.text[..stmt.range.end].trim_end().to_ascii_lowercase();
        if !header.starts_with("do ") || !(closing.ends_with("end do") || closing.ends_with("enddo")) {
            return None;
        }
        // The header line is copied whole: it must hold the DO statement only
        // (`do i = 1, n; x(i) = x(i) + 1` would run its assignment twice).
        if header_line.trim_end().ends_with('&') || body[0].range.start < header_start + header_line.len() {
            return None;
        }
        let mut written = Vec::new();
        let mut cells = Vec::new();
        for assignment in body {
            let StmtKind::Assign { lhs, rhs } = &assignment.kind else { return None };
            let ExprKind::Ref { name, args } = &lhs.kind else { return None };
            let id = self.model.lookup(self.unit, &name.key())?;
            let symbol = self.model.symbol(id);
            if symbol.rank() != 1 || self.model.distribution_of(id).is_none() || written.contains(&id) {
                return None;
            }
            let [Subscript::Expr(subscript)] = args.as_slice() else { return None };
            written.push(id);
            // The template cell the element sits on: `stride * (c*v + d) + offset`.
            let constants = Constants { model: self.model, unit: self.unit };
            let is_var = |key: &str| key == var;
            let cell = analysis::eval::linear(subscript, &is_var, &constants).ok().and_then(|form| {
                let coef = form.coefs.get(&var).copied().unwrap_or(0);
                let mapping = self.model.resolve(id)?;
                let (target_dim, stride, offset) = mapping.axis_of(0)?;
                Some((mapping.target, target_dim, stride * coef, stride * form.constant + offset))
            });
            cells.push(cell);
            if !self.only_variables_and_intrinsics(lhs) || !self.only_variables_and_intrinsics(rhs) {
                return None;
            }
        }
        if cells.iter().all(|it| it.is_some() && *it == cells[0]) {
            return None;
        }
        // No assignment touches what another writes; the bounds read nothing written.
        for (assignment, own) in body.iter().zip(&written) {
            let touched = self.arrays_in(assignment.range);
            if touched.iter().any(|it| it != own && written.contains(it)) {
                return None;
            }
        }
        let mut bounds = vec![control.lo.range, control.hi.range];
        bounds.extend(control.step.as_ref().map(|it| it.range));
        if bounds.iter().any(|range| self.arrays_in(*range).iter().any(|it| written.contains(it))) {
            return None;
        }
        let mut bound_exprs = vec![&control.lo, &control.hi];
        bound_exprs.extend(control.step.as_ref());
        if !bound_exprs.iter().all(|it| self.only_variables_and_intrinsics(it)) {
            return None;
        }
        self.between_parts(body, header_start, header_line, "end do", line_end)
    }

    /// A FORALL construct whose assignments write arrays mapped differently
    /// (no single home) becomes one FORALL per assignment: the standard
    /// defines the construct as its statements run one after the other for
    /// all index values, so the split means the same when the header (its
    /// bounds and mask, evaluated again by each part) reads no array the
    /// body writes. Inserted after each assignment but the last:
    /// `end forall`, the INDEPENDENT directive if any, the header.
    fn forall_insertions(&self, stmt: &Stmt, line_end: &str) -> Option<Vec<(TextRange, String)>> {
        let StmtKind::Forall { specs, mask, body } = &stmt.kind else { return None };
        if body.len() < 2 {
            return None;
        }
        let header_start = line_start(self.text, stmt.range.start);
        let header_line = &self.text[header_start..line_end_at(self.text, stmt.header.start)];
        let header = header_line.trim_start().to_ascii_lowercase();
        let closing = self.text[..stmt.range.end].trim_end().to_ascii_lowercase();
        if !header.starts_with("forall") || !(closing.ends_with("end forall") || closing.ends_with("endforall")) {
            return None;
        }
        if header_line.trim_end().ends_with('&') || body[0].range.start < header_start + header_line.len() {
            return None;
        }
        let mut written = Vec::new();
        let mut mappings = Vec::new();
        for assignment in body {
            let StmtKind::Assign { lhs, .. } = &assignment.kind else { return None };
            let ExprKind::Ref { name, .. } = &lhs.kind else { return None };
            let id = self.model.lookup(self.unit, &name.key())?;
            self.model.distribution_of(id)?;
            written.push(id);
            mappings.push(self.model.resolve(id));
        }
        if mappings.iter().all(|it| *it == mappings[0]) {
            return None;
        }
        let mut header_exprs: Vec<&Expr> = specs.iter().flat_map(|it| [&it.lo, &it.hi]).collect();
        header_exprs.extend(specs.iter().filter_map(|it| it.step.as_ref()));
        header_exprs.extend(mask.as_ref());
        for expr in header_exprs {
            if !self.only_variables_and_intrinsics(expr)
                || self.arrays_in(expr.range).iter().any(|it| written.contains(it))
            {
                return None;
            }
        }
        self.between_parts(body, header_start, header_line, "end forall", line_end)
    }

    /// The insertions that split a construct after each statement of `body`
    /// but the last: `closing` (`end do`), the INDEPENDENT directive before
    /// the header if any, then the header line again; `None` when two
    /// statements share a line.
    fn between_parts(
        &self,
        body: &[Stmt],
        header_start: usize,
        header_line: &str,
        closing: &str,
        line_end: &str,
    ) -> Option<Vec<(TextRange, String)>> {
        let indent: String = header_line.chars().take_while(|it| it.is_whitespace()).collect();
        let indent = if matches!(self.analysis.file.form, SourceForm::Fixed { .. }) && indent.len() < 6 {
            " ".repeat(6)
        } else {
            indent
        };
        let mut inserted = format!("{indent}{closing}{line_end}");
        if let Some(directive) = self.independent_line(header_start) {
            inserted.push_str(directive);
            inserted.push_str(line_end);
        }
        inserted.push_str(header_line.trim_end_matches(['\r', '\n']));
        inserted.push_str(line_end);
        let mut edits = Vec::new();
        for pair in body.windows(2) {
            let end = line_end_at(self.text, pair[0].range.end);
            let after = self.text[end..].find('\n').map_or(self.text.len(), |it| end + it + 1);
            // Each statement on lines of its own.
            if pair[1].range.start < after {
                return None;
            }
            edits.push((TextRange::new(after, after), inserted.clone()));
        }
        Some(edits)
    }

    /// Whether every reference in `expr` is a variable of the program or an
    /// elemental intrinsic (no function that might have side effects).
    fn only_variables_and_intrinsics(&self, expr: &Expr) -> bool {
        let mut ok = true;
        expr.walk(|it| {
            let (ExprKind::Ref { name, .. } | ExprKind::Name(name)) = &it.kind else { return };
            let key = name.key();
            match self.model.lookup(self.unit, &key) {
                Some(id) => {
                    let symbol = self.model.symbol(id);
                    if matches!(it.kind, ExprKind::Ref { .. }) && !symbol.is_array() {
                        ok = false;
                    }
                }
                None if ELEMENTAL.contains(&key.as_str()) => {}
                None => ok = false,
            }
        });
        ok
    }

    /// The arrays named in `range` of the main program.
    fn arrays_in(&self, range: TextRange) -> Vec<analysis::model::SymbolId> {
        let mut arrays = Vec::new();
        let words = self.text[range.start..range.end].split(|it: char| !(it.is_ascii_alphanumeric() || it == '_'));
        for word in words.filter(|it| !it.is_empty()) {
            if let Some(id) = self.model.lookup(self.unit, &word.to_ascii_lowercase()) {
                if self.model.symbol(id).is_array() && !arrays.contains(&id) {
                    arrays.push(id);
                }
            }
        }
        arrays
    }

    /// The line of an INDEPENDENT directive right before the line starting
    /// at `header_start` (`crate::independent_before`), when it is one line.
    fn independent_line(&self, header_start: usize) -> Option<&str> {
        let (range, _) = crate::independent_before(&self.analysis.file, self.text, header_start)?;
        let start = line_start(self.text, range.start);
        let line = &self.text[start..line_end_at(self.text, range.end.saturating_sub(1).max(start))];
        // A continued directive is not repeated.
        (!line.contains('&')).then_some(line)
    }
}

/// Where the line holding `offset` starts.
fn line_start(text: &str, offset: usize) -> usize {
    text[..offset].rfind('\n').map_or(0, |it| it + 1)
}

/// Where the line holding `offset` ends (its terminator excluded).
fn line_end_at(text: &str, offset: usize) -> usize {
    let end = text[offset..].find('\n').map_or(text.len(), |it| offset + it);
    if end > 0 && text.as_bytes()[end - 1] == b'\r' {
        end - 1
    } else {
        end
    }
}
