//! The language server: LSP 3.17 over stdio with tower-lsp-server.
//!
//! Documents live in one store keyed by URI. Notification handlers apply
//! their edit to the store before their first `.await` (tower-lsp-server
//! runs handlers concurrently), under a std lock never held across an
//! await. The protocol runs on one thread; analysis runs on `SCHED_IDLE`
//! worker threads (`workers`), analyses again only the chunks (top-level
//! program units, a host's part up to CONTAINS, procedures) the edit touched or whose USEd modules changed (see
//! `document`), and is dropped when a newer version arrived meanwhile; diagnostics are serialised there and published with
//! the version they describe. Requests wait (briefly)
//! for the analysis of the current version and answer from it.

mod document;
mod handlers;
pub mod position;
mod proto;
mod run;
pub mod settings;
mod stdio;
pub mod transport;
mod workers;
pub mod workspace;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use analysis::FileAnalysis;
use ropey::Rope;
use syntax::SourceForm;
use tower_lsp_server::ls_types::{self, Uri};
use tower_lsp_server::{Client, LspService, Server};

use position::PositionEncoding;
use settings::{Settings, WorkspaceTrust};

/// How long a request waits for the analysis of the latest edit.
const ANALYSIS_WAIT: Duration = Duration::from_secs(10);

pub use document::{Analysed, Chunk, Placed};

/// A number never handed out before: revisions of a document closed and
/// opened again never collide with an analysis still running for the old one.
fn next_revision() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

struct Document {
    version: i32,
    rope: Rope,
    /// The form the document's name (or the settings) give.
    form: SourceForm,
    /// The last analysis made, current or not: the next one takes the
    /// chunks whose text did not change from it and reparses from its trees.
    parse: Option<Arc<Analysed>>,
    analysed: Option<Arc<Analysed>>,
    /// Bumped by every change of text or settings; `analysed_revision` is the
    /// one the stored analysis (or a failed attempt) describes.
    revision: u64,
    analysed_revision: Option<u64>,
    /// An analysis of this document is running.
    analysing: bool,
}

pub struct State {
    documents: Mutex<HashMap<Uri, Document>>,
    /// Woken whenever an analysis is stored.
    analysed: tokio::sync::Notify,
    settings: RwLock<Settings>,
    /// Set once by `initialize`; restricted, `hpf.run`/`hpf.build` are refused.
    trust: RwLock<WorkspaceTrust>,
    encoding: RwLock<PositionEncoding>,
    markdown: RwLock<bool>,
    pull_configuration: RwLock<bool>,
    /// The client registers file watchers on request (`workspace/didChangeWatchedFiles`).
    watch_files: RwLock<bool>,
    /// The client takes versioned `documentChanges` in workspace edits.
    document_changes: RwLock<bool>,
    /// Where USEd modules of other files are found (set by `initialize`).
    workspace: RwLock<Arc<workspace::Workspace>>,
    /// Frames written to the client as they are, beside the framework's
    /// messages: every `publishDiagnostics` goes this way, so they stay in order.
    frames: tokio::sync::mpsc::Sender<transport::Frame>,
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
    #[cfg(target_os = "linux")]
    // No transparent huge pages: where the system gives them to every
    // mapping, the first touch of one zeroed 2 MB inside whichever thread
    // touched it, the protocol thread included (the allocator is built not
    // to ask for them, `no_thp`; this covers `enabled=always` too).
    // SAFETY: prctl with these integer arguments only sets a flag of the process.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
    // One thread serves the protocol: the framework polls every handler
    // inside its one serving task anyway, and the tasks around it (the
    // tolerant transport, the scheduling of analyses) are short. With a
    // multi-threaded runtime each request hopped across threads five times or
    // more; under a stream of edits a hop now and then waited milliseconds for
    // its thread to be woken (bench/RESULTS.md, "Under load").
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("hpf-ls: cannot start the runtime: {error}");
            return 2;
        }
    };
    runtime.block_on(async {
        let (input, output) = stdio::stdio();
        serve(input, output).await;
    });
    // Do not wait for blocking tasks; analyses on `workers` end with the process.
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
    // Frames pass through the tolerant transport: a bad message gets an
    // error response instead of ending the session.
    let (frames, raw_frames) = tokio::sync::mpsc::channel(16);
    let (service, socket) = LspService::new(|client| Backend {
        client,
        state: Arc::new(State {
            documents: Mutex::new(HashMap::new()),
            analysed: tokio::sync::Notify::new(),
            settings: RwLock::new(Settings::default()),
            trust: RwLock::new(WorkspaceTrust::Trusted),
            encoding: RwLock::new(PositionEncoding::Utf16),
            markdown: RwLock::new(false),
            pull_configuration: RwLock::new(false),
            watch_files: RwLock::new(false),
            document_changes: RwLock::new(false),
            workspace: RwLock::new(Arc::new(workspace::Workspace::new(Vec::new()))),
            frames: frames.clone(),
        }),
    });
    let (server_input, filter_output) = tokio::io::duplex(1 << 16);
    let (server_output, merge_input) = tokio::io::duplex(1 << 16);
    let filter = tokio::spawn(transport::filter_input(input, filter_output, frames));
    let merger = tokio::spawn(transport::merge_output(merge_input, raw_frames, output));
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

    fn trust(&self) -> WorkspaceTrust {
        *self.trust.read().expect("trust lock")
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

/// The modules the analysed file USEs that were found nowhere (lower case).
fn unknown_modules(analysis: &FileAnalysis) -> Vec<String> {
    let model = &analysis.model;
    if !model.units.iter().any(|it| it.uses_unknown_module) {
        return Vec::new();
    }
    let known = |key: &str| {
        model
            .units
            .iter()
            .any(|it| it.kind == syntax::UnitKind::Module && it.name.as_ref().is_some_and(|name| name.key() == key))
    };
    let mut res: Vec<String> = analysis::model::flatten_units(&analysis.file)
        .into_iter()
        .flat_map(|(unit, _)| unit.uses.iter().map(|it| it.key()))
        .filter(|it| !known(it))
        .collect();
    res.sort();
    res.dedup();
    res
}

/// Where the INCLUDE lines of `uri` find their files: its directory, then
/// the `include` directories of its hpf-ls.toml; open documents' text first.
fn includes_of(uri: &Uri, open: &[workspace::OpenDocument]) -> document::Includes {
    let Some(path) = uri.to_file_path().map(|it| crate::sources::clean(&it)) else {
        return document::Includes::default();
    };
    let config = crate::config::Config::discover(&path).unwrap_or_default();
    let dirs = config.include_dirs();
    let cpp = config.file.cpp || syntax::include::preprocessed_by_name(&path.display().to_string());
    let open =
        open.iter().filter_map(|it| Some((crate::sources::clean(&it.uri.to_file_path()?), it.rope.clone()))).collect();
    document::Includes { path: Some(path), dirs, open, cpp, defines: config.file.defines, ..Default::default() }
}

/// Whether a chunk of `analysed` INCLUDEs the file at `path` (directly or not).
fn includes_file(analysed: &Analysed, path: &std::path::Path) -> bool {
    analysed
        .chunks
        .iter()
        .filter_map(|it| it.chunk.expansion.as_ref())
        .any(|expansion| expansion.map.files().iter().skip(1).any(|file| std::path::Path::new(&*file.name) == path))
}

/// Analyses a version of a document, chunk by chunk, from the previous analysis.
fn compute(
    version: i32,
    rope: Rope,
    form: SourceForm,
    name: &str,
    previous: Option<Arc<Analysed>>,
    settings: &Settings,
    outside: document::Outside<'_>,
) -> Arc<Analysed> {
    let analysed = document::analyse(version, rope, form, name, previous.as_deref(), settings, outside);
    // Freed here, on the analysis worker, not on the protocol thread.
    let started = std::time::Instant::now();
    drop(previous);
    tracing::debug!("previous analysis dropped in {:.2} ms", started.elapsed().as_secs_f64() * 1e3);
    Arc::new(analysed)
}

impl Backend {
    /// Analyses the current text of `uri` off the request path and publishes
    /// its diagnostics. One analysis per document runs at a time: edits that
    /// arrive meanwhile are coalesced, and only the newest revision is
    /// analysed next (a burst of keystrokes costs two analyses, not one each).
    fn schedule(&self, uri: Uri) {
        let state = self.state.clone();
        let client = self.client.clone();
        tokio::spawn(async move {
            loop {
                let job = {
                    let mut documents = state.documents.lock().expect("documents lock");
                    let Some(doc) = documents.get_mut(&uri) else { return };
                    if doc.analysing || doc.analysed_revision == Some(doc.revision) {
                        // The running analysis picks the newest revision up when it ends.
                        return;
                    }
                    doc.analysing = true;
                    let job = (doc.revision, doc.version, doc.rope.clone(), doc.form, doc.parse.clone());
                    // The other open documents may define modules this one USEs.
                    let open: Vec<workspace::OpenDocument> = documents
                        .iter()
                        .filter(|(other, _)| **other != uri)
                        .map(|(other, it)| workspace::OpenDocument {
                            uri: other.clone(),
                            version: it.version,
                            rope: it.rope.clone(),
                            form: it.form,
                        })
                        .collect();
                    (job, open)
                };
                let ((revision, version, rope, form, previous), open) = job;
                let workspace = state.workspace.read().expect("workspace lock").clone();
                let settings = state.settings();
                let (job_uri, encoding) = (uri.clone(), state.encoding());
                let result = workers::analysis_pool()
                    .run(move || {
                        let includes = includes_of(&job_uri, &open);
                        let modules = workspace::ServerModules { workspace: &workspace, analysed: &job_uri, open };
                        let outside = document::Outside { modules: &modules, includes: &includes };
                        let analysed = compute(version, rope, form, job_uri.as_str(), previous, &settings, outside);
                        // Converted and serialised here too: at a hundred edits a second,
                        // or at 100k lines, that would otherwise delay the requests.
                        let started = std::time::Instant::now();
                        let frame = proto::publish_frame(&job_uri, &analysed, encoding);
                        tracing::debug!(
                            "publishDiagnostics frame: {} bytes in {:.2} ms",
                            frame.len(),
                            started.elapsed().as_secs_f64() * 1e3
                        );
                        // The diagnostics inside the files it includes go to those files.
                        let headers = proto::header_frames(&analysed, encoding);
                        (analysed, (frame, headers))
                    })
                    .await;
                let computed = match result {
                    Ok(it) => Some(it),
                    Err(workers::Panicked) => {
                        tracing::error!("analysis of {} version {version} panicked", uri.as_str());
                        client
                            .log_message(
                                ls_types::MessageType::ERROR,
                                format!("hpf-ls: the analysis of {} failed (a bug; see the server log)", uri.as_str()),
                            )
                            .await;
                        None
                    }
                };
                let (current, replaced, to_publish) = {
                    let mut documents = state.documents.lock().expect("documents lock");
                    let Some(doc) = documents.get_mut(&uri) else { return };
                    doc.analysing = false;
                    match computed {
                        None => {
                            // Do not retry the revision that failed; a newer one is analysed.
                            doc.analysed_revision = Some(revision);
                            (false, None, None)
                        }
                        Some((analysed, frame)) => {
                            // Any analysis is a valid base for the next one.
                            let replaced_parse = doc.parse.replace(analysed.clone());
                            if doc.revision == revision {
                                doc.analysed_revision = Some(revision);
                                let replaced = doc.analysed.replace(analysed.clone());
                                (true, Some((replaced, replaced_parse)), Some(frame))
                            } else {
                                (false, Some((None, replaced_parse)), None)
                            }
                        }
                    }
                };
                state.analysed.notify_waiters();
                // Freeing a large analysis takes time (a third of an edit's
                // cost at 100k lines): not under the lock, not on the protocol thread.
                if let Some(replaced) = replaced {
                    workers::analysis_pool().spawn(move || drop(replaced));
                }
                if let (true, Some((frame, headers))) = (current, to_publish) {
                    let _ = state.frames.send(frame).await;
                    for header in headers {
                        let _ = state.frames.send(header.into()).await;
                    }
                    return;
                }
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

    /// Reanalyses the open documents that use modules of `changed` (just
    /// opened, edited or closed): those whose analysis took modules from it,
    /// and those USEing a module not found that its text now defines.
    fn reanalyse_dependents(&self, changed: &Uri) {
        let dependents: Vec<Uri> = {
            let mut documents = self.state.documents.lock().expect("documents lock");
            let mut defined: Option<Vec<String>> = None;
            let changed_text = documents.get(changed).map(|it| it.rope.clone());
            let changed_path = changed.to_file_path().map(|it| crate::sources::clean(&it));
            let mut res = Vec::new();
            for (uri, doc) in documents.iter_mut().filter(|(uri, _)| *uri != changed) {
                let Some(analysed) = &doc.analysed else { continue };
                let took_from = analysed.externals().any(|it| *it.name == *changed.as_str())
                    || changed_path.as_deref().is_some_and(|path| includes_file(analysed, path));
                let unknown = &analysed.unknown_modules;
                let now_defined = !unknown.is_empty()
                    && changed_text.as_ref().is_some_and(|text| {
                        let defined = defined.get_or_insert_with(|| crate::modules::defined_modules(&text.to_string()));
                        unknown.iter().any(|it| defined.contains(it))
                    });
                if took_from || now_defined {
                    doc.revision = next_revision();
                    res.push(uri.clone());
                }
            }
            res
        };
        for uri in dependents {
            self.schedule(uri);
        }
    }

    /// Files on disk that are not open changed (created, edited, deleted):
    /// modules are looked for there afresh, and the open documents that took
    /// modules from them, or USE modules that were not found, are analysed again.
    fn files_changed_on_disk(&self, changed: &[Uri]) {
        self.state.workspace.read().expect("workspace lock").files_changed();
        let names: Vec<String> = changed.iter().filter_map(workspace::Workspace::file_name).collect();
        let dependents: Vec<Uri> = {
            let mut documents = self.state.documents.lock().expect("documents lock");
            let mut res = Vec::new();
            for (uri, doc) in documents.iter_mut() {
                let Some(analysed) = &doc.analysed else { continue };
                let took_from = analysed.externals().any(|it| names.iter().any(|name| *name == *it.name))
                    || changed
                        .iter()
                        .filter_map(|it| it.to_file_path())
                        .any(|it| includes_file(analysed, &crate::sources::clean(&it)));
                if took_from || !analysed.unknown_modules.is_empty() {
                    doc.revision = next_revision();
                    res.push(uri.clone());
                }
            }
            res
        };
        for uri in dependents {
            self.schedule(uri);
        }
    }

    fn reanalyse_all(&self) {
        let uris: Vec<Uri> = {
            let mut documents = self.state.documents.lock().expect("documents lock");
            documents
                .iter_mut()
                .map(|(uri, doc)| {
                    doc.form = self.state.form_for(uri);
                    // Settings changed: the old analysis no longer describes this version.
                    doc.analysed = None;
                    doc.parse = None;
                    doc.revision = next_revision();
                    uri.clone()
                })
                .collect()
        };
        for uri in uris {
            self.schedule(uri);
        }
    }
}

/// Hooks for `tests/edit_sequences.rs`: the store's application of
/// `didChange` content changes and its incremental analysis, driven
/// in-process without the protocol. Not an API.
#[doc(hidden)]
pub mod hooks {
    use std::sync::Arc;

    use ropey::Rope;
    use syntax::SourceForm;
    use tower_lsp_server::ls_types::TextDocumentContentChangeEvent;

    use super::position::{text_range, PositionEncoding};
    use super::settings::Settings;
    use super::Analysed;

    /// What an analysis leaves for the next one: itself (its chunks, and
    /// the trees of the chunks it computed).
    pub type Parse = Arc<Analysed>;

    /// Applies content changes in order (`did_change` calls this): a ranged
    /// change replaces its range, a change without a range the whole text.
    pub fn apply_changes(rope: &mut Rope, changes: &[TextDocumentContentChangeEvent], encoding: PositionEncoding) {
        for change in changes {
            match change.range {
                Some(change_range) => {
                    let target = text_range(rope, change_range, encoding);
                    let (start, end) = (rope.byte_to_char(target.start), rope.byte_to_char(target.end));
                    rope.remove(start..end);
                    rope.insert(start, &change.text);
                }
                None => *rope = Rope::from_str(&change.text),
            }
        }
    }

    /// The size of the `publishDiagnostics` frame the server sends for
    /// `analysed` (made as the server makes it: the timing of `hpf-bench`).
    pub fn publish_frame_len(analysed: &Analysed) -> usize {
        let uri: tower_lsp_server::ls_types::Uri = "file:///hooks.f90".parse().expect("a valid URI");
        super::proto::publish_frame(&uri, analysed, PositionEncoding::Utf8).len()
    }

    /// The server's log on stderr, filtered by `HPF_LS_LOG` (`hpf_ls=debug`
    /// shows where an analysis spends its time).
    pub fn init_log() {
        let filter = tracing_subscriber::EnvFilter::try_from_env("HPF_LS_LOG").unwrap_or_else(|_| "hpf_ls=info".into());
        let _ =
            tracing_subscriber::fmt().with_writer(std::io::stderr).with_ansi(false).with_env_filter(filter).try_init();
    }

    /// The server's analysis of `rope`, reparsing from `previous` when given.
    pub fn analyse(rope: Rope, form: SourceForm, previous: Option<Parse>, settings: &Settings) -> Arc<Analysed> {
        let includes = super::document::Includes::default();
        let outside = super::document::Outside { modules: &analysis::model::NoModules, includes: &includes };
        super::compute(0, rope, form, "untitled:hooks", previous, settings, outside)
    }
}
