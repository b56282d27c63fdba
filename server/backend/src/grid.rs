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
//! - whole-array assignments of elemental expressions of arrays of the same
//!   blocks (`U = 0`, `V = U`), on each process's box;
//! - element assignments from replicated data, by the element's owner.
//!
//! Every other statement that touches such an array runs on rank 0 on
//! gathered copies (`hpf_gather_*`/`hpf_scatter_*` assemble and split the
//! boxes), with a note; output statements print the gathered copies.

use std::fmt::Write;

use syntax::{Stmt, TextRange};

use crate::{Distributed, Lowering, Plan, SecondAxis};

/// Whether the elements of both arrays (one of them at least distributed in
/// two dimensions) at the same template cells live on the same process.
pub(crate) fn same_grid_blocks(one: &Distributed, other: &Distributed) -> bool {
    let (Some(a), Some(b)) = (&one.second, &other.second) else { return false };
    let first = one.dim == other.dim
        && (one.target == other.target
            || (one.template_lo == other.template_lo
                && one.template_hi == other.template_hi
                && one.block == other.block));
    let second = a.dim == b.dim
        && a.procs == b.procs
        && (one.target == other.target
            || (a.template_lo == b.template_lo && a.template_hi == b.template_hi && a.block == b.block));
    first && second
}

/// The descriptors of an array distributed in two dimensions and its allocation.
pub(crate) fn emit_alloc(out: &mut String, distributed: &Distributed, second: &SecondAxis) {
    let name = &distributed.name;
    let (p1, p2) = second.procs;
    let _ = writeln!(
        out,
        "  hpf_d_{name}(1) = hpf_make_grid_desc({}, {}, {}, {}, {}, {}, 1, {p1}, {p2})",
        distributed.lb,
        distributed.ub,
        distributed.offset,
        distributed.template_lo,
        distributed.template_hi,
        distributed.block
    );
    let _ = writeln!(
        out,
        "  hpf_d_{name}(2) = hpf_make_grid_desc({}, {}, {}, {}, {}, {}, 2, {p1}, {p2})",
        second.lb, second.ub, second.offset, second.template_lo, second.template_hi, second.block
    );
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

    /// The owner-computes form of a DO nest on arrays distributed in two
    /// dimensions, or why it has none.
    pub(crate) fn grid_nest<'s>(&mut self, _stmt: &'s Stmt) -> Result<Plan<'s>, String>
    where
        'a: 's,
    {
        Err("not yet".to_string())
    }

    /// The parallel form of a statement (not a DO loop) on arrays
    /// distributed in two dimensions, or why it has none.
    pub(crate) fn grid_statement<'s>(&mut self, _stmt: &'s Stmt) -> Result<Plan<'s>, String>
    where
        'a: 's,
    {
        Err("not yet".to_string())
    }
}
