//! Compiling and running generated programs: finds the MPI compiler and
//! launcher, builds in a private temporary directory, runs with argv
//! vectors (never a shell string), and passes the program's output and
//! exit status through.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

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

/// A private build directory, removed when dropped.
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
            if std::fs::create_dir(&path).is_ok() {
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
    std::fs::write(&runtime, crate::runtime::runtime_source()).map_err(|error| error.to_string())?;
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
/// messages are returned on failure.
pub fn build(source: &str, executable: &Path, toolchain: &Toolchain) -> Result<(), String> {
    let mut prepared = prepare_build(source, Some(executable), toolchain)?;
    let output =
        prepared.command.output().map_err(|error| format!("cannot start {}: {error}", prepared.compiler.display()))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{} failed on the generated program:\n{}{}",
            prepared.compiler.display(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
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

/// Builds and runs; the program's stdout and stderr pass through.
pub fn run(
    source: &str,
    processes: u32,
    toolchain: &Toolchain,
    args: &[String],
    stats: bool,
) -> Result<ExitStatus, String> {
    let dir = BuildDir::new().map_err(|error| error.to_string())?;
    let executable = dir.path.join("program");
    build(source, &executable, toolchain)?;
    let mut command = launch_command(&executable, processes, toolchain, args)?;
    if stats {
        command.env("HPF_LS_STATS", "1");
    }
    command.current_dir(&dir.path).stdin(Stdio::null());
    command.status().map_err(|error| format!("cannot start the launcher: {error}"))
}
