//! "Optimize all alignments in this unit": the optimiser's choice of ALIGN
//! directives ([`crate::optimize`]) as text edits, written by the quick
//! fixes' rewriter so they keep the user's style.

use syntax::TextRange;

use super::fixes::{apply, realign_edits, Action, ActionKind, TextEdit};
use crate::loops::{Access, OptimalAlignment};
use crate::model::{Axis, SymbolId, UnitId};
use crate::optimize::{optimize_unit_with, unit_costs, Candidate, Cost, CostConfig, UnitPlan};
use crate::FileAnalysis;

/// The optimiser's plan for one unit and the edits that carry it out.
#[derive(Clone, Debug)]
pub struct Optimized {
    pub plan: UnitPlan,
    /// Non-overlapping edits of the original text.
    pub edits: Vec<TextEdit>,
    /// The text after the edits.
    pub new_text: String,
    /// The unit's cost measured on the re-analysed new text.
    pub measured: Cost,
    /// Arrays the rewriter could not rewrite (a fixed-form line would grow
    /// past its last column), kept as declared.
    pub kept: Vec<SymbolId>,
}

/// The edits that give each changed array its chosen alignment; `Err` names
/// an array whose ALIGN cannot be rewritten.
fn plan_edits(analysis: &FileAnalysis, text: &str, plan: &UnitPlan) -> Result<(Vec<TextEdit>, String), SymbolId> {
    let mut current_text = text.to_string();
    // The analysis of `current_text` once a round of edits is applied.
    let mut reanalysed: Option<FileAnalysis> = None;
    let mut pending: Vec<(SymbolId, Candidate)> = plan.changes.iter().map(|it| (it.array, it.chosen.clone())).collect();
    // The offsets of the original accesses move with every round of edits.
    let mut applied_rounds: Vec<Vec<TextEdit>> = Vec::new();
    while !pending.is_empty() {
        let current = reanalysed.as_ref().unwrap_or(analysis);
        let mut batch: Vec<TextEdit> = Vec::new();
        let mut deferred = Vec::new();
        for (array, chosen) in pending {
            let Some(from) = chosen.from_access else { continue };
            let from = applied_rounds.iter().fold(from, |range, edits| shifted(range, edits));
            let Some(access) = synthetic_access(current, array, from, &chosen) else { return Err(array) };
            let Some(edits) = realign_edits(current, &current_text, &access) else { return Err(array) };
            let clashes = edits.iter().any(|a| {
                batch.iter().any(|b| a.range.start < b.range.end && b.range.start < a.range.end || a.range == b.range)
            });
            if clashes {
                deferred.push((array, chosen));
            } else {
                batch.extend(edits);
            }
        }
        if batch.is_empty() {
            break;
        }
        current_text = apply(&current_text, &batch);
        applied_rounds.push(batch);
        if deferred.is_empty() {
            break;
        }
        reanalysed = Some(analysis.reanalyze(&current_text));
        pending = deferred;
    }
    let edits = match applied_rounds.len() {
        0 => Vec::new(),
        1 => applied_rounds.pop().expect("one round"),
        // Several rounds (arrays sharing one ALIGN line): one edit of the changed region.
        _ => vec![whole_change(text, &current_text)],
    };
    Ok((edits, current_text))
}

/// The access of `array` at `range`, asking for the alignment `chosen`.
fn synthetic_access(analysis: &FileAnalysis, array: SymbolId, range: TextRange, chosen: &Candidate) -> Option<Access> {
    let access =
        analysis.loops.iter().flat_map(|it| it.accesses.iter()).find(|it| it.array == array && it.range == range)?;
    let mut dims = Vec::new();
    for dim in 0..analysis.model.symbol(array).rank() {
        // A dimension no target axis follows is collapsed.
        let found = chosen.axes.iter().enumerate().find_map(|(target_dim, axis)| match *axis {
            Axis::Affine { source_dim, stride, offset } if source_dim == dim => Some((target_dim, stride, offset)),
            _ => None,
        });
        dims.push(found);
    }
    let mut res = access.clone();
    res.optimal_alignment = Some(OptimalAlignment { target: chosen.target, dims });
    Some(res)
}

/// Where `range` of the text before `edits` is after them (edits sit in directives, away from it).
fn shifted(range: TextRange, edits: &[TextEdit]) -> TextRange {
    let delta: isize = edits
        .iter()
        .filter(|it| it.range.end <= range.start)
        .map(|it| it.new_text.len() as isize - it.range.len() as isize)
        .sum();
    TextRange::new((range.start as isize + delta) as usize, (range.end as isize + delta) as usize)
}

/// One edit replacing the region where `old` and `new` differ.
fn whole_change(old: &str, new: &str) -> TextEdit {
    let prefix = old.bytes().zip(new.bytes()).take_while(|(a, b)| a == b).count();
    let prefix = (0..=prefix).rev().find(|it| old.is_char_boundary(*it) && new.is_char_boundary(*it)).unwrap_or(0);
    let max_suffix = (old.len() - prefix).min(new.len() - prefix);
    let suffix = old.bytes().rev().zip(new.bytes().rev()).take(max_suffix).take_while(|(a, b)| a == b).count();
    let suffix = (0..=suffix)
        .rev()
        .find(|it| old.is_char_boundary(old.len() - it) && new.is_char_boundary(new.len() - it))
        .unwrap_or(0);
    TextEdit {
        range: TextRange::new(prefix, old.len() - suffix),
        new_text: new[prefix..new.len() - suffix].to_string(),
    }
}

/// Optimises the alignments of `unit` and writes the edits. An array whose
/// directive cannot be rewritten is kept as declared and the rest is
/// optimised again around it.
pub fn optimize_unit_edits(analysis: &FileAnalysis, text: &str, unit: UnitId, config: CostConfig) -> Optimized {
    let mut kept = Vec::new();
    loop {
        let plan = optimize_unit_with(analysis, unit, config, &kept);
        if plan.changes.is_empty() {
            let measured = plan.before;
            return Optimized { plan, edits: Vec::new(), new_text: text.to_string(), measured, kept };
        }
        match plan_edits(analysis, text, &plan) {
            Ok((edits, new_text)) => {
                let after = analysis.reanalyze(&new_text);
                let measured = unit_costs(&after, config)
                    .into_iter()
                    .find(|it| it.unit == unit)
                    .map_or(Cost::default(), |it| it.cost);
                return Optimized { plan, edits, new_text, measured, kept };
            }
            Err(array) => kept.push(array),
        }
    }
}

/// The source action "Optimize all alignments in this unit" for the unit
/// around `range`, when the optimiser finds a cheaper set of alignments.
pub fn optimize_action(analysis: &FileAnalysis, text: &str, range: TextRange, config: CostConfig) -> Option<Action> {
    let unit = innermost_unit(analysis, range)?;
    let optimized = optimize_unit_edits(analysis, text, unit, config);
    if optimized.edits.is_empty() || optimized.measured >= optimized.plan.before {
        return None;
    }
    let names: Vec<&str> =
        optimized.plan.changes.iter().map(|it| analysis.model.symbol(it.array).name.text.as_str()).collect();
    Some(Action {
        title: format!(
            "Optimize all alignments in this unit ({}): {}",
            names.join(", "),
            describe_change(optimized.plan.before, optimized.measured)
        ),
        kind: ActionKind::Source,
        edits: optimized.edits,
        fixes: None,
        is_preferred: false,
    })
}

/// The innermost program unit that holds `range`.
fn innermost_unit(analysis: &FileAnalysis, range: TextRange) -> Option<UnitId> {
    analysis
        .model
        .units
        .iter()
        .enumerate()
        .filter(|(_, it)| it.range.contains_range(range))
        .min_by_key(|(_, it)| it.range.len())
        .map(|(idx, _)| idx)
}

/// "Grow TEMPLATE T to T(0:9) and realign B": the cheapest of
/// [`propose_growth`]'s proposals for the unit that holds `range`, as one
/// source action (the template's bounds and the unit's ALIGN directives).
pub fn grow_template_action(
    analysis: &FileAnalysis,
    text: &str,
    range: TextRange,
    config: CostConfig,
) -> Option<Action> {
    let unit = innermost_unit(analysis, range)?;
    let optimized = optimize_unit_edits(analysis, text, unit, config);
    let growth = propose_growth(analysis, text, unit, config, optimized.measured).into_iter().next()?;
    Some(Action {
        title: format!(
            "Grow TEMPLATE {} and realign {}: {}",
            describe_growth(analysis, &growth),
            growth.realigned.join(", "),
            describe_change(optimized.plan.before, growth.measured)
        ),
        kind: ActionKind::Source,
        edits: vec![whole_change(text, &growth.new_text)],
        fixes: None,
        is_preferred: false,
    })
}

/// `T(1:4) to T(1:5)`: a grown template's bounds before and after.
pub fn describe_growth(analysis: &FileAnalysis, growth: &Growth) -> String {
    let symbol = analysis.model.symbol(growth.template);
    let bounds = |new: bool| -> String {
        let parts: Vec<String> = (0..symbol.rank())
            .map(|dim| match growth.dims.iter().find(|it| it.dim == dim) {
                Some(grown) => {
                    let (lo, hi) = if new { grown.new } else { grown.old };
                    format!("{lo}:{hi}")
                }
                None => symbol.shape.get(dim).map_or("?".to_string(), |it| it.render()),
            })
            .collect();
        format!("{}({})", symbol.name.text, parts.join(","))
    };
    format!("{} to {}", bounds(false), bounds(true))
}

/// `moved elements 12 → 0, messages 6 → 0` (and the misaligned accesses
/// whose transfers cannot be counted, when there are any).
pub fn describe_change(before: Cost, after: Cost) -> String {
    let mut parts = Vec::new();
    if before.elements != 0 || after.elements != 0 || before.misaligned == 0 && after.misaligned == 0 {
        parts.push(format!("moved elements {} → {}", before.elements, after.elements));
        parts.push(format!("messages {} → {}", before.messages, after.messages));
    }
    if before.misaligned != 0 || after.misaligned != 0 {
        parts.push(format!("uncounted misaligned accesses {} → {}", before.misaligned, after.misaligned));
    }
    parts.join(", ")
}

/// [`optimize_unit_edits`] for every unit with loops, last unit first, so
/// every unit's edits are offsets into the original `text`.
pub fn optimize_file_edits(analysis: &FileAnalysis, text: &str, config: CostConfig) -> Vec<Optimized> {
    let mut units: Vec<UnitId> = unit_costs(analysis, config).into_iter().map(|it| it.unit).collect();
    units.sort_by_key(|&it| std::cmp::Reverse(analysis.model.units[it].range.start));
    let mut current_text = text.to_string();
    let mut reanalysed: Option<FileAnalysis> = None;
    let mut res = Vec::new();
    for unit in units {
        let optimized = optimize_unit_edits(reanalysed.as_ref().unwrap_or(analysis), &current_text, unit, config);
        if !optimized.edits.is_empty() {
            current_text = optimized.new_text.clone();
            reanalysed = Some(analysis.reanalyze(&current_text));
        }
        res.push(optimized);
    }
    res.reverse();
    res
}

/// Applies non-overlapping edits to `text` (as the editor would).
pub fn apply_edits(text: &str, edits: &[TextEdit]) -> String {
    apply(text, edits)
}

/// One dimension of a grown template (zero-based) with its old and new bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GrownDim {
    pub dim: usize,
    pub old: (i64, i64),
    pub new: (i64, i64),
}

/// A template grown so that optimal alignments that fell outside it fit,
/// with the unit optimised again on the grown program.
#[derive(Clone, Debug)]
pub struct Growth {
    pub template: SymbolId,
    pub dims: Vec<GrownDim>,
    /// The program with the template grown and the unit's alignments optimised.
    pub new_text: String,
    /// The unit's cost measured on that program.
    pub measured: Cost,
    pub realigned: Vec<String>,
}

/// Templates to grow: for each access of the unit whose optimal alignment
/// falls outside its template, grow that template to hold it, optimise the
/// grown program again, and keep the proposals that cost less than `best`
/// (the unit's cost after optimising without growth), cheapest first.
pub fn propose_growth(
    analysis: &FileAnalysis,
    text: &str,
    unit: UnitId,
    config: CostConfig,
    best: Cost,
) -> Vec<Growth> {
    use std::collections::BTreeMap;
    let model = &analysis.model;
    // (template, dimension) -> the bounds the optimal alignments need.
    let mut needed: BTreeMap<SymbolId, BTreeMap<usize, (i64, i64)>> = BTreeMap::new();
    for report in analysis.loops.iter().filter(|it| it.unit == unit && it.no_home.is_none()) {
        for access in report.accesses.iter().filter(|it| it.transfer.is_some()) {
            let (Some(crate::loops::NoOptimal::OutOfBounds { dim, lo, hi, .. }), Some(optimal)) =
                (&access.reason, &access.optimal_alignment)
            else {
                continue;
            };
            if model.symbol(optimal.target).kind != crate::model::SymbolKind::Template {
                continue;
            }
            let Some(&Some((target_dim, _, _))) = optimal.dims.get(*dim) else { continue };
            let entry = needed.entry(optimal.target).or_default().entry(target_dim).or_insert((*lo, *hi));
            *entry = (entry.0.min(*lo), entry.1.max(*hi));
        }
    }
    let errors = |it: &FileAnalysis| it.diagnostics.iter().filter(|d| d.severity == syntax::Severity::Error).count();
    let mut res = Vec::new();
    for (template, dims) in needed {
        if model.is_external(template) {
            continue;
        }
        let symbol = model.symbol(template);
        let mut edits = Vec::new();
        let mut grown = Vec::new();
        for (&target_dim, &(lo, hi)) in &dims {
            let Some(shape) = symbol.shape.get(target_dim) else { continue };
            let (Some(old_lo), Some(old_hi)) = (shape.lo.known(), shape.hi.known()) else { continue };
            let new = (old_lo.min(lo), old_hi.max(hi));
            if new != (old_lo, old_hi) {
                // `T(4)` grows to `T(5)`, not `T(1:5)`: keep the user's form where it can be kept.
                let written = text.get(shape.range.start..shape.range.end).unwrap_or(":");
                let new_text = if new.0 == 1 && !written.contains(':') {
                    new.1.to_string()
                } else {
                    format!("{}:{}", new.0, new.1)
                };
                edits.push(TextEdit { range: shape.range, new_text });
                grown.push(GrownDim { dim: target_dim, old: (old_lo, old_hi), new });
            }
        }
        if edits.is_empty() {
            continue;
        }
        let grown_text = apply(text, &edits);
        let grown_analysis = analysis.reanalyze(&grown_text);
        if errors(&grown_analysis) > errors(analysis) {
            continue;
        }
        let optimized = optimize_unit_edits(&grown_analysis, &grown_text, unit, config);
        if optimized.measured < best {
            let realigned = optimized
                .plan
                .changes
                .iter()
                .map(|it| grown_analysis.model.symbol(it.array).name.text.clone())
                .collect();
            res.push(Growth {
                template,
                dims: grown,
                new_text: optimized.new_text,
                measured: optimized.measured,
                realigned,
            });
        }
    }
    res.sort_by_key(|it| it.measured);
    res
}
