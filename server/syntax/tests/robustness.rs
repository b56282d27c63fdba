//! Parsing never fails: every prefix of every corpus file, random bytes and
//! strings, pathologically deep nesting, a 1 MB line and 50,000 directives
//! all give a `SourceFile` whose ranges lie within the text on char
//! boundaries. The deep cases run on a thread with a 2 MiB stack, the
//! default of test threads, to prove that no recursion depends on the 8 MiB
//! main-thread stack.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use syntax::directive::{AttrKind, DirectiveBody};
use syntax::{Code, SourceFile, SourceForm, TextRange, FORTRAN_EXTENSIONS};

/// The stack of a test thread (and of any thread `std` spawns by default).
const TEST_THREAD_STACK: usize = 2 * 1024 * 1024;

/// Parses `text` and checks the invariants every parse must keep; panics
/// with `what` and the failure when the parse panics or an invariant breaks.
fn parse_and_check(text: &str, form: SourceForm, what: &dyn Fn() -> String) -> SourceFile {
    let file = match catch_unwind(AssertUnwindSafe(|| syntax::parse(text, form))) {
        Ok(file) => file,
        Err(_) => panic!("the parse panicked on {}", what()),
    };
    if let Err(error) = check_invariants(text, &file) {
        panic!("{error} in {}", what());
    }
    file
}

fn check_range(text: &str, range: TextRange, what: &str) -> Result<(), String> {
    if range.start > range.end || range.end > text.len() {
        return Err(format!("{what} {range:?} is outside the text (len {})", text.len()));
    }
    if !text.is_char_boundary(range.start) || !text.is_char_boundary(range.end) {
        return Err(format!("{what} {range:?} is not on char boundaries"));
    }
    Ok(())
}

fn check_name(text: &str, name: &syntax::Name, what: &str) -> Result<(), String> {
    check_range(text, name.range, what)?;
    // Fixed form `SU M` is the name `SUM`: blanks mean nothing there.
    let slice: String = text[name.range.to_range()].chars().filter(|it| !it.is_whitespace()).collect();
    if slice != name.text {
        return Err(format!("{what} `{}` slices `{}`", name.text, &text[name.range.to_range()]));
    }
    Ok(())
}

fn check_invariants(text: &str, file: &SourceFile) -> Result<(), String> {
    for diagnostic in &file.diagnostics {
        check_range(text, diagnostic.range, &format!("diagnostic {:?}", diagnostic.message))?;
    }
    for comment in &file.comments {
        check_range(text, *comment, "comment")?;
    }
    for unit in file.units.iter().flat_map(|it| it.all_units()) {
        check_range(text, unit.range, "unit")?;
        check_range(text, unit.header, "unit header")?;
        for name in unit.name.iter().chain(&unit.dummies).chain(&unit.uses) {
            check_name(text, name, "unit name, dummy or module")?;
        }
        for decl in &unit.decls {
            check_range(text, decl.range, "declaration")?;
            for entity in &decl.entities {
                check_name(text, &entity.name, "declared entity")?;
                check_range(text, entity.range, "declared entity range")?;
            }
        }
        let mut stmts: Vec<&syntax::Stmt> = unit.body.iter().collect();
        while let Some(stmt) = stmts.pop() {
            check_range(text, stmt.range, "statement")?;
            check_range(text, stmt.header, "statement header")?;
            stmts.extend(stmt.children());
        }
    }
    for directive in file.directives() {
        check_range(text, directive.range, "directive")?;
        for line in &directive.lines {
            check_range(text, *line, "directive line")?;
        }
        if !directive.keyword.text.is_empty() {
            check_name(text, &directive.keyword, "directive keyword")?;
        }
        let DirectiveBody::Mapping(mapping) = &directive.body else { continue };
        for attr in &mapping.attrs {
            check_range(text, attr.range, "attribute")?;
            check_name(text, &attr.keyword, "attribute keyword")?;
            if let AttrKind::Align(spec) | AttrKind::Realign(spec) = &attr.kind {
                check_name(text, &spec.target, "align target")?;
                check_range(text, spec.target_range, "align target range")?;
            }
        }
        for entity in &mapping.entities {
            check_name(text, &entity.name, "entity")?;
            check_range(text, entity.range, "entity range")?;
        }
    }
    Ok(())
}

fn corpus_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus");
    let mut files = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|error| panic!("{}: {error}", dir.display())) {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let extension = path.extension().and_then(|it| it.to_str()).unwrap_or("").to_ascii_lowercase();
            if FORTRAN_EXTENSIONS.contains(&extension.as_str()) {
                files.push(path);
            }
        }
    }
    files.sort();
    assert!(files.len() >= 40, "the corpus has its Fortran files: {files:?}");
    files
}

#[test]
fn every_prefix_of_the_corpus_parses() {
    let mut files: Vec<(PathBuf, String)> = corpus_files()
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
            (path, text)
        })
        .collect();
    files.sort_by_key(|(_, text)| text.len());
    for (idx, (path, text)) in files.iter().enumerate() {
        let form = SourceForm::from_path(path);
        let boundaries: Vec<usize> = (0..=text.len()).filter(|&it| text.is_char_boundary(it)).collect();
        // Every char boundary of the three shortest files, about 100 evenly
        // spaced ones of the others, and line boundaries (before and after
        // the newline): every one of files up to 40 lines, about 40 evenly
        // spaced ones of longer files. Each prefix is parsed whole: every
        // line boundary of the 192 files made this the workspace's longest
        // test (4 minutes in CI); this is 3.7 times less text to parse.
        let step = if idx < 3 { 1 } else { (boundaries.len() / 100).max(1) };
        let mut offsets: Vec<usize> = boundaries.iter().copied().step_by(step).collect();
        let newlines: Vec<usize> = text.match_indices('\n').map(|(it, _)| it).collect();
        let line_step = (newlines.len() / 40).max(1);
        offsets.extend(newlines.iter().step_by(line_step).flat_map(|&it| [it, it + 1]));
        offsets.push(text.len());
        offsets.sort_unstable();
        offsets.dedup();
        for offset in offsets {
            let prefix = &text[..offset];
            parse_and_check(prefix, form, &|| format!("{} cut at byte {offset}", path.display()));
        }
        // The whole file in the other form too: wrong forms happen in editors.
        let other = if form.is_fixed() { SourceForm::Free } else { SourceForm::FIXED };
        parse_and_check(text, other, &|| format!("{} parsed as {other:?}", path.display()));
    }
}

/// Fortran-and-HPF-flavoured pieces, so random strings reach the directive
/// parser and the fixed-form rules instead of failing at the first byte.
#[rustfmt::skip]
const PIECES: &[&str] = &[
    "!HPF$ ", "CHPF$ ", "*hpf$", "!hpf$+", "chpf$x", "!$omp ", "     &", "\n", "\r\n", "\t", " ", "&", "!", "C",
    "*", "ALIGN", "DISTRIBUTE", "REDISTRIBUTE", "REALIGN", "TEMPLATE", "PROCESSORS", "DIMENSION", "DYNAMIC",
    "INHERIT", "INDEPENDENT", "NEW", "REDUCTION", "ON", "HOME", "RESIDENT", "BEGIN", "END", "SHADOW", "SEQUENCE",
    "WITH", "ONTO", "BLOCK", "CYCLIC", "GEN_BLOCK", "A", "T", "I", "J", "(", ")", ",", ":", "::", "+", "-", "**",
    "/", "=", "1", "42", "99999999999999999999", "é", "日本", "'", "\"", "PROGRAM P", "END PROGRAM",
    "SUBROUTINE S(X)", "DO I = 1, N", "END DO", "REAL A(10)", "X = A(I+1)", "IF (X) THEN", "FORALL (I=1:N)",
];

fn check_both_forms(text: &str) {
    for form in [
        SourceForm::Free,
        SourceForm::FIXED,
        SourceForm::Fixed { line_length: 132 },
        SourceForm::Fixed { line_length: 4 },
    ] {
        parse_and_check(text, form, &|| format!("{text:?} in {form:?}"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_parse(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        check_both_forms(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn random_strings_parse(text in "\\PC{0,300}") {
        check_both_forms(&text);
    }

    #[test]
    fn random_directive_soup_parses(pieces in proptest::collection::vec(proptest::sample::select(PIECES), 0..120)) {
        check_both_forms(&pieces.concat());
    }
}

/// Runs `f` on a thread with the stack of a test thread.
fn on_test_stack(name: &str, f: impl FnOnce() + Send + 'static) {
    let handle = std::thread::Builder::new()
        .name(name.to_string())
        .stack_size(TEST_THREAD_STACK)
        .spawn(f)
        .expect("a thread starts");
    if handle.join().is_err() {
        panic!("{name} panicked (or overflowed its stack)");
    }
}

fn has_code(file: &SourceFile, code: Code) -> bool {
    file.diagnostics.iter().any(|it| it.code == code)
}

const DEEP: usize = 100_000;

#[test]
fn deep_parentheses_in_a_statement() {
    on_test_stack("deep parentheses", || {
        let text = format!("program p\nx = {}1{}\nend program p\n", "(".repeat(DEEP), ")".repeat(DEEP));
        let file = parse_and_check(&text, SourceForm::Free, &|| "100,000-deep parentheses".to_string());
        assert!(has_code(&file, Code::TooDeep), "{:?}", file.diagnostics);
    });
}

#[test]
fn deep_expressions_in_a_directive() {
    on_test_stack("deep directive expressions", || {
        let cases = [
            ("parentheses", format!("!HPF$ PROCESSORS P({}4{})\n", "(".repeat(DEEP), ")".repeat(DEEP))),
            ("references", format!("!HPF$ TEMPLATE T({}1{})\n", "A(".repeat(DEEP), ")".repeat(DEEP))),
            ("signs", format!("!HPF$ TEMPLATE T(2*{}1)\n", "-".repeat(DEEP))),
            ("powers", format!("!HPF$ TEMPLATE T({}2)\n", "2**".repeat(DEEP))),
            ("sums", format!("!HPF$ TEMPLATE T({}1)\n", "1+".repeat(DEEP))),
            ("products", format!("!HPF$ ALIGN A(I) WITH T({}I)\n", "2*".repeat(DEEP))),
        ];
        for (what, text) in cases {
            let file = parse_and_check(&text, SourceForm::Free, &|| format!("100,000-deep {what} in a directive"));
            let directives = file.directives();
            assert_eq!(directives.len(), 1, "{what}");
            assert!(matches!(directives[0].body, DirectiveBody::Invalid), "{what}: too deep to keep");
            assert!(
                file.diagnostics.iter().any(|it| it.message.contains("nested too deeply")),
                "{what}: {:?}",
                file.diagnostics
            );
        }
    });
}

#[test]
fn deep_constructs_and_continuations() {
    on_test_stack("deep constructs", || {
        let depth = 5_000;
        let innermost = format!("x = {}1{}\n", "(".repeat(DEEP), ")".repeat(DEEP));
        let constructs = [
            ("do i = 1, 2\n", "end do\n"),
            ("do while (x > 0)\n", "end do\n"),
            ("if (x > 0) then\n", "else\ny = 2\nend if\n"),
            ("forall (i = 1:2)\n", "end forall\n"),
            ("where (a > 0)\n", "elsewhere\na = 1\nend where\n"),
            ("select case (k)\ncase (1)\n", "end select\n"),
            ("block\n", "end block\n"),
            ("associate (z => x)\n", "end associate\n"),
        ];
        for (open, close) in constructs {
            let text = format!("program p\n{}{innermost}{}end program p\n", open.repeat(depth), close.repeat(depth));
            let file = parse_and_check(&text, SourceForm::Free, &|| format!("5,000 nested {open:?}"));
            assert!(has_code(&file, Code::TooDeep), "{open:?}: {:?}", file.diagnostics);
        }
        // Nested program units: a subroutine containing a subroutine ...
        let mut text = String::new();
        for idx in 0..depth {
            text.push_str(&format!("subroutine s{idx}\ncontains\n"));
        }
        text.push_str("subroutine inner\nx = 1\nend subroutine inner\n");
        for idx in (0..depth).rev() {
            text.push_str(&format!("end subroutine s{idx}\n"));
        }
        parse_and_check(&text, SourceForm::Free, &|| "5,000 nested subroutines".to_string());
    });
}

#[test]
fn one_megabyte_lines() {
    on_test_stack("1 MB lines", || {
        let megabyte = 1 << 20;
        let sum = "1+".repeat(megabyte / 2);
        let cases = [
            ("a sum", format!("program p\nx = {sum}1\nend program p\n"), SourceForm::Free),
            ("a directive", format!("!HPF$ TEMPLATE T({sum}1)\n"), SourceForm::Free),
            ("a comment", format!("! {}\n", "é".repeat(megabyte / 2)), SourceForm::Free),
            ("a name", format!("x{} = 1\n", "y".repeat(megabyte)), SourceForm::Free),
            ("a fixed-form line", format!("      X = {sum}1\n"), SourceForm::FIXED),
            ("a fixed-form directive", format!("CHPF$ TEMPLATE T({sum}1)\n"), SourceForm::FIXED),
        ];
        for (what, text, form) in cases {
            parse_and_check(&text, form, &|| format!("a 1 MB line: {what}"));
        }
    });
}

#[test]
fn fifty_thousand_directives() {
    on_test_stack("50,000 directives", || {
        let count = 50_000;
        let mut text = String::from("program p\n  real t(10)\n!HPF$ TEMPLATE T(10)\n");
        for idx in 0..count {
            text.push_str(&format!("!HPF$ ALIGN A{idx}(I) WITH T(I)\n"));
        }
        text.push_str("end program p\n");
        let file = parse_and_check(&text, SourceForm::Free, &|| "50,000 directives".to_string());
        assert_eq!(file.directives().len(), count + 1);
        assert!(file.diagnostics.is_empty(), "{:?}", &file.diagnostics[..file.diagnostics.len().min(3)]);
    });
}

#[test]
fn one_directive_continued_over_fifty_thousand_lines() {
    on_test_stack("50,000 continuation lines", || {
        let count = 50_000;
        let mut free = String::from("!HPF$ DYNAMIC A0");
        let mut fixed = String::from("CHPF$ DYNAMIC A0");
        for idx in 1..count {
            free.push_str(&format!(", &\n!HPF$ A{idx}"));
            fixed.push_str(&format!(",\nCHPF$+A{idx}"));
        }
        for (text, form) in [(free, SourceForm::Free), (fixed, SourceForm::FIXED)] {
            let file = parse_and_check(&text, form, &|| format!("50,000 continuation lines in {form:?}"));
            let directives = file.directives();
            assert_eq!(directives.len(), 1);
            let DirectiveBody::Mapping(mapping) = &directives[0].body else {
                panic!("not a mapping: {:?}", file.diagnostics)
            };
            assert_eq!(mapping.entities.len(), count);
        }
    });
}

#[test]
fn multibyte_text_in_directive_positions() {
    // A non-ASCII character where the directive reader slices by bytes:
    // in column 6, right after the sentinel, at the column limit.
    let at_the_limit = format!("!HPF$ TEMPLATE T(8){}日本\n", " ".repeat(51));
    let cases = [
        ("!HPF$é ALIGN A(I) WITH T(I)\n", SourceForm::FIXED),
        ("CHPF$日 TEMPLATE T(8)\n", SourceForm::FIXED),
        ("!HPF$ TEMPLATE T(8)\n!HPF$é  ONTO P\n", SourceForm::FIXED),
        (at_the_limit.as_str(), SourceForm::FIXED),
        ("!HPF$é\n", SourceForm::Free),
        ("!HPF$ ALIGN A(I) WITH T(I) &é\n!HPF$&é\n", SourceForm::Free),
        ("!HPF$ ALIGN é(I) WITH T(I)\n", SourceForm::Free),
    ];
    for (text, form) in cases {
        parse_and_check(text, form, &|| format!("{text:?} in {form:?}"));
    }
}

#[test]
fn files_over_the_size_limit_get_one_diagnostic() {
    let line = "      x = 1\n";
    let text = line.repeat(syntax::MAX_ANALYSED_BYTES / line.len() + 1);
    for form in [SourceForm::Free, SourceForm::FIXED] {
        let file = parse_and_check(&text, form, &|| format!("a file over the limit in {form:?}"));
        assert!(file.units.is_empty() && file.comments.is_empty());
        assert_eq!(file.diagnostics.len(), 1, "{:?}", file.diagnostics);
        assert_eq!(file.diagnostics[0].code, Code::TooLarge);
        assert_eq!(file.diagnostics[0].range, TextRange::new(0, line.len() - 1));
    }
}
