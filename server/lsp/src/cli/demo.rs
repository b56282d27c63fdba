//! `hpf-ls demo`: what the tool does, on the seed's worked example
//! (bundled, so it runs from a fresh clone with no arguments).
//!
//! `hpf-ls model PATH...` prints the same mapping description for files.

use std::fmt::Write;
use std::path::Path;

use analysis::ModelConfig;

use super::{collect_inputs, parse_input_options, EXIT_USAGE};

pub const DEMO_PATH: &str = "tests/corpus/seed_fig6.f90";
pub const DEMO_TEXT: &str = include_str!("../../../../tests/corpus/seed_fig6.f90");

pub fn run_demo(out: &mut String) -> i32 {
    let _ = writeln!(out, "hpf-ls demo: the worked example of the seed patent (JP2739836B2, FIG. 6-9)\n");
    let _ = writeln!(out, "--- {DEMO_PATH}");
    for (number, line) in DEMO_TEXT.lines().enumerate() {
        let _ = writeln!(out, "{:>3} | {line}", number + 1);
    }
    let config = ModelConfig { number_of_processors: None };
    let analysis = analysis::analyze(DEMO_TEXT, syntax::SourceForm::Free, config);
    let _ = writeln!(out, "\n--- mapping model (alignment triples relative to the final target)");
    out.push_str(&analysis::render::render_model(&analysis.model));
    let _ = writeln!(out, "\n--- diagnostics");
    if analysis.diagnostics.is_empty() {
        let _ = writeln!(out, "(none)");
    }
    super::check::render_text(Path::new(DEMO_PATH), DEMO_TEXT, &analysis.diagnostics, &[], out);
    0
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
