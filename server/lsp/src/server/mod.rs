//! The language server: LSP 3.17 over stdio with tower-lsp-server.
//!
//! Documents live in one store keyed by URI. Notification handlers apply
//! their edit to the store before their first `.await` (tower-lsp-server
//! runs handlers concurrently), under a std lock never held across an
//! await. Analysis runs in `spawn_blocking`, reparses incrementally from
//! the last tree, and is dropped when a newer version arrived meanwhile;
//! diagnostics are published with the version they describe. Requests wait
//! (briefly) for the analysis of the current version and answer from it.

mod handlers;
pub mod position;
mod proto;
mod run;
pub mod settings;
pub mod transport;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use analysis::{FileAnalysis, ModelConfig};
use ropey::Rope;
use syntax::SourceForm;
use tower_lsp_server::ls_types::{self, Uri};
use tower_lsp_server::{Client, LspService, Server};
use tree_sitter::{InputEdit, Point, Tree};

use position::PositionEncoding;
use settings::Settings;

/// How long a request waits for the analysis of the latest edit.
const ANALYSIS_WAIT: Duration = Duration::from_secs(10);

/// The analysis of one version of a document, with the text it read.
pub struct Analysed {
    pub version: i32,
    pub text: Arc<String>,
    pub rope: Rope,
    pub analysis: FileAnalysis,
}

struct Document {
    version: i32,
    rope: Rope,
    /// The form the document's name (or the settings) give.
    form: SourceForm,
    /// The parser text and tree of the last analysis: the next one reparses from them.
    parse: Option<(Arc<String>, Tree)>,
    analysed: Option<Arc<Analysed>>,
}

pub struct State {
    documents: Mutex<HashMap<Uri, Document>>,
    /// Woken whenever an analysis is stored.
    analysed: tokio::sync::Notify,
    settings: RwLock<Settings>,
    encoding: RwLock<PositionEncoding>,
    markdown: RwLock<bool>,
    pull_configuration: RwLock<bool>,
    /// The client takes versioned `documentChanges` in workspace edits.
    document_changes: RwLock<bool>,
}

#[derive(Clone)]
pub struct Backend {
    client: Client,
    state: Arc<State>,
}

/// Runs the server on stdin/stdout until `exit`. Logs go to stderr.
pub fn run_stdio() -> i32 {
    let filter = tracing_subscriber::EnvFilter::try_from_env("HPF_LS_LOG").unwrap_or_else(|_| "hpf_ls=info".into());
    let _ = tracing_subscriber::fmt().with_writer(std::io::stderr).with_ansi(false).with_env_filter(filter).try_init();
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("hpf-ls: cannot start the runtime: {error}");
            return 2;
        }
    };
    runtime.block_on(serve(tokio::io::stdin(), tokio::io::stdout()));
    // Do not wait for analyses still running in the blocking pool.
    runtime.shutdown_timeout(Duration::from_millis(100));
    0
}

/// Serves one client reading `input` and writing `output` until `exit` or
/// the end of the input (`run_stdio` on stdin/stdout; the fuzz target in
/// `fuzz/` in memory).
pub async fn serve(
    input: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    output: impl tokio::io::AsyncWrite + Unpin + Send + 'static,
) {
    let (service, socket) = LspService::new(|client| Backend {
        client,
        state: Arc::new(State {
            documents: Mutex::new(HashMap::new()),
            analysed: tokio::sync::Notify::new(),
            settings: RwLock::new(Settings::default()),
            encoding: RwLock::new(PositionEncoding::Utf16),
            markdown: RwLock::new(false),
            pull_configuration: RwLock::new(false),
            document_changes: RwLock::new(false),
        }),
    });
    // Frames pass through the tolerant transport: a bad message gets an
    // error response instead of ending the session.
    let (server_input, filter_output) = tokio::io::duplex(1 << 16);
    let (server_output, merge_input) = tokio::io::duplex(1 << 16);
    let (errors, error_frames) = tokio::sync::mpsc::channel(16);
    let filter = tokio::spawn(transport::filter_input(input, filter_output, errors));
    let merger = tokio::spawn(transport::merge_output(merge_input, error_frames, output));
    Server::new(server_input, server_output, socket).serve(service).await;
    filter.abort();
    let _ = tokio::time::timeout(Duration::from_secs(2), merger).await;
}

impl State {
    fn encoding(&self) -> PositionEncoding {
        *self.encoding.read().expect("encoding lock")
    }

    fn settings(&self) -> Settings {
        self.settings.read().expect("settings lock").clone()
    }

    fn form_for(&self, uri: &Uri) -> SourceForm {
        if let Some(form) = self.settings().form_override() {
            return form;
        }
        let path = uri.path().as_str();
        // hpf-ls.toml next to the file, when the file is on disk.
        if let Some(path) = uri.to_file_path() {
            if let Ok(config) = crate::config::Config::discover(&path) {
                return config.form_of(&path);
            }
        }
        SourceForm::from_path(std::path::Path::new(path))
    }
}

/// The changed region between two texts: common prefix and suffix.
fn input_edit(old: &str, new: &str) -> Option<InputEdit> {
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

/// Parses (incrementally when a previous tree exists) and analyses.
fn compute(
    version: i32,
    rope: Rope,
    form: SourceForm,
    previous: Option<(Arc<String>, Tree)>,
    settings: &Settings,
) -> (Analysed, (Arc<String>, Tree)) {
    let text = Arc::new(rope.to_string());
    let parser_text = Arc::new(syntax::parser_text(&text, form).into_owned());
    let tree = match previous {
        Some((old_text, mut old_tree)) => {
            if let Some(edit) = input_edit(&old_text, &parser_text) {
                old_tree.edit(&edit);
                syntax::parse_tree(&parser_text, Some(&old_tree))
            } else {
                old_tree
            }
        }
        None => syntax::parse_tree(&parser_text, None),
    };
    let file = syntax::lower_tree(&text, &parser_text, form, &tree);
    let config = ModelConfig { number_of_processors: settings.processors };
    let mut analysis = analysis::analyze_file(file, config);
    crate::config::apply_severities(&mut analysis.diagnostics, &settings.severities());
    (Analysed { version, text, rope, analysis }, (parser_text, tree))
}

impl Backend {
    /// Analyses `uri` at `version` off the request path and publishes its
    /// diagnostics, unless a newer version arrives first.
    fn schedule(&self, uri: Uri, version: i32) {
        let state = self.state.clone();
        let client = self.client.clone();
        tokio::spawn(async move {
            let job = {
                let documents = state.documents.lock().expect("documents lock");
                match documents.get(&uri) {
                    Some(doc) if doc.version == version => Some((doc.rope.clone(), doc.form, doc.parse.clone())),
                    _ => None,
                }
            };
            let Some((rope, form, previous)) = job else { return };
            let settings = state.settings();
            let result = tokio::task::spawn_blocking(move || {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    compute(version, rope, form, previous, &settings)
                }))
            })
            .await;
            let (analysed, parse) = match result {
                Ok(Ok(it)) => it,
                Ok(Err(_)) | Err(_) => {
                    tracing::error!("analysis of {} version {version} panicked", uri.as_str());
                    client
                        .log_message(
                            ls_types::MessageType::ERROR,
                            format!("hpf-ls: the analysis of {} failed (a bug; see the server log)", uri.as_str()),
                        )
                        .await;
                    return;
                }
            };
            let analysed = Arc::new(analysed);
            let current = {
                let mut documents = state.documents.lock().expect("documents lock");
                match documents.get_mut(&uri) {
                    Some(doc) => {
                        // Any parse is a valid base for the next incremental reparse.
                        doc.parse = Some(parse);
                        if doc.version == version {
                            doc.analysed = Some(analysed.clone());
                            true
                        } else {
                            false
                        }
                    }
                    None => false,
                }
            };
            state.analysed.notify_waiters();
            if current {
                let diagnostics = proto::diagnostics(&uri, &analysed, state.encoding());
                client.publish_diagnostics(uri, diagnostics, Some(version)).await;
            }
        });
    }

    /// The analysis of the current version of `uri`, waiting for it if an
    /// edit is being analysed; `None` for unknown documents.
    async fn analysed(&self, uri: &Uri) -> Option<Arc<Analysed>> {
        let deadline = tokio::time::Instant::now() + ANALYSIS_WAIT;
        loop {
            let notified = self.state.analysed.notified();
            {
                let documents = self.state.documents.lock().expect("documents lock");
                let doc = documents.get(uri)?;
                match &doc.analysed {
                    Some(analysed) if analysed.version == doc.version => return Some(analysed.clone()),
                    Some(analysed) if tokio::time::Instant::now() >= deadline => return Some(analysed.clone()),
                    None if tokio::time::Instant::now() >= deadline => return None,
                    _ => {}
                }
            }
            let _ = tokio::time::timeout_at(deadline, notified).await;
        }
    }

    fn reanalyse_all(&self) {
        let versions: Vec<(Uri, i32)> = {
            let mut documents = self.state.documents.lock().expect("documents lock");
            documents
                .iter_mut()
                .map(|(uri, doc)| {
                    doc.form = self.state.form_for(uri);
                    // Settings changed: the old analysis no longer describes this version.
                    doc.analysed = None;
                    doc.parse = None;
                    (uri.clone(), doc.version)
                })
                .collect()
        };
        for (uri, version) in versions {
            self.schedule(uri, version);
        }
    }
}
