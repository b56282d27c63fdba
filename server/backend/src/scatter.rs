//! Loops that update a 1-D distributed array through an index computed in
//! the iteration: `CHARGE(CELL(P)) = CHARGE(CELL(P)) + 1` (a charge deposit,
//! a histogram). The element an iteration updates is known only when it
//! runs, so no owner-computes split applies; this is the seed's update
//! transfer after the loop instead.
//!
//! Each process runs its share of the iterations: those whose distributed
//! reads it owns (`CELL(P)` on CELL's owner), or a run of them when the
//! iteration reads nothing distributed. For each one it evaluates the
//! element's index and the value combined with it, then every process sends
//! each contribution, with the iteration's number, to the element's owner
//! (`hpf_send_to_owners_*`: one all-to-all of counts, three of data). The
//! owner applies the statement to each contribution in the order of the
//! iterations that made them, so every element goes through the same
//! operations in the same order as in the sequential loop: a floating-point
//! sum gives the same bits, and any `X(e) = f(X(e), v)` is allowed, not only
//! an associative one. An assignment whose value does not read the array
//! (`X(PERM(I)) = B(I)`) is the same with `f(x, v) = v`: the last
//! iteration that names an element gives its value.

use std::collections::BTreeMap;
use std::fmt::Write;

use analysis::model::SymbolId;
use syntax::{BinaryOp, Expr, ExprKind, LoopControl, Stmt, StmtKind, Subscript, TextRange};

use crate::element_type::ElementType;
use crate::{mentions, Lowering};

/// The iterations a process runs to compute its contributions.
#[derive(Clone, Debug)]
enum Share {
    /// A run of consecutive iterations per process (nothing distributed is read).
    Any,
    /// The iterations `v` whose element `v + offset` of a 1-D array the
    /// process owns, every distributed read being on that element's cell
    /// or, on a BLOCK array, at a distance `reads` gives (the neighbours'
    /// elements are fetched into the shadows first).
    Owner { array: SymbolId, offset: i64, reads: BTreeMap<SymbolId, (i64, i64)> },
}

/// A DO loop whose one statement is `X(e) = f(X(e), v)`.
#[derive(Clone, Debug)]
pub(crate) struct Scatter<'a> {
    pub(crate) stmt: &'a Stmt,
    control: &'a LoopControl,
    assignment: &'a Stmt,
    /// The array updated.
    target: SymbolId,
    /// The index `e` in the left side, and in the right side (none when
    /// the value replaces the element).
    index: TextRange,
    other_index: Option<TextRange>,
    /// The value `v` combined with the element.
    value: TextRange,
    /// The condition of an IF around the assignment.
    guard: Option<TextRange>,
    step: i64,
    suffix: ElementType,
    /// When the updates of one element may be combined before they are
    /// sent, with the same result (integer sums, MAX, MIN, IAND, IOR,
    /// IEOR): how two values combine, `{a}` and `{b}` standing for them.
    fold: Option<&'static str>,
    share: Share,
    /// For a CYCLIC share: the distributed subscripts of `e` and `v` as
    /// local positions.
    edits: Vec<(TextRange, String)>,
}

/// The text of an expression without blanks or case, to compare references.
fn normalized(text: &str) -> String {
    text.chars().filter(|it| !it.is_whitespace() && *it != '&').map(|it| it.to_ascii_lowercase()).collect()
}

/// Intrinsics of two arguments whose value the owner may compute from the
/// element and a contribution.
const COMBINING: &[&str] = &["max", "min", "iand", "ior", "ieor", "mod", "modulo", "dim", "sign"];

impl<'a> Lowering<'a> {
    /// The scatter form of a DO loop, or why it has none.
    pub(crate) fn scatter_loop<'s>(&mut self, stmt: &'s Stmt) -> Result<Scatter<'s>, String>
    where
        'a: 's,
    {
        let StmtKind::Do { control: Some(control), body, .. } = &stmt.kind else {
            return Err("it is not a counted DO loop".to_string());
        };
        let statements: Vec<&Stmt> = body
            .iter()
            .filter(|it| !(it.children().is_empty() && self.begins_with_keyword(it, &["continue"])))
            .collect();
        let [statement] = statements.as_slice() else {
            return Err("its body is not one assignment".to_string());
        };
        // The assignment, maybe under an IF with no ELSE (`if (q(i) > 0) ...`).
        let (assignment, guard) = match &statement.kind {
            StmtKind::If { branches } => match branches.as_slice() {
                [(Some(cond), body)] if body.len() == 1 => (&body[0], Some(cond)),
                _ => return Err("its body is not one assignment".to_string()),
            },
            _ => (*statement, None),
        };
        let StmtKind::Assign { lhs, rhs } = &assignment.kind else {
            return Err("its body is not one assignment".to_string());
        };
        // Its text is replaced.
        self.stands_alone(stmt, control)?;
        let mut bounds = vec![&control.lo, &control.hi];
        bounds.extend(control.step.as_ref());
        // The bounds are evaluated again inside the loop (its iterations' numbers).
        if bounds.iter().any(|it| mentions(it, &[control.var.key()])) {
            return Err("its bounds read its index".to_string());
        }
        let step = match &control.step {
            Some(step) => self.constant_of(step).ok_or("its step is not a constant")?,
            None => 1,
        };
        if step == 0 {
            return Err("its step is zero".to_string());
        }
        let ExprKind::Ref { name, args } = &lhs.kind else {
            return Err("it does not assign an element of a distributed array".to_string());
        };
        let target = self.lookup(&name.key()).filter(|id| self.distributed.contains_key(id)).ok_or_else(|| {
            format!("it does not assign an element of a distributed array ({} is not distributed)", name.text)
        })?;
        let distributed = &self.distributed[&target];
        if distributed.lbs.len() != 1 || distributed.second.is_some() || (distributed.cyclic && !distributed.plain) {
            return Err(format!("{} is not a 1-D array on a 1-D arrangement", distributed.name));
        }
        let [Subscript::Expr(index)] = args.as_slice() else {
            return Err(format!("it assigns {} other than as one element", distributed.name));
        };
        let element = normalized(self.slice(lhs.range));
        // The right side: the element and one other operand, or a value
        // that does not read the array at all (`x(perm(i)) = b(i)`: the
        // last iteration that names an element gives its value).
        let overwrite = self.distributed_occurrences(rhs.range).iter().all(|it| it.1 != target);
        let (value, other_index) = if overwrite {
            (rhs, None)
        } else {
            let (other_element, value) = combined_operands(rhs, &|it: &Expr| {
                normalized(self.slice(it.range)) == element
            })
            .ok_or_else(|| {
                format!("its right side is not `{0} op v` or `f({0}, v)` with v not reading {0}", self.slice(lhs.range))
            })?;
            let ExprKind::Ref { args: other_args, .. } = &other_element.kind else {
                return Err("its right side does not read the element it assigns".to_string());
            };
            let [Subscript::Expr(other_index)] = other_args.as_slice() else {
                return Err("its right side does not read the element it assigns".to_string());
            };
            (value, Some((other_element, other_index)))
        };
        // Neither the index nor the value reads the array updated, and both
        // call nothing with side effects.
        let mut parts = vec![index, value];
        parts.extend(guard);
        for part in &parts {
            if self.distributed_occurrences(part.range).iter().any(|it| it.1 == target) {
                return Err(format!("the index, the value or the condition reads {}", distributed.name));
            }
            self.calls_only_intrinsics(part)?;
        }
        // The value as sent must convert to the element's type as the
        // expression would: of the same type, or an integer into a real.
        let suffix = distributed.suffix;
        let value_type = self.type_of(value).ok_or("the type of the value combined is not plainly known")?;
        // (Assigned as it is, any number converts alike at either end.)
        let converts = value_type == suffix
            || (value_type == ElementType::I4 && matches!(suffix, ElementType::R4 | ElementType::R8))
            || (overwrite && value_type.is_numeric() && suffix.is_numeric());
        if !converts {
            return Err(format!(
                "the value combined with {} is of another type than the array's element",
                distributed.name
            ));
        }
        if let ExprKind::Binary { op: BinaryOp::Other, .. } = &rhs.kind {
            if !suffix.is_logical() {
                return Err("its right side is not arithmetic".to_string());
            }
        }
        let (share, edits) = self.scatter_share(control, &parts)?;
        let fold = match other_index {
            // The later of two values of one element wins (the sort keeps
            // each process's updates in the loop's order).
            None => Some("{b}"),
            Some((other_element, _)) if suffix == ElementType::I4 => exact_fold(rhs, other_element),
            Some(_) => None,
        };
        Ok(Scatter {
            stmt,
            control,
            assignment,
            target,
            index: index.range,
            other_index: other_index.map(|it| it.1.range),
            value: value.range,
            guard: guard.map(|it| it.range),
            step,
            suffix,
            fold,
            share,
            edits,
        })
    }

    /// Refuses calls of anything but arrays and elemental intrinsics in
    /// `expr`, sections, and constructs it does not look into.
    fn calls_only_intrinsics(&self, expr: &Expr) -> Result<(), String> {
        let mut why = None;
        expr.walk(|it| match &it.kind {
            ExprKind::Ref { name, args } => {
                let array = self.lookup(&name.key()).is_some_and(|id| self.analysis.model.symbol(id).is_array());
                if !array && !crate::assign::ELEMENTAL.contains(&name.key().as_str()) {
                    why.get_or_insert(format!("it calls {}, which is not an elemental intrinsic", name.text));
                }
                if args.iter().any(|arg| !matches!(arg, Subscript::Expr(_) | Subscript::Keyword { .. })) {
                    why.get_or_insert(format!("it reads a section of {}", name.text));
                }
            }
            ExprKind::Other(_) => {
                why.get_or_insert("the index or the value is not a plain expression".to_string());
            }
            _ => {}
        });
        why.map_or(Ok(()), Err)
    }

    /// Which iterations each process runs: those whose distributed reads
    /// (all `Y(v + c)` of 1-D arrays) it owns, on one template cell, or on a
    /// BLOCK array at distances the neighbour fetch brings; any when there
    /// are none. With the CYCLIC subscript edits.
    fn scatter_share(
        &mut self,
        control: &LoopControl,
        parts: &[&Expr],
    ) -> Result<(Share, Vec<(TextRange, String)>), String> {
        let var = control.var.key();
        let mut first: Option<(SymbolId, i64)> = None;
        let mut reads: BTreeMap<SymbolId, (i64, i64)> = BTreeMap::new();
        for part in parts {
            for (range, id) in self.distributed_occurrences(part.range) {
                let array = &self.distributed[&id];
                let args = crate::assign::find_reference(part, range);
                let subscript = match args {
                    Some([Subscript::Expr(value)]) if array.second.is_none() && array.lbs.len() == 1 => value,
                    _ => return Err(format!("it reads {} other than as one element of a 1-D array", array.name)),
                };
                let form = self
                    .linear_of(subscript)
                    .filter(|it| it.vars().all(|(key, _)| key == var) && it.vars().map(|it| it.1).sum::<i64>() == 1);
                let Some(form) = form.filter(|_| array.plain) else {
                    return Err(format!("it reads {} at an index other than `{}+c`", array.name, control.var.text));
                };
                let (share, _) = *first.get_or_insert((id, form.constant));
                if !array.same_blocks(&self.distributed[&share]) {
                    return Err(format!(
                        "{} and {} are distributed differently",
                        array.name, self.distributed[&share].name
                    ));
                }
                let entry = reads.entry(id).or_insert((form.constant, form.constant));
                entry.0 = entry.0.min(form.constant);
                entry.1 = entry.1.max(form.constant);
            }
        }
        let Some((array, offset)) = first else {
            return Ok((Share::Any, Vec::new()));
        };
        if self.distributed[&array].cyclic {
            if self.needs_fetch(array, offset, &reads) {
                return Err(format!(
                    "it reads {} at other elements than its iteration's (on a CYCLIC distribution they live on other processes)",
                    self.distributed[&array].name
                ));
            }
            let mut edits = Vec::new();
            for part in parts {
                edits.extend(self.cyclic_subscript_edits(part.range, &[*part])?);
            }
            return Ok((Share::Owner { array, offset, reads: BTreeMap::new() }, edits));
        }
        self.grow_shadows(array, offset, &reads);
        Ok((Share::Owner { array, offset, reads }, Vec::new()))
    }

    /// The loop as the processes' contributions, sent to the owners, which
    /// apply the statement to them in the iterations' order; then every
    /// process sets the loop's index as the loop leaves it.
    pub(crate) fn emit_scatter(&self, out: &mut String, scatter: &Scatter) {
        let control = scatter.control;
        let var = &control.var.text;
        let (first, last) = (self.one_line(control.lo.range), self.one_line(control.hi.range));
        let step = match &control.step {
            Some(step) => self.one_line(step.range),
            None => "1".to_string(),
        };
        let target = &self.distributed[&scatter.target].name;
        let fortran_type = crate::declared_type(self.analysis.model.symbol(scatter.target));
        let _ = writeln!(
            out,
            "  ! hpf-ls: each process computes the updates of {target} of its iterations; their owners apply them in the loop's order"
        );
        let _ = writeln!(
            out,
            "  block\n  integer :: hpf_sn, hpf_sk, hpf_sc, hpf_slo, hpf_shi, hpf_sj, hpf_e\n  integer, allocatable :: hpf_si(:), hpf_so(:), hpf_sp(:), hpf_do(:)\n  logical, allocatable :: hpf_dt(:)\n  {fortran_type}, allocatable :: hpf_sv(:), hpf_dv(:)\n  {fortran_type} :: hpf_sx"
        );
        // The process's iterations, as a DO (inside a loop over courses on
        // a CYCLIC share), around `body`.
        let iterations = |out: &mut String, body: &str| match &scatter.share {
            Share::Any => {
                let _ = writeln!(out, "  call hpf_share_bounds(({first}), ({last}), {step}, hpf_slo, hpf_shi)\n{body}");
            }
            Share::Owner { array, offset, .. } if self.distributed[array].cyclic => {
                let name = &self.distributed[array].name;
                let _ = writeln!(
                    out,
                    "  do hpf_sc = 0, hpf_courses(hpf_d_{name}) - 1\n  call hpf_course_bounds(hpf_d_{name}, {offset}, ({first}), ({last}), {step}, hpf_sc, hpf_slo, hpf_shi)\n{body}\n  end do"
                );
            }
            Share::Owner { .. } => {
                let _ = writeln!(out, "  hpf_slo = hpf_lo\n  hpf_shi = hpf_hi\n{body}");
            }
        };
        if let Share::Owner { array, offset, reads } = &scatter.share {
            if !self.distributed[array].cyclic {
                // The neighbours' elements the iterations read, into the shadows.
                let name = &self.distributed[array].name;
                let _ = writeln!(
                    out,
                    "  call hpf_local_bounds(hpf_d_{name}, {offset}, ({first}), ({last}), {step}, hpf_lo, hpf_hi)"
                );
                self.emit_fetches(out, *array, *offset, scatter.step, reads);
            }
        }
        let _ = writeln!(out, "  hpf_sn = 0");
        iterations(out, &format!("  hpf_sn = hpf_sn + max(0, (hpf_shi - hpf_slo + ({step})) / ({step}))"));
        let index = self.edited(scatter.index, &scatter.edits).replace(['&', '\n'], " ");
        let value = self.edited(scatter.value, &scatter.edits).replace(['&', '\n'], " ");
        let ordinal = format!("({var} - ({first})) / ({step})");
        // (Under a condition, an iteration may contribute nothing.)
        let (open, close) = match scatter.guard {
            Some(guard) => {
                let cond = self.edited(guard, &scatter.edits).replace(['&', '\n'], " ");
                (format!("    if ({cond}) then\n"), "    end if\n")
            }
            None => (String::new(), ""),
        };
        let (lb, ub) = (&self.distributed[&scatter.target].lb, &self.distributed[&scatter.target].ub);
        if let Some(fold) = scatter.fold {
            // One update per element leaves the process, with the number of
            // its last iteration (the owner orders what it gets by those).
            // With at least as many iterations as elements, the updates
            // are folded as they come into a buffer over the elements (no
            // larger than the updates would be); else they are listed,
            // sorted by element (stably: each element's updates stay in the
            // loop's order) and each run folded into its first.
            let dense = fold.replace("{a}", "hpf_dv(hpf_e)").replace("{b}", "hpf_sx");
            let _ = writeln!(
                out,
                "  if (hpf_sn >= {}) then\n  allocate (hpf_dt({lb}:{ub}), hpf_do({lb}:{ub}), hpf_dv({lb}:{ub}))\n  hpf_dt = .false.",
                crate::extent_text(lb, ub)
            );
            iterations(
                out,
                &format!(
                    r#"  do {var} = hpf_slo, hpf_shi, {step}
{open}    hpf_e = {index}
    hpf_sx = {value}
    if (hpf_dt(hpf_e)) then
      hpf_dv(hpf_e) = {dense}
    else
      hpf_dt(hpf_e) = .true.
      hpf_dv(hpf_e) = hpf_sx
    end if
    hpf_do(hpf_e) = {ordinal}
{close}  end do"#
                ),
            );
            let _ = writeln!(
                out,
                r#"  hpf_sk = count(hpf_dt)
  allocate (hpf_si(hpf_sk), hpf_so(hpf_sk), hpf_sv(hpf_sk))
  hpf_sk = 0
  do hpf_e = {lb}, {ub}
    if (.not. hpf_dt(hpf_e)) cycle
    hpf_sk = hpf_sk + 1
    hpf_si(hpf_sk) = hpf_e
    hpf_sv(hpf_sk) = hpf_dv(hpf_e)
    hpf_so(hpf_sk) = hpf_do(hpf_e)
  end do
  else"#
            );
        }
        let _ = writeln!(out, "  allocate (hpf_si(hpf_sn), hpf_so(hpf_sn), hpf_sv(hpf_sn))\n  hpf_sn = 0");
        iterations(
            out,
            &format!(
                "  do {var} = hpf_slo, hpf_shi, {step}\n{open}    hpf_sn = hpf_sn + 1\n    hpf_si(hpf_sn) = {index}\n    hpf_so(hpf_sn) = {ordinal}\n    hpf_sv(hpf_sn) = {value}\n{close}  end do"
            ),
        );
        if scatter.guard.is_some() {
            // The buffers cut to what the iterations gave.
            let _ =
                writeln!(out, "  hpf_si = hpf_si(1:hpf_sn)\n  hpf_so = hpf_so(1:hpf_sn)\n  hpf_sv = hpf_sv(1:hpf_sn)");
        }
        if let Some(fold) = scatter.fold {
            let sorted = fold.replace("{a}", "hpf_sv(hpf_sk)").replace("{b}", "hpf_sv(hpf_sj)");
            let _ = writeln!(
                out,
                r#"  allocate (hpf_sp(hpf_sn))
  call hpf_order_by(hpf_si, hpf_sp)
  hpf_si = hpf_si(hpf_sp)
  hpf_so = hpf_so(hpf_sp)
  hpf_sv = hpf_sv(hpf_sp)
  hpf_sk = 0
  do hpf_sj = 1, hpf_sn
    if (hpf_sk > 0) then
      if (hpf_si(hpf_sk) == hpf_si(hpf_sj)) then
        hpf_sv(hpf_sk) = {sorted}
        hpf_so(hpf_sk) = hpf_so(hpf_sj)
        cycle
      end if
    end if
    hpf_sk = hpf_sk + 1
    hpf_si(hpf_sk) = hpf_si(hpf_sj)
    hpf_sv(hpf_sk) = hpf_sv(hpf_sj)
    hpf_so(hpf_sk) = hpf_so(hpf_sj)
  end do
  hpf_si = hpf_si(1:hpf_sk)
  hpf_so = hpf_so(1:hpf_sk)
  hpf_sv = hpf_sv(1:hpf_sk)
  end if"#
            );
        }
        let _ = writeln!(out, "  call hpf_send_to_owners_{}(hpf_d_{target}, hpf_si, hpf_so, hpf_sv)", scatter.suffix);
        let local = format!("hpf_lx(hpf_d_{target}, hpf_si(hpf_sk))");
        let mut edits = vec![(scatter.index, local.clone()), (scatter.value, "hpf_sv(hpf_sk)".to_string())];
        edits.extend(scatter.other_index.map(|it| (it, local)));
        let apply = self.edited(scatter.assignment.range, &edits).replace(['&', '\n'], " ");
        let _ = writeln!(out, "  do hpf_sk = 1, size(hpf_si)\n    {apply}\n  end do\n  end block");
        let _ = writeln!(out, "  {var} = {}", self.final_value(control));
    }
}

/// How two updates of one INTEGER element combine into one with the same
/// effect, for a right side `rhs` that updates `element`: `x + a + b` is
/// `x + (a + b)`, `x - a - b` is `x - (a + b)`, `max(max(x, a), b)` is
/// `max(x, max(a, b))`; `None` for any other (ordered) update.
fn exact_fold(rhs: &Expr, element: &Expr) -> Option<&'static str> {
    let mut rhs = rhs;
    while let ExprKind::Paren(inner) = &rhs.kind {
        rhs = inner;
    }
    match &rhs.kind {
        ExprKind::Binary { op: BinaryOp::Add, .. } => Some("{a} + {b}"),
        ExprKind::Binary { op: BinaryOp::Sub, lhs, .. } if std::ptr::eq(&**lhs, element) => Some("{a} + {b}"),
        ExprKind::Ref { name, .. } => match name.key().as_str() {
            "max" => Some("max({a}, {b})"),
            "min" => Some("min({a}, {b})"),
            "iand" => Some("iand({a}, {b})"),
            "ior" => Some("ior({a}, {b})"),
            "ieor" => Some("ieor({a}, {b})"),
            _ => None,
        },
        _ => None,
    }
}

/// For a right side `x op v`, `v op x`, `f(x, v)` or `f(v, x)` (through
/// parentheses) where `is_element` holds for `x` and not inside `v`: `x`
/// and `v`.
fn combined_operands<'e>(rhs: &'e Expr, is_element: &dyn Fn(&Expr) -> bool) -> Option<(&'e Expr, &'e Expr)> {
    let mut rhs = rhs;
    while let ExprKind::Paren(inner) = &rhs.kind {
        rhs = inner;
    }
    let (a, b) = match &rhs.kind {
        ExprKind::Binary { lhs, rhs, .. } => (&**lhs, &**rhs),
        ExprKind::Ref { name, args } if COMBINING.contains(&name.key().as_str()) => match args.as_slice() {
            [Subscript::Expr(a), Subscript::Expr(b)] => (a, b),
            _ => return None,
        },
        _ => return None,
    };
    let pair = if is_element(a) {
        (a, b)
    } else if is_element(b) {
        (b, a)
    } else {
        return None;
    };
    Some(pair)
}
