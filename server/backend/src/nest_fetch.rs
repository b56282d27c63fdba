//! The distributed fallback for DO nests no other rule plans: owner-computes
//! with an inspector/executor (issue 27, item 3).
//!
//! A nest qualifies when its statements are counted DO loops, IF constructs
//! (and logical IFs) whose conditions and bounds read no distributed array,
//! CONTINUE, and assignments to one element of a distributed array whose
//! subscripts read no distributed array, or to replicated variables. Every
//! process runs the nest's loops; each assignment to a distributed element
//! runs on the owner of that element (an ownership test, placed at the
//! outermost loop of the nest where every assignment below shares it and
//! its variables are set: `DO J` / `IF (owns A(:,J))` / `DO I`); every
//! process runs the assignments to replicated variables (`U(I) = G(I,5)`,
//! `HIST(G(I,I)) = ...`), in every iteration, so they stay the same
//! everywhere (what they read of distributed arrays is fetched for every
//! iteration: memory O(what they read)). So that the result is the
//! sequential one, the distributed values the nest reads must be those
//! from before the nest, or the owner's own:
//! - a read of an array the nest writes, at the very element its statement
//!   assigns (`C(I,J) = C(I,J) + ...`), reads the owner's local copy, which
//!   holds every earlier write (all writes to that element run there, in the
//!   sequential order);
//! - any other read of an array the nest writes must reach no element the
//!   nest writes (`A(I,K)` while `A(I,J)` is written for `J = K+1, N`:
//!   `disjoint`), and is fetched as a read of an array it does not write;
//! - a read of any other distributed array is fetched: the inspector walks
//!   the process's own iterations and records, per reference, the box of
//!   global indices it reads (or the list of them, below); a schedule (`hpf_nest_schedule_*`, runtime)
//!   lists what each process sends of its elements and where each box
//!   element arrives, and one all-to-all (`hpf_nest_move_*`) fills each box
//!   from the elements' owners; the executor is the nest with that
//!   reference renamed to its box, which keeps the global bounds, so its
//!   subscripts stay as written.
//! - a read of another array cut alike counts as the owner's own when it
//!   sits on the left side's template cell (`same_cells`: `B(I+1,J)` for
//!   `A(I,J)` when A is aligned one cell further), not merely at the same
//!   indices.
//!
//! In a loop every process runs (a time loop), a nest whose boxes depend on
//! nothing the loop assigns (`reuse_schedules`: no CALL, no REDISTRIBUTE,
//! none of the variables the inspector reads, such as `IDX` of
//! `C(IDX(I),J)`, nor an array whose elements a FORALL mask the inspector
//! evaluates reads) keeps its boxes and schedule in a block around the loop:
//! the inspector runs in the loop's first iteration, the values move in
//! every one.
//!
//! A box per reference (not per array) keeps the fetched data close to what
//! is read (`A(I,K)` and `A(K,J)` of an LU step are a column and a row, not
//! the trailing matrix). Where the box may hold elements the reference does
//! not read (`exact_box`: an irregular subscript `C(IDX(I),J)`, a diagonal
//! `A(I,I)`, a triangle, a stride, the columns of one CYCLIC owner), the
//! reference is fetched as the list of distinct elements it reads: a
//! second inspector pass marks them in a bitmap over the box
//! (`hpf_nest_mark_*`), `hpf_nest_list_*` asks each owner for its marked
//! elements by their global indices, and the executor reads
//! `hpf_box_k(hpf_at_2(hpf_fs_k, idx(i), j))`, the number of marked bits up
//! to the element's (a count per 64-bit word: O(1)). Memory is then
//! O(local part + elements read + box / 64 words), and only elements read
//! move. What does not qualify keeps the caller's
//! path (rank 0 on gathered copies) with a typed reason, [`Refusal`].
//!
//! A FORALL no faster rule plans is such a nest too (`lib.rs`'s
//! `forall_fallback`): its indices are loops (the last one outermost, in a
//! block that declares them: they are the FORALL's own), its mask an IF
//! under each assignment's ownership test. It needs no dependence proof:
//! every right side and the mask read the values from before it, which is
//! what the boxes hold (a read of the array it assigns is fetched like any
//! other, but at the very element assigned, which no other iteration
//! writes). A construct runs each assignment as a FORALL of its own: one
//! inspector, then per assignment the moves of its boxes and its executor,
//! so it reads what the ones before it assigned. The inspector evaluates a
//! mask that reads no fetched value; otherwise it records every owned
//! iteration's reads that lie inside their arrays (the mask may keep a
//! subscript out of bounds) and the executor evaluates the mask.

use std::fmt::Write;

use analysis::model::SymbolId;
use private::mentions_word;
use syntax::{Expr, LoopControl, Stmt, StmtKind, Subscript, TextRange};

use crate::{private, Lowering};

/// Why a nest does not qualify for the fallback.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// A DO WHILE or an uncounted DO inside (or as) the nest.
    UncountedLoop,
    /// A statement other than DO, IF, an assignment or CONTINUE (a CALL,
    /// I/O, a branch): its first word.
    Statement(String),
    /// It assigns one of its own loop indices.
    AssignsLoopIndex(String),
    /// A distributed array used whole, as a section, or with a subscript
    /// count other than its rank.
    NotAnElement(String),
    /// A loop bound or an IF condition reads a distributed array.
    DistributedControl,
    /// A subscript reads a distributed array (`A(IDX(I))` with IDX distributed).
    DistributedSubscript(String),
    /// It reads an array it writes at another element than its own, which
    /// a write of the nest may reach (a dependence).
    ReadsWhatItWrites(String),
    /// A loop bound, a condition or a subscript that decides what is
    /// fetched reads a variable the nest assigns (`K = IDX(I)` then
    /// `B(K)`): the inspector, which runs before the nest, cannot know it.
    InspectorReadsAssigned(String),
    /// A FORALL that assigns a replicated variable (every process would
    /// assign it in DO order, reading elements it has already assigned).
    ForallAssignsReplicated(String),
    /// The mask of a FORALL construct of several assignments reads an array
    /// one of them assigns (the mask is evaluated once, before them all).
    MaskReadsAssigned(String),
}

impl Refusal {
    /// The refusal in words (the planner tests read it; the rank-0 note
    /// keeps the earlier rules' reason).
    #[cfg(test)]
    pub(crate) fn message(&self) -> String {
        match self {
            Refusal::UncountedLoop => "it holds a loop that is not a counted DO".to_string(),
            Refusal::Statement(word) => format!("it holds a `{word}` statement"),
            Refusal::AssignsLoopIndex(name) => format!("it assigns its loop index {name}"),
            Refusal::NotAnElement(name) => format!("it uses {name} otherwise than element by element"),
            Refusal::DistributedControl => "a loop bound or an IF condition reads a distributed array".to_string(),
            Refusal::DistributedSubscript(name) => format!("a subscript of {name} reads a distributed array"),
            Refusal::ReadsWhatItWrites(name) => {
                format!("it reads {name} at elements that its own writes may reach")
            }
            Refusal::InspectorReadsAssigned(name) => {
                format!("what it fetches depends on {name}, which it assigns")
            }
            Refusal::ForallAssignsReplicated(name) => format!("it is a FORALL that assigns the replicated {name}"),
            Refusal::MaskReadsAssigned(name) => {
                format!("its mask reads {name}, which an assignment of the construct assigns")
            }
        }
    }
}

/// A reference whose values are fetched into a box before the nest.
#[derive(Clone, Debug)]
struct BoxRead {
    array: SymbolId,
    /// The array's name in the reference, renamed to the box.
    name: TextRange,
    subscripts: Vec<TextRange>,
    /// The assignment it belongs to (its range's start).
    stmt: usize,
    /// Fetched as the list of distinct elements it reads, not their box:
    /// the box may hold many elements it does not read (`exact_box`).
    list: bool,
}

/// What a walk of the nest emits: the executor, or the inspector's first
/// pass (the box of each reference) or second (the marks of the lists).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    Execute,
    Hull,
    Mark,
}

/// An assignment of the nest, run by the owner of its left side's element.
#[derive(Clone, Debug)]
struct OwnedAssign {
    stmt: usize,
    /// The ownership test of the left side's element, one test per
    /// distributed dimension with the nest's loop variables (lower case) it
    /// reads; none for a replicated left side, which every process assigns.
    guards: Vec<Guard>,
    /// Its left side, and the reads of that same element, at local positions.
    edits: Vec<(TextRange, String)>,
    /// The CYCLIC dimensions of its array (stored compressed) and their descriptors.
    cyclic_axes: Vec<(usize, String)>,
}

/// The ownership test of one distributed dimension of a left side.
#[derive(Clone, Debug)]
struct Guard {
    test: String,
    /// The nest's loop variables (lower case) it reads.
    vars: Vec<String>,
    /// Along a BLOCK dimension whose subscript is one loop variable: that
    /// variable and the descriptor (the loop's bounds can then be cut to
    /// the owned range instead of testing every iteration).
    owned_range: Option<(String, String)>,
}

/// A DO nest run by every process, each assignment on its owner, after one
/// all-to-all per fetched reference.
pub(crate) struct FetchedNest<'a> {
    pub(crate) stmt: &'a Stmt,
    boxes: Vec<BoxRead>,
    assigns: Vec<OwnedAssign>,
    /// The number of its schedule among those computed once for the
    /// enclosing loop (`reuse_schedules`); `None`: computed on each run.
    reuse: Option<usize>,
}

impl FetchedNest<'_> {
    /// Whether its schedule is computed once for the enclosing loop.
    pub(crate) fn reuses_schedule(&self) -> bool {
        self.reuse.is_some()
    }

    /// How many DO loops deep the nest is (0: one assignment; a FORALL
    /// counts its indices).
    pub(crate) fn depth(&self) -> usize {
        fn depth(stmt: &Stmt) -> usize {
            let inner = stmt.children().into_iter().map(depth).max().unwrap_or(0);
            inner
                + match &stmt.kind {
                    StmtKind::Do { .. } => 1,
                    StmtKind::Forall { specs, .. } => specs.len(),
                    _ => 0,
                }
        }
        depth(self.stmt)
    }

    /// Whether it is a FORALL (a whole-array operation: it runs in bulk).
    pub(crate) fn is_forall(&self) -> bool {
        matches!(self.stmt.kind, StmtKind::Forall { .. })
    }

    /// The mask of the FORALL, if any.
    fn mask(&self) -> Option<&Expr> {
        match &self.stmt.kind {
            StmtKind::Forall { mask, .. } => mask.as_ref(),
            _ => None,
        }
    }
}

/// A subscript as `base + offset` (blanks removed, lower case): `k+1` is
/// (`k`, 1), `7` is (``, 7), `2*i` is (`2*i`, 0).
fn split_offset(text: &str) -> (String, i64) {
    let text: String = text.chars().filter(|it| !it.is_whitespace()).collect::<String>().to_ascii_lowercase();
    if let Ok(value) = text.parse::<i64>() {
        return (String::new(), value);
    }
    let digits = text.len() - text.trim_end_matches(|it: char| it.is_ascii_digit()).len();
    if digits > 0 && digits < text.len() {
        let sign_at = text.len() - digits - 1;
        let sign = text.as_bytes()[sign_at];
        // `a*i-1` is (`a*i`, -1); `a*3` and `(i+1)` keep their text.
        if (sign == b'+' || sign == b'-') && sign_at > 0 {
            let base = &text[..sign_at];
            if let Ok(value) = text[sign_at + 1..].parse::<i64>() {
                if top_level(base) {
                    return (base.to_string(), if sign == b'+' { value } else { -value });
                }
            }
        }
    }
    (text, 0)
}

/// Whether `base` ends outside parentheses and holds no operator binding
/// tighter than `+` at its end (`2*i` qualifies: `2*i+1` is `(2*i)+1`).
fn top_level(base: &str) -> bool {
    let mut depth = 0i32;
    for byte in base.bytes() {
        match byte {
            b'(' => depth += 1,
            b')' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return false;
        }
    }
    depth == 0
}

/// One DO loop of the nest: its variable and bounds as `split_offset` gives them.
struct LoopBounds {
    var: String,
    lo: (String, i64),
    hi: (String, i64),
    /// +1 or -1: the sign of a constant step (0: unknown).
    step_sign: i64,
    /// No step, or a step of 1 or -1: it runs through consecutive values.
    unit_step: bool,
}

impl LoopBounds {
    /// `v + c` compared with `b + k` for every value of `v`: `Some(true)`
    /// when `v + c > b + k` always, `Some(false)` when `<` always.
    fn compare(&self, c: i64, other: &(String, i64)) -> Option<bool> {
        let (low, high) = match self.step_sign {
            1 => (&self.lo, &self.hi),
            -1 => (&self.hi, &self.lo),
            _ => return None,
        };
        if low.0 == other.0 && low.1 + c > other.1 {
            return Some(true);
        }
        if high.0 == other.0 && high.1 + c < other.1 {
            return Some(false);
        }
        None
    }
}

/// Whether a subscript `read` never equals `write` over the nest's
/// iterations (`loops`): both invariant and different, or one a loop
/// variable plus a constant whose bounds keep it away from the other.
fn disjoint(read: &(String, i64), write: &(String, i64), loops: &[LoopBounds]) -> bool {
    let varies = |base: &str| loops.iter().any(|it| mentions_word(base, &it.var));
    if read.0 == write.0 && !varies(&read.0) {
        return read.1 != write.1;
    }
    let apart = |moving: &(String, i64), fixed: &(String, i64)| {
        if varies(&fixed.0) {
            return false;
        }
        loops.iter().find(|it| it.var == moving.0).is_some_and(|it| it.compare(moving.1, fixed).is_some())
    };
    apart(write, read) || apart(read, write)
}

/// Whether the box of a reference with subscripts `texts` holds only
/// elements it reads: each subscript invariant in the nest or one of its
/// loop variables plus or minus a constant (a different one per subscript), each
/// such loop running through consecutive values between bounds that no
/// loop of the nest changes, and no ownership test (`guards`) of the
/// assignment picking some of its values (a CYCLIC one). Otherwise
/// (`C(IDX(I),J)`, `A(I,I)`, a triangle, a stride) it is fetched as a list.
fn exact_box(texts: &[String], loops: &[LoopBounds], guards: &[Guard]) -> bool {
    let mut used: Vec<&LoopBounds> = Vec::new();
    for text in texts {
        let (base, _) = split_offset(text);
        let vars: Vec<&LoopBounds> = loops.iter().filter(|it| mentions_word(&base, &it.var)).collect();
        match vars.as_slice() {
            [] => {}
            [one]
                if (base == one.var || reversed(&base, &one.var))
                    && one.unit_step
                    && !used.iter().any(|it| it.var == one.var) =>
            {
                used.push(one)
            }
            _ => return false,
        }
    }
    used.iter().all(|bounds| {
        let fixed =
            !loops.iter().any(|it| mentions_word(&bounds.lo.0, &it.var) || mentions_word(&bounds.hi.0, &it.var));
        let whole = !guards.iter().any(|it| it.owned_range.is_none() && it.vars.contains(&bounds.var));
        fixed && whole
    })
}

/// Whether `base` is `c - var` with `c` free of `var` (`n+1-i`): it runs
/// through consecutive values, backwards.
fn reversed(base: &str, var: &str) -> bool {
    base.strip_suffix(var)
        .and_then(|it| it.strip_suffix('-'))
        .is_some_and(|it| !it.is_empty() && top_level(it) && !mentions_word(it, var) && !it.ends_with(['*', '/', '(']))
}

/// An element a statement writes: the array and its subscripts (`split_offset`).
type Written = (SymbolId, Vec<(String, i64)>);

/// The distributed dimensions of an array: (dimension, CYCLIC, descriptor).
fn axes(distributed: &crate::Distributed) -> Vec<(usize, bool, String)> {
    match &distributed.second {
        None => vec![(distributed.dim, distributed.cyclic, format!("hpf_d_{}", distributed.name))],
        Some(second) => vec![
            (distributed.dim, distributed.cyclic, format!("hpf_d_{}(1)", distributed.name)),
            (second.dim, second.cyclic, format!("hpf_d_{}(2)", distributed.name)),
        ],
    }
}

/// Each distributed dimension: (dimension, alignment stride, alignment
/// offset): element `i` sits on template cell `stride * i + offset`.
fn cells(distributed: &crate::Distributed) -> Vec<(usize, i64, i64)> {
    let mut cells = vec![(distributed.dim, distributed.stride, distributed.offset)];
    cells.extend(distributed.second.as_ref().map(|second| (second.dim, second.stride, second.offset)));
    cells
}

/// Whether the element `read` of `reader` sits on the template cell of the
/// element `written` of `home` along every distributed dimension (both
/// cut alike, `same_blocks`): the same subscript base, the offsets
/// compensated by the alignments (`B(I-1,J)` for `A(I,J)` when B is aligned
/// one cell further than A), so it lives on the owner that assigns.
fn same_cells(
    home: &crate::Distributed,
    written: &[(String, i64)],
    reader: &crate::Distributed,
    read: &[(String, i64)],
) -> bool {
    cells(home).into_iter().zip(cells(reader)).all(|((dim, stride, offset), (read_dim, read_stride, read_offset))| {
        let (base, c) = &written[dim];
        let (read_base, read_c) = &read[read_dim];
        dim == read_dim
            && stride == read_stride
            && base == read_base
            && stride * c + offset == read_stride * read_c + read_offset
    })
}

/// The suffix of the names of the nest's `k`-th fetched reference: `k`,
/// or `loop<schedule>_k` for a schedule kept for the enclosing loop.
fn box_tag(nest: &FetchedNest, k: usize) -> String {
    match nest.reuse {
        None => k.to_string(),
        Some(id) => format!("loop{id}_{k}"),
    }
}

/// The names a Fortran text mentions, in lower case.
fn identifiers(text: &str) -> Vec<String> {
    text.split(|it: char| !(it.is_ascii_alphanumeric() || it == '_'))
        .filter(|it| it.starts_with(|first: char| first.is_ascii_alphabetic()))
        .map(str::to_ascii_lowercase)
        .collect()
}

/// What the planner gathers while it walks the nest.
#[derive(Default)]
struct Walk<'s> {
    loops: Vec<LoopBounds>,
    assigns: Vec<(&'s Stmt, &'s Expr, &'s Expr)>,
}

impl Lowering<'_> {
    /// The fallback plan of the DO nest `stmt`, or why it does not apply.
    pub(crate) fn fetched_nest<'s>(&self, stmt: &'s Stmt) -> Result<FetchedNest<'s>, Refusal> {
        let mut walk = Walk::default();
        // A FORALL (only as the whole nest): its indices are its loops, its
        // mask is read with each assignment, every right side is evaluated
        // before any assignment (the fetched values are those from before
        // it; a construct moves them again before each assignment).
        let forall = match &stmt.kind {
            StmtKind::Forall { specs, mask, body } => {
                for spec in specs {
                    self.check_control(spec)?;
                    walk.loops.push(self.loop_bounds(spec));
                }
                for assignment in body {
                    let StmtKind::Assign { lhs, rhs } = &assignment.kind else {
                        let word =
                            self.slice(assignment.header).split_whitespace().next().unwrap_or("").to_ascii_lowercase();
                        return Err(Refusal::Statement(word));
                    };
                    walk.assigns.push((assignment, lhs, rhs));
                }
                Some((mask.as_ref(), body.len()))
            }
            _ => {
                self.walk_nest(std::slice::from_ref(stmt), &mut walk)?;
                None
            }
        };
        // The left sides: elements of distributed arrays, subscripts free of
        // them, run by their owners; or replicated variables, which every
        // process assigns in every iteration.
        let mut writes: Vec<Written> = Vec::new();
        let mut assigns = Vec::new();
        let mut owns: Vec<Option<Written>> = Vec::new();
        for (assign, lhs, _) in &walk.assigns {
            let Some((array, subscripts)) = self.element(lhs, &walk.loops)? else {
                if forall.is_some() {
                    return Err(Refusal::ForallAssignsReplicated(self.slice(lhs.range).trim().to_string()));
                }
                assigns.push(OwnedAssign {
                    stmt: assign.range.start,
                    guards: Vec::new(),
                    edits: Vec::new(),
                    cyclic_axes: Vec::new(),
                });
                owns.push(None);
                continue;
            };
            let distributed = &self.distributed[&array];
            let texts: Vec<String> = subscripts.iter().map(|it| self.one_line(*it).trim().to_string()).collect();
            let mut guards = Vec::new();
            let mut edits = Vec::new();
            let mut cyclic_axes = Vec::new();
            for (dim, cyclic, desc) in axes(distributed) {
                let vars: Vec<String> = walk
                    .loops
                    .iter()
                    .filter(|it| mentions_word(&texts[dim], &it.var))
                    .map(|it| it.var.clone())
                    .collect();
                let subscript = texts[dim].to_ascii_lowercase();
                let owned_range = (!cyclic && vars.contains(&subscript)).then(|| (subscript, desc.clone()));
                guards.push(Guard { test: format!("hpf_owns({desc}, {})", texts[dim]), vars, owned_range });
                if cyclic {
                    edits.push((subscripts[dim], format!("hpf_lx({desc}, {})", texts[dim])));
                    cyclic_axes.push((dim, desc));
                }
            }
            assigns.push(OwnedAssign { stmt: assign.range.start, guards, edits, cyclic_axes });
            let written: Vec<(String, i64)> = texts.iter().map(|it| split_offset(it)).collect();
            writes.push((array, written.clone()));
            owns.push(Some((array, written)));
        }
        let mask = forall.and_then(|it| it.0);
        if let (Some(mask), Some((_, 2..))) = (mask, forall) {
            if let Some((_, array)) =
                self.distributed_occurrences(mask.range).into_iter().find(|it| writes.iter().any(|w| w.0 == it.1))
            {
                return Err(Refusal::MaskReadsAssigned(self.distributed[&array].name.clone()));
            }
        }
        // The reads: of the element the statement writes (local), or fetched.
        let mut boxes = Vec::new();
        for (((assign, lhs, rhs), owned), own) in walk.assigns.iter().zip(&mut assigns).zip(&owns) {
            // A replicated left side's subscripts may read distributed arrays too.
            let mut occurrences: Vec<(TextRange, SymbolId, &Expr)> =
                self.distributed_occurrences(rhs.range).into_iter().map(|(name, array)| (name, array, *rhs)).collect();
            if own.is_none() {
                occurrences.extend(
                    self.distributed_occurrences(lhs.range).into_iter().map(|(name, array)| (name, array, *lhs)),
                );
            }
            // A FORALL's mask, evaluated with each assignment.
            if let Some(mask) = mask {
                occurrences.extend(
                    self.distributed_occurrences(mask.range).into_iter().map(|(name, array)| (name, array, mask)),
                );
            }
            for (name, array, expr) in occurrences {
                let Some(args) = crate::assign::find_reference(expr, name) else {
                    return Err(Refusal::NotAnElement(self.distributed[&array].name.clone()));
                };
                let subscripts = self.element_subscripts(array, args)?;
                let read: Vec<(String, i64)> =
                    subscripts.iter().map(|it| split_offset(self.one_line(*it).trim())).collect();
                if own.as_ref().is_some_and(|(lhs_array, written)| *lhs_array == array && *written == read) {
                    // Its own element: the owner's copy, at local positions.
                    for (dim, desc) in &owned.cyclic_axes {
                        let text = self.one_line(subscripts[*dim]);
                        owned.edits.push((subscripts[*dim], format!("hpf_lx({desc}, {})", text.trim())));
                    }
                    continue;
                }
                // An array the nest does not write, cut as the left side and
                // read on its element's template cell along the distributed
                // dimensions: on the owner too (`U(I,J,K)` for `W(I,J)`).
                let read_distributed = &self.distributed[&array];
                let aligned = own.as_ref().is_some_and(|(lhs_array, written)| {
                    let lhs = &self.distributed[lhs_array];
                    let dims = |it: &crate::Distributed| axes(it).into_iter().map(|axis| axis.0).collect::<Vec<_>>();
                    read_distributed.same_blocks(lhs)
                        && dims(read_distributed) == dims(lhs)
                        && !writes.iter().any(|it| it.0 == array)
                        && same_cells(lhs, written, read_distributed, &read)
                });
                if aligned {
                    for (dim, cyclic, desc) in axes(read_distributed) {
                        if cyclic {
                            let text = self.one_line(subscripts[dim]);
                            owned.edits.push((subscripts[dim], format!("hpf_lx({desc}, {})", text.trim())));
                        }
                    }
                    continue;
                }
                // (A FORALL reads the values from before it: no dependence.)
                let apart = forall.is_some()
                    || writes
                        .iter()
                        .filter(|it| it.0 == array)
                        .all(|write| read.iter().zip(write.1.iter()).any(|(r, w)| disjoint(r, w, &walk.loops)));
                if !apart {
                    return Err(Refusal::ReadsWhatItWrites(self.distributed[&array].name.clone()));
                }
                let texts: Vec<String> = subscripts.iter().map(|it| self.one_line(*it).trim().to_string()).collect();
                let list = !exact_box(&texts, &walk.loops, &owned.guards);
                boxes.push(BoxRead { array, name, subscripts, stmt: assign.range.start, list });
            }
        }
        let nest = FetchedNest { stmt, boxes, assigns, reuse: None };
        let assigned: Vec<String> = self.written(stmt).1.into_iter().map(|it| it.0.to_ascii_lowercase()).collect();
        if let Some(name) = self.inspector_reads(&nest, false).into_iter().find(|it| assigned.contains(it)) {
            return Err(Refusal::InspectorReadsAssigned(name));
        }
        Ok(nest)
    }

    /// The variables (lower case) that decide what the inspector records:
    /// those its loop bounds, IF conditions, ownership tests and fetched
    /// subscripts read, but the nest's own loop indices (it sets them); with
    /// `mask`, those a FORALL's mask reads too (before the FORALL, the
    /// inspector reads their values from before it).
    fn inspector_reads(&self, nest: &FetchedNest, mask: bool) -> Vec<String> {
        let mut texts: Vec<String> = Vec::new();
        let mut indices: Vec<String> = Vec::new();
        let mut stack = vec![nest.stmt];
        while let Some(stmt) = stack.pop() {
            match &stmt.kind {
                StmtKind::Do { control: Some(control), .. } => {
                    indices.push(control.var.key());
                    texts.push(self.one_line(control.lo.range));
                    texts.push(self.one_line(control.hi.range));
                    texts.extend(control.step.as_ref().map(|it| self.one_line(it.range)));
                }
                StmtKind::If { branches } => {
                    texts.extend(branches.iter().filter_map(|it| it.0.as_ref()).map(|it| self.one_line(it.range)));
                }
                StmtKind::Forall { specs, mask: forall_mask, .. } => {
                    for spec in specs {
                        indices.push(spec.var.key());
                        texts.push(self.one_line(spec.lo.range));
                        texts.push(self.one_line(spec.hi.range));
                        texts.extend(spec.step.as_ref().map(|it| self.one_line(it.range)));
                    }
                    texts.extend(forall_mask.as_ref().filter(|_| mask).map(|it| self.one_line(it.range)));
                }
                _ => {}
            }
            stack.extend(stmt.children());
        }
        texts.extend(nest.assigns.iter().flat_map(|it| it.guards.iter().map(|guard| guard.test.clone())));
        texts.extend(nest.boxes.iter().flat_map(|it| it.subscripts.iter().map(|s| self.one_line(*s))));
        let mut names: Vec<String> = texts.iter().flat_map(|it| identifiers(it)).collect();
        names.retain(|it| !indices.contains(it));
        names.sort();
        names.dedup();
        names
    }

    /// Marks the fetched nests among `body` (the statements of `outer`, a
    /// loop every process runs) whose schedules can be computed once for
    /// the whole loop: what decides their boxes is not assigned in it (no
    /// CALL, no REDISTRIBUTE or REALIGN, none of the variables the
    /// inspector reads), so every iteration fetches the same elements and
    /// only their values move again (a time loop pays for the inspector once).
    pub(crate) fn reuse_schedules(&mut self, outer: &Stmt, body: &mut [&mut FetchedNest]) {
        let mut stack = vec![outer];
        while let Some(stmt) = stack.pop() {
            if matches!(stmt.kind, StmtKind::Call { .. }) {
                return;
            }
            stack.extend(stmt.children());
        }
        let text = self.slice(outer.range).to_ascii_lowercase();
        if text.contains("redistribute") || text.contains("realign") {
            return;
        }
        let (arrays, written) = self.written(outer);
        let written: Vec<String> = written.into_iter().map(|it| it.0.to_ascii_lowercase()).collect();
        let mut count = 0;
        for nest in body.iter_mut() {
            if nest.boxes.is_empty() || self.inspector_reads(nest, true).iter().any(|it| written.contains(it)) {
                continue;
            }
            // A FORALL mask the inspector evaluates on distributed elements
            // the loop assigns: what is read changes with them.
            let mask_changes = nest.mask().is_some_and(|mask| {
                !nest.boxes.iter().any(|it| mask.range.contains_range(it.name))
                    && self.distributed_occurrences(mask.range).iter().any(|it| arrays.contains(&it.1))
            });
            if mask_changes {
                continue;
            }
            count += 1;
            nest.reuse = Some(count);
            let header = nest.stmt.header;
            if let Some(note) = self.notes.iter_mut().rev().find(|it| it.range == header) {
                note.message.push_str(
                    ", its schedule computed once for the enclosing loop (what decides it is not assigned there)",
                );
            }
        }
    }

    /// Checks the statements of a nest and gathers its loops and assignments.
    fn walk_nest<'s>(&self, stmts: &'s [Stmt], walk: &mut Walk<'s>) -> Result<(), Refusal> {
        for stmt in stmts {
            match &stmt.kind {
                StmtKind::Do { control: Some(control), body, .. } => {
                    self.check_control(control)?;
                    walk.loops.push(self.loop_bounds(control));
                    self.walk_nest(body, walk)?;
                }
                StmtKind::Do { control: None, .. } | StmtKind::DoWhile { .. } => return Err(Refusal::UncountedLoop),
                StmtKind::If { branches } => {
                    for (cond, body) in branches {
                        if cond.as_ref().is_some_and(|it| !self.distributed_occurrences(it.range).is_empty()) {
                            return Err(Refusal::DistributedControl);
                        }
                        self.walk_nest(body, walk)?;
                    }
                }
                StmtKind::Assign { lhs, rhs } => walk.assigns.push((stmt, lhs, rhs)),
                StmtKind::Other { .. } if self.is_continue(stmt) => {}
                _ => {
                    let word = self.slice(stmt.header).split_whitespace().next().unwrap_or("").to_ascii_lowercase();
                    return Err(Refusal::Statement(word));
                }
            }
        }
        Ok(())
    }

    pub(crate) fn is_continue(&self, stmt: &Stmt) -> bool {
        let text = self.slice(stmt.range).trim().trim_start_matches(|it: char| it.is_ascii_digit()).trim();
        text.eq_ignore_ascii_case("continue")
    }

    fn check_control(&self, control: &LoopControl) -> Result<(), Refusal> {
        let mut ranges = vec![control.lo.range, control.hi.range];
        ranges.extend(control.step.as_ref().map(|it| it.range));
        if ranges.iter().any(|it| !self.distributed_occurrences(*it).is_empty()) {
            return Err(Refusal::DistributedControl);
        }
        Ok(())
    }

    fn loop_bounds(&self, control: &LoopControl) -> LoopBounds {
        let step_sign = match &control.step {
            None => 1,
            Some(step) => match split_offset(&self.one_line(step.range)) {
                (base, value) if base.is_empty() => value.signum(),
                _ => 0,
            },
        };
        let unit_step = control.step.as_ref().is_none_or(|step| {
            let (base, value) = split_offset(&self.one_line(step.range));
            base.is_empty() && value.abs() == 1
        });
        LoopBounds {
            var: control.var.key(),
            lo: split_offset(&self.one_line(control.lo.range)),
            hi: split_offset(&self.one_line(control.hi.range)),
            step_sign,
            unit_step,
        }
    }

    /// The array and subscripts of a left side that is one element of a
    /// distributed array; `None` for a replicated variable (not one of the
    /// nest's loop indices).
    fn element(&self, lhs: &Expr, loops: &[LoopBounds]) -> Result<Option<(SymbolId, Vec<TextRange>)>, Refusal> {
        let name = match &lhs.kind {
            syntax::ExprKind::Ref { name, .. } | syntax::ExprKind::Name(name) => name,
            _ => return Err(Refusal::NotAnElement(self.slice(lhs.range).trim().to_string())),
        };
        if loops.iter().any(|it| it.var == name.key()) {
            return Err(Refusal::AssignsLoopIndex(name.text.clone()));
        }
        let Some((_, array)) = self.distributed_occurrences(name.range).into_iter().next() else {
            return Ok(None);
        };
        let syntax::ExprKind::Ref { args, .. } = &lhs.kind else {
            return Err(Refusal::NotAnElement(name.text.clone()));
        };
        Ok(Some((array, self.element_subscripts(array, args)?)))
    }

    /// The subscripts of a reference to one element of `array`, none of
    /// which reads a distributed array.
    fn element_subscripts(&self, array: SymbolId, args: &[Subscript]) -> Result<Vec<TextRange>, Refusal> {
        let distributed = &self.distributed[&array];
        let name = distributed.name.clone();
        if args.len() != distributed.lbs.len() {
            return Err(Refusal::NotAnElement(name));
        }
        let mut subscripts = Vec::new();
        for arg in args {
            let Subscript::Expr(expr) = arg else { return Err(Refusal::NotAnElement(name)) };
            if !self.distributed_occurrences(expr.range).is_empty() {
                return Err(Refusal::DistributedSubscript(name));
            }
            subscripts.push(expr.range);
        }
        Ok(subscripts)
    }

    /// The subscripts of a fetched reference, on one line, separated by commas.
    fn subscript_list(&self, read: &BoxRead) -> String {
        let texts: Vec<String> = read.subscripts.iter().map(|it| self.one_line(*it).trim().to_string()).collect();
        texts.join(", ")
    }

    /// The note of a planned nest: what it fetches.
    pub(crate) fn fetched_nest_note(&self, nest: &FetchedNest) -> String {
        let refs: Vec<String> = nest
            .boxes
            .iter()
            .map(|it| {
                let subs: Vec<String> = it.subscripts.iter().map(|s| self.one_line(*s).trim().to_string()).collect();
                format!("{}({})", self.distributed[&it.array].name, subs.join(","))
            })
            .collect();
        let fetched = if refs.is_empty() {
            "reading only its own elements".to_string()
        } else {
            format!(
                "after fetching what {} read(s) by one all-to-all per reference (inspector/executor)",
                refs.join(", ")
            )
        };
        let what = if nest.is_forall() { "FORALL" } else { "nest" };
        format!("runs on every process: each assignment of this {what} runs on the owner of its left side, {fetched}")
    }

    pub(crate) fn emit_fetched_nest(&self, out: &mut String, nest: &FetchedNest) {
        let _ =
            writeln!(out, "  ! hpf-ls: owner computes this nest, its remote reads fetched first (inspector/executor)");
        match nest.reuse {
            None => {
                let _ = writeln!(out, "  block");
                self.emit_box_declarations(out, nest);
                if !nest.boxes.is_empty() {
                    self.emit_inspection(out, nest);
                }
            }
            Some(id) => {
                // The schedule of the enclosing loop's first run of the nest.
                let _ = writeln!(out, "  if (.not. hpf_inspected_{id}) then");
                self.emit_inspection(out, nest);
                let _ = writeln!(out, "  hpf_inspected_{id} = .true.\n  end if");
            }
        }
        // A FORALL construct runs each assignment as a FORALL of its own,
        // in order: what one reads moves after the ones before it assigned.
        let parts: Vec<Option<usize>> = match &nest.stmt.kind {
            StmtKind::Forall { body, .. } if body.len() > 1 => body.iter().map(|it| Some(it.range.start)).collect(),
            _ => vec![None],
        };
        for part in parts {
            for (k, read) in nest.boxes.iter().enumerate() {
                if part.is_some_and(|it| it != read.stmt) {
                    continue;
                }
                let tag = box_tag(nest, k + 1);
                let distributed = &self.distributed[&read.array];
                let _ = writeln!(
                    out,
                    "  call hpf_nest_move{}_{}_{}({}, hpf_fs_{tag}, hpf_box_{tag})",
                    if read.list { "l" } else { "" },
                    distributed.suffix,
                    read.subscripts.len(),
                    distributed.name
                );
            }
            let _ = writeln!(out, "  ! hpf-ls: executor");
            let mut walk = NestWalk { nest, pass: Pass::Execute, only: part, vars: Vec::new(), placed: Vec::new() };
            self.emit_nest_walk(out, &mut walk, std::slice::from_ref(nest.stmt));
        }
        if nest.reuse.is_none() {
            let _ = writeln!(out, "  end block");
        }
    }

    /// Before a loop every process runs: the boxes and schedules of the
    /// fetched nests of its body that reuse them (`reuse_schedules`), in a
    /// block around the loop, none computed yet.
    pub(crate) fn emit_reused_schedules_open(&self, out: &mut String, nests: &[&FetchedNest]) {
        if nests.is_empty() {
            return;
        }
        let _ = writeln!(out, "  block");
        for nest in nests {
            self.emit_box_declarations(out, nest);
        }
        for id in nests.iter().filter_map(|it| it.reuse) {
            let _ = writeln!(out, "  logical :: hpf_inspected_{id}");
        }
        for id in nests.iter().filter_map(|it| it.reuse) {
            let _ = writeln!(out, "  hpf_inspected_{id} = .false.");
        }
    }

    /// After that loop: the end of `emit_reused_schedules_open`'s block.
    pub(crate) fn emit_reused_schedules_close(&self, out: &mut String, nests: &[&FetchedNest]) {
        if !nests.is_empty() {
            let _ = writeln!(out, "  end block");
        }
    }

    /// The box bounds, schedule and box of each fetched reference.
    fn emit_box_declarations(&self, out: &mut String, nest: &FetchedNest) {
        for (k, read) in nest.boxes.iter().enumerate() {
            let tag = box_tag(nest, k + 1);
            let distributed = &self.distributed[&read.array];
            let rank = distributed.lbs.len();
            let fortran_type = distributed.suffix.declaration();
            let _ = writeln!(out, "  integer :: hpf_bl_{tag}({rank}), hpf_bh_{tag}({rank})");
            let _ = writeln!(out, "  type(hpf_schedule) :: hpf_fs_{tag}");
            let colons = if read.list { ":".to_string() } else { distributed.colons() };
            let _ = writeln!(out, "  {fortran_type}, allocatable :: hpf_box_{tag}({colons})");
        }
    }

    /// The inspector: the box each reference reads on this process, its
    /// schedule, and the box allocated with those global bounds.
    fn emit_inspection(&self, out: &mut String, nest: &FetchedNest) {
        for k in 1..=nest.boxes.len() {
            let tag = box_tag(nest, k);
            let _ = writeln!(out, "  hpf_bl_{tag} = huge(0)\n  hpf_bh_{tag} = -huge(0)");
        }
        let _ = writeln!(out, "  ! hpf-ls: inspector");
        let mut walk = NestWalk { nest, pass: Pass::Hull, only: None, vars: Vec::new(), placed: Vec::new() };
        self.emit_nest_walk(out, &mut walk, std::slice::from_ref(nest.stmt));
        if nest.boxes.iter().any(|it| it.list) {
            // The lists: one bit per element of the box, set for those read.
            for (k, read) in nest.boxes.iter().enumerate().filter(|it| it.1.list) {
                let tag = box_tag(nest, k + 1);
                let rank = read.subscripts.len();
                let _ = writeln!(out, "  call hpf_nest_marks_{rank}(hpf_fs_{tag}, hpf_bl_{tag}, hpf_bh_{tag})");
            }
            let mut walk = NestWalk { nest, pass: Pass::Mark, only: None, vars: Vec::new(), placed: Vec::new() };
            self.emit_nest_walk(out, &mut walk, std::slice::from_ref(nest.stmt));
        }
        for (k, read) in nest.boxes.iter().enumerate() {
            let tag = box_tag(nest, k + 1);
            let distributed = &self.distributed[&read.array];
            let bounds: Vec<String> =
                (1..=read.subscripts.len()).map(|d| format!("hpf_bl_{tag}({d}):hpf_bh_{tag}({d})")).collect();
            let name = &distributed.name;
            let (descs, dims) = match &distributed.second {
                None => (format!("[hpf_d_{name}, hpf_d_{name}]"), format!("[{}, 0]", distributed.dim + 1)),
                Some(second) => (format!("hpf_d_{name}"), format!("[{}, {}]", distributed.dim + 1, second.dim + 1)),
            };
            let rank = read.subscripts.len();
            if read.list {
                let _ = writeln!(out, "  call hpf_nest_list_{rank}({descs}, {dims}, hpf_fs_{tag})");
                let _ = writeln!(out, "  allocate (hpf_box_{tag}(size(hpf_fs_{tag}%rpos)))");
                continue;
            }
            let _ = writeln!(
                out,
                "  call hpf_nest_schedule_{rank}({descs}, {dims}, hpf_bl_{tag}, hpf_bh_{tag}, hpf_fs_{tag})"
            );
            let _ = writeln!(out, "  allocate (hpf_box_{tag}({}))", bounds.join(", "));
        }
    }

    /// The nest's statements, each assignment under its ownership test;
    /// each test of one distributed dimension sits at the outermost loop
    /// that sets its variables where every assignment below shares it
    /// (`DO J` / `IF (owns column J)` / `DO I` / `IF (owns row I)`), so the
    /// inner loop tests only what it must; `walk.placed` are the tests of the
    /// enclosing IFs. The inspector (`inspect`) updates the boxes of the
    /// reads instead of assigning, and skips what reads no box.
    fn emit_nest_walk(&self, out: &mut String, walk: &mut NestWalk, stmts: &[Stmt]) {
        let nest = walk.nest;
        let pass = walk.pass;
        let inspect = pass != Pass::Execute;
        for stmt in stmts {
            let walked = |it: &&BoxRead| pass != Pass::Mark || it.list;
            if inspect
                && !nest
                    .boxes
                    .iter()
                    .filter(walked)
                    .any(|it| stmt.range.contains_range(it.name) || it.stmt == stmt.range.start)
            {
                continue;
            }
            match &stmt.kind {
                StmtKind::Do { control: Some(control), body, .. } => {
                    self.emit_nest_loop(out, walk, stmt.range, control, &mut |out, walk| {
                        self.emit_nest_walk(out, walk, body)
                    });
                }
                StmtKind::Forall { specs, body, .. } => {
                    // Its indices are its own: declared in a block.
                    let names: Vec<&str> = specs.iter().map(|it| it.var.text.as_str()).collect();
                    let _ = writeln!(out, "  block\n  integer :: {}", names.join(", "));
                    self.emit_forall_loops(out, walk, stmt.range, specs, body);
                    let _ = writeln!(out, "  end block");
                }
                StmtKind::If { branches } => {
                    for (idx, (cond, body)) in branches.iter().enumerate() {
                        let keyword = if idx == 0 { "if" } else { "else if" };
                        match cond {
                            Some(cond) => {
                                let _ = writeln!(out, "  {keyword} ({}) then", self.one_line(cond.range));
                            }
                            None => {
                                let _ = writeln!(out, "  else");
                            }
                        }
                        self.emit_nest_walk(out, walk, body);
                    }
                    let _ = writeln!(out, "  end if");
                }
                StmtKind::Assign { .. } => self.emit_nest_assignment(out, walk, stmt),
                _ => {}
            }
        }
    }

    /// The loops of a FORALL's indices, the last one outermost (the first
    /// index runs fastest, down a column), around its assignments.
    fn emit_forall_loops(
        &self,
        out: &mut String,
        walk: &mut NestWalk,
        range: TextRange,
        specs: &[LoopControl],
        body: &[Stmt],
    ) {
        match specs.split_last() {
            None => self.emit_nest_walk(out, walk, body),
            Some((last, rest)) => self.emit_nest_loop(out, walk, range, last, &mut |out, walk| {
                self.emit_forall_loops(out, walk, range, rest, body)
            }),
        }
    }

    /// One loop of the nest (a DO loop or a FORALL index over `range`),
    /// with the ownership tests every assignment below shares.
    fn emit_nest_loop(
        &self,
        out: &mut String,
        walk: &mut NestWalk,
        range: TextRange,
        control: &LoopControl,
        inner: &mut dyn FnMut(&mut String, &mut NestWalk),
    ) {
        let nest = walk.nest;
        walk.vars.push(control.var.key());
        let below: Vec<&OwnedAssign> = nest
            .assigns
            .iter()
            .filter(|it| range.contains(it.stmt) && walk.only.is_none_or(|only| only == it.stmt))
            .collect();
        let mut shared: Vec<&Guard> = below.first().map_or(Vec::new(), |first| {
            first
                .guards
                .iter()
                .filter(|guard| {
                    !walk.placed.contains(&guard.test)
                        && guard.vars.iter().all(|it| walk.vars.contains(it))
                        && below.iter().all(|it| it.guards.iter().any(|other| other.test == guard.test))
                })
                .collect()
        });
        let (lo, hi) = (self.one_line(control.lo.range), self.one_line(control.hi.range));
        // A unit-step loop over the BLOCK subscript of every
        // assignment below runs the owned range only, and leaves
        // its variable as the whole loop would.
        let cut = shared.iter().position(|guard| {
            control.step.is_none() && guard.owned_range.as_ref().is_some_and(|(var, _)| *var == control.var.key())
        });
        let cut = cut.map(|at| shared.remove(at));
        match cut.and_then(|it| it.owned_range.as_ref()) {
            Some((_, desc)) => {
                let _ = writeln!(
                    out,
                    "  do {} = max({lo}, hpf_owned_lo({desc})), min({hi}, hpf_owned_hi({desc}))",
                    control.var.text
                );
            }
            None => {
                let step = control.step.as_ref().map_or(String::new(), |it| format!(", {}", self.one_line(it.range)));
                let _ = writeln!(out, "  do {} = {lo}, {hi}{step}", control.var.text);
            }
        }
        let depth = walk.placed.len();
        walk.placed.extend(cut.map(|it| it.test.clone()));
        let shared: Vec<String> = shared.into_iter().map(|it| it.test.clone()).collect();
        if shared.is_empty() {
            inner(out, walk);
        } else {
            let _ = writeln!(out, "  if ({}) then", shared.join(" .and. "));
            let depth = walk.placed.len();
            walk.placed.extend(shared);
            inner(out, walk);
            walk.placed.truncate(depth);
            let _ = writeln!(out, "  end if");
        }
        walk.placed.truncate(depth);
        walk.vars.pop();
        let _ = writeln!(out, "  end do");
        if cut.is_some() {
            let _ = writeln!(out, "  {} = max({lo}, {hi} + 1)", control.var.text);
        }
    }

    /// An assignment of the nest under its ownership test (and a FORALL's
    /// mask): the executor's, or the inspector's recording of its reads.
    /// The inspector evaluates a mask that reads no fetched value; else it
    /// records every owned iteration's reads that lie inside their arrays
    /// (a mask may keep a subscript out of bounds).
    fn emit_nest_assignment(&self, out: &mut String, walk: &NestWalk, stmt: &Stmt) {
        let (nest, pass) = (walk.nest, walk.pass);
        let inspect = pass != Pass::Execute;
        if walk.only.is_some_and(|it| it != stmt.range.start) {
            return;
        }
        let Some(owned) = nest.assigns.iter().find(|it| it.stmt == stmt.range.start) else { return };
        let tests: Vec<&str> =
            owned.guards.iter().map(|it| it.test.as_str()).filter(|it| !walk.placed.iter().any(|p| p == it)).collect();
        let guard = (!tests.is_empty()).then(|| tests.join(" .and. "));
        if let Some(guard) = &guard {
            let _ = writeln!(out, "  if ({guard}) then");
        }
        let mine = |read: &&BoxRead| read.stmt == stmt.range.start;
        let mask = nest.mask();
        let mask_fetches =
            mask.is_some_and(|mask| nest.boxes.iter().filter(mine).any(|it| mask.range.contains_range(it.name)));
        let one_line = |text: String| text.replace(['&', '\n'], " ").trim().to_string();
        // The executor's edits: local positions, boxes.
        let mut edits = owned.edits.clone();
        if pass == Pass::Execute {
            for (k, read) in nest.boxes.iter().enumerate().filter(|it| mine(&it.1)) {
                let tag = box_tag(nest, k + 1);
                if !read.list {
                    edits.push((read.name, format!("hpf_box_{tag}")));
                    continue;
                }
                // `c(idx(i), j)` reads `hpf_box_1(hpf_at_2(hpf_fs_1, idx(i), j))`.
                let rank = read.subscripts.len();
                edits.push((read.name, format!("hpf_box_{tag}(hpf_at_{rank}")));
                let first = read.subscripts[0];
                let last = read.subscripts[rank - 1];
                let text = |range: TextRange| self.one_line(range).trim().to_string();
                if rank == 1 {
                    edits.push((first, format!("hpf_fs_{tag}, {})", text(first))));
                } else {
                    edits.push((first, format!("hpf_fs_{tag}, {}", text(first))));
                    edits.push((last, format!("{})", text(last))));
                }
            }
        }
        let masked = mask.filter(|_| pass == Pass::Execute || !mask_fetches);
        if let Some(mask) = masked {
            let _ = writeln!(out, "  if ({}) then", one_line(self.edited(mask.range, &edits)));
        }
        // Out of its array, a read the inspector cannot know the mask keeps out.
        let in_bounds = |read: &BoxRead| -> Option<String> {
            if !mask_fetches {
                return None;
            }
            let distributed = &self.distributed[&read.array];
            let tests: Vec<String> = read
                .subscripts
                .iter()
                .enumerate()
                .map(|(d, it)| {
                    let text = self.one_line(*it);
                    let text = text.trim();
                    format!("{} <= ({text}) .and. ({text}) <= {}", distributed.lbs[d], distributed.ubs[d])
                })
                .collect();
            Some(tests.join(" .and. "))
        };
        if pass == Pass::Mark {
            for (k, read) in nest.boxes.iter().enumerate().filter(|it| mine(&it.1) && it.1.list) {
                let tag = box_tag(nest, k + 1);
                let inside = in_bounds(read);
                if let Some(inside) = &inside {
                    let _ = writeln!(out, "  if ({inside}) then");
                }
                let _ = writeln!(
                    out,
                    "    call hpf_nest_mark_{}(hpf_fs_{tag}, {})",
                    read.subscripts.len(),
                    self.subscript_list(read)
                );
                if inside.is_some() {
                    let _ = writeln!(out, "  end if");
                }
            }
        } else if inspect {
            for (k, read) in nest.boxes.iter().enumerate().filter(|it| mine(&it.1)) {
                let tag = box_tag(nest, k + 1);
                let inside = in_bounds(read);
                if let Some(inside) = &inside {
                    let _ = writeln!(out, "  if ({inside}) then");
                }
                for (d, subscript) in read.subscripts.iter().enumerate() {
                    let d = d + 1;
                    let text = self.one_line(*subscript);
                    let text = text.trim();
                    let _ = writeln!(out, "    hpf_bl_{tag}({d}) = min(hpf_bl_{tag}({d}), {text})");
                    let _ = writeln!(out, "    hpf_bh_{tag}({d}) = max(hpf_bh_{tag}({d}), {text})");
                }
                if inside.is_some() {
                    let _ = writeln!(out, "  end if");
                }
            }
        } else {
            let _ = writeln!(out, "    {}", self.edited(stmt.range, &edits).trim());
        }
        if masked.is_some() {
            let _ = writeln!(out, "  end if");
        }
        if guard.is_some() {
            let _ = writeln!(out, "  end if");
        }
    }
}

/// The state of one walk of a nest's statements.
struct NestWalk<'n, 's> {
    nest: &'n FetchedNest<'s>,
    pass: Pass,
    /// A FORALL construct's executor runs one assignment at a time (the
    /// start of its range).
    only: Option<usize>,
    /// The loop variables set around (lower case).
    vars: Vec<String>,
    /// The ownership tests of the enclosing IFs and cut loops.
    placed: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::tests_support::*;
    use super::*;

    #[test]
    fn refusals_say_why() {
        assert_eq!(
            Refusal::ReadsWhatItWrites("y".to_string()).message(),
            "it reads y at elements that its own writes may reach"
        );
        assert_eq!(Refusal::Statement("goto".to_string()).message(), "it holds a `goto` statement");
    }

    fn fallback_lines(notes: &[String]) -> Vec<String> {
        notes.iter().filter(|it| it.contains("runs on every process: each assignment")).cloned().collect()
    }

    #[test]
    fn an_lu_update_runs_on_the_owners_of_its_columns_after_fetching_column_k_and_row_k() {
        let (notes, source) = lower(&program(
            "  do k = 1, n - 1\n    do j = k + 1, n\n      do i = k + 1, n\n        a(i, j) = a(i, j) - a(i, k) * a(k, j) + r(j, i)\n      end do\n    end do\n  end do\n",
        ));
        // The nest (line 13) is the fallback: the reads of column K and row K
        // are apart from the columns K+1..N it writes; R is read transposed.
        let fallback = fallback_lines(&notes);
        assert_eq!(fallback.len(), 1, "{notes:?}");
        assert!(fallback[0].starts_with("13: "), "{notes:?}");
        assert!(fallback[0].contains("a(i,k), a(k,j), r(j,i)"), "{notes:?}");
        assert!(!notes.iter().any(|it| it.contains("one process")), "{notes:?}");
        // The ownership test sits in the J loop, not in the inner loop; the
        // left side and its own read go to local positions.
        assert!(source.contains("do j = k + 1, n\n  if (hpf_owns(hpf_d_a, j)) then\n  do i = k + 1, n"), "{source}");
        // Column K below the diagonal is read whole: its box. Each process
        // reads row K at its own columns J only, and R at its rows J: lists.
        assert!(
            source.contains(
                "a(i, hpf_lx(hpf_d_a, j)) = a(i, hpf_lx(hpf_d_a, j)) - hpf_box_1(i, k) * hpf_box_2(hpf_at_2(hpf_fs_2, k, j))"
            ),
            "{source}"
        );
        assert!(source.contains("    call hpf_nest_mark_2(hpf_fs_2, k, j)\n"), "{source}");
        assert_eq!(source.matches("call hpf_nest_schedule_2(").count(), 1, "{source}");
        assert_eq!(source.matches("call hpf_nest_list_2(").count(), 2, "{source}");
        assert_eq!(source.matches("call hpf_nest_movel_r8_2(").count(), 2, "{source}");
    }

    #[test]
    fn a_triangular_solve_carries_a_dependence_and_stays_off_the_fallback() {
        // Y(J) for J < I is written by earlier iterations of the same nest.
        let (notes, _) = lower(&program(
            "  do i = 1, n\n    y(i) = x(i)\n    do j = 1, n\n      if (j < i) y(i) = y(i) - a(i, j) * y(j)\n    end do\n  end do\n",
        ));
        assert!(notes.iter().any(|it| it.starts_with("12: ") && it.contains("runs on one process")), "{notes:?}");
        assert!(fallback_lines(&notes).is_empty(), "{notes:?}");
    }

    #[test]
    fn replicated_left_sides_run_on_every_process_from_fetched_values() {
        let (notes, source) = lower(&program("  do i = 1, n\n    v(i) = a(i, 3) + y(n + 1 - i)\n  end do\n"));
        let fallback = fallback_lines(&notes);
        assert!(fallback.len() == 1 && fallback[0].starts_with("12: "), "{notes:?}");
        // No ownership test: every process assigns V.
        assert!(source.contains("    v(i) = hpf_box_1(i, 3) + hpf_box_2(n + 1 - i)"), "{source}");
        assert!(!source.contains("hpf_owns(hpf_d_v"), "{source}");
    }

    #[test]
    fn conditions_on_distributed_data_keep_the_nest_off_the_fallback() {
        let (notes, _) = lower(&program(
            "  do k = 1, 2\n    do i = 1, n\n      do j = 1, n\n        if (a(i, j) > 0.0d0) a(i, j) = a(i, j) + r(j, i)\n      end do\n    end do\n    y(k) = y(k) + 1.0d0\n  end do\n",
        ));
        assert!(notes.iter().any(|it| it.contains("runs on one process")), "{notes:?}");
        assert!(fallback_lines(&notes).is_empty(), "{notes:?}");
    }

    #[test]
    fn a_read_on_another_template_cell_is_fetched_and_one_on_the_same_cell_is_local() {
        // A(I,J) sits on T(I+1,J), B(I,J) on T(I,J): B(I,J) lives one cell
        // left of A(I,J) (on another process at a block edge), B(I+1,J) on it.
        let text = "program p\n  implicit none\n  integer :: a(8, 8), b(8, 8), i, j\n!HPF$ PROCESSORS P(2, 2)\n!HPF$ TEMPLATE T(9, 8)\n!HPF$ DISTRIBUTE T(BLOCK, CYCLIC(2)) ONTO P\n!HPF$ ALIGN A(I, J) WITH T(I + 1, J)\n!HPF$ ALIGN B(I, J) WITH T(I, J)\n  a = 1\n  b = 2\n  do j = 3, 8, 3\n    do i = 2, 8, 2\n      a(i, j) = a(i, j) + b(i, j) + b(i + 1, j) + b(i, j - 2)\n    end do\n  end do\n  print *, a\nend program p\n";
        let (notes, source) = lower(text);
        let fallback = fallback_lines(&notes);
        assert!(fallback.len() == 1 && fallback[0].contains("fetching what b(i,j), b(i,j - 2) read(s)"), "{notes:?}");
        assert!(
            source.contains(
                "+ hpf_box_1(hpf_at_2(hpf_fs_1, i, j)) + b(i + 1, hpf_lx(hpf_d_b(2), j)) + hpf_box_2(hpf_at_2(hpf_fs_2, i, j - 2))"
            ),
            "{source}"
        );
    }

    /// A time loop around the LU-shaped update of `program` (line 13 on),
    /// with `extra` at the end of its body.
    fn time_loop(extra: &str) -> String {
        program(&format!(
            "  do k = 1, 3\n    do j = 2, n\n      do i = 1, n\n        a(i, j) = a(i, j) - r(j, i) * x(j)\n      end do\n    end do\n{extra}  end do\n"
        ))
    }

    #[test]
    fn a_time_loop_computes_the_schedule_once_while_what_decides_it_is_unchanged() {
        let (notes, source) = lower(&time_loop("    r = r + 1.0d0\n"));
        let fallback = fallback_lines(&notes);
        assert!(fallback.len() == 1 && fallback[0].starts_with("13: "), "{notes:?}");
        assert!(
            fallback[0]
                .ends_with("its schedule computed once for the enclosing loop (what decides it is not assigned there)"),
            "{notes:?}"
        );
        // Declared around the loop, inspected in its first iteration, moved in each.
        let around = source.find("  logical :: hpf_inspected_1\n  hpf_inspected_1 = .false.").expect(&source);
        let time_loop = source.find("do k = 1, 3").unwrap();
        let inspect = source.find("if (.not. hpf_inspected_1) then").expect(&source);
        let schedule = source.find("call hpf_nest_list_2([hpf_d_r, hpf_d_r], ").expect(&source);
        let moved = source.find("call hpf_nest_movel_r8_2(r, hpf_fs_loop1_1, hpf_box_loop1_1)").expect(&source);
        assert!(around < time_loop && time_loop < inspect && inspect < schedule && schedule < moved, "{source}");
    }

    #[test]
    fn a_time_loop_that_may_change_what_decides_the_schedule_inspects_every_iteration() {
        // The nest's bounds read V(1), which the loop assigns; a CALL may assign anything.
        for extra in ["    v(1) = 0.0d0\n", "    call report(i)\n"] {
            let text = time_loop(extra).replace("do j = 2, n", "do j = 2, n - int(v(1))");
            let (notes, source) = lower(&text);
            let fallback = fallback_lines(&notes);
            assert!(fallback.len() == 1 && !fallback[0].contains("schedule computed once"), "{extra}: {notes:?}");
            assert!(!source.contains("hpf_inspected_"), "{extra}: {source}");
        }
        let (notes, _) = lower(&time_loop("    v(1) = 0.0d0\n"));
        assert!(fallback_lines(&notes)[0].contains("schedule computed once"), "{notes:?}");
    }

    #[test]
    fn a_subscript_the_nest_assigns_keeps_it_off_the_fallback() {
        // K = ... then R(K, I): the inspector would record a stale K.
        let (notes, _) = lower(&program("  do i = 1, n\n    k = mod(i, 3) + 1\n    y(i) = r(k, i)\n  end do\n"));
        assert!(fallback_lines(&notes).is_empty(), "{notes:?}");
        assert_eq!(
            Refusal::InspectorReadsAssigned("k".to_string()).message(),
            "what it fetches depends on k, which it assigns"
        );
    }

    #[test]
    fn a_loop_over_the_block_subscript_runs_the_owned_range_and_ends_as_the_whole_loop() {
        // B is (BLOCK, BLOCK): no ownership test in the loops, each cut to the owned range.
        let text = "program p\n  implicit none\n  integer, parameter :: n = 12, m = 5\n  real :: b(n, m), c(n, m)\n  integer :: idx(n), i, j\n!HPF$ PROCESSORS P(2, 2)\n!HPF$ DISTRIBUTE B(BLOCK, BLOCK) ONTO P\n!HPF$ DISTRIBUTE C(CYCLIC, BLOCK) ONTO P\n  idx = 3\n  c = 1.0\n  b = 0.0\n  do j = 1, m\n    do i = 2, n\n      b(i, j) = b(i, j) + c(idx(i), j)\n    end do\n  end do\n  print *, b, i, j\nend program p\n";
        let (notes, source) = lower(text);
        assert_eq!(fallback_lines(&notes).len(), 1, "{notes:?}");
        assert!(source.contains("  ! hpf-ls: executor\n  do j = max(1, hpf_owned_lo(hpf_d_b(2))), min(m, hpf_owned_hi(hpf_d_b(2)))\n  do i = max(2, hpf_owned_lo(hpf_d_b(1))), min(n, hpf_owned_hi(hpf_d_b(1)))\n    b(i, j) = b(i, j) + hpf_box_1(hpf_at_2(hpf_fs_1, idx(i), j))\n  end do\n  i = max(2, n + 1)\n  end do\n  j = max(1, m + 1)\n"), "{source}");
        assert!(!source.contains("hpf_owns(hpf_d_b"), "{source}");
    }

    fn bounds(var: &str, lo: &str, hi: &str) -> LoopBounds {
        LoopBounds { var: var.to_string(), lo: split_offset(lo), hi: split_offset(hi), step_sign: 1, unit_step: true }
    }

    /// Whether the reference with subscripts `texts` is fetched as a box in
    /// the nest `loops` (`guards`: CYCLIC ownership tests on those variables).
    fn boxed(texts: &[&str], loops: &[LoopBounds], cyclic: &[&str]) -> bool {
        let texts: Vec<String> = texts.iter().map(|it| it.to_string()).collect();
        let guards: Vec<Guard> = cyclic
            .iter()
            .map(|var| Guard { test: format!("hpf_owns(d, {var})"), vars: vec![var.to_string()], owned_range: None })
            .collect();
        exact_box(&texts, loops, &guards)
    }

    #[test]
    fn boxes_where_they_are_exact_and_lists_elsewhere() {
        let square = [bounds("j", "1", "M"), bounds("i", "1", "N")];
        // Affine, unit stride, one loop variable per subscript: the box is what is read.
        assert!(boxed(&["i", "j"], &square, &[]));
        assert!(boxed(&["i + 1", "j - 2"], &square, &[]));
        assert!(boxed(&["N + 1 - i", "3"], &square, &[]));
        assert!(boxed(&["i", "k"], &square, &[]));
        // Irregular rows: C(IDX(I),J).
        assert!(!boxed(&["idx(i)", "j"], &square, &[]));
        // The diagonal A(I,I), a strided read A(2*I,J).
        assert!(!boxed(&["i", "i"], &square, &[]));
        assert!(!boxed(&["2*i", "j"], &square, &[]));
        // A triangle: J = I+1, N.
        let triangle = [bounds("i", "1", "N"), bounds("j", "I+1", "N")];
        assert!(!boxed(&["i", "j"], &triangle, &[]));
        assert!(boxed(&["i", "n + 1"], &triangle, &[]));
        // A step of 2, or the iterations of one CYCLIC owner: every other index.
        let mut strided = bounds("i", "1", "N");
        strided.unit_step = false;
        assert!(!boxed(&["i"], &[strided], &[]));
        assert!(!boxed(&["i", "j - 1"], &square, &["j"]));
        assert!(boxed(&["i", "j - 1"], &square, &["i2"]));
    }

    #[test]
    fn an_irregular_gather_fetches_the_distinct_elements_it_reads() {
        let text = "program p\n  implicit none\n  integer, parameter :: n = 12, m = 5\n  real :: b(n, m), c(n, m)\n  integer :: idx(n), i, j\n!HPF$ PROCESSORS P(2, 1)\n!HPF$ DISTRIBUTE B(BLOCK, BLOCK) ONTO P\n!HPF$ DISTRIBUTE C(CYCLIC, BLOCK) ONTO P\n  idx = 3\n  c = 1.0\n  do j = 1, m\n    do i = 1, n\n      b(i, j) = c(idx(i), j) + c(i, m + 1 - j)\n    end do\n  end do\n  print *, b\nend program p\n";
        let (notes, source) = lower(text);
        assert_eq!(fallback_lines(&notes).len(), 1, "{notes:?}");
        // C(IDX(I),J): the hull, one bit per element, the marks, the list.
        let hull = source.find("    hpf_bl_1(1) = min(hpf_bl_1(1), idx(i))").expect(&source);
        let marks = source.find("  call hpf_nest_marks_2(hpf_fs_1, hpf_bl_1, hpf_bh_1)").expect(&source);
        let mark = source.find("    call hpf_nest_mark_2(hpf_fs_1, idx(i), j)").expect(&source);
        let list = source.find("  call hpf_nest_list_2(hpf_d_c, [1, 2], hpf_fs_1)").expect(&source);
        let allocated = source.find("  allocate (hpf_box_1(size(hpf_fs_1%rpos)))").expect(&source);
        assert!(hull < marks && marks < mark && mark < list && list < allocated, "{source}");
        assert!(source.contains("  real, allocatable :: hpf_box_1(:)\n"), "{source}");
        assert!(source.contains("  call hpf_nest_movel_r4_2(c, hpf_fs_1, hpf_box_1)"), "{source}");
        // C(I,M+1-J) is read whole in its box: no marks.
        assert!(!source.contains("hpf_nest_mark_2(hpf_fs_2"), "{source}");
        assert!(source.contains("  call hpf_nest_move_r4_2(c, hpf_fs_2, hpf_box_2)"), "{source}");
        assert!(
            source.contains("b(i, j) = hpf_box_1(hpf_at_2(hpf_fs_1, idx(i), j)) + hpf_box_2(i, m + 1 - j)"),
            "{source}"
        );
    }

    #[test]
    fn subscripts_split_into_base_and_offset() {
        assert_eq!(split_offset("K + 1"), ("k".to_string(), 1));
        assert_eq!(split_offset("2*I-1"), ("2*i".to_string(), -1));
        assert_eq!(split_offset("7"), (String::new(), 7));
        assert_eq!(split_offset("(I+1)"), ("(i+1)".to_string(), 0));
        assert_eq!(split_offset("N-I"), ("n-i".to_string(), 0));
    }

    #[test]
    fn a_column_left_of_the_updated_ones_is_disjoint() {
        // A(I,K) against A(I,J), J = K+1, N.
        let loops = [bounds("j", "K+1", "N"), bounds("i", "K+1", "N")];
        assert!(disjoint(&split_offset("K"), &split_offset("J"), &loops));
        // A(I,K+1) may be written (J = K+1).
        assert!(!disjoint(&split_offset("K+1"), &split_offset("J"), &loops));
        // Two loop variables: no proof.
        assert!(!disjoint(&split_offset("I"), &split_offset("J"), &loops));
        // Invariant and different.
        assert!(disjoint(&split_offset("K"), &split_offset("K+2"), &loops));
        assert!(!disjoint(&split_offset("K"), &split_offset("K"), &loops));
    }
}

#[cfg(test)]
mod forall_tests {
    use super::tests_support::*;
    use super::Refusal;

    fn fallback_lines(notes: &[String]) -> Vec<String> {
        notes.iter().filter(|it| it.contains("each assignment of this FORALL runs on the owner")).cloned().collect()
    }

    #[test]
    fn a_masked_forall_reading_its_home_reversed_runs_on_the_owners() {
        let (notes, source) = lower(&program("  forall (i = 1:n, y(i) > 0.0d0) y(i) = y(n + 1 - i) * 0.5d0\n"));
        let fallback = fallback_lines(&notes);
        assert!(
            fallback.len() == 1 && fallback[0].starts_with("12: ") && fallback[0].contains("y(n + 1 - i)"),
            "{notes:?}"
        );
        assert!(!notes.iter().any(|it| it.contains("one process")), "{notes:?}");
        // Its index is its own (a block); the inspector evaluates the mask,
        // which reads only the owner's element, under the ownership test.
        assert!(
            source.contains("  ! hpf-ls: inspector\n  block\n  integer :: i\n  do i = 1, n\n  if (hpf_owns(hpf_d_y, i)) then\n  if (y(hpf_lx(hpf_d_y, i)) > 0.0d0) then\n    hpf_bl_1(1) = min(hpf_bl_1(1), n + 1 - i)"),
            "{source}"
        );
        assert!(
            source.contains("  if (hpf_owns(hpf_d_y, i)) then\n  if (y(hpf_lx(hpf_d_y, i)) > 0.0d0) then\n    y(hpf_lx(hpf_d_y, i)) = hpf_box_1(hpf_at_1(hpf_fs_1, n + 1 - i)) * 0.5d0\n  end if\n  end if"),
            "{source}"
        );
    }

    #[test]
    fn a_mask_reading_fetched_values_is_left_to_the_executor_and_the_inspector_stays_in_bounds() {
        // Y(I-1) is out of bounds for I = 1, which the mask keeps out.
        let (notes, source) =
            lower(&program("  forall (i = 1:n, r(i, 2) > 0.0d0 .and. i > 1) y(i) = y(i - 1) + r(i, 1)\n"));
        assert_eq!(fallback_lines(&notes).len(), 1, "{notes:?}");
        let executor = source.find("  ! hpf-ls: executor").expect(&source);
        let inspector = &source[..executor];
        assert!(!inspector.contains("i > 1"), "{source}");
        assert!(
            inspector.contains("  if (1 <= (i - 1) .and. (i - 1) <= 12) then\n    call hpf_nest_mark_1("),
            "{source}"
        );
        assert!(
            source[executor..].contains(" > 0.0d0 .and. i > 1) then\n    y(hpf_lx(hpf_d_y, i)) = hpf_box_1("),
            "{source}"
        );
    }

    #[test]
    fn a_forall_construct_moves_what_each_assignment_reads_after_the_ones_before_it() {
        // The second assignment reads X where the first assigned it.
        let (notes, source) =
            lower(&program("  forall (i = 2:n)\n    x(i) = y(n + 2 - i)\n    y(i) = x(i - 1) + y(i)\n  end forall\n"));
        let fallback = fallback_lines(&notes);
        assert!(fallback.len() == 1 && fallback[0].starts_with("12: "), "{notes:?}");
        let first_move = source.find("call hpf_nest_movel_r8_1(y, hpf_fs_1, hpf_box_1)").expect(&source);
        let first = source.find("  ! hpf-ls: executor").expect(&source);
        let second_move = source.find("call hpf_nest_movel_r8_1(x, hpf_fs_2, hpf_box_2)").expect(&source);
        let second = source.rfind("  ! hpf-ls: executor").unwrap();
        assert!(first_move < first && first < second_move && second_move < second, "{source}");
        assert!(source[first..second_move].contains("x(hpf_lx(hpf_d_x, i)) = hpf_box_1("), "{source}");
        assert!(!source[first..second_move].contains("y(hpf_lx(hpf_d_y, i)) ="), "{source}");
        assert!(
            source[second..]
                .contains("y(hpf_lx(hpf_d_y, i)) = hpf_box_2(hpf_at_1(hpf_fs_2, i - 1)) + y(hpf_lx(hpf_d_y, i))"),
            "{source}"
        );
    }

    #[test]
    fn two_indices_loop_with_the_first_innermost_over_the_owned_rows() {
        let (notes, source) = lower(&program("  forall (i = 1:n, j = 1:n, i /= j) r(i, j) = r(j, i)\n"));
        assert_eq!(fallback_lines(&notes).len(), 1, "{notes:?}");
        assert!(
            source.contains("  block\n  integer :: i, j\n  do j = 1, n\n  do i = max(1, hpf_owned_lo(hpf_d_r)), min(n, hpf_owned_hi(hpf_d_r))\n  if (i /= j) then\n    r(i, j) = hpf_box_1(j, i)\n"),
            "{source}"
        );
    }

    #[test]
    fn a_time_loop_reuses_the_schedule_unless_it_assigns_what_the_inspected_mask_reads() {
        // The inspector evaluates the mask on the owners' elements: Y changes
        // in the loop (the FORALL assigns it), X does not.
        for (mask, reused) in [("y(i) > 1.0d0", false), ("x(i) > 1.0d0", true)] {
            let (notes, source) = lower(&program(&format!(
                "  do k = 1, 3\n    forall (i = 1:n, {mask}) y(i) = y(n + 1 - i)\n    v = v + 1.0d0\n  end do\n"
            )));
            let fallback = fallback_lines(&notes);
            assert!(fallback.len() == 1 && fallback[0].starts_with("13: "), "{mask}: {notes:?}");
            assert_eq!(fallback[0].contains("schedule computed once"), reused, "{mask}: {notes:?}");
            assert_eq!(source.contains("hpf_inspected_1"), reused, "{mask}: {source}");
        }
    }

    #[test]
    fn replicated_left_sides_and_masks_a_construct_assigns_stay_on_rank_zero() {
        for body in [
            "  forall (i = 1:n) v(i) = v(n + 1 - i) + y(i)\n",
            "  forall (i = 1:n, y(i) > 0.0d0)\n    y(i) = x(n + 1 - i)\n    x(i) = y(n + 1 - i)\n  end forall\n",
        ] {
            let (notes, _) = lower(&program(body));
            assert!(fallback_lines(&notes).is_empty(), "{body}: {notes:?}");
            assert!(notes.iter().any(|it| it.starts_with("12: runs on one process")), "{body}: {notes:?}");
        }
        assert_eq!(
            Refusal::ForallAssignsReplicated("v(i)".to_string()).message(),
            "it is a FORALL that assigns the replicated v(i)"
        );
        assert_eq!(
            Refusal::MaskReadsAssigned("y".to_string()).message(),
            "its mask reads y, which an assignment of the construct assigns"
        );
    }
}

#[cfg(test)]
mod tests_support {
    use analysis::model::ModelConfig;
    use syntax::{LineIndex, SourceForm};

    /// The notes of a program as `line: message`, and the generated source.
    pub(super) fn lower(text: &str) -> (Vec<String>, String) {
        let analysis = analysis::analyze(text, SourceForm::Free, ModelConfig { number_of_processors: None });
        let generated = crate::lower(&analysis, text).unwrap_or_else(|errors| panic!("refused: {errors:?}"));
        let index = LineIndex::new(text);
        let notes = generated
            .notes
            .iter()
            .map(|it| format!("{}: {}", index.line_col(text, it.range.start).0 + 1, it.message))
            .collect();
        (notes, generated.source)
    }

    /// A program over A (columns CYCLIC), X and Y aligned with its columns,
    /// R (rows BLOCK) and the replicated V; `body` starts on line 12.
    pub(super) fn program(body: &str) -> String {
        format!(
            "program p\n  implicit none\n  integer, parameter :: n = 12\n  double precision :: a(n, n), x(n), y(n), r(n, n), v(n)\n  integer :: i, j, k\n!HPF$ DISTRIBUTE A(*, CYCLIC)\n!HPF$ ALIGN (:) WITH A(*, :) :: X, Y\n!HPF$ DISTRIBUTE R(BLOCK, *)\n  a = 1.0d0\n  x = 2.0d0\n  r = 3.0d0\n{body}  print *, sum(a), sum(y), sum(r), sum(v)\nend program p\n"
        )
    }
}
