//! The tolerant framing layer in front of tower-lsp-server, on arbitrary
//! bytes (headers and bodies): it never panics or stops early, forwards
//! only whole frames holding a JSON-RPC message, answers everything else
//! with whole error frames, and `merge_output` passes whole frames through.

#![no_main]

use hpf_ls::server::transport::{filter_input, merge_output};
use libfuzzer_sys::fuzz_target;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Splits `bytes` into `Content-Length` frames, panicking on anything else.
fn frames(mut bytes: &[u8], what: &str) -> Vec<serde_json::Value> {
    let mut res = Vec::new();
    while !bytes.is_empty() {
        let header_end = bytes.windows(4).position(|it| it == b"\r\n\r\n").expect("a whole header");
        let header = std::str::from_utf8(&bytes[..header_end]).expect("an ASCII header");
        let length: usize = header
            .strip_prefix("Content-Length: ")
            .and_then(|it| it.parse().ok())
            .unwrap_or_else(|| panic!("{what}: bad header {header:?}"));
        let body = &bytes[header_end + 4..header_end + 4 + length];
        res.push(serde_json::from_slice(body).unwrap_or_else(|error| panic!("{what}: body is not JSON: {error}")));
        bytes = &bytes[header_end + 4 + length..];
    }
    res
}

fuzz_target!(|data: &[u8]| {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    runtime.block_on(async {
        let (to_server, mut server_side) = tokio::io::duplex(1 << 16);
        let (errors, mut error_frames) = tokio::sync::mpsc::channel(16);
        let input = data.to_vec();
        let filter = tokio::spawn(filter_input(std::io::Cursor::new(input), to_server, errors));
        let mut forwarded = Vec::new();
        let read_forwarded = server_side.read_to_end(&mut forwarded);
        let collect_errors = async {
            let mut res = Vec::new();
            while let Some(frame) = error_frames.recv().await {
                res.extend_from_slice(&frame.to_vec());
            }
            res
        };
        let (read, error_bytes) = tokio::join!(read_forwarded, collect_errors);
        read.expect("the duplex reads");
        filter.await.expect("filter_input does not panic");
        for message in frames(&forwarded, "forwarded") {
            assert_eq!(message["jsonrpc"], "2.0", "forwarded {message}");
        }
        for message in frames(&error_bytes, "error") {
            assert!(message["error"]["code"].is_i64(), "error frame {message}");
        }

        // The output side: our own frames (from the server) and error frames
        // interleave, whole.
        let (mut server_writes, merge_input) = tokio::io::duplex(1 << 16);
        let (errors, error_frames) = tokio::sync::mpsc::channel(16);
        let (output, mut client_side) = tokio::io::duplex(1 << 16);
        let merger = tokio::spawn(merge_output(merge_input, error_frames, output));
        let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": String::from_utf8_lossy(data)}).to_string();
        let frame = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        let write = async {
            server_writes.write_all(frame.as_bytes()).await.expect("the duplex writes");
            drop(server_writes);
            let error_body = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;
            let error = format!("Content-Length: {}\r\n\r\n{error_body}", error_body.len()).into_bytes();
            let _ = errors.send(error.into()).await;
            drop(errors);
        };
        let mut written = Vec::new();
        let (_, read) = tokio::join!(write, client_side.read_to_end(&mut written));
        read.expect("the duplex reads");
        merger.await.expect("merge_output does not panic");
        let messages = frames(&written, "merged");
        assert_eq!(messages.len(), 2, "both frames arrive");
    });
});
