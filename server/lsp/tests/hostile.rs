//! Hostile and huge input for the real `hpf-ls` binary over stdio: a 10 MB
//! file, 1 MB lines, parentheses 100,000 deep, 50,000 directives, binary
//! garbage, invalid UTF-8 on disk, positions out of range, requests for
//! documents never opened, `didChange`s with wrong versions, overlong and
//! broken headers. Each gets a sane answer in bounded time, and the server
//! answers a hover afterwards. The bounds are in docs/ARCHITECTURE.md,
//! "Limits".

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::{position, scratch, Client, Random, SEED};
use serde_json::{json, Value};

/// A liveness bound, generous for a debug build on a loaded machine.
const TIMEOUT: Duration = Duration::from_secs(60);
/// The server's peak resident memory over a whole session of hostile input.
const MAX_PEAK_RSS_KB: u64 = 3 * 1024 * 1024;

/// A session whose `shutdown` also asserts the peak memory.
fn start() -> Client {
    Client::builder()
        .capabilities(json!({"textDocument": {"hover": {"contentFormat": ["markdown"]}}}))
        .timeout(TIMEOUT)
        .max_peak_rss_kb(MAX_PEAK_RSS_KB)
        .start()
}

trait Hostile {
    fn hover(&mut self, uri: &str, line: u32, character: u32) -> Value;
    fn assert_alive(&mut self);
}

impl Hostile for Client {
    fn hover(&mut self, uri: &str, line: u32, character: u32) -> Value {
        self.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}),
        )
    }

    /// The server still serves: a hover on the seed program names array B.
    fn assert_alive(&mut self) {
        let uri = "file:///hpf-ls-hostile/alive.f90";
        if !self.pending.iter().any(|it| it["params"]["uri"] == uri) {
            self.open(uri, SEED);
            self.diagnostics(uri, 1);
        }
        let offset = SEED.rfind("B(I-1)").expect("the seed reads B(I-1)");
        let hover = self
            .request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": position(SEED, offset)}));
        assert!(hover["contents"]["value"].as_str().is_some_and(|it| it.contains('B')), "{hover}");
    }
}

fn codes(diagnostics: &[Value]) -> Vec<String> {
    diagnostics.iter().map(|it| it["code"].as_str().unwrap_or("").to_string()).collect()
}

#[test]
fn huge_documents() {
    let mut client = start();
    let started = Instant::now();

    // 10 MB: the seed's subroutine, renamed, again and again.
    let unit = SEED.replace("PROGRAM SEED", "SUBROUTINE SEED").replace("END PROGRAM", "END SUBROUTINE");
    let mut big = String::new();
    let mut idx = 0;
    while big.len() < 10_000_000 {
        big.push_str(&unit.replace("SEED", &format!("S{idx}")));
        idx += 1;
    }
    let uri = "file:///hpf-ls-hostile/ten_megabytes.f90";
    client.open(uri, &big);
    let diagnostics = client.diagnostics(uri, 1);
    assert!(codes(&diagnostics).contains(&"HPF005".to_string()), "{:?}", &diagnostics[..diagnostics.len().min(3)]);
    client.hover(uri, 5, 3);
    client.assert_alive();

    // A 1 MB line: a sum, in code and in a directive.
    let sum = "1+".repeat(1 << 19);
    let uri = "file:///hpf-ls-hostile/long_line.f90";
    let text = format!("program p\n  real a(8)\n  x = {sum}1\n!HPF$ TEMPLATE T({sum}1)\nend program p\n");
    client.open(uri, &text);
    client.diagnostics(uri, 1);
    client.hover(uri, 2, 600_000);
    client.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": uri}, "position": {"line": 3, "character": 500_000}}),
    );
    client.request(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 9, "character": 0}}}),
    );
    client.assert_alive();

    // Parentheses 100,000 deep: one HPF004, not a stack overflow.
    let deep = 100_000;
    let uri = "file:///hpf-ls-hostile/deep.f90";
    let text = format!("program p\nx = {}1{}\nend program p\n", "(".repeat(deep), ")".repeat(deep));
    client.open(uri, &text);
    let diagnostics = client.diagnostics(uri, 1);
    assert!(codes(&diagnostics).contains(&"HPF004".to_string()), "{diagnostics:?}");
    client.hover(uri, 1, 50_000);
    client.request("textDocument/semanticTokens/full", json!({"textDocument": {"uri": uri}}));
    client.request("textDocument/foldingRange", json!({"textDocument": {"uri": uri}}));
    client.assert_alive();

    // 50,000 directives.
    let mut text = String::from("program p\n  real t(10)\n!HPF$ TEMPLATE T(10)\n");
    for idx in 0..50_000 {
        text.push_str(&format!("  real a{idx}(10)\n!HPF$ ALIGN A{idx}(I) WITH T(I)\n"));
    }
    text.push_str("end program p\n");
    let uri = "file:///hpf-ls-hostile/directives.f90";
    client.open(uri, &text);
    client.diagnostics(uri, 1);
    let hover = client.hover(uri, 4 + 2 * 25_000, 13);
    assert!(hover.is_object(), "a hover on the directive of A25000: {hover}");
    client.request("textDocument/documentSymbol", json!({"textDocument": {"uri": uri}}));
    client.assert_alive();
    assert!(started.elapsed() < 4 * TIMEOUT, "huge documents took {:?}", started.elapsed());
    client.shutdown();
}

#[test]
fn garbage_and_wrong_requests() {
    let mut client = start();

    // Binary garbage (as a client sends it: replaced with U+FFFD) and control characters.
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let bytes: Vec<u8> = (0..200_000).map(|_| random.next() as u8).collect();
    let garbage = String::from_utf8_lossy(&bytes).into_owned();
    for (idx, form) in ["f90", "f"].iter().enumerate() {
        let uri = format!("file:///hpf-ls-hostile/garbage{idx}.{form}");
        client.open(&uri, &garbage);
        client.diagnostics(&uri, 1);
        for line in [0, 10, 100, 100_000] {
            client.hover(&uri, line, 7);
            client.request(
                "textDocument/completion",
                json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": 3}}),
            );
        }
    }
    client.assert_alive();

    // Completion on a directive-like line that starts with a multi-byte
    // character (found by the `analysis` fuzz target: a panic).
    let uri = "file:///hpf-ls-hostile/multibyte.f90";
    client.open(uri, "program p\n! e\u{e9}r\n\u{e9}HPF$ x\nend program p\n");
    client.diagnostics(uri, 1);
    for (line, character) in [(1, 4), (1, 5), (2, 1), (2, 4)] {
        let response = client.call(
            "textDocument/completion",
            json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}),
        );
        assert!(response.get("error").is_none(), "{response}");
    }

    // A reference without subscripts among subscripted ones in a stencil
    // (found by the `analysis` fuzz target: a panic, so no diagnostics).
    let sor = include_str!("../../../tests/corpus/red_black_sor.f90");
    assert!(sor.contains("(u(i-1, j) +"));
    let uri = "file:///hpf-ls-hostile/red_black_sor.f90";
    client.open(uri, &sor.replacen("(u(i-1, j) +", "(u()-1, j) +", 1));
    client.diagnostics(uri, 1);
    client.request("textDocument/inlayHint", json!({"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 99, "character": 0}}}));

    // A declaration missing its `)` gives an array of rank 10: its code
    // actions answer (the `analysis` fuzz target once found a panic there).
    let thomas = include_str!("../../../tests/corpus/nonascii_fixed.f");
    let uri = "file:///hpf-ls-hostile/nonascii_fixed.f";
    client.open(uri, &thomas.replacen("CP(N,NS), DP(N,NS)", "CP(N,NS\u{fffd}, DP(N,NS)", 1));
    client.diagnostics(uri, 1);
    let whole = json!({"start": {"line": 0, "character": 0}, "end": {"line": 99, "character": 0}});
    let response = client.call(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": whole, "context": {"diagnostics": []}}),
    );
    assert!(response.get("error").is_none(), "{response}");

    // Positions out of range: every position-taking request answers.
    let uri = "file:///hpf-ls-hostile/seed.f90";
    client.open(uri, SEED);
    client.diagnostics(uri, 1);
    let far = json!({"line": u32::MAX, "character": u32::MAX});
    let reversed = json!({"start": {"line": 30, "character": 5}, "end": {"line": 2, "character": 0}});
    let huge = json!({"start": {"line": 0, "character": 0}, "end": far});
    let document = json!({"uri": uri});
    for (method, params) in [
        ("textDocument/hover", json!({"textDocument": document, "position": far})),
        ("textDocument/definition", json!({"textDocument": document, "position": far})),
        (
            "textDocument/references",
            json!({"textDocument": document, "position": far, "context": {"includeDeclaration": true}}),
        ),
        ("textDocument/completion", json!({"textDocument": document, "position": far})),
        ("textDocument/inlayHint", json!({"textDocument": document, "range": reversed})),
        ("textDocument/inlayHint", json!({"textDocument": document, "range": huge})),
        (
            "textDocument/codeAction",
            json!({"textDocument": document, "range": reversed, "context": {"diagnostics": []}}),
        ),
        ("textDocument/codeAction", json!({"textDocument": document, "range": huge, "context": {"diagnostics": []}})),
        ("workspace/executeCommand", json!({"command": "hpf.showTransferPattern", "arguments": [uri, far]})),
    ] {
        let response = client.call(method, params);
        assert!(response.get("result").is_some() || response["error"]["code"] == -32602, "{method}: {response}");
    }
    let response =
        client.call("textDocument/rename", json!({"textDocument": document, "position": far, "newName": "z"}));
    assert!(response["error"]["code"] == -32602 || response["result"].is_null(), "{response}");
    // An edit with a range past the end, then one with its ends reversed.
    for (version, range) in [(2, huge.clone()), (3, reversed.clone())] {
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"range": range, "text": "! x\n"}]}),
        );
        client.diagnostics(uri, version);
    }
    client.assert_alive();

    // Requests for documents never opened: quick empty answers, no waiting.
    let unopened = json!({"uri": "file:///hpf-ls-hostile/never_opened.f90"});
    let position = json!({"line": 0, "character": 0});
    let range = json!({"start": position, "end": position});
    let started = Instant::now();
    for (method, params) in [
        ("textDocument/hover", json!({"textDocument": unopened, "position": position})),
        ("textDocument/definition", json!({"textDocument": unopened, "position": position})),
        (
            "textDocument/references",
            json!({"textDocument": unopened, "position": position, "context": {"includeDeclaration": true}}),
        ),
        ("textDocument/completion", json!({"textDocument": unopened, "position": position})),
        ("textDocument/rename", json!({"textDocument": unopened, "position": position, "newName": "z"})),
        ("textDocument/inlayHint", json!({"textDocument": unopened, "range": range})),
        ("textDocument/codeAction", json!({"textDocument": unopened, "range": range, "context": {"diagnostics": []}})),
        ("textDocument/codeLens", json!({"textDocument": unopened})),
        ("textDocument/documentSymbol", json!({"textDocument": unopened})),
        ("textDocument/semanticTokens/full", json!({"textDocument": unopened})),
        ("textDocument/foldingRange", json!({"textDocument": unopened})),
    ] {
        let response = client.call(method, params);
        assert_eq!(response["result"], Value::Null, "{method}: {response}");
    }
    let response = client.call(
        "workspace/executeCommand",
        json!({"command": "hpf.showTransferPattern", "arguments": [unopened["uri"], position]}),
    );
    assert_eq!(response["error"]["code"], -32602, "{response}");
    assert!(started.elapsed() < Duration::from_secs(5), "unopened documents took {:?}", started.elapsed());
    // didChange and didClose for a document never opened are ignored.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": unopened["uri"], "version": 2}, "contentChanges": [{"text": "x"}]}),
    );
    client.notify("textDocument/didClose", json!({"textDocument": unopened}));
    client.assert_alive();

    // didChange with a wrong version: older, equal, then a gap (accepted).
    let uri = "file:///hpf-ls-hostile/versions.f90";
    client.open(uri, SEED);
    client.diagnostics(uri, 1);
    for version in [0, 1, -5, i64::from(i32::MIN)] {
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": "garbage"}]}),
        );
    }
    let symbols = client.request("textDocument/documentSymbol", json!({"textDocument": {"uri": uri}}));
    assert_eq!(symbols[0]["name"], "SEED", "stale changes are ignored");
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 100}, "contentChanges": [{"text": SEED.replace("SEED", "LATER")}]}),
    );
    client.diagnostics(uri, 100);
    let symbols = client.request("textDocument/documentSymbol", json!({"textDocument": {"uri": uri}}));
    assert_eq!(symbols[0]["name"], "LATER");
    client.assert_alive();

    // Broken frames: no Content-Length, a negative one, a 1 MB header line.
    client.send_raw(b"X-Garbage: 1\r\n\r\n");
    client.send_raw(b"Content-Length: -5\r\n\r\n");
    let mut long_header = b"X-Long: ".to_vec();
    long_header.extend(std::iter::repeat_n(b'x', 1 << 20));
    long_header.extend_from_slice(b"\r\nContent-Length: 2\r\n\r\n{}");
    client.send_raw(&long_header);
    client.assert_alive();
    let parse_errors = client.pending.iter().filter(|it| it["error"]["code"] == -32700).count();
    assert!(
        parse_errors >= 3,
        "{:?}",
        client.pending.iter().filter(|it| it.get("error").is_some()).collect::<Vec<_>>()
    );
    client.shutdown();
}

#[test]
fn invalid_utf8_on_disk() {
    let dir = scratch("hostile");
    let mut bytes = b"program p\n  real a(8)\n! \xff\xfe bad bytes \xc3\n!HPF$ DISTRIBUTE a(BLOK)\nend\n".to_vec();
    std::fs::write(dir.join("bad.f90"), &bytes).unwrap();
    let output =
        Command::new(env!("CARGO_BIN_EXE_hpf-ls")).args(["check", "bad.f90"]).current_dir(&dir).output().unwrap();
    let stdout = String::from_utf8(output.stdout).expect("UTF-8 output");
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.starts_with("bad.f90:4:20: error[HPF001]: unknown distribution format `BLOK`"), "{stdout}");
    // Pure binary garbage: read, checked, reported; no crash.
    let mut random = Random(7);
    bytes = (0..100_000).map(|_| random.next() as u8).collect();
    std::fs::write(dir.join("garbage.f"), &bytes).unwrap();
    let output =
        Command::new(env!("CARGO_BIN_EXE_hpf-ls")).args(["check", "garbage.f"]).current_dir(&dir).output().unwrap();
    assert!(matches!(output.status.code(), Some(0 | 1)), "{:?}", output);
    // The server reads hpf-ls.toml from disk: invalid UTF-8 there is ignored.
    std::fs::write(dir.join("hpf-ls.toml"), b"processors = \xff\xfe\n[forms]\n\"*.f90\" = \"\xc3\"\n").unwrap();
    let mut client = start();
    let uri = format!("file://{}/seed.f90", dir.display());
    client.open(&uri, SEED);
    client.diagnostics(&uri, 1);
    client.assert_alive();
    client.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}
