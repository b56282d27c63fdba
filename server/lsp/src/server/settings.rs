//! The server's settings: `initializationOptions`, then
//! `workspace/didChangeConfiguration` and `workspace/configuration`
//! (section `hpf`). Converted to the plain configs of `analysis` in one place.
//!
//! Whether the workspace is trusted is not a setting: it comes once, with
//! `initialize` (`initializationOptions.workspaceTrusted`), so that
//! configuration a workspace's files provide cannot turn it back on.

use std::collections::BTreeMap;

use serde::Deserialize;
use syntax::SourceForm;

use crate::config::{parse_severity, SeverityOverride};

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct Settings {
    /// `free`, `fixed`, `fixed72` or `fixed132` for every file; unset: by extension.
    pub form: Option<String>,
    /// NUMBER_OF_PROCESSORS() and processors without ONTO.
    pub processors: Option<i64>,
    pub inlay_hints: InlayHintSettings,
    /// Per-code severity: `{"HPF101": "error", "HPF104": "off"}`.
    pub severity: BTreeMap<String, String>,
    pub mpi: MpiSettings,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            form: None,
            processors: None,
            inlay_hints: InlayHintSettings { loops: true, references: true },
            severity: BTreeMap::new(),
            mpi: MpiSettings::default(),
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct InlayHintSettings {
    /// The summary at the end of each loop header.
    pub loops: bool,
    /// The pattern after each misaligned reference.
    pub references: bool,
}

impl Default for InlayHintSettings {
    fn default() -> InlayHintSettings {
        InlayHintSettings { loops: true, references: true }
    }
}

/// For `hpf.run` / `hpf.build` (the MPI backend).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct MpiSettings {
    pub compiler: Option<String>,
    pub launcher: Option<String>,
    pub processes: Option<u32>,
    pub hostfile: Option<String>,
    pub extra_args: Vec<String>,
    /// Wall-clock seconds of the compilation and of the run, each; 0 for none. Default 600.
    pub timeout_seconds: Option<f64>,
    /// Bytes of output kept from the compiler and from the run, each; past it the
    /// processes are killed. Default 1 MiB.
    pub max_output_bytes: Option<u64>,
    /// Floating-point reductions in the sequential order (bit-identical to the
    /// sequential program, serial); off: in parallel, combined in rank order.
    pub ordered_reductions: bool,
}

impl Settings {
    /// Reads settings from a JSON value: either the settings themselves or
    /// an object with an `hpf` member. Unknown or ill-typed values are
    /// reported, and the defaults kept.
    pub fn from_json(value: &serde_json::Value) -> Result<Settings, String> {
        let value = value.get("hpf").unwrap_or(value);
        if value.is_null() {
            return Ok(Settings::default());
        }
        let settings: Settings = serde_json::from_value(value.clone()).map_err(|error| error.to_string())?;
        if let Some(form) = &settings.form {
            if SourceForm::from_name(form).is_none() {
                return Err(format!("form `{form}` is not one of free, fixed, fixed72, fixed132"));
            }
        }
        for (code, severity) in &settings.severity {
            parse_severity(code, severity)?;
        }
        Ok(settings)
    }

    pub fn severities(&self) -> Vec<SeverityOverride> {
        self.severity.iter().filter_map(|(code, severity)| parse_severity(code, severity).ok()).collect()
    }

    pub fn form_override(&self) -> Option<SourceForm> {
        self.form.as_deref().and_then(SourceForm::from_name)
    }
}

/// Whether the server may run what the workspace names: compilers, launchers
/// and the programs it builds (`hpf.run`, `hpf.build`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkspaceTrust {
    Trusted,
    /// VS Code's Restricted Mode: language features only.
    Restricted,
}

impl WorkspaceTrust {
    /// `initializationOptions.workspaceTrusted`: `false` restricts; absent
    /// (clients that know nothing of trust) or anything else trusts, as before.
    pub fn from_initialization_options(options: Option<&serde_json::Value>) -> WorkspaceTrust {
        match options.and_then(|it| it.get("workspaceTrusted")) {
            Some(serde_json::Value::Bool(false)) => WorkspaceTrust::Restricted,
            _ => WorkspaceTrust::Trusted,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_an_explicit_false_restricts() {
        let trust = |options: serde_json::Value| WorkspaceTrust::from_initialization_options(Some(&options));
        assert_eq!(trust(json!({"workspaceTrusted": false, "hpf": {}})), WorkspaceTrust::Restricted);
        assert_eq!(trust(json!({"workspaceTrusted": true})), WorkspaceTrust::Trusted);
        assert_eq!(trust(json!({"processors": 4})), WorkspaceTrust::Trusted);
        // Read at the top level only, beside the settings section.
        assert_eq!(trust(json!({"hpf": {"workspaceTrusted": false}})), WorkspaceTrust::Trusted);
        assert_eq!(WorkspaceTrust::from_initialization_options(None), WorkspaceTrust::Trusted);
    }
}
