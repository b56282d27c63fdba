//! Assignments to distributed arrays outside DO nests: array assignments
//! (`U(1:N) = UN(1:N)`, `A = B`, `A(2:N) = B(1:N-1) + C(2:N)`) and FORALLs
//! run by the owners of the left side's elements after neighbour fetches,
//! and element assignments (`U(0) = 100.0`, `X(N,J) = DP(N,J)`) run by the
//! element's owner.
//!
//! An array assignment qualifies when every distributed array it names is
//! cut in the same blocks as the left side along the same distributed
//! dimension, each is sectioned along that dimension with the left side's
//! stride, at a constant distance from the left side's section, and the
//! rest of the right side is elemental (operators, elemental intrinsics,
//! scalars). Each process assigns the part of the section it owns; the
//! statement keeps Fortran's semantics (the right side is evaluated before
//! the left side is assigned) because the neighbours' elements are fetched
//! before it and the local statement is itself an array assignment.
//!
//! On a CYCLIC or CYCLIC(m) left side the same forms run course by course
//! (one block of `m` template cells of each process per course): within a
//! course the process's elements of a section are one strided run of its
//! local positions, `hpf_lo:hpf_hi:step`. Every distributed read must then
//! lie on the left side's template cells (a shift on a CYCLIC distribution
//! is another process, not a neighbour): no course reads what another one
//! assigns, so splitting the statement by courses keeps its semantics.
//!
//! When the left side is one run of elements of a BLOCK array, a rank-1
//! array distributed differently (another distribution or template, a
//! reversed or strided alignment, another stride of the section) is read
//! through the inspector/executor instead (`remap.rs`): each process lists
//! the elements its part of the left side reads, one all-to-all of counts
//! and two of indices and values per array fill a buffer in that order, and
//! the local statement reads the buffer. The values are fetched before the
//! statement assigns anything, so it may read the array it writes. A CYCLIC
//! left side whose reads do not all lie on its template cells (then the
//! local form above applies) is assigned course by course from fetched
//! values: it fetches every array it reads but those of its own alignment
//! at the same elements.

use std::collections::BTreeMap;
use std::fmt::Write;

use analysis::eval::{ConstEnv, Linear};
use analysis::model::{Model, SymbolId, SymbolKind};
use syntax::{Expr, ExprKind, Stmt, StmtKind, Subscript, TextRange};

use crate::remap::FetchedRead;
use crate::{Lowering, Plan};

/// Elemental intrinsics an array expression may apply to sections.
pub(crate) const ELEMENTAL: &[&str] = &[
    "abs", "acos", "aimag", "aint", "anint", "asin", "atan", "atan2", "btest", "ceiling", "char", "conjg", "cos",
    "cosh", "dble", "dim", "dprod", "exp", "float", "floor", "iabs", "iand", "ibclr", "ibits", "ibset", "ieor", "ifix",
    "int", "ior", "ishft", "log", "log10", "logical", "max", "merge", "min", "mod", "modulo", "nint", "not", "real",
    "sign", "sin", "sinh", "sngl", "sqrt", "tan", "tanh", "dsqrt", "dexp", "dlog", "dsin", "dcos", "dabs", "amax1",
    "amin1", "max0", "min0", "dmax1", "dmin1",
];

/// An array assignment run by the owners of the left side's section.
pub(crate) struct SectionAssign<'a> {
    pub(crate) stmt: &'a Stmt,
    /// The left side's array.
    home: SymbolId,
    /// The left side's section along the distributed dimension, as Fortran text.
    lo: String,
    hi: String,
    step: i64,
    /// A run-time stride (a reduction's `X(K:N:K)`), as Fortran text; `step` is then 1.
    step_text: Option<String>,
    /// `lo` and `hi` in affine form (`n+1`, `2*m-1`; a part that is not
    /// affine, `n/2`, a term of its own), when they are.
    affine: Option<(Linear, Linear)>,
    /// Per distributed array read: the smallest and largest distance `c` of
    /// its element `i + c` from the left side's element `i`.
    reads: BTreeMap<SymbolId, (i64, i64)>,
    /// Text replacements in the statement: the distributed subscripts become
    /// the local part of the section.
    edits: Vec<(TextRange, String)>,
    /// Rewrite references to the element `hpf_i + c` instead of the local section.
    element: bool,
    /// Whether reads of 1-D arrays distributed differently may be fetched
    /// by the inspector/executor (`remote`) rather than refused.
    fetches: bool,
    /// References fetched before the statement (`remap.rs`).
    remote: Vec<FetchedRead>,
    /// The left side is CYCLIC: the section runs course by course (one block
    /// of the process's elements per course). Without `fetches`, every
    /// reference is at the home's local positions `hpf_lo:hpf_hi:step`
    /// (`emit_course_bounds`) and its reads all lie on the left side's
    /// template cells; with `fetches`, every distributed array it reads but
    /// those of its own alignment at the same elements is fetched
    /// (`emit_fetched_courses`).
    courses: bool,
}

impl SectionAssign<'_> {
    /// The stride along the distributed dimension, as Fortran text.
    pub(crate) fn step(&self) -> String {
        self.step_text.clone().unwrap_or_else(|| self.step.to_string())
    }

    /// The stride known at compile time (1 for a run-time one).
    pub(crate) fn constant_step(&self) -> i64 {
        self.step
    }

    /// Whether the stride is known only at run time.
    pub(crate) fn runtime_step(&self) -> bool {
        self.step_text.is_some()
    }

    pub(crate) fn home(&self) -> SymbolId {
        self.home
    }

    /// The first element of the section along the distributed dimension, as Fortran text.
    pub(crate) fn lo(&self) -> &str {
        &self.lo
    }

    /// The last element of the section along the distributed dimension, as Fortran text.
    pub(crate) fn hi(&self) -> &str {
        &self.hi
    }

    pub(crate) fn reads(&self) -> &BTreeMap<SymbolId, (i64, i64)> {
        &self.reads
    }

    pub(crate) fn edits(&self) -> &[(TextRange, String)] {
        &self.edits
    }

    pub(crate) fn courses(&self) -> bool {
        self.courses
    }

    /// Whether it reads elements of arrays distributed differently, fetched
    /// by the inspector/executor before it.
    pub(crate) fn fetches_remote(&self) -> bool {
        !self.remote.is_empty()
    }
}

pub(crate) struct Constants<'m> {
    pub(crate) model: &'m Model,
    pub(crate) unit: analysis::model::UnitId,
}

impl ConstEnv for Constants<'_> {
    fn constant(&self, key: &str) -> Option<i64> {
        match self.model.symbol(self.model.lookup(self.unit, key)?).kind {
            SymbolKind::Constant(value) => value,
            _ => None,
        }
    }

    fn number_of_processors(&self) -> Option<i64> {
        // Known only when the program runs.
        None
    }
}

/// The section of one reference along its distributed dimension.
struct DistributedSection {
    /// Where the section's subscript is (or, for a whole array, its name).
    range: TextRange,
    whole: bool,
    lo: Linear,
    step: i64,
    /// A run-time stride as Fortran text (`step` is then 1).
    step_text: Option<String>,
}

/// `a + sign * b` (`None` on overflow).
fn add_linear(a: &Linear, b: &Linear, sign: i64) -> Option<Linear> {
    let mut res = a.clone();
    for (key, coef) in &b.coefs {
        let entry = res.coefs.entry(key.clone()).or_insert(0);
        *entry = entry.checked_add(coef.checked_mul(sign)?)?;
    }
    res.constant = res.constant.checked_add(b.constant.checked_mul(sign)?)?;
    res.coefs.retain(|_, coef| *coef != 0);
    Some(res)
}

/// `lo:hi:step` of the local part, `c` elements away from the left side's
/// (or the element `hpf_i + c`).
fn local_section(c: i64, step: &str, element: bool) -> String {
    if element {
        if c == 0 {
            "hpf_i".to_string()
        } else {
            format!("hpf_i+({c})")
        }
    } else if c == 0 {
        format!("hpf_lo:hpf_hi:{step}")
    } else {
        format!("hpf_lo+({c}):hpf_hi+({c}):{step}")
    }
}

impl<'a> Lowering<'a> {
    pub(crate) fn linear_of(&self, expr: &Expr) -> Option<Linear> {
        let model = &self.analysis.model;
        let is_var = |key: &str| {
            !matches!(self.lookup(key).map(|id| &model.symbol(id).kind), Some(SymbolKind::Constant(Some(_))))
        };
        analysis::eval::linear(expr, &is_var, &Constants { model, unit: self.main }).ok()
    }

    pub(crate) fn constant_of(&self, expr: &Expr) -> Option<i64> {
        analysis::eval::eval_int(expr, &Constants { model: &self.analysis.model, unit: self.main }).ok()
    }

    /// The owner-computes form of an assignment to a distributed array, or
    /// why it has none.
    pub(crate) fn assignment<'s>(&mut self, stmt: &'s Stmt) -> Result<Plan<'s>, String>
    where
        'a: 's,
    {
        self.assignment_form(stmt, true)
    }

    /// `assignment`; on a CYCLIC left side, `local_courses` first tries the
    /// form that reads only the left side's cells (without it, the section
    /// is assigned from fetched values, as a WHERE construct that fetches
    /// anything needs for all its parts).
    fn assignment_form<'s>(&mut self, stmt: &'s Stmt, local_courses: bool) -> Result<Plan<'s>, String>
    where
        'a: 's,
    {
        let StmtKind::Assign { lhs, rhs } = &stmt.kind else {
            return Err("it is not an assignment".to_string());
        };
        let (name, args) = match &lhs.kind {
            ExprKind::Name(name) => (name, None),
            ExprKind::Ref { name, args } => (name, Some(args)),
            _ => return Err("its left side is not a variable".to_string()),
        };
        let Some(home) = self.lookup(&name.key()).filter(|id| self.distributed.contains_key(id)) else {
            return Err(format!("it assigns the replicated variable {} from distributed data", name.text));
        };
        let distributed = &self.distributed[&home];
        let dim = distributed.dim;
        if let Some(args) = args {
            if args.len() != distributed.lbs.len()
                || args.iter().any(|it| matches!(it, Subscript::Star(_) | Subscript::Keyword { .. }))
            {
                return Err(format!("the subscripts of {} are not one per dimension", name.text));
            }
            for (idx, arg) in args.iter().enumerate() {
                if idx != dim && !self.distributed_occurrences(arg.range()).is_empty() {
                    return Err("a subscript of its left side reads a distributed array".to_string());
                }
            }
            if let Subscript::Expr(index) = &args[dim] {
                // One element along the distributed dimension: its owner assigns it.
                if !self.distributed_occurrences(index.range).is_empty() {
                    return Err("the distributed subscript of its left side reads a distributed array".to_string());
                }
                let index_form = self.linear_of(index).ok_or("its distributed subscript is not affine")?;
                let mut reads = BTreeMap::new();
                // Elements of 1-D arrays distributed differently (`U(5) = R(7)`
                // for a reversed R) are fetched for the owner of a BLOCK element.
                let mut remote = Vec::new();
                let cyclic = distributed.cyclic;
                let fetches = distributed.second.is_none();
                let mut edits = Vec::new();
                if cyclic {
                    // Its owner reads its own elements at their local positions;
                    // an element on another cell lives on another process (no
                    // neighbour on a CYCLIC distribution): it is fetched.
                    for (range, id) in self.distributed_occurrences(rhs.range) {
                        let mut one = BTreeMap::new();
                        let local = (self.element_read(rhs, range, id, home, &index_form, &mut one).is_ok()
                            && one.iter().all(|(array, cells)| self.is_local(home, 0, *array, *cells)))
                            || self.lined_up_element(rhs, range, id, home, &index_form);
                        if local {
                            reads.extend(one);
                            continue;
                        }
                        let fetched = self.fetched_element(rhs, range, id).filter(|_| fetches);
                        remote.push(fetched.ok_or_else(|| {
                            format!(
                                "it reads {} at another element than the left side's (on a CYCLIC distribution it lives on another process)",
                                self.distributed[&id].name
                            )
                        })?);
                    }
                    if remote.iter().any(|it| {
                        remote.iter().any(|other| it.range.contains_range(other.range) && it.range != other.range)
                    }) {
                        return Err("a fetched element's subscript holds another".to_string());
                    }
                    // A fetched reference is replaced whole, its subscript included.
                    edits = self.cyclic_subscript_edits(stmt.range, &[lhs, rhs])?;
                    edits.retain(|(range, _)| !remote.iter().any(|it| it.range.contains_range(*range)));
                } else {
                    self.element_reads(rhs, home, &index_form, &mut reads, fetches.then_some(&mut remote))?;
                }
                // A constant element read far from the element
                // (`CU(1, N+1) = CU(M+1, 1)`, a periodic corner) would widen
                // the shadow areas to the distance: its owner sends the one
                // element instead. (In a loop, `U(I) = U(I-3)`, the shadow
                // serves every iteration.)
                let far =
                    index_form.coefs.is_empty() && reads.values().any(|(low, high)| low.abs().max(high.abs()) > 2);
                if far && remote.is_empty() && edits.is_empty() {
                    if let Ok(copy) = self.slice_assignment(stmt) {
                        return Ok(Plan::SliceCopy(copy));
                    }
                }
                self.grow_shadows(home, 0, &reads);
                return Ok(Plan::Owner { stmt, array: home, index: index.range, reads, edits, remote });
            }
        }
        let section = self.distributed_section(home, args.map(Vec::as_slice), name.range)?;
        if section.step_text.is_some() {
            return Err("a section stride is not a constant".to_string());
        }
        let lhs_position =
            args.map_or(dim, |args| args[..dim].iter().filter(|it| matches!(it, Subscript::Range { .. })).count());
        let step = section.step;
        let (lo, hi) = self.section_bounds(home, args.map(Vec::as_slice));
        let affine = self.affine_section_bounds(home, args.map(Vec::as_slice));
        // Reads of 1-D arrays distributed differently are fetched when the
        // left side is one run of elements (a rank-1 section), so that the
        // fetched values, in its order, conform with it.
        let ranges = args.map_or(distributed.lbs.len(), |args| {
            args.iter().filter(|it| matches!(it, Subscript::Range { .. })).count()
        });
        let fetches = ranges == 1 && distributed.second.is_none() && (!distributed.cyclic || distributed.plain);
        let courses = distributed.cyclic;
        let home_name = distributed.name.clone();
        let lhs_lo = section.lo.clone();
        if courses && local_courses {
            // First the local form: every read on the left side's template
            // cells, each course at the home's local positions, no communication.
            let mut res = SectionAssign {
                stmt,
                home,
                lo: lo.clone(),
                hi: hi.clone(),
                step,
                step_text: None,
                affine: affine.clone(),
                reads: BTreeMap::new(),
                edits: Vec::new(),
                element: false,
                fetches: false,
                remote: Vec::new(),
                courses,
            };
            self.edit_reference(&mut res, home, &section, 0, args.map(Vec::as_slice));
            let local = self
                .array_expression(rhs, &mut res, &lhs_lo, lhs_position)
                .and_then(|()| self.reads_on_home_cells(&res));
            match local {
                Ok(()) => {
                    self.grow_shadows(home, 0, &res.reads);
                    return Ok(Plan::Section(res));
                }
                // Else its reads are fetched, when the left side is one run of elements.
                Err(why) if !fetches => return Err(why),
                Err(_) => {}
            }
        }
        if courses && !fetches {
            return Err(format!("{home_name} is not assigned one run of elements"));
        }
        let mut res = SectionAssign {
            stmt,
            home,
            lo,
            hi,
            step,
            step_text: None,
            affine,
            reads: BTreeMap::new(),
            edits: Vec::new(),
            element: false,
            fetches,
            remote: Vec::new(),
            courses,
        };
        if courses {
            // The run of local positions of a course's elements.
            let run = format!("hpf_lx(hpf_d_{home_name}, hpf_lo):hpf_lx(hpf_d_{home_name}, hpf_hi):{step}");
            let text = if section.whole { format!("{home_name}({run})") } else { run };
            res.edits.push((section.range, text));
        } else {
            self.edit_reference(&mut res, home, &section, 0, args.map(Vec::as_slice));
        }
        self.array_expression(rhs, &mut res, &lhs_lo, lhs_position)?;
        self.grow_shadows(home, 0, &res.reads);
        Ok(Plan::Section(res))
    }

    /// A FORALL construct runs each assignment for every index before the
    /// next assignment starts. Run on each process's part (after fetching
    /// other processes' elements before it, or course by course), a later
    /// assignment sees what an earlier one assigned only at the elements its
    /// own process assigned in that course: it may read an array an earlier
    /// assignment of the construct assigns only at the very element assigned
    /// (the same reference). Anything else would read stale values.
    pub(crate) fn forall_reads_what_it_assigned(&self, stmt: &Stmt) -> Result<(), String> {
        let StmtKind::Forall { body, .. } = &stmt.kind else { return Ok(()) };
        let normal = |range: TextRange| self.one_line(range).replace(' ', "").to_ascii_lowercase();
        let mut assigned: Vec<(SymbolId, String)> = Vec::new();
        for (number, assignment) in body.iter().enumerate() {
            let StmtKind::Assign { lhs, rhs } = &assignment.kind else { continue };
            let lhs_name = match &lhs.kind {
                ExprKind::Ref { name, .. } | ExprKind::Name(name) => Some(name.range),
                _ => None,
            };
            let mut references = Vec::new();
            collect_references(rhs, &mut references);
            collect_references(lhs, &mut references);
            for reference in references {
                let (ExprKind::Ref { name, .. } | ExprKind::Name(name)) = &reference.kind else { continue };
                if Some(name.range) == lhs_name {
                    continue;
                }
                let Some(id) = self.lookup(&name.key()).filter(|id| self.distributed.contains_key(id)) else {
                    continue;
                };
                let text = normal(reference.range);
                if assigned.iter().any(|(array, _)| *array == id)
                    && !assigned.iter().any(|(array, element)| *array == id && *element == text)
                {
                    return Err(format!(
                        "its assignment {} reads {} at elements an earlier assignment of it assigns (the new values would be read before they arrive)",
                        number + 1,
                        name.text
                    ));
                }
            }
            if let ExprKind::Ref { name, .. } | ExprKind::Name(name) = &lhs.kind {
                if let Some(id) = self.lookup(&name.key()).filter(|id| self.distributed.contains_key(id)) {
                    assigned.push((id, normal(lhs.range)));
                }
            }
        }
        Ok(())
    }

    /// The owner-computes form of a FORALL whose assignments all update one
    /// distributed array at `H(..., i + q, ...)` for one of its indices `i`
    /// and read distributed arrays of the same blocks at `X(..., i + c, ...)`,
    /// or why it has none. FORALL evaluates every right side before it
    /// assigns, so any distance `c` is allowed: the neighbours' elements are
    /// fetched before it, and the local FORALL keeps the semantics. A FORALL
    /// of one index, one assignment and no mask on a BLOCK home may also
    /// read 1-D arrays at any element (`B(N+1-I)` of a CYCLIC B): the
    /// inspector/executor fetches them for the local iterations before it
    /// (`remap.rs`). On a CYCLIC home it runs course by course, every read
    /// on the home's template cells (`cyclic_edits`).
    pub(crate) fn forall<'s>(&mut self, stmt: &'s Stmt) -> Result<Plan<'s>, String>
    where
        'a: 's,
    {
        let StmtKind::Forall { specs, mask, body } = &stmt.kind else {
            return Err("it is not a FORALL".to_string());
        };
        let mut home: Option<(SymbolId, usize, i64)> = None;
        let mut exprs: Vec<&Expr> = mask.iter().collect();
        let mut left_sides: Vec<&Expr> = Vec::new();
        for assignment in body {
            let StmtKind::Assign { lhs, rhs } = &assignment.kind else {
                return Err("its body holds more than assignments".to_string());
            };
            let ExprKind::Ref { name, args } = &lhs.kind else {
                return Err("it assigns a whole variable".to_string());
            };
            let id = self.lookup(&name.key());
            let Some(id) = id.filter(|id| self.distributed.contains_key(id)) else {
                return Err(format!("it assigns the replicated variable {}", name.text));
            };
            let distributed = &self.distributed[&id];
            if args.len() != distributed.lbs.len() || args.iter().any(|it| !matches!(it, Subscript::Expr(_))) {
                return Err(format!("it assigns a section of {}", name.text));
            }
            let Some(Subscript::Expr(subscript)) = args.get(distributed.dim) else {
                return Err(format!("it assigns a section of {}", name.text));
            };
            let form = self.linear_of(subscript).ok_or("the home's distributed subscript is not affine")?;
            let (spec_idx, q) = specs
                .iter()
                .enumerate()
                .find_map(|(idx, spec)| {
                    let key = spec.var.key();
                    (form.coefs.len() == 1 && form.coefs.get(&key) == Some(&1)).then_some((idx, form.constant))
                })
                .ok_or("the home's distributed subscript is not `i+q` for an index i of the FORALL")?;
            match home {
                None => home = Some((id, spec_idx, q)),
                Some(it) if it == (id, spec_idx, q) => {}
                Some(_) => return Err("its assignments update different homes".to_string()),
            }
            for (idx, arg) in args.iter().enumerate() {
                if idx != distributed.dim && !self.distributed_occurrences(arg.range()).is_empty() {
                    return Err("a subscript of a left side reads a distributed array".to_string());
                }
            }
            exprs.push(rhs);
            left_sides.push(lhs);
        }
        let (home, spec_idx, q) = home.ok_or("it assigns nothing")?;
        let spec = &specs[spec_idx];
        let step = match &spec.step {
            Some(step) => self.constant_of(step).ok_or("its stride is not a constant")?,
            None => 1,
        };
        if step == 0 {
            return Err("its stride is zero".to_string());
        }
        let mut bounds = vec![&spec.lo, &spec.hi];
        bounds.extend(spec.step.as_ref());
        if bounds.iter().any(|it| !self.distributed_occurrences(it.range).is_empty()) {
            return Err("its bounds read distributed arrays".to_string());
        }
        let index = Linear::var(&spec.var.key());
        let mut reads = BTreeMap::new();
        // A FORALL of one assignment, one index and no mask evaluates its
        // right side for every index before it assigns: elements of 1-D
        // arrays distributed differently (or of the home, not at a constant
        // distance) are fetched for the local iterations before it, on a
        // BLOCK home (a CYCLIC one reads its own cells only, below).
        let home_distributed = &self.distributed[&home];
        let fetches = specs.len() == 1
            && body.len() == 1
            && mask.is_none()
            && !home_distributed.cyclic
            && home_distributed.second.is_none();
        let mut remote = Vec::new();
        for expr in &exprs {
            self.element_reads(expr, home, &index, &mut reads, fetches.then_some(&mut remote))?;
        }
        // A CYCLIC home runs course by course, one FORALL per course: its
        // reads must lie on the home's cells (then no course reads what
        // another assigns).
        let cyclic_edits = if self.distributed[&home].cyclic {
            if let Some((array, _)) = reads.iter().find(|(array, range)| !self.is_local(home, q, **array, **range)) {
                return Err(format!(
                    "it reads {} at other elements than its home's (on a CYCLIC distribution they live on other processes)",
                    self.distributed[array].name
                ));
            }
            exprs.extend(left_sides);
            Some(self.cyclic_subscript_edits(stmt.range, &exprs)?)
        } else {
            None
        };
        self.grow_shadows(home, q, &reads);
        let control_end = spec.step.as_ref().map_or(spec.hi.range.end, |it| it.range.end);
        Ok(Plan::Forall {
            stmt,
            home,
            home_offset: q,
            lo: self.one_line(spec.lo.range),
            hi: self.one_line(spec.hi.range),
            step,
            control: TextRange::new(spec.lo.range.start, control_end),
            reads,
            remote,
            cyclic_edits,
        })
    }

    /// The owner-computes form of a WHERE statement or construct on arrays
    /// distributed in one dimension, or why it has none: every assignment
    /// of it qualifies as an array assignment (`assignment`) over the same
    /// section of the same array, and its masks line up with that section.
    /// Reads of other processes' elements (neighbours, or on a one-run left
    /// side arrays distributed differently: the inspector/executor) are
    /// fetched before the construct, so a mask or an assignment may read
    /// them only from arrays no assignment before it in the construct
    /// assigns (a masked ELSEWHERE's mask is evaluated after the
    /// assignments before it). Each process then runs the construct on its
    /// part (course by course on a CYCLIC one: on its own cells, or from
    /// fetched values); the masks are evaluated before the assignments
    /// there as in the whole construct, element by element.
    pub(crate) fn where_construct<'s>(&mut self, stmt: &'s Stmt) -> Result<Plan<'s>, String>
    where
        'a: 's,
    {
        match self.where_form(stmt, true) {
            // A CYCLIC left side whose parts do not all read its own cells:
            // every part assigned from fetched values.
            Err(why) if self.where_home(stmt).is_some_and(|home| self.distributed[&home].cyclic) => {
                self.where_form(stmt, false).map_err(|fetched| {
                    // The reason of the fetched form, unless it has none of its own.
                    if fetched.starts_with("an assignment in it is not") {
                        why
                    } else {
                        fetched
                    }
                })
            }
            other => other,
        }
    }

    /// The array the first assignment of a WHERE assigns, when distributed.
    fn where_home(&self, stmt: &Stmt) -> Option<SymbolId> {
        let StmtKind::Where { body, elsewhere, .. } = &stmt.kind else { return None };
        let first = body.iter().chain(elsewhere.iter().flat_map(|(_, it)| it)).next()?;
        let StmtKind::Assign { lhs, .. } = &first.kind else { return None };
        let (ExprKind::Name(name) | ExprKind::Ref { name, .. }) = &lhs.kind else { return None };
        self.lookup(&name.key()).filter(|id| self.distributed.contains_key(id))
    }

    fn where_form<'s>(&mut self, stmt: &'s Stmt, local_courses: bool) -> Result<Plan<'s>, String>
    where
        'a: 's,
    {
        let StmtKind::Where { mask, body, elsewhere } = &stmt.kind else {
            return Err("it is not a WHERE".to_string());
        };
        // The masks and assignments in the order they run.
        let mut items: Vec<Result<&Expr, &Stmt>> = mask.iter().map(Ok).chain(body.iter().map(Err)).collect();
        for (mask, body) in elsewhere {
            items.extend(mask.iter().map(Ok).chain(body.iter().map(Err)));
        }
        let mut first: Option<SectionAssign> = None;
        let mut edits = Vec::new();
        let mut left_sides = Vec::new();
        let mut reads: BTreeMap<SymbolId, (i64, i64)> = BTreeMap::new();
        let mut remote = Vec::new();
        // Per assignment, in order: its section, or the mask read.
        let mut sections = Vec::new();
        for item in &items {
            let Err(assignment) = item else { continue };
            let Ok(Plan::Section(section)) = self.assignment_form(assignment, local_courses) else {
                return Err("an assignment in it is not an owner-computes array assignment".to_string());
            };
            if section.element {
                return Err("an assignment in it reads other processes' elements".to_string());
            }
            if let Some(first) = &first {
                if (&first.lo, &first.hi, first.step, first.courses, first.fetches)
                    != (&section.lo, &section.hi, section.step, section.courses, section.fetches)
                {
                    return Err("its assignments set different sections".to_string());
                }
            }
            if let StmtKind::Assign { lhs, .. } = &assignment.kind {
                left_sides.push(lhs);
            }
            edits.extend(section.edits.iter().cloned());
            sections.push((section.reads.clone(), section.remote.iter().map(|it| it.array).collect::<Vec<_>>()));
            for (array, (low, high)) in &section.reads {
                let entry = reads.entry(*array).or_insert((*low, *high));
                *entry = (entry.0.min(*low), entry.1.max(*high));
            }
            remote.extend(section.remote.iter().cloned());
            if first.is_none() {
                first = Some(section);
            }
        }
        let first = first.ok_or("it assigns nothing")?;
        // The masks line up with the first left side, as its right side does.
        let StmtKind::Assign { lhs, .. } = &first.stmt.kind else { unreachable!("planned as an assignment") };
        let (name, args) = match &lhs.kind {
            ExprKind::Name(name) => (name, None),
            ExprKind::Ref { name, args } => (name, Some(args.as_slice())),
            _ => unreachable!("planned as an assignment"),
        };
        let section = self.distributed_section(first.home, args, name.range)?;
        let dim = self.distributed[&first.home].dim;
        let position =
            args.map_or(dim, |args| args[..dim].iter().filter(|it| matches!(it, Subscript::Range { .. })).count());
        let probe = |edits: Vec<(TextRange, String)>| SectionAssign {
            stmt,
            home: first.home,
            lo: first.lo.clone(),
            hi: first.hi.clone(),
            step: first.step,
            step_text: None,
            affine: first.affine.clone(),
            reads: BTreeMap::new(),
            edits,
            element: false,
            fetches: first.fetches,
            remote: Vec::new(),
            courses: first.courses,
        };
        let mut masked = probe(Vec::new());
        // What each mask and assignment reads of other processes' elements,
        // fetched before the construct: no assignment before it may assign it.
        let mut assigned: Vec<SymbolId> = Vec::new();
        let mut sections = sections.into_iter();
        let mut left = left_sides.iter();
        for item in &items {
            let (item_reads, item_remote) = match item {
                Ok(mask) => {
                    let mut one = probe(Vec::new());
                    self.array_expression(mask, &mut one, &section.lo, position)?;
                    self.reads_on_home_cells(&one)?;
                    masked.edits.extend(one.edits);
                    masked.remote.extend(one.remote.iter().cloned());
                    for (array, (low, high)) in &one.reads {
                        let entry = reads.entry(*array).or_insert((*low, *high));
                        *entry = (entry.0.min(*low), entry.1.max(*high));
                    }
                    (one.reads, one.remote.iter().map(|it| it.array).collect())
                }
                Err(_) => sections.next().expect("one per assignment"),
            };
            let stale = item_reads
                .iter()
                .filter(|(array, range)| **range != (0, 0) || !self.is_local(first.home, 0, **array, **range))
                .map(|(array, _)| *array)
                .chain(item_remote)
                .find(|array| assigned.contains(array));
            if let Some(array) = stale {
                return Err(format!(
                    "it reads other processes' elements of {}, which an assignment before it in the construct assigns",
                    self.distributed[&array].name
                ));
            }
            if item.is_err() {
                let lhs = left.next().expect("one per assignment");
                if let Some((id, _, _)) = self.first_distributed(lhs) {
                    assigned.push(id);
                }
            }
        }
        // Every left side lines up with the first one (other arrays of the
        // same blocks, at distance 0), so one local section serves them all.
        let mut left = BTreeMap::new();
        for lhs in left_sides {
            let mut one = probe(Vec::new());
            self.array_expression(lhs, &mut one, &section.lo, position)
                .map_err(|why| format!("its left sides do not line up: {why}"))?;
            if !one.remote.is_empty() {
                return Err("its left sides are not the same elements".to_string());
            }
            left.extend(one.reads);
        }
        // At distance 0 and on the same template cells (an array aligned
        // elsewhere holds its element `i` on another cell, maybe another process).
        if left.iter().any(|(array, range)| *range != (0, 0) || !self.is_local(first.home, 0, *array, *range)) {
            return Err("its left sides are not the same elements".to_string());
        }
        masked.edits.extend(edits);
        masked.reads = reads;
        masked.remote.extend(remote);
        if masked.courses && (!masked.fetches || local_courses) && !masked.remote.is_empty() {
            return Err("it reads other processes' elements for a CYCLIC left side".to_string());
        }
        self.grow_shadows(masked.home, 0, &masked.reads);
        Ok(Plan::Section(masked))
    }

    /// The first and last index of a reference's section along the
    /// distributed dimension, as Fortran text.
    fn section_bounds(&self, id: SymbolId, args: Option<&[Subscript]>) -> (String, String) {
        let distributed = &self.distributed[&id];
        match args.and_then(|it| it.get(distributed.dim)) {
            Some(Subscript::Range { lo, hi, .. }) => (
                lo.as_ref().map_or(distributed.lb.to_string(), |it| self.one_line(it.range)),
                hi.as_ref().map_or(distributed.ub.to_string(), |it| self.one_line(it.range)),
            ),
            _ => (distributed.lb.to_string(), distributed.ub.to_string()),
        }
    }

    /// `section_bounds` in affine form (`affine_terms`).
    fn affine_section_bounds(&self, id: SymbolId, args: Option<&[Subscript]>) -> Option<(Linear, Linear)> {
        let distributed = &self.distributed[&id];
        let (lo, hi) = match args.and_then(|it| it.get(distributed.dim)) {
            Some(Subscript::Range { lo, hi, .. }) => (lo.as_ref(), hi.as_ref()),
            _ => (None, None),
        };
        let bound = |expr: Option<&Expr>, default: &crate::Bound| match expr {
            Some(expr) => self.affine_terms(expr, self.main),
            None => Some(default.linear()),
        };
        Some((bound(lo, &distributed.lb)?, bound(hi, &distributed.ub)?))
    }

    /// The affine form of the integer expression `expr` of `unit`, where a
    /// part that is not affine but reads scalars only (`n/2`, `m*k`) is a
    /// term of its own, named by its text: bounds written alike compare
    /// equal (`x(n/2+1:n)` has the extent of `w(n - n/2)`).
    fn affine_terms(&self, expr: &Expr, unit: analysis::model::UnitId) -> Option<Linear> {
        let model = &self.analysis.model;
        let combine = |left: Linear, right: Linear, sign: i64| add_linear(&left, &right, sign);
        let scale = |value: Linear, factor: i64| add_linear(&Linear::constant(0), &value, factor);
        match &expr.kind {
            ExprKind::Paren(inner) => return self.affine_terms(inner, unit),
            ExprKind::Unary { op: syntax::UnaryOp::Neg, operand } => {
                return scale(self.affine_terms(operand, unit)?, -1);
            }
            ExprKind::Unary { op: syntax::UnaryOp::Plus, operand } => return self.affine_terms(operand, unit),
            ExprKind::Binary { op: op @ (syntax::BinaryOp::Add | syntax::BinaryOp::Sub), lhs, rhs } => {
                let sign = if *op == syntax::BinaryOp::Add { 1 } else { -1 };
                return combine(self.affine_terms(lhs, unit)?, self.affine_terms(rhs, unit)?, sign);
            }
            _ => {}
        }
        let is_var = |key: &str| {
            !matches!(model.lookup(unit, key).map(|id| &model.symbol(id).kind), Some(SymbolKind::Constant(Some(_))))
        };
        if let Ok(linear) = analysis::eval::linear(expr, &is_var, &Constants { model, unit }) {
            return Some(linear);
        }
        // A term of its own: scalar variables, named constants, literals and operators only.
        let mut stack = vec![expr];
        while let Some(part) = stack.pop() {
            match &part.kind {
                ExprKind::Int(_) => {}
                ExprKind::Name(name) => {
                    let id = model.lookup(unit, &name.key())?;
                    if model.symbol(id).rank() != 0 {
                        return None;
                    }
                }
                ExprKind::Paren(inner) => stack.push(inner),
                ExprKind::Unary { operand, .. } => stack.push(operand),
                ExprKind::Binary { lhs, rhs, .. } => stack.extend([&**lhs, &**rhs]),
                _ => return None,
            }
        }
        let key = analysis::model::render_expr(expr).to_ascii_lowercase().replace(' ', "");
        Some(Linear::var(&format!("({key})")))
    }

    /// The declared lower bound and extent of the rank-1 array `id` in
    /// affine form (`w(n)`: 1 and `n`), from its declaration.
    fn declared_extent(&self, id: SymbolId) -> Option<(i64, Linear)> {
        let symbol = self.analysis.model.symbol(id);
        let [dim] = symbol.shape.as_slice() else { return None };
        let lo = dim.lo.known()?;
        if let Some(hi) = dim.hi.known() {
            return Some((lo, Linear::constant(hi - lo + 1)));
        }
        let (unit, _) = *analysis::model::flatten_units(&self.analysis.file).get(id.unit)?;
        let key = symbol.name.key();
        let spec = unit.decls.iter().find_map(|decl| {
            let entity = decl.entities.iter().find(|it| it.name.key() == key)?;
            entity.dims.as_ref().or_else(|| {
                decl.attrs.iter().find_map(|it| match it {
                    syntax::DeclAttr::Dimension(dims) => Some(dims),
                    _ => None,
                })
            })
        })?;
        let hi = match spec.as_slice() {
            [Subscript::Expr(hi)] | [Subscript::Range { hi: Some(hi), .. }] => hi,
            _ => return None,
        };
        let hi = self.affine_terms(hi, id.unit)?;
        let mut extent = hi;
        extent.constant = extent.constant.checked_sub(lo)?.checked_add(1)?;
        Some((lo, extent))
    }

    /// The local sections of the arguments of a reduction: the first
    /// distributed reference of the first argument plays the left side.
    pub(crate) fn reduced_section<'s>(
        &self,
        stmt: &'s Stmt,
        values: &[&Expr],
        element: bool,
    ) -> Result<SectionAssign<'s>, String> {
        // Any argument's: `dot_product(x, y)` with `x` replicated goes by `y`.
        let first = values.iter().find_map(|it| self.first_distributed(it));
        let Some((home, args, name_range)) = first else {
            return Err("a reduction reads no distributed array".to_string());
        };
        let dim = self.distributed[&home].dim;
        let section = self.distributed_section(home, args, name_range)?;
        let position =
            args.map_or(dim, |args| args[..dim].iter().filter(|it| matches!(it, Subscript::Range { .. })).count());
        let (lo, hi) = self.section_bounds(home, args);
        let affine = self.affine_section_bounds(home, args);
        let mut res = SectionAssign {
            stmt,
            home,
            lo,
            hi,
            step: section.step,
            step_text: section.step_text.clone(),
            affine,
            reads: BTreeMap::new(),
            edits: Vec::new(),
            element,
            fetches: false,
            remote: Vec::new(),
            courses: self.distributed[&home].cyclic,
        };
        for value in values {
            self.array_expression(value, &mut res, &section.lo, position)?;
        }
        self.reads_on_home_cells(&res)?;
        Ok(res)
    }

    /// The first reference to a distributed array in `expr`: its array, its
    /// subscripts (`None` for the whole array) and its name's range.
    pub(crate) fn first_distributed<'e>(
        &self,
        expr: &'e Expr,
    ) -> Option<(SymbolId, Option<&'e [Subscript]>, TextRange)> {
        let is_distributed =
            |name: &syntax::Name| self.lookup(&name.key()).filter(|id| self.distributed.contains_key(id));
        match &expr.kind {
            ExprKind::Name(name) => is_distributed(name).map(|id| (id, None, name.range)),
            ExprKind::Ref { name, args } => {
                if let Some(id) = is_distributed(name) {
                    return Some((id, Some(args.as_slice()), name.range));
                }
                args.iter().filter_map(Subscript::as_expr).find_map(|it| self.first_distributed(it))
            }
            ExprKind::Unary { operand, .. } | ExprKind::Paren(operand) => self.first_distributed(operand),
            ExprKind::Binary { lhs, rhs, .. } => self.first_distributed(lhs).or_else(|| self.first_distributed(rhs)),
            _ => None,
        }
    }

    /// The section along the distributed dimension of a reference to the
    /// distributed array `id` (`args` is `None` for the whole array).
    fn distributed_section(
        &self,
        id: SymbolId,
        args: Option<&[Subscript]>,
        name_range: TextRange,
    ) -> Result<DistributedSection, String> {
        let distributed = &self.distributed[&id];
        let Some(args) = args else {
            return Ok(DistributedSection {
                range: name_range,
                whole: true,
                lo: distributed.lb.linear(),
                step: 1,
                step_text: None,
            });
        };
        let Some(Subscript::Range { lo, stride, range, .. }) = args.get(distributed.dim) else {
            return Err(format!("{} is not sectioned along its distributed dimension", distributed.name));
        };
        let lo = match lo {
            Some(lo) => self.affine_terms(lo, self.main).ok_or("a section bound is not affine")?,
            None => distributed.lb.linear(),
        };
        let (step, step_text) = match stride {
            Some(stride) => match self.constant_of(stride) {
                Some(step) => (step, None),
                // A run-time stride (`X(K:N:K)`): its text, for reductions.
                None if self.distributed_occurrences(stride.range).is_empty() => {
                    (1, Some(format!("({})", self.one_line(stride.range))))
                }
                None => return Err("a section stride reads a distributed array".to_string()),
            },
            None => (1, None),
        };
        if step == 0 {
            return Err("a section stride is zero".to_string());
        }
        Ok(DistributedSection { range: *range, whole: false, lo, step, step_text })
    }

    /// Rewrites a reference's distributed subscript to the local part, `c`
    /// elements away from the left side's.
    fn edit_reference(
        &self,
        res: &mut SectionAssign,
        id: SymbolId,
        section: &DistributedSection,
        c: i64,
        args: Option<&[Subscript]>,
    ) {
        let distributed = &self.distributed[&id];
        // Course by course, every reference (on the home's cells) is at the
        // home's local positions.
        let c = if res.courses { 0 } else { c };
        let local = local_section(c, &res.step(), res.element);
        let text = if section.whole {
            let subscripts: Vec<String> = (0..distributed.lbs.len())
                .map(|it| if it == distributed.dim { local.clone() } else { ":".to_string() })
                .collect();
            format!("{}({})", distributed.name, subscripts.join(", "))
        } else {
            local
        };
        debug_assert!(args.is_none() == section.whole);
        res.edits.push((section.range, text));
    }

    /// Checks that `expr` is an elemental expression whose distributed
    /// sections line up with the left side's, recording their rewrites and
    /// the fetches they need.
    fn array_expression(
        &self,
        expr: &Expr,
        res: &mut SectionAssign,
        lhs_lo: &Linear,
        lhs_position: usize,
    ) -> Result<(), String> {
        let model = &self.analysis.model;
        match &expr.kind {
            ExprKind::Int(_) | ExprKind::Literal(_) => Ok(()),
            ExprKind::Unary { operand, .. } => self.array_expression(operand, res, lhs_lo, lhs_position),
            ExprKind::Binary { lhs, rhs, .. } => {
                self.array_expression(lhs, res, lhs_lo, lhs_position)?;
                self.array_expression(rhs, res, lhs_lo, lhs_position)
            }
            ExprKind::Paren(inner) => self.array_expression(inner, res, lhs_lo, lhs_position),
            ExprKind::Other(_) => Err("its right side holds an array constructor or another construct".to_string()),
            ExprKind::Name(name) => {
                let Some(id) = self.lookup(&name.key()) else { return Ok(()) };
                if self.distributed.contains_key(&id) {
                    self.aligned_read(id, None, name.range, res, lhs_lo, lhs_position)
                        .or_else(|why| self.fetched_read(id, None, expr.range, res, why))
                } else if model.symbol(id).is_array() {
                    let edit = self
                        .replicated_operand(id, None, res)
                        .ok_or_else(|| format!("it reads the replicated array {} as a whole", name.text))?;
                    res.edits.push((name.range, edit));
                    Ok(())
                } else {
                    Ok(())
                }
            }
            ExprKind::Ref { name, args } => {
                let id = self.lookup(&name.key());
                if let Some(id) = id.filter(|id| self.distributed.contains_key(id)) {
                    for (idx, arg) in args.iter().enumerate() {
                        if idx != self.distributed[&id].dim && !self.distributed_occurrences(arg.range()).is_empty() {
                            return Err("a subscript reads a distributed array".to_string());
                        }
                    }
                    if args.len() != self.distributed[&id].lbs.len() {
                        return Err(format!("the subscripts of {} are not one per dimension", name.text));
                    }
                    return self
                        .aligned_read(id, Some(args), name.range, res, lhs_lo, lhs_position)
                        .or_else(|why| self.fetched_read(id, Some(args), expr.range, res, why));
                }
                if let Some(id) = id.filter(|id| model.symbol(*id).is_array()) {
                    if args.iter().any(|it| !matches!(it, Subscript::Expr(_))) {
                        let edit = self
                            .replicated_operand(id, Some(args), res)
                            .filter(|_| self.distributed_occurrences(expr.range).is_empty())
                            .ok_or_else(|| format!("it reads a section of the replicated array {}", name.text))?;
                        res.edits.push((expr.range, edit));
                        return Ok(());
                    }
                    if !self.distributed_occurrences(expr.range).is_empty() {
                        return Err("a subscript reads a distributed array".to_string());
                    }
                    return Ok(());
                }
                if !ELEMENTAL.contains(&name.key().as_str()) {
                    return Err(format!("it calls {}, which is not an elemental intrinsic", name.text));
                }
                for arg in args {
                    match arg {
                        Subscript::Expr(value) | Subscript::Keyword { value, .. } => {
                            self.array_expression(value, res, lhs_lo, lhs_position)?
                        }
                        _ => return Err(format!("an argument of {} is not an expression", name.text)),
                    }
                }
                Ok(())
            }
        }
    }

    /// A replicated rank-1 array, whole or a section of stride 1, read in a
    /// section assignment or reduction on a BLOCK rank-1 home (`y = y + a *
    /// x`, `dot_product(x, y)`, `z(2:n+1) = z(2:n+1) * w` with `w(n)`,
    /// `z(3:n+2) + w(1:n)`): its element `k` goes with element `k` of the
    /// home's section, so each process reads the part that goes with its own
    /// elements, `x(a + (hpf_lo - lo) / step : a + (hpf_hi - lo) / step)`
    /// for the first element `a` read. The bounds and the array's declared
    /// extent may be affine in run-time values (`affine_terms`), and must be
    /// seen to conform. `None` when they are not, or the home runs otherwise
    /// (course by course, element by element, with a run-time stride).
    fn replicated_operand(&self, id: SymbolId, args: Option<&[Subscript]>, res: &SectionAssign) -> Option<String> {
        let home = &self.distributed[&res.home];
        let symbol = self.analysis.model.symbol(id);
        if res.courses || res.element || res.step_text.is_some() || home.lbs.len() != 1 || symbol.rank() != 1 {
            return None;
        }
        let (xl, declared) = self.declared_extent(id)?;
        // The first element read and how many: the whole array, or a
        // section `w(a:b)` of stride 1.
        let (first, first_text, extent) = match args {
            None => (Linear::constant(xl), xl.to_string(), declared),
            Some([Subscript::Range { lo, hi, stride, .. }]) => {
                if stride.as_ref().is_some_and(|it| self.constant_of(it) != Some(1)) {
                    return None;
                }
                let first = match lo {
                    Some(lo) => self.affine_terms(lo, self.main)?,
                    None => Linear::constant(xl),
                };
                let last = match hi {
                    Some(hi) => self.affine_terms(hi, self.main)?,
                    None => add_linear(&declared, &Linear::constant(xl - 1), 1)?,
                };
                let text = lo.as_ref().map_or(xl.to_string(), |it| self.one_line(it.range).trim().to_string());
                (first.clone(), text, add_linear(&add_linear(&last, &first, -1)?, &Linear::constant(1), 1)?)
            }
            Some(_) => return None,
        };
        // The home's section must have as many elements.
        let (lo, hi) = res.affine.as_ref()?;
        let step = res.step;
        let span = add_linear(hi, lo, -1)?;
        let count = if span.is_constant() {
            let span = span.constant;
            Linear::constant(if span * step.signum() < 0 { 0 } else { span / step + 1 })
        } else {
            // (hi - lo) / step + 1 exactly when the stride divides every part.
            if span.constant % step != 0 || span.coefs.values().any(|it| it % step != 0) {
                return None;
            }
            let mut count = span;
            count.coefs.values_mut().for_each(|it| *it /= step);
            count.constant = count.constant / step + 1;
            count
        };
        if count != extent {
            return None;
        }
        let constant = lo.is_constant() && first.is_constant();
        let lo_text = if lo.is_constant() { lo.constant.to_string() } else { res.lo.trim().to_string() };
        let at = |bound: &str| match (step, constant) {
            (1, true) => format!("{bound}+({})", first.constant - lo.constant),
            (1, false) => format!("{bound}+(({first_text})-({lo_text}))"),
            (_, true) => format!("{}+({bound}-({}))/({step})", first.constant, lo.constant),
            _ => format!("({first_text})+({bound}-({lo_text}))/({step})"),
        };
        Some(format!("{}({}:{})", symbol.name.text, at("hpf_lo"), at("hpf_hi")))
    }

    /// Checks that every distributed element `expr` reads is `X(..., e + c, ...)`
    /// for the left side's distributed subscript `e` (same template and
    /// dimension) and records the distances `c`.
    fn element_reads(
        &self,
        expr: &Expr,
        home: SymbolId,
        index_form: &Linear,
        reads: &mut BTreeMap<SymbolId, (i64, i64)>,
        mut remote: Option<&mut Vec<FetchedRead>>,
    ) -> Result<(), String> {
        for (range, id) in self.distributed_occurrences(expr.range) {
            let read = self.element_read(expr, range, id, home, index_form, reads);
            match (read, remote.as_deref_mut()) {
                (Ok(()), _) => {}
                (Err(why), Some(remote)) => remote.push(self.fetched_element(expr, range, id).ok_or(why)?),
                (Err(why), None) => return Err(why),
            }
        }
        Ok(())
    }

    /// The reference to the rank-1 array `id` whose name is at `name_range`
    /// in `expr`, as one element per FORALL iteration fetched by the
    /// inspector/executor, or `None` when it is not such a reference: its
    /// subscript must read no distributed array.
    fn fetched_element(&self, expr: &Expr, name_range: TextRange, id: SymbolId) -> Option<FetchedRead> {
        let distributed = &self.distributed[&id];
        if distributed.lbs.len() != 1 || distributed.second.is_some() {
            return None;
        }
        let [Subscript::Expr(subscript)] = find_reference(expr, name_range)? else { return None };
        if !self.distributed_occurrences(subscript.range).is_empty() {
            return None;
        }
        let text = self.slice(TextRange::new(name_range.start, expr.range.end));
        let close = crate::closing_paren(text, text.find('(')?)?;
        Some(FetchedRead {
            array: id,
            range: TextRange::new(name_range.start, name_range.start + close + 1),
            index: format!("({})", self.one_line(subscript.range)),
            slice: false,
        })
    }

    /// `element_reads` for the reference whose name is at `range`.
    fn element_read(
        &self,
        expr: &Expr,
        range: TextRange,
        id: SymbolId,
        home: SymbolId,
        index_form: &Linear,
        reads: &mut BTreeMap<SymbolId, (i64, i64)>,
    ) -> Result<(), String> {
        {
            let distributed = &self.distributed[&id];
            let home_distributed = &self.distributed[&home];
            if !distributed.same_blocks(home_distributed) {
                return Err(format!("{} and {} are distributed differently", distributed.name, home_distributed.name));
            }
            // The reference whose name is at `range`.
            let Some(args) = find_reference(expr, range) else {
                return Err(format!("it reads {} as a whole in an element assignment", distributed.name));
            };
            let Some(Subscript::Expr(subscript)) = args.get(distributed.dim) else {
                return Err(format!("it reads a section of {} in an element assignment", distributed.name));
            };
            if args.iter().any(|it| !matches!(it, Subscript::Expr(_))) {
                return Err(format!("it reads a section of {} in an element assignment", distributed.name));
            }
            for arg in args {
                if !self.distributed_occurrences(arg.range()).is_empty() {
                    return Err("a subscript reads a distributed array".to_string());
                }
            }
            let form = self.linear_of(subscript).ok_or("a distributed subscript is not affine")?;
            let c = (form.coefs == index_form.coefs)
                .then(|| form.constant.checked_sub(index_form.constant))
                .flatten()
                .ok_or_else(|| format!("{} is not read at a constant distance from the left side", distributed.name))?;
            let entry = reads.entry(id).or_insert((c, c));
            entry.0 = entry.0.min(c);
            entry.1 = entry.1.max(c);
        }
        Ok(())
    }

    /// A read of the distributed array `id` that `aligned_read` refused (for
    /// `why`), as a reference the inspector/executor fetches: a rank-1 array
    /// read whole, as a section, or at one element, in an array assignment
    /// whose left side is one run of elements of a BLOCK array. The values
    /// are fetched before the statement assigns anything, so reading the
    /// array the statement writes (`A(N:1:-1) = A(1:N)`) takes the old ones.
    fn fetched_read(
        &self,
        id: SymbolId,
        args: Option<&[Subscript]>,
        range: TextRange,
        res: &mut SectionAssign,
        why: String,
    ) -> Result<(), String> {
        let distributed = &self.distributed[&id];
        if !res.fetches || distributed.lbs.len() != 1 || distributed.second.is_some() {
            return Err(why);
        }
        if let Some(args) = args {
            if args.iter().any(|it| !self.distributed_occurrences(it.range()).is_empty()) {
                return Err(why);
            }
        }
        // The left side's element `hpf_i` is the t-th of its section, t = (hpf_i - lo) / step.
        let position = format!("(hpf_i - ({})) / ({})", res.lo, res.step);
        let (index, slice) = match args {
            None => (format!("{} + {position}", distributed.lb), true),
            Some([Subscript::Range { lo, stride, .. }]) => {
                let first = lo.as_ref().map_or(distributed.lb.to_string(), |it| self.one_line(it.range));
                let step = match stride {
                    Some(stride) => self.constant_of(stride).ok_or(why)?,
                    None => 1,
                };
                (format!("({first}) + ({step}) * ({position})"), true)
            }
            Some([Subscript::Expr(element)]) => (format!("({})", self.one_line(element.range)), true),
            _ => return Err(why),
        };
        res.remote.push(FetchedRead { array: id, range, index, slice });
        Ok(())
    }

    /// A read of the distributed array `id` in an array expression.
    fn aligned_read(
        &self,
        id: SymbolId,
        args: Option<&[Subscript]>,
        name_range: TextRange,
        res: &mut SectionAssign,
        lhs_lo: &Linear,
        lhs_position: usize,
    ) -> Result<(), String> {
        let home = &self.distributed[&res.home];
        let distributed = &self.distributed[&id];
        // A CYCLIC left side assigned from fetched values (`assignment`)
        // reads its own alignment at the same elements locally, nothing else.
        if res.courses && res.fetches && !distributed.same_alignment(home) {
            return Err(format!("{} is read for the CYCLIC {}", distributed.name, home.name));
        }
        if !distributed.same_blocks(home) {
            return Err(format!("{} and {} are distributed differently", distributed.name, home.name));
        }
        let position = args.map_or(distributed.dim, |args| {
            args[..distributed.dim].iter().filter(|it| matches!(it, Subscript::Range { .. })).count()
        });
        if position != lhs_position {
            return Err(format!(
                "the distributed dimension of {} does not line up with the left side's",
                distributed.name
            ));
        }
        let section = self.distributed_section(id, args, name_range)?;
        if (section.step, &section.step_text) != (res.step, &res.step_text) {
            return Err(format!("{} is sectioned with another stride than the left side", distributed.name));
        }
        let c = match (&section.lo, lhs_lo) {
            (lo, lhs) if lo.coefs == lhs.coefs => lo.constant.checked_sub(lhs.constant),
            _ => None,
        }
        .ok_or_else(|| format!("{} is not read at a constant distance from the left side", distributed.name))?;
        if res.step_text.is_some() && (c != 0 || !self.is_local(res.home, 0, id, (c, c))) {
            // (Its neighbours' elements would be fetched for a stride known at compile time.)
            return Err(format!(
                "{} is read at other elements than the first one's with a run-time stride",
                distributed.name
            ));
        }
        if res.courses && res.fetches {
            // The CYCLIC left side's own elements: the same run of local positions.
            if c != 0 || (section.whole && distributed.lbs.len() != 1) {
                return Err(format!("{} is read at other elements than the CYCLIC {}", distributed.name, home.name));
            }
            let name = &distributed.name;
            let run = format!("hpf_lx(hpf_d_{name}, hpf_lo):hpf_lx(hpf_d_{name}, hpf_hi):{}", res.step);
            res.edits.push((section.range, if section.whole { format!("{name}({run})") } else { run }));
            return Ok(());
        }
        let entry = res.reads.entry(id).or_insert((c, c));
        entry.0 = entry.0.min(c);
        entry.1 = entry.1.max(c);
        self.edit_reference(res, id, &section, c, args);
        Ok(())
    }

    pub(crate) fn one_line(&self, range: TextRange) -> String {
        self.copy(range).replace(['&', '\n'], " ")
    }

    /// For a CYCLIC left side: refuses reads off its template cells (they
    /// live on other processes; a shift on a CYCLIC distribution is no
    /// neighbour exchange).
    fn reads_on_home_cells(&self, section: &SectionAssign) -> Result<(), String> {
        if !section.courses {
            return Ok(());
        }
        match section.reads.iter().find(|(array, range)| !self.is_local(section.home, 0, **array, **range)) {
            Some((array, _)) => Err(format!(
                "it reads {} at other elements than the left side's (on a CYCLIC distribution they live on other processes)",
                self.distributed[array].name
            )),
            None => Ok(()),
        }
    }

    /// For a CYCLIC left side: opens the loop over the courses and sets
    /// `hpf_lo:hpf_hi:step` to the local positions of the section's elements
    /// in this process's block of the course (an empty section when it has
    /// none: the count `hpf_hi - hpf_lo` keeps its sign). Closed by `end do`.
    pub(crate) fn emit_course_bounds(&self, out: &mut String, section: &SectionAssign) {
        let step = section.step();
        let home_name = &self.distributed[&section.home].name;
        let _ = writeln!(out, "  do hpf_c = 0, hpf_courses(hpf_d_{home_name}) - 1");
        let _ = writeln!(
            out,
            "  call hpf_course_bounds(hpf_d_{home_name}, 0, ({}), ({}), {step}, hpf_c, hpf_lo, hpf_hi)",
            section.lo, section.hi
        );
        let _ = writeln!(out, "  hpf_hi = hpf_lx(hpf_d_{home_name}, hpf_lo) + (hpf_hi - hpf_lo)");
        let _ = writeln!(out, "  hpf_lo = hpf_lx(hpf_d_{home_name}, hpf_lo)");
    }

    /// The local bounds of a section and the fetches its reads need.
    pub(crate) fn emit_section_bounds(&self, out: &mut String, section: &SectionAssign) {
        let step = section.step();
        let home_name = &self.distributed[&section.home].name;
        let _ = writeln!(
            out,
            "  call hpf_local_bounds(hpf_d_{home_name}, 0, ({}), ({}), {step}, hpf_lo, hpf_hi)",
            section.lo, section.hi
        );
        // (A run-time stride reads no other process's elements: `aligned_read`.)
        self.emit_fetches(out, section.home, 0, section.step, &section.reads);
    }

    pub(crate) fn emit_section(&self, out: &mut String, section: &SectionAssign) {
        let _ = writeln!(out, "  ! hpf-ls: owner computes {}", self.slice(section.stmt.header).trim());
        if section.courses && !section.fetches {
            // Course by course at the home's local positions, no communication.
            let text = self.edited_statement(section.stmt, &section.edits);
            self.emit_course_bounds(out, section);
            let _ = writeln!(out, "{text}\n  end do");
            return;
        }
        if section.courses {
            let bounds = (section.lo.as_str(), section.hi.as_str(), section.step);
            self.emit_fetched_courses(out, section.stmt, section.home, bounds, &section.remote, &section.edits);
            return;
        }
        self.emit_section_bounds(out, section);
        if section.remote.is_empty() {
            let text = self.edited_statement(section.stmt, &section.edits);
            let _ = writeln!(out, "{text}");
            return;
        }
        let mut edits = section.edits.clone();
        edits.extend(self.emit_fetched_reads(out, "hpf_i", section.step, &section.remote));
        let text = self.edited_statement(section.stmt, &edits);
        let _ = writeln!(out, "{text}\n  end block");
    }

    /// The text of `range` with the replacements inside it.
    pub(crate) fn edited(&self, range: TextRange, edits: &[(TextRange, String)]) -> String {
        let mut edits: Vec<&(TextRange, String)> = edits.iter().filter(|it| range.contains_range(it.0)).collect();
        edits.sort_by_key(|it| it.0.start);
        let mut text = String::new();
        let mut at = range.start;
        for (edit_range, replacement) in edits {
            if edit_range.start < at {
                continue;
            }
            text.push_str(&self.copy(TextRange::new(at, edit_range.start)));
            text.push_str(replacement);
            at = edit_range.end;
        }
        text.push_str(&self.copy(TextRange::new(at, range.end)));
        text
    }

    /// A statement's text (with its indentation and label, `Lowering::copy_start`) with the replacements.
    pub(crate) fn edited_statement(&self, stmt: &Stmt, edits: &[(TextRange, String)]) -> String {
        let line_start = self.copy_start(stmt.range.start);
        close_shared_label(self.edited(TextRange::new(line_start, stmt.range.end), edits))
    }
}

/// The subscripts of the reference in `expr` whose name is at `name_range`
/// (`None` when it is a bare name).
pub(crate) fn find_reference(expr: &Expr, name_range: TextRange) -> Option<&[Subscript]> {
    match &expr.kind {
        ExprKind::Ref { name, args } => {
            if name.range == name_range {
                return Some(args);
            }
            args.iter().find_map(|arg| match arg {
                Subscript::Expr(value) | Subscript::Keyword { value, .. } => find_reference(value, name_range),
                Subscript::Range { lo, hi, stride, .. } => {
                    [lo, hi, stride].into_iter().flatten().find_map(|it| find_reference(it, name_range))
                }
                Subscript::Star(_) => None,
            })
        }
        ExprKind::Unary { operand, .. } => find_reference(operand, name_range),
        ExprKind::Binary { lhs, rhs, .. } => {
            find_reference(lhs, name_range).or_else(|| find_reference(rhs, name_range))
        }
        ExprKind::Paren(inner) => find_reference(inner, name_range),
        ExprKind::Other(items) => items.iter().find_map(|it| find_reference(it, name_range)),
        _ => None,
    }
}

/// The array references and names in `expr` (subscripts included),
/// outermost first. Expressions nest at most `syntax`'s cut-off deep.
fn collect_references<'e>(expr: &'e Expr, out: &mut Vec<&'e Expr>) {
    let mut stack = vec![expr];
    while let Some(expr) = stack.pop() {
        match &expr.kind {
            ExprKind::Name(_) => out.push(expr),
            ExprKind::Ref { args, .. } => {
                out.push(expr);
                for arg in args {
                    match arg {
                        Subscript::Expr(it) => stack.push(it),
                        Subscript::Range { lo, hi, stride, .. } => {
                            stack.extend(lo.iter().chain(hi.iter()).chain(stride.iter()));
                        }
                        Subscript::Keyword { value, .. } => stack.push(value),
                        Subscript::Star(_) => {}
                    }
                }
            }
            ExprKind::Unary { operand, .. } | ExprKind::Paren(operand) => stack.push(operand),
            ExprKind::Binary { lhs, rhs, .. } => stack.extend([&**lhs, &**rhs]),
            ExprKind::Other(parts) => stack.extend(parts.iter()),
            ExprKind::Int(_) | ExprKind::Literal(_) => {}
        }
    }
}

/// A DO nest's text that ends with the bare label of a terminal statement
/// it shares with a loop around it (`DO 10 K ... DO 10 I ... 10 CONTINUE`,
/// where the outer loop is emitted as `do ... end do` and keeps the
/// CONTINUE) gets a CONTINUE of its own on that label.
pub(crate) fn close_shared_label(mut text: String) -> String {
    let last = text.trim_end().rsplit('\n').next().unwrap_or("").trim();
    if !last.is_empty() && last.chars().all(|it| it.is_ascii_digit()) {
        let end = text.trim_end().len();
        text.truncate(end);
        text.push_str(" continue");
    }
    text
}
