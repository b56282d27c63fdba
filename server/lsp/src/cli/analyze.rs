//! `hpf-ls analyze [--json] [--form F] [--processors N] PATH...`
//!
//! The alignment analysis of every loop: homes, access ranges, declared
//! and optimal triples, transfer patterns and messages. Text by default;
//! `--json` prints schema 1 of docs/analyze-json.md (one file at a time).

use std::fmt::Write;
use std::path::Path;

use analysis::loops::{AccessAttr, LoopReport, Triple, When};
use analysis::model::{Bound, Format};
use analysis::{FileAnalysis, ModelConfig};
use serde::Serialize;
use syntax::include::SourceMap;
use syntax::{LineIndex, SourceForm, TextRange};

use super::args::AnalyzeArgs;
use super::check::{to_json_mapped, JsonDiagnostic};
use super::{collect_inputs, EXIT_USAGE};

/// The version of the JSON layout; bump it on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

pub fn run(args: &AnalyzeArgs, out: &mut String, err: &mut String) -> i32 {
    let json = args.json;
    let options = args.source.input_options(args.paths.clone());
    let inputs = match collect_inputs(&options) {
        Ok(inputs) => inputs,
        Err(message) => {
            let _ = writeln!(err, "hpf-ls analyze: {message}");
            return EXIT_USAGE;
        }
    };
    if json && inputs.len() != 1 {
        let _ = writeln!(err, "hpf-ls analyze: --json takes exactly one file ({} given)", inputs.len());
        return EXIT_USAGE;
    }
    let mut status = 0;
    for input in &inputs {
        let loaded = match crate::sources::load(input) {
            Ok(loaded) => loaded,
            Err(message) => {
                let _ = writeln!(err, "hpf-ls analyze: {message}");
                status = EXIT_USAGE;
                continue;
            }
        };
        let config = ModelConfig { number_of_processors: input.processors };
        let analysis = crate::modules::analyze_input(input, &loaded, config);
        let (text, map) = (&loaded.expanded.text, &loaded.expanded.map);
        if json {
            let report = to_report_mapped(&input.path, text, map, input.form, config, &analysis);
            out.push_str(&serde_json::to_string_pretty(&report).expect("the report serialises"));
            out.push('\n');
        } else {
            render_text_mapped(text, map, &analysis, out);
        }
    }
    status
}

fn triple_json(triple: &Option<Triple>) -> Option<[i64; 3]> {
    triple.map(|it| [it.lo, it.hi, it.stride])
}

/// Where ranges of an analysed (expanded) text were written: 1-based lines
/// and columns in their files.
struct Places<'a> {
    map: &'a SourceMap,
    indexes: std::cell::RefCell<Vec<Option<LineIndex>>>,
}

impl<'a> Places<'a> {
    fn new(map: &'a SourceMap) -> Places<'a> {
        Places { map, indexes: std::cell::RefCell::new(vec![None; map.files().len()]) }
    }

    /// The file `range` starts in, and its line and column there.
    fn place(&self, range: TextRange) -> (&'a str, usize, usize) {
        let at = self.map.locate_range(range);
        let file = self.map.file(at.file);
        let mut indexes = self.indexes.borrow_mut();
        let index = indexes[at.file].get_or_insert_with(|| LineIndex::new(&file.text));
        let (line, column) = index.line_col(&file.text, at.range.start);
        (&file.name, line + 1, column + 1)
    }

    fn position(&self, range: TextRange) -> (usize, usize) {
        let (_, line, column) = self.place(range);
        (line, column)
    }
}

#[derive(Serialize)]
pub struct Report {
    pub schema: u32,
    pub path: String,
    pub form: String,
    pub processors: Option<i64>,
    pub arrays: Vec<ArrayJson>,
    pub loops: Vec<LoopJson>,
    pub diagnostics: Vec<JsonDiagnostic>,
    /// Per program unit: the cost of its loops and what the optimiser would reach.
    pub units: Vec<UnitJson>,
}

#[derive(Serialize)]
pub struct UnitJson {
    pub name: Option<String>,
    pub loops: usize,
    pub estimated_loops: usize,
    pub moved_elements: u64,
    pub messages: u64,
    pub misaligned: u64,
    pub optimized: OptimizedJson,
}

#[derive(Serialize)]
pub struct OptimizedJson {
    pub moved_elements: u64,
    pub messages: u64,
    pub misaligned: u64,
    pub realign: Vec<String>,
    pub exact: bool,
}

#[derive(Serialize)]
pub struct ArrayJson {
    pub name: String,
    pub unit: Option<String>,
    pub line: usize,
    pub column: usize,
    pub bounds: Vec<[Option<i64>; 2]>,
    pub target: String,
    pub triple: Vec<Option<[i64; 3]>>,
    pub distribution: Option<DistributionJson>,
    pub processors: Option<ProcessorsJson>,
}

#[derive(Serialize)]
pub struct DistributionJson {
    pub formats: Vec<String>,
    pub descriptive: bool,
}

#[derive(Serialize)]
pub struct ProcessorsJson {
    pub name: String,
    pub shape: Vec<Option<i64>>,
}

#[derive(Serialize)]
pub struct LoopJson {
    pub line: usize,
    pub kind: &'static str,
    pub unit: Option<String>,
    pub var: Option<String>,
    pub bounds: Option<[i64; 3]>,
    pub nest: Vec<NestJson>,
    pub home: Option<HomeJson>,
    pub no_home: Option<String>,
    pub triple: Vec<Option<[i64; 3]>>,
    pub gave_up: Option<String>,
    pub accesses: Vec<AccessJson>,
}

#[derive(Serialize)]
pub struct NestJson {
    pub var: Option<String>,
    pub bounds: Option<[i64; 3]>,
}

#[derive(Serialize)]
pub struct HomeJson {
    pub array: String,
    pub text: String,
    pub line: usize,
    pub column: usize,
}

#[derive(Serialize)]
pub struct AccessJson {
    pub array: String,
    pub text: String,
    pub attr: &'static str,
    pub home: bool,
    pub line: usize,
    pub column: usize,
    pub access: Vec<Option<[i64; 3]>>,
    pub declared: Vec<Option<[i64; 3]>>,
    pub optimal: Option<Vec<Option<[i64; 3]>>>,
    pub reason: Option<ReasonJson>,
    pub optimal_align: Option<String>,
    pub transfer: Option<TransferJson>,
}

#[derive(Serialize)]
pub struct ReasonJson {
    pub kind: &'static str,
    pub message: String,
}

#[derive(Serialize)]
pub struct TransferJson {
    pub from: Option<Vec<Option<[i64; 3]>>>,
    pub to: Option<Vec<Option<[i64; 3]>>>,
    pub when: &'static str,
    pub kind: &'static str,
    pub description: String,
    pub moved_elements: Option<u64>,
    pub messages: Option<Vec<MessageJson>>,
    pub uncounted: Option<String>,
}

#[derive(Serialize)]
pub struct MessageJson {
    pub from: u32,
    pub to: u32,
    pub elements: u64,
}

pub fn to_report(path: &Path, text: &str, form: SourceForm, config: ModelConfig, analysis: &FileAnalysis) -> Report {
    let map = SourceMap::identity(&path.display().to_string(), text);
    to_report_mapped(path, text, &map, form, config, analysis)
}

/// [`to_report`] of a program expanded from its files (`crate::sources`):
/// lines and columns are those of the files `map` names.
pub fn to_report_mapped(
    path: &Path,
    text: &str,
    map: &SourceMap,
    form: SourceForm,
    config: ModelConfig,
    analysis: &FileAnalysis,
) -> Report {
    let places = Places::new(map);
    let model = &analysis.model;
    let unit_name = |unit: usize| model.units[unit].name.as_ref().map(|it| it.text.clone());
    let mut arrays = Vec::new();
    for (id, symbol) in model.symbols() {
        // The arrays of this file (those of modules in other files are in their reports).
        if !symbol.is_array() || model.is_external(id) {
            continue;
        }
        let (line, column) = places.position(symbol.name.range);
        let resolved = model.resolve(id);
        let target = resolved.as_ref().map_or(symbol.name.text.clone(), |it| model.symbol(it.target).name.text.clone());
        let distribution = model.distribution_of(id);
        arrays.push(ArrayJson {
            name: symbol.name.text.clone(),
            unit: unit_name(id.unit),
            line,
            column,
            bounds: symbol.shape.iter().map(|dim| [dim.lo.known(), dim.hi.known()]).collect(),
            target,
            triple: analysis::render::triples(model, id).iter().map(|it| it.map(|(l, u, s)| [l, u, s])).collect(),
            distribution: distribution.map(|(_, it)| DistributionJson {
                formats: it.formats.iter().map(|format: &Format| format.render()).collect(),
                descriptive: it.descriptive,
            }),
            processors: distribution.and_then(|(_, it)| it.onto).map(|onto| {
                let processors = model.symbol(onto);
                ProcessorsJson {
                    name: processors.name.text.clone(),
                    shape: processors
                        .shape
                        .iter()
                        .map(|dim| match (&dim.lo, &dim.hi) {
                            (Bound::Known(_), Bound::Known(_)) => dim.extent(),
                            _ => None,
                        })
                        .collect(),
                }
            }),
        });
    }
    let loops = analysis.loops.iter().map(|report| loop_json(&places, text, analysis, report)).collect();
    Report {
        schema: SCHEMA_VERSION,
        path: path.display().to_string(),
        form: match form {
            SourceForm::Free => "free".to_string(),
            SourceForm::Fixed { line_length } => format!("fixed{line_length}"),
        },
        processors: config.number_of_processors,
        arrays,
        loops,
        diagnostics: to_json_mapped(map, &analysis.diagnostics, &analysis.model.externals),
        units: unit_totals(analysis),
    }
}

/// The per-unit totals of the cost model and the optimiser's plan (`hpf-ls optimize`).
fn unit_totals(analysis: &FileAnalysis) -> Vec<UnitJson> {
    let config = analysis::optimize::CostConfig {
        default_trips: analysis::optimize::DEFAULT_TRIPS,
        exact_limit: analysis::optimize::EXACT_LIMIT,
        node_budget: analysis::optimize::NODE_BUDGET,
    };
    let model = &analysis.model;
    analysis::optimize::unit_costs(analysis, config)
        .into_iter()
        .map(|unit| {
            let plan = analysis::optimize::optimize_unit(analysis, unit.unit, config);
            UnitJson {
                name: model.units[unit.unit].name.as_ref().map(|it| it.text.clone()),
                loops: unit.loops,
                estimated_loops: unit.estimated_loops,
                moved_elements: unit.cost.elements,
                messages: unit.cost.messages,
                misaligned: unit.cost.misaligned,
                optimized: OptimizedJson {
                    moved_elements: plan.after.elements,
                    messages: plan.after.messages,
                    misaligned: plan.after.misaligned,
                    realign: plan.changes.iter().map(|it| model.symbol(it.array).name.text.clone()).collect(),
                    exact: plan.exact,
                },
            }
        })
        .collect()
}

fn loop_json(places: &Places, text: &str, analysis: &FileAnalysis, report: &LoopReport) -> LoopJson {
    let model = &analysis.model;
    let slice = |range: TextRange| text.get(range.to_range()).unwrap_or("").to_string();
    let (line, _) = places.position(report.header);
    let bounds = |it: &analysis::loops::NestIndex| Some([it.lo?, it.hi?, it.step?]);
    LoopJson {
        line,
        kind: report.kind.as_str(),
        unit: model.units[report.unit].name.as_ref().map(|it| it.text.clone()),
        var: report.var.as_ref().map(|it| it.text.clone()),
        bounds: report.bounds,
        nest: report
            .nest
            .iter()
            .map(|it| NestJson { var: it.var.as_ref().map(|it| it.text.clone()), bounds: bounds(it) })
            .collect(),
        home: report.home.as_ref().map(|home| {
            let (line, column) = places.position(home.range);
            HomeJson { array: model.symbol(home.array).name.text.clone(), text: slice(home.range), line, column }
        }),
        no_home: report.no_home.clone(),
        triple: report.home.as_ref().map(|it| it.triple.iter().map(triple_json).collect()).unwrap_or_default(),
        gave_up: report.gave_up.clone(),
        accesses: report
            .accesses
            .iter()
            .map(|access| {
                let (line, column) = places.position(access.range);
                let name = &model.symbol(access.array).name.text;
                let declared: Vec<Option<[i64; 3]>> = access.declared.iter().map(triple_json).collect();
                let optimal: Option<Vec<Option<[i64; 3]>>> =
                    access.optimal.as_ref().map(|it| it.iter().map(triple_json).collect());
                AccessJson {
                    array: name.clone(),
                    text: slice(access.range),
                    attr: match access.attr {
                        AccessAttr::Reference => "ref",
                        AccessAttr::Update => "update",
                    },
                    home: access.is_home,
                    line,
                    column,
                    access: access.access.iter().map(triple_json).collect(),
                    declared: declared.clone(),
                    optimal: optimal.clone(),
                    reason: access
                        .reason
                        .as_ref()
                        .map(|reason| ReasonJson { kind: reason.kind(), message: reason.describe(name) }),
                    optimal_align: access.optimal_align.clone(),
                    transfer: access.transfer.as_ref().map(|transfer| {
                        let (from, to) = match transfer.when {
                            When::Before => (Some(declared.clone()), optimal.clone()),
                            When::After => (optimal.clone(), Some(declared.clone())),
                        };
                        TransferJson {
                            from,
                            to,
                            when: match transfer.when {
                                When::Before => "before",
                                When::After => "after",
                            },
                            kind: transfer.kind.as_str(),
                            description: transfer.kind.describe(),
                            moved_elements: transfer.count.as_ref().map(|it| it.moved_elements),
                            messages: transfer.count.as_ref().map(|count| {
                                count
                                    .messages
                                    .iter()
                                    .map(|it| MessageJson { from: it.from, to: it.to, elements: it.elements })
                                    .collect()
                            }),
                            uncounted: transfer.uncounted.clone(),
                        }
                    }),
                }
            })
            .collect(),
    }
}

fn render_triples(triples: &[Option<Triple>]) -> String {
    let parts: Vec<String> = triples.iter().map(|it| it.map_or("[?]".to_string(), |it| it.render())).collect();
    parts.join(" ")
}

/// The human summary: one block per loop.
pub fn render_text(path: &Path, text: &str, analysis: &FileAnalysis, out: &mut String) {
    render_text_mapped(text, &SourceMap::identity(&path.display().to_string(), text), analysis, out)
}

/// [`render_text`] of a program expanded from its files: each loop at the file and line it was written.
pub fn render_text_mapped(text: &str, map: &SourceMap, analysis: &FileAnalysis, out: &mut String) {
    let places = Places::new(map);
    let model = &analysis.model;
    let slice = |range: TextRange| text.get(range.to_range()).unwrap_or("").to_string();
    let names: Vec<&str> = map.files().iter().map(|it| &*it.name).collect();
    let _ = writeln!(out, "== {}", names.join(" "));
    if analysis.loops.is_empty() {
        let _ = writeln!(out, "(no loops)");
    }
    for report in &analysis.loops {
        let (file, line, _) = places.place(report.header);
        let header = slice(report.header);
        let _ = write!(out, "{file}:{line}: {}", header.trim());
        if let Some(home) = &report.home {
            let _ = write!(out, "  home {} {}", slice(home.range), render_triples(&home.triple));
        }
        out.push('\n');
        if let Some(why) = report.gave_up.as_ref().or(report.no_home.as_ref()) {
            let _ = writeln!(out, "    {why}");
        }
        let processors = analysis::render::loop_processors(analysis, report);
        for access in &report.accesses {
            let name = &model.symbol(access.array).name.text;
            let attr = match access.attr {
                AccessAttr::Reference => "ref",
                AccessAttr::Update => "update",
            };
            let _ = write!(
                out,
                "    {:<12} {:<6} access {}  declared {}",
                slice(access.range),
                attr,
                render_triples(&access.access),
                render_triples(&access.declared)
            );
            if access.is_home {
                let _ = writeln!(out, "  (home)");
                continue;
            }
            match (&access.optimal, &access.reason) {
                (Some(_), _) => {
                    let _ = write!(out, "  optimal {}", access.optimal_text().unwrap_or_default());
                }
                (None, Some(_)) => out.push_str("  optimal none"),
                (None, None) => {}
            }
            out.push('\n');
            if let Some(reason) = &access.reason {
                let _ = writeln!(out, "        why: {}", reason.describe(name));
            }
            if let Some(transfer) = &access.transfer {
                let when = match transfer.when {
                    When::Before => "before the loop",
                    When::After => "after the loop",
                };
                let _ = write!(out, "        transfer {when}: {}", transfer.kind.describe());
                match (&transfer.count, &transfer.uncounted) {
                    (Some(count), _) => {
                        let messages: Vec<String> = count
                            .messages
                            .iter()
                            .map(|it| {
                                format!(
                                    "{} -> {}: {}",
                                    processors.of_rank(it.from),
                                    processors.of_rank(it.to),
                                    it.elements
                                )
                            })
                            .collect();
                        let _ =
                            write!(out, "; {} element(s) in {} message(s)", count.moved_elements, count.messages.len());
                        if !messages.is_empty() && messages.len() <= 16 {
                            let _ = write!(out, " ({})", messages.join(", "));
                        }
                    }
                    (None, Some(why)) => {
                        let _ = write!(out, "; not counted: {why}");
                    }
                    (None, None) => {}
                }
                out.push('\n');
                if let (Some(align), None) = (&access.optimal_align, &access.reason) {
                    let _ = writeln!(out, "        optimal alignment: {align}");
                }
            }
        }
    }
}
