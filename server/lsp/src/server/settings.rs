//! The server's settings: `initializationOptions`, then
//! `workspace/didChangeConfiguration` and `workspace/configuration`
//! (section `hpf`). Converted to the plain configs of `analysis` in one place.

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
