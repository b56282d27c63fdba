//! The HPF-aware syntax layer: source forms, the tree-sitter parse of the
//! Fortran text, the HPF directive parser, and a small owned AST that the
//! analysis layer reads. No analysis and no protocol types live here.

mod ast;
mod chunks;
mod diagnostic;
mod dialect;
pub mod directive;
mod expr;
pub mod host_spec;
pub mod include;
mod line_index;
mod lower;
mod parse;
pub mod preprocess;
mod source_form;
pub mod statements;
mod text_range;

pub use ast::*;
pub use chunks::{chunks, chunks_from, unit_chunks, ChunkKind, ChunkStart};
pub use diagnostic::{Code, Diagnostic, Fix, Related, Severity};
pub use dialect::{closing_paren, extrinsic_model};
pub use expr::{BinaryOp, Expr, ExprKind, Name, Subscript, UnaryOp};
pub use line_index::LineIndex;
pub use parse::{
    input_edit, lower_tree, parse, parse_tree, parser_text, use_mimalloc_for_tree_sitter, SourceFile, DIRECTIVES_QUERY,
    MAX_ANALYSED_BYTES,
};
pub use source_form::{normalize_fixed, SourceForm, DEFAULT_FIXED_LINE_LENGTH, FORTRAN_EXTENSIONS};
pub use text_range::TextRange;
