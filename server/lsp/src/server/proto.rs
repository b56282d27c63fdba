//! Conversions from `analysis` results to protocol types (to_proto).

use analysis::ide;
use syntax::Severity;
use tower_lsp_server::ls_types::{self, Uri};

use super::position::{range, PositionEncoding, Positions};
use super::{Analysed, Placed};

pub fn severity(severity: Severity) -> ls_types::DiagnosticSeverity {
    match severity {
        Severity::Error => ls_types::DiagnosticSeverity::ERROR,
        Severity::Warning => ls_types::DiagnosticSeverity::WARNING,
        Severity::Information => ls_types::DiagnosticSeverity::INFORMATION,
        Severity::Hint => ls_types::DiagnosticSeverity::HINT,
    }
}

/// Positions of chunk-relative offsets: through the chunk's own line table
/// (its lines shifted by the chunk's first line), or through the document's
/// rope for a text with a lone `\r`.
pub struct ChunkPositions<'a> {
    placed: &'a Placed,
    local: Option<Positions<'a>>,
    rope: &'a ropey::Rope,
    encoding: PositionEncoding,
}

impl<'a> ChunkPositions<'a> {
    pub fn new(analysed: &'a Analysed, placed: &'a Placed, encoding: PositionEncoding) -> ChunkPositions<'a> {
        ChunkPositions {
            placed,
            local: Positions::of_text(&placed.chunk.text, encoding),
            rope: &analysed.rope,
            encoding,
        }
    }

    pub fn range(&self, local: syntax::TextRange) -> ls_types::Range {
        match &self.local {
            Some(positions) => {
                let mut res = positions.range(local);
                res.start.line += self.placed.line;
                res.end.line += self.placed.line;
                res
            }
            None => range(self.rope, self.placed.shift(local), self.encoding),
        }
    }
}

/// One diagnostic of the chunk `positions` describes, in LSP form.
pub fn diagnostic(
    uri: &Uri,
    analysed: &Analysed,
    placed: &Placed,
    diagnostic: &syntax::Diagnostic,
    positions: &ChunkPositions,
) -> ls_types::Diagnostic {
    let encoding = positions.encoding;
    let related: Vec<ls_types::DiagnosticRelatedInformation> = diagnostic
        .related
        .iter()
        .filter_map(|it| {
            let location = match &it.file {
                None => ls_types::Location { uri: uri.clone(), range: positions.range(it.range) },
                // In a module another chunk of this document defines.
                Some(name) if analysed.sibling(name).is_some() => {
                    let sibling = analysed.sibling(name)?;
                    ls_types::Location {
                        uri: uri.clone(),
                        range: range(&analysed.rope, sibling.global(it.range), encoding),
                    }
                }
                // In a module of another file: that file's text gives the position.
                Some(name) => {
                    let external = placed.chunk.external(name)?;
                    ls_types::Location {
                        uri: name.parse().ok()?,
                        range: range(&ropey::Rope::from_str(&external.text), it.range, encoding),
                    }
                }
            };
            Some(ls_types::DiagnosticRelatedInformation { location, message: it.message.clone() })
        })
        .collect();
    ls_types::Diagnostic {
        range: positions.range(diagnostic.range),
        severity: Some(severity(diagnostic.severity)),
        code: Some(ls_types::NumberOrString::String(diagnostic.code.as_str().to_string())),
        source: Some("hpf-ls".to_string()),
        message: diagnostic.message.clone(),
        related_information: if related.is_empty() { None } else { Some(related) },
        ..Default::default()
    }
}

/// A whole `textDocument/publishDiagnostics` frame, serialised here (on an
/// analysis thread) rather than by the framework on the protocol thread: at
/// 100k lines the message is megabytes long.
pub fn publish_diagnostics_frame(uri: &Uri, diagnostics: Vec<ls_types::Diagnostic>, version: Option<i32>) -> Vec<u8> {
    #[derive(serde::Serialize)]
    struct Notification {
        jsonrpc: &'static str,
        method: &'static str,
        params: ls_types::PublishDiagnosticsParams,
    }
    let message = Notification {
        jsonrpc: "2.0",
        method: "textDocument/publishDiagnostics",
        params: ls_types::PublishDiagnosticsParams { uri: uri.clone(), diagnostics, version },
    };
    let body = serde_json::to_vec(&message).expect("diagnostics serialise to JSON");
    super::transport::frame(&body)
}

/// The `publishDiagnostics` frames of the files a document INCLUDEs: the
/// diagnostics its analysis found inside each (none: the file's are cleared).
/// A header included by several open documents shows those of the one
/// analysed last.
pub fn header_frames(analysed: &Analysed, encoding: PositionEncoding) -> Vec<Vec<u8>> {
    let mut headers: Vec<(&str, &str)> = Vec::new();
    for placed in &analysed.chunks {
        let Some(expansion) = &placed.chunk.expansion else { continue };
        for file in expansion.map.files().iter().skip(1) {
            if !headers.iter().any(|(name, _)| *name == &*file.name) {
                headers.push((&file.name, &file.text));
            }
        }
    }
    let mut frames = Vec::new();
    for (name, text) in headers {
        let Some(uri) = Uri::from_file_path(name) else { continue };
        let rope = ropey::Rope::from_str(text);
        let diagnostics = analysed
            .chunks
            .iter()
            .flat_map(|it| it.chunk.header_diagnostics.iter())
            .filter(|(header, _)| &**header == name)
            .map(|(_, it)| ls_types::Diagnostic {
                range: range(&rope, it.range, encoding),
                severity: Some(severity(it.severity)),
                code: Some(ls_types::NumberOrString::String(it.code.as_str().to_string())),
                source: Some("hpf-ls".to_string()),
                message: it.message.clone(),
                ..Default::default()
            })
            .collect();
        frames.push(publish_diagnostics_frame(&uri, diagnostics, None));
    }
    frames
}

/// The `publishDiagnostics` frame of an analysis. Each chunk's diagnostics
/// are converted and serialised once and kept with the chunk: after an edit
/// only the chunks that changed, or whose lines moved, are converted again
/// (13,038 diagnostics, 7.4 MB of JSON, at 100k lines).
pub fn publish_frame(uri: &Uri, analysed: &Analysed, encoding: PositionEncoding) -> super::transport::Frame {
    let mut pieces = Vec::with_capacity(analysed.chunks.len());
    // The key of each chunk, made in one buffer (no allocation per chunk), and the
    // sibling a name was last found to be: the procedures of a host all point into it.
    let mut key = super::document::PublishKey { utf8: encoding == PositionEncoding::Utf8, lines: Vec::new() };
    let mut last_sibling: Option<(&std::sync::Arc<str>, Option<u32>)> = None;
    for placed in &analysed.chunks {
        if placed.chunk.diagnostics.is_empty() {
            continue;
        }
        key.lines.clear();
        key.lines.push(placed.line);
        for name in placed.chunk.diagnostics.iter().flat_map(|it| &it.related).filter_map(|it| it.file.as_ref()) {
            let line = match last_sibling {
                Some((last, line)) if std::sync::Arc::ptr_eq(last, name) => line,
                _ => {
                    let line = analysed.sibling(name).map(|it| it.line);
                    last_sibling = Some((name, line));
                    line
                }
            };
            key.lines.extend(line);
        }
        let piece = match placed.chunk.published(&key) {
            Some(piece) => piece,
            None => {
                // Each diagnostic after a comma: the pieces are written one after the other.
                let positions = ChunkPositions::new(analysed, placed, encoding);
                let mut bytes = Vec::new();
                for it in placed.chunk.diagnostics.iter() {
                    bytes.push(b',');
                    let converted = diagnostic(uri, analysed, placed, it, &positions);
                    serde_json::to_writer(&mut bytes, &converted).expect("diagnostics serialise to JSON");
                }
                let piece = std::sync::Arc::new(bytes);
                placed.chunk.set_published(key.clone(), piece.clone());
                piece
            }
        };
        pieces.push(piece);
    }
    let mut head = br#"{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":"#.to_vec();
    serde_json::to_writer(&mut head, uri).expect("a URI serialises to JSON");
    head.extend_from_slice(br#","diagnostics":["#);
    let tail = format!(r#"],"version":{}}}}}"#, analysed.version).into_bytes();
    // The first piece without its comma.
    let length =
        head.len() + pieces.iter().map(|it| it.len()).sum::<usize>() - usize::from(!pieces.is_empty()) + tail.len();
    let mut start = format!("Content-Length: {length}\r\n\r\n").into_bytes();
    start.extend_from_slice(&head);
    let mut frame = super::transport::Frame::new();
    frame.push(std::sync::Arc::new(start), 0);
    for (idx, piece) in pieces.into_iter().enumerate() {
        frame.push(piece, usize::from(idx == 0));
    }
    frame.push(std::sync::Arc::new(tail), 0);
    frame
}

pub fn text_edit(analysed: &Analysed, edit: &ide::TextEdit, encoding: PositionEncoding) -> ls_types::TextEdit {
    ls_types::TextEdit { range: range(&analysed.rope, edit.range, encoding), new_text: edit.new_text.clone() }
}

/// A workspace edit for one document, tagged with the version it was computed from.
pub fn workspace_edit(
    uri: &Uri,
    analysed: &Analysed,
    edits: &[ide::TextEdit],
    encoding: PositionEncoding,
) -> ls_types::WorkspaceEdit {
    let edits = edits.iter().map(|it| ls_types::OneOf::Left(text_edit(analysed, it, encoding))).collect();
    ls_types::WorkspaceEdit {
        document_changes: Some(ls_types::DocumentChanges::Edits(vec![ls_types::TextDocumentEdit {
            text_document: ls_types::OptionalVersionedTextDocumentIdentifier {
                uri: uri.clone(),
                version: Some(analysed.version),
            },
            edits,
        }])),
        ..Default::default()
    }
}

/// `edit` in the form the client understands: clients without
/// `workspace.workspaceEdit.documentChanges` only take the plain `changes` map.
pub fn workspace_edit_for_client(edit: ls_types::WorkspaceEdit, document_changes: bool) -> ls_types::WorkspaceEdit {
    if document_changes {
        return edit;
    }
    let Some(ls_types::DocumentChanges::Edits(documents)) = edit.document_changes else { return edit };
    let mut changes: std::collections::HashMap<Uri, Vec<ls_types::TextEdit>> = std::collections::HashMap::new();
    for document in documents {
        let edits = document.edits.into_iter().map(|it| match it {
            ls_types::OneOf::Left(edit) => edit,
            ls_types::OneOf::Right(annotated) => annotated.text_edit,
        });
        changes.entry(document.text_document.uri).or_default().extend(edits);
    }
    ls_types::WorkspaceEdit { changes: Some(changes), ..Default::default() }
}

pub fn symbol_kind(kind: ide::SymbolKindIde) -> ls_types::SymbolKind {
    match kind {
        ide::SymbolKindIde::Program => ls_types::SymbolKind::MODULE,
        ide::SymbolKindIde::Module => ls_types::SymbolKind::NAMESPACE,
        ide::SymbolKindIde::Subroutine => ls_types::SymbolKind::FUNCTION,
        ide::SymbolKindIde::Function => ls_types::SymbolKind::FUNCTION,
        ide::SymbolKindIde::Array => ls_types::SymbolKind::ARRAY,
        ide::SymbolKindIde::Template => ls_types::SymbolKind::STRUCT,
        ide::SymbolKindIde::Processors => ls_types::SymbolKind::OBJECT,
        ide::SymbolKindIde::Constant => ls_types::SymbolKind::CONSTANT,
        ide::SymbolKindIde::Loop => ls_types::SymbolKind::EVENT,
    }
}

#[allow(deprecated)]
pub fn document_symbol(
    analysed: &Analysed,
    symbol: &ide::DocumentSymbol,
    encoding: PositionEncoding,
) -> ls_types::DocumentSymbol {
    let children: Vec<_> = symbol.children.iter().map(|it| document_symbol(analysed, it, encoding)).collect();
    let full = range(&analysed.rope, symbol.range, encoding);
    let mut selection = range(&analysed.rope, symbol.selection, encoding);
    // The selection must lie inside the range.
    if selection.start < full.start || selection.end > full.end {
        selection = ls_types::Range { start: full.start, end: full.start };
    }
    ls_types::DocumentSymbol {
        name: if symbol.name.is_empty() { "?".to_string() } else { symbol.name.clone() },
        detail: symbol.detail.clone(),
        kind: symbol_kind(symbol.kind),
        tags: None,
        deprecated: None,
        range: full,
        selection_range: selection,
        children: if children.is_empty() { None } else { Some(children) },
    }
}

/// The legend of semantic tokens: the order of `SemanticTokenKind`.
pub fn semantic_token_types() -> Vec<ls_types::SemanticTokenType> {
    vec![
        ls_types::SemanticTokenType::KEYWORD,
        ls_types::SemanticTokenType::TYPE,
        ls_types::SemanticTokenType::NAMESPACE,
        ls_types::SemanticTokenType::VARIABLE,
    ]
}

pub fn semantic_tokens(
    analysed: &Analysed,
    tokens: &[ide::SemanticToken],
    encoding: PositionEncoding,
) -> Vec<ls_types::SemanticToken> {
    let mut res = Vec::with_capacity(tokens.len());
    let (mut previous_line, mut previous_start) = (0u32, 0u32);
    for token in tokens {
        let start = super::position::position(&analysed.rope, token.range.start, encoding);
        let end = super::position::position(&analysed.rope, token.range.end, encoding);
        if end.line != start.line || end.character <= start.character {
            continue;
        }
        let delta_line = start.line - previous_line;
        let delta_start = if delta_line == 0 { start.character - previous_start } else { start.character };
        res.push(ls_types::SemanticToken {
            delta_line,
            delta_start,
            length: end.character - start.character,
            token_type: match token.kind {
                ide::SemanticTokenKind::DirectiveKeyword => 0,
                ide::SemanticTokenKind::Template => 1,
                ide::SemanticTokenKind::Processors => 2,
                ide::SemanticTokenKind::Array => 3,
            },
            token_modifiers_bitset: 0,
        });
        previous_line = start.line;
        previous_start = start.character;
    }
    res
}
