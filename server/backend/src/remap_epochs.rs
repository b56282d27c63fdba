//! REALIGN and REDISTRIBUTE in the main program. The analysis splits the
//! main program at its remap directives into mapping epochs
//! (`analysis::loops::MappingEpochs`) and analyses each statement's loops
//! under the mapping of its epoch; the lowering does the same: each epoch
//! has its own layouts of the distributed arrays, each statement is
//! planned and emitted under those of its epoch.
//!
//! Between two epochs every array whose layout changed is laid out anew:
//! each process allocates its part under the new layout, fills it from the
//! old one with one all-to-all (`hpf_copy_nd_*`, the exchange of
//! `call_remap.rs`: each owner of a new element asks the owner of the old
//! one), and the new part and descriptor take the array's place
//! (`move_alloc`). An array keeps its shadow widths across epochs (the
//! largest any epoch needs), so one that does not move is never copied.
//!
//! Supported: remaps between the main program's top-level statements, of
//! arrays and templates, that keep every array distributed along as many
//! dimensions. A remap inside a DO, IF or other construct (its mapping
//! would depend on the path taken) or in a subroutine or function is not
//! followed: `hoist::rewrite` makes it a comment (`unfollowed_remaps`)
//! and the arrays keep their mapping, which changes no value. One that
//! distributes an array along another number of dimensions (or not at
//! all) is refused at its directive.

use std::collections::BTreeMap;
use std::fmt::Write;

use analysis::loops::MappingEpochs;
use analysis::model::{RemapKind, SymbolId};
use syntax::TextRange;

use crate::{Distributed, Lowering};

/// Gives every array the same shadow widths in every epoch: the largest.
pub(crate) fn share_shadows(layouts: &mut [BTreeMap<SymbolId, Distributed>]) {
    let mut widest: BTreeMap<SymbolId, [i64; 4]> = BTreeMap::new();
    for layout in layouts.iter() {
        for (id, it) in layout {
            let second = it.second.as_ref().map_or((0, 0), |s| (s.shadow_low, s.shadow_high));
            let entry = widest.entry(*id).or_default();
            for (slot, width) in entry.iter_mut().zip([it.shadow_low, it.shadow_high, second.0, second.1]) {
                *slot = (*slot).max(width);
            }
        }
    }
    for layout in layouts.iter_mut() {
        for (id, it) in layout.iter_mut() {
            let [low, high, second_low, second_high] = widest[id];
            it.shadow_low = low;
            it.shadow_high = high;
            if let Some(second) = &mut it.second {
                second.shadow_low = second_low;
                second.shadow_high = second_high;
            }
        }
    }
}

impl Lowering<'_> {
    /// Refuses the remaps the lowering cannot follow: those of other units
    /// and those inside a statement of the main program.
    pub(crate) fn check_remaps(&mut self, main: &syntax::Unit) {
        let model = &self.analysis.model;
        let own_units = analysis::model::flatten_units(&self.analysis.file).len();
        for (unit_id, unit) in model.units.iter().enumerate().take(own_units) {
            for remap in &unit.remaps {
                let what = keyword(remap.kind);
                if unit_id != self.main {
                    self.error(
                        remap.directive,
                        format!("{what} in a subroutine or function is not supported by the MPI backend yet (between the main program's statements it is)"),
                    );
                } else if let Some(stmt) = main.body.iter().find(|it| it.range.contains_range(remap.directive)) {
                    let line = self.user_line(stmt.range.start);
                    self.error(
                        remap.directive,
                        format!("{what} inside the statement of line {line} is not supported by the MPI backend yet: the mapping after it would depend on the path taken (between the main program's statements it is supported)"),
                    );
                }
            }
        }
    }

    /// Refuses epochs whose layouts the generated code cannot switch
    /// between: an array distributed in one epoch and not in another, or
    /// along another number of dimensions (its descriptors change shape).
    pub(crate) fn check_epoch_layouts(&mut self, layouts: &[BTreeMap<SymbolId, Distributed>]) {
        let remaps = &self.analysis.model.units[self.main].remaps;
        let mut points: Vec<_> = remaps.iter().map(|it| it.directive).collect();
        points.dedup_by_key(|it| it.start);
        for (epoch, pair) in layouts.windows(2).enumerate() {
            let (before, after) = (&pair[0], &pair[1]);
            let directive = points[epoch];
            let ids: std::collections::BTreeSet<&SymbolId> = before.keys().chain(after.keys()).collect();
            for id in ids {
                let name = &self.analysis.model.symbol(*id).name.text;
                let problem = match (before.get(id), after.get(id)) {
                    (Some(old), Some(new)) if old.second.is_some() != new.second.is_some() => Some(format!(
                        "`{name}` would go from {} to {} distributed dimension(s): a remap that keeps the number of distributed dimensions is supported by the MPI backend, this one not yet",
                        dims(old),
                        dims(new)
                    )),
                    (Some(_), None) => Some(format!(
                        "`{name}` would no longer be distributed: a remap that replicates an array is not supported by the MPI backend yet"
                    )),
                    (None, Some(_)) => Some(format!(
                        "`{name}` would become distributed: a remap of an array that was not distributed is not supported by the MPI backend yet"
                    )),
                    _ => None,
                };
                if let Some(message) = problem {
                    self.error(directive, message);
                }
            }
        }
    }

    /// The copies that lay out anew every array whose layout differs
    /// between the epochs `from` and `to` (`layouts`, with the same
    /// shadows), counted by `--stats` as one step on the line of the first
    /// remap directive between them, next to what the analysis predicts.
    pub(crate) fn emit_remaps(
        &self,
        out: &mut String,
        (before, after): (&BTreeMap<SymbolId, Distributed>, &BTreeMap<SymbolId, Distributed>),
        epochs: &MappingEpochs,
        (from, to): (usize, usize),
    ) {
        let moved: Vec<(&SymbolId, &Distributed)> =
            after.iter().filter(|(id, new)| !crate::procedures::same_layout(&before[id], new)).collect();
        if moved.is_empty() {
            return;
        }
        // A temporary of `hoist.rs` holds nothing between statements: laid
        // out anew, nothing to copy.
        let is_temporary = |it: &Distributed| self.hoisted.is_some_and(|hoisted| hoisted.is_temporary(&it.name));
        let moves = analysis::remap_cost::remap_moves(epochs.model(from), epochs.model(to), self.main);
        // (messages, elements), as the loops' predictions.
        let predicted =
            moved.iter().filter(|it| !is_temporary(it.1)).try_fold((0, 0), |(messages, elements), (id, _)| {
                let (e, m) = moves.iter().find(|it| it.array == **id)?.count.clone().ok()?;
                Some((messages + m, elements + e))
            });
        let directive = epochs.start(from + 1).unwrap_or(0);
        let line = self.user_line(directive);
        let mut stat_loops = self.stat_loops.borrow_mut();
        stat_loops.push((line, predicted));
        let id = stat_loops.len();
        drop(stat_loops);
        let _ = writeln!(out, "  call hpf_stat_begin()");
        for (id, new) in moved {
            let old = &before[id];
            let name = &new.name;
            let mut temp = new.clone();
            temp.name = format!("hpf_m_{name}");
            if is_temporary(new) {
                let _ = writeln!(out, "  ! hpf-ls: remapped here: {name} is laid out anew (it holds nothing yet)");
            } else {
                let _ = writeln!(
                    out,
                    "  ! hpf-ls: remapped here: {name} is laid out anew, its elements move by one all-to-all"
                );
            }
            let _ = writeln!(out, "  block");
            crate::emit_block_temp(out, &temp);
            if !is_temporary(new) {
                let _ = writeln!(out, "{}", crate::call_remap::copy_nd_call(old, &temp));
            }
            crate::emit_move_temp(out, &temp.name, name);
            let _ = writeln!(out, "  end block");
        }
        let _ = writeln!(out, "  call hpf_stat_end({id})");
    }
}

/// Text replacements, or notes: a range of the text and a string.
type Replacements = Vec<(TextRange, String)>;

/// The remaps the lowering does not follow, made plain comments (their
/// `HPF$` sentinels become `HPF-`, the text keeps its length), with a note
/// for each: a REALIGN or REDISTRIBUTE inside a statement of the main
/// program (the mapping after it would depend on the path taken) or in
/// another unit. A remap changes where elements live, never their values,
/// so the program without it computes the same; the arrays keep the
/// mapping they had before it. Returns the edits and the notes (ranges of
/// `text`).
pub(crate) fn unfollowed_remaps(analysis: &analysis::FileAnalysis, text: &str) -> (Replacements, Replacements) {
    let (mut edits, mut notes) = (Vec::new(), Vec::new());
    let units = analysis::model::flatten_units(&analysis.file);
    let Some(main_id) = units.iter().position(|(it, _)| it.kind == syntax::UnitKind::Program) else {
        return (edits, notes);
    };
    let main = units[main_id].0;
    let lines = syntax::LineIndex::new(text);
    let line_of = |offset: usize| lines.line_col(text, offset).0 + 1;
    for (unit_id, unit) in analysis.model.units.iter().enumerate().take(units.len()) {
        for remap in &unit.remaps {
            let directive = remap.directive;
            if notes.iter().any(|(range, _)| *range == directive) {
                continue;
            }
            let what = keyword(remap.kind);
            let why = if unit_id != main_id {
                format!("{what} in a subroutine or function")
            } else if let Some(stmt) = main.body.iter().find(|it| it.range.contains_range(directive)) {
                format!(
                    "{what} inside the statement of line {} (the mapping after it would depend on the path taken)",
                    line_of(stmt.range.start)
                )
            } else {
                continue;
            };
            let Some(directive_text) = text.get(directive.start..directive.end) else { continue };
            let lower = directive_text.to_ascii_lowercase();
            for (at, _) in lower.match_indices("hpf$") {
                let start = directive.start + at + 3;
                edits.push((TextRange::new(start, start + 1), "-".to_string()));
            }
            notes.push((
                directive,
                format!("{why} is not followed by the MPI backend: the arrays keep the mapping they had before it, which changes where their elements live but not what the program computes"),
            ));
        }
    }
    (edits, notes)
}

fn keyword(kind: RemapKind) -> &'static str {
    match kind {
        RemapKind::Realign => "REALIGN",
        RemapKind::Redistribute => "REDISTRIBUTE",
    }
}

fn dims(it: &Distributed) -> usize {
    1 + usize::from(it.second.is_some())
}
