//! Distributed ALLOCATABLE arrays of the main program and of modules: their
//! bounds come from the one ALLOCATE statement of the main program that
//! allocates them, and are known only when it runs (a module declares the
//! stored bounds with the local part, `module_arrays.rs`).
//!
//! Each bound that does not fold to a constant is a [`Bound::Runtime`]:
//! the ALLOCATE stores it in `hpf_lbs_X(k)` / `hpf_ubs_X(k)` (declared with
//! the local part), then makes the descriptor and allocates the local part
//! with its shadow (`emit_alloc`), every process alike; DEALLOCATE runs as
//! written on the local parts. The planner reads bounds as text, so loops,
//! sections and gathers on such arrays are planned as on constant ones;
//! where it needs a number (a CSHIFT's extent, a section passed to a
//! subroutine, a specialised copy of a subroutine) it takes the rank-0
//! path. Two run-time bounds are known equal when their expressions are
//! written alike and read variables that no statement from the program's
//! first ALLOCATE on sets (else only within one ALLOCATE statement), so
//! arrays allocated `(n)` alike are laid out alike.

use std::fmt::Write;

use analysis::model::SymbolId;
use syntax::{Expr, ExprKind, Stmt, StmtKind, Subscript, TextRange};

use crate::assign::Constants;
use crate::{Bound, Distributed, Lowering};

/// One array an ALLOCATE statement allocates: the statement, and the
/// bounds `(lo, hi)` of each dimension as written (`lo` absent: 1).
pub(crate) struct Allocation<'a> {
    pub(crate) stmt: &'a Stmt,
    /// The array's reference in the statement (`a(0:n+1)`).
    pub(crate) range: TextRange,
    dims: Vec<(Option<&'a Expr>, &'a Expr)>,
}

/// The bounds `(lo, hi)` of every dimension and the ALLOCATE statement.
type AllocatedBounds = (Vec<(Bound, Bound)>, TextRange);

/// Statements in `body` and below, parents first.
fn statements(body: &[Stmt]) -> Vec<&Stmt> {
    let mut res = Vec::new();
    let mut stack: Vec<&Stmt> = body.iter().rev().collect();
    while let Some(stmt) = stack.pop() {
        res.push(stmt);
        stack.extend(stmt.children().into_iter().rev());
    }
    res
}

/// The names an expression reads (variables and arrays).
fn names_read(expr: &Expr) -> Vec<String> {
    let mut res = Vec::new();
    expr.walk(|it| match &it.kind {
        ExprKind::Name(name) | ExprKind::Ref { name, .. } => res.push(name.key()),
        _ => {}
    });
    res
}

impl<'a> Lowering<'a> {
    fn main_body(&self) -> &'a [Stmt] {
        let units = analysis::model::flatten_units(&self.analysis.file);
        units.get(self.main).map_or(&[], |it| &it.0.body)
    }

    /// The main program's internal procedure `key`.
    fn internal_procedure(&self, key: &str) -> Option<&'a syntax::Unit> {
        let units = analysis::model::flatten_units(&self.analysis.file);
        let main = units.get(self.main)?.0;
        main.contains.iter().find(|it| it.name.as_ref().is_some_and(|name| name.key() == key))
    }

    pub(crate) fn is_allocate(&self, stmt: &Stmt) -> bool {
        matches!(stmt.kind, StmtKind::Other { .. })
            && self.begins_with_keyword(stmt, &["allocate("])
            && !self.slice(stmt.header).trim_start().to_ascii_lowercase().starts_with("if")
    }

    pub(crate) fn is_deallocate(&self, stmt: &Stmt) -> bool {
        matches!(stmt.kind, StmtKind::Other { .. })
            && self.begins_with_keyword(stmt, &["deallocate("])
            && !self.slice(stmt.header).trim_start().to_ascii_lowercase().starts_with("if")
    }

    /// The ALLOCATE statements of the main program that allocate `id`, with
    /// its reference in each; `Err` when a statement has options (`STAT=`).
    fn allocations_of(&self, id: SymbolId) -> Result<Vec<Allocation<'a>>, (TextRange, String)> {
        let mut res = Vec::new();
        for stmt in statements(self.main_body()) {
            if !self.is_allocate(stmt) {
                continue;
            }
            let StmtKind::Other { exprs, .. } = &stmt.kind else { continue };
            for expr in exprs {
                let ExprKind::Ref { name, args } = &expr.kind else { continue };
                if self.lookup(&name.key()) != Some(id) {
                    continue;
                }
                let dims: Option<Vec<(Option<&Expr>, &Expr)>> = args
                    .iter()
                    .map(|it| match it {
                        Subscript::Expr(hi) => Some((None, hi)),
                        Subscript::Range { lo, hi: Some(hi), stride: None, .. } => Some((lo.as_ref(), hi)),
                        _ => None,
                    })
                    .collect();
                let Some(dims) = dims else {
                    return Err((
                        expr.range,
                        format!("`{}`: a bound of this allocation is not `lo:hi` or `hi`", name.text),
                    ));
                };
                res.push(Allocation { stmt, range: expr.range, dims });
            }
            let header = self.slice(stmt.range).to_ascii_lowercase();
            if res.last().is_some_and(|it| std::ptr::eq(it.stmt, stmt))
                && ["stat", "source", "mold", "errmsg"].iter().any(|it| {
                    header.split(|c: char| !c.is_ascii_alphanumeric() && c != '_').any(|word| word == *it)
                        && header.contains('=')
                })
            {
                return Err((
                    stmt.header,
                    "an ALLOCATE of a distributed array with STAT=, ERRMSG=, SOURCE= or MOLD= is not supported by the MPI backend yet".to_string(),
                ));
            }
        }
        Ok(res)
    }

    /// The bounds of the deferred-shape distributed array `id` (`symbol`)
    /// from its ALLOCATE statement, or where and why they are refused.
    pub(crate) fn allocated_bounds(&self, id: SymbolId, rank: usize) -> Result<AllocatedBounds, (TextRange, String)> {
        let symbol = self.analysis.model.symbol(id);
        let name = &symbol.name.text;
        let units = analysis::model::flatten_units(&self.analysis.file);
        let of_module = units.get(id.unit).is_some_and(|it| it.0.kind == syntax::UnitKind::Module);
        // (In a copy of a procedure, `main` is the procedure.)
        if (id.unit != self.main && !of_module) || self.place.is_some() {
            return Err((
                symbol.name.range,
                format!("`{name}`: distributed ALLOCATABLE arrays are supported by the MPI backend in the main program and modules only (not in procedures yet)"),
            ));
        }
        // Every process allocates in the main program's statements; a
        // procedure's run on rank 0 or on every process could not.
        for (unit_id, (unit, _)) in units.iter().enumerate().filter(|it| it.0 != self.main) {
            let elsewhere = statements(&unit.body).into_iter().find(|stmt| {
                (self.is_allocate(stmt) || self.is_deallocate(stmt)) && {
                    let StmtKind::Other { exprs, .. } = &stmt.kind else { return false };
                    exprs.iter().any(|expr| {
                        let (ExprKind::Name(it) | ExprKind::Ref { name: it, .. }) = &expr.kind else { return false };
                        self.analysis.model.lookup(unit_id, &it.key()) == Some(id)
                    })
                }
            });
            if let Some(stmt) = elsewhere {
                return Err((
                    stmt.header,
                    format!("`{name}`: the MPI backend allocates and deallocates distributed arrays in the main program's statements only, not in a procedure"),
                ));
            }
        }
        let allocations = self.allocations_of(id)?;
        let allocation = match &allocations[..] {
            [one] => one,
            [] => {
                return Err((
                    symbol.name.range,
                    format!("`{name}`: the MPI backend needs the ALLOCATE statement of this distributed array in the main program, and finds none"),
                ))
            }
            [_, second, ..] => {
                return Err((
                    second.range,
                    format!("`{name}`: the MPI backend needs one ALLOCATE statement per distributed array (its descriptor is made there), and this is a second one"),
                ))
            }
        };
        if allocation.dims.len() != rank {
            return Err((allocation.range, format!("`{name}`: this allocation has another rank than the declaration")));
        }
        let constants = Constants { model: &self.analysis.model, unit: self.main };
        let frozen_from = self.first_allocation_start();
        let bound = |expr: &Expr, which: &str, k: usize| match analysis::eval::eval_int(expr, &constants) {
            Ok(value) => Bound::Known(value),
            Err(_) => {
                let written: String = self
                    .slice(expr.range)
                    .chars()
                    .filter(|it| !it.is_whitespace())
                    .collect::<String>()
                    .to_ascii_lowercase();
                // A function reference may give another value each time.
                let mut calls = false;
                expr.walk(|it| {
                    if let ExprKind::Ref { name, .. } = &it.kind {
                        calls |= !self.lookup(&name.key()).is_some_and(|id| self.analysis.model.symbol(id).is_array());
                    }
                });
                let key = if !calls && self.never_set_from(&names_read(expr), frozen_from) {
                    written
                } else {
                    format!("{written}@{}", allocation.stmt.range.start)
                };
                Bound::Runtime { text: format!("hpf_{which}_{name}({})", k + 1), key }
            }
        };
        let bounds = allocation
            .dims
            .iter()
            .enumerate()
            .map(|(k, (lo, hi))| (lo.map_or(Bound::Known(1), |lo| bound(lo, "lbs", k)), bound(hi, "ubs", k)))
            .collect();
        Ok((bounds, allocation.stmt.range))
    }

    /// Where the main program's first statement that allocates a distributed
    /// array starts: its top-level statement (a loop runs it again).
    fn first_allocation_start(&self) -> usize {
        self.main_body()
            .iter()
            .find(|top| statements(std::slice::from_ref(*top)).iter().any(|it| self.is_allocate(it)))
            .map_or(usize::MAX, |it| it.range.start)
    }

    /// Whether no statement from `from` on may set one of the variables `keys`
    /// (assigned, a DO variable, read, passed to a procedure).
    fn never_set_from(&self, keys: &[String], from: usize) -> bool {
        let sets = |stmt: &Stmt| match &stmt.kind {
            StmtKind::Assign { lhs, .. } => {
                let base = match &lhs.kind {
                    ExprKind::Name(name) | ExprKind::Ref { name, .. } => Some(name.key()),
                    _ => None,
                };
                base.is_some_and(|it| keys.contains(&it))
            }
            StmtKind::Do { control: Some(control), .. } => keys.contains(&control.var.key()),
            // A subroutine may set what it is passed, the program's
            // variables it sees by host association, and module variables.
            StmtKind::Call { name, .. } => keys.iter().any(|key| {
                let internal = self.internal_procedure(&name.key());
                crate::private::mentions_word(self.slice(stmt.header), key)
                    || self.lookup(key).is_none_or(|id| id.unit != self.main)
                    || internal.is_some_and(|it| crate::private::mentions_word(self.slice(it.range), key))
            }),
            StmtKind::Other { .. } if !self.is_allocate(stmt) && !self.is_deallocate(stmt) => {
                keys.iter().any(|key| crate::private::mentions_word(self.slice(stmt.header), key))
            }
            _ => false,
        };
        statements(self.main_body()).into_iter().filter(|it| it.range.start >= from).all(|it| !sets(it))
    }

    /// An alignee allocated before its deferred-shape target, or aligned by
    /// `:` with one of other lower bounds: where and why it is refused.
    pub(crate) fn check_allocation_order(
        &self,
        id: SymbolId,
        distributed: &Distributed,
    ) -> Option<(TextRange, String)> {
        let at = distributed.allocated_by?;
        let target = distributed.target;
        if target == id {
            return None;
        }
        let model = &self.analysis.model;
        let target_symbol = model.symbol(target);
        let deferred = target_symbol.shape.iter().any(|it| it.lo.known().is_none());
        if !deferred {
            return None;
        }
        let Ok(Some(target_at)) = self.allocations_of(target).map(|it| it.first().map(|it| it.stmt.range)) else {
            return None;
        };
        // The target's bound variables are set at its ALLOCATE: the
        // alignee's must run after it (the same statement, or a later
        // statement of the program's top level).
        let top =
            |range: TextRange| self.main_body().iter().find(|it| it.range.contains_range(range)).map(|it| it.range);
        let after =
            target_at == at || (top(at) == Some(at) && top(target_at) == Some(target_at) && target_at.start < at.start);
        (!after).then(|| {
            (
                at,
                format!(
                    "`{}` is aligned with `{}`, whose bounds its ALLOCATE computes: the MPI backend needs `{}` allocated in the same ALLOCATE statement, or in one before it outside loops and IF constructs",
                    distributed.name, target_symbol.name.text, target_symbol.name.text
                ),
            )
        })
    }

    /// ALLOCATE of distributed arrays (and maybe others): the run-time
    /// bounds, then each array's descriptor and local part.
    pub(crate) fn emit_allocate(&self, out: &mut String, stmt: &Stmt) {
        let StmtKind::Other { exprs, .. } = &stmt.kind else { return };
        let mut distributed: Vec<&Distributed> = Vec::new();
        let mut others: Vec<String> = Vec::new();
        for expr in exprs {
            let ExprKind::Ref { name, .. } = &expr.kind else { continue };
            match self.lookup(&name.key()).and_then(|id| self.distributed.get(&id)) {
                Some(it) => distributed.push(it),
                None => others.push(self.one_line(expr.range)),
            }
        }
        let _ = writeln!(out, "  ! hpf-ls: {}", self.one_line(stmt.range).trim());
        for it in &distributed {
            let Some(allocation) = self
                .lookup(&it.name.to_ascii_lowercase())
                .and_then(|id| self.allocations_of(id).ok()?.into_iter().find(|a| std::ptr::eq(a.stmt, stmt)))
            else {
                continue;
            };
            // Every bound, for LBOUND, UBOUND and SIZE (`hoist.rs`).
            let name = &it.name;
            for (k, (lo, hi)) in allocation.dims.iter().enumerate() {
                let lo = lo.map_or("1".to_string(), |lo| self.one_line(lo.range).trim().to_string());
                let _ = writeln!(out, "  hpf_lbs_{name}({}) = {lo}", k + 1);
                let _ = writeln!(out, "  hpf_ubs_{name}({}) = {}", k + 1, self.one_line(hi.range).trim());
            }
        }
        for it in &distributed {
            crate::emit_alloc(out, it);
        }
        if !others.is_empty() {
            let _ = writeln!(out, "  allocate ({})", others.join(", "));
        }
    }

    /// The declarations of the run-time bounds of the main program's arrays.
    pub(crate) fn runtime_bound_declarations(&self, out: &mut String) {
        for it in self.distributed.iter().filter(|it| it.0.unit == self.main && it.1.allocated_by.is_some()) {
            let _ = writeln!(
                out,
                "  integer :: hpf_lbs_{name}({rank}), hpf_ubs_{name}({rank})",
                name = it.1.name,
                rank = it.1.lbs.len()
            );
        }
    }
}
