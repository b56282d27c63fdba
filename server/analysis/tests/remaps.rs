//! REALIGN and REDISTRIBUTE: the loops after a remap are analysed with the
//! mapping it made, and hovers there show that mapping's owners.

use analysis::{FileAnalysis, ModelConfig};
use syntax::SourceForm;

const SWEEPS: &str = "\
program sweeps
  integer, parameter :: n = 16
  integer :: a(n, n), v(n), i, j
!HPF$ PROCESSORS P(4)
!HPF$ TEMPLATE T(N)
!HPF$ DYNAMIC A, V
!HPF$ DISTRIBUTE A(BLOCK,*) ONTO P
!HPF$ DISTRIBUTE T(BLOCK) ONTO P
!HPF$ ALIGN V(I) WITH T(I)
  a = 1
  do i = 2, n
    a(i, 1) = a(i-1, 1) + 1
  end do
!HPF$ REDISTRIBUTE A(*,BLOCK) ONTO P
  do i = 2, n
    a(i, 1) = a(i-1, 1) + 1
  end do
!HPF$ REALIGN V(I) WITH T(N+1-I)
  do i = 1, n
    v(i) = a(1, i)
  end do
end program sweeps
";

fn analyse(text: &str) -> FileAnalysis {
    analysis::analyze(text, SourceForm::Free, ModelConfig { number_of_processors: None })
}

fn line_of(text: &str, needle: &str, nth: usize) -> usize {
    text.lines().enumerate().filter(|(_, it)| it.contains(needle)).nth(nth).expect("the line is there").0
}

/// The loop whose header is on the 0-based `line`.
fn loop_on_line<'a>(analysis: &'a FileAnalysis, text: &str, line: usize) -> &'a analysis::loops::LoopReport {
    let start: usize = text.lines().take(line).map(|it| it.len() + 1).sum();
    analysis.loops.iter().find(|it| it.header.start == start + 2).expect("a loop on the line")
}

/// The elements the loop's transfers move.
fn moved(report: &analysis::loops::LoopReport) -> u64 {
    let counts = report.accesses.iter().filter_map(|it| it.transfer.as_ref());
    counts.map(|it| it.count.as_ref().expect("counted").moved_elements).sum()
}

#[test]
fn a_loop_after_redistribute_is_analysed_with_the_new_distribution() {
    let analysis = analyse(SWEEPS);
    assert!(analysis.diagnostics.iter().all(|it| it.severity != syntax::Severity::Error), "{:?}", analysis.diagnostics);
    let before = loop_on_line(&analysis, SWEEPS, line_of(SWEEPS, "do i = 2, n", 0));
    let after = loop_on_line(&analysis, SWEEPS, line_of(SWEEPS, "do i = 2, n", 1));
    // Down a column: across the blocks of (BLOCK,*), inside one column of (*,BLOCK).
    assert_eq!(moved(before), 3, "{before:#?}");
    assert_eq!(moved(after), 0, "{after:#?}");
}

#[test]
fn a_realigned_array_is_analysed_with_its_new_alignment() {
    let analysis = analyse(SWEEPS);
    let realigned = loop_on_line(&analysis, SWEEPS, line_of(SWEEPS, "do i = 1, n", 0));
    let home = realigned.home.as_ref().expect("v(i) is the home");
    // V(I) WITH T(N+1-I): the iterations run down the template.
    let triple = home.triple[0].expect("a known triple");
    assert_eq!((triple.lo, triple.hi, triple.stride), (16, 1, -1), "{home:#?}");
}

#[test]
fn hovers_show_the_mapping_where_they_are() {
    let analysis = analyse(SWEEPS);
    let hover_at = |needle: &str, nth: usize| {
        let line = line_of(SWEEPS, needle, nth);
        let start: usize = SWEEPS.lines().take(line).map(|it| it.len() + 1).sum();
        let column = SWEEPS.lines().nth(line).unwrap().find("a(i").unwrap();
        analysis::ide::hover(&analysis, SWEEPS, start + column, false).expect("a hover").contents
    };
    let before = hover_at("a(i, 1) =", 0);
    let after = hover_at("a(i, 1) =", 1);
    assert!(before.contains("P(2), dimension 1: a(5:8)"), "{before}");
    assert!(after.contains("P(2), dimension 2: a(5:8)"), "{after}");
    assert!(!after.contains(", dimension 1:"), "{after}");
}

#[test]
fn a_hover_on_a_remap_says_what_it_moves() {
    let analysis = analyse(SWEEPS);
    let hover_on = |keyword: &str| {
        let offset = SWEEPS.find(keyword).expect("the directive");
        analysis::ide::hover(&analysis, SWEEPS, offset + 1, false).expect("a hover").contents
    };
    // (BLOCK,*) to (*,BLOCK) on 4 processes: all but the 4x4 blocks on the diagonal, each process to each other.
    let redistribute = hover_on("REDISTRIBUTE A");
    assert!(redistribute.ends_with("Here:\n  a moves 192 element(s) in 12 message(s)"), "{redistribute}");
    // Reversed on a BLOCK template: every element, each block to the mirror process.
    let realign = hover_on("REALIGN V");
    assert!(realign.ends_with("Here:\n  v moves 16 element(s) in 4 message(s)"), "{realign}");
}

#[test]
fn remaps_get_an_inlay_hint_of_what_they_move() {
    let analysis = analyse(SWEEPS);
    let config = analysis::ide::HintConfig { loops: true, references: false };
    let hints = analysis::ide::inlay_hints(&analysis, SWEEPS, config, None);
    let remaps: Vec<(usize, &str)> = hints
        .iter()
        .filter(|it| it.kind == analysis::ide::HintKind::Remap)
        .map(|it| (it.offset, it.label.as_str()))
        .collect();
    let end_of = |needle: &str| SWEEPS.find(needle).unwrap() + needle.len();
    assert_eq!(
        remaps,
        [
            (end_of("REDISTRIBUTE A(*,BLOCK) ONTO P"), "  ⇄ a: 192 elems, 12 msgs"),
            (end_of("REALIGN V(I) WITH T(N+1-I)"), "  ⇄ v: 16 elems, 4 msgs"),
        ]
    );
    // They go with the loops' summaries.
    let loops_off = analysis::ide::HintConfig { loops: false, references: true };
    let without = analysis::ide::inlay_hints(&analysis, SWEEPS, loops_off, None);
    assert!(without.iter().all(|it| it.kind != analysis::ide::HintKind::Remap));
}
