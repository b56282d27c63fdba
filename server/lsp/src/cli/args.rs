//! The command line's one definition (clap derive): every subcommand, flag
//! and value type. Help, usage errors, shell completions and the man page
//! are all generated from it, so they cannot disagree with what is parsed.
//!
//! Each subcommand turns its arguments into the options it consumes
//! (`InputOptions` for the files and their settings) and runs.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use syntax::SourceForm;

use super::InputOptions;
use crate::config::SeverityOverride;

const AFTER_HELP: &str = "\
With no command (or `serve`), hpf-ls is the language server, speaking LSP over stdin/stdout:
that is how editors start it. `hpf-ls help COMMAND` or `hpf-ls COMMAND --help` describes a command.
Exit status: 0 success, 1 errors found (diagnostics, a failed build or run), 2 usage or I/O error.";

#[derive(Debug, Parser)]
#[command(
    name = "hpf-ls",
    version,
    about = "Language server and compiler driver for High Performance Fortran",
    after_help = AFTER_HELP
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the language server over stdin/stdout (what editors start; also the default)
    Serve {
        /// Accepted for editors that pass it: stdio is the only transport
        #[arg(long)]
        stdio: bool,
    },
    /// Show what hpf-ls does on the seed's worked example (bundled, no files needed)
    Demo,
    /// Report syntax and mapping diagnostics (exit 1 when an error is found)
    Check(CheckArgs),
    /// Per loop: home, access ranges, declared and optimal triples, transfers
    Analyze(AnalyzeArgs),
    /// Choose the ALIGN directives that minimise all transfers, as a diff or in place
    Optimize(OptimizeArgs),
    /// Picture of one loop: ownership, placements, messages (text or SVG)
    Explain(ExplainArgs),
    /// Translate to SPMD Fortran + MPI and compile
    Build(BuildArgs),
    /// Build, then run on N processes with mpirun or srun, in the current directory
    Run(RunArgs),
    /// Print the mapping model: alignments, triples, distributions
    Model(ModelArgs),
    /// Print a shell completion script (e.g. `hpf-ls completions bash > ~/.local/share/bash-completion/completions/hpf-ls`)
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Internal: runs one rank's program for `run --check` (started by the launcher)
    #[command(hide = true)]
    CheckRelay {
        /// The build directory, where a death is recorded
        dir: PathBuf,
        /// The program, then its arguments
        #[arg(required = true, num_args = 1.., trailing_var_arg = true, allow_hyphen_values = true)]
        command: Vec<std::ffi::OsString>,
    },
    /// Print the man page (roff) on stdout (`hpf-ls man > hpf-ls.1`), or write one per command to DIR
    Man {
        /// Write hpf-ls.1 and hpf-ls-COMMAND.1 for every command into this directory
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

/// How the files are read and analysed; shared by every command that reads Fortran.
#[derive(Clone, Debug, Default, Args)]
pub struct SourceArgs {
    /// Source form, overriding the file extension and hpf-ls.toml
    #[arg(long, value_name = "FORM", value_parser = parse_form)]
    pub form: Option<SourceForm>,
    /// Value of NUMBER_OF_PROCESSORS() in the analysis (and size of PROCESSORS without ONTO)
    #[arg(short = 'p', long, value_name = "N", value_parser = clap::value_parser!(i64).range(1..))]
    pub processors: Option<i64>,
    /// Severity of one diagnostic code: error, warning, info, hint or off (repeatable)
    #[arg(long, value_name = "CODE=LEVEL", value_parser = parse_severity_setting)]
    pub severity: Vec<SeverityOverride>,
    /// Where INCLUDE and #include look after the including file's directory (repeatable)
    #[arg(short = 'I', value_name = "DIR")]
    pub include_dirs: Vec<PathBuf>,
    /// A macro of the C preprocessor (repeatable)
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    pub defines: Vec<String>,
    /// Run the C preprocessor on every file, whatever its extension (.F, .F90, .FPP always are)
    #[arg(long)]
    pub cpp: bool,
}

impl SourceArgs {
    /// The options the subcommands consume, for these `paths`.
    pub fn input_options(&self, paths: Vec<PathBuf>) -> InputOptions {
        InputOptions {
            form: self.form,
            processors: self.processors,
            severities: self.severity.clone(),
            paths,
            include_dirs: self.include_dirs.clone(),
            defines: self.defines.clone(),
            cpp: self.cpp,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
}

#[derive(Debug, Args)]
#[command(after_help = "Exit status: 0 no errors, 1 errors found, 2 usage or I/O error.")]
pub struct CheckArgs {
    /// Output format (json: docs/diagnostics.md)
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    #[command(flatten)]
    pub source: SourceArgs,
    /// Files or directories (walked recursively for Fortran files)
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// JSON output, schema 1 of docs/analyze-json.md (one file)
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub source: SourceArgs,
    /// Files or directories (walked recursively for Fortran files)
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ModelArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Files or directories (walked recursively for Fortran files)
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct OptimizeArgs {
    /// Print only the unified diff of the directives (no cost table)
    #[arg(long, conflicts_with = "write")]
    pub diff: bool,
    /// Rewrite the file in place
    #[arg(long)]
    pub write: bool,
    /// Also grow templates where that lets arrays align where their loops need them
    #[arg(long)]
    pub grow_templates: bool,
    /// Trip count assumed for loops whose bounds are not known
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub default_trips: Option<u64>,
    #[command(flatten)]
    pub source: SourceArgs,
    /// The program's files (main program, procedures, modules, in any order), or a directory
    /// whose hpf-ls.toml names them in `[program] sources`; directives in included files are
    /// rewritten there
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The loop on (or around) this line, 1-based
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub line: u64,
    /// Also write the picture as SVG to this file
    #[arg(long, value_name = "OUT.svg")]
    pub svg: Option<PathBuf>,
    /// Add the transfer cost under other distributions
    #[arg(long)]
    pub what_if: bool,
    #[command(flatten)]
    pub source: SourceArgs,
    /// The program's source file (its form from the extension, hpf-ls.toml or --form)
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
}

/// The compiler and how long each step may take; shared by `build` and `run`.
#[derive(Debug, Args)]
pub struct CompileArgs {
    /// The MPI Fortran compiler (default: the first of mpif90, mpifort, ... on PATH)
    #[arg(long, value_name = "COMPILER")]
    pub fc: Option<String>,
    /// Flags for the compiler, split as a shell splits words (e.g. "-O3 -fallow-argument-mismatch")
    #[arg(long, value_name = "FLAGS", allow_hyphen_values = true, value_parser = parse_words)]
    pub fflags: Option<Words>,
    /// Kill the compiler, and then the run, with every process they started, past this many seconds
    #[arg(long, value_name = "SECONDS", value_parser = parse_timeout)]
    pub timeout: Option<Duration>,
    /// Floating-point SUM, PRODUCT, DOT_PRODUCT and `s = s + x(i)` in the sequential order,
    /// bit-identical to the sequential program but serial (default: in parallel, partials
    /// combined in rank order: the same bits run after run on as many processes)
    #[arg(long)]
    pub ordered_reductions: bool,
}

#[derive(Debug, Args)]
#[command(after_help = "\
Arguments after `--` are compiler flags too (kept for compatibility; prefer --fflags).
With --emit-source DIR, DIR receives the generated program, the runtime module and build.sh,
the one-line command that builds them without hpf-ls.")]
pub struct BuildArgs {
    /// The executable to write (default: the file's name without extension, in the current directory)
    #[arg(short = 'o', value_name = "EXE")]
    pub output: Option<PathBuf>,
    /// Also write the generated source: to a file (OUT.f90), or a directory with the runtime and build.sh
    #[arg(long, value_name = "OUT.f90|DIR")]
    pub emit_source: Option<PathBuf>,
    #[command(flatten)]
    pub compile: CompileArgs,
    #[command(flatten)]
    pub source: SourceArgs,
    /// The program's files, in any order (none: the `[program] sources` of ./hpf-ls.toml)
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Compiler flags (as --fflags)
    #[arg(last = true, value_name = "FFLAGS")]
    pub trailing_flags: Vec<String>,
}

#[derive(Debug, Args)]
#[command(after_help = "\
The program runs in the current directory: the files it writes are there afterwards, as with
`mpirun ./a.out`. Only the build goes to a private temporary directory, removed at the end
(also when hpf-ls is interrupted). Arguments after `--` go to the program.
HPF_LS_STATS=1 in the environment has the effect of --stats.")]
pub struct RunArgs {
    /// Number of processes
    #[arg(short = 'n', long = "np", value_name = "N", default_value_t = 4,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub processes: u32,
    /// The launcher with its own options, split into words (e.g. "srun --mpi=pmix"); default: mpirun on PATH
    #[arg(long, value_name = "CMD", allow_hyphen_values = true)]
    pub launcher: Option<String>,
    /// Hosts for mpirun (made absolute; srun takes its nodes from Slurm and refuses it)
    #[arg(long, value_name = "FILE")]
    pub hostfile: Option<PathBuf>,
    /// Print on stderr, per loop, the messages and elements moved against the analysis' prediction
    #[arg(long)]
    pub stats: bool,
    /// Build with run-time checks (-g -fcheck=all): an error on any process (an index out of
    /// bounds, ...) names your file, line and process, and ends the run at once
    #[arg(long)]
    pub check: bool,
    #[command(flatten)]
    pub compile: CompileArgs,
    #[command(flatten)]
    pub source: SourceArgs,
    /// The program's files, in any order (none: the `[program] sources` of ./hpf-ls.toml)
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Arguments of the program
    #[arg(last = true, value_name = "ARGS")]
    pub program_args: Vec<String>,
}

/// Words split from one option value, as a POSIX shell would split them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Words(pub Vec<String>);

fn parse_words(text: &str) -> Result<Words, String> {
    shlex::split(text).map(Words).ok_or_else(|| format!("unbalanced quotes in `{text}`"))
}

fn parse_form(name: &str) -> Result<SourceForm, String> {
    SourceForm::from_name(name).ok_or_else(|| "use free, fixed, fixed72 or fixed132".to_string())
}

fn parse_severity_setting(setting: &str) -> Result<SeverityOverride, String> {
    let (code, severity) =
        setting.split_once('=').ok_or_else(|| format!("takes CODE=LEVEL (e.g. HPF101=off), not `{setting}`"))?;
    crate::config::parse_severity(code, severity)
}

fn parse_timeout(text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .filter(|it| *it > 0.0 && it.is_finite())
        .map(Duration::from_secs_f64)
        .ok_or_else(|| "needs a positive number of seconds".to_string())
}

/// The clap command, for completions, the man page and tests.
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_definition_is_consistent() {
        // clap's own checks: unique names, valid defaults, no conflicting positionals.
        command().debug_assert();
    }

    #[test]
    fn values_are_parsed_by_type_before_the_file() {
        let cli = Cli::try_parse_from(["hpf-ls", "optimize", "--default-trips", "50", "prog.f90"]).unwrap();
        let Some(Command::Optimize(args)) = cli.command else { panic!("not optimize") };
        assert_eq!((args.default_trips, args.files), (Some(50), vec![PathBuf::from("prog.f90")]));
        let error = Cli::try_parse_from(["hpf-ls", "optimize", "--default-trips", "0", "prog.f90"]).unwrap_err();
        assert_eq!(error.kind(), clap::error::ErrorKind::ValueValidation);
    }

    #[test]
    fn compiler_flags_and_program_arguments_are_separate() {
        let cli = Cli::try_parse_from([
            "hpf-ls",
            "run",
            "--fflags",
            "-O3 -fallow-argument-mismatch",
            "--launcher=srun --mpi=pmix",
            "prog.f90",
            "--",
            "-x",
            "input.dat",
        ])
        .unwrap();
        let Some(Command::Run(args)) = cli.command else { panic!("not run") };
        assert_eq!(args.compile.fflags, Some(Words(vec!["-O3".into(), "-fallow-argument-mismatch".into()])));
        assert_eq!(args.launcher.as_deref(), Some("srun --mpi=pmix"));
        assert_eq!(args.program_args, ["-x", "input.dat"]);
    }
}
