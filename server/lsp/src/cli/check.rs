//! `hpf-ls check [--format text|json] [--form F] [--processors N] PATH...`
//!
//! Text output is `path:line:col: severity[CODE]: message`, the source line
//! and a caret, like compilers print; `--format json` prints the same as a
//! JSON array (documented in docs/diagnostics.md). Exit status: 0 without
//! errors, 1 when an error was found, 2 for usage or I/O errors.

use std::fmt::Write;
use std::path::Path;
use std::sync::Arc;

use analysis::model::ExternalFile;
use analysis::ModelConfig;
use serde::Serialize;
use syntax::{Diagnostic, LineIndex, Severity};

use super::args::{CheckArgs, OutputFormat};
use super::{collect_inputs, read_text, EXIT_USAGE};

/// Runs `check` and returns the process exit status.
pub fn run(args: &CheckArgs, out: &mut String, err: &mut String) -> i32 {
    let format = args.format;
    let options = args.source.input_options(args.paths.clone());
    let inputs = match collect_inputs(&options) {
        Ok(inputs) => inputs,
        Err(message) => {
            let _ = writeln!(err, "hpf-ls check: {message}");
            return EXIT_USAGE;
        }
    };
    let mut status = 0;
    let mut json = Vec::new();
    let (mut n_errors, mut n_warnings) = (0, 0);
    for input in &inputs {
        let text = match read_text(&input.path) {
            Ok(text) => text,
            Err(message) => {
                let _ = writeln!(err, "hpf-ls check: {message}");
                status = EXIT_USAGE;
                continue;
            }
        };
        let config = ModelConfig { number_of_processors: input.processors };
        let mut analysis = crate::modules::analyze_path(&input.path, &text, input.form, config);
        crate::config::apply_severities(&mut analysis.diagnostics, &input.severities);
        for diagnostic in &analysis.diagnostics {
            match diagnostic.severity {
                Severity::Error => n_errors += 1,
                Severity::Warning => n_warnings += 1,
                _ => {}
            }
        }
        match format {
            OutputFormat::Text => {
                render_text(&input.path, &text, &analysis.diagnostics, &analysis.model.externals, out)
            }
            OutputFormat::Json => {
                json.extend(to_json(&input.path, &text, &analysis.diagnostics, &analysis.model.externals))
            }
        }
    }
    match format {
        OutputFormat::Text => {
            if n_errors + n_warnings > 0 || !inputs.is_empty() {
                let _ = writeln!(err, "checked {} file(s): {n_errors} error(s), {n_warnings} warning(s)", inputs.len());
            }
        }
        OutputFormat::Json => {
            out.push_str(&serde_json::to_string_pretty(&json).expect("diagnostics serialise"));
            out.push('\n');
        }
    }
    if status == 0 && n_errors > 0 {
        status = 1;
    }
    status
}

/// `path:line:col: severity[CODE]: message`, the line, a caret under the range.
pub fn render_text(
    path: &Path,
    text: &str,
    diagnostics: &[Diagnostic],
    externals: &[Arc<ExternalFile>],
    out: &mut String,
) {
    let index = LineIndex::new(text);
    for diagnostic in diagnostics {
        let (line, column) = index.line_col(text, diagnostic.range.start);
        let _ = writeln!(
            out,
            "{}:{}:{}: {}[{}]: {}",
            path.display(),
            line + 1,
            column + 1,
            diagnostic.severity.as_str(),
            diagnostic.code.as_str(),
            diagnostic.message
        );
        render_snippet(&index, text, diagnostic.range, out);
        for related in &diagnostic.related {
            let Some((file, text)) = related_file(path, text, externals, related) else { continue };
            // Most related places are in the analysed file: its index, not a
            // new one per place (that made `check` quadratic in the file).
            let (line, column) = if related.file.is_none() {
                index.line_col(text, related.range.start)
            } else {
                LineIndex::new(text).line_col(text, related.range.start)
            };
            let _ = writeln!(out, "{file}:{}:{}: note: {}", line + 1, column + 1, related.message);
        }
    }
}

/// The file a related place is in and its text: the analysed file, or a
/// file whose modules it USEs (`None` if that file is not among `externals`).
fn related_file<'a>(
    path: &Path,
    text: &'a str,
    externals: &'a [Arc<ExternalFile>],
    related: &syntax::Related,
) -> Option<(String, &'a str)> {
    match &related.file {
        None => Some((path.display().to_string(), text)),
        Some(name) => externals.iter().find(|it| it.name == *name).map(|it| (name.to_string(), &*it.text)),
    }
}

fn render_snippet(index: &LineIndex, text: &str, range: syntax::TextRange, out: &mut String) {
    let (line, column) = index.line_col(text, range.start);
    let line_text = index.line_text(text, line);
    // Tabs would misalign the caret: show them as one blank each, as the column counts them.
    let shown: String = line_text.chars().map(|it| if it == '\t' { ' ' } else { it }).collect();
    let (end_line, end_column) = index.line_col(text, range.end);
    let width = if end_line == line { end_column.saturating_sub(column).max(1) } else { 1 };
    let number = (line + 1).to_string();
    let gutter = " ".repeat(number.len());
    let _ = writeln!(out, "{number} | {shown}");
    let _ = writeln!(out, "{gutter} | {}{}", " ".repeat(column), "^".repeat(width));
}

#[derive(Serialize)]
pub struct JsonDiagnostic {
    pub path: String,
    pub code: &'static str,
    pub severity: &'static str,
    pub message: String,
    pub range: JsonRange,
    pub related: Vec<JsonRelated>,
}

#[derive(Serialize)]
pub struct JsonRelated {
    pub message: String,
    /// The other file the place is in (a module USEd from it); absent: the diagnostic's file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    pub range: JsonRange,
}

/// Lines and columns are 1-based, columns count characters; `end` is exclusive.
/// Byte offsets are 0-based.
#[derive(Serialize)]
pub struct JsonRange {
    pub start: JsonPosition,
    pub end: JsonPosition,
    pub start_byte: usize,
    pub end_byte: usize,
}

#[derive(Serialize)]
pub struct JsonPosition {
    pub line: usize,
    pub column: usize,
}

fn json_range(index: &LineIndex, text: &str, range: syntax::TextRange) -> JsonRange {
    let position = |offset| {
        let (line, column) = index.line_col(text, offset);
        JsonPosition { line: line + 1, column: column + 1 }
    };
    JsonRange { start: position(range.start), end: position(range.end), start_byte: range.start, end_byte: range.end }
}

pub fn to_json(
    path: &Path,
    text: &str,
    diagnostics: &[Diagnostic],
    externals: &[Arc<ExternalFile>],
) -> Vec<JsonDiagnostic> {
    let index = LineIndex::new(text);
    diagnostics
        .iter()
        .map(|diagnostic| JsonDiagnostic {
            path: path.display().to_string(),
            code: diagnostic.code.as_str(),
            severity: diagnostic.severity.as_str(),
            message: diagnostic.message.clone(),
            range: json_range(&index, text, diagnostic.range),
            related: diagnostic
                .related
                .iter()
                .filter_map(|it| {
                    let (file, file_text) = related_file(path, text, externals, it)?;
                    let range = if it.file.is_none() {
                        json_range(&index, text, it.range)
                    } else {
                        json_range(&LineIndex::new(file_text), file_text, it.range)
                    };
                    Some(JsonRelated { message: it.message.clone(), path: it.file.as_ref().map(|_| file), range })
                })
                .collect(),
        })
        .collect()
}
