//! Source forms and the offset-preserving fixed-form normalisation.
//!
//! tree-sitter-fortran parses free form only. Fixed-form text is rewritten
//! byte for byte into free form (same length, same offsets, same line
//! starts wherever possible), so every span on the normalised text is a span
//! on the user's text.

use std::path::Path;

/// How a file's text is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SourceForm {
    Free,
    /// Fixed form; characters after column `line_length` (72 by default,
    /// 132 for extended-source compilers) are ignored.
    Fixed {
        line_length: usize,
    },
}

pub const DEFAULT_FIXED_LINE_LENGTH: usize = 72;

impl SourceForm {
    pub const FIXED: SourceForm = SourceForm::Fixed { line_length: DEFAULT_FIXED_LINE_LENGTH };

    /// The conventional form for a file name: `.f .F .for .f77 .ftn` (any
    /// case) are fixed form, everything else is free form.
    pub fn from_path(path: &Path) -> SourceForm {
        let extension = path.extension().and_then(|it| it.to_str()).unwrap_or("");
        match extension.to_ascii_lowercase().as_str() {
            "f" | "for" | "f77" | "ftn" | "fpp" => SourceForm::FIXED,
            _ => SourceForm::Free,
        }
    }

    /// Parses a user's override: `free`, `fixed`, `fixed72` or `fixed132`.
    pub fn from_name(name: &str) -> Option<SourceForm> {
        Some(match name.to_ascii_lowercase().as_str() {
            "free" => SourceForm::Free,
            "fixed" | "fixed72" => SourceForm::FIXED,
            "fixed132" => SourceForm::Fixed { line_length: 132 },
            _ => return None,
        })
    }

    pub fn is_fixed(self) -> bool {
        matches!(self, SourceForm::Fixed { .. })
    }
}

/// File extensions (lower case) that hold Fortran source, for directory walks.
pub const FORTRAN_EXTENSIONS: &[&str] = &["f", "for", "f77", "ftn", "fpp", "f90", "f95", "f03", "f08", "hpf"];

/// True when a column-1 character makes a fixed-form line a comment.
fn is_fixed_comment_mark(byte: u8) -> bool {
    matches!(byte, b'C' | b'c' | b'*' | b'!' | b'D' | b'd')
}

/// One physical line: `start..end` excludes the line terminator, which
/// starts at `end` and is `\n` or `\r\n` (or nothing at end of file).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PhysicalLine {
    pub start: usize,
    pub end: usize,
    /// Offset of the byte that ends the line (`\r` of `\r\n`, or `\n`), if any.
    pub terminator: Option<usize>,
}

pub(crate) fn physical_lines(text: &str) -> Vec<PhysicalLine> {
    let bytes = text.as_bytes();
    let mut lines = Vec::new();
    let mut start = 0;
    for (idx, &byte) in bytes.iter().enumerate() {
        if byte == b'\n' {
            let (end, terminator) =
                if idx > start && bytes[idx - 1] == b'\r' { (idx - 1, idx - 1) } else { (idx, idx) };
            lines.push(PhysicalLine { start, end, terminator: Some(terminator) });
            start = idx + 1;
        }
    }
    if start < bytes.len() {
        lines.push(PhysicalLine { start, end: bytes.len(), terminator: None });
    }
    lines
}

/// Byte offset of the character in column `column` (1-based) of `line`, or
/// `line.len()` when the line is shorter. Columns count characters; a tab
/// in columns 1-6 counts as reaching column 7 (the DEC tab form).
fn column_offset(line: &str, column: usize) -> usize {
    line.char_indices().nth(column - 1).map_or(line.len(), |(offset, _)| offset)
}

/// Where a continuation `&` can be put on a code line, in order of preference.
#[derive(Clone, Copy, Debug)]
struct ContinuationSlot {
    /// A trailing `!` comment: `&` replaces the `!`, the comment goes on.
    comment: Option<usize>,
    /// First byte of the ignored text after the column limit.
    beyond_limit: Option<usize>,
    /// The last trailing blank.
    trailing_blank: Option<usize>,
    /// The line terminator byte: using it joins the lines into one.
    terminator: Option<usize>,
}

/// Rewrites fixed-form text into free form with the same length in bytes:
/// comment lines get a `!` in column 1, text after the column limit becomes
/// blanks, a continuation mark in column 6 becomes `&`, and the code line it
/// continues gets a trailing `&` (in a blank, in place of its comment's `!`,
/// or, as a last resort, in place of its line terminator).
pub fn normalize_fixed(text: &str, line_length: usize) -> String {
    let mut out = text.as_bytes().to_vec();
    let mut previous_code_line: Option<ContinuationSlot> = None;
    // Whether the previous code line ended inside a character literal.
    let mut open_quote: Option<u8> = None;

    for line in physical_lines(text) {
        let content = &text[line.start..line.end];
        let bytes = content.as_bytes();
        if bytes.is_empty() || bytes.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        if is_fixed_comment_mark(bytes[0]) {
            out[line.start] = b'!';
            continue;
        }
        if bytes[0] == b'#' {
            // A preprocessor line; the grammar knows those.
            continue;
        }
        // A line whose first non-blank character is `!` outside column 6 is a comment.
        let first_nonblank = content.char_indices().find(|(_, ch)| !ch.is_whitespace());
        if let Some((offset, '!')) = first_nonblank {
            let column = content[..offset].chars().count() + 1;
            if column != 6 {
                continue;
            }
        }

        // Locate the statement field: the label field is columns 1-5, column 6
        // marks continuation; the DEC tab form puts a tab in the label field.
        let (mark_offset, statement_offset) = match content.find('\t') {
            Some(tab) if tab < 6 && content[..tab].bytes().all(|b| b.is_ascii_digit() || b == b' ') => {
                let after = tab + 1;
                match bytes.get(after) {
                    Some(b'1'..=b'9') => (Some(after), after + 1),
                    _ => (None, after),
                }
            }
            _ => {
                let col6 = column_offset(content, 6);
                (if col6 < content.len() { Some(col6) } else { None }, column_offset(content, 7))
            }
        };

        // Blank everything beyond the column limit (sequence numbers).
        let limit_offset = column_offset(content, line_length + 1);
        for byte in &mut out[line.start + limit_offset..line.end] {
            *byte = b' ';
        }
        let beyond_limit = (limit_offset < content.len()).then_some(line.start + limit_offset);

        let mut is_continuation = false;
        if let Some(mark) = mark_offset {
            let mark_char = content[mark..].chars().next().unwrap_or(' ');
            if mark_char != ' ' && mark_char != '0' && mark < limit_offset {
                is_continuation = true;
                out[line.start + mark] = b'&';
                for idx in 1..mark_char.len_utf8() {
                    out[line.start + mark + idx] = b' ';
                }
            } else if mark_char == '0' {
                out[line.start + mark] = b' ';
            }
        }

        if is_continuation {
            if let Some(slot) = previous_code_line.take() {
                place_continuation(&mut out, slot, open_quote.is_some());
            }
        } else {
            open_quote = None;
        }

        // Scan the statement field for quotes and a trailing comment.
        let field_end = limit_offset.max(statement_offset.min(content.len()));
        let field_start = statement_offset.min(field_end);
        let mut comment = None;
        for (idx, &byte) in bytes[field_start..field_end].iter().enumerate() {
            match (open_quote, byte) {
                (Some(quote), _) if byte == quote => open_quote = None,
                (Some(_), _) => {}
                (None, b'\'' | b'"') => open_quote = Some(byte),
                (None, b'!') => {
                    comment = Some(line.start + field_start + idx);
                    break;
                }
                _ => {}
            }
        }
        let code_end = comment.map_or(line.start + field_end.min(content.len()), |it| it);
        let trailing_blank = {
            let code = &out[line.start..code_end];
            match code.last() {
                Some(b' ' | b'\t') if code_end > line.start + field_start => Some(code_end - 1),
                _ => None,
            }
        };
        previous_code_line =
            Some(ContinuationSlot { comment, beyond_limit, trailing_blank, terminator: line.terminator });
    }
    String::from_utf8(out).expect("normalisation only writes ASCII over whole characters")
}

fn place_continuation(out: &mut [u8], slot: ContinuationSlot, in_string: bool) {
    if in_string {
        // Blanks inside an open character literal belong to it: join the lines.
        if let Some(terminator) = slot.terminator {
            out[terminator] = b'&';
        }
        return;
    }
    if let Some(bang) = slot.comment {
        out[bang] = b'&';
        // Keep the rest of the line a comment.
        if let Some(next) = out.get(bang + 1).copied() {
            if next != b'\n' && next != b'\r' {
                let width = utf8_width(next);
                out[bang + 1] = b'!';
                for byte in out.iter_mut().skip(bang + 2).take(width - 1) {
                    *byte = b' ';
                }
            }
        }
    } else if let Some(offset) = slot.beyond_limit.or(slot.trailing_blank).or(slot.terminator) {
        out[offset] = b'&';
    }
}

fn utf8_width(first_byte: u8) -> usize {
    match first_byte {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expected: &str) {
        let normalized = normalize_fixed(input, 72);
        assert_eq!(normalized.len(), input.len());
        assert_eq!(normalized, expected);
    }

    #[test]
    fn comment_lines_get_a_bang() {
        check("C hello\nc x\n* y\n      X = 1\n", "! hello\n! x\n! y\n      X = 1\n");
    }

    #[test]
    fn continuation_uses_the_terminator_when_nothing_else_is_free() {
        check("      X = 1 +\n     &    2\n", "      X = 1 +&     &    2\n");
    }

    #[test]
    fn continuation_prefers_a_trailing_blank() {
        check("      X = 1 + \n     1    2\n", "      X = 1 +&\n     &    2\n");
    }

    #[test]
    fn continuation_skips_comment_lines_and_keeps_crlf() {
        check(
            "      X = 1 +\r\nC note\r\n     +    2\r\n",
            // The `\r` of the continued line is the only free byte: it takes the `&`.
            "      X = 1 +&\n! note\r\n     &    2\r\n",
        );
    }

    #[test]
    fn trailing_comment_carries_the_ampersand() {
        check("      X = 1 + ! why\n     &    2\n", "      X = 1 + &!why\n     &    2\n");
    }

    #[test]
    fn sequence_numbers_are_blanked() {
        let line = format!("      X = 1{}SEQ00010\n", " ".repeat(61));
        let expected = format!("      X = 1{}        \n", " ".repeat(61));
        check(&line, &expected);
    }

    #[test]
    fn zero_in_column_six_is_not_a_continuation() {
        check("     0X = 1\n", "      X = 1\n");
    }

    #[test]
    fn bang_in_column_six_is_a_continuation() {
        check("      X = 1\n     !+ 2\n", "      X = 1&     &+ 2\n");
    }

    #[test]
    fn tab_form_continuation() {
        check("\tX = 1\n\t1+ 2\n", "\tX = 1&\t&+ 2\n");
    }

    #[test]
    fn strings_are_not_comments() {
        check("      S = 'a!b'\n      T = 1\n", "      S = 'a!b'\n      T = 1\n");
    }

    #[test]
    fn extension_decides_the_default_form() {
        assert_eq!(SourceForm::from_path(Path::new("a.f")), SourceForm::FIXED);
        assert_eq!(SourceForm::from_path(Path::new("a.F")), SourceForm::FIXED);
        assert_eq!(SourceForm::from_path(Path::new("a.for")), SourceForm::FIXED);
        assert_eq!(SourceForm::from_path(Path::new("a.f90")), SourceForm::Free);
        assert_eq!(SourceForm::from_path(Path::new("a.hpf")), SourceForm::Free);
    }
}
