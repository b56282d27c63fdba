//! Protocol tests: the real `hpf-ls` binary over stdio, driven by the small
//! client of `common`. They assert what an editor receives: diagnostics
//! with versions, the seed's quick fix, hovers, navigation, and that a long
//! sequence of random edits ends where opening the final text fresh does.

mod common;

use std::time::Duration;

use common::{position, scratch, without_related_uris, Client, Random, SEED};
use serde_json::{json, Value};

fn start(capabilities: Value) -> Client {
    start_in(capabilities, Value::Null)
}

/// A session whose workspace is `root_uri` (a `file://` URI or null).
fn start_in(capabilities: Value, root_uri: Value) -> Client {
    let client = Client::builder().capabilities(capabilities).root_uri(root_uri).start();
    assert!(client.initialize_result["capabilities"]["hoverProvider"].as_bool().unwrap_or(false));
    client
}

fn utf16_capabilities() -> Value {
    json!({
        "textDocument": {"hover": {"contentFormat": ["markdown", "plaintext"]}},
        "workspace": {"workspaceEdit": {"documentChanges": true}}
    })
}

fn apply_lsp_edits(text: &str, edits: &[Value]) -> String {
    // Edits of one quick fix do not overlap: apply from the end.
    let mut offsets: Vec<(usize, usize, String)> = edits
        .iter()
        .map(|edit| {
            let to_offset = |position: &Value| {
                let line = position["line"].as_u64().unwrap() as usize;
                let character = position["character"].as_u64().unwrap() as usize;
                let line_start = text.split_inclusive('\n').take(line).map(str::len).sum::<usize>();
                let mut units = 0;
                let mut offset = line_start;
                for ch in text[line_start..].chars() {
                    if units >= character || ch == '\n' {
                        break;
                    }
                    units += ch.len_utf16();
                    offset += ch.len_utf8();
                }
                offset
            };
            (
                to_offset(&edit["range"]["start"]),
                to_offset(&edit["range"]["end"]),
                edit["newText"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    offsets.sort_by_key(|it| std::cmp::Reverse(it.0));
    let mut res = text.to_string();
    for (start, end, new_text) in offsets {
        res.replace_range(start..end, &new_text);
    }
    res
}

#[test]
fn seed_quick_fix_removes_the_warning() {
    let mut client = start(utf16_capabilities());
    let uri = "file:///hpf-ls-test/seed.f90";
    client.open(uri, SEED);
    let diagnostics = client.diagnostics(uri, 1);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    let warning = &diagnostics[0];
    assert_eq!(warning["code"], "HPF101");
    assert_eq!(warning["severity"], 2);
    assert_eq!(warning["range"], json!({"start": {"line": 12, "character": 15}, "end": {"line": 12, "character": 21}}));
    assert_eq!(warning["relatedInformation"].as_array().unwrap().len(), 2);

    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": warning["range"], "context": {"diagnostics": [warning]}}),
    );
    let fix = actions.as_array().unwrap().iter().find(|it| it["kind"] == "quickfix").expect("a quick fix");
    assert!(fix["title"].as_str().unwrap().contains("ALIGN B(I) WITH A(I+1)"), "{fix}");
    let document_edit = &fix["edit"]["documentChanges"][0];
    assert_eq!(document_edit["textDocument"]["version"], 1);
    let edits = document_edit["edits"].as_array().unwrap();
    let fixed = apply_lsp_edits(SEED, edits);
    assert!(fixed.contains("!HPF$ ALIGN B(I) WITH A(I+1)\n"), "{fixed}");
    assert_eq!(fixed.len(), SEED.len() + 2, "nothing else changed");

    // The editor applies the edit as an incremental change.
    let changes: Vec<Value> = edits.iter().map(|it| json!({"range": it["range"], "text": it["newText"]})).collect();
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": changes}),
    );
    assert_eq!(client.diagnostics(uri, 2), Vec::<Value>::new());
    client.shutdown();
}

/// The seed written with lower-case declarations: the quick fix writes the
/// names as the ALIGN directive spells them, not as they are declared.
#[test]
fn the_quick_fix_keeps_the_directives_spelling() {
    let mut client = start(utf16_capabilities());
    let uri = "file:///hpf-ls-test/seed_lower.f90";
    let text = SEED.replace("REAL A(16), B(15)", "real a(16), b(15)").replace("A(I) = B(I-1)", "a(i) = b(i-1)");
    client.open(uri, &text);
    let diagnostics = client.diagnostics(uri, 1);
    let warning = &diagnostics[0];
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": warning["range"], "context": {"diagnostics": [warning]}}),
    );
    let fix = actions.as_array().unwrap().iter().find(|it| it["kind"] == "quickfix").expect("a quick fix");
    let fixed = apply_lsp_edits(&text, fix["edit"]["documentChanges"][0]["edits"].as_array().unwrap());
    let directive = fixed.lines().find(|it| it.starts_with("!HPF$ ALIGN")).unwrap();
    assert_eq!(directive, "!HPF$ ALIGN B(I) WITH A(I+1)");
    client.shutdown();
}

/// A client without `workspaceEdit.documentChanges` gets the plain `changes`
/// map, for quick fixes and renames alike.
#[test]
fn edits_use_changes_when_the_client_lacks_document_changes() {
    let mut client = start(json!({}));
    let uri = "file:///hpf-ls-test/seed.f90";
    client.open(uri, SEED);
    let diagnostics = client.diagnostics(uri, 1);
    let warning = &diagnostics[0];
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": warning["range"], "context": {"diagnostics": [warning]}}),
    );
    let fix = actions.as_array().unwrap().iter().find(|it| it["kind"] == "quickfix").expect("a quick fix");
    assert!(fix["edit"].get("documentChanges").is_none(), "{fix}");
    let fixed = apply_lsp_edits(SEED, fix["edit"]["changes"][uri].as_array().expect("edits for the document"));
    assert!(fixed.contains("!HPF$ ALIGN B(I) WITH A(I+1)\n"), "{fixed}");

    let b = SEED.find("B(15)").unwrap();
    let rename = client.request(
        "textDocument/rename",
        json!({"textDocument": {"uri": uri}, "position": position(SEED, b), "newName": "BB"}),
    );
    assert!(rename.get("documentChanges").is_none(), "{rename}");
    let renamed = apply_lsp_edits(SEED, rename["changes"][uri].as_array().expect("edits for the document"));
    assert!(renamed.contains("A(16), BB(15)") && renamed.contains("ALIGN BB(I) WITH A(I)"), "{renamed}");
    client.shutdown();
}

#[test]
fn hover_definition_references_and_commands() {
    let mut client = start(utf16_capabilities());
    let uri = "file:///hpf-ls-test/seed.f90";
    client.open(uri, SEED);
    client.diagnostics(uri, 1);
    let use_of_b = SEED.rfind("B(I-1)").unwrap();
    let hover = client
        .request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": position(SEED, use_of_b)}));
    let contents = hover["contents"]["value"].as_str().unwrap();
    assert_eq!(hover["contents"]["kind"], "markdown");
    assert!(contents.contains("B(15) -> A(i) triples [1:15:1]; (BLOCK) onto P(4)"), "{contents}");
    assert!(contents.contains("- P(4): B(13:15)"), "{contents}");
    // The reference in its loop comes first: its triples, its transfer, the ALIGN that makes it local.
    assert!(contents.starts_with("`B(I-1)` read in `DO I = 2, 16`"), "{contents}");
    assert!(contents.contains("- access range [1:15:1]\n- declared [1:15:1]\n"), "{contents}");
    assert!(contents.contains("- optimal [2:16:1]\n"), "{contents}");
    assert!(
        contents.contains(
            "Transfer before the loop: shift by +1, 3 element(s) in 3 message(s)\n- P(1) → P(2): 1 element(s)"
        ),
        "{contents}"
    );
    assert!(contents.contains("local with `ALIGN B(I) WITH A(I+1)`"), "{contents}");
    assert!(contents.find("[2:16:1]") < contents.find("**REAL B(15)** (array)"), "{contents}");
    assert_eq!(hover["range"], json!({"start": {"line": 12, "character": 15}, "end": {"line": 12, "character": 21}}));

    let loop_header = SEED.find("DO I = 2, 16").unwrap();
    let hover = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": position(SEED, loop_header + 1)}),
    );
    let contents = hover["contents"]["value"].as_str().unwrap();
    assert!(
        contents.contains("| `B(I-1)` | ref | [1:15:1] | [1:15:1] | [2:16:1] | shift by +1 before: 3 elems, 3 msgs |"),
        "{contents}"
    );

    let definition = client.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": uri}, "position": position(SEED, use_of_b)}),
    );
    let declaration = SEED.find("B(15)").unwrap();
    assert_eq!(definition["range"]["start"], position(SEED, declaration));

    let references = client.request(
        "textDocument/references",
        json!({"textDocument": {"uri": uri}, "position": position(SEED, use_of_b), "context": {"includeDeclaration": true}}),
    );
    let lines: Vec<u64> =
        references.as_array().unwrap().iter().map(|it| it["range"]["start"]["line"].as_u64().unwrap()).collect();
    // Declaration, the ALIGN directive, the first loop, the second loop.
    assert_eq!(lines, vec![3, 6, 8, 12]);

    let table = client.request(
        "workspace/executeCommand",
        json!({"command": "hpf.showTransferPattern", "arguments": [uri, position(SEED, use_of_b)]}),
    );
    let table = table.as_str().unwrap();
    assert!(table.contains("| P(1) | P(2) | 1 |") && table.contains("| P(3) | P(4) | 1 |"), "{table}");
    let generated =
        client.request("workspace/executeCommand", json!({"command": "hpf.showGenerated", "arguments": [uri]}));
    assert!(generated.as_str().unwrap().contains("use hpf_runtime"), "{generated}");
    // hpf.run builds and runs the editor's text with MPI (a prerequisite of the tests, README).
    {
        let run = client.request("workspace/executeCommand", json!({"command": "hpf.run", "arguments": [uri, 3]}));
        assert_eq!(run["exitCode"], 0, "{run}");
        let expected = include_str!("../../../tests/corpus/expected/seed_fig6.f90.out");
        assert_eq!(run["stdout"], expected, "{run}");
    }
    let bad = client.call("workspace/executeCommand", json!({"command": "hpf.run", "arguments": ["not a uri"]}));
    assert!(bad.get("error").is_some(), "{bad}");

    let hints = client.request(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 20, "character": 0}}}),
    );
    assert_eq!(hints[0]["label"], "  ⇐ B shift+1: 3 elems, 3 msgs");
    assert_eq!(hints[0]["position"], json!({"line": 11, "character": 18}));
    client.shutdown();
}

#[test]
fn bad_input_gets_answers_and_the_server_lives() {
    let mut client = start(utf16_capabilities());
    // A request about a document that is not open.
    let hover = client.call(
        "textDocument/hover",
        json!({"textDocument": {"uri": "file:///nowhere.f90"}, "position": {"line": 0, "character": 0}}),
    );
    assert_eq!(hover["result"], Value::Null, "{hover}");
    // A body that is not JSON, then one that is not a request.
    client.send_frame(b"{not json");
    client.send(&json!({"jsonrpc": "2.0", "id": "x", "method": "textDocument/hover", "params": {"wrong": true}}));
    // Positions far out of range, and a stale didChange.
    let uri = "file:///hpf-ls-test/seed.f90";
    client.open(uri, SEED);
    client.diagnostics(uri, 1);
    let hover = client.call(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 9999, "character": 9999}}),
    );
    assert!(hover.get("error").is_none(), "{hover}");
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 1}, "contentChanges": [{"text": "garbage"}]}),
    );
    // The stale change was ignored: the text is still the seed.
    let symbols = client.request("textDocument/documentSymbol", json!({"textDocument": {"uri": uri}}));
    assert_eq!(symbols[0]["name"], "SEED");
    // The garbage got a Parse error, the malformed request an error with its id.
    assert!(
        client.pending.iter().any(|it| it["error"]["code"] == -32700 && it["id"].is_null()),
        "{:?}",
        client.pending
    );
    assert!(client.pending.iter().any(|it| it["id"] == "x" && it.get("error").is_some()), "{:?}", client.pending);
    client.shutdown();
}

fn char_boundary_at_or_before(text: &str, mut offset: usize) -> usize {
    offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// 1,000 random small edits (inside directives and code, across line ends,
/// with multi-byte text and CRLF) end with the diagnostics of opening the
/// final text fresh.
#[test]
fn random_edits_end_like_a_fresh_open() {
    let mut client = start(utf16_capabilities());
    let uri = "file:///hpf-ls-test/edited.f90";
    let mut text = include_str!("../../../tests/corpus/stencil1d_halo.f90").to_string();
    client.open(uri, &text);
    let snippets = ["A", "(", ")", "I", "+1", "\n", "\r\n", "!HPF$ ", ",", " ", "é", "日本", "::", "ALIGN", "0", "-"];
    let mut random = Random(0x5eed_1234_abcd_0001);
    let mut version = 1;
    for _ in 0..1000 {
        let start = char_boundary_at_or_before(&text, random.below(text.len() + 1));
        let end = char_boundary_at_or_before(&text, (start + random.below(4)).min(text.len()));
        let end = end.max(start);
        let insert = if random.below(3) == 0 { "" } else { snippets[random.below(snippets.len())] };
        // Never split a CRLF: LSP positions cannot address its middle.
        if (start > 0 && text[..start].ends_with('\r') && text[start..].starts_with('\n'))
            || (end > 0 && text[..end].ends_with('\r') && text[end..].starts_with('\n'))
        {
            continue;
        }
        let range = json!({"start": position(&text, start), "end": position(&text, end)});
        text.replace_range(start..end, insert);
        version += 1;
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"range": range, "text": insert}]}),
        );
    }
    let edited = client.diagnostics(uri, version);
    let fresh_uri = "file:///hpf-ls-test/fresh.f90";
    client.open(fresh_uri, &text);
    let fresh = client.diagnostics(fresh_uri, 1);
    // Related locations name the document itself.
    assert_eq!(without_related_uris(edited), without_related_uris(fresh));
    // And the server's idea of the text is the client's: same symbols.
    let symbols = client.request("textDocument/documentSymbol", json!({"textDocument": {"uri": uri}}));
    let fresh_symbols = client.request("textDocument/documentSymbol", json!({"textDocument": {"uri": fresh_uri}}));
    assert_eq!(symbols, fresh_symbols);
    client.shutdown();
}

#[test]
fn utf8_is_negotiated_when_offered() {
    let mut client = start(json!({"general": {"positionEncodings": ["utf-8", "utf-16"]}}));
    let uri = "file:///hpf-ls-test/nonascii.f90";
    let text = "! 日本語\nprogram p\n  real :: a(8), b(8)\n!HPF$ DISTRIBUTE a(BLOCK)\n!HPF$ ALIGN b(i) WITH a(i)\n  do i = 2, 8\n    a(i) = b(i-1) ! é\n  end do\nend program p\n";
    client.open(uri, text);
    let diagnostics = client.diagnostics(uri, 1);
    // Without a processor count nothing is counted, but the shift is reported.
    let warning = diagnostics.iter().find(|it| it["code"] == "HPF101").expect("a misalignment");
    let start = text.find("b(i-1)").unwrap();
    let line_start = text[..start].rfind('\n').unwrap() + 1;
    assert_eq!(warning["range"]["start"]["character"], start - line_start);
    client.shutdown();
}

/// A client that offers `workspace/configuration` but shuts down before
/// answering it (pytest-lsp does this when a test ends at once) must still
/// see the server exit: the pending request may not hold the process.
#[test]
fn exit_with_an_unanswered_configuration_request() {
    let mut client = start(json!({"workspace": {"configuration": true}}));
    client.send(&json!({"jsonrpc": "2.0", "id": 9999, "method": "shutdown", "params": null}));
    loop {
        // Requests from the server stay unanswered on purpose.
        let message = client.next_message();
        if message.get("id") == Some(&json!(9999)) {
            break;
        }
    }
    client.notify("exit", Value::Null);
    let Some(status) = client.wait_for_exit(Duration::from_secs(5)) else {
        panic!("the server did not exit within 5 s of `exit` while workspace/configuration was unanswered");
    };
    assert!(status.success(), "exit status {status}");
}

/// A module USEd from a file of the workspace that is not open is read from
/// disk; once that file is opened, its text as edited counts, and the
/// documents that use it are analysed again.
/// A module of arrays aligned with a template, in a file of its own.
const GRID_MODULE: &str = "module grid\n  integer, parameter :: n = 16\n  real :: a(n), b(n)\n!HPF$ PROCESSORS p(4)\n\
                           !HPF$ TEMPLATE t(0:n+1)\n!HPF$ DISTRIBUTE t(BLOCK) ONTO p\n!HPF$ ALIGN a(i) WITH t(i)\n\
                           !HPF$ ALIGN b(i) WITH t(i)\nend module grid\n";

/// A program that USEs `grid` with one misaligned reference (HPF101).
const USES_GRID: &str =
    "program main\n  use grid\n  integer :: i\n  do i = 1, n - 1\n    a(i) = b(i + 1)\n  end do\nend\n";

#[test]
fn a_module_file_changed_on_disk_reanalyses_its_dependents() {
    let dir = scratch("protocol-watched");
    let grid = GRID_MODULE;
    std::fs::write(dir.join("grid.f90"), grid).unwrap();
    let main = USES_GRID;
    let root = format!("file://{}", dir.display());
    let (main_uri, grid_uri) = (format!("{root}/main.f90"), format!("{root}/grid.f90"));
    let mut capabilities = utf16_capabilities();
    capabilities["workspace"]["didChangeWatchedFiles"] = json!({"dynamicRegistration": true});
    let mut client = start_in(capabilities, json!(root));
    client.open(&main_uri, main);
    assert_eq!(client.diagnostics(&main_uri, 1).len(), 1);
    // The server asked to be told about changes of Fortran files (a request
    // of its own, which may come after the diagnostics).
    let registration = client.server_request("client/registerCapability")["params"]["registrations"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .find(|it| it["method"] == "workspace/didChangeWatchedFiles")
        .expect("a file watcher registration");
    let glob = registration["registerOptions"]["watchers"][0]["globPattern"].as_str().unwrap();
    assert!(glob.starts_with("**/*.{") && glob.contains(",f90,") && glob.contains(",F90,"), "{glob}");

    // grid.f90 realigned on disk (not open): main is analysed again at once,
    // without an edit of its own, and b(i+1) is now where a(i) is.
    std::fs::write(dir.join("grid.f90"), grid.replace("ALIGN b(i) WITH t(i)", "ALIGN b(i) WITH t(i-1)")).unwrap();
    client.notify("workspace/didChangeWatchedFiles", json!({"changes": [{"uri": grid_uri, "type": 2}]}));
    assert_eq!(client.diagnostics(&main_uri, 1), Vec::<Value>::new());
    client.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn modules_come_from_the_workspace_and_from_open_documents() {
    let dir = scratch("protocol-modules");
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    let grid = GRID_MODULE;
    std::fs::write(dir.join("lib/grid.f90"), grid).unwrap();
    let main = USES_GRID;
    let root = format!("file://{}", dir.display());
    let (main_uri, grid_uri) = (format!("{root}/main.f90"), format!("{root}/lib/grid.f90"));
    let mut client = start_in(utf16_capabilities(), json!(root));
    client.open(&main_uri, main);
    let diagnostics = client.diagnostics(&main_uri, 1);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    assert_eq!(diagnostics[0]["code"], "HPF101");
    let related = diagnostics[0]["relatedInformation"].as_array().unwrap();
    let align = related.iter().find(|it| it["message"] == "the ALIGN of b").expect("the ALIGN of b");
    assert_eq!(align["location"]["uri"], json!(grid_uri));
    assert_eq!(align["location"]["range"]["start"], json!({"line": 7, "character": 0}));
    // No quick fix: it would edit grid.f90.
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": main_uri}, "range": diagnostics[0]["range"],
               "context": {"diagnostics": [diagnostics[0].clone()]}}),
    );
    assert!(actions.as_array().is_none_or(|it| it.iter().all(|it| it["kind"] != "quickfix")), "{actions:#}");
    let definition = client.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": main_uri}, "position": {"line": 4, "character": 11}}),
    );
    assert_eq!(definition["uri"], json!(grid_uri));
    assert_eq!(
        definition["range"],
        json!({"start": {"line": 2, "character": 16}, "end": {"line": 2, "character": 17}})
    );

    // The module opened and realigned in the editor (not saved): main follows its text.
    client.open(&grid_uri, &grid.replace("ALIGN b(i) WITH t(i)", "ALIGN b(i) WITH t(i-1)"));
    assert_eq!(client.diagnostics(&grid_uri, 1), Vec::<Value>::new());
    let mut republished = client.diagnostics(&main_uri, 1);
    // The analysis of main that read the disk may be published again first.
    while !republished.is_empty() {
        republished = client.diagnostics(&main_uri, 1);
    }
    client.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A module and the units that USE it in one document: the server analyses
/// each top-level unit as a chunk of its own, and what crosses units still
/// works: related information and definitions point into the module, the
/// references and renaming of a module array reach every unit, the quick
/// fix rewrites the module's ALIGN, and an edit in one unit leaves the
/// diagnostics of the others as they were.
#[test]
fn units_of_one_document_see_each_other() {
    const TEXT: &str = "module grid
  integer, parameter :: n = 16
  real :: a(n), b(n - 1)
!HPF$ PROCESSORS p(4)
!HPF$ DISTRIBUTE a(BLOCK) ONTO p
!HPF$ ALIGN b(i) WITH a(i)
end module grid

subroutine shift
  use grid
  integer :: i
  do i = 2, n
    a(i) = b(i - 1)
  end do
end subroutine shift

program main
  use grid
  integer :: i
  call shift
  do i = 2, n - 1
    a(i) = a(i - 1) + a(i + 1)
  end do
  print *, a(1), b(2)
end program main
";
    let mut client = start(utf16_capabilities());
    let uri = "file:///hpf-ls-test/units.f90";
    client.open(uri, TEXT);
    let diagnostics = client.diagnostics(uri, 1);
    let warning = diagnostics.iter().find(|it| it["code"] == "HPF101").expect("the misalignment of b");
    let use_of_b = TEXT.find("b(i - 1)").unwrap();
    assert_eq!(warning["range"]["start"], position(TEXT, use_of_b));
    let align = TEXT.find("!HPF$ ALIGN").unwrap();
    let related = warning["relatedInformation"].as_array().unwrap();
    assert!(
        related
            .iter()
            .any(|it| it["location"]["uri"] == uri && it["location"]["range"]["start"] == position(TEXT, align)),
        "{related:?}"
    );

    // Definition of b at its use in the subroutine: its declaration in the module.
    let definition = client.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": uri}, "position": position(TEXT, use_of_b)}),
    );
    assert_eq!(definition["uri"], uri);
    assert_eq!(definition["range"]["start"], position(TEXT, TEXT.find("b(n - 1)").unwrap()), "{definition}");

    // References of b from its declaration reach the subroutine and the program.
    let references = client.request(
        "textDocument/references",
        json!({"textDocument": {"uri": uri}, "position": position(TEXT, TEXT.find("b(n - 1)").unwrap()), "context": {"includeDeclaration": true}}),
    );
    let starts: Vec<Value> = references.as_array().unwrap().iter().map(|it| it["range"]["start"].clone()).collect();
    for at in [TEXT.find("b(n - 1)").unwrap(), use_of_b, TEXT.find("b(2)").unwrap()] {
        assert!(starts.contains(&position(TEXT, at)), "{at}: {references}");
    }
    let rename = client.request(
        "textDocument/rename",
        json!({"textDocument": {"uri": uri}, "position": position(TEXT, use_of_b), "newName": "c"}),
    );
    let renamed = apply_lsp_edits(TEXT, rename["documentChanges"][0]["edits"].as_array().unwrap());
    assert!(
        renamed.contains("a(n), c(n - 1)")
            && renamed.contains("ALIGN c(i)")
            && renamed.contains("c(i - 1)")
            && renamed.contains("c(2)"),
        "{renamed}"
    );

    // The quick fix rewrites the module's ALIGN, and the warning goes.
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": warning["range"], "context": {"diagnostics": [warning]}}),
    );
    let fix = actions.as_array().unwrap().iter().find(|it| it["kind"] == "quickfix").expect("a quick fix");
    assert_eq!(fix["diagnostics"][0]["range"], warning["range"], "{fix}");
    let edits = fix["edit"]["documentChanges"][0]["edits"].as_array().unwrap();
    let fixed = apply_lsp_edits(TEXT, edits);
    assert!(fixed.contains("!HPF$ ALIGN b(i) WITH a(i+1)\n"), "{fixed}");
    let changes: Vec<Value> = edits.iter().map(|it| json!({"range": it["range"], "text": it["newText"]})).collect();
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": changes}),
    );
    let before = client.diagnostics(uri, 2);
    assert!(!before.is_empty() && before.iter().all(|it| it["code"] != "HPF101"), "{before:?}");

    // A line added in the subroutine moves what follows it, and nothing else changes.
    let at = fixed.find("  integer :: i").unwrap();
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"range": {"start": position(&fixed, at), "end": position(&fixed, at)}, "text": "  ! a comment\n"}]}),
    );
    let after = client.diagnostics(uri, 3);
    assert_eq!(after.len(), before.len());
    for (old, new) in before.iter().zip(&after) {
        let moved = old["range"]["start"]["line"].as_u64().unwrap() >= position(&fixed, at)["line"].as_u64().unwrap();
        let line = |it: &Value| it["range"]["start"]["line"].as_u64().unwrap();
        assert_eq!(line(new), line(old) + u64::from(moved), "{old} {new}");
        assert_eq!(old["message"], new["message"]);
    }
    client.shutdown();
}
