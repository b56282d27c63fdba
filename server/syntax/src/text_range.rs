//! Byte ranges into the user's text.

use std::fmt;
use std::ops::Range;

/// A half-open range of UTF-8 byte offsets into the user's original text.
///
/// Fixed-form normalisation keeps every offset, so a range computed on the
/// normalised text is valid on the original one too.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct TextRange {
    pub start: usize,
    pub end: usize,
}

impl TextRange {
    pub fn new(start: usize, end: usize) -> TextRange {
        debug_assert!(start <= end, "inverted range {start}..{end}");
        TextRange { start, end: end.max(start) }
    }

    pub fn empty(offset: usize) -> TextRange {
        TextRange { start: offset, end: offset }
    }

    pub fn len(self) -> usize {
        self.end - self.start
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }

    /// The smallest range covering both.
    pub fn cover(self, other: TextRange) -> TextRange {
        TextRange { start: self.start.min(other.start), end: self.end.max(other.end) }
    }

    pub fn contains(self, offset: usize) -> bool {
        self.start <= offset && offset < self.end
    }

    /// Like `contains`, but also true at the end offset (a cursor just after a name).
    pub fn contains_inclusive(self, offset: usize) -> bool {
        self.start <= offset && offset <= self.end
    }

    pub fn contains_range(self, other: TextRange) -> bool {
        self.start <= other.start && other.end <= self.end
    }

    /// The same range `delta` bytes later (earlier when negative): text
    /// moved by an edit before it.
    pub fn shifted(self, delta: isize) -> TextRange {
        let moved = |offset: usize| offset.checked_add_signed(delta).expect("a moved range stays inside the text");
        TextRange { start: moved(self.start), end: moved(self.end) }
    }

    pub fn to_range(self) -> Range<usize> {
        self.start..self.end
    }

    /// Widens the range to char boundaries of `text` (and clamps it to
    /// `text`). Fixed-form normalisation writes ASCII over whole characters
    /// (a continuation mark in column 6, text beyond the column limit, the
    /// `&` it adds), so a node of the normalised text can start or end
    /// inside a character that the user wrote there.
    pub(crate) fn snap_to_chars(self, text: &str) -> TextRange {
        let mut start = self.start.min(text.len());
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = self.end.clamp(start, text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        TextRange { start, end }
    }
}

impl From<Range<usize>> for TextRange {
    fn from(range: Range<usize>) -> TextRange {
        TextRange::new(range.start, range.end)
    }
}

impl fmt::Debug for TextRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}
