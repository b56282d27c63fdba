//! Project configuration: `hpf-ls.toml`, found by walking up from a file.
//!
//! ```toml
//! processors = 4            # the value of NUMBER_OF_PROCESSORS()
//! [forms]                   # per-file source form overrides (globs)
//! "legacy/*.f90" = "fixed"
//! "src/wide.f" = "fixed132"
//! [severity]                # per-code severity: error, warning, info, hint or off
//! HPF101 = "error"
//! HPF104 = "off"
//! include = ["include"]     # INCLUDE search directories, after the includer's own
//! defines = ["NX=64"]       # C preprocessor macros (NAME or NAME=VALUE)
//! cpp = false               # preprocess every file, not only .F .F90 .FPP
//! [program]                 # the files of one program: `hpf-ls run` in this directory
//! sources = ["*.f"]
//! ```
//!
//! Directories and globs are relative to the directory of the file.
//!
//! The CLI's `--form` and `--processors` flags win over the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use syntax::{Code, Diagnostic, Severity, SourceForm};

pub const CONFIG_FILE_NAME: &str = "hpf-ls.toml";

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    pub processors: Option<i64>,
    #[serde(default)]
    pub forms: BTreeMap<String, String>,
    #[serde(default)]
    pub severity: BTreeMap<String, String>,
    #[serde(default)]
    pub include: Vec<String>,
    #[serde(default)]
    pub defines: Vec<String>,
    #[serde(default)]
    pub cpp: bool,
    pub program: Option<ProgramSection>,
}

/// `[program]`: the files one program is built from.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProgramSection {
    /// Globs relative to the root (`*` within a directory, `**` across).
    pub sources: Vec<String>,
}

/// A severity chosen for a code; `None` turns the code off.
pub type SeverityOverride = (Code, Option<Severity>);

/// Parses `HPF101 = "error"` style settings (also the CLI's `--severity HPF101=error`).
pub fn parse_severity(code: &str, severity: &str) -> Result<SeverityOverride, String> {
    let code = Code::from_name(code).ok_or_else(|| format!("unknown diagnostic code `{code}`"))?;
    if severity.eq_ignore_ascii_case("off") || severity.eq_ignore_ascii_case("none") {
        return Ok((code, None));
    }
    let severity = Severity::from_name(severity)
        .ok_or_else(|| format!("unknown severity `{severity}`: use error, warning, info, hint or off"))?;
    Ok((code, Some(severity)))
}

/// Applies severity overrides in place, dropping the codes turned off.
pub fn apply_severities(diagnostics: &mut Vec<Diagnostic>, overrides: &[SeverityOverride]) {
    if overrides.is_empty() {
        return;
    }
    diagnostics.retain_mut(|diagnostic| match overrides.iter().rev().find(|(code, _)| *code == diagnostic.code) {
        Some((_, None)) => false,
        Some((_, Some(severity))) => {
            diagnostic.severity = *severity;
            true
        }
        None => true,
    });
}

/// A loaded configuration and the directory its globs are relative to.
#[derive(Clone, Debug, Default)]
pub struct Config {
    pub root: Option<PathBuf>,
    pub file: ConfigFile,
}

impl Config {
    /// Finds and reads the nearest `hpf-ls.toml` above `path`.
    pub fn discover(path: &Path) -> Result<Config, String> {
        let start = if path.is_dir() { path } else { path.parent().unwrap_or(Path::new(".")) };
        // `legacy.f90` has the empty path as its parent: that is the current directory.
        let start = if start.as_os_str().is_empty() { Path::new(".") } else { start };
        let start = std::fs::canonicalize(start).unwrap_or_else(|_| start.to_path_buf());
        for dir in start.ancestors() {
            let candidate = dir.join(CONFIG_FILE_NAME);
            if candidate.is_file() {
                let text =
                    std::fs::read_to_string(&candidate).map_err(|error| format!("{}: {error}", candidate.display()))?;
                let file: ConfigFile =
                    toml::from_str(&text).map_err(|error| format!("{}: {error}", candidate.display()))?;
                for (glob, form) in &file.forms {
                    if SourceForm::from_name(form).is_none() {
                        return Err(format!(
                            "{}: form `{form}` for `{glob}` is not one of free, fixed, fixed72, fixed132",
                            candidate.display()
                        ));
                    }
                }
                for (code, severity) in &file.severity {
                    parse_severity(code, severity).map_err(|error| format!("{}: {error}", candidate.display()))?;
                }
                return Ok(Config { root: Some(dir.to_path_buf()), file });
            }
        }
        Ok(Config::default())
    }

    /// The `include` directories, relative to the root.
    pub fn include_dirs(&self) -> Vec<PathBuf> {
        let root = self.root.clone().unwrap_or_default();
        self.file.include.iter().map(|it| root.join(it)).collect()
    }

    /// The severity overrides of the file (validated when it was read).
    pub fn severities(&self) -> Vec<SeverityOverride> {
        self.file.severity.iter().filter_map(|(code, severity)| parse_severity(code, severity).ok()).collect()
    }

    /// The source form of `path`: an override of the configuration, else the extension's.
    pub fn form_of(&self, path: &Path) -> SourceForm {
        if let Some(root) = &self.root {
            let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
            if let Ok(relative) = absolute.strip_prefix(root) {
                let relative = relative.to_string_lossy().replace('\\', "/");
                for (glob, form) in self.file.forms.iter().rev() {
                    if glob_matches(glob, &relative) {
                        if let Some(form) = SourceForm::from_name(form) {
                            return form;
                        }
                    }
                }
            }
        }
        SourceForm::from_path(path)
    }
}

/// `*` matches within a path segment, `**` across segments, `?` one character.
pub fn glob_matches(glob: &str, path: &str) -> bool {
    fn matches(glob: &[u8], path: &[u8]) -> bool {
        match glob.split_first() {
            None => path.is_empty(),
            Some((b'*', rest)) if rest.first() == Some(&b'*') => {
                let rest = rest[1..].strip_prefix(b"/").unwrap_or(&rest[1..]);
                (0..=path.len()).any(|skip| matches(rest, &path[skip..]))
            }
            Some((b'*', rest)) => {
                let segment_end = path.iter().position(|&b| b == b'/').unwrap_or(path.len());
                (0..=segment_end).any(|skip| matches(rest, &path[skip..]))
            }
            Some((b'?', rest)) => path.first().is_some_and(|&b| b != b'/') && matches(rest, &path[1..]),
            Some((&c, rest)) => path.first() == Some(&c) && matches(rest, &path[1..]),
        }
    }
    matches(glob.as_bytes(), path.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::glob_matches;

    #[test]
    fn globs() {
        assert!(glob_matches("*.f90", "a.f90"));
        assert!(!glob_matches("*.f90", "dir/a.f90"));
        assert!(glob_matches("**/*.f90", "dir/sub/a.f90"));
        assert!(glob_matches("**/*.f90", "a.f90"));
        assert!(glob_matches("legacy/?.f", "legacy/x.f"));
        assert!(!glob_matches("legacy/?.f", "legacy/xy.f"));
    }
}
