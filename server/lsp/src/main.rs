//! `hpf-ls`: the language server and compiler driver for High Performance
//! Fortran. This file parses the command line (`cli::args`) and dispatches.

use std::io::{IsTerminal, Write};

use clap::Parser;
use hpf_ls::cli;
use hpf_ls::cli::args::{Cli, Command};

// Under a stream of edits glibc's malloc made requests wait on the analysis
// threads' frees (bench/RESULTS.md, "Under load"). Built not to ask for
// transparent huge pages (`no_thp`, see `server::run_stdio`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // SAFETY: the first tree-sitter call of the process, on its only thread.
    unsafe { syntax::use_mimalloc_for_tree_sitter() };
    // Usage errors exit with 2 (`cli::EXIT_USAGE`), `--help` with 0, both from clap.
    let cli = Cli::parse();
    let (mut out, mut err) = (String::new(), String::new());
    let status = match cli.command {
        // No command (how editors start it) or `serve [--stdio]`.
        None | Some(Command::Serve { .. }) => {
            if std::io::stdin().is_terminal() {
                // Someone typed `hpf-ls`: say what is waiting for input.
                eprintln!(
                    "hpf-ls: this is the HPF language server, waiting for LSP messages on stdin \
                     (editors start it this way).\nFor the command line, see `hpf-ls --help`; Ctrl-C quits."
                );
            }
            hpf_ls::server::run_stdio()
        }
        Some(Command::Check(args)) => cli::check::run(&args, &mut out, &mut err),
        Some(Command::Analyze(args)) => cli::analyze::run(&args, &mut out, &mut err),
        Some(Command::Optimize(args)) => cli::optimize::run(&args, &mut out, &mut err),
        Some(Command::Explain(args)) => cli::explain::run(&args, &mut out, &mut err),
        Some(Command::Build(args)) => {
            cli::clean_up_on_signals();
            cli::build::run_build(&args, &mut err)
        }
        Some(Command::Run(args)) => {
            cli::clean_up_on_signals();
            cli::build::run_run(&args, &mut err)
        }
        Some(Command::Model(args)) => {
            let argv = cli::model_argv(&args.source.input_options(args.paths.clone()));
            cli::demo::run_model(&argv, &mut out, &mut err)
        }
        Some(Command::Demo) => cli::demo::run_demo(&mut out),
        Some(Command::CheckRelay { dir, command }) => cli::run_check::relay(&dir, &command[0], &command[1..]),
        Some(Command::Completions { shell }) => {
            let mut bytes = Vec::new();
            clap_complete::generate(shell, &mut cli::args::command(), "hpf-ls", &mut bytes);
            out.push_str(&String::from_utf8_lossy(&bytes));
            0
        }
        Some(Command::Man { dir }) => {
            let mut bytes = Vec::new();
            let rendered = match &dir {
                // One page per command: hpf-ls.1, hpf-ls-check.1, ...
                Some(dir) => std::fs::create_dir_all(dir)
                    .and_then(|()| clap_mangen::generate_to(cli::args::command(), dir))
                    .map_err(|error| format!("{}: {error}", dir.display())),
                None => clap_mangen::Man::new(cli::args::command()).render(&mut bytes).map_err(|it| it.to_string()),
            };
            match rendered {
                Ok(()) => {
                    out.push_str(&String::from_utf8_lossy(&bytes));
                    0
                }
                Err(message) => {
                    err.push_str(&format!("hpf-ls man: {message}\n"));
                    cli::EXIT_USAGE
                }
            }
        }
    };
    if cli::terminating() {
        loop {
            std::thread::park();
        }
    }
    // A closed pipe (`hpf-ls check | head`) is not an error worth a panic.
    let _ = std::io::stdout().write_all(out.as_bytes());
    let _ = std::io::stderr().write_all(err.as_bytes());
    std::process::exit(status);
}
