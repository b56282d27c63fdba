//! Reads, in an owner-computes DO nest, of a 1-D distributed array at an
//! index along its distributed dimension that does not change in the nest
//! (`A(I,K)` in `DO J = K+1, N; DO I = K+1, N; A(I,J) = A(I,J) - A(I,K) *
//! A(K,J)`, the update of an LU factorisation with A distributed by
//! columns): every iteration on every process reads the same slice, so its
//! owner broadcasts it once before the nest (the seed's broadcast
//! transfer), and the nest reads the copy.
//!
//! The copy holds the values before the nest: the nest must not write that
//! array, unless the distributing loop is INDEPENDENT, HPF's assertion that
//! no iteration writes what another reads.
//!
//! Only the section the nest reads moves: along each other dimension, the
//! range its subscript runs over, from the bounds of the nest's loops when
//! they are affine in scalars the nest does not assign (`A(K+1:N, K)` for
//! `DO I = K+1, N`, once per K), else the declared bounds.

use std::fmt::Write;

use analysis::eval::Linear;
use analysis::loops::{Access, AccessAttr, LoopReport, SubscriptForm};
use analysis::model::SymbolId;
use syntax::{Stmt, StmtKind, TextRange};

use crate::{closing_paren, declared_type, mpi_type, top_level_parts, Lowering};

/// One reference read from a broadcast copy.
#[derive(Clone, Debug)]
pub(crate) struct BroadcastRead {
    array: SymbolId,
    /// The reference as written, replaced by the copy's element.
    range: TextRange,
    /// Its subscripts as written, one per dimension.
    subscripts: Vec<String>,
    /// Per dimension: the first and last values its subscript takes in the
    /// nest (`None`: the declared bounds, and along the distributed one).
    extents: Vec<Option<(String, String)>>,
}

impl BroadcastRead {
    pub(crate) fn range(&self) -> TextRange {
        self.range
    }
}

impl Lowering<'_> {
    /// `access` as a read of a broadcast copy, or `None`. `nest`: the
    /// indices of its loop report (loops around the nest included), `own`
    /// the keys of the nest's own loops, `assigned` the scalars the nest
    /// assigns (its subscript must read none), `written` the arrays the nest
    /// writes.
    pub(crate) fn broadcast_read(
        &self,
        access: &Access,
        (report, loops): (&LoopReport, &[&Stmt]),
        assigned: &[String],
        written: &[SymbolId],
        independent: bool,
    ) -> Option<BroadcastRead> {
        let nest = report.nest.as_slice();
        let own: Vec<String> = crate::do_variables(loops);
        let distributed = self.distributed.get(&access.array)?;
        if access.attr != AccessAttr::Reference || distributed.second.is_some() || access.through.is_some() {
            return None;
        }
        // In no index of the nest (the index of a loop around it is one value here).
        let invariant = match access.subscripts.get(distributed.dim)? {
            SubscriptForm::Variable(_) | SubscriptForm::Constant(_) => true,
            SubscriptForm::Affine { index, .. } => nest.get(*index).is_some_and(|it| !own.contains(&it.key)),
            _ => false,
        };
        if !invariant {
            return None;
        }
        if written.contains(&access.array) && !independent && !self.slice_unwritten(access, report, loops) {
            return None;
        }
        let text = self.slice(access.range);
        let open = text.find('(')?;
        let close = closing_paren(text, open)?;
        if close + 1 != text.len() {
            return None;
        }
        let subscripts: Vec<String> = top_level_parts(&text[open + 1..close])
            .into_iter()
            .map(|(_, it)| it.trim().replace(['&', '\n'], " "))
            .collect();
        if subscripts.len() != distributed.lbs.len() || subscripts.iter().any(|it| it.contains(':') || it.is_empty()) {
            return None;
        }
        let inside = TextRange::new(access.range.start + open + 1, access.range.start + close);
        // A subscript in an unknown scalar may still move with the nest's
        // indices (`A(I + H)`: the analysis calls it a `Variable` form).
        if !self.distributed_occurrences(inside).is_empty()
            || own.iter().chain(assigned).any(|key| crate::private::mentions_word(&subscripts[distributed.dim], key))
        {
            return None;
        }
        let mut unknown = own.clone();
        unknown.extend(assigned.iter().cloned());
        let extents = (0..subscripts.len())
            .map(|dim| {
                let form = access.subscripts.get(dim)?;
                (dim != distributed.dim)
                    .then(|| self.subscript_extent(form, &subscripts[dim], (report, loops), &unknown))?
            })
            .collect();
        Some(BroadcastRead { array: access.array, range: access.range, subscripts, extents })
    }

    /// The first and last values (lowest, highest) of a subscript `text` of
    /// form `form` over the nest, as Fortran expressions evaluated before it,
    /// or `None` when they are not known there. `unknown`: the names whose
    /// values change in the nest (its loop indices, the scalars it assigns).
    fn subscript_extent(
        &self,
        form: &SubscriptForm,
        text: &str,
        (report, loops): (&LoopReport, &[&Stmt]),
        unknown: &[String],
    ) -> Option<(String, String)> {
        let fixed = |text: &str| {
            !text.contains(['(', '%']) && !unknown.iter().any(|key| crate::private::mentions_word(text, key))
        };
        match form {
            SubscriptForm::Constant(value) => Some((value.to_string(), value.to_string())),
            SubscriptForm::Variable(_) => fixed(text).then(|| (text.to_string(), text.to_string())),
            SubscriptForm::Affine { index, coef, offset } => {
                let index = report.nest.get(*index)?;
                let control = loops.iter().find_map(|it| match &it.kind {
                    StmtKind::Do { control: Some(control), .. } if control.var.key() == index.key => Some(control),
                    _ => None,
                });
                let Some(control) = control else {
                    // An index of a loop around the nest: one value in it.
                    return fixed(text).then(|| (text.to_string(), text.to_string()));
                };
                let step = index.step.filter(|it| *it != 0)?;
                let (first, last) = (self.linear_of(&control.lo)?, self.linear_of(&control.hi)?);
                if first.coefs.keys().chain(last.coefs.keys()).any(|key| unknown.contains(key)) {
                    return None;
                }
                // The subscript's values at the lowest and highest index.
                let (low, high) = if step > 0 { (first, last) } else { (last, first) };
                let at = |bound: &Linear| fortran_of(&scaled(bound, *coef, *offset));
                Some(if *coef > 0 { (at(&low), at(&high)) } else { (at(&high), at(&low)) })
            }
            _ => None,
        }
    }

    /// Whether no write of the nest (its loop report `report`, whose own
    /// DO loops are `loops`) reaches the slice `access` reads: each write's
    /// distributed subscript `c*v + o` runs over a loop of the nest and stays
    /// on one side of the slice's index (`A(I,J)` for `J = K+1, N` never
    /// reaches `A(I,K)`).
    fn slice_unwritten(&self, access: &Access, report: &LoopReport, loops: &[&Stmt]) -> bool {
        let Some(distributed) = self.distributed.get(&access.array) else { return false };
        let dim = distributed.dim;
        let as_linear = |form: &SubscriptForm| -> Option<Linear> {
            match form {
                SubscriptForm::Constant(value) => Some(Linear { coefs: Default::default(), constant: *value }),
                SubscriptForm::Affine { index, coef, offset } => Some(Linear {
                    coefs: [(report.nest.get(*index)?.key.clone(), *coef)].into_iter().collect(),
                    constant: *offset,
                }),
                _ => None,
            }
        };
        let Some(read) = access.subscripts.get(dim).and_then(as_linear) else { return false };
        report.accesses.iter().filter(|it| it.array == access.array && it.attr == AccessAttr::Update).all(|write| {
            let Some(SubscriptForm::Affine { index, coef, offset }) = write.subscripts.get(dim) else { return false };
            let Some(index) = report.nest.get(*index) else { return false };
            let control = loops.iter().find_map(|it| match &it.kind {
                StmtKind::Do { control: Some(control), .. } if control.var.key() == index.key => Some(control),
                _ => None,
            });
            let (Some(control), Some(step)) = (control, index.step) else { return false };
            // The write's values run from `c*first + o` onwards, up when c*step > 0.
            let (Some(first), Some(last)) = (self.linear_of(&control.lo), self.linear_of(&control.hi)) else {
                return false;
            };
            let at = |bound: &Linear| -> Linear {
                let mut value = Linear {
                    coefs: bound.coefs.iter().map(|(key, it)| (key.clone(), it * coef)).collect(),
                    constant: bound.constant * coef + offset,
                };
                for (key, it) in &read.coefs {
                    *value.coefs.entry(key.clone()).or_default() -= it;
                }
                value.constant -= read.constant;
                value.coefs.retain(|_, it| *it != 0);
                value
            };
            // (write - read) at the first and last iterations, where constant.
            let constant = |it: Linear| it.coefs.is_empty().then_some(it.constant);
            let (from_first, from_last) = (constant(at(&first)), constant(at(&last)));
            let rising = coef * step > 0;
            match (rising, from_first, from_last) {
                (true, Some(gap), _) | (false, _, Some(gap)) if gap > 0 => true,
                (true, _, Some(gap)) | (false, Some(gap), _) if gap < 0 => true,
                _ => false,
            }
        })
    }

    /// Before the nest: opens a BLOCK with one copy per distinct slice
    /// read, which its owner fills and broadcasts; returns the edits that
    /// make the nest read the copies. The caller closes the BLOCK after it.
    pub(crate) fn emit_broadcasts(&self, out: &mut String, reads: &[BroadcastRead]) -> Vec<(TextRange, String)> {
        if reads.is_empty() {
            return Vec::new();
        }
        // One copy per array and distributed index.
        let slice_of = |read: &BroadcastRead| {
            (read.array, read.subscripts[self.distributed[&read.array].dim].to_ascii_lowercase())
        };
        let mut slices: Vec<(SymbolId, String)> = Vec::new();
        for read in reads {
            let key = slice_of(read);
            if !slices.contains(&key) {
                slices.push(key);
            }
        }
        let _ = writeln!(out, "  block");
        for (k, (array, _)) in slices.iter().enumerate() {
            let rank = self.distributed[array].lbs.len() - 1;
            let declared = declared_type(self.analysis.model.symbol(*array));
            if rank == 0 {
                let _ = writeln!(out, "  {declared} :: hpf_bc_{}", k + 1);
            } else {
                let _ = writeln!(out, "  {declared}, allocatable :: hpf_bc_{}({})", k + 1, vec![":"; rank].join(","));
            }
        }
        for (k, (array, index)) in slices.iter().enumerate() {
            let distributed = &self.distributed[array];
            let name = &distributed.name;
            let rank = distributed.lbs.len() - 1;
            let copy = format!("hpf_bc_{}", k + 1);
            let readers: Vec<&BroadcastRead> =
                reads.iter().filter(|it| slice_of(it) == (*array, index.clone())).collect();
            let bounds: Vec<String> = (0..distributed.lbs.len())
                .filter(|it| *it != distributed.dim)
                .map(|it| read_bounds(distributed, it, &readers))
                .collect();
            if !bounds.is_empty() {
                let _ = writeln!(out, "  allocate ({copy}({}))", bounds.join(", "));
            }
            let local = if distributed.cyclic { format!("hpf_lx(hpf_d_{name}, {index})") } else { index.clone() };
            let slice: Vec<String> = (0..distributed.lbs.len())
                .map(|it| if it == distributed.dim { local.clone() } else { read_bounds(distributed, it, &readers) })
                .collect();
            let size = if bounds.is_empty() { "1".to_string() } else { format!("size({copy})") };
            let _ = writeln!(out, "  if (hpf_owns(hpf_d_{name}, {index})) {copy} = {name}({})", slice.join(", "));
            let root = format!("hpf_owner(hpf_d_{name}, {index})");
            let at_root = format!("hpf_owns(hpf_d_{name}, {index})");
            // Its size in bytes from its bounds, known before the copy is declared.
            let extents: Vec<String> = (0..distributed.lbs.len())
                .filter(|it| *it != distributed.dim)
                .map(|it| {
                    let bounds = read_bounds(distributed, it, &readers);
                    let (lo, hi) = bounds.split_once(':').unwrap_or(("1", "0"));
                    format!("max(0, ({hi}) - ({lo}) + 1)")
                })
                .collect();
            let mut bytes = format!("(storage_size({name}) / 8)");
            for extent in &extents {
                bytes = format!("{bytes} * {extent}");
            }
            let mpi = mpi_type(distributed.suffix);
            let key = self.owner_key(*array, index);
            let spec = crate::owner_bcasts::BcastSpec {
                root: &root,
                key: &key,
                buffer: &copy,
                rank,
                count: &size,
                mpi: &mpi,
                at_root: Some(&at_root),
                bytes_before: Some(bytes),
            };
            self.emit_owner_bcast(out, spec);
        }
        reads
            .iter()
            .map(|read| {
                let distributed = &self.distributed[&read.array];
                let key = slice_of(read);
                let k = slices.iter().position(|it| *it == key).expect("listed above") + 1;
                let others: Vec<&str> = read
                    .subscripts
                    .iter()
                    .enumerate()
                    .filter(|(it, _)| *it != distributed.dim)
                    .map(|(_, it)| it.as_str())
                    .collect();
                let text = if others.is_empty() {
                    format!("hpf_bc_{k}")
                } else {
                    format!("hpf_bc_{k}({})", others.join(", "))
                };
                (read.range, text)
            })
            .collect()
    }
}

/// The bounds `lo:hi` along dimension `dim` of what `readers` read: the
/// lowest and highest of their extents, within the declared bounds; the
/// declared bounds when one extent is not known.
fn read_bounds(distributed: &crate::Distributed, dim: usize, readers: &[&BroadcastRead]) -> String {
    let (lb, ub) = (&distributed.lbs[dim], &distributed.ubs[dim]);
    let extents: Option<Vec<&(String, String)>> =
        readers.iter().map(|it| it.extents.get(dim).and_then(Option::as_ref)).collect();
    let Some(extents) = extents.filter(|it| !it.is_empty()) else { return format!("{lb}:{ub}") };
    let lows: Vec<&str> = extents.iter().map(|it| it.0.as_str()).collect();
    let highs: Vec<&str> = extents.iter().map(|it| it.1.as_str()).collect();
    format!("{}:{}", clamped("max", lb, &lows), clamped("min", ub, &highs))
}

/// `max(lb, e1, e2, ...)` (or `min`), folded when every `e` is a literal.
fn clamped(which: &str, bound: &crate::Bound, values: &[&str]) -> String {
    let literals: Option<Vec<i64>> = values.iter().map(|it| it.parse::<i64>().ok()).collect();
    match (literals, bound.known()) {
        (Some(literals), Some(bound)) if which == "max" => literals.into_iter().fold(bound, i64::max).to_string(),
        (Some(literals), Some(bound)) => literals.into_iter().fold(bound, i64::min).to_string(),
        _ => format!("{which}({bound}, {})", values.join(", ")),
    }
}

/// `coef * value + offset`.
fn scaled(value: &Linear, coef: i64, offset: i64) -> Linear {
    Linear {
        coefs: value.coefs.iter().map(|(key, it)| (key.clone(), it * coef)).filter(|it| it.1 != 0).collect(),
        constant: value.constant * coef + offset,
    }
}

/// `value` as a Fortran integer expression (`k + 1`, `2*m - 3`).
fn fortran_of(value: &Linear) -> String {
    let mut text = String::new();
    for (key, coef) in &value.coefs {
        let sign = if *coef < 0 {
            "-"
        } else if text.is_empty() {
            ""
        } else {
            "+"
        };
        let magnitude = coef.unsigned_abs();
        let term = if magnitude == 1 { key.clone() } else { format!("{magnitude}*{key}") };
        text = if text.is_empty() { format!("{sign}{term}") } else { format!("{text} {sign} {term}") };
    }
    match (text.is_empty(), value.constant) {
        (true, constant) => constant.to_string(),
        (false, 0) => text,
        (false, constant) if constant < 0 => format!("{text} - {}", constant.unsigned_abs()),
        (false, constant) => format!("{text} + {constant}"),
    }
}
