//! COMMON blocks in programs with subroutines and functions, as F77-era
//! codes keep their shared state (`COMMON /CLOCK/ NSTEP, TIME` in the main
//! program and in every routine that needs it).
//!
//! A COMMON block whose variables are not distributed is replicated: every
//! process has its own copy of the block, and the code every process runs
//! (the main program's replicated statements, the SPMD copies of
//! procedures) sets it alike everywhere, so the block is copied through as
//! written. What runs on rank 0 alone may set it there only: a statement of
//! the unit itself broadcasts what it assigns (`emit_on_rank_zero`), and a
//! statement that calls procedures using a block (themselves or through the
//! procedures they call) is followed by `call hpf_sync_common_<block>()`, a
//! generated subroutine that declares the block as one of its units does
//! and broadcasts each of its variables from rank 0. `BLOCK DATA` units
//! that initialise such blocks are copied as they are.
//!
//! A distributed array in a COMMON block is refused with its reason (each
//! process would need its local part in the block: not lowered yet), and so
//! is a block whose declaration the sync routine cannot repeat (a bound or
//! a kind that does not fold).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use analysis::model::{Bound, SymbolId, UnitId};
use syntax::{DeclAttr, TextRange, UnitKind};

use crate::Lowering;

/// One COMMON block as one unit declares it.
#[derive(Clone, Debug)]
pub(crate) struct CommonDeclaration {
    /// The block's name in lower case; empty for blank COMMON.
    pub(crate) block: String,
    /// The model's unit that declares it.
    pub(crate) unit: UnitId,
    /// Its variables, in order.
    pub(crate) members: Vec<SymbolId>,
    /// The COMMON statement.
    pub(crate) statement: TextRange,
}

/// What the backend knows of the program's COMMON blocks.
#[derive(Clone, Debug, Default)]
pub(crate) struct CommonBlocks {
    /// The block of every variable that is in one.
    pub(crate) block_of: BTreeMap<SymbolId, String>,
    /// Per block, the text of its sync subroutine (for the blocks that
    /// procedures use, which may run on rank 0 alone).
    pub(crate) syncs: BTreeMap<String, String>,
    /// Per procedure of the file (lower case), the blocks it uses, itself
    /// or through the procedures it calls.
    pub(crate) used_by: BTreeMap<String, BTreeSet<String>>,
}

/// The name of a block's sync subroutine.
pub(crate) fn sync_routine(block: &str) -> String {
    if block.is_empty() {
        "hpf_sync_common_blank".to_string()
    } else {
        format!("hpf_sync_common_{block}")
    }
}

/// The block names of a COMMON statement's text, each with the offset
/// (relative to the text) from which it applies: `COMMON /A/ X, /B/ Y`
/// gives `("a", 10), ("b", 16)`; objects before any `/name/` are in blank
/// COMMON (`//` names it too).
fn block_markers(text: &str) -> Vec<(String, usize)> {
    let mut res = Vec::new();
    let mut depth = 0usize;
    let mut open: Option<usize> = None;
    for (at, ch) in text.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            '/' if depth == 0 => match open.take() {
                None => open = Some(at + 1),
                Some(start) => {
                    let name: String = text[start..at].chars().filter(|it| !it.is_whitespace() && *it != '&').collect();
                    res.push((name.to_ascii_lowercase(), at + 1));
                }
            },
            _ => {}
        }
    }
    res
}

/// Every COMMON statement of the file's units, block by block (`text`:
/// the normalised text the analysis's ranges index).
pub(crate) fn declarations(analysis: &analysis::FileAnalysis, text: &str) -> Vec<CommonDeclaration> {
    let model = &analysis.model;
    let mut res: Vec<CommonDeclaration> = Vec::new();
    for (unit_id, (unit, _)) in analysis::model::flatten_units(&analysis.file).into_iter().enumerate() {
        for decl in &unit.decls {
            if !decl.attrs.iter().any(|it| matches!(it, DeclAttr::Other(word) if word == "common")) {
                continue;
            }
            let markers = block_markers(text.get(decl.range.to_range()).unwrap_or(""));
            for entity in &decl.entities {
                let offset = entity.range.start.saturating_sub(decl.range.start);
                let block = markers.iter().rev().find(|it| it.1 <= offset).map(|it| it.0.clone()).unwrap_or_default();
                let Some(symbol) = model.lookup(unit_id, &entity.name.key()) else { continue };
                match res.iter_mut().find(|it| it.unit == unit_id && it.block == block) {
                    Some(known) => known.members.push(symbol),
                    None => res.push(CommonDeclaration {
                        block,
                        unit: unit_id,
                        members: vec![symbol],
                        statement: decl.range,
                    }),
                }
            }
        }
    }
    res
}

impl Lowering<'_> {
    /// Every COMMON statement of the file's units, block by block.
    pub(crate) fn common_declarations(&self) -> Vec<CommonDeclaration> {
        declarations(self.analysis, self.text)
    }

    /// The program's COMMON blocks, or the errors that keep it from
    /// running in parallel (a distributed variable in a block, a block
    /// procedures use whose declaration cannot be repeated).
    pub(crate) fn common_blocks(&self) -> Result<CommonBlocks, Vec<(TextRange, String)>> {
        let model = &self.analysis.model;
        let declarations = self.common_declarations();
        let mut errors = Vec::new();
        let mut blocks = CommonBlocks::default();
        for declaration in &declarations {
            for &member in &declaration.members {
                let symbol = model.symbol(member);
                if (symbol.mapping.distribution.is_some() || symbol.mapping.align.is_some()) && errors.is_empty() {
                    // The program is lowered with such blocks as modules
                    // (`common_modules.rs`); here when that cannot be.
                    match crate::common_modules::rewrite(self.analysis, self.original) {
                        Err(refusals) => errors.extend(refusals),
                        Ok(_) => errors.push((
                            declaration.statement,
                            format!(
                                "`{}` of COMMON {} is distributed: the program with the block as a module does not analyse cleanly, so the MPI backend cannot lower it",
                                symbol.name.text,
                                shown(&declaration.block)
                            ),
                        )),
                    }
                }
                blocks.block_of.insert(member, declaration.block.clone());
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let flat = analysis::model::flatten_units(&self.analysis.file);
        let in_procedure = |unit: UnitId| {
            flat.get(unit).is_some_and(|it| matches!(it.0.kind, UnitKind::Subroutine | UnitKind::Function))
        };
        let members: BTreeSet<SymbolId> = blocks.block_of.keys().copied().collect();
        let touching = self.procedures_using(|id| members.contains(&id));
        for (procedure, used) in touching {
            let names: BTreeSet<String> = used.iter().filter_map(|it| blocks.block_of.get(it).cloned()).collect();
            blocks.used_by.insert(procedure, names);
        }
        let needed: BTreeSet<&String> = blocks.used_by.values().flatten().collect();
        for block in needed {
            // Any unit's declaration will do; a procedure's first, whose
            // block is the one that may run on rank 0 alone.
            let mut candidates: Vec<&CommonDeclaration> = declarations.iter().filter(|it| &it.block == block).collect();
            candidates.sort_by_key(|it| !in_procedure(it.unit));
            let mut why = String::new();
            let routine = candidates.iter().find_map(|declaration| match self.sync_text(declaration) {
                Ok(text) => Some(text),
                Err(reason) => {
                    why = reason;
                    None
                }
            });
            match routine {
                Some(text) => {
                    blocks.syncs.insert(block.clone(), text);
                }
                None => {
                    let at = candidates.first().map_or(TextRange::empty(0), |it| it.statement);
                    errors.push((
                        at,
                        format!(
                            "COMMON {} is used by procedures that may run on rank 0 alone, and the MPI backend cannot declare it again to broadcast it: {why}",
                            shown(block)
                        ),
                    ));
                }
            }
        }
        if errors.is_empty() {
            Ok(blocks)
        } else {
            Err(errors)
        }
    }

    /// The subroutine that broadcasts `declaration`'s block from rank 0,
    /// declaring it as that unit does: its IMPLICIT statements, then each
    /// variable with its type and folded bounds.
    fn sync_text(&self, declaration: &CommonDeclaration) -> Result<String, String> {
        let model = &self.analysis.model;
        let flat = analysis::model::flatten_units(&self.analysis.file);
        let unit = flat.get(declaration.unit).map(|it| it.0).ok_or("a unit of another file")?;
        let mut text = format!("subroutine {}()\n  use hpf_runtime\n", sync_routine(&declaration.block));
        // IMPLICIT statements fix the types of the undeclared variables.
        let spec = TextRange::new(unit.header.end, unit.execution_start.max(unit.header.end));
        for line in self.copy(spec).lines() {
            let word: String = line.trim_start().chars().take(8).collect();
            if word.eq_ignore_ascii_case("implicit") {
                let _ = writeln!(text, "  {}", line.trim());
            }
        }
        let mut names = Vec::new();
        for &member in &declaration.members {
            let symbol = model.symbol(member);
            let name = &symbol.name.text;
            let mut dims = Vec::new();
            for dim in &symbol.shape {
                match (&dim.lo, &dim.hi) {
                    (Bound::Known(lo), Bound::Known(hi)) => dims.push(format!("{lo}:{hi}")),
                    _ => return Err(format!("the bounds of `{name}` do not fold to constants")),
                }
            }
            let entity = if dims.is_empty() { name.clone() } else { format!("{name}({})", dims.join(", ")) };
            if symbol.type_name.is_empty() {
                // Implicitly typed: the IMPLICIT statements above give its type.
                if !dims.is_empty() {
                    let _ = writeln!(text, "  dimension {entity}");
                }
            } else {
                // The declaration the backend gives local parts of this type.
                let element =
                    crate::element_type::ElementType::of_symbol(symbol).map_err(|why| format!("`{name}`: {why}"))?;
                let _ = writeln!(text, "  {} :: {entity}", element.declaration());
            }
            names.push(name.clone());
        }
        let _ = writeln!(text, "  common /{}/ {}", declaration.block, names.join(", "));
        for (name, &member) in names.iter().zip(&declaration.members) {
            let bytes = if model.symbol(member).shape.is_empty() {
                format!("storage_size({name}) / 8")
            } else {
                format!("size({name}) * (storage_size({name}) / 8)")
            };
            let _ = writeln!(text, "  call MPI_Bcast({name}, {bytes}, MPI_BYTE, 0, MPI_COMM_WORLD)");
        }
        let _ = writeln!(text, "end subroutine {}", sync_routine(&declaration.block));
        Ok(text)
    }

    /// The sync calls to make after a statement on rank 0 in `range`: one
    /// per block that the procedures it calls use.
    pub(crate) fn common_syncs(&self, range: TextRange) -> Vec<String> {
        let text = self.slice(range);
        let mut blocks: BTreeSet<&String> = BTreeSet::new();
        for (procedure, used) in &self.common.used_by {
            if crate::private::mentions_word(text, procedure) {
                blocks.extend(used.iter().filter(|it| self.common.syncs.contains_key(*it)));
            }
        }
        blocks.into_iter().map(|it| format!("  call {}()", sync_routine(it))).collect()
    }
}

fn shown(block: &str) -> String {
    if block.is_empty() {
        "(blank)".to_string()
    } else {
        format!("/{block}/")
    }
}

#[cfg(test)]
mod tests {
    use super::block_markers;

    #[test]
    fn block_names_apply_from_their_slashes() {
        assert_eq!(block_markers("COMMON /A/ X, /B/ Y"), vec![("a".to_string(), 10), ("b".to_string(), 17)]);
        assert_eq!(block_markers("common x, y(2,3) // z"), vec![(String::new(), 19)]);
        assert_eq!(block_markers("common / clock / nstep"), vec![("clock".to_string(), 16)]);
    }
}
