//! The directive parser on arbitrary text: every line is offered as a
//! comment (as the parse offers the comments tree-sitter found), and every
//! directive, diagnostic and name it returns lies inside the text.
//!
//! Input: one byte for the form (see `form_from_byte`), then the text.

#![no_main]

use hpf_ls_fuzz::{check_range, form_from_byte, split_input};
use libfuzzer_sys::fuzz_target;
use syntax::directive::{parse_directives, AttrKind, DirectiveBody};
use syntax::TextRange;

fuzz_target!(|data: &[u8]| {
    let Some(([form], text)) = split_input::<1>(data) else { return };
    let form = form_from_byte(form);
    // Each line from its first non-blank byte, as a comment node would start.
    let mut comments = Vec::new();
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let blanks = line.len() - line.trim_start_matches([' ', '\t']).len();
        comments.push(TextRange::new(start + blanks, start + line.len()));
        start += line.len();
    }
    let mut diagnostics = Vec::new();
    let directives = parse_directives(&text, form, &comments, &mut diagnostics);
    for diagnostic in &diagnostics {
        check_range(&text, diagnostic.range, "diagnostic");
    }
    let mut previous_end = 0;
    for directive in &directives {
        check_range(&text, directive.range, "directive");
        assert!(directive.range.start >= previous_end, "directives overlap: {:?}", directive.range);
        previous_end = directive.range.end;
        for line in &directive.lines {
            check_range(&text, *line, "directive line");
        }
        check_range(&text, directive.keyword.range, "keyword");
        if !directive.keyword.text.is_empty() {
            assert_eq!(&text[directive.keyword.range.to_range()], directive.keyword.text, "keyword text");
        }
        let DirectiveBody::Mapping(mapping) = &directive.body else { continue };
        for attr in &mapping.attrs {
            check_range(&text, attr.range, "attribute");
            check_range(&text, attr.keyword.range, "attribute keyword");
            if let AttrKind::Align(spec) | AttrKind::Realign(spec) = &attr.kind {
                check_range(&text, spec.target.range, "align target");
                check_range(&text, spec.target_range, "align target range");
            }
        }
        for entity in &mapping.entities {
            check_range(&text, entity.name.range, "entity");
            assert_eq!(&text[entity.name.range.to_range()], entity.name.text, "entity name text");
            check_range(&text, entity.range, "entity range");
        }
    }
});
