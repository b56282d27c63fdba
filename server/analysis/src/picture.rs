//! Pictures of one loop: who owns which part of the alignment target, where
//! each array sits under its declared and its optimal alignment, which
//! iterations each processor executes, and one arrow per message.
//!
//! The picture is computed from a [`FileAnalysis`] only (the loop report, the
//! model's mappings and the counted transfers); [`LoopPicture`] is plain data
//! and [`render_text`], [`render_svg`] and [`render_compact`] draw it.
//! Element names on the arrows and the halo cells of 2-D pictures come from
//! enumerating the iterations of the nest, which is only done for small nests
//! ([`MAX_ENUMERATED`] iterations); the counts always come from the analysis.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use crate::loops::{AccessAttr, LoopReport, SubscriptForm, Triple, When};
use crate::model::{Axis, Format, Model, SymbolId};
use crate::render::ProcessorNames;
use crate::transfer::owner_coord;
use crate::FileAnalysis;
use syntax::TextRange;

/// Positions of a 1-D target drawn cell by cell; longer targets get no cells.
pub const MAX_CELLS_1D: i64 = 64;
/// Extent per dimension of a 2-D target drawn cell by cell.
pub const MAX_CELLS_2D: i64 = 48;
/// Iterations enumerated to name the elements of each message.
pub const MAX_ENUMERATED: u64 = 100_000;
/// Element names listed per message.
const MAX_NAMED: usize = 6;

/// One loop, ready to draw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopPicture {
    /// `DO I = 2, 16 (line 11)`.
    pub title: String,
    /// What the iterations follow: `iterations run where A(I) lives, loop triple [2:16:1]`.
    pub home: String,
    /// `A(1:16) distributed (BLOCK) onto P(4)`.
    pub target: String,
    /// How the processors are named (`P(1)`..`P(4)`), and their extents
    /// (empty when not distributed).
    pub procs: ProcessorNames,
    pub proc_shape: Vec<i64>,
    pub grid: Grid,
    /// One per message of the analysis, in the order of the accesses.
    pub messages: Vec<Arrow>,
    /// One line per access: its triples, or why it has no optimal one.
    pub accesses: Vec<String>,
    /// Why parts of the picture are missing.
    pub notes: Vec<String>,
    /// Who owns what, in words, when the target is not drawn cell by cell.
    pub ownership: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Grid {
    /// A rank-1 target, cell by cell.
    Line(LineGrid),
    /// A rank-2 target, cell by cell.
    Plane(PlaneGrid),
    /// Too large, rank 3 or more, or unknown bounds or distribution.
    None,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineGrid {
    /// The target's lower bound: cell `k` is target position `lower + k`.
    pub lower: i64,
    /// The owning rank of each position.
    pub owners: Vec<u32>,
    /// Rows drawn under the positions: iterations, then declared and optimal placements.
    pub rows: Vec<Row>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub label: String,
    pub kind: RowKind,
    /// The array or loop variable the row is about (for arrows).
    pub subject: String,
    /// One entry per target position: the element or iteration placed there.
    pub cells: Vec<Option<i64>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowKind {
    Iterations,
    Declared,
    Optimal,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlaneGrid {
    pub lower: [i64; 2],
    pub extent: [usize; 2],
    /// Owning rank per position, row-major (`[r * extent[1] + c]`, `r` along dimension 1).
    pub owners: Vec<u32>,
    /// Whether an iteration runs at the position (the home's positions).
    pub iterations: Vec<bool>,
    /// Whether the element at the position travels in some message (halo strips).
    pub moved: Vec<bool>,
}

/// One message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arrow {
    pub from: u32,
    pub to: u32,
    pub array: String,
    pub when: When,
    pub elements: u64,
    /// Some of the elements (`B(4)`), when the nest was enumerated.
    pub names: Vec<String>,
    /// Where to draw the arrow in a line grid: (row index, cell) at both ends.
    pub anchor: Option<((usize, usize), (usize, usize))>,
}

/// The ownership of a target: per target dimension, `None` when collapsed.
#[derive(Clone, Debug)]
struct Layout {
    lower: Vec<i64>,
    extent: Vec<i64>,
    /// (block, procs) per target dimension, `None` when collapsed.
    dims: Vec<Option<(i64, i64)>>,
    proc_shape: Vec<i64>,
}

impl Layout {
    /// The processor coordinate of each distributed dimension for a target position.
    fn coords(&self, position: &[Option<i64>]) -> Vec<Option<i64>> {
        self.dims
            .iter()
            .enumerate()
            .filter_map(|(dim, it)| {
                let (block, procs) = (*it)?;
                Some(position[dim].map(|at| owner_coord(block, procs, self.lower[dim], at)))
            })
            .collect()
    }

    fn rank(&self, coords: &[i64]) -> u32 {
        let mut weight = 1i64;
        let mut rank = 0i64;
        for (coord, extent) in coords.iter().zip(&self.proc_shape) {
            rank += coord * weight;
            weight *= extent.max(&1);
        }
        rank as u32
    }

    fn owner(&self, position: &[i64]) -> u32 {
        let coords: Vec<i64> =
            self.coords(&position.iter().map(|it| Some(*it)).collect::<Vec<_>>()).into_iter().flatten().collect();
        self.rank(&coords)
    }
}

/// The layout of `target`'s distribution, or why it cannot be drawn.
fn layout(model: &Model, target: SymbolId) -> Result<(Layout, ProcessorNames), String> {
    let symbol = model.symbol(target);
    let distribution = symbol.mapping.distribution.as_ref().ok_or("the target is not distributed")?;
    if distribution.formats.is_empty() || distribution.descriptive {
        return Err("the distribution is only known from the actual argument".into());
    }
    let n_distributed = distribution.formats.iter().filter(|it| **it != Format::Collapsed).count();
    let procs = ProcessorNames::of_target(model, target).ok_or("the target is not distributed")?;
    let counts = model.processor_counts(distribution);
    if counts.len() != n_distributed {
        return Err("the processor arrangement does not match the distribution".into());
    }
    let mut res = Layout { lower: Vec::new(), extent: Vec::new(), dims: Vec::new(), proc_shape: Vec::new() };
    let mut proc_dim = 0;
    for (dim, format) in distribution.formats.iter().enumerate() {
        let shape = symbol.shape.get(dim).ok_or("the distribution does not match the target's rank")?;
        let (lower, extent) = (shape.lo.known(), shape.extent());
        let (Some(lower), Some(extent)) = (lower, extent) else {
            return Err("the target's bounds are not known".into());
        };
        res.lower.push(lower);
        res.extent.push(extent);
        if *format == Format::Collapsed {
            res.dims.push(None);
            continue;
        }
        let procs = counts[proc_dim].ok_or("the number of processors is not known (set it with --processors)")?;
        proc_dim += 1;
        let block = match *format {
            Format::Block => crate::model::block_size(extent, procs),
            Format::BlockOf(Some(m)) | Format::Cyclic(Some(m)) => m.max(1),
            _ => return Err(format!("{} distributions are not drawn", format.render())),
        };
        res.dims.push(Some((block, procs)));
        res.proc_shape.push(procs.max(1));
    }
    Ok((res, procs))
}

/// The loop a line of the file shows: the innermost loop whose header is
/// on the 0-based `line`, else the innermost loop containing it.
pub fn loop_at_line(analysis: &FileAnalysis, text: &str, line: usize) -> Option<usize> {
    let index = syntax::LineIndex::new(text);
    let on_header = |report: &LoopReport| {
        index.line_of(report.header.start) <= line && line <= index.line_of(report.header.end.saturating_sub(1))
    };
    let contains = |report: &LoopReport| {
        index.line_of(report.range.start) <= line && line <= index.line_of(report.range.end.saturating_sub(1))
    };
    let pick = |filter: &dyn Fn(&LoopReport) -> bool| {
        analysis
            .loops
            .iter()
            .enumerate()
            .filter(|(_, it)| filter(it))
            .min_by_key(|(_, it)| it.range.len())
            .map(|(idx, _)| idx)
    };
    let picked = pick(&on_header).or_else(|| pick(&contains))?;
    // The header of an outer loop of a nest (`DO J` around `DO I`): show the nest, whose home is complete.
    let complete =
        |report: &LoopReport| report.home.as_ref().is_some_and(|home| home.triple.iter().all(Option::is_some));
    if complete(&analysis.loops[picked]) {
        return Some(picked);
    }
    let outer = analysis.loops[picked].range;
    analysis
        .loops
        .iter()
        .enumerate()
        .filter(|(idx, it)| *idx != picked && outer.contains_range(it.range) && complete(it))
        .min_by_key(|(_, it)| it.range.start)
        .map(|(idx, _)| idx)
        .or(Some(picked))
}

/// The picture of loop `loop_idx` of the analysis.
pub fn loop_picture(analysis: &FileAnalysis, text: &str, loop_idx: usize) -> LoopPicture {
    let report = &analysis.loops[loop_idx];
    let model = &*analysis.model_of_loop(report);
    let line = syntax::LineIndex::new(text).line_of(report.header.start) + 1;
    let header = text.get(report.header.to_range()).unwrap_or("").lines().next().unwrap_or("").trim();
    let mut res = LoopPicture {
        title: format!("{} (line {line})", header),
        home: String::new(),
        target: String::new(),
        procs: ProcessorNames { name: String::new(), dims: Vec::new() },
        proc_shape: Vec::new(),
        grid: Grid::None,
        messages: Vec::new(),
        accesses: Vec::new(),
        notes: Vec::new(),
        ownership: Vec::new(),
    };
    if let Some(why) = report.gave_up.as_ref().or(report.no_home.as_ref()) {
        res.home = format!("not analysed: {why}");
        return res;
    }
    let Some(home) = &report.home else {
        res.home = "no home: the loop updates no distributed array".into();
        return res;
    };
    let home_text = text.get(home.range.to_range()).unwrap_or("?");
    let triples: Vec<String> = home.triple.iter().map(|it| it.map_or("[?]".into(), Triple::render)).collect();
    res.home = format!("iterations run where {home_text} lives, loop triple {}", triples.join(" x "));
    let Some(resolved) = model.resolve(home.array) else {
        res.notes.push("an ALIGN chain has a cycle".into());
        return res;
    };
    let target = resolved.target;
    let formats = model
        .symbol(target)
        .mapping
        .distribution
        .as_ref()
        .map(|it| it.formats.iter().map(|f| f.render()).collect::<Vec<_>>().join(","));
    let shape = crate::render::render_shape(model, target);
    let layout = match layout(model, target) {
        Ok((layout, procs)) => {
            res.target = format!(
                "target {shape} distributed ({}) onto {}({})",
                formats.unwrap_or_default(),
                procs.name,
                layout.proc_shape.iter().map(|it| it.to_string()).collect::<Vec<_>>().join(",")
            );
            res.procs = procs;
            res.proc_shape = layout.proc_shape.clone();
            Some(layout)
        }
        Err(why) => {
            res.target = format!("target {shape}");
            res.notes.push(format!("no ownership drawn: {why}"));
            None
        }
    };
    for access in &report.accesses {
        let name = &model.symbol(access.array).name.text;
        let written = text.get(access.range.to_range()).unwrap_or(name);
        let render = |it: &Vec<Option<Triple>>| {
            it.iter().map(|t| t.map_or("[?]".into(), Triple::render)).collect::<Vec<_>>().join(" x ")
        };
        let role = if access.is_home {
            "home"
        } else {
            match access.attr {
                AccessAttr::Reference => "read",
                AccessAttr::Update => "written",
            }
        };
        let mut line = format!("{written} ({role}): declared {}", render(&access.declared));
        match (&access.optimal, &access.reason) {
            (_, Some(reason)) => {
                let _ = write!(line, ", no optimal triple ({})", reason.kind());
            }
            (Some(optimal), None) => {
                let _ = write!(line, ", optimal {}", render(optimal));
            }
            (None, None) => {}
        }
        match &access.transfer {
            None => line.push_str(", local"),
            Some(transfer) => match (&transfer.count, &transfer.uncounted) {
                (Some(count), _) => {
                    let _ = write!(
                        line,
                        ", {}: {} element(s) in {} message(s) {}",
                        transfer.kind.describe(),
                        count.moved_elements,
                        count.messages.len(),
                        match transfer.when {
                            When::Before => "before the loop",
                            When::After => "after the loop",
                        }
                    );
                }
                (None, Some(why)) => {
                    let _ = write!(line, ", {} (not counted: {why})", transfer.kind.describe());
                }
                (None, None) => {}
            },
        }
        res.accesses.push(line);
    }
    let Some(layout) = layout else {
        for (access, transfer) in report.accesses.iter().filter_map(|a| Some((a, a.transfer.as_ref()?))) {
            for message in transfer.count.iter().flat_map(|it| &it.messages) {
                res.messages.push(Arrow {
                    from: message.from,
                    to: message.to,
                    array: model.symbol(access.array).name.text.clone(),
                    when: transfer.when,
                    elements: message.elements,
                    names: Vec::new(),
                    anchor: None,
                });
            }
        }
        return res;
    };
    let enumerated = enumerate_messages(model, report, &layout, target);
    if enumerated.is_none() {
        res.notes.push("the elements of each message are not named: the nest is too large or not affine".into());
    }
    for (access_idx, access) in report.accesses.iter().enumerate() {
        let Some(transfer) = &access.transfer else { continue };
        for message in transfer.count.iter().flat_map(|it| &it.messages) {
            let detail = enumerated.as_ref().and_then(|it| it.get(&(access_idx, message.from, message.to)));
            let names = detail.map(|it| it.names.iter().take(MAX_NAMED).cloned().collect()).unwrap_or_default();
            res.messages.push(Arrow {
                from: message.from,
                to: message.to,
                array: model.symbol(access.array).name.text.clone(),
                when: transfer.when,
                elements: message.elements,
                names,
                anchor: None,
            });
        }
    }
    match layout.lower.len() {
        1 if layout.extent[0] <= MAX_CELLS_1D => {
            res.grid = Grid::Line(line_grid(model, report, &layout, target, &mut res.messages, enumerated.as_ref()));
        }
        2 if layout.extent.iter().all(|it| *it <= MAX_CELLS_2D) => {
            res.grid = Grid::Plane(plane_grid(report, &layout, enumerated.as_ref()));
        }
        1 | 2 => res.notes.push(format!(
            "the target is too large to draw cell by cell ({} positions)",
            layout.extent.iter().map(|it| it.to_string()).collect::<Vec<_>>().join(" x ")
        )),
        _ => res.notes.push("targets of rank 3 or more are not drawn cell by cell".into()),
    }
    if res.grid == Grid::None {
        res.ownership = ownership(&layout, &res.procs);
    }
    res
}

/// Who owns what along each distributed dimension, in words (for targets not drawn cell by cell).
fn ownership(layout: &Layout, procs_names: &ProcessorNames) -> Vec<String> {
    const LISTED: i64 = 8;
    let mut res = Vec::new();
    let mut proc_dim = 0;
    for (dim, it) in layout.dims.iter().enumerate() {
        let Some((block, procs)) = *it else { continue };
        let name = |coord: i64| procs_names.of_coordinate(proc_dim, coord);
        let (lower, extent) = (layout.lower[dim], layout.extent[dim]);
        let upper = lower + extent - 1;
        if block * procs >= extent {
            let ranges: Vec<String> = (0..procs.min(LISTED))
                .filter(|c| lower + c * block <= upper)
                .map(|c| format!("{}: {}..{}", name(c), lower + c * block, (lower + (c + 1) * block - 1).min(upper)))
                .collect();
            let more = if procs > LISTED { ", ..." } else { "" };
            res.push(format!("dimension {}: blocks of {block}, {}{more}", dim + 1, ranges.join(", ")));
        } else {
            res.push(format!(
                "dimension {}: blocks of {block} dealt round-robin to {}..{}, the c-th of them owns {lower}+(c-1)*{block} onwards, every {} positions",
                dim + 1,
                name(0),
                name(procs - 1),
                block * procs
            ));
        }
        proc_dim += 1;
    }
    res
}

/// What the enumeration found about one message: the elements it carries
/// (in subscript order) and, per element, a target position where it is used.
#[derive(Clone, Debug, Default)]
struct MessageDetail {
    names: Vec<String>,
    /// The first element: its subscripts, its declared target position, the position of an iteration that uses it.
    first: Option<(Vec<i64>, Vec<i64>, Vec<i64>)>,
    declared_positions: BTreeSet<Vec<i64>>,
    home_positions: BTreeSet<Vec<i64>>,
}

/// Iteration positions of the home and, per (access, from, to), the elements that travel.
type Enumerated = BTreeMap<(usize, u32, u32), MessageDetail>;

/// The value of each subscript of an access in the iteration `values` (one per nest index).
fn subscripts(forms: &[SubscriptForm], values: &[i64]) -> Option<Vec<i64>> {
    forms
        .iter()
        .map(|form| match *form {
            SubscriptForm::Affine { index, coef, offset } => Some(coef * values.get(index)? + offset),
            SubscriptForm::Constant(value) => Some(value),
            _ => None,
        })
        .collect()
}

/// The target position of an element (`None` per replicated dimension).
fn position(axes: &[Axis], element: &[i64]) -> Option<Vec<Option<i64>>> {
    axes.iter()
        .map(|axis| match *axis {
            Axis::Affine { source_dim, stride, offset } => Some(Some(stride * element.get(source_dim)? + offset)),
            Axis::Constant(value) => Some(Some(value)),
            Axis::Replicated => Some(None),
            Axis::Unknown => None,
        })
        .collect()
}

/// Every iteration value tuple of the nest, when the nest is small and known.
fn iterations(report: &LoopReport) -> Option<Vec<Vec<i64>>> {
    let mut total: u64 = 1;
    for index in &report.nest {
        total = total.checked_mul(index.trips()?)?;
    }
    if total > MAX_ENUMERATED {
        return None;
    }
    let mut res = vec![Vec::new()];
    for index in &report.nest {
        let (lo, step, trips) = (index.lo?, index.step?, index.trips()? as i64);
        res = res
            .into_iter()
            .flat_map(|prefix| {
                (0..trips).map(move |k| {
                    let mut next = prefix.clone();
                    next.push(lo + k * step);
                    next
                })
            })
            .collect();
    }
    Some(res)
}

fn enumerate_messages(model: &Model, report: &LoopReport, layout: &Layout, target: SymbolId) -> Option<Enumerated> {
    let home = report.home.as_ref()?;
    let home_axes = model.resolve(home.array)?.axes;
    let all = iterations(report)?;
    let mut res: Enumerated = BTreeMap::new();
    for (access_idx, access) in report.accesses.iter().enumerate() {
        let Some(transfer) = &access.transfer else { continue };
        if transfer.count.is_none() {
            continue;
        }
        let Some(resolved) = model.resolve(access.array) else { continue };
        let same_target = resolved.target == target
            || crate::loops::equivalent_targets(model, resolved.target, target)
            || model.symbol(access.array).mapping.distribution.is_none()
                && model.symbol(resolved.target).mapping.distribution.is_none();
        if !same_target {
            continue;
        }
        let distributed = model.symbol(resolved.target).mapping.distribution.is_some();
        let name = &model.symbol(access.array).name.text;
        let mut seen: BTreeSet<(Vec<i64>, u32)> = BTreeSet::new();
        for values in &all {
            let element = subscripts(&access.subscripts, values)?;
            let home_element = subscripts(&home.subscripts, values)?;
            let home_position = position(&home_axes, &home_element)?;
            let element_position =
                if distributed { position(&resolved.axes, &element)? } else { vec![None; home_position.len()] };
            let home_coords = layout.coords(&home_position);
            let element_coords = layout.coords(&element_position);
            let (mut src, mut dst) = (Vec::new(), Vec::new());
            for (h, e) in home_coords.iter().zip(&element_coords) {
                let (here, there) = match access.attr {
                    AccessAttr::Reference => (e, h),
                    AccessAttr::Update => (h, e),
                };
                let (s, d) = match (here, there) {
                    (Some(s), Some(d)) => (*s, *d),
                    (None, Some(d)) => (*d, *d),
                    (Some(s), None) => (*s, *s),
                    (None, None) => (0, 0),
                };
                src.push(s);
                dst.push(d);
            }
            let (from, to) = (layout.rank(&src), layout.rank(&dst));
            if from == to {
                continue;
            }
            let to_receive = if transfer.when == When::Before { to } else { from };
            if !seen.insert((element.clone(), to_receive)) {
                continue;
            }
            let detail = res.entry((access_idx, from, to)).or_default();
            let rendered: Vec<String> = element.iter().map(|it| it.to_string()).collect();
            detail.names.push(format!("{name}({})", rendered.join(",")));
            let declared: Vec<i64> = element_position.iter().map(|it| it.unwrap_or(0)).collect();
            let at_home: Vec<i64> = home_position.iter().map(|it| it.unwrap_or(0)).collect();
            detail.first.get_or_insert((element.clone(), declared.clone(), at_home.clone()));
            if distributed {
                detail.declared_positions.insert(declared);
            }
            detail.home_positions.insert(at_home);
        }
    }
    Some(res)
}

fn line_grid(
    model: &Model,
    report: &LoopReport,
    layout: &Layout,
    target: SymbolId,
    messages: &mut [Arrow],
    enumerated: Option<&Enumerated>,
) -> LineGrid {
    let lower = layout.lower[0];
    let n = layout.extent[0] as usize;
    let owners: Vec<u32> = (0..n as i64).map(|k| layout.owner(&[lower + k])).collect();
    let mut rows: Vec<Row> = Vec::new();
    let place = |triple: Option<Triple>, first_label: i64, label_step: i64| -> Vec<Option<i64>> {
        let mut cells = vec![None; n];
        let Some(triple) = triple else { return cells };
        if triple.stride == 0 {
            return cells;
        }
        let count = (triple.hi - triple.lo) / triple.stride + 1;
        for k in 0..count.max(0) {
            let at = triple.lo + k * triple.stride - lower;
            if (0..n as i64).contains(&at) {
                cells[at as usize] = Some(first_label + k * label_step);
            }
        }
        cells
    };
    if let Some(home) = &report.home {
        // The iterations, labelled with the value of the index that drives the home.
        // A home borrowed from an inner loop may use indices of that loop's nest.
        let driving = match home.subscripts.first() {
            Some(SubscriptForm::Affine { index, .. }) => report.nest.get(*index),
            _ => None,
        };
        let (first, step, var) = match driving {
            Some(nest) => (
                nest.lo.unwrap_or(0),
                nest.step.unwrap_or(1),
                nest.var.as_ref().map_or("index".to_string(), |it| it.text.clone()),
            ),
            _ => (0, 1, "index".into()),
        };
        rows.push(Row {
            label: format!("iterations ({var})"),
            kind: RowKind::Iterations,
            subject: var,
            cells: place(home.triple.first().copied().flatten(), first, step),
        });
    }
    let mut drawn: Vec<SymbolId> = Vec::new();
    let mut access_rows: BTreeMap<usize, (usize, Option<usize>)> = BTreeMap::new();
    for (access_idx, access) in report.accesses.iter().enumerate() {
        let symbol = model.symbol(access.array);
        let same = model.resolve(access.array).is_some_and(|it| it.target == target);
        if symbol.rank() != 1 || !same {
            continue;
        }
        let lower_bound = symbol.shape[0].lo.known().unwrap_or(1);
        let name = symbol.name.text.clone();
        let declared_row = match drawn.iter().position(|it| *it == access.array) {
            Some(_) => rows.iter().position(|it| it.kind == RowKind::Declared && it.subject == name),
            None => {
                drawn.push(access.array);
                let triple = access.declared.first().copied().flatten();
                rows.push(Row {
                    label: format!("{name} declared {}", triple.map_or("[?]".into(), Triple::render)),
                    kind: RowKind::Declared,
                    subject: name.clone(),
                    cells: place(triple, lower_bound, 1),
                });
                Some(rows.len() - 1)
            }
        };
        let mut optimal_row = None;
        if let Some(optimal) = access.optimal.as_ref().and_then(|it| it.first().copied().flatten()) {
            if access.reason.is_none() && Some(optimal) != access.declared.first().copied().flatten() {
                let label = format!("{name} optimal {}", optimal.render());
                optimal_row = rows.iter().position(|it| it.label == label).or_else(|| {
                    rows.push(Row {
                        label,
                        kind: RowKind::Optimal,
                        subject: name.clone(),
                        cells: place(Some(optimal), lower_bound, 1),
                    });
                    Some(rows.len() - 1)
                });
            }
        }
        if let Some(declared_row) = declared_row {
            access_rows.insert(access_idx, (declared_row, optimal_row));
        }
    }
    // Anchor each arrow at the first element it carries: from where it lives to where it is used.
    if let Some(enumerated) = enumerated {
        let mut arrow = 0;
        for (access_idx, access) in report.accesses.iter().enumerate() {
            let Some(transfer) = &access.transfer else { continue };
            for message in transfer.count.iter().flat_map(|it| &it.messages) {
                let anchor = (|| {
                    let detail = enumerated.get(&(access_idx, message.from, message.to))?;
                    let (element, declared, at_home) = detail.first.as_ref()?;
                    let &(declared_row, optimal_row) = access_rows.get(&access_idx)?;
                    let cell = |at: i64| usize::try_from(at - lower).ok().filter(|it| *it < n);
                    let stored = (declared_row, cell(declared[0])?);
                    // Where the optimal alignment would keep the element, else the iteration that uses it.
                    let optimal = access.optimal.as_ref().and_then(|it| it.first().copied().flatten());
                    let lower_bound = model.symbol(access.array).shape.first().and_then(|it| it.lo.known());
                    let used = match (optimal_row, optimal, lower_bound) {
                        (Some(row), Some(optimal), Some(lb)) => {
                            (row, cell(optimal.lo + (element[0] - lb) * optimal.stride)?)
                        }
                        _ => (0, cell(at_home[0])?),
                    };
                    Some(match transfer.when {
                        When::Before => (stored, used),
                        When::After => (used, stored),
                    })
                })();
                if let Some(slot) = messages.get_mut(arrow) {
                    slot.anchor = anchor;
                }
                arrow += 1;
            }
        }
    }
    LineGrid { lower, owners, rows }
}

fn plane_grid(report: &LoopReport, layout: &Layout, enumerated: Option<&Enumerated>) -> PlaneGrid {
    let lower = [layout.lower[0], layout.lower[1]];
    let extent = [layout.extent[0] as usize, layout.extent[1] as usize];
    let size = extent[0] * extent[1];
    let mut owners = Vec::with_capacity(size);
    for r in 0..extent[0] as i64 {
        for c in 0..extent[1] as i64 {
            owners.push(layout.owner(&[lower[0] + r, lower[1] + c]));
        }
    }
    let mut iterations = vec![false; size];
    let mut moved = vec![false; size];
    let cell = |at: &[i64]| -> Option<usize> {
        let r = usize::try_from(at.first()? - lower[0]).ok().filter(|it| *it < extent[0])?;
        let c = usize::try_from(at.get(1)? - lower[1]).ok().filter(|it| *it < extent[1])?;
        Some(r * extent[1] + c)
    };
    if let Some(enumerated) = enumerated {
        for detail in enumerated.values() {
            for at in &detail.declared_positions {
                if let Some(idx) = cell(at) {
                    moved[idx] = true;
                }
            }
        }
    }
    if let Some(home) = &report.home {
        if let [Some(rows), Some(cols)] = home.triple.as_slice() {
            let steps = |t: &Triple| {
                if t.stride == 0 {
                    vec![t.lo]
                } else {
                    (0..=((t.hi - t.lo) / t.stride).max(0)).map(|k| t.lo + k * t.stride).collect::<Vec<_>>()
                }
            };
            for r in steps(rows) {
                for c in steps(cols) {
                    if let Some(idx) = cell(&[r, c]) {
                        iterations[idx] = true;
                    }
                }
            }
        }
    }
    PlaneGrid { lower, extent, owners, iterations, moved }
}

fn plural(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn arrow_line(picture: &LoopPicture, arrow: &Arrow) -> String {
    let mut res = format!(
        "{} -> {}  {}: {}",
        picture.procs.of_rank(arrow.from),
        picture.procs.of_rank(arrow.to),
        arrow.array,
        plural(arrow.elements, "element")
    );
    if !arrow.names.is_empty() {
        let more = if (arrow.names.len() as u64) < arrow.elements { ", ..." } else { "" };
        let _ = write!(res, " ({}{more})", arrow.names.join(", "));
    }
    res
}

fn totals(picture: &LoopPicture) -> String {
    let elements: u64 = picture.messages.iter().map(|it| it.elements).sum();
    format!("total: {} in {}", plural(elements, "element"), plural(picture.messages.len() as u64, "message"))
}

/// The picture as text for a terminal.
pub fn render_text(picture: &LoopPicture) -> String {
    let mut res = String::new();
    let _ = writeln!(res, "{}", picture.title);
    let _ = writeln!(res, "{}", picture.home);
    if !picture.target.is_empty() {
        let _ = writeln!(res, "{}", picture.target);
    }
    match &picture.grid {
        Grid::Line(grid) => {
            res.push('\n');
            res.push_str(&line_text(grid, &picture.procs, true));
        }
        Grid::Plane(grid) => {
            res.push('\n');
            res.push_str(&plane_text(picture, grid));
        }
        Grid::None => {
            if !picture.ownership.is_empty() {
                res.push('\n');
            }
            for line in &picture.ownership {
                let _ = writeln!(res, "{line}");
            }
        }
    }
    if !picture.accesses.is_empty() {
        res.push_str("\naccesses:\n");
        for line in &picture.accesses {
            let _ = writeln!(res, "  {line}");
        }
    }
    let before: Vec<&Arrow> = picture.messages.iter().filter(|it| it.when == When::Before).collect();
    let after: Vec<&Arrow> = picture.messages.iter().filter(|it| it.when == When::After).collect();
    for (arrows, when) in [(before, "before the loop"), (after, "after the loop")] {
        if arrows.is_empty() {
            continue;
        }
        let _ = writeln!(res, "\nmessages {when}:");
        for arrow in arrows {
            let _ = writeln!(res, "  {}", arrow_line(picture, arrow));
        }
    }
    if picture.home.starts_with("iterations") {
        let _ = writeln!(res, "\n{}", totals(picture));
    }
    for note in &picture.notes {
        let _ = writeln!(res, "note: {note}");
    }
    res
}

/// The cell rows of a line grid; `|` separates cells of different owners.
fn line_text(grid: &LineGrid, procs: &ProcessorNames, with_legend: bool) -> String {
    let n = grid.owners.len();
    let mut width = (grid.lower + n as i64 - 1).to_string().len().max(grid.lower.to_string().len());
    for row in &grid.rows {
        for value in row.cells.iter().flatten() {
            width = width.max(value.to_string().len());
        }
    }
    let label_width = grid.rows.iter().map(|it| it.label.len()).max().unwrap_or(0).max("position".len());
    let mut res = String::new();
    let line = |label: &str, cell: &dyn Fn(usize) -> String| -> String {
        let mut out = format!("{label:<label_width$} |");
        for k in 0..n {
            let separator = if k + 1 == n || grid.owners[k] != grid.owners[k + 1] { '|' } else { ' ' };
            let _ = write!(out, "{:>width$}{separator}", cell(k));
        }
        out.push('\n');
        out
    };
    res.push_str(&line("position", &|k| (grid.lower + k as i64).to_string()));
    // A line has one distributed dimension: the arrangement's own index.
    let first_index = procs.dims.first().map_or(1, |it| it.0);
    res.push_str(&line("processor", &|k| (first_index + i64::from(grid.owners[k])).to_string()));
    for row in &grid.rows {
        res.push_str(&line(&row.label, &|k| row.cells[k].map_or(".".into(), |it| it.to_string())));
    }
    if with_legend {
        res.push_str("(| separates processors; '.' nothing there)\n");
    }
    res
}

fn plane_text(picture: &LoopPicture, grid: &PlaneGrid) -> String {
    let mut res = String::new();
    let [rows, cols] = grid.extent;
    let _ = writeln!(
        res,
        "dimension 1 down ({}..{}), dimension 2 across ({}..{})",
        grid.lower[0],
        grid.lower[0] + rows as i64 - 1,
        grid.lower[1],
        grid.lower[1] + cols as i64 - 1
    );
    for r in 0..rows {
        let mut line = String::from("  ");
        for c in 0..cols {
            let idx = r * cols + c;
            let ch = if grid.moved[idx] {
                '#'
            } else if grid.iterations[idx] {
                char::from_digit((grid.owners[idx] + 1) % 36, 36).unwrap_or('?')
            } else {
                '.'
            };
            line.push(ch);
            if c + 1 < cols && grid.owners[idx] != grid.owners[idx + 1] {
                line.push('|');
            }
        }
        let _ = writeln!(res, "{}", line.trim_end());
        if r + 1 < rows && (0..cols).any(|c| grid.owners[r * cols + c] != grid.owners[(r + 1) * cols + c]) {
            let _ = writeln!(res, "  {}", "-".repeat(cols + line.matches('|').count()));
        }
    }
    let ranks: BTreeSet<u32> = grid.owners.iter().copied().collect();
    let names: Vec<String> = ranks.iter().map(|r| format!("{}={}", r + 1, picture.procs.of_rank(*r))).collect();
    let _ = writeln!(
        res,
        "(digit: the processor that runs the iteration there, {}; '#' an element that travels; '.' no iteration)",
        names.join(" ")
    );
    res
}

/// A short picture for hovers: the cell rows of small 1-D loops, else the messages.
pub fn render_compact(picture: &LoopPicture) -> String {
    let mut res = String::new();
    if let Grid::Line(grid) = &picture.grid {
        if grid.owners.len() <= 32 {
            res.push_str(&line_text(grid, &picture.procs, false));
        }
    }
    for arrow in &picture.messages {
        let _ = writeln!(res, "{}", arrow_line(picture, arrow));
    }
    if picture.home.starts_with("iterations") && !picture.target.is_empty() {
        let _ = writeln!(res, "{}", totals(picture));
    }
    res
}

/// Fill colours per processor (light, so that black text stays readable) and their strokes.
const PALETTE: &[(&str, &str)] = &[
    ("#cfe2ff", "#2b6cb0"),
    ("#ffd8b5", "#c05621"),
    ("#c6f0c2", "#2f855a"),
    ("#f5c6d6", "#b83280"),
    ("#e2d4f7", "#6b46c1"),
    ("#fff3b0", "#b7791f"),
    ("#c4f1f9", "#0987a0"),
    ("#e2e8f0", "#4a5568"),
];

fn fill(rank: u32) -> &'static str {
    PALETTE[rank as usize % PALETTE.len()].0
}

fn stroke(rank: u32) -> &'static str {
    PALETTE[rank as usize % PALETTE.len()].1
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

const FONT: &str = "font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\"";

/// The picture as a standalone SVG document (text as text, a legend, one `<g class="message">` per message).
pub fn render_svg(picture: &LoopPicture) -> String {
    let mut body = String::new();
    let mut y = 28.0;
    let mut width: f64 = 640.0;
    let heading = |body: &mut String, y: &mut f64, text: &str, size: u32, weight: &str| {
        let _ = writeln!(
            body,
            "<text x=\"16\" y=\"{y}\" font-size=\"{size}\" font-weight=\"{weight}\" {FONT}>{}</text>",
            escape(text)
        );
        *y += f64::from(size) + 8.0;
    };
    heading(&mut body, &mut y, &picture.title, 16, "bold");
    heading(&mut body, &mut y, &picture.home, 13, "normal");
    if !picture.target.is_empty() {
        heading(&mut body, &mut y, &picture.target, 13, "normal");
    }
    y += 8.0;
    match &picture.grid {
        Grid::Line(grid) => {
            let (w, h) = line_svg(picture, grid, y, &mut body);
            width = width.max(w);
            y = h;
        }
        Grid::Plane(grid) => {
            let (w, h) = plane_svg(picture, grid, y, &mut body);
            width = width.max(w);
            y = h;
        }
        Grid::None => {
            for line in &picture.ownership {
                let _ = writeln!(body, "<text x=\"16\" y=\"{y}\" font-size=\"13\" {FONT}>{}</text>", escape(line));
                width = width.max(32.0 + 8.0 * line.chars().count() as f64);
                y += 20.0;
            }
            for arrow in &picture.messages {
                let _ = writeln!(
                    body,
                    "<g class=\"message\" data-from=\"{}\" data-to=\"{}\" data-elements=\"{}\"><text x=\"16\" y=\"{y}\" font-size=\"13\" {FONT}>{}</text></g>",
                    arrow.from + 1,
                    arrow.to + 1,
                    arrow.elements,
                    escape(&arrow_line(picture, arrow))
                );
                width = width.max(32.0 + 8.0 * arrow_line(picture, arrow).chars().count() as f64);
                y += 20.0;
            }
        }
    }
    // Legend: one swatch per processor, then the accesses and totals.
    y += 22.0;
    let ranks: u32 = picture.proc_shape.iter().product::<i64>().clamp(0, 64) as u32;
    let mut x = 16.0;
    if ranks > 0 && !matches!(picture.grid, Grid::None) {
        let _ = writeln!(body, "<g class=\"legend\">");
        for rank in 0..ranks {
            let label = picture.procs.of_rank(rank);
            let _ = writeln!(
                body,
                "<rect x=\"{x}\" y=\"{}\" width=\"14\" height=\"14\" fill=\"{}\" stroke=\"{}\"/><text x=\"{}\" y=\"{}\" font-size=\"12\" {FONT}>{}</text>",
                y - 11.0,
                fill(rank),
                stroke(rank),
                x + 20.0,
                y,
                escape(&label)
            );
            x += 30.0 + 8.0 * label.len() as f64;
            if x > width - 100.0 {
                x = 16.0;
                y += 20.0;
            }
        }
        if let Grid::Plane(_) = picture.grid {
            let _ = writeln!(
                body,
                "<rect x=\"{x}\" y=\"{}\" width=\"14\" height=\"14\" fill=\"url(#halo)\" stroke=\"#222\"/><text x=\"{}\" y=\"{y}\" font-size=\"12\" {FONT}>element that travels (halo)</text>",
                y - 11.0,
                x + 20.0
            );
        }
        let _ = writeln!(body, "</g>");
        y += 24.0;
    }
    for line in picture.accesses.iter().chain(&picture.notes) {
        let _ = writeln!(body, "<text x=\"16\" y=\"{y}\" font-size=\"12\" {FONT}>{}</text>", escape(line));
        width = width.max(32.0 + 7.3 * line.chars().count() as f64);
        y += 18.0;
    }
    if picture.home.starts_with("iterations") {
        let _ = writeln!(
            body,
            "<text x=\"16\" y=\"{y}\" font-size=\"13\" font-weight=\"bold\" {FONT}>{}</text>",
            escape(&totals(picture))
        );
        y += 18.0;
    }
    let height = y + 12.0;
    let width = width.ceil();
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\">\n\
         <defs>\n\
         <marker id=\"arrowhead\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#c53030\"/></marker>\n\
         <pattern id=\"halo\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\"><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#4a5568\" stroke-width=\"1.6\" stroke-opacity=\"0.7\"/></pattern>\n\
         </defs>\n\
         <rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n{body}</svg>\n"
    )
}

/// Draws a line grid from `top`; returns the width used and the next free y.
fn line_svg(picture: &LoopPicture, grid: &LineGrid, top: f64, body: &mut String) -> (f64, f64) {
    let n = grid.owners.len();
    let mut digits = (grid.lower + n as i64 - 1).to_string().len().max(grid.lower.to_string().len());
    for value in grid.rows.iter().flat_map(|it| it.cells.iter().flatten()) {
        digits = digits.max(value.to_string().len());
    }
    let cell_w = (12.0 + 8.0 * digits as f64).max(26.0);
    let cell_h = 24.0;
    let row_gap = 40.0;
    let label_w = 16.0 + 8.0 * grid.rows.iter().map(|it| it.label.len()).max().unwrap_or(10).max(10) as f64;
    let x0 = label_w + 8.0;
    let cell_x = |k: usize| x0 + k as f64 * cell_w;
    // Processor bands above the cells.
    let band_y = top;
    let mut k = 0;
    while k < n {
        let mut end = k;
        while end + 1 < n && grid.owners[end + 1] == grid.owners[k] {
            end += 1;
        }
        let rank = grid.owners[k];
        let _ = writeln!(
            body,
            "<g class=\"band\" data-proc=\"{}\"><rect x=\"{}\" y=\"{band_y}\" width=\"{}\" height=\"20\" fill=\"{}\" stroke=\"{}\"/><text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\" {FONT}>{}</text></g>",
            rank + 1,
            cell_x(k),
            (end - k + 1) as f64 * cell_w,
            stroke(rank),
            stroke(rank),
            cell_x(k) + (end - k + 1) as f64 * cell_w / 2.0,
            band_y + 14.0,
            if (end - k + 1) as f64 * cell_w >= 44.0 {
                escape(&picture.procs.of_rank(rank))
            } else {
                (rank + 1).to_string()
            }
        );
        k = end + 1;
    }
    let _ = writeln!(body, "<text x=\"16\" y=\"{}\" font-size=\"12\" {FONT}>processor</text>", band_y + 14.0);
    // Target positions, then one row per iteration/declared/optimal placement.
    let row_y = |row: usize| band_y + 28.0 + row as f64 * row_gap;
    let draw_row = |body: &mut String, y: f64, label: &str, class: &str, cells: &dyn Fn(usize) -> Option<String>| {
        let _ = writeln!(
            body,
            "<text x=\"16\" y=\"{}\" font-size=\"12\" {FONT}>{}</text>",
            y + cell_h / 2.0 + 4.0,
            escape(label)
        );
        for k in 0..n {
            let Some(text) = cells(k) else { continue };
            let rank = grid.owners[k];
            let _ = writeln!(
                body,
                "<g class=\"{class}\" data-proc=\"{}\"><rect x=\"{}\" y=\"{y}\" width=\"{cell_w}\" height=\"{cell_h}\" fill=\"{}\" stroke=\"{}\"/><text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\" {FONT}>{}</text></g>",
                rank + 1,
                cell_x(k),
                fill(rank),
                stroke(rank),
                cell_x(k) + cell_w / 2.0,
                y + cell_h / 2.0 + 4.0,
                escape(&text)
            );
        }
    };
    draw_row(
        body,
        row_y(0),
        &format!("target {}", picture.target.split_whitespace().nth(1).unwrap_or("")),
        "cell",
        &|k| Some((grid.lower + k as i64).to_string()),
    );
    for (idx, row) in grid.rows.iter().enumerate() {
        let class = match row.kind {
            RowKind::Iterations => "iteration",
            RowKind::Declared => "declared",
            RowKind::Optimal => "optimal",
        };
        draw_row(body, row_y(idx + 1), &row.label, class, &|k| row.cells[k].map(|it| it.to_string()));
    }
    let bottom = row_y(grid.rows.len() + 1);
    // One arrow per message: anchored at an element when known, else between processor centres.
    let centre = |rank: u32| {
        let cells: Vec<usize> = (0..n).filter(|k| grid.owners[*k] == rank).collect();
        if cells.is_empty() {
            x0
        } else {
            cells.iter().map(|k| cell_x(*k) + cell_w / 2.0).sum::<f64>() / cells.len() as f64
        }
    };
    // Labels go in lanes under the grid, each under the end of its arrow.
    let mut lanes: Vec<f64> = Vec::new();
    let mut lane_of = |x: f64, w: f64| -> usize {
        let lane = lanes.iter().position(|end| *end < x).unwrap_or(lanes.len());
        if lane == lanes.len() {
            lanes.push(0.0);
        }
        lanes[lane] = x + w + 10.0;
        lane
    };
    let mut lowest = bottom;
    for (idx, arrow) in picture.messages.iter().enumerate() {
        let label = format!(
            "{}→{} {}: {}",
            picture.procs.of_rank(arrow.from),
            picture.procs.of_rank(arrow.to),
            arrow.names.first().cloned().filter(|_| arrow.elements == 1).unwrap_or_else(|| arrow.array.clone()),
            plural(arrow.elements, "element")
        );
        let label_w = 7.3 * label.chars().count() as f64;
        let (path, end_x) = match arrow.anchor {
            Some(((from_row, from_cell), (to_row, to_cell))) => {
                // Grid rows are drawn one below the target row.
                let (ya, yb) = (row_y(from_row + 1), row_y(to_row + 1));
                let (xa, xb) = (cell_x(from_cell) + cell_w / 2.0, cell_x(to_cell) + cell_w / 2.0);
                let (ya, yb) = if ya > yb { (ya, yb + cell_h) } else { (ya + cell_h, yb) };
                let bend = (xa + xb) / 2.0;
                let mid = (ya + yb) / 2.0 + if ya > yb { 0.0 } else { 4.0 };
                (format!("M{xa},{ya} Q{bend},{mid} {xb},{yb}"), xb)
            }
            None => {
                let (xa, xb) = (centre(arrow.from), centre(arrow.to));
                let y = bottom + 4.0;
                (format!("M{xa},{} C{xa},{} {xb},{} {xb},{}", y - 16.0, y + 14.0, y + 14.0, y - 16.0), (xa + xb) / 2.0)
            }
        };
        let text_x = (end_x - label_w / 2.0).max(16.0);
        let lane = lane_of(text_x, label_w);
        let text_y = bottom + 24.0 + 18.0 * lane as f64;
        lowest = lowest.max(text_y);
        let _ = writeln!(
            body,
            "<g class=\"message\" data-index=\"{idx}\" data-from=\"{}\" data-to=\"{}\" data-elements=\"{}\"><path d=\"{path}\" fill=\"none\" stroke=\"#c53030\" stroke-width=\"2\" marker-end=\"url(#arrowhead)\"/><text x=\"{text_x}\" y=\"{text_y}\" font-size=\"12\" fill=\"#9b2c2c\" {FONT}>{}</text></g>",
            arrow.from + 1,
            arrow.to + 1,
            arrow.elements,
            escape(&label)
        );
    }
    let bottom = lowest;
    (x0 + n as f64 * cell_w + 140.0, bottom + 8.0)
}

/// Draws a plane grid from `top`; returns the width used and the next free y.
fn plane_svg(picture: &LoopPicture, grid: &PlaneGrid, top: f64, body: &mut String) -> (f64, f64) {
    let [rows, cols] = grid.extent;
    let cell = (480.0 / rows.max(cols) as f64).clamp(10.0, 28.0);
    let x0 = 56.0;
    let y0 = top + 24.0;
    // Column and row numbers every few cells.
    let every = if cell >= 20.0 { 1 } else { 4 };
    for c in 0..cols {
        if c % every == 0 || c + 1 == cols {
            let _ = writeln!(
                body,
                "<text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\" {FONT}>{}</text>",
                x0 + c as f64 * cell + cell / 2.0,
                y0 - 6.0,
                grid.lower[1] + c as i64
            );
        }
    }
    for r in 0..rows {
        if r % every == 0 || r + 1 == rows {
            let _ = writeln!(
                body,
                "<text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"end\" {FONT}>{}</text>",
                x0 - 6.0,
                y0 + r as f64 * cell + cell / 2.0 + 3.0,
                grid.lower[0] + r as i64
            );
        }
    }
    for r in 0..rows {
        for c in 0..cols {
            let idx = r * cols + c;
            let rank = grid.owners[idx];
            let (x, y) = (x0 + c as f64 * cell, y0 + r as f64 * cell);
            let class = if grid.moved[idx] { "cell halo" } else { "cell" };
            let opacity = if grid.iterations[idx] || grid.moved[idx] { "1" } else { "0.4" };
            let _ = writeln!(
                body,
                "<rect class=\"{class}\" data-proc=\"{}\" x=\"{x}\" y=\"{y}\" width=\"{cell}\" height=\"{cell}\" fill=\"{}\" fill-opacity=\"{opacity}\" stroke=\"{}\" stroke-width=\"0.5\"/>",
                rank + 1,
                fill(rank),
                stroke(rank)
            );
            if grid.moved[idx] {
                let _ = writeln!(
                    body,
                    "<rect x=\"{x}\" y=\"{y}\" width=\"{cell}\" height=\"{cell}\" fill=\"url(#halo)\" stroke=\"none\"/>"
                );
            }
        }
    }
    // Processor blocks: a thick outline around each maximal run is enough for BLOCK; draw every owner boundary.
    for r in 0..rows {
        for c in 0..cols {
            let idx = r * cols + c;
            let (x, y) = (x0 + c as f64 * cell, y0 + r as f64 * cell);
            if c + 1 < cols && grid.owners[idx] != grid.owners[idx + 1] {
                let _ = writeln!(
                    body,
                    "<line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{}\" stroke=\"#222\" stroke-width=\"2.5\"/>",
                    x + cell,
                    x + cell,
                    y + cell
                );
            }
            if r + 1 < rows && grid.owners[idx] != grid.owners[idx + cols] {
                let _ = writeln!(
                    body,
                    "<line x1=\"{x}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#222\" stroke-width=\"2.5\"/>",
                    y + cell,
                    x + cell,
                    y + cell
                );
            }
        }
    }
    let _ = writeln!(
        body,
        "<rect x=\"{x0}\" y=\"{y0}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#222\" stroke-width=\"2.5\"/>",
        cols as f64 * cell,
        rows as f64 * cell
    );
    // Processor names at the centre of what each owns, and one arrow per message between centres.
    let mut centres: BTreeMap<u32, (f64, f64, f64)> = BTreeMap::new();
    for r in 0..rows {
        for c in 0..cols {
            let entry = centres.entry(grid.owners[r * cols + c]).or_default();
            entry.0 += x0 + c as f64 * cell + cell / 2.0;
            entry.1 += y0 + r as f64 * cell + cell / 2.0;
            entry.2 += 1.0;
        }
    }
    let centre = |rank: u32| centres.get(&rank).map_or((x0, y0), |(x, y, n)| (x / n, y / n));
    for (&rank, _) in centres.iter() {
        let (x, y) = centre(rank);
        let _ = writeln!(
            body,
            "<text x=\"{x}\" y=\"{}\" font-size=\"14\" font-weight=\"bold\" text-anchor=\"middle\" fill=\"{}\" {FONT}>{}</text>",
            y - 30.0,
            stroke(rank),
            escape(&picture.procs.of_rank(rank))
        );
    }
    for (idx, arrow) in picture.messages.iter().enumerate() {
        let (xa, ya) = centre(arrow.from);
        let (xb, yb) = centre(arrow.to);
        let (dx, dy) = (xb - xa, yb - ya);
        let length = (dx * dx + dy * dy).sqrt().max(1.0);
        // Opposite messages run side by side: offset to the right of the direction of travel.
        let (nx, ny) = (-dy / length * 9.0, dx / length * 9.0);
        let shrink = 0.28;
        let (x1, y1) = (xa + dx * shrink + nx, ya + dy * shrink + ny);
        let (x2, y2) = (xb - dx * shrink + nx, yb - dy * shrink + ny);
        let label = format!("{}: {}", arrow.array, arrow.elements);
        let (lx, ly) = (x1 + dx * 0.08 + nx * 1.9, y1 + dy * 0.08 + ny * 1.9);
        let box_w = 8.0 + 7.5 * label.chars().count() as f64;
        let _ = writeln!(
            body,
            "<g class=\"message\" data-index=\"{idx}\" data-from=\"{}\" data-to=\"{}\" data-elements=\"{}\"><line x1=\"{x1}\" y1=\"{y1}\" x2=\"{x2}\" y2=\"{y2}\" stroke=\"#c53030\" stroke-width=\"2.5\" marker-end=\"url(#arrowhead)\"/><rect x=\"{}\" y=\"{}\" width=\"{box_w}\" height=\"16\" rx=\"3\" fill=\"#ffffff\" fill-opacity=\"0.9\" stroke=\"#c53030\" stroke-width=\"0.8\"/><text x=\"{lx}\" y=\"{}\" font-size=\"12\" font-weight=\"bold\" text-anchor=\"middle\" fill=\"#9b2c2c\" {FONT}>{}</text></g>",
            arrow.from + 1,
            arrow.to + 1,
            arrow.elements,
            lx - box_w / 2.0,
            ly - 8.0,
            ly + 4.0,
            escape(&label)
        );
    }
    let _ = writeln!(
        body,
        "<text x=\"{x0}\" y=\"{}\" font-size=\"12\" {FONT}>dimension 1 down, dimension 2 across; pale cells run no iteration</text>",
        y0 + rows as f64 * cell + 20.0
    );
    (x0 + cols as f64 * cell + 40.0, y0 + rows as f64 * cell + 32.0)
}

/// Everything `hpf.explainLoop` and `hpf-ls explain` show for one loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Explanation {
    /// The loop's header (what the picture is about).
    pub header: TextRange,
    pub text: String,
    pub svg: String,
    /// The what-if table of the loop, when its target's distribution is known.
    pub what_if: Option<String>,
}

/// The picture (text and SVG) and the what-if table of the loop on the line of `offset`.
pub fn explain(analysis: &FileAnalysis, text: &str, offset: usize) -> Option<Explanation> {
    let line = syntax::LineIndex::new(text).line_of(offset.min(text.len()));
    let loop_idx = loop_at_line(analysis, text, line)?;
    let picture = loop_picture(analysis, text, loop_idx);
    Some(Explanation {
        header: analysis.loops[loop_idx].header,
        text: render_text(&picture),
        svg: render_svg(&picture),
        what_if: crate::whatif::what_if_loop(analysis, loop_idx)
            .map(|table| crate::whatif::render_table(analysis, &table)),
    })
}

/// The compact picture that ends a loop's Markdown hover (empty when there is nothing to draw).
pub fn hover_picture(analysis: &FileAnalysis, text: &str, report: &LoopReport) -> String {
    let Some(loop_idx) = analysis.loops.iter().position(|it| std::ptr::eq(&**it, report)) else {
        return String::new();
    };
    if report.home.is_none() {
        return String::new();
    }
    let picture = loop_picture(analysis, text, loop_idx);
    if picture.proc_shape.is_empty() {
        return String::new();
    }
    let compact = render_compact(&picture);
    if compact.trim().is_empty() {
        return String::new();
    }
    format!("\n```text\n{compact}```\n")
}
