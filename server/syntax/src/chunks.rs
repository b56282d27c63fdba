//! Where the chunks of a text begin, found by a cheap line scan rather
//! than a parse: its top-level program units, and the procedures after the
//! CONTAINS of a host unit.
//!
//! The language server parses and analyses a document chunk by chunk, so
//! that an edit redoes the work of one unit or procedure and positions
//! inside a chunk do not move when text before it changes. The scan counts
//! unit headers (`PROGRAM`, `SUBROUTINE`, `[prefixes] FUNCTION`, `MODULE`,
//! `SUBMODULE`, `BLOCK DATA`, interface bodies included) against unit ends
//! (`END`, `END SUBROUTINE`, ...); a chunk ends after the line of an END
//! that closes depth 1, and the next begins there when a header follows at
//! depth 0. With procedures split, a host unit (depth 1) is cut the same
//! way after its CONTAINS: its first chunk holds its specification (and
//! executable) part up to the CONTAINS line, each contained procedure
//! begins a chunk after the CONTAINS line or after the END of the procedure
//! before it, and the host's END line belongs to its last procedure. Text
//! between units or procedures (comments) goes with the one after it.
//! Text it cannot read (a header without its END, statements split oddly)
//! only makes chunks larger, never splits a unit: a boundary needs a unit
//! end (or a CONTAINS) followed by a header. A CONTAINS of a derived type
//! is not a host's. A host whose specification part INCLUDEs a file is
//! split like any other: its procedures are analysed with the host's text,
//! INCLUDE lines and all, which the server expands for each of them (a
//! header with a CONTAINS or an END of its own would be misread, as it is
//! by the compilers' own line scanners).

use crate::statements::{line_statements, Carried, LineStatement};
use crate::SourceForm;

/// What a chunk begins with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChunkKind {
    /// A top-level program unit (and, when its procedures are chunks of
    /// their own, its part up to CONTAINS).
    Unit,
    /// A procedure after its host's CONTAINS, analysed with the host's chunk.
    Procedure,
}

/// Where a chunk begins, and what it begins with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChunkStart {
    pub at: usize,
    pub kind: ChunkKind,
}

/// The byte offsets at which the top-level units of `parser_text` (the
/// text the parser sees, see [`crate::parser_text`]) begin: 0 first, each
/// one the start of a line, in increasing order.
pub fn unit_chunks(parser_text: &str, form: SourceForm) -> Vec<usize> {
    chunks(parser_text, form, false).into_iter().map(|it| it.at).collect()
}

/// The chunks of `parser_text`: its top-level units, and the procedures
/// after a host's CONTAINS when `procedures` is set.
pub fn chunks(parser_text: &str, form: SourceForm, procedures: bool) -> Vec<ChunkStart> {
    let first = ChunkStart { at: 0, kind: ChunkKind::Unit };
    chunks_from(parser_text, form, procedures, first, |_| false).0
}

/// [`chunks`] from `from`, 0 or a chunk start of a scan of the same text
/// before `from` (the scan resumes in the state it has at a chunk's start
/// of that kind), until the end or until `synced` accepts a chunk start it
/// finds after `from` in the state of a chunk start of its kind: the chunks
/// after it are those of an earlier scan of the same text after it that
/// began a chunk of that kind there. Returns the starts from `from`
/// (included) and where it synced. The server rescans an edited document
/// from the chunk before the edit to the first chunk after it.
pub fn chunks_from(
    parser_text: &str,
    form: SourceForm,
    procedures: bool,
    from: ChunkStart,
    mut synced: impl FnMut(ChunkStart) -> bool,
) -> (Vec<ChunkStart>, Option<usize>) {
    let mut starts = vec![from];
    let resumed_in_host = from.kind == ChunkKind::Procedure;
    let mut depth = usize::from(resumed_in_host);
    // Where the next chunk begins if a header follows: after the END that
    // closed the last unit or procedure, or after the host's CONTAINS.
    let mut pending: Option<ChunkStart> = (from.at > 0 || resumed_in_host).then_some(from);
    // The top-level unit is a host whose procedures are being cut.
    let mut in_contains = resumed_in_host;
    // A derived type definition (its CONTAINS is not the host's).
    let mut in_type = false;
    let mut continued = Carried::default();
    let mut line_start = from.at;
    let bytes = parser_text.as_bytes();
    while line_start < bytes.len() {
        if line_start > from.at && !continued.continued {
            if let Some(start) = pending.filter(|it| it.at == line_start) {
                let canonical = match start.kind {
                    ChunkKind::Unit => depth == 0,
                    ChunkKind::Procedure => depth == 1 && in_contains,
                };
                if canonical && synced(start) {
                    return (starts, Some(line_start));
                }
            }
        }
        let line_end = bytes[line_start..].iter().position(|it| *it == b'\n').map_or(bytes.len(), |it| line_start + it);
        let next_line = (line_end + 1).min(bytes.len());
        let line = &parser_text[line_start..line_end];
        let was_continued = continued.continued;
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continued = Carried::default();
            line_start = next_line;
            continue;
        }
        let mut statements = line_statements(line, continued);
        if was_continued {
            statements.by_ref().for_each(drop);
        }
        for LineStatement { text: statement, .. } in statements.by_ref() {
            match classify(statement, form) {
                Statement::Header => {
                    let begins = match pending {
                        Some(ChunkStart { kind: ChunkKind::Unit, .. }) => depth == 0,
                        Some(ChunkStart { kind: ChunkKind::Procedure, .. }) => depth == 1 && in_contains,
                        None => false,
                    };
                    if begins {
                        let start = pending.take().expect("matched above");
                        if start.at > starts.last().expect("never empty").at {
                            starts.push(start);
                        }
                    }
                    depth += 1;
                }
                Statement::End => {
                    if depth <= 1 {
                        depth = 0;
                        pending = Some(ChunkStart { at: next_line, kind: ChunkKind::Unit });
                        (in_contains, in_type) = (false, false);
                    } else {
                        depth -= 1;
                        if depth == 1 && in_contains {
                            pending = Some(ChunkStart { at: next_line, kind: ChunkKind::Procedure });
                        }
                    }
                }
                Statement::Contains => {
                    if procedures && depth == 1 && !in_contains && !in_type {
                        in_contains = true;
                        pending = Some(ChunkStart { at: next_line, kind: ChunkKind::Procedure });
                    }
                }
                // A separate module procedure is a procedure of the host like any other.
                Statement::SeparateProcedure if depth == 1 && in_contains => {
                    if let Some(start) = pending.take() {
                        if start.at > starts.last().expect("never empty").at {
                            starts.push(start);
                        }
                    }
                    depth += 1;
                }
                Statement::EndProcedure if depth == 2 && in_contains => {
                    depth -= 1;
                    pending = Some(ChunkStart { at: next_line, kind: ChunkKind::Procedure });
                }
                Statement::TypeBegin if depth == 1 => in_type = true,
                Statement::TypeEnd => in_type = false,
                Statement::SeparateProcedure | Statement::EndProcedure | Statement::TypeBegin | Statement::Other => {}
            }
        }
        continued = statements.carried();
        line_start = next_line;
    }
    (starts, None)
}

#[derive(Debug, PartialEq)]
enum Statement {
    Header,
    End,
    Contains,
    /// `MODULE PROCEDURE name`: after a submodule's (or module's) CONTAINS,
    /// a separate module procedure begins; elsewhere a list of procedures.
    SeparateProcedure,
    /// `END PROCEDURE`, which ends a separate module procedure.
    EndProcedure,
    /// `TYPE [, attributes ::] name`: a derived type definition begins.
    TypeBegin,
    TypeEnd,
    Other,
}

/// Whether a statement may be a unit header or END by its first letters:
/// most statements are not, and are not looked at further.
fn may_matter(statement: &str) -> bool {
    const STARTS: [&str; 20] = [
        "end", "pro", "sub", "fun", "mod", "blo", "rec", "pur", "ele", "imp", "non", "int", "rea", "log", "com", "cha",
        "dou", "typ", "cla", "con",
    ];
    // Blanks skipped: fixed form ignores them (`E N D`).
    let mut head = [0u8; 3];
    for (slot, byte) in head.iter_mut().zip(statement.bytes().filter(|it| !it.is_ascii_whitespace())) {
        *slot = byte.to_ascii_lowercase();
    }
    STARTS.iter().any(|it| it.as_bytes() == head)
}

const UNIT_KEYWORDS: [&str; 6] = ["program", "subroutine", "function", "module", "submodule", "blockdata"];
const PREFIXES: [&str; 6] = ["recursive", "pure", "elemental", "impure", "non_recursive", "module"];
const TYPES: [&str; 9] =
    ["doubleprecision", "doublecomplex", "integer", "real", "logical", "complex", "character", "type", "class"];

fn classify(statement: &str, form: SourceForm) -> Statement {
    if !may_matter(statement) {
        return Statement::Other;
    }
    let lower = statement.to_ascii_lowercase();
    if has_assignment(&lower) {
        return Statement::Other;
    }
    let words: Vec<&str> = lower.split_whitespace().collect();
    // Free form: blanks separate keywords (`REAL FUNCTIONS(10)` declares an
    // array). Fixed form ignores blanks, so the keywords are found glued.
    let glued: String = words.concat();
    if is_unit_end(&words, &glued, form) {
        return Statement::End;
    }
    if glued == "contains" {
        return Statement::Contains;
    }
    if glued.starts_with("endprocedure") {
        return Statement::EndProcedure;
    }
    let separate = match form {
        SourceForm::Free => words.len() == 3 && words[0] == "module" && words[1] == "procedure",
        SourceForm::Fixed { .. } => glued.len() > "moduleprocedure".len() && glued.starts_with("moduleprocedure"),
    };
    if separate && !glued.contains(',') {
        return Statement::SeparateProcedure;
    }
    if glued.starts_with("endtype") {
        return Statement::TypeEnd;
    }
    if is_type_definition(&words, &glued, form) {
        return Statement::TypeBegin;
    }
    let header = match form {
        SourceForm::Free => free_header(&words),
        SourceForm::Fixed { .. } => glued_header(&glued),
    };
    if header {
        Statement::Header
    } else {
        Statement::Other
    }
}

/// `TYPE name`, `TYPE, attributes :: name`, `TYPE :: name`; not `TYPE(t)
/// ...` (a declaration) nor `TYPE IS (...)` (a SELECT TYPE guard).
fn is_type_definition(words: &[&str], glued: &str, form: SourceForm) -> bool {
    let Some(rest) = glued.strip_prefix("type") else { return false };
    if rest.starts_with('(') || rest.is_empty() {
        return false;
    }
    match form {
        SourceForm::Free => match words {
            [first, ..] if *first == "type" => words.get(1).is_some_and(|it| *it != "is" && !it.starts_with("is(")),
            [first, ..] => first.starts_with("type,") || first.starts_with("type::"),
            [] => false,
        },
        // Glued: `TYPEIS(...)` is a guard; `TYPENAME` a definition.
        SourceForm::Fixed { .. } => !rest.starts_with("is("),
    }
}

/// An `=` outside parentheses: an assignment, not a header or an END.
fn has_assignment(statement: &str) -> bool {
    let mut depth = 0i32;
    let mut quote: Option<u8> = None;
    for byte in statement.bytes() {
        match (quote, byte) {
            (Some(open), _) if byte == open => quote = None,
            (Some(_), _) => {}
            (None, b'\'' | b'"') => quote = Some(byte),
            (None, b'(') => depth += 1,
            (None, b')') => depth -= 1,
            (None, b'=') if depth <= 0 => return true,
            _ => {}
        }
    }
    false
}

fn is_unit_end(words: &[&str], glued: &str, form: SourceForm) -> bool {
    if glued == "end" {
        return true;
    }
    let kind_after_end = |rest: &str| UNIT_KEYWORDS.iter().any(|it| rest.starts_with(it));
    match form {
        SourceForm::Free => match words {
            [first, rest @ ..] if *first == "end" => {
                let kind = rest.concat();
                // `END BLOCK` ends a BLOCK construct, `END BLOCK DATA` a unit.
                rest.first().is_some_and(|it| UNIT_KEYWORDS.contains(it) || *it == "block") && kind_after_end(&kind)
            }
            [first, ..] => {
                first.strip_prefix("end").is_some_and(|it| UNIT_KEYWORDS.contains(&it))
                    || (*first == "endblock" && words.get(1) == Some(&"data"))
            }
            [] => false,
        },
        SourceForm::Fixed { .. } => glued.strip_prefix("end").is_some_and(kind_after_end),
    }
}

/// A unit header in free form: prefixes and a type, then the keyword as a
/// word of its own, then a name.
fn free_header(words: &[&str]) -> bool {
    let mut idx = 0;
    while let Some(word) = words.get(idx) {
        let is_prefix = PREFIXES.contains(word)
            && words.get(idx + 1).is_some_and(|next| {
                matches!(*next, "function" | "subroutine") || PREFIXES.contains(next) || is_type(next)
            });
        if is_prefix || is_type(word) {
            idx += 1;
        } else if (*word == "double")
            && words.get(idx + 1).is_some_and(|it| it.starts_with("precision") || it.starts_with("complex"))
        {
            idx += 2;
        } else {
            break;
        }
    }
    let typed = idx > 0;
    let Some(keyword) = words.get(idx) else { return false };
    let name = words.get(idx + 1).copied();
    let named = |name: Option<&str>| name.is_some_and(|it| it.starts_with(|ch: char| ch.is_ascii_alphabetic()));
    match *keyword {
        "function" => named(name),
        "subroutine" => named(name),
        "program" | "module" if !typed => named(name) && name != Some("procedure"),
        "blockdata" if !typed => true,
        "block" if !typed => name.is_some_and(|it| it == "data"),
        keyword if !typed => {
            keyword.starts_with("submodule(") || (keyword == "submodule" && name.is_some_and(|it| it.starts_with('(')))
        }
        _ => false,
    }
}

/// A type specifier word: `integer`, `real(8)`, `real*8`, `type(t)`, ...
fn is_type(word: &str) -> bool {
    TYPES.iter().any(|it| word.strip_prefix(it).is_some_and(|rest| rest.is_empty() || rest.starts_with(['(', '*'])))
}

/// A unit header in fixed form, blanks removed: prefixes and a type glued
/// to the keyword, the keyword glued to the name.
fn glued_header(glued: &str) -> bool {
    let mut rest = glued;
    let mut typed = false;
    loop {
        let before = rest;
        for prefix in PREFIXES.iter().chain(&TYPES) {
            if let Some(after) = rest.strip_prefix(prefix) {
                // `MODULE` alone begins a module; as a prefix it needs a procedure after it.
                if *prefix == "module" && !(after.starts_with("function") || after.starts_with("subroutine")) {
                    continue;
                }
                rest = skip_kind(after);
                typed = true;
                break;
            }
        }
        if rest == before {
            break;
        }
    }
    let named = |after: &str| after.starts_with(|ch: char| ch.is_ascii_alphabetic());
    if let Some(after) = rest.strip_prefix("function") {
        return named(after);
    }
    if let Some(after) = rest.strip_prefix("subroutine") {
        return named(after);
    }
    if typed {
        return false;
    }
    if let Some(after) = rest.strip_prefix("program") {
        return named(after);
    }
    if let Some(after) = rest.strip_prefix("submodule") {
        return after.starts_with('(');
    }
    if let Some(after) = rest.strip_prefix("module") {
        return named(after) && !after.starts_with("procedure");
    }
    rest.starts_with("blockdata")
}

/// Skips a kind or length selector after a type: `(kind=8)`, `*8`, `*(*)`.
fn skip_kind(text: &str) -> &str {
    let text = text.strip_prefix('*').map_or(text, |it| it.trim_start_matches(|ch: char| ch.is_ascii_digit()));
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
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXED: SourceForm = SourceForm::Fixed { line_length: 72 };

    fn chunks(text: &str, form: SourceForm) -> Vec<&str> {
        let parser_text = crate::parser_text(text, form);
        let starts = unit_chunks(&parser_text, form);
        let mut res = Vec::new();
        for (idx, start) in starts.iter().enumerate() {
            let end = starts.get(idx + 1).copied().unwrap_or(text.len());
            res.push(&text[*start..end]);
        }
        res
    }

    #[test]
    fn top_level_units_are_chunks_with_the_comments_before_them() {
        let text = "! header\nmodule m\n  integer :: n\nend module m\n\n! the kernel\nsubroutine s(a)\n  real a(10)\nend subroutine s\nprogram p\n  use m\nend program p\n";
        assert_eq!(
            chunks(text, SourceForm::Free),
            [
                "! header\nmodule m\n  integer :: n\nend module m\n",
                "\n! the kernel\nsubroutine s(a)\n  real a(10)\nend subroutine s\n",
                "program p\n  use m\nend program p\n"
            ]
        );
    }

    #[test]
    fn contained_and_interface_procedures_stay_in_their_unit() {
        let text = "program p\n  interface\n    subroutine e(x)\n      real x\n    end subroutine\n  end interface\ncontains\n  subroutine a\n  end subroutine a\n  integer function f(x)\n    f = x\n  end function\nend program\nsubroutine b\nend\n";
        assert_eq!(chunks(text, SourceForm::Free).len(), 2);
        assert!(chunks(text, SourceForm::Free)[1].starts_with("subroutine b"));
    }

    #[test]
    fn headers_need_their_keyword_words_and_no_assignment() {
        for statement in [
            "real functions(10)",
            "program = 3",
            "integer :: function_count",
            "end if",
            "end block",
            "endfile 10",
            "call subroutine_x(a)",
        ] {
            assert_eq!(classify(statement, SourceForm::Free), Statement::Other, "{statement}");
        }
        for statement in [
            "recursive integer(kind=8) function f(x) result(y)",
            "double precision function g(x)",
            "character(len=*) function h()",
            "pure elemental real function r(x)",
            "module subroutine ms(x)",
            "block data init",
            "submodule (m) sm",
        ] {
            assert_eq!(classify(statement, SourceForm::Free), Statement::Header, "{statement}");
        }
        // A separate module procedure's header, which the scan reads after CONTAINS only.
        assert_eq!(classify("module procedure foo", SourceForm::Free), Statement::SeparateProcedure);
        assert_eq!(classify("module procedure a, b", SourceForm::Free), Statement::Other);
        for statement in ["end", "end subroutine s", "endprogram", "end block data", "END FUNCTION"] {
            assert_eq!(classify(statement, SourceForm::Free), Statement::End, "{statement}");
        }
    }

    #[test]
    fn fixed_form_ignores_blanks_labels_and_comment_lines() {
        let text = "C     a comment\n      PROGRAM MAIN\n      X = 1\n  100 END\nC next\n      DOUBLEPRECISION FUNCTION F(X)\n     &  \n      F = X\n      E N D\n      SUBROUTINE S\n      ENDSUBROUTINE\n";
        let chunks = chunks(text, FIXED);
        assert_eq!(chunks.len(), 3, "{chunks:?}");
        assert!(chunks[1].starts_with("C next\n      DOUBLEPRECISION"));
        assert!(chunks[2].starts_with("      SUBROUTINE S"));
    }

    #[test]
    fn a_scan_resumed_at_a_chunk_finds_what_a_whole_scan_finds() {
        let text = "module m\nend module m\n! s\nsubroutine s\nend\nsubroutine t\nend\nprogram p\ncontains\nsubroutine a\nend\n! b\nsubroutine b\nend\nend\n";
        let whole = super::chunks(text, SourceForm::Free, true);
        assert_eq!(whole.len(), 6);
        for (idx, from) in whole.iter().enumerate() {
            let (starts, synced) = chunks_from(text, SourceForm::Free, true, *from, |_| false);
            assert_eq!((starts.as_slice(), synced), (&whole[idx..], None));
        }
        // Synced at the first chunk start it is offered after the resumption.
        let (starts, synced) = chunks_from(text, SourceForm::Free, true, whole[1], |at| at == whole[3]);
        assert_eq!((starts.as_slice(), synced), (&whole[1..3], Some(whole[3].at)));
        let (starts, synced) = chunks_from(text, SourceForm::Free, true, whole[3], |at| at == whole[5]);
        assert_eq!((starts.as_slice(), synced), (&whole[3..5], Some(whole[5].at)));
    }

    fn procedure_chunks(text: &str, form: SourceForm) -> Vec<(&str, ChunkKind)> {
        let parser_text = crate::parser_text(text, form);
        let starts = super::chunks(&parser_text, form, true);
        let ends = starts.iter().skip(1).map(|it| it.at).chain([text.len()]);
        starts.iter().zip(ends).map(|(start, end)| (&text[start.at..end], start.kind)).collect()
    }

    #[test]
    fn procedures_after_contains_are_chunks_and_the_host_end_goes_with_the_last() {
        use ChunkKind::{Procedure, Unit};
        let text = "module m\n  type t\n  contains\n    procedure :: f\n  end type\n  interface\n    subroutine e(x)\n    end subroutine\n  end interface\n  real a(8)\ncontains\n  ! f\n  integer function f(x)\n    f = x\n  contains\n    subroutine inner\n    end subroutine\n  end function\n  subroutine g\n  end subroutine g\nend module m\nprogram p\n  x = 1\ncontains\n  subroutine h\n  end\nend\n";
        assert_eq!(
            procedure_chunks(text, SourceForm::Free),
            [
                ("module m\n  type t\n  contains\n    procedure :: f\n  end type\n  interface\n    subroutine e(x)\n    end subroutine\n  end interface\n  real a(8)\ncontains\n", Unit),
                ("  ! f\n  integer function f(x)\n    f = x\n  contains\n    subroutine inner\n    end subroutine\n  end function\n", Procedure),
                ("  subroutine g\n  end subroutine g\nend module m\n", Procedure),
                ("program p\n  x = 1\ncontains\n", Unit),
                ("  subroutine h\n  end\nend\n", Procedure),
            ]
        );
        // Without procedures split, and a host whose specification part INCLUDEs a file.
        assert_eq!(unit_chunks(text, SourceForm::Free).len(), 2);
        let included = "module m\n  include 'decl.h'\ncontains\n  subroutine g\n  end\nend module\n";
        assert_eq!(procedure_chunks(included, SourceForm::Free).len(), 2);
        // A CONTAINS with nothing after it, and SELECT TYPE guards, split nothing.
        let text = "program p\n  select type (x)\n  type is (integer)\n  end select\ncontains\nend program\n";
        assert_eq!(procedure_chunks(text, SourceForm::Free).len(), 1);
        // A submodule's separate module procedures.
        let text = "submodule (m) impl\ncontains\n  module procedure f\n    f = 1\n  end procedure f\n  module subroutine g(x)\n  end subroutine\nend submodule\n";
        let kinds: Vec<_> = procedure_chunks(text, SourceForm::Free).iter().map(|it| it.1).collect();
        assert_eq!(kinds, [Unit, Procedure, Procedure]);
        let fixed =
            "      PROGRAM P\n      X = 1\n      CONTAINS\n      SUBROUTINE S\n      END SUBROUTINE\n      END\n";
        assert_eq!(procedure_chunks(fixed, FIXED).iter().map(|it| it.1).collect::<Vec<_>>(), [Unit, Procedure]);
    }

    #[test]
    fn half_typed_units_make_larger_chunks_not_split_ones() {
        // The first subroutine has no END yet: everything after it is one chunk.
        let text = "subroutine a\n  x = 1\nsubroutine b\nend subroutine b\nsubroutine c\nend\n";
        assert_eq!(chunks(text, SourceForm::Free), [text]);
        // A main program without PROGRAM statement ends at its END.
        let text = "x = 1\nprint *, x\nend\nsubroutine s\nend\n";
        assert_eq!(chunks(text, SourceForm::Free).len(), 2);
        // Continuation lines are not statements of their own.
        let text = "subroutine a(x, &\n  end)\nend\nsubroutine b\nend\n";
        assert_eq!(chunks(text, SourceForm::Free).len(), 2);
        // Text after the last END belongs to the last chunk.
        let text = "subroutine a\nend\n\n! trailing\n";
        assert_eq!(chunks(text, SourceForm::Free), [text]);
    }
}
