//! Block sizes of REDISTRIBUTE given by a variable (`NB = 2` then
//! `!HPF$ REDISTRIBUTE (CYCLIC(NB), *) ONTO P :: A, B`). HPF allows any
//! integer expression there; the lowering lays arrays out with constant
//! block sizes. Where the variable's value at the directive is plain from
//! the main program's text, the directive is rewritten with the value
//! before the lowering (a pass of `hoist::rewrite`); any other variable
//! keeps the backend's error at the directive.
//!
//! The value is plain when the variable is a scalar INTEGER of the main
//! program itself (not a module's, not in COMMON or EQUIVALENCE, named by
//! none of its internal procedures), the directive sits between two of its
//! top-level statements, the last of those before the directive that
//! names the variable at all assigns it a constant expression, and no
//! statement between them has a label (a jump from after the directive
//! could reach it with another value).

use analysis::model::{flatten_units, SymbolKind};
use analysis::FileAnalysis;
use syntax::directive::{AttrKind, DirectiveBody, DistFormatKind};
use syntax::{ExprKind, Name, StmtKind, TextRange, UnitKind};

use crate::assign::Constants;
use crate::private::mentions_word;

/// The edits that replace such variables in the main program's remap
/// directives by their values.
pub(crate) fn known_block_sizes(analysis: &FileAnalysis, text: &str) -> Vec<(TextRange, String)> {
    let mut edits = Vec::new();
    let units = flatten_units(&analysis.file);
    let Some((main_id, (main, _))) = units.iter().enumerate().find(|(_, (it, _))| it.kind == UnitKind::Program) else {
        return edits;
    };
    // The names given as block sizes of REDISTRIBUTE directives between
    // the main program's statements (inside a construct the backend
    // refuses the remap anyway).
    let mut names: Vec<(TextRange, &Name)> = Vec::new();
    for directive in &main.directives {
        let DirectiveBody::Mapping(mapping) = &directive.body else { continue };
        if main.body.iter().any(|it| it.range.start < directive.range.start && directive.range.start < it.range.end) {
            continue;
        }
        for attr in &mapping.attrs {
            let AttrKind::Redistribute(spec) = &attr.kind else { continue };
            for format in spec.formats.iter().flat_map(|it| it.list.iter().flatten()) {
                let (DistFormatKind::Block(Some(size)) | DistFormatKind::Cyclic(Some(size))) = &format.kind else {
                    continue;
                };
                if let ExprKind::Name(name) = &size.kind {
                    names.push((directive.range, name));
                }
            }
        }
    }
    if names.is_empty() {
        return edits;
    }
    let model = &analysis.model;
    let unit_text = &text[main.range.start.min(text.len())..main.range.end.min(text.len())];
    // Storage another unit may change without naming the variable here.
    if unit_text.lines().any(|it| {
        let it = it.trim_start().to_ascii_lowercase();
        it.starts_with("common") || it.starts_with("equivalence")
    }) {
        return edits;
    }
    let constants = Constants { model, unit: main_id };
    for (directive, name) in names {
        let key = name.key();
        let Some(id) = model.lookup(main_id, &key) else { continue };
        let symbol = model.symbol(id);
        let local = id.unit == main_id
            && symbol.kind == SymbolKind::Variable
            && symbol.shape.is_empty()
            && !symbol.is_dummy
            && symbol.type_name.eq_ignore_ascii_case("integer");
        if !local || main.contains.iter().any(|it| mentions_word(&text[it.range.start..it.range.end], &key)) {
            continue;
        }
        // The last top-level statement before the directive that names it.
        let last = main
            .body
            .iter()
            .rev()
            .filter(|it| it.range.end <= directive.start)
            .find(|it| mentions_word(&text[it.range.start..it.range.end], &key));
        // A labelled statement after the assignment could be reached by a
        // jump from after the directive, with another value.
        let jumped_into = last.is_some_and(|last| {
            main.body
                .iter()
                .filter(|it| it.range.start > last.range.start && it.range.end <= directive.start)
                .any(|it| crate::call_remap::labelled(text, it))
        });
        let value = last.filter(|_| !jumped_into).and_then(|stmt| match &stmt.kind {
            StmtKind::Assign { lhs, rhs } => match &lhs.kind {
                ExprKind::Name(assigned) if assigned.key() == key => {
                    analysis::eval::eval_int(rhs, &constants).ok().filter(|it| *it > 0)
                }
                _ => None,
            },
            _ => None,
        });
        if let Some(value) = value {
            edits.push((name.range, value.to_string()));
        }
    }
    edits
}
