//! Variables of the file's modules, and the procedures that use the
//! program's variables by host or use association (module procedures, the
//! main program's internal procedures). A distributed module array is one of
//! the program's distributed arrays: the main program allocates its local
//! part (declared in the module as an allocatable with its descriptor and
//! gathered copy, `use hpf_runtime` added), and its statements lower it
//! like its own arrays. A CALL of a subroutine that uses such an array (by
//! host or use association, itself or through the procedures it calls)
//! runs on every process as a copy on the local parts when it can
//! (`procedures.rs`). Otherwise, and for functions, the procedure runs on
//! rank 0 on the array's gathered copy: in its text the array is renamed
//! to `hpf_g_*`, and a statement that calls it runs on rank 0 with those
//! arrays gathered before it and scattered after it (a note says so). A
//! variable of a module or of the main program that is not distributed is
//! replicated: after a statement on rank 0 that calls a procedure using it
//! (which may have set it there only), it is broadcast.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use analysis::model::{SymbolId, SymbolKind, UnitId};
use syntax::{TextRange, UnitKind};

use crate::private::mentions_word;
use crate::{Distributed, Lowering};

/// Per procedure of the file (its name in lower case), the variables of a
/// kind it uses, itself or through the procedures it calls: the
/// distributed arrays (`Lowering::touching`) or the replicated variables
/// (`Lowering::host_variables`); procedures that use none are left out.
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

    /// See [`Touching`]: the procedures that use `arrays` (the distributed
    /// ones), themselves or through the procedures they call.
    pub(crate) fn procedures_touching(&self, arrays: &BTreeSet<SymbolId>) -> Touching {
        self.procedures_using(|id| arrays.contains(&id))
    }

    /// The procedures that use replicated variables of the main program
    /// (internal ones) or of the file's modules, themselves or through the
    /// procedures they call: what a call of one on rank 0 may set there only.
    pub(crate) fn procedures_host_variables(&self, distributed: &BTreeSet<SymbolId>) -> Touching {
        let model = &self.analysis.model;
        let main = self.main;
        let own = analysis::model::flatten_units(&self.analysis.file);
        let is_module = |unit: UnitId| own.get(unit).is_some_and(|it| it.0.kind == UnitKind::Module);
        self.procedures_using(|id| {
            (id.unit == main || is_module(id.unit))
                && model.symbol(id).kind == SymbolKind::Variable
                && !distributed.contains(&id)
        })
    }

    /// The variables `host_variables` says the procedures `range` calls
    /// may set, as `(name, bytes)` broadcasts (those not in `already`).
    pub(crate) fn host_variables_set(&self, range: TextRange, already: &[(String, String)]) -> Vec<(String, String)> {
        let text = self.slice(range);
        let model = &self.analysis.model;
        let mut res: Vec<(String, String)> = Vec::new();
        for (name, used) in self.host_variables.iter() {
            if !mentions_word(text, name) {
                continue;
            }
            for id in used {
                let symbol = model.symbol(*id);
                let variable = &symbol.name.text;
                let known = |it: &(String, String)| it.0.eq_ignore_ascii_case(variable);
                if already.iter().any(known) || res.iter().any(known) {
                    continue;
                }
                let bytes = if symbol.shape.is_empty() {
                    format!("storage_size({variable}) / 8")
                } else {
                    format!("size({variable}) * (storage_size({variable}) / 8)")
                };
                res.push((variable.clone(), bytes));
            }
        }
        res
    }

    /// The procedures of the file whose uses of symbols `wanted` selects
    /// are not empty, themselves or through the procedures they call.
    pub(crate) fn procedures_using(&self, wanted: impl Fn(SymbolId) -> bool) -> Touching {
        let procedures = self.procedures_of_file();
        let occurrences = analysis::ide::occurrences(self.analysis);
        // By name: an interface body adds nothing to its procedure.
        let mut touching: Touching = BTreeMap::new();
        for (name, range) in &procedures {
            let used =
                occurrences.iter().filter(|it| range.contains_range(it.range) && wanted(it.symbol)).map(|it| it.symbol);
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
        // Asked of every statement planned: nothing to look for in most programs.
        if self.touching.is_empty() {
            return (Vec::new(), BTreeSet::new());
        }
        // Not in character literals or comments (`print *, 'energy =', e`).
        let code = crate::external_modules::code_only(self.slice(range));
        let text = code.as_str();
        let mut names = Vec::new();
        let mut arrays = BTreeSet::new();
        // Inside a function's copy, its name is its result variable.
        let own = self.analysis.model.units[self.main].name.as_ref().map(|it| it.key());
        for (name, used) in self.touching.iter() {
            if mentions_word(text, name) && own.as_ref() != Some(name) {
                names.push(name.as_str());
                arrays.extend(used.iter().copied());
            }
        }
        (names, arrays)
    }

    /// Refuses the module variables the lowering cannot keep right: a
    /// distributed one of a module the main program does not USE.
    pub(crate) fn check_module_variables(&mut self, layouts: &BTreeMap<SymbolId, Distributed>) {
        let model = &self.analysis.model;
        let modules_of_main = self.modules_of_main();
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
                if layouts.contains_key(&id) && !modules_of_main.contains(&unit_id) {
                    self.error(
                        symbol.name.range,
                        format!(
                            "distributed module array `{}`: its module is not USEd by the main program, which allocates it",
                            symbol.name.text
                        ),
                    );
                }
            }
        }
    }

    /// Refuses a USE that renames (`local => name`) entities of a module
    /// holding distributed arrays: the analysis does not follow renames, so
    /// a renamed array would be taken for a replicated one.
    pub(crate) fn check_renamed_module_arrays(&mut self, layouts: &BTreeMap<SymbolId, Distributed>) {
        let model = &self.analysis.model;
        let holders: BTreeSet<String> = layouts
            .keys()
            .filter(|it| it.unit != self.main)
            .filter_map(|it| Some(model.units[it.unit].name.as_ref()?.key()))
            .collect();
        let mut refused = Vec::new();
        for (unit, _) in analysis::model::flatten_units(&self.analysis.file) {
            for used in unit.uses.iter().filter(|it| holders.contains(&it.key())) {
                // The rest of the USE statement, continuation lines included.
                let rest = &self.text[used.range.end..];
                let mut end = 0;
                for line in rest.split_inclusive('\n') {
                    end += line.len();
                    if !line.trim_end().ends_with('&') {
                        break;
                    }
                }
                if rest[..end].contains("=>") {
                    refused.push(used.clone());
                }
            }
        }
        for used in refused {
            self.error(
                used.range,
                format!(
                    "USE {} renames entities of a module that holds distributed arrays: not supported by the MPI backend yet (USE it without renames; ONLY is fine)",
                    used.text
                ),
            );
        }
    }

    /// The text of `range` (a procedure, which runs on rank 0) with every
    /// use of a distributed array by host or use association renamed to
    /// its gathered copy.
    pub(crate) fn with_gathered_copies(&self, range: TextRange) -> String {
        let occurrences = analysis::ide::occurrences(self.analysis);
        let mut edits: Vec<(TextRange, String)> = occurrences
            .iter()
            .filter(|it| range.contains_range(it.range) && !it.is_declaration && !it.in_directive)
            .filter_map(|it| Some((it.range, format!("hpf_g_{}", self.distributed.get(&it.symbol)?.name))))
            .collect();
        // HPF_LOCAL procedures' inquiries about their dummies (`extrinsic.rs`).
        edits.extend(self.local_library_edits_in(range));
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
                let type_name = distributed.suffix.declaration();
                let descriptors = if distributed.second.is_some() { "(2)" } else { "" };
                let (name, colons) = (&distributed.name, distributed.colons());
                lines.push(format!("{type_name}, allocatable :: {name}({colons}), hpf_g_{name}({colons})"));
                lines.push(format!("type(hpf_desc) :: hpf_d_{name}{descriptors}"));
                // The bounds its ALLOCATE in the main program stores (`allocatable.rs`).
                if distributed.allocated_by.is_some() {
                    let rank = distributed.lbs.len();
                    lines.push(format!("integer :: hpf_lbs_{name}({rank}), hpf_ubs_{name}({rank})"));
                }
            }
            edits.push((decl.range, lines.join("\n  ")));
        }
        if edits.is_empty() {
            return self.with_gathered_copies(module.range);
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
        edits.extend(self.local_library_edits_in(module.range));
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
                if distributed.allocated_by.is_some() {
                    per_module.entry(id.unit).or_default().push(format!("hpf_lbs_{name}, hpf_ubs_{name}"));
                }
            }
        }
        // The replicated ones procedures use: broadcast after a call on rank 0.
        let replicated: BTreeSet<SymbolId> = self.host_variables.values().flatten().copied().collect();
        for id in replicated.into_iter().filter(|it| it.unit != self.main) {
            per_module.entry(id.unit).or_default().push(model.symbol(id).name.text.clone());
        }
        let mut res = String::new();
        for (unit, names) in per_module {
            let Some(module) = model.units[unit].name.as_ref() else { continue };
            let _ = writeln!(res, "  use {}, only: {}", module.text, names.join(", "));
        }
        res
    }
}
