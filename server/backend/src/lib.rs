//! The MPI backend: an analysed HPF program in, one SPMD Fortran 2008
//! source using `mpi_f08` out (plus the runtime module of `runtime.rs`),
//! and the driver that compiles and runs it.
//!
//! What it lowers today (everything else is refused with an error at its
//! line, never lowered wrongly):
//! - one main program; distributed arrays of rank 1 to 7 of INTEGER(1/2/4/8),
//!   REAL(4/8/16), COMPLEX(4/8), LOGICAL(1/2/4/8) or CHARACTER(len=n) with a
//!   literal length, the kind as the model folds it (`element_type.rs`; a
//!   kind that does not fold or has no MPI datatype, such as REAL(10), is
//!   refused, never narrowed) with one BLOCK, BLOCK(m), CYCLIC or
//!   CYCLIC(m) dimension over a 1-D arrangement, or two such dimensions
//!   over a 2-D grid (`grid.rs`, `grid/cyclic.rs`), aligned through templates
//!   and chains with any offset, any stride along a BLOCK dimension
//!   (negative: reversed) and transposed; collapsed dimensions, constants and
//!   `*` in the target (`embed.rs`); replicated scalars and arrays;
//!   ALLOCATABLE ones of the main program and modules too, laid out at
//!   their one ALLOCATE statement in the main program from bounds known
//!   only then (`allocatable.rs`);
//! - DO nests whose distributing loop updates its home `H(I+q)` and reads
//!   distributed arrays at `X(I+c)`: each process runs the iterations it
//!   owns, after one neighbour fetch per array into its shadow area (the
//!   seed's transfer before the loop); on a rank-1 BLOCK home also
//!   `H(a*I+q)` for any `a` (`E(2*I+1)`, `B(N+1-I)`): the iterations whose
//!   element the process owns (`hpf_local_bounds_affine`), reads on the
//!   home's template cells local and the others fetched by the
//!   inspector/executor below; reads of a 1-D distributed array at an index
//!   of its distributed dimension that does not change in the nest
//!   (`A(I,K)` in the update of an LU factorisation by columns) read a copy
//!   of that slice its owner broadcasts before the nest, when the nest does
//!   not write the slice (INDEPENDENT, or its writes stay on one side of it:
//!   `broadcast.rs`); a DO loop all of whose distributed references sit on
//!   one such slice (`A(I,K) = A(I,K) / A(K,K)`) is run by its owner;
//!   inside the distributing loop,
//!   IF statements and constructs (their conditions read like the
//!   assignments do) and private scalar temporaries, assigned before they
//!   are read in every iteration (read after the nest: the last
//!   iteration's value is broadcast) (`private.rs`), and scalar reductions
//!   `s = s + e`, `max(s, e)`, ... (INTEGER: `MPI_Allreduce`; floating-point
//!   sums along the chain of processes, in the sequential order)
//!   (`loop_reductions.rs`), and scans `s = s + x(i); y(i) = s` (a
//!   parallel prefix in two passes, `scan.rs`);
//! - a DO loop whose one statement is a recurrence `y(i) = y(i-1) + x(i)`
//!   (`*`, `max`, `min`) on a rank-1 BLOCK array: the same parallel prefix
//!   (`scan.rs`); CYCLE (the owner ends its iteration) and, in a
//!   single loop on a 1-D home, `IF (cond) EXIT` whose condition reads
//!   nothing the loop writes (first in the body: or the element the
//!   iteration writes): the first iteration where it holds is found
//!   before the loop (each process among its own, then `MPI_Allreduce`)
//!   and the loop ends there;
//! - a DO loop whose one statement updates a 1-D distributed array through
//!   an index computed in the iteration (`HIST(CELL(P)) = HIST(CELL(P)) +
//!   1`): each process computes the updates of its iterations and sends
//!   them to the elements' owners, which apply them in the loop's order
//!   (`scatter.rs`);
//! - in such a DO loop (a single loop of assignments, home not CYCLIC),
//!   reads of 1-D distributed arrays at elements that are not neighbours
//!   (`B(2*I)`, `B(N+1-I)`, `B(IDX(I))`, arrays cut in other blocks): an
//!   inspector/executor fetch before the loop, one all-to-all of counts,
//!   indices and values per array (`remap.rs`), unless the loop writes what
//!   they read (elements of an array it writes that no write of the loop
//!   reaches are fetched too; on a rank-1 CYCLIC home, below, also the reads off the
//!   home's cells, `B(I+1)`, and reads of an array the loop writes ahead
//!   of its writes, whose values before the loop are the ones it reads);
//!   where that fetch does not apply (inner loops, several
//!   dimensions), an array the nest only reads at such elements is copied
//!   whole to every process first (gathered, then broadcast), with a note;
//! - array assignments, FORALLs, element assignments and reductions (in
//!   output statements and scalar assignments) whose distributed operands
//!   line up with the left side (reductions also of 1-D sections with
//!   strides known only at run time, `SUM(X(K:N:K))`), and WHERE constructs
//!   whose assignments set one section, their masks and operands fetched
//!   before the construct where they are misaligned, unless an earlier
//!   assignment of it assigns what they fetch (`assign.rs`, `reduce.rs`);
//!   section shifts along a CYCLIC dimension of arrays of rank 2 or more
//!   become FORALLs (`hoist/section_forall.rs`);
//! - on CYCLIC(m) arrays (template cell `j` from the template's start:
//!   block `b = j / m`, owner `mod(b, P)`, stored compressed at local
//!   position `(b / P) * m + mod(j, m)`): DO nests whose outermost loop is
//!   the distributing one and whose distributed references all lie on the
//!   home's template cell, run course by course (one block of `m` cells per
//!   course) with every distributed subscript `e` rewritten to
//!   `hpf_lx(d, e)`, or to `v + s` for `e = v + c`, `s` computed once per
//!   course (`courses.rs`) (a single DO of assignments over a rank-1 home may
//!   also read at other cells, `B(I+1)`, `A(I+2)` while writing `A(I)`:
//!   those reads are fetched by the inspector/executor before the courses,
//!   `remap.rs`); whole arrays set to a constant (each process its
//!   part); elements set by their owner; array assignments, FORALLs and
//!   WHERE constructs whose distributed reads all lie on the left side's
//!   template cells, course by course (`assign.rs`: in a course, a
//!   process's elements of a section are one strided run of its local
//!   positions); other array assignments to one run of elements of a
//!   rank-1 CYCLIC array, course by course from values fetched by the
//!   inspector/executor (`remap.rs`); reductions other than floating-point SUM, PRODUCT and
//!   DOT_PRODUCT, course by course then `MPI_Allreduce`. Any other
//!   statement on a CYCLIC array, a read at another cell included (no
//!   neighbour shift there; from a BLOCK home in a DO loop it is fetched as
//!   above, and a read behind the loop's writes is a carried dependence),
//!   takes the rank-0 path below, whose gather and scatter follow
//!   the cyclic owner map, except an element assigned from elements of
//!   other cells (`K(5) = K(N)`): its owner fetches them;
//! - DO (counted or not: `DO` ... `IF (...) EXIT` ... `END DO`), DO WHILE
//!   and IF constructs around them, run by every process with replicated
//!   indices and conditions, their statements planned one by one, a
//!   statement with no parallel form run alone on rank 0 (when the loop
//!   also works in bulk); an unnamed CYCLE or EXIT, a RETURN or a STOP that
//!   every process runs, or that a statement run on rank 0 takes (rank 0
//!   broadcasts it), leaves on every process alike (`taken_everywhere`);
//! - assignments to a slice at one index of the distributed dimension
//!   (`CU(2:M+1, N+1) = CU(2:M+1, 1)`, periodic boundaries) by the slice's
//!   owner, the slices read sent to it (`slice_copy.rs`);
//! - CALLs of the file's subroutines that receive distributed arrays whole,
//!   through dummies that take the actual's mapping as it is (INHERIT,
//!   transcriptive `DISTRIBUTE X *`, descriptive `*(BLOCK) ONTO *P`, an
//!   identity `ALIGN Z(I) WITH *X(I)` with such a dummy, or an explicit
//!   mapping equal to the actual's): every process calls a copy of the
//!   subroutine specialised to the actuals' layouts with its local parts,
//!   and the copy's body is lowered as the main program's is
//!   (`procedures.rs`);
//! - CALLs of EXTRINSIC(HPF_LOCAL) subroutines with distributed arrays
//!   whole: every process passes its own elements, the body runs as
//!   written, HPF_LOCAL_LIBRARY's inquiries answer about the caller's
//!   mapping (`extrinsic.rs`);
//! - DATA (in BLOCK DATA too) on COMMON blocks that hold distributed
//!   arrays: the values are assigned to each process's part before the
//!   main program's first statement (`common_modules.rs`);
//! - distributed arrays of the file's modules, lowered as the main
//!   program's own (`module_arrays.rs`); a CALL of a module subroutine (or
//!   of an internal subroutine of the program) that uses distributed
//!   arrays by host or use association runs on every process as a copy on
//!   their local parts (`procedures.rs`), and so does a function that uses
//!   them where its value goes into a replicated scalar (`r = f()`; PRINT
//!   items that call one go into such a scalar first, `hoist.rs`); other
//!   uses run on rank 0 on their gathered copies;
//! - `R = SUM(X, DIM=K)` (PRODUCT, MAXVAL, MINVAL, COUNT, ANY, ALL) of a
//!   rank-2 expression of BLOCK arrays into a replicated array or one
//!   aligned with the remaining dimension: local reductions, then one
//!   gather or one combining collective (`dim_reduce.rs`);
//! - `X = TRANSPOSE(Y)`, `X = CSHIFT(Y, ...)`, `X = EOSHIFT(Y, ...)` of
//!   whole distributed arrays: a shift between arrays laid out alike as
//!   the halo it crosses plus local copies (`shift.rs`), else one
//!   all-to-all with the intrinsic's index map (`permute.rs`; TRANSPOSE
//!   moves values only); `C = MATMUL(A, B)` and matrix-vector products
//!   of whole arrays, distributed or replicated: each process computes its
//!   part of C from panels of A and B gathered from their owners
//!   (`matmul.rs`); such calls inside expressions, and IF conditions
//!   that read distributed arrays, first go into temporaries assigned
//!   right before their statement, and implied-DO constructors assigned to
//!   whole arrays become FORALLs, and LBOUND, UBOUND and SIZE of
//!   distributed arrays become their declared values: the program is
//!   rewritten, analysed again and lowered in place of the user's
//!   (`hoist.rs`); so is a DO loop whose assignments write rank-1 arrays
//!   on different template cells and read nothing another writes: one
//!   loop per assignment (`split_loops.rs`);
//! - WHERE on whole arrays of a 2-D grid laid out alike: each process runs
//!   it on its box (`grid.rs`);
//! - modules of other files that hold no variables, copied into the
//!   generated program (`external_modules.rs`);
//! - REALIGN and REDISTRIBUTE between the main program's statements: each
//!   statement is planned under the layouts of its mapping epoch, and the
//!   arrays whose layout changes are laid out anew at the directive, with
//!   one all-to-all copy each (`remap_epochs.rs`);
//! - a DO nest no rule above plans (inner loops, 2-D and irregular
//!   subscripts `A(IDX(I),J)`, triangular bounds), or an element
//!   assignment that reads other processes' elements: every process runs
//!   the loops, each assignment to a distributed element on its owner, to a
//!   replicated variable on every process, after the elements it reads are
//!   fetched into one box per reference by one all-to-all
//!   (inspector/executor), when no read can see a value the nest wrote on
//!   another process (`nest_fetch.rs`);
//! - every other statement touching a distributed array runs on rank 0 on
//!   gathered copies (then scatters what it wrote, broadcasts scalars): a
//!   correct, slower execution, reported as a note. So does every other
//!   CALL with distributed arguments (sections or elements passed, a
//!   mapping that would need a remap, recursion, SAVEd variables, a body
//!   with nothing to run in parallel; the note says which), and functions
//!   always run where the statement that uses them runs. A loop with a
//!   dependence carried across processors takes this path too, and so does
//!   a loop holding such a statement when nothing else in it works in
//!   bulk (gathering in every iteration would cost more than running it
//!   once on rank 0). An element assignment that
//!   fetches an element of another process (`W(1) = V(N)`, a periodic
//!   boundary) does not send its time loop there when the loop also does
//!   work in bulk (sections, loops, reductions): one small exchange per
//!   step costs less than running the steps on one process; a loop that
//!   only walks elements so still runs on rank 0. Inside a loop that works
//!   in bulk, a statement on gathered copies runs on rank 0 alone, in every
//!   iteration, and the loop stays on every process.
//!
//! Output statements run on rank 0 only, so the program prints exactly
//! what the sequential program prints.

mod allocatable;
mod assign;
mod block_sizes;
mod broadcast;
mod call_remap;
mod common_blocks;
mod common_modules;
mod courses;
mod dim_reduce;
pub mod driver;
mod element_reduction;
mod element_type;
mod embed;
mod external_modules;
mod extrinsic;
mod fission;
mod grid;
mod hoist;
mod line_map;
mod loop_reductions;
mod matmul;
mod module_arrays;
mod nest_fetch;
mod ordered_chain;
mod owner_bcasts;
mod permute;
mod pipeline;
mod private;
mod private_arrays;
mod procedures;
mod reduce;
mod remap;
mod remap_epochs;
pub mod rules;
pub mod runtime;
pub mod runtime_cache;
mod scalarize;
mod scan;
mod scatter;
mod shift;
mod slice_copy;
mod split_loops;

use std::collections::BTreeMap;
use std::fmt::Write;

use analysis::loops::{AccessAttr, LoopKind, LoopReport, SubscriptForm};
use analysis::model::{Format, Model, SymbolId, SymbolKind};
use analysis::FileAnalysis;
use element_type::ElementType;
use line_map::Origin;
use private::mentions_word;
use syntax::{closing_paren, ExprKind, LoopControl, Stmt, StmtKind, TextRange, UnitKind};

/// Something the backend refuses, at the place it refuses it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendError {
    pub range: TextRange,
    pub message: String,
}

/// Something the user should know about the parallel program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub range: TextRange,
    pub message: String,
}

#[derive(Clone, Debug)]
pub struct Generated {
    /// The SPMD program (free form).
    pub source: String,
    pub notes: Vec<Note>,
    /// For each line of `source` (0-based), the offset in the analysed text
    /// of the user's line it comes from (`line_map.rs`); `None` for the
    /// backend's own lines. Compiler and run-time messages name generated lines.
    pub lines: Vec<Option<usize>>,
}

/// A bound of a distributed array: a constant, or for an ALLOCATABLE array
/// one its ALLOCATE statement computes at run time (`allocatable.rs`).
#[derive(Clone, Debug)]
enum Bound {
    Known(i64),
    Runtime {
        /// The generated text that holds the value once the array is
        /// allocated (`hpf_ubs_a(1)`), valid in the main program.
        text: String,
        /// Equal keys mean equal values: the bound's expression as written,
        /// with the ALLOCATE statement's offset unless the variables it
        /// reads never change after the program's first ALLOCATE.
        key: String,
    },
}

impl Bound {
    fn known(&self) -> Option<i64> {
        match self {
            Bound::Known(value) => Some(*value),
            Bound::Runtime { .. } => None,
        }
    }
}

impl Bound {
    /// As an affine form: a constant, or for a run-time bound the variable
    /// that holds it (forms may be written back as Fortran text).
    fn linear(&self) -> analysis::eval::Linear {
        match self {
            Bound::Known(value) => analysis::eval::Linear::constant(*value),
            Bound::Runtime { text, .. } => analysis::eval::Linear::var(text),
        }
    }
}

/// The extent `hi - lo + 1` as Fortran text (a number when both are known).
fn extent_text(lo: &Bound, hi: &Bound) -> String {
    match (lo.known(), hi.known()) {
        (Some(lo), Some(hi)) => (hi - lo + 1).to_string(),
        _ => format!("({hi} - ({lo}) + 1)"),
    }
}

impl PartialEq for Bound {
    fn eq(&self, other: &Bound) -> bool {
        match (self, other) {
            (Bound::Known(a), Bound::Known(b)) => a == b,
            (Bound::Runtime { key: a, .. }, Bound::Runtime { key: b, .. }) => a == b,
            _ => false,
        }
    }
}

impl Eq for Bound {}

impl From<i64> for Bound {
    fn from(value: i64) -> Bound {
        Bound::Known(value)
    }
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Bound::Known(value) => write!(f, "{value}"),
            Bound::Runtime { text, .. } => f.write_str(text),
        }
    }
}

/// A distributed array as the runtime describes it.
#[derive(Clone, Debug)]
struct Distributed {
    name: String,
    /// The element type; it displays as the runtime routines' suffix (`r8`).
    suffix: ElementType,
    /// Declared (or allocated) bounds of every dimension.
    lbs: Vec<Bound>,
    ubs: Vec<Bound>,
    /// The distributed dimension (0-based) and its bounds.
    dim: usize,
    lb: Bound,
    ub: Bound,
    offset: i64,
    /// The alignment stride along `dim`: element i sits on template cell
    /// `stride * i + offset` (negative: reversed).
    stride: i64,
    /// Aligned with stride 1 along every dimension, not transposed.
    plain: bool,
    template_lo: Bound,
    template_hi: Bound,
    /// 0 for BLOCK; `m` for BLOCK(m) and CYCLIC(m).
    block: i64,
    /// CYCLIC(m): stored compressed (the owned elements in order, from
    /// local position 0), so subscripts along `dim` go through `hpf_lx`.
    cyclic: bool,
    target: SymbolId,
    shadow_low: i64,
    shadow_high: i64,
    /// Distributed in two dimensions: the second one (`dim` is the first),
    /// over the second axis of a 2-D grid of processes (`grid.rs`).
    second: Option<SecondAxis>,
    /// ALLOCATABLE: the ALLOCATE statement that makes its descriptor and
    /// local part (`allocatable.rs`); `None`: made at the program's start.
    allocated_by: Option<TextRange>,
}

/// The second distributed dimension of an array distributed in two: BLOCK,
/// BLOCK(m), CYCLIC or CYCLIC(m) along each, over a grid the runtime shapes
/// from the declared arrangement `procs` (0 x 0 when there is none).
#[derive(Clone, Debug, PartialEq, Eq)]
struct SecondAxis {
    dim: usize,
    lb: Bound,
    ub: Bound,
    offset: i64,
    stride: i64,
    template_lo: Bound,
    template_hi: Bound,
    block: i64,
    /// CYCLIC(m) along this dimension: stored compressed, as `cyclic` above.
    cyclic: bool,
    shadow_low: i64,
    shadow_high: i64,
    procs: (i64, i64),
}

impl Distributed {
    /// The runtime routines' suffix: type, rank, distributed dimension (1-based).
    fn variant(&self) -> String {
        match &self.second {
            Some(second) => format!("{}_{}{}{}", self.suffix, self.lbs.len(), self.dim + 1, second.dim + 1),
            None => format!("{}_{}{}", self.suffix, self.lbs.len(), self.dim + 1),
        }
    }

    /// Some of its bounds are computed by an ALLOCATE statement.
    fn has_runtime_bounds(&self) -> bool {
        self.lbs.iter().chain(&self.ubs).any(|it| it.known().is_none())
            || self.template_lo.known().is_none()
            || self.template_hi.known().is_none()
    }

    /// Of rank 1, BLOCK or BLOCK(m), over a 1-D arrangement.
    fn is_rank_one_block(&self) -> bool {
        self.lbs.len() == 1 && self.second.is_none() && !self.cyclic
    }

    /// The declared bounds as two array constructors, for alloc and gather.
    fn bounds_args(&self) -> String {
        let join = |it: &[Bound]| it.iter().map(Bound::to_string).collect::<Vec<_>>().join(", ");
        format!("[{}], [{}]", join(&self.lbs), join(&self.ubs))
    }

    /// Whether the elements of both arrays at the same template index live
    /// on the same process: the same target, or targets of the same bounds
    /// cut in the same blocks along the same dimension (the runtime spreads
    /// every distribution over all the processes).
    fn same_blocks(&self, other: &Distributed) -> bool {
        if !self.plain || !other.plain {
            // Strided, reversed or transposed: only with an array of the
            // same alignment (the same elements on every process).
            return self.same_alignment(other);
        }
        if self.second.is_some() || other.second.is_some() {
            return grid::same_grid_blocks(self, other);
        }
        self.dim == other.dim
            && self.cyclic == other.cyclic
            && (self.target == other.target
                || (self.template_lo == other.template_lo
                    && self.template_hi == other.template_hi
                    && self.block == other.block))
    }

    /// The same target, distributed dimensions, strides and offsets.
    fn same_alignment(&self, other: &Distributed) -> bool {
        self.target == other.target
            && self.dim == other.dim
            && self.stride == other.stride
            && self.offset == other.offset
            && self.cyclic == other.cyclic
            && self.lbs.len() == other.lbs.len()
            && match (&self.second, &other.second) {
                (None, None) => true,
                (Some(a), Some(b)) => {
                    a.dim == b.dim && a.stride == b.stride && a.offset == b.offset && a.procs == b.procs
                }
                _ => false,
            }
    }

    fn colons(&self) -> String {
        vec![":"; self.lbs.len()].join(",")
    }
}

/// A loop with `--stats` counters: its line and the analysis's prediction
/// (messages, elements per execution), `None` when it has no count.
type StatLoop = (usize, Option<(u64, u64)>);

/// An owner-computes loop nest.
struct ParallelNest<'a> {
    stmt: &'a Stmt,
    /// Replicated work arrays private to the distributing loop's
    /// iterations (`private_arrays.rs`): each process computes its own.
    private_arrays: Vec<SymbolId>,
    /// The DO whose iterations are split among the processes.
    distributing: &'a Stmt,
    step: i64,
    home: SymbolId,
    /// The home's subscript along its distributed dimension is
    /// `home_coef * v + home_offset` (`home_coef` is 1 but on a rank-1
    /// BLOCK home, whose other reads are then fetched by the
    /// inspector/executor or on its cells).
    home_coef: i64,
    home_offset: i64,
    /// Per distributed array read: the smallest and largest offset `c` of `v + c`.
    reads: BTreeMap<SymbolId, (i64, i64)>,
    /// For a CYCLIC home: the distributed subscripts rewritten to local positions.
    cyclic_edits: Option<Vec<(TextRange, String)>>,
    /// Per array read off the home's cells: what those reads reach, one
    /// fetch per group of distances whose parts may share elements.
    parts: BTreeMap<SymbolId, Vec<PartFetch>>,
    /// Arrays the nest only reads, at elements of other processes that are
    /// not neighbours (`B(2*I)`, `B(IDX(I))`) or cut in other blocks, where
    /// `remote` does not apply: every process gets a whole copy (`hpf_g_B`,
    /// gathered and broadcast) before the nest, which reads it instead.
    replicated: Vec<SymbolId>,
    /// References fetched by the inspector/executor before the loop (`remap.rs`).
    remote: Vec<remap::RemoteRead>,
    /// References to slices every iteration reads, broadcast by their
    /// owners before the nest (`broadcast.rs`).
    broadcasts: Vec<broadcast::BroadcastRead>,
    /// Private scalars read after the nest: the owner of the last
    /// iteration broadcasts the value it left (`private.rs`).
    last_values: Vec<String>,
    /// Its private scalars (keys): an inner loop whose bounds read one
    /// gets no final value after the nest (`private.rs` checked that its
    /// index is not read there).
    privates: Vec<String>,
    /// Scalars it reduces (`loop_reductions.rs`).
    reductions: Vec<loop_reductions::LoopReduction>,
    /// Elements it writes off the home's cell, `X(v+c)` of a rank-1 BLOCK
    /// array under INDEPENDENT: (X, c), written in the shadow and sent to
    /// their owners after the loop.
    write_backs: Vec<(SymbolId, i64)>,
    /// The condition of its `IF (cond) EXIT`: the first iteration where it
    /// holds is found before the loop, and the loop ends there.
    exit_when: Option<TextRange>,
    /// Whether its home is an array it only reads (a nest that only
    /// reduces): the analysis, which sees no home, does not model what is
    /// fetched for it (neighbours, or by the inspector/executor).
    read_home: bool,
}

/// `MPI_Bcast` of `count` elements of `buffer` (of MPI type `mpi`) from
/// rank `root`, counted in `--stats` as the root (where `at_root` holds)
/// sending them to each other process.
pub(crate) fn emit_counted_bcast(
    out: &mut String,
    (buffer, count, mpi): (&str, &str, &str),
    (root, at_root): (&str, &str),
) {
    let _ = writeln!(out, "  call MPI_Bcast({buffer}, {count}, {mpi}, {root}, MPI_COMM_WORLD)");
    let _ = writeln!(
        out,
        "  if (hpf_stats .and. {at_root}) then\n    hpf_stat_messages = hpf_stat_messages + (hpf_nprocs - 1)\n    hpf_stat_elements = hpf_stat_elements + int(hpf_nprocs - 1, 8) * {count}\n  end if"
    );
}

/// The INDEPENDENT directive right before `offset` of `text` (only blank
/// lines, comments, other directives and a label between), with its range.
pub(crate) fn independent_before<'f>(
    file: &'f syntax::SourceFile,
    text: &str,
    offset: usize,
) -> Option<(TextRange, &'f syntax::directive::Independent)> {
    let directives = file.directives();
    let before = directives.partition_point(|it| it.range.end <= offset);
    let directive = directives[..before].iter().rev().find_map(|it| match &it.body {
        syntax::directive::DirectiveBody::Independent(independent) => Some((it.range, independent)),
        _ => None,
    })?;
    let between = text.get(directive.0.end..offset)?;
    between
        .lines()
        .all(|line| {
            let line = line.trim();
            line.is_empty() || line.starts_with('!') || line.chars().all(|it| it.is_ascii_digit())
        })
        .then_some(directive)
}

/// The elements a rank-1 reference's affine subscript reaches over its
/// loop's constant bounds, as an interval; `None` when unknown.
fn reached(access: &analysis::loops::Access, report: &LoopReport) -> Option<(i64, i64)> {
    match access.subscripts.as_slice() {
        [SubscriptForm::Constant(at)] => Some((*at, *at)),
        [SubscriptForm::Affine { index, coef, offset }] => {
            let nest = report.nest.get(*index)?;
            let (lo, hi) = (nest.lo?, nest.hi?);
            let (a, b) = (coef.checked_mul(lo)?.checked_add(*offset)?, coef.checked_mul(hi)?.checked_add(*offset)?);
            Some((a.min(b), a.max(b)))
        }
        _ => None,
    }
}

/// Whether no write of the loop nest `reports` reaches an element the read
/// `access` (of `report`) of a rank-1 array reads: its values before the
/// loop are the ones it reads.
fn elements_unwritten(access: &analysis::loops::Access, report: &LoopReport, reports: &[&LoopReport]) -> bool {
    let Some((lo, hi)) = reached(access, report) else { return false };
    reports.iter().all(|report| {
        report
            .accesses
            .iter()
            .filter(|it| it.array == access.array && it.attr == AccessAttr::Update)
            .all(|write| reached(write, report).is_some_and(|(write_lo, write_hi)| write_hi < lo || hi < write_lo))
    })
}

/// The statements of a DO nest (`nest_parts`).
struct NestParts<'s> {
    /// Its DO loops, the nest's own first.
    loops: Vec<&'s Stmt>,
    assignments: Vec<&'s Stmt>,
    /// Its IF statements and constructs, and its CYCLE and EXIT statements
    /// (plain or the action of a logical IF), which branch too.
    ifs: Vec<&'s Stmt>,
    /// Its CYCLE and EXIT statements, with which of the two each is.
    leaves: Vec<(&'s Stmt, LoopBranch)>,
    /// The replicated scalars it assigns, once each.
    scalars: Vec<&'s syntax::Name>,
}

/// The sign of the no-EXIT mark `±huge(0)` of a loop of step `step`: past
/// its last iteration, so that the first EXIT is the extreme one.
fn exit_sign(step: i64) -> &'static str {
    if step > 0 {
        ""
    } else {
        "-"
    }
}

/// A statement that ends an iteration of the innermost DO loop around it
/// (CYCLE) or the loop itself (EXIT), unlabelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LoopBranch {
    Cycle,
    Exit,
}

/// The statements that may leave a sequence of statements (lower case,
/// blanks removed): `unshared_branch`, `branch_action`.
const BRANCH_KEYWORDS: &[&str] = &["goto", "stop", "errorstop", "return", "exit", "cycle"];

/// The statements among `plans` (at any depth of the constructs every
/// process runs) whose branches every process takes alike: those every
/// process runs as written, and those run on rank 0, whose branches out of
/// themselves rank 0 broadcasts for every process to take
/// (`emit_on_rank_zero`).
pub(crate) fn taken_everywhere(plans: &[Plan]) -> Vec<TextRange> {
    let mut everywhere = Vec::new();
    let mut stack: Vec<&Plan> = plans.iter().collect();
    while let Some(plan) = stack.pop() {
        match plan {
            Plan::Verbatim(stmt) | Plan::OnRankZero { stmt, .. } => everywhere.push(stmt.range),
            Plan::Sequential { body, .. } | Plan::While { body, .. } => stack.extend(body),
            Plan::If { branches, .. } => stack.extend(branches.iter().flat_map(|it| &it.1)),
            _ => {}
        }
    }
    everywhere
}

/// A branch out of a statement run on rank 0 (`rank_zero_exits`).
struct RankZeroExit {
    /// The branch statement (or a logical IF's action).
    action: TextRange,
    /// A STOP or ERROR STOP.
    stops: bool,
}

/// Reads of one array at distances `offsets.0 ..= offsets.1` from the home,
/// and the elements they reach along each dimension (`None`: all of them;
/// the distributed one's is unused). Reads whose parts cannot share an
/// element are fetched apart (`A(I-1, 2)` and `A(I+1, M)`: one column each,
/// not the columns 2..M at both distances).
#[derive(Clone, Debug)]
struct PartFetch {
    offsets: (i64, i64),
    part: Vec<Option<(i64, i64)>>,
}

impl PartFetch {
    /// Whether an element could lie in both (their parts meet along every dimension).
    fn may_share(&self, other: &PartFetch, dim: usize) -> bool {
        self.part.iter().zip(&other.part).enumerate().all(|(k, pair)| match pair {
            _ if k == dim => true,
            (Some(a), Some(b)) => a.0 <= b.1 && b.0 <= a.1,
            _ => true,
        })
    }

    fn absorb(&mut self, other: PartFetch) {
        self.offsets = (self.offsets.0.min(other.offsets.0), self.offsets.1.max(other.offsets.1));
        for (have, new) in self.part.iter_mut().zip(other.part) {
            *have = match (*have, new) {
                (Some(a), Some(b)) => Some((a.0.min(b.0), a.1.max(b.1))),
                _ => None,
            };
        }
    }
}

/// Adds a read to an array's fetches, merging the ones that may share elements.
fn add_part_fetch(fetches: &mut Vec<PartFetch>, mut new: PartFetch, dim: usize) {
    while let Some(at) = fetches.iter().position(|it| it.may_share(&new, dim)) {
        new.absorb(fetches.swap_remove(at));
    }
    fetches.push(new);
    fetches.sort_by_key(|it| it.offsets);
}

enum Plan<'a> {
    Verbatim(&'a Stmt),
    /// An ALLOCATE of distributed arrays: every process makes their
    /// descriptors and local parts (`allocatable.rs`).
    Allocate(&'a Stmt),
    Parallel(ParallelNest<'a>),
    /// A DO loop every process runs (its index and bounds are replicated),
    /// whose body statements are planned one by one.
    Sequential {
        control: &'a LoopControl,
        body: Vec<Plan<'a>>,
    },
    /// A DO WHILE loop every process runs (its condition reads replicated
    /// data), or an uncounted DO loop (no condition: it ends by an EXIT).
    While {
        /// The loop (for the labels of its first and last lines).
        stmt: &'a Stmt,
        cond: Option<TextRange>,
        body: Vec<Plan<'a>>,
    },
    /// An IF construct every process runs (its conditions read replicated
    /// data), its branches planned statement by statement.
    If {
        /// The construct (for the labels of its IF and END IF lines).
        stmt: &'a Stmt,
        branches: Vec<(Option<TextRange>, Vec<Plan<'a>>)>,
    },
    /// An array assignment run by the owners of the left side's section.
    Section(assign::SectionAssign<'a>),
    /// An assignment to one element (or a row along the other dimensions)
    /// of a distributed array from replicated data: its owner runs it.
    /// Reads of other elements (`X(e + c)`, same template) are fetched first.
    Owner {
        stmt: &'a Stmt,
        array: SymbolId,
        index: TextRange,
        reads: BTreeMap<SymbolId, (i64, i64)>,
        /// For a CYCLIC array: its distributed subscript as a local position.
        edits: Vec<(TextRange, String)>,
        /// Elements the owner reads of arrays distributed differently,
        /// fetched by the inspector/executor (`remap.rs`).
        remote: Vec<remap::FetchedRead>,
    },
    /// A FORALL run by the owners of its home's elements, after neighbour fetches.
    Forall {
        stmt: &'a Stmt,
        home: SymbolId,
        home_offset: i64,
        lo: String,
        hi: String,
        step: i64,
        /// The distributing index's `lo:hi:step` in the statement.
        control: TextRange,
        reads: BTreeMap<SymbolId, (i64, i64)>,
        /// Elements fetched by the inspector/executor before it (`remap.rs`),
        /// on a BLOCK home.
        remote: Vec<remap::FetchedRead>,
        /// For a CYCLIC home (run course by course, every read on the home's
        /// cell): the distributed subscripts rewritten to local positions.
        cyclic_edits: Option<Vec<(TextRange, String)>>,
    },
    /// An output statement or a scalar assignment whose reductions of
    /// distributed arrays are computed in parallel first.
    Reduce(reduce::Reduce<'a>),
    /// A loop split into one owner-computes loop per array it writes.
    Split(fission::Split<'a>),
    OnRankZero {
        stmt: &'a Stmt,
        why: Option<String>,
    },
    /// Work on arrays distributed in two dimensions (`grid.rs`).
    Grid(grid::GridPlan<'a>),
    /// A CALL every process makes with its local parts (`procedures.rs`).
    Call(procedures::SpmdCall<'a>),
    /// A CALL of an EXTRINSIC(HPF_LOCAL) subroutine every process makes
    /// on its local parts (`extrinsic.rs`).
    LocalCall(extrinsic::LocalCall<'a>),
    /// `X = TRANSPOSE(Y)`, `CSHIFT`, `EOSHIFT` by one all-to-all (`permute.rs`).
    Permute(permute::Permute<'a>),
    /// `C = MATMUL(A, B)` with panels of the operands gathered (`matmul.rs`).
    Matmul(matmul::Matmul<'a>),
    /// `r = RED(x, DIM=k)` into a replicated array (`dim_reduce.rs`).
    DimReduce(Box<dim_reduce::DimReduce<'a>>),
    /// A loop updating elements through computed indices (`scatter.rs`).
    Scatter(scatter::Scatter<'a>),
    /// `y(i) = y(i-1) + x(i)` as a parallel prefix (`scan.rs`).
    Recurrence(scan::Recurrence<'a>),
    /// A nest whose dependence crosses the processes at a constant
    /// distance, run as a pipeline (`pipeline.rs`).
    Pipeline(pipeline::Pipeline<'a>),
    /// A slice at one index of the distributed dimension, computed by its
    /// owner from the slices it reads (`slice_copy.rs`).
    SliceCopy(slice_copy::SliceAssign<'a>),
    /// A DO nest no other rule plans: each assignment on its owner, the
    /// remote reads fetched first (`nest_fetch.rs`).
    FetchedNest(nest_fetch::FetchedNest<'a>),
    /// A DO loop reducing into one invariant element or scalar, each term on
    /// the owner of the loop's element (`element_reduction.rs`).
    ElementReduction(element_reduction::ElementReduction<'a>),
}

/// The fetched nests (`nest_fetch.rs`) among a loop's body statements.
fn fetched_nests<'p, 'a>(body: &'p mut [Plan<'a>]) -> Vec<&'p mut nest_fetch::FetchedNest<'a>> {
    body.iter_mut()
        .filter_map(|it| match it {
            Plan::FetchedNest(nest) => Some(nest),
            _ => None,
        })
        .collect()
}

/// Those whose schedules are computed once for the loop.
fn reused_schedules<'p, 'a>(body: &'p [Plan<'a>]) -> Vec<&'p nest_fetch::FetchedNest<'a>> {
    body.iter()
        .filter_map(|it| match it {
            Plan::FetchedNest(nest) if nest.reuses_schedule() => Some(nest),
            _ => None,
        })
        .collect()
}

/// Where the statement at `offset` starts its copy: after the last `;` of
/// its line before it (quote-aware), or at the line's start.
pub(crate) fn statement_start(text: &str, offset: usize) -> usize {
    let line_start = text[..offset].rfind('\n').map_or(0, |it| it + 1);
    let mut quote = None;
    let mut after_semicolon = line_start;
    for (at, ch) in text[line_start..offset].char_indices() {
        match (quote, ch) {
            (None, '\'' | '"') => quote = Some(ch),
            (Some(open), _) if ch == open => quote = None,
            (None, ';') => after_semicolon = line_start + at + 1,
            _ => {}
        }
    }
    after_semicolon
}

impl Plan<'_> {
    /// Whether some of the work runs on every process (not only rank 0).
    fn runs_in_parallel(&self) -> bool {
        match self {
            Plan::Parallel(_)
            | Plan::Section(_)
            | Plan::Owner { .. }
            | Plan::Forall { .. }
            | Plan::Reduce(_)
            | Plan::Split(_)
            | Plan::Grid(_)
            | Plan::Call(_)
            | Plan::LocalCall(_)
            | Plan::Permute(_)
            | Plan::Matmul(_)
            | Plan::DimReduce(_)
            | Plan::Scatter(_)
            | Plan::Recurrence(_)
            | Plan::Pipeline(_)
            | Plan::SliceCopy(_)
            | Plan::FetchedNest(_)
            | Plan::ElementReduction(_) => true,
            Plan::Sequential { body, .. } | Plan::While { body, .. } => body.iter().any(Plan::runs_in_parallel),
            Plan::If { branches, .. } => branches.iter().flat_map(|it| &it.1).any(Plan::runs_in_parallel),
            // A loop around an ALLOCATE stays on every process.
            Plan::Allocate(_) => true,
            Plan::Verbatim(_) | Plan::OnRankZero { .. } => false,
        }
    }

    /// Whether a statement runs in parallel over many elements at once (not
    /// one element assignment by its owner).
    fn runs_in_bulk(&self) -> bool {
        match self {
            Plan::Owner { .. } | Plan::ElementReduction(_) => false,
            // One all-to-all per execution: bulk when it feeds a 2-D
            // iteration space at least, not one loop's (a row of a solve).
            // A FORALL is a whole-array operation.
            Plan::FetchedNest(nest) => nest.depth() >= 2 || nest.is_forall(),
            Plan::SliceCopy(copy) => !copy.is_element(),
            Plan::Sequential { body, .. } | Plan::While { body, .. } => body.iter().any(Plan::runs_in_bulk),
            Plan::If { branches, .. } => branches.iter().flat_map(|it| &it.1).any(Plan::runs_in_bulk),
            _ => self.runs_in_parallel(),
        }
    }

    /// Whether an element assignment fetches what it reads by an all-to-all
    /// (`Owner` with `remote`): in every iteration of a loop that does
    /// nothing in bulk (it walks elements one by one), that costs more than
    /// running the loop once on rank 0.
    fn fetches_elements(&self) -> bool {
        match self {
            Plan::Owner { remote, .. } => !remote.is_empty(),
            Plan::FetchedNest(_) => true,
            Plan::Sequential { body, .. } | Plan::While { body, .. } => body.iter().any(Plan::fetches_elements),
            Plan::If { branches, .. } => branches.iter().flat_map(|it| &it.1).any(Plan::fetches_elements),
            _ => false,
        }
    }

    /// Whether a statement other than output runs on rank 0 on gathered copies.
    fn gathers(&self) -> bool {
        match self {
            Plan::OnRankZero { why, .. } => why.is_some(),
            Plan::Call(call) => call.gathers,
            Plan::Sequential { body, .. } | Plan::While { body, .. } => body.iter().any(Plan::gathers),
            Plan::If { branches, .. } => branches.iter().flat_map(|it| &it.1).any(Plan::gathers),
            _ => false,
        }
    }
}

/// The runtime's element type of a declared symbol (`element_type.rs`);
/// `None` for a type or kind it does not handle, or a kind that does not
/// fold, which the callers refuse rather than change its precision.
fn element_suffix(symbol: &analysis::model::Symbol) -> Option<ElementType> {
    ElementType::of_symbol(symbol).ok()
}

/// The type as declared, for messages: `REAL(KIND=DP)`, or `implicit`.
fn declared_type(symbol: &analysis::model::Symbol) -> String {
    if symbol.type_name.is_empty() {
        "implicit".to_string()
    } else {
        format!("{}{}", symbol.type_name, symbol.type_kind).to_ascii_uppercase()
    }
}

fn mpi_type(element: ElementType) -> String {
    element.mpi_datatype()
}

/// The modules every Fortran compiler provides.
const INTRINSIC_MODULES: &[&str] =
    &["iso_fortran_env", "iso_c_binding", "ieee_arithmetic", "ieee_exceptions", "ieee_features"];

struct Lowering<'a> {
    analysis: &'a FileAnalysis,
    /// The normalised (free-form) text: statements are copied from it.
    text: &'a str,
    /// The user's text, for the line ends the normalisation joined.
    original: &'a str,
    distributed: BTreeMap<SymbolId, Distributed>,
    errors: Vec<BackendError>,
    notes: Vec<Note>,
    /// Replicated temporaries of the generated code: (type, name).
    temps: Vec<(String, String)>,
    /// The main program among the model's units (modules may come first).
    main: analysis::model::UnitId,
    /// The parallel loops with `--stats` counters, in emission order.
    stat_loops: std::cell::RefCell<Vec<StatLoop>>,
    /// Statement labels taken by the generated code so far (`rank_zero_exits`).
    labels_taken: std::cell::Cell<u32>,
    /// The subroutines specialised for SPMD calls so far (`procedures.rs`).
    procedures: Vec<procedures::SpmdProcedure>,
    /// Where the unit being lowered goes: `None` for the main program.
    place: Option<procedures::Place>,
    /// The INTENT(IN) scalar dummies of the subroutine being lowered that
    /// this copy of it receives as constants: (name in lower case, value).
    known: Vec<(String, i64)>,
    /// The subroutines being lowered, outermost first (no recursion).
    calling: Vec<analysis::model::UnitId>,
    /// The entries of `procedures` this unit calls.
    called: Vec<usize>,
    /// The procedures that use distributed module arrays or, internal
    /// ones, the program's distributed arrays (`module_arrays.rs`).
    touching: std::rc::Rc<module_arrays::Touching>,
    /// The internal procedures that use the program's replicated variables
    /// (`module_arrays.rs`).
    host_variables: std::rc::Rc<module_arrays::Touching>,
    /// The program's COMMON blocks (`common_blocks.rs`).
    common: common_blocks::CommonBlocks,
    /// The modules of other files, in the order they are copied.
    external: Vec<external_modules::ExternalModule>,
    /// The user's program with temporaries (`hoist.rs`), which `text` is.
    hoisted: Option<&'a hoist::Hoisted>,
    /// Arrays laid out otherwise than their directives say (three
    /// distributed dimensions, one kept whole): the analysis's transfer
    /// counts do not apply to loops on them.
    relaid: Vec<SymbolId>,
    /// Floating-point reductions keep the sequential order (`LowerOptions`).
    ordered_reductions: bool,
    /// Where each part of the output starts and what it comes from (`line_map.rs`).
    regions: Vec<line_map::Region>,
    /// The broadcasts of the loop bodies being emitted (`owner_bcasts.rs`).
    fusion: owner_bcasts::FusionFrames,
}

/// How the program is lowered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LowerOptions {
    /// Floating-point SUM, PRODUCT, DOT_PRODUCT and loop reductions
    /// (`s = s + x(i)`, MAX/MIN) keep the sequential order, the running
    /// value passing from process to process: bit-identical to the
    /// sequential program, but serial. Off (the default), each process
    /// reduces its part and the partial values are combined in rank order
    /// on every process (`hpf_combine_*`): a run repeats bit for bit on the
    /// same number of processes, within rounding of the sequential result.
    pub ordered_reductions: bool,
}

/// Lowers the analysed program with ordered reductions (the sequential
/// program's bits, as every caller got before [`LowerOptions`]); `text` is
/// the user's text. [`lower_with`] chooses.
pub fn lower(analysis: &FileAnalysis, text: &str) -> Result<Generated, Vec<BackendError>> {
    lower_with(analysis, text, &LowerOptions { ordered_reductions: true })
}

/// Lowers the analysed program as `options` say. `text` is the user's text.
pub fn lower_with(analysis: &FileAnalysis, text: &str, options: &LowerOptions) -> Result<Generated, Vec<BackendError>> {
    let errors: Vec<BackendError> = analysis
        .diagnostics
        .iter()
        .filter(|it| it.severity == syntax::Severity::Error)
        .map(|it| BackendError { range: it.range, message: format!("{} (fix the errors first)", it.message) })
        .collect();
    if !errors.is_empty() {
        return Err(errors);
    }
    // Shifts and transposes inside expressions become temporaries first
    // (`hoist.rs`); a rewritten program the backend cannot lower falls back
    // to the user's, which then says why.
    if let Some((hoisted, rewritten)) = hoist::rewrite(analysis, text) {
        match lower_text(&rewritten, &hoisted.text, Some(&hoisted), options) {
            Ok(mut generated) => {
                for note in &mut generated.notes {
                    note.range = hoisted.user_range(note.range);
                    note.message = hoisted.in_user_terms(&note.message);
                }
                for note in &hoisted.notes {
                    let at = generated.notes.partition_point(|it| it.range.start <= note.range.start);
                    generated.notes.insert(at, note.clone());
                }
                return Ok(generated);
            }
            // COMMON blocks as modules (`common_modules.rs`): the user's
            // program would only say that they are not lowered.
            Err(mut errors) if hoisted.common => {
                for error in &mut errors {
                    error.range = hoisted.user_range(error.range);
                }
                return Err(errors);
            }
            Err(_) => {}
        }
    }
    lower_text(analysis, text, None, options)
}

/// [`lower`] of a program without errors; `hoisted`: `text` is the user's
/// text rewritten by `hoist.rs` (the `--stats` lines are the user's).
fn lower_text(
    analysis: &FileAnalysis,
    text: &str,
    hoisted: Option<&hoist::Hoisted>,
    options: &LowerOptions,
) -> Result<Generated, Vec<BackendError>> {
    let normalised = syntax::parser_text(text, analysis.file.form).into_owned();
    let mut lowering = Lowering {
        analysis,
        text: &normalised,
        original: text,
        distributed: BTreeMap::new(),
        errors: Vec::new(),
        notes: Vec::new(),
        temps: Vec::new(),
        main: 0,
        stat_loops: std::cell::RefCell::new(Vec::new()),
        labels_taken: std::cell::Cell::new(0),
        procedures: Vec::new(),
        place: None,
        known: Vec::new(),
        calling: Vec::new(),
        called: Vec::new(),
        touching: std::rc::Rc::default(),
        host_variables: std::rc::Rc::default(),
        common: common_blocks::CommonBlocks::default(),
        external: Vec::new(),
        hoisted,
        relaid: Vec::new(),
        ordered_reductions: options.ordered_reductions,
        regions: Vec::new(),
        fusion: Default::default(),
    };
    let source = lowering.program();
    if lowering.errors.is_empty() {
        let lines = line_map::map_lines(&source, &normalised, &lowering.regions)
            .into_iter()
            .map(|offset| offset.map(|it| hoisted.map_or(it, |hoisted| hoisted.user_range(TextRange::empty(it)).start)))
            .collect();
        Ok(Generated { source, notes: lowering.notes, lines })
    } else {
        // A directive that maps several arrays is refused once, not once per array.
        let mut errors: Vec<BackendError> = Vec::new();
        for error in lowering.errors {
            if !errors.contains(&error) {
                errors.push(error);
            }
        }
        Err(errors)
    }
}

impl<'a> Lowering<'a> {
    fn error(&mut self, range: TextRange, message: impl Into<String>) {
        self.errors.push(BackendError { range, message: message.into() });
    }

    /// The line (1-based) of the user's text that `offset` comes from.
    fn user_line(&self, offset: usize) -> usize {
        match self.hoisted {
            Some(hoisted) => hoisted.user_line(offset),
            None => self.text[..offset].matches('\n').count() + 1,
        }
    }

    fn slice(&self, range: TextRange) -> &'a str {
        self.text.get(range.to_range()).unwrap_or("")
    }

    /// The normalised text of `range` as free-form source: where the
    /// fixed-form normalisation turned a line end into `&` (to continue a
    /// statement), the line end comes back after it.
    fn copy(&self, range: TextRange) -> String {
        external_modules::free_form(self.text, self.original, range)
    }

    /// The text of `range` as [`Lowering::copy`] gives it, with each
    /// `(range, replacement)` of `edits` (sorted, not overlapping) applied.
    fn copy_with_edits(&self, range: TextRange, edits: &[(TextRange, String)]) -> String {
        let mut text = String::new();
        let mut at = range.start;
        for (edit, replacement) in edits {
            if edit.start < at {
                continue;
            }
            text.push_str(&self.copy(TextRange::new(at, edit.start)));
            text.push_str(replacement);
            at = edit.end;
        }
        text.push_str(&self.copy(TextRange::new(at, range.end)));
        text
    }

    fn program(&mut self) -> String {
        let file = &self.analysis.file;
        let model = &self.analysis.model;
        let mut programs = file.units.iter().map(|it| &**it).filter(|it| it.kind == UnitKind::Program);
        let Some(unit) = programs.next() else {
            self.error(TextRange::empty(0), "there is no main program to lower");
            return String::new();
        };
        if let Some(second) = programs.next() {
            self.error(second.header, "a second main program");
            return String::new();
        }
        // Modules of the file come first among the model's units.
        self.main = analysis::model::flatten_units(file)
            .iter()
            .position(|(it, _)| std::ptr::eq(*it, unit))
            .expect("the main program is one of the file's units");
        // Internal procedures run as external ones do, on the program's
        // variables by host association (`module_arrays.rs`).
        for internal in &unit.contains {
            self.check_external_procedure(internal);
        }
        for other in file.units.iter().map(|it| &**it).filter(|it| !std::ptr::eq(*it, unit)) {
            if other.kind == UnitKind::Module {
                self.check_module(other);
            } else {
                self.check_external_procedure(other);
            }
        }
        self.check_local_procedures();
        // Replicated COMMON blocks, kept alike on every process (`common_blocks.rs`).
        match self.common_blocks() {
            Ok(blocks) => self.common = blocks,
            Err(errors) => {
                for (range, message) in errors {
                    self.error(range, message);
                }
            }
        }
        self.check_sequence_association();
        if !self.errors.is_empty() {
            return String::new();
        }
        self.check_remaps(unit);
        // Modules of other files are copied before the file's own (`external_modules.rs`).
        match self.external_modules() {
            Ok(modules) => self.external = modules,
            Err(problems) => {
                let uses: Vec<syntax::Name> = analysis::model::flatten_units(file)
                    .iter()
                    .flat_map(|(unit, _)| unit.uses.iter().cloned())
                    .collect();
                for (name, why) in problems {
                    let at =
                        uses.iter().find(|it| it.key() == name.to_ascii_lowercase()).map_or(unit.header, |it| it.range);
                    self.error(
                        at,
                        format!("USE {name}: the MPI backend cannot copy this module of another file: {why}"),
                    );
                }
            }
        }
        // A module found nowhere would fail to compile: say so here.
        let known: Vec<String> = model
            .units
            .iter()
            .filter(|it| it.kind == UnitKind::Module)
            .filter_map(|it| Some(it.name.as_ref()?.key()))
            .collect();
        for used in analysis::model::flatten_units(file).iter().flat_map(|(unit, _)| &unit.uses) {
            let key = used.key();
            if !known.contains(&key) && !INTRINSIC_MODULES.contains(&key.as_str()) && key != "hpf_local_library" {
                self.error(
                    used.range,
                    format!(
                        "USE {}: the module is not found (not in this file, nor in a Fortran file next to it or under the project root)",
                        used.text
                    ),
                );
            }
        }
        if !self.errors.is_empty() {
            return String::new();
        }
        // The mappings between the main program's REALIGN and REDISTRIBUTE
        // directives (`remap_epochs`); one without them has one epoch.
        let epochs = analysis::loops::MappingEpochs::new(model, self.main);
        let mut layouts: Vec<BTreeMap<SymbolId, Distributed>> =
            (0..epochs.count()).map(|epoch| self.distributed_under(epochs.model(epoch))).collect();
        if !self.errors.is_empty() {
            return String::new();
        }
        for (id, distributed) in &layouts[0] {
            if let Some((range, message)) = self.check_allocation_order(*id, distributed) {
                self.error(range, message);
            }
            // The remap at a directive copies an allocated array's elements.
            let remapped =
                layouts[1..].iter().any(|it| it.get(id).is_none_or(|it| !procedures::same_layout(it, distributed)));
            if let (Some(at), true) = (distributed.allocated_by, remapped) {
                self.error(
                    at,
                    format!(
                        "`{}`: REDISTRIBUTE and REALIGN of distributed ALLOCATABLE arrays are not supported by the MPI backend yet",
                        distributed.name
                    ),
                );
            }
        }
        self.check_epoch_layouts(&layouts);
        self.check_module_variables(&layouts[0]);
        self.check_renamed_module_arrays(&layouts[0]);
        if !self.errors.is_empty() {
            return String::new();
        }
        let distributed_ids: std::collections::BTreeSet<SymbolId> = layouts[0].keys().copied().collect();
        self.touching = std::rc::Rc::new(self.procedures_touching(&distributed_ids));
        self.host_variables = std::rc::Rc::new(self.procedures_host_variables(&distributed_ids));
        let stmt_epochs: Vec<usize> = unit.body.iter().map(|stmt| epochs.epoch_of(stmt.range.start)).collect();
        let mut plans: Vec<Plan> = Vec::with_capacity(unit.body.len());
        for (stmt, &epoch) in unit.body.iter().zip(&stmt_epochs) {
            // Each statement under the layouts of its epoch (its loops may grow their shadows).
            self.distributed = std::mem::take(&mut layouts[epoch]);
            plans.push(self.plan(stmt));
            layouts[epoch] = std::mem::take(&mut self.distributed);
        }
        if !self.errors.is_empty() {
            return String::new();
        }
        remap_epochs::share_shadows(&mut layouts);
        shift::resolve_shadow_reads(&self.emit(unit, &plans, &layouts, &stmt_epochs, &epochs))
    }

    /// Every distributed array of the main program under the mapping of
    /// `model`, checked against what the runtime supports.
    fn distributed_under(&mut self, model: &Model) -> BTreeMap<SymbolId, Distributed> {
        // The main program's arrays and those of the file's modules; those of
        // the subroutines and functions are plain arrays of the rank that
        // runs them, or local parts in their copies (`procedures.rs`).
        let own_units = analysis::model::flatten_units(&self.analysis.file);
        let is_module = |unit: usize| own_units.get(unit).is_some_and(|it| it.0.kind == UnitKind::Module);
        let main = self.main;
        self.distributed_among(model, &|id: SymbolId| id.unit == main || is_module(id.unit))
    }

    /// [`Lowering::distributed_under`] for the symbols `wanted` selects.
    pub(crate) fn distributed_among(
        &mut self,
        model: &Model,
        wanted: &dyn Fn(SymbolId) -> bool,
    ) -> BTreeMap<SymbolId, Distributed> {
        let mut res = BTreeMap::new();
        for (id, symbol) in model.symbols().filter(|(id, _)| wanted(*id)) {
            if !symbol.is_array() {
                continue;
            }
            let Some((target, distribution)) = model.distribution_of(id) else { continue };
            if distribution.formats.iter().all(|it| *it == Format::Collapsed) {
                continue;
            }
            let at = symbol.mapping.align.as_ref().map_or(distribution.directive, |it| it.directive);
            let suffix = match ElementType::of_symbol(symbol) {
                Ok(element) => element,
                Err(why) => {
                    self.error(
                        symbol.name.range,
                        format!("the MPI backend cannot distribute `{}`: {why}", symbol.name.text),
                    );
                    continue;
                }
            };
            let target_symbol = model.symbol(target);
            let rank = symbol.rank();
            let mut formats = distribution.formats.clone();
            let cut_axes: Vec<usize> = (0..formats.len()).filter(|it| formats[*it] != Format::Collapsed).collect();
            if cut_axes.len() == 3 {
                // The grids are 2-D: the first distributed axis (along which
                // elements are contiguous) is kept whole on every process,
                // the other two cut over a 2-D grid of all the processes.
                formats[cut_axes[0]] = Format::Collapsed;
                let message = format!(
                    "the MPI backend distributes two dimensions at most: this distribution's dimension {} is kept whole on every process, the other two are cut over a 2-D grid of the processes (`--stats` has no prediction for loops on such arrays)",
                    cut_axes[0] + 1
                );
                let range = distribution.directive;
                if !self.notes.iter().any(|it| it.range == range && it.message == message) {
                    self.notes.push(Note { range, message });
                }
                if !self.relaid.contains(&id) {
                    self.relaid.push(id);
                }
            } else if cut_axes.len() > 3 {
                self.error(
                    distribution.directive,
                    "the MPI backend distributes one, two or three dimensions per array (the others `*`)",
                );
                continue;
            }
            let resolved = model.resolve(id).expect("a distribution implies a resolved chain");
            // An alignment of the same rank without constants or `*` in the
            // target puts every dimension on a template dimension of its own,
            // with any nonzero stride (negative: reversed), transposed when
            // they are permuted; one that changes rank (`embed.rs`) says which
            // dimensions are cut along the target's distributed axes (stride
            // 1, in order).
            let same_shape = target_symbol.rank() == rank
                && resolved.axes.iter().all(|it| matches!(it, analysis::model::Axis::Affine { .. }));
            // (array dimension, target axis, stride, offset) per distributed axis.
            let (cut, plain): (Vec<(usize, usize, i64, i64)>, bool) = if same_shape {
                let axes: Option<Vec<(usize, i64, i64)>> = (0..rank).map(|d| resolved.axis_of(d)).collect();
                let Some(axes) = axes.filter(|axes| {
                    let mut targets: Vec<usize> = axes.iter().map(|it| it.0).collect();
                    targets.sort_unstable();
                    targets.dedup();
                    targets.len() == rank && axes.iter().all(|it| it.1 != 0)
                }) else {
                    self.error(
                        at,
                        format!(
                            "`{}`: only alignments of every dimension with a template dimension of its own are supported by the MPI backend yet",
                            symbol.name.text
                        ),
                    );
                    continue;
                };
                let cut = (0..rank)
                    .filter(|&t| formats.get(t) != Some(&Format::Collapsed))
                    .map(|t| {
                        let d = axes.iter().position(|it| it.0 == t).expect("a permutation");
                        (d, t, axes[d].1, axes[d].2)
                    })
                    .collect();
                (cut, axes.iter().enumerate().all(|(d, it)| it.0 == d && it.1 == 1))
            } else {
                match embed::placement(&symbol.name.text, &resolved, &formats) {
                    Ok(embed::Placement::Distributed(cut)) => {
                        (cut.into_iter().map(|(dim, axis, offset)| (dim, axis, 1, offset)).collect(), true)
                    }
                    Ok(embed::Placement::Replicated(note)) => {
                        if let Some(message) = note {
                            self.notes.push(Note { range: at, message });
                        }
                        continue;
                    }
                    Err(why) => {
                        self.error(at, why);
                        continue;
                    }
                }
            };
            if rank > runtime::MAX_RANK {
                self.error(
                    at,
                    format!(
                        "`{}`: the MPI backend handles distributed arrays of rank 1 to {}",
                        symbol.name.text,
                        runtime::MAX_RANK
                    ),
                );
                continue;
            }
            let (dim, axis, stride, offset, second_cut) = match cut[..] {
                [(dim, axis, stride, offset)] => (dim, axis, stride, offset, None),
                [(dim, axis, stride, offset), second] => (dim, axis, stride, offset, Some(second)),
                _ => {
                    self.error(
                        distribution.directive,
                        "the MPI backend distributes one or two dimensions per array (the others `*`)",
                    );
                    continue;
                }
            };
            // Block size and CYCLIC-ness along a distributed template axis
            // reached at `stride`, or where and why the backend refuses it.
            let layout = |axis: usize, stride: i64| {
                match formats[axis] {
                Format::Block => Ok((0, false)),
                Format::BlockOf(Some(m)) => Ok((m, false)),
                Format::Cyclic(Some(m)) if m >= 1 && stride != 1 => Err((
                    at,
                    format!(
                        "`{}`: alignments of stride {stride} with a CYCLIC template dimension are not supported by the MPI backend yet (stride 1 is)",
                        symbol.name.text
                    ),
                )),
                Format::Cyclic(Some(m)) if m >= 1 => Ok((m, true)),
                Format::Cyclic(None) | Format::BlockOf(None) => Err((
                    distribution.directive,
                    "the block size of this distribution is not a constant: the MPI backend needs a literal, a named constant, or a variable that the last statement naming it before the directive sets to a constant".to_string(),
                )),
                other => Err((
                    distribution.directive,
                    format!(
                        "the distribution {} is not supported by the MPI backend yet (BLOCK, BLOCK(m), CYCLIC and CYCLIC(m) with a constant m are)",
                        other.render()
                    ),
                )),
            }
            };
            let (block, cyclic) = match layout(axis, stride) {
                Ok(it) => it,
                Err((range, message)) => {
                    self.error(range, message);
                    continue;
                }
            };
            let deferred = |it: &analysis::model::Symbol| {
                !it.is_dummy
                    && it.shape.iter().all(|dim| {
                        dim.lo == analysis::model::Bound::Assumed && dim.hi == analysis::model::Bound::Assumed
                    })
            };
            let constant: Option<Vec<(Bound, Bound)>> =
                symbol.shape.iter().map(|it| Some((it.lo.known()?.into(), it.hi.known()?.into()))).collect();
            // ALLOCATABLE: the bounds its ALLOCATE statement computes (`allocatable.rs`).
            let (bounds, allocated_by) = match constant {
                Some(bounds) => (bounds, None),
                None if deferred(symbol) => match self.allocated_bounds(id, rank) {
                    Ok((bounds, at)) => (bounds, Some(at)),
                    Err((range, message)) => {
                        self.error(range, message);
                        continue;
                    }
                },
                None => {
                    self.error(
                        symbol.name.range,
                        format!(
                            "`{}`: the bounds of a distributed array must be constant (or given by its ALLOCATE statement) for the MPI backend",
                            symbol.name.text
                        ),
                    );
                    continue;
                }
            };
            // The target's bounds along a distributed axis: declared, or
            // those of its ALLOCATE.
            let target_bounds = |this: &Self, axis: usize| -> Option<(Bound, Bound)> {
                let dim = &target_symbol.shape[axis];
                if let (Some(lo), Some(hi)) = (dim.lo.known(), dim.hi.known()) {
                    return Some((lo.into(), hi.into()));
                }
                if target == id {
                    return Some(bounds[axis].clone());
                }
                if !deferred(target_symbol) {
                    return None;
                }
                this.allocated_bounds(target, target_symbol.rank()).ok().map(|it| it.0[axis].clone())
            };
            let (lb, ub) = bounds[dim].clone();
            let Some((template_lo, template_hi)) = target_bounds(self, axis) else {
                // (An allocatable target's own error says why.)
                if !deferred(target_symbol) {
                    self.error(at, "the bounds of the alignment target must be constant for the MPI backend");
                }
                continue;
            };
            // Aligned by `:` with an allocatable target, element LB goes to
            // the target's LB: the analysis takes them equal, and so must
            // the ALLOCATE statements.
            if target != id && deferred(target_symbol) && lb != template_lo {
                self.error(
                    allocated_by.unwrap_or(at),
                    format!(
                        "`{}`: its lower bound along its distributed dimension is not known to be that of `{}`, with which it is aligned (the MPI backend needs them written alike in their ALLOCATE statements)",
                        symbol.name.text, target_symbol.name.text
                    ),
                );
                continue;
            }
            let (shadow_low, shadow_high) =
                symbol.mapping.shadow.as_ref().and_then(|it| it.get(dim).copied()).unwrap_or((0, 0));
            let second = match second_cut {
                None => None,
                Some((second, second_axis, stride, offset)) => {
                    let Some((template_lo, template_hi)) = target_bounds(self, second_axis) else {
                        self.error(at, "the bounds of the alignment target must be constant for the MPI backend");
                        continue;
                    };
                    let (block, cyclic) = match layout(second_axis, stride) {
                        Ok(it) => it,
                        Err((range, message)) => {
                            self.error(range, message);
                            continue;
                        }
                    };
                    let (shadow_low, shadow_high) =
                        symbol.mapping.shadow.as_ref().and_then(|it| it.get(second).copied()).unwrap_or((0, 0));
                    // The declared arrangement's shape, when it is 2-D and constant.
                    let procs = distribution
                        .onto
                        .map(|it| &model.symbol(it).shape)
                        .filter(|shape| shape.len() == 2)
                        .and_then(|shape| {
                            let extent = |it: &analysis::model::Dim| Some(it.hi.known()? - it.lo.known()? + 1);
                            Some((extent(&shape[0])?, extent(&shape[1])?))
                        })
                        .unwrap_or((0, 0));
                    Some(SecondAxis {
                        dim: second,
                        lb: bounds[second].0.clone(),
                        ub: bounds[second].1.clone(),
                        offset,
                        stride,
                        template_lo,
                        template_hi,
                        block,
                        cyclic,
                        shadow_low,
                        shadow_high,
                        procs,
                    })
                }
            };
            res.insert(
                id,
                Distributed {
                    name: symbol.name.text.clone(),
                    suffix,
                    lbs: bounds.iter().map(|it| it.0.clone()).collect(),
                    ubs: bounds.iter().map(|it| it.1.clone()).collect(),
                    dim,
                    lb,
                    ub,
                    offset,
                    stride,
                    plain,
                    template_lo,
                    template_hi,
                    block,
                    cyclic,
                    target,
                    shadow_low,
                    shadow_high,
                    second,
                    allocated_by,
                },
            );
        }
        res
    }

    /// The distributed arrays named inside `range`, with their name ranges.
    fn distributed_occurrences(&self, range: TextRange) -> Vec<(TextRange, SymbolId)> {
        let occurrences = analysis::ide::occurrences(self.analysis);
        // Sorted by start: skip those before the range, stop after it.
        let first = occurrences.partition_point(|it| it.range.start < range.start);
        occurrences[first..]
            .iter()
            .take_while(|it| it.range.start < range.end)
            .filter(|it| range.contains_range(it.range) && self.distributed.contains_key(&it.symbol))
            .map(|it| (it.range, it.symbol))
            .collect()
    }

    fn plan<'s>(&mut self, stmt: &'s Stmt) -> Plan<'s>
    where
        'a: 's,
    {
        let plan = self.plan_statement(stmt);
        // Every process makes and frees the local parts: rank 0 alone cannot
        // (`allocatable.rs`).
        if let Plan::OnRankZero { .. } = plan {
            let mut stack = vec![stmt];
            while let Some(inner) = stack.pop() {
                if (self.is_allocate(inner) || self.is_deallocate(inner))
                    && !self.distributed_occurrences(inner.range).is_empty()
                {
                    self.error(
                        inner.header,
                        "this ALLOCATE or DEALLOCATE of a distributed array sits in a construct that runs on rank 0: the MPI backend needs it run by every process",
                    );
                }
                stack.extend(inner.children());
            }
        }
        plan
    }

    fn plan_statement<'s>(&mut self, stmt: &'s Stmt) -> Plan<'s>
    where
        'a: 's,
    {
        // ALLOCATE and DEALLOCATE of distributed arrays: every process, on
        // its local parts (`allocatable.rs`).
        if !self.distributed_occurrences(stmt.range).is_empty() {
            if self.is_allocate(stmt) {
                return Plan::Allocate(stmt);
            }
            if self.is_deallocate(stmt) {
                return Plan::Verbatim(stmt);
            }
        }
        let (procedures, arrays) = self.implicit_arrays(stmt.range);
        let procedures: Vec<String> = procedures.into_iter().map(str::to_string).collect();
        // A construct whose statements only CALL such subroutines is planned
        // statement by statement: each CALL meets this test on its own.
        let only_calls = !stmt.children().is_empty() && !self.uses_touching_outside_calls(stmt);
        if !arrays.is_empty() && !only_calls {
            // A CALL of a subroutine of a module may run on every process, its
            // copy working on the module arrays' local parts (`procedures.rs`).
            let spmd = match &stmt.kind {
                StmtKind::Call { name, .. } if procedures == [name.key()] => Some(self.spmd_call(stmt)),
                // `r = f()`: the function's copy on every process.
                StmtKind::Assign { .. } if procedures.len() == 1 => Some(self.spmd_function_call(stmt)),
                _ => None,
            };
            let names: Vec<&str> =
                arrays.iter().filter_map(|it| Some(self.distributed.get(it)?.name.as_str())).collect();
            let why = match spmd {
                Some(Ok(plan)) => return plan,
                Some(Err(why)) => format!(
                    "it calls {}, which use(s) the distributed array(s) {} by host or use association, and its copy cannot run on every process: {why}",
                    procedures.join(", "),
                    names.join(", ")
                ),
                None => format!(
                    "it calls {}, which use(s) the distributed array(s) {} by host or use association (such functions, and subroutines that cannot run on every process, run on rank 0 on gathered copies)",
                    procedures.join(", "),
                    names.join(", ")
                ),
            };
            self.notes.push(Note { range: stmt.header, message: format!("runs on one process: {why}") });
            return Plan::OnRankZero { stmt, why: Some(why) };
        }
        if let Err(why) = self.forall_reads_what_it_assigned(stmt) {
            return self.forall_fallback(stmt, why);
        }
        if let StmtKind::Call { .. } = stmt.kind {
            // A subroutine of the file that takes distributed arrays whole, as
            // they are mapped, runs on every process (`procedures.rs`); other
            // calls run on rank 0: distributed arguments are gathered for the
            // call and scattered after it, variables it may have set are
            // broadcast (`emit_on_rank_zero`).
            // EXTRINSIC(HPF_LOCAL): every process on its local parts (`extrinsic.rs`).
            if let Some(plan) = self.local_call(stmt) {
                return plan;
            }
            let why = if self.distributed_occurrences(stmt.range).is_empty() {
                None
            } else {
                match self.spmd_call(stmt) {
                    Ok(plan) => return plan,
                    Err(why) => Some(format!(
                        "subroutines run on rank 0 on gathered copies of distributed arguments when {why}"
                    )),
                }
            };
            if let Some(why) = &why {
                self.notes.push(Note { range: stmt.header, message: format!("runs on one process: {why}") });
            }
            return Plan::OnRankZero { stmt, why };
        }
        if let Some(permute) = self.permute_plan(stmt) {
            self.grow_shift_shadow(&permute);
            return Plan::Permute(permute);
        }
        if let Some(matmul) = self.matmul_plan(stmt) {
            return Plan::Matmul(matmul);
        }
        match self.dim_reduction(stmt) {
            Some(Ok(plan)) => return Plan::DimReduce(Box::new(plan)),
            Some(Err(why)) => {
                self.notes.push(Note { range: stmt.header, message: format!("runs on one process: {why}") });
                return Plan::OnRankZero { stmt, why: Some(why) };
            }
            None => {}
        }
        if self.is_read(stmt) {
            // Rank 0 reads (the launcher gives it the standard input), then
            // what it read is scattered or broadcast (`emit_on_rank_zero`).
            if let Err(why) = self.read_parts(stmt) {
                self.error(stmt.header, why);
            }
            return Plan::OnRankZero { stmt, why: None };
        }
        // (Calls of procedures that use distributed module arrays are planned inside.)
        if self.distributed_occurrences(stmt.range).is_empty() && !self.contains_io(stmt) && arrays.is_empty() {
            return Plan::Verbatim(stmt);
        }
        let grid = self.touches_grid(stmt.range);
        if let StmtKind::Do { .. } | StmtKind::DoWhile { .. } = stmt.kind {
            if let Some(plan) = self.replicated_loop_without_count(stmt) {
                return plan;
            }
        }
        if let StmtKind::Do { .. } = stmt.kind {
            let parallel = if grid { self.grid_nest(stmt) } else { self.parallel_loop(stmt) };
            match parallel {
                Ok(plan) => return plan,
                Err(why) => {
                    if !grid {
                        // `t = t - a(i, j) * y(j)`: each term on the owner of the j-th element.
                        let temps = self.temps.len();
                        match self.element_reduction(stmt) {
                            Ok(plan) => return Plan::ElementReduction(plan),
                            Err(_) => self.temps.truncate(temps),
                        }
                        if let Ok(recurrence) = self.recurrence(stmt) {
                            return Plan::Recurrence(recurrence);
                        }
                        // A dependence carried at a constant distance (`pipeline.rs`).
                        if let Ok(pipeline) = self.pipeline(stmt) {
                            let message = self.pipeline_note(&pipeline);
                            self.notes.push(Note { range: stmt.header, message });
                            return Plan::Pipeline(pipeline);
                        }
                        if let Ok(plan) = self.single_owner_loop(stmt) {
                            return plan;
                        }
                        if let Ok(scatter) = self.scatter_loop(stmt) {
                            return Plan::Scatter(scatter);
                        }
                        if let Ok(plan) = self.fission(stmt) {
                            return plan;
                        }
                    }
                    let notes = self.notes.len();
                    let temps = self.temps.len();
                    let sequential = self.sequential_loop(stmt);
                    // A reduction into an element combined in every
                    // iteration: one all-to-all for the whole nest is
                    // cheaper when the nest can fetch what it reads.
                    if let Ok(Plan::Sequential { body, .. }) = &sequential {
                        if body.iter().any(|it| matches!(it, Plan::ElementReduction(_))) {
                            if let Ok(nest) = self.fetched_nest(stmt) {
                                self.notes.truncate(notes);
                                self.temps.truncate(temps);
                                let message = self.fetched_nest_note(&nest);
                                self.notes.push(Note { range: stmt.header, message });
                                return Plan::FetchedNest(nest);
                            }
                        }
                    }
                    match sequential {
                        Ok(plan) => {
                            // Element by element, a loop over distributed data is
                            // slow (an ownership test per statement and a fetch
                            // per iteration): say why it is not owner-computes.
                            if let Plan::Sequential { body, control } = &plan {
                                if self.assigns_elements_along(body, &control.var.key()) {
                                    self.notes.push(Note {
                                        range: stmt.header,
                                        message: format!(
                                            "every process runs this loop, each element assignment on its owner, iteration by iteration: {why}"
                                        ),
                                    });
                                }
                            }
                            return plan;
                        }
                        Err(sequential_why) => {
                            // The body's notes describe a plan that is not taken.
                            self.notes.truncate(notes);
                            // The distributed fallback (`nest_fetch.rs`).
                            if let Ok(nest) = self.fetched_nest(stmt) {
                                let message = self.fetched_nest_note(&nest);
                                self.notes.push(Note { range: stmt.header, message });
                                return Plan::FetchedNest(nest);
                            }
                            let why = format!("{why}, and {sequential_why}");
                            self.notes
                                .push(Note { range: stmt.header, message: format!("runs on one process: {why}") });
                            return Plan::OnRankZero { stmt, why: Some(why) };
                        }
                    }
                }
            }
        }
        if let StmtKind::If { .. } = stmt.kind {
            let notes = self.notes.len();
            match self.replicated_construct(stmt) {
                Ok(plan) => return plan,
                Err(why) => {
                    self.notes.truncate(notes);
                    self.notes.push(Note { range: stmt.header, message: format!("runs on one process: {why}") });
                    return Plan::OnRankZero { stmt, why: Some(why) };
                }
            }
        }
        // A statement on an array distributed in two dimensions: `grid.rs`.
        if grid {
            let reduces = match &stmt.kind {
                StmtKind::Output { .. } => true,
                StmtKind::Assign { lhs, .. } => match &lhs.kind {
                    ExprKind::Name(name) => !self.is_distributed_name(name),
                    _ => false,
                },
                _ => false,
            };
            let planned = if reduces {
                // Reductions and elements computed in parallel, then the statement.
                let temps = self.temps.len();
                self.reduction_statement(stmt).inspect_err(|_| self.temps.truncate(temps))
            } else {
                self.grid_statement(stmt)
            };
            match planned {
                Ok(plan) => return plan,
                Err(why) if matches!(stmt.kind, StmtKind::Forall { .. }) => return self.forall_fallback(stmt, why),
                Err(why) => {
                    let why = (!matches!(stmt.kind, StmtKind::Output { .. })).then_some(why);
                    if let Some(why) = &why {
                        self.notes.push(Note { range: stmt.header, message: format!("runs on one process: {why}") });
                    }
                    return Plan::OnRankZero { stmt, why };
                }
            }
        }
        // Outside DO loops, a statement on a CYCLIC array runs in parallel
        // when it needs no other process's data: a whole array set to a
        // constant, an element (`cyclic_assignment`), or an array assignment,
        // FORALL or WHERE whose reads all lie on the left side's template
        // cells (course by course, `assign.rs`); else on gathered copies.
        let cyclic =
            self.distributed_occurrences(stmt.range).iter().find(|it| self.distributed[&it.1].cyclic).map(|it| it.1);
        if let StmtKind::Forall { .. } = stmt.kind {
            // A FORALL on a BLOCK home that reads CYCLIC arrays fetches them;
            // one on a CYCLIC home reads its own cells only.
            match self.forall(stmt) {
                Ok(plan) => return plan,
                Err(why) => return self.forall_fallback(stmt, why),
            }
        }
        if let Some(plan) = cyclic.and_then(|_| self.cyclic_assignment(stmt)) {
            return plan;
        }
        let mut why_not = None;
        // An array assignment that reads CYCLIC arrays, or assigns one whose
        // reads are not all on its cells, fetches what it reads through the
        // inspector/executor (`assign.rs`).
        if let StmtKind::Assign { .. } = stmt.kind {
            match self.assignment(stmt) {
                Ok(plan) => return plan,
                Err(why) => why_not = Some(why),
            }
        } else if let StmtKind::Where { .. } = stmt.kind {
            match self.where_construct(stmt) {
                Ok(plan) => return plan,
                Err(why) => why_not = Some(why),
            }
        }
        let assigns_distributed = match &stmt.kind {
            StmtKind::Assign { lhs, .. } => match &lhs.kind {
                ExprKind::Name(name) | ExprKind::Ref { name, .. } => self.is_distributed_name(name),
                _ => false,
            },
            _ => false,
        };
        if assigns_distributed {
            // (Its reason to refuse would only repeat the assignment's.)
            if let Ok(plan) = self.slice_assignment(stmt) {
                return Plan::SliceCopy(plan);
            }
            // One element on its owner, what it reads fetched (`nest_fetch.rs`).
            if let Ok(nest) = self.fetched_nest(stmt) {
                let message = self.fetched_nest_note(&nest);
                self.notes.push(Note { range: stmt.header, message });
                return Plan::FetchedNest(nest);
            }
        }
        if !assigns_distributed && matches!(stmt.kind, StmtKind::Assign { .. } | StmtKind::Output { .. }) {
            let temps = self.temps.len();
            match self.reduction_statement(stmt) {
                Ok(plan) => return plan,
                Err(why) => {
                    self.temps.truncate(temps);
                    why_not = Some(match why_not {
                        Some(first) => format!("{first}; {why}"),
                        None => why,
                    });
                }
            }
        }
        if !self.distributed_occurrences(stmt.range).is_empty() {
            let why = match (&stmt.kind, why_not) {
                (StmtKind::Output { .. }, _) => None,
                (_, Some(why)) => Some(format!("it is not an owner-computes assignment: {why}")),
                _ => Some(
                    "statements outside parallel loops that touch distributed arrays run on rank 0 on gathered copies"
                        .to_string(),
                ),
            };
            if let Some(why) = &why {
                self.notes.push(Note { range: stmt.header, message: format!("runs on one process: {why}") });
            }
            return Plan::OnRankZero { stmt, why };
        }
        Plan::OnRankZero { stmt, why: None }
    }

    /// A FORALL no faster rule plans (`why`): owner-computes after fetching
    /// what it reads (`nest_fetch.rs`), or on rank 0 with a note.
    fn forall_fallback<'s>(&mut self, stmt: &'s Stmt, why: String) -> Plan<'s> {
        if let Ok(nest) = self.fetched_nest(stmt) {
            let message = self.fetched_nest_note(&nest);
            self.notes.push(Note { range: stmt.header, message });
            return Plan::FetchedNest(nest);
        }
        self.notes.push(Note { range: stmt.header, message: format!("runs on one process: {why}") });
        Plan::OnRankZero { stmt, why: Some(why) }
    }

    /// A DO WHILE loop or an IF construct every process runs, its bodies
    /// planned statement by statement, or why it cannot run that way.
    fn replicated_construct<'s>(&mut self, stmt: &'s Stmt) -> Result<Plan<'s>, String>
    where
        'a: 's,
    {
        let branches: Vec<(Option<&'s syntax::Expr>, &'s [Stmt])> = match &stmt.kind {
            StmtKind::DoWhile { cond: Some(cond), body } => vec![(Some(cond), body.as_slice())],
            // `DO` ... `IF (...) EXIT` ... `END DO`: a time loop with no count.
            StmtKind::Do { control: None, body, .. } => vec![(None, body.as_slice())],
            StmtKind::If { branches } => branches.iter().map(|(cond, body)| (cond.as_ref(), body.as_slice())).collect(),
            _ => return Err("it is not a DO WHILE loop or an IF construct".to_string()),
        };
        // Conditions on every branch but the last (ELSE).
        if branches.iter().rev().skip(1).any(|it| it.0.is_none()) {
            return Err("its branches were not all understood".to_string());
        }
        if branches.iter().filter_map(|it| it.0).any(|it| !self.distributed_occurrences(it.range).is_empty()) {
            return Err("its condition reads distributed arrays".to_string());
        }
        let is_loop = matches!(stmt.kind, StmtKind::DoWhile { .. } | StmtKind::Do { .. });
        let planned: Vec<(Option<TextRange>, Vec<Plan<'s>>)> = branches
            .iter()
            .map(|(cond, body)| (cond.map(|it| it.range), body.iter().map(|it| self.plan(it)).collect()))
            .collect();
        // An IF may leave an enclosing loop on every process alike; a DO
        // WHILE's body only by a CYCLE or EXIT every process runs.
        if is_loop {
            let body = branches.first().map_or(&[][..], |it| it.1);
            let plans = planned.first().map_or(&[][..], |it| it.1.as_slice());
            if let Some(branch) = self.unshared_branch(body, plans) {
                return Err(format!(
                    "its body branches (`{}`)",
                    self.slice(branch.header).split_whitespace().next().unwrap_or("")
                ));
            }
        }
        let body_plans = || planned.iter().flat_map(|it| &it.1);
        // A statement on gathered copies runs on rank 0 alone, in every
        // iteration: worth it when the loop does its other work in bulk.
        if is_loop && body_plans().any(Plan::gathers) && !body_plans().any(Plan::runs_in_bulk) {
            return Err("a statement of its body runs on rank 0 on gathered copies".to_string());
        }
        if is_loop && body_plans().any(Plan::fetches_elements) && !body_plans().any(Plan::runs_in_bulk) {
            return Err("an element assignment of its body would fetch by an all-to-all in every iteration".to_string());
        }
        if !is_loop {
            return Ok(Plan::If { stmt, branches: planned });
        }
        match planned.into_iter().next() {
            Some((cond, mut body)) => {
                self.reuse_schedules(stmt, &mut fetched_nests(&mut body));
                Ok(Plan::While { stmt, cond, body })
            }
            None => Err("its condition was not understood".to_string()),
        }
    }

    /// An uncounted DO loop or a DO WHILE loop, run by every process with
    /// its body planned statement by statement, or on rank 0 with a note
    /// saying why it cannot; `None` for a counted DO loop.
    fn replicated_loop_without_count<'s>(&mut self, stmt: &'s Stmt) -> Option<Plan<'s>>
    where
        'a: 's,
    {
        if let StmtKind::Do { control: Some(_), .. } = stmt.kind {
            return None;
        }
        let notes = self.notes.len();
        Some(match self.replicated_construct(stmt) {
            Ok(plan) => plan,
            Err(why) => {
                // The body's notes describe a plan that is not taken.
                self.notes.truncate(notes);
                self.notes.push(Note { range: stmt.header, message: format!("runs on one process: {why}") });
                Plan::OnRankZero { stmt, why: Some(why) }
            }
        })
    }

    /// A DO loop every process runs, its body planned statement by
    /// statement, or why it cannot run that way.
    fn sequential_loop<'s>(&mut self, stmt: &'s Stmt) -> Result<Plan<'s>, String>
    where
        'a: 's,
    {
        let StmtKind::Do { control: Some(control), body, .. } = &stmt.kind else {
            return Err("it is not a counted DO loop".to_string());
        };
        let mut bounds = vec![control.lo.range, control.hi.range];
        bounds.extend(control.step.as_ref().map(|it| it.range));
        if bounds.iter().any(|it| !self.distributed_occurrences(*it).is_empty()) {
            return Err("its bounds read distributed arrays".to_string());
        }
        let stmts = body;
        let mut body: Vec<Plan<'s>> = stmts.iter().map(|it| self.plan(it)).collect();
        if let Some(branch) = self.unshared_branch(stmts, &body) {
            return Err(format!(
                "its body branches (`{}`)",
                self.slice(branch.header).split_whitespace().next().unwrap_or("")
            ));
        }
        if !body.iter().any(Plan::runs_in_parallel) {
            return Err("no statement of its body runs in parallel".to_string());
        }
        // Gathering arrays to rank 0 in every iteration would cost more than
        // running the whole loop there once, unless the loop does work in bulk.
        if body.iter().any(Plan::gathers) && !body.iter().any(Plan::runs_in_bulk) {
            return Err("a statement of its body runs on rank 0 on gathered copies".to_string());
        }
        if body.iter().any(Plan::fetches_elements) && !body.iter().any(Plan::runs_in_bulk) {
            return Err("an element assignment of its body would fetch by an all-to-all in every iteration".to_string());
        }
        self.reuse_schedules(stmt, &mut fetched_nests(&mut body));
        Ok(Plan::Sequential { control, body })
    }

    /// Whether `plans` (a loop's body, IF constructs included) assign single
    /// distributed elements whose distributed subscript names the loop
    /// index `key`: the loop walks distributed elements one by one.
    fn assigns_elements_along(&self, plans: &[Plan], key: &str) -> bool {
        plans.iter().any(|plan| match plan {
            // One element (a loop its owner runs whole is not walked element by element).
            Plan::Owner { stmt, index, .. } if matches!(stmt.kind, StmtKind::Assign { .. }) => {
                private::mentions_word(self.slice(*index), key)
            }
            Plan::If { branches, .. } => branches.iter().any(|it| self.assigns_elements_along(&it.1, key)),
            // (An inner loop every process runs walks them too.)
            Plan::Sequential { body, .. } => self.assigns_elements_along(body, key),
            _ => false,
        })
    }

    /// The INDEPENDENT directive right before the DO loop `stmt` (only
    /// blank lines, comments, other directives and a label between): HPF's
    /// assertion that no iteration of the loop writes what another reads or
    /// writes, so reads of neighbours fetched before it are the values the
    /// sequential loop reads.
    pub(crate) fn independent(&self, stmt: &Stmt) -> Option<&'a syntax::directive::Independent> {
        independent_before(&self.analysis.file, self.text, stmt.range.start).map(|it| it.1)
    }

    /// The statements of a DO nest, or why it holds something else: only
    /// DO loops (with control), assignments, IF statements and constructs
    /// and CONTINUE.
    fn nest_parts<'s>(&self, stmt: &'s Stmt) -> Result<NestParts<'s>, String> {
        let mut parts = NestParts {
            loops: Vec::new(),
            assignments: Vec::new(),
            ifs: Vec::new(),
            leaves: Vec::new(),
            scalars: Vec::new(),
        };
        let mut stack = vec![stmt];
        while let Some(current) = stack.pop() {
            match &current.kind {
                StmtKind::Do { control: Some(_), body, .. } => {
                    parts.loops.push(current);
                    stack.extend(body.iter());
                }
                StmtKind::Assign { lhs, .. } => {
                    parts.assignments.push(current);
                    if let ExprKind::Name(name) = &lhs.kind {
                        if !self.is_distributed_name(name) && !parts.scalars.iter().any(|it| it.key() == name.key()) {
                            parts.scalars.push(name);
                        }
                    }
                }
                StmtKind::If { branches } => {
                    parts.ifs.push(current);
                    stack.extend(branches.iter().flat_map(|it| &it.1));
                }
                StmtKind::Other { body, .. } if body.is_empty() && self.begins_with_keyword(current, &["continue"]) => {
                }
                StmtKind::Other { body, .. } if body.is_empty() && self.loop_branch(current).is_some() => {
                    parts.ifs.push(current);
                    parts.leaves.extend(self.loop_branch(current).map(|it| (current, it)));
                }
                _ => return Err("its body holds more than DO loops and assignments".to_string()),
            }
        }
        Ok(parts)
    }

    /// Whether an array a nest accesses is distributed (then in the home's
    /// blocks; `false`: replicated and only read), or why the nest cannot run.
    fn cut_like_home(&self, access: &analysis::loops::Access, home: &Distributed) -> Result<bool, String> {
        let name = &self.analysis.model.symbol(access.array).name.text;
        let Some(distributed) = self.distributed.get(&access.array) else {
            if access.attr == AccessAttr::Update {
                return Err(format!("it writes the replicated array {name}"));
            }
            return Ok(false);
        };
        if !distributed.same_blocks(home) {
            return Err(format!("{name} and the home are distributed differently"));
        }
        Ok(true)
    }

    /// Whether a nest accesses `X(a*v+c)` of a rank-1 BLOCK array on the
    /// very template cell of its rank-1 home `H(b*v+q)` for every `v` (the
    /// same target, `stride_X * a == stride_H * b`, the same offset): a
    /// local access at any stride, `B(2*I-1)` for `X(I)` on `T(2*I-1)`,
    /// `B(N+1-I)` for a reversed `Y(I)`, `Y(I)` for `E(2*I)` when `Y(I)`
    /// sits on `T(2*I)`.
    fn on_home_cell(
        &self,
        access: &analysis::loops::Access,
        var_key: &str,
        nest: &[analysis::loops::NestIndex],
        home: &Distributed,
        (home_coef, home_offset): (i64, i64),
    ) -> bool {
        let Some(array) = self.distributed.get(&access.array) else { return false };
        if !array.is_rank_one_block() || !home.is_rank_one_block() {
            return false;
        }
        let Some(SubscriptForm::Affine { index, coef, offset }) = access.subscripts.first() else { return false };
        array.target == home.target
            && nest[*index].key == var_key
            && array.stride * coef == home.stride * home_coef
            && array.stride * offset + array.offset == home.stride * home_offset + home.offset
    }

    /// Whether a nest reads `X(.., v+c, ..)` of a BLOCK array distributed
    /// along another dimension than its BLOCK home `H(.., v+q, ..)` on the
    /// home element's very template cell for every `v`: `kappa(j)` aligned
    /// with `t(*, j)` in a loop over the columns of `t(*, BLOCK)`.
    fn on_home_cell_across(
        &self,
        access: &analysis::loops::Access,
        var_key: &str,
        nest: &[analysis::loops::NestIndex],
        home: &Distributed,
        home_offset: i64,
    ) -> bool {
        let Some(array) = self.distributed.get(&access.array) else { return false };
        if array.cyclic || home.cyclic || array.second.is_some() || home.second.is_some() {
            return false;
        }
        let Some(SubscriptForm::Affine { index, coef: 1, offset }) = access.subscripts.get(array.dim) else {
            return false;
        };
        let same_template = array.target == home.target
            || (array.template_lo == home.template_lo
                && array.template_hi == home.template_hi
                && array.block == home.block);
        same_template
            && nest[*index].key == var_key
            && array.stride == home.stride
            && array.stride * offset + array.offset == home.stride * home_offset + home.offset
    }

    /// For a nest whose rank-1 BLOCK home is `H(a*v+q)` with `a` other
    /// than 1, an access off the home's cells: a read the inspector/executor
    /// fetches (pushed to `remote`), a distributed array copied whole
    /// (`replicated`), a replicated array read as it is, or why the nest
    /// cannot run so (a write elsewhere than the home's cells, a read of an
    /// array the nest writes).
    #[allow(clippy::type_complexity)]
    fn strided_home_access(
        &self,
        access: &analysis::loops::Access,
        nest: &[analysis::loops::NestIndex],
        (var_key, home, home_form): (&str, &Distributed, (i64, i64)),
        (loops, written, ifs, privates): (&[&Stmt], &[SymbolId], &[&Stmt], &[String]),
        (remote, replicated): (&mut Vec<remap::RemoteRead>, &mut Vec<SymbolId>),
        replicable: &dyn Fn(&analysis::loops::Access) -> bool,
    ) -> Result<(), String> {
        let name = &self.analysis.model.symbol(access.array).name.text;
        if access.attr == AccessAttr::Update {
            if !self.distributed.contains_key(&access.array) {
                return Err(format!("it writes the replicated array {name}"));
            }
            if !self.on_home_cell(access, var_key, nest, home, home_form) {
                return Err(format!("it updates {name} at other template cells than its home's"));
            }
            return Ok(());
        }
        if !self.distributed.contains_key(&access.array) {
            return Ok(());
        }
        // The inspector evaluates every subscript in every iteration, before
        // the loop: not under an IF, not of a private scalar.
        let fetched = self
            .remote_read(access, home, loops, written, false)
            .filter(|_| ifs.is_empty())
            .filter(|it| !privates.iter().any(|key| mentions_word(self.slice(it.subscript()), key)));
        if let Some(read) = fetched {
            remote.push(read);
        } else if replicable(access) {
            replicated.push(access.array);
        } else {
            return Err(format!(
                "the home's distributed subscript is `{}*v+q`, and it reads {name} off the home's cells where it cannot fetch it",
                home_form.0
            ));
        }
        Ok(())
    }

    /// Refuses a DO loop whose text cannot be replaced or copied on its
    /// own: one that ends at a statement it shares with a loop around it
    /// (not its own END DO or CONTINUE), or whose bounds read distributed
    /// arrays (not alike on every process).
    fn stands_alone(&self, stmt: &Stmt, control: &LoopControl) -> Result<(), String> {
        let tail = self.slice(stmt.range).trim_end().to_ascii_lowercase();
        if !["continue", "end do", "enddo"].iter().any(|it| tail.ends_with(it)) {
            return Err("it ends at a statement it shares with a loop around it".to_string());
        }
        let mut bounds = vec![&control.lo, &control.hi];
        bounds.extend(control.step.as_ref());
        if bounds.iter().any(|it| !self.distributed_occurrences(it.range).is_empty()) {
            return Err("its bounds read distributed arrays".to_string());
        }
        Ok(())
    }

    /// A DO loop all of whose distributed references sit on one process: the
    /// owner of the element that its references' distributed subscript
    /// names, which does not change in the loop (`DO I = K+1, N` with
    /// `A(I,K) = A(I,K) / A(K,K)` on an array distributed by columns). The
    /// owner runs it as written (at local positions on a CYCLIC array); the
    /// others only set its index as the loop leaves it.
    fn single_owner_loop<'s>(&mut self, stmt: &'s Stmt) -> Result<Plan<'s>, String>
    where
        'a: 's,
    {
        let StmtKind::Do { control: Some(control), .. } = &stmt.kind else {
            return Err("it is not a counted DO loop".to_string());
        };
        let NestParts { loops, assignments, ifs, scalars, .. } = self.nest_parts(stmt)?;
        if loops.len() != 1 || !ifs.is_empty() || !scalars.is_empty() {
            return Err("it is not a single loop of element assignments".to_string());
        }
        // Its text is copied inside an IF block.
        self.stands_alone(stmt, control)?;
        let keys = vec![control.var.key()];
        let mut exprs: Vec<&syntax::Expr> = Vec::new();
        for it in &assignments {
            if let StmtKind::Assign { lhs, rhs } = &it.kind {
                // Replicated data must stay alike on every process.
                let ExprKind::Ref { name, .. } = &lhs.kind else {
                    return Err("it assigns a whole array".to_string());
                };
                if !self.is_distributed_name(name) {
                    return Err(format!("it assigns the replicated array {}", name.text));
                }
                exprs.extend([lhs, rhs]);
            }
        }
        let mut owner: Option<(SymbolId, analysis::eval::Linear, TextRange)> = None;
        for (range, id) in self.distributed_occurrences(stmt.range) {
            let distributed = &self.distributed[&id];
            let args = exprs.iter().find_map(|it| assign::find_reference(it, range));
            let value = match args.filter(|it| it.len() == distributed.lbs.len()).and_then(|it| it.get(distributed.dim))
            {
                Some(syntax::Subscript::Expr(value)) if distributed.second.is_none() => value,
                _ => return Err(format!("it names {} other than as one element", distributed.name)),
            };
            if mentions(value, &keys) || !self.distributed_occurrences(value.range).is_empty() {
                return Err(format!("the distributed subscript of {} changes in the loop", distributed.name));
            }
            let form = self.linear_of(value).ok_or("a distributed subscript is not affine")?;
            match &owner {
                None => owner = Some((id, form, value.range)),
                Some((first, first_form, _)) => {
                    let first = &self.distributed[first];
                    let same_cell = distributed.same_blocks(first)
                        && distributed.stride == first.stride
                        && distributed.offset == first.offset
                        && form == *first_form;
                    if !same_cell {
                        return Err(format!("{} is read on another process than the home", distributed.name));
                    }
                }
            }
        }
        let (array, _, index) = owner.ok_or("it touches no distributed array")?;
        let edits =
            if self.distributed[&array].cyclic { self.cyclic_subscript_edits(stmt.range, &exprs)? } else { Vec::new() };
        Ok(Plan::Owner { stmt, array, index, reads: BTreeMap::new(), edits, remote: Vec::new() })
    }

    /// The owner-computes form of a DO nest, or why it has none here.
    fn parallel_loop<'s>(&mut self, stmt: &'s Stmt) -> Result<Plan<'s>, String>
    where
        'a: 's,
    {
        let NestParts { loops, assignments, ifs, leaves, scalars } = self.nest_parts(stmt)?;
        let reports: Vec<&'a LoopReport> = self
            .analysis
            .loops
            .iter()
            .map(|it| &**it)
            .filter(|it| stmt.range.contains_range(it.range) && it.kind == LoopKind::Do)
            .collect();
        let with_home: Vec<&&LoopReport> = reports.iter().filter(|it| !it.accesses.is_empty()).collect();
        let first = with_home.first().ok_or("it touches no array")?;
        // Scalars it reduces; the others must be private (below).
        let mut reductions: Vec<loop_reductions::LoopReduction> = Vec::new();
        let mut others: Vec<&syntax::Name> = Vec::new();
        for scalar in &scalars {
            match self.loop_reduction(stmt, scalar) {
                Some(reduction) => reductions.push(reduction?),
                None => others.push(scalar),
            }
        }
        // Replicated arrays it writes may be private work arrays (checked
        // below, once the distributing loop is known): the home is then the
        // first update of another array.
        let work_arrays = self.assigned_replicated_arrays(&assignments);
        let work_ids: Vec<SymbolId> = work_arrays.iter().filter_map(|it| self.lookup(&it.key())).collect();
        let (first, home_of_work) = match first.home.as_ref() {
            Some(home) if work_ids.contains(&home.array) => with_home
                .iter()
                .find_map(|report| {
                    let access = report
                        .accesses
                        .iter()
                        .find(|it| it.attr == AccessAttr::Update && !work_ids.contains(&it.array))?;
                    Some((
                        report,
                        analysis::loops::Home {
                            array: access.array,
                            range: access.range,
                            subscripts: access.subscripts.clone(),
                            triple: Vec::new(),
                        },
                    ))
                })
                .map_or((first, None), |(report, home)| (report, Some(home))),
            _ => (first, None),
        };
        // A nest that only reduces runs where the elements it reads live.
        let read_home = (first.home.is_none() && !reductions.is_empty()).then(|| self.read_home(first)).flatten();
        let home = home_of_work.as_ref().or(first.home.as_ref()).or(read_home.as_ref()).ok_or_else(|| match scalars
            .first()
        {
            Some(scalar) => format!("it updates no distributed array (it assigns the scalar {})", scalar.text),
            None => "it updates no distributed array".to_string(),
        })?;
        let home_distributed = self.distributed.get(&home.array).ok_or("its home is not distributed")?.clone();
        let dim = home_distributed.dim;
        // `H(a*v+q)`: on a rank-1 BLOCK home, any `a` (the process runs the
        // iterations whose `a*v+q` it owns, `hpf_local_bounds_affine`).
        let (home_index, home_coef, home_offset) = match home.subscripts.get(dim) {
            Some(SubscriptForm::Affine { index, coef, offset })
                if *coef == 1 || (*coef != 0 && home_distributed.is_rank_one_block()) =>
            {
                (*index, *coef, *offset)
            }
            _ => return Err("the home's distributed subscript is not `v+q` for a loop index v".to_string()),
        };
        let var_key = first.nest[home_index].key.clone();
        let distributing = *loops
            .iter()
            .find(|it| matches!(&it.kind, StmtKind::Do { control: Some(control), .. } if control.var.key() == var_key))
            .ok_or("the index of the home's distributed dimension is not a loop of this nest")?;
        // Only the distributing loop's iterations are split: a second loop over the
        // same index, or an assignment outside it, would run whole on every process.
        if loops.iter().any(|it| {
            !std::ptr::eq(*it, distributing)
                && matches!(&it.kind, StmtKind::Do { control: Some(control), .. } if control.var.key() == var_key)
        }) {
            return Err("two loops of the nest run over the distributed index".to_string());
        }
        if assignments.iter().any(|it| !distributing.range.contains_range(it.range)) {
            return Err("it assigns outside its distributing loop".to_string());
        }
        if ifs.iter().any(|it| !distributing.range.contains_range(it.range)) {
            return Err("it branches outside its distributing loop".to_string());
        }
        // An inner loop's index gets its final value after the nest as if
        // the loop ran: it must run whenever its iteration of the nest does.
        if loops.iter().any(|it| ifs.iter().any(|branch| branch.range.contains_range(it.range))) {
            return Err("a DO loop of the nest is inside an IF".to_string());
        }
        // Nor skipped by a CYCLE or EXIT before it.
        if loops.iter().any(|it| leaves.iter().any(|leave| leave.0.range.start < it.range.start)) {
            return Err("a CYCLE or EXIT may skip a DO loop of the nest".to_string());
        }
        let mut privates: Vec<String> = Vec::new();
        let mut last_values: Vec<String> = Vec::new();
        for scalar in &others {
            if self.private_scalar(stmt, distributing, &loops, scalar)? == private::After::LastValue {
                last_values.push(scalar.text.clone());
            }
            privates.push(scalar.key());
        }
        for array in &work_arrays {
            self.private_array(stmt, distributing, &loops, array)?;
            privates.push(array.key());
        }
        if !work_ids.is_empty() && !leaves.is_empty() {
            // The EXIT's search runs before the iterations that compute them.
            return Err("a CYCLE or EXIT leaves a loop that writes private arrays".to_string());
        }
        if !work_ids.is_empty() && reductions.iter().any(|it| it.is_prefix()) {
            return Err("it is a scan that writes private arrays (its first pass would not compute them)".to_string());
        }
        if self.analysis.loops.iter().any(|it| stmt.range.contains_range(it.range) && it.kind != LoopKind::Do) {
            return Err("it holds an array assignment or FORALL".to_string());
        }
        let outermost = std::ptr::eq(distributing, stmt);
        if !leaves.is_empty() && !last_values.is_empty() {
            return Err(format!(
                "a CYCLE or EXIT may skip the assignment of {}, which is read after the loop",
                last_values.join(", ")
            ));
        }
        let exit_when = match leaves.iter().filter(|it| it.1 == LoopBranch::Exit).collect::<Vec<_>>()[..] {
            [] => None,
            [(exit, _)] => Some(self.exit_condition(exit, distributing, &loops, &scalars, &home_distributed)?),
            _ => return Err("it holds more than one EXIT".to_string()),
        };
        if home_coef != 1 {
            // The EXIT's search and the last values follow the owners of
            // `v+q`, and so does a floating-point chain, which runs the other
            // way for a negative `a`; other reductions combine in any order.
            let what = if home_coef < 0 && reductions.iter().any(|it| it.chained()) {
                Some("it reduces a floating-point scalar in order")
            } else if exit_when.is_some() {
                Some("it exits")
            } else if !last_values.is_empty() {
                Some("a scalar it assigns is read after it")
            } else {
                None
            };
            if let Some(what) = what {
                return Err(format!("the home's distributed subscript is `{home_coef}*v+q`, and {what}"));
            }
        }
        self.check_loop_reductions(&reductions, &home_distributed, outermost)?;
        let report = reports.iter().find(|it| it.range == distributing.range).ok_or("the loop was not analysed")?;
        let own = report.nest.last().ok_or("the loop was not analysed")?;
        let step = own.step.ok_or("its step is not a constant")?;
        let exits = !leaves.is_empty();
        self.check_scans(stmt, &reductions, (&home_distributed, home_coef), (outermost, exits))?;
        if !outermost && (own.lo.is_none() || own.hi.is_none()) {
            return Err("an inner distributing loop needs constant bounds".to_string());
        }
        let model = &self.analysis.model;
        let mut reads: BTreeMap<SymbolId, (i64, i64)> = BTreeMap::new();
        let mut write_backs: Vec<(SymbolId, i64)> = Vec::new();
        // What the reads off the home's cells reach along the other dimensions.
        let home_shift = home_distributed.offset + home_offset;
        let mut parts: BTreeMap<SymbolId, Vec<PartFetch>> = BTreeMap::new();
        let mut remote: Vec<remap::RemoteRead> = Vec::new();
        // What the nest writes: neither fetched before it nor copied whole.
        let written: Vec<SymbolId> = reports
            .iter()
            .flat_map(|it| &it.accesses)
            .filter(|it| it.attr == AccessAttr::Update)
            .map(|it| it.array)
            .collect();
        // A distributed array the nest only reads (not its home) whose reads
        // the inspector/executor cannot fetch is copied whole before it.
        let replicable = |access: &analysis::loops::Access| {
            access.attr == AccessAttr::Reference
                && access.array != home.array
                && !written.contains(&access.array)
                && !home_distributed.cyclic
                && self.distributed.get(&access.array).is_some_and(|it| it.second.is_none())
        };
        // INDEPENDENT on the distributing loop: no iteration reads what
        // another writes, whatever the subscripts look like.
        let independent = self.independent(distributing).is_some();
        // Where the nest writes each array along the distributing index
        // (`X(v+c)`: c), for the dependences of the reads below.
        let write_offsets: Vec<(SymbolId, i64)> = reports
            .iter()
            .flat_map(|report| report.accesses.iter().map(move |access| (report, access)))
            .filter(|(_, access)| access.attr == AccessAttr::Update)
            .filter_map(|(report, access)| match access.subscripts.get(dim) {
                Some(SubscriptForm::Affine { index, coef: 1, offset }) if report.nest[*index].key == var_key => {
                    Some((access.array, *offset))
                }
                _ => None,
            })
            .collect();
        // The distributing loop visits the same indices in every iteration of
        // the nest: its lower bound names no index of the nest.
        let lattice_fixed = outermost || {
            let keys = do_variables(&loops);
            matches!(&distributing.kind, StmtKind::Do { control: Some(control), .. } if !mentions(&control.lo, &keys))
        };
        let mut replicated: Vec<SymbolId> = Vec::new();
        let mut broadcasts: Vec<broadcast::BroadcastRead> = Vec::new();
        // Private arrays too: a broadcast's subscripts are read before the nest.
        let assigned: Vec<String> = scalars.iter().chain(&work_arrays).map(|it| it.key()).collect();
        for report in &reports {
            for access in &report.accesses {
                // Each process computes the private arrays for its own iterations.
                if work_ids.contains(&access.array) {
                    continue;
                }
                let symbol = model.symbol(access.array);
                if let Some(read) = self.broadcast_read(access, (report, &loops), &assigned, &written, independent) {
                    broadcasts.push(read);
                    continue;
                }
                let home_form = (home_coef, home_offset);
                if access.attr == AccessAttr::Reference
                    && (self.on_home_cell(access, &var_key, &report.nest, &home_distributed, home_form)
                        || (home_coef == 1
                            && !written.contains(&access.array)
                            && self.on_home_cell_across(
                                access,
                                &var_key,
                                &report.nest,
                                &home_distributed,
                                home_offset,
                            )))
                {
                    continue;
                }
                if home_coef != 1 {
                    // No neighbours along `a*v+q`: what is not on the home's
                    // cells is fetched by the inspector/executor.
                    self.strided_home_access(
                        access,
                        &report.nest,
                        (&var_key, &home_distributed, home_form),
                        (&loops, &written, &ifs, &privates),
                        (&mut remote, &mut replicated),
                        &replicable,
                    )?;
                    continue;
                }
                let near = matches!(
                    access.subscripts.get(dim),
                    Some(SubscriptForm::Affine { index, coef: 1, .. }) if report.nest[*index].key == var_key
                );
                let cut_like_home =
                    self.distributed.get(&access.array).is_some_and(|it| it.same_blocks(&home_distributed));
                // On a CYCLIC home, a read off the home's template cell lives on
                // another process (no neighbour there): it is fetched too.
                let off_cyclic_cell = home_distributed.cyclic
                    && match access.subscripts.get(dim) {
                        Some(SubscriptForm::Affine { offset, .. }) => {
                            offset + self.distributed.get(&access.array).map_or(0, |it| it.offset) != home_shift
                        }
                        _ => true,
                    };
                if !(near && cut_like_home) || off_cyclic_cell {
                    // A read of an array the loop writes takes the values before
                    // the loop: right only when every element it reads is written
                    // by a later iteration, if at all (`X(v+c)` written at
                    // `X(v+w)` only, `(c - w) * step > 0`).
                    let read_ahead = off_cyclic_cell
                        && !independent
                        && written.contains(&access.array)
                        && match access.subscripts.get(dim) {
                            Some(SubscriptForm::Affine { index, coef: 1, offset })
                                if report.nest[*index].key == var_key =>
                            {
                                let writes = written.iter().filter(|it| **it == access.array).count();
                                let at: Vec<i64> =
                                    write_offsets.iter().filter(|it| it.0 == access.array).map(|it| it.1).collect();
                                at.len() == writes && at.iter().all(|w| (offset - w) * step > 0)
                            }
                            _ => false,
                        };
                    // Or it reads elements the loop never writes (`RB(N+1-I)` for
                    // I up to N/2 while writing `RB(I)`).
                    let read_ahead = read_ahead || elements_unwritten(access, report, &reports);
                    // The inspector evaluates every subscript in every iteration,
                    // before the loop: not under an IF, not of a private scalar.
                    let remote_read = self
                        .remote_read(access, &home_distributed, &loops, &written, read_ahead)
                        .filter(|_| ifs.is_empty())
                        .filter(|it| !privates.iter().any(|key| mentions_word(self.slice(it.subscript()), key)));
                    if let Some(read) = remote_read {
                        remote.push(read);
                        continue;
                    }
                }
                match self.cut_like_home(access, &home_distributed) {
                    Ok(true) => {}
                    Ok(false) => continue,
                    Err(_) if replicable(access) => {
                        replicated.push(access.array);
                        continue;
                    }
                    Err(why) => return Err(why),
                }
                let offset = match access.subscripts.get(dim) {
                    Some(SubscriptForm::Affine { index, coef: 1, offset }) if report.nest[*index].key == var_key => {
                        *offset
                    }
                    _ if replicable(access) => {
                        replicated.push(access.array);
                        continue;
                    }
                    _ => {
                        return Err(format!(
                            "the distributed subscript of {} is not `{}+c`",
                            symbol.name.text,
                            own.var.as_ref().map_or("", |it| it.text.as_str())
                        ))
                    }
                };
                match access.attr {
                    AccessAttr::Update => {
                        // Another array cut in the same blocks, written on the
                        // home element's template cell, is written by the same
                        // process: the owner updates both.
                        let array = &self.distributed[&access.array];
                        let same_cell = array.stride == home_distributed.stride
                            && array.stride * offset + array.offset
                                == home_distributed.stride * home_offset + home_distributed.offset;
                        if !same_cell {
                            // Under INDEPENDENT no other iteration touches the
                            // element: the process that runs this one writes it
                            // in its shadow (fetched first, like a read) and
                            // sends it home after the loop (the seed's update).
                            let home_rank_one = home_distributed.is_rank_one_block() && home_distributed.plain;
                            let goes_home = independent
                                && outermost
                                && home_coef == 1
                                && home_rank_one
                                && array.is_rank_one_block()
                                && array.plain
                                && array.same_blocks(&home_distributed);
                            if !goes_home {
                                return Err(format!(
                                    "it updates {} at other template cells than its home's",
                                    symbol.name.text
                                ));
                            }
                            if !write_backs.contains(&(access.array, offset)) {
                                write_backs.push((access.array, offset));
                            }
                            let entry = reads.entry(access.array).or_insert((offset, offset));
                            entry.0 = entry.0.min(offset);
                            entry.1 = entry.1.max(offset);
                        }
                    }
                    AccessAttr::Reference => {
                        // Reading what an earlier iteration on another process wrote
                        // is a dependence carried across processors.
                        let carried = !independent
                            && write_offsets.iter().filter(|it| it.0 == access.array).any(|&(_, written_at)| {
                                // On the loop's lattice `lo + step*t`, writes at other
                                // residues than the read's never reach what it reads.
                                if lattice_fixed && (offset - written_at).rem_euclid(step.abs()) != 0 {
                                    false
                                } else if outermost {
                                    (offset - written_at) * step < 0
                                } else {
                                    offset != written_at
                                }
                            });
                        {
                            if carried {
                                return Err(format!(
                                    "{} is read at an element another process writes earlier (a loop-carried dependence)",
                                    symbol.name.text
                                ));
                            }
                        }
                        let entry = reads.entry(access.array).or_insert((offset, offset));
                        entry.0 = entry.0.min(offset);
                        entry.1 = entry.1.max(offset);
                        if offset + self.distributed[&access.array].offset != home_shift {
                            let reach: Vec<Option<(i64, i64)>> = access
                                .subscripts
                                .iter()
                                .enumerate()
                                .map(|(k, form)| if k == dim { None } else { reach(form, &report.nest, &var_key) })
                                .collect();
                            let read = PartFetch { offsets: (offset, offset), part: reach };
                            add_part_fetch(parts.entry(access.array).or_default(), read, dim);
                        }
                    }
                }
            }
        }
        // A replicated array is read from its whole copy, also where a
        // reference of it could have been fetched.
        replicated.sort();
        replicated.dedup();
        remote.retain(|it| !replicated.contains(&it.array()));
        if remote.iter().any(|it| remote.iter().any(|other| it.nests(other))) {
            return Err("a read that is not a neighbour's holds another".to_string());
        }
        // Inside an outer loop of the nest, what is fetched from the
        // neighbours before the nest goes stale once the nest writes it
        // (red-black sweeps `DO IC = 0, 1` around the distributing loop).
        if !outermost {
            let fetched_and_written = written.iter().find(|array| {
                reads.get(array).is_some_and(|it| *it != (0, 0))
                    || parts.contains_key(array)
                    || remote.iter().any(|it| it.array() == **array)
            });
            if let Some(array) = fetched_and_written {
                return Err(format!(
                    "an outer loop of the nest runs it again after it wrote elements of {} that the neighbours read",
                    self.distributed[array].name
                ));
            }
        }
        for array in &replicated {
            reads.remove(array);
            parts.remove(array);
            let name = &self.distributed[array].name;
            self.notes.push(Note {
                range: distributing.header,
                message: format!(
                    "{name} is read at elements of other processes that are not neighbours: every process gets a whole copy of it before the loop"
                ),
            });
        }
        let cyclic_edits = if home_distributed.cyclic {
            let mut exprs: Vec<&syntax::Expr> = Vec::new();
            for it in &assignments {
                if let StmtKind::Assign { lhs, rhs } = &it.kind {
                    exprs.extend([lhs, rhs]);
                }
            }
            for it in &ifs {
                match &it.kind {
                    StmtKind::If { branches } => exprs.extend(branches.iter().filter_map(|branch| branch.0.as_ref())),
                    // The condition of a logical IF that cycles.
                    StmtKind::Other { exprs: others, .. } => exprs.extend(others),
                    _ => {}
                }
            }
            Some(self.cyclic_edits(stmt, outermost, home.array, home_offset, &reads, &exprs)?)
        } else {
            self.grow_shadows(home.array, home_offset, &reads);
            None
        };
        Ok(Plan::Parallel(ParallelNest {
            stmt,
            private_arrays: work_ids,
            distributing,
            step,
            home: home.array,
            home_coef,
            home_offset,
            reads,
            cyclic_edits,
            parts,
            replicated,
            remote,
            broadcasts,
            last_values,
            privates,
            reductions,
            write_backs,
            exit_when,
            read_home: read_home.is_some(),
        }))
    }

    /// The condition of `exit`, an `IF (cond) EXIT` of the outermost,
    /// distributing loop `distributing` of a 1-D home, when the first
    /// iteration where it holds can be found before the loop runs: it reads
    /// nothing the loop writes (first in the body, it may read the element
    /// its iteration writes) and calls no function, so every iteration
    /// before that one runs whole and that one up to the EXIT.
    fn exit_condition(
        &self,
        exit: &Stmt,
        distributing: &Stmt,
        loops: &[&Stmt],
        scalars: &[&syntax::Name],
        home: &Distributed,
    ) -> Result<TextRange, String> {
        let StmtKind::Do { body, .. } = &distributing.kind else {
            return Err("its EXIT is not in the distributing loop".to_string());
        };
        // `IF (cond) EXIT`, as a logical IF or an IF construct of one branch.
        let first = body.first().is_some_and(|it| {
            std::ptr::eq(it, exit) || it.children().first().is_some_and(|child| std::ptr::eq(*child, exit))
        });
        let cond = body.iter().find_map(|stmt| match &stmt.kind {
            StmtKind::Other { exprs, .. } if std::ptr::eq(stmt, exit) => exprs.first().filter(|_| exprs.len() == 1),
            StmtKind::If { branches } => match branches.as_slice() {
                [(Some(cond), then)] if then.len() == 1 && std::ptr::eq(&then[0], exit) => Some(cond),
                _ => None,
            },
            _ => None,
        });
        let Some(cond) = cond.filter(|_| loops.len() == 1) else {
            return Err("its EXIT is not `IF (condition) EXIT` in the body of a single loop".to_string());
        };
        if home.second.is_some() {
            return Err("it leaves a loop over a 2-D distribution (EXIT)".to_string());
        }
        let (written_arrays, written_others) = self.written(distributing);
        let StmtKind::Do { control: Some(control), .. } = &distributing.kind else {
            return Err("its EXIT is not in a counted DO loop".to_string());
        };
        // Its own index aside, which the condition may read.
        let written_keys: Vec<String> = written_others
            .iter()
            .map(|it| it.0.to_ascii_lowercase())
            .chain(scalars.iter().map(|it| it.key()))
            .filter(|it| *it != control.var.key())
            .collect();
        if mentions(cond, &written_keys) {
            return Err("the condition of its EXIT reads a scalar the loop assigns".to_string());
        }
        // First in the body, it may read a 1-D array the loop writes at the
        // one element each iteration writes of it: its own, not yet written.
        let report = self.analysis.loops.iter().find(|it| it.range == distributing.range && it.kind == LoopKind::Do);
        let var_key = control.var.key();
        let offset_of = |access: &analysis::loops::Access| match (report, access.subscripts.as_slice()) {
            (Some(report), [SubscriptForm::Affine { index, coef: 1, offset }])
                if report.nest[*index].key == var_key =>
            {
                Some(*offset)
            }
            _ => None,
        };
        let own_element = |id: SymbolId, range: TextRange| {
            let Some(report) = report.filter(|_| first) else { return false };
            let read = report.accesses.iter().find(|it| it.array == id && it.range == range).and_then(offset_of);
            let mut writes = report.accesses.iter().filter(|it| it.array == id && it.attr == AccessAttr::Update);
            read.is_some() && writes.all(|it| offset_of(it) == read)
        };
        let mut why: Option<String> = None;
        cond.walk(|expr| {
            let ExprKind::Ref { name, .. } = &expr.kind else { return };
            match self.lookup(&name.key()) {
                Some(id) if written_arrays.contains(&id) && own_element(id, expr.range) => {}
                Some(id) if written_arrays.contains(&id) => {
                    why.get_or_insert(format!("the condition of its EXIT reads {}, which the loop writes", name.text));
                }
                Some(id) if self.analysis.model.symbol(id).is_array() => {}
                _ if assign::ELEMENTAL.contains(&name.key().as_str()) => {}
                _ => {
                    why.get_or_insert(format!("the condition of its EXIT calls {}", name.text));
                }
            }
        });
        match why {
            Some(why) => Err(why),
            None => Ok(cond.range),
        }
    }

    /// For a nest that updates no array: the first distributed array it
    /// reads at `X(.., v+c, ..)` along its distributed dimension, taken as
    /// its home (each process runs the iterations whose element it owns).
    fn read_home(&self, report: &LoopReport) -> Option<analysis::loops::Home> {
        report.accesses.iter().find_map(|access| {
            let distributed = self.distributed.get(&access.array).filter(|it| it.second.is_none())?;
            let along = matches!(access.subscripts.get(distributed.dim), Some(SubscriptForm::Affine { coef: 1, .. }));
            (access.attr == AccessAttr::Reference && along).then(|| analysis::loops::Home {
                array: access.array,
                range: access.range,
                subscripts: access.subscripts.clone(),
                triple: Vec::new(),
            })
        })
    }

    /// An assignment to a CYCLIC array that needs no other process's data:
    /// a whole array set to a constant (every process sets its part), or one
    /// element set from replicated data (its owner sets it).
    fn cyclic_assignment<'s>(&self, stmt: &'s Stmt) -> Option<Plan<'s>> {
        let StmtKind::Assign { lhs, rhs } = &stmt.kind else { return None };
        let occurrences = self.distributed_occurrences(stmt.range);
        let [(_, array)] = occurrences[..] else { return None };
        if !self.distributed_occurrences(rhs.range).is_empty() {
            return None;
        }
        let distributed = &self.distributed[&array];
        match &lhs.kind {
            ExprKind::Name(_) => {
                let mut constant = rhs;
                while let ExprKind::Unary { operand, .. } | ExprKind::Paren(operand) = &constant.kind {
                    constant = operand;
                }
                matches!(constant.kind, ExprKind::Int(_) | ExprKind::Literal(_)).then_some(Plan::Verbatim(stmt))
            }
            ExprKind::Ref { args, .. } if args.len() == distributed.lbs.len() => {
                let Some(syntax::Subscript::Expr(index)) = args.get(distributed.dim) else { return None };
                let others_elements = args.iter().all(|it| matches!(it, syntax::Subscript::Expr(_)));
                others_elements.then(|| Plan::Owner {
                    stmt,
                    array,
                    index: index.range,
                    reads: BTreeMap::new(),
                    edits: vec![(
                        index.range,
                        format!("hpf_lx(hpf_d_{}, {})", distributed.name, self.one_line(index.range)),
                    )],
                    remote: Vec::new(),
                })
            }
            _ => None,
        }
    }

    /// For a nest whose home is CYCLIC: the rewrites of every distributed
    /// subscript `e` into the local position `hpf_lx(d, e)`, or why the nest
    /// cannot run course by course. Its reads (other than those the
    /// inspector/executor fetches, not in `reads`) must all be on the home's
    /// template cells: a shift on a CYCLIC distribution is no neighbour
    /// exchange, so those loops run on rank 0.
    fn cyclic_edits(
        &self,
        stmt: &Stmt,
        outermost: bool,
        home: SymbolId,
        home_offset: i64,
        reads: &BTreeMap<SymbolId, (i64, i64)>,
        exprs: &[&syntax::Expr],
    ) -> Result<Vec<(TextRange, String)>, String> {
        if !outermost {
            return Err("its loop over a CYCLIC dimension is not the outermost loop of the nest".to_string());
        }
        if let Some((array, _)) =
            reads.iter().find(|(array, range)| !self.is_local(home, home_offset, **array, **range))
        {
            return Err(format!(
                "it reads {} at other elements than its home's (on a CYCLIC distribution they live on other processes)",
                self.distributed[array].name
            ));
        }
        self.cyclic_subscript_edits(stmt.range, exprs)
    }

    /// The rewrites of the distributed subscript `e` of every reference to a
    /// distributed array inside `range` (all CYCLIC, on one axis) (found among `exprs`) into the local
    /// position `hpf_lx(d, e)`, or why a reference is not one element along
    /// its distributed dimension.
    fn cyclic_subscript_edits(
        &self,
        range: TextRange,
        exprs: &[&syntax::Expr],
    ) -> Result<Vec<(TextRange, String)>, String> {
        let mut edits = Vec::new();
        for (range, id) in self.distributed_occurrences(range) {
            let distributed = &self.distributed[&id];
            let args = exprs.iter().find_map(|it| assign::find_reference(it, range));
            match args.filter(|it| it.len() == distributed.lbs.len()).and_then(|it| it.get(distributed.dim)) {
                Some(syntax::Subscript::Expr(value)) => edits
                    .push((value.range, format!("hpf_lx(hpf_d_{}, {})", distributed.name, self.one_line(value.range)))),
                _ => return Err(format!("it names {} other than as one element", distributed.name)),
            }
        }
        Ok(edits)
    }

    /// Widens the shadow areas for reads `X(i + c)` by the owner of the home
    /// element `H(i + home_offset)`: by the template distance between them.
    fn grow_shadows(&mut self, home: SymbolId, home_offset: i64, reads: &BTreeMap<SymbolId, (i64, i64)>) {
        let home_shift = self.distributed[&home].offset + home_offset;
        for (array, (low, high)) in reads {
            let distributed = self.distributed.get_mut(array).expect("a distributed array");
            let below = home_shift - (low + distributed.offset);
            let above = (high + distributed.offset) - home_shift;
            distributed.shadow_low = distributed.shadow_low.max(below).max(0);
            distributed.shadow_high = distributed.shadow_high.max(above).max(0);
        }
    }

    /// Whether the reads `X(i + low ..= i + high)` by the owner of `H(i + home_offset)`
    /// are on its own template cell.
    fn is_local(&self, home: SymbolId, home_offset: i64, array: SymbolId, (low, high): (i64, i64)) -> bool {
        let home_shift = self.distributed[&home].offset + home_offset;
        let offset = self.distributed[&array].offset;
        low + offset == home_shift && high + offset == home_shift
    }

    fn needs_fetch(&self, home: SymbolId, home_offset: i64, reads: &BTreeMap<SymbolId, (i64, i64)>) -> bool {
        reads.iter().any(|(array, range)| !self.is_local(home, home_offset, *array, *range))
    }

    /// The neighbour fetches before local iterations `hpf_lo, hpf_hi, step`
    /// whose home element is `H(i + home_offset)`: one per array read off
    /// its owner's template cells (a read on the home's own cell needs none).
    fn emit_fetches(
        &self,
        out: &mut String,
        home: SymbolId,
        home_offset: i64,
        step: i64,
        reads: &BTreeMap<SymbolId, (i64, i64)>,
    ) {
        self.emit_fetches_of_parts(out, home, home_offset, step, reads, &BTreeMap::new());
    }

    /// As `emit_fetches`, fetching of an array in `parts` only the elements
    /// its reads reach along the other dimensions (`hpf_fetch_part_*`), one
    /// fetch per group of distances whose parts may share elements.
    fn emit_fetches_of_parts(
        &self,
        out: &mut String,
        home: SymbolId,
        home_offset: i64,
        step: i64,
        reads: &BTreeMap<SymbolId, (i64, i64)>,
        parts: &BTreeMap<SymbolId, Vec<PartFetch>>,
    ) {
        for (array, (low, high)) in reads {
            let distributed = &self.distributed[array];
            if self.is_local(home, home_offset, *array, (*low, *high)) {
                continue;
            }
            let whole = [PartFetch { offsets: (*low, *high), part: Vec::new() }];
            let fetches = parts.get(array).map_or(&whole[..], |it| &it[..]);
            for fetch in fetches {
                let (low, high) = fetch.offsets;
                self.emit_fetch(out, distributed, step, (low, high), &fetch.part);
            }
        }
    }

    /// One fetch of `distributed` at distances `low ..= high` from the
    /// local iterations, of `part` along the other dimensions.
    fn emit_fetch(
        &self,
        out: &mut String,
        distributed: &Distributed,
        step: i64,
        (low, high): (i64, i64),
        part: &[Option<(i64, i64)>],
    ) {
        let name = &distributed.name;
        let variant = distributed.variant();
        let cut = part.iter().enumerate().any(|(k, it)| k != distributed.dim && it.is_some());
        let (routine, part_args) = if cut {
            let bound = |pick: fn((i64, i64)) -> i64, which: &str| {
                part.iter()
                    .enumerate()
                    .map(|(k, it)| match it {
                        Some(range) if k != distributed.dim => pick(*range).to_string(),
                        _ => format!("{which}({name}, {})", k + 1),
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            ("fetch_part", format!(", [{}], [{}]", bound(|it| it.0, "lbound"), bound(|it| it.1, "ubound")))
        } else {
            ("fetch", String::new())
        };
        let _ = writeln!(out, "  if ((hpf_hi - hpf_lo) * ({step}) >= 0) then");
        let _ = writeln!(
            out,
            "    call hpf_{routine}_{variant}({name}, hpf_d_{name}, min(hpf_lo, hpf_hi) + ({low}), max(hpf_lo, hpf_hi) + ({high}){part_args})"
        );
        let _ =
            writeln!(out, "  else\n    call hpf_{routine}_{variant}({name}, hpf_d_{name}, 1, 0{part_args})\n  end if");
    }

    /// The first statement among `body` (at any depth) that may leave the
    /// sequence of statements (EXIT, CYCLE, GO TO, RETURN, STOP) and that
    /// not every process takes alike: one outside the statements of `plans`
    /// (the body's plans) that every process takes alike (`taken_everywhere`),
    /// or a GO TO or a named EXIT or CYCLE (a label or a construct name would
    /// not survive the lowering). An unnamed CYCLE or EXIT, a RETURN or a
    /// STOP under replicated conditions leaves on every process alike
    /// (`if (di == 0 .and. dj == 0) cycle`; a STOP finalises MPI first).
    fn unshared_branch<'s>(&self, body: &'s [Stmt], plans: &[Plan]) -> Option<&'s Stmt> {
        let everywhere = taken_everywhere(plans);
        let mut stack: Vec<&Stmt> = body.iter().collect();
        while let Some(stmt) = stack.pop() {
            // A logical IF holds its action as its child, checked next.
            let logical_if = matches!(stmt.kind, StmtKind::If { .. });
            let assigns = matches!(stmt.kind, StmtKind::Assign { .. });
            if !logical_if && !assigns && self.begins_with_keyword(stmt, BRANCH_KEYWORDS) {
                let survives = self.loop_branch(stmt).is_some()
                    || self.begins_with_keyword(stmt, &["stop", "errorstop", "return"]);
                let shared =
                    survives && everywhere.iter().any(|it| it.start <= stmt.range.start && stmt.range.end <= it.end);
                if !shared {
                    return Some(stmt);
                }
            }
            stack.extend(stmt.children());
        }
        None
    }

    /// Whether `stmt`, or the statement of a logical IF, begins with one of
    /// `keywords` (lower case, blanks removed: `errorstop`).
    pub(crate) fn begins_with_keyword(&self, stmt: &Stmt, keywords: &[&str]) -> bool {
        let header: String =
            self.slice(stmt.header).chars().filter(|it| !it.is_whitespace()).collect::<String>().to_ascii_lowercase();
        // A logical IF holds its statement in its header.
        let after_if = header.strip_prefix("if(").map(|_| header.rsplit(')').next().unwrap_or(""));
        let begins = |text: &str| keywords.iter().any(|it| text.starts_with(it));
        begins(&header) || after_if.is_some_and(begins)
    }

    /// A module of the file, copied into the generated program before the
    /// main program: its named constants, templates and processor
    /// arrangements are the program's, its procedures run as external ones
    /// do, its variables are checked with the distributed arrays
    /// (`module_arrays.rs`).
    fn check_module(&mut self, module: &syntax::Unit) {
        for procedure in &module.contains {
            self.check_external_procedure(procedure);
        }
    }

    /// An external subroutine or function of the file, copied into the
    /// generated program as it is: subroutines run on rank 0 (every CALL
    /// that does not run on every process, `procedures.rs`, does),
    /// functions wherever the statement that uses them runs, so a
    /// function must not print, read, stop or call; a subroutine must not
    /// stop (the other processes would wait for it).
    fn check_external_procedure(&mut self, unit: &syntax::Unit) {
        match unit.kind {
            UnitKind::Subroutine | UnitKind::Function => {}
            UnitKind::Module => {
                self.error(unit.header, "modules are not supported by the MPI backend yet");
                return;
            }
            UnitKind::Program => {
                self.error(unit.header, "a second main program");
                return;
            }
            // It initialises COMMON blocks (`common_blocks.rs`): copied as it is.
            UnitKind::BlockData => return,
        }
        if let Some(internal) = unit.contains.first() {
            self.error(
                internal.header,
                "internal procedures (after CONTAINS) are not supported by the MPI backend yet",
            );
            return;
        }
        let is_function = unit.kind == UnitKind::Function;
        let mut stack: Vec<&Stmt> = unit.body.iter().collect();
        while let Some(stmt) = stack.pop() {
            let stops = self.begins_with_keyword(stmt, &["stop", "errorstop"]);
            let io = matches!(stmt.kind, StmtKind::Output { .. }) || self.is_read(stmt);
            // Reading the clocks changes nothing another process would see:
            // a timer function may run on every process.
            let calls = match &stmt.kind {
                StmtKind::Call { name, .. } => {
                    !["system_clock", "cpu_time", "date_and_time"].iter().any(|it| name.text.eq_ignore_ascii_case(it))
                }
                _ => false,
            };
            if stops || (is_function && (io || calls)) {
                let what = if stops {
                    "STOP in a subroutine or function is not supported by the MPI backend yet (only rank 0 would stop)"
                } else {
                    "a function that prints, reads or calls a subroutine would do so on every process: not supported by the MPI backend yet (a subroutine may)"
                };
                self.error(stmt.header, what);
                return;
            }
            stack.extend(stmt.children());
        }
    }

    /// The symbol `key` names in the main program.
    fn lookup(&self, key: &str) -> Option<SymbolId> {
        self.analysis.model.lookup(self.main, key)
    }

    fn is_distributed_name(&self, name: &syntax::Name) -> bool {
        self.lookup(&name.key()).is_some_and(|id| self.distributed.contains_key(&id))
    }

    /// The specification part of `unit` as free-form text, without the
    /// distributed arrays' entities (and without the END line, where the
    /// unit has no statements).
    fn specification(&self, unit: &syntax::Unit) -> String {
        let unit_text = self.slice(unit.range).trim_end();
        let mut end_line = unit.range.start + unit_text.rfind('\n').map_or(0, |it| it + 1);
        // Nor the CONTAINS line, where the unit has no statements before it.
        if let Some(first) = unit.contains.first().filter(|it| it.range.start >= unit.range.start) {
            let before = self.slice(TextRange::new(unit.range.start, first.range.start)).to_ascii_lowercase();
            if let Some(at) = before.rfind("contains") {
                let line_start = before[..at].rfind('\n').map_or(0, |it| it + 1);
                end_line = end_line.min(unit.range.start + line_start);
            }
        }
        let spec = TextRange::new(unit.header.end, unit.execution_start.min(end_line).max(unit.header.end));
        // Declarations that name distributed arrays are rewritten without
        // them; so are those that type NUMBER_OF_PROCESSORS, which the
        // unit now takes from hpf_runtime (a use-associated name cannot be typed).
        let mut rewrites: Vec<(TextRange, String)> = Vec::new();
        for decl in &unit.decls {
            let is_distributed = |entity: &syntax::DeclEntity| {
                entity.name.is("number_of_processors")
                    || self.lookup(&entity.name.key()).is_some_and(|id| self.distributed.contains_key(&id))
            };
            if !decl.entities.iter().any(is_distributed) {
                continue;
            }
            let kept: Vec<String> =
                decl.entities.iter().filter(|it| !is_distributed(it)).map(|it| self.copy(it.range)).collect();
            let text = if kept.is_empty() {
                String::new()
            } else {
                let prefix = self.copy(TextRange::new(decl.range.start, decl.entities[0].range.start));
                format!("{prefix}{}", kept.join(", "))
            };
            rewrites.push((decl.range, text));
        }
        rewrites.sort_by_key(|it| it.0.start);
        let mut at = spec.start;
        let mut spec_text = String::new();
        for (range, text) in rewrites {
            // (A declaration past the specification part: only in text
            // the parser could not read, which the compiler will refuse.)
            if range.start < at || range.end > spec.end {
                continue;
            }
            spec_text.push_str(&self.copy(TextRange::new(at, range.start)));
            spec_text.push_str(&text);
            at = range.end;
        }
        spec_text.push_str(&self.copy(TextRange::new(at, spec.end)));
        let mut res = spec_text.trim_end_matches([' ', '\t']).to_string();
        if !res.is_empty() && !res.ends_with('\n') {
            res.push('\n');
        }
        res
    }

    /// The declarations of the distributed arrays' local parts, their
    /// descriptors and gathered copies, and the generated code's variables.
    fn local_declarations(&self, out: &mut String) {
        let _ = writeln!(out, "  ! hpf-ls: local parts of the distributed arrays (global indices, with shadow areas)");
        // Those of module arrays are in their modules (`module_arrays.rs`).
        for distributed in self.distributed.iter().filter(|it| it.0.unit == self.main).map(|it| it.1) {
            let type_name = distributed.suffix.declaration();
            let _ = writeln!(
                out,
                "  {type_name}, allocatable :: {name}({colons}), hpf_g_{name}({colons})",
                name = distributed.name,
                colons = distributed.colons()
            );
            let descriptors = if distributed.second.is_some() { "(2)" } else { "" };
            let _ = writeln!(out, "  type(hpf_desc) :: hpf_d_{}{descriptors}", distributed.name);
        }
        self.runtime_bound_declarations(out);
        let _ = writeln!(out, "  integer :: hpf_lo, hpf_hi, hpf_i, hpf_c, hpf_jump, hpf_exit_at");
        if self.distributed.values().any(|it| it.second.is_some()) {
            let _ = writeln!(
                out,
                "  integer :: hpf_lo2, hpf_hi2, hpf_nl(2, {boxes}), hpf_nh(2, {boxes}), hpf_na(2, {boxes}), hpf_ns(2, {boxes})\n  integer :: hpf_bl(2), hpf_bh(2)",
                boxes = grid::MAX_FETCH_BOXES
            );
        }
        if self.distributed.values().any(|it| it.second.as_ref().is_some_and(|second| second.cyclic)) {
            let _ = writeln!(out, "  integer :: hpf_c2");
        }
        for (type_name, name) in &self.temps {
            let _ = writeln!(out, "  {type_name} :: {name}");
        }
    }

    /// The generated program: `layouts` holds the distributed arrays of
    /// each mapping epoch, `stmt_epochs` the epoch of each plan's statement.
    fn emit(
        &mut self,
        unit: &syntax::Unit,
        plans: &[Plan],
        layouts: &[BTreeMap<SymbolId, Distributed>],
        stmt_epochs: &[usize],
        epochs: &analysis::loops::MappingEpochs,
    ) -> String {
        self.distributed = layouts[0].clone();
        self.keep_used_procedures(plans);
        let mut out = String::new();
        let _ = writeln!(
            out,
            "! Generated by hpf-ls {} from an HPF program: SPMD Fortran with MPI.",
            env!("CARGO_PKG_VERSION")
        );
        // The file's modules before the program that uses them, then the
        // subroutines specialised for SPMD calls (`procedures.rs`).
        self.mark(&out, Origin::Backend);
        for module in &self.external {
            let _ = writeln!(out, "{}\n", module.source.trim_end());
        }
        for module in self.analysis.file.units.iter().filter(|it| it.kind == UnitKind::Module) {
            self.mark(&out, Origin::Text(module.range));
            let _ = writeln!(out, "{}\n", self.module_text(module).trim_end());
        }
        self.mark(&out, Origin::Anywhere);
        self.emit_procedures_module(&mut out);
        self.mark(&out, Origin::Text(unit.range));
        let _ = writeln!(out, "{}", self.slice(unit.header).trim_end());
        let _ = writeln!(out, "  use hpf_runtime");
        out.push_str(&self.module_array_uses());
        out.push_str(&self.procedure_uses());
        out.push_str(&self.specification(unit));
        self.local_declarations(&mut out);
        self.mark(&out, Origin::Backend);
        let _ = writeln!(out, "  call hpf_init()");
        // (ALLOCATABLE ones at their ALLOCATE statement.)
        for distributed in self.distributed.values().filter(|it| it.allocated_by.is_none()) {
            emit_alloc(&mut out, distributed);
        }
        self.emit_initial_values(&mut out, self.main, &unit.decls);
        let own_units = analysis::model::flatten_units(&self.analysis.file);
        for (id, (module, _)) in own_units.iter().enumerate().filter(|(_, it)| it.0.kind == UnitKind::Module) {
            self.emit_initial_values(&mut out, id, &module.decls);
        }
        let mut epoch = 0;
        for ((plan, &next), stmt) in plans.iter().zip(stmt_epochs).zip(&unit.body) {
            self.mark(&out, Origin::Text(stmt.range));
            if next != epoch {
                self.emit_remaps(&mut out, (&layouts[epoch], &layouts[next]), epochs, (epoch, next));
                self.distributed = layouts[next].clone();
                epoch = next;
            }
            self.emit_plan(&mut out, plan);
        }
        let stat_loops = self.stat_loops.borrow();
        if !stat_loops.is_empty() {
            let lines: Vec<String> = stat_loops.iter().map(|it| it.0.to_string()).collect();
            let predicted: Vec<String> = stat_loops
                .iter()
                .map(|it| it.1.map_or("-1_8, -1_8".to_string(), |(m, e)| format!("{m}_8, {e}_8")))
                .collect();
            // One item per line: a program of many loops stays within the
            // 132 columns of free form.
            let _ = writeln!(
                out,
                "  call hpf_stat_report([ &\n    {}], &\n    reshape([integer(8) :: &\n    {}], [2, {}]))",
                lines.join(", &\n    "),
                predicted.join(", &\n    "),
                stat_loops.len()
            );
        }
        drop(stat_loops);
        self.mark(&out, Origin::Backend);
        let _ = writeln!(out, "  call hpf_finalize()");
        // Internal procedures, on the gathered copies of the distributed arrays they use.
        if !unit.contains.is_empty() {
            let _ = writeln!(out, "contains");
            for internal in &unit.contains {
                self.mark(&out, Origin::Text(internal.range));
                let _ = writeln!(out, "\n{}", self.with_gathered_copies(internal.range).trim_end());
            }
            // And the copies of those that run on every process (`procedures.rs`).
            self.mark(&out, Origin::Anywhere);
            for copy in self.internal_copies() {
                let _ = writeln!(out, "\n{}", copy.trim_end());
            }
        }
        // The END statement: the unit's last line.
        let unit_text = self.slice(unit.range).trim_end();
        let end_line = unit_text.lines().last().unwrap_or("end");
        self.mark(&out, Origin::Text(TextRange::new(unit.range.end.saturating_sub(end_line.len()), unit.range.end)));
        let _ = writeln!(out, "{}", end_line.trim());
        // External subroutines and functions, as they are.
        for other in self
            .analysis
            .file
            .units
            .iter()
            .map(|it| &**it)
            .filter(|it| !std::ptr::eq(*it, unit) && it.kind != UnitKind::Module)
        {
            self.mark(&out, Origin::Text(other.range));
            let _ = writeln!(out, "\n{}", self.with_gathered_copies(other.range).trim_end());
        }
        // What broadcasts a COMMON block after a call on rank 0 (`common_blocks.rs`).
        for sync in self.common.syncs.values() {
            let _ = write!(out, "\n{sync}");
        }
        out
    }

    /// The output from here on (`out` so far) comes from `from` (`line_map.rs`).
    fn mark(&mut self, out: &str, from: Origin) {
        self.regions.push(line_map::Region { start: out.len(), from });
    }

    /// The initial values the declarations `decls` give distributed arrays
    /// (`integer :: a(n) = 0`, `= [(i, i = 1, n)]`): every process
    /// evaluates the initializer into a whole copy and takes its part.
    fn emit_initial_values(&self, out: &mut String, unit: analysis::model::UnitId, decls: &[syntax::Decl]) {
        for entity in decls.iter().flat_map(|it| &it.entities) {
            let Some(init) = &entity.init else { continue };
            let id = self.analysis.model.lookup(unit, &entity.name.key());
            let Some(distributed) = id.and_then(|id| self.distributed.get(&id)) else {
                continue;
            };
            let bounds: Vec<String> =
                distributed.lbs.iter().zip(&distributed.ubs).map(|(lo, hi)| format!("{lo}:{hi}")).collect();
            let _ = writeln!(
                out,
                "  ! hpf-ls: the initial value of {name}\n  allocate (hpf_g_{name}({}))\n  hpf_g_{name} = {}\n  call hpf_scatter_{}(hpf_g_{name}, hpf_d_{name}, {name})\n  if (allocated(hpf_g_{name})) deallocate (hpf_g_{name})",
                bounds.join(", "),
                self.copy(init.range).trim(),
                distributed.variant(),
                name = distributed.name
            );
        }
    }

    /// What the analysis predicts moves for the loop `stmt` (per execution):
    /// the transfers of every loop report inside it (the accesses of a
    /// nest belong to its innermost loop), `None` if one is not counted.
    /// The references of one array are fetched together, so an element
    /// two of them need moves once: theirs is the union of their transfers.
    fn predicted_transfers(&self, stmt: &Stmt, private_arrays: &[SymbolId]) -> Option<(u64, u64)> {
        // A copy of a subroutine (`procedures.rs`) runs on its actuals'
        // mappings, which the analysis of the subroutine does not know.
        if self.place.is_some() {
            return None;
        }
        let (mut messages, mut elements) = (0, 0);
        for report in self.analysis.loops.iter().filter(|it| stmt.range.contains_range(it.range)) {
            if report.accesses.iter().any(|it| self.relaid.contains(&it.array)) {
                return None;
            }
            // Bounds known only at run time: the analysis cannot count (`allocatable.rs`).
            if report
                .accesses
                .iter()
                .any(|it| self.distributed.get(&it.array).is_some_and(|it| it.allocated_by.is_some()))
            {
                return None;
            }
            let mut together: BTreeMap<(SymbolId, bool), Vec<&analysis::loops::Access>> = BTreeMap::new();
            for access in
                report.accesses.iter().filter(|it| it.transfer.is_some() && !private_arrays.contains(&it.array))
            {
                together.entry((access.array, access.attr == AccessAttr::Update)).or_default().push(access);
            }
            for accesses in together.values() {
                let count = match accesses[..] {
                    [access] => access.transfer.as_ref()?.count.clone()?,
                    _ => analysis::fetch::union_transfer(&self.analysis.model_of_loop(report), report, accesses)?,
                };
                messages += count.messages.len() as u64;
                elements += count.moved_elements;
            }
        }
        Some((messages, elements))
    }

    fn emit_plan(&self, out: &mut String, plan: &Plan) {
        // Loops, and array assignments that fetch through the
        // inspector/executor, get per-loop `--stats` counters around their
        // fetches and updates.
        let counted = match plan {
            Plan::Parallel(ParallelNest { stmt, .. })
            | Plan::Forall { stmt, .. }
            | Plan::Grid(grid::GridPlan::Nest { stmt, .. } | grid::GridPlan::Forall { stmt, .. }) => Some(*stmt),
            Plan::Section(section) if section.fetches_remote() => Some(section.stmt),
            Plan::Owner { stmt, remote, .. } if !remote.is_empty() => Some(*stmt),
            Plan::Grid(grid::GridPlan::Cyclic(
                grid::cyclic::CyclicPlan::Nest { stmt, .. } | grid::cyclic::CyclicPlan::Forall { stmt, .. },
            )) => Some(*stmt),
            Plan::Permute(permute) => Some(permute.stmt),
            Plan::Matmul(matmul) => Some(matmul.stmt),
            Plan::Scatter(scatter) => Some(scatter.stmt),
            Plan::Recurrence(recurrence) => Some(recurrence.stmt),
            Plan::Pipeline(pipeline) => Some(pipeline.stmt),
            Plan::FetchedNest(nest) => Some(nest.stmt),
            _ => None,
        };
        if let Some(stmt) = counted {
            let line = self.user_line(stmt.range.start);
            let mut stat_loops = self.stat_loops.borrow_mut();
            // The analysis reports loops and array assignments, not element
            // assignments, and models neither the chain of a floating-point
            // reduction nor the whole copies of arrays read off the neighbours,
            // nor the fetches of a loop that only reads (it sees no home).
            let unmodelled = match plan {
                // The analysis cannot know where computed indices lead.
                Plan::Owner { .. }
                | Plan::Scatter(_)
                | Plan::Recurrence(_)
                | Plan::Pipeline(_)
                | Plan::FetchedNest(_)
                | Plan::Matmul(_) => true,
                // The analysis follows TRANSPOSE, not the shifts.
                Plan::Permute(permute) => !permute.is_transpose(),
                // The analysis counts a WHERE construct's fetches per
                // assignment; they are fetched once for the construct.
                Plan::Section(section) => {
                    matches!(&section.stmt.kind, StmtKind::Where { body, elsewhere, .. } if body.len() > 1 || !elsewhere.is_empty())
                }
                // Nor a loop whose analysed home is a private work array.
                Plan::Parallel(nest) => {
                    nest.reductions.iter().any(|it| it.chained() || it.is_prefix())
                        || !nest.replicated.is_empty()
                        || nest.read_home
                        || self.analysis.loops.iter().any(|it| {
                            stmt.range.contains_range(it.range)
                                && it.home.as_ref().is_some_and(|home| nest.private_arrays.contains(&home.array))
                        })
                }
                _ => false,
            };
            // Private work arrays do not move.
            let private_arrays = match plan {
                Plan::Parallel(nest) => &nest.private_arrays[..],
                _ => &[],
            };
            stat_loops.push((line, if unmodelled { None } else { self.predicted_transfers(stmt, private_arrays) }));
            let id = stat_loops.len();
            drop(stat_loops);
            let _ = writeln!(out, "  call hpf_stat_begin()");
            self.emit_plan_body(out, plan);
            let _ = writeln!(out, "  call hpf_stat_end({id})");
            return;
        }
        self.emit_plan_body(out, plan);
    }

    fn emit_plan_body(&self, out: &mut String, plan: &Plan) {
        match plan {
            Plan::Verbatim(stmt) => {
                let _ = writeln!(out, "{}", self.verbatim_text(stmt));
            }
            Plan::Allocate(stmt) => self.emit_allocate(out, stmt),
            Plan::Parallel(nest) => self.emit_parallel(out, nest),
            Plan::Split(split) => self.emit_split(out, split),
            Plan::Permute(permute) => self.emit_permute(out, permute),
            Plan::Matmul(matmul) => self.emit_matmul(out, matmul),
            Plan::DimReduce(plan) => self.emit_dim_reduce(out, plan),
            Plan::Scatter(scatter) => self.emit_scatter(out, scatter),
            Plan::Recurrence(recurrence) => self.emit_recurrence(out, recurrence),
            Plan::ElementReduction(plan) => self.emit_element_reduction(out, plan),
            Plan::Pipeline(pipeline) => self.emit_pipeline(out, pipeline),
            Plan::FetchedNest(nest) => self.emit_fetched_nest(out, nest),
            Plan::Sequential { control, body } => {
                let one_line = |range: TextRange| self.copy(range).replace(['&', '\n'], " ");
                let step = control.step.as_ref().map_or(String::new(), |it| format!(", {}", one_line(it.range)));
                let reused = reused_schedules(body);
                self.emit_reused_schedules_open(out, &reused);
                let _ = writeln!(out, "  ! hpf-ls: every process runs this loop");
                let _ = writeln!(
                    out,
                    "  do {} = {}, {}{step}",
                    control.var.text,
                    one_line(control.lo.range),
                    one_line(control.hi.range)
                );
                self.emit_loop_body(out, body);
                let _ = writeln!(out, "  end do");
                self.emit_reused_schedules_close(out, &reused);
            }
            Plan::While { stmt, cond, body } => {
                let reused = reused_schedules(body);
                self.emit_reused_schedules_open(out, &reused);
                let _ = writeln!(out, "  ! hpf-ls: every process runs this loop");
                let (open, close) = self.construct_labels(stmt);
                match cond {
                    Some(cond) => {
                        let _ = writeln!(out, "{open}  do while ({})", self.one_line(*cond));
                    }
                    None => {
                        let _ = writeln!(out, "{open}  do");
                    }
                }
                self.emit_loop_body(out, body);
                let _ = writeln!(out, "{close}  end do");
                self.emit_reused_schedules_close(out, &reused);
            }
            Plan::If { stmt, branches } => {
                // `100 IF (...) THEN` and `30 END IF` may be the targets of GO TOs.
                let (open, close) = self.construct_labels(stmt);
                for (idx, (cond, body)) in branches.iter().enumerate() {
                    let keyword = if idx == 0 { "if" } else { "else if" };
                    let label = if idx == 0 { open.as_str() } else { "" };
                    match cond {
                        Some(cond) => {
                            let _ = writeln!(out, "{label}  {keyword} ({}) then", self.one_line(*cond));
                        }
                        None => {
                            let _ = writeln!(out, "  else");
                        }
                    }
                    for plan in body {
                        self.emit_plan(out, plan);
                    }
                }
                let _ = writeln!(out, "{close}  end if");
            }
            Plan::Section(section) => self.emit_section(out, section),
            Plan::Forall { stmt, home, home_offset, lo, hi, step, control, cyclic_edits: Some(edits), .. } => {
                // Course by course: one FORALL per block of the process's
                // elements, every read on its cells (nothing fetched).
                let name = &self.distributed[home].name;
                let _ = writeln!(out, "  ! hpf-ls: owner computes {}", self.slice(stmt.header).trim());
                let _ = writeln!(out, "  do hpf_c = 0, hpf_courses(hpf_d_{name}) - 1");
                let _ = writeln!(
                    out,
                    "  call hpf_course_bounds(hpf_d_{name}, {home_offset}, ({lo}), ({hi}), {step}, hpf_c, hpf_lo, hpf_hi)"
                );
                let mut edits = edits.clone();
                let shifts = match &stmt.kind {
                    // The index whose triplet the courses replace.
                    StmtKind::Forall { specs, .. } => match specs.iter().find(|it| control.contains_range(it.lo.range))
                    {
                        Some(spec) => self.course_shifts(&spec.var.text, &mut edits),
                        None => courses::CourseShifts::none(),
                    },
                    _ => courses::CourseShifts::none(),
                };
                edits.push((*control, format!("hpf_lo:hpf_hi:{step}")));
                let _ =
                    writeln!(out, "{}{}\n{}  end do", shifts.open, self.edited_statement(stmt, &edits), shifts.close);
            }
            Plan::Forall { stmt, home, home_offset, lo, hi, step, control, reads, remote, cyclic_edits: None } => {
                let name = &self.distributed[home].name;
                let _ = writeln!(out, "  ! hpf-ls: owner computes {}", self.slice(stmt.header).trim());
                let _ = writeln!(
                    out,
                    "  call hpf_local_bounds(hpf_d_{name}, {home_offset}, ({lo}), ({hi}), {step}, hpf_lo, hpf_hi)"
                );
                self.emit_fetches(out, *home, *home_offset, *step, reads);
                let mut edits = vec![(*control, format!("hpf_lo:hpf_hi:{step}"))];
                if let (false, StmtKind::Forall { specs, .. }) = (remote.is_empty(), &stmt.kind) {
                    edits.extend(self.emit_fetched_reads(out, &specs[0].var.text, *step, remote));
                    let _ = writeln!(out, "{}\n  end block", self.edited_statement(stmt, &edits));
                } else {
                    let _ = writeln!(out, "{}", self.edited_statement(stmt, &edits));
                }
            }
            Plan::Reduce(reduce) => self.emit_reduce(out, reduce),
            Plan::Owner { stmt, array, index, reads, edits, remote } => {
                let name = &self.distributed[array].name;
                let index = self.copy(*index).replace(['&', '\n'], " ");
                let needs_fetch = self.needs_fetch(*array, 0, reads);
                if needs_fetch || !remote.is_empty() {
                    // The owner fetches the elements it reads from their owners.
                    let _ = writeln!(out, "  if (hpf_owns(hpf_d_{name}, {index})) then");
                    let _ = writeln!(out, "    hpf_lo = {index}\n    hpf_hi = hpf_lo\n  else");
                    let _ = writeln!(out, "    hpf_lo = 1\n    hpf_hi = 0\n  end if");
                }
                if needs_fetch {
                    // Every process can tell when the owner holds all it reads
                    // (`q(1) = p(1) - p(2)`, blocks of 2 or more): no fetch,
                    // whose gathering of the needs would make every process wait.
                    let held: Option<Vec<String>> = reads
                        .iter()
                        .map(|(id, (low, high))| {
                            let read = &self.distributed[id];
                            (read.second.is_none() && !read.cyclic).then(|| {
                                let at =
                                    |offset: i64| format!("hpf_owner(hpf_d_{}, ({index}) + ({offset}))", read.name);
                                let owner = format!("hpf_owner(hpf_d_{name}, {index})");
                                format!("{} == {owner} .and. {} == {owner}", at(*low), at(*high))
                            })
                        })
                        .collect();
                    match held.filter(|_| self.distributed[array].second.is_none() && !self.distributed[array].cyclic) {
                        Some(held) => {
                            let _ = writeln!(out, "  if (.not. ({})) then", held.join(" .and. "));
                            self.emit_fetches(out, *array, 0, 1, reads);
                            let _ = writeln!(out, "  end if");
                        }
                        None => self.emit_fetches(out, *array, 0, 1, reads),
                    }
                }
                let mut edits = edits.clone();
                if !remote.is_empty() {
                    // The owner's one iteration: `hpf_i` at its element reads the buffers' first values.
                    edits.extend(self.emit_fetched_reads(out, "hpf_i", 1, remote));
                    let _ = writeln!(out, "  hpf_i = hpf_lo");
                }
                let position = self.owner_slice_position((*array, &index), stmt, &mut edits);
                let _ = writeln!(out, "  if (hpf_owns(hpf_d_{name}, {index})) then");
                let _ = writeln!(
                    out,
                    "{}{}\n{}  end if",
                    position.open,
                    self.edited_statement(stmt, &edits),
                    position.close
                );
                // A loop its owner ran: the others set its index as it leaves.
                if let StmtKind::Do { control: Some(control), .. } = &stmt.kind {
                    let _ = writeln!(out, "  {} = {}", control.var.text, self.final_value(control));
                }
                if !remote.is_empty() {
                    let _ = writeln!(out, "  end block");
                }
            }
            Plan::OnRankZero { stmt, why } => self.emit_on_rank_zero(out, stmt, why.as_deref()),
            Plan::Grid(plan) => self.emit_grid(out, plan),
            Plan::Call(call) => self.emit_spmd_call(out, call),
            Plan::LocalCall(call) => self.emit_local_call(out, call),
            Plan::SliceCopy(plan) => self.emit_slice_assign(out, plan),
        }
    }

    /// A statement's text with its indentation (and any label before it).
    /// Whether `stmt` (or a statement in it) names a procedure that uses
    /// distributed module arrays other than as the subroutine of a CALL
    /// statement: a function reference, an actual argument, in a header.
    fn uses_touching_outside_calls(&self, stmt: &Stmt) -> bool {
        let mut stack = vec![stmt];
        while let Some(current) = stack.pop() {
            let children = current.children();
            if children.is_empty() {
                let (procedures, arrays) = self.implicit_arrays(current.range);
                let one_call = match &current.kind {
                    StmtKind::Call { name, .. } => procedures == [name.key().as_str()],
                    _ => false,
                };
                if !arrays.is_empty() && !one_call {
                    return true;
                }
                continue;
            }
            // The header (DO bounds, conditions) without the statements inside.
            let inside_start = children.iter().map(|it| it.range.start).min().unwrap_or(current.range.end);
            let header = TextRange::new(current.range.start, current.header.end.min(inside_start));
            if !self.implicit_arrays(header).1.is_empty() {
                return true;
            }
            stack.extend(children);
        }
        false
    }

    /// A statement every process runs as written, with MPI finalised
    /// before each STOP or ERROR STOP in it (every process takes it: a
    /// process that stops without finalising makes `mpirun` fail the run).
    /// The statement labels of a construct's first line (`100 IF (...)
    /// THEN`, `10 DO WHILE (...)`) and last line (`30 END IF`), each
    /// followed by a blank, or empty: the generated construct keeps them
    /// for the GO TOs that branch to them.
    fn construct_labels(&self, stmt: &Stmt) -> (String, String) {
        let leading = |line: &str| -> Option<(String, usize)> {
            let trimmed = line.trim_start();
            let digits = trimmed.len() - trimmed.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            let rest = &trimmed[digits..];
            (digits > 0 && rest.starts_with([' ', '\t']))
                .then(|| (format!("{} ", &trimmed[..digits]), line.len() - rest.trim_start().len()))
        };
        let line_start = |offset: usize| self.text[..offset].rfind('\n').map_or(0, |it| it + 1);
        // The label of the header's line, if the header is its first statement.
        let header_start = stmt.header.start;
        let first = line_start(header_start);
        let open = leading(&self.text[first..stmt.header.end])
            .filter(|(_, after)| first + after >= header_start)
            .map_or(String::new(), |it| it.0);
        // The label of the END line, if the line begins with it.
        let end = stmt.range.end;
        let last = line_start(end);
        let close = leading(&self.text[last..end])
            .filter(|(_, after)| self.text[last + after..end].to_ascii_lowercase().starts_with("end"))
            .map_or(String::new(), |it| it.0);
        (open, close)
    }

    fn verbatim_text(&self, stmt: &Stmt) -> String {
        let line_start = self.copy_start(stmt.range.start);
        let mut edits: Vec<(TextRange, String)> = Vec::new();
        let mut stack = vec![stmt];
        while let Some(current) = stack.pop() {
            let stops = |it: &Stmt| {
                matches!(it.kind, StmtKind::Other { .. }) && self.begins_with_keyword(it, &["stop", "errorstop"])
            };
            if let StmtKind::If { branches } = &current.kind {
                // A logical IF whose action stops becomes a block IF.
                if let [(Some(cond), body)] = branches.as_slice() {
                    if let [action] = body.as_slice() {
                        if stops(action) && current.header.end >= action.range.end {
                            let replacement = format!(
                                "if {} then\n    {}{}\n  end if",
                                self.one_line(cond.range),
                                self.before_stop(action.range),
                                self.one_line(action.range)
                            );
                            edits.push((current.range, replacement));
                            continue;
                        }
                    }
                }
            }
            if stops(current) {
                edits.push((TextRange::empty(current.range.start), self.before_stop(current.range)));
                continue;
            }
            stack.extend(current.children());
        }
        if edits.is_empty() {
            return self.statement_text(stmt);
        }
        edits.sort_by_key(|it| (it.0.start, it.0.end));
        self.copy_with_edits(TextRange::new(line_start, stmt.range.end), &edits)
    }

    /// What every process runs before the STOP at `action`: MPI ends; a
    /// STOP with a code (`STOP 'done'`, `STOP 3`) is left to rank 0 alone,
    /// the others stop silently, so the message is printed once.
    fn before_stop(&self, action: TextRange) -> String {
        let words: String = self.slice(action).split_whitespace().collect::<String>().to_ascii_lowercase();
        if words.len() > "stop".len() && words.starts_with("stop") {
            "call hpf_finalize()\n    if (hpf_rank /= 0) stop\n    ".to_string()
        } else {
            "call hpf_finalize()\n    ".to_string()
        }
    }

    fn statement_text(&self, stmt: &Stmt) -> String {
        self.copy(TextRange::new(self.copy_start(stmt.range.start), stmt.range.end))
    }

    /// Where the copy of a statement that begins at `offset` begins: at the
    /// start of its line, so that its indentation, its label and the
    /// `IF (...)` of a logical IF it is the action of come along, or after
    /// the last `;` before it on that line, so that the statements before
    /// it do not (`do i = 1, n; a(i) = 0; end do`).
    pub(crate) fn copy_start(&self, offset: usize) -> usize {
        statement_start(self.text, offset)
    }

    fn emit_parallel(&self, out: &mut String, nest: &ParallelNest) {
        let StmtKind::Do { control: Some(control), .. } = &nest.distributing.kind else { return };
        let step = nest.step;
        let lo = self.copy(control.lo.range).replace(['&', '\n'], " ");
        let hi = self.copy(control.hi.range).replace(['&', '\n'], " ");
        let home_name = &self.distributed[&nest.home].name;
        let var = &control.var.text;
        let home_offset = nest.home_offset;
        let _ = writeln!(out, "  ! hpf-ls: owner computes {}", self.slice(nest.distributing.header).trim());
        // A broadcast reference is replaced whole, its subscripts included.
        let broadcast_edits = self.emit_broadcasts(out, &nest.broadcasts);
        let not_broadcast = |range: &TextRange| !nest.broadcasts.iter().any(|it| it.range().contains_range(*range));
        // The nest as written, with the distributing loop's control replaced.
        let control_end = control.step.as_ref().map_or(control.hi.range.end, |it| it.range.end);
        let replaced = TextRange::new(control.lo.range.start, control_end);
        let line_start = self.copy_start(nest.stmt.range.start);
        let nest_range = TextRange::new(line_start, nest.stmt.range.end);
        let control_edit = (replaced, format!("hpf_lo, hpf_hi, {step}"));
        if let Some(edits) = &nest.cyclic_edits {
            // Course by course: each holds one block of the process's elements.
            let mut edits = edits.clone();
            edits.retain(|(range, _)| not_broadcast(range));
            edits.extend(broadcast_edits.iter().cloned());
            let courses_to = |hi: &str| {
                format!(
                    "  do hpf_c = 0, hpf_courses(hpf_d_{home_name}) - 1\n    call hpf_course_bounds(hpf_d_{home_name}, {home_offset}, ({lo}), {hi}, {step}, hpf_c, hpf_lo, hpf_hi)"
                )
            };
            // A plain loop (step 1, nothing fetched, no EXIT) computes its
            // courses' bounds and home positions by arithmetic on a frame.
            let framed = step == 1 && nest.remote.is_empty() && nest.exit_when.is_none();
            let mut courses = if framed {
                courses::framed_courses(home_name, home_offset, &format!("({lo})"), &format!("({hi})"))
            } else {
                courses_to(&format!("({hi})"))
            };
            if let Some(cond) = nest.exit_when {
                // The first iteration where the EXIT's condition holds, among
                // the process's courses, then among all processes.
                let sign = exit_sign(step);
                let (first, reduce) = if step > 0 { ("min", "MPI_MIN") } else { ("max", "MPI_MAX") };
                let cond = self.edited(cond, &edits).replace(['&', '\n'], " ");
                let _ = writeln!(
                    out,
                    "  hpf_exit_at = {sign}huge(hpf_exit_at)\n{courses}\n    do {var} = hpf_lo, hpf_hi, {step}\n      if ({cond}) then\n        hpf_exit_at = {first}(hpf_exit_at, {var})\n        exit\n      end if\n    end do\n  end do"
                );
                let _ = writeln!(
                    out,
                    "  call MPI_Allreduce(MPI_IN_PLACE, hpf_exit_at, 1, MPI_INTEGER, {reduce}, MPI_COMM_WORLD)"
                );
                courses = courses_to(&format!("merge(hpf_exit_at, ({hi}), hpf_exit_at /= {sign}huge(hpf_exit_at))"));
            }
            if !nest.remote.is_empty() {
                // A fetched reference is replaced whole, its subscript included
                // (which the inspector reads at local positions).
                let fetched = self.emit_remote_courses(out, (var, step), &courses, &nest.remote, &edits);
                edits.retain(|(range, _)| !nest.remote.iter().any(|it| it.range().contains_range(*range)));
                edits.extend(fetched);
            }
            let home_descriptor = format!("hpf_d_{home_name}");
            let frame = framed.then_some((home_descriptor.as_str(), home_offset));
            let shifts = self.framed_course_shifts(var, &mut edits, frame);
            edits.push(control_edit);
            self.emit_reduction_starts(out, &nest.reductions, step);
            let _ = writeln!(out, "{courses}");
            if !nest.remote.is_empty() {
                let _ = writeln!(out, "    hpf_k = 0");
                let _ = writeln!(
                    out,
                    "    if ((hpf_hi - hpf_lo) * ({step}) >= 0) hpf_k = (hpf_hi - hpf_lo) / ({step}) + 1"
                );
            }
            out.push_str(&shifts.open);
            let _ = writeln!(out, "{}", assign::close_shared_label(self.edited(nest_range, &edits)));
            out.push_str(shifts.close);
            if !nest.remote.is_empty() {
                let _ = writeln!(out, "    hpf_m = hpf_m + hpf_k");
            }
            let _ = writeln!(out, "  end do");
            if framed {
                let _ = writeln!(out, "  end block");
            }
            self.emit_reduction_ends(out, &nest.reductions, step);
            if !nest.remote.is_empty() {
                let _ = writeln!(out, "  end block");
            }
        } else {
            // Whole copies of the arrays read off their owners' neighbours:
            // gathered on rank 0, then broadcast.
            let mut edits = vec![control_edit];
            edits.extend(broadcast_edits.iter().cloned());
            for array in &nest.replicated {
                let distributed = &self.distributed[array];
                let name = &distributed.name;
                let bounds: Vec<String> =
                    distributed.lbs.iter().zip(&distributed.ubs).map(|(lb, ub)| format!("{lb}:{ub}")).collect();
                let _ = writeln!(
                    out,
                    "  hpf_stat_gathers = .true.\n  call hpf_gather_{}({name}, hpf_d_{name}, hpf_g_{name}, {})\n  hpf_stat_gathers = .false.",
                    distributed.variant(),
                    distributed.bounds_args()
                );
                let _ = writeln!(
                    out,
                    "  if (hpf_rank /= 0) then\n    if (allocated(hpf_g_{name})) deallocate (hpf_g_{name})\n    allocate (hpf_g_{name}({}))\n  end if",
                    bounds.join(", ")
                );
                let copy = format!("hpf_g_{name}");
                emit_counted_bcast(
                    out,
                    (&copy, &format!("size({copy})"), &mpi_type(distributed.suffix)),
                    ("0", "hpf_rank == 0"),
                );
                let renames = self.distributed_occurrences(nest.stmt.range).into_iter().filter(|it| it.1 == *array);
                edits.extend(renames.map(|(range, _)| (range, format!("hpf_g_{name}"))));
            }
            if nest.home_coef == 1 {
                let _ = writeln!(
                    out,
                    "  call hpf_local_bounds(hpf_d_{home_name}, {home_offset}, ({lo}), ({hi}), {step}, hpf_lo, hpf_hi)"
                );
            } else {
                let _ = writeln!(
                    out,
                    "  call hpf_local_bounds_affine(hpf_d_{home_name}, {}, {home_offset}, ({lo}), ({hi}), {step}, hpf_lo, hpf_hi)",
                    nest.home_coef
                );
            }
            self.emit_fetches_of_parts(out, nest.home, home_offset, step, &nest.reads, &nest.parts);
            if !nest.remote.is_empty() {
                edits.extend(self.emit_remote_reads(out, var, step, &nest.remote));
            }
            if let Some(cond) = nest.exit_when {
                self.emit_exit_search(out, nest, cond, &edits, &lo);
            }
            // After the fetches: a chain waits here for the previous process.
            self.emit_scan_starts(out, (nest.stmt, nest_range, &edits), &nest.reductions, step);
            self.emit_reduction_starts(out, &nest.reductions, step);
            let _ = writeln!(out, "{}", assign::close_shared_label(self.edited(nest_range, &edits)));
            self.emit_reduction_ends(out, &nest.reductions, step);
            self.emit_scan_ends(out, &nest.reductions);
            for (array, offset) in &nest.write_backs {
                let distributed = &self.distributed[array];
                let name = &distributed.name;
                let _ = writeln!(
                    out,
                    "  call hpf_send_home_{}({name}, hpf_d_{name}, hpf_lo + ({offset}), hpf_hi + ({offset}), {step})",
                    distributed.suffix
                );
            }
            if !nest.remote.is_empty() {
                let _ = writeln!(out, "  end block");
            }
            for array in &nest.replicated {
                let _ = writeln!(out, "  deallocate (hpf_g_{})", self.distributed[array].name);
            }
        }
        let _ = writeln!(out, "  {var} = hpf_final(({lo}), ({hi}), {step})");
        if nest.exit_when.is_some() {
            // The loop left at its EXIT: its index stays there.
            let _ = writeln!(out, "  if (hpf_exit_at /= {}huge(hpf_exit_at)) {var} = hpf_exit_at", exit_sign(step));
        }
        self.emit_last_values(out, nest, &lo, &hi);
        // The loops inside ran only where the process had iterations: their
        // indices get the values they have after the sequential loop nest.
        let mut keys: Vec<String> = Vec::new();
        let mut inner: Vec<&LoopControl> = Vec::new();
        let mut stack = vec![nest.stmt];
        while let Some(stmt) = stack.pop() {
            if let StmtKind::Do { control: Some(control), .. } = &stmt.kind {
                keys.push(control.var.key());
                if nest.distributing.range.contains_range(stmt.range) && !std::ptr::eq(stmt, nest.distributing) {
                    inner.push(control);
                }
            }
            // In text order: of two loops over one index, the later one sets it last.
            stack.extend(stmt.children().into_iter().rev());
        }
        // (When the distributing loop is itself inside the nest, they may differ.)
        let outermost = std::ptr::eq(nest.stmt, nest.distributing);
        for control in inner.into_iter().filter(|_| outermost) {
            let mut bounds = vec![&control.lo, &control.hi];
            bounds.extend(control.step.as_ref());
            if bounds.iter().any(|it| mentions(it, &keys) || mentions(it, &nest.privates)) {
                continue;
            }
            // Set when the distributing loop ran at least once.
            let _ = writeln!(
                out,
                "  if ((({hi}) - ({lo})) * ({step}) >= 0) {} = {}",
                control.var.text,
                self.final_value(control)
            );
        }
        if !nest.broadcasts.is_empty() {
            let _ = writeln!(out, "  end block");
        }
    }

    /// The value the index of the DO loop `control` has after the loop.
    fn final_value(&self, control: &LoopControl) -> String {
        let step = control.step.as_ref().map_or("1".to_string(), |it| self.one_line(it.range));
        format!("hpf_final(({}), ({}), {step})", self.one_line(control.lo.range), self.one_line(control.hi.range))
    }

    /// Before a loop with an `IF (cond) EXIT`: the first iteration where
    /// `cond` holds, searched by every process among its own iterations
    /// (`hpf_lo, hpf_hi`) and agreed on by all, becomes the loop's last
    /// (its owner leaves it at the EXIT, as the sequential loop does).
    fn emit_exit_search(
        &self,
        out: &mut String,
        nest: &ParallelNest,
        cond: TextRange,
        edits: &[(TextRange, String)],
        lo: &str,
    ) {
        let StmtKind::Do { control: Some(control), .. } = &nest.distributing.kind else { return };
        let (var, step) = (&control.var.text, nest.step);
        let home_name = &self.distributed[&nest.home].name;
        let sign = exit_sign(step);
        let first = if step > 0 { "MPI_MIN" } else { "MPI_MAX" };
        let cond = self.edited(cond, edits).replace(['&', '\n'], " ");
        let _ = writeln!(
            out,
            "  hpf_exit_at = {sign}huge(hpf_exit_at)\n  do {var} = hpf_lo, hpf_hi, {step}\n    if ({cond}) then\n      hpf_exit_at = {var}\n      exit\n    end if\n  end do"
        );
        let _ =
            writeln!(out, "  call MPI_Allreduce(MPI_IN_PLACE, hpf_exit_at, 1, MPI_INTEGER, {first}, MPI_COMM_WORLD)");
        let _ = writeln!(
            out,
            "  if (hpf_exit_at /= {sign}huge(hpf_exit_at)) call hpf_local_bounds(hpf_d_{home_name}, {}, ({lo}), hpf_exit_at, {step}, hpf_lo, hpf_hi)",
            nest.home_offset
        );
    }

    /// The box of the elements of `array` (BLOCK along one dimension) that
    /// the assignment or output statement `stmt` run on rank 0 touches, as
    /// the gather's `[lo, ...], [hi, ...]`: each subscript a value or a
    /// section's bounds that every process evaluates alike before the
    /// statement (replicated scalars, constants, intrinsics), so that only
    /// the box moves to rank 0 and back. `None`: the whole array.
    fn rank_zero_box(&self, stmt: &Stmt, array: SymbolId, occurrences: &[(TextRange, SymbolId)]) -> Option<String> {
        let distributed = &self.distributed[&array];
        if distributed.cyclic || distributed.second.is_some() {
            return None;
        }
        let exprs: Vec<&syntax::Expr> = match &stmt.kind {
            StmtKind::Assign { lhs, rhs } => vec![lhs, rhs],
            StmtKind::Output { items } => items.iter().collect(),
            _ => return None,
        };
        // Implied DO variables change inside the statement.
        let text = self.slice(stmt.range).to_ascii_lowercase();
        let implied: Vec<String> = text
            .match_indices('=')
            .filter_map(|(at, _)| {
                let before = text[..at].trim_end();
                let name: String =
                    before.chars().rev().take_while(|it| it.is_ascii_alphanumeric() || *it == '_').collect();
                let name: String = name.chars().rev().collect();
                let rest = before[..before.len() - name.len()].trim_end();
                (!name.is_empty() && rest.ends_with(',') && !text[at + 1..].starts_with('=')).then_some(name)
            })
            .collect();
        let rank = distributed.lbs.len();
        let mut lows: Vec<Vec<String>> = vec![Vec::new(); rank];
        let mut highs: Vec<Vec<String>> = vec![Vec::new(); rank];
        for (range, _) in occurrences.iter().filter(|it| it.1 == array) {
            let args = exprs.iter().find_map(|it| assign::find_reference(it, *range))?;
            if args.len() != rank {
                return None;
            }
            for (k, arg) in args.iter().enumerate() {
                let (lo, hi) = match arg {
                    syntax::Subscript::Expr(value) => (Some(value), Some(value)),
                    syntax::Subscript::Range { lo, hi, stride, .. } => {
                        // A negative or run-time stride may run either way.
                        if stride.as_ref().is_some_and(|it| self.constant_of(it).is_none_or(|step| step < 0)) {
                            let (Some(lo), Some(hi)) = (lo, hi) else { return None };
                            let (lo, hi) = (self.box_bound(lo, &implied)?, self.box_bound(hi, &implied)?);
                            lows[k].push(format!("min({lo}, {hi})"));
                            highs[k].push(format!("max({lo}, {hi})"));
                            continue;
                        }
                        (lo.as_ref(), hi.as_ref())
                    }
                    _ => return None,
                };
                lows[k].push(match lo {
                    Some(lo) => self.box_bound(lo, &implied)?,
                    None => distributed.lbs[k].to_string(),
                });
                highs[k].push(match hi {
                    Some(hi) => self.box_bound(hi, &implied)?,
                    None => distributed.ubs[k].to_string(),
                });
            }
        }
        let fold = |parts: &[String], op: &str| match &parts.iter().fold(Vec::new(), |mut unique: Vec<String>, it| {
            if !unique.contains(it) {
                unique.push(it.clone());
            }
            unique
        })[..]
        {
            [] => None,
            [one] => Some(one.clone()),
            many => Some(format!("{op}({})", many.join(", "))),
        };
        let lows: Option<Vec<String>> = lows.iter().map(|it| fold(it, "min")).collect();
        let highs: Option<Vec<String>> = highs.iter().map(|it| fold(it, "max")).collect();
        Some(format!("[{}], [{}]", lows?.join(", "), highs?.join(", ")))
    }

    /// A box bound's text, when every process can evaluate `expr` alike
    /// before the statement (no distributed data, no implied DO variable
    /// `implied`, no call but of an intrinsic).
    fn box_bound(&self, expr: &syntax::Expr, implied: &[String]) -> Option<String> {
        let mut stack = vec![expr];
        while let Some(expr) = stack.pop() {
            match &expr.kind {
                ExprKind::Name(name) => {
                    if self.is_distributed_name(name) || implied.contains(&name.key()) {
                        return None;
                    }
                }
                ExprKind::Ref { name, args } => {
                    let array = self.lookup(&name.key()).is_some_and(|id| self.analysis.model.symbol(id).is_array());
                    let intrinsic = assign::ELEMENTAL.contains(&name.key().as_str())
                        || ["size", "lbound", "ubound", "len"].contains(&name.key().as_str());
                    if self.is_distributed_name(name) || !(array || intrinsic) {
                        return None;
                    }
                    for arg in args {
                        match arg {
                            syntax::Subscript::Expr(value) => stack.push(value),
                            _ => return None,
                        }
                    }
                }
                ExprKind::Unary { operand, .. } | ExprKind::Paren(operand) => stack.push(operand),
                ExprKind::Binary { lhs, rhs, .. } => stack.extend([&**lhs, &**rhs]),
                ExprKind::Int(_) | ExprKind::Literal(_) => {}
                ExprKind::Other(_) => return None,
            }
        }
        Some(format!("({})", self.one_line(expr.range)))
    }

    fn emit_on_rank_zero(&self, out: &mut String, stmt: &Stmt, why: Option<&str>) {
        let occurrences = self.distributed_occurrences(stmt.range);
        let mut arrays: Vec<SymbolId> = occurrences.iter().map(|it| it.1).collect();
        // The distributed module arrays of the procedures it calls: they may set them.
        let implicit = self.implicit_arrays(stmt.range).1;
        arrays.extend(implicit.iter().copied().filter(|it| self.distributed.contains_key(it)));
        arrays.sort();
        arrays.dedup();
        if let Some(why) = why {
            let _ = writeln!(out, "  ! hpf-ls: on rank 0 ({why})");
        }
        let boxes: Vec<Option<String>> = arrays
            .iter()
            .map(|array| if implicit.contains(array) { None } else { self.rank_zero_box(stmt, *array, &occurrences) })
            .collect();
        for (array, boxed) in arrays.iter().zip(&boxes) {
            let distributed = &self.distributed[array];
            let _ = writeln!(
                out,
                "  call hpf_gather_{}({name}, hpf_d_{name}, hpf_g_{name}, {})",
                distributed.variant(),
                boxed.clone().unwrap_or_else(|| distributed.bounds_args()),
                name = distributed.name
            );
        }
        // The statement with every distributed array renamed to its gathered
        // copy, and its branches out of itself to the end of the block.
        let exits = self.rank_zero_exits(stmt);
        let first_label = self.labels_taken.get() + 1;
        self.labels_taken.set(first_label + exits.len() as u32);
        let label = |k: usize| 90000 + first_label + k as u32;
        let mut edits: Vec<(TextRange, String)> = occurrences
            .iter()
            .map(|(range, symbol)| (*range, format!("hpf_g_{}", self.distributed[symbol].name)))
            .collect();
        edits.extend(exits.iter().enumerate().map(|(k, it)| (it.action, format!("go to {}", label(k + 1)))));
        edits.sort_by_key(|it| it.0.start);
        let line_start = self.copy_start(stmt.range.start);
        let text = self.copy_with_edits(TextRange::new(line_start, stmt.range.end), &edits);
        if exits.is_empty() {
            let _ = writeln!(out, "  if (hpf_rank == 0) then\n{text}\n  end if");
        } else {
            // Rank 0 notes which branch left the statement; every process
            // takes it once the gathered copies are back.
            let _ = writeln!(out, "  hpf_jump = 0\n  if (hpf_rank == 0) then\n{text}\n  go to {}", label(0));
            for k in 1..=exits.len() {
                let _ = writeln!(out, "{} hpf_jump = {k}\n  go to {}", label(k), label(0));
            }
            let _ = writeln!(out, "{} continue\n  end if", label(0));
        }
        let (written_arrays, mut written_scalars) = self.written(stmt);
        // What the internal procedures it calls may set by host association.
        if self.place.is_none() {
            written_scalars.extend(self.host_variables_set(stmt.range, &written_scalars));
        }
        for (array, boxed) in arrays.iter().zip(&boxes) {
            let distributed = &self.distributed[array];
            if written_arrays.contains(array) || implicit.contains(array) {
                let _ = writeln!(
                    out,
                    "  call hpf_scatter_{}(hpf_g_{name}, hpf_d_{name}, {name}{})",
                    distributed.variant(),
                    boxed.as_ref().map(|it| format!(", {it}")).unwrap_or_default(),
                    name = distributed.name
                );
            } else {
                let _ =
                    writeln!(out, "  if (allocated(hpf_g_{name})) deallocate (hpf_g_{name})", name = distributed.name);
            }
        }
        for (name, bytes) in written_scalars {
            if self.is_scalar_dummy(&name) {
                // It may be associated with a constant (`procedures.rs`).
                self.emit_dummy_bcast(out, &name);
                continue;
            }
            let _ = writeln!(out, "  call MPI_Bcast({name}, {bytes}, MPI_BYTE, 0, MPI_COMM_WORLD)");
        }
        // COMMON blocks the procedures it calls may have set on rank 0 only.
        for sync in self.common_syncs(stmt.range) {
            let _ = writeln!(out, "{sync}");
        }
        if !exits.is_empty() {
            let _ = writeln!(out, "  call MPI_Bcast(hpf_jump, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)");
            for (k, exit) in exits.iter().enumerate() {
                let action = self.one_line(exit.action);
                // A STOP ends every process, after MPI is finalised.
                let finalize =
                    if exit.stops { format!("    {}", self.before_stop(exit.action)) } else { "    ".to_string() };
                let _ = writeln!(out, "  if (hpf_jump == {}) then\n{finalize}{action}\n  end if", k + 1);
            }
        }
    }

    /// The branches of a statement run on rank 0 that leave it: GO TO a
    /// label outside it, STOP, ERROR STOP and RETURN, EXIT and CYCLE of a
    /// loop around it. Only rank 0 would take them and skip the scatters
    /// and broadcasts the other processes wait in.
    fn rank_zero_exits(&self, stmt: &Stmt) -> Vec<RankZeroExit> {
        let inside = self.slice(stmt.range);
        let defines_label = |label: &str| {
            inside.lines().any(|line| {
                let line = line.trim_start();
                line.strip_prefix(label).is_some_and(|rest| rest.starts_with([' ', '\t']))
            })
        };
        let mut exits = Vec::new();
        // (statement, inside a DO loop of `stmt`)
        let mut stack: Vec<(&Stmt, bool)> = vec![(stmt, false)];
        while let Some((current, in_loop)) = stack.pop() {
            let is_loop = matches!(current.kind, StmtKind::Do { .. } | StmtKind::DoWhile { .. });
            stack.extend(current.children().into_iter().map(|it| (it, in_loop || is_loop)));
            let Some(action) = self.branch_action(current) else { continue };
            let words: String =
                self.slice(action).chars().filter(|it| !it.is_whitespace()).collect::<String>().to_ascii_lowercase();
            let leaves = if let Some(target) = words.strip_prefix("goto") {
                !target.chars().all(|it| it.is_ascii_digit()) || !defines_label(target)
            } else if words.starts_with("exit") || words.starts_with("cycle") {
                !in_loop
            } else {
                true
            };
            if leaves {
                exits.push(RankZeroExit { action, stops: words.starts_with("stop") || words.starts_with("errorstop") });
            }
        }
        exits.sort_by_key(|it| it.action.start);
        exits
    }

    /// The branch a statement takes (the statement itself, or the action of
    /// a logical IF): GO TO, STOP, ERROR STOP, RETURN, EXIT or CYCLE.
    fn branch_action(&self, stmt: &Stmt) -> Option<TextRange> {
        if !matches!(stmt.kind, StmtKind::Other { .. }) || !self.begins_with_keyword(stmt, BRANCH_KEYWORDS) {
            return None;
        }
        let text = self.slice(stmt.header);
        let lower = text.to_ascii_lowercase();
        let trimmed = lower.trim_start();
        let start = lower.len() - trimmed.len();
        let action_start = if trimmed.starts_with("if") && trimmed[2..].trim_start().starts_with('(') {
            let open = start + 2 + (trimmed[2..].len() - trimmed[2..].trim_start().len());
            let close = closing_paren(&lower, open)?;
            close + 1 + (lower[close + 1..].len() - lower[close + 1..].trim_start().len())
        } else {
            start
        };
        let end = text.trim_end().len();
        (action_start < end).then(|| TextRange::new(stmt.header.start + action_start, stmt.header.start + end))
    }

    /// Whether `stmt` is an unlabelled CYCLE or EXIT, or a logical IF whose
    /// action is one.
    fn loop_branch(&self, stmt: &Stmt) -> Option<LoopBranch> {
        let action = self.branch_action(stmt)?;
        let words: String = self.slice(action).split_whitespace().collect::<String>().to_ascii_lowercase();
        match words.as_str() {
            "cycle" => Some(LoopBranch::Cycle),
            "exit" => Some(LoopBranch::Exit),
            _ => None,
        }
    }

    /// Whether `stmt` is a READ statement.
    fn is_read(&self, stmt: &Stmt) -> bool {
        let header = self.slice(stmt.header).trim_start().as_bytes();
        matches!(stmt.kind, StmtKind::Other { .. })
            && header.len() >= 4
            && header[..4].eq_ignore_ascii_case(b"read")
            && !header.get(4).is_some_and(|it| it.is_ascii_alphanumeric() || *it == b'_')
    }

    /// Whether `stmt` prints or reads, or holds a statement that does: such
    /// statements run on rank 0 only.
    fn contains_io(&self, stmt: &Stmt) -> bool {
        let mut stack = vec![stmt];
        while let Some(stmt) = stack.pop() {
            if matches!(stmt.kind, StmtKind::Output { .. }) || self.is_read(stmt) {
                return true;
            }
            stack.extend(stmt.children());
        }
        false
    }

    /// The items and status variables of a READ statement, or why the
    /// backend cannot read it on one process and hand the values on.
    fn read_parts<'s>(&self, stmt: &'s Stmt) -> Result<ReadParts<'s>, String> {
        let StmtKind::Other { exprs, .. } = &stmt.kind else { return Err("it is not a READ statement".to_string()) };
        let text = self.slice(stmt.range).to_ascii_lowercase();
        let after_read = text.find("read").map_or(text.len(), |it| it + 4);
        let rest = &text[after_read..];
        let open = after_read + (rest.len() - rest.trim_start().len());
        let mut status_keys = Vec::new();
        let mut group = None;
        let items_start = if text[open..].starts_with('(') {
            let close = closing_paren(&text, open).ok_or("its control list is not closed")?;
            for (_, part) in top_level_parts(&text[open + 1..close]) {
                let Some((key, value)) = part.split_once('=') else { continue };
                match key.trim() {
                    "end" | "err" | "eor" => {
                        return Err(format!(
                        "READ with {}= is not supported by the MPI backend yet (only the reading process would branch)",
                        key.trim().to_ascii_uppercase()
                    ))
                    }
                    "iostat" | "iomsg" | "size" => status_keys.push(value.trim().to_string()),
                    // The group's variables are not items of the statement:
                    // they are handed on as the items are.
                    "nml" => group = Some(value.trim().to_string()),
                    _ => {}
                }
            }
            close + 1
        } else {
            // READ format, items
            top_level_parts(&text[open..]).get(1).map_or(text.len(), |(at, _)| open + at)
        };
        let items_start = stmt.range.start + items_start;
        let mut parts = ReadParts { items: Vec::new(), status: Vec::new(), group: Vec::new() };
        if let Some(group) = group {
            let names = self.namelist_group(&group).ok_or_else(|| {
                format!("READ of the NAMELIST group `{group}`: its NAMELIST statement was not understood")
            })?;
            for name in names {
                let known = self.lookup(&name.key());
                if known.is_some_and(|id| self.distributed.contains_key(&id)) {
                    return Err(format!(
                        "READ of the NAMELIST group `{group}`: its distributed array `{}` is not supported by the MPI backend yet",
                        name.text
                    ));
                }
                if let Some(Err(why)) = known.map(|id| ElementType::of_symbol(self.analysis.model.symbol(id))) {
                    return Err(format!("READ of `{}` (NAMELIST `{group}`): {why}", name.text));
                }
                parts.group.push(name);
            }
        }
        for expr in exprs {
            match &expr.kind {
                ExprKind::Name(name) if expr.range.start < items_start => {
                    if status_keys.contains(&name.key()) {
                        parts.status.push(name);
                    }
                }
                _ if expr.range.start < items_start => {}
                ExprKind::Name(name) | ExprKind::Ref { name, .. } => {
                    let model = &self.analysis.model;
                    let known = self.lookup(&name.key()).map(|id| model.symbol(id));
                    if let Some(Err(why)) = known.map(ElementType::of_symbol) {
                        return Err(format!("READ of `{}`: {why}", name.text));
                    }
                    parts.items.push(expr);
                }
                _ => {
                    return Err(format!(
                        "READ of `{}`: implied-DO lists and expressions are not supported by the MPI backend yet",
                        self.slice(expr.range)
                    ))
                }
            }
        }
        Ok(parts)
    }

    /// The variables of NAMELIST group `group` (lower case), from the
    /// NAMELIST statements of the program (`NAMELIST /run/ n, dt /out/ k`,
    /// continued with `&`), or `None` when there is none or a name is not
    /// a plain variable name.
    fn namelist_group(&self, group: &str) -> Option<Vec<syntax::Name>> {
        let lines: Vec<&str> = self.text.lines().collect();
        let uncommented = |line: &str| line.split('!').next().unwrap_or("").trim().to_string();
        let mut names = Vec::new();
        let mut k = 0;
        while k < lines.len() {
            let mut statement = uncommented(lines[k]);
            k += 1;
            let lower = statement.to_ascii_lowercase();
            if !lower.starts_with("namelist") || !lower[8..].trim_start().starts_with('/') {
                continue;
            }
            while statement.ends_with('&') && k < lines.len() {
                statement.pop();
                statement.push(' ');
                statement.push_str(uncommented(lines[k]).trim_start_matches('&'));
                k += 1;
            }
            let pieces: Vec<&str> = statement[8..].split('/').collect();
            for pair in pieces[1..].chunks(2) {
                if !pair[0].trim().eq_ignore_ascii_case(group) {
                    continue;
                }
                for name in pair.get(1)?.split(',').map(str::trim).filter(|it| !it.is_empty()) {
                    if !name.chars().all(|it| it.is_ascii_alphanumeric() || it == '_') {
                        return None;
                    }
                    names.push(syntax::Name::new(name, TextRange::empty(0)));
                }
            }
        }
        (!names.is_empty()).then_some(names)
    }

    /// Distributed arrays written by `stmt`, and the replicated variables
    /// it writes as (name, byte count): broadcast as bytes, so that any
    /// type and kind (`REAL(8)`, COMPLEX, CHARACTER) arrives whole.
    fn written(&self, stmt: &Stmt) -> (Vec<SymbolId>, Vec<(String, String)>) {
        let model = &self.analysis.model;
        let mut arrays = Vec::new();
        let mut scalars: Vec<(String, String)> = Vec::new();
        let add_scalar = |name: &syntax::Name, scalars: &mut Vec<(String, String)>| {
            // Undeclared (implicitly typed) variables are scalars.
            let (name, array) = match self.lookup(&name.key()) {
                None => (name.text.clone(), false),
                Some(id) => {
                    let symbol = model.symbol(id);
                    if symbol.kind != SymbolKind::Variable || self.distributed.contains_key(&id) {
                        return;
                    }
                    (symbol.name.text.clone(), !symbol.shape.is_empty())
                }
            };
            if !scalars.iter().any(|it| it.0.eq_ignore_ascii_case(&name)) {
                let bytes = if array {
                    format!("size({name}) * (storage_size({name}) / 8)")
                } else {
                    format!("storage_size({name}) / 8")
                };
                scalars.push((name, bytes));
            }
        };
        let mut stack = vec![stmt];
        while let Some(stmt) = stack.pop() {
            match &stmt.kind {
                StmtKind::Assign { lhs, .. } => match &lhs.kind {
                    ExprKind::Name(name) | ExprKind::Ref { name, .. } => {
                        match self.lookup(&name.key()).filter(|id| self.distributed.contains_key(id)) {
                            Some(id) => arrays.push(id),
                            None => add_scalar(name, &mut scalars),
                        }
                    }
                    _ => {}
                },
                StmtKind::Do { control: Some(control), .. } => add_scalar(&control.var, &mut scalars),
                StmtKind::Forall { .. } => {}
                // A subroutine may set any variable it is passed.
                StmtKind::Call { args, .. } => {
                    for arg in args {
                        let (ExprKind::Name(name) | ExprKind::Ref { name, .. }) = &arg.kind else { continue };
                        match self.lookup(&name.key()).filter(|id| self.distributed.contains_key(id)) {
                            Some(id) => arrays.push(id),
                            None => add_scalar(name, &mut scalars),
                        }
                    }
                }
                StmtKind::Other { .. } if self.is_read(stmt) => {
                    let Ok(parts) = self.read_parts(stmt) else { continue };
                    for name in parts.status {
                        add_scalar(name, &mut scalars);
                    }
                    for name in &parts.group {
                        add_scalar(name, &mut scalars);
                    }
                    for item in parts.items {
                        let (ExprKind::Name(name) | ExprKind::Ref { name, .. }) = &item.kind else { continue };
                        match self.lookup(&name.key()).filter(|id| self.distributed.contains_key(id)) {
                            Some(id) => arrays.push(id),
                            None => add_scalar(name, &mut scalars),
                        }
                    }
                }
                _ => {}
            }
            stack.extend(stmt.children());
        }
        (arrays, scalars)
    }
}

/// The descriptor and allocation of the local part of `distributed` (its
/// owned elements and shadow). Allocated here, not in the runtime:
/// gfortran vectorises the loops over an array the program allocates.
pub(crate) fn emit_alloc(out: &mut String, distributed: &Distributed) {
    if let Some(second) = &distributed.second {
        grid::emit_alloc(out, distributed, second);
        return;
    }
    let bounds = (0..distributed.lbs.len())
        .map(|k| {
            if k == distributed.dim {
                "hpf_lo:hpf_hi".to_string()
            } else {
                format!("{}:{}", distributed.lbs[k], distributed.ubs[k])
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    let _ = writeln!(
        out,
        "  hpf_d_{name} = hpf_make_desc({}, {}, {}, {}, {}, {}, {}){}\n  call hpf_alloc_bounds(hpf_d_{name}, {}, {}, hpf_lo, hpf_hi)\n  allocate ({name}({bounds}))",
        distributed.lb,
        distributed.ub,
        distributed.offset,
        distributed.template_lo,
        distributed.template_hi,
        distributed.block,
        i32::from(distributed.cyclic),
        stride_line(&format!("hpf_d_{}", distributed.name), distributed.stride),
        distributed.shadow_low,
        distributed.shadow_high,
        name = distributed.name
    );
}

/// At the start of a BLOCK: the declaration of `temp`, a temporary laid
/// out as the array it was cloned from, with its descriptor, and (then)
/// its allocation.
fn emit_block_temp(out: &mut String, temp: &Distributed) {
    let type_name = temp.suffix.declaration();
    let descriptors = if temp.second.is_some() { "(2)" } else { "" };
    let _ = writeln!(out, "  {type_name}, allocatable :: {}({})", temp.name, temp.colons());
    let _ = writeln!(out, "  type(hpf_desc) :: hpf_d_{}{descriptors}", temp.name);
    emit_alloc(out, temp);
}

/// The statements that put the temporary `temp` in the place of the array
/// `name` (same type, rank and layout but for the descriptor's values).
fn emit_move_temp(out: &mut String, temp: &str, name: &str) {
    let _ = writeln!(out, "  call move_alloc({temp}, {name})\n  hpf_d_{name} = hpf_d_{temp}");
}

/// The statement setting a descriptor's alignment stride (none for 1, the
/// descriptor's default), from a new line.
fn stride_line(desc: &str, stride: i64) -> String {
    if stride == 1 {
        String::new()
    } else {
        format!("\n  {desc}%s = {stride}")
    }
}

/// The elements a subscript reaches over its nest: `v + c` for a loop index
/// `v` other than `distributing` with constant bounds, or a constant; `None`
/// for anything else (all the elements).
fn reach(form: &SubscriptForm, nest: &[analysis::loops::NestIndex], distributing: &str) -> Option<(i64, i64)> {
    match form {
        SubscriptForm::Constant(value) => Some((*value, *value)),
        SubscriptForm::Affine { index, coef: 1, offset } => {
            let index = nest.get(*index)?;
            if index.key == distributing {
                return None;
            }
            // (A superset when the step is not 1 or the loop is empty.)
            let (lo, hi) = (index.lo?, index.hi?);
            Some((lo.min(hi) + offset, lo.max(hi) + offset))
        }
        _ => None,
    }
}

/// The index variables of the DO loops among `loops` (lower case).
fn do_variables(loops: &[&Stmt]) -> Vec<String> {
    loops
        .iter()
        .filter_map(|it| match &it.kind {
            StmtKind::Do { control: Some(control), .. } => Some(control.var.key()),
            _ => None,
        })
        .collect()
}

/// Whether `expr` names one of `keys` (lower case).
fn mentions(expr: &syntax::Expr, keys: &[String]) -> bool {
    match &expr.kind {
        ExprKind::Name(name) => keys.contains(&name.key()),
        ExprKind::Ref { name, args } => {
            keys.contains(&name.key())
                || args.iter().any(|arg| match arg {
                    syntax::Subscript::Expr(value) | syntax::Subscript::Keyword { value, .. } => mentions(value, keys),
                    syntax::Subscript::Range { lo, hi, stride, .. } => {
                        [lo, hi, stride].into_iter().flatten().any(|it| mentions(it, keys))
                    }
                    syntax::Subscript::Star(_) => false,
                })
        }
        ExprKind::Unary { operand, .. } | ExprKind::Paren(operand) => mentions(operand, keys),
        ExprKind::Binary { lhs, rhs, .. } => mentions(lhs, keys) || mentions(rhs, keys),
        ExprKind::Other(items) => items.iter().any(|it| mentions(it, keys)),
        ExprKind::Int(_) | ExprKind::Literal(_) => false,
    }
}

/// `text` split at its commas outside parentheses and quotes, with the
/// offset of each part.
fn top_level_parts(text: &str) -> Vec<(usize, &str)> {
    let mut parts = Vec::new();
    let (mut depth, mut quote, mut start) = (0usize, None, 0);
    for (at, byte) in text.bytes().enumerate() {
        match (quote, byte) {
            (Some(q), _) if byte == q => quote = None,
            (Some(_), _) => {}
            (None, b'\'' | b'"') => quote = Some(byte),
            (None, b'(') => depth += 1,
            (None, b')') => depth = depth.saturating_sub(1),
            (None, b',') if depth == 0 => {
                parts.push((start, &text[start..at]));
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push((start, &text[start..]));
    parts
}

/// What a READ statement writes: its input items, and the variables of its
/// IOSTAT=, IOMSG= and SIZE= specifiers.
struct ReadParts<'s> {
    items: Vec<&'s syntax::Expr>,
    status: Vec<&'s syntax::Name>,
    /// The variables of the NAMELIST group it reads (`NML=`).
    group: Vec<syntax::Name>,
}

#[cfg(test)]
mod tests;
