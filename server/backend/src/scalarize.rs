//! A rewriting pass (run by `hoist::rewrite`): an array assignment inside a
//! DO loop of the main program whose left side is a section of a
//! distributed array (`r(:, i, j, k) = u(:, i, j, k+1) - 2 * u(:, i, j, k)`,
//! solver codes' component dimension) becomes a DO loop over the section's
//! elements (`do hpf_s1 = 1, 5; r(hpf_s1, i, j, k) = ...; end do`). The nest
//! around it is then a nest of element assignments, which the
//! owner-computes, grid and fallback rules plan with one fetch before the
//! nest; an array assignment inside a nest kept a nest on a 2-D grid on
//! rank 0 and made a nest on one distributed dimension move a slice per
//! iteration.
//!
//! The loop means what the assignment means when the right side reads the
//! left side's array only at the left side's own section (the same
//! subscripts), calls elemental intrinsics only, and every array it reads
//! is a section with as many triplets as the left side or a whole array of
//! that rank (conformable, as the program must be); triplet strides are
//! integer constants and omitted bounds are declared ones. Anything else
//! stays as written. Free form only (fixed form would have to fit its
//! lines into 72 columns).

use analysis::model::{flatten_units, Model, SymbolId, UnitId};
use analysis::FileAnalysis;
use syntax::{Expr, ExprKind, SourceForm, Stmt, StmtKind, Subscript, TextRange, UnitKind};

use crate::assign::{Constants, ELEMENTAL};

/// The edits (range, replacement) that turn the main program's array
/// assignments inside DO loops into loops, or `None` when there is none.
pub(crate) fn scalarize(analysis: &FileAnalysis, text: &str) -> Option<Vec<(TextRange, String)>> {
    if analysis.file.form != SourceForm::Free {
        return None;
    }
    let file = &analysis.file;
    let unit = file.units.iter().map(|it| &**it).find(|it| it.kind == UnitKind::Program)?;
    let unit_id = flatten_units(file).iter().position(|(it, _)| std::ptr::eq(*it, unit))?;
    let line_end = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut scalarizer = Scalarizer { model: &analysis.model, unit: unit_id, text, most_loops: 0 };
    let mut edits = Vec::new();
    // (statement, the variables of the counted DO loops around it)
    let mut stack: Vec<(&Stmt, Vec<String>)> = unit.body.iter().map(|it| (it, Vec::new())).collect();
    while let Some((stmt, indices)) = stack.pop() {
        match &stmt.kind {
            StmtKind::Assign { lhs, rhs } if !indices.is_empty() => {
                if let Some(loops) = scalarizer.loops(stmt, lhs, rhs, &indices, line_end) {
                    edits.push((stmt.range, loops));
                }
            }
            // WHERE and FORALL bodies are array assignments of their own.
            StmtKind::Where { .. } | StmtKind::Forall { .. } => {}
            StmtKind::Do { control: Some(control), .. } => {
                let mut inner = indices.clone();
                inner.push(control.var.key());
                stack.extend(stmt.children().into_iter().map(|it| (it, inner.clone())));
            }
            _ => stack.extend(stmt.children().into_iter().map(|it| (it, indices.clone()))),
        }
    }
    if edits.is_empty() {
        return None;
    }
    let names: Vec<String> = (1..=scalarizer.most_loops).map(|it| scalarizer.index_name(it)).collect();
    let last = unit
        .decls
        .iter()
        .map(|it| it.range.end)
        .chain(unit.directives.iter().map(|it| it.range.end))
        .filter(|it| *it <= unit.execution_start)
        .max()?;
    let declarations_at = text[last..].find('\n').map(|it| last + it + 1)?;
    edits.push((TextRange::empty(declarations_at), format!("  integer :: {}{line_end}", names.join(", "))));
    edits.sort_by_key(|it| (it.0.start, it.0.end));
    Some(edits)
}

struct Scalarizer<'a> {
    model: &'a Model,
    unit: UnitId,
    text: &'a str,
    /// The deepest loop nest made: how many index variables to declare.
    most_loops: usize,
}

/// One triplet of the left side: its bounds as Fortran text and its stride.
struct Triplet {
    lo: String,
    hi: String,
    stride: i64,
    /// The lower bound's value, when it folds.
    lo_value: Option<i64>,
}

impl Scalarizer<'_> {
    /// The `index`-th loop variable (1-based), a name the program does not use.
    fn index_name(&self, index: usize) -> String {
        let lower = self.text.to_ascii_lowercase();
        let mut suffix = String::new();
        loop {
            let name = format!("hpf_s{index}{suffix}");
            if self.model.lookup(self.unit, &name).is_none() && !lower.contains(&name) {
                return name;
            }
            suffix.push('x');
        }
    }

    fn array(&self, name: &syntax::Name) -> Option<SymbolId> {
        let id = self.model.lookup(self.unit, &name.key())?;
        self.model.symbol(id).is_array().then_some(id)
    }

    fn value(&self, expr: &Expr) -> Option<i64> {
        analysis::eval::eval_int(expr, &Constants { model: self.model, unit: self.unit }).ok()
    }

    /// `expr` as written, in parentheses unless it is a name or a number.
    fn source(&self, expr: &Expr) -> String {
        let written = &self.text[expr.range.start..expr.range.end];
        match expr.kind {
            ExprKind::Int(_) | ExprKind::Name(_) => written.to_string(),
            _ => format!("({written})"),
        }
    }

    /// The loops that assign what `lhs = rhs` assigns, or `None` when the
    /// statement stays as written.
    fn loops(&mut self, stmt: &Stmt, lhs: &Expr, rhs: &Expr, indices: &[String], line_end: &str) -> Option<String> {
        // The statement alone on its line: a label, a `;` or a logical IF
        // around it would not take a loop in its place.
        let line_start = self.text[..stmt.range.start].rfind('\n').map_or(0, |it| it + 1);
        let indent = &self.text[line_start..stmt.range.start];
        if !indent.chars().all(|it| it == ' ' || it == '\t') {
            return None;
        }
        let rest_of_line = self.text[stmt.range.end..].split('\n').next().unwrap_or("");
        if !rest_of_line.trim().is_empty() && !rest_of_line.trim_start().starts_with('!') {
            return None;
        }
        let ExprKind::Ref { name, args } = &lhs.kind else { return None };
        let home = self.array(name)?;
        self.model.distribution_of(home)?;
        let shape = &self.model.symbol(home).shape;
        if args.len() != shape.len() {
            return None;
        }
        let mut triplets = Vec::new();
        let mut lhs_edits = Vec::new();
        // Only the sections a loop around them takes at its index, one per
        // iteration (`r(:, i, j, k)`): a section the loops do not move
        // (`u(1:n, 1:n) = unew(1:n, 1:n)` in a time loop) is planned as
        // an array assignment already.
        let mut at_loop_index = false;
        for (dim, arg) in args.iter().enumerate() {
            match arg {
                Subscript::Expr(expr) if self.scalar(expr, Some(home)) => {
                    at_loop_index |= mentions(expr, indices);
                }
                Subscript::Range { lo, hi, stride, range } => {
                    let stride = match stride {
                        Some(stride) => self.value(stride).filter(|it| *it != 0)?,
                        None => 1,
                    };
                    let declared = &shape[dim];
                    let (lo_text, lo_value) = match lo {
                        Some(lo) => (self.source(lo), self.value(lo)),
                        None => {
                            let value = declared.lo.known()?;
                            (value.to_string(), Some(value))
                        }
                    };
                    let hi_text = match hi {
                        Some(hi) => self.source(hi),
                        None => declared.hi.known()?.to_string(),
                    };
                    lhs_edits.push((*range, triplets.len()));
                    triplets.push(Triplet { lo: lo_text, hi: hi_text, stride, lo_value });
                }
                _ => return None,
            }
        }
        if triplets.is_empty() || !at_loop_index {
            return None;
        }
        let names: Vec<String> = (1..=triplets.len()).map(|it| self.index_name(it)).collect();
        let mut edits: Vec<(TextRange, String)> =
            lhs_edits.into_iter().map(|(range, position)| (range, names[position].clone())).collect();
        let lhs_key = self.key(lhs);
        self.elementwise(rhs, home, &lhs_key, &triplets, &names, &mut edits)?;
        self.most_loops = self.most_loops.max(triplets.len());
        // The statement with its sections replaced by elements.
        edits.sort_by_key(|it| it.0.start);
        let mut body = String::new();
        let mut at = stmt.range.start;
        for (range, replacement) in &edits {
            body.push_str(&self.text[at..range.start]);
            body.push_str(replacement);
            at = range.end;
        }
        body.push_str(&self.text[at..stmt.range.end]);
        // The first triplet innermost: Fortran's element order.
        let mut out = String::new();
        let depth = triplets.len();
        for (level, position) in (0..depth).rev().enumerate() {
            let triplet = &triplets[position];
            let pad = if level == 0 { String::new() } else { format!("{indent}{}", "  ".repeat(level)) };
            out.push_str(&format!("{pad}do {} = {}, {}", names[position], triplet.lo, triplet.hi));
            if triplet.stride != 1 {
                out.push_str(&format!(", {}", triplet.stride));
            }
            out.push_str(line_end);
        }
        out.push_str(&format!("{indent}{}{body}{line_end}", "  ".repeat(depth)));
        for level in (0..depth).rev() {
            let pad = format!("{indent}{}", "  ".repeat(level));
            out.push_str(&format!("{pad}end do"));
            if level > 0 {
                out.push_str(line_end);
            }
        }
        Some(out)
    }

    /// A reference as compared with the left side: its text without blanks, in lower case.
    fn key(&self, expr: &Expr) -> String {
        self.text[expr.range.start..expr.range.end]
            .chars()
            .filter(|it| !it.is_whitespace())
            .collect::<String>()
            .to_ascii_lowercase()
    }

    /// Whether `expr` is a scalar the loops may evaluate at every element:
    /// no section, no whole array, no call but elemental intrinsics, and no
    /// read of `home`, the array the loops assign.
    fn scalar(&self, expr: &Expr, home: Option<SymbolId>) -> bool {
        match &expr.kind {
            ExprKind::Int(_) | ExprKind::Literal(_) => true,
            ExprKind::Name(name) => match self.model.lookup(self.unit, &name.key()) {
                Some(id) => !self.model.symbol(id).is_array(),
                None => true,
            },
            ExprKind::Ref { name, args } => {
                let subscripts_scalar = args.iter().all(|it| match it {
                    Subscript::Expr(expr) => self.scalar(expr, home),
                    _ => false,
                });
                match self.array(name) {
                    Some(id) => Some(id) != home && subscripts_scalar,
                    None => self.elemental_intrinsic(name) && subscripts_scalar,
                }
            }
            ExprKind::Unary { operand, .. } => self.scalar(operand, home),
            ExprKind::Binary { lhs, rhs, .. } => self.scalar(lhs, home) && self.scalar(rhs, home),
            ExprKind::Paren(inner) => self.scalar(inner, home),
            ExprKind::Other(_) => false,
        }
    }

    fn elemental_intrinsic(&self, name: &syntax::Name) -> bool {
        let key = name.key();
        self.model.lookup(self.unit, &key).is_none() && ELEMENTAL.contains(&key.as_str())
    }

    /// Collects in `edits` what makes `expr` the element of the loops'
    /// indices `names`: each section's triplets become subscripts, each
    /// whole array an element. `None` when `expr` is not elementwise over
    /// the left side's sections `triplets`.
    fn elementwise(
        &self,
        expr: &Expr,
        home: SymbolId,
        lhs_key: &str,
        triplets: &[Triplet],
        names: &[String],
        edits: &mut Vec<(TextRange, String)>,
    ) -> Option<()> {
        match &expr.kind {
            ExprKind::Int(_) | ExprKind::Literal(_) => Some(()),
            ExprKind::Name(name) => match self.array(name) {
                None => Some(()),
                Some(id) => {
                    let shape = &self.model.symbol(id).shape;
                    if id == home || shape.len() != triplets.len() {
                        return None;
                    }
                    let mut subscripts = Vec::new();
                    for (position, dim) in shape.iter().enumerate() {
                        let lo = dim.lo.known()?;
                        subscripts.push(self.subscript(
                            &triplets[position],
                            &names[position],
                            &lo.to_string(),
                            Some(lo),
                            1,
                        ));
                    }
                    edits.push((
                        name.range,
                        format!("{}({})", &self.text[name.range.start..name.range.end], subscripts.join(", ")),
                    ));
                    Some(())
                }
            },
            ExprKind::Ref { name, args } => match self.array(name) {
                Some(id) if id == home => {
                    // The left side's own elements only.
                    if self.key(expr) != lhs_key {
                        return None;
                    }
                    let mut position = 0;
                    for arg in args {
                        if let Subscript::Range { range, .. } = arg {
                            edits.push((*range, names[position].clone()));
                            position += 1;
                        }
                    }
                    Some(())
                }
                Some(id) => {
                    let shape = &self.model.symbol(id).shape;
                    let mut position = 0;
                    for (dim, arg) in args.iter().enumerate() {
                        match arg {
                            Subscript::Expr(expr) if self.scalar(expr, Some(home)) => {}
                            Subscript::Range { lo, stride, range, .. } => {
                                let triplet = triplets.get(position)?;
                                let stride = match stride {
                                    Some(stride) => self.value(stride).filter(|it| *it != 0)?,
                                    None => 1,
                                };
                                let (lo_text, lo_value) = match lo {
                                    Some(lo) => (self.source(lo), self.value(lo)),
                                    None => {
                                        let value = shape.get(dim)?.lo.known()?;
                                        (value.to_string(), Some(value))
                                    }
                                };
                                edits.push((
                                    *range,
                                    self.subscript(triplet, &names[position], &lo_text, lo_value, stride),
                                ));
                                position += 1;
                            }
                            _ => return None,
                        }
                    }
                    (position == triplets.len()).then_some(())
                }
                None if self.elemental_intrinsic(name) => {
                    for arg in args {
                        let Subscript::Expr(arg) = arg else { return None };
                        self.elementwise(arg, home, lhs_key, triplets, names, edits)?;
                    }
                    Some(())
                }
                None => None,
            },
            ExprKind::Unary { operand, .. } => self.elementwise(operand, home, lhs_key, triplets, names, edits),
            ExprKind::Binary { lhs, rhs, .. } => {
                self.elementwise(lhs, home, lhs_key, triplets, names, edits)?;
                self.elementwise(rhs, home, lhs_key, triplets, names, edits)
            }
            ExprKind::Paren(inner) => self.elementwise(inner, home, lhs_key, triplets, names, edits),
            ExprKind::Other(_) => None,
        }
    }

    /// The subscript of a section that starts at `lo` with `stride`, at the
    /// element the left side's `triplet` has at index `name`.
    fn subscript(&self, triplet: &Triplet, name: &str, lo: &str, lo_value: Option<i64>, stride: i64) -> String {
        if triplet.stride == 1 && stride == 1 {
            return match (lo_value, triplet.lo_value) {
                (Some(a), Some(b)) if a == b => name.to_string(),
                (Some(a), Some(b)) if a > b => format!("{name} + {}", a - b),
                (Some(a), Some(b)) => format!("{name} - {}", b - a),
                _ if lo == triplet.lo => name.to_string(),
                _ => format!("{name} + {lo} - {}", triplet.lo),
            };
        }
        // The position along the left side's section, times the stride.
        format!("{lo} + ({name} - {}) / ({}) * ({stride})", triplet.lo, triplet.stride)
    }
}

/// Whether `expr` reads one of the variables `names` (keys).
fn mentions(expr: &Expr, names: &[String]) -> bool {
    let mut stack = vec![expr];
    while let Some(expr) = stack.pop() {
        match &expr.kind {
            ExprKind::Name(name) if names.contains(&name.key()) => return true,
            ExprKind::Ref { args, .. } => stack.extend(args.iter().filter_map(Subscript::as_expr)),
            ExprKind::Unary { operand, .. } => stack.push(operand),
            ExprKind::Binary { lhs, rhs, .. } => stack.extend([&**lhs, &**rhs]),
            ExprKind::Paren(inner) => stack.push(inner),
            ExprKind::Other(inner) => stack.extend(inner.iter()),
            _ => {}
        }
    }
    false
}
