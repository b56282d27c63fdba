//! Offset-preserving rewrites of the dialects real HPF codes are written
//! in, applied to the text the parser sees (and so to the text the backend
//! copies into the generated free-form program):
//!
//! * `EXTRINSIC (HPF_LOCAL)` (or any other model) in a procedure's prefix,
//!   alone or with PURE / ELEMENTAL / RECURSIVE, becomes blanks: the
//!   grammar does not know the prefix; [`extrinsic_model`] reads it back
//!   from the user's text (the backend lowers HPF_LOCAL calls, `extrinsic.rs`).
//! * Fixed form only, where blanks mean nothing: a dot operator spelled
//!   with blanks (`. EQ .`), a statement keyword with blanks where free form
//!   allows none (`G O TO`, `C ALL`, `CONTI NUE`), and names and numbers
//!   with blanks inside expressions (`SU M`, `1 000` inside parentheses or
//!   after a statement's `=`) are written without them; the blanks move
//!   after the token, so the line keeps its length and every later offset.
//!
//! Character literals, comments and FORMAT statements (Hollerith) are left
//! alone.
//!
//! It also builds the quick fix of the one dialect note that needs the
//! loop's statements: an ON HOME clause of INDEPENDENT.

use std::sync::Arc;

use crate::directive::{Directive, DirectiveBody, Independent};
use crate::{Code, Diagnostic, Fix, Stmt, StmtKind, TextRange, Unit};

/// Rewrites `text` (already normalised to free form by
/// [`crate::normalize_fixed`] when `fixed`) in place; same length.
pub(crate) fn rewrite_dialects(text: &mut [u8], fixed: bool) {
    let mut start = 0;
    // Parenthesis depth and "after the statement's `=`" carried into
    // continuation lines.
    let mut carried = (0usize, false);
    while start < text.len() {
        let end = text[start..].iter().position(|it| *it == b'\n').map_or(text.len(), |it| start + it);
        let line = &mut text[start..end];
        let continues = fixed && line.len() > 5 && line[5] == b'&';
        carried = rewrite_line(line, fixed, continues, carried);
        start = end + 1;
    }
}

fn rewrite_line(line: &mut [u8], fixed: bool, continues: bool, carried: (usize, bool)) -> (usize, bool) {
    // The statement field: after the label (and column 6 in fixed form).
    let mut at = if fixed { 6.min(line.len()) } else { 0 };
    if fixed {
        // A tab in the label field (DEC form) starts the statement.
        if let Some(tab) = line[..at].iter().position(|it| *it == b'\t') {
            at = tab + 1;
        }
        if line.first().is_some_and(|it| matches!(it, b'!' | b'#')) {
            return (0, false);
        }
    }
    while at < line.len() && (line[at] == b' ' || line[at] == b'\t' || (!fixed && line[at].is_ascii_digit())) {
        at += 1;
    }
    if at >= line.len() || matches!(line[at], b'!' | b'#') {
        return if continues { carried } else { (0, false) };
    }
    if !fixed && line[at] == b'&' {
        return (0, false);
    }
    if !continues {
        blank_extrinsic_prefix(line, at);
    }
    if !fixed {
        return (0, false);
    }
    if !continues {
        if starts_with_word(&line[at..], b"format") {
            return (0, false);
        }
        squeeze_keyword(line, at);
        // The statement of a logical IF: `IF (I .GT. N) G O TO 10`.
        if let Some(after) = logical_if_statement(line, at) {
            squeeze_keyword(line, after);
        }
    }
    squeeze_expressions(line, at, if continues { carried } else { (0, false) })
}

fn starts_with_word(rest: &[u8], word: &[u8]) -> bool {
    rest.len() >= word.len()
        && rest[..word.len()].eq_ignore_ascii_case(word)
        && !rest.get(word.len()).is_some_and(|it| it.is_ascii_alphanumeric() || *it == b'_')
}

/// `PURE EXTRINSIC (HPF_LOCAL) SUBROUTINE S(X)`: blanks the EXTRINSIC part.
fn blank_extrinsic_prefix(line: &mut [u8], statement: usize) {
    let lower = line.to_ascii_lowercase();
    if !lower.windows(10).any(|it| it == b"subroutine") && !lower.windows(8).any(|it| it == b"function") {
        return;
    }
    let mut at = statement;
    let mut blanks = Vec::new();
    loop {
        while at < line.len() && line[at].is_ascii_whitespace() {
            at += 1;
        }
        let word_end = at + lower[at..].iter().take_while(|it| it.is_ascii_alphanumeric() || **it == b'_').count();
        match &lower[at..word_end] {
            b"pure" | b"elemental" | b"recursive" | b"impure" => at = word_end,
            b"extrinsic" => {
                let mut close = word_end;
                while close < line.len() && line[close].is_ascii_whitespace() {
                    close += 1;
                }
                if line.get(close) != Some(&b'(') {
                    return;
                }
                let Some(offset) = line[close..].iter().position(|it| *it == b')') else { return };
                blanks.push(at..close + offset + 1);
                at = close + offset + 1;
            }
            _ => break,
        }
    }
    for range in blanks {
        line[range].fill(b' ');
    }
}

/// The extrinsic model a procedure's header declares (`EXTRINSIC
/// (HPF_LOCAL)` among its prefixes), lower case (`hpf_local`), with the
/// range of the EXTRINSIC prefix; `header` is the unit's first statement in
/// the user's text (the parser sees the prefix blanked, `rewrite_dialects`).
pub fn extrinsic_model(text: &str, header: TextRange) -> Option<(String, TextRange)> {
    // The header's range starts after the blanked prefix: read from its line's start.
    let line_start = text.get(..header.start)?.rfind('\n').map_or(0, |it| it + 1);
    let header = TextRange::new(line_start, header.end);
    let line = text.get(header.to_range())?;
    let lower = line.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    if !lower.contains("subroutine") && !lower.contains("function") {
        return None;
    }
    let mut at = 0;
    loop {
        while at < bytes.len() && (bytes[at].is_ascii_whitespace() || bytes[at] == b'&' || bytes[at].is_ascii_digit()) {
            at += 1;
        }
        let word_end = at + bytes[at..].iter().take_while(|it| it.is_ascii_alphanumeric() || **it == b'_').count();
        match &lower[at..word_end] {
            "extrinsic" => {
                let open = word_end + lower[word_end..].find('(')?;
                if !lower[word_end..open].trim().is_empty() {
                    return None;
                }
                let close = open + lower[open..].find(')')?;
                let model: String = lower[open + 1..close].chars().filter(|it| !it.is_whitespace()).collect();
                let start = header.start + at;
                return Some((model, TextRange::new(start, header.start + close + 1)));
            }
            "" => return None,
            "subroutine" | "function" => return None,
            // Prefixes and a function's type (`REAL`, `INTEGER(8)`): on to the next word.
            _ => {
                at = word_end;
                if bytes.get(at) == Some(&b'(') {
                    at += lower[at..].find(')').map_or(lower.len() - at, |it| it + 1);
                } else if bytes.get(at) == Some(&b'*') {
                    at += 1;
                    while at < bytes.len() && bytes[at].is_ascii_digit() {
                        at += 1;
                    }
                }
            }
        }
    }
}

/// Keywords that begin a statement, with the blanks free form allows in
/// them (`GO TO`, `END DO`): their letters, and where a blank may split them.
const KEYWORDS: &[(&str, Option<usize>)] = &[
    ("goto", Some(2)),
    ("enddo", Some(3)),
    ("endif", Some(3)),
    ("elseif", Some(4)),
    ("continue", None),
    ("return", None),
    ("call", None),
    // After ENDDO and ENDIF, which it begins.
    ("end", None),
];

/// `G O TO 10`, `C ALL S`: the statement keyword without its blanks.
fn squeeze_keyword(line: &mut [u8], statement: usize) {
    for (keyword, split) in KEYWORDS {
        let mut at = statement;
        let mut letters = Vec::new();
        let mut bad_blank = false;
        for (idx, letter) in keyword.bytes().enumerate() {
            let blanks_from = at;
            while at < line.len() && line[at] == b' ' {
                at += 1;
            }
            if at > blanks_from && idx > 0 && *split != Some(idx) {
                bad_blank = true;
            }
            if at >= line.len() || !line[at].eq_ignore_ascii_case(&letter) {
                letters.clear();
                break;
            }
            letters.push(line[at]);
            at += 1;
        }
        if letters.len() != keyword.len() || !bad_blank {
            continue;
        }
        // `CALL` and `GO TO` take a name or label next; the others end the
        // statement or take a parenthesis. An `=` at depth 0 makes it an assignment.
        let rest = &line[at..];
        let next = rest.iter().find(|it| **it != b' ').copied();
        let takes_more = matches!(*keyword, "call" | "goto");
        if (!takes_more && next.is_some_and(|it| it.is_ascii_alphanumeric())) || has_top_level_equals(rest) {
            return;
        }
        let written = letters.len();
        line[statement..statement + written].copy_from_slice(&letters);
        line[statement + written..at].fill(b' ');
        return;
    }
}

/// Where the statement of `IF (...) statement` starts, if `statement` is one.
fn logical_if_statement(line: &[u8], statement: usize) -> Option<usize> {
    if !line[statement..].get(..2)?.eq_ignore_ascii_case(b"if") {
        return None;
    }
    let mut at = statement + 2;
    while line.get(at) == Some(&b' ') {
        at += 1;
    }
    if line.get(at) != Some(&b'(') {
        return None;
    }
    let idx = closing_paren(line, at)?;
    let next = idx + 1 + line[idx + 1..].iter().take_while(|it| **it == b' ').count();
    (next < line.len()).then_some(next)
}

/// The byte offset of the `)` that closes the `(` at `open`, skipping
/// quoted strings (shared with the backend, which reads statements' text).
pub fn closing_paren(text: impl AsRef<[u8]>, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote = None;
    for (at, &byte) in text.as_ref().iter().enumerate().skip(open) {
        match (quote, byte) {
            (Some(q), _) if byte == q => quote = None,
            (Some(_), _) => {}
            (None, b'\'' | b'"') => quote = Some(byte),
            (None, b'(') => depth += 1,
            (None, b')') => {
                depth -= 1;
                if depth == 0 {
                    return Some(at);
                }
            }
            _ => {}
        }
    }
    None
}

fn has_top_level_equals(rest: &[u8]) -> bool {
    let mut depth = 0i32;
    let mut quote = None;
    for &byte in rest {
        match (quote, byte) {
            (Some(q), _) if byte == q => quote = None,
            (Some(_), _) => {}
            (None, b'\'' | b'"') => quote = Some(byte),
            (None, b'(') => depth += 1,
            (None, b')') => depth -= 1,
            (None, b'!') => break,
            (None, b'=') if depth == 0 => return true,
            _ => {}
        }
    }
    false
}

const DOT_OPERATORS: &[&[u8]] =
    &[b"eq", b"ne", b"lt", b"le", b"gt", b"ge", b"and", b"or", b"not", b"eqv", b"neqv", b"true", b"false"];

/// Squeezes blanks inside dot operators everywhere, and between the parts
/// of a name or number inside parentheses or after the statement's `=`.
fn squeeze_expressions(line: &mut [u8], from: usize, (mut depth, mut after_equals): (usize, bool)) -> (usize, bool) {
    let mut at = from;
    let mut quote: Option<u8> = None;
    while at < line.len() {
        let byte = line[at];
        if let Some(q) = quote {
            if byte == q {
                quote = None;
            }
            at += 1;
            continue;
        }
        match byte {
            b'\'' | b'"' => quote = Some(byte),
            b'!' => break,
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            b'=' if depth == 0 && line.get(at + 1) != Some(&b'=') => after_equals = true,
            b'.' => squeeze_dot_operator(line, at),
            b' ' if depth > 0 || after_equals => squeeze_token_gap(line, at),
            _ => {}
        }
        at += 1;
    }
    (depth, after_equals)
}

/// `. EQ .` at `dot` becomes `.EQ.` and blanks.
fn squeeze_dot_operator(line: &mut [u8], dot: usize) {
    let mut at = dot + 1;
    let skip_blanks = |at: &mut usize| {
        while *at < line.len() && line[*at] == b' ' {
            *at += 1;
        }
    };
    skip_blanks(&mut at);
    let word_start = at;
    while at < line.len() && line[at].is_ascii_alphabetic() {
        at += 1;
    }
    let word = line[word_start..at].to_ascii_lowercase();
    skip_blanks(&mut at);
    if at >= line.len() || line[at] != b'.' || !DOT_OPERATORS.contains(&word.as_slice()) {
        return;
    }
    if at - dot - 1 == word.len() {
        return;
    }
    let squeezed: Vec<u8> =
        std::iter::once(b'.').chain(line[word_start..word_start + word.len()].iter().copied()).chain([b'.']).collect();
    line[dot..dot + squeezed.len()].copy_from_slice(&squeezed);
    line[dot + squeezed.len()..=at].fill(b' ');
}

/// Blanks at `blank` between two parts of one name or number (`SU M`,
/// `1 000`): the right part moves left, the blanks go after it.
fn squeeze_token_gap(line: &mut [u8], blank: usize) {
    let is_part = |it: u8| it.is_ascii_alphanumeric() || it == b'_';
    if blank == 0 || !is_part(line[blank - 1]) {
        return;
    }
    let mut right = blank;
    while right < line.len() && line[right] == b' ' {
        right += 1;
    }
    if right >= line.len() || !is_part(line[right]) {
        return;
    }
    let mut right_end = right;
    while right_end < line.len() && is_part(line[right_end]) {
        right_end += 1;
    }
    let gap = right - blank;
    line.copy_within(right..right_end, blank);
    line[right_end - gap..right_end].fill(b' ');
}

/// The quick fix of an `INDEPENDENT, ON HOME (U(I))` note: the clause
/// goes, and `ON HOME (U(I)) BEGIN` ... `END ON` wraps the loop's body,
/// when the loop ends on a line of its own (`END DO`, `CONTINUE`).
pub(crate) fn on_home_clause_fixes(text: &str, units: &[Arc<Unit>], diagnostics: &mut [Diagnostic]) {
    for unit in units.iter().flat_map(|it| it.all_units()) {
        for directive in &unit.directives {
            let DirectiveBody::Independent(Independent { on_home: Some(home), .. }) = &directive.body else { continue };
            let Some(note) = diagnostics
                .iter_mut()
                .find(|it| it.code == Code::Dialect && it.fix.is_none() && it.range.contains_range(home.range))
            else {
                continue;
            };
            let Some(edits) = on_home_edits(text, unit, directive, note.range, home) else { continue };
            note.fix = Some(Fix { title: "Write `ON HOME (...) BEGIN` ... `END ON` in the loop".into(), edits });
        }
    }
}

fn on_home_edits(
    text: &str,
    unit: &Unit,
    directive: &Directive,
    clause: TextRange,
    home: &crate::Expr,
) -> Option<Vec<(TextRange, String)>> {
    let next = unit
        .body
        .iter()
        .flat_map(|it| std::iter::once(it).chain(all_statements(it)))
        .find(|it| it.range.start >= directive.range.end)?;
    let StmtKind::Do { body, .. } = &next.kind else { return None };
    body.first()?;
    // The comma before the clause goes with it.
    let before = text[..clause.start].trim_end_matches([' ', '\t']);
    let start = if before.ends_with(',') { before.len() - 1 } else { clause.start };
    let line_start = text[..directive.range.start].rfind('\n').map_or(0, |it| it + 1);
    let sentinel = text.get(directive.range.start..directive.range.start + 5)?;
    let prefix = format!("{}{sentinel} ", &text[line_start..directive.range.start]);
    let newline = if text[..line_start].ends_with("\r\n") { "\r\n" } else { "\n" };
    let last_line = text[..next.range.end].rfind('\n').map_or(0, |it| it + 1);
    let last: String = text[last_line..next.range.end]
        .trim_start_matches(|it: char| it.is_ascii_digit() || it.is_whitespace())
        .chars()
        .filter(|it| !it.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    if !matches!(last.as_str(), "enddo" | "continue") || last_line <= next.header.end {
        return None;
    }
    let home_text = text.get(home.range.to_range())?;
    Some(vec![
        (TextRange::new(start, clause.end), String::new()),
        (TextRange::empty(next.header.end), format!("{newline}{prefix}ON HOME ({home_text}) BEGIN")),
        (TextRange::empty(last_line), format!("{prefix}END ON{newline}")),
    ])
}

fn all_statements(stmt: &Stmt) -> Vec<&Stmt> {
    let mut res = Vec::new();
    let mut stack = stmt.children();
    while let Some(it) = stack.pop() {
        res.push(it);
        stack.extend(it.children());
    }
    res.sort_by_key(|it| it.range.start);
    res
}
