//! The part of the C preprocessor Fortran codes use (`gfortran -cpp`):
//! object-like macros substituted in Fortran lines, and the integer
//! expressions of `#if`/`#elif` with `defined`. The directives themselves
//! (`#define`, `#if`, `#include`...) are read line by line in
//! [`crate::include`], which keeps the source map.
//!
//! Function-like macros are recorded (so `defined(F)` holds) but not
//! substituted; text inside Fortran character literals is left alone.

use std::collections::HashMap;

/// The macros defined at a point of the text: name (case-sensitive, as cpp) -> body.
#[derive(Clone, Debug, Default)]
pub struct Macros {
    table: HashMap<String, Macro>,
}

#[derive(Clone, Debug)]
struct Macro {
    body: String,
    /// `#define F(x) ...`: defined, never substituted here.
    function_like: bool,
}

/// One substitution made in a line: `source` (a range of the line) became `expanded` (a range of the result).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Substitution {
    pub source: (usize, usize),
    pub expanded: (usize, usize),
}

fn is_ident_start(byte: u8) -> bool {
    byte.is_ascii_alphabetic() || byte == b'_'
}

fn is_ident_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

impl Macros {
    /// The macros `gfortran -cpp` predefines that programs test.
    pub fn predefined() -> Macros {
        let mut macros = Macros::default();
        macros.define("__GFORTRAN__", "1");
        macros
    }

    /// `NAME` or `NAME=VALUE` (as `-D` takes it; `-D NAME` means 1).
    pub fn define_option(&mut self, option: &str) {
        match option.split_once('=') {
            Some((name, value)) => self.define(name.trim(), value.trim()),
            None => self.define(option.trim(), "1"),
        }
    }

    pub fn define(&mut self, name: &str, body: &str) {
        self.table.insert(name.to_string(), Macro { body: body.to_string(), function_like: false });
    }

    pub fn undefine(&mut self, name: &str) {
        self.table.remove(name);
    }

    pub fn is_defined(&self, name: &str) -> bool {
        self.table.contains_key(name)
    }

    /// Reads the rest of a `#define` line: `NAME BODY` or `NAME(ARGS) BODY`.
    /// `Err` says what is wrong.
    pub fn define_directive(&mut self, rest: &str) -> Result<(), String> {
        let rest = rest.trim_start();
        let name_len = rest.bytes().take_while(|it| is_ident_byte(*it)).count();
        if name_len == 0 || !is_ident_start(rest.as_bytes()[0]) {
            return Err("`#define` needs a macro name".to_string());
        }
        let name = &rest[..name_len];
        let after = &rest[name_len..];
        let function_like = after.starts_with('(');
        let body = if function_like { after.find(')').map_or("", |close| &after[close + 1..]) } else { after };
        let body = strip_c_comments(body).trim().to_string();
        self.table.insert(name.to_string(), Macro { body, function_like });
        Ok(())
    }

    /// `line` with its object-like macros substituted (again in what they
    /// expand to, never a macro inside its own expansion), and where.
    /// Character literals are left alone; `None` when nothing changed.
    pub fn substitute(&self, line: &str) -> Option<(String, Vec<Substitution>)> {
        if self.table.is_empty() {
            return None;
        }
        let bytes = line.as_bytes();
        let mut out = String::with_capacity(line.len());
        let mut subs = Vec::new();
        let mut idx = 0;
        let mut copied = 0;
        let mut quote: Option<u8> = None;
        while idx < bytes.len() {
            let byte = bytes[idx];
            if let Some(open) = quote {
                if byte == open {
                    quote = None;
                }
                idx += 1;
                continue;
            }
            if byte == b'\'' || byte == b'"' {
                quote = Some(byte);
                idx += 1;
                continue;
            }
            if is_ident_start(byte) && (idx == 0 || !is_ident_byte(bytes[idx - 1])) {
                let end = idx + bytes[idx..].iter().take_while(|it| is_ident_byte(**it)).count();
                let name = &line[idx..end];
                if let Some(found) = self.table.get(name).filter(|it| !it.function_like) {
                    out.push_str(&line[copied..idx]);
                    let start = out.len();
                    let mut active = vec![name.to_string()];
                    out.push_str(&self.rescan(&found.body, &mut active));
                    subs.push(Substitution { source: (idx, end), expanded: (start, out.len()) });
                    copied = end;
                }
                idx = end;
                continue;
            }
            idx += 1;
        }
        if subs.is_empty() {
            return None;
        }
        out.push_str(&line[copied..]);
        Some((out, subs))
    }

    /// A macro body with the macros in it substituted, except those being expanded (`active`).
    fn rescan(&self, body: &str, active: &mut Vec<String>) -> String {
        let bytes = body.as_bytes();
        let mut out = String::with_capacity(body.len());
        let mut idx = 0;
        while idx < bytes.len() {
            if is_ident_start(bytes[idx]) && (idx == 0 || !is_ident_byte(bytes[idx - 1])) {
                let end = idx + bytes[idx..].iter().take_while(|it| is_ident_byte(**it)).count();
                let name = &body[idx..end];
                match self.table.get(name).filter(|it| !it.function_like) {
                    Some(found) if !active.iter().any(|it| it == name) && active.len() < 64 => {
                        active.push(name.to_string());
                        out.push_str(&self.rescan(&found.body, active));
                        active.pop();
                    }
                    _ => out.push_str(name),
                }
                idx = end;
            } else {
                let ch = body[idx..].chars().next().expect("in bounds");
                out.push(ch);
                idx += ch.len_utf8();
            }
        }
        out
    }

    /// The value of the expression of an `#if` or `#elif`: `defined NAME`,
    /// `defined(NAME)`, macros, integers, C operators; a name that is no
    /// macro is 0, as in cpp.
    pub fn evaluate(&self, expression: &str) -> Result<i64, String> {
        let tokens = tokenize(&strip_c_comments(expression), self)?;
        let mut parser = ExprParser { tokens: &tokens, pos: 0, depth: 0 };
        let value = parser.conditional()?;
        match parser.tokens.get(parser.pos) {
            None => Ok(value),
            Some(token) => Err(format!("unexpected `{}` in the `#if` expression", token.text())),
        }
    }
}

/// `/* ... */` and `// ...` removed (cpp does so before reading a directive).
fn strip_c_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("/*") {
            rest = after.find("*/").map_or("", |end| &after[end + 2..]);
            out.push(' ');
        } else if rest.starts_with("//") {
            break;
        } else {
            let ch = rest.chars().next().expect("not empty");
            out.push(ch);
            rest = &rest[ch.len_utf8()..];
        }
    }
    out
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Number(i64),
    Op(&'static str),
}

impl Token {
    fn text(&self) -> String {
        match self {
            Token::Number(value) => value.to_string(),
            Token::Op(op) => op.to_string(),
        }
    }
}

const OPERATORS: &[&str] = &[
    "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "(", ")", "!", "~", "*", "/", "%", "+", "-", "<", ">", "&", "^",
    "|", "?", ":",
];

/// Tokens of an `#if` expression with `defined` and macros resolved.
fn tokenize(text: &str, macros: &Macros) -> Result<Vec<Token>, String> {
    let expanded = {
        // `defined X` first, so that X is not substituted.
        let mut out = String::new();
        let bytes = text.as_bytes();
        let mut idx = 0;
        while idx < bytes.len() {
            if text[idx..].starts_with("defined") && (idx == 0 || !is_ident_byte(bytes[idx - 1])) {
                let after = &text[idx + 7..];
                if after.bytes().next().is_none_or(|it| !is_ident_byte(it)) {
                    let trimmed = after.trim_start();
                    let (inner, parens) = match trimmed.strip_prefix('(') {
                        Some(inner) => (inner.trim_start(), true),
                        None => (trimmed, false),
                    };
                    let len = inner.bytes().take_while(|it| is_ident_byte(*it)).count();
                    if len == 0 {
                        return Err("`defined` needs a macro name".to_string());
                    }
                    let mut rest = &inner[len..];
                    if parens {
                        rest = rest.trim_start().strip_prefix(')').ok_or("`defined(` needs its `)`")?;
                    }
                    out.push_str(if macros.is_defined(&inner[..len]) { " 1 " } else { " 0 " });
                    idx = text.len() - rest.len();
                    continue;
                }
            }
            let ch = text[idx..].chars().next().expect("in bounds");
            out.push(ch);
            idx += ch.len_utf8();
        }
        macros.rescan(&out, &mut Vec::new())
    };
    let mut tokens = Vec::new();
    let bytes = expanded.as_bytes();
    let mut idx = 0;
    while idx < bytes.len() {
        let byte = bytes[idx];
        if byte.is_ascii_whitespace() {
            idx += 1;
        } else if byte.is_ascii_digit() {
            let len = bytes[idx..].iter().take_while(|it| it.is_ascii_alphanumeric()).count();
            let literal = expanded[idx..idx + len].trim_end_matches(['u', 'U', 'l', 'L']);
            let value = if let Some(hex) = literal.strip_prefix("0x").or_else(|| literal.strip_prefix("0X")) {
                i64::from_str_radix(hex, 16)
            } else if literal.len() > 1 && literal.starts_with('0') {
                i64::from_str_radix(&literal[1..], 8)
            } else {
                literal.parse()
            };
            tokens.push(Token::Number(value.map_err(|_| format!("`{literal}` is not an integer"))?));
            idx += len;
        } else if is_ident_start(byte) {
            // A name no macro defines is 0.
            idx += bytes[idx..].iter().take_while(|it| is_ident_byte(**it)).count();
            tokens.push(Token::Number(0));
        } else if let Some(op) = OPERATORS.iter().find(|op| expanded[idx..].starts_with(**op)) {
            tokens.push(Token::Op(op));
            idx += op.len();
        } else {
            let ch = expanded[idx..].chars().next().expect("in bounds");
            return Err(format!("unexpected `{ch}` in the `#if` expression"));
        }
    }
    Ok(tokens)
}

struct ExprParser<'a> {
    tokens: &'a [Token],
    pos: usize,
    /// Nesting of the recursive descent, bounded (hostile input must not overflow the stack).
    depth: usize,
}

const MAX_EXPRESSION_DEPTH: usize = 256;

/// Binary operators by precedence, lowest first (C's table).
const LEVELS: &[&[&str]] = &[
    &["||"],
    &["&&"],
    &["|"],
    &["^"],
    &["&"],
    &["==", "!="],
    &["<", "<=", ">", ">="],
    &["<<", ">>"],
    &["+", "-"],
    &["*", "/", "%"],
];

impl ExprParser<'_> {
    fn eat(&mut self, op: &str) -> bool {
        if self.tokens.get(self.pos) == Some(&Token::Op(leak(op))) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn conditional(&mut self) -> Result<i64, String> {
        self.depth += 1;
        let value = self.conditional_inner();
        self.depth -= 1;
        value
    }

    fn conditional_inner(&mut self) -> Result<i64, String> {
        if self.depth > MAX_EXPRESSION_DEPTH {
            return Err("`#if` expression nested too deep".to_string());
        }
        let condition = self.binary(0)?;
        if !self.eat("?") {
            return Ok(condition);
        }
        let then = self.conditional()?;
        if !self.eat(":") {
            return Err("`?` without `:` in the `#if` expression".to_string());
        }
        let otherwise = self.conditional()?;
        Ok(if condition != 0 { then } else { otherwise })
    }

    fn binary(&mut self, level: usize) -> Result<i64, String> {
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut left = self.binary(level + 1)?;
        'next: loop {
            for op in LEVELS[level] {
                if self.eat(op) {
                    let right = self.binary(level + 1)?;
                    left = apply(op, left, right)?;
                    continue 'next;
                }
            }
            return Ok(left);
        }
    }

    fn unary(&mut self) -> Result<i64, String> {
        self.depth += 1;
        let value = self.unary_inner();
        self.depth -= 1;
        value
    }

    fn unary_inner(&mut self) -> Result<i64, String> {
        if self.depth > MAX_EXPRESSION_DEPTH {
            return Err("`#if` expression nested too deep".to_string());
        }
        if self.eat("!") {
            return Ok((self.unary()? == 0) as i64);
        }
        if self.eat("~") {
            return Ok(!self.unary()?);
        }
        if self.eat("-") {
            return Ok(self.unary()?.wrapping_neg());
        }
        if self.eat("+") {
            return self.unary();
        }
        if self.eat("(") {
            let value = self.conditional()?;
            if !self.eat(")") {
                return Err("`(` without `)` in the `#if` expression".to_string());
            }
            return Ok(value);
        }
        match self.tokens.get(self.pos) {
            Some(Token::Number(value)) => {
                self.pos += 1;
                Ok(*value)
            }
            Some(other) => Err(format!("unexpected `{}` in the `#if` expression", other.text())),
            None => Err("the `#if` expression ends too early".to_string()),
        }
    }
}

/// The `&'static str` of an operator of [`OPERATORS`] (tokens hold those).
fn leak(op: &str) -> &'static str {
    OPERATORS.iter().find(|it| **it == op).copied().unwrap_or("")
}

fn apply(op: &str, left: i64, right: i64) -> Result<i64, String> {
    Ok(match op {
        "||" => (left != 0 || right != 0) as i64,
        "&&" => (left != 0 && right != 0) as i64,
        "|" => left | right,
        "^" => left ^ right,
        "&" => left & right,
        "==" => (left == right) as i64,
        "!=" => (left != right) as i64,
        "<" => (left < right) as i64,
        "<=" => (left <= right) as i64,
        ">" => (left > right) as i64,
        ">=" => (left >= right) as i64,
        "<<" => left.wrapping_shl(right as u32),
        ">>" => left.wrapping_shr(right as u32),
        "+" => left.wrapping_add(right),
        "-" => left.wrapping_sub(right),
        "*" => left.wrapping_mul(right),
        "/" | "%" if right == 0 => return Err("division by zero in the `#if` expression".to_string()),
        "/" => left.wrapping_div(right),
        "%" => left.wrapping_rem(right),
        _ => unreachable!("operator {op} of LEVELS"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_expressions_follow_c() {
        let mut macros = Macros::predefined();
        macros.define_option("N=4");
        macros.define_option("DEBUG");
        assert_eq!(macros.evaluate("defined(DEBUG) && N > 2"), Ok(1));
        assert_eq!(macros.evaluate("defined UNDEFINED || N*2 == 9"), Ok(0));
        assert_eq!(macros.evaluate("UNKNOWN + 1"), Ok(1));
        assert_eq!(macros.evaluate("(N << 1) % 4 ? 10 : 20"), Ok(20));
        assert_eq!(macros.evaluate("!defined(__GFORTRAN__)"), Ok(0));
        assert!(macros.evaluate("N +").is_err());
        assert!(macros.evaluate("1 / 0").is_err());
    }

    #[test]
    fn object_like_macros_are_substituted_outside_literals() {
        let mut macros = Macros::default();
        macros.define_directive("SIZE 100 /* points */").unwrap();
        macros.define_directive("M SIZE+1").unwrap();
        macros.define_directive("SQ(x) ((x)*(x))").unwrap();
        let (line, subs) = macros.substitute("      n = SIZE ; m = M ; print *, 'SIZE', SQ(2), NSIZE").unwrap();
        assert_eq!(line, "      n = 100 ; m = 100+1 ; print *, 'SIZE', SQ(2), NSIZE");
        assert_eq!(subs[0], Substitution { source: (10, 14), expanded: (10, 13) });
        assert_eq!(subs.len(), 2);
        assert!(macros.substitute("x = 'M'").is_none());
    }
}

/// A preprocessed text of the same length as `text`, for the editor, where
/// every offset must stay the user's: directive lines and the lines of
/// inactive `#if` regions become comments, and a macro is substituted only
/// where its value fits in its name (padded with blanks); longer ones stay
/// as written. Active `#include` lines stay as written, for the caller to
/// follow (`include::expand` with `cpp`: the masked text has no other
/// directive). Also returns the inactive regions.
pub fn mask(text: &str, form: crate::SourceForm, defines: &[String]) -> (String, Vec<crate::TextRange>) {
    mask_with(text, form, defines, &|_, _| None)
}

/// Finds an `#include`d file for [`mask_with`]: (its name, the including
/// file's name) -> (the name it was found by, its text).
pub type FindHeader<'a> = dyn Fn(&str, &str) -> Option<(String, String)> + 'a;

/// [`mask`], with `header` finding an `#include`d file (its name, and the
/// name of the file that includes it, `""` for `text`) and giving its name
/// and text (`None`: not found): the macros it defines hold after the line.
pub fn mask_with(
    text: &str,
    form: crate::SourceForm,
    defines: &[String],
    header: &FindHeader,
) -> (String, Vec<crate::TextRange>) {
    let mut macros = Macros::predefined();
    for define in defines {
        macros.define_option(define);
    }
    let mut out = String::with_capacity(text.len());
    let mut inactive: Vec<crate::TextRange> = Vec::new();
    // Per open `#if`: (the lines before it were active, a branch was taken, this branch is active).
    let mut groups: Vec<(bool, bool, bool)> = Vec::new();
    for line in text.split_inclusive('\n') {
        let start = out.len();
        let content = line.trim_end_matches(['\n', '\r']);
        let terminator = &line[content.len()..];
        let active = groups.last().is_none_or(|it| it.2);
        if let Some(directive) = content.trim_start().strip_prefix('#') {
            if run_directive(directive, &mut groups, &mut macros, header, "", 0) {
                // An active `#include`: the caller follows it.
                out.push_str(content);
                out.push_str(terminator);
                continue;
            }
            out.push_str(&commented(content));
        } else if !active {
            out.push_str(&commented(content));
            match inactive.last_mut() {
                Some(last) if last.end + 1 >= start => *last = crate::TextRange::new(last.start, start + content.len()),
                _ => inactive.push(crate::TextRange::new(start, start + content.len())),
            }
        } else if is_comment_line(content, form) {
            out.push_str(content);
        } else {
            match macros.substitute(content) {
                Some((substituted, subs)) => {
                    let mut copied = 0;
                    for sub in subs {
                        let value = &substituted[sub.expanded.0..sub.expanded.1];
                        let name_len = sub.source.1 - sub.source.0;
                        out.push_str(&content[copied..sub.source.0]);
                        if value.len() <= name_len {
                            out.push_str(value);
                            out.extend(std::iter::repeat_n(' ', name_len - value.len()));
                        } else {
                            out.push_str(&content[sub.source.0..sub.source.1]);
                        }
                        copied = sub.source.1;
                    }
                    out.push_str(&content[copied..]);
                }
                None => out.push_str(content),
            }
        }
        out.push_str(terminator);
    }
    debug_assert_eq!(out.len(), text.len());
    (out, inactive)
}

/// The file an `#include` names (`"file"` or `<file>`).
pub fn include_name(argument: &str) -> Option<&str> {
    let argument = argument.trim();
    argument
        .strip_prefix('"')
        .and_then(|it| it.split_once('"'))
        .or_else(|| argument.strip_prefix('<').and_then(|it| it.split_once('>')))
        .map(|(name, _)| name)
}

/// Runs one directive line (`directive` follows its `#`) on the open `#if`
/// groups (per group: the lines before it were active, a branch was
/// taken, this branch is active) and on `macros`, with the macros of an
/// active `#include`d file (found from `from`, at `depth` includes down);
/// returns whether it is an active `#include`.
fn run_directive(
    directive: &str,
    groups: &mut Vec<(bool, bool, bool)>,
    macros: &mut Macros,
    header: &FindHeader,
    from: &str,
    depth: usize,
) -> bool {
    let directive = directive.trim_start();
    let keyword_len = directive.bytes().take_while(|it| it.is_ascii_alphabetic()).count();
    let (keyword, argument) = directive.split_at(keyword_len);
    let active = groups.last().is_none_or(|it| it.2);
    match keyword {
        "if" | "ifdef" | "ifndef" => {
            let taken = active
                && match keyword {
                    "if" => macros.evaluate(argument).is_ok_and(|it| it != 0),
                    "ifdef" => macros.is_defined(argument.trim()),
                    _ => !macros.is_defined(argument.trim()),
                };
            groups.push((active, taken, taken));
        }
        "elif" | "else" => {
            if let Some((outer, taken, current)) = groups.last_mut() {
                let take =
                    *outer && !*taken && (keyword == "else" || macros.evaluate(argument).is_ok_and(|it| it != 0));
                *current = take;
                *taken |= take;
            }
        }
        "endif" => {
            groups.pop();
        }
        "define" if active => {
            let _ = macros.define_directive(argument);
        }
        "undef" if active => macros.undefine(argument.trim()),
        "include" if active => {
            // As deep as `include::expand` follows (a cycle stops there).
            let found = include_name(argument).and_then(|it| header(it, from));
            if let Some((name, text)) = found.filter(|_| depth < crate::include::MAX_INCLUDE_DEPTH) {
                define_from(&name, &text, macros, header, depth + 1);
            }
            return true;
        }
        _ => {}
    }
    false
}

/// Runs the directive lines of an included file (`name`) on `macros`, as
/// the preprocessor reading it would.
fn define_from(name: &str, text: &str, macros: &mut Macros, header: &FindHeader, depth: usize) {
    let mut groups: Vec<(bool, bool, bool)> = Vec::new();
    for line in text.lines() {
        if let Some(directive) = line.trim_start().strip_prefix('#') {
            run_directive(directive, &mut groups, macros, header, name, depth);
        }
    }
}

/// A comment line of the same length: `!` in place of the first
/// character, and a blank in place of an ASCII second one (so that a
/// `!HPF$` line left out does not stay a directive).
fn commented(content: &str) -> String {
    let Some(first) = content.chars().next() else { return String::new() };
    let mut res = String::with_capacity(content.len());
    res.push('!');
    res.extend(std::iter::repeat_n(' ', first.len_utf8() - 1));
    let rest = &content[first.len_utf8()..];
    match rest.as_bytes().first() {
        Some(byte) if byte.is_ascii() => {
            res.push(' ');
            res.push_str(&rest[1..]);
        }
        _ => res.push_str(rest),
    }
    res
}

fn is_comment_line(content: &str, form: crate::SourceForm) -> bool {
    (form.is_fixed() && content.starts_with(['c', 'C', '*'])) || content.trim_start().starts_with('!')
}

#[cfg(test)]
mod mask_tests {
    use super::*;

    #[test]
    fn masking_keeps_every_offset() {
        let text = "#define N 8\n#define LONG 123456\n#ifdef DEBUG\n      print *, 'debug'\n#endif\n      real a(N), b(LONG)\n";
        let (masked, inactive) = mask(text, crate::SourceForm::FIXED, &[]);
        assert_eq!(
            masked,
            "! efine N 8\n! efine LONG 123456\n! fdef DEBUG\n!     print *, 'debug'\n! ndif\n      real a(8), b(LONG)\n"
        );
        assert_eq!(inactive, [crate::TextRange::new(45, 67)]);
        let (masked, inactive) = mask(text, crate::SourceForm::FIXED, &["DEBUG".to_string()]);
        assert!(masked.contains("      print *, 'debug'") && inactive.is_empty());
    }

    #[test]
    fn macros_of_included_files_hold_after_the_include() {
        // b.h is found next to a.h, which includes it (not next to the document).
        let header = |name: &str, from: &str| match (name, from) {
            ("a.h", "") => Some(("inc/a.h".to_string(), "#include \"b.h\"\n".to_string())),
            ("b.h", "inc/a.h") => Some(("inc/b.h".to_string(), "#ifndef N\n#define N 4\n#endif\n".to_string())),
            _ => None,
        };
        let text = "      real x(N)\n#include \"a.h\"\n      real y(N)\n";
        let (masked, _) = mask_with(text, crate::SourceForm::FIXED, &[], &header);
        assert_eq!(masked, "      real x(N)\n#include \"a.h\"\n      real y(4)\n");
    }

    #[test]
    fn active_includes_stay_for_the_caller_to_follow() {
        let text = "#include \"a.h\"\n#ifdef B\n#include \"b.h\"\n#endif\n";
        let (masked, _) = mask(text, crate::SourceForm::Free, &[]);
        assert_eq!(masked, "#include \"a.h\"\n! fdef B\n! nclude \"b.h\"\n! ndif\n");
    }
}
