//! Replicated arrays an owner-computes DO nest assigns: private work arrays
//! (`cp`, `dp` of a tridiagonal solve along each column). An array whose
//! elements every iteration of the distributing loop writes before it
//! reads them carries nothing from one iteration to the next, so each
//! process computes it for the iterations it owns, and the home is the
//! distributed array the nest writes. Private are the arrays in the NEW
//! list of the loop's INDEPENDENT directive, and rank-1 arrays whose every
//! read is provably of an element written earlier in the same iteration
//! ([`Coverage`]). After the nest its contents differ from process to
//! process (HPF: undefined after a NEW loop), so no other statement of the
//! program unit may read it, except inside another loop for which it is
//! private too.

use analysis::eval::Linear;
use analysis::model::SymbolKind;
use syntax::{Expr, ExprKind, Name, Stmt, StmtKind, Subscript};

use crate::private::mentions_word;
use crate::{mentions, Lowering};

impl Lowering<'_> {
    /// The replicated arrays (not scalars) that the assignments `assignments`
    /// write element by element, once each.
    pub(crate) fn assigned_replicated_arrays<'s>(&self, assignments: &[&'s Stmt]) -> Vec<&'s Name> {
        let mut arrays: Vec<&Name> = Vec::new();
        for stmt in assignments {
            let StmtKind::Assign { lhs, .. } = &stmt.kind else { continue };
            let ExprKind::Ref { name, .. } = &lhs.kind else { continue };
            let is_array = self.lookup(&name.key()).is_some_and(|id| {
                let symbol = self.analysis.model.symbol(id);
                symbol.kind == SymbolKind::Variable && !symbol.shape.is_empty() && !self.distributed.contains_key(&id)
            });
            if is_array && !arrays.iter().any(|it| it.key() == name.key()) {
                arrays.push(name);
            }
        }
        arrays
    }

    /// Whether the replicated array `name`, written in the nest `nest`, is
    /// private to the iterations of its `distributing` loop and unread
    /// after the nest, or why it is not. `loops` are the nest's DO loops.
    pub(crate) fn private_array(
        &self,
        nest: &Stmt,
        distributing: &Stmt,
        loops: &[&Stmt],
        name: &Name,
    ) -> Result<(), String> {
        let key = name.key();
        let not_private = |why: &str| Err(format!("it writes the replicated array {}, {why}", name.text));
        let Some(id) = self.lookup(&key) else { return not_private("which is not declared") };
        let symbol = self.analysis.model.symbol(id);
        if id.unit != self.main || symbol.is_dummy {
            return not_private("which is not a local variable of this program unit");
        }
        if self.aliased(&key) || self.in_common(&key) {
            return not_private("which may be reached through another name (EQUIVALENCE, TARGET, COMMON)");
        }
        let unit = analysis::model::flatten_units(&self.analysis.file)[self.main].0;
        if unit.contains.iter().any(|it| mentions_word(self.slice(it.range), &key)) {
            return not_private("which an internal procedure may reach by host association");
        }
        if loops.iter().any(|it| self.mentions_scalar(it, &key)) {
            return not_private("which the bounds of a loop of the nest read");
        }
        if !self.private_in(distributing, &key) {
            return not_private(
                "which an iteration may read before it writes it (name it in the loop's INDEPENDENT, NEW(...))",
            );
        }
        if self.array_read_elsewhere(&unit.body, nest, &key) {
            return not_private("which is read after the loop, where its values differ from process to process");
        }
        Ok(())
    }

    /// Whether the array `key` is private to the iterations of the DO loop
    /// `lp`: NEW in its INDEPENDENT directive, or every element an iteration
    /// reads written earlier in the same iteration.
    fn private_in(&self, lp: &Stmt, key: &str) -> bool {
        let new = crate::independent_before(&self.analysis.file, self.text, lp.range.start)
            .is_some_and(|(_, independent)| independent.new.iter().any(|it| it.key() == key));
        new || self.covered_in(lp, key)
    }

    /// Whether the specification part puts `key` in a COMMON block (other
    /// procedures may read it).
    fn in_common(&self, key: &str) -> bool {
        let unit = analysis::model::flatten_units(&self.analysis.file)[self.main].0;
        let spec = syntax::TextRange::new(unit.header.end, unit.execution_start.max(unit.header.end));
        self.slice(spec).lines().any(|line| {
            let code = line.split('!').next().unwrap_or("");
            mentions_word(code, key) && mentions_word(code, "common")
        })
    }

    /// Whether a statement among `stmts` (at any depth, the nest `nest` left
    /// out) may read the array `key` other than in a loop for which it is
    /// private.
    fn array_read_elsewhere(&self, stmts: &[Stmt], nest: &Stmt, key: &str) -> bool {
        let private = |lp: &Stmt| self.private_in(lp, key);
        self.read_outside(stmts, nest, key, &private, &|stmt| self.reads_array(stmt, key))
    }

    /// Whether `stmt` itself (not the statements inside it) may read the
    /// array `key`: an assignment that only writes it (`w = 0`, `w(i) = x`)
    /// does not.
    fn reads_array(&self, stmt: &Stmt, key: &str) -> bool {
        let keys = [key.to_string()];
        let StmtKind::Assign { lhs, rhs } = &stmt.kind else { return self.mentions_scalar(stmt, key) };
        let lhs_reads = match &lhs.kind {
            ExprKind::Name(name) if name.key() == key => false,
            ExprKind::Ref { name, args } if name.key() == key => args.iter().any(|arg| match arg {
                Subscript::Expr(value) | Subscript::Keyword { value, .. } => mentions(value, &keys),
                Subscript::Range { lo, hi, stride, .. } => {
                    [lo, hi, stride].into_iter().flatten().any(|it| mentions(it, &keys))
                }
                Subscript::Star(_) => false,
            }),
            _ => mentions(lhs, &keys),
        };
        lhs_reads || mentions(rhs, &keys)
    }

    /// Whether every read of the rank-1 array `key` in an iteration of the
    /// DO loop `lp` is of an element the same iteration wrote before:
    /// `w(1) = ...` then `w(1)`; `w(i) = ...` in `DO i = a, b` then `w(k+c)`
    /// in a later loop over a range inside `[a, b]`; `w(i) = ... w(i-1)` in
    /// `DO i = a+1, b` after `w(a) = ...` (a recurrence). Writes under an IF
    /// do not count; a loop with a CYCLE, EXIT or another kind of statement
    /// is not examined.
    fn covered_in(&self, lp: &Stmt, key: &str) -> bool {
        let Some(id) = self.lookup(key) else { return false };
        if self.analysis.model.symbol(id).shape.len() != 1 {
            return false;
        }
        let StmtKind::Do { control: Some(_), body, .. } = &lp.kind else { return false };
        let mut coverage = Coverage {
            lowering: self,
            key,
            assigned: Vec::new(),
            inner: Vec::new(),
            stack: Vec::new(),
            covers: Vec::new(),
        };
        if !coverage.collect_assigned(body) {
            return false;
        }
        coverage.statements(body, false)
    }
}

/// An open inner loop: its index and the range of values it takes.
struct OpenLoop {
    var: String,
    /// The least and greatest value of the index (`None`: not a unit step
    /// or bounds that are not affine in values the iteration keeps).
    range: Option<(Linear, Linear)>,
    /// `lo`, as the first value, and the step (+1 or -1).
    first: Option<(Linear, i64)>,
    /// Offsets `w` of the unconditional writes `key(var + w)` of its body.
    writes: Vec<(Linear, bool)>,
}

/// Elements `[lo, hi]` known written in this iteration, valid while the
/// loops up to `depth` stay open.
struct Cover {
    lo: Linear,
    hi: Linear,
    depth: usize,
}

/// The walk of one iteration's statements in the order they run, for
/// [`Lowering::covered_in`].
struct Coverage<'l, 'a> {
    lowering: &'l Lowering<'a>,
    key: &'l str,
    /// Scalars the loop assigns: not invariant in an iteration.
    assigned: Vec<String>,
    /// Indices of the loop's inner loops.
    inner: Vec<String>,
    stack: Vec<OpenLoop>,
    covers: Vec<Cover>,
}

impl Coverage<'_, '_> {
    /// Collects the assigned scalars and inner indices, or `false` for a
    /// statement it does not examine.
    fn collect_assigned(&mut self, stmts: &[Stmt]) -> bool {
        for stmt in stmts {
            match &stmt.kind {
                StmtKind::Do { control: Some(control), body, .. } => {
                    self.inner.push(control.var.key());
                    if !self.collect_assigned(body) {
                        return false;
                    }
                }
                StmtKind::Assign { lhs, .. } => {
                    if let ExprKind::Name(name) = &lhs.kind {
                        self.assigned.push(name.key());
                    }
                }
                StmtKind::If { branches } => {
                    for (_, body) in branches {
                        if !self.collect_assigned(body) {
                            return false;
                        }
                    }
                }
                StmtKind::Other { body, .. }
                    if body.is_empty() && self.lowering.begins_with_keyword(stmt, &["continue"]) => {}
                _ => return false,
            }
        }
        true
    }

    /// `expr` as an affine form of values the iteration keeps, and the
    /// open loop whose index it names with coefficient 1 (if any).
    fn form(&self, expr: &Expr) -> Option<(Linear, Option<usize>)> {
        let linear = self.lowering.linear_of(expr)?;
        let mut along = None;
        for (var, coef) in linear.vars() {
            if self.assigned.iter().any(|it| it == var) || var == self.key {
                return None;
            }
            if self.inner.iter().any(|it| it == var) {
                let level = self.stack.iter().rposition(|it| it.var == var)?;
                if coef != 1 || along.is_some() {
                    return None;
                }
                along = Some(level);
            }
        }
        Some((linear, along))
    }

    fn statements(&mut self, stmts: &[Stmt], conditional: bool) -> bool {
        stmts.iter().all(|stmt| self.statement(stmt, conditional))
    }

    fn statement(&mut self, stmt: &Stmt, conditional: bool) -> bool {
        match &stmt.kind {
            StmtKind::Do { control: Some(control), body, .. } => {
                let keys = [self.key.to_string()];
                if [Some(&control.lo), Some(&control.hi), control.step.as_ref()]
                    .into_iter()
                    .flatten()
                    .any(|it| mentions(it, &keys))
                {
                    return false;
                }
                let step = match &control.step {
                    None => Some(1),
                    Some(step) => self.lowering.constant_of(step).filter(|it| it.abs() == 1),
                };
                let bound = |expr: &Expr| self.form(expr).filter(|it| it.1.is_none()).map(|it| it.0);
                let (lo, hi) = (bound(&control.lo), bound(&control.hi));
                let (range, first) = match (step, lo, hi) {
                    (Some(1), Some(lo), Some(hi)) => (Some((lo.clone(), hi)), Some((lo, 1))),
                    (Some(-1), Some(lo), Some(hi)) => (Some((hi, lo.clone())), Some((lo, -1))),
                    _ => (None, None),
                };
                // The writes `key(var + w)` its body does in every iteration.
                let mut open = OpenLoop { var: control.var.key(), range, first, writes: Vec::new() };
                self.stack.push(OpenLoop { var: open.var.clone(), range: None, first: None, writes: Vec::new() });
                for child in body {
                    if let Some(offset) = self.write_along(child, self.stack.len() - 1) {
                        open.writes.push((offset, false));
                    }
                }
                *self.stack.last_mut().expect("pushed") = open;
                let covered = self.statements(body, conditional);
                let depth = self.stack.len();
                let closed = self.stack.pop().expect("pushed");
                self.covers.retain(|it| it.depth < depth);
                // Once the loop is over, every value of its index has been written.
                if let (Some((lo, hi)), false) = (&closed.range, conditional) {
                    for (offset, _) in &closed.writes {
                        self.covers.push(Cover { lo: add(lo, offset), hi: add(hi, offset), depth: depth - 1 });
                    }
                }
                covered
            }
            StmtKind::Assign { lhs, rhs } => {
                if !self.reads_covered(rhs) {
                    return false;
                }
                let own = match &lhs.kind {
                    ExprKind::Ref { name, args } if name.key() == self.key => args,
                    _ => return self.reads_covered(lhs),
                };
                if !own.iter().all(|arg| match arg {
                    Subscript::Expr(value) => self.reads_covered(value),
                    _ => false,
                }) {
                    return false;
                }
                if conditional {
                    return true;
                }
                let [Subscript::Expr(value)] = &own[..] else { return true };
                let depth = self.stack.len();
                match self.form(value) {
                    Some((point, None)) => self.covers.push(Cover { lo: point.clone(), hi: point, depth }),
                    Some((linear, Some(level))) if level + 1 == depth => {
                        let offset = without(&linear, &self.stack[level].var);
                        if let Some(write) = self.stack[level].writes.iter_mut().find(|it| it.0 == offset) {
                            write.1 = true;
                        }
                    }
                    _ => {}
                }
                true
            }
            StmtKind::If { branches } => branches.iter().all(|(cond, body)| {
                cond.as_ref().is_none_or(|cond| self.reads_covered(cond)) && self.statements(body, true)
            }),
            StmtKind::Other { .. } => !self.lowering.mentions_scalar(stmt, self.key),
            _ => false,
        }
    }

    /// The offset `w` when `stmt` writes `key(var + w)`, `var` the index of
    /// the open loop at `level`, unconditionally.
    fn write_along(&self, stmt: &Stmt, level: usize) -> Option<Linear> {
        let StmtKind::Assign { lhs, .. } = &stmt.kind else { return None };
        let ExprKind::Ref { name, args } = &lhs.kind else { return None };
        let [Subscript::Expr(value)] = &args[..] else { return None };
        if name.key() != self.key {
            return None;
        }
        match self.form(value)? {
            (linear, Some(at)) if at == level => Some(without(&linear, &self.stack[level].var)),
            _ => None,
        }
    }

    /// Whether every element of `key` that `expr` reads was written before
    /// in this iteration.
    fn reads_covered(&self, expr: &Expr) -> bool {
        match &expr.kind {
            ExprKind::Name(name) => name.key() != self.key,
            ExprKind::Ref { name, args } => {
                let inner = args.iter().all(|arg| match arg {
                    Subscript::Expr(value) | Subscript::Keyword { value, .. } => self.reads_covered(value),
                    Subscript::Range { lo, hi, stride, .. } => {
                        [lo, hi, stride].into_iter().flatten().all(|it| self.reads_covered(it))
                    }
                    Subscript::Star(_) => true,
                });
                if !inner || name.key() != self.key {
                    return inner;
                }
                let [Subscript::Expr(value)] = &args[..] else { return false };
                self.element_covered(value)
            }
            ExprKind::Unary { operand, .. } | ExprKind::Paren(operand) => self.reads_covered(operand),
            ExprKind::Binary { lhs, rhs, .. } => self.reads_covered(lhs) && self.reads_covered(rhs),
            ExprKind::Other(items) => items.iter().all(|it| self.reads_covered(it)),
            ExprKind::Int(_) | ExprKind::Literal(_) => true,
        }
    }

    /// Whether the element `key(subscript)` read here was written before.
    fn element_covered(&self, subscript: &Expr) -> bool {
        let Some((linear, along)) = self.form(subscript) else { return false };
        let Some(level) = along else { return self.points_covered(&linear, &linear) };
        let open = &self.stack[level];
        let offset = without(&linear, &open.var);
        // Written at the same index earlier in this iteration of the loop.
        if open.writes.iter().any(|(at, seen)| *seen && *at == offset) {
            return true;
        }
        // Written at an index `d` iterations back: the first `d` iterations
        // read what was written before the loop.
        if let Some((first, step)) = &open.first {
            let back = open.writes.iter().filter_map(|(at, _)| difference(&offset, at)).find(|d| d * step < 0);
            if let Some(back) = back {
                let start = add(first, &offset);
                let end = add(&start, &Linear::constant(step * (back.abs() - 1)));
                let (lo, hi) = if *step > 0 { (start, end) } else { (end, start) };
                if self.points_covered(&lo, &hi) {
                    return true;
                }
            }
        }
        let Some((lo, hi)) = &open.range else { return false };
        self.points_covered(&add(lo, &offset), &add(hi, &offset))
    }

    /// Whether the elements `[lo, hi]` were all written before: a chain of
    /// covers from `lo`, each starting at or below the first element not yet
    /// covered (`[1, m]` after `[0, 0]` covers `[0, m]`).
    fn points_covered(&self, lo: &Linear, hi: &Linear) -> bool {
        let one = Linear::constant(1);
        // Every element of `[lo, next - 1]` is covered.
        let mut next = lo.clone();
        let mut used = vec![false; self.covers.len()];
        loop {
            if difference(&next, hi).is_some_and(|it| it >= 1) {
                return true;
            }
            // The cover starting at or below `next` that reaches furthest
            // by a known amount, else one whose end is not comparable.
            let mut best: Option<(usize, Option<i64>)> = None;
            for (at, cover) in self.covers.iter().enumerate() {
                if used[at] || difference(&next, &cover.lo).is_none_or(|it| it < 0) {
                    continue;
                }
                let gain = difference(&add(&cover.hi, &one), &next);
                if gain.is_some_and(|it| it <= 0) {
                    continue;
                }
                let better = match (best, gain) {
                    (None, _) => true,
                    (Some((_, Some(old))), Some(new)) => new > old,
                    (Some((_, None)), Some(_)) => true,
                    _ => false,
                };
                if better {
                    best = Some((at, gain));
                }
            }
            // The union of `[lo, next - 1]` and `[c.lo, c.hi]` with
            // `c.lo <= next` holds `[lo, c.hi]` whatever `c.hi` is.
            let Some((at, _)) = best else { return false };
            used[at] = true;
            next = add(&self.covers[at].hi, &one);
        }
    }
}

/// `a - b` when it is a constant.
fn difference(a: &Linear, b: &Linear) -> Option<i64> {
    let nonzero =
        |it: &Linear| it.vars().filter(|(_, coef)| *coef != 0).map(|(k, c)| (k.to_string(), c)).collect::<Vec<_>>();
    (nonzero(a) == nonzero(b)).then(|| a.constant - b.constant)
}

fn add(a: &Linear, b: &Linear) -> Linear {
    let mut sum = a.clone();
    for (key, coef) in b.vars() {
        *sum.coefs.entry(key.to_string()).or_insert(0) += coef;
    }
    sum.coefs.retain(|_, coef| *coef != 0);
    sum.constant += b.constant;
    sum
}

/// `linear` without its term in `var`.
fn without(linear: &Linear, var: &str) -> Linear {
    let mut rest = linear.clone();
    rest.coefs.remove(var);
    rest
}
