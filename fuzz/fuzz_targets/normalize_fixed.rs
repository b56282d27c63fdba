//! Fixed-form normalisation keeps every offset: same length, the same bytes
//! except for the marks it writes (`!`, blanks, `&`), valid UTF-8, and the
//! whole-file parse of the result keeps its ranges inside the text.
//!
//! Input: one byte for the form (see `form_from_byte`), then the text.

#![no_main]

use hpf_ls_fuzz::{check_range, form_from_byte, split_input};
use libfuzzer_sys::fuzz_target;
use syntax::SourceForm;

fuzz_target!(|data: &[u8]| {
    let Some(([form], text)) = split_input::<1>(data) else { return };
    let form = match form_from_byte(form) {
        SourceForm::Free => SourceForm::FIXED,
        fixed => fixed,
    };
    let SourceForm::Fixed { line_length } = form else { unreachable!() };
    let normalised = syntax::normalize_fixed(&text, line_length);
    assert_eq!(normalised.len(), text.len(), "normalisation changes the length");
    for (idx, (before, after)) in text.bytes().zip(normalised.bytes()).enumerate() {
        if before != after {
            assert!(
                matches!(after, b'!' | b' ' | b'&'),
                "byte {idx}: {before:#x} became {after:#x}, not a mark the normalisation writes"
            );
        }
        if before == b'\n' && after != b'\n' {
            // Only the last resort (joining two lines) replaces a terminator.
            assert_eq!(after, b'&', "byte {idx}: a line feed became {after:#x}");
        }
    }
    // The parse of the whole file reads the normalised text.
    let file = syntax::parse(&text, form);
    for diagnostic in &file.diagnostics {
        check_range(&text, diagnostic.range, "diagnostic");
    }
    for comment in &file.comments {
        check_range(&text, *comment, "comment");
    }
});
