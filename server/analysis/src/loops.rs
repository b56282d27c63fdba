//! The alignment analysis of the seed patent, per loop: homes, access
//! ranges, optimal triples (equations (1)-(3) of DESIGN.md §2), transfer
//! patterns and their concrete messages.
//!
//! A loop is a DO, a FORALL, or an array assignment (sections, whole
//! arrays, WHERE) taken as an implicit loop nest. Owner computes: an
//! iteration runs where the element its home (the first assignment's left
//! side) lives. Every other array element the iteration touches either is
//! there already or must travel: before the loop for a reference, after it
//! for an update.

use std::collections::BTreeMap;
use std::sync::Arc;

use syntax::directive::{DirectiveBody, Independent};
use syntax::{Code, Diagnostic, Expr, ExprKind, Name, Stmt, StmtKind, Subscript, TextRange};

use crate::eval::{linear, ConstEnv, NotFoldedReason};
use crate::model::{Axis, Format, Model, SymbolId, SymbolKind, UnitId};
use crate::transfer::{count_transfer, Affine, Placement, TransferCount, TransferProblem};

/// `[l:u:s]` in target element numbers (or array element numbers for
/// access ranges).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Triple {
    pub lo: i64,
    pub hi: i64,
    pub stride: i64,
}

impl Triple {
    pub fn render(self) -> String {
        format!("[{}:{}:{}]", self.lo, self.hi, self.stride)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopKind {
    Do,
    DoWhile,
    Forall,
    /// An assignment with array sections or whole arrays (also inside WHERE).
    ArrayAssignment,
}

impl LoopKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LoopKind::Do => "do",
            LoopKind::DoWhile => "do while",
            LoopKind::Forall => "forall",
            LoopKind::ArrayAssignment => "array assignment",
        }
    }
}

/// One index of a loop nest, outermost first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NestIndex {
    /// The loop variable as written; `None` for the implicit index of a section.
    pub var: Option<Name>,
    /// Lower-case key; implicit indices get keys that are not Fortran names.
    pub key: String,
    pub lo: Option<i64>,
    pub hi: Option<i64>,
    pub step: Option<i64>,
    /// Why the bounds are unknown, when they are.
    pub unknown: Option<String>,
}

impl NestIndex {
    /// The number of iterations, when the bounds are known.
    pub fn trips(&self) -> Option<u64> {
        let (lo, hi, step) = (self.lo?, self.hi?, self.step?);
        if step == 0 {
            return None;
        }
        let count = (i128::from(hi) - i128::from(lo) + i128::from(step)) / i128::from(step);
        Some(u64::try_from(count.max(0)).unwrap_or(u64::MAX))
    }

    /// The value of the index in the last iteration.
    pub fn last(&self) -> Option<i64> {
        let trips = self.trips()?;
        if trips == 0 {
            return None;
        }
        let last = i128::from(self.lo?) + i128::from(trips - 1) * i128::from(self.step?);
        i64::try_from(last).ok()
    }
}

/// How one subscript of a reference depends on the loop nest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SubscriptForm {
    /// `coef * index + offset` for the nest index `index`.
    Affine {
        index: usize,
        coef: i64,
        offset: i64,
    },
    Constant(i64),
    /// In two or more loop indices (`A(I+J)`).
    SeveralIndices(Vec<String>),
    /// Through another array (`A(IDX(I))`).
    Indirect,
    NotAffine,
    /// Depends on a variable that is neither a loop index nor a named constant.
    Variable(String),
    /// A section or whole dimension the statement does not iterate over as a loop.
    Section,
}

/// Why an access has no optimal triple.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoOptimal {
    Broadcast {
        dim: usize,
        value: i64,
    },
    NonIntegerStride {
        dim: usize,
        loop_stride: i64,
        access_stride: i64,
    },
    OutOfBounds {
        dim: usize,
        lo: i64,
        hi: i64,
        target_lo: i64,
        target_hi: i64,
    },
    /// `offsets`: this reference's element offset per dimension from the
    /// element aligned with the iteration; `all`: every distinct offset vector seen.
    Halo {
        widths: Vec<(i64, i64)>,
        offsets: Vec<i64>,
        all: Vec<Vec<i64>>,
    },
    NotExpressible(String),
    Subscript {
        dim: usize,
        form: SubscriptForm,
    },
    NoHome(String),
    DifferentTemplate,
}

impl NoOptimal {
    pub fn kind(&self) -> &'static str {
        match self {
            NoOptimal::Broadcast { .. } => "broadcast",
            NoOptimal::NonIntegerStride { .. } => "non-integer stride",
            NoOptimal::OutOfBounds { .. } => "out of bounds",
            NoOptimal::Halo { .. } => "halo",
            NoOptimal::NotExpressible(_) => "not expressible",
            NoOptimal::Subscript { .. } => "subscript",
            NoOptimal::NoHome(_) => "no home",
            NoOptimal::DifferentTemplate => "different template",
        }
    }

    /// The reason in words a person can act on.
    pub fn describe(&self, array: &str) -> String {
        match self {
            NoOptimal::Broadcast { dim, value } => format!(
                "dimension {} of {array} is the constant {value} in every iteration: the element is broadcast to every processor that runs the loop; replicate it (`*` in the ALIGN) if it is read often",
                dim + 1
            ),
            NoOptimal::NonIntegerStride { dim, loop_stride, access_stride } => {
                // On a template where the home's stride is `home` times and the array's
                // `own` times today's, both advance alike: `home * loop_stride == own * access_stride`.
                let divisor = gcd(loop_stride.unsigned_abs(), access_stride.unsigned_abs()).max(1);
                let (home, own) = (access_stride.unsigned_abs() / divisor, loop_stride.unsigned_abs() / divisor);
                format!(
                    "dimension {} of {array} advances by {access_stride} per iteration while the loop's home advances by {loop_stride} target element(s): the ratio is not an integer, so no alignment of {array} keeps it local; on a template with a finer stride one does (the home's stride {home} times, {array}'s {own} times what they are now)",
                    dim + 1
                )
            }
            NoOptimal::OutOfBounds { dim, lo, hi, target_lo, target_hi } => format!(
                "the optimal alignment of dimension {} of {array} spans {lo}..{hi}, outside the target's bounds {target_lo}..{target_hi}: the template must grow to hold it",
                dim + 1
            ),
            NoOptimal::Halo { widths, all, .. } => {
                let shadow: Vec<String> = widths.iter().map(|(lo, hi)| format!("{lo}:{hi}")).collect();
                let render = |offsets: &Vec<i64>| {
                    let parts: Vec<String> = offsets.iter().map(|it| format!("{it:+}")).collect();
                    if parts.len() == 1 {
                        parts[0].clone()
                    } else {
                        format!("({})", parts.join(","))
                    }
                };
                let offsets: Vec<String> = all.iter().map(render).collect();
                format!(
                    "{array} is read at several offsets ({}) from the element aligned with each iteration: a halo; no single ALIGN makes them all local, a SHADOW {array}({}) does",
                    offsets.join(", "),
                    shadow.join(",")
                )
            }
            NoOptimal::NotExpressible(why) => why.clone(),
            NoOptimal::Subscript { dim, form } => {
                let what = match form {
                    SubscriptForm::SeveralIndices(vars) => {
                        format!("uses several loop indices ({})", vars.join(", "))
                    }
                    SubscriptForm::Indirect => "is indirect (an array element)".to_string(),
                    SubscriptForm::NotAffine => "is not affine in a loop index".to_string(),
                    SubscriptForm::Variable(name) => {
                        format!("depends on `{name}`, which is neither a loop index nor a named constant")
                    }
                    SubscriptForm::Section => "is a section the loop does not iterate over".to_string(),
                    SubscriptForm::Affine { .. } | SubscriptForm::Constant(_) => "cannot be analysed".to_string(),
                };
                format!("the subscript of dimension {} of {array} {what}", dim + 1)
            }
            NoOptimal::NoHome(why) => why.clone(),
            NoOptimal::DifferentTemplate => {
                format!("{array} is aligned with a different template than the loop's home")
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessAttr {
    Reference,
    Update,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// A reference: its elements come to the iterations before the loop.
    Before,
    /// An update: its elements go home after the loop.
    After,
}

/// The abstract pattern of a transfer, whatever the distribution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TransferKind {
    /// By `d` target elements, per dimension of the array.
    Shift(Vec<i64>),
    StrideChange,
    Reversal,
    Broadcast,
    Halo(Vec<(i64, i64)>),
    Transpose,
    /// Anything else (different templates, indirect subscripts, ...).
    General,
}

impl TransferKind {
    pub fn as_str(&self) -> &'static str {
        match self {
            TransferKind::Shift(_) => "shift",
            TransferKind::StrideChange => "stride change",
            TransferKind::Reversal => "reversal",
            TransferKind::Broadcast => "broadcast",
            TransferKind::Halo(_) => "halo",
            TransferKind::Transpose => "transpose",
            TransferKind::General => "general remap",
        }
    }

    pub fn describe(&self) -> String {
        match self {
            TransferKind::Shift(shifts) => {
                let parts: Vec<String> = shifts.iter().map(|it| format!("{it:+}")).collect();
                format!("shift by {}", parts.join(","))
            }
            TransferKind::Halo(widths) => {
                let parts: Vec<String> = widths.iter().map(|(lo, hi)| format!("{lo}:{hi}")).collect();
                format!("halo of width {}", parts.join(","))
            }
            other => other.as_str().to_string(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub when: When,
    pub kind: TransferKind,
    /// The elements and messages, when the distribution is known.
    pub count: Option<TransferCount>,
    /// Why there is no count, when there is none.
    pub uncounted: Option<String>,
}

/// The alignment an access would need: per dimension of the array, the
/// target dimension, stride and offset (`X(i) <-> T(stride*i + offset)`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptimalAlignment {
    pub target: SymbolId,
    /// Per dimension of the array: the target dimension, stride and offset
    /// it follows, or `None` when it is best collapsed (a constant subscript
    /// in a dimension its own mapping does not distribute: any position
    /// along it is on the same processors).
    pub dims: Vec<Option<(usize, i64, i64)>>,
}

impl Access {
    /// The optimal triples as hovers and `analyze` show them: `*` for a
    /// dimension best collapsed, `[?]` for one whose bounds are unknown.
    pub fn optimal_text(&self) -> Option<String> {
        let optimal = self.optimal.as_ref()?;
        let collapsed = |dim: usize| {
            self.optimal_alignment.as_ref().is_some_and(|it| it.dims.get(dim).is_some_and(Option::is_none))
        };
        let parts: Vec<String> = optimal
            .iter()
            .enumerate()
            .map(|(dim, it)| match it {
                Some(triple) => triple.render(),
                None if collapsed(dim) => "*".to_string(),
                None => "[?]".to_string(),
            })
            .collect();
        Some(parts.join(" "))
    }
}

impl OptimalAlignment {
    /// The dimension of the array that follows `target_dim`, with its stride and offset.
    pub fn source_of(&self, target_dim: usize) -> Option<(usize, i64, i64)> {
        self.dims.iter().enumerate().find_map(|(dim, it)| match *it {
            Some((target, stride, offset)) if target == target_dim => Some((dim, stride, offset)),
            _ => None,
        })
    }
}

#[derive(Clone, Debug)]
pub struct Access {
    pub array: SymbolId,
    /// The reference as written (`B(I-1)`).
    pub range: TextRange,
    pub attr: AccessAttr,
    /// The home of the loop itself (aligned with the iterations by definition).
    pub is_home: bool,
    pub subscripts: Vec<SubscriptForm>,
    /// The non-elemental function it is passed to (`TRANSPOSE(E)`), if any.
    pub through: Option<String>,
    /// Per dimension: first element, last element, stride over the loop.
    pub access: Vec<Option<Triple>>,
    /// Per dimension: the declared alignment triple relative to the final target.
    pub declared: Vec<Option<Triple>>,
    pub optimal: Option<Vec<Option<Triple>>>,
    pub optimal_alignment: Option<OptimalAlignment>,
    pub reason: Option<NoOptimal>,
    /// The optimal alignment as an HPF directive, when one exists.
    pub optimal_align: Option<String>,
    /// `None` when the access is aligned (nothing moves).
    pub transfer: Option<Transfer>,
}

#[derive(Clone, Debug)]
pub struct Home {
    pub array: SymbolId,
    pub range: TextRange,
    pub subscripts: Vec<SubscriptForm>,
    /// Per dimension of the home: the iteration space's triple in target elements.
    pub triple: Vec<Option<Triple>>,
}

#[derive(Clone, Debug)]
pub struct LoopReport {
    pub unit: UnitId,
    /// The mapping epoch of the unit it was analysed under
    /// ([`MappingEpochs`]): 0 unless a REALIGN or REDISTRIBUTE comes before.
    pub epoch: usize,
    pub kind: LoopKind,
    pub range: TextRange,
    pub header: TextRange,
    /// The loop's own index (`None` for implicit loops and DO WHILE).
    pub var: Option<Name>,
    /// `[lo, hi, step]` of the loop's own index, when known.
    pub bounds: Option<[i64; 3]>,
    /// The whole nest around (and including) this loop, outermost first.
    pub nest: Vec<NestIndex>,
    pub home: Option<Home>,
    /// The reference an `INDEPENDENT, ON HOME (U(I))` clause or an
    /// `ON HOME (U(I))` directive opening the body names: the loop's home
    /// when it is one of the loop's updates.
    pub on_home: Option<TextRange>,
    /// Why there is no home, when there is none.
    pub no_home: Option<String>,
    /// Why the loop is not analysed at all (DO WHILE, ...).
    pub gave_up: Option<String>,
    pub accesses: Vec<Access>,
}

struct Env<'a> {
    model: &'a Model,
    unit: UnitId,
}

impl ConstEnv for Env<'_> {
    fn constant(&self, key: &str) -> Option<i64> {
        match self.model.symbol(self.model.lookup(self.unit, key)?).kind {
            SymbolKind::Constant(value) => value,
            _ => None,
        }
    }

    fn number_of_processors(&self) -> Option<i64> {
        self.model.config.number_of_processors
    }
}

/// Analyses every loop of every unit.
pub fn analyze_loops(
    model: &Model,
    units: &[&syntax::Unit],
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Arc<LoopReport>> {
    let mut reports = Vec::new();
    for (unit_id, unit) in units.iter().enumerate() {
        let epochs = MappingEpochs::new(model, unit_id);
        // The statements between two remaps are analysed with the mapping
        // that holds there (top-level statements: one that holds a remap
        // is analysed with the mapping before it).
        let mut at = 0;
        while at < unit.body.len() {
            let epoch = epochs.epoch_of(unit.body[at].range.start);
            let run = unit.body[at..].iter().take_while(|it| epochs.epoch_of(it.range.start) == epoch).count();
            let epoch_model = epochs.model(epoch);
            let mut walker =
                Walker { model: epoch_model, unit: unit_id, epoch, reports: Vec::new(), on_homes: on_homes(unit) };
            walker.statements(&unit.body[at..at + run], &[], None, &[]);
            at += run;
            let mut unit_reports = walker.reports;
            for report in &mut unit_reports {
                finish(epoch_model, report);
            }
            // Per unit: a nest never spans units, and over the whole file this was
            // quadratic in the number of loops (most of the analysis at 100k lines).
            borrow_homes(epoch_model, &mut unit_reports);
            for report in &unit_reports {
                report_diagnostics(epoch_model, report, diagnostics);
            }
            reports.extend(unit_reports.into_iter().map(Arc::new));
        }
    }
    reports.sort_by_key(|it| (it.header.start, it.range.end));
    reports
}

/// The mappings of one unit between its remaps (REALIGN, REDISTRIBUTE):
/// epoch 0 is the declared mapping, epoch `k` the one after the `k`-th
/// remap point ([`Model::remap_points`]).
pub struct MappingEpochs<'m> {
    declared: &'m Model,
    points: Vec<usize>,
    remapped: Vec<Model>,
}

impl<'m> MappingEpochs<'m> {
    pub fn new(model: &'m Model, unit: UnitId) -> MappingEpochs<'m> {
        let points = if unit < model.units.len() { model.remap_points(unit) } else { Vec::new() };
        let remapped = points.iter().filter_map(|point| model.remapped_at(unit, point + 1)).collect();
        MappingEpochs { declared: model, points, remapped }
    }

    /// The epoch that holds at `offset`.
    pub fn epoch_of(&self, offset: usize) -> usize {
        self.points.partition_point(|it| *it < offset)
    }

    pub fn model(&self, epoch: usize) -> &Model {
        if epoch == 0 {
            self.declared
        } else {
            &self.remapped[epoch - 1]
        }
    }

    /// Where `epoch` begins: the start of the first remap directive after
    /// the previous epoch (`None` for epoch 0).
    pub fn start(&self, epoch: usize) -> Option<usize> {
        self.points.get(epoch.checked_sub(1)?).copied()
    }

    /// How many epochs: one more than the remap points.
    pub fn count(&self) -> usize {
        self.points.len() + 1
    }
}

struct Walker<'a> {
    model: &'a Model,
    unit: UnitId,
    epoch: usize,
    reports: Vec<LoopReport>,
    /// The ON HOME references that name the home of a DO loop, by the
    /// loop's start ([`on_homes`]).
    on_homes: Vec<(usize, &'a Expr)>,
}

/// An array reference found in a statement, before analysis.
struct RawAccess<'e> {
    array: SymbolId,
    range: TextRange,
    attr: AccessAttr,
    /// `None` for a whole-array name.
    args: Option<&'e [Subscript]>,
    /// The function whose argument this is, unless it is elemental.
    through: Option<String>,
}

/// Intrinsics that apply element by element, so `A = SQRT(B)` pairs `A(i)` with `B(i)`.
const ELEMENTAL_INTRINSICS: &[&str] = &[
    "abs", "acos", "aimag", "aint", "anint", "asin", "atan", "atan2", "btest", "ceiling", "char", "cmplx", "conjg",
    "cos", "cosh", "dble", "dim", "dprod", "exp", "float", "floor", "iand", "ichar", "ieor", "int", "ior", "ishft",
    "log", "log10", "logical", "max", "merge", "min", "mod", "modulo", "nint", "not", "real", "sign", "sin", "sinh",
    "sngl", "sqrt", "tan", "tanh",
];

impl<'a> Walker<'a> {
    fn env(&self) -> Env<'a> {
        Env { model: self.model, unit: self.unit }
    }

    fn array(&self, name: &Name) -> Option<SymbolId> {
        let id = self.model.lookup(self.unit, &name.key())?;
        self.model.symbol(id).is_array().then_some(id)
    }

    fn nest_index(&self, control: &syntax::LoopControl) -> NestIndex {
        let env = self.env();
        let mut unknown = None;
        let mut fold = |expr: &Expr| match linear(expr, &|_| false, &env) {
            Ok(value) => Some(value.constant),
            Err(error) => {
                unknown.get_or_insert_with(|| error.describe());
                None
            }
        };
        let lo = fold(&control.lo);
        let hi = fold(&control.hi);
        let step = match &control.step {
            Some(step) => fold(step),
            None => Some(1),
        };
        let step = match step {
            Some(0) => {
                unknown = Some("the step is zero".to_string());
                None
            }
            other => other,
        };
        NestIndex { var: Some(control.var.clone()), key: control.var.key(), lo, hi, step, unknown }
    }

    /// Walks statements; `current` is the innermost enclosing loop report.
    fn statements(&mut self, body: &[Stmt], nest: &[NestIndex], current: Option<usize>, masks: &[&Expr]) {
        for stmt in body {
            self.statement(stmt, nest, current, masks);
        }
    }

    fn statement(&mut self, stmt: &Stmt, nest: &[NestIndex], current: Option<usize>, masks: &[&Expr]) {
        match &stmt.kind {
            StmtKind::Do { control, body, .. } => {
                let Some(control) = control else {
                    // `DO` without control runs until EXIT: like DO WHILE.
                    let id = self.push_report(stmt, LoopKind::DoWhile, nest.to_vec(), None);
                    self.reports[id].gave_up =
                        Some("a DO without loop control runs until EXIT; its trip count is unknown".into());
                    self.statements(body, nest, None, masks);
                    return;
                };
                let index = self.nest_index(control);
                let mut inner = nest.to_vec();
                inner.push(index);
                let id = self.push_report(stmt, LoopKind::Do, inner.clone(), Some(control.var.clone()));
                self.statements(body, &inner, Some(id), masks);
                if let Some(&(_, home)) = self.on_homes.iter().find(|(start, _)| *start == stmt.range.start) {
                    self.reports[id].on_home = Some(home.range);
                    // The update it names is marked; `finish` makes it the home.
                    let mut raw = Vec::new();
                    self.collect(home, AccessAttr::Update, &mut raw);
                    if let Some(first) = raw.first() {
                        let forms = self.forms(first, &inner, None);
                        let report = &mut self.reports[id];
                        let named = report.accesses.iter_mut().find(|it| {
                            it.attr == AccessAttr::Update && it.array == first.array && it.subscripts == forms
                        });
                        if let Some(access) = named {
                            access.is_home = true;
                        }
                    }
                }
            }
            StmtKind::DoWhile { body, .. } => {
                let id = self.push_report(stmt, LoopKind::DoWhile, nest.to_vec(), None);
                self.reports[id].gave_up =
                    Some("DO WHILE: the number of iterations is only known at run time; not analysed".into());
                // Loops inside it (a time-step loop around the work) are analysed on their own.
                self.statements(body, nest, None, masks);
            }
            StmtKind::Forall { specs, mask, body } => {
                let mut inner = nest.to_vec();
                inner.extend(specs.iter().map(|spec| self.nest_index(spec)));
                let id =
                    self.push_report(stmt, LoopKind::Forall, inner.clone(), specs.first().map(|it| it.var.clone()));
                let mut masks = masks.to_vec();
                masks.extend(mask.iter());
                self.statements(body, &inner, Some(id), &masks);
            }
            StmtKind::Where { mask, body, elsewhere } => {
                let mut inner_masks = masks.to_vec();
                inner_masks.extend(mask.iter());
                self.statements(body, nest, current, &inner_masks);
                for (mask, body) in elsewhere {
                    let mut inner_masks = inner_masks.clone();
                    inner_masks.extend(mask.iter());
                    self.statements(body, nest, current, &inner_masks);
                }
            }
            StmtKind::Assign { lhs, rhs } => self.assignment(stmt, lhs, rhs, nest, current, masks),
            StmtKind::If { branches } => {
                for (cond, body) in branches {
                    if let (Some(cond), Some(current)) = (cond, current) {
                        self.add_references(current, cond, nest);
                    }
                    self.statements(body, nest, current, masks);
                }
            }
            StmtKind::Call { args, .. } => {
                if let Some(current) = current {
                    for arg in args {
                        self.add_references(current, arg, nest);
                    }
                }
            }
            StmtKind::Output { items } => {
                if let Some(current) = current {
                    for item in items {
                        self.add_references(current, item, nest);
                    }
                }
            }
            StmtKind::Other { exprs, body } => {
                if let Some(current) = current {
                    for expr in exprs {
                        self.add_references(current, expr, nest);
                    }
                }
                self.statements(body, nest, current, masks);
            }
        }
    }

    fn push_report(&mut self, stmt: &Stmt, kind: LoopKind, nest: Vec<NestIndex>, var: Option<Name>) -> usize {
        let own = nest.last().filter(|_| var.is_some());
        let bounds = own.and_then(|it| Some([it.lo?, it.hi?, it.step?]));
        self.reports.push(LoopReport {
            unit: self.unit,
            epoch: self.epoch,
            kind,
            range: stmt.range,
            header: stmt.header,
            var,
            bounds,
            nest,
            home: None,
            on_home: None,
            no_home: None,
            gave_up: None,
            accesses: Vec::new(),
        });
        self.reports.len() - 1
    }

    fn assignment(
        &mut self,
        stmt: &Stmt,
        lhs: &Expr,
        rhs: &Expr,
        nest: &[NestIndex],
        current: Option<usize>,
        masks: &[&Expr],
    ) {
        // Sections on the left make the statement an implicit loop nest.
        let (lhs_name, lhs_args) = match &lhs.kind {
            ExprKind::Ref { name, args } => (Some(name), Some(args.as_slice())),
            ExprKind::Name(name) => (Some(name), None),
            _ => (None, None),
        };
        let lhs_array = lhs_name.and_then(|name| self.array(name));
        let section_dims: Vec<usize> = match (lhs_array, lhs_args) {
            (Some(array), None) => (0..self.model.symbol(array).rank()).collect(),
            (Some(_), Some(args)) => {
                (0..args.len()).filter(|&dim| matches!(args[dim], Subscript::Range { .. })).collect()
            }
            _ => Vec::new(),
        };
        if let (Some(array), false) = (lhs_array, section_dims.is_empty()) {
            // One implicit index per section dimension of the left side.
            let symbol = self.model.symbol(array);
            let env = self.env();
            let mut inner = nest.to_vec();
            let mut sections = Vec::new();
            for (ordinal, &dim) in section_dims.iter().enumerate() {
                let declared = symbol.shape.get(dim);
                let (lo, hi, step) = match lhs_args.and_then(|args| args.get(dim)) {
                    Some(Subscript::Range { lo, hi, stride, .. }) => (lo.as_ref(), hi.as_ref(), stride.as_ref()),
                    _ => (None, None, None),
                };
                let mut unknown = None;
                let mut fold = |expr: Option<&Expr>, default: Option<i64>| match expr {
                    None => {
                        if default.is_none() {
                            unknown.get_or_insert_with(|| "the array's bounds are not known".to_string());
                        }
                        default
                    }
                    Some(expr) => match linear(expr, &|_| false, &env) {
                        Ok(value) => Some(value.constant),
                        Err(error) => {
                            unknown.get_or_insert_with(|| error.describe());
                            None
                        }
                    },
                };
                let lo = fold(lo, declared.and_then(|it| it.lo.known()));
                let hi = fold(hi, declared.and_then(|it| it.hi.known()));
                let step = fold(step, Some(1));
                sections.push((lo, step));
                let probe = NestIndex { var: None, key: String::new(), lo, hi, step, unknown: None };
                // The implicit index counts 0, 1, ..., trips-1.
                let trips = probe.trips();
                inner.push(NestIndex {
                    var: None,
                    key: format!("#{}:{}", stmt.range.start, ordinal),
                    lo: trips.map(|_| 0),
                    hi: trips.map(|it| it as i64 - 1),
                    step: trips.map(|_| 1),
                    unknown: if trips.is_none() {
                        unknown.or(Some("the section's bounds are not known".into()))
                    } else {
                        None
                    },
                });
            }
            let id = self.push_report(stmt, LoopKind::ArrayAssignment, inner.clone(), None);
            let implicit: Vec<usize> = (nest.len()..inner.len()).collect();
            let section_context = SectionContext { implicit: &implicit };
            let mut raw = Vec::new();
            self.collect(lhs, AccessAttr::Update, &mut raw);
            // The left side's own subscripts are references, not the update.
            let lhs_update = raw.remove(0);
            let lhs_forms = self.forms(&lhs_update, &inner, Some(&section_context));
            self.add_raw(id, lhs_update, lhs_forms);
            for raw_access in raw {
                let forms = self.forms(&raw_access, &inner, Some(&section_context));
                self.add_raw(id, raw_access, forms);
            }
            for expr in std::iter::once(rhs).chain(masks.iter().copied()) {
                let mut raw = Vec::new();
                self.collect(expr, AccessAttr::Reference, &mut raw);
                for raw_access in raw {
                    let forms = self.forms(&raw_access, &inner, Some(&section_context));
                    self.add_raw(id, raw_access, forms);
                }
            }
            return;
        }
        let Some(current) = current else { return };
        let mut raw = Vec::new();
        self.collect(lhs, AccessAttr::Update, &mut raw);
        self.collect(rhs, AccessAttr::Reference, &mut raw);
        for mask in masks {
            self.collect(mask, AccessAttr::Reference, &mut raw);
        }
        for raw_access in raw {
            let forms = self.forms(&raw_access, nest, None);
            self.add_raw(current, raw_access, forms);
        }
    }

    fn add_references(&mut self, report: usize, expr: &Expr, nest: &[NestIndex]) {
        let mut raw = Vec::new();
        self.collect(expr, AccessAttr::Reference, &mut raw);
        for raw_access in raw {
            let forms = self.forms(&raw_access, nest, None);
            self.add_raw(report, raw_access, forms);
        }
    }

    fn add_raw(&mut self, report: usize, raw: RawAccess, subscripts: Vec<SubscriptForm>) {
        self.reports[report].accesses.push(Access {
            array: raw.array,
            range: raw.range,
            attr: raw.attr,
            is_home: false,
            subscripts,
            through: raw.through,
            access: Vec::new(),
            declared: Vec::new(),
            optimal: None,
            optimal_alignment: None,
            reason: None,
            optimal_align: None,
            transfer: None,
        });
    }

    /// Array references in `expr`, outermost first; subscripts of a
    /// reference are references themselves (`A(IDX(I))` reads IDX).
    fn collect<'e>(&self, expr: &'e Expr, attr: AccessAttr, out: &mut Vec<RawAccess<'e>>) {
        let mut first = true;
        let mut stack: Vec<(&'e Expr, Option<String>)> = vec![(expr, None)];
        while let Some((expr, through)) = stack.pop() {
            let this_attr = if first { attr } else { AccessAttr::Reference };
            first = false;
            match &expr.kind {
                ExprKind::Ref { name, args } => {
                    let is_array = self.array(name);
                    if let Some(array) = is_array {
                        out.push(RawAccess {
                            array,
                            range: expr.range,
                            attr: this_attr,
                            args: Some(args),
                            through: through.clone(),
                        });
                    }
                    // Subscripts are element references of their own; arguments of a
                    // non-elemental function are not paired with the loop's elements.
                    let inner_through = match is_array {
                        Some(_) => None,
                        None if ELEMENTAL_INTRINSICS.contains(&name.key().as_str()) => through.clone(),
                        None => Some(name.text.clone()),
                    };
                    for arg in args.iter().rev() {
                        match arg {
                            Subscript::Expr(expr) | Subscript::Keyword { value: expr, .. } => {
                                stack.push((expr, inner_through.clone()))
                            }
                            Subscript::Range { lo, hi, stride, .. } => stack.extend(
                                stride.iter().chain(hi.iter()).chain(lo.iter()).map(|it| (it, inner_through.clone())),
                            ),
                            Subscript::Star(_) => {}
                        }
                    }
                }
                ExprKind::Name(name) => {
                    if let Some(array) = self.array(name) {
                        out.push(RawAccess { array, range: expr.range, attr: this_attr, args: None, through });
                    }
                }
                ExprKind::Unary { operand, .. } => stack.push((operand, through)),
                ExprKind::Binary { lhs, rhs, .. } => {
                    stack.push((rhs, through.clone()));
                    stack.push((lhs, through));
                }
                ExprKind::Paren(inner) => stack.push((inner, through)),
                ExprKind::Other(children) => stack.extend(children.iter().rev().map(|it| (it, through.clone()))),
                ExprKind::Int(_) | ExprKind::Literal(_) => {}
            }
        }
    }

    /// The form of every subscript of an access in `nest`.
    fn forms(&self, raw: &RawAccess, nest: &[NestIndex], sections: Option<&SectionContext>) -> Vec<SubscriptForm> {
        let symbol = self.model.symbol(raw.array);
        // Sections inside SUM(...) are not the loop's elements; inside
        // TRANSPOSE(...) they are, with the two dimensions swapped.
        let transposed = raw.through.as_deref().is_some_and(|it| it.eq_ignore_ascii_case("transpose"));
        let sections = sections.filter(|_| raw.through.is_none() || transposed);
        let env = self.env();
        let index_of = |key: &str| nest.iter().rposition(|it| it.key == key);
        let mut section_ordinal = 0;
        let mut next_section = |lo: Option<i64>, step: i64| -> SubscriptForm {
            let ordinal = match (transposed, section_ordinal) {
                (true, 0) => 1,
                (true, 1) => 0,
                (_, ordinal) => ordinal,
            };
            let form = match (sections, lo) {
                (Some(context), Some(lo)) => match context.implicit.get(ordinal) {
                    Some(&index) => SubscriptForm::Affine { index, coef: step, offset: lo },
                    None => SubscriptForm::Section,
                },
                _ => SubscriptForm::Section,
            };
            section_ordinal += 1;
            form
        };
        let Some(args) = raw.args else {
            // A whole array: every dimension is a full section.
            return symbol.shape.iter().map(|dim| next_section(dim.lo.known(), 1)).collect();
        };
        args.iter()
            .enumerate()
            .map(|(dim, arg)| match arg {
                Subscript::Expr(expr) => match linear(expr, &|key| index_of(key).is_some(), &env) {
                    Ok(form) => {
                        let vars: Vec<(&str, i64)> = form.vars().collect();
                        match vars.as_slice() {
                            [] => SubscriptForm::Constant(form.constant),
                            [(key, coef)] => SubscriptForm::Affine {
                                index: index_of(key).expect("a nest index"),
                                coef: *coef,
                                offset: form.constant,
                            },
                            several => SubscriptForm::SeveralIndices(
                                several
                                    .iter()
                                    .map(|(key, _)| {
                                        nest[index_of(key).expect("a nest index")]
                                            .var
                                            .as_ref()
                                            .map_or(key.to_string(), |it| it.text.clone())
                                    })
                                    .collect(),
                            ),
                        }
                    }
                    Err(error) => {
                        let mut indirect = false;
                        expr.walk(|it| {
                            if let ExprKind::Ref { name, .. } = &it.kind {
                                indirect |= self.array(name).is_some();
                            }
                        });
                        if indirect {
                            SubscriptForm::Indirect
                        } else {
                            match error.reason {
                                NotFoldedReason::NotConstant(name) => SubscriptForm::Variable(name),
                                _ => SubscriptForm::NotAffine,
                            }
                        }
                    }
                },
                Subscript::Range { lo, stride, .. } => {
                    let fold = |expr: &Option<Expr>, default: Option<i64>| match expr {
                        None => default,
                        Some(expr) => linear(expr, &|_| false, &env).ok().map(|it| it.constant),
                    };
                    let lo = fold(lo, symbol.shape.get(dim).and_then(|it| it.lo.known()));
                    match fold(stride, Some(1)) {
                        Some(step) => next_section(lo, step),
                        None => {
                            // Keep the pairing of later sections with the implicit indices.
                            next_section(None, 1);
                            SubscriptForm::NotAffine
                        }
                    }
                }
                Subscript::Star(_) | Subscript::Keyword { .. } => SubscriptForm::NotAffine,
            })
            .collect()
    }
}

struct SectionContext<'a> {
    /// Nest positions of the implicit indices, in section order.
    implicit: &'a [usize],
}

/// The DO loops whose home an ON HOME names, by the loop's start: the loop
/// after `INDEPENDENT, ON HOME (U(I))`, and the loop whose body begins with
/// an `ON HOME (U(I))` directive.
fn on_homes(unit: &syntax::Unit) -> Vec<(usize, &Expr)> {
    let mut res = Vec::new();
    for directive in &unit.directives {
        match &directive.body {
            DirectiveBody::Independent(Independent { on_home: Some(home), .. }) => {
                let next = crate::mapping_checks::next_statement(&unit.body, directive.range.end);
                if let Some(next) = next.filter(|it| matches!(it.kind, StmtKind::Do { .. })) {
                    res.push((next.range.start, home));
                }
            }
            DirectiveBody::On(on) => {
                let Some(next) = crate::mapping_checks::next_statement(&unit.body, directive.range.end) else {
                    continue;
                };
                if let Some(owner) = loop_whose_body_starts(&unit.body, directive.range.start, next.range.start) {
                    res.push((owner.range.start, &on.home));
                }
            }
            _ => {}
        }
    }
    res
}

/// The DO loop around `offset` whose body's first statement starts at `first`.
fn loop_whose_body_starts(body: &[Stmt], offset: usize, first: usize) -> Option<&Stmt> {
    let mut stack: Vec<&Stmt> = body.iter().filter(|it| it.range.start <= offset && offset < it.range.end).collect();
    while let Some(stmt) = stack.pop() {
        if let StmtKind::Do { body: inner, .. } = &stmt.kind {
            if stmt.header.end <= offset && inner.first().is_some_and(|it| it.range.start == first) {
                return Some(stmt);
            }
        }
        stack.extend(stmt.children().into_iter().filter(|it| it.range.start <= offset && offset < it.range.end));
    }
    None
}

/// Chooses the home and computes everything per access.
fn finish(model: &Model, report: &mut LoopReport) {
    if report.gave_up.is_some() {
        report.accesses.clear();
        return;
    }
    // The home: the update an ON HOME names (marked by the walker), else the
    // first update of an array; for an array assignment, its left side.
    let home_idx = report
        .accesses
        .iter()
        .position(|it| it.is_home)
        .or_else(|| report.accesses.iter().position(|it| it.attr == AccessAttr::Update));
    let home = home_idx.map(|idx| {
        let access = &report.accesses[idx];
        Home { array: access.array, range: access.range, subscripts: access.subscripts.clone(), triple: Vec::new() }
    });
    match home {
        None => {
            report.no_home = Some(if report.accesses.is_empty() {
                "the loop touches no array directly".to_string()
            } else {
                "the loop updates no array element: every processor runs it (replicated)".to_string()
            });
        }
        Some(mut home) => {
            let distributed = model.distribution_of(home.array).is_some_and(|(_, it)| !it.formats.is_empty());
            if !distributed {
                report.no_home = Some(format!(
                    "{} is not distributed, so the loop has no home: every processor runs it (replicated)",
                    model.symbol(home.array).name.text
                ));
            }
            home.triple = home_triples(model, &home, &report.nest);
            report.home = Some(home);
            if let Some(idx) = home_idx {
                report.accesses[idx].is_home = true;
            }
        }
    }
    for idx in 0..report.accesses.len() {
        let access = analyse_access(model, report, idx);
        report.accesses[idx] = access;
    }
    detect_halos(model, report);
}

/// A loop whose body is only other loops (the outer loop of a nest) runs
/// where the first inner loop's home lives. `reports` are one unit's.
fn borrow_homes(model: &Model, reports: &mut [LoopReport]) {
    for idx in 0..reports.len() {
        let report = &reports[idx];
        if report.gave_up.is_some() || report.home.is_some() || !report.accesses.is_empty() {
            continue;
        }
        let inner = reports
            .iter()
            .filter(|it| {
                report.range.contains_range(it.range)
                    && it.range != report.range
                    && it.nest.len() > report.nest.len()
                    && it.nest[..report.nest.len()] == report.nest[..]
            })
            .min_by_key(|it| it.range.start)
            .and_then(|it| Some((it.home.clone()?, it.no_home.clone())));
        if let Some((mut home, no_home)) = inner {
            home.triple = home_triples(model, &home, &reports[idx].nest);
            reports[idx].home = Some(home);
            reports[idx].no_home = no_home;
        }
    }
}

/// Per dimension of the home: the triple of the iteration space in target elements.
fn home_triples(model: &Model, home: &Home, nest: &[NestIndex]) -> Vec<Option<Triple>> {
    let resolved = model.resolve(home.array);
    home.subscripts
        .iter()
        .enumerate()
        .map(|(dim, form)| {
            let (_, a, b) = resolved.as_ref()?.axis_of(dim)?;
            let range = access_range(form, nest)?;
            Some(Triple {
                lo: a.checked_mul(range.lo)?.checked_add(b)?,
                hi: a.checked_mul(range.hi)?.checked_add(b)?,
                stride: a.checked_mul(range.stride)?,
            })
        })
        .collect()
}

/// The element touched in the first and last iteration, and the stride.
fn access_range(form: &SubscriptForm, nest: &[NestIndex]) -> Option<Triple> {
    match *form {
        SubscriptForm::Affine { index, coef, offset } => {
            let index = nest.get(index)?;
            let (first, last, step) = (index.lo?, index.last()?, index.step?);
            Some(Triple {
                lo: coef.checked_mul(first)?.checked_add(offset)?,
                hi: coef.checked_mul(last)?.checked_add(offset)?,
                stride: coef.checked_mul(step)?,
            })
        }
        SubscriptForm::Constant(value) => Some(Triple { lo: value, hi: value, stride: 0 }),
        _ => None,
    }
}

fn declared_triples(model: &Model, array: SymbolId) -> Vec<Option<Triple>> {
    crate::render::triples(model, array)
        .into_iter()
        .map(|it| it.map(|(lo, hi, stride)| Triple { lo, hi, stride }))
        .collect()
}

fn analyse_access(model: &Model, report: &LoopReport, idx: usize) -> Access {
    let mut access = report.accesses[idx].clone();
    access.access = access.subscripts.iter().map(|form| access_range(form, &report.nest)).collect();
    access.declared = declared_triples(model, access.array);
    if access.is_home {
        access.optimal = Some(access.declared.clone());
        return access;
    }
    let Some(home) = &report.home else {
        access.reason = report.no_home.clone().map(NoOptimal::NoHome);
        return access;
    };
    if let Some(function) = access.through.as_ref().filter(|it| !it.eq_ignore_ascii_case("transpose")) {
        if access.subscripts.iter().any(|it| matches!(it, SubscriptForm::Section)) {
            access.reason = Some(NoOptimal::NotExpressible(format!(
                "{} is passed to {function}, which does not work element by element: the analysis does not follow it",
                model.symbol(access.array).name.text
            )));
            return access;
        }
    }
    if let Some(why) = &report.no_home {
        access.reason = Some(NoOptimal::NoHome(why.clone()));
        return access;
    }
    match optimal_alignment(model, home, &access, &report.nest) {
        Ok(optimal) => {
            let symbol = model.symbol(access.array);
            let target = model.symbol(optimal.target);
            // The triple of each dimension, and whether it fits in the target.
            let mut triples = Vec::new();
            let mut reason = None;
            for (dim, &optimal_dim) in optimal.dims.iter().enumerate() {
                let Some((target_dim, stride, offset)) = optimal_dim else {
                    // Collapsed: no triple.
                    triples.push(None);
                    continue;
                };
                let bounds = symbol.shape.get(dim).map(|it| (it.lo.known(), it.hi.known()));
                let triple = match bounds {
                    Some((Some(lo), Some(hi))) => (|| {
                        Some(Triple {
                            lo: stride.checked_mul(lo)?.checked_add(offset)?,
                            hi: stride.checked_mul(hi)?.checked_add(offset)?,
                            stride,
                        })
                    })(),
                    _ => None,
                };
                if let (Some(triple), Some(bounds)) = (triple, target.shape.get(target_dim)) {
                    if let (Some(target_lo), Some(target_hi)) = (bounds.lo.known(), bounds.hi.known()) {
                        let (lo, hi) = (triple.lo.min(triple.hi), triple.lo.max(triple.hi));
                        if lo < target_lo || hi > target_hi {
                            reason.get_or_insert(NoOptimal::OutOfBounds { dim, lo, hi, target_lo, target_hi });
                        }
                    }
                }
                triples.push(triple);
            }
            access.optimal_align = Some(render_align(model, &access, &optimal, home));
            access.optimal_alignment = Some(optimal);
            if let Some(reason) = reason {
                access.reason = Some(reason);
            } else {
                access.optimal = Some(triples);
            }
        }
        Err(reason) => access.reason = Some(reason),
    }
    access.transfer = transfer(model, report, home, &access);
    access
}

/// Equations (1)-(3) per dimension, as an alignment function: with the
/// home's subscript `ph*v+qh` aligned by `a*x+b` and the access's `p*v+q`,
/// `s_opt = a*ph/p` and `X(i) <-> T(s_opt*i + a*qh + b - s_opt*q)`.
fn optimal_alignment(
    model: &Model,
    home: &Home,
    access: &Access,
    nest: &[NestIndex],
) -> Result<OptimalAlignment, NoOptimal> {
    let home_resolved =
        model.resolve(home.array).ok_or_else(|| NoOptimal::NoHome("the home's ALIGN chain has a cycle".to_string()))?;
    let mut dims = Vec::new();
    let mut used_target_dims = Vec::new();
    for (dim, form) in access.subscripts.iter().enumerate() {
        let (index, coef, offset) = match *form {
            SubscriptForm::Affine { index, coef, offset } if coef != 0 => (index, coef, offset),
            // `B(I, 1)` with B's second dimension not distributed: the constant
            // picks no processor, so the dimension is best collapsed.
            SubscriptForm::Affine { .. } | SubscriptForm::Constant(_)
                if !is_distributed_dim(model, access.array, dim) =>
            {
                dims.push(None);
                continue;
            }
            SubscriptForm::Affine { offset, .. } | SubscriptForm::Constant(offset) => {
                return Err(NoOptimal::Broadcast { dim, value: offset });
            }
            ref other => return Err(NoOptimal::Subscript { dim, form: other.clone() }),
        };
        // The home dimension that the same index drives.
        let home_dim = home.subscripts.iter().position(|it| matches!(it, SubscriptForm::Affine { index: home_index, coef, .. } if *home_index == index && *coef != 0));
        let Some(home_dim) = home_dim else {
            let var = nest[index].var.as_ref().map_or("the section index".to_string(), |it| format!("`{}`", it.text));
            return Err(NoOptimal::NotExpressible(format!(
                "{var} indexes dimension {} of {} but not the loop's home {}: every iteration on one processor needs the whole dimension; collapse it (`*` in the ALIGN) to make it local",
                dim + 1,
                model.symbol(access.array).name.text,
                model.symbol(home.array).name.text
            )));
        };
        let SubscriptForm::Affine { coef: home_coef, offset: home_offset, .. } = home.subscripts[home_dim] else {
            unreachable!("found as affine above")
        };
        let Some((target_dim, a, b)) = home_resolved.axis_of(home_dim) else {
            return Err(NoOptimal::NotExpressible(format!(
                "dimension {} of the home {} is collapsed: its iterations all run on the same processors, so dimension {} of {} is best collapsed too (`*` in the ALIGN)",
                home_dim + 1,
                model.symbol(home.array).name.text,
                dim + 1,
                model.symbol(access.array).name.text
            )));
        };
        let step = nest[index].step.unwrap_or(1);
        let loop_stride = a.saturating_mul(home_coef);
        if loop_stride % coef != 0 {
            return Err(NoOptimal::NonIntegerStride {
                dim,
                loop_stride: loop_stride.saturating_mul(step),
                access_stride: coef.saturating_mul(step),
            });
        }
        let stride = loop_stride / coef;
        let opt_offset = a
            .checked_mul(home_offset)
            .and_then(|it| it.checked_add(b))
            .and_then(|it| it.checked_sub(stride.checked_mul(offset)?))
            .ok_or_else(|| NoOptimal::NotExpressible("the alignment overflows 64-bit integers".to_string()))?;
        if used_target_dims.contains(&target_dim) {
            return Err(NoOptimal::NotExpressible(format!(
                "two dimensions of {} follow the same loop index onto one target dimension (a diagonal): no ALIGN expresses that",
                model.symbol(access.array).name.text
            )));
        }
        used_target_dims.push(target_dim);
        dims.push(Some((target_dim, stride, opt_offset)));
    }
    Ok(OptimalAlignment { target: home_resolved.target, dims })
}

/// Whether dimension `dim` of `array` decides where its elements live: it
/// follows a target dimension that is distributed (or may be). `false`
/// when its ALIGN collapses it or its target's DISTRIBUTE gives that
/// dimension `*`.
fn is_distributed_dim(model: &Model, array: SymbolId, dim: usize) -> bool {
    let Some(resolved) = model.resolve(array) else { return true };
    if resolved.axes.contains(&Axis::Unknown) {
        return true;
    }
    let Some((target_dim, _, _)) = resolved.axis_of(dim) else { return false };
    let Some(distribution) = &model.symbol(resolved.target).mapping.distribution else { return true };
    distribution.formats.get(target_dim).is_none_or(|it| *it != Format::Collapsed)
}

/// The optimal ALIGN directive in HPF syntax, in the case of the user's
/// directives: `ALIGN B(I) WITH A(I+1)`.
fn render_align(model: &Model, access: &Access, optimal: &OptimalAlignment, home: &Home) -> String {
    let symbol = model.symbol(access.array);
    let target = model.symbol(optimal.target);
    let lower = symbol.name.text.chars().all(|it| !it.is_ascii_uppercase())
        && target.name.text.chars().all(|it| !it.is_ascii_uppercase());
    let dummy = |dim: usize| {
        let name = crate::render::align_dummy(dim);
        if lower {
            name.to_ascii_lowercase()
        } else {
            name
        }
    };
    let sources: Vec<String> = (0..symbol.rank()).map(dummy).collect();
    let home_resolved = model.resolve(home.array);
    let subscripts: Vec<String> = (0..target.rank())
        .map(|target_dim| {
            if let Some((dim, stride, offset)) = optimal.source_of(target_dim) {
                let var = dummy(dim);
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
            } else {
                // A target dimension the array does not follow: where the home sits in it.
                match home_resolved.as_ref().and_then(|it| it.axes.get(target_dim)) {
                    Some(Axis::Constant(value)) => value.to_string(),
                    _ => "*".to_string(),
                }
            }
        })
        .collect();
    let (align, with) = if lower { ("align", "with") } else { ("ALIGN", "WITH") };
    format!("{align} {}({}) {with} {}({})", symbol.name.text, sources.join(","), target.name.text, subscripts.join(","))
}

/// The processor count along each distributed dimension of `target`.
fn processor_counts(model: &Model, target: SymbolId) -> Option<Vec<Option<i64>>> {
    let distribution = model.symbol(target).mapping.distribution.as_ref()?;
    Some(model.processor_counts(distribution))
}

/// Two final targets that put every index on the same processor: the
/// same target, or arrays/templates of equal bounds distributed alike
/// (`DISTRIBUTE A(BLOCK)` and `DISTRIBUTE B(BLOCK)` with A and B of one shape).
pub fn equivalent_targets(model: &Model, first: SymbolId, second: SymbolId) -> bool {
    if first == second {
        return true;
    }
    let (a, b) = (model.symbol(first), model.symbol(second));
    let same_bounds = a.shape.len() == b.shape.len()
        && a.shape.iter().zip(&b.shape).all(|(x, y)| {
            x.lo.known().is_some()
                && x.lo.known() == y.lo.known()
                && x.hi.known().is_some()
                && x.hi.known() == y.hi.known()
        });
    let (Some(da), Some(db)) = (&a.mapping.distribution, &b.mapping.distribution) else {
        // Neither distributed: both are everywhere.
        return same_bounds && a.mapping.distribution.is_none() && b.mapping.distribution.is_none();
    };
    if !same_bounds || da.formats != db.formats || da.formats.is_empty() || da.descriptive || db.descriptive {
        return false;
    }
    if da.onto.is_some() && da.onto == db.onto {
        return true;
    }
    match (processor_counts(model, first), processor_counts(model, second)) {
        (Some(x), Some(y)) => x == y && x.iter().all(Option::is_some),
        _ => false,
    }
}

/// Whether the declared alignment of the access equals its optimal one.
fn is_aligned(model: &Model, access: &Access) -> bool {
    let Some(optimal) = &access.optimal_alignment else { return false };
    let Some(resolved) = model.resolve(access.array) else { return false };
    equivalent_targets(model, resolved.target, optimal.target)
        && optimal
            .dims
            .iter()
            .enumerate()
            // Where a dimension the mapping does not distribute sits changes no owner.
            .all(|(dim, &optimal_dim)| {
                optimal_dim.is_none()
                    || !is_distributed_dim(model, access.array, dim)
                    || resolved.axis_of(dim) == optimal_dim
            })
}

fn transfer_kind(model: &Model, access: &Access) -> TransferKind {
    if let Some(NoOptimal::Broadcast { .. }) = access.reason {
        return TransferKind::Broadcast;
    }
    let (Some(optimal), Some(resolved)) = (&access.optimal_alignment, model.resolve(access.array)) else {
        return TransferKind::General;
    };
    if !equivalent_targets(model, resolved.target, optimal.target) {
        return TransferKind::General;
    }
    let mut shifts = Vec::new();
    let mut kind = None;
    for (dim, &optimal_dim) in optimal.dims.iter().enumerate() {
        // A collapsed or undistributed dimension moves nothing.
        let Some((target_dim, stride, offset)) = optimal_dim else { continue };
        if !is_distributed_dim(model, access.array, dim) {
            continue;
        }
        let Some((declared_dim, declared_stride, declared_offset)) = resolved.axis_of(dim) else {
            return TransferKind::General;
        };
        if declared_dim != target_dim {
            kind.get_or_insert(TransferKind::Transpose);
        } else if declared_stride == -stride {
            kind.get_or_insert(TransferKind::Reversal);
        } else if declared_stride != stride {
            kind.get_or_insert(TransferKind::StrideChange);
        }
        shifts.push(offset - declared_offset);
    }
    kind.unwrap_or(TransferKind::Shift(shifts))
}

/// The processor arrangement's shape and one placement per processor dimension.
type Placements = (Vec<i64>, Vec<Placement>);

/// The placement of an access along every processor dimension of its
/// target's distribution, or why there is none.
pub(crate) fn placements(
    model: &Model,
    array: SymbolId,
    forms: &[SubscriptForm],
    nest: &[NestIndex],
) -> Result<Option<Placements>, String> {
    let resolved = model.resolve(array).ok_or("an ALIGN chain has a cycle")?;
    let target = model.symbol(resolved.target);
    let Some(distribution) = &target.mapping.distribution else { return Ok(None) };
    if distribution.formats.is_empty() {
        return Err("the distribution is only known from the actual argument".to_string());
    }
    let n_distributed = distribution.formats.iter().filter(|it| **it != Format::Collapsed).count();
    let counts = model.processor_counts(distribution);
    if counts.len() != n_distributed {
        return Err("the processor arrangement does not match the distribution".to_string());
    }
    let mut proc_shape = Vec::new();
    let mut res = Vec::new();
    let mut proc_dim = 0;
    for (target_dim, format) in distribution.formats.iter().enumerate() {
        if *format == Format::Collapsed {
            continue;
        }
        let procs = counts[proc_dim].ok_or("the number of processors is not known (set it with --processors)")?;
        proc_dim += 1;
        let extent = target.shape.get(target_dim).ok_or("the distribution does not match the target's rank")?;
        let lower = extent.lo.known().ok_or("the target's bounds are not known")?;
        let block = match *format {
            Format::Block => {
                let extent = extent.extent().ok_or("the target's bounds are not known")?;
                crate::model::block_size(extent, procs)
            }
            Format::BlockOf(Some(m)) | Format::Cyclic(Some(m)) => m,
            Format::BlockOf(None) | Format::Cyclic(None) => return Err("the block size is not known".to_string()),
            Format::GenBlock | Format::Indirect => {
                return Err("GEN_BLOCK and INDIRECT distributions are not counted".to_string())
            }
            Format::Collapsed => unreachable!("skipped above"),
        };
        proc_shape.push(procs);
        let placement = match resolved.axes.get(target_dim).copied().unwrap_or(Axis::Unknown) {
            Axis::Replicated => Placement::Everywhere,
            Axis::Constant(value) => Placement::cyclic(block, procs, lower, Affine::constant(value)),
            Axis::Unknown => return Err("the alignment is not known at compile time".to_string()),
            Axis::Affine { source_dim, stride, offset } => {
                let position = match forms.get(source_dim) {
                    Some(SubscriptForm::Affine { index, coef, offset: sub_offset }) => {
                        let nest_index = &nest[*index];
                        let lo = nest_index.lo.ok_or("the loop bounds are not known")?;
                        let step = nest_index.step.ok_or("the loop step is not known")?;
                        let start = stride
                            .checked_mul(
                                coef.checked_mul(lo).and_then(|it| it.checked_add(*sub_offset)).ok_or("overflow")?,
                            )
                            .and_then(|it| it.checked_add(offset))
                            .ok_or("overflow")?;
                        let per_step =
                            stride.checked_mul(*coef).and_then(|it| it.checked_mul(step)).ok_or("overflow")?;
                        Affine::of(*index, start, per_step)
                    }
                    Some(SubscriptForm::Constant(value)) => Affine::constant(
                        stride.checked_mul(*value).and_then(|it| it.checked_add(offset)).ok_or("overflow")?,
                    ),
                    _ => return Err("a subscript is not affine in one loop index".to_string()),
                };
                Placement::cyclic(block, procs, lower, position)
            }
        };
        res.push(placement);
    }
    Ok(Some((proc_shape, res)))
}

fn transfer(model: &Model, report: &LoopReport, home: &Home, access: &Access) -> Option<Transfer> {
    if is_aligned(model, access) {
        return None;
    }
    let when = match access.attr {
        AccessAttr::Reference => When::Before,
        AccessAttr::Update => When::After,
    };
    let mut kind = transfer_kind(model, access);
    if let Some(NoOptimal::Halo { widths, .. }) = &access.reason {
        kind = TransferKind::Halo(widths.clone());
    }
    let mut result = Transfer { when, kind, count: None, uncounted: None };
    let counted = (|| -> Result<Option<TransferCount>, String> {
        let trips: Vec<u64> = report
            .nest
            .iter()
            .map(|it| it.trips().ok_or_else(|| it.unknown.clone().unwrap_or("the loop bounds are not known".into())))
            .collect::<Result<_, _>>()?;
        let Some((home_shape, home_places)) = placements(model, home.array, &home.subscripts, &report.nest)? else {
            return Ok(None);
        };
        let access_places = match placements(model, access.array, &access.subscripts, &report.nest)? {
            Some((shape, places)) if shape == home_shape => places,
            Some(_) => return Err("the array and the loop's home are on different processor arrangements".into()),
            // Not distributed: a copy is everywhere, nothing moves.
            None => vec![Placement::Everywhere; home_shape.len()],
        };
        let element_vars: Vec<usize> = access
            .subscripts
            .iter()
            .filter_map(|it| match it {
                SubscriptForm::Affine { index, coef, .. } if *coef != 0 => Some(*index),
                _ => None,
            })
            .collect();
        let (from, to) = match when {
            When::Before => (access_places, home_places),
            When::After => (home_places, access_places),
        };
        let problem = TransferProblem { trips, proc_shape: home_shape, from, to, element_vars };
        Ok(Some(count_transfer(&problem)))
    })();
    match counted {
        // A count of zero is kept: misaligned on paper, but this distribution keeps every element local.
        Ok(Some(count)) => result.count = Some(count),
        Ok(None) => result.uncounted = Some("the arrays are not distributed".into()),
        Err(why) => result.uncounted = Some(why),
    }
    Some(result)
}

/// Several offsets of the same array in one loop: a halo, not a misalignment.
fn detect_halos(model: &Model, report: &mut LoopReport) {
    let mut by_array: BTreeMap<SymbolId, Vec<usize>> = BTreeMap::new();
    for (idx, access) in report.accesses.iter().enumerate() {
        if access.attr == AccessAttr::Reference && access.optimal_alignment.is_some() {
            by_array.entry(access.array).or_default().push(idx);
        }
    }
    for (array, indices) in by_array {
        let Some(resolved) = model.resolve(array) else { continue };
        // Element offsets, per dimension, of each reference from the element aligned with the iteration.
        let mut per_access: Vec<Vec<i64>> = Vec::new();
        let mut consistent = true;
        for &idx in &indices {
            let optimal = report.accesses[idx].optimal_alignment.as_ref().expect("filtered above");
            if !equivalent_targets(model, optimal.target, resolved.target) {
                consistent = false;
                break;
            }
            let mut offsets = Vec::new();
            for (dim, &optimal_dim) in optimal.dims.iter().enumerate() {
                let Some((target_dim, stride, offset)) =
                    optimal_dim.filter(|_| is_distributed_dim(model, report.accesses[idx].array, dim))
                else {
                    // Collapsed or not distributed: every position along it is local.
                    offsets.push(0);
                    continue;
                };
                match resolved.axis_of(dim) {
                    Some((declared_dim, declared_stride, declared_offset))
                        if declared_dim == target_dim && declared_stride == stride && stride != 0 =>
                    {
                        let difference = declared_offset - offset;
                        if difference % stride != 0 {
                            consistent = false;
                        }
                        offsets.push(difference / stride);
                    }
                    _ => consistent = false,
                }
            }
            per_access.push(offsets);
        }
        // Accesses with different numbers of subscripts (a mistyped
        // reference) have no common halo (found by the `analysis` fuzz target).
        if !consistent || per_access.is_empty() || per_access.iter().any(|it| it.len() != per_access[0].len()) {
            continue;
        }
        let mut distinct = per_access.clone();
        // The home array read at another offset than the element it updates
        // needs its neighbours' elements: no ALIGN of it can change that.
        if report.home.as_ref().is_some_and(|home| home.array == array) {
            distinct.push(vec![0; per_access[0].len()]);
        }
        distinct.sort();
        distinct.dedup();
        if distinct.len() < 2 {
            continue;
        }
        let rank = per_access[0].len();
        let widths: Vec<(i64, i64)> = (0..rank)
            .map(|dim| {
                let low = per_access.iter().map(|it| it[dim]).min().unwrap_or(0).min(0);
                let high = per_access.iter().map(|it| it[dim]).max().unwrap_or(0).max(0);
                (-low, high)
            })
            .collect();
        for (position, &idx) in indices.iter().enumerate() {
            let offsets = per_access[position].clone();
            let access = &mut report.accesses[idx];
            access.reason = Some(NoOptimal::Halo { widths: widths.clone(), offsets, all: distinct.clone() });
            access.optimal = None;
            if let Some(transfer) = &mut access.transfer {
                transfer.kind = TransferKind::Halo(widths.clone());
            }
        }
    }
}

fn report_diagnostics(model: &Model, report: &LoopReport, diagnostics: &mut Vec<Diagnostic>) {
    if let Some(why) = &report.gave_up {
        diagnostics.push(Diagnostic::new(Code::AnalysisGaveUp, report.header, format!("loop not analysed: {why}")));
        return;
    }
    let mut halo_reported: Vec<SymbolId> = Vec::new();
    for access in &report.accesses {
        let symbol = model.symbol(access.array);
        let name = &symbol.name.text;
        let align_range = symbol.mapping.align.as_ref().map(|it| it.directive);
        match (&access.reason, &access.transfer) {
            (Some(NoOptimal::Halo { widths, .. }), _) => {
                if halo_reported.contains(&access.array) {
                    continue;
                }
                halo_reported.push(access.array);
                let shadow: Vec<String> = widths.iter().map(|(lo, hi)| format!("{lo}:{hi}")).collect();
                let covered = symbol.mapping.shadow.as_ref().is_some_and(|declared| {
                    declared.len() == widths.len()
                        && declared.iter().zip(widths).all(|(have, need)| have.0 >= need.0 && have.1 >= need.1)
                });
                let message = if covered {
                    format!(
                        "{name} is read with a halo of widths ({}) in this loop; the declared SHADOW covers it",
                        shadow.join(",")
                    )
                } else {
                    format!(
                        "{name} is read with a halo of widths ({}) in this loop: declare `!HPF$ SHADOW {name}({})` so the halo is exchanged once before the loop",
                        shadow.join(","),
                        shadow.join(",")
                    )
                };
                diagnostics.push(
                    Diagnostic::new(Code::HaloTransfer, access.range, message).with_related(report.header, "the loop"),
                );
            }
            (Some(NoOptimal::Broadcast { .. }), Some(transfer)) => {
                if transfer.count.as_ref().is_some_and(|it| it.moved_elements == 0) {
                    continue;
                }
                let count = transfer
                    .count
                    .as_ref()
                    .map(|it| format!(" ({} element(s) in {} message(s))", it.moved_elements, it.messages.len()))
                    .unwrap_or_default();
                diagnostics.push(
                    Diagnostic::new(
                        Code::Broadcast,
                        access.range,
                        format!("{}{count}", access.reason.as_ref().expect("matched").describe(name)),
                    )
                    .with_related(report.header, "the loop"),
                );
            }
            (Some(NoOptimal::Subscript { .. }) | Some(NoOptimal::NotExpressible(_)), _) if !access.is_home => {
                let reason = access.reason.as_ref().expect("matched");
                diagnostics.push(Diagnostic::new(Code::AnalysisGaveUp, access.range, reason.describe(name)));
            }
            (reason, Some(transfer)) => {
                // A misalignment: warn when elements move (or may move).
                if transfer.count.as_ref().is_some_and(|it| it.moved_elements == 0) {
                    continue;
                }
                let what = match transfer.when {
                    When::Before => "before the loop",
                    When::After => "after the loop",
                };
                let count = match &transfer.count {
                    Some(count) => format!(
                        "{} element(s) move {what} in {} message(s)",
                        count.moved_elements,
                        count.messages.len()
                    ),
                    None => format!("elements move {what} ({})", transfer.kind.describe()),
                };
                let home_name =
                    report.home.as_ref().map_or(String::new(), |it| model.symbol(it.array).name.text.clone());
                let mut message = format!("{name} is not aligned with the loop's home {home_name}: {count}");
                match (reason, &access.optimal_align) {
                    (None, Some(align)) => message.push_str(&format!("; the optimal alignment is `{align}`")),
                    (Some(reason), _) => message.push_str(&format!("; {}", reason.describe(name))),
                    (None, None) => {}
                }
                let mut diagnostic = Diagnostic::new(Code::MisalignedTransfer, access.range, message)
                    .with_related(report.header, "the loop");
                if let Some(range) = align_range {
                    diagnostic = diagnostic.with_related_in(
                        model.file_name(access.array.unit),
                        range,
                        format!("the ALIGN of {name}"),
                    );
                }
                diagnostics.push(diagnostic);
            }
            _ => {}
        }
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
