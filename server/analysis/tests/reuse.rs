//! An analysis that takes the loop reports (and the occurrence index) of
//! unchanged units from the previous version of the text gives exactly
//! what analysing the new text from scratch gives, and reuses what it can.

use std::path::Path;

use analysis::ide::{occurrences, occurrences_reusing};
use analysis::model::NoModules;
use analysis::{analyze_file, analyze_file_reusing, FileAnalysis, ModelConfig};
use syntax::{input_edit, lower_tree, lower_tree_reusing, parse_tree, parser_text, PreviousLowering, SourceForm};
use tree_sitter::Tree;

const CONFIG: ModelConfig = ModelConfig { number_of_processors: None };

struct Analysed {
    text: String,
    parser_text: String,
    tree: Tree,
    analysis: FileAnalysis,
}

/// Analyses `text`; with `previous`, as the server does after an edit.
fn analyse(text: &str, form: SourceForm, previous: Option<&Analysed>) -> Analysed {
    let parser_text = parser_text(text, form).into_owned();
    let tree = match previous {
        Some(previous) => {
            let mut old_tree = previous.tree.clone();
            if let Some(edit) = input_edit(&previous.parser_text, &parser_text) {
                old_tree.edit(&edit);
            }
            parse_tree(&parser_text, Some(&old_tree))
        }
        None => parse_tree(&parser_text, None),
    };
    let reuse =
        previous.map(|it| PreviousLowering { text: &it.text, parser_text: &it.parser_text, file: &it.analysis.file });
    let file = lower_tree_reusing(text, &parser_text, form, &tree, reuse);
    let analysis = analyze_file_reusing(file, CONFIG, &NoModules, previous.map(|it| &it.analysis));
    Analysed { text: text.to_string(), parser_text, tree, analysis }
}

/// Analyses `new` after `old`, and from scratch; both must agree. Returns
/// how many units' loop reports were reused.
fn check_same(old: &Analysed, new: &str, form: SourceForm, what: &str) -> usize {
    let reused = analyse(new, form, Some(old));
    let parser_text = parser_text(new, form).into_owned();
    let fresh = analyze_file(lower_tree(new, &parser_text, form, &parse_tree(&parser_text, None)), CONFIG);
    assert_eq!(format!("{:?}", reused.analysis.loops), format!("{:?}", fresh.loops), "loops differ after {what}");
    assert_eq!(
        format!("{:?}", reused.analysis.diagnostics),
        format!("{:?}", fresh.diagnostics),
        "diagnostics differ after {what}"
    );
    assert_eq!(
        occurrences_reusing(&reused.analysis, Some(&old.analysis)),
        occurrences(&fresh),
        "occurrences differ after {what}"
    );
    reused.analysis.reused_loop_units
}

const MODULE_AND_USERS: &str = "\
module grid
  integer, parameter :: n = 16
  real :: a(n), b(n)
!HPF$ DISTRIBUTE a(BLOCK)
!HPF$ ALIGN b(i) WITH a(i)
end module grid

subroutine first
  use grid
  integer :: i
  do i = 2, n
    a(i) = b(i - 1)
  end do
end subroutine first

subroutine second
  use grid
  integer :: i
  do i = 1, n - 1
    b(i) = a(i + 1) + 1.0
  end do
end subroutine second

program main
  use grid
  call first
  call second
  print *, a
end program main
";

#[test]
fn an_edit_in_one_loop_body_reanalyses_only_that_unit() {
    let old = analyse(MODULE_AND_USERS, SourceForm::Free, None);
    assert_eq!(old.analysis.reused_loop_units, 0);
    let units = old.analysis.model.local_units();
    // A longer statement in `first`: the units after it move by three bytes.
    let new = MODULE_AND_USERS.replace("a(i) = b(i - 1)", "a(i) = b(i - 1)   ");
    assert_eq!(check_same(&old, &new, SourceForm::Free, "an edit in `first`"), units - 1);
    // An edit in `second`: the loop of `first`, before it, is the previous
    // report itself; the one of `second` is analysed again.
    let new = MODULE_AND_USERS.replace("b(i) = a(i + 1) + 1.0", "b(i) = a(i + 1) + 1.0 ");
    assert_eq!(check_same(&old, &new, SourceForm::Free, "an edit in `second`"), units - 1);
    let edited = analyse(&new, SourceForm::Free, Some(&old));
    assert!(std::sync::Arc::ptr_eq(&edited.analysis.loops[0], &old.analysis.loops[0]));
    assert!(!std::sync::Arc::ptr_eq(&edited.analysis.loops[1], &old.analysis.loops[1]));
    // A line added to the module: every unit moves, none changes.
    let new = MODULE_AND_USERS.replace("end module grid", "\nend module grid");
    assert_eq!(check_same(&old, &new, SourceForm::Free, "a blank line in the module"), units - 1);
    // The ALIGN the other units' loops depend on changes: nothing is reused.
    let new = MODULE_AND_USERS.replace("ALIGN b(i) WITH a(i)", "ALIGN b(i) WITH a(i+1)");
    assert_eq!(check_same(&old, &new, SourceForm::Free, "the module's ALIGN"), 0);
    // A declaration of `second` changes: only its own loops change meaning,
    // but the model differs, so nothing is reused either.
    let new = MODULE_AND_USERS
        .replace("subroutine second\n  use grid\n  integer :: i", "subroutine second\n  use grid\n  integer :: i, j");
    assert_eq!(check_same(&old, &new, SourceForm::Free, "a declaration in `second`"), 0);
}

/// Every corpus file, edited inside its last unit and at its first line:
/// the same analysis as from scratch.
#[test]
fn edits_of_corpus_files_analyse_as_fresh_texts() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus");
    let mut files = 0;
    let mut reused_anywhere = 0;
    for entry in std::fs::read_dir(&corpus).expect("the corpus exists") {
        let path = entry.expect("a directory entry").path();
        let fortran =
            path.extension().and_then(|it| it.to_str()).is_some_and(|it| syntax::FORTRAN_EXTENSIONS.contains(&it));
        let Some(text) = std::fs::read_to_string(&path).ok().filter(|_| fortran) else { continue };
        let form = SourceForm::from_path(&path);
        let old = analyse(&text, form, None);
        let name = path.display();
        // A blank inserted before the last `=` of the file (in its last unit).
        if let Some(at) = text.rfind(" = ") {
            let new = format!("{}  {}", &text[..at], &text[at..]);
            reused_anywhere += check_same(&old, &new, form, &format!("a blank in the last unit of {name}"));
        }
        // A comment line after the first line: everything after it moves.
        if let Some(at) = text.find('\n') {
            let comment = if form.is_fixed() { "\nC moved" } else { "\n! moved" };
            let new = format!("{}{comment}{}", &text[..at], &text[at..]);
            check_same(&old, &new, form, &format!("a comment line at the top of {name}"));
        }
        files += 1;
    }
    assert!(files >= 40, "the corpus has {files} Fortran files");
    assert!(reused_anywhere > 0, "edits in the last unit reuse the others somewhere in the corpus");
}
