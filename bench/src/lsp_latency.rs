//! LSP latency of `target/release/hpf-ls`, measured as an editor sees it.
//!
//! `cargo run --release -p hpf-bench -- lsp [LINES...] [SHAPES...]`
//! (default 1000, 10000 and 100000 lines; shapes `units`: top-level
//! subroutines, `module`: one module of ~22-line module procedures,
//! `program`: one main program of internal procedures, all by default)
//! runs a real LSP client over stdio for each shape and size:
//! `initialize` (offering UTF-8 and UTF-16), `initialized`, `didOpen` of a
//! generated program, timed until the `publishDiagnostics` of that version
//! (several opens, a `didClose` between them); then one-character
//! incremental `didChange`s inside a loop body (a blank inserted, then
//! deleted), each timed until the `publishDiagnostics` of its version; then
//! `hover`s on an array name inside a loop, timed request to response. The
//! server's peak RSS (VmHWM) is read from /proc just before `shutdown`.
//!
//! Then, in-process, the steps the server runs on every edit (see
//! `compute` in server/lsp/src/server/mod.rs) are timed one by one on the
//! same text, to show where the edit latency goes. `HPF_LS_BIN` names
//! another server binary.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Longest wait for any one answer before the benchmark gives up.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(300);

/// One message from the server, stamped when its first and last bytes were read.
pub(crate) struct Incoming {
    pub(crate) first_byte: Instant,
    pub(crate) at: Instant,
    pub(crate) bytes: usize,
    pub(crate) value: Value,
}

pub(crate) struct Client {
    child: Child,
    stdin: ChildStdin,
    incoming: Receiver<Incoming>,
    next_id: i64,
    /// The newest diagnostics version seen per URI, whoever waited for what:
    /// a wait for one answer must not lose the publishes it skips.
    pub(crate) published_versions: HashMap<String, i64>,
    /// When the newest publishDiagnostics was read (a request whose answer
    /// came after a publish that arrived after the request waited behind it).
    pub(crate) last_publish: Option<Instant>,
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut res = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    res.extend_from_slice(body);
    res
}

/// Reads Content-Length frames until the server closes its stdout.
fn read_frames(stdout: impl Read, sender: mpsc::Sender<Incoming>) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut length = None;
        let mut first_byte = None;
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            first_byte.get_or_insert_with(Instant::now);
            let line = line.trim_end();
            if line.is_empty() {
                if length.is_some() {
                    break;
                }
                continue;
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.trim().eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse::<usize>().ok();
                }
            }
        }
        let Some(length) = length else { return };
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let at = Instant::now();
        let Ok(value) = serde_json::from_slice(&body) else {
            eprintln!("hpf-bench: the server sent a body that is not JSON");
            continue;
        };
        let first_byte = first_byte.unwrap_or(at);
        if sender.send(Incoming { first_byte, at, bytes: length, value }).is_err() {
            return;
        }
    }
}

impl Client {
    pub(crate) fn spawn(binary: &PathBuf) -> Client {
        let mut child = Command::new(binary)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::env::var_os("HPF_BENCH_SERVER_LOG").map_or_else(Stdio::null, |path| {
                std::fs::File::create(path).map_or_else(|_| Stdio::null(), Stdio::from)
            }))
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {}: {error}", binary.display()));
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (sender, incoming) = mpsc::channel();
        std::thread::spawn(move || read_frames(stdout, sender));
        Client { child, stdin, incoming, next_id: 1, published_versions: HashMap::new(), last_publish: None }
    }

    /// Sends `message`; returns the instant just before its first byte was written.
    pub(crate) fn send(&mut self, message: &Value) -> Instant {
        let bytes = frame(message.to_string().as_bytes());
        let start = Instant::now();
        self.stdin.write_all(&bytes).and_then(|()| self.stdin.flush()).expect("the server reads its stdin");
        start
    }

    pub(crate) fn notify(&mut self, method: &str, params: Value) -> Instant {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
    }

    pub(crate) fn request(&mut self, method: &str, params: Value) -> (i64, Instant) {
        let id = self.next_id;
        self.next_id += 1;
        let start = self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        (id, start)
    }

    /// The next message for which `wanted` holds; answers server requests on the way.
    pub(crate) fn wait_for(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Incoming {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let message = match self.incoming.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(message) => message,
                Err(RecvTimeoutError::Timeout) => panic!("no {what} from the server within {TIMEOUT:?}"),
                Err(RecvTimeoutError::Disconnected) => panic!("the server closed its stdout while waiting for {what}"),
            };
            if message.value.get("method").and_then(Value::as_str) == Some("textDocument/publishDiagnostics") {
                self.last_publish = Some(message.at);
                let params = &message.value["params"];
                if let (Some(uri), Some(version)) = (params["uri"].as_str(), params["version"].as_i64()) {
                    self.published_versions.insert(uri.to_string(), version);
                }
            }
            if wanted(&message.value) {
                return message;
            }
            // A request from the server (configuration, registration): answer null.
            if let (Some(id), Some(_)) = (message.value.get("id"), message.value.get("method")) {
                let id = id.clone();
                self.send(&json!({"jsonrpc": "2.0", "id": id, "result": null}));
            }
        }
    }

    pub(crate) fn response(&mut self, id: i64) -> Incoming {
        let message = self.wait_for("response", |it| it.get("id") == Some(&json!(id)) && it.get("method").is_none());
        if let Some(error) = message.value.get("error") {
            panic!("request {id} failed: {error}");
        }
        message
    }

    pub(crate) fn diagnostics(&mut self, uri: &str, version: i32) -> Incoming {
        self.wait_for("publishDiagnostics", |it| {
            it.get("method").and_then(Value::as_str) == Some("textDocument/publishDiagnostics")
                && it["params"]["uri"].as_str() == Some(uri)
                && it["params"]["version"].as_i64() == Some(i64::from(version))
        })
    }

    /// A field of the server's /proc status in kB: `VmHWM` (peak resident set) or `VmRSS`.
    pub(crate) fn memory_kb(&self, field: &str) -> Option<u64> {
        status_kb(&format!("/proc/{}/status", self.child.id()), field)
    }

    pub(crate) fn shutdown(mut self) {
        let (id, _) = self.request("shutdown", Value::Null);
        self.response(id);
        self.notify("exit", Value::Null);
        drop(self.stdin);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => {
                    if !status.success() {
                        eprintln!("hpf-bench: hpf-ls exited with {status}");
                    }
                    return;
                }
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
                _ => {
                    eprintln!("hpf-bench: hpf-ls did not exit after `exit`; killing it");
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return;
                }
            }
        }
    }
}

fn status_kb(path: &str, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(path).ok()?;
    let line = status.lines().find(|it| it.strip_prefix(field).is_some_and(|rest| rest.starts_with(':')))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

pub(crate) fn mb(kb: Option<u64>) -> String {
    kb.map_or("?".to_string(), |kb| format!("{:.0} MB", kb as f64 / 1024.0))
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

/// Median and 95th percentile (nearest rank) in milliseconds.
pub(crate) fn median_p95(times: &[Duration]) -> (f64, f64) {
    let mut sorted = times.to_vec();
    sorted.sort();
    let p95 = sorted[((sorted.len() * 95).div_ceil(100)).max(1) - 1];
    (ms(sorted[sorted.len() / 2]), ms(p95))
}

/// Where the benchmark edits and hovers: lines and columns (0-based, ASCII text).
struct Spots {
    /// The line `v(i, j) = 0.25 * (...` of a kernel in the middle, and the column just after `=`.
    edit: (usize, usize),
    /// The `v` of `u(i, j) = v(i, j) + w(j, i)` in several kernels spread over the file.
    hovers: Vec<(usize, usize)>,
    /// In a host's specification part (module and program shapes): the `1`
    /// of `ALIGN s(i) WITH tt(i, 1)`, an array few procedures use.
    host_edit: Option<(usize, usize)>,
}

fn spots(text: &str) -> Spots {
    let lines: Vec<&str> = text.lines().collect();
    let kernels: Vec<usize> =
        lines.iter().enumerate().filter(|(_, it)| it.starts_with("subroutine kernel")).map(|(at, _)| at).collect();
    let find_after = |start: usize, prefix: &str| {
        (start..lines.len()).find(|&at| lines[at].starts_with(prefix)).expect("the generator's loop body")
    };
    let middle = kernels[kernels.len() / 2];
    let edit_line = find_after(middle, "        v(i, j) = 0.25 *");
    let edit = (edit_line, lines[edit_line].find('=').expect("an assignment") + 1);
    let hovers = (0..8)
        .map(|it| {
            let line = find_after(kernels[it * (kernels.len() - 1) / 7], "        u(i, j) = v(i, j)");
            (line, lines[line].find("v(").expect("a reference to v"))
        })
        .collect();
    let host_edit = lines.iter().position(|it| it.starts_with(HOST_EDIT_LINE)).map(|line| (line, HOST_EDIT_LINE.len()));
    Spots { edit, hovers, host_edit }
}

struct Figures {
    shape: Shape,
    lines: usize,
    bytes: usize,
    diagnostics: usize,
    diagnostics_bytes: usize,
    open: Vec<Duration>,
    /// Until the didOpen was read (the probe's answer), and until the first byte of its diagnostics.
    open_accepted: Vec<Duration>,
    open_server: Vec<Duration>,
    edit: Vec<Duration>,
    /// Edits of the host's specification part that one procedure in [`USES_OF_S`] sees.
    host_edit: Vec<Duration>,
    hover: Vec<Duration>,
    /// Send to the first byte of the diagnostics, and their transfer, per edit.
    edit_server: Vec<Duration>,
    edit_transfer: Vec<Duration>,
    hover_answered: usize,
    /// VmHWM after the first open, VmRSS after the opens, VmHWM at the end.
    peak_after_open_kb: Option<u64>,
    rss_after_opens_kb: Option<u64>,
    /// VmRSS after each edit's diagnostics arrived.
    rss_during_edits_kb: Vec<Option<u64>>,
    peak_rss_kb: Option<u64>,
}

fn measure(binary: &PathBuf, target_lines: usize, shape: Shape) -> Figures {
    let text = generate_text(target_lines, shape);
    let lines = text.lines().count();
    let (opens, edits, hovers): (usize, usize, usize) = if lines > 50_000 { (3, 12, 30) } else { (5, 30, 50) };
    let spots = spots(&text);
    let mut client = Client::spawn(binary);
    // Never written to disk: the server reads the text from didOpen (and
    // finds no hpf-ls.toml, so the `.f90` name makes it free form).
    let root = std::env::temp_dir().join(format!("hpf-bench-lsp-{}", std::process::id()));
    let uri = format!("file://{}/bench{lines}.f90", root.display());

    let (id, _) = client.request(
        "initialize",
        json!({
            "processId": std::process::id(),
            "rootUri": null,
            "capabilities": {
                "general": {"positionEncodings": ["utf-8", "utf-16"]},
                "textDocument": {
                    "hover": {"contentFormat": ["markdown", "plaintext"]},
                    "publishDiagnostics": {"versionSupport": true, "relatedInformation": true},
                    "synchronization": {"didSave": false}
                }
            }
        }),
    );
    let init = client.response(id);
    let encoding = init.value["result"]["capabilities"]["positionEncoding"].as_str().unwrap_or("utf-16").to_string();
    client.notify("initialized", json!({}));

    let open_message = |version: i32| {
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": uri, "languageId": "fortran", "version": version, "text": text}
        }})
    };
    let (mut open_times, mut open_accepted, mut open_server) = (Vec::new(), Vec::new(), Vec::new());
    let mut diagnostics = 0;
    let mut diagnostics_bytes = 0;
    let mut peak_after_open_kb = None;
    for round in 0..opens {
        if round > 0 {
            client.notify("textDocument/didClose", json!({"textDocument": {"uri": uri}}));
        }
        let start = client.send(&open_message(1));
        // A probe: a hover on a document that is not open is answered at
        // once, so its answer marks when the server has read and decoded
        // the didOpen before it (requests are read in order).
        let (probe, _) = client.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": "file:///not-open.f90"}, "position": {"line": 0, "character": 0}}),
        );
        open_accepted.push(client.response(probe).at - start);
        let published = client.diagnostics(&uri, 1);
        open_times.push(published.at - start);
        open_server.push(published.first_byte.saturating_duration_since(start));
        diagnostics = published.value["params"]["diagnostics"].as_array().map_or(0, Vec::len);
        diagnostics_bytes = published.bytes;
        if round == 0 {
            peak_after_open_kb = client.memory_kb("VmHWM");
        }
    }
    let rss_after_opens_kb = client.memory_kb("VmRSS");

    let (mut edit_times, mut edit_server, mut edit_transfer) = (Vec::new(), Vec::new(), Vec::new());
    let mut rss_during_edits_kb = Vec::new();
    let (line, column) = spots.edit;
    for round in 0..edits {
        let version = 2 + round as i32;
        let change = if round % 2 == 0 {
            json!({"range": {"start": {"line": line, "character": column}, "end": {"line": line, "character": column}},
                   "text": " "})
        } else {
            json!({"range": {"start": {"line": line, "character": column}, "end": {"line": line, "character": column + 1}},
                   "text": ""})
        };
        let start = client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}),
        );
        let published = client.diagnostics(&uri, version);
        edit_times.push(published.at - start);
        edit_server.push(published.first_byte.saturating_duration_since(start));
        edit_transfer.push(published.at - published.first_byte);
        rss_during_edits_kb.push(client.memory_kb("VmRSS"));
    }

    // The host's specification part: `s`'s alignment, `1` ↔ `2`.
    let mut host_edit_times = Vec::new();
    for round in 0..spots.host_edit.map_or(0, |_| edits) {
        let (line, column) = spots.host_edit.expect("a host");
        let version = 2 + (edits + round) as i32;
        let digit = if round % 2 == 0 { "2" } else { "1" };
        let change = json!({"range": {"start": {"line": line, "character": column}, "end": {"line": line, "character": column + 1}},
                            "text": digit});
        let start = client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}),
        );
        host_edit_times.push(client.diagnostics(&uri, version).at - start);
    }

    let mut hover_times = Vec::new();
    let mut hover_answered = 0;
    for round in 0..hovers {
        let (line, character) = spots.hovers[round % spots.hovers.len()];
        let (id, start) = client.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}),
        );
        let answer = client.response(id);
        hover_times.push(answer.at - start);
        if !answer.value["result"].is_null() {
            hover_answered += 1;
        }
    }

    let peak_rss_kb = client.memory_kb("VmHWM");
    client.shutdown();
    println!(
        "{lines} lines of {} ({:.2} MB, position encoding {encoding}): {diagnostics} diagnostics ({:.2} MB message)",
        shape.name(),
        text.len() as f64 / 1e6,
        diagnostics_bytes as f64 / 1e6
    );
    Figures {
        shape,
        lines,
        bytes: text.len(),
        diagnostics,
        diagnostics_bytes,
        open: open_times,
        open_accepted,
        open_server,
        edit: edit_times,
        host_edit: host_edit_times,
        hover: hover_times,
        edit_server,
        edit_transfer,
        hover_answered,
        peak_after_open_kb,
        rss_after_opens_kb,
        rss_during_edits_kb,
        peak_rss_kb,
    }
}

/// What the generated program is made of: each is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A module of parameters, then top-level subroutines (about 50 lines each).
    Units,
    /// One module whose templates and arrays its module procedures (about
    /// 22 lines each) compute on, and a main program that USEs it.
    Module,
    /// One main program with the same procedures as internal procedures.
    Program,
}

impl Shape {
    const ALL: [Shape; 3] = [Shape::Units, Shape::Module, Shape::Program];

    fn name(self) -> &'static str {
        match self {
            Shape::Units => "units",
            Shape::Module => "module",
            Shape::Program => "program",
        }
    }
}

/// A host's specification part: the mapped arrays its procedures use.
const HOST_SPECIFICATION: &str = "  integer, parameter :: n = 256
!HPF$ PROCESSORS p(2, 2)
!HPF$ TEMPLATE tt(0:n+1, 0:n+1)
!HPF$ DISTRIBUTE tt(BLOCK, CYCLIC(2)) ONTO p
  real, dimension(0:n+1, 0:n+1) :: u, v
!HPF$ ALIGN u(i, j) WITH tt(i, j)
!HPF$ ALIGN v(:, :) WITH tt(:, :)
  real :: s(0:n+1)
!HPF$ ALIGN s(i) WITH tt(i, 1)
";

/// The line of [`HOST_SPECIFICATION`] the host edits change, up to the
/// character they change (`1` ↔ `2`).
const HOST_EDIT_LINE: &str = "!HPF$ ALIGN s(i) WITH tt(i, ";

/// One procedure in this many uses the host's `s`.
const USES_OF_S: usize = 1000;

/// One procedure after a host's CONTAINS: a stencil on the host's arrays
/// and a local array aligned with the host's template (about 22 lines);
/// one in [`USES_OF_S`] also copies a row into the host's `s`.
fn contained(idx: usize) -> String {
    let uses_s = if idx.is_multiple_of(USES_OF_S) { "  s(1:n) = u(1:n, 1)\n" } else { "" };
    format!(
        "subroutine kernel{idx}(m)
  integer, intent(in) :: m
  real :: w(n, n)
  integer :: i, j, k
!HPF$ ALIGN w(i, j) WITH tt(j, i)
{uses_s}  do k = 1, m
!HPF$ INDEPENDENT, NEW(j)
    do i = 1, n
      do j = 1, n
        v(i, j) = 0.25 * (u(i-1, j) + u(i+1, j) + &
                          u(i, j-1) + u(i, j+1))
      end do
    end do
!HPF$ INDEPENDENT
    do i = 1, n
      do j = 1, n
        u(i, j) = v(i, j) + w(j, i)
      end do
    end do
  end do
end subroutine kernel{idx}

"
    )
}

/// A program of about `target_lines` lines of the given shape.
fn generate_text(target_lines: usize, shape: Shape) -> String {
    let (head, tail) = match shape {
        Shape::Units => return crate::generate(target_lines),
        Shape::Module => (
            format!("! Generated by hpf-bench: one module of many procedures.\nmodule field\n{HOST_SPECIFICATION}contains\n\n"),
            "end module field\n\nprogram main\n  use field\n  call kernel0(1)\nend program main\n",
        ),
        Shape::Program => (
            format!("! Generated by hpf-bench: one main program with many internal procedures.\nprogram main\n{HOST_SPECIFICATION}  call kernel0(1)\ncontains\n\n"),
            "end program main\n",
        ),
    };
    let per_procedure = contained(1).lines().count();
    let mut text = head;
    let mut lines = text.lines().count() + tail.lines().count();
    let mut idx = 0;
    while lines + per_procedure <= target_lines.max(per_procedure) || idx == 0 {
        text.push_str(&contained(idx));
        lines += per_procedure;
        idx += 1;
    }
    text.push_str(tail);
    text
}

/// Medians of the server's per-edit steps, run in-process on the same text and edit.
struct Breakdown {
    lines: usize,
    /// Growth of this process's RSS when one tree and one analysis were built.
    resident_kb: Option<u64>,
    copy: Duration,
    input_edit: Duration,
    reparse: Duration,
    full_parse: Duration,
    lower: Duration,
    analyze: Duration,
    model: Duration,
    loops: Duration,
    drop_old: Duration,
    hover: Duration,
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// The generated text, and it with the benchmark's edit (a blank in a loop body) at the offset returned.
fn edited_text(target_lines: usize, shape: Shape) -> (String, String, usize) {
    let original = generate_text(target_lines, shape);
    let spots = spots(&original);
    let line_start: usize = original.lines().take(spots.edit.0).map(|it| it.len() + 1).sum();
    let at = line_start + spots.edit.1;
    let mut edited = original.clone();
    edited.insert(at, ' ');
    (original, edited, at)
}

fn breakdown(target_lines: usize) -> Breakdown {
    let (original, edited, _) = edited_text(target_lines, Shape::Units);
    let texts = [edited, original];
    let form = syntax::SourceForm::Free;
    let config = analysis::ModelConfig { number_of_processors: None };

    let mut previous_text = texts[1].clone();
    let rss_before = status_kb("/proc/self/status", "VmRSS");
    let mut previous_tree = syntax::parse_tree(&previous_text, None);
    let mut previous_analysis =
        Some(analysis::analyze_file(syntax::lower_tree(&previous_text, &previous_text, form, &previous_tree), config));
    let rss_after = status_kb("/proc/self/status", "VmRSS");
    let resident_kb = rss_after.zip(rss_before).map(|(after, before)| after.saturating_sub(before));
    let rounds = if target_lines > 50_000 { 6 } else { 20 };
    let (mut copy, mut edit_times, mut reparse, mut full, mut lower) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut model, mut loops, mut analyze, mut drop_old) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let source = &texts[round % 2];
        // `rope.to_string()` and `parser_text(..).into_owned()`: two copies of the text.
        let start = Instant::now();
        let text = source.clone();
        let parser_text = syntax::parser_text(&text, form).into_owned();
        copy.push(start.elapsed());

        let start = Instant::now();
        let edit = syntax::input_edit(&previous_text, &parser_text).expect("the texts differ");
        previous_tree.edit(&edit);
        edit_times.push(start.elapsed());

        let start = Instant::now();
        let tree = syntax::parse_tree(&parser_text, Some(&previous_tree));
        reparse.push(start.elapsed());

        let start = Instant::now();
        std::hint::black_box(syntax::parse_tree(&parser_text, None));
        full.push(start.elapsed());

        // The whole file lowered again (the server lowers only the chunks an
        // edit touched: see `chunked`).
        let start = Instant::now();
        let file = syntax::lower_tree(&text, &parser_text, form, &tree);
        lower.push(start.elapsed());

        // The two halves of `analyze_file`, on a copy: the model (symbols,
        // mappings, their checks), then the loop analysis.
        let copy_of_file = file.clone();
        let start = Instant::now();
        let mut diagnostics = copy_of_file.diagnostics.clone();
        let built = analysis::model::build_model(&copy_of_file, config, &mut diagnostics);
        model.push(start.elapsed());
        let units: Vec<&syntax::Unit> =
            analysis::model::flatten_units(&copy_of_file).into_iter().map(|(unit, _)| unit).collect();
        let start = Instant::now();
        std::hint::black_box(analysis::loops::analyze_loops(&built, &units, &mut diagnostics));
        loops.push(start.elapsed());
        drop(units);
        drop((built, diagnostics, copy_of_file));

        let start = Instant::now();
        let analysed = analysis::analyze_file(file, config);
        analyze.push(start.elapsed());

        // The server drops the previous analysis when it stores the new one.
        let start = Instant::now();
        drop(previous_analysis.replace(analysed));
        drop_old.push(start.elapsed());

        previous_text = parser_text;
        previous_tree = tree;
    }

    let analysed = previous_analysis.expect("analysed");
    let hover_offsets: Vec<usize> = spots(&previous_text)
        .hovers
        .iter()
        .map(|&(line, column)| previous_text.lines().take(line).map(|it| it.len() + 1).sum::<usize>() + column)
        .collect();
    let mut hover = Vec::new();
    for round in 0..(rounds * 4) {
        let offset = hover_offsets[round % hover_offsets.len()];
        let start = Instant::now();
        let result = analysis::ide::hover(&analysed, &previous_text, offset, true);
        hover.push(start.elapsed());
        assert!(result.is_some(), "hover on an array name answers");
    }
    Breakdown {
        lines: previous_text.lines().count(),
        resident_kb,
        copy: median(&mut copy),
        input_edit: median(&mut edit_times),
        reparse: median(&mut reparse),
        full_parse: median(&mut full),
        lower: median(&mut lower),
        analyze: median(&mut analyze),
        model: median(&mut model),
        loops: median(&mut loops),
        drop_old: median(&mut drop_old),
        hover: median(&mut hover),
    }
}

/// The server to measure: `HPF_LS_BIN`, else the release build; exits when it is missing.
pub(crate) fn server_binary() -> PathBuf {
    let binary = std::env::var_os("HPF_LS_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/release/hpf-ls"));
    if !binary.exists() {
        eprintln!("{} does not exist: run `cargo build --release -p hpf-ls` first", binary.display());
        std::process::exit(2);
    }
    binary
}

/// The sizes and shapes named on the command line (numbers of lines, and
/// `units`, `module`, `program`), each defaulting to all.
fn sizes_and_shapes(args: &[String], default_sizes: &[usize]) -> (Vec<usize>, Vec<Shape>) {
    let mut sizes = Vec::new();
    let mut shapes = Vec::new();
    for arg in args {
        match Shape::ALL.iter().find(|it| it.name() == arg) {
            Some(shape) => shapes.push(*shape),
            None => {
                sizes.push(arg.parse().unwrap_or_else(|_| {
                    panic!("`{arg}` is not a number of lines nor a shape (units, module, program)")
                }))
            }
        }
    }
    if sizes.is_empty() {
        sizes = default_sizes.to_vec();
    }
    if shapes.is_empty() {
        shapes = Shape::ALL.to_vec();
    }
    (sizes, shapes)
}

pub fn run(args: &[String]) {
    let (sizes, shapes) = sizes_and_shapes(args, &[1_000, 10_000, 100_000]);
    let binary = server_binary();
    println!(
        "LSP latency of {}; cores: {}",
        binary.display(),
        std::thread::available_parallelism().map_or(0, |it| it.get())
    );
    let mut all = Vec::new();
    for &shape in &shapes {
        for &lines in &sizes {
            all.push(measure(&binary, lines, shape));
        }
    }
    println!();
    println!(
        "| shape | lines | MB | diagnostics (message MB) | open→diagnostics median / p95 (n) | edit→diagnostics median / p95 (n) | host-spec edit→diagnostics median / p95 (n) | hover median / p95 (n) | RSS: peak after 1st open / after opens / peak at end |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for it in &all {
        let (open_median, open_p95) = median_p95(&it.open);
        let (edit_median, edit_p95) = median_p95(&it.edit);
        let (hover_median, hover_p95) = median_p95(&it.hover);
        let host_edit = match it.host_edit.is_empty() {
            true => "–".to_string(),
            false => {
                let (median, p95) = median_p95(&it.host_edit);
                format!("{median:.1} / {p95:.1} ms ({})", it.host_edit.len())
            }
        };
        println!(
            "| {} | {} | {:.2} | {} ({:.2}) | {open_median:.1} / {open_p95:.1} ms ({}) | {edit_median:.1} / {edit_p95:.1} ms ({}) | {host_edit} | {hover_median:.2} / {hover_p95:.2} ms ({}, {} answered) | {} / {} / {} |",
            it.shape.name(),
            it.lines,
            it.bytes as f64 / 1e6,
            it.diagnostics,
            it.diagnostics_bytes as f64 / 1e6,
            it.open.len(),
            it.edit.len(),
            it.hover.len(),
            it.hover_answered,
            mb(it.peak_after_open_kb),
            mb(it.rss_after_opens_kb),
            mb(it.peak_rss_kb),
        );
    }
    println!();
    println!("Open → diagnostics split at the client (medians): didOpen read by the server / first byte of publishDiagnostics / all of it:");
    for it in &all {
        let (accepted, _) = median_p95(&it.open_accepted);
        let (server, _) = median_p95(&it.open_server);
        let (open, _) = median_p95(&it.open);
        println!("  {} lines of {}: {accepted:.1} ms / {server:.1} ms / {open:.1} ms", it.lines, it.shape.name());
    }
    println!(
        "Edit → diagnostics split at the client (medians): until the first byte of publishDiagnostics / reading it:"
    );
    for it in &all {
        let (server, _) = median_p95(&it.edit_server);
        let (transfer, _) = median_p95(&it.edit_transfer);
        println!("  {} lines of {}: {server:.1} ms / {transfer:.1} ms", it.lines, it.shape.name());
    }
    println!("Server RSS after the opens, then after each edit:");
    for it in &all {
        let during: Vec<String> = it.rss_during_edits_kb.iter().map(|it| mb(*it)).collect();
        println!("  {} lines of {}: {}; {}", it.lines, it.shape.name(), mb(it.rss_after_opens_kb), during.join(", "));
    }

    println!();
    print_breakdowns(&sizes, &shapes);
}

/// `hpf-bench edit [LINES...]`: the in-process breakdown alone.
pub fn run_breakdown(args: &[String]) {
    let (sizes, shapes) = sizes_and_shapes(args, &[100_000]);
    println!("cores: {}", std::thread::available_parallelism().map_or(0, |it| it.get()));
    print_breakdowns(&sizes, &shapes);
}

/// `hpf-bench editloop LINES SHAPE KIND ROUNDS`: one kind of edit (`proc`,
/// `host` or `iface`) analysed ROUNDS times in-process, for a profiler
/// (`perf record`): the open is the only other work. Prints the median.
pub fn run_edit_loop(args: &[String]) {
    let lines: usize = args.first().and_then(|it| it.parse().ok()).unwrap_or(100_000);
    let shape = match args.get(1).map(String::as_str) {
        Some("units") => Shape::Units,
        Some("program") => Shape::Program,
        _ => Shape::Module,
    };
    let kind = args.get(2).map_or("proc", String::as_str);
    let rounds: usize = args.get(3).and_then(|it| it.parse().ok()).unwrap_or(200);
    hpf_ls::server::hooks::init_log();
    let (original, edited, _) = edited_text(lines, shape);
    let original = match kind {
        "iface" => original.replacen(
            "!HPF$ ALIGN s(i) WITH tt(i, 1)\n",
            &format!("!HPF$ ALIGN s(i) WITH tt(i, 1)\n{INTERFACE_BODY}"),
            1,
        ),
        _ => original,
    };
    let edited = match kind {
        "host" => {
            let (line, column) = spots(&original).host_edit.expect("a host");
            let at = original.lines().take(line).map(|it| it.len() + 1).sum::<usize>() + column;
            let mut edited = original.clone();
            edited.replace_range(at..at + 1, "2");
            edited
        }
        "iface" => original.replacen("integer(4), intent(in) :: k", "integer(8), intent(in) :: k", 1),
        _ => edited,
    };
    let ropes = [ropey::Rope::from_str(&edited), ropey::Rope::from_str(&original)];
    let form = syntax::SourceForm::Free;
    let settings = hpf_ls::server::settings::Settings::default();
    let mut previous = hpf_ls::server::hooks::analyse(ropes[1].clone(), form, None, &settings);
    hpf_ls::server::hooks::publish_frame_len(&previous);
    let (mut times, mut computed) = (Vec::new(), 0);
    for round in 0..rounds {
        let start = Instant::now();
        let analysed = hpf_ls::server::hooks::analyse(ropes[round % 2].clone(), form, Some(previous), &settings);
        std::hint::black_box(hpf_ls::server::hooks::publish_frame_len(&analysed));
        times.push(start.elapsed());
        computed = analysed.computed_chunks;
        previous = analysed;
    }
    println!(
        "{} {kind}: analyse + frame median {:.2} ms ({computed} computed, {rounds} rounds)",
        shape.name(),
        ms(median(&mut times))
    );
}

/// `hpf-bench openloop LINES SHAPE ROUNDS`: the server's open of the
/// generated text (`hooks::analyse` without a previous analysis, then the
/// publishDiagnostics frame) ROUNDS times in-process, each analysis dropped
/// before the next, for a profiler or for repeated timing on a loaded
/// machine (`HPF_LS_LOG=hpf_ls=debug` shows each open's phases). Prints the
/// median and the minimum, and the CPU time of the process per open.
pub fn run_open_loop(args: &[String]) {
    let lines: usize = args.first().and_then(|it| it.parse().ok()).unwrap_or(100_000);
    let shape = match args.get(1).map(String::as_str) {
        Some("units") => Shape::Units,
        Some("program") => Shape::Program,
        _ => Shape::Module,
    };
    let rounds: usize = args.get(2).and_then(|it| it.parse().ok()).unwrap_or(10).max(1);
    hpf_ls::server::hooks::init_log();
    let rope = ropey::Rope::from_str(&generate_text(lines, shape));
    let form = syntax::SourceForm::Free;
    let settings = hpf_ls::server::settings::Settings::default();
    let mut times = Vec::new();
    let cpu_before = process_cpu();
    for _ in 0..rounds {
        let start = Instant::now();
        let analysed = hpf_ls::server::hooks::analyse(rope.clone(), form, None, &settings);
        std::hint::black_box(hpf_ls::server::hooks::publish_frame_len(&analysed));
        times.push(start.elapsed());
        drop(analysed);
    }
    let cpu = process_cpu().saturating_sub(cpu_before) / rounds as u32;
    let min = *times.iter().min().expect("one round");
    println!(
        "{} open: analyse + frame median {:.1} ms, min {:.1} ms, CPU {:.1} ms per open ({rounds} rounds)",
        shape.name(),
        ms(median(&mut times)),
        ms(min),
        ms(cpu),
    );
}

/// The CPU time (user and system, all threads) of this process so far.
fn process_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // After the command's closing parenthesis: fields 3.., utime and stime are 14 and 15.
    let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |it| it.1).split_whitespace().collect();
    let ticks = |at: usize| fields.get(at).and_then(|it| it.parse::<u64>().ok()).unwrap_or(0);
    // Clock ticks of 1/100 s (USER_HZ on Linux).
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

/// The server's chunked analysis of one edit, in-process.
struct Chunked {
    shape: Shape,
    lines: usize,
    chunks: usize,
    computed: usize,
    analyse: Duration,
    frame: Duration,
    hover: Duration,
    resident_kb: Option<u64>,
    /// An edit of the module every unit USEs: every chunk is analysed again.
    module_edit: Duration,
    /// An edit of the host's specification part few procedures see, and the chunks it computed.
    host_edit: Option<(Duration, usize)>,
    /// An edit inside an interface body of the host's specification part no procedure names.
    interface_edit: Option<(Duration, usize)>,
}

/// An interface body the interface-body edits change (`integer(4)` ↔ `integer(8)`).
const INTERFACE_BODY: &str = "  interface
    subroutine smooth(a, k)
      real, intent(inout) :: a(:, :)
      integer(4), intent(in) :: k
    end subroutine smooth
  end interface
";

fn chunked(target_lines: usize, shape: Shape) -> Chunked {
    let (original, edited, at) = edited_text(target_lines, shape);
    let ropes = [ropey::Rope::from_str(&edited), ropey::Rope::from_str(&original)];
    let form = syntax::SourceForm::Free;
    let settings = hpf_ls::server::settings::Settings::default();
    let rss_before = status_kb("/proc/self/status", "VmRSS");
    let mut previous = hpf_ls::server::hooks::analyse(ropes[1].clone(), form, None, &settings);
    let rss_after = status_kb("/proc/self/status", "VmRSS");
    let resident_kb = rss_after.zip(rss_before).map(|(after, before)| after.saturating_sub(before));
    hpf_ls::server::hooks::publish_frame_len(&previous);
    let (mut analyse, mut frame, mut hover) = (Vec::new(), Vec::new(), Vec::new());
    let mut computed = 0;
    for round in 0..20 {
        let start = Instant::now();
        let analysed = hpf_ls::server::hooks::analyse(ropes[round % 2].clone(), form, Some(previous), &settings);
        analyse.push(start.elapsed());
        computed = analysed.computed_chunks;
        let start = Instant::now();
        std::hint::black_box(hpf_ls::server::hooks::publish_frame_len(&analysed));
        frame.push(start.elapsed());
        let start = Instant::now();
        let placed = analysed.chunk_at(at);
        let analysis = analysed.analysis_of(placed);
        std::hint::black_box(analysis::ide::hover(&analysis, placed.chunk.analysed_text(), placed.local(at), true));
        hover.push(start.elapsed());
        previous = analysed;
    }
    // The module's constant changed: every unit (every procedure of the host) is analysed again.
    let mut module_edit = Vec::new();
    let module_ropes = [ropey::Rope::from_str(&original.replacen("n = 256", "n = 255", 1)), ropes[1].clone()];
    for round in 0..4 {
        let start = Instant::now();
        let analysed = hpf_ls::server::hooks::analyse(module_ropes[round % 2].clone(), form, Some(previous), &settings);
        module_edit.push(start.elapsed());
        assert_eq!(
            analysed.computed_chunks,
            analysed.chunks.len(),
            "the module and every unit that USEs it are analysed again"
        );
        previous = analysed;
    }
    // `s`'s alignment: the host, the procedures that use `s` (and the main program that USEs the module).
    let spots = spots(&original);
    let host_edit = spots.host_edit.map(|(line, column)| {
        let at = original.lines().take(line).map(|it| it.len() + 1).sum::<usize>() + column;
        let mut edited = original.clone();
        edited.replace_range(at..at + 1, "2");
        let host_ropes = [ropey::Rope::from_str(&edited), ropes[1].clone()];
        let (mut times, mut computed) = (Vec::new(), 0);
        for round in 0..10 {
            let start = Instant::now();
            let analysed =
                hpf_ls::server::hooks::analyse(host_ropes[round % 2].clone(), form, Some(previous.clone()), &settings);
            times.push(start.elapsed());
            computed = analysed.computed_chunks;
            previous = analysed;
        }
        (median(&mut times), computed)
    });
    // An interface body in the host's specification part that no procedure names: `k`'s kind.
    let interface_edit = spots.host_edit.map(|_| {
        let anchor = "!HPF$ ALIGN s(i) WITH tt(i, 1)\n";
        let with_interface = original.replacen(anchor, &format!("{anchor}{INTERFACE_BODY}"), 1);
        let edited = with_interface.replacen("integer(4), intent(in) :: k", "integer(8), intent(in) :: k", 1);
        let ropes = [ropey::Rope::from_str(&edited), ropey::Rope::from_str(&with_interface)];
        let mut previous = hpf_ls::server::hooks::analyse(ropes[1].clone(), form, None, &settings);
        let (mut times, mut computed) = (Vec::new(), 0);
        for round in 0..10 {
            let start = Instant::now();
            let analysed = hpf_ls::server::hooks::analyse(ropes[round % 2].clone(), form, Some(previous), &settings);
            times.push(start.elapsed());
            computed = analysed.computed_chunks;
            previous = analysed;
        }
        (median(&mut times), computed)
    });
    Chunked {
        shape,
        host_edit,
        interface_edit,
        module_edit: median(&mut module_edit),
        lines: original.lines().count(),
        chunks: previous.chunks.len(),
        computed,
        analyse: median(&mut analyse),
        frame: median(&mut frame),
        hover: median(&mut hover),
        resident_kb,
    }
}

fn print_breakdowns(sizes: &[usize], shapes: &[Shape]) {
    println!("In-process, the server's chunked analysis of one edit (medians of 20; `hooks::analyse` from the previous analysis, then the publishDiagnostics frame, then a hover):");
    println!("| shape | lines | chunks (computed per edit) | analyse | frame | hover | RSS of one document's analysis | an edit of the module (host) all units USE | a host-spec edit few procedures see (computed) | an edit in an interface body of the host no procedure names (computed) |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (&shape, &lines) in shapes.iter().flat_map(|shape| sizes.iter().map(move |lines| (shape, lines))) {
        let it = chunked(lines, shape);
        println!(
            "| {} | {} | {} ({}) | {:.2} ms | {:.2} ms | {:.2} ms | {} | {:.1} ms | {} | {} |",
            it.shape.name(),
            it.lines,
            it.chunks,
            it.computed,
            ms(it.analyse),
            ms(it.frame),
            ms(it.hover),
            mb(it.resident_kb),
            ms(it.module_edit),
            it.host_edit.map_or("–".to_string(), |(time, computed)| format!("{:.1} ms ({computed})", ms(time))),
            it.interface_edit.map_or("–".to_string(), |(time, computed)| format!("{:.1} ms ({computed})", ms(time))),
        );
    }
    println!();
    println!("Baseline: the same edit through the whole-file pipeline the server ran before 2026-12-05 (medians; reparse, lowering and analysis of the whole file):");
    println!(
        "| lines | copy text ×2 | input_edit | incremental reparse (full parse) | lower_tree | analyze_file (model + loops) | drop old analysis | sum | ide::hover | RSS of one tree + analysis |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for &lines in sizes {
        let it = breakdown(lines);
        let lines = it.lines;
        let sum = it.copy + it.input_edit + it.reparse + it.lower + it.analyze + it.drop_old;
        println!(
            "| {lines} | {:.2} ms | {:.2} ms | {:.2} ms ({:.1} ms) | {:.1} ms | {:.1} ms ({:.1} + {:.1} ms) | {:.2} ms | {:.1} ms | {:.2} ms | {} |",
            ms(it.copy),
            ms(it.input_edit),
            ms(it.reparse),
            ms(it.full_parse),
            ms(it.lower),
            ms(it.analyze),
            ms(it.model),
            ms(it.loops),
            ms(it.drop_old),
            ms(sum),
            ms(it.hover),
            mb(it.resident_kb),
        );
    }
}
