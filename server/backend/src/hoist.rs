//! CSHIFT, EOSHIFT and TRANSPOSE of whole distributed arrays inside
//! expressions (`u - cshift(u, -1)`, `where (cshift(cshift(a, i, 1), j, 2))`,
//! `b = transpose(a) - a`) become temporaries before the lowering: the
//! program is rewritten so that each such call is assigned to a new array
//! right before its statement (`hpf_t1 = cshift(u, -1)`, what `permute.rs`
//! runs as one all-to-all), and the statement reads the temporary. The
//! temporary is aligned with the statement's left side when it has the
//! left side's shape (the statement then reads it on its own elements),
//! else with the array shifted. Equal shifts share one temporary, so one
//! exchange: in one statement, and in the statements after it in its list
//! up to one that assigns the array shifted or a name in the shift (or is
//! not an assignment or output statement); a chain of CSHIFTs along
//! different dimensions shifts the distributed dimensions first (they
//! commute), so `cshift(cshift(p, -1, 1), -1, 2)` is a local shift of the
//! temporary of `cshift(p, -1, 2)`. A temporary that no later statement
//! reads is assigned anew by the next one that needs one of its shape and
//! layout (a first pass finds the last reads), so a time step's
//! temporaries take the memory of the most that one statement holds. An
//! assignment to a whole array whose CSHIFTs by constants go along a
//! dimension it does not distribute becomes the assignments of its sections
//! between the points where a shift wraps around, reading the arrays
//! shifted in place (`local_shift_sections`): only the shifts along
//! distributed dimensions need temporaries (their halos). The
//! rewritten program is analysed again and
//! lowered in place of the user's; the notes, errors and `--stats` lines
//! are mapped back to the user's text.
//!
//! An assignment of an implied-DO array constructor to a whole rank-1
//! distributed array (`idx = (/ (i, i = 1, n) /)`) becomes the FORALL that
//! means the same, which its owners run.
//!
//! References in PRINT and WRITE items to the file's functions that use
//! distributed arrays by host or use association are computed first into
//! scalars (`hpf_f1 = residual_norm()`), which every process evaluates with
//! the function's copy on the local parts (`procedures.rs`), where rank 0
//! alone would evaluate the item.
//!
//! Reductions to one value (SUM, PRODUCT, MAXVAL, MINVAL, DOT_PRODUCT,
//! COUNT, ANY, ALL; no DIM) of distributed data inside an assignment to a
//! distributed array or section, or inside the masks and right sides of a
//! WHERE that it does not assign (`e = e - sum(e) / n`, `x = x /
//! maxval(abs(x))`), are computed first into a scalar (`hpf_f1 = sum(e)`, a
//! reduction every process gets) where their type is certain and they read
//! no index of a DO loop around them: the assignment then runs on the
//! owners. Notes that name such a scalar name the user's text instead.
//! This one in every unit with executable statements, not the main program
//! only: external, module and internal subroutines and functions, on their
//! distributed dummies (their own DISTRIBUTE or ALIGN, INHERIT, or none:
//! the actual's mapping), module arrays and COMMON arrays (made module
//! arrays first), in free and fixed form; a copy of the procedure that
//! every process runs (`procedures.rs`) then computes the reduction in
//! parallel and assigns on the owners. (HPF_LOCAL procedures are local
//! Fortran, left as written.) Scalars are numbered across the file.
//!
//! IF conditions that read distributed arrays (`if (maxval(abs(un - u)) <
//! tol) exit`) are hoisted the same way into a logical scalar
//! (`hpf_b1 = ...`, a reduction every process gets), unless they read an
//! element of a distributed array at a subscript that reads the index of a
//! DO loop around them (`x(i)`, which its owner evaluates in an
//! owner-computes nest; `maxloc(x(lo:n), 1)` is hoisted): the IF then runs
//! on every process alike and does not keep its time loop on rank 0.
//!
//! Before the temporaries, sections that DO nests assign at their indices
//! become loops over their elements (`scalarize.rs`), and DO loops whose assignments write arrays on
//! different template cells are split into one loop per assignment
//! (`split_loops.rs`).
//!
//! A call is hoisted where evaluating it earlier means the same: in the
//! main program, from statements that begin their line (no label, not the
//! action of a logical IF), out of assignments, output items, CALL
//! arguments, IF conditions and WHERE masks and bodies (in other units,
//! reductions out of array assignments and WHEREs only). Out of a mask or
//! right side of a WHERE construct only when no assignment before it in the
//! construct assigns one of the arrays the call reads (the call then sits
//! before the construct). After a REALIGN or
//! REDISTRIBUTE, a temporary follows the array it is aligned with, as
//! every alignee does.

mod section_forall;

use analysis::model::{Model, SymbolKind, UnitId};

use crate::assign::Constants;
use analysis::FileAnalysis;
use syntax::{Expr, ExprKind, SourceForm, Stmt, StmtKind, Subscript, TextRange, UnitKind};

/// One rewriting pass's edits: each one's range in the pass's input and in
/// its output, in text order.
type Edits = Vec<(TextRange, TextRange)>;

/// What the temporaries' pass made: the text, its edits, the temporaries'
/// names, and the scalar temporaries with the user's text each stands for.
type HoistPass = (String, Edits, Vec<String>, Vec<(String, String)>);

/// The program with its temporaries.
pub(crate) struct Hoisted {
    pub(crate) text: String,
    /// Per rewriting pass, in order.
    passes: Vec<Edits>,
    /// Where the user's lines start.
    user_lines: Vec<usize>,
    temporaries: Vec<String>,
    /// Scalar temporaries (`hpf_f1`) and the user's text they stand for.
    scalars: Vec<(String, String)>,
    /// Notes on the user's text from the rewriting (remaps not followed).
    pub(crate) notes: Vec<crate::Note>,
    /// COMMON blocks with distributed arrays became modules: the user's
    /// program cannot be lowered without the rewriting.
    pub(crate) common: bool,
}

/// `range` of the text `passes` made, mapped back through them.
fn user_range_of(passes: &[Edits], range: TextRange) -> TextRange {
    let hoisted = Hoisted {
        text: String::new(),
        passes: passes.to_vec(),
        user_lines: Vec::new(),
        temporaries: Vec::new(),
        scalars: Vec::new(),
        notes: Vec::new(),
        common: false,
    };
    hoisted.user_range(range)
}

impl Hoisted {
    /// The offset of the user's text that `offset` of the rewritten text
    /// comes from; inserted text maps to where it was inserted.
    pub(crate) fn user_offset(&self, offset: usize) -> usize {
        self.passes.iter().rev().fold(offset, |offset, edits| {
            let after = edits.partition_point(|(_, new)| new.start <= offset);
            let Some((old, new)) = after.checked_sub(1).map(|it| edits[it]) else { return offset };
            if offset < new.end {
                old.start
            } else {
                offset - new.end + old.end
            }
        })
    }

    /// Whether `name` is one of the temporaries.
    pub(crate) fn is_temporary(&self, name: &str) -> bool {
        self.temporaries.iter().any(|it| it.eq_ignore_ascii_case(name))
    }

    /// `message` with the scalar temporaries it names replaced by the
    /// user's text they stand for (a note on `e = e - hpf_f1 / n` speaks
    /// of `sum(e)`).
    pub(crate) fn in_user_terms(&self, message: &str) -> String {
        let mut out = message.to_string();
        for (temp, text) in &self.scalars {
            let mut at = 0;
            while let Some(found) = out[at..].find(temp.as_str()).map(|it| it + at) {
                let end = found + temp.len();
                let word = |it: Option<char>| it.is_some_and(|it| it.is_ascii_alphanumeric() || it == '_');
                if word(out[..found].chars().next_back()) || word(out[end..].chars().next()) {
                    at = end;
                    continue;
                }
                let replacement = format!("`{text}` (computed first into a scalar)");
                out.replace_range(found..end, &replacement);
                at = found + replacement.len();
            }
        }
        out
    }

    /// The user's line (1-based) of `offset` of the rewritten text.
    pub(crate) fn user_line(&self, offset: usize) -> usize {
        self.user_lines.partition_point(|it| *it <= self.user_offset(offset))
    }

    pub(crate) fn user_range(&self, range: TextRange) -> TextRange {
        let start = self.user_offset(range.start);
        TextRange::new(start, self.user_offset(range.end).max(start))
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Transpose,
    Shift,
}

/// One call to hoist.
struct Call {
    temp: String,
    /// The right side of the temporary's assignment.
    assignment: String,
    /// The shape and type of the result.
    shape: Shape,
    /// What the temporary is aligned with.
    align_with: String,
    /// For a chain of shifts of a named array: the array and the shifts in
    /// the order applied (`p|cshift:-1:2|cshift:-1:1`, lower case, no
    /// blanks), by which equal shifts share one temporary.
    key: Option<String>,
}

/// One CSHIFT or EOSHIFT of a chain: the intrinsic, the text of SHIFT and
/// BOUNDARY, the shifted dimension (0-based).
#[derive(Clone)]
struct ShiftOp {
    intrinsic: &'static str,
    shift: String,
    boundary: Option<String>,
    dim: usize,
    /// SHIFT's value when it is a constant.
    value: Option<i64>,
    /// The user's text of the call before and after its array argument,
    /// when it is on one line.
    written: Option<(String, String)>,
}

impl ShiftOp {
    fn key(&self) -> String {
        let squeeze = |it: &str| it.chars().filter(|c| !c.is_whitespace()).collect::<String>().to_ascii_lowercase();
        let boundary = self.boundary.as_deref().map(squeeze).unwrap_or_default();
        format!("|{}:{}:{}:{}", self.intrinsic, squeeze(&self.shift), boundary, self.dim + 1)
    }

    /// The call on `array`: as the user wrote it, else with DIM written out.
    fn call(&self, array: &str) -> String {
        if let Some((before, after)) = &self.written {
            return format!("{before}{array}{after}");
        }
        let dim = self.dim + 1;
        match (&self.boundary, self.intrinsic) {
            (Some(boundary), _) => format!("eoshift({array}, {}, {boundary}, {dim})", self.shift),
            (None, "eoshift") => format!("eoshift({array}, {}, dim={dim})", self.shift),
            (None, _) => format!("cshift({array}, {}, {dim})", self.shift),
        }
    }
}

/// The declared shape and type of an array (or of a temporary).
#[derive(Clone)]
struct Shape {
    type_spec: String,
    bounds: Vec<(i64, i64)>,
}

impl Shape {
    fn extents(&self) -> Vec<i64> {
        self.bounds.iter().map(|(lo, hi)| hi - lo + 1).collect()
    }
}

struct Hoister<'a> {
    model: &'a Model,
    unit: UnitId,
    text: &'a str,
    form: SourceForm,
    calls: Vec<Call>,
    /// Declarations and directives of the temporaries.
    declarations: Vec<String>,
    /// Lines inserted before statements: (offset of the line, lines).
    before: Vec<(usize, String)>,
    /// The outermost hoisted calls of every statement (their text, the
    /// call), replaced by their temporaries.
    replaced: Vec<(TextRange, usize)>,
    /// Shift temporaries the statement at `next_statement` may read as they
    /// are: assigned before an earlier statement of its list, and nothing
    /// since assigns what they read.
    available: Vec<usize>,
    /// The start of the statement after the one last looked at, in its list.
    next_statement: Option<usize>,
    /// Per call: the last statement (`statement_count` then) that reads
    /// its temporary.
    reads: Vec<usize>,
    /// `reads` of a first pass: the temporaries free for reuse.
    last_reads: Option<Vec<usize>>,
    /// How many statements have been looked at.
    statement_count: usize,
    /// Text replaced as it stands: IF conditions by logical temporaries,
    /// function references by scalar ones, statements whole (FORALLs).
    replacements: Vec<(TextRange, String)>,
    /// The text's line terminator, for the inserted lines.
    line_end: &'static str,
    /// The file's functions that use distributed arrays by host or use
    /// association, and their result types: (name in lower case, type).
    functions: Vec<(String, String)>,
    /// Their references in output items, and reductions in array
    /// assignments, replaced by scalar temporaries.
    results: usize,
    /// Those temporaries and the user's text each stands for.
    scalars: Vec<(String, String)>,
    /// The FORALL indices `hpf_fi1`.. of section shifts (`section_forall.rs`).
    forall_indices: usize,
    /// A unit other than the main program: only reductions in array
    /// assignments and WHEREs are hoisted.
    reductions_only: bool,
    /// The indentation of the declarations of the temporaries.
    declaration_indent: String,
}

/// The user's program rewritten (inquiries of distributed arrays' bounds
/// and block sizes of remaps first, then the temporaries) and analysed again, or `None` when nothing
/// changes or the rewritten text does not analyse cleanly.
pub(crate) fn rewrite(analysis: &FileAnalysis, text: &str) -> Option<(Hoisted, FileAnalysis)> {
    let clean = |it: &FileAnalysis| !it.diagnostics.iter().any(|it| it.severity == syntax::Severity::Error);
    let mut passes = Vec::new();
    let mut current: Option<(String, FileAnalysis)> = None;
    // COMMON blocks with distributed arrays become modules first (`common_modules.rs`).
    let mut common = false;
    if let Ok(Some(edits)) = crate::common_modules::rewrite(analysis, text) {
        let (rewritten, edits) = apply(text, edits);
        let reanalysed = analysis.reanalyze(&rewritten);
        if !clean(&reanalysed) {
            return None;
        }
        passes.push(edits);
        current = Some((rewritten, reanalysed));
        common = true;
    }
    let (base_text, base) = current.as_ref().map_or((text, analysis), |(text, analysis)| (text.as_str(), analysis));
    let (remap_edits, remap_notes) = crate::remap_epochs::unfollowed_remaps(base, base_text);
    let notes: Vec<crate::Note> = remap_notes
        .into_iter()
        .map(|(range, message)| crate::Note { range: user_range_of(&passes, range), message })
        .collect();
    if let Some((rewritten, edits)) = inquiries(base, base_text, remap_edits) {
        let reanalysed = analysis.reanalyze(&rewritten);
        if !clean(&reanalysed) {
            return None;
        }
        passes.push(edits);
        current = Some((rewritten, reanalysed));
    }
    // Optional passes: one whose result does not analyse cleanly is left out.
    type OptionalPass = fn(&FileAnalysis, &str) -> Option<Vec<(TextRange, String)>>;
    let optional: [OptionalPass; 2] = [crate::scalarize::scalarize, crate::split_loops::split_loops];
    for pass in optional {
        let (base_text, base) = current.as_ref().map_or((text, analysis), |(text, analysis)| (text.as_str(), analysis));
        if let Some(edits) = pass(base, base_text) {
            let (rewritten, edits) = apply(base_text, edits);
            let reanalysed = analysis.reanalyze(&rewritten);
            if clean(&reanalysed) {
                passes.push(edits);
                current = Some((rewritten, reanalysed));
            }
        }
    }
    let (base_text, base) = current.as_ref().map_or((text, analysis), |(text, analysis)| (text.as_str(), analysis));
    let mut temporaries = Vec::new();
    let mut scalars = Vec::new();
    if let Some((rewritten, edits, temps, scalar_texts)) = hoist(base, base_text) {
        let reanalysed = analysis.reanalyze(&rewritten);
        if !clean(&reanalysed) {
            return None;
        }
        passes.push(edits);
        temporaries = temps;
        scalars = scalar_texts;
        current = Some((rewritten, reanalysed));
    }
    let (rewritten, reanalysed) = current?;
    let user_lines = std::iter::once(0).chain(text.match_indices('\n').map(|(at, _)| at + 1)).collect();
    Some((Hoisted { text: rewritten, passes, user_lines, temporaries, scalars, notes, common }, reanalysed))
}

/// `LBOUND(X, DIM)`, `UBOUND(X, DIM)` and `SIZE(X [, DIM])` of a
/// distributed array X with constant bounds, in any unit's statements,
/// replaced by their values: on a process they would be asked of its
/// local part (`DO I = LBOUND(A, 1), UBOUND(A, 1)` left I at the local
/// part's end). Returns the text and the edits (input range, output range).
fn inquiries(analysis: &FileAnalysis, text: &str, more: Vec<(TextRange, String)>) -> Option<(String, Edits)> {
    let model = &analysis.model;
    let mut edits: Vec<(TextRange, String)> = more;
    let units = analysis::model::flatten_units(&analysis.file);
    let main = units.iter().position(|it| it.0.kind == UnitKind::Program);
    for (unit_id, (unit, _)) in units.into_iter().enumerate() {
        let constants = Constants { model, unit: unit_id };
        // Of a distributed ALLOCATABLE array of the main program: the bounds
        // its ALLOCATE stored (`allocatable.rs`).
        let allocated = |expr: &Expr| -> Option<String> {
            let ExprKind::Ref { name, args } = &expr.kind else { return None };
            let which = name.key();
            if !["lbound", "ubound", "size"].contains(&which.as_str()) || model.lookup(unit_id, &which).is_some() {
                return None;
            }
            let (array, dim) = match &args[..] {
                [Subscript::Expr(array)] => (array, None),
                [Subscript::Expr(array), Subscript::Expr(dim)] => (array, Some(dim)),
                _ => return None,
            };
            let ExprKind::Name(array) = &array.kind else { return None };
            let id = model.lookup(unit_id, &array.key())?;
            let symbol = model.symbol(id);
            let deferred = !symbol.is_dummy
                && symbol.shape.iter().all(|it| it.lo == analysis::model::Bound::Assumed)
                && symbol.is_array();
            // The main program's arrays where it or its internal procedures
            // read them; module arrays in its own statements (it imports
            // their bounds).
            let of_module = model.units.get(id.unit).is_some_and(|it| it.kind == UnitKind::Module);
            let seen = Some(id.unit) == main || (of_module && Some(unit_id) == main);
            if !seen || !deferred || model.distribution_of(id).is_none() {
                return None;
            }
            let name = &symbol.name.text;
            let dim = match dim {
                Some(dim) => Some(
                    analysis::eval::eval_int(dim, &constants)
                        .ok()
                        .filter(|it| (1..=symbol.rank() as i64).contains(it))?,
                ),
                None => None,
            };
            match (which.as_str(), dim) {
                ("lbound", Some(k)) => Some(format!("hpf_lbs_{name}({k})")),
                ("ubound", Some(k)) => Some(format!("hpf_ubs_{name}({k})")),
                ("size", Some(k)) => Some(format!("max(0, hpf_ubs_{name}({k}) - hpf_lbs_{name}({k}) + 1)")),
                ("size", None) => Some(format!("product(max(0, hpf_ubs_{name} - hpf_lbs_{name} + 1))")),
                _ => None,
            }
        };
        let value = |expr: &Expr| -> Option<i64> {
            let ExprKind::Ref { name, args } = &expr.kind else { return None };
            let which = name.key();
            if !["lbound", "ubound", "size"].contains(&which.as_str()) || model.lookup(unit_id, &which).is_some() {
                return None;
            }
            let mut array = None;
            let mut dim = None;
            for (position, arg) in args.iter().enumerate() {
                match (position, arg) {
                    (0, Subscript::Expr(expr)) => array = Some(expr),
                    (1, Subscript::Expr(expr)) => dim = Some(expr),
                    (_, Subscript::Keyword { name, value }) if name.key() == "array" => array = Some(value),
                    (_, Subscript::Keyword { name, value }) if name.key() == "dim" => dim = Some(value),
                    _ => return None,
                }
            }
            let ExprKind::Name(array) = &array?.kind else { return None };
            let id = model.lookup(unit_id, &array.key())?;
            let symbol = model.symbol(id);
            if !symbol.is_array() || model.distribution_of(id).is_none() {
                return None;
            }
            let bounds: Vec<(i64, i64)> =
                symbol.shape.iter().map(|it| Some((it.lo.known()?, it.hi.known()?))).collect::<Option<_>>()?;
            let dim = match dim {
                Some(dim) => {
                    let dim = analysis::eval::eval_int(dim, &constants).ok()?;
                    Some(*bounds.get(usize::try_from(dim - 1).ok()?)?)
                }
                None => None,
            };
            match (which.as_str(), dim) {
                ("lbound", Some((lo, _))) => Some(lo),
                ("ubound", Some((_, hi))) => Some(hi),
                ("size", Some((lo, hi))) => Some((hi - lo + 1).max(0)),
                ("size", None) => Some(bounds.iter().map(|(lo, hi)| (hi - lo + 1).max(0)).product()),
                _ => None,
            }
        };
        let mut stmts: Vec<&Stmt> = unit.body.iter().collect();
        while let Some(stmt) = stmts.pop() {
            let mut exprs: Vec<&Expr> = statement_exprs(stmt);
            while let Some(expr) = exprs.pop() {
                match value(expr) {
                    Some(value) if value < 0 => edits.push((expr.range, format!("({value})"))),
                    Some(value) => edits.push((expr.range, value.to_string())),
                    None => match allocated(expr) {
                        Some(text) => edits.push((expr.range, text)),
                        None => push_children(expr, &mut exprs),
                    },
                }
            }
            stmts.extend(stmt.children());
        }
    }
    // Block sizes of remaps given by variables of plain value (`block_sizes.rs`).
    edits.extend(crate::block_sizes::known_block_sizes(analysis, text));
    if edits.is_empty() {
        return None;
    }
    edits.sort_by_key(|it| (it.0.start, it.0.end));
    edits.dedup_by_key(|it| it.0);
    if edits.windows(2).any(|it| it[1].0.start < it[0].0.end) {
        return None;
    }
    Some(apply(text, edits))
}

/// The expressions a statement holds itself (not those of the statements
/// inside it): DO bounds, conditions, masks, sides, arguments, items.
fn statement_exprs(stmt: &Stmt) -> Vec<&Expr> {
    fn control(it: &syntax::LoopControl) -> [Option<&Expr>; 3] {
        [Some(&it.lo), Some(&it.hi), it.step.as_ref()]
    }
    match &stmt.kind {
        StmtKind::Do { control: Some(it), .. } => control(it).into_iter().flatten().collect(),
        StmtKind::Do { control: None, .. } => Vec::new(),
        StmtKind::DoWhile { cond, .. } => cond.iter().collect(),
        StmtKind::Forall { specs, mask, .. } => {
            specs.iter().flat_map(|it| control(it).into_iter().flatten()).chain(mask.iter()).collect()
        }
        StmtKind::Assign { lhs, rhs } => vec![lhs, rhs],
        StmtKind::Where { mask, elsewhere, .. } => {
            mask.iter().chain(elsewhere.iter().filter_map(|it| it.0.as_ref())).collect()
        }
        StmtKind::If { branches } => branches.iter().filter_map(|it| it.0.as_ref()).collect(),
        StmtKind::Call { args, .. } => args.iter().collect(),
        StmtKind::Output { items } => items.iter().collect(),
        StmtKind::Other { exprs, .. } => exprs.iter().collect(),
    }
}

/// `text` with the edits (sorted, not overlapping) applied, and each
/// edit's range in `text` and in the result.
fn apply(text: &str, edits: Vec<(TextRange, String)>) -> (String, Edits) {
    let mut out = String::with_capacity(text.len() + 1024);
    let mut mapped = Vec::new();
    let mut at = 0;
    for (range, replacement) in edits {
        out.push_str(&text[at..range.start]);
        let start = out.len();
        out.push_str(&replacement);
        mapped.push((range, TextRange::new(start, out.len())));
        at = range.end;
    }
    out.push_str(&text[at..]);
    (out, mapped)
}

/// The program with temporaries, or `None` when nothing is hoisted: the
/// text, the edits, the temporaries' names. Other units with executable
/// statements (external, module and internal procedures) get their
/// reductions inside array assignments and WHEREs hoisted only: in a copy
/// that every process runs (`procedures.rs`) the assignment then runs on
/// the owners too.
fn hoist(analysis: &FileAnalysis, text: &str) -> Option<HoistPass> {
    let file = &analysis.file;
    let model = &analysis.model;
    let normalised = syntax::parser_text(text, file.form);
    let line_end = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut edits: Vec<(TextRange, String)> = Vec::new();
    let mut temporaries: Vec<String> = Vec::new();
    let mut scalars: Vec<(String, String)> = Vec::new();
    // Scalar temporaries are numbered across the file: a note names one by its name alone.
    let mut results = 0;
    for (unit_id, (unit, _)) in analysis::model::flatten_units(file).into_iter().enumerate() {
        let program = unit.kind == UnitKind::Program;
        // HPF_LOCAL bodies are local Fortran copied as written (`extrinsic.rs`).
        if unit.body.is_empty() || (!program && syntax::extrinsic_model(text, unit.header).is_some()) {
            continue;
        }
        let functions = if program { functions_using_distributed(analysis, text) } else { Vec::new() };
        let declaration_indent = match file.form {
            SourceForm::Fixed { .. } => "      ".to_string(),
            SourceForm::Free if program => "  ".to_string(),
            // A procedure's, as its statements are indented.
            SourceForm::Free => {
                let first = unit.body.first().map_or(0, |it| it.range.start);
                let line_start = text[..first].rfind('\n').map_or(0, |it| it + 1);
                text[line_start..first].chars().take_while(|it| *it == ' ' || *it == '\t').collect()
            }
        };
        let new = |last_reads: Option<Vec<usize>>| Hoister {
            model,
            unit: unit_id,
            text,
            form: file.form,
            calls: Vec::new(),
            declarations: Vec::new(),
            before: Vec::new(),
            replaced: Vec::new(),
            available: Vec::new(),
            next_statement: None,
            reads: Vec::new(),
            last_reads,
            statement_count: 0,
            replacements: Vec::new(),
            line_end,
            functions: functions.clone(),
            results,
            scalars: Vec::new(),
            forall_indices: 0,
            reductions_only: !program,
            declaration_indent: declaration_indent.clone(),
        };
        // A first pass finds where each temporary is read last; the second
        // assigns temporaries that nothing reads any more anew.
        let mut first = new(None);
        first.hoist_statements(unit);
        let mut hoister = new(Some(first.reads));
        hoister.hoist_statements(unit);
        if hoister.calls.is_empty() && hoister.replacements.is_empty() {
            continue;
        }
        let declarations_at = if program {
            // After the line of the specification part's last declaration or directive.
            unit.decls
                .iter()
                .map(|it| it.range.end)
                .chain(unit.directives.iter().map(|it| it.range.end))
                .filter(|it| *it <= unit.execution_start)
                .max()
                .and_then(|last| text[last..].find('\n').map(|it| last + it + 1))
        } else {
            crate::scalarize::declarations_end(unit, &normalised)
        };
        let Some(declarations_at) = declarations_at else { continue };
        match hoister.edits(declarations_at) {
            Some(unit_edits) => {
                edits.extend(unit_edits);
                let mut temps: Vec<String> = hoister.calls.iter().map(|it| it.temp.clone()).collect();
                temps.dedup();
                temporaries.extend(temps);
                scalars.extend(hoister.scalars);
                results = hoister.results;
            }
            // The main program's temporaries are all or nothing.
            None if program => return None,
            None => {}
        }
    }
    if edits.is_empty() {
        return None;
    }
    edits.sort_by_key(|it| (it.0.start, it.0.end));
    if edits.windows(2).any(|it| it[1].0.start < it[0].0.end) {
        return None;
    }
    let (text, mapped) = apply(text, edits);
    Some((text, mapped, temporaries, scalars))
}

impl Hoister<'_> {
    fn hoist_statements(&mut self, unit: &syntax::Unit) {
        // Statement lists, depth first (each statement of a list may get lines before it).
        // With the indices of the DO loops around them.
        // With the start of the next statement of the same list.
        type Pending<'s> = (&'s Stmt, Vec<String>, Option<usize>);
        fn list<'s>(body: &'s [Stmt], indices: &[String]) -> Vec<Pending<'s>> {
            let next = |at: usize| body.get(at + 1).map(|it| it.range.start);
            body.iter().enumerate().rev().map(|(at, it)| (it, indices.to_vec(), next(at))).collect()
        }
        let mut stack: Vec<Pending> = list(&unit.body, &[]);
        while let Some((stmt, indices, next)) = stack.pop() {
            if self.next_statement != Some(stmt.range.start) || !self.begins_line(stmt) {
                self.available.clear();
            }
            self.statement_count += 1;
            self.statement(stmt, &indices);
            self.after(stmt, next);
            match &stmt.kind {
                StmtKind::Do { body, control, .. } => {
                    let mut inner = indices.clone();
                    inner.extend(control.as_ref().map(|it| it.var.key()));
                    stack.extend(list(body, &inner));
                }
                StmtKind::DoWhile { body, .. } => stack.extend(list(body, &indices)),
                StmtKind::If { branches } => {
                    for branch in branches.iter().rev() {
                        stack.extend(list(&branch.1, &indices));
                    }
                }
                _ => {}
            }
        }
    }
}

impl Hoister<'_> {
    fn slice(&self, range: TextRange) -> &str {
        self.text.get(range.to_range()).unwrap_or("")
    }

    /// Whether `stmt` begins its line, or follows a `;` (no label before it).
    fn begins_line(&self, stmt: &Stmt) -> bool {
        let start = crate::statement_start(self.text, stmt.range.start);
        self.text[start..stmt.range.start].chars().all(|it| it == ' ' || it == '\t')
    }

    /// Where lines hoisted before `stmt` go, their indentation, and the text
    /// around them: the start of its line, or, after a `;`, a new line cut
    /// there (`x = 1.0;` / the lines / the statement), so they follow the
    /// statements before it on its line.
    fn insertion(&self, stmt: &Stmt) -> (usize, String, &'static str, String) {
        let line_start = self.text[..stmt.range.start].rfind('\n').map_or(0, |it| it + 1);
        let start = crate::statement_start(self.text, stmt.range.start);
        if start == line_start {
            return (line_start, self.text[line_start..stmt.range.start].to_string(), "", String::new());
        }
        let indent: String = match self.form {
            SourceForm::Fixed { .. } => "      ".to_string(),
            SourceForm::Free => self.text[line_start..].chars().take_while(|it| *it == ' ' || *it == '\t').collect(),
        };
        (start, indent.clone(), self.line_end, indent)
    }

    /// The shift temporaries still available after `stmt` to the statement
    /// starting at `next`: an assignment keeps those that do not read what
    /// it assigns, an output statement all, anything else none (it may
    /// assign anything or branch); a directive in between (a remap) too.
    fn after(&mut self, stmt: &Stmt, next: Option<usize>) {
        match &stmt.kind {
            StmtKind::Assign { lhs, .. } => {
                let assigned = base_name(lhs).unwrap_or("").to_ascii_lowercase();
                let calls = &self.calls;
                self.available.retain(|it| {
                    calls[*it].key.as_deref().is_some_and(|key| {
                        !key.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).any(|it| it == assigned)
                    })
                });
            }
            StmtKind::Output { .. } => {}
            _ => self.available.clear(),
        }
        let between = next.and_then(|next| self.text.get(stmt.range.end..next)).unwrap_or("");
        if between.to_ascii_lowercase().contains("!hpf$") {
            self.available.clear();
        }
        self.next_statement = next;
    }

    /// The calls of `stmt` to hoist before it, when it begins its line or
    /// follows a `;`; `indices`: those of the DO loops around it.
    fn statement(&mut self, stmt: &Stmt, indices: &[String]) {
        if !self.begins_line(stmt) {
            return;
        }
        let (line_start, indent, prefix, suffix) = self.insertion(stmt);
        let indent = indent.as_str();
        // The expressions evaluated once, before anything the statement assigns.
        if !self.reductions_only {
            if let Some(forall) = self.constructor_forall(stmt) {
                self.replacements.push((stmt.range, forall));
                return;
            }
            if let Some((forall, indices)) = self.section_forall(stmt) {
                self.forall_indices = self.forall_indices.max(indices);
                self.replacements.push((stmt.range, forall));
                return;
            }
        }
        // With the left side the temporaries may align with.
        let mut exprs: Vec<(&Expr, Option<&Expr>)> = Vec::new();
        // A WHERE's masks and right sides, with the arrays its assignments
        // before each one assign (a reduction that reads none of them moves).
        let mut where_parts: Vec<(&Expr, Vec<String>)> = Vec::new();
        // `X = CSHIFT(Y, ...)` is `permute.rs`'s as it is.
        let mut whole_right_side = None;
        let first_call = self.calls.len();
        match &stmt.kind {
            StmtKind::Assign { lhs, rhs } if self.form == SourceForm::Free && !self.reductions_only => {
                if let Some(statements) = self.local_shift_sections(lhs, rhs) {
                    let lines: String = self.calls[first_call..]
                        .iter()
                        .map(|call| format!("{indent}{} = {}{}", call.temp, call.assignment, self.line_end))
                        .collect();
                    if !lines.is_empty() {
                        self.before.push((line_start, format!("{prefix}{lines}{suffix}")));
                    }
                    let separator = format!("{}{indent}", self.line_end);
                    self.replacements.push((stmt.range, statements.join(&separator)));
                    return;
                }
                exprs.push((rhs, Some(lhs)));
                whole_right_side = matches!(lhs.kind, ExprKind::Name(_)).then_some(rhs.range);
            }
            StmtKind::Assign { lhs, rhs } => {
                exprs.push((rhs, Some(lhs)));
                whole_right_side = matches!(lhs.kind, ExprKind::Name(_)).then_some(rhs.range);
            }
            _ if self.reductions_only && !matches!(stmt.kind, StmtKind::Where { .. }) => {}
            StmtKind::Output { items } => exprs.extend(items.iter().map(|it| (it, None))),
            StmtKind::Call { args, .. } => exprs.extend(args.iter().map(|it| (it, None))),
            StmtKind::If { branches } => {
                exprs.extend(branches.iter().filter_map(|it| it.0.as_ref()).map(|it| (it, None)))
            }
            StmtKind::Where { mask, body, elsewhere } => {
                let assignments: Vec<&Stmt> = body.iter().chain(elsewhere.iter().flat_map(|it| &it.1)).collect();
                let first_lhs = assignments.iter().find_map(|it| match &it.kind {
                    StmtKind::Assign { lhs, .. } => Some(lhs),
                    _ => None,
                });
                // A WHERE statement evaluates its mask and right side before it assigns.
                let one_statement = elsewhere.is_empty() && body.len() == 1;
                // The masks and right sides in the order the construct
                // evaluates them (its text's), each with the arrays the
                // assignments before it assign: one that reads none of them
                // means the same evaluated before the construct.
                let mut candidates: Vec<(&Expr, Option<&Expr>, Vec<String>)> = Vec::new();
                let mut assigned: Vec<String> = Vec::new();
                let parts =
                    std::iter::once((mask.as_ref(), body)).chain(elsewhere.iter().map(|it| (it.0.as_ref(), &it.1)));
                for (part_mask, part_body) in parts {
                    candidates.extend(part_mask.map(|it| (it, first_lhs, assigned.clone())));
                    for assignment in part_body {
                        let StmtKind::Assign { lhs, rhs } = &assignment.kind else { return };
                        candidates.push((rhs, Some(lhs), assigned.clone()));
                        assigned.extend(base_name(lhs).map(|it| it.to_ascii_lowercase()));
                    }
                }
                for (expr, lhs, assigned_before) in candidates {
                    let assigned_before = if one_statement { Vec::new() } else { assigned_before };
                    if !self.reads_any(expr, &assigned_before) {
                        exprs.push((expr, lhs));
                    }
                    where_parts.push((expr, assigned_before));
                }
            }
            _ => return,
        }
        let mut lines = String::new();
        let line_end = self.line_end;
        let reductions_only = self.reductions_only;
        for (expr, lhs) in exprs.iter().copied().filter(|_| !reductions_only) {
            let target = lhs.and_then(|it| self.whole_array(it));
            let top = whole_right_side == Some(expr.range);
            let first = self.calls.len();
            if let Some(index) = self.find_calls(expr, target.as_ref(), top) {
                self.replaced.push((expr.range, index));
            }
            for call in &self.calls[first..] {
                lines.push_str(&format!("{indent}{} = {}{line_end}", call.temp, call.assignment));
            }
        }
        // Reductions of distributed arrays to one value inside an array
        // assignment (`e = e - sum(e) / n`, `x = x / maxval(abs(x))`): the
        // right side is evaluated before anything is assigned, so the
        // reduction may be computed first into a scalar every process gets,
        // and the assignment runs on the owners.
        let reduced: Vec<(&Expr, Vec<String>)> = match &stmt.kind {
            StmtKind::Assign { lhs, rhs } if self.assigns_section_of_distributed(lhs) => vec![(rhs, Vec::new())],
            // Masks and right sides of a WHERE: the reductions that read
            // nothing an assignment of it before them assigns.
            StmtKind::Where { .. } => where_parts,
            _ => Vec::new(),
        };
        for (expr, assigned_before) in reduced {
            let mut excluded = indices.to_vec();
            excluded.extend(assigned_before);
            for (call, type_spec) in self.scalar_reductions(expr, &excluded) {
                self.results += 1;
                let temp = self.fresh_name("hpf_f", self.results - 1);
                self.declarations.push(format!("{}{type_spec} :: {temp}", self.declaration_indent));
                lines.push_str(&format!("{indent}{temp} = {}{line_end}", self.slice(call)));
                self.scalars.push((temp.clone(), self.slice(call).to_string()));
                self.replacements.push((call, temp));
            }
        }
        // Functions that use distributed arrays by host or use association,
        // in output items (which rank 0 alone evaluates): evaluated first
        // into a scalar, by every process (`procedures.rs`).
        if let StmtKind::Output { items } = &stmt.kind {
            // (`functions` is empty outside the main program.)
            let mut stack: Vec<&Expr> = items.iter().collect();
            while let Some(expr) = stack.pop() {
                if let ExprKind::Ref { name, args } = &expr.kind {
                    let function = self.functions.iter().find(|it| it.0 == name.key()).cloned();
                    let args_replicated = args.iter().all(|arg| match arg {
                        Subscript::Expr(value) | Subscript::Keyword { value, .. } => !self.reads_distributed(value),
                        _ => false,
                    });
                    let inside_replaced = self.replaced.iter().any(|it| expr.range.contains_range(it.0));
                    if let Some((_, type_spec)) =
                        function.filter(|_| args_replicated && !inside_replaced && self.single_line(expr.range))
                    {
                        self.results += 1;
                        let temp = self.fresh_name("hpf_f", self.results - 1);
                        self.declarations.push(format!("{}{type_spec} :: {temp}", self.declaration_indent));
                        lines.push_str(&format!("{indent}{temp} = {}{line_end}", self.slice(expr.range)));
                        self.scalars.push((temp.clone(), self.slice(expr.range).to_string()));
                        self.replacements.push((expr.range, temp));
                        continue;
                    }
                }
                push_children(expr, &mut stack);
            }
        }
        // IF conditions that read distributed arrays, outside loops over
        // what they read: computed first (reductions in parallel, elements
        // from their owners), so the IF runs on every process alike.
        if let (StmtKind::If { branches }, false) = (&stmt.kind, self.reductions_only) {
            for cond in branches.iter().filter_map(|it| it.0.as_ref()) {
                if !self.reads_distributed(cond)
                    || self.reads_index_in_distributed_element(cond, indices)
                    || !self.single_line(cond.range)
                {
                    continue;
                }
                let mut inside: Vec<(TextRange, usize)> =
                    self.replaced.iter().copied().filter(|it| cond.range.contains_range(it.0)).collect();
                inside.sort_by_key(|it| it.0.start);
                self.replaced.retain(|it| !inside.contains(it));
                let mut text = String::new();
                let mut at = cond.range.start;
                for (range, call) in &inside {
                    text.push_str(&self.text[at..range.start]);
                    text.push_str(&self.calls[*call].temp);
                    at = range.end;
                }
                text.push_str(&self.text[at..cond.range.end]);
                let temp = self.fresh_name("hpf_b", self.replacements.len());
                self.declarations.push(format!("{}logical :: {temp}", self.declaration_indent));
                lines.push_str(&format!("{indent}{temp} = {text}{line_end}"));
                self.replacements.push((cond.range, format!("({temp})")));
            }
        }
        if !lines.is_empty() {
            self.before.push((line_start, format!("{prefix}{lines}{suffix}")));
        }
    }

    /// Whether `lhs` is a distributed array, whole or a section (not one element).
    fn assigns_section_of_distributed(&self, lhs: &Expr) -> bool {
        let (name, args) = match &lhs.kind {
            ExprKind::Name(name) => (name, &[][..]),
            ExprKind::Ref { name, args } => (name, &args[..]),
            _ => return false,
        };
        let Some(id) = self.model.lookup(self.unit, &name.key()) else { return false };
        self.maybe_distributed(id) && (args.is_empty() || args.iter().any(|it| matches!(it, Subscript::Range { .. })))
    }

    /// The outermost calls in `expr` of SUM, PRODUCT, MAXVAL, MINVAL,
    /// DOT_PRODUCT, COUNT, ANY and ALL to one value (no DIM) that read
    /// distributed arrays and none of `indices` (names), each with its result's
    /// type; only where that type is certain (every variable read of one
    /// declared type, literals and intrinsics that keep it).
    fn scalar_reductions(&self, expr: &Expr, indices: &[String]) -> Vec<(TextRange, String)> {
        let mut found = Vec::new();
        let mut stack = vec![expr];
        while let Some(expr) = stack.pop() {
            if let ExprKind::Ref { name, args } = &expr.kind {
                let key = name.key();
                let intrinsic = self.model.lookup(self.unit, &key).is_none();
                let positional: Vec<&Expr> = args
                    .iter()
                    .filter_map(|it| match it {
                        Subscript::Expr(value) => Some(value),
                        _ => None,
                    })
                    .collect();
                let only_mask = args.iter().all(|it| match it {
                    Subscript::Expr(_) => true,
                    Subscript::Keyword { name, .. } => name.key() == "mask",
                    _ => false,
                });
                let result = match key.as_str() {
                    "count" | "any" | "all" if positional.len() == 1 && args.len() == 1 => {
                        Some(if key == "count" { "integer".to_string() } else { "logical".to_string() })
                    }
                    "sum" | "product" | "maxval" | "minval" if positional.len() == 1 && only_mask => {
                        self.kept_type(positional[0])
                    }
                    "dot_product" if positional.len() == 2 && args.len() == 2 => {
                        self.kept_type(expr).filter(|it| !it.to_ascii_lowercase().starts_with("complex"))
                    }
                    _ => None,
                };
                if let Some(result) = result.filter(|_| {
                    intrinsic
                        && self.reads_distributed(expr)
                        && !self.reads_any(expr, indices)
                        && self.single_line(expr.range)
                        && !self.replaced.iter().any(|it| overlap(it.0, expr.range))
                        && !self.replacements.iter().any(|it| overlap(it.0, expr.range))
                }) {
                    found.push((expr.range, result));
                    continue;
                }
            }
            push_children(expr, &mut stack);
        }
        found
    }

    /// The type of the value of `expr` when it is certain: the variables it
    /// reads are of one declared type (integer ones, which do not change a
    /// real or complex value's type, aside), combined by `+ - * / **`, with
    /// integer literals, real ones in a real type (a `d` exponent only in
    /// DOUBLE PRECISION or REAL(8)) and intrinsics that keep their
    /// argument's type; else `None`. For DOT_PRODUCT, its arguments' type.
    fn kept_type(&self, expr: &Expr) -> Option<String> {
        // Declared types as written, by their text in lower case without blanks.
        let mut types: Vec<(String, String)> = Vec::new();
        let mut literals: Vec<&str> = Vec::new();
        let mut takes_abs = false;
        let mut stack = vec![expr];
        let mut root = true;
        while let Some(expr) = stack.pop() {
            let outer = std::mem::replace(&mut root, false);
            match &expr.kind {
                ExprKind::Int(_) => {}
                ExprKind::Literal(text) => literals.push(text),
                ExprKind::Name(name) | ExprKind::Ref { name, .. } => {
                    let args = match &expr.kind {
                        ExprKind::Ref { args, .. } => &args[..],
                        _ => &[][..],
                    };
                    match self.model.lookup(self.unit, &name.key()) {
                        Some(id) => {
                            let symbol = self.model.symbol(id);
                            if symbol.type_name.is_empty()
                                || !matches!(symbol.kind, SymbolKind::Variable | SymbolKind::Constant(_))
                            {
                                return None;
                            }
                            let written = format!("{}{}", symbol.type_name, symbol.type_kind);
                            let key = written.to_ascii_lowercase().replace(' ', "");
                            if !types.iter().any(|it| it.0 == key) {
                                types.push((key, written));
                            }
                            // Subscripts are integers of their own: not the value's type.
                        }
                        None => {
                            let keeps = [
                                "abs", "sqrt", "exp", "log", "log10", "sin", "cos", "tan", "atan", "sinh", "cosh",
                                "tanh", "max", "min", "mod", "sign",
                            ];
                            let dot = outer && name.key() == "dot_product";
                            if !keeps.contains(&name.key().as_str()) && !dot {
                                return None;
                            }
                            takes_abs |= name.key() == "abs";
                            for arg in args {
                                match arg {
                                    Subscript::Expr(value) => stack.push(value),
                                    _ => return None,
                                }
                            }
                        }
                    }
                }
                ExprKind::Unary { operand, .. } => stack.push(operand),
                ExprKind::Binary { op, lhs, rhs } => {
                    use syntax::BinaryOp::*;
                    if !matches!(op, Add | Sub | Mul | Div | Pow) {
                        return None;
                    }
                    stack.push(lhs);
                    stack.push(rhs);
                }
                ExprKind::Paren(inner) => stack.push(inner),
                ExprKind::Other(_) => return None,
            }
        }
        let others: Vec<&(String, String)> = types.iter().filter(|it| !it.0.starts_with("integer")).collect();
        let (key, written) = match others[..] {
            [one] => one.clone(),
            [] if types.len() == 1 => types[0].clone(),
            _ => return None,
        };
        let real = key.starts_with("real") || key.starts_with("double");
        let double = key.starts_with("double") || ["real(8)", "real*8", "real(kind=8)"].contains(&key.as_str());
        if takes_abs && key.starts_with("complex") {
            return None;
        }
        for literal in literals {
            let lower = literal.to_ascii_lowercase();
            let numeric = lower.chars().next().is_some_and(|it| it.is_ascii_digit() || it == '.')
                && !lower.contains('_')
                && !lower.starts_with(".t")
                && !lower.starts_with(".f");
            if !numeric || !real || (lower.contains('d') && !double) {
                return None;
            }
        }
        Some(written)
    }

    /// `X = (/ (e, v = lo, hi) /)` (or `[...]`) for a whole rank-1
    /// distributed X, as the FORALL that means the same:
    /// `forall (v = lo:hi) X(v - (lo) + lb) = e`, which runs on the owners.
    fn constructor_forall(&self, stmt: &Stmt) -> Option<String> {
        let StmtKind::Assign { lhs, rhs } = &stmt.kind else { return None };
        let ExprKind::Name(name) = &lhs.kind else { return None };
        let shape = self.distributed_shape(&name.key())?;
        let [(lb, _)] = shape.bounds.as_slice() else { return None };
        let text = self.slice(rhs.range).trim();
        if !self.single_line(rhs.range) || text.contains(['\'', '"', '!', ';']) {
            return None;
        }
        let inner = text
            .strip_prefix("(/")
            .and_then(|it| it.strip_suffix("/)"))
            .or_else(|| text.strip_prefix('[').and_then(|it| it.strip_suffix(']')))?
            .trim();
        // One implied DO that spans the whole constructor.
        let body = inner.strip_prefix('(')?.strip_suffix(')')?;
        let mut depth = 0i32;
        let mut parts = vec![String::new()];
        for c in body.chars() {
            match c {
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                _ => {}
            }
            if depth < 0 {
                return None;
            }
            if c == ',' && depth == 0 {
                parts.push(String::new());
            } else {
                parts.last_mut()?.push(c);
            }
        }
        let [item, control, hi, step @ ..] = parts.as_slice() else { return None };
        if !matches!(step, [] | [_]) || step.first().is_some_and(|it| it.trim() != "1") {
            return None;
        }
        let (var, lo) = control.split_once('=')?;
        let (var, lo, hi, item) = (var.trim(), lo.trim(), hi.trim(), item.trim());
        let is_name = |it: &str| {
            it.starts_with(|c: char| c.is_ascii_alphabetic())
                && it.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        };
        let index = self.model.lookup(self.unit, &var.to_ascii_lowercase())?;
        let index = self.model.symbol(index);
        if !is_name(var) || index.rank() != 0 || index.type_name != "integer" || lo.contains('=') || item.is_empty() {
            return None;
        }
        Some(format!("forall ({var} = {lo}:{hi}) {}({var} - ({lo}) + ({lb})) = {item}", name.text))
    }

    /// Whether the array `id` is distributed or, a procedure's dummy, may
    /// be: INHERIT, an alignment with such a dummy, or no mapping directive
    /// take the actual's mapping (`procedures.rs`). (Hoisting a reduction of
    /// a replicated array means the same too.)
    fn maybe_distributed(&self, id: analysis::model::SymbolId) -> bool {
        let symbol = self.model.symbol(id);
        symbol.is_array() && (self.model.distribution_of(id).is_some() || symbol.is_dummy)
    }

    /// Whether `expr` reads a distributed array.
    fn reads_distributed(&self, expr: &Expr) -> bool {
        let mut stack = vec![expr];
        while let Some(expr) = stack.pop() {
            if let ExprKind::Name(name) | ExprKind::Ref { name, .. } = &expr.kind {
                let id = self.model.lookup(self.unit, &name.key());
                if id.is_some_and(|id| self.maybe_distributed(id)) {
                    return true;
                }
            }
            push_children(expr, &mut stack);
        }
        false
    }

    /// Whether `expr` reads an element of a distributed array at a subscript
    /// that reads one of `indices` (`x(i)` in a loop over `i`): its owner
    /// evaluates it in an owner-computes nest, which a temporary assigned
    /// before the IF would prevent. A loop index in a section's bounds
    /// (`maxloc(x(lo:n), 1)`) reads across processes anyway.
    fn reads_index_in_distributed_element(&self, expr: &Expr, indices: &[String]) -> bool {
        let mut stack = vec![expr];
        while let Some(expr) = stack.pop() {
            if let ExprKind::Ref { name, args } = &expr.kind {
                let id = self.model.lookup(self.unit, &name.key());
                let distributed =
                    id.is_some_and(|id| self.model.symbol(id).is_array() && self.model.distribution_of(id).is_some());
                if distributed && args.iter().any(|it| matches!(it, Subscript::Expr(at) if self.reads_any(at, indices)))
                {
                    return true;
                }
            }
            push_children(expr, &mut stack);
        }
        false
    }

    /// Whether `expr` names one of `names` (lower case).
    fn reads_any(&self, expr: &Expr, names: &[String]) -> bool {
        let mut stack = vec![expr];
        while let Some(expr) = stack.pop() {
            match &expr.kind {
                ExprKind::Name(name) if names.contains(&name.key()) => return true,
                ExprKind::Ref { name, .. } if names.contains(&name.key()) => return true,
                _ => {}
            }
            push_children(expr, &mut stack);
        }
        false
    }

    /// The name and shape of `expr` when it is a whole distributed array.
    fn whole_array(&self, expr: &Expr) -> Option<(String, Shape)> {
        let ExprKind::Name(name) = &expr.kind else { return None };
        let shape = self.distributed_shape(&name.key())?;
        Some((name.text.clone(), shape))
    }

    /// The shape of a distributed array of the main program with constant bounds.
    fn distributed_shape(&self, key: &str) -> Option<Shape> {
        let id = self.model.lookup(self.unit, key)?;
        let symbol = self.model.symbol(id);
        if !symbol.is_array() || self.model.distribution_of(id).is_none() || symbol.type_name.is_empty() {
            return None;
        }
        let bounds =
            symbol.shape.iter().map(|dim| Some((dim.lo.known()?, dim.hi.known()?))).collect::<Option<Vec<_>>>()?;
        let type_spec = format!("{}{}", symbol.type_name, symbol.type_kind);
        Some(Shape { type_spec, bounds })
    }

    /// Finds the calls to hoist in `expr`, innermost first, and returns
    /// the one `expr` is when it is hoisted itself. `top`: `expr` is the
    /// whole right side of an assignment to a whole array (`permute.rs`
    /// runs it as it is). A hoisted call inside one that is not hoisted is
    /// replaced in the statement.
    fn find_calls(&mut self, expr: &Expr, target: Option<&(String, Shape)>, top: bool) -> Option<usize> {
        let Some((kind, array, dim)) = self.intrinsic(expr) else {
            let mut children = Vec::new();
            push_children(expr, &mut children);
            for child in children.into_iter().rev() {
                if let Some(index) = self.find_calls(child, target, false) {
                    self.replaced.push((child.range, index));
                }
            }
            return None;
        };
        if let Some((base, ops)) = self.shift_chain(expr) {
            return self.hoist_chain(&base, ops, array, target, top);
        }
        // The array argument: a whole distributed array, or a call hoisted first.
        let (shape, inner) = match &array.kind {
            ExprKind::Name(name) => (self.distributed_shape(&name.key()), None),
            _ => match self.find_calls(array, target, false) {
                Some(index) => (Some(self.calls[index].shape.clone()), Some(index)),
                None => (None, None),
            },
        };
        let result = shape.filter(|it| dim < it.bounds.len()).and_then(|shape| match kind {
            Kind::Shift => Some(shape),
            Kind::Transpose if shape.bounds.len() == 2 => {
                Some(Shape { type_spec: shape.type_spec, bounds: vec![shape.bounds[1], shape.bounds[0]] })
            }
            Kind::Transpose => None,
        });
        // Aligned with the left side when it fits, else (a shift) with the array shifted.
        let align_with = result.as_ref().and_then(|result| match target {
            Some((name, target_shape)) if target_shape.extents() == result.extents() => Some(name.clone()),
            _ if kind == Kind::Transpose => None,
            _ => match (&array.kind, inner) {
                (ExprKind::Name(name), _) => Some(name.text.clone()),
                (_, Some(inner)) => Some(self.calls[inner].temp.clone()),
                _ => None,
            },
        });
        let inner_replaced = inner.map(|it| (array.range, it));
        let (Some(result), Some(align_with)) = (result, align_with) else {
            self.replaced.extend(inner_replaced);
            return None;
        };
        if top || !self.single_line(expr.range) {
            self.replaced.extend(inner_replaced);
            return None;
        }
        let assignment = match inner {
            Some(inner) => format!(
                "{}{}{}",
                &self.text[expr.range.start..array.range.start],
                self.calls[inner].temp,
                &self.text[array.range.end..expr.range.end]
            ),
            None => self.slice(expr.range).to_string(),
        };
        Some(self.new_temporary(assignment, result, align_with, None))
    }

    /// Declares a temporary assigned `assignment`.
    fn new_temporary(&mut self, assignment: String, result: Shape, align_with: String, key: Option<String>) -> usize {
        // A temporary of the same shape and layout that nothing reads any
        // more (not available to later statements, not read by this one) is
        // assigned anew: the memory of a step's temporaries is that of the
        // most that one statement reads.
        let read_later = |temp: &str| {
            let last_reads = self.last_reads.as_deref().unwrap_or_default();
            self.calls.iter().zip(last_reads).any(|(call, last)| call.temp == temp && *last >= self.statement_count)
        };
        let free = self.calls.iter().find(|call| {
            self.last_reads.is_some()
                && call.shape.type_spec == result.type_spec
                && call.shape.bounds == result.bounds
                && self.laid_out_alike(&call.align_with, &align_with)
                && !read_later(&call.temp)
        });
        self.reads.push(self.statement_count);
        if let Some(free) = free {
            let (temp, align_with) = (free.temp.clone(), free.align_with.clone());
            self.calls.push(Call { temp, assignment, shape: result, align_with, key });
            return self.calls.len() - 1;
        }
        let temp = self.fresh_name("hpf_t", self.calls.len());
        let colons = vec![":"; result.bounds.len()].join(",");
        let bounds: Vec<String> = result.bounds.iter().map(|(lo, hi)| format!("{lo}:{hi}")).collect();
        self.declarations.push(format!(
            "{}{} :: {temp}({})",
            self.declaration_indent,
            result.type_spec,
            bounds.join(", ")
        ));
        self.declarations.push(format!("!HPF$ ALIGN {temp}({colons}) WITH {align_with}({colons})"));
        self.calls.push(Call { temp, assignment, shape: result, align_with, key });
        self.calls.len() - 1
    }

    /// Per dimension of the distributed array `name`: whether it is distributed.
    fn distributed_dims(&self, name: &str) -> Vec<bool> {
        let Some(id) = self.model.lookup(self.unit, &name.to_ascii_lowercase()) else { return Vec::new() };
        distributed_dims(self.model, id)
    }

    /// Whether the arrays (or temporaries) `a` and `b` are laid out alike:
    /// the same name, or the same alignment with targets distributed alike.
    fn laid_out_alike(&self, a: &str, b: &str) -> bool {
        if a.eq_ignore_ascii_case(b) {
            return true;
        }
        let lookup = |name: &str| self.model.lookup(self.unit, &name.to_ascii_lowercase());
        let (Some(a), Some(b)) = (lookup(a), lookup(b)) else { return false };
        let (Some(x), Some(y)) = (self.model.resolve(a), self.model.resolve(b)) else { return false };
        let (Some((_, dx)), Some((_, dy))) = (self.model.distribution_of(a), self.model.distribution_of(b)) else {
            return false;
        };
        let (tx, ty) = (self.model.symbol(x.target), self.model.symbol(y.target));
        x.axes == y.axes
            && dx.formats == dy.formats
            && dx.onto == dy.onto
            && tx.shape.len() == ty.shape.len()
            && tx
                .shape
                .iter()
                .zip(&ty.shape)
                .all(|(p, q)| p.lo.known().is_some() && p.lo.known() == q.lo.known() && p.hi.known() == q.hi.known())
    }

    /// `expr` as CSHIFTs and EOSHIFTs applied to a named array, when every
    /// argument but the array is on one line: the array's name and the
    /// shifts in the order applied.
    fn shift_chain(&self, expr: &Expr) -> Option<(String, Vec<ShiftOp>)> {
        let mut ops = Vec::new();
        let mut expr = expr;
        loop {
            match &expr.kind {
                ExprKind::Name(name) => {
                    ops.reverse();
                    return Some((name.text.clone(), ops));
                }
                ExprKind::Ref { name, args } => {
                    let (Kind::Shift, array, dim) = self.intrinsic(expr)? else { return None };
                    let (_, keywords) = crate::permute::permute_intrinsic(&name.key())?;
                    let values = crate::permute::intrinsic_arguments(args, keywords)?;
                    let text =
                        |it: &Expr| Some(self.slice(it.range).to_string()).filter(|_| self.single_line(it.range));
                    let boundary = match keywords.len() {
                        4 => values[2].map(text),
                        _ => None,
                    };
                    ops.push(ShiftOp {
                        intrinsic: if keywords.len() == 4 { "eoshift" } else { "cshift" },
                        shift: text(values[1]?)?,
                        boundary: boundary.map(|it| it.ok_or(())).transpose().ok()?,
                        dim,
                        value: analysis::eval::eval_int(values[1]?, &Constants { model: self.model, unit: self.unit })
                            .ok(),
                        written: Some((
                            self.text[expr.range.start..array.range.start].to_string(),
                            self.text[array.range.end..expr.range.end].to_string(),
                        ))
                        .filter(|(before, after)| !format!("{before}{after}").contains(['\n', '\r', '&'])),
                    });
                    expr = array;
                }
                _ => return None,
            }
        }
    }

    /// Hoists the chain `ops` of shifts of `base` (the call `expr` is the
    /// last one, its array argument `array`): one temporary per prefix of
    /// the chain, each shared with an equal one the statement may read (see
    /// `available`). CSHIFTs along different dimensions commute: such a
    /// chain shifts the distributed dimensions first, so that
    /// `cshift(cshift(p, -1, 1), -1, 2)` reuses the halo of `cshift(p, -1, 2)`.
    fn hoist_chain(
        &mut self,
        base: &str,
        mut ops: Vec<ShiftOp>,
        array: &Expr,
        target: Option<&(String, Shape)>,
        top: bool,
    ) -> Option<usize> {
        let shape = self.distributed_shape(&base.to_ascii_lowercase())?;
        if ops.iter().any(|it| it.dim >= shape.bounds.len()) {
            return None;
        }
        let align_with = match target {
            Some((name, target_shape)) if target_shape.extents() == shape.extents() => name.clone(),
            _ => base.to_string(),
        };
        // `X = CSHIFT(Y, ...)` is `permute.rs`'s as it is: only its array argument is hoisted.
        let hoisted = if top { ops.len() - 1 } else { ops.len() };
        let commute = {
            let dims: Vec<usize> = ops[..hoisted].iter().map(|it| it.dim).collect();
            ops[..hoisted].iter().all(|it| it.intrinsic == "cshift")
                && dims.iter().enumerate().all(|(at, dim)| !dims[..at].contains(dim))
        };
        if commute {
            let distributed = self.distributed_dims(base);
            ops[..hoisted].sort_by_key(|it| (!distributed.get(it.dim).copied().unwrap_or(false), it.dim));
        }
        let current = self.materialize(base, &ops[..hoisted], &shape, &align_with);
        if top {
            if let Some(inner) = current {
                self.replaced.push((array.range, inner));
            }
            return None;
        }
        current
    }

    /// The temporaries of the prefixes of the chain `ops` of shifts of
    /// `base`, each shared with an equal one still available: the last one.
    fn materialize(&mut self, base: &str, ops: &[ShiftOp], shape: &Shape, align_with: &str) -> Option<usize> {
        let mut key = base.to_ascii_lowercase();
        let mut current: Option<usize> = None;
        for op in ops {
            key.push_str(&op.key());
            let reusable = self.available.iter().copied().find(|it| {
                let call = &self.calls[*it];
                call.key.as_deref() == Some(key.as_str()) && self.laid_out_alike(&call.align_with, align_with)
            });
            let index = match reusable {
                Some(index) => {
                    self.reads[index] = self.statement_count;
                    index
                }
                None => {
                    let array = current.map_or(base.to_string(), |it| self.calls[it].temp.clone());
                    let index =
                        self.new_temporary(op.call(&array), shape.clone(), align_with.to_string(), Some(key.clone()));
                    self.available.push(index);
                    index
                }
            };
            current = Some(index);
        }
        current
    }

    /// `X = e`, X a whole distributed array, where `e` reads CSHIFTs by
    /// constants along one dimension of X that is not distributed (their
    /// shifts along distributed dimensions first, into temporaries): the
    /// assignments of the sections of X between the points where one of
    /// the shifts wraps around, each reading the arrays at the section
    /// shifted (`cu = p + cshift(p, -1, 1)` is `cu(2:n, :) = p(2:n, :) +
    /// p(1:n-1, :)` and `cu(1:1, :) = p(1:1, :) + p(n:n, :)`): no
    /// temporary and no copy. `e` may hold whole arrays of X's bounds,
    /// scalars and elemental intrinsics; X itself is not shifted. Returns
    /// the statements (the temporaries are hoisted).
    fn local_shift_sections(&mut self, lhs: &Expr, rhs: &Expr) -> Option<Vec<String>> {
        enum Read {
            Whole,
            /// The array or temporary read, the shift along the dimension.
            Shifted(i64),
        }
        let ExprKind::Name(target) = &lhs.kind else { return None };
        let bounds = self.distributed_shape(&target.key())?.bounds;
        let target_distributed = self.distributed_dims(&target.text);
        let mut reads: Vec<(TextRange, String, Read)> = Vec::new();
        let mut chains: Vec<(TextRange, String, Vec<ShiftOp>)> = Vec::new();
        let mut dim: Option<usize> = None;
        let mut stack = vec![rhs];
        while let Some(expr) = stack.pop() {
            match &expr.kind {
                ExprKind::Int(_) | ExprKind::Literal(_) => {}
                ExprKind::Name(name) => {
                    let symbol = self.model.symbol(self.model.lookup(self.unit, &name.key())?);
                    if symbol.rank() == 0 {
                        continue;
                    }
                    let shape: Vec<(i64, i64)> =
                        symbol.shape.iter().map(|it| Some((it.lo.known()?, it.hi.known()?))).collect::<Option<_>>()?;
                    if shape != bounds {
                        return None;
                    }
                    reads.push((expr.range, name.text.clone(), Read::Whole));
                }
                ExprKind::Ref { name, args } => {
                    if let Some((Kind::Shift, _, _)) = self.intrinsic(expr) {
                        let (base, mut ops) = self.shift_chain(expr)?;
                        let dims: Vec<usize> = ops.iter().map(|it| it.dim).collect();
                        if base.eq_ignore_ascii_case(&target.text)
                            || self.distributed_shape(&base.to_ascii_lowercase())?.bounds != bounds
                            || ops.iter().any(|it| it.intrinsic != "cshift" || it.dim >= bounds.len())
                            || dims.iter().enumerate().any(|(at, it)| dims[..at].contains(it))
                        {
                            return None;
                        }
                        let distributed = self.distributed_dims(&base);
                        ops.sort_by_key(|it| (!distributed.get(it.dim).copied().unwrap_or(false), it.dim));
                        // At most one shift along a dimension neither array distributes, the last.
                        let local = |it: &ShiftOp| {
                            !distributed.get(it.dim).copied().unwrap_or(true)
                                && !target_distributed.get(it.dim).copied().unwrap_or(true)
                        };
                        if ops.iter().rev().skip(1).any(local) {
                            return None;
                        }
                        if ops.last().is_some_and(local) {
                            let last = ops.last()?;
                            if dim.is_some_and(|it| it != last.dim) {
                                return None;
                            }
                            dim = Some(last.dim);
                        }
                        chains.push((expr.range, base, ops));
                        continue;
                    }
                    match self.model.lookup(self.unit, &name.key()) {
                        // Elements of distributed arrays keep the statement on one process.
                        Some(_) => return None,
                        None => {
                            const ELEMENTAL: [&str; 26] = [
                                "abs", "sqrt", "exp", "log", "log10", "sin", "cos", "tan", "asin", "acos", "atan",
                                "atan2", "sinh", "cosh", "tanh", "max", "min", "mod", "modulo", "sign", "dble", "real",
                                "int", "nint", "aint", "anint",
                            ];
                            if !ELEMENTAL.contains(&name.key().as_str()) {
                                return None;
                            }
                            for arg in args {
                                let Subscript::Expr(arg) = arg else { return None };
                                stack.push(arg);
                            }
                        }
                    }
                }
                ExprKind::Unary { operand, .. } => stack.push(operand),
                ExprKind::Binary { lhs, rhs, .. } => {
                    stack.push(lhs);
                    stack.push(rhs);
                }
                ExprKind::Paren(inner) => stack.push(inner),
                ExprKind::Other(_) => return None,
            }
        }
        let dim = dim?;
        let (lb, hi) = bounds[dim];
        let n = hi - lb + 1;
        // The shift along `dim` of each chain, the rest hoisted.
        let mut shifts = Vec::new();
        for (_, _, ops) in &chains {
            let shift = match ops.last() {
                Some(last) if last.dim == dim => {
                    let value = last.value?;
                    if value.abs() >= n {
                        return None;
                    }
                    value
                }
                _ => 0,
            };
            shifts.push(shift);
        }
        let shape = self.distributed_shape(&target.key())?;
        for ((range, base, ops), shift) in chains.into_iter().zip(&shifts) {
            let hoisted = if ops.last().is_some_and(|it| it.dim == dim) { ops.len() - 1 } else { ops.len() };
            let read = match self.materialize(&base, &ops[..hoisted], &shape, &target.text) {
                Some(index) => self.calls[index].temp.clone(),
                None => base,
            };
            reads.push((range, read, Read::Shifted(*shift)));
        }
        // The sections between the points where a shift wraps around.
        let mut points: Vec<i64> = vec![lb, lb + n];
        for shift in &shifts {
            points.push(if *shift > 0 { lb + n - shift } else { lb - shift });
        }
        points.sort_unstable();
        points.dedup();
        reads.sort_by_key(|it| it.0.start);
        let section = |from: i64, to: i64| {
            (0..bounds.len())
                .map(|it| if it == dim { format!("{from}:{to}") } else { ":".to_string() })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut statements = Vec::new();
        for piece in points.windows(2) {
            let (from, to) = (piece[0], piece[1] - 1);
            let mut text = format!("{}({}) = ", target.text, section(from, to));
            let mut at = rhs.range.start;
            for (range, name, read) in &reads {
                text.push_str(&self.text[at..range.start]);
                let offset = match read {
                    Read::Whole => 0,
                    Read::Shifted(shift) => {
                        let k = from - lb + shift;
                        if k >= n {
                            shift - n
                        } else if k < 0 {
                            shift + n
                        } else {
                            *shift
                        }
                    }
                };
                text.push_str(&format!("{name}({})", section(from + offset, to + offset)));
                at = range.end;
            }
            text.push_str(&self.text[at..rhs.range.end]);
            statements.push(text);
        }
        Some(statements)
    }

    /// `expr` as a TRANSPOSE, CSHIFT or EOSHIFT of the intrinsic, with its
    /// array argument and shifted dimension (0-based), when its other
    /// arguments are scalars every process has.
    fn intrinsic<'e>(&self, expr: &'e Expr) -> Option<(Kind, &'e Expr, usize)> {
        let ExprKind::Ref { name, args } = &expr.kind else { return None };
        let (_, keywords) = crate::permute::permute_intrinsic(&name.key())?;
        if self.model.lookup(self.unit, &name.key()).is_some() {
            return None;
        }
        let values = crate::permute::intrinsic_arguments(args, keywords)?;
        let array = values[0]?;
        if keywords.len() == 1 {
            return Some((Kind::Transpose, array, 0));
        }
        // SHIFT (required) and BOUNDARY: scalars; DIM: a constant.
        if !self.is_scalar(values[1]?)
            || values.get(2).filter(|_| keywords.len() == 4).is_some_and(|it| it.is_some_and(|it| !self.is_scalar(it)))
        {
            return None;
        }
        let dim = match values.last()? {
            None => 0,
            Some(dim) => {
                let value = analysis::eval::eval_int(dim, &Constants { model: self.model, unit: self.unit }).ok()?;
                usize::try_from(value - 1).ok()?
            }
        };
        Some((Kind::Shift, array, dim))
    }

    /// Whether `expr` is a scalar made of scalars, named constants, array
    /// elements and intrinsic calls on them, without distributed arrays.
    fn is_scalar(&self, expr: &Expr) -> bool {
        let mut stack = vec![expr];
        while let Some(expr) = stack.pop() {
            match &expr.kind {
                ExprKind::Int(_) | ExprKind::Literal(_) => {}
                ExprKind::Name(name) => {
                    let Some(id) = self.model.lookup(self.unit, &name.key()) else { return false };
                    if self.model.symbol(id).rank() != 0 {
                        return false;
                    }
                }
                ExprKind::Ref { name, args } => {
                    match self.model.lookup(self.unit, &name.key()) {
                        Some(id) => {
                            let symbol = self.model.symbol(id);
                            if self.model.distribution_of(id).is_some() || symbol.kind != SymbolKind::Variable {
                                return false;
                            }
                        }
                        // An intrinsic: only elemental ones on scalars.
                        None => {
                            if !["mod", "abs", "min", "max", "modulo", "int", "real", "dble", "sign"]
                                .contains(&name.key().as_str())
                            {
                                return false;
                            }
                        }
                    }
                    for arg in args {
                        match arg {
                            Subscript::Expr(expr) => stack.push(expr),
                            _ => return false,
                        }
                    }
                }
                ExprKind::Unary { operand, .. } => stack.push(operand),
                ExprKind::Binary { lhs, rhs, .. } => {
                    stack.push(lhs);
                    stack.push(rhs);
                }
                ExprKind::Paren(inner) => stack.push(inner),
                ExprKind::Other(_) => return false,
            }
        }
        true
    }

    fn single_line(&self, range: TextRange) -> bool {
        !self.slice(range).contains(['\n', '\r', '&'])
    }

    /// `{prefix}{k}` for the first `k` past `taken` the program does not use.
    fn fresh_name(&self, prefix: &str, taken: usize) -> String {
        (taken + 1..)
            .map(|it| format!("{prefix}{it}"))
            .find(|it| self.model.lookup(self.unit, it).is_none())
            .expect("an unused name")
    }

    /// The edits of the unit: the declarations at `declarations_at` (after
    /// the specification part), the assignments before their statements
    /// and the calls replaced; `None` when they overlap or a fixed-form
    /// line would be too long.
    fn edits(&self, declarations_at: usize) -> Option<Vec<(TextRange, String)>> {
        let line_end = self.line_end;
        let mut edits: Vec<(TextRange, String)> = Vec::new();
        let mut declarations: String = self.declarations.iter().map(|it| format!("{it}{line_end}")).collect();
        if self.forall_indices > 0 {
            let names: Vec<String> = (1..=self.forall_indices).map(|it| format!("hpf_fi{it}")).collect();
            declarations.push_str(&format!("{}integer :: {}{line_end}", self.declaration_indent, names.join(", ")));
        }
        edits.push((TextRange::empty(declarations_at), declarations));
        for (at, lines) in &self.before {
            edits.push((TextRange::empty(*at), lines.clone()));
        }
        for &(range, call) in &self.replaced {
            edits.push((range, self.calls[call].temp.clone()));
        }
        edits.extend(self.replacements.iter().cloned());
        edits.sort_by_key(|it| (it.0.start, it.0.end));
        // Fixed form ignores what lies past its line length.
        let too_long = |line: &str| match self.form {
            SourceForm::Fixed { line_length } => line.len() > line_length,
            SourceForm::Free => false,
        };
        if edits.iter().flat_map(|it| it.1.lines()).any(too_long)
            || edits.windows(2).any(|it| it[1].0.start < it[0].0.end)
            || !self.replaced_lines_fit(&edits)
        {
            return None;
        }
        Some(edits)
    }

    /// In fixed form, whether every line with replacements inside it still
    /// ends within the line length (`ANY(L)` replaced by `hpf_f10` grows
    /// the line; what passes column 72 would be cut off), and a line with
    /// text past it (sequence numbers) keeps its length.
    fn replaced_lines_fit(&self, edits: &[(TextRange, String)]) -> bool {
        let SourceForm::Fixed { line_length } = self.form else { return true };
        // Per line start: how much longer its replacements make it.
        let mut growth: Vec<(usize, i64)> = Vec::new();
        for (range, replacement) in edits.iter().filter(|it| !it.0.is_empty()) {
            let text = self.slice(*range);
            if text.contains('\n') || replacement.contains('\n') {
                continue;
            }
            let line_start = self.text[..range.start].rfind('\n').map_or(0, |it| it + 1);
            let delta = replacement.len() as i64 - text.len() as i64;
            match growth.iter_mut().find(|it| it.0 == line_start) {
                Some(line) => line.1 += delta,
                None => growth.push((line_start, delta)),
            }
        }
        growth.iter().all(|(start, delta)| {
            let line = self.text[*start..].lines().next().unwrap_or("");
            if line.len() > line_length {
                return *delta == 0;
            }
            (line.trim_end().len() as i64 + delta) <= line_length as i64
        })
    }
}

/// The file's functions (module procedures, internal functions of the
/// program) that name a distributed array they do not declare (by host or
/// use association), with their result types when those are a plain
/// INTEGER, REAL, DOUBLE PRECISION or LOGICAL (with a kind).
fn functions_using_distributed(analysis: &FileAnalysis, text: &str) -> Vec<(String, String)> {
    let model = &analysis.model;
    let occurrences = analysis::ide::occurrences(analysis);
    let mut res = Vec::new();
    for (unit_id, (unit, _)) in analysis::model::flatten_units(&analysis.file).into_iter().enumerate() {
        let Some(name) = unit.name.as_ref().filter(|_| unit.kind == UnitKind::Function) else { continue };
        // Occurrences are sorted by start: those inside the unit only.
        let first = occurrences.partition_point(|it| it.range.start < unit.range.start);
        let uses = occurrences[first..].iter().take_while(|it| it.range.start < unit.range.end).any(|it| {
            unit.range.contains_range(it.range)
                && it.symbol.unit != unit_id
                && model.symbol(it.symbol).is_array()
                && model.distribution_of(it.symbol).is_some()
        });
        // `double precision function f()`, or `function f()` with `real :: f`.
        let header = text.get(unit.header.to_range()).unwrap_or("").to_ascii_lowercase();
        let prefix = header.find("function").map_or("", |at| header[..at].trim()).to_string();
        let declared = unit.decls.iter().find(|decl| decl.entities.iter().any(|it| it.name.key() == name.key()));
        let type_spec = match declared {
            Some(decl) if prefix.is_empty() => format!("{}{}", decl.type_name, decl.type_kind),
            _ => prefix,
        };
        let plain = ["integer", "real", "double precision", "doubleprecision", "logical"]
            .iter()
            .any(|it| type_spec.strip_prefix(it).is_some_and(|rest| rest.is_empty() || rest.starts_with(['(', '*'])));
        if uses && plain {
            res.push((name.key(), type_spec));
        }
    }
    res
}

/// The array a left side assigns (`a` of `a(i, :)`).
fn base_name(expr: &Expr) -> Option<&str> {
    match &expr.kind {
        ExprKind::Name(name) | ExprKind::Ref { name, .. } => Some(&name.text),
        _ => None,
    }
}

fn push_children<'e>(expr: &'e Expr, stack: &mut Vec<&'e Expr>) {
    match &expr.kind {
        ExprKind::Ref { args, .. } => {
            for arg in args {
                match arg {
                    Subscript::Expr(expr) | Subscript::Keyword { value: expr, .. } => stack.push(expr),
                    Subscript::Range { lo, hi, stride, .. } => stack.extend([lo, hi, stride].into_iter().flatten()),
                    Subscript::Star(_) => {}
                }
            }
        }
        ExprKind::Unary { operand, .. } => stack.push(operand),
        ExprKind::Binary { lhs, rhs, .. } => {
            stack.push(lhs);
            stack.push(rhs);
        }
        ExprKind::Paren(inner) => stack.push(inner),
        ExprKind::Other(inner) => stack.extend(inner),
        ExprKind::Int(_) | ExprKind::Literal(_) | ExprKind::Name(_) => {}
    }
}

/// Whether two ranges share a character.
fn overlap(a: TextRange, b: TextRange) -> bool {
    a.start < b.end && b.start < a.end
}

/// Per dimension of the array `id`: whether it is distributed (empty for an
/// array without a distribution).
pub(crate) fn distributed_dims(model: &Model, id: analysis::model::SymbolId) -> Vec<bool> {
    let (Some(resolved), Some((_, distribution))) = (model.resolve(id), model.distribution_of(id)) else {
        return Vec::new();
    };
    (0..model.symbol(id).rank())
        .map(|dim| {
            resolved.axis_of(dim).is_some_and(|(target_dim, _, _)| {
                distribution.formats.get(target_dim).is_some_and(|it| *it != analysis::model::Format::Collapsed)
            })
        })
        .collect()
}
