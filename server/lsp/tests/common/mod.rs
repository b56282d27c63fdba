//! The stdio LSP client and helpers shared by the integration tests that
//! drive the real `hpf-ls` binary (protocol, hostile, edit_sequences,
//! safe_runs).
//!
//! A `Client` is configured with `Client::builder()`: the `initialize`
//! capabilities, root URI and initialization options, the server's
//! environment, how long to wait for a message, how the server must exit
//! after `shutdown` and `exit`, and a bound on its peak memory checked at
//! shutdown.

// Each test binary compiles this module on its own and uses only part of it.
#![allow(dead_code)]

use std::ffi::{OsStr, OsString};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Whether `--ordered-reductions` makes `hpf-ls build` generate another
/// program for `source` than the default mode does (it has a floating-point
/// reduction, or either mode refuses it): tests that build both modes build
/// one where the two are the same text.
pub fn reduction_modes_differ(source: &std::path::Path) -> bool {
    let generate = |ordered_reductions| {
        let input = hpf_ls::cli::InputOptions { paths: vec![source.to_path_buf()], ..Default::default() };
        hpf_ls::cli::build::generated_program(input, backend::LowerOptions { ordered_reductions }).ok().map(|it| it.0)
    };
    let default = generate(false);
    default.is_none() || default != generate(true)
}

pub const SEED: &str = include_str!("../../../../tests/corpus/seed_fig6.f90");

/// How a test's server is started and stopped.
pub struct ClientBuilder {
    capabilities: Value,
    root_uri: Value,
    initialization_options: Option<Value>,
    env: Vec<(String, OsString)>,
    timeout: Duration,
    exit_within: Duration,
    clean_exit: bool,
    max_peak_rss_kb: Option<u64>,
}

impl ClientBuilder {
    /// The client capabilities sent with `initialize` (default `{}`).
    pub fn capabilities(mut self, capabilities: Value) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// The workspace: a `file://` URI, or null (the default).
    pub fn root_uri(mut self, root_uri: Value) -> Self {
        self.root_uri = root_uri;
        self
    }

    /// `initializationOptions`, e.g. `{"hpf": settings}` (default: none).
    pub fn initialization_options(mut self, options: Value) -> Self {
        self.initialization_options = Some(options);
        self
    }

    /// An environment variable of the server process.
    pub fn env(mut self, key: &str, value: impl AsRef<OsStr>) -> Self {
        self.env.push((key.to_string(), value.as_ref().to_owned()));
        self
    }

    /// How long to wait for each message from the server (default 60 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long `shutdown` waits for the process to end after `exit`, and
    /// whether it must end with success (default: 5 s, success).
    pub fn exit_within(mut self, limit: Duration, clean: bool) -> Self {
        self.exit_within = limit;
        self.clean_exit = clean;
        self
    }

    /// `shutdown` first asserts the server's peak resident memory (VmHWM).
    pub fn max_peak_rss_kb(mut self, limit: u64) -> Self {
        self.max_peak_rss_kb = Some(limit);
        self
    }

    /// Spawns the server, sends `initialize` (asserting it succeeds, its
    /// result kept in `initialize_result`) and `initialized`.
    pub fn start(self) -> Client {
        let mut command = Command::new(env!("CARGO_BIN_EXE_hpf-ls"));
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        for (key, value) in &self.env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("the server starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, messages) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut length = None;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(value) = line.strip_prefix("Content-Length: ") {
                        length = value.parse::<usize>().ok();
                    }
                }
                let mut body = vec![0; length.expect("a Content-Length header")];
                if reader.read_exact(&mut body).is_err() {
                    return;
                }
                let message: Value = serde_json::from_slice(&body).expect("the server writes JSON");
                if sender.send(message).is_err() {
                    return;
                }
            }
        });
        let mut client = Client {
            child,
            stdin,
            messages,
            next_id: 1,
            pending: Vec::new(),
            initialize_result: Value::Null,
            timeout: self.timeout,
            exit_within: self.exit_within,
            clean_exit: self.clean_exit,
            max_peak_rss_kb: self.max_peak_rss_kb,
        };
        let mut params = json!({"processId": null, "rootUri": self.root_uri, "capabilities": self.capabilities});
        if let Some(options) = self.initialization_options {
            params["initializationOptions"] = options;
        }
        client.initialize_result = client.request("initialize", params);
        client.notify("initialized", json!({}));
        client
    }
}

pub struct Client {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
    next_id: i64,
    /// Messages received while waiting for something else (notifications,
    /// other responses, and server requests, which were answered).
    pub pending: Vec<Value>,
    /// The `result` of `initialize`.
    pub initialize_result: Value,
    timeout: Duration,
    exit_within: Duration,
    clean_exit: bool,
    max_peak_rss_kb: Option<u64>,
}

impl Client {
    pub fn builder() -> ClientBuilder {
        ClientBuilder {
            capabilities: json!({}),
            root_uri: Value::Null,
            initialization_options: None,
            env: Vec::new(),
            timeout: Duration::from_secs(60),
            exit_within: Duration::from_secs(5),
            clean_exit: true,
            max_peak_rss_kb: None,
        }
    }

    /// Bytes as they are, framed or not.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.flush().unwrap();
    }

    /// One frame with a correct `Content-Length` around `body` (JSON or not).
    pub fn send_frame(&mut self, body: &[u8]) {
        let mut framed = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        framed.extend_from_slice(body);
        self.send_raw(&framed);
    }

    pub fn send(&mut self, message: &Value) {
        self.send_frame(&serde_json::to_vec(message).unwrap());
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and returns its id, without waiting for the response.
    pub fn send_request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The next message, whatever it is; a request from the server stays unanswered.
    pub fn next_message(&mut self) -> Value {
        let Ok(message) = self.messages.recv_timeout(self.timeout) else {
            let recent = &self.pending[self.pending.len().saturating_sub(20)..];
            panic!(
                "the server did not answer in time; received meanwhile {} message(s), the last: {recent:#?}",
                self.pending.len()
            );
        };
        message
    }

    /// The next message; a request from the server (workspace/configuration,
    /// ...) is answered with null first.
    pub fn receive(&mut self) -> Value {
        let message = self.next_message();
        if message.get("id").is_some() && message.get("method").is_some() {
            let id = message["id"].clone();
            self.send(&json!({"jsonrpc": "2.0", "id": id, "result": null}));
        }
        message
    }

    /// The response to request `id` (result or error); other messages are kept in `pending`.
    pub fn response(&mut self, id: i64) -> Value {
        let is_it = |it: &Value| it["id"] == id && it.get("method").is_none();
        if let Some(idx) = self.pending.iter().position(is_it) {
            return self.pending.remove(idx);
        }
        loop {
            let message = self.receive();
            if is_it(&message) {
                return message;
            }
            self.pending.push(message);
        }
    }

    /// The whole response (result or error) to a new request.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        self.response(id)
    }

    /// The result of a new request, asserted not to be an error.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let response = self.call(method, params);
        assert!(response.get("error").is_none(), "{method} failed: {response}");
        response["result"].clone()
    }

    /// The diagnostics published for `uri` at `version`.
    pub fn diagnostics(&mut self, uri: &str, version: i64) -> Vec<Value> {
        loop {
            if let Some(idx) = self.pending.iter().position(|it| {
                it["method"] == "textDocument/publishDiagnostics"
                    && it["params"]["uri"] == uri
                    && it["params"]["version"] == version
            }) {
                let message = self.pending.remove(idx);
                return message["params"]["diagnostics"].as_array().unwrap().clone();
            }
            let message = self.receive();
            self.pending.push(message);
        }
    }

    /// The request `method` the server sent (answered with null), waiting
    /// for it if it has not arrived: a server's own requests race with what
    /// it publishes.
    pub fn server_request(&mut self, method: &str) -> Value {
        loop {
            if let Some(found) = self.pending.iter().find(|it| it["method"] == method && it.get("id").is_some()) {
                return found.clone();
            }
            let message = self.receive();
            self.pending.push(message);
        }
    }

    /// Waits until `count` log messages containing `text` arrived.
    pub fn wait_for_logs(&mut self, text: &str, count: usize) {
        let seen = |pending: &[Value]| {
            pending
                .iter()
                .filter(|it| it["method"] == "window/logMessage")
                .filter(|it| it["params"]["message"].as_str().is_some_and(|it| it.contains(text)))
                .count()
        };
        while seen(&self.pending) < count {
            let message = self.receive();
            self.pending.push(message);
        }
    }

    /// Opens `uri` at version 1.
    pub fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "fortran", "version": 1, "text": text}}),
        );
    }

    /// The server's peak resident memory so far (VmHWM), 0 where unknown.
    pub fn peak_rss_kb(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        status
            .lines()
            .find_map(|it| it.strip_prefix("VmHWM:"))
            .and_then(|it| it.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }

    /// The exit status once the process ended, or `None` (after killing it)
    /// when it is still running `within` from now.
    pub fn wait_for_exit(&mut self, within: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `shutdown` and `exit`: the server ends in time (with success unless
    /// the builder said otherwise), after its peak memory is checked where
    /// the builder set a bound.
    pub fn shutdown(mut self) {
        if let Some(limit) = self.max_peak_rss_kb {
            let peak = self.peak_rss_kb();
            assert!(peak <= limit, "peak RSS {peak} kB");
        }
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let limit = self.exit_within;
        let Some(status) = self.wait_for_exit(limit) else {
            panic!("the server did not exit within {limit:?} of `exit`");
        };
        if self.clean_exit {
            assert!(status.success(), "exit status {status}");
        }
    }
}

/// The diagnostics with the URIs of their related locations set to null
/// (they name the document itself, which differs between two documents).
pub fn without_related_uris(mut diagnostics: Vec<Value>) -> Vec<Value> {
    for diagnostic in &mut diagnostics {
        for item in diagnostic.get_mut("relatedInformation").and_then(Value::as_array_mut).into_iter().flatten() {
            item["location"]["uri"] = Value::Null;
        }
    }
    diagnostics
}

/// LSP position (UTF-16, lines ended by `\n`) of a byte offset, computed
/// independently of the server.
pub fn position(text: &str, offset: usize) -> Value {
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let line_start = before.rfind('\n').map_or(0, |it| it + 1);
    let character: usize = text[line_start..offset].chars().map(char::len_utf16).sum();
    json!({"line": line, "character": character})
}

/// A fresh, empty directory `hpf-ls-{name}-{pid}` in the temporary directory.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hpf-ls-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A deterministic xorshift generator: no dependency, reproducible failures.
pub struct Random(pub u64);

impl Random {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}
