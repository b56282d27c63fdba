//! `hpf-ls optimize [--diff|--write] [--grow-templates] [--form F] [--processors N] [--default-trips N] FILE`
//!
//! Chooses the ALIGN directives that minimise the transfers of every loop
//! of each program unit (`analysis::optimize`), prints the before/after
//! cost table and the directive edits as a unified diff; `--diff` prints
//! only the diff, `--write` rewrites the file. Where growing a template
//! would let an array align where its loops need it, the table proposes
//! it; `--grow-templates` carries the proposals out too (the template's
//! bounds change, which changes the program's memory and iteration space
//! of the template, so it is asked for explicitly).

use std::fmt::Write;

use analysis::ide::{describe_growth, optimize_file_edits, propose_growth, Optimized, TextEdit};
use analysis::optimize::{CostConfig, DEFAULT_TRIPS, EXACT_LIMIT, NODE_BUDGET};
use analysis::ModelConfig;

use super::args::OptimizeArgs;
use super::{collect_inputs, read_text, EXIT_USAGE};

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
    let options = args.source.input_options(vec![args.file.clone()]);
    let inputs = match collect_inputs(&options) {
        Ok(inputs) if inputs.len() == 1 => inputs,
        Ok(inputs) => {
            let _ = writeln!(err, "hpf-ls optimize: takes exactly one file ({} found)", inputs.len());
            return EXIT_USAGE;
        }
        Err(message) => {
            let _ = writeln!(err, "hpf-ls optimize: {message}");
            return EXIT_USAGE;
        }
    };
    let input = &inputs[0];
    let text = match read_text(&input.path) {
        Ok(text) => text,
        Err(message) => {
            let _ = writeln!(err, "hpf-ls optimize: {message}");
            return EXIT_USAGE;
        }
    };
    let config = ModelConfig { number_of_processors: input.processors };
    let analysis = crate::modules::analyze_path(&input.path, &text, input.form, config);
    let cost_config = CostConfig { default_trips, exact_limit: EXACT_LIMIT, node_budget: NODE_BUDGET };
    let units = optimize_file_edits(&analysis, &text, cost_config);
    let edits: Vec<TextEdit> = units.iter().flat_map(|it| it.edits.iter().cloned()).collect();
    let mut new_text = analysis::ide::apply_edits(&text, &edits);
    let display = input.path.display().to_string();
    let mut table = String::new();
    render_table(&display, &text, &analysis, &units, cost_config, grow_templates, &mut table);
    if grow_templates {
        new_text = grow(&text, &analysis, cost_config, &mut table).unwrap_or(new_text);
    }
    match output {
        Output::Diff => out.push_str(&unified_diff(&display, &text, &new_text)),
        Output::TableAndDiff => {
            out.push_str(&table);
            out.push_str(&unified_diff(&display, &text, &new_text));
        }
        Output::Write => {
            out.push_str(&table);
            if new_text != text {
                if let Err(error) = std::fs::write(&input.path, &new_text) {
                    let _ = writeln!(err, "hpf-ls optimize: {}: {error}", input.path.display());
                    return EXIT_USAGE;
                }
                let _ = writeln!(out, "wrote {display}");
            }
        }
    }
    0
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

fn render_table(
    path: &str,
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
            "{path}: unit {name}: {} loop(s), {} array(s) free to realign, {search}",
            plan.loops, plan.variables
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
