//! Reads of 1-D distributed arrays at elements that are not neighbours
//! (`B(2*I)`, `B(N+1-I)`, `B(IDX(I))`, or an array cut in other blocks),
//! brought in by an inspector/executor fetch before an owner-computes loop.
//!
//! Before the loop each process lists, in iteration order, the global index
//! each such reference reads in each iteration it owns (the inspector
//! evaluates the subscript, which may read the home's own cells and
//! replicated data); `hpf_remote_read_*` (runtime) exchanges the counts with
//! one `MPI_Alltoall`, the indices with one `MPI_Alltoallv`, and the values
//! with another; the loop then reads the value of its iteration from a
//! local buffer. The fetched values are those before the loop, so a read
//! qualifies only when the loop writes neither the array read nor anything
//! its subscript reads, and the loop is a single DO of assignments (every
//! reference runs once per iteration, the subscript only in the loop index).
//! On a CYCLIC home the loop runs course by course and so does its
//! inspector (`emit_remote_courses`); there a reference may also read the
//! array the loop writes, when every element it reads is written by a later
//! iteration only (`A(I+1)` while writing `A(I)` in an ascending loop).
//! Anything else keeps the caller's reason for the rank-0 path.

use std::fmt::Write;

use analysis::loops::{Access, AccessAttr, SubscriptForm};
use analysis::model::SymbolId;
use syntax::{Stmt, TextRange};

use crate::{closing_paren, declared_type, Distributed, Lowering};

/// One reference fetched by the inspector/executor.
#[derive(Clone, Debug)]
pub(crate) struct RemoteRead {
    array: SymbolId,
    /// The reference as written (`B(2*I)`), replaced by a buffer element.
    range: TextRange,
    /// Its subscript (`2*I`), evaluated by the inspector.
    subscript: TextRange,
}

impl RemoteRead {
    /// The array read.
    pub(crate) fn array(&self) -> SymbolId {
        self.array
    }

    /// The reference as written.
    pub(crate) fn range(&self) -> TextRange {
        self.range
    }

    /// Its subscript.
    pub(crate) fn subscript(&self) -> TextRange {
        self.subscript
    }

    /// Whether `other` lies inside this reference's subscript.
    pub(crate) fn nests(&self, other: &RemoteRead) -> bool {
        self.subscript.contains_range(other.range)
    }
}

impl Lowering<'_> {
    /// `access` as a reference the inspector/executor fetches, or `None`
    /// when it is not one (the caller then plans it as before). `loops` are
    /// the nest's DO loops and `updated` the arrays the nest writes. With
    /// `read_ahead` the array read may be one the nest writes: the caller
    /// has checked that every element the reference reads is written, if at
    /// all, by a later iteration only (the value before the loop is the one
    /// the sequential loop reads). A CYCLIC home's loop runs course by
    /// course; its inspector reads the distributed arrays of a subscript
    /// (`FIELD(CELL(P))`) at their local positions, which the caller
    /// checks are on the home's cells.
    pub(crate) fn remote_read(
        &self,
        access: &Access,
        home: &Distributed,
        loops: &[&Stmt],
        updated: &[SymbolId],
        read_ahead: bool,
    ) -> Option<RemoteRead> {
        let array = self.distributed.get(&access.array)?;
        if access.attr != AccessAttr::Reference
            || loops.len() != 1
            || home.second.is_some()
            || array.lbs.len() != 1
            || array.second.is_some()
            || access.through.is_some()
        {
            return None;
        }
        if updated.contains(&access.array) && !read_ahead {
            return None;
        }
        let text = self.slice(access.range);
        let open = text.find('(')?;
        let close = closing_paren(text, open)?;
        // One element per iteration (a rank-1 array: one subscript), not a section.
        if close + 1 != text.len() || access.subscripts.iter().any(|it| matches!(it, SubscriptForm::Section)) {
            return None;
        }
        let subscript = TextRange::new(access.range.start + open + 1, access.range.start + close);
        // The subscript must read nothing the loop writes (on a CYCLIC home,
        // what it reads is on the home's cells, as the nest's other reads
        // must be: the inspector reads it at its local positions).
        let occurrences = self.distributed_occurrences(subscript);
        if occurrences.iter().any(|(_, it)| updated.contains(it)) {
            return None;
        }
        Some(RemoteRead { array: access.array, range: access.range, subscript })
    }

    /// Before the local iterations `hpf_lo, hpf_hi, step` of the loop over
    /// `var`: opens a BLOCK holding one index and one value buffer per array
    /// read (one segment of `hpf_n` elements per reference to it), fills
    /// them with one `hpf_remote_read_*` per array, and returns the edits
    /// that make the loop read the buffers. The caller closes the BLOCK
    /// after the loop.
    pub(crate) fn emit_remote_reads(
        &self,
        out: &mut String,
        var: &str,
        step: i64,
        reads: &[RemoteRead],
    ) -> Vec<(TextRange, String)> {
        let read_arrays: Vec<SymbolId> = reads.iter().map(|it| it.array).collect();
        let segments = self.declare_buffers(out, &read_arrays, "");
        let _ = writeln!(out, "  hpf_n = 0");
        let _ = writeln!(out, "  if ((hpf_hi - hpf_lo) * ({step}) >= 0) hpf_n = (hpf_hi - hpf_lo) / ({step}) + 1");
        self.allocate_buffers(out, &read_arrays);
        // Where each reference's value of iteration `var` sits in its array's buffers.
        let positions: Vec<(usize, String)> =
            segments.into_iter().map(|(k, base)| (k, format!("{base}({var} - hpf_lo) / ({step}) + 1"))).collect();
        // The inspector: the indices each reference reads, in iteration order.
        let _ = writeln!(out, "  do {var} = hpf_lo, hpf_hi, {step}");
        for (read, (k, position)) in reads.iter().zip(&positions) {
            let _ = writeln!(out, "    hpf_gi_{k}({position}) = {}", self.one_line(read.subscript));
        }
        let _ = writeln!(out, "  end do");
        self.exchange_buffers(out, &read_arrays);
        reads
            .iter()
            .zip(positions)
            .map(|(read, (k, position))| (read.range, format!("hpf_gv_{k}({position})")))
            .collect()
    }
}

impl Lowering<'_> {
    /// As `emit_remote_reads`, for a loop over a CYCLIC home run course by
    /// course: `courses` opens the loop over the courses that sets each
    /// course's local iterations `hpf_lo, hpf_hi, step`. The inspector lists
    /// the indices course by course, in iteration order; the returned edits
    /// read the value of iteration `var` of the course after the `hpf_m`
    /// iterations of the earlier ones (`hpf_k` in this one), which the
    /// caller keeps up to date (`hpf_m = 0` is left set here). The caller
    /// closes the BLOCK after the loop. `edits` rewrite the distributed
    /// subscripts inside the references' subscripts to local positions.
    pub(crate) fn emit_remote_courses(
        &self,
        out: &mut String,
        (var, step): (&str, i64),
        courses: &str,
        reads: &[RemoteRead],
        edits: &[(TextRange, String)],
    ) -> Vec<(TextRange, String)> {
        let read_arrays: Vec<SymbolId> = reads.iter().map(|it| it.array).collect();
        let segments = self.declare_buffers(out, &read_arrays, ", hpf_m, hpf_k");
        let count = format!(
            "    hpf_k = 0\n    if ((hpf_hi - hpf_lo) * ({step}) >= 0) hpf_k = (hpf_hi - hpf_lo) / ({step}) + 1"
        );
        let _ = writeln!(out, "  hpf_n = 0\n{courses}\n{count}\n    hpf_n = hpf_n + hpf_k\n  end do");
        self.allocate_buffers(out, &read_arrays);
        let positions: Vec<(usize, String)> = segments
            .into_iter()
            .map(|(k, base)| (k, format!("{base}hpf_m + ({var} - hpf_lo) / ({step}) + 1")))
            .collect();
        // The inspector, course by course.
        let _ = writeln!(out, "  hpf_m = 0\n{courses}\n{count}");
        let _ = writeln!(out, "    do {var} = hpf_lo, hpf_hi, {step}");
        for (read, (k, position)) in reads.iter().zip(&positions) {
            // Not the edit of the fetched array's own subscript: the inspector
            // lists global indices.
            let text = self.slice(read.subscript);
            let own = TextRange::new(
                read.subscript.start + (text.len() - text.trim_start().len()),
                read.subscript.end - (text.len() - text.trim_end().len()),
            );
            let inner: Vec<(TextRange, String)> = edits.iter().filter(|it| it.0 != own).cloned().collect();
            let subscript = self.edited(read.subscript, &inner).replace(['&', '\n'], " ");
            let _ = writeln!(out, "      hpf_gi_{k}({position}) = {subscript}");
        }
        let _ = writeln!(out, "    end do\n    hpf_m = hpf_m + hpf_k\n  end do");
        self.exchange_buffers(out, &read_arrays);
        let _ = writeln!(out, "  hpf_m = 0");
        reads
            .iter()
            .zip(positions)
            .map(|(read, (k, position))| (read.range, format!("hpf_gv_{k}({position})")))
            .collect()
    }
}

/// A reference of an array assignment or a FORALL to a 1-D array distributed
/// differently from the left side, fetched by the inspector/executor before
/// the statement (`assign.rs`).
#[derive(Clone, Debug)]
pub(crate) struct FetchedRead {
    pub(crate) array: SymbolId,
    /// The reference as written (`B(N:1:-1)`, `B(2*I)`), replaced by the buffer.
    pub(crate) range: TextRange,
    /// The global index it reads at the left side's element (or FORALL
    /// index) `var`, as Fortran text.
    pub(crate) index: String,
    /// Whether the reference is an array (replaced by the buffer's slice of
    /// all the local elements) rather than one element per iteration.
    pub(crate) slice: bool,
}

impl Lowering<'_> {
    /// Opens a BLOCK declaring `hpf_n` (the local elements), the integers
    /// in `extra`, and one index and one value buffer per array read;
    /// returns each reference's buffer number and the start of its segment
    /// (one of `hpf_n` elements per reference to an array).
    fn declare_buffers(&self, out: &mut String, read_arrays: &[SymbolId], extra: &str) -> Vec<(usize, String)> {
        let model = &self.analysis.model;
        let arrays = distinct(read_arrays);
        let _ = writeln!(out, "  block");
        let _ = writeln!(out, "  integer :: hpf_n{extra}");
        for (idx, array) in arrays.iter().enumerate() {
            let k = idx + 1;
            let _ = writeln!(out, "  integer, allocatable :: hpf_gi_{k}(:)");
            let _ = writeln!(out, "  {}, allocatable :: hpf_gv_{k}(:)", declared_type(model.symbol(*array)));
        }
        read_arrays
            .iter()
            .enumerate()
            .map(|(idx, array)| {
                let k = arrays.iter().position(|it| it == array).expect("listed above") + 1;
                let segment = read_arrays[..idx].iter().filter(|it| *it == array).count();
                let base = if segment == 0 { String::new() } else { format!("{segment} * hpf_n + ") };
                (k, base)
            })
            .collect()
    }

    /// Allocates the buffers once `hpf_n` is known.
    fn allocate_buffers(&self, out: &mut String, read_arrays: &[SymbolId]) {
        for (idx, array) in distinct(read_arrays).iter().enumerate() {
            let k = idx + 1;
            let n_refs = read_arrays.iter().filter(|it| *it == array).count();
            let size = if n_refs == 1 { "hpf_n".to_string() } else { format!("{n_refs} * hpf_n") };
            let _ = writeln!(out, "  allocate (hpf_gi_{k}({size}), hpf_gv_{k}({size}))");
        }
    }

    /// The exchanges: one `hpf_remote_read_*` per array.
    fn exchange_buffers(&self, out: &mut String, read_arrays: &[SymbolId]) {
        for (idx, array) in distinct(read_arrays).iter().enumerate() {
            let k = idx + 1;
            let distributed = &self.distributed[array];
            let name = &distributed.name;
            let _ = writeln!(
                out,
                "  call hpf_remote_read_{}({name}, hpf_d_{name}, hpf_gi_{k}, hpf_gv_{k})",
                distributed.suffix
            );
        }
    }

    /// Before an array assignment or a FORALL whose local elements (or
    /// iterations) are `var = hpf_lo, hpf_hi, step`: opens a BLOCK holding
    /// one index and one value buffer per array read (one segment of
    /// `hpf_n` elements per reference to it), lists the indices with one
    /// FORALL per reference (its index leaks nowhere), fills the values with
    /// one `hpf_remote_read_*` per array, and returns the edits that make the
    /// statement read the buffers. The caller closes the BLOCK after it.
    /// Every process takes part in the exchanges, also one that owns nothing.
    pub(crate) fn emit_fetched_reads(
        &self,
        out: &mut String,
        var: &str,
        step: i64,
        all_reads: &[FetchedRead],
    ) -> Vec<(TextRange, String)> {
        let (reads, which) = distinct_reads(all_reads);
        let read_arrays: Vec<SymbolId> = reads.iter().map(|it| it.array).collect();
        let segments = self.declare_buffers(out, &read_arrays, "");
        let _ = writeln!(out, "  hpf_n = 0");
        let _ = writeln!(out, "  if ((hpf_hi - hpf_lo) * ({step}) >= 0) hpf_n = (hpf_hi - hpf_lo) / ({step}) + 1");
        self.allocate_buffers(out, &read_arrays);
        // The inspector: the indices each reference reads, in the order of the local elements.
        for (read, (k, base)) in reads.iter().zip(&segments) {
            let _ = writeln!(
                out,
                "  forall ({var} = hpf_lo:hpf_hi:{step}) hpf_gi_{k}({base}({var} - hpf_lo) / ({step}) + 1) = {}",
                read.index
            );
        }
        self.exchange_buffers(out, &read_arrays);
        all_reads
            .iter()
            .zip(which)
            .map(|(read, at)| {
                let (k, base) = &segments[at];
                let text = if read.slice {
                    if base.is_empty() {
                        format!("hpf_gv_{k}(1:hpf_n)")
                    } else {
                        format!("hpf_gv_{k}({base}1:{base}hpf_n)")
                    }
                } else {
                    format!("hpf_gv_{k}({base}({var} - hpf_lo) / ({step}) + 1)")
                };
                (read.range, text)
            })
            .collect()
    }

    /// An array assignment to the section `lo:hi:step` of a CYCLIC array
    /// `home` (stored compressed) whose distributed reads are all fetched:
    /// its owned elements lie in one block per course, each a run of local
    /// positions. The inspector lists the indices course by course (the
    /// left side's element is `hpf_i`), one exchange per array fills the
    /// buffers, then each course assigns its run from its part of them.
    /// `edits` make the statement assign the run `hpf_lx(lo):hpf_lx(hi)`.
    pub(crate) fn emit_fetched_courses(
        &self,
        out: &mut String,
        stmt: &Stmt,
        home: SymbolId,
        (lo, hi, step): (&str, &str, i64),
        all_reads: &[FetchedRead],
        edits: &[(TextRange, String)],
    ) {
        let (reads, which) = distinct_reads(all_reads);
        let name = &self.distributed[&home].name;
        let read_arrays: Vec<SymbolId> = reads.iter().map(|it| it.array).collect();
        let segments = self.declare_buffers(out, &read_arrays, ", hpf_m, hpf_k");
        let courses = |out: &mut String| {
            let _ = writeln!(out, "  do hpf_c = 0, hpf_courses(hpf_d_{name}) - 1");
            let _ = writeln!(
                out,
                "    call hpf_course_bounds(hpf_d_{name}, 0, ({lo}), ({hi}), {step}, hpf_c, hpf_lo, hpf_hi)"
            );
            let _ = writeln!(out, "    hpf_k = 0");
            let _ =
                writeln!(out, "    if ((hpf_hi - hpf_lo) * ({step}) >= 0) hpf_k = (hpf_hi - hpf_lo) / ({step}) + 1");
        };
        let _ = writeln!(out, "  hpf_n = 0");
        courses(out);
        let _ = writeln!(out, "    hpf_n = hpf_n + hpf_k\n  end do");
        self.allocate_buffers(out, &read_arrays);
        // The inspector, course by course: `hpf_m` elements listed before this one.
        let _ = writeln!(out, "  hpf_m = 0");
        courses(out);
        for (read, (k, base)) in reads.iter().zip(&segments) {
            let _ = writeln!(
                out,
                "    forall (hpf_i = hpf_lo:hpf_hi:{step}) hpf_gi_{k}({base}hpf_m + (hpf_i - hpf_lo) / ({step}) + 1) = {}",
                read.index
            );
        }
        let _ = writeln!(out, "    hpf_m = hpf_m + hpf_k\n  end do");
        self.exchange_buffers(out, &read_arrays);
        let mut edits = edits.to_vec();
        edits.extend(all_reads.iter().zip(which).map(|(read, at)| {
            let (k, base) = &segments[at];
            (read.range, format!("hpf_gv_{k}({base}hpf_m + 1:{base}hpf_m + hpf_k)"))
        }));
        let _ = writeln!(out, "  hpf_m = 0");
        courses(out);
        let _ = writeln!(out, "    if (hpf_k > 0) then");
        let _ = writeln!(out, "{}", self.edited_statement(stmt, &edits));
        let _ = writeln!(out, "    end if\n    hpf_m = hpf_m + hpf_k\n  end do\n  end block");
    }
}

/// The reads that fetch different elements (references that read the same
/// elements, `A(2:N)` in a mask and in the right side, share one fetch),
/// and for each read the position of its fetch among them.
fn distinct_reads(reads: &[FetchedRead]) -> (Vec<&FetchedRead>, Vec<usize>) {
    let mut distinct: Vec<&FetchedRead> = Vec::new();
    let which = reads
        .iter()
        .map(|read| {
            let same = |it: &&FetchedRead| it.array == read.array && it.index == read.index && it.slice == read.slice;
            distinct.iter().position(same).unwrap_or_else(|| {
                distinct.push(read);
                distinct.len() - 1
            })
        })
        .collect();
    (distinct, which)
}

/// The arrays `reads` fetch, in order of first reference.
fn distinct(read_arrays: &[SymbolId]) -> Vec<SymbolId> {
    let mut arrays: Vec<SymbolId> = Vec::new();
    for array in read_arrays {
        if !arrays.contains(array) {
            arrays.push(*array);
        }
    }
    arrays
}
