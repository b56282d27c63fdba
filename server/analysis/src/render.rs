//! Plain-text descriptions of the mapping model, for `hpf-ls model`, the
//! snapshot tests and hovers. One description per symbol, so that
//! every consumer says the same thing; processors are named by the
//! arrangement's own indices (`P(1)`..`P(4)`) wherever a user reads them.

use std::fmt::Write;

use crate::model::{Axis, Model, SymbolId, SymbolKind};

/// The alignment triple `[l:u:s]` of each dimension of `id` relative to
/// its final target, `None` for a dimension that is collapsed, unknown or
/// has unknown bounds.
pub fn triples(model: &Model, id: SymbolId) -> Vec<Option<(i64, i64, i64)>> {
    let symbol = model.symbol(id);
    let resolved = model.resolve(id);
    (0..symbol.rank())
        .map(|dim| {
            let (_, stride, offset) = resolved.as_ref()?.axis_of(dim)?;
            let lo = symbol.shape[dim].lo.known()?;
            let hi = symbol.shape[dim].hi.known()?;
            Some((stride.checked_mul(lo)?.checked_add(offset)?, stride.checked_mul(hi)?.checked_add(offset)?, stride))
        })
        .collect()
}

/// How users read processors: the arrangement's name and its declared
/// index ranges, so that rank `r` (numbered column-major from 0, as MPI
/// and the transfer counts number them) is `P(r+1)` for `PROCESSORS P(4)`
/// and `Q(0,1)` for rank 2 of `PROCESSORS Q(0:1,0:1)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessorNames {
    pub name: String,
    /// Per dimension of the arrangement: its lower bound and extent.
    pub dims: Vec<(i64, i64)>,
}

impl ProcessorNames {
    /// The arrangement `target`'s distribution is ONTO; an implicit arrangement
    /// (no ONTO) is called `P`, with 1-based indices over `counts`.
    pub fn of_target(model: &Model, target: SymbolId) -> Option<ProcessorNames> {
        let distribution = model.symbol(target).mapping.distribution.as_ref()?;
        let counts = model.processor_counts(distribution);
        let onto = distribution.onto.map(|it| model.symbol(it));
        let name = onto.map_or_else(|| "P".to_string(), |it| it.name.text.clone());
        let dims = counts
            .iter()
            .enumerate()
            .map(|(dim, count)| {
                let lower = onto.and_then(|it| it.shape.get(dim)).and_then(|it| it.lo.known()).unwrap_or(1);
                (lower, count.unwrap_or(1).max(1))
            })
            .collect();
        Some(ProcessorNames { name, dims })
    }

    /// A declared arrangement on its own.
    pub fn of_arrangement(model: &Model, id: SymbolId) -> ProcessorNames {
        let symbol = model.symbol(id);
        let dims =
            symbol.shape.iter().map(|it| (it.lo.known().unwrap_or(1), it.extent().unwrap_or(1).max(1))).collect();
        ProcessorNames { name: symbol.name.text.clone(), dims }
    }

    /// The processors at 0-based `coord` along dimension `dim` of the
    /// arrangement: `P(2)`, or `Q(:,2)` when it has other dimensions.
    pub fn of_coordinate(&self, dim: usize, coord: i64) -> String {
        let parts: Vec<String> = (0..self.dims.len().max(1))
            .map(|it| match self.dims.get(it) {
                Some(&(lower, _)) if it == dim => (lower + coord).to_string(),
                None => (1 + coord).to_string(),
                Some(_) => ":".to_string(),
            })
            .collect();
        format!("{}({})", self.name, parts.join(","))
    }

    /// `P(2)` or `Q(1,2)` for a rank numbered column-major from 0.
    pub fn of_rank(&self, rank: u32) -> String {
        let mut rest = i64::from(rank);
        let mut coords = Vec::new();
        for &(lower, extent) in &self.dims {
            coords.push((lower + rest % extent).to_string());
            rest /= extent;
        }
        if coords.is_empty() {
            coords.push("1".into());
        }
        format!("{}({})", self.name, coords.join(","))
    }

    /// The first and last processor, `P(1)..P(4)`.
    pub fn span(&self) -> String {
        let count: i64 = self.dims.iter().map(|it| it.1).product();
        let last = u32::try_from(count.max(1) - 1).unwrap_or(0);
        format!("{}..{}", self.of_rank(0), self.of_rank(last))
    }
}

/// The processors a loop's messages go between: those of its home's target,
/// under the loop's mapping epoch; `P` with 1-based indices when unknown.
pub fn loop_processors(analysis: &crate::FileAnalysis, report: &crate::loops::LoopReport) -> ProcessorNames {
    let model = analysis.model_of_loop(report);
    report
        .home
        .as_ref()
        .and_then(|home| model.resolve(home.array))
        .and_then(|resolved| ProcessorNames::of_target(&model, resolved.target))
        .unwrap_or_else(|| ProcessorNames { name: "P".to_string(), dims: Vec::new() })
}

pub fn render_triple(triple: Option<(i64, i64, i64)>) -> String {
    match triple {
        Some((lo, hi, stride)) => format!("[{lo}:{hi}:{stride}]"),
        None => "[?]".to_string(),
    }
}

/// `A(1:16)`: the name and declared shape.
pub fn render_shape(model: &Model, id: SymbolId) -> String {
    let symbol = model.symbol(id);
    if symbol.shape.is_empty() {
        return symbol.name.text.clone();
    }
    let dims: Vec<String> = symbol.shape.iter().map(|it| it.render()).collect();
    format!("{}({})", symbol.name.text, dims.join(","))
}

/// The align dummy for dimension `dim` (from 0) in the ALIGN directives
/// hpf-ls writes: `I`, `J`, ..., `O`, then `I8`, `I9`, ... (Fortran allows
/// rank 15).
pub fn align_dummy(dim: usize) -> String {
    const NAMES: [&str; 7] = ["I", "J", "K", "L", "M", "N", "O"];
    NAMES.get(dim).map_or_else(|| format!("I{}", dim + 1), |it| it.to_string())
}

/// One line on how `id` is mapped: alignment, final target, triples, distribution.
pub fn describe_mapping(model: &Model, id: SymbolId) -> String {
    let symbol = model.symbol(id);
    let mut res = String::new();
    let Some(resolved) = model.resolve(id) else {
        return format!("{}: ALIGN chain has a cycle", render_shape(model, id));
    };
    let _ = write!(res, "{}", render_shape(model, id));
    if resolved.target != id {
        let target = model.symbol(resolved.target);
        let axes: Vec<String> = resolved
            .axes
            .iter()
            .map(|axis| match *axis {
                Axis::Affine { source_dim, stride, offset } => {
                    let var = align_dummy(source_dim).to_ascii_lowercase();
                    match (stride, offset) {
                        (1, 0) => var.to_string(),
                        (1, offset) if offset > 0 => format!("{var}+{offset}"),
                        (1, offset) => format!("{var}{offset}"),
                        (stride, 0) => format!("{stride}*{var}"),
                        (stride, offset) if offset > 0 => format!("{stride}*{var}+{offset}"),
                        (stride, offset) => format!("{stride}*{var}{offset}"),
                    }
                }
                Axis::Constant(value) => value.to_string(),
                Axis::Replicated => "*".to_string(),
                Axis::Unknown => "?".to_string(),
            })
            .collect();
        let _ = write!(res, " -> {}({})", target.name.text, axes.join(","));
    }
    if symbol.kind == SymbolKind::Variable && !symbol.shape.is_empty() {
        let triples: Vec<String> = triples(model, id)
            .into_iter()
            .enumerate()
            .map(|(dim, triple)| match triple {
                Some(_) => render_triple(triple),
                None => symbolic_triple(model, id, &resolved, dim),
            })
            .collect();
        let _ = write!(res, " triples {}", triples.join(" "));
    }
    match model.distribution_of(id) {
        Some((_, distribution)) => {
            let formats: Vec<String> = distribution.formats.iter().map(|it| it.render()).collect();
            match (distribution.descriptive, formats.is_empty()) {
                (true, true) => res.push_str("; distribution * (transcriptive: as the actual argument's)"),
                (true, false) => {
                    let _ = write!(res, "; *({}) (descriptive)", formats.join(","));
                }
                (false, _) => {
                    let _ = write!(res, "; ({})", formats.join(","));
                }
            }
            if let Some(onto) = distribution.onto {
                let _ = write!(res, " onto {}", render_shape(model, onto));
            }
        }
        None if symbol.mapping.inherit.is_some() => {}
        None if resolved.axes.iter().any(|it| matches!(it, Axis::Replicated)) => {}
        None => res.push_str("; not distributed (replicated)"),
    }
    if symbol.mapping.dynamic {
        res.push_str("; dynamic");
    }
    if symbol.mapping.inherit.is_some() {
        res.push_str("; inherit (mapped as the actual argument)");
    }
    if let Some(shadow) = &symbol.mapping.shadow {
        let widths: Vec<String> = shadow.iter().map(|(lo, hi)| format!("{lo}:{hi}")).collect();
        let _ = write!(res, "; shadow({})", widths.join(","));
    }
    res
}

/// The whole model, unit by unit: constants, processors, templates, arrays.
pub fn render_model(model: &Model) -> String {
    let mut res = String::new();
    for (unit_id, unit) in model.units.iter().enumerate() {
        let name = unit.name.as_ref().map_or("(main)", |it| it.text.as_str());
        match model.external_file(unit_id) {
            None => {
                let _ = writeln!(res, "{} {}", unit.kind.as_str(), name);
            }
            Some(file) => {
                let _ = writeln!(res, "{} {} (from {})", unit.kind.as_str(), name, file.name);
            }
        }
        for (index, symbol) in unit.symbols.iter().enumerate() {
            let id = SymbolId { unit: unit_id, index };
            match symbol.kind {
                SymbolKind::Constant(value) => {
                    let value = value.map_or("?".to_string(), |it| it.to_string());
                    let _ = writeln!(res, "  parameter {} = {value}", symbol.name.text);
                }
                SymbolKind::Processors => {
                    let _ = writeln!(res, "  processors {}", render_shape(model, id));
                }
                SymbolKind::Template => {
                    let _ = writeln!(res, "  template {}", describe_mapping(model, id));
                }
                SymbolKind::Variable if !symbol.shape.is_empty() || symbol.mapping.align.is_some() => {
                    let _ = writeln!(res, "  array {}", describe_mapping(model, id));
                }
                SymbolKind::Variable => {}
            }
        }
        for remap in &unit.remaps {
            let _ = writeln!(
                res,
                "  {:?} of {} at {}",
                remap.kind,
                model.symbol(remap.symbol).name.text,
                remap.directive.start
            );
        }
    }
    res
}

/// A triple in the declared bounds' own words when they do not fold
/// (`[1:M:1]` for a dummy `X(M)` aligned identically), else `[?]`.
fn symbolic_triple(model: &Model, id: SymbolId, resolved: &crate::model::ResolvedMapping, dim: usize) -> String {
    let symbol = model.symbol(id);
    let Some((_, stride, offset)) = resolved.axis_of(dim) else {
        return "[collapsed]".to_string();
    };
    let shape = &symbol.shape[dim];
    let bound = |bound: &crate::model::Bound| match bound {
        crate::model::Bound::Known(value) => Some(value.to_string()),
        crate::model::Bound::Unknown(text) => Some(text.clone()),
        crate::model::Bound::Assumed => None,
    };
    let image = |text: String| match (stride, offset) {
        (1, 0) => text,
        (1, offset) => format!("{text}{offset:+}"),
        (stride, 0) => format!("{stride}*{text}"),
        (stride, offset) => format!("{stride}*{text}{offset:+}"),
    };
    match (bound(&shape.lo), bound(&shape.hi)) {
        (Some(lo), Some(hi)) => format!("[{}:{}:{stride}]", image(lo), image(hi)),
        _ => "[?]".to_string(),
    }
}
