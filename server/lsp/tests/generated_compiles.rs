//! A generated program the MPI compiler rejects is a bug of hpf-ls (issue
//! 28 item 9): every corpus program the backend lowers, in both reduction
//! modes (once where they generate the same program), compiles with `-Wall` (`-fsyntax-only`: every check of the
//! front end, no code generation); and when the compiler rejects a
//! generated program, the driver says so as an internal error naming the
//! generated line and the user's line it comes from, not as a raw dump.
//!
//! Needs `mpif90`; skipped without it, failing when `CI` is set. The random
//! programs' generators are compiled the same way in `random_programs.rs`.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

fn mpif90_present() -> bool {
    let present = Command::new("mpif90").arg("--version").output().is_ok_and(|it| it.status.success());
    if !present && std::env::var_os("CI").is_some() {
        panic!("this test needs mpif90: apt-get install -y gfortran libopenmpi-dev openmpi-bin");
    }
    present
}

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus")
}

/// `hpf-ls build` of `source` with the generated program compiled by
/// `mpif90 -Wall -fsyntax-only`, plus `extra` arguments.
fn build_checked(source: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hpf-ls"))
        .arg("build")
        .args(extra)
        .args(["--fflags", "-Wall -fsyntax-only", "-o", "/dev/null"])
        .arg(source)
        .output()
        .unwrap()
}

/// Whether `hpf-ls build` refused the program itself (an error at a line
/// of the user's, before any compiler ran), which is no compiler failure.
fn refused_by_the_backend(stderr: &str) -> bool {
    !stderr.contains("internal error") && !stderr.contains("failed on the generated program")
}

#[test]
#[ignore = "about a minute (~100 builds): cargo test -p hpf-ls --test generated_compiles -- --ignored"]
fn every_lowered_corpus_program_compiles_with_wall() {
    if !mpif90_present() {
        return;
    }
    let mut programs: Vec<PathBuf> = std::fs::read_dir(corpus())
        .unwrap()
        .map(|it| it.unwrap().path())
        .filter(|it| {
            it.extension().and_then(|it| it.to_str()).is_some_and(|it| syntax::FORTRAN_EXTENSIONS.contains(&it))
        })
        .collect();
    programs.sort();
    // The ordered mode is built where it generates another program.
    let mut builds: Vec<(&PathBuf, &[&str])> = Vec::new();
    for program in &programs {
        builds.push((program, &[]));
        if common::reduction_modes_differ(program) {
            builds.push((program, &["--ordered-reductions"]));
        }
    }
    // Two builds at a time: each is one compiler process, and CI has 2 cores.
    let next = AtomicUsize::new(0);
    let compiled = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                while let Some((program, mode)) = builds.get(next.fetch_add(1, Ordering::SeqCst)) {
                    let output = build_checked(program, mode);
                    let stderr = String::from_utf8_lossy(&output.stderr);
                    if output.status.success() {
                        compiled.fetch_add(1, Ordering::SeqCst);
                    } else if !refused_by_the_backend(&stderr) {
                        failures.lock().unwrap().push(format!("{} {mode:?}:\n{stderr}", program.display()));
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "the compiler rejects generated programs:\n{}", failures.join("\n"));
    // Most of the corpus lowers (tests/mpi_run.rs lists 67 programs): the
    // test must not pass by compiling nothing.
    let compiled = compiled.into_inner();
    assert!(compiled >= 60, "only {compiled} generated programs compiled");
}

/// A flag that makes gfortran reject a correct generated program stands in
/// for a bug of the backend: the driver names the generated line, the
/// user's line behind it, and asks for a report.
#[test]
fn a_rejected_generated_program_is_an_internal_error_naming_the_users_line() {
    if !mpif90_present() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("hpf-ls-generated-compiles-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("implicit.f90");
    // Without IMPLICIT NONE the program is valid; -fimplicit-none makes the
    // compiler reject the generated line that uses `total` undeclared.
    std::fs::write(
        &source,
        "program implicit\n  real :: a(8)\n!hpf$ distribute a(block)\n  a = 1.0\n  total = sum(a)\n  print *, total\nend program implicit\n",
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_hpf-ls"))
        .args(["build", "--fflags", "-fimplicit-none -fsyntax-only", "-o", "/dev/null"])
        .arg(&source)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("hpf-ls: internal error: the MPI compiler rejects the program hpf-ls generated"),
        "{stderr}"
    );
    assert!(stderr.contains("please report it"), "{stderr}");
    // The generated line, then the user's line it comes from.
    assert!(stderr.contains("  program.f90:"), "{stderr}");
    assert!(stderr.contains("implicit.f90:5:3: total = sum(a)"), "{stderr}");
}

/// The editor's `hpf.build` tells the same internal error as `hpf-ls
/// build` when the compiler rejects the generated program: the generated
/// line and the user's line it comes from.
#[test]
fn the_editors_build_tells_a_rejected_generated_program_as_the_cli_does() {
    if !mpif90_present() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("hpf-ls-generated-compiles-lsp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let source = "program implicit\n  real :: a(8)\n!hpf$ distribute a(block)\n  a = 1.0\n  total = sum(a)\n  print *, total\nend program implicit\n";
    std::fs::write(dir.join("implicit.f90"), source).unwrap();
    let uri = format!("file://{}", dir.join("implicit.f90").display());
    let mut client = common::Client::builder()
        .initialization_options(serde_json::json!({"hpf": {"mpi": {"extraArgs": ["-fimplicit-none"]}}}))
        .timeout(std::time::Duration::from_secs(180))
        .start();
    client.open(&uri, source);
    let response =
        client.call("workspace/executeCommand", serde_json::json!({"command": "hpf.build", "arguments": [uri]}));
    let _ = std::fs::remove_dir_all(&dir);
    let message = response["error"]["message"].as_str().unwrap_or_else(|| panic!("{response}"));
    assert!(
        message.contains("hpf-ls: internal error: the MPI compiler rejects the program hpf-ls generated"),
        "{message}"
    );
    assert!(message.contains("  program.f90:"), "{message}");
    assert!(message.contains("implicit.f90:5:3: total = sum(a)"), "{message}");
    client.shutdown();
}

/// Every routine of the runtime, for every element type, rank and
/// distributed dimension (or pair of them), compiles with `-Wall`: the
/// corpus uses only some of them.
#[test]
fn the_whole_runtime_compiles_with_wall() {
    if !mpif90_present() {
        return;
    }
    // `runtime_for` keeps what the program calls: call everything.
    let mut names = String::new();
    for suffix in backend::runtime::element_suffixes() {
        // The routines are generic in rank: every type up to rank 3, and the
        // highest rank for one type (all ranks of all types took 8 minutes).
        let highest = (suffix == "r8").then_some(backend::runtime::MAX_RANK);
        for rank in (1..=3).chain(highest) {
            for dim in 1..=rank {
                names.push_str(&format!("hpf_gather_{suffix}_{rank}{dim}(\n"));
                for other in (1..=rank).filter(|it| *it != dim) {
                    names.push_str(&format!("hpf_gather_{suffix}_{rank}{dim}{other}(\n"));
                }
            }
        }
        for routine in ["copy_in", "copy_nd", "send_home", "send_to_owners", "chain_recv", "combine", "pass"] {
            names.push_str(&format!("hpf_{routine}_{suffix}(\n"));
        }
    }
    let runtime = backend::runtime::runtime_for(&names);
    for name in ["hpf_gather_r8_21", "hpf_gather_l4_312", "hpf_scatter_i4_32", "hpf_gather_r8_776"] {
        assert!(runtime.contains(&format!("subroutine {name}(")), "the runtime lacks {name}");
    }
    let dir = std::env::temp_dir().join(format!("hpf-ls-whole-runtime-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("hpf_runtime.f90"), runtime).unwrap();
    let output = Command::new("mpif90")
        .args(["-Wall", "-fsyntax-only", "-ffree-line-length-none", "hpf_runtime.f90"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
}
