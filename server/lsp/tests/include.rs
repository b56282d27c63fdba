//! INCLUDE, the C preprocessor and programs in several files, from the
//! command line: directives in headers take effect, messages name the file
//! and line the user wrote, the preprocessor keeps lines and follows `-D`.

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

fn scratch(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hpf-ls-include-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

const MAIN_F: &str = "      PROGRAM P\n      INCLUDE 'map.h'\n      A = 1.0\n      PRINT *, SUM(A)\n      END\n";

#[test]
fn directives_of_a_header_are_checked_and_reported_in_the_header() {
    let header = "      REAL A(16)\n!HPF$ DISTRIBUTE A(BLOCK)\n!HPF$ DISTRIBUTE A(CYCLIC)\n";
    let dir = scratch("contradiction", &[("main.f", MAIN_F), ("inc/map.h", header)]);
    let (status, out, _) = hpf_ls(&["check", "-I", "inc", "main.f"], &dir);
    assert_eq!(status, 1, "{out}");
    assert!(out.contains("inc/map.h:3:"), "{out}");
    assert!(out.contains("error[HPF011]"), "{out}");
    assert!(out.contains("3 | !HPF$ DISTRIBUTE A(CYCLIC)"), "{out}");
    // Without the directory the header is not found: one error at the INCLUDE line.
    let (status, out, _) = hpf_ls(&["check", "main.f"], &dir);
    assert_eq!(status, 1);
    assert!(out.starts_with("main.f:2:16: error[HPF006]: cannot find `map.h`"), "{out}");
    // hpf-ls.toml's include directories are searched too.
    std::fs::write(dir.join("hpf-ls.toml"), "include = [\"inc\"]\n").unwrap();
    let (status, out, _) = hpf_ls(&["check", "main.f"], &dir);
    assert_eq!(status, 1);
    assert!(out.contains("inc/map.h:3:"), "{out}");
}

#[test]
fn an_include_cycle_is_an_error_at_the_include_line() {
    let dir = scratch(
        "cycle",
        &[
            ("main.f", MAIN_F),
            ("map.h", "      REAL A(4)\n      INCLUDE 'more.h'\n"),
            ("more.h", "      INCLUDE 'map.h'\n"),
        ],
    );
    let (status, out, _) = hpf_ls(&["check", "main.f"], &dir);
    assert_eq!(status, 1);
    assert!(out.contains("more.h:1:16: error[HPF006]: `map.h` includes itself: map.h -> more.h -> map.h"), "{out}");
}

#[test]
fn preprocessed_files_keep_their_lines_and_follow_defines() {
    let text = "#define N 16\n#ifdef WRONG\n!HPF$ DISTRIBUTE A(BLOK)\n#endif\n      PROGRAM P\n      REAL A(N)\n!HPF$ DISTRIBUTE A(BLOCK)\n      A = 2.0\n      PRINT *, SUM(A)\n      END\n";
    let dir = scratch("cpp", &[("prog.F", text)]);
    // The directive lines before PROGRAM make no second main program; N is a size.
    let (status, out, err) = hpf_ls(&["check", "prog.F"], &dir);
    assert_eq!(status, 0, "{out}{err}");
    let (status, out, _) = hpf_ls(&["check", "-D", "WRONG", "prog.F"], &dir);
    assert_eq!(status, 1);
    assert!(out.starts_with("prog.F:3:20: error[HPF001]"), "{out}");
    // A file named .f is not preprocessed unless asked.
    std::fs::write(dir.join("prog.f"), text).unwrap();
    let (status, _, _) = hpf_ls(&["check", "--cpp", "prog.f"], &dir);
    assert_eq!(status, 0);
    let (_, out, _) = hpf_ls(&["check", "--cpp", "-DN=3", "-DWRONG", "prog.f"], &dir);
    assert!(out.contains("prog.f:3:20: error[HPF001]"), "{out}");
    let (status, out, _) = hpf_ls(&["check", "prog.F", "-D", "WRONG=0"], &dir);
    assert_eq!(status, 1, "#ifdef holds for a macro defined as 0: {out}");
}

#[test]
fn files_named_together_are_one_program_in_module_order() {
    let main = "program p\n  use shapes\n  real :: a(n)\n!HPF$ DISTRIBUTE a(BLOCK)\n  call fill(a, n)\n  print *, sum(a)\nend program\n";
    let shapes = "module shapes\n  integer, parameter :: n = 8\nend module\n";
    let fill = "subroutine fill(x, m)\n  integer :: m\n  real :: x(m)\n!HPF$ INHERIT x\n!HPF$ ALIGN x(i) WITH t(i)\n  x = 1.0\nend subroutine\n";
    let dir = scratch("several", &[("main.f90", main), ("shapes.f90", shapes), ("fill.f90", fill)]);
    let (status, out, err) = hpf_ls(&["check", "main.f90", "fill.f90", "shapes.f90"], &dir);
    assert_eq!(status, 1, "{out}{err}");
    // The unknown align target is reported in the file that names it.
    assert!(out.starts_with("fill.f90:5:"), "{out}");
    assert!(err.contains("checked 3 file(s): 1 error(s)"), "{err}");
    // Two main programs: each file is checked on its own, as before.
    let dir = scratch("two-mains", &[("a.f90", "program a\nend program\n"), ("b.f90", "program b\nend program\n")]);
    let (status, _, err) = hpf_ls(&["check", "a.f90", "b.f90"], &dir);
    assert_eq!(status, 0, "{err}");
}

#[test]
fn analyze_and_explain_number_the_lines_of_the_file_written() {
    let main = "      PROGRAM P\n      INCLUDE 'map.h'\n      INTEGER I\n      DO I = 2, 16\n         A(I) = A(I-1)\n      END DO\n      END\n";
    let header = "      REAL A(16)\n!HPF$ PROCESSORS Q(4)\n!HPF$ DISTRIBUTE A(BLOCK) ONTO Q\n";
    let dir = scratch("explain", &[("main.f", main), ("map.h", header)]);
    let (status, out, err) = hpf_ls(&["analyze", "main.f"], &dir);
    assert_eq!(status, 0, "{err}");
    assert!(out.contains("main.f:4: DO I = 2, 16"), "{out}");
    let (status, out, err) = hpf_ls(&["explain", "--line", "5", "main.f"], &dir);
    assert_eq!(status, 0, "{err}");
    assert!(out.starts_with("DO I = 2, 16 (line 4)"), "{out}");
    assert!(out.contains("(BLOCK) onto Q(4)"), "{out}");
}
