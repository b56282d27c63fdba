//! Quick fixes never corrupt: every code action `analysis::ide` offers
//! (each "Realign" quick fix and "Align all arrays for this loop") is
//! applied to random HPF programs (free and fixed form, statement and `::`
//! forms, dummies, triplets, shorthand and missing ALIGNs, templates, both
//! cases, CRLF) and to every corpus file, and the result is checked:
//!
//! * the edits lie in the text, on character boundaries, without overlap,
//!   and everything outside them is byte for byte the old text;
//! * the new text has no syntax diagnostic (HPF001-HPF004) the old one did
//!   not have, and no more errors of any code;
//! * every directive the edits touch parses as valid HPF (not `Invalid`,
//!   no HPF001/HPF002 on it) and, in fixed form, fits the line length;
//! * a line the edits add never falls inside a continued statement;
//! * a quick fix removes the misalignment warning it targets.
//!
//! `HPF_FIX_PROGRAMS=N` sets the number of random programs (default 400).

use std::collections::BTreeMap;

use analysis::ide::{code_actions, Action, ActionKind, TextEdit};
use analysis::{FileAnalysis, ModelConfig};
use syntax::directive::DirectiveBody;
use syntax::{Code, Severity, SourceForm, TextRange};

/// A small deterministic generator (xorshift64*), so a failure names its seed.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// One random program: text and form.
fn program(rng: &mut Rng) -> (String, SourceForm) {
    let fixed = rng.chance(40);
    let lower = rng.chance(40);
    let case = |word: &str| if lower { word.to_ascii_lowercase() } else { word.to_ascii_uppercase() };
    let sentinel = if fixed { rng.pick(&["!HPF$ ", "CHPF$ ", "*HPF$ ", "chpf$ "]) } else { "!HPF$ " };
    let indent = if fixed { "      " } else { "  " };
    let n = rng.range(8, 24);
    // The home is larger than the others, so that their optimal alignments fit in it.
    let big = n + 8;
    let names = ["b", "c", "d"];
    let count = 1 + rng.below(3);
    let mut lines: Vec<String> = vec![format!("{indent}program p"), format!("{indent}integer i, j")];
    let sizes: Vec<i64> = (0..count).map(|_| if rng.chance(20) { big } else { n + rng.range(0, 2) }).collect();
    if rng.chance(50) {
        let mut decl = format!("{indent}real a({big})");
        for (idx, size) in sizes.iter().enumerate() {
            decl.push_str(&format!(", {}({size})", names[idx]));
            if idx + 1 < count && rng.chance(30) {
                // A continued declaration: `&` at the end (free) or a mark in column 6 (fixed).
                if fixed {
                    lines.push(decl);
                    decl = "     &  ".to_string();
                } else {
                    lines.push(format!("{decl} &"));
                    decl = format!("{indent}  ");
                }
            }
        }
        lines.push(decl);
    } else {
        lines.push(format!("{indent}real, dimension({big}) :: a"));
        for (idx, size) in sizes.iter().enumerate() {
            lines.push(format!("{indent}real {}({size})", names[idx]));
        }
    }
    if rng.chance(30) {
        lines.push(if fixed {
            "C     commentaire: déjà vu ✓".to_string()
        } else {
            "  ! commentaire : déjà vu ✓".to_string()
        });
    }
    let hpf = |body: String| format!("{sentinel}{body}");
    lines.push(hpf(format!("{} pr(4)", case("processors"))));
    let template = rng.chance(40);
    let extent = big + rng.range(0, 3);
    let home = if template {
        lines.push(hpf(format!("{} t({extent})", case("template"))));
        "t"
    } else {
        "a"
    };
    let home_size = if template { extent } else { big };
    let block = case("block");
    let onto = case("onto");
    lines.push(match rng.below(2) {
        0 => hpf(format!("{} {home}({block}) {onto} pr", case("distribute"))),
        _ => hpf(format!("{} ({block}) {onto} pr :: {home}", case("distribute"))),
    });
    let (with, align) = (case("with"), case("align"));
    if template {
        let offset = rng.range(0, extent - big);
        lines.push(hpf(format!("{align} a(I) {with} t(I+{offset})")));
    }
    // ALIGN styles for the others.
    let mut idx = 0;
    while idx < count {
        let name = names[idx];
        let size = sizes[idx];
        let offset = rng.range(0, home_size - size);
        let shifted = |var: &str| match offset {
            0 => var.to_string(),
            offset => format!("{var}+{offset}"),
        };
        match rng.below(8) {
            0 => lines.push(hpf(format!("{align} {name}(K) {with} {home}({})", shifted("K")))),
            1 => lines.push(hpf(format!("{align} ({}) {with} {home}({}) :: {name}", case("i"), shifted(&case("i"))))),
            2 => lines.push(hpf(format!("{align} {name}(:) {with} {home}({}:{})", 1 + offset, size + offset))),
            3 if size == home_size => lines.push(hpf(format!("{align} {name} {with} {home}"))),
            4 if idx + 1 < count && sizes[idx + 1] + offset <= home_size => {
                // One `::` list for two arrays.
                lines.push(hpf(format!("{align} (J) {with} {home}({}) :: {name}, {}", shifted("J"), names[idx + 1])));
                idx += 1;
            }
            5 => lines.push(hpf(format!("{} {name}({block}) {onto} pr", case("distribute")))),
            6 => lines.push(hpf(format!("{align} {name}(:) {with} *{home}({}:{})", 1 + offset, size + offset))),
            _ => {}
        }
        idx += 1;
    }
    // Some ALIGNs continued before WITH, some with a trailing comment.
    let mut decorated = Vec::new();
    for line in lines {
        let is_align = line.len() > 6 && line[6..].to_ascii_lowercase().starts_with("align");
        if !is_align {
            decorated.push(line);
            continue;
        }
        let line = if rng.chance(20) { format!("{line} ! était {}", rng.below(9)) } else { line };
        let with_at = line.find(&format!(" {with} "));
        match with_at {
            Some(at) if rng.chance(25) => {
                let (head, tail) = line.split_at(at);
                if fixed {
                    decorated.push(head.to_string());
                    decorated.push(format!("{}*{tail}", &sentinel[..5]));
                } else {
                    decorated.push(format!("{head} &"));
                    decorated.push(format!("{}&{tail}", &sentinel[..5]));
                }
            }
            _ => decorated.push(line),
        }
    }
    let mut lines = decorated;
    // Loops: a(i+3) from the others at small offsets, or the same as an array assignment.
    let size_of = |name: &str| sizes[names.iter().position(|it| *it == name).unwrap()];
    let reference = |name: &str, offset: i64| match offset {
        0 => format!("{name}(i)"),
        offset if offset > 0 => format!("{name}(i+{offset})"),
        offset => format!("{name}(i{offset})"),
    };
    for _ in 0..1 + rng.below(3) {
        let source = names[rng.below(count)];
        let other = names[rng.below(count)];
        let offset = rng.range(-2, 2);
        let lo = 1 + (-offset).max(0);
        let hi = n - offset.max(0);
        match rng.below(3) {
            0 => lines.push(format!("{indent}a({}:{}) = {source}({}:{})", lo + 3, hi + 3, lo + offset, hi + offset)),
            1 => {
                lines.push(format!("{indent}do i = {lo}, {hi}"));
                lines.push(format!("{indent}  a(i+3) = {} + a(i+3)", reference(source, offset)));
                lines.push(format!("{indent}end do"));
            }
            _ => {
                let other_offset = rng.range(-1, 1);
                lines.push(format!("{indent}do i = {}, {}", lo.max(2), hi.min(size_of(other) - 1)));
                lines.push(format!(
                    "{indent}  a(i+3) = {} * {}",
                    reference(source, offset),
                    reference(other, other_offset)
                ));
                lines.push(format!("{indent}end do"));
            }
        }
    }
    lines.push(format!("{indent}print *, a(1)"));
    lines.push(format!("{indent}end program p"));
    let newline = if rng.chance(20) { "\r\n" } else { "\n" };
    let mut text = lines.join(newline);
    text.push_str(newline);
    let form = if fixed { SourceForm::Fixed { line_length: 72 } } else { SourceForm::Free };
    (text, form)
}

/// Every action offered anywhere in the file: at each diagnostic, each loop and each line.
fn all_actions(analysis: &FileAnalysis, text: &str) -> Vec<Action> {
    let mut ranges: Vec<TextRange> = analysis.diagnostics.iter().map(|it| it.range).collect();
    ranges.extend(analysis.loops.iter().map(|it| it.range));
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        ranges.push(TextRange::empty(start));
        start += line.len();
    }
    let mut res: Vec<Action> = Vec::new();
    for range in ranges {
        for action in code_actions(analysis, text, range) {
            if !res.iter().any(|it| it.title == action.title && it.edits == action.edits) {
                res.push(action);
            }
        }
    }
    res
}

fn syntax_counts(analysis: &FileAnalysis) -> BTreeMap<&'static str, usize> {
    let mut res = BTreeMap::new();
    for diagnostic in &analysis.diagnostics {
        if matches!(
            diagnostic.code,
            Code::DirectiveSyntax | Code::UnknownDirective | Code::FortranSyntax | Code::TooDeep
        ) {
            *res.entry(diagnostic.code.as_str()).or_insert(0) += 1;
        }
    }
    res
}

fn errors(analysis: &FileAnalysis) -> usize {
    analysis.diagnostics.iter().filter(|it| it.severity == Severity::Error).count()
}

/// Where each edit's new text lies in the edited text.
fn new_ranges(edits: &[TextEdit]) -> Vec<TextRange> {
    let mut sorted: Vec<&TextEdit> = edits.iter().collect();
    sorted.sort_by_key(|it| (it.range.start, it.range.end));
    let mut shift = 0isize;
    let mut res = Vec::new();
    for edit in sorted {
        let start = (edit.range.start as isize + shift) as usize;
        res.push(TextRange::new(start, start + edit.new_text.len()));
        shift += edit.new_text.len() as isize - edit.range.len() as isize;
    }
    res
}

/// Checks one action; `Err` says what went wrong.
fn check_action(
    before: &FileAnalysis,
    text: &str,
    form: SourceForm,
    config: ModelConfig,
    action: &Action,
) -> Result<(), String> {
    let mut sorted: Vec<&TextEdit> = action.edits.iter().collect();
    sorted.sort_by_key(|it| (it.range.start, it.range.end));
    if sorted.is_empty() {
        return Err("no edits".into());
    }
    let mut at = 0;
    let mut fixed = String::new();
    for edit in &sorted {
        let range = edit.range;
        if range.start < at || range.end > text.len() || range.start > range.end {
            return Err(format!("edit {range:?} overlaps another or leaves the text"));
        }
        if !text.is_char_boundary(range.start) || !text.is_char_boundary(range.end) {
            return Err(format!("edit {range:?} splits a character"));
        }
        if range.start > 0
            && text.as_bytes()[range.start - 1] == b'\r'
            && text.as_bytes().get(range.start) == Some(&b'\n')
        {
            return Err(format!("edit {range:?} splits a CRLF"));
        }
        fixed.push_str(&text[at..range.start]);
        fixed.push_str(&edit.new_text);
        at = range.end;
    }
    fixed.push_str(&text[at..]);
    // Outside the edits, the text is the old one (checked independently of the construction).
    let news = new_ranges(&action.edits);
    let mut old_at = 0;
    let mut new_at = 0;
    for (edit, new) in sorted.iter().zip(&news) {
        if text[old_at..edit.range.start] != fixed[new_at..new.start] {
            return Err("text outside the edits changed".into());
        }
        old_at = edit.range.end;
        new_at = new.end;
    }
    if text[old_at..] != fixed[new_at..] {
        return Err("text after the edits changed".into());
    }
    if text.contains("\r\n") && fixed.replace("\r\n", "").contains('\n') {
        return Err("a bare LF in a CRLF file".into());
    }
    // A line the edits add never falls inside a continued statement.
    for new in &news {
        let inserted = &fixed[new.to_range()];
        if !inserted.contains('\n') {
            continue;
        }
        let line_start = fixed[..new.start].rfind('\n').map_or(0, |it| it + 1);
        let before = fixed[line_start..new.start].trim_end_matches('\r');
        let code = before.split('!').next().unwrap_or("").trim_end();
        if !form.is_fixed() && code.ends_with('&') && !before.trim_start().starts_with('!') {
            return Err(format!("a line is inserted after the continued line {before:?}"));
        }
        let next_start = if inserted.ends_with('\n') {
            new.end
        } else {
            fixed[new.end..].find('\n').map_or(fixed.len(), |it| new.end + it + 1)
        };
        let next = fixed[next_start..].lines().next().unwrap_or("");
        let continues = next.len() > 6
            && !matches!(next.as_bytes()[0], b'C' | b'c' | b'*' | b'!')
            && next.is_char_boundary(5)
            && !matches!(next.as_bytes()[5], b' ' | b'0');
        if form.is_fixed() && continues {
            return Err(format!("a line is inserted before the continuation line {next:?}"));
        }
    }
    let after = analysis::analyze(&fixed, form, config);
    let (old_syntax, new_syntax) = (syntax_counts(before), syntax_counts(&after));
    for (code, count) in &new_syntax {
        if old_syntax.get(code).copied().unwrap_or(0) < *count {
            return Err(format!("new {code} diagnostics: {:#?}", after.diagnostics));
        }
    }
    if errors(&after) > errors(before) {
        return Err(format!("more errors after: {:#?}", after.diagnostics));
    }
    // Every directive the edits touch is valid HPF.
    for directive in after.file.directives() {
        let touched = news.iter().any(|it| it.start <= directive.range.end && directive.range.start <= it.end);
        if !touched {
            continue;
        }
        if directive.body == DirectiveBody::Invalid {
            return Err(format!("the edited directive is invalid: {:?}", &fixed[directive.range.to_range()]));
        }
        if let Some(bad) = after.diagnostics.iter().find(|it| {
            matches!(it.code, Code::DirectiveSyntax | Code::UnknownDirective)
                && it.range.start <= directive.range.end
                && directive.range.start <= it.range.end
        }) {
            return Err(format!("the edited directive has {}: {}", bad.code.as_str(), bad.message));
        }
        if let SourceForm::Fixed { line_length } = form {
            for line in &directive.lines {
                if fixed[line.to_range()].chars().count() > line_length {
                    return Err(format!("the edited directive passes column {line_length}"));
                }
            }
        }
    }
    // A quick fix removes the warning it targets (moved by the edits before it).
    if action.kind == ActionKind::QuickFix {
        let target = action.fixes.ok_or("a quick fix without its diagnostic")?;
        let shift: isize = action
            .edits
            .iter()
            .filter(|it| it.range.end <= target.start)
            .map(|it| it.new_text.len() as isize - it.range.len() as isize)
            .sum();
        let start = (target.start as isize + shift) as usize;
        if after.diagnostics.iter().any(|it| it.code == Code::MisalignedTransfer && it.range.start == start) {
            return Err("the targeted misalignment warning remains".into());
        }
    }
    Ok(())
}

/// Checks every action offered on `text`; returns how many were checked.
fn check_file(name: &str, text: &str, form: SourceForm) -> usize {
    let config = ModelConfig { number_of_processors: Some(4) };
    let before = analysis::analyze(text, form, config);
    let actions = all_actions(&before, text);
    for action in &actions {
        if let Err(problem) = check_action(&before, text, form, config, action) {
            panic!(
                "{name}: the action `{}` corrupts the program: {problem}\nedits: {:?}\n--- program ---\n{text}",
                action.title, action.edits
            );
        }
    }
    actions.len()
}

#[test]
fn every_action_on_random_programs_keeps_the_program_valid() {
    let programs: u64 = std::env::var("HPF_FIX_PROGRAMS").ok().and_then(|it| it.parse().ok()).unwrap_or(400);
    let (mut quick, mut source) = (0, 0);
    for seed in 0..programs {
        let mut rng = Rng::new(seed);
        let (text, form) = program(&mut rng);
        let config = ModelConfig { number_of_processors: Some(4) };
        let before = analysis::analyze(&text, form, config);
        for action in all_actions(&before, &text) {
            match action.kind {
                ActionKind::QuickFix => quick += 1,
                ActionKind::Source => source += 1,
            }
        }
        check_file(&format!("seed {seed}"), &text, form);
    }
    eprintln!("{programs} random programs: {quick} quick fixes and {source} source actions checked");
    // The generator must reach both kinds of action often, or the test proves little.
    assert!(quick >= programs as usize / 4, "only {quick} quick fixes in {programs} programs");
    assert!(source >= programs as usize / 20, "only {source} source actions in {programs} programs");
}

#[test]
fn every_action_on_corpus_files_keeps_the_program_valid() {
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus");
    let mut files: Vec<std::path::PathBuf> = Vec::new();
    for dir in [corpus.clone(), corpus.join("errors")] {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_file() && syntax::FORTRAN_EXTENSIONS.iter().any(|it| path.extension().is_some_and(|e| e == *it))
            {
                files.push(path);
            }
        }
    }
    files.sort();
    assert!(files.len() >= 40, "the corpus is missing: {}", files.len());
    let mut checked = 0;
    for path in &files {
        let text = String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
        let form = SourceForm::from_path(path);
        checked += check_file(&path.display().to_string(), &text, form);
    }
    assert!(checked >= 5, "only {checked} actions in the corpus");
}

/// Found by the random programs (seed 27): the ALIGN was inserted after the
/// first line of a continued declaration, splitting the statement.
#[test]
fn an_inserted_align_follows_the_whole_continued_declaration() {
    let free = "program p\n  integer i\n  real a(25), b(18) &\n    , c(19)\n!HPF$ PROCESSORS pr(4)\n\
                !HPF$ DISTRIBUTE a(BLOCK) ONTO pr\n!HPF$ DISTRIBUTE b(BLOCK) ONTO pr\n  do i = 2, 17\n\
                \x20   a(i+3) = b(i-1) + a(i+3)\n  end do\nend program p\n";
    let fixed = "      program p\n      integer i\n      real a(25), b(18)\n     &  , c(19)\n\
                 CHPF$ PROCESSORS pr(4)\nCHPF$ DISTRIBUTE a(BLOCK) ONTO pr\nCHPF$ DISTRIBUTE b(BLOCK) ONTO pr\n\
                 \x20     do i = 2, 17\n        a(i+3) = b(i-1) + a(i+3)\n      end do\n      end program p\n";
    for (text, form, continuation) in
        [(free, SourceForm::Free, "    , c(19)\n"), (fixed, SourceForm::Fixed { line_length: 72 }, "     &  , c(19)\n")]
    {
        let analysis = analysis::analyze(text, form, ModelConfig { number_of_processors: Some(4) });
        let actions = all_actions(&analysis, text);
        let fix = actions.iter().find(|it| it.kind == ActionKind::QuickFix).expect("a quick fix");
        let mut fixed_text = text.to_string();
        let mut edits = fix.edits.clone();
        edits.sort_by_key(|it| std::cmp::Reverse(it.range.start));
        for edit in edits {
            fixed_text.replace_range(edit.range.to_range(), &edit.new_text);
        }
        let align = fixed_text.find("HPF$ ALIGN b(I) WITH a(I+4)").expect("the new ALIGN");
        assert!(fixed_text.find(continuation).unwrap() < align, "{fixed_text}");
        check_file("continued declaration", text, form);
    }
}
