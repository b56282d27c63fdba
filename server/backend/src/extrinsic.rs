//! EXTRINSIC(HPF_LOCAL) procedures (HPF 2.0, Annex A): a CALL from the
//! global program that passes distributed arrays runs on every process,
//! each passing its *local part* of every distributed actual (its own
//! elements, no shadow: `a(hpf_own_first(hpf_d_a):hpf_own_last(hpf_d_a))`,
//! so an assumed-shape dummy's bounds are 1 .. the local extent unless it
//! declares others) and replicated actuals as they are; nothing is gathered
//! and nothing is exchanged, the procedure's body is plain local Fortran,
//! copied as written. A call that passes no distributed array runs as any
//! replicated call does (on every process, alike).
//!
//! The inquiry functions of HPF_LOCAL_LIBRARY refer to the caller's mapping:
//! the caller sets, per dummy position, the actual's global bounds and
//! descriptor (`hpf_set_local_map` in `runtime.rs`) before the call, and in
//! a procedure that USEs HPF_LOCAL_LIBRARY the array argument of
//! `GLOBAL_SIZE`, `GLOBAL_LBOUND`, `GLOBAL_UBOUND` and `LOCAL_TO_GLOBAL`
//! becomes that entry (`hpf_local_maps(k)`; LOCAL_TO_GLOBAL also takes the
//! dummy's lower bounds); `MY_PROCESSOR()` is the MPI rank. The module
//! `hpf_local_library` ([`LOCAL_LIBRARY`]) is compiled with the runtime.
//!
//! Refused with the reason at the place: an element, section or
//! expression of a distributed array as an actual, arrays aligned with a
//! stride or with three distributed dimensions, a dummy that is not
//! assumed-shape or whose mapping directives (in the procedure or in the
//! caller's interface body for it) are not the actual's mapping,
//! an internal procedure of the program, a procedure that uses distributed
//! arrays by host or use association, the library's other procedures, and
//! a procedure that asks the library about its dummies called from another
//! HPF_LOCAL procedure (the mapping would be its caller's).

use std::fmt::Write;

use analysis::model::{Bound, SymbolId, UnitId};
use syntax::{ExprKind, Stmt, StmtKind, TextRange};

use crate::procedures::Place;
use crate::{top_level_parts, Distributed, Lowering, Plan};

/// A CALL of an HPF_LOCAL subroutine every process makes on its local parts.
pub(crate) struct LocalCall<'a> {
    stmt: &'a Stmt,
    name: String,
    /// The distributed actuals as their local parts.
    edits: Vec<(TextRange, String)>,
    /// The statements that set the mappings the inquiry functions read.
    maps: Vec<String>,
}

/// Replacements, or errors, at ranges of the analysed text.
type Edits = Vec<(TextRange, String)>;

/// The inquiry functions lowered, and how many arguments they take.
const INQUIRIES: &[(&str, usize)] =
    &[("global_size", 1), ("global_lbound", 2), ("global_ubound", 2), ("local_to_global", 2)];

/// The other procedures of HPF_LOCAL_LIBRARY.
const OTHER_LIBRARY: &[&str] = &[
    "global_to_local",
    "abstract_to_physical",
    "physical_to_abstract",
    "global_alignment",
    "global_distribution",
    "global_template",
    "global_shape",
    "local_blkcnt",
    "local_lindex",
    "local_uindex",
];

/// How many dummy positions the runtime keeps a mapping for.
const MAX_MAPPED: usize = 64;

impl<'a> Lowering<'a> {
    /// Whether `unit` is an EXTRINSIC(HPF_LOCAL) procedure.
    pub(crate) fn is_hpf_local(&self, unit: &syntax::Unit) -> bool {
        syntax::extrinsic_model(self.original, unit.header).is_some_and(|(model, _)| model == "hpf_local")
    }

    /// Whether `unit` USEs HPF_LOCAL_LIBRARY.
    fn uses_local_library(unit: &syntax::Unit) -> bool {
        unit.uses.iter().any(|it| it.key() == "hpf_local_library")
    }

    /// The plan of a CALL of an HPF_LOCAL subroutine that passes distributed
    /// arrays (errors pushed where it cannot run so); `None` for other calls.
    pub(crate) fn local_call<'s>(&mut self, stmt: &'s Stmt) -> Option<Plan<'s>>
    where
        'a: 's,
    {
        let StmtKind::Call { name, args } = &stmt.kind else { return None };
        let (callee, callee_id, place) = self.find_subroutine(&name.key()).ok()?;
        if !self.is_hpf_local(callee) {
            return None;
        }
        let occurrences = self.distributed_occurrences(stmt.range);
        if occurrences.is_empty() {
            return None;
        }
        let shown = name.text.clone();
        let mut errors: Vec<(TextRange, String)> = Vec::new();
        if place == Place::Internal {
            errors.push((
                stmt.header,
                "an internal procedure of the program is not supported by the MPI backend as HPF_LOCAL (make it an external procedure with an interface block, or a module procedure)".to_string(),
            ));
        }
        if !self.positional(stmt, args).unwrap_or(false) || args.len() != callee.dummies.len() {
            errors
                .push((stmt.header, "its arguments must be one positional expression per dummy argument".to_string()));
        }
        let model = &self.analysis.model;
        // The interface bodies for it in the caller (and its hosts).
        let flat = analysis::model::flatten_units(&self.analysis.file);
        let mut callers = vec![self.main];
        while let Some(parent) = callers.last().and_then(|it| flat.get(*it)).and_then(|it| it.1) {
            callers.push(parent);
        }
        let interfaces: Vec<UnitId> = callers
            .iter()
            .filter_map(|it| flat.get(*it))
            .flat_map(|(unit, _)| &unit.interfaces)
            .filter(|it| it.name.as_ref().is_some_and(|it| it.key() == name.key()))
            .filter_map(|interface| flat.iter().position(|(it, _)| std::ptr::eq(*it, interface)))
            .collect();
        let mut edits: Vec<(TextRange, String)> = Vec::new();
        let mut maps: Vec<String> = Vec::new();
        let mut passed: Vec<SymbolId> = Vec::new();
        let library = Self::uses_local_library(callee);
        for (range, id) in occurrences {
            let layout: Distributed = self.distributed[&id].clone();
            let Some(position) = args.iter().position(|it| it.range == range && matches!(it.kind, ExprKind::Name(_)))
            else {
                errors.push((range, format!("an element, a section or an expression of the distributed array {} is passed: only whole arrays are passed to an HPF_LOCAL procedure (each process its local part)", layout.name)));
                continue;
            };
            if passed.contains(&id) {
                errors.push((range, format!("{} is passed twice", layout.name)));
                continue;
            }
            passed.push(id);
            if self.relaid.contains(&id) {
                errors.push((range, format!("{} has three distributed dimensions (one kept whole by the MPI backend): its local part is not passed to HPF_LOCAL procedures", layout.name)));
                continue;
            }
            if !layout.plain || layout.stride != 1 || layout.second.as_ref().is_some_and(|it| it.stride != 1) {
                errors.push((range, format!("{} is aligned with a stride, transposed or embedded: its local part is not passed to HPF_LOCAL procedures yet", layout.name)));
                continue;
            }
            if position >= MAX_MAPPED {
                errors.push((
                    range,
                    format!("the MPI backend passes local parts at the first {MAX_MAPPED} argument positions only"),
                ));
                continue;
            }
            let Some(dummy_name) = callee.dummies.get(position) else { continue };
            let Some(dummy) = model.lookup(callee_id, &dummy_name.key()).filter(|it| it.unit == callee_id) else {
                continue;
            };
            let symbol = model.symbol(dummy);
            let assumed_shape = symbol.rank() == layout.lbs.len()
                && symbol.shape.iter().all(|dim| {
                    dim.hi == Bound::Assumed && self.text.get(dim.range.to_range()).is_some_and(|it| !it.contains('*'))
                });
            if !assumed_shape {
                errors.push((symbol.name.range, format!("the dummy {} of the HPF_LOCAL procedure `{shown}` must be an assumed-shape array of rank {} (`{}(:)`): it receives the local part of {}", symbol.name.text, layout.lbs.len(), symbol.name.text, layout.name)));
                continue;
            }
            let mut dummy_layout = layout.clone();
            dummy_layout.name = symbol.name.text.clone();
            dummy_layout.shadow_low = 0;
            dummy_layout.shadow_high = 0;
            let dummies = std::iter::once((dummy, dummy_layout.clone())).collect();
            if let Err(why) = self.check_mapping(callee_id, dummy, &dummies) {
                errors.push((symbol.name.range, format!("the mapping of the dummy {} is not that of its actual {}, which an HPF_LOCAL procedure receives as it is mapped: {why}", symbol.name.text, layout.name)));
                continue;
            }
            // The caller's interface bodies for it describe the same mapping.
            for interface in &interfaces {
                let Some(other) = model.lookup(*interface, &dummy_name.key()).filter(|it| it.unit == *interface) else {
                    continue;
                };
                let dummies = std::iter::once((other, dummy_layout.clone())).collect();
                if let Err(why) = self.check_mapping(*interface, other, &dummies) {
                    let name = &model.symbol(other).name;
                    errors.push((name.range, format!("the interface gives the dummy {} a mapping that is not that of its actual {}, which an HPF_LOCAL procedure receives as it is mapped: {why}", name.text, layout.name)));
                }
            }
            // One descriptor per distributed dimension (two on a grid, `grid.rs`).
            let (desc, second) = match &layout.second {
                None => (format!("hpf_d_{}", layout.name), None),
                Some(second) => {
                    (format!("hpf_d_{}(1)", layout.name), Some((second.dim, format!("hpf_d_{}(2)", layout.name))))
                }
            };
            let dims: Vec<String> = (0..layout.lbs.len())
                .map(|it| match &second {
                    _ if it == layout.dim => format!("hpf_own_first({desc}):hpf_own_last({desc})"),
                    Some((dim, desc)) if *dim == it => format!("hpf_own_first({desc}):hpf_own_last({desc})"),
                    _ => ":".to_string(),
                })
                .collect();
            edits.push((range, format!("{}({})", layout.name, dims.join(", "))));
            if library {
                let list =
                    |values: &[crate::Bound]| values.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
                maps.push(format!(
                    "  call hpf_set_local_map({}, {desc}, {}, [{}], [{}])",
                    position + 1,
                    layout.dim + 1,
                    list(&layout.lbs),
                    list(&layout.ubs)
                ));
                if let Some((dim, desc)) = &second {
                    maps.push(format!("  call hpf_set_local_map2({}, {desc}, {})", position + 1, dim + 1));
                }
            }
        }
        // Replicated arrays passed whole: their mapping is their bounds.
        if library {
            for (position, arg) in args.iter().enumerate().take(MAX_MAPPED) {
                let ExprKind::Name(arg_name) = &arg.kind else { continue };
                let Some(id) = self.lookup(&arg_name.key()) else { continue };
                if self.distributed.contains_key(&id) || !model.symbol(id).is_array() {
                    continue;
                }
                let text = self.slice(arg.range).trim();
                maps.push(format!("  call hpf_set_replicated_map({}, lbound({text}), ubound({text}))", position + 1));
            }
        }
        if !errors.is_empty() {
            for (range, why) in errors {
                self.error(range, format!("CALL of the EXTRINSIC(HPF_LOCAL) procedure `{shown}`: {why}"));
            }
            return Some(Plan::Verbatim(stmt));
        }
        edits.sort_by_key(|it| it.0.start);
        maps.sort();
        Some(Plan::LocalCall(LocalCall { stmt, name: shown, edits, maps }))
    }

    pub(crate) fn emit_local_call(&self, out: &mut String, call: &LocalCall) {
        let _ =
            writeln!(out, "  ! hpf-ls: EXTRINSIC(HPF_LOCAL) {}: every process calls it on its local parts", call.name);
        for map in &call.maps {
            let _ = writeln!(out, "{map}");
        }
        let _ = writeln!(out, "{}", self.edited_statement(call.stmt, &call.edits));
    }

    /// Refuses what the HPF_LOCAL procedures of the file do that is not
    /// lowered (see the module's documentation).
    pub(crate) fn check_local_procedures(&mut self) {
        let file = &self.analysis.file;
        let units: Vec<&'a syntax::Unit> = analysis::model::flatten_units(file).into_iter().map(|it| it.0).collect();
        let local: Vec<&'a syntax::Unit> = units.iter().copied().filter(|it| self.is_hpf_local(it)).collect();
        let asking: Vec<String> = local
            .iter()
            .filter(|it| Self::uses_local_library(it))
            .filter_map(|it| Some(it.name.as_ref()?.key()))
            .collect();
        let mut errors: Vec<(TextRange, String)> = Vec::new();
        for unit in &local {
            if let Err(mut found) = self.local_library_edits(unit) {
                errors.append(&mut found);
            }
            // Distributed arrays of the program or its modules by host or use association.
            let occurrences = analysis::ide::occurrences(self.analysis);
            if let Some(it) = occurrences.iter().find(|it| {
                unit.range.contains_range(it.range) && !it.in_directive && self.distributed_symbol(it.symbol)
            }) {
                errors.push((it.range, format!("an HPF_LOCAL procedure that uses the distributed array {} by host or use association is not supported by the MPI backend (pass it as an argument)", self.slice(it.range))));
            }
            let mut stack: Vec<&Stmt> = unit.body.iter().collect();
            while let Some(stmt) = stack.pop() {
                if let StmtKind::Call { name, .. } = &stmt.kind {
                    if asking.contains(&name.key()) {
                        errors.push((stmt.header, format!("`{}` asks HPF_LOCAL_LIBRARY about its dummies' mappings: it is called from global HPF code only, not from another HPF_LOCAL procedure, by the MPI backend", name.text)));
                    }
                }
                stack.extend(stmt.children());
            }
        }
        // An HPF_LOCAL function given distributed arrays (each process would
        // compute its own value from its local part).
        let functions: Vec<String> = local
            .iter()
            .filter(|it| it.kind == syntax::UnitKind::Function)
            .filter_map(|it| Some(it.name.as_ref()?.key()))
            .collect();
        if !functions.is_empty() {
            let main = units[self.main];
            let occurrences = analysis::ide::occurrences(self.analysis);
            for (word, word_range, open) in references(self.text, main.range) {
                if !functions.contains(&word) {
                    continue;
                }
                let Some(close) = syntax::closing_paren(self.text, open) else { continue };
                let inside = TextRange::new(open, close);
                // An element is a scalar, the same on every process: fine.
                let whole_or_section = |range: TextRange| {
                    let after = self.text[range.end..].trim_start_matches([' ', '\t']);
                    let open = range.end + (self.text[range.end..].len() - after.len());
                    match after.starts_with('(').then(|| syntax::closing_paren(self.text, open)).flatten() {
                        Some(close) => {
                            top_level_parts(&self.text[open + 1..close]).iter().any(|(_, it)| it.contains(':'))
                        }
                        None => true,
                    }
                };
                if let Some(it) = occurrences.iter().find(|it| {
                    inside.contains_range(it.range)
                        && !it.in_directive
                        && self.distributed_symbol(it.symbol)
                        && whole_or_section(it.range)
                }) {
                    errors.push((word_range, format!("the EXTRINSIC(HPF_LOCAL) function `{}` is given the distributed array {}: not supported by the MPI backend (an HPF_LOCAL subroutine is: it receives each process's local part)", self.slice(word_range), self.slice(it.range))));
                }
            }
        }
        for (range, message) in errors {
            self.error(range, message);
        }
    }

    fn distributed_symbol(&self, id: SymbolId) -> bool {
        let model = &self.analysis.model;
        let units = analysis::model::flatten_units(&self.analysis.file);
        let global = id.unit == self.main || units.get(id.unit).is_some_and(|it| it.0.kind == syntax::UnitKind::Module);
        global && model.symbol(id).is_array() && model.distribution_of(id).is_some()
    }

    /// The edits of the inquiry functions' array arguments in the HPF_LOCAL
    /// procedures inside `range` (that use HPF_LOCAL_LIBRARY).
    pub(crate) fn local_library_edits_in(&self, range: TextRange) -> Vec<(TextRange, String)> {
        analysis::model::flatten_units(&self.analysis.file)
            .into_iter()
            .map(|it| it.0)
            .filter(|it| range.contains_range(it.range) && self.is_hpf_local(it))
            .flat_map(|it| self.local_library_edits(it).unwrap_or_default())
            .collect()
    }

    /// The edits of `unit`'s inquiry calls, or what it asks that is not lowered.
    fn local_library_edits(&self, unit: &syntax::Unit) -> Result<Edits, Edits> {
        if !Self::uses_local_library(unit) {
            return Ok(Vec::new());
        }
        let mut edits: Vec<(TextRange, String)> = Vec::new();
        let mut errors: Vec<(TextRange, String)> = Vec::new();
        for used in unit.uses.iter().filter(|it| it.key() == "hpf_local_library") {
            edits.push((used.range, "hpf_local_library".to_string()));
        }
        // Skip the procedures contained in it (scanned as units of their own).
        let own_end = unit.contains.first().map_or(unit.range.end, |it| it.range.start);
        let text = self.text;
        for (word, word_range, open) in references(text, TextRange::new(unit.range.start, own_end)) {
            if OTHER_LIBRARY.contains(&word.as_str()) {
                errors.push((word_range, format!("{} of HPF_LOCAL_LIBRARY is not supported by the MPI backend (MY_PROCESSOR, GLOBAL_SIZE, GLOBAL_LBOUND, GLOBAL_UBOUND and LOCAL_TO_GLOBAL are)", word.to_ascii_uppercase())));
                continue;
            }
            let Some(&(_, needed)) = INQUIRIES.iter().find(|it| it.0 == word) else { continue };
            let Some(close) = syntax::closing_paren(text, open) else { continue };
            let parts = top_level_parts(&text[open + 1..close]);
            let first = parts.first().map(|(offset, part)| {
                let lead = part.len() - part.trim_start().len();
                (TextRange::new(open + 1 + offset + lead, open + 1 + offset + lead + part.trim().len()), part.trim())
            });
            let dummy = first.and_then(|(range, part)| {
                let position = unit.dummies.iter().position(|it| it.key() == part.to_ascii_lowercase())?;
                Some((range, part, position))
            });
            match dummy {
                Some((range, part, position)) if parts.len() >= needed && position < MAX_MAPPED => {
                    let replacement = if word == "local_to_global" {
                        format!("hpf_local_maps({}), lbound({part})", position + 1)
                    } else {
                        format!("hpf_local_maps({})", position + 1)
                    };
                    edits.push((range, replacement));
                }
                _ => errors.push((word_range, format!(
                    "{} of HPF_LOCAL_LIBRARY is lowered for an array dummy of the HPF_LOCAL procedure itself, passed as its first argument{}",
                    word.to_ascii_uppercase(),
                    if needed == 2 { ", with its second argument (DIM, or the local subscripts)" } else { "" }
                ))),
            }
        }
        if errors.is_empty() {
            edits.sort_by_key(|it| it.0.start);
            Ok(edits)
        } else {
            Err(errors)
        }
    }
}

/// The names followed by `(` in `range` of `text` (outside comments and
/// character literals): lower case, with their range and the offset of `(`.
fn references(text: &str, range: TextRange) -> Vec<(String, TextRange, usize)> {
    let bytes = text.as_bytes();
    let mut res = Vec::new();
    let mut at = range.start;
    let mut quote: Option<u8> = None;
    while at < range.end.min(bytes.len()) {
        let byte = bytes[at];
        if let Some(open) = quote {
            if byte == open || byte == b'\n' {
                quote = None;
            }
            at += 1;
            continue;
        }
        match byte {
            b'\'' | b'"' => {
                quote = Some(byte);
                at += 1;
                continue;
            }
            b'!' => {
                at = text[at..].find('\n').map_or(range.end, |it| at + it);
                continue;
            }
            _ => {}
        }
        let starts_word = byte.is_ascii_alphabetic()
            && (at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_'));
        if !starts_word {
            at += 1;
            continue;
        }
        let end = at + text[at..].bytes().take_while(|it| it.is_ascii_alphanumeric() || *it == b'_').count();
        let after = text[end..].trim_start_matches([' ', '\t']);
        if after.starts_with('(') {
            res.push((
                text[at..end].to_ascii_lowercase(),
                TextRange::new(at, end),
                end + (text[end..].len() - after.len()),
            ));
        }
        at = end;
    }
    res
}

/// HPF_LOCAL_LIBRARY's inquiry functions the MPI backend lowers, compiled
/// after the runtime when the program uses them (`runtime.rs`).
pub(crate) const LOCAL_LIBRARY: &str = r#"
! hpf_local_library: HPF 2.0's inquiry functions for EXTRINSIC(HPF_LOCAL)
! procedures. An array argument is the mapping of the actual its caller
! set for that dummy (hpf_local_maps, `extrinsic.rs` in hpf-ls).
module hpf_local_library
  use hpf_runtime, only: hpf_local_map, hpf_local_maps, hpf_rank, hpf_me, hpf_gx, hpf_own_first
  implicit none
  private
  public :: hpf_local_maps, my_processor, global_size, global_lbound, global_ubound, local_to_global

contains

  ! The number of the calling process, 0 .. NUMBER_OF_PROCESSORS() - 1.
  integer function my_processor()
    my_processor = hpf_rank
  end function my_processor

  integer function global_size(m, dim)
    type(hpf_local_map), intent(in) :: m
    integer, intent(in), optional :: dim
    if (present(dim)) then
      global_size = max(m%ubs(dim) - m%lbs(dim) + 1, 0)
    else
      global_size = product(max(m%ubs(1:m%rank) - m%lbs(1:m%rank) + 1, 0))
    end if
  end function global_size

  integer function global_lbound(m, dim)
    type(hpf_local_map), intent(in) :: m
    integer, intent(in) :: dim
    global_lbound = m%lbs(dim)
  end function global_lbound

  integer function global_ubound(m, dim)
    type(hpf_local_map), intent(in) :: m
    integer, intent(in) :: dim
    global_ubound = m%ubs(dim)
  end function global_ubound

  ! The global subscripts of the element at local subscripts l of a dummy
  ! whose lower bounds are lb.
  function local_to_global(m, lb, l) result(g)
    type(hpf_local_map), intent(in) :: m
    integer, intent(in) :: lb(:), l(:)
    integer :: g(size(l))
    integer :: k
    do k = 1, size(l)
      if (k == m%dim) then
        g(k) = hpf_gx(m%d, hpf_me(m%d), hpf_own_first(m%d) + l(k) - lb(k))
      else if (k == m%dim2) then
        g(k) = hpf_gx(m%d2, hpf_me(m%d2), hpf_own_first(m%d2) + l(k) - lb(k))
      else
        g(k) = m%lbs(k) + l(k) - lb(k)
      end if
    end do
  end function local_to_global
end module hpf_local_library
"#;

#[cfg(test)]
mod tests {
    use crate::tests::lowered;

    const KERNEL: &str = "
extrinsic(hpf_local) subroutine scale(x, c, y)
  use hpf_local_library
  real, intent(inout) :: x(:)
  real, intent(in) :: c, y(:)
  integer :: g(1)
  g = local_to_global(x, [1])
  x = c * x + y(1) + real(g(1) + my_processor() + global_size(y))
end subroutine scale
";

    fn program(body: &str, kernel: &str) -> String {
        format!(
            "program p
  implicit none
  interface
    extrinsic(hpf_local) subroutine scale(x, c, y)
      real, intent(inout) :: x(:)
      real, intent(in) :: c, y(:)
    end subroutine scale
  end interface
  integer, parameter :: n = 20
  real :: a(n), b(n), r(3)
  integer :: t
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE A(BLOCK) ONTO P
!HPF$ DISTRIBUTE B(CYCLIC) ONTO P
{body}end program p
{kernel}"
        )
    }

    /// In a time loop, every process passes its own elements (no shadow),
    /// sets the mappings the inquiry functions read, and nothing is gathered.
    #[test]
    fn a_call_passes_each_process_its_local_parts() {
        let (notes, source) = lowered(&program(
            "  a = 1.0\n  b = 2.0\n  r = 3.0\n  do t = 1, 3\n    call scale(a, 2.0, r)\n    call scale(b, 0.5, r)\n  end do\n  print *, sum(a), sum(b)\n",
            KERNEL,
        ))
        .unwrap();
        assert!(notes.iter().all(|it| !it.contains("runs on one process")), "{notes:?}");
        assert!(
            source.contains(
                "  call hpf_set_local_map(1, hpf_d_a, 1, [1], [20])\n  call hpf_set_replicated_map(3, lbound(r), ubound(r))\n    call scale(a(hpf_own_first(hpf_d_a):hpf_own_last(hpf_d_a)), 2.0, r)\n"
            ),
            "{source}"
        );
        assert!(source.contains("call scale(b(hpf_own_first(hpf_d_b):hpf_own_last(hpf_d_b)), 0.5, r)"), "{source}");
        assert!(source.contains("  g = local_to_global(hpf_local_maps(1), lbound(x), [1])\n"), "{source}");
        assert!(source.contains("my_processor() + global_size(hpf_local_maps(3))"), "{source}");
        assert!(source.contains("  use hpf_local_library\n"), "{source}");
        let time_loop = &source[source.find("  do t = 1, 3").unwrap()..source.find("  end do").unwrap()];
        assert!(!time_loop.contains("hpf_gather"), "{source}");
        let runtime = crate::runtime::runtime_for(&source);
        assert!(runtime.contains("module hpf_local_library"));
        assert!(!crate::runtime::runtime_for("program p\nend program p\n").contains("module hpf_local_library"));
    }

    /// An HPF_LOCAL procedure given replicated data only runs as any
    /// replicated call (no local parts, no mappings).
    #[test]
    fn a_call_without_distributed_actuals_stays_as_written() {
        let (_, source) = lowered(&program("  r = 1.0\n  call scale(r, 2.0, r)\n  print *, r\n", KERNEL)).unwrap();
        assert!(source.contains("  call scale(r, 2.0, r)\n"), "{source}");
        assert!(!source.contains("hpf_set_"), "{source}");
    }

    #[test]
    fn what_is_not_lowered_is_refused_at_its_place() {
        // A section, a dummy that is not assumed-shape, a mapping that is not the actual's.
        let kernel = "
extrinsic(hpf_local) subroutine scale(x, c, y)
  real, intent(inout) :: x(:)
  real, intent(in) :: c, y(20)
!HPF$ DISTRIBUTE X(CYCLIC)
  x = c * x + y(1)
end subroutine scale
";
        let errors = lowered(&program("  call scale(a(2:5), 1.0, b)\n  call scale(a, 1.0, r)\n", kernel)).unwrap_err();
        assert_eq!(
            errors,
            [
                "15: CALL of the EXTRINSIC(HPF_LOCAL) procedure `scale`: an element, a section or an expression of the distributed array a is passed: only whole arrays are passed to an HPF_LOCAL procedure (each process its local part)",
                "19: CALL of the EXTRINSIC(HPF_LOCAL) procedure `scale`: the dummy y of the HPF_LOCAL procedure `scale` must be an assumed-shape array of rank 1 (`y(:)`): it receives the local part of b",
                "19: CALL of the EXTRINSIC(HPF_LOCAL) procedure `scale`: the mapping of the dummy x is not that of its actual a, which an HPF_LOCAL procedure receives as it is mapped: the mapping of the dummy x differs from its actual's (a remap would be needed)",
            ]
        );
        // An interface body whose mapping of the dummy is not the actual's.
        let text = program("  call scale(a, 1.0, r)\n", KERNEL).replace(
            "      real, intent(in) :: c, y(:)\n",
            "      real, intent(in) :: c, y(:)\n!HPF$ DISTRIBUTE X(CYCLIC)\n",
        );
        let errors = lowered(&text).unwrap_err();
        assert_eq!(
            errors,
            ["4: CALL of the EXTRINSIC(HPF_LOCAL) procedure `scale`: the interface gives the dummy x a mapping that is not that of its actual a, which an HPF_LOCAL procedure receives as it is mapped: the mapping of the dummy x differs from its actual's (a remap would be needed)"]
        );
        // The library's other procedures; an inquiry about something that is not a dummy.
        let kernel = KERNEL
            .replace("local_to_global(x, [1])", "global_to_local(x, [1])")
            .replace("global_size(y)", "global_size(r)");
        let errors = lowered(&program("  call scale(a, 1.0, r)\n", &kernel)).unwrap_err();
        assert_eq!(
            errors,
            [
                "23: GLOBAL_TO_LOCAL of HPF_LOCAL_LIBRARY is not supported by the MPI backend (MY_PROCESSOR, GLOBAL_SIZE, GLOBAL_LBOUND, GLOBAL_UBOUND and LOCAL_TO_GLOBAL are)",
                "24: GLOBAL_SIZE of HPF_LOCAL_LIBRARY is lowered for an array dummy of the HPF_LOCAL procedure itself, passed as its first argument",
            ]
        );
    }
}
