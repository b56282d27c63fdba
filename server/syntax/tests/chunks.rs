//! The chunks the line scan finds (`syntax::unit_chunks`) are the top-level
//! units tree-sitter finds, on every program of the corpus and on the
//! generated benchmark-like text: each boundary falls between two top-level
//! units, and each chunk holds exactly one.

use std::path::Path;

use syntax::{parse_tree, parser_text, unit_chunks, SourceForm};

/// The byte ranges of the top-level program units of the tree.
fn top_level_units(parser_text: &str) -> Vec<(usize, usize)> {
    let tree = parse_tree(parser_text, None);
    let root = tree.root_node();
    let mut cursor = root.walk();
    root.children(&mut cursor)
        .filter(|it| !matches!(it.kind(), "comment" | "preproc_include" | "preproc_def"))
        .map(|it| (it.start_byte(), it.end_byte()))
        .collect()
}

fn check(name: &str, text: &str, form: SourceForm) -> usize {
    let parser_text = parser_text(text, form);
    let units = top_level_units(&parser_text);
    let starts = unit_chunks(&parser_text, form);
    assert_eq!(
        starts.len(),
        units.len(),
        "{name}: {} chunks for {} top-level units {units:?} (chunks at {starts:?})",
        starts.len(),
        units.len()
    );
    for (idx, start) in starts.iter().enumerate().skip(1) {
        assert!(
            units[idx - 1].1 <= *start && *start <= units[idx].0,
            "{name}: chunk {idx} starts at {start}, units {:?} {:?}",
            units[idx - 1],
            units[idx]
        );
    }
    starts.len()
}

#[test]
fn chunks_are_the_top_level_units_of_every_corpus_program() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus");
    let (mut checked, mut chunks) = (0, 0);
    for entry in std::fs::read_dir(&corpus).expect("tests/corpus") {
        let path = entry.expect("entry").path();
        if !path.extension().is_some_and(|it| ["f90", "f", "hpf", "for"].contains(&it.to_str().unwrap_or(""))) {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("readable");
        chunks += check(&path.display().to_string(), &text, SourceForm::from_path(&path));
        checked += 1;
    }
    assert!(checked >= 60, "only {checked} corpus programs");
    // Many programs have modules and subroutines beside the main program.
    assert!(chunks >= checked + 25, "{chunks} chunks in {checked} programs");
}
