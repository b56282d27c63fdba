//! What a REALIGN or REDISTRIBUTE moves: for every array of a unit whose
//! mapping differs between two mapping epochs, the elements whose owning
//! process changes and the messages that carry them (one per pair of
//! processes), counted element by element. Processes are numbered as the
//! loop analysis numbers them (column-major over the arrangement), so an
//! arrangement of another shape with as many processes (`P(4)` after
//! `Q(2,2)`) is compared rank by rank.

use std::collections::BTreeSet;

use crate::model::{Axis, Format, Model, SymbolId, UnitId};

/// Arrays with more elements than this are not counted (the count walks
/// every element).
pub const MAX_COUNTED_ELEMENTS: i64 = 1 << 20;

/// What one array's remap moves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemapMove {
    pub array: SymbolId,
    /// `(elements, messages)`, or why they are not counted.
    pub count: Result<(u64, u64), String>,
}

/// The arrays of `unit` mapped differently by `before` and `after` (two
/// epochs of the same model), with what each moves.
pub fn remap_moves(before: &Model, after: &Model, unit: UnitId) -> Vec<RemapMove> {
    let Some(unit_model) = before.units.get(unit) else { return Vec::new() };
    let mut res = Vec::new();
    for index in 0..unit_model.symbols.len() {
        let id = SymbolId { unit, index };
        if !before.symbol(id).is_array() || same_mapping(before, after, id) {
            continue;
        }
        res.push(RemapMove { array: id, count: count_moves(before, after, id) });
    }
    res
}

/// The same final target, axes and distribution.
fn same_mapping(before: &Model, after: &Model, id: SymbolId) -> bool {
    let (Some(old), Some(new)) = (before.resolve(id), after.resolve(id)) else {
        return before.resolve(id).is_none() && after.resolve(id).is_none();
    };
    let distribution = |model: &Model, target: SymbolId| {
        model.symbol(target).mapping.distribution.as_ref().map(|it| (it.formats.clone(), it.onto))
    };
    old == new && distribution(before, old.target) == distribution(after, new.target)
}

/// Per distributed target dimension: where element `i` goes along it.
struct OwnerAxis {
    /// `Some((dim, stride, offset))`: template index `stride * i[dim] + offset`; `None`: a constant.
    source: Option<(usize, i64, i64)>,
    constant: i64,
    block: i64,
    procs: i64,
    lower: i64,
}

/// The rank that owns each element of `array` under `model`.
struct Owners {
    axes: Vec<OwnerAxis>,
}

impl Owners {
    fn new(model: &Model, array: SymbolId) -> Result<Owners, String> {
        let resolved = model.resolve(array).ok_or("an ALIGN chain has a cycle")?;
        let target = model.symbol(resolved.target);
        let distribution = target.mapping.distribution.as_ref().ok_or("it is not distributed on one side")?;
        if distribution.formats.is_empty() {
            return Err("the distribution is only known from the actual argument".to_string());
        }
        let counts = model.processor_counts(distribution);
        let mut axes = Vec::new();
        for (target_dim, format) in distribution.formats.iter().enumerate() {
            if *format == Format::Collapsed {
                continue;
            }
            let procs = counts
                .get(axes.len())
                .copied()
                .flatten()
                .ok_or("the number of processors is not known (set it with --processors)")?;
            let extent = target.shape.get(target_dim).ok_or("the distribution does not match the target's rank")?;
            let lower = extent.lo.known().ok_or("the target's bounds are not known")?;
            let block = match *format {
                Format::Block => {
                    crate::model::block_size(extent.extent().ok_or("the target's bounds are not known")?, procs)
                }
                Format::BlockOf(Some(m)) | Format::Cyclic(Some(m)) => m,
                Format::BlockOf(None) | Format::Cyclic(None) => return Err("the block size is not known".to_string()),
                Format::GenBlock | Format::Indirect => {
                    return Err("GEN_BLOCK and INDIRECT distributions are not counted".to_string())
                }
                Format::Collapsed => unreachable!("skipped above"),
            };
            let (source, constant) = match resolved.axes.get(target_dim).copied().unwrap_or(Axis::Unknown) {
                Axis::Affine { source_dim, stride, offset } => (Some((source_dim, stride, offset)), 0),
                Axis::Constant(value) => (None, value),
                Axis::Replicated => return Err("it is replicated along a distributed dimension".to_string()),
                Axis::Unknown => return Err("the alignment is not known at compile time".to_string()),
            };
            axes.push(OwnerAxis { source, constant, block, procs, lower });
        }
        Ok(Owners { axes })
    }

    fn rank(&self, element: &[i64]) -> i64 {
        let mut rank = 0;
        let mut scale = 1;
        for axis in &self.axes {
            let index = match axis.source {
                Some((dim, stride, offset)) => stride * element[dim] + offset,
                None => axis.constant,
            };
            rank += scale * crate::transfer::owner_coord(axis.block, axis.procs, axis.lower, index);
            scale *= axis.procs;
        }
        rank
    }
}

fn count_moves(before: &Model, after: &Model, array: SymbolId) -> Result<(u64, u64), String> {
    let symbol = before.symbol(array);
    let bounds: Vec<(i64, i64)> = symbol
        .shape
        .iter()
        .map(|it| Some((it.lo.known()?, it.hi.known()?)))
        .collect::<Option<_>>()
        .ok_or("the array's bounds are not known")?;
    let size = bounds.iter().try_fold(1_i64, |acc, (lo, hi)| acc.checked_mul((hi - lo + 1).max(0)));
    if size.is_none_or(|it| it > MAX_COUNTED_ELEMENTS) {
        return Err(format!("the array has more than {MAX_COUNTED_ELEMENTS} elements"));
    }
    let (old, new) = (Owners::new(before, array)?, Owners::new(after, array)?);
    if bounds.iter().any(|(lo, hi)| hi < lo) {
        return Ok((0, 0));
    }
    let mut element: Vec<i64> = bounds.iter().map(|it| it.0).collect();
    let mut moved = 0;
    let mut pairs = BTreeSet::new();
    'elements: loop {
        let (from, to) = (old.rank(&element), new.rank(&element));
        if from != to {
            moved += 1;
            pairs.insert((from, to));
        }
        // The next element, first dimension fastest.
        for (dim, (lo, hi)) in bounds.iter().enumerate() {
            if element[dim] < *hi {
                element[dim] += 1;
                continue 'elements;
            }
            element[dim] = *lo;
        }
        break;
    }
    Ok((moved, pairs.len() as u64))
}

/// What the remap directive that starts at `directive` moves: the arrays
/// of its unit mapped differently after it than before it.
pub fn moves_of_directive(analysis: &crate::FileAnalysis, directive: usize) -> Option<Vec<RemapMove>> {
    let model = &analysis.model;
    let unit = model.units.iter().position(|it| it.remaps.iter().any(|remap| remap.directive.start == directive))?;
    let epochs = crate::loops::MappingEpochs::new(model, unit);
    let before = epochs.epoch_of(directive);
    Some(remap_moves(epochs.model(before), epochs.model(before + 1), unit))
}
