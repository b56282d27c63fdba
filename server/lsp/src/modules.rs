//! Modules of other files: where a USEd module that a file does not define
//! is found. The language server looks in its open documents first (their
//! text as edited), then in the Fortran files under the workspace folders;
//! the command line looks under the project root (the directory of
//! `hpf-ls.toml`) or else the file's own directory. Both read files from
//! disk through [`ModuleIndex`], so `hpf-ls check` and the editor agree.
//!
//! Bounds: at most [`MAX_FILES`] files are looked at per walk, files over
//! [`MAX_FILE_BYTES`] are skipped, hidden directories and `target`,
//! `node_modules` and `build` are not entered. The roots are listed and new
//! or changed files scanned at most once per 3 s, not per analysis (a file
//! changed meanwhile is seen at the next refresh). A file is parsed only
//! when it defines a module that is needed, and kept until it changes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use analysis::model::{ExternalFile, ModuleResolver};
use syntax::{SourceForm, FORTRAN_EXTENSIONS};

/// Files looked at per walk of the roots.
pub const MAX_FILES: usize = 20_000;
/// Larger files are not read for modules.
pub const MAX_FILE_BYTES: u64 = 16 << 20;
/// A walk of the roots is reused for this long before files are listed again.
const WALK_REUSE: Duration = Duration::from_secs(3);

/// The module names a text defines (lower case): `module NAME` statements,
/// not `module procedure`/`module function`/`module subroutine`. A cheap
/// scan, good enough to decide which file to parse; the parse decides.
pub fn defined_modules(text: &str) -> Vec<String> {
    let mut res = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        let Some(head) = line.get(..6) else { continue };
        if !head.eq_ignore_ascii_case("module") {
            continue;
        }
        let rest = &line[6..];
        if !rest.starts_with([' ', '\t']) {
            continue;
        }
        let name: String =
            rest.trim_start().chars().take_while(|it| it.is_ascii_alphanumeric() || *it == '_').collect();
        let name = name.to_ascii_lowercase();
        if name.is_empty() || matches!(name.as_str(), "procedure" | "function" | "subroutine") {
            continue;
        }
        if !res.contains(&name) {
            res.push(name);
        }
    }
    res
}

/// What is known of one file on disk, valid while its length and
/// modification time stay the same.
struct Scanned {
    stamp: (u64, Option<SystemTime>),
    modules: Vec<String>,
    parsed: Option<Arc<ExternalFile>>,
}

#[derive(Default)]
struct Cache {
    files: Vec<PathBuf>,
    walked: Option<Instant>,
    scanned: HashMap<PathBuf, Scanned>,
}

/// Finds modules in the Fortran files under some root directories.
pub struct ModuleIndex {
    roots: Vec<PathBuf>,
    /// How a file is named in [`ExternalFile::name`]: a path, or a URI for the server.
    name_of: fn(&Path) -> String,
    /// The source form of a file.
    form_of: Box<dyn Fn(&Path) -> SourceForm + Send + Sync>,
    cache: Mutex<Cache>,
}

impl ModuleIndex {
    pub fn new(
        roots: Vec<PathBuf>,
        name_of: fn(&Path) -> String,
        form_of: Box<dyn Fn(&Path) -> SourceForm + Send + Sync>,
    ) -> ModuleIndex {
        ModuleIndex { roots, name_of, form_of, cache: Mutex::new(Cache::default()) }
    }

    /// The index the command line uses for `path`: its project root, else its directory.
    pub fn for_file(path: &Path) -> ModuleIndex {
        let root = crate::config::Config::discover(path)
            .ok()
            .and_then(|it| it.root)
            .or_else(|| path.parent().map(Path::to_path_buf))
            .unwrap_or_else(|| PathBuf::from("."));
        let root = if root.as_os_str().is_empty() { PathBuf::from(".") } else { root };
        ModuleIndex::new(
            vec![root],
            display_name,
            Box::new(|it| crate::config::Config::discover(it).map_or(SourceForm::from_path(it), |c| c.form_of(it))),
        )
    }

    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Files under the roots changed (the client's file watcher said so):
    /// the next lookup lists and scans the disk again instead of reusing a
    /// walk younger than [`WALK_REUSE`].
    pub fn files_changed(&self) {
        self.cache.lock().unwrap_or_else(|it| it.into_inner()).walked = None;
    }

    /// The file on disk that defines module `key`, parsed; `skip` is left
    /// out (the file being analysed, or files whose editor text wins).
    pub fn find(&self, key: &str, skip: &dyn Fn(&Path) -> bool) -> Option<Arc<ExternalFile>> {
        if self.roots.is_empty() {
            return None;
        }
        let mut cache = self.cache.lock().unwrap_or_else(|it| it.into_inner());
        // The disk is looked at (listed, stat'ed, changed files scanned) at
        // most once per WALK_REUSE: analyses on the edit path look up memory.
        if cache.walked.is_none_or(|it| it.elapsed() > WALK_REUSE) {
            refresh(&mut cache, &self.roots);
        }
        let Cache { files, scanned, .. } = &mut *cache;
        for path in files.iter().filter(|it| !skip(it)) {
            let Some(scanned) = scanned.get_mut(path) else { continue };
            if !scanned.modules.iter().any(|it| it == key) {
                continue;
            }
            if scanned.parsed.is_none() {
                let Ok(text) = crate::cli::read_text(path) else { continue };
                let external = ExternalFile::parse((self.name_of)(path), text, (self.form_of)(path));
                scanned.parsed = Some(Arc::new(external));
            }
            let parsed = scanned.parsed.clone().expect("parsed above");
            if parsed.module(key).is_some() {
                return Some(parsed);
            }
        }
        None
    }
}

/// A path as the command line shows it: relative to the working directory when under it.
fn display_name(path: &Path) -> String {
    let cwd = std::env::current_dir().ok();
    let relative = cwd.as_deref().and_then(|cwd| path.strip_prefix(cwd).ok());
    relative.or_else(|| path.strip_prefix(".").ok()).unwrap_or(path).display().to_string()
}

/// Lists the files under `roots` again and scans those that are new or
/// changed (length or modification time) for the modules they define.
fn refresh(cache: &mut Cache, roots: &[PathBuf]) {
    cache.files = walk(roots);
    let mut known = std::mem::take(&mut cache.scanned);
    for path in &cache.files {
        let Ok(metadata) = std::fs::metadata(path) else { continue };
        if metadata.len() > MAX_FILE_BYTES {
            continue;
        }
        let stamp = (metadata.len(), metadata.modified().ok());
        match known.remove(path) {
            Some(scanned) if scanned.stamp == stamp => {
                cache.scanned.insert(path.clone(), scanned);
            }
            _ => {
                let Ok(text) = crate::cli::read_text(path) else { continue };
                cache.scanned.insert(path.clone(), Scanned { stamp, modules: defined_modules(&text), parsed: None });
            }
        }
    }
    cache.walked = Some(Instant::now());
}

/// The Fortran files under `roots`, sorted, at most [`MAX_FILES`].
fn walk(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack: Vec<PathBuf> = roots.to_vec();
    let mut visited = 0usize;
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            visited += 1;
            if visited > MAX_FILES {
                found.sort();
                return found;
            }
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                if !name.starts_with('.') && !matches!(name.as_ref(), "target" | "node_modules" | "build") {
                    stack.push(path);
                }
            } else if kind.is_file()
                && path
                    .extension()
                    .and_then(|it| it.to_str())
                    .is_some_and(|ext| FORTRAN_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()))
            {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The command line's resolver: modules on disk, never the analysed files themselves.
pub struct DiskModules<'a> {
    pub index: &'a ModuleIndex,
    /// The files of the analysed program (their modules are in its text).
    pub analysed: Vec<PathBuf>,
}

impl ModuleResolver for DiskModules<'_> {
    fn find_module(&self, key: &str) -> Option<Arc<ExternalFile>> {
        let analysed: Vec<PathBuf> =
            self.analysed.iter().map(|it| std::fs::canonicalize(it).unwrap_or_else(|_| it.clone())).collect();
        self.index.find(key, &|path| std::fs::canonicalize(path).is_ok_and(|it| analysed.contains(&it)))
    }
}

/// Analyses `text` (the file at `path`) as the command line does: modules
/// it USEs and does not define come from the files around it.
pub fn analyze_path(
    path: &Path,
    text: &str,
    form: SourceForm,
    config: analysis::ModelConfig,
) -> analysis::FileAnalysis {
    let index = ModuleIndex::for_file(path);
    let resolver = DiskModules { index: &index, analysed: vec![path.to_path_buf()] };
    analysis::analyze_file_with(syntax::parse(text, form), config, &resolver)
}

/// Analyses the expanded text of a program (`crate::sources::load`) as
/// the command line does; the problems of the expansion (files not found,
/// preprocessor errors) are among its diagnostics, and the severities of
/// hpf-ls.toml and the command line are applied.
pub fn analyze_input(
    input: &crate::cli::Input,
    loaded: &crate::sources::Loaded,
    config: analysis::ModelConfig,
) -> analysis::FileAnalysis {
    let index = ModuleIndex::for_file(&input.path);
    let resolver = DiskModules { index: &index, analysed: input.roots.clone() };
    let expanded = &loaded.expanded;
    let mut analysis = analysis::analyze_file_with(syntax::parse(&expanded.text, input.form), config, &resolver);
    if !expanded.diagnostics.is_empty() {
        analysis.diagnostics.extend(expanded.diagnostics.iter().cloned());
        analysis.diagnostics.sort_by_key(|it| (it.range.start, it.range.end, it.code.as_str()));
    }
    crate::config::apply_severities(&mut analysis.diagnostics, &input.severities);
    analysis
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_statements_are_found_and_module_procedures_are_not() {
        let text = "MODULE Grid\n  module procedure foo\ncontains\n module function f()\nend module\n  module  other_2 ! c\nmodulex y\n";
        assert_eq!(defined_modules(text), ["grid", "other_2"]);
    }
}
