//! Broadcasts from one owner fused within a loop body (issue 29).
//!
//! In a loop every process runs, consecutive statements often each
//! broadcast a value from the same owner: the element MAXLOC found in the
//! column of an elimination step, the pivot read from that column, then
//! the column's section for the update (`A(K+1:N, K)` read by the nest).
//! Each is one `MPI_Bcast`, one latency; fused, they are one message.
//!
//! The statements between them may change what the later ones send (the
//! row swap moves the pivot into place, the scaling changes the section),
//! and the other processes may need the earlier values to run them (the
//! swap reads the pivot's row). When those statements exchange nothing
//! else (no other message, no EXIT or CYCLE, no call that may communicate),
//! the run of statements from the first broadcast to the last is done in
//! an order that needs only one message: the owner runs it first, packing
//! what each broadcast sends where it would send it; one `MPI_Bcast` of
//! the packed bytes follows; then the other processes run it, unpacking
//! each value where they would receive it. Each process runs the same
//! statements on the same values as before, so the results do not change:
//! the owner's work in the run touches only its own data and the
//! replicated scalars every process computes alike, and the others' work
//! waits only for what the owner sent.
//!
//! The packed size is computed before the run, from expressions of values
//! the run does not assign (the section's bounds in the loop's index), so
//! every process passes the same count. Values of mixed types (an INTEGER
//! position, REAL(8) values) are packed by bytes with `TRANSFER`.

use std::cell::RefCell;
use std::fmt::Write;

use crate::private::mentions_word;
use analysis::model::SymbolId;

use crate::{Lowering, Plan};

/// The broadcasts of the loop bodies being emitted, innermost body last.
#[derive(Debug, Default)]
pub(crate) struct FusionFrames(RefCell<Vec<Vec<OwnerBcast>>>);

/// One broadcast from an owner, emitted as a marker line while its body is
/// emitted, then as itself or as its part of a fused message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OwnerBcast {
    /// The rank it comes from, as an expression (`hpf_owner(hpf_d_a, k)`).
    root: String,
    /// The same for every array of the same mapping (only broadcasts of
    /// one key fuse).
    key: String,
    /// The variable sent and received (a scalar or an allocated array).
    buffer: String,
    /// The rank of `buffer`.
    rank: usize,
    /// Its element count, as an expression where it is sent.
    count: String,
    /// Its MPI type, when sent alone.
    mpi: String,
    /// Where `--stats` counts it as sent (`None`: not counted).
    at_root: Option<String>,
    /// Its size in bytes as an expression valid before the loop body's
    /// statements that precede it (`None`: not known there; not fused).
    bytes_before: Option<String>,
}

/// What is sent: see [`OwnerBcast`].
pub(crate) struct BcastSpec<'s> {
    pub root: &'s str,
    pub key: &'s str,
    pub buffer: &'s str,
    pub rank: usize,
    pub count: &'s str,
    pub mpi: &'s str,
    pub at_root: Option<&'s str>,
    pub bytes_before: Option<String>,
}

const MARKER: &str = "!hpf-fuse:";

/// Runtime subroutines that exchange nothing.
const LOCAL_CALLS: [&str; 7] = [
    "hpf_stat_begin",
    "hpf_stat_end",
    "hpf_course_bounds",
    "hpf_course_frame",
    "hpf_local_bounds",
    "hpf_local_bounds_affine",
    "hpf_window",
];

impl OwnerBcast {
    /// The broadcast alone.
    fn alone(&self) -> String {
        let mut out = String::new();
        match &self.at_root {
            Some(at_root) => {
                crate::emit_counted_bcast(&mut out, (&self.buffer, &self.count, &self.mpi), (&self.root, at_root))
            }
            None => {
                let _ = writeln!(
                    out,
                    "  call MPI_Bcast({}, {}, {}, {}, MPI_COMM_WORLD)",
                    self.buffer, self.count, self.mpi, self.root
                );
            }
        }
        out
    }

    /// Its part of a fused message: the owner packs it at `hpf_fq`, the
    /// others unpack it from there.
    fn packed(&self) -> String {
        let buffer = &self.buffer;
        let bytes = "hpf_fb(hpf_fq + 1:hpf_fq + hpf_fm)";
        let unpacked = if self.rank >= 2 {
            format!("reshape(transfer({bytes}, {buffer}), shape({buffer}))")
        } else {
            format!("transfer({bytes}, {buffer})")
        };
        let mut out = format!(
            "  hpf_fm = (storage_size({buffer}) / 8) * ({})\n  if (hpf_rank == hpf_fo) then\n    {bytes} = transfer({buffer}, hpf_fb, hpf_fm)\n  else\n    {buffer} = {unpacked}\n  end if\n  hpf_fq = hpf_fq + hpf_fm\n",
            self.count
        );
        if let Some(at_root) = &self.at_root {
            let _ = writeln!(
                out,
                "  if (hpf_stats .and. {at_root}) then\n    hpf_stat_messages = hpf_stat_messages + (hpf_nprocs - 1)\n    hpf_stat_elements = hpf_stat_elements + int(hpf_nprocs - 1, 8) * {}\n  end if",
                self.count
            );
        }
        out
    }
}

/// One planned statement of a loop body, emitted.
struct Emitted {
    text: String,
    /// The indices (in the body's frame) of the broadcasts it makes.
    bcasts: Vec<usize>,
    /// Whether it exchanges nothing but those broadcasts, each made at
    /// most once per run of it (outside any DO loop of its text).
    quiet: bool,
    /// Whether it is an IF construct (its broadcasts may be alternatives).
    branches: bool,
    /// Whether it runs a DO loop after its first broadcast (the update of
    /// an elimination step after its column's broadcast): in a run, the
    /// owner would do its share of that loop before it sends and the others
    /// theirs after they receive, one after the other, which costs more
    /// than the message saved. Such a statement ends a run before it. So
    /// does one with a loop over each process's share anywhere (the row
    /// swap of an elimination step between its MAXLOC's and its pivot's
    /// broadcasts): in a run the others would start theirs only after the
    /// owner has done its own.
    bulk: bool,
}

impl Emitted {
    /// How many of its broadcasts surely run one after the other (those
    /// of an IF construct may be in different branches: one counts).
    fn sequential_bcasts(&self) -> usize {
        if self.branches {
            self.bcasts.len().min(1)
        } else {
            self.bcasts.len()
        }
    }
}

impl Lowering<'_> {
    /// `MPI_Bcast` of `spec`: sent as is, or, in a loop body, as a marker
    /// that the body's emission turns into it or into a fused message.
    pub(crate) fn emit_owner_bcast(&self, out: &mut String, spec: BcastSpec) {
        let bcast = OwnerBcast {
            root: spec.root.to_string(),
            key: spec.key.to_string(),
            buffer: spec.buffer.to_string(),
            rank: spec.rank,
            count: spec.count.to_string(),
            mpi: spec.mpi.to_string(),
            at_root: spec.at_root.map(str::to_string),
            bytes_before: spec.bytes_before,
        };
        let mut frames = self.fusion.0.borrow_mut();
        match frames.last_mut() {
            Some(frame) => {
                let _ = writeln!(out, "  {MARKER}{}", frame.len());
                frame.push(bcast);
            }
            None => out.push_str(&bcast.alone()),
        }
    }

    /// `MPI_Bcast` of the scalar `temp` (of element type `suffix`) from `root`.
    /// `(root, key)`: see [`OwnerBcast`].
    pub(crate) fn emit_element_bcast(
        &self,
        out: &mut String,
        temp: &str,
        (root, key): (&str, &str),
        suffix: crate::ElementType,
    ) {
        let mpi = crate::mpi_type(suffix);
        let bytes_before = Some(format!("storage_size({temp}) / 8"));
        let spec = BcastSpec { root, key, buffer: temp, rank: 0, count: "1", mpi: &mpi, at_root: None, bytes_before };
        self.emit_owner_bcast(out, spec);
    }

    /// The owner of `array`'s index `index` along its distributed
    /// dimension, named after the first array of the same alignment, so
    /// that the owners of two such arrays compare equal (when the program
    /// remaps nothing).
    pub(crate) fn owner_key(&self, array: SymbolId, index: &str) -> String {
        let distributed = &self.distributed[&array];
        let remaps = self.analysis.model.units.iter().any(|unit| !unit.remaps.is_empty());
        let name = match self.distributed.values().find(|it| it.same_alignment(distributed)) {
            Some(first) if !remaps => &first.name,
            _ => &distributed.name,
        };
        format!("hpf_owner(hpf_d_{name}, {})", index.to_ascii_lowercase())
    }

    /// The statements of a loop body every process runs, each run of them
    /// whose broadcasts come from one owner fused into one message.
    pub(crate) fn emit_loop_body(&self, out: &mut String, body: &[Plan]) {
        self.fusion.0.borrow_mut().push(Vec::new());
        let texts: Vec<String> = body
            .iter()
            .map(|plan| {
                let mut text = String::new();
                self.emit_plan(&mut text, plan);
                text
            })
            .collect();
        let bcasts = self.fusion.0.borrow_mut().pop().unwrap_or_default();
        let procedures = self.procedure_names();
        let emitted: Vec<Emitted> = texts
            .into_iter()
            .zip(body)
            .map(|(text, plan)| {
                let ids = markers(&text);
                let quiet = is_quiet(&text, &procedures);
                let bulk = is_bulk(&text);
                Emitted { text, bcasts: ids, quiet, branches: matches!(plan, Plan::If { .. }), bulk }
            })
            .collect();
        out.push_str(&fuse_runs(&emitted, &bcasts));
    }

    /// The names of the file's procedures (any of which may communicate).
    fn procedure_names(&self) -> Vec<String> {
        self.analysis
            .model
            .units
            .iter()
            .filter(|unit| !matches!(unit.kind, syntax::UnitKind::Program))
            .filter_map(|unit| unit.name.as_ref().map(|it| it.key()))
            .collect()
    }
}

/// The body's statements emitted in order, the runs that qualify fused.
fn fuse_runs(emitted: &[Emitted], bcasts: &[OwnerBcast]) -> String {
    let mut out = String::new();
    let mut at = 0;
    while at < emitted.len() {
        if let Some(last) = fusible_run(emitted, bcasts, at) {
            out.push_str(&fused(&emitted[at..=last], bcasts));
            at = last + 1;
            continue;
        }
        out.push_str(&resolved(&emitted[at].text, |id| bcasts[id].alone()));
        at += 1;
    }
    out
}

/// The last statement of the run that starts at `first` and fuses, if any:
/// quiet statements, the first and last broadcasting, every broadcast from
/// one owner, at least two of them, their sizes and owner known before the
/// run in values it does not assign.
fn fusible_run(emitted: &[Emitted], bcasts: &[OwnerBcast], first: usize) -> Option<usize> {
    let start = &emitted[first];
    let key = &bcasts[*start.bcasts.first()?].key;
    let same_root = |it: &Emitted| it.quiet && !it.bulk && it.bcasts.iter().all(|id| bcasts[*id].key == *key);
    if !same_root(start) {
        return None;
    }
    let mut last = first;
    let mut count = start.sequential_bcasts();
    for (at, next) in emitted.iter().enumerate().skip(first + 1) {
        if !same_root(next) {
            break;
        }
        if !next.bcasts.is_empty() {
            last = at;
            count += next.sequential_bcasts();
        }
    }
    if count < 2 {
        return None;
    }
    let run = &emitted[first..=last];
    let mut assigned: Vec<String> = run.iter().flat_map(|it| assigned_names(&it.text)).collect();
    let ids: Vec<usize> = run.iter().flat_map(|it| it.bcasts.iter().copied()).collect();
    assigned.extend(ids.iter().map(|id| bcasts[*id].buffer.to_ascii_lowercase()));
    let known_before = |text: &str| identifiers(&without_storage_sizes(text)).iter().all(|it| !assigned.contains(it));
    let sizes_known = ids.iter().all(|id| bcasts[*id].bytes_before.as_deref().is_some_and(known_before));
    (sizes_known && known_before(&bcasts[start.bcasts[0]].root)).then_some(last)
}

/// A run's statements: the owner runs them first, packing what they
/// broadcast; one broadcast of the packed bytes; then the others.
fn fused(run: &[Emitted], bcasts: &[OwnerBcast]) -> String {
    let ids: Vec<usize> = run.iter().flat_map(|it| it.bcasts.iter().copied()).collect();
    let root = &bcasts[ids[0]].root;
    let sizes: Vec<String> = ids.iter().filter_map(|id| bcasts[*id].bytes_before.clone()).collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "  ! hpf-ls: {} broadcasts from one owner in one message: the owner runs these statements first",
        ids.len()
    );
    let _ = writeln!(out, "  block");
    let _ = writeln!(out, "  character(len=1), allocatable :: hpf_fb(:)");
    let _ = writeln!(out, "  integer :: hpf_fo, hpf_fq, hpf_fm, hpf_fz");
    let _ = writeln!(out, "  hpf_fo = {root}");
    let _ = writeln!(out, "  allocate (hpf_fb({}))", sizes.join(" + "));
    let _ = writeln!(out, "  do hpf_fz = 0, 2");
    let _ = writeln!(out, "  if (hpf_fz == 1) then");
    let _ = writeln!(out, "    call MPI_Bcast(hpf_fb, size(hpf_fb), MPI_BYTE, hpf_fo, MPI_COMM_WORLD)");
    let _ = writeln!(out, "  else if ((hpf_fz == 0) .eqv. (hpf_rank == hpf_fo)) then");
    let _ = writeln!(out, "  hpf_fq = 0");
    for statement in run {
        out.push_str(&resolved(&statement.text, |id| bcasts[id].packed()));
    }
    let _ = writeln!(out, "  end if");
    let _ = writeln!(out, "  end do");
    let _ = writeln!(out, "  end block");
    out
}

/// `text` with each marker replaced by `with` of its broadcast.
fn resolved(text: &str, with: impl Fn(usize) -> String) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        match marker(line) {
            Some(id) => out.push_str(&with(id)),
            None => out.push_str(line),
        }
    }
    out
}

fn marker(line: &str) -> Option<usize> {
    line.trim().strip_prefix(MARKER)?.parse().ok()
}

/// The broadcasts `text` makes, in order.
fn markers(text: &str) -> Vec<usize> {
    text.lines().filter_map(marker).collect()
}

/// Whether the emitted `text` of a statement exchanges nothing but its
/// marked broadcasts, each outside any DO loop of the text, and leaves
/// only at its end (no EXIT, CYCLE, GO TO, RETURN, STOP): a statement that
/// may run before or after a broadcast its process takes part in.
/// See [`Emitted::bulk`].
fn is_bulk(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    let mut after_marker = false;
    for line in lower.lines() {
        let line = line.trim();
        if marker(line).is_some() {
            after_marker = true;
            continue;
        }
        let opens = line.starts_with("do ") || line == "do" || line.contains(": do ") || line.ends_with(": do");
        // A loop over this process's share (owner computes), wherever it is:
        // every process runs one, so in a run they would run one after the other.
        let shared = mentions_word(line, "hpf_lo") || line.contains("hpf_courses(");
        if opens && (after_marker || shared) {
            return true;
        }
    }
    false
}

fn is_quiet(text: &str, procedures: &[String]) -> bool {
    let lower = text.to_ascii_lowercase();
    if lower.contains("mpi_") || lower.contains("go to") {
        return false;
    }
    if ["exit", "cycle", "goto", "return", "stop", "entry"].iter().any(|word| mentions_word(&lower, word)) {
        return false;
    }
    if procedures.iter().any(|name| mentions_word(&lower, name)) {
        return false;
    }
    let mut depth = 0usize;
    for line in lower.lines() {
        let line = line.trim();
        if marker(line).is_some() {
            if depth != 0 {
                return false;
            }
            continue;
        }
        if line.starts_with(|c: char| c.is_ascii_digit()) {
            return false; // a label: a branch from outside must not enter the passes' loop.
        }
        if let Some(rest) = line.strip_prefix("call ") {
            let name: String = rest.chars().take_while(|it| it.is_ascii_alphanumeric() || *it == '_').collect();
            if !LOCAL_CALLS.contains(&name.as_str()) {
                return false;
            }
        }
        if mentions_word(line, "call") && !line.starts_with("call ") && !line.starts_with('!') {
            // A CALL after an IF: only the runtime's local ones, on their own lines.
            return false;
        }
        let opens = line.starts_with("do ") || line == "do" || line.contains(": do ") || line.ends_with(": do");
        if opens {
            if line.strip_prefix("do ").is_some_and(|it| it.trim_start().starts_with(|c: char| c.is_ascii_digit())) {
                return false; // a labelled DO: its end is a label, not counted here.
            }
            depth += 1;
        } else if line.starts_with("end do") || line.starts_with("enddo") {
            depth = depth.saturating_sub(1);
        }
    }
    true
}

/// The identifiers of `text` (lower case, without the keywords of
/// `.and.` style operators).
fn identifiers(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut after_dot = false;
    for c in text.to_ascii_lowercase().chars().chain(std::iter::once(' ')) {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        if !word.is_empty() && word.starts_with(|it: char| it.is_ascii_alphabetic()) && !(after_dot && c == '.') {
            out.push(std::mem::take(&mut word));
        }
        word.clear();
        after_dot = c == '.';
    }
    out
}

/// `text` without the arguments of its `storage_size(...)`, which depend
/// on a variable's type, not its value.
fn without_storage_sizes(text: &str) -> String {
    let mut out = text.to_ascii_lowercase();
    let mut from = 0;
    while let Some(at) = out[from..].find("storage_size(").map(|it| it + from) {
        let open = at + "storage_size".len();
        let Some(close) = crate::closing_paren(&out, open) else { break };
        out.replace_range(open + 1..close, "");
        from = open + 1;
    }
    out
}

/// The names `text` may assign: left sides of assignments (after an IF),
/// DO variables, and every name passed to a CALL.
fn assigned_names(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.to_ascii_lowercase().lines() {
        let mut line = line.trim();
        if line.starts_with('!') {
            continue;
        }
        if let Some(rest) = line.strip_prefix("call ") {
            let name: String = rest.chars().take_while(|it| it.is_ascii_alphanumeric() || *it == '_').collect();
            let args = rest[name.len()..].trim();
            if !LOCAL_CALLS.contains(&name.as_str()) || !args.starts_with('(') {
                out.extend(identifiers(rest));
            } else if let Some(close) = crate::closing_paren(args, 0) {
                // The runtime's bounds routines set their last two arguments
                // (hpf_course_frame its last three).
                let set = if name == "hpf_course_frame" { 3 } else { 2 };
                let parts = crate::top_level_parts(&args[1..close]);
                out.extend(parts.iter().rev().take(set).flat_map(|(_, it)| identifiers(it)));
            }
            continue;
        }
        // `if (cond) stmt`: the statement after the condition.
        if let Some(rest) = line.strip_prefix("if") {
            let rest = rest.trim_start();
            if rest.starts_with('(') {
                if let Some(close) = crate::closing_paren(rest, 0) {
                    line = rest[close + 1..].trim();
                }
            }
        }
        let line = line.strip_prefix("do ").unwrap_or(line);
        let name: String = line.chars().take_while(|it| it.is_ascii_alphanumeric() || *it == '_').collect();
        if name.is_empty() {
            continue;
        }
        let mut rest = line[name.len()..].trim_start();
        if rest.starts_with('(') {
            match crate::closing_paren(rest, 0) {
                Some(close) => rest = rest[close + 1..].trim_start(),
                None => continue,
            }
        }
        if rest.starts_with('=') && !rest.starts_with("==") {
            out.push(name);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bcast(root: &str, buffer: &str, bytes: Option<&str>) -> OwnerBcast {
        OwnerBcast {
            root: root.to_string(),
            key: root.to_string(),
            buffer: buffer.to_string(),
            rank: 0,
            count: "1".to_string(),
            mpi: "MPI_INTEGER".to_string(),
            at_root: None,
            bytes_before: bytes.map(str::to_string),
        }
    }

    fn statement(text: &str) -> Emitted {
        Emitted {
            text: text.to_string(),
            bcasts: markers(text),
            quiet: is_quiet(text, &[]),
            branches: false,
            bulk: is_bulk(text),
        }
    }

    /// The generated source of a program with `body` as the loop body
    /// of `do k = 1, n - 1`, columns of A (and IDX, aligned) CYCLIC.
    fn lowered(body: &str) -> String {
        let text = format!(
            "program f
  implicit none
  integer, parameter :: n = 9
  double precision :: a(n, n), p, s
  integer :: idx(n, n), i, j, k, m
!HPF$ DISTRIBUTE a(*, CYCLIC)
!HPF$ ALIGN idx(i, j) WITH a(i, j)
  a = 1.0d0
  idx = 1
  s = 0.0d0
  do k = 1, n - 1
{body}  end do
  print *, s
end program f
"
        );
        let form = syntax::SourceForm::Free;
        let config = analysis::model::ModelConfig { number_of_processors: None };
        let analysis = analysis::analyze(&text, form, config);
        match crate::lower(&analysis, &text) {
            Ok(it) => it.source,
            Err(errors) => panic!("refused: {errors:?}"),
        }
    }

    const UPDATE: &str = "!HPF$ INDEPENDENT, NEW(i)
    do j = k + 1, n
      do i = k + 1, n
        a(i, j) = a(i, j) - a(i, k) * a(k, j)
      end do
    end do
";

    #[test]
    fn an_integer_element_and_a_real_element_are_one_message_and_the_update_sends_its_column_alone() {
        let body = format!(
            "    m = idx(k, k)
    p = a(m, k)
    do i = k + 1, n
      a(i, k) = a(i, k) / p
    end do
{UPDATE}"
        );
        let source = lowered(&body);
        // The update's loops after its column's broadcast end the run before it:
        // fused, the owner would update its columns before the others could start.
        assert_eq!(source.matches("call MPI_Bcast(").count(), 2, "{source}");
        assert!(source.contains("  ! hpf-ls: 2 broadcasts from one owner in one message"), "{source}");
        assert!(
            source.contains(
                "  hpf_fo = hpf_owner(hpf_d_idx, k)
  allocate (hpf_fb(storage_size(hpf_r1) / 8 + storage_size(hpf_r2) / 8))
"
            ),
            "{source}"
        );
        // The owner packs where it would send; the others unpack there.
        assert!(
            source.contains(
                "  if (hpf_rank == hpf_fo) then
    hpf_fb(hpf_fq + 1:hpf_fq + hpf_fm) = transfer(hpf_r2, hpf_fb, hpf_fm)
  else
    hpf_r2 = transfer(hpf_fb(hpf_fq + 1:hpf_fq + hpf_fm), hpf_r2)
"
            ),
            "{source}"
        );
        assert!(!source.contains("transfer(hpf_bc_1"), "{source}");
    }

    #[test]
    fn a_message_between_or_another_owner_keeps_broadcasts_apart() {
        // A sum between them, which other processes take part in: the
        // first broadcast is sent alone, the last two fuse.
        let body = "    m = idx(k, k)\n    s = s + sum(a(:, k + 1))\n    p = a(m, k)\n    s = s + a(1, k)\n";
        let source = lowered(body);
        assert!(source.contains("call MPI_Bcast(hpf_r1, 1, MPI_INTEGER, hpf_owner(hpf_d_idx, k), "), "{source}");
        assert!(source.contains("  ! hpf-ls: 2 broadcasts from one owner in one message"), "{source}");
        // The owner of column k + 1, then of column k: the last two fuse.
        let body = "    m = idx(k, k + 1)\n    p = a(m, k)\n    s = s + a(1, k)\n";
        let source = lowered(body);
        assert!(source.contains("call MPI_Bcast(hpf_r1, 1, MPI_INTEGER, hpf_owner(hpf_d_idx, k + 1)"), "{source}");
        assert!(source.contains("  ! hpf-ls: 2 broadcasts from one owner in one message"), "{source}");
        // An EXIT between them, which would leave the passes' loop: the
        // first is sent alone, the EXIT stays outside the fused run.
        let body = "    m = idx(k, k)\n    if (m > n) exit\n    p = a(m, k)\n    s = s + a(1, k)\n";
        let source = lowered(body);
        assert!(source.contains("call MPI_Bcast(hpf_r1, 1, MPI_INTEGER, hpf_owner(hpf_d_idx, k), "), "{source}");
        assert!(
            source.contains("    if (m > n) exit\n  ! hpf-ls: 2 broadcasts from one owner in one message"),
            "{source}"
        );
    }

    #[test]
    fn quiet_statements() {
        assert!(is_quiet("  x = 1\n  !hpf-fuse:0\n  call hpf_stat_begin()\n", &[]));
        assert!(!is_quiet("  call MPI_Allreduce(a, b)\n", &[]));
        assert!(!is_quiet("  call solve(a)\n", &[]));
        assert!(!is_quiet("  if (x > 0) exit\n", &[]));
        assert!(!is_quiet("  do i = 1, n\n  !hpf-fuse:0\n  end do\n", &[]));
        assert!(!is_quiet("  y = f(x)\n", &["f".to_string()]));
        assert!(is_quiet("  hpf_exit_at = 1\n", &[]));
        assert!(!is_quiet("10 continue\n", &[]));
    }

    #[test]
    fn assigned_and_identifiers() {
        assert_eq!(
            assigned_names("  if (hpf_owns(d, k)) hpf_r1 = 2\n  x(i) = 1\n  do j = 1, n\n  if (a == b) then\n  call hpf_course_bounds(d, lo, hi)\n"),
            ["hpf_r1", "x", "j", "hi", "lo"]
        );
        assert_eq!(identifiers("max(0, min(1200, n) - max(1, k + 1) + 1) .and. 2d0"), ["max", "min", "n", "max", "k"]);
    }

    #[test]
    fn run_of_one_owner_is_one_message() {
        let bcasts = vec![
            bcast("hpf_owner(hpf_d_a, k)", "hpf_r1", Some("storage_size(hpf_r1) / 8")),
            bcast("hpf_owner(hpf_d_a, k)", "hpf_r2", Some("storage_size(hpf_r2) / 8")),
        ];
        let emitted = [
            statement("  if (hpf_owns(hpf_d_a, k)) hpf_r1 = 1\n  !hpf-fuse:0\n"),
            statement("  ipiv = hpf_r1 + k\n"),
            statement("  if (hpf_owns(hpf_d_a, k)) hpf_r2 = 2\n  !hpf-fuse:1\n"),
            statement("  print *, ipiv\n"),
        ];
        let out = fuse_runs(&emitted, &bcasts);
        assert_eq!(out.matches("MPI_Bcast").count(), 1, "{out}");
        assert!(out.contains("  hpf_fo = hpf_owner(hpf_d_a, k)\n  allocate (hpf_fb(storage_size(hpf_r1) / 8 + storage_size(hpf_r2) / 8))\n"), "{out}");
        // The statement after the last broadcast stays outside.
        assert!(out.ends_with("  end block\n  print *, ipiv\n"), "{out}");
    }

    #[test]
    fn other_owner_or_message_between_is_not_fused() {
        let bcasts = vec![
            bcast("hpf_owner(hpf_d_a, k)", "hpf_r1", Some("4")),
            bcast("hpf_owner(hpf_d_a, k + 1)", "hpf_r2", Some("4")),
        ];
        let out = fuse_runs(&[statement("  !hpf-fuse:0\n"), statement("  !hpf-fuse:1\n")], &bcasts);
        assert_eq!(out.matches("MPI_Bcast").count(), 2, "{out}");
        let bcasts = vec![bcast("r", "hpf_r1", Some("4")), bcast("r", "hpf_r2", Some("4"))];
        let emitted = [
            statement("  !hpf-fuse:0\n"),
            statement("  call MPI_Allreduce(MPI_IN_PLACE, s, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)\n"),
            statement("  !hpf-fuse:1\n"),
        ];
        assert_eq!(fuse_runs(&emitted, &bcasts).matches("MPI_Bcast").count(), 2);
        // A size that depends on a value the run assigns is not known before it.
        let bcasts = vec![bcast("r", "hpf_r1", Some("4")), bcast("r", "hpf_r2", Some("m * 8"))];
        let emitted = [statement("  !hpf-fuse:0\n  m = hpf_r1\n"), statement("  !hpf-fuse:1\n")];
        assert_eq!(fuse_runs(&emitted, &bcasts).matches("MPI_Bcast").count(), 2);
    }
}
