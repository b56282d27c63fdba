//! `hpf-ls build` and `hpf-ls run`: the MPI backend from the command line.
//!
//! hpf-ls's own messages go to stderr; the program's output and exit status
//! pass through untouched. Commands are argv vectors (never a shell line);
//! the build happens in a private temporary directory removed afterwards,
//! the run in the current directory. With `--timeout` the compiler and the
//! run are each killed, with every process they started, when they last
//! longer. With `--check` the run-time errors of any process, and a
//! generated program the compiler rejects, are told at the user's lines
//! (`run_check.rs`).

use std::fmt::Write;
use std::path::PathBuf;
use std::time::Duration;

use analysis::ModelConfig;
use backend::driver::{Death, DeathStatus, RunEnd, Toolchain};
use syntax::{Code, LineIndex};

use super::args::{BuildArgs, CompileArgs, RunArgs};
use super::run_check::{explain_compile_failure, explain_deaths, GeneratedPlaces};
use super::{collect_inputs, InputOptions, EXIT_USAGE};

struct Options {
    input: InputOptions,
    toolchain: Toolchain,
    /// For the compiler and for the run, each: past it all their processes are killed.
    timeout: Option<Duration>,
    lowering: backend::LowerOptions,
}

impl Options {
    fn new(input: InputOptions, compile: &CompileArgs, launcher: Option<&str>, hostfile: Option<PathBuf>) -> Options {
        let toolchain = Toolchain {
            compiler: compile.fc.clone(),
            launcher: launcher.map(str::to_string),
            hostfile,
            extra_flags: compile.fflags.clone().map(|it| it.0).unwrap_or_default(),
        };
        Options {
            input,
            toolchain,
            timeout: compile.timeout,
            lowering: backend::LowerOptions { ordered_reductions: compile.ordered_reductions },
        }
    }
}

/// The files named, or else `.`: the program that `[program] sources` of
/// ./hpf-ls.toml names.
fn program_files(files: &[PathBuf]) -> Vec<PathBuf> {
    if files.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        files.to_vec()
    }
}

/// A program lowered: its main file, the generated program, and the user's
/// lines its lines come from (for the compiler's and the run's messages).
struct Lowered {
    path: PathBuf,
    generated: backend::Generated,
    places: GeneratedPlaces,
}

/// Lowers the file; errors are printed like `check` prints diagnostics.
fn lower(options: &Options, err: &mut String) -> Option<Lowered> {
    let inputs = match collect_inputs(&options.input) {
        Ok(inputs) => inputs,
        Err(message) => {
            let _ = writeln!(err, "hpf-ls: {message}");
            return None;
        }
    };
    if inputs.len() != 1 {
        let _ = writeln!(
            err,
            "hpf-ls: give the files of one program (found {} programs; a directory needs `[program] sources` in hpf-ls.toml)",
            inputs.len()
        );
        return None;
    }
    let input = inputs.into_iter().next()?;
    let loaded = match crate::sources::load_for_backend(&input) {
        Ok(loaded) => loaded,
        Err(message) => {
            let _ = writeln!(err, "hpf-ls: {message}");
            return None;
        }
    };
    let analysis =
        crate::modules::analyze_input(&input, &loaded, ModelConfig { number_of_processors: input.processors });
    let map = &loaded.expanded.map;
    let problems: Vec<&syntax::Diagnostic> = analysis
        .diagnostics
        .iter()
        .filter(|it| matches!(it.code, Code::IncludeNotFound | Code::Preprocessor))
        .collect();
    if !problems.is_empty() {
        // The program the compiler would see is not the one written.
        let mut shown = String::new();
        super::check::render_mapped(map, &problems.into_iter().cloned().collect::<Vec<_>>(), &[], &mut shown);
        err.push_str(&shown);
        return None;
    }
    let mut indexes: Vec<Option<LineIndex>> = vec![None; map.files().len()];
    let mut place = |range: syntax::TextRange| {
        let at = map.locate_range(range);
        let file = map.file(at.file);
        let index = indexes[at.file].get_or_insert_with(|| LineIndex::new(&file.text));
        let (line, column) = index.line_col(&file.text, at.range.start);
        format!("{}:{}:{}", file.name, line + 1, column + 1)
    };
    match backend::lower_with(&analysis, &loaded.expanded.text, &options.lowering) {
        Ok(generated) => {
            for note in &generated.notes {
                let _ = writeln!(err, "{}: note: {}", place(note.range), note.message);
            }
            let places = GeneratedPlaces::new(&generated, &analysis, map);
            Some(Lowered { path: input.path, generated, places })
        }
        Err(errors) => {
            for error in errors {
                let _ = writeln!(err, "{}: error: {}", place(error.range), error.message);
            }
            None
        }
    }
}

pub fn run_build(args: &BuildArgs, err: &mut String) -> i32 {
    let mut options = Options::new(args.source.input_options(program_files(&args.files)), &args.compile, None, None);
    options.toolchain.extra_flags.extend(args.trailing_flags.iter().cloned());
    let Some(Lowered { path, generated, places }) = lower(&options, err) else { return 1 };
    if let Some(target) = &args.emit_source {
        // A directory (existing, or named with a trailing `/`, or without an
        // extension) gets the whole build; a file name gets the program alone.
        let as_dir =
            target.is_dir() || target.as_os_str().to_string_lossy().ends_with('/') || target.extension().is_none();
        let written = if as_dir {
            backend::driver::emit_sources(target, &generated.source, &options.toolchain)
        } else {
            std::fs::write(target, &generated.source).map_err(|error| format!("{}: {error}", target.display()))
        };
        if let Err(message) = written {
            let _ = writeln!(err, "hpf-ls: {message}");
            return EXIT_USAGE;
        }
    }
    let executable = args
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from(path.file_stem().map_or("a.out".into(), |it| it.to_os_string())));
    let executable = if executable.is_relative() {
        std::env::current_dir().unwrap_or_default().join(executable)
    } else {
        executable
    };
    match backend::driver::build(&generated.source, &executable, &options.toolchain, options.timeout) {
        Ok(()) => {
            let _ = writeln!(err, "hpf-ls: built {}", executable.display());
            0
        }
        Err(message) => {
            report_build_failure(&message, &places, err);
            1
        }
    }
}

/// A compiler that rejects the generated program is an internal error
/// (`run_check::explain_compile_failure`), with the compiler's own output
/// after it; anything else (a missing compiler, a timeout) as it is.
fn report_build_failure(message: &str, places: &GeneratedPlaces, err: &mut String) {
    match explain_compile_failure(message, places) {
        Some(explained) => {
            err.push_str(&explained);
            let _ = writeln!(err, "hpf-ls: the compiler's output:\n{message}");
        }
        None => {
            let _ = writeln!(err, "hpf-ls: {message}");
        }
    }
}

pub fn run_run(args: &RunArgs, err: &mut String) -> i32 {
    let mut input = args.source.input_options(program_files(&args.files));
    // NUMBER_OF_PROCESSORS() is the count it runs on, in the analysis too
    // (unless `--processors` says otherwise).
    input.processors = input.processors.or(Some(i64::from(args.processes)));
    let mut options = Options::new(input, &args.compile, args.launcher.as_deref(), args.hostfile.clone());
    if args.check {
        // The user's flags come after: theirs win.
        let check = backend::driver::CHECK_FLAGS.iter().map(|it| it.to_string());
        options.toolchain.extra_flags.splice(0..0, check);
    }
    let stats = args.stats || std::env::var("HPF_LS_STATS").is_ok_and(|it| !it.is_empty() && it != "0");
    let Some(Lowered { generated, places, .. }) = lower(&options, err) else { return 1 };
    // Under --check each rank runs under this executable's relay.
    let relay = match std::env::current_exe() {
        Ok(exe) if args.check => Some(vec![exe.into_os_string(), "check-relay".into()]),
        Ok(_) => None,
        Err(error) => {
            let _ = writeln!(err, "hpf-ls: cannot find its own executable for --check: {error}");
            return 1;
        }
    };
    // The program's output must not wait behind ours.
    eprint!("{err}");
    err.clear();
    match backend::driver::run(
        &generated.source,
        args.processes,
        &options.toolchain,
        &args.program_args,
        stats,
        options.timeout,
        relay.as_deref(),
    ) {
        Ok(RunEnd::Exited(status)) => status.code().unwrap_or(1),
        Ok(RunEnd::Died(deaths)) => {
            // A rank killed by the launcher after another died says nothing new.
            let killed = |it: &&Death| matches!(it.status, DeathStatus::Signal(9 | 15)) && it.report.is_empty();
            let mut told: Vec<&Death> = deaths.iter().filter(|it| !killed(it)).collect();
            if told.is_empty() {
                told = deaths.iter().collect();
            }
            err.push_str(&explain_deaths(&told, &places));
            let _ = writeln!(err, "hpf-ls: the run was ended: a process died");
            deaths
                .iter()
                .find_map(|it| match it.status {
                    DeathStatus::Exit(code) if code != 0 => Some(code),
                    _ => None,
                })
                .unwrap_or(1)
        }
        Err(message) if message.contains("failed on the generated program") => {
            report_build_failure(&message, &places, err);
            1
        }
        Err(message) => {
            let _ = writeln!(err, "hpf-ls: {message}");
            1
        }
    }
}

/// The generated SPMD program of the files `input` names, as `hpf-ls build`
/// makes it, with its notes and errors rendered as `build` prints them
/// (`file:line:col: note: ...`): `Ok((program, notes))`, or `Err(messages)`.
/// For tests that snapshot the generated code without compiling it.
pub fn generated_program(input: InputOptions, lowering: backend::LowerOptions) -> Result<(String, String), String> {
    let options = Options { input, toolchain: Toolchain::default(), timeout: None, lowering };
    let mut messages = String::new();
    match lower(&options, &mut messages) {
        Some(Lowered { generated, .. }) => Ok((generated.source, messages)),
        None => Err(messages),
    }
}
