//! Every editor feature at every offset of texts that are valid Fortran
//! syntax but wrong HPF: arrays referenced with more or fewer subscripts
//! than their rank, distributions with more formats than the template has
//! dimensions, mappings of undeclared names. The fuzz target `analysis`
//! (fuzz/) found such texts crash `hpf-ls check`; each shape it found is
//! kept here so the normal test suite catches a regression.

use analysis::{ide, ModelConfig};
use syntax::{SourceForm, TextRange};

fn check_range(text: &str, range: TextRange, what: &str) {
    assert!(range.start <= range.end && range.end <= text.len(), "{what} {range:?} outside the text");
    assert!(text.is_char_boundary(range.start) && text.is_char_boundary(range.end), "{what} {range:?} splits a char");
}

const COST: analysis::optimize::CostConfig = analysis::optimize::CostConfig {
    default_trips: 100,
    exact_limit: analysis::optimize::EXACT_LIMIT,
    node_budget: analysis::optimize::NODE_BUDGET,
};

/// Runs what the server runs on a document, at every char boundary.
fn every_feature_everywhere(text: &str) {
    every_feature_everywhere_in(text, SourceForm::Free, &[None, Some(4), Some(1), Some(0)]);
}

fn every_feature_everywhere_in(text: &str, form: SourceForm, processor_counts: &[Option<i64>]) {
    for &processors in processor_counts {
        let config = ModelConfig { number_of_processors: processors };
        let analysis = analysis::analyze(text, form, config);
        for diagnostic in &analysis.diagnostics {
            check_range(text, diagnostic.range, "diagnostic");
        }
        let hints = ide::HintConfig { loops: true, references: true };
        ide::inlay_hints(&analysis, text, hints, None);
        ide::semantic_tokens(&analysis, text);
        ide::document_symbols(&analysis, text);
        analysis::optimize::optimize(&analysis, COST);
        for loop_idx in 0..analysis.loops.len() {
            let picture = analysis::picture::loop_picture(&analysis, text, loop_idx);
            analysis::picture::render_text(&picture);
            analysis::picture::render_svg(&picture);
            for what_if in [
                analysis::whatif::what_if_loop(&analysis, loop_idx),
                analysis::whatif::what_if_unit(&analysis, loop_idx),
            ]
            .into_iter()
            .flatten()
            {
                analysis::whatif::render_table(&analysis, &what_if);
            }
        }
        for offset in (0..=text.len()).filter(|&it| text.is_char_boundary(it)) {
            for markdown in [true, false] {
                if let Some(hover) = ide::hover(&analysis, text, offset, markdown) {
                    check_range(text, hover.range, "hover");
                }
            }
            ide::transfer_table(&analysis, text, offset);
            ide::completions(&analysis, text, offset);
            let end = (offset + 40).min(text.len());
            let end = (end..=text.len()).find(|&it| text.is_char_boundary(it)).unwrap_or(text.len());
            for action in analysis::whatif::redistribute_actions(&analysis, text, TextRange::new(offset, end)) {
                for edit in &action.edits {
                    check_range(text, edit.range, "edit");
                }
            }
            for action in ide::code_actions(&analysis, text, TextRange::new(offset, end)) {
                for edit in &action.edits {
                    check_range(text, edit.range, "edit");
                }
            }
        }
    }
}

const HEADER: &str = "program p
  real :: a(8), b(8), c(8,8)
  integer :: i, j
!HPF$ PROCESSORS pr(4)
!HPF$ TEMPLATE t(8)
";

fn program(directives: &str, body: &str) -> String {
    format!("{HEADER}{directives}  do i = 2, 7\n{body}  end do\nend program\n")
}

#[test]
fn references_with_more_subscripts_than_the_rank() {
    let directives = "!HPF$ DISTRIBUTE t(BLOCK) ONTO pr\n!HPF$ ALIGN a(i) WITH t(i)\n!HPF$ ALIGN b(i) WITH t(i)\n";
    every_feature_everywhere(&program(directives, "    a(i) = b(i-1) + b(i+1, i) + b(i, i+1, i)\n"));
    every_feature_everywhere(&program(directives, "    a(i, i) = b(i-1, 3)\n"));
    every_feature_everywhere(&program(directives, "    a(i) = c(i, i, i-1) + c(i)\n"));
}

#[test]
fn references_with_fewer_subscripts_than_the_rank() {
    let directives = "!HPF$ DISTRIBUTE t(BLOCK) ONTO pr\n!HPF$ ALIGN c(i, *) WITH t(i)\n!HPF$ ALIGN a(i) WITH t(i)\n";
    every_feature_everywhere(&program(directives, "    a(i) = c(i-1)\n    c(i) = a(i+1)\n"));
}

#[test]
fn distributions_with_more_formats_than_the_template() {
    let directives =
        "!HPF$ DISTRIBUTE t(BLOCK, BLOCK) ONTO pr\n!HPF$ ALIGN a(i) WITH t(i)\n!HPF$ ALIGN b(i) WITH t(i)\n";
    every_feature_everywhere(&program(directives, "    a(i) = b(i-1)\n"));
    let directives = "!HPF$ DISTRIBUTE (CYCLIC, BLOCK, *) ONTO pr :: a, b\n";
    every_feature_everywhere(&program(directives, "    a(i) = b(i-1)\n"));
}

#[test]
fn alignments_with_more_subscripts_than_either_rank() {
    let directives =
        "!HPF$ DISTRIBUTE t(BLOCK) ONTO pr\n!HPF$ ALIGN a(i, j, k) WITH t(i)\n!HPF$ ALIGN b(i) WITH t(i, j, k)\n";
    every_feature_everywhere(&program(directives, "    a(i) = b(i-1)\n"));
    let directives =
        "!HPF$ DISTRIBUTE t(BLOCK) ONTO pr\n!HPF$ ALIGN c(j, i) WITH t(i)\n!HPF$ ALIGN a(i) WITH c(i, i, 2)\n";
    every_feature_everywhere(&program(directives, "    a(i) = c(i-1, 2) + c(2, i)\n"));
}

/// A quick fix for an array of rank over 7 ran out of align-dummy names
/// (crash 5 of the `analysis` fuzz target): the fix that inserts an ALIGN
/// for an array distributed on its own needs one dummy per dimension.
#[test]
fn misaligned_arrays_of_rank_over_seven() {
    for rank in [8, 9] {
        let names: Vec<String> = (0..rank).map(|it| format!("i{it}")).collect();
        let indices = names.join(", ");
        let shape = vec!["4"; rank].join(", ");
        // Room below for the shifted alignment `b(i, ...) WITH t(i-1, ...)`.
        let template = format!("0:4{}", ", 4".repeat(rank - 1));
        let stars = ", *".repeat(rank - 1);
        let mut shifted = names.clone();
        shifted[0] = "i0+1".to_string();
        let shifted = shifted.join(", ");
        let mut nest = String::new();
        for name in names.iter().rev() {
            let first = if name == "i0" { 1 } else { 2 };
            nest = format!("  do {name} = {first}, 3\n{nest}  end do\n");
        }
        let nest = nest.replacen("  end do\n", &format!("    a({indices}) = b({shifted})\n  end do\n"), 1);
        let text = format!(
            "program p\n  real :: a({shape}), b({shape})\n  integer :: {indices}\n!HPF$ PROCESSORS pr(2)\n\
             !HPF$ TEMPLATE t({template})\n!HPF$ DISTRIBUTE t(BLOCK{stars}) ONTO pr\n!HPF$ ALIGN a({indices}) WITH t({indices})\n\
             !HPF$ DISTRIBUTE b(BLOCK{stars}) ONTO pr\n{nest}end program\n"
        );
        every_feature_everywhere(&text);
        // And the fix is offered: it writes one dummy per dimension, and the warning goes.
        let analysis = analysis::analyze(&text, SourceForm::Free, ModelConfig { number_of_processors: None });
        let warning =
            analysis.diagnostics.iter().find(|it| it.code == syntax::Code::MisalignedTransfer).expect("a misalignment");
        let fix = ide::code_actions(&analysis, &text, warning.range)
            .into_iter()
            .find(|it| it.fixes == Some(warning.range))
            .unwrap_or_else(|| panic!("no quick fix at rank {rank}"));
        let mut fixed = text.clone();
        let mut edits = fix.edits.clone();
        edits.sort_by_key(|it| std::cmp::Reverse(it.range.start));
        for edit in edits {
            fixed.replace_range(edit.range.start..edit.range.end, &edit.new_text);
        }
        let dummies = if rank == 8 { "i,j,k,l,m,n,o,i8" } else { "i,j,k,l,m,n,o,i8,i9" };
        assert!(fixed.to_ascii_lowercase().contains(&format!("align b({dummies}) with t(i-1,")), "{fixed}");
        let after = analysis::analyze(&fixed, SourceForm::Free, ModelConfig { number_of_processors: None });
        assert!(
            !after.diagnostics.iter().any(|it| it.severity <= syntax::Severity::Warning),
            "{:?}",
            after.diagnostics
        );
    }
}

/// `PROCESSORS P(0)` made BLOCK's block size a division by zero (found by
/// the long edit-sequence test); a negative extent or setting likewise.
#[test]
fn processor_arrangements_without_processors() {
    for procs in ["0", "-1", "0, 4", "4, -2"] {
        let text = format!(
            "program p\n  real :: a(8), b(8), c(8,8)\n  integer :: i, j\n!HPF$ PROCESSORS pr({procs})\n\
             !HPF$ DISTRIBUTE a(BLOCK) ONTO pr\n!HPF$ DISTRIBUTE c(BLOCK, CYCLIC) ONTO pr\n!HPF$ ALIGN b(i) WITH a(i)\n\
               do i = 2, 7\n    a(i) = b(i-1) + c(i, 2)\n  end do\nend program\n"
        );
        every_feature_everywhere(&text);
    }
    let text =
        "program p\n  real :: a(8), b(8)\n  integer :: i\n!HPF$ DISTRIBUTE a(BLOCK)\n!HPF$ ALIGN b(i) WITH a(i)\n\
                  do i = 2, 7\n    a(i) = b(i-1)\n  end do\nend program\n";
    every_feature_everywhere_in(text, SourceForm::Free, &[Some(0), Some(-1), Some(i64::MIN), Some(i64::MAX)]);
}

#[test]
fn mappings_of_names_that_are_not_arrays() {
    let directives = "!HPF$ DISTRIBUTE i(BLOCK) ONTO pr\n!HPF$ ALIGN q(i) WITH t(i)\n!HPF$ ALIGN a(i) WITH i(i)\n";
    every_feature_everywhere(&program(directives, "    a(i) = q(i-1) + p(i)\n"));
}

/// The inputs the fuzz target `analysis` crashed on, as it reads them: a
/// byte for the form, a byte for the processor count, then the text
/// (invalid UTF-8 replaced). See fuzz/src/lib.rs.
#[test]
fn inputs_the_fuzzer_crashed_on() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-crashes");
    let mut inputs: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|it| it.unwrap().path()).collect();
    inputs.sort();
    assert!(!inputs.is_empty());
    for path in inputs {
        let data = std::fs::read(&path).unwrap();
        let (form, processors) = (data[0], data[1]);
        let form = match form % 4 {
            0 => SourceForm::Free,
            1 => SourceForm::FIXED,
            2 => SourceForm::Fixed { line_length: 132 },
            _ => SourceForm::Fixed { line_length: usize::from(form / 4).max(1) },
        };
        let processors = match processors {
            0 => None,
            n if n <= 250 => Some(i64::from(n)),
            _ => Some(-1),
        };
        let text = String::from_utf8_lossy(&data[2..]);
        eprintln!("{}", path.display());
        every_feature_everywhere_in(&text, form, &[processors]);
    }
}
