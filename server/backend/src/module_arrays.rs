//! Variables of the file's modules. A distributed module array is one of
//! the program's distributed arrays: the main program allocates its local
//! part (declared in the module as an allocatable with its descriptor and
//! gathered copy, `use hpf_runtime` added), and its statements lower it
//! like its own arrays. The procedures that use such an array (by host or
//! use association, themselves or through the procedures they call) run on
//! rank 0 on its gathered copy: in their text it is renamed to `hpf_g_*`,
//! and a statement of the main program that calls one of them runs on rank
//! 0 with those arrays gathered before it and scattered after it (a note
//! says so). A module variable that is not distributed is replicated; it
//! is supported when no procedure uses it (a procedure on rank 0 would set
//! it there only).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use analysis::model::{SymbolId, SymbolKind, UnitId};
use syntax::{TextRange, UnitKind};

use crate::private::mentions_word;
use crate::{Distributed, Lowering};

/// The distributed module arrays each procedure of the file uses (itself
/// or through the procedures it calls), by the procedure's name in lower
/// case; procedures that use none are left out.
pub(crate) type Touching = BTreeMap<String, BTreeSet<SymbolId>>;

impl Lowering<'_> {
    /// The file's modules the main program USEs, directly or through other modules.
    pub(crate) fn modules_of_main(&self) -> BTreeSet<UnitId> {
        let model = &self.analysis.model;
        let own = analysis::model::flatten_units(&self.analysis.file).len();
        let mut res = BTreeSet::new();
        let mut stack = vec![self.main];
        while let Some(unit) = stack.pop() {
            for &used in &model.units[unit].modules_used {
                if used < own && res.insert(used) {
                    stack.push(used);
                }
            }
        }
        res
    }

    /// The procedures of the file and their ranges: (name in lower case, range).
    fn procedures_of_file(&self) -> Vec<(String, TextRange)> {
        analysis::model::flatten_units(&self.analysis.file)
            .into_iter()
            .filter(|(unit, _)| matches!(unit.kind, UnitKind::Subroutine | UnitKind::Function))
            .filter_map(|(unit, _)| Some((unit.name.as_ref()?.key(), unit.range)))
            .collect()
    }

    /// See [`Touching`].
    pub(crate) fn procedures_touching(&self, module_arrays: &BTreeSet<SymbolId>) -> Touching {
        let procedures = self.procedures_of_file();
        let occurrences = analysis::ide::occurrences(self.analysis);
        // By name: an interface body adds nothing to its procedure.
        let mut touching: Touching = BTreeMap::new();
        for (name, range) in &procedures {
            let used = occurrences
                .iter()
                .filter(|it| range.contains_range(it.range) && module_arrays.contains(&it.symbol))
                .map(|it| it.symbol);
            touching.entry(name.clone()).or_default().extend(used);
        }
        // Through the procedures each calls, until nothing grows.
        let calls: Vec<(String, Vec<String>)> = procedures
            .iter()
            .map(|(name, range)| {
                let text = self.slice(*range);
                let called =
                    procedures.iter().filter(|it| it.0 != *name && mentions_word(text, &it.0)).map(|it| it.0.clone());
                (name.clone(), called.collect())
            })
            .collect();
        loop {
            let mut grew = false;
            for (name, called) in &calls {
                let reached: BTreeSet<SymbolId> = called.iter().flat_map(|it| touching[it].clone()).collect();
                let own = touching.get_mut(name).expect("every procedure");
                let before = own.len();
                own.extend(reached);
                grew |= own.len() > before;
            }
            if !grew {
                break;
            }
        }
        touching.retain(|_, arrays| !arrays.is_empty());
        touching
    }

    /// The procedures that `range` calls which use distributed module
    /// arrays, and those arrays.
    pub(crate) fn implicit_arrays(&self, range: TextRange) -> (Vec<&str>, BTreeSet<SymbolId>) {
        let text = self.slice(range);
        let mut names = Vec::new();
        let mut arrays = BTreeSet::new();
        for (name, used) in self.touching.iter() {
            if mentions_word(text, name) {
                names.push(name.as_str());
                arrays.extend(used.iter().copied());
            }
        }
        (names, arrays)
    }

    /// Refuses the module variables the lowering cannot keep right: a
    /// distributed one of a module the main program does not USE, and a
    /// replicated one that a procedure uses.
    pub(crate) fn check_module_variables(&mut self, layouts: &BTreeMap<SymbolId, Distributed>) {
        let model = &self.analysis.model;
        let modules_of_main = self.modules_of_main();
        let procedures = self.procedures_of_file();
        let occurrences = analysis::ide::occurrences(self.analysis);
        let own = analysis::model::flatten_units(&self.analysis.file);
        for (unit_id, (unit, _)) in own.iter().enumerate() {
            if unit.kind != UnitKind::Module {
                continue;
            }
            for (index, symbol) in model.units[unit_id].symbols.iter().enumerate() {
                if symbol.kind != SymbolKind::Variable {
                    continue;
                }
                let id = SymbolId { unit: unit_id, index };
                if layouts.contains_key(&id) {
                    if !modules_of_main.contains(&unit_id) {
                        self.error(
                            symbol.name.range,
                            format!(
                                "distributed module array `{}`: its module is not USEd by the main program, which allocates it",
                                symbol.name.text
                            ),
                        );
                    }
                    continue;
                }
                let user = procedures
                    .iter()
                    .find(|(_, range)| occurrences.iter().any(|it| it.symbol == id && range.contains_range(it.range)));
                if let Some((name, _)) = user {
                    self.error(
                        symbol.name.range,
                        format!(
                            "module variable `{}` is used by the procedure `{name}`: the MPI backend supports replicated module variables that only the main program uses (procedures run on rank 0, which alone would see what they set), and distributed module arrays",
                            symbol.name.text
                        ),
                    );
                }
            }
        }
    }

    /// The text of `range` with every use of a distributed module array
    /// renamed to its gathered copy (a procedure that runs on rank 0).
    pub(crate) fn with_gathered_module_arrays(&self, range: TextRange) -> String {
        let occurrences = analysis::ide::occurrences(self.analysis);
        let mut edits: Vec<(TextRange, String)> = occurrences
            .iter()
            .filter(|it| range.contains_range(it.range) && !it.is_declaration && !it.in_directive)
            .filter(|it| it.symbol.unit != self.main)
            .filter_map(|it| Some((it.range, format!("hpf_g_{}", self.distributed.get(&it.symbol)?.name))))
            .collect();
        edits.sort_by_key(|it| it.0.start);
        self.copy_with_edits(range, &edits)
    }

    /// A module of the file as the generated program holds it: its
    /// distributed arrays declared as local parts (allocatable, with
    /// descriptors and gathered copies), its procedures using their
    /// gathered copies.
    pub(crate) fn module_source(&self, module: &syntax::Unit) -> String {
        let model = &self.analysis.model;
        let Some(unit_id) =
            analysis::model::flatten_units(&self.analysis.file).iter().position(|(it, _)| std::ptr::eq(*it, module))
        else {
            return self.copy(module.range);
        };
        let distributed_here = |name: &syntax::Name| {
            let id = model.lookup(unit_id, &name.key())?;
            (id.unit == unit_id).then(|| self.distributed.get(&id)).flatten()
        };
        let mut edits: Vec<(TextRange, String)> = Vec::new();
        for decl in &module.decls {
            let moved: Vec<&Distributed> = decl.entities.iter().filter_map(|it| distributed_here(&it.name)).collect();
            if moved.is_empty() {
                continue;
            }
            let kept: Vec<String> = decl
                .entities
                .iter()
                .filter(|it| distributed_here(&it.name).is_none())
                .map(|it| self.copy(it.range))
                .collect();
            // The declaration's own indentation precedes the first line.
            let mut lines = Vec::new();
            if !kept.is_empty() {
                let prefix = self.copy(TextRange::new(decl.range.start, decl.entities[0].range.start));
                lines.push(format!("{prefix}{}", kept.join(", ")));
            }
            lines.push(
                "! hpf-ls: local parts of the distributed module arrays (the main program allocates them)".into(),
            );
            for distributed in moved {
                let type_name = crate::runtime::ELEMENT_TYPES
                    .iter()
                    .find(|it| it.0 == distributed.suffix)
                    .map_or("real", |it| it.1);
                let descriptors = if distributed.second.is_some() { "(2)" } else { "" };
                let (name, colons) = (&distributed.name, distributed.colons());
                lines.push(format!("{type_name}, allocatable :: {name}({colons}), hpf_g_{name}({colons})"));
                lines.push(format!("type(hpf_desc) :: hpf_d_{name}{descriptors}"));
            }
            edits.push((decl.range, lines.join("\n  ")));
        }
        if edits.is_empty() {
            return self.with_gathered_module_arrays(module.range);
        }
        // After the MODULE statement's line (the header's range may hold its line end).
        let header_text = self.slice(module.header);
        let line_end = module.header.start + header_text.find('\n').unwrap_or(header_text.len());
        edits.push((TextRange::empty(line_end), "\n  use hpf_runtime".to_string()));
        // The procedures' uses of the arrays: their gathered copies.
        let occurrences = analysis::ide::occurrences(self.analysis);
        for procedure in &module.contains {
            edits.extend(
                occurrences
                    .iter()
                    .filter(|it| procedure.range.contains_range(it.range) && !it.is_declaration && !it.in_directive)
                    .filter_map(|it| Some((it.range, format!("hpf_g_{}", self.distributed.get(&it.symbol)?.name)))),
            );
        }
        edits.sort_by_key(|it| (it.0.start, it.0.end));
        self.copy_with_edits(module.range, &edits)
    }

    /// The USE statements that give the main program the distributed
    /// module arrays' local parts, descriptors and gathered copies (its own
    /// USE may name only some, or rename them).
    pub(crate) fn module_array_uses(&self) -> String {
        let model = &self.analysis.model;
        let mut per_module: BTreeMap<UnitId, Vec<String>> = BTreeMap::new();
        for (id, distributed) in &self.distributed {
            if id.unit != self.main {
                let name = &distributed.name;
                per_module.entry(id.unit).or_default().push(format!("{name}, hpf_d_{name}, hpf_g_{name}"));
            }
        }
        let mut res = String::new();
        for (unit, names) in per_module {
            let Some(module) = model.units[unit].name.as_ref() else { continue };
            let _ = writeln!(res, "  use {}, only: {}", module.text, names.join(", "));
        }
        res
    }
}
