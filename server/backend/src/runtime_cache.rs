//! A cache of compiled runtimes: the runtime module a generated program uses
//! (`hpf_runtime.f90`, about a thousand lines, which depends only on the
//! types and operations the program needs) takes two thirds of a build, and
//! most programs, and every rebuild of one program, need a runtime compiled
//! before. Each entry is a directory holding the object and the module file,
//! named by a hash of everything that shapes them: the runtime's text, the
//! compiler (its canonical path, its file's size and time, what `--version`
//! prints) and the flags. An entry is written in a private directory and
//! renamed into place, so that builds running at the same time never see a
//! half-written one; the oldest entries beyond [`MAX_ENTRIES`] are removed.
//!
//! Where: `$HPF_LS_CACHE_DIR`, else `$XDG_CACHE_HOME/hpf-ls`, else
//! `$HOME/.cache/hpf-ls`; `HPF_LS_CACHE_DIR=off` (or empty) turns it off.
//! Any failure to read or write the cache only costs the compile it would
//! have saved.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// How many compiled runtimes are kept (each about 200 KB).
pub const MAX_ENTRIES: usize = 64;

pub const OBJECT_FILE: &str = "hpf_runtime.o";
pub const MODULE_FILE: &str = "hpf_runtime.mod";
const ENTRY_PREFIX: &str = "runtime-";

/// The cache directory the environment names, `None` when it is off.
pub fn cache_root() -> Option<PathBuf> {
    cache_root_from(|name| std::env::var_os(name))
}

fn cache_root_from(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    if let Some(dir) = var("HPF_LS_CACHE_DIR") {
        return (!dir.is_empty() && dir != "off").then(|| PathBuf::from(dir));
    }
    let nonempty = |name: &str| var(name).filter(|it| !it.is_empty()).map(PathBuf::from);
    nonempty("XDG_CACHE_HOME")
        .map(|it| it.join("hpf-ls"))
        .or_else(|| nonempty("HOME").map(|it| it.join(".cache").join("hpf-ls")))
}

/// The entry for `runtime` compiled by `compiler` with `flags`: its
/// directory, which holds [`OBJECT_FILE`] and [`MODULE_FILE`] once compiled.
pub fn entry_dir(root: &Path, compiler: &Path, flags: &[std::ffi::OsString], runtime: &str) -> PathBuf {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    runtime.hash(&mut hasher);
    flags.hash(&mut hasher);
    compiler_identity(compiler).hash(&mut hasher);
    root.join(format!("{ENTRY_PREFIX}{:016x}", hasher.finish()))
}

/// What tells one compiler from another, or from itself upgraded: the
/// canonical path, the file's size and modification time (a wrapper such as
/// `mpif90` resolves to the MPI installation's), and what `--version` prints
/// (the Fortran compiler behind a wrapper).
fn compiler_identity(compiler: &Path) -> (PathBuf, Option<(u64, std::time::SystemTime)>, Vec<u8>) {
    let canonical = std::fs::canonicalize(compiler).unwrap_or_else(|_| compiler.to_path_buf());
    let file = std::fs::metadata(&canonical).ok().and_then(|it| Some((it.len(), it.modified().ok()?)));
    let version = Command::new(compiler)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map(|it| it.stdout)
        .unwrap_or_default();
    (canonical, file, version)
}

/// Whether `entry` holds a complete compiled runtime; a hit marks it used
/// now, so that eviction removes the entries used longest ago.
pub fn lookup(entry: &Path) -> bool {
    let complete = entry.join(OBJECT_FILE).is_file() && entry.join(MODULE_FILE).is_file();
    if complete {
        if let Ok(dir) = std::fs::File::open(entry) {
            let _ = dir.set_modified(std::time::SystemTime::now());
        }
    }
    complete
}

/// Stores the object and module file that a build compiled in `built` as
/// `entry` (over an existing one only with `replace`), then removes the entries beyond [`MAX_ENTRIES`] used longest ago.
pub fn store(entry: &Path, built: &Path, replace: bool) -> std::io::Result<()> {
    let root = entry.parent().ok_or_else(|| std::io::Error::other("a cache entry without a directory"))?;
    std::fs::create_dir_all(root)?;
    let staging = tempfile::Builder::new().prefix(".incoming-").tempdir_in(root)?;
    for name in [OBJECT_FILE, MODULE_FILE] {
        std::fs::copy(built.join(name), staging.path().join(name))?;
    }
    let staged = staging.keep();
    if std::fs::rename(&staged, entry).is_err() {
        // The entry exists: another build stored it first (theirs stays),
        // or a build found it unusable and compiled it again (`replace`).
        if replace {
            let _ = std::fs::remove_dir_all(entry);
            let _ = std::fs::rename(&staged, entry);
        }
        let _ = std::fs::remove_dir_all(&staged);
    }
    evict(root, MAX_ENTRIES);
    Ok(())
}

/// Removes the entries of `root` beyond `keep`, those used longest ago first.
fn evict(root: &Path, keep: usize) {
    let Ok(listing) = std::fs::read_dir(root) else { return };
    let mut entries: Vec<(std::time::SystemTime, PathBuf)> = listing
        .filter_map(Result::ok)
        .filter(|it| it.file_name().to_string_lossy().starts_with(ENTRY_PREFIX))
        .filter_map(|it| Some((it.metadata().ok()?.modified().ok()?, it.path())))
        .collect();
    if entries.len() <= keep {
        return;
    }
    entries.sort();
    let excess = entries.len() - keep;
    for (_, path) in entries.into_iter().take(excess) {
        let _ = std::fs::remove_dir_all(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_chooses_the_cache_directory_or_turns_it_off() {
        let root = |vars: &[(&str, &str)]| {
            let vars: Vec<(String, String)> = vars.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
            cache_root_from(|name| vars.iter().find(|it| it.0 == name).map(|it| it.1.clone().into()))
        };
        assert_eq!(root(&[("HOME", "/home/u")]), Some(PathBuf::from("/home/u/.cache/hpf-ls")));
        assert_eq!(root(&[("HOME", "/home/u"), ("XDG_CACHE_HOME", "/c")]), Some(PathBuf::from("/c/hpf-ls")));
        assert_eq!(root(&[("HOME", "/home/u"), ("HPF_LS_CACHE_DIR", "/x")]), Some(PathBuf::from("/x")));
        assert_eq!(root(&[("HOME", "/home/u"), ("HPF_LS_CACHE_DIR", "off")]), None);
        assert_eq!(root(&[("HOME", "/home/u"), ("HPF_LS_CACHE_DIR", "")]), None);
        assert_eq!(root(&[]), None);
    }

    #[test]
    fn entries_differ_by_runtime_flags_and_compiler() {
        let root = Path::new("/cache");
        let compiler = Path::new("/bin/true");
        let flags = |it: &[&str]| it.iter().map(Into::into).collect::<Vec<std::ffi::OsString>>();
        let one = entry_dir(root, compiler, &flags(&["-O2"]), "module hpf_runtime\nend module\n");
        assert_eq!(one, entry_dir(root, compiler, &flags(&["-O2"]), "module hpf_runtime\nend module\n"));
        assert_ne!(one, entry_dir(root, compiler, &flags(&["-O0"]), "module hpf_runtime\nend module\n"));
        assert_ne!(one, entry_dir(root, compiler, &flags(&["-O2"]), "module hpf_runtime\n\nend module\n"));
        assert_ne!(one, entry_dir(root, Path::new("/bin/false"), &flags(&["-O2"]), "module hpf_runtime\nend module\n"));
    }

    #[test]
    fn stored_entries_are_found_and_the_oldest_are_evicted() {
        let root = tempfile::tempdir().unwrap();
        let built = tempfile::tempdir().unwrap();
        std::fs::write(built.path().join(OBJECT_FILE), b"object").unwrap();
        std::fs::write(built.path().join(MODULE_FILE), b"module").unwrap();
        let entry = |n: u32| root.path().join(format!("{ENTRY_PREFIX}{n:016x}"));
        assert!(!lookup(&entry(0)));
        for n in 0..5 {
            store(&entry(n), built.path(), false).unwrap();
            // Distinct times, so that the order of use is the order of storing.
            let at = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000 + u64::from(n));
            std::fs::File::open(entry(n)).unwrap().set_modified(at).unwrap();
        }
        assert!(lookup(&entry(0)), "a hit marks entry 0 used now");
        assert_eq!(std::fs::read(entry(0).join(OBJECT_FILE)).unwrap(), b"object");
        // A second store of an existing entry keeps it and leaves nothing
        // behind; with `replace` the new files take its place.
        store(&entry(0), built.path(), false).unwrap();
        std::fs::write(built.path().join(OBJECT_FILE), b"object 2").unwrap();
        store(&entry(1), built.path(), false).unwrap();
        assert_eq!(std::fs::read(entry(1).join(OBJECT_FILE)).unwrap(), b"object");
        store(&entry(1), built.path(), true).unwrap();
        assert_eq!(std::fs::read(entry(1).join(OBJECT_FILE)).unwrap(), b"object 2");
        std::fs::File::open(entry(1)).unwrap().set_modified(std::time::SystemTime::UNIX_EPOCH).unwrap();
        evict(root.path(), 3);
        let left: Vec<bool> = (0..5).map(|n| entry(n).exists()).collect();
        assert_eq!(left, [true, false, false, true, true]);
        let stray = std::fs::read_dir(root.path()).unwrap().filter_map(Result::ok).count();
        assert_eq!(stray, 3, "no staging directory is left");
    }
}
