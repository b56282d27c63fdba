//! Compiling and running generated programs: finds the MPI compiler and
//! launcher, builds in a private temporary directory, runs with argv
//! vectors (never a shell string), and passes the program's output and
//! exit status through.
//!
//! Every process it starts can be stopped with all of its descendants:
//! the launcher's ranks put themselves in process groups of their own
//! (Open MPI does), so killing the launcher or its group would leave them
//! running. The server starts each command in a session of its own
//! ([`new_session`]) and kills the whole session ([`SessionGuard`]); the
//! command line, whose commands stay in the terminal's session so that
//! Ctrl-C reaches them, kills on timeout the descendants it finds under `/proc`.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Bounds on one compilation or run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time of each step (the compiler, then the launcher); `None`: unbounded.
    pub timeout: Option<Duration>,
    /// Bytes of output (stdout and stderr together) kept from each step.
    pub max_output_bytes: usize,
}

/// The server's default limits (settings `hpf.mpi.timeoutSeconds` and `hpf.mpi.maxOutputBytes`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 1 << 20;

/// How to build and run.
#[derive(Clone, Debug, Default)]
pub struct Toolchain {
    /// The MPI Fortran compiler; found on PATH when `None`.
    pub compiler: Option<String>,
    /// The launcher (`mpirun`, `mpiexec`, `srun`); found on PATH when `None`.
    pub launcher: Option<String>,
    pub hostfile: Option<PathBuf>,
    pub extra_flags: Vec<String>,
}

const COMPILERS: &[&str] = &["mpif90", "mpifort", "mpif90.openmpi", "mpif90.mpich"];
const LAUNCHERS: &[&str] = &["mpirun", "mpiexec", "mpirun.openmpi", "mpirun.mpich"];
pub const INSTALL_HINT: &str =
    "install an MPI Fortran toolchain, e.g. `apt-get install -y gfortran libopenmpi-dev openmpi-bin`";

fn on_path(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return Path::new(program).is_file().then(|| PathBuf::from(program));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(program)).find(|it| it.is_file())
}

fn find(configured: Option<&str>, candidates: &[&str], what: &str) -> Result<PathBuf, String> {
    match configured {
        Some(program) => {
            on_path(program).ok_or_else(|| format!("the {what} `{program}` was not found; {INSTALL_HINT}"))
        }
        None => candidates
            .iter()
            .find_map(|it| on_path(it))
            .ok_or_else(|| format!("no MPI {what} found on PATH (tried {}); {INSTALL_HINT}", candidates.join(", "))),
    }
}

/// A private build directory (mode 0700, a fresh name), removed when dropped.
pub struct BuildDir {
    pub path: PathBuf,
}

impl BuildDir {
    pub fn new() -> std::io::Result<BuildDir> {
        let base = std::env::temp_dir();
        for attempt in 0..100u32 {
            let nanos =
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |it| it.subsec_nanos());
            let path = base.join(format!("hpf-ls-build-{}-{nanos}-{attempt}", std::process::id()));
            let mut builder = std::fs::DirBuilder::new();
            // Readable by its owner only.
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            if builder.create(&path).is_ok() {
                return Ok(BuildDir { path });
            }
        }
        Err(std::io::Error::other("cannot create a temporary build directory"))
    }
}

impl Drop for BuildDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// A build ready to start: the sources written in a private directory
/// (removed with it) and the compiler command that makes `executable`.
pub struct PreparedBuild {
    pub dir: BuildDir,
    pub command: Command,
    pub executable: PathBuf,
    pub compiler: PathBuf,
}

/// Writes the program and the runtime into a fresh directory and prepares
/// the compiler command; `executable` defaults to `program` in that directory.
pub fn prepare_build(source: &str, executable: Option<&Path>, toolchain: &Toolchain) -> Result<PreparedBuild, String> {
    let compiler = find(toolchain.compiler.as_deref(), COMPILERS, "compiler")?;
    let dir = BuildDir::new().map_err(|error| error.to_string())?;
    let runtime = dir.path.join("hpf_runtime.f90");
    let program = dir.path.join("program.f90");
    std::fs::write(&runtime, crate::runtime::runtime_for(source)).map_err(|error| error.to_string())?;
    std::fs::write(&program, source).map_err(|error| error.to_string())?;
    let executable = executable.map_or_else(|| dir.path.join("program"), Path::to_path_buf);
    let mut command = Command::new(&compiler);
    // -O2 without fast-math keeps IEEE semantics: the output matches the sequential program's.
    command
        .args(["-O2", "-ffree-line-length-none", "-J"])
        .arg(&dir.path)
        .arg(&runtime)
        .arg(&program)
        .args(&toolchain.extra_flags)
        .arg("-o")
        .arg(&executable)
        .current_dir(&dir.path)
        .stdin(Stdio::null());
    Ok(PreparedBuild { dir, command, executable, compiler })
}

/// Compiles `source` with the runtime into `executable`; the compiler's
/// messages are returned on failure. Past `timeout` the compiler and its
/// children are killed.
pub fn build(source: &str, executable: &Path, toolchain: &Toolchain, timeout: Option<Duration>) -> Result<(), String> {
    let mut prepared = prepare_build(source, Some(executable), toolchain)?;
    prepared.command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child =
        prepared.command.spawn().map_err(|error| format!("cannot start {}: {error}", prepared.compiler.display()))?;
    // The compiler's messages are drained while it runs, so a full pipe cannot block it.
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = std::io::Read::read_to_end(&mut pipe, &mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(child.stdout.take().map(|it| Box::new(it) as Box<dyn std::io::Read + Send>));
    let stderr = drain(child.stderr.take().map(|it| Box::new(it) as Box<dyn std::io::Read + Send>));
    let status = wait_with_timeout(&mut child, timeout);
    let (stdout, stderr) = (stdout.join().unwrap_or_default(), stderr.join().unwrap_or_default());
    match status {
        Ok(status) if status.success() => Ok(()),
        Ok(_) => Err(format!(
            "{} failed on the generated program:\n{}{}",
            prepared.compiler.display(),
            String::from_utf8_lossy(&stdout),
            String::from_utf8_lossy(&stderr)
        )),
        Err(message) => Err(format!("{}: {message}", prepared.compiler.display())),
    }
}

/// Waits for `child`; past `timeout` kills it with its descendants and says so.
fn wait_with_timeout(child: &mut std::process::Child, timeout: Option<Duration>) -> Result<ExitStatus, String> {
    let Some(timeout) = timeout else {
        return child.wait().map_err(|error| error.to_string());
    };
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) if Instant::now() >= deadline => {
                kill_descendants(child.id());
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("timed out after {} s; its processes were killed", timeout.as_secs_f64()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(error) => return Err(error.to_string()),
        }
    }
}

/// The launcher command for `processes` ranks of `executable`.
pub fn launch_command(
    executable: &Path,
    processes: u32,
    toolchain: &Toolchain,
    args: &[String],
) -> Result<Command, String> {
    let launcher = find(toolchain.launcher.as_deref(), LAUNCHERS, "launcher")?;
    let name = launcher.file_name().and_then(|it| it.to_str()).unwrap_or("");
    let mut command = Command::new(&launcher);
    if name.starts_with("srun") {
        command.arg(format!("--ntasks={processes}"));
    } else {
        command.arg("-np").arg(processes.to_string());
        let is_openmpi = name.contains("openmpi")
            || Command::new(&launcher)
                .arg("--version")
                .output()
                .is_ok_and(|it| String::from_utf8_lossy(&it.stdout).contains("Open MPI"));
        if is_openmpi {
            // More ranks than cores must work; as root OpenMPI wants consent.
            command.arg("--oversubscribe");
            command.env("OMPI_ALLOW_RUN_AS_ROOT", "1").env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
            command.env("OMPI_MCA_rmaps_base_oversubscribe", "1");
        }
        if let Some(hostfile) = &toolchain.hostfile {
            command.arg("--hostfile").arg(hostfile);
        }
    }
    command.arg(executable).args(args);
    Ok(command)
}

/// Builds and runs; the program's stdout and stderr pass through. Past
/// `timeout` (each for the build and the run) every process is killed.
pub fn run(
    source: &str,
    processes: u32,
    toolchain: &Toolchain,
    args: &[String],
    stats: bool,
    timeout: Option<Duration>,
) -> Result<ExitStatus, String> {
    let dir = BuildDir::new().map_err(|error| error.to_string())?;
    let executable = dir.path.join("program");
    build(source, &executable, toolchain, timeout)?;
    let mut command = launch_command(&executable, processes, toolchain, args)?;
    if stats {
        command.env("HPF_LS_STATS", "1");
    }
    // The program's standard input is the user's (the launcher hands it to
    // rank 0, which does every READ).
    command.current_dir(&dir.path).stdin(Stdio::inherit());
    let mut child = command.spawn().map_err(|error| format!("cannot start the launcher: {error}"))?;
    wait_with_timeout(&mut child, timeout).map_err(|message| format!("the program {message}"))
}

/// Makes `command` start in a session (and process group) of its own, so
/// that [`kill_session`] finds every process it starts, even those that leave
/// its process group or lose their parent.
pub fn new_session(command: &mut Command) {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: `setsid` is async-signal-safe, as `pre_exec` requires; it
        // cannot fail in a freshly forked child, which is never a group leader.
        unsafe {
            command.pre_exec(|| {
                sys::setsid();
                Ok(())
            });
        }
    }
    #[cfg(not(unix))]
    let _ = command;
}

#[cfg(unix)]
mod sys {
    extern "C" {
        pub fn setsid() -> i32;
        pub fn kill(pid: i32, signal: i32) -> i32;
    }
    pub const SIGKILL: i32 = 9;
}

/// `(pid, parent, session)` of every live (not zombie) process.
fn processes() -> Vec<(u32, u32, u32)> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut res = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|it| it.parse::<u32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // `pid (comm) state ppid pgrp session ...`; comm may hold blanks and parentheses.
        let Some(after) = stat.rfind(')').map(|it| &stat[it + 1..]) else { continue };
        let fields: Vec<&str> = after.split_whitespace().collect();
        if fields.len() < 4 || fields[0] == "Z" || fields[0] == "X" {
            continue;
        }
        let (Ok(parent), Ok(session)) = (fields[1].parse(), fields[3].parse()) else { continue };
        res.push((pid, parent, session));
    }
    res
}

/// The live processes `seeds` started, transitively (by parent pid), with the seeds.
fn with_descendants(all: &[(u32, u32, u32)], mut members: Vec<u32>) -> Vec<u32> {
    let mut idx = 0;
    while idx < members.len() {
        let parent = members[idx];
        for &(pid, ppid, _) in all {
            if ppid == parent && !members.contains(&pid) {
                members.push(pid);
            }
        }
        idx += 1;
    }
    let own = std::process::id();
    members.retain(|it| *it != own);
    members
}

/// Every live process of the session `leader` started with [`new_session`]
/// (the leader included while it lives), and their descendants.
pub fn session_members(leader: u32) -> Vec<u32> {
    let all = processes();
    let seeds = all.iter().filter(|it| it.2 == leader).map(|it| it.0).collect();
    with_descendants(&all, seeds)
}

/// `root`, if alive, and its live descendants.
pub fn descendants(root: u32) -> Vec<u32> {
    let all = processes();
    let seeds = all.iter().filter(|it| it.0 == root).map(|it| it.0).collect();
    with_descendants(&all, seeds)
}

/// Sends SIGKILL to what `members` finds, again until nothing is left: a
/// process forked meanwhile is found in the next round.
fn kill_all(members: impl Fn() -> Vec<u32>) {
    #[cfg(unix)]
    for _ in 0..100 {
        let found = members();
        if found.is_empty() {
            return;
        }
        for pid in found {
            // SAFETY: `kill` has no memory effects; a vanished pid only makes it fail.
            unsafe {
                sys::kill(pid as i32, sys::SIGKILL);
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    #[cfg(not(unix))]
    let _ = members;
}

/// Kills the session `leader` leads ([`session_members`]), even after the
/// leader itself exited: its ranks stay in the session when their parent dies.
pub fn kill_session(leader: u32) {
    kill_all(|| session_members(leader));
}

/// Kills `root` and its descendants; call it before `root` is reaped, while
/// its pid cannot name another process.
pub fn kill_descendants(root: u32) {
    kill_all(|| descendants(root));
}

/// Kills the session of a process started with [`new_session`] when
/// dropped: the server holds one per started process, so a request that is
/// cancelled (its future dropped), times out or ends takes every process it
/// started with it.
pub struct SessionGuard {
    leader: Option<u32>,
}

impl SessionGuard {
    pub fn new(leader: Option<u32>) -> SessionGuard {
        SessionGuard { leader }
    }

    /// Kills now what is left of the session.
    pub fn kill(&mut self) {
        if let Some(leader) = self.leader.take() {
            kill_session(leader);
        }
    }
}

impl Drop for SessionGuard {
    fn drop(&mut self) {
        self.kill();
    }
}
