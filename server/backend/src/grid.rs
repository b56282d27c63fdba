//! Arrays distributed in two dimensions (BLOCK or BLOCK(m) along each, the
//! others `*`) over a 2-D grid of processes: each process holds the box of
//! elements it owns plus the shadow areas along both distributed
//! dimensions. The runtime shapes the grid from the declared arrangement
//! and the number of processes (`hpf_grid_shape` in `runtime.rs`: every
//! process takes part, as in the 1-D case).
//!
//! What runs in parallel on them:
//! - DO nests whose home `H(v+p, w+q)` follows two loops of the nest, one
//!   per distributed dimension, reading arrays of the same blocks at
//!   `X(v+c, w+d)`: the neighbours' elements (the corners included) are
//!   fetched into the shadow areas first, then each process runs the
//!   iterations of its own box;
//! - FORALLs of the same form (the left side may be read at any distance,
//!   FORALL evaluating every right side first);
//! - whole-array assignments of elemental expressions of arrays laid out
//!   alike (`U = 0`, `V = U`), on each process's box;
//! - section assignments whose distributed operands are sectioned like the
//!   left side (same strides and positions, constant distances, any
//!   alignment offsets): the owners of the left side's part, after fetching
//!   what they read; a scalar subscript of the left side along a
//!   distributed dimension (`A(K, 2:M) = A(K+1, 1:M-1)`) leaves the work to
//!   the processes owning it;
//! - element assignments from replicated data, by the element's owner;
//! - in output statements and assignments to replicated scalars, integer
//!   and logical SUM, PRODUCT, COUNT, ANY, ALL, and MAXVAL, MINVAL of such
//!   sections (each process reduces its part, then `MPI_Allreduce`; strides
//!   may be run-time values, and one element along a distributed dimension
//!   is the section `K:K` there, empty off its owner), and
//!   single elements (broadcast by their owner). Floating-point sums and
//!   products run on rank 0, whose gathered copy is summed in the
//!   sequential order.
//!
//! Fetches: per array and statement, one `MPI_Allgather` of the boxes each
//! process needs, then one message per neighbour whose box meets them. A
//! stencil whose reads are off the home's cell along one dimension at a
//! time needs two strips (the 4 neighbours); one reading diagonal
//! neighbours needs the box around its own (the corners come from the
//! diagonal neighbours directly, in the same single exchange).
//!
//! A DO nest that reads its home at other elements than it writes (a
//! dependence that may cross processes) and every other statement that
//! touches such an array run on rank 0 on gathered copies
//! (`hpf_gather_*`/`hpf_scatter_*` assemble and split the boxes), with a
//! note; output statements print the gathered copies.

pub(crate) mod cyclic;

use std::collections::BTreeMap;
use std::fmt::Write;

use analysis::eval::Linear;
use analysis::loops::{AccessAttr, LoopKind, LoopReport, SubscriptForm};
use analysis::model::SymbolId;
use syntax::{Expr, ExprKind, LoopControl, Stmt, StmtKind, Subscript, TextRange};

use crate::{Distributed, Lowering, Plan, SecondAxis};

/// Per distributed array read: the distances of its subscripts from the
/// home's iteration along the two distributed dimensions, one per reference.
type Reads = BTreeMap<SymbolId, Vec<[i64; 2]>>;

/// The smallest and largest distance along each dimension.
/// The most boxes one fetch takes (`hpf_nl(2, MAX_FETCH_BOXES)`); an array
/// read at more distances fetches the box around them all.
pub(crate) const MAX_FETCH_BOXES: usize = 27;

fn ranges(distances: &[[i64; 2]]) -> [(i64, i64); 2] {
    let range = |k: usize| {
        let values = distances.iter().map(|it| it[k]);
        (values.clone().min().unwrap_or(0), values.max().unwrap_or(0))
    };
    [range(0), range(1)]
}

fn add_read(reads: &mut Reads, array: SymbolId, distance: [i64; 2]) {
    let entry = reads.entry(array).or_default();
    if !entry.contains(&distance) {
        entry.push(distance);
    }
}

/// The work on arrays distributed in two dimensions that runs in parallel.
pub(crate) enum GridPlan<'a> {
    /// A DO nest: `loops[k]` distributes along the home's k-th distributed
    /// dimension, whose subscript is `v + offsets[k]` for its index `v`.
    Nest { stmt: &'a Stmt, home: SymbolId, loops: [&'a Stmt; 2], steps: [i64; 2], offsets: [i64; 2], reads: Reads },
    /// A FORALL: `specs[k]` indexes the home's k-th distributed dimension.
    Forall {
        stmt: &'a Stmt,
        home: SymbolId,
        specs: [&'a LoopControl; 2],
        steps: [i64; 2],
        offsets: [i64; 2],
        reads: Reads,
    },
    /// A whole-array assignment: every whole array becomes its local box.
    Whole { stmt: &'a Stmt, home: SymbolId, edits: Vec<(TextRange, String)> },
    /// An element assignment from replicated data, by its owner.
    Owner { stmt: &'a Stmt, home: SymbolId, index: [TextRange; 2] },
    /// A section assignment: the owners of the left side's elements.
    Section { stmt: &'a Stmt, home: SymbolId, axes: [SectionAxis; 2], reads: Reads, edits: Vec<(TextRange, String)> },
    /// Work on an array with a CYCLIC dimension (`cyclic.rs`).
    Cyclic(cyclic::CyclicPlan<'a>),
}

/// The local parts of the sections a reduction of arrays distributed in
/// two dimensions reads: the bounds of the first one's (its `home`) along
/// both distributed dimensions, the others at distances from it.
pub(crate) struct GridSection {
    home: SymbolId,
    axes: [(String, String, Step); 2],
    reads: Reads,
    edits: Vec<(TextRange, String)>,
    /// Whole arrays, each rewritten to its box (`hpf_bl`, `hpf_bh`): `axes` is unused.
    boxed: bool,
}

impl GridSection {
    pub(crate) fn edits(&self) -> &[(TextRange, String)] {
        &self.edits
    }
}

/// A reference's section along one distributed dimension: lower bound,
/// the text of both bounds, stride, position among the section's dimensions.
type AxisSection = (Linear, String, String, Step, usize);

/// The stride of a section along a distributed dimension: a constant, or
/// (in reductions) a run-time value, as written on one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    Constant(i64),
    Runtime(String),
}

impl Default for Step {
    fn default() -> Self {
        Step::Constant(1)
    }
}

impl Step {
    fn constant(&self) -> Option<i64> {
        match self {
            Step::Constant(step) => Some(*step),
            Step::Runtime(_) => None,
        }
    }
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::Constant(step) => write!(f, "{step}"),
            Step::Runtime(text) => write!(f, "({text})"),
        }
    }
}

/// What an operand of a section assignment or reduction lines up with, along
/// one distributed dimension: a section (lower bound, stride, position among
/// the section's dimensions) or one element (its subscript, when affine);
/// in a reduction, one element is a section of one element or none
/// (`Point`: each operand's subscript becomes the local part of `i:i`).
pub(crate) enum Frame {
    Range(Linear, Step, usize),
    Scalar(Option<Linear>),
    Point(Linear),
}

/// The left side of a section assignment along one distributed dimension.
#[derive(Clone)]
pub(crate) enum SectionAxis {
    Range { lo: String, hi: String, step: i64 },
    Scalar(String),
}

/// The local part `hpf_lo+(c):hpf_hi+(c):step` of a section along the k-th
/// distributed dimension, `c` elements from the left side's.
fn local_triplet(k: usize, c: i64, step: &Step) -> String {
    let (lo, hi) = [("hpf_lo", "hpf_hi"), ("hpf_lo2", "hpf_hi2")][k];
    if c == 0 {
        format!("{lo}:{hi}:{step}")
    } else {
        format!("{lo}+({c}):{hi}+({c}):{step}")
    }
}

/// Whether the elements of both arrays (one of them at least distributed in
/// two dimensions) at the same template cells live on the same process.
pub(crate) fn same_grid_blocks(one: &Distributed, other: &Distributed) -> bool {
    let (Some(a), Some(b)) = (&one.second, &other.second) else { return false };
    let first = one.dim == other.dim
        && one.cyclic == other.cyclic
        && (one.target == other.target
            || (one.template_lo == other.template_lo
                && one.template_hi == other.template_hi
                && one.block == other.block));
    let second = a.dim == b.dim
        && a.procs == b.procs
        && a.cyclic == b.cyclic
        && (one.target == other.target
            || (a.template_lo == b.template_lo && a.template_hi == b.template_hi && a.block == b.block));
    first && second
}

/// Whether the grid axes of two arrays distributed in two dimensions are
/// cut alike, whichever of their dimensions lies along each: unit strides,
/// BLOCK or BLOCK(m) along both axes, the same target (or templates of the
/// same bounds and blocks) and arrangement. The element `X(i, j)` of one
/// transposed onto the other's template (`ALIGN C(I,J) WITH E(J,I)`) then
/// sits, axis by axis, where the other's element at the same indices along
/// that axis does, up to the alignment offsets (`aligned_distances`).
pub(crate) fn same_grid_axes(one: &Distributed, other: &Distributed) -> bool {
    let (Some(a), Some(b)) = (&one.second, &other.second) else { return false };
    let unit = one.stride == 1 && other.stride == 1 && a.stride == 1 && b.stride == 1;
    let block = !one.cyclic && !other.cyclic && !a.cyclic && !b.cyclic;
    let cut = one.target == other.target
        || (one.template_lo == other.template_lo
            && one.template_hi == other.template_hi
            && one.block == other.block
            && a.template_lo == b.template_lo
            && a.template_hi == b.template_hi
            && a.block == b.block);
    unit && block && cut && a.procs == b.procs
}

/// The descriptors of an array distributed in two dimensions and its allocation.
pub(crate) fn emit_alloc(out: &mut String, distributed: &Distributed, second: &SecondAxis) {
    let name = &distributed.name;
    let (p1, p2) = second.procs;
    let _ = writeln!(
        out,
        "  hpf_d_{name}(1) = hpf_make_grid_desc({}, {}, {}, {}, {}, {}, {}, 1, {p1}, {p2})",
        distributed.lb,
        distributed.ub,
        distributed.offset,
        distributed.template_lo,
        distributed.template_hi,
        distributed.block,
        i32::from(distributed.cyclic)
    );
    out.push_str(crate::stride_line(&format!("hpf_d_{name}(1)"), distributed.stride).trim_start_matches('\n'));
    if distributed.stride != 1 {
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "  hpf_d_{name}(2) = hpf_make_grid_desc({}, {}, {}, {}, {}, {}, {}, 2, {p1}, {p2})",
        second.lb,
        second.ub,
        second.offset,
        second.template_lo,
        second.template_hi,
        second.block,
        i32::from(second.cyclic)
    );
    out.push_str(crate::stride_line(&format!("hpf_d_{name}(2)"), second.stride).trim_start_matches('\n'));
    if second.stride != 1 {
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "  call hpf_alloc_{}({name}, hpf_d_{name}, [{}, {}], [{}, {}], {})",
        distributed.variant(),
        distributed.shadow_low,
        second.shadow_low,
        distributed.shadow_high,
        second.shadow_high,
        distributed.bounds_args()
    );
}

impl<'a> Lowering<'a> {
    /// Whether `range` names an array distributed in two dimensions.
    pub(crate) fn touches_grid(&self, range: TextRange) -> bool {
        self.distributed_occurrences(range).iter().any(|it| self.distributed[&it.1].second.is_some())
    }

    /// The two distributed dimensions (0-based) of a grid array.
    fn grid_dims(&self, id: SymbolId) -> Option<[usize; 2]> {
        let distributed = self.distributed.get(&id)?;
        distributed.second.as_ref().map(|second| [distributed.dim, second.dim])
    }

    /// The alignment offsets along the two distributed dimensions.
    fn grid_offsets(&self, id: SymbolId) -> [i64; 2] {
        let distributed = &self.distributed[&id];
        [distributed.offset, distributed.second.as_ref().map_or(0, |it| it.offset)]
    }

    /// A reference to a replicated array inside a grid statement: an element
    /// (a scalar every process has) is fine, a section is not.
    fn replicated_element(&self, name: &syntax::Name, args: &[Subscript]) -> Result<(), String> {
        if args.iter().all(|it| matches!(it, Subscript::Expr(_)))
            && args.iter().all(|it| self.distributed_occurrences(it.range()).is_empty())
        {
            return Ok(());
        }
        Err(format!("it reads a section of the replicated array {}", name.text))
    }

    /// The owner-computes form of a DO nest on arrays distributed in two
    /// dimensions, or why it has none.
    pub(crate) fn grid_nest<'s>(&mut self, stmt: &'s Stmt) -> Result<Plan<'s>, String>
    where
        'a: 's,
    {
        let parts = self.nest_parts(stmt)?;
        if parts.leaves.iter().any(|it| it.1 == crate::LoopBranch::Exit) {
            return Err("it leaves a loop over a 2-D grid (EXIT)".to_string());
        }
        // An inner loop's index gets its final value after the nest as if the
        // loop ran: no IF or CYCLE may skip it.
        let skipped = |it: &&Stmt| {
            parts.ifs.iter().any(|branch| branch.range.contains_range(it.range))
                || parts.leaves.iter().any(|leave| leave.0.range.start < it.range.start)
        };
        if parts.loops.iter().any(skipped) {
            return Err("a DO loop of the nest is inside an IF or after a CYCLE".to_string());
        }
        // Private scalars are lowered on arrays distributed in one dimension only.
        if let Some(scalar) = parts.scalars.first() {
            return Err(format!("it assigns the scalar {}", scalar.text));
        }
        let (loops, assignments) = (&parts.loops, &parts.assignments);
        if self.analysis.loops.iter().any(|it| stmt.range.contains_range(it.range) && it.kind != LoopKind::Do) {
            return Err("it holds an array assignment or FORALL".to_string());
        }
        let reports: Vec<&'a LoopReport> = self
            .analysis
            .loops
            .iter()
            .map(|it| &**it)
            .filter(|it| stmt.range.contains_range(it.range) && it.kind == LoopKind::Do)
            .collect();
        let first = reports.iter().find(|it| !it.accesses.is_empty()).ok_or("it touches no array")?;
        let home = first.home.as_ref().ok_or("it updates no distributed array")?;
        let dims = self
            .grid_dims(home.array)
            .ok_or("its home is not distributed in two dimensions (and it reads arrays that are)")?;
        // The loop over each distributed dimension of the home, and the home's offsets.
        let mut keys: Vec<String> = Vec::new();
        let mut offsets = [0; 2];
        for (k, dim) in dims.iter().enumerate() {
            match home.subscripts.get(*dim) {
                Some(SubscriptForm::Affine { index, coef: 1, offset }) => {
                    keys.push(first.nest[*index].key.clone());
                    offsets[k] = *offset;
                }
                _ => {
                    return Err(format!(
                        "the home's subscript along its distributed dimension {} is not `v+q` for a loop index v",
                        dim + 1
                    ))
                }
            }
        }
        if keys[0] == keys[1] {
            return Err("the home's distributed subscripts follow the same loop index".to_string());
        }
        let loop_of = |key: &str| -> Result<&'s Stmt, String> {
            let mut found = loops.iter().filter(
                |it| matches!(&it.kind, StmtKind::Do { control: Some(control), .. } if control.var.key() == key),
            );
            let first =
                found.next().ok_or("an index of the home's distributed subscripts is not a loop of this nest")?;
            if found.next().is_some() {
                return Err("two loops of the nest run over a distributed index".to_string());
            }
            Ok(*first)
        };
        let distributing = [loop_of(&keys[0])?, loop_of(&keys[1])?];
        for it in &distributing {
            if assignments.iter().any(|assignment| !it.range.contains_range(assignment.range)) {
                return Err("it assigns outside its distributing loops".to_string());
            }
            if parts.ifs.iter().any(|branch| !it.range.contains_range(branch.range)) {
                return Err("it branches outside its distributing loops".to_string());
            }
        }
        // The local bounds of an inner distributing loop are computed on a
        // line of their own before it; its bounds must not read distributed arrays.
        for it in loops {
            let StmtKind::Do { control: Some(control), .. } = &it.kind else { continue };
            let mut bounds = vec![control.lo.range, control.hi.range];
            bounds.extend(control.step.as_ref().map(|step| step.range));
            if bounds.iter().any(|range| !self.distributed_occurrences(*range).is_empty()) {
                return Err("the bounds of a loop of the nest read distributed arrays".to_string());
            }
        }
        for it in &distributing {
            let line_start = self.text[..it.range.start].rfind('\n').map_or(0, |at| at + 1);
            let before = &self.text[line_start..it.range.start];
            if !std::ptr::eq(*it, stmt) && !before.chars().all(|ch| ch.is_ascii_digit() || ch.is_whitespace()) {
                return Err("a distributing loop does not begin its line".to_string());
            }
        }
        let mut steps = [0; 2];
        for (k, it) in distributing.iter().enumerate() {
            let report = reports.iter().find(|report| report.range == it.range).ok_or("the loop was not analysed")?;
            steps[k] =
                report.nest.last().and_then(|own| own.step).ok_or("a distributing loop's step is not a constant")?;
        }
        let model = &self.analysis.model;
        let home_distributed = self.distributed[&home.array].clone();
        let mut reads: Reads = BTreeMap::new();
        // Where the nest writes each array (`X(v+c, w+d)`: (c, d)).
        let distance_of = |report: &LoopReport, access: &analysis::loops::Access| -> Option<[i64; 2]> {
            let mut distance = [0; 2];
            for k in 0..2 {
                match access.subscripts.get(dims[k]) {
                    Some(SubscriptForm::Affine { index, coef: 1, offset }) if report.nest[*index].key == keys[k] => {
                        distance[k] = *offset;
                    }
                    _ => return None,
                }
            }
            Some(distance)
        };
        let written: Vec<(SymbolId, [i64; 2])> = reports
            .iter()
            .flat_map(|report| report.accesses.iter().map(move |access| (report, access)))
            .filter(|(_, access)| access.attr == AccessAttr::Update)
            .filter_map(|(report, access)| Some((access.array, distance_of(report, access)?)))
            .collect();
        // INDEPENDENT on both distributing loops (or the old form naming
        // both indices on the outer one): no iteration reads what another writes.
        let independent = {
            let [outer, inner] = if distributing[0].range.contains_range(distributing[1].range) {
                distributing
            } else {
                [distributing[1], distributing[0]]
            };
            let names_both = |it: &syntax::directive::Independent| {
                it.indices
                    .as_ref()
                    .is_some_and(|names| keys.iter().all(|key| names.iter().any(|name| name.key() == *key)))
            };
            match (self.independent(outer), self.independent(inner)) {
                (Some(first), _) if names_both(first) => true,
                (Some(_), Some(_)) => true,
                _ => false,
            }
        };
        // Whether a read at distance `read` from the home element may reach
        // an element the nest writes at distance `write` in another
        // iteration. Loop k visits one lattice `lo + step*t` (its lower bound
        // names no index of the nest, or only the outer loop's when that one
        // is INDEPENDENT and the two iterations share it): distances apart by
        // other than a multiple of its step never meet (red-black sweeps).
        let outer = usize::from(!distributing[0].range.contains_range(distributing[1].range));
        let inner = 1 - outer;
        let outer_independent = self.independent(distributing[outer]).is_some();
        let nest_keys = crate::do_variables(loops);
        let lower_bound_names = |k: usize, keys: &[String]| match &distributing[k].kind {
            StmtKind::Do { control: Some(control), .. } => crate::mentions(&control.lo, keys),
            _ => true,
        };
        let other_keys: Vec<String> = nest_keys.iter().filter(|it| **it != keys[outer]).cloned().collect();
        let lattice_fixed = [!lower_bound_names(0, &nest_keys), !lower_bound_names(1, &nest_keys)];
        let lattice_fixed_per_outer = !lower_bound_names(inner, &other_keys);
        let apart = |k: usize, read: [i64; 2], write: [i64; 2]| (read[k] - write[k]).rem_euclid(steps[k].abs()) != 0;
        let may_meet = |read: [i64; 2], write: [i64; 2]| {
            if outer_independent {
                // Only iterations of one outer iteration: the same outer coordinate.
                read[outer] == write[outer] && !(lattice_fixed_per_outer && apart(inner, read, write))
            } else {
                !(0..2).any(|k| lattice_fixed[k] && apart(k, read, write))
            }
        };
        let home_cell = {
            let home_offsets = self.grid_offsets(home.array);
            [home_offsets[0] + offsets[0], home_offsets[1] + offsets[1]]
        };
        for report in &reports {
            for access in &report.accesses {
                let symbol = model.symbol(access.array);
                if !self.cut_like_home(access, &home_distributed)? {
                    continue;
                }
                let mut distance = [0; 2];
                for k in 0..2 {
                    distance[k] = match access.subscripts.get(dims[k]) {
                        Some(SubscriptForm::Affine { index, coef: 1, offset })
                            if report.nest[*index].key == keys[k] =>
                        {
                            *offset
                        }
                        _ => {
                            return Err(format!(
                                "the subscript of {} along its distributed dimension {} is not `{}+c`",
                                symbol.name.text,
                                dims[k] + 1,
                                keys[k]
                            ))
                        }
                    };
                }
                match access.attr {
                    AccessAttr::Update => {
                        // Another array of the same blocks written on the home
                        // element's template cell: the same process writes it.
                        let array_offsets = self.grid_offsets(access.array);
                        let cell = [array_offsets[0] + distance[0], array_offsets[1] + distance[1]];
                        let same_cell = if self.distributed[&access.array].plain && home_distributed.plain {
                            cell == home_cell
                        } else {
                            access.array == home.array && distance == offsets
                        };
                        if !same_cell {
                            return Err(format!(
                                "it updates {} at other template cells than its home's",
                                symbol.name.text
                            ));
                        }
                    }
                    AccessAttr::Reference => {
                        // What another process writes during the loop cannot be fetched before it.
                        let written_elsewhere = !independent
                            && written.iter().any(|(array, at)| {
                                *array == access.array && *at != distance && may_meet(distance, *at)
                            });
                        if written_elsewhere {
                            let what = if access.array == home.array { "its home " } else { "" };
                            return Err(format!(
                                "it reads {what}{} at other elements than it writes (a dependence may cross processes)",
                                symbol.name.text
                            ));
                        }
                        add_read(&mut reads, access.array, distance);
                    }
                }
            }
        }
        if self.grid_cyclic(home.array) {
            return self.cyclic_grid_nest(stmt, home.array, distributing, steps, offsets, &reads);
        }
        self.grow_grid_shadows(home.array, offsets, &reads);
        Ok(Plan::Grid(GridPlan::Nest { stmt, home: home.array, loops: distributing, steps, offsets, reads }))
    }

    /// Widens the shadow areas of the arrays read at distances from the home
    /// element `H(v + offsets)`: by their template distances, per dimension.
    fn grow_grid_shadows(&mut self, home: SymbolId, offsets: [i64; 2], reads: &Reads) {
        let home_offsets = self.grid_offsets(home);
        for (array, distances) in reads {
            let ranges = ranges(distances);
            let array_offsets = self.grid_offsets(*array);
            let distributed = self.distributed.get_mut(array).expect("a distributed array");
            let widths: Vec<(i64, i64)> = (0..2)
                .map(|k| {
                    let home_shift = home_offsets[k] + offsets[k];
                    (home_shift - (ranges[k].0 + array_offsets[k]), (ranges[k].1 + array_offsets[k]) - home_shift)
                })
                .collect();
            distributed.shadow_low = distributed.shadow_low.max(widths[0].0).max(0);
            distributed.shadow_high = distributed.shadow_high.max(widths[0].1).max(0);
            let second = distributed.second.as_mut().expect("a grid array");
            second.shadow_low = second.shadow_low.max(widths[1].0).max(0);
            second.shadow_high = second.shadow_high.max(widths[1].1).max(0);
        }
    }

    /// The parallel form of a statement (not a DO loop) on arrays
    /// distributed in two dimensions, or why it has none.
    pub(crate) fn grid_statement<'s>(&mut self, stmt: &'s Stmt) -> Result<Plan<'s>, String>
    where
        'a: 's,
    {
        let (lhs, rhs) = match &stmt.kind {
            StmtKind::Forall { .. } => return self.grid_forall(stmt),
            StmtKind::Where { .. } => return self.grid_where(stmt),
            StmtKind::Assign { lhs, rhs } => (lhs, rhs),
            _ => return Err("statements other than assignments, WHERE and FORALLs on arrays distributed in two dimensions run on rank 0 on gathered copies".to_string()),
        };
        let (name, args) = match &lhs.kind {
            ExprKind::Name(name) => (name, None),
            ExprKind::Ref { name, args } => (name, Some(args)),
            _ => return Err("its left side is not a variable".to_string()),
        };
        let home = self
            .lookup(&name.key())
            .filter(|id| self.grid_dims(*id).is_some())
            .ok_or_else(|| format!("it assigns {} from arrays distributed in two dimensions", name.text))?;
        let dims = self.grid_dims(home).expect("a grid array");
        let Some(args) = args else {
            // The whole array: from arrays laid out alike, on the box; else as a section.
            let mut edits = Vec::new();
            if self.whole_operands(home, rhs, &mut edits).is_ok() {
                edits.push((name.range, self.box_section(home)));
                return Ok(Plan::Grid(GridPlan::Whole { stmt, home, edits }));
            }
            return self.grid_section(stmt, home, None, rhs);
        };
        if args.len() != self.distributed[&home].lbs.len() {
            return Err(format!("the subscripts of {} are not one per dimension", name.text));
        }
        if args.iter().any(|it| !self.distributed_occurrences(it.range()).is_empty()) {
            return Err("a subscript of its left side reads a distributed array".to_string());
        }
        if dims.iter().all(|dim| matches!(args[*dim], Subscript::Expr(_))) {
            // One element along both distributed dimensions: its owner assigns it.
            if !self.distributed_occurrences(rhs.range).is_empty() {
                return Err("it assigns an element from distributed data".to_string());
            }
            let index = dims.map(|dim| args[dim].range());
            if self.grid_cyclic(home) {
                return self.cyclic_grid_owner(stmt, home, index);
            }
            return Ok(Plan::Grid(GridPlan::Owner { stmt, home, index }));
        }
        self.grid_section(stmt, home, Some(args), rhs)
    }

    /// A WHERE statement or construct whose assignments set whole arrays
    /// laid out alike, from masks and right sides elemental in such arrays
    /// and scalars: every element's mask and values are on its process, so
    /// each process runs the construct on its box.
    fn grid_where<'s>(&mut self, stmt: &'s Stmt) -> Result<Plan<'s>, String>
    where
        'a: 's,
    {
        let StmtKind::Where { mask, body, elsewhere } = &stmt.kind else {
            return Err("it is not a WHERE".to_string());
        };
        let assignments: Vec<&Stmt> = body.iter().chain(elsewhere.iter().flat_map(|it| &it.1)).collect();
        let masks: Vec<&Expr> = mask.iter().chain(elsewhere.iter().filter_map(|it| it.0.as_ref())).collect();
        let mut home = None;
        let mut edits = Vec::new();
        for assignment in &assignments {
            let StmtKind::Assign { lhs, rhs } = &assignment.kind else {
                return Err("its body holds more than assignments".to_string());
            };
            let ExprKind::Name(name) = &lhs.kind else {
                return Err("an assignment in it sets a part of an array (only whole arrays on a 2-D grid)".to_string());
            };
            let id = self
                .lookup(&name.key())
                .filter(|id| self.grid_dims(*id).is_some())
                .ok_or_else(|| format!("it assigns {}, which is not distributed in two dimensions", name.text))?;
            let home = *home.get_or_insert(id);
            // The left side laid out like the first one, as its operands are.
            self.whole_operands(home, lhs, &mut edits)?;
            self.whole_operands(home, rhs, &mut edits)?;
        }
        let home = home.ok_or("it assigns nothing")?;
        for mask in masks {
            self.whole_operands(home, mask, &mut edits)?;
        }
        Ok(Plan::Grid(GridPlan::Whole { stmt, home, edits }))
    }

    /// The section of a reference along one distributed dimension `dim`:
    /// its lower bound, text of both bounds, stride, and position among the
    /// section's dimensions; `None` for a scalar subscript.
    fn section_axis(
        &self,
        id: SymbolId,
        args: Option<&[Subscript]>,
        dim: usize,
    ) -> Result<Option<AxisSection>, String> {
        let distributed = &self.distributed[&id];
        let (lb, ub) = (&distributed.lbs[dim], &distributed.ubs[dim]);
        let Some(args) = args else {
            return Ok(Some((lb.linear(), lb.to_string(), ub.to_string(), Step::Constant(1), dim)));
        };
        if args.len() != distributed.lbs.len() {
            return Err(format!("the subscripts of {} are not one per dimension", distributed.name));
        }
        match &args[dim] {
            Subscript::Range { lo, hi, stride, .. } => {
                let lo_form = match lo {
                    Some(lo) => self.linear_of(lo).ok_or("a section bound is not affine")?,
                    None => lb.linear(),
                };
                let step = match stride {
                    Some(stride) => match self.constant_of(stride) {
                        Some(step) => Step::Constant(step),
                        // A run-time stride: its text, the same in every operand.
                        None if self.distributed_occurrences(stride.range).is_empty() => {
                            Step::Runtime(self.one_line(stride.range))
                        }
                        None => return Err("a section stride reads a distributed array".to_string()),
                    },
                    None => Step::Constant(1),
                };
                if step == Step::Constant(0) {
                    return Err("a section stride is zero".to_string());
                }
                let text = |it: &Option<Expr>, default: &crate::Bound| {
                    it.as_ref().map_or(default.to_string(), |it| self.one_line(it.range))
                };
                let position = args[..dim].iter().filter(|it| matches!(it, Subscript::Range { .. })).count();
                Ok(Some((lo_form, text(lo, lb), text(hi, ub), step, position)))
            }
            Subscript::Expr(_) => Ok(None),
            _ => Err(format!("a subscript of {} is not an expression or a section", distributed.name)),
        }
    }

    /// An array assignment to a section of a grid array whose distributed
    /// operands are sectioned like it (same strides, in the same positions,
    /// at constant distances): the owners assign their parts of the section
    /// after fetching what they read of other processes' elements. A scalar
    /// subscript of the left side along a distributed dimension leaves the
    /// work to the processes owning it (the right side then reads no
    /// distributed array).
    fn grid_section<'s>(
        &mut self,
        stmt: &'s Stmt,
        home: SymbolId,
        args: Option<&'s Vec<Subscript>>,
        rhs: &'s Expr,
    ) -> Result<Plan<'s>, String>
    where
        'a: 's,
    {
        if self.grid_cyclic(home) {
            return Err(format!(
                "{} is distributed CYCLIC, and only whole arrays laid out alike are assigned in parallel on such arrays",
                self.distributed[&home].name
            ));
        }
        let dims = self.grid_dims(home).expect("a grid array");
        let names = [("hpf_lo", "hpf_hi"), ("hpf_lo2", "hpf_hi2")];
        let mut axes: Vec<SectionAxis> = Vec::new();
        let mut lhs_sections = Vec::new();
        let mut edits: Vec<(TextRange, String)> = Vec::new();
        for (k, dim) in dims.iter().enumerate() {
            match self.section_axis(home, args.map(Vec::as_slice), *dim)? {
                Some((lo_form, lo, hi, step, position)) => {
                    let step = step.constant().ok_or("a section stride is not a constant")?;
                    axes.push(SectionAxis::Range { lo, hi, step });
                    lhs_sections.push(Frame::Range(lo_form, Step::Constant(step), position));
                    if let Some(args) = args {
                        edits.push((args[*dim].range(), format!("{}:{}:{step}", names[k].0, names[k].1)));
                    }
                }
                None => {
                    let subscript = &args.expect("a reference")[*dim];
                    axes.push(SectionAxis::Scalar(self.one_line(subscript.range())));
                    lhs_sections.push(Frame::Scalar(subscript.as_expr().and_then(|it| self.linear_of(it))));
                }
            }
        }
        if args.is_none() {
            let name_range = match &stmt.kind {
                StmtKind::Assign { lhs, .. } => lhs.range,
                _ => unreachable!(),
            };
            edits.push((name_range, self.local_reference(home, [0, 0], &[1, 1])));
        }
        let mut reads: Reads = BTreeMap::new();
        self.section_operands(home, &lhs_sections, rhs, &mut edits, &mut reads)?;
        self.grow_grid_shadows(home, [0, 0], &reads);
        let axes = [axes[0].clone(), axes[1].clone()];
        Ok(Plan::Grid(GridPlan::Section { stmt, home, axes, reads, edits }))
    }

    /// The local parts of the arguments of a reduction on arrays distributed
    /// in two dimensions: elemental expressions of sections cut like the
    /// first one's, at constant distances from it.
    pub(crate) fn grid_reduction(&mut self, values: &[&Expr]) -> Result<GridSection, String> {
        let mut first = None;
        for value in values {
            for (range, id) in self.distributed_occurrences(value.range) {
                if self.grid_dims(id).is_none() {
                    return Err(format!(
                        "{} and arrays distributed in two dimensions are distributed differently",
                        self.distributed[&id].name
                    ));
                }
                if first.is_none() {
                    first = Some((id, crate::assign::find_reference(value, range)));
                }
            }
        }
        let (home, args) = first.ok_or("it reduces no distributed array")?;
        if self.grid_cyclic(home) {
            return self.cyclic_grid_reduction(home, values);
        }
        let dims = self.grid_dims(home).expect("a grid array");
        let mut frame = Vec::new();
        let mut axes = Vec::new();
        for dim in dims {
            let Some((lo_form, lo, hi, step, position)) = self.section_axis(home, args, dim)? else {
                // One element along this dimension (`SUM(G(1:N, K))`): the
                // section `K:K` there, of one element on its owner, none elsewhere
                // (the extra dimension of length one changes no value but
                // DOT_PRODUCT's, whose arguments are of rank one).
                let index = args.and_then(|args| args[dim].as_expr());
                let linear = index.and_then(|it| self.linear_of(it));
                let (Some(index), Some(linear), [_]) = (index, linear, values) else {
                    return Err(format!(
                        "it reduces {} at one element along a distributed dimension",
                        self.distributed[&home].name
                    ));
                };
                let text = self.one_line(index.range);
                frame.push(Frame::Point(linear));
                axes.push((text.clone(), text, Step::Constant(1)));
                continue;
            };
            frame.push(Frame::Range(lo_form, step.clone(), position));
            axes.push((lo, hi, step));
        }
        let mut edits = Vec::new();
        let mut reads: Reads = BTreeMap::new();
        for value in values {
            self.section_operands(home, &frame, value, &mut edits, &mut reads)?;
        }
        self.grow_grid_shadows(home, [0, 0], &reads);
        Ok(GridSection { home, axes: [axes[0].clone(), axes[1].clone()], reads, edits, boxed: false })
    }

    /// The local bounds of a reduction's sections and the fetches it needs.
    pub(crate) fn emit_grid_section_bounds(&self, out: &mut String, section: &GridSection) {
        let name = &self.distributed[&section.home].name;
        if section.boxed {
            let variant = self.distributed[&section.home].variant();
            let _ = writeln!(out, "  call hpf_box_{variant}(hpf_d_{name}, hpf_rank, hpf_bl, hpf_bh)");
            return;
        }
        let names = [("hpf_lo", "hpf_hi"), ("hpf_lo2", "hpf_hi2")];
        for (k, (lo, hi, step)) in section.axes.iter().enumerate() {
            let _ = writeln!(
                out,
                "  call hpf_local_bounds(hpf_d_{name}({}), 0, ({lo}), ({hi}), {step}, {}, {})",
                k + 1,
                names[k].0,
                names[k].1
            );
        }
        // A run-time stride: the fetch covers the owned part, shifted.
        let spans = [0, 1].map(|k| section.axes[k].2.constant());
        self.emit_grid_fetches_in(out, section.home, [0, 0], &section.reads, &[None, None], spans);
    }

    /// `X(hpf_lo+(c1):hpf_hi+(c1):s1, ..., :)`: the local part of a whole
    /// grid array at distances `c` from the left side's section.
    fn local_reference(&self, id: SymbolId, distance: [i64; 2], steps: &[i64; 2]) -> String {
        let distributed = &self.distributed[&id];
        let dims = self.grid_dims(id).expect("a grid array");
        let subscripts: Vec<String> = (0..distributed.lbs.len())
            .map(|d| match dims.iter().position(|it| *it == d) {
                Some(k) => local_triplet(k, distance[k], &Step::Constant(steps[k])),
                None => ":".to_string(),
            })
            .collect();
        format!("{}({})", distributed.name, subscripts.join(","))
    }

    /// Checks the right side of a section assignment: elemental, its
    /// distributed operands sectioned like the left side; rewrites them to
    /// their local parts and records their distances.
    fn section_operands(
        &self,
        home: SymbolId,
        lhs: &[Frame],
        expr: &Expr,
        edits: &mut Vec<(TextRange, String)>,
        reads: &mut Reads,
    ) -> Result<(), String> {
        let model = &self.analysis.model;
        let operand = |id: SymbolId,
                       args: Option<&[Subscript]>,
                       edits: &mut Vec<(TextRange, String)>,
                       reads: &mut Reads|
         -> Result<[i64; 2], String> {
            let distributed = &self.distributed[&id];
            if !distributed.same_blocks(&self.distributed[&home]) {
                return Err(format!(
                    "{} and {} are distributed differently",
                    distributed.name, self.distributed[&home].name
                ));
            }
            if args.is_some_and(|args| args.len() != distributed.lbs.len()) {
                return Err(format!("the subscripts of {} are not one per dimension", distributed.name));
            }
            let dims = self.grid_dims(id).expect("a grid array");
            let mut distance = [0; 2];
            let mut steps = [Step::Constant(1), Step::Constant(1)];
            for k in 0..2 {
                let (lhs_lo, lhs_step, lhs_position) = match &lhs[k] {
                    Frame::Range(lo, step, position) => (lo, step, position),
                    Frame::Point(lhs_index) => {
                        // One element of a reduction's section: at a constant distance.
                        let index = args.and_then(|args| args[dims[k]].as_expr()).and_then(|it| self.linear_of(it));
                        match index {
                            Some(index) if lhs_index.coefs == index.coefs => {
                                distance[k] = index.constant - lhs_index.constant;
                                continue;
                            }
                            _ => {
                                return Err(format!(
                                    "{} is not read at a constant distance from the reduced element",
                                    distributed.name
                                ))
                            }
                        }
                    }
                    Frame::Scalar(lhs_index) => {
                        // One element along this dimension, at a constant distance from the left side's.
                        let index = args.and_then(|args| args[dims[k]].as_expr()).and_then(|it| self.linear_of(it));
                        match (lhs_index, index) {
                            (Some(lhs_index), Some(index)) if lhs_index.coefs == index.coefs => {
                                distance[k] = index.constant - lhs_index.constant;
                                continue;
                            }
                            _ => {
                                return Err(format!(
                                    "{} is not read at a constant distance from the left side's element",
                                    distributed.name
                                ))
                            }
                        }
                    }
                };
                let Some((lo, _, _, step, position)) = self.section_axis(id, args, dims[k])? else {
                    return Err(format!("it reads one element of {} along a distributed dimension", distributed.name));
                };
                if step != *lhs_step || position != *lhs_position {
                    return Err(format!("{} is not sectioned like the left side", distributed.name));
                }
                if lo.coefs != lhs_lo.coefs {
                    return Err(format!("{} is not at a constant distance from the left side", distributed.name));
                }
                distance[k] = lo.constant - lhs_lo.constant;
                steps[k] = step;
            }
            match args {
                None => {}
                Some(args) => {
                    if args.iter().any(|it| !self.distributed_occurrences(it.range()).is_empty()) {
                        return Err("a subscript reads a distributed array".to_string());
                    }
                    for k in 0..2 {
                        if matches!(lhs[k], Frame::Range(..) | Frame::Point(..)) {
                            edits.push((args[dims[k]].range(), local_triplet(k, distance[k], &steps[k])));
                        }
                    }
                }
            }
            add_read(reads, id, distance);
            Ok(distance)
        };
        match &expr.kind {
            ExprKind::Int(_) | ExprKind::Literal(_) => Ok(()),
            ExprKind::Unary { operand, .. } | ExprKind::Paren(operand) => {
                self.section_operands(home, lhs, operand, edits, reads)
            }
            ExprKind::Binary { lhs: left, rhs: right, .. } => {
                self.section_operands(home, lhs, left, edits, reads)?;
                self.section_operands(home, lhs, right, edits, reads)
            }
            ExprKind::Name(name) => {
                let Some(id) = self.lookup(&name.key()) else { return Ok(()) };
                if self.distributed.contains_key(&id) {
                    let mut steps = [1; 2];
                    for (k, it) in lhs.iter().enumerate() {
                        // (A run-time stride never lines up with a whole array.)
                        if let Frame::Range(_, step, _) = it {
                            steps[k] = step.constant().unwrap_or(1);
                        }
                    }
                    let distance = operand(id, None, edits, reads)?;
                    edits.push((name.range, self.local_reference(id, distance, &steps)));
                    return Ok(());
                }
                if model.symbol(id).is_array() {
                    return Err(format!("it reads the replicated array {} whole", name.text));
                }
                Ok(())
            }
            ExprKind::Ref { name, args } => {
                let known = self.lookup(&name.key());
                if let Some(id) = known.filter(|id| self.distributed.contains_key(id)) {
                    return operand(id, Some(args), edits, reads).map(|_| ());
                }
                if known.is_some_and(|id| model.symbol(id).is_array()) {
                    return self.replicated_element(name, args);
                }
                if !crate::assign::ELEMENTAL.contains(&name.key().as_str()) {
                    return Err(format!("it calls {}, which is not an elemental intrinsic", name.text));
                }
                for arg in args {
                    match arg {
                        Subscript::Expr(value) | Subscript::Keyword { value, .. } => {
                            self.section_operands(home, lhs, value, edits, reads)?
                        }
                        _ => return Err(format!("an argument of {} is not an expression", name.text)),
                    }
                }
                Ok(())
            }
            ExprKind::Other(_) => Err("its right side was not understood".to_string()),
        }
    }

    /// `H(hpf_bl(1):hpf_bh(1), ...)`: the local box of a grid array, whole along the other dimensions.
    fn box_section(&self, id: SymbolId) -> String {
        let distributed = &self.distributed[&id];
        let dims = self.grid_dims(id).expect("a grid array");
        let subscripts: Vec<String> = (0..distributed.lbs.len())
            .map(|d| match dims.iter().position(|it| *it == d) {
                Some(k) => format!("hpf_bl({}):hpf_bh({})", k + 1, k + 1),
                None => ":".to_string(),
            })
            .collect();
        format!("{}({})", distributed.name, subscripts.join(","))
    }

    /// Checks that the right side of a whole-array assignment to `home` is
    /// elemental in whole arrays cut like it (and scalars), and rewrites
    /// each of them to its local box.
    fn whole_operands(&self, home: SymbolId, expr: &Expr, edits: &mut Vec<(TextRange, String)>) -> Result<(), String> {
        let model = &self.analysis.model;
        match &expr.kind {
            ExprKind::Int(_) | ExprKind::Literal(_) => Ok(()),
            ExprKind::Unary { operand, .. } | ExprKind::Paren(operand) => self.whole_operands(home, operand, edits),
            ExprKind::Binary { lhs, rhs, .. } => {
                self.whole_operands(home, lhs, edits)?;
                self.whole_operands(home, rhs, edits)
            }
            ExprKind::Name(name) => {
                let Some(id) = self.lookup(&name.key()) else { return Ok(()) };
                let symbol = model.symbol(id);
                if let Some(distributed) = self.distributed.get(&id) {
                    let home_distributed = &self.distributed[&home];
                    if !distributed.same_blocks(home_distributed)
                        || self.grid_offsets(id) != self.grid_offsets(home)
                        || distributed.lbs != home_distributed.lbs
                        || distributed.ubs != home_distributed.ubs
                    {
                        return Err(format!("{} is not laid out like {}", distributed.name, home_distributed.name));
                    }
                    edits.push((name.range, self.box_section(id)));
                    return Ok(());
                }
                if symbol.is_array() {
                    return Err(format!("it reads the replicated array {} whole", symbol.name.text));
                }
                Ok(())
            }
            ExprKind::Ref { name, args } => {
                let known = self.lookup(&name.key());
                let is_array = known.is_some_and(|id| model.symbol(id).is_array());
                if known.is_some_and(|id| self.distributed.contains_key(&id)) {
                    return Err(format!("it reads a part of {}", name.text));
                }
                if is_array {
                    return self.replicated_element(name, args);
                }
                if !crate::assign::ELEMENTAL.contains(&name.key().as_str()) {
                    return Err(format!("it calls {}, which is not an elemental intrinsic", name.text));
                }
                for arg in args {
                    match arg {
                        Subscript::Expr(value) | Subscript::Keyword { value, .. } => {
                            self.whole_operands(home, value, edits)?
                        }
                        _ => return Err(format!("an argument of {} is not an expression", name.text)),
                    }
                }
                Ok(())
            }
            ExprKind::Other(_) => Err("its right side was not understood".to_string()),
        }
    }

    /// The owner-computes form of a FORALL on arrays distributed in two
    /// dimensions: its assignments update one home at `H(i+p, j+q)` for two
    /// of its indices and read arrays of the same blocks at `X(i+c, j+d)`.
    fn grid_forall<'s>(&mut self, stmt: &'s Stmt) -> Result<Plan<'s>, String>
    where
        'a: 's,
    {
        let StmtKind::Forall { specs, mask, body } = &stmt.kind else {
            return Err("it is not a FORALL".to_string());
        };
        let mut home: Option<(SymbolId, [usize; 2], [i64; 2])> = None;
        let mut exprs: Vec<&Expr> = mask.iter().collect();
        for assignment in body {
            let StmtKind::Assign { lhs, rhs } = &assignment.kind else {
                return Err("its body holds more than assignments".to_string());
            };
            let ExprKind::Ref { name, args } = &lhs.kind else {
                return Err("it assigns a whole variable".to_string());
            };
            let id = self.lookup(&name.key());
            let Some(id) = id.filter(|id| self.grid_dims(*id).is_some()) else {
                return Err(format!("it assigns {}, which is not distributed in two dimensions", name.text));
            };
            let dims = self.grid_dims(id).expect("a grid array");
            if args.len() != self.distributed[&id].lbs.len() || args.iter().any(|it| !matches!(it, Subscript::Expr(_)))
            {
                return Err(format!("it assigns a section of {}", name.text));
            }
            if args.iter().any(|it| !self.distributed_occurrences(it.range()).is_empty()) {
                return Err("a subscript of a left side reads a distributed array".to_string());
            }
            let mut spec_of = [0; 2];
            let mut offsets = [0; 2];
            for k in 0..2 {
                let Subscript::Expr(subscript) = &args[dims[k]] else { unreachable!() };
                let form = self.linear_of(subscript).ok_or("the home's distributed subscript is not affine")?;
                let (spec_idx, q) = specs
                    .iter()
                    .enumerate()
                    .find_map(|(idx, spec)| {
                        (form.coefs.len() == 1 && form.coefs.get(&spec.var.key()) == Some(&1))
                            .then_some((idx, form.constant))
                    })
                    .ok_or("a distributed subscript of the home is not `i+q` for an index i of the FORALL")?;
                spec_of[k] = spec_idx;
                offsets[k] = q;
            }
            if spec_of[0] == spec_of[1] {
                return Err("the home's distributed subscripts follow the same index".to_string());
            }
            match home {
                None => home = Some((id, spec_of, offsets)),
                Some(it) if it == (id, spec_of, offsets) => {}
                Some(_) => return Err("its assignments update different homes".to_string()),
            }
            exprs.push(rhs);
        }
        let (home, spec_of, offsets) = home.ok_or("it assigns nothing")?;
        let mut steps = [0; 2];
        for k in 0..2 {
            let spec = &specs[spec_of[k]];
            steps[k] = match &spec.step {
                Some(step) => self.constant_of(step).ok_or("its stride is not a constant")?,
                None => 1,
            };
            if steps[k] == 0 {
                return Err("its stride is zero".to_string());
            }
            let mut bounds = vec![&spec.lo, &spec.hi];
            bounds.extend(spec.step.as_ref());
            if bounds.iter().any(|it| !self.distributed_occurrences(it.range).is_empty()) {
                return Err("its bounds read distributed arrays".to_string());
            }
        }
        let index_keys = [specs[spec_of[0]].var.key(), specs[spec_of[1]].var.key()];
        let mut reads: Reads = BTreeMap::new();
        for expr in &exprs {
            self.grid_element_reads(expr, home, &index_keys, &mut reads)?;
        }
        // A later assignment would read what an earlier one wrote on another process.
        if body.len() > 1 && reads.get(&home).is_some_and(|it| it.iter().any(|distance| *distance != offsets)) {
            return Err("a later assignment of its body reads its home at other elements".to_string());
        }
        let specs = [&specs[spec_of[0]], &specs[spec_of[1]]];
        if self.grid_cyclic(home) {
            return self.cyclic_grid_forall(stmt, home, specs, steps, offsets, &reads);
        }
        self.grow_grid_shadows(home, offsets, &reads);
        Ok(Plan::Grid(GridPlan::Forall { stmt, home, specs, steps, offsets, reads }))
    }

    /// The reads of distributed arrays in `expr` at `X(i+c, j+d)` (i, j the
    /// FORALL indices along the distributed dimensions), or why not.
    fn grid_element_reads(
        &self,
        expr: &Expr,
        home: SymbolId,
        keys: &[String; 2],
        reads: &mut Reads,
    ) -> Result<(), String> {
        for (range, id) in self.distributed_occurrences(expr.range) {
            let distributed = &self.distributed[&id];
            let home_distributed = &self.distributed[&home];
            if !distributed.same_blocks(home_distributed) && !same_grid_axes(distributed, home_distributed) {
                return Err(format!("{} and {} are distributed differently", distributed.name, home_distributed.name));
            }
            let dims = self.grid_dims(id).expect("a grid array");
            let Some(args) = crate::assign::find_reference(expr, range) else {
                return Err(format!("it reads {} as a whole", distributed.name));
            };
            if args.len() != distributed.lbs.len() || args.iter().any(|it| !matches!(it, Subscript::Expr(_))) {
                return Err(format!("it reads a section of {}", distributed.name));
            }
            if args.iter().any(|it| !self.distributed_occurrences(it.range()).is_empty()) {
                return Err("a subscript reads a distributed array".to_string());
            }
            let mut distance = [0; 2];
            for k in 0..2 {
                let Subscript::Expr(subscript) = &args[dims[k]] else { unreachable!() };
                let form = self.linear_of(subscript).ok_or("a distributed subscript is not affine")?;
                if form.coefs.len() != 1 || form.coefs.get(&keys[k]) != Some(&1) {
                    return Err(format!("{} is not read at a constant distance from the left side", distributed.name));
                }
                distance[k] = form.constant;
            }
            add_read(reads, id, distance);
        }
        Ok(())
    }

    /// The distances at which a read of `array` lies on the home's own
    /// template cell, along each distributed dimension.
    fn aligned_distances(&self, home: SymbolId, offsets: [i64; 2], array: SymbolId) -> [i64; 2] {
        let home_offsets = self.grid_offsets(home);
        let array_offsets = self.grid_offsets(array);
        [0, 1].map(|k| home_offsets[k] + offsets[k] - array_offsets[k])
    }

    /// The fetches into the shadow areas before a nest or FORALL whose
    /// home element is `H(v + offsets)`: per array read off the home's
    /// template cells, the elements the iterations of this process's box
    /// read, from whichever processes own them. Reads that are off along
    /// one dimension only need two strips (the 4 neighbours' elements),
    /// reads off along both the whole box around (the corners too).
    /// Along a dimension where the left side is one element `e` (`scalars`),
    /// only its owners fetch, the elements at `e` plus the distances.
    /// Along a dimension k with `spans[k]` (the step), `hpf_lo`/`hpf_hi`
    /// (`hpf_lo2`/`hpf_hi2`) hold this process's iterations: it fetches only
    /// what those read, not what its whole box would.
    fn emit_grid_fetches_in(
        &self,
        out: &mut String,
        home: SymbolId,
        offsets: [i64; 2],
        reads: &Reads,
        scalars: &[Option<String>; 2],
        spans: [Option<i64>; 2],
    ) {
        let home_name = &self.distributed[&home].name;
        for (array, distances) in reads {
            let aligned = self.aligned_distances(home, offsets, *array);
            let off = |distance: &[i64; 2], k: usize| distance[k] != aligned[k];
            if !distances.iter().any(|it| off(it, 0) || off(it, 1)) {
                continue;
            }
            // One box per distance the iterations read at: the fetch moves
            // their union, each element once.
            let mut boxes: Vec<[(i64, i64); 2]> = distances
                .iter()
                .filter(|it| off(it, 0) || off(it, 1))
                .map(|it| [(it[0], it[0]), (it[1], it[1])])
                .collect();
            // Past MAX_FETCH_BOXES, the box around them all (every element of it).
            let strided = boxes.len() <= MAX_FETCH_BOXES;
            if !strided {
                boxes = vec![ranges(distances)];
            }
            let _ = writeln!(out, "  hpf_na = 0\n  hpf_ns = 1");
            for (b, range) in boxes.iter().enumerate() {
                for k in 0..2 {
                    if let Some(index) = &scalars[k] {
                        let _ = writeln!(
                            out,
                            "  hpf_nl({k1}, {b1}) = 1\n  hpf_nh({k1}, {b1}) = 0\n  if (hpf_owns(hpf_d_{home_name}({k1}), {index})) then\n    hpf_nl({k1}, {b1}) = ({index}) + ({})\n    hpf_nh({k1}, {b1}) = ({index}) + ({})\n  end if",
                            range[k].0,
                            range[k].1,
                            k1 = k + 1,
                            b1 = b + 1
                        );
                        continue;
                    }
                    if let Some(step) = spans[k] {
                        let (lo, hi) = [("hpf_lo", "hpf_hi"), ("hpf_lo2", "hpf_hi2")][k];
                        let _ = writeln!(
                            out,
                            "  call hpf_need_span({lo}, {hi}, {step}, {}, {}, hpf_nl({k1}, {b1}), hpf_nh({k1}, {b1}))",
                            range[k].0,
                            range[k].1,
                            k1 = k + 1,
                            b1 = b + 1
                        );
                        // A strided loop reads every |step|-th element from its first iteration's on.
                        if strided && step.abs() > 1 {
                            let _ = writeln!(
                                out,
                                "  hpf_na({k1}, {b1}) = {lo} + ({})\n  hpf_ns({k1}, {b1}) = {}",
                                range[k].0,
                                step.abs(),
                                k1 = k + 1,
                                b1 = b + 1
                            );
                        }
                        continue;
                    }
                    let _ = writeln!(
                        out,
                        "  call hpf_need(hpf_d_{home_name}({k1}), {}, {}, {}, hpf_nl({k1}, {b1}), hpf_nh({k1}, {b1}))",
                        offsets[k],
                        range[k].0,
                        range[k].1,
                        k1 = k + 1,
                        b1 = b + 1
                    );
                }
            }
            let distributed = &self.distributed[array];
            let _ = writeln!(
                out,
                "  call hpf_fetch_{}({name}, hpf_d_{name}, hpf_nl(:, 1:{n}), hpf_nh(:, 1:{n}), hpf_na(:, 1:{n}), hpf_ns(:, 1:{n}))",
                distributed.variant(),
                name = distributed.name,
                n = boxes.len()
            );
        }
    }

    pub(crate) fn emit_grid(&self, out: &mut String, plan: &GridPlan) {
        match plan {
            GridPlan::Nest { stmt, home, loops, steps, offsets, reads } => {
                let home_name = &self.distributed[home].name;
                let _ = writeln!(out, "  ! hpf-ls: owner computes {} (on a 2-D grid)", self.slice(stmt.header).trim());
                // Loops whose bounds do not depend on the nest's indices: their
                // local bounds first, so the fetches take only what they read.
                let mut keys: Vec<String> = Vec::new();
                let mut stack = vec![*stmt];
                while let Some(it) = stack.pop() {
                    if let StmtKind::Do { control: Some(control), .. } = &it.kind {
                        keys.push(control.var.key());
                    }
                    stack.extend(it.children());
                }
                let mut spans = [None, None];
                for k in 0..2 {
                    let StmtKind::Do { control: Some(control), .. } = &loops[k].kind else { continue };
                    let mut bounds = vec![&control.lo, &control.hi];
                    bounds.extend(control.step.as_ref());
                    if bounds.iter().any(|it| crate::mentions(it, &keys)) {
                        continue;
                    }
                    let (lo_name, hi_name) = [("hpf_lo", "hpf_hi"), ("hpf_lo2", "hpf_hi2")][k];
                    let _ = writeln!(
                        out,
                        "  call hpf_local_bounds(hpf_d_{home_name}({}), {}, ({}), ({}), {}, {lo_name}, {hi_name})",
                        k + 1,
                        offsets[k],
                        self.one_line(control.lo.range),
                        self.one_line(control.hi.range),
                        steps[k]
                    );
                    spans[k] = Some(steps[k]);
                }
                self.emit_grid_fetches_in(out, *home, *offsets, reads, &[None, None], spans);
                let line_start = |range: TextRange| self.text[..range.start].rfind('\n').map_or(0, |it| it + 1);
                let nest_range = TextRange::new(self.copy_start(stmt.range.start), stmt.range.end);
                let mut edits: Vec<(TextRange, String)> = Vec::new();
                let names = [("hpf_lo", "hpf_hi"), ("hpf_lo2", "hpf_hi2")];
                for k in 0..2 {
                    let StmtKind::Do { control: Some(control), .. } = &loops[k].kind else { continue };
                    let (lo_name, hi_name) = names[k];
                    let step = steps[k];
                    // Before the loop (inside the loops around it: its bounds may depend on them).
                    let at = line_start(loops[k].range);
                    edits.push((
                        TextRange::new(at, at),
                        format!(
                            "call hpf_local_bounds(hpf_d_{home_name}({}), {}, ({}), ({}), {step}, {lo_name}, {hi_name})\n",
                            k + 1,
                            offsets[k],
                            self.one_line(control.lo.range),
                            self.one_line(control.hi.range)
                        ),
                    ));
                    let control_end = control.step.as_ref().map_or(control.hi.range.end, |it| it.range.end);
                    edits.push((
                        TextRange::new(control.lo.range.start, control_end),
                        format!("{lo_name}, {hi_name}, {step}"),
                    ));
                }
                let _ = writeln!(out, "{}", self.edited(nest_range, &edits));
                // The loop indices get the values they have after the
                // sequential nest: its loops run again, empty.
                let _ = writeln!(out, "  ! hpf-ls: the indices' final values");
                self.emit_skeleton(out, stmt, 1);
            }
            GridPlan::Forall { stmt, home, specs, steps, offsets, reads } => {
                let home_name = &self.distributed[home].name;
                let _ = writeln!(out, "  ! hpf-ls: owner computes {} (on a 2-D grid)", self.slice(stmt.header).trim());
                let names = [("hpf_lo", "hpf_hi"), ("hpf_lo2", "hpf_hi2")];
                let mut edits = Vec::new();
                for k in 0..2 {
                    let (lo_name, hi_name) = names[k];
                    let spec = specs[k];
                    let _ = writeln!(
                        out,
                        "  call hpf_local_bounds(hpf_d_{home_name}({}), {}, ({}), ({}), {}, {lo_name}, {hi_name})",
                        k + 1,
                        offsets[k],
                        self.one_line(spec.lo.range),
                        self.one_line(spec.hi.range),
                        steps[k]
                    );
                    let control_end = spec.step.as_ref().map_or(spec.hi.range.end, |it| it.range.end);
                    edits.push((
                        TextRange::new(spec.lo.range.start, control_end),
                        format!("{lo_name}:{hi_name}:{}", steps[k]),
                    ));
                }
                self.emit_grid_fetches_in(out, *home, *offsets, reads, &[None, None], steps.map(Some));
                let _ = writeln!(out, "{}", self.edited_statement(stmt, &edits));
            }
            GridPlan::Whole { stmt, home, edits } => {
                let distributed = &self.distributed[home];
                let _ = writeln!(out, "  ! hpf-ls: each process assigns its box");
                let _ = writeln!(
                    out,
                    "  call hpf_box_{}(hpf_d_{}, hpf_rank, hpf_bl, hpf_bh)",
                    distributed.variant(),
                    distributed.name
                );
                let _ = writeln!(out, "{}", self.edited_statement(stmt, edits));
            }
            GridPlan::Section { stmt, home, axes, reads, edits } => {
                let name = &self.distributed[home].name;
                let _ = writeln!(out, "  ! hpf-ls: the owners assign their part of the section");
                let names = [("hpf_lo", "hpf_hi"), ("hpf_lo2", "hpf_hi2")];
                let mut conditions = Vec::new();
                for (k, axis) in axes.iter().enumerate() {
                    match axis {
                        SectionAxis::Range { lo, hi, step } => {
                            let _ = writeln!(
                                out,
                                "  call hpf_local_bounds(hpf_d_{name}({}), 0, ({lo}), ({hi}), {step}, {}, {})",
                                k + 1,
                                names[k].0,
                                names[k].1
                            );
                        }
                        SectionAxis::Scalar(index) => {
                            conditions.push(format!("hpf_owns(hpf_d_{name}({}), {index})", k + 1))
                        }
                    }
                }
                let scalars = [0, 1].map(|k| match &axes[k] {
                    SectionAxis::Scalar(index) => Some(index.clone()),
                    SectionAxis::Range { .. } => None,
                });
                let spans = [0, 1].map(|k| match &axes[k] {
                    SectionAxis::Range { step, .. } => Some(*step),
                    SectionAxis::Scalar(_) => None,
                });
                self.emit_grid_fetches_in(out, *home, [0, 0], reads, &scalars, spans);
                if conditions.is_empty() {
                    let _ = writeln!(out, "{}", self.edited_statement(stmt, edits));
                } else {
                    let _ = writeln!(out, "  if ({}) then", conditions.join(" .and. "));
                    let _ = writeln!(out, "{}", self.edited_statement(stmt, edits));
                    let _ = writeln!(out, "  end if");
                }
            }
            GridPlan::Cyclic(plan) => self.emit_cyclic_grid(out, plan),
            GridPlan::Owner { stmt, home, index } => {
                let name = &self.distributed[home].name;
                let _ = writeln!(
                    out,
                    "  if (hpf_owns(hpf_d_{name}(1), {}) .and. hpf_owns(hpf_d_{name}(2), {})) then",
                    self.one_line(index[0]),
                    self.one_line(index[1])
                );
                let _ = writeln!(out, "{}", self.edited_statement(stmt, &[]));
                let _ = writeln!(out, "  end if");
            }
        }
    }

    /// The DO loops of a nest without their bodies.
    fn emit_skeleton(&self, out: &mut String, stmt: &Stmt, depth: usize) {
        let StmtKind::Do { control: Some(control), body, .. } = &stmt.kind else { return };
        let indent = "  ".repeat(depth);
        let step = control.step.as_ref().map_or(String::new(), |it| format!(", {}", self.one_line(it.range)));
        let _ = writeln!(
            out,
            "{indent}do {} = {}, {}{step}",
            control.var.text,
            self.one_line(control.lo.range),
            self.one_line(control.hi.range)
        );
        for inner in body {
            self.emit_skeleton(out, inner, depth + 1);
        }
        let _ = writeln!(out, "{indent}end do");
    }
}
