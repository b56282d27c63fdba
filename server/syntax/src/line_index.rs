//! Byte offset <-> line/column conversion for messages.
//!
//! Lines end at `\n` (a `\r` before it belongs to the terminator), as
//! tree-sitter counts rows. Columns are counted in characters here; the
//! language server converts to the encoding it negotiated.

use crate::TextRange;

#[derive(Clone, Debug)]
pub struct LineIndex {
    /// Offset of the first byte of every line.
    line_starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut line_starts = vec![0];
        line_starts.extend(text.bytes().enumerate().filter(|(_, b)| *b == b'\n').map(|(idx, _)| idx + 1));
        LineIndex { line_starts, len: text.len() }
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// The zero-based line holding `offset` (clamped to the text).
    pub fn line_of(&self, offset: usize) -> usize {
        let offset = offset.min(self.len);
        self.line_starts.partition_point(|&start| start <= offset) - 1
    }

    pub fn line_start(&self, line: usize) -> usize {
        self.line_starts.get(line).copied().unwrap_or(self.len)
    }

    /// The text of `line` without its terminator.
    pub fn line_text<'a>(&self, text: &'a str, line: usize) -> &'a str {
        let start = self.line_start(line).min(text.len());
        let end = self.line_starts.get(line + 1).map_or(text.len(), |it| it - 1).min(text.len());
        let line_text = text.get(start..end.max(start)).unwrap_or("");
        line_text.strip_suffix('\r').unwrap_or(line_text)
    }

    /// Zero-based line and zero-based column in characters of `offset`.
    pub fn line_col(&self, text: &str, offset: usize) -> (usize, usize) {
        let line = self.line_of(offset);
        let start = self.line_start(line);
        let mut offset = offset.min(text.len()).max(start);
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        (line, text[start..offset].chars().count())
    }

    /// The range of `line`, without its terminator.
    pub fn line_range(&self, text: &str, line: usize) -> TextRange {
        let start = self.line_start(line);
        TextRange::new(start, start + self.line_text(text, line).len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_with_crlf_and_multibyte_text() {
        let text = "ab\r\n日本x\n\nz";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 4);
        assert_eq!(index.line_text(text, 0), "ab");
        assert_eq!(index.line_text(text, 1), "日本x");
        assert_eq!(index.line_col(text, text.find('x').unwrap()), (1, 2));
        assert_eq!(index.line_col(text, text.len()), (3, 1));
        assert_eq!(index.line_text(text, 2), "");
        // An offset inside a character is moved back to its start.
        assert_eq!(index.line_col(text, 5), (1, 0));
    }
}
