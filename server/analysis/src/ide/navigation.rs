//! Document symbols, definition, references, rename, completion inside
//! directives, semantic tokens and folding ranges.

use syntax::directive::{DirectiveBody, DIRECTIVE_KEYWORDS};
use syntax::{TextRange, UnitKind};

use super::fixes::TextEdit;
use super::occurrences::{occurrence_at, occurrences};
use crate::model::{flatten_units, SymbolId, SymbolKind};
use crate::FileAnalysis;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymbolKindIde {
    Program,
    Module,
    Subroutine,
    Function,
    Array,
    Template,
    Processors,
    Constant,
    Loop,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocumentSymbol {
    pub name: String,
    pub detail: Option<String>,
    pub kind: SymbolKindIde,
    pub range: TextRange,
    pub selection: TextRange,
    pub children: Vec<DocumentSymbol>,
}

/// Units with their arrays, templates, processors and loops.
pub fn document_symbols(analysis: &FileAnalysis, text: &str) -> Vec<DocumentSymbol> {
    let flat = flatten_units(&analysis.file);
    let mut built: Vec<Option<DocumentSymbol>> = Vec::new();
    for (unit_id, (unit, _)) in flat.iter().enumerate() {
        let model = &analysis.model.units[unit_id];
        let kind = match unit.kind {
            UnitKind::Program | UnitKind::BlockData => SymbolKindIde::Program,
            UnitKind::Module => SymbolKindIde::Module,
            UnitKind::Subroutine => SymbolKindIde::Subroutine,
            UnitKind::Function => SymbolKindIde::Function,
        };
        let mut children = Vec::new();
        for (index, symbol) in model.symbols.iter().enumerate() {
            let id = SymbolId { unit: unit_id, index };
            let kind = match symbol.kind {
                SymbolKind::Template => SymbolKindIde::Template,
                SymbolKind::Processors => SymbolKindIde::Processors,
                SymbolKind::Constant(_) => SymbolKindIde::Constant,
                SymbolKind::Variable if symbol.is_array() => SymbolKindIde::Array,
                SymbolKind::Variable => continue,
            };
            children.push(DocumentSymbol {
                name: symbol.name.text.clone(),
                detail: Some(crate::render::describe_mapping(&analysis.model, id)),
                kind,
                range: symbol.name.range,
                selection: symbol.name.range,
                children: Vec::new(),
            });
        }
        for report in analysis.loops.iter().filter(|it| it.unit == unit_id) {
            let header = text.get(report.header.to_range()).unwrap_or("").trim().to_string();
            children.push(DocumentSymbol {
                name: header,
                detail: Some(report.kind.as_str().to_string()),
                kind: SymbolKindIde::Loop,
                range: report.range,
                selection: report.header,
                children: Vec::new(),
            });
        }
        children.sort_by_key(|it| it.range.start);
        let name = unit.name.as_ref().map_or_else(|| "(main program)".to_string(), |it| it.text.clone());
        let selection = unit.name.as_ref().map_or(unit.header, |it| it.range);
        built.push(Some(DocumentSymbol {
            name,
            detail: Some(unit.kind.as_str().to_string()),
            kind,
            range: unit.range.cover(selection),
            selection,
            children,
        }));
    }
    // Nest contained units in their hosts, innermost first.
    for unit_id in (0..flat.len()).rev() {
        if let Some(parent) = flat[unit_id].1 {
            if let Some(symbol) = built[unit_id].take() {
                if let Some(host) = built[parent].as_mut() {
                    host.children.push(symbol);
                    host.children.sort_by_key(|it| it.range.start);
                }
            }
        }
    }
    built.into_iter().flatten().collect()
}

fn symbol_at(analysis: &FileAnalysis, offset: usize) -> Option<SymbolId> {
    occurrence_at(analysis, offset).map(|it| it.symbol)
}

/// Where a symbol is declared: in the analysed file, or in another one.
#[derive(Clone, Debug)]
pub struct Definition {
    pub range: TextRange,
    /// The other file (a module USEd from it); `None`: this file.
    pub file: Option<std::sync::Arc<crate::model::ExternalFile>>,
}

/// The declaration of the symbol under `offset`.
pub fn definition(analysis: &FileAnalysis, offset: usize) -> Option<Definition> {
    let symbol = symbol_at(analysis, offset)?;
    Some(Definition {
        range: analysis.model.symbol(symbol).name.range,
        file: analysis.model.external_file(symbol.unit).cloned(),
    })
}

/// Every occurrence of the symbol under `offset`, in code and directives.
pub fn references(analysis: &FileAnalysis, offset: usize, include_declaration: bool) -> Vec<TextRange> {
    let all = occurrences(analysis);
    let Some(symbol) = symbol_at(analysis, offset) else { return Vec::new() };
    all.iter()
        .filter(|it| it.symbol == symbol && (include_declaration || !it.is_declaration))
        .map(|it| it.range)
        .collect()
}

/// Renames the symbol under `offset` everywhere; an error says why not.
pub fn rename(analysis: &FileAnalysis, offset: usize, new_name: &str) -> Result<Vec<TextEdit>, String> {
    let valid = new_name.chars().next().is_some_and(|it| it.is_ascii_alphabetic())
        && new_name.chars().all(|it| it.is_ascii_alphanumeric() || it == '_')
        && new_name.len() <= 63;
    if !valid {
        return Err(format!("`{new_name}` is not a Fortran name (a letter, then letters, digits or `_`, at most 63)"));
    }
    let all = occurrences(analysis);
    let symbol = symbol_at(analysis, offset).ok_or("there is no array, template or processor arrangement here")?;
    if let Some(file) = analysis.model.external_file(symbol.unit) {
        let name = &analysis.model.symbol(symbol).name.text;
        return Err(format!("`{name}` is declared in another file ({}): rename it there", file.name));
    }
    let unit = symbol.unit;
    if let Some(existing) = analysis.model.lookup(unit, &new_name.to_ascii_lowercase()) {
        if existing != symbol {
            return Err(format!("`{new_name}` is already declared in this scope"));
        }
    }
    Ok(all
        .iter()
        .filter(|it| it.symbol == symbol)
        .map(|it| TextEdit { range: it.range, new_text: new_name.to_string() })
        .collect())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletionKind {
    Keyword,
    Format,
    Array,
    Template,
    Processors,
    Constant,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    pub label: String,
    pub kind: CompletionKind,
    pub detail: Option<String>,
}

const FORMATS: &[&str] = &["BLOCK", "CYCLIC", "BLOCK(", "CYCLIC(", "*"];
const CLAUSES: &[&str] = &["WITH", "ONTO", "NEW", "REDUCTION", "HOME", "RESIDENT", "BEGIN"];

/// Completion inside an `!HPF$` line: keywords, distribution formats and
/// the names in scope; nothing outside directives.
pub fn completions(analysis: &FileAnalysis, text: &str, offset: usize) -> Vec<Completion> {
    let line_start = text[..offset.min(text.len())].rfind('\n').map_or(0, |it| it + 1);
    let line = &text[line_start..offset.min(text.len())];
    let trimmed = line.trim_start();
    // Bytes, not a str slice: the line may start with a multi-byte character.
    let is_directive = trimmed.as_bytes().get(1..5).is_some_and(|it| it.eq_ignore_ascii_case(b"hpf$"))
        && matches!(trimmed.as_bytes()[0], b'!' | b'c' | b'C' | b'*');
    if !is_directive {
        return Vec::new();
    }
    let after = trimmed[5..].trim_start();
    let lower = line.contains("hpf$");
    let cased = |it: &str| if lower { it.to_ascii_lowercase() } else { it.to_string() };
    let mut res = Vec::new();
    // The first word: a directive keyword.
    if !after.contains(|it: char| it.is_whitespace() || it == '(' || it == ',') {
        for keyword in DIRECTIVE_KEYWORDS {
            res.push(Completion {
                label: cased(&keyword.to_ascii_uppercase()),
                kind: CompletionKind::Keyword,
                detail: None,
            });
        }
        return res;
    }
    let open = after.matches('(').count() > after.matches(')').count();
    let first = after.split(|it: char| !it.is_ascii_alphabetic()).next().unwrap_or("").to_ascii_lowercase();
    if open && matches!(first.as_str(), "distribute" | "redistribute" | "template") {
        for format in FORMATS {
            res.push(Completion {
                label: cased(format),
                kind: CompletionKind::Format,
                detail: Some("distribution format".into()),
            });
        }
    }
    for clause in CLAUSES {
        res.push(Completion { label: cased(clause), kind: CompletionKind::Keyword, detail: None });
    }
    // Names in scope at this point: the unit that holds the offset.
    let unit = analysis
        .model
        .units
        .iter()
        .enumerate()
        .filter(|(_, it)| it.range.contains_inclusive(offset))
        .min_by_key(|(_, it)| it.range.len())
        .map(|(id, _)| id);
    let mut units = Vec::new();
    let mut current = unit;
    while let Some(id) = current {
        units.push(id);
        units.extend(analysis.model.units[id].modules_used.iter().copied());
        current = analysis.model.units[id].parent;
    }
    for id in units {
        for (index, symbol) in analysis.model.units[id].symbols.iter().enumerate() {
            let kind = match symbol.kind {
                SymbolKind::Template => CompletionKind::Template,
                SymbolKind::Processors => CompletionKind::Processors,
                SymbolKind::Constant(_) => CompletionKind::Constant,
                SymbolKind::Variable if symbol.is_array() => CompletionKind::Array,
                SymbolKind::Variable => continue,
            };
            if res.iter().any(|it| it.label.eq_ignore_ascii_case(&symbol.name.text)) {
                continue;
            }
            let detail = crate::render::describe_mapping(&analysis.model, SymbolId { unit: id, index });
            res.push(Completion { label: symbol.name.text.clone(), kind, detail: Some(detail) });
        }
    }
    res
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SemanticTokenKind {
    /// A directive keyword or clause (`DISTRIBUTE`, `WITH`, `BLOCK`).
    DirectiveKeyword,
    Template,
    Processors,
    Array,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SemanticToken {
    pub range: TextRange,
    pub kind: SemanticTokenKind,
}

const CLAUSE_WORDS: &[&str] = &[
    "with",
    "onto",
    "new",
    "reduction",
    "home",
    "resident",
    "begin",
    "block",
    "cyclic",
    "gen_block",
    "indirect",
    "end",
];

/// Directive keywords everywhere they appear, and template, processor and
/// array names, sorted and non-overlapping.
pub fn semantic_tokens(analysis: &FileAnalysis, text: &str) -> Vec<SemanticToken> {
    let mut tokens = Vec::new();
    for directive in analysis.file.directives() {
        // Words of the directive lines that are keywords or clauses.
        for line in &directive.lines {
            let Some(line_text) = text.get(line.to_range()) else { continue };
            let mut at = 5.min(line_text.len());
            let bytes = line_text.as_bytes();
            while at < bytes.len() {
                if bytes[at] == b'!' {
                    break;
                }
                if bytes[at].is_ascii_alphabetic() {
                    let start = at;
                    while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_') {
                        at += 1;
                    }
                    let word = line_text[start..at].to_ascii_lowercase();
                    // DIRECTIVE_KEYWORDS is upper case, CLAUSE_WORDS lower case.
                    if DIRECTIVE_KEYWORDS.iter().any(|it| it.eq_ignore_ascii_case(&word))
                        || CLAUSE_WORDS.contains(&word.as_str())
                    {
                        tokens.push(SemanticToken {
                            range: TextRange::new(line.start + start, line.start + at),
                            kind: SemanticTokenKind::DirectiveKeyword,
                        });
                    }
                } else {
                    at += 1;
                }
            }
        }
    }
    for occurrence in occurrences(analysis) {
        let kind = match analysis.model.symbol(occurrence.symbol).kind {
            SymbolKind::Template => SemanticTokenKind::Template,
            SymbolKind::Processors => SemanticTokenKind::Processors,
            SymbolKind::Variable if analysis.model.symbol(occurrence.symbol).is_array() => SemanticTokenKind::Array,
            _ => continue,
        };
        tokens.push(SemanticToken { range: occurrence.range, kind });
    }
    tokens.sort_by_key(|it| (it.range.start, it.range.end));
    // A name that is also a keyword spelling (an array called BLOCK) keeps one token.
    tokens.dedup_by(|next, previous| next.range.start < previous.range.end);
    tokens
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FoldKind {
    /// Consecutive directive lines.
    Directives,
    Region,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FoldingRange {
    pub range: TextRange,
    pub kind: FoldKind,
}

/// Blocks of two or more directive lines, units, loops.
pub fn folding_ranges(analysis: &FileAnalysis, text: &str) -> Vec<FoldingRange> {
    let mut res = Vec::new();
    let mut block: Option<TextRange> = None;
    for directive in analysis.file.directives() {
        let adjacent = block.is_some_and(|it| {
            text.get(it.end..directive.range.start)
                .is_some_and(|gap| gap.trim().is_empty() && gap.matches('\n').count() <= 1)
        });
        block = match block {
            Some(it) if adjacent => Some(it.cover(directive.range)),
            Some(it) => {
                if text[it.to_range()].contains('\n') {
                    res.push(FoldingRange { range: it, kind: FoldKind::Directives });
                }
                Some(directive.range)
            }
            None => Some(directive.range),
        };
    }
    if let Some(it) = block.filter(|it| text[it.to_range()].contains('\n')) {
        res.push(FoldingRange { range: it, kind: FoldKind::Directives });
    }
    for unit in analysis.model.units.iter().filter(|it| it.origin.is_none()) {
        res.push(FoldingRange { range: unit.range, kind: FoldKind::Region });
    }
    for report in &analysis.loops {
        if text.get(report.range.to_range()).is_some_and(|it| it.contains('\n')) {
            res.push(FoldingRange { range: report.range, kind: FoldKind::Region });
        }
    }
    let _ = DirectiveBody::EndOn;
    res.sort_by_key(|it| (it.range.start, it.range.end));
    res
}
