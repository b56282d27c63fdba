//! Array assignments to a slice of a distributed array taken at one index
//! of its distributed dimension, from slices of distributed arrays taken
//! likewise (`CU(2:M+1, N+1) = CU(2:M+1, 1)`, the periodic boundary copy of
//! a `(*, BLOCK)` array in a shallow-water code): the owner of each slice
//! read sends it to the owner of the left side's slice (nothing moves when
//! they are the same process), which then runs the statement on the copies.
//! Only the slices move, never a whole array, and no other process waits.
//! An element assignment that reads elements far from its own
//! (`CU(1, N+1) = CU(M+1, 1)`) runs so too, rather than widening the
//! shadow areas to the distance (`assign.rs`).
//!
//! The arrays are distributed along one dimension, BLOCK or BLOCK(m), over
//! a 1-D arrangement (their owners are world ranks), and every subscript
//! reads replicated data only, so every process computes the same owners.

use std::fmt::Write;

use analysis::model::SymbolId;
use syntax::{ExprKind, Stmt, StmtKind, Subscript, TextRange};

use crate::assign::find_reference;
use crate::{declared_type, mpi_type, Lowering};

/// `X(..., e, ...) = f(Y(..., e', ...), ...)` run by the owner of `X(:, e)`.
#[derive(Debug)]
pub(crate) struct SliceAssign<'a> {
    stmt: &'a Stmt,
    lhs: SymbolId,
    /// How many of the left side's subscripts are sections (0: one element).
    lhs_rank: usize,
    /// The left side's subscript along its distributed dimension.
    index: TextRange,
    reads: Vec<SliceRead>,
}

/// One distributed reference the statement reads, at one index of its
/// distributed dimension.
#[derive(Debug)]
struct SliceRead {
    array: SymbolId,
    /// The reference as written (replaced by its copy).
    range: TextRange,
    /// Its subscript along the distributed dimension.
    index: TextRange,
    /// How many of its subscripts are sections (0: one element).
    rank: usize,
}

impl SliceAssign<'_> {
    /// Whether it assigns one element (not a slice of many).
    pub(crate) fn is_element(&self) -> bool {
        self.lhs_rank == 0
    }
}

impl<'a> Lowering<'a> {
    /// `stmt` as a slice assignment, or why it is not one.
    pub(crate) fn slice_assignment<'s>(&self, stmt: &'s Stmt) -> Result<SliceAssign<'s>, String>
    where
        'a: 's,
    {
        let StmtKind::Assign { lhs, rhs } = &stmt.kind else { return Err("it is not an assignment".to_string()) };
        let ExprKind::Ref { name, args } = &lhs.kind else {
            return Err("its left side is not an array section".to_string());
        };
        let line_start = self.text[..stmt.range.start].rfind('\n').map_or(0, |it| it + 1);
        if !self.text[line_start..stmt.range.start].trim().is_empty() {
            return Err("it has a label".to_string());
        }
        let lhs_id = self.lookup(&name.key()).filter(|it| self.distributed.contains_key(it));
        let lhs_id = lhs_id.ok_or("its left side is not distributed")?;
        let (index, lhs_rank) = self.slice_subscripts(lhs_id, args)?;
        let mut reads = Vec::new();
        for (range, array) in self.distributed_occurrences(rhs.range) {
            let args = find_reference(rhs, range)
                .ok_or_else(|| format!("it reads {} whole", self.distributed[&array].name))?;
            let (index, rank) = self.slice_subscripts(array, args)?;
            if rank != 0 && rank != lhs_rank {
                return Err(format!("it reads a section of {} of another rank", self.distributed[&array].name));
            }
            let text = self.slice(TextRange::new(range.start, rhs.range.end));
            let close =
                text.find('(').and_then(|open| crate::closing_paren(text, open)).ok_or("a reference is not closed")?;
            reads.push(SliceRead { array, range: TextRange::new(range.start, range.start + close + 1), index, rank });
        }
        Ok(SliceAssign { stmt, lhs: lhs_id, lhs_rank, index, reads })
    }

    /// The subscript along the distributed dimension of `array` (one
    /// replicated value) and how many subscripts are sections, or why
    /// `args` is not such a slice.
    fn slice_subscripts(&self, array: SymbolId, args: &[Subscript]) -> Result<(TextRange, usize), String> {
        let distributed = &self.distributed[&array];
        let name = &distributed.name;
        if distributed.cyclic || distributed.second.is_some() || !distributed.plain {
            return Err(format!("{name} is not distributed by blocks along one dimension with stride 1"));
        }
        if args.len() != distributed.lbs.len() {
            return Err(format!("{name} is not referenced with one subscript per dimension"));
        }
        if args.iter().any(|it| !self.distributed_occurrences(it.range()).is_empty()) {
            return Err("a subscript reads a distributed array".to_string());
        }
        let Some(Subscript::Expr(index)) = args.get(distributed.dim) else {
            return Err(format!("{name} is sectioned along its distributed dimension"));
        };
        if args.iter().any(|it| matches!(it, Subscript::Star(_) | Subscript::Keyword { .. })) {
            return Err(format!("{name} is not subscripted"));
        }
        let rank = args.iter().filter(|it| matches!(it, Subscript::Range { .. })).count();
        Ok((index.range, rank))
    }

    pub(crate) fn emit_slice_assign(&self, out: &mut String, plan: &SliceAssign) {
        let model = &self.analysis.model;
        let lhs = &self.distributed[&plan.lhs];
        let _ =
            writeln!(out, "  ! hpf-ls: the owner of the slice of {} computes it from the slices sent to it", lhs.name);
        let _ = writeln!(out, "  block");
        for (k, read) in plan.reads.iter().enumerate() {
            let symbol = model.symbol(read.array);
            let shape = if read.rank == 0 {
                String::new()
            } else {
                format!(", allocatable :: hpf_v{k}({})", vec![":"; read.rank].join(","))
            };
            if read.rank == 0 {
                let _ = writeln!(out, "    {} :: hpf_v{k}", declared_type(symbol));
            } else {
                let _ = writeln!(out, "    {}{shape}", declared_type(symbol));
                let _ = writeln!(out, "    integer :: hpf_shape{k}({})", read.rank);
            }
        }
        let _ = writeln!(out, "    integer :: hpf_from, hpf_to");
        let _ = writeln!(out, "    hpf_to = hpf_owner(hpf_d_{}, {})", lhs.name, self.one_line(plan.index));
        for (k, read) in plan.reads.iter().enumerate() {
            let array = &self.distributed[&read.array];
            let mpi = mpi_type(array.suffix);
            let _ = writeln!(out, "    hpf_from = hpf_owner(hpf_d_{}, {})", array.name, self.one_line(read.index));
            let _ = writeln!(out, "    if (hpf_rank == hpf_from) then");
            let _ = writeln!(out, "      hpf_v{k} = {}", self.one_line(read.range));
            let _ = writeln!(out, "      if (hpf_to /= hpf_rank) then");
            if read.rank > 0 {
                let _ = writeln!(
                    out,
                    "        call MPI_Send(shape(hpf_v{k}), {}, MPI_INTEGER, hpf_to, 11, MPI_COMM_WORLD)",
                    read.rank
                );
            }
            let count = if read.rank == 0 { "1".to_string() } else { format!("size(hpf_v{k})") };
            let _ = writeln!(out, "        call MPI_Send(hpf_v{k}, {count}, {mpi}, hpf_to, 11, MPI_COMM_WORLD)");
            let _ = writeln!(out, "        if (hpf_stats) then");
            let _ = writeln!(out, "          hpf_stat_messages = hpf_stat_messages + 1");
            let _ = writeln!(out, "          hpf_stat_elements = hpf_stat_elements + {count}");
            let _ = writeln!(out, "        end if");
            let _ = writeln!(out, "      end if");
            let _ = writeln!(out, "    else if (hpf_rank == hpf_to) then");
            if read.rank > 0 {
                let _ = writeln!(
                    out,
                    "      call MPI_Recv(hpf_shape{k}, {}, MPI_INTEGER, hpf_from, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE)",
                    read.rank
                );
                let extents: Vec<String> = (1..=read.rank).map(|d| format!("hpf_shape{k}({d})")).collect();
                let _ = writeln!(out, "      allocate (hpf_v{k}({}))", extents.join(", "));
            }
            let _ = writeln!(
                out,
                "      call MPI_Recv(hpf_v{k}, {count}, {mpi}, hpf_from, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE)"
            );
            let _ = writeln!(out, "    end if");
        }
        let edits: Vec<(TextRange, String)> =
            plan.reads.iter().enumerate().map(|(k, read)| (read.range, format!("hpf_v{k}"))).collect();
        let _ = writeln!(out, "    if (hpf_rank == hpf_to) then");
        let _ = writeln!(out, "{}", self.edited_statement(plan.stmt, &edits));
        let _ = writeln!(out, "    end if");
        let _ = writeln!(out, "  end block");
    }
}
