//! Messages about the generated program in the user's terms: the compiler's
//! and gfortran's run-time messages name lines of the generated
//! `program.f90`; the backend's line map (`backend::Generated::lines`) leads
//! back to the user's file, line and column.
//!
//! - `hpf-ls run --check`: each rank runs under [`relay`] (a hidden
//!   subcommand started by the launcher), which passes the program's stderr
//!   through until a run-time error begins, and records the error and how
//!   the process died for the driver (`backend::driver::record_death`); the
//!   driver ends the run and [`explain_death`] says, e.g.
//!   `prog.f90:27:9: on P(2): index 17 of A is out of bounds 1:16`.
//! - A generated program the compiler rejects is a bug of hpf-ls:
//!   [`explain_compile_failure`] names the generated line and the user's line
//!   it comes from, and asks for a report.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::{BufRead, Write as _};
use std::path::Path;

use analysis::model::{Bound, SymbolKind};
use analysis::FileAnalysis;
use backend::driver::{Death, DeathStatus, PROGRAM_FILE, RUNTIME_FILE};
use syntax::LineIndex;

/// A user's line the generated program comes from.
#[derive(Clone, Debug)]
struct Place {
    /// `file:line:column` (1-based), the column of the line's first non-blank.
    at: String,
    /// Offset in the analysed text (to find the program unit).
    offset: usize,
    /// The line as the user wrote it.
    text: String,
}

/// One declared array: its name as written and its bounds (`None`: not constant).
#[derive(Clone, Debug)]
struct Array {
    name: String,
    /// The unit that declares it, in the analysed text.
    unit: syntax::TextRange,
    bounds: Vec<(Option<i64>, Option<i64>)>,
}

/// What the messages about one generated program need.
pub struct GeneratedPlaces {
    /// Per generated line (0-based).
    places: Vec<Option<Place>>,
    /// The generated program's lines.
    generated: Vec<String>,
    /// Arrays by name in lower case.
    arrays: HashMap<String, Vec<Array>>,
}

impl GeneratedPlaces {
    pub fn new(
        generated: &backend::Generated,
        analysis: &FileAnalysis,
        map: &syntax::include::SourceMap,
    ) -> GeneratedPlaces {
        let mut indexes: Vec<Option<LineIndex>> = vec![None; map.files().len()];
        let places = generated
            .lines
            .iter()
            .map(|offset| {
                let offset = (*offset)?;
                let at = map.locate_range(syntax::TextRange::empty(offset));
                let file = map.file(at.file);
                let index = indexes[at.file].get_or_insert_with(|| LineIndex::new(&file.text));
                let (line, column) = index.line_col(&file.text, at.range.start);
                let text = file.text.lines().nth(line).unwrap_or("").trim_end().to_string();
                Some(Place { at: format!("{}:{}:{}", file.name, line + 1, column + 1), offset, text })
            })
            .collect();
        let mut arrays: HashMap<String, Vec<Array>> = HashMap::new();
        for unit in analysis.model.units.iter().filter(|it| it.origin.is_none()) {
            for symbol in unit.symbols.iter().filter(|it| it.kind == SymbolKind::Variable && !it.shape.is_empty()) {
                let bound = |it: &Bound| it.known();
                arrays.entry(symbol.name.key()).or_default().push(Array {
                    name: symbol.name.text.to_string(),
                    unit: unit.range,
                    bounds: symbol.shape.iter().map(|dim| (bound(&dim.lo), bound(&dim.hi))).collect(),
                });
            }
        }
        GeneratedPlaces { places, generated: generated.source.lines().map(str::to_string).collect(), arrays }
    }

    /// The user's place of generated line `line` (1-based).
    fn place(&self, line: usize) -> Option<&Place> {
        self.places.get(line.checked_sub(1)?)?.as_ref()
    }

    /// The array `name` (as gfortran writes it, in lower case) declared in
    /// the unit around `offset`, else anywhere.
    fn array(&self, name: &str, offset: usize) -> Option<&Array> {
        let found = self.arrays.get(name)?;
        found.iter().find(|it| it.unit.start <= offset && offset < it.unit.end).or(found.first())
    }
}

/// A location gfortran names: `FILE:LINE` in a backtrace, `At line LINE of file FILE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Generated {
    Program(usize),
    Runtime(usize),
}

fn generated_file(file: &str, line: usize) -> Option<Generated> {
    let name = Path::new(file.trim()).file_name()?.to_str()?;
    if name == PROGRAM_FILE {
        Some(Generated::Program(line))
    } else if name == RUNTIME_FILE {
        Some(Generated::Runtime(line))
    } else {
        None
    }
}

/// `At line 12 of file /tmp/x/program.f90` (also with `(unit = 6, ...)` after it).
fn at_line(text: &str) -> Option<Generated> {
    let rest = text.trim().strip_prefix("At line ")?;
    let (line, rest) = rest.split_once(" of file ")?;
    let file = rest.split(" (").next()?;
    generated_file(file, line.parse().ok()?)
}

/// The first frame of a backtrace in the generated program: gfortran's
/// `at /tmp/x/program.f90:12` lines.
fn backtrace_frames(report: &str) -> impl Iterator<Item = Generated> + '_ {
    report.lines().filter_map(|line| {
        let (file, line) = line.trim().strip_prefix("at ")?.rsplit_once(':')?;
        generated_file(file, line.parse().ok()?)
    })
}

/// gfortran's `Index '17' of dimension 1 of array 'a' above upper bound of 16`
/// (or `below lower bound of 1`): (index, dimension, array).
fn bounds_error(message: &str) -> Option<(i64, usize, String)> {
    let rest = message.strip_prefix("Index '")?;
    let (index, rest) = rest.split_once("' of dimension ")?;
    let (dimension, rest) = rest.split_once(" of array '")?;
    let (array, _) = rest.split_once('\'')?;
    Some((index.parse().ok()?, dimension.parse().ok()?, array.to_string()))
}

/// The messages of the relays' records of deaths, in the user's terms; the
/// processes that died of the same error at the same line are named together
/// (`on P(1), P(3)`), once.
pub fn explain_deaths(deaths: &[&Death], places: &GeneratedPlaces) -> String {
    const WHO: &str = "\u{0}who\u{0}";
    let mut told: Vec<(String, Vec<u32>)> = Vec::new();
    for death in deaths {
        let text = explain_death(death, WHO, places);
        match told.iter_mut().find(|it| it.0 == text) {
            Some((_, ranks)) => ranks.push(death.rank),
            None => told.push((text, vec![death.rank])),
        }
    }
    told.iter()
        .map(|(text, ranks)| {
            let names: Vec<String> = ranks.iter().map(|it| format!("P({})", it + 1)).collect();
            text.replace(WHO, &format!("on {}", names.join(", ")))
        })
        .collect()
}

/// The message of one death, `who` standing for the process.
fn explain_death(death: &Death, who: &str, places: &GeneratedPlaces) -> String {
    let lines: Vec<&str> = death.report.lines().collect();
    let error = lines.iter().find_map(|it| it.trim().strip_prefix("Fortran runtime error: ")).map(str::to_string);
    let signal = lines.iter().find_map(|it| it.trim().strip_prefix("Program received signal ")).map(str::to_string);
    let at = lines.iter().find_map(|it| at_line(it));
    // Where in the user's program: the error's line, else the innermost
    // frame of the backtrace in the generated program that maps.
    let in_program = |it: &Generated| match it {
        Generated::Program(line) => places.place(*line),
        Generated::Runtime(_) => None,
    };
    let user = at.iter().chain(backtrace_frames(&death.report).collect::<Vec<_>>().iter()).find_map(in_program);
    let what = match (&error, &signal, death.status) {
        (Some(message), _, _) => user_message(message, user.map(|it| it.offset), places),
        (None, Some(signal), _) => format!("killed by signal {signal}"),
        (None, None, DeathStatus::Exit(code)) => format!("the program stopped with exit status {code}"),
        (None, None, DeathStatus::Signal(signal)) => format!("the program was killed by signal {signal}"),
    };
    let mut text = match user {
        Some(place) => format!("{}: {who}: {what}\n  {}\n", place.at, place.text.trim()),
        None => format!("hpf-ls: {who}: {what}\n"),
    };
    // An error inside the runtime or in the backend's own lines is hpf-ls's.
    let in_backend = match at {
        Some(Generated::Runtime(_)) => true,
        Some(Generated::Program(line)) => places.place(line).is_none(),
        None => false,
    };
    if error.is_some() && in_backend {
        let generated = match at {
            Some(Generated::Runtime(line)) => format!("{RUNTIME_FILE}:{line}"),
            Some(Generated::Program(line)) => format!("{PROGRAM_FILE}:{line}"),
            None => String::new(),
        };
        let _ = writeln!(
            text,
            "hpf-ls: internal error: this happened in code hpf-ls generated ({generated}); please report it to hpf-ls's developers with your program"
        );
    }
    text
}

/// gfortran's run-time error `message`, with the array's name and declared
/// bounds as the user wrote them.
fn user_message(message: &str, offset: Option<usize>, places: &GeneratedPlaces) -> String {
    let Some((index, dimension, array)) = bounds_error(message) else { return message.to_string() };
    let declared = places.array(&array, offset.unwrap_or(0));
    let name = declared.map_or(array.to_uppercase(), |it| it.name.clone());
    let of = match declared {
        Some(declared) if declared.bounds.len() > 1 => format!("index {index} in dimension {dimension} of {name}"),
        _ => format!("index {index} of {name}"),
    };
    match declared.and_then(|it| it.bounds.get(dimension - 1)) {
        // Within the declared bounds, outside this process' local part of a
        // distributed array: the backend's mistake, not the user's.
        Some((Some(lo), Some(hi))) if (*lo..=*hi).contains(&index) => format!(
            "{of} is within its bounds {lo}:{hi} but not in the part of it this process holds \
             (an internal error of hpf-ls: please report it to hpf-ls's developers with your program)"
        ),
        Some((Some(lo), Some(hi))) => format!("{of} is out of bounds {lo}:{hi}"),
        _ => {
            let bound = message.split(" bound of ").nth(1).unwrap_or("?");
            let side = if message.contains("above upper") { "above its upper" } else { "below its lower" };
            format!("{of} is {side} bound {bound}")
        }
    }
}

/// gfortran's messages when the compiler rejected the generated program:
/// `FILE:LINE:COLUMN:` lines followed (after the quoted source) by `Error: ...`.
fn compiler_errors(output: &str) -> Vec<(Generated, String)> {
    let mut errors = Vec::new();
    let mut at: Option<Generated> = None;
    for line in output.lines() {
        if let Some(location) = line.strip_suffix(':') {
            // `/tmp/x/program.f90:12:10` or `...:12:10-20`.
            let mut parts = location.rsplitn(3, ':');
            let (_column, line_number, file) = (parts.next(), parts.next(), parts.next());
            if let (Some(file), Some(number)) = (file, line_number.and_then(|it| it.parse().ok())) {
                if let Some(found) = generated_file(file, number) {
                    at = Some(found);
                    continue;
                }
            }
        }
        let message = line.strip_prefix("Error: ").or_else(|| line.strip_prefix("Fatal Error: "));
        if let Some(message) = message {
            if let Some(location) = at.take() {
                errors.push((location, message.to_string()));
            }
        }
    }
    errors
}

/// The message of a compiler that rejected the generated program: an
/// internal error naming each generated line it rejects and the user's line
/// it comes from; `None` when no error names a generated line (a bad flag
/// of the user's, a missing library: `message` says it best).
pub fn explain_compile_failure(message: &str, places: &GeneratedPlaces) -> Option<String> {
    let errors = compiler_errors(message);
    if errors.is_empty() {
        return None;
    }
    let mut text = String::from(
        "hpf-ls: internal error: the MPI compiler rejects the program hpf-ls generated; this is a bug of hpf-ls, \
         please report it to hpf-ls's developers with your program (`hpf-ls build --emit-source DIR` writes what was compiled)\n",
    );
    for (at, error) in errors {
        let (file, line) = match at {
            Generated::Program(line) => (PROGRAM_FILE, line),
            Generated::Runtime(line) => (RUNTIME_FILE, line),
        };
        let _ = writeln!(text, "  {file}:{line}: {error}");
        if let Generated::Program(line) = at {
            if let Some(generated) = places.generated.get(line - 1) {
                let _ = writeln!(text, "    generated: {}", generated.trim());
            }
            match places.place(line) {
                Some(place) => {
                    let _ = writeln!(text, "    from {}: {}", place.at, place.text.trim());
                }
                None => {
                    let _ = writeln!(text, "    (a line of hpf-ls's own, for no statement of yours)");
                }
            }
        }
    }
    Some(text)
}

/// This process' rank, from the variable its launcher sets.
fn rank_from_environment() -> u32 {
    ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"]
        .iter()
        .find_map(|name| std::env::var(name).ok()?.parse().ok())
        .unwrap_or(0)
}

/// Whether `line` of stderr begins a run-time error of gfortran's (what
/// follows it, to the end, is its report).
fn begins_error(line: &str, next_is_error: bool) -> bool {
    let line = line.trim_start();
    (line.starts_with("At line ") && next_is_error)
        || line.starts_with("Fortran runtime error: ")
        || line.starts_with("Program received signal ")
}

/// The relay of `hpf-ls run --check`, one per rank: runs `program` with
/// `args`, passes its stderr through until a run-time error begins, and
/// when the program dies records its error in `dir` for the driver.
/// Returns the program's exit status.
pub fn relay(dir: &Path, program: &OsString, args: &[OsString]) -> i32 {
    let mut command = std::process::Command::new(program);
    command.args(args).stderr(std::process::Stdio::piped());
    die_with_parent(&mut command);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) => {
            eprintln!("hpf-ls: cannot start {}: {error}", Path::new(program).display());
            return 127;
        }
    };
    let mut report = String::new();
    if let Some(stderr) = child.stderr.take() {
        let mut reader = std::io::BufReader::new(stderr);
        let mut held: Option<Vec<u8>> = None;
        let mut line = Vec::new();
        let mut out = std::io::stderr();
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let text = String::from_utf8_lossy(&line).into_owned();
            if !report.is_empty() {
                report.push_str(&text);
                continue;
            }
            // `At line N of file F` comes before the message that says
            // whether it is an error or a warning.
            if let Some(previous) = held.take() {
                let previous_text = String::from_utf8_lossy(&previous).into_owned();
                if begins_error(&previous_text, text.trim_start().starts_with("Fortran runtime error: ")) {
                    report.push_str(&previous_text);
                    report.push_str(&text);
                    continue;
                }
                let _ = out.write_all(&previous);
            }
            if text.trim_start().starts_with("At line ") {
                held = Some(line.clone());
            } else if begins_error(&text, false) {
                report.push_str(&text);
            } else {
                let _ = out.write_all(&line);
            }
        }
        if let Some(previous) = held {
            let _ = out.write_all(&previous);
        }
    }
    let status = match child.wait() {
        Ok(status) => status,
        Err(_) => return 1,
    };
    let died = match (status.code(), signal_of(&status)) {
        (Some(0), _) => None,
        (Some(code), _) => Some(DeathStatus::Exit(code)),
        (None, Some(signal)) => Some(DeathStatus::Signal(signal)),
        (None, None) => Some(DeathStatus::Exit(1)),
    };
    let Some(died) = died else {
        eprint!("{report}");
        return 0;
    };
    let death = Death { rank: rank_from_environment(), status: died, report: report.clone() };
    if backend::driver::record_death(dir, &death).is_err() {
        // The driver is gone: say it here.
        eprint!("{report}");
    }
    match died {
        DeathStatus::Exit(code) => code,
        DeathStatus::Signal(signal) => 128 + signal,
    }
}

#[cfg(unix)]
fn signal_of(status: &std::process::ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(status)
}

#[cfg(not(unix))]
fn signal_of(_: &std::process::ExitStatus) -> Option<i32> {
    None
}

/// The program dies with its relay: a launcher that kills the relay must
/// not leave the program running (Linux's parent-death signal).
fn die_with_parent(command: &mut std::process::Command) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        extern "C" {
            fn prctl(option: i32, ...) -> i32;
        }
        const PR_SET_PDEATHSIG: i32 = 1;
        const SIGKILL: i32 = 9;
        // SAFETY: prctl is async-signal-safe, as `pre_exec` requires.
        unsafe {
            command.pre_exec(|| {
                prctl(PR_SET_PDEATHSIG, SIGKILL as std::ffi::c_ulong);
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = command;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_errors_name_the_declared_bounds() {
        let array =
            Array { name: "A".to_string(), unit: syntax::TextRange::new(0, 100), bounds: vec![(Some(1), Some(16))] };
        let places = GeneratedPlaces {
            places: Vec::new(),
            generated: Vec::new(),
            arrays: HashMap::from([("a".to_string(), vec![array])]),
        };
        let message = |text: &str| user_message(text, Some(10), &places);
        assert_eq!(
            message("Index '17' of dimension 1 of array 'a' above upper bound of 16"),
            "index 17 of A is out of bounds 1:16"
        );
        // A distributed array's local part is smaller than its bounds.
        assert!(message("Index '9' of dimension 1 of array 'a' above upper bound of 8")
            .starts_with("index 9 of A is within its bounds 1:16 but not in the part of it this process holds"));
        // An array the analysis does not know keeps gfortran's bound.
        assert_eq!(
            message("Index '0' of dimension 2 of array 'w' below lower bound of 1"),
            "index 0 of W is below its lower bound 1"
        );
        assert_eq!(
            message("Allocatable actual argument 'x' is not allocated"),
            "Allocatable actual argument 'x' is not allocated"
        );
    }

    #[test]
    fn gfortran_messages_are_read() {
        assert_eq!(at_line("At line 27 of file /tmp/hpf-ls-build-x/program.f90"), Some(Generated::Program(27)));
        assert_eq!(
            at_line("At line 3 of file /tmp/b/hpf_runtime.f90 (unit = 6, file = 'stdout')"),
            Some(Generated::Runtime(3))
        );
        assert_eq!(at_line("At line 3 of file user.f90"), None);
        assert_eq!(
            bounds_error("Index '17' of dimension 1 of array 'a' above upper bound of 16"),
            Some((17, 1, "a".to_string()))
        );
        let output = "/tmp/d/program.f90:12:10:\n\n   12 |   x = y(\n      |          1\nError: Syntax error in argument list at (1)\n/tmp/d/program.f90:3:5:\n\nWarning: Unused variable\n";
        assert_eq!(
            compiler_errors(output),
            [(Generated::Program(12), "Syntax error in argument list at (1)".to_string())]
        );
    }
}
