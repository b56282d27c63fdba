//! The command line's interface as users meet it: help for every command
//! (three ways), the version, usage errors that show the command's usage,
//! every flag that takes a value refusing a bad one by name, completions
//! and the man page.

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
    let dir = std::env::temp_dir().join(format!("hpf-ls-cli-args-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("seed.f90"), include_str!("../../../tests/corpus/seed_fig6.f90")).unwrap();
    dir
}

const COMMANDS: &[&str] =
    &["serve", "demo", "check", "analyze", "optimize", "explain", "build", "run", "model", "completions", "man"];

#[test]
fn every_command_has_help_three_ways() {
    let dir = scratch("help");
    let (status, general, _) = hpf_ls(&["--help"], &dir);
    assert_eq!(status, 0);
    for command in COMMANDS {
        assert!(general.contains(&format!("\n  {command} ")), "`{command}` missing from the general help:\n{general}");
        let (status, help, err) = hpf_ls(&[command, "--help"], &dir);
        assert_eq!(status, 0, "{command} --help: {err}");
        assert!(help.contains(&format!("Usage: hpf-ls {command}")), "{help}");
        assert_eq!(hpf_ls(&["help", command], &dir).1, help, "`help {command}` differs from `{command} --help`");
        assert_eq!(hpf_ls(&[command, "-h"], &dir).0, 0);
    }
    let (status, version, _) = hpf_ls(&["--version"], &dir);
    assert_eq!((status, version), (0, format!("hpf-ls {}\n", env!("CARGO_PKG_VERSION"))));
}

#[test]
fn the_help_lists_every_flag() {
    let dir = scratch("flags");
    let expected: &[(&str, &[&str])] = &[
        ("check", &["--format", "--form", "--processors", "--severity", "-I", "-D", "--cpp"]),
        ("analyze", &["--json", "--form", "--processors", "--severity"]),
        ("optimize", &["--diff", "--write", "--grow-templates", "--default-trips", "--form", "--processors"]),
        ("explain", &["--line", "--svg", "--what-if", "--form", "--processors"]),
        (
            "build",
            &["-o", "--emit-source", "--fc", "--fflags", "--timeout", "--form", "--processors", "-I", "-D", "--cpp"],
        ),
        ("run", &["--np", "--launcher", "--hostfile", "--stats", "--fc", "--fflags", "--timeout", "--form"]),
        ("model", &["--form", "--processors", "--severity"]),
    ];
    for (command, flags) in expected {
        let (_, help, _) = hpf_ls(&[command, "--help"], &dir);
        for flag in *flags {
            assert!(help.contains(&format!("{flag} ")), "`{command} --help` does not list {flag}:\n{help}");
        }
    }
}

#[test]
fn usage_errors_show_the_commands_usage() {
    let dir = scratch("usage");
    let cases: &[(&[&str], &str)] = &[
        (&["check"], "Usage: hpf-ls check"),
        (&["optimize"], "Usage: hpf-ls optimize"),
        (&["explain", "seed.f90"], "Usage: hpf-ls explain"),
        (&["build", "-o"], "a value is required for '-o <EXE>'"),
        (&["run", "--np", "0", "seed.f90"], "--np"),
        (&["build", "seed.f90", "--frobnicate"], "unexpected argument '--frobnicate'"),
        (&["optimize", "--diff", "--write", "seed.f90"], "cannot be used with"),
        (&["frobnicate"], "unrecognized subcommand 'frobnicate'"),
    ];
    for (args, expected) in cases {
        let (status, out, err) = hpf_ls(args, &dir);
        assert_eq!(status, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert!(err.contains(expected), "{args:?}: expected `{expected}` in\n{err}");
    }
}

/// Each flag with a value: a bad value is refused naming the flag (status
/// 2), the good one is taken, also as `--flag=value`, before the file.
#[test]
fn every_flag_with_a_value_is_parsed_by_type() {
    let dir = scratch("values");
    let refused: &[(&[&str], &str)] = &[
        (&["check", "--format", "yaml", "seed.f90"], "--format"),
        (&["check", "--form", "round", "seed.f90"], "--form"),
        (&["check", "--processors", "0", "seed.f90"], "--processors"),
        (&["check", "-p", "many", "seed.f90"], "--processors"),
        (&["check", "--severity", "HPF101", "seed.f90"], "--severity"),
        (&["check", "--severity", "HPF999=off", "seed.f90"], "unknown diagnostic code"),
        (&["optimize", "--default-trips", "zero", "seed.f90"], "--default-trips"),
        (&["explain", "--line", "0", "seed.f90"], "--line"),
        (&["build", "--timeout", "0", "seed.f90"], "--timeout"),
        (&["build", "--fflags", "'-O3", "seed.f90"], "unbalanced quotes"),
        (&["run", "--np", "0", "seed.f90"], "--np"),
        (&["run", "-n", "four", "seed.f90"], "--np"),
        (&["run", "--timeout", "soon", "seed.f90"], "--timeout"),
        (&["completions", "tcsh"], "tcsh"),
    ];
    for (args, flag) in refused {
        let (status, _, err) = hpf_ls(args, &dir);
        assert_eq!(status, 2, "{args:?} was accepted");
        assert!(err.contains(flag), "{args:?}: the error does not name {flag}:\n{err}");
    }
    // Accepted: the value is not taken for the file.
    let (status, out, err) = hpf_ls(&["optimize", "--default-trips", "50", "seed.f90"], &dir);
    assert_eq!(status, 0, "{err}");
    assert!(out.contains("+!HPF$ ALIGN B(I) WITH A(I+1)"), "{out}");
    let (status, out, _) = hpf_ls(&["check", "--format=json", "--severity=HPF101=off", "-p", "4", "seed.f90"], &dir);
    assert_eq!((status, out.trim()), (0, "[]"));
    let (status, out, _) = hpf_ls(&["analyze", "--processors=2", "--form", "free", "seed.f90"], &dir);
    assert_eq!(status, 0);
    assert!(out.contains("optimal alignment: ALIGN B(I) WITH A(I+1)"), "{out}");
    let (status, out, _) = hpf_ls(&["model", "--processors", "2", "seed.f90"], &dir);
    assert_eq!(status, 0);
    assert!(out.starts_with("--- seed.f90\n"), "{out}");
    let (status, out, _) = hpf_ls(&["explain", "--line=12", "--svg", "loop.svg", "seed.f90"], &dir);
    assert_eq!(status, 0);
    assert!(out.starts_with("DO I = 2, 16 (line 12)"), "{out}");
    assert!(std::fs::read_to_string(dir.join("loop.svg")).unwrap().starts_with("<svg"));
}

#[test]
fn completions_and_man_pages_come_from_the_definition() {
    let dir = scratch("completions");
    for shell in ["bash", "zsh", "fish"] {
        let (status, script, _) = hpf_ls(&["completions", shell], &dir);
        assert_eq!(status, 0);
        for word in ["optimize", "default-trips", "emit-source", "launcher"] {
            assert!(script.contains(word), "the {shell} completions do not offer {word}");
        }
    }
    let (status, page, _) = hpf_ls(&["man"], &dir);
    assert_eq!(status, 0);
    assert!(page.contains(".TH hpf-ls 1"), "{page}");
    let (status, _, err) = hpf_ls(&["man", "--dir", "pages"], &dir);
    assert_eq!(status, 0, "{err}");
    let run_page = std::fs::read_to_string(dir.join("pages/hpf-ls-run.1")).expect("a page per command");
    assert!(run_page.contains("fflags"), "{run_page}");
}

#[test]
fn the_server_still_starts_with_no_command_and_with_serve() {
    let dir = scratch("serve");
    // Closed stdin (not a terminal): the server starts, says nothing, and ends at end of input.
    for args in [&[][..], &["serve"][..], &["serve", "--stdio"][..]] {
        let output = Command::new(env!("CARGO_BIN_EXE_hpf-ls"))
            .args(args)
            .current_dir(&dir)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&output.stderr);
        assert!(!err.contains("error:"), "{args:?}: {err}");
        assert!(!err.contains("waiting for LSP messages"), "{args:?}: the hint is for terminals only");
    }
}

#[test]
fn in_a_terminal_the_server_says_what_it_is() {
    // `script` gives the server a terminal on stdin; without it there is nothing to test.
    let Ok(script) = Command::new("script").arg("--version").output() else { return };
    if !script.status.success() {
        return;
    }
    let output = Command::new("timeout")
        .args(["20", "script", "-qec", env!("CARGO_BIN_EXE_hpf-ls"), "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("this is the HPF language server, waiting for LSP messages on stdin"), "{text}");
    assert!(text.contains("hpf-ls --help"), "{text}");
}

#[test]
fn directories_are_walked_without_hidden_build_or_looping_entries() {
    let dir = scratch("walk");
    std::fs::remove_file(dir.join("seed.f90")).unwrap();
    let good = "program p\n  real a(8)\n!HPF$ DISTRIBUTE a(BLOCK)\n  a = 1.0\nend\n";
    let bad = "program p\n  real a(8)\n!HPF$ DISTRIBUTE a(BLOK)\nend\n";
    for (path, text) in [("src/a.f90", good), ("src/deep/b.f90", good), (".git/c.f90", bad), ("target/d.f90", bad)] {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    // A link back up would loop forever if followed.
    std::os::unix::fs::symlink(&dir, dir.join("src/deep/loop")).unwrap();
    let (status, _, err) = hpf_ls(&["check", "."], &dir);
    assert_eq!(status, 0, "{err}");
    assert!(err.contains("checked 2 file(s): 0 error(s)"), "{err}");
}
