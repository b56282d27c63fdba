//! Diagnostics of the mapping that need the whole model: cycles, alignees
//! that are also distributed, bounds, ranks, block sizes, directive
//! placement.

use syntax::directive::{DirectiveBody, Independent};
use syntax::{Code, Diagnostic, Stmt, StmtKind};

use crate::model::{Axis, Format, Model, RemapKind, SymbolId, SymbolKind};

pub(crate) fn check(model: &Model, syntax_units: &[&syntax::Unit], diagnostics: &mut Vec<Diagnostic>) {
    // The file's own symbols: those of other files are reported there.
    let symbols: Vec<SymbolId> = model.symbols().map(|(id, _)| id).filter(|id| !model.is_external(*id)).collect();
    for &id in &symbols {
        check_alignment(model, id, diagnostics);
        check_distribution(model, id, diagnostics);
        check_processors(model, id, diagnostics);
    }
    for (unit_id, unit) in model.units.iter().enumerate().take(syntax_units.len()) {
        for remap in &unit.remaps {
            let symbol = model.symbol(remap.symbol);
            if !symbol.mapping.dynamic {
                let what = match remap.kind {
                    RemapKind::Realign => "REALIGN",
                    RemapKind::Redistribute => "REDISTRIBUTE",
                };
                diagnostics.push(
                    Diagnostic::new(
                        Code::NotDynamic,
                        remap.directive,
                        format!("{what} of `{}`, which is not declared DYNAMIC", symbol.name.text),
                    )
                    .with_related_in(
                        model.file_name(remap.symbol.unit),
                        symbol.name.range,
                        "declared here; add `!HPF$ DYNAMIC` for it",
                    ),
                );
            }
        }
        check_placement(syntax_units[unit_id], diagnostics);
    }
}

fn check_alignment(model: &Model, id: SymbolId, diagnostics: &mut Vec<Diagnostic>) {
    let symbol = model.symbol(id);
    let Some(align) = &symbol.mapping.align else { return };
    if model.resolve(id).is_none() {
        let message = if align.target == id {
            format!("`{}` is aligned with itself", symbol.name.text)
        } else {
            format!("the ALIGN chain of `{}` comes back to it (a cycle)", symbol.name.text)
        };
        diagnostics.push(Diagnostic::new(Code::AlignCycle, align.target_range, message));
        return;
    }
    if let Some(distribution) = &symbol.mapping.distribution {
        diagnostics.push(
            Diagnostic::new(
                Code::AligneeDistributed,
                distribution.distributee,
                format!(
                    "`{}` is aligned, so it takes the distribution of its target; it cannot be distributed too",
                    symbol.name.text
                ),
            )
            .with_related(align.directive, "aligned here"),
        );
    }
    if let Some(inherit) = symbol.mapping.inherit {
        diagnostics.push(
            Diagnostic::new(
                Code::InheritWithAlign,
                align.alignee,
                format!("`{}` has INHERIT, which excludes an ALIGN", symbol.name.text),
            )
            .with_related(inherit, "INHERIT here"),
        );
    }
    // Every element must land inside the target.
    let target = model.symbol(align.target);
    for (target_dim, axis) in align.axes.iter().enumerate() {
        let Some(target_extent) = target.shape.get(target_dim) else { continue };
        let (Some(target_lo), Some(target_hi)) = (target_extent.lo.known(), target_extent.hi.known()) else {
            continue;
        };
        let images = match *axis {
            Axis::Affine { source_dim, stride, offset } => {
                let Some(dim) = symbol.shape.get(source_dim) else { continue };
                let (Some(lo), Some(hi)) = (dim.lo.known(), dim.hi.known()) else { continue };
                if hi < lo {
                    continue;
                }
                let first = stride.saturating_mul(lo).saturating_add(offset);
                let last = stride.saturating_mul(hi).saturating_add(offset);
                Some((first.min(last), first.max(last)))
            }
            Axis::Constant(value) => Some((value, value)),
            Axis::Replicated | Axis::Unknown => None,
        };
        if let Some((min, max)) = images {
            if min < target_lo || max > target_hi {
                diagnostics.push(
                    Diagnostic::new(
                        Code::AlignOutOfBounds,
                        align.target_range,
                        format!(
                            "`{}` is mapped to {}..{} in dimension {} of `{}`, outside its bounds {}..{}",
                            symbol.name.text,
                            min,
                            max,
                            target_dim + 1,
                            target.name.text,
                            target_lo,
                            target_hi
                        ),
                    )
                    .with_related_in(
                        model.file_name(align.target.unit),
                        target.name.range,
                        "target declared here",
                    ),
                );
            }
        }
    }
}

fn check_distribution(model: &Model, id: SymbolId, diagnostics: &mut Vec<Diagnostic>) {
    let symbol = model.symbol(id);
    let Some(distribution) = &symbol.mapping.distribution else { return };
    if matches!(symbol.kind, SymbolKind::Processors | SymbolKind::Constant(_)) || symbol.shape.is_empty() {
        let what = if symbol.shape.is_empty() && symbol.kind == SymbolKind::Variable {
            "a scalar"
        } else {
            symbol.kind.as_str()
        };
        diagnostics.push(Diagnostic::new(
            Code::NotAnArray,
            distribution.distributee,
            format!("`{}` is {what}; only arrays and templates are distributed", symbol.name.text),
        ));
        return;
    }
    if distribution.formats.is_empty() {
        return;
    }
    if distribution.formats.len() != symbol.rank() {
        diagnostics.push(
            Diagnostic::new(
                Code::DistributeRankMismatch,
                distribution.distributee,
                format!(
                    "`{}` has rank {}, but the DISTRIBUTE gives {} format(s)",
                    symbol.name.text,
                    symbol.rank(),
                    distribution.formats.len()
                ),
            )
            .with_related(symbol.name.range, "declared here"),
        );
        return;
    }
    let distributed: Vec<usize> =
        (0..distribution.formats.len()).filter(|&dim| distribution.formats[dim] != Format::Collapsed).collect();
    if let Some(onto) = distribution.onto {
        let processors = model.symbol(onto);
        let proc_rank = processors.rank().max(1);
        let expected = distributed.len();
        // A scalar arrangement takes one distributed dimension.
        if proc_rank != expected && !(processors.rank() == 0 && expected <= 1) {
            diagnostics.push(
                Diagnostic::new(
                    Code::OntoRankMismatch,
                    distribution.onto_range.unwrap_or(distribution.directive),
                    format!(
                        "`{}` has rank {}, but {} dimension(s) of `{}` are distributed onto it",
                        processors.name.text,
                        processors.rank(),
                        expected,
                        symbol.name.text
                    ),
                )
                .with_related_in(
                    model.file_name(onto.unit),
                    processors.name.range,
                    "processor arrangement declared here",
                ),
            );
            return;
        }
    }
    let counts = model.processor_counts(distribution);
    for (proc_dim, &dim) in distributed.iter().enumerate() {
        let Format::BlockOf(Some(block)) = distribution.formats[dim] else { continue };
        let (Some(Some(count)), Some(extent)) =
            (counts.get(proc_dim), symbol.shape.get(dim).and_then(|it| it.extent()))
        else {
            continue;
        };
        if block.saturating_mul(*count) < extent {
            diagnostics.push(Diagnostic::new(
                Code::BlockTooSmall,
                distribution.distributee,
                format!(
                    "BLOCK({block}) on {count} processors covers {} elements, but dimension {} of `{}` has {extent}",
                    block * count,
                    dim + 1,
                    symbol.name.text
                ),
            ));
        }
    }
}

fn check_processors(model: &Model, id: SymbolId, diagnostics: &mut Vec<Diagnostic>) {
    let symbol = model.symbol(id);
    if symbol.kind != SymbolKind::Processors && symbol.kind != SymbolKind::Template {
        return;
    }
    for dim in &symbol.shape {
        if let Some(extent) = dim.extent().filter(|it| *it <= 0) {
            diagnostics.push(Diagnostic::new(
                Code::BadProcessorCount,
                dim.range,
                format!("a {} needs a positive extent, this one is {extent}", symbol.kind.as_str()),
            ));
        }
    }
}

const SPECIFICATION_DIRECTIVES: &[&str] =
    &["processors", "template", "align", "distribute", "dynamic", "inherit", "shadow", "sequence", "nosequence"];

/// INDEPENDENT must precede a DO or FORALL; specification directives
/// belong before the first executable statement, executable ones after.
fn check_placement(unit: &syntax::Unit, diagnostics: &mut Vec<Diagnostic>) {
    for directive in &unit.directives {
        let keyword = directive.keyword.key();
        let is_spec = SPECIFICATION_DIRECTIVES.contains(&keyword.as_str());
        if is_spec && directive.range.start > unit.execution_start {
            diagnostics.push(Diagnostic::new(
                Code::MisplacedDirective,
                directive.keyword.range,
                format!(
                    "{} is a specification directive; it belongs before the first executable statement",
                    keyword.to_uppercase()
                ),
            ));
        }
        if let DirectiveBody::Independent(Independent { .. }) = &directive.body {
            let next = next_statement(&unit.body, directive.range.end);
            let ok = next.is_some_and(|it| matches!(it.kind, StmtKind::Do { .. } | StmtKind::Forall { .. }));
            if !ok {
                let mut diagnostic = Diagnostic::new(
                    Code::IndependentNotBeforeLoop,
                    directive.keyword.range,
                    "INDEPENDENT must be followed by a DO loop or a FORALL",
                );
                if let Some(next) = next {
                    diagnostic = diagnostic.with_related(next.header, "the next statement");
                }
                diagnostics.push(diagnostic);
            }
        }
    }
}

/// The first statement (at any nesting depth) that starts after `offset`.
pub(crate) fn next_statement(body: &[Stmt], offset: usize) -> Option<&Stmt> {
    let mut best: Option<&Stmt> = None;
    let mut stack: Vec<&Stmt> = body.iter().collect();
    while let Some(stmt) = stack.pop() {
        if stmt.range.start >= offset {
            if best.is_none_or(|it| stmt.range.start < it.range.start) {
                best = Some(stmt);
            }
        } else if stmt.range.end > offset {
            stack.extend(stmt.children());
        }
    }
    best
}
