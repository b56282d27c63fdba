//! Loops whose dependence crosses the processes at a constant distance, run
//! as a pipeline (a wavefront) instead of iteration by iteration.
//!
//! A DO nest (one loop, or two perfectly nested) whose one assignment
//! writes `U(.., v, ..)` of an array BLOCK-distributed along the dimension
//! of the loop index `v`, and reads `U` at `v + c` for constants `c`:
//! - reads below (`c < 0`, Gauss-Seidel's `U(I-1,J)`, `X(I-1)`) read values
//!   the process before has just computed: each process waits for the last
//!   `-min c` elements along the distributed dimension from the process
//!   before it (which forwards what it received when its block is
//!   narrower), runs its own iterations, then passes its last ones on;
//! - reads above (`c > 0`, `U(I+1,J)`) read old values: they arrive in the
//!   shadow area by one halo fetch before the sweep, before their owner
//!   overwrites them.
//!
//! When `v` is the outer loop (the dependence on the previous column of
//! `U(*, BLOCK)`, a 1-D recurrence) the processes run one after the other:
//! a chain. When `v` is the inner loop (`U(BLOCK, *)` swept column by
//! column), the outer loop runs in strips of columns: for each strip a
//! process receives the strip's boundary from the process before it,
//! computes, and sends its own on, so the processes work as a wavefront.
//! Every element is computed by the same expression from the same values as
//! in the sequential loop: the result is bit for bit the sequential one.
//! The nests the rule refuses say why ([`Refusal`]).

use std::collections::BTreeMap;
use std::fmt::{self, Write};

use analysis::model::SymbolId;
use syntax::{Expr, ExprKind, LoopControl, Stmt, StmtKind, Subscript};

use crate::Lowering;

/// A DO nest run as a pipeline along the processes.
pub(crate) struct Pipeline<'a> {
    pub(crate) stmt: &'a Stmt,
    /// The inner loop of a nest of two.
    inner: Option<&'a Stmt>,
    array: SymbolId,
    /// The largest distance of a read below (`v - below`) and above.
    below: i64,
    above: i64,
    /// The distributed index is the inner loop: the outer one runs in
    /// strips, its index the subscript of dimension `strip_dim` (0-based).
    strip_dim: Option<usize>,
    /// Private scalars the iterations assign (keys): an inner loop whose
    /// bounds read one gets no final value after the nest.
    privates: Vec<String>,
}

/// Why a nest is not run as a pipeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Not an unlabelled counted DO with step 1 (or two such, perfectly nested).
    NotUnitStepLoop,
    /// The innermost body is not one assignment.
    NotOneAssignment,
    /// The assignment's left side is not an element of a distributed array.
    NoDistributedElement,
    /// The array is not BLOCK along one dimension with stride 1.
    NotBlock(String),
    /// The left side's distributed subscript is not one of the loop indices.
    NotAtIndex(String),
    /// No read of the array below along the distributed dimension: no
    /// dependence to carry (the owner-computes rules plan such loops).
    NoCarriedDependence,
    /// A read of the array at a distance that is not constant.
    NotConstantDistance(String),
    /// A read whose value, in a wavefront, would not yet or no longer be there.
    OutOfOrder(String),
    /// A read of another distributed array off the assigned element's cell.
    OtherArray(String),
    /// A construct the rule does not copy (a call, a whole array, ...).
    Unsupported(String),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NotUnitStepLoop => write!(f, "it is not a nest of unlabelled DO loops with step 1"),
            Refusal::NotOneAssignment => write!(f, "its innermost body is not one assignment"),
            Refusal::NoDistributedElement => write!(f, "it assigns no element of a distributed array"),
            Refusal::NotBlock(name) => write!(f, "{name} is not BLOCK along one dimension with stride 1"),
            Refusal::NotAtIndex(name) => {
                write!(f, "the distributed subscript of {name} on the left side is not a loop index")
            }
            Refusal::NoCarriedDependence => write!(f, "it reads no element below along the distributed dimension"),
            Refusal::NotConstantDistance(name) => {
                write!(f, "it reads {name} at a distance from the assigned element that is not constant")
            }
            Refusal::OutOfOrder(name) => write!(
                f,
                "it reads an element of {name} that a wavefront would compute on another process too late or too early"
            ),
            Refusal::OtherArray(name) => write!(f, "it reads {name} off the assigned element's processes"),
            Refusal::Unsupported(what) => write!(f, "{what}"),
        }
    }
}

/// A counted DO loop's control and body.
fn counted_loop(stmt: &Stmt) -> Option<(&LoopControl, &[Stmt])> {
    let StmtKind::Do { control: Some(control), body, .. } = &stmt.kind else { return None };
    Some((control, &body[..]))
}

impl<'a> Lowering<'a> {
    /// The pipeline form of a DO nest, or why it has none. On success the
    /// array's shadow areas are widened to the distances read.
    pub(crate) fn pipeline<'s>(&mut self, stmt: &'s Stmt) -> Result<Pipeline<'s>, Refusal>
    where
        'a: 's,
    {
        let plan = self.pipeline_of(stmt);
        #[cfg(test)]
        if let Err(why) = &plan {
            tests::REFUSALS.with(|it| it.borrow_mut().push(why.clone()));
        }
        let plan = plan?;
        let reads = BTreeMap::from([(plan.array, (-plan.below, plan.above))]);
        self.grow_shadows(plan.array, 0, &reads);
        Ok(plan)
    }

    fn pipeline_of<'s>(&self, stmt: &'s Stmt) -> Result<Pipeline<'s>, Refusal> {
        let (outer, body) = counted_loop(stmt).ok_or(Refusal::NotUnitStepLoop)?;
        let mut controls = vec![outer];
        let mut loops: Vec<&Stmt> = vec![stmt];
        // Private scalars may be assigned before the inner loop (`ISTART =
        // ...` read by its bounds) and before the one element assignment
        // (`GS = ...` read by it).
        let (before_inner, rest) = self.leading_scalar_assignments(body);
        let (before_inner, innermost, inner) = match rest {
            [inner @ Stmt { kind: StmtKind::Do { .. }, .. }] => {
                let (control, body) = counted_loop(inner).ok_or(Refusal::NotUnitStepLoop)?;
                controls.push(control);
                loops.push(inner);
                (before_inner, body, Some(inner))
            }
            _ => (&[][..], body, None),
        };
        let (scalar_assignments, rest) = self.leading_scalar_assignments(innermost);
        let assignment = match rest {
            [only @ Stmt { kind: StmtKind::Assign { .. }, .. }] => only,
            _ => return Err(Refusal::NotOneAssignment),
        };
        for control in &controls {
            // Bounds are evaluated on every process, more than once.
            for bound in [&control.lo, &control.hi] {
                self.check_replicated(bound)?;
            }
        }
        // Scalars the iterations assign: private to them, unread after the
        // nest (each process leaves its own last value).
        let mut privates: Vec<String> = Vec::new();
        for scalar in before_inner.iter().chain(scalar_assignments) {
            let StmtKind::Assign { lhs, rhs } = &scalar.kind else { continue };
            let Some(name) = lhs.as_name() else { continue };
            match self.private_scalar(stmt, stmt, &loops, name) {
                Ok(crate::private::After::Unread) => {}
                Ok(crate::private::After::LastValue) => {
                    return Err(Refusal::Unsupported(format!("{} is read after it", name.text)))
                }
                Err(why) => return Err(Refusal::Unsupported(why)),
            }
            if before_inner.iter().any(|it| std::ptr::eq(it, scalar)) {
                // Evaluated where the strips' columns are, on every process.
                self.check_replicated(rhs)?;
            }
            privates.push(name.key());
        }
        let StmtKind::Assign { lhs, rhs } = &assignment.kind else { return Err(Refusal::NotOneAssignment) };
        let ExprKind::Ref { name, args } = &lhs.kind else { return Err(Refusal::NoDistributedElement) };
        let array = self
            .lookup(&name.key())
            .filter(|it| self.distributed.contains_key(it))
            .ok_or(Refusal::NoDistributedElement)?;
        let home = &self.distributed[&array];
        if home.cyclic || home.second.is_some() || home.stride != 1 || !home.plain {
            return Err(Refusal::NotBlock(home.name.clone()));
        }
        let rank = home.lbs.len();
        if args.len() != rank {
            return Err(Refusal::NotAtIndex(home.name.clone()));
        }
        let vars: Vec<String> = controls.iter().map(|it| it.var.key()).collect();
        // The loop index `var` plus a constant, or None.
        let at = |arg: &Subscript, var: &str| -> Option<i64> {
            let Subscript::Expr(index) = arg else { return None };
            let linear = self.linear_of(index)?;
            (linear.coefs.len() == 1 && linear.coefs.get(var) == Some(&1)).then_some(linear.constant)
        };
        let dvar = vars
            .iter()
            .find(|var| at(&args[home.dim], var) == Some(0))
            .ok_or_else(|| Refusal::NotAtIndex(home.name.clone()))?
            .clone();
        // The distributed index inner: the outer index must be the
        // subscript of another dimension (the strips are its columns).
        let strip_dim = if vars.len() == 2 && dvar == vars[1] {
            let dim = (0..rank)
                .find(|k| *k != home.dim && at(&args[*k], &vars[0]) == Some(0))
                .ok_or_else(|| Refusal::OutOfOrder(home.name.clone()))?;
            Some(dim)
        } else {
            None
        };
        // The loops cut into the processes' parts (the distributed one, and
        // the strips' loop) go in steps of 1; an inner loop every process
        // runs whole may take any step.
        for (control, var) in controls.iter().zip(&vars) {
            let cut = *var == dvar || strip_dim.is_some();
            let step = control.step.as_ref().map_or(Some(1), |it| self.constant_of(it));
            if step.is_none() || (cut && step != Some(1)) {
                return Err(Refusal::NotUnitStepLoop);
            }
        }
        for (k, arg) in args.iter().enumerate() {
            if k != home.dim {
                match arg {
                    Subscript::Expr(value) => self.check_replicated(value)?,
                    _ => return Err(Refusal::NotAtIndex(home.name.clone())),
                }
            }
        }
        // The reads.
        let (mut below, mut above) = (0, 0);
        let mut stack = vec![rhs];
        for scalar in scalar_assignments {
            if let StmtKind::Assign { rhs, .. } = &scalar.kind {
                stack.push(rhs);
            }
        }
        while let Some(expr) = stack.pop() {
            match &expr.kind {
                ExprKind::Ref { name, args } => match self.lookup(&name.key()) {
                    Some(id) if id == array => {
                        if args.len() != rank {
                            return Err(Refusal::NotConstantDistance(home.name.clone()));
                        }
                        let c = at(&args[home.dim], &dvar)
                            .ok_or_else(|| Refusal::NotConstantDistance(home.name.clone()))?;
                        if let Some(dim) = strip_dim {
                            // Below: new values of this strip or earlier ones;
                            // above: old values, not yet overwritten.
                            let k = at(&args[dim], &vars[0]).ok_or_else(|| Refusal::OutOfOrder(home.name.clone()))?;
                            if (c < 0 && k > 0) || (c > 0 && k < 0) {
                                return Err(Refusal::OutOfOrder(home.name.clone()));
                            }
                        }
                        below = below.max(-c);
                        above = above.max(c);
                        for (k, arg) in args.iter().enumerate() {
                            match arg {
                                Subscript::Expr(value) if k != home.dim => self.check_replicated(value)?,
                                Subscript::Expr(_) => {}
                                _ => return Err(Refusal::NotConstantDistance(home.name.clone())),
                            }
                        }
                    }
                    Some(id) if self.distributed.contains_key(&id) => {
                        let other = &self.distributed[&id];
                        let same_place = other.same_alignment(home)
                            || (other.same_blocks(home)
                                && other.offset == home.offset
                                && other.dim == home.dim
                                && other.plain);
                        if !same_place || args.len() != other.lbs.len() || at(&args[other.dim], &dvar) != Some(0) {
                            return Err(Refusal::OtherArray(other.name.clone()));
                        }
                        for (k, arg) in args.iter().enumerate() {
                            match arg {
                                Subscript::Expr(value) if k != other.dim => self.check_replicated(value)?,
                                Subscript::Expr(_) => {}
                                _ => return Err(Refusal::OtherArray(other.name.clone())),
                            }
                        }
                    }
                    Some(id) if self.analysis.model.symbol(id).is_array() => {
                        stack.extend(args.iter().filter_map(Subscript::as_expr));
                    }
                    _ if crate::assign::ELEMENTAL.contains(&name.key().as_str()) => {
                        stack.extend(args.iter().filter_map(Subscript::as_expr));
                    }
                    _ => return Err(Refusal::Unsupported(format!("it calls {}", name.text))),
                },
                ExprKind::Name(name) if self.is_distributed_name(name) => {
                    return Err(Refusal::Unsupported(format!("it reads the whole array {}", name.text)));
                }
                ExprKind::Unary { operand, .. } | ExprKind::Paren(operand) => stack.push(operand),
                ExprKind::Binary { lhs, rhs, .. } => stack.extend([&**lhs, &**rhs]),
                ExprKind::Other(_) => {
                    return Err(Refusal::Unsupported(
                        "its right side holds a construct the backend does not lower".to_string(),
                    ))
                }
                ExprKind::Name(_) | ExprKind::Int(_) | ExprKind::Literal(_) => {}
            }
        }
        if below == 0 {
            return Err(Refusal::NoCarriedDependence);
        }
        Ok(Pipeline { stmt, inner, array, below, above, strip_dim, privates })
    }

    /// The assignments to scalars that begin `body` (a terminal CONTINUE
    /// aside), and the statements after them.
    fn leading_scalar_assignments<'s>(&self, body: &'s [Stmt]) -> (&'s [Stmt], &'s [Stmt]) {
        let body = match body.split_last() {
            Some((last, rest)) if self.is_continue(last) => rest,
            _ => body,
        };
        let count = body
            .iter()
            .take_while(|stmt| match &stmt.kind {
                StmtKind::Assign { lhs, .. } => lhs.as_name().is_some_and(|it| !self.is_distributed_name(it)),
                _ => false,
            })
            .count();
        body.split_at(count)
    }

    /// Refused when `expr` reads a distributed array or calls a procedure
    /// other than an elemental intrinsic (it is evaluated on every process).
    fn check_replicated(&self, expr: &Expr) -> Result<(), Refusal> {
        let mut stack = vec![expr];
        while let Some(expr) = stack.pop() {
            match &expr.kind {
                ExprKind::Ref { name, args } => {
                    if self.is_distributed_name(name) {
                        return Err(Refusal::OtherArray(name.text.clone()));
                    }
                    let array = self.lookup(&name.key()).is_some_and(|id| self.analysis.model.symbol(id).is_array());
                    if !array && !crate::assign::ELEMENTAL.contains(&name.key().as_str()) {
                        return Err(Refusal::Unsupported(format!("it calls {}", name.text)));
                    }
                    stack.extend(args.iter().filter_map(Subscript::as_expr));
                }
                ExprKind::Name(name) if self.is_distributed_name(name) => {
                    return Err(Refusal::OtherArray(name.text.clone()));
                }
                ExprKind::Unary { operand, .. } | ExprKind::Paren(operand) => stack.push(operand),
                ExprKind::Binary { lhs, rhs, .. } => stack.extend([&**lhs, &**rhs]),
                ExprKind::Other(_) => {
                    return Err(Refusal::Unsupported("a subscript or bound the backend does not lower".to_string()))
                }
                ExprKind::Name(_) | ExprKind::Int(_) | ExprKind::Literal(_) => {}
            }
        }
        Ok(())
    }

    /// The note of a pipelined nest.
    pub(crate) fn pipeline_note(&self, plan: &Pipeline) -> String {
        let name = &self.distributed[&plan.array].name;
        let how = if plan.strip_dim.is_some() {
            "in strips of the outer loop, as a wavefront"
        } else {
            "one process after the other"
        };
        format!(
            "runs as a pipeline ({how}): each process receives the last {} element(s) of {name} along its distributed dimension from the process before it, computes its own and sends its last ones on",
            plan.below
        )
    }

    /// The pipeline: old values above fetched first, then receive, compute
    /// and send, once (a chain) or per strip of the outer loop.
    pub(crate) fn emit_pipeline(&self, out: &mut String, plan: &Pipeline) {
        let Some((outer, _)) = counted_loop(plan.stmt) else { return };
        let inner = plan.inner.and_then(counted_loop).map(|it| it.0);
        let home = &self.distributed[&plan.array];
        let name = &home.name;
        let rank = home.lbs.len();
        let mpi = home.suffix.mpi_datatype();
        let (below, above) = (plan.below, plan.above);
        // The section of the boundary `lo:hi` along the distributed dimension
        // (and the strip along the strip's dimension).
        let section = |lo: &str, hi: &str| -> String {
            (0..rank)
                .map(|k| {
                    if k == home.dim {
                        format!("{lo}:{hi}")
                    } else if Some(k) == plan.strip_dim {
                        "hpf_pl_s:hpf_pl_e".to_string()
                    } else {
                        ":".to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let incoming = section(&format!("hpf_pl_a - {below}"), "hpf_pl_a - 1");
        let outgoing = section(&format!("hpf_pl_b - {}", below - 1), "hpf_pl_b");
        let (distributed_loop, strips) = match (plan.strip_dim, inner) {
            (Some(_), Some(inner)) => (inner, Some(outer)),
            _ => (outer, None),
        };
        let (olo, ohi) = (self.one_line(outer.lo.range), self.one_line(outer.hi.range));
        let _ = writeln!(out, "  ! hpf-ls: pipeline along the processes");
        let _ = writeln!(out, "  block");
        let _ =
            writeln!(out, "    integer :: hpf_pl_prev, hpf_pl_next, hpf_pl_a, hpf_pl_b, hpf_pl_s, hpf_pl_e, hpf_pl_w");
        let _ = writeln!(out, "    {}, allocatable :: hpf_pl_buf(:)", home.suffix.declaration());
        let _ =
            writeln!(out, "    call hpf_pipe_neighbours(hpf_d_{name}, hpf_pl_prev, hpf_pl_next, hpf_pl_a, hpf_pl_b)");
        // Old values above (and, for strips, the columns below that the
        // nest does not write) before anyone overwrites them.
        let fetch_low = if strips.is_some() { below } else { 0 };
        if above > 0 || fetch_low > 0 {
            let variant = home.variant();
            let _ = writeln!(out, "    if (hpf_pl_a <= hpf_pl_b) then");
            let _ = writeln!(
                out,
                "      call hpf_fetch_{variant}({name}, hpf_d_{name}, hpf_pl_a - {fetch_low}, hpf_pl_b + {above})"
            );
            let _ = writeln!(out, "    else\n      call hpf_fetch_{variant}({name}, hpf_d_{name}, 1, 0)\n    end if");
        }
        let mut edits = vec![
            (distributed_loop.lo.range, format!("max(({}), hpf_pl_a)", self.one_line(distributed_loop.lo.range))),
            (distributed_loop.hi.range, format!("min(({}), hpf_pl_b)", self.one_line(distributed_loop.hi.range))),
        ];
        if let Some(outer) = strips {
            edits.push((outer.lo.range, "hpf_pl_s".to_string()));
            edits.push((outer.hi.range, "hpf_pl_e".to_string()));
            // About four strips per process: each waits for one strip only.
            let _ = writeln!(out, "    hpf_pl_w = max(1, (({ohi}) - ({olo}) + 1) / (4 * hpf_nprocs))");
            let _ = writeln!(out, "    do hpf_pl_s = ({olo}), ({ohi}), hpf_pl_w");
            let _ = writeln!(out, "    hpf_pl_e = min(hpf_pl_s + hpf_pl_w - 1, ({ohi}))");
        } else {
            let _ = writeln!(out, "    hpf_pl_s = 0\n    hpf_pl_e = -1\n    hpf_pl_w = 0");
        }
        let _ = writeln!(out, "    if (hpf_pl_prev >= 0) then");
        let _ = writeln!(out, "      allocate (hpf_pl_buf(size({name}({incoming}))))");
        let _ = writeln!(
            out,
            "      call MPI_Recv(hpf_pl_buf, size(hpf_pl_buf), {mpi}, hpf_pl_prev, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE)"
        );
        let _ = writeln!(out, "      {name}({incoming}) = reshape(hpf_pl_buf, shape({name}({incoming})))");
        let _ = writeln!(out, "      deallocate (hpf_pl_buf)\n    end if");
        // (From the DO keyword: the line may hold an enclosing loop's statements.)
        let _ = writeln!(out, "  {}", crate::assign::close_shared_label(self.edited(plan.stmt.range, &edits)));
        let _ = writeln!(out, "    if (hpf_pl_next >= 0) then");
        let _ = writeln!(out, "      hpf_pl_buf = reshape({name}({outgoing}), [size({name}({outgoing}))])");
        let _ =
            writeln!(out, "      call MPI_Send(hpf_pl_buf, size(hpf_pl_buf), {mpi}, hpf_pl_next, 12, MPI_COMM_WORLD)");
        let _ = writeln!(out, "      call hpf_pipe_count(size(hpf_pl_buf))");
        let _ = writeln!(out, "      deallocate (hpf_pl_buf)\n    end if");
        if strips.is_some() {
            let _ = writeln!(out, "    end do");
        }
        let _ = writeln!(out, "  end block");
        // The indices get the values they have after the sequential nest.
        let _ = writeln!(out, "  {} = {}", outer.var.text, self.final_value(outer));
        if let Some(inner) = inner {
            let keys = [outer.var.key()];
            let bounds = [&inner.lo, &inner.hi];
            if !bounds.iter().any(|it| crate::mentions(it, &keys) || crate::mentions(it, &plan.privates)) {
                let _ =
                    writeln!(out, "  if ((({ohi}) - ({olo})) >= 0) {} = {}", inner.var.text, self.final_value(inner));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use analysis::model::ModelConfig;
    use std::cell::RefCell;
    use syntax::{LineIndex, SourceForm};

    thread_local! {
        /// The refusals of the nests the rule was asked about, in order.
        pub(super) static REFUSALS: RefCell<Vec<Refusal>> = const { RefCell::new(Vec::new()) };
    }

    /// The notes as `line: message`, the generated source and the refusals.
    fn lower(body: &str) -> (Vec<String>, String, Vec<Refusal>) {
        let text = format!(
            "program p\n  implicit none\n  integer, parameter :: n = 20\n  real(8) :: u(n, n), v(n, n), x(n), a(n), b(n), c(n), gs, t\n  \
             integer :: k(n), i, j, istart, it\n!HPF$ DISTRIBUTE u(*, BLOCK)\n!HPF$ DISTRIBUTE v(BLOCK, *)\n\
             !HPF$ DISTRIBUTE (BLOCK) :: x, a, b, k\n!HPF$ DISTRIBUTE c(CYCLIC)\n  \
             u = 1; v = 2; x = 3; a = 0.5; b = 0.25; c = 1; k = 1\n{body}\n  \
             print *, sum(u), sum(v), sum(x), sum(c)\nend program p\n"
        );
        REFUSALS.with(|it| it.borrow_mut().clear());
        let analysis = analysis::analyze(&text, SourceForm::Free, ModelConfig { number_of_processors: None });
        let generated = crate::lower(&analysis, &text).unwrap_or_else(|errors| panic!("refused: {errors:?}"));
        let index = LineIndex::new(&text);
        let notes = generated
            .notes
            .iter()
            .map(|it| format!("{}: {}", index.line_col(&text, it.range.start).0 + 1, it.message))
            .collect();
        (notes, generated.source, REFUSALS.with(|it| it.borrow().clone()))
    }

    fn pipelined(notes: &[String]) -> bool {
        notes.iter().any(|it| it.starts_with("11: runs as a pipeline"))
    }

    #[test]
    fn gauss_seidel_by_columns_runs_as_a_chain_with_old_values_fetched_first() {
        let (notes, source, refusals) = lower(
            "  do j = 2, n - 1; do i = 2, n - 1\n    u(i, j) = 0.25 * (u(i-1, j) + u(i+1, j) + u(i, j-1) + u(i, j+1))\n  end do; end do",
        );
        assert!(pipelined(&notes), "{notes:?}");
        assert!(notes.iter().all(|it| !it.contains("one process:")), "{notes:?}");
        assert!(refusals.is_empty(), "{refusals:?}");
        assert!(notes[0].contains("one process after the other"), "{notes:?}");
        // The old column above arrives before the sweep; the new one below per process.
        assert!(source.contains("call hpf_fetch_r8_22(u, hpf_d_u, hpf_pl_a - 0, hpf_pl_b + 1)"), "{source}");
        assert!(source.contains("u(:, hpf_pl_a - 1:hpf_pl_a - 1) = reshape(hpf_pl_buf"), "{source}");
        assert!(source.contains("do j = max((2), hpf_pl_a), min((n - 1), hpf_pl_b)"), "{source}");
        assert!(source.contains("hpf_pl_buf = reshape(u(:, hpf_pl_b - 0:hpf_pl_b)"), "{source}");
        assert!(source.contains("j = hpf_final((2), (n - 1), 1)"), "{source}");
    }

    #[test]
    fn gauss_seidel_by_rows_runs_as_a_wavefront_in_strips() {
        let (notes, source, _) = lower(
            "  do j = 2, n - 1; do i = 2, n - 1\n    v(i, j) = 0.25 * (v(i-1, j) + v(i+1, j) + v(i, j-1) + v(i, j+1))\n  end do; end do",
        );
        assert!(pipelined(&notes) && notes[0].contains("in strips"), "{notes:?}");
        assert!(source.contains("do hpf_pl_s = (2), (n - 1), hpf_pl_w"), "{source}");
        assert!(source.contains("v(hpf_pl_a - 1:hpf_pl_a - 1, hpf_pl_s:hpf_pl_e) = reshape"), "{source}");
        assert!(source.contains("do j = hpf_pl_s, hpf_pl_e"), "{source}");
        assert!(source.contains("do i = max((2), hpf_pl_a), min((n - 1), hpf_pl_b)"), "{source}");
        // The columns below that the sweep does not write, and the old row above.
        assert!(source.contains("call hpf_fetch_r8_21(v, hpf_d_v, hpf_pl_a - 1, hpf_pl_b + 1)"), "{source}");
    }

    #[test]
    fn a_first_order_recurrence_runs_as_a_chain_without_a_fetch() {
        let (notes, source, _) = lower("  do i = 2, n\n    x(i) = x(i-1) * a(i) + b(i)\n  end do");
        assert!(pipelined(&notes), "{notes:?}");
        assert!(!source.contains("call hpf_fetch_r8_11(x"), "{source}");
        assert!(source.contains("x(hpf_pl_a - 1:hpf_pl_a - 1) = reshape"), "{source}");
        // Two elements below: the boundary is two wide (forwarded through narrow blocks).
        let (notes, source, _) = lower("  do i = 3, n\n    x(i) = x(i-1) - x(i-2) * 0.5\n  end do");
        assert!(pipelined(&notes), "{notes:?}");
        assert!(source.contains("x(hpf_pl_b - 1:hpf_pl_b)"), "{source}");
    }

    #[test]
    fn sweeps_with_private_scalars_and_a_strided_inner_loop_run_as_pipelines() {
        // Red-black SOR along the distributed columns: `istart` (read by the
        // inner loop's bounds) and `gs` are private to the iterations.
        let (notes, source, refusals) = lower(
            "  do j = 2, n - 1\n    istart = 2 + mod(j, 2)\n    do i = istart, n - 1, 2\n      \
             gs = 0.25 * (u(i-1, j) + u(i+1, j) + u(i, j-1) + u(i, j+1))\n      u(i, j) = u(i, j) + 1.5 * (gs - u(i, j))\n    \
             end do\n  end do",
        );
        assert!(pipelined(&notes) && notes[0].contains("one process after the other"), "{notes:?}");
        assert!(refusals.is_empty(), "{refusals:?}");
        assert!(
            source.contains("do j = max((2), hpf_pl_a), min((n - 1), hpf_pl_b)\n    istart = 2 + mod(j, 2)\n"),
            "{source}"
        );
        assert!(source.contains("      gs = 0.25 * (u(i-1, j)"), "{source}");
        // Its index is not read after the nest: no final value from this process's `istart`.
        assert!(!source.contains("i = hpf_final((istart)"), "{source}");
        // Gauss-Seidel by rows with two temporaries: a wavefront.
        let (notes, _, refusals) = lower(
            "  do j = 2, n - 1; do i = 2, n - 1\n    gs = v(i-1, j) + v(i, j-1)\n    t = v(i+1, j) + v(i, j+1)\n    \
             v(i, j) = 0.25 * (gs + t)\n  end do; end do",
        );
        assert!(pipelined(&notes) && notes[0].contains("in strips"), "{notes:?} {refusals:?}");
    }

    #[test]
    fn private_scalars_read_after_the_nest_keep_it_off_the_pipeline() {
        let sweep = "  do j = 2, n - 1\n    istart = 2 + mod(j, 2)\n    do i = istart, n - 1, 2\n      \
                     gs = u(i, j-1) + u(i, j+1)\n      u(i, j) = 0.5 * gs\n    end do\n  end do\n";
        // `gs` printed after it: each process would leave its own.
        let (notes, _, refusals) = lower(&format!("{sweep}  print *, gs"));
        assert!(!pipelined(&notes), "{notes:?}");
        assert!(refusals.iter().any(|it| it.to_string().contains("gs")), "{refusals:?}");
        // `i` printed after it: its final value depends on the last `istart`.
        let (notes, _, refusals) = lower(&format!("{sweep}  print *, i"));
        assert!(!pipelined(&notes), "{notes:?}");
        assert!(
            refusals.iter().any(|it| it.to_string().contains("istart, which the bounds of a loop of the nest read")),
            "{refusals:?}"
        );
        // An implied DO over `i` assigns it: not a read.
        let (notes, _, _) = lower(&format!("{sweep}  print *, (u(i, 2), i = 1, 3)"));
        assert!(pipelined(&notes), "{notes:?}");
        // `gs` assigned anew before it is read again: its value after the nest is dead.
        let reused = "  gs = 0.0\n  do i = 1, n\n    gs = gs + x(i)\n  end do\n  print *, gs";
        let (notes, _, refusals) = lower(&format!("{sweep}{reused}"));
        assert!(pipelined(&notes), "{notes:?} {refusals:?}");
        // Not when it is read first.
        let (notes, _, _) = lower(&format!("{sweep}  print *, gs\n{reused}"));
        assert!(!pipelined(&notes), "{notes:?}");
        // Nor inside a time loop that reads it at its start, before the nest.
        let (notes, _, _) = lower(&format!("  do it = 1, 2\n  print *, gs\n{sweep}  end do"));
        assert!(notes.iter().all(|it| !it.contains("pipeline")), "{notes:?}");
        // (There the value read is the one assigned anew after the nest.)
        let (notes, _, _) = lower(&format!("  do it = 1, 2\n  print *, gs\n{sweep}{reused}\n  end do"));
        assert!(notes.iter().any(|it| it.contains("pipeline")), "{notes:?}");
    }

    #[test]
    fn independent_sweeps_with_private_bounds_run_owner_computes() {
        let (notes, source, _) = lower(
            "!HPF$ INDEPENDENT, NEW(i, istart, gs)\n  do j = 2, n - 1\n    istart = 2 + mod(j, 2)\n    \
             do i = istart, n - 1, 2\n      gs = u(i, j-1) + u(i, j+1)\n      u(i, j) = 0.5 * gs\n    end do\n  end do",
        );
        assert!(notes.iter().all(|it| !it.contains("every process runs") && !it.contains("pipeline")), "{notes:?}");
        assert!(source.contains("! hpf-ls: owner computes do j = 2, n - 1"), "{source}");
        assert!(!source.contains("MPI_Bcast"), "{source}");
    }

    #[test]
    fn nests_the_rule_refuses_say_why() {
        let cases: [(&str, Refusal); 7] = [
            // A wavefront cannot read the row above at a column its owner computes first.
            (
                "  do j = 2, n - 1\n  do i = 2, n - 1\n    v(i, j) = v(i+1, j-1)\n  end do; end do",
                Refusal::OutOfOrder("v".into()),
            ),
            // Nor the row below at a column its owner computes later (the
            // loop over the rows alone is a chain, in a loop every process runs).
            (
                "  do j = 2, n - 1\n  do i = 2, n - 1\n    v(i, j) = v(i-1, j+1)\n  end do; end do",
                Refusal::OutOfOrder("v".into()),
            ),
            ("  do i = 2, n\n    x(i) = x(i-1) + x(k(i))\n  end do", Refusal::NotConstantDistance("x".into())),
            ("  do i = 2, n\n    c(i) = c(i-1) + 1\n  end do", Refusal::NotBlock("c".into())),
            ("  do i = 2, n\n    x(i) = x(i-1) + a(i+1)\n  end do", Refusal::OtherArray("a".into())),
            ("  do i = 3, n, 2\n    x(i) = x(i-2) * 0.5\n  end do", Refusal::NotUnitStepLoop),
            ("  do i = 2, n\n    x(i) = x(i-1) * 0.5\n    b(i) = x(i)\n  end do", Refusal::NotOneAssignment),
        ];
        for (body, refusal) in cases {
            let (notes, _, refusals) = lower(body);
            assert!(!pipelined(&notes), "{body}: {notes:?}");
            assert!(refusals.contains(&refusal), "{body}: {refusals:?}, not {refusal:?}");
        }
    }

    #[test]
    fn refusals_say_why() {
        assert_eq!(
            Refusal::OutOfOrder("v".into()).to_string(),
            "it reads an element of v that a wavefront would compute on another process too late or too early"
        );
        assert_eq!(Refusal::NotBlock("c".into()).to_string(), "c is not BLOCK along one dimension with stride 1");
    }
}
