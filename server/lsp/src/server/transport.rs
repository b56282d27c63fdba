//! A tolerant stdio transport in front of tower-lsp-server.
//!
//! tower-lsp-server's reader stops for good at the first frame it cannot
//! decode (its `FramedRead` ends after an error), so one bad message would
//! end the session. Here every frame is read and checked first: a body that
//! is not JSON gets a `Parse error` response, a JSON value that is not a
//! JSON-RPC message gets `Invalid Request`, and only well-formed messages
//! reach the server. Responses (the server's and ours) go to stdout one
//! whole frame at a time.

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// Bodies larger than this are refused (and skipped) rather than buffered.
pub const MAX_BODY: usize = 256 * 1024 * 1024;

fn frame(body: &[u8]) -> Vec<u8> {
    let mut res = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    res.extend_from_slice(body);
    res
}

fn error_frame(id: serde_json::Value, code: i64, message: &str) -> Vec<u8> {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    frame(body.to_string().as_bytes())
}

/// Whether `value` has the shape of a JSON-RPC 2.0 request, notification or response.
fn is_message(value: &serde_json::Value) -> bool {
    let Some(object) = value.as_object() else { return false };
    if object.get("jsonrpc").and_then(|it| it.as_str()) != Some("2.0") {
        return false;
    }
    let id_ok = object.get("id").is_none_or(|it| it.is_string() || it.is_i64() || it.is_u64() || it.is_null());
    let params_ok = object.get("params").is_none_or(|it| it.is_object() || it.is_array() || it.is_null());
    match object.get("method") {
        Some(method) => method.is_string() && id_ok && params_ok,
        None => object.contains_key("id") && (object.contains_key("result") || object.contains_key("error")),
    }
}

/// Reads frames from `input`; forwards good ones to `server`, answers bad ones on `errors`.
pub async fn filter_input(input: impl AsyncRead + Unpin, mut server: DuplexStream, errors: mpsc::Sender<Vec<u8>>) {
    let mut reader = BufReader::new(input);
    loop {
        // Headers: up to an empty line. Lines without Content-Length are skipped.
        let mut length: Option<usize> = None;
        let mut saw_header = false;
        loop {
            let mut line = Vec::new();
            match reader.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end_matches(['\r', '\n']);
            if text.is_empty() {
                if saw_header {
                    break;
                }
                continue;
            }
            saw_header = true;
            if let Some((name, value)) = text.split_once(':') {
                if name.trim().eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().ok();
                }
            }
        }
        let Some(length) = length else {
            let _ =
                errors.send(error_frame(serde_json::Value::Null, -32700, "Parse error: missing Content-Length")).await;
            continue;
        };
        if length > MAX_BODY {
            // Skip the body without keeping it.
            let mut remaining = length as u64;
            let mut sink = tokio::io::sink();
            let copied = tokio::io::copy(&mut (&mut reader).take(remaining), &mut sink).await.unwrap_or(0);
            remaining -= copied;
            let _ = errors.send(error_frame(serde_json::Value::Null, -32700, "Parse error: message too large")).await;
            if remaining > 0 {
                return;
            }
            continue;
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).await.is_err() {
            return;
        }
        match serde_json::from_slice::<serde_json::Value>(&body) {
            Err(_) => {
                let _ = errors.send(error_frame(serde_json::Value::Null, -32700, "Parse error")).await;
            }
            Ok(value) if !is_message(&value) => {
                let id = value.get("id").cloned().filter(|it| it.is_string() || it.is_number()).unwrap_or_default();
                let _ = errors.send(error_frame(id, -32600, "Invalid Request")).await;
            }
            Ok(_) => {
                if server.write_all(&frame(&body)).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// Copies whole frames from the server (`from_server`) and our own error
/// frames (`errors`) to `output`, never interleaving two frames.
pub async fn merge_output(
    from_server: DuplexStream,
    mut errors: mpsc::Receiver<Vec<u8>>,
    mut output: impl AsyncWrite + Unpin,
) {
    let mut reader = BufReader::new(from_server);
    let (mut server_open, mut errors_open) = (true, true);
    loop {
        let frame = tokio::select! {
            frame = read_frame(&mut reader), if server_open => match frame {
                Some(frame) => frame,
                None => {
                    server_open = false;
                    continue;
                }
            },
            error = errors.recv(), if errors_open => match error {
                Some(frame) => frame,
                None => {
                    errors_open = false;
                    continue;
                }
            },
            else => return,
        };
        if output.write_all(&frame).await.is_err() || output.flush().await.is_err() {
            return;
        }
    }
}

/// One complete frame as the server wrote it (headers and body).
async fn read_frame(reader: &mut BufReader<DuplexStream>) -> Option<Vec<u8>> {
    let mut headers = Vec::new();
    let mut length = None;
    loop {
        let mut line = Vec::new();
        if reader.read_until(b'\n', &mut line).await.ok()? == 0 {
            return None;
        }
        headers.extend_from_slice(&line);
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end();
        if text.is_empty() {
            break;
        }
        if let Some(value) = text.strip_prefix("Content-Length:") {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).await.ok()?;
    headers.extend_from_slice(&body);
    Some(headers)
}

#[cfg(test)]
mod tests {
    use super::is_message;
    use serde_json::json;

    #[test]
    fn message_shapes() {
        assert!(is_message(&json!({"jsonrpc": "2.0", "id": 1, "method": "hover", "params": {}})));
        assert!(is_message(&json!({"jsonrpc": "2.0", "method": "exit"})));
        assert!(is_message(&json!({"jsonrpc": "2.0", "id": "a", "result": null})));
        assert!(!is_message(&json!([1, 2])));
        assert!(!is_message(&json!({"jsonrpc": "1.0", "method": "exit"})));
        assert!(!is_message(&json!({"jsonrpc": "2.0", "id": {"x": 1}, "method": "hover"})));
        assert!(!is_message(&json!({"jsonrpc": "2.0", "method": 3})));
        assert!(!is_message(&json!({"jsonrpc": "2.0", "method": "hover", "params": 3})));
    }
}
