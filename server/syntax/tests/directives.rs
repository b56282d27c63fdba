//! The directive model for every example of the HPF grammar summary
//! (`shared/reference/hpf-directives.md` §1–10): sentinels, continuation,
//! each directive and its combined `::` form, rendered compactly and checked
//! against inline snapshots. Every name is rendered from the text its range
//! slices, so the snapshots prove the spans too. The last tests check that
//! the same program in fixed and free form gives the same model.

use expect_test::{expect, Expect};
use syntax::directive::{
    AlignSpec, AttrKind, Directive, DirectiveBody, DistFormatKind, DistSpec, Entity, Mapping, MappingForm, Resident,
};
use syntax::{BinaryOp, Expr, ExprKind, Name, SourceFile, SourceForm, Stmt, StmtKind, Subscript, TextRange, UnaryOp};

/// Parses `fixture` and compares the rendering of its directives and
/// diagnostics with `expect`. A first line `//- fixed` selects fixed form
/// (72 columns); the fixture is free form otherwise.
fn check(fixture: &str, expect: Expect) {
    let (form, text) = match fixture.strip_prefix("//- fixed\n") {
        Some(rest) => (SourceForm::FIXED, rest),
        None => (SourceForm::Free, fixture),
    };
    let file = syntax::parse(text, form);
    let actual = Renderer::with_spans(text).file(&file);
    expect.assert_eq(&actual);
}

/// Renders the directive model as text. With spans, each directive shows its
/// physical lines and each attribute, format list, ONTO clause and align
/// target shows the text its range slices; without spans (to compare a
/// fixed-form file with its free-form twin) only names and structure remain.
struct Renderer<'a> {
    text: &'a str,
    spans: bool,
    out: String,
}

impl<'a> Renderer<'a> {
    fn with_spans(text: &'a str) -> Renderer<'a> {
        Renderer { text, spans: true, out: String::new() }
    }

    fn names_only(text: &'a str) -> Renderer<'a> {
        Renderer { text, spans: false, out: String::new() }
    }

    fn file(mut self, file: &SourceFile) -> String {
        let directives = file.directives();
        if directives.is_empty() {
            self.out.push_str("no directives\n");
        }
        for directive in directives {
            self.directive(directive);
        }
        for diagnostic in &file.diagnostics {
            let slice = self.slice(diagnostic.range);
            let place = if diagnostic.range.is_empty() {
                // An empty range: show the text of its line before it.
                let line_start = self.text[..diagnostic.range.start].rfind('\n').map_or(0, |it| it + 1);
                format!("the end of {:?}", &self.text[line_start..diagnostic.range.start])
            } else {
                format!("{slice:?}")
            };
            self.out.push_str(&format!("{} {:?} at {place}\n", diagnostic.code.as_str(), diagnostic.message));
            if let Some(fix) = &diagnostic.fix {
                let mut fixed = self.text.to_string();
                let mut edits = fix.edits.clone();
                edits.sort_by_key(|(range, _)| std::cmp::Reverse(range.start));
                for (range, new_text) in edits {
                    fixed.replace_range(range.to_range(), &new_text);
                }
                self.out.push_str(&format!("  fix {:?}:\n", fix.title));
                for line in fixed.lines().filter(|it| !self.text.lines().any(|old| old == *it)) {
                    self.out.push_str(&format!("    {line}\n"));
                }
            }
        }
        self.out
    }

    /// The text of `range`, which must lie within the text on char boundaries.
    fn slice(&self, range: TextRange) -> &'a str {
        self.text.get(range.to_range()).unwrap_or_else(|| {
            panic!("range {range:?} is not within the text (len {}) on char boundaries", self.text.len())
        })
    }

    /// A name, spelled as its range slices the text; the two must agree.
    fn name(&self, name: &Name) -> String {
        let slice = self.slice(name.range);
        assert_eq!(slice, name.text, "the range of name `{}` slices `{slice}`", name.text);
        slice.to_string()
    }

    fn span(&mut self, label: &str, range: TextRange) {
        if self.spans {
            let slice = self.slice(range);
            self.out.push_str(&format!(" {label}{slice:?}"));
        }
    }

    fn directive(&mut self, directive: &Directive) {
        let first = directive.lines.first().expect("a directive has a line");
        let last = directive.lines.last().expect("a directive has a line");
        assert_eq!(directive.range, TextRange::new(first.start, last.end), "directive range = its lines");
        let keyword = self.name(&directive.keyword);
        let kind = match &directive.body {
            DirectiveBody::Mapping(mapping) => match mapping.form {
                MappingForm::Statement => "mapping statement",
                MappingForm::Attributed => "mapping attributed",
            },
            DirectiveBody::Independent(_) => "independent",
            DirectiveBody::On(_) => "on",
            DirectiveBody::EndOn => "end on",
            DirectiveBody::Resident(_) => "resident",
            DirectiveBody::EndResident => "end resident",
            DirectiveBody::Invalid => "invalid",
        };
        self.out.push_str(&format!("{keyword}: {kind}\n"));
        if self.spans {
            for line in &directive.lines {
                let slice = self.slice(*line);
                assert!(!slice.contains('\n'), "a line range holds one line: {slice:?}");
                self.out.push_str(&format!("  line {slice:?}\n"));
            }
        }
        match &directive.body {
            DirectiveBody::Mapping(mapping) => self.mapping(mapping),
            DirectiveBody::Independent(independent) => {
                let mut line = String::from(" ");
                if let Some(indices) = &independent.indices {
                    line.push_str(&format!(" indices({})", self.names(indices)));
                }
                if !independent.new.is_empty() {
                    line.push_str(&format!(" new({})", self.names(&independent.new)));
                }
                if !independent.reduction.is_empty() {
                    line.push_str(&format!(" reduction({})", self.names(&independent.reduction)));
                }
                if let Some(home) = &independent.on_home {
                    line.push_str(&format!(" on home {}", self.expr(home)));
                }
                if line.trim().is_empty() {
                    line.push_str(" plain");
                }
                self.out.push_str(&line);
                self.out.push('\n');
            }
            DirectiveBody::On(on) => {
                let mut line = format!("  home {}", self.expr(&on.home));
                if let Some(resident) = &on.resident {
                    line.push_str(&format!(" resident{}", self.resident(resident)));
                }
                if !on.new.is_empty() {
                    line.push_str(&format!(" new({})", self.names(&on.new)));
                }
                if on.begin {
                    line.push_str(" begin");
                }
                self.out.push_str(&line);
                self.out.push('\n');
            }
            DirectiveBody::Resident(resident) => {
                let line =
                    format!("  objects{}{}\n", self.resident(resident), if resident.begin { " begin" } else { "" });
                self.out.push_str(&line);
            }
            DirectiveBody::EndOn | DirectiveBody::EndResident | DirectiveBody::Invalid => {}
        }
    }

    fn resident(&self, resident: &Resident) -> String {
        if resident.objects.is_empty() {
            return String::new();
        }
        let objects: Vec<String> = resident.objects.iter().map(|it| self.expr(it)).collect();
        format!("({})", objects.join(", "))
    }

    fn names(&self, names: &[Name]) -> String {
        names.iter().map(|it| self.name(it)).collect::<Vec<_>>().join(", ")
    }

    fn mapping(&mut self, mapping: &Mapping) {
        if let Some(double_colon) = mapping.double_colon {
            assert_eq!(self.slice(double_colon), "::");
        }
        // `ALIGN A, B WITH T` is attributed (several alignees) without `::`.
        assert!(mapping.double_colon.is_none() || mapping.form == MappingForm::Attributed);
        for attr in &mapping.attrs {
            let keyword = self.name(&attr.keyword);
            assert_eq!(attr.range.start, attr.keyword.range.start, "an attribute starts at its keyword");
            self.out.push_str(&format!("  attr {keyword}"));
            self.span("", attr.range);
            match &attr.kind {
                AttrKind::Processors => self.out.push_str(" processors"),
                AttrKind::Template => self.out.push_str(" template"),
                AttrKind::Dynamic => self.out.push_str(" dynamic"),
                AttrKind::Inherit => self.out.push_str(" inherit"),
                AttrKind::Sequence => self.out.push_str(" sequence"),
                AttrKind::Dimension(dims) => {
                    let dims = self.subscripts(dims);
                    self.out.push_str(&format!(" dimension{dims}"));
                }
                AttrKind::Shadow(widths) => {
                    let widths = self.subscripts(widths);
                    self.out.push_str(&format!(" shadow{widths}"));
                }
                AttrKind::Distribute(spec) => self.dist_spec("distribute", spec),
                AttrKind::Redistribute(spec) => self.dist_spec("redistribute", spec),
                AttrKind::Align(spec) => self.align_spec("align", spec),
                AttrKind::Realign(spec) => self.align_spec("realign", spec),
            }
            self.out.push('\n');
        }
        for entity in &mapping.entities {
            self.entity(entity);
        }
    }

    fn entity(&mut self, entity: &Entity) {
        let name = self.name(&entity.name);
        assert_eq!(entity.range.start, entity.name.range.start, "an entity starts at its name");
        self.out.push_str(&format!("  entity {name}"));
        if let Some(args) = &entity.args {
            let args = self.subscripts(args);
            self.out.push_str(&args);
        }
        if entity.range != entity.name.range || entity.args.is_some() {
            self.span("", entity.range);
        }
        self.out.push('\n');
    }

    fn dist_spec(&mut self, what: &str, spec: &DistSpec) {
        self.out.push_str(&format!(" {what}"));
        if let Some(formats) = &spec.formats {
            self.out.push_str(" formats");
            self.span("", formats.range);
            if let Some(star) = formats.star {
                assert_eq!(self.slice(star), "*");
                self.out.push_str(" star");
            }
            match &formats.list {
                None => self.out.push_str(" transcriptive"),
                Some(list) => {
                    let mut items = Vec::new();
                    for format in list {
                        let keyword = format.keyword.as_ref().map(|it| self.name(it));
                        let arg = |expr: &Option<Expr>| expr.as_ref().map(|it| format!("({})", self.expr(it)));
                        let item = match &format.kind {
                            DistFormatKind::Block(size) => format!("block{}", arg(size).unwrap_or_default()),
                            DistFormatKind::Cyclic(size) => format!("cyclic{}", arg(size).unwrap_or_default()),
                            DistFormatKind::Collapsed => {
                                assert_eq!(self.slice(format.range), "*");
                                "*".to_string()
                            }
                            DistFormatKind::GenBlock(sizes) => format!("gen_block({})", self.expr(sizes)),
                            DistFormatKind::Indirect(map) => format!("indirect({})", self.expr(map)),
                        };
                        if let Some(keyword) = keyword {
                            assert!(item.starts_with(&keyword.to_ascii_lowercase()), "{item} from {keyword}");
                            assert_eq!(format.range.start, format.keyword.as_ref().expect("checked").range.start);
                        }
                        if self.spans && format.range.len() > 1 {
                            items.push(format!("{item} {:?}", self.slice(format.range)));
                        } else {
                            items.push(item);
                        }
                    }
                    self.out.push_str(&format!(" [{}]", items.join(", ")));
                }
            }
        }
        if let Some(onto) = &spec.onto {
            self.out.push_str(" onto");
            self.span("", onto.range);
            if let Some(star) = onto.star {
                assert_eq!(self.slice(star), "*");
                self.out.push_str(" *");
            }
            match &onto.target {
                Some(target) => {
                    let target = self.name(target);
                    self.out.push_str(&format!(" {target}"));
                }
                None => self.out.push_str(" (any)"),
            }
        }
    }

    fn align_spec(&mut self, what: &str, spec: &AlignSpec) {
        self.out.push_str(&format!(" {what}"));
        if let Some(sources) = &spec.sources {
            let sources = self.subscripts(sources);
            self.out.push_str(&format!(" sources{sources}"));
        }
        let with = self.name(&spec.with_keyword);
        assert!(with.eq_ignore_ascii_case("with"));
        self.out.push_str(&format!(" {with}"));
        if let Some(star) = spec.star {
            assert_eq!(self.slice(star), "*");
            self.out.push_str(" *");
        }
        let target = self.name(&spec.target);
        self.out.push_str(&format!(" {target}"));
        if let Some(subscripts) = &spec.subscripts {
            let subscripts = self.subscripts(subscripts);
            self.out.push_str(&subscripts);
        }
        self.span("target ", spec.target_range);
    }

    fn subscripts(&self, list: &[Subscript]) -> String {
        let items: Vec<String> = list.iter().map(|it| self.subscript(it)).collect();
        format!("({})", items.join(", "))
    }

    fn subscript(&self, subscript: &Subscript) -> String {
        match subscript {
            Subscript::Expr(expr) => self.expr(expr),
            Subscript::Star(range) => {
                assert_eq!(self.slice(*range), "*");
                "*".to_string()
            }
            Subscript::Range { lo, hi, stride, range } => {
                let slice = self.slice(*range);
                assert!(slice.contains(':'), "a triplet's range holds its colon: {slice:?}");
                for part in [lo, hi, stride].into_iter().flatten() {
                    assert!(range.contains_range(part.range), "a triplet's range covers its parts");
                }
                let part = |expr: &Option<Expr>| expr.as_ref().map(|it| self.expr(it)).unwrap_or_default();
                match stride {
                    Some(_) => format!("{}:{}:{}", part(lo), part(hi), part(stride)),
                    None => format!("{}:{}", part(lo), part(hi)),
                }
            }
            Subscript::Keyword { name, value } => format!("{}={}", self.name(name), self.expr(value)),
        }
    }

    /// An expression with every operation parenthesised, so the snapshot
    /// shows precedence; `Paren` (written parentheses) shows as `paren(..)`.
    fn expr(&self, expr: &Expr) -> String {
        let slice = self.slice(expr.range);
        match &expr.kind {
            ExprKind::Int(value) => {
                assert!(slice.starts_with(&value.to_string()), "int {value} spans {slice:?}");
                value.to_string()
            }
            ExprKind::Literal(literal) => {
                assert_eq!(slice, literal);
                format!("lit {literal}")
            }
            ExprKind::Name(name) => {
                assert_eq!(expr.range, name.range);
                self.name(name)
            }
            ExprKind::Ref { name, args } => {
                assert_eq!(expr.range.start, name.range.start);
                assert!(slice.ends_with(')'), "a reference ends at its `)`: {slice:?}");
                format!("{}{}", self.name(name), self.subscripts(args))
            }
            ExprKind::Unary { op, operand } => {
                assert_eq!(expr.range.end, operand.range.end);
                let op = match op {
                    UnaryOp::Neg => "-",
                    UnaryOp::Plus => "+",
                    UnaryOp::Not => ".not.",
                };
                format!("({op}{})", self.expr(operand))
            }
            ExprKind::Binary { op, lhs, rhs } => {
                assert_eq!(expr.range, lhs.range.cover(rhs.range), "a binary expression spans its operands");
                let op = match op {
                    BinaryOp::Add => "+",
                    BinaryOp::Sub => "-",
                    BinaryOp::Mul => "*",
                    BinaryOp::Div => "/",
                    BinaryOp::Pow => "**",
                    BinaryOp::Other => " op ",
                };
                format!("({}{op}{})", self.expr(lhs), self.expr(rhs))
            }
            ExprKind::Paren(inner) => {
                assert!(slice.starts_with('(') && slice.ends_with(')'), "parentheses span {slice:?}");
                format!("paren({})", self.expr(inner))
            }
            ExprKind::Other(children) => {
                let children: Vec<String> = children.iter().map(|it| self.expr(it)).collect();
                format!("other[{}]", children.join(", "))
            }
        }
    }
}

// ---- §1 directive lines, sentinels, continuation ------------------------

#[test]
fn free_form_sentinel_in_any_case_and_indented() {
    check(
        r#"!HPF$ PROCESSORS P(4)
!hpf$ template t(100)
   !Hpf$ PROCESSORS Q(2)
"#,
        expect![[r#"
            PROCESSORS: mapping statement
              line "!HPF$ PROCESSORS P(4)"
              attr PROCESSORS "PROCESSORS P(4)" processors
              entity P(4) "P(4)"
            template: mapping statement
              line "!hpf$ template t(100)"
              attr template "template t(100)" template
              entity t(100) "t(100)"
            PROCESSORS: mapping statement
              line "!Hpf$ PROCESSORS Q(2)"
              attr PROCESSORS "PROCESSORS Q(2)" processors
              entity Q(2) "Q(2)"
        "#]],
    );
}

#[test]
fn free_form_only_bang_is_a_sentinel() {
    // `CHPF$` and `*HPF$` are fixed-form origins; in free form they are
    // not comments at all, and text before `!HPF$` makes it commentary.
    check(
        r#"program p
x = 1 !HPF$ ALIGN A(I) WITH T(I)
CHPF$ ALIGN B(I) WITH T(I)
end program p
"#,
        expect![[r#"
            no directives
            HPF003 "syntax error: unexpected `(`" at "("
        "#]],
    );
}

#[test]
fn fixed_form_sentinels_in_columns_one_to_five() {
    check(
        r#"//- fixed
!HPF$ PROCESSORS P(4)
CHPF$ TEMPLATE T(100)
chpf$ processors p1(2),p2(20,10),p3
*HPF$ DISTRIBUTE T(BLOCK) ONTO P
*hpf$ ALIGN A(I) WITH T(I)
cHpF$	INHERIT X
"#,
        expect![[r#"
            PROCESSORS: mapping statement
              line "!HPF$ PROCESSORS P(4)"
              attr PROCESSORS "PROCESSORS P(4)" processors
              entity P(4) "P(4)"
            TEMPLATE: mapping statement
              line "CHPF$ TEMPLATE T(100)"
              attr TEMPLATE "TEMPLATE T(100)" template
              entity T(100) "T(100)"
            processors: mapping statement
              line "chpf$ processors p1(2),p2(20,10),p3"
              attr processors "processors p1(2),p2(20,10),p3" processors
              entity p1(2) "p1(2)"
              entity p2(20, 10) "p2(20,10)"
              entity p3
            DISTRIBUTE: mapping statement
              line "*HPF$ DISTRIBUTE T(BLOCK) ONTO P"
              attr DISTRIBUTE "DISTRIBUTE T(BLOCK) ONTO P" distribute formats "(BLOCK)" [block "BLOCK"] onto "ONTO P" P
              entity T
            ALIGN: mapping statement
              line "*hpf$ ALIGN A(I) WITH T(I)"
              attr ALIGN "ALIGN A(I) WITH T(I)" align sources(I) WITH T(I) target "T(I)"
              entity A
            INHERIT: mapping statement
              line "cHpF$\tINHERIT X"
              attr INHERIT "INHERIT X" inherit
              entity X
        "#]],
    );
}

#[test]
fn fixed_form_indented_sentinel_is_a_comment() {
    check(
        r#"//- fixed
      PROGRAM P
      !HPF$ PROCESSORS P(4)
      END
"#,
        expect![[r#"
            no directives
        "#]],
    );
}

#[test]
fn fixed_form_text_in_column_six_is_a_continuation_mark() {
    // `!HPF$ALIGN`: column 6 holds `A`, a continuation mark with nothing to continue.
    check(
        r#"//- fixed
!HPF$ALIGN A(I) WITH T(I)
"#,
        expect![[r#"
            LIGN: invalid
              line "!HPF$ALIGN A(I) WITH T(I)"
            HPF001 "continuation mark in column 6, but no directive line precedes it" at "A"
            HPF002 "unknown HPF directive `LIGN`; did you mean `ALIGN`?" at "LIGN"
        "#]],
    );
}

#[test]
fn fixed_form_ignores_columns_after_72() {
    check(
        r#"//- fixed
!HPF$ PROCESSORS P(4)                                                   HEAT0110
!HPF$ DISTRIBUTE T(BLOCK) ONTO P                                        HEAT0130
"#,
        expect![[r#"
            PROCESSORS: mapping statement
              line "!HPF$ PROCESSORS P(4)                                                   "
              attr PROCESSORS "PROCESSORS P(4)" processors
              entity P(4) "P(4)"
            DISTRIBUTE: mapping statement
              line "!HPF$ DISTRIBUTE T(BLOCK) ONTO P                                        "
              attr DISTRIBUTE "DISTRIBUTE T(BLOCK) ONTO P" distribute formats "(BLOCK)" [block "BLOCK"] onto "ONTO P" P
              entity T
        "#]],
    );
}

#[test]
fn trailing_commentary_on_a_directive_line() {
    check(
        r#"!HPF$ DISTRIBUTE A(BLOCK) ! rows
!HPF$ ALIGN B(I) WITH A(I)!same
"#,
        expect![[r#"
            DISTRIBUTE: mapping statement
              line "!HPF$ DISTRIBUTE A(BLOCK) ! rows"
              attr DISTRIBUTE "DISTRIBUTE A(BLOCK)" distribute formats "(BLOCK)" [block "BLOCK"]
              entity A
            ALIGN: mapping statement
              line "!HPF$ ALIGN B(I) WITH A(I)!same"
              attr ALIGN "ALIGN B(I) WITH A(I)" align sources(I) WITH A(I) target "A(I)"
              entity B
        "#]],
    );
}

#[test]
fn free_form_continuation_spec_example() {
    check(
        r#"!HPF$ ALIGN ANTIDISESTABLISHMENTARIANISM (I,J,K) &
!HPF$ WITH ORNITHORHYNCHUS_ANATINUS (J,K,I)
"#,
        expect![[r#"
            ALIGN: mapping statement
              line "!HPF$ ALIGN ANTIDISESTABLISHMENTARIANISM (I,J,K) &"
              line "!HPF$ WITH ORNITHORHYNCHUS_ANATINUS (J,K,I)"
              attr ALIGN "ALIGN ANTIDISESTABLISHMENTARIANISM (I,J,K) &\n!HPF$ WITH ORNITHORHYNCHUS_ANATINUS (J,K,I)" align sources(I, J, K) WITH ORNITHORHYNCHUS_ANATINUS(J, K, I) target "ORNITHORHYNCHUS_ANATINUS (J,K,I)"
              entity ANTIDISESTABLISHMENTARIANISM
        "#]],
    );
}

#[test]
fn free_form_continuation_indented_with_leading_ampersand_and_comment_lines() {
    check(
        r#"!hpf$ align with cols ::     &
  !hpf$ u, v, &
! a comment line between continued lines
!hpf$&  p, &

!hpf$ &q
"#,
        expect![[r#"
            align: mapping attributed
              line "!hpf$ align with cols ::     &"
              line "!hpf$ u, v, &"
              line "!hpf$&  p, &"
              line "!hpf$ &q"
              attr align "align with cols" align with cols target "cols"
              entity u
              entity v
              entity p
              entity q
        "#]],
    );
}

#[test]
fn free_form_continuation_not_followed_by_a_directive_line() {
    check(
        r#"program p
!HPF$ ALIGN A(I) &
x = 1
!HPF$ WITH T(I)
end program p
"#,
        expect![[r#"
            ALIGN: invalid
              line "!HPF$ ALIGN A(I) &"
            WITH: invalid
              line "!HPF$ WITH T(I)"
            HPF001 "expected `with`, found the end of the directive" at the end of "!HPF$ ALIGN A(I) "
            HPF001 "the directive is continued with `&`, but the next line is not an `!HPF$` line" at "&"
            HPF002 "unknown HPF directive `WITH`" at "WITH"
        "#]],
    );
}

#[test]
fn free_form_continuation_at_end_of_file() {
    check(
        r#"!HPF$ DISTRIBUTE A(BLOCK) &
"#,
        expect![[r#"
            DISTRIBUTE: mapping statement
              line "!HPF$ DISTRIBUTE A(BLOCK) &"
              attr DISTRIBUTE "DISTRIBUTE A(BLOCK)" distribute formats "(BLOCK)" [block "BLOCK"]
              entity A
            HPF001 "the directive is continued with `&`, but no `!HPF$` line follows" at "&"
        "#]],
    );
}

#[test]
fn crlf_line_ends_in_both_forms() {
    check(
        "!HPF$ ALIGN A(I) &\r\n!HPF$ WITH T(I) ! why\r\n!HPF$ INDEPENDENT\r\n",
        expect![[r#"
            ALIGN: mapping statement
              line "!HPF$ ALIGN A(I) &"
              line "!HPF$ WITH T(I) ! why"
              attr ALIGN "ALIGN A(I) &\r\n!HPF$ WITH T(I)" align sources(I) WITH T(I) target "T(I)"
              entity A
            INDEPENDENT: independent
              line "!HPF$ INDEPENDENT"
              plain
        "#]],
    );
    check(
        "//- fixed\nCHPF$ ALIGN A(I)\r\nCHPF$+WITH T(I)\r\n",
        expect![[r#"
            ALIGN: mapping statement
              line "CHPF$ ALIGN A(I)"
              line "CHPF$+WITH T(I)"
              attr ALIGN "ALIGN A(I)\r\nCHPF$+WITH T(I)" align sources(I) WITH T(I) target "T(I)"
              entity A
        "#]],
    );
}

#[test]
fn fixed_form_continuation_marks_in_column_six() {
    check(
        r#"//- fixed
!HPF$ ALIGN A(I)
!HPF$*WITH T(I)
!hpf$ align with cols ::
!hpf$x      CU,CV,
!HPF$+   u21im1
CHPF$ DISTRIBUTE TG(BLOCK,BLOCK)
CHPF$*   ONTO PG
"#,
        expect![[r#"
            ALIGN: mapping statement
              line "!HPF$ ALIGN A(I)"
              line "!HPF$*WITH T(I)"
              attr ALIGN "ALIGN A(I)\n!HPF$*WITH T(I)" align sources(I) WITH T(I) target "T(I)"
              entity A
            align: mapping attributed
              line "!hpf$ align with cols ::"
              line "!hpf$x      CU,CV,"
              line "!HPF$+   u21im1"
              attr align "align with cols" align with cols target "cols"
              entity CU
              entity CV
              entity u21im1
            DISTRIBUTE: mapping statement
              line "CHPF$ DISTRIBUTE TG(BLOCK,BLOCK)"
              line "CHPF$*   ONTO PG"
              attr DISTRIBUTE "DISTRIBUTE TG(BLOCK,BLOCK)\nCHPF$*   ONTO PG" distribute formats "(BLOCK,BLOCK)" [block "BLOCK", block "BLOCK"] onto "ONTO PG" PG
              entity TG
        "#]],
    );
}

#[test]
fn fixed_form_continuation_mark_can_be_any_character() {
    check(
        r#"//- fixed
CHPF$ DISTRIBUTE T(BLOCK)
CHPF$é  ONTO P
CHPF$ PROCESSORS P(4),
!HPF$日 Q(2)
"#,
        expect![[r#"
            DISTRIBUTE: mapping statement
              line "CHPF$ DISTRIBUTE T(BLOCK)"
              line "CHPF$é  ONTO P"
              attr DISTRIBUTE "DISTRIBUTE T(BLOCK)\nCHPF$é  ONTO P" distribute formats "(BLOCK)" [block "BLOCK"] onto "ONTO P" P
              entity T
            PROCESSORS: mapping statement
              line "CHPF$ PROCESSORS P(4),"
              line "!HPF$日 Q(2)"
              attr PROCESSORS "PROCESSORS P(4),\n!HPF$日 Q(2)" processors
              entity P(4) "P(4)"
              entity Q(2) "Q(2)"
        "#]],
    );
}

#[test]
fn fixed_form_continuation_without_a_directive_to_continue() {
    check(
        r#"//- fixed
      X = 1
!HPF$+   ONTO P
      END
"#,
        expect![[r#"
            ONTO: invalid
              line "!HPF$+   ONTO P"
            HPF001 "continuation mark in column 6, but no directive line precedes it" at "+"
            HPF002 "unknown HPF directive `ONTO`" at "ONTO"
        "#]],
    );
}

#[test]
fn fixed_form_zero_in_column_six_starts_a_new_directive() {
    check(
        r#"//- fixed
CHPF$ PROCESSORS P(4)
CHPF$0TEMPLATE T(8)
"#,
        expect![[r#"
            PROCESSORS: mapping statement
              line "CHPF$ PROCESSORS P(4)"
              attr PROCESSORS "PROCESSORS P(4)" processors
              entity P(4) "P(4)"
            TEMPLATE: mapping statement
              line "CHPF$0TEMPLATE T(8)"
              attr TEMPLATE "TEMPLATE T(8)" template
              entity T(8) "T(8)"
        "#]],
    );
}

#[test]
fn other_sentinels_stay_silent_comments() {
    check(
        r#"!$omp parallel do
!$xmp nodes p(4,*)
!fcd$ local
!CMIC$ DO ALL
!CAPR$ PARALLEL
!HPF_ ALIGN A(I) WITH T(I)
!HPF
"#,
        expect![[r#"
            no directives
        "#]],
    );
    check(
        r#"//- fixed
CDVM$ DISTRIBUTE A(BLOCK)
cfcd$ local
C$OMP PARALLEL
*$omp end parallel
"#,
        expect![[r#"
            no directives
        "#]],
    );
}

#[test]
fn blanks_in_end_on_and_no_sequence_are_optional() {
    check(
        r#"!HPF$ END ON
!HPF$ ENDON
!HPF$ END RESIDENT
!HPF$ endresident
!HPF$ NO SEQUENCE
!HPF$ NOSEQUENCE
!HPF$ SEQUENCE
!HPF$ SEQUENCE :: A, B
"#,
        expect![[r#"
            END: end on
              line "!HPF$ END ON"
            ENDON: end on
              line "!HPF$ ENDON"
            END: end resident
              line "!HPF$ END RESIDENT"
            endresident: end resident
              line "!HPF$ endresident"
            NO: mapping statement
              line "!HPF$ NO SEQUENCE"
              attr NO "NO SEQUENCE" sequence
            NOSEQUENCE: mapping statement
              line "!HPF$ NOSEQUENCE"
              attr NOSEQUENCE "NOSEQUENCE" sequence
            SEQUENCE: mapping statement
              line "!HPF$ SEQUENCE"
              attr SEQUENCE "SEQUENCE" sequence
            SEQUENCE: mapping attributed
              line "!HPF$ SEQUENCE :: A, B"
              attr SEQUENCE "SEQUENCE" sequence
              entity A
              entity B
        "#]],
    );
}

// ---- §2 combined (attribute, `::`) form ---------------------------------

#[test]
fn combined_distribute_onto() {
    check(
        r#"!HPF$ DISTRIBUTE (BLOCK,*,BLOCK) ONTO SQUARE :: D2, D3, D4
!hpf$ distribute (block,block) onto P :: A, B, E
"#,
        expect![[r#"
            DISTRIBUTE: mapping attributed
              line "!HPF$ DISTRIBUTE (BLOCK,*,BLOCK) ONTO SQUARE :: D2, D3, D4"
              attr DISTRIBUTE "DISTRIBUTE (BLOCK,*,BLOCK) ONTO SQUARE" distribute formats "(BLOCK,*,BLOCK)" [block "BLOCK", *, block "BLOCK"] onto "ONTO SQUARE" SQUARE
              entity D2
              entity D3
              entity D4
            distribute: mapping attributed
              line "!hpf$ distribute (block,block) onto P :: A, B, E"
              attr distribute "distribute (block,block) onto P" distribute formats "(block,block)" [block "block", block "block"] onto "onto P" P
              entity A
              entity B
              entity E
        "#]],
    );
}

#[test]
fn combined_template_with_distribute_and_dimension() {
    check(
        r#"!HPF$ TEMPLATE, DISTRIBUTE(BLOCK,*) :: W1(64,64), M(128,128)
!HPF$ TEMPLATE, DIMENSION(91,91) :: B2, W2, P
!hpf$ template, dimension(n1, n2), distribute(*,block) :: cols
"#,
        expect![[r#"
            TEMPLATE: mapping attributed
              line "!HPF$ TEMPLATE, DISTRIBUTE(BLOCK,*) :: W1(64,64), M(128,128)"
              attr TEMPLATE "TEMPLATE" template
              attr DISTRIBUTE "DISTRIBUTE(BLOCK,*)" distribute formats "(BLOCK,*)" [block "BLOCK", *]
              entity W1(64, 64) "W1(64,64)"
              entity M(128, 128) "M(128,128)"
            TEMPLATE: mapping attributed
              line "!HPF$ TEMPLATE, DIMENSION(91,91) :: B2, W2, P"
              attr TEMPLATE "TEMPLATE" template
              attr DIMENSION "DIMENSION(91,91)" dimension(91, 91)
              entity B2
              entity W2
              entity P
            template: mapping attributed
              line "!hpf$ template, dimension(n1, n2), distribute(*,block) :: cols"
              attr template "template" template
              attr dimension "dimension(n1, n2)" dimension(n1, n2)
              attr distribute "distribute(*,block)" distribute formats "(*,block)" [*, block "block"]
              entity cols
        "#]],
    );
}

#[test]
fn combined_processors() {
    check(
        r#"!HPF$ PROCESSORS, DIMENSION(3,3,3) :: RUBIK
!HPF$ PROCESSORS :: RUBIK(3,3,3)
"#,
        expect![[r#"
            PROCESSORS: mapping attributed
              line "!HPF$ PROCESSORS, DIMENSION(3,3,3) :: RUBIK"
              attr PROCESSORS "PROCESSORS" processors
              attr DIMENSION "DIMENSION(3,3,3)" dimension(3, 3, 3)
              entity RUBIK
            PROCESSORS: mapping attributed
              line "!HPF$ PROCESSORS :: RUBIK(3,3,3)"
              attr PROCESSORS "PROCESSORS" processors
              entity RUBIK(3, 3, 3) "RUBIK(3,3,3)"
        "#]],
    );
}

#[test]
fn combined_align() {
    check(
        r#"!HPF$ ALIGN WITH SNEEZY, DYNAMIC :: X, Y, Z
!hpf$ align (i,j) with E(j,i) :: C, D
!hpf$ align (:) with coor(*,:) :: indx,jndx,kndx
"#,
        expect![[r#"
            ALIGN: mapping attributed
              line "!HPF$ ALIGN WITH SNEEZY, DYNAMIC :: X, Y, Z"
              attr ALIGN "ALIGN WITH SNEEZY" align WITH SNEEZY target "SNEEZY"
              attr DYNAMIC "DYNAMIC" dynamic
              entity X
              entity Y
              entity Z
            align: mapping attributed
              line "!hpf$ align (i,j) with E(j,i) :: C, D"
              attr align "align (i,j) with E(j,i)" align sources(i, j) with E(j, i) target "E(j,i)"
              entity C
              entity D
            align: mapping attributed
              line "!hpf$ align (:) with coor(*,:) :: indx,jndx,kndx"
              attr align "align (:) with coor(*,:)" align sources(:) with coor(*, :) target "coor(*,:)"
              entity indx
              entity jndx
              entity kndx
        "#]],
    );
}

#[test]
fn combined_attribute_errors() {
    check(
        r#"!HPF$ TEMPLATE, BOGUS :: T(10)
!HPF$ TEMPLATE, DISTRIBUTE(BLOCK) T(10)
!HPF$ DISTRIBUTE :: A
!HPF$ DIMENSION(10) T
"#,
        expect![[r#"
            TEMPLATE: invalid
              line "!HPF$ TEMPLATE, BOGUS :: T(10)"
            TEMPLATE: invalid
              line "!HPF$ TEMPLATE, DISTRIBUTE(BLOCK) T(10)"
            DISTRIBUTE: invalid
              line "!HPF$ DISTRIBUTE :: A"
            DIMENSION: invalid
              line "!HPF$ DIMENSION(10) T"
            HPF001 "`BOGUS` is not a mapping attribute" at "BOGUS"
            HPF001 "expected `,` or `::`, found `T`" at "T"
            HPF001 "expected a distribution format list or ONTO, found `::`" at "::"
            HPF001 "DIMENSION is only an attribute of a combined directive (`... , DIMENSION(..) :: X`)" at "DIMENSION"
        "#]],
    );
}

// ---- §3 PROCESSORS and TEMPLATE ------------------------------------------

#[test]
fn processors_and_template_declarations() {
    check(
        r#"!HPF$ PROCESSORS P(4), Q(2,2), S
!HPF$ PROCESSORS linProcs(NUMBER_OF_PROCESSORS())
!HPF$ TEMPLATE form(nt*NUMBER_OF_PROCESSORS())
!HPF$ TEMPLATE T(0:2*N+1), U(N, -1:N+1)
"#,
        expect![[r#"
            PROCESSORS: mapping statement
              line "!HPF$ PROCESSORS P(4), Q(2,2), S"
              attr PROCESSORS "PROCESSORS P(4), Q(2,2), S" processors
              entity P(4) "P(4)"
              entity Q(2, 2) "Q(2,2)"
              entity S
            PROCESSORS: mapping statement
              line "!HPF$ PROCESSORS linProcs(NUMBER_OF_PROCESSORS())"
              attr PROCESSORS "PROCESSORS linProcs(NUMBER_OF_PROCESSORS())" processors
              entity linProcs(NUMBER_OF_PROCESSORS()) "linProcs(NUMBER_OF_PROCESSORS())"
            TEMPLATE: mapping statement
              line "!HPF$ TEMPLATE form(nt*NUMBER_OF_PROCESSORS())"
              attr TEMPLATE "TEMPLATE form(nt*NUMBER_OF_PROCESSORS())" template
              entity form((nt*NUMBER_OF_PROCESSORS())) "form(nt*NUMBER_OF_PROCESSORS())"
            TEMPLATE: mapping statement
              line "!HPF$ TEMPLATE T(0:2*N+1), U(N, -1:N+1)"
              attr TEMPLATE "TEMPLATE T(0:2*N+1), U(N, -1:N+1)" template
              entity T(0:((2*N)+1)) "T(0:2*N+1)"
              entity U(N, (-1):(N+1)) "U(N, -1:N+1)"
        "#]],
    );
}

// ---- §4 DISTRIBUTE --------------------------------------------------------

#[test]
fn distribute_formats() {
    check(
        r#"!HPF$ DISTRIBUTE A(BLOCK)
!HPF$ DISTRIBUTE A(BLOCK(4), CYCLIC, CYCLIC(N/2), *) ONTO P
!HPF$ DISTRIBUTE T (block(m)) onto p
!HPF$ DISTRIBUTE G(GEN_BLOCK(sizes), INDIRECT(owner))
"#,
        expect![[r#"
            DISTRIBUTE: mapping statement
              line "!HPF$ DISTRIBUTE A(BLOCK)"
              attr DISTRIBUTE "DISTRIBUTE A(BLOCK)" distribute formats "(BLOCK)" [block "BLOCK"]
              entity A
            DISTRIBUTE: mapping statement
              line "!HPF$ DISTRIBUTE A(BLOCK(4), CYCLIC, CYCLIC(N/2), *) ONTO P"
              attr DISTRIBUTE "DISTRIBUTE A(BLOCK(4), CYCLIC, CYCLIC(N/2), *) ONTO P" distribute formats "(BLOCK(4), CYCLIC, CYCLIC(N/2), *)" [block(4) "BLOCK(4)", cyclic "CYCLIC", cyclic((N/2)) "CYCLIC(N/2)", *] onto "ONTO P" P
              entity A
            DISTRIBUTE: mapping statement
              line "!HPF$ DISTRIBUTE T (block(m)) onto p"
              attr DISTRIBUTE "DISTRIBUTE T (block(m)) onto p" distribute formats "(block(m))" [block(m) "block(m)"] onto "onto p" p
              entity T
            DISTRIBUTE: mapping statement
              line "!HPF$ DISTRIBUTE G(GEN_BLOCK(sizes), INDIRECT(owner))"
              attr DISTRIBUTE "DISTRIBUTE G(GEN_BLOCK(sizes), INDIRECT(owner))" distribute formats "(GEN_BLOCK(sizes), INDIRECT(owner))" [gen_block(sizes) "GEN_BLOCK(sizes)", indirect(owner) "INDIRECT(owner)"]
              entity G
        "#]],
    );
}

#[test]
fn distribute_descriptive_and_transcriptive() {
    check(
        r#"!HPF$ DISTRIBUTE THALIA *(CYCLIC) ONTO *FLIP
!HPF$ DISTRIBUTE ERATO * ONTO *
!HPF$ DISTRIBUTE W *
!HPF$ DISTRIBUTE ONTO *TV :: X
!HPF$ DISTRIBUTE *(BLOCK) ONTO *P :: Z
"#,
        expect![[r#"
            DISTRIBUTE: mapping statement
              line "!HPF$ DISTRIBUTE THALIA *(CYCLIC) ONTO *FLIP"
              attr DISTRIBUTE "DISTRIBUTE THALIA *(CYCLIC) ONTO *FLIP" distribute formats "*(CYCLIC)" star [cyclic "CYCLIC"] onto "ONTO *FLIP" * FLIP
              entity THALIA
            DISTRIBUTE: mapping statement
              line "!HPF$ DISTRIBUTE ERATO * ONTO *"
              attr DISTRIBUTE "DISTRIBUTE ERATO * ONTO *" distribute formats "*" star transcriptive onto "ONTO *" * (any)
              entity ERATO
            DISTRIBUTE: mapping statement
              line "!HPF$ DISTRIBUTE W *"
              attr DISTRIBUTE "DISTRIBUTE W *" distribute formats "*" star transcriptive
              entity W
            DISTRIBUTE: mapping attributed
              line "!HPF$ DISTRIBUTE ONTO *TV :: X"
              attr DISTRIBUTE "DISTRIBUTE ONTO *TV" distribute onto "ONTO *TV" * TV
              entity X
            DISTRIBUTE: mapping attributed
              line "!HPF$ DISTRIBUTE *(BLOCK) ONTO *P :: Z"
              attr DISTRIBUTE "DISTRIBUTE *(BLOCK) ONTO *P" distribute formats "*(BLOCK)" star [block "BLOCK"] onto "ONTO *P" * P
              entity Z
        "#]],
    );
}

#[test]
fn distribute_errors() {
    check(
        r#"!HPF$ DISTRIBUTE X ONTO *TV
!HPF$ DISTRIBUTE A(BLOK)
!HPF$ DISTRIBUTE A(BLOCK
!HPF$ DISTRIBUTE A(GEN_BLOCK)
!HPF$ DISTRIBUTE
!HPF$ DISTRIBUTE A(BLOCK) ONTO
"#,
        expect![[r#"
            DISTRIBUTE: invalid
              line "!HPF$ DISTRIBUTE X ONTO *TV"
            DISTRIBUTE: invalid
              line "!HPF$ DISTRIBUTE A(BLOK)"
            DISTRIBUTE: invalid
              line "!HPF$ DISTRIBUTE A(BLOCK"
            DISTRIBUTE: invalid
              line "!HPF$ DISTRIBUTE A(GEN_BLOCK)"
            DISTRIBUTE: invalid
              line "!HPF$ DISTRIBUTE"
            DISTRIBUTE: invalid
              line "!HPF$ DISTRIBUTE A(BLOCK) ONTO"
            HPF001 "expected a distribution format list such as `(BLOCK)` before ONTO, found `ONTO`" at "ONTO"
            HPF001 "unknown distribution format `BLOK`: expected BLOCK, BLOCK(m), CYCLIC, CYCLIC(m) or *; did you mean `BLOCK`?" at "BLOK"
            HPF001 "expected `,` or `)`, found the end of the directive" at the end of "!HPF$ DISTRIBUTE A(BLOCK"
            HPF001 "GEN_BLOCK needs an array of block sizes, found `)`" at ")"
            HPF001 "expected the name of the array or template to distribute, found the end of the directive" at the end of "!HPF$ DISTRIBUTE"
            HPF001 "expected the name of a processor arrangement after ONTO, found the end of the directive" at the end of "!HPF$ DISTRIBUTE A(BLOCK) ONTO"
        "#]],
    );
}

// ---- §5 ALIGN --------------------------------------------------------------

#[test]
fn align_sources_dummies_colon_star() {
    check(
        r#"!HPF$ ALIGN B(I) WITH A(I)
!HPF$ ALIGN X(I, :, *) WITH T(:, I)
!HPF$ ALIGN ur0(*,*,*,:,*,*,*) WITH form(1:nt)
!HPF$ ALIGN V(:) WITH T(2:20:2)
"#,
        expect![[r#"
            ALIGN: mapping statement
              line "!HPF$ ALIGN B(I) WITH A(I)"
              attr ALIGN "ALIGN B(I) WITH A(I)" align sources(I) WITH A(I) target "A(I)"
              entity B
            ALIGN: mapping statement
              line "!HPF$ ALIGN X(I, :, *) WITH T(:, I)"
              attr ALIGN "ALIGN X(I, :, *) WITH T(:, I)" align sources(I, :, *) WITH T(:, I) target "T(:, I)"
              entity X
            ALIGN: mapping statement
              line "!HPF$ ALIGN ur0(*,*,*,:,*,*,*) WITH form(1:nt)"
              attr ALIGN "ALIGN ur0(*,*,*,:,*,*,*) WITH form(1:nt)" align sources(*, *, *, :, *, *, *) WITH form(1:nt) target "form(1:nt)"
              entity ur0
            ALIGN: mapping statement
              line "!HPF$ ALIGN V(:) WITH T(2:20:2)"
              attr ALIGN "ALIGN V(:) WITH T(2:20:2)" align sources(:) WITH T(2:20:2) target "T(2:20:2)"
              entity V
        "#]],
    );
}

#[test]
fn align_affine_subscripts() {
    check(
        r#"!HPF$ ALIGN B(I) WITH A(I+1)
!HPF$ ALIGN j2(I,J) WITH t2(-2*I+60, 2*J-1)
!HPF$ ALIGN a(i,j) WITH t(i+98,j)
!hpf$ align t1b(b) with t1a(15 - b)
!HPF$ ALIGN a2(I,J) WITH t2(J,I)
!HPF$ ALIGN C(I) WITH T(2*(I+1)-1, N-I*3)
"#,
        expect![[r#"
            ALIGN: mapping statement
              line "!HPF$ ALIGN B(I) WITH A(I+1)"
              attr ALIGN "ALIGN B(I) WITH A(I+1)" align sources(I) WITH A((I+1)) target "A(I+1)"
              entity B
            ALIGN: mapping statement
              line "!HPF$ ALIGN j2(I,J) WITH t2(-2*I+60, 2*J-1)"
              attr ALIGN "ALIGN j2(I,J) WITH t2(-2*I+60, 2*J-1)" align sources(I, J) WITH t2(((-(2*I))+60), ((2*J)-1)) target "t2(-2*I+60, 2*J-1)"
              entity j2
            ALIGN: mapping statement
              line "!HPF$ ALIGN a(i,j) WITH t(i+98,j)"
              attr ALIGN "ALIGN a(i,j) WITH t(i+98,j)" align sources(i, j) WITH t((i+98), j) target "t(i+98,j)"
              entity a
            align: mapping statement
              line "!hpf$ align t1b(b) with t1a(15 - b)"
              attr align "align t1b(b) with t1a(15 - b)" align sources(b) with t1a((15-b)) target "t1a(15 - b)"
              entity t1b
            ALIGN: mapping statement
              line "!HPF$ ALIGN a2(I,J) WITH t2(J,I)"
              attr ALIGN "ALIGN a2(I,J) WITH t2(J,I)" align sources(I, J) WITH t2(J, I) target "t2(J,I)"
              entity a2
            ALIGN: mapping statement
              line "!HPF$ ALIGN C(I) WITH T(2*(I+1)-1, N-I*3)"
              attr ALIGN "ALIGN C(I) WITH T(2*(I+1)-1, N-I*3)" align sources(I) WITH T(((2*paren((I+1)))-1), (N-(I*3))) target "T(2*(I+1)-1, N-I*3)"
              entity C
        "#]],
    );
}

#[test]
fn align_target_constants_and_replication() {
    check(
        r#"!HPF$ ALIGN UBE(I) WITH DOMAIN(I,799)
!HPF$ ALIGN R(I) WITH T(I,*,*)
!HPF$ ALIGN S WITH T(*, 1)
"#,
        expect![[r#"
            ALIGN: mapping statement
              line "!HPF$ ALIGN UBE(I) WITH DOMAIN(I,799)"
              attr ALIGN "ALIGN UBE(I) WITH DOMAIN(I,799)" align sources(I) WITH DOMAIN(I, 799) target "DOMAIN(I,799)"
              entity UBE
            ALIGN: mapping statement
              line "!HPF$ ALIGN R(I) WITH T(I,*,*)"
              attr ALIGN "ALIGN R(I) WITH T(I,*,*)" align sources(I) WITH T(I, *, *) target "T(I,*,*)"
              entity R
            ALIGN: mapping statement
              line "!HPF$ ALIGN S WITH T(*, 1)"
              attr ALIGN "ALIGN S WITH T(*, 1)" align WITH T(*, 1) target "T(*, 1)"
              entity S
        "#]],
    );
}

#[test]
fn align_descriptive_target() {
    check(
        r#"!HPF$ ALIGN X(I) WITH *T(I)
!HPF$ ALIGN (:) WITH *Y(:) :: X2
"#,
        expect![[r#"
            ALIGN: mapping statement
              line "!HPF$ ALIGN X(I) WITH *T(I)"
              attr ALIGN "ALIGN X(I) WITH *T(I)" align sources(I) WITH * T(I) target "*T(I)"
              entity X
            ALIGN: mapping attributed
              line "!HPF$ ALIGN (:) WITH *Y(:) :: X2"
              attr ALIGN "ALIGN (:) WITH *Y(:)" align sources(:) WITH * Y(:) target "*Y(:)"
              entity X2
        "#]],
    );
}

#[test]
fn align_shorthands() {
    check(
        r#"!HPF$ ALIGN A WITH T
!HPF$ ALIGN WITH T :: A
!HPF$ ALIGN WITH U :: Uh
!HPF$ ALIGN with field(i,*) :: s(i)
"#,
        expect![[r#"
            ALIGN: mapping statement
              line "!HPF$ ALIGN A WITH T"
              attr ALIGN "ALIGN A WITH T" align WITH T target "T"
              entity A
            ALIGN: mapping attributed
              line "!HPF$ ALIGN WITH T :: A"
              attr ALIGN "ALIGN WITH T" align WITH T target "T"
              entity A
            ALIGN: mapping attributed
              line "!HPF$ ALIGN WITH U :: Uh"
              attr ALIGN "ALIGN WITH U" align WITH U target "U"
              entity Uh
            ALIGN: mapping attributed
              line "!HPF$ ALIGN with field(i,*) :: s(i)"
              attr ALIGN "ALIGN with field(i,*)" align sources(i) with field(i, *) target "field(i,*)"
              entity s "s(i)"
            HPF030 "the align-source list after the alignee is a dialect form; HPF 2.0 writes `ALIGN s(i) with field(i,*)`" at "ALIGN with field(i,*) :: s(i)"
              fix "Write `ALIGN s(i) with field(i,*)`":
                !HPF$ ALIGN s(i) with field(i,*)
        "#]],
    );
}

#[test]
fn align_several_alignees_in_statement_form() {
    // `ALIGN mx(*,i), mxt(i,*) WITH T(i,*,*)` occurs in a public program:
    // each alignee keeps its own source list, and the note's fix writes
    // one ALIGN per array.
    check(
        r#"!HPF$ ALIGN mx(*,i), mxt(i,*) WITH T(i,*,*)
"#,
        expect![[r#"
            ALIGN: mapping attributed
              line "!HPF$ ALIGN mx(*,i), mxt(i,*) WITH T(i,*,*)"
              attr ALIGN "ALIGN mx(*,i), mxt(i,*) WITH T(i,*,*)" align WITH T(i, *, *) target "T(i,*,*)"
              entity mx(*, i) "mx(*,i)"
              entity mxt(i, *) "mxt(i,*)"
            HPF030 "alignees with their own source lists; HPF 2.0 writes one ALIGN per array: `ALIGN mx(*,i) WITH T(i,*,*)`, `ALIGN mxt(i,*) WITH T(i,*,*)`" at "ALIGN mx(*,i), mxt(i,*) WITH T(i,*,*)"
              fix "Write one ALIGN per array":
                !HPF$ ALIGN mx(*,i) WITH T(i,*,*)
                !HPF$ ALIGN mxt(i,*) WITH T(i,*,*)
        "#]],
    );
}

#[test]
fn align_errors() {
    check(
        r#"!HPF$ ALIGN A(I) T(I)
!HPF$ ALIGN A(I) WITH
!HPF$ ALIGN A(I) WITH T(I
!HPF$ ALIGN A(I) WITH T(I) extra
!HPF$ ALIGN A(I) WITH T(I) # oops
"#,
        expect![[r##"
            ALIGN: invalid
              line "!HPF$ ALIGN A(I) T(I)"
            ALIGN: invalid
              line "!HPF$ ALIGN A(I) WITH"
            ALIGN: invalid
              line "!HPF$ ALIGN A(I) WITH T(I"
            ALIGN: invalid
              line "!HPF$ ALIGN A(I) WITH T(I) extra"
            ALIGN: invalid
              line "!HPF$ ALIGN A(I) WITH T(I) # oops"
            HPF001 "expected `with`, found `T`" at "T"
            HPF001 "expected the align target after WITH, found the end of the directive" at the end of "!HPF$ ALIGN A(I) WITH"
            HPF001 "expected `,` or `)`, found the end of the directive" at the end of "!HPF$ ALIGN A(I) WITH T(I"
            HPF001 "unexpected text after the directive, found `extra`" at "extra"
            HPF001 "unexpected character `#` in a directive" at "#"
        "##]],
    );
}

// ---- §6 DYNAMIC, REALIGN, REDISTRIBUTE ------------------------------------

#[test]
fn dynamic_realign_redistribute() {
    check(
        r#"!HPF$ DYNAMIC A, B
!HPF$ DYNAMIC :: C
!HPF$ DISTRIBUTE (BLOCK), DYNAMIC :: D
!HPF$ REDISTRIBUTE A(CYCLIC)
!HPF$ REDISTRIBUTE A(CYCLIC(K+1)) ONTO Q
!HPF$ REDISTRIBUTE (BLOCK) ONTO P :: A, B
!HPF$ REDISTRIBUTE ONTO P :: A
!HPF$ REALIGN B(I) WITH A(I+1)
!HPF$ REALIGN (I) WITH T(M*I+K) :: X, Y
!HPF$ REALIGN WITH T :: Z
"#,
        expect![[r#"
            DYNAMIC: mapping statement
              line "!HPF$ DYNAMIC A, B"
              attr DYNAMIC "DYNAMIC A, B" dynamic
              entity A
              entity B
            DYNAMIC: mapping attributed
              line "!HPF$ DYNAMIC :: C"
              attr DYNAMIC "DYNAMIC" dynamic
              entity C
            DISTRIBUTE: mapping attributed
              line "!HPF$ DISTRIBUTE (BLOCK), DYNAMIC :: D"
              attr DISTRIBUTE "DISTRIBUTE (BLOCK)" distribute formats "(BLOCK)" [block "BLOCK"]
              attr DYNAMIC "DYNAMIC" dynamic
              entity D
            REDISTRIBUTE: mapping statement
              line "!HPF$ REDISTRIBUTE A(CYCLIC)"
              attr REDISTRIBUTE "REDISTRIBUTE A(CYCLIC)" redistribute formats "(CYCLIC)" [cyclic "CYCLIC"]
              entity A
            REDISTRIBUTE: mapping statement
              line "!HPF$ REDISTRIBUTE A(CYCLIC(K+1)) ONTO Q"
              attr REDISTRIBUTE "REDISTRIBUTE A(CYCLIC(K+1)) ONTO Q" redistribute formats "(CYCLIC(K+1))" [cyclic((K+1)) "CYCLIC(K+1)"] onto "ONTO Q" Q
              entity A
            REDISTRIBUTE: mapping attributed
              line "!HPF$ REDISTRIBUTE (BLOCK) ONTO P :: A, B"
              attr REDISTRIBUTE "REDISTRIBUTE (BLOCK) ONTO P" redistribute formats "(BLOCK)" [block "BLOCK"] onto "ONTO P" P
              entity A
              entity B
            REDISTRIBUTE: mapping attributed
              line "!HPF$ REDISTRIBUTE ONTO P :: A"
              attr REDISTRIBUTE "REDISTRIBUTE ONTO P" redistribute onto "ONTO P" P
              entity A
            REALIGN: mapping statement
              line "!HPF$ REALIGN B(I) WITH A(I+1)"
              attr REALIGN "REALIGN B(I) WITH A(I+1)" realign sources(I) WITH A((I+1)) target "A(I+1)"
              entity B
            REALIGN: mapping attributed
              line "!HPF$ REALIGN (I) WITH T(M*I+K) :: X, Y"
              attr REALIGN "REALIGN (I) WITH T(M*I+K)" realign sources(I) WITH T(((M*I)+K)) target "T(M*I+K)"
              entity X
              entity Y
            REALIGN: mapping attributed
              line "!HPF$ REALIGN WITH T :: Z"
              attr REALIGN "REALIGN WITH T" realign WITH T target "T"
              entity Z
        "#]],
    );
}

// ---- §7 INHERIT --------------------------------------------------------------

#[test]
fn inherit() {
    check(
        r#"!HPF$ INHERIT A, B
!HPF$ INHERIT :: C
!HPF$ INHERIT, DISTRIBUTE(BLOCK) :: D
"#,
        expect![[r#"
            INHERIT: mapping statement
              line "!HPF$ INHERIT A, B"
              attr INHERIT "INHERIT A, B" inherit
              entity A
              entity B
            INHERIT: mapping attributed
              line "!HPF$ INHERIT :: C"
              attr INHERIT "INHERIT" inherit
              entity C
            INHERIT: mapping attributed
              line "!HPF$ INHERIT, DISTRIBUTE(BLOCK) :: D"
              attr INHERIT "INHERIT" inherit
              attr DISTRIBUTE "DISTRIBUTE(BLOCK)" distribute formats "(BLOCK)" [block "BLOCK"]
              entity D
        "#]],
    );
    check(
        r#"//- fixed
chpf$ inherit A
"#,
        expect![[r#"
            inherit: mapping statement
              line "chpf$ inherit A"
              attr inherit "inherit A" inherit
              entity A
        "#]],
    );
}

// ---- §8 INDEPENDENT, NEW, REDUCTION -------------------------------------------

#[test]
fn independent_clauses() {
    check(
        r#"!HPF$ INDEPENDENT
!HPF$ INDEPENDENT, NEW(J), REDUCTION(X)
!hpf$ independent, new(x), reduction(gsum)
!HPF$ INDEPENDENT, REDUCTION(S, T), NEW(I, J)
"#,
        expect![[r#"
            INDEPENDENT: independent
              line "!HPF$ INDEPENDENT"
              plain
            INDEPENDENT: independent
              line "!HPF$ INDEPENDENT, NEW(J), REDUCTION(X)"
              new(J) reduction(X)
            independent: independent
              line "!hpf$ independent, new(x), reduction(gsum)"
              new(x) reduction(gsum)
            INDEPENDENT: independent
              line "!HPF$ INDEPENDENT, REDUCTION(S, T), NEW(I, J)"
              new(I, J) reduction(S, T)
        "#]],
    );
}

#[test]
fn independent_index_list() {
    check(
        r#"!HPF$ INDEPENDENT(I,J)
!hpf$ independent (j,i), new(k)
"#,
        expect![[r#"
            INDEPENDENT: independent
              line "!HPF$ INDEPENDENT(I,J)"
              indices(I, J)
            independent: independent
              line "!hpf$ independent (j,i), new(k)"
              indices(j, i) new(k)
        "#]],
    );
    check(
        r#"//- fixed
chpf$ independent(j,i)
"#,
        expect![[r#"
            independent: independent
              line "chpf$ independent(j,i)"
              indices(j, i)
        "#]],
    );
}

#[test]
fn independent_errors() {
    check(
        r#"!HPF$ INDEPENDENT, PRIVATE(J)
!HPF$ INDEPENDENT, NEW
!HPF$ INDEPENDENT NEW(J)
!HPF$ INDEPENDANT
"#,
        expect![[r#"
            INDEPENDENT: invalid
              line "!HPF$ INDEPENDENT, PRIVATE(J)"
            INDEPENDENT: invalid
              line "!HPF$ INDEPENDENT, NEW"
            INDEPENDENT: independent
              line "!HPF$ INDEPENDENT NEW(J)"
              new(J)
            INDEPENDANT: invalid
              line "!HPF$ INDEPENDANT"
            HPF001 "expected NEW(...), REDUCTION(...) or ON HOME(...), found `PRIVATE`" at "PRIVATE"
            HPF001 "expected `(`, found the end of the directive" at the end of "!HPF$ INDEPENDENT, NEW"
            HPF030 "`NEW` without the comma before it; HPF 2.0 writes `INDEPENDENT, NEW(...)`" at "NEW"
              fix "Insert `,` before NEW":
                !HPF$ INDEPENDENT, NEW(J)
            HPF002 "unknown HPF directive `INDEPENDANT`; did you mean `INDEPENDENT`?" at "INDEPENDANT"
        "#]],
    );
}

// ---- §9 ON / HOME, RESIDENT -------------------------------------------------

#[test]
fn on_home_and_resident() {
    check(
        r#"!HPF$ ON HOME(A(I))
!HPF$ ON HOME(T(I:I+1)), RESIDENT
!HPF$ ON HOME(A(I)), RESIDENT(B(I-1:I+1), C), NEW(X) BEGIN
!HPF$ ON (P(2)) BEGIN
!HPF$ END ON
!HPF$ RESIDENT(A, B(I))
!HPF$ RESIDENT BEGIN
!HPF$ END RESIDENT
"#,
        expect![[r#"
            ON: on
              line "!HPF$ ON HOME(A(I))"
              home A(I)
            ON: on
              line "!HPF$ ON HOME(T(I:I+1)), RESIDENT"
              home T(I:(I+1)) resident
            ON: on
              line "!HPF$ ON HOME(A(I)), RESIDENT(B(I-1:I+1), C), NEW(X) BEGIN"
              home A(I) resident(B((I-1):(I+1)), C) new(X) begin
            ON: on
              line "!HPF$ ON (P(2)) BEGIN"
              home P(2) begin
            END: end on
              line "!HPF$ END ON"
            RESIDENT: resident
              line "!HPF$ RESIDENT(A, B(I))"
              objects(A, B(I))
            RESIDENT: resident
              line "!HPF$ RESIDENT BEGIN"
              objects begin
            END: end resident
              line "!HPF$ END RESIDENT"
        "#]],
    );
}

#[test]
fn on_errors() {
    check(
        r#"!HPF$ ON A(I)
!HPF$ ON HOME A(I)
!HPF$ END
!HPF$ END DO
"#,
        expect![[r#"
            ON: invalid
              line "!HPF$ ON A(I)"
            ON: invalid
              line "!HPF$ ON HOME A(I)"
            END: invalid
              line "!HPF$ END"
            END: invalid
              line "!HPF$ END DO"
            HPF001 "expected HOME(...) or a processor reference after ON, found `A`" at "A"
            HPF001 "expected `(` after HOME, found `A`" at "A"
            HPF001 "expected ON or RESIDENT after END, found the end of the directive" at the end of "!HPF$ END"
            HPF001 "expected END ON or END RESIDENT" at "END DO"
        "#]],
    );
}

// ---- §10 SHADOW ----------------------------------------------------------------

#[test]
fn shadow_widths() {
    check(
        r#"!HPF$ SHADOW A(1)
!HPF$ SHADOW U(2:2)
!HPF$ SHADOW B(1, 0:3)
!HPF$ SHADOW(0,3,3,0) :: f,df
!HPF$ DISTRIBUTE(BLOCK), SHADOW(1:2) :: A
"#,
        expect![[r#"
            SHADOW: mapping statement
              line "!HPF$ SHADOW A(1)"
              attr SHADOW "SHADOW A(1)" shadow(1)
              entity A "A(1)"
            SHADOW: mapping statement
              line "!HPF$ SHADOW U(2:2)"
              attr SHADOW "SHADOW U(2:2)" shadow(2:2)
              entity U "U(2:2)"
            SHADOW: mapping statement
              line "!HPF$ SHADOW B(1, 0:3)"
              attr SHADOW "SHADOW B(1, 0:3)" shadow(1, 0:3)
              entity B "B(1, 0:3)"
            SHADOW: mapping attributed
              line "!HPF$ SHADOW(0,3,3,0) :: f,df"
              attr SHADOW "SHADOW(0,3,3,0)" shadow(0, 3, 3, 0)
              entity f
              entity df
            DISTRIBUTE: mapping attributed
              line "!HPF$ DISTRIBUTE(BLOCK), SHADOW(1:2) :: A"
              attr DISTRIBUTE "DISTRIBUTE(BLOCK)" distribute formats "(BLOCK)" [block "BLOCK"]
              attr SHADOW "SHADOW(1:2)" shadow(1:2)
              entity A
        "#]],
    );
}

// ---- unknown and malformed directives ------------------------------------------

#[test]
fn unknown_and_empty_directives() {
    check(
        r#"!HPF$ DISTRIBUT A(BLOCK)
!HPF$ FOO
!HPF$
!HPF$ (BLOCK)
!HPF$ ALIGN A(I) WITH T(I) é
"#,
        expect![[r#"
            DISTRIBUT: invalid
              line "!HPF$ DISTRIBUT A(BLOCK)"
            FOO: invalid
              line "!HPF$ FOO"
            : invalid
              line "!HPF$"
            : invalid
              line "!HPF$ (BLOCK)"
            ALIGN: invalid
              line "!HPF$ ALIGN A(I) WITH T(I) é"
            HPF002 "unknown HPF directive `DISTRIBUT`; did you mean `DISTRIBUTE`?" at "DISTRIBUT"
            HPF002 "unknown HPF directive `FOO`" at "FOO"
            HPF001 "empty HPF directive" at the end of "!HPF$"
            HPF002 "expected a directive keyword" at "("
            HPF001 "unexpected character `é` in a directive" at "é"
        "#]],
    );
}

// ---- the same program in fixed and free form ---------------------------------------

/// The model of a file without offsets: the directives rendered by names and
/// structure, the units as their Debug text with every `a..b` range removed.
fn model_without_offsets(text: &str, form: SourceForm) -> String {
    let file = syntax::parse(text, form);
    let directives = Renderer::names_only(text).file(&file);
    let units = strip_ranges(&format!("{:#?}", file.units));
    // `execution_start` is the one plain offset in the units.
    let units: Vec<String> = units
        .lines()
        .map(|line| match line.split_once("execution_start: ") {
            Some((indent, _)) => format!("{indent}execution_start: _,"),
            None => line.to_string(),
        })
        .collect();
    format!("{directives}\n{}", units.join("\n"))
}

/// Replaces every `12..34` (a TextRange's Debug form) with `_`.
fn strip_ranges(debug: &str) -> String {
    let mut res = String::with_capacity(debug.len());
    let mut rest = debug;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && rest[digits..].starts_with("..") {
            let more = rest[digits + 2..].bytes().take_while(u8::is_ascii_digit).count();
            if more > 0 {
                res.push('_');
                rest = &rest[digits + 2 + more..];
                continue;
            }
        }
        let ch = rest.chars().next().expect("not empty");
        res.push(ch);
        rest = &rest[ch.len_utf8()..];
        // Skip the rest of a number that is not the start of a range.
        if ch.is_ascii_alphanumeric() || ch == '_' {
            let word = rest.bytes().take_while(|it| it.is_ascii_alphanumeric() || *it == b'_').count();
            res.push_str(&rest[..word]);
            rest = &rest[word..];
        }
    }
    res
}

/// Asserts that every name of the program units (unit names, dummies,
/// declared entities, every name in an expression) slices to itself; the
/// directive names are checked by the renderer. Returns how many were checked.
fn check_unit_names(text: &str, form: SourceForm) -> usize {
    let file = syntax::parse(text, form);
    let mut names: Vec<&Name> = Vec::new();
    let mut exprs: Vec<&Expr> = Vec::new();
    for unit in file.units.iter().flat_map(|it| it.all_units()) {
        names.extend(unit.name.iter().chain(&unit.dummies).chain(&unit.uses));
        for decl in &unit.decls {
            for entity in &decl.entities {
                names.push(&entity.name);
                exprs.extend(entity.init.iter());
                for dim in entity.dims.iter().flatten() {
                    exprs.extend(subscript_exprs(dim));
                }
            }
        }
        let mut stmts: Vec<&Stmt> = unit.body.iter().collect();
        while let Some(stmt) = stmts.pop() {
            stmts.extend(stmt.children());
            match &stmt.kind {
                StmtKind::Do { control, .. } => {
                    if let Some(control) = control {
                        names.push(&control.var);
                        exprs.extend([&control.lo, &control.hi].into_iter().chain(control.step.iter()));
                    }
                }
                StmtKind::Forall { specs, mask, .. } => {
                    for spec in specs {
                        names.push(&spec.var);
                        exprs.extend([&spec.lo, &spec.hi].into_iter().chain(spec.step.iter()));
                    }
                    exprs.extend(mask.iter());
                }
                StmtKind::DoWhile { cond, .. } => exprs.extend(cond.iter()),
                StmtKind::Assign { lhs, rhs } => exprs.extend([lhs, rhs]),
                StmtKind::Where { mask, elsewhere, .. } => {
                    exprs.extend(mask.iter().chain(elsewhere.iter().flat_map(|(it, _)| it.iter())));
                }
                StmtKind::If { branches } => exprs.extend(branches.iter().flat_map(|(it, _)| it.iter())),
                StmtKind::Call { name, args } => {
                    names.push(name);
                    exprs.extend(args);
                }
                StmtKind::Output { items } => exprs.extend(items),
                StmtKind::Other { exprs: other, .. } => exprs.extend(other),
            }
        }
    }
    for expr in exprs {
        expr.walk(|it| match &it.kind {
            ExprKind::Name(name) | ExprKind::Ref { name, .. } => names.push(name),
            _ => {}
        });
    }
    for name in &names {
        assert_eq!(&text[name.range.to_range()], name.text, "the range of `{}` in {form:?}", name.text);
    }
    names.len()
}

fn subscript_exprs(subscript: &Subscript) -> Vec<&Expr> {
    match subscript {
        Subscript::Expr(expr) | Subscript::Keyword { value: expr, .. } => vec![expr],
        Subscript::Range { lo, hi, stride, .. } => lo.iter().chain(hi).chain(stride).collect(),
        Subscript::Star(_) => Vec::new(),
    }
}

fn check_same_model(free: &str, fixed: &str) {
    let n_names = check_unit_names(free, SourceForm::Free);
    assert_eq!(n_names, check_unit_names(fixed, SourceForm::FIXED));
    assert!(n_names >= 5, "the programs have names to check: {n_names}");
    let free_model = model_without_offsets(free, SourceForm::Free);
    let fixed_model = model_without_offsets(fixed, SourceForm::FIXED);
    assert!(!free_model.starts_with("no directives"));
    for (line_idx, (free_line, fixed_line)) in free_model.lines().zip(fixed_model.lines()).enumerate() {
        assert_eq!(free_line, fixed_line, "line {line_idx} of the models differs:\n{free_model}\n---\n{fixed_model}");
    }
    assert_eq!(free_model.lines().count(), fixed_model.lines().count(), "{free_model}\n---\n{fixed_model}");
}

fn corpus(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

#[test]
fn seed_fig6_fixed_and_free_give_the_same_model() {
    check_same_model(&corpus("seed_fig6.f90"), &corpus("seed_fig6.f"));
}

#[test]
fn continued_directives_fixed_and_free_give_the_same_model() {
    let free = r#"program pair
  real a(100, 100), b(100, 100), c(100)
!HPF$ PROCESSORS P(2, 2)
!HPF$ TEMPLATE, DISTRIBUTE(BLOCK, &
!HPF$   CYCLIC(2)) ONTO P :: T(100, 100)
   !HPF$ ALIGN (I, J) WITH &
! a comment between the lines
!HPF$&  T(J, I) :: A, B
!HPF$ ALIGN C(K) &   ! trailing commentary
!HPF$   WITH T(2*K-1, *)
!HPF$ INDEPENDENT, &
!HPF$   NEW(K)
  do k = 1, 100
    c(k) = 1.0
  end do
end program pair
"#;
    let fixed = r#"      program pair
      real a(100, 100), b(100, 100), c(100)
CHPF$ PROCESSORS P(2, 2)
*HPF$ TEMPLATE, DISTRIBUTE(BLOCK,
*HPF$+  CYCLIC(2)) ONTO P :: T(100, 100)
!HPF$ ALIGN (I, J) WITH
C     a comment between the lines
!HPF$&  T(J, I) :: A, B
chpf$ ALIGN C(K)                                                        SEQ00100
chpf$1  WITH T(2*K-1, *) ! trailing commentary
!HPF$ INDEPENDENT,
!HPF$x  NEW(K)
      do k = 1, 100
        c(k) = 1.0
      end do
      end program pair
"#;
    check_same_model(free, fixed);
}

#[test]
fn independent_dialects() {
    // NEW without the comma, ON HOME / ONHOME clauses (NAS benchmarks in HPF).
    check(
        r#"!HPF$ INDEPENDENT NEW(I,J)
!HPF$ INDEPENDENT, ONHOME(U(I1,I2,I3))
!HPF$ INDEPENDENT, NEW(K), ON HOME (V(K+1))
!HPF$ INDEPENDENT (I) REDUCTION(S)
!HPF$ INDEPENDENT, ON (U(I))
"#,
        expect![[r#"
            INDEPENDENT: independent
              line "!HPF$ INDEPENDENT NEW(I,J)"
              new(I, J)
            INDEPENDENT: independent
              line "!HPF$ INDEPENDENT, ONHOME(U(I1,I2,I3))"
              on home U(I1, I2, I3)
            INDEPENDENT: independent
              line "!HPF$ INDEPENDENT, NEW(K), ON HOME (V(K+1))"
              new(K) on home V((K+1))
            INDEPENDENT: independent
              line "!HPF$ INDEPENDENT (I) REDUCTION(S)"
              indices(I) reduction(S)
            INDEPENDENT: invalid
              line "!HPF$ INDEPENDENT, ON (U(I))"
            HPF030 "`NEW` without the comma before it; HPF 2.0 writes `INDEPENDENT, NEW(...)`" at "NEW"
              fix "Insert `,` before NEW":
                !HPF$ INDEPENDENT, NEW(I,J)
            HPF030 "an ON HOME clause of INDEPENDENT is an ADAPTOR-era extension; HPF 2.0 writes `!HPF$ ON HOME (U(I1,I2,I3)) BEGIN` ... `!HPF$ END ON` around the loop's body" at "ONHOME(U(I1,I2,I3))"
            HPF030 "an ON HOME clause of INDEPENDENT is an ADAPTOR-era extension; HPF 2.0 writes `!HPF$ ON HOME (V(K+1)) BEGIN` ... `!HPF$ END ON` around the loop's body" at "ON HOME (V(K+1))"
            HPF030 "`REDUCTION` without the comma before it; HPF 2.0 writes `INDEPENDENT, REDUCTION(...)`" at "REDUCTION"
              fix "Insert `,` before REDUCTION":
                !HPF$ INDEPENDENT (I), REDUCTION(S)
            HPF001 "expected `home`, found `(`" at "("
        "#]],
    );
}

#[test]
fn on_home_spelled_as_one_word() {
    check(
        r#"!HPF$ ONHOME(A(I)) BEGIN
!HPF$ END ON
"#,
        expect![[r#"
            ONHOME: on
              line "!HPF$ ONHOME(A(I)) BEGIN"
              home A(I) begin
            END: end on
              line "!HPF$ END ON"
            HPF030 "`ONHOME` is spelled `ON HOME` in HPF 2.0" at "ONHOME"
              fix "Write `ON HOME`":
                !HPF$ ON HOME(A(I)) BEGIN
        "#]],
    );
}

#[test]
fn several_alignees_share_a_source_list() {
    check(
        r#"//- fixed
chpf$ align j(i), k(i) with t(i)
!HPF$ ALIGN A, B, C WITH T
"#,
        expect![[r#"
            align: mapping attributed
              line "chpf$ align j(i), k(i) with t(i)"
              attr align "align j(i), k(i) with t(i)" align sources(i) with t(i) target "t(i)"
              entity j "j(i)"
              entity k "k(i)"
            ALIGN: mapping attributed
              line "!HPF$ ALIGN A, B, C WITH T"
              attr ALIGN "ALIGN A, B, C WITH T" align WITH T target "T"
              entity A
              entity B
              entity C
            HPF030 "several alignees in one ALIGN statement; HPF 2.0 writes `align (i) with t(i) :: j, k`" at "align j(i), k(i) with t(i)"
              fix "Write `align (i) with t(i) :: j, k`":
                chpf$ align (i) with t(i) :: j, k
            HPF030 "several alignees in one ALIGN statement; HPF 2.0 writes `ALIGN WITH T :: A, B, C`" at "ALIGN A, B, C WITH T"
              fix "Write `ALIGN WITH T :: A, B, C`":
                !HPF$ ALIGN WITH T :: A, B, C
        "#]],
    );
}

#[test]
fn alignees_with_their_own_source_lists_in_attribute_form() {
    check(
        r#"    !HPF$ ALIGN WITH T(I) :: S(*,I), P(I)
"#,
        expect![[r#"
            ALIGN: mapping attributed
              line "!HPF$ ALIGN WITH T(I) :: S(*,I), P(I)"
              attr ALIGN "ALIGN WITH T(I)" align WITH T(I) target "T(I)"
              entity S(*, I) "S(*,I)"
              entity P(I) "P(I)"
            HPF030 "alignees with their own source lists; HPF 2.0 writes one ALIGN per array: `ALIGN S(*,I) WITH T(I)`, `ALIGN P(I) WITH T(I)`" at "ALIGN WITH T(I) :: S(*,I), P(I)"
              fix "Write one ALIGN per array":
                    !HPF$ ALIGN S(*,I) WITH T(I)
                    !HPF$ ALIGN P(I) WITH T(I)
        "#]],
    );
}

#[test]
fn distribute_without_a_format() {
    // The rank is the model's to know: the syntax keeps "no format".
    check(
        r#"//- fixed
chpf$ distribute A
!HPF$ DISTRIBUTE T ONTO P
"#,
        expect![[r#"
            distribute: mapping statement
              line "chpf$ distribute A"
              attr distribute "distribute A" distribute
              entity A
            DISTRIBUTE: mapping statement
              line "!HPF$ DISTRIBUTE T ONTO P"
              attr DISTRIBUTE "DISTRIBUTE T ONTO P" distribute onto "ONTO P" P
              entity T
        "#]],
    );
}
