//! `hpf.build`, `hpf.run` and `hpf.showGenerated`: the MPI backend from the
//! editor, on the editor's current text. Progress goes to `$/progress`,
//! the program's output to `window/logMessage` line by line as it comes;
//! a cancelled request kills the compiler or the launcher (kill on drop).

use std::process::Stdio;

use backend::driver::{launch_command, prepare_build, Toolchain};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tower_lsp_server::ls_types::{MessageType, ProgressToken};
use tower_lsp_server::Client;

use super::settings::MpiSettings;
use super::Analysed;

pub fn toolchain(settings: &MpiSettings) -> Toolchain {
    Toolchain {
        compiler: settings.compiler.clone(),
        launcher: settings.launcher.clone(),
        hostfile: settings.hostfile.clone().map(Into::into),
        extra_flags: settings.extra_args.clone(),
    }
}

/// The generated source, or the backend's errors as `line:col: message` lines.
pub fn generate(analysed: &Analysed) -> Result<backend::Generated, String> {
    backend::lower(&analysed.analysis, &analysed.text).map_err(|errors| {
        let index = syntax::LineIndex::new(&analysed.text);
        let lines: Vec<String> = errors
            .iter()
            .map(|error| {
                let (line, column) = index.line_col(&analysed.text, error.range.start);
                format!("{}:{}: {}", line + 1, column + 1, error.message)
            })
            .collect();
        format!("the MPI backend cannot lower this program:\n{}", lines.join("\n"))
    })
}

type Progress = tower_lsp_server::OngoingProgress<tower_lsp_server::Unbounded, tower_lsp_server::NotCancellable>;

async fn progress_begin(client: &Client, token: Option<ProgressToken>, title: &str) -> Option<Progress> {
    let token = token?;
    Some(client.progress(token, title).with_message("translating").begin().await)
}

/// Builds (and with `processes`, runs) the document's program.
pub async fn build_or_run(
    client: &Client,
    analysed: &Analysed,
    settings: &MpiSettings,
    processes: Option<u32>,
    token: Option<ProgressToken>,
) -> Result<Value, String> {
    let title = if processes.is_some() { "HPF: run" } else { "HPF: build" };
    let mut progress = progress_begin(client, token, title).await;
    let result = build_or_run_steps(client, analysed, settings, processes, &mut progress).await;
    // A step that failed with `?` left the progress open: end it.
    if let Some(progress) = progress.take() {
        progress.finish_with_message("failed").await;
    }
    result
}

async fn build_or_run_steps(
    client: &Client,
    analysed: &Analysed,
    settings: &MpiSettings,
    processes: Option<u32>,
    progress: &mut Option<Progress>,
) -> Result<Value, String> {
    let generated = generate(analysed)?;
    for note in &generated.notes {
        let line = syntax::LineIndex::new(&analysed.text).line_of(note.range.start) + 1;
        client.log_message(MessageType::INFO, format!("hpf-ls: line {line}: {}", note.message)).await;
    }
    let toolchain = toolchain(settings);
    let prepared = prepare_build(&generated.source, None, &toolchain)?;
    if let Some(progress) = progress.as_ref() {
        progress.report("compiling").await;
    }
    let mut compile = tokio::process::Command::from(prepared.command);
    compile.kill_on_drop(true);
    let output =
        compile.output().await.map_err(|error| format!("cannot start {}: {error}", prepared.compiler.display()))?;
    if !output.status.success() {
        let message = format!(
            "{} failed on the generated program:\n{}{}",
            prepared.compiler.display(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        if let Some(progress) = progress.take() {
            progress.finish_with_message("compilation failed").await;
        }
        return Err(message);
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
    launch.current_dir(&prepared.dir.path).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = tokio::process::Command::from(launch)
        .kill_on_drop(true)
        .spawn()
        .map_err(|error| format!("cannot start the launcher: {error}"))?;
    let stdout = child.stdout.take().expect("piped");
    let stderr = child.stderr.take().expect("piped");
    let (mut out_lines, mut err_lines) = (BufReader::new(stdout).lines(), BufReader::new(stderr).lines());
    let (mut stdout_text, mut stderr_text) = (String::new(), String::new());
    let (mut out_open, mut err_open) = (true, true);
    while out_open || err_open {
        tokio::select! {
            line = out_lines.next_line(), if out_open => match line {
                Ok(Some(line)) => {
                    client.log_message(MessageType::LOG, line.clone()).await;
                    stdout_text.push_str(&line);
                    stdout_text.push('\n');
                }
                _ => out_open = false,
            },
            line = err_lines.next_line(), if err_open => match line {
                Ok(Some(line)) => {
                    client.log_message(MessageType::WARNING, line.clone()).await;
                    stderr_text.push_str(&line);
                    stderr_text.push('\n');
                }
                _ => err_open = false,
            },
        }
    }
    let status = child.wait().await.map_err(|error| error.to_string())?;
    let code = status.code().unwrap_or(-1);
    if let Some(progress) = progress.take() {
        progress.finish_with_message(format!("exit code {code}")).await;
    }
    Ok(json!({"exitCode": code, "stdout": stdout_text, "stderr": stderr_text, "processes": processes}))
}
