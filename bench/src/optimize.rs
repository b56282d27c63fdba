//! `hpf-bench optimize`: the whole-program alignment optimiser
//! (`analysis::optimize`) on every corpus program (moved elements before and
//! after, the search's time and the time with the edits written and checked
//! by re-analysis) and on a generated unit of 200 loops over 50 arrays
//! (target: the search under 50 ms).
//!
//! Times are medians of several runs; the machine is shared, so compare
//! medians, not single runs.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use analysis::ide::optimize_file_edits;
use analysis::optimize::{optimize, unit_costs, CostConfig, DEFAULT_TRIPS, EXACT_LIMIT, NODE_BUDGET};
use analysis::{FileAnalysis, ModelConfig};
use syntax::SourceForm;

const CONFIG: CostConfig =
    CostConfig { default_trips: DEFAULT_TRIPS, exact_limit: EXACT_LIMIT, node_budget: NODE_BUDGET };

/// The processor count the corpus snapshots use.
const PROCESSORS: i64 = 4;

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn time<T>(runs: usize, mut body: impl FnMut() -> T) -> (Duration, T) {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..runs {
        let start = Instant::now();
        let res = body();
        times.push(start.elapsed());
        last = Some(res);
    }
    (median(times), last.expect("at least one run"))
}

fn corpus_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
    let mut res: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/corpus exists")
        .filter_map(|it| it.ok().map(|it| it.path()))
        .filter(|it| {
            it.extension()
                .and_then(|ext| ext.to_str())
                .is_some_and(|ext| syntax::FORTRAN_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()))
        })
        .collect();
    res.sort();
    res
}

/// Sums over the units: (elements before, elements after, messages before, messages after, search time, with edits).
fn measure(text: &str, form: SourceForm, runs: usize) -> (u64, u64, u64, u64, Duration, Duration, bool) {
    let config = ModelConfig { number_of_processors: Some(PROCESSORS) };
    let analysis: FileAnalysis = analysis::analyze(text, form, config);
    let (search, plans) = time(runs, || optimize(&analysis, CONFIG));
    let (with_edits, optimized) = time(runs.min(3), || optimize_file_edits(&analysis, text, CONFIG));
    let before = unit_costs(&analysis, CONFIG);
    let exact = plans.iter().all(|it| it.exact);
    let (elements_before, messages_before) =
        before.iter().fold((0, 0), |acc, it| (acc.0 + it.cost.elements, acc.1 + it.cost.messages));
    let (elements_after, messages_after) =
        optimized.iter().fold((0, 0), |acc, it| (acc.0 + it.measured.elements, acc.1 + it.measured.messages));
    (elements_before, elements_after, messages_before, messages_after, search, with_edits, exact)
}

/// One program unit with `n_loops` loops over `n_arrays` 1-D arrays aligned
/// with one BLOCK template at pseudo-random offsets; every loop updates one
/// array from two others at small offsets, some inside a time-step loop.
pub fn generated_unit(n_loops: usize, n_arrays: usize) -> String {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |bound: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % bound
    };
    let mut text = String::from("program generated\n  integer, parameter :: n = 1000\n");
    for idx in 0..n_arrays {
        text.push_str(&format!("  real :: a{idx}(n)\n"));
    }
    text.push_str(
        "  integer :: i, k\n!HPF$ PROCESSORS p(8)\n!HPF$ TEMPLATE t(n+8)\n!HPF$ DISTRIBUTE t(BLOCK) ONTO p\n",
    );
    for idx in 0..n_arrays {
        text.push_str(&format!("!HPF$ ALIGN a{idx}(i) WITH t(i+{})\n", next(4)));
    }
    for _ in 0..n_loops {
        let home = next(n_arrays as u64);
        let (x, y) = (next(n_arrays as u64), next(n_arrays as u64));
        let (dh, dx, dy) = (next(3) as i64 - 1, next(3) as i64 - 1, next(3) as i64 - 1);
        let repeat = next(4) == 0;
        if repeat {
            text.push_str("  do k = 1, 10\n");
        }
        text.push_str(&format!("  do i = 2, n - 1\n    a{home}(i{dh:+}) = a{x}(i{dx:+}) + a{y}(i{dy:+})\n  end do\n"));
        if repeat {
            text.push_str("  end do\n");
        }
    }
    text.push_str("end program generated\n");
    text
}

pub fn run(_args: &[String]) {
    let cores = std::thread::available_parallelism().map_or(0, |it| it.get());
    println!("hpf-bench optimize: --processors {PROCESSORS}, default trips {}; cores: {cores}", CONFIG.default_trips);
    println!();
    println!("| program | moved elements before | after | messages before | after | search | with edits |");
    println!("|---|---|---|---|---|---|---|");
    for path in corpus_files() {
        let text = std::fs::read_to_string(&path).expect("readable");
        let form = SourceForm::from_path(&path);
        let (eb, ea, mb, ma, search, edits, exact) = measure(&text, form, 7);
        println!(
            "| {} | {eb} | {ea} | {mb} | {ma} | {:.2} ms{} | {:.2} ms |",
            path.file_name().and_then(|it| it.to_str()).unwrap_or("?"),
            search.as_secs_f64() * 1e3,
            if exact { "" } else { " (heuristic)" },
            edits.as_secs_f64() * 1e3
        );
    }
    println!();
    for (loops, arrays) in [(50, 20), (200, 50)] {
        let text = generated_unit(loops, arrays);
        let config = ModelConfig { number_of_processors: Some(PROCESSORS) };
        let (analyse, analysis) = time(5, || analysis::analyze(&text, SourceForm::Free, config));
        let (search, plans) = time(5, || optimize(&analysis, CONFIG));
        let (edits, optimized) = time(3, || optimize_file_edits(&analysis, &text, CONFIG));
        let plan = &plans[0];
        println!(
            "generated unit, {loops} loops, {arrays} arrays: analysis {:.1} ms; search {:.1} ms ({}, {} variables, {} combinations); with edits {:.1} ms; moved elements {} -> {} (measured {}; no choice below {}), messages {} -> {}, {} arrays realigned",
            analyse.as_secs_f64() * 1e3,
            search.as_secs_f64() * 1e3,
            if plan.exact { "exact" } else { "heuristic" },
            plan.variables,
            plan.combinations,
            edits.as_secs_f64() * 1e3,
            plan.before.elements,
            plan.after.elements,
            optimized[0].measured.elements,
            plan.lower_bound.elements,
            plan.before.messages,
            plan.after.messages,
            plan.changes.len()
        );
    }
}
