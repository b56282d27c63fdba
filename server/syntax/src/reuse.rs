//! Reuse of the lowered units of the previous version of a file: a program
//! unit whose tree-sitter subtree the incremental parse reused, and whose
//! text did not change, is the same AST moved by the length difference of
//! the text before it, so an edit inside one subroutine lowers that
//! subroutine again, not the whole file.

use std::collections::HashMap;
use std::sync::Arc;

use crate::ast::{Decl, DeclAttr, DeclEntity, LoopControl, Stmt, StmtKind, Unit};
use crate::{Code, Expr, ExprKind, Name, SourceFile, Subscript, TextRange};

/// A top-level unit taken from the previous version of the text: the same
/// text and subtree, moved from `previous_start` to `range`. What was
/// computed from it there (its loop analysis) holds here, moved the same way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReusedUnit {
    pub range: TextRange,
    pub previous_start: usize,
    /// It did not move and holds all its directives: the new file shares
    /// the previous unit (an `Arc`), directives included, and its comments
    /// are not parsed for directives again.
    pub shared: bool,
}

/// A top-level unit lowered from a whole, error-free unit node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WholeUnit {
    pub range: TextRange,
    /// Identifies its tree-sitter subtree (meaningful with that tree only):
    /// the id of the node's first child, see `lower::subtree_id`.
    pub subtree: usize,
}

/// The previous version of a file: its texts and what was lowered from them.
#[derive(Clone, Copy)]
pub struct PreviousLowering<'a> {
    /// The user's text.
    pub text: &'a str,
    /// The text tree-sitter parsed (normalised for fixed form).
    pub parser_text: &'a str,
    pub file: &'a SourceFile,
}

/// The previous file's reusable units by their tree-sitter subtree.
pub(crate) struct ReusableUnits<'a> {
    previous: PreviousLowering<'a>,
    by_subtree: HashMap<usize, &'a Arc<Unit>>,
}

impl<'a> ReusableUnits<'a> {
    pub(crate) fn new(previous: PreviousLowering<'a>) -> Option<ReusableUnits<'a>> {
        // The deepest-nesting cut-off is reported once per file, by the
        // first unit that hits it: such a file is lowered whole.
        if previous.file.diagnostics.iter().any(|it| it.code == Code::TooDeep) {
            return None;
        }
        let by_subtree = previous
            .file
            .whole_units
            .iter()
            .filter_map(|whole| {
                // Units are in text order: a binary search, not a scan per unit
                // (quadratic: 65 ms for the 2,000 units of 100k lines).
                let units = &previous.file.units;
                let at = units.partition_point(|it| it.range.start < whole.range.start);
                let unit = units[at..]
                    .iter()
                    .take_while(|it| it.range.start == whole.range.start)
                    .find(|it| it.range == whole.range)?;
                Some((whole.subtree, unit))
            })
            .collect();
        Some(ReusableUnits { previous, by_subtree })
    }

    /// The unit of the subtree `subtree` (at `range` of the new texts), when
    /// the previous file lowered the same subtree, and where it started: the
    /// previous unit itself when it did not move and its directives are all
    /// inside it ([`ReusedUnit::shared`]), else a copy moved to `range`
    /// without directives (they are assigned afresh).
    ///
    /// The same text is not enough: tree-sitter can parse the same unit
    /// text into another tree after an edit elsewhere (a fixed-form labelled
    /// DO, found by tests/edit_sequences.rs). A subtree of the new tree has
    /// the identity of an old one only when the incremental parse reused it
    /// whole (the old tree is alive meanwhile, so addresses are not
    /// recycled), and the texts are compared as well.
    pub(crate) fn unit(
        &self,
        subtree: usize,
        range: TextRange,
        parser_text: &str,
        text: &str,
    ) -> Option<(Arc<Unit>, ReusedUnit)> {
        let old = self.by_subtree.get(&subtree)?;
        let same_text = |old_text: &str, new_text: &str| {
            old_text.get(old.range.to_range()).is_some_and(|it| Some(it) == new_text.get(range.to_range()))
        };
        if !same_text(self.previous.parser_text, parser_text) || !same_text(self.previous.text, text) {
            return None;
        }
        let delta = range.start as isize - old.range.start as isize;
        let previous_start = old.range.start;
        let inside =
            || old.all_units().iter().flat_map(|it| &it.directives).all(|it| old.range.contains_range(it.range));
        if delta == 0 && inside() {
            return Some((Arc::clone(old), ReusedUnit { range, previous_start, shared: true }));
        }
        let mut unit = Unit::clone(old);
        shift_unit(&mut unit, delta);
        Some((Arc::new(unit), ReusedUnit { range, previous_start, shared: false }))
    }
}

fn moved(offset: usize, delta: isize) -> usize {
    offset.checked_add_signed(delta).expect("a reused unit stays inside the text")
}

fn shift_range(range: &mut TextRange, delta: isize) {
    *range = range.shifted(delta);
}

fn shift_name(name: &mut Name, delta: isize) {
    shift_range(&mut name.range, delta);
}

fn shift_unit(unit: &mut Unit, delta: isize) {
    shift_range(&mut unit.range, delta);
    shift_range(&mut unit.header, delta);
    unit.execution_start = moved(unit.execution_start, delta);
    unit.name.iter_mut().for_each(|it| shift_name(it, delta));
    unit.dummies.iter_mut().chain(unit.uses.iter_mut()).for_each(|it| shift_name(it, delta));
    unit.decls.iter_mut().for_each(|it| shift_decl(it, delta));
    unit.body.iter_mut().for_each(|it| shift_stmt(it, delta));
    unit.directives.clear();
    unit.contains.iter_mut().chain(unit.interfaces.iter_mut()).for_each(|it| shift_unit(it, delta));
}

fn shift_decl(decl: &mut Decl, delta: isize) {
    shift_range(&mut decl.range, delta);
    for attr in &mut decl.attrs {
        if let DeclAttr::Dimension(dims) = attr {
            dims.iter_mut().for_each(|it| shift_subscript(it, delta));
        }
    }
    decl.entities.iter_mut().for_each(|it| shift_entity(it, delta));
}

fn shift_entity(entity: &mut DeclEntity, delta: isize) {
    shift_range(&mut entity.range, delta);
    shift_name(&mut entity.name, delta);
    entity.dims.iter_mut().flatten().for_each(|it| shift_subscript(it, delta));
    entity.init.iter_mut().for_each(|it| shift_expr(it, delta));
}

fn shift_control(control: &mut LoopControl, delta: isize) {
    shift_name(&mut control.var, delta);
    shift_expr(&mut control.lo, delta);
    shift_expr(&mut control.hi, delta);
    control.step.iter_mut().for_each(|it| shift_expr(it, delta));
}

fn shift_stmts(stmts: &mut [Stmt], delta: isize) {
    stmts.iter_mut().for_each(|it| shift_stmt(it, delta));
}

fn shift_stmt(stmt: &mut Stmt, delta: isize) {
    shift_range(&mut stmt.range, delta);
    shift_range(&mut stmt.header, delta);
    match &mut stmt.kind {
        StmtKind::Do { label: _, control, body } => {
            control.iter_mut().for_each(|it| shift_control(it, delta));
            shift_stmts(body, delta);
        }
        StmtKind::DoWhile { cond, body } => {
            cond.iter_mut().for_each(|it| shift_expr(it, delta));
            shift_stmts(body, delta);
        }
        StmtKind::Forall { specs, mask, body } => {
            specs.iter_mut().for_each(|it| shift_control(it, delta));
            mask.iter_mut().for_each(|it| shift_expr(it, delta));
            shift_stmts(body, delta);
        }
        StmtKind::Assign { lhs, rhs } => {
            shift_expr(lhs, delta);
            shift_expr(rhs, delta);
        }
        StmtKind::Where { mask, body, elsewhere } => {
            mask.iter_mut().for_each(|it| shift_expr(it, delta));
            shift_stmts(body, delta);
            for (mask, body) in elsewhere {
                mask.iter_mut().for_each(|it| shift_expr(it, delta));
                shift_stmts(body, delta);
            }
        }
        StmtKind::If { branches } => {
            for (cond, body) in branches {
                cond.iter_mut().for_each(|it| shift_expr(it, delta));
                shift_stmts(body, delta);
            }
        }
        StmtKind::Call { name, args } => {
            shift_name(name, delta);
            args.iter_mut().for_each(|it| shift_expr(it, delta));
        }
        StmtKind::Output { items } => items.iter_mut().for_each(|it| shift_expr(it, delta)),
        StmtKind::Other { exprs, body } => {
            exprs.iter_mut().for_each(|it| shift_expr(it, delta));
            shift_stmts(body, delta);
        }
    }
}

fn shift_subscript(subscript: &mut Subscript, delta: isize) {
    match subscript {
        Subscript::Expr(expr) => shift_expr(expr, delta),
        Subscript::Range { lo, hi, stride, range } => {
            shift_range(range, delta);
            lo.iter_mut().chain(hi.iter_mut()).chain(stride.iter_mut()).for_each(|it| shift_expr(it, delta));
        }
        Subscript::Star(range) => shift_range(range, delta),
        Subscript::Keyword { name, value } => {
            shift_name(name, delta);
            shift_expr(value, delta);
        }
    }
}

/// Expressions nest at most `lower::MAX_DEPTH` deep (lowering cuts off
/// deeper ones), so the recursion is bounded.
fn shift_expr(expr: &mut Expr, delta: isize) {
    shift_range(&mut expr.range, delta);
    match &mut expr.kind {
        ExprKind::Int(_) | ExprKind::Literal(_) => {}
        ExprKind::Name(name) => shift_name(name, delta),
        ExprKind::Ref { name, args } => {
            shift_name(name, delta);
            args.iter_mut().for_each(|it| shift_subscript(it, delta));
        }
        ExprKind::Unary { operand, .. } => shift_expr(operand, delta),
        ExprKind::Binary { lhs, rhs, .. } => {
            shift_expr(lhs, delta);
            shift_expr(rhs, delta);
        }
        ExprKind::Paren(inner) => shift_expr(inner, delta),
        ExprKind::Other(parts) => parts.iter_mut().for_each(|it| shift_expr(it, delta)),
    }
}
