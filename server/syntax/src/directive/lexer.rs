//! Tokens of directive text, with offsets into the user's text.

use crate::TextRange;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TokenKind {
    Ident,
    Int,
    LParen,
    RParen,
    Comma,
    Colon,
    DoubleColon,
    Star,
    Plus,
    Minus,
    Slash,
    Power,
    Equals,
    /// Anything a directive cannot contain.
    Unexpected,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Token {
    pub kind: TokenKind,
    pub range: TextRange,
}

/// Appends the tokens of `text[start..end]` to `out`.
pub(crate) fn lex_segment(text: &str, start: usize, end: usize, out: &mut Vec<Token>) {
    let bytes = text.as_bytes();
    let mut idx = start;
    while idx < end {
        let byte = bytes[idx];
        let token_start = idx;
        let kind = match byte {
            b' ' | b'\t' | b'\x0c' | b'\r' => {
                idx += 1;
                continue;
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                while idx < end && (bytes[idx].is_ascii_alphanumeric() || bytes[idx] == b'_') {
                    idx += 1;
                }
                out.push(Token { kind: TokenKind::Ident, range: TextRange::new(token_start, idx) });
                continue;
            }
            b'0'..=b'9' => {
                while idx < end && (bytes[idx].is_ascii_digit() || bytes[idx] == b'_') {
                    idx += 1;
                }
                out.push(Token { kind: TokenKind::Int, range: TextRange::new(token_start, idx) });
                continue;
            }
            b'(' => TokenKind::LParen,
            b')' => TokenKind::RParen,
            b',' => TokenKind::Comma,
            b':' if bytes.get(idx + 1) == Some(&b':') && idx + 1 < end => {
                idx += 2;
                out.push(Token { kind: TokenKind::DoubleColon, range: TextRange::new(token_start, idx) });
                continue;
            }
            b':' => TokenKind::Colon,
            b'*' if bytes.get(idx + 1) == Some(&b'*') && idx + 1 < end => {
                idx += 2;
                out.push(Token { kind: TokenKind::Power, range: TextRange::new(token_start, idx) });
                continue;
            }
            b'*' => TokenKind::Star,
            b'+' => TokenKind::Plus,
            b'-' => TokenKind::Minus,
            b'/' => TokenKind::Slash,
            b'=' => TokenKind::Equals,
            _ => TokenKind::Unexpected,
        };
        // Step over one whole character so ranges stay on char boundaries.
        let width = text[idx..].chars().next().map_or(1, char::len_utf8);
        idx += width;
        out.push(Token { kind, range: TextRange::new(token_start, idx) });
    }
}
