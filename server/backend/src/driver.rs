//! Compiling and running generated programs: finds the MPI compiler and
//! launcher, builds in a private temporary directory, runs with argv
//! vectors (never a shell string) in the caller's directory, and passes the
//! program's output and exit status through. The launcher's argv
//! ([`launcher_argv`]) is a pure function of the launcher kind, the
//! process count and the environment it reads, so it is unit-tested.
//!
//! With a relay (`hpf-ls run --check`), each rank runs under it and a rank
//! that dies ends the whole run at once ([`run`], [`record_death`]).
//!
//! Build directories are registered while they exist, so that a signal
//! handler of the command line can remove them and kill what runs
//! ([`clean_up_for_exit`]) when hpf-ls itself is interrupted or terminated.
//!
//! Every process it starts can be stopped with all of its descendants:
//! the launcher's ranks put themselves in process groups of their own
//! (Open MPI does), so killing the launcher or its group would leave them
//! running. The server starts each command in a session of its own
//! ([`new_session`]) and kills the whole session ([`SessionGuard`]); the
//! command line, whose commands stay in the terminal's session so that
//! Ctrl-C reaches them, kills on timeout the descendants it finds under `/proc`,
//! after giving srun SIGTERM and a grace to cancel its job step ([`stop`]).

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
    /// The launcher (`mpirun`, `mpiexec`, `srun`), possibly with options of
    /// its own, split into words as a shell would (`srun --mpi=pmix`);
    /// found on PATH when `None`.
    pub launcher: Option<String>,
    pub hostfile: Option<PathBuf>,
    pub extra_flags: Vec<String>,
}

const COMPILERS: &[&str] = &["mpif90", "mpifort", "mpif90.openmpi", "mpif90.mpich"];
const LAUNCHERS: &[&str] = &["mpirun", "mpiexec", "mpirun.openmpi", "mpirun.mpich"];
pub const INSTALL_HINT: &str =
    "install an MPI Fortran toolchain, e.g. `apt-get install -y gfortran libopenmpi-dev openmpi-bin`";

/// The executable `program` names: a path (relative to the current
/// directory) when it holds a `/`, else the first on PATH.
fn on_path(program: &str) -> Option<PathBuf> {
    which::which(program).ok()
}

fn find(configured: Option<&str>, candidates: &[&str], what: &str) -> Result<PathBuf, String> {
    match configured {
        Some(program) => on_path(program)
            .ok_or_else(|| format!("the {what} `{program}` was not found or is not executable; {INSTALL_HINT}")),
        None => candidates
            .iter()
            .find_map(|it| on_path(it))
            .ok_or_else(|| format!("no MPI {what} found on PATH (tried {}); {INSTALL_HINT}", candidates.join(", "))),
    }
}

/// A private build directory (mode 0700, a fresh name: `tempfile`'s),
/// removed when dropped.
pub struct BuildDir {
    pub path: PathBuf,
    _dir: tempfile::TempDir,
}

impl BuildDir {
    pub fn new() -> std::io::Result<BuildDir> {
        let mut builder = tempfile::Builder::new();
        builder.prefix("hpf-ls-build-");
        // Readable by its owner only (tempfile's default follows the umask).
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700));
        let dir = builder.tempdir()?;
        let path = dir.path().to_path_buf();
        live_build_dirs().push(path.clone());
        Ok(BuildDir { path, _dir: dir })
    }
}

impl Drop for BuildDir {
    fn drop(&mut self) {
        // `_dir` removes the directory right after.
        live_build_dirs().retain(|it| *it != self.path);
    }
}

/// The build directories that exist now (the signal handler removes them).
fn live_build_dirs() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    static DIRS: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    DIRS.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The compilers and launchers [`build`] and [`run`] are waiting for, each
/// with the grace it gets before it is killed ([`stop`]).
fn running_children() -> std::sync::MutexGuard<'static, Vec<(u32, Option<Duration>)>> {
    static PIDS: std::sync::Mutex<Vec<(u32, Option<Duration>)>> = std::sync::Mutex::new(Vec::new());
    PIDS.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// For a handler of SIGINT/SIGTERM that is about to exit the process: kills
/// the compiler or launcher [`build`]/[`run`] waits for, with every process
/// it started, and removes every build directory (destructors do not run
/// on `exit`).
pub fn clean_up_for_exit() {
    let children = running_children().clone();
    for (pid, grace) in children {
        stop(pid, grace);
    }
    for dir in live_build_dirs().drain(..) {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// The files of a build, in the private directory as in the one
/// `hpf-ls build --emit-source DIR` writes with `build.sh`, the command that
/// compiles them without hpf-ls.
pub const PROGRAM_FILE: &str = "program.f90";
pub const RUNTIME_FILE: &str = "hpf_runtime.f90";
pub const BUILD_SCRIPT: &str = "build.sh";

/// A build ready to start: the sources written in a private directory
/// (removed with it) and the compiler commands that make `executable`.
pub struct PreparedBuild {
    pub dir: BuildDir,
    /// Compiles the runtime into an object in `dir`, to run first; `None`
    /// when the cache holds it compiled ([`crate::runtime_cache`]).
    pub runtime_command: Option<Command>,
    /// Compiles the program and links it with the runtime's object.
    pub command: Command,
    pub executable: PathBuf,
    pub compiler: PathBuf,
    /// Where the runtime that `runtime_command` compiles is kept for later builds.
    cache_entry: Option<PathBuf>,
    /// Whether that entry is replaced if it exists (it was found unusable).
    replaces_entry: bool,
}

impl PreparedBuild {
    /// Keeps the runtime `runtime_command` compiled for the builds after
    /// this one (call it once that command succeeded).
    pub fn keep_runtime(&self) {
        let compiled_here = self.dir.path.join(crate::runtime_cache::OBJECT_FILE).is_file();
        if let (Some(entry), true) = (&self.cache_entry, compiled_here) {
            // A cache that cannot be written only costs later builds their time.
            let _ = crate::runtime_cache::store(entry, &self.dir.path, self.replaces_entry);
        }
    }
}

/// Writes the program and the runtime into a fresh directory and prepares
/// the compiler commands; `executable` defaults to `program` in that
/// directory. The runtime is compiled on its own, once per runtime text,
/// compiler and flags: later builds link the cached object.
pub fn prepare_build(source: &str, executable: Option<&Path>, toolchain: &Toolchain) -> Result<PreparedBuild, String> {
    prepare(source, executable, toolchain, true)
}

/// [`prepare_build`]; without `reuse_cached`, the runtime is compiled even
/// when the cache holds it (and then stored over what it holds).
fn prepare(
    source: &str,
    executable: Option<&Path>,
    toolchain: &Toolchain,
    reuse_cached: bool,
) -> Result<PreparedBuild, String> {
    let compiler = find(toolchain.compiler.as_deref(), COMPILERS, "compiler")?;
    let dir = BuildDir::new().map_err(|error| error.to_string())?;
    let runtime = dir.path.join(RUNTIME_FILE);
    let program = dir.path.join(PROGRAM_FILE);
    let runtime_text = crate::runtime::runtime_for(source);
    std::fs::write(&runtime, &runtime_text).map_err(|error| error.to_string())?;
    std::fs::write(&program, source).map_err(|error| error.to_string())?;
    let executable = executable.map_or_else(|| dir.path.join("program"), Path::to_path_buf);
    let flags: Vec<std::ffi::OsString> =
        COMPILE_FLAGS.iter().map(Into::into).chain(toolchain.extra_flags.iter().map(Into::into)).collect();
    // Flags that stop before linking (`-fsyntax-only`, ...) leave no runtime
    // object to link or keep: one command compiles both files, as `build.sh` does.
    let stops_before_linking =
        toolchain.extra_flags.iter().any(|it| matches!(it.as_str(), "-fsyntax-only" | "-c" | "-S" | "-E"));
    if stops_before_linking {
        let mut command = Command::new(&compiler);
        command
            .arg("-J")
            .arg(&dir.path)
            .args(compile_args(&runtime, &program, &toolchain.extra_flags, &executable))
            .current_dir(&dir.path)
            .stdin(Stdio::null());
        return Ok(PreparedBuild {
            dir,
            runtime_command: None,
            command,
            executable,
            compiler,
            cache_entry: None,
            replaces_entry: false,
        });
    }
    let cache_entry = crate::runtime_cache::cache_root()
        .map(|root| crate::runtime_cache::entry_dir(&root, &compiler, &flags, &runtime_text));
    let (runtime_dir, runtime_command) = match &cache_entry {
        Some(entry) if reuse_cached && crate::runtime_cache::lookup(entry) => (entry.clone(), None),
        _ => {
            let mut command = Command::new(&compiler);
            command
                .arg("-J")
                .arg(&dir.path)
                .args(COMPILE_FLAGS)
                .arg("-c")
                .arg(&runtime)
                .args(&toolchain.extra_flags)
                .arg("-o")
                .arg(dir.path.join(crate::runtime_cache::OBJECT_FILE))
                .current_dir(&dir.path)
                .stdin(Stdio::null());
            (dir.path.clone(), Some(command))
        }
    };
    let mut command = Command::new(&compiler);
    // The program's own module files go to the build directory, which is
    // also the compiler's; the runtime's module file is found beside its object.
    command
        .arg("-J")
        .arg(&dir.path)
        .arg("-I")
        .arg(&runtime_dir)
        .args(COMPILE_FLAGS)
        .arg(&program)
        .arg(runtime_dir.join(crate::runtime_cache::OBJECT_FILE))
        .args(&toolchain.extra_flags)
        .arg("-o")
        .arg(&executable)
        .current_dir(&dir.path)
        .stdin(Stdio::null());
    Ok(PreparedBuild {
        dir,
        runtime_command,
        command,
        executable,
        compiler,
        cache_entry,
        replaces_entry: !reuse_cached,
    })
}

/// -O2 without fast-math keeps IEEE semantics: the output matches the sequential program's.
const COMPILE_FLAGS: [&str; 2] = ["-O2", "-ffree-line-length-none"];

/// The compiler's argv after its name in `build.sh`: flags, the runtime
/// then the program (the program uses the runtime's module), the user's
/// flags, the output.
fn compile_args(runtime: &Path, program: &Path, extra_flags: &[String], executable: &Path) -> Vec<std::ffi::OsString> {
    let mut args: Vec<std::ffi::OsString> = COMPILE_FLAGS.iter().map(Into::into).collect();
    args.extend([runtime.as_os_str().to_owned(), program.as_os_str().to_owned()]);
    args.extend(extra_flags.iter().map(Into::into));
    args.extend(["-o".into(), executable.as_os_str().to_owned()]);
    args
}

/// Writes into `dir` (created if needed) the generated program, the runtime
/// module it uses and `build.sh`, the one command that builds them with the
/// configured compiler (default `mpif90`) into `dir/program`.
pub fn emit_sources(dir: &Path, source: &str, toolchain: &Toolchain) -> Result<(), String> {
    let io = |path: &Path, error: std::io::Error| format!("{}: {error}", path.display());
    std::fs::create_dir_all(dir).map_err(|error| io(dir, error))?;
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|error| io(&path, error))
    };
    write(PROGRAM_FILE, source)?;
    write(RUNTIME_FILE, &crate::runtime::runtime_for(source))?;
    let compiler = toolchain.compiler.as_deref().unwrap_or("mpif90");
    let args =
        compile_args(Path::new(RUNTIME_FILE), Path::new(PROGRAM_FILE), &toolchain.extra_flags, Path::new("program"));
    let words: Vec<String> =
        std::iter::once(compiler.to_string()).chain(args.iter().map(|it| it.to_string_lossy().into_owned())).collect();
    let line = shlex::try_join(words.iter().map(String::as_str)).map_err(|error| error.to_string())?;
    let script = format!("#!/bin/sh\n# Generated by hpf-ls: builds ./program from the files beside this script.\ncd \"$(dirname \"$0\")\" && {line}\n");
    write(BUILD_SCRIPT, &script)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join(BUILD_SCRIPT);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).map_err(|error| io(&path, error))?;
    }
    Ok(())
}

/// Compiles `source` with the runtime into `executable`; the compiler's
/// messages are returned on failure. Past `timeout` the compiler and its
/// children are killed.
pub fn build(source: &str, executable: &Path, toolchain: &Toolchain, timeout: Option<Duration>) -> Result<(), String> {
    let mut prepared = prepare(source, Some(executable), toolchain, true)?;
    if prepared.runtime_command.is_none() && prepared.cache_entry.is_none() {
        // One command for both files (flags that stop before linking).
        return compile(&mut prepared.command, &prepared.compiler, timeout);
    }
    if prepared.runtime_command.is_none() {
        // A cached runtime the compiler cannot use (damaged, or made by a
        // compiler that changed without showing it) is compiled again.
        if compile(&mut prepared.command, &prepared.compiler, timeout).is_ok() {
            return Ok(());
        }
        prepared = prepare(source, Some(executable), toolchain, false)?;
    }
    let command = prepared.runtime_command.as_mut().expect("a build that compiles its runtime");
    compile(command, &prepared.compiler, timeout)?;
    prepared.keep_runtime();
    compile(&mut prepared.command, &prepared.compiler, timeout)
}

/// Runs one compiler command of a build, its messages returned on failure.
fn compile(command: &mut Command, compiler: &Path, timeout: Option<Duration>) -> Result<(), String> {
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = command.spawn().map_err(|error| format!("cannot start {}: {error}", compiler.display()))?;
    let _running = Running::new(child.id(), None);
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
    let status = wait_with_timeout(&mut child, timeout, None, || false);
    let (stdout, stderr) = (stdout.join().unwrap_or_default(), stderr.join().unwrap_or_default());
    match status {
        Ok(status) if status.success() => Ok(()),
        Ok(_) => Err(format!(
            "{} failed on the generated program:\n{}{}",
            compiler.display(),
            String::from_utf8_lossy(&stdout),
            String::from_utf8_lossy(&stderr)
        )),
        Err(message) => Err(format!("{}: {message}", compiler.display())),
    }
}

/// Registers a child [`clean_up_for_exit`] stops, while it lives.
struct Running(u32);

impl Running {
    fn new(pid: u32, grace: Option<Duration>) -> Running {
        running_children().push((pid, grace));
        Running(pid)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        running_children().retain(|it| it.0 != self.0);
    }
}

/// How long srun gets after SIGTERM to cancel its job step before it is
/// killed. Killed at once it cannot: the job stays on the cluster, its
/// tasks running (seen on Slurm 22.05); on SIGTERM it cancels the step
/// and exits within a second.
pub const SRUN_GRACE: Duration = Duration::from_secs(10);

/// The grace the launcher `command` gets before it is killed: srun's.
pub fn grace_period(command: &Command) -> Option<Duration> {
    is_srun(Path::new(command.get_program())).then_some(SRUN_GRACE)
}

fn is_srun(program: &Path) -> bool {
    program.file_name().and_then(|it| it.to_str()).is_some_and(|it| it.starts_with("srun"))
}

/// Stops `root`, a child not reaped yet, with every process it started:
/// with a grace, `root` first gets SIGTERM and that long to end by itself.
fn stop(root: u32, grace: Option<Duration>) {
    #[cfg(unix)]
    if let Some(grace) = grace {
        // SAFETY: `kill` has no memory effects; `root` is not reaped, so its pid is still its own.
        unsafe {
            sys::kill(root as i32, sys::SIGTERM);
        }
        let deadline = Instant::now() + grace;
        while !has_ended(root) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    kill_descendants(root);
}

/// Whether `pid` has ended (is a zombie or gone).
fn has_ended(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| process_state(&stat).map(|state| state == "Z" || state == "X"))
        .unwrap_or(true)
}

/// The state field of a `/proc/PID/stat` line: `pid (comm) state ...`,
/// where comm may hold blanks and parentheses.
fn process_state(stat: &str) -> Option<&str> {
    stat.rfind(')').and_then(|it| stat[it + 1..].split_whitespace().next())
}

/// Waits for `child`; past `timeout` stops it with its descendants
/// ([`stop`], after `grace`) and says so. When `ended` holds, stops them
/// too, after a moment for what the others are about to report, and
/// returns the status they end with.
fn wait_with_timeout(
    child: &mut std::process::Child,
    timeout: Option<Duration>,
    grace: Option<Duration>,
    ended: impl Fn() -> bool,
) -> Result<ExitStatus, String> {
    let deadline = timeout.map(|it| Instant::now() + it);
    let mut ending: Option<Instant> = None;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) if ending.is_some_and(|it| Instant::now() >= it) => {
                stop(child.id(), grace);
                let _ = child.kill();
                return child.wait().map_err(|error| error.to_string());
            }
            Ok(None) if ending.is_none() && ended() => ending = Some(Instant::now() + Duration::from_millis(300)),
            Ok(None) if deadline.is_some_and(|it| Instant::now() >= it) => {
                let timeout = timeout.unwrap_or_default();
                stop(child.id(), grace);
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("timed out after {} s; its processes were killed", timeout.as_secs_f64()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(error) => return Err(error.to_string()),
        }
    }
}

/// The kinds of launcher, which take their options differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LauncherKind {
    /// Slurm's `srun`: the tasks come from the allocation, the MPI library
    /// connects through a PMI plugin.
    Srun,
    /// Open MPI's `mpirun`/`mpiexec`.
    OpenMpi,
    /// Another `mpirun`/`mpiexec` (MPICH's Hydra, Intel MPI): `-np`, `-f HOSTFILE`.
    Other,
}

/// What the launcher's argv depends on besides the user's options.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaunchEnvironment {
    /// `SLURM_MPI_TYPE`: the user's choice of PMI plugin for srun.
    pub slurm_mpi_type: Option<String>,
    /// The CPUs of the Slurm job (allocation) hpf-ls runs in
    /// (`SLURM_JOB_CPUS_PER_NODE`, summed over its nodes): srun overcommits
    /// past them. `None` outside a job, where srun makes an allocation of
    /// the size asked for, so the CPUs of the machine hpf-ls runs on (a
    /// login node) say nothing.
    pub job_cpus: Option<u32>,
}

impl LaunchEnvironment {
    /// Read from this process' environment.
    pub fn current() -> LaunchEnvironment {
        LaunchEnvironment::from_variables(|name| std::env::var(name).ok())
    }

    /// Read from environment variables given by `var`.
    pub fn from_variables(var: impl Fn(&str) -> Option<String>) -> LaunchEnvironment {
        let var = |name: &str| var(name).filter(|it| !it.is_empty());
        LaunchEnvironment {
            slurm_mpi_type: var("SLURM_MPI_TYPE"),
            job_cpus: var("SLURM_JOB_CPUS_PER_NODE").and_then(|it| slurm_cpu_count(&it)),
        }
    }
}

/// The total of Slurm's CPU list `72(x2),36`: 72 on each of two nodes, 36 on one.
pub fn slurm_cpu_count(text: &str) -> Option<u32> {
    let mut total = 0u32;
    for part in text.split(',') {
        let (count, nodes) = match part.split_once("(x") {
            Some((count, nodes)) => (count, nodes.strip_suffix(')')?),
            None => (part, "1"),
        };
        total = total.checked_add(count.trim().parse::<u32>().ok()?.checked_mul(nodes.parse().ok()?)?)?;
    }
    Some(total)
}

/// Whether `words` (the launcher's own options) set `option` (`--mpi`), as
/// `--mpi=pmix` or `--mpi pmix`.
fn has_option(words: &[String], option: &str) -> bool {
    words.iter().any(|it| it == option || it.strip_prefix(option).is_some_and(|rest| rest.starts_with('=')))
}

/// The launcher's argv after its program name (`words[0]`): the user's own
/// launcher options (`words[1..]`), the process count, the options the
/// kind needs, then the program and its arguments.
pub fn launcher_argv(
    kind: LauncherKind,
    words: &[String],
    processes: u32,
    hostfile: Option<&Path>,
    environment: &LaunchEnvironment,
    executable: &Path,
    args: &[String],
) -> Result<Vec<std::ffi::OsString>, String> {
    let mut argv: Vec<std::ffi::OsString> = words.iter().skip(1).map(Into::into).collect();
    match kind {
        LauncherKind::Srun => {
            if hostfile.is_some() {
                return Err("--hostfile means nothing to srun: Slurm places the tasks on the allocation's nodes \
                            (give srun's own --nodelist or --nodes in --launcher)"
                    .to_string());
            }
            argv.push(format!("--ntasks={processes}").into());
            // Debian's and most distributions' Open MPI talk to srun only
            // through PMIx; Slurm's default plugin (`none`/`pmi2`) makes
            // every rank fail in MPI_Init.
            if !has_option(words, "--mpi") && environment.slurm_mpi_type.is_none() {
                argv.push("--mpi=pmix".into());
            }
            // As --oversubscribe does for mpirun: more tasks than the job's
            // CPUs still run. Never outside a job: there srun would then
            // allocate one CPU per node for all the tasks.
            if environment.job_cpus.is_some_and(|cpus| processes > cpus)
                && !has_option(words, "--overcommit")
                && !has_option(words, "-O")
            {
                argv.push("--overcommit".into());
            }
        }
        LauncherKind::OpenMpi | LauncherKind::Other => {
            argv.push("-np".into());
            argv.push(processes.to_string().into());
            if kind == LauncherKind::OpenMpi {
                // More ranks than cores must work.
                argv.push("--oversubscribe".into());
            }
            if let Some(hostfile) = hostfile {
                argv.push(if kind == LauncherKind::OpenMpi { "--hostfile" } else { "-f" }.into());
                argv.push(absolute(hostfile)?.into_os_string());
            }
        }
    }
    argv.push(executable.as_os_str().to_owned());
    argv.extend(args.iter().map(Into::into));
    Ok(argv)
}

/// `path` from the current directory (the launcher may run elsewhere).
fn absolute(path: &Path) -> Result<PathBuf, String> {
    std::path::absolute(path).map_err(|error| format!("{}: {error}", path.display()))
}

/// The MPI of Debian's compiler wrappers (`mpif90.mpich`, `mpif90.openmpi`,
/// where `mpif90` leads through the alternatives), which names its launcher.
fn mpi_flavour(compiler: &Path) -> Option<&'static str> {
    let name = compiler.file_name()?.to_str()?;
    ["mpich", "openmpi"].into_iter().find(|it| name.rsplit_once('.').is_some_and(|(_, suffix)| suffix == *it))
}

/// The launcher command for `processes` ranks of `executable`.
pub fn launch_command(
    executable: &Path,
    processes: u32,
    toolchain: &Toolchain,
    args: &[String],
) -> Result<Command, String> {
    let words = match toolchain.launcher.as_deref() {
        Some(line) => {
            let words = shlex::split(line).filter(|it| !it.is_empty());
            Some(words.ok_or_else(|| format!("cannot split the launcher `{line}` into words (unbalanced quotes?)"))?)
        }
        None => None,
    };
    // The launcher of the compiler's MPI: `mpif90.mpich` builds programs
    // that only MPICH's `mpirun.mpich` starts as one job.
    let flavour = find(toolchain.compiler.as_deref(), COMPILERS, "compiler")
        .ok()
        .and_then(|it| std::fs::canonicalize(it).ok())
        .and_then(|it| mpi_flavour(&it));
    let paired: Vec<String> = flavour.iter().map(|it| format!("mpirun.{it}")).collect();
    let candidates: Vec<&str> = paired.iter().map(String::as_str).chain(LAUNCHERS.iter().copied()).collect();
    let launcher = find(words.as_ref().map(|it| it[0].as_str()), &candidates, "launcher")?;
    let words = words.unwrap_or_else(|| vec![launcher.to_string_lossy().into_owned()]);
    let name = launcher.file_name().and_then(|it| it.to_str()).unwrap_or("");
    let kind = if is_srun(&launcher) {
        LauncherKind::Srun
    } else if name.contains("openmpi")
        || Command::new(&launcher)
            .arg("--version")
            .output()
            .is_ok_and(|it| String::from_utf8_lossy(&it.stdout).contains("Open MPI"))
    {
        LauncherKind::OpenMpi
    } else {
        LauncherKind::Other
    };
    let argv = launcher_argv(
        kind,
        &words,
        processes,
        toolchain.hostfile.as_deref(),
        &LaunchEnvironment::current(),
        executable,
        args,
    )?;
    let mut command = Command::new(&launcher);
    command.args(argv);
    if kind == LauncherKind::OpenMpi {
        // As root Open MPI wants consent; more ranks than cores must work.
        command.env("OMPI_ALLOW_RUN_AS_ROOT", "1").env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        command.env("OMPI_MCA_rmaps_base_oversubscribe", "1");
    }
    Ok(command)
}

/// The compiler flags of `hpf-ls run --check`: every run-time check but the
/// warning about array temporaries (which are no error, and frequent where
/// sections are passed), and line numbers in messages and backtraces.
pub const CHECK_FLAGS: &[&str] = &["-g", "-O0", "-fcheck=all,no-array-temps", "-fbacktrace"];

/// How a run ended.
#[derive(Debug)]
pub enum RunEnd {
    /// Every process ended; the launcher's status.
    Exited(ExitStatus),
    /// Under a relay (`--check`), processes died: the run was ended at once.
    Died(Vec<Death>),
}

/// A process that died under the relay of `hpf-ls run --check`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Death {
    pub rank: u32,
    /// Its exit status, or the signal that killed it.
    pub status: DeathStatus,
    /// What it wrote on stderr from the first line of a run-time error on
    /// (gfortran's `At line N of file F`, `Fortran runtime error: ...`, the backtrace).
    pub report: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeathStatus {
    Exit(i32),
    Signal(i32),
}

/// The file a relay writes into the build directory when its process dies.
const DEATH_FILE: &str = "died.";

/// For the relay: records in `dir` that the process of `rank` died. The file
/// appears whole (written aside, then renamed), since [`run`] polls for it.
pub fn record_death(dir: &Path, death: &Death) -> std::io::Result<()> {
    let status = match death.status {
        DeathStatus::Exit(code) => format!("exit {code}"),
        DeathStatus::Signal(signal) => format!("signal {signal}"),
    };
    let aside = dir.join(format!(".{DEATH_FILE}{}", death.rank));
    std::fs::write(&aside, format!("{status}\n{}", death.report))?;
    std::fs::rename(aside, dir.join(format!("{DEATH_FILE}{}", death.rank)))
}

/// The deaths the relays recorded in `dir`, by rank.
fn deaths(dir: &Path) -> Vec<Death> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut found: Vec<Death> = entries
        .flatten()
        .filter_map(|entry| {
            let rank = entry.file_name().to_str()?.strip_prefix(DEATH_FILE)?.parse().ok()?;
            let text = std::fs::read_to_string(entry.path()).ok()?;
            let (status, report) = text.split_once('\n').unwrap_or((&text, ""));
            let status = match status.split_once(' ')? {
                ("exit", code) => DeathStatus::Exit(code.parse().ok()?),
                ("signal", signal) => DeathStatus::Signal(signal.parse().ok()?),
                _ => return None,
            };
            Some(Death { rank, status, report: report.to_string() })
        })
        .collect();
    found.sort_by_key(|it| it.rank);
    found
}

/// Builds in a private directory, then runs in the current directory, as
/// `mpirun ./a.out` would (the files the program writes stay there); the
/// program's stdout and stderr pass through. Past `timeout` (each for the
/// build and the run) every process is killed.
///
/// With a `relay` (the argv of `hpf-ls`'s check relay), each rank runs as
/// `RELAY... BUILD_DIR PROGRAM ARGS...`: the relay records the death of its
/// process ([`record_death`]), and the first death ends the whole run at
/// once, whatever the launcher would do (Open MPI aborts the job, other
/// launchers may wait for the other ranks, which may wait for the dead one).
pub fn run(
    source: &str,
    processes: u32,
    toolchain: &Toolchain,
    args: &[String],
    stats: bool,
    timeout: Option<Duration>,
    relay: Option<&[std::ffi::OsString]>,
) -> Result<RunEnd, String> {
    let dir = BuildDir::new().map_err(|error| error.to_string())?;
    let executable = dir.path.join("program");
    // The launcher first: a launcher or options it refuses cost no build.
    let mut command = match relay {
        Some(relay) => {
            let (first, rest) = relay.split_first().ok_or("an empty relay command")?;
            let mut relayed: Vec<String> = rest
                .iter()
                .map(|it| it.as_os_str())
                .chain([dir.path.as_os_str(), executable.as_os_str()])
                .map(|it| it.to_string_lossy().into_owned())
                .collect();
            relayed.extend(args.iter().cloned());
            launch_command(Path::new(first), processes, toolchain, &relayed)?
        }
        None => launch_command(&executable, processes, toolchain, args)?,
    };
    build(source, &executable, toolchain, timeout)?;
    if stats {
        command.env("HPF_LS_STATS", "1");
    }
    // The program's standard input is the user's (the launcher hands it to
    // rank 0, which does every READ).
    command.stdin(Stdio::inherit());
    let grace = grace_period(&command);
    let mut child = command.spawn().map_err(|error| format!("cannot start the launcher: {error}"))?;
    let _running = Running::new(child.id(), grace);
    if relay.is_none() {
        return wait_with_timeout(&mut child, timeout, grace, || false)
            .map(RunEnd::Exited)
            .map_err(|message| format!("the program {message}"));
    }
    let died = || {
        dir.path.read_dir().is_ok_and(|mut it| {
            it.any(|entry| entry.is_ok_and(|it| it.file_name().to_string_lossy().starts_with(DEATH_FILE)))
        })
    };
    let status =
        wait_with_timeout(&mut child, timeout, grace, died).map_err(|message| format!("the program {message}"))?;
    if status.success() {
        return Ok(RunEnd::Exited(status));
    }
    // The launcher may end just before a relay has written its record.
    let deadline = Instant::now() + Duration::from_millis(500);
    while !died() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let found = deaths(&dir.path);
    Ok(if found.is_empty() { RunEnd::Exited(status) } else { RunEnd::Died(found) })
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
    pub const SIGTERM: i32 = 15;
}

/// `(pid, parent, session)` of every live (not zombie) process.
fn processes() -> Vec<(u32, u32, u32)> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut res = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|it| it.parse::<u32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // `pid (comm) state ppid pgrp session ...` (see `process_state`).
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
    grace: Option<Duration>,
}

impl SessionGuard {
    pub fn new(leader: Option<u32>) -> SessionGuard {
        SessionGuard { leader, grace: None }
    }

    /// The leader gets SIGTERM and `grace` to end by itself before the
    /// session is killed ([`grace_period`]: srun cancels its job step).
    pub fn with_grace(mut self, grace: Option<Duration>) -> SessionGuard {
        self.grace = grace;
        self
    }

    /// Kills now what is left of the session; with a grace, a thread of
    /// its own does so once the leader has ended or the grace is over, so
    /// that the caller (an async task) never waits.
    pub fn kill(&mut self) {
        let Some(leader) = self.leader.take() else { return };
        match self.grace {
            #[cfg(unix)]
            Some(grace) if !has_ended(leader) => {
                // SAFETY: `kill` has no memory effects; the leader is not
                // reaped (its `Child` outlives this guard), so the pid is its own.
                unsafe {
                    sys::kill(leader as i32, sys::SIGTERM);
                }
                std::thread::spawn(move || {
                    let deadline = Instant::now() + grace;
                    while !has_ended(leader) && Instant::now() < deadline {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    kill_session(leader);
                });
            }
            _ => kill_session(leader),
        }
    }
}

impl Drop for SessionGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        shlex::split(line).unwrap()
    }

    fn argv(
        kind: LauncherKind,
        launcher: &str,
        processes: u32,
        hostfile: Option<&Path>,
        environment: &LaunchEnvironment,
    ) -> Result<Vec<String>, String> {
        let argv = launcher_argv(
            kind,
            &words(launcher),
            processes,
            hostfile,
            environment,
            Path::new("/build/program"),
            &["in.dat".to_string()],
        )?;
        Ok(argv.into_iter().map(|it| it.into_string().unwrap()).collect())
    }

    fn in_job_of(cpus: u32) -> LaunchEnvironment {
        LaunchEnvironment { slurm_mpi_type: None, job_cpus: Some(cpus) }
    }

    #[test]
    fn srun_asks_for_pmix_unless_told_otherwise() {
        assert_eq!(
            argv(LauncherKind::Srun, "srun", 4, None, &in_job_of(8)).unwrap(),
            ["--ntasks=4", "--mpi=pmix", "/build/program", "in.dat"]
        );
        // The user's own plugin, as an option of the launcher or from the environment.
        assert_eq!(
            argv(LauncherKind::Srun, "srun --mpi=pmi2 -p debug", 2, None, &in_job_of(8)).unwrap(),
            ["--mpi=pmi2", "-p", "debug", "--ntasks=2", "/build/program", "in.dat"]
        );
        assert_eq!(
            argv(LauncherKind::Srun, "srun --mpi pmix_v3", 2, None, &in_job_of(8)).unwrap()[..3],
            ["--mpi", "pmix_v3", "--ntasks=2"]
        );
        let chosen = LaunchEnvironment { slurm_mpi_type: Some("pmi2".to_string()), job_cpus: Some(8) };
        assert_eq!(
            argv(LauncherKind::Srun, "srun", 2, None, &chosen).unwrap(),
            ["--ntasks=2", "/build/program", "in.dat"]
        );
    }

    #[test]
    fn srun_overcommits_past_the_cpus_and_refuses_a_hostfile() {
        let args = argv(LauncherKind::Srun, "srun", 5, None, &in_job_of(4)).unwrap();
        assert!(args.contains(&"--overcommit".to_string()), "{args:?}");
        let args = argv(LauncherKind::Srun, "srun", 4, None, &in_job_of(4)).unwrap();
        assert!(!args.contains(&"--overcommit".to_string()), "{args:?}");
        let error = argv(LauncherKind::Srun, "srun", 2, Some(Path::new("hosts")), &in_job_of(4)).unwrap_err();
        assert!(error.contains("--hostfile means nothing to srun"), "{error}");
    }

    #[test]
    fn srun_outside_a_job_lets_slurm_size_the_allocation() {
        // Outside a job `--overcommit` would make the allocation one CPU
        // for all the tasks (seen on a real cluster: 4 tasks, NumCPUs=1).
        let outside = LaunchEnvironment::from_variables(|_| None);
        assert_eq!(outside, LaunchEnvironment { slurm_mpi_type: None, job_cpus: None });
        assert_eq!(
            argv(LauncherKind::Srun, "srun", 64, None, &outside).unwrap(),
            ["--ntasks=64", "--mpi=pmix", "/build/program", "in.dat"]
        );
        let inside =
            LaunchEnvironment::from_variables(|name| (name == "SLURM_JOB_CPUS_PER_NODE").then(|| "2(x2)".to_string()));
        assert_eq!(inside.job_cpus, Some(4));
        let args = argv(LauncherKind::Srun, "srun", 5, None, &inside).unwrap();
        assert!(args.contains(&"--overcommit".to_string()), "{args:?}");
        // The user's own overcommit, short or long, is not repeated.
        let args = argv(LauncherKind::Srun, "srun -O", 5, None, &inside).unwrap();
        assert_eq!(args.iter().filter(|it| *it == "-O" || *it == "--overcommit").count(), 1, "{args:?}");
    }

    #[test]
    fn mpirun_oversubscribes_and_gets_an_absolute_hostfile() {
        let args = argv(LauncherKind::OpenMpi, "mpirun --bind-to none", 3, Some(Path::new("hosts")), &in_job_of(1));
        let expected_hostfile = std::env::current_dir().unwrap().join("hosts").to_string_lossy().into_owned();
        assert_eq!(
            args.unwrap(),
            [
                "--bind-to",
                "none",
                "-np",
                "3",
                "--oversubscribe",
                "--hostfile",
                expected_hostfile.as_str(),
                "/build/program",
                "in.dat"
            ]
        );
        // MPICH's Hydra (and Intel MPI) know neither --oversubscribe nor --hostfile.
        let args = argv(LauncherKind::Other, "mpiexec.hydra", 2, Some(Path::new("/etc/hosts.mpi")), &in_job_of(1));
        assert_eq!(args.unwrap(), ["-np", "2", "-f", "/etc/hosts.mpi", "/build/program", "in.dat"]);
    }

    #[cfg(unix)]
    #[test]
    fn srun_gets_sigterm_and_time_to_cancel_its_step_before_it_is_killed() {
        assert_eq!(grace_period(&Command::new("/usr/bin/srun")), Some(SRUN_GRACE));
        assert_eq!(grace_period(&Command::new("mpirun")), None);
        // A launcher that cleans up on SIGTERM, as srun cancels its step.
        let dir = tempfile::tempdir().unwrap();
        let cleaned = dir.path().join("cleaned");
        let launcher = |cleaned: &Path| {
            let script = format!("trap 'touch {}; exit 0' TERM; while :; do sleep 0.05; done", cleaned.display());
            let mut child = Command::new("sh").arg("-c").arg(script).spawn().unwrap();
            std::thread::sleep(Duration::from_millis(300));
            let started = Instant::now();
            let ended = wait_with_timeout(
                &mut child,
                Some(Duration::from_millis(1)),
                grace_period(&Command::new("srun")),
                || false,
            );
            (ended, started.elapsed())
        };
        let (ended, took) = launcher(&cleaned);
        assert!(ended.unwrap_err().contains("timed out"));
        assert!(cleaned.exists(), "the launcher got no chance to clean up");
        assert!(took < SRUN_GRACE, "it waited for the whole grace: {took:?}");
        // Without a grace (mpirun, the compiler) it is killed at once.
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(format!("trap 'touch {}' TERM; while :; do sleep 0.05; done", dir.path().join("never").display()))
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(300));
        assert!(wait_with_timeout(&mut child, Some(Duration::from_millis(1)), None, || false).is_err());
        assert!(!dir.path().join("never").exists());
    }

    #[cfg(unix)]
    #[test]
    fn a_session_with_a_grace_gets_sigterm_before_it_is_killed() {
        let dir = tempfile::tempdir().unwrap();
        let cleaned = dir.path().join("cleaned");
        let mut command = Command::new("sh");
        command.arg("-c").arg(format!("trap 'touch {}; exit 0' TERM; while :; do sleep 0.05; done", cleaned.display()));
        new_session(&mut command);
        let mut child = command.spawn().unwrap();
        std::thread::sleep(Duration::from_millis(300));
        let started = Instant::now();
        SessionGuard::new(Some(child.id())).with_grace(Some(SRUN_GRACE)).kill();
        assert!(started.elapsed() < Duration::from_millis(500), "kill() waited for the grace");
        child.wait().unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while !session_members(child.id()).is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(cleaned.exists(), "the leader got no chance to clean up");
        assert!(session_members(child.id()).is_empty(), "the session outlived the grace");
    }

    #[test]
    fn the_compilers_mpi_names_its_launcher() {
        assert_eq!(mpi_flavour(Path::new("/usr/bin/mpif90.mpich")), Some("mpich"));
        assert_eq!(mpi_flavour(Path::new("/usr/bin/mpif90.openmpi")), Some("openmpi"));
        assert_eq!(mpi_flavour(Path::new("/opt/intel/bin/mpiifort")), None);
    }

    #[test]
    fn slurm_cpu_lists_are_summed() {
        assert_eq!(slurm_cpu_count("4"), Some(4));
        assert_eq!(slurm_cpu_count("72(x2),36"), Some(180));
        assert_eq!(slurm_cpu_count("garbage"), None);
    }

    #[test]
    fn the_emitted_build_script_names_the_files_it_writes() {
        let dir = std::env::temp_dir().join(format!("hpf-ls-emit-{}", std::process::id()));
        let toolchain = Toolchain { extra_flags: words("-fcheck=bounds -I 'my inc'"), ..Toolchain::default() };
        emit_sources(&dir, "program p\nend program p\n", &toolchain).unwrap();
        let script = std::fs::read_to_string(dir.join(BUILD_SCRIPT)).unwrap();
        let runtime = std::fs::read_to_string(dir.join(RUNTIME_FILE)).unwrap();
        let program = std::fs::read_to_string(dir.join(PROGRAM_FILE)).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let command = script.lines().last().unwrap();
        assert!(
            command.ends_with(
                "mpif90 -O2 -ffree-line-length-none hpf_runtime.f90 program.f90 '-fcheck=bounds' -I 'my inc' -o program"
            ),
            "{script}"
        );
        assert!(runtime.contains("module hpf_runtime"));
        assert_eq!(program, "program p\nend program p\n");
    }
}
