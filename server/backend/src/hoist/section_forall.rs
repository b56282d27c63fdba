//! A section shift along a CYCLIC distributed dimension of an array of rank
//! 2 or more (`w(:, 2:nx, :) = w(:, 1:nx-1, :)`) becomes the FORALL that
//! means the same (`forall (hpf_fi1 = 1:3, hpf_fi2 = 2:nx, hpf_fi3 = 1:2)
//! w(hpf_fi1, hpf_fi2, hpf_fi3) = w(hpf_fi1, hpf_fi2 + ((1) - (2)), hpf_fi3)`):
//! on a CYCLIC distribution the shifted elements live on other processes,
//! not neighbours, and the FORALL runs on the owners of the left side after
//! the elements it reads are fetched from theirs (`nest_fetch.rs`), all of
//! them before any element is assigned, as the array assignment's
//! semantics require. (A rank-1 left side is one run of elements, which
//! `assign.rs` fetches for as it is.)

use analysis::model::{Format, SymbolKind};
use syntax::{Expr, ExprKind, SourceForm, Stmt, StmtKind, Subscript, TextRange};

use super::Hoister;

/// One section dimension of the left side: its index's triplet, as text.
struct Axis {
    lo: String,
    hi: String,
    step: String,
}

impl Hoister<'_> {
    /// The FORALL of a section shift along a CYCLIC dimension, and how many
    /// FORALL indices it uses, or `None` when `stmt` is not one.
    pub(super) fn section_forall(&self, stmt: &Stmt) -> Option<(String, usize)> {
        let StmtKind::Assign { lhs, rhs } = &stmt.kind else { return None };
        // (Fixed form would cut the FORALL at its line length.)
        if self.form != SourceForm::Free {
            return None;
        }
        let ExprKind::Ref { name, args } = &lhs.kind else { return None };
        let id = self.model.lookup(self.unit, &name.key())?;
        let shape = self.distributed_shape(&name.key())?;
        if shape.bounds.len() < 2 || args.len() != shape.bounds.len() || !self.single_line(stmt.range) {
            return None;
        }
        // Distributed in one dimension (2-D grids have their own sections, `grid.rs`).
        if self.distributed_dims(&name.text).iter().filter(|it| **it).count() != 1 {
            return None;
        }
        let cyclic = self.cyclic_dims(id);
        // The left side's sections, and a CYCLIC dimension among them.
        let mut axes = Vec::new();
        let mut cyclic_axes = Vec::new();
        let mut subscripts = Vec::new();
        for (dim, arg) in args.iter().enumerate() {
            match arg {
                Subscript::Range { lo, hi, stride, .. } => {
                    let (lb, ub) = shape.bounds[dim];
                    let text = |it: &Option<Expr>, default: i64| {
                        it.as_ref().map_or(default.to_string(), |it| self.slice(it.range).trim().to_string())
                    };
                    if cyclic.get(dim) == Some(&true) {
                        cyclic_axes.push(axes.len());
                    }
                    subscripts.push(format!("hpf_fi{}", axes.len() + 1));
                    axes.push(Axis { lo: text(lo, lb), hi: text(hi, ub), step: text(stride, 1) });
                }
                Subscript::Expr(expr) if self.is_scalar(expr) => subscripts.push(self.slice(expr.range).to_string()),
                _ => return None,
            }
        }
        // Its indices are names the program does not use.
        if cyclic_axes.is_empty()
            || (1..=axes.len()).any(|it| self.model.lookup(self.unit, &format!("hpf_fi{it}")).is_some())
        {
            return None;
        }
        // The right side, its array references indexed by the FORALL's indices.
        let mut edits = Vec::new();
        let mut shifted = false;
        self.forall_operands(rhs, &axes, &cyclic_axes, &mut edits, &mut shifted)?;
        if !shifted {
            return None;
        }
        edits.sort_by_key(|it: &(TextRange, String)| it.0.start);
        let mut text = String::new();
        let mut at = rhs.range.start;
        for (range, new) in edits {
            text.push_str(self.slice(TextRange::new(at, range.start)));
            text.push_str(&new);
            at = range.end;
        }
        text.push_str(self.slice(TextRange::new(at, rhs.range.end)));
        let triplets: Vec<String> = axes
            .iter()
            .enumerate()
            .map(|(k, axis)| format!("hpf_fi{} = {}:{}:{}", k + 1, axis.lo, axis.hi, axis.step))
            .collect();
        let header = format!("forall ({})", triplets.join(", "));
        let left = format!("{}({})", name.text, subscripts.join(", "));
        let right = text.trim();
        // Free form's lines hold 132 characters: a long assignment goes on
        // continuation lines, and a longer one keeps the statement as it is.
        let end = self.line_end;
        let forall = if header.len() + left.len() + right.len() < 116 {
            format!("{header} {left} = {right}")
        } else if header.len() < 120 && left.len() + right.len() < 116 {
            format!("{header} &{end}      {left} = {right}")
        } else if [header.len(), left.len(), right.len()].iter().all(|it| *it < 118) {
            format!("{header} &{end}      {left} = &{end}      {right}")
        } else {
            return None;
        };
        Some((forall, axes.len()))
    }

    /// Per dimension of the array `id`: whether it is distributed CYCLIC or CYCLIC(m).
    fn cyclic_dims(&self, id: analysis::model::SymbolId) -> Vec<bool> {
        let (Some(resolved), Some((_, distribution))) = (self.model.resolve(id), self.model.distribution_of(id)) else {
            return Vec::new();
        };
        (0..self.model.symbol(id).rank())
            .map(|dim| {
                resolved.axis_of(dim).is_some_and(|(target_dim, _, _)| {
                    matches!(distribution.formats.get(target_dim), Some(Format::Cyclic(_)))
                })
            })
            .collect()
    }

    /// Checks that `expr` is elemental (operators, elemental intrinsics,
    /// scalars, arrays conformable with the left side's sections) and
    /// records the rewrites of its array references; `shifted`: a
    /// distributed one is sectioned otherwise along a CYCLIC dimension.
    fn forall_operands(
        &self,
        expr: &Expr,
        axes: &[Axis],
        cyclic_axes: &[usize],
        edits: &mut Vec<(TextRange, String)>,
        shifted: &mut bool,
    ) -> Option<()> {
        match &expr.kind {
            ExprKind::Int(_) | ExprKind::Literal(_) => Some(()),
            ExprKind::Unary { operand, .. } | ExprKind::Paren(operand) => {
                self.forall_operands(operand, axes, cyclic_axes, edits, shifted)
            }
            ExprKind::Binary { lhs, rhs, .. } => {
                self.forall_operands(lhs, axes, cyclic_axes, edits, shifted)?;
                self.forall_operands(rhs, axes, cyclic_axes, edits, shifted)
            }
            ExprKind::Other(_) => None,
            ExprKind::Name(name) => {
                let id = self.model.lookup(self.unit, &name.key())?;
                let symbol = self.model.symbol(id);
                if symbol.rank() == 0 {
                    return Some(());
                }
                // A whole array: each dimension one of the left side's sections.
                if symbol.rank() != axes.len() || symbol.kind != SymbolKind::Variable {
                    return None;
                }
                let subscripts = symbol
                    .shape
                    .iter()
                    .zip(axes)
                    .enumerate()
                    .map(|(k, (dim, axis))| {
                        let lb = dim.lo.known()?;
                        Some(index(k, axis, &lb.to_string(), "1"))
                    })
                    .collect::<Option<Vec<_>>>()?;
                let distributed = self.model.distribution_of(id).is_some();
                if distributed
                    && cyclic_axes.iter().any(|k| axes[*k].lo != self.lower_of(id, *k) || axes[*k].step != "1")
                {
                    *shifted = true;
                }
                edits.push((expr.range, format!("{}({})", name.text, subscripts.join(", "))));
                Some(())
            }
            ExprKind::Ref { name, args } => {
                let Some(id) = self.model.lookup(self.unit, &name.key()).filter(|it| self.model.symbol(*it).is_array())
                else {
                    // An elemental intrinsic.
                    if !crate::assign::ELEMENTAL.contains(&name.key().as_str()) {
                        return None;
                    }
                    for arg in args {
                        match arg {
                            Subscript::Expr(value) | Subscript::Keyword { value, .. } => {
                                self.forall_operands(value, axes, cyclic_axes, edits, shifted)?
                            }
                            _ => return None,
                        }
                    }
                    return Some(());
                };
                let distributed = self.model.distribution_of(id).is_some();
                let mut subscripts = Vec::new();
                let mut k = 0;
                for arg in args {
                    match arg {
                        Subscript::Range { lo, hi: _, stride, .. } => {
                            let axis = axes.get(k)?;
                            let dim = self.model.symbol(id).shape.get(subscripts.len())?;
                            let lo = lo.as_ref().map_or_else(
                                || dim.lo.known().map(|it| it.to_string()),
                                |it| Some(self.slice(it.range).trim().to_string()),
                            )?;
                            let step =
                                stride.as_ref().map_or("1".to_string(), |it| self.slice(it.range).trim().to_string());
                            if distributed && cyclic_axes.contains(&k) && (lo != axis.lo || step != axis.step) {
                                *shifted = true;
                            }
                            subscripts.push(index(k, axis, &lo, &step));
                            k += 1;
                        }
                        Subscript::Expr(expr) if self.is_scalar(expr) => {
                            subscripts.push(self.slice(expr.range).trim().to_string())
                        }
                        _ => return None,
                    }
                }
                if k != axes.len() {
                    return None;
                }
                edits.push((expr.range, format!("{}({})", name.text, subscripts.join(", "))));
                Some(())
            }
        }
    }

    /// The declared lower bound of the `k`-th dimension of `id`, as text.
    fn lower_of(&self, id: analysis::model::SymbolId, k: usize) -> String {
        self.model.symbol(id).shape.get(k).and_then(|it| it.lo.known()).map_or(String::new(), |it| it.to_string())
    }
}

/// The subscript of an operand's section `lo::step` at the FORALL index of
/// the left side's `k`-th section `axis`: the same position in both.
fn index(k: usize, axis: &Axis, lo: &str, step: &str) -> String {
    let var = format!("hpf_fi{}", k + 1);
    if step == axis.step {
        match (lo.parse::<i64>(), axis.lo.parse::<i64>()) {
            _ if lo == axis.lo => var,
            (Ok(lo), Ok(first)) if lo > first => format!("{var} + {}", lo - first),
            (Ok(lo), Ok(first)) => format!("{var} - {}", first - lo),
            _ => format!("{var} + (({lo}) - ({}))", axis.lo),
        }
    } else {
        format!("({lo}) + ({var} - ({})) / ({}) * ({step})", axis.lo, axis.step)
    }
}
