//! The protocol handlers. Each converts its params, asks `analysis::ide`
//! once, and converts the answer; a panic becomes an error response.

use analysis::ide;
use serde_json::Value;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::LanguageServer;

use super::position::{offset, position, range, text_range, PositionEncoding};
use super::proto::{self, ChunkPositions};
use super::settings::{Settings, WorkspaceTrust};
use super::{Analysed, Backend, Document, Placed};

/// How long the server waits for the client to answer `workspace/configuration`.
const CONFIGURATION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

pub const COMMAND_SHOW_TRANSFER_PATTERN: &str = "hpf.showTransferPattern";
pub const COMMAND_RUN: &str = "hpf.run";
pub const COMMAND_BUILD: &str = "hpf.build";
pub const COMMAND_SHOW_GENERATED: &str = "hpf.showGenerated";
pub const COMMAND_EXPLAIN_LOOP: &str = "hpf.explainLoop";

/// Runs a read-only handler body; a panic becomes an `InternalError` answer.
fn guard<T>(what: &str, body: impl FnOnce() -> T) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).map_err(|panic| {
        let message = panic
            .downcast_ref::<&str>()
            .map(|it| it.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        tracing::error!("{what} panicked: {message}");
        Error {
            code: ErrorCode::InternalError,
            message: format!("hpf-ls: {what} failed: {message}").into(),
            data: None,
        }
    })
}

fn invalid_params(message: impl Into<String>) -> Error {
    Error { code: ErrorCode::InvalidParams, message: message.into().into(), data: None }
}

impl Backend {
    fn encoding(&self) -> PositionEncoding {
        self.state.encoding()
    }

    fn apply_settings(&self, value: &Value) {
        match Settings::from_json(value) {
            Ok(settings) => {
                *self.state.settings.write().expect("settings lock") = settings;
                self.reanalyse_all();
            }
            Err(error) => {
                tracing::warn!("invalid settings: {error}");
                let client = self.client.clone();
                tokio::spawn(async move {
                    client
                        .show_message(MessageType::WARNING, format!("hpf-ls: invalid settings ignored: {error}"))
                        .await;
                });
            }
        }
    }

    /// Asks the client for the `hpf` section when it supports
    /// `workspace/configuration`. Detached from the notification handler: a
    /// client that shuts down before answering must not keep the server
    /// from exiting.
    fn pull_configuration(&self) {
        if !*self.state.pull_configuration.read().expect("lock") {
            return;
        }
        let this = self.clone();
        tokio::spawn(async move {
            let items = vec![ConfigurationItem { scope_uri: None, section: Some("hpf".to_string()) }];
            match tokio::time::timeout(CONFIGURATION_TIMEOUT, this.client.configuration(items)).await {
                Ok(Ok(values)) => {
                    if let Some(value) = values.into_iter().next().filter(|it| !it.is_null()) {
                        this.apply_settings(&value);
                    }
                }
                Ok(Err(error)) => tracing::warn!("workspace/configuration failed: {error}"),
                Err(_) => tracing::warn!("workspace/configuration unanswered after {CONFIGURATION_TIMEOUT:?}"),
            }
        });
    }

    /// Asks the client to report changes of the Fortran files of the
    /// workspace (modules USEd from files that are not open). Detached, as
    /// [`Backend::pull_configuration`] is.
    fn watch_fortran_files(&self) {
        if !*self.state.watch_files.read().expect("lock") {
            return;
        }
        let extensions: Vec<String> =
            syntax::FORTRAN_EXTENSIONS.iter().flat_map(|it| [it.to_string(), it.to_ascii_uppercase()]).collect();
        let options = DidChangeWatchedFilesRegistrationOptions {
            watchers: vec![FileSystemWatcher {
                glob_pattern: GlobPattern::String(format!("**/*.{{{}}}", extensions.join(","))),
                kind: None,
            }],
        };
        let registration = Registration {
            id: "hpf-ls-fortran-files".to_string(),
            method: "workspace/didChangeWatchedFiles".to_string(),
            register_options: serde_json::to_value(options).ok(),
        };
        let client = self.client.clone();
        tokio::spawn(async move {
            match tokio::time::timeout(CONFIGURATION_TIMEOUT, client.register_capability(vec![registration])).await {
                Ok(Ok(())) => {}
                Ok(Err(error)) => tracing::warn!("registering the file watcher failed: {error}"),
                Err(_) => tracing::warn!("client/registerCapability unanswered after {CONFIGURATION_TIMEOUT:?}"),
            }
        });
    }

    async fn with_document<T>(&self, uri: &Uri, what: &str, body: impl FnOnce(&Analysed) -> T) -> Result<Option<T>> {
        let started = std::time::Instant::now();
        let Some(analysed) = self.analysed(uri).await else { return Ok(None) };
        let waited = started.elapsed();
        let result = guard(what, || body(&analysed)).map(Some);
        // Latency under load is measured on the client; this splits it.
        tracing::debug!(
            "{what}: {:.3} ms waiting for the analysis, {:.3} ms answering",
            waited.as_secs_f64() * 1e3,
            (started.elapsed() - waited).as_secs_f64() * 1e3
        );
        result
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let capabilities = &params.capabilities;
        let utf8 = capabilities
            .general
            .as_ref()
            .and_then(|it| it.position_encodings.as_ref())
            .is_some_and(|it| it.contains(&PositionEncodingKind::UTF8));
        let encoding = if utf8 { PositionEncoding::Utf8 } else { PositionEncoding::Utf16 };
        *self.state.encoding.write().expect("encoding lock") = encoding;
        let markdown = capabilities
            .text_document
            .as_ref()
            .and_then(|it| it.hover.as_ref())
            .and_then(|it| it.content_format.as_ref())
            .is_some_and(|it| it.contains(&MarkupKind::Markdown));
        *self.state.markdown.write().expect("markdown lock") = markdown;
        let document_changes = capabilities
            .workspace
            .as_ref()
            .and_then(|it| it.workspace_edit.as_ref())
            .and_then(|it| it.document_changes)
            .unwrap_or(false);
        *self.state.document_changes.write().expect("lock") = document_changes;
        // Modules USEd from files that are not open are read from under these.
        #[allow(deprecated)]
        let roots: Vec<std::path::PathBuf> = match &params.workspace_folders {
            Some(folders) if !folders.is_empty() => folders.iter().map(|it| &it.uri).collect::<Vec<_>>(),
            _ => params.root_uri.iter().collect(),
        }
        .into_iter()
        .filter_map(|it| it.to_file_path().map(|path| path.into_owned()))
        .collect();
        *self.state.workspace.write().expect("workspace lock") =
            std::sync::Arc::new(super::workspace::Workspace::new(roots));
        let pull = capabilities.workspace.as_ref().and_then(|it| it.configuration).unwrap_or(false);
        *self.state.pull_configuration.write().expect("lock") = pull;
        let watch = capabilities
            .workspace
            .as_ref()
            .and_then(|it| it.did_change_watched_files.as_ref())
            .and_then(|it| it.dynamic_registration)
            .unwrap_or(false);
        *self.state.watch_files.write().expect("lock") = watch;
        *self.state.trust.write().expect("trust lock") =
            WorkspaceTrust::from_initialization_options(params.initialization_options.as_ref());
        if let Some(options) = &params.initialization_options {
            match Settings::from_json(options) {
                Ok(settings) => *self.state.settings.write().expect("settings lock") = settings,
                Err(error) => tracing::warn!("invalid initializationOptions: {error}"),
            }
        }
        let legend = SemanticTokensLegend { token_types: proto::semantic_token_types(), token_modifiers: Vec::new() };
        Ok(InitializeResult {
            server_info: Some(ServerInfo {
                name: "hpf-ls".to_string(),
                version: Some(env!("CARGO_PKG_VERSION").to_string()),
            }),
            capabilities: ServerCapabilities {
                position_encoding: Some(if utf8 { PositionEncodingKind::UTF8 } else { PositionEncodingKind::UTF16 }),
                text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::INCREMENTAL),
                    ..Default::default()
                })),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
                    code_action_kinds: Some(vec![CodeActionKind::QUICKFIX, CodeActionKind::SOURCE]),
                    ..Default::default()
                })),
                inlay_hint_provider: Some(OneOf::Left(true)),
                code_lens_provider: Some(CodeLensOptions { resolve_provider: Some(false) }),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: vec![
                        COMMAND_SHOW_TRANSFER_PATTERN.to_string(),
                        COMMAND_RUN.to_string(),
                        COMMAND_BUILD.to_string(),
                        COMMAND_SHOW_GENERATED.to_string(),
                        COMMAND_EXPLAIN_LOOP.to_string(),
                    ],
                    ..Default::default()
                }),
                document_symbol_provider: Some(OneOf::Left(true)),
                definition_provider: Some(OneOf::Left(true)),
                references_provider: Some(OneOf::Left(true)),
                rename_provider: Some(OneOf::Left(true)),
                completion_provider: Some(CompletionOptions {
                    trigger_characters: Some(vec!["(".to_string(), ",".to_string(), " ".to_string()]),
                    ..Default::default()
                }),
                semantic_tokens_provider: Some(SemanticTokensServerCapabilities::SemanticTokensOptions(
                    SemanticTokensOptions {
                        legend,
                        full: Some(SemanticTokensFullOptions::Bool(true)),
                        range: None,
                        ..Default::default()
                    },
                )),
                folding_range_provider: Some(FoldingRangeProviderCapability::Simple(true)),
                ..Default::default()
            },
            ..Default::default()
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        tracing::info!("hpf-ls {} initialized", env!("CARGO_PKG_VERSION"));
        self.pull_configuration();
        self.watch_fortran_files();
    }

    async fn did_change_watched_files(&self, params: DidChangeWatchedFilesParams) {
        let changed: Vec<Uri> = {
            let documents = self.state.documents.lock().expect("documents lock");
            params
                .changes
                .into_iter()
                .map(|it| it.uri)
                // An open document's text comes from the editor, not the disk.
                .filter(|uri| is_fortran_file(uri) && !documents.contains_key(uri))
                .collect()
        };
        if !changed.is_empty() {
            self.files_changed_on_disk(&changed);
        }
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let document = params.text_document;
        let form = self.state.form_for(&document.uri);
        {
            let mut documents = self.state.documents.lock().expect("documents lock");
            // Opened again while open: an analysis still running belongs to the old text.
            let analysing = documents.get(&document.uri).is_some_and(|it| it.analysing);
            documents.insert(
                document.uri.clone(),
                Document {
                    version: document.version,
                    rope: ropey::Rope::from_str(&document.text),
                    form,
                    parse: None,
                    analysed: None,
                    revision: super::next_revision(),
                    analysed_revision: None,
                    analysing,
                },
            );
        }
        self.schedule(document.uri.clone());
        self.reanalyse_dependents(&document.uri);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        let version = params.text_document.version;
        let encoding = self.encoding();
        let applied = {
            let mut documents = self.state.documents.lock().expect("documents lock");
            match documents.get_mut(&uri) {
                None => Err(format!("didChange for {}, which is not open", uri.as_str())),
                Some(doc) if version <= doc.version => Err(format!(
                    "didChange for {} with version {version}, not newer than {}",
                    uri.as_str(),
                    doc.version
                )),
                Some(doc) => {
                    super::hooks::apply_changes(&mut doc.rope, &params.content_changes, encoding);
                    doc.version = version;
                    doc.revision = super::next_revision();
                    Ok(())
                }
            }
        };
        match applied {
            Ok(()) => {
                self.schedule(uri.clone());
                self.reanalyse_dependents(&uri);
            }
            Err(message) => {
                tracing::warn!("{message}");
                self.client.log_message(MessageType::WARNING, format!("hpf-ls: {message}; ignored")).await;
            }
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        self.state.documents.lock().expect("documents lock").remove(&uri);
        self.state.workspace.read().expect("workspace lock").closed(&uri);
        // Its modules now come from the file on disk, if anywhere.
        self.reanalyse_dependents(&uri);
        let _ = self.state.frames.send(proto::publish_diagnostics_frame(&uri, Vec::new(), None).into()).await;
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        if params.settings.is_null() || params.settings.as_object().is_some_and(|it| it.is_empty()) {
            // A nudge to pull the configuration (the VS Code client sends one).
            self.pull_configuration();
            return;
        }
        self.apply_settings(&params.settings);
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let uri = params.text_document_position_params.text_document.uri;
        let at = params.text_document_position_params.position;
        let encoding = self.encoding();
        let markdown = *self.state.markdown.read().expect("lock");
        let result = self
            .with_document(&uri, "hover", |analysed| {
                let offset = offset(&analysed.rope, at, encoding);
                let placed = analysed.chunk_at(offset);
                let chunk = &placed.chunk;
                let hover =
                    ide::hover(&analysed.analysis_of(placed), chunk.analysed_text(), placed.local(offset), markdown)?;
                Some(Hover {
                    contents: HoverContents::Markup(MarkupContent {
                        kind: if markdown { MarkupKind::Markdown } else { MarkupKind::PlainText },
                        value: hover.contents,
                    }),
                    range: Some(range(&analysed.rope, placed.global(hover.range), encoding)),
                })
            })
            .await?;
        Ok(result.flatten())
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let uri = params.text_document.uri;
        let encoding = self.encoding();
        let only = params.context.only.clone();
        let result = self
            .with_document(&uri, "codeAction", |analysed| {
                let target = text_range(&analysed.rope, params.range, encoding);
                let placed = analysed.chunk_at(target.start);
                // The fixes of a module array another chunk defines rewrite that
                // chunk and weigh the loops of every unit: the whole text answers.
                let (whole, whole_text, chunk_analysis);
                let on_whole = involves_other_chunks(analysed, placed, placed.local_range(target));
                let (analysis, text, local, shift): (
                    &analysis::FileAnalysis,
                    &str,
                    _,
                    &dyn Fn(syntax::TextRange) -> syntax::TextRange,
                ) = if on_whole {
                    (whole, whole_text) = (analysed.whole(), analysed.text());
                    (&whole, whole_text.as_str(), target, &|it| it)
                } else {
                    chunk_analysis = analysed.analysis_of(placed);
                    (&chunk_analysis, placed.chunk.analysed_text(), placed.local_range(target), &|it| placed.global(it))
                };
                // A fix that would edit a header the chunk includes is not offered
                // (its edits are ranges of the header, not of this document).
                let expansion = placed.chunk.expansion.as_ref().filter(|_| !on_whole);
                let in_header = |range: syntax::TextRange| expansion.is_some_and(|it| it.in_header(range).is_some());
                let mut actions = ide::code_actions(analysis, text, local);
                // "Optimize all alignments in this unit" (whole-unit search, see analysis::optimize).
                let optimize = analysis::optimize::CostConfig {
                    default_trips: analysis::optimize::DEFAULT_TRIPS,
                    exact_limit: analysis::optimize::EXACT_LIMIT,
                    node_budget: analysis::optimize::NODE_BUDGET,
                };
                if only.as_ref().is_none_or(|only| only.iter().any(|it| it.as_str().starts_with("source"))) {
                    actions.extend(ide::optimize_action(analysis, text, local, optimize));
                    actions.extend(ide::grow_template_action(analysis, text, local, optimize));
                }
                // "Distribute ... instead of ...": the cheapest distribution of the loop's target.
                actions.extend(analysis::whatif::redistribute_actions(analysis, text, local));
                let mut res: CodeActionResponse = Vec::new();
                for action in actions {
                    let kind = match action.kind {
                        ide::ActionKind::QuickFix => CodeActionKind::QUICKFIX,
                        ide::ActionKind::Source => CodeActionKind::SOURCE,
                    };
                    if let Some(only) = &only {
                        if !only.iter().any(|it| kind.as_str().starts_with(it.as_str())) {
                            continue;
                        }
                    }
                    if action.edits.iter().any(|it| in_header(it.range)) {
                        continue;
                    }
                    // The diagnostic it fixes, as published (from the chunk's analysis).
                    let positions = ChunkPositions::new(analysed, placed, encoding);
                    let diagnostics = action.fixes.map(|fixed| {
                        // As the chunk keeps its diagnostics: relative to its start, in its own text.
                        let global = shift(fixed);
                        let fixed = syntax::TextRange::new(
                            global.start.saturating_sub(placed.start),
                            global.end.saturating_sub(placed.start),
                        );
                        placed
                            .chunk
                            .diagnostics
                            .iter()
                            .filter(|it| it.range == fixed && it.code == syntax::Code::MisalignedTransfer)
                            .map(|it| proto::diagnostic(&uri, analysed, placed, it, &positions))
                            .collect()
                    });
                    let edits: Vec<ide::TextEdit> = action
                        .edits
                        .iter()
                        .map(|it| ide::TextEdit { range: shift(it.range), new_text: it.new_text.clone() })
                        .collect();
                    res.push(CodeActionOrCommand::CodeAction(CodeAction {
                        title: action.title,
                        kind: Some(kind),
                        diagnostics,
                        edit: Some(proto::workspace_edit(&uri, analysed, &edits, encoding)),
                        is_preferred: Some(action.is_preferred),
                        ..Default::default()
                    }));
                }
                res
            })
            .await?;
        let document_changes = *self.state.document_changes.read().expect("lock");
        Ok(result.map(|actions| {
            actions
                .into_iter()
                .map(|it| match it {
                    CodeActionOrCommand::CodeAction(mut action) => {
                        action.edit = action.edit.map(|edit| proto::workspace_edit_for_client(edit, document_changes));
                        CodeActionOrCommand::CodeAction(action)
                    }
                    command => command,
                })
                .collect()
        }))
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        let uri = params.text_document.uri;
        let encoding = self.encoding();
        let settings = self.state.settings().inlay_hints;
        let config = ide::HintConfig { loops: settings.loops, references: settings.references };
        self.with_document(&uri, "inlayHint", |analysed| {
            let wanted = text_range(&analysed.rope, params.range, encoding);
            overlapping(analysed, wanted)
                .flat_map(|placed| {
                    let local = placed.local_range(wanted);
                    let shown = move |hint: &&ide::InlayHint| match hint.kind {
                        ide::HintKind::LoopSummary | ide::HintKind::Remap => config.loops,
                        ide::HintKind::Reference => config.references,
                    };
                    placed
                        .chunk
                        .inlay_hints
                        .iter()
                        .filter(shown)
                        .filter(move |hint| local.contains_inclusive(hint.offset))
                        .map(|hint| (placed.start + hint.offset, hint.label.clone()))
                })
                .map(|(at, label)| InlayHint {
                    position: position(&analysed.rope, at, encoding),
                    label: InlayHintLabel::String(label),
                    kind: None,
                    text_edits: None,
                    tooltip: None,
                    padding_left: Some(false),
                    padding_right: Some(false),
                    data: None,
                })
                .collect()
        })
        .await
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        // The only lens runs the program, which a restricted workspace may not.
        if self.state.trust() == WorkspaceTrust::Restricted {
            return Ok(None);
        }
        let uri = params.text_document.uri;
        let encoding = self.encoding();
        let processes = self.state.settings().mpi.processes.unwrap_or(4);
        self.with_document(&uri, "codeLens", |analysed| {
            analysed
                .chunks
                .iter()
                .flat_map(|placed| placed.chunk.programs.iter().map(|it| placed.start + it))
                .map(|start| CodeLens {
                    range: range(&analysed.rope, syntax::TextRange::empty(start), encoding),
                    command: Some(Command {
                        title: format!("▶ Run on {processes} processes"),
                        command: COMMAND_RUN.to_string(),
                        arguments: Some(vec![Value::String(uri.as_str().to_string()), Value::from(processes)]),
                    }),
                    data: None,
                })
                .collect()
        })
        .await
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        match params.command.as_str() {
            COMMAND_SHOW_TRANSFER_PATTERN => {
                let uri = params
                    .arguments
                    .first()
                    .and_then(|it| it.as_str())
                    .and_then(|it| it.parse::<Uri>().ok())
                    .ok_or_else(|| invalid_params("hpf.showTransferPattern takes [uri, position]"))?;
                let at: Position = params
                    .arguments
                    .get(1)
                    .and_then(|it| serde_json::from_value(it.clone()).ok())
                    .ok_or_else(|| invalid_params("hpf.showTransferPattern takes [uri, position]"))?;
                let encoding = self.encoding();
                let table = self
                    .with_document(&uri, "showTransferPattern", |analysed| {
                        let offset = offset(&analysed.rope, at, encoding);
                        let placed = analysed.chunk_at(offset);
                        ide::transfer_table(
                            &analysed.analysis_of(placed),
                            placed.chunk.analysed_text(),
                            placed.local(offset),
                        )
                    })
                    .await?
                    .ok_or_else(|| invalid_params(format!("{} is not open", uri.as_str())))?;
                match table {
                    Some(table) => Ok(Some(Value::String(table))),
                    None => Err(invalid_params("there is no loop at this position")),
                }
            }
            COMMAND_EXPLAIN_LOOP => {
                let usage = || invalid_params("hpf.explainLoop takes [uri, position]");
                let uri = params
                    .arguments
                    .first()
                    .and_then(|it| it.as_str())
                    .and_then(|it| it.parse::<Uri>().ok())
                    .ok_or_else(usage)?;
                let at: Position =
                    params.arguments.get(1).and_then(|it| serde_json::from_value(it.clone()).ok()).ok_or_else(usage)?;
                let encoding = self.encoding();
                let explained = self
                    .with_document(&uri, "explainLoop", |analysed| {
                        let offset = offset(&analysed.rope, at, encoding);
                        let placed = analysed.chunk_at(offset);
                        let chunk = &placed.chunk;
                        let explained = analysis::picture::explain(
                            &analysed.analysis_of(placed),
                            chunk.analysed_text(),
                            placed.local(offset),
                        )?;
                        Some(serde_json::json!({
                            "text": explained.text,
                            "svg": explained.svg,
                            "whatIf": explained.what_if,
                            "range": range(&analysed.rope, placed.global(explained.header), encoding),
                        }))
                    })
                    .await?
                    .ok_or_else(|| invalid_params(format!("{} is not open", uri.as_str())))?;
                match explained {
                    Some(explained) => Ok(Some(explained)),
                    None => Err(invalid_params("there is no loop at this position")),
                }
            }
            COMMAND_RUN | COMMAND_BUILD | COMMAND_SHOW_GENERATED => {
                let uri = params
                    .arguments
                    .first()
                    .and_then(|it| it.as_str())
                    .and_then(|it| it.parse::<Uri>().ok())
                    .ok_or_else(|| invalid_params(format!("{} takes [uri, processes?]", params.command)))?;
                if params.command != COMMAND_SHOW_GENERATED && self.state.trust() == WorkspaceTrust::Restricted {
                    return Err(Error {
                        code: ErrorCode::InvalidRequest,
                        message: format!(
                            "{} is refused: the workspace is not trusted (Restricted Mode), and hpf-ls runs no \
                             compiler, launcher or program for it. Trust the workspace to build and run.",
                            params.command
                        )
                        .into(),
                        data: None,
                    });
                }
                let analysed =
                    self.analysed(&uri).await.ok_or_else(|| invalid_params(format!("{} is not open", uri.as_str())))?;
                let settings = self.state.settings().mpi;
                let failed =
                    |message: String| Error { code: ErrorCode::InternalError, message: message.into(), data: None };
                let processes = (params.command == COMMAND_RUN).then(|| {
                    params
                        .arguments
                        .get(1)
                        .and_then(Value::as_u64)
                        .map_or(settings.processes.unwrap_or(4), |it| it.clamp(1, 4096) as u32)
                });
                // The program's other files and headers are read with the editor's text of those open.
                let open: Vec<(std::path::PathBuf, String)> = {
                    let documents = self.state.documents.lock().expect("documents lock");
                    documents
                        .iter()
                        .filter_map(|(uri, doc)| Some((uri.to_file_path()?.into_owned(), doc.rope.to_string())))
                        .collect()
                };
                let path = uri.to_file_path();
                let program = guard("program", || {
                    super::run::program(&analysed, path.as_deref(), &open, processes.or(settings.processes))
                })?
                .map_err(failed)?;
                if params.command == COMMAND_SHOW_GENERATED {
                    let (generated, _) =
                        guard("showGenerated", || super::run::generate(&program, &settings))?.map_err(failed)?;
                    return Ok(Some(Value::String(generated.source)));
                }
                let token = params.work_done_progress_params.work_done_token.clone();
                super::run::build_or_run(&self.client, &program, &settings, processes, token)
                    .await
                    .map(Some)
                    .map_err(failed)
            }
            other => Err(invalid_params(format!("unknown command `{other}`"))),
        }
    }

    async fn document_symbol(&self, params: DocumentSymbolParams) -> Result<Option<DocumentSymbolResponse>> {
        let uri = params.text_document.uri;
        let encoding = self.encoding();
        self.with_document(&uri, "documentSymbol", |analysed| {
            let symbols = analysed.document_symbols();
            DocumentSymbolResponse::Nested(
                symbols.iter().map(|it| proto::document_symbol(analysed, it, encoding)).collect(),
            )
        })
        .await
    }

    async fn goto_definition(&self, params: GotoDefinitionParams) -> Result<Option<GotoDefinitionResponse>> {
        let uri = params.text_document_position_params.text_document.uri;
        let at = params.text_document_position_params.position;
        let encoding = self.encoding();
        let result = self
            .with_document(&uri, "definition", |analysed| {
                let offset = offset(&analysed.rope, at, encoding);
                let placed = analysed.chunk_at(offset);
                let target = ide::definition(&analysed.analysis_of(placed), placed.local(offset))?;
                let sibling = target.file.as_ref().and_then(|it| analysed.sibling(&it.name));
                let in_header = placed.chunk.expansion.as_ref().and_then(|it| it.in_header(target.range));
                let location = match (&target.file, sibling) {
                    // Declared in a file the chunk INCLUDEs.
                    (None, _) if in_header.is_some() => {
                        let (path, text, target) = in_header.expect("checked");
                        Location {
                            uri: Uri::from_file_path(path)?,
                            range: range(&ropey::Rope::from_str(text), target, encoding),
                        }
                    }
                    (None, _) => Location {
                        uri: uri.clone(),
                        range: range(&analysed.rope, placed.global(target.range), encoding),
                    },
                    // Declared in a module another chunk defines.
                    (Some(_), Some(sibling)) => Location {
                        uri: uri.clone(),
                        range: range(&analysed.rope, sibling.global(target.range), encoding),
                    },
                    // Declared in a module of another file.
                    (Some(file), None) => Location {
                        uri: file.name.parse().ok()?,
                        range: range(&ropey::Rope::from_str(&file.text), target.range, encoding),
                    },
                };
                Some(GotoDefinitionResponse::Scalar(location))
            })
            .await?;
        Ok(result.flatten())
    }

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        let uri = params.text_document_position.text_document.uri;
        let at = params.text_document_position.position;
        let include = params.context.include_declaration;
        let encoding = self.encoding();
        self.with_document(&uri, "references", |analysed| {
            let offset = offset(&analysed.rope, at, encoding);
            let placed = analysed.chunk_at(offset);
            let found = if symbol_of_other_chunks(analysed, placed, placed.local(offset)) {
                ide::references(&analysed.whole(), offset, include)
            } else {
                let found = ide::references(&analysed.analysis_of(placed), placed.local(offset), include);
                found.into_iter().map(|it| placed.global(it)).collect()
            };
            found
                .into_iter()
                .map(|it| Location { uri: uri.clone(), range: range(&analysed.rope, it, encoding) })
                .collect()
        })
        .await
    }

    async fn rename(&self, params: RenameParams) -> Result<Option<WorkspaceEdit>> {
        let uri = params.text_document_position.text_document.uri;
        let at = params.text_document_position.position;
        let encoding = self.encoding();
        let result = self
            .with_document(&uri, "rename", |analysed| {
                let offset = offset(&analysed.rope, at, encoding);
                let placed = analysed.chunk_at(offset);
                let edits = if symbol_of_other_chunks(analysed, placed, placed.local(offset)) {
                    ide::rename(&analysed.whole(), offset, &params.new_name)
                } else {
                    ide::rename(&analysed.analysis_of(placed), placed.local(offset), &params.new_name).map(|edits| {
                        edits
                            .into_iter()
                            .map(|it| ide::TextEdit { range: placed.global(it.range), new_text: it.new_text })
                            .collect()
                    })
                };
                edits.map(|edits| proto::workspace_edit(&uri, analysed, &edits, encoding))
            })
            .await?;
        match result {
            None => Ok(None),
            Some(Ok(edit)) => {
                let document_changes = *self.state.document_changes.read().expect("lock");
                Ok(Some(proto::workspace_edit_for_client(edit, document_changes)))
            }
            Some(Err(message)) => Err(invalid_params(message)),
        }
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let uri = params.text_document_position.text_document.uri;
        let at = params.text_document_position.position;
        let encoding = self.encoding();
        self.with_document(&uri, "completion", |analysed| {
            let offset = offset(&analysed.rope, at, encoding);
            let placed = analysed.chunk_at(offset);
            let items =
                ide::completions(&analysed.analysis_of(placed), placed.chunk.analysed_text(), placed.local(offset))
                    .into_iter()
                    .map(|it| CompletionItem {
                        label: it.label,
                        kind: Some(match it.kind {
                            ide::CompletionKind::Keyword => CompletionItemKind::KEYWORD,
                            ide::CompletionKind::Format => CompletionItemKind::ENUM_MEMBER,
                            ide::CompletionKind::Array => CompletionItemKind::VARIABLE,
                            ide::CompletionKind::Template => CompletionItemKind::STRUCT,
                            ide::CompletionKind::Processors => CompletionItemKind::MODULE,
                            ide::CompletionKind::Constant => CompletionItemKind::CONSTANT,
                        }),
                        detail: it.detail,
                        ..Default::default()
                    })
                    .collect();
            CompletionResponse::Array(items)
        })
        .await
    }

    async fn semantic_tokens_full(&self, params: SemanticTokensParams) -> Result<Option<SemanticTokensResult>> {
        let uri = params.text_document.uri;
        let encoding = self.encoding();
        self.with_document(&uri, "semanticTokens", |analysed| {
            let tokens: Vec<ide::SemanticToken> = analysed
                .chunks
                .iter()
                .flat_map(|placed| {
                    let tokens = placed.chunk.semantic_tokens.iter();
                    tokens.map(|it| ide::SemanticToken { range: placed.shift(it.range), kind: it.kind })
                })
                .collect();
            SemanticTokensResult::Tokens(SemanticTokens {
                result_id: None,
                data: proto::semantic_tokens(analysed, &tokens, encoding),
            })
        })
        .await
    }

    async fn folding_range(&self, params: FoldingRangeParams) -> Result<Option<Vec<FoldingRange>>> {
        let uri = params.text_document.uri;
        let encoding = self.encoding();
        self.with_document(&uri, "foldingRange", |analysed| {
            analysed
                .folding_ranges()
                .into_iter()
                .map(|it| (it.range, it.kind))
                .filter_map(|(folded, kind)| {
                    let folded = range(&analysed.rope, folded, encoding);
                    (folded.end.line > folded.start.line).then_some(FoldingRange {
                        start_line: folded.start.line,
                        start_character: None,
                        end_line: folded.end.line,
                        end_character: None,
                        kind: Some(match kind {
                            ide::FoldKind::Directives => FoldingRangeKind::Comment,
                            ide::FoldKind::Region => FoldingRangeKind::Region,
                        }),
                        collapsed_text: None,
                    })
                })
                .collect()
        })
        .await
    }
}

/// Whether `uri` names a Fortran source file (by its extension).
fn is_fortran_file(uri: &Uri) -> bool {
    let path = uri.path().as_str();
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.')
        .is_some_and(|(_, ext)| syntax::FORTRAN_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()))
}

/// The chunks that overlap `range` (document offsets), in text order.
fn overlapping(analysed: &Analysed, range: syntax::TextRange) -> impl Iterator<Item = &Placed> {
    analysed.chunks.iter().filter(move |it| it.start <= range.end && range.start <= it.end())
}

/// A diagnostic of the chunk in `local` points into a module another chunk
/// defines (its ALIGN is there): its fix is an edit of that chunk.
fn involves_other_chunks(analysed: &Analysed, placed: &Placed, local: syntax::TextRange) -> bool {
    placed.chunk.diagnostics.iter().filter(|it| it.range.start <= local.end && local.start <= it.range.end).any(|it| {
        it.related.iter().any(|related| related.file.as_deref().is_some_and(|name| analysed.sibling(name).is_some()))
    })
}

/// The symbol at `local` may be named in other chunks: it is declared in a
/// module (of this chunk or another one of the document).
fn symbol_of_other_chunks(analysed: &Analysed, placed: &Placed, local: usize) -> bool {
    if analysed.chunks.len() == 1 {
        return false;
    }
    let analysis = analysed.analysis_of(placed);
    let Some(target) = ide::definition(&analysis, local) else { return false };
    // Declared in a host: its procedures' chunks may name it; in a module: any chunk.
    let frame = placed.chunk.frame();
    match &target.file {
        Some(file) => analysed.sibling(&file.name).is_some(),
        None if frame.host(target.range).is_some() => true,
        None => analysis.model.units.iter().any(|it| {
            let hosts = it.parent.is_none() && analysed.hosts(placed);
            it.origin.is_none()
                && (it.kind == syntax::UnitKind::Module || hosts)
                && it.range.contains(target.range.start)
        }),
    }
}
