//! The analysis layer: the semantic model of an HPF program (symbols and
//! mappings), and the alignment analysis built on it.
//!
//! Plain data in, plain data out, deterministic. No LSP and no tokio types
//! here; the `lsp` crate formats what this crate computes.

pub mod eval;
pub mod fetch;
pub mod ide;
pub mod loops;
mod mapping_checks;
pub mod model;
pub mod optimize;
pub mod picture;
pub mod remap_cost;
pub mod render;
pub mod transfer;
pub mod whatif;

use syntax::{Diagnostic, SourceFile, SourceForm};

pub use model::{Model, ModelConfig};

/// Everything known about one file.
#[derive(Clone, Debug)]
pub struct FileAnalysis {
    pub file: SourceFile,
    pub model: Model,
    /// Every loop, in text order.
    pub loops: Vec<std::sync::Arc<loops::LoopReport>>,
    /// Syntax and model diagnostics, in text order.
    pub diagnostics: Vec<Diagnostic>,
    /// Built on first use by `ide::occurrences`: hovers and navigation share it.
    occurrence_index: std::sync::OnceLock<Vec<ide::Occurrence>>,
}

impl FileAnalysis {
    /// The model a loop was analysed with: the mapping of its epoch
    /// ([`loops::MappingEpochs`]).
    pub fn model_of_loop(&self, report: &loops::LoopReport) -> std::borrow::Cow<'_, Model> {
        let points = self.model.remap_points(report.unit);
        match report.epoch.checked_sub(1).and_then(|it| points.get(it)) {
            Some(point) => match self.model.remapped_at(report.unit, point + 1) {
                Some(model) => std::borrow::Cow::Owned(model),
                None => std::borrow::Cow::Borrowed(&self.model),
            },
            None => std::borrow::Cow::Borrowed(&self.model),
        }
    }

    /// The model as it maps arrays at `offset`: the declared mapping, or
    /// the one the REALIGN and REDISTRIBUTE directives before `offset` in
    /// its unit made ([`model::Model::remapped_at`]).
    pub fn model_at(&self, offset: usize) -> std::borrow::Cow<'_, Model> {
        let unit = self
            .model
            .units
            .iter()
            .enumerate()
            .filter(|(_, it)| it.origin.is_none() && it.range.contains_inclusive(offset))
            .min_by_key(|(_, it)| it.range.len())
            .map(|(id, _)| id);
        match unit.and_then(|unit| self.model.remapped_at(unit, offset)) {
            Some(model) => std::borrow::Cow::Owned(model),
            None => std::borrow::Cow::Borrowed(&self.model),
        }
    }

    /// Analyses an edited text of the same file with the same settings and
    /// the same modules of other files (what a quick fix's effect, the
    /// optimiser and template growth measure).
    pub fn reanalyze(&self, text: &str) -> FileAnalysis {
        let modules = KnownModules(&self.model.externals);
        analyze_file_with(syntax::parse(text, self.file.form), self.model.config, &modules)
    }
}

/// The modules of other files an analysis already found.
struct KnownModules<'a>(&'a [std::sync::Arc<model::ExternalFile>]);

impl model::ModuleResolver for KnownModules<'_> {
    fn find_module(&self, key: &str) -> Option<std::sync::Arc<model::ExternalFile>> {
        self.0.iter().find(|it| it.module(key).is_some()).cloned()
    }
}

/// Parses and analyses one file.
pub fn analyze(text: &str, form: SourceForm, config: ModelConfig) -> FileAnalysis {
    analyze_file(syntax::parse(text, form), config)
}

/// Analyses a file parsed already (the language server reparses incrementally).
pub fn analyze_file(file: SourceFile, config: ModelConfig) -> FileAnalysis {
    analyze_file_with(file, config, &model::NoModules)
}

/// Analyses a file parsed already, taking the modules it USEs from other
/// files from `modules` (see [`model::ModuleResolver`]).
pub fn analyze_file_with(file: SourceFile, config: ModelConfig, modules: &dyn model::ModuleResolver) -> FileAnalysis {
    let mut diagnostics = file.diagnostics.clone();
    let model = model::build_model_with(&file, config, modules, &mut diagnostics);
    let units: Vec<&syntax::Unit> = model::flatten_units(&file).into_iter().map(|(unit, _)| unit).collect();
    let loops = loops::analyze_loops(&model, &units, &mut diagnostics);
    diagnostics.sort_by_key(|it| (it.range.start, it.range.end, it.code.as_str()));
    // One directive can yield the same finding once per entity it names.
    diagnostics.dedup_by(|a, b| a.code == b.code && a.range == b.range && a.message == b.message);
    FileAnalysis { file, model, loops, diagnostics, occurrence_index: std::sync::OnceLock::new() }
}
