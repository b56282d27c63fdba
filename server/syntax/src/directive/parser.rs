//! Recursive-descent parser of one joined directive.

use super::ast::*;
use super::lexer::{Token, TokenKind};
use crate::{BinaryOp, Code, Diagnostic, Expr, ExprKind, Name, Subscript, TextRange, UnaryOp};

/// Deeper expressions are rejected instead of overflowing the stack. Each
/// level of `A(A(...))` costs about 15 KB of stack in a debug build (seven
/// frames), so 128 levels came within a few KB of a 2 MiB thread stack; 64
/// levels (every operator counts one) are far more than any directive needs.
const MAX_EXPR_DEPTH: usize = 64;

#[derive(Debug)]
pub(crate) struct ParseError {
    pub range: TextRange,
    pub message: String,
    /// The first word is not a directive keyword.
    pub unknown_keyword: bool,
}

type PResult<T> = Result<T, ParseError>;

pub(crate) struct Parser<'a> {
    text: &'a str,
    tokens: &'a [Token],
    pos: usize,
    /// Where the directive ends, for errors at the end of input.
    end: usize,
    depth: usize,
    /// Text that starts each new directive line a fix writes: the line
    /// terminator, the indentation, the sentinel and (fixed form) column 6.
    line_prefix: String,
    /// HPF030 notes on dialect forms the parser accepted.
    pub(crate) notes: Vec<Diagnostic>,
}

const MAPPING_KEYWORDS: &[&str] = &[
    "processors",
    "template",
    "dimension",
    "distribute",
    "redistribute",
    "align",
    "realign",
    "dynamic",
    "inherit",
    "shadow",
    "sequence",
];

/// Every directive keyword, for completion and hover.
pub const DIRECTIVE_KEYWORDS: &[&str] = &[
    "PROCESSORS",
    "TEMPLATE",
    "DISTRIBUTE",
    "ALIGN",
    "DIMENSION",
    "DYNAMIC",
    "REALIGN",
    "REDISTRIBUTE",
    "INHERIT",
    "INDEPENDENT",
    "ON",
    "RESIDENT",
    "SHADOW",
    "SEQUENCE",
    "END ON",
    "END RESIDENT",
];

impl<'a> Parser<'a> {
    pub(crate) fn new(text: &'a str, tokens: &'a [Token], end: usize) -> Parser<'a> {
        Parser { text, tokens, pos: 0, end, depth: 0, line_prefix: "\n!HPF$ ".to_string(), notes: Vec::new() }
    }

    /// See [`Parser::line_prefix`].
    pub(crate) fn with_line_prefix(mut self, prefix: String) -> Parser<'a> {
        self.line_prefix = prefix;
        self
    }

    fn slice(&self, range: TextRange) -> &'a str {
        self.text.get(range.to_range()).unwrap_or("")
    }

    /// Records an accepted dialect form with the fix that spells it the standard way.
    fn dialect(&mut self, range: TextRange, message: String, title: String, fix_range: TextRange, new_text: String) {
        self.notes.push(Diagnostic::new(Code::Dialect, range, message).with_fix(title, fix_range, new_text));
    }

    /// Parses the whole directive. The keyword is returned even on error so
    /// that hovers and highlighting still work on half-typed directives.
    pub(crate) fn parse_directive(&mut self) -> (Option<Name>, PResult<DirectiveBody>) {
        let Some(first) = self.peek() else {
            return (
                None,
                Err(ParseError {
                    range: TextRange::empty(self.end),
                    message: "empty HPF directive".to_string(),
                    unknown_keyword: false,
                }),
            );
        };
        if first.kind != TokenKind::Ident {
            return (
                None,
                Err(ParseError {
                    range: first.range,
                    message: "expected a directive keyword".to_string(),
                    unknown_keyword: true,
                }),
            );
        }
        let keyword = self.name_of(first);
        let lower = keyword.key();
        let body = match lower.as_str() {
            "independent" => self.independent(),
            "on" | "onhome" => self.on(),
            "resident" => self.resident_directive(),
            "end" | "endon" | "endresident" => self.end_block(),
            "nosequence" | "no" => self.no_sequence(),
            word if MAPPING_KEYWORDS.contains(&word) => self.mapping(),
            _ => Err(ParseError {
                range: keyword.range,
                message: format!(
                    "unknown HPF directive `{}`{}",
                    keyword.text,
                    suggestion(&lower).map(|it| format!("; did you mean `{it}`?")).unwrap_or_default()
                ),
                unknown_keyword: true,
            }),
        };
        let body = body.and_then(|body| {
            self.expect_end()?;
            Ok(body)
        });
        (Some(keyword), body)
    }

    // ---- token helpers -------------------------------------------------

    fn peek(&self) -> Option<Token> {
        self.tokens.get(self.pos).copied()
    }

    fn peek_kind(&self) -> Option<TokenKind> {
        self.peek().map(|it| it.kind)
    }

    fn nth_kind(&self, n: usize) -> Option<TokenKind> {
        self.tokens.get(self.pos + n).map(|it| it.kind)
    }

    fn bump(&mut self) -> Option<Token> {
        let token = self.peek()?;
        self.pos += 1;
        Some(token)
    }

    fn at(&self, kind: TokenKind) -> bool {
        self.peek_kind() == Some(kind)
    }

    fn eat(&mut self, kind: TokenKind) -> Option<Token> {
        if self.at(kind) {
            self.bump()
        } else {
            None
        }
    }

    fn at_word(&self, word: &str) -> bool {
        self.peek().is_some_and(|token| {
            token.kind == TokenKind::Ident && self.text[token.range.to_range()].eq_ignore_ascii_case(word)
        })
    }

    fn eat_word(&mut self, word: &str) -> Option<Name> {
        if self.at_word(word) {
            let token = self.bump()?;
            Some(self.name_of(token))
        } else {
            None
        }
    }

    fn name_of(&self, token: Token) -> Name {
        Name::new(&self.text[token.range.to_range()], token.range)
    }

    fn here(&self) -> TextRange {
        self.peek().map_or(TextRange::empty(self.end), |it| it.range)
    }

    fn previous_end(&self) -> usize {
        if self.pos == 0 {
            return self.tokens.first().map_or(self.end, |it| it.range.start);
        }
        self.tokens[self.pos - 1].range.end
    }

    fn error<T>(&self, message: impl Into<String>) -> PResult<T> {
        let found = match self.peek() {
            Some(token) => format!(", found `{}`", &self.text[token.range.to_range()]),
            None => ", found the end of the directive".to_string(),
        };
        Err(ParseError { range: self.here(), message: format!("{}{found}", message.into()), unknown_keyword: false })
    }

    fn expect(&mut self, kind: TokenKind, what: &str) -> PResult<Token> {
        match self.eat(kind) {
            Some(token) => Ok(token),
            None => self.error(format!("expected {what}")),
        }
    }

    fn expect_name(&mut self, what: &str) -> PResult<Name> {
        match self.eat(TokenKind::Ident) {
            Some(token) => Ok(self.name_of(token)),
            None => self.error(format!("expected {what}")),
        }
    }

    fn expect_word(&mut self, word: &str) -> PResult<Name> {
        match self.eat_word(word) {
            Some(name) => Ok(name),
            None => self.error(format!("expected `{word}`")),
        }
    }

    fn expect_end(&mut self) -> PResult<()> {
        if self.peek().is_some() {
            return self.error("unexpected text after the directive");
        }
        Ok(())
    }

    fn name_list(&mut self, what: &str) -> PResult<Vec<Name>> {
        let mut names = vec![self.expect_name(what)?];
        while self.eat(TokenKind::Comma).is_some() {
            names.push(self.expect_name(what)?);
        }
        Ok(names)
    }

    fn parenthesized_names(&mut self, what: &str) -> PResult<Vec<Name>> {
        self.expect(TokenKind::LParen, "`(`")?;
        let names = self.name_list(what)?;
        self.expect(TokenKind::RParen, "`)`")?;
        Ok(names)
    }

    // ---- mapping directives -------------------------------------------

    fn has_top_level_double_colon(&self) -> bool {
        self.tokens[self.pos..].iter().any(|it| it.kind == TokenKind::DoubleColon)
    }

    fn mapping(&mut self) -> PResult<DirectiveBody> {
        // A comma right after the keyword starts an attribute list even when
        // the `::` is missing: the error is then "expected `::`", not
        // "expected a name".
        if self.has_top_level_double_colon() || self.nth_kind(1) == Some(TokenKind::Comma) {
            return self.attributed_mapping();
        }
        let keyword_token = self.bump().expect("caller saw the keyword");
        let keyword = self.name_of(keyword_token);
        let word = keyword.key();
        let mut entities = Vec::new();
        let kind = match word.as_str() {
            "processors" | "template" => {
                entities = self.entity_list(true)?;
                if word == "processors" {
                    AttrKind::Processors
                } else {
                    AttrKind::Template
                }
            }
            "dynamic" | "inherit" | "sequence" => {
                if word == "sequence" && self.peek().is_none() {
                    // A bare SEQUENCE applies to the whole unit.
                } else {
                    entities = self.entity_list(false)?;
                }
                match word.as_str() {
                    "dynamic" => AttrKind::Dynamic,
                    "inherit" => AttrKind::Inherit,
                    _ => AttrKind::Sequence,
                }
            }
            "distribute" | "redistribute" => {
                let name = self.expect_name("the name of the array or template to distribute")?;
                entities.push(Entity { range: name.range, name, args: None });
                let spec = self.dist_directive_stuff()?;
                if word == "distribute" {
                    AttrKind::Distribute(spec)
                } else {
                    AttrKind::Redistribute(spec)
                }
            }
            "align" | "realign" => {
                let name = self.expect_name("the name of the array to align")?;
                entities.push(Entity { range: name.range, name, args: None });
                let sources = if self.at(TokenKind::LParen) { Some(self.subscript_list()?) } else { None };
                if self.at(TokenKind::Comma) {
                    // `ALIGN J(I), K(I) WITH T(I)`, `ALIGN A, B WITH T`: several alignees.
                    entities[0].args = sources;
                    entities[0].range = entities[0].name.range.cover(TextRange::empty(self.previous_end()));
                    self.bump();
                    entities.extend(self.entity_list(true)?);
                    let spec = self.align_with_clause()?;
                    return Ok(self.several_alignees(keyword, entities, spec));
                }
                let mut spec = self.align_with_clause()?;
                spec.sources = sources;
                if word == "align" {
                    AttrKind::Align(spec)
                } else {
                    AttrKind::Realign(spec)
                }
            }
            "shadow" => {
                let name = self.expect_name("the name of the array")?;
                let specs = self.subscript_list()?;
                let range = name.range.cover(TextRange::empty(self.previous_end()));
                entities.push(Entity { range, name, args: None });
                AttrKind::Shadow(specs)
            }
            "dimension" => {
                return Err(ParseError {
                    range: keyword.range,
                    message: "DIMENSION is only an attribute of a combined directive (`... , DIMENSION(..) :: X`)"
                        .into(),
                    unknown_keyword: false,
                })
            }
            _ => unreachable!("checked by the caller"),
        };
        let range = keyword.range.cover(TextRange::empty(self.previous_end()));
        Ok(DirectiveBody::Mapping(Mapping {
            form: MappingForm::Statement,
            attrs: vec![MappingAttr { kind, range, keyword }],
            entities,
            double_colon: None,
        }))
    }

    fn attributed_mapping(&mut self) -> PResult<DirectiveBody> {
        let mut attrs = Vec::new();
        loop {
            attrs.push(self.attribute()?);
            if self.eat(TokenKind::Comma).is_none() {
                break;
            }
        }
        let double_colon = self.expect(TokenKind::DoubleColon, "`,` or `::`")?;
        let mut entities = self.entity_list(true)?;
        // HPFC's `ALIGN WITH T(I, *) :: A(I)` writes the align-source list
        // after the one alignee; it is the list `ALIGN (I) WITH T(I, *) :: A`
        // gives (a list after a PROCESSORS or TEMPLATE name is its shape).
        let declares = attrs
            .iter()
            .any(|it| matches!(it.kind, AttrKind::Processors | AttrKind::Template | AttrKind::Dimension(_)));
        let aligns_by_entity = !declares
            && attrs.iter().any(
                |it| matches!(&it.kind, AttrKind::Align(spec) | AttrKind::Realign(spec) if spec.sources.is_none()),
            )
            && entities.iter().any(|it| it.args.is_some());
        if aligns_by_entity {
            if let [attr] = attrs.as_slice() {
                if let AttrKind::Align(spec) | AttrKind::Realign(spec) = &attr.kind {
                    self.note_one_align_per_alignee(&attr.keyword, &entities, spec);
                }
            }
        }
        if let ([entity], false) = (entities.as_mut_slice(), declares) {
            for attr in &mut attrs {
                if let AttrKind::Align(spec) | AttrKind::Realign(spec) = &mut attr.kind {
                    if spec.sources.is_none() && entity.args.is_some() {
                        spec.sources = entity.args.take();
                    }
                }
            }
        }
        Ok(DirectiveBody::Mapping(Mapping {
            form: MappingForm::Attributed,
            attrs,
            entities,
            double_colon: Some(double_colon.range),
        }))
    }

    /// `ALIGN J(I), K(I) WITH T(I)`: one alignment for several arrays. When
    /// their source lists agree, it is `ALIGN (I) WITH T(I) :: J, K`;
    /// otherwise each alignee keeps its own list ([`Entity::args`]).
    fn several_alignees(&mut self, keyword: Name, mut entities: Vec<Entity>, mut spec: AlignSpec) -> DirectiveBody {
        let lists: Vec<String> = entities.iter().map(|it| self.args_text(it)).collect();
        let shared = lists.windows(2).all(|it| it[0] == it[1]);
        let with = self.slice(TextRange::new(spec.with_keyword.range.start, spec.target_range.end)).to_string();
        let statement = keyword.range.cover(TextRange::empty(self.previous_end()));
        if shared {
            let names: Vec<&str> = entities.iter().map(|it| it.name.text.as_str()).collect();
            let list = if lists[0].is_empty() { String::new() } else { format!("{} ", lists[0]) };
            let standard = format!("{} {list}{with} :: {}", keyword.text, names.join(", "));
            self.dialect(
                statement,
                format!("several alignees in one ALIGN statement; HPF 2.0 writes `{standard}`"),
                format!("Write `{standard}`"),
                statement,
                standard,
            );
            spec.sources = entities[0].args.clone();
            for entity in &mut entities {
                entity.args = None;
            }
        } else {
            self.note_one_align_per_alignee(&keyword, &entities, &spec);
        }
        let kind = if keyword.is("align") { AttrKind::Align(spec) } else { AttrKind::Realign(spec) };
        DirectiveBody::Mapping(Mapping {
            form: MappingForm::Attributed,
            attrs: vec![MappingAttr { kind, range: statement, keyword }],
            entities,
            double_colon: None,
        })
    }

    /// The text of an entity's parenthesised list (`(I, *)`), or empty.
    fn args_text(&self, entity: &Entity) -> String {
        self.slice(TextRange::new(entity.name.range.end, entity.range.end)).trim().to_string()
    }

    /// Alignees with source lists of their own (`ALIGN WITH T(I) :: S(*,I), P(I)`,
    /// `ALIGN J(I), K(J) WITH T(I)`): HPF 2.0 writes one ALIGN per array.
    fn note_one_align_per_alignee(&mut self, keyword: &Name, entities: &[Entity], spec: &AlignSpec) {
        let with = self.slice(TextRange::new(spec.with_keyword.range.start, spec.target_range.end)).to_string();
        let lines: Vec<String> = entities
            .iter()
            .map(|it| format!("{} {}{} {with}", keyword.text, it.name.text, self.args_text(it)))
            .collect();
        let statement = keyword.range.cover(TextRange::empty(self.previous_end()));
        let message = if lines.len() == 1 {
            format!("the align-source list after the alignee is a dialect form; HPF 2.0 writes `{}`", lines[0])
        } else {
            format!(
                "alignees with their own source lists; HPF 2.0 writes one ALIGN per array: `{}`",
                lines.join("`, `")
            )
        };
        let title =
            if lines.len() == 1 { format!("Write `{}`", lines[0]) } else { "Write one ALIGN per array".to_string() };
        self.dialect(statement, message, title, statement, lines.join(&self.line_prefix));
    }

    fn attribute(&mut self) -> PResult<MappingAttr> {
        let keyword = self.expect_name("a mapping attribute (ALIGN, DISTRIBUTE, TEMPLATE, ...)")?;
        let kind = match keyword.key().as_str() {
            "processors" => AttrKind::Processors,
            "template" => AttrKind::Template,
            "dynamic" => AttrKind::Dynamic,
            "inherit" => AttrKind::Inherit,
            "sequence" => AttrKind::Sequence,
            "dimension" => AttrKind::Dimension(self.subscript_list()?),
            "shadow" => AttrKind::Shadow(self.subscript_list()?),
            "distribute" => AttrKind::Distribute(self.dist_attribute_stuff()?),
            "redistribute" => AttrKind::Redistribute(self.dist_attribute_stuff()?),
            "align" | "realign" => {
                let sources = if self.at(TokenKind::LParen) { Some(self.subscript_list()?) } else { None };
                let mut spec = self.align_with_clause()?;
                spec.sources = sources;
                if keyword.is("align") {
                    AttrKind::Align(spec)
                } else {
                    AttrKind::Realign(spec)
                }
            }
            _ => {
                return Err(ParseError {
                    range: keyword.range,
                    message: format!("`{}` is not a mapping attribute", keyword.text),
                    unknown_keyword: false,
                })
            }
        };
        let range = keyword.range.cover(TextRange::empty(self.previous_end()));
        Ok(MappingAttr { kind, range, keyword })
    }

    fn entity_list(&mut self, allow_args: bool) -> PResult<Vec<Entity>> {
        let mut entities = Vec::new();
        loop {
            let name = self.expect_name("a name")?;
            let args = if allow_args && self.at(TokenKind::LParen) { Some(self.subscript_list()?) } else { None };
            let range = name.range.cover(TextRange::empty(self.previous_end()));
            entities.push(Entity { name, args, range });
            if self.eat(TokenKind::Comma).is_none() {
                return Ok(entities);
            }
        }
    }

    /// `(formats) [ONTO target]`, `*(formats)`, `*`, in statement form.
    fn dist_directive_stuff(&mut self) -> PResult<DistSpec> {
        if !self.at(TokenKind::LParen) && !self.at(TokenKind::Star) {
            // `DISTRIBUTE A` and `DISTRIBUTE A ONTO P`: BLOCK in every
            // dimension, as the compilers of that dialect did (the model
            // knows the rank, and reports the form).
            if self.peek().is_none() || (self.at_word("onto") && self.nth_kind(1) != Some(TokenKind::Star)) {
                let onto = self.onto_clause()?;
                return Ok(DistSpec { formats: None, onto });
            }
            if self.at_word("onto") {
                return self.error("expected a distribution format list such as `(BLOCK)` before ONTO");
            }
            return self.error("expected a distribution format list such as `(BLOCK)`");
        }
        let formats = Some(self.dist_formats()?);
        let onto = self.onto_clause()?;
        Ok(DistSpec { formats, onto })
    }

    /// Like the statement form, but the format list may be absent (`DISTRIBUTE ONTO P :: X`).
    fn dist_attribute_stuff(&mut self) -> PResult<DistSpec> {
        let formats =
            if self.at(TokenKind::LParen) || self.at(TokenKind::Star) { Some(self.dist_formats()?) } else { None };
        let onto = self.onto_clause()?;
        if formats.is_none() && onto.is_none() {
            return self.error("expected a distribution format list or ONTO");
        }
        Ok(DistSpec { formats, onto })
    }

    fn dist_formats(&mut self) -> PResult<DistFormats> {
        let start = self.here().start;
        let star = self.eat(TokenKind::Star).map(|it| it.range);
        if star.is_some() && !self.at(TokenKind::LParen) {
            return Ok(DistFormats { star, list: None, range: TextRange::new(start, self.previous_end()) });
        }
        self.expect(TokenKind::LParen, "`(`")?;
        let mut list = Vec::new();
        loop {
            list.push(self.dist_format()?);
            if self.eat(TokenKind::Comma).is_none() {
                break;
            }
        }
        self.expect(TokenKind::RParen, "`,` or `)`")?;
        Ok(DistFormats { star, list: Some(list), range: TextRange::new(start, self.previous_end()) })
    }

    fn dist_format(&mut self) -> PResult<DistFormat> {
        if let Some(star) = self.eat(TokenKind::Star) {
            return Ok(DistFormat { kind: DistFormatKind::Collapsed, range: star.range, keyword: None });
        }
        let Some(token) = self.eat(TokenKind::Ident) else {
            return self.error("expected a distribution format (BLOCK, CYCLIC or *)");
        };
        let keyword = self.name_of(token);
        let optional_arg = |parser: &mut Parser<'_>| -> PResult<Option<Expr>> {
            if parser.eat(TokenKind::LParen).is_none() {
                return Ok(None);
            }
            let expr = parser.expr()?;
            parser.expect(TokenKind::RParen, "`)`")?;
            Ok(Some(expr))
        };
        let kind = match keyword.key().as_str() {
            "block" => DistFormatKind::Block(optional_arg(self)?),
            "cyclic" => DistFormatKind::Cyclic(optional_arg(self)?),
            "gen_block" => match optional_arg(self)? {
                Some(expr) => DistFormatKind::GenBlock(expr),
                None => return self.error("GEN_BLOCK needs an array of block sizes"),
            },
            "indirect" => match optional_arg(self)? {
                Some(expr) => DistFormatKind::Indirect(expr),
                None => return self.error("INDIRECT needs a mapping array"),
            },
            other => {
                let hint = ["block", "cyclic"]
                    .into_iter()
                    .find(|it| edit_distance(it, other) <= 2)
                    .map(|it| format!("; did you mean `{}`?", it.to_ascii_uppercase()))
                    .unwrap_or_default();
                return Err(ParseError {
                    range: keyword.range,
                    message: format!(
                        "unknown distribution format `{}`: expected BLOCK, BLOCK(m), CYCLIC, CYCLIC(m) or *{hint}",
                        keyword.text
                    ),
                    unknown_keyword: false,
                });
            }
        };
        let range = keyword.range.cover(TextRange::empty(self.previous_end()));
        Ok(DistFormat { kind, range, keyword: Some(keyword) })
    }

    fn onto_clause(&mut self) -> PResult<Option<Onto>> {
        let Some(onto) = self.eat_word("onto") else { return Ok(None) };
        let star = self.eat(TokenKind::Star).map(|it| it.range);
        let target = if star.is_some() && !self.at(TokenKind::Ident) {
            None
        } else {
            Some(self.expect_name("the name of a processor arrangement after ONTO")?)
        };
        Ok(Some(Onto { target, star, range: onto.range.cover(TextRange::empty(self.previous_end())) }))
    }

    /// `WITH [*] target [(subscripts)]`.
    fn align_with_clause(&mut self) -> PResult<AlignSpec> {
        let with_keyword = self.expect_word("with")?;
        let target_start = self.here().start;
        let star = self.eat(TokenKind::Star).map(|it| it.range);
        let target = self.expect_name("the align target after WITH")?;
        let subscripts = if self.at(TokenKind::LParen) { Some(self.subscript_list()?) } else { None };
        Ok(AlignSpec {
            sources: None,
            with_keyword,
            target,
            star,
            subscripts,
            target_range: TextRange::new(target_start, self.previous_end()),
        })
    }

    // ---- executable directives -----------------------------------------

    fn independent(&mut self) -> PResult<DirectiveBody> {
        self.bump();
        let indices = if self.at(TokenKind::LParen) { Some(self.parenthesized_names("a loop index")?) } else { None };
        let mut new = Vec::new();
        let mut reduction = Vec::new();
        let mut on_home = None;
        loop {
            let comma = self.eat(TokenKind::Comma);
            let Some(clause) = self.peek().filter(|it| it.kind == TokenKind::Ident) else {
                if comma.is_some() {
                    return self.error("expected NEW(...), REDUCTION(...) or ON HOME(...)");
                }
                break;
            };
            let word = self.name_of(clause);
            if comma.is_none() && matches!(word.key().as_str(), "new" | "reduction") {
                // `INDEPENDENT NEW(I)`: the comma is missing.
                let at = TextRange::empty(self.previous_end());
                let upper = word.key().to_ascii_uppercase();
                self.dialect(
                    word.range,
                    format!("`{}` without the comma before it; HPF 2.0 writes `INDEPENDENT, {upper}(...)`", word.text),
                    format!("Insert `,` before {upper}"),
                    at,
                    ",".to_string(),
                );
            } else if comma.is_none() {
                return self.error("unexpected text after the directive");
            }
            match word.key().as_str() {
                "new" => {
                    self.bump();
                    new.extend(self.parenthesized_names("a variable name")?);
                }
                "reduction" => {
                    self.bump();
                    reduction.extend(self.parenthesized_names("a variable name")?);
                }
                "onhome" | "on" => {
                    let start = self.here().start;
                    self.bump();
                    if word.is("on") {
                        self.expect_word("home")?;
                    }
                    self.expect(TokenKind::LParen, "`(` after HOME")?;
                    let home = self.expr()?;
                    self.expect(TokenKind::RParen, "`)`")?;
                    let clause = TextRange::new(start, self.previous_end());
                    self.notes.push(Diagnostic::new(
                        Code::Dialect,
                        clause,
                        format!(
                            "an ON HOME clause of INDEPENDENT is an ADAPTOR-era extension; HPF 2.0 writes \
                             `!HPF$ ON HOME ({}) BEGIN` ... `!HPF$ END ON` around the loop's body",
                            self.slice(home.range)
                        ),
                    ));
                    on_home = Some(home);
                }
                _ => return self.error("expected NEW(...), REDUCTION(...) or ON HOME(...)"),
            }
        }
        Ok(DirectiveBody::Independent(Independent { indices, new, reduction, on_home }))
    }

    fn on(&mut self) -> PResult<DirectiveBody> {
        let keyword = self.bump().map(|it| self.name_of(it)).expect("caller saw the keyword");
        if keyword.is("onhome") {
            self.dialect(
                keyword.range,
                format!("`{}` is spelled `ON HOME` in HPF 2.0", keyword.text),
                "Write `ON HOME`".to_string(),
                keyword.range,
                format!("{} {}", &keyword.text[..2], &keyword.text[2..]),
            );
        }
        let home = if keyword.is("onhome") || self.eat_word("home").is_some() {
            self.expect(TokenKind::LParen, "`(` after HOME")?;
            let home = self.expr()?;
            self.expect(TokenKind::RParen, "`)`")?;
            home
        } else if self.eat(TokenKind::LParen).is_some() {
            let home = self.expr()?;
            self.expect(TokenKind::RParen, "`)`")?;
            home
        } else {
            return self.error("expected HOME(...) or a processor reference after ON");
        };
        let mut resident = None;
        let mut new = Vec::new();
        while self.eat(TokenKind::Comma).is_some() {
            if self.eat_word("resident").is_some() {
                resident = Some(Resident { objects: self.optional_object_list()?, begin: false });
            } else if self.eat_word("new").is_some() {
                new.extend(self.parenthesized_names("a variable name")?);
            } else {
                return self.error("expected RESIDENT or NEW(...)");
            }
        }
        let begin = self.eat_word("begin").is_some();
        Ok(DirectiveBody::On(On { home, resident, new, begin }))
    }

    fn optional_object_list(&mut self) -> PResult<Vec<Expr>> {
        let mut objects = Vec::new();
        if self.eat(TokenKind::LParen).is_some() {
            loop {
                objects.push(self.expr()?);
                if self.eat(TokenKind::Comma).is_none() {
                    break;
                }
            }
            self.expect(TokenKind::RParen, "`,` or `)`")?;
        }
        Ok(objects)
    }

    fn resident_directive(&mut self) -> PResult<DirectiveBody> {
        self.bump();
        let objects = self.optional_object_list()?;
        let begin = self.eat_word("begin").is_some();
        Ok(DirectiveBody::Resident(Resident { objects, begin }))
    }

    fn end_block(&mut self) -> PResult<DirectiveBody> {
        let word = self.bump().map(|it| self.name_of(it)).expect("caller saw the keyword");
        let which = if word.is("end") {
            self.expect_name("ON or RESIDENT after END")?.key()
        } else {
            word.key()[3..].to_string()
        };
        match which.as_str() {
            "on" => Ok(DirectiveBody::EndOn),
            "resident" => Ok(DirectiveBody::EndResident),
            _ => Err(ParseError {
                range: word.range.cover(TextRange::empty(self.previous_end())),
                message: "expected END ON or END RESIDENT".into(),
                unknown_keyword: false,
            }),
        }
    }

    fn no_sequence(&mut self) -> PResult<DirectiveBody> {
        let keyword = self.bump().map(|it| self.name_of(it)).expect("caller saw the keyword");
        if keyword.is("no") {
            self.expect_word("sequence")?;
        }
        let entities = if self.peek().is_some() { self.entity_list(false)? } else { Vec::new() };
        let range = keyword.range.cover(TextRange::empty(self.previous_end()));
        Ok(DirectiveBody::Mapping(Mapping {
            form: MappingForm::Statement,
            attrs: vec![MappingAttr { kind: AttrKind::Sequence, range, keyword }],
            entities,
            double_colon: None,
        }))
    }

    // ---- expressions -----------------------------------------------------

    /// `( item, item, ... )` where an item is `*`, `lo:hi:st` (parts
    /// optional), `name = expr` or an expression.
    fn subscript_list(&mut self) -> PResult<Vec<Subscript>> {
        self.expect(TokenKind::LParen, "`(`")?;
        let mut items = Vec::new();
        if self.eat(TokenKind::RParen).is_some() {
            return Ok(items);
        }
        loop {
            items.push(self.subscript()?);
            if self.eat(TokenKind::Comma).is_none() {
                break;
            }
        }
        self.expect(TokenKind::RParen, "`,` or `)`")?;
        Ok(items)
    }

    fn subscript(&mut self) -> PResult<Subscript> {
        let start = self.here().start;
        if self.at(TokenKind::Star) && matches!(self.nth_kind(1), Some(TokenKind::Comma | TokenKind::RParen)) {
            let star = self.bump().expect("checked");
            return Ok(Subscript::Star(star.range));
        }
        if self.at(TokenKind::Ident) && self.nth_kind(1) == Some(TokenKind::Equals) {
            let token = self.bump().expect("checked");
            let name = self.name_of(token);
            self.bump();
            let value = self.expr()?;
            return Ok(Subscript::Keyword { name, value });
        }
        let lo = if self.at(TokenKind::Colon) { None } else { Some(self.expr()?) };
        if self.eat(TokenKind::Colon).is_none() {
            return Ok(Subscript::Expr(lo.expect("an expression was parsed")));
        }
        let hi = if matches!(self.peek_kind(), Some(TokenKind::Colon | TokenKind::Comma | TokenKind::RParen) | None) {
            None
        } else {
            Some(self.expr()?)
        };
        let stride = if self.eat(TokenKind::Colon).is_some() { Some(self.expr()?) } else { None };
        Ok(Subscript::Range { lo, hi, stride, range: TextRange::new(start, self.previous_end()) })
    }

    /// Counts one more level of the expression tree being built. Every
    /// operator adds one, so that chains (`1+1+...`, `- - - 1`) are bounded
    /// as well as parentheses: a deep tree would overflow the stack when it
    /// is dropped, compared or walked, not only while it is parsed. The
    /// callers put `depth` back before they return `Ok` (an error ends the
    /// whole directive, so error paths need not).
    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_EXPR_DEPTH {
            return self.error("expression nested too deeply");
        }
        Ok(())
    }

    pub(crate) fn expr(&mut self) -> PResult<Expr> {
        let depth = self.depth;
        self.enter()?;
        let res = self.additive()?;
        self.depth = depth;
        Ok(res)
    }

    fn additive(&mut self) -> PResult<Expr> {
        let depth = self.depth;
        let start = self.here().start;
        let mut lhs = if let Some(sign) = self.eat(TokenKind::Minus).or_else(|| self.eat(TokenKind::Plus)) {
            self.enter()?;
            let operand = self.multiplicative()?;
            let op = if sign.kind == TokenKind::Minus { UnaryOp::Neg } else { UnaryOp::Plus };
            Expr {
                range: TextRange::new(start, operand.range.end),
                kind: ExprKind::Unary { op, operand: Box::new(operand) },
            }
        } else {
            self.multiplicative()?
        };
        while let Some(op) = self.eat(TokenKind::Plus).or_else(|| self.eat(TokenKind::Minus)) {
            self.enter()?;
            let rhs = self.multiplicative()?;
            let op = if op.kind == TokenKind::Plus { BinaryOp::Add } else { BinaryOp::Sub };
            lhs = binary(op, lhs, rhs);
        }
        self.depth = depth;
        Ok(lhs)
    }

    fn multiplicative(&mut self) -> PResult<Expr> {
        let depth = self.depth;
        let mut lhs = self.power()?;
        loop {
            // `*` followed by `,` or `)` is a star subscript, not a product.
            let op = match self.peek_kind() {
                Some(TokenKind::Star)
                    if !matches!(self.nth_kind(1), Some(TokenKind::Comma | TokenKind::RParen) | None) =>
                {
                    BinaryOp::Mul
                }
                Some(TokenKind::Slash) => BinaryOp::Div,
                _ => {
                    self.depth = depth;
                    return Ok(lhs);
                }
            };
            self.bump();
            self.enter()?;
            let rhs = self.power()?;
            lhs = binary(op, lhs, rhs);
        }
    }

    fn power(&mut self) -> PResult<Expr> {
        let base = self.primary()?;
        if self.eat(TokenKind::Power).is_some() {
            let depth = self.depth;
            self.enter()?;
            let exponent = self.power()?;
            self.depth = depth;
            return Ok(binary(BinaryOp::Pow, base, exponent));
        }
        Ok(base)
    }

    fn primary(&mut self) -> PResult<Expr> {
        let Some(token) = self.peek() else {
            return self.error("expected an expression");
        };
        match token.kind {
            TokenKind::Int => {
                self.bump();
                let digits: String =
                    self.text[token.range.to_range()].chars().take_while(char::is_ascii_digit).collect();
                let kind = match digits.parse::<i64>() {
                    Ok(value) => ExprKind::Int(value),
                    Err(_) => ExprKind::Literal(self.text[token.range.to_range()].to_string()),
                };
                Ok(Expr { kind, range: token.range })
            }
            TokenKind::Ident => {
                self.bump();
                let name = self.name_of(token);
                if self.at(TokenKind::LParen) {
                    let args = self.subscript_list()?;
                    let range = TextRange::new(token.range.start, self.previous_end());
                    return Ok(Expr { kind: ExprKind::Ref { name, args }, range });
                }
                Ok(Expr { range: token.range, kind: ExprKind::Name(name) })
            }
            TokenKind::LParen => {
                self.bump();
                let inner = self.expr()?;
                let close = self.expect(TokenKind::RParen, "`)`")?;
                Ok(Expr {
                    range: TextRange::new(token.range.start, close.range.end),
                    kind: ExprKind::Paren(Box::new(inner)),
                })
            }
            TokenKind::Minus | TokenKind::Plus => {
                // A sign after an operator, as in `2*-1`.
                self.bump();
                let depth = self.depth;
                self.enter()?;
                let operand = self.power()?;
                self.depth = depth;
                let op = if token.kind == TokenKind::Minus { UnaryOp::Neg } else { UnaryOp::Plus };
                Ok(Expr {
                    range: TextRange::new(token.range.start, operand.range.end),
                    kind: ExprKind::Unary { op, operand: Box::new(operand) },
                })
            }
            _ => self.error("expected an expression"),
        }
    }
}

fn binary(op: BinaryOp, lhs: Expr, rhs: Expr) -> Expr {
    Expr { range: lhs.range.cover(rhs.range), kind: ExprKind::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs) } }
}

fn suggestion(word: &str) -> Option<&'static str> {
    let candidates = MAPPING_KEYWORDS.iter().chain(["independent", "resident"].iter());
    candidates.filter(|it| edit_distance(it, word) <= 2).min_by_key(|it| edit_distance(it, word)).map(|it| match *it {
        "processors" => "PROCESSORS",
        "template" => "TEMPLATE",
        "dimension" => "DIMENSION",
        "distribute" => "DISTRIBUTE",
        "redistribute" => "REDISTRIBUTE",
        "align" => "ALIGN",
        "realign" => "REALIGN",
        "dynamic" => "DYNAMIC",
        "inherit" => "INHERIT",
        "shadow" => "SHADOW",
        "sequence" => "SEQUENCE",
        "independent" => "INDEPENDENT",
        _ => "RESIDENT",
    })
}

/// Levenshtein distance, for "did you mean" hints on short keywords.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}
