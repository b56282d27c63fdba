//! HPF directives: recognising directive lines among comments, joining
//! continued lines, and parsing the joined text.

mod ast;
mod lexer;
mod parser;

pub use ast::*;
pub use parser::DIRECTIVE_KEYWORDS;

use crate::{Code, Diagnostic, SourceForm, TextRange};
use lexer::{lex_segment, Token};

/// One physical directive line.
#[derive(Clone, Copy, Debug)]
struct DirectiveLine {
    /// Sentinel to end of line (no terminator).
    line: TextRange,
    /// The directive text on this line: after the sentinel (and the
    /// continuation mark), before a trailing comment or `&`.
    body: TextRange,
    /// Fixed form: a mark in column 6; free form: a leading `&` was seen or
    /// the previous line ended with `&`.
    continues_previous: bool,
    /// Free form: the line ends with `&`.
    continued: bool,
}

/// Recognises an HPF directive line starting at `start` (a comment's
/// first byte). Returns `None` for every other comment, including the
/// sentinels of other tools (`!$omp`, `CDVM$`, ...).
fn directive_line(text: &str, start: usize, end: usize, form: SourceForm) -> Option<DirectiveLine> {
    if !text.is_char_boundary(start) {
        return None;
    }
    let bytes = text.as_bytes();
    let sentinel = bytes.get(start..start + 5)?;
    let origin = sentinel[0];
    if !sentinel[1..].eq_ignore_ascii_case(b"hpf$") {
        return None;
    }
    let line_start = text[..start].rfind('\n').map_or(0, |it| it + 1);
    let mut end = end.clamp(start, text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    while end > start && matches!(bytes[end - 1], b'\r' | b'\n') {
        end -= 1;
    }
    let (mut body_start, mut continues_previous) = (start + 5, false);
    match form {
        SourceForm::Free => {
            if origin != b'!' {
                return None;
            }
            // Only blanks may precede the sentinel.
            if !text[line_start..start].bytes().all(|b| b == b' ' || b == b'\t') {
                return None;
            }
        }
        SourceForm::Fixed { line_length } => {
            if !matches!(origin, b'!' | b'c' | b'C' | b'*') || start != line_start {
                return None;
            }
            if let Some(mark) = text[start + 5..end.max(start + 5)].chars().next() {
                if mark != ' ' && mark != '0' && mark != '\t' {
                    continues_previous = true;
                }
                // Column 6 is the continuation field, never directive text
                // (the mark can be any character, `é` included).
                body_start = start + 5 + mark.len_utf8();
            }
            // Ignore text beyond the column limit (sequence numbers).
            let limit = text[start..end].char_indices().nth(line_length).map_or(end, |(offset, _)| start + offset);
            end = end.min(limit);
        }
    }
    let body_start = body_start.min(end);
    // A trailing `!` starts commentary.
    let body_end = text[body_start..end].find('!').map_or(end, |it| body_start + it);
    let mut body = TextRange::new(body_start, body_end);
    let trimmed = text[body.to_range()].trim_end();
    let mut continued = false;
    if form == SourceForm::Free {
        if let Some(stripped) = trimmed.strip_suffix('&') {
            continued = true;
            body.end = body.start + stripped.len();
        }
        let leading = &text[body.to_range()];
        let blanks = leading.len() - leading.trim_start().len();
        if leading.trim_start().starts_with('&') {
            continues_previous = true;
            body.start += blanks + 1;
        }
    }
    Some(DirectiveLine { line: TextRange::new(start, end.max(body.end)), body, continues_previous, continued })
}

/// Finds, joins and parses the HPF directives among `comments` (byte ranges
/// of comment nodes, in text order).
pub fn parse_directives(
    text: &str,
    form: SourceForm,
    comments: &[TextRange],
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Directive> {
    let mut groups: Vec<Vec<DirectiveLine>> = Vec::new();
    let mut open_free_continuation = false;
    for comment in comments {
        let Some(line) = directive_line(text, comment.start, comment.end, form) else { continue };
        let joins = match form {
            SourceForm::Free => open_free_continuation,
            SourceForm::Fixed { .. } => line.continues_previous,
        };
        let adjacent = groups
            .last()
            .and_then(|group| group.last())
            .is_some_and(|previous| only_comments_between(text, form, previous.line.end, line.line.start));
        if joins && adjacent {
            groups.last_mut().expect("adjacent implies a group").push(line);
        } else {
            if open_free_continuation {
                let previous = groups.last().and_then(|it| it.last()).expect("a continued line exists");
                diagnostics.push(Diagnostic::new(
                    Code::DirectiveSyntax,
                    TextRange::new(previous.body.end, previous.line.end),
                    "the directive is continued with `&`, but the next line is not an `!HPF$` line",
                ));
            } else if line.continues_previous && form.is_fixed() {
                // The mark is the character in column 6, which ends where the body starts.
                diagnostics.push(Diagnostic::new(
                    Code::DirectiveSyntax,
                    TextRange::new(line.line.start + 5, line.body.start.max(line.line.start + 5)),
                    "continuation mark in column 6, but no directive line precedes it",
                ));
            }
            groups.push(vec![line]);
        }
        open_free_continuation = form == SourceForm::Free && line.continued;
    }
    if open_free_continuation {
        if let Some(previous) = groups.last().and_then(|it| it.last()) {
            diagnostics.push(Diagnostic::new(
                Code::DirectiveSyntax,
                TextRange::new(previous.body.end, previous.line.end),
                "the directive is continued with `&`, but no `!HPF$` line follows",
            ));
        }
    }

    groups.iter().map(|group| parse_group(text, group, diagnostics)).collect()
}

/// True when everything between `from` and `to` is blank lines or comments.
fn only_comments_between(text: &str, form: SourceForm, from: usize, to: usize) -> bool {
    let Some(between) = text.get(from..to) else { return false };
    between.split('\n').skip(1).all(|line| {
        let trimmed = line.trim_start();
        trimmed.is_empty()
            || trimmed.starts_with('!')
            || (form.is_fixed() && line.starts_with(['c', 'C', '*', 'd', 'D']))
    })
}

fn parse_group(text: &str, group: &[DirectiveLine], diagnostics: &mut Vec<Diagnostic>) -> Directive {
    let mut tokens: Vec<Token> = Vec::new();
    for line in group {
        lex_segment(text, line.body.start, line.body.end, &mut tokens);
    }
    let first = group[0];
    let last = group[group.len() - 1];
    let range = TextRange::new(first.line.start, last.line.end);
    let lines = group.iter().map(|it| it.line).collect();
    if let Some(bad) = tokens.iter().find(|it| it.kind == lexer::TokenKind::Unexpected) {
        diagnostics.push(Diagnostic::new(
            Code::DirectiveSyntax,
            bad.range,
            format!("unexpected character `{}` in a directive", &text[bad.range.to_range()]),
        ));
        let keyword = first_word(text, &tokens, range);
        return Directive { range, lines, keyword, body: DirectiveBody::Invalid };
    }
    let line_start = text[..first.line.start].rfind('\n').map_or(0, |it| it + 1);
    let newline = if text[..first.line.start].ends_with("\r\n") { "\r\n" } else { "\n" };
    let mut prefix = format!("{newline}{}", &text[line_start..first.body.start]);
    if !prefix.ends_with([' ', '\t']) {
        prefix.push(' ');
    }
    let mut parser = parser::Parser::new(text, &tokens, last.body.end).with_line_prefix(prefix);
    let (keyword, body) = parser.parse_directive();
    if body.is_ok() {
        diagnostics.append(&mut parser.notes);
    }
    let keyword = keyword.unwrap_or_else(|| first_word(text, &tokens, range));
    let body = match body {
        Ok(body) => body,
        Err(error) => {
            let code = if error.unknown_keyword { Code::UnknownDirective } else { Code::DirectiveSyntax };
            diagnostics.push(Diagnostic::new(code, error.range, error.message));
            DirectiveBody::Invalid
        }
    };
    Directive { range, lines, keyword, body }
}

/// The first word of a directive that has no known keyword; an empty name
/// where the directive does not start with a word (`!HPF$ (BLOCK)`).
fn first_word(text: &str, tokens: &[Token], range: TextRange) -> crate::Name {
    match tokens.first() {
        Some(token) if token.kind == lexer::TokenKind::Ident => {
            crate::Name::new(&text[token.range.to_range()], token.range)
        }
        Some(token) => crate::Name::new("", TextRange::empty(token.range.start)),
        None => crate::Name::new("", TextRange::empty(range.start + 5)),
    }
}
