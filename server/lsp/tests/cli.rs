//! The command line as users run it: exit statuses, output formats,
//! source-form overrides (flag and hpf-ls.toml), severity settings.

use std::path::{Path, PathBuf};
use std::process::Command;

fn hpf_ls(args: &[&str], dir: &Path) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_hpf-ls")).args(args).current_dir(dir).output().expect("runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8(output.stdout).expect("UTF-8 stdout"),
        String::from_utf8(output.stderr).expect("UTF-8 stderr"),
    )
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hpf-ls-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const SEED: &str = include_str!("../../../tests/corpus/seed_fig6.f90");

#[test]
fn check_exit_statuses() {
    let dir = scratch("status");
    std::fs::write(dir.join("good.f90"), "program p\n  real a(8)\n!HPF$ DISTRIBUTE a(BLOCK)\n  a = 1.0\nend\n")
        .unwrap();
    std::fs::write(dir.join("bad.f90"), "program p\n  real a(8)\n!HPF$ DISTRIBUTE a(BLOK)\nend\n").unwrap();
    let (status, out, _) = hpf_ls(&["check", "good.f90"], &dir);
    assert_eq!((status, out.as_str()), (0, ""));
    let (status, out, _) = hpf_ls(&["check", "bad.f90"], &dir);
    assert_eq!(status, 1);
    assert!(out.starts_with("bad.f90:3:20: error[HPF001]: unknown distribution format `BLOK`"), "{out}");
    assert!(out.contains("3 | !HPF$ DISTRIBUTE a(BLOK)\n  |                    ^^^^\n"), "{out}");
    // A directory is walked recursively; the bad file makes the run fail.
    let (status, _, err) = hpf_ls(&["check", "."], &dir);
    assert_eq!(status, 1);
    assert!(err.contains("checked 2 file(s): 1 error(s)"), "{err}");
    let (status, _, err) = hpf_ls(&["check", "missing.f90"], &dir);
    assert_eq!(status, 2);
    assert!(err.contains("missing.f90: no such file or directory"), "{err}");
    let (status, _, err) = hpf_ls(&["check", "--format", "yaml", "good.f90"], &dir);
    assert_eq!(status, 2);
    assert!(err.contains("--format"), "{err}");
    let (status, _, _) = hpf_ls(&["check"], &dir);
    assert_eq!(status, 2);
}

#[test]
fn check_json_is_the_documented_array() {
    let dir = scratch("json");
    std::fs::write(dir.join("seed.f90"), SEED).unwrap();
    let (status, out, _) = hpf_ls(&["check", "--format", "json", "seed.f90"], &dir);
    assert_eq!(status, 0, "a warning is not an error");
    let value: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    let first = &value.as_array().expect("an array")[0];
    assert_eq!(first["code"], "HPF101");
    assert_eq!(first["severity"], "warning");
    assert_eq!(first["range"]["start"]["line"], 13);
    assert_eq!(first["range"]["start"]["column"], 16);
    assert_eq!(first["range"]["end"]["column"], 22);
    assert_eq!(first["related"].as_array().unwrap().len(), 2);
}

#[test]
fn form_override_by_flag_and_by_config() {
    let dir = scratch("form");
    // Fixed-form text in a .f90 file: parsed as free form it is full of errors.
    let fixed = include_str!("../../../tests/corpus/seed_fig6.f");
    std::fs::write(dir.join("legacy.f90"), fixed).unwrap();
    let (_, out_free, _) = hpf_ls(&["analyze", "legacy.f90"], &dir);
    let (status, out_fixed, _) = hpf_ls(&["analyze", "--form", "fixed", "legacy.f90"], &dir);
    assert_eq!(status, 0);
    assert!(out_fixed.contains("optimal alignment: ALIGN B(I) WITH A(I+1)"), "{out_fixed}");
    assert_ne!(out_free, out_fixed);
    std::fs::write(dir.join("hpf-ls.toml"), "[forms]\n\"legacy*.f90\" = \"fixed\"\n").unwrap();
    let (_, out_config, _) = hpf_ls(&["analyze", "legacy.f90"], &dir);
    assert_eq!(out_config, out_fixed);
    std::fs::write(dir.join("hpf-ls.toml"), "[forms]\n\"*.f90\" = \"sideways\"\n").unwrap();
    let (status, _, err) = hpf_ls(&["check", "legacy.f90"], &dir);
    assert_eq!(status, 2);
    assert!(err.contains("sideways"), "{err}");
}

#[test]
fn severity_settings() {
    let dir = scratch("severity");
    std::fs::write(dir.join("seed.f90"), SEED).unwrap();
    let (status, out, _) = hpf_ls(&["check", "--severity", "HPF101=error", "seed.f90"], &dir);
    assert_eq!(status, 1);
    assert!(out.contains("error[HPF101]"), "{out}");
    std::fs::write(dir.join("hpf-ls.toml"), "[severity]\nHPF101 = \"off\"\n").unwrap();
    let (status, out, _) = hpf_ls(&["check", "seed.f90"], &dir);
    assert_eq!((status, out.as_str()), (0, ""));
    // The command line wins over the file.
    let (_, out, _) = hpf_ls(&["check", "--severity=HPF101=hint", "seed.f90"], &dir);
    assert!(out.contains("hint[HPF101]"), "{out}");
}

#[test]
fn demo_shows_the_seed_example() {
    let (status, out, _) = hpf_ls(&["demo"], Path::new(env!("CARGO_MANIFEST_DIR")));
    assert_eq!(status, 0);
    assert!(out.contains("B(15) -> A(i) triples [1:15:1]"), "{out}");
    assert!(out.contains("ALIGN B(I) WITH A(I+1)"), "{out}");
}

#[test]
fn analyze_json_schema() {
    let dir = scratch("analyze");
    std::fs::write(dir.join("seed.f90"), SEED).unwrap();
    let (status, out, _) = hpf_ls(&["analyze", "--json", "seed.f90"], &dir);
    assert_eq!(status, 0);
    let value: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(value["schema"], 1);
    let access = &value["loops"][1]["accesses"][1];
    assert_eq!(access["text"], "B(I-1)");
    assert_eq!(access["optimal"], serde_json::json!([[2, 16, 1]]));
    assert_eq!(access["transfer"]["moved_elements"], 3);
    let (status, _, err) = hpf_ls(&["analyze", "--json", "seed.f90", "seed.f90"], &dir);
    assert_eq!(status, 2, "{err}");
}

/// A module USEd from another file of the directory (or of the project of
/// `hpf-ls.toml`) is read from disk: its arrays are analysed in the loops
/// that use them, and related places name that file.
#[test]
fn modules_of_other_files_are_read_from_disk() {
    let dir = scratch("modules");
    std::fs::create_dir_all(dir.join("src/lib")).unwrap();
    std::fs::write(dir.join("hpf-ls.toml"), "").unwrap();
    std::fs::write(
        dir.join("src/lib/grid.f90"),
        "module grid\n  integer, parameter :: n = 16\n  real :: a(n), b(n)\n!HPF$ TEMPLATE t(0:n+1)\n\
         !HPF$ DISTRIBUTE t(BLOCK)\n!HPF$ ALIGN a(i) WITH t(i)\n!HPF$ ALIGN b(i) WITH t(i)\nend module grid\n",
    )
    .unwrap();
    let main = "program main\n  use grid\n  integer :: i\n  do i = 1, n - 1\n    a(i) = b(i + 1)\n  end do\nend\n";
    std::fs::write(dir.join("src/main.f90"), main).unwrap();
    let (status, out, _) = hpf_ls(&["check", "--processors", "4", "src/main.f90"], &dir);
    assert_eq!(status, 0, "{out}");
    assert!(out.starts_with("src/main.f90:5:12: warning[HPF101]: b is not aligned with the loop's home a"), "{out}");
    assert!(out.contains("src/lib/grid.f90:7:1: note: the ALIGN of b\n"), "{out}");
    let (_, json, _) = hpf_ls(&["check", "--format", "json", "--processors", "4", "src/main.f90"], &dir);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let related = &json[0]["related"];
    assert_eq!(related[1]["path"], "src/lib/grid.f90", "{json:#}");
    assert_eq!(related[1]["range"]["start"]["line"], 7);
    assert!(related[0].get("path").is_none(), "the loop is in main.f90: {json:#}");
    // The backend says what it cannot lower: a module of another file with variables.
    let (status, _, err) = hpf_ls(&["build", "src/main.f90", "-o", "never"], &dir);
    assert_eq!(status, 1);
    assert!(
        err.contains(
            "src/main.f90:2:7: error: USE grid: the MPI backend cannot copy this module of another file: it holds the variable `a`"
        ),
        "{err}"
    );
    // Without the project file, the directory of main.f90 (and below) is searched: grid is not there.
    std::fs::remove_file(dir.join("hpf-ls.toml")).unwrap();
    std::fs::create_dir_all(dir.join("other")).unwrap();
    std::fs::rename(dir.join("src/lib/grid.f90"), dir.join("other/grid.f90")).unwrap();
    let (status, out, _) = hpf_ls(&["check", "--processors", "4", "src/main.f90"], &dir);
    assert_eq!((status, out.as_str()), (0, ""));
}
