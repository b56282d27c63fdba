//! What a loop moves for one array when all its references there are
//! fetched together, as the MPI backend does (one message per pair of
//! processes and array, carrying every element the receiver's iterations
//! read): the union of the references' transfers. Each reference's own
//! count ([`crate::transfer::count_transfer`]) counts an element again when
//! another reference needs it too (`U(I-2)` and `U(I-1)` share the element
//! next to the block boundary; the nine points of a 2-D stencil share the
//! corners and the sides), so their sum overstates a halo exchange.
//!
//! The union is counted on the elements themselves, but only over the
//! iterations that can read off-process: along a processor dimension
//! driven by one loop counter, the owners change only at block
//! boundaries, so the counter's values are cut into runs of constant
//! owners (by jumping from boundary to boundary, never value by value) and
//! only the runs where some reference's element lives elsewhere are
//! visited. A halo of width w along BLOCK costs about `2 * w * p` values of
//! that counter times the other counters' trips. Beyond
//! [`MAX_VISITS`] element visits the union is not counted (`None`).

use std::collections::{BTreeMap, HashSet};

use crate::loops::{placements, Access, AccessAttr, LoopReport, SubscriptForm};
use crate::model::Model;
use crate::transfer::{Message, Placement, TransferCount};

/// The most (iteration, reference) pairs visited for one union.
pub const MAX_VISITS: u64 = 8_000_000;

/// The most block boundaries followed along one counter.
const MAX_RUNS: usize = 2_000_000;

/// The elements the references `accesses` of one array (all references or
/// all updates, in `report`'s nest) move together, or `None` when that is
/// not known: bounds or distributions unknown, a subscript that is not
/// affine in one counter, a replicated home, or too much work.
pub fn union_transfer(model: &Model, report: &LoopReport, accesses: &[&Access]) -> Option<TransferCount> {
    let first = accesses.first()?;
    if accesses.iter().any(|it| it.array != first.array || it.attr != first.attr) {
        return None;
    }
    let home = report.home.as_ref()?;
    let trips: Vec<u64> = report.nest.iter().map(|it| it.trips()).collect::<Option<_>>()?;
    if trips.contains(&0) {
        return Some(TransferCount::default());
    }
    let (shape, home_places) = placements(model, home.array, &home.subscripts, &report.nest).ok()??;
    let mut references = Vec::new();
    for access in accesses {
        let places = match placements(model, access.array, &access.subscripts, &report.nest).ok()? {
            Some((access_shape, places)) if access_shape == shape => places,
            Some(_) => return None,
            None => vec![Placement::Everywhere; shape.len()],
        };
        let (from, to) = match access.attr {
            AccessAttr::Reference => (places, home_places.clone()),
            AccessAttr::Update => (home_places.clone(), places),
        };
        // An iteration that runs everywhere along a dimension moves nothing
        // there; this union does not model it.
        if to.contains(&Placement::Everywhere) {
            return None;
        }
        let element = element_of(access, report)?;
        references.push(Reference { from, to, element });
    }
    Union { trips, shape, references }.count()
}

/// One array subscript as a function of the counters: `start + per_step * k_var`.
#[derive(Clone, Copy)]
struct ElementIndex {
    var: Option<usize>,
    start: i64,
    per_step: i64,
}

fn element_of(access: &Access, report: &LoopReport) -> Option<Vec<ElementIndex>> {
    access
        .subscripts
        .iter()
        .map(|form| match form {
            SubscriptForm::Affine { index, coef, offset } => {
                let nest_index = report.nest.get(*index)?;
                let start = coef.checked_mul(nest_index.lo?)?.checked_add(*offset)?;
                let per_step = coef.checked_mul(nest_index.step?)?;
                Some(ElementIndex { var: Some(*index), start, per_step })
            }
            SubscriptForm::Constant(value) => Some(ElementIndex { var: None, start: *value, per_step: 0 }),
            _ => None,
        })
        .collect()
}

struct Reference {
    from: Vec<Placement>,
    to: Vec<Placement>,
    element: Vec<ElementIndex>,
}

struct Union {
    trips: Vec<u64>,
    shape: Vec<i64>,
    references: Vec<Reference>,
}

/// Half-open runs `[start, end)` of a counter's values.
type Runs = Vec<(u64, u64)>;

impl Union {
    fn count(&self) -> Option<TransferCount> {
        let nvars = self.trips.len();
        // Per processor dimension: the counters its owners depend on.
        let mut dims_of_var: Vec<Vec<usize>> = vec![Vec::new(); nvars];
        let mut any_dim_unprunable = false;
        let mut constant_dims_move = false;
        for dim in 0..self.shape.len() {
            let mut vars: Vec<usize> =
                self.references.iter().flat_map(|it| [&it.from[dim], &it.to[dim]]).filter_map(moving_var).collect();
            vars.sort_unstable();
            vars.dedup();
            match vars[..] {
                [] => constant_dims_move |= self.references.iter().any(|it| self.dim_moves(it, dim, None)),
                [var] => dims_of_var[var].push(dim),
                _ => any_dim_unprunable = true,
            }
        }
        // The values each counter takes in the visited iterations.
        let used: Vec<bool> = (0..nvars)
            .map(|var| {
                !dims_of_var[var].is_empty()
                    || self.references.iter().any(|it| {
                        it.element.iter().any(|index| index.var == Some(var) && index.per_step != 0)
                            || it.from.iter().chain(&it.to).any(|place| moving_var(place) == Some(var))
                    })
            })
            .collect();
        let all = |var: usize| -> Runs {
            if used[var] {
                vec![(0, self.trips[var])]
            } else {
                vec![(0, 1)]
            }
        };
        // Iterations are visited as a disjoint union of boxes of runs.
        let mut boxes: Vec<Vec<Runs>> = Vec::new();
        if any_dim_unprunable || constant_dims_move {
            boxes.push((0..nvars).map(all).collect());
        } else {
            let mut earlier: Vec<(usize, Runs)> = Vec::new();
            for var in 0..nvars {
                if dims_of_var[var].is_empty() {
                    continue;
                }
                let relevant = self.relevant_runs(var, &dims_of_var[var])?;
                let mut runs: Vec<Runs> = (0..nvars).map(all).collect();
                for (earlier_var, earlier_relevant) in &earlier {
                    runs[*earlier_var] = complement(earlier_relevant, self.trips[*earlier_var]);
                }
                runs[var] = relevant.clone();
                boxes.push(runs);
                earlier.push((var, relevant));
            }
        }
        let visits: u64 = boxes
            .iter()
            .map(|runs| runs.iter().map(|it| it.iter().map(|(s, e)| e - s).sum::<u64>()).product::<u64>())
            .sum::<u64>()
            .saturating_mul(self.references.len() as u64);
        if visits > MAX_VISITS {
            return None;
        }
        let mut moved: HashSet<(u32, u32, Vec<i64>)> = HashSet::new();
        let mut counters = vec![0u64; nvars];
        for runs in &boxes {
            if runs.iter().any(|it| it.is_empty()) {
                continue;
            }
            // An odometer over the runs of every counter.
            let mut position: Vec<(usize, u64)> = runs.iter().map(|it| (0, it[0].0)).collect();
            'odometer: loop {
                for (var, (_, value)) in position.iter().enumerate() {
                    counters[var] = *value;
                }
                for reference in &self.references {
                    let dst = self.rank(&reference.to, &counters, None);
                    let src = self.rank(&reference.from, &counters, Some(&reference.to));
                    if src != dst {
                        let element =
                            reference.element.iter().map(|it| value_of(it, &counters)).collect::<Option<Vec<i64>>>()?;
                        moved.insert((src, dst, element));
                    }
                }
                for var in (0..nvars).rev() {
                    let (run, value) = &mut position[var];
                    *value += 1;
                    if *value < runs[var][*run].1 {
                        continue 'odometer;
                    }
                    *run += 1;
                    if *run < runs[var].len() {
                        *value = runs[var][*run].0;
                        continue 'odometer;
                    }
                    *run = 0;
                    *value = runs[var][0].0;
                }
                break;
            }
        }
        let mut per_pair: BTreeMap<(u32, u32), u64> = BTreeMap::new();
        for (src, dst, _) in &moved {
            *per_pair.entry((*src, *dst)).or_default() += 1;
        }
        let messages: Vec<Message> =
            per_pair.into_iter().map(|((from, to), elements)| Message { from, to, elements }).collect();
        Some(TransferCount { moved_elements: messages.iter().map(|it| it.elements).sum(), messages })
    }

    /// The column-major rank of a side's coordinates; a source that is
    /// everywhere along a dimension is found at the destination's coordinate.
    fn rank(&self, places: &[Placement], counters: &[u64], destination: Option<&[Placement]>) -> u32 {
        let mut rank = 0i64;
        for dim in (0..self.shape.len()).rev() {
            let coord =
                places[dim].coord(counters).or_else(|| destination.and_then(|it| it[dim].coord(counters))).unwrap_or(0);
            rank = rank * self.shape[dim] + coord;
        }
        rank as u32
    }

    /// Whether the reference's element lives off the iteration's process
    /// along `dim` (`counter` = (var, value) sets that counter only).
    fn dim_moves(&self, reference: &Reference, dim: usize, counter: Option<(usize, u64)>) -> bool {
        let mut counters = vec![0u64; self.trips.len()];
        if let Some((var, value)) = counter {
            counters[var] = value;
        }
        let dst = reference.to[dim].coord(&counters);
        let src = reference.from[dim].coord(&counters).or(dst);
        src != dst
    }

    /// The runs of `var`'s values where some reference moves along one of
    /// `dims` (all driven by `var` alone), or `None` past [`MAX_RUNS`].
    fn relevant_runs(&self, var: usize, dims: &[usize]) -> Option<Runs> {
        let trips = self.trips[var];
        let mut cuts: Vec<u64> = vec![0];
        for reference in &self.references {
            for dim in dims {
                for place in [&reference.from[*dim], &reference.to[*dim]] {
                    block_starts(place, trips, &mut cuts)?;
                    if cuts.len() > MAX_RUNS {
                        return None;
                    }
                }
            }
        }
        cuts.sort_unstable();
        cuts.dedup();
        cuts.push(trips);
        let mut runs: Runs = Vec::new();
        for pair in cuts.windows(2) {
            let (start, end) = (pair[0], pair[1]);
            let moves = self
                .references
                .iter()
                .any(|reference| dims.iter().any(|dim| self.dim_moves(reference, *dim, Some((var, start)))));
            if !moves {
                continue;
            }
            match runs.last_mut() {
                Some(last) if last.1 == start => last.1 = end,
                _ => runs.push((start, end)),
            }
        }
        Some(runs)
    }
}

/// The counter a placement's coordinate depends on, if it changes.
fn moving_var(place: &Placement) -> Option<usize> {
    match place {
        Placement::Cyclic { pos, procs, .. } if *procs > 1 && pos.stride != 0 => pos.var,
        _ => None,
    }
}

/// Adds to `cuts` every counter value in `1..trips` where the placement's
/// block changes, jumping from boundary to boundary.
fn block_starts(place: &Placement, trips: u64, cuts: &mut Vec<u64>) -> Option<()> {
    let Placement::Cyclic { block, procs, lower, pos } = place else { return Some(()) };
    if *procs <= 1 || pos.stride == 0 || pos.var.is_none() {
        return Some(());
    }
    let block = i128::from((*block).max(1));
    let (start, stride, lower) = (i128::from(pos.start), i128::from(pos.stride), i128::from(*lower));
    let mut k: i128 = 0;
    loop {
        let index = (start + stride * k - lower).div_euclid(block);
        // The first counter value past k in another block.
        let next = if stride > 0 {
            let boundary = lower + (index + 1) * block;
            (boundary - start + stride - 1).div_euclid(stride)
        } else {
            let boundary = lower + index * block - 1;
            (start - boundary + (-stride) - 1).div_euclid(-stride)
        };
        if next >= i128::from(trips) {
            return Some(());
        }
        cuts.push(u64::try_from(next).ok()?);
        if cuts.len() > MAX_RUNS {
            return None;
        }
        k = next;
    }
}

fn complement(runs: &Runs, trips: u64) -> Runs {
    let mut res = Vec::new();
    let mut at = 0;
    for (start, end) in runs {
        if *start > at {
            res.push((at, *start));
        }
        at = *end;
    }
    if at < trips {
        res.push((at, trips));
    }
    res
}

fn value_of(index: &ElementIndex, counters: &[u64]) -> Option<i64> {
    let k = index.var.map_or(0, |var| counters[var]);
    index.per_step.checked_mul(i64::try_from(k).ok()?)?.checked_add(index.start)
}
