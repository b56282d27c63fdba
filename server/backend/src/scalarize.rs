//! A rewriting pass (run by `hoist::rewrite`): an array assignment inside a
//! DO loop whose left side is a section of a distributed array
//! (`r(:, i, j, k) = u(:, i, j, k+1) - 2 * u(:, i, j, k)`, solver codes'
//! component dimension) becomes a DO loop over the section's elements
//! (`do hpf_s1 = 1, 5; r(hpf_s1, i, j, k) = ...; end do`), in every unit
//! with executable statements: the main program, and subroutines and
//! functions (external, module and internal) that assign distributed
//! dummies, module arrays, COMMON blocks made modules or their host's
//! arrays, as NPB-style solvers do (`subroutine compute_rhs`). The nest
//! around it is then a nest of element assignments, which the
//! owner-computes, grid and fallback rules plan with one fetch before the
//! nest; an array assignment inside a nest kept a nest on a 2-D grid on
//! rank 0 and made a nest on one distributed dimension move a slice per
//! iteration.
//!
//! The loop means what the assignment means when the right side reads the
//! left side's array only at the left side's own section (the same
//! subscripts) or at a section disjoint from it that differs from it along
//! dimensions the array does not distribute only (a dimension where both
//! take a scalar subscript, the two differing by a nonzero constant:
//! `u(:, :, k) = u(:, :, k) + 0.5 * u(:, :, k-1)` on `(BLOCK, BLOCK, *)`,
//! a recurrence along K that each process runs on its own elements in
//! order; along a distributed dimension the slice-moving rules do better
//! than a fetch per element), calls elemental intrinsics only,
//! and every array it reads is a section with as many triplets as the
//! left side or a whole array of that rank (conformable, as the program
//! must be); triplet strides are integer constants and omitted bounds are
//! declared ones. Anything else stays as written.
//!
//! Fixed form (`.f`, `.for`) is read through its normalised text
//! (`syntax::parser_text`: same offsets, continuation marks as `&`): the
//! statement's continuation lines are joined, and the loops and the
//! statement are written again as fixed-form lines within the line length,
//! continued in column 6 where they are longer (at a blank or after a
//! comma, never inside a token); a statement that holds a character
//! literal, or that cannot be broken so, stays as written.

use analysis::model::{flatten_units, Model, SymbolId, UnitId};
use analysis::FileAnalysis;
use syntax::{Expr, ExprKind, SourceForm, Stmt, StmtKind, Subscript, TextRange};

use crate::assign::{Constants, ELEMENTAL};

/// The edits (range, replacement) that turn the array assignments inside
/// DO loops of every unit into loops, or `None` when there is none.
pub(crate) fn scalarize(analysis: &FileAnalysis, text: &str) -> Option<Vec<(TextRange, String)>> {
    let file = &analysis.file;
    let normalised = syntax::parser_text(text, file.form);
    let line_end = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut edits = Vec::new();
    for (unit_id, (unit, _)) in flatten_units(file).into_iter().enumerate() {
        if unit.body.is_empty() {
            continue;
        }
        let mut scalarizer =
            Scalarizer { model: &analysis.model, unit: unit_id, text: &normalised, form: file.form, most_loops: 0 };
        let mut unit_edits = Vec::new();
        // (statement, the variables of the counted DO loops around it)
        let mut stack: Vec<(&Stmt, Vec<String>)> = unit.body.iter().map(|it| (it, Vec::new())).collect();
        while let Some((stmt, indices)) = stack.pop() {
            match &stmt.kind {
                StmtKind::Assign { lhs, rhs } if !indices.is_empty() => {
                    if let Some(edit) = scalarizer.loops(stmt, lhs, rhs, &indices, line_end) {
                        unit_edits.push(edit);
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
        if unit_edits.is_empty() {
            continue;
        }
        let names: Vec<String> = (1..=scalarizer.most_loops).map(|it| scalarizer.index_name(it)).collect();
        let Some(declarations_at) = declarations_end(unit, &normalised) else { continue };
        let declaration = match file.form {
            SourceForm::Free => format!("  integer :: {}{line_end}", names.join(", ")),
            SourceForm::Fixed { .. } => format!("      integer {}{line_end}", names.join(", ")),
        };
        edits.extend(unit_edits);
        edits.push((TextRange::empty(declarations_at), declaration));
    }
    if edits.is_empty() {
        return None;
    }
    edits.sort_by_key(|it| (it.0.start, it.0.end));
    Some(edits)
}

/// The start of the line after the specification part's last statement
/// (declarations, directives, USE and IMPLICIT statements, or the unit's
/// header when there is none), where a declaration of the loops' indices goes.
pub(crate) fn declarations_end(unit: &syntax::Unit, text: &str) -> Option<usize> {
    let mut last = unit
        .decls
        .iter()
        .map(|it| it.range.end)
        .chain(unit.directives.iter().map(|it| it.range.end))
        .chain(unit.uses.iter().map(|it| it.range.end))
        .chain([unit.header.end])
        .filter(|it| *it <= unit.execution_start)
        .max()?;
    // IMPLICIT statements have no range: the lines that start with IMPLICIT
    // between there and the first executable statement.
    let mut at = next_statement_line(text, last)?;
    while at < unit.execution_start {
        let line_end = text[at..].find('\n').map_or(text.len(), |it| at + it);
        let line = text[at..line_end].trim_start().to_ascii_lowercase();
        if line.starts_with("implicit") {
            last = line_end;
        }
        at = line_end + 1;
    }
    next_statement_line(text, last)
}

/// The start of the line after the statement at `at` ends, in the parser's
/// text (free form, or fixed form normalised): after its continuation lines.
fn next_statement_line(text: &str, at: usize) -> Option<usize> {
    // (A range may end after its line's terminator.)
    let at = text[..at].trim_end().len();
    let mut line_start = text[..at].rfind('\n').map_or(0, |it| it + 1);
    loop {
        let line_end = text[line_start..].find('\n').map(|it| line_start + it)?;
        let code = text[line_start..line_end].split('!').next().unwrap_or("").trim_end();
        if !code.ends_with('&') {
            return Some(line_end + 1);
        }
        line_start = line_end + 1;
    }
}

struct Scalarizer<'a> {
    model: &'a Model,
    unit: UnitId,
    /// The text the parser read (fixed form normalised: same offsets).
    text: &'a str,
    form: SourceForm,
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

    /// The text at `range` as one line: in fixed form, its continuations joined.
    fn written(&self, range: TextRange) -> String {
        let text = &self.text[range.start..range.end];
        match self.form {
            SourceForm::Free => text.to_string(),
            SourceForm::Fixed { .. } => join_continuations(text),
        }
    }

    /// `expr` as written, in parentheses unless it is a name or a number.
    fn source(&self, expr: &Expr) -> String {
        let written = self.written(expr.range);
        match expr.kind {
            ExprKind::Int(_) | ExprKind::Name(_) => written,
            _ => format!("({written})"),
        }
    }

    /// The loops that assign what `lhs = rhs` assigns, or `None` when the
    /// statement stays as written.
    fn loops(
        &mut self,
        stmt: &Stmt,
        lhs: &Expr,
        rhs: &Expr,
        indices: &[String],
        line_end: &str,
    ) -> Option<(TextRange, String)> {
        // The statement alone on its line: a label, a `;` or a logical IF
        // around it would not take a loop in its place.
        let line_start = self.text[..stmt.range.start].rfind('\n').map_or(0, |it| it + 1);
        let indent = &self.text[line_start..stmt.range.start];
        if !indent.chars().all(|it| it == ' ' || it == '\t') {
            return None;
        }
        let rest_of_line = self.text[stmt.range.end..].split('\n').next().unwrap_or("");
        let rest_of_line = rest_of_line.strip_suffix('\r').unwrap_or(rest_of_line);
        if !rest_of_line.trim().is_empty() && !rest_of_line.trim_start().starts_with('!') {
            return None;
        }
        // Fixed form: no character literal (a continuation inside one would
        // keep its blanks), and the replaced text runs to the end of the
        // line (a comment, or the blanks and sequence numbers past the line
        // length, would not stay beyond the last column).
        let mut range = stmt.range;
        if self.form.is_fixed() {
            if self.text[stmt.range.start..stmt.range.end].contains(['\'', '"']) {
                return None;
            }
            range = TextRange::new(stmt.range.start, stmt.range.end + rest_of_line.len());
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
        self.elementwise(rhs, home, lhs, &triplets, &names, &mut edits)?;
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
        let depth = triplets.len();
        let mut lines = Vec::new();
        for (level, position) in (0..depth).rev().enumerate() {
            let triplet = &triplets[position];
            let mut line = format!("do {} = {}, {}", names[position], triplet.lo, triplet.hi);
            if triplet.stride != 1 {
                line.push_str(&format!(", {}", triplet.stride));
            }
            lines.push((level, line));
        }
        match self.form {
            SourceForm::Free => lines.push((depth, body)),
            SourceForm::Fixed { .. } => lines.push((depth, join_continuations(&body))),
        }
        lines.extend((0..depth).rev().map(|level| (level, "end do".to_string())));
        let out = match self.form {
            SourceForm::Free => {
                let mut out = String::new();
                for (number, (level, line)) in lines.iter().enumerate() {
                    if number > 0 {
                        out.push_str(line_end);
                        out.push_str(indent);
                    }
                    out.push_str(&format!("{}{line}", "  ".repeat(*level)));
                }
                out
            }
            SourceForm::Fixed { line_length } => {
                // The statement field's indentation: columns past 6 (a tab in
                // the label field reaches column 7).
                let width: usize = indent.chars().map(|it| if it == '\t' { 6 } else { 1 }).sum();
                let margin = " ".repeat(width.max(6) - 6);
                let mut out = String::new();
                for (number, (level, line)) in lines.iter().enumerate() {
                    let prefix = format!("      {margin}{}", "  ".repeat(*level));
                    let wrapped = fixed_lines(&prefix, line, line_length, line_end)?;
                    // The first line's label field and indentation stay the user's.
                    out.push_str(if number == 0 { &wrapped[width.max(6)..] } else { &wrapped });
                    if number + 1 < lines.len() {
                        out.push_str(line_end);
                    }
                }
                out
            }
        };
        Some((range, out))
    }

    /// A reference as compared with the left side: its text without blanks, in lower case.
    fn key(&self, expr: &Expr) -> String {
        self.written(expr.range).chars().filter(|it| !it.is_whitespace()).collect::<String>().to_ascii_lowercase()
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
        target: &Expr,
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
                Some(id) if id == home && !self.disjoint(home, target, expr) => {
                    // The left side's own elements only.
                    if self.key(expr) != self.key(target) {
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
                    // A section conformable with the left side's, or one element.
                    (position == triplets.len() || position == 0).then_some(())
                }
                None if self.elemental_intrinsic(name) => {
                    for arg in args {
                        let Subscript::Expr(arg) = arg else { return None };
                        self.elementwise(arg, home, target, triplets, names, edits)?;
                    }
                    Some(())
                }
                None => None,
            },
            ExprKind::Unary { operand, .. } => self.elementwise(operand, home, target, triplets, names, edits),
            ExprKind::Binary { lhs, rhs, .. } => {
                self.elementwise(lhs, home, target, triplets, names, edits)?;
                self.elementwise(rhs, home, target, triplets, names, edits)
            }
            ExprKind::Paren(inner) => self.elementwise(inner, home, target, triplets, names, edits),
            ExprKind::Other(_) => None,
        }
    }

    /// Whether the sections `a` and `b` of the array `home` provably share
    /// no element, and differ along dimensions it does not distribute only:
    /// along some dimension both take a scalar subscript, the two differing
    /// by a nonzero constant (`q(:, i, j, k)` and `q(:, i, j, k-1)` with K
    /// not distributed). The loops then read elements the statement does
    /// not assign, on the same process; a section read across a distributed
    /// dimension (`a(j, 2:m)` from `a(j+1, 1:m-1)`) is left to the rules
    /// that move it as one slice.
    fn disjoint(&self, home: SymbolId, a: &Expr, b: &Expr) -> bool {
        let (ExprKind::Ref { args: a, .. }, ExprKind::Ref { args: b, .. }) = (&a.kind, &b.kind) else {
            return false;
        };
        if a.len() != b.len() {
            return false;
        }
        let distributed = crate::hoist::distributed_dims(self.model, home);
        let text = |it: &Subscript| -> String {
            self.written(it.range()).chars().filter(|it| !it.is_whitespace()).collect::<String>().to_ascii_lowercase()
        };
        let constants = Constants { model: self.model, unit: self.unit };
        let is_var = |_: &str| true;
        let mut apart = false;
        for (dim, (a, b)) in a.iter().zip(b).enumerate() {
            if text(a) == text(b) {
                continue;
            }
            if distributed.get(dim).copied().unwrap_or(true) {
                return false;
            }
            if let (Subscript::Expr(a), Subscript::Expr(b)) = (a, b) {
                if let (Ok(a), Ok(b)) =
                    (analysis::eval::linear(a, &is_var, &constants), analysis::eval::linear(b, &is_var, &constants))
                {
                    apart |= a.coefs == b.coefs && a.constant != b.constant;
                }
            }
        }
        apart
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

/// Fixed-form text (normalised: continuation marks are `&`) as one line:
/// each `&` that continues a line, the blanks before it, the comments and
/// line breaks after it and the next line's `&` in column 6 and the blanks
/// after it removed. The caller keeps character literals out.
fn join_continuations(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch != '&' {
            out.push(ch);
            continue;
        }
        loop {
            match chars.peek() {
                Some(' ' | '\t' | '\r' | '\n') => {
                    chars.next();
                }
                Some('!') => {
                    while chars.peek().is_some_and(|it| *it != '\n') {
                        chars.next();
                    }
                }
                _ => break,
            }
        }
        if chars.peek() == Some(&'&') {
            chars.next();
        }
        while chars.peek().is_some_and(|it| *it == ' ' || *it == '\t') {
            chars.next();
        }
        // Fixed form ignores blanks: the lines' statement fields join as they
        // are where a token may continue on the next line (`0` and `.75`),
        // with one blank between other characters.
        out.truncate(out.trim_end().len());
        let word = |it: char| it.is_alphanumeric() || it == '_' || it == '.';
        if !(out.chars().last().is_some_and(word) && chars.peek().is_some_and(|it| word(*it))) {
            out.push(' ');
        }
    }
    out
}

/// `line` as fixed-form lines of at most `line_length` columns: the first
/// after `prefix` (six blanks and the indentation), the others continued
/// with `&` in column 6, broken at a blank or after a comma. `None` when a
/// part has no such place within the line length.
fn fixed_lines(prefix: &str, line: &str, line_length: usize, line_end: &str) -> Option<String> {
    let mut out = prefix.to_string();
    let mut column = prefix.chars().count();
    let mut rest = line.trim();
    loop {
        let room = line_length.saturating_sub(column);
        if rest.chars().count() <= room {
            out.push_str(rest);
            return Some(out);
        }
        // The last place to break within `room` characters.
        let chars: Vec<(usize, char)> = rest.char_indices().collect();
        let mut cut = None;
        for position in 1..chars.len().min(room + 1) {
            let (offset, ch) = chars[position];
            let previous = chars[position - 1].1;
            if ch == ' ' || previous == ',' || previous == ' ' {
                cut = Some(offset);
            }
        }
        let cut = cut?;
        out.push_str(rest[..cut].trim_end());
        out.push_str(line_end);
        out.push_str("     &  ");
        column = 8;
        rest = rest[cut..].trim_start();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Continuations in the normalised text: after a blank, beyond the
    /// line length, in place of a comment's `!` (comment lines between),
    /// and in place of the line terminator inside a token.
    #[test]
    fn fixed_form_continuations_join_into_one_line() {
        let text = "A(:, I, &\n     &K) + 0&     &.75 * B    &! note\n!comment line\n     &   + 1";
        assert_eq!(join_continuations(text), "A(:, I, K) + 0.75 * B + 1");
        let crlf = "X(:, K)&\r\n     & * 2";
        assert_eq!(join_continuations(crlf), "X(:, K) * 2");
    }

    /// Lines longer than the line length continue in column 6, broken at a
    /// blank or after a comma; a part with no such place is refused.
    #[test]
    fn fixed_form_lines_break_at_blanks_or_commas() {
        let line = "R(hpf_s1, I, K) = U(hpf_s1, I, K+1) - 2.0D0 * U(hpf_s1, I, K) + U(hpf_s1, I, K-1)";
        let lines = fixed_lines("            ", line, 72, "\n").expect("broken");
        assert!(lines.lines().all(|it| it.len() <= 72), "{lines}");
        assert!(lines.lines().skip(1).all(|it| it.starts_with("     &  ")), "{lines}");
        let joined: String = lines.lines().map(|it| it.trim_start_matches("     &")).collect::<Vec<_>>().join(" ");
        assert_eq!(joined.split_whitespace().collect::<String>(), line.split_whitespace().collect::<String>());
        assert_eq!(fixed_lines("      ", &"X".repeat(80), 72, "\n"), None);
    }
}
