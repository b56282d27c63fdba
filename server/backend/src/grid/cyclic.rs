//! CYCLIC and CYCLIC(m) dimensions of arrays distributed in two dimensions
//! (one of them CYCLIC, or both, the other BLOCK or BLOCK(m)).
//!
//! Along a CYCLIC(m) dimension each process stores the blocks of `m` it
//! owns packed together, as in the 1-D case (`hpf_lx` maps an element to
//! its local position, `hpf_cyclic_owned` gives a coordinate's positions):
//! the box of a process (`hpf_box_*`) is then its owned elements along a
//! BLOCK dimension and its local positions along a CYCLIC one, which is how
//! it is allocated, gathered (each element put back at its global index by
//! vector subscripts) and scattered.
//!
//! What runs in parallel on them: the forms of `grid.rs` that need no other
//! process's data, that is whose distributed references all lie on the
//! home's template cell (a neighbour along a CYCLIC dimension is another
//! process), with every subscript `e` along a CYCLIC dimension rewritten to
//! `hpf_lx(d, e)`:
//! - DO nests whose home follows two loops of the nest: a distributing loop
//!   along a CYCLIC dimension runs course by course (one block of `m` of
//!   the process's cells per course, in the loop's order), one along a
//!   BLOCK dimension over its local bounds;
//! - FORALLs of the same form, one FORALL per course;
//! - element assignments from replicated data (their owner);
//! - whole-array assignments of arrays laid out alike and reductions of
//!   whole arrays laid out alike (on each process's box, `grid.rs`), and
//!   single elements in output statements and scalar assignments.
//!
//! Everything else (sections, reads at other cells, floating-point sums)
//! runs on rank 0 on gathered copies.

use std::fmt::Write;

use analysis::model::SymbolId;
use syntax::{Expr, LoopControl, Stmt, StmtKind, Subscript, TextRange};

use super::{GridPlan, GridSection, Reads};
use crate::{Lowering, Plan};

/// Work on arrays with a CYCLIC dimension on a 2-D grid that runs in parallel.
pub(crate) enum CyclicPlan<'a> {
    /// A DO nest: `loops[k]` distributes along the home's k-th distributed
    /// dimension, whose subscript is `v + offsets[k]` for its index `v`.
    Nest {
        stmt: &'a Stmt,
        home: SymbolId,
        loops: [&'a Stmt; 2],
        steps: [i64; 2],
        offsets: [i64; 2],
        edits: Vec<(TextRange, String)>,
    },
    /// A FORALL: `specs[k]` indexes the home's k-th distributed dimension.
    Forall {
        stmt: &'a Stmt,
        home: SymbolId,
        specs: [&'a LoopControl; 2],
        steps: [i64; 2],
        offsets: [i64; 2],
        edits: Vec<(TextRange, String)>,
    },
    /// An element assignment from replicated data, by its owner.
    Owner { stmt: &'a Stmt, home: SymbolId, index: [TextRange; 2], edits: Vec<(TextRange, String)> },
}

/// The assignments' sides and the masks of a statement, at any depth.
fn statement_exprs<'s>(stmt: &'s Stmt, out: &mut Vec<&'s Expr>) {
    match &stmt.kind {
        StmtKind::Assign { lhs, rhs } => {
            out.push(lhs);
            out.push(rhs);
        }
        StmtKind::Forall { mask, body, .. } => {
            out.extend(mask.iter());
            for it in body {
                statement_exprs(it, out);
            }
        }
        StmtKind::Do { body, .. } => {
            for it in body {
                statement_exprs(it, out);
            }
        }
        StmtKind::If { branches } => {
            for (cond, body) in branches {
                out.extend(cond.iter());
                for it in body {
                    statement_exprs(it, out);
                }
            }
        }
        // CYCLE and CONTINUE: the condition of a logical IF that cycles.
        StmtKind::Other { exprs, .. } => out.extend(exprs.iter()),
        _ => {}
    }
}

/// The name of the course counter along the k-th distributed dimension.
fn course(k: usize) -> &'static str {
    ["hpf_c", "hpf_c2"][k]
}

impl<'a> Lowering<'a> {
    /// Whether an array distributed in two dimensions is CYCLIC along one of them.
    pub(crate) fn grid_cyclic(&self, id: SymbolId) -> bool {
        let distributed = &self.distributed[&id];
        distributed.second.as_ref().is_some_and(|second| distributed.cyclic || second.cyclic)
    }

    /// Whether each distributed dimension of a grid array is CYCLIC.
    fn cyclic_axes(&self, id: SymbolId) -> [bool; 2] {
        let distributed = &self.distributed[&id];
        [distributed.cyclic, distributed.second.as_ref().is_some_and(|it| it.cyclic)]
    }

    /// The rewrites of the subscripts along CYCLIC dimensions of every
    /// reference inside `range` to an array distributed in two dimensions
    /// (found among `exprs`) to local positions, or why a reference is not
    /// one element along them.
    fn cyclic_local_edits(&self, range: TextRange, exprs: &[&Expr]) -> Result<Vec<(TextRange, String)>, String> {
        let mut edits = Vec::new();
        for (name_range, id) in self.distributed_occurrences(range) {
            if self.grid_dims(id).is_none() {
                continue;
            }
            let distributed = &self.distributed[&id];
            let name = &distributed.name;
            let args = exprs
                .iter()
                .find_map(|it| crate::assign::find_reference(it, name_range))
                .filter(|it| it.len() == distributed.lbs.len())
                .ok_or_else(|| format!("it names {name} other than as one element"))?;
            let dims = self.grid_dims(id).expect("a grid array");
            for (k, cyclic) in self.cyclic_axes(id).into_iter().enumerate() {
                if !cyclic {
                    continue;
                }
                match &args[dims[k]] {
                    Subscript::Expr(value) => edits.push((
                        value.range,
                        format!("hpf_lx(hpf_d_{name}({}), {})", k + 1, self.one_line(value.range)),
                    )),
                    _ => return Err(format!("it reads a section of {name} along a CYCLIC dimension")),
                }
            }
        }
        Ok(edits)
    }

    /// Refuses reads off the home's template cell (on another process along
    /// a CYCLIC dimension).
    fn cyclic_reads_on_home(&self, home: SymbolId, offsets: [i64; 2], reads: &Reads) -> Result<(), String> {
        for (array, distances) in reads {
            let aligned = self.aligned_distances(home, offsets, *array);
            if distances.iter().any(|it| *it != aligned) {
                return Err(format!(
                    "it reads {} at other elements than its home's (on a CYCLIC distribution they live on other processes)",
                    self.distributed[array].name
                ));
            }
        }
        Ok(())
    }

    /// The course-by-course form of a DO nest whose home has a CYCLIC
    /// dimension (checked by `grid_nest` like a BLOCK one), or why it has none.
    pub(super) fn cyclic_grid_nest<'s>(
        &self,
        stmt: &'s Stmt,
        home: SymbolId,
        loops: [&'s Stmt; 2],
        steps: [i64; 2],
        offsets: [i64; 2],
        reads: &Reads,
    ) -> Result<Plan<'s>, String> {
        self.cyclic_reads_on_home(home, offsets, reads)?;
        // A course loop closes after its distributing loop: that loop must
        // not share its last statement (`DO 10 ... 10 CONTINUE`) with another.
        let mut all_loops = Vec::new();
        let mut stack = vec![stmt];
        while let Some(current) = stack.pop() {
            if let StmtKind::Do { body, .. } = &current.kind {
                all_loops.push(current);
                stack.extend(body.iter());
            }
        }
        for (k, cyclic) in self.cyclic_axes(home).into_iter().enumerate() {
            if cyclic && all_loops.iter().any(|it| !std::ptr::eq(*it, loops[k]) && it.range.end == loops[k].range.end) {
                return Err("its loop over a CYCLIC dimension shares its last statement with another loop".to_string());
            }
        }
        let mut exprs = Vec::new();
        statement_exprs(stmt, &mut exprs);
        let edits = self.cyclic_local_edits(stmt.range, &exprs)?;
        Ok(Plan::Grid(GridPlan::Cyclic(CyclicPlan::Nest { stmt, home, loops, steps, offsets, edits })))
    }

    /// The course-by-course form of a FORALL whose home has a CYCLIC dimension.
    pub(super) fn cyclic_grid_forall<'s>(
        &self,
        stmt: &'s Stmt,
        home: SymbolId,
        specs: [&'s LoopControl; 2],
        steps: [i64; 2],
        offsets: [i64; 2],
        reads: &Reads,
    ) -> Result<Plan<'s>, String> {
        self.cyclic_reads_on_home(home, offsets, reads)?;
        let mut exprs = Vec::new();
        statement_exprs(stmt, &mut exprs);
        let edits = self.cyclic_local_edits(stmt.range, &exprs)?;
        Ok(Plan::Grid(GridPlan::Cyclic(CyclicPlan::Forall { stmt, home, specs, steps, offsets, edits })))
    }

    /// An element assignment from replicated data to an array with a CYCLIC dimension.
    pub(super) fn cyclic_grid_owner<'s>(
        &self,
        stmt: &'s Stmt,
        home: SymbolId,
        index: [TextRange; 2],
    ) -> Result<Plan<'s>, String> {
        let mut exprs = Vec::new();
        statement_exprs(stmt, &mut exprs);
        let edits = self.cyclic_local_edits(stmt.range, &exprs)?;
        Ok(Plan::Grid(GridPlan::Cyclic(CyclicPlan::Owner { stmt, home, index, edits })))
    }

    /// A reduction of whole arrays laid out like the first one, which has a
    /// CYCLIC dimension: each process reduces its box.
    pub(super) fn cyclic_grid_reduction(&self, home: SymbolId, values: &[&Expr]) -> Result<GridSection, String> {
        let mut edits = Vec::new();
        for value in values {
            self.whole_operands(home, value, &mut edits).map_err(|why| {
                format!("{why} (on a CYCLIC distribution in two dimensions, only whole arrays are reduced in parallel)")
            })?;
        }
        Ok(GridSection { home, axes: Default::default(), reads: Reads::new(), edits, boxed: true })
    }

    /// The subscripts of one element of a grid array (`reference`, whose
    /// subscripts read no distributed array) along its CYCLIC dimensions
    /// rewritten to local positions.
    pub(crate) fn cyclic_element_edits(&self, reference: &Expr) -> Result<Vec<(TextRange, String)>, String> {
        self.cyclic_local_edits(reference.range, &[reference])
    }

    pub(super) fn emit_cyclic_grid(&self, out: &mut String, plan: &CyclicPlan) {
        let names = [("hpf_lo", "hpf_hi"), ("hpf_lo2", "hpf_hi2")];
        match plan {
            CyclicPlan::Nest { stmt, home, loops, steps, offsets, edits } => {
                let home_name = &self.distributed[home].name;
                let cyclic = self.cyclic_axes(*home);
                let _ = writeln!(
                    out,
                    "  ! hpf-ls: owner computes {} (on a 2-D grid, CYCLIC dimensions course by course)",
                    self.slice(stmt.header).trim()
                );
                let line_start = |range: TextRange| self.text[..range.start].rfind('\n').map_or(0, |it| it + 1);
                let nest_range = TextRange::new(line_start(stmt.range), stmt.range.end);
                let mut edits = edits.clone();
                for k in 0..2 {
                    let StmtKind::Do { control: Some(control), .. } = &loops[k].kind else { continue };
                    let (lo_name, hi_name) = names[k];
                    let step = steps[k];
                    let (lo, hi) = (self.one_line(control.lo.range), self.one_line(control.hi.range));
                    let desc = format!("hpf_d_{home_name}({})", k + 1);
                    let at = line_start(loops[k].range);
                    let before = if cyclic[k] {
                        let end = loops[k].range.end;
                        edits.push((TextRange::new(end, end), "\nend do".to_string()));
                        format!(
                            "do {c} = 0, hpf_courses({desc}) - 1\ncall hpf_course_bounds({desc}, {}, ({lo}), ({hi}), {step}, {c}, {lo_name}, {hi_name})\n",
                            offsets[k],
                            c = course(k)
                        )
                    } else {
                        format!(
                            "call hpf_local_bounds({desc}, {}, ({lo}), ({hi}), {step}, {lo_name}, {hi_name})\n",
                            offsets[k]
                        )
                    };
                    edits.push((TextRange::new(at, at), before));
                    let control_end = control.step.as_ref().map_or(control.hi.range.end, |it| it.range.end);
                    edits.push((
                        TextRange::new(control.lo.range.start, control_end),
                        format!("{lo_name}, {hi_name}, {step}"),
                    ));
                }
                let _ = writeln!(out, "{}", self.edited(nest_range, &edits));
                let _ = writeln!(out, "  ! hpf-ls: the indices' final values");
                self.emit_skeleton(out, stmt, 1);
            }
            CyclicPlan::Forall { stmt, home, specs, steps, offsets, edits } => {
                let home_name = &self.distributed[home].name;
                let cyclic = self.cyclic_axes(*home);
                let _ = writeln!(
                    out,
                    "  ! hpf-ls: owner computes {} (on a 2-D grid, CYCLIC dimensions course by course)",
                    self.slice(stmt.header).trim()
                );
                let mut edits = edits.clone();
                let mut opened = 0;
                for k in 0..2 {
                    let (lo_name, hi_name) = names[k];
                    let spec = specs[k];
                    let (lo, hi) = (self.one_line(spec.lo.range), self.one_line(spec.hi.range));
                    let desc = format!("hpf_d_{home_name}({})", k + 1);
                    let step = steps[k];
                    if cyclic[k] {
                        let c = course(k);
                        let _ = writeln!(out, "  do {c} = 0, hpf_courses({desc}) - 1");
                        let _ = writeln!(
                            out,
                            "  call hpf_course_bounds({desc}, {}, ({lo}), ({hi}), {step}, {c}, {lo_name}, {hi_name})",
                            offsets[k]
                        );
                        opened += 1;
                    } else {
                        let _ = writeln!(
                            out,
                            "  call hpf_local_bounds({desc}, {}, ({lo}), ({hi}), {step}, {lo_name}, {hi_name})",
                            offsets[k]
                        );
                    }
                    let control_end = spec.step.as_ref().map_or(spec.hi.range.end, |it| it.range.end);
                    edits.push((
                        TextRange::new(spec.lo.range.start, control_end),
                        format!("{lo_name}:{hi_name}:{step}"),
                    ));
                }
                let _ = writeln!(out, "{}", self.edited_statement(stmt, &edits));
                for _ in 0..opened {
                    let _ = writeln!(out, "  end do");
                }
            }
            CyclicPlan::Owner { stmt, home, index, edits } => {
                let name = &self.distributed[home].name;
                let _ = writeln!(
                    out,
                    "  if (hpf_owns(hpf_d_{name}(1), {}) .and. hpf_owns(hpf_d_{name}(2), {})) then",
                    self.one_line(index[0]),
                    self.one_line(index[1])
                );
                let _ = writeln!(out, "{}", self.edited_statement(stmt, edits));
                let _ = writeln!(out, "  end if");
            }
        }
    }
}
