//! Where the top-level program units of a text begin, found by a cheap
//! line scan rather than a parse.
//!
//! The language server parses and analyses a document chunk by chunk, one
//! top-level unit each, so that an edit redoes the work of one unit and
//! positions inside a chunk do not move when text before it changes. The
//! scan counts unit headers (`PROGRAM`, `SUBROUTINE`, `[prefixes] FUNCTION`,
//! `MODULE`, `SUBMODULE`, `BLOCK DATA`, interface bodies included) against
//! unit ends (`END`, `END SUBROUTINE`, ...); a chunk ends after the line of
//! an END that closes depth 1, and the next begins there when a header
//! follows at depth 0. Text it cannot read (a header without its END,
//! statements split oddly) only makes chunks larger, never splits a unit:
//! a boundary needs a unit end at depth 1 followed by a header.

use crate::SourceForm;

/// The byte offsets at which the chunks of `parser_text` (the text the
/// parser sees, see [`crate::parser_text`]) begin: 0 first, each one the
/// start of a line, in increasing order.
pub fn unit_chunks(parser_text: &str, form: SourceForm) -> Vec<usize> {
    unit_chunks_from(parser_text, form, 0, |_| false).0
}

/// [`unit_chunks`] from `from`, 0 or where a chunk began in a scan of the
/// same text before `from` (the scan resumes in the state it has at a
/// chunk's start), until the end or until `synced` accepts a line start
/// where the scan is in that state again: the chunks after it are those of
/// an earlier scan of the same text after it. Returns the starts from
/// `from` (included) and where it synced. The server rescans an edited
/// document from the chunk before the edit to the first chunk after it.
pub fn unit_chunks_from(
    parser_text: &str,
    form: SourceForm,
    from: usize,
    mut synced: impl FnMut(usize) -> bool,
) -> (Vec<usize>, Option<usize>) {
    let mut starts = vec![from];
    let mut depth = 0usize;
    // The start of the line after the END that closed the last top-level unit.
    let mut after_end: Option<usize> = (from > 0).then_some(from);
    let mut continued = false;
    let mut line_start = from;
    let bytes = parser_text.as_bytes();
    while line_start < bytes.len() {
        if line_start > from && depth == 0 && after_end == Some(line_start) && !continued && synced(line_start) {
            return (starts, Some(line_start));
        }
        let line_end = bytes[line_start..].iter().position(|it| *it == b'\n').map_or(bytes.len(), |it| line_start + it);
        let next_line = (line_end + 1).min(bytes.len());
        let line = &parser_text[line_start..line_end];
        let was_continued = continued;
        let mut pieces = [""; MAX_STATEMENTS_PER_LINE];
        let (count, continues) = statements(line, &mut pieces);
        continued = continues;
        if !was_continued {
            for statement in &pieces[..count] {
                match classify(statement, form) {
                    Statement::Header => {
                        if depth == 0 {
                            if let Some(start) = after_end.take() {
                                if start > *starts.last().expect("never empty") {
                                    starts.push(start);
                                }
                            }
                        }
                        depth += 1;
                    }
                    Statement::End => {
                        if depth <= 1 {
                            depth = 0;
                            after_end = Some(next_line);
                        } else {
                            depth -= 1;
                        }
                    }
                    Statement::Other => {}
                }
            }
        }
        line_start = next_line;
    }
    (starts, None)
}

#[derive(Debug, PartialEq)]
enum Statement {
    Header,
    End,
    Other,
}

/// Statements of a line looked at; more (`a; b; c; ...`) are skipped.
const MAX_STATEMENTS_PER_LINE: usize = 8;

/// The statements of one line (split at `;`, comment and label removed)
/// into `out`, how many, and whether the line continues on the next (a
/// trailing `&`). Runs on every line of a document at every edit: no
/// allocation.
fn statements<'a>(line: &'a str, out: &mut [&'a str; MAX_STATEMENTS_PER_LINE]) -> (usize, bool) {
    let trimmed = line.trim_start();
    if trimmed.is_empty() || trimmed.starts_with('!') || trimmed.starts_with('#') {
        return (0, false);
    }
    let bytes = line.as_bytes();
    let mut count = 0;
    let mut push = |piece: &'a str| {
        let piece = piece.trim_start().trim_start_matches(|ch: char| ch.is_ascii_digit()).trim();
        if !piece.is_empty() && count < MAX_STATEMENTS_PER_LINE {
            out[count] = piece;
            count += 1;
        }
    };
    let mut quote: Option<u8> = None;
    let mut start = 0;
    let mut end = bytes.len();
    for (idx, &byte) in bytes.iter().enumerate() {
        match (quote, byte) {
            (Some(open), _) if byte == open => quote = None,
            (Some(_), _) => {}
            (None, b'\'' | b'"') => quote = Some(byte),
            (None, b'!') => {
                end = idx;
                break;
            }
            (None, b';') => {
                push(&line[start..idx]);
                start = idx + 1;
            }
            _ => {}
        }
    }
    let last = line[start..end].trim_end();
    let continues = last.ends_with('&');
    push(last.strip_suffix('&').unwrap_or(last));
    (count, continues)
}

/// Whether a statement may be a unit header or END by its first letters:
/// most statements are not, and are not looked at further.
fn may_matter(statement: &str) -> bool {
    const STARTS: [&str; 19] = [
        "end", "pro", "sub", "fun", "mod", "blo", "rec", "pur", "ele", "imp", "non", "int", "rea", "log", "com", "cha",
        "dou", "typ", "cla",
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
            "module procedure foo",
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
        let text = "module m\nend module m\n! s\nsubroutine s\nend\nsubroutine t\nend\nprogram p\nend\n";
        let whole = unit_chunks(text, SourceForm::Free);
        assert_eq!(whole.len(), 4);
        for (idx, from) in whole.iter().enumerate() {
            let (starts, synced) = unit_chunks_from(text, SourceForm::Free, *from, |_| false);
            assert_eq!((starts.as_slice(), synced), (&whole[idx..], None));
        }
        // Synced at the first chunk start it is offered after the resumption.
        let (starts, synced) = unit_chunks_from(text, SourceForm::Free, whole[1], |at| at == whole[3]);
        assert_eq!((starts.as_slice(), synced), (&whole[1..3], Some(whole[3])));
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
