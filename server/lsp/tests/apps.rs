//! The applications of `tests/apps/`, written the way F77-era HPF codes
//! are (a main program and routines in several files, headers with the
//! `!HPF$` directives and COMMON blocks INCLUDEd by each, fixed form, a
//! timer function): `hpf-ls check DIR` finds no error in them, and
//! `hpf-ls run` in their directory (the program `[program] sources` of
//! their hpf-ls.toml names) prints on 1 to 4 processes what gfortran's
//! sequential build of the same files prints. The runs need `mpif90` and
//! `mpirun`; where `CI` is set their absence fails the test instead of
//! skipping it. The editor's `hpf.run` on any file of an app runs the
//! same program, with the editor's text of the files open in it.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

fn apps() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/apps")
}

fn toolchain_present() -> bool {
    let found = |program: &str| Command::new(program).arg("--version").output().is_ok_and(|it| it.status.success());
    let present = found("mpif90") && found("mpirun") && found("gfortran");
    // A missing toolchain fails the test: a skipped run must not count as a passed one.
    if !present {
        panic!("this test needs gfortran, mpif90 and mpirun: apt-get install -y gfortran libopenmpi-dev openmpi-bin");
    }
    present
}

#[test]
fn every_app_checks_without_errors() {
    let mut checked = 0;
    for entry in std::fs::read_dir(apps()).unwrap() {
        let dir = entry.unwrap().path();
        let output =
            Command::new(env!("CARGO_BIN_EXE_hpf-ls")).arg("check").arg(".").current_dir(&dir).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{}: {}{stderr}", dir.display(), String::from_utf8_lossy(&output.stdout));
        // Every file of the program, headers not counted, is checked as one program.
        let sources = std::fs::read_dir(&dir)
            .unwrap()
            .filter(|it| it.as_ref().unwrap().path().extension().is_some_and(|ext| ext == "f"))
            .count();
        assert!(stderr.contains(&format!("checked {sources} file(s): 0 error(s)")), "{}: {stderr}", dir.display());
        checked += 1;
    }
    assert!(checked >= 2, "the apps are missing");
}

/// What gfortran -O0 of the app's sources (as its hpf-ls.toml lists them)
/// prints. gfortran does not know HPF's EXTRINSIC(...) prefix: without it,
/// the procedure is the sequential program's (as tests/corpus/check_sequential.sh does).
fn sequential_output(app: &Path, include: &[&str]) -> String {
    let work = std::env::temp_dir().join(format!(
        "hpf-ls-apps-{}-{}",
        std::process::id(),
        app.file_name().unwrap().to_string_lossy()
    ));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let mut sources: Vec<PathBuf> = Vec::new();
    for entry in std::fs::read_dir(app).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|ext| ext == "f") {
            let text = std::fs::read_to_string(&path).unwrap();
            let copy = work.join(path.file_name().unwrap());
            std::fs::write(&copy, without_extrinsic(&text)).unwrap();
            sources.push(copy);
        }
    }
    sources.sort();
    let executable = work.join("sequential");
    let mut command = Command::new("gfortran");
    // The headers are the app's (the copies are elsewhere).
    command.arg("-O0").arg("-I.").args(include.iter().map(|it| format!("-I{it}")));
    command.args(&sources).arg("-o").arg(&executable);
    let compiled = command.current_dir(app).output().unwrap();
    assert!(compiled.status.success(), "{}", String::from_utf8_lossy(&compiled.stderr));
    let output = Command::new(&executable).current_dir(app).output().unwrap();
    let _ = std::fs::remove_dir_all(&work);
    String::from_utf8(output.stdout).unwrap()
}

/// `text` without its `EXTRINSIC (...)` prefixes (any case).
fn without_extrinsic(text: &str) -> String {
    text.lines()
        .map(|line| {
            let lower = line.to_ascii_lowercase();
            match lower.find("extrinsic") {
                Some(at) if !line.starts_with(['c', 'C', '*', '!']) => {
                    let close = line[at..].find(')').map_or(line.len(), |it| at + it + 1);
                    format!("{}{}\n", &line[..at], &line[close..])
                }
                _ => format!("{line}\n"),
            }
        })
        .collect()
}

fn runs_as_sequential(name: &str, include: &[&str]) {
    if !toolchain_present() {
        eprintln!("skipped: no MPI toolchain (and CI is not set)");
        return;
    }
    let app = apps().join(name);
    let expected = sequential_output(&app, include);
    assert!(!expected.is_empty());
    for processes in ["1", "2", "3", "4"] {
        let output = Command::new("timeout")
            .arg("120")
            .arg(env!("CARGO_BIN_EXE_hpf-ls"))
            .args(["run", "--ordered-reductions", "--np", processes])
            .current_dir(&app)
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{name} on {processes}: {stderr}");
        assert_eq!(String::from_utf8_lossy(&output.stdout), expected, "{name} on {processes} processes: {stderr}");
    }
}

/// Fields passed to the routines (INHERIT), mappings and sizes in two
/// nested headers.
#[test]
fn heat_runs_as_the_sequential_program() {
    runs_as_sequential("heat", &[]);
}

/// Fields in a COMMON block of a header (`include = ["include"]` finds the
/// nested one), which the generated program makes a module; the dialects
/// of the F77-era codes: INDEPENDENT NEW without the comma, an ON HOME
/// clause, spaced operators (`. EQ .`), a PURE EXTRINSIC(HPF_LOCAL) function.
#[test]
fn relax_runs_as_the_sequential_program() {
    runs_as_sequential("relax", &["include"]);
}

/// `hpf.run` from the editor on a routine's file of an app builds the
/// program its hpf-ls.toml names (what `hpf-ls run` runs there), with the
/// text of the open documents, saved or not: run from `step.f`, it prints
/// the sequential output; with `main.f` edited (unsaved) in the editor,
/// the edited program's.
#[test]
fn the_editors_run_builds_the_apps_other_files() {
    if !toolchain_present() {
        return;
    }
    let app = apps().join("heat").canonicalize().unwrap();
    let expected = sequential_output(&app, &[]);
    let mut client = common::Client::builder()
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .root_uri(json!(format!("file://{}", app.display())))
        .initialization_options(json!({"hpf": {"mpi": {"orderedReductions": true}}}))
        .timeout(std::time::Duration::from_secs(240))
        .start();
    let uri = |name: &str| format!("file://{}", app.join(name).display());
    let run = |client: &mut common::Client, name: &str| {
        let arguments = json!([uri(name), 2]);
        let response =
            client.request("workspace/executeCommand", json!({"command": "hpf.run", "arguments": arguments}));
        assert_eq!(response["exitCode"], 0, "{response}");
        response["stdout"].as_str().unwrap_or_else(|| panic!("{response}")).to_string()
    };
    client.open(&uri("step.f"), &std::fs::read_to_string(app.join("step.f")).unwrap());
    assert_eq!(run(&mut client, "step.f"), expected);

    let edited = std::fs::read_to_string(app.join("main.f")).unwrap().replace("' heat'", "' HEAT'");
    client.open(&uri("main.f"), &edited);
    assert_eq!(run(&mut client, "step.f"), expected.replace(" heat", " HEAT"));
    assert!(expected.contains(" heat"));
    client.shutdown();
}

/// Without an hpf-ls.toml, `hpf.run` on a file that holds no main program
/// builds its directory's files with its extension when one of them holds
/// the main program (`hpf-ls run *.f` there); with two main programs there
/// it says what to do instead of guessing.
#[test]
fn the_editors_run_of_a_routines_file_builds_its_directorys_program() {
    if !toolchain_present() {
        return;
    }
    let dir = common::scratch("apps-directory-program");
    let main = "      PROGRAM TWOF\n      REAL A(12)\n!HPF$ DISTRIBUTE A(BLOCK)\n      CALL FILL(A, 12)\n      PRINT '(F8.1)', SUM(A)\n      END\n";
    let fill = "      SUBROUTINE FILL(A, N)\n      INTEGER N, I\n      REAL A(N)\n!HPF$ INHERIT A\n      DO 10 I = 1, N\n         A(I) = REAL(I * I)\n   10 CONTINUE\n      END\n";
    std::fs::write(dir.join("main.f"), main).unwrap();
    std::fs::write(dir.join("fill.f"), fill).unwrap();
    let mut client = common::Client::builder()
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .timeout(std::time::Duration::from_secs(240))
        .start();
    let uri = format!("file://{}", dir.join("fill.f").display());
    client.open(&uri, fill);
    let response =
        client.request("workspace/executeCommand", json!({"command": "hpf.run", "arguments": [uri.clone(), 2]}));
    assert_eq!(response["exitCode"], 0, "{response}");
    assert_eq!(response["stdout"].as_str().unwrap().trim(), "650.0", "{response}");

    std::fs::write(dir.join("other.f"), "      PROGRAM OTHER\n      PRINT *, 1\n      END\n").unwrap();
    let refused = client.call("workspace/executeCommand", json!({"command": "hpf.run", "arguments": [uri, 2]}));
    let message = refused["error"]["message"].as_str().unwrap_or_else(|| panic!("{refused}"));
    assert!(message.contains("holds no main program, and 2 files of its directory"), "{message}");
    assert!(message.contains("[program] sources"), "{message}");
    client.shutdown();
}
