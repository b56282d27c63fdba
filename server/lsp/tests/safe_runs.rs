//! Safe runs: `hpf.run` over stdio and `hpf-ls run` on the command line
//! start argv vectors only (names with blanks, quotes, `$()` and `;` run
//! nothing), build in private temporary directories removed afterwards,
//! stop at their timeout and output limit, kill every process they started
//! (the launcher and each rank) on cancel, timeout or limit, and keep the
//! output of concurrent runs apart.
//!
//! The programs that must be killed come from a fake compiler (a shell
//! script that writes a shell script as the "executable"), launched by the
//! real `mpirun`, so that the ranks are real ranks that leave mpirun's
//! process group as Open MPI's do. Survivors are found by scanning `/proc`
//! for the unique marker each test puts in its ranks' command line. Needs
//! `mpirun` and `mpif90`; where `CI` is set their absence fails the tests.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{scratch, Client, SEED};
use serde_json::{json, Value};

const TIMEOUT: Duration = Duration::from_secs(120);

/// A directory name no shell could take literally.
const HOSTILE: &str = "a b 'q' \"d\" $(touch PWNED) ; touch PWNED2 `touch PWNED3`";

fn toolchain_present() -> bool {
    let found = |program: &str| Command::new(program).arg("--version").output().is_ok_and(|it| it.status.success());
    let present = found("mpif90") && found("mpirun");
    // A missing toolchain fails the test: a skipped run must not count as a passed one.
    if !present {
        panic!("this test needs mpif90 and mpirun: apt-get install -y gfortran libopenmpi-dev openmpi-bin");
    }
    present
}

/// A fake MPI compiler in a directory with a hostile name: it writes, as
/// the executable, a shell script whose body is `program` (with `PROGRAM`
/// replaced by the name of the Fortran main program it was given).
fn fake_compiler(dir: &Path, program: &str) -> PathBuf {
    let tools = dir.join(HOSTILE);
    std::fs::create_dir_all(&tools).unwrap();
    let compiler = tools.join("fake fc;$(x)");
    let script = format!(
        "#!/bin/sh\nout=\nsrc=\nwhile [ $# -gt 0 ]; do\n  case \"$1\" in\n    -o) out=\"$2\"; shift ;;\n    \
         *program.f90) src=\"$1\" ;;\n  esac\n  shift\ndone\n\
         name=$(grep -i -m1 '^ *program ' \"$src\" | awk '{{print $2}}')\n\
         cat > \"$out\" <<'EOF'\n#!/bin/sh\n{program}\nEOF\n\
         sed -i \"s/PROGRAM/$name/g\" \"$out\"\nchmod +x \"$out\"\n"
    );
    std::fs::write(&compiler, script).unwrap();
    Command::new("chmod").arg("+x").arg(&compiler).status().unwrap();
    compiler
}

fn unique_seconds() -> u64 {
    // A sleep length that names this test's ranks in `/proc`: distinct for
    // the tests of this process (they run concurrently) and, very likely,
    // from those of other processes.
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let this_test = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    900_000 + u64::from(std::process::id() % 10_000) * 16 + this_test % 16
}

/// The live processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<(u32, String)> {
    let mut res = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|it| it.parse::<u32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        let state = stat.rfind(')').and_then(|it| stat[it + 1..].split_whitespace().next().map(str::to_string));
        if matches!(state.as_deref(), Some("Z" | "X") | None) {
            continue;
        }
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(marker) && pid != std::process::id() {
            res.push((pid, cmdline));
        }
    }
    res
}

/// Waits (generously) until no process with `marker` is alive.
fn assert_none_survives(marker: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let alive = processes_with(marker);
        if alive.is_empty() {
            return;
        }
        if Instant::now() > deadline {
            for (pid, _) in &alive {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            }
            panic!("processes survived: {alive:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn build_dirs_left(tmp: &Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .map(|it| it.file_name().to_string_lossy().into_owned())
        .filter(|it| it.starts_with("hpf-ls-build-"))
        .collect()
}

fn assert_nothing_executed(dir: &Path) {
    for name in ["PWNED", "PWNED2", "PWNED3"] {
        let found: Vec<PathBuf> = walk(dir).into_iter().filter(|it| it.file_name().unwrap() == name).collect();
        assert!(found.is_empty(), "a shell ran: {found:?}");
        assert!(!Path::new(name).exists(), "a shell ran in the test's directory");
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut res = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            res.extend(walk(&path));
        }
        res.push(path);
    }
    res
}

/// A session whose runs build in `tmp`, with `settings` as its initialization options.
fn start(tmp: &Path, settings: Value) -> Client {
    Client::builder()
        .env("TMPDIR", tmp)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .initialization_options(json!({"hpf": settings}))
        .timeout(TIMEOUT)
        .exit_within(Duration::from_secs(30), false)
        .start()
}

/// Starts `hpf.run` of `uri` on `processes` ranks and returns the request's id.
fn run(client: &mut Client, uri: &str, processes: u32) -> i64 {
    client.send_request("workspace/executeCommand", json!({"command": "hpf.run", "arguments": [uri, processes]}))
}

/// A `file:` URI, every byte but the unreserved ones and `/` percent-encoded.
fn uri_in(dir: &Path, name: &str) -> String {
    let mut res = "file://".to_string();
    for byte in dir.join(name).display().to_string().bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            res.push(byte as char);
        } else {
            res.push_str(&format!("%{byte:02X}"));
        }
    }
    res
}

/// A program of two ranks that print, then sleep until killed.
fn sleeper(seconds: u64) -> String {
    format!("echo rank-started\nsleep {seconds}\necho rank-woke")
}

#[test]
fn cancelling_a_run_kills_mpirun_and_every_rank_and_removes_the_build() {
    if !toolchain_present() {
        eprintln!("skipped: no MPI toolchain (and CI is not set)");
        return;
    }
    let dir = scratch("safe-cancel");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let seconds = unique_seconds();
    let compiler = fake_compiler(&dir, &sleeper(seconds));
    let mut client = start(&tmp, json!({"mpi": {"compiler": compiler, "launcher": "mpirun"}}));
    let uri = uri_in(&dir, HOSTILE);
    client.open(&uri, SEED);
    let id = run(&mut client, &uri, 3);
    client.wait_for_logs("rank-started", 3);
    // A rank's shell echoes before it starts `sleep`: on a loaded machine the
    // log can arrive first, so give the last `sleep` a moment to appear.
    let sleeping = |count: usize| processes_with(&format!("sleep {seconds}")).len() >= count;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !sleeping(3) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(processes_with(&format!("sleep {seconds}")).len(), 3, "three ranks sleep");
    // The build directory is private while it lives.
    let dirs = build_dirs_left(&tmp);
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(tmp.join(&dirs[0])).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o700);
    client.send(&json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": id}}));
    let response = client.response(id);
    assert_eq!(response["error"]["code"], -32800, "{response}");
    assert_none_survives(&format!("sleep {seconds}"));
    assert_none_survives(&tmp.display().to_string());
    assert_eq!(build_dirs_left(&tmp), Vec::<String>::new());
    // The server goes on serving runs.
    let id =
        client.send_request("workspace/executeCommand", json!({"command": "hpf.showGenerated", "arguments": [uri]}));
    let response = client.response(id);
    assert!(response["result"].as_str().is_some_and(|it| it.contains("hpf_init")), "{response}");
    client.shutdown();
    assert_nothing_executed(&dir);
}

#[test]
fn a_run_past_its_timeout_is_killed_with_every_rank() {
    if !toolchain_present() {
        eprintln!("skipped: no MPI toolchain (and CI is not set)");
        return;
    }
    let dir = scratch("safe-timeout");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let seconds = unique_seconds();
    let compiler = fake_compiler(&dir, &sleeper(seconds));
    let settings = json!({"mpi": {"compiler": compiler, "timeoutSeconds": 6}});
    let mut client = start(&tmp, settings);
    let uri = uri_in(&dir, "prog.f90");
    client.open(&uri, SEED);
    let started = Instant::now();
    let id = run(&mut client, &uri, 2);
    let response = client.response(id);
    let message = response["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("timed out after 6 s"), "{response}");
    assert!(started.elapsed() < Duration::from_secs(100), "the timeout was not applied");
    // What it printed before was streamed.
    assert!(client.pending.iter().any(|it| it["params"]["message"] == "rank-started"));
    assert_none_survives(&format!("sleep {seconds}"));
    assert_eq!(build_dirs_left(&tmp), Vec::<String>::new());
    client.shutdown();
}

#[test]
fn a_run_past_its_output_limit_is_killed_and_its_output_kept_to_the_limit() {
    if !toolchain_present() {
        eprintln!("skipped: no MPI toolchain (and CI is not set)");
        return;
    }
    let dir = scratch("safe-output");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let seconds = unique_seconds();
    // Prints without end, in one line without a newline too, from a child process.
    let program = format!("(sleep {seconds}) &\nhead -c 300000 /dev/zero | tr '\\\\0' x\nyes PROGRAM");
    let compiler = fake_compiler(&dir, &program);
    let settings = json!({"mpi": {"compiler": compiler, "maxOutputBytes": 100000}});
    let mut client = start(&tmp, settings);
    let uri = uri_in(&dir, "prog.f90");
    client.open(&uri, SEED);
    let id = run(&mut client, &uri, 2);
    let response = client.response(id);
    let message = response["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("more than 100000 bytes of output"), "{response}");
    assert_none_survives(&format!("sleep {seconds}"));
    assert_eq!(build_dirs_left(&tmp), Vec::<String>::new());
    client.shutdown();
}

#[test]
fn concurrent_runs_keep_their_output_apart() {
    if !toolchain_present() {
        eprintln!("skipped: no MPI toolchain (and CI is not set)");
        return;
    }
    let dir = scratch("safe-concurrent");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    // Each program prints its own name on 200 lines, slowly enough to interleave.
    let program = "for i in $(seq 1 200); do echo \"PROGRAM line $i\"; [ $((i % 50)) -eq 0 ] && sleep 0.1; done";
    let compiler = fake_compiler(&dir, program);
    let mut client = start(&tmp, json!({"mpi": {"compiler": compiler}}));
    let names = ["alpha", "beta", "gamma"];
    let mut ids = Vec::new();
    for name in names {
        let uri = uri_in(&dir, &format!("{name}.f90"));
        client.open(&uri, &SEED.replace("SEED", name));
        ids.push(run(&mut client, &uri, 2));
    }
    for (name, id) in names.iter().zip(ids) {
        let response = client.response(id);
        let stdout = response["result"]["stdout"].as_str().unwrap_or_else(|| panic!("{response}"));
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines.len(), 400, "{name}: {stdout}");
        assert!(lines.iter().all(|it| it.starts_with(&format!("{name} line "))), "{name} got {stdout}");
        for i in 1..=200 {
            assert_eq!(lines.iter().filter(|it| **it == format!("{name} line {i}")).count(), 2);
        }
    }
    assert_eq!(build_dirs_left(&tmp), Vec::<String>::new());
    client.shutdown();
}

/// The real toolchain on a file whose name a shell would execute.
#[test]
fn cli_run_takes_hostile_file_names_literally() {
    if !toolchain_present() {
        eprintln!("skipped: no MPI toolchain (and CI is not set)");
        return;
    }
    let dir = scratch("safe-cli-names");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let source_dir = dir.join(HOSTILE);
    std::fs::create_dir_all(&source_dir).unwrap();
    let source = source_dir.join("x; $(touch PWNED).f90");
    std::fs::write(&source, SEED).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_hpf-ls"))
        .args(["run", "--np", "2"])
        .arg(&source)
        .current_dir(&dir)
        .env("TMPDIR", &tmp)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let expected =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/expected/seed_fig6.f90.out"));
    assert_eq!(output.stdout, expected.unwrap());
    let executable = source_dir.join("built; $(touch PWNED2)");
    let output = Command::new(env!("CARGO_BIN_EXE_hpf-ls"))
        .arg("build")
        .arg(&source)
        .arg("-o")
        .arg(&executable)
        .current_dir(&dir)
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(executable.is_file());
    assert_eq!(build_dirs_left(&tmp), Vec::<String>::new());
    assert_nothing_executed(&dir);
}

#[test]
fn cli_run_past_its_timeout_kills_every_rank() {
    if !toolchain_present() {
        eprintln!("skipped: no MPI toolchain (and CI is not set)");
        return;
    }
    let dir = scratch("safe-cli-timeout");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let seconds = unique_seconds();
    let compiler = fake_compiler(&dir, &sleeper(seconds));
    let source = dir.join("prog.f90");
    std::fs::write(&source, SEED).unwrap();
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_hpf-ls"))
        .args(["run", "--np", "3", "--timeout", "3", "--fc"])
        .arg(&compiler)
        .arg(&source)
        .env("TMPDIR", &tmp)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(100), "the timeout was not applied");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("timed out after 3 s"), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&output.stdout).matches("rank-started").count(), 3);
    assert_none_survives(&format!("sleep {seconds}"));
    assert_eq!(build_dirs_left(&tmp), Vec::<String>::new());
    assert_nothing_executed(&dir);
}

/// `hpf.run` runs the program in the document's directory, as `hpf-ls run`
/// runs it in the current one: the files it writes are there afterwards,
/// and no build directory is left.
#[test]
fn the_editors_run_writes_its_files_next_to_the_document() {
    if !toolchain_present() {
        eprintln!("skipped: no MPI toolchain (and CI is not set)");
        return;
    }
    let dir = scratch("safe-run-dir");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let project = dir.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let compiler = fake_compiler(&dir, "pwd\necho written > PROGRAM.out");
    let mut client = start(&tmp, json!({"mpi": {"compiler": compiler}}));
    let uri = uri_in(&project, "model.f90");
    client.open(&uri, &SEED.replace("SEED", "model"));
    let id = run(&mut client, &uri, 2);
    let response = client.response(id);
    let stdout = response["result"]["stdout"].as_str().unwrap_or_else(|| panic!("{response}"));
    let canonical = project.canonicalize().unwrap();
    assert!(stdout.lines().all(|it| Path::new(it) == canonical || Path::new(it) == project), "{stdout}");
    assert_eq!(std::fs::read_to_string(project.join("model.out")).unwrap(), "written\n");
    assert_eq!(build_dirs_left(&tmp), Vec::<String>::new());
    client.shutdown();
}
