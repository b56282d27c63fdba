//! Modules of other files (found next to the program, or under the
//! project root, by `hpf-ls build`): copied into the generated program
//! before the file's own modules, as free-form text. Supported when they
//! hold no variables (named constants, kinds, templates, processor
//! arrangements and procedures): a variable would be set by a procedure
//! on rank 0 only, and a distributed one would need the rewriting of
//! `module_arrays.rs`, which works on this file's text. Their procedures
//! run as this file's external ones do (rank 0 for subroutines; functions
//! wherever the statement that uses them runs, so a function must not
//! print, read, call or stop, and a subroutine must not stop); since their
//! statements are not lowered, this is checked on the words of their code.

use std::collections::BTreeSet;

use analysis::model::{SymbolKind, UnitId};
use syntax::UnitKind;

use crate::private::mentions_word;
use crate::Lowering;

/// One module of another file the program needs.
pub(crate) struct ExternalModule {
    pub(crate) unit: UnitId,
    /// Its text as free-form source.
    pub(crate) source: String,
}

impl Lowering<'_> {
    /// The modules of other files the file's units USE (directly or
    /// through each other), each after the ones it USEs; or, per module
    /// that cannot be copied, its name and why.
    pub(crate) fn external_modules(&self) -> Result<Vec<ExternalModule>, Vec<(String, String)>> {
        let model = &self.analysis.model;
        let external: Vec<UnitId> = (0..model.units.len())
            .filter(|&it| model.units[it].origin.is_some() && model.units[it].kind == UnitKind::Module)
            .collect();
        let mut problems = Vec::new();
        let mut modules = Vec::new();
        for &unit in &external {
            let name = model.units[unit].name.as_ref().map_or(String::new(), |it| it.text.clone());
            match self.external_module(unit) {
                Ok(source) => modules.push(ExternalModule { unit, source }),
                Err(why) => problems.push((name, why)),
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        // Each after the modules it USEs.
        let mut ordered: Vec<ExternalModule> = Vec::new();
        let mut placed: BTreeSet<UnitId> = BTreeSet::new();
        while !modules.is_empty() {
            let ready = modules.iter().position(|it| {
                model.units[it.unit].modules_used.iter().all(|used| placed.contains(used) || !external.contains(used))
            });
            // A cycle of USEs is the compiler's to report.
            let next = modules.remove(ready.unwrap_or(0));
            placed.insert(next.unit);
            ordered.push(next);
        }
        Ok(ordered)
    }

    /// The free-form text of the external module `unit`, or why it cannot be copied.
    fn external_module(&self, unit: UnitId) -> Result<String, String> {
        let model = &self.analysis.model;
        let unit_model = &model.units[unit];
        let file = unit_model.origin.and_then(|it| model.externals.get(it)).ok_or("its file is not known")?;
        let key = unit_model.name.as_ref().map(|it| it.key()).unwrap_or_default();
        let module = file.module(&key).ok_or("it is not found in its file")?;
        if let Some(variable) = unit_model.symbols.iter().find(|it| it.kind == SymbolKind::Variable) {
            return Err(format!(
                "it holds the variable `{}` (modules of other files are supported when they hold none: named constants, templates, processor arrangements and procedures)",
                variable.name.text
            ));
        }
        let normalised = syntax::parser_text(&file.text, file.file.form);
        let copy = |range: syntax::TextRange| free_form(&normalised, &file.text, range);
        let mut stack: Vec<&syntax::Unit> = module.contains.iter().collect();
        while let Some(procedure) = stack.pop() {
            stack.extend(procedure.contains.iter());
            let code = code_only(&copy(procedure.range).to_ascii_lowercase());
            let name = procedure.name.as_ref().map_or("?", |it| it.text.as_str());
            let forbidden: &[&str] = match procedure.kind {
                UnitKind::Function => &["print", "write", "read", "call", "stop"],
                _ => &["stop"],
            };
            if let Some(word) = forbidden.iter().find(|it| mentions_word(&code, it)) {
                return Err(format!(
                    "its procedure `{name}` holds `{}` (a function must not print, read, call or stop, a subroutine must not stop: only rank 0 runs a subroutine, every process a function)",
                    word.to_ascii_uppercase()
                ));
            }
        }
        Ok(copy(module.range))
    }
}

/// The normalised (free-form) text of `range` as source: where the
/// fixed-form normalisation turned a line end into `&`, the line end comes
/// back after it (`original` is the user's text).
pub(crate) fn free_form(normalised: &str, original: &str, range: syntax::TextRange) -> String {
    let text = normalised.get(range.to_range()).unwrap_or("");
    let original = original.as_bytes();
    let mut res = String::with_capacity(text.len() + 8);
    for (idx, ch) in text.char_indices() {
        res.push(ch);
        if ch == '&' && original.get(range.start + idx) == Some(&b'\n') {
            res.push('\n');
        }
    }
    res
}

/// `text` without its comments and character literals (free form).
pub(crate) fn code_only(text: &str) -> String {
    let mut res = String::with_capacity(text.len());
    for line in text.lines() {
        let mut quote: Option<char> = None;
        for ch in line.chars() {
            match quote {
                Some(open) => {
                    if ch == open {
                        quote = None;
                    }
                }
                None if ch == '!' => break,
                None if ch == '\'' || ch == '"' => quote = Some(ch),
                None => res.push(ch),
            }
        }
        res.push('\n');
    }
    res
}
