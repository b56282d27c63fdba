//! Hover: what an array, template or processor arrangement is mapped to and
//! who owns which part; what a loop moves; what a directive means.

use std::fmt::Write;

use syntax::directive::DirectiveBody;
use syntax::TextRange;

use crate::loops::{Access, AccessAttr, LoopReport, Triple, When};
use crate::model::{Axis, Format, Model, SymbolId, SymbolKind};
use crate::render::{describe_mapping, render_shape, ProcessorNames};
use crate::FileAnalysis;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HoverResult {
    pub range: TextRange,
    /// Markdown or plain text, as asked.
    pub contents: String,
}

/// The hover at `offset`; `markdown` chooses the format.
pub fn hover(analysis: &FileAnalysis, text: &str, offset: usize, markdown: bool) -> Option<HoverResult> {
    if let Some(result) = directive_keyword(analysis, offset, markdown) {
        return Some(result);
    }
    if let Some(occurrence) = super::occurrence_at(analysis, offset) {
        let symbol = analysis.model.symbol(occurrence.symbol);
        if symbol.is_array() || matches!(symbol.kind, SymbolKind::Template | SymbolKind::Processors) {
            let facts = describe_symbol(analysis, text, occurrence.symbol, markdown, offset);
            // A reference inside a loop: what this reference costs first, then the array.
            let in_loop = analysis
                .loops
                .iter()
                .filter(|it| it.range.contains_inclusive(offset))
                .filter_map(|report| {
                    let access = report
                        .accesses
                        .iter()
                        .find(|it| it.array == occurrence.symbol && it.range.contains_inclusive(offset))?;
                    Some((report, access))
                })
                .min_by_key(|(report, _)| report.range.len());
            if let Some((report, access)) = in_loop {
                let separator = if markdown { "\n---\n\n" } else { "\n" };
                return Some(HoverResult {
                    range: access.range,
                    contents: format!(
                        "{}{separator}{facts}",
                        describe_access(analysis, text, report, access, markdown)
                    ),
                });
            }
            return Some(HoverResult { range: occurrence.range, contents: facts });
        }
    }
    // The innermost loop whose header holds the offset.
    let report =
        analysis.loops.iter().filter(|it| it.header.contains_inclusive(offset)).min_by_key(|it| it.header.len())?;
    let mut contents = describe_loop(analysis, text, report, markdown);
    if markdown {
        contents.push_str(&crate::picture::hover_picture(analysis, text, report));
    }
    Some(HoverResult { range: report.header, contents })
}

const DIRECTIVE_HELP: &[(&str, &str)] = &[
    ("processors", "PROCESSORS declares an arrangement of abstract processors, e.g. `P(4)` or `Q(2,2)`: the targets of DISTRIBUTE ... ONTO."),
    ("template", "TEMPLATE declares an index space that holds no data: arrays are aligned with it and it is distributed."),
    ("distribute", "DISTRIBUTE splits an array or template over a processor arrangement, per dimension: BLOCK, BLOCK(m), CYCLIC, CYCLIC(m) or `*` (not distributed)."),
    ("redistribute", "REDISTRIBUTE changes the distribution of a DYNAMIC array or template at run time (every element may move)."),
    ("align", "ALIGN places each element of an array with an element of another array or template (its target), so both live on the same processor: `ALIGN B(I) WITH A(I+1)`."),
    ("realign", "REALIGN changes the alignment of a DYNAMIC array at run time."),
    ("dynamic", "DYNAMIC allows REALIGN and REDISTRIBUTE of an array or template."),
    ("inherit", "INHERIT: a dummy argument keeps the mapping of the actual argument it is called with."),
    ("independent", "INDEPENDENT asserts that the iterations of the next DO or FORALL do not interfere, so they may run in parallel; NEW(...) names variables private to each iteration, REDUCTION(...) the reduction variables, and an ON HOME(...) clause (a dialect) the loop's home."),
    ("shadow", "SHADOW reserves a halo (overlap area) around each processor's block, `SHADOW A(1:2)` one element below and two above, so neighbour exchanges fill it before a stencil loop."),
    ("on", "ON HOME(...) runs the next statement (or the block until END ON) on the processors that own the given element; at the start of a DO loop's body it names the loop's home."),
    ("onhome", "ONHOME(...) is the dialect spelling of ON HOME(...): it runs the next statement (or the block until END ON) on the processors that own the given element; at the start of a DO loop's body it names the loop's home."),
    ("resident", "RESIDENT asserts that the listed references are local to the processor executing the ON block."),
    ("sequence", "SEQUENCE: the array keeps Fortran storage association (it may not be distributed)."),
    ("nosequence", "NO SEQUENCE: arrays may be distributed (the default)."),
    ("end", "END ON / END RESIDENT closes an ON or RESIDENT block."),
];

fn directive_keyword(analysis: &FileAnalysis, offset: usize, markdown: bool) -> Option<HoverResult> {
    for directive in analysis.file.directives() {
        if !directive.range.contains_inclusive(offset) {
            continue;
        }
        let mut keywords = vec![&directive.keyword];
        if let DirectiveBody::Mapping(mapping) = &directive.body {
            keywords.extend(mapping.attrs.iter().map(|it| &it.keyword));
        }
        for keyword in keywords {
            if keyword.range.contains_inclusive(offset) {
                let key = keyword.key();
                let (_, help) = DIRECTIVE_HELP.iter().find(|(name, _)| *name == key)?;
                let mut contents = if markdown {
                    format!("**!HPF$ {}**\n\n{help}", key.to_uppercase())
                } else {
                    format!("!HPF$ {}\n\n{}", key.to_uppercase(), help.replace('`', ""))
                };
                if matches!(key.as_str(), "redistribute" | "realign") {
                    contents.push_str(&remap_moves(analysis, directive.range.start, markdown));
                }
                return Some(HoverResult { range: keyword.range, contents });
            }
        }
    }
    None
}

/// What the remap directive at `directive` moves, a line per array.
fn remap_moves(analysis: &FileAnalysis, directive: usize, markdown: bool) -> String {
    let Some(moves) = crate::remap_cost::moves_of_directive(analysis, directive) else { return String::new() };
    let mut res = String::from("\n\nHere:");
    if moves.is_empty() {
        res.push_str(" no array's mapping changes.");
    }
    for it in moves {
        let name = code(&analysis.model.symbol(it.array).name.text, markdown);
        let line = match it.count {
            Ok((0, _)) => format!("{name} is remapped; no element changes process"),
            Ok((elements, messages)) => format!("{name} moves {elements} element(s) in {messages} message(s)"),
            Err(why) => format!("{name} is remapped (not counted: {why})"),
        };
        let _ = write!(res, "\n{}{line}", if markdown { "- " } else { "  " });
    }
    res
}

fn code(text: &str, markdown: bool) -> String {
    if markdown {
        format!("`{text}`")
    } else {
        text.to_string()
    }
}

/// A symbol's mapping where `offset` is (after the REALIGN and
/// REDISTRIBUTE before it), and who owns which elements when that is known.
pub(crate) fn describe_symbol(
    analysis: &FileAnalysis,
    text: &str,
    id: SymbolId,
    markdown: bool,
    offset: usize,
) -> String {
    let model = &*analysis.model_at(offset);
    let symbol = model.symbol(id);
    let mut res = String::new();
    let kind = match symbol.kind {
        SymbolKind::Template => "template",
        SymbolKind::Processors => "processor arrangement",
        _ => "array",
    };
    let title = if symbol.type_name.is_empty() {
        render_shape(model, id)
    } else {
        format!("{} {}", symbol.type_name.to_uppercase(), render_shape(model, id))
    };
    let _ = writeln!(res, "{} ({kind})", if markdown { format!("**{title}**") } else { title });
    if symbol.kind == SymbolKind::Processors {
        let count: Option<i64> = symbol.shape.iter().map(|it| it.extent()).try_fold(1_i64, |acc, it| Some(acc * it?));
        if let Some(count) = count.filter(|it| *it > 0) {
            let names = ProcessorNames::of_arrangement(model, id);
            let _ = writeln!(res, "\n{count} processor(s): {}", names.span());
        }
        return res;
    }
    let _ = writeln!(res, "\n{}", code(&describe_mapping(model, id), markdown));
    if let Some(resolved) = model.resolve(id) {
        if resolved.target != id {
            let _ =
                writeln!(res, "\nfinal alignment target: {}", code(&render_shape(model, resolved.target), markdown));
        }
        if let Some(align) = &symbol.mapping.align {
            let directive = text.get(align.directive.to_range()).unwrap_or("").lines().next().unwrap_or("").trim();
            let _ = writeln!(res, "declared by: {}", code(directive, markdown));
        }
        if let Some(lines) = ownership(model, id) {
            let _ = writeln!(res, "\nowners:");
            for line in lines {
                let _ = writeln!(res, "{}{line}", if markdown { "- " } else { "  " });
            }
        }
    }
    res
}

/// Per processor coordinate, the elements of each distributed dimension it
/// owns: closed forms for BLOCK and BLOCK(m), a rule for CYCLIC(m).
fn ownership(model: &Model, id: SymbolId) -> Option<Vec<String>> {
    let symbol = model.symbol(id);
    let resolved = model.resolve(id)?;
    let target = model.symbol(resolved.target);
    let distribution = target.mapping.distribution.as_ref()?;
    let counts = model.processor_counts(distribution);
    let names = ProcessorNames::of_target(model, resolved.target)?;
    let mut lines = Vec::new();
    let mut proc_dim = 0;
    for (target_dim, format) in distribution.formats.iter().enumerate() {
        if *format == Format::Collapsed {
            continue;
        }
        let procs = counts.get(proc_dim).copied().flatten();
        proc_dim += 1;
        let Some(procs) = procs else {
            lines.push(format!("dimension {} of the target: the processor count is not known", target_dim + 1));
            continue;
        };
        // A DISTRIBUTE with more formats than the target has dimensions is
        // reported elsewhere (HPF021).
        let Some(extent) = target.shape.get(target_dim) else { continue };
        let (Some(lower), Some(upper)) = (extent.lo.known(), extent.hi.known()) else { continue };
        let (dim, stride, offset) = match resolved.axes.get(target_dim) {
            Some(Axis::Affine { source_dim, stride, offset }) => (*source_dim, *stride, *offset),
            Some(Axis::Replicated) => {
                lines.push(format!(
                    "target dimension {}: replicated on all {procs} processors along it",
                    target_dim + 1
                ));
                continue;
            }
            Some(Axis::Constant(value)) => {
                lines.push(format!("target dimension {}: fixed at index {value}", target_dim + 1));
                continue;
            }
            _ => continue,
        };
        let Some((lo, hi)) = symbol.shape.get(dim).and_then(|it| Some((it.lo.known()?, it.hi.known()?))) else {
            continue;
        };
        let block = match *format {
            Format::Block => crate::model::block_size(upper.saturating_sub(lower).saturating_add(1), procs),
            Format::BlockOf(Some(m)) => m,
            Format::Cyclic(Some(m)) => {
                let first = names.of_coordinate(proc_dim - 1, 0);
                lines.push(format!(
                    "dimension {}: element i is on the processor ((({stride}*i{offset:+}) - {lower}) / {m}) mod {procs} places after {first} (CYCLIC({m}))",
                    dim + 1
                ));
                continue;
            }
            _ => continue,
        };
        for coord in 0..procs.min(16) {
            // Template indices owned: lower + coord*block ..= lower + (coord+1)*block - 1.
            let (t_lo, t_hi) = (lower + coord * block, (lower + (coord + 1) * block - 1).min(upper));
            // Elements i with t_lo <= stride*i + offset <= t_hi.
            let (a, b) = if stride > 0 {
                (div_ceil(t_lo - offset, stride), div_floor(t_hi - offset, stride))
            } else {
                (div_ceil(t_hi - offset, stride), div_floor(t_lo - offset, stride))
            };
            let (a, b) = (a.max(lo), b.min(hi));
            let range = if a > b { "nothing".to_string() } else { format!("{}({a}:{b})", symbol.name.text) };
            let processor = names.of_coordinate(proc_dim - 1, coord);
            if symbol.rank() == 1 {
                lines.push(format!("{processor}: {range}"));
            } else {
                lines.push(format!("{processor}, dimension {}: {range}", dim + 1));
            }
        }
        if procs > 16 {
            lines.push(format!("... {} more processors", procs - 16));
        }
    }
    Some(lines)
}

fn div_floor(a: i64, b: i64) -> i64 {
    let q = a / b;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

fn div_ceil(a: i64, b: i64) -> i64 {
    let q = a / b;
    if (a % b != 0) && ((a < 0) == (b < 0)) {
        q + 1
    } else {
        q
    }
}

fn triples(list: &[Option<Triple>]) -> String {
    let parts: Vec<String> = list.iter().map(|it| it.map_or("[?]".to_string(), |it| it.render())).collect();
    parts.join(" ")
}

/// One reference in a loop: its access range, declared and optimal
/// triples, the transfer it forces and the ALIGN that would make it local.
fn describe_access(
    analysis: &FileAnalysis,
    text: &str,
    report: &LoopReport,
    access: &Access,
    markdown: bool,
) -> String {
    let model = &*analysis.model_of_loop(report);
    let name = &model.symbol(access.array).name.text;
    let slice = |range: TextRange| text.get(range.to_range()).unwrap_or("").trim().to_string();
    let header = text.get(report.header.to_range()).unwrap_or("").lines().next().unwrap_or("").trim().to_string();
    let what = match access.attr {
        AccessAttr::Reference => "read",
        AccessAttr::Update => "updated",
    };
    let mut res = String::new();
    let reference = slice(access.range);
    let _ = writeln!(res, "{} {what} in {}", code(&reference, markdown), code(&header, markdown));
    let bullet = if markdown { "- " } else { "  " };
    let _ = writeln!(res);
    let _ = writeln!(res, "{bullet}access range {}", triples(&access.access));
    let _ = writeln!(res, "{bullet}declared {}", triples(&access.declared));
    if let Some(home) = &report.home {
        let _ = writeln!(
            res,
            "{bullet}loop triple {} (home {})",
            triples(&home.triple),
            code(&slice(home.range), markdown)
        );
    }
    if access.is_home {
        let _ = writeln!(res, "{bullet}the loop's home: its iterations run where these elements live");
        return res;
    }
    match (access.optimal_text(), &access.reason) {
        (Some(optimal), _) => {
            let _ = writeln!(res, "{bullet}optimal {optimal}");
        }
        (None, Some(reason)) => {
            let _ = writeln!(res, "{bullet}no optimal triple: {}", reason.describe(name));
        }
        (None, None) => {}
    }
    let when = |transfer: &crate::loops::Transfer| match transfer.when {
        When::Before => "before the loop",
        When::After => "after the loop",
    };
    match &access.transfer {
        None => {
            let _ = writeln!(res, "\nNothing moves: the reference is local to the iteration that makes it.");
        }
        Some(transfer) => match (&transfer.count, &transfer.uncounted) {
            (Some(count), _) if count.moved_elements == 0 => {
                let _ = writeln!(
                    res,
                    "\nNothing moves on this distribution ({}, but every element is already where it is used).",
                    transfer.kind.describe()
                );
            }
            (Some(count), _) => {
                let _ = writeln!(
                    res,
                    "\nTransfer {}: {}, {} element(s) in {} message(s)",
                    when(transfer),
                    transfer.kind.describe(),
                    count.moved_elements,
                    count.messages.len()
                );
                let processors = crate::render::loop_processors(analysis, report);
                const LISTED: usize = 8;
                for message in count.messages.iter().take(LISTED) {
                    let _ = writeln!(
                        res,
                        "{bullet}{} → {}: {} element(s)",
                        processors.of_rank(message.from),
                        processors.of_rank(message.to),
                        message.elements
                    );
                }
                if count.messages.len() > LISTED {
                    let _ = writeln!(res, "{bullet}... {} more message(s)", count.messages.len() - LISTED);
                }
            }
            (None, why) => {
                let why = why.as_deref().map(|it| format!(" (not counted: {it})")).unwrap_or_default();
                let _ = writeln!(res, "\nTransfer {}: {}{why}", when(transfer), transfer.kind.describe());
            }
        },
    }
    if let (Some(align), None, Some(_)) = (&access.optimal_align, &access.reason, &access.transfer) {
        let _ = writeln!(res, "\nlocal with {}", code(align, markdown));
    }
    res
}

/// The loop's triple, its home, and per access the ranges, triples and transfer.
pub(crate) fn describe_loop(analysis: &FileAnalysis, text: &str, report: &LoopReport, markdown: bool) -> String {
    let model = &analysis.model;
    let slice = |range: TextRange| text.get(range.to_range()).unwrap_or("").trim().to_string();
    let mut res = String::new();
    let header = slice(report.header);
    let _ = writeln!(res, "{}", if markdown { format!("**{header}**") } else { header });
    if let Some(why) = &report.gave_up {
        let _ = writeln!(res, "\nnot analysed: {why}");
        return res;
    }
    if let Some(home) = &report.home {
        let _ = writeln!(res, "\nhome {} — loop triple {}", code(&slice(home.range), markdown), triples(&home.triple));
        if let Some(on_home) = report.on_home {
            let spelled = |range| slice(range).replace(' ', "").to_ascii_lowercase();
            let used =
                if spelled(on_home) == spelled(home.range) { "" } else { " (not an update of the loop: not used)" };
            let _ = writeln!(res, "ON HOME {}{used}", code(&slice(on_home), markdown));
        }
    }
    if let Some(why) = &report.no_home {
        let _ = writeln!(res, "\n{why}");
    }
    if report.accesses.is_empty() {
        return res;
    }
    if markdown {
        let _ = writeln!(res, "\n| access | | range | declared | optimal | transfer |\n|---|---|---|---|---|---|");
    } else {
        res.push('\n');
    }
    for access in &report.accesses {
        let name = &model.symbol(access.array).name.text;
        let attr = match access.attr {
            AccessAttr::Reference => "ref",
            AccessAttr::Update => "update",
        };
        let optimal = match (&access.optimal, &access.reason, access.is_home) {
            (_, _, true) => "home".to_string(),
            (Some(_), _, _) => access.optimal_text().unwrap_or_default(),
            (None, Some(reason), _) => format!("none ({})", reason.kind()),
            (None, None, _) => "-".to_string(),
        };
        let transfer = match &access.transfer {
            None => "-".to_string(),
            Some(transfer) => {
                let when = match transfer.when {
                    When::Before => "before",
                    When::After => "after",
                };
                let count = transfer
                    .count
                    .as_ref()
                    .map(|it| format!(": {} elems, {} msgs", it.moved_elements, it.messages.len()))
                    .unwrap_or_default();
                format!("{} {when}{count}", transfer.kind.describe())
            }
        };
        let reference = slice(access.range);
        if markdown {
            let _ = writeln!(
                res,
                "| `{reference}` | {attr} | {} | {} | {optimal} | {transfer} |",
                triples(&access.access),
                triples(&access.declared)
            );
        } else {
            let _ = writeln!(
                res,
                "{reference} ({attr}): range {} declared {} optimal {optimal}; {transfer}",
                triples(&access.access),
                triples(&access.declared)
            );
        }
        let _ = name;
    }
    for access in report.accesses.iter().filter(|it| it.transfer.is_some() && it.reason.is_none()) {
        if let Some(align) = &access.optimal_align {
            let _ = writeln!(res, "\noptimal for {}: {}", model.symbol(access.array).name.text, code(align, markdown));
        }
    }
    res
}
