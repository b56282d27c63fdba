//! Byte offsets <-> LSP positions in the negotiated encoding.
//!
//! Lines are split as LSP splits them (`\n`, `\r\n`, `\r`): the rope is
//! built with ropey's `cr_lines` feature and no Unicode line breaks.

use ropey::Rope;
use syntax::TextRange;
use tower_lsp_server::ls_types;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PositionEncoding {
    Utf8,
    Utf16,
}

/// The line's text without its terminator.
fn line_content(rope: &Rope, line: usize) -> ropey::RopeSlice<'_> {
    let slice = rope.line(line);
    let mut len = slice.len_chars();
    while len > 0 && matches!(slice.char(len - 1), '\n' | '\r') {
        len -= 1;
    }
    slice.slice(..len)
}

/// The position of byte `offset` (clamped to the text, moved back to a char boundary).
pub fn position(rope: &Rope, offset: usize, encoding: PositionEncoding) -> ls_types::Position {
    let offset = offset.min(rope.len_bytes());
    let char_idx = rope.byte_to_char(offset);
    let line = rope.char_to_line(char_idx);
    let line_char = rope.line_to_char(line);
    let character = match encoding {
        PositionEncoding::Utf8 => rope.char_to_byte(char_idx) - rope.char_to_byte(line_char),
        PositionEncoding::Utf16 => rope.char_to_utf16_cu(char_idx) - rope.char_to_utf16_cu(line_char),
    };
    ls_types::Position { line: line as u32, character: character as u32 }
}

/// Positions of many offsets of one text, as [`position`] gives them: by a
/// binary search over the line starts, without the rope's bookkeeping
/// (13,000 diagnostics at 100k lines). Not for a text with a lone `\r` (a
/// line break to LSP, not to the table): that one goes through the rope.
pub struct Positions<'a> {
    text: &'a str,
    encoding: PositionEncoding,
    lines: syntax::LineIndex,
}

impl<'a> Positions<'a> {
    /// Through a line table of `text`; `None` for a text with a lone `\r`.
    pub fn of_text(text: &'a str, encoding: PositionEncoding) -> Option<Positions<'a>> {
        let bytes = text.as_bytes();
        let lone_cr = bytes.iter().enumerate().any(|(at, it)| *it == b'\r' && bytes.get(at + 1) != Some(&b'\n'));
        (!lone_cr).then(|| Positions { text, encoding, lines: syntax::LineIndex::new(text) })
    }

    pub fn encoding(&self) -> PositionEncoding {
        self.encoding
    }

    pub fn position(&self, offset: usize) -> ls_types::Position {
        let lines = &self.lines;
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = lines.line_of(offset);
        let before = &self.text[lines.line_start(line)..offset];
        let character = match self.encoding {
            PositionEncoding::Utf8 => before.len(),
            PositionEncoding::Utf16 => before.chars().map(char::len_utf16).sum(),
        };
        ls_types::Position { line: line as u32, character: character as u32 }
    }

    pub fn range(&self, range: TextRange) -> ls_types::Range {
        ls_types::Range { start: self.position(range.start), end: self.position(range.end) }
    }
}

pub fn range(rope: &Rope, range: TextRange, encoding: PositionEncoding) -> ls_types::Range {
    ls_types::Range { start: position(rope, range.start, encoding), end: position(rope, range.end, encoding) }
}

/// The byte offset of `position`; a line past the end goes to the end of
/// the text, a character past the line's end to the line's end, and a
/// position inside a UTF-16 surrogate pair to the character's start.
pub fn offset(rope: &Rope, position: ls_types::Position, encoding: PositionEncoding) -> usize {
    let line = position.line as usize;
    if line >= rope.len_lines() {
        return rope.len_bytes();
    }
    let content = line_content(rope, line);
    let line_byte = rope.line_to_byte(line);
    let wanted = position.character as usize;
    let mut units = 0;
    let mut bytes = 0;
    for ch in content.chars() {
        let width = match encoding {
            PositionEncoding::Utf8 => ch.len_utf8(),
            PositionEncoding::Utf16 => ch.len_utf16(),
        };
        if units + width > wanted {
            break;
        }
        units += width;
        bytes += ch.len_utf8();
    }
    line_byte + bytes
}

pub fn text_range(rope: &Rope, range: ls_types::Range, encoding: PositionEncoding) -> TextRange {
    let start = offset(rope, range.start, encoding);
    let end = offset(rope, range.end, encoding).max(start);
    TextRange::new(start, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, character: u32) -> ls_types::Position {
        ls_types::Position { line, character }
    }

    #[test]
    fn japanese_comments_crlf_tabs_and_surrogates() {
        let text = "! 日本語のコメント\r\n\tA(1) = 'é'\r\nx = '𝄞' ! z\rlast";
        let rope = Rope::from_str(text);
        // Line 1 starts after the CRLF.
        let a = text.find('A').unwrap();
        assert_eq!(position(&rope, a, PositionEncoding::Utf16), pos(1, 1));
        assert_eq!(position(&rope, a, PositionEncoding::Utf8), pos(1, 1));
        // After the Japanese text: 2 + 8 UTF-16 units, 2 + 8*3 bytes on line 0.
        let end0 = text.find('\r').unwrap();
        assert_eq!(position(&rope, end0, PositionEncoding::Utf16), pos(0, 10));
        assert_eq!(position(&rope, end0, PositionEncoding::Utf8), pos(0, 2 + 8 * 3));
        // The G clef is two UTF-16 units and four bytes.
        let z = text.find('z').unwrap();
        assert_eq!(position(&rope, z, PositionEncoding::Utf16), pos(2, 11));
        assert_eq!(position(&rope, z, PositionEncoding::Utf8), pos(2, 13));
        // A lone CR ends a line for LSP.
        let last = text.find("last").unwrap();
        assert_eq!(position(&rope, last, PositionEncoding::Utf16), pos(3, 0));
        for encoding in [PositionEncoding::Utf8, PositionEncoding::Utf16] {
            for (idx, _) in text.char_indices() {
                // The `\n` of a CRLF is inside the line terminator: no position names it.
                if text[..idx].ends_with('\r') && text[idx..].starts_with('\n') {
                    continue;
                }
                assert_eq!(offset(&rope, position(&rope, idx, encoding), encoding), idx, "round trip at {idx}");
            }
        }
        // The line table gives what the rope gives, at every byte; a lone CR
        // is left to the rope.
        assert!(Positions::of_text(text, PositionEncoding::Utf8).is_none());
        for text in [&text.replace('\r', "")] {
            let rope = Rope::from_str(text);
            for encoding in [PositionEncoding::Utf8, PositionEncoding::Utf16] {
                let positions = Positions::of_text(text, encoding).expect("no lone CR");
                for idx in 0..=text.len() + 1 {
                    assert_eq!(
                        positions.position(idx),
                        position(&rope, idx, encoding),
                        "{encoding:?} at {idx} of {text:?}"
                    );
                }
            }
        }
        // Inside the surrogate pair: the character's start.
        let clef = text.find('𝄞').unwrap();
        assert_eq!(offset(&rope, pos(2, 6), PositionEncoding::Utf16), clef);
        // Past the end of a line, past the last line.
        assert_eq!(offset(&rope, pos(0, 999), PositionEncoding::Utf16), end0);
        assert_eq!(offset(&rope, pos(99, 0), PositionEncoding::Utf16), text.len());
    }
}
