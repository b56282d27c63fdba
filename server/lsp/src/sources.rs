//! The files of a program on disk: which files make one program, in which
//! order they are joined, and the INCLUDE files they read, expanded into
//! one text with `syntax::include` (the analysis and the backend read that
//! text; messages map back to the files through its `SourceMap`).
//!
//! Used by the command line; the language server finds headers through the
//! same [`DiskLoader`], with the editor's text of open files first.

use std::path::{Component, Path, PathBuf};

use syntax::include::{self, ExpandOptions, Expanded, Root, SourceLoader};

use crate::cli::{read_text, Input};
use crate::config::{glob_matches, Config};

/// `path` without `.` components and with `dir/..` folded, so a header
/// reached by two spellings is one file (and a cycle is seen as one).
pub fn clean(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.components().next_back(), Some(Component::Normal(_))) => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    if out.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        out
    }
}

/// Finds included files: the including file's directory, then `dirs`.
/// `overlay` gives the text of a file when the caller has a newer one than
/// the disk (the editor's open documents).
pub struct DiskLoader<'a> {
    pub dirs: &'a [PathBuf],
    pub overlay: &'a dyn Fn(&Path) -> Option<String>,
    /// Name files relative to the working directory when under it (as the
    /// command line shows paths); else as found (absolute for the server).
    pub relative_names: bool,
}

impl SourceLoader for DiskLoader<'_> {
    fn load(&self, name: &str, from: &str) -> Result<(String, String), String> {
        let wanted = Path::new(name);
        let own_dir = Path::new(from).parent().map(Path::to_path_buf).unwrap_or_default();
        let candidates: Vec<PathBuf> = if wanted.is_absolute() {
            vec![wanted.to_path_buf()]
        } else {
            std::iter::once(own_dir.join(wanted)).chain(self.dirs.iter().map(|dir| dir.join(wanted))).collect()
        };
        for candidate in candidates {
            let candidate = clean(&candidate);
            let name = || {
                let cwd = std::env::current_dir().ok().filter(|_| self.relative_names);
                let relative = cwd.as_deref().and_then(|cwd| candidate.strip_prefix(cwd).ok());
                relative.unwrap_or(&candidate).display().to_string()
            };
            if let Some(text) = (self.overlay)(&candidate) {
                return Ok((name(), text));
            }
            if candidate.is_file() {
                return Ok((name(), read_text(&candidate)?));
            }
        }
        let mut looked: Vec<String> =
            std::iter::once(&clean(&own_dir)).chain(self.dirs).map(|it| it.display().to_string()).collect();
        looked.dedup();
        Err(format!("cannot find `{name}` (looked in {})", looked.join(", ")))
    }
}

/// A program's text, expanded.
pub struct Loaded {
    pub expanded: Expanded,
}

/// Reads the files of `input` and expands them into one text.
pub fn load(input: &Input) -> Result<Loaded, String> {
    load_with(input, false)
}

/// [`load`] for the backend: headers that hold COMMON blocks become
/// modules their includers USE (`ExpandOptions::common_headers_as_modules`).
pub fn load_for_backend(input: &Input) -> Result<Loaded, String> {
    load_with(input, true)
}

/// [`load_for_backend`] with `overlay` giving the text of the files that
/// have a newer one than the disk (the editor's open documents), roots
/// and headers alike; file names as found (not relative to the working
/// directory, which is not the program's for the server).
pub fn load_for_backend_over(input: &Input, overlay: &dyn Fn(&Path) -> Option<String>) -> Result<Loaded, String> {
    load_over(input, true, overlay, false)
}

/// [`load`] with `overlay` giving the text of files that have another
/// text than the disk's (names as [`load`] gives them).
pub fn load_over_disk(input: &Input, overlay: &dyn Fn(&Path) -> Option<String>) -> Result<Loaded, String> {
    load_over(input, false, overlay, true)
}

fn load_with(input: &Input, common_headers_as_modules: bool) -> Result<Loaded, String> {
    load_over(input, common_headers_as_modules, &|_| None, true)
}

fn load_over(
    input: &Input,
    common_headers_as_modules: bool,
    overlay: &dyn Fn(&Path) -> Option<String>,
    relative_names: bool,
) -> Result<Loaded, String> {
    let mut roots = Vec::new();
    for path in &input.roots {
        let name = path.display().to_string();
        let cpp = input.cpp || include::preprocessed_by_name(&name);
        let text = match overlay(&clean(path)) {
            Some(text) => text,
            None => read_text(path)?,
        };
        roots.push(Root { name, text, cpp });
    }
    let loader = DiskLoader { dirs: &input.include_dirs, overlay, relative_names };
    let options = ExpandOptions { form: input.form, defines: input.defines.clone(), common_headers_as_modules };
    Ok(Loaded { expanded: include::expand(&roots, &options, &loader) })
}

/// The files `[program] sources` names, when `dir` is the root of an
/// `hpf-ls.toml` that has the section.
pub fn program_sources(dir: &Path) -> Result<Option<Vec<PathBuf>>, String> {
    let config = Config::discover(dir)?;
    let (Some(root), Some(program)) = (&config.root, &config.file.program) else { return Ok(None) };
    let same_dir = std::fs::canonicalize(dir).is_ok_and(|it| it == *root);
    if !same_dir {
        return Ok(None);
    }
    let mut found = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(relative) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(dir.join(&relative)) else { continue };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name == "target" {
                continue;
            }
            let relative = relative.join(&name);
            if entry.file_type().is_ok_and(|it| it.is_dir()) {
                stack.push(relative);
            } else {
                let shown = relative.to_string_lossy().replace('\\', "/");
                if program.sources.iter().any(|glob| glob_matches(glob, &shown)) {
                    found.push(clean(&dir.join(relative)));
                }
            }
        }
    }
    if found.is_empty() {
        return Err(format!(
            "{}: `[program] sources` matches no file",
            root.join(crate::config::CONFIG_FILE_NAME).display()
        ));
    }
    found.sort();
    Ok(Some(found))
}

/// The program a file is part of, as `hpf-ls run` builds it, for the
/// editor's `hpf.run`: the directory it runs in and the paths to give
/// [`crate::cli::collect_inputs`]. The nearest hpf-ls.toml's `[program]
/// sources` when they name `file` (run in its root); else, when `file`
/// holds no main program, the files of its directory with its extension if
/// exactly one of them holds one (as `hpf-ls run *.f` there). `None`: the
/// file is a program of its own. `text`: the file's (the editor's) text.
pub fn program_of(file: &Path, text: &str) -> Result<Option<(PathBuf, Vec<PathBuf>)>, String> {
    let canonical = |path: &Path| std::fs::canonicalize(path).unwrap_or_else(|_| clean(path));
    let config = Config::discover(file)?;
    if let (Some(root), Some(_)) = (&config.root, &config.file.program) {
        let sources = program_sources(root)?.unwrap_or_default();
        let wanted = canonical(file);
        if sources.iter().any(|it| canonical(it) == wanted) {
            return Ok(Some((root.clone(), vec![root.clone()])));
        }
    }
    let (Some(dir), Some(extension)) = (file.parent(), file.extension()) else { return Ok(None) };
    if text.lines().any(is_program_statement) || !file.is_file() {
        return Ok(None);
    }
    let mut siblings: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|error| format!("{}: {error}", dir.display()))?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension() == Some(extension) && path.is_file())
        .filter(|path| !path.file_name().is_some_and(|it| it.to_string_lossy().starts_with('.')))
        .collect();
    siblings.sort();
    match main_programs(&siblings) {
        1 => Ok(Some((dir.to_path_buf(), siblings))),
        found => Err(format!(
            "{} holds no main program, and {found} files of its directory with its extension hold one: \
             name the program's files in hpf-ls.toml (`[program] sources = [...]`)",
            file.display()
        )),
    }
}

/// Whether a line is a PROGRAM statement (a cheap scan; the parse decides).
fn is_program_statement(line: &str) -> bool {
    if line.starts_with(['c', 'C', '*', '!']) {
        return false;
    }
    let trimmed = line.trim_start();
    trimmed.get(..7).is_some_and(|it| it.eq_ignore_ascii_case("program")) && trimmed[7..].starts_with([' ', '\t'])
}

/// How many of `paths` hold a PROGRAM statement.
pub fn main_programs(paths: &[PathBuf]) -> usize {
    paths.iter().filter(|path| read_text(path).is_ok_and(|text| text.lines().any(is_program_statement))).count()
}

/// The file that names the program: the one with its PROGRAM statement, else the first.
pub fn main_file(roots: &[PathBuf]) -> PathBuf {
    roots
        .iter()
        .find(|path| read_text(path).is_ok_and(|text| text.lines().any(is_program_statement)))
        .unwrap_or(&roots[0])
        .clone()
}

/// The modules a text USEs (lower case; a cheap scan like `defined_modules`).
fn used_modules(text: &str) -> Vec<String> {
    let mut used = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        let Some(head) = line.get(..3) else { continue };
        if !head.eq_ignore_ascii_case("use") || !line[3..].starts_with([' ', '\t', ',', ':']) {
            continue;
        }
        let rest = line[3..].trim_start_matches([' ', '\t', ',']);
        let rest = rest.split("::").last().unwrap_or(rest).trim_start();
        let name: String = rest.chars().take_while(|it| it.is_ascii_alphanumeric() || *it == '_').collect();
        if !name.is_empty() {
            used.push(name.to_ascii_lowercase());
        }
    }
    used
}

/// The files in the order they are joined: a file defining a module before
/// the files that USE it (a module must come before its users in one text),
/// otherwise as given. A cycle keeps the given order.
pub fn join_order(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    if paths.len() < 2 {
        return paths;
    }
    let scanned: Vec<(Vec<String>, Vec<String>)> = paths
        .iter()
        .map(|path| {
            let text = read_text(path).unwrap_or_default();
            (crate::modules::defined_modules(&text), used_modules(&text))
        })
        .collect();
    let mut left: Vec<usize> = (0..paths.len()).collect();
    let mut order = Vec::new();
    while !left.is_empty() {
        // The first file that USEs no module another file left defines.
        let ready = left.iter().position(|&idx| {
            scanned[idx].1.iter().all(|used| !left.iter().any(|&other| other != idx && scanned[other].0.contains(used)))
        });
        order.push(left.remove(ready.unwrap_or(0)));
    }
    order.into_iter().map(|idx| paths[idx].clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_cleaned_lexically() {
        assert_eq!(clean(Path::new("./src/../include/./a.h")), PathBuf::from("include/a.h"));
        assert_eq!(clean(Path::new("../x/a.h")), PathBuf::from("../x/a.h"));
    }

    #[test]
    fn uses_are_found() {
        assert_eq!(
            used_modules("  use grid\n  USE, intrinsic :: iso_c_binding\nuser = 1\n"),
            ["grid", "iso_c_binding"]
        );
    }
}
