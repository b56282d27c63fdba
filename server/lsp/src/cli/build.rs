//! `hpf-ls build` and `hpf-ls run`: the MPI backend from the command line.
//!
//! hpf-ls's own messages go to stderr; the program's output and exit status
//! pass through untouched. Commands are argv vectors (never a shell line),
//! built in a private temporary directory removed afterwards; with
//! `--timeout` the compiler and the run are each killed, with every process
//! they started, when they last longer.

use std::fmt::Write;
use std::path::PathBuf;
use std::time::Duration;

use analysis::ModelConfig;
use backend::driver::Toolchain;
use syntax::{Code, LineIndex};

use super::{collect_inputs, parse_input_options, InputOptions, EXIT_USAGE};

pub const BUILD_USAGE: &str = "usage: hpf-ls build [FILE...] [-I DIR] [-D NAME[=VALUE]] [--cpp] [-o EXE] [--emit-source OUT.f90] [--fc COMPILER] [--form F] \
                               [--timeout SECONDS] [-- FFLAGS...]";
pub const RUN_USAGE: &str =
    "usage: hpf-ls run [FILE...] [-I DIR] [-D NAME[=VALUE]] [--cpp] [--np N] [--launcher CMD] [--hostfile F] [--fc COMPILER] [--stats] \
                             [--form F] [--timeout SECONDS] [-- ARGS...]";

struct Options {
    input: InputOptions,
    output: Option<PathBuf>,
    emit_source: Option<PathBuf>,
    processes: u32,
    stats: bool,
    toolchain: Toolchain,
    trailing: Vec<String>,
    /// For the compiler and for the run, each: past it all their processes are killed.
    timeout: Option<Duration>,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let split = args.iter().position(|it| it == "--").unwrap_or(args.len());
    let (own, trailing) = (&args[..split], args.get(split + 1..).unwrap_or(&[]));
    let mut output = None;
    let mut emit_source = None;
    let mut processes = 4u32;
    let mut stats = std::env::var("HPF_LS_STATS").is_ok_and(|it| !it.is_empty() && it != "0");
    let mut toolchain = Toolchain::default();
    let mut timeout = None;
    let mut rest = Vec::new();
    let mut idx = 0;
    while idx < own.len() {
        let arg = own[idx].as_str();
        let mut value = || -> Result<String, String> {
            idx += 1;
            own.get(idx).cloned().ok_or_else(|| format!("`{arg}` needs a value"))
        };
        match arg {
            "-o" => output = Some(PathBuf::from(value()?)),
            "--emit-source" => emit_source = Some(PathBuf::from(value()?)),
            "--fc" => toolchain.compiler = Some(value()?),
            "--launcher" => toolchain.launcher = Some(value()?),
            "--hostfile" => toolchain.hostfile = Some(PathBuf::from(value()?)),
            "--np" | "-n" => {
                let text = value()?;
                processes = text
                    .parse()
                    .ok()
                    .filter(|it| *it > 0)
                    .ok_or_else(|| format!("`--np` needs a positive integer, not `{text}`"))?;
            }
            "--stats" => stats = true,
            "--timeout" => {
                let text = value()?;
                let seconds = text
                    .parse::<f64>()
                    .ok()
                    .filter(|it| *it > 0.0 && it.is_finite())
                    .ok_or_else(|| format!("`--timeout` needs a positive number of seconds, not `{text}`"))?;
                timeout = Some(Duration::from_secs_f64(seconds));
            }
            _ => rest.push(own[idx].clone()),
        }
        idx += 1;
    }
    let mut input = parse_input_options(&rest, |_, _| Ok(false))?;
    if input.paths.is_empty() {
        // The program `[program] sources` of ./hpf-ls.toml names.
        input.paths.push(PathBuf::from("."));
    }
    Ok(Options { input, output, emit_source, processes, stats, toolchain, trailing: trailing.to_vec(), timeout })
}

/// Lowers the file; errors are printed like `check` prints diagnostics.
fn lower(options: &Options, err: &mut String) -> Option<(PathBuf, backend::Generated)> {
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
    match backend::lower(&analysis, &loaded.expanded.text) {
        Ok(generated) => {
            for note in &generated.notes {
                let _ = writeln!(err, "{}: note: {}", place(note.range), note.message);
            }
            Some((input.path, generated))
        }
        Err(errors) => {
            for error in errors {
                let _ = writeln!(err, "{}: error: {}", place(error.range), error.message);
            }
            None
        }
    }
}

pub fn run_build(args: &[String], err: &mut String) -> i32 {
    let mut options = match parse(args) {
        Ok(options) => options,
        Err(message) => {
            let _ = writeln!(err, "hpf-ls build: {message}\n{BUILD_USAGE}");
            return EXIT_USAGE;
        }
    };
    options.toolchain.extra_flags = options.trailing.clone();
    let Some((path, generated)) = lower(&options, err) else { return 1 };
    if let Some(target) = &options.emit_source {
        if let Err(error) = std::fs::write(target, &generated.source) {
            let _ = writeln!(err, "hpf-ls: {}: {error}", target.display());
            return EXIT_USAGE;
        }
    }
    let executable = options
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
            let _ = writeln!(err, "hpf-ls: {message}");
            1
        }
    }
}

pub fn run_run(args: &[String], err: &mut String) -> i32 {
    let options = match parse(args) {
        Ok(options) => options,
        Err(message) => {
            let _ = writeln!(err, "hpf-ls run: {message}\n{RUN_USAGE}");
            return EXIT_USAGE;
        }
    };
    let Some((_, generated)) = lower(&options, err) else { return 1 };
    // The program's output must not wait behind ours.
    eprint!("{err}");
    err.clear();
    match backend::driver::run(
        &generated.source,
        options.processes,
        &options.toolchain,
        &options.trailing,
        options.stats,
        options.timeout,
    ) {
        Ok(status) => status.code().unwrap_or(1),
        Err(message) => {
            let _ = writeln!(err, "hpf-ls: {message}");
            1
        }
    }
}
