//! The text the parser sees (and the backend copies into the free-form
//! program): fixed-form blanks inside tokens squeezed out, EXTRINSIC
//! prefixes blanked, every other byte where the user wrote it.

use expect_test::{expect, Expect};
use syntax::{parser_text, Code, SourceForm, UnitKind};

/// Shows the lines that changed (`<` the user's, `>` the parser's), checks that the
/// length and every line start stay.
fn check(text: &str, form: SourceForm, expect: Expect) {
    let rewritten = parser_text(text, form);
    assert_eq!(rewritten.len(), text.len());
    let starts = |it: &str| it.match_indices('\n').map(|(at, _)| at).collect::<Vec<_>>();
    assert_eq!(starts(&rewritten), starts(text));
    let mut out = String::new();
    for (old, new) in text.lines().zip(rewritten.lines()) {
        let normalised_only = syntax::normalize_fixed(old, 72);
        if form.is_fixed() && new == normalised_only || !form.is_fixed() && new == old {
            continue;
        }
        out.push_str(&format!("< {old}\n> {}\n", new.trim_end()));
    }
    expect.assert_eq(&out);
    let file = syntax::parse(text, form);
    let syntax_errors: Vec<_> = file.diagnostics.iter().filter(|it| it.code == Code::FortranSyntax).collect();
    assert!(syntax_errors.is_empty(), "{syntax_errors:?}");
}

#[test]
fn fixed_form_blanks_inside_tokens() {
    check(
        r"      PROGRAM P
      INTEGER SUM, I
      SUM = 0
      DO 10 I = 1, 1 0
        IF (I . EQ . 3 .AND. SU M .GT. 0) G O TO 20
        IF (I .NE. 4 . OR . . NOT . (I . LT . 2)) SUM = SU M + 1 000
   10 CONTINUE
   20 C ONTI NUE
      IF (SUM .GT. 0) THEN
        SUM = 1
      END IF
      IF (L . EQV . . TRUE .) SUM = 2
      PRINT *, 'A . EQ . B', SUM
      E N D
",
        SourceForm::FIXED,
        expect![[r#"
            <       DO 10 I = 1, 1 0
            >       DO 10 I = 1, 10
            <         IF (I . EQ . 3 .AND. SU M .GT. 0) G O TO 20
            >         IF (I .EQ.   3 .AND. SUM  .GT. 0) GOTO   20
            <         IF (I .NE. 4 . OR . . NOT . (I . LT . 2)) SUM = SU M + 1 000
            >         IF (I .NE. 4 .OR.   .NOT.   (I .LT.   2)) SUM = SUM  + 1000
            <    20 C ONTI NUE
            >    20 CONTINUE
            <       IF (L . EQV . . TRUE .) SUM = 2
            >       IF (L .EQV.   .TRUE.  ) SUM = 2
            <       E N D
            >       END
        "#]],
    );
}

#[test]
fn fixed_form_keeps_what_free_form_allows() {
    // `GO TO`, `END DO`, `ELSE IF`, `DOUBLE PRECISION` and `REAL*8` stay as
    // written; so do the blanks of a FORMAT (Hollerith) and a string.
    check(
        r"      PROGRAM P
      DOUBLE PRECISION X
      REAL*8 Y
      DOUBLE COMPLEX Z
      INTEGER M
      DATA M /Z'0F'/
      DO I = 1, 2
        IF (I .EQ. 1) THEN
          GO TO 5
        ELSE IF (I .EQ. 2) THEN
          Y = 1
        END IF
    5 END DO
      PRINT 100, 'A B'
  100 FORMAT (5HX = Y, A)
      END
",
        SourceForm::FIXED,
        expect![[r#""#]],
    );
}

#[test]
fn extrinsic_prefixes_are_blanked_in_both_forms() {
    check(
        "pure extrinsic (hpf_local) subroutine binvcrhs(lhs)\n  real lhs(5)\nend subroutine\n\
         EXTRINSIC(HPF_SERIAL) REAL FUNCTION F(X)\n  REAL X\n  F = X\nEND FUNCTION\n",
        SourceForm::Free,
        expect![[r#"
            < pure extrinsic (hpf_local) subroutine binvcrhs(lhs)
            > pure                       subroutine binvcrhs(lhs)
            < EXTRINSIC(HPF_SERIAL) REAL FUNCTION F(X)
            >                       REAL FUNCTION F(X)
        "#]],
    );
    check(
        r"      RECURSIVE EXTRINSIC(F77_LOCAL) SUBROUTINE S(X)
      REAL X
      END
",
        SourceForm::FIXED,
        expect![[r#"
            <       RECURSIVE EXTRINSIC(F77_LOCAL) SUBROUTINE S(X)
            >       RECURSIVE                      SUBROUTINE S(X)
        "#]],
    );
    let file = syntax::parse(
        "program p\nend program\nelemental extrinsic (hpf_local) real function g(x)\nreal, intent(in) :: x\ng = x\nend function\n",
        SourceForm::Free,
    );
    let kinds: Vec<UnitKind> = file.units.iter().map(|it| it.kind).collect();
    assert_eq!(kinds, [UnitKind::Program, UnitKind::Function]);
}

#[test]
fn a_variable_named_extrinsic_is_left_alone() {
    check("program p\n  integer extrinsic(3)\n  extrinsic(1) = 2\nend program\n", SourceForm::Free, expect![[r#""#]]);
}

#[test]
fn a_name_with_blanks_is_spelled_without_them() {
    let text = "      PROGRAM P\n      INTEGER TOTAL\n      TOTAL = 1\n      PRINT *, (TO TAL + 1)\n      END\n";
    let file = syntax::parse(text, SourceForm::FIXED);
    let syntax::StmtKind::Output { items } = &file.units[0].body[1].kind else { panic!("{:?}", file.units[0].body) };
    let mut names = Vec::new();
    items[0].walk(|it| {
        if let syntax::ExprKind::Name(name) = &it.kind {
            names.push(name.text.clone());
        }
    });
    assert_eq!(names, ["TOTAL"]);
}

/// The model of an EXTRINSIC prefix, read from the user's text (the
/// parser sees it blanked), in any order among the other prefixes.
#[test]
fn extrinsic_models_are_kept() {
    let text = "PURE EXTRINSIC (HPF_LOCAL) REAL FUNCTION CLIP(X)\nREAL X\nCLIP = X\nEND\n\
                extrinsic(hpf_local) subroutine sq(x)\nreal x(:)\nx = x*x\nend\n\
                subroutine plain(x)\nreal x\nend\n";
    let file = syntax::parse(text, SourceForm::Free);
    let models: Vec<Option<String>> = file
        .units
        .iter()
        .map(|unit| {
            syntax::extrinsic_model(text, unit.header)
                .map(|(model, range)| format!("{model} {:?}", &text[range.to_range()]))
        })
        .collect();
    assert_eq!(
        models,
        [
            Some("hpf_local \"EXTRINSIC (HPF_LOCAL)\"".to_string()),
            Some("hpf_local \"extrinsic(hpf_local)\"".to_string()),
            None
        ]
    );
    assert!(file.units.iter().all(|it| it.kind != UnitKind::Program));
}
