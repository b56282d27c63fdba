//! What-if distributions: the transfer cost of a loop (or of a whole unit)
//! under other distributions of the same alignment target, and a source
//! action that rewrites the DISTRIBUTE directive to the cheapest one.
//!
//! Every alternative is evaluated by the same analysis as the real program
//! (`loops::analyze_loops` on a copy of the model whose target, and every
//! target distributed alike, has the alternative distribution), so its
//! figures come from the closed forms of `transfer.rs` and cost the same
//! whatever the array sizes.

use std::fmt::Write;

use syntax::TextRange;

use crate::ide::{Action, ActionKind, TextEdit};
use crate::loops::{analyze_loops, equivalent_targets};
use crate::model::{flatten_units, Bound, Dim, Format, Model, SymbolId, UnitId};
use crate::FileAnalysis;

/// The block sizes tried for CYCLIC(k), besides CYCLIC.
const CYCLIC_SIZES: &[i64] = &[2, 4, 8];

/// One distribution of the target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alternative {
    /// One format per target dimension (`Format::Collapsed` for `*`).
    pub formats: Vec<Format>,
    /// Processors per distributed dimension.
    pub procs: Vec<i64>,
    /// Whether it runs on the program's processor arrangement (only these are offered as rewrites).
    pub same_procs: bool,
}

impl Alternative {
    /// `(BLOCK,*) on 4` / `(CYCLIC,CYCLIC) on 2x2`.
    pub fn label(&self) -> String {
        let formats: Vec<String> = self.formats.iter().map(|it| it.render()).collect();
        let procs: Vec<String> = self.procs.iter().map(|it| it.to_string()).collect();
        format!("({}) on {}", formats.join(","), procs.join("x"))
    }
}

/// The cost of one alternative over the loops in scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WhatIfRow {
    pub alternative: Alternative,
    pub moved_elements: u64,
    pub messages: u64,
    /// Transfers that could not be counted (their cost is unknown).
    pub uncounted: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WhatIf {
    /// The final alignment target whose distribution changes.
    pub target: SymbolId,
    /// Every target distributed alike that changes with it (the target included).
    pub targets: Vec<SymbolId>,
    /// The loops whose transfers are summed.
    pub loops: Vec<usize>,
    /// The current distribution first, then the alternatives.
    pub rows: Vec<WhatIfRow>,
}

impl WhatIf {
    /// The cheapest row on the same processors whose cost is fully known, when it beats the current one.
    pub fn best(&self) -> Option<&WhatIfRow> {
        let current = self.rows.first()?;
        if current.uncounted > 0 {
            return None;
        }
        let best = self
            .rows
            .iter()
            .skip(1)
            .filter(|it| it.alternative.same_procs && it.uncounted == 0)
            .min_by_key(|it| (it.moved_elements, it.messages))?;
        ((best.moved_elements, best.messages) < (current.moved_elements, current.messages)).then_some(best)
    }
}

/// The table for loop `loop_idx`: its home's target under other distributions.
pub fn what_if_loop(analysis: &FileAnalysis, loop_idx: usize) -> Option<WhatIf> {
    let home = analysis.loops.get(loop_idx)?.home.as_ref()?;
    let target = analysis.model.resolve(home.array)?.target;
    what_if(analysis, target, vec![loop_idx])
}

/// The table for every loop of `unit` whose home lives on the target of loop `loop_idx`.
pub fn what_if_unit(analysis: &FileAnalysis, loop_idx: usize) -> Option<WhatIf> {
    let report = analysis.loops.get(loop_idx)?;
    let target = analysis.model.resolve(report.home.as_ref()?.array)?.target;
    let loops = unit_loops(analysis, report.unit);
    what_if(analysis, target, loops)
}

fn unit_loops(analysis: &FileAnalysis, unit: UnitId) -> Vec<usize> {
    (0..analysis.loops.len()).filter(|idx| analysis.loops[*idx].unit == unit).collect()
}

/// The table for `target` over `loops`.
pub fn what_if(analysis: &FileAnalysis, target: SymbolId, loops: Vec<usize>) -> Option<WhatIf> {
    let model = &analysis.model;
    let distribution = model.symbol(target).mapping.distribution.as_ref()?;
    if distribution.formats.is_empty() || distribution.descriptive {
        return None;
    }
    let extents: Vec<i64> = model.symbol(target).shape.iter().map(|it| it.extent()).collect::<Option<_>>()?;
    let procs = processor_counts(model, target)?;
    let current = Alternative { formats: distribution.formats.clone(), procs: procs.clone(), same_procs: true };
    let targets: Vec<SymbolId> = model
        .symbols()
        .filter(|(id, symbol)| {
            *id == target
                || symbol.mapping.align.is_none()
                    && symbol.mapping.distribution.is_some()
                    && equivalent_targets(model, *id, target)
        })
        .map(|(id, _)| id)
        .collect();
    let units: Vec<&syntax::Unit> = flatten_units(&analysis.file).into_iter().map(|(unit, _)| unit).collect();
    let mut rows = Vec::new();
    for alternative in std::iter::once(current.clone()).chain(alternatives(&current, &extents)) {
        let changed = with_distribution(model, &targets, &alternative)?;
        let mut diagnostics = Vec::new();
        let reports = analyze_loops(&changed, &units, &mut diagnostics);
        let mut row = WhatIfRow { alternative, moved_elements: 0, messages: 0, uncounted: 0 };
        for &idx in &loops {
            for access in reports.get(idx).iter().flat_map(|it| &it.accesses) {
                let Some(transfer) = &access.transfer else { continue };
                match &transfer.count {
                    Some(count) => {
                        row.moved_elements = row.moved_elements.saturating_add(count.moved_elements);
                        row.messages = row.messages.saturating_add(count.messages.len() as u64);
                    }
                    None if transfer.uncounted.as_deref() == Some("the arrays are not distributed") => {}
                    None => row.uncounted += 1,
                }
            }
        }
        rows.push(row);
    }
    Some(WhatIf { target, targets, loops, rows })
}

/// The processor count per distributed dimension of `target`, when known.
fn processor_counts(model: &Model, target: SymbolId) -> Option<Vec<i64>> {
    let distribution = model.symbol(target).mapping.distribution.as_ref()?;
    let n_distributed = distribution.formats.iter().filter(|it| **it != Format::Collapsed).count();
    let counts: Vec<i64> = model.processor_counts(distribution).into_iter().collect::<Option<_>>()?;
    (counts.len() == n_distributed).then_some(counts)
}

/// The distributions tried besides the current one.
fn alternatives(current: &Alternative, extents: &[i64]) -> Vec<Alternative> {
    let rank = extents.len();
    let n_distributed = current.procs.len();
    let candidates = |extent: i64, procs: i64| {
        let mut res = vec![Format::Block, Format::Cyclic(Some(1))];
        let block = crate::model::block_size(extent, procs);
        res.extend(CYCLIC_SIZES.iter().filter(|k| **k < block).map(|k| Format::Cyclic(Some(*k))));
        res
    };
    let mut res: Vec<Alternative> = Vec::new();
    let mut push = |formats: Vec<Format>, procs: Vec<i64>, same_procs: bool| {
        let alternative = Alternative { formats, procs, same_procs };
        let is_current = alternative.formats == current.formats && alternative.procs == current.procs;
        if !is_current && !res.contains(&alternative) {
            res.push(alternative);
        }
    };
    match n_distributed {
        1 => {
            let procs = current.procs[0];
            // Every dimension of the target in turn (the other dimension in 2-D).
            for dim in 0..rank {
                for format in candidates(extents[dim], procs) {
                    let mut formats = vec![Format::Collapsed; rank];
                    formats[dim] = format;
                    push(formats, vec![procs], true);
                }
            }
            let dim = current.formats.iter().position(|it| *it != Format::Collapsed).unwrap_or(0);
            for other in [procs / 2, procs.saturating_mul(2)] {
                if other >= 1 && other != procs {
                    let mut formats = vec![Format::Collapsed; rank];
                    formats[dim] = Format::Block;
                    push(formats, vec![other], false);
                }
            }
        }
        _ => {
            let dims: Vec<usize> = (0..rank).filter(|it| current.formats[*it] != Format::Collapsed).collect();
            let mut uniform = vec![Format::Block, Format::Cyclic(Some(1))];
            let smallest_block = dims
                .iter()
                .zip(&current.procs)
                .map(|(dim, procs)| crate::model::block_size(extents[*dim], *procs))
                .min()
                .unwrap_or(1);
            uniform.extend(CYCLIC_SIZES.iter().filter(|k| **k < smallest_block).map(|k| Format::Cyclic(Some(*k))));
            for format in uniform {
                let mut formats = current.formats.clone();
                for dim in &dims {
                    formats[*dim] = format;
                }
                push(formats, current.procs.clone(), true);
            }
            if dims.len() == 2 {
                for (first, second) in
                    [(Format::Block, Format::Cyclic(Some(1))), (Format::Cyclic(Some(1)), Format::Block)]
                {
                    let mut formats = current.formats.clone();
                    formats[dims[0]] = first;
                    formats[dims[1]] = second;
                    push(formats, current.procs.clone(), true);
                }
                // The same processors as one row or one column: strips instead of blocks.
                let total = current.procs.iter().product::<i64>();
                let mut formats = current.formats.clone();
                formats[dims[0]] = Format::Block;
                formats[dims[1]] = Format::Block;
                push(formats.clone(), vec![total, 1], false);
                push(formats, vec![1, total], false);
            }
        }
    }
    res
}

/// A copy of the model in which every target of `targets` is distributed as `alternative` says.
fn with_distribution(model: &Model, targets: &[SymbolId], alternative: &Alternative) -> Option<Model> {
    let mut res = model.clone();
    let mut onto_done: Vec<SymbolId> = Vec::new();
    for &target in targets {
        let symbol = &mut res.units[target.unit].symbols[target.index];
        let distribution = symbol.mapping.distribution.as_mut()?;
        distribution.formats = alternative.formats.clone();
        match distribution.onto {
            Some(onto) if !onto_done.contains(&onto) => {
                onto_done.push(onto);
                let shape = &mut res.units[onto.unit].symbols[onto.index].shape;
                if shape.is_empty() && alternative.procs.iter().all(|it| *it == 1) {
                    continue;
                }
                let range = shape.first().map(|it| it.range).unwrap_or_default();
                *shape = alternative
                    .procs
                    .iter()
                    .map(|count| Dim { lo: Bound::Known(1), hi: Bound::Known(*count), range })
                    .collect();
            }
            Some(_) => {}
            None => res.config.number_of_processors = alternative.procs.first().copied(),
        }
    }
    Some(res)
}

/// The table as plain text (also valid Markdown).
pub fn render_table(analysis: &FileAnalysis, what_if: &WhatIf) -> String {
    let names: Vec<&str> =
        what_if.targets.iter().map(|it| analysis.model.symbol(*it).name.text.as_str()).collect::<Vec<_>>();
    let mut res = String::new();
    let scope =
        if what_if.loops.len() == 1 { "this loop".to_string() } else { format!("{} loops", what_if.loops.len()) };
    let _ = writeln!(res, "What if {} were distributed otherwise ({scope}):", names.join(", "));
    res.push('\n');
    let width = what_if.rows.iter().map(|it| it.alternative.label().len()).max().unwrap_or(12).max(12) + 12;
    let _ = writeln!(res, "| {:<width$} | {:>12} | {:>8} |", "distribution", "elements", "messages");
    let _ = writeln!(res, "|{}|{}:|{}:|", "-".repeat(width + 2), "-".repeat(13), "-".repeat(9));
    let best = what_if.best().map(|it| it.alternative.clone());
    for (idx, row) in what_if.rows.iter().enumerate() {
        let mut label = row.alternative.label();
        if idx == 0 {
            label.push_str(" current");
        } else if Some(&row.alternative) == best.as_ref() {
            label.push_str(" cheapest");
        }
        let (elements, messages) = if row.uncounted > 0 {
            ("?".to_string(), "?".to_string())
        } else {
            (row.moved_elements.to_string(), row.messages.to_string())
        };
        let _ = writeln!(res, "| {label:<width$} | {elements:>12} | {messages:>8} |");
    }
    res
}

/// The source action "distribute as the cheapest alternative", for the loop around `range`,
/// judged over every loop of its unit.
pub fn redistribute_actions(analysis: &FileAnalysis, text: &str, range: TextRange) -> Vec<Action> {
    let Some(loop_idx) = analysis
        .loops
        .iter()
        .enumerate()
        .filter(|(_, it)| it.range.contains_range(range) && it.home.is_some())
        .min_by_key(|(_, it)| it.range.len())
        .map(|(idx, _)| idx)
    else {
        return Vec::new();
    };
    // Nothing moves, or some cost is unknown: no distribution is provably cheaper, and no alternative is analysed.
    let unit = analysis.loops[loop_idx].unit;
    let transfers: Vec<_> = unit_loops(analysis, unit)
        .into_iter()
        .flat_map(|idx| &analysis.loops[idx].accesses)
        .filter_map(|it| it.transfer.as_ref())
        .collect();
    let moved: u64 = transfers.iter().filter_map(|it| it.count.as_ref()).map(|it| it.moved_elements).sum();
    let unknown = transfers
        .iter()
        .any(|it| it.count.is_none() && it.uncounted.as_deref() != Some("the arrays are not distributed"));
    if moved == 0 || unknown {
        return Vec::new();
    }
    let Some(what_if) = what_if_unit(analysis, loop_idx) else { return Vec::new() };
    let Some(best) = what_if.best() else { return Vec::new() };
    let current = &what_if.rows[0];
    let model = &analysis.model;
    // Remapped at run time: the directive is not the whole story.
    let remapped = model.units.iter().flat_map(|it| &it.remaps).any(|it| what_if.targets.contains(&it.symbol));
    // A target declared in another file is rewritten there, not here.
    if remapped || what_if.targets.iter().any(|it| model.is_external(*it)) {
        return Vec::new();
    }
    let mut edits: Vec<TextEdit> = Vec::new();
    for target in &what_if.targets {
        let Some(distribution) = &model.symbol(*target).mapping.distribution else { return Vec::new() };
        if edits.iter().any(|it| distribution.directive.contains_range(it.range)) {
            continue;
        }
        let Some(edit) = rewrite_formats(text, distribution.directive, &best.alternative.formats) else {
            return Vec::new();
        };
        edits.push(edit);
    }
    let names: Vec<&str> = what_if.targets.iter().map(|it| model.symbol(*it).name.text.as_str()).collect();
    let formats = |it: &Alternative| it.formats.iter().map(|f| f.render()).collect::<Vec<_>>().join(",");
    let scope = if what_if.loops.len() == 1 {
        "in this unit's loop".to_string()
    } else {
        format!("over the unit's {} loops", what_if.loops.len())
    };
    vec![Action {
        title: format!(
            "Distribute {} ({}) instead of ({}): {} → {} elements, {} → {} messages {scope}",
            names.join(", "),
            formats(&best.alternative),
            formats(&current.alternative),
            current.moved_elements,
            best.moved_elements,
            current.messages,
            best.messages
        ),
        kind: ActionKind::Source,
        edits,
        fixes: None,
        is_preferred: false,
    }]
}

/// Replaces the format list after the DISTRIBUTE keyword of the directive at `directive`.
fn rewrite_formats(text: &str, directive: TextRange, formats: &[Format]) -> Option<TextEdit> {
    let source = text.get(directive.to_range())?;
    let keyword = source.to_ascii_lowercase().find("distribute")?;
    let open = keyword + source[keyword..].find('(')?;
    let mut depth = 0;
    let mut close = None;
    for (offset, ch) in source[open..].char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(open + offset);
                    break;
                }
            }
            '\n' | '&' => return None,
            _ => {}
        }
    }
    let close = close?;
    let old = &source[open + 1..close];
    let lower = !old.chars().any(|it| it.is_ascii_uppercase()) && old.chars().any(|it| it.is_ascii_lowercase());
    let rendered: Vec<String> =
        formats.iter().map(|it| if lower { it.render().to_ascii_lowercase() } else { it.render() }).collect();
    let start = directive.start + open + 1;
    Some(TextEdit { range: TextRange::new(start, directive.start + close), new_text: rendered.join(",") })
}
