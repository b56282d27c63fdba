//! `hpf-ls run` and `hpf-ls build` behave like the program: it runs in the
//! current directory (its files are there afterwards, identical to the
//! sequential run's), takes its arguments after `--` and compiler flags
//! from `--fflags`, sees NUMBER_OF_PROCESSORS() as the process count, and
//! `--emit-source DIR` builds on its own. Interrupting hpf-ls leaves no
//! build directory behind. F77 sequence association runs as the
//! sequential program (or is refused at its line), and programs with
//! CHARACTER arrays leave no MPI handle behind (MPICH reports them).
//!
//! Needs gfortran, mpif90 and mpirun; skipped without them, failing when
//! `CI` is set.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn toolchain_present() -> bool {
    let found = |program: &str| Command::new(program).arg("--version").output().is_ok_and(|it| it.status.success());
    let present = found("gfortran") && found("mpif90") && found("mpirun");
    // A missing toolchain fails the test: a skipped run must not count as a passed one.
    if !present {
        panic!("this test needs gfortran, mpif90 and mpirun: apt-get install -y gfortran libopenmpi-dev openmpi-bin");
    }
    present
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hpf-ls-cli-run-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn hpf_ls(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hpf-ls"))
        .args(args)
        .current_dir(dir)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .unwrap()
}

fn succeeded(output: &Output, what: &str) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{what} failed:\n{stderr}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A program that writes a file named by its first argument, from a
/// distributed array and a loop that needs a neighbour's element.
const WRITER: &str = "\
program writer
  implicit none
  integer, parameter :: n = 40
  real :: a(n), b(n)
  integer :: i
  character(len=64) :: name
!HPF$ DISTRIBUTE a(BLOCK)
!HPF$ ALIGN b(i) WITH a(i)
  call get_command_argument(1, name)
  do i = 1, n
    a(i) = real(i * i)
  end do
  do i = 2, n
    b(i) = a(i - 1) + 0.5 * a(i)
  end do
  b(1) = 0.0
  open (unit=11, file=trim(name), status='replace')
  do i = 1, n, 7
    write (11, '(I4, F12.2)') i, b(i)
  end do
  close (11)
  print *, 'wrote ', trim(name), sum(b)
end program writer
";

#[test]
fn run_leaves_the_programs_files_in_the_current_directory() {
    if !toolchain_present() {
        return;
    }
    let dir = scratch("files");
    std::fs::write(dir.join("writer.f90"), WRITER).unwrap();
    let sequential = dir.join("sequential");
    std::fs::create_dir_all(&sequential).unwrap();
    let compiled = Command::new("gfortran").args(["../writer.f90", "-o", "writer"]).current_dir(&sequential).output();
    succeeded(&compiled.unwrap(), "gfortran");
    let expected_stdout = succeeded(
        &Command::new("./writer").arg("result.txt").current_dir(&sequential).output().unwrap(),
        "the sequential program",
    );
    let expected = std::fs::read(sequential.join("result.txt")).unwrap();
    for processes in ["1", "3"] {
        let parallel = dir.join(format!("on{processes}"));
        std::fs::create_dir_all(&parallel).unwrap();
        let output = hpf_ls(
            &[
                "run",
                "--ordered-reductions",
                "--np",
                processes,
                "--fflags",
                "-O1 -fcheck=bounds",
                "../writer.f90",
                "--",
                "result.txt",
            ],
            &parallel,
        );
        assert_eq!(succeeded(&output, "hpf-ls run"), expected_stdout);
        let written = std::fs::read(parallel.join("result.txt")).expect("the file is in the current directory");
        assert_eq!(String::from_utf8_lossy(&written), String::from_utf8_lossy(&expected), "on {processes}");
    }
    // Compiler flags reach the compiler: a bad one fails the build.
    let output = hpf_ls(&["run", "--np", "2", "--fflags=-fno-such-flag", "writer.f90", "--", "x.txt"], &dir);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no-such-flag"));
    assert!(!dir.join("x.txt").exists());
}

#[test]
fn number_of_processors_is_the_process_count() {
    if !toolchain_present() {
        return;
    }
    let dir = scratch("processors");
    // In the main program (implicit none, not declared), in a subroutine it
    // specialises, in one it copies (implicitly typed) and typed by the user.
    let source = "\
program count
  implicit none
  real :: a(12)
!HPF$ DISTRIBUTE a(BLOCK)
  a = 1.0
  print *, 'main', number_of_processors(), number_of_processors(dim=1)
  call spread(a)
  call plain()
  call typed()
end program count
subroutine spread(x)
  real :: x(12)
!HPF$ INHERIT x
  print *, 'spread', number_of_processors(), sum(x)
end subroutine spread
subroutine plain()
  np = number_of_processors()
  print *, 'plain', np
end subroutine plain
subroutine typed()
  integer number_of_processors
  print *, 'typed', number_of_processors()
end subroutine typed
";
    std::fs::write(dir.join("count.f90"), source).unwrap();
    for processes in [1, 2, 4] {
        let out = succeeded(&hpf_ls(&["run", "--np", &processes.to_string(), "count.f90"], &dir), "hpf-ls run");
        let words: Vec<Vec<&str>> = out.lines().map(|it| it.split_whitespace().collect()).collect();
        let count = processes.to_string();
        assert_eq!(words[0], ["main", &count, &count], "{out}");
        assert_eq!(words[1][..2], ["spread", &count], "{out}");
        assert_eq!(words[2], ["plain", &count], "{out}");
        assert_eq!(words[3], ["typed", &count], "{out}");
    }
}

/// A processor arrangement sized by NUMBER_OF_PROCESSORS(): the analysis
/// takes the count `run` runs on, so `--stats` has a prediction to compare.
#[test]
fn the_analysis_of_a_run_knows_its_process_count() {
    if !toolchain_present() {
        return;
    }
    let dir = scratch("arrangement");
    let source = "\
program shift
  implicit none
  integer :: i
  real :: a(20), b(20)
!HPF$ PROCESSORS P(NUMBER_OF_PROCESSORS())
!HPF$ DISTRIBUTE a(BLOCK) ONTO P
!HPF$ ALIGN b(i) WITH a(i)
  do i = 1, 20
    a(i) = i
  end do
  do i = 2, 20
    b(i) = a(i - 1)
  end do
  print *, sum(b(2:20))
end program shift
";
    std::fs::write(dir.join("shift.f90"), source).unwrap();
    for processes in [2u32, 3] {
        let output = hpf_ls(&["run", "--np", &processes.to_string(), "--stats", "shift.f90"], &dir);
        assert_eq!(succeeded(&output, "hpf-ls run").trim(), "190.000000");
        let stderr = String::from_utf8_lossy(&output.stderr);
        let line = stderr.lines().find(|it| it.starts_with("hpf-ls stats: line 11:")).expect("stats of the shift");
        // One element across each of the processes - 1 block boundaries, as predicted.
        let moved = format!("{} message(s), {} element(s)", processes - 1, processes - 1);
        assert!(line.contains(&format!(": {moved} per execution")), "{line}");
        assert!(line.ends_with(&format!("the analysis predicts {moved}")), "{line}");
    }
}

#[test]
fn emitted_sources_build_with_their_own_command() {
    if !toolchain_present() {
        return;
    }
    let dir = scratch("emit");
    std::fs::write(dir.join("writer.f90"), WRITER).unwrap();
    let build = hpf_ls(&["build", "writer.f90", "--emit-source", "generated", "-o", "via-hpf-ls"], &dir);
    succeeded(&build, "hpf-ls build");
    let generated = dir.join("generated");
    let files: Vec<String> = {
        let mut names: Vec<String> = std::fs::read_dir(&generated)
            .unwrap()
            .map(|it| it.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(files, ["build.sh", "hpf_runtime.f90", "program.f90"]);
    // Built elsewhere, as on a cluster, by the script alone.
    let copy = dir.join("cluster");
    std::fs::create_dir_all(&copy).unwrap();
    for name in &files {
        std::fs::copy(generated.join(name), copy.join(name)).unwrap();
    }
    succeeded(&Command::new("sh").arg(copy.join("build.sh")).output().unwrap(), "build.sh");
    let mpirun = |executable: &Path| {
        Command::new("mpirun")
            .args(["--oversubscribe", "-np", "3"])
            .arg(executable)
            .arg("out.txt")
            .current_dir(&copy)
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .output()
            .unwrap()
    };
    let from_script = succeeded(&mpirun(&copy.join("program")), "the script's program");
    let from_hpf_ls = succeeded(&mpirun(&dir.join("via-hpf-ls")), "hpf-ls build's program");
    assert_eq!(from_script, from_hpf_ls);
    assert!(from_script.contains("wrote out.txt"), "{from_script}");
    // A file name still gets the program alone.
    succeeded(&hpf_ls(&["build", "writer.f90", "--emit-source", "alone.f90"], &dir), "hpf-ls build");
    assert_eq!(std::fs::read(dir.join("alone.f90")).unwrap(), std::fs::read(generated.join("program.f90")).unwrap());
}

#[test]
fn terminating_hpf_ls_removes_the_build_and_the_run() {
    if !toolchain_present() {
        return;
    }
    let dir = scratch("terminate");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let source = "\
program sleeper
  real :: a(8)
!HPF$ DISTRIBUTE a(BLOCK)
  a = 1.0
  print *, 'started', sum(a)
  flush (6)
  call sleep(120)
end program sleeper
";
    std::fs::write(dir.join("sleeper.f90"), source).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_hpf-ls"))
        .args(["run", "--np", "2", "sleeper.f90"])
        .current_dir(&dir)
        .env("TMPDIR", &tmp)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().expect("the program starts").unwrap();
    assert!(first.contains("started"), "{first}");
    // (Open MPI keeps a session directory of its own there too.)
    let build_dirs = || -> Vec<PathBuf> {
        let entries = std::fs::read_dir(&tmp).unwrap().map(|it| it.unwrap().path());
        entries.filter(|it| it.file_name().unwrap().to_string_lossy().starts_with("hpf-ls-build-")).collect()
    };
    assert_eq!(build_dirs().len(), 1, "the build directory exists while it runs");
    // SAFETY: a signal to the child we started and have not reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(std::os::unix::process::ExitStatusExt::into_raw(status) >> 8, 128 + libc::SIGTERM);
    assert_eq!(build_dirs(), Vec::<PathBuf>::new(), "left behind");
    // The ranks went with it: nothing holds the pipe open any more.
    assert!(lines.next().is_none(), "the program still runs");
}

/// `--hostfile` with srun (and any launcher refusal) is reported before
/// anything is compiled: no toolchain needed, a fake `srun` and a fake
/// compiler that records being called.
#[cfg(unix)]
#[test]
fn a_hostfile_with_srun_is_refused_before_the_build() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("srun-hostfile");
    let script = |name: &str, body: &str| {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.to_string_lossy().into_owned()
    };
    let srun = script("srun", "touch launched");
    let compiler = script("fake-mpif90", "touch compiled; exit 1");
    std::fs::write(dir.join("writer.f90"), WRITER).unwrap();
    std::fs::write(dir.join("hosts"), "localhost slots=4\n").unwrap();
    let output = hpf_ls(
        &["run", "--launcher", &srun, "--fc", &compiler, "--np", "2", "--hostfile", "hosts", "writer.f90"],
        &dir,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("--hostfile means nothing to srun"), "{stderr}");
    assert!(!dir.join("compiled").exists(), "the program was built first");
    assert!(!dir.join("launched").exists());
}

/// The MPI toolchains `run --check` is tried with: the default (Open MPI
/// here), and MPICH's when it is installed (CI installs it: there it must be).
fn toolchains() -> Vec<Vec<&'static str>> {
    let mpich = Command::new("mpif90.mpich").arg("--version").output().is_ok_and(|it| it.status.success());
    assert!(mpich || std::env::var_os("CI").is_none(), "CI needs MPICH: apt-get install -y mpich");
    let mut found = vec![vec![]];
    if mpich {
        found.push(vec!["--fc", "mpif90.mpich", "--launcher", "mpirun.mpich"]);
    }
    found
}

/// A loop whose last iteration, on the second process, reads one element
/// past the end of a replicated array; rank 0 then sleeps for a minute.
const OUT_OF_BOUNDS: &str = "\
program oob
  implicit none
  integer, parameter :: n = 16
  real :: a(n), b(n)
  integer :: i, k
!HPF$ DISTRIBUTE b(BLOCK)
  k = n / 16
  a = 1.0
  do i = 1, n
    b(i) = a(i + k)
  end do
  call sleep(60)
  print *, sum(b)
end program oob
";

/// `run --check`: gfortran's bounds error on the second process comes back
/// as the user's file, line and column, the process, the array's declared
/// bounds; and the run ends at once (rank 0 would sleep a minute) with a
/// failing status, under Open MPI and MPICH.
#[test]
fn check_names_the_users_line_and_process_and_ends_the_run_at_once() {
    if !toolchain_present() {
        return;
    }
    let dir = scratch("check");
    std::fs::write(dir.join("oob.f90"), OUT_OF_BOUNDS).unwrap();
    for toolchain in toolchains() {
        let started = std::time::Instant::now();
        let mut args = vec!["run", "--check", "--np", "2", "--timeout", "50"];
        args.extend(&toolchain);
        args.push("oob.f90");
        let output = hpf_ls(&args, &dir);
        let elapsed = started.elapsed();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{toolchain:?}: {stderr}");
        assert!(
            stderr.contains("oob.f90:10:5: on P(2): index 17 of a is out of bounds 1:16\n  b(i) = a(i + k)\n"),
            "{toolchain:?}: {stderr}"
        );
        assert!(stderr.contains("hpf-ls: the run was ended: a process died"), "{toolchain:?}: {stderr}");
        assert!(!stderr.contains("timed out"), "{toolchain:?}: {stderr}");
        // Building takes seconds; waiting for rank 0 would take a minute.
        assert!(elapsed < std::time::Duration::from_secs(40), "{toolchain:?}: {elapsed:?}\n{stderr}");
        // (MPICH's launcher prints its banner about the killed processes on stdout.)
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(!stdout.contains("16.0000"), "rank 0 went on: {toolchain:?}\n{stdout}");
    }
}

/// Without errors `run --check` prints what `run` prints, and passes the
/// program's own standard error through.
#[test]
fn check_runs_a_correct_program_as_run_does() {
    if !toolchain_present() {
        return;
    }
    let dir = scratch("check-correct");
    let source = "\
program fine
  implicit none
  real :: a(12)
  integer :: i
!HPF$ DISTRIBUTE a(BLOCK)
  do i = 1, 12
    a(i) = i
  end do
  write (0, '(a)') 'to stderr'
  print *, sum(a)
end program fine
";
    std::fs::write(dir.join("fine.f90"), source).unwrap();
    let plain = hpf_ls(&["run", "--np", "2", "fine.f90"], &dir);
    let checked = hpf_ls(&["run", "--check", "--np", "2", "fine.f90"], &dir);
    assert_eq!(succeeded(&checked, "run --check"), succeeded(&plain, "run"));
    assert!(String::from_utf8_lossy(&checked.stderr).contains("to stderr"));
}

/// The derived datatypes the runtime makes for CHARACTER elements are freed
/// before `MPI_Finalize`: MPICH otherwise ends such a program by printing
/// `yaksa: N leaked handle pool objects` on stderr. Every toolchain found
/// (MPICH in CI) runs a program that gathers and moves CHARACTER arrays.
#[test]
fn character_arrays_leave_no_leaked_mpi_handles() {
    if !toolchain_present() {
        return;
    }
    let dir = scratch("character-handles");
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/label_gather.f90");
    std::fs::copy(corpus, dir.join("label_gather.f90")).unwrap();
    for toolchain in toolchains() {
        let mut args = vec!["run", "--np", "3", "--timeout", "120"];
        args.extend(&toolchain);
        args.push("label_gather.f90");
        let output = hpf_ls(&args, &dir);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{toolchain:?}: {stderr}");
        assert!(!String::from_utf8_lossy(&output.stdout).trim().is_empty(), "{toolchain:?}: no output");
        assert!(!stderr.contains("leaked handle"), "{toolchain:?}: {stderr}");
    }
}

/// F77 sequence association: an element passed as the start of an array
/// dummy (`CALL S(A(1), N)`, `F(R(3), ...)`).
const SEQUENCE_ASSOCIATION: &str = "      PROGRAM SEQA
      INTEGER N
      PARAMETER (N = 16)
      REAL A(N), R(N), AMIN, RMIN, REDMIN
      EXTERNAL REDMIN
!HPF$ DISTRIBUTE A(BLOCK)
      INTEGER I
      DO 10 I = 1, N
         A(I) = I
         R(I) = 17 - I
   10 CONTINUE
      RMIN = REDMIN(R(3), 1, N - 2)
      CALL SCALE(R(1), N)
      CALL SCALE(A(1), N)
      CALL SCALE(A(5), 4)
      AMIN = REDMIN(A, 1, N)
      PRINT '(4F8.1)', AMIN, RMIN, R(N), A(N)
      PRINT '(8F6.1)', A
      END
      REAL FUNCTION REDMIN(X, LO, HI)
      INTEGER LO, HI, I
      REAL X(*)
      REDMIN = X(LO)
      DO 20 I = LO, HI
         REDMIN = MIN(REDMIN, X(I))
   20 CONTINUE
      END
      SUBROUTINE SCALE(Y, M)
      INTEGER M, I
      REAL Y(M)
      DO 30 I = 1, M
         Y(I) = 2 * Y(I)
   30 CONTINUE
      END
";

/// Sequence association runs as the sequential program for replicated and
/// distributed arrays (a CALL with an element of a distributed array);
/// where the backend cannot (a function reference with such an element)
/// it refuses at the argument, and the compiler never sees a wrong call.
#[test]
fn sequence_association_runs_as_the_sequential_program_or_is_refused_at_its_line() {
    if !toolchain_present() {
        return;
    }
    let dir = scratch("sequence-association");
    std::fs::write(dir.join("seqa.f"), SEQUENCE_ASSOCIATION).unwrap();
    let compiled = Command::new("gfortran").args(["seqa.f", "-o", "sequential"]).current_dir(&dir).output().unwrap();
    succeeded(&compiled, "gfortran");
    let expected =
        succeeded(&Command::new("./sequential").current_dir(&dir).output().unwrap(), "the sequential program");
    for processes in ["1", "3", "4"] {
        let output = hpf_ls(&["run", "--ordered-reductions", "--np", processes, "seqa.f"], &dir);
        assert_eq!(succeeded(&output, "hpf-ls run"), expected, "on {processes}");
    }

    let refused = SEQUENCE_ASSOCIATION.replace("AMIN = REDMIN(A, 1, N)", "AMIN = REDMIN(A(2), 1, N - 1)");
    std::fs::write(dir.join("refused.f"), refused).unwrap();
    let output = hpf_ls(&["run", "--np", "2", "refused.f"], &dir);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("refused.f:16:21: error: `A(2)` is an element of the distributed array `A`"), "{stderr}");
    assert!(!stderr.contains("internal error"), "{stderr}");
}
