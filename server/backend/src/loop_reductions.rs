//! Scalar reductions in an owner-computes DO nest: `s = s + e`,
//! `s = s - e`, `s = s * e`, `s = max(s, e)`, `s = min(s, e)` on a
//! replicated scalar that the nest mentions nowhere else, and LOGICAL
//! flags the nest only sets, all to `.true.` (or all to `.false.`):
//! `if (a(i) > a(i+1)) swapped = .true.` ends true when any process set it. Each process
//! runs its own iterations from a partial value, then the partials are
//! combined so every process holds the sequential result:
//! - INTEGER (exact in any order): rank 0 starts from the scalar's value,
//!   the others from the operation's identity (max and min from the value
//!   itself), then one `MPI_Allreduce`;
//! - REAL and DOUBLE PRECISION by default the same way, the partial sums
//!   and products combined in rank order on every process
//!   (`hpf_combine_*`), so a run repeats bit for bit on the same number of
//!   processes;
//! - REAL and DOUBLE PRECISION with ordered reductions
//!   (`LowerOptions::ordered_reductions`), in the sequential order: along the chain
//!   of processes (a BLOCK home, each process's iterations one contiguous
//!   run), each waits for the previous one's value, continues from it, and
//!   hands it on; the last one broadcasts it. The same for sums, products,
//!   MAX and MIN (whose result with signed zeros or NaNs depends on the
//!   order too).
//!
//! A scalar the nest also stores into array elements (`s = s + x(i)`,
//! `y(i) = s`) is a scan: each iteration needs the running value, not only
//! the end. Along a chain it runs as above; otherwise as a parallel prefix
//! (`scan.rs`).

use std::fmt::Write;

use analysis::model::SymbolKind;
use syntax::{BinaryOp, Expr, ExprKind, Name, Stmt, StmtKind, Subscript};

use crate::element_type::{ElementType, ReductionOp};
use crate::{element_suffix, mentions, Distributed, Lowering};

/// The operation of a scalar reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    /// `+` and `-`.
    Sum,
    Product,
    Max,
    Min,
    /// A LOGICAL flag only ever set to `.true.` (`.false.` for `And`):
    /// it ends true when any iteration set it (or it was).
    Or,
    And,
}

/// A scalar a nest reduces.
#[derive(Clone, Debug)]
pub(crate) struct LoopReduction {
    /// As written.
    name: String,
    op: Op,
    /// The runtime's element type.
    suffix: ElementType,
    /// A floating-point reduction keeps the sequential order (`LowerOptions`).
    ordered: bool,
    /// The nest also stores the running value into array elements.
    scan: bool,
}

impl LoopReduction {
    /// Whether the partials are combined along the chain of processes.
    pub(crate) fn chained(&self) -> bool {
        self.ordered && self.suffix.is_floating()
    }

    /// Whether it is a scan run as a parallel prefix (`scan.rs`).
    pub(crate) fn is_prefix(&self) -> bool {
        self.scan && !self.chained()
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn op(&self) -> Op {
        self.op
    }

    pub(crate) fn suffix(&self) -> ElementType {
        self.suffix
    }
}

impl Lowering<'_> {
    /// The reduction the nest `nest` makes of the scalar `name`: every
    /// statement of the nest that names it accumulates into it with one
    /// operation. `None` when it is not one; `Err` when it is one the
    /// backend cannot combine in the sequential result.
    pub(crate) fn loop_reduction(&self, nest: &Stmt, name: &Name) -> Option<Result<LoopReduction, String>> {
        let key = name.key();
        let mut op = None;
        let mut scan = false;
        let keys = [key.clone()];
        let mut stack = vec![nest];
        while let Some(stmt) = stack.pop() {
            stack.extend(stmt.children());
            if !self.mentions_scalar(stmt, &key) {
                continue;
            }
            let StmtKind::Assign { lhs, rhs } = &stmt.kind else { return None };
            if lhs.as_name().is_none_or(|it| it.key() != key) {
                // `y(i) = s`: the running value stored into an element.
                if matches!(lhs.kind, ExprKind::Ref { .. }) && !mentions(lhs, &keys) {
                    scan = true;
                    continue;
                }
                return None;
            }
            let this = self.accumulation(rhs, &key)?;
            if op.is_some_and(|it| it != this) {
                return None;
            }
            op = Some(this);
        }
        let op = op?;
        if scan && matches!(op, Op::Or | Op::And) {
            return None;
        }
        let id = self.lookup(&key);
        let symbol = id.map(|it| self.analysis.model.symbol(it));
        let why = |why: &str| Some(Err(format!("it reduces the scalar {}, {why}", name.text)));
        let Some(symbol) = symbol.filter(|it| it.kind == SymbolKind::Variable && it.shape.is_empty()) else {
            return why("which is not a declared scalar variable");
        };
        // A scalar dummy (`SUBROUTINE RESIDU(RMAX)`) is reduced in place: a
        // dummy the procedure defines may not be another name of what the
        // loop reads (the standard forbids that aliasing).
        if id.is_some_and(|it| it.unit != self.main) || self.aliased(&key) {
            return why("which is not a local variable of this program unit");
        }
        // MAX and MIN need an order: not on COMPLEX.
        let fits = |it: ElementType| match op {
            // MPI_LOR and MPI_LAND take MPI_LOGICAL: the default kind only.
            Op::Or | Op::And => it == ElementType::L4,
            Op::Max | Op::Min => it.allows(ReductionOp::Order),
            _ => it.allows(ReductionOp::Arithmetic),
        };
        let suffix = match element_suffix(symbol) {
            Some(suffix) if fits(suffix) => suffix,
            _ => return why("whose type the backend does not reduce"),
        };
        Some(Ok(LoopReduction { name: name.text.clone(), op, suffix, ordered: self.ordered_reductions, scan }))
    }

    /// The operation of `rhs` when it is `s op e` (`s` the scalar `key`,
    /// `e` not naming it; sums may chain: `s + a - b`) or `max(s, e)`,
    /// `min(e, s)`.
    fn accumulation(&self, rhs: &Expr, key: &str) -> Option<Op> {
        let keys = [key.to_string()];
        let is_scalar = |expr: &Expr| expr.as_name().is_some_and(|it| it.key() == key);
        match &rhs.kind {
            ExprKind::Literal(text) if text.eq_ignore_ascii_case(".true.") => Some(Op::Or),
            ExprKind::Literal(text) if text.eq_ignore_ascii_case(".false.") => Some(Op::And),
            ExprKind::Binary { op: BinaryOp::Add | BinaryOp::Sub, lhs, rhs } if !mentions(rhs, &keys) => {
                if is_scalar(lhs) {
                    return Some(Op::Sum);
                }
                (self.accumulation(lhs, key)? == Op::Sum).then_some(Op::Sum)
            }
            ExprKind::Binary { op: BinaryOp::Mul, lhs, rhs } if is_scalar(lhs) && !mentions(rhs, &keys) => {
                Some(Op::Product)
            }
            ExprKind::Ref { name, args } if args.len() == 2 && self.lookup(&name.key()).is_none() => {
                let op = match name.key().as_str() {
                    // The specific names of FORTRAN 77 (`DMAX1(RMAX, DABS(R))`).
                    "max" | "amax0" | "amax1" | "dmax1" | "max0" | "max1" => Op::Max,
                    "min" | "amin0" | "amin1" | "dmin1" | "min0" | "min1" => Op::Min,
                    _ => return None,
                };
                let [Subscript::Expr(first), Subscript::Expr(second)] = &args[..] else { return None };
                let one_is_scalar =
                    (is_scalar(first) && !mentions(second, &keys)) || (is_scalar(second) && !mentions(first, &keys));
                one_is_scalar.then_some(op)
            }
            _ => None,
        }
    }

    /// Why the reductions cannot run in parallel in a nest whose home is
    /// `home`, or `Ok`: a chain needs each process's iterations in one run,
    /// in the order of the processes.
    pub(crate) fn check_loop_reductions(
        &self,
        reductions: &[LoopReduction],
        home: &Distributed,
        outermost: bool,
    ) -> Result<(), String> {
        let mut chains = reductions.iter().filter(|it| it.chained());
        let Some(chained) = chains.next() else { return Ok(()) };
        let why = |why: &str| Err(format!("it reduces the floating-point scalar {} {why}", chained.name));
        // Each process waits for the previous one before its iterations:
        // a second chain would wait for a value sent after a collective.
        if let Some(second) = chains.next() {
            return why(&format!("and {} (one chain of processes per loop)", second.name));
        }
        if home.cyclic || home.stride <= 0 || home.second.is_some() {
            return why("over a CYCLIC or reversed distribution (its order would change)");
        }
        if !outermost {
            return why("in an inner distributing loop (its order would change)");
        }
        Ok(())
    }

    /// Before the local iterations: each process's starting partial value.
    pub(crate) fn emit_reduction_starts(&self, out: &mut String, reductions: &[LoopReduction], step: i64) {
        for reduction in reductions.iter().filter(|it| !it.is_prefix()) {
            let name = &reduction.name;
            if reduction.chained() {
                let _ = writeln!(out, "  call hpf_chain_recv_{}({name}, {step})", reduction.suffix);
                continue;
            }
            let identity = match reduction.op {
                Op::Sum => "0",
                Op::Product => "1",
                Op::Max | Op::Min | Op::Or | Op::And => continue,
            };
            let _ = writeln!(out, "  if (hpf_rank /= 0) {name} = {identity}");
        }
    }

    /// After the local iterations: the partials combined on every process.
    /// The chain first: the next process waits for it before its
    /// iterations, so no collective may come before the send.
    pub(crate) fn emit_reduction_ends(&self, out: &mut String, reductions: &[LoopReduction], step: i64) {
        for reduction in reductions.iter().filter(|it| it.chained()) {
            let _ = writeln!(out, "  call hpf_chain_send_{}({}, {step})", reduction.suffix, reduction.name);
        }
        for reduction in reductions.iter().filter(|it| !it.chained() && !it.is_prefix()) {
            let name = &reduction.name;
            let op = match reduction.op {
                Op::Sum => "MPI_SUM",
                Op::Product => "MPI_PROD",
                Op::Max => "MPI_MAX",
                Op::Min => "MPI_MIN",
                Op::Or => "MPI_LOR",
                Op::And => "MPI_LAND",
            };
            crate::reduce::emit_combine(out, name, reduction.suffix, op);
        }
    }
}
