//! `hpf-ls demo`: the whole story on the seed's worked example (bundled, so
//! it runs from a fresh clone with no arguments): the program, its mapping, its loops
//! with their alignment triples, the picture of the loop whose ALIGN costs
//! messages, the quick fix's rewrite of that ALIGN, and, when an MPI
//! toolchain is installed, a run on 4 processes with the moved data counted
//! (`hpf-ls run --np 4 --stats`).
//!
//! `hpf-ls model PATH...` prints the mapping description for files.

use std::fmt::Write;
use std::path::Path;
use std::process::Stdio;

use analysis::ide::{apply_edits, code_actions, ActionKind};
use analysis::FileAnalysis;
use analysis::ModelConfig;
use syntax::{Code, LineIndex};

use super::{collect_inputs, parse_input_options, EXIT_USAGE};

pub const DEMO_PATH: &str = "tests/corpus/seed_fig6.f90";
pub const DEMO_TEXT: &str = include_str!("../../../../tests/corpus/seed_fig6.f90");

/// How many processes the demo's run uses: the example's `PROCESSORS P(4)`.
const DEMO_PROCESSES: u32 = 4;

pub fn run_demo(out: &mut String) -> i32 {
    let _ = writeln!(out, "hpf-ls demo: the worked example of the seed patent (JP2739836B2, FIG. 6-9)\n");
    let _ = writeln!(out, "--- the program ({DEMO_PATH})");
    for (number, line) in DEMO_TEXT.lines().enumerate() {
        let _ = writeln!(out, "{:>3} | {line}", number + 1);
    }
    let config = ModelConfig { number_of_processors: None };
    let analysis = analysis::analyze(DEMO_TEXT, syntax::SourceForm::Free, config);
    let path = Path::new(DEMO_PATH);

    let _ = writeln!(out, "\n--- the mapping: each array's alignment triple on its final target (`hpf-ls model`)");
    out.push_str(&analysis::render::render_model(&analysis.model));

    let _ =
        writeln!(out, "\n--- its loops: where they run, what they access, the alignment triples (`hpf-ls analyze`)");
    super::analyze::render_text(path, DEMO_TEXT, &analysis, out);

    let misaligned = analysis.diagnostics.iter().find(|it| it.code == Code::MisalignedTransfer);
    let picture = misaligned.and_then(|diagnostic| {
        let line = LineIndex::new(DEMO_TEXT).line_of(diagnostic.range.start);
        analysis::picture::loop_at_line(&analysis, DEMO_TEXT, line)
            .or_else(|| analysis.loops.iter().position(|it| it.range.contains_range(diagnostic.range)))
    });
    if let Some(loop_idx) = picture {
        let _ = writeln!(out, "\n--- the picture of that loop: who owns what, and the messages (`hpf-ls explain`)");
        out.push_str(&analysis::picture::render_text(&analysis::picture::loop_picture(&analysis, DEMO_TEXT, loop_idx)));
    }

    let _ = writeln!(out, "\n--- the diagnostic and its quick fix (the editor offers it on the warning)");
    super::check::render_text(path, DEMO_TEXT, &analysis.diagnostics, &[], out);
    if let Some(diagnostic) = misaligned {
        render_quick_fix(&analysis, diagnostic.range, out);
    }

    let _ = writeln!(
        out,
        "\n--- a run on {DEMO_PROCESSES} processes (`hpf-ls run --np {DEMO_PROCESSES} --stats {DEMO_PATH}`)"
    );
    render_run(&analysis, out)
}

/// The preferred quick fix for the diagnostic at `range`: its title and the
/// lines it rewrites, as a diff.
fn render_quick_fix(analysis: &FileAnalysis, range: syntax::TextRange, out: &mut String) {
    let actions = code_actions(analysis, DEMO_TEXT, range);
    let Some(fix) = actions.iter().find(|it| it.kind == ActionKind::QuickFix && it.fixes == Some(range)) else {
        return;
    };
    let fixed = apply_edits(DEMO_TEXT, &fix.edits);
    let _ = writeln!(out, "quick fix: {}", fix.title);
    let (before, after): (Vec<&str>, Vec<&str>) = (DEMO_TEXT.lines().collect(), fixed.lines().collect());
    // The fix rewrites directives in place: the texts have the same lines.
    for (number, (old, new)) in before.iter().zip(&after).enumerate().filter(|(_, (old, new))| old != new) {
        let _ = writeln!(out, "{:>3} - {old}\n{:>3} + {new}", number + 1, number + 1);
    }
}

/// Builds the example with the MPI backend and runs it with `--stats`; with
/// no MPI toolchain, says how to get one (the demo still succeeds).
fn render_run(analysis: &FileAnalysis, out: &mut String) -> i32 {
    let generated = match backend::lower(analysis, DEMO_TEXT) {
        Ok(generated) => generated,
        Err(errors) => {
            for error in errors {
                let _ = writeln!(out, "the backend refuses the example: {}", error.message);
            }
            return 1;
        }
    };
    let toolchain = backend::driver::Toolchain::default();
    let built = backend::driver::BuildDir::new().map_err(|error| error.to_string()).and_then(|dir| {
        let executable = dir.path.join("seed");
        backend::driver::build(&generated.source, &executable, &toolchain, Some(backend::driver::DEFAULT_TIMEOUT))?;
        let mut command = backend::driver::launch_command(&executable, DEMO_PROCESSES, &toolchain, &[])?;
        let output = command
            .env("HPF_LS_STATS", "1")
            .current_dir(&dir.path)
            .stdin(Stdio::null())
            .output()
            .map_err(|error| format!("cannot start the launcher: {error}"))?;
        Ok((dir, output))
    });
    match built {
        Ok((_dir, output)) => {
            let _ = writeln!(out, "standard output (what the sequential program prints):");
            out.push_str(&String::from_utf8_lossy(&output.stdout));
            let _ = writeln!(out, "--stats, on standard error (moved, next to the analysis's prediction):");
            out.push_str(&String::from_utf8_lossy(&output.stderr));
            if output.status.success() {
                0
            } else {
                1
            }
        }
        Err(message) if message.contains(backend::driver::INSTALL_HINT) => {
            let _ = writeln!(out, "not run: {message}");
            0
        }
        Err(message) => {
            let _ = writeln!(out, "the run failed: {message}");
            1
        }
    }
}

pub fn run_model(args: &[String], out: &mut String, err: &mut String) -> i32 {
    let options = match parse_input_options(args, |_, _| Ok(false)) {
        Ok(options) if !options.paths.is_empty() => options,
        Ok(_) => {
            let _ = writeln!(err, "usage: hpf-ls model [--form F] [--processors N] PATH...");
            return EXIT_USAGE;
        }
        Err(message) => {
            let _ = writeln!(err, "hpf-ls model: {message}");
            return EXIT_USAGE;
        }
    };
    let inputs = match collect_inputs(&options) {
        Ok(inputs) => inputs,
        Err(message) => {
            let _ = writeln!(err, "hpf-ls model: {message}");
            return EXIT_USAGE;
        }
    };
    let mut status = 0;
    for input in inputs {
        match crate::sources::load(&input) {
            Ok(loaded) => {
                let config = ModelConfig { number_of_processors: input.processors };
                let analysis = crate::modules::analyze_input(&input, &loaded, config);
                let _ = writeln!(out, "--- {}", input.path.display());
                out.push_str(&analysis::render::render_model(&analysis.model));
            }
            Err(message) => {
                let _ = writeln!(err, "hpf-ls model: {message}");
                status = EXIT_USAGE;
            }
        }
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The demo tells the whole story: the loop's triples, its three
    /// messages, the rewritten ALIGN and a run that prints what the
    /// sequential program prints with the moved data counted (or, with no
    /// MPI toolchain, why it did not run).
    #[test]
    fn the_demo_shows_triples_picture_fix_and_a_run() {
        let mut out = String::new();
        let status = run_demo(&mut out);
        assert_eq!(status, 0, "{out}");
        // The loop table and the picture.
        assert!(out.contains("B(I-1)       ref    access [1:15:1]  declared [1:15:1]  optimal [2:16:1]"), "{out}");
        for message in ["P(1) -> P(2)  B: 1 element (B(4))", "P(3) -> P(4)  B: 1 element (B(12))"] {
            assert!(out.contains(message), "{out}");
        }
        // The quick fix, as the lines it rewrites.
        assert!(out.contains("  7 - !HPF$ ALIGN B(I) WITH A(I)\n  7 + !HPF$ ALIGN B(I) WITH A(I+1)\n"), "{out}");
        let run = &out[out.find("--- a run on 4 processes").expect("a run section")..];
        if run.contains("not run:") {
            assert!(run.contains("apt-get install"), "{run}");
        } else {
            let expected = include_str!("../../../../tests/corpus/expected/seed_fig6.f90.out");
            assert!(run.contains(expected), "{run}");
            assert!(run.contains("3 element"), "the stats count the three elements:\n{run}");
        }
    }
}
