//! INCLUDE in the language server, over the protocol: a diagnostic inside an
//! included file is published for that file, go to definition follows into
//! it, hover works on the lines after an INCLUDE, and editing the open header
//! analyses the document that includes it again.

mod common;

use common::{position, scratch, Client};
use serde_json::{json, Value};

/// The next `publishDiagnostics` for `uri` (whatever its version), waiting for it.
fn next_diagnostics(client: &mut Client, uri: &str) -> Vec<Value> {
    loop {
        if let Some(idx) = client
            .pending
            .iter()
            .position(|it| it["method"] == "textDocument/publishDiagnostics" && it["params"]["uri"] == uri)
        {
            let message = client.pending.remove(idx);
            return message["params"]["diagnostics"].as_array().unwrap().clone();
        }
        let message = client.receive();
        client.pending.push(message);
    }
}

const MAIN: &str = "      PROGRAM P\n      INCLUDE 'map.h'\n      INTEGER I\n      DO I = 1, 16\n         A(I) = I\n      END DO\n      PRINT *, SUM(A)\n      END\n";

#[test]
fn headers_get_their_diagnostics_definitions_and_edits() {
    let dir = scratch("include-protocol");
    let header = "      REAL A(16)\n!HPF$ DISTRIBUTE A(BLOCK)\n!HPF$ DISTRIBUTE A(CYCLIC)\n";
    std::fs::write(dir.join("map.h"), header).unwrap();
    std::fs::write(dir.join("main.f"), MAIN).unwrap();
    let main_uri = format!("file://{}", dir.join("main.f").display());
    let header_uri = format!("file://{}", dir.join("map.h").display());
    let mut client = Client::builder().root_uri(json!(format!("file://{}", dir.display()))).start();
    client.open(&main_uri, MAIN);

    // The contradiction is in the header: published there, not in main.f.
    let own = client.diagnostics(&main_uri, 1);
    assert!(own.iter().all(|it| it["severity"] != 1), "{own:#?}");
    let in_header = next_diagnostics(&mut client, &header_uri);
    let twice = in_header.iter().find(|it| it["code"] == "HPF011").unwrap_or_else(|| panic!("{in_header:#?}"));
    assert_eq!(twice["range"]["start"]["line"], 2, "{twice}");

    // Definition of A (used in main.f after the INCLUDE) is in the header.
    let use_of_a = MAIN.find("A(I)").unwrap();
    let definition = client.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": main_uri}, "position": position(MAIN, use_of_a)}),
    );
    assert_eq!(definition["uri"], header_uri, "{definition}");
    assert_eq!(definition["range"]["start"], position(header, header.find("A(16)").unwrap()), "{definition}");

    // Hover after the INCLUDE line describes A's mapping, at A's range in main.f.
    let hover = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": main_uri}, "position": position(MAIN, use_of_a)}),
    );
    assert_eq!(hover["range"]["start"], position(MAIN, use_of_a), "{hover}");

    let hover_text = |client: &mut Client| {
        let hover = client.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": main_uri}, "position": position(MAIN, use_of_a)}),
        );
        hover["contents"]["value"].as_str().unwrap_or_default().to_ascii_uppercase()
    };
    let before = hover_text(&mut client);
    assert!(before.contains("BLOCK"), "{before}");

    // The header, opened and changed in the editor: main.f is analysed
    // again with the editor's text (published again), and its hover follows.
    client.open(&header_uri, header);
    let changed = "      REAL A(16)\n!HPF$ DISTRIBUTE A(CYCLIC)\n";
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": header_uri, "version": 2}, "contentChanges": [{"text": changed}]}),
    );
    // Opening the header may publish main.f once more with the disk's text
    // before the change's analysis arrives: take publishes until the hover
    // follows (a server that never follows runs the client into its timeout).
    let mut after = String::new();
    for _ in 0..3 {
        let republished = next_diagnostics(&mut client, &main_uri);
        assert!(republished.iter().all(|it| it["severity"] != 1), "{republished:#?}");
        after = hover_text(&mut client);
        if after.contains("CYCLIC") {
            break;
        }
    }
    assert!(after.contains("CYCLIC") && !after.contains("BLOCK"), "{after}");
    client.shutdown();
}

/// A `.F` file is preprocessed in the editor as by `gfortran -cpp`: the
/// directive lines before PROGRAM make no second main program, the region
/// `#ifdef` leaves out is not analysed, and a macro gives an array its size.
#[test]
fn preprocessed_documents_are_analysed_as_the_compiler_sees_them() {
    let dir = scratch("cpp-protocol");
    let text = "#define N 8\n#ifdef DEBUG\n!HPF$ DISTRIBUTE A(BLOK)\n!HPF$ DISTRIBUTE A(BLOK)\n#endif\n      PROGRAM P\n      REAL A(N)\n!HPF$ DISTRIBUTE A(BLOCK)\n      A = 1.0\n      PRINT *, SUM(A)\n      END\n";
    std::fs::write(dir.join("prog.F"), text).unwrap();
    let uri = format!("file://{}", dir.join("prog.F").display());
    let mut client = Client::builder().root_uri(json!(format!("file://{}", dir.display()))).start();
    client.open(&uri, text);
    let diagnostics = client.diagnostics(&uri, 1);
    assert!(diagnostics.iter().all(|it| it["severity"] != 1 && it["severity"] != 2), "{diagnostics:#?}");
    let hover = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": position(text, text.find("A = 1.0").unwrap())}),
    );
    let shown = hover["contents"]["value"].as_str().unwrap_or_default().to_string();
    assert!(shown.contains('8'), "{hover}");
    // The region `#ifdef DEBUG` leaves out folds (lines 2 and 3, 0-based).
    let folds = client.request("textDocument/foldingRange", json!({"textDocument": {"uri": uri}}));
    let folds = folds.as_array().unwrap();
    assert!(folds.iter().any(|it| it["startLine"] == 2 && it["endLine"] == 3), "{folds:#?}");
    // The same text as a .f file (no preprocessor) reads the directive left out above.
    std::fs::write(dir.join("plain.f"), text).unwrap();
    let plain = format!("file://{}", dir.join("plain.f").display());
    client.open(&plain, text);
    let diagnostics = client.diagnostics(&plain, 1);
    assert!(diagnostics.iter().any(|it| it["code"] == "HPF001"), "{diagnostics:#?}");
    client.shutdown();
}

/// `hpf.showGenerated` of a document that INCLUDEs a header: the generated
/// program has the header's declarations and no INCLUDE line (a build
/// directory has no headers).
#[test]
fn the_generated_program_inlines_the_headers() {
    let dir = scratch("include-generated");
    let header = "      REAL A(16)\n!HPF$ DISTRIBUTE A(BLOCK)\n";
    std::fs::write(dir.join("map.h"), header).unwrap();
    std::fs::write(dir.join("main.f"), MAIN).unwrap();
    let uri = format!("file://{}", dir.join("main.f").display());
    let mut client = Client::builder().root_uri(json!(format!("file://{}", dir.display()))).start();
    client.open(&uri, MAIN);
    let _ = client.diagnostics(&uri, 1);
    let generated =
        client.request("workspace/executeCommand", json!({"command": "hpf.showGenerated", "arguments": [uri]}));
    let source = generated.as_str().unwrap_or_else(|| panic!("{generated}")).to_ascii_lowercase();
    assert!(!source.contains("include 'map.h'"), "{source}");
    assert!(source.contains("use hpf_runtime"), "{source}");
    client.shutdown();
}

/// `#include` in a preprocessed document is followed as `gfortran -cpp`
/// (and `hpf-ls check`) follow it: a diagnostic inside the included file
/// is published for that file, go to definition leads into it, the macros
/// it defines hold in the document after the line, an `#include` in a
/// region `#ifdef` leaves out is not read, and editing the open header
/// analyses the document again.
#[test]
fn cpp_includes_are_followed_in_the_editor() {
    let dir = scratch("cpp-include-protocol");
    let header = "#define NSIZE 16\n      REAL A(NSIZE)\n!HPF$ DISTRIBUTE A(BLOCK)\n!HPF$ DISTRIBUTE A(CYCLIC)\n";
    let text = "      PROGRAM P\n#include \"map.h\"\n#ifdef NOPE\n#include \"missing.h\"\n#endif\n      REAL B(NSIZE)\n!HPF$ ALIGN B(I) WITH A(I)\n      INTEGER I\n      DO I = 1, 16\n         A(I) = I\n      END DO\n      B = A\n      PRINT *, SUM(B)\n      END\n";
    std::fs::write(dir.join("map.h"), header).unwrap();
    std::fs::write(dir.join("prog.F"), text).unwrap();
    let uri = format!("file://{}", dir.join("prog.F").display());
    let header_uri = format!("file://{}", dir.join("map.h").display());
    let mut client = Client::builder().root_uri(json!(format!("file://{}", dir.display()))).start();
    client.open(&uri, text);

    // The contradiction is the header's; the document has no error (nor a missing file).
    let own = client.diagnostics(&uri, 1);
    assert!(own.iter().all(|it| it["severity"] != 1), "{own:#?}");
    let in_header = next_diagnostics(&mut client, &header_uri);
    let twice = in_header.iter().find(|it| it["code"] == "HPF011").unwrap_or_else(|| panic!("{in_header:#?}"));
    assert_eq!(twice["range"]["start"]["line"], 3, "{twice}");

    let use_of_a = text.find("A(I) = I").unwrap();
    let definition = client.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": uri}, "position": position(text, use_of_a)}),
    );
    assert_eq!(definition["uri"], header_uri, "{definition}");

    // NSIZE, defined in the header, sizes B.
    let hover = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": position(text, text.find("B = A").unwrap())}),
    );
    let shown = hover["contents"]["value"].as_str().unwrap_or_default().to_string();
    assert!(shown.contains("16"), "{hover}");

    let hover_a = |client: &mut Client| {
        let hover = client
            .request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": position(text, use_of_a)}));
        hover["contents"]["value"].as_str().unwrap_or_default().to_ascii_uppercase()
    };
    assert!(hover_a(&mut client).contains("BLOCK"));
    client.open(&header_uri, header);
    let changed = "#define NSIZE 16\n      REAL A(NSIZE)\n!HPF$ DISTRIBUTE A(CYCLIC)\n";
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": header_uri, "version": 2}, "contentChanges": [{"text": changed}]}),
    );
    let republished = next_diagnostics(&mut client, &uri);
    assert!(republished.iter().all(|it| it["severity"] != 1), "{republished:#?}");
    let after = hover_a(&mut client);
    assert!(after.contains("CYCLIC") && !after.contains("BLOCK"), "{after}");
    client.shutdown();
}
