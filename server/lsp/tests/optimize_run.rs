//! `hpf-ls optimize` end to end: the diff and `--write` on the seed's
//! example, and the optimised corpus programs the MPI backend runs still
//! print exactly what the sequential programs print (`hpf-ls run --np 3`).
//! The MPI part needs `mpif90` and `mpirun`; where `CI` is set their absence
//! fails the test instead of skipping it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The corpus programs the backend runs (the list of tests/mpi_run.rs).
const SUPPORTED: &[&str] = &[
    "crlf_heat.f90",
    "csr_gather.for",
    "heat_seqnum.f",
    "jacobi2d_star_block.f90",
    "nonascii_fixed.f",
    "nonascii_scan.f90",
    "npb_rhs.f",
    "odd_even_sort.f90",
    "on_home.f90",
    "seed_fig6.f",
    "seed_fig6.f90",
    "seed_optimal.f90",
    "sor_starhpf.f",
    "stencil1d_halo.f90",
    "wave1d_leapfrog.f90",
];

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hpf-ls-optimize-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn hpf_ls(args: &[&str], file: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hpf-ls"))
        .args(args)
        .arg(file)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .output()
        .expect("hpf-ls starts")
}

fn stdout(output: &Output) -> String {
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn optimize_prints_the_table_and_the_diff_and_writes_the_file() {
    let dir = scratch("seed");
    let file = dir.join("seed_fig6.f90");
    let original = std::fs::read_to_string(corpus().join("seed_fig6.f90")).unwrap();
    std::fs::write(&file, &original).unwrap();

    let diff = stdout(&hpf_ls(&["optimize", "--diff"], &file));
    let expected_diff = format!(
        "--- a/{path}\n+++ b/{path}\n@@ -4,7 +4,7 @@\n       REAL A(16), B(15)\n !HPF$ PROCESSORS P(4)\n !HPF$ DISTRIBUTE A(BLOCK) ONTO P\n-!HPF$ ALIGN B(I) WITH A(I)\n+!HPF$ ALIGN B(I) WITH A(I+1)\n       DO I = 1, 15\n         B(I) = REAL(10 * I)\n       END DO\n",
        path = file.display()
    );
    assert_eq!(diff, expected_diff);
    // `--diff` only shows; the file is unchanged.
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);

    let table = stdout(&hpf_ls(&["optimize"], &file));
    let moved = table.lines().find(|it| it.trim_start().starts_with("moved elements")).expect(&table);
    assert_eq!(moved.split_whitespace().collect::<Vec<_>>(), ["moved", "elements", "3", "0"], "{table}");
    assert!(table.contains("realign B"), "{table}");
    assert!(table.ends_with(&expected_diff), "{table}");

    let written = stdout(&hpf_ls(&["optimize", "--write"], &file));
    assert!(written.contains(&format!("wrote {}", file.display())), "{written}");
    let new_text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(new_text, original.replace("!HPF$ ALIGN B(I) WITH A(I)\n", "!HPF$ ALIGN B(I) WITH A(I+1)\n"));

    // Optimal now: nothing more to do, and analyze --json agrees.
    let again = stdout(&hpf_ls(&["optimize"], &file));
    assert!(again.contains("the declared alignments are already optimal"), "{again}");
    let json: serde_json::Value = serde_json::from_str(&stdout(&hpf_ls(&["analyze", "--json"], &file))).unwrap();
    assert_eq!(json["units"][0]["moved_elements"], 0);
    assert_eq!(json["units"][0]["optimized"]["realign"], serde_json::json!([]));
}

#[test]
fn optimize_proposes_growing_a_template_that_is_too_small() {
    let dir = scratch("grow");
    let file = dir.join("grow.f90");
    let program = "program grow\n  real :: a(16), b(16)\n!HPF$ PROCESSORS p(4)\n!HPF$ TEMPLATE t(16)\n!HPF$ DISTRIBUTE t(BLOCK) ONTO p\n!HPF$ ALIGN a(i) WITH t(i)\n!HPF$ ALIGN b(i) WITH t(i)\n  do i = 2, 16\n    a(i) = b(i-1)\n  end do\nend program grow\n";
    std::fs::write(&file, program).unwrap();
    let table = stdout(&hpf_ls(&["optimize", "--write"], &file));
    assert!(
        table.contains("proposal: grow TEMPLATE t(1:16) to t(1:17) so that b can align where its loops need it: moved elements 0 (messages 0) instead of 3"),
        "{table}"
    );
    // A proposal only: the file is not rewritten.
    assert_eq!(std::fs::read_to_string(&file).unwrap(), program);

    // Asked for, the template grows (in the user's form) and b realigns.
    let grown = stdout(&hpf_ls(&["optimize", "--grow-templates", "--write"], &file));
    assert!(grown.contains("grew TEMPLATE t(1:16) to t(1:17) and realigned b (--grow-templates)"), "{grown}");
    let expected = program
        .replace("!HPF$ TEMPLATE t(16)\n", "!HPF$ TEMPLATE t(17)\n")
        .replace("!HPF$ ALIGN b(i) WITH t(i)\n", "!HPF$ ALIGN b(i) WITH t(i+1)\n");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), expected);
    let again = stdout(&hpf_ls(&["optimize"], &file));
    let moved = again.lines().find(|it| it.trim_start().starts_with("moved elements")).expect(&again);
    assert_eq!(moved.split_whitespace().collect::<Vec<_>>(), ["moved", "elements", "0", "0"], "{again}");
    assert!(!again.contains("proposal"), "{again}");
}

#[test]
fn optimize_refuses_bad_usage() {
    let file = corpus().join("seed_fig6.f90");
    let output = hpf_ls(&["optimize", "--default-trips", "zero"], &file);
    assert_eq!(output.status.code(), Some(2));
    let output = Command::new(env!("CARGO_BIN_EXE_hpf-ls")).arg("optimize").output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("Usage: hpf-ls optimize"));
}

fn toolchain_present() -> bool {
    let found = |program: &str| Command::new(program).arg("--version").output().is_ok_and(|it| it.status.success());
    let present = found("mpif90") && found("mpirun");
    // A missing toolchain fails the test: a skipped run must not count as a passed one.
    if !present {
        panic!("this test needs mpif90 and mpirun: apt-get install -y gfortran libopenmpi-dev openmpi-bin");
    }
    present
}

#[test]
fn optimised_programs_print_what_the_sequential_program_prints() {
    if !toolchain_present() {
        eprintln!("skipped: no MPI toolchain (and CI is not set)");
        return;
    }
    let dir = scratch("run");
    let mut changed = Vec::new();
    for name in SUPPORTED {
        let file = dir.join(name);
        let original = std::fs::read(corpus().join(name)).unwrap();
        std::fs::write(&file, &original).unwrap();
        stdout(&hpf_ls(&["optimize", "--write", "--processors", "3"], &file));
        if std::fs::read(&file).unwrap() != original {
            changed.push(*name);
        }
        let run = hpf_ls(&["run", "--ordered-reductions", "--np", "3"], &file);
        assert!(run.status.success(), "{name} optimised does not run:\n{}", String::from_utf8_lossy(&run.stderr));
        let expected = std::fs::read(corpus().join(format!("expected/{name}.out"))).expect("an expected output");
        assert_eq!(
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&expected),
            "{name}, optimised, on 3 processes"
        );
    }
    // The seed's example is realigned in both source forms; the test is not vacuous.
    assert!(changed.contains(&"seed_fig6.f90") && changed.contains(&"seed_fig6.f"), "{changed:?}");
}

/// `hpf-ls optimize ARGS` run in `dir`.
fn optimize_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hpf-ls")).arg("optimize").args(args).current_dir(dir).output().unwrap()
}

const SHARED_HEADER: &str = "      REAL A(16), B(15)\n      COMMON /FIELDS/ A, B\n!HPF$ PROCESSORS P(4)\n!HPF$ DISTRIBUTE A(BLOCK) ONTO P\n!HPF$ ALIGN B(I) WITH A(I)\n";
const SHARED_MAIN: &str = "      PROGRAM SEED\n      INCLUDE 'map.h'\n      INTEGER I\n      DO I = 1, 15\n        B(I) = REAL(10 * I)\n      END DO\n      CALL SHIFT\n      PRINT '(8F7.1)', A\n      END PROGRAM SEED\n";
const SHARED_SHIFT: &str = "      SUBROUTINE SHIFT\n      INCLUDE 'map.h'\n      INTEGER I\n      A(1) = 0.0\n      DO I = 2, 16\n        A(I) = B(I-1)\n      END DO\n      END SUBROUTINE SHIFT\n";

/// The seed's example written as F77 applications are: the mapping in a
/// header both files INCLUDE, the loop in a subroutine of another file.
fn shared_header_program(name: &str) -> PathBuf {
    let dir = scratch(name);
    std::fs::write(dir.join("hpf-ls.toml"), "[program]\nsources = [\"*.f\"]\n").unwrap();
    std::fs::write(dir.join("map.h"), SHARED_HEADER).unwrap();
    std::fs::write(dir.join("main.f"), SHARED_MAIN).unwrap();
    std::fs::write(dir.join("shift.f"), SHARED_SHIFT).unwrap();
    dir
}

/// A program in several files whose ALIGN lives in a header: `optimize`
/// takes its files (or the directory of its hpf-ls.toml), names each unit
/// with its own file, and rewrites the directive in the header, once, for
/// every unit that includes it.
#[test]
fn optimize_rewrites_the_directives_of_a_header_in_the_header() {
    let dir = shared_header_program("header");
    let expected_diff = "--- a/map.h\n+++ b/map.h\n@@ -2,4 +2,4 @@\n       COMMON /FIELDS/ A, B\n !HPF$ PROCESSORS P(4)\n !HPF$ DISTRIBUTE A(BLOCK) ONTO P\n-!HPF$ ALIGN B(I) WITH A(I)\n+!HPF$ ALIGN B(I) WITH A(I+1)\n";
    assert_eq!(stdout(&optimize_in(&dir, &["--diff", "."])), expected_diff);
    assert_eq!(stdout(&optimize_in(&dir, &["--diff", "shift.f", "main.f"])), expected_diff);
    let table = stdout(&optimize_in(&dir, &["."]));
    assert!(table.contains("main.f: unit SEED:") && table.contains("shift.f: unit SHIFT:"), "{table}");
    assert!(table.ends_with(expected_diff), "{table}");

    let written = stdout(&optimize_in(&dir, &["--write", "."]));
    assert!(written.contains("wrote map.h"), "{written}");
    let header = std::fs::read_to_string(dir.join("map.h")).unwrap();
    assert_eq!(header, SHARED_HEADER.replace("WITH A(I)\n", "WITH A(I+1)\n"));
    assert_eq!(std::fs::read_to_string(dir.join("main.f")).unwrap(), SHARED_MAIN);
    assert_eq!(std::fs::read_to_string(dir.join("shift.f")).unwrap(), SHARED_SHIFT);
    assert_eq!(stdout(&optimize_in(&dir, &["--diff", "."])), "");
}

/// A header's ALIGN that one including unit wants changed and another
/// wants as it is: no file is rewritten, and the table says why.
#[test]
fn optimize_keeps_a_header_its_units_want_different() {
    let dir = shared_header_program("header-conflict");
    let back = "      SUBROUTINE BACK\n      INCLUDE 'map.h'\n      INTEGER I\n      DO I = 1, 15\n        A(I) = A(I) + B(I) * 2.0\n      END DO\n      END SUBROUTINE BACK\n";
    std::fs::write(dir.join("back.f"), back).unwrap();
    assert_eq!(stdout(&optimize_in(&dir, &["--diff", "."])), "");
    let table = stdout(&optimize_in(&dir, &["--write", "."]));
    assert!(table.contains("not rewritten: the units that share the rewritten directives want different ones (unit BACK would move 3 elements instead of 0)"), "{table}");
    assert_eq!(std::fs::read_to_string(dir.join("map.h")).unwrap(), SHARED_HEADER);
}

/// The applications of tests/apps: their declared alignments are already
/// optimal (relax's stencil moves only its halo; heat's routines take
/// their fields INHERITed, as dummies, which optimize does not realign), so
/// optimize proposes no change, and reports each unit with its own file.
#[test]
fn optimize_proposes_no_change_to_the_apps() {
    let apps = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/apps");
    for app in ["heat", "relax"] {
        let dir = apps.join(app);
        assert_eq!(stdout(&optimize_in(&dir, &["--diff", "."])), "", "{app}");
    }
    let table = stdout(&optimize_in(&apps.join("relax"), &["--processors", "4", "."]));
    assert!(table.contains("init.f: unit INIT:") && table.contains("sweep.f: unit SWEEP:"), "{table}");
    assert_eq!(table.matches("the declared alignments are already optimal").count(), 2, "{table}");
}

/// `--grow-templates` on a program whose TEMPLATE and ALIGN live in a
/// header that two files include: the header is rewritten (the template
/// grown, the array realigned), the files that include it are not.
#[test]
fn optimize_grows_a_template_of_a_header_in_the_header() {
    let dir = scratch("grow-header");
    std::fs::write(dir.join("hpf-ls.toml"), "[program]\nsources = [\"*.f\"]\n").unwrap();
    let header = "      REAL A(16), B(16)\n      COMMON /F/ A, B\n!HPF$ PROCESSORS P(4)\n!HPF$ TEMPLATE T(16)\n!HPF$ DISTRIBUTE T(BLOCK) ONTO P\n!HPF$ ALIGN A(I) WITH T(I)\n!HPF$ ALIGN B(I) WITH T(I)\n";
    let main =
        "      PROGRAM G\n      INCLUDE 'map.h'\n      B = 1.0\n      CALL SH\n      PRINT *, SUM(A)\n      END\n";
    let shift = "      SUBROUTINE SH\n      INCLUDE 'map.h'\n      INTEGER I\n      DO I = 2, 16\n        A(I) = B(I-1)\n      END DO\n      END\n";
    std::fs::write(dir.join("map.h"), header).unwrap();
    std::fs::write(dir.join("main.f"), main).unwrap();
    std::fs::write(dir.join("sh.f"), shift).unwrap();
    let written = stdout(&optimize_in(&dir, &["--grow-templates", "--write", "."]));
    assert!(written.contains("grew TEMPLATE T(1:16) to T(1:17) and realigned B (--grow-templates)"), "{written}");
    assert!(written.contains("wrote map.h") && !written.contains("wrote main.f"), "{written}");
    let expected = header
        .replace("TEMPLATE T(16)\n", "TEMPLATE T(17)\n")
        .replace("ALIGN B(I) WITH T(I)\n", "ALIGN B(I) WITH T(I+1)\n");
    assert_eq!(std::fs::read_to_string(dir.join("map.h")).unwrap(), expected);
    assert_eq!(std::fs::read_to_string(dir.join("main.f")).unwrap(), main);
    assert_eq!(std::fs::read_to_string(dir.join("sh.f")).unwrap(), shift);
    let again = stdout(&optimize_in(&dir, &["."]));
    assert!(!again.contains("proposal"), "{again}");
}
