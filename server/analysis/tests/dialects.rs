//! The dialects of F77-era HPF codes: accepted into the model as the HPF 2.0
//! forms they stand for, each non-standard one noted (HPF030) with a quick
//! fix that writes the standard form, and the fixed text means the same.

use analysis::ide::{code_actions, ActionKind, TextEdit};
use analysis::ModelConfig;
use expect_test::{expect, Expect};
use syntax::{Code, Severity, SourceForm, UnitKind};

const CONFIG: ModelConfig = ModelConfig { number_of_processors: Some(4) };

fn apply(text: &str, edits: &[TextEdit]) -> String {
    let mut sorted: Vec<_> = edits.iter().collect();
    sorted.sort_by_key(|it| std::cmp::Reverse(it.range.start));
    let mut res = text.to_string();
    for edit in sorted {
        res.replace_range(edit.range.to_range(), &edit.new_text);
    }
    res
}

fn errors(analysis: &analysis::FileAnalysis) -> Vec<String> {
    analysis
        .diagnostics
        .iter()
        .filter(|it| matches!(it.severity, Severity::Error | Severity::Warning))
        .map(|it| format!("{}: {}", it.code.as_str(), it.message))
        .collect()
}

/// The model, and the dialect notes with the text of their ranges.
fn check_model(text: &str, form: SourceForm, expect: Expect) {
    let analysis = analysis::analyze(text, form, CONFIG);
    let mut out = analysis::render::render_model(&analysis.model);
    for diagnostic in &analysis.diagnostics {
        out.push_str(&format!(
            "\n{} {:?} at {:?}",
            diagnostic.code.as_str(),
            diagnostic.message,
            &text[diagnostic.range.to_range()]
        ));
    }
    expect.assert_eq(&out);
}

#[test]
fn common_statement_bounds_map_the_block_in_every_unit() {
    // The NAS style: the block and its mapping are repeated in each unit.
    let text = r"      program main
      integer n, m
      parameter (n = 16, m = 8)
      real a, b
      common /arrays/ a(n,m,2), b(n)
!hpf$ template t(n,m)
!hpf$ distribute t(block,block)
!hpf$ align a(i,j,*) with t(i,j)
!hpf$ align b(i) with t(i,1)
      call step
      end
      subroutine step
      integer n, m
      parameter (n = 16, m = 8)
      common /arrays/ a(n,m,2), b(n)
!hpf$ template t(n,m)
!hpf$ distribute t(block,block)
!hpf$ align a(i,j,*) with t(i,j)
      a(1,1,1) = 0
      end
";
    check_model(
        text,
        SourceForm::FIXED,
        expect![[r#"
            program main
              parameter n = 16
              parameter m = 8
              array a(16,8,2) -> t(i,j) triples [1:16:1] [1:8:1] [collapsed]; (BLOCK,BLOCK)
              array b(16) -> t(i,1) triples [1:16:1]; (BLOCK,BLOCK)
              template t(16,8); (BLOCK,BLOCK)
            subroutine step
              parameter n = 16
              parameter m = 8
              array a(16,8,2) -> t(i,j) triples [1:16:1] [1:8:1] [collapsed]; (BLOCK,BLOCK)
              array b(16) triples [1:16:1]; not distributed (replicated)
              template t(16,8); (BLOCK,BLOCK)
        "#]],
    );
}

#[test]
fn a_common_block_with_a_wrong_rank_in_the_align_is_an_error() {
    // Before COMMON bounds were read, `a` had no shape and nothing was checked.
    let text = r"      program main
      common /arrays/ a(16,8), b(16)
!hpf$ template t(16)
!hpf$ align a(i) with t(i)
      end
";
    let analysis = analysis::analyze(text, SourceForm::FIXED, CONFIG);
    assert_eq!(errors(&analysis), ["HPF014: `a` has rank 2, but the ALIGN gives 1 subscript(s)"]);
}

#[test]
fn distribute_without_a_format_is_block_in_every_dimension() {
    let text = r"      program main
      real a(10, 20), v(30)
chpf$ processors p(2, 2)
chpf$ distribute a onto p
chpf$ distribute v
      end
";
    check_model(
        text,
        SourceForm::FIXED,
        expect![[r#"
            program main
              array a(10,20) triples [1:10:1] [1:20:1]; (BLOCK,BLOCK) onto p(2,2)
              array v(30) triples [1:30:1]; (BLOCK)
              processors p(2,2)

            HPF030 "DISTRIBUTE without a format list distributes BLOCK in every dimension here; HPF 2.0 writes `DISTRIBUTE a(BLOCK, BLOCK)`" at "a"
            HPF030 "DISTRIBUTE without a format list distributes BLOCK in every dimension here; HPF 2.0 writes `DISTRIBUTE v(BLOCK)`" at "v""#]],
    );
}

#[test]
fn several_alignees_each_with_its_source_list() {
    let text = "\
program main
  integer, parameter :: n = 8
  real s(4, n), p(n), j(n), k(n), x(n), y(n)
!hpf$ template t(n)
!hpf$ distribute t(block)
!hpf$ align with t(i) :: s(*, i), p(i)
!hpf$ align j(i), k(i) with t(i)
!hpf$ align x, y with t
end program
";
    let analysis = analysis::analyze(text, SourceForm::Free, CONFIG);
    assert!(errors(&analysis).is_empty(), "{:?}", errors(&analysis));
    let model = analysis::render::render_model(&analysis.model);
    for line in [
        "array s(4,8) -> t(j) triples [collapsed] [1:8:1]",
        "array p(8) -> t(i) triples [1:8:1]",
        "array j(8) -> t(i) triples [1:8:1]",
        "array k(8) -> t(i) triples [1:8:1]",
        "array x(8) -> t(i) triples [1:8:1]",
        "array y(8) -> t(i) triples [1:8:1]",
    ] {
        assert!(model.contains(line), "no `{line}` in\n{model}");
    }
}

/// Every HPF030 of `text` has a quick fix; applying them all gives a text
/// with no HPF030, no error, and the same model.
fn fixes_keep_the_meaning(text: &str, form: SourceForm) -> String {
    let before = analysis::analyze(text, form, CONFIG);
    let notes: Vec<_> = before.diagnostics.iter().filter(|it| it.code == Code::Dialect).collect();
    assert!(!notes.is_empty(), "no dialect note in\n{text}");
    let mut edits = Vec::new();
    for note in &notes {
        let actions = code_actions(&before, text, note.range);
        let fix = actions
            .iter()
            .find(|it| it.kind == ActionKind::QuickFix && it.fixes == Some(note.range))
            .unwrap_or_else(|| panic!("no quick fix for {note:?}"));
        edits.extend(fix.edits.iter().cloned());
    }
    let fixed = apply(text, &edits);
    let after = analysis::analyze(&fixed, form, CONFIG);
    let homes = |analysis: &analysis::FileAnalysis, text: &str| -> Vec<String> {
        analysis.loops.iter().filter_map(|it| Some(text[it.home.as_ref()?.range.to_range()].to_string())).collect()
    };
    assert_eq!(homes(&before, text), homes(&after, &fixed), "the loops' homes changed:\n{fixed}");
    assert!(errors(&after).is_empty(), "{:?} in\n{fixed}", errors(&after));
    assert!(after.diagnostics.iter().all(|it| it.code != Code::Dialect), "{:?} in\n{fixed}", after.diagnostics);
    // Triples and distributions; names keep their spelling.
    let strip = |model: String| -> String { model.lines().filter(|it| !it.contains("HPF030")).collect() };
    assert_eq!(
        strip(analysis::render::render_model(&before.model)),
        strip(analysis::render::render_model(&after.model)),
        "\n{fixed}"
    );
    fixed
}

#[test]
fn quick_fixes_write_the_standard_forms() {
    let fixed = fixes_keep_the_meaning(
        r"      program main
      integer n
      parameter (n = 16)
      real u(n), v(n), w(4, n), q(n)
      integer j(n), k(n)
chpf$ template t(n)
chpf$ distribute t
chpf$ align j(i), k(i) with t(i)
!HPF$ ALIGN U, V WITH T
!HPF$ ALIGN WITH T(I) :: W(*,I), Q(I)
!HPF$ INDEPENDENT NEW(I2) REDUCTION(S)
      do 10 i = 1, n
        u(i) = i
   10 continue
!HPF$ INDEPENDENT, ONHOME(V(I))
      do 20 i = 1, n
        u(i) = i
        v(i) = i
   20 continue
      end
",
        SourceForm::FIXED,
    );
    expect![[r#"
              program main
              integer n
              parameter (n = 16)
              real u(n), v(n), w(4, n), q(n)
              integer j(n), k(n)
        chpf$ template t(n)
        chpf$ distribute t(BLOCK)
        chpf$ align (i) with t(i) :: j, k
        !HPF$ ALIGN WITH T :: U, V
        !HPF$ ALIGN W(*,I) WITH T(I)
        !HPF$ ALIGN Q(I) WITH T(I)
        !HPF$ INDEPENDENT, NEW(I2), REDUCTION(S)
              do 10 i = 1, n
                u(i) = i
           10 continue
        !HPF$ INDEPENDENT
              do 20 i = 1, n
        !HPF$ ON HOME (V(I)) BEGIN
                u(i) = i
                v(i) = i
        !HPF$ END ON
           20 continue
              end
    "#]]
    .assert_eq(&fixed);
}

#[test]
fn onhome_directive_fix() {
    let fixed = fixes_keep_the_meaning(
        "\
program main
  real a(8)
!hpf$ distribute a(block)
  do i = 1, 8
!hpf$ onhome (a(i))
    a(i) = i
  end do
end program
",
        SourceForm::Free,
    );
    assert!(fixed.contains("!hpf$ on home (a(i))"), "{fixed}");
}

#[test]
fn extrinsic_prefixes_make_procedures() {
    // 66 such prefixes in the HPF NAS benchmarks; before, the second
    // procedure became "a second main program".
    let text = r"      program main
      real x(4)
      call binvcrhs(x)
      end
      pure extrinsic (hpf_local) subroutine binvcrhs(lhs)
      real lhs(4)
      intent(inout) lhs
      end
      extrinsic(hpf_serial) real function f(y)
      real y
      f = y
      end
      recursive extrinsic (f77_local) subroutine s2(z)
      real z
      end
";
    let analysis = analysis::analyze(text, SourceForm::FIXED, CONFIG);
    assert!(errors(&analysis).is_empty(), "{:?}", errors(&analysis));
    let units: Vec<(UnitKind, String)> = analysis
        .file
        .units
        .iter()
        .map(|it| (it.kind, it.name.as_ref().map_or(String::new(), |it| it.text.clone())))
        .collect();
    assert_eq!(
        units,
        [
            (UnitKind::Program, "main".to_string()),
            (UnitKind::Subroutine, "binvcrhs".to_string()),
            (UnitKind::Function, "f".to_string()),
            (UnitKind::Subroutine, "s2".to_string()),
        ]
    );
}

#[test]
fn on_home_names_the_home_of_the_loop() {
    // Without ON HOME the home is the first update, `a(i)`.
    let text = "\
program oh
  integer, parameter :: n = 16
  real a(n), b(n), c(n)
!hpf$ distribute a(block)
!hpf$ distribute b(cyclic)
!hpf$ align c(i) with a(i)
!hpf$ independent, onhome (b(i))
  do i = 2, n
    a(i) = b(i) + 1.0
    b(i) = c(i-1)
  end do
  do i = 2, n
!hpf$ on home (b(i)) begin
    a(i) = b(i) + 1.0
    b(i) = c(i-1)
!hpf$ end on
  end do
  do i = 2, n
    a(i) = b(i) + 1.0
    b(i) = c(i-1)
  end do
!hpf$ independent, on home (c(i))
  do i = 2, n
    a(i) = c(i)
  end do
end program
";
    let analysis = analysis::analyze(text, SourceForm::Free, CONFIG);
    let homes: Vec<(String, Option<&str>)> = analysis
        .loops
        .iter()
        .map(|it| {
            let home = it.home.as_ref().map_or(String::new(), |home| text[home.range.to_range()].to_string());
            (home, it.on_home.map(|range| &text[range.to_range()]))
        })
        .collect();
    assert_eq!(
        homes,
        [
            ("b(i)".to_string(), Some("b(i)")),
            ("b(i)".to_string(), Some("b(i)")),
            ("a(i)".to_string(), None),
            // `c(i)` is only read: the home stays the update.
            ("a(i)".to_string(), Some("c(i)")),
        ]
    );
    let header = text.find("do i = 2, n").expect("a loop");
    let hover = analysis::ide::hover(&analysis, text, header + 1, false).expect("a hover on the loop");
    assert!(hover.contents.contains("home b(i)") && hover.contents.contains("ON HOME b(i)\n"), "{}", hover.contents);
    let last = text.rfind("do i = 2, n").expect("a loop");
    let hover = analysis::ide::hover(&analysis, text, last + 1, false).expect("a hover on the loop");
    assert!(hover.contents.contains("ON HOME c(i) (not an update of the loop: not used)"), "{}", hover.contents);
}
