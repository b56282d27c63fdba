//! The analysis of whole files and every editor feature on it: parse,
//! model, loops, then hover, definition, references, rename, completion,
//! code actions (applied), inlay hints, transfer tables, symbols, semantic
//! tokens and folding at about 64 offsets. Nothing panics and every range
//! handed back lies inside the text on char boundaries.
//!
//! Input: a byte for the form (see `form_from_byte`), a byte for the number
//! of processors (the LSP settings accept any integer), then the text.

#![no_main]

use analysis::{ide, ModelConfig};
use hpf_ls_fuzz::{check_range, form_from_byte, sample_offsets, split_input};
use libfuzzer_sys::fuzz_target;
use syntax::TextRange;

fn processors(byte: u8) -> Option<i64> {
    match byte {
        0 => None,
        251 => Some(0),
        252 => Some(-1),
        253 => Some(i64::MAX),
        254 => Some(i64::MIN),
        255 => Some(1 << 40),
        n => Some(i64::from(n)),
    }
}

fn check_symbols(text: &str, symbols: &[ide::DocumentSymbol]) {
    for symbol in symbols {
        check_range(text, symbol.range, "symbol");
        check_range(text, symbol.selection, "symbol selection");
        check_symbols(text, &symbol.children);
    }
}

/// Applies non-overlapping edits from the end, as an editor does.
fn apply(text: &str, edits: &[ide::TextEdit]) -> String {
    let mut sorted: Vec<&ide::TextEdit> = edits.iter().collect();
    sorted.sort_by_key(|it| std::cmp::Reverse((it.range.start, it.range.end)));
    let mut res = text.to_string();
    let mut limit = text.len();
    for edit in sorted {
        check_range(text, edit.range, "edit");
        assert!(edit.range.end <= limit, "edits overlap: {edits:?}");
        limit = edit.range.start;
        res.replace_range(edit.range.to_range(), &edit.new_text);
    }
    res
}

fuzz_target!(|data: &[u8]| {
    let Some(([form, processors_byte], text)) = split_input::<2>(data) else { return };
    let form = form_from_byte(form);
    let config = ModelConfig { number_of_processors: processors(processors_byte) };
    let analysis = analysis::analyze(&text, form, config);
    for diagnostic in &analysis.diagnostics {
        check_range(&text, diagnostic.range, "diagnostic");
        for related in &diagnostic.related {
            check_range(&text, related.range, "related");
        }
    }
    for occurrence in ide::occurrences(&analysis) {
        check_range(&text, occurrence.range, "occurrence");
    }
    check_symbols(&text, &ide::document_symbols(&analysis, &text));
    for token in ide::semantic_tokens(&analysis, &text) {
        check_range(&text, token.range, "semantic token");
    }
    for fold in ide::folding_ranges(&analysis, &text) {
        check_range(&text, fold.range, "folding range");
    }
    for hint in ide::inlay_hints(&analysis, &text, ide::HintConfig { loops: true, references: true }, None) {
        assert!(hint.offset <= text.len() && text.is_char_boundary(hint.offset), "hint at {}", hint.offset);
    }
    let offsets = sample_offsets(&text, 64);
    let mut fixed_texts = std::collections::HashSet::new();
    for (idx, &offset) in offsets.iter().enumerate() {
        if let Some(hover) = ide::hover(&analysis, &text, offset, idx % 2 == 0) {
            check_range(&text, hover.range, "hover");
        }
        if let Some(target) = ide::definition(&analysis, offset) {
            check_range(&text, target.range, "definition");
        }
        for reference in ide::references(&analysis, offset, idx % 2 == 0) {
            check_range(&text, reference, "reference");
        }
        if let Ok(edits) = ide::rename(&analysis, offset, "renamed_x") {
            apply(&text, &edits);
        }
        ide::completions(&analysis, &text, offset);
        ide::transfer_table(&analysis, &text, offset);
        let end = offsets.get(idx + 3).copied().unwrap_or(text.len());
        let range = TextRange::new(offset, end);
        for hint in ide::inlay_hints(&analysis, &text, ide::HintConfig { loops: true, references: true }, Some(range)) {
            assert!(hint.offset <= text.len() && text.is_char_boundary(hint.offset), "hint at {}", hint.offset);
        }
        for action in ide::code_actions(&analysis, &text, range) {
            if let Some(fixed) = action.fixes {
                check_range(&text, fixed, "fixed diagnostic");
            }
            let edited = apply(&text, &action.edits);
            // The fixed text is analysed again, as the editor will (once per distinct result).
            if fixed_texts.insert(edited.clone()) {
                analysis::analyze(&edited, form, config);
            }
        }
    }
});
