//! `hpf-ls optimize [--diff|--write] [--grow-templates] [--form F] [--processors N] [--default-trips N] FILE...`
//!
//! Chooses the ALIGN directives that minimise the transfers of every loop
//! of each program unit (`analysis::optimize`) of a program (its files, or
//! the `[program] sources` of a directory's hpf-ls.toml, with their
//! INCLUDEd headers), prints the before/after cost table and the directive
//! edits as a unified diff per file, a header's directives in the header;
//! `--diff` prints only the diff, `--write` rewrites the files. Where growing a template
//! would let an array align where its loops need it, the table proposes
//! it; `--grow-templates` carries the proposals out too (the template's
//! bounds change, which changes the program's memory and iteration space
//! of the template, so it is asked for explicitly).

use std::fmt::Write;

use analysis::ide::{describe_growth, optimize_file_edits, propose_growth, Optimized, TextEdit};
use analysis::optimize::{CostConfig, DEFAULT_TRIPS, EXACT_LIMIT, NODE_BUDGET};
use analysis::ModelConfig;

use super::args::OptimizeArgs;
use super::{collect_inputs, EXIT_USAGE};

/// At most this many templates are grown, one per round of re-analysis.
const MAX_GROWTH_ROUNDS: usize = 16;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Output {
    TableAndDiff,
    Diff,
    Write,
}

pub fn run(args: &OptimizeArgs, out: &mut String, err: &mut String) -> i32 {
    let output = match (args.diff, args.write) {
        (true, _) => Output::Diff,
        (_, true) => Output::Write,
        _ => Output::TableAndDiff,
    };
    let default_trips = args.default_trips.unwrap_or(DEFAULT_TRIPS);
    let grow_templates = args.grow_templates;
    let options = args.source.input_options(args.files.clone());
    let inputs = match collect_inputs(&options) {
        Ok(inputs) if inputs.len() == 1 => inputs,
        Ok(inputs) => {
            let _ = writeln!(
                err,
                "hpf-ls optimize: give the files of one program ({} programs found; a directory needs `[program] sources` in hpf-ls.toml)",
                inputs.len()
            );
            return EXIT_USAGE;
        }
        Err(message) => {
            let _ = writeln!(err, "hpf-ls optimize: {message}");
            return EXIT_USAGE;
        }
    };
    let input = &inputs[0];
    let loaded = match crate::sources::load(input) {
        Ok(loaded) => loaded,
        Err(message) => {
            let _ = writeln!(err, "hpf-ls optimize: {message}");
            return EXIT_USAGE;
        }
    };
    let map = &loaded.expanded.map;
    let text = &loaded.expanded.text;
    let config = ModelConfig { number_of_processors: input.processors };
    let analysis = crate::modules::analyze_input(input, &loaded, config);
    let cost_config = CostConfig { default_trips, exact_limit: EXACT_LIMIT, node_budget: NODE_BUDGET };
    let units = optimize_file_edits(&analysis, text, cost_config);
    let mut edits: Vec<TextEdit> = units.iter().flat_map(|it| it.edits.iter().cloned()).collect();
    let display = input.path.display().to_string();
    let mut table = String::new();
    // Each unit under the file it is in.
    let file_of = |range: syntax::TextRange| map.file(map.locate(range.start).file).name.to_string();
    render_table(&display, &file_of, text, &analysis, &units, cost_config, grow_templates, &mut table);
    if grow_templates {
        if let Some(grown) = grow(text, &analysis, cost_config, &mut table) {
            edits = line_edits(text, &grown);
        }
    }
    let changed = match edits_by_file(map, text, &edits) {
        Ok(changed) => changed,
        Err(problems) => {
            for problem in problems {
                let _ = writeln!(table, "  {problem}");
            }
            Vec::new()
        }
    };
    // A header's directives serve every unit that includes it: rewritten
    // for one, they must leave no other unit moving more than before.
    let changed = match worse_units(input, &analysis, &changed, cost_config) {
        Some(worse) if !changed.is_empty() => {
            let _ = writeln!(table, "  not rewritten: {worse}; no file was changed");
            Vec::new()
        }
        _ => changed,
    };
    if output != Output::Diff {
        out.push_str(&table);
    }
    for (file, new_text) in changed {
        let source = map.file(file);
        match output {
            Output::Diff | Output::TableAndDiff => out.push_str(&unified_diff(&source.name, &source.text, &new_text)),
            Output::Write => {
                if let Err(error) = std::fs::write(&*source.name, &new_text) {
                    let _ = writeln!(err, "hpf-ls optimize: {}: {error}", source.name);
                    return EXIT_USAGE;
                }
                let _ = writeln!(out, "wrote {}", source.name);
            }
        }
    }
    0
}

/// The units of the program with `changed` files (file id, new text) that
/// move more elements than in `analysis`, told as a sentence; `None` when
/// none does.
fn worse_units(
    input: &crate::cli::Input,
    analysis: &analysis::FileAnalysis,
    changed: &[(usize, String)],
    config: CostConfig,
) -> Option<String> {
    if changed.is_empty() {
        return None;
    }
    let loaded = crate::sources::load(input).ok()?;
    let map = &loaded.expanded.map;
    let names: Vec<(String, String)> =
        changed.iter().map(|(file, text)| (map.file(*file).name.to_string(), text.clone())).collect();
    let overlay = |path: &std::path::Path| {
        names.iter().find(|(name, _)| std::path::Path::new(name) == path).map(|(_, text)| text.clone())
    };
    let Ok(rewritten) = crate::sources::load_over_disk(input, &overlay) else {
        return Some("the rewritten program cannot be read again".to_string());
    };
    let config_model = ModelConfig { number_of_processors: input.processors };
    let after = crate::modules::analyze_input(input, &rewritten, config_model);
    let before = analysis::optimize::unit_costs(analysis, config);
    let after = analysis::optimize::unit_costs(&after, config);
    let mut worse = Vec::new();
    for (old, new) in before.iter().zip(&after) {
        if new.cost.elements > old.cost.elements {
            let unit = &analysis.model.units[old.unit];
            let name = unit.name.as_ref().map_or("(main program)".to_string(), |it| it.text.clone());
            worse.push(format!(
                "unit {name} would move {} elements instead of {}",
                new.cost.elements, old.cost.elements
            ));
        }
    }
    (!worse.is_empty() || before.len() != after.len()).then(|| {
        if worse.is_empty() {
            "the rewritten program has other units".to_string()
        } else {
            format!("the units that share the rewritten directives want different ones ({})", worse.join(", "))
        }
    })
}

/// The edits of the program's expanded text carried to the files they
/// change (a directive of a header is rewritten in the header, once for
/// all the units that include it): each changed file's new text, in the
/// order of the program's files. `Err` when an edit cannot be carried
/// (it spans two files or text a macro made, or the units that include
/// one header want different edits of it): then no file is changed.
fn edits_by_file(
    map: &syntax::include::SourceMap,
    text: &str,
    edits: &[TextEdit],
) -> Result<Vec<(usize, String)>, Vec<String>> {
    let mut by_file: Vec<Vec<TextEdit>> = vec![Vec::new(); map.files().len()];
    let mut problems = Vec::new();
    for edit in edits {
        let at = map.locate_range(edit.range);
        let file = map.file(at.file);
        // Copied byte for byte (a header included twice has two copies, each exact).
        let exact = at.range.len() == edit.range.len()
            && file.text.get(at.range.start..at.range.end) == text.get(edit.range.start..edit.range.end);
        if !exact {
            problems.push(format!(
                "not rewritten: a directive edit at {} spans text the preprocessor or INCLUDE made",
                file.name
            ));
            continue;
        }
        let edit = TextEdit { range: at.range, new_text: edit.new_text.clone() };
        let own = &mut by_file[at.file];
        match own.iter().find(|it| it.range.start < edit.range.end && edit.range.start < it.range.end) {
            Some(same) if *same == edit => {}
            Some(_) => problems
                .push(format!("not rewritten: the units that include {} want different directives in it", file.name)),
            None => own.push(edit),
        }
    }
    if !problems.is_empty() {
        problems.dedup();
        problems.push("no file was changed".to_string());
        return Err(problems);
    }
    Ok(by_file
        .into_iter()
        .enumerate()
        .filter(|(_, edits)| !edits.is_empty())
        .map(|(file, edits)| (file, analysis::ide::apply_edits(&map.file(file).text, &edits)))
        .filter(|(file, new_text)| *new_text != *map.file(*file).text)
        .collect())
}

/// The edits that make `new` of `old`, one per run of changed lines (so
/// that each falls in the file its lines come from).
fn line_edits(old: &str, new: &str) -> Vec<TextEdit> {
    let diff = similar::TextDiff::from_lines(old, new);
    let offsets = |text: &str| {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(at, _)| at + 1));
        if *starts.last().unwrap_or(&0) != text.len() {
            starts.push(text.len());
        }
        starts
    };
    let (old_lines, new_lines) = (offsets(old), offsets(new));
    diff.ops()
        .iter()
        .filter(|op| !matches!(op, similar::DiffOp::Equal { .. }))
        .map(|op| {
            let (from, to) = (op.old_range(), op.new_range());
            let range = syntax::TextRange::new(old_lines[from.start], old_lines[from.end]);
            TextEdit { range, new_text: new[new_lines[to.start]..new_lines[to.end]].to_string() }
        })
        .collect()
}

/// Grows templates as `propose_growth` proposes, one at a time (each
/// changes the program the next is computed on), then optimises every unit
/// of the result. `None` when there is nothing to grow.
fn grow(text: &str, analysis: &analysis::FileAnalysis, config: CostConfig, out: &mut String) -> Option<String> {
    let mut current = text.to_string();
    let mut current_analysis: Option<analysis::FileAnalysis> = None;
    for _ in 0..MAX_GROWTH_ROUNDS {
        let now = current_analysis.as_ref().unwrap_or(analysis);
        let units = optimize_file_edits(now, &current, config);
        let growth = units.iter().find_map(|optimized| {
            propose_growth(now, &current, optimized.plan.unit, config, optimized.measured).into_iter().next()
        });
        let Some(growth) = growth else { break };
        let _ = writeln!(
            out,
            "grew TEMPLATE {} and realigned {} (--grow-templates)",
            describe_growth(now, &growth),
            growth.realigned.join(", ")
        );
        current = growth.new_text;
        current_analysis = Some(analysis.reanalyze(&current));
    }
    let grown = current_analysis?;
    let units = optimize_file_edits(&grown, &current, config);
    let edits: Vec<TextEdit> = units.iter().flat_map(|it| it.edits.iter().cloned()).collect();
    Some(analysis::ide::apply_edits(&current, &edits))
}

#[allow(clippy::too_many_arguments)]
fn render_table(
    path: &str,
    file_of: &dyn Fn(syntax::TextRange) -> String,
    text: &str,
    analysis: &analysis::FileAnalysis,
    units: &[Optimized],
    config: CostConfig,
    growing: bool,
    out: &mut String,
) {
    let model = &analysis.model;
    if units.is_empty() {
        let _ = writeln!(out, "{path}: no loop with a distributed home: nothing to optimise");
        return;
    }
    for optimized in units {
        let plan = &optimized.plan;
        let unit = &model.units[plan.unit];
        let name = unit.name.as_ref().map_or("(main program)".to_string(), |it| it.text.clone());
        let search = if plan.exact {
            format!("exact search over {} combination(s)", plan.combinations)
        } else {
            format!(
                "heuristic search (coordinate descent and pair moves, then {} nodes of branch and bound; {} combinations, above the exact limit {} per component); no choice moves fewer than {} elements",
                config.node_budget, plan.combinations, config.exact_limit, plan.lower_bound.elements
            )
        };
        let _ = writeln!(
            out,
            "{}: unit {name}: {} loop(s), {} array(s) free to realign, {search}",
            file_of(unit.range),
            plan.loops,
            plan.variables
        );
        if plan.estimated_loops > 0 {
            let _ = writeln!(
                out,
                "  {} loop(s) of unknown trip count counted as {} iterations (--default-trips)",
                plan.estimated_loops, config.default_trips
            );
        }
        let (before, after) = (plan.before, optimized.measured);
        let _ = writeln!(out, "  {:<32} {:>12} {:>12}", "", "before", "after");
        let _ = writeln!(out, "  {:<32} {:>12} {:>12}", "moved elements", before.elements, after.elements);
        let _ = writeln!(out, "  {:<32} {:>12} {:>12}", "messages", before.messages, after.messages);
        let _ = writeln!(
            out,
            "  {:<32} {:>12} {:>12}",
            "uncounted misaligned accesses", before.misaligned, after.misaligned
        );
        if optimized.measured != plan.after {
            let _ = writeln!(
                out,
                "  (the model predicted {} moved elements; the re-analysed program has {})",
                plan.after.elements, after.elements
            );
        }
        for change in &plan.changes {
            let _ = writeln!(out, "  realign {}", model.symbol(change.array).name.text);
        }
        for array in &optimized.kept {
            let _ = writeln!(
                out,
                "  kept {} as declared: its ALIGN cannot be rewritten within the line length",
                model.symbol(*array).name.text
            );
        }
        if plan.changes.is_empty() {
            let _ = writeln!(out, "  the declared alignments are already optimal");
        }
        for growth in propose_growth(analysis, text, plan.unit, config, optimized.measured) {
            let _ = writeln!(
                out,
                "  proposal: grow TEMPLATE {} so that {} can align where its loops need it: moved elements {} (messages {}) instead of {}{}",
                describe_growth(analysis, &growth),
                growth.realigned.join(", "),
                growth.measured.elements,
                growth.measured.messages,
                optimized.measured.elements,
                if growing { "" } else { " (`--grow-templates` carries it out)" }
            );
        }
    }
}

/// A unified diff of two texts (three lines of context), empty when equal.
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}
