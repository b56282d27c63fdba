//! Helpers shared by the fuzz targets in `fuzz_targets/`: how the first
//! bytes of an input choose the source form and options, and the range
//! checks every target makes on what it gets back.

use syntax::{SourceForm, TextRange};

/// The source form named by one byte of the input.
pub fn form_from_byte(byte: u8) -> SourceForm {
    match byte % 4 {
        0 => SourceForm::Free,
        1 => SourceForm::FIXED,
        2 => SourceForm::Fixed { line_length: 132 },
        // Short lines put the column limit everywhere.
        _ => SourceForm::Fixed { line_length: usize::from(byte / 4).max(1) },
    }
}

/// Splits an input into its option bytes and the text (invalid UTF-8 is
/// replaced, as the server and `hpf-ls check` do).
pub fn split_input<const N: usize>(data: &[u8]) -> Option<([u8; N], String)> {
    let options: [u8; N] = data.get(..N)?.try_into().ok()?;
    Some((options, String::from_utf8_lossy(&data[N..]).into_owned()))
}

/// Panics unless `range` lies inside `text` on char boundaries.
pub fn check_range(text: &str, range: TextRange, what: &str) {
    assert!(
        range.start <= range.end && range.end <= text.len(),
        "{what} {range:?} is outside the text (len {})",
        text.len()
    );
    assert!(
        text.is_char_boundary(range.start) && text.is_char_boundary(range.end),
        "{what} {range:?} is not on char boundaries"
    );
}

/// About `count` char boundaries of `text`, evenly spaced, with both ends.
pub fn sample_offsets(text: &str, count: usize) -> Vec<usize> {
    let step = (text.len() / count.max(1)).max(1);
    let mut res: Vec<usize> = (0..=text.len()).step_by(step).filter(|&it| text.is_char_boundary(it)).collect();
    res.push(text.len());
    res.dedup();
    res
}
