//! SPMD calls of the file's subroutines. A CALL that passes distributed
//! arrays whole to a subroutine of the same file whose dummies take the
//! actuals' mappings as they are (INHERIT, transcriptive `DISTRIBUTE X *`,
//! descriptive `*(BLOCK) ONTO *P`, `ALIGN Z(I) WITH *X(I)` with another
//! such dummy, or an explicit mapping equal to the actual's) runs on every
//! process: each passes its local part of every distributed actual and its
//! descriptor to a copy of the subroutine specialised to those mappings,
//! whose body is lowered as the main program's is (owned iterations, halo
//! fetches, reductions, output from rank 0).
//!
//! The copies of external subroutines go into a generated module,
//! `hpf_procedures`, after the file's modules and before the program; the
//! copies of module procedures go into their own module (same host), and
//! those of the program's internal subroutines after its CONTAINS. The
//! dummies become allocatable (they keep the actual's bounds and shadow
//! areas), followed by one `hpf_desc` argument per distributed dummy.
//! A constant section of a rank-1 actual, and a whole actual for a dummy
//! whose DISTRIBUTE prescribes another mapping, are copied into a
//! temporary laid out as the dummy and back (`call_remap.rs`). Anything
//! else (elements as actuals, sections with bounds known only at run time,
//! other remaps, bounds not known to be the actual's, recursion, SAVEd variables
//! (the copy would keep its own), a GO TO, a RETURN that not every process
//! takes alike (`crate::taken_everywhere`: one inside an owner-computes
//! loop; a RETURN under replicated conditions is fine), a body with no
//! parallel statement, ...) keeps the CALL on rank 0 on gathered copies
//! (`lib.rs`), with the reason in its note.
//!
//! A subroutine that uses distributed module arrays (or, internal to the
//! program, the program's) by host or use association, itself or through
//! its calls, gets them in its copy as they are laid out in the program:
//! the copy works on their local parts (in the module, USEd from it, or
//! the host's), and their shadow areas grow to what it fetches. Every
//! process runs the copy, so the replicated variables it sets stay alike. The subroutine's own arrays mapped by its directives
//! (`ALIGN UNEW(I) WITH T(I)`) are local parts the copy allocates on entry.
//!
//! Inside a copy, replicated data stays consistent as in the main program;
//! a scalar dummy that a statement on rank 0 may set (a CALL) is handed on
//! only where it changed, since its actual may be a constant.

use std::collections::BTreeMap;
use std::fmt::Write;

use analysis::eval::ConstEnv;
use analysis::model::{Axis, Format, SymbolId, SymbolKind, UnitId};
use syntax::{ExprKind, Stmt, StmtKind, Subscript, TextRange, UnitKind};

use crate::call_remap::{CallRemap, Section};
use crate::{element_suffix, top_level_parts, Distributed, Lowering, Plan};

/// Where the specialised copy of a subroutine goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// The generated module `hpf_procedures` (an external subroutine).
    Generated,
    /// The module of the file (index in `file.units`) the subroutine belongs to.
    Module(usize),
    /// The main program, after CONTAINS (an internal subroutine: the
    /// program's variables are its host's).
    Internal,
}

/// A subroutine specialised to the mappings of its distributed actuals.
pub(crate) struct SpmdProcedure {
    /// The subroutine and the actuals' layouts it was specialised to.
    key: String,
    name: String,
    place: Place,
    /// Its Fortran text (a module procedure).
    source: String,
    /// Per argument position of a distributed dummy: the shadow widths its
    /// body needs (low, high; along the second distributed dimension too).
    shadows: Vec<(usize, [i64; 4])>,
    /// The same for the module arrays it uses by host or use association.
    host_shadows: Vec<(SymbolId, [i64; 4])>,
    /// Some statement of its body runs on rank 0 on gathered copies.
    gathers: bool,
    /// The copies its body calls.
    calls: Vec<usize>,
    /// Reached from the program's calls: emitted (a copy made for a
    /// statement whose plan was dropped afterwards is not).
    used: bool,
}

/// A CALL every process makes: the statement with the copy's name and the
/// descriptors of the distributed actuals.
pub(crate) struct SpmdCall<'a> {
    stmt: &'a Stmt,
    /// The copy, in `Lowering::procedures`.
    index: usize,
    edits: Vec<(TextRange, String)>,
    /// The copy's body gathers (then a loop around the call runs on rank 0).
    pub(crate) gathers: bool,
    /// The actuals copied into temporaries laid out as their dummies.
    remaps: Vec<CallRemap>,
}

/// The value of a dummy's bound: the callee's named constants, and its
/// scalar dummies as the caller's constant actuals.
pub(crate) struct BoundEnv<'m> {
    model: &'m analysis::model::Model,
    unit: UnitId,
    actuals: Vec<(String, Option<i64>)>,
}

impl ConstEnv for BoundEnv<'_> {
    fn constant(&self, key: &str) -> Option<i64> {
        if let Some((_, value)) = self.actuals.iter().find(|it| it.0 == key) {
            return *value;
        }
        match self.model.symbol(self.model.lookup(self.unit, key)?).kind {
            SymbolKind::Constant(value) => value,
            _ => None,
        }
    }

    fn number_of_processors(&self) -> Option<i64> {
        None
    }
}

/// Whether two arrays are laid out alike: the same descriptors, so the
/// same elements on every process (whatever their types).
pub(crate) fn same_layout(a: &Distributed, b: &Distributed) -> bool {
    // Shadows aside.
    let same_second = match (&a.second, &b.second) {
        (None, None) => true,
        (Some(s), Some(t)) => {
            (s.dim, &s.lb, &s.ub, s.offset, s.stride, &s.template_lo, &s.template_hi, s.block, s.cyclic, s.procs)
                == (t.dim, &t.lb, &t.ub, t.offset, t.stride, &t.template_lo, &t.template_hi, t.block, t.cyclic, t.procs)
        }
        _ => false,
    };
    a.lbs == b.lbs
        && a.ubs == b.ubs
        && a.dim == b.dim
        && a.offset == b.offset
        && a.stride == b.stride
        && a.template_lo == b.template_lo
        && a.template_hi == b.template_hi
        && a.block == b.block
        && a.cyclic == b.cyclic
        && same_second
}

/// Whether `layout` (an actual's) is the one `ALIGN dummy WITH target(...)`
/// gives a dummy when the target dummy is laid out as `target`, distributed
/// along one dimension: `ALIGN kappa(j) WITH t(*, j)` for `t(*, BLOCK)` and
/// an actual `kap` aligned with the columns of `t`'s actual alike.
fn aligned_as_laid_out(layout: &Distributed, target: &Distributed, axes: &[Axis]) -> bool {
    let Some(Axis::Affine { source_dim, stride, offset }) = axes.get(target.dim) else { return false };
    target.second.is_none()
        && layout.second.is_none()
        && !target.cyclic
        && layout.dim == *source_dim
        && layout.stride == target.stride * stride
        && layout.offset == target.stride * offset + target.offset
        && layout.template_lo == target.template_lo
        && layout.template_hi == target.template_hi
        && layout.block == target.block
        && layout.cyclic == target.cyclic
}

/// A layout as text, for telling specialisations apart.
fn layout_key(it: &Distributed) -> String {
    format!(
        "{}{:?}{:?}/{}/{}/{}/{}/{}/{}/{}/{:?}",
        it.suffix,
        it.lbs,
        it.ubs,
        it.dim,
        it.offset,
        it.stride,
        it.template_lo,
        it.template_hi,
        it.block,
        it.cyclic,
        it.second.as_ref().map(|s| (
            s.dim,
            &s.lb,
            &s.ub,
            s.offset,
            s.stride,
            &s.template_lo,
            &s.template_hi,
            s.block,
            s.cyclic,
            s.procs
        ))
    )
}

/// The block size and CYCLIC-ness of a distribution format the runtime has.
fn format_layout(format: Format) -> Option<(i64, bool)> {
    match format {
        Format::Block => Some((0, false)),
        Format::BlockOf(Some(m)) => Some((m, false)),
        Format::Cyclic(Some(m)) if m >= 1 => Some((m, true)),
        _ => None,
    }
}

impl<'a> Lowering<'a> {
    /// The SPMD form of a CALL with distributed actuals, or why it keeps
    /// running on rank 0 (completing "subroutines run on rank 0 ... when").
    pub(crate) fn spmd_call<'s>(&mut self, stmt: &'s Stmt) -> Result<Plan<'s>, String>
    where
        'a: 's,
    {
        let StmtKind::Call { name, args } = &stmt.kind else { return Err("it is not a CALL".to_string()) };
        let analysis = self.analysis;
        let model = &analysis.model;
        let (callee, callee_id, place) = self.find_subroutine(&name.key())?;
        if self.calling.contains(&callee_id) {
            return Err(format!("they call themselves (`{}` is being lowered)", name.text));
        }
        if !self.may_call(place) {
            return Err(format!("the copy of `{}` would be in a module compiled after the caller", name.text));
        }
        // The arguments as written: positional expressions, one per dummy.
        let positional = self.positional(stmt, args).ok_or("its argument list was not understood")?;
        if !positional || args.len() != callee.dummies.len() {
            return Err("its arguments are not one positional expression per dummy argument".to_string());
        }
        // Every distributed array is passed whole or as a constant section
        // of a rank-1 array (copied in and out, `call_remap.rs`), once.
        let mut passed: Vec<(usize, SymbolId)> = Vec::new();
        let mut sections: Vec<(usize, Section)> = Vec::new();
        for (range, id) in self.distributed_occurrences(stmt.range) {
            let whole = args.iter().position(|it| it.range == range && matches!(it.kind, ExprKind::Name(_)));
            let section = || {
                args.iter()
                    .enumerate()
                    .find_map(|(position, arg)| Some((position, self.section_actual(arg, range, id)?)))
            };
            let position = match whole {
                Some(position) => position,
                None => {
                    let Some((position, section)) = section() else {
                        return Err(format!(
                            "an element, an expression or a section of {} is passed (whole arrays and sections of rank-1 arrays with constant bounds run in parallel)",
                            self.distributed[&id].name
                        ));
                    };
                    sections.push((position, section));
                    position
                }
            };
            if passed.iter().any(|it| it.1 == id) {
                return Err(format!("{} is passed twice", self.distributed[&id].name));
            }
            passed.push((position, id));
        }
        self.check_body(callee)?;
        let host = self.host_arrays(&name.key(), place)?;
        // The bounds of the dummies are the caller's constants at the call.
        let caller = self.caller_env();
        let actual_values: Vec<(String, Option<i64>)> = callee
            .dummies
            .iter()
            .zip(args)
            .map(|(dummy, arg)| (dummy.key(), analysis::eval::eval_int(arg, &caller).ok()))
            .collect();
        // What the copy may take as constants: its INTENT(IN) scalars given constants.
        let known: Vec<(String, i64)> = actual_values
            .iter()
            .filter_map(|(key, value)| Some((key.clone(), (*value)?)))
            .filter(|(key, _)| self.intent_in_scalar(callee, callee_id, key))
            .collect();
        let env = BoundEnv { model, unit: callee_id, actuals: actual_values };
        let mut dummies: BTreeMap<SymbolId, Distributed> = BTreeMap::new();
        let mut positions: Vec<(usize, SymbolId)> = Vec::new();
        for &(position, actual) in &passed {
            let dummy_name = &callee.dummies[position];
            let dummy = model
                .lookup(callee_id, &dummy_name.key())
                .filter(|it| it.unit == callee_id)
                .ok_or_else(|| format!("the dummy {} was not found", dummy_name.text))?;
            let mut layout = match sections.iter().find(|it| it.0 == position) {
                None => self.distributed[&actual].clone(),
                Some(&(_, section)) => {
                    let bounds = self.dummy_bounds(callee, dummy, &env, section.extent())?;
                    self.inherited_section_layout(actual, section, bounds, dummy)?
                }
            };
            layout.name = model.symbol(dummy).name.text.clone();
            layout.shadow_low = 0;
            layout.shadow_high = 0;
            if let Some(second) = &mut layout.second {
                second.shadow_low = 0;
                second.shadow_high = 0;
            }
            dummies.insert(dummy, layout);
            positions.push((position, dummy));
        }
        // Each dummy's own directives must describe the actual's mapping
        // (or the section's), else prescribe a mapping the actual is copied
        // into; its declaration must give the actual's type and bounds.
        let mut copied: Vec<usize> = sections.iter().map(|it| it.0).collect();
        for &(position, dummy) in &positions {
            if let Err(why) = self.check_mapping(callee_id, dummy, &dummies) {
                let prescribed = self.prescribed_layout(callee_id, dummy, &dummies[&dummy]).ok_or(why)?;
                dummies.insert(dummy, prescribed);
                if !copied.contains(&position) {
                    copied.push(position);
                }
            }
        }
        for &(_, dummy) in &positions {
            self.check_mapping(callee_id, dummy, &dummies)?;
        }
        for (dummy, layout) in &dummies {
            self.check_dummy(callee, *dummy, layout, &env)?;
        }
        // A replicated assumed-size dummy could not be broadcast whole after
        // a statement on rank 0 inside the copy.
        let assumed_size = callee.decls.iter().find_map(|decl| {
            let attr_dims = decl.attrs.iter().find_map(|it| match it {
                syntax::DeclAttr::Dimension(dims) => Some(dims),
                _ => None,
            });
            decl.entities.iter().find(|entity| {
                let replicated = model
                    .lookup(callee_id, &entity.name.key())
                    .is_some_and(|id| model.symbol(id).is_dummy && !dummies.contains_key(&id));
                let dims = entity.dims.as_ref().or(attr_dims);
                replicated && dims.is_some_and(|dims| dims.iter().any(|it| matches!(it, Subscript::Star(_))))
            })
        });
        if let Some(entity) = assumed_size {
            return Err(format!("the replicated dummy {} is assumed-size", entity.name.text));
        }
        // A copy names its layouts' bounds, which only the main program
        // holds for an array allocated at run time.
        if let Some(layout) = dummies.values().chain(host.values()).find(|it| it.has_runtime_bounds()) {
            return Err(format!("the bounds of {} are known only at run time", layout.name));
        }
        // One copy per subroutine and layouts of its actuals (which of them
        // share an alignment target included).
        let mut key = format!("{callee_id}{known:?}");
        for &(position, dummy) in &positions {
            let layout = &dummies[&dummy];
            let same_target = positions.iter().position(|it| dummies[&it.1].target == layout.target);
            let _ = write!(key, ";{position}:{}:{same_target:?}", layout_key(layout));
        }
        for layout in host.values() {
            let _ = write!(key, ";host {}:{}", layout.name, layout_key(layout));
        }
        // The temporaries of the copied actuals, laid out as their dummies.
        if !copied.is_empty() && self.labelled(stmt) {
            return Err("its actuals need copying and the CALL has a label".to_string());
        }
        let mut remaps: Vec<CallRemap> = Vec::new();
        for &(position, dummy) in &positions {
            if !copied.contains(&position) {
                continue;
            }
            let actual = passed.iter().find(|it| it.0 == position).expect("a passed actual").1;
            let whole = &self.distributed[&actual];
            let section = sections.iter().find(|it| it.0 == position).map_or(
                Section { lo: whole.lbs[0].known().unwrap_or(1), hi: whole.ubs[0].known().unwrap_or(0), st: 1 },
                |it| it.1,
            );
            let mut temp = dummies[&dummy].clone();
            temp.name = format!("hpf_t{}", remaps.len() + 1);
            remaps.push(CallRemap {
                position,
                range: args[position].range,
                actual,
                section,
                temp,
                type_name: crate::declared_type(model.symbol(actual)),
                copy_out: !self.intent_in(callee, &model.symbol(dummy).name.key()),
            });
        }
        let index = match self.procedures.iter().position(|it| it.key == key) {
            Some(index) => index,
            None => self.specialise(callee, callee_id, (place, known), key, (dummies, host), &positions)?,
        };
        self.grow_host_shadows(index);
        // The actuals' shadow areas hold what the copy fetches.
        for &(position, shadows) in &self.procedures[index].shadows {
            if let Some(remap) = remaps.iter_mut().find(|it| it.position == position) {
                remap.temp.shadow_low = shadows[0];
                remap.temp.shadow_high = shadows[1];
                continue;
            }
            let Some(&(_, actual)) = passed.iter().find(|it| it.0 == position) else { continue };
            grow_shadows(self.distributed.get_mut(&actual).expect("a distributed actual"), shadows);
        }
        if !self.called.contains(&index) {
            self.called.push(index);
        }
        let procedure = &self.procedures[index];
        let mut descriptors: Vec<(usize, String)> = passed
            .iter()
            .map(|&(position, actual)| match remaps.iter().find(|it| it.position == position) {
                Some(remap) => (position, format!("hpf_d_{}", remap.temp.name)),
                None => (position, format!("hpf_d_{}", self.distributed[&actual].name)),
            })
            .collect();
        descriptors.sort();
        let descriptors: Vec<String> = descriptors.into_iter().map(|it| it.1).collect();
        let mut edits = vec![(name.range, procedure.name.clone())];
        edits.extend(remaps.iter().map(|it| (it.range, it.temp.name.clone())));
        if !descriptors.is_empty() {
            // Before the closing parenthesis of the argument list.
            let close = self.slice(stmt.range).trim_end().len().saturating_sub(1);
            edits.push((TextRange::empty(stmt.range.start + close), format!(", &\n    {}", descriptors.join(", "))));
        }
        Ok(Plan::Call(SpmdCall { stmt, index, edits, gathers: procedure.gathers, remaps }))
    }

    /// `X = E` of a replicated scalar X whose right side references one
    /// function of the file that uses distributed arrays by host or use
    /// association (and reads no distributed array itself): every process
    /// evaluates it with a copy of the function on the arrays' local parts,
    /// whose result every process gets alike (`r0 = residual_norm()`).
    pub(crate) fn spmd_function_call<'s>(&mut self, stmt: &'s Stmt) -> Result<Plan<'s>, String>
    where
        'a: 's,
    {
        let StmtKind::Assign { lhs, rhs } = &stmt.kind else {
            return Err("it is not an assignment".to_string());
        };
        let ExprKind::Name(target) = &lhs.kind else { return Err("it assigns a part of an array".to_string()) };
        if self.is_distributed_name(target) || !self.distributed_occurrences(stmt.range).is_empty() {
            return Err("it reads or writes distributed arrays itself".to_string());
        }
        // The references of such functions in it.
        let mut references = Vec::new();
        let mut stack = vec![rhs];
        while let Some(expr) = stack.pop() {
            match &expr.kind {
                ExprKind::Ref { name, args } => {
                    if self.touching.contains_key(&name.key()) {
                        references.push(name);
                    }
                    stack.extend(args.iter().filter_map(|it| match it {
                        Subscript::Expr(value) | Subscript::Keyword { value, .. } => Some(value),
                        _ => None,
                    }));
                }
                ExprKind::Name(name) if self.touching.contains_key(&name.key()) => {
                    return Err(format!("`{}` is named without a call", name.text));
                }
                ExprKind::Unary { operand, .. } | ExprKind::Paren(operand) => stack.push(operand),
                ExprKind::Binary { lhs, rhs, .. } => {
                    stack.push(lhs);
                    stack.push(rhs);
                }
                ExprKind::Other(inner) => stack.extend(inner),
                _ => {}
            }
        }
        let [name] = references.as_slice() else {
            return Err("it references more than one function that uses distributed arrays".to_string());
        };
        let (callee, callee_id, place) = self.find_procedure(&name.key(), UnitKind::Function)?;
        if self.calling.contains(&callee_id) {
            return Err(format!("it calls itself (`{}` is being lowered)", name.text));
        }
        if !self.may_call(place) {
            return Err(format!("the copy of `{}` would be in a module compiled after the caller", name.text));
        }
        let model = &self.analysis.model;
        // Its dummies: scalars (their actuals read no distributed array, above).
        let array_dummy = callee.dummies.iter().find(|dummy| {
            model.lookup(callee_id, &dummy.key()).is_none_or(|id| id.unit != callee_id || model.symbol(id).is_array())
        });
        if let Some(dummy) = array_dummy {
            return Err(format!("its dummy {} is an array", dummy.text));
        }
        self.check_body(callee)?;
        let header = self.slice(callee.header).to_ascii_lowercase();
        if header.contains("recursive") || header.contains("result") {
            return Err("the function is RECURSIVE or names its result".to_string());
        }
        let host = self.host_arrays(&name.key(), place)?;
        let mut key = format!("{callee_id} function");
        for layout in host.values() {
            let _ = write!(key, ";host {}:{}", layout.name, layout_key(layout));
        }
        let index = match self.procedures.iter().position(|it| it.key == key) {
            Some(index) => index,
            None => self.specialise(callee, callee_id, (place, Vec::new()), key, (BTreeMap::new(), host), &[])?,
        };
        self.grow_host_shadows(index);
        if !self.called.contains(&index) {
            self.called.push(index);
        }
        let procedure = &self.procedures[index];
        let edits = vec![(name.range, procedure.name.clone())];
        Ok(Plan::Call(SpmdCall { stmt, index, edits, gathers: procedure.gathers, remaps: Vec::new() }))
    }

    /// The distributed arrays the procedure `key` (placed at `place`) uses
    /// by host or use association, itself or through its calls, laid out as
    /// the caller has them: a module's, or (internal to the program) the
    /// program's. Its copy works on their local parts.
    fn host_arrays(&self, key: &str, place: Place) -> Result<BTreeMap<SymbolId, Distributed>, String> {
        let model = &self.analysis.model;
        let mut host = BTreeMap::new();
        for id in self.touching.get(key).into_iter().flatten() {
            let host_kind = model.units[id.unit].kind;
            let seen = host_kind == UnitKind::Module || (host_kind == UnitKind::Program && place == Place::Internal);
            let Some(layout) = self.distributed.get(id).filter(|_| seen) else {
                return Err(format!("it uses {} by host association", model.symbol(*id).name.text));
            };
            host.insert(*id, layout.clone());
        }
        Ok(host)
    }

    /// Widens the shadow areas of the host arrays of the copy `index` to
    /// what it fetches.
    fn grow_host_shadows(&mut self, index: usize) {
        for &(id, shadows) in &self.procedures[index].host_shadows {
            if let Some(distributed) = self.distributed.get_mut(&id) {
                grow_shadows(distributed, shadows);
            }
        }
    }

    /// The constants of the unit being lowered: its named constants and, in
    /// a copy, the INTENT(IN) scalar dummies its actuals gave constants.
    pub(crate) fn caller_env(&self) -> BoundEnv<'a> {
        BoundEnv {
            model: &self.analysis.model,
            unit: self.main,
            actuals: self.known.iter().map(|(key, value)| (key.clone(), Some(*value))).collect(),
        }
    }

    /// The subroutine of the file a CALL of `key` reaches: a module
    /// procedure of a module the caller sees, else an external subroutine.
    pub(crate) fn find_subroutine(&self, key: &str) -> Result<(&'a syntax::Unit, UnitId, Place), String> {
        self.find_procedure(key, UnitKind::Subroutine)
    }

    /// [`Lowering::find_subroutine`] for a subroutine or a function (`kind`).
    fn find_procedure(&self, key: &str, kind: UnitKind) -> Result<(&'a syntax::Unit, UnitId, Place), String> {
        let file = &self.analysis.file;
        let model = &self.analysis.model;
        if let Some(symbol) = model.lookup(self.main, key).map(|id| model.symbol(id)) {
            if symbol.kind == SymbolKind::Variable {
                return Err(format!("`{}` is a dummy procedure or a variable", symbol.name.text));
            }
        }
        let units = analysis::model::flatten_units(file);
        // The modules the caller sees: its own host's and the ones it (or a host) uses.
        let mut visible: Vec<UnitId> = Vec::new();
        let mut stack = vec![self.main];
        while let Some(unit) = stack.pop() {
            if visible.contains(&unit) {
                continue;
            }
            visible.push(unit);
            stack.extend(model.units[unit].modules_used.iter().copied());
            stack.extend(model.units[unit].parent);
        }
        let named = |unit: &syntax::Unit| unit.kind == kind && unit.name.as_ref().is_some_and(|it| it.key() == key);
        for (index, module) in file.units.iter().map(|it| &**it).enumerate().filter(|it| it.1.kind == UnitKind::Module)
        {
            let Some(module_id) = units.iter().position(|it| std::ptr::eq(it.0, module)) else { continue };
            if !visible.contains(&module_id) {
                continue;
            }
            if let Some(callee) = module.contains.iter().find(|it| named(it)) {
                let callee_id = units.iter().position(|it| std::ptr::eq(it.0, callee)).ok_or("an unknown unit")?;
                let spec = TextRange::new(module.header.end, module.execution_start.max(module.header.end));
                if self.slice(spec).to_ascii_lowercase().contains("private") {
                    return Err("the subroutine's module has PRIVATE entities".to_string());
                }
                return Ok((callee, callee_id, Place::Module(index)));
            }
        }
        let program = file.units.iter().find(|it| it.kind == UnitKind::Program);
        if let Some(callee) = program.and_then(|it| it.contains.iter().find(|it| named(it))) {
            let callee_id = units.iter().position(|it| std::ptr::eq(it.0, callee)).ok_or("an unknown unit")?;
            return Ok((callee, callee_id, Place::Internal));
        }
        let callee =
            file.units.iter().map(|it| &**it).find(|it| named(it)).ok_or("the procedure is not one of this file")?;
        let callee_id = units.iter().position(|it| std::ptr::eq(it.0, callee)).ok_or("an unknown unit")?;
        Ok((callee, callee_id, Place::Generated))
    }

    /// Whether `key` is a scalar dummy of `callee` declared INTENT(IN): its
    /// value on entry is its value at every CALL inside.
    fn intent_in_scalar(&self, callee: &syntax::Unit, callee_id: UnitId, key: &str) -> bool {
        let model = &self.analysis.model;
        let is_scalar = model
            .lookup(callee_id, key)
            .filter(|it| it.unit == callee_id)
            .is_some_and(|it| model.symbol(it).is_dummy && model.symbol(it).shape.is_empty());
        is_scalar && self.intent_in(callee, key)
    }

    /// Whether the unit being lowered can use a copy placed at `place`: the
    /// generated module comes after the file's modules.
    fn may_call(&self, place: Place) -> bool {
        match (self.place, place) {
            // The program's internal procedures are seen from the program only.
            (None | Some(Place::Internal), _) => true,
            (Some(Place::Generated | Place::Module(_)), Place::Internal) => false,
            (Some(Place::Generated), _) => true,
            (Some(Place::Module(_)), Place::Generated) => false,
            (Some(Place::Module(caller)), Place::Module(callee)) => callee <= caller,
        }
    }

    /// Why the subroutine's body cannot run on every process, if it cannot:
    /// a prefix (PURE, ELEMENTAL), alternate returns, ENTRY, or a GO TO or
    /// arithmetic IF (their labels do not survive the lowering).
    fn check_body(&self, callee: &syntax::Unit) -> Result<(), String> {
        let header = self.slice(callee.header).to_ascii_lowercase();
        let keyword = if callee.kind == UnitKind::Function { "function" } else { "subroutine" };
        let before_name = header.split(keyword).next().unwrap_or("");
        if before_name.contains("pure") || before_name.contains("elemental") {
            return Err("the subroutine is PURE or ELEMENTAL".to_string());
        }
        let dummy_parts = match (header.find('('), header.rfind(')')) {
            (Some(open), Some(close)) if open < close => {
                top_level_parts(&header[open + 1..close]).iter().filter(|it| !it.1.trim().is_empty()).count()
            }
            _ => 0,
        };
        if dummy_parts != callee.dummies.len() || header.contains('*') {
            return Err("the subroutine has alternate returns".to_string());
        }
        // The copy and the subroutine (and other copies) would each keep
        // their own SAVEd variables: a call of one would not see what a call
        // of the other left there.
        let spec = TextRange::new(callee.header.end, callee.execution_start.max(callee.header.end));
        let saves = self.slice(spec).lines().any(|line| {
            let line = line.trim_start().to_ascii_lowercase();
            ["save", "data"].iter().any(|word| {
                line.strip_prefix(word)
                    .is_some_and(|rest| !rest.starts_with(|it: char| it.is_alphanumeric() || it == '_'))
            })
        });
        let initialised = callee.decls.iter().any(|decl| {
            let parameter = decl.attrs.contains(&syntax::DeclAttr::Parameter);
            let save = decl
                .attrs
                .iter()
                .any(|it| matches!(it, syntax::DeclAttr::Other(attr) if attr.to_ascii_lowercase().contains("save")));
            save || (!parameter && decl.entities.iter().any(|it| it.init.is_some()))
        });
        if saves || initialised {
            return Err("the subroutine has SAVEd variables (SAVE, DATA or an initialisation)".to_string());
        }
        // (A RETURN is checked against the body's plans: `specialise`.)
        let mut stack: Vec<&Stmt> = callee.body.iter().collect();
        while let Some(stmt) = stack.pop() {
            if self.begins_with_keyword(stmt, &["goto", "entry"]) || self.is_arithmetic_if(stmt) {
                return Err(format!(
                    "its body branches (`{}`)",
                    self.slice(stmt.header).split_whitespace().next().unwrap_or("")
                ));
            }
            stack.extend(stmt.children());
        }
        Ok(())
    }

    /// The start of a RETURN among `body` that not every process takes
    /// alike: one inside a statement neither every process runs as written
    /// nor rank 0 runs alone (`crate::taken_everywhere`), such as the body
    /// of an owner-computes loop.
    fn unshared_return(&self, body: &[Stmt], plans: &[Plan]) -> Option<usize> {
        let everywhere = crate::taken_everywhere(plans);
        let mut stack: Vec<&Stmt> = body.iter().collect();
        while let Some(stmt) = stack.pop() {
            let is_return = matches!(stmt.kind, StmtKind::Other { .. }) && self.begins_with_keyword(stmt, &["return"]);
            if is_return && !everywhere.iter().any(|it| it.start <= stmt.range.start && stmt.range.end <= it.end) {
                return Some(stmt.range.start);
            }
            stack.extend(stmt.children());
        }
        None
    }

    /// Whether `stmt` is an arithmetic IF, `IF (e) 10, 20, 30` (a branch).
    fn is_arithmetic_if(&self, stmt: &Stmt) -> bool {
        let header: String =
            self.slice(stmt.header).chars().filter(|it| !it.is_whitespace()).collect::<String>().to_ascii_lowercase();
        header.starts_with("if(")
            && crate::closing_paren(&header, 2)
                .and_then(|close| header[close + 1..].chars().next())
                .is_some_and(|it| it.is_ascii_digit())
    }

    /// The declared bounds of the rank-1 dummy `dummy` given `extent`
    /// elements (an assumed size takes them all).
    fn dummy_bounds(
        &self,
        callee: &syntax::Unit,
        dummy: SymbolId,
        env: &BoundEnv,
        extent: i64,
    ) -> Result<(i64, i64), String> {
        let symbol = self.analysis.model.symbol(dummy);
        let key = symbol.name.key();
        let dims = callee.decls.iter().rev().find_map(|decl| {
            let entity = decl.entities.iter().find(|it| it.name.key() == key)?;
            entity.dims.as_ref().or_else(|| {
                decl.attrs.iter().find_map(|it| match it {
                    syntax::DeclAttr::Dimension(dims) => Some(dims),
                    _ => None,
                })
            })
        });
        let eval = |expr: &syntax::Expr| analysis::eval::eval_int(expr, env).ok();
        let bounds = match dims.map(|it| &it[..]) {
            Some([Subscript::Expr(hi)]) => eval(hi).map(|hi| (1, hi)),
            Some([Subscript::Range { lo, hi, .. }]) => {
                let lb = lo.as_ref().map_or(Some(1), eval);
                match hi {
                    Some(hi) => lb.zip(eval(hi)),
                    None => lb.map(|lb| (lb, lb + extent - 1)),
                }
            }
            Some([Subscript::Star(_)]) => Some((1, extent)),
            _ => None,
        };
        bounds.ok_or_else(|| format!("the bounds of the dummy {} are not known constants", symbol.name.text))
    }

    /// Whether the dummy `dummy` can take the actual laid out as `layout`
    /// as its own local part: the same type, rank and bounds, declared by
    /// type declarations (and DIMENSION statements) the lowering rewrites.
    fn check_dummy(
        &self,
        callee: &syntax::Unit,
        dummy: SymbolId,
        layout: &Distributed,
        env: &BoundEnv,
    ) -> Result<(), String> {
        let model = &self.analysis.model;
        let symbol = model.symbol(dummy);
        let name = &symbol.name.text;
        if element_suffix(symbol) != Some(layout.suffix) {
            return Err(format!("the dummy {name} is not declared of the actual's type"));
        }
        if symbol.rank() != layout.lbs.len() {
            return Err(format!("the dummy {name} has another rank than the actual"));
        }
        // The declarations naming it, and its array spec.
        let mut dims: Option<&[Subscript]> = None;
        let mut declared = Vec::new();
        for decl in &callee.decls {
            let Some(entity) = decl.entities.iter().find(|it| it.name.key() == symbol.name.key()) else { continue };
            declared.push(decl.range);
            if decl.attrs.iter().any(|it| !matches!(it, syntax::DeclAttr::Intent | syntax::DeclAttr::Dimension(_))) {
                return Err(format!("the dummy {name} is declared with attributes other than INTENT and DIMENSION"));
            }
            if let Some(entity_dims) = &entity.dims {
                dims = Some(entity_dims);
            } else if let Some(syntax::DeclAttr::Dimension(attr_dims)) =
                decl.attrs.iter().find(|it| matches!(it, syntax::DeclAttr::Dimension(_)))
            {
                dims = Some(attr_dims);
            }
        }
        // Any other place in the specification part that names it (INTENT,
        // SAVE, EQUIVALENCE statements, ...) would not be rewritten.
        let spec = TextRange::new(callee.header.end, callee.execution_start.max(callee.header.end));
        let in_directive = |range: TextRange| callee.directives.iter().any(|it| it.range.contains_range(range));
        let occurrences = analysis::ide::occurrences(self.analysis);
        let elsewhere = occurrences.iter().any(|it| {
            it.symbol == dummy
                && spec.contains_range(it.range)
                && !in_directive(it.range)
                && !declared.iter().any(|decl| decl.contains_range(it.range))
        });
        if elsewhere {
            return Err(format!("the dummy {name} is named in a specification statement other than its declaration"));
        }
        let dims = dims.ok_or_else(|| format!("the shape of the dummy {name} was not found"))?;
        if dims.len() != layout.lbs.len() {
            return Err(format!("the dummy {name} has another rank than the actual"));
        }
        let eval = |expr: &syntax::Expr| analysis::eval::eval_int(expr, env).ok();
        for (k, dim) in dims.iter().enumerate() {
            // Lower bound 1 unless given; an assumed upper bound takes the actual's.
            let (lo, hi) = match dim {
                Subscript::Expr(hi) => (Some(1), Some(eval(hi))),
                Subscript::Range { lo, hi, .. } => (lo.as_ref().map_or(Some(1), eval), hi.as_ref().map(eval)),
                Subscript::Star(_) => (Some(1), None),
                Subscript::Keyword { .. } => (None, None),
            };
            let bounds_match = lo.is_some()
                && lo == layout.lbs[k].known()
                && hi.is_none_or(|hi| hi.is_some() && hi == layout.ubs[k].known());
            if !bounds_match {
                return Err(format!(
                    "the bounds of the dummy {name} are not known to be the actual's ({}:{} along dimension {})",
                    layout.lbs[k],
                    layout.ubs[k],
                    k + 1
                ));
            }
        }
        Ok(())
    }

    /// Whether the directives of `dummy` take its actual's mapping (laid
    /// out as `dummies` says) as it is: INHERIT; transcriptive `DISTRIBUTE X
    /// *`; a distribution (descriptive or not) that is the actual's; an
    /// identity ALIGN with another dummy whose actual is laid out alike.
    pub(crate) fn check_mapping(
        &self,
        callee_id: UnitId,
        dummy: SymbolId,
        dummies: &BTreeMap<SymbolId, Distributed>,
    ) -> Result<(), String> {
        let model = &self.analysis.model;
        let symbol = model.symbol(dummy);
        let name = &symbol.name.text;
        let layout = &dummies[&dummy];
        let mapping = &symbol.mapping;
        if mapping.inherit.is_some() {
            return Ok(());
        }
        if let Some(align) = &mapping.align {
            let identity = align.axes.len() == symbol.rank()
                && align
                    .axes
                    .iter()
                    .enumerate()
                    .all(|(k, axis)| *axis == Axis::Affine { source_dim: k, stride: 1, offset: 0 });
            let target = dummies.get(&align.target).filter(|_| align.target.unit == callee_id);
            return match target {
                Some(target) if identity && same_layout(layout, target) => Ok(()),
                Some(target) if aligned_as_laid_out(layout, target, &align.axes) => Ok(()),
                _ => Err(format!(
                    "the ALIGN of the dummy {name} is not an identity alignment with another distributed dummy laid out as its actual is"
                )),
            };
        }
        // Without a mapping directive the mapping is the implementation's
        // choice (HPF 2.0, 4.4): it inherits the actual's, which moves nothing.
        let Some(distribution) = &mapping.distribution else { return Ok(()) };
        if distribution.formats.is_empty() {
            // Transcriptive: whatever the actual has.
            return Ok(());
        }
        // Distributed directly: the actual must be cut as the dummy says,
        // over its own index range, with no offset or stride.
        let cut: Vec<(usize, Format)> =
            distribution.formats.iter().copied().enumerate().filter(|it| it.1 != Format::Collapsed).collect();
        let onto_shape = distribution.onto.map(|it| &model.symbol(it).shape);
        let procs = onto_shape
            .filter(|shape| shape.len() == 2)
            .and_then(|shape| {
                let extent = |it: &analysis::model::Dim| Some(it.hi.known()? - it.lo.known()? + 1);
                Some((extent(&shape[0])?, extent(&shape[1])?))
            })
            .unwrap_or((0, 0));
        let transcriptive_onto = distribution.descriptive && distribution.onto.is_none();
        let first_ok = |dim: usize, format: Format| {
            format_layout(format).is_some_and(|(block, cyclic)| {
                layout.plain
                    && layout.dim == dim
                    && layout.offset == 0
                    && layout.stride == 1
                    && layout.template_lo == layout.lbs[dim]
                    && layout.template_hi == layout.ubs[dim]
                    && layout.block == block
                    && layout.cyclic == cyclic
            })
        };
        let matches = match cut[..] {
            [(dim, format)] => layout.second.is_none() && first_ok(dim, format),
            [(dim, format), (second_dim, second_format)] => {
                first_ok(dim, format)
                    && layout.second.as_ref().is_some_and(|second| {
                        format_layout(second_format).is_some_and(|(block, cyclic)| {
                            second.dim == second_dim
                                && second.offset == 0
                                && second.stride == 1
                                && second.template_lo == layout.lbs[second_dim]
                                && second.template_hi == layout.ubs[second_dim]
                                && second.block == block
                                && second.cyclic == cyclic
                                && (transcriptive_onto || second.procs == procs)
                        })
                    })
            }
            _ => false,
        };
        if matches {
            Ok(())
        } else {
            Err(format!("the mapping of the dummy {name} differs from its actual's (a remap would be needed)"))
        }
    }

    /// Lowers a copy of `callee` for actuals laid out as `dummies`: its
    /// index in `self.procedures`, or why its body cannot run in parallel.
    fn specialise(
        &mut self,
        callee: &'a syntax::Unit,
        callee_id: UnitId,
        (place, known): (Place, Vec<(String, i64)>),
        key: String,
        (dummies, host): (BTreeMap<SymbolId, Distributed>, BTreeMap<SymbolId, Distributed>),
        positions: &[(usize, SymbolId)],
    ) -> Result<usize, String> {
        let analysis = self.analysis;
        let model = &analysis.model;
        let mut calling = self.calling.clone();
        calling.push(callee_id);
        let registered = self.procedures.len();
        let stat_loops = self.stat_loops.get_mut().len();
        let mut sub = Lowering {
            analysis: self.analysis,
            text: self.text,
            original: self.original,
            distributed: dummies,
            errors: Vec::new(),
            notes: Vec::new(),
            temps: Vec::new(),
            main: callee_id,
            stat_loops: std::cell::RefCell::new(std::mem::take(self.stat_loops.get_mut())),
            // Labels are local to a scoping unit: the copy has its own.
            labels_taken: std::cell::Cell::new(0),
            procedures: std::mem::take(&mut self.procedures),
            place: Some(place),
            known,
            calling,
            called: Vec::new(),
            touching: std::rc::Rc::clone(&self.touching),
            host_variables: std::rc::Rc::clone(&self.host_variables),
            common: self.common.clone(),
            external: Vec::new(),
            hoisted: self.hoisted,
            relaid: self.relaid.clone(),
            ordered_reductions: self.ordered_reductions,
            regions: Vec::new(),
            fusion: Default::default(),
        };
        let host_ids: Vec<SymbolId> = host.keys().copied().collect();
        sub.distributed.extend(host);
        // Its own arrays mapped by its directives (`ALIGN UNEW(I) WITH T(I)`):
        // local parts it allocates on entry.
        let locals = sub.distributed_among(model, &|id: SymbolId| id.unit == callee_id && !model.symbol(id).is_dummy);
        sub.distributed.extend(locals);
        let plans: Vec<Plan> = callee.body.iter().map(|stmt| sub.plan(stmt)).collect();
        let why = if let Some(error) = sub.errors.first() {
            Some(format!("its body cannot be lowered ({})", error.message))
        } else if let Some(at) = sub.unshared_return(&callee.body, &plans) {
            Some(format!("its body branches (`return` at line {}) where not every process runs it", sub.user_line(at)))
        } else if !plans.iter().any(Plan::runs_in_parallel) {
            Some("no statement of its body runs in parallel".to_string())
        } else {
            None
        };
        if let Some(why) = why {
            // Nothing of it is kept: the copies it made are used nowhere else.
            self.procedures = sub.procedures;
            self.procedures.truncate(registered);
            *self.stat_loops.get_mut() = sub.stat_loops.into_inner();
            self.stat_loops.get_mut().truncate(stat_loops);
            return Err(why);
        }
        // Arrays of the subroutine mapped by its own directives are copies on every process.
        for (id, symbol) in model.symbols().filter(|(id, _)| id.unit == callee_id) {
            let mapped = symbol.mapping.distribution.is_some() || symbol.mapping.align.is_some();
            if symbol.is_array() && mapped && !sub.distributed.contains_key(&id) && !symbol.is_dummy {
                sub.notes.push(crate::Note {
                    range: symbol.name.range,
                    message: format!(
                        "{} is replicated: the MPI backend distributes the arrays of the main program and the dummies that receive them",
                        symbol.name.text
                    ),
                });
            }
        }
        let name = {
            let base = callee.name.as_ref().map_or("sub", |it| it.text.as_str());
            let mut name = format!("hpf_p{}_{}", sub.procedures.len() + 1, base);
            name.truncate(63);
            name
        };
        let gathers = plans.iter().any(Plan::gathers);
        sub.called = calls_of(&plans);
        let source = sub.emit_procedure(callee, &plans, &name, positions);
        let shadows = positions
            .iter()
            .map(|(position, dummy)| {
                let it = &sub.distributed[dummy];
                let (low2, high2) = it.second.as_ref().map_or((0, 0), |s| (s.shadow_low, s.shadow_high));
                (*position, [it.shadow_low, it.shadow_high, low2, high2])
            })
            .collect();
        let host_shadows = host_ids
            .iter()
            .map(|id| {
                let it = &sub.distributed[id];
                let (low2, high2) = it.second.as_ref().map_or((0, 0), |s| (s.shadow_low, s.shadow_high));
                (*id, [it.shadow_low, it.shadow_high, low2, high2])
            })
            .collect();
        self.notes.append(&mut sub.notes);
        self.procedures = sub.procedures;
        *self.stat_loops.get_mut() = sub.stat_loops.into_inner();
        let calls = sub.called;
        self.procedures.push(SpmdProcedure {
            key,
            name,
            place,
            source,
            shadows,
            host_shadows,
            gathers,
            calls,
            used: false,
        });
        Ok(self.procedures.len() - 1)
    }

    /// The copy's text: the subroutine with the descriptors as extra
    /// arguments, its distributed dummies as allocatable local parts, its
    /// body planned statement by statement.
    fn emit_procedure(
        &self,
        callee: &syntax::Unit,
        plans: &[Plan],
        name: &str,
        positions: &[(usize, SymbolId)],
    ) -> String {
        let mut out = String::new();
        let mut arguments: Vec<String> = callee.dummies.iter().map(|it| it.text.clone()).collect();
        let mut sorted = positions.to_vec();
        sorted.sort();
        arguments.extend(sorted.iter().map(|(_, dummy)| format!("hpf_d_{}", self.distributed[dummy].name)));
        let is_function = callee.kind == UnitKind::Function;
        if is_function {
            // `double precision function f(x)` as `double precision function
            // hpf_p1_f(x) result(f)`: the body assigns the result by its name.
            let header = self.slice(callee.header);
            let lower = header.to_ascii_lowercase();
            let prefix = lower.find("function").map_or("", |at| header[..at].trim());
            let result = callee.name.as_ref().map_or("", |it| it.text.as_str());
            let _ = writeln!(out, "  {prefix} function {name}({}) result({result})", arguments.join(", "));
        } else {
            let _ = writeln!(out, "  subroutine {name}({})", arguments.join(", "));
        }
        let _ = writeln!(out, "  use hpf_runtime");
        out.push_str(&self.procedure_uses());
        out.push_str(&self.host_array_uses());
        out.push_str(&self.specification(callee));
        self.local_declarations(&mut out);
        // Rank 0's bytes of a scalar dummy (`emit_dummy_bcast`).
        let _ = writeln!(out, "  character(len=1), allocatable :: hpf_sb(:)");
        let model = &self.analysis.model;
        for (_, local) in self.distributed.iter().filter(|(id, _)| id.unit == self.main && !model.symbol(**id).is_dummy)
        {
            crate::emit_alloc(&mut out, local);
        }
        for plan in plans {
            self.emit_plan(&mut out, plan);
        }
        let kind = if is_function { "function" } else { "subroutine" };
        let _ = writeln!(out, "  end {kind} {name}");
        out
    }

    /// Keeps the copies the main program's `plans` reach, directly or
    /// through other copies.
    pub(crate) fn keep_used_procedures(&mut self, plans: &[Plan]) {
        self.called = calls_of(plans);
        let mut stack = self.called.clone();
        while let Some(index) = stack.pop() {
            let procedure = &mut self.procedures[index];
            if !procedure.used {
                procedure.used = true;
                stack.extend(procedure.calls.iter().copied());
            }
        }
    }

    /// The USE statements that make the copies this unit calls visible.
    pub(crate) fn procedure_uses(&self) -> String {
        let file = &self.analysis.file;
        let mut res = String::new();
        let mut generated = false;
        let mut by_module: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
        for &index in &self.called {
            let procedure = &self.procedures[index];
            match procedure.place {
                _ if self.place == Some(procedure.place) => {}
                Place::Generated => generated = true,
                Place::Module(module) => by_module.entry(module).or_default().push(&procedure.name),
                // Seen by host association.
                Place::Internal => {}
            }
        }
        if generated {
            res.push_str("  use hpf_procedures\n");
        }
        for (module, names) in by_module {
            let module_name = file.units[module].name.as_ref().map_or("", |it| it.text.as_str());
            let _ = writeln!(res, "  use {module_name}, only: {}", names.join(", "));
        }
        res
    }

    /// The USE statements that give a copy the local parts, descriptors and
    /// gathered copies of the module arrays it uses from modules other
    /// than its own (its own module's are there by host association).
    fn host_array_uses(&self) -> String {
        let model = &self.analysis.model;
        let own = match self.place {
            Some(Place::Module(index)) => self.analysis.file.units[index].name.as_ref().map(|it| it.key()),
            _ => None,
        };
        let mut per_module: BTreeMap<UnitId, Vec<String>> = BTreeMap::new();
        for (id, distributed) in &self.distributed {
            let module = model.units[id.unit].name.as_ref().map(|it| it.key());
            if model.units[id.unit].kind == UnitKind::Module && module != own {
                let name = &distributed.name;
                per_module.entry(id.unit).or_default().push(format!("{name}, hpf_d_{name}, hpf_g_{name}"));
            }
        }
        let mut res = String::new();
        for (unit, names) in per_module {
            let Some(module) = model.units[unit].name.as_ref() else { continue };
            let _ = writeln!(res, "  use {}, only: {}", module.text, names.join(", "));
        }
        res
    }

    /// A module of the file as written, with the copies of its procedures
    /// before its END statement.
    pub(crate) fn module_text(&self, module: &syntax::Unit) -> String {
        let text = self.module_source(module);
        let index = self.analysis.file.units.iter().position(|it| std::ptr::eq(&**it, module));
        let copies: Vec<&SpmdProcedure> = self
            .procedures
            .iter()
            .filter(|it| it.used && index.is_some_and(|index| it.place == Place::Module(index)))
            .collect();
        if copies.is_empty() {
            return text;
        }
        let trimmed = text.trim_end();
        let end_line = trimmed.rfind('\n').map_or(0, |it| it + 1);
        let mut res = trimmed[..end_line].to_string();
        for copy in copies {
            let _ = writeln!(res, "\n{}", copy.source.trim_end());
        }
        res.push_str(&trimmed[end_line..]);
        res.push('\n');
        res
    }

    /// The copies of the program's internal subroutines, to follow its CONTAINS.
    pub(crate) fn internal_copies(&self) -> Vec<&str> {
        self.procedures
            .iter()
            .filter(|it| it.used && it.place == Place::Internal)
            .map(|it| it.source.as_str())
            .collect()
    }

    /// The generated module of the copies of external subroutines, if any.
    pub(crate) fn emit_procedures_module(&self, out: &mut String) {
        let copies: Vec<&SpmdProcedure> =
            self.procedures.iter().filter(|it| it.used && it.place == Place::Generated).collect();
        if copies.is_empty() {
            return;
        }
        let _ = writeln!(out, "! hpf-ls: subroutines specialised to run on every process");
        let _ = writeln!(out, "module hpf_procedures\ncontains");
        for copy in copies {
            let _ = writeln!(out, "\n{}", copy.source.trim_end());
        }
        let _ = writeln!(out, "end module hpf_procedures\n");
    }

    /// Whether `name` is a scalar dummy of the subroutine being lowered.
    pub(crate) fn is_scalar_dummy(&self, name: &str) -> bool {
        let model = &self.analysis.model;
        self.place.is_some()
            && self.lookup(&name.to_ascii_lowercase()).is_some_and(|id| {
                let symbol = model.symbol(id);
                id.unit == self.main && symbol.is_dummy && symbol.shape.is_empty()
            })
    }

    /// Hands rank 0's value of a scalar dummy to the other processes after
    /// a statement that may have set it (a CALL on rank 0), writing it only
    /// where it changed: the actual may be a constant, which a write would
    /// fault on, and which a correct program does not change. An INTENT(IN)
    /// dummy is left alone.
    pub(crate) fn emit_dummy_bcast(&self, out: &mut String, name: &str) {
        // INTENT(IN): nothing sets it.
        let units = analysis::model::flatten_units(&self.analysis.file);
        if units.get(self.main).is_some_and(|unit| self.intent_in_scalar(unit.0, self.main, &name.to_ascii_lowercase()))
        {
            return;
        }
        let _ = writeln!(out, "  hpf_sb = transfer({name}, [' '])");
        let _ = writeln!(out, "  call MPI_Bcast(hpf_sb, size(hpf_sb), MPI_BYTE, 0, MPI_COMM_WORLD)");
        let _ = writeln!(out, "  if (any(hpf_sb /= transfer({name}, [' ']))) {name} = transfer(hpf_sb, {name})");
    }

    pub(crate) fn emit_spmd_call(&self, out: &mut String, call: &SpmdCall) {
        if call.remaps.is_empty() {
            let _ = writeln!(out, "{}", self.edited_statement(call.stmt, &call.edits));
        } else {
            self.emit_remapped_call(out, &call.remaps, &self.edited_statement(call.stmt, &call.edits));
        }
    }
}

/// Widens `distributed`'s shadow areas to `shadows` (low, high; along the
/// second distributed dimension too).
fn grow_shadows(distributed: &mut Distributed, shadows: [i64; 4]) {
    distributed.shadow_low = distributed.shadow_low.max(shadows[0]);
    distributed.shadow_high = distributed.shadow_high.max(shadows[1]);
    if let Some(second) = &mut distributed.second {
        second.shadow_low = second.shadow_low.max(shadows[2]);
        second.shadow_high = second.shadow_high.max(shadows[3]);
    }
}

/// The copies that `plans` call, at any depth of their constructs.
fn calls_of(plans: &[Plan]) -> Vec<usize> {
    let mut res = Vec::new();
    let mut stack: Vec<&Plan> = plans.iter().collect();
    while let Some(plan) = stack.pop() {
        match plan {
            Plan::Call(call) if !res.contains(&call.index) => res.push(call.index),
            Plan::Sequential { body, .. } | Plan::While { body, .. } => stack.extend(body.iter()),
            Plan::If { branches, .. } => stack.extend(branches.iter().flat_map(|it| &it.1)),
            _ => {}
        }
    }
    res.sort_unstable();
    res
}

impl Lowering<'_> {
    /// Refuses, at its argument, an element of a distributed array passed
    /// to an array dummy of a function of the file (F77 sequence
    /// association, `F(A(K))`): the dummy is the rest of the array from that
    /// element, which no process holds whole. (An element of a replicated
    /// array passes as the sequential program passes it; `CALL S(A(1), N)`
    /// runs on rank 0 on a gathered copy of A.)
    pub(crate) fn check_sequence_association(&mut self) {
        let model = &self.analysis.model;
        let units = analysis::model::flatten_units(&self.analysis.file);
        // Each procedure of the file: which of its dummies are arrays.
        let mut procedures: Vec<(String, &[syntax::Name], Vec<bool>)> = Vec::new();
        for (id, (unit, _)) in units.iter().enumerate() {
            let (UnitKind::Subroutine | UnitKind::Function, Some(name)) = (unit.kind, &unit.name) else { continue };
            let arrays = unit
                .dummies
                .iter()
                .map(|dummy| {
                    model
                        .lookup(id, &dummy.key())
                        .filter(|it| it.unit == id)
                        .is_some_and(|it| model.symbol(it).is_array())
                })
                .collect();
            procedures.push((name.key(), &unit.dummies, arrays));
        }
        let mut problems: Vec<(TextRange, String)> = Vec::new();
        for (id, (unit, _)) in units.iter().enumerate() {
            let mut stack: Vec<&Stmt> = unit.body.iter().collect();
            while let Some(stmt) = stack.pop() {
                stack.extend(stmt.children());
                // (A CALL with an element of a distributed array runs on
                // rank 0 on a gathered copy, element included: only function
                // references pass a fetched scalar.)
                let mut calls: Vec<(&syntax::Name, Vec<&syntax::Expr>)> = Vec::new();
                for expr in statement_exprs(stmt) {
                    expr.walk(|it| {
                        if let ExprKind::Ref { name, args } = &it.kind {
                            let is_array = model.lookup(id, &name.key()).is_some_and(|s| model.symbol(s).is_array());
                            if !is_array {
                                let actuals = args
                                    .iter()
                                    .filter_map(|arg| match arg {
                                        Subscript::Expr(expr) => Some(expr),
                                        _ => None,
                                    })
                                    .collect();
                                calls.push((name, actuals));
                            }
                        }
                    });
                }
                for (callee, actuals) in calls {
                    let Some((_, dummies, arrays)) = procedures.iter().find(|it| it.0 == callee.key()) else {
                        continue;
                    };
                    for (position, actual) in actuals.iter().enumerate() {
                        let ExprKind::Ref { name, args } = &actual.kind else { continue };
                        let element = args.iter().all(|it| matches!(it, Subscript::Expr(_)));
                        let Some(array) = model.lookup(id, &name.key()).filter(|it| model.symbol(*it).is_array())
                        else {
                            continue;
                        };
                        let distributed = model.distribution_of(array).is_some_and(|(_, it)| !it.formats.is_empty());
                        if element && distributed && arrays.get(position).copied().unwrap_or(false) {
                            problems.push((
                                actual.range,
                                format!(
                                    "`{}` is an element of the distributed array `{}`, passed to the array dummy `{}` of \
                                     `{}` (sequence association: the rest of the array from there), which the MPI \
                                     backend does not support; pass a section, such as `{}({}:)`, or the whole array",
                                    self.slice(actual.range),
                                    name.text,
                                    dummies[position].text,
                                    callee.text,
                                    name.text,
                                    args.first().map(|it| self.slice(it.range())).unwrap_or_default(),
                                ),
                            ));
                        }
                    }
                }
            }
        }
        problems.sort_by_key(|it| it.0.start);
        problems.dedup();
        for (range, message) in problems {
            self.error(range, message);
        }
    }
}

/// The expressions a statement holds itself (not those of nested statements).
fn statement_exprs(stmt: &Stmt) -> Vec<&syntax::Expr> {
    match &stmt.kind {
        StmtKind::Assign { lhs, rhs } => vec![lhs, rhs],
        StmtKind::Call { args, .. } => args.iter().collect(),
        StmtKind::Output { items } => items.iter().collect(),
        StmtKind::Other { exprs, .. } => exprs.iter().collect(),
        StmtKind::If { branches } => branches.iter().filter_map(|(cond, _)| cond.as_ref()).collect(),
        StmtKind::Where { mask, elsewhere, .. } => {
            mask.iter().chain(elsewhere.iter().filter_map(|(it, _)| it.as_ref())).collect()
        }
        StmtKind::Forall { mask, .. } => mask.iter().collect(),
        StmtKind::DoWhile { cond, .. } => cond.iter().collect(),
        StmtKind::Do { control, .. } => {
            control.iter().flat_map(|it| [&it.lo, &it.hi].into_iter().chain(it.step.iter())).collect()
        }
    }
}

impl Lowering<'_> {
    /// Whether the arguments of the CALL `stmt` are positional, one
    /// expression each (`CALL S` without a list when `args` is empty);
    /// `None` when its argument list is not understood.
    pub(crate) fn positional(&self, stmt: &Stmt, args: &[syntax::Expr]) -> Option<bool> {
        let text = self.slice(stmt.range);
        let close = text.trim_end().len().saturating_sub(1);
        let Some(open) = text.find('(') else { return Some(args.is_empty()) };
        let inside = text.get(open + 1..close).filter(|_| text.trim_end().ends_with(')'))?;
        let parts = top_level_parts(inside);
        Some(
            (inside.trim().is_empty() && args.is_empty())
                || parts.len() == args.len()
                    && parts.iter().zip(args).all(|((at, part), arg)| {
                        stmt.range.start + open + 1 + at + (part.len() - part.trim_start().len()) == arg.range.start
                            && !part.contains('=')
                    }),
        )
    }
}
