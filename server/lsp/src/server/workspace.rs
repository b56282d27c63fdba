//! Modules from other files for the server: an open document's text as
//! edited wins over the file on disk; files that are not open are read from
//! disk under the workspace folders (`crate::modules::ModuleIndex`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use analysis::model::{ExternalFile, ModuleResolver};
use ropey::Rope;
use syntax::SourceForm;
use tower_lsp_server::ls_types::Uri;

use crate::modules::{defined_modules, ModuleIndex};

/// What is known of an open document as a provider of modules, for one version.
struct OpenEntry {
    version: i32,
    modules: Vec<String>,
    parsed: Option<Arc<ExternalFile>>,
}

/// The workspace: its folders on disk and the module providers among the
/// open documents (cached per version).
pub struct Workspace {
    index: ModuleIndex,
    open: Mutex<HashMap<Uri, OpenEntry>>,
}

/// The name of a file on disk in `ExternalFile::name`: its URI, so that
/// related information and definitions can point at it.
fn uri_name(path: &Path) -> String {
    Uri::from_file_path(path).map_or_else(|| path.display().to_string(), |it| it.as_str().to_string())
}

impl Workspace {
    pub fn new(roots: Vec<PathBuf>) -> Workspace {
        let form_of: Box<dyn Fn(&Path) -> SourceForm + Send + Sync> = Box::new(|path| {
            crate::config::Config::discover(path).map_or(SourceForm::from_path(path), |it| it.form_of(path))
        });
        Workspace { index: ModuleIndex::new(roots, uri_name, form_of), open: Mutex::new(HashMap::new()) }
    }

    pub fn roots(&self) -> &[PathBuf] {
        self.index.roots()
    }

    /// Files on disk changed: modules are looked for there afresh.
    pub fn files_changed(&self) {
        self.index.files_changed();
    }

    /// How the analyses name the file of `uri` when they take modules from
    /// it (see [`ExternalFile::name`]).
    pub fn file_name(uri: &Uri) -> Option<String> {
        uri.to_file_path().map(|path| uri_name(&path))
    }

    /// Forgets what a closed document provided.
    pub fn closed(&self, uri: &Uri) {
        self.open.lock().unwrap_or_else(|it| it.into_inner()).remove(uri);
    }
}

/// One open document as the analysis of another one sees it.
pub struct OpenDocument {
    pub uri: Uri,
    pub version: i32,
    pub rope: Rope,
    pub form: SourceForm,
}

/// The resolver of one analysis: the other open documents, then the disk.
pub struct ServerModules<'a> {
    pub workspace: &'a Workspace,
    /// The document analysed: never its own provider.
    pub analysed: &'a Uri,
    pub open: Vec<OpenDocument>,
}

impl ModuleResolver for ServerModules<'_> {
    fn find_module(&self, key: &str) -> Option<Arc<ExternalFile>> {
        for document in self.open.iter().filter(|it| &it.uri != self.analysed) {
            let mut cache = self.workspace.open.lock().unwrap_or_else(|it| it.into_inner());
            let stale = cache.get(&document.uri).is_none_or(|it| it.version != document.version);
            if stale {
                let modules = defined_modules(&document.rope.to_string());
                cache.insert(document.uri.clone(), OpenEntry { version: document.version, modules, parsed: None });
            }
            let entry = cache.get_mut(&document.uri).expect("inserted above");
            if !entry.modules.iter().any(|it| it == key) {
                continue;
            }
            if entry.parsed.is_none() {
                let text = document.rope.to_string();
                entry.parsed = Some(Arc::new(ExternalFile::parse(document.uri.as_str(), text, document.form)));
            }
            let parsed = entry.parsed.clone().expect("parsed above");
            if parsed.module(key).is_some() {
                return Some(parsed);
            }
        }
        // On disk: not the analysed file, and not the open ones (their text was looked at above).
        let open_paths: Vec<PathBuf> =
            self.open.iter().filter_map(|it| it.uri.to_file_path().map(|path| path.into_owned())).collect();
        let analysed = self.analysed.to_file_path().map(|it| it.into_owned());
        self.workspace
            .index
            .find(key, &|path| analysed.as_deref() == Some(path) || open_paths.iter().any(|it| it == path))
    }
}
