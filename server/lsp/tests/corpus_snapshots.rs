//! Snapshot tests over `tests/corpus/`: for every program, the mapping
//! model and the `check` output are compared with
//! `tests/corpus/snapshots/<file>.snap`. Refresh with `UPDATE_EXPECT=1`,
//! then read the diff: a snapshot is a claim about what users see.

use std::path::{Path, PathBuf};

use analysis::ModelConfig;
use syntax::SourceForm;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus")
}

fn corpus_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in [corpus_dir(), corpus_dir().join("errors")] {
        for entry in std::fs::read_dir(&dir).expect("corpus directory exists") {
            let path = entry.expect("readable entry").path();
            let is_fortran = path
                .extension()
                .and_then(|it| it.to_str())
                .is_some_and(|ext| syntax::FORTRAN_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()));
            if path.is_file() && is_fortran {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

fn analyze_json(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("corpus files are UTF-8");
    let form = SourceForm::from_path(path);
    let config = ModelConfig { number_of_processors: Some(4) };
    let analysis = analysis::analyze(&text, form, config);
    let relative = path.strip_prefix(corpus_dir()).expect("inside the corpus");
    let report = hpf_ls::cli::analyze::to_report(relative, &text, form, config, &analysis);
    serde_json::to_string_pretty(&report).expect("serialises") + "\n"
}

fn snapshot(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("corpus files are UTF-8");
    let form = SourceForm::from_path(path);
    let analysis = analysis::analyze(&text, form, ModelConfig { number_of_processors: Some(4) });
    let relative = path.strip_prefix(corpus_dir()).expect("inside the corpus");
    let mut res =
        format!("--- model (NUMBER_OF_PROCESSORS() = 4)\n{}", analysis::render::render_model(&analysis.model));
    res.push_str("--- check\n");
    hpf_ls::cli::check::render_text(relative, &text, &analysis.diagnostics, &analysis.model.externals, &mut res);
    res
}

#[test]
fn corpus_snapshots() {
    let files = corpus_files();
    assert!(files.len() >= 25, "the corpus has {} programs", files.len());
    for path in files {
        let name = path.file_name().expect("a file").to_string_lossy().into_owned();
        let sub = if path.parent().is_some_and(|it| it.ends_with("errors")) { "errors/" } else { "" };
        let expected = corpus_dir().join(format!("snapshots/{sub}{name}.snap"));
        expect_test::expect_file![expected].assert_eq(&snapshot(&path));
    }
}

/// `hpf-ls analyze --json --processors 4` of every valid corpus program,
/// in `tests/corpus/snapshots/<file>.analyze.json`.
#[test]
fn analyze_json_snapshots() {
    for path in corpus_files().into_iter().filter(|it| !it.parent().is_some_and(|it| it.ends_with("errors"))) {
        let name = path.file_name().expect("a file").to_string_lossy().into_owned();
        let expected = corpus_dir().join(format!("snapshots/{name}.analyze.json"));
        expect_test::expect_file![expected].assert_eq(&analyze_json(&path));
    }
}

/// Every file in `errors/` announces what it is about in an `expect:` line
/// and marks each bad line with `! error:` (or `C error:`) just above it:
/// each marked line must get an error or warning, and the valid programs
/// must get none.
#[test]
fn errors_are_where_the_corpus_says() {
    let mut n_marked = 0;
    for path in corpus_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let analysis =
            analysis::analyze(&text, SourceForm::from_path(&path), ModelConfig { number_of_processors: Some(4) });
        let index = syntax::LineIndex::new(&text);
        let flagged: Vec<usize> = analysis
            .diagnostics
            .iter()
            .filter(|it| matches!(it.severity, syntax::Severity::Error | syntax::Severity::Warning))
            // Misalignment warnings (HPF1xx) are findings about valid programs, not errors in them.
            .filter(|it| it.code.as_str() < "HPF100")
            .map(|it| index.line_of(it.range.start))
            .collect();
        let in_errors_dir = path.parent().is_some_and(|it| it.ends_with("errors"));
        if !in_errors_dir {
            assert!(flagged.is_empty(), "{}: a valid program got {:?}", path.display(), analysis.diagnostics);
            continue;
        }
        let lines: Vec<&str> = text.lines().collect();
        for (number, line) in lines.iter().enumerate() {
            let marker = line.trim_start().get(1..).map(str::trim_start).unwrap_or("");
            if !(marker.starts_with("error:")) || number == 0 {
                continue;
            }
            // The marked line is the next line that is not a comment.
            let target = (number + 1..lines.len()).find(|&it| {
                let next = lines[it].trim_start();
                !(next.starts_with("! ") || next.starts_with("C ") || next.starts_with("c ") || next.is_empty())
            });
            let Some(target) = target else { continue };
            n_marked += 1;
            assert!(
                flagged.iter().any(|&it| it >= target && it <= target + 1),
                "{}:{}: expected a diagnostic on this line ({})",
                path.display(),
                target + 1,
                lines[target]
            );
        }
    }
    assert!(n_marked >= 30, "only {n_marked} marked lines were found: is the marker syntax still `! error:`?");
}
