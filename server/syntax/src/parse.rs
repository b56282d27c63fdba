//! The entry point of the syntax layer: text in, [`SourceFile`] out.
//!
//! Parsing never fails. Fixed form is normalised first (every byte stays
//! where it is, so every range maps straight back to the user's text), the
//! tree-sitter tree is lowered to the AST, the comments (the nodes that
//! `queries/directives.scm` matches, found by a tree walk) go to the
//! directive parser, and the directives are handed to the program unit
//! that holds them.

use std::sync::{Arc, OnceLock};

use tree_sitter::{InputEdit, Node, Parser, Point, Tree};

use crate::ast::Unit;
use crate::directive::{parse_directives, Directive};
use crate::lower::{Lowerer, MAX_DEPTH};
use crate::{normalize_fixed, Code, Diagnostic, SourceForm, TextRange};

/// The query that finds comments (and so directives), compiled into the binary.
pub const DIRECTIVES_QUERY: &str = include_str!("../../../queries/directives.scm");

/// Files longer than this (in bytes) are not parsed or analysed: they get
/// one HPF005 and nothing else (docs/ARCHITECTURE.md, "Limits").
pub const MAX_ANALYSED_BYTES: usize = 4 * 1024 * 1024;

/// How many syntax errors of the Fortran text are reported per file;
/// past that, the file is not worth reading error by error.
const MAX_SYNTAX_ERRORS: usize = 50;

#[derive(Clone, Debug)]
pub struct SourceFile {
    pub form: SourceForm,
    pub units: Vec<Arc<Unit>>,
    /// Every comment, in text order (directives included).
    pub comments: Vec<TextRange>,
    /// Syntax diagnostics: Fortran errors, directive errors, nesting limits.
    pub diagnostics: Vec<Diagnostic>,
}

impl SourceFile {
    /// Every directive of the file, in text order.
    pub fn directives(&self) -> Vec<&Directive> {
        let mut res: Vec<&Directive> =
            self.units.iter().flat_map(|it| it.all_units()).flat_map(|it| it.directives.iter()).collect();
        res.sort_by_key(|it| it.range.start);
        res
    }
}

fn language() -> tree_sitter::Language {
    tree_sitter_fortran::LANGUAGE.into()
}

/// The text tree-sitter sees: the normalised text for fixed form.
/// The dialects of `crate::dialect` are rewritten in it, offset for offset.
pub fn parser_text(text: &str, form: SourceForm) -> std::borrow::Cow<'_, str> {
    let mut bytes = match form {
        SourceForm::Free => {
            // Free form needs a copy only for an EXTRINSIC prefix.
            if !text.as_bytes().windows(9).any(|it| it.eq_ignore_ascii_case(b"extrinsic")) {
                return std::borrow::Cow::Borrowed(text);
            }
            text.as_bytes().to_vec()
        }
        SourceForm::Fixed { line_length } => normalize_fixed(text, line_length).into_bytes(),
    };
    crate::dialect::rewrite_dialects(&mut bytes, form.is_fixed());
    // Only ASCII bytes outside character literals and comments are moved
    // or blanked, so the text stays UTF-8.
    std::borrow::Cow::Owned(String::from_utf8(bytes).expect("the rewrite moves ASCII bytes only"))
}

/// Makes tree-sitter's C library allocate with mimalloc, the allocator of
/// the hpf-ls binaries, instead of glibc's malloc. Under glibc, freeing a
/// large tree (134 MB at 100k lines) left chunks that the next parse's
/// allocations consolidated first: 60 ms added to an incremental reparse
/// of 2 ms.
///
/// # Safety
/// Call it before any other tree-sitter call, once, on one thread: trees
/// allocated before it would be freed by the wrong allocator.
pub unsafe fn use_mimalloc_for_tree_sitter() {
    unsafe extern "C" fn calloc(count: usize, size: usize) -> *mut std::ffi::c_void {
        let Some(bytes) = count.checked_mul(size) else { return std::ptr::null_mut() };
        // SAFETY: mi_malloc returns null or `bytes` writable bytes.
        unsafe {
            let memory = libmimalloc_sys::mi_malloc(bytes);
            if !memory.is_null() {
                std::ptr::write_bytes(memory.cast::<u8>(), 0, bytes);
            }
            memory
        }
    }
    let allocator = tree_sitter::Allocator {
        malloc: libmimalloc_sys::mi_malloc,
        calloc,
        realloc: libmimalloc_sys::mi_realloc,
        free: libmimalloc_sys::mi_free,
    };
    // SAFETY: the caller makes this the first tree-sitter call.
    unsafe { tree_sitter::set_allocator(Some(allocator)) };
}

/// The edit that turns `old` into `new` for tree-sitter (`Tree::edit`):
/// their common prefix and suffix; `None` when they are equal.
pub fn input_edit(old: &str, new: &str) -> Option<InputEdit> {
    if old == new {
        return None;
    }
    let (old_bytes, new_bytes) = (old.as_bytes(), new.as_bytes());
    let prefix = old_bytes.iter().zip(new_bytes).take_while(|(a, b)| a == b).count();
    let max_suffix = old_bytes.len().min(new_bytes.len()) - prefix;
    let suffix =
        old_bytes.iter().rev().zip(new_bytes.iter().rev()).take(max_suffix).take_while(|(a, b)| a == b).count();
    let point = |text: &[u8], offset: usize| {
        let row = text[..offset].iter().filter(|it| **it == b'\n').count();
        let line_start = text[..offset].iter().rposition(|it| *it == b'\n').map_or(0, |it| it + 1);
        Point { row, column: offset - line_start }
    };
    let (start, old_end, new_end) = (prefix, old_bytes.len() - suffix, new_bytes.len() - suffix);
    Some(InputEdit {
        start_byte: start,
        old_end_byte: old_end,
        new_end_byte: new_end,
        start_position: point(old_bytes, start),
        old_end_position: point(old_bytes, old_end),
        new_end_position: point(new_bytes, new_end),
    })
}

/// Parses `text` (already normalised for its form) with tree-sitter,
/// reusing `old_tree` when it has been edited to match.
pub fn parse_tree(parser_text: &str, old_tree: Option<&Tree>) -> Tree {
    let mut parser = Parser::new();
    parser.set_language(&language()).expect("tree-sitter-fortran matches the tree-sitter ABI");
    parser.parse(parser_text, old_tree).expect("parsing without a timeout or cancellation flag always ends")
}

/// Parses a whole file.
pub fn parse(text: &str, form: SourceForm) -> SourceFile {
    if text.len() > MAX_ANALYSED_BYTES {
        return too_large(text, form);
    }
    let normalised = parser_text(text, form);
    let tree = parse_tree(&normalised, None);
    lower_tree(text, &normalised, form, &tree)
}

/// Lowers a tree of `parser_text` (see [`parser_text`]); `text` is what
/// the user wrote, used for directives and names.
pub fn lower_tree(text: &str, parser_text: &str, form: SourceForm, tree: &Tree) -> SourceFile {
    if text.len() > MAX_ANALYSED_BYTES {
        return too_large(text, form);
    }
    let root = tree.root_node();
    let mut diagnostics = Vec::new();
    syntax_errors(root, parser_text, &mut diagnostics);
    let mut units = Lowerer::new(parser_text, text, &mut diagnostics).units(root);
    let comments = comments(root, parser_text, text);
    for diagnostic in &mut diagnostics {
        diagnostic.range = diagnostic.range.snap_to_chars(text);
    }
    let directives = parse_directives(text, form, &comments, &mut diagnostics);
    assign_directives(&mut units, directives);
    crate::dialect::on_home_clause_fixes(text, &units, &mut diagnostics);
    diagnostics.sort_by_key(|it| (it.range.start, it.range.end));
    SourceFile { form, units, comments, diagnostics }
}

/// The file of a text over [`MAX_ANALYSED_BYTES`]: one HPF005 on its first line.
fn too_large(text: &str, form: SourceForm) -> SourceFile {
    let first_line = text.find(['\r', '\n']).unwrap_or(text.len());
    let megabytes = |bytes: usize| bytes as f64 / (1024.0 * 1024.0);
    let diagnostic = Diagnostic::new(
        Code::TooLarge,
        TextRange::new(0, first_line).snap_to_chars(text),
        format!(
            "the file is {:.1} MiB; hpf-ls analyses files of at most {:.0} MiB, so nothing in it is checked",
            megabytes(text.len()),
            megabytes(MAX_ANALYSED_BYTES)
        ),
    );
    SourceFile { form, units: Vec::new(), comments: Vec::new(), diagnostics: vec![diagnostic] }
}

/// The node kinds the grammar calls `comment` (HPF directives are comments
/// to it).
fn comment_kinds() -> &'static [u16] {
    static KINDS: OnceLock<Vec<u16>> = OnceLock::new();
    KINDS.get_or_init(|| {
        let language = language();
        (0..language.node_kind_count() as u16)
            .filter(|&id| language.node_kind_is_named(id) && language.node_kind_for_id(id) == Some("comment"))
            .collect()
    })
}

/// Every comment node, in text order: an iterative walk of the tree that
/// enters only nodes whose text has a `!` (every comment starts with one in
/// the parser's text), so most statements are passed over without a visit
/// of their expressions. (The query `(comment) @comment` of
/// queries/directives.scm finds the same nodes, but took as long as the
/// whole lowering: 0.3-0.7 s at 100k lines.)
///
/// `text` is the parser's text, `user_text` the user's: ranges are made
/// char boundaries of the latter.
fn comments(root: Node, text: &str, user_text: &str) -> Vec<TextRange> {
    let mut res = Vec::new();
    let mut cursor = root.walk();
    if cursor.goto_first_child() {
        loop {
            let start = res.len();
            comments_under(cursor.node(), text, &mut res);
            // Ranges of the normalised text are made char boundaries of the user's text.
            res[start..].iter_mut().for_each(|it| *it = it.snap_to_chars(user_text));
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }
    res.sort_by_key(|it| it.start);
    res.dedup();
    res
}

/// The comment nodes at or under `top`, a child of the root.
fn comments_under(top: Node, text: &str, res: &mut Vec<TextRange>) {
    let kinds = comment_kinds();
    // Where the `!`s are, so that asking a node costs a binary search, not
    // a scan of its text at every level of a deep tree.
    let offset = top.start_byte();
    let bangs: Vec<usize> = text.as_bytes()[top.byte_range()]
        .iter()
        .enumerate()
        .filter(|(_, it)| **it == b'!')
        .map(|(at, _)| offset + at)
        .collect();
    let may_hold_comment = |node: Node| {
        let first = bangs.partition_point(|it| *it < node.start_byte());
        bangs.get(first).is_some_and(|it| *it < node.end_byte())
    };
    let mut cursor = top.walk();
    let mut depth = 1usize;
    'walk: loop {
        let node = cursor.node();
        if kinds.contains(&node.kind_id()) {
            res.push(TextRange::new(node.start_byte(), node.end_byte()));
        } else if depth < MAX_DEPTH && node.child_count() > 0 && may_hold_comment(node) && cursor.goto_first_child() {
            // Directives sit at statement level; a pathologically deep
            // tree is not searched below MAX_DEPTH.
            depth += 1;
            continue;
        }
        loop {
            // The cursor never leaves `top` for its siblings.
            if depth == 1 {
                break 'walk;
            }
            if cursor.goto_next_sibling() {
                continue 'walk;
            }
            if !cursor.goto_parent() {
                break 'walk;
            }
            depth -= 1;
        }
    }
}

/// Reports ERROR and MISSING nodes, walking the tree iteratively.
fn syntax_errors(root: Node, text: &str, diagnostics: &mut Vec<Diagnostic>) {
    if !root.has_error() {
        return;
    }
    let mut n_errors = 0;
    let mut cursor = root.walk();
    'walk: loop {
        let node = cursor.node();
        let mut descend = node.has_error();
        if node.is_missing() {
            diagnostics.push(Diagnostic::new(
                Code::FortranSyntax,
                TextRange::new(node.start_byte(), node.end_byte()),
                format!("syntax error: missing `{}`", node.kind()),
            ));
            n_errors += 1;
            descend = false;
        } else if node.is_error() {
            let range = TextRange::new(node.start_byte(), node.end_byte());
            diagnostics.push(error_diagnostic(node, text));
            n_errors += 1;
            // Errors nested inside an error are part of the same mistake,
            // except where whole statements are wrapped (look inside those).
            descend = !range.is_empty() && node.child_count() > 1;
        }
        if n_errors >= MAX_SYNTAX_ERRORS {
            break;
        }
        if descend && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                continue 'walk;
            }
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
}

/// Where an ERROR node puts the mistake: at the first token the grammar
/// could not place, or, when the node only wraps statements that parsed
/// (a construct without its END), at its last statement.
fn error_diagnostic(node: Node, text: &str) -> Diagnostic {
    let mut cursor = node.walk();
    let children: Vec<Node> = node.children(&mut cursor).collect();
    let snippet = |it: Node| {
        let word = text.get(it.byte_range()).unwrap_or("").lines().next().unwrap_or("").trim();
        word.chars().take(40).collect::<String>()
    };
    if let Some(token) = children.iter().find(|it| !it.is_named() && !it.is_extra() && !it.byte_range().is_empty()) {
        let range = TextRange::new(token.start_byte(), token.end_byte());
        return Diagnostic::new(Code::FortranSyntax, range, format!("syntax error: unexpected `{}`", snippet(*token)));
    }
    let whole = TextRange::new(node.start_byte(), node.end_byte());
    let on_one_line = !text.get(whole.to_range()).unwrap_or("").trim_end().contains('\n');
    match children.iter().rev().find(|it| it.is_named() && !it.is_extra()) {
        Some(last) if !on_one_line && children.len() > 1 => Diagnostic::new(
            Code::FortranSyntax,
            TextRange::new(last.start_byte(), last.end_byte()),
            format!("syntax error: the construct that starts with `{}` is not complete here", snippet(children[0])),
        ),
        _ => Diagnostic::new(Code::FortranSyntax, whole, format!("syntax error in `{}`", snippet(node))),
    }
}

/// Hands each directive to the innermost unit that holds it; a directive
/// before a unit's header goes to that unit (fixed-form files often put
/// `CHPF$` lines before the first statement they describe).
fn assign_directives(units: &mut Vec<Arc<Unit>>, directives: Vec<Directive>) {
    if units.is_empty() && !directives.is_empty() {
        let start = directives[0].range.start;
        let end = directives[directives.len() - 1].range.end;
        units.push(Arc::new(Unit {
            kind: crate::UnitKind::Program,
            name: None,
            range: TextRange::new(start, end),
            header: TextRange::empty(start),
            dummies: Vec::new(),
            uses: Vec::new(),
            decls: Vec::new(),
            implicit: Vec::new(),
            body: Vec::new(),
            directives: Vec::new(),
            contains: Vec::new(),
            interfaces: Vec::new(),
            execution_start: end,
        }));
    }
    // Units are in text order, apart and not empty (almost always): then the
    // unit of an offset is found by a binary search, not a scan per directive.
    let apart =
        units.iter().all(|it| !it.range.is_empty()) && units.windows(2).all(|it| it[0].range.end <= it[1].range.start);
    for directive in directives {
        let offset = directive.range.start;
        let top = if apart {
            // The first unit ending after the offset holds it or starts after it.
            units.partition_point(|it| it.range.end <= offset)
        } else {
            units
                .iter()
                .position(|it| it.range.contains(offset))
                .or_else(|| units.iter().position(|it| it.range.start >= offset))
                .unwrap_or(units.len())
        }
        .min(units.len() - 1);
        // A unit shared with the previous version is copied first (only a
        // new directive before it lands here).
        let mut unit = Arc::make_mut(&mut units[top]);
        loop {
            if let Some(inner) = unit.contains.iter().position(|it| it.range.contains(offset)) {
                unit = &mut unit.contains[inner];
            } else if let Some(inner) = unit.interfaces.iter().position(|it| it.range.contains(offset)) {
                unit = &mut unit.interfaces[inner];
            } else {
                break;
            }
        }
        unit.directives.push(directive);
        // In text order, also after a shared unit's own directives.
        let count = unit.directives.len();
        if count > 1 && unit.directives[count - 2].range.start > unit.directives[count - 1].range.start {
            unit.directives.sort_by_key(|it| it.range.start);
        }
    }
}

#[cfg(test)]
mod comment_tests {
    use tree_sitter::{Query, QueryCursor, StreamingIterator};

    use super::*;

    /// The walk finds exactly the nodes of `queries/directives.scm`.
    #[test]
    fn the_comment_walk_finds_what_the_directives_query_matches() {
        let query = Query::new(&language(), DIRECTIVES_QUERY).expect("queries/directives.scm compiles");
        let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus");
        let mut files = 0;
        for entry in std::fs::read_dir(&corpus).unwrap() {
            let path = entry.unwrap().path();
            let fortran =
                path.extension().and_then(|it| it.to_str()).is_some_and(|it| crate::FORTRAN_EXTENSIONS.contains(&it));
            let Some(text) = std::fs::read_to_string(&path).ok().filter(|_| fortran) else { continue };
            let text = parser_text(&text, SourceForm::from_path(&path)).into_owned();
            let tree = parse_tree(&text, None);
            let mut cursor = QueryCursor::new();
            let mut matches = cursor.matches(&query, tree.root_node(), text.as_bytes());
            let mut expected = Vec::new();
            while let Some(found) = matches.next() {
                for capture in found.captures() {
                    expected.push(TextRange::new(capture.node.start_byte(), capture.node.end_byte()));
                }
            }
            expected.sort_by_key(|it| it.start);
            expected.dedup();
            assert!(!expected.is_empty(), "{}", path.display());
            assert_eq!(comments(tree.root_node(), &text, &text), expected, "{}", path.display());
            files += 1;
        }
        assert!(files >= 40, "{files} corpus files");
    }
}
