//! Every place a symbol's name appears: declarations, statements and
//! directives. The index behind definition, references, rename, hover and
//! semantic tokens.

use syntax::directive::{AttrKind, DirectiveBody, DistFormatKind};
use syntax::{Expr, ExprKind, Name, Stmt, StmtKind, Subscript, TextRange};

use crate::model::{flatten_units, SymbolId, UnitId};
use crate::FileAnalysis;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Occurrence {
    pub range: TextRange,
    pub symbol: SymbolId,
    /// The declaring occurrence (type declaration, PROCESSORS, TEMPLATE, dummy).
    pub is_declaration: bool,
    pub in_directive: bool,
}

struct Collector<'a> {
    analysis: &'a FileAnalysis,
    unit: UnitId,
    out: Vec<Occurrence>,
}

impl Collector<'_> {
    fn name(&mut self, name: &Name, in_directive: bool) {
        if let Some(symbol) = self.analysis.model.lookup(self.unit, &name.key()) {
            let is_declaration = self.analysis.model.symbol(symbol).name.range == name.range;
            self.out.push(Occurrence { range: name.range, symbol, is_declaration, in_directive });
        }
    }

    fn expr(&mut self, expr: &Expr, in_directive: bool) {
        expr.walk(|it| match &it.kind {
            ExprKind::Name(name) | ExprKind::Ref { name, .. } => self.name(name, in_directive),
            _ => {}
        });
    }

    fn subscripts(&mut self, subscripts: &[Subscript], in_directive: bool) {
        for subscript in subscripts {
            match subscript {
                Subscript::Expr(expr) | Subscript::Keyword { value: expr, .. } => self.expr(expr, in_directive),
                Subscript::Range { lo, hi, stride, .. } => {
                    for expr in lo.iter().chain(hi).chain(stride) {
                        self.expr(expr, in_directive);
                    }
                }
                Subscript::Star(_) => {}
            }
        }
    }

    fn statements(&mut self, body: &[Stmt]) {
        let mut stack: Vec<&Stmt> = body.iter().rev().collect();
        while let Some(stmt) = stack.pop() {
            match &stmt.kind {
                StmtKind::Do { control: Some(control), .. } => {
                    self.name(&control.var, false);
                    self.expr(&control.lo, false);
                    self.expr(&control.hi, false);
                    if let Some(step) = &control.step {
                        self.expr(step, false);
                    }
                }
                StmtKind::Forall { specs, mask, .. } => {
                    for spec in specs {
                        self.name(&spec.var, false);
                        self.expr(&spec.lo, false);
                        self.expr(&spec.hi, false);
                        if let Some(step) = &spec.step {
                            self.expr(step, false);
                        }
                    }
                    if let Some(mask) = mask {
                        self.expr(mask, false);
                    }
                }
                StmtKind::DoWhile { cond: Some(cond), .. } => self.expr(cond, false),
                StmtKind::Where { mask, elsewhere, .. } => {
                    for mask in mask.iter().chain(elsewhere.iter().filter_map(|(it, _)| it.as_ref())) {
                        self.expr(mask, false);
                    }
                }
                StmtKind::Assign { lhs, rhs } => {
                    self.expr(lhs, false);
                    self.expr(rhs, false);
                }
                StmtKind::If { branches } => {
                    for cond in branches.iter().filter_map(|(it, _)| it.as_ref()) {
                        self.expr(cond, false);
                    }
                }
                StmtKind::Call { name, args } => {
                    self.name(name, false);
                    for arg in args {
                        self.expr(arg, false);
                    }
                }
                StmtKind::Output { items } => {
                    for item in items {
                        self.expr(item, false);
                    }
                }
                StmtKind::Other { exprs, .. } => {
                    for expr in exprs {
                        self.expr(expr, false);
                    }
                }
                StmtKind::Do { control: None, .. } | StmtKind::DoWhile { cond: None, .. } => {}
            }
            stack.extend(stmt.children().into_iter().rev());
        }
    }

    fn unit(&mut self, unit: &syntax::Unit) {
        for dummy in &unit.dummies {
            self.name(dummy, false);
        }
        for decl in &unit.decls {
            for attr in &decl.attrs {
                if let syntax::DeclAttr::Dimension(dims) = attr {
                    self.subscripts(dims, false);
                }
            }
            for entity in &decl.entities {
                self.name(&entity.name, false);
                if let Some(dims) = &entity.dims {
                    self.subscripts(dims, false);
                }
                if let Some(init) = &entity.init {
                    self.expr(init, false);
                }
            }
        }
        for directive in &unit.directives {
            match &directive.body {
                DirectiveBody::Mapping(mapping) => {
                    for entity in &mapping.entities {
                        self.name(&entity.name, true);
                        let is_shape = mapping.attr(|it| matches!(it, AttrKind::Processors | AttrKind::Template));
                        if let (Some(args), Some(_)) = (&entity.args, is_shape) {
                            self.subscripts(args, true);
                        }
                    }
                    for attr in &mapping.attrs {
                        match &attr.kind {
                            AttrKind::Align(spec) | AttrKind::Realign(spec) => {
                                self.name(&spec.target, true);
                                // Align subscripts hold dummies, which are not
                                // symbols; only named constants inside count.
                                for subscript in spec.subscripts.iter().flatten() {
                                    if let Some(expr) = subscript.as_expr() {
                                        expr.walk(|it| {
                                            if let ExprKind::Name(name) = &it.kind {
                                                let is_dummy = spec.sources.iter().flatten().any(|source| {
                                                    source
                                                        .as_expr()
                                                        .and_then(Expr::as_name)
                                                        .is_some_and(|dummy| dummy.key() == name.key())
                                                });
                                                if !is_dummy {
                                                    self.name(name, true);
                                                }
                                            }
                                        });
                                    }
                                }
                            }
                            AttrKind::Distribute(spec) | AttrKind::Redistribute(spec) => {
                                if let Some(target) = spec.onto.as_ref().and_then(|it| it.target.as_ref()) {
                                    self.name(target, true);
                                }
                                for format in spec.formats.iter().flat_map(|it| it.list.iter().flatten()) {
                                    match &format.kind {
                                        DistFormatKind::Block(Some(expr))
                                        | DistFormatKind::Cyclic(Some(expr))
                                        | DistFormatKind::GenBlock(expr)
                                        | DistFormatKind::Indirect(expr) => self.expr(expr, true),
                                        _ => {}
                                    }
                                }
                            }
                            AttrKind::Dimension(dims) => self.subscripts(dims, true),
                            _ => {}
                        }
                    }
                }
                DirectiveBody::Independent(independent) => {
                    for name in
                        independent.indices.iter().flatten().chain(&independent.new).chain(&independent.reduction)
                    {
                        self.name(name, true);
                    }
                }
                DirectiveBody::On(on) => {
                    self.expr(&on.home, true);
                    for object in on.resident.iter().flat_map(|it| it.objects.iter()) {
                        self.expr(object, true);
                    }
                    for name in &on.new {
                        self.name(name, true);
                    }
                }
                DirectiveBody::Resident(resident) => {
                    for object in &resident.objects {
                        self.expr(object, true);
                    }
                }
                DirectiveBody::EndOn | DirectiveBody::EndResident | DirectiveBody::Invalid => {}
            }
        }
        self.statements(&unit.body);
    }
}

/// Every occurrence of a symbol's name in the file, sorted by position;
/// computed once per analysis.
pub fn occurrences(analysis: &FileAnalysis) -> &[Occurrence] {
    analysis.occurrence_index.get_or_init(|| {
        let mut out = Vec::new();
        for (unit_id, (unit, _)) in flatten_units(&analysis.file).into_iter().enumerate() {
            let mut collector = Collector { analysis, unit: unit_id, out: Vec::new() };
            collector.unit(unit);
            out.extend(collector.out);
        }
        out.sort_by_key(|it| (it.range.start, it.range.end));
        out.dedup();
        out
    })
}

/// The occurrence whose range holds `offset` (ends included), by binary search.
pub fn occurrence_at(analysis: &FileAnalysis, offset: usize) -> Option<&Occurrence> {
    let all = occurrences(analysis);
    // Occurrences do not overlap; two may touch at `offset` (then the first wins).
    let after = all.partition_point(|it| it.range.start <= offset);
    all[after.saturating_sub(2)..after].iter().find(|it| it.range.contains_inclusive(offset))
}
