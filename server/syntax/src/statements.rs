//! The statements of a line of text, found without a parse: split at the
//! `;` outside character literals, up to a `!` comment, each with its label
//! apart, and whether the line continues on the next (a trailing `&`). The
//! chunker ([`crate::chunks`]) reads every line of a document with it at
//! every edit, and the host scan ([`crate::host_spec`]) joins the pieces of
//! continued lines with it: it allocates nothing.

/// One statement (or, on a continued line, a piece of one) of a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineStatement<'a> {
    /// Its text: blanks trimmed, its label and a continuation `&` removed.
    pub text: &'a str,
    /// Its label (the digits it begins with), if any. The first piece of a
    /// continuation line has none: its digits continue the statement before.
    pub label: Option<&'a str>,
}

/// What one line passes to the next: whether it continues, and the quote
/// of a character literal it leaves open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Carried {
    pub continued: bool,
    pub(crate) quote: Option<u8>,
}

/// The statements of `line` (without its newline), given what the line
/// before it `carried`: an iterator whose [`LineStatements::carried`] then
/// tells what this one carries to the next. A line that is all comment or
/// blanks has no statement; a statement left empty (`a;;b`, a lone `&`) is
/// skipped.
pub fn line_statements(line: &str, carried: Carried) -> LineStatements<'_> {
    let mut at = 0;
    if carried.continued {
        // A continuation line may begin with `&`: the statement goes on after it.
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix('&') {
            at = line.len() - rest.len();
        }
    }
    LineStatements {
        line,
        at,
        quote: if carried.continued { carried.quote } else { None },
        first: true,
        continued: carried.continued,
        done: false,
        continues: false,
    }
}

/// See [`line_statements`].
pub struct LineStatements<'a> {
    line: &'a str,
    at: usize,
    quote: Option<u8>,
    /// The next piece is the line's first.
    first: bool,
    /// The line continues the one before it.
    continued: bool,
    done: bool,
    continues: bool,
}

impl LineStatements<'_> {
    /// What the line carries to the next, once every statement was read.
    pub fn carried(&self) -> Carried {
        debug_assert!(self.done, "read every statement of the line first");
        Carried { continued: self.continues, quote: if self.continues { self.quote } else { None } }
    }
}

impl<'a> Iterator for LineStatements<'a> {
    type Item = LineStatement<'a>;

    fn next(&mut self) -> Option<LineStatement<'a>> {
        let bytes = self.line.as_bytes();
        while !self.done {
            let start = self.at;
            let mut idx = start;
            let mut semicolon = None;
            while idx < bytes.len() {
                let byte = bytes[idx];
                match (self.quote, byte) {
                    (Some(open), _) if byte == open => self.quote = None,
                    (Some(_), _) => {}
                    (None, b'\'' | b'"') => self.quote = Some(byte),
                    (None, b'!') => break,
                    (None, b';') => {
                        semicolon = Some(idx);
                        break;
                    }
                    _ => {}
                }
                idx += 1;
            }
            let piece = match semicolon {
                Some(at) => {
                    self.at = at + 1;
                    &self.line[start..at]
                }
                None => {
                    self.done = true;
                    let last = self.line[start..idx].trim_end();
                    self.continues = last.ends_with('&');
                    last.strip_suffix('&').unwrap_or(last)
                }
            };
            let continues_statement = std::mem::take(&mut self.first) && self.continued;
            let piece = piece.trim();
            let digits = if continues_statement { 0 } else { piece.bytes().take_while(u8::is_ascii_digit).count() };
            let text = piece[digits..].trim_start();
            if !text.is_empty() {
                return Some(LineStatement { text, label: (digits > 0).then(|| &piece[..digits]) });
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(lines: &[&str]) -> Vec<Vec<(String, Option<String>)>> {
        let mut carried = Carried::default();
        let mut res = Vec::new();
        for line in lines {
            let mut statements = line_statements(line, carried);
            res.push(statements.by_ref().map(|it| (it.text.to_string(), it.label.map(str::to_string))).collect());
            carried = statements.carried();
        }
        res
    }

    fn texts(line: &str) -> (Vec<&str>, bool) {
        let mut statements = line_statements(line, Carried::default());
        let texts = statements.by_ref().map(|it| it.text).collect();
        (texts, statements.carried().continued)
    }

    #[test]
    fn semicolons_and_comments_outside_quotes_end_statements() {
        assert_eq!(texts("  a = 1; b = 'x;y!' ! c; d"), (vec!["a = 1", "b = 'x;y!'"], false));
        assert_eq!(texts("a = \"it's\"; b = 'it''s; ok'"), (vec!["a = \"it's\"", "b = 'it''s; ok'"], false));
        assert_eq!(texts("! only a comment"), (vec![], false));
        assert_eq!(texts("   "), (vec![], false));
        assert_eq!(texts("a;; ;b"), (vec!["a", "b"], false));
        // No cap on the statements of a line.
        let many = (0..20).map(|it| format!("x{it} = {it}")).collect::<Vec<_>>().join("; ");
        assert_eq!(texts(&many).0.len(), 20);
    }

    #[test]
    fn labels_are_apart_and_continuations_carried() {
        assert_eq!(
            split(&["100 continue; 20 x = 1", "real :: a(&  ! n", "  & 10), b &", "&"]),
            [
                vec![("continue".into(), Some("100".into())), ("x = 1".into(), Some("20".into()))],
                vec![("real :: a(".into(), None)],
                vec![("10), b".into(), None)],
                vec![],
            ]
        );
        // A character literal continued: what follows its `&` is inside it.
        assert_eq!(
            split(&["s = 'a;b &", "&c ! d'; t = 1 ! e"]),
            [vec![("s = 'a;b".into(), None)], vec![("c ! d'".into(), None), ("t = 1".into(), None)]]
        );
        // A line that does not continue carries no quote.
        assert_eq!(
            split(&["s = 'open", "t = 1 ! c"]),
            [vec![("s = 'open".into(), None)], vec![("t = 1".into(), None)]]
        );
    }
}
