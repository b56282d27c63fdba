//! Snapshot tests of the MPI backend's output: for every valid program of
//! `tests/corpus/`, the SPMD program `hpf-ls build` generates (default
//! options) and the notes it prints are compared with
//! `tests/corpus/snapshots/generated/<file>.f90`, so every change to
//! emitted code is reviewed in its diff. Refresh with `UPDATE_EXPECT=1`.
//! Whether the programs compile and print what gfortran's do is the
//! business of the differential tests (`mpi_run.rs`); this file needs no
//! compiler.

use std::path::{Path, PathBuf};

use hpf_ls::cli::build::generated_program;
use hpf_ls::cli::InputOptions;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus")
}

fn corpus_programs() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("corpus directory exists")
        .map(|entry| entry.expect("readable entry").path())
        .filter(|path| {
            path.is_file()
                && path
                    .extension()
                    .and_then(|it| it.to_str())
                    .is_some_and(|ext| syntax::FORTRAN_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()))
        })
        .collect();
    files.sort();
    files
}

/// The snapshot: the notes as comments above the generated program, with
/// the corpus directory taken out of the paths so that the text does not
/// depend on where the repository is.
fn snapshot(path: &Path) -> String {
    let input = InputOptions { paths: vec![path.to_path_buf()], ..InputOptions::default() };
    let prefix = format!("{}/", path.parent().expect("in a directory").display());
    let (program, messages) = match generated_program(input, backend::LowerOptions::default()) {
        Ok(generated) => generated,
        Err(messages) => (String::new(), format!("refused:\n{messages}")),
    };
    let mut text = String::new();
    for line in messages.replace(&prefix, "").lines() {
        text.push_str("! ");
        text.push_str(line);
        text.push('\n');
    }
    text.push_str("! ---\n");
    // Lines copied from a CRLF source keep their CR; expect-test reads
    // snapshot files with LF line ends.
    text.push_str(&program.replace("\r\n", "\n"));
    text
}

#[test]
fn generated_program_snapshots() {
    let programs = corpus_programs();
    assert!(programs.len() >= 60, "the corpus has {} programs", programs.len());
    for path in programs {
        let name = path.file_name().expect("a file").to_string_lossy().into_owned();
        let expected = corpus_dir().join(format!("snapshots/generated/{name}.f90"));
        expect_test::expect_file![expected].assert_eq(&snapshot(&path));
    }
}
