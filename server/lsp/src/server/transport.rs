//! A tolerant stdio transport in front of tower-lsp-server.
//!
//! tower-lsp-server's reader stops for good at the first frame it cannot
//! decode (its `FramedRead` ends after an error), so one bad message would
//! end the session. Here every frame is read and checked first: a body that
//! is not JSON gets a `Parse error` response, a JSON value that is not a
//! JSON-RPC message gets `Invalid Request`, and only well-formed messages
//! reach the server. Responses (the server's and ours) go to stdout one
//! whole frame at a time, and so do the frames the server serialises itself
//! (diagnostics, on the analysis threads).

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// Bodies larger than this are refused (and skipped) rather than buffered.
pub const MAX_BODY: usize = 256 * 1024 * 1024;

/// Header lines longer than this are skipped (without being kept) and the
/// message they belong to gets a `Parse error`.
pub const MAX_HEADER_LINE: usize = 8 * 1024;

pub(crate) fn frame(body: &[u8]) -> Vec<u8> {
    let mut res = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    res.extend_from_slice(body);
    res
}

/// A whole frame as parts written one after the other: a large
/// `publishDiagnostics` is the JSON of each chunk's diagnostics as kept
/// with the chunk, written with `writev`, never copied into one buffer.
pub struct Frame {
    parts: Vec<(std::sync::Arc<Vec<u8>>, usize)>,
}

impl Frame {
    pub fn new() -> Frame {
        Frame { parts: Vec::new() }
    }

    /// Appends `bytes[from..]`.
    pub fn push(&mut self, bytes: std::sync::Arc<Vec<u8>>, from: usize) {
        self.parts.push((bytes, from));
    }

    pub fn len(&self) -> usize {
        self.parts.iter().map(|(bytes, from)| bytes.len() - from).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The frame in one buffer (tests).
    pub fn to_vec(&self) -> Vec<u8> {
        self.parts.iter().flat_map(|(bytes, from)| bytes[*from..].iter().copied()).collect()
    }
}

impl Default for Frame {
    fn default() -> Frame {
        Frame::new()
    }
}

impl From<Vec<u8>> for Frame {
    fn from(bytes: Vec<u8>) -> Frame {
        Frame { parts: vec![(std::sync::Arc::new(bytes), 0)] }
    }
}

/// Writes every part of `frame`, as few `writev` calls as the output takes.
async fn write_frame(output: &mut (impl AsyncWrite + Unpin), frame: &Frame) -> std::io::Result<()> {
    let mut slices: Vec<&[u8]> =
        frame.parts.iter().map(|(bytes, from)| &bytes[*from..]).filter(|it| !it.is_empty()).collect();
    let mut first = 0;
    while first < slices.len() {
        let batch: Vec<std::io::IoSlice> =
            slices[first..].iter().take(MAX_SLICES).map(|it| std::io::IoSlice::new(it)).collect();
        let mut written = output.write_vectored(&batch).await?;
        if written == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        // Step over what was written: whole slices, then part of one.
        while written > 0 {
            let len = slices[first].len();
            if written >= len {
                written -= len;
                first += 1;
            } else {
                slices[first] = &slices[first][written..];
                written = 0;
            }
        }
    }
    Ok(())
}

/// The slices of one `writev` (Linux's IOV_MAX is 1024).
const MAX_SLICES: usize = 1024;

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

/// Whether tower-lsp-server's own decoder takes `body`: it is stricter than
/// [`is_message`] (a duplicate `id` key, say), and its reader stops for good
/// at the first message it cannot decode, so such a message must not reach it.
fn decodes(body: &[u8]) -> bool {
    use tower_lsp_server::jsonrpc::{Request, Response};
    serde_json::from_slice::<Request>(body).is_ok() || serde_json::from_slice::<Response>(body).is_ok()
}

/// Reads frames from `input`; forwards good ones to `server`, answers bad ones on `errors`.
pub async fn filter_input(input: impl AsyncRead + Unpin, mut server: DuplexStream, errors: mpsc::Sender<Frame>) {
    let mut reader = BufReader::new(input);
    loop {
        // Headers: up to an empty line. Lines without Content-Length are skipped.
        let mut length: Option<usize> = None;
        let mut saw_header = false;
        let mut overlong = false;
        loop {
            let mut line = Vec::new();
            match (&mut reader).take(MAX_HEADER_LINE as u64).read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if !line.ends_with(b"\n") && line.len() == MAX_HEADER_LINE {
                // Skip the rest of an overlong line without keeping it.
                overlong = true;
                saw_header = true;
                loop {
                    let buffer = match reader.fill_buf().await {
                        Ok([]) | Err(_) => return,
                        Ok(buffer) => buffer,
                    };
                    let (used, done) = match buffer.iter().position(|it| *it == b'\n') {
                        Some(idx) => (idx + 1, true),
                        None => (buffer.len(), false),
                    };
                    reader.consume(used);
                    if done {
                        break;
                    }
                }
                continue;
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
            let message =
                if overlong { "Parse error: header line too long" } else { "Parse error: missing Content-Length" };
            let _ = errors.send(error_frame(serde_json::Value::Null, -32700, message).into()).await;
            continue;
        };
        if overlong || length > MAX_BODY {
            // Skip the body without keeping it.
            let mut remaining = length as u64;
            let mut sink = tokio::io::sink();
            let copied = tokio::io::copy(&mut (&mut reader).take(remaining), &mut sink).await.unwrap_or(0);
            remaining -= copied;
            let message = if overlong { "Parse error: header line too long" } else { "Parse error: message too large" };
            let _ = errors.send(error_frame(serde_json::Value::Null, -32700, message).into()).await;
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
                let _ = errors.send(error_frame(serde_json::Value::Null, -32700, "Parse error").into()).await;
            }
            Ok(value) if !is_message(&value) || !decodes(&body) => {
                let id = value.get("id").cloned().filter(|it| it.is_string() || it.is_number()).unwrap_or_default();
                let _ = errors.send(error_frame(id, -32600, "Invalid Request").into()).await;
            }
            Ok(_) => {
                if server.write_all(&frame(&body)).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// Copies whole frames from the server (`from_server`) and our own frames
/// (`errors`: error responses to bad input, and the diagnostics the server
/// serialises itself) to `output`, never interleaving two frames.
///
/// The server's frames are read in their own future and passed on through a
/// channel: `select!` may drop the future it did not pick, and dropping a
/// half-read frame would lose its header and stop the output for good.
pub async fn merge_output(
    from_server: DuplexStream,
    mut errors: mpsc::Receiver<Frame>,
    mut output: impl AsyncWrite + Unpin,
) {
    let (frames_sender, mut frames) = mpsc::channel(16);
    let read = async move {
        let mut reader = BufReader::new(from_server);
        while let Some(frame) = read_frame(&mut reader).await {
            if frames_sender.send(frame).await.is_err() {
                return;
            }
        }
    };
    let write = async move {
        let (mut server_open, mut errors_open) = (true, true);
        loop {
            let frame = tokio::select! {
                frame = frames.recv(), if server_open => match frame {
                    Some(frame) => Frame::from(frame),
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
            if write_frame(&mut output, &frame).await.is_err() || output.flush().await.is_err() {
                return;
            }
        }
    };
    tokio::join!(read, write);
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

    /// Found by the `lsp_server` fuzz target: a duplicate key passed
    /// `is_message` (serde_json keeps the last) but stopped tower-lsp-server's
    /// reader, and every later message went unanswered.
    #[test]
    fn duplicate_keys_do_not_reach_the_server() {
        let body = br#"{"jsonrpc": "2.0", "id": 7, "method": "x", "id": 10, "method": "textDocument/foldingRange"}"#;
        assert!(!super::decodes(body));
        assert!(super::decodes(br#"{"jsonrpc": "2.0", "id": 10, "method": "textDocument/foldingRange"}"#));
        assert!(super::decodes(br#"{"jsonrpc": "2.0", "id": 10, "result": null}"#));
    }
}

#[cfg(test)]
mod merge_tests {
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::{frame, merge_output};

    /// A frame of many parts arrives whole and in order through an output
    /// that takes a few bytes at a time.
    #[tokio::test]
    async fn frames_of_many_parts_are_written_whole() {
        let (server, from_server) = tokio::io::duplex(1 << 16);
        let (errors, error_frames) = tokio::sync::mpsc::channel(16);
        let (output, mut client) = tokio::io::duplex(7);
        let merger = tokio::spawn(merge_output(from_server, error_frames, output));
        let mut frame = super::Frame::new();
        let mut expected = Vec::new();
        for idx in 0..300 {
            let part = format!(",part {idx}").into_bytes();
            expected.extend_from_slice(&part[idx % 3..]);
            frame.push(std::sync::Arc::new(part), idx % 3);
        }
        frame.push(std::sync::Arc::new(Vec::new()), 0);
        assert_eq!(frame.to_vec(), expected);
        errors.send(frame).await.unwrap();
        drop(errors);
        let mut written = vec![0; expected.len()];
        client.read_exact(&mut written).await.unwrap();
        assert_eq!(String::from_utf8_lossy(&written), String::from_utf8_lossy(&expected));
        drop(server);
        merger.abort();
    }

    /// Found by the `lsp_server` fuzz target: an error frame that arrived
    /// while a server frame was half read made `merge_output` drop the
    /// half-read header, and every later answer of the server was lost.
    #[tokio::test]
    async fn an_error_frame_in_the_middle_of_a_server_frame_loses_nothing() {
        let (mut server, from_server) = tokio::io::duplex(1 << 16);
        let (errors, error_frames) = tokio::sync::mpsc::channel(16);
        let (output, mut client) = tokio::io::duplex(1 << 16);
        let merger = tokio::spawn(merge_output(from_server, error_frames, output));
        let first = br#"{"jsonrpc":"2.0","id":1,"result":null}"#;
        let second = br#"{"jsonrpc":"2.0","id":2,"result":null}"#;
        let error = frame(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#);
        // The header of the first frame, then an error frame, then its body.
        server.write_all(format!("Content-Length: {}\r\n\r\n", first.len()).as_bytes()).await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        errors.send(error.clone().into()).await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        server.write_all(first).await.unwrap();
        server.write_all(&frame(second)).await.unwrap();
        drop((server, errors));
        let mut written = Vec::new();
        client.read_to_end(&mut written).await.unwrap();
        merger.await.unwrap();
        let mut expected = error;
        expected.extend(frame(first));
        expected.extend(frame(second));
        assert_eq!(String::from_utf8_lossy(&written), String::from_utf8_lossy(&expected));
    }
}
