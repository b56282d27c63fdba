//! Whole-program alignment: the cost of a program unit's alignments over all
//! its loops, and the choice of ALIGN directives that minimises it.
//!
//! # Cost model
//!
//! The cost of one access in one loop is what [`crate::loops`] reports for it
//! (owner computes: the iterations run where the loop's home lives):
//!
//! * aligned (the access's array sits where the iteration runs): nothing;
//! * the distribution and processor counts are known: the elements and the
//!   messages of its transfer, counted in closed form by
//!   [`crate::transfer::count_transfer`] exactly as the loop analysis counts them;
//! * otherwise (distribution unknown): one misaligned access.
//!
//! Each access is weighted by how often its transfer repeats: the product of
//! the trip counts of the loops of its nest that index neither the home nor
//! the access (a time-step loop around the work). A loop whose trip count is
//! not known at compile time counts [`CostConfig::default_trips`] iterations
//! from 1 by 1, and the unit is marked as estimated.
//! Costs are compared lexicographically: moved elements, then misaligned
//! accesses, then messages (then, inside the search, the number of changed
//! directives, so ties keep the program as written).
//!
//! # Search
//!
//! The variables are the arrays of the unit that have an ALIGN of their own
//! and that nothing else is aligned with (moving an alignment target would
//! move its alignees), that are not dummies and not DYNAMIC. The candidates
//! of an array are its declared alignment and every optimal alignment the
//! loop analysis found for one of its accesses (equations (1)-(3) of the
//! seed, relative to the loop's home as declared, inside the target's bounds),
//! closed under *following the home*: a loop's home may move to where a
//! candidate of an array it reads puts those elements (`C(I) = B(I+1)` with
//! B at `A(I+1)`: C at `A(I+2)`), and an array takes its optimal alignment
//! relative to every candidate of the home (in bounds, at most
//! [`MAX_FOLLOWED`] per array). Units with at most [`BOX_VARIABLES`] free
//! arrays also get every in-bounds alignment of the *offset box* (declared
//! target, dimensions and strides; each offset within [`BOX_OFFSET`] of the
//! declared one), so the exact search below returns the true minimum over
//! that box. Both stop at [`TABLE_BUDGET`] transfer counts in the cost
//! tables, so the editor's source action stays interactive; beyond it (many
//! loops, 2-D boxes) the result is the minimum over the candidates reached.
//! The cost is a sum of terms over pairs (home of a loop, accessed array):
//! changing the home's alignment moves all the loop's iterations, which is the
//! coupling. Terms are tabulated once per pair of candidates, then each
//! connected component of the variables is solved on its own:
//!
//! * exactly, by depth-first branch and bound (lower bound: the sum of the
//!   minima of the terms not yet decided), when the product of its candidate
//!   counts is at most [`CostConfig::exact_limit`] ([`EXACT_LIMIT`], about a
//!   million, unless the caller says otherwise);
//! * beyond that, by a heuristic: starting from the declared alignments,
//!   coordinate descent (each array in turn takes its best candidate given the
//!   others) alternated with pair moves (both arrays of a term take their best
//!   joint candidates), until nothing improves, then the branch and bound
//!   again, seeded with that solution, for at most [`CostConfig::node_budget`]
//!   nodes (it only accepts strictly better solutions; when it finishes
//!   within the budget the result is optimal and reported as exact). It never
//!   returns a cost above the declared one.
//!
//! Optimal alignments that fall outside their template are not candidates;
//! `ide::propose_growth` grows the template to hold them, optimises the grown
//! program again and proposes the growth when it costs less.

use std::collections::{BTreeMap, HashMap};

use crate::loops::{equivalent_targets, AccessAttr, LoopReport, NestIndex, SubscriptForm};
use crate::model::{Axis, Format, Model, ResolvedMapping, SymbolId, UnitId};
use crate::transfer::{count_transfer, Affine, Placement, TransferCount};
use crate::FileAnalysis;

/// The usual [`CostConfig::exact_limit`]: the largest number of candidate
/// combinations of one connected component that is searched exactly.
pub const EXACT_LIMIT: u128 = 1 << 20;

/// The usual [`CostConfig::default_trips`].
pub const DEFAULT_TRIPS: u64 = 100;

/// The usual [`CostConfig::node_budget`].
pub const NODE_BUDGET: u64 = 20_000;

/// Units with at most this many free arrays are also searched over every
/// alignment in the offset box ([`BOX_OFFSET`]), so the result is the true
/// minimum over that box.
pub const BOX_VARIABLES: usize = 4;

/// The half-width of the offset box: each offset within this of the declared one.
pub const BOX_OFFSET: i64 = 8;

/// The most candidates one array gets from following homes (the closure
/// stops there, so a long chain of loops cannot blow the search up).
const MAX_FOLLOWED: usize = 64;

/// The most transfer counts the cost tables may need (the sum over the
/// accesses of the candidates of the home times those of the array):
/// following homes and the offset box stop short of it, so that the editor's
/// source action stays interactive (a count of a 2-D access costs tens of
/// microseconds).
const TABLE_BUDGET: usize = 2_500;

/// Settings of the cost model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CostConfig {
    /// The trip count assumed for a loop whose bounds are not known.
    pub default_trips: u64,
    /// Components with more candidate combinations than this are searched
    /// by the heuristic ([`EXACT_LIMIT`] normally).
    pub exact_limit: u128,
    /// Beyond `exact_limit`, the nodes the branch and bound may visit after
    /// the heuristic ([`NODE_BUDGET`] normally); when it finishes within
    /// them, the result is optimal all the same.
    pub node_budget: u64,
}

/// A cost: compared by `elements`, then `misaligned`, then `messages`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Cost {
    /// Elements moved, each transfer weighted by its repetitions.
    pub elements: u64,
    /// Misaligned accesses whose transfer cannot be counted (the distribution is not known).
    pub misaligned: u64,
    /// Messages, weighted like the elements.
    pub messages: u64,
}

impl Cost {
    fn key(self) -> (u64, u64, u64) {
        (self.elements, self.misaligned, self.messages)
    }

    fn add(self, other: Cost) -> Cost {
        Cost {
            elements: self.elements.saturating_add(other.elements),
            misaligned: self.misaligned.saturating_add(other.misaligned),
            messages: self.messages.saturating_add(other.messages),
        }
    }

    fn scaled(self, weight: u64) -> Cost {
        Cost {
            elements: self.elements.saturating_mul(weight),
            misaligned: self.misaligned.saturating_mul(weight),
            messages: self.messages.saturating_mul(weight),
        }
    }
}

impl PartialOrd for Cost {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Cost {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

/// The cost of one program unit's loops under its declared alignments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitCost {
    pub unit: UnitId,
    pub cost: Cost,
    /// Loops with a home that were costed.
    pub loops: usize,
    /// Loops whose trip count (or that of a loop around them) was assumed.
    pub estimated_loops: usize,
}

/// An alignment of an array with its final target, per target dimension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub target: SymbolId,
    pub axes: Vec<Axis>,
    /// The access whose optimal alignment this is; `None` for the declared alignment.
    pub from_access: Option<syntax::TextRange>,
}

/// One array whose ALIGN the plan rewrites.
#[derive(Clone, Debug)]
pub struct Change {
    pub array: SymbolId,
    pub declared: Candidate,
    pub chosen: Candidate,
}

/// The optimiser's answer for one program unit.
#[derive(Clone, Debug)]
pub struct UnitPlan {
    pub unit: UnitId,
    /// The cost as declared.
    pub before: Cost,
    /// The cost with the chosen alignments (as predicted by the cost model).
    pub after: Cost,
    pub changes: Vec<Change>,
    /// Arrays whose alignment was a variable of the search.
    pub variables: usize,
    /// The number of candidate combinations (the product over the variables).
    pub combinations: u128,
    /// Whether every component was solved exactly (else the heuristic ran on some).
    pub exact: bool,
    /// No choice of candidates costs less: the sum of the minima of the
    /// terms taken one by one (how far the heuristic may be from the optimum).
    pub lower_bound: Cost,
    pub loops: usize,
    pub estimated_loops: usize,
}

/// The mapping of an array used by the cost model: a target and its axes.
#[derive(Clone, Copy, Debug)]
struct Map<'a> {
    target: SymbolId,
    axes: &'a [Axis],
}

impl Map<'_> {
    fn axis_of(&self, dim: usize) -> Option<(usize, i64, i64)> {
        self.axes.iter().enumerate().find_map(|(target_dim, axis)| match *axis {
            Axis::Affine { source_dim, stride, offset } if source_dim == dim => Some((target_dim, stride, offset)),
            _ => None,
        })
    }

    /// Whether dimension `dim` of the array decides where its elements live
    /// (as `loops::is_distributed_dim` for the declared mapping).
    fn is_distributed_dim(&self, model: &Model, dim: usize) -> bool {
        if self.axes.contains(&Axis::Unknown) {
            return true;
        }
        let Some((target_dim, _, _)) = self.axis_of(dim) else { return false };
        let Some(distribution) = &model.symbol(self.target).mapping.distribution else { return true };
        distribution.formats.get(target_dim).is_none_or(|it| *it != Format::Collapsed)
    }
}

/// One nest index as the cost model counts it (unknown trip counts replaced).
#[derive(Clone, Copy, Debug)]
struct Trip {
    lo: i64,
    step: i64,
    trips: u64,
}

fn trips_of(nest: &[NestIndex], config: CostConfig) -> (Vec<Trip>, bool) {
    let mut estimated = false;
    let res = nest
        .iter()
        .map(|it| match it.trips() {
            Some(trips) if it.lo.is_some() && it.step.is_some() => {
                Trip { lo: it.lo.unwrap_or(1), step: it.step.unwrap_or(1), trips }
            }
            _ => {
                estimated = true;
                Trip { lo: it.lo.unwrap_or(1), step: it.step.unwrap_or(1), trips: config.default_trips }
            }
        })
        .collect();
    (res, estimated)
}

/// The loop indices an access's subscripts use.
fn indices_used(forms: &[SubscriptForm]) -> Vec<usize> {
    forms
        .iter()
        .filter_map(|it| match it {
            SubscriptForm::Affine { index, coef, .. } if *coef != 0 => Some(*index),
            _ => None,
        })
        .collect()
}

/// One access of a loop, as the cost model sees it.
struct AccessTerm<'a> {
    home_forms: &'a [SubscriptForm],
    forms: &'a [SubscriptForm],
    trips: &'a [Trip],
    weight: u64,
    attr: AccessAttr,
}

type CountKey = (Vec<u64>, Vec<i64>, Vec<Placement>, Vec<Placement>, Vec<usize>);

/// Memoised transfer counts (many candidate pairs give the same problem).
#[derive(Default)]
struct Counter {
    cache: HashMap<CountKey, TransferCount>,
}

impl Counter {
    fn count(&mut self, key: CountKey) -> TransferCount {
        if let Some(found) = self.cache.get(&key) {
            return found.clone();
        }
        let (trips, proc_shape, from, to, element_vars) = key.clone();
        let res = count_transfer(&crate::transfer::TransferProblem { trips, proc_shape, from, to, element_vars });
        self.cache.insert(key, res.clone());
        res
    }
}

/// The optimal alignment of the access under the home's mapping `home`
/// (equations (1)-(3)), per dimension of the access's array, or `None`.
fn optimal_dims(
    model: &Model,
    home: Map,
    array: Map,
    home_forms: &[SubscriptForm],
    forms: &[SubscriptForm],
) -> Option<Vec<Option<(usize, i64, i64)>>> {
    let mut dims = Vec::new();
    for (dim, form) in forms.iter().enumerate() {
        let constant = matches!(*form, SubscriptForm::Constant(_) | SubscriptForm::Affine { coef: 0, .. });
        if constant && !array.is_distributed_dim(model, dim) {
            // A constant where the array is not distributed: collapsed, local.
            dims.push(None);
            continue;
        }
        let SubscriptForm::Affine { index, coef, offset } = *form else { return None };
        if coef == 0 {
            return None;
        }
        let (home_coef, home_offset) = home_forms.iter().find_map(|it| match *it {
            SubscriptForm::Affine { index: home_index, coef, offset } if home_index == index && coef != 0 => {
                Some((coef, offset))
            }
            _ => None,
        })?;
        let home_dim = home_forms.iter().position(|it| matches!(it, SubscriptForm::Affine { index: home_index, coef, .. } if *home_index == index && *coef != 0))?;
        let (target_dim, a, b) = home.axis_of(home_dim)?;
        let loop_stride = a.checked_mul(home_coef)?;
        if loop_stride % coef != 0 {
            return None;
        }
        let stride = loop_stride / coef;
        let opt_offset = a.checked_mul(home_offset)?.checked_add(b)?.checked_sub(stride.checked_mul(offset)?)?;
        if dims.iter().flatten().any(|it: &(usize, i64, i64)| it.0 == target_dim) {
            return None;
        }
        dims.push(Some((target_dim, stride, opt_offset)));
    }
    Some(dims)
}

/// The processor arrangement's shape and one placement per processor dimension.
type Placements = (Vec<i64>, Vec<Placement>);

/// The placements of an access along each processor dimension, as in the
/// loop analysis, with the mapping given rather than declared.
fn placements(model: &Model, map: Map, forms: &[SubscriptForm], trips: &[Trip]) -> Result<Option<Placements>, ()> {
    let target = model.symbol(map.target);
    let Some(distribution) = &target.mapping.distribution else { return Ok(None) };
    if distribution.formats.is_empty() {
        return Err(());
    }
    let n_distributed = distribution.formats.iter().filter(|it| **it != Format::Collapsed).count();
    let counts = model.processor_counts(distribution);
    if counts.len() != n_distributed {
        return Err(());
    }
    let mut proc_shape = Vec::new();
    let mut res = Vec::new();
    let mut proc_dim = 0;
    for (target_dim, format) in distribution.formats.iter().enumerate() {
        if *format == Format::Collapsed {
            continue;
        }
        let procs = counts[proc_dim].ok_or(())?;
        proc_dim += 1;
        let extent = target.shape.get(target_dim).ok_or(())?;
        let lower = extent.lo.known().ok_or(())?;
        let block = match *format {
            Format::Block => {
                let extent = extent.extent().ok_or(())?;
                crate::model::block_size(extent, procs)
            }
            Format::BlockOf(Some(m)) | Format::Cyclic(Some(m)) => m,
            _ => return Err(()),
        };
        proc_shape.push(procs);
        let placement = match map.axes.get(target_dim).copied().unwrap_or(Axis::Unknown) {
            Axis::Replicated => Placement::Everywhere,
            Axis::Constant(value) => Placement::cyclic(block, procs, lower, Affine::constant(value)),
            Axis::Unknown => return Err(()),
            Axis::Affine { source_dim, stride, offset } => {
                let position = match forms.get(source_dim) {
                    Some(SubscriptForm::Affine { index, coef, offset: sub_offset }) => {
                        let trip = trips.get(*index).ok_or(())?;
                        let start = stride
                            .checked_mul(
                                coef.checked_mul(trip.lo).and_then(|it| it.checked_add(*sub_offset)).ok_or(())?,
                            )
                            .and_then(|it| it.checked_add(offset))
                            .ok_or(())?;
                        let per_step = stride.checked_mul(*coef).and_then(|it| it.checked_mul(trip.step)).ok_or(())?;
                        Affine::of(*index, start, per_step)
                    }
                    Some(SubscriptForm::Constant(value)) => {
                        Affine::constant(stride.checked_mul(*value).and_then(|it| it.checked_add(offset)).ok_or(())?)
                    }
                    _ => return Err(()),
                };
                Placement::cyclic(block, procs, lower, position)
            }
        };
        res.push(placement);
    }
    Ok(Some((proc_shape, res)))
}

/// The cost of one access with the home mapped by `home` and the array by `array`.
fn access_cost(model: &Model, counter: &mut Counter, term: &AccessTerm, home: Map, array: Map) -> Cost {
    if let Some(optimal) = optimal_dims(model, home, array, term.home_forms, term.forms) {
        let aligned = equivalent_targets(model, array.target, home.target)
            && optimal
                .iter()
                .enumerate()
                .all(|(dim, &it)| it.is_none() || !array.is_distributed_dim(model, dim) || array.axis_of(dim) == it);
        if aligned {
            return Cost::default();
        }
    }
    let misaligned = Cost { misaligned: term.weight, ..Cost::default() };
    let Ok(Some((home_shape, to))) = placements(model, home, term.home_forms, term.trips) else {
        return misaligned;
    };
    let from = match placements(model, array, term.forms, term.trips) {
        Ok(Some((shape, places))) if shape == home_shape => places,
        Ok(None) => vec![Placement::Everywhere; home_shape.len()],
        _ => return misaligned,
    };
    let trips: Vec<u64> = term.trips.iter().map(|it| it.trips).collect();
    // A reference travels to the iterations before the loop, an update back home after it.
    let (from, to) = match term.attr {
        AccessAttr::Reference => (from, to),
        AccessAttr::Update => (to, from),
    };
    let count = counter.count((trips, home_shape, from, to, indices_used(term.forms)));
    Cost { elements: count.moved_elements, misaligned: 0, messages: count.messages.len() as u64 }.scaled(term.weight)
}

/// The loops of `unit` that have a home and are analysed.
fn costed_loops(analysis: &FileAnalysis, unit: UnitId) -> impl Iterator<Item = &LoopReport> {
    analysis.loops.iter().map(|it| &**it).filter(move |it| {
        it.unit == unit && it.gave_up.is_none() && it.home.is_some() && it.no_home.is_none() && !it.accesses.is_empty()
    })
}

/// One access of one loop, with what its cost depends on.
struct Site<'a> {
    report: &'a LoopReport,
    access: &'a crate::loops::Access,
    trips: Vec<Trip>,
    weight: u64,
    estimated: bool,
}

fn sites(analysis: &FileAnalysis, unit: UnitId, config: CostConfig) -> Vec<Site<'_>> {
    let mut res = Vec::new();
    for report in costed_loops(analysis, unit) {
        let home = report.home.as_ref().expect("filtered");
        let (trips, estimated) = trips_of(&report.nest, config);
        let home_indices = indices_used(&home.subscripts);
        for access in report.accesses.iter().filter(|it| !it.is_home && !through_function(it)) {
            let used = indices_used(&access.subscripts);
            let weight = trips
                .iter()
                .enumerate()
                .filter(|(idx, _)| !home_indices.contains(idx) && !used.contains(idx))
                .fold(1u64, |acc, (_, it)| acc.saturating_mul(it.trips));
            res.push(Site { report, access, trips: trips.clone(), weight, estimated });
        }
    }
    res
}

/// A section passed to a function that does not work element by element
/// (`SUM(B(:))`): the loop analysis does not follow it, nor does the cost.
fn through_function(access: &crate::loops::Access) -> bool {
    access.through.as_ref().is_some_and(|it| !it.eq_ignore_ascii_case("transpose"))
        && access.subscripts.iter().any(|it| matches!(it, SubscriptForm::Section))
}

fn declared_map(model: &Model, array: SymbolId) -> Option<ResolvedMapping> {
    model.resolve(array)
}

/// The cost of every program unit that has loops, under the declared alignments.
pub fn unit_costs(analysis: &FileAnalysis, config: CostConfig) -> Vec<UnitCost> {
    let mut counter = Counter::default();
    let mut res = Vec::new();
    for unit in 0..analysis.model.units.len() {
        let loops = costed_loops(analysis, unit).count();
        if loops == 0 {
            continue;
        }
        let (cost, estimated_loops) = declared_cost(analysis, unit, config, &mut counter);
        res.push(UnitCost { unit, cost, loops, estimated_loops });
    }
    res
}

fn declared_cost(analysis: &FileAnalysis, unit: UnitId, config: CostConfig, counter: &mut Counter) -> (Cost, usize) {
    let epochs = crate::loops::MappingEpochs::new(&analysis.model, unit);
    let mut cost = Cost::default();
    let mut estimated: Vec<syntax::TextRange> = Vec::new();
    for site in sites(analysis, unit, config) {
        // Each loop under the mapping it runs with (after REALIGN, REDISTRIBUTE).
        let model = epochs.model(site.report.epoch);
        let home = site.report.home.as_ref().expect("costed");
        let (Some(home_map), Some(array_map)) =
            (declared_map(model, home.array), declared_map(model, site.access.array))
        else {
            cost = cost.add(Cost { misaligned: site.weight, ..Cost::default() });
            continue;
        };
        let term = AccessTerm {
            home_forms: &home.subscripts,
            forms: &site.access.subscripts,
            trips: &site.trips,
            weight: site.weight,
            attr: site.access.attr,
        };
        let home_map = Map { target: home_map.target, axes: &home_map.axes };
        let array_map = Map { target: array_map.target, axes: &array_map.axes };
        cost = cost.add(access_cost(model, counter, &term, home_map, array_map));
        if site.estimated && !estimated.contains(&site.report.range) {
            estimated.push(site.report.range);
        }
    }
    (cost, estimated.len())
}

/// Whether `array` may get a new ALIGN: see the module documentation.
fn is_variable(model: &Model, unit: UnitId, array: SymbolId) -> bool {
    let symbol = model.symbol(array);
    if array.unit != unit || !symbol.is_array() || symbol.is_dummy || symbol.mapping.dynamic {
        return false;
    }
    if symbol.mapping.align.is_none() || symbol.mapping.inherit.is_some() {
        return false;
    }
    if model.units.iter().any(|it| it.remaps.iter().any(|remap| remap.symbol == array)) {
        return false;
    }
    let is_target = model.symbols().any(|(_, other)| other.mapping.align.as_ref().is_some_and(|it| it.target == array));
    if is_target {
        return false;
    }
    model.resolve(array).is_some_and(|it| it.axes.iter().all(|axis| *axis != Axis::Unknown))
}

/// A variable of the search: an array and its candidates (the declared one first).
struct Variable {
    array: SymbolId,
    candidates: Vec<Candidate>,
}

fn candidates(analysis: &FileAnalysis, unit: UnitId, array: SymbolId) -> Vec<Candidate> {
    let model = &analysis.model;
    let declared = model.resolve(array).expect("checked by is_variable");
    let mut res = vec![Candidate { target: declared.target, axes: declared.axes, from_access: None }];
    for report in costed_loops(analysis, unit) {
        let home = report.home.as_ref().expect("costed");
        let Some(home_resolved) = model.resolve(home.array) else { continue };
        for access in &report.accesses {
            if access.array != array || access.is_home || access.reason.is_some() {
                continue;
            }
            let Some(optimal) = &access.optimal_alignment else { continue };
            let target_rank = model.symbol(optimal.target).rank();
            let axes: Vec<Axis> = (0..target_rank)
                .map(|target_dim| match optimal.source_of(target_dim) {
                    Some((dim, stride, offset)) => Axis::Affine { source_dim: dim, stride, offset },
                    None => match home_resolved.axes.get(target_dim) {
                        Some(Axis::Constant(value)) => Axis::Constant(*value),
                        _ => Axis::Replicated,
                    },
                })
                .collect();
            if res.iter().any(|it| it.target == optimal.target && it.axes == axes) {
                continue;
            }
            res.push(Candidate { target: optimal.target, axes, from_access: Some(access.range) });
        }
    }
    res
}

/// The first access of `array` in the sites (the quick fixes' rewriter
/// needs one to write a new ALIGN from).
fn some_access_of(sites: &[Site], array: SymbolId) -> Option<syntax::TextRange> {
    sites.iter().find_map(|site| {
        let home = site.report.home.as_ref()?;
        let home_access = site.report.accesses.iter().find(|it| it.is_home && it.array == array);
        if home.array == array {
            return home_access.map(|it| it.range);
        }
        (site.access.array == array).then_some(site.access.range)
    })
}

/// Whether the alignment `axes` of `array` with `target` puts every element
/// inside the target's bounds (known bounds only).
fn in_bounds(model: &Model, array: SymbolId, target: SymbolId, axes: &[Axis]) -> bool {
    let (symbol, target_symbol) = (model.symbol(array), model.symbol(target));
    axes.iter().enumerate().all(|(target_dim, axis)| {
        let Some(extent) = target_symbol.shape.get(target_dim) else { return false };
        let (Some(t_lo), Some(t_hi)) = (extent.lo.known(), extent.hi.known()) else { return false };
        match *axis {
            Axis::Affine { source_dim, stride, offset } => {
                let Some(shape) = symbol.shape.get(source_dim) else { return false };
                let (Some(lo), Some(hi)) = (shape.lo.known(), shape.hi.known()) else { return false };
                let ends = [stride.checked_mul(lo), stride.checked_mul(hi)];
                ends.iter()
                    .all(|it| it.and_then(|it| it.checked_add(offset)).is_some_and(|it| t_lo <= it && it <= t_hi))
            }
            Axis::Constant(value) => t_lo <= value && value <= t_hi,
            Axis::Replicated => true,
            Axis::Unknown => false,
        }
    })
}

/// The alignment of a loop's home that puts each iteration where the
/// element `array_map` gives the access lives ("follow the home"): per
/// dimension of the home, `s_h = s_x * c / p` and `o_h = s_x * d + o_x - s_h * q`
/// for home subscript `p*I+q` and access subscript `c*I+d`. Dimensions of
/// the home that no access dimension determines keep their declared axis.
fn home_following(
    home_declared: &ResolvedMapping,
    array_map: Map,
    home_forms: &[SubscriptForm],
    forms: &[SubscriptForm],
) -> Option<Vec<Axis>> {
    if home_declared.target != array_map.target {
        return None;
    }
    let mut axes: Vec<Option<Axis>> = vec![None; home_declared.axes.len()];
    let mut decided = vec![false; home_forms.len()];
    for (home_dim, form) in home_forms.iter().enumerate() {
        let SubscriptForm::Affine { index, coef: p, offset: q } = *form else { continue };
        if p == 0 {
            continue;
        }
        let found = forms.iter().enumerate().find_map(|(dim, it)| match *it {
            SubscriptForm::Affine { index: other, coef, offset } if other == index && coef != 0 => {
                Some((dim, coef, offset))
            }
            _ => None,
        });
        let Some((dim, c, d)) = found else { continue };
        let (target_dim, s_x, o_x) = array_map.axis_of(dim)?;
        let scaled = s_x.checked_mul(c)?;
        if scaled % p != 0 {
            return None;
        }
        let s_h = scaled / p;
        let o_h = s_x.checked_mul(d)?.checked_add(o_x)?.checked_sub(s_h.checked_mul(q)?)?;
        if axes.get(target_dim)?.is_some() {
            return None;
        }
        axes[target_dim] = Some(Axis::Affine { source_dim: home_dim, stride: s_h, offset: o_h });
        decided[home_dim] = true;
    }
    if !decided.iter().any(|it| *it) {
        return None;
    }
    // The rest as declared, where that does not clash with what was decided.
    for (target_dim, axis) in home_declared.axes.iter().enumerate() {
        if axes[target_dim].is_some() {
            continue;
        }
        let keep = match *axis {
            Axis::Affine { source_dim, .. } => !decided.get(source_dim).copied().unwrap_or(true),
            _ => true,
        };
        axes[target_dim] = Some(if keep { *axis } else { Axis::Replicated });
    }
    let axes: Vec<Axis> = axes.into_iter().collect::<Option<_>>()?;
    // Every dimension of the home is placed exactly once.
    let placed = |dim: usize| {
        axes.iter().filter(|it| matches!(it, Axis::Affine { source_dim, .. } if *source_dim == dim)).count()
    };
    (0..home_forms.len()).all(|dim| placed(dim) <= 1).then_some(axes)
}

/// Adds the candidates that following the homes reaches: a home follows
/// where every candidate of an array it reads puts those elements, and an
/// array takes its optimal alignment relative to every candidate of the
/// home, until nothing new appears (at most [`MAX_FOLLOWED`] per array).
fn follow_homes(model: &Model, variables: &mut [Variable], sites: &[Site]) {
    let var_of = |variables: &[Variable], array: SymbolId| variables.iter().position(|it| it.array == array);
    for _round in 0..4 {
        let mut added = false;
        for site in sites {
            if table_cells(variables, sites) >= TABLE_BUDGET {
                return;
            }
            let home = site.report.home.as_ref().expect("costed");
            let (home_var, array_var) = (var_of(variables, home.array), var_of(variables, site.access.array));
            if home_var.is_some() && home_var == array_var {
                continue;
            }
            let (Some(home_declared), Some(array_declared)) =
                (model.resolve(home.array), model.resolve(site.access.array))
            else {
                continue;
            };
            let array_maps: Vec<(SymbolId, Vec<Axis>)> = match array_var {
                Some(var) => variables[var].candidates.iter().map(|it| (it.target, it.axes.clone())).collect(),
                None => vec![(array_declared.target, array_declared.axes.clone())],
            };
            let home_maps: Vec<(SymbolId, Vec<Axis>)> = match home_var {
                Some(var) => variables[var].candidates.iter().map(|it| (it.target, it.axes.clone())).collect(),
                None => vec![(home_declared.target, home_declared.axes.clone())],
            };
            if let Some(var) = home_var {
                let from_access = some_access_of(sites, home.array);
                for (target, axes) in &array_maps {
                    let array_map = Map { target: *target, axes };
                    let Some(axes) =
                        home_following(&home_declared, array_map, &home.subscripts, &site.access.subscripts)
                    else {
                        continue;
                    };
                    let room = table_cells(variables, sites) < TABLE_BUDGET;
                    added |= push_candidate(model, room, &mut variables[var], *target, axes, from_access);
                }
            }
            if let Some(var) = array_var {
                let declared = Map { target: array_declared.target, axes: &array_declared.axes };
                for (target, axes) in &home_maps {
                    let home_map = Map { target: *target, axes };
                    let Some(dims) = optimal_dims(model, home_map, declared, &home.subscripts, &site.access.subscripts)
                    else {
                        continue;
                    };
                    let new_axes: Vec<Axis> = (0..axes.len())
                        .map(|target_dim| {
                            match dims.iter().enumerate().find(|(_, it)| it.is_some_and(|it| it.0 == target_dim)) {
                                Some((dim, Some((_, stride, offset)))) => {
                                    Axis::Affine { source_dim: dim, stride: *stride, offset: *offset }
                                }
                                _ => match axes[target_dim] {
                                    Axis::Constant(value) => Axis::Constant(value),
                                    _ => Axis::Replicated,
                                },
                            }
                        })
                        .collect();
                    let room = table_cells(variables, sites) < TABLE_BUDGET;
                    added |=
                        push_candidate(model, room, &mut variables[var], *target, new_axes, Some(site.access.range));
                }
            }
        }
        if !added {
            break;
        }
    }
}

/// The cells of the cost tables `build_problem` fills for these candidates.
fn table_cells(variables: &[Variable], sites: &[Site]) -> usize {
    table_cells_with(sites, &|array| variables.iter().find(|it| it.array == array).map(|it| it.candidates.len()))
}

/// [`table_cells`] with `size` candidates per array (`None`: a fixed array).
fn table_cells_with(sites: &[Site], size: &dyn Fn(SymbolId) -> Option<usize>) -> usize {
    let size = |array: SymbolId| size(array).unwrap_or(1);
    sites
        .iter()
        .map(|site| {
            let home = site.report.home.as_ref().expect("costed").array;
            if home == site.access.array {
                size(home)
            } else {
                size(home).saturating_mul(size(site.access.array))
            }
        })
        .fold(0usize, usize::saturating_add)
}

/// Adds a candidate that is new, in bounds and within the budgets (`room`: the tables').
fn push_candidate(
    model: &Model,
    room: bool,
    variable: &mut Variable,
    target: SymbolId,
    axes: Vec<Axis>,
    from_access: Option<syntax::TextRange>,
) -> bool {
    let Some(from_access) = from_access else { return false };
    if !room
        || variable.candidates.len() >= MAX_FOLLOWED
        || variable.candidates.iter().any(|it| it.target == target && it.axes == axes)
        || !in_bounds(model, variable.array, target, &axes)
    {
        return false;
    }
    variable.candidates.push(Candidate { target, axes, from_access: Some(from_access) });
    true
}

/// Adds every alignment of the box: the declared target, dimensions and
/// strides, each offset within [`BOX_OFFSET`] of the declared one, in
/// bounds; only when all the boxes' combinations can be searched exactly.
fn add_offset_box(model: &Model, variables: &mut [Variable], sites: &[Site], exact_limit: u128) {
    // Bounds hold axis by axis, so each axis's choices are filtered first and
    // the product is known before anything is enumerated (an array of rank 8
    // has 17^8 offset combinations).
    let per_axis: Vec<Vec<Vec<Axis>>> = variables
        .iter()
        .map(|variable| {
            let declared = &variable.candidates[0];
            declared
                .axes
                .iter()
                .enumerate()
                .map(|(target_dim, axis)| match *axis {
                    Axis::Affine { source_dim, stride, offset } => (-BOX_OFFSET..=BOX_OFFSET)
                        .map(|delta| Axis::Affine { source_dim, stride, offset: offset + delta })
                        .filter(|choice| {
                            let mut axes = declared.axes.clone();
                            axes[target_dim] = *choice;
                            in_bounds(model, variable.array, declared.target, &axes)
                        })
                        .collect(),
                    other => vec![other],
                })
                .collect()
        })
        .collect();
    let box_size = |axes: &[Vec<Axis>]| axes.iter().fold(1u128, |acc, it| acc.saturating_mul(it.len() as u128));
    let combinations = variables.iter().zip(&per_axis).fold(1u128, |acc, (variable, axes)| {
        acc.saturating_mul((variable.candidates.len() as u128).saturating_add(box_size(axes)))
    });
    let projected = |array: SymbolId| {
        let idx = variables.iter().position(|it| it.array == array)?;
        let size = box_size(&per_axis[idx]).saturating_add(variables[idx].candidates.len() as u128);
        Some(usize::try_from(size).unwrap_or(usize::MAX))
    };
    // All of the box or none of it: a partial box would not be a minimum over anything.
    if combinations > exact_limit || table_cells_with(sites, &projected) > TABLE_BUDGET {
        return;
    }
    let boxes: Vec<Vec<Vec<Axis>>> = per_axis
        .iter()
        .map(|axes| {
            axes.iter().fold(vec![Vec::new()], |prefixes: Vec<Vec<Axis>>, choices| {
                prefixes
                    .into_iter()
                    .flat_map(|prefix| choices.iter().map(move |choice| [prefix.clone(), vec![*choice]].concat()))
                    .collect()
            })
        })
        .collect();
    for (variable, axes_list) in variables.iter_mut().zip(boxes) {
        let target = variable.candidates[0].target;
        let from_access = some_access_of(sites, variable.array);
        for axes in axes_list {
            let Some(from_access) = from_access else { break };
            if !variable.candidates.iter().any(|it| it.target == target && it.axes == axes) {
                variable.candidates.push(Candidate { target, axes, from_access: Some(from_access) });
            }
        }
    }
}

/// A term of the objective over at most two variables (`a <= b` when both).
struct Table {
    vars: (Option<usize>, Option<usize>),
    /// Row-major over the candidates of `vars.0` then `vars.1`.
    costs: Vec<Cost>,
}

/// The objective: a constant, per-variable terms and pairwise terms.
struct Problem {
    sizes: Vec<usize>,
    constant: Cost,
    unary: Vec<Vec<Cost>>,
    pairs: BTreeMap<(usize, usize), Vec<Cost>>,
}

/// The search's cost: the model's cost, then the number of changed directives.
type Score = ((u64, u64, u64), u64);

fn score(cost: Cost, changes: u64) -> Score {
    (cost.key(), changes)
}

fn add_score(a: Score, b: Score) -> Score {
    (
        (a.0 .0.saturating_add(b.0 .0), a.0 .1.saturating_add(b.0 .1), a.0 .2.saturating_add(b.0 .2)),
        a.1.saturating_add(b.1),
    )
}

impl Problem {
    fn unary_score(&self, var: usize, value: usize) -> Score {
        score(self.unary[var][value], u64::from(value != 0))
    }

    fn pair_score(&self, key: (usize, usize), a: usize, b: usize) -> Score {
        score(self.pairs[&key][a * self.sizes[key.1] + b], 0)
    }

    fn cost(&self, values: &[usize]) -> Cost {
        let mut res = self.constant;
        for (var, &value) in values.iter().enumerate() {
            res = res.add(self.unary[var][value]);
        }
        for (&key, costs) in &self.pairs {
            res = res.add(costs[values[key.0] * self.sizes[key.1] + values[key.1]]);
        }
        res
    }

    fn neighbours(&self) -> Vec<Vec<usize>> {
        let mut res = vec![Vec::new(); self.sizes.len()];
        for &(a, b) in self.pairs.keys() {
            res[a].push(b);
            res[b].push(a);
        }
        res
    }
}

fn build_problem(analysis: &FileAnalysis, unit: UnitId, variables: &[Variable], sites: &[Site]) -> Problem {
    let epochs = crate::loops::MappingEpochs::new(&analysis.model, unit);
    let mut counter = Counter::default();
    let var_of = |array: SymbolId| variables.iter().position(|it| it.array == array);
    let sizes: Vec<usize> = variables.iter().map(|it| it.candidates.len()).collect();
    let mut problem = Problem {
        sizes: sizes.clone(),
        constant: Cost::default(),
        unary: sizes.iter().map(|&n| vec![Cost::default(); n]).collect(),
        pairs: BTreeMap::new(),
    };
    for site in sites {
        // Each loop under the mapping it runs with (after REALIGN, REDISTRIBUTE).
        let model = epochs.model(site.report.epoch);
        let home = site.report.home.as_ref().expect("costed");
        let term = AccessTerm {
            home_forms: &home.subscripts,
            forms: &site.access.subscripts,
            trips: &site.trips,
            weight: site.weight,
            attr: site.access.attr,
        };
        let fixed = |array: SymbolId| declared_map(model, array);
        let home_var = var_of(home.array);
        let array_var = var_of(site.access.array);
        let (home_fixed, array_fixed) = (fixed(home.array), fixed(site.access.array));
        let maps = |var: Option<usize>, fixed: &Option<ResolvedMapping>| -> Option<Vec<(SymbolId, Vec<Axis>)>> {
            match var {
                Some(var) => Some(variables[var].candidates.iter().map(|it| (it.target, it.axes.clone())).collect()),
                None => fixed.as_ref().map(|it| vec![(it.target, it.axes.clone())]),
            }
        };
        let (Some(home_maps), Some(array_maps)) = (maps(home_var, &home_fixed), maps(array_var, &array_fixed)) else {
            problem.constant = problem.constant.add(Cost { misaligned: site.weight, ..Cost::default() });
            continue;
        };
        let map = |it: &(SymbolId, Vec<Axis>)| -> (SymbolId, Vec<Axis>) { it.clone() };
        let table = if home_var.is_some() && home_var == array_var {
            // The home array read at another element: both sides move together.
            let costs = home_maps
                .iter()
                .map(|it| {
                    let (target, axes) = map(it);
                    let m = Map { target, axes: &axes };
                    access_cost(model, &mut counter, &term, m, m)
                })
                .collect();
            Table { vars: (home_var, None), costs }
        } else {
            let mut costs = Vec::with_capacity(home_maps.len() * array_maps.len());
            for home_map in &home_maps {
                for array_map in &array_maps {
                    let h = Map { target: home_map.0, axes: &home_map.1 };
                    let a = Map { target: array_map.0, axes: &array_map.1 };
                    costs.push(access_cost(model, &mut counter, &term, h, a));
                }
            }
            Table { vars: (home_var, array_var), costs }
        };
        match table.vars {
            (None, None) => problem.constant = problem.constant.add(table.costs[0]),
            (Some(var), None) if home_var == array_var => {
                for (value, cost) in table.costs.iter().enumerate() {
                    problem.unary[var][value] = problem.unary[var][value].add(*cost);
                }
            }
            (Some(var), None) => {
                // Only the home varies (the array is fixed): one column.
                for (value, cost) in table.costs.iter().enumerate() {
                    problem.unary[var][value] = problem.unary[var][value].add(*cost);
                }
            }
            (None, Some(var)) => {
                for (value, cost) in table.costs.iter().enumerate() {
                    problem.unary[var][value] = problem.unary[var][value].add(*cost);
                }
            }
            (Some(h), Some(a)) => {
                let (first, second) = (h.min(a), h.max(a));
                let entry = problem
                    .pairs
                    .entry((first, second))
                    .or_insert_with(|| vec![Cost::default(); sizes[first] * sizes[second]]);
                for hv in 0..sizes[h] {
                    for av in 0..sizes[a] {
                        let cost = table.costs[hv * sizes[a] + av];
                        let (x, y) = if h == first { (hv, av) } else { (av, hv) };
                        entry[x * sizes[second] + y] = entry[x * sizes[second] + y].add(cost);
                    }
                }
            }
        }
    }
    problem
}

/// Connected components of the variables (through pairwise terms).
fn components(problem: &Problem) -> Vec<Vec<usize>> {
    let neighbours = problem.neighbours();
    let mut seen = vec![false; problem.sizes.len()];
    let mut res = Vec::new();
    for start in 0..problem.sizes.len() {
        if seen[start] {
            continue;
        }
        seen[start] = true;
        // Breadth first, so each variable after the first has a decided neighbour.
        let mut component = vec![start];
        let mut idx = 0;
        while idx < component.len() {
            let var = component[idx];
            let mut next: Vec<usize> = neighbours[var].iter().copied().filter(|it| !seen[*it]).collect();
            next.sort_unstable();
            next.dedup();
            for it in next {
                seen[it] = true;
                component.push(it);
            }
            idx += 1;
        }
        res.push(component);
    }
    res
}

/// Exact search of one component by branch and bound; `values` holds the result.
///
/// With `seeded`, `values` already holds a solution of the component, which
/// the search only replaces by a strictly better one. The search stops after
/// `budget` nodes; it returns whether it finished (the result is optimal).
fn branch_and_bound(problem: &Problem, order: &[usize], values: &mut [usize], seeded: bool, budget: u64) -> bool {
    let position: HashMap<usize, usize> = order.iter().enumerate().map(|(idx, &var)| (var, idx)).collect();
    // The pairwise terms decided at each depth (the later variable of the pair), with their tables.
    let mut decided_at: Vec<Vec<Decided>> = vec![Vec::new(); order.len()];
    for (&(a, b), costs) in &problem.pairs {
        if let (Some(&pa), Some(&pb)) = (position.get(&a), position.get(&b)) {
            decided_at[pa.max(pb)].push(Decided { a, b, size_b: problem.sizes[b], costs });
        }
    }
    let unary: Vec<Vec<Score>> = (0..problem.sizes.len())
        .map(|var| (0..problem.sizes[var]).map(|value| problem.unary_score(var, value)).collect())
        .collect();
    // Lower bound of what the variables from depth k on add, at best.
    let mut bound = vec![score(Cost::default(), 0); order.len() + 1];
    for depth in (0..order.len()).rev() {
        let var = order[depth];
        let mut best = unary[var].iter().copied().min().expect("a candidate");
        for decided in &decided_at[depth] {
            let min = decided.costs.iter().map(|it| score(*it, 0)).min().expect("a cell");
            best = add_score(best, min);
        }
        bound[depth] = add_score(bound[depth + 1], best);
    }
    let mut search = Search {
        order,
        sizes: &problem.sizes,
        unary,
        decided_at,
        bound,
        current: values.to_vec(),
        best: None,
        nodes_left: budget,
    };
    if seeded {
        let mut res = score(Cost::default(), 0);
        for (depth, &var) in order.iter().enumerate() {
            res = add_score(res, search.unary[var][values[var]]);
            for decided in &search.decided_at[depth] {
                res = add_score(res, decided.score(values));
            }
        }
        search.best = Some((res, values.to_vec()));
    }
    search.visit(0, score(Cost::default(), 0));
    if let Some((_, best)) = search.best {
        for &var in order {
            values[var] = best[var];
        }
    }
    search.nodes_left > 0
}

/// A pairwise term of the branch and bound, decided when its later variable is.
#[derive(Clone)]
struct Decided<'a> {
    a: usize,
    b: usize,
    size_b: usize,
    costs: &'a [Cost],
}

impl Decided<'_> {
    fn score(&self, values: &[usize]) -> Score {
        score(self.costs[values[self.a] * self.size_b + values[self.b]], 0)
    }
}

struct Search<'a> {
    order: &'a [usize],
    sizes: &'a [usize],
    unary: Vec<Vec<Score>>,
    decided_at: Vec<Vec<Decided<'a>>>,
    bound: Vec<Score>,
    current: Vec<usize>,
    best: Option<(Score, Vec<usize>)>,
    nodes_left: u64,
}

impl Search<'_> {
    fn visit(&mut self, depth: usize, so_far: Score) {
        if self.nodes_left == 0 {
            return;
        }
        self.nodes_left -= 1;
        if depth == self.order.len() {
            self.best = Some((so_far, self.current.clone()));
            return;
        }
        let var = self.order[depth];
        for value in 0..self.sizes[var] {
            self.current[var] = value;
            let mut next = add_score(so_far, self.unary[var][value]);
            for decided in &self.decided_at[depth] {
                next = add_score(next, decided.score(&self.current));
            }
            let pruned = self.best.as_ref().is_some_and(|(best, _)| add_score(next, self.bound[depth + 1]) >= *best);
            if !pruned {
                self.visit(depth + 1, next);
            }
        }
        self.current[var] = 0;
    }
}

/// The heuristic: coordinate descent and pair moves from the declared alignments.
fn local_search(problem: &Problem, component: &[usize], values: &mut [usize]) {
    let neighbours = problem.neighbours();
    let mut in_component = vec![false; problem.sizes.len()];
    for &var in component {
        in_component[var] = true;
    }
    let local = |values: &[usize], var: usize, value: usize| {
        let mut res = problem.unary_score(var, value);
        for &other in &neighbours[var] {
            let key = (var.min(other), var.max(other));
            let (a, b) = if var < other { (value, values[other]) } else { (values[other], value) };
            res = add_score(res, problem.pair_score(key, a, b));
        }
        res
    };
    for _round in 0..100 {
        let mut improved = false;
        for &var in component {
            let current = local(values, var, values[var]);
            let (best_value, best) = (0..problem.sizes[var])
                .map(|value| (value, local(values, var, value)))
                .min_by_key(|it| it.1)
                .expect("a candidate");
            if best < current {
                values[var] = best_value;
                improved = true;
            }
        }
        for &(a, b) in problem.pairs.keys() {
            if !in_component[a] {
                continue;
            }
            // What a and b add with every other variable fixed: one row per variable, plus their own term.
            let row = |var: usize, partner: usize, values: &[usize]| -> Vec<Score> {
                (0..problem.sizes[var])
                    .map(|value| {
                        let mut res = problem.unary_score(var, value);
                        for &other in neighbours[var].iter().filter(|it| **it != partner) {
                            let key = (var.min(other), var.max(other));
                            let (x, y) = if var < other { (value, values[other]) } else { (values[other], value) };
                            res = add_score(res, problem.pair_score(key, x, y));
                        }
                        res
                    })
                    .collect()
            };
            let (row_a, row_b) = (row(a, b, values), row(b, a, values));
            let joint =
                |va: usize, vb: usize| add_score(add_score(row_a[va], row_b[vb]), problem.pair_score((a, b), va, vb));
            let before = joint(values[a], values[b]);
            let mut best = (before, values[a], values[b]);
            for va in 0..problem.sizes[a] {
                for vb in 0..problem.sizes[b] {
                    let total = joint(va, vb);
                    if total < best.0 {
                        best = (total, va, vb);
                    }
                }
            }
            values[a] = best.1;
            values[b] = best.2;
            improved |= best.0 < before;
        }
        if !improved {
            break;
        }
    }
}

/// Chooses the alignments of the arrays of `unit` that minimise its cost.
pub fn optimize_unit(analysis: &FileAnalysis, unit: UnitId, config: CostConfig) -> UnitPlan {
    optimize_unit_with(analysis, unit, config, &[])
}

/// As [`optimize_unit`], keeping the arrays of `frozen` as declared.
pub fn optimize_unit_with(analysis: &FileAnalysis, unit: UnitId, config: CostConfig, frozen: &[SymbolId]) -> UnitPlan {
    let model = &analysis.model;
    let sites = sites(analysis, unit, config);
    let mut arrays: Vec<SymbolId> = Vec::new();
    for site in &sites {
        let home = site.report.home.as_ref().expect("costed").array;
        for array in [home, site.access.array] {
            if !arrays.contains(&array) && !frozen.contains(&array) && is_variable(model, unit, array) {
                arrays.push(array);
            }
        }
    }
    arrays.sort();
    let mut variables: Vec<Variable> =
        arrays.into_iter().map(|array| Variable { array, candidates: candidates(analysis, unit, array) }).collect();
    follow_homes(model, &mut variables, &sites);
    if variables.len() <= BOX_VARIABLES {
        add_offset_box(model, &mut variables, &sites, config.exact_limit);
    }
    let problem = build_problem(analysis, unit, &variables, &sites);
    let mut values = vec![0; variables.len()];
    let before = problem.cost(&values);
    let mut exact = true;
    let mut combinations: u128 = 1;
    for component in components(&problem) {
        let size = component.iter().fold(1u128, |acc, &var| acc.saturating_mul(problem.sizes[var] as u128));
        combinations = combinations.saturating_mul(size);
        if size <= config.exact_limit {
            branch_and_bound(&problem, &component, &mut values, false, u64::MAX);
        } else {
            local_search(&problem, &component, &mut values);
            // Then branch and bound from the heuristic's solution, for a bounded number of nodes.
            exact &= branch_and_bound(&problem, &component, &mut values, true, config.node_budget);
        }
    }
    let after = problem.cost(&values);
    let mut lower_bound = problem.constant;
    for costs in problem.unary.iter().chain(problem.pairs.values()) {
        lower_bound = lower_bound.add(costs.iter().copied().min().unwrap_or_default());
    }
    let changes = variables
        .iter()
        .zip(&values)
        .filter(|(_, &value)| value != 0)
        .map(|(variable, &value)| Change {
            array: variable.array,
            declared: variable.candidates[0].clone(),
            chosen: variable.candidates[value].clone(),
        })
        .collect();
    let estimated: std::collections::BTreeSet<_> =
        sites.iter().filter(|it| it.estimated).map(|it| it.report.range.start).collect();
    UnitPlan {
        unit,
        before,
        after,
        changes,
        variables: variables.len(),
        combinations,
        exact,
        lower_bound,
        loops: costed_loops(analysis, unit).count(),
        estimated_loops: estimated.len(),
    }
}

/// [`optimize_unit`] for every unit that has loops.
pub fn optimize(analysis: &FileAnalysis, config: CostConfig) -> Vec<UnitPlan> {
    (0..analysis.model.units.len())
        .filter(|&unit| costed_loops(analysis, unit).next().is_some())
        .map(|unit| optimize_unit(analysis, unit, config))
        .collect()
}
