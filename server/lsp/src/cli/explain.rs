//! `hpf-ls explain FILE --line N [--svg OUT.svg] [--what-if]`
//!
//! The picture of the loop on line N: who owns which part of the alignment
//! target, where the arrays sit (declared and optimal), which iterations
//! each processor runs and every message, as text (and as SVG with
//! `--svg`); `--what-if` adds the transfer cost under other distributions.

use std::fmt::Write;

use analysis::picture::{loop_at_line, loop_picture, render_svg, render_text};
use analysis::whatif::{render_table, what_if_loop, what_if_unit};
use analysis::ModelConfig;

use super::args::ExplainArgs;
use super::{collect_inputs, EXIT_USAGE};

pub fn run(args: &ExplainArgs, out: &mut String, err: &mut String) -> i32 {
    let options = args.source.input_options(vec![args.file.clone()]);
    let line = args.line as usize;
    let what_if = args.what_if;
    let usage = |err: &mut String, message: &str| {
        let _ = writeln!(err, "hpf-ls explain: {message}");
        EXIT_USAGE
    };
    let input = match collect_inputs(&options) {
        Ok(mut inputs) if inputs.len() == 1 => inputs.remove(0),
        Ok(_) => return usage(err, "give exactly one file"),
        Err(message) => {
            let _ = writeln!(err, "hpf-ls explain: {message}");
            return EXIT_USAGE;
        }
    };
    let loaded = match crate::sources::load(&input) {
        Ok(loaded) => loaded,
        Err(message) => {
            let _ = writeln!(err, "hpf-ls explain: {message}");
            return EXIT_USAGE;
        }
    };
    let config = ModelConfig { number_of_processors: input.processors };
    let analysis = crate::modules::analyze_input(&input, &loaded, config);
    let (text, map) = (&loaded.expanded.text, &loaded.expanded.map);
    // The line of the file as the expanded program numbers it.
    let file = map.file_id(&input.path.display().to_string()).unwrap_or(0);
    let source = &map.file(file).text;
    let start = syntax::LineIndex::new(source).line_start(line - 1);
    let expanded_line = (start < source.len())
        .then(|| map.to_expanded(file, start))
        .flatten()
        .map(|offset| syntax::LineIndex::new(text).line_of(offset));
    let Some(loop_idx) = expanded_line.and_then(|it| loop_at_line(&analysis, text, it)) else {
        let _ = writeln!(err, "hpf-ls explain: {}:{line}: there is no loop on this line", input.path.display());
        return 1;
    };
    let mut picture = loop_picture(&analysis, text, loop_idx);
    // The title names the line of the expanded text: the user's instead.
    if let Some(at) = picture.title.rfind(" (line ") {
        let header = analysis.loops[loop_idx].header;
        let place = map.locate_range(header);
        let file = map.file(place.file);
        let user_line = syntax::LineIndex::new(&file.text).line_of(place.range.start) + 1;
        picture.title = format!("{} (line {user_line})", &picture.title[..at]);
    }
    out.push_str(&render_text(&picture));
    if what_if {
        out.push('\n');
        match what_if_loop(&analysis, loop_idx) {
            Some(table) => out.push_str(&render_table(&analysis, &table)),
            None => out.push_str("What if: the loop's target has no known distribution to vary.\n"),
        }
        if let Some(table) = what_if_unit(&analysis, loop_idx).filter(|it| it.loops.len() > 1) {
            out.push('\n');
            out.push_str(&render_table(&analysis, &table));
        }
    }
    if let Some(path) = &args.svg {
        if let Err(error) = std::fs::write(path, render_svg(&picture)) {
            let _ = writeln!(err, "hpf-ls explain: {}: {error}", path.display());
            return EXIT_USAGE;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed() -> String {
        format!("{}/../../tests/corpus/seed_fig6.f90", env!("CARGO_MANIFEST_DIR"))
    }

    fn explain(args: &[&str]) -> (i32, String, String) {
        use clap::Parser;
        let cli = crate::cli::args::Cli::try_parse_from(["hpf-ls", "explain"].iter().chain(args));
        let (mut out, mut err) = (String::new(), String::new());
        let status = match cli {
            Ok(crate::cli::args::Cli { command: Some(crate::cli::args::Command::Explain(args)) }) => {
                run(&args, &mut out, &mut err)
            }
            Ok(_) => unreachable!("parsed as explain"),
            Err(error) => {
                err = error.to_string();
                error.exit_code()
            }
        };
        (status, out, err)
    }

    #[test]
    fn draws_the_seed_loop_and_writes_the_svg() {
        let svg = std::env::temp_dir().join(format!("hpf-ls-explain-{}.svg", std::process::id()));
        let svg_arg = svg.to_string_lossy().to_string();
        let (status, out, err) = explain(&[&seed(), "--line", "12", "--svg", &svg_arg, "--what-if"]);
        assert_eq!(status, 0, "{err}");
        assert!(out.starts_with("DO I = 2, 16 (line 12)\n"), "{out}");
        assert!(out.contains("P(2) -> P(3)  B: 1 element (B(8))"), "{out}");
        assert!(out.contains("| (BLOCK) on 4 current"), "{out}");
        assert!(out.contains("What if A were distributed otherwise (2 loops):"), "{out}");
        let written = std::fs::read_to_string(&svg).expect("the SVG is written");
        let _ = std::fs::remove_file(&svg);
        assert_eq!(written.matches("<g class=\"message\"").count(), 3);
    }

    #[test]
    fn the_line_inside_a_loop_body_picks_that_loop() {
        let (status, out, _) = explain(&[&seed(), "--line=13"]);
        assert_eq!(status, 0);
        assert!(out.starts_with("DO I = 2, 16 (line 12)\n"), "{out}");
        assert!(!out.contains("What if"), "{out}");
    }

    #[test]
    fn refuses_what_it_cannot_do() {
        let (status, _, err) = explain(&[&seed(), "--line", "3"]);
        assert_eq!(status, 1);
        assert!(err.contains(":3: there is no loop on this line"), "{err}");
        let (status, _, err) = explain(&[&seed()]);
        assert_eq!(status, EXIT_USAGE);
        assert!(err.contains("--line <N>"), "{err}");
        let (status, _, err) = explain(&["--line", "3"]);
        assert_eq!(status, EXIT_USAGE);
        assert!(err.contains("<FILE>"), "{err}");
    }
}
