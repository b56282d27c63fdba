//! The whole language server in memory: the tolerant transport,
//! tower-lsp-server and every handler, on messages the fuzzer writes.
//!
//! Input: a mode byte, then either (even mode) JSON-RPC bodies separated by
//! NUL bytes, each framed here with its right `Content-Length`, or (odd
//! mode) raw bytes, headers included. An `initialize` (UTF-8 or UTF-16
//! positions by the mode's second bit) and `initialized` come first. In
//! body mode a last `hover` request must get its answer: the server keeps
//! serving whatever came before. `exit`, `hpf.run` and `hpf.build` (which
//! would start a compiler) are left out.

#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The server answers the last request within this, or the target fails.
const LIVENESS: Duration = Duration::from_secs(60);

fn frame(body: &[u8]) -> Vec<u8> {
    let mut res = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    res.extend_from_slice(body);
    res
}

/// Whether a message would end the session or start a compiler.
fn left_out(body: &[u8]) -> bool {
    let Ok(value) = serde_json::from_slice::<Value>(body) else { return false };
    let method = value.get("method").and_then(Value::as_str).unwrap_or("");
    let command = value.pointer("/params/command").and_then(Value::as_str).unwrap_or("");
    method == "exit" || (method == "workspace/executeCommand" && matches!(command, "hpf.run" | "hpf.build"))
}

/// The server's output as JSON messages; panics on a malformed frame.
fn messages(mut bytes: &[u8]) -> Vec<Value> {
    let mut res = Vec::new();
    while !bytes.is_empty() {
        let header_end = bytes.windows(4).position(|it| it == b"\r\n\r\n").expect("a whole header");
        let header = std::str::from_utf8(&bytes[..header_end]).expect("an ASCII header");
        let length: usize = header
            .lines()
            .find_map(|it| it.strip_prefix("Content-Length: "))
            .and_then(|it| it.parse().ok())
            .unwrap_or_else(|| panic!("bad header {header:?}"));
        let body = &bytes[header_end + 4..header_end + 4 + length];
        res.push(serde_json::from_slice(body).expect("the server writes JSON"));
        bytes = &bytes[header_end + 4 + length..];
    }
    res
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let raw = mode % 2 == 1;
    if raw && (rest.windows(14).any(|it| it == b"executeCommand") || rest.windows(2).any(|it| it == b"\\u")) {
        // A raw message could name `hpf.run` in ways we do not unpick.
        return;
    }
    let encodings = if mode & 2 == 0 { json!(["utf-16"]) } else { json!(["utf-8", "utf-16"]) };
    let initialize = json!({"jsonrpc": "2.0", "id": "fuzz-initialize", "method": "initialize", "params": {
        "processId": null, "rootUri": null,
        "capabilities": {"general": {"positionEncodings": encodings},
                         "textDocument": {"hover": {"contentFormat": ["markdown"]}}}}});
    let mut input = frame(initialize.to_string().as_bytes());
    input.extend(frame(br#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#));
    if raw {
        input.extend_from_slice(rest);
    } else {
        for body in rest.split(|it| *it == 0).filter(|it| !left_out(it)) {
            input.extend(frame(body));
        }
        let last = json!({"jsonrpc": "2.0", "id": "fuzz-last", "method": "textDocument/hover", "params": {
            "textDocument": {"uri": "file:///fuzz/a.f90"}, "position": {"line": 0, "character": 0}}});
        input.extend(frame(last.to_string().as_bytes()));
    }

    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let output = runtime.block_on(async move {
        let (mut client_writes, server_reads) = tokio::io::duplex(1 << 16);
        let (server_writes, mut client_reads) = tokio::io::duplex(1 << 16);
        let server = tokio::spawn(hpf_ls::server::serve(server_reads, server_writes));
        let write = async move {
            // A closed server is not a failure here; the answers tell.
            let _ = client_writes.write_all(&input).await;
        };
        let mut output = Vec::new();
        let read = client_reads.read_to_end(&mut output);
        let session = async { tokio::join!(write, read, server) };
        let (_, read, served) = tokio::time::timeout(LIVENESS, session).await.expect("the session ends in time");
        read.expect("the output reads");
        served.expect("the server does not panic");
        output
    });
    runtime.shutdown_timeout(Duration::from_secs(10));
    let messages = messages(&output);
    if !raw {
        assert!(
            messages.iter().any(|it| it["id"] == "fuzz-last" && it.get("method").is_none()),
            "the last request got no answer"
        );
    }
});
