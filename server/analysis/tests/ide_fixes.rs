//! The quick fix that realigns an array: every style of ALIGN it must keep
//! (case, dummies, triplets, `::` lists, fixed form), checked by applying
//! the edit and re-analysing: the warning must be gone and nothing else
//! may change.

use analysis::ide::{code_actions, ActionKind};
use analysis::ModelConfig;
use expect_test::{expect, Expect};
use syntax::{SourceForm, TextRange};

fn apply(text: &str, edits: &[analysis::ide::TextEdit]) -> String {
    let mut sorted: Vec<_> = edits.iter().collect();
    sorted.sort_by_key(|it| std::cmp::Reverse(it.range.start));
    let mut res = text.to_string();
    for edit in sorted {
        res.replace_range(edit.range.to_range(), &edit.new_text);
    }
    res
}

/// Applies the quick fix on the line marked `$0` and shows the new text's
/// changed lines (`-`/`+`) and the action's title.
fn check(fixture: &str, form: SourceForm, expect: Expect) {
    let offset = fixture.find("$0").expect("a $0 marker");
    let text = fixture.replace("$0", "");
    let config = ModelConfig { number_of_processors: Some(4) };
    let analysis = analysis::analyze(&text, form, config);
    let actions = code_actions(&analysis, &text, TextRange::empty(offset));
    let Some(fix) = actions.iter().find(|it| it.kind == ActionKind::QuickFix) else {
        expect.assert_eq(&format!("no quick fix; diagnostics: {:#?}", analysis.diagnostics));
        return;
    };
    let fixed = apply(&text, &fix.edits);
    let after = analysis::analyze(&fixed, form, config);
    let warnings_after = after.diagnostics.iter().filter(|it| it.code.as_str() == "HPF101").count();
    let mut res = format!("{}\nwarnings after: {warnings_after}\n", fix.title);
    let (old, new): (Vec<&str>, Vec<&str>) = (text.lines().collect(), fixed.lines().collect());
    for line in &old {
        if !new.contains(line) {
            res.push_str(&format!("- {line}\n"));
        }
    }
    for line in &new {
        if !old.contains(line) {
            res.push_str(&format!("+ {line}\n"));
        }
    }
    expect.assert_eq(&res);
}

#[test]
fn statement_form_keeps_the_users_dummies() {
    check(
        r#"program p
  real a(16), b(15)
!HPF$ PROCESSORS pr(4)
!HPF$ DISTRIBUTE a(BLOCK) ONTO pr
!HPF$ ALIGN b(K) WITH a(K)
  do i = 2, 16
    a(i) = $0b(i-1)
  end do
end program p
"#,
        SourceForm::Free,
        expect![[r#"
            Realign b: `ALIGN b(K) WITH a(K+1)` (3 fewer element moves in the file; misalignment warnings 1 → 0)
            warnings after: 0
            - !HPF$ ALIGN b(K) WITH a(K)
            + !HPF$ ALIGN b(K) WITH a(K+1)
        "#]],
    );
}

#[test]
fn lower_case_directives_stay_lower_case() {
    check(
        r#"program p
  real a(16), b(15)
!hpf$ processors pr(4)
!hpf$ distribute a(block) onto pr
!hpf$ align b(i) with a(i)
  do i = 2, 16
    a(i) = $0b(i-1)
  end do
end program p
"#,
        SourceForm::Free,
        expect![[r#"
            Realign b: `align b(i) with a(i+1)` (3 fewer element moves in the file; misalignment warnings 1 → 0)
            warnings after: 0
            - !hpf$ align b(i) with a(i)
            + !hpf$ align b(i) with a(i+1)
        "#]],
    );
}

#[test]
fn names_keep_the_directives_spelling_not_the_declarations() {
    check(
        r#"program p
  real a(16), b(15)
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE A(BLOCK) ONTO P
!HPF$ ALIGN B(I) WITH A(I)
  do i = 2, 16
    a(i) = $0b(i-1)
  end do
end program p
"#,
        SourceForm::Free,
        expect![[r#"
            Realign b: `ALIGN B(I) WITH A(I+1)` (3 fewer element moves in the file; misalignment warnings 1 → 0)
            warnings after: 0
            - !HPF$ ALIGN B(I) WITH A(I)
            + !HPF$ ALIGN B(I) WITH A(I+1)
        "#]],
    );
}

#[test]
fn a_shared_attribute_list_is_split() {
    check(
        r#"program p
  real a(16), b(15), c(15)
!HPF$ PROCESSORS pr(4)
!HPF$ DISTRIBUTE a(BLOCK) ONTO pr
!HPF$ ALIGN (I) WITH a(I) :: b, c
  do i = 2, 16
    a(i) = $0b(i-1) + c(i-1)
  end do
  do i = 1, 15
    a(i) = c(i)
  end do
end program p
"#,
        SourceForm::Free,
        expect![[r#"
            Realign b: `ALIGN (I) WITH a(I+1) :: b` (3 fewer element moves in the file; misalignment warnings 2 → 1)
            warnings after: 1
            - !HPF$ ALIGN (I) WITH a(I) :: b, c
            + !HPF$ ALIGN (I) WITH a(I) :: c
            + !HPF$ ALIGN (I) WITH a(I+1) :: b
        "#]],
    );
}

#[test]
fn the_triplet_form_stays_a_triplet() {
    check(
        r#"program p
  real a(16), b(15)
!HPF$ PROCESSORS pr(4)
!HPF$ DISTRIBUTE a(BLOCK) ONTO pr
!HPF$ ALIGN b(:) WITH a(1:15)
  do i = 2, 16
    a(i) = $0b(i-1)
  end do
end program p
"#,
        SourceForm::Free,
        expect![[r#"
            Realign b: `ALIGN b(:) WITH a(2:16)` (3 fewer element moves in the file; misalignment warnings 1 → 0)
            warnings after: 0
            - !HPF$ ALIGN b(:) WITH a(1:15)
            + !HPF$ ALIGN b(:) WITH a(2:16)
        "#]],
    );
}

#[test]
fn fixed_form_keeps_its_sentinel_and_columns() {
    check(
        "      PROGRAM P
      REAL A(16), B(15)
CHPF$ PROCESSORS PR(4)
CHPF$ DISTRIBUTE A(BLOCK) ONTO PR
CHPF$ ALIGN B(I) WITH A(I)
      DO 10 I = 2, 16
         A(I) = $0B(I-1)
   10 CONTINUE
      END
",
        SourceForm::FIXED,
        expect![[r#"
            Realign B: `ALIGN B(I) WITH A(I+1)` (3 fewer element moves in the file; misalignment warnings 1 → 0)
            warnings after: 0
            - CHPF$ ALIGN B(I) WITH A(I)
            + CHPF$ ALIGN B(I) WITH A(I+1)
        "#]],
    );
}

#[test]
fn an_array_without_align_gets_one_after_its_declaration() {
    check(
        r#"program p
  real a(16)
  real b(15)
!HPF$ PROCESSORS pr(4)
!HPF$ DISTRIBUTE a(BLOCK) ONTO pr
!HPF$ DISTRIBUTE b(BLOCK) ONTO pr
  do i = 2, 16
    a(i) = $0b(i-1)
  end do
end program p
"#,
        SourceForm::Free,
        expect![[r#"
            Realign b: `ALIGN b(I) WITH a(I+1)` (3 fewer element moves in the file; misalignment warnings 1 → 0)
            warnings after: 0
            - !HPF$ DISTRIBUTE b(BLOCK) ONTO pr
            + !HPF$ ALIGN b(I) WITH a(I+1)
        "#]],
    );
}

/// `b(i-1, 1)` with b's second dimension not distributed (`*`): the
/// constant picks no processor, so the transfer is a shift of the first
/// dimension (HPF101, not a broadcast), and the fix aligns b with its
/// second dimension collapsed (`J` does not appear in the target).
#[test]
fn a_constant_in_a_collapsed_dimension_is_not_a_broadcast() {
    check(
        r#"program p
  real a(16)
  real b(15, 4)
!HPF$ PROCESSORS pr(4)
!HPF$ DISTRIBUTE a(BLOCK) ONTO pr
!HPF$ DISTRIBUTE b(BLOCK, *) ONTO pr
  do i = 2, 16
    a(i) = $0b(i-1, 1)
  end do
end program p
"#,
        SourceForm::Free,
        expect![[r#"
            Realign b: `ALIGN b(I,J) WITH a(I+1)` (3 fewer element moves in the file; misalignment warnings 1 → 0)
            warnings after: 0
            - !HPF$ DISTRIBUTE b(BLOCK, *) ONTO pr
            + !HPF$ ALIGN b(I,J) WITH a(I+1)
        "#]],
    );
}
