//! What an edit of a host's part up to CONTAINS changed that its
//! procedures can see, by names: a procedure that references none of them
//! keeps its analysis (the language server moves it onto the new host
//! text). The chunks of a document are found by [`crate::chunks`].
//!
//! A cheap statement scan of the two host texts, not an analysis. Each
//! statement declares some names and mentions others. A type declaration or
//! an HPF mapping directive (ALIGN, DISTRIBUTE, TEMPLATE, DYNAMIC, INHERIT)
//! declares its entities; a statement the scan does not read declares every
//! name it mentions. The changed names are those the statements between
//! the common first and last statements of the two texts declare, and then,
//! again and again, those of any statement that mentions a changed name (an array aligned with a template whose
//! distribution changed, arrays sized by a changed parameter). Comments and
//! blank lines are no statements: editing them changes nothing, nor does
//! editing a statement's label. Lines are split into statements as the
//! chunker splits them ([`crate::statements`]).
//!
//! A derived type definition is one statement that declares the type's
//! name; an interface body one that declares its procedure's name and the
//! generic name of its interface block.
//!
//! Everything changes (every procedure is analysed again) when a statement
//! the scan does not read is added or removed (USE, IMPLICIT, executable
//! statements, an operator's interface, ...), when a PROCESSORS
//! directive changes (a mapping without ONTO uses the processors the host
//! declares, by no name), and for fixed form, where blanks do not separate
//! names.

use std::collections::HashSet;

use crate::statements::{line_statements, Carried};
use crate::SourceForm;

/// One statement of a host's specification part.
#[derive(Debug, PartialEq, Eq, Hash, Clone)]
struct Statement {
    /// Its text without comments, blanks trimmed, continuation lines joined.
    text: String,
    /// What a change of it changes: the names it declares, or everything.
    declares: Declares,
    /// The names it mentions (lower case).
    mentions: Vec<String>,
}

#[derive(Debug, PartialEq, Eq, Hash, Clone)]
enum Declares {
    Names(Vec<String>),
    Everything,
}

/// What changed between two host texts: `None` when everything may have
/// (see the module header), else the names (lower case) whose meaning may
/// differ for a procedure.
pub fn changed_names(old: &str, new: &str, form: SourceForm) -> Option<HashSet<String>> {
    if !matches!(form, SourceForm::Free) {
        return None;
    }
    let (old, new) = (statements(old), statements(new));
    // The statements between the common first and last ones changed (in
    // order: a statement moved is a change, as order may matter).
    let same = |(a, b): (&Statement, &Statement)| a.text == b.text;
    let prefix = old.iter().zip(&new).take_while(|it| same(*it)).count();
    let max_suffix = old.len().min(new.len()) - prefix;
    let suffix = old.iter().rev().zip(new.iter().rev()).take(max_suffix).take_while(|it| same(*it)).count();
    let mut changed = HashSet::new();
    for statement in old[prefix..old.len() - suffix].iter().chain(&new[prefix..new.len() - suffix]) {
        match &statement.declares {
            Declares::Names(names) => changed.extend(names.iter().cloned()),
            Declares::Everything => return None,
        }
    }
    if changed.is_empty() {
        return Some(changed);
    }
    // What depends on a changed name changes too, in either text.
    loop {
        let before = changed.len();
        for statement in old.iter().chain(&new) {
            if statement.mentions.iter().any(|it| changed.contains(it)) {
                match &statement.declares {
                    Declares::Names(names) => changed.extend(names.iter().cloned()),
                    Declares::Everything => changed.extend(statement.mentions.iter().cloned()),
                }
            }
        }
        if changed.len() == before {
            return Some(changed);
        }
    }
}

/// The names (lower case) of a text: every word that may name something,
/// keywords, comments and strings included (more is safe).
pub fn names(text: &str) -> HashSet<Box<str>> {
    words(text).map(|it| it.to_ascii_lowercase().into_boxed_str()).collect()
}

fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
        .filter(|it| it.starts_with(|ch: char| ch.is_ascii_alphabetic()))
}

fn lower_words(text: &str) -> Vec<String> {
    let mut res: Vec<String> = words(text).map(|it| it.to_ascii_lowercase()).collect();
    res.sort();
    res.dedup();
    res
}

/// The statements of a free-form host text (its header to its CONTAINS).
fn statements(text: &str) -> Vec<Statement> {
    let mut res = Vec::new();
    // A derived type definition, or an interface body, being read: one statement.
    let mut block: Option<Block> = None;
    // Inside an interface block: its generic name (empty if none), or `None`
    // for an operator or assignment, which no name tells who uses.
    let mut interface: Option<Option<String>> = None;
    for Piece { text, directive, mixed } in pieces(text) {
        let lower = text.to_ascii_lowercase();
        let compact: String = lower.chars().filter(|it| !it.is_whitespace()).collect();
        if let Some(open) = block.as_mut() {
            open.texts.push(text);
            let ends = match open.kind {
                BlockKind::Type => compact.starts_with("endtype"),
                BlockKind::Body => {
                    compact == "end" || compact.starts_with("endsubroutine") || compact.starts_with("endfunction")
                }
            };
            if ends && !directive {
                let open = block.take().expect("open");
                let mut names = open.names;
                if let Some(Some(generic)) = &interface {
                    names.push(generic.clone());
                }
                let everything = matches!(interface, Some(None)) && open.kind == BlockKind::Body;
                res.push(statement(open.texts.join("\n"), if everything { None } else { Some(names) }));
            }
            continue;
        }
        if mixed {
            res.push(statement(text, None));
            continue;
        }
        if directive {
            let declares = directive_declares(&lower);
            res.push(Statement { mentions: mentions(&text, &declares), text: format!("!HPF$ {text}"), declares });
            continue;
        }
        if let Some(generic) = interface.clone() {
            if compact.starts_with("endinterface") {
                interface = None;
                res.push(statement(text, generic.map(|it| vec![it])));
                continue;
            }
            if let Some(name) = procedure_name(&lower) {
                block = Some(Block { kind: BlockKind::Body, texts: vec![text], names: vec![name] });
                continue;
            }
            // `MODULE PROCEDURE a, b`, `PROCEDURE a`: the generic and what it names.
            let named = lower_words(&lower).into_iter().filter(|it| it != "module" && it != "procedure");
            let names = generic.map(|generic| std::iter::once(generic).chain(named).collect());
            res.push(statement(text, names));
            continue;
        }
        let words: Vec<&str> = lower.split_whitespace().collect();
        if matches!(words.first(), Some(&"interface")) || words.starts_with(&["abstract", "interface"]) {
            let generic = match words.as_slice() {
                ["interface"] | ["abstract", "interface"] => Some(String::new()),
                ["interface", name] if name.bytes().all(|it| it.is_ascii_alphanumeric() || it == b'_') => {
                    Some(name.to_string())
                }
                _ => None,
            };
            res.push(statement(text, generic.clone().map(|it| vec![it])));
            interface = Some(generic);
            continue;
        }
        if opens_type(&lower) {
            let name = type_name(&lower);
            block = Some(Block { kind: BlockKind::Type, texts: vec![text], names: name.into_iter().collect() });
            continue;
        }
        let declares = declaration_declares(&lower);
        res.push(Statement { mentions: mentions(&text, &declares), text, declares });
    }
    // A block or interface not closed: not read.
    if let Some(open) = block {
        res.push(statement(open.texts.join("\n"), None));
    }
    res
}

/// A statement that declares `names` (everything if `None`).
fn statement(text: String, names: Option<Vec<String>>) -> Statement {
    let declares = match names {
        Some(names) if !names.is_empty() && names.iter().all(|it| !it.is_empty()) => Declares::Names(names),
        Some(names) if names.iter().any(|it| !it.is_empty()) => {
            Declares::Names(names.into_iter().filter(|it| !it.is_empty()).collect())
        }
        // No name: an unnamed interface line, declaring nothing of its own.
        Some(_) => Declares::Names(Vec::new()),
        None => Declares::Everything,
    };
    Statement { mentions: mentions(&text, &declares), text, declares }
}

/// Its declarations depend on what else it mentions (`a(n)` on `n`).
fn mentions(text: &str, declares: &Declares) -> Vec<String> {
    let mut mentions = lower_words(text);
    if let Declares::Names(names) = declares {
        mentions.retain(|it| !names.contains(it));
    }
    mentions
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum BlockKind {
    Type,
    Body,
}

struct Block {
    kind: BlockKind,
    texts: Vec<String>,
    /// The type's name, or the interface body's procedure's.
    names: Vec<String>,
}

/// One statement of the text: continuation lines joined, comments gone.
struct Piece {
    text: String,
    directive: bool,
    /// A directive continued by a statement, or the reverse: not read.
    mixed: bool,
}

fn pieces(text: &str) -> Vec<Piece> {
    let mut res = Vec::new();
    // The statement being continued, and whether it is a directive.
    let mut pending: Option<(String, bool)> = None;
    let mut continues_mixed = false;
    // What the last statement line carried (a continuation, an open quote).
    let mut carried = Carried::default();
    for line in text.lines() {
        let trimmed = line.trim();
        let (body, directive) = match directive_body(trimmed) {
            Some(body) => (body, true),
            None if trimmed.starts_with('!') => {
                // Another sentinel (`!$OMP`, `!DIR$`): read as a statement of its own.
                if is_sentinel(trimmed) {
                    (trimmed, false)
                } else {
                    continue;
                }
            }
            None => (trimmed, false),
        };
        // A directive's text is read whole; a statement line's are its statements.
        let mut texts: Vec<&str> = Vec::new();
        let continues = if directive {
            let body = body.trim();
            let (body, continues) = match body.strip_suffix('&') {
                Some(it) => (it.trim_end(), true),
                None => (body, false),
            };
            let body = body.strip_prefix('&').unwrap_or(body).trim_start();
            texts.extend((!body.is_empty()).then_some(body));
            carried = Carried::default();
            continues
        } else {
            let was =
                if pending.as_ref().is_some_and(|(_, directive)| !directive) { carried } else { Carried::default() };
            let was = Carried { continued: pending.is_some(), ..was };
            let mut statements = line_statements(body, was);
            texts.extend(statements.by_ref().map(|it| it.text));
            carried = statements.carried();
            carried.continued
        };
        if texts.is_empty() && !continues {
            continue;
        }
        let (mut joined, mixed) = match pending.take() {
            Some((joined, was_directive)) => (joined, was_directive != directive),
            None => (String::new(), false),
        };
        let mixed = std::mem::take(&mut continues_mixed) || mixed;
        let last = texts.len().saturating_sub(1);
        for (idx, text) in texts.into_iter().enumerate() {
            joined.push_str(text);
            if idx == last && continues {
                break;
            }
            let text = std::mem::take(&mut joined).trim().to_string();
            if !text.is_empty() {
                res.push(Piece { text, directive, mixed });
            }
        }
        if continues {
            joined.push(' ');
            pending = Some((joined, directive));
            continues_mixed = mixed;
        }
    }
    if let Some((text, directive)) = pending {
        res.push(Piece { text: text.trim().to_string(), directive, mixed: true });
    }
    res
}

/// The name of the procedure a `[prefixes] SUBROUTINE name` or `... FUNCTION name` statement begins.
fn procedure_name(lower: &str) -> Option<String> {
    let words: Vec<&str> =
        lower.split(|ch: char| ch.is_whitespace() || ch == '(').filter(|it| !it.is_empty()).collect();
    let at = words.iter().position(|it| *it == "subroutine" || *it == "function")?;
    let name = words.get(at + 1)?;
    name.starts_with(|ch: char| ch.is_ascii_alphabetic()).then(|| name.to_string())
}

/// The name a derived type definition defines.
fn type_name(lower: &str) -> Option<String> {
    let after = match lower.split_once("::") {
        Some((_, after)) => after,
        None => lower.trim_start().strip_prefix("type")?,
    };
    words(after).next().map(str::to_string)
}

/// The text of an HPF directive line after its sentinel.
fn directive_body(line: &str) -> Option<&str> {
    let head = line.get(..5)?;
    head.eq_ignore_ascii_case("!hpf$").then(|| &line[5..])
}

/// `!` and letters then `$`: a directive of some other kind.
fn is_sentinel(line: &str) -> bool {
    let rest = &line[1..];
    let letters = rest.bytes().take_while(u8::is_ascii_alphabetic).count();
    rest.as_bytes().get(letters) == Some(&b'$')
}

/// A derived type definition (`type name`, `type, ... :: name`) begins.
fn opens_type(lower: &str) -> bool {
    let words: Vec<&str> = lower.split_whitespace().collect();
    match words.as_slice() {
        [first, second, ..] if *first == "type" => !second.starts_with('(') && *second != "is",
        [first, ..] => first.starts_with("type,") || first.starts_with("type::"),
        [] => false,
    }
}

const TYPES: [&str; 8] = ["integer", "real", "doubleprecision", "complex", "logical", "character", "type(", "class("];

/// A type declaration's entities; any other statement declares everything.
fn declaration_declares(lower: &str) -> Declares {
    let compact: String = lower.chars().filter(|it| !it.is_whitespace()).collect();
    if !TYPES.iter().any(|it| compact.starts_with(it)) {
        return Declares::Everything;
    }
    // A unit header (`integer function f`) is no declaration.
    if compact.contains("function") && !lower.contains("::") {
        return Declares::Everything;
    }
    let entities = match lower.split_once("::") {
        Some((_, entities)) => entities,
        None => {
            // `REAL*8 A(10), B`: the entities after the type and its kind.
            let after_type = TYPES
                .iter()
                .find_map(|it| {
                    let word = it.trim_end_matches('(');
                    lower.trim_start().strip_prefix(word).or_else(|| {
                        (word == "doubleprecision")
                            .then(|| lower.trim_start().strip_prefix("double"))
                            .flatten()
                            .and_then(|it| it.trim_start().strip_prefix("precision"))
                    })
                })
                .unwrap_or("");
            skip_kind(after_type.trim_start())
        }
    };
    entity_names(entities)
}

/// What a directive declares: ALIGN, DISTRIBUTE, TEMPLATE, DYNAMIC and
/// INHERIT their entities; PROCESSORS and any other everything.
fn directive_declares(lower: &str) -> Declares {
    let lower = lower.trim();
    let keyword: String = lower.chars().take_while(|it| it.is_ascii_alphabetic()).collect();
    let rest = &lower[keyword.len()..];
    match keyword.as_str() {
        "align" | "distribute" | "template" | "dynamic" | "inherit" => {}
        _ => return Declares::Everything,
    }
    if let Some((attributes, entities)) = rest.split_once("::") {
        // A combined directive may declare processors too (`TEMPLATE, ... PROCESSORS`).
        if attributes.contains("processors") {
            return Declares::Everything;
        }
        return entity_names(entities);
    }
    match keyword.as_str() {
        "align" | "distribute" => match words(rest).next() {
            Some(name) if !rest.trim_start().starts_with('(') => Declares::Names(vec![name.to_ascii_lowercase()]),
            _ => Declares::Everything,
        },
        _ => entity_names(rest),
    }
}

/// `a(n), b = 1, c`: the first name of each item at the top level.
fn entity_names(list: &str) -> Declares {
    let mut names = Vec::new();
    let mut depth = 0i32;
    let mut at_item = true;
    let mut start = None;
    for (idx, ch) in list.char_indices() {
        match ch {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => at_item = true,
            _ => {}
        }
        let word_char = ch.is_ascii_alphanumeric() || ch == '_';
        match (start, word_char) {
            (None, true) if at_item && depth == 0 && ch.is_ascii_alphabetic() => start = Some(idx),
            (Some(from), false) => {
                names.push(list[from..idx].to_ascii_lowercase());
                start = None;
                at_item = ch == ',' && depth == 0;
            }
            _ => {}
        }
    }
    if let Some(from) = start {
        names.push(list[from..].to_ascii_lowercase());
    }
    if names.is_empty() {
        Declares::Everything
    } else {
        Declares::Names(names)
    }
}

/// Skips a kind or length selector: `(kind=8)`, `*8`, `*(*)`.
fn skip_kind(text: &str) -> &str {
    let text = match text.strip_prefix('*') {
        Some(it) => it.trim_start().trim_start_matches(|ch: char| ch.is_ascii_digit()),
        None => text,
    };
    let text = text.trim_start();
    if !text.starts_with('(') {
        return text;
    }
    let mut depth = 0;
    for (idx, ch) in text.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return &text[idx + 1..];
                }
            }
            _ => {}
        }
    }
    ""
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOST: &str = "module grid\n  integer, parameter :: n = 16\n  integer, parameter :: m = 4\n!HPF$ PROCESSORS p(4)\n!HPF$ TEMPLATE t(n)\n!HPF$ DISTRIBUTE t(BLOCK) ONTO p\n  real :: a(n), b(n)\n  real :: c(m)\n!HPF$ ALIGN a(i) WITH t(i)\n!HPF$ ALIGN b(i) WITH t(i)\ncontains\n";

    fn changed(from: &str, to: &str) -> Option<Vec<String>> {
        let new = HOST.replacen(from, to, 1);
        assert_ne!(new, HOST, "{from:?} is in the host");
        changed_names(HOST, &new, SourceForm::Free).map(|it| {
            let mut res: Vec<String> = it.into_iter().collect();
            res.sort();
            res
        })
    }

    #[test]
    fn comments_and_blank_lines_change_nothing() {
        assert_eq!(changed("  real :: c(m)\n", "  real :: c(m) ! the coefficients\n\n! more\n"), Some(vec![]));
        assert_eq!(changed("real :: a(n), b(n)", "real   ::   a(n), b(n)  "), Some(vec!["a".into(), "b".into()]));
        // An array of a declaration of several: not the others.
        assert_eq!(changed("ALIGN b(i) WITH t(i)", "ALIGN b(i) WITH t(i+1)"), Some(vec!["b".into()]));
    }

    #[test]
    fn a_changed_declaration_changes_its_names_and_what_depends_on_them() {
        assert_eq!(changed("real :: c(m)", "real :: c(m+1)"), Some(vec!["c".into()]));
        // A new array.
        assert_eq!(changed("  real :: c(m)\n", "  real :: c(m)\n  real :: d(n)\n"), Some(vec!["d".into()]));
        // The template's distribution: the template and the arrays aligned with it.
        assert_eq!(changed("t(BLOCK)", "t(CYCLIC)"), Some(vec!["a".into(), "b".into(), "t".into()]));
        // A parameter: everything sized by it, and what is aligned with that.
        assert_eq!(changed("m = 4", "m = 5"), Some(vec!["c".into(), "m".into()]));
        let everything = changed("n = 16", "n = 17").expect("names");
        for name in ["n", "t", "a", "b"] {
            assert!(everything.contains(&name.to_string()), "{name}: {everything:?}");
        }
        assert!(!everything.contains(&"c".to_string()));
        // Two statements swapped: both, as order may matter.
        assert_eq!(
            changed("  real :: a(n), b(n)\n  real :: c(m)\n", "  real :: c(m)\n  real :: a(n), b(n)\n"),
            Some(vec!["a".into(), "b".into(), "c".into()])
        );
        // Statements after a `;`, a label, a comment in a continued statement.
        assert_eq!(changed("real :: c(m)", "real :: c(m); real :: e"), Some(vec!["e".into()]));
        assert_eq!(changed("  real :: c(m)\n", "10 real :: c(m)\n"), Some(vec![]));
        assert_eq!(changed("real :: c(m)", "real :: c( & ! rows\n  m)"), Some(vec!["c".into()]));
        // F77 declarations and continuation lines.
        assert_eq!(changed("real :: c(m)", "REAL*8 C(M), &\n    E"), Some(vec!["c".into(), "e".into()]));
    }

    #[test]
    fn what_the_scan_does_not_read_changes_everything() {
        for (from, to) in [
            ("contains\n", "  implicit none\ncontains\n"),
            ("module grid\n", "module grid\n  use other\n"),
            ("PROCESSORS p(4)", "PROCESSORS p(8)"),
            (
                "  real :: c(m)\n",
                "  interface operator(+)\n    function add(x, y)\n    end function\n  end interface\n",
            ),
            ("  real :: c(m)\n", "  real :: c(m)\n  type broken\n"),
        ] {
            assert_eq!(changed(from, to), None, "{to:?}");
        }
        assert_eq!(changed_names(HOST, HOST, SourceForm::Fixed { line_length: 72 }), None);
    }

    #[test]
    fn a_type_definition_or_an_interface_body_changes_its_name() {
        let pair = "  type pair\n    real :: x\n  contains\n    procedure :: norm\n  end type pair\n";
        assert_eq!(changed("  real :: c(m)\n", pair), Some(vec!["c".into(), "pair".into()]));
        let with_pair = HOST.replacen("contains\n", &format!("{pair}  type(pair) :: origin\ncontains\n"), 1);
        let names = |text: &str| {
            let mut res: Vec<String> =
                changed_names(&with_pair, text, SourceForm::Free).expect("names").into_iter().collect();
            res.sort();
            res
        };
        // A component: the type, and the host's variables of that type.
        assert_eq!(names(&with_pair.replacen("real :: x", "real :: x, y", 1)), ["origin", "pair"]);
        let interface = "  interface swap\n    subroutine swap_real(x, y)\n      real :: x, y\n    end subroutine\n    subroutine swap_int(i, j)\n      integer :: i, j\n    end subroutine swap_int\n  end interface\n";
        let with_interface = HOST.replacen("contains\n", &format!("{interface}contains\n"), 1);
        let names = |text: &str| {
            let mut res: Vec<String> =
                changed_names(&with_interface, text, SourceForm::Free).expect("names").into_iter().collect();
            res.sort();
            res
        };
        // A dummy of one body: that procedure and the generic name.
        assert_eq!(names(&with_interface.replacen("integer :: i, j", "integer(8) :: i, j", 1)), ["swap", "swap_int"]);
        assert_eq!(
            names(&with_interface.replacen("  end interface\n", "    module procedure other\n  end interface\n", 1)),
            ["other", "swap"]
        );
    }

    #[test]
    fn the_names_of_a_text_are_its_words() {
        let names = names("  subroutine s\n    x = A_1(i) + 2.5e3 ! y\n");
        for name in ["subroutine", "s", "x", "a_1", "i", "y"] {
            assert!(names.contains(name), "{name}");
        }
        assert!(!names.contains("5e3") && !names.contains("e3"));
    }
}
