//! Editor features over one [`FileAnalysis`]: hover, inlay hints, quick
//! fixes, navigation, completion, semantic tokens, folding.
//!
//! Plain data in editor terms (byte offsets, labels, edits); the `lsp`
//! crate converts them to protocol types. One analysis feeds them all.

mod fixes;
mod hover;
mod inlay_hints;
mod navigation;
mod occurrences;
mod optimize;

pub use fixes::{code_actions, Action, ActionKind, TextEdit};
pub use hover::{hover, HoverResult};
pub use inlay_hints::{inlay_hints, transfer_table, HintConfig, HintKind, InlayHint};
pub use navigation::{
    completions, definition, document_symbols, folding_ranges, references, rename, semantic_tokens, Completion,
    CompletionKind, Definition, DocumentSymbol, FoldKind, FoldingRange, SemanticToken, SemanticTokenKind,
    SymbolKindIde,
};
pub use occurrences::{occurrence_at, occurrences, Occurrence};
pub use optimize::{
    apply_edits, describe_change, describe_growth, grow_template_action, optimize_action, optimize_file_edits,
    optimize_unit_edits, propose_growth, GrownDim, Growth, Optimized,
};
