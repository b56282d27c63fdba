//! Workspace trust over the protocol: a client that starts the server with
//! `initializationOptions.workspaceTrusted = false` (VS Code's Restricted
//! Mode) keeps every language feature, but gets no run lens, and `hpf.run`
//! and `hpf.build` are refused without starting the configured compiler.
//! Settings sent later cannot lift the restriction.

mod common;

use std::path::{Path, PathBuf};

use common::{position, scratch, Client, SEED};
use serde_json::{json, Value};

const URI: &str = "file:///trust/seed_fig6.f90";

/// A stand-in for `mpif90` that leaves `marker` behind when it is started.
fn marking_compiler(dir: &Path) -> (PathBuf, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let marker = dir.join("compiler-started");
    let compiler = dir.join("fake-mpif90");
    std::fs::write(&compiler, format!("#!/bin/sh\ntouch '{}'\nexit 1\n", marker.display())).unwrap();
    std::fs::set_permissions(&compiler, std::fs::Permissions::from_mode(0o755)).unwrap();
    (compiler, marker)
}

fn start(compiler: &Path, trusted: Value) -> Client {
    let mut options = json!({"hpf": {"mpi": {"compiler": compiler, "launcher": compiler}}});
    if !trusted.is_null() {
        options["workspaceTrusted"] = trusted;
    }
    let mut client = Client::builder().initialization_options(options).start();
    client.open(URI, SEED);
    client
}

fn execute(client: &mut Client, command: &str, arguments: Value) -> Value {
    client.call("workspace/executeCommand", json!({"command": command, "arguments": arguments}))
}

#[test]
fn a_restricted_workspace_has_language_features_but_runs_nothing() {
    let dir = scratch("trust-restricted");
    let (compiler, marker) = marking_compiler(&dir);
    let mut client = start(&compiler, json!(false));

    // Language features work: diagnostics, hover, the generated source.
    let diagnostics = client.diagnostics(URI, 1);
    assert!(diagnostics.iter().any(|it| it["code"] == "HPF101"), "{diagnostics:?}");
    let use_of_b = SEED.rfind("B(I-1)").unwrap();
    let hover = client
        .request("textDocument/hover", json!({"textDocument": {"uri": URI}, "position": position(SEED, use_of_b)}));
    assert!(hover["contents"]["value"].as_str().is_some_and(|it| !it.is_empty()), "{hover}");
    let generated =
        client.request("workspace/executeCommand", json!({"command": "hpf.showGenerated", "arguments": [URI]}));
    assert!(generated.as_str().unwrap().contains("use hpf_runtime"), "{generated}");

    // No lens offers to run the program.
    let lenses = client.request("textDocument/codeLens", json!({"textDocument": {"uri": URI}}));
    assert!(lenses.as_array().is_none_or(Vec::is_empty), "{lenses}");

    // Run and build are refused with a message that says why.
    for (command, arguments) in [("hpf.run", json!([URI, 2])), ("hpf.build", json!([URI]))] {
        let refused = execute(&mut client, command, arguments);
        let error = &refused["error"];
        assert_eq!(error["code"], -32600, "{refused}");
        let message = error["message"].as_str().unwrap();
        assert!(message.starts_with(&format!("{command} is refused")), "{message}");
        assert!(message.contains("not trusted") && message.contains("Restricted Mode"), "{message}");
    }

    // Settings from the workspace cannot turn trust back on.
    client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"workspaceTrusted": true, "hpf": {"workspaceTrusted": true, "mpi": {"processes": 2}}}}),
    );
    let refused = execute(&mut client, "hpf.build", json!([URI]));
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(!marker.exists(), "the compiler was started in a restricted workspace");
    client.shutdown();
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_trusted_workspace_or_a_client_without_trust_runs_the_compiler() {
    for (name, trusted) in [("trust-trusted", json!(true)), ("trust-unsaid", Value::Null)] {
        let dir = scratch(name);
        let (compiler, marker) = marking_compiler(&dir);
        let mut client = start(&compiler, trusted);
        let lenses = client.request("textDocument/codeLens", json!({"textDocument": {"uri": URI}}));
        assert_eq!(lenses[0]["command"]["command"], "hpf.run", "{lenses}");
        // The stand-in compiler fails, after it was started.
        let built = execute(&mut client, "hpf.build", json!([URI]));
        let message = built["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("failed on the generated program"), "{built}");
        assert!(marker.exists(), "{name}: the compiler was not started");
        client.shutdown();
        let _ = std::fs::remove_dir_all(dir);
    }
}
