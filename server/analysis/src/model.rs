//! The semantic model of a file: program units, their symbols (named
//! constants, arrays, templates, processor arrangements) and the mapping
//! of every array: its ALIGN chain resolved to the final alignment target,
//! the target's distribution and processor arrangement.
//!
//! Names are case-insensitive and scoped per unit: a unit sees its own
//! symbols, then its host's, then those of the modules it USEs: defined in
//! the same file, or in another file that a [`ModuleResolver`] finds (the
//! language server's workspace, the command line's directory). Units of
//! other files come after the file's own units and are marked with their
//! origin; nothing is reported about them here, only used.

use std::collections::HashMap;
use std::sync::Arc;

use syntax::directive::{
    AlignSpec, AttrKind, DirectiveBody, DistFormatKind, DistSpec, Mapping as MappingSyntax, MappingForm,
};
use syntax::{Code, Diagnostic, Expr, Name, SourceFile, Subscript, TextRange, UnitKind};

use crate::eval::{eval_int, linear, ConstEnv, NotFolded, NotFoldedReason};

pub type UnitId = usize;

/// A symbol: the unit that declares it and its index there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SymbolId {
    pub unit: UnitId,
    pub index: usize,
}

/// Settings that change what the model can know.
#[derive(Clone, Copy, Debug)]
pub struct ModelConfig {
    /// The value of `NUMBER_OF_PROCESSORS()`; `None` leaves it unknown.
    pub number_of_processors: Option<i64>,
}

#[derive(Clone, Debug)]
pub struct Model {
    /// The file's own units first (in [`flatten_units`] order), then the
    /// modules of other files they USE (see [`UnitModel::origin`]).
    pub units: Vec<UnitModel>,
    pub config: ModelConfig,
    /// The other files whose modules are in `units`.
    pub externals: Vec<Arc<ExternalFile>>,
}

/// Another file whose modules the analysed file USEs: the editor's text
/// when it is open, else the file on disk.
#[derive(Debug)]
pub struct ExternalFile {
    /// How the caller names the file (a path or a URI); diagnostics'
    /// related places in it carry this name.
    pub name: Arc<str>,
    pub text: Arc<str>,
    pub file: SourceFile,
}

impl ExternalFile {
    pub fn parse(name: impl Into<Arc<str>>, text: impl Into<Arc<str>>, form: syntax::SourceForm) -> ExternalFile {
        let text: Arc<str> = text.into();
        let file = syntax::parse(&text, form);
        ExternalFile { name: name.into(), text, file }
    }

    /// The module named `key` (lower case) that this file defines.
    pub fn module(&self, key: &str) -> Option<&syntax::Unit> {
        self.file
            .units
            .iter()
            .find(|it| it.kind == UnitKind::Module && it.name.as_ref().is_some_and(|name| name.key() == key))
            .map(|it| &**it)
    }
}

/// Finds the file that defines a module the analysed file USEs but does not
/// define, by the module's name in lower case.
pub trait ModuleResolver {
    fn find_module(&self, key: &str) -> Option<Arc<ExternalFile>>;
}

/// No other files: modules not in the file stay unknown.
pub struct NoModules;

impl ModuleResolver for NoModules {
    fn find_module(&self, _key: &str) -> Option<Arc<ExternalFile>> {
        None
    }
}

/// At most this many modules are taken from other files (USE chains of a
/// pathological workspace stay bounded).
pub const MAX_EXTERNAL_MODULES: usize = 256;

#[derive(Clone, Debug)]
pub struct UnitModel {
    pub kind: UnitKind,
    pub name: Option<Name>,
    pub range: TextRange,
    pub parent: Option<UnitId>,
    /// Modules that the unit USEs (of this file or of others).
    pub modules_used: Vec<UnitId>,
    /// The unit USEs a module that was not found: unknown names may come from it.
    pub uses_unknown_module: bool,
    /// The unit USEs the intrinsic module ISO_FORTRAN_ENV, whose kind
    /// constants (`INT64`, `REAL64`, ...) fold.
    pub uses_iso_fortran_env: bool,
    /// `None` for the file's own units; else the index in [`Model::externals`]
    /// of the file this module comes from (its ranges are in that file).
    pub origin: Option<usize>,
    pub symbols: Vec<Symbol>,
    /// REALIGN / REDISTRIBUTE points, in text order.
    pub remaps: Vec<Remap>,
    scope: HashMap<String, usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymbolKind {
    /// A variable: a scalar when its shape is empty.
    Variable,
    /// A named constant (PARAMETER) and its value when it folds.
    Constant(Option<i64>),
    Template,
    Processors,
}

impl SymbolKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SymbolKind::Variable => "variable",
            SymbolKind::Constant(_) => "named constant",
            SymbolKind::Template => "template",
            SymbolKind::Processors => "processor arrangement",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Symbol {
    /// The declaring occurrence.
    pub name: Name,
    pub kind: SymbolKind,
    /// `real`, `integer`, ...; empty for templates, processors and undeclared types.
    pub type_name: String,
    /// The kind or length after the type's name (`Decl::type_kind`).
    pub type_kind: String,
    /// The kind `type_kind` gives, folded: `(8)`, `*8`, `(KIND=8)`, or
    /// `(KIND=DP)` with `DP` a named constant that folds (`KIND(1.0D0)`,
    /// `SELECTED_REAL_KIND(15)`, ...); `None` for the default kind or one
    /// that does not fold.
    pub kind_value: Option<i64>,
    /// Empty for scalars.
    pub shape: Vec<Dim>,
    pub is_dummy: bool,
    pub mapping: Mapping,
}

impl Symbol {
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    pub fn is_array(&self) -> bool {
        self.kind == SymbolKind::Variable && !self.shape.is_empty()
    }
}

/// One dimension of a declared shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dim {
    pub lo: Bound,
    pub hi: Bound,
    pub range: TextRange,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bound {
    Known(i64),
    /// An expression that does not fold (a dummy argument's size, ...), as written.
    Unknown(String),
    /// `:` or `*` (assumed shape or size, deferred shape).
    Assumed,
}

impl Bound {
    pub fn known(&self) -> Option<i64> {
        match self {
            Bound::Known(value) => Some(*value),
            _ => None,
        }
    }
}

impl Dim {
    pub fn extent(&self) -> Option<i64> {
        Some((self.hi.known()? - self.lo.known()? + 1).max(0))
    }

    pub fn render(&self) -> String {
        let part = |bound: &Bound| match bound {
            Bound::Known(value) => value.to_string(),
            Bound::Unknown(text) => text.clone(),
            Bound::Assumed => String::new(),
        };
        match (&self.lo, &self.hi) {
            (Bound::Known(1), hi) => part(hi),
            (Bound::Assumed, Bound::Assumed) => ":".to_string(),
            (lo, hi) => format!("{}:{}", part(lo), part(hi)),
        }
    }
}

/// How one array or template is mapped, as its own directives say.
#[derive(Clone, Debug, Default)]
pub struct Mapping {
    pub align: Option<Alignment>,
    pub distribution: Option<Distribution>,
    pub dynamic: bool,
    /// INHERIT: the dummy takes the mapping of its actual argument.
    pub inherit: Option<TextRange>,
    /// SHADOW widths per dimension (low, high), when declared.
    pub shadow: Option<Vec<(i64, i64)>>,
}

/// An ALIGN, as one step of a chain: per dimension of the target, what the
/// alignee puts there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alignment {
    pub target: SymbolId,
    pub axes: Vec<Axis>,
    /// The whole directive, the alignee's name and the target (with its subscripts) in it.
    pub directive: TextRange,
    pub alignee: TextRange,
    pub target_range: TextRange,
}

/// What one dimension of an alignment target receives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    /// Element `i` of the alignee's dimension `source_dim` (zero-based) goes
    /// to target index `stride * i + offset`.
    Affine { source_dim: usize, stride: i64, offset: i64 },
    /// Every element sits at this index of the target dimension.
    Constant(i64),
    /// `*`: every element is replicated along this target dimension.
    Replicated,
    /// Not known at compile time (a non-constant or non-affine subscript).
    Unknown,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Distribution {
    pub formats: Vec<Format>,
    /// The processor arrangement named by ONTO.
    pub onto: Option<SymbolId>,
    /// The whole directive, the distributee's name and the ONTO clause in it.
    pub directive: TextRange,
    pub distributee: TextRange,
    pub onto_range: Option<TextRange>,
    /// Transcriptive `DISTRIBUTE *` or descriptive `*(...)`: for dummies.
    pub descriptive: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `BLOCK`: blocks of `ceil(extent / p)`.
    Block,
    /// `BLOCK(m)`; `None` when `m` does not fold.
    BlockOf(Option<i64>),
    /// `CYCLIC(m)` (`CYCLIC` is `CYCLIC(1)`); `None` when `m` does not fold.
    Cyclic(Option<i64>),
    /// `*`: not distributed.
    Collapsed,
    GenBlock,
    Indirect,
}

impl Format {
    pub fn render(self) -> String {
        match self {
            Format::Block => "BLOCK".into(),
            Format::BlockOf(Some(m)) => format!("BLOCK({m})"),
            Format::BlockOf(None) => "BLOCK(?)".into(),
            Format::Cyclic(Some(1)) => "CYCLIC".into(),
            Format::Cyclic(Some(m)) => format!("CYCLIC({m})"),
            Format::Cyclic(None) => "CYCLIC(?)".into(),
            Format::Collapsed => "*".into(),
            Format::GenBlock => "GEN_BLOCK".into(),
            Format::Indirect => "INDIRECT".into(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remap {
    pub symbol: SymbolId,
    pub directive: TextRange,
    pub kind: RemapKind,
    /// The mapping the array takes from here on (in text order).
    pub to: RemapTo,
}

/// The new mapping of a REALIGN (its alignment) or REDISTRIBUTE (its distribution).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RemapTo {
    Align(Alignment),
    Distribute(Distribution),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RemapKind {
    Realign,
    Redistribute,
}

/// The mapping of an array after its ALIGN chain is followed to the end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedMapping {
    /// The final alignment target (the array itself when it is aligned with nothing).
    pub target: SymbolId,
    /// Per dimension of the target.
    pub axes: Vec<Axis>,
}

impl ResolvedMapping {
    /// The target dimension that the alignee's dimension `dim` maps to, with
    /// its stride and offset; `None` when the dimension is collapsed.
    pub fn axis_of(&self, dim: usize) -> Option<(usize, i64, i64)> {
        self.axes.iter().enumerate().find_map(|(target_dim, axis)| match *axis {
            Axis::Affine { source_dim, stride, offset } if source_dim == dim => Some((target_dim, stride, offset)),
            _ => None,
        })
    }
}

impl Model {
    pub fn symbol(&self, id: SymbolId) -> &Symbol {
        &self.units[id.unit].symbols[id.index]
    }

    fn symbol_mut(&mut self, id: SymbolId) -> &mut Symbol {
        &mut self.units[id.unit].symbols[id.index]
    }

    /// Looks `key` (lower case) up from `unit`: own symbols, host, used modules.
    pub fn lookup(&self, unit: UnitId, key: &str) -> Option<SymbolId> {
        let mut visited = Vec::new();
        self.lookup_in(unit, key, &mut visited)
    }

    fn lookup_in(&self, unit: UnitId, key: &str, visited: &mut Vec<UnitId>) -> Option<SymbolId> {
        if visited.contains(&unit) {
            return None;
        }
        visited.push(unit);
        let model = &self.units[unit];
        if let Some(&index) = model.scope.get(key) {
            return Some(SymbolId { unit, index });
        }
        for &module in &model.modules_used {
            if let Some(found) = self.lookup_in(module, key, visited) {
                return Some(found);
            }
        }
        model.parent.and_then(|parent| self.lookup_in(parent, key, visited))
    }

    /// The units of the analysed file itself (the first ones).
    pub fn local_units(&self) -> usize {
        self.units.iter().take_while(|it| it.origin.is_none()).count()
    }

    /// Whether `id` is declared in another file (a module USEd from it):
    /// its ranges are not in the analysed text, and no edit may touch it.
    pub fn is_external(&self, id: SymbolId) -> bool {
        self.units[id.unit].origin.is_some()
    }

    /// The other file `unit` comes from, if any.
    pub fn external_file(&self, unit: UnitId) -> Option<&Arc<ExternalFile>> {
        self.units[unit].origin.map(|it| &self.externals[it])
    }

    /// The name of the other file `unit` comes from, for [`syntax::Related::file`].
    pub fn file_name(&self, unit: UnitId) -> Option<Arc<str>> {
        self.external_file(unit).map(|it| it.name.clone())
    }

    /// Whether a name unknown in `unit` may still exist (USE of a module from another file).
    pub fn may_know_more(&self, unit: UnitId) -> bool {
        let mut current = Some(unit);
        while let Some(id) = current {
            let model = &self.units[id];
            if model.uses_unknown_module || model.modules_used.iter().any(|&it| self.units[it].uses_unknown_module) {
                return true;
            }
            current = model.parent;
        }
        false
    }

    /// Follows the ALIGN chain of `id` to its final target, composing the
    /// affine maps. `None` when the chain has a cycle.
    pub fn resolve(&self, id: SymbolId) -> Option<ResolvedMapping> {
        let symbol = self.symbol(id);
        let mut axes: Vec<Axis> =
            (0..symbol.rank()).map(|dim| Axis::Affine { source_dim: dim, stride: 1, offset: 0 }).collect();
        let mut current = id;
        let mut seen = vec![id];
        while let Some(align) = &self.symbol(current).mapping.align {
            if seen.contains(&align.target) {
                return None;
            }
            seen.push(align.target);
            // `axes` maps the alignee into `current`; compose with current -> target.
            axes = align
                .axes
                .iter()
                .map(|outer| match *outer {
                    Axis::Affine { source_dim, stride, offset } => match axes.get(source_dim).copied() {
                        Some(Axis::Affine { source_dim: inner_dim, stride: inner_stride, offset: inner_offset }) => {
                            match (stride.checked_mul(inner_stride), stride.checked_mul(inner_offset)) {
                                (Some(new_stride), Some(scaled)) => match scaled.checked_add(offset) {
                                    Some(new_offset) => {
                                        Axis::Affine { source_dim: inner_dim, stride: new_stride, offset: new_offset }
                                    }
                                    None => Axis::Unknown,
                                },
                                _ => Axis::Unknown,
                            }
                        }
                        Some(Axis::Constant(value)) => stride
                            .checked_mul(value)
                            .and_then(|it| it.checked_add(offset))
                            .map_or(Axis::Unknown, Axis::Constant),
                        Some(Axis::Replicated) => Axis::Replicated,
                        Some(Axis::Unknown) | None => Axis::Unknown,
                    },
                    other => other,
                })
                .collect();
            current = align.target;
        }
        Some(ResolvedMapping { target: current, axes })
    }

    /// The distribution that applies to `id`: its final target's.
    pub fn distribution_of(&self, id: SymbolId) -> Option<(SymbolId, &Distribution)> {
        let resolved = self.resolve(id)?;
        let distribution = self.symbol(resolved.target).mapping.distribution.as_ref()?;
        Some((resolved.target, distribution))
    }

    /// The model as it maps arrays at `offset` of `unit`: the remaps of the
    /// unit written before `offset` applied in text order, each giving its
    /// array the new alignment (REALIGN) or distribution (REDISTRIBUTE) in
    /// place of the old one, so arrays aligned with it follow. `None` when
    /// no remap comes before `offset` (the declared mapping holds).
    ///
    /// Text order is program order only for remaps outside loops and
    /// branches; where a remap runs on some paths only, the loops after it
    /// are analysed with its mapping.
    pub fn remapped_at(&self, unit: UnitId, offset: usize) -> Option<Model> {
        let remaps = &self.units.get(unit)?.remaps;
        let before = remaps.iter().take_while(|it| it.directive.start < offset).count();
        if before == 0 {
            return None;
        }
        let mut model = self.clone();
        for remap in &remaps[..before] {
            let mapping = &mut model.symbol_mut(remap.symbol).mapping;
            match &remap.to {
                RemapTo::Align(alignment) => {
                    mapping.align = Some(alignment.clone());
                    mapping.distribution = None;
                }
                RemapTo::Distribute(distribution) => {
                    mapping.align = None;
                    mapping.distribution = Some(distribution.clone());
                }
            }
        }
        Some(model)
    }

    /// The offsets of `unit` where the mapping changes: the starts of its
    /// remap directives, in text order, each once.
    pub fn remap_points(&self, unit: UnitId) -> Vec<usize> {
        let mut points: Vec<usize> = self.units[unit].remaps.iter().map(|it| it.directive.start).collect();
        points.dedup();
        points
    }

    /// All symbols, unit by unit.
    pub fn symbols(&self) -> impl Iterator<Item = (SymbolId, &Symbol)> {
        self.units.iter().enumerate().flat_map(|(unit, model)| {
            model.symbols.iter().enumerate().map(move |(index, symbol)| (SymbolId { unit, index }, symbol))
        })
    }
}

/// Folding environment of one unit, during and after building.
struct UnitEnv<'a> {
    model: &'a Model,
    unit: UnitId,
}

impl UnitEnv<'_> {
    /// A kind constant of ISO_FORTRAN_ENV (gfortran's values), when the
    /// unit or a host USEs the module and does not declare the name itself.
    fn iso_fortran_env_kind(&self, key: &str) -> Option<i64> {
        let mut unit = Some(self.unit);
        let mut uses = false;
        while let Some(id) = unit {
            uses |= self.model.units[id].uses_iso_fortran_env;
            unit = self.model.units[id].parent;
        }
        if !uses {
            return None;
        }
        match key {
            "int8" => Some(1),
            "int16" => Some(2),
            "int32" | "real32" => Some(4),
            "int64" | "real64" => Some(8),
            "real128" => Some(16),
            _ => None,
        }
    }
}

impl ConstEnv for UnitEnv<'_> {
    fn constant(&self, key: &str) -> Option<i64> {
        let Some(id) = self.model.lookup(self.unit, key) else {
            return self.iso_fortran_env_kind(key);
        };
        match self.model.symbol(id).kind {
            SymbolKind::Constant(value) => value,
            _ => None,
        }
    }

    fn number_of_processors(&self) -> Option<i64> {
        self.model.config.number_of_processors
    }
}

/// The units of `file` in model order (the index is the [`UnitId`]), each
/// with its host: depth first, interface bodies without a host.
pub fn flatten_units(file: &SourceFile) -> Vec<(&syntax::Unit, Option<UnitId>)> {
    let mut res = Vec::new();
    let mut stack: Vec<(&syntax::Unit, Option<UnitId>)> = file.units.iter().rev().map(|it| (&**it, None)).collect();
    while let Some((unit, parent)) = stack.pop() {
        let id = res.len();
        res.push((unit, parent));
        // Interface bodies have no host association (IMPORT aside).
        stack.extend(unit.interfaces.iter().rev().map(|it| (it, None)));
        stack.extend(unit.contains.iter().rev().map(|it| (it, Some(id))));
    }
    res
}

/// Builds the model of `file` and reports the mapping diagnostics, with
/// no modules from other files.
pub fn build_model(file: &SourceFile, config: ModelConfig, diagnostics: &mut Vec<Diagnostic>) -> Model {
    build_model_with(file, config, &NoModules, diagnostics)
}

/// Builds the model of `file`, taking the modules it USEs and does not
/// define from `resolver`, and reports the mapping diagnostics of the
/// file's own units.
pub fn build_model_with(
    file: &SourceFile,
    config: ModelConfig,
    resolver: &dyn ModuleResolver,
    diagnostics: &mut Vec<Diagnostic>,
) -> Model {
    let mut model = Model { units: Vec::new(), config, externals: Vec::new() };
    let flat = flatten_units(file);
    let mut syntax_units: Vec<&syntax::Unit> = flat.iter().map(|(unit, _)| *unit).collect();
    for (unit, parent) in &flat {
        model.units.push(UnitModel {
            kind: unit.kind,
            name: unit.name.clone(),
            range: unit.range,
            parent: *parent,
            modules_used: Vec::new(),
            uses_unknown_module: false,
            uses_iso_fortran_env: false,
            origin: None,
            symbols: Vec::new(),
            remaps: Vec::new(),
            scope: HashMap::new(),
        });
    }
    let local_units = model.units.len();
    // Modules of other files, and the modules those USE in turn.
    let defines = |units: &[&syntax::Unit], key: &str| {
        units.iter().any(|it| it.kind == UnitKind::Module && it.name.as_ref().is_some_and(|name| name.key() == key))
    };
    let mut found: Vec<(String, Arc<ExternalFile>)> = Vec::new();
    let mut pending: Vec<String> = syntax_units.iter().flat_map(|it| it.uses.iter().map(|used| used.key())).collect();
    while let Some(key) = pending.pop() {
        if found.len() >= MAX_EXTERNAL_MODULES || defines(&syntax_units, &key) || found.iter().any(|it| it.0 == key) {
            continue;
        }
        let Some(external) = resolver.find_module(&key) else { continue };
        let Some(module) = external.module(&key) else { continue };
        pending.extend(module.uses.iter().map(|it| it.key()));
        found.push((key, external));
    }
    for (key, external) in &found {
        let origin = match model.externals.iter().position(|it| Arc::ptr_eq(it, external)) {
            Some(index) => index,
            None => {
                model.externals.push(external.clone());
                model.externals.len() - 1
            }
        };
        let module = external.module(key).expect("found above");
        syntax_units.push(module);
        model.units.push(UnitModel {
            kind: module.kind,
            name: module.name.clone(),
            range: module.range,
            parent: None,
            modules_used: Vec::new(),
            uses_unknown_module: false,
            uses_iso_fortran_env: false,
            origin: Some(origin),
            symbols: Vec::new(),
            remaps: Vec::new(),
            scope: HashMap::new(),
        });
    }
    // USE: the file's own modules first, then those of other files.
    for (id, unit) in syntax_units.iter().enumerate() {
        for used in &unit.uses {
            if used.key() == "iso_fortran_env" {
                model.units[id].uses_iso_fortran_env = true;
            }
            let module = model.units.iter().position(|it| {
                it.kind == UnitKind::Module && it.name.as_ref().is_some_and(|name| name.key() == used.key())
            });
            match module {
                Some(module) if module != id => model.units[id].modules_used.push(module),
                _ => model.units[id].uses_unknown_module = true,
            }
        }
    }
    // Modules first, so that their constants fold before their users' do;
    // the modules of other files before all (this file's may USE them).
    // What is wrong in other files is reported when they are analysed.
    let mut elsewhere = Vec::new();
    let mut order: Vec<UnitId> = (0..model.units.len()).collect();
    order.sort_by_key(|&id| (id < local_units, model.units[id].kind != UnitKind::Module, id));
    for &id in &order {
        declare_symbols(&mut model, id, syntax_units[id]);
    }
    apply_implicit_types(&mut model, &syntax_units);
    for &id in &order {
        let out = if id < local_units { &mut *diagnostics } else { &mut elsewhere };
        declare_directive_objects(&mut model, id, syntax_units[id], out);
    }
    for &id in &order {
        let out = if id < local_units { &mut *diagnostics } else { &mut elsewhere };
        apply_mapping_directives(&mut model, id, syntax_units[id], out);
    }
    crate::mapping_checks::check(&model, &syntax_units[..local_units], diagnostics);
    model
}

fn declare(model: &mut Model, unit: UnitId, name: &Name) -> usize {
    let key = name.key();
    if let Some(&index) = model.units[unit].scope.get(&key) {
        return index;
    }
    let symbols = &mut model.units[unit].symbols;
    symbols.push(Symbol {
        name: name.clone(),
        kind: SymbolKind::Variable,
        type_name: String::new(),
        type_kind: String::new(),
        kind_value: None,
        shape: Vec::new(),
        is_dummy: false,
        mapping: Mapping::default(),
    });
    let index = symbols.len() - 1;
    model.units[unit].scope.insert(key, index);
    index
}

fn shape(model: &Model, unit: UnitId, dims: &[Subscript]) -> Vec<Dim> {
    let env = UnitEnv { model, unit };
    let bound = |expr: Option<&Expr>, default: Bound| match expr {
        None => default,
        Some(expr) => match eval_int(expr, &env) {
            Ok(value) => Bound::Known(value),
            Err(_) => Bound::Unknown(render_expr(expr)),
        },
    };
    dims.iter()
        .map(|dim| match dim {
            Subscript::Expr(expr) => {
                Dim { lo: Bound::Known(1), hi: bound(Some(expr), Bound::Assumed), range: expr.range }
            }
            Subscript::Range { lo, hi, range, .. } => Dim {
                lo: bound(lo.as_ref(), if lo.is_none() && hi.is_some() { Bound::Known(1) } else { Bound::Assumed }),
                hi: bound(hi.as_ref(), Bound::Assumed),
                range: *range,
            },
            Subscript::Star(range) => Dim { lo: Bound::Known(1), hi: Bound::Assumed, range: *range },
            Subscript::Keyword { value, .. } => {
                Dim { lo: Bound::Known(1), hi: bound(Some(value), Bound::Assumed), range: value.range }
            }
        })
        .collect()
}

/// A compact rendering of an expression, for messages and unknown bounds.
pub fn render_expr(expr: &Expr) -> String {
    use syntax::{BinaryOp, ExprKind, UnaryOp};
    match &expr.kind {
        ExprKind::Int(value) => value.to_string(),
        ExprKind::Literal(text) => text.clone(),
        ExprKind::Name(name) => name.text.clone(),
        ExprKind::Ref { name, args } => {
            let args: Vec<String> = args.iter().map(render_subscript).collect();
            format!("{}({})", name.text, args.join(","))
        }
        ExprKind::Unary { op, operand } => {
            let op = match op {
                UnaryOp::Neg => "-",
                UnaryOp::Plus => "+",
                UnaryOp::Not => ".not.",
            };
            format!("{op}{}", render_expr(operand))
        }
        ExprKind::Binary { op, lhs, rhs } => {
            let op = match op {
                BinaryOp::Add => "+",
                BinaryOp::Sub => "-",
                BinaryOp::Mul => "*",
                BinaryOp::Div => "/",
                BinaryOp::Pow => "**",
                BinaryOp::Other => " ? ",
            };
            format!("{}{op}{}", render_expr(lhs), render_expr(rhs))
        }
        ExprKind::Paren(inner) => format!("({})", render_expr(inner)),
        ExprKind::Other(_) => "...".to_string(),
    }
}

pub fn render_subscript(subscript: &Subscript) -> String {
    match subscript {
        Subscript::Expr(expr) => render_expr(expr),
        Subscript::Range { lo, hi, stride, .. } => {
            let part = |it: &Option<Expr>| it.as_ref().map(render_expr).unwrap_or_default();
            match stride {
                Some(stride) => format!("{}:{}:{}", part(lo), part(hi), render_expr(stride)),
                None => format!("{}:{}", part(lo), part(hi)),
            }
        }
        Subscript::Star(_) => "*".to_string(),
        Subscript::Keyword { name, value } => format!("{}={}", name.text, render_expr(value)),
    }
}

/// Declarations: named constants (folded in order), variables and their shapes.
fn declare_symbols(model: &mut Model, unit: UnitId, syntax_unit: &syntax::Unit) {
    for dummy in &syntax_unit.dummies {
        let index = declare(model, unit, dummy);
        model.units[unit].symbols[index].is_dummy = true;
    }
    for decl in &syntax_unit.decls {
        let is_parameter = decl.attrs.iter().any(|it| matches!(it, syntax::DeclAttr::Parameter));
        let dimension = decl.attrs.iter().find_map(|it| match it {
            syntax::DeclAttr::Dimension(dims) => Some(dims),
            _ => None,
        });
        for entity in &decl.entities {
            let index = declare(model, unit, &entity.name);
            let dims = entity.dims.as_ref().or(dimension);
            let shape = dims.map(|dims| shape(model, unit, dims));
            let value = if is_parameter {
                entity.init.as_ref().map(|init| eval_int(init, &UnitEnv { model, unit }).ok())
            } else {
                None
            };
            // CHARACTER*6 gives a length, not a kind.
            let kind_value =
                (decl.type_name != "character").then(|| fold_kind(&decl.type_kind, &UnitEnv { model, unit })).flatten();
            let symbol = &mut model.units[unit].symbols[index];
            // A variable first seen in a directive or a DIMENSION statement
            // keeps its better name occurrence: the type declaration's.
            if !decl.type_name.is_empty() {
                symbol.type_name = decl.type_name.clone();
                symbol.type_kind = decl.type_kind.clone();
                symbol.kind_value = kind_value;
                if !symbol.is_dummy {
                    symbol.name = entity.name.clone();
                }
            }
            if let Some(shape) = shape {
                symbol.shape = shape;
            }
            if is_parameter {
                symbol.kind = SymbolKind::Constant(value.flatten());
            }
        }
    }
}

/// The kind a type's kind selector gives (`Decl::type_kind`: lower case,
/// no blanks): `(8)`, `*8`, `(kind=8)`, `(kind=dp)` or `(dp)` with `dp` a
/// named constant that folds. A length (`(len=6)`, CHARACTER*6) is not a kind.
fn fold_kind(type_kind: &str, env: &dyn ConstEnv) -> Option<i64> {
    let selector = match type_kind.strip_prefix('*') {
        Some(star) => star,
        None => type_kind.strip_prefix('(')?.strip_suffix(')')?,
    };
    let value = selector.strip_prefix("kind=").unwrap_or(selector);
    if value.contains(['=', ',']) {
        return None;
    }
    value.parse().ok().or_else(|| env.constant(value))
}

/// Gives the variables and named constants that no type declaration names
/// the type of their first letter: the IMPLICIT statements of their unit,
/// then of its hosts outward (IMPLICIT NONE stops the search: the name
/// stays untyped), else Fortran's default (I to N INTEGER, others REAL).
/// F77 codes rely on it (`IMPLICIT DOUBLE PRECISION (A-H,O-Z)` with
/// `DIMENSION U(N)`), and the backend needs every distributed array's type.
fn apply_implicit_types(model: &mut Model, syntax_units: &[&syntax::Unit]) {
    for unit in 0..model.units.len() {
        let mut scopes = vec![unit];
        while let Some(parent) = model.units[*scopes.last().expect("one scope")].parent {
            scopes.push(parent);
        }
        let rule_for = |letter: char| -> Option<(String, String)> {
            for &scope in &scopes {
                let rules = &syntax_units.get(scope)?.implicit;
                if rules.iter().any(syntax::ImplicitRule::is_none) {
                    return None;
                }
                if let Some(rule) = rules.iter().rev().find(|it| it.covers(letter)) {
                    return Some((rule.type_name.clone(), rule.type_kind.clone()));
                }
            }
            let default = if ('i'..='n').contains(&letter) { "integer" } else { "real" };
            Some((default.to_string(), String::new()))
        };
        let mut typed = Vec::new();
        for (index, symbol) in model.units[unit].symbols.iter().enumerate() {
            let untyped =
                symbol.type_name.is_empty() && matches!(symbol.kind, SymbolKind::Variable | SymbolKind::Constant(_));
            let letter = symbol.name.key().chars().next().unwrap_or('_');
            if let Some((type_name, type_kind)) = untyped.then(|| rule_for(letter)).flatten() {
                typed.push((index, type_name, type_kind));
            }
        }
        for (index, type_name, type_kind) in typed {
            let kind_value =
                (type_name != "character").then(|| fold_kind(&type_kind, &UnitEnv { model, unit })).flatten();
            let symbol = &mut model.units[unit].symbols[index];
            symbol.type_name = type_name;
            symbol.type_kind = type_kind;
            symbol.kind_value = kind_value;
        }
    }
}

/// PROCESSORS and TEMPLATE directives declare names.
fn declare_directive_objects(
    model: &mut Model,
    unit: UnitId,
    syntax_unit: &syntax::Unit,
    diagnostics: &mut Vec<Diagnostic>,
) {
    for directive in &syntax_unit.directives {
        let DirectiveBody::Mapping(mapping) = &directive.body else { continue };
        let kind = if mapping.attr(|it| matches!(it, AttrKind::Processors)).is_some() {
            SymbolKind::Processors
        } else if mapping.attr(|it| matches!(it, AttrKind::Template)).is_some() {
            SymbolKind::Template
        } else {
            continue;
        };
        let dimension = mapping.attrs.iter().find_map(|it| match &it.kind {
            AttrKind::Dimension(dims) => Some(dims),
            _ => None,
        });
        for entity in &mapping.entities {
            let key = entity.name.key();
            if let Some(&index) = model.units[unit].scope.get(&key) {
                let existing = &model.units[unit].symbols[index];
                diagnostics.push(
                    Diagnostic::new(
                        Code::Redeclared,
                        entity.name.range,
                        format!("`{}` is already declared as a {}", entity.name.text, existing.kind.as_str()),
                    )
                    .with_related(existing.name.range, "first declared here"),
                );
                continue;
            }
            let dims = entity.args.as_ref().or(dimension);
            let shape = dims.map(|dims| shape(model, unit, dims)).unwrap_or_default();
            let index = declare(model, unit, &entity.name);
            let symbol = &mut model.units[unit].symbols[index];
            symbol.kind = kind;
            symbol.shape = shape;
        }
    }
}

fn apply_mapping_directives(
    model: &mut Model,
    unit: UnitId,
    syntax_unit: &syntax::Unit,
    diagnostics: &mut Vec<Diagnostic>,
) {
    for directive in &syntax_unit.directives {
        let DirectiveBody::Mapping(mapping) = &directive.body else { continue };
        for entity in &mapping.entities {
            let is_declaration = mapping.attr(|it| matches!(it, AttrKind::Processors | AttrKind::Template)).is_some();
            let Some(id) = resolve_name(model, unit, &entity.name, diagnostics) else { continue };
            for attr in &mapping.attrs {
                match &attr.kind {
                    AttrKind::Align(spec) | AttrKind::Realign(spec) => {
                        let is_realign = matches!(attr.kind, AttrKind::Realign(_));
                        // `ALIGN WITH T(I) :: S(*, I), P(I)`: each alignee's own source list.
                        let own_sources;
                        let spec = match &entity.args {
                            Some(args) if spec.sources.is_none() && !is_declaration => {
                                own_sources = AlignSpec { sources: Some(args.clone()), ..spec.clone() };
                                &own_sources
                            }
                            _ => spec,
                        };
                        let Some(mut alignment) =
                            alignment(model, unit, id, spec, directive.range, mapping, diagnostics)
                        else {
                            continue;
                        };
                        alignment.alignee = entity.name.range;
                        if is_realign {
                            model.units[unit].remaps.push(Remap {
                                symbol: id,
                                directive: directive.range,
                                kind: RemapKind::Realign,
                                to: RemapTo::Align(alignment),
                            });
                        } else if let Some(previous) = &model.symbol(id).mapping.align {
                            diagnostics.push(
                                Diagnostic::new(
                                    Code::Redeclared,
                                    entity.name.range,
                                    format!("`{}` is aligned twice", entity.name.text),
                                )
                                .with_related(previous.directive, "first ALIGN here"),
                            );
                        } else {
                            model.symbol_mut(id).mapping.align = Some(alignment);
                        }
                    }
                    AttrKind::Distribute(spec) | AttrKind::Redistribute(spec) => {
                        let is_redistribute = matches!(attr.kind, AttrKind::Redistribute(_));
                        let mut distribution = distribution(model, unit, spec, directive.range, diagnostics);
                        distribution.distributee = entity.name.range;
                        if spec.formats.is_none() && mapping.form == MappingForm::Statement {
                            block_in_every_dimension(model, id, entity, &mut distribution, diagnostics);
                        }
                        if is_redistribute {
                            model.units[unit].remaps.push(Remap {
                                symbol: id,
                                directive: directive.range,
                                kind: RemapKind::Redistribute,
                                to: RemapTo::Distribute(distribution),
                            });
                        } else if let Some(previous) = &model.symbol(id).mapping.distribution {
                            diagnostics.push(
                                Diagnostic::new(
                                    Code::Redeclared,
                                    entity.name.range,
                                    format!("`{}` is distributed twice", entity.name.text),
                                )
                                .with_related(previous.directive, "first DISTRIBUTE here"),
                            );
                        } else {
                            model.symbol_mut(id).mapping.distribution = Some(distribution);
                        }
                    }
                    AttrKind::Dynamic => model.symbol_mut(id).mapping.dynamic = true,
                    AttrKind::Inherit => model.symbol_mut(id).mapping.inherit = Some(directive.range),
                    AttrKind::Shadow(widths) => {
                        let widths = entity.args.as_ref().filter(|it| !it.is_empty()).unwrap_or(widths);
                        let env = UnitEnv { model, unit };
                        let shadow = widths
                            .iter()
                            .map(|width| match width {
                                Subscript::Expr(expr) => {
                                    let value = eval_int(expr, &env).unwrap_or(0);
                                    (value, value)
                                }
                                Subscript::Range { lo, hi, .. } => {
                                    let fold = |it: &Option<Expr>| {
                                        it.as_ref().and_then(|it| eval_int(it, &env).ok()).unwrap_or(0)
                                    };
                                    (fold(lo), fold(hi))
                                }
                                _ => (0, 0),
                            })
                            .collect();
                        model.symbol_mut(id).mapping.shadow = Some(shadow);
                    }
                    AttrKind::Processors | AttrKind::Template | AttrKind::Dimension(_) | AttrKind::Sequence => {}
                }
            }
            let _ = is_declaration;
        }
    }
}

/// `DISTRIBUTE A` and `DISTRIBUTE A ONTO P` without a format list: BLOCK in
/// every dimension, as the compilers of that dialect did; reported (HPF030)
/// with the fix that writes the formats out.
fn block_in_every_dimension(
    model: &Model,
    id: SymbolId,
    entity: &syntax::directive::Entity,
    distribution: &mut Distribution,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let rank = model.symbol(id).rank().max(1);
    distribution.formats = vec![Format::Block; rank];
    let formats = vec!["BLOCK"; rank].join(", ");
    diagnostics.push(
        Diagnostic::new(
            Code::Dialect,
            entity.name.range,
            format!(
                "DISTRIBUTE without a format list distributes BLOCK in every dimension here; HPF 2.0 writes `DISTRIBUTE {}({formats})`",
                entity.name.text
            ),
        )
        .with_fix(
            format!("Write `{}({formats})`", entity.name.text),
            TextRange::empty(entity.name.range.end),
            format!("({formats})"),
        ),
    );
}

/// Resolves a name of a directive, reporting HPF010 when it is unknown.
fn resolve_name(model: &Model, unit: UnitId, name: &Name, diagnostics: &mut Vec<Diagnostic>) -> Option<SymbolId> {
    let found = model.lookup(unit, &name.key());
    if found.is_none() && !model.may_know_more(unit) {
        diagnostics.push(Diagnostic::new(
            Code::UnknownName,
            name.range,
            format!("`{}` is not declared in this scope", name.text),
        ));
    }
    found
}

fn distribution(
    model: &Model,
    unit: UnitId,
    spec: &DistSpec,
    directive: TextRange,
    diagnostics: &mut Vec<Diagnostic>,
) -> Distribution {
    let env = UnitEnv { model, unit };
    let mut formats = Vec::new();
    let mut descriptive = false;
    if let Some(list) = &spec.formats {
        descriptive = list.star.is_some();
        for format in list.list.iter().flatten() {
            let fold = |expr: &Expr, diagnostics: &mut Vec<Diagnostic>| match eval_int(expr, &env) {
                Ok(value) if value > 0 => Some(value),
                Ok(value) => {
                    diagnostics.push(Diagnostic::new(
                        Code::BadProcessorCount,
                        expr.range,
                        format!("the block size must be positive, but it is {value}"),
                    ));
                    None
                }
                Err(not_folded) => {
                    not_constant(&not_folded, "the block size", diagnostics);
                    None
                }
            };
            formats.push(match &format.kind {
                DistFormatKind::Block(None) => Format::Block,
                DistFormatKind::Block(Some(size)) => Format::BlockOf(fold(size, diagnostics)),
                DistFormatKind::Cyclic(None) => Format::Cyclic(Some(1)),
                DistFormatKind::Cyclic(Some(size)) => Format::Cyclic(fold(size, diagnostics)),
                DistFormatKind::Collapsed => Format::Collapsed,
                DistFormatKind::GenBlock(_) => Format::GenBlock,
                DistFormatKind::Indirect(_) => Format::Indirect,
            });
        }
    }
    let onto = spec.onto.as_ref().and_then(|onto| {
        descriptive |= onto.star.is_some();
        let name = onto.target.as_ref()?;
        let id = resolve_name(model, unit, name, diagnostics)?;
        let symbol = model.symbol(id);
        if symbol.kind != SymbolKind::Processors {
            diagnostics.push(
                Diagnostic::new(
                    Code::NotAnArray,
                    name.range,
                    format!("ONTO names `{}`, a {}, not a processor arrangement", name.text, symbol.kind.as_str()),
                )
                .with_related_in(model.file_name(id.unit), symbol.name.range, "declared here"),
            );
            return None;
        }
        Some(id)
    });
    let onto_range = spec.onto.as_ref().map(|it| it.range);
    Distribution { formats, onto, directive, distributee: TextRange::empty(directive.start), onto_range, descriptive }
}

/// Reports an expression that must fold and does not: an information,
/// since the program may well be right; only the check is lost.
fn not_constant(not_folded: &NotFolded, what: &str, diagnostics: &mut Vec<Diagnostic>) {
    let code = match not_folded.reason {
        NotFoldedReason::NotAffine => Code::NonAffineAlign,
        _ => Code::NotConstant,
    };
    diagnostics.push(Diagnostic::new(
        code,
        not_folded.range,
        format!("{what} is not known at compile time: {}", not_folded.describe()),
    ));
}

/// The axes of one ALIGN (or REALIGN) of `alignee`, or `None` when the
/// target is unknown.
fn alignment(
    model: &Model,
    unit: UnitId,
    alignee: SymbolId,
    spec: &AlignSpec,
    directive: TextRange,
    mapping: &MappingSyntax,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Alignment> {
    let _ = mapping;
    let target = resolve_name(model, unit, &spec.target, diagnostics)?;
    let target_symbol = model.symbol(target);
    if matches!(target_symbol.kind, SymbolKind::Processors | SymbolKind::Constant(_)) {
        diagnostics.push(
            Diagnostic::new(
                Code::NotAnArray,
                spec.target.range,
                format!(
                    "`{}` is a {}: an alignment target must be an array or a template",
                    spec.target.text,
                    target_symbol.kind.as_str()
                ),
            )
            .with_related_in(model.file_name(target.unit), target_symbol.name.range, "declared here"),
        );
        return None;
    }
    let alignee_symbol = model.symbol(alignee);
    let alignee_rank = alignee_symbol.rank();
    let target_rank = target_symbol.rank();
    let env = UnitEnv { model, unit };

    // Align dummies: `ALIGN A(I, :, *)`: a name per dimension, `:` or `*`.
    let sources: Vec<Subscript> = match &spec.sources {
        Some(sources) => sources.clone(),
        None => (0..alignee_rank)
            .map(|_| Subscript::Range { lo: None, hi: None, stride: None, range: spec.target.range })
            .collect(),
    };
    if sources.len() != alignee_rank && spec.sources.is_some() && !alignee_symbol.shape.is_empty() {
        let range = sources
            .first()
            .map_or(spec.target.range, |first| first.range().cover(sources.last().expect("not empty").range()));
        diagnostics.push(
            Diagnostic::new(
                Code::AlignRankMismatch,
                range,
                format!(
                    "`{}` has rank {alignee_rank}, but the ALIGN gives {} subscript(s)",
                    alignee_symbol.name.text,
                    sources.len()
                ),
            )
            .with_related_in(model.file_name(alignee.unit), alignee_symbol.name.range, "declared here"),
        );
        return None;
    }
    let mut dummies: HashMap<String, usize> = HashMap::new();
    let mut colon_dims: Vec<usize> = Vec::new();
    for (dim, source) in sources.iter().enumerate() {
        match source {
            Subscript::Expr(expr) => match expr.as_name() {
                Some(name) => {
                    dummies.insert(name.key(), dim);
                }
                None => diagnostics.push(Diagnostic::new(
                    Code::DirectiveSyntax,
                    expr.range,
                    "an align source is a dummy name, `:` or `*`",
                )),
            },
            Subscript::Range { .. } => colon_dims.push(dim),
            Subscript::Star(_) | Subscript::Keyword { .. } => {}
        }
    }

    let target_subscripts: Vec<Subscript> = match &spec.subscripts {
        Some(subscripts) => subscripts.clone(),
        None => (0..target_rank)
            .map(|_| Subscript::Range { lo: None, hi: None, stride: None, range: spec.target.range })
            .collect(),
    };
    if target_subscripts.len() != target_rank {
        diagnostics.push(
            Diagnostic::new(
                Code::AlignTargetRankMismatch,
                spec.target_range,
                format!(
                    "`{}` has rank {target_rank}, but the ALIGN gives it {} subscript(s)",
                    spec.target.text,
                    target_subscripts.len()
                ),
            )
            .with_related_in(model.file_name(target.unit), target_symbol.name.range, "declared here"),
        );
        return None;
    }

    let mut axes = Vec::new();
    let mut colon_iter = colon_dims.iter();
    for (target_dim, subscript) in target_subscripts.iter().enumerate() {
        let axis = match subscript {
            Subscript::Star(_) => Axis::Replicated,
            Subscript::Range { lo, stride, .. } => {
                // `:` or a triplet matches the next `:` of the alignee.
                let Some(&source_dim) = colon_iter.next() else {
                    diagnostics.push(Diagnostic::new(
                        Code::AlignRankMismatch,
                        subscript.range(),
                        "this section of the target has no matching `:` in the alignee",
                    ));
                    axes.push(Axis::Unknown);
                    continue;
                };
                let fold = |it: &Option<Expr>, default: i64| match it {
                    None => Ok(default),
                    Some(expr) => eval_int(expr, &env),
                };
                let target_lo = target_symbol.shape[target_dim].lo.known().unwrap_or(1);
                let source_lo = alignee_symbol.shape.get(source_dim).and_then(|it| it.lo.known());
                // Deferred shapes on both sides (ALLOCATABLE): `:` puts the
                // alignee's first element on the target's, taken here to
                // have the same lower bound (the MPI backend checks their
                // ALLOCATE statements).
                let deferred = |it: Option<&Dim>| it.is_some_and(|it| it.lo == Bound::Assumed);
                if lo.is_none()
                    && stride.is_none()
                    && deferred(target_symbol.shape.get(target_dim))
                    && deferred(alignee_symbol.shape.get(source_dim))
                {
                    axes.push(Axis::Affine { source_dim, stride: 1, offset: 0 });
                    continue;
                }
                match (fold(lo, target_lo), fold(stride, 1), source_lo) {
                    // Element LB of the alignee goes to `lo`, each next one `stride` further.
                    (Ok(lo), Ok(stride), Some(source_lo)) => {
                        match stride.checked_mul(source_lo).and_then(|it| lo.checked_sub(it)) {
                            Some(offset) => Axis::Affine { source_dim, stride, offset },
                            None => Axis::Unknown,
                        }
                    }
                    (Err(not_folded), _, _) | (_, Err(not_folded), _) => {
                        not_constant(&not_folded, "the alignment", diagnostics);
                        Axis::Unknown
                    }
                    _ => Axis::Unknown,
                }
            }
            Subscript::Expr(expr) => match linear(expr, &|key| dummies.contains_key(key), &env) {
                Ok(form) => {
                    let vars: Vec<(&str, i64)> = form.vars().collect();
                    match vars.as_slice() {
                        [] => Axis::Constant(form.constant),
                        [(key, stride)] => {
                            Axis::Affine { source_dim: dummies[*key], stride: *stride, offset: form.constant }
                        }
                        _ => {
                            diagnostics.push(Diagnostic::new(
                                Code::NonAffineAlign,
                                expr.range,
                                "an align subscript may use only one align dummy",
                            ));
                            Axis::Unknown
                        }
                    }
                }
                Err(not_folded) => {
                    not_constant(&not_folded, "the alignment", diagnostics);
                    Axis::Unknown
                }
            },
            Subscript::Keyword { value, .. } => {
                diagnostics.push(Diagnostic::new(
                    Code::DirectiveSyntax,
                    value.range,
                    "a keyword is not an align subscript",
                ));
                Axis::Unknown
            }
        };
        axes.push(axis);
    }
    if let Some(&extra) = colon_iter.next() {
        diagnostics.push(Diagnostic::new(
            Code::AlignRankMismatch,
            sources[extra].range(),
            "this `:` of the alignee has no matching section in the target",
        ));
    }
    Some(Alignment {
        target,
        axes,
        directive,
        alignee: TextRange::empty(directive.start),
        target_range: spec.target_range,
    })
}

impl Model {
    /// The processor count along each distributed dimension of
    /// `distribution`: the extents of its ONTO arrangement (a scalar one
    /// counts 1), or the configured NUMBER_OF_PROCESSORS() for one
    /// distributed dimension without ONTO. `None` where it is not known,
    /// and where it is not positive (`PROCESSORS P(0)`, a negative
    /// setting) or above [`MAX_PROCESSORS`]: nothing is divided by it, and
    /// products with it stay far from overflow.
    pub fn processor_counts(&self, distribution: &Distribution) -> Vec<Option<i64>> {
        let n_distributed = distribution.formats.iter().filter(|it| **it != Format::Collapsed).count();
        let positive = |count: Option<i64>| count.filter(|it| (1..=MAX_PROCESSORS).contains(it));
        match distribution.onto {
            Some(onto) if self.symbol(onto).shape.is_empty() => vec![Some(1); n_distributed],
            Some(onto) => self.symbol(onto).shape.iter().map(|it| positive(it.extent())).collect(),
            None if n_distributed == 1 => vec![positive(self.config.number_of_processors)],
            None => vec![None; n_distributed],
        }
    }
}

/// The largest processor count the analysis computes with (2^31 - 1).
pub const MAX_PROCESSORS: i64 = i32::MAX as i64;

/// The block of `BLOCK` over `procs` processors (HPF: ceiling of
/// extent / procs), at least 1; written so that no extent or positive
/// processor count overflows.
pub fn block_size(extent: i64, procs: i64) -> i64 {
    (extent.saturating_sub(1) / procs.max(1)).saturating_add(1).max(1)
}

#[cfg(test)]
mod kind_tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(String, Option<i64>, SymbolKind)> {
        let file = syntax::parse(text, syntax::SourceForm::Free);
        let model = build_model(&file, ModelConfig { number_of_processors: None }, &mut Vec::new());
        model.units[0].symbols.iter().map(|it| (it.name.text.clone(), it.kind_value, it.kind)).collect()
    }

    /// The kind idioms fold as gfortran numbers kinds, and the declarations
    /// that use them get the folded kind; a length or an unknown name does not.
    #[test]
    fn named_kinds_fold() {
        let symbols = kinds(
            "program k
  integer, parameter :: dp = kind(1.0d0), sp = kind(1.0), ik = kind(1), q = kind(0.5_16)
  integer, parameter :: wp = selected_real_kind(15, 307), hp = selected_real_kind(p=6), xp = selected_real_kind(40)
  integer, parameter :: i8 = selected_int_kind(18), i1 = selected_int_kind(r=2)
  real(kind=dp) :: a(4)
  real(wp) :: b
  real*8 :: c
  integer(kind=i8) :: d
  character*6 :: e
  real(kind=unknown) :: f
  real :: g
end program k
",
        );
        let find = |name: &str| symbols.iter().find(|it| it.0 == name).unwrap_or_else(|| panic!("{name}: {symbols:?}"));
        let constant = |name: &str| match find(name).2 {
            SymbolKind::Constant(value) => value,
            other => panic!("{name} is {other:?}"),
        };
        assert_eq!(constant("dp"), Some(8));
        assert_eq!(constant("sp"), Some(4));
        assert_eq!(constant("ik"), Some(4));
        assert_eq!(constant("q"), Some(16));
        assert_eq!(constant("wp"), Some(8));
        assert_eq!(constant("hp"), Some(4));
        assert_eq!(constant("xp"), Some(-1));
        assert_eq!(constant("i8"), Some(8));
        assert_eq!(constant("i1"), Some(1));
        assert_eq!(find("a").1, Some(8));
        assert_eq!(find("b").1, Some(8));
        assert_eq!(find("c").1, Some(8));
        assert_eq!(find("d").1, Some(8));
        assert_eq!(find("e").1, None);
        assert_eq!(find("f").1, None);
        assert_eq!(find("g").1, None);
    }

    /// ISO_FORTRAN_ENV's kind constants fold where the unit (or its host)
    /// USEs the module, and only there.
    #[test]
    fn iso_fortran_env_kinds_fold_where_the_module_is_used() {
        let symbols = kinds(
            "program k
  use iso_fortran_env, only: int64, real64
  integer(kind=int64) :: seed(4)
  real(real64) :: x
  integer(int16) :: h
  integer, parameter :: int8 = 4
  integer(int8) :: own
end program k
",
        );
        let kind = |name: &str| symbols.iter().find(|it| it.0 == name).unwrap().1;
        assert_eq!((kind("seed"), kind("x"), kind("h")), (Some(8), Some(8), Some(2)));
        // A name the program declares itself is its own.
        assert_eq!(kind("own"), Some(4));
        let symbols = kinds(
            "program k
  integer(kind=int64) :: seed(4)
end program k
",
        );
        assert_eq!(symbols.iter().find(|it| it.0 == "seed").unwrap().1, None);
    }
}
