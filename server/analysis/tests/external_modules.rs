//! Modules USEd from other files (a `ModuleResolver` gives them): their
//! arrays are analysed in the user's loops, related places and definitions
//! point into the other file, nothing edits it, and what is wrong in it is
//! not reported here.

use std::sync::Arc;

use analysis::model::{ExternalFile, ModuleResolver};
use analysis::{ide, ModelConfig};
use syntax::{Code, SourceForm};

const GRID: &str = "\
module grid
  implicit none
  integer, parameter :: n = 16
  real :: a(n), b(n)
!HPF$ PROCESSORS p(4)
!HPF$ TEMPLATE t(0:n+1)
!HPF$ DISTRIBUTE t(BLOCK) ONTO p
!HPF$ ALIGN a(i) WITH t(i)
!HPF$ ALIGN b(i) WITH t(i)
!HPF$ DISTRIBUTE nothing(CYCLIC)
end module grid
";

const MAIN: &str = "\
program main
  use grid
  implicit none
  integer :: i
  b = 1.0
  do i = 1, n - 1
    a(i) = b(i + 1)
  end do
  print *, sum(a)
end program main
";

struct OneFile(Arc<ExternalFile>);

impl ModuleResolver for OneFile {
    fn find_module(&self, key: &str) -> Option<Arc<ExternalFile>> {
        self.0.module(key).map(|_| self.0.clone())
    }
}

fn analysed() -> analysis::FileAnalysis {
    let grid = Arc::new(ExternalFile::parse("grid.f90", GRID, SourceForm::Free));
    analysis::analyze_file_with(
        syntax::parse(MAIN, SourceForm::Free),
        ModelConfig { number_of_processors: None },
        &OneFile(grid),
    )
}

#[test]
fn arrays_of_a_module_in_another_file_are_analysed_in_the_loops_that_use_them() {
    let analysis = analysed();
    let codes: Vec<Code> = analysis.diagnostics.iter().map(|it| it.code).collect();
    // The undeclared `nothing` of grid.f90 is grid.f90's error, not main's.
    assert_eq!(codes, [Code::MisalignedTransfer], "{:#?}", analysis.diagnostics);
    let warning = &analysis.diagnostics[0];
    assert_eq!(&MAIN[warning.range.to_range()], "b(i + 1)");
    assert!(warning.message.contains("3 element(s) move"), "{}", warning.message);
    assert!(warning.message.contains("t(i-1)"), "the optimal alignment: {}", warning.message);
    let align = warning.related.iter().find(|it| it.message == "the ALIGN of b").expect("the ALIGN of b");
    assert_eq!(align.file.as_deref(), Some("grid.f90"));
    assert_eq!(&GRID[align.range.to_range()], "!HPF$ ALIGN b(i) WITH t(i)");
    let the_loop = warning.related.iter().find(|it| it.message == "the loop").expect("the loop");
    assert_eq!(the_loop.file, None);
}

#[test]
fn without_the_other_file_the_module_stays_unknown() {
    let analysis = analysis::analyze(MAIN, SourceForm::Free, ModelConfig { number_of_processors: None });
    assert!(analysis.diagnostics.iter().all(|it| it.code != Code::MisalignedTransfer), "{:#?}", analysis.diagnostics);
}

#[test]
fn nothing_edits_the_other_file() {
    let analysis = analysed();
    let warning = analysis.diagnostics[0].range;
    let actions = ide::code_actions(&analysis, MAIN, warning);
    assert!(actions.is_empty(), "a fix would have to edit grid.f90: {actions:#?}");
    let at_b = MAIN.find("b(i + 1)").unwrap();
    let refused = ide::rename(&analysis, at_b, "c").expect_err("b is declared in grid.f90");
    assert!(refused.contains("grid.f90"), "{refused}");
    let optimised = ide::optimize_file_edits(
        &analysis,
        MAIN,
        analysis::optimize::CostConfig {
            default_trips: analysis::optimize::DEFAULT_TRIPS,
            exact_limit: analysis::optimize::EXACT_LIMIT,
            node_budget: analysis::optimize::NODE_BUDGET,
        },
    );
    assert!(optimised.iter().all(|it| it.edits.is_empty()), "{optimised:#?}");
}

#[test]
fn definition_and_hover_know_the_other_file() {
    let analysis = analysed();
    let at_b = MAIN.find("b(i + 1)").unwrap();
    let definition = ide::definition(&analysis, at_b).expect("a definition");
    let file = definition.file.expect("in grid.f90");
    assert_eq!(&*file.name, "grid.f90");
    assert_eq!(&GRID[definition.range.to_range()], "b");
    assert_eq!(GRID[..definition.range.start].lines().count(), 4, "declared on line 4 of grid.f90");
    let hover = ide::hover(&analysis, MAIN, at_b, true).expect("a hover on b");
    assert!(hover.contents.contains("BLOCK"), "{}", hover.contents);
    // References stay in this file: the use of b here.
    let references = ide::references(&analysis, at_b, true);
    assert!(references.iter().all(|it| &MAIN[it.to_range()] == "b"), "{references:?}");
}

#[test]
fn reanalysis_keeps_the_modules_of_other_files() {
    let analysis = analysed();
    let edited = MAIN.replace("b(i + 1)", "b(i)");
    let again = analysis.reanalyze(&edited);
    assert!(again.diagnostics.is_empty(), "{:#?}", again.diagnostics);
    assert_eq!(again.model.externals.len(), 1);
}
