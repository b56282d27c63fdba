//! Quick fixes: rewrite the ALIGN of a misaligned array to its optimal
//! alignment, in the user's style, and say what that costs elsewhere; and
//! write a dialect form (HPF030) the HPF 2.0 way, with the edit its
//! diagnostic carries.

use syntax::directive::{AttrKind, Directive, DirectiveBody, MappingForm};
use syntax::{Code, ExprKind, Subscript, TextRange};

use crate::loops::{Access, OptimalAlignment};
use crate::model::{Axis, SymbolId};
use crate::FileAnalysis;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextEdit {
    pub range: TextRange,
    pub new_text: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActionKind {
    QuickFix,
    /// "Align all arrays for this loop".
    Source,
}

#[derive(Clone, Debug)]
pub struct Action {
    pub title: String,
    pub kind: ActionKind,
    pub edits: Vec<TextEdit>,
    /// The range of the diagnostic it fixes.
    pub fixes: Option<TextRange>,
    pub is_preferred: bool,
}

/// The actions for `range`: one quick fix per misalignment diagnostic there,
/// and the source action for the loop that holds `range`.
pub fn code_actions(analysis: &FileAnalysis, text: &str, range: TextRange) -> Vec<Action> {
    let mut actions = Vec::new();
    let overlaps = |it: TextRange| it.start <= range.end && range.start <= it.end;
    for diagnostic in analysis.diagnostics.iter().filter(|it| it.code == Code::Dialect && overlaps(it.range)) {
        let Some(fix) = &diagnostic.fix else { continue };
        actions.push(Action {
            title: fix.title.clone(),
            kind: ActionKind::QuickFix,
            edits: fix
                .edits
                .iter()
                .map(|(range, new_text)| TextEdit { range: *range, new_text: new_text.clone() })
                .collect(),
            fixes: Some(diagnostic.range),
            is_preferred: true,
        });
    }
    for diagnostic in analysis.diagnostics.iter().filter(|it| it.code == Code::MisalignedTransfer && overlaps(it.range))
    {
        let Some(access) = find_access(analysis, diagnostic.range) else { continue };
        let Some(edits) = realign_edits(analysis, text, access) else { continue };
        let name = &analysis.model.symbol(access.array).name.text;
        let align = edited_directive(text, &edits, access.array, analysis)
            .unwrap_or_else(|| access.optimal_align.clone().unwrap_or_default());
        let Some(effect) = effect(analysis, text, &edits, Some(diagnostic.range)) else { continue };
        actions.push(Action {
            title: format!("Realign {name}: `{align}` ({effect})"),
            kind: ActionKind::QuickFix,
            edits,
            fixes: Some(diagnostic.range),
            is_preferred: true,
        });
    }
    // The innermost loop around the range, all of its misaligned arrays at once.
    if let Some(report) =
        analysis.loops.iter().filter(|it| it.range.contains_range(range)).min_by_key(|it| it.range.len())
    {
        let mut edits: Vec<TextEdit> = Vec::new();
        let mut arrays: Vec<SymbolId> = Vec::new();
        for access in &report.accesses {
            let fixable = access.transfer.is_some() && access.reason.is_none() && access.optimal_align.is_some();
            if !fixable || arrays.contains(&access.array) {
                continue;
            }
            let Some(new) = realign_edits(analysis, text, access) else { continue };
            let clashes = new.iter().any(|a| {
                edits.iter().any(|b| a.range.start < b.range.end && b.range.start < a.range.end || a.range == b.range)
            });
            if !clashes {
                arrays.push(access.array);
                edits.extend(new);
            }
        }
        if arrays.len() > 1 || (arrays.len() == 1 && actions.is_empty()) {
            if let Some(effect) = effect(analysis, text, &edits, None) {
                let names: Vec<&str> = arrays.iter().map(|it| analysis.model.symbol(*it).name.text.as_str()).collect();
                actions.push(Action {
                    title: format!("Align all arrays for this loop ({}): {effect}", names.join(", ")),
                    kind: ActionKind::Source,
                    edits,
                    fixes: None,
                    is_preferred: false,
                });
            }
        }
    }
    actions
}

fn find_access(analysis: &FileAnalysis, range: TextRange) -> Option<&Access> {
    analysis
        .loops
        .iter()
        .flat_map(|it| it.accesses.iter())
        .find(|it| it.range == range && it.transfer.is_some() && it.reason.is_none() && it.optimal_alignment.is_some())
}

/// The ALIGN directive of `array` as it reads after the edits (for the title).
fn edited_directive(text: &str, edits: &[TextEdit], array: SymbolId, analysis: &FileAnalysis) -> Option<String> {
    let new_text = apply(text, edits);
    let name = analysis.model.symbol(array).name.key();
    new_text
        .lines()
        .map(str::trim)
        // `get`: a line may start with a multi-byte character.
        .filter_map(|line| line.get(1..5).filter(|it| it.eq_ignore_ascii_case("hpf$")).and(line.get(5..)))
        .map(str::trim)
        .find(|line| {
            let lower = line.to_ascii_lowercase();
            lower.starts_with("align") && !text.lines().any(|old| old.trim().ends_with(*line)) && lower.contains(&name)
        })
        .map(str::to_string)
}

/// Applies edits (non-overlapping) to `text`.
pub fn apply(text: &str, edits: &[TextEdit]) -> String {
    let mut sorted: Vec<&TextEdit> = edits.iter().collect();
    sorted.sort_by_key(|it| (it.range.start, it.range.end));
    let mut res = String::with_capacity(text.len() + 64);
    let mut at = 0;
    for edit in sorted {
        res.push_str(&text[at..edit.range.start]);
        res.push_str(&edit.new_text);
        at = edit.range.end;
    }
    res.push_str(&text[at..]);
    res
}

fn total_moved(analysis: &FileAnalysis) -> (u64, usize) {
    let mut moved = 0u64;
    let mut warnings = 0;
    for access in analysis.loops.iter().flat_map(|it| it.accesses.iter()) {
        if let Some(count) = access.transfer.as_ref().and_then(|it| it.count.as_ref()) {
            moved = moved.saturating_add(count.moved_elements);
        }
    }
    for diagnostic in &analysis.diagnostics {
        if diagnostic.code == Code::MisalignedTransfer {
            warnings += 1;
        }
    }
    (moved, warnings)
}

/// What the edits change over the whole file, after re-analysing it; `None`
/// when the edited text does not analyse cleanly or the fixed diagnostic remains.
fn effect(analysis: &FileAnalysis, text: &str, edits: &[TextEdit], fixed: Option<TextRange>) -> Option<String> {
    let new_text = apply(text, edits);
    let after = analysis.reanalyze(&new_text);
    if after.diagnostics.iter().any(|it| it.severity == syntax::Severity::Error && it.code.as_str() < "HPF100") {
        return None;
    }
    if let Some(fixed) = fixed {
        // The fixed reference moved by the edits' growth before it.
        let shift: isize = edits
            .iter()
            .filter(|it| it.range.end <= fixed.start)
            .map(|it| it.new_text.len() as isize - it.range.len() as isize)
            .sum();
        let start = (fixed.start as isize + shift) as usize;
        if after.diagnostics.iter().any(|it| it.code == Code::MisalignedTransfer && it.range.start == start) {
            return None;
        }
    }
    let (moved_before, warnings_before) = total_moved(analysis);
    let (moved_after, warnings_after) = total_moved(&after);
    let delta = moved_after as i128 - moved_before as i128;
    let elements = match delta {
        0 => "no change in moved elements".to_string(),
        delta if delta < 0 => format!("{} fewer element moves in the file", -delta),
        delta => format!("{delta} more element moves elsewhere"),
    };
    Some(format!("{elements}; misalignment warnings {warnings_before} → {warnings_after}"))
}

/// The sentinel, the blanks after it and the case the user writes directives in.
struct Style {
    prefix: String,
    lower: bool,
}

fn style(analysis: &FileAnalysis, text: &str, near: Option<&Directive>) -> Style {
    let directive = near.or_else(|| analysis.file.directives().into_iter().next());
    match directive {
        Some(directive) => {
            let line_start = text[..directive.range.start].rfind('\n').map_or(0, |it| it + 1);
            let prefix = text.get(line_start..directive.keyword.range.start).unwrap_or("!HPF$ ").to_string();
            let lower = directive.keyword.text.chars().all(|it| !it.is_ascii_uppercase());
            Style { prefix, lower }
        }
        None => Style { prefix: "!HPF$ ".to_string(), lower: false },
    }
}

fn cased(word: &str, lower: bool) -> String {
    if lower {
        word.to_ascii_lowercase()
    } else {
        word.to_ascii_uppercase()
    }
}

/// `A(I+1, *)`: the target, spelled `target_name`, with subscripts in the dummies' names.
fn target_text(
    analysis: &FileAnalysis,
    optimal: &OptimalAlignment,
    target_name: &str,
    dummies: &[String],
    home_axes: Option<&[Axis]>,
) -> String {
    let target = analysis.model.symbol(optimal.target);
    let subscripts: Vec<String> = (0..target.rank())
        .map(|target_dim| match optimal.source_of(target_dim) {
            Some((dim, stride, offset)) => {
                let var = dummies.get(dim).cloned().unwrap_or_else(|| "I".to_string());
                let scaled = match stride {
                    1 => var,
                    -1 => format!("-{var}"),
                    stride => format!("{stride}*{var}"),
                };
                match offset {
                    0 => scaled,
                    offset if offset > 0 => format!("{scaled}+{offset}"),
                    offset => format!("{scaled}{offset}"),
                }
            }
            None => match home_axes.and_then(|it| it.get(target_dim)) {
                Some(Axis::Constant(value)) => value.to_string(),
                _ => "*".to_string(),
            },
        })
        .collect();
    format!("{target_name}({})", subscripts.join(","))
}

/// `A(2:16:1)`-style target for the triplet form `ALIGN B(:) WITH A(...)`.
fn triplet_target_text(
    analysis: &FileAnalysis,
    access: &Access,
    optimal: &OptimalAlignment,
    target_name: &str,
) -> Option<String> {
    let target = analysis.model.symbol(optimal.target);
    let symbol = analysis.model.symbol(access.array);
    let mut parts = Vec::new();
    for target_dim in 0..target.rank() {
        match optimal.source_of(target_dim) {
            Some((dim, stride, offset)) => {
                let (lo, hi) = (symbol.shape[dim].lo.known()?, symbol.shape[dim].hi.known()?);
                let (first, last) = (stride * lo + offset, stride * hi + offset);
                parts.push(if stride == 1 { format!("{first}:{last}") } else { format!("{first}:{last}:{stride}") });
            }
            None => parts.push("*".to_string()),
        }
    }
    Some(format!("{target_name}({})", parts.join(",")))
}

/// The edits that give `access.array` its optimal alignment.
pub(crate) fn realign_edits(analysis: &FileAnalysis, text: &str, access: &Access) -> Option<Vec<TextEdit>> {
    let optimal = access.optimal_alignment.as_ref()?;
    let model = &analysis.model;
    // Its ALIGN is in another file: that file is not this edit's to change.
    if model.is_external(access.array) {
        return None;
    }
    let symbol = model.symbol(access.array);
    let home_axes = analysis
        .loops
        .iter()
        .find(|it| it.accesses.iter().any(|a| a.range == access.range))
        .and_then(|it| it.home.as_ref())
        .and_then(|home| model.resolve(home.array))
        .map(|it| it.axes);
    let directives = analysis.file.directives();
    let existing = symbol
        .mapping
        .align
        .as_ref()
        .and_then(|align| directives.iter().find(|it| it.range == align.directive).copied());
    let style = style(analysis, text, existing);
    // One per dimension (rank over 7 once panicked here: crash 5 of the `analysis` fuzz target).
    let default_dummies: Vec<String> =
        (0..symbol.rank()).map(|dim| cased(&crate::render::align_dummy(dim), style.lower)).collect();
    let Some(directive) = existing else {
        return insert_align(analysis, text, access, optimal, &style, &default_dummies, home_axes.as_deref());
    };
    let DirectiveBody::Mapping(mapping) = &directive.body else { return None };
    let spec = mapping.attrs.iter().find_map(|it| match &it.kind {
        AttrKind::Align(spec) => Some(spec),
        _ => None,
    })?;
    // Names as the directive spells them (`ALIGN B(I) WITH A(I)` of `real a(16), b(15)`
    // stays upper case); a target the directive does not name is spelled as declared.
    let target_symbol = &model.symbol(optimal.target).name;
    let target_name = if spec.target.key() == target_symbol.key() { &spec.target.text } else { &target_symbol.text };
    let array_name = mapping
        .entities
        .iter()
        .find(|it| it.name.key() == symbol.name.key())
        .map_or(&symbol.name.text, |it| &it.name.text);
    // The user's dummies (`ALIGN B(K) WITH ...`), or the triplet form (`B(:)`).
    let sources = spec.sources.as_ref();
    let dummy_names: Option<Vec<String>> = sources.and_then(|sources| {
        sources
            .iter()
            .map(|it| match it {
                Subscript::Expr(expr) => match &expr.kind {
                    ExprKind::Name(name) => Some(name.text.clone()),
                    _ => None,
                },
                _ => None,
            })
            .collect()
    });
    let all_colons = sources
        .is_some_and(|it| it.iter().all(|s| matches!(s, Subscript::Range { lo: None, hi: None, stride: None, .. })));
    let new_target = match (&dummy_names, all_colons) {
        (Some(names), _) if names.len() == symbol.rank() => {
            target_text(analysis, optimal, target_name, names, home_axes.as_deref())
        }
        (_, true) => triplet_target_text(analysis, access, optimal, target_name)?,
        _ => target_text(analysis, optimal, target_name, &default_dummies, home_axes.as_deref()),
    };
    let star = if spec.star.is_some() { "*" } else { "" };
    let sources_text = match (&dummy_names, all_colons) {
        (Some(names), _) if names.len() == symbol.rank() => names.join(","),
        (_, true) => vec![":"; symbol.rank()].join(","),
        _ => default_dummies.get(..symbol.rank())?.join(","),
    };
    let with = cased("with", style.lower);
    let align = cased("align", style.lower);
    let shared = mapping.form == MappingForm::Attributed && mapping.entities.len() > 1;
    if !shared {
        if sources.is_some() && (dummy_names.as_ref().is_some_and(|it| it.len() == symbol.rank()) || all_colons) {
            // Only the target changes: the rest of the line stays as written.
            let target_start = spec.star.map_or(spec.target_range.start, |it| it.start);
            return fits(
                text,
                analysis,
                vec![TextEdit {
                    range: TextRange::new(target_start, spec.target_range.end),
                    new_text: format!("{star}{new_target}"),
                }],
            );
        }
        // Shorthand `ALIGN B WITH T`: write the whole directive in the dummy form.
        let body = TextRange::new(directive.keyword.range.start, directive.range.end);
        let rewritten = match mapping.form {
            MappingForm::Statement => format!("{align} {array_name}({sources_text}) {with} {star}{new_target}"),
            MappingForm::Attributed => format!("{align} ({sources_text}) {with} {star}{new_target} :: {array_name}"),
        };
        return fits(text, analysis, vec![TextEdit { range: body, new_text: rewritten }]);
    }
    // `ALIGN (I) WITH A(I) :: B, C` and only B changes: take B out, give it its own line.
    let index = mapping.entities.iter().position(|it| it.name.key() == symbol.name.key())?;
    let entity = &mapping.entities[index];
    let removal = if index + 1 < mapping.entities.len() {
        TextRange::new(entity.range.start, mapping.entities[index + 1].range.start)
    } else {
        let previous = &mapping.entities[index - 1];
        TextRange::new(previous.range.end, entity.range.end)
    };
    let line_end = directive.lines.last().map_or(directive.range.end, |it| it.end);
    let newline = if text[..line_end].ends_with('\r') || text.get(line_end..line_end + 2) == Some("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let new_line =
        format!("{newline}{}{align} ({sources_text}) {with} {star}{new_target} :: {array_name}", style.prefix);
    fits(
        text,
        analysis,
        vec![
            TextEdit { range: removal, new_text: String::new() },
            TextEdit { range: TextRange::empty(line_end), new_text: new_line },
        ],
    )
}

/// No ALIGN yet: insert one after the array's declaration, and take the
/// array out of its own DISTRIBUTE (an alignee cannot be distributed).
fn insert_align(
    analysis: &FileAnalysis,
    text: &str,
    access: &Access,
    optimal: &OptimalAlignment,
    style: &Style,
    dummies: &[String],
    home_axes: Option<&[Axis]>,
) -> Option<Vec<TextEdit>> {
    let model = &analysis.model;
    let symbol = model.symbol(access.array);
    let mut edits = Vec::new();
    if let Some(distribution) = &symbol.mapping.distribution {
        let directive = analysis.file.directives().into_iter().find(|it| it.range == distribution.directive)?;
        let DirectiveBody::Mapping(mapping) = &directive.body else { return None };
        if mapping.entities.len() != 1 || directive.lines.len() != 1 {
            return None;
        }
        // Delete the whole DISTRIBUTE line.
        let start = text[..directive.range.start].rfind('\n').map_or(0, |it| it + 1);
        let end = text[directive.range.end..].find('\n').map_or(text.len(), |it| directive.range.end + it + 1);
        edits.push(TextEdit { range: TextRange::new(start, end), new_text: String::new() });
    }
    // After the last line of the statement that declares the array: a line
    // inserted between continuation lines would split the statement.
    let declared = symbol.name.range.start;
    let statement_end = analysis
        .file
        .units
        .iter()
        .flat_map(|it| it.all_units())
        .flat_map(|it| it.decls.iter())
        .find(|it| it.range.start <= declared && declared < it.range.end)
        .map_or(declared, |it| it.range.end.max(declared));
    let line_end = text[statement_end..].find('\n').map_or(text.len(), |it| statement_end + it);
    let newline = if text[..line_end].ends_with('\r') { "\r\n" } else { "\n" };
    let line_end = if newline == "\r\n" { line_end - 1 } else { line_end };
    let dummies_used = dummies.get(..symbol.rank())?;
    let target = target_text(analysis, optimal, &model.symbol(optimal.target).name.text, dummies, home_axes);
    let line = format!(
        "{newline}{}{} {}({}) {} {target}",
        style.prefix,
        cased("align", style.lower),
        symbol.name.text,
        dummies_used.join(","),
        cased("with", style.lower)
    );
    edits.push(TextEdit { range: TextRange::empty(line_end), new_text: line });
    fits(text, analysis, edits)
}

/// Fixed form ignores text past column 72 (or 132): refuse an edit that
/// would push a directive past it rather than silently cut it.
fn fits(text: &str, analysis: &FileAnalysis, edits: Vec<TextEdit>) -> Option<Vec<TextEdit>> {
    let syntax::SourceForm::Fixed { line_length } = analysis.file.form else { return Some(edits) };
    let new_text = apply(text, &edits);
    for edit in &edits {
        let start = new_text[..edit.range.start.min(new_text.len())].rfind('\n').map_or(0, |it| it + 1);
        let end_probe = (edit.range.start + edit.new_text.len()).min(new_text.len());
        let end = new_text[end_probe..].find('\n').map_or(new_text.len(), |it| end_probe + it);
        for line in new_text[start..end].split('\n') {
            if line.trim_end_matches('\r').chars().count() > line_length {
                return None;
            }
        }
    }
    Some(edits)
}
