//! Tidy checks over the repository rather than the program: every Rust
//! file says what it is for in a `//!` comment, and docs/diagnostics.md
//! documents exactly the diagnostic codes that exist and every field of
//! `hpf-ls check --format json`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use analysis::ModelConfig;
use syntax::{Code, SourceForm};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn diagnostics_doc() -> String {
    let path = repo_root().join("docs/diagnostics.md");
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// Every `.rs` file below `dir`, skipping build output and hidden directories.
fn rust_files(dir: &Path, files: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .map(|entry| entry.expect("readable directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().and_then(|it| it.to_str()).unwrap_or("");
        if path.is_dir() {
            if !name.starts_with('.') && !name.starts_with("target") {
                rust_files(&path, files);
            }
        } else if name.ends_with(".rs") {
            files.push(path);
        }
    }
}

#[test]
fn every_rust_file_starts_with_a_module_comment() {
    let mut files = Vec::new();
    rust_files(&repo_root().join("server"), &mut files);
    assert!(files.len() > 10, "found only {} Rust files under server/", files.len());
    let missing: Vec<String> = files
        .iter()
        .filter(|path| {
            let text = std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
            !text.starts_with("//!")
        })
        .map(|path| path.strip_prefix(repo_root()).unwrap_or(path).display().to_string())
        .collect();
    assert!(missing.is_empty(), "these files do not start with a `//!` comment:\n{}", missing.join("\n"));
}

/// The sections `## HPFxxx: name` of docs/diagnostics.md: code and body.
fn documented_codes(doc: &str) -> Vec<(String, String)> {
    let mut sections = Vec::new();
    let mut current: Option<(String, String)> = None;
    for line in doc.lines() {
        if line.starts_with("## ") {
            sections.extend(current.take());
            if let Some(rest) = line.strip_prefix("## HPF") {
                let (number, name) =
                    rest.split_once(": ").unwrap_or_else(|| panic!("`{line}`: want `## HPFxxx: name`"));
                assert!(
                    number.len() == 3 && number.bytes().all(|it| it.is_ascii_digit()),
                    "`{line}`: want `## HPFxxx: name`"
                );
                assert!(!name.trim().is_empty(), "`{line}` has no name");
                current = Some((format!("HPF{number}"), String::new()));
            }
        } else if let Some((_, body)) = &mut current {
            body.push_str(line);
            body.push('\n');
        }
    }
    sections.extend(current);
    sections
}

#[test]
fn diagnostics_doc_has_one_section_per_code() {
    let doc = diagnostics_doc();
    let sections = documented_codes(&doc);
    let documented: Vec<&str> = sections.iter().map(|(code, _)| code.as_str()).collect();
    let unique: BTreeSet<&str> = documented.iter().copied().collect();
    assert_eq!(unique.len(), documented.len(), "a code has two sections: {documented:?}");
    let existing: BTreeSet<&str> = Code::ALL.iter().map(|it| it.as_str()).collect();
    let undocumented: Vec<&&str> = existing.difference(&unique).collect();
    let unknown: Vec<&&str> = unique.difference(&existing).collect();
    assert!(undocumented.is_empty(), "codes without a `## HPFxxx:` section in docs/diagnostics.md: {undocumented:?}");
    assert!(unknown.is_empty(), "docs/diagnostics.md has sections for codes that do not exist: {unknown:?}");
    for code in Code::ALL {
        let (_, body) = sections.iter().find(|(it, _)| it == code.as_str()).expect("checked above");
        let severity = format!("Default severity: `{}`", code.default_severity().as_str());
        assert!(body.contains(&severity), "the section of {} should say `{severity}`", code.as_str());
    }
}

/// Every key of a JSON value, at any depth.
fn keys(value: &serde_json::Value, into: &mut BTreeSet<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, value) in map {
                into.insert(key.clone());
                keys(value, into);
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|it| keys(it, into)),
        _ => {}
    }
}

#[test]
fn diagnostics_doc_names_every_json_field() {
    // A diagnostic with a related location, so that every nested field is present.
    let text = "program p\n  real :: b(16)\n!HPF$ TEMPLATE T(16)\n!HPF$ ALIGN B(I) WITH T(I+10)\nend program p\n";
    let analysis = analysis::analyze(text, SourceForm::Free, ModelConfig { number_of_processors: Some(4) });
    let json = hpf_ls::cli::check::to_json(Path::new("p.f90"), text, &analysis.diagnostics, &analysis.model.externals);
    assert!(json.iter().any(|it| !it.related.is_empty()), "the example should have a related location");
    let value = serde_json::to_value(&json).expect("diagnostics serialise");
    let mut fields = BTreeSet::new();
    keys(&value, &mut fields);
    let doc = diagnostics_doc();
    assert!(doc.contains("## JSON output"), "docs/diagnostics.md has no `## JSON output` section");
    let missing: Vec<&String> = fields.iter().filter(|field| !doc.contains(&format!("`{field}`"))).collect();
    assert!(missing.is_empty(), "JSON fields of `check --format json` not in docs/diagnostics.md: {missing:?}");
}

/// The documents written for users (not for the project's engineers).
const USER_DOCUMENTS: &[&str] =
    &["README.md", "docs/backend.md", "docs/design.md", "docs/language-server.md", "editors/README.md"];

/// User documents read well in a terminal and in review: no line over 120
/// characters outside code blocks and tables (a table row cannot wrap), and
/// no names of the project's source files, which users never open and which
/// go stale when code moves.
#[test]
fn user_documents_keep_short_lines_and_name_no_source_files() {
    let source_file = |word: &str| {
        let word = word.trim_matches(|it: char| !(it.is_alphanumeric() || "_/".contains(it)));
        [".rs", ".py", ".mjs", ".ts", ".lua"].iter().any(|it| word.ends_with(it))
            || (word.starts_with("server/") && (word.contains("/src") || word.contains("/tests")))
    };
    let mut problems = Vec::new();
    for name in USER_DOCUMENTS {
        let text = std::fs::read_to_string(repo_root().join(name)).unwrap_or_else(|error| panic!("{name}: {error}"));
        let mut in_code = false;
        for (number, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                in_code = !in_code;
                continue;
            }
            if in_code {
                continue;
            }
            let length = line.chars().count();
            if length > 120 && !line.starts_with('|') {
                problems.push(format!("{name}:{}: {length} characters", number + 1));
            }
            for word in line.split(|it: char| it.is_whitespace() || "`()[]<>,;:'\"".contains(it)) {
                if source_file(word) {
                    problems.push(format!("{name}:{}: names the source file {word}", number + 1));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
