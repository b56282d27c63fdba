//! The command line: one clap definition (`args`), one module per subcommand.
//!
//! Subcommands call `analysis` directly, never through the protocol.

pub mod analyze;
pub mod args;
pub mod build;
pub mod check;
pub mod demo;
pub mod explain;
pub mod optimize;
pub mod run_check;

use std::path::{Path, PathBuf};

use syntax::{SourceForm, FORTRAN_EXTENSIONS};

use crate::config::Config;

/// Exit status for usage and I/O errors.
pub const EXIT_USAGE: i32 = 2;

/// Options shared by the subcommands that read Fortran files.
#[derive(Clone, Debug, Default)]
pub struct InputOptions {
    pub form: Option<SourceForm>,
    pub processors: Option<i64>,
    pub severities: Vec<crate::config::SeverityOverride>,
    pub paths: Vec<PathBuf>,
    /// `-I DIR`: where INCLUDE and `#include` look after the including file's directory.
    pub include_dirs: Vec<PathBuf>,
    /// `-D NAME[=VALUE]`: macros of the C preprocessor.
    pub defines: Vec<String>,
    /// `--cpp`: run the C preprocessor on every file, whatever its extension.
    pub cpp: bool,
}

/// A file to analyse, with the settings that apply to it.
pub struct Input {
    pub path: PathBuf,
    pub form: SourceForm,
    pub processors: Option<i64>,
    /// From hpf-ls.toml, then the command line (later entries win).
    pub severities: Vec<crate::config::SeverityOverride>,
    /// Every file of the program, `path` among them, in the order they are
    /// joined (files defining modules first, see [`crate::sources`]).
    pub roots: Vec<PathBuf>,
    /// The command line's `-I` directories, then those of hpf-ls.toml.
    pub include_dirs: Vec<PathBuf>,
    /// The command line's `-D` macros, then those of hpf-ls.toml.
    pub defines: Vec<String>,
    pub cpp: bool,
}

/// Parses `--form F`, `--processors N` and paths; other flags go to `extra`,
/// which returns whether it took the flag (and its value). Only `model`'s
/// entry in `demo.rs` still takes raw arguments; the other commands get
/// theirs from [`args`].
pub fn parse_input_options(
    args: &[String],
    mut extra: impl FnMut(&str, Option<&str>) -> Result<bool, String>,
) -> Result<InputOptions, String> {
    let mut options = InputOptions::default();
    let mut idx = 0;
    while idx < args.len() {
        let arg = &args[idx];
        let (flag, inline_value) = match arg.split_once('=') {
            Some((flag, value)) if arg.starts_with("--") => (flag, Some(value.to_string())),
            _ => (arg.as_str(), None),
        };
        let mut value = || -> Result<String, String> {
            if let Some(value) = &inline_value {
                return Ok(value.clone());
            }
            idx += 1;
            args.get(idx).cloned().ok_or_else(|| format!("`{flag}` needs a value"))
        };
        match flag {
            "--form" => {
                let name = value()?;
                options.form =
                    Some(SourceForm::from_name(&name).ok_or_else(|| {
                        format!("unknown source form `{name}`: use free, fixed, fixed72 or fixed132")
                    })?);
            }
            "--processors" | "-p" => {
                let text = value()?;
                let count: i64 =
                    text.parse().map_err(|_| format!("`--processors` needs a positive integer, not `{text}`"))?;
                if count <= 0 {
                    return Err(format!("`--processors` needs a positive integer, not `{text}`"));
                }
                options.processors = Some(count);
            }
            "--severity" => {
                let setting = value()?;
                let (code, severity) = setting
                    .split_once('=')
                    .ok_or_else(|| format!("`--severity` takes CODE=SEVERITY, not `{setting}`"))?;
                options.severities.push(crate::config::parse_severity(code, severity)?);
            }
            "-I" => options.include_dirs.push(PathBuf::from(value()?)),
            _ if flag.starts_with("-I") => options.include_dirs.push(PathBuf::from(&flag[2..])),
            "-D" => options.defines.push(value()?),
            _ if flag.starts_with("-D") => options.defines.push(arg[2..].to_string()),
            "--cpp" => options.cpp = true,
            "--" => {
                options.paths.extend(args[idx + 1..].iter().map(PathBuf::from));
                break;
            }
            _ if flag.starts_with('-') && flag.len() > 1 => {
                let next = args.get(idx + 1).map(String::as_str);
                let takes_value = extra(flag, inline_value.as_deref().or(next))?;
                if !takes_value {
                    return Err(format!("unknown option `{flag}`"));
                }
                if inline_value.is_none() && next.is_some() && flag_needs_value(flag) {
                    idx += 1;
                }
            }
            _ => options.paths.push(PathBuf::from(arg)),
        }
        idx += 1;
    }
    Ok(options)
}

fn flag_needs_value(flag: &str) -> bool {
    matches!(flag, "--format" | "--line" | "--svg")
}

/// The raw arguments `demo::run_model` parses, from options clap has
/// already checked.
pub fn model_argv(options: &InputOptions) -> Vec<String> {
    let mut argv = Vec::new();
    if let Some(form) = options.form {
        let name = match form {
            SourceForm::Free => "free",
            SourceForm::Fixed { line_length: 132 } => "fixed132",
            SourceForm::Fixed { .. } => "fixed",
        };
        argv.extend(["--form".to_string(), name.to_string()]);
    }
    if let Some(processors) = options.processors {
        argv.extend(["--processors".to_string(), processors.to_string()]);
    }
    for (code, severity) in &options.severities {
        let level = severity.map_or("off", |it| it.as_str());
        argv.extend(["--severity".to_string(), format!("{}={level}", code.as_str())]);
    }
    for dir in &options.include_dirs {
        argv.extend(["-I".to_string(), dir.to_string_lossy().into_owned()]);
    }
    for define in &options.defines {
        argv.extend(["-D".to_string(), define.clone()]);
    }
    if options.cpp {
        argv.push("--cpp".to_string());
    }
    argv.push("--".to_string());
    argv.extend(options.paths.iter().map(|it| it.to_string_lossy().into_owned()));
    argv
}

/// For `build` and `run`: on SIGINT, SIGTERM or SIGHUP, kill the compiler or
/// the launcher with what it started and remove the build directory before
/// exiting as the signal would (status 128 + its number).
pub fn clean_up_on_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else { return };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            TERMINATING.store(true, std::sync::atomic::Ordering::SeqCst);
            backend::driver::clean_up_for_exit();
            std::process::exit(128 + signal);
        }
    });
}

static TERMINATING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether a signal is being handled: the main thread, whose command the
/// handler just killed, must then leave the exit (and its status) to the handler.
pub fn terminating() -> bool {
    TERMINATING.load(std::sync::atomic::Ordering::SeqCst)
}

/// Expands directories (recursively, by Fortran extension, sorted) and
/// attaches the configuration of each file. Files named one by one are one
/// program (joined, see [`crate::sources`]) unless two of them hold a main
/// program; a directory that is the root of an `hpf-ls.toml` with
/// `[program] sources` is that program; other files found in directories
/// are analysed one by one.
pub fn collect_inputs(options: &InputOptions) -> Result<Vec<Input>, String> {
    let mut files = Vec::new();
    let mut named = Vec::new();
    let mut programs = Vec::new();
    for path in &options.paths {
        if path.is_dir() {
            match crate::sources::program_sources(path)? {
                Some(sources) => programs.push(sources),
                None => walk(path, &mut files).map_err(|error| format!("{}: {error}", path.display()))?,
            }
        } else if path.exists() {
            named.push(path.clone());
        } else {
            return Err(format!("{}: no such file or directory", path.display()));
        }
    }
    if named.len() > 1 && crate::sources::main_programs(&named) <= 1 {
        programs.push(named);
    } else {
        files.extend(named);
    }
    let mut inputs = Vec::new();
    for roots in files.into_iter().map(|it| vec![it]).chain(programs) {
        let roots = crate::sources::join_order(roots);
        let path = crate::sources::main_file(&roots);
        let config = Config::discover(&path)?;
        let form = options.form.unwrap_or_else(|| config.form_of(&path));
        if options.form.is_none() {
            if let Some(other) = roots.iter().find(|it| config.form_of(it) != form) {
                return Err(format!(
                    "{} and {} are in different source forms: give `--form`, or a `[forms]` entry in hpf-ls.toml",
                    path.display(),
                    other.display()
                ));
            }
        }
        let mut severities = config.severities();
        severities.extend(options.severities.iter().copied());
        let mut include_dirs = options.include_dirs.clone();
        include_dirs.extend(config.include_dirs());
        let mut defines = options.defines.clone();
        defines.extend(config.file.defines.iter().cloned());
        inputs.push(Input {
            processors: options.processors.or(config.file.processors),
            path,
            form,
            severities,
            roots,
            include_dirs,
            defines,
            cpp: options.cpp || config.file.cpp,
        });
    }
    Ok(inputs)
}

/// The Fortran files under `dir`, sorted; hidden entries and `target`
/// directories are skipped, links to directories not followed (no cycles).
fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), walkdir::Error> {
    let mut found = Vec::new();
    let entries = walkdir::WalkDir::new(dir).into_iter().filter_entry(|entry| {
        let name = entry.file_name().to_string_lossy();
        entry.depth() == 0 || !(name.starts_with('.') || (name == "target" && entry.file_type().is_dir()))
    });
    for entry in entries {
        let entry = entry?;
        let is_fortran = entry
            .path()
            .extension()
            .and_then(|it| it.to_str())
            .is_some_and(|ext| FORTRAN_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()));
        // A link to a file counts; links to directories are not followed.
        if is_fortran && entry.path().is_file() {
            found.push(entry.into_path());
        }
    }
    found.sort();
    files.extend(found);
    Ok(())
}

/// Reads a file as text; invalid UTF-8 is replaced rather than refused, so
/// old files with Latin-1 comments still get checked.
pub fn read_text(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|error| format!("{}: {error}", path.display()))?;
    Ok(match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
    })
}
