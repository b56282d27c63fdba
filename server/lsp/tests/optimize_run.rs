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
