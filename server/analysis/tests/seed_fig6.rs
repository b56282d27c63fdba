//! The worked example of the seed patent (JP2739836B2, FIG. 6-9) and of
//! DESIGN.md §2, reproduced exactly, in free and in fixed form.

use analysis::loops::{AccessAttr, TransferKind, Triple, When};
use analysis::transfer::Message;
use analysis::ModelConfig;
use syntax::SourceForm;

const FREE: &str = include_str!("../../../tests/corpus/seed_fig6.f90");
const FIXED: &str = include_str!("../../../tests/corpus/seed_fig6.f");

fn triple(lo: i64, hi: i64, stride: i64) -> Option<Triple> {
    Some(Triple { lo, hi, stride })
}

fn check(text: &str, form: SourceForm) {
    let analysis = analysis::analyze(text, form, ModelConfig { number_of_processors: None });
    assert!(analysis.diagnostics.iter().all(|it| it.code.as_str() != "HPF001"), "{:?}", analysis.diagnostics);
    // The second loop, DO I = 2, 16: A(I) = B(I-1).
    let report =
        analysis.loops.iter().find(|it| it.bounds == Some([2, 16, 1])).expect("the loop DO I = 2, 16 is analysed");
    let home = report.home.as_ref().expect("the loop has a home");
    assert_eq!(analysis.model.symbol(home.array).name.text, "A");
    assert_eq!(home.triple, vec![triple(2, 16, 1)], "the loop's triple");

    let a = report.accesses.iter().find(|it| it.is_home).expect("A(I) is the home");
    assert_eq!(a.attr, AccessAttr::Update);
    assert_eq!(a.declared, vec![triple(1, 16, 1)]);
    assert_eq!(a.optimal, Some(vec![triple(1, 16, 1)]), "A's own optimal triple is unchanged");
    assert!(a.transfer.is_none());

    let b = report.accesses.iter().find(|it| !it.is_home).expect("B(I-1) is referenced");
    assert_eq!(&text[b.range.to_range()], "B(I-1)");
    assert_eq!(b.attr, AccessAttr::Reference);
    assert_eq!(b.access, vec![triple(1, 15, 1)], "B's access range");
    assert_eq!(b.declared, vec![triple(1, 15, 1)], "B's declared triple");
    assert_eq!(b.optimal, Some(vec![triple(2, 16, 1)]), "B's optimal triple");
    assert_eq!(b.optimal_align.as_deref(), Some("ALIGN B(I) WITH A(I+1)"));

    let transfer = b.transfer.as_ref().expect("B moves");
    assert_eq!(transfer.when, When::Before);
    assert_eq!(transfer.kind, TransferKind::Shift(vec![1]), "a shift by one, whatever the distribution");
    // DISTRIBUTE A(BLOCK) ONTO P(4): blocks of 4; B(4), B(8), B(12) move 0->1, 1->2, 2->3.
    let count = transfer.count.as_ref().expect("the distribution is known");
    assert_eq!(count.moved_elements, 3);
    assert_eq!(
        count.messages,
        vec![
            Message { from: 0, to: 1, elements: 1 },
            Message { from: 1, to: 2, elements: 1 },
            Message { from: 2, to: 3, elements: 1 },
        ]
    );
    let warning =
        analysis.diagnostics.iter().find(|it| it.code.as_str() == "HPF101").expect("the misalignment is reported");
    assert_eq!(warning.range, b.range);
    assert!(warning.message.contains("3 element(s)") && warning.message.contains("ALIGN B(I) WITH A(I+1)"));
    assert!(warning.related.iter().any(|it| text[it.range.to_range()].contains("ALIGN B(I) WITH A(I)")));
}

#[test]
fn seed_fig6_free_form() {
    check(FREE, SourceForm::Free);
}

#[test]
fn seed_fig6_fixed_form() {
    check(FIXED, SourceForm::FIXED);
}

/// With the optimal ALIGN applied, nothing moves and nothing is reported.
#[test]
fn seed_fig6_with_the_optimal_alignment() {
    let fixed = FREE.replace("!HPF$ ALIGN B(I) WITH A(I)", "!HPF$ ALIGN B(I) WITH A(I+1)");
    let analysis = analysis::analyze(&fixed, SourceForm::Free, ModelConfig { number_of_processors: None });
    let report = analysis.loops.iter().find(|it| it.bounds == Some([2, 16, 1])).unwrap();
    let b = report.accesses.iter().find(|it| !it.is_home).unwrap();
    assert_eq!(b.declared, vec![triple(2, 16, 1)]);
    assert!(b.transfer.is_none());
    assert!(analysis.diagnostics.iter().all(|it| it.code.as_str() != "HPF101"), "{:?}", analysis.diagnostics);
}

/// A hover on the reference `B(I-1)` says what that reference costs in its
/// loop (the seed's numbers, processors named as the arrangement names them),
/// then what the array is.
#[test]
fn hover_on_a_reference_shows_its_triples_and_transfer() {
    let analysis = analysis::analyze(FREE, SourceForm::Free, ModelConfig { number_of_processors: None });
    let reference = FREE.rfind("B(I-1)").unwrap();
    let hover = analysis::ide::hover(&analysis, FREE, reference, false).expect("a hover");
    assert_eq!(&FREE[hover.range.to_range()], "B(I-1)");
    expect_test::expect![[r#"
        B(I-1) read in DO I = 2, 16

          access range [1:15:1]
          declared [1:15:1]
          loop triple [2:16:1] (home A(I))
          optimal [2:16:1]

        Transfer before the loop: shift by +1, 3 element(s) in 3 message(s)
          P(1) → P(2): 1 element(s)
          P(2) → P(3): 1 element(s)
          P(3) → P(4): 1 element(s)

        local with ALIGN B(I) WITH A(I+1)

        REAL B(15) (array)

        B(15) -> A(i) triples [1:15:1]; (BLOCK) onto P(4)

        final alignment target: A(16)
        declared by: !HPF$ ALIGN B(I) WITH A(I)

        owners:
          P(1): B(1:4)
          P(2): B(5:8)
          P(3): B(9:12)
          P(4): B(13:15)
    "#]]
    .assert_eq(&hover.contents);
    // The array's facts alone where it is not referenced in a loop.
    let declaration = FREE.find("B(15)").unwrap();
    let hover = analysis::ide::hover(&analysis, FREE, declaration, false).expect("a hover");
    assert!(hover.contents.starts_with("REAL B(15) (array)"), "{}", hover.contents);
}
