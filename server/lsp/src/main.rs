//! `hpf-ls`: the language server and compiler driver for High Performance
//! Fortran. This file only dispatches the subcommands.

use hpf_ls::cli;

use std::io::Write;

// Under a stream of edits glibc's malloc made requests wait on the analysis
// threads' frees (bench/RESULTS.md, "Under load"). Built not to ask for
// transparent huge pages (`no_thp`, see `server::run_stdio`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const HELP: &str = "\
hpf-ls: language server and compiler driver for High Performance Fortran

usage:
  hpf-ls [serve [--stdio]]         the language server, over stdin/stdout (what editors start)
  hpf-ls demo                      show what hpf-ls does on the seed's worked example
  hpf-ls check [OPTIONS] PATH...   report syntax and mapping diagnostics
  hpf-ls analyze [OPTIONS] PATH... per loop: home, access ranges, optimal triples, transfers
  hpf-ls optimize [--diff|--write] FILE
                                   choose the ALIGN directives that minimise all transfers
  hpf-ls explain FILE --line N [--svg OUT.svg] [--what-if]
                                   picture of a loop: ownership, placements, messages
  hpf-ls build FILE [-o EXE] [--emit-source OUT.f90] [--fc MPIF90] [-- FFLAGS]
                                   translate to SPMD Fortran + MPI and compile
  hpf-ls run FILE [--np N] [--launcher CMD] [--hostfile F] [--stats] [-- ARGS]
                                   build and run with mpirun (or srun)
  hpf-ls model [OPTIONS] PATH...   print the mapping model (alignments, triples, distributions)

options:
  --format text|json               output format of `check` (default text)
  --json                           JSON output of `analyze` (schema 1, docs/analyze-json.md)
  --form free|fixed|fixed132       source form, overriding the extension and hpf-ls.toml
  --processors N                   value of NUMBER_OF_PROCESSORS() (and of processors without ONTO)
  --severity CODE=LEVEL            error, warning, info, hint or off for one code (repeatable)
  -h, --help                       this text
  -V, --version                    the version

exit status of `check`: 0 no errors, 1 errors found, 2 usage or I/O error";

fn main() {
    // SAFETY: the first tree-sitter call of the process, on its only thread.
    unsafe { syntax::use_mimalloc_for_tree_sitter() };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut out, mut err) = (String::new(), String::new());
    let status = match args.first().map(String::as_str) {
        // The language server: no arguments (how editors start it), or `serve [--stdio]`.
        None => hpf_ls::server::run_stdio(),
        Some("serve") if args[1..].iter().all(|it| it == "--stdio") => hpf_ls::server::run_stdio(),
        Some("check") => cli::check::run(&args[1..], &mut out, &mut err),
        Some("analyze") => cli::analyze::run(&args[1..], &mut out, &mut err),
        Some("optimize") => cli::optimize::run(&args[1..], &mut out, &mut err),
        Some("explain") => cli::explain::run(&args[1..], &mut out, &mut err),
        Some("build") => cli::build::run_build(&args[1..], &mut err),
        Some("run") => cli::build::run_run(&args[1..], &mut err),
        Some("model") => cli::demo::run_model(&args[1..], &mut out, &mut err),
        Some("demo") => cli::demo::run_demo(&mut out),
        Some("-h" | "--help" | "help") => {
            out.push_str(HELP);
            out.push('\n');
            0
        }
        Some("-V" | "--version") => {
            out.push_str(concat!("hpf-ls ", env!("CARGO_PKG_VERSION"), "\n"));
            0
        }
        Some(other) => {
            err.push_str(&format!("hpf-ls: unknown command `{other}`\n\n{HELP}\n"));
            cli::EXIT_USAGE
        }
    };
    // A closed pipe (`hpf-ls check | head`) is not an error worth a panic.
    let _ = std::io::stdout().write_all(out.as_bytes());
    let _ = std::io::stderr().write_all(err.as_bytes());
    std::process::exit(status);
}
