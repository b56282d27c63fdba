//! Differential tests of the MPI backend: every corpus program the backend
//! lowers runs on 1 to 5 processes (5 is more than the cores: oversubscribed)
//! and prints byte for byte what the sequential program prints
//! (`tests/corpus/expected/*.out`, checked against gfortran by
//! `tests/corpus/check_sequential.sh`).
//!
//! They take minutes, so the tests that run programs are `#[ignore]`d: a
//! plain `cargo test` lists them as ignored, and
//! `cargo test -p hpf-ls --test mpi_run -- --ignored` runs them (as CI does).
//! They need `gfortran`, `mpif90` and `mpirun`, and fail without them.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The corpus programs the backend supports today; each must keep building.
const SUPPORTED: &[&str] = &[
    "adi_redistribute.f90",
    "advect_namelist.f90",
    "align_stride_loops.f90",
    "align_transpose_grid.f90",
    "alloc_fields.f90",
    "block_cyclic_matmul.f90",
    "blockdata_fields.f",
    "chain_align.hpf",
    "column_reductions.f90",
    "column_sums.f90",
    "common_blocks.f",
    "common_fields.f",
    "complex_wave.f90",
    "crlf_heat.f90",
    "csr_gather.for",
    "cyclic2d_mix.f90",
    "cyclic_basic.f90",
    "cyclic_sections.f90",
    "cyclic_template.f90",
    "dialects_f77.f",
    "dynamic_remap.f90",
    "element_reductions.f90",
    "embed_constant.f90",
    "embed_rank_change.f90",
    "external_calls.f90",
    "forall_fallback.f90",
    "fused_broadcasts.f90",
    "game_of_life.f90",
    "gather_particles.f90",
    "gather_time_loop.f90",
    "gauss_seidel.f90",
    "gauss_seidel_f77.f",
    "grid3d_reduce.f90",
    "grid3d_star_block_block.f90",
    "grid_branches.f90",
    "grid_cyclic_offsets.f90",
    "hadamard_butterfly.f90",
    "heat2d_converge.f90",
    "heat_seqnum.f",
    "high_rank_fields.f90",
    "implicit_columns.f90",
    "inherit_dummies.f90",
    "inherit_fixed.f",
    "internal_procedures.f90",
    "irregular_gather2d.f90",
    "jacobi2d_block_block.f90",
    "jacobi2d_star_block.f90",
    "jacobi_chpf.f",
    "label_gather.f90",
    "list_fetch.f90",
    "local_kernels.f90",
    "loop_exits.f90",
    "lu_cyclic.f",
    "matmul_cyclic.for",
    "matmul_cyclic_rows.f90",
    "matmul_grid_block.f90",
    "matvec_replicated.f90",
    "maxloc_pivot.f90",
    "module_arrays.f90",
    "monte_carlo_seeds.f90",
    "multi_update.f90",
    "named_kinds.f90",
    "nonascii_fixed.f",
    "nonascii_scan.f90",
    "npb_rhs.f",
    "npb_sections.f",
    "ocean_column.f",
    "odd_even_sort.f90",
    "on_home.f90",
    "ordered_sums.f90",
    "pic1d_electrostatic.f90",
    "normalised_fields.f90",
    "peak_locations.f90",
    "normalised_procedures.f90",
    "poisson_rb_f77.f",
    "power_matvec.f90",
    "private_scalars.f90",
    "quad_complex.f90",
    "read_input.f90",
    "recurrence.f90",
    "red_black_sor.f90",
    "redistribute_sweeps.f90",
    "reductions.f90",
    "remap_gather.f90",
    "remap_sections.f90",
    "replicated_reads.f90",
    "section_nests.f90",
    "section_procedures.f90",
    "section_reductions.f90",
    "sections_block_block.f90",
    "seed_fig6.f",
    "seed_fig6.f90",
    "seed_optimal.f90",
    "sentinels_free.f90",
    "shift_advection.hpf",
    "shift_shadow_reads.f90",
    "shift_shared_halos.f90",
    "shift_stencil_block_block.f90",
    "short_masks.f90",
    "sor_starhpf.f",
    "stencil1d_halo.f90",
    "stencil3d_7pt.f90",
    "stencil9_block_block.f90",
    "stride_reverse.f90",
    "subroutine_remap.f90",
    "subroutine_spmd.f90",
    "transpose_align.f90",
    "triangular_nest.f90",
    "tridiag_columns.f90",
    "wave1d_leapfrog.f90",
    "wave2d_dynamic.f",
    "where_masks.f90",
    "where_shifts.f90",
];

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus")
}

/// These tests run only when asked (`--ignored`), so a missing toolchain
/// fails them: a skipped run must never be counted as a passed one.
fn require_toolchain() {
    let found = |program: &str| Command::new(program).arg("--version").output().is_ok_and(|it| it.status.success());
    assert!(
        found("gfortran") && found("mpif90") && found("mpirun"),
        "this test needs gfortran, mpif90 and mpirun: apt-get install -y gfortran libopenmpi-dev openmpi-bin"
    );
}

/// What `source` prints compiled sequentially by gfortran (in `dir`, where
/// its `.mod` files go).
fn sequential_output(dir: &Path, source: &Path) -> Vec<u8> {
    let sequential = dir.join("sequential");
    let compiled = Command::new("gfortran").arg(source).arg("-o").arg(&sequential).current_dir(dir).output().unwrap();
    assert!(compiled.status.success(), "{}", String::from_utf8_lossy(&compiled.stderr));
    Command::new(&sequential).output().unwrap().stdout
}

/// A test's own program, written to its own scratch directory: (the directory, the source).
fn scratch_program(name: &str, text: &str) -> (PathBuf, PathBuf) {
    let dir = scratch(name);
    let source = dir.join(format!("{name}.f90"));
    std::fs::write(&source, text).unwrap();
    (dir, source)
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hpf-ls-mpi-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `executable` of corpus program `name` on `processes` processes; a
/// program that READs gets `tests/corpus/<stem>.in` on its standard input,
/// as `check_sequential.sh` gives it to the sequential program.
fn mpirun(name: &str, executable: &Path, processes: u32) -> std::process::Output {
    mpirun_with(name, executable, processes, false)
}

/// As `mpirun`; with `stats`, the program reports what it moved per loop
/// on its standard error (`HPF_LS_STATS=1`, as `hpf-ls run --stats` sets).
fn mpirun_with(name: &str, executable: &Path, processes: u32, stats: bool) -> std::process::Output {
    launch("mpirun", name, executable, processes, stats)
}

/// As `mpirun_with`, by `launcher` (Open MPI's, or one that takes `-np` as
/// MPICH's Hydra does; Open MPI oversubscribes by its environment).
fn launch(launcher: &str, name: &str, executable: &Path, processes: u32, stats: bool) -> std::process::Output {
    let input = corpus().join(Path::new(name).with_extension("in"));
    let stdin = match std::fs::File::open(&input) {
        Ok(file) => std::process::Stdio::from(file),
        Err(_) => std::process::Stdio::null(),
    };
    Command::new(launcher)
        .args(["-np", &processes.to_string()])
        .arg(executable)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .env("HPF_LS_STATS", if stats { "1" } else { "0" })
        .stdin(stdin)
        .output()
        .expect("mpirun starts")
}

#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn supported_corpus_programs_print_what_the_sequential_program_prints() {
    require_toolchain();
    let declared_past_5 = |name: &str| Some(declared_processes(name)).filter(|it| *it > 5);
    check_supported_corpus("corpus", None, "mpirun", |name| (1..=5).chain(declared_past_5(name)).collect());
}

/// The same programs under another MPI, MPICH by default: the compiler
/// `HPF_FC` (default `mpif90.mpich`) and the launcher `HPF_LAUNCHER`
/// (default `mpirun.mpich`), on 3 processes (CI's time), and on the
/// declared arrangement's count, where the `--stats` counts must equal the
/// analysis' as they do under Open MPI.
#[test]
#[ignore = "long, needs MPICH (or HPF_FC, HPF_LAUNCHER): cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn supported_corpus_programs_print_the_same_under_another_mpi() {
    let compiler = std::env::var("HPF_FC").unwrap_or_else(|_| "mpif90.mpich".to_string());
    let launcher = std::env::var("HPF_LAUNCHER").unwrap_or_else(|_| "mpirun.mpich".to_string());
    let found = |program: &str| Command::new(program).arg("--version").output().is_ok_and(|it| it.status.success());
    assert!(
        found(&compiler) && found(&launcher),
        "this test needs {compiler} and {launcher}: apt-get install -y mpich (or set HPF_FC and HPF_LAUNCHER)"
    );
    check_supported_corpus("corpus-other-mpi", Some(&compiler), &launcher, |name| {
        let declared = declared_processes(name);
        [3].into_iter().chain((declared != 3).then_some(declared)).collect()
    });
}

/// Every supported corpus program, built by `hpf-ls build` with `compiler`
/// (default: the one on PATH) and run by `launcher` on each of
/// `processes(name)`, prints its expected output; on the declared
/// arrangement's count, each loop moves what the analysis predicts.
fn check_supported_corpus(
    scratch_name: &str,
    compiler: Option<&str>,
    launcher: &str,
    processes: impl Fn(&str) -> Vec<u32>,
) {
    let dir = scratch(scratch_name);
    for name in SUPPORTED {
        let source = corpus().join(name);
        let executable = dir.join(name.replace('.', "_"));
        let build = hpf_ls_build_with(&source, &executable, compiler);
        assert!(build.status.success(), "{name} does not build:\n{}", String::from_utf8_lossy(&build.stderr));
        let expected = std::fs::read(corpus().join(format!("expected/{name}.out"))).expect("an expected output");
        let declared = declared_processes(name);
        for processes in processes(name) {
            let stats = processes == declared;
            let output = launch(launcher, name, &executable, processes, stats);
            assert!(
                output.status.success(),
                "{name} on {processes} processes failed:\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
            assert!(
                output.stdout == expected,
                "{name} on {processes} processes printed\n{}\ninstead of\n{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&expected)
            );
            if stats {
                let stderr = String::from_utf8_lossy(&output.stderr);
                for (line, moved, predicted) in per_loop_stats_by_line(&stderr) {
                    if predicted == "no prediction" {
                        continue;
                    }
                    assert_eq!(moved, predicted, "{name} line {line} on {processes} processes:\n{stderr}");
                }
            }
        }
    }
}

/// The corpus programs over distributed arrays of other types and kinds
/// (INTEGER(8) seeds, COMPLEX(8) amplitudes, INTEGER(2) and LOGICAL(1)
/// masks, CHARACTER(len=8) labels, COMPLEX(16) halos, sums and products) run in parallel, with no statement on
/// one process, and print what the sequential program prints on 1 to 5 processes.
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn distributed_arrays_of_every_type_and_kind_run_in_parallel() {
    require_toolchain();
    let dir = scratch("every_type_and_kind");
    for name in ["monte_carlo_seeds.f90", "complex_wave.f90", "short_masks.f90", "label_gather.f90", "quad_complex.f90"]
    {
        let source = corpus().join(name);
        let build = hpf_ls_build(&source, &dir.join(name.replace('.', "_")));
        let stderr = String::from_utf8_lossy(&build.stderr);
        assert!(build.status.success(), "{name}: {stderr}");
        assert!(!stderr.contains("one process"), "{name}: {stderr}");
        let expected = std::fs::read(corpus().join(format!("expected/{name}.out"))).expect("an expected output");
        runs_print_on(&source, &expected, &["1", "2", "3", "4", "5"]);
    }
}

/// Distributed ALLOCATABLE arrays whose bounds the program reads and
/// computes (`alloc_fields.f90`: a 1-D stencil with ghost cells, a 2-D
/// (*, BLOCK) Jacobi loop, a CYCLIC array allocated in every step of a
/// loop) run with no statement on one process, and print what the
/// sequential program prints on 1 to 5 processes.
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn allocatable_distributed_arrays_run_in_parallel() {
    require_toolchain();
    let dir = scratch("allocatable");
    let name = "alloc_fields.f90";
    let executable = dir.join("alloc_fields");
    let build = hpf_ls_build(&corpus().join(name), &executable);
    let stderr = String::from_utf8_lossy(&build.stderr);
    assert!(build.status.success(), "{name}: {stderr}");
    assert!(!stderr.contains("one process"), "{name}: {stderr}");
    let expected = std::fs::read(corpus().join(format!("expected/{name}.out"))).expect("an expected output");
    for processes in 1..=5 {
        let output = mpirun(name, &executable, processes);
        assert!(output.status.success(), "on {processes}: {}", String::from_utf8_lossy(&output.stderr));
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&expected),
            "on {processes} processes"
        );
    }
    // Module arrays the program allocates, a bound computed, an ALLOCATE
    // in a time loop, a subroutine run on rank 0 on gathered copies.
    let (dir, source) = scratch_program(
        "allocatable_module",
        "module fields
  implicit none
  integer :: n
  real(8), allocatable :: f(:), g(:)
!HPF$ DISTRIBUTE F(BLOCK)
!HPF$ ALIGN G(:) WITH F(:)
contains
  subroutine report()
    print '(a, f14.6, i5)', 'report', sum(f), size(f)
  end subroutine report
end module fields

program allocatable_module
  use fields
  implicit none
  integer :: i, step, m
  integer, allocatable :: c(:)
!HPF$ DISTRIBUTE C(BLOCK)
  n = 3 * 9 + 2
  allocate (f(0:n+1), g(0:n+1))
  f = 0.0d0
  do i = 1, n
    f(i) = dble(i * i) / dble(n)
  end do
  do step = 1, 5
    g(1:n) = 0.5d0 * (f(0:n-1) + f(2:n+1))
    f(1:n) = g(1:n)
    m = n + step
    allocate (c(m))
    c = step
    c(2:m) = c(1:m-1) + c(2:m)
    print '(i4, i6)', size(c), sum(c)
    deallocate (c)
  end do
  print '(a, i5, i5, i5)', 'bounds', lbound(f, 1), ubound(f, 1), size(g)
  print '(a, f14.6)', 'max', maxval(f)
  call report()
  deallocate (f, g)
end program allocatable_module
",
    );
    let expected = sequential_output(&dir, &source);
    runs_print_on(&source, &expected, &["1", "2", "3", "4", "5"]);
}

/// MATMUL of distributed matrices and vectors (2-D BLOCK grids, CYCLIC(m)
/// rows and columns, replicated operands and results, INTEGER, REAL(8),
/// COMPLEX(8)) runs on every process, no statement on one process, and
/// prints what the sequential program prints on 1 to 5 processes. With
/// `--ordered-reductions` each element is summed over k in order by its
/// owner: bit for bit what gfortran's MATMUL gives when it is inlined as
/// loops (`-finline-matmul-limit`, as gfortran does for small matrices),
/// on values whose sums round.
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn matrix_products_of_distributed_arrays_run_in_parallel() {
    require_toolchain();
    let dir = scratch("matmul");
    for name in ["matmul_grid_block.f90", "matmul_cyclic_rows.f90"] {
        let source = corpus().join(name);
        let build = hpf_ls_build(&source, &dir.join(name.replace('.', "_")));
        let stderr = String::from_utf8_lossy(&build.stderr);
        assert!(build.status.success(), "{name}: {stderr}");
        assert!(!stderr.contains("one process"), "{name}: {stderr}");
        let expected = std::fs::read(corpus().join(format!("expected/{name}.out"))).expect("an expected output");
        runs_print_on(&source, &expected, &["1", "2", "3", "4", "5"]);
    }
    let (dir, source) = scratch_program(
        "matmul_rounding",
        "program matmul_rounding
  implicit none
  integer, parameter :: m = 37, k = 300, n = 29
  double precision :: a(m, k), b(k, n), c(m, n), x(k), y(m)
  integer :: i, j
!HPF$ PROCESSORS G(2, 2)
!HPF$ DISTRIBUTE (CYCLIC(3), BLOCK) ONTO G :: a, b, c
!HPF$ DISTRIBUTE x(CYCLIC)
  do j = 1, k
    do i = 1, m
      a(i, j) = 1.0d0 / dble(i * 7 + j)
    end do
    x(j) = 1.0d0 / dble(j + 2)
  end do
  do j = 1, n
    do i = 1, k
      b(i, j) = 1.0d0 / dble(i + 3 * j)
    end do
  end do
  c = matmul(a, b)
  y = matmul(a, x)
  print '(4ES25.17)', c
  print '(4ES25.17)', y
end program matmul_rounding
",
    );
    let sequential = dir.join("sequential");
    let compiled = Command::new("gfortran")
        .args(["-ffrontend-optimize", "-finline-matmul-limit=1000000"])
        .arg(&source)
        .arg("-o")
        .arg(&sequential)
        .output()
        .unwrap();
    assert!(compiled.status.success(), "{}", String::from_utf8_lossy(&compiled.stderr));
    let expected = Command::new(&sequential).output().unwrap().stdout;
    runs_print_on(&source, &expected, &["1", "2", "3", "4", "5"]);
}

/// REAL(16), INTEGER(1), LOGICAL(8) and COMPLEX(4) arrays, BLOCK and
/// CYCLIC(2): a halo read, a read through the inspector/executor, gathers,
/// and reductions of each (REAL(16) extrema, which `MPI_Allreduce` gets
/// wrong, folded by the runtime).
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn arrays_of_rarer_kinds_move_and_reduce_as_the_sequential_program() {
    require_toolchain();
    runs_in_parallel_as_sequential(
        "quad",
        r"program quad
  implicit none
  integer, parameter :: n = 17
  real(16) :: x(n), y(n)
  integer(1) :: b(n)
  logical(8) :: f(n)
  complex :: w(n)
  integer :: i
!HPF$ PROCESSORS P(NUMBER_OF_PROCESSORS())
!HPF$ DISTRIBUTE x(BLOCK) ONTO P
!HPF$ DISTRIBUTE (CYCLIC(2)) ONTO P :: y, b, f, w
  do i = 1, n
    x(i) = 1.0_16 / i
    b(i) = int(mod(i * 5, 17), 1)
    f(i) = mod(i, 3) == 0
    w(i) = cmplx(i, -i)
  end do
  do i = 2, n - 1
    y(i) = x(i - 1) + x(i + 1) + b(n + 1 - i)
  end do
  y(1) = 0
  y(n) = 0
  print '(f40.33)', sum(y)
  print '(f40.33)', maxval(x), minval(y)
  print *, maxval(b), minval(b), sum(b), count(f), any(f), all(f)
  print *, sum(w), w(3:5)
  print '(3f40.33)', y(1:6)
  print *, b
end program quad
",
    );
}

/// Statements after a `;` whose reductions, shifts and conditions are
/// computed first: the temporaries go after the statements before them on
/// their line (`a(1) = 100.0; b = cshift(a, 1) - a` shifts the new A(1)).
#[test]
#[ignore = "needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn hoisted_temporaries_of_a_statement_after_a_semicolon_follow_the_statements_before_it() {
    require_toolchain();
    runs_in_parallel_as_sequential(
        "semicolon_hoists",
        "program semicolon_hoists
  implicit none
  integer, parameter :: n = 16
  real :: a(n), b(n), c(n), s, t
  integer :: i
!HPF$ DISTRIBUTE (BLOCK) :: A, B, C
  do i = 1, n
    a(i) = real(i)
    b(i) = real(n - i) * 0.5
  end do
  s = 0.0; t = 0.0
  s = 1000.0; if (sum(a) > s) t = 1.0
  print *, s, t
  a(1) = 100.0; b = cshift(a, 1) - a
  print *, b
  a(2) = -5.0; c = eoshift(a, -1) + a; s = sum(c * b)
  print *, c, s
  s = 3.0; t = 0.0; if (maxval(a) > s .and. t == 0.0) t = 2.0
  print *, s, t
end program semicolon_hoists
",
    );
}

/// The program `text` (named `name`) prints on 1 to 5 processes what the
/// sequential build with gfortran prints, and `hpf-ls build` reports no
/// statement that runs on one process. Returns its source.
fn runs_in_parallel_as_sequential(name: &str, text: &str) -> PathBuf {
    let (dir, source) = scratch_program(name, text);
    let expected = sequential_output(&dir, &source);
    runs_print_on(&source, &expected, &["1", "2", "3", "4", "5"]);
    let output = hpf_ls_build(&source, &dir.join(format!("{name}.exe")));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("runs on one process"), "{stderr}");
    source
}

/// Reductions with DIM= of distributed arrays into arrays
/// (`tests/corpus/column_reductions.f90`: along either dimension of
/// `(*, BLOCK)` and `(BLOCK, *)` data, replicated and aligned results) build
/// with no statement on one process and print the sequential output on 1 to
/// 5 processes with `--ordered-reductions`.
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn column_reductions_with_dim_run_in_parallel() {
    require_toolchain();
    let source = corpus().join("column_reductions.f90");
    let expected = std::fs::read(corpus().join("expected/column_reductions.f90.out")).unwrap();
    let dir = scratch("column_reductions");
    let output = hpf_ls_build(&source, &dir.join("column_reductions.exe"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("runs on one process"), "{stderr}");
    runs_print_on(&source, &expected, &["1", "2", "3", "4", "5"]);
}

/// `hpf-ls run --np N source` on each of `processes` exits 0 and prints `expected`.
fn runs_print_on(source: &Path, expected: &[u8], processes: &[&str]) {
    for processes in processes {
        let output = Command::new("timeout")
            .arg("60")
            .arg(env!("CARGO_BIN_EXE_hpf-ls"))
            .args(["run", "--ordered-reductions", "--np", processes])
            .arg(source)
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .output()
            .unwrap();
        assert!(output.status.success(), "on {processes}: {}", String::from_utf8_lossy(&output.stderr));
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(expected),
            "on {processes} processes"
        );
    }
}

/// The processes the program's PROCESSORS directive declares (the product
/// of its extents, which the analysis counts with), 4 when it declares none
/// with literal extents.
fn declared_processes(name: &str) -> u32 {
    let text = std::fs::read_to_string(corpus().join(name)).unwrap().to_ascii_lowercase();
    text.lines()
        .filter(|line| ["!hpf$", "chpf$", "*hpf$"].iter().any(|it| line.trim_start().starts_with(it)))
        .filter_map(|line| {
            let rest = line.split("processors").nth(1)?;
            let extents = rest.split_once('(')?.1.split_once(')')?.0;
            extents.split(',').map(|it| it.trim().parse::<u32>().ok()).product::<Option<u32>>()
        })
        .next()
        .unwrap_or(4)
}

/// Every per-loop line of `--stats` output: (line, what moved, what the analysis predicts).
fn per_loop_stats_by_line(stderr: &str) -> Vec<(usize, String, String)> {
    stderr
        .lines()
        .filter_map(|it| it.strip_prefix("hpf-ls stats: line "))
        .zip(per_loop_stats(stderr))
        .map(|(rest, (moved, predicted))| (rest.split(':').next().unwrap().parse().unwrap(), moved, predicted))
        .collect()
}

/// `hpf-ls run ARGS tests/corpus/NAME` as root may run it, asserted to succeed.
/// `hpf-ls build SOURCE -o EXECUTABLE` (its notes go to standard error).
fn hpf_ls_build(source: &Path, executable: &Path) -> std::process::Output {
    hpf_ls_build_with(source, executable, None)
}

/// As `hpf_ls_build`, with `--fc compiler` when given.
fn hpf_ls_build_with(source: &Path, executable: &Path, compiler: Option<&str>) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_hpf-ls"))
        .args(["build", "--ordered-reductions"])
        .args(compiler.iter().flat_map(|it| ["--fc", it]))
        .arg(source)
        .arg("-o")
        .arg(executable)
        .output()
        .unwrap()
}

/// `hpf-ls run ARGS SOURCE`, which must succeed.
fn hpf_ls_run(args: &[&str], source: &Path, stdin: Option<std::fs::File>) -> std::process::Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hpf-ls"));
    command
        .args(["run", "--ordered-reductions"])
        .args(args)
        .arg(source)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    if let Some(stdin) = stdin {
        command.stdin(stdin);
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{}: {}", source.display(), String::from_utf8_lossy(&output.stderr));
    output
}

/// The seed's example moves exactly the 3 one-element messages the analysis predicts.
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn seed_statistics_match_the_analysis() {
    require_toolchain();
    let output = hpf_ls_run(&["--np", "4", "--stats"], &corpus().join("seed_fig6.f90"), None);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("hpf-ls stats: 3 message(s), 3 element(s) in total"), "{stderr}");
    // Per loop, what moved next to what the analysis predicts.
    assert!(
        stderr.contains(
            "hpf-ls stats: line 12: 3 message(s), 3 element(s) per execution (1 execution(s)); \
             the analysis predicts 3 message(s), 3 element(s)"
        ),
        "{stderr}"
    );
    assert_eq!(output.stdout, std::fs::read(corpus().join("expected/seed_fig6.f90.out")).unwrap());
}

/// The 2-D Jacobi on a 2x2 grid exchanges strips with its 4 neighbours only
/// (a 5-point stencil reads no corners): per sweep and array, each of the 4
/// processes sends one strip of 11 elements (the rows or columns 2..23 its
/// iterations read, not its whole side of 12) to each of its 2 neighbours.
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn block_block_jacobi_exchanges_strips_with_its_neighbours() {
    require_toolchain();
    let output = hpf_ls_run(&["--np", "4", "--stats"], &corpus().join("jacobi2d_block_block.f90"), None);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // 50 sweeps x 2 arrays x 8 messages of 11 elements, and the 47 values of
    // `sum(u)`: its running value changes process twice per column of 24
    // (rows 1-12, rows 13-24), the first change excepted.
    assert!(stderr.contains("hpf-ls stats: 847 message(s), 8847 element(s) in total"), "{stderr}");
    assert_eq!(output.stdout, std::fs::read(corpus().join("expected/jacobi2d_block_block.f90.out")).unwrap());
}

/// Every per-loop line of `--stats` output: (what moved, what the analysis predicts).
fn per_loop_stats(stderr: &str) -> Vec<(String, String)> {
    stderr
        .lines()
        .filter(|it| it.starts_with("hpf-ls stats: line "))
        .map(|line| {
            let moved = line.split(" per execution").next().unwrap().split(": ").last().unwrap().to_string();
            let predicted = line.split("the analysis predicts ").nth(1).unwrap_or("no prediction").to_string();
            (moved, predicted)
        })
        .collect()
}

/// The halo fetches move what the analysis predicts, loop by loop, on the
/// declared arrangement's 4 processes (the analysis counts for it): on a
/// `(*, BLOCK)` Jacobi the shadow columns carry only the rows 1..N the
/// stencil reads there (not 0..N+1), on a 2-D BLOCK,BLOCK grid the strips
/// only the rows and columns of the iterations.
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn halo_statistics_equal_the_prediction() {
    require_toolchain();
    for name in ["jacobi2d_star_block.f90", "jacobi2d_block_block.f90"] {
        for np in ["4"] {
            let output = hpf_ls_run(&["--np", np, "--stats"], &corpus().join(name), None);
            let stderr = String::from_utf8_lossy(&output.stderr);
            let stats = per_loop_stats(&stderr);
            assert!(!stats.is_empty(), "{name} on {np}: no per-loop statistics\n{stderr}");
            for (moved, predicted) in stats {
                assert_eq!(moved, predicted, "{name} on {np} processes:\n{stderr}");
            }
            assert_eq!(output.stdout, std::fs::read(corpus().join(format!("expected/{name}.out"))).unwrap());
        }
    }
}

/// `hpf-ls run` hands its standard input to the program (rank 0 reads it).
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn run_passes_standard_input_to_the_program() {
    require_toolchain();
    let input = std::fs::File::open(corpus().join("read_input.in")).unwrap();
    let output = hpf_ls_run(&["--np", "3"], &corpus().join("read_input.f90"), Some(input));
    assert_eq!(output.stdout, std::fs::read(corpus().join("expected/read_input.f90.out")).unwrap());
}

/// What the backend cannot lower is refused at its line, with no program built.
#[test]
fn unsupported_constructs_are_refused_at_their_line() {
    // A block size whose value at the remap is not plain from the text
    // (the last statement naming NB before it is a loop).
    let (dir, source) = scratch_program(
        "refused",
        "program refused
  implicit none
  integer, parameter :: n = 16
  integer :: a(n), nb, i
!HPF$ PROCESSORS P(4)
!HPF$ DYNAMIC A
!HPF$ DISTRIBUTE A(BLOCK) ONTO P
  a = 1
  do i = 1, 2
    nb = i + 1
  end do
!HPF$ REDISTRIBUTE A(CYCLIC(NB)) ONTO P
  print *, sum(a)
end program refused
",
    );
    let output = hpf_ls_build(&source, &dir.join("never"));
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("refused.f90:12:1: error: the block size of this distribution is not a constant: the MPI backend needs a literal, a named constant, or a variable that the last statement naming it before the directive sets to a constant"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("error:").count(), 1, "{stderr}");
    assert!(!dir.join("never").exists());
    // A remap that would distribute an array along another number of dimensions.
    let (dir, source) = scratch_program(
        "refused_grid",
        "program refused_grid
  implicit none
  integer :: a(8, 8)
!HPF$ PROCESSORS P(4)
!HPF$ DYNAMIC A
!HPF$ DISTRIBUTE A(BLOCK, *) ONTO P
  a = 1
!HPF$ REDISTRIBUTE A(BLOCK, BLOCK)
  print *, sum(a)
end program refused_grid
",
    );
    let output = hpf_ls_build(&source, &dir.join("never"));
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("refused_grid.f90:8:1: error: `a` would go from 1 to 2 distributed dimension(s)"),
        "{stderr}"
    );
    assert!(!dir.join("never").exists());
}

/// Replicated variables that rank 0 sets (here through a CALL with a
/// distributed argument) reach every process whole, whatever their type and
/// kind: a COMPLEX once arrived as one REAL, losing its imaginary part. A
/// distributed REAL(8) array keeps its precision (it was cut as REAL).
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn variables_set_on_rank_zero_arrive_whole_on_every_process() {
    require_toolchain();
    let (dir, source) = scratch_program(
        "kinds",
        "program kinds
  implicit none
  integer, parameter :: n = 8
  real :: a(n)
  real*8 :: e(n)
  complex :: c
  double complex :: z
  real(8) :: d, w(3)
  integer(8) :: big
  character(len=6) :: tag
  integer :: i
!HPF$ PROCESSORS P(2)
!HPF$ DISTRIBUTE A(BLOCK) ONTO P
!HPF$ ALIGN E(I) WITH A(I)
  a = 1.0
  c = (0.0, 0.0)
  z = (0.0d0, 0.0d0)
  d = 0
  w = 0
  big = 0
  tag = 'none'
  call setall(a, c, z, d, w, big, tag)
!HPF$ INDEPENDENT
  do i = 1, n
    a(i) = a(i) + aimag(c) * i + real(aimag(z)) + real(d - 1.0d0) + real(w(3)) + real(big - 2_8**40)
    if (tag == 'set') a(i) = a(i) + 0.5
  end do
  e = a * (1.0d0 + 2.0d0**(-40))
  print *, a
  print *, sum(e), e(3) - a(3)
end program kinds

subroutine setall(a, c, z, d, w, big, tag)
  real :: a(8)
  complex :: c
  double complex :: z
  real(8) :: d, w(3)
  integer(8) :: big
  character(len=6) :: tag
  c = (2.0, 3.0)
  z = (1.0d0, 0.25d0)
  d = 1.0d0 + 2.0d0**(-40)
  w = [1.0d0, 2.0d0, 0.5d0]
  big = 2_8**40 + 1
  tag = 'set'
  a(1) = 5.0
end subroutine setall
",
    );
    let expected = sequential_output(&dir, &source);
    for processes in ["1", "2", "3"] {
        let output = Command::new(env!("CARGO_BIN_EXE_hpf-ls"))
            .args(["run", "--ordered-reductions", "--np", processes])
            .arg(&source)
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&expected),
            "on {processes} processes"
        );
    }
}

/// Subroutines that take distributed arrays whole run on every process and
/// print what the sequential program prints: a module procedure on a
/// `(BLOCK, CYCLIC)` grid (calling another on rank 0), `CYCLIC(3)` with an
/// offset, a descriptive `*(BLOCK)` with an `ALIGN WITH *X` and replicated
/// and COMPLEX dummies set inside, an early RETURN (taken by every process), and a named
/// constant passed to dummies that a CALL on rank 0 inside the copy may set
/// (broadcast where it changed only: a write to the constant faulted).
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn subroutines_on_every_process_print_what_the_sequential_program_prints() {
    require_toolchain();
    let (dir, source) = scratch_program("procedures", PROCEDURES);
    let expected = sequential_output(&dir, &source);
    let executable = dir.join("procedures");
    let build = hpf_ls_build(&source, &executable);
    assert!(build.status.success(), "{}", String::from_utf8_lossy(&build.stderr));
    let notes = String::from_utf8_lossy(&build.stderr);
    // Two calls keep the rank-0 path: a nested one and one whose dummy's
    // bounds are not the actual's (the early RETURN is taken by every
    // process; the body with a nest reading x(i) runs on every process,
    // its reads fetched, `nest_fetch.rs`).
    assert_eq!(notes.matches("subroutines run on rank 0").count(), 2, "{notes}");
    for processes in 1..=4 {
        let output = mpirun("procedures.f90", &executable, processes);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&expected),
            "on {processes} processes"
        );
    }
}

const PROCEDURES: &str = "module tools
  implicit none
  integer, parameter :: nn = 20
contains
  subroutine twist(x, len, s)
    integer, intent(in) :: len
    real :: x(len, len)
    real, intent(out) :: s
!HPF$ INHERIT X
    integer :: i, j
    do j = 1, len
      do i = 1, len
        x(i, j) = x(i, j) + real(i) * 0.5 - real(j)
      end do
    end do
    s = maxval(x)
    call outer(x, len)
  end subroutine twist
end module tools

program a
  use tools
  implicit none
  real :: b(nn), c(nn), g(nn, nn), r(nn)
  integer :: q(nn), step
  real :: s, loc(nn)
  complex :: z
!HPF$ TEMPLATE T(0:nn+5)
!HPF$ DISTRIBUTE T(CYCLIC(3))
!HPF$ ALIGN Q(I) WITH T(I+2)
!HPF$ DISTRIBUTE B(BLOCK)
!HPF$ ALIGN C(I) WITH B(I)
!HPF$ DISTRIBUTE G(BLOCK, CYCLIC)
!HPF$ ALIGN R(I) WITH B(*)
  q = 3
  b = 1.0
  c = 2.0
  g = 0.5
  r = 0.0
  loc = 1.0
  z = (0.0, 0.0)
  call cyc(q, nn)
  do step = 1, 3
    call shifty(b, c, nn, loc, z, s)
  end do
  print *, sum(q), q(1:7)
  print *, sum(b), sum(c), s, loc(1:3), z
  call twist(g, nn, s)
  print *, s, sum(g)
  call early(b, nn)
  call withlocal(b, nn)
  print *, sum(b)
  call noint(b, nn)
  print *, sum(b), b(nn)
end program a

subroutine cyc(x, m)
  integer, intent(in) :: m
  integer :: x(m)
!HPF$ INHERIT X
  integer :: i
  do i = 1, m
    x(i) = x(i) * i + mod(i, 5)
  end do
end subroutine cyc

subroutine shifty(x, y, m, w, z, s)
  integer, intent(in) :: m
  real :: x(m), y(m), w(m), s
  complex :: z
!HPF$ DISTRIBUTE *(BLOCK) :: X
!HPF$ ALIGN Y(I) WITH *X(I)
  integer :: i
  do i = 2, m - 1
    y(i) = x(i+1) - x(i-1) + y(i) * 0.5
  end do
  x = x + y
  w(2) = w(2) + 1.0
  s = sum(x) + w(2)
  z = z + cmplx(s, 1.0)
  print '(A,F12.4)', 'shifty s =', s
end subroutine shifty

subroutine outer(x, m)
  integer, intent(in) :: m
  real :: x(m, m)
!HPF$ INHERIT X
  x = x * 2.0
end subroutine outer

subroutine early(x, m)
  integer, intent(in) :: m
  real :: x(m)
!HPF$ INHERIT X
  x = x + 1.0
  if (m > 5) return
  x = x + 100.0
end subroutine early

subroutine withlocal(x, m)
  integer, intent(in) :: m
  real :: x(m), tmp(m)
!HPF$ INHERIT X
!HPF$ ALIGN TMP(I) WITH *X(I)
  integer :: i
  do i = 1, m
    tmp(i) = x(i) * 3.0
  end do
  x = tmp - 1.0
end subroutine withlocal

subroutine noint(x, m)
  integer m
  real x(m)
!HPF$ INHERIT X
  x = x + 1.0
  call helper(x, m)
end subroutine noint

subroutine helper(y, k)
  integer k
  real y(k)
  y(k) = y(1) + k
end subroutine helper
";

/// A statement that runs on rank 0 and branches out of itself (GO TO a
/// label after it, STOP) makes every process take the branch once the
/// gathered copies are back; before, only rank 0 jumped, past the scatters
/// the others waited in, and the run hung. A GO TO inside it stays inside.
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn branches_out_of_a_statement_on_rank_zero_are_taken_by_every_process() {
    require_toolchain();
    let (dir, source) = scratch_program(
        "branches",
        "program branches
  implicit none
  integer, parameter :: n = 16
  integer :: a(n), b(n), i, s
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE (CYCLIC) ONTO P :: A
!HPF$ DISTRIBUTE (BLOCK) ONTO P :: B
  do i = 1, n
    a(i) = i
    b(i) = 2 * i
  end do
  s = 0
  do i = 1, n
    a(i) = a(i) + b(n + 1 - i)
    if (a(i) > 20) go to 10
    s = s + 1
  end do
  print *, 'not reached'
10 continue
  print *, s, i, a(1), a(n)
  do i = 1, n
    if (a(i) > b(i)) go to 20
    a(i) = -a(i)
20  continue
  end do
  print *, sum(a)
  if (a(n) + b(1) < 1000) stop
  print *, 'not reached either'
end program branches
",
    );
    let expected = sequential_output(&dir, &source);
    assert!(String::from_utf8_lossy(&expected).contains("33"), "{}", String::from_utf8_lossy(&expected));
    runs_print_on(&source, &expected, &["1", "2", "3", "5"]);
}

/// A FORALL construct runs each assignment for every index before the next
/// one starts. Run on each process's part, a later assignment that read
/// another process's element an earlier one assigned got the old value (the
/// neighbour fetch ran before the construct; a CYCLIC home runs course by
/// course): such a construct on one home runs on every process through the
/// distributed fallback (what each assignment reads fetched after the ones
/// before it ran), one whose assignments write arrays mapped differently is split into one FORALL
/// per assignment (each in parallel, the fetches of the later ones after
/// the earlier ones ran), and one that reads only the elements it assigned
/// stays parallel.
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn forall_constructs_read_what_their_earlier_assignments_assigned() {
    require_toolchain();
    let (dir, source) = scratch_program(
        "forall_order",
        "program forall_order
  implicit none
  integer, parameter :: n = 20
  integer :: u(n), w(n), c(n), d(n), g(8, 8), h(8, 8), i, j
!HPF$ DISTRIBUTE (BLOCK) :: U
!HPF$ ALIGN W(I) WITH U(I)
!HPF$ DISTRIBUTE (CYCLIC) :: C, D
!HPF$ DISTRIBUTE (BLOCK, BLOCK) :: G, H
  forall (i = 1:n) w(i) = i
  u = 0
  forall (i = 1:n-1)
    u(i) = w(i) * 2
    u(i) = u(i+1) + 1
  end forall
  print '(20I4)', u
  forall (i = 1:n) c(i) = 3 * i
  forall (i = 1:n-4)
    c(i) = c(i) + 1
    d(i) = c(i+4) - c(i)
  end forall
  print '(20I4)', d(1:n-4)
  forall (i = 1:8, j = 1:8) g(i, j) = i + 10 * j
  forall (i = 2:8, j = 1:8)
    g(i, j) = g(i, j) * 2
    h(i, j) = g(i-1, j) + g(i, j)
  end forall
  print '(8I5)', h(2:8, :)
  forall (i = 2:n)
    u(i) = w(i) + 5
    u(i) = u(i) * 2 - w(i-1)
  end forall
  print '(20I4)', u
end program forall_order
",
    );
    let build = hpf_ls_build(&source, &dir.join("x"));
    let notes = String::from_utf8_lossy(&build.stderr);
    assert!(
        notes.contains(
            "forall_order.f90:11:3: note: runs on every process: each assignment of this FORALL runs on the owner"
        ),
        "{notes}"
    );
    // Assignments to arrays mapped differently: one FORALL each, in parallel.
    for line in [17, 23] {
        assert!(!notes.contains(&format!("forall_order.f90:{line}:")), "{notes}");
    }
    // Its second assignment reads u where the first assigned it.
    assert!(!notes.contains("forall_order.f90:28:"), "{notes}");
    let expected = sequential_output(&dir, &source);
    runs_print_on(&source, &expected, &["1", "2", "3", "5"]);
}

/// A module of another file next to the program (kinds, a template, a
/// pure function and a subroutine) is copied into the generated program:
/// the loops that call its function run in parallel, the call of its
/// subroutine on rank 0. One that holds a variable, or a function that
/// prints, is refused at the USE; a module found nowhere too.
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn modules_of_other_files_are_compiled_with_the_program() {
    require_toolchain();
    let kinds = "module kinds
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  integer, parameter :: n = 30
!HPF$ PROCESSORS P(NUMBER_OF_PROCESSORS())
!HPF$ TEMPLATE T(N)
!HPF$ DISTRIBUTE T(BLOCK) ONTO P
contains
  pure real(dp) function weight(i)
    integer, intent(in) :: i
    ! a comment may say print
    weight = 1.0_dp / real(i, dp)
  end function weight
  subroutine report(x, m)
    integer, intent(in) :: m
    real(dp), intent(in) :: x(m)
    print '(A,F12.6)', ' report: sum =', sum(x)
  end subroutine report
end module kinds
";
    let (dir, source) = scratch_program(
        "other_file",
        "program other_file
  use kinds
  implicit none
  real(dp) :: a(n), b(n)
  integer :: i
!HPF$ ALIGN (I) WITH T(I) :: A, B
  do i = 1, n
    a(i) = weight(i)
  end do
  do i = 2, n - 1
    b(i) = a(i-1) + a(i+1)
  end do
  b(1) = 0
  b(n) = 0
  call report(b, n)
  print '(A,F12.6)', ' b(5) =', b(5)
end program other_file
",
    );
    let module = dir.join("kinds.f90");
    std::fs::write(&module, kinds).unwrap();
    let sequential = dir.join("sequential");
    let compiled = Command::new("gfortran")
        .arg(&module)
        .arg(&source)
        .arg("-o")
        .arg(&sequential)
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(compiled.status.success(), "{}", String::from_utf8_lossy(&compiled.stderr));
    let expected = Command::new(&sequential).output().unwrap().stdout;
    let build = hpf_ls_build(&source, &dir.join("x"));
    let notes = String::from_utf8_lossy(&build.stderr);
    assert!(build.status.success(), "{notes}");
    assert!(!notes.contains("other_file.f90:7:"), "the loop calling the function runs in parallel: {notes}");
    runs_print_on(&source, &expected, &["1", "2", "3"]);

    for (edit, why) in [
        (
            ("  integer, parameter :: n = 30\n", "  integer, parameter :: n = 30\n  integer :: counter\n"),
            "it holds the variable `counter`",
        ),
        (("    weight = 1.0_dp", "    print *, i\n    weight = 1.0_dp"), "its procedure `weight` holds `PRINT`"),
    ] {
        std::fs::write(&module, kinds.replace(edit.0, edit.1).replace("pure real", "real")).unwrap();
        let build = hpf_ls_build(&source, &dir.join("never"));
        let stderr = String::from_utf8_lossy(&build.stderr);
        assert_eq!(build.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains(
                "other_file.f90:2:7: error: USE kinds: the MPI backend cannot copy this module of another file: "
            ),
            "{stderr}"
        );
        assert!(stderr.contains(why), "{stderr}");
    }
    std::fs::remove_file(&module).unwrap();
    let build = hpf_ls_build(&source, &dir.join("never"));
    let stderr = String::from_utf8_lossy(&build.stderr);
    assert!(stderr.contains("other_file.f90:2:7: error: USE kinds: the module is not found"), "{stderr}");
    assert!(!dir.join("never").exists());
}

/// `X = TRANSPOSE(Y)`, `CSHIFT` and `EOSHIFT` of whole distributed arrays
/// (BLOCK, CYCLIC(2), a 2-D grid, other lower bounds, shifts by
/// expressions, keywords, a boundary, LOGICAL, X = CSHIFT(X)) run as one
/// all-to-all on every process count; the forms it does not take (a shift
/// of an expression, arrays laid out otherwise) stay on rank 0.
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn transposes_and_shifts_of_whole_arrays_run_in_parallel() {
    require_toolchain();
    let (dir, source) = scratch_program(
        "permute",
        "program permute
  implicit none
  integer, parameter :: n = 7, m = 5
  integer :: a(n, m), b(m, n), c(0:m-1, 2:n+1), i, j, k
  double precision :: u(n), v(n), w(-3:n-4)
  logical :: p(n, m), q(n, m)
!HPF$ PROCESSORS G(2, 2)
!HPF$ DISTRIBUTE A(BLOCK, *)
!HPF$ DISTRIBUTE B(*, CYCLIC(2))
!HPF$ DISTRIBUTE C(BLOCK, BLOCK) ONTO G
!HPF$ DISTRIBUTE (CYCLIC) :: U
!HPF$ DISTRIBUTE (BLOCK) :: V, W
!HPF$ DISTRIBUTE (BLOCK, CYCLIC) ONTO G :: P, Q
  forall (i = 1:n, j = 1:m) a(i, j) = 10 * i + j
  b = transpose(a)
  c = transpose(a)
  print '(7I4)', b
  print '(5I4)', c
  do i = 1, n
    u(i) = 1.5d0 * i
  end do
  k = 2
  v = cshift(u, k + 1)
  print '(7F6.1)', v
  w = cshift(v, shift = -2)
  print '(7F6.1)', w
  v = eoshift(w, 3, 9.5d0)
  print '(7F6.1)', v
  w = eoshift(array = v, shift = -k, boundary = -1.0d0)
  print '(7F6.1)', w
  a = cshift(reshape([(i, i = 1, n*m)], [n, m]), 1)
  p = mod(a, 3) == 0
  q = cshift(p, -1, 2)
  print '(5L2)', q
  q = eoshift(p, 2, dim = 1)
  print '(5L2)', q
  a = eoshift(a, -1, dim = 2, boundary = 77)
  print '(7I4)', a
  u = cshift(u, 2)
  print '(7F6.1)', u
end program permute
",
    );
    let build = hpf_ls_build(&source, &dir.join("x"));
    let notes = String::from_utf8_lossy(&build.stderr);
    let on_rank_zero: Vec<&str> = notes
        .lines()
        .filter(|it| it.contains("runs on one process"))
        .map(|it| it.split(": note").next().unwrap())
        .collect();
    assert_eq!(on_rank_zero.len(), 2, "{notes}");
    for line in ["31:3", "32:3"] {
        assert!(on_rank_zero.iter().any(|it| it.ends_with(line)), "{notes}");
    }
    let expected = sequential_output(&dir, &source);
    runs_print_on(&source, &expected, &["1", "2", "3", "4", "5"]);
}

/// CSHIFT, EOSHIFT and TRANSPOSE inside expressions (upwind advection, the
/// game of life's neighbour count in a WHERE mask, an antisymmetric part,
/// reductions and output of shifted arrays, IF conditions), and implied-DO
/// constructors assigned to whole arrays (as FORALLs), and LBOUND, UBOUND
/// and SIZE of distributed arrays in DO bounds (the declared bounds, not the
/// local part's), in free and fixed form, run through temporaries, each an all-to-all of its own,
/// and print what the sequential program prints. A time loop with a
/// CYCLE, and one that exits on a reduction (computed first into a
/// logical temporary), stay on every process.
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn shifts_and_transposes_inside_expressions_run_in_parallel() {
    require_toolchain();
    let (dir, source) = scratch_program(
        "hoisted",
        "program hoisted
  implicit none
  integer, parameter :: n = 13
  double precision :: u(n), v(0:n-1), s
  logical :: alive(n, n)
  integer :: nbr(n, n), a(n, n), b(n, n), c(n, n), i, j, step, di, dj
  logical :: moving
!HPF$ PROCESSORS G(2, 2)
!HPF$ DISTRIBUTE U(BLOCK)
!HPF$ DISTRIBUTE V(CYCLIC(3))
!HPF$ DISTRIBUTE (BLOCK, BLOCK) ONTO G :: ALIVE, NBR, A, B, C
  do i = 1, n
    u(i) = mod(7 * i, 5) * 0.25d0
    v(i - 1) = i * 0.5d0
  end do
  v = (/ (dble(mod(i * 7, 5)) * 0.5d0 + i, i = 1, n) /)
  do step = 1, 6
    if (mod(step, 3) == 0) cycle
    u = u - 0.5d0 * (u - cshift(u, -1))
    v = v + eoshift(v, 2, boundary=1.0d0) * 0.125d0
  end do
  s = sum(cshift(u, 3) * u)
  print '(F12.6)', s
  print '(F12.6)', maxval(cshift(v, 1) - v)
  print '(4F10.4)', cshift(u, 2) + u
  do step = 1, 500
    u = 0.5d0 * (u + cshift(u, 1))
    if (maxval(abs(u - cshift(u, -1))) < 1.0d-6) exit
  end do
  print *, 'converged at', step
  if (u(3) > 5.0d0) then
    print *, 'u(3) large'
  else if (sum(u) > 2.0d0) then
    print '(A,F12.8)', 'sum large', sum(u)
  end if
  alive = .false.
  alive(2, 3) = .true.
  alive(3, 4) = .true.
  alive(4, 2:4) = .true.
  do step = 1, 4
    nbr = 0
    do dj = -1, 1
      do di = -1, 1
        if (di == 0 .and. dj == 0) cycle
        where (cshift(cshift(alive, di, 1), dj, 2)) nbr = nbr + 1
      end do
    end do
    where (alive)
      alive = nbr == 2 .or. nbr == 3
    elsewhere
      alive = nbr == 3
    end where
    moving = any(cshift(alive, 1, 2) .neqv. alive)
    if (moving) print *, 'step', step, count(alive)
  end do
  forall (i = 1:n, j = 1:n) a(i, j) = i * i + 3 * j
  b = transpose(a) - a
  c = a + transpose(b)
  print '(13I5)', b
  print *, sum(c), count(b > 0)
end program hoisted
",
    );
    let build = hpf_ls_build(&source, &dir.join("x"));
    let notes = String::from_utf8_lossy(&build.stderr);
    assert!(!notes.contains("runs on one process"), "{notes}");
    let expected = sequential_output(&dir, &source);
    runs_print_on(&source, &expected, &["1", "2", "3", "4", "5"]);

    let (dir, source) = scratch_program(
        "hoisted_fixed",
        "      PROGRAM FIXED
      INTEGER N
      PARAMETER (N = 12)
      REAL X(N), Y(N)
      INTEGER I
CHPF$ DISTRIBUTE (BLOCK) :: X, Y
      X = (/ (REAL(I * I), I = 1, N) /)
      Y = X + CSHIFT(X, 1)
     &      - EOSHIFT(X, -1)
      Y = Y + CSHIFT(X, 2)
      PRINT *, Y
      PRINT *, Y(1:N) + CSHIFT(Y, 5)
      DO 20 I = LBOUND(Y, 1), UBOUND(Y, 1) - 1
         Y(I) = Y(I) + SIZE(X)
   20 CONTINUE
      PRINT *, I, Y
      I = 2
      X(1:N:I) = 0.0
      PRINT *, X
      END
",
    );
    let fixed = dir.join("hoisted_fixed.f");
    std::fs::rename(&source, &fixed).unwrap();
    let build = hpf_ls_build(&fixed, &dir.join("x"));
    let notes = String::from_utf8_lossy(&build.stderr);
    assert!(build.status.success(), "{notes}");
    // A note after the inserted lines names the user's line.
    assert_eq!(notes.lines().filter(|it| it.contains("runs on one process")).count(), 1, "{notes}");
    assert!(notes.contains("hoisted_fixed.f:18:7: note: runs on one process"), "{notes}");
    let expected = sequential_output(&dir, &fixed);
    runs_print_on(&fixed, &expected, &["1", "2", "3", "4", "5"]);
}

/// Distributed arrays with initial values in their declarations (a
/// constant, an implied-DO constructor, a list; BLOCK, CYCLIC(3), a 2-D
/// grid, LOGICAL) start with them on every process count: the values once
/// went missing with the declaration.
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn initial_values_of_distributed_arrays_are_kept() {
    require_toolchain();
    let (dir, source) = scratch_program(
        "initial_values",
        "program initial_values
  implicit none
  integer, parameter :: n = 6
  integer :: i, j
  integer :: a(8) = [(3*i, i = 1, 8)], c(8) = (/ 1, 2, 3, 4, 5, 6, 7, 8 /)
  real :: g(n, n) = 1.5
  logical :: m(n) = .true.
!HPF$ PROCESSORS Q(2,2)
!HPF$ DISTRIBUTE A(BLOCK)
!HPF$ DISTRIBUTE C(CYCLIC(3))
!HPF$ DISTRIBUTE G(BLOCK,BLOCK) ONTO Q
!HPF$ DISTRIBUTE M(CYCLIC)
  do i = 2, 8
    a(i) = a(i) + c(i)
  end do
  do j = 2, n
    do i = 1, n
      g(i, j) = g(i, j) + g(i, j-1)
    end do
  end do
  print *, a, c
  print *, sum(g), g(n, n), count(m)
end program initial_values
",
    );
    let expected = sequential_output(&dir, &source);
    runs_print_on(&source, &expected, &["1", "2", "3", "4"]);
}

/// DO loops over a CYCLIC or CYCLIC(3) home that read other arrays (and
/// their own, ahead of their writes) at shifted elements, which live on
/// other processes, fetch them before their courses with the
/// inspector/executor: on 1 to 5 processes they print what the sequential
/// program prints, and on the declared 3 each moves what the analysis
/// predicts (where it predicts: not for a reduction, whose home is the
/// array it reads first). A read behind the writes stays on rank 0.
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn cyclic_loops_with_shifted_reads_fetch_them_first() {
    require_toolchain();
    let (dir, source) = scratch_program(
        "cyclic_shift",
        "program cyclic_shift
  implicit none
  integer, parameter :: n = 29
  real :: a(n), b(n), e(n), w
  double precision :: d(n), g(n)
  integer :: k(0:n), i, total
!HPF$ PROCESSORS P(3)
!HPF$ TEMPLATE T(0:n + 2)
!HPF$ DISTRIBUTE T(CYCLIC(3)) ONTO P
!HPF$ DISTRIBUTE A(CYCLIC) ONTO P
!HPF$ ALIGN B(I) WITH A(I)
!HPF$ DISTRIBUTE E(BLOCK) ONTO P
!HPF$ ALIGN D(I) WITH T(I + 1)
!HPF$ ALIGN G(I) WITH T(I)
!HPF$ ALIGN K(I) WITH T(I)
  do i = 1, n
    a(i) = real(i) / 8.0
    b(i) = 1.0 / real(i)
    e(i) = real(mod(i, 5))
    d(i) = 1.0d0 / dble(i + 2)
    g(i) = dble(i) * 0.3d0
  end do
  do i = 0, n
    k(i) = mod(7 * i, 13)
  end do
  ! Reads ahead on the next process(es).
  do i = 1, n - 2
    a(i) = b(i + 1) * a(i + 2) - a(i) + b(i + 2)
  end do
  ! Backwards, reading behind the write in index order (ahead in iteration order).
  do i = n, 4, -1
    b(i) = b(i - 3) + 0.5 * a(i - 1)
  end do
  ! Non-unit step, an array cut in other blocks, an offset home.
  do i = 2, n - 1, 3
    a(i + 1) = e(i) + e(i + 1) * 2.0 - b(i - 1)
  end do
  ! CYCLIC(3) through a template with offsets; integer and double.
  do i = 1, n - 4
    d(i) = d(i + 4) + g(i + 1) * dble(k(i + 3)) - g(i - 0)
  end do
  do i = n - 1, 1, -2
    k(i) = k(i + 1) - k(i - 1)
  end do
  ! A carried dependence: stays on rank 0.
  do i = 2, n
    g(i) = g(i - 1) + d(i)
  end do
  ! An integer reduction whose home is the array it reads first, a private scalar.
  total = 0
  do i = 1, n - 1
    total = total + k(i + 1) * int(e(i))
  end do
  do i = 1, n - 3
    w = b(i + 3) * 2.0
    a(i) = w - a(i + 1)
  end do
  print *, total, w
  print *, a
  print *, b
  print '(5f20.15)', d
  print '(5f20.15)', g
  print *, k
  print *, sum(a), sum(d)
end program cyclic_shift
",
    );
    let expected = sequential_output(&dir, &source);
    runs_print_on(&source, &expected, &["1", "2", "3", "4", "5"]);
    let output = hpf_ls_run(&["--np", "3", "--stats"], &source, None);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stats = per_loop_stats_by_line(&stderr);
    // The first loop split into one per array it writes (the parts after
    // the first named by their assignments' lines), then the seven
    // owner-computes loops, six of them fetching; the analysis, which sees
    // no home in the reduction's loop, does not count that one.
    let lines: Vec<usize> = stats.iter().map(|it| it.0).collect();
    assert_eq!(lines, [16, 18, 19, 20, 21, 23, 27, 31, 35, 39, 51, 54], "{stderr}");
    for (line, moved, predicted) in stats {
        if line == 51 {
            assert_eq!(predicted, "no prediction", "{stderr}");
            continue;
        }
        assert_eq!(moved, predicted, "line {line}:\n{stderr}");
    }
    assert!(stderr.contains("line 27: 9 message(s), 81 element(s)"), "{stderr}");
}

/// Loops whose home is `H(a*v+q)` (multigrid restriction and prolongation,
/// a reversed walk, a stride of 3 with a negative step), loops split
/// because their assignments write arrays on different template cells, and
/// a time loop that sets one element from another process's element per
/// step (BLOCK and CYCLIC), on 1 to 5 processes against gfortran; every
/// owner-computes loop moves what the analysis predicts.
/// The gathers of corpus `gather_time_loop.f90` run in parallel on 1 to 5
/// processes and print what the sequential program prints; a gather whose
/// index array the time loop does not assign computes its schedule once
/// (the inspector runs once for 5 steps, once for the uncounted loop's 3),
/// the one whose index array rotates every step inspects in each: 7 runs.
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn gathers_in_time_loops_inspect_once_while_their_index_arrays_stay_unchanged() {
    require_toolchain();
    let name = "gather_time_loop.f90";
    let dir = scratch("gather_time_loop");
    let executable = dir.join("gather_time_loop");
    let build = hpf_ls_build(&corpus().join(name), &executable);
    let stderr = String::from_utf8_lossy(&build.stderr);
    assert!(build.status.success(), "{stderr}");
    assert!(!stderr.contains("runs on one process"), "{stderr}");
    assert_eq!(stderr.matches("its schedule computed once for the enclosing loop").count(), 2, "{stderr}");
    let expected = std::fs::read(corpus().join(format!("expected/{name}.out"))).unwrap();
    for processes in 1..=5 {
        let output = mpirun_with(name, &executable, processes, true);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "on {processes}: {stderr}");
        assert_eq!(String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&expected), "on {processes}");
        assert!(stderr.contains("hpf-ls stats: 7 inspector run(s) of fetched DO nests"), "on {processes}: {stderr}");
    }
}

#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn strided_homes_split_loops_and_element_fetches_run_in_parallel() {
    require_toolchain();
    let source = runs_in_parallel_as_sequential(
        "strided_homes",
        "program strided_homes
  implicit none
  integer, parameter :: n = 23, m = 2*n + 1
  real :: y(n), e(0:m), q(0:m), s
  integer :: b(m), x(n), z(n), k(m), c(n), i, step
!HPF$ PROCESSORS P(4)
!HPF$ TEMPLATE T(0:M)
!HPF$ DISTRIBUTE T(BLOCK) ONTO P
!HPF$ ALIGN Y(I) WITH T(2*I)
!HPF$ ALIGN (:) WITH T(:) :: E, Q
!HPF$ ALIGN B(I) WITH T(M-I)
!HPF$ ALIGN X(I) WITH T(2*I-1)
!HPF$ ALIGN Z(:) WITH T(2:2*N:2)
!HPF$ DISTRIBUTE K(CYCLIC(2)) ONTO P
!HPF$ DISTRIBUTE C(BLOCK) ONTO P
  do i = 0, m
    q(i) = real(mod(i * i, 13))
  end do
  do i = 1, m
    b(i) = mod(5 * i, 17)
    k(i) = mod(3 * i, 7)
  end do
  c = 0
  ! Restriction onto the coarse grid (its cells are the even ones).
  do i = 1, n
    y(i) = 0.25*q(2*i-1) + 0.5*q(2*i) + 0.25*q(2*i+1)
  end do
  e = 0.0
  ! Prolongation: homes e(2*i) and e(2*i+1).
  do i = 1, n
    e(2*i) = y(i)
  end do
  do i = 1, n - 1
    e(2*i+1) = 0.5 * (y(i) + y(i+1))
  end do
  ! A reversed walk and a stride of 3 backwards.
  do i = m, 1, -1
    b(m+1-i) = b(m+1-i) + i
  end do
  do i = 15, 1, -2
    b(3*i-2) = b(3*i-2) * 2 - k(i)
  end do
  ! Split: x and z sit on different cells.
  do i = 1, n
    x(i) = b(2*i-1) + 1
    z(i) = b(2*i) - k(i)
  end do
  ! A floating-point sum over a strided home, along the chain of processes.
  s = 0.0
  do i = 1, n
    e(2*i) = e(2*i) * 0.7
    s = s + e(2*i) * 1.1
  end do
  ! Time steps with a periodic boundary element from another process.
  do step = 1, 4
    c(2:n) = c(1:n-1) + x(2:n)
    c(1) = c(n) + z(1)
    k(2:m) = k(1:m-1)
    k(1) = k(m) + step
  end do
  print '(6f12.5)', e
  print *, b
  print *, x
  print *, z
  print *, c
  print *, k
  print *, i, step
  print '(f20.12)', s
end program strided_homes
",
    );
    let output = hpf_ls_run(&["--np", "4", "--stats"], &source, None);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stats = per_loop_stats_by_line(&stderr);
    // The prolongations, the reversed and strided walks, and the two parts
    // of the split loop (the second named by its assignment's line) are
    // owner-computes loops.
    let lines: Vec<usize> = stats.iter().map(|it| it.0).collect();
    for line in [30, 33, 37, 40, 44, 46, 50] {
        assert!(lines.contains(&line), "line {line}: {stderr}");
    }
    for (line, moved, predicted) in stats {
        if predicted != "no prediction" {
            assert_eq!(moved, predicted, "line {line}:\n{stderr}");
        }
    }
}

/// Replicated work arrays private to the iterations of the distributing
/// loop (NEW, or written before they are read: a recurrence from a first
/// element) in a subroutine copied SPMD: each process solves its own
/// columns with its own copy.
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn private_work_arrays_in_subroutines_run_on_the_owners() {
    require_toolchain();
    let source = runs_in_parallel_as_sequential(
        "private_work_arrays",
        "module solvers
  implicit none
  integer, parameter :: m = 12, n = 10
contains
  subroutine implicit_step(u, f, a)
    real(8), intent(inout) :: u(m, n)
    real(8), intent(in) :: f(m, n), a
!HPF$ INHERIT u, f
    real(8) :: c(m), d(m), w(m), denom
    integer :: i, j
!HPF$ INDEPENDENT, NEW(c, d, denom, i)
    do j = 1, n
       c(1) = -a / (1.0d0 + 2.0d0 * a)
       d(1) = f(1, j) / (1.0d0 + 2.0d0 * a)
       do i = 2, m
          denom = 1.0d0 + 2.0d0 * a + a * c(i-1)
          c(i) = -a / denom
          d(i) = (f(i, j) + a * d(i-1)) / denom
       end do
       u(m, j) = d(m)
       do i = m - 1, 1, -1
          u(i, j) = d(i) - c(i) * u(i+1, j)
       end do
    end do
    do j = 1, n
       w(1) = u(1, j)
       do i = 2, m
          w(i) = 0.5d0 * (w(i-1) + u(i, j))
       end do
       do i = 1, m
          u(i, j) = w(i)
       end do
    end do
  end subroutine implicit_step
end module solvers

program sub
  use solvers
  implicit none
  real(8) :: u(m, n), f(m, n)
!HPF$ DISTRIBUTE (*, BLOCK) :: u, f
  integer :: i, j, step
  forall (i = 1:m, j = 1:n) u(i, j) = cos(0.4d0 * i) + 0.1d0 * j
  do step = 1, 4
     f = u
     call implicit_step(u, f, 0.3d0)
     write (*, '(a, i2, f20.14)') 'step', step, sum(u)
  end do
  write (*, '(4f18.14)') u(1, 1), u(m, n), u(m/2, n/2), u(3, 7)
end program sub
",
    );
    let output = hpf_ls_build(&source, &source.with_extension("exe"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("note:"), "{stderr}");
}

/// LU factorisation and a Gaussian sweep with the matrix distributed by
/// columns (CYCLIC and BLOCK): the column scaling runs on the column's
/// owner, the INDEPENDENT update reads the pivot column from a broadcast
/// copy, and the factors are byte-identical to gfortran's on 1 to 5
/// processes; no loop of the factorisation runs on one process.
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn lu_factorisations_by_columns_run_in_parallel() {
    require_toolchain();
    for (name, distribution) in [("lu_cyclic_columns", "(*, CYCLIC)"), ("lu_block_columns", "(*, BLOCK)")] {
        let text = format!(
            "program lu
  implicit none
  integer, parameter :: n = 19
  double precision :: a(n,n), b(n,n)
  integer :: i, j, k
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE A{distribution} ONTO P
!HPF$ ALIGN B(I,J) WITH A(I,J)
  do j = 1, n
    do i = 1, n
      a(i,j) = 1.0d0 / dble(i + 2*j) + merge(dble(n), 0.0d0, i == j)
    end do
  end do
  b = a
  do k = 1, n-1
    do i = k+1, n
      a(i,k) = a(i,k) / a(k,k)
    end do
!HPF$ INDEPENDENT, NEW(I)
    do j = k+1, n
      do i = k+1, n
        a(i,j) = a(i,j) - a(i,k) * a(k,j)
      end do
    end do
    do j = k+1, n
      b(k,j) = b(k,j) * 0.5d0 + a(k,j) + b(k+1,k)
    end do
  end do
  print '(3f24.16)', a
  print '(3f24.16)', b
end program lu
"
        );
        let (dir, source) = scratch_program(name, &text);
        let expected = sequential_output(&dir, &source);
        runs_print_on(&source, &expected, &["1", "2", "3", "4", "5"]);
        let output = hpf_ls_build(&source, &dir.join("lu.exe"));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{stderr}");
        assert!(!stderr.contains("runs on one process"), "{name}: {stderr}");
    }
}

/// Loops that update elements through computed indices: an integer
/// histogram and a floating-point deposit from CYCLIC particles into BLOCK
/// and CYCLIC(3) grids, a MAX over iterations that read nothing
/// distributed, a backward walk, a LOGICAL flag array, an update that
/// does not commute (`x = v - x`), one whose value reads the iteration's
/// neighbours (fetched first) and a guarded overwrite (the last iteration
/// naming an element gives its value), on 1 to 5 processes against gfortran.
/// None runs on one process; each moves its updates in one exchange.
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn scatter_updates_through_index_arrays_give_the_sequential_results() {
    require_toolchain();
    let source = runs_in_parallel_as_sequential(
        "scatter_updates",
        "program scatter_updates
  implicit none
  integer, parameter :: n = 61, m = 14
  integer :: cell(n), hist(m), top(m), flip(m), bins(n), w(n), i, step
  real :: q(n), rho(m), last(m)
  double precision :: acc(m)
  logical :: seen(m)
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE (CYCLIC) ONTO P :: CELL, Q
!HPF$ DISTRIBUTE (BLOCK) ONTO P :: HIST, RHO, SEEN, LAST
!HPF$ DISTRIBUTE (CYCLIC(3)) ONTO P :: TOP, ACC, FLIP
!HPF$ DISTRIBUTE (BLOCK) ONTO P :: BINS, W
  do i = 1, n
    cell(i) = mod(7 * i + 3, m) + 1
    q(i) = 1.0 / real(i + 2)
    bins(i) = mod(5 * i, m) + 1
    w(i) = mod(i * i, 17)
  end do
  hist = 0
  rho = 0.0
  acc = 0.0d0
  top = -1
  flip = 1
  seen = .false.
  last = -1.0
  do step = 1, 3
    do i = 1, n
      hist(cell(i)) = hist(cell(i)) + step
    end do
    do i = n, 1, -2
      rho(cell(i)) = rho(cell(i)) + q(i) * real(step)
    end do
    do i = 1, n
      acc(m + 1 - cell(i)) = acc(m + 1 - cell(i)) + 1.0d0 / dble(i * step)
    end do
    do i = 1, 5 * n
      top(mod(i * i, m) + 1) = max(top(mod(i * i, m) + 1), mod(i * 37, 101))
    end do
    do i = 1, n
      flip(cell(i)) = i - flip(cell(i))
    end do
    do i = 1, n, 3
      seen(cell(i)) = seen(cell(i)) .or. q(i) > 0.05
    end do
    do i = 1, n
      if (mod(i, 4) /= 1) last(cell(i)) = q(i) * real(i + step)
    end do
    do i = 2, n - 1
      hist(bins(i)) = hist(bins(i)) + (w(i + 1) - w(i - 1))
    end do
    do i = 1, n
      cell(i) = mod(cell(i) + i, m) + 1
    end do
  end do
  print *, hist
  print '(7es16.8)', rho
  print '(7es24.16)', acc
  print *, top
  print *, flip
  print *, seen
  print '(7es16.8)', last
  print *, i, step
end program scatter_updates
",
    );
    let output = hpf_ls_run(&["--np", "4", "--stats"], &source, None);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stats = per_loop_stats_by_line(&stderr);
    let lines: Vec<usize> = stats.iter().map(|it| it.0).collect();
    for line in [27, 30, 33, 36, 39, 42, 45, 48] {
        assert!(lines.contains(&line), "line {line}: {stderr}");
    }
    // The histogram sends at most one update per element and process: at
    // most 14 elements to 3 other processes.
    let histogram = stats.iter().find(|it| it.0 == 27).expect("the histogram's stats");
    let elements: u64 = histogram.1.split(", ").nth(1).and_then(|it| it.split(' ').next()?.parse().ok()).unwrap();
    assert!(elements <= 14 * 3, "{stderr}");
}

/// INDEPENDENT loops that write elements next to their home's (the swaps of
/// an odd-even transposition sort, a red-black update of both neighbours,
/// a stride of 3 writing two cells ahead, REAL and INTEGER) write them in
/// the shadow and send them home after the loop; LOGICAL flags set in the
/// loop end alike on every process. On 1 to 5 processes against gfortran,
/// and no loop runs on one process.
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn independent_loops_writing_their_neighbours_send_them_home() {
    require_toolchain();
    runs_in_parallel_as_sequential(
        "send_home",
        "program send_home
  implicit none
  integer, parameter :: n = 37
  integer :: key(n), tmp, i, phase, rounds
  real :: u(0:n+1), h
  logical :: swapped, big
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE KEY(BLOCK) ONTO P
!HPF$ TEMPLATE T(0:N+1)
!HPF$ DISTRIBUTE T(BLOCK) ONTO P
!HPF$ ALIGN U(I) WITH T(I)
  do i = 1, n
    key(i) = mod(37 * i + 11, 101)
  end do
  do i = 0, n + 1
    u(i) = real(mod(i * 7, 5))
  end do
  swapped = .true.
  rounds = 0
  do while (swapped)
    swapped = .false.
    rounds = rounds + 1
    do phase = 1, 2
!HPF$ INDEPENDENT, NEW(TMP)
      do i = phase, n - 1, 2
        if (key(i) > key(i + 1)) then
          tmp = key(i)
          key(i) = key(i + 1)
          key(i + 1) = tmp
          swapped = .true.
        end if
      end do
    end do
  end do
  big = .false.
!HPF$ INDEPENDENT, NEW(H)
  do i = 2, n, 3
    h = u(i) * 0.5
    u(i - 1) = u(i - 1) + h
    u(i + 1) = u(i + 1) + h
    u(i) = u(i) - 2.0 * h
    if (u(i + 1) > 3.0) big = .true.
  end do
!HPF$ INDEPENDENT
  do i = n - 3, 1, -3
    key(i + 2) = key(i + 2) + key(i)
  end do
  print *, rounds, swapped, big
  print *, key
  print '(8f9.4)', u
end program send_home
",
    );
}

/// Default mode: floating-point SUM, PRODUCT, DOT_PRODUCT (BLOCK, `(BLOCK, *)`,
/// `(*, BLOCK)`, 2-D grid, CYCLIC(64), sections, a MASK) and sums, products
/// and a MAX accumulated in a loop run in parallel: on 1 to 4 processes the
/// output equals gfortran's within a relative 1e-12, two runs on as many
/// processes print the same bits, and `--stats` counts no message (no chain
/// of running values). With `--ordered-reductions` the same program prints
/// the sequential output byte for byte, passing its running values along.
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn default_reductions_run_in_parallel_within_rounding_and_repeat_bit_for_bit() {
    require_toolchain();
    let (dir, source) = scratch_program("default_reductions", DEFAULT_REDUCTIONS);
    let expected = String::from_utf8(sequential_output(&dir, &source)).unwrap();
    let executable = dir.join("default_reductions.exe");
    let build =
        Command::new(env!("CARGO_BIN_EXE_hpf-ls")).arg("build").arg(&source).arg("-o").arg(&executable).output();
    let build = build.unwrap();
    let stderr = String::from_utf8_lossy(&build.stderr);
    assert!(build.status.success() && !stderr.contains("runs on one process"), "{stderr}");
    for processes in 1..=4 {
        let first = mpirun_with("default_reductions", &executable, processes, true);
        assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
        let printed = String::from_utf8(first.stdout).unwrap();
        assert_within_rounding(&printed, &expected, 1e-12, processes);
        let stderr = String::from_utf8_lossy(&first.stderr);
        assert!(stderr.contains("hpf-ls stats: 0 message(s), 0 element(s) in total"), "on {processes}: {stderr}");
        let second = mpirun_with("default_reductions", &executable, processes, false);
        assert_eq!(String::from_utf8(second.stdout).unwrap(), printed, "two runs on {processes} processes");
    }
    let ordered = hpf_ls_run(&["--np", "4", "--stats"], &source, None);
    assert_eq!(String::from_utf8_lossy(&ordered.stdout), expected, "ordered, on 4 processes");
    let stderr = String::from_utf8_lossy(&ordered.stderr);
    assert!(!stderr.contains("hpf-ls stats: 0 message(s)"), "the ordered chains pass messages: {stderr}");
}

/// `printed` is `expected` but for numbers that differ by at most `tolerance` relatively.
fn assert_within_rounding(printed: &str, expected: &str, tolerance: f64, processes: u32) {
    let words = |text: &str| text.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    let (printed_words, expected_words) = (words(printed), words(expected));
    assert_eq!(printed_words.len(), expected_words.len(), "on {processes}:\n{printed}\ninstead of\n{expected}");
    for (got, want) in printed_words.iter().zip(&expected_words) {
        if got == want {
            continue;
        }
        let close = match (got.parse::<f64>(), want.parse::<f64>()) {
            (Ok(got), Ok(want)) => (got - want).abs() <= tolerance * want.abs().max(got.abs()),
            _ => false,
        };
        assert!(close, "on {processes}: {got} instead of {want}:\n{printed}\ninstead of\n{expected}");
    }
}

const DEFAULT_REDUCTIONS: &str = "\
! Floating-point reductions of every shape the backend runs in parallel:
! SUM, PRODUCT, DOT_PRODUCT of BLOCK, (BLOCK, *), (*, BLOCK), 2-D grid and
! CYCLIC(64) arrays, sections, a MASK, and sums, products and a MAX
! accumulated in loops. Magnitudes mix, so the order changes the last digits.
program default_reductions
  implicit none
  integer, parameter :: n = 517, m = 9, nc = 300
  double precision :: x(n), y(n), rows(n, m), cols(m, n), grid(n, 13)
  double precision :: c(nc), d(nc)
  double precision :: s, t, root, big
  integer :: i, j
!HPF$ PROCESSORS P(4)
!HPF$ PROCESSORS Q(2, 2)
!HPF$ DISTRIBUTE (BLOCK) ONTO P :: X
!HPF$ ALIGN Y(I) WITH X(I)
!HPF$ DISTRIBUTE (BLOCK, *) ONTO P :: ROWS
!HPF$ DISTRIBUTE (*, BLOCK) ONTO P :: COLS
!HPF$ DISTRIBUTE (BLOCK, BLOCK) ONTO Q :: GRID
!HPF$ DISTRIBUTE (CYCLIC(64)) ONTO P :: C, D
  do i = 1, n
    x(i) = 1.0d0 / dble(i) + dble(mod(i, 9)) * 1.0d7
    y(i) = dble(mod(3 * i, 11)) + 0.25d0
  end do
  do j = 1, m
    do i = 1, n
      rows(i, j) = 1.0d0 / dble(i + 7 * j) + dble(mod(i * j, 5)) * 1000.0d0
      cols(j, i) = 1.0d0 / dble(3 * j + i) + dble(mod(i + j, 7)) * 1.0d6
    end do
  end do
  do j = 1, 13
    do i = 1, n
      grid(i, j) = 1.0d0 / dble(i * j) + dble(mod(i, 3)) * 1.0d8
    end do
  end do
  do i = 1, nc
    c(i) = 1.0d0 / dble(i) + dble(mod(i, 9)) * 1.0d5
    d(i) = dble(mod(i, 4)) + 0.5d0
  end do
  print '(A,ES25.17)', 'sum(x)              =', sum(x)
  print '(A,ES25.17)', 'dot_product(x, y)   =', dot_product(x, y)
  print '(A,ES25.17)', 'sum(x(2:n:3))       =', sum(x(2:n:3))
  print '(A,ES25.17)', 'sum(x, mask=y > 3)  =', sum(x, mask=y > 3.0d0)
  print '(A,ES25.17)', 'product(1 + x/1e9)  =', product(1.0d0 + x / 1.0d9)
  print '(A,ES25.17)', 'sum(rows)           =', sum(rows)
  print '(A,ES25.17)', 'sum(cols(2:m, :))   =', sum(cols(2:m, :))
  print '(A,ES25.17)', 'sum(grid)           =', sum(grid)
  print '(A,ES25.17)', 'dot_product(c, d)   =', dot_product(c, d)
  s = 0.0d0
  t = 1.0d0
  big = 0.0d0
  do i = 1, n
    s = s + x(i) * y(i)
    t = t * (1.0d0 + y(i) / 1.0d4)
    big = max(big, x(i) / y(i))
  end do
  print '(A,3ES25.17)', 's, t, big           =', s, t, big
  root = 0.0d0
  do i = 1, n
    root = root + sqrt(x(i))
  end do
  print '(A,ES25.17)', 'sum of sqrt(x)      =', root
end program default_reductions
";

/// The shallow-water benchmark (bench/mpi/shallow_water.f90) at a small
/// size: an uncounted time loop (`DO` ... `IF (...) EXIT` ... `END DO`)
/// calling three internal subroutines that update distributed arrays by
/// host association, a PRINT every 4 steps, periodic boundary copies of
/// columns between processes. Everything runs on every process (no note
/// says "runs on one process"), and the output is gfortran's.
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn a_shallow_water_time_loop_runs_on_every_process() {
    require_toolchain();
    let text = include_str!("../../../bench/mpi/shallow_water.f90")
        .replace("m = 2048, n = 2048", "m = 37, n = 53")
        .replace("@SWEEPS@", "12")
        .replace("mod(ncycle, 50)", "mod(ncycle, 4)");
    let source = runs_in_parallel_as_sequential("shallow_water", &text);
    // The boundary columns move between processes, nothing is gathered.
    let output = hpf_ls_run(&["--np", "2", "--stats"], &source, None);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let total = stderr.lines().find(|it| it.ends_with("in total")).unwrap_or_default();
    assert!(!total.starts_with("hpf-ls stats: 0 message"), "{stderr}");
}

/// Time loops written as scientists write them, run by every process: a
/// DO WHILE calling an internal subroutine that RETURNs early, a PRINT
/// every 7 steps, an EXIT on a residual computed by a reduction, a timer
/// (an external routine with no distributed argument); an uncounted DO
/// whose IF construct prints and STOPs (every process stops, after MPI is
/// finalised, and one prints the STOP's message). Output equals gfortran's on 1 to 5 processes and no
/// statement runs on one process.
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn time_loops_with_returns_prints_exits_and_stops_run_on_every_process() {
    require_toolchain();
    runs_in_parallel_as_sequential(
        "relax_return",
        "program relax_return
  implicit none
  integer, parameter :: n = 40
  double precision :: a(n), b(n), resid, t0, t1
  integer :: i, step
!HPF$ DISTRIBUTE (BLOCK) :: a, b
  do i = 1, n
    a(i) = dble(mod(7 * i, 11))
  end do
  b = 0.d0
  step = 0
  call cpu_time(t0)
  do while (step < 100)
    step = step + 1
    call smooth(step)
    resid = maxval(abs(a(2:n-1) - b(2:n-1)))
    if (mod(step, 7) == 0) print '(i4, f14.8)', step, resid
    if (resid < 1.d-3) exit
  end do
  call cpu_time(t1)
  print '(a, i4, f14.8)', ' done', step, sum(a)
contains
  subroutine smooth(k)
    integer, intent(in) :: k
    b(2:n-1) = 0.5d0 * (a(1:n-2) + a(3:n))
    if (k > 60) return
    a(2:n-1) = b(2:n-1)
  end subroutine smooth
end program relax_return
",
    );
    runs_in_parallel_as_sequential(
        "stop_in_loop",
        "program stop_in_loop
  implicit none
  integer, parameter :: n = 30
  real :: u(n), un(n)
  integer :: i, step
!HPF$ DISTRIBUTE (BLOCK) :: u, un
  do i = 1, n
    u(i) = real(i)
  end do
  un = u
  step = 0
  do
    step = step + 1
    un(2:n-1) = 0.5 * (u(1:n-2) + u(3:n))
    u(2:n-1) = un(2:n-1)
    if (step >= 5) then
      print '(a, i3, f12.4)', ' stopping at', step, sum(u)
      stop 'converged'
    end if
  end do
end program stop_in_loop
",
    );
}

/// Every supported corpus program that the default mode (reductions in
/// parallel, partials combined in rank order) generates otherwise than
/// `--ordered-reductions` does, built in the default mode, prints on 2 and 3 processes
/// what gfortran's build prints, but for real numbers within a relative
/// 1e-12 (text and integers exactly; 1e-5 in programs that declare
/// default-kind REAL, whose sums round at about 1e-7 in any order), and two
/// runs on 3 processes print the same bytes. (The test above runs
/// them with `--ordered-reductions`, byte for byte.)
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn supported_corpus_programs_in_the_default_mode_print_the_sequential_values_within_rounding() {
    require_toolchain();
    let dir = scratch("corpus_default");
    let mut wrong = Vec::new();
    let mut checked = 0;
    for name in SUPPORTED {
        let source = corpus().join(name);
        // Where both modes generate the same program, the ordered test has
        // run it on 1-5 processes already.
        if !common::reduction_modes_differ(&source) {
            continue;
        }
        checked += 1;
        let executable = dir.join(name.replace('.', "_"));
        let build =
            Command::new(env!("CARGO_BIN_EXE_hpf-ls")).arg("build").arg(&source).arg("-o").arg(&executable).output();
        let build = build.unwrap();
        assert!(build.status.success(), "{name} does not build:\n{}", String::from_utf8_lossy(&build.stderr));
        let expected =
            std::fs::read_to_string(corpus().join(format!("expected/{name}.out"))).expect("an expected output");
        let text = std::fs::read_to_string(&source).unwrap();
        let tolerance = if declares_default_real(&text) { 1e-5 } else { 1e-12 };
        for processes in [2, 3] {
            let first = mpirun(name, &executable, processes);
            assert!(first.status.success(), "{name} on {processes}: {}", String::from_utf8_lossy(&first.stderr));
            let printed = String::from_utf8(first.stdout).unwrap();
            if let Err(why) = same_but_rounding(&printed, &expected, tolerance) {
                wrong.push(format!("{name} on {processes} processes: {why}\n{printed}\ninstead of\n{expected}"));
            }
            if processes != 3 {
                continue;
            }
            let second = mpirun(name, &executable, processes);
            if String::from_utf8(second.stdout).unwrap() != printed {
                wrong.push(format!("{name}: two runs on {processes} processes print different bytes"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
    assert!(checked >= 10, "only {checked} corpus programs differ between the reduction modes");
}

/// Whether `text` declares a REAL of the default kind (`REAL X`, `REAL ::
/// X`, `REAL(4)`), not only REAL(8) and DOUBLE PRECISION.
fn declares_default_real(text: &str) -> bool {
    text.lines().map(|it| it.trim().to_ascii_lowercase()).any(|line| {
        let Some(rest) = line.strip_prefix("real") else { return false };
        if rest.starts_with('*') {
            return rest.starts_with("*4");
        }
        if rest.starts_with('(') {
            return rest.starts_with("(4)") || rest.starts_with("(kind=4)");
        }
        rest.starts_with([' ', '\t', ':', ','])
    })
}

/// `printed` is `expected` up to real numbers that differ by at most
/// `tolerance` relatively: both are cut into numbers and the text between
/// them; the text and the integers must match exactly.
fn same_but_rounding(printed: &str, expected: &str, tolerance: f64) -> Result<(), String> {
    let (got, want) = (numbers_and_text(printed), numbers_and_text(expected));
    if got.len() != want.len() {
        return Err(format!("{} pieces instead of {}", got.len(), want.len()));
    }
    for (got, want) in got.iter().zip(&want) {
        if got == want {
            continue;
        }
        let real = |it: &str| it.contains(['.', 'e', 'E', 'd', 'D']);
        let close = match (got.parse::<f64>(), want.parse::<f64>()) {
            (Ok(a), Ok(b)) if real(got) && real(want) => (a - b).abs() <= tolerance * a.abs().max(b.abs()),
            _ => false,
        };
        if !close {
            return Err(format!("{got} instead of {want}"));
        }
    }
    Ok(())
}

/// The numbers of `text` (`-12`, `3.5`, `.5E-3`, `1.0D+02` as `1.0E+02`)
/// and the text around them, blanks dropped, in order.
fn numbers_and_text(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut pieces = Vec::new();
    let mut other = String::new();
    let mut at = 0;
    while at < chars.len() {
        let digit_at = |k: usize| chars.get(k).is_some_and(char::is_ascii_digit);
        let starts_number = digit_at(at)
            || (chars[at] == '.' && digit_at(at + 1))
            || (matches!(chars[at], '-' | '+')
                && (digit_at(at + 1) || (chars.get(at + 1) == Some(&'.') && digit_at(at + 2))));
        // Not inside a word (`x2`, `r8`).
        let in_word = at > 0 && (chars[at - 1].is_ascii_alphanumeric() || chars[at - 1] == '_');
        if !starts_number || in_word {
            if !chars[at].is_whitespace() {
                other.push(chars[at]);
            }
            at += 1;
            continue;
        }
        if !other.is_empty() {
            pieces.push(std::mem::take(&mut other));
        }
        let start = at;
        at += 1;
        while at < chars.len() && (chars[at].is_ascii_digit() || chars[at] == '.') {
            at += 1;
        }
        if at < chars.len() && matches!(chars[at], 'e' | 'E' | 'd' | 'D') {
            let sign = usize::from(matches!(chars.get(at + 1), Some('-' | '+')));
            if digit_at(at + 1 + sign) {
                at += 1 + sign;
                while digit_at(at) {
                    at += 1;
                }
            }
        }
        let number: String = chars[start..at].iter().collect();
        pieces.push(number.replace(['d', 'D'], "E"));
    }
    if !other.is_empty() {
        pieces.push(other);
    }
    pieces
}

#[test]
fn numbers_and_text_cut_fortran_output() {
    assert_eq!(
        numbers_and_text(" x2 =  -1.5E+00, 3 .25 r8 1.0D-3\n"),
        ["x2=", "-1.5E+00", ",", "3", ".25", "r8", "1.0E-3"]
    );
    assert!(same_but_rounding("s = 1.0000000000000002E+00 7", "s = 1.0000000000000000E+00 7", 1e-12).is_ok());
    assert!(same_but_rounding("s = 1.0001E+00 7", "s = 1.0000E+00 7", 1e-12).is_err());
    assert!(same_but_rounding("s = 1.0E+00 8", "s = 1.0E+00 7", 1e-12).is_err());
    assert!(same_but_rounding("t = 1.0E+00 7", "s = 1.0E+00 7", 1e-12).is_err());
    assert!(declares_default_real("  real :: u(10)\n") && declares_default_real("      REAL X(N), Y\n"));
    assert!(declares_default_real("  real(4) :: u\n") && declares_default_real("  real*4 u\n"));
    assert!(!declares_default_real("  real(8) :: u\n  double precision v\n  real*8 w\n  real(kind=dp) :: z\n"));
    assert!(!declares_default_real("  x = real(i)\n  realign = 1\n"));
}

/// Scans written as loops, and recurrences `y(i) = y(i-1) + x(i)` on BLOCK
/// arrays, run as a parallel prefix (`backend/src/scan.rs`):
/// every loop of the program runs in parallel (no note), in the default mode
/// on 1 to 4 processes it prints gfortran's output within a relative 1e-12
/// (integers exactly) and the same bytes in two runs, and with
/// `--ordered-reductions` gfortran's output byte for byte (floating-point
/// scans along the chain of processes).
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn scans_written_as_loops_run_as_parallel_prefixes() {
    require_toolchain();
    let (dir, source) = scratch_program("scans", SCANS);
    let expected = String::from_utf8(sequential_output(&dir, &source)).unwrap();
    let executable = dir.join("scans.exe");
    let build =
        Command::new(env!("CARGO_BIN_EXE_hpf-ls")).arg("build").arg(&source).arg("-o").arg(&executable).output();
    let build = build.unwrap();
    let stderr = String::from_utf8_lossy(&build.stderr);
    assert!(build.status.success() && !stderr.contains("note:"), "{stderr}");
    for processes in 1..=4 {
        let first = mpirun("scans", &executable, processes);
        assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
        let printed = String::from_utf8(first.stdout).unwrap();
        if let Err(why) = same_but_rounding(&printed, &expected, 1e-12) {
            panic!("on {processes} processes: {why}\n{printed}\ninstead of\n{expected}");
        }
        let second = mpirun("scans", &executable, processes);
        assert_eq!(String::from_utf8(second.stdout).unwrap(), printed, "two runs on {processes} processes");
    }
    for processes in ["3", "4"] {
        let ordered = hpf_ls_run(&["--np", processes], &source, None);
        assert_eq!(String::from_utf8_lossy(&ordered.stdout), expected, "ordered, on {processes} processes");
    }
}

const SCANS: &str = "\
! Scans written as loops: running sums, products and maxima stored into
! distributed arrays, inclusive and exclusive, in place, over a section, a
! loop shorter than the processes' blocks, a (*, BLOCK) array with an
! inner loop, beside another reduction, an F77 loop whose last statement
! stores the running value, two scans in one backward loop; recurrences
! y(i) = y(i-1) + ..., a running maximum and a backward product.
program scans
  implicit none
  integer, parameter :: n = 1003
  integer :: k(n), ik(n), i, j, isum, imax, count
  double precision :: x(n), y(n), z(n), a(7, n), b(7, n), s, t, p
!HPF$ DISTRIBUTE (BLOCK) :: K
!HPF$ ALIGN IK(I) WITH K(I)
!HPF$ ALIGN X(I) WITH K(I)
!HPF$ ALIGN Y(I) WITH K(I)
!HPF$ ALIGN Z(I) WITH K(I)
!HPF$ DISTRIBUTE (*, BLOCK) :: A, B
  do i = 1, n
    k(i) = mod(i * 37, 101) - 50
    x(i) = 1.0d0 / dble(i) + dble(mod(i, 9)) * 1.0d3
    z(i) = dble(mod(i, 5)) * 0.5d0 + 1.0d0
  end do
  do j = 1, n
    do i = 1, 7
      a(i, j) = 1.0d0 / dble(i + j)
    end do
  end do
  isum = 17
  do i = 1, n
    isum = isum + k(i)
    ik(i) = isum
  end do
  print *, 'inclusive integer scan', isum, ik(1), ik(n / 2), ik(n), sum(ik)
  imax = -1000
  count = 0
  do i = 3, n - 2
    ik(i) = imax
    imax = max(imax, k(i) * i)
    if (k(i) > 40) count = count + 1
  end do
  print *, 'exclusive running max', imax, count, ik(3), ik(4), ik(n - 2), sum(ik)
  s = 0.0d0
  do i = 1, n
    s = s + x(i)
    y(i) = 2.0d0 * s
  end do
  print '(a, 4es25.16)', 'double scan ', s, y(1), y(n / 3), y(n)
  t = 1.0d0
  do i = 1, 5
    t = t + z(i)
    z(i) = t
  end do
  print '(a, 3es25.16)', 'short in-place scan ', t, z(1), z(5)
  p = 1.0d0
  do i = 1, n
    p = p * (1.0d0 + x(i) / 1.0d7)
    y(i) = p
  end do
  print '(a, 3es25.16)', 'product scan ', p, y(n / 2), y(n)
  s = 0.0d0
  do j = 1, n
    do i = 1, 7
      s = s + a(i, j)
      b(i, j) = s
    end do
  end do
  print '(a, 3es25.16)', 'scan of a (*, BLOCK) array ', s, b(7, n / 2), b(7, n)
  s = 0.0d0
  do 10 i = 1, n
    s = s + x(i)
10 y(i) = s
  print '(a, 2es25.16)', 'F77 scan ', s, y(n)
  isum = 0
  s = 1.0d0
  do i = n, 1, -1
    isum = isum + k(i) * i
    ik(i) = isum
    s = s + x(i)
    y(i) = s
  end do
  print '(a, 3i12, 2es25.16)', 'backward scans ', isum, ik(1), ik(n / 2), y(1), y(n / 2)
  y(1) = 3.0d0
  do i = 2, n
    y(i) = y(i - 1) + x(i) * 2.0d0 - 1.0d0
  end do
  print '(a, 3es25.16)', 'recurrence ', y(2), y(n / 2), y(n)
  do i = 2, n
    k(i) = max(k(i - 1), k(i) * i)
  end do
  print *, 'maximum recurrence', k(2), k(n / 2), k(n), i
  z(n) = 1.0d0
  do i = n - 1, 1, -1
    z(i) = z(i + 1) * (1.0d0 + x(i) / 1.0d6)
  end do
  print '(a, 3es25.16)', 'backward product recurrence ', z(1), z(n / 2), z(n)
end program scans
";

/// The runtime a build compiles is kept in the cache (`HPF_LS_CACHE_DIR`)
/// and linked by the next builds; a damaged cached runtime is compiled
/// again, not reported as a failure; `off` keeps nothing.
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn builds_reuse_a_cached_runtime_and_mend_a_damaged_one() {
    require_toolchain();
    let dir = scratch("runtime_cache");
    let cache = dir.join("cache");
    let source = corpus().join("cyclic_basic.f90");
    let expected = std::fs::read(corpus().join("expected/cyclic_basic.f90.out")).unwrap();
    // A compiler that writes down each command it is given, then runs mpif90.
    let log = dir.join("commands.log");
    let compiler = dir.join("logging-mpif90");
    std::fs::write(&compiler, format!("#!/bin/sh\necho \"$*\" >> '{}'\nexec mpif90 \"$@\"\n", log.display())).unwrap();
    std::fs::set_permissions(&compiler, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let runtime_compiles = || {
        let log = std::fs::read_to_string(&log).unwrap_or_default();
        log.lines().filter(|it| it.contains(" -c ") && it.contains("hpf_runtime.f90")).count()
    };
    let build = |executable: &Path, cache: &Path| {
        let output = Command::new(env!("CARGO_BIN_EXE_hpf-ls"))
            .args(["build", "--ordered-reductions", "--fc"])
            .arg(&compiler)
            .arg(&source)
            .arg("-o")
            .arg(executable)
            .env("HPF_LS_CACHE_DIR", cache)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    };
    let entries = || -> Vec<PathBuf> {
        std::fs::read_dir(&cache).map_or(Vec::new(), |it| it.filter_map(Result::ok).map(|it| it.path()).collect())
    };
    let runs_right = |executable: &Path| {
        for processes in [1, 3] {
            let output = mpirun("cyclic_basic.f90", executable, processes);
            assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
            assert_eq!(output.stdout, expected, "on {processes} processes");
        }
    };
    build(&dir.join("first"), &cache);
    assert_eq!(runtime_compiles(), 1);
    let stored = entries();
    assert_eq!(stored.len(), 1, "one compiled runtime kept: {stored:?}");
    build(&dir.join("second"), &cache);
    assert_eq!(runtime_compiles(), 1, "the second build links the kept runtime");
    runs_right(&dir.join("second"));
    let object = stored[0].join("hpf_runtime.o");
    std::fs::write(&object, b"not an object file").unwrap();
    build(&dir.join("third"), &cache);
    assert_eq!(runtime_compiles(), 2, "a damaged runtime is compiled again");
    runs_right(&dir.join("third"));
    assert_ne!(std::fs::read(&object).unwrap(), b"not an object file", "the damaged runtime is replaced");
    build(&dir.join("fourth"), &cache);
    assert_eq!(runtime_compiles(), 2, "and the new one is linked after");
    build(&dir.join("uncached"), Path::new("off"));
    assert_eq!(runtime_compiles(), 3);
    runs_right(&dir.join("uncached"));
    assert_eq!(entries(), stored, "`off` keeps nothing");
}

/// EXTRINSIC(HPF_LOCAL): every process calls the procedure on its local
/// parts (a 2-D array distributed `(*, BLOCK)`, a CYCLIC(2) one with lower
/// bound 0 seen by a dummy `b(0:)`, a replicated one as it is), and the
/// inquiry functions of HPF_LOCAL_LIBRARY answer about the caller's mapping:
/// LOCAL_TO_GLOBAL gives every element its global subscripts, GLOBAL_SIZE,
/// GLOBAL_LBOUND and GLOBAL_UBOUND the global bounds, MY_PROCESSOR the
/// element's owner (checked against the BLOCK formula). The output is the
/// HPF meaning, the same on every number of processes (no sequential
/// program knows HPF_LOCAL_LIBRARY).
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn hpf_local_procedures_get_local_parts_and_ask_their_mapping() {
    require_toolchain();
    let (_dir, source) = scratch_program(
        "hpf_local_inquiry",
        r#"program inquire
  implicit none
  interface
    extrinsic(hpf_local) subroutine number(a, o, b, r)
      integer, intent(out) :: a(:, :), o(:)
      integer, intent(out) :: b(0:)
      integer, intent(in) :: r(:)
!HPF$ DISTRIBUTE A(*, BLOCK)
    end subroutine number
  end interface
  integer, parameter :: n = 10
  integer :: a(3, n), o(n), b(0:12), r(5)
  integer :: j, np, blk, bad
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE A(*, BLOCK) ONTO P
!HPF$ DISTRIBUTE O(BLOCK) ONTO P
!HPF$ DISTRIBUTE B(CYCLIC(2)) ONTO P
  r = 7
  call number(a, o, b, r)
  do j = 1, n
    write (*, '(3i6)') a(:, j)
  end do
  write (*, '(13i8)') b
  np = number_of_processors()
  blk = (n + np - 1) / np
  bad = 0
  do j = 1, n
    if (o(j) /= (j - 1) / blk) bad = bad + 1
  end do
  write (*, '(a, i3)') ' misplaced', bad
end program inquire

extrinsic(hpf_local) subroutine number(a, o, b, r)
  use hpf_local_library
  implicit none
  integer, intent(out) :: a(:, :), o(:)
  integer, intent(out) :: b(0:)
  integer, intent(in) :: r(:)
  integer :: i, j, k, g(2), h(1)
  do j = 1, size(a, 2)
    do i = 1, size(a, 1)
      g = local_to_global(a, [i, j])
      a(i, j) = 100 * g(1) + g(2) + 1000 * global_size(a, 2) + 10000 * global_size(r)
    end do
    o(j) = my_processor()
  end do
  do k = 0, ubound(b, 1)
    h = local_to_global(b, [k])
    b(k) = 10000 * h(1) + 100 * global_size(b) + global_ubound(b, 1) - global_lbound(b, 1)
  end do
end subroutine number
"#,
    );
    let expected = r#" 60101 60201 60301
 60102 60202 60302
 60103 60203 60303
 60104 60204 60304
 60105 60205 60305
 60106 60206 60306
 60107 60207 60307
 60108 60208 60308
 60109 60209 60309
 60110 60210 60310
    1312   11312   21312   31312   41312   51312   61312   71312   81312   91312  101312  111312  121312
 misplaced  0
"#;
    runs_print_on(&source, expected.as_bytes(), &["1", "2", "3", "4", "5"]);
    // A `(BLOCK, CYCLIC(2))` array on a 2-D grid: its local part along both
    // distributed dimensions, LOCAL_TO_GLOBAL through both descriptors.
    let (_dir, source) = scratch_program(
        "hpf_local_grid",
        r#"program gridlocal
  implicit none
  interface
    extrinsic(hpf_local) subroutine number(a)
      integer, intent(out) :: a(:, :)
    end subroutine number
  end interface
  integer :: a(7, 9), j
!HPF$ PROCESSORS G(2, 2)
!HPF$ DISTRIBUTE A(BLOCK, CYCLIC(2)) ONTO G
  call number(a)
  do j = 1, 9
    write (*, '(7i6)') a(:, j)
  end do
  print *, sum(a)
end program gridlocal

extrinsic(hpf_local) subroutine number(a)
  use hpf_local_library
  implicit none
  integer, intent(out) :: a(:, :)
  integer :: i, j, g(2)
  do j = 1, size(a, 2)
    do i = 1, size(a, 1)
      g = local_to_global(a, [i, j])
      a(i, j) = 100 * g(1) + g(2) + 1000 * global_size(a)
    end do
  end do
end subroutine number
"#,
    );
    runs_print_on(
        &source,
        r#" 63101 63201 63301 63401 63501 63601 63701
 63102 63202 63302 63402 63502 63602 63702
 63103 63203 63303 63403 63503 63603 63703
 63104 63204 63304 63404 63504 63604 63704
 63105 63205 63305 63405 63505 63605 63705
 63106 63206 63306 63406 63506 63606 63706
 63107 63207 63307 63407 63507 63607 63707
 63108 63208 63308 63408 63508 63608 63708
 63109 63209 63309 63409 63509 63609 63709
     3994515
"#
        .as_bytes(),
        &["1", "2", "3", "4", "5"],
    );
}

/// DATA in a free-form BLOCK DATA on a COMMON block that holds a
/// `(*, BLOCK)` and a CYCLIC(2) array, an INTEGER and a CHARACTER, under
/// other names than the main program's (an implied DO, a continued
/// statement, several variables in one statement): each process ends with
/// its part of the initial values, and the program prints what the
/// sequential program prints.
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test mpi_run -- --ignored"]
fn data_of_distributed_common_blocks_initialises_every_local_part() {
    require_toolchain();
    runs_in_parallel_as_sequential(
        "block_data_state",
        r#"program bd2
  implicit none
  real :: grid(6, 10), w(9)
  integer :: steps
  character(len=4) :: tag
  common /state/ grid, w, steps, tag
!HPF$ DISTRIBUTE GRID(*, BLOCK)
!HPF$ DISTRIBUTE W(CYCLIC(2))
  integer :: s
  do s = 1, steps
    grid(2:5, :) = grid(2:5, :) + 0.5 * grid(1:4, :)
  end do
  w = w * 2.0
  print '(a, 2f12.3, i3, 1x, a)', ' sums', sum(grid), sum(w), steps, tag
  print '(6f9.3)', grid(:, 1), grid(:, 10)
  print '(9f7.2)', w
end program bd2

block data init
  real :: g(6, 10), weights(9)
  integer :: nsteps
  character(len=4) :: label
  common /state/ g, weights, nsteps, label
!HPF$ DISTRIBUTE G(*, BLOCK)
!HPF$ DISTRIBUTE WEIGHTS(CYCLIC(2))
  integer :: i, j
  data ((g(i, j), i = 1, 6), j = 1, 10) / 30*1.0, 30*0.25 /
  data weights / 1.0, 2.0, 3.0, &
    4.0, 5.0, 6.0, 7.0, 8.0, 9.0 /, nsteps / 3 /, label / 'abcd' /
end block data init
"#,
    );
}
