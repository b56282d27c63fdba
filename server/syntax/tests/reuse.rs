//! Lowering that reuses the unchanged units of the previous version of a
//! text gives exactly what lowering the new text from scratch gives.

use std::path::Path;

use syntax::{
    input_edit, lower_tree, lower_tree_reusing, parse_tree, parser_text, PreviousLowering, SourceFile, SourceForm,
};
use tree_sitter::Tree;

struct Lowered {
    text: String,
    parser_text: String,
    tree: Tree,
    file: SourceFile,
}

/// Lowers `text`; with `previous`, as the server does after an edit: the
/// tree reparsed incrementally from the previous one, unchanged units reused.
fn lower(text: &str, form: SourceForm, previous: Option<&Lowered>) -> Lowered {
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
    let reuse = previous.map(|it| PreviousLowering { text: &it.text, parser_text: &it.parser_text, file: &it.file });
    let file = lower_tree_reusing(text, &parser_text, form, &tree, reuse);
    Lowered { text: text.to_string(), parser_text, tree, file }
}

/// Lowers `new` reusing `old`, and from scratch; both must agree.
/// Tree-sitter's error recovery depends on the tree it starts from: a text
/// with syntax errors reparsed from an old tree can get another tree than a
/// fresh parse (the server parses such a text fresh, `server/lsp/src/server/mod.rs`).
/// Then reusing must agree with lowering that same tree without reuse.
fn check_same(old: &Lowered, new: &str, form: SourceForm, what: &str) -> usize {
    let reused = lower(new, form, Some(old));
    let parser_text = parser_text(new, form).into_owned();
    let fresh_tree = parse_tree(&parser_text, None);
    let same_tree = fresh_tree.root_node().to_sexp() == reused.tree.root_node().to_sexp();
    assert!(same_tree || reused.tree.root_node().has_error(), "an error-free text parses alike: {what}:\n{new}");
    let tree = if same_tree { &fresh_tree } else { &reused.tree };
    let fresh = lower_tree(new, &parser_text, form, tree);
    assert_eq!(reused.file.units, fresh.units, "units differ after {what}:\n{new}");
    assert_eq!(format!("{:?}", reused.file.diagnostics), format!("{:?}", fresh.diagnostics), "{what}:\n{new}");
    assert_eq!(reused.file.comments, fresh.comments, "{what}");
    let ranges = |file: &SourceFile| file.whole_units.iter().map(|it| it.range).collect::<Vec<_>>();
    assert_eq!(ranges(&reused.file), ranges(&fresh), "{what}");
    reused.file.reused_units.len()
}

const THREE_UNITS: &str = "\
subroutine first(a, n)
  integer :: n, i
  real :: a(n)
!HPF$ DISTRIBUTE a(BLOCK)
  do i = 1, n
    a(i) = 0.0
  end do
end subroutine first

subroutine second(b, n)
  integer :: n, i
  real :: b(n)
!HPF$ DISTRIBUTE b(CYCLIC)
  do i = 2, n
    b(i) = b(i - 1) + 1.0
  end do
end subroutine second

program main
  integer, parameter :: n = 8
  real :: c(n)
!HPF$ DISTRIBUTE c(BLOCK)
  call first(c, n)
  print *, c
end program main
";

#[test]
fn an_edit_inside_one_unit_lowers_only_that_unit() {
    let old = lower(THREE_UNITS, SourceForm::Free, None);
    assert!(old.file.reused_units.is_empty());
    assert_eq!(old.file.whole_units.len(), 3);
    // A longer statement in the second unit: the third moves by two bytes.
    let new = THREE_UNITS.replace("b(i) = b(i - 1) + 1.0", "b(i) = b(i - 1) + 10.0 ");
    assert_eq!(check_same(&old, &new, SourceForm::Free, "an edit in `second`"), 2);
    // The first did not move: it is the previous unit itself, directives
    // included; the third moved: a copy.
    let edited = lower(&new, SourceForm::Free, Some(&old));
    let shared: Vec<bool> = edited.file.reused_units.iter().map(|it| it.shared).collect();
    assert_eq!(shared, [true, false]);
    assert!(std::sync::Arc::ptr_eq(&edited.file.units[0], &old.file.units[0]));
    assert_eq!(edited.file.units[0].directives.len(), 1);
    // A directive edited in the first unit: its directives are assigned afresh.
    let new = THREE_UNITS.replace("DISTRIBUTE a(BLOCK)", "DISTRIBUTE a(CYCLIC(2))");
    assert_eq!(check_same(&old, &new, SourceForm::Free, "a directive edited in `first`"), 2);
    // A new line in the first unit: the other two move and are reused.
    let new = THREE_UNITS.replace("  integer :: n, i\n  real :: a(n)", "  integer :: n, i\n\n  real :: a(n)");
    assert_eq!(check_same(&old, &new, SourceForm::Free, "a line added to `first`"), 2);
    // A unit deleted, and one added. Tree-sitter does not reuse a node
    // next to an edit, so how many are reused is its business; the result
    // must be right.
    let second =
        &THREE_UNITS[THREE_UNITS.find("subroutine second").unwrap()..THREE_UNITS.find("program main").unwrap()];
    check_same(&old, &THREE_UNITS.replace(second, ""), SourceForm::Free, "`second` deleted");
    let doubled = THREE_UNITS.replace(second, &format!("{second}{}", second.replace("second", "third")));
    check_same(&old, &doubled, SourceForm::Free, "a unit added");
}

/// A small deterministic generator (no dependency for one test).
struct Random(u64);

impl Random {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

fn char_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[test]
fn random_edits_of_corpus_files_lower_as_from_scratch() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus");
    let mut random = Random(7);
    let (mut files, mut reused) = (0, 0);
    let mut paths: Vec<_> = std::fs::read_dir(&corpus).unwrap().map(|it| it.unwrap().path()).collect();
    paths.sort();
    for path in paths {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let form = SourceForm::from_path(&path);
        files += 1;
        let mut current = lower(&text, form, None);
        for step in 0..12 {
            let text = &current.text;
            let at = char_boundary(text, random.below(text.len() + 1));
            let end = char_boundary(text, (at + random.below(12)).min(text.len()));
            let insert = ["", " ", "x", "\n", "(", "!HPF$ ALIGN a(i) WITH b(i)\n", "end\n", "é"][random.below(8)];
            let new = format!("{}{insert}{}", &text[..at], &text[end..]);
            let what = format!("step {step} on {}: {:?} at {at}..{end}", path.display(), insert);
            reused += check_same(&current, &new, form, &what);
            current = lower(&new, form, Some(&current));
        }
    }
    assert!(files >= 40, "{files} corpus files");
    // Most corpus files have one unit: reuse shows in the multi-unit ones.
    assert!(reused > 10, "only {reused} units reused");
}
