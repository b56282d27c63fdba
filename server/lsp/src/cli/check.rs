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
use syntax::include::SourceMap;
use syntax::{Diagnostic, LineIndex, Severity};

use super::args::{CheckArgs, OutputFormat};
use super::{collect_inputs, EXIT_USAGE};

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
        let loaded = match crate::sources::load(input) {
            Ok(loaded) => loaded,
            Err(message) => {
                let _ = writeln!(err, "hpf-ls check: {message}");
                status = EXIT_USAGE;
                continue;
            }
        };
        let config = ModelConfig { number_of_processors: input.processors };
        let analysis = crate::modules::analyze_input(input, &loaded, config);
        for diagnostic in &analysis.diagnostics {
            match diagnostic.severity {
                Severity::Error => n_errors += 1,
                Severity::Warning => n_warnings += 1,
                _ => {}
            }
        }
        let map = &loaded.expanded.map;
        match format {
            OutputFormat::Text => render_mapped(map, &analysis.diagnostics, &analysis.model.externals, out),
            OutputFormat::Json => json.extend(to_json_mapped(map, &analysis.diagnostics, &analysis.model.externals)),
        }
    }
    match format {
        OutputFormat::Text => {
            if n_errors + n_warnings > 0 || !inputs.is_empty() {
                let files: usize = inputs.iter().map(|it| it.roots.len()).sum();
                let _ = writeln!(err, "checked {files} file(s): {n_errors} error(s), {n_warnings} warning(s)");
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
    render_mapped(&SourceMap::identity(&path.display().to_string(), text), diagnostics, externals, out)
}

/// The files of a map with their line indexes, made on first use (most
/// places are in one file: one index, not one per place, which made
/// `check` quadratic in the file).
struct Files<'a> {
    map: &'a SourceMap,
    indexes: Vec<Option<LineIndex>>,
}

impl<'a> Files<'a> {
    fn new(map: &'a SourceMap) -> Files<'a> {
        Files { map, indexes: vec![None; map.files().len()] }
    }

    /// The name, text and line index of the file `range` of the expanded text is in, and the range there.
    fn place(&mut self, range: syntax::TextRange) -> (&'a str, &'a str, &LineIndex, syntax::TextRange) {
        let at = self.map.locate_range(range);
        let file = self.map.file(at.file);
        let index = self.indexes[at.file].get_or_insert_with(|| LineIndex::new(&file.text));
        (&file.name, &file.text, index, at.range)
    }
}

/// [`render_text`] for an expanded program: each place in the file it was written in.
pub fn render_mapped(map: &SourceMap, diagnostics: &[Diagnostic], externals: &[Arc<ExternalFile>], out: &mut String) {
    let mut files = Files::new(map);
    for diagnostic in diagnostics {
        let (name, text, index, range) = files.place(diagnostic.range);
        let (line, column) = index.line_col(text, range.start);
        let _ = writeln!(
            out,
            "{}:{}:{}: {}[{}]: {}",
            name,
            line + 1,
            column + 1,
            diagnostic.severity.as_str(),
            diagnostic.code.as_str(),
            diagnostic.message
        );
        render_snippet(index, text, range, out);
        for related in &diagnostic.related {
            let (file, line, column) = match &related.file {
                None => {
                    let (name, text, index, range) = files.place(related.range);
                    let (line, column) = index.line_col(text, range.start);
                    (name.to_string(), line, column)
                }
                Some(name) => {
                    let Some(external) = externals.iter().find(|it| it.name == *name) else { continue };
                    let (line, column) = LineIndex::new(&external.text).line_col(&external.text, related.range.start);
                    (name.to_string(), line, column)
                }
            };
            let _ = writeln!(out, "{file}:{}:{}: note: {}", line + 1, column + 1, related.message);
        }
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
    to_json_mapped(&SourceMap::identity(&path.display().to_string(), text), diagnostics, externals)
}

/// [`to_json`] for an expanded program: each place in the file it was written in.
pub fn to_json_mapped(
    map: &SourceMap,
    diagnostics: &[Diagnostic],
    externals: &[Arc<ExternalFile>],
) -> Vec<JsonDiagnostic> {
    let mut files = Files::new(map);
    diagnostics
        .iter()
        .map(|diagnostic| {
            let (name, text, index, range) = files.place(diagnostic.range);
            let (path, range) = (name.to_string(), json_range(index, text, range));
            let related = diagnostic
                .related
                .iter()
                .filter_map(|it| match &it.file {
                    None => {
                        let (name, text, index, range) = files.place(it.range);
                        let path = (name != path).then(|| name.to_string());
                        Some(JsonRelated { message: it.message.clone(), path, range: json_range(index, text, range) })
                    }
                    Some(name) => {
                        let external = externals.iter().find(|ext| ext.name == *name)?;
                        let range = json_range(&LineIndex::new(&external.text), &external.text, it.range);
                        Some(JsonRelated { message: it.message.clone(), path: Some(name.to_string()), range })
                    }
                })
                .collect();
            JsonDiagnostic {
                path,
                code: diagnostic.code.as_str(),
                severity: diagnostic.severity.as_str(),
                message: diagnostic.message.clone(),
                range,
                related,
            }
        })
        .collect()
}
