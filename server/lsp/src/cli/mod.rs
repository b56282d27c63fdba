//! The command line: `hpf-ls check`, `hpf-ls model`, `hpf-ls demo`.
//!
//! Subcommands call `analysis` directly, never through the protocol.

pub mod analyze;
pub mod build;
pub mod check;
pub mod demo;
pub mod explain;
pub mod optimize;

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
/// which returns whether it took the flag (and its value).
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

fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut stack = vec![dir.to_path_buf()];
    let mut found = Vec::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            let name = path.file_name().and_then(|it| it.to_str()).unwrap_or("");
            if name.starts_with('.') || name == "target" {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else if path
                .extension()
                .and_then(|it| it.to_str())
                .is_some_and(|ext| FORTRAN_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()))
            {
                found.push(path);
            }
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
