//! What the lowering decides for small programs: which statements run in
//! parallel, which on rank 0 (the notes), and the shape of the generated
//! code. The differential tests under MPI are in `server/lsp/tests/mpi_run.rs`.

use analysis::model::ModelConfig;
use syntax::{LineIndex, SourceForm};

/// The notes as `line: message`, and the generated source.
fn lower(text: &str) -> (Vec<String>, String) {
    lowered(text).unwrap_or_else(|errors| panic!("refused: {errors:?}"))
}

/// The notes (`line: message`) and the source `crate::lower` makes of the
/// free-form `text`, or its errors the same way.
pub(crate) fn lowered(text: &str) -> Result<(Vec<String>, String), Vec<String>> {
    let analysis = analysis::analyze(text, SourceForm::Free, ModelConfig { number_of_processors: None });
    let index = LineIndex::new(text);
    let line = |at: usize| index.line_col(text, at).0 + 1;
    match crate::lower(&analysis, text) {
        Ok(generated) => Ok((
            generated.notes.iter().map(|it| format!("{}: {}", line(it.range.start), it.message)).collect(),
            generated.source,
        )),
        Err(errors) => Err(errors.iter().map(|it| format!("{}: {}", line(it.range.start), it.message)).collect()),
    }
}

const HEADER: &str = "program p
  implicit none
  integer, parameter :: n = 20
  real :: u(0:n+1), un(0:n+1), s
  integer :: k(n), i, step, total
!HPF$ TEMPLATE T(0:N+1)
!HPF$ DISTRIBUTE T(BLOCK)
!HPF$ ALIGN (I) WITH T(I) :: U, UN
!HPF$ ALIGN K(I) WITH T(I)
";

fn program(body: &str) -> String {
    format!("{HEADER}{body}end program p\n")
}

#[test]
fn a_time_loop_runs_on_every_process_with_its_parallel_statements() {
    let (notes, source) = lower(&program(
        "  u = 0.0
  u(0) = 100.0
  do step = 1, 10
    do i = 1, n
      un(i) = u(i) + 0.25 * (u(i-1) - 2.0*u(i) + u(i+1))
    end do
    u(1:n) = un(1:n)
  end do
  print *, u(1), sum(u(1:n))
",
    ));
    assert_eq!(notes, Vec::<String>::new());
    assert!(source.contains("  do step = 1, 10\n"), "{source}");
    assert!(source.contains("u(hpf_lo:hpf_hi:1) = un(hpf_lo:hpf_hi:1)"), "{source}");
    assert!(source.contains("if (hpf_owns(hpf_d_u, 0)) then"), "{source}");
    // The element comes from its owner, the sum along the chain: nothing is gathered.
    assert!(!source.contains("call hpf_gather"), "{source}");
    assert!(source.contains("call hpf_chain_recv_r4(hpf_r2, 1)"), "{source}");
}

#[test]
fn shifted_sections_fetch_their_neighbours_first() {
    let (notes, source) = lower(&program("  u(1:n) = un(0:n-1) + un(2:n+1)\n  un(2:n:2) = u(1:n-1:2)\n"));
    assert_eq!(notes, Vec::<String>::new());
    assert!(
        source.contains("call hpf_fetch_r4_11(un, hpf_d_un, min(hpf_lo, hpf_hi) + (-1), max(hpf_lo, hpf_hi) + (1))")
    );
    assert!(source.contains("un(hpf_lo:hpf_hi:2) = u(hpf_lo+(-1):hpf_hi+(-1):2)"), "{source}");
    // The shadow areas are as wide as the shifts.
    assert!(source.contains("call hpf_alloc_bounds(hpf_d_un, 1, 1, hpf_lo, hpf_hi)"), "{source}");
}

#[test]
fn what_does_not_line_up_runs_on_rank_0() {
    let (notes, _) = lower(&program(
        "  k(1:n:step) = k(1:n)
  u(1:n) = u(k(1))
  s = u(1) + sum(k(1:n))
  total = maxloc(k, 1, back=.true.)
",
    ));
    // A stride only known when the program runs, an element whose index
    // is a distributed array's element: neither has a plan.
    assert_eq!(
        notes,
        [
            "10: runs on one process: it is not an owner-computes assignment: a section stride is not a constant",
            "11: runs on one process: it is not an owner-computes assignment: u is not sectioned along its distributed dimension",
            "13: runs on one process: it is not an owner-computes assignment: it assigns the replicated variable total from distributed data; MAXLOC with KIND or BACK runs on rank 0",
        ]
    );
}

/// MAXLOC and MINLOC along DIM=1 of BLOCK data: each process's first
/// extreme, its local position turned into the section's, then one
/// `MPI_Allreduce` of (value, position) pairs (`hpf_location_*`); in an
/// expression, with MASK, on strided sections, also with a stride known
/// only at run time.
#[test]
fn maxloc_and_minloc_combine_value_and_position_pairs() {
    let (notes, source) = lower(&program(
        "  total = maxloc(abs(u(2:n)), 1) + 1
  total = minloc(k(n:1:-2), dim=1, mask=k(n:1:-2) > 0)
  total = maxloc(k(1:n:step), 1)
",
    ));
    assert_eq!(notes, Vec::<String>::new());
    assert!(
        source.contains("  if (hpf_r6 > 0) hpf_r6 = (hpf_lo + (hpf_r6 - 1) * ((step)) - (1)) / ((step)) + 1\n"),
        "{source}"
    );
    assert!(
        source.contains("  hpf_r2 = maxloc(abs(u(hpf_lo:hpf_hi:1)), 1)\n  hpf_r1 = maxval(abs(u(hpf_lo:hpf_hi:1)))\n"),
        "{source}"
    );
    assert!(source.contains("  if (hpf_r2 > 0) hpf_r2 = (hpf_lo + (hpf_r2 - 1) * (1) - (2)) / (1) + 1\n"), "{source}");
    assert!(source.contains("  call hpf_location_r4(hpf_r1, hpf_r2, .true.)\n  total = hpf_r2 + 1\n"), "{source}");
    assert!(source.contains("  hpf_r4 = minloc(k(hpf_lo:hpf_hi:-2), 1, mask=k(hpf_lo:hpf_hi:-2) > 0)\n"), "{source}");
    assert!(source.contains("call hpf_location_i4(hpf_r3, hpf_r4, .false.)"), "{source}");
}

/// The pivot search of an elimination on a matrix distributed by columns:
/// the pivot column's owner runs MAXLOC on its local column and broadcasts
/// the position (nothing is gathered).
#[test]
fn maxloc_of_one_column_runs_on_its_owner() {
    let (notes, source) = lower(
        "program g
  implicit none
  integer, parameter :: n = 12
  double precision :: a(n, n)
  integer :: k, ipiv
!HPF$ DISTRIBUTE a(*, CYCLIC)
  a = 1.d0
  do k = 1, n - 1
    ipiv = maxloc(abs(a(k:n, k)), 1) + k - 1
    print *, ipiv
  end do
end program g
",
    );
    assert_eq!(notes, Vec::<String>::new());
    assert!(
        source.contains(
            "  if (hpf_owns(hpf_d_a, k)) hpf_r1 = maxloc(abs(a(k:n, hpf_lx(hpf_d_a, k))), 1)\n  call MPI_Bcast(hpf_r1, 1, MPI_INTEGER, hpf_owner(hpf_d_a, k), MPI_COMM_WORLD)\n"
        ),
        "{source}"
    );
    assert!(!source.contains("hpf_gather"), "{source}");
}

/// A time loop whose body gathers an array for one statement, or leaves
/// the loop under a condition that reads distributed data at the loop's
/// index, runs on every process but that one statement, on rank 0 (its
/// EXIT taken by every process). A condition that reads distributed data
/// elsewhere is computed first (`hoist.rs`: `hpf_b1 = ...`, a reduction or
/// an element every process gets).
#[test]
fn a_time_loop_runs_its_statements_without_parallel_form_alone_on_rank_0() {
    let (notes, source) = lower(&program(
        "  do step = 1, 10
    u(1:n) = un(1:n)
    if (u(1) > 3.0) exit
  end do
  do step = 1, 10
    u(1:n) = un(1:n)
    k(1) = maxloc(u, 1)
  end do
  do step = 1, 10
    u(1:n) = un(1:n)
    if (u(step) > 3.0) exit
  end do
  do step = 1, 10
    u(1:n) = 0.5 * (u(1:n) + un(1:n))
    if (maxval(abs(u(1:n) - un(1:n))) < 1.0e-3) exit
  end do
",
    ));
    assert_eq!(
        notes,
        [
            "16: runs on one process: it is not an owner-computes assignment: it reads u as a whole in an element assignment",
            "20: runs on one process: its condition reads distributed arrays",
        ]
    );
    assert_eq!(source.matches("! hpf-ls: every process runs this loop").count(), 4, "{source}");
    // The element comes from its owner, the MAXVAL is computed in parallel.
    assert!(source.contains("    hpf_b1 = (hpf_r1 > 3.0)\n    if (hpf_b1) exit\n"), "{source}");
    assert!(source.contains("MAXVAL in parallel"), "{source}");
    assert!(source.contains("    if (hpf_b2) exit\n"), "{source}");
}

/// In a loop over replicated data, a reduction whose section starts at the
/// loop's index may sit in an IF condition (computed first, `hoist.rs`) or
/// be assigned to an element of a replicated array: the loop runs on every
/// process, each reduction in parallel. An element of a replicated array
/// assigned from distributed elements is left to the other rules.
#[test]
fn reductions_at_a_loops_index_in_conditions_and_replicated_elements_run_in_parallel() {
    let (notes, source) = lower(
        "program p
  implicit none
  integer, parameter :: n = 20
  real :: u(n), un(n)
  integer :: i, found(4)
!HPF$ DISTRIBUTE (BLOCK) :: u, un
  u = 1.0
  un = 2.0
  do i = 2, n - 1, 5
    if (maxloc(u(i:n), 1) > 3) then
      print *, 'far', i
    end if
  end do
  do i = 1, 4
    found(i) = maxloc(u(i:n), 1) - minloc(un(i:n), 1)
  end do
  print *, found
end program p
",
    );
    assert_eq!(notes, Vec::<String>::new());
    assert_eq!(source.matches("! hpf-ls: every process runs this loop").count(), 2, "{source}");
    assert!(source.contains("    hpf_b1 = (hpf_r2 > 3)\n  if ((hpf_b1)) then\n"), "{source}");
    assert!(source.contains("    found(i) = hpf_r4 - hpf_r6\n"), "{source}");
    assert!(!source.contains("hpf_gather"), "{source}");
}

/// A statement after `;` on a line is copied alone, not with the statements
/// before it on that line (which would open the loop again inside itself).
#[test]
fn statements_after_a_semicolon_are_copied_alone() {
    let (_, source) = lower(&program(
        "  do i = 2, n - 1; u(i) = 0.5 * (u(i-1) + u(i+1)); un(i) = u(i); end do\n  print *, sum(un)\n",
    ));
    assert!(!source.contains("do i = 2, n - 1; u(i)"), "{source}");
    assert!(source.contains("\n u(i) = 0.5 * (u(i-1) + u(i+1))\n"), "{source}");
    assert!(source.contains("\n un(i) = u(i)\n"), "{source}");
}

#[test]
fn reductions_keep_the_sequential_order_of_floating_point_sums() {
    let (notes, source) = lower(&program(
        "  s = sum(u(n:1:-1)) + product(un)
  total = sum(k) + count(k > 0) + maxval(k)
  print *, any(k > 3), all(u > 0.0), dot_product(u(1:n), un(0:n-1)), minval(u)
",
    ));
    assert_eq!(notes, Vec::<String>::new());
    // Floating point: along the chain, downwards for a negative stride.
    assert!(source.contains("call hpf_chain_recv_r4(hpf_r1, -1)"), "{source}");
    assert!(source.contains("hpf_r2 = hpf_r2 * (un(hpf_i))"), "{source}");
    assert!(source.contains("hpf_r8 = hpf_r8 + (u(hpf_i)) * (un(hpf_i+(-1)))"), "{source}");
    // Integers, logicals, extrema: in any order.
    assert!(source.contains("MPI_Allreduce(MPI_IN_PLACE, hpf_r3, 1, MPI_INTEGER, MPI_SUM"), "{source}");
    assert!(source.contains("MPI_Allreduce(MPI_IN_PLACE, hpf_r6, 1, MPI_LOGICAL, MPI_LOR"), "{source}");
    assert!(source.contains("MPI_Allreduce(MPI_IN_PLACE, hpf_r9, 1, MPI_REAL, MPI_MIN"), "{source}");
}

#[test]
fn foralls_and_arrays_of_equal_blocks_run_in_parallel() {
    let text = "program q
  implicit none
  integer, parameter :: n = 16
  real :: a(n), b(n)
  integer :: i
!HPF$ DISTRIBUTE A(BLOCK)
!HPF$ DISTRIBUTE B(BLOCK)
  forall (i = 2:n-1) a(i) = b(i-1) + a(i+1)
  forall (i = 1:n, a(i) > 0.0) b(i) = a(n+1-i)
end program q
";
    let (notes, source) = lower(text);
    // B(I) on its own template lives where A(I) does; A(N+1-I) does not
    // follow I: fetched first (`nest_fetch.rs`).
    assert_eq!(
        notes,
        ["9: runs on every process: each assignment of this FORALL runs on the owner of its left side, after fetching what a(n+1-i) read(s) by one all-to-all per reference (inspector/executor)"]
    );
    assert!(source.contains("  forall (i = hpf_lo:hpf_hi:1) a(i) = b(i-1) + a(i+1)\n"), "{source}");
    assert!(source.contains("call hpf_fetch_r4_11(a, hpf_d_a, min(hpf_lo, hpf_hi) + (1), max(hpf_lo, hpf_hi) + (1))"));
}

#[test]
fn replicated_conditions_and_elements_from_their_owner() {
    let (notes, source) = lower(&program(
        "  step = 0
  do while (step < 5)
    step = step + 1
    if (mod(step, 2) == 0) then
      u(1:n) = un(1:n) + u(k(step))
    else
      print *, step, u(step)
    end if
  end do
",
    ));
    // `u(1:n) = un(1:n) + u(k(step))` alone runs on rank 0, in every
    // iteration; the loop and the PRINT of an element run on every process.
    assert_eq!(
        notes,
        ["14: runs on one process: it is not an owner-computes assignment: u is not sectioned along its distributed dimension"]
    );
    let (notes, source_ok) = lower(&program(
        "  step = 0
  do while (step < 5)
    step = step + 1
    if (mod(step, 2) == 0) then
      s = u(step)
      u(1:n) = un(1:n) + s
    else
      print *, step, u(step)
    end if
  end do
",
    ));
    assert_eq!(notes, Vec::<String>::new());
    assert!(source_ok.contains("  do while ((step < 5))\n"), "{source_ok}");
    assert!(source_ok.contains("  if (hpf_owns(hpf_d_u, step)) hpf_r1 = u(step)\n"), "{source_ok}");
    assert!(source_ok.contains("call MPI_Bcast(hpf_r1, 1, MPI_REAL, hpf_owner(hpf_d_u, step), MPI_COMM_WORLD)"));
    assert!(!source_ok.contains("hpf_gather"), "{source_ok}");
    assert!(source.contains("hpf_gather"), "{source}");
}

#[test]
fn reads_happen_on_rank_0_and_what_they_read_is_handed_on() {
    // A READ inside a loop with no distributed array still runs on rank 0
    // only (every process reading stdin would lose input on the others).
    let (notes, source) = lower(&program(
        "  read (*, *, iostat=total) step, k(1:3)\n  do i = 1, 2\n    read *, s\n  end do\n  u(1) = s\n",
    ));
    // The loop around the second READ runs whole on rank 0 (a note); the
    // first READ, a statement of the program, needs no note.
    assert!(notes.iter().all(|it| it.starts_with("11: runs on one process")), "{notes:?}");
    let reads = source.matches("if (hpf_rank == 0) then").count();
    assert!(reads >= 2, "{source}");
    assert!(source.contains("call MPI_Bcast(step, storage_size(step) / 8, MPI_BYTE"), "{source}");
    assert!(source.contains("call MPI_Bcast(total, storage_size(total) / 8, MPI_BYTE"), "{source}");
    assert!(source.contains("call MPI_Bcast(s, storage_size(s) / 8, MPI_BYTE"), "{source}");
    assert!(source.contains("call hpf_scatter_"), "k is read on rank 0 and scattered:\n{source}");

    // What only the reading process could act on is refused at its line.
    for (body, why) in
        [("  read (*, *, end=10) step\n10 continue\n", "END="), ("  read *, (k(i), i = 1, 3)\n", "implied-DO")]
    {
        let text = program(body);
        let analysis = analysis::analyze(&text, SourceForm::Free, ModelConfig { number_of_processors: None });
        let errors = crate::lower(&analysis, &text).expect_err(body);
        assert!(errors.iter().any(|it| it.message.contains(why)), "{errors:?}");
        let line = LineIndex::new(&text).line_col(&text, errors[0].range.start).0 + 1;
        assert_eq!(line, HEADER.lines().count() + 1, "{errors:?}");
    }
}

#[test]
fn calls_run_on_rank_0_and_unsupported_procedures_are_refused_at_their_line() {
    let (notes, source) = lower(&format!(
        "{}subroutine shift(x, m, t)\n  integer :: m, x(m-1), t\n  t = t + x(1)\nend subroutine shift\n",
        program("  call shift(k, n, total)\n  print *, total\n")
    ));
    assert!(notes.iter().any(|it| it.contains("subroutines run on rank 0")), "{notes:?}");
    assert!(source.contains("call shift(hpf_g_k, n, total)"), "{source}");
    assert!(source.contains("call MPI_Bcast(total, storage_size(total) / 8, MPI_BYTE"), "{source}");
    assert!(source.contains("\nsubroutine shift(x, m, t)"), "the subroutine is copied:\n{source}");
    // (The dummy has fewer elements than its actual: not one of the layouts a copy takes.)
    assert!(
        notes.iter().any(|it| it.contains("the bounds of the dummy x are not known to be the actual's")),
        "{notes:?}"
    );

    let refused = |text: &str, why: &str, line: usize| {
        let analysis = analysis::analyze(text, SourceForm::Free, ModelConfig { number_of_processors: None });
        let errors = crate::lower(&analysis, text).expect_err(why);
        assert!(errors[0].message.contains(why), "{errors:?}");
        assert_eq!(LineIndex::new(text).line_col(text, errors[0].range.start).0 + 1, line, "{errors:?}");
    };
    let main_lines = program("").lines().count();
    refused(
        &format!("{}subroutine s()\n  stop\nend subroutine s\n", program("")),
        "STOP in a subroutine",
        main_lines + 2,
    );
    refused(
        &format!("{}integer function f(v)\n  integer :: v\n  print *, v\n  f = v\nend function f\n", program("")),
        "a function that prints",
        main_lines + 3,
    );
    // Procedures may come first; the program is lowered all the same.
    let (_, source) = lower(&format!("subroutine s()\nend subroutine s\n{}", program("  call s()\n")));
    assert_eq!(source.matches("end program p").count(), 1, "{source}");
    assert!(source.find("program p").unwrap() < source.find("subroutine s()").unwrap(), "{source}");
    // A replicated COMMON block set by a procedure that runs on rank 0 (it
    // prints) is broadcast after the call; a distributed one is refused.
    let (_, source) = lower(&format!(
        "{}subroutine s()\n  integer :: c\n  common /blk/ c\n  c = 1\n  print *, c\nend subroutine s\n",
        program("  call s()\n")
    ));
    let call = source.find("call s()").expect("the call");
    let sync = source.find("call hpf_sync_common_blk()").expect("the broadcast of /blk/");
    assert!(call < sync, "{source}");
    assert!(
        source.contains("subroutine hpf_sync_common_blk()\n  use hpf_runtime\n  integer :: c\n  common /blk/ c\n"),
        "{source}"
    );
    // A distributed one is a module (`common_modules.rs`); a unit that
    // declares it otherwise than the first is refused at its COMMON statement.
    refused(
        &format!(
            "{}subroutine s()\n  integer :: c(8)\n!HPF$ DISTRIBUTE c(BLOCK)\n  common /blk/ c\n  c = 1\nend subroutine s\nsubroutine r()\n  integer :: d(8)\n!HPF$ DISTRIBUTE d(CYCLIC)\n  common /blk/ d\n  d = 1\nend subroutine r\n",
            program("")
        ),
        "COMMON /blk/ holds distributed arrays, and this unit declares its variable 1 (`d`) otherwise than the first unit that declares it (`c`",
        main_lines + 10,
    );
    // Internal procedures follow the program's statements.
    let (_, source) = lower(&program("  call inner()\ncontains\n  subroutine inner()\n  end subroutine inner\n"));
    assert!(
        source
            .contains("  call hpf_finalize()\ncontains\n\nsubroutine inner()\n  end subroutine inner\nend program p\n"),
        "{source}"
    );
    // (Also when the program has no statement of its own.)
    let (_, source) = lower(&program("contains\n  subroutine inner()\n  end subroutine inner\n"));
    assert_eq!(source.matches("contains").count(), 1, "{source}");
    refused(
        &program("contains\n  subroutine inner()\n    stop\n  end subroutine inner\n"),
        "STOP in a subroutine",
        main_lines + 2,
    );
    // A module of constants and procedures is copied before the program; a
    // module variable would be set on rank 0 only.
    let module = "module m\n  integer, parameter :: w = 3\ncontains\n  subroutine bump(x)\n    integer :: x\n    x = x + w\n  end subroutine bump\nend module m\n";
    let uses_m =
        program("  total = 0\n  call bump(total)\n").replacen("  implicit none", "  use m\n  implicit none", 1);
    let (_, source) = lower(&format!("{module}{uses_m}"));
    assert!(source.find("module m").unwrap() < source.find("program p").unwrap(), "{source}");
    assert!(source.contains("call MPI_Bcast(total, storage_size(total) / 8, MPI_BYTE"), "{source}");
    // A module variable the procedure uses is broadcast after the call on rank 0.
    let (_, source) = lower(&format!("{}{uses_m}", module.replace("parameter :: w = 3", "save :: w")));
    assert!(source.contains("  use m, only: w\n"), "{source}");
    assert!(source.contains("call MPI_Bcast(w, storage_size(w) / 8, MPI_BYTE, 0, MPI_COMM_WORLD)"), "{source}");
}

#[test]
fn the_runtime_holds_only_the_routines_the_program_calls() {
    let (_, source) = lower(&program("  u(1:n) = un(0:n-1)\n  total = sum(k)\n  s = sum(u(1:n))\n"));
    let runtime = crate::runtime::runtime_for(&source);
    assert!(runtime.contains("subroutine hpf_fetch_r4_11("), "{runtime}");
    // The program allocates its parts itself.
    assert!(runtime.contains("subroutine hpf_alloc_bounds("), "{runtime}");
    assert!(!runtime.contains("hpf_fetch_i4_11"), "{runtime}");
    assert!(runtime.contains("subroutine hpf_chain_recv_r4("), "{runtime}");
    assert!(!runtime.contains("hpf_fetch_r8_11") && !runtime.contains("hpf_fetch_r4_21"), "{runtime}");
    assert!(!runtime.contains("hpf_chain_recv_r8"), "{runtime}");
    assert!(crate::runtime::runtime_source().contains("subroutine hpf_fetch_l4_33("));
}

#[test]
fn cyclic_loops_run_course_by_course_on_local_positions() {
    let text = "program c
  implicit none
  integer, parameter :: n = 20
  real :: a(n), b(n)
  integer :: i
!HPF$ DISTRIBUTE A(CYCLIC(2))
!HPF$ ALIGN B(I) WITH A(I)
  do i = n, 1, -1
    a(i) = b(i) * 2.0
  end do
  do i = 2, n
    a(i) = a(i - 1) + 1.0
  end do
  b(1:n) = a(1:n)
  print *, sum(a), a(3)
end program c
";
    let (notes, source) = lower(text);
    assert_eq!(
        notes,
        [
            "11: runs on one process: a is read at an element another process writes earlier (a loop-carried dependence), and an element assignment of its body would fetch by an all-to-all in every iteration",
        ]
    );
    // The array assignment on the same cells runs course by course too.
    assert!(source.contains("  b(hpf_lo:hpf_hi:1) = a(hpf_lo:hpf_hi:1)\n  end do\n"), "{source}");
    assert!(!source.contains("hpf_remote_read"), "{source}");
    assert!(source.contains("hpf_d_a = hpf_make_desc(1, 20, 0, 1, 20, 2, 1)"), "{source}");
    // Course by course (counted from the end for a negative step).
    assert!(source.contains("  do hpf_c = 0, hpf_courses(hpf_d_a) - 1\n"), "{source}");
    assert!(source.contains("call hpf_course_bounds(hpf_d_a, 0, (n), (1), -1, hpf_c, hpf_lo, hpf_hi)"), "{source}");
    // Local positions from one shift per array and course, no call per element.
    assert!(
        source.contains(
            "    hpf_cs_1 = hpf_lx(hpf_d_a, hpf_lo + (0)) - hpf_lo\n    hpf_cs_2 = hpf_lx(hpf_d_b, hpf_lo + (0)) - hpf_lo\n  do i = hpf_lo, hpf_hi, -1\n    a(i + hpf_cs_1) = b(i + hpf_cs_2) * 2.0\n"
        ),
        "{source}"
    );
    // Nothing is fetched along a CYCLIC dimension: the rest runs on gathered copies.
    assert!(!source.contains("hpf_fetch"), "{source}");
    assert!(source.contains("call hpf_gather_r4_11(a, hpf_d_a, hpf_g_a, [1], [20])"), "{source}");
}

#[test]
fn cyclic_loops_fetch_shifted_reads_before_their_courses() {
    let text = "program c
  implicit none
  integer, parameter :: n = 20
  real :: a(n), b(n)
  integer :: i
!HPF$ DISTRIBUTE A(CYCLIC(2))
!HPF$ ALIGN B(I) WITH A(I)
  b = 1.0
  a = 2.0
  do i = 1, n - 1
    a(i) = b(i + 1) - a(i + 1)
  end do
  do i = n, 3, -1
    a(i) = a(i - 2) * 0.5
  end do
  do i = 1, n - 1
    a(i + 1) = a(i) + b(i)
  end do
  print *, sum(a), a(3)
end program c
";
    let (notes, source) = lower(text);
    // Read ahead of the write (old values, fetched before the loop): in
    // parallel; read behind it (a carried dependence): on rank 0.
    assert_eq!(
        notes,
        [
            "16: runs on one process: a is read at an element another process writes earlier (a loop-carried dependence), and an element assignment of its body would fetch by an all-to-all in every iteration",
        ]
    );
    assert_eq!(source.matches("owner computes").count(), 2, "{source}");
    // One inspector pass course by course, one exchange per array, then the courses read the buffers.
    assert!(source.contains("      hpf_gi_1(hpf_m + (i - hpf_lo) / (1) + 1) = i + 1\n"), "{source}");
    assert!(source.contains("call hpf_remote_read_r4(b, hpf_d_b, hpf_gi_1, hpf_gv_1)"), "{source}");
    assert!(source.contains("call hpf_remote_read_r4(a, hpf_d_a, hpf_gi_2, hpf_gv_2)"), "{source}");
    assert!(
        source.contains(
            "    a(i + hpf_cs_1) = hpf_gv_1(hpf_m + (i - hpf_lo) / (1) + 1) - hpf_gv_2(hpf_m + (i - hpf_lo) / (1) + 1)\n"
        ),
        "{source}"
    );
    assert!(source.contains("    a(i + hpf_cs_1) = hpf_gv_1(hpf_m + (i - hpf_lo) / (-1) + 1) * 0.5\n"), "{source}");
}

/// Compiles the runtime (with the routines `uses` asks for) and a Fortran
/// `driver` that checks it against an enumeration, runs it and expects it
/// to print `errors: 0`; fails without `mpif90` (a skip must not count as a pass).
fn assert_driver_finds_no_errors(name: &str, uses: &str, driver: &str) {
    use std::process::Command;
    assert!(
        Command::new("mpif90").arg("--version").output().is_ok_and(|it| it.status.success()),
        "this test needs mpif90: apt-get install -y gfortran libopenmpi-dev openmpi-bin"
    );
    let dir = std::env::temp_dir().join(format!("hpf-ls-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("runtime.f90"), crate::runtime::runtime_for(uses)).unwrap();
    std::fs::write(dir.join("driver.f90"), driver).unwrap();
    let build =
        Command::new("mpif90").args(["runtime.f90", "driver.f90", "-o", "driver"]).current_dir(&dir).output().unwrap();
    assert!(build.status.success(), "{}", String::from_utf8_lossy(&build.stderr));
    let run = Command::new(dir.join("driver")).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(String::from_utf8_lossy(&run.stdout), "errors: 0\n");
}

/// The runtime's CYCLIC maps (owner, local position and its inverse, the
/// local parts, the iterations of each course) against a brute-force
/// enumeration on 1 to 5 processes, by a Fortran driver that sets the rank
/// and the process count itself (no MPI run needed, only `mpif90`).
#[test]
fn the_runtime_cyclic_maps_agree_with_enumeration() {
    assert_driver_finds_no_errors("cyclic-maps", "", include_str!("cyclic_maps_test.f90"));
}

/// The runtime's 2-D grid (its shape for every process count, the block
/// owners along each axis, each rank's box, the local iterations) against
/// a brute-force enumeration on 1 to 7 processes, by a Fortran driver that
/// sets the rank and the process count itself (only `mpif90` needed).
#[test]
fn the_runtime_grid_maps_agree_with_enumeration() {
    assert_driver_finds_no_errors("grid-maps", "call hpf_box_i4_212(", include_str!("grid_maps_test.f90"));
}

/// The runtime's owners and owned ranges of BLOCK dimensions aligned with
/// strides other than 1, negative ones included, against a brute-force
/// enumeration on 1 to 5 processes (only `mpif90` needed).
#[test]
fn the_runtime_stride_maps_agree_with_enumeration() {
    assert_driver_finds_no_errors("stride-maps", "", include_str!("stride_maps_test.f90"));
}

#[test]
fn strided_and_reversed_alignments_run_with_arrays_of_the_same_alignment() {
    let (notes, source) = lower(
        "program s
  implicit none
  integer, parameter :: n = 20
  real :: a(n), x(n/2), y(n/2), r(n), total
  integer :: i
!HPF$ TEMPLATE T(N)
!HPF$ DISTRIBUTE T(BLOCK)
!HPF$ ALIGN A(I) WITH T(I)
!HPF$ ALIGN (I) WITH T(2*I) :: X, Y
!HPF$ ALIGN R(I) WITH T(N+1-I)
  do i = 2, n/2 - 1
    y(i) = x(i-1) + x(i+1)
  end do
  total = sum(r)
  do i = 1, n/2
    y(i) = a(2*i) + r(n+1-2*i)
  end do
  do i = 1, n/2
    y(i) = a(i)
  end do
end program s
",
    );
    // A(2*I) and R(N+1-2*I) sit on Y(I)'s cell T(2*I): local; A(I) does not,
    // and is fetched by the inspector/executor (`remap.rs`).
    assert!(notes.is_empty(), "{notes:?}");
    assert!(source.contains("call hpf_remote_read_r4(a, hpf_d_a, hpf_gi_1, hpf_gv_1)"), "{source}");
    assert!(source.contains("owner computes do i = 1, n/2"), "{source}");
    assert!(source.contains("  hpf_d_x%s = 2\n"), "{source}");
    assert!(source.contains("  hpf_d_r%s = -1\n"), "{source}");
    assert!(source.contains("call hpf_fetch_r4_11(x, hpf_d_x,"), "{source}");
    // The reversed array's first elements are on the last rank: the chain runs backwards.
    assert!(source.contains("call hpf_chain_recv_r4(hpf_r1, -1)"), "{source}");
}

#[test]
fn reads_that_are_not_neighbours_are_fetched_before_the_loop() {
    let (notes, source) = lower(
        "program g
  implicit none
  integer, parameter :: n = 20
  integer :: i, perm(n), ia(n), ib(2*n), idx(n)
  real :: rb(n), rc(n)
!HPF$ DISTRIBUTE (BLOCK) :: ia, ib, rb
!HPF$ ALIGN idx(I) WITH ia(I)
!HPF$ DISTRIBUTE rc(CYCLIC(3))
  do i = 1, n
    ia(i) = ib(2*i) + ib(i)
  end do
  do i = n, 1, -1
    rb(i) = rc(n + 1 - i)
  end do
  do i = 1, n
    ia(i) = ib(idx(i)) + ib(perm(i))
  end do
  do i = 1, n / 2 + 1
    rb(i) = rb(n + 1 - i)
  end do
  do i = 1, n
    ia(i) = ib(ib(2*i))
  end do
  do i = 1, n / 2
    rb(i) = rb(n + 1 - i)
  end do
end program g
",
    );
    // A loop that writes what it reads so (run element by element, it
    // would fetch by an all-to-all in every iteration), and a fetch inside
    // a fetched subscript, keep the rank-0 path. The last loop reads only
    // elements it never writes (11..20 while writing 1..10): fetched.
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(notes[0].starts_with("18: runs on one process: the distributed subscript of rb is not"), "{notes:?}");
    assert!(
        notes[0].ends_with("an element assignment of its body would fetch by an all-to-all in every iteration"),
        "{notes:?}"
    );
    assert!(
        notes[1].starts_with("21: runs on one process: a read that is not a neighbour's holds another"),
        "{notes:?}"
    );
    assert!(source.contains("    hpf_gi_1((i - hpf_lo) / (1) + 1) = 2*i\n"), "{source}");
    // IB is cut in other blocks than IA (40 elements, not 20): IB(I) is
    // fetched too, in the same exchange as IB(2*I).
    assert!(source.contains("    hpf_gi_1(1 * hpf_n + (i - hpf_lo) / (1) + 1) = i\n"), "{source}");
    assert!(
        source
            .contains("    ia(i) = hpf_gv_1((i - hpf_lo) / (1) + 1) + hpf_gv_1(1 * hpf_n + (i - hpf_lo) / (1) + 1)\n"),
        "{source}"
    );
    assert!(source.contains("    hpf_gi_1((i - hpf_lo) / (-1) + 1) = n + 1 - i\n"), "{source}");
    assert!(source.contains("call hpf_remote_read_r4(rc, hpf_d_rc, hpf_gi_1, hpf_gv_1)"), "{source}");
    assert!(source.contains("    hpf_gi_1((i - hpf_lo) / (1) + 1) = idx(i)\n"), "{source}");
    assert!(source.contains("    hpf_gi_1(1 * hpf_n + (i - hpf_lo) / (1) + 1) = perm(i)\n"), "{source}");
    assert!(!source.contains("hpf_gi_2"), "{source}");
    assert!(source.contains("call hpf_remote_read_r4(rb, hpf_d_rb, hpf_gi_1, hpf_gv_1)"), "{source}");
}

#[test]
fn strided_cyclic_alignments_are_refused_at_the_align() {
    let text = "program c
  real :: a(8)
!HPF$ TEMPLATE T(16)
!HPF$ DISTRIBUTE T(CYCLIC)
!HPF$ ALIGN A(I) WITH T(2*I)
  a = 0.0
end program c
";
    let analysis = analysis::analyze(text, SourceForm::Free, ModelConfig { number_of_processors: None });
    let errors = crate::lower(&analysis, text).expect_err("refused");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].message.contains("stride 2 with a CYCLIC template dimension"), "{errors:?}");
    assert_eq!(&text[errors[0].range.to_range()].lines().next(), &Some("!HPF$ ALIGN A(I) WITH T(2*I)"));
}

const GRID: &str = "program g
  implicit none
  integer, parameter :: n = 12, m = 10
  real :: a(n, m), b(n, m), s
  integer :: w(0:n+1, m, 3), i, j, l
!HPF$ PROCESSORS P(2, 2)
!HPF$ DISTRIBUTE (BLOCK, BLOCK) ONTO P :: A, B
!HPF$ DISTRIBUTE W(BLOCK, BLOCK(5), *) ONTO P
";

fn grid_program(body: &str) -> String {
    format!("{GRID}{body}end program g\n")
}

#[test]
fn block_block_nests_fetch_their_corners_and_run_their_box() {
    let (notes, source) = lower(&grid_program(
        "  a = 1.0
  b = a
  a(1, 1) = 0.0
  do j = 2, m - 1
    do i = 2, n - 1
      b(i, j) = a(i-1, j-1) + a(i+1, j+1) + a(i, j)
    end do
  end do
  forall (i = 1:n, j = 2:m:2) a(i, j) = b(i, j-1) * a(i, j)
  do l = 1, 3
    do i = 1, n
      do j = 1, m
        w(i, j, l) = l
      end do
    end do
  end do
  a(2:n:3, 4) = b(1:n-1:3, 5) + 1.0
  print *, a(3, 4), count(a > 0.0), maxval(b(2:n, :) - a(1:n-1, :))
",
    ));
    assert_eq!(notes, Vec::<String>::new());
    // Descriptors along both axes of the grid, boxes with shadows in both dimensions.
    assert!(source.contains("hpf_d_a(2) = hpf_make_grid_desc(1, 10, 0, 1, 10, 0, 0, 2, 2, 2)"), "{source}");
    assert!(source.contains("hpf_d_w(2) = hpf_make_grid_desc(1, 10, 0, 1, 10, 5, 0, 2, 2, 2)"), "{source}");
    assert!(source.contains("call hpf_alloc_r4_212(a, hpf_d_a, [1, 1], [1, 1], [1, 1], [12, 10])"), "{source}");
    assert!(source.contains("call hpf_alloc_i4_312(w, hpf_d_w, [0, 0], [0, 0], [0, 1, 1], [13, 10, 3])"), "{source}");
    // Whole arrays on the box, the element by its owner.
    assert!(source.contains("b(hpf_bl(1):hpf_bh(1),hpf_bl(2):hpf_bh(2)) = a(hpf_bl(1):hpf_bh(1),hpf_bl(2):hpf_bh(2))"));
    assert!(source.contains("if (hpf_owns(hpf_d_a(1), 1) .and. hpf_owns(hpf_d_a(2), 1)) then"), "{source}");
    // One box per distance the nest's iterations read at (the two diagonal
    // corners, not the box around them), then the local iterations.
    assert!(source.contains("call hpf_local_bounds(hpf_d_b(1), 0, (2), (n - 1), 1, hpf_lo, hpf_hi)\n  call hpf_local_bounds(hpf_d_b(2), 0, (2), (m - 1), 1, hpf_lo2, hpf_hi2)\n"), "{source}");
    assert!(source.contains(
        "  call hpf_need_span(hpf_lo, hpf_hi, 1, -1, -1, hpf_nl(1, 1), hpf_nh(1, 1))\n  call hpf_need_span(hpf_lo2, hpf_hi2, 1, -1, -1, hpf_nl(2, 1), hpf_nh(2, 1))\n  call hpf_need_span(hpf_lo, hpf_hi, 1, 1, 1, hpf_nl(1, 2), hpf_nh(1, 2))\n  call hpf_need_span(hpf_lo2, hpf_hi2, 1, 1, 1, hpf_nl(2, 2), hpf_nh(2, 2))\n  call hpf_fetch_r4_212(a, hpf_d_a, hpf_nl(:, 1:2), hpf_nh(:, 1:2), hpf_na(:, 1:2), hpf_ns(:, 1:2))"
    ), "{source}");
    // A read off along one dimension only: the strip along it, no corners,
    // every other column of it (the FORALL's step along j is 2).
    assert!(source.contains(
        "  call hpf_need_span(hpf_lo, hpf_hi, 1, 0, 0, hpf_nl(1, 1), hpf_nh(1, 1))\n  call hpf_need_span(hpf_lo2, hpf_hi2, 2, -1, -1, hpf_nl(2, 1), hpf_nh(2, 1))\n  hpf_na(2, 1) = hpf_lo2 + (-1)\n  hpf_ns(2, 1) = 2\n  call hpf_fetch_r4_212(b, hpf_d_b, hpf_nl(:, 1:1), hpf_nh(:, 1:1), hpf_na(:, 1:1), hpf_ns(:, 1:1))"
    ), "{source}");
    assert!(source.contains(
        "call hpf_local_bounds(hpf_d_b(1), 0, (2), (n - 1), 1, hpf_lo, hpf_hi)\n    do i = hpf_lo, hpf_hi, 1\n"
    ));
    assert!(source.contains("forall (i = hpf_lo:hpf_hi:1, j = hpf_lo2:hpf_hi2:2) a(i, j) = b(i, j-1) * a(i, j)"));
    // The rank-3 array: its third dimension is local, its loop runs whole.
    assert!(
        source.contains("  do l = 1, 3\ncall hpf_local_bounds(hpf_d_w(1), 0, (1), (n), 1, hpf_lo, hpf_hi)"),
        "{source}"
    );
    // A section, then an element from its owner and reductions on the boxes.
    assert!(
        source.contains(
            "  if (hpf_owns(hpf_d_a(2), 4)) then\n  a(hpf_lo:hpf_hi:3, 4) = b(hpf_lo+(-1):hpf_hi+(-1):3, 5) + 1.0\n"
        ),
        "{source}"
    );
    assert!(source.contains("hpf_owner(hpf_d_a(1), 3) + hpf_owner(hpf_d_a(2), 4) * hpf_np(hpf_d_a(1))"), "{source}");
    assert!(source.contains("= count(a(hpf_lo:hpf_hi:1,hpf_lo2:hpf_hi2:1) > 0.0)"), "{source}");
    assert!(
        source.contains(
            "= maxval(b(hpf_lo:hpf_hi:1, hpf_lo2:hpf_hi2:1) - a(hpf_lo+(-1):hpf_hi+(-1):1, hpf_lo2:hpf_hi2:1))"
        ),
        "{source}"
    );
    assert!(!source.contains("hpf_gather"), "{source}");
}

#[test]
fn what_a_grid_cannot_run_in_parallel_runs_on_rank_0() {
    let (notes, source) = lower(&grid_program(
        "  do j = 2, m
    do i = 1, n
      a(i, j) = a(i, j-1) + 1.0
    end do
  end do
  a(2:n, 1) = b(1, 2:m)
  s = sum(b)
  print *, a(3, 4), sum(a)
",
    ));
    assert_eq!(
        notes,
        [
            "9: runs on one process: it reads its home a at other elements than it writes (a dependence may cross processes), and an element assignment of its body would fetch by an all-to-all in every iteration",
            "14: runs on one process: it reads one element of b along a distributed dimension",
        ]
    );
    // The floating-point sum of a grid array passes its running value from
    // owner to owner in the sequential order.
    assert!(source.contains("call hpf_pass_r4(hpf_r"), "{source}");
    assert!(source.contains("call hpf_gather_r4_212(a, hpf_d_a, hpf_g_a, [1, 1], [12, 10])"), "{source}");
    assert!(source.contains("call hpf_scatter_r4_212(hpf_g_a, hpf_d_a, a)"), "{source}");
}

#[test]
fn cyclic_grids_run_owner_local_work_course_by_course() {
    let text = "program c
  implicit none
  integer, parameter :: n = 9, m = 6
  integer :: a(n, m), b(n, m), i, j
!HPF$ PROCESSORS P(2, 2)
!HPF$ DISTRIBUTE (CYCLIC(2), BLOCK) ONTO P :: A, B
  a = 0
  do j = 1, m
    do i = n, 1, -1
      a(i, j) = b(i, j) + i
    end do
  end do
  forall (i = 1:n, j = 1:m) b(i, j) = a(i, j) * 2
  a(3, 4) = 7
  do j = 1, m
    do i = 1, n - 1
      a(i, j) = b(i + 1, j)
    end do
  end do
  a(1:n, 2) = 0
  print *, sum(a), a(3, 4)
  print *, maxval(b(1:4, :))
end program c
";
    let (notes, source) = lower(text);
    assert_eq!(
        notes,
        [
            "15: runs on every process: each assignment of this nest runs on the owner of its left side, after fetching what b(i + 1,j) read(s) by one all-to-all per reference (inspector/executor)",
            "20: runs on one process: a is distributed CYCLIC, and only whole arrays laid out alike are assigned in parallel on such arrays",
        ]
    );
    assert!(source.contains("hpf_d_a(1) = hpf_make_grid_desc(1, 9, 0, 1, 9, 2, 1, 1, 2, 2)"), "{source}");
    assert!(source.contains("hpf_d_a(2) = hpf_make_grid_desc(1, 6, 0, 1, 6, 0, 0, 2, 2, 2)"), "{source}");
    // The loop along the CYCLIC dimension runs course by course, on local positions.
    assert!(source.contains("call hpf_local_bounds(hpf_d_a(2), 0, (1), (m), 1, hpf_lo2, hpf_hi2)\n"), "{source}");
    assert!(
        source.contains(
            "do hpf_c = 0, hpf_courses(hpf_d_a(1)) - 1\ncall hpf_course_bounds(hpf_d_a(1), 0, (n), (1), -1, hpf_c, hpf_lo, hpf_hi)\n    do i = hpf_lo, hpf_hi, -1\n      a(hpf_lx(hpf_d_a(1), i), j) = b(hpf_lx(hpf_d_b(1), i), j) + i\n    end do\nend do\n"
        ),
        "{source}"
    );
    assert!(
        source.contains("  forall (i = hpf_lo:hpf_hi:1, j = hpf_lo2:hpf_hi2:1) b(hpf_lx(hpf_d_b(1), i), j) = a(hpf_lx(hpf_d_a(1), i), j) * 2\n  end do\n"),
        "{source}"
    );
    assert!(
        source.contains(
            "  if (hpf_owns(hpf_d_a(1), 3) .and. hpf_owns(hpf_d_a(2), 4)) then\n  a(hpf_lx(hpf_d_a(1), 3), 4) = 7\n"
        ),
        "{source}"
    );
    // Whole arrays on each process's box; a section is reduced on rank 0.
    assert!(source.contains("  hpf_r1 = sum(a(hpf_bl(1):hpf_bh(1),hpf_bl(2):hpf_bh(2)))\n"), "{source}");
    assert!(source.contains("hpf_r2 = a(hpf_lx(hpf_d_a(1), 3), 4)\n"), "{source}");
    assert!(source.contains("maxval(hpf_g_b(1:4, :))"), "{source}");
    assert!(!source.contains("hpf_fetch"), "{source}");
}

/// A directive that maps several arrays the backend refuses is reported
/// once at its line, not once per array.
#[test]
fn a_refused_directive_is_reported_once() {
    let text = "program c
  implicit none
  integer :: a(4), b(4), c(4), k
!HPF$ DISTRIBUTE (CYCLIC(K)) :: A, B, C
  k = 2
  a = 0
  b = 0
  c = 0
  print *, sum(a + b + c)
end program c
";
    let analysis = analysis::analyze(text, SourceForm::Free, ModelConfig { number_of_processors: None });
    let errors = crate::lower(&analysis, text).expect_err("a block size of no constant value is refused");
    let index = LineIndex::new(text);
    let errors: Vec<String> =
        errors.iter().map(|it| format!("{}: {}", index.line_col(text, it.range.start).0 + 1, it.message)).collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].starts_with("4: the block size of this distribution is not a constant"), "{errors:?}");
}

/// Arrays distributed in three dimensions are cut in two of them over a
/// 2-D grid, the first kept whole on every process, which a note says once
/// per directive; `--stats` has no prediction for their loops.
#[test]
fn three_distributed_dimensions_are_cut_in_two() {
    let text = "program c
  implicit none
  integer :: a(4, 6, 8), b(4, 6, 8), i, j, k
!HPF$ PROCESSORS P(2, 2, 2)
!HPF$ DISTRIBUTE (BLOCK, CYCLIC, BLOCK) ONTO P :: A, B
  b = 1
  do k = 1, 8
    do j = 1, 6
      do i = 1, 4
        a(i, j, k) = b(i, j, k) + i * j * k
      end do
    end do
  end do
  print *, sum(a)
end program c
";
    let (notes, source) = lower(text);
    assert_eq!(
        notes,
        ["5: the MPI backend distributes two dimensions at most: this distribution's dimension 1 is kept whole on every process, the other two are cut over a 2-D grid of the processes (`--stats` has no prediction for loops on such arrays)"]
    );
    assert!(source.contains("call hpf_alloc_i4_323(a, "), "{source}");
    assert!(source.contains("call hpf_stat_report("), "{source}");
}

/// A `(*, BLOCK)` stencil fetches of its shadow columns only the rows its
/// off-cell reads reach (1..n, not 0..n+1); a read at a subscript that is
/// no loop index with constant bounds takes the whole column.
#[test]
fn star_block_halos_carry_only_the_rows_read_there() {
    let (notes, source) = lower(
        "program q
  implicit none
  integer, parameter :: n = 8
  real :: u(0:n+1, 0:n+1), v(0:n+1, 0:n+1), w(0:n+1, 0:n+1)
  integer :: i, j, m
!HPF$ TEMPLATE T(0:N+1, 0:N+1)
!HPF$ DISTRIBUTE T(*, BLOCK)
!HPF$ ALIGN (I, J) WITH T(I, J) :: U, V, W
  m = 3
  u = 1.0
  w = 2.0
  do j = 1, n
    do i = 1, n
      v(i, j) = u(i-1, j) + u(i+1, j) + u(i, j-1) + u(i, j+1) + w(m, j+1)
    end do
  end do
  print *, sum(v)
end program q
",
    );
    assert_eq!(notes, Vec::<String>::new());
    assert!(
        source.contains(
            "call hpf_fetch_part_r4_22(u, hpf_d_u, min(hpf_lo, hpf_hi) + (-1), max(hpf_lo, hpf_hi) + (1), [1, lbound(u, 2)], [8, ubound(u, 2)])"
        ),
        "{source}"
    );
    assert!(
        source.contains("call hpf_fetch_r4_22(w, hpf_d_w, min(hpf_lo, hpf_hi) + (1), max(hpf_lo, hpf_hi) + (1))"),
        "{source}"
    );
}

#[test]
fn subroutines_that_take_the_actuals_mapping_run_on_every_process() {
    let subroutines = "subroutine bump(x, m)
  integer, intent(in) :: m
  integer :: x(m)
!HPF$ INHERIT X
  x = x + 1
end subroutine bump
subroutine halve(x, m)
  integer, intent(in) :: m
  real :: x(0:m+1)
!HPF$ DISTRIBUTE X(BLOCK)
  integer :: i
  do i = 1, m
    x(i) = 0.5 * (x(i-1) + x(i+1))
  end do
end subroutine halve
subroutine spread(x, m)
  integer, intent(in) :: m
  real :: x(0:m+1)
!HPF$ DISTRIBUTE X(CYCLIC)
  integer :: i
  do i = 0, m + 1
    x(i) = x(i) + real(i)
  end do
end subroutine spread
";
    let main_lines = program("").lines().count();
    let (notes, source) = lower(&format!(
        "{}{subroutines}",
        program("  call bump(k, n)\n  call halve(u, n)\n  call bump(k(1:10), 10)\n  call spread(un, n)\n")
    ));
    // All run in parallel: the section and the CYCLIC dummy through a
    // temporary (`call_remap.rs`); a loop of a subroutine whose dependence
    // crosses the processes runs as a pipeline (`pipeline.rs`).
    assert_eq!(
        notes,
        ["26: runs as a pipeline (one process after the other): each process receives the last 1 element(s) of x along its distributed dimension from the process before it, computes its own and sends its last ones on"]
    );
    // The section keeps its place on T (nothing moves), INTENT(INOUT): copied back.
    assert!(source.contains("  hpf_d_hpf_t1 = hpf_make_desc(1, 10, 0, 0, 21, 0, 0)\n"), "{source}");
    assert!(source.contains("  call hpf_copy_in_i4(k, hpf_d_k, 1, 1, hpf_t1, hpf_d_hpf_t1)\n  call hpf_p3_bump(hpf_t1, 10, &\n    hpf_d_hpf_t1)\n  call hpf_copy_out_i4(hpf_t1, hpf_d_hpf_t1, k, hpf_d_k, 1, 10, 1)\n  end block\n"), "{source}");
    // The CYCLIC dummy over its own bounds 0:N+1.
    assert!(source.contains("  hpf_d_hpf_t1 = hpf_make_desc(0, 21, 0, 0, 21, 1, 1)\n"), "{source}");
    assert!(source.contains("  call hpf_copy_out_r4(hpf_t1, hpf_d_hpf_t1, un, hpf_d_un, 0, 21, 1)\n"), "{source}");
    assert!(source.contains("  call hpf_p1_bump(k, n, &\n    hpf_d_k)\n"), "{source}");
    assert!(source.contains("  call hpf_p2_halve(u, n, &\n    hpf_d_u)\n"), "{source}");
    // The copies live in a module the program uses; the subroutines stay as they are.
    assert!(source.contains("module hpf_procedures\ncontains\n"), "{source}");
    assert!(source.contains("  use hpf_runtime\n  use hpf_procedures\n"), "{source}");
    assert!(source.contains("  subroutine hpf_p2_halve(x, m, hpf_d_x)\n  use hpf_runtime\n"), "{source}");
    assert!(source.contains("  real, allocatable :: x(:), hpf_g_x(:)\n  type(hpf_desc) :: hpf_d_x\n"), "{source}");
    assert!(source.contains("call hpf_fetch_r4_11(x, hpf_d_x, hpf_pl_a - 0, hpf_pl_b + 1)"), "{source}");
    assert!(source.contains("\nsubroutine halve(x, m)"), "{source}");
    // The actual's shadow area holds what the copy fetches.
    assert!(source.contains("call hpf_alloc_bounds(hpf_d_u, 1, 1, hpf_lo, hpf_hi)"), "{source}");
    // Inside a copy, a call runs in parallel too; a copy calling itself runs it on rank 0.
    let recursive = "recursive subroutine twice(x, m, depth)
  integer, intent(in) :: m, depth
  integer :: x(m)
!HPF$ INHERIT X
  x = 2 * x
  if (depth > 0) call twice(x, m, depth - 1)
  call bump(x, m)
end subroutine twice
";
    let (notes, source) = lower(&format!("{}{subroutines}{recursive}", program("  call twice(k, n, 2)\n")));
    assert!(source.contains("  call hpf_p1_bump(x, m, &\n    hpf_d_x)\n"), "{source}");
    assert!(source.contains("call twice(hpf_g_x, m, depth - 1)"), "{source}");
    // (The recursive call in the IF runs on rank 0, which its note says.)
    let if_line = main_lines + 1 + subroutines.lines().count() + 6;
    assert_eq!(
        notes,
        [format!(
            "{}: runs on one process: subroutines run on rank 0 on gathered copies of distributed arguments when they call themselves (`twice` is being lowered)",
            if_line
        )]
    );
}

/// Actuals copied into a temporary laid out as their dummy: a strided
/// section keeps its place on the template (stride and offset composed),
/// an INTENT(IN) dummy is not copied back, a 2-D array is copied with
/// three indices per element; an element, a section with bounds known only
/// at run time and a labelled CALL keep the rank-0 path with their reasons.
#[test]
fn actuals_laid_out_otherwise_than_their_dummies_are_copied_in_and_out() {
    let subroutines = "subroutine total(x, m, t)
  integer, intent(in) :: m
  integer, intent(in) :: x(m)
  integer, intent(out) :: t
!HPF$ DISTRIBUTE X(CYCLIC(2))
  t = sum(x)
end subroutine total
subroutine bump(x, m)
  integer, intent(in) :: m
  integer :: x(m)
  integer :: i
  do i = 1, m
    x(i) = x(i) + i
  end do
end subroutine bump
subroutine cols(g, m)
  integer, intent(in) :: m
  real :: g(m, m)
!HPF$ DISTRIBUTE G(*, BLOCK)
  g = 2.0 * g
end subroutine cols
";
    let header = "program q
  implicit none
  integer, parameter :: n = 20
  integer :: k(n), t, j
  real :: g(n, n)
!HPF$ DISTRIBUTE K(BLOCK)
!HPF$ DISTRIBUTE G(BLOCK, *)
  k = 1
  g = 1.0
";
    let body = "  call total(k, n, t)
  call bump(k(19:3:-2), 9)
  call bump(k(2), 1)
  call bump(k(1:t), 5)
  call cols(g, n)
10 call bump(k(1:5), 5)
  j = t
end program q
";
    let (notes, source) = lower(&format!("{header}{body}{subroutines}"));
    let why = "runs on one process: subroutines run on rank 0 on gathered copies of distributed arguments when";
    assert_eq!(
        notes,
        [
            format!("12: {why} an element, an expression or a section of k is passed (whole arrays and sections of rank-1 arrays with constant bounds run in parallel)"),
            format!("13: {why} an element, an expression or a section of k is passed (whole arrays and sections of rank-1 arrays with constant bounds run in parallel)"),
            format!("15: {why} its actuals need copying and the CALL has a label"),
        ]
    );
    // BLOCK to CYCLIC(2), INTENT(IN): copied in, not back.
    assert!(source.contains("  hpf_d_hpf_t1 = hpf_make_desc(1, 20, 0, 1, 20, 2, 1)\n"), "{source}");
    assert!(source.contains("  call hpf_copy_in_i4(k, hpf_d_k, 1, 1, hpf_t1, hpf_d_hpf_t1)\n  call hpf_p1_total(hpf_t1, n, t, &\n    hpf_d_hpf_t1)\n  end block\n"), "{source}");
    // K(19:3:-2) under a dummy without a mapping directive: element i on cell 21 - 2 * i.
    assert!(
        source.contains("  hpf_d_hpf_t1 = hpf_make_desc(1, 9, 21, 1, 20, 0, 0)\n  hpf_d_hpf_t1%s = -2\n"),
        "{source}"
    );
    assert!(source.contains("  call hpf_copy_out_i4(hpf_t1, hpf_d_hpf_t1, k, hpf_d_k, 19, 3, -2)\n"), "{source}");
    // (BLOCK, *) to (*, BLOCK): the temporary is cut along its second dimension.
    assert!(source.contains("  allocate (hpf_t1(1:20, hpf_lo:hpf_hi))\n  call hpf_copy_nd_r4(g, lbound(g), ubound(g), [hpf_d_g], [1], &\n    hpf_t1, lbound(hpf_t1), ubound(hpf_t1), [hpf_d_hpf_t1], [2])\n"), "{source}");
    // The runtime brings the copies, and the all-to-all they call.
    let runtime = crate::runtime::runtime_for(&source);
    assert!(runtime.contains("subroutine hpf_copy_in_i4(") && runtime.contains("subroutine hpf_remote_read_i4("));
}

#[test]
fn copies_of_module_procedures_stay_in_their_module() {
    let text = "module m
contains
  subroutine scale(y, len, f)
    integer, intent(in) :: len
    real, intent(inout) :: y(len)
    real, intent(in) :: f
!HPF$ INHERIT Y
    y = f * y
  end subroutine scale
end module m
program p
  use m, only: scale
  implicit none
  integer, parameter :: n = 16
  real :: a(n)
!HPF$ DISTRIBUTE A(BLOCK)
  a = 1.0
  call scale(a, n, 2.0)
  print *, sum(a)
end program p
";
    let (notes, source) = lower(text);
    assert_eq!(notes, Vec::<String>::new());
    let copy = source.find("  subroutine hpf_p1_scale(y, len, f, hpf_d_y)").expect(&source);
    assert!(source.find("  end subroutine scale").unwrap() < copy, "{source}");
    assert!(copy < source.find("end module m").unwrap(), "{source}");
    assert!(source.contains("  use hpf_runtime\n  use m, only: hpf_p1_scale\n  use m, only: scale\n"), "{source}");
    assert!(!source.contains("module hpf_procedures"), "{source}");
}

#[test]
fn subroutines_with_saved_state_or_branches_keep_the_rank_0_path() {
    let subroutines = "subroutine counted(x, m)
  integer, intent(in) :: m
  integer :: x(m)
!HPF$ INHERIT X
  integer :: calls = 0
  calls = calls + 1
  x = x + calls
end subroutine counted
subroutine arith(x, m)
  integer m
  integer x(m)
!HPF$ INHERIT X
  x = x - 1
  if (m - 5) 10, 20, 20
10 x = x + 100
20 continue
end subroutine arith
subroutine fixed(x, m)
  integer m, k
  integer x(m)
  parameter (k = 3)
!HPF$ INHERIT X
  x = x * k
end subroutine fixed
";
    let (notes, source) =
        lower(&format!("{}{subroutines}", program("  call counted(k, n)\n  call arith(k, n)\n  call fixed(k, n)\n")));
    let main_lines = program("").lines().count();
    // A copy would keep SAVEd variables of its own; an arithmetic IF branches.
    assert_eq!(
        notes,
        [
            format!("{}: runs on one process: subroutines run on rank 0 on gathered copies of distributed arguments when the subroutine has SAVEd variables (SAVE, DATA or an initialisation)", main_lines),
            format!("{}: runs on one process: subroutines run on rank 0 on gathered copies of distributed arguments when its body branches (`if`)", main_lines + 1),
        ]
    );
    assert!(source.contains("  call hpf_p1_fixed(k, n, &\n    hpf_d_k)\n"), "{source}");
}

#[test]
fn a_copy_runs_its_statement_without_parallel_form_on_rank_0() {
    // The copy gathers for one statement (a WHERE whose second assignment reads
    // other processes' elements of what its first one assigns): that
    // statement alone runs on rank 0, the loop and the call on every process.
    let (notes, source) = lower(
        "program d
  implicit none
  integer, parameter :: n = 12
  integer :: k(n), step, total
!HPF$ DISTRIBUTE K(CYCLIC)
  k = 1
  do step = 1, 3
    call count_up(k, n, total)
  end do
  print *, total
end program d
subroutine count_up(c, len, total)
  integer, intent(in) :: len
  integer :: c(len), total
!HPF$ INHERIT C
  integer :: i
  do i = 1, len
    c(i) = c(i) + i
  end do
  where (c(1:len-1) > 0)
    c(2:len) = 1
    c(2:len) = c(1:len-1) + 1
  end where
  total = sum(c) + maxval(c)
end subroutine count_up
",
    );
    assert_eq!(
        notes,
        ["20: runs on one process: it is not an owner-computes assignment: it reads other processes' elements of c, which an assignment before it in the construct assigns"]
    );
    assert!(source.contains("call hpf_p1_count_up(k, n, total"), "{source}");
    assert_eq!(source.matches("call hpf_gather").count(), 1, "{source}");
}

/// A WHERE construct whose masks and assignments line up, element for
/// element, runs on every process's part; one that reads a neighbour's
/// element (which an earlier assignment of it may have changed) or a
/// reduction of the whole array stays on rank 0, with a note.
#[test]
fn where_constructs_run_on_each_process_part_when_they_read_only_their_own_elements() {
    let (notes, source) = lower(&program(
        "  u = 1.0
  un = 2.0
  k = 3
  where (u > 0.5)
    un = u * 2.0
    u = un - 1.0
  elsewhere (u < -1.0)
    un = 0.0
  elsewhere
    u = -u
  end where
  where (k > 2) k = k + 1
  where (u(1:n) > 0.0) un(1:n) = u(1:n)
  where (u(2:n) > 0.0) un(1:n-1) = u(2:n)
  where (u > sum(u)) un = 1.0
  where (u(1:n) > 0.0)
    un(1:n) = u(2:n+1)
    u(1:n) = un(0:n-1)
  end where
  print *, u(1), un(2), k(3)
",
    ));
    // A WHERE of one assignment evaluates its mask and right side before
    // it assigns: the neighbours' elements are fetched before it. One of two
    // assignments, the second reading what the first sets, stays on rank 0.
    // The SUM in a mask is computed first, by every process.
    assert_eq!(
        notes,
        [
            "25: runs on one process: it is not an owner-computes assignment: it reads other processes' elements of un, which an assignment before it in the construct assigns",
        ]
    );
    assert!(
        source.contains(
            "call hpf_fetch_r4_11(u, hpf_d_u, min(hpf_lo, hpf_hi) + (1), max(hpf_lo, hpf_hi) + (1))\n  else\n    call hpf_fetch_r4_11(u, hpf_d_u, 1, 0)\n  end if\n  where (u(hpf_lo+(1):hpf_hi+(1):1) > 0.0) un(hpf_lo:hpf_hi:1) = u(hpf_lo+(1):hpf_hi+(1):1)"
        ),
        "{source}"
    );
    assert!(
        source.contains("  where (u(hpf_lo:hpf_hi:1) > 0.5)\n    un(hpf_lo:hpf_hi:1) = u(hpf_lo:hpf_hi:1) * 2.0\n"),
        "{source}"
    );
    assert!(source.contains("  elsewhere (u(hpf_lo:hpf_hi:1) < -1.0)\n"), "{source}");
    assert!(source.contains("where (k(hpf_lo:hpf_hi:1) > 2) k(hpf_lo:hpf_hi:1) = k(hpf_lo:hpf_hi:1) + 1"), "{source}");
    assert!(source.contains("where (u(hpf_lo:hpf_hi:1) > 0.0) un(hpf_lo:hpf_hi:1) = u(hpf_lo:hpf_hi:1)"), "{source}");
}

/// A floating-point SUM of a whole `(*, BLOCK)` array runs along the chain
/// of processes, column by column (each holds one run of the sequential
/// order); in a `(BLOCK, *)` one, whose order interleaves the processes, and
/// in a section cutting the columns, the running value goes from owner to
/// owner element by element in the sequential order.
#[test]
fn floating_point_sums_of_arrays_distributed_by_columns_follow_the_chain() {
    let (notes, source) = lower(
        "program sums
  implicit none
  real :: a(4, 6), b(4, 6), s, t, r
!HPF$ DISTRIBUTE A(*, BLOCK)
!HPF$ DISTRIBUTE B(BLOCK, *)
  a = 1.5
  b = 2.5
  s = sum(a)
  t = sum(b)
  r = sum(a(2:3, :))
  print *, s, t, r
end program sums
",
    );
    assert!(notes.is_empty(), "{notes:?}");
    assert!(source.contains("  do hpf_j1 = 1, 4\n    hpf_r2 = hpf_r2 + a(hpf_j1, hpf_i)\n"), "{source}");
    assert!(source.contains("call hpf_chain_send_r4(hpf_r2, 1)"), "{source}");
    // sum(b): rows cross the processes, columns outermost.
    let ordered = "  hpf_r7 = 0
  hpf_cprev = -1
  do hpf_q2 = 1, 6, 1
  do hpf_q1 = 1, 4, 1
    hpf_cown = hpf_owner(hpf_d_b, hpf_q1)
    if (hpf_cown /= hpf_cprev) then
      if (hpf_cprev >= 0) call hpf_pass_r4(hpf_r7, hpf_cprev, hpf_cown)
      hpf_cprev = hpf_cown
    end if
    if (hpf_cown == hpf_rank) hpf_r7 = hpf_r7 + (b(hpf_q1, hpf_q2))
  end do
  end do
  if (hpf_cprev >= 0) call MPI_Bcast(hpf_r7, 1, MPI_REAL, hpf_cprev, MPI_COMM_WORLD)
";
    assert!(source.contains(ordered), "{source}");
    assert!(source.contains("hpf_r8 = hpf_r8 + (a(hpf_q1, hpf_q2))"), "{source}");
    assert!(source.contains("  do hpf_q1 = 2, 3, 1\n"), "{source}");
}

/// Whole columns of a `(*, BLOCK)` array (`:` along the leading dimension,
/// any section of the last) are one run of the sequential order on each
/// process too: the chain runs forwards, or from the last process for a
/// negative step.
#[test]
fn floating_point_sums_of_column_sections_follow_the_chain() {
    let (notes, source) = lower(
        "program sums
  implicit none
  real :: a(4, 6), s, t, r
!HPF$ DISTRIBUTE A(*, BLOCK)
  a = 1.5
  s = sum(a(:, 2:5))
  t = product(a(:, 6:1:-2))
  r = sum(a(1:4, :))
  print *, s, t, r
end program sums
",
    );
    assert!(notes.is_empty(), "{notes:?}");
    assert!(source.contains("call hpf_chain_send_r4(hpf_r2, 1)"), "{source}");
    assert!(source.contains("call hpf_chain_send_r4(hpf_r3, -2)"), "{source}");
}

/// A WHERE on whole columns of `(*, BLOCK)` arrays runs on each process's
/// columns; one on whole arrays of a 2-D grid laid out alike, on each
/// process's box. One that assigns a section of a grid array keeps the
/// rank-0 path and its note.
#[test]
fn where_on_column_blocks_and_on_grids_runs_in_parallel() {
    let (notes, source) = lower(
        "program w
  implicit none
  real :: a(4, 6), b(4, 6), g(4, 6), h(4, 6)
!HPF$ DISTRIBUTE A(*, BLOCK)
!HPF$ ALIGN B(I, J) WITH A(I, J)
!HPF$ DISTRIBUTE G(BLOCK, BLOCK)
!HPF$ ALIGN H(I, J) WITH G(I, J)
  a = 1.5
  g = 2.5
  where (a > 1.0) b = a
  where (g > 1.0) h = g
  where (h > g)
    g = h - 1.0
  elsewhere (h < 0.0)
    h = 0.0
  elsewhere
    g = -g
  end where
  where (g(1:2, :) > 1.0) h(1:2, :) = g(1:2, :)
  print *, b, h
end program w
",
    );
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].starts_with("19: runs on one process") && notes[0].contains("only whole arrays"), "{notes:?}");
    assert!(source.contains("! hpf-ls: owner computes where (a > 1.0)"), "{source}");
    let boxed = |name: &str| format!("{name}(hpf_bl(1):hpf_bh(1),hpf_bl(2):hpf_bh(2))");
    assert!(source.contains(&format!("  where ({} > 1.0) {} = {}\n", boxed("g"), boxed("h"), boxed("g"))), "{source}");
    assert!(source.contains(&format!("  elsewhere ({} < 0.0)\n    {} = 0.0\n", boxed("h"), boxed("h"))), "{source}");
}

const CYCLIC_HEADER: &str = "program c
  implicit none
  integer, parameter :: n = 20
  real :: a(0:n), b(n), x(n), s
  integer :: k(n), m(3, n), i, total
!HPF$ TEMPLATE T(0:N)
!HPF$ DISTRIBUTE T(CYCLIC(3))
!HPF$ ALIGN A(I) WITH T(I)
!HPF$ ALIGN B(I) WITH T(I-1)
!HPF$ ALIGN K(I) WITH T(I)
!HPF$ ALIGN M(*, I) WITH T(I)
!HPF$ DISTRIBUTE X(CYCLIC)
";

fn cyclic_program(body: &str) -> String {
    format!("{CYCLIC_HEADER}{body}end program c\n")
}

/// Array assignments, FORALLs, WHERE constructs and order-free reductions
/// on CYCLIC arrays whose reads lie on the left side's template cells run
/// course by course, each reference at the home's local positions.
#[test]
fn cyclic_sections_run_course_by_course_when_their_reads_are_on_the_same_cells() {
    let (notes, source) = lower(&cyclic_program(
        "  a(2:n:3) = real(k(2:n:3)) + 1.0
  a(n:1:-2) = sqrt(a(n:1:-2)) * b(n+1:2:-2)
  m(2, :) = m(1, :) + 1
  forall (i = 1:n, k(i) > 0) a(i) = b(i+1) - a(i)
  where (k > 3)
    k = k - 3
  elsewhere
    k = 0
  end where
  total = sum(k) + maxval(k(2:n:2), mask=k(2:n:2) > 0)
",
    ));
    assert_eq!(notes, Vec::<String>::new());
    assert!(!source.contains("call hpf_gather"), "{source}");
    assert!(
        source.contains(
            "  do hpf_c = 0, hpf_courses(hpf_d_a) - 1
  call hpf_course_bounds(hpf_d_a, 0, (n), (1), -2, hpf_c, hpf_lo, hpf_hi)
  hpf_hi = hpf_lx(hpf_d_a, hpf_lo) + (hpf_hi - hpf_lo)
  hpf_lo = hpf_lx(hpf_d_a, hpf_lo)
  a(hpf_lo:hpf_hi:-2) = sqrt(a(hpf_lo:hpf_hi:-2)) * b(hpf_lo:hpf_hi:-2)
  end do
"
        ),
        "{source}"
    );
    assert!(source.contains("  m(2, hpf_lo:hpf_hi:1) = m(1, hpf_lo:hpf_hi:1) + 1\n"), "{source}");
    assert!(
        source.contains(
            "  call hpf_course_bounds(hpf_d_a, 0, (1), (n), 1, hpf_c, hpf_lo, hpf_hi)
    block
    integer :: hpf_cs_1, hpf_cs_2, hpf_cs_3
    hpf_cs_1 = hpf_lx(hpf_d_k, hpf_lo + (0)) - hpf_lo
    hpf_cs_2 = hpf_lx(hpf_d_a, hpf_lo + (0)) - hpf_lo
    hpf_cs_3 = hpf_lx(hpf_d_b, hpf_lo + (1)) - hpf_lo
  forall (i = hpf_lo:hpf_hi:1, k(i + hpf_cs_1) > 0) a(i + hpf_cs_2) = b(i + hpf_cs_3) - a(i + hpf_cs_2)
    end block
  end do
"
        ),
        "{source}"
    );
    assert!(
        source.contains("  where (k(hpf_lo:hpf_hi:1) > 3)\n    k(hpf_lo:hpf_hi:1) = k(hpf_lo:hpf_hi:1) - 3\n"),
        "{source}"
    );
    assert!(
        source.contains("  if (hpf_c == 0) then\n    hpf_r2 = maxval(k(hpf_lo:hpf_hi:2), mask=k(hpf_lo:hpf_hi:2) > 0)\n  else\n    hpf_r2 = max(hpf_r2, maxval(k(hpf_lo:hpf_hi:2), mask=k(hpf_lo:hpf_hi:2) > 0))\n"),
        "{source}"
    );
    assert!(
        source.contains("call MPI_Allreduce(MPI_IN_PLACE, hpf_r1, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)"),
        "{source}"
    );
}

/// Floating-point sums, and a WHERE whose left sides are the same indices
/// of arrays on other cells (`b` sits one cell away from `a`) keep the
/// rank-0 path, with a note saying why. Array assignments to one run of
/// elements of a rank-1 array that read off its cells (lines 13, 14 and 16)
/// fetch what they read instead and run course by course, and so does the
/// owner of an element assigned from an element on another cell (line 17),
/// and a WHERE whose mask reads another CYCLIC distribution (line 18).
#[test]
fn cyclic_statements_reading_other_cells_stay_on_rank_0() {
    let (notes, source) = lower(&cyclic_program(
        "  a(2:n) = a(1:n-1)
  a(1:n) = b(1:n)
  forall (i = 2:n) k(i) = k(i-1)
  x = real(k)
  k(5) = k(6)
  where (k(1:n-1) > 0) a(2:n) = 1.0
  s = sum(a)
  where (a(1:n) > 0.0)
    a(1:n) = 1.0
    b(1:n) = 2.0
  end where
",
    ));
    assert_eq!(
        notes,
        [
            "15: runs on every process: each assignment of this FORALL runs on the owner of its left side, after fetching what k(i-1) read(s) by one all-to-all per reference (inspector/executor)",
            "19: runs on one process: it is not an owner-computes assignment: it assigns the replicated variable s from distributed data; a floating-point reduction of the CYCLIC(3) array a keeps its order only on rank 0 (passing the running value from owner to owner would cost a message every 3 elements: gathering costs less)",
            "20: runs on one process: it is not an owner-computes assignment: its left sides are not the same elements",
        ]
    );
    for read in ["r4(a, hpf_d_a", "r4(b, hpf_d_b", "i4(k, hpf_d_k"] {
        assert!(source.contains(&format!("  call hpf_remote_read_{read}, hpf_gi_1, hpf_gv_1)\n")), "{source}");
    }
    assert!(
        source.contains(
            "  x(hpf_lx(hpf_d_x, hpf_lo):hpf_lx(hpf_d_x, hpf_hi):1) = real(hpf_gv_1(hpf_m + 1:hpf_m + hpf_k))\n"
        ),
        "{source}"
    );
    // `k(5) = k(6)`: the owner of k(5) fetches k(6) and stores it at k(5)'s local position.
    assert!(
        source.contains("  forall (hpf_i = hpf_lo:hpf_hi:1) hpf_gi_1((hpf_i - hpf_lo) / (1) + 1) = (6)\n"),
        "{source}"
    );
    assert!(
        source.contains(
            "  if (hpf_owns(hpf_d_k, 5)) then\n  k(hpf_lx(hpf_d_k, 5)) = hpf_gv_1((hpf_i - hpf_lo) / (1) + 1)\n"
        ),
        "{source}"
    );
}

/// An array assignment reading 1-D arrays distributed differently from its
/// left side (another distribution, a reversed alignment, another stride)
/// runs on the left side's owners: each lists the elements its part reads,
/// and one all-to-all of counts, then of indices and of values, per array
/// fetches them before the statement. A CYCLIC left side is assigned
/// course by course from the fetched values.
#[test]
fn sections_distributed_differently_are_fetched_by_one_all_to_all() {
    let text = "program q
  implicit none
  integer, parameter :: n = 16
  real :: a(n), b(n), c(n), r(n)
!HPF$ TEMPLATE T(N)
!HPF$ DISTRIBUTE T(BLOCK)
!HPF$ ALIGN A(I) WITH T(I)
!HPF$ ALIGN R(I) WITH T(N+1-I)
!HPF$ DISTRIBUTE B(CYCLIC)
!HPF$ DISTRIBUTE C(BLOCK(3))
  a(1:n:2) = b(n:1:-2) + c(2:n:2) * 2.0 + b(1:n:2)
  a = r
  a(2:n) = a(n-1:1:-1)
  c = a
  b = a + c
end program q
";
    let (notes, source) = lower(text);
    assert_eq!(notes, Vec::<String>::new());
    assert!(!source.contains("call hpf_gather"), "{source}");
    // Two references to B share one exchange, in two segments of the buffers.
    assert!(source.contains("  allocate (hpf_gi_1(2 * hpf_n), hpf_gv_1(2 * hpf_n))\n"), "{source}");
    assert!(source.contains(
        "  forall (hpf_i = hpf_lo:hpf_hi:2) hpf_gi_1((hpf_i - hpf_lo) / (2) + 1) = (n) + (-2) * ((hpf_i - (1)) / (2))\n"
    ), "{source}");
    assert!(source.contains("  call hpf_remote_read_r4(b, hpf_d_b, hpf_gi_1, hpf_gv_1)\n  call hpf_remote_read_r4(c, hpf_d_c, hpf_gi_2, hpf_gv_2)\n"), "{source}");
    assert!(source.contains(
        "  a(hpf_lo:hpf_hi:2) = hpf_gv_1(1:hpf_n) + hpf_gv_2(1:hpf_n) * 2.0 + hpf_gv_1(1 * hpf_n + 1:1 * hpf_n + hpf_n)\n  end block\n"
    ), "{source}");
    // The array it writes: the old values are fetched before it assigns.
    assert!(
        source.contains(
            "  call hpf_remote_read_r4(a, hpf_d_a, hpf_gi_1, hpf_gv_1)\n  a(hpf_lo:hpf_hi:1) = hpf_gv_1(1:hpf_n)\n"
        ),
        "{source}"
    );
    assert!(source.contains("  c(hpf_lo:hpf_hi:1) = hpf_gv_1(1:hpf_n)\n"), "{source}");
    // The CYCLIC left side: course by course, each a run of local positions.
    assert!(
        source.contains("    forall (hpf_i = hpf_lo:hpf_hi:1) hpf_gi_1(hpf_m + (hpf_i - hpf_lo) / (1) + 1) = 1 + (hpf_i - (1)) / (1)\n"),
        "{source}"
    );
    assert!(
        source.contains("    if (hpf_k > 0) then\n  b(hpf_lx(hpf_d_b, hpf_lo):hpf_lx(hpf_d_b, hpf_hi):1) = hpf_gv_1(hpf_m + 1:hpf_m + hpf_k) + hpf_gv_2(hpf_m + 1:hpf_m + hpf_k)\n"),
        "{source}"
    );
}

/// A FORALL of one index, one assignment and no mask fetches the elements
/// it reads of 1-D arrays distributed differently (and of its home, not at
/// a constant distance) before it; one with a mask or a second assignment
/// (which reads what the first set) takes the distributed fallback
/// (`nest_fetch.rs`): its reads are fetched before each assignment.
#[test]
fn foralls_fetch_elements_of_arrays_distributed_differently() {
    let text = "program q
  implicit none
  integer, parameter :: n = 16
  real :: a(n), b(n)
  integer :: i
!HPF$ DISTRIBUTE A(BLOCK)
!HPF$ DISTRIBUTE B(CYCLIC)
  forall (i = 1:n:2) a(i) = b(n+1-i) + a(n+1-i) + a(i+1)
  forall (i = 1:n, a(i) > 0.0) a(i) = b(n+1-i)
  forall (i = 1:n)
    a(i) = b(i)
    a(i) = a(n+1-i)
  end forall
end program q
";
    let (notes, source) = lower(text);
    assert_eq!(
        notes,
        [
            "9: runs on every process: each assignment of this FORALL runs on the owner of its left side, after fetching what b(n+1-i) read(s) by one all-to-all per reference (inspector/executor)",
            "10: runs on every process: each assignment of this FORALL runs on the owner of its left side, after fetching what b(i), a(n+1-i) read(s) by one all-to-all per reference (inspector/executor)",
        ]
    );
    assert!(source.contains("  forall (i = hpf_lo:hpf_hi:2) hpf_gi_1((i - hpf_lo) / (2) + 1) = (n+1-i)\n"), "{source}");
    assert!(source.contains("  call hpf_remote_read_r4(b, hpf_d_b, hpf_gi_1, hpf_gv_1)\n  call hpf_remote_read_r4(a, hpf_d_a, hpf_gi_2, hpf_gv_2)\n"), "{source}");
    assert!(
        source.contains("  forall (i = hpf_lo:hpf_hi:2) a(i) = hpf_gv_1((i - hpf_lo) / (2) + 1) + hpf_gv_2((i - hpf_lo) / (2) + 1) + a(i+1)\n  end block\n"),
        "{source}"
    );
    // The neighbour A(I+1) comes from the shadow area, fetched first.
    assert!(
        source.contains("call hpf_fetch_r4_11(a, hpf_d_a, min(hpf_lo, hpf_hi) + (1), max(hpf_lo, hpf_hi) + (1))"),
        "{source}"
    );
}

/// An element assignment reading elements of an array aligned otherwise
/// (reversed) gets them from their owners through the inspector/executor:
/// only the owner of the left side's element lists indices.
#[test]
fn element_assignments_fetch_elements_of_arrays_aligned_otherwise() {
    let text = "program q
  implicit none
  integer, parameter :: n = 16
  real :: u(n), r(n)
!HPF$ TEMPLATE T(N)
!HPF$ DISTRIBUTE T(BLOCK)
!HPF$ ALIGN U(I) WITH T(I)
!HPF$ ALIGN R(I) WITH T(N+1-I)
  u(5) = r(7) + u(3)
end program q
";
    let (notes, source) = lower(text);
    assert_eq!(notes, Vec::<String>::new());
    assert!(
        source.contains(
            "  if (hpf_owns(hpf_d_u, 5)) then\n    hpf_lo = 5\n    hpf_hi = hpf_lo\n  else\n    hpf_lo = 1\n    hpf_hi = 0\n  end if\n"
        ),
        "{source}"
    );
    assert!(
        source.contains("  forall (hpf_i = hpf_lo:hpf_hi:1) hpf_gi_1((hpf_i - hpf_lo) / (1) + 1) = (7)\n"),
        "{source}"
    );
    assert!(
        source.contains("  hpf_i = hpf_lo\n  if (hpf_owns(hpf_d_u, 5)) then\n  u(5) = hpf_gv_1((hpf_i - hpf_lo) / (1) + 1) + u(3)\n  end if\n  end block\n"),
        "{source}"
    );
}

/// A FORALL on an array aligned transposed with the one it reads
/// (`ALIGN (I,J) WITH T(J,I)`) reads, axis by axis of the grid, the cells of
/// its own elements up to constant distances: it runs on the owners, the
/// off-cell elements fetched into the shadow areas first.
#[test]
fn transposed_alignments_on_a_grid_read_their_own_cells() {
    let text = "program t
  implicit none
  integer, parameter :: n = 8
  integer :: e(n, n), c(n, n)
  integer :: i, j
!HPF$ PROCESSORS P(2,2)
!HPF$ DISTRIBUTE (BLOCK, BLOCK) ONTO P :: E
!HPF$ ALIGN C(I,J) WITH E(J,I)
  forall (i = 1:n, j = 1:n) c(i, j) = e(j, i)
  forall (i = 2:n, j = 1:n) c(i, j) = e(j, i-1)
end program t
";
    let (notes, source) = lower(text);
    assert_eq!(notes, Vec::<String>::new());
    assert!(!source.contains("hpf_gather"), "{source}");
    assert!(source.contains("call hpf_fetch_i4_212(e, hpf_d_e,"), "{source}");
}

/// A scalar every iteration assigns before it reads it is private: each
/// process computes it for its own iterations. One an iteration may read
/// from an earlier one, or one read after the loop, keeps the nest on rank 0.
#[test]
fn private_scalar_temporaries_run_in_parallel() {
    let (notes, source) = lower(&program(
        "  do i = 1, n
    s = u(i-1) + u(i+1)
    un(i) = s * s
  end do
  do i = 1, n
    total = k(i) + 1
    do step = 1, 3
      total = total * 2
    end do
    k(i) = total
  end do
",
    ));
    assert_eq!(notes, Vec::<String>::new());
    assert!(source.contains("do i = hpf_lo, hpf_hi, 1\n    s = u(i-1) + u(i+1)"), "{source}");
    assert!(
        source.contains("call hpf_fetch_r4_11(u, hpf_d_u, min(hpf_lo, hpf_hi) + (-1), max(hpf_lo, hpf_hi) + (1))"),
        "{source}"
    );
    assert!(!source.contains("hpf_gather"), "{source}");
}

#[test]
fn scalars_carried_across_iterations_are_not_private() {
    let (notes, source) = lower(&program(
        "  s = 0.0
  do i = 1, n
    un(i) = s
    s = u(i)
  end do
  do i = 1, n
    do step = 1, 3
      total = k(i) + step
      un(i) = total
    end do
  end do
  print *, total
  do i = 1, n
    if (u(i) > 0.0) then
      s = u(i)
    end if
    un(i) = s
  end do
",
    ));
    // The first two loops run on every process, statement by statement
    // (each element read is broadcast by its owner); the third on rank 0.
    assert_eq!(
        notes,
        [
            "11: every process runs this loop, each element assignment on its owner, iteration by iteration: it assigns the scalar s, which an iteration may read before it assigns it",
            // (The assignment sits in an inner loop: the note says so all the same.)
            "15: every process runs this loop, each element assignment on its owner, iteration by iteration: it assigns the scalar total, which may be read after the loop, and the last iteration may not assign it (an inner loop does)",
            "22: runs on one process: it assigns the scalar s, which an iteration may read before it assigns it, and a statement of its body runs on rank 0 on gathered copies",
        ]
    );
    assert!(!source.contains("owner computes"), "{source}");
    assert_eq!(source.matches("every process runs this loop").count(), 3, "{source}");
}

/// A private scalar read after the loop, assigned first by every
/// iteration of the distributing loop: the owner of the last iteration
/// broadcasts the value it left.
#[test]
fn a_private_scalar_read_after_the_nest_gets_the_last_iteration_value() {
    let (notes, source) = lower(&program(
        "  do i = 1, n
    total = k(i) + 1
    k(i) = total * total
  end do
  print *, total
",
    ));
    assert_eq!(notes, Vec::<String>::new());
    assert!(source.contains("do i = hpf_lo, hpf_hi, 1\n    total = k(i) + 1"), "{source}");
    assert!(
        source.contains("if (hpf_owns(hpf_d_k, hpf_final((1), (n), 1) - (1) + (0))) hpf_last_owner = hpf_rank"),
        "{source}"
    );
    assert!(
        source.contains(
            "if (hpf_last_owner >= 0) call MPI_Bcast(total, storage_size(total) / 8, MPI_BYTE, hpf_last_owner, MPI_COMM_WORLD)"
        ),
        "{source}"
    );
}

const COLUMNS: &str = "program p
  implicit none
  integer, parameter :: m = 12, n = 10
  real(8) :: u(m, n), f(m, n), c(m), d(m), w(0:m+1), denom
  integer :: i, j
!HPF$ DISTRIBUTE (*, BLOCK) :: u, f
";

fn columns(body: &str) -> String {
    format!("{COLUMNS}{body}end program p\n")
}

/// Replicated work arrays named NEW in the INDEPENDENT of the distributing
/// loop are private: each process solves its own columns with its own copy,
/// and the home is the distributed array the nest writes, not `c`.
#[test]
fn new_work_arrays_of_column_solves_run_on_the_owners() {
    let (notes, source) = lower(&columns(
        "!HPF$ INDEPENDENT, NEW(c, d, denom, i)
  do j = 1, n
    c(1) = 0.5d0
    d(1) = f(1, j)
    do i = 2, m
      denom = 2.0d0 - c(i-1)
      c(i) = 1.0d0 / denom
      d(i) = (f(i, j) + d(i-1)) / denom
    end do
    u(m, j) = d(m)
    do i = m - 1, 1, -1
      u(i, j) = d(i) - c(i) * u(i+1, j)
    end do
  end do
",
    ));
    assert_eq!(notes, Vec::<String>::new());
    assert!(source.contains("call hpf_local_bounds(hpf_d_u, 0, (1), (n), 1, hpf_lo, hpf_hi)"), "{source}");
    assert!(source.contains("do j = hpf_lo, hpf_hi, 1\n    c(1) = 0.5d0"), "{source}");
    assert!(!source.contains("hpf_gather"), "{source}");
    // Of the two loops over i, the later one leaves its final value.
    assert!(
        source.contains("i = hpf_final((2), (m), 1)\n  if (((n) - (1)) * (1) >= 0) i = hpf_final((m - 1), (1), -1)\n"),
        "{source}"
    );
}

/// Without NEW, a work array is private when every element an iteration
/// reads was written earlier in the same iteration: by a loop over a range
/// that holds the elements read, by single elements (reflecting ends), or
/// by the same loop one iteration before after its first element.
#[test]
fn work_arrays_written_before_they_are_read_are_private_without_new() {
    let (notes, source) = lower(&columns(
        "  do j = 1, n
    do i = 1, m
      w(i) = u(i, j)
    end do
    w(0) = w(2)
    w(m+1) = w(m-1)
    do i = 1, m
      f(i, j) = w(i-1) + w(i) + w(i+1)
    end do
  end do
  do j = 1, n
    c(1) = f(1, j)
    do i = 2, m
      c(i) = 0.5d0 * (c(i-1) + f(i, j))
    end do
    do i = m, 1, -1
      u(i, j) = c(i)
    end do
  end do
",
    ));
    assert_eq!(notes, Vec::<String>::new());
    assert_eq!(source.matches("owner computes do j = 1, n").count(), 2, "{source}");
    assert!(!source.contains("hpf_gather"), "{source}");
}

/// A work array an iteration may read before writing it (left from the
/// iteration before, written only under an IF, or an element no write
/// reaches), or one read after the nest, is not private: the nest does not
/// run owner-computes (where the inspector/executor can, every process runs
/// all its iterations, each distributed element assigned by its owner, so
/// the work array stays alike everywhere).
#[test]
fn work_arrays_read_before_written_or_after_the_nest_are_not_private() {
    let not_private = |body: &str, why: &str| {
        let (notes, source) = lower(&columns(body));
        assert!(notes.iter().any(|it| it.contains(why)), "{notes:?}");
        assert!(!source.contains("owner computes do j"), "{source}");
    };
    let before = "it writes the replicated array w, which an iteration may read before it writes it";
    let everywhere = "8: runs on every process: each assignment of this nest runs on the owner of its left side";
    // w(m) is read in the next iteration before it is written.
    not_private(
        "  w = 0.0d0
  do j = 1, n
    do i = 1, m
      u(i, j) = w(i) + f(i, j)
      w(i) = f(i, j)
    end do
  end do
",
        everywhere,
    );
    // Written only when the condition holds (no parallel form at all).
    not_private(
        "  w = 0.0d0
  do j = 1, n
    if (f(1, j) > 0.0d0) w(1) = f(1, j)
    u(1, j) = w(1)
  end do
",
        before,
    );
    // w(0) is never written.
    not_private(
        "  w = 0.0d0
  do j = 1, n
    do i = 1, m
      w(i) = u(i, j)
    end do
    do i = 1, m
      f(i, j) = w(i-1) + w(i)
    end do
  end do
",
        everywhere,
    );
    // NEW, but read after the loop: its values differ from process to process.
    not_private(
        "!HPF$ INDEPENDENT, NEW(w, i)
  do j = 1, n
    do i = 1, m
      w(i) = u(i, j)
    end do
    do i = 1, m
      f(i, j) = 2.0d0 * w(i)
    end do
  end do
  print *, w(1)
",
        everywhere,
    );
}

/// A subroutine solving columns with NEW work arrays, whose coefficient
/// dummy is aligned with the columns of the field dummy as its actual is
/// with the actual field's: every process calls a copy on its own columns,
/// and `kappa(j)` is read where `t(:, j)` lives, not fetched.
#[test]
fn column_solves_in_a_subroutine_with_an_aligned_dummy_run_on_the_owners() {
    let (notes, source) = lower(
        "module solver
  implicit none
  integer, parameter :: m = 8, n = 12
contains
  subroutine solve(t, kappa)
    real(8), intent(inout) :: t(m, n)
    real(8), intent(in) :: kappa(n)
!HPF$ DISTRIBUTE t(*, BLOCK)
!HPF$ ALIGN kappa(j) WITH t(*, j)
    real(8) :: c(m), r
    integer :: i, j
!HPF$ INDEPENDENT, NEW(c, r, i)
    do j = 1, n
      r = kappa(j)
      c(1) = t(1, j)
      do i = 2, m
        c(i) = c(i-1) * r + t(i, j)
      end do
      do i = 1, m
        t(i, j) = c(i)
      end do
    end do
  end subroutine solve
end module solver

program p
  use solver
  implicit none
  real(8) :: u(m, n), k(n)
!HPF$ DISTRIBUTE u(*, BLOCK)
!HPF$ ALIGN k(j) WITH u(*, j)
  u = 1.0d0
  k = 0.5d0
  call solve(u, k)
  print *, sum(u)
end program p
",
    );
    assert_eq!(notes, Vec::<String>::new());
    assert!(source.contains("call hpf_p1_solve(u, k, &"), "{source}");
    assert!(source.contains("do j = hpf_lo, hpf_hi, 1\n      r = kappa(j)"), "{source}");
    assert!(!source.contains("hpf_gather"), "{source}");
    assert!(!source.contains("hpf_remote_read"), "{source}");
}

/// IF statements and constructs inside the distributing loop run on the
/// owner of each iteration; their conditions read local elements or the
/// fetched halo like any other read.
#[test]
fn if_constructs_in_a_nest_run_on_the_owners() {
    let (notes, source) = lower(&program(
        "  do i = 1, n
    if (u(i-1) > u(i+1)) then
      un(i) = u(i-1)
    else if (k(i) > 2) then
      un(i) = 0.0
    else
      un(i) = u(i+1)
    end if
    if (i == 3) un(i) = 7.0
  end do
",
    ));
    assert_eq!(notes, Vec::<String>::new());
    assert!(source.contains("do i = hpf_lo, hpf_hi, 1\n    if (u(i-1) > u(i+1)) then"), "{source}");
    assert!(
        source.contains("call hpf_fetch_r4_11(u, hpf_d_u, min(hpf_lo, hpf_hi) + (-1), max(hpf_lo, hpf_hi) + (1))"),
        "{source}"
    );
    assert!(!source.contains("hpf_gather"), "{source}");
}

/// A STOP every process runs (a replicated condition, or one computed
/// first from distributed data) finalises MPI first: a process that stops
/// without it makes `mpirun` fail the run.
#[test]
fn stops_that_every_process_takes_finalise_mpi_first() {
    let (notes, source) = lower(&program(
        "  total = 3
  if (total > 2) stop
  do step = 1, 3
    if (step == total) then
      error stop 4
    end if
  end do
  if (sum(k) > 0) stop 'done'
  print *, total
",
    ));
    assert_eq!(notes, Vec::<String>::new());
    assert!(source.contains("  if (total > 2) then\n    call hpf_finalize()\n    stop\n  end if\n"), "{source}");
    assert!(source.contains("      call hpf_finalize()\n    error stop 4\n"), "{source}");
    // The message is rank 0's alone.
    assert!(
        source.contains(
            "  if (hpf_b1) then\n    call hpf_finalize()\n    if (hpf_rank /= 0) stop\n    stop 'done'\n  end if\n"
        ),
        "{source}"
    );
}

/// CSHIFT, EOSHIFT and TRANSPOSE of whole distributed arrays inside
/// expressions become temporaries assigned right before their statement
/// (`hoist.rs`): each an all-to-all of its own, the statement then runs on
/// each process's part. Calls that cannot move (the action of a logical IF,
/// a WHERE construct that assigns what the call reads before it) keep the
/// rank-0 path, and the notes keep the user's line numbers.
#[test]
fn shifts_inside_expressions_become_temporaries() {
    let (notes, source) = lower(&program(
        "  u = 1.0
  do step = 1, 3
    un = un - 0.5 * (un - cshift(un, -1))
  end do
  s = sum(eoshift(u, 2, boundary=-1.0) * u)
  print *, maxval(cshift(u, step + 1))
  if (s > 0.0) u = u + cshift(u, 1)
  where (u > 0.0)
    un = u
    u = cshift(un, 1)
  end where
  print *, s, u(1)
",
    ));
    assert_eq!(
        notes,
        [
            "16: runs on one process: it is not an owner-computes assignment: it calls cshift, which is not an elemental intrinsic",
            "17: runs on one process: it is not an owner-computes assignment: an assignment in it is not an owner-computes array assignment",
        ]
    );
    // The temporaries are the program's distributed arrays, aligned with
    // the left side or with the array shifted.
    assert!(source.contains("allocate (hpf_t1("), "{source}");
    // A shift by a constant along the distributed dimension is read in
    // place from the shadow of the array shifted.
    assert!(
        source.contains(
            "  ! hpf-ls: hpf_t1 = cshift(un, -1) (the halo the shift crosses into the shadow of un, its readers read it in place)"
        ),
        "{source}"
    );
    assert!(
        source.contains("call hpf_shadow_r4(un, lbound(un), ubound(un), hpf_d_un, 2, -1, 1, 0, 22, 0.0)"),
        "{source}"
    );
    // Each read by its statement alone: one temporary, assigned anew (u and un are laid out alike).
    assert!(source.contains("  ! hpf-ls: hpf_t1 = eoshift(u, 2, boundary=-1.0) (the halo the shift"), "{source}");
    assert!(source.contains("  ! hpf-ls: hpf_t1 = cshift(u, step + 1) (the halo the shift"), "{source}");
    assert!(!source.contains("hpf_t2"), "{source}");
    assert!(
        source.contains(
            "un(hpf_lo:hpf_hi:1) = un(hpf_lo:hpf_hi:1) - 0.5 * (un(hpf_lo:hpf_hi:1) - un(hpf_lo+(-1):hpf_hi+(-1):1))"
        ),
        "{source}"
    );
    assert!(!source.contains("hpf_t4"), "{source}");
    assert!(source.contains("hpf_g_u = hpf_g_u + cshift(hpf_g_u, 1)"), "{source}");
}

/// LBOUND, UBOUND and SIZE of a distributed array are its declared
/// bounds, not its local part's: they are replaced by their values before
/// the lowering (a DO over `lbound(k, 1), ubound(k, 1)` once left its index
/// at the local part's end, and a section bound that holds one was not
/// affine).
#[test]
fn bounds_of_distributed_arrays_are_their_declared_ones() {
    let (notes, source) = lower(&program(
        "  do i = lbound(k, 1), ubound(k, dim=1)
    k(i) = i
  end do
  u(lbound(u, 1) + 1:size(u) - 2) = 1.0
  print *, i, size(k), size(u, 1), lbound(u, 1)
",
    ));
    assert_eq!(notes, Vec::<String>::new());
    assert!(source.contains("! hpf-ls: owner computes do i = 1, 20"), "{source}");
    assert!(source.contains("i = hpf_final((1), (20), 1)"), "{source}");
    assert!(source.contains("! hpf-ls: owner computes u(0 + 1:22 - 2) = 1.0"), "{source}");
    assert!(source.contains("print *, i, 20, 22, 0"), "{source}");
}

/// An implied-DO constructor assigned to a whole rank-1 distributed array
/// is the FORALL that means the same, run by the owners. Constructors of
/// several items, with a step, or into a section keep the rank-0 path.
#[test]
fn implied_do_constructors_become_foralls() {
    let (notes, source) = lower(&program(
        "  k = (/ (i * 2, i = 1, n) /)
  u = [ (0.5 * i, i = 0, n + 1) ]
  k = (/ (i, i = 1, 2 * n, 2) /)
  k = (/ 1, (i, i = 2, n) /)
  k(1:n) = (/ (i, i = 1, n) /)
  print *, k(2), u(3)
",
    ));
    assert_eq!(notes.len(), 3, "{notes:?}");
    assert!(notes.iter().all(|it| it.contains("array constructor")), "{notes:?}");
    assert!(notes[0].starts_with("12: "), "{notes:?}");
    assert!(source.contains("! hpf-ls: owner computes forall (i = 1:n) k(i - (1) + (1)) = i * 2"), "{source}");
    assert!(source.contains("! hpf-ls: owner computes forall (i = 0:n + 1) u(i - (0) + (0)) = 0.5 * i"), "{source}");
}

/// The game of life's neighbour count: CSHIFTs of CSHIFTs in a WHERE
/// mask, on a (BLOCK, BLOCK) grid, inside DO loops with a CYCLE; and
/// `b = transpose(a) - a`. Nothing runs on rank 0.
#[test]
fn nested_shifts_and_transposes_on_grids_become_temporaries() {
    let (notes, source) = lower(
        "program life
  implicit none
  integer, parameter :: n = 8
  logical :: alive(n, n)
  integer :: nbr(n, n), a(n, n), b(n, n)
  integer :: di, dj
!HPF$ PROCESSORS P(2,2)
!HPF$ DISTRIBUTE (BLOCK,BLOCK) ONTO P :: ALIVE, NBR
!HPF$ DISTRIBUTE (BLOCK,BLOCK) ONTO P :: A, B
  alive = .true.
  nbr = 0
  do dj = -1, 1
    do di = -1, 1
      if (di == 0 .and. dj == 0) cycle
      where (cshift(cshift(alive, di, 1), dj, 2)) nbr = nbr + 1
    end do
  end do
  a = nbr
  b = transpose(a) - a
  print *, count(alive), sum(nbr), sum(b)
end program life
",
    );
    assert_eq!(notes, Vec::<String>::new());
    assert!(source.contains("  ! hpf-ls: hpf_t2 = cshift(hpf_t1, dj, 2) (the halo the shift"), "{source}");
    // Shifts of arrays laid out alike exchange halos along the grid's
    // axes; the transpose permutes.
    assert!(
        source.contains(
            "  call hpf_shift_l4(hpf_t1, lbound(hpf_t1), ubound(hpf_t1), hpf_t2, lbound(hpf_t2), ubound(hpf_t2), &\n    hpf_d_hpf_t2, [1, 2], 2, dj, 2, 1, 8, .false.)"
        ),
        "{source}"
    );
    assert!(source.contains("  ! hpf-ls: hpf_t3 = transpose(a) (each process sends what it owns"), "{source}");
    assert!(source.contains("call hpf_transpose_i4(a, "), "{source}");
    assert!(!source.contains("call hpf_permute_l4"), "{source}");
    assert!(!source.contains("hpf_gather"), "{source}");
}

/// A CYCLE or EXIT of a time loop (or of a DO WHILE) under a condition on
/// replicated data leaves the loop on every process alike: the loop keeps
/// running on every process. One under a condition on distributed data, a
/// GO TO, or one inside a statement that runs on rank 0 keeps it there.
#[test]
fn cycles_and_exits_of_time_loops_are_taken_by_every_process() {
    let (notes, source) = lower(&program(
        "  total = 0
  do step = 1, 6
    if (step == 2) cycle
    do i = 1, n
      un(i) = u(i-1) + step
    end do
    if (step > 4) then
      total = total + 1
      exit
    end if
  end do
  do while (total < 9)
    total = total + 1
    if (mod(total, 2) == 0) cycle
    u(1:n) = un(1:n) + 1.0
  end do
  do step = 1, 3
    if (u(step) > 0.0) exit
    u(1:n) = un(1:n)
  end do
  do step = 1, 3
    if (step == 2) goto 10
    u(1:n) = un(1:n)
10  continue
  end do
",
    ));
    assert_eq!(
        notes,
        [
            "27: runs on one process: its condition reads distributed arrays",
            "30: runs on one process: its body holds more than DO loops and assignments, and its body branches (`goto`)",
        ]
    );
    assert!(source.contains("  do step = 1, 6\n    if (step == 2) cycle\n"), "{source}");
    assert!(
        source.contains("  do while ((total < 9))\n    total = total + 1\n    if (mod(total, 2) == 0) cycle\n"),
        "{source}"
    );
    assert_eq!(source.matches("hpf_gather").count(), 3, "{source}");
}

#[test]
fn branches_leaving_a_nest_keep_it_on_rank_0() {
    let (notes, source) = lower(&program(
        "  do i = 1, n
    if (un(i+1) > 1.0) exit
    un(i) = u(i)
  end do
  do step = 1, 3
    if (step == 2) then
      do i = 1, n
        un(i) = u(i)
      end do
    end if
  end do
",
    ));
    // The IF around the second nest runs on every process.
    assert_eq!(
        notes,
        ["10: runs on one process: the condition of its EXIT reads un, which the loop writes, and a statement of its body runs on rank 0 on gathered copies"]
    );
    assert_eq!(source.matches("owner computes do i = 1, n").count(), 1, "{source}");
}

/// An `IF (cond) EXIT` whose condition reads nothing the loop writes: the
/// first iteration where it holds is agreed on before the loop, which ends
/// there; a CYCLE ends the iteration on its owner. A condition that calls a
/// function, or an EXIT that could skip an inner loop, keeps the loop off
/// the owner-computes form.
#[test]
fn exits_and_cycles_run_owner_computes() {
    let (notes, source) = lower(&program(
        "  do i = 1, n
    if (un(i) > 1.0) exit
    un(i) = u(i)
  end do
  do i = 1, n
    un(i) = 0.0
    if (u(i+1) > 1.0) exit
    if (u(i) < 0.0) cycle
    un(i) = u(i)
  end do
  do i = n, 1, -1
    if (u(i) > 1.0) exit
    un(i) = 2.0
  end do
  do i = 1, n
    if (f(u(i)) > 1.0) exit
    un(i) = u(i)
  end do
  do i = 1, n
    un(i) = 1.0
    if (u(i) > 1.0) cycle
    do step = 1, 2
      un(i) = un(i) + u(i)
    end do
  end do
",
    ));
    assert_eq!(
        notes,
        [
            "24: runs on one process: the condition of its EXIT calls f, and a statement of its body runs on rank 0 on gathered copies",
            "28: runs on one process: a CYCLE or EXIT may skip a DO loop of the nest, and a statement of its body runs on rank 0 on gathered copies",
        ]
    );
    assert_eq!(source.matches("owner computes do i").count(), 3, "{source}");
    // The search runs after the fetch of u(i+1), over the process's iterations.
    let fetch = source.find("call hpf_fetch_r4_11(u").expect("the fetch of u(i+1)");
    let search = source.find("  hpf_exit_at = huge(hpf_exit_at)\n  do i = hpf_lo, hpf_hi, 1\n    if ((u(i+1) > 1.0)) then\n      hpf_exit_at = i\n      exit").expect(&source);
    assert!(fetch < search, "{source}");
    assert!(source.contains("call MPI_Allreduce(MPI_IN_PLACE, hpf_exit_at, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD)\n  if (hpf_exit_at /= huge(hpf_exit_at)) call hpf_local_bounds(hpf_d_un, 0, (1), hpf_exit_at, 1, hpf_lo, hpf_hi)"), "{source}");
    assert!(source.contains("  if (hpf_exit_at /= huge(hpf_exit_at)) i = hpf_exit_at"), "{source}");
    // Backwards: the first EXIT is the largest index.
    assert!(source.contains("hpf_exit_at = -huge(hpf_exit_at)"), "{source}");
    assert!(source.contains("MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD)"), "{source}");
}

/// Scalar reductions in a loop over a distributed index: INTEGER partials
/// combined by `MPI_Allreduce`, floating-point sums along the chain of
/// processes (the sequential order); a floating-point maximum, or a sum
/// whose order the distribution would change, stays on rank 0.
#[test]
fn scalar_reductions_in_a_loop_run_in_parallel() {
    let (notes, source) = lower(&program(
        "  total = 0
  step = 0
  do i = 1, n
    total = total + k(i) * 2 - 1
    step = max(k(i), step)
  end do
  s = 0.0
  do i = 1, n
    if (u(i) > 0.0) s = s + u(i-1)
    total = total + 1
  end do
  print *, total, step, s
",
    ));
    assert_eq!(notes, Vec::<String>::new());
    assert!(source.contains("  if (hpf_rank /= 0) total = 0\n"), "{source}");
    assert!(!source.contains("  if (hpf_rank /= 0) step"), "{source}");
    assert!(
        source.contains("call MPI_Allreduce(MPI_IN_PLACE, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)"),
        "{source}"
    );
    assert!(source.contains("call MPI_Allreduce(MPI_IN_PLACE, step, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD)"));
    assert!(source.contains("  call hpf_chain_recv_r4(s, 1)\n  do i = hpf_lo, hpf_hi, 1\n"), "{source}");
    // The next process waits for the chain before its iterations: its
    // send comes before any collective.
    assert!(
        source.contains(
            "  end do\n  call hpf_chain_send_r4(s, 1)\n  call MPI_Allreduce(MPI_IN_PLACE, total, 1, MPI_INTEGER, MPI_SUM"
        ),
        "{source}"
    );
    assert!(!source.contains("hpf_gather"), "{source}");
}

/// A floating-point maximum follows the chain of processes as sums do
/// (with signed zeros or NaNs its result depends on the order too); a sum
/// the loop also reads is no reduction: that loop runs on every process,
/// statement by statement, and its note says why.
#[test]
fn floating_point_extrema_and_scans_chain_along_the_processes() {
    // (With ordered reductions: a floating-point scan, down the ranks for a
    // negative step, passes its running value along too.)
    let (notes, source) = lower(&program(
        "  s = 0.0
  do i = 1, n
    s = max(s, u(i))
  end do
  do i = n, 1, -1
    s = s + u(i)
    un(i) = s
  end do
",
    ));
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(source.matches("owner computes do i").count(), 2, "{source}");
    assert!(
        source.contains(
            "  call hpf_chain_recv_r4(s, 1)
"
        ),
        "{source}"
    );
    assert!(
        source.contains(
            "    s = max(s, u(i))
  end do
  call hpf_chain_send_r4(s, 1)
"
        ),
        "{source}"
    );
    assert!(source.contains("  call hpf_chain_recv_r4(s, -1)\n"), "{source}");
    assert!(source.contains("  call hpf_chain_send_r4(s, -1)\n"), "{source}");
}

#[test]
fn one_chain_of_processes_per_loop() {
    let (notes, source) = lower(
        "program p
  real :: a(20), s, r
  integer :: i
!HPF$ DISTRIBUTE A(BLOCK)
  a = 1.0
  s = 0.0
  r = 0.0
  do i = 1, 20
    s = s + a(i)
    r = r + a(i) * 2.0
  end do
  print *, s, r
end program p
",
    );
    // Each process would wait for the second value before its iterations,
    // sent after the first chain's broadcast: the loop stays sequential.
    assert_eq!(notes, Vec::<String>::new());
    assert!(!source.contains("owner computes do"), "{source}");
    assert!(!source.contains("call hpf_chain_send_r4(s"), "{source}");
}

/// On a CYCLIC home the conditions' references become local positions too.
#[test]
fn if_conditions_on_a_cyclic_home_read_local_positions() {
    let (notes, source) = lower(
        "program p
  integer :: k(20), i
!HPF$ DISTRIBUTE K(CYCLIC)
  k = 3
  do i = 1, 20
    if (k(i) > i) then
      k(i) = 0
    end if
  end do
  print *, k
end program p
",
    );
    assert_eq!(notes, Vec::<String>::new());
    assert!(source.contains("    if (k(i + hpf_cs_1) > i) then\n      k(i + hpf_cs_1) = 0"), "{source}");
}

/// A DO loop that updates several arrays on the home element's template
/// cell runs owner-computes (its owner writes them all); a read of another
/// written array behind where the loop writes it is a carried dependence,
/// so that loop keeps the per-statement form; on a grid, another array
/// written on another cell keeps it too.
#[test]
fn loops_update_every_array_written_on_the_home_cell() {
    let (notes, source) = lower(&program(
        "  do i = 1, n
    u(i) = real(i)
    un(i) = 2.0 * u(i)
    k(i) = i
  end do
  do i = 2, n
    u(i) = un(i+1)
    un(i) = u(i-1)
  end do
",
    ));
    assert_eq!(
        notes,
        ["15: every process runs this loop, each element assignment on its owner, iteration by iteration: u is read at an element another process writes earlier (a loop-carried dependence)"]
    );
    assert!(source.contains("! hpf-ls: owner computes do i = 1, n\n"), "{source}");
    assert!(source.contains("! hpf-ls: every process runs this loop\n  do i = 2, n\n"), "{source}");
    let (_, source) = lower(&grid_program(
        "  do j = 1, m
    do i = 1, n
      a(i, j) = real(i + j)
      b(i, j) = a(i, j) * 2.0
    end do
  end do
  do j = 1, m - 1
    do i = 1, n
      a(i, j) = real(i)
      b(i, j + 1) = 1.0
    end do
  end do
",
    ));
    assert!(source.contains("! hpf-ls: owner computes do j = 1, m (on a 2-D grid)\n"), "{source}");
    assert!(!source.contains("! hpf-ls: owner computes do j = 1, m - 1"), "{source}");
}

/// INDEPENDENT asserts that no iteration writes what another reads: a loop
/// that reads its home behind where it writes runs owner-computes under it
/// (red-black sweeps read the other colour), and without it keeps the
/// sequential form.
#[test]
fn independent_loops_trust_the_assertion() {
    let body = |directive: &str| {
        format!(
            "{directive}  do i = 2, n - 1, 3
    u(i) = 0.5 * (u(i-3) + u(i+1))
  end do
"
        )
    };
    let (_, source) = lower(&program(&body("!HPF$ INDEPENDENT\n")));
    assert!(source.contains("! hpf-ls: owner computes do i = 2, n - 1, 3\n"), "{source}");
    let (notes, source) = lower(&program(&body("")));
    assert!(!source.contains("owner computes do i"), "{source}");
    assert!(notes[0].contains("loop-carried dependence"), "{notes:?}");
}

/// A loop whose assignments write arrays distributed differently, each at
/// the loop index from replicated data, is split into one owner-computes
/// loop per array; one that reads another array it writes, or writes one
/// array twice, is not.
#[test]
fn loops_writing_arrays_distributed_differently_are_split() {
    let text = |body: &str| {
        format!(
            "program s
  implicit none
  integer, parameter :: n = 20
  integer :: a(n), c(n), i
!HPF$ DISTRIBUTE A(BLOCK)
!HPF$ DISTRIBUTE C(CYCLIC(3))
{body}  print *, a, c, i
end program s
"
        )
    };
    // An END DO loop of the main program is split in its text (`split_loops.rs`),
    // and each part is planned as a loop of its own.
    let (notes, source) = lower(&text("  do i = 1, n\n    a(i) = 2 * i\n    c(i) = n - i\n  end do\n"));
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(source.matches("! hpf-ls: owner computes do i = 1, n\n").count(), 2, "{source}");
    assert!(source.contains("  do i = hpf_lo, hpf_hi, 1\n    a(i) = 2 * i\n  end do\n"), "{source}");
    assert!(source.contains("  do i = hpf_lo, hpf_hi, 1\n    c(i + hpf_cs_1) = n - i\n  end do\n"), "{source}");
    // A loop ended by a labelled CONTINUE is split by the lowering (`fission.rs`).
    let (notes, source) = lower(&text("  do 10 i = 1, n\n    a(i) = 2 * i\n    c(i) = n - i\n10 continue\n"));
    assert!(notes.is_empty(), "{notes:?}");
    assert!(
        source.contains(
            "  call hpf_local_bounds(hpf_d_a, 0, (1), (n), 1, hpf_lo, hpf_hi)
  do i = hpf_lo, hpf_hi, 1
  a(i) = 2 * i
  end do
  do hpf_c = 0, hpf_courses(hpf_d_c) - 1
  call hpf_course_bounds(hpf_d_c, 0, (1), (n), 1, hpf_c, hpf_lo, hpf_hi)
    block
    integer :: hpf_cs_1
    hpf_cs_1 = hpf_lx(hpf_d_c, hpf_lo + (0)) - hpf_lo
  do i = hpf_lo, hpf_hi, 1
  c(i + hpf_cs_1) = n - i
  end do
    end block
  end do
  i = hpf_final((1), (n), 1)
"
        ),
        "{source}"
    );
    for body in [
        "  do i = 1, n\n    a(i) = 2 * i\n    c(i) = a(i)\n  end do\n",
        "  do i = 1, n - 1\n    a(i) = 2 * i\n    c(i) = i\n    a(i+1) = 0\n  end do\n",
    ] {
        let (_, source) = lower(&text(body));
        assert!(!source.contains("one loop per array"), "{source}");
        assert!(!source.contains("owner computes"), "{source}");
    }
}

/// IF statements and constructs and CYCLE in a nest on a 2-D grid: their
/// conditions' reads are fetched like the assignments' and the nest runs
/// on the owners; an IF around an inner loop, or an EXIT, keeps it off.
#[test]
fn grid_nests_may_branch() {
    let (notes, source) = lower(&grid_program(
        "  do j = 2, m - 1
    do i = 2, n - 1
      if (a(i, j) < 0.0) cycle
      if (a(i-1, j) > a(i+1, j)) then
        b(i, j) = a(i, j-1)
      else
        b(i, j) = 0.0
      end if
    end do
  end do
  do j = 1, m
    if (a(1, j) > 0.0) then
      do i = 1, n
        b(i, j) = 1.0
      end do
    end if
  end do
  do j = 1, m
    do i = 1, n
      if (a(i, j) > 2.0) exit
      b(i, j) = 2.0
    end do
  end do
",
    ));
    assert_eq!(
        notes,
        [
            "19: runs on one process: a DO loop of the nest is inside an IF or after a CYCLE, and no statement of its body runs in parallel",
            "28: runs on one process: its condition reads distributed arrays",
        ]
    );
    assert_eq!(source.matches("(on a 2-D grid)").count(), 1, "{source}");
    assert!(source.contains("      if (a(i, j) < 0.0) cycle\n      if (a(i-1, j) > a(i+1, j)) then"), "{source}");
    // The condition's neighbours along the first dimension are fetched.
    assert!(source.contains("call hpf_need_span(hpf_lo, hpf_hi, 1, -1, -1, hpf_nl(1, 1), hpf_nh(1, 1))"), "{source}");
}

/// A nest that writes its home every other element along a loop of step 2
/// and reads it at odd distances there never reads what it writes: it runs
/// on the owners (the black sweep of red-black SOR, INDEPENDENT on the
/// outer loop only, the inner loop's start depending on the outer index).
/// At an even distance it may, and stays off.
#[test]
fn grid_nests_reading_between_their_strided_writes_run_in_parallel() {
    let (notes, source) = lower(&grid_program(
        "!HPF$ INDEPENDENT, NEW(I)
  do j = 2, m - 1
    do i = 2 + mod(j, 2), n - 1, 2
      a(i, j) = a(i-1, j) + a(i+1, j) + a(i, j-1) + a(i, j+1)
    end do
  end do
  do j = 1, m
    do i = 2, n - 1, 2
      a(i, j) = a(i-1, j) + a(i+1, j)
    end do
  end do
  do j = 1, m
    do i = 3, n, 2
      a(i, j) = a(i-2, j)
    end do
  end do
",
    ));
    assert_eq!(
        notes,
        ["20: runs on one process: it reads its home a at other elements than it writes (a dependence may cross processes), and no statement of its body runs in parallel"]
    );
    assert_eq!(source.matches("(on a 2-D grid)").count(), 2, "{source}");
}

/// A strided loop reading what it writes at distances that are not a
/// multiple of its step never reads an element it writes: owner-computes
/// (odd/even sweeps); at a multiple of the step behind, it is a carried
/// dependence.
#[test]
fn strided_loops_reading_between_their_writes_run_in_parallel() {
    let (notes, source) = lower(&program(
        "  do i = 2, n, 2
    u(i) = u(i-1) + u(i+1)
  end do
  do i = n, 3, -2
    u(i) = u(i-1) + u(i-3)
  end do
  do i = 3, n, 3
    u(i) = u(i-3) + u(i+1)
  end do
",
    ));
    assert_eq!(
        notes,
        ["16: every process runs this loop, each element assignment on its owner, iteration by iteration: u is read at an element another process writes earlier (a loop-carried dependence)"]
    );
    assert_eq!(source.matches("owner computes do i").count(), 2, "{source}");
}

/// Between two statements a REDISTRIBUTE lays the arrays it moves out anew
/// (one all-to-all copy each), the loops after it run under the new layout,
/// and arrays it does not move are not copied; remaps inside constructs
/// and subroutines are not followed (a note says so), remaps the lowering
/// cannot follow between statements are refused at their directive.
#[test]
fn remaps_between_statements_lay_out_the_arrays_anew() {
    let text = "program p
  implicit none
  integer, parameter :: n = 16
  integer :: a(n, n), b(n), i, j
!HPF$ DYNAMIC A
!HPF$ DISTRIBUTE A(BLOCK,*)
!HPF$ DISTRIBUTE B(BLOCK)
  a = 1
  b = 2
!HPF$ REDISTRIBUTE A(*,BLOCK)
  do j = 1, n
    do i = 2, n
      a(i, j) = a(i, j) + a(i-1, j)
    end do
  end do
  print *, sum(a), sum(b)
end program p
";
    let (notes, source) = lower(text);
    assert!(notes.is_empty(), "the column sweep runs in parallel under (*,BLOCK): {notes:?}");
    let remap = source.find("! hpf-ls: remapped here: a is laid out anew").expect("a is copied");
    assert!(!source.contains("remapped here: b"), "b does not move:\n{source}");
    // Allocated (BLOCK,*) first, then (*,BLOCK).
    assert!(source[..remap].contains("  allocate (a(hpf_lo:hpf_hi, 1:16))\n"), "{source}");
    assert!(source[remap..].contains("  allocate (hpf_m_a(1:16, hpf_lo:hpf_hi))\n"), "{source}");
    let after = &source[remap..];
    assert!(after.contains("  call hpf_copy_nd_i4(a, lbound(a), ubound(a), [hpf_d_a], [1], &\n    hpf_m_a, lbound(hpf_m_a), ubound(hpf_m_a), [hpf_d_hpf_m_a], [2])\n  call move_alloc(hpf_m_a, a)\n  hpf_d_a = hpf_d_hpf_m_a\n"), "{source}");
    // The sweep after the remap goes down the columns each process owns, with no fetch.
    assert!(!after.contains("hpf_fetch"), "{source}");

    let refused = |text: &str, why: &str, line: usize| {
        let analysis = analysis::analyze(text, SourceForm::Free, ModelConfig { number_of_processors: None });
        let errors = crate::lower(&analysis, text).expect_err(why);
        let index = LineIndex::new(text);
        assert!(
            errors.iter().any(|it| it.message.contains(why) && index.line_col(text, it.range.start).0 + 1 == line),
            "{errors:?}"
        );
    };
    let in_loop = text
        .replace("!HPF$ REDISTRIBUTE A(*,BLOCK)\n  do j = 1, n\n", "  do j = 1, n\n!HPF$ REDISTRIBUTE A(*,BLOCK)\n");
    // Inside a construct or in a subroutine: not followed (the arrays keep
    // their mapping, which changes no value), as a note says.
    let (notes, source) = lower(&in_loop);
    // (Under the old mapping, (BLOCK,*), the sweep down a column is a carried
    // dependence: a wavefront, the note before.)
    assert!(notes[0].starts_with("10: runs as a pipeline (in strips"), "{notes:?}");
    assert_eq!(
        notes[1..2],
        ["11: REDISTRIBUTE inside the statement of line 10 (the mapping after it would depend on the path taken) is not followed by the MPI backend: the arrays keep the mapping they had before it, which changes where their elements live but not what the program computes"]
    );
    assert!(!source.contains("remapped here"), "{source}");
    let grid = text.replace("REDISTRIBUTE A(*,BLOCK)", "REDISTRIBUTE A(BLOCK,BLOCK)");
    refused(&grid, "`a` would go from 1 to 2 distributed dimension(s)", 10);
    let replicated = text.replace("REDISTRIBUTE A(*,BLOCK)", "REDISTRIBUTE A(*,*)");
    refused(&replicated, "`a` would no longer be distributed", 10);
    let in_subroutine = format!(
        "{text}subroutine s(x)\n  integer :: x(16)\n!HPF$ DYNAMIC X\n!HPF$ DISTRIBUTE X(BLOCK)\n!HPF$ REDISTRIBUTE X(CYCLIC)\n  x = 0\nend subroutine s\n"
    );
    let (notes, _) = lower(&in_subroutine);
    assert!(
        notes.iter().any(|it| it.starts_with("22: REDISTRIBUTE in a subroutine or function is not followed")),
        "{notes:?}"
    );
}

/// Distributed module arrays are the program's: their modules declare
/// their local parts, the main program allocates them and lowers its
/// statements on them as on its own. A module subroutine that uses them
/// (itself or through another) runs on every process as a copy on their
/// local parts, the CALL too; a function that uses them runs on rank 0 on
/// their gathered copies, and so does the statement that calls it. A
/// replicated module variable is kept, and broadcast after a call on rank
/// 0 of a procedure that uses it.
#[test]
fn module_arrays_are_distributed_and_their_procedures_run_on_every_process() {
    let module = "module data
  implicit none
  integer, parameter :: n = 20
  integer :: steps
  real :: a(n), b(n), scale = 2.0
!HPF$ DISTRIBUTE (BLOCK) :: A, B
contains
  subroutine smooth()
    integer :: i
    do i = 2, n - 1
      b(i) = (a(i-1) + a(i+1)) / 2
    end do
  end subroutine smooth
  subroutine twice()
    call smooth()
    call smooth()
  end subroutine twice
  real function total()
    total = sum(b) + scale
  end function total
end module data
";
    let main = "program p
  use data
  implicit none
  integer :: i
  steps = 3
  do i = 1, n
    a(i) = i
  end do
  call twice()
  print *, sum(b), steps
  print *, total()
end program p
";
    let (notes, source) = lower(&format!("{module}{main}"));
    // The module: local parts, descriptors and gathered copies; its procedures use the copies.
    assert!(source.contains("module data\n  use hpf_runtime\n"), "{source}");
    assert!(source.contains("  real, allocatable :: a(:), hpf_g_a(:)\n  type(hpf_desc) :: hpf_d_a\n"), "{source}");
    assert!(source.contains("  real, allocatable :: b(:), hpf_g_b(:)\n"), "{source}");
    assert!(source.contains("  integer :: steps\n"), "a replicated module variable stays:\n{source}");
    assert!(source.contains("      hpf_g_b(i) = (hpf_g_a(i-1) + hpf_g_a(i+1)) / 2\n"), "{source}");
    // The copies work on the local parts, the one of `twice` calling the one of `smooth`.
    assert!(source.contains("  subroutine hpf_p1_smooth()\n"), "{source}");
    assert!(source.contains("    do i = hpf_lo, hpf_hi, 1\n      b(i) = (a(i-1) + a(i+1)) / 2\n"), "{source}");
    assert!(source.contains("  subroutine hpf_p2_twice()\n"), "{source}");
    assert!(source.contains("    call hpf_p1_smooth()\n    call hpf_p1_smooth()\n"), "{source}");
    // The program allocates them (with the shadow the copy reads), runs its
    // own loop on them in parallel, and every process calls the copies: the
    // function's result goes into a scalar before the PRINT (`hoist.rs`).
    assert!(source.contains("  use data, only: a, hpf_d_a, hpf_g_a, b, hpf_d_b, hpf_g_b, scale\n"), "{source}");
    assert!(
        source.contains("  call hpf_alloc_bounds(hpf_d_a, 1, 1, hpf_lo, hpf_hi)\n  allocate (a(hpf_lo:hpf_hi))\n"),
        "{source}"
    );
    assert!(!source.contains("hpf-ls: the initial value"), "{source}");
    assert!(source.contains("\n  call hpf_p2_twice()\n"), "{source}");
    assert_eq!(notes, Vec::<String>::new());
    assert!(source.contains("  real function hpf_p3_total() result(total)\n"), "{source}");
    assert!(source.contains("  hpf_f1 = hpf_p3_total()\n"), "{source}");
    assert!(source.contains("  print *, hpf_f1\n"), "{source}");
    // An initial value in the module is the array's first value.
    let initialised = module.replace("real :: a(n), b(n)", "real :: a(n) = 1.5, b(n)");
    let (_, source) = lower(&format!("{initialised}{main}"));
    assert!(source.contains("  hpf_g_a = 1.5\n  call hpf_scatter_r4_11(hpf_g_a, hpf_d_a, a)\n"), "{source}");

    // A rename would hide the array from the analysis: refused at the USE.
    let renamed = main.replace("  use data\n", "  use data, first => a\n").replace("a(i) = i", "first(i) = i");
    let analysis =
        analysis::analyze(&format!("{module}{renamed}"), SourceForm::Free, ModelConfig { number_of_processors: None });
    let errors = crate::lower(&analysis, &format!("{module}{renamed}")).expect_err("a rename");
    assert!(
        errors
            .iter()
            .any(|it| it.message.starts_with("USE data renames entities of a module that holds distributed arrays")),
        "{errors:?}"
    );
    // A replicated module variable a subroutine sets: every process runs
    // its copy, and so sets it alike.
    let set_by_procedure =
        module.replace("    call smooth()\n    call smooth()\n", "    call smooth()\n    steps = steps + 1\n");
    let (notes, source) = lower(&format!("{set_by_procedure}{main}"));
    assert_eq!(notes, Vec::<String>::new());
    assert!(
        source.contains("    call hpf_p1_smooth()\n    steps = steps + 1\n  end subroutine hpf_p2_twice"),
        "{source}"
    );
    assert!(!source.contains("MPI_Bcast(steps"), "{source}");
    // One that a function sets, whose copy cannot run on every process (it
    // branches), is broadcast after the statement on rank 0 that calls it.
    let set_by_function = module.replace(
        "    total = sum(b) + scale\n",
        "    total = sum(b) + scale\n    if (total > 1.0e9) go to 10\n    steps = 0\n10  continue\n",
    );
    let (notes, source) = lower(&format!("{set_by_function}{main}"));
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with("35: runs on one process: it calls total")
            && notes[0].ends_with("its body branches (`if`)"),
        "{notes:?}"
    );
    assert!(source.contains("  use data, only: a, hpf_d_a, hpf_g_a, b, hpf_d_b, hpf_g_b, steps, scale\n"), "{source}");
    assert!(
        source.contains("  call hpf_scatter_r4_11(hpf_g_b, hpf_d_b, b)\n  call MPI_Bcast(hpf_f1, storage_size(hpf_f1) / 8, MPI_BYTE, 0, MPI_COMM_WORLD)\n  call MPI_Bcast(steps, storage_size(steps) / 8, MPI_BYTE, 0, MPI_COMM_WORLD)\n"),
        "{source}"
    );
}

/// An internal subroutine of the program that uses its distributed arrays
/// and scalars by host association runs on every process: its copy follows
/// the program's CONTAINS and works on the local parts (their shadows
/// grown for it), in a time loop too; an internal function that uses them
/// runs on rank 0.
#[test]
fn internal_subroutines_run_on_every_process() {
    let (notes, source) = lower(
        &program(
            "  calls = 0
  u = 1.0
  do step = 1, 3
    call smooth()
  end do
  print *, calls, energy()
  k(2) = int(energy())
contains
  subroutine smooth()
    integer :: j
    do j = 1, n
      un(j) = u(j-1) + u(j+1)
    end do
    u(1:n) = un(1:n)
    calls = calls + 1
  end subroutine smooth
  real function energy()
    energy = sum(u(1:n))
  end function energy
",
        )
        .replace("integer :: k(n), i, step, total", "integer :: k(n), i, step, total, calls"),
    );
    // The function in the PRINT goes into a scalar first; one in an
    // element assignment runs on rank 0.
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].starts_with("16: runs on one process: it calls energy"), "{notes:?}");
    assert!(source.contains("  hpf_f1 = hpf_p2_energy()\n"), "{source}");
    assert!(source.contains("  real function hpf_p2_energy() result(energy)\n"), "{source}");
    assert!(source.contains("  do step = 1, 3\n    call hpf_p1_smooth()\n  end do\n"), "{source}");
    let contains = source.find("\ncontains\n").expect("the program's CONTAINS");
    let copy = source.find("  subroutine hpf_p1_smooth()\n").expect(&source);
    assert!(contains < copy, "{source}");
    assert!(source.contains("    do j = hpf_lo, hpf_hi, 1\n      un(j) = u(j-1) + u(j+1)\n"), "{source}");
    assert!(source.contains("    calls = calls + 1\n  end subroutine hpf_p1_smooth"), "{source}");
    assert!(source.contains("  call hpf_alloc_bounds(hpf_d_u, 1, 1, hpf_lo, hpf_hi)\n"), "{source}");
}

/// Text the parser reads only in part (from the LSP fuzzer: a directive
/// pasted among the declarations of a fixed-form program, a PARAMETER in
/// the label columns) is lowered or refused, never a panic: a declaration
/// of a distributed array past the specification part made an inverted range.
#[test]
fn half_read_declarations_are_lowered_without_a_panic() {
    let text = include_str!("testdata/declaration_past_specification.f");
    let analysis = analysis::analyze(text, SourceForm::FIXED, ModelConfig { number_of_processors: None });
    let _ = crate::lower(&analysis, text);
}

/// A time loop whose body sweeps arrays in parallel and also sets one
/// element from an element of another process (a periodic boundary) stays
/// on every process: the element is fetched in each step (one small
/// exchange), rather than the whole loop going to rank 0. (A loop that only
/// walks elements one by one, fetching each, still runs on rank 0:
/// `reads_that_are_not_neighbours_are_fetched_before_the_loop`.)
#[test]
fn element_fetches_in_time_loops_keep_them_parallel() {
    let (notes, source) = lower(
        "program t
  implicit none
  integer, parameter :: n = 16
  real :: u(n), w(n), r(n)
  integer :: step
!HPF$ DISTRIBUTE u(BLOCK)
!HPF$ ALIGN w(i) WITH u(i)
!HPF$ ALIGN r(i) WITH u(n+1-i)
  u = 1.0
  r = 2.0
  do step = 1, 5
    w(2:n) = u(1:n-1)
    w(1) = r(1)
    u = w + 1.0
  end do
  print *, sum(u)
end program t
",
    );
    assert!(notes.is_empty(), "{notes:?}");
    assert!(!source.contains("on rank 0"), "{source}");
    assert!(source.contains("  do step = 1, 5\n"), "{source}");
    assert!(source.contains("  if (hpf_owns(hpf_d_w, 1)) then\n"), "{source}");
    assert!(source.contains("call hpf_remote_read_r4(r, hpf_d_r, hpf_gi_1, hpf_gv_1)"), "{source}");
}

/// A DO loop whose home is `H(a*v+q)` with `a` other than 1 on a rank-1
/// BLOCK array (multigrid prolongation `e(2*i) = y(i)`, a reversed walk
/// `e(n+1-i)`) runs the iterations whose element the process owns
/// (`hpf_local_bounds_affine`); reads on the home's cells are local, other
/// reads are fetched by the inspector/executor; a floating-point sum runs
/// along the chain of processes. One whose home runs backwards (`a` < 0)
/// and sums in order runs element by element, with the reason.
#[test]
fn loops_over_strided_homes_run_on_their_owners() {
    let (notes, source) = lower(
        "program m
  implicit none
  integer, parameter :: n = 20
  real :: y(n), e(0:2*n+1), s
  integer :: i
!HPF$ TEMPLATE T(0:2*N+1)
!HPF$ DISTRIBUTE T(BLOCK) ONTO P
!HPF$ PROCESSORS P(4)
!HPF$ ALIGN Y(I) WITH T(2*I)
!HPF$ ALIGN E(I) WITH T(I)
  y = 1.0
  e = 0.0
  do i = 1, n
    e(2*i) = y(i)
  end do
  do i = 1, n - 1
    e(2*i+1) = 0.5 * (y(i) + y(i+1))
  end do
  do i = n, 1, -1
    e(2*n+1-i) = e(2*n+1-i) + 1.0
  end do
  s = 0.0
  do i = 1, n
    e(2*i) = y(i) * 2.0
    s = s + e(2*i)
  end do
  do i = n, 1, -1
    e(2*n+1-i) = y(i)
    s = s + e(2*n+1-i)
  end do
  print *, sum(e), s
end program m
",
    );
    assert_eq!(
        notes,
        [
            "27: every process runs this loop, each element assignment on its owner, iteration by iteration: the home's distributed subscript is `-1*v+q`, and it reduces a floating-point scalar in order"
        ],
        "{source}"
    );
    assert!(source.contains("call hpf_local_bounds_affine(hpf_d_e, 2, 0, (1), (n), 1, hpf_lo, hpf_hi)\n  do i = hpf_lo, hpf_hi, 1\n    e(2*i) = y(i)\n"), "{source}");
    // y(i) and y(i+1) sit on cells 2i and 2i+2, the home on 2i+1: both fetched.
    assert!(
        source.contains("call hpf_local_bounds_affine(hpf_d_e, 2, 1, (1), (n - 1), 1, hpf_lo, hpf_hi)"),
        "{source}"
    );
    assert!(source.contains("    hpf_gi_1(1 * hpf_n + (i - hpf_lo) / (1) + 1) = i+1\n"), "{source}");
    assert!(source.contains("call hpf_remote_read_r4(y, hpf_d_y, hpf_gi_1, hpf_gv_1)"), "{source}");
    assert!(source.contains("call hpf_local_bounds_affine(hpf_d_e, -1, 41, (n), (1), -1, hpf_lo, hpf_hi)"), "{source}");
    // The forward sum over e(2*i) follows the chain of processes.
    assert!(source.contains("call hpf_chain_recv_r4(s, 1)"), "{source}");
}

/// A loop whose assignments write arrays on different template cells
/// (`x` on the odd cells, `z` on the even ones) is split into one loop per
/// assignment before the lowering, each on its owners; an INDEPENDENT
/// before it is repeated before each part. The notes of the parts name the
/// user's lines.
#[test]
fn loops_writing_arrays_on_different_cells_are_split_in_the_text() {
    let program = |independent: &str, second: &str| {
        format!(
            "program s
  implicit none
  integer, parameter :: n = 32, m = n/2
  integer :: b(n), x(m), z(m), i
!HPF$ TEMPLATE T(N)
!HPF$ DISTRIBUTE T(BLOCK)
!HPF$ ALIGN B(I) WITH T(I)
!HPF$ ALIGN X(I) WITH T(2*I-1)
!HPF$ ALIGN Z(:) WITH T(2:N:2)
  b = 3
{independent}  do i = 1, m
    x(i) = b(2*i-1)
    z(i) = {second}
  end do
  print *, x, z
end program s
"
        )
    };
    // The second assignment reads x, which the first writes: not split.
    let (notes, _) = lower(&program("", "b(2*i) + x(i)"));
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].starts_with("11: "), "{notes:?}");
    for independent in ["", "!HPF$ INDEPENDENT\n"] {
        let (notes, source) = lower(&program(independent, "b(2*i)"));
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(source.matches("! hpf-ls: owner computes do i = 1, m\n").count(), 2, "{source}");
        assert!(source.contains("  do i = hpf_lo, hpf_hi, 1\n    x(i) = b(2*i-1)\n  end do\n"), "{source}");
        assert!(source.contains("  do i = hpf_lo, hpf_hi, 1\n    z(i) = b(2*i)\n  end do\n"), "{source}");
        assert!(!source.contains("hpf_remote_read"), "{source}");
    }
    let text = "program s
  integer :: b(8), x(4), z(4), i
!HPF$ DISTRIBUTE (BLOCK) :: B, X
!HPF$ DISTRIBUTE Z(CYCLIC)
  b = 3
!HPF$ INDEPENDENT
  do i = 1, 4   ! both
    x(i) = b(2*i-1)
    z(i) = b(2*i)
  end do
end program s
";
    let analysis = analysis::analyze(text, SourceForm::Free, ModelConfig { number_of_processors: None });
    let (rewritten, _) = crate::hoist::rewrite(&analysis, text).expect("split");
    // A header line that holds an assignment too is not copied.
    let shared = text.replace("  do i = 1, 4   ! both\n    x(i)", "  do i = 1, 4; x(i)");
    let analysis = analysis::analyze(&shared, SourceForm::Free, ModelConfig { number_of_processors: None });
    assert!(crate::hoist::rewrite(&analysis, &shared).is_none(), "{shared}");
    assert!(
        rewritten.text.contains(
            "!HPF$ INDEPENDENT\n  do i = 1, 4   ! both\n    x(i) = b(2*i-1)\n  end do\n!HPF$ INDEPENDENT\n  do i = 1, 4   ! both\n    z(i) = b(2*i)\n  end do\n"
        ),
        "{}",
        rewritten.text
    );
}

/// A gather `force(p) = field(cell(p))` on a CYCLIC home, through an index
/// array on the home's cells: the inspector reads the index array at its
/// local positions, course by course, and the time loop around the gather
/// and the push stays on every process.
#[test]
fn gathers_on_cyclic_homes_read_their_index_arrays_locally() {
    let (notes, source) = lower(
        "program g
  implicit none
  integer, parameter :: ng = 16, np = 48
  integer :: field(ng), cell(np), vel(np), force(np), p, step
!HPF$ DISTRIBUTE FIELD(BLOCK)
!HPF$ DISTRIBUTE (CYCLIC) :: CELL, VEL
!HPF$ ALIGN FORCE(I) WITH CELL(I)
  field = 3
  vel = 1
  cell = 2
  do step = 1, 5
!HPF$ INDEPENDENT
    do p = 1, np
      force(p) = field(cell(p))
    end do
    do p = 1, np
      vel(p) = vel(p) + force(p)
      cell(p) = modulo(cell(p) - 1 + vel(p), ng) + 1
    end do
  end do
  print *, cell
end program g
",
    );
    assert!(notes.is_empty(), "{notes:?}");
    assert!(!source.contains("on rank 0"), "{source}");
    assert!(
        source.contains("      hpf_gi_1(hpf_m + (p - hpf_lo) / (1) + 1) = cell(hpf_lx(hpf_d_cell, p))\n"),
        "{source}"
    );
    assert!(source.contains("call hpf_remote_read_i4(field, hpf_d_field, hpf_gi_1, hpf_gv_1)"), "{source}");
}

/// LU factorisation with A distributed by columns: the column scaling
/// `A(I,K) = A(I,K) / A(K,K)` touches column K only, so its owner runs the
/// loop; the INDEPENDENT update reads column K in every iteration, so its
/// owner broadcasts it once before the nest, which reads the copy; the
/// K loop around them runs on every process. Without INDEPENDENT the same
/// holds, as the update writes columns K+1.. only; an update that may
/// write column K itself (`J = K, N`) is not broadcast.
#[test]
fn lu_columns_are_scaled_by_their_owner_and_broadcast() {
    let program = |independent: &str, first: &str| {
        format!(
            "program lu
  implicit none
  integer, parameter :: n = 16
  double precision :: a(n,n)
  integer :: i, j, k
!HPF$ DISTRIBUTE A(*, CYCLIC)
  a = 1.0d0
  do k = 1, n-1
    do i = k+1, n
      a(i,k) = a(i,k) / a(k,k)
    end do
{independent}    do j = {first}, n
      do i = k+1, n
        a(i,j) = a(i,j) - a(i,k) * a(k,j)
      end do
    end do
  end do
  print *, sum(a)
end program lu
"
        )
    };
    let (notes, source) = lower(&program("!HPF$ INDEPENDENT, NEW(I)\n", "k+1"));
    assert!(notes.is_empty(), "{notes:?}");
    let (plain_notes, plain) = lower(&program("", "k+1"));
    assert!(plain_notes.is_empty(), "{plain_notes:?}");
    assert!(plain.contains("- hpf_bc_1(i) * a(k,j + hpf_cs_1)"), "{plain}");
    assert!(
        source.contains(
            "  if (hpf_owns(hpf_d_a, k)) then\n    block\n    integer :: hpf_cs_1\n    hpf_cs_1 = hpf_lx(hpf_d_a, k)\n    do i = k+1, n\n      a(i,hpf_cs_1) = a(i,hpf_cs_1) / a(k,hpf_cs_1)\n    end do\n    end block\n  end if\n  i = hpf_final((k+1), (n), 1)\n"
        ),
        "{source}"
    );
    // Only rows k+1..n of column k move, the rows the update reads.
    assert!(source.contains("  allocate (hpf_bc_1(max(1, k + 1):16))\n"), "{source}");
    assert!(
        source.contains("  if (hpf_owns(hpf_d_a, k)) hpf_bc_1 = a(max(1, k + 1):16, hpf_lx(hpf_d_a, k))\n"),
        "{source}"
    );
    assert!(
        source.contains(
            "  call MPI_Bcast(hpf_bc_1, size(hpf_bc_1), MPI_DOUBLE_PRECISION, hpf_owner(hpf_d_a, k), MPI_COMM_WORLD)\n"
        ),
        "{source}"
    );
    assert!(source.contains("a(i,j + hpf_cs_1) = a(i,j + hpf_cs_1) - hpf_bc_1(i) * a(k,j + hpf_cs_1)"), "{source}");
    let (notes, source) = lower(&program("", "k"));
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].starts_with("8: runs on one process"), "{notes:?}");
    assert!(!source.contains("hpf_bc_1"), "{source}");
}

/// The broadcast copy holds the rows the nest reads: their range follows
/// the loop bounds (reversed by a negative coefficient), or is the whole
/// column when a bound changes inside the nest (a triangle).
#[test]
fn broadcasts_send_the_rows_the_nest_reads() {
    let program = |inner: &str, read: &str| {
        format!(
            "program lu
  implicit none
  integer, parameter :: n = 16
  double precision :: a(n,n)
  integer :: i, j, k
!HPF$ DISTRIBUTE A(*, CYCLIC)
  a = 1.0d0
  do k = 1, n-1
!HPF$ INDEPENDENT, NEW(I)
    do j = k+1, n
      do i = {inner}
        a(i,j) = a(i,j) - {read} * a(k,j)
      end do
    end do
  end do
  print *, sum(a)
end program lu
"
        )
    };
    let (notes, source) = lower(&program("k+1, n-1", "a(n+1-i,k)"));
    assert!(notes.is_empty(), "{notes:?}");
    assert!(source.contains("  allocate (hpf_bc_1(2:min(16, -k + 16)))\n"), "{source}");
    let (notes, source) = lower(&program("j, n", "a(i,k)"));
    assert!(notes.is_empty(), "{notes:?}");
    assert!(source.contains("  allocate (hpf_bc_1(1:16))\n"), "{source}");
}

/// A loop run by one owner is copied into an IF block, so it must end with
/// its own END DO or CONTINUE: one that shares its terminal label with the
/// loop around it (`DO 10 K ... DO 10 I ... 10 CONTINUE`) keeps the
/// element-by-element form, whose text stays whole.
#[test]
fn single_owner_loops_do_not_split_a_shared_label() {
    let program = |inner: &str| {
        format!(
            "program sh
  implicit none
  integer, parameter :: n = 12
  double precision :: a(n,n), s
  integer :: i, k
!HPF$ DISTRIBUTE A(*, CYCLIC)
  a = 1.0d0
  s = 0.0d0
{inner}  print *, a(5,3), s
end program sh
"
        )
    };
    let (_, source) = lower(&program(
        "  do 10 k = 1, n-1\n    s = s + 1.0d0\n    do 10 i = k+1, n\n      a(i,k) = a(i,k) / a(k,k) + s\n10 continue\n",
    ));
    assert!(!source.contains("if (hpf_owns(hpf_d_a, k)) then\n    do"), "{source}");
    assert!(source.contains("  do i = k+1, n\n  if (hpf_owns(hpf_d_a, k)) then\n"), "{source}");
    assert!(!source.lines().any(|it| it.trim() == "10"), "{source}");
    let (_, source) = lower(&program(
        "  do k = 1, n-1\n    s = s + 1.0d0\n    do 10 i = k+1, n\n      a(i,k) = a(i,k) / a(k,k) + s\n10  continue\n  end do\n",
    ));
    assert!(
        source.contains("if (hpf_owns(hpf_d_a, k)) then\n    block\n    integer :: hpf_cs_1\n    hpf_cs_1 = hpf_lx(hpf_d_a, k)\n    do 10 i = k+1, n\n"),
        "{source}"
    );
}

/// An owner-computes loop that shares its terminal label with the time
/// loop around it (`DO 10 K ... DO 10 I ... 10 CONTINUE`, F77 style): the
/// time loop is emitted as `do ... end do`, so the inner loop's text gets
/// a CONTINUE of its own on the label (it was left a bare label, which
/// gfortran rejects).
#[test]
fn loops_sharing_a_terminal_label_keep_a_statement_on_it() {
    let (notes, source) = lower(
        "program sh
  implicit none
  integer, parameter :: n = 12
  double precision :: b(n), s
  integer :: i, k
!HPF$ DISTRIBUTE B(BLOCK)
  b = 1.0d0
  s = 0.0d0
  do 10 k = 1, 3
    s = s + 1.0d0
  do 10 i = 1, n
    b(i) = b(i) + s
10 continue
  print *, b(5), s
end program sh
",
    );
    assert!(notes.is_empty(), "{notes:?}");
    assert!(source.contains("    b(i) = b(i) + s\n10 continue\n"), "{source}");
    assert!(!source.lines().any(|it| it.trim() == "10"), "{source}");
}

/// Loops that update elements through computed indices (a histogram, a
/// charge deposit) run on the processes that own the iterations' reads;
/// the updates go to the elements' owners, which apply them in the loop's
/// order. Integer sums and MAX are folded per element before they leave;
/// a floating-point sum is not (its order is kept). An update the value of
/// which reads the array itself stays on rank 0. A guarded overwrite sends
/// the values of the iterations whose condition holds.
#[test]
fn scatter_updates_go_to_their_owners_in_the_loops_order() {
    let text = "program s
  implicit none
  integer, parameter :: n = 40, m = 12
  integer :: cell(n), hist(m), big(m), i
  real :: q(n), rho(m)
!HPF$ DISTRIBUTE (CYCLIC) :: CELL, Q
!HPF$ DISTRIBUTE (BLOCK) :: HIST, RHO, BIG
  do i = 1, n
    cell(i) = mod(7 * i, m) + 1
    q(i) = 1.0 / real(i)
  end do
  hist = 0
  rho = 0.0
  big = 0
  do i = 1, n
    hist(cell(i)) = hist(cell(i)) + 1
  end do
  do i = n, 1, -1
    rho(cell(i)) = rho(cell(i)) + q(i)
  end do
  do i = 1, 3 * n
    big(mod(i, m) + 1) = max(big(mod(i, m) + 1), i)
  end do
  do i = 2, n
    big(cell(i)) = big(cell(i)) + big(cell(i - 1))
  end do
  do i = 1, n
    if (q(i) > 0.1) rho(cell(i)) = q(i)
  end do
  print *, hist, rho, big
end program s
";
    let (notes, source) = lower(text);
    assert_eq!(
        notes,
        ["24: runs on one process: the home's distributed subscript is not `v+q` for a loop index v, and no statement of its body runs in parallel"]
    );
    // The histogram: CELL's owners, course by course, one update per element.
    assert!(source.contains("    hpf_si(hpf_sn) = cell(hpf_lx(hpf_d_cell, i))\n"), "{source}");
    assert!(source.contains("        hpf_sv(hpf_sk) = hpf_sv(hpf_sk) + hpf_sv(hpf_sj)\n"), "{source}");
    assert!(
        source.contains(
            "    hist(hpf_lx(hpf_d_hist, hpf_si(hpf_sk))) = hist(hpf_lx(hpf_d_hist, hpf_si(hpf_sk))) + hpf_sv(hpf_sk)\n"
        ),
        "{source}"
    );
    // The floating-point deposit: every update sent, in the loop's order
    // (three folds: the histogram, MAX and the overwrite below).
    assert!(source.contains("    hpf_so(hpf_sn) = (i - (n)) / (-1)\n"), "{source}");
    assert!(source.contains("call hpf_send_to_owners_r4(hpf_d_rho, hpf_si, hpf_so, hpf_sv)"), "{source}");
    assert_eq!(source.matches("call hpf_order_by(hpf_si, hpf_sp)").count(), 3, "{source}");
    // MAX reads nothing distributed: each process takes a run of iterations.
    assert!(source.contains("call hpf_share_bounds((1), (3 * n), 1, hpf_slo, hpf_shi)"), "{source}");
    assert!(source.contains("hpf_sv(hpf_sk) = max(hpf_sv(hpf_sk), hpf_sv(hpf_sj))"), "{source}");
    assert!(source.contains("  i = hpf_final((n), (1), -1)\n"), "{source}");
    // A guarded overwrite: only the iterations whose condition holds send
    // a value, the later of two for one element wins.
    assert!(source.contains("    if ((q(hpf_lx(hpf_d_q, i)) > 0.1)) then\n"), "{source}");
    assert!(source.contains("        hpf_sv(hpf_sk) = hpf_sv(hpf_sj)\n"), "{source}");
    assert!(source.contains("    rho(hpf_lx(hpf_d_rho, hpf_si(hpf_sk))) = hpf_sv(hpf_sk)\n"), "{source}");
}

/// A REDISTRIBUTE whose block size is a variable: the backend lays the
/// arrays out with the value the last statement naming the variable
/// before the directive gives it; a variable set otherwise (in a loop,
/// by a READ) keeps the error at the directive.
#[test]
fn block_sizes_of_remaps_take_the_plain_value_of_their_variable() {
    let program = |set: &str| {
        format!(
            "program r
  implicit none
  integer, parameter :: n = 16
  integer :: a(n), nb, i
!HPF$ DYNAMIC A
!HPF$ DISTRIBUTE A(BLOCK)
  a = 1
  nb = 5
  print *, nb
{set}
!HPF$ REDISTRIBUTE A(CYCLIC(nb))
  do i = 1, n
    a(i) = a(i) + i
  end do
  print *, a
end program r
"
        )
    };
    let (notes, source) = lower(&program("  nb = 2 * 3 - 1"));
    assert!(notes.is_empty(), "{notes:?}");
    // The layout after the remap is CYCLIC(5).
    assert!(source.contains("hpf_d_hpf_m_a = hpf_make_desc(1, 16, 0, 1, 16, 5, 1)"), "{source}");
    for set in ["  do i = 1, 2\n    nb = i\n  end do", "  read *, nb", "  call setup(nb)", "  nb = 2\n10 continue"] {
        let text = program(set);
        let analysis = analysis::analyze(&text, SourceForm::Free, ModelConfig { number_of_processors: None });
        let errors = crate::lower(&analysis, &text).err().unwrap_or_default();
        assert!(
            errors.iter().any(|it| it.message.starts_with("the block size of this distribution is not a constant")),
            "{set}: {errors:?}"
        );
    }
}

/// An INDEPENDENT loop that writes a neighbour of its home element (the
/// swap of an odd-even transposition sort) writes it in the shadow, fetched
/// first, and sends it to its owner after the loop; a LOGICAL flag the loop
/// only sets to `.true.` ends true on every process when any set it; a
/// NEW scalar is private. Without INDEPENDENT the loop stays off the
/// owner-computes form.
#[test]
fn independent_loops_send_the_neighbours_they_write_home() {
    let program = |directive: &str| {
        format!(
            "program oe
  implicit none
  integer, parameter :: n = 40
  integer :: key(n), tmp, i, phase
  logical :: swapped
!HPF$ DISTRIBUTE KEY(BLOCK)
  key = 3
  swapped = .false.
  do phase = 1, 2
{directive}
    do i = phase, n-1, 2
      if (key(i) > key(i+1)) then
        tmp = key(i)
        key(i) = key(i+1)
        key(i+1) = tmp
        swapped = .true.
      end if
    end do
  end do
  print *, key, swapped
end program oe
"
        )
    };
    let (notes, source) = lower(&program("!HPF$ INDEPENDENT, NEW(TMP)"));
    assert!(notes.is_empty(), "{notes:?}");
    assert!(
        source.contains(
            "    call hpf_fetch_i4_11(key, hpf_d_key, min(hpf_lo, hpf_hi) + (1), max(hpf_lo, hpf_hi) + (1))\n"
        ),
        "{source}"
    );
    assert!(source.contains("  call hpf_send_home_i4(key, hpf_d_key, hpf_lo + (1), hpf_hi + (1), 2)\n"), "{source}");
    assert!(
        source.contains("  call MPI_Allreduce(MPI_IN_PLACE, swapped, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD)\n"),
        "{source}"
    );
    let (notes, source) = lower(&program(""));
    assert!(!notes.is_empty(), "{source}");
    assert!(!source.contains("hpf_send_home"), "{source}");
}

/// By default a floating-point SUM and a loop sum run in parallel, their
/// partials combined in rank order; ordered reductions chain them.
#[test]
fn floating_point_reductions_are_parallel_unless_ordered() {
    let text = "program p
  implicit none
  integer :: i
  double precision :: x(100), s
!HPF$ DISTRIBUTE X(BLOCK)
  x = 1.0d0
  s = 0.0d0
  do i = 1, 100
    s = s + x(i)
  end do
  print *, s, sum(x)
end program p
";
    let analysis = analysis::analyze(text, SourceForm::Free, ModelConfig { number_of_processors: None });
    let parallel = crate::lower_with(&analysis, text, &crate::LowerOptions::default()).unwrap().source;
    assert_eq!(parallel.matches("call hpf_combine_r8(").count(), 2, "{parallel}");
    assert!(!parallel.contains("hpf_chain_") && !parallel.contains("hpf_pass_"), "{parallel}");
    let ordered = lower(text).1;
    assert!(!ordered.contains("hpf_combine_"), "{ordered}");
    assert_eq!(ordered.matches("call hpf_chain_send_r8(").count(), 2, "{ordered}");
}

/// An uncounted time loop (`DO` ... `IF (...) EXIT` ... `END DO`) runs on
/// every process; the periodic boundary columns of a `(*, BLOCK)` array
/// are sent by their owner to the owner of the column they are copied to
/// (no gather, no shadow area as wide as the array), and so is a corner
/// element.
#[test]
fn uncounted_time_loops_with_periodic_boundary_columns_run_on_every_process() {
    let (notes, source) = lower(
        "program w
  implicit none
  integer, parameter :: m = 8, n = 12
  double precision :: h(m+1, n+1), hn(m+1, n+1)
  integer :: i, j, step
!HPF$ DISTRIBUTE (*, BLOCK) :: h, hn
  h = 1.d0
  step = 0
  do
    if (step >= 5) exit
    step = step + 1
!HPF$ INDEPENDENT, NEW(i)
    do j = 2, n
      do i = 1, m
        hn(i, j) = 0.5d0 * (h(i, j-1) + h(i, j+1))
      end do
    end do
    hn(1:m, 1) = hn(1:m, n)
    hn(1:m, n+1) = hn(1:m, 2)
    hn(m+1, n+1) = hn(1, 1)
    h = hn
  end do
  print *, sum(h)
end program w
",
    );
    assert_eq!(notes, Vec::<String>::new());
    assert!(source.contains("  ! hpf-ls: every process runs this loop\n  do\n"), "{source}");
    assert_eq!(source.matches("the owner of the slice of hn computes it").count(), 3, "{source}");
    assert!(source.contains("      hpf_v0 = hn(1:m, n)\n"), "{source}");
    assert!(!source.contains("call hpf_gather"), "{source}");
    // The stencil's neighbour columns only: the corner moves alone.
    assert!(source.contains("call hpf_alloc_bounds(hpf_d_h, 1, 1, hpf_lo, hpf_hi)"), "{source}");
}

/// The runtime's routines compile for every element type it knows (each
/// integer, real, complex and logical kind, and a CHARACTER length), with
/// the `mpi_f08` datatypes `element_type.rs` names; fails without `mpif90`.
#[test]
fn the_runtime_compiles_for_every_element_type() {
    use std::process::Command;
    assert!(
        Command::new("mpif90").arg("--version").output().is_ok_and(|it| it.status.success()),
        "this test needs mpif90: apt-get install -y gfortran libopenmpi-dev openmpi-bin"
    );
    let character = crate::element_type::ElementType { base: crate::element_type::Base::Character, kind: 8 };
    let mut uses = String::new();
    for element in crate::element_type::ElementType::fixed().chain([character]) {
        for routine in ["fetch_{}_11", "gather_{}_21", "fetch_{}_312", "remote_read_{}", "permute_{}", "send_home_{}"]
            .into_iter()
            .chain(["send_to_owners_{}", "copy_in_{}", "combine_{}", "extremum_{}", "chain_recv_{}", "pass_{}"])
        {
            uses.push_str(&format!("hpf_{}(\n", routine.replace("{}", &element.suffix())));
        }
    }
    let runtime = crate::runtime::runtime_for(&uses);
    assert!(runtime.contains("subroutine hpf_fetch_c8_11(") && runtime.contains("function hpf_mpi_ch8()"));
    assert!(runtime.contains("subroutine hpf_combine_c4(") && !runtime.contains("subroutine hpf_combine_l1("));
    assert!(runtime.contains("subroutine hpf_extremum_r16(") && !runtime.contains("subroutine hpf_extremum_c8("));
    let dir = std::env::temp_dir().join(format!("hpf-ls-every-type-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("runtime.f90"), runtime).unwrap();
    let build = Command::new("mpif90").args(["-c", "runtime.f90"]).current_dir(&dir).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(build.status.success(), "{}", String::from_utf8_lossy(&build.stderr));
}

#[test]
fn an_outer_loop_of_a_nest_refetches_what_its_sweeps_wrote() {
    // Red-black sweeps: the second reads the first's new values across the
    // block boundary, so the halo is fetched in every sweep, not once.
    let (notes, source) = lower(&program(
        "  u = 1.0
  do step = 0, 1
!HPF$ INDEPENDENT
    do i = 1 + step, n, 2
      u(i) = 0.5 * (u(i-1) + u(i+1))
    end do
  end do
  print *, sum(u)
",
    ));
    assert_eq!(notes, Vec::<String>::new());
    let sweeps = source.find("  do step = 0, 1\n").expect("the sweeps run on every process");
    let fetch = source.find("call hpf_fetch_r4_11(u, hpf_d_u,").expect("a halo fetch");
    assert!(sweeps < fetch, "{source}");
}

/// A FORALL construct whose assignments write arrays mapped differently
/// becomes one FORALL per assignment (`split_loops.rs`), each run by the
/// owners of its own left side; not when its mask reads an array it writes.
#[test]
fn forall_constructs_writing_arrays_mapped_differently_are_split() {
    let program = |mask: &str| {
        format!(
            "program f
  implicit none
  integer, parameter :: n = 12
  integer :: a(n, n), b(n, n), i, j
!HPF$ DISTRIBUTE a(BLOCK, *)
!HPF$ DISTRIBUTE b(*, CYCLIC)
  a = 0
  b = 0
  forall (i = 1:n, j = 1:n{mask})
    a(i, j) = i + 2*j
    b(i, j) = 3*i - j
  end forall
  print *, sum(a), sum(b)
end program f
"
        )
    };
    let (notes, source) = lower(&program(""));
    assert!(notes.is_empty(), "{notes:?}");
    assert!(source.contains("a(i, j) = i + 2*j\n  end forall\n"), "{source}");
    let (notes, _) = lower(&program(", a(i, j) == 0"));
    assert!(notes.iter().any(|it| it.contains("runs on one process")), "{notes:?}");
}

/// Equal shifts of an array in one statement and in the statements after it
/// share one temporary (one exchange) until the array is assigned; a CSHIFT
/// along both dimensions shifts the distributed one first and so reuses
/// that temporary, then reads it in sections along the dimension that is
/// not distributed (no temporary); EOSHIFTs keep their order; temporaries
/// nothing reads any more are assigned anew (three arrays).
#[test]
fn equal_shifts_share_one_temporary_until_their_array_is_assigned() {
    let text = "program p
  implicit none
  integer, parameter :: n = 8
  real :: a(n, n), b(n, n), c(n, n)
!HPF$ DISTRIBUTE (*, BLOCK) :: a, b, c
  a = 1.0
  b = a + cshift(a, -1, 2) + cshift(cshift(a, -1, 1), -1, 2)
  c = cshift(a, -1, 2) * b
  a = c
  c = cshift(a, -1, 2) + eoshift(eoshift(a, 1, 2.0, 1), -1, 3.0, 2)
  print *, c(1, 1)
end program p
";
    let (_, source) = lower(text);
    let shifts: Vec<&str> = source.lines().filter(|it| it.contains("! hpf-ls: hpf_t")).collect();
    let expected = [
        "hpf_t1 = cshift(a, -1, 2)",
        // The right operand first, once c = cshift(a, -1, 2) * b has read hpf_t1.
        "hpf_t1 = eoshift(a, 1, 2.0, 1)",
        "hpf_t3 = eoshift(hpf_t1, -1, 3.0, 2)",
        "hpf_t4 = cshift(a, -1, 2)",
    ];
    for piece in [
        "owner computes b(1:1, :) = a(1:1, :) + hpf_t1(1:1, :) + hpf_t1(8:8, :)",
        "owner computes b(2:8, :) = a(2:8, :) + hpf_t1(2:8, :) + hpf_t1(1:7, :)",
    ] {
        assert!(source.contains(piece), "{source}");
    }
    // hpf_t4 is read in place from the shadow of a: not allocated.
    assert_eq!(source.matches("allocate (hpf_t").count(), 2, "{source}");
    assert_eq!(shifts.len(), expected.len(), "{source}");
    for (line, expected) in shifts.iter().zip(expected) {
        assert!(line.contains(expected), "{line} is not {expected}:\n{source}");
    }
    assert!(
        source.contains("c(:, hpf_lo:hpf_hi:1) = a(:,hpf_lo+(-1):hpf_hi+(-1):1) * b(:, hpf_lo:hpf_hi:1)"),
        "{source}"
    );
}

#[test]
fn common_blocks_with_distributed_arrays_become_modules_every_unit_uses() {
    let text = "program p
  integer :: a(8), nstep, istep
  real :: x(8)
!HPF$ DISTRIBUTE a(BLOCK)
!HPF$ ALIGN x(i) WITH a(i)
  common /f/ a, nstep, x
  nstep = 3
  do istep = 1, nstep
    call s()
  end do
  print *, sum(a), sum(x)
end program p
subroutine s()
  integer :: b(8), n
  real :: y(8)
  common /f/ b, n, y
!HPF$ DISTRIBUTE b(BLOCK)
!HPF$ ALIGN y(i) WITH b(i)
  integer :: i
  do i = 1, 8
    b(i) = b(i) + i
    y(i) = 0.5 * b(i)
  end do
end subroutine s
";
    let (notes, source) = lower(text);
    assert!(source.contains("module hpf_common_f"), "{source}");
    assert!(!source.to_ascii_lowercase().contains("common /f/"), "{source}");
    // The subroutine works on the module's names, on every process.
    assert!(
        source.contains("a(i) = a(i) + i") || source.contains("a(I) = a(I) + I") || source.contains("a(i)"),
        "{source}"
    );
    assert!(!notes.iter().any(|it| it.contains("runs on one process")), "{notes:?}");
    // Aligned with a template distributed onto an arrangement: both go into the module.
    let text = "program p
  integer, parameter :: n = 8
  real :: u(n, n)
  integer :: k
  common /g/ u
!HPF$ PROCESSORS procs(NUMBER_OF_PROCESSORS())
!HPF$ TEMPLATE grid(n, n)
!HPF$ DISTRIBUTE grid(*, BLOCK) ONTO procs
!HPF$ ALIGN u(i, j) WITH grid(i, j)
  u = 1.0
  do k = 1, 2
    call s()
  end do
  print *, sum(u)
end program p
subroutine s()
  real :: v(8, 8)
  common /g/ v
!HPF$ PROCESSORS q(NUMBER_OF_PROCESSORS())
!HPF$ TEMPLATE t(8, 8)
!HPF$ DISTRIBUTE t(*, BLOCK) ONTO q
!HPF$ ALIGN v(i, j) WITH t(i, j)
  v = 2.0 * v
end subroutine s
";
    let (notes, source) = lower(text);
    assert!(source.contains("module hpf_common_g"), "{source}");
    assert!(!notes.iter().any(|it| it.contains("runs on one process")), "{notes:?}");
}

/// A reduction of a section of an array distributed in two dimensions may
/// take run-time strides (each process's part starts at its first owned
/// index congruent to the section's start) and one element along a
/// distributed dimension (the section `K:K` there, empty off its owner),
/// so a loop accumulating such sums runs on every process.
/// `lower` without ordered reductions (the default of `hpf-ls build`).
fn lower_unordered(text: &str) -> (Vec<String>, String) {
    let analysis = analysis::analyze(text, SourceForm::Free, ModelConfig { number_of_processors: None });
    let generated = crate::lower_with(&analysis, text, &crate::LowerOptions::default()).expect("lowered");
    let index = LineIndex::new(text);
    let notes = generated
        .notes
        .iter()
        .map(|it| format!("{}: {}", index.line_col(text, it.range.start).0 + 1, it.message))
        .collect();
    (notes, generated.source)
}

#[test]
fn grid_reductions_take_run_time_strides_and_single_elements() {
    let (notes, source) = lower_unordered(
        "program p
  implicit none
  integer, parameter :: n = 37
  double precision :: grid(n, 13), w(n, 13), s
  integer :: k, m
!HPF$ PROCESSORS Q(2, 2)
!HPF$ DISTRIBUTE (BLOCK, BLOCK) ONTO Q :: GRID
!HPF$ ALIGN W(I, J) WITH GRID(I, J)
  grid = 1.0d0
  w = 2.0d0
  s = 0.0d0
  m = 0
  do k = 1, 3
    s = s + sum(grid(n:1:-k, 2*k) * w(n:1:-k, 2*k))
    m = m + count(w(k, 1:13:k) > 0.0d0)
  end do
  print *, s, m
end program p
",
    );
    assert_eq!(notes, Vec::<String>::new());
    assert!(source.contains("call hpf_local_bounds(hpf_d_grid(1), 0, (n), (1), (-k), hpf_lo, hpf_hi)"), "{source}");
    assert!(source.contains("call hpf_local_bounds(hpf_d_grid(2), 0, (2*k), (2*k), 1, hpf_lo2, hpf_hi2)"), "{source}");
    assert!(
        source.contains("sum(grid(hpf_lo:hpf_hi:(-k), hpf_lo2:hpf_hi2:1) * w(hpf_lo:hpf_hi:(-k), hpf_lo2:hpf_hi2:1))"),
        "{source}"
    );
    assert!(source.contains("count(w(hpf_lo:hpf_hi:1, hpf_lo2:hpf_hi2:(k)) > 0.0d0)"), "{source}");
    assert!(!source.contains("hpf_gather"), "{source}");
    // DOT_PRODUCT takes rank-1 arguments: one element along a distributed
    // dimension is not made a section of it.
    let (notes, _) = lower_unordered(
        "program p
  implicit none
  double precision :: grid(8, 8), s
!HPF$ PROCESSORS Q(2, 2)
!HPF$ DISTRIBUTE (BLOCK, BLOCK) ONTO Q :: GRID
  grid = 1.0d0
  s = dot_product(grid(:, 3), grid(:, 4))
end program p
",
    );
    assert_eq!(notes.len(), 1, "{notes:?}");
}

/// A loop reducing into one element invariant in it, each term on the owner
/// of the loop's element (`Y(I) = Y(I) - A(I,J) * Y(J)`, A's columns CYCLIC,
/// Y aligned with them): the enclosing loop runs on every process, the
/// terms on their owners, the partials combined (default) or the running
/// value passed from owner to owner (ordered reductions). A term that may
/// read the target element, or reads off the loop's element, is left to
/// the other rules.
#[test]
fn reductions_into_one_element_run_on_the_owners_of_their_terms() {
    let text = |inner: &str| {
        format!(
            "program p
  implicit none
  integer, parameter :: n = 12
  double precision :: a(n, n), y(n), s
  integer :: i, j
!HPF$ DISTRIBUTE A(*, CYCLIC)
!HPF$ ALIGN Y(I) WITH A(*, I)
  a = 1.0d0
  y = 2.0d0
  do i = n, 1, -1
    y(i) = 0.5d0 * y(i)
    do j = {inner}
      y(i) = max(y(i), a(i, j) * y(j))
    end do
    y(i) = y(i) / a(i, i)
  end do
  s = 0.0d0
  do j = 1, n
    s = s - a(3, j) * y(j)
  end do
  print *, y(1), s
end program p
"
        )
    };
    let program = text("i + 1, n");
    let (notes, source) = lower_unordered(&program);
    assert!(notes.iter().all(|it| !it.contains("runs on one process")), "{notes:?}");
    assert!(source.contains("! hpf-ls: one element reduced over j: each process its own j, then combined"), "{source}");
    assert!(source.contains("hpf_r1 = -huge(hpf_r1)"), "{source}");
    assert!(
        source.contains(
            "if (hpf_owns(hpf_d_a, j)) hpf_r1 = max(hpf_r1, a(i, hpf_lx(hpf_d_a, j)) * y(hpf_lx(hpf_d_y, j)))"
        ),
        "{source}"
    );
    assert!(source.contains("if (hpf_owns(hpf_d_y, i)) y(hpf_lx(hpf_d_y, i)) = max(y(hpf_lx(hpf_d_y, i)), hpf_r1)"));
    // `y(i) / a(i, i)`: a's column i lives with y(i), no fetch.
    assert!(source.contains("y(hpf_lx(hpf_d_y, i)) = y(hpf_lx(hpf_d_y, i)) / a(i, hpf_lx(hpf_d_a, i))"), "{source}");
    assert!(!source.contains("hpf_gather"), "{source}");
    let (notes, ordered) = lower(&program);
    assert!(notes.iter().all(|it| !it.contains("runs on one process")), "{notes:?}");
    assert!(ordered.contains("  hpf_cprev = hpf_owner(hpf_d_y, i)\n"), "{ordered}");
    assert!(
        ordered.contains(
            "if (hpf_cprev /= hpf_owner(hpf_d_y, i)) call hpf_pass_r8(hpf_r1, hpf_cprev, hpf_owner(hpf_d_y, i))"
        ),
        "{ordered}"
    );
    // The scalar: along the chain, then broadcast by the last owner.
    assert!(ordered.contains("! hpf-ls: s reduced over j in the sequential order"), "{ordered}");
    assert!(ordered.contains(", 1, MPI_DOUBLE_PRECISION, hpf_cprev, MPI_COMM_WORLD)\n  s = hpf_r"), "{ordered}");
    // `j = i, n` reads y(i) itself: not this rule.
    let (_, source) = lower_unordered(&text("i, n"));
    assert!(!source.contains("one element reduced over j"), "{source}");
}

/// A section a DO nest takes at its indices (`r(:, i, k)`) becomes a loop
/// over its elements, so the nest runs owner-computes with one fetch
/// (on one distributed dimension and on a 2-D grid); a section the loops do
/// not move, one whose right side reads the left side's array elsewhere,
/// and one calling a function that is not elemental stay array assignments.
#[test]
fn sections_taken_at_a_nests_indices_become_loops_over_their_elements() {
    let text = "\
program p
  implicit none
  integer, parameter :: n = 12
  double precision :: u(5, n, n), r(5, n, n), v(4, n, n), b(4, n, n), c(5), s(5, n, n)
  integer :: i, k
!HPF$ PROCESSORS P(4)
!HPF$ PROCESSORS G(2, 2)
!HPF$ DISTRIBUTE u(*, *, BLOCK) ONTO P
!HPF$ ALIGN r(:, :, :) WITH u(:, :, :)
!HPF$ ALIGN s(:, :, :) WITH u(:, :, :)
!HPF$ DISTRIBUTE v(*, BLOCK, BLOCK) ONTO G
!HPF$ ALIGN b(:, :, :) WITH v(:, :, :)
  u = 1.0d0
  b = 2.0d0
  c = 0.5d0
  do k = 2, n - 1
    do i = 2, n - 1
      r(:, i, k) = u(:, i, k+1) - u(:, i, k-1) + c * u(1:5, i-1, k)
      v(2:4, i, k) = b(1:3, i, k) + b(2:4, i-1, k-1) - v(2:4, i, k)
    end do
  end do
  do k = 1, 3
    s(:, 1:n, 1:n) = r(:, 1:n, 1:n)
  end do
  do k = 2, n
    s(2:5, 1, k) = s(1:4, 1, k)
    s(:, 2, k) = sum(r(:, 2, k)) + s(:, 2, k)
  end do
  print *, sum(r), sum(v), sum(s)
end program p
";
    let (notes, source) = lower(text);
    // The sections' elements, the remote ones read from the fetched boxes.
    assert!(source.contains("do hpf_s1 = 1, 5") && source.contains("do hpf_s1 = 2, 4"), "{source}");
    assert!(source.contains("r(hpf_s1, i, k) = hpf_box_1(hpf_at_3(hpf_fs_1, hpf_s1, i, k+1))"), "{source}");
    assert!(source.contains("+ c(hpf_s1) * u(hpf_s1, i-1, k)"), "{source}");
    assert!(source.contains("v(hpf_s1, i, k) = b(hpf_s1 - 1, i, k) + hpf_box_3("), "{source}");
    // Two homes laid out differently: the fetched nest, on every process.
    assert!(source.contains("! hpf-ls: owner computes this nest, its remote reads fetched first"), "{source}");
    // Not moved by the loops, reading itself elsewhere, or calling SUM: as written.
    assert!(source.contains("s(:, 1:n, 1:n)") || source.contains("owner computes s(:, 1:n, 1:n)"), "{source}");
    assert!(!source.contains("s(hpf_s1"), "{source}");
    assert_eq!(source.matches("the owner of the slice of s computes it").count(), 2, "{source}");
    assert!(!notes.iter().any(|it| it.contains("runs on one process")), "{notes:?}");
}

/// An owner-computes DO nest of step 1 over a CYCLIC dimension that fetches
/// nothing computes its courses' bounds and the home cells' shift by
/// arithmetic on a frame computed once (`courses.rs`), no call per course.
#[test]
fn cyclic_nests_of_step_one_compute_course_bounds_on_a_frame() {
    let source = |body: &str| {
        lower(&format!(
            "program s
  implicit none
  integer, parameter :: n = 20
  integer :: c(0:n), i
!HPF$ DISTRIBUTE C(CYCLIC(3))
{body}  print *, c
end program s
"
        ))
        .1
    };
    let text = source("  do i = 1, n\n    c(i - 1) = i\n  end do\n");
    assert!(
        text.contains(
            "  call hpf_course_frame(hpf_d_c, -1, hpf_cp, hpf_cb, hpf_cm)
  do hpf_c = 0, hpf_courses(hpf_d_c) - 1
    hpf_lo = max((1), hpf_c * hpf_cp + hpf_cb)
    hpf_hi = min((n), hpf_c * hpf_cp + hpf_cb + hpf_cm - 1)
    block
    integer :: hpf_cs_1
    hpf_cs_1 = hpf_c * (hpf_cm - hpf_cp) - hpf_cb
"
        ),
        "{text}"
    );
    assert!(!text.contains("call hpf_course_bounds"), "{text}");
    // Another step keeps the runtime's bounds.
    let text = source("  do i = n, 1, -1\n    c(i) = i\n  end do\n");
    assert!(text.contains("call hpf_course_bounds(hpf_d_c, 0, (n), (1), -1, hpf_c, hpf_lo, hpf_hi)"), "{text}");
    assert!(!text.contains("hpf_course_frame"), "{text}");
}

/// Sections taken at a nest's indices become loops in every unit: a module
/// subroutine on module arrays, an internal subroutine without a
/// specification part on its host's arrays (its declaration after the
/// header), an external subroutine on a distributed dummy; each copy runs
/// owner-computes on every process.
#[test]
fn sections_in_subroutines_become_loops_over_their_elements() {
    let text = "\
module m
  implicit none
  integer, parameter :: n = 8
  double precision :: u(5, n, n), r(5, n, n)
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE u(*, *, BLOCK) ONTO P
!HPF$ ALIGN r(:, :, :) WITH u(:, :, :)
contains
  subroutine rhs(c)
    double precision, intent(in) :: c(5)
    integer :: i, k
    do k = 2, n - 1
      do i = 1, n
        r(:, i, k) = u(:, i, k+1) - u(:, i, k-1) + c * u(:, i, k)
      end do
    end do
  end subroutine rhs
end module m

subroutine scale(w, f)
  implicit none
  double precision :: w(5, 8, 8), f
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE w(*, *, BLOCK) ONTO P
  integer :: i, k
  do k = 1, 8
    do i = 1, 8
      w(:, i, k) = f * w(:, i, k)
    end do
  end do
end subroutine scale

program p
  use m
  implicit none
  interface
    subroutine scale(w, f)
      double precision :: w(5, 8, 8), f
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE w(*, *, BLOCK) ONTO P
    end subroutine scale
  end interface
  double precision :: c(5)
  integer :: i, k
  c = 0.5d0
  call fill()
  call rhs(c)
  call scale(r, 2.0d0)
  print *, sum(r)
contains
  subroutine fill()
    do k = 1, n
      do i = 1, n
        u(:, i, k) = dble(i + k) * c
      end do
    end do
  end subroutine fill
end program p
";
    let (notes, source) = lower(text);
    assert!(!notes.iter().any(|it| it.contains("runs on one process")), "{notes:?}");
    assert!(
        source.contains("r(hpf_s1, i, k) = u(hpf_s1, i, k+1) - u(hpf_s1, i, k-1) + c(hpf_s1) * u(hpf_s1, i, k)"),
        "{source}"
    );
    assert!(source.contains("w(hpf_s1, i, k) = f * w(hpf_s1, i, k)"), "{source}");
    assert!(source.contains("u(hpf_s1, i, k) = dble(i + k) * c(hpf_s1)"), "{source}");
    // Each copy declares its index before its first statement.
    let fill = &source[source.find("subroutine hpf_p").expect("copies")..];
    assert!(fill.matches("integer :: hpf_s1\n").count() >= 3, "{source}");
    assert_eq!(source.matches("! hpf-ls: owner computes do k = ").count(), 3, "{notes:?}\n{source}");
}

/// Fixed form: the statement's continuation lines are joined and the loops
/// written again as fixed-form lines within 72 columns (sequence numbers
/// past them dropped with the statement), in a subroutine on COMMON arrays.
#[test]
fn sections_in_fixed_form_become_loops_within_the_line_length() {
    let text = "      PROGRAM F
      INTEGER N
      PARAMETER (N = 8)
      DOUBLE PRECISION U(5, N, N), R(5, N, N)
      COMMON /FLD/ U, R
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE U(*, *, BLOCK) ONTO P
!HPF$ DISTRIBUTE R(*, *, BLOCK) ONTO P
      U = 1.0D0
      CALL RHS
      PRINT *, SUM(R)
      END

      SUBROUTINE RHS
      INTEGER N
      PARAMETER (N = 8)
      DOUBLE PRECISION U(5, N, N), R(5, N, N)
      COMMON /FLD/ U, R
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE U(*, *, BLOCK) ONTO P
!HPF$ DISTRIBUTE R(*, *, BLOCK) ONTO P
      INTEGER I, K
      DO 20 K = 2, N - 1
         DO 10 I = 1, N
            R(:, I, K) = U(:, I, K+1) - 2.0D0 * U(:, I, K) + U(:, I,    RHS00010
C           A comment between the lines
     &  K-1) + 0.25D0 * (U(:, I, K+1) - U(:, I, K-1))   ! trailing      RHS00020
   10    CONTINUE
   20 CONTINUE
      END
";
    let form = SourceForm::Fixed { line_length: 72 };
    let analysis = analysis::analyze(text, form, ModelConfig { number_of_processors: None });
    let edits = crate::scalarize::scalarize(&analysis, text).expect("scalarized");
    let mut rewritten = String::new();
    let mut at = 0;
    for (range, replacement) in edits {
        rewritten.push_str(&text[at..range.start]);
        rewritten.push_str(&replacement);
        at = range.end;
    }
    rewritten.push_str(&text[at..]);
    assert!(rewritten.lines().all(|it| it.chars().count() <= 72), "{rewritten}");
    assert!(
        rewritten.contains(
            "            do hpf_s1 = 1, 5
              R(hpf_s1, I, K) = U(hpf_s1, I, K+1) - 2.0D0 * U(hpf_s1, I,
     &  K) + U(hpf_s1, I, K-1) + 0.25D0 * (U(hpf_s1, I, K+1) - U(hpf_s1,
     &  I, K-1))
            end do
   10    CONTINUE"
        ),
        "{rewritten}"
    );
    assert!(rewritten.contains("      INTEGER I, K\n      integer hpf_s1\n"), "{rewritten}");
    let reanalysed = analysis.reanalyze(&rewritten);
    assert!(!reanalysed.diagnostics.iter().any(|it| it.severity == syntax::Severity::Error), "{rewritten}");
    let generated = crate::lower(&analysis, text).expect("lowered");
    assert!(!generated.notes.iter().any(|it| it.message.contains("runs on one process")), "{:?}", generated.notes);
    assert!(generated.source.contains("! hpf-ls: owner computes DO 20 K = 2, N - 1"), "{}", generated.source);
}

/// A section whose right side reads its own array at a section provably
/// disjoint from it (a scalar subscript differing by a constant: a
/// recurrence along K) becomes loops; on a (BLOCK, BLOCK, *) grid the nest
/// runs owner-computes on every process, the recurrence along the
/// undistributed dimension in order. A read that may overlap, or one apart
/// along a distributed dimension only (moved as a slice), stays.
#[test]
fn sections_reading_their_array_at_disjoint_sections_become_loops() {
    let text = "\
program g
  implicit none
  integer, parameter :: n = 8
  double precision :: q(n, n, n)
  integer :: k
!HPF$ PROCESSORS G(2, 2)
!HPF$ DISTRIBUTE q(BLOCK, BLOCK, *) ONTO G
  q = 1.0d0
  do k = 2, n
    q(:, :, k) = q(:, :, k) + 0.5d0 * q(:, :, k-1)
  end do
  do k = 1, n
    q(2:n, 1, k) = q(1:n-1, 1, k) * 2.0d0
  end do
  do k = 1, n
    q(:, 2, k) = q(:, 1, k) + 1.0d0
  end do
  print *, sum(q)
end program g
";
    let (notes, source) = lower(text);
    assert!(
        source.contains("q(hpf_s1, hpf_s2, k) = q(hpf_s1, hpf_s2, k) + 0.5d0 * q(hpf_s1, hpf_s2, k-1)"),
        "{source}"
    );
    assert!(source.contains("! hpf-ls: owner computes do k = 2, n (on a 2-D grid)"), "{source}");
    // Overlapping, or apart along a distributed dimension only: as written.
    assert!(!source.contains("q(hpf_s1 - 1"), "{source}");
    assert!(!source.contains("q(hpf_s1, 2, k)"), "{source}");
    assert!(!notes.iter().any(|it| it.contains("line 10") && it.contains("one process")), "{notes:?}");
}

#[test]
fn labels_of_a_replicated_if_construct_stay_for_their_go_tos() {
    let (_, source) = lower(&program(
        "  u = 0.0
  step = 0
100 if (step < 5) then
    step = step + 1
    if (step == 3) go to 30
    un = u + 1.0
    u = un
    go to 100
30 end if
  print *, sum(u)
",
    ));
    assert!(source.contains("100   if ((step < 5)) then\n"), "{source}");
    assert!(source.contains("30   end if\n"), "{source}");
}

#[test]
fn a_read_moving_with_the_loop_index_by_an_unknown_amount_is_no_broadcast() {
    let (notes, source) = lower(&program(
        "  u = 1.0
  step = 3
!HPF$ INDEPENDENT
  do i = 1, n - step
    un(i) = u(i + step) - u(i)
  end do
  print *, un(1)
",
    ));
    // One element broadcast before the loop would stand for every u(i + step).
    assert!(!source.contains("hpf_bc_"), "{source}");
    assert!(!notes.iter().any(|it| it.contains("one process")), "{notes:?}");
}

#[test]
fn a_namelist_read_hands_the_groups_variables_on() {
    let (_, source) = lower(&program(
        "  real :: dt
  namelist /run/ step, &
     dt /other/ total
  read (*, nml=run)
  u = step * dt
  print *, sum(u)
",
    ));
    assert!(source.contains("read (*, nml=run)\n  end if\n"), "{source}");
    for name in ["step", "dt"] {
        assert!(source.contains(&format!("call MPI_Bcast({name}, storage_size({name}) / 8")), "{source}");
    }
    assert!(!source.contains("MPI_Bcast(total"), "{source}");
}

#[test]
fn a_namelist_read_of_a_distributed_array_is_refused_at_its_statement() {
    let text = format!("{HEADER}  namelist /run/ step, u\n  read (*, nml=run)\n  un = u\nend program p\n");
    let analysis = analysis::analyze(&text, SourceForm::Free, ModelConfig { number_of_processors: None });
    let errors = crate::lower(&analysis, &text).expect_err("a NAMELIST read of a distributed array");
    assert!(
        errors.iter().any(|it| it.message.contains("NAMELIST group `run`: its distributed array `u`")),
        "{errors:?}"
    );
    let line = LineIndex::new(&text).line_col(&text, errors[0].range.start).0 + 1;
    assert_eq!(line, HEADER.lines().count() + 2, "{errors:?}");
}

/// WHEREs whose masks and assigned sections are misaligned (issue 27): the
/// owners of the assigned section compute, the mask's and operands'
/// elements fetched from their owners before the construct, on BLOCK and
/// CYCLIC left sides, with ELSEWHERE. A mask or assignment that reads other
/// processes' elements of an array an earlier assignment of the construct
/// assigns would read stale values: it stays on rank 0, with a note.
#[test]
fn misaligned_wheres_fetch_their_masks_and_operands() {
    let (notes, source) = lower(
        "program p
  implicit none
  integer, parameter :: n = 20
  real :: a(n), b(n), c(n)
  integer :: k(n)
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE a(CYCLIC) ONTO P
!HPF$ DISTRIBUTE b(BLOCK) ONTO P
!HPF$ ALIGN c(i) WITH b(i)
!HPF$ DISTRIBUTE k(CYCLIC(2)) ONTO P
  a = 1.0
  b = 2.0
  c = 3.0
  k = 1
  where (k(1:n-1) > 0) a(2:n) = 1.0
  where (a(2:n) > 0) b(1:n-1) = a(2:n) * c(1:n-1)
  where (a(1:n-2) > 0.5)
    b(3:n) = a(1:n-2) + 1.0
  elsewhere
    b(3:n) = -c(3:n)
  end where
  where (b(2:n) > 0.0)
    a(1:n-1) = b(2:n) * 2.0
  elsewhere (k(2:n) > 1)
    a(1:n-1) = -a(1:n-1)
  end where
  where (c(1:n-1) > 0.0)
    b(2:n) = c(1:n-1)
    c(2:n) = b(1:n-1)
  end where
  print *, a(1), b(2)
end program p
",
    );
    assert_eq!(
        notes,
        ["27: runs on one process: it is not an owner-computes assignment: it reads other processes' elements of b, which an assignment before it in the construct assigns"]
    );
    // The CYCLIC left side course by course from fetched values.
    assert!(source.contains("call hpf_remote_read_i4(k, hpf_d_k, hpf_gi_1, hpf_gv_1)"), "{source}");
    assert!(
        source.contains(
            "where (hpf_gv_1(hpf_m + 1:hpf_m + hpf_k) > 0) a(hpf_lx(hpf_d_a, hpf_lo):hpf_lx(hpf_d_a, hpf_hi):1) = 1.0"
        ),
        "{source}"
    );
    assert!(source.contains("  elsewhere (hpf_gv_2(hpf_m + 1:hpf_m + hpf_k) > 1)\n"), "{source}");
    assert!(source.contains("    a(hpf_lx(hpf_d_a, hpf_lo):hpf_lx(hpf_d_a, hpf_hi):1) = -a(hpf_lx(hpf_d_a, hpf_lo):hpf_lx(hpf_d_a, hpf_hi):1)\n"), "{source}");
    // The BLOCK left side with ELSEWHERE reads the CYCLIC a fetched, the
    // same elements for the mask and the assignment once.
    assert!(source.contains("  where (hpf_gv_1(1:hpf_n) > 0.5)\n    b(hpf_lo:hpf_hi:1) = hpf_gv_1(1:hpf_n) + 1.0\n  elsewhere\n    b(hpf_lo:hpf_hi:1) = -c(hpf_lo:hpf_hi:1)\n"), "{source}");
    // Only the stale construct gathers.
    assert_eq!(source.matches("if (hpf_rank == 0) then\n  where").count(), 1, "{source}");
}

/// 1-D section reductions with run-time strides (issue 27) on BLOCK and
/// CYCLIC arrays, inside a DO loop whose index is the stride: each process
/// reduces its part of the section (`hpf_local_bounds` and
/// `hpf_course_bounds` take the stride at run time); a floating-point SUM
/// in the sequential order passes the running value from owner to owner.
#[test]
fn section_reductions_take_run_time_strides() {
    let text = "program p
  implicit none
  integer, parameter :: n = 20
  real :: x(n)
  integer :: iy(n), ix(n), kk, c
  real :: s
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE x(BLOCK) ONTO P
!HPF$ DISTRIBUTE iy(CYCLIC(3)) ONTO P
!HPF$ ALIGN ix(i) WITH x(i)
  x = 1.0
  iy = 2
  ix = 3
  do kk = 1, 4
    s = sum(x(kk:n:kk))
    c = maxval(iy(n:kk:-kk)) + sum(ix(kk:n:kk), mask=x(kk:n:kk) > 0.0)
    c = c + sum(ix(kk:n:kk+1)) + minval(ix(2:n:kk) + ix(1:n-1:kk))
  end do
  print *, s, c
end program p
";
    let (notes, source) = lower(text);
    assert_eq!(
        notes,
        ["17: runs on one process: it is not an owner-computes assignment: it assigns the replicated variable c from distributed data; ix is read at other elements than the first one's with a run-time stride"]
    );
    assert!(
        source.contains("call hpf_course_bounds(hpf_d_iy, 0, (n), (kk), (-kk), hpf_c, hpf_lo, hpf_hi)"),
        "{source}"
    );
    assert!(source.contains("call hpf_local_bounds(hpf_d_ix, 0, (kk), (n), (kk), hpf_lo, hpf_hi)"), "{source}");
    assert!(source.contains("sum(ix(hpf_lo:hpf_hi:(kk)), mask=x(hpf_lo:hpf_hi:(kk)) > 0.0)"), "{source}");
    assert!(source.contains("SUM in the sequential order: the running value goes from owner to owner"), "{source}");
    assert!(source.contains("do hpf_q1 = kk, n, kk"), "{source}");
}

/// A section shift along the CYCLIC dimension of an array of rank 3
/// (issue 27) becomes the FORALL that means the same: its owners assign,
/// the elements it reads fetched before any is written. A shift along a
/// BLOCK dimension keeps its neighbour fetch, and one along a collapsed
/// dimension is local.
#[test]
fn section_shifts_along_cyclic_dimensions_run_on_the_owners() {
    let (notes, source) = lower(
        "program p
  implicit none
  integer, parameter :: nx = 12
  real :: w(3, nx, 2), v(3, nx, 2), u(nx, 4)
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE w(*, CYCLIC, *) ONTO P
!HPF$ ALIGN v(i, j, l) WITH w(i, j, l)
!HPF$ DISTRIBUTE u(BLOCK, *) ONTO P
  w = 1.0
  v = 2.0
  u = 3.0
  w(:, 2:nx, :) = w(:, 1:nx-1, :) + v(:, 2:nx, :)
  w(2:3, 1:nx:2, 1) = abs(w(1:2, 2:nx:2, 2)) * 0.5
  v(2:3, :, :) = v(1:2, :, :)
  u(2:nx, :) = u(1:nx-1, :)
  print *, w(1, 1, 1), v(2, 2, 2), u(2, 2)
end program p
",
    );
    assert_eq!(
        notes,
        [
            "12: runs on every process: each assignment of this FORALL runs on the owner of its left side, after fetching what w(hpf_fi1,hpf_fi2 - 1,hpf_fi3) read(s) by one all-to-all per reference (inspector/executor)",
            "13: runs on every process: each assignment of this FORALL runs on the owner of its left side, after fetching what w(hpf_fi1 - 1,hpf_fi2 + 1,2) read(s) by one all-to-all per reference (inspector/executor)",
        ]
    );
    assert!(!source.contains("call hpf_gather_r4_32(w"), "{source}");
    assert!(!source.contains("hpf_gather_r4_32(v"), "{source}");
    assert!(!source.contains("hpf_gather_r4_21(u"), "{source}");
}

/// Reductions to one value inside array assignments and WHEREs (issue 27):
/// computed first into a scalar by every process, the assignment by the
/// owners. Not where the type of the value is unsure (an INTEGER array
/// times a real literal), where the reduction reads an enclosing loop's
/// index, with DIM, or in an element assignment.
#[test]
fn reductions_inside_array_assignments_are_computed_first() {
    let (notes, source) = lower(&program(
        "  u = 1.0
  do step = 1, 3
    u = u - sum(u) / n
    un(1:n) = un(1:n) / maxval(abs(u(1:n))) + 0.5
    k = k - count(k > 4)
    where (u > 0.0) u = u - minval(un)
  end do
  u(1:n) = u(1:n) + sum(k * 0.5)
  do i = 1, n
    u(1:n) = u(1:n) / sum(u(1:i))
  end do
  u(1) = u(1) - sum(u)
",
    ));
    assert!(source.contains("real :: hpf_f1\n"), "{source}");
    assert!(source.contains("integer :: hpf_f3\n"), "{source}");
    assert!(source.contains("hpf_f1 = hpf_r"), "{source}");
    assert!(source.contains("u(hpf_lo:hpf_hi:1) = u(hpf_lo:hpf_hi:1) - hpf_f1 / n"), "{source}");
    assert!(source.contains("un(hpf_lo:hpf_hi:1) = un(hpf_lo:hpf_hi:1) / hpf_f2 + 0.5"), "{source}");
    assert!(source.contains("k(hpf_lo:hpf_hi:1) = k(hpf_lo:hpf_hi:1) - hpf_f3"), "{source}");
    assert!(source.contains("hpf_f4"), "{source}");
    assert!(!source.contains("hpf_f5"), "{source}");
    // Inside the time loop nothing runs on one process; the three left
    // alone do, and their notes speak of the user's text.
    let on_rank_zero: Vec<&String> = notes.iter().filter(|it| it.contains("runs on one process")).collect();
    assert!(on_rank_zero.iter().all(|it| !it.contains("hpf_")), "{notes:?}");
    let lines: Vec<&str> = on_rank_zero.iter().map(|it| it.split(':').next().unwrap()).collect();
    assert_eq!(lines, ["17", "18", "21"], "{notes:?}");
}

/// A whole replicated rank-1 array read in a section assignment or a
/// reduction on a BLOCK array (`y = y + 2 * x`, `dot_product(x, y)`, a
/// strided section) or a section of one (`g(1:n)`) is read at the part that
/// goes with each process's own elements (issue 27: it was on rank 0). Not
/// when the shapes differ. (With
/// ordered reductions, DOT_PRODUCT with a replicated operand stays on rank 0.)
#[test]
fn replicated_operands_of_block_sections_are_read_at_the_owners_part() {
    let (notes, source) = lower_unordered(
        "program p
  implicit none
  integer, parameter :: n = 30
  real(8) :: y(n), x(n), w(0:n-1), h(15), g(n+1), s
!hpf$ distribute y(block)
  x = 1.0d0
  w = 2.0d0
  h = 3.0d0
  g = 4.0d0
  y = y + 2.0d0 * x
  y = y * w - x
  y(n:1:-2) = y(n:1:-2) - h
  s = dot_product(x, y)
  y = y + g(1:n)
  y = g
  print *, s, y(1)
end program p
",
    );
    assert!(source.contains("y(hpf_lo:hpf_hi:1) = y(hpf_lo:hpf_hi:1) + 2.0d0 * x(hpf_lo+(0):hpf_hi+(0))"), "{source}");
    assert!(source.contains("* w(hpf_lo+(-1):hpf_hi+(-1)) - x(hpf_lo+(0):hpf_hi+(0))"), "{source}");
    assert!(source.contains("- h(1+(hpf_lo-(30))/(-2):1+(hpf_hi-(30))/(-2))"), "{source}");
    assert!(source.contains("dot_product(x(hpf_lo+(0):hpf_hi+(0)), y(hpf_lo:hpf_hi:1))"), "{source}");
    // A section of a replicated array of the home section's extent is read so too.
    assert!(source.contains("y(hpf_lo:hpf_hi:1) = y(hpf_lo:hpf_hi:1) + g(hpf_lo+(0):hpf_hi+(0))"), "{source}");
    let lines: Vec<&str> = notes.iter().map(|it| it.split(':').next().unwrap()).collect();
    assert_eq!(lines, ["15"], "{notes:?}");
}

/// Reductions inside array assignments and WHEREs are computed first in
/// every unit, not the main program only: a module procedure on module
/// arrays, one on an INHERIT dummy, an external subroutine on a dummy with
/// its own DISTRIBUTE and an internal one on the host's arrays. The copies
/// every process runs compute them in parallel and assign on the owners;
/// a WHERE construct's later assignment that reads what an earlier one
/// assigned keeps its reduction.
#[test]
fn reductions_inside_array_assignments_are_computed_first_in_every_unit() {
    let (notes, source) = lower(
        "module fields
  implicit none
  integer, parameter :: n = 24
  real(8) :: u(n), v(n)
!hpf$ distribute u(block)
!hpf$ align v(i) with u(i)
contains
  subroutine scale_fields()
    u = u / maxval(abs(u))
    where (v > 0.5d0 * maxval(v)) v = v - minval(v)
  end subroutine scale_fields
  subroutine centre(e)
    real(8), intent(inout) :: e(n)
!hpf$ inherit e
    e(2:n-1) = e(2:n-1) - sum(e) / n
  end subroutine centre
end module fields

subroutine project(x, y)
  use fields, only: n
  real(8) :: x(n), y(n)
!hpf$ distribute x(block)
!hpf$ align y(i) with x(i)
  x = x - dot_product(x, y) / dot_product(y, y) * y
end subroutine project

program p
  use fields
  implicit none
  integer :: step
  u = 1.0d0
  v = 2.0d0
  do step = 1, 2
    call scale_fields()
    call centre(u)
    call project(u, v)
    call relax()
  end do
  print *, u(1), v(n)
contains
  subroutine relax()
    where (u > 0.25d0 * maxval(u))
      u = u - minval(v)
      v = v + sum(u)
    elsewhere
      u = u + sum(v)
    end where
  end subroutine relax
end program p
",
    );
    // Scalars numbered across the file, declared in their units.
    for declared in
        ["    real(8) :: hpf_f1\n", "    real(8) :: hpf_f4\n", "  real(8) :: hpf_f5\n", "    real(8) :: hpf_f8\n"]
    {
        assert!(source.contains(declared), "{declared} {source}");
    }
    assert!(source.contains("hpf_f1 = hpf_r"), "{source}");
    assert!(source.contains("u(hpf_lo:hpf_hi:1) = u(hpf_lo:hpf_hi:1) / hpf_f1"), "{source}");
    assert!(source.contains("e(hpf_lo:hpf_hi:1) = e(hpf_lo:hpf_hi:1) - hpf_f4 / n"), "{source}");
    assert!(
        source.contains("x(hpf_lo:hpf_hi:1) = x(hpf_lo:hpf_hi:1) - hpf_f6 / hpf_f5 * y(hpf_lo:hpf_hi:1)"),
        "{source}"
    );
    // In the internal subroutine's construct: the mask's MAXVAL and the first
    // right side's MINVAL move; `sum(u)` after `u` is assigned stays, and the
    // construct runs on one process, its note in the user's terms.
    assert!(source.contains("hpf_f7 = maxval(hpf_g_u)\n    hpf_f8 = minval(hpf_g_v)\n"), "{source}");
    assert!(source.contains("hpf_f8"), "{source}");
    assert!(!source.contains("hpf_f9"), "{source}");
    let on_rank_zero: Vec<&String> = notes.iter().filter(|it| it.contains("runs on one process")).collect();
    assert!(on_rank_zero.iter().all(|it| !it.contains("hpf_")), "{notes:?}");
    let lines: Vec<&str> = on_rank_zero.iter().map(|it| it.split(':').next().unwrap()).collect();
    assert_eq!(lines, ["42"], "{notes:?}");
}

/// Fixed form: a subroutine on COMMON arrays (made module arrays) and one
/// on an INHERIT dummy get their reductions computed first, declared and
/// assigned in fixed-form lines; nothing runs on one process.
#[test]
fn reductions_in_fixed_form_procedures_are_computed_first() {
    let text = "      PROGRAM F
      INTEGER N
      PARAMETER (N = 24)
      DOUBLE PRECISION U(N), R(N)
      COMMON /FLD/ U, R
!HPF$ DISTRIBUTE U(BLOCK)
!HPF$ ALIGN R(I) WITH U(I)
      INTEGER STEP
      U = 1.0D0
      R = 2.0D0
      DO 20 STEP = 1, 3
         CALL NORM
         CALL SCALE(R, N)
   20 CONTINUE
      PRINT *, U(1), R(N)
      END

      SUBROUTINE NORM
      INTEGER N
      PARAMETER (N = 24)
      DOUBLE PRECISION U(N), R(N)
      COMMON /FLD/ U, R
!HPF$ DISTRIBUTE U(BLOCK)
!HPF$ ALIGN R(I) WITH U(I)
      U = U - SUM(U) / N
      WHERE (U .GT. 0.25D0 * MAXVAL(U)) U = U / MAXVAL(ABS(U))
      END

      SUBROUTINE SCALE(X, M)
      INTEGER M
      DOUBLE PRECISION X(M)
!HPF$ INHERIT X
      X = X / SQRT(DOT_PRODUCT(X, X)) + 0.5D0
      END
";
    let form = SourceForm::Fixed { line_length: 72 };
    let analysis = analysis::analyze(text, form, ModelConfig { number_of_processors: None });
    let (hoisted, _) = crate::hoist::rewrite(&analysis, text).expect("rewritten");
    assert!(hoisted.text.contains("      double precision :: hpf_f1\n"), "{}", hoisted.text);
    assert!(hoisted.text.contains("      hpf_f1 = SUM(U)\n      U = U - hpf_f1 / N\n"), "{}", hoisted.text);
    assert!(
        hoisted.text.contains("      hpf_f4 = DOT_PRODUCT(X, X)\n      X = X / SQRT(hpf_f4) + 0.5D0\n"),
        "{}",
        hoisted.text
    );
    let generated = crate::lower(&analysis, text).expect("lowered");
    assert!(!generated.notes.iter().any(|it| it.message.contains("one process")), "{:?}", generated.notes);
}

/// A replicated rank-1 operand of a BLOCK section assignment whose bounds
/// are known at run time only, affine (`z(2:n+1)` with `w(n)`) or with a
/// term of their own that is not (`n/2`), and a section of one (`w(1:n)`),
/// is read at the part that goes with each process's elements; a section
/// of another extent (`w(1:n-1)`) is not.
#[test]
fn replicated_operands_with_run_time_bounds_are_read_at_the_owners_part() {
    let (notes, source) = lower_unordered(
        "module ops
  implicit none
contains
  subroutine stretch(z, w, h, n)
    integer, intent(in) :: n
    real(8), intent(inout) :: z(:)
    real(8), intent(in) :: w(n), h(n/2)
!hpf$ inherit z
    z(2:n+1) = z(2:n+1) * w
    z(1:n/2) = z(1:n/2) + h
    z(n/2+1:n) = z(n/2+1:n) - 0.5d0 * h(1:n - n/2)
  end subroutine stretch
end module ops

program p
  use ops
  implicit none
  integer, parameter :: nmax = 41
  real(8) :: z(nmax), w(nmax)
  integer :: n
!hpf$ distribute z(block)
  n = 36
  z = 1.0d0
  w = 2.0d0
  call stretch(z, w, w, n)
  z(3:n+2) = z(3:n+2) + w(1:n)
  z(3:n+2) = z(3:n+2) + w(1:n-1)
  print *, z(1)
end program p
",
    );
    assert!(source.contains("z(hpf_lo:hpf_hi:1) = z(hpf_lo:hpf_hi:1) * w(hpf_lo+(-1):hpf_hi+(-1))"), "{source}");
    assert!(source.contains("z(hpf_lo:hpf_hi:1) = z(hpf_lo:hpf_hi:1) + h(hpf_lo+(0):hpf_hi+(0))"), "{source}");
    assert!(source.contains("- 0.5d0 * h(hpf_lo+((1)-(n/2+1)):hpf_hi+((1)-(n/2+1)))"), "{source}");
    assert!(source.contains("z(hpf_lo:hpf_hi:1) = z(hpf_lo:hpf_hi:1) + w(hpf_lo+(-2):hpf_hi+(-2))"), "{source}");
    let on_rank_zero: Vec<&str> =
        notes.iter().filter(|it| it.contains("runs on one process")).map(|it| it.split(':').next().unwrap()).collect();
    assert_eq!(on_rank_zero, ["27"], "{notes:?}");
}

/// Fixed form: a replacement that would move text across column 72 (a line
/// with sequence numbers past it) leaves its unit as written; the other
/// units are still rewritten.
#[test]
fn fixed_form_replacements_keep_lines_within_their_length() {
    let text = "      PROGRAM F
      DOUBLE PRECISION U(24)
!HPF$ DISTRIBUTE U(BLOCK)
      U = 1.0D0
      CALL NORM(U)
      CALL SCALE(U)
      PRINT *, U(1)
      END

      SUBROUTINE NORM(X)
      DOUBLE PRECISION X(24)
!HPF$ INHERIT X
      X = X / MAXVAL(X)                                                 NRM00010
      END

      SUBROUTINE SCALE(X)
      DOUBLE PRECISION X(24)
!HPF$ INHERIT X
      X = X / MAXVAL(X)
      END
";
    let form = SourceForm::Fixed { line_length: 72 };
    let analysis = analysis::analyze(text, form, ModelConfig { number_of_processors: None });
    let (hoisted, _) = crate::hoist::rewrite(&analysis, text).expect("rewritten");
    assert!(
        hoisted.text.contains("      X = X / MAXVAL(X)                                                 NRM00010\n"),
        "{}",
        hoisted.text
    );
    assert!(hoisted.text.contains("      X = X / hpf_f1\n"), "{}", hoisted.text);
}

/// MAXLOC and MINLOC without DIM of data cut along one dimension: every
/// process's first extreme, as a position in the whole section in array
/// element order (the smallest wins among equal values), then one
/// subscript per dimension; on a 2-D grid, rank 0 still.
#[test]
fn locations_without_dim_are_found_in_parallel() {
    let text = "program p
  implicit none
  integer, parameter :: n = 12, m = 9
  real :: a(n, m), g(n, m)
  integer :: l2(2), l1(1)
  real :: x(n)
!HPF$ PROCESSORS q(2, 2)
!HPF$ DISTRIBUTE a(BLOCK, *)
!HPF$ DISTRIBUTE x(BLOCK)
!HPF$ DISTRIBUTE g(BLOCK, BLOCK) ONTO q
  a = 1.0; x = 2.0; g = 3.0
  l2 = maxloc(a(2:n, 3:m), mask=a(2:n, 3:m) > 0.5)
  l1 = minloc(x)
  print *, l2, l1, maxloc(a)
  l2 = maxloc(g)
end program p
";
    let (notes, source) = lower(text);
    assert_eq!(notes, ["15: runs on one process: MAXLOC of CYCLIC data or of a 2-D grid runs on rank 0"]);
    // The local part's positions, its first extreme's place in the section (cut along its first dimension), combined.
    assert!(
        source.contains("  hpf_r2 = maxloc(a(hpf_lo:hpf_hi:1, 3:m), mask=a(hpf_lo:hpf_hi:1, 3:m) > 0.5)\n"),
        "{source}"
    );
    assert!(source.contains("    hpf_r2(1) = (hpf_lo + (hpf_r2(1) - 1) * (1) - (2)) / (1) + 1\n"), "{source}");
    assert!(
        source
            .contains("    hpf_r4 = 1 + (hpf_r2(1) - 1) * (1) + (hpf_r2(2) - 1) * (max(0, ((n) - (2) + (1)) / (1)))\n"),
        "{source}"
    );
    assert!(source.contains("  call hpf_location_r4(hpf_r1, hpf_r4, .true.)\n"), "{source}");
    assert!(source.contains("    hpf_r3(2) = mod((hpf_r4 - 1) / (max(0, ((n) - (2) + (1)) / (1))), size(a(hpf_lo:hpf_hi:1, 3:m), 2)) + 1\n"), "{source}");
    assert!(source.contains("  l2 = hpf_r3\n"), "{source}");
    assert!(
        source.contains("call hpf_location_r4(") && source.matches("call hpf_location_r4(").count() == 3,
        "{source}"
    );
}

/// A statement on rank 0 moves only the box of elements it touches (its
/// subscripts evaluated alike by every process before it), there and back;
/// the whole array when a subscript changes inside the statement.
#[test]
fn statements_on_rank_zero_move_only_the_box_they_touch() {
    let text = "program p
  implicit none
  integer, parameter :: n = 10, m = 7
  real :: u(n, m), r(m), v(m, n), q(n)
  integer :: i, k
!HPF$ DISTRIBUTE u(BLOCK, *)
!HPF$ DISTRIBUTE v(*, BLOCK)
  u = 1.0
  v = 2.0
  q = 3.0
  k = 3
  r = u(k + 2, :)
  v(m - k, :) = q
  print *, (u(i, k), i = 1, n, 2)
  print *, r
end program p
";
    let (_, source) = lower(text);
    assert!(source.contains("call hpf_gather_r4_21(u, hpf_d_u, hpf_g_u, [(k + 2), 1], [(k + 2), 7])"), "{source}");
    assert!(source.contains("call hpf_gather_r4_22(v, hpf_d_v, hpf_g_v, [(m - k), 1], [(m - k), 10])"), "{source}");
    assert!(source.contains("call hpf_scatter_r4_22(hpf_g_v, hpf_d_v, v, [(m - k), 1], [(m - k), 10])"), "{source}");
    // `i` runs inside the statement: the whole array.
    assert!(source.contains("call hpf_gather_r4_21(u, hpf_d_u, hpf_g_u, [1, 1], [10, 7])"), "{source}");
}

/// A distributed ALLOCATABLE array gets its descriptor and local part at
/// its ALLOCATE statement, from bounds computed there; loops, sections and
/// reductions on it run in parallel, and LBOUND/UBOUND/SIZE read the
/// bounds the ALLOCATE stored, not the local part's.
#[test]
fn allocatable_arrays_are_laid_out_at_their_allocate() {
    let (notes, source) = lower(
        "program p
  implicit none
  integer :: n, i
  real, allocatable :: a(:), b(:)
  real :: s
!HPF$ DISTRIBUTE A(BLOCK)
!HPF$ ALIGN B(:) WITH A(:)
  n = 8 * 5 + 3
  allocate (a(0:n+1), b(0:n+1))
  a = 1.0
  b(1:n) = a(0:n-1) + a(2:n+1)
  s = sum(b(1:n))
  do i = lbound(a, 1), ubound(a, 1)
    a(i) = size(a)
  end do
  print *, s, a(n)
  deallocate (a, b)
end program p
",
    );
    assert!(notes.iter().all(|it| !it.contains("one process")), "{notes:?}");
    let init = source.find("call hpf_init()").unwrap();
    let stored = source.find("  hpf_lbs_a(1) = 0\n  hpf_ubs_a(1) = n+1\n").expect(&source);
    let made = source.find("  hpf_d_a = hpf_make_desc(0, hpf_ubs_a(1), 0, 0, hpf_ubs_a(1), 0, 0)").expect(&source);
    // B's template is A's: its cells end where A's bounds say.
    let aligned = source.find("  hpf_d_b = hpf_make_desc(0, hpf_ubs_b(1), 0, 0, hpf_ubs_a(1), 0, 0)").expect(&source);
    assert!(init < stored && stored < made && made < aligned, "{source}");
    assert!(source.contains("integer :: hpf_lbs_a(1), hpf_ubs_a(1)"), "{source}");
    // A halo of one on each side, grown by the stencil.
    assert!(source.contains("call hpf_alloc_bounds(hpf_d_a, 1, 1, hpf_lo, hpf_hi)"), "{source}");
    assert!(source.contains("call hpf_fetch_r4_11(a, hpf_d_a,"), "{source}");
    // `a = 1.0` over the bounds A was allocated with.
    assert!(source.contains("call hpf_local_bounds(hpf_d_a, 0, (0), (hpf_ubs_a(1)), 1, hpf_lo, hpf_hi)"), "{source}");
    assert!(
        source.contains("do i = hpf_lo, hpf_hi, 1")
            && source.contains("(hpf_lbs_a(1)), (hpf_ubs_a(1)), 1, hpf_lo, hpf_hi)"),
        "{source}"
    );
    assert!(source.contains("product(max(0, hpf_ubs_a - hpf_lbs_a + 1))"), "{source}");
    assert!(source.contains("\n  deallocate (a, b)\n"), "{source}");
    assert_eq!(source.matches("hpf_make_desc(").count(), 2, "{source}");
}

/// An ALLOCATE in a loop makes the descriptor anew each time; bounds whose
/// variables change after the first ALLOCATE are equal only within one
/// statement, so arrays allocated apart are not taken to be laid out alike.
#[test]
fn allocatable_arrays_allocated_in_loops_and_apart() {
    let (notes, source) = lower(
        "program p
  implicit none
  integer :: n, k, i
  integer, allocatable :: c(:), a(:), b(:)
!HPF$ DISTRIBUTE C(CYCLIC)
!HPF$ DISTRIBUTE (BLOCK) :: A, B
  n = 10
  do k = 1, 3
    allocate (c(n + k))
    c = k
    print *, sum(c)
    deallocate (c)
  end do
  allocate (a(n))
  n = n + 1
  allocate (b(n))
  a = 1
  b(1:5) = a(1:5)
  print *, b(3)
end program p
",
    );
    // (A loop around an ALLOCATE stays on every process, even with nothing
    // else in parallel.)
    assert!(notes.iter().all(|it| !it.starts_with("8:")), "{notes:?}");
    let looped = source.find("  do k = 1, 3\n").unwrap();
    let made = source.find("  hpf_d_c = hpf_make_desc(1, hpf_ubs_c(1), 0, 1, hpf_ubs_c(1), 1, 1)").expect(&source);
    assert!(looped < made && source[made..].contains("  allocate (c(hpf_lo:hpf_hi))"), "{source}");
    // N changes between the ALLOCATEs of A and B: B(1:5) = A(1:5) does not
    // read A's local part as if cut alike.
    assert!(!source.contains("b(hpf_lo:hpf_hi:1) = a(hpf_lo:hpf_hi:1)"), "{source}");
    assert!(source.contains("call hpf_remote_read_i4(a, hpf_d_a,"), "{source}");
    // A function in a bound may give another value each time: equal only
    // within one ALLOCATE statement.
    let (_, source) = lower(
        "program p
  implicit none
  integer :: n
  integer, allocatable :: a(:), b(:), c(:)
!HPF$ DISTRIBUTE (BLOCK) :: A, B, C
  n = 10
  allocate (a(max(n, 2)), b(max(n, 2)))
  allocate (c(max(n, 2)))
  a = 1
  b = a + 1
  c = b + 1
  print *, sum(c)
end program p
",
    );
    assert!(source.contains("b(hpf_lo:hpf_hi:1) = a(hpf_lo:hpf_hi:1) + 1"), "{source}");
    assert!(source.contains("call hpf_remote_read_i4(b, hpf_d_b,"), "{source}");
    assert!(notes.iter().all(|it| !it.starts_with("9:") && !it.starts_with("10:")), "{notes:?}");
}

/// What the backend refuses of ALLOCATABLE distributed arrays, at the place.
#[test]
fn allocatable_arrays_it_refuses() {
    let errors = |text: &str| lowered(text).map(|it| it.1).expect_err("refused");
    let twice = errors(
        "program p
  integer :: n, ierr
  real, allocatable :: a(:)
!HPF$ DISTRIBUTE A(BLOCK)
  n = 10
  allocate (a(n))
  deallocate (a)
  allocate (a(2*n))
end program p
",
    );
    assert_eq!(twice.len(), 1, "{twice:?}");
    assert!(
        twice[0].starts_with("8: `a`: the MPI backend needs one ALLOCATE statement per distributed array"),
        "{twice:?}"
    );
    let stat = errors(
        "program p
  integer :: n, ierr
  real, allocatable :: a(:)
!HPF$ DISTRIBUTE A(BLOCK)
  n = 10
  allocate (a(n), stat=ierr)
end program p
",
    );
    assert!(stat[0].starts_with("6: an ALLOCATE of a distributed array with STAT="), "{stat:?}");
    let order = errors(
        "program p
  integer :: n
  real, allocatable :: a(:), b(:)
!HPF$ DISTRIBUTE A(BLOCK)
!HPF$ ALIGN B(:) WITH A(:)
  n = 10
  allocate (b(n))
  allocate (a(n))
end program p
",
    );
    assert_eq!(order.len(), 1, "{order:?}");
    assert!(order[0].starts_with("7: `b` is aligned with `a`, whose bounds its ALLOCATE computes"), "{order:?}");
    let lower_bounds = errors(
        "program p
  integer :: n
  real, allocatable :: a(:), b(:)
!HPF$ DISTRIBUTE A(BLOCK)
!HPF$ ALIGN B(:) WITH A(:)
  n = 10
  allocate (a(n), b(0:n-1))
end program p
",
    );
    assert!(
        lower_bounds[0]
            .starts_with("7: `b`: its lower bound along its distributed dimension is not known to be that of `a`"),
        "{lower_bounds:?}"
    );
    // Allocated in a procedure (which may run on rank 0 alone).
    let in_procedure = errors(
        "module m
  real, allocatable :: g(:)
!HPF$ DISTRIBUTE G(BLOCK)
contains
  subroutine make(n)
    integer :: n
    allocate (g(n))
  end subroutine make
end module m
program p
  use m
  call make(10)
  print *, sum(g)
end program p
",
    );
    assert!(
        in_procedure[0].starts_with("7: `g`: the MPI backend allocates and deallocates distributed arrays in the main program's statements only"),
        "{in_procedure:?}"
    );
    let none = errors(
        "program p
  real, allocatable :: a(:)
!HPF$ DISTRIBUTE A(BLOCK)
  print *, 1
end program p
",
    );
    assert!(none[0].starts_with("2: `a`: the MPI backend needs the ALLOCATE statement"), "{none:?}");
    let remapped = errors(
        "program p
  real, allocatable :: a(:)
!HPF$ DYNAMIC A
!HPF$ DISTRIBUTE A(BLOCK)
  allocate (a(12))
  a = 1
!HPF$ REDISTRIBUTE A(CYCLIC)
  print *, sum(a)
end program p
",
    );
    assert!(
        remapped[0].starts_with("5: `a`: REDISTRIBUTE and REALIGN of distributed ALLOCATABLE arrays"),
        "{remapped:?}"
    );
    // A loop that branches out of itself runs on rank 0, which cannot make
    // the local parts of every process.
    let on_rank_zero = errors(
        "program p
  integer :: k
  integer, allocatable :: d(:)
!HPF$ DISTRIBUTE D(BLOCK)
  do k = 1, 2
    allocate (d(k))
    d(1) = k
    if (k == 2) go to 10
    deallocate (d)
  end do
10 print *, 'done'
end program p
",
    );
    assert_eq!(on_rank_zero.len(), 2, "{on_rank_zero:?}");
    assert!(on_rank_zero.iter().all(|it| it.contains("sits in a construct that runs on rank 0")), "{on_rank_zero:?}");
}

/// A distributed ALLOCATABLE array of a module, allocated by the main
/// program: the module declares its local part and stored bounds, the
/// program imports them, allocates at its ALLOCATE and reads SIZE from them.
#[test]
fn allocatable_module_arrays_are_allocated_by_the_program() {
    let (notes, source) = lower(
        "module fields
  integer :: n
  real(8), allocatable :: f(:), g(:)
!HPF$ DISTRIBUTE F(BLOCK)
!HPF$ ALIGN G(:) WITH F(:)
end module fields
program p
  use fields
  n = 29
  allocate (f(0:n+1), g(0:n+1))
  f = 1.0d0
  g(1:n) = 0.5d0 * (f(0:n-1) + f(2:n+1))
  print *, size(g), sum(g(1:n))
end program p
",
    );
    assert!(notes.iter().all(|it| !it.contains("one process")), "{notes:?}");
    assert!(source.contains("integer :: hpf_lbs_f(1), hpf_ubs_f(1)"), "{source}");
    assert!(source.contains(", hpf_lbs_f, hpf_ubs_f"), "{source}");
    assert!(source.contains("  hpf_d_g = hpf_make_desc(0, hpf_ubs_g(1), 0, 0, hpf_ubs_f(1), 0, 0)"), "{source}");
    assert!(source.contains("product(max(0, hpf_ubs_g - hpf_lbs_g + 1))"), "{source}");
}

const DIM_HEADER: &str = "program p
  implicit none
  integer, parameter :: nx = 10, ny = 6
  real :: t(nx, ny), u(nx, ny), colmax(ny), rowsum(nx), total(ny), acol(ny), g(nx, ny), gsum(ny)
  integer :: cnt(ny)
  logical :: anyr(nx)
!hpf$ processors p(2, 2)
!hpf$ distribute (*, block) :: t
!hpf$ distribute (block, *) :: u
!hpf$ align acol(j) with t(*, j)
!hpf$ distribute (block, block) onto p :: g
";

fn dim_lowered(body: &str, ordered_reductions: bool) -> (Vec<String>, String) {
    let text = format!("{DIM_HEADER}  t = 1.0\n  u = 2.0\n  g = 3.0\n{body}  print *, colmax, rowsum\nend program p\n");
    let analysis = analysis::analyze(&text, SourceForm::Free, ModelConfig { number_of_processors: None });
    let options = crate::LowerOptions { ordered_reductions };
    let generated = crate::lower_with(&analysis, &text, &options).expect("lowered");
    let notes = generated.notes.iter().map(|it| it.message.clone()).collect();
    // The temporaries' numbers left out.
    let mut source = String::new();
    let mut rest = generated.source.as_str();
    while let Some(at) = rest.find("hpf_dpart").into_iter().chain(rest.find("hpf_dfull")).min() {
        source.push_str(&rest[..at + 9]);
        rest = rest[at + 9..].trim_start_matches(|it: char| it.is_ascii_digit());
    }
    source.push_str(rest);
    (notes, source)
}

/// Along the undistributed dimension each process reduces its own columns
/// with the intrinsic (the sequential order) and the pieces are gathered;
/// sections and elemental expressions go along.
#[test]
fn dim_reduction_along_the_undistributed_dimension_gathers_the_pieces() {
    let (notes, source) = dim_lowered("  colmax = maxval(t, dim=1)\n  total = sum(t(2:nx-1, :) ** 2, dim=1)\n", false);
    assert!(notes.iter().all(|it| !it.contains("runs on one process")), "{notes:?}");
    assert!(source.contains("  hpf_dpart = maxval(t(:, hpf_lo:hpf_hi:1), dim=1)\n"), "{source}");
    assert!(source.contains("  hpf_dpart = sum(t(2:nx-1, hpf_lo:hpf_hi:1) ** 2, dim=1)\n"), "{source}");
    assert_eq!(source.matches("  call hpf_dimred_gather_r4(hpf_dpart, size(hpf_dpart), hpf_dfull)\n").count(), 2);
    assert!(source.contains("  colmax = hpf_dfull\n"), "{source}");
}

/// Along the distributed dimension the partial vectors are combined in one
/// collective: MPI_Allreduce for exact operations, a rank-order fold for
/// floating SUM by default, a chain of running vectors when ordered.
#[test]
fn dim_reduction_along_the_distributed_dimension_combines_partial_vectors() {
    let body = "  rowsum = sum(t, dim=2)\n  cnt = count(u > 1.0, dim=1)\n  anyr = any(t > 0.5, dim=2)\n";
    let (notes, source) = dim_lowered(body, false);
    assert!(notes.iter().all(|it| !it.contains("runs on one process")), "{notes:?}");
    assert!(source.contains("  hpf_dpart = sum(t(:, hpf_lo:hpf_hi:1), dim=2)\n"), "{source}");
    assert!(source.contains("  call hpf_dimred_combine_r4(hpf_dpart, size(hpf_dpart), .false.)\n"), "{source}");
    assert!(source.contains("  hpf_dpart = count(u(hpf_lo:hpf_hi:1, :) > 1.0, dim=1)\n"), "{source}");
    assert!(source.contains(
        "  call MPI_Allreduce(MPI_IN_PLACE, hpf_dpart, size(hpf_dpart), MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)\n"
    ));
    assert!(source.contains("MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD)\n"), "{source}");
    let (_, ordered) = dim_lowered("  rowsum = sum(t, dim=2)\n", true);
    assert!(!ordered.contains("hpf_dimred_combine_r4(hpf_dpart"), "{ordered}");
    assert!(
        ordered.contains(
            "  if (allocated(hpf_dpart)) deallocate (hpf_dpart)\n  allocate (hpf_dpart(10))\n  hpf_dpart = 0\n  call hpf_dimred_chain_recv_r4(hpf_dpart, size(hpf_dpart))\n  do hpf_i = hpf_lo, hpf_hi, 1\n    hpf_dpart = hpf_dpart + (t(:, hpf_i))\n  end do\n  call hpf_dimred_chain_send_r4(hpf_dpart, size(hpf_dpart))\n  rowsum = hpf_dpart\n"
        ),
        "{ordered}"
    );
}

/// A result aligned with the remaining dimension keeps each process's part;
/// one distributed along the reduced dimension, or data on a 2-D grid, run
/// on rank 0 with a note.
#[test]
fn dim_reduction_into_an_aligned_result_and_refusals() {
    let (notes, source) = dim_lowered("  acol = minval(t, dim=1)\n", false);
    assert!(notes.iter().all(|it| !it.contains("runs on one process")), "{notes:?}");
    assert!(
        source.contains(
            "  call hpf_local_bounds(hpf_d_acol, 0, (1), (6), 1, hpf_lo, hpf_hi)\n  acol(hpf_lo:hpf_hi) = hpf_dpart\n"
        ),
        "{source}"
    );
    assert!(!source.contains("hpf_dimred_gather"), "{source}");
    // As an operand of a bigger expression into a replicated array.
    let (notes, source) = dim_lowered("  colmax = 0.5 * colmax + minval(t, dim=1)\n", false);
    assert!(notes.iter().all(|it| !it.contains("runs on one process")), "{notes:?}");
    assert!(source.contains("\n  colmax = 0.5 * colmax + hpf_dfull\n"), "{source}");
    let (notes, _) = dim_lowered("  acol = 1.0 + minval(t, dim=1)\n", false);
    assert!(notes.iter().any(|it| it.contains("inside an expression is assigned to a distributed array")), "{notes:?}");
    let (notes, _) = dim_lowered("  gsum = sum(g, dim=1)\n", false);
    assert!(
        notes
            .iter()
            .any(|it| it
                .contains("runs on one process: a reduction with DIM= of an array distributed in two dimensions")),
        "{notes:?}"
    );
    let (notes, _) = dim_lowered("  acol = sum(u, dim=2)\n", false);
    assert!(notes.iter().any(|it| it.contains("runs on one process: SUM with DIM= is assigned to")), "{notes:?}");
}
