//! Inlay hints ("show transfer pattern"): a summary of each loop's
//! transfers at the end of its header, and the pattern after each
//! misaligned reference.

use std::fmt::Write;

use syntax::TextRange;

use crate::loops::{LoopReport, When};
use crate::FileAnalysis;

/// Which hints to show (the editor's settings).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HintConfig {
    pub loops: bool,
    pub references: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HintKind {
    /// At the end of a loop header: every transfer of the loop.
    LoopSummary,
    /// After a misaligned reference: its pattern.
    Reference,
    /// At the end of a REALIGN or REDISTRIBUTE: what it moves (shown with the loops' summaries).
    Remap,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InlayHint {
    /// Where the hint goes (after this byte).
    pub offset: usize,
    pub label: String,
    pub kind: HintKind,
}

fn compact(kind: &crate::loops::TransferKind) -> String {
    kind.describe().replace("shift by ", "shift").replace("halo of width ", "halo ")
}

/// The hints inside `range` (the whole file when `None`).
pub fn inlay_hints(
    analysis: &FileAnalysis,
    text: &str,
    config: HintConfig,
    range: Option<TextRange>,
) -> Vec<InlayHint> {
    let mut hints = Vec::new();
    let wanted = |offset: usize| range.is_none_or(|it| it.contains_inclusive(offset));
    for report in &analysis.loops {
        let moving: Vec<_> = report
            .accesses
            .iter()
            .filter(|it| it.transfer.as_ref().is_some_and(|t| t.count.as_ref().is_none_or(|c| c.moved_elements > 0)))
            .collect();
        if config.loops && !moving.is_empty() && wanted(report.header.end) {
            let mut parts = Vec::new();
            for access in &moving {
                let transfer = access.transfer.as_ref().expect("filtered");
                let arrow = match transfer.when {
                    When::Before => "⇐",
                    When::After => "⇒",
                };
                let mut part =
                    format!("{arrow} {} {}", analysis.model.symbol(access.array).name.text, compact(&transfer.kind));
                if let Some(count) = &transfer.count {
                    let _ = write!(part, ": {} elems, {} msgs", count.moved_elements, count.messages.len());
                }
                if !parts.contains(&part) {
                    parts.push(part);
                }
            }
            // Past a trailing comment the hint would read as part of it; put it at the code's end.
            let header = text.get(report.header.to_range()).unwrap_or("");
            let end = report.header.start + header.trim_end().len();
            hints.push(InlayHint {
                offset: end,
                label: format!("  {}", parts.join("; ")),
                kind: HintKind::LoopSummary,
            });
        }
        if config.references {
            for access in moving {
                if !wanted(access.range.end) {
                    continue;
                }
                let transfer = access.transfer.as_ref().expect("filtered");
                hints.push(InlayHint {
                    offset: access.range.end,
                    label: format!(" {}", compact(&transfer.kind)),
                    kind: HintKind::Reference,
                });
            }
        }
    }
    if config.loops {
        remap_hints(analysis, text, &wanted, &mut hints);
    }
    hints.sort_by_key(|it| it.offset);
    hints
}

/// At the end of each remap directive's first line, what it moves: the
/// arrays whose elements change process, with the elements and messages.
fn remap_hints(analysis: &FileAnalysis, text: &str, wanted: &dyn Fn(usize) -> bool, hints: &mut Vec<InlayHint>) {
    let model = &analysis.model;
    for (unit, unit_model) in model.units.iter().enumerate() {
        if unit_model.origin.is_some() || unit_model.remaps.is_empty() {
            continue;
        }
        let epochs = crate::loops::MappingEpochs::new(model, unit);
        for epoch in 1..epochs.count() {
            let Some(start) = epochs.start(epoch) else { continue };
            let line = text.get(start..).unwrap_or("").lines().next().unwrap_or("");
            let end = start + line.trim_end().len();
            if !wanted(end) {
                continue;
            }
            let moves = crate::remap_cost::remap_moves(epochs.model(epoch - 1), epochs.model(epoch), unit);
            let parts: Vec<String> = moves
                .iter()
                .filter_map(|it| {
                    let (elements, messages) = it.count.clone().ok().filter(|it| it.0 > 0)?;
                    Some(format!("⇄ {}: {elements} elems, {messages} msgs", model.symbol(it.array).name.text))
                })
                .collect();
            if !parts.is_empty() {
                hints.push(InlayHint { offset: end, label: format!("  {}", parts.join("; ")), kind: HintKind::Remap });
            }
        }
    }
}

/// `hpf.showTransferPattern`: a Markdown table of the messages of the loop
/// at `offset`, per (source, destination) processor pair.
pub fn transfer_table(analysis: &FileAnalysis, text: &str, offset: usize) -> Option<String> {
    let report: &LoopReport =
        analysis.loops.iter().filter(|it| it.range.contains_inclusive(offset)).min_by_key(|it| it.range.len())?;
    let mut res = String::new();
    let header = text.get(report.header.to_range()).unwrap_or("").trim();
    let _ = writeln!(res, "### Transfers of `{header}`\n");
    let processors = crate::render::loop_processors(analysis, report);
    let mut any = false;
    for access in &report.accesses {
        let Some(transfer) = &access.transfer else { continue };
        any = true;
        let reference = text.get(access.range.to_range()).unwrap_or("");
        let when = match transfer.when {
            When::Before => "before the loop",
            When::After => "after the loop",
        };
        let _ = writeln!(res, "**`{reference}`**: {} {when}", transfer.kind.describe());
        match (&transfer.count, &transfer.uncounted) {
            (Some(count), _) => {
                let _ = writeln!(res, "\n{} element(s) in {} message(s)\n", count.moved_elements, count.messages.len());
                if !count.messages.is_empty() {
                    let _ = writeln!(res, "| from | to | elements |\n|---|---|---:|");
                    for message in &count.messages {
                        let (from, to) = (processors.of_rank(message.from), processors.of_rank(message.to));
                        let _ = writeln!(res, "| {from} | {to} | {} |", message.elements);
                    }
                    res.push('\n');
                }
            }
            (None, Some(why)) => {
                let _ = writeln!(res, "\nnot counted: {why}\n");
            }
            (None, None) => res.push('\n'),
        }
        if let (Some(align), None) = (&access.optimal_align, &access.reason) {
            let _ = writeln!(res, "optimal: `{align}`\n");
        }
    }
    if !any {
        let _ = writeln!(res, "Nothing moves: every access is aligned with the loop's home.");
    }
    Some(res)
}
