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

use super::{collect_inputs, parse_input_options, read_text, EXIT_USAGE};

pub const USAGE: &str =
    "usage: hpf-ls optimize [--diff|--write] [--grow-templates] [--form free|fixed|fixed132] [--processors N] [--default-trips N] FILE";

/// At most this many templates are grown, one per round of re-analysis.
const MAX_GROWTH_ROUNDS: usize = 16;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Output {
    TableAndDiff,
    Diff,
    Write,
}

pub fn run(args: &[String], out: &mut String, err: &mut String) -> i32 {
    let mut output = Output::TableAndDiff;
    let mut default_trips = DEFAULT_TRIPS;
    let mut bad_trips = None;
    let mut grow_templates = false;
    let options = parse_input_options(args, |flag, value| match flag {
        "--diff" => {
            output = Output::Diff;
            Ok(true)
        }
        "--write" => {
            output = Output::Write;
            Ok(true)
        }
        "--grow-templates" => {
            grow_templates = true;
            Ok(true)
        }
        "--default-trips" => {
            match value.and_then(|it| it.parse::<u64>().ok()).filter(|it| *it > 0) {
                Some(trips) => default_trips = trips,
                None => bad_trips = Some(value.unwrap_or("").to_string()),
            }
            Ok(true)
        }
        _ => Ok(false),
    });
    if let Some(value) = bad_trips {
        let _ = writeln!(err, "hpf-ls optimize: `--default-trips` needs a positive integer, not `{value}`\n{USAGE}");
        return EXIT_USAGE;
    }
    let options = match options {
        Ok(options) if options.paths.len() == 1 => options,
        Ok(_) => {
            let _ = writeln!(err, "{USAGE}");
            return EXIT_USAGE;
        }
        Err(message) => {
            let _ = writeln!(err, "hpf-ls optimize: {message}\n{USAGE}");
            return EXIT_USAGE;
        }
    };
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
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let ops = diff_lines(&old_lines, &new_lines);
    let mut res = format!("--- a/{path}\n+++ b/{path}\n");
    const CONTEXT: usize = 3;
    // Indices into `ops` of the changes, grouped into hunks.
    let changed: Vec<usize> =
        ops.iter().enumerate().filter(|(_, op)| !matches!(op, Op::Same(..))).map(|it| it.0).collect();
    let mut idx = 0;
    while idx < changed.len() {
        let start = changed[idx].saturating_sub(CONTEXT);
        let mut end = changed[idx];
        while idx + 1 < changed.len() && changed[idx + 1] <= end + 2 * CONTEXT + 1 {
            idx += 1;
            end = changed[idx];
        }
        let end = (end + CONTEXT + 1).min(ops.len());
        let (mut old_start, mut new_start) = (0, 0);
        for op in &ops[..start] {
            match op {
                Op::Same(..) => {
                    old_start += 1;
                    new_start += 1;
                }
                Op::Delete(_) => old_start += 1,
                Op::Insert(_) => new_start += 1,
            }
        }
        let old_count = ops[start..end].iter().filter(|it| !matches!(it, Op::Insert(_))).count();
        let new_count = ops[start..end].iter().filter(|it| !matches!(it, Op::Delete(_))).count();
        let _ = writeln!(
            res,
            "@@ -{},{old_count} +{},{new_count} @@",
            old_start + usize::from(old_count > 0),
            new_start + usize::from(new_count > 0)
        );
        for op in &ops[start..end] {
            let (mark, line) = match op {
                Op::Same(line) => (' ', *line),
                Op::Delete(line) => ('-', *line),
                Op::Insert(line) => ('+', *line),
            };
            res.push(mark);
            res.push_str(line.trim_end_matches(['\n', '\r']));
            res.push('\n');
        }
        idx += 1;
    }
    res
}

enum Op<'a> {
    Same(&'a str),
    Delete(&'a str),
    Insert(&'a str),
}

/// Line operations turning `old` into `new`: common prefix and suffix, then
/// a longest common subsequence of the (small) middle.
fn diff_lines<'a>(old: &[&'a str], new: &[&'a str]) -> Vec<Op<'a>> {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..].iter().rev().zip(new[prefix..].iter().rev()).take_while(|(a, b)| a == b).count();
    let (old_mid, new_mid) = (&old[prefix..old.len() - suffix], &new[prefix..new.len() - suffix]);
    let mut res: Vec<Op> = old[..prefix].iter().zip(&new[..prefix]).map(|(a, _)| Op::Same(a)).collect();
    if old_mid.len().saturating_mul(new_mid.len()) > 4_000_000 {
        res.extend(old_mid.iter().map(|it| Op::Delete(it)));
        res.extend(new_mid.iter().map(|it| Op::Insert(it)));
    } else {
        let (n, m) = (old_mid.len(), new_mid.len());
        let mut table = vec![0u32; (n + 1) * (m + 1)];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                table[i * (m + 1) + j] = if old_mid[i] == new_mid[j] {
                    table[(i + 1) * (m + 1) + j + 1] + 1
                } else {
                    table[(i + 1) * (m + 1) + j].max(table[i * (m + 1) + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            if i < n && j < m && old_mid[i] == new_mid[j] {
                res.push(Op::Same(old_mid[i]));
                i += 1;
                j += 1;
            } else if i < n && (j == m || table[(i + 1) * (m + 1) + j] >= table[i * (m + 1) + j + 1]) {
                res.push(Op::Delete(old_mid[i]));
                i += 1;
            } else {
                res.push(Op::Insert(new_mid[j]));
                j += 1;
            }
        }
    }
    res.extend(old[old.len() - suffix..].iter().zip(&new[new.len() - suffix..]).map(|(a, _)| Op::Same(a)));
    res
}
