//! `hpf.build`, `hpf.run` and `hpf.showGenerated`: the MPI backend from the
//! editor, on the editor's current text. Progress goes to `$/progress`,
//! the program's output to `window/logMessage` line by line as it comes.
//! Each process runs in a session of its own in a private directory; a
//! cancelled request, a timeout or too much output kills the whole session
//! (the launcher and every rank), and the directory is removed.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use analysis::FileAnalysis;

use backend::driver::{
    grace_period, launch_command, new_session, prepare_build, Limits, SessionGuard, Toolchain,
    DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_TIMEOUT,
};
use serde_json::{json, Value};
use tokio::io::AsyncReadExt;
use tower_lsp_server::ls_types::{MessageType, ProgressToken};
use tower_lsp_server::Client;

use super::settings::MpiSettings;
use super::Analysed;
use crate::cli::run_check::{explain_compile_failure, GeneratedPlaces};

pub fn toolchain(settings: &MpiSettings) -> Toolchain {
    Toolchain {
        compiler: settings.compiler.clone(),
        launcher: settings.launcher.clone(),
        hostfile: settings.hostfile.clone().map(Into::into),
        extra_flags: settings.extra_args.clone(),
    }
}

/// What `hpf.run`, `hpf.build` and `hpf.showGenerated` lower for a
/// document: the program `hpf-ls run` builds there ([`program`]).
pub struct Program {
    pub analysis: FileAnalysis,
    pub expanded: syntax::include::Expanded,
    /// The document's name among the expansion's files (its places read `line N`).
    document: String,
    /// Where `hpf-ls run` would run it; `None` for an unsaved document.
    pub dir: Option<PathBuf>,
}

/// The program of the document at `path` (`None`: unsaved): the files of
/// its program when it is one of several ([`crate::sources::program_of`]:
/// `[program] sources` of its hpf-ls.toml, or its directory's files when it
/// holds no main program), with `open` (the editor's documents) in place of
/// the disk's text; else the document alone. `processes`: the count
/// NUMBER_OF_PROCESSORS() is, when hpf-ls.toml does not say.
pub fn program(
    analysed: &Analysed,
    path: Option<&Path>,
    open: &[(PathBuf, String)],
    processes: Option<u32>,
) -> Result<Program, String> {
    let path = path.map(crate::sources::clean);
    let found = match &path {
        Some(path) => crate::sources::program_of(path, &analysed.text())?,
        None => None,
    };
    let Some((dir, paths)) = found else {
        let (analysis, expanded) = analysed.program();
        let document = expanded.map.file(0).name.to_string();
        let dir = path.as_deref().and_then(Path::parent).filter(|it| it.is_dir()).map(Path::to_path_buf);
        return Ok(Program { analysis, expanded, document, dir });
    };
    let options = crate::cli::InputOptions { paths, ..Default::default() };
    let mut inputs = crate::cli::collect_inputs(&options)?;
    if inputs.len() != 1 {
        return Err(format!("{}: found {} programs where one was expected", dir.display(), inputs.len()));
    }
    let mut input = inputs.remove(0);
    input.processors = input.processors.or(processes.map(i64::from));
    let overlay = |wanted: &Path| {
        let wanted = std::fs::canonicalize(wanted).unwrap_or_else(|_| wanted.to_path_buf());
        open.iter()
            .find(|(path, _)| std::fs::canonicalize(path).unwrap_or_else(|_| path.clone()) == wanted)
            .map(|(_, text)| text.clone())
    };
    let loaded = crate::sources::load_for_backend_over(&input, &overlay)?;
    let config = analysis::ModelConfig { number_of_processors: input.processors };
    let analysis = crate::modules::analyze_input(&input, &loaded, config);
    let document = path.as_ref().map_or(String::new(), |it| {
        let wanted = std::fs::canonicalize(it).unwrap_or_else(|_| it.clone());
        let files = loaded.expanded.map.files();
        files
            .iter()
            .map(|file| file.name.to_string())
            .find(|name| std::fs::canonicalize(name).is_ok_and(|it| it == wanted))
            .unwrap_or_default()
    });
    Ok(Program { analysis, expanded: loaded.expanded, document, dir: Some(dir) })
}

impl Program {
    /// `(file, line, column)` of a range of the expanded text, 1-based;
    /// `file` empty in the document itself, else relative to the program's directory.
    fn place(&self, range: syntax::TextRange) -> (String, usize, usize) {
        let map = &self.expanded.map;
        let at = map.locate_range(range);
        let file = map.file(at.file);
        let (line, column) = syntax::LineIndex::new(&file.text).line_col(&file.text, at.range.start);
        let shown = if *file.name == *self.document {
            String::new()
        } else {
            let name = Path::new(&*file.name);
            let relative = self.dir.as_deref().and_then(|dir| name.strip_prefix(dir).ok());
            format!("{}:", relative.unwrap_or(name).display())
        };
        (shown, line + 1, column + 1)
    }
}

/// The generated source and where its notes are (`line N` of the
/// document, or `FILE:N` in another file of the program or a header), or
/// the backend's errors as `line:col: message` lines (`FILE:line:col`).
pub fn generate(program: &Program, settings: &MpiSettings) -> Result<(backend::Generated, Vec<String>), String> {
    let options = backend::LowerOptions { ordered_reductions: settings.ordered_reductions };
    match backend::lower_with(&program.analysis, &program.expanded.text, &options) {
        Ok(generated) => {
            let notes = generated
                .notes
                .iter()
                .map(|note| match program.place(note.range) {
                    (file, line, _) if file.is_empty() => format!("line {line}: {}", note.message),
                    (file, line, _) => format!("{file}{line}: {}", note.message),
                })
                .collect();
            Ok((generated, notes))
        }
        Err(errors) => {
            let lines: Vec<String> = errors
                .iter()
                .map(|error| {
                    let (file, line, column) = program.place(error.range);
                    format!("{file}{line}:{column}: {}", error.message)
                })
                .collect();
            Err(format!("the MPI backend cannot lower this program:\n{}", lines.join("\n")))
        }
    }
}

type Progress = tower_lsp_server::OngoingProgress<tower_lsp_server::Unbounded, tower_lsp_server::NotCancellable>;

async fn progress_begin(client: &Client, token: Option<ProgressToken>, title: &str) -> Option<Progress> {
    let token = token?;
    Some(client.progress(token, title).with_message("translating").begin().await)
}

/// Builds (and with `processes`, runs) the document's program. It runs in
/// `program.dir` (where `hpf-ls run` would run it, so the files it writes
/// and reads are there); an unsaved document's in the build directory.
pub async fn build_or_run(
    client: &Client,
    program: &Program,
    settings: &MpiSettings,
    processes: Option<u32>,
    token: Option<ProgressToken>,
) -> Result<Value, String> {
    let title = if processes.is_some() { "HPF: run" } else { "HPF: build" };
    let mut progress = progress_begin(client, token, title).await;
    let result = build_or_run_steps(client, program, settings, processes, &mut progress).await;
    // A step that failed with `?` left the progress open: end it.
    if let Some(progress) = progress.take() {
        progress.finish_with_message("failed").await;
    }
    result
}

async fn build_or_run_steps(
    client: &Client,
    program: &Program,
    settings: &MpiSettings,
    processes: Option<u32>,
    progress: &mut Option<Progress>,
) -> Result<Value, String> {
    let (generated, notes) = generate(program, settings)?;
    for note in notes {
        client.log_message(MessageType::INFO, format!("hpf-ls: {note}")).await;
    }
    let toolchain = toolchain(settings);
    let limits = limits(settings);
    let mut prepared = prepare_build(&generated.source, None, &toolchain)?;
    if let Some(progress) = progress.as_ref() {
        progress.report("compiling").await;
    }
    let compiler = prepared.compiler.display().to_string();
    // The runtime first when no compiled one is cached, then the program.
    let mut steps = vec![std::mem::replace(&mut prepared.command, std::process::Command::new(&prepared.compiler))];
    if let Some(runtime) = prepared.runtime_command.take() {
        steps.insert(0, runtime);
    }
    let compiles_runtime = steps.len() == 2;
    for (index, mut step) in steps.into_iter().enumerate() {
        step.stdout(Stdio::piped()).stderr(Stdio::piped());
        let output =
            supervise(step, &limits, None).await.map_err(|error| format!("cannot start {compiler}: {error}"))?;
        if let Some(stop) = output.stopped {
            return Err(format!("{compiler} {}", stop.describe(&limits)));
        }
        if !output.status.is_some_and(|it| it.success()) {
            let message = format!("{compiler} failed on the generated program:\n{}{}", output.stdout, output.stderr);
            // The compiler rejecting what hpf-ls generated is hpf-ls's bug: told as `hpf-ls build` tells it.
            let places = GeneratedPlaces::new(&generated, &program.analysis, &program.expanded.map);
            let message = match explain_compile_failure(&message, &places) {
                Some(explained) => format!("{explained}hpf-ls: the compiler's output:\n{message}"),
                None => message,
            };
            if let Some(progress) = progress.take() {
                progress.finish_with_message("compilation failed").await;
            }
            return Err(message);
        }
        if compiles_runtime && index == 0 {
            prepared.keep_runtime();
        }
    }
    let Some(processes) = processes else {
        if let Some(progress) = progress.take() {
            progress.finish_with_message("built").await;
        }
        return Ok(
            json!({"exitCode": 0, "notes": generated.notes.iter().map(|it| it.message.clone()).collect::<Vec<_>>()}),
        );
    };
    if let Some(progress) = progress.as_ref() {
        progress.report(format!("running on {processes} processes")).await;
    }
    let mut launch = launch_command(&prepared.executable, processes, &toolchain, &[])?;
    launch
        .current_dir(program.dir.as_deref().unwrap_or(&prepared.dir.path))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let output = supervise(launch, &limits, Some(client))
        .await
        .map_err(|error| format!("cannot start the launcher: {error}"))?;
    if let Some(stop) = output.stopped {
        return Err(format!("the program {}", stop.describe(&limits)));
    }
    let code = output.status.and_then(|it| it.code()).unwrap_or(-1);
    if let Some(progress) = progress.take() {
        progress.finish_with_message(format!("exit code {code}")).await;
    }
    Ok(json!({"exitCode": code, "stdout": output.stdout, "stderr": output.stderr, "processes": processes}))
}

/// The limits the settings give, with the documented defaults.
pub fn limits(settings: &MpiSettings) -> Limits {
    Limits {
        timeout: match settings.timeout_seconds {
            Some(seconds) if seconds > 0.0 && seconds.is_finite() => Some(Duration::from_secs_f64(seconds)),
            Some(_) => None,
            None => Some(DEFAULT_TIMEOUT),
        },
        max_output_bytes: settings.max_output_bytes.map_or(DEFAULT_MAX_OUTPUT_BYTES, |it| it as usize),
    }
}

/// Why a process was stopped before it ended.
#[derive(Clone, Copy, Debug)]
enum Stop {
    TimedOut,
    TooMuchOutput,
}

impl Stop {
    fn describe(self, limits: &Limits) -> String {
        match self {
            Stop::TimedOut => format!(
                "timed out after {} s (setting hpf.mpi.timeoutSeconds); all its processes were killed",
                limits.timeout.map_or(0.0, |it| it.as_secs_f64())
            ),
            Stop::TooMuchOutput => format!(
                "wrote more than {} bytes of output (setting hpf.mpi.maxOutputBytes); all its processes were killed",
                limits.max_output_bytes
            ),
        }
    }
}

struct Supervised {
    /// `None` when it was stopped.
    status: Option<std::process::ExitStatus>,
    stdout: String,
    stderr: String,
    stopped: Option<Stop>,
}

/// Runs `command` (stdout and stderr piped) in a session of its own, keeps
/// at most `limits.max_output_bytes` of its output and sends each line to
/// the client's log when given one. Past the limits, on cancellation (this
/// future dropped) and when it ends, every process of the session is killed.
async fn supervise(
    mut command: std::process::Command,
    limits: &Limits,
    client: Option<&Client>,
) -> std::io::Result<Supervised> {
    new_session(&mut command);
    command.stdin(Stdio::null());
    // srun is given time to cancel its job step (the guard kills it after).
    let grace = grace_period(&command);
    let mut child = tokio::process::Command::from(command).kill_on_drop(grace.is_none()).spawn()?;
    // Declared after `child`, dropped before it: the session dies first.
    let mut guard = SessionGuard::new(child.id()).with_grace(grace);
    let deadline = limits.timeout.map(|it| tokio::time::Instant::now() + it);
    let mut out = Stream::new(child.stdout.take().map(|it| Box::pin(it) as Pipe), MessageType::LOG);
    let mut err = Stream::new(child.stderr.take().map(|it| Box::pin(it) as Pipe), MessageType::WARNING);
    let mut stopped = None;
    while out.pipe.is_some() || err.pipe.is_some() {
        let sleep = async {
            match deadline {
                Some(deadline) => tokio::time::sleep_until(deadline).await,
                None => std::future::pending().await,
            }
        };
        let (read, is_err) = tokio::select! {
            read = out.read() => (read, false),
            read = err.read() => (read, true),
            () = sleep => {
                stopped = Some(Stop::TimedOut);
                break;
            }
        };
        let room = limits.max_output_bytes.saturating_sub(out.kept.len() + err.kept.len());
        let stream = if is_err { &mut err } else { &mut out };
        let count = match read {
            Ok(0) | Err(_) => {
                stream.pipe = None;
                if !stream.line.is_empty() {
                    log(client, stream.kind, std::mem::take(&mut stream.line)).await;
                }
                continue;
            }
            Ok(count) => count,
        };
        let chunk = &stream.buffer[..count.min(room)];
        stream.kept.extend_from_slice(chunk);
        for &byte in chunk {
            if byte == b'\n' {
                log(client, stream.kind, std::mem::take(&mut stream.line)).await;
            } else {
                stream.line.push(byte);
            }
        }
        if count > room {
            stopped = Some(Stop::TooMuchOutput);
            break;
        }
    }
    let status = match stopped {
        Some(_) => None,
        None => {
            let waited = match deadline {
                Some(deadline) => tokio::time::timeout_at(deadline, child.wait()).await.ok(),
                None => Some(child.wait().await),
            };
            match waited {
                Some(status) => Some(status?),
                None => {
                    stopped = Some(Stop::TimedOut);
                    None
                }
            }
        }
    };
    // Stopped or ended: nothing it started outlives it.
    guard.kill();
    if grace.is_none() {
        let _ = child.start_kill();
    }
    let _ = child.wait().await;
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    Ok(Supervised { status, stdout: text(&out.kept), stderr: text(&err.kept), stopped })
}

type Pipe = std::pin::Pin<Box<dyn tokio::io::AsyncRead + Send>>;

/// One of the output pipes of a supervised process.
struct Stream {
    /// `None` once closed.
    pipe: Option<Pipe>,
    buffer: Vec<u8>,
    /// The output kept for the answer.
    kept: Vec<u8>,
    /// The line being received.
    line: Vec<u8>,
    kind: MessageType,
}

impl Stream {
    fn new(pipe: Option<Pipe>, kind: MessageType) -> Stream {
        Stream { pipe, buffer: vec![0; 8192], kept: Vec::new(), line: Vec::new(), kind }
    }

    /// Reads into `buffer`, or waits forever once the pipe is closed.
    async fn read(&mut self) -> std::io::Result<usize> {
        match &mut self.pipe {
            Some(pipe) => pipe.read(&mut self.buffer).await,
            None => std::future::pending().await,
        }
    }
}

async fn log(client: Option<&Client>, kind: MessageType, line: Vec<u8>) {
    if let Some(client) = client {
        let mut line = String::from_utf8_lossy(&line).into_owned();
        if line.ends_with('\r') {
            line.pop();
        }
        client.log_message(kind, line).await;
    }
}
