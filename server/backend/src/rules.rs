//! The planner's rules as data: each construct the backend lowers, how it
//! runs, a small program that shows it and the differential test that runs
//! such programs under MPI against gfortran.
//!
//! `docs/backend.md` is this list as a table. The tests below keep the two
//! equal, lower every rule's example and check that it runs as its rule
//! says (a parallel rule gets no "runs on one process" note, a rank-0 rule
//! gets one), and check that the test a rule names exists.

/// How the statements of a rule run in the generated SPMD program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runs {
    /// Each process runs the iterations or elements it owns; neighbours'
    /// elements (halos) arrive in its shadow area first.
    OwnerComputes,
    /// As owner computes, after elements that are not neighbours are
    /// fetched (inspector/executor, all-to-all, broadcast) or sent to their
    /// owners.
    Fetched,
    /// Each process reduces its part; the partial results are combined in
    /// rank order on every process (the same bits on as many processes).
    /// With `--ordered-reductions` they travel along the chain of processes
    /// in the sequential order instead (bit for bit the sequential result).
    Combined,
    /// Every process runs it with replicated indices and conditions; the
    /// statements inside are planned one by one (in a loop whose dependence
    /// crosses processes, iteration by iteration, each element assignment
    /// on its element's owner).
    EveryProcess,
    /// A dependence carried across processes at a constant distance: each
    /// process waits for the boundary elements the process before it
    /// computed, runs its own iterations and sends its last elements on (a
    /// chain, or a wavefront over strips of an outer loop).
    Pipeline,
    /// Rank 0 runs it on gathered copies and scatters what it wrote: a
    /// correct, slower execution, reported as a note.
    Rank0,
}

impl Runs {
    /// The words `docs/backend.md` uses.
    pub fn label(self) -> &'static str {
        match self {
            Runs::OwnerComputes => "owner-computes",
            Runs::Fetched => "fetched",
            Runs::Combined => "combined",
            Runs::EveryProcess => "every process",
            Runs::Pipeline => "pipeline",
            Runs::Rank0 => "rank 0",
        }
    }
}

/// One construct the planner recognises.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    /// What the user wrote, in words.
    pub construct: &'static str,
    pub runs: Runs,
    /// Statements of the main program, on one line (`;` between them),
    /// over the declarations of [`EXAMPLE_DECLARATIONS`].
    pub example: &'static str,
    /// The differential test (under MPI, against gfortran) that runs
    /// programs with this construct.
    pub test: &'static str,
}

/// The declarations every example is written against: `u`, `v`, `w` and
/// the integer `k` are BLOCK over one template, as are the rows of the
/// matrix `mat`; `c` is CYCLIC, `idx` is replicated.
pub const EXAMPLE_DECLARATIONS: &str = "\
  integer, parameter :: n = 20
  real :: u(0:n+1), v(0:n+1), w(n), c(n), s
  integer :: k(n), idx(n), i, step
  real :: mat(n, n)
!HPF$ TEMPLATE t(0:n+1)
!HPF$ DISTRIBUTE t(BLOCK)
!HPF$ ALIGN (i) WITH t(i) :: u, v
!HPF$ ALIGN w(i) WITH t(i)
!HPF$ ALIGN mat(i, *) WITH t(i)
!HPF$ ALIGN k(i) WITH t(i)
!HPF$ DISTRIBUTE c(CYCLIC)
";

/// A rule's example as a whole program (its statements on [`EXAMPLE_LINE`]).
pub fn example_program(rule: &Rule) -> String {
    format!(
        "program example\n  implicit none\n{EXAMPLE_DECLARATIONS}  u = 1.0; v = 2.0; w = 3.0; c = 4.0; k = 1; mat = 0.5\n  \
         idx = [(mod(7 * i, n) + 1, i = 1, n)]\n{}\n  print *, sum(u), sum(w), sum(k), s\nend program example\n",
        rule.example
    )
}

/// The line of [`example_program`] that holds the rule's statements.
pub const EXAMPLE_LINE: usize = 16;

pub const RULES: &[Rule] = &[
    Rule {
        construct: "DO loop updating its home, reading neighbours",
        runs: Runs::OwnerComputes,
        example: "do i = 1, n; v(i) = u(i-1) + u(i+1); end do",
        test: "halo_statistics_equal_the_prediction",
    },
    Rule {
        construct: "array assignment of aligned sections",
        runs: Runs::OwnerComputes,
        example: "u(1:n) = v(0:n-1) + v(2:n+1)",
        test: "supported_corpus_programs_print_what_the_sequential_program_prints",
    },
    Rule {
        construct: "FORALL",
        runs: Runs::OwnerComputes,
        example: "forall (i = 1:n) u(i) = v(i-1) * 0.5",
        test: "forall_constructs_read_what_their_earlier_assignments_assigned",
    },
    Rule {
        construct: "WHERE on aligned sections",
        runs: Runs::OwnerComputes,
        example: "where (u(1:n) > 0.0) v(1:n) = u(1:n)",
        test: "random_programs_print_what_the_sequential_program_prints",
    },
    Rule {
        construct: "element set from replicated data",
        runs: Runs::OwnerComputes,
        example: "u(5) = 7.0",
        test: "variables_set_on_rank_zero_arrive_whole_on_every_process",
    },
    Rule {
        construct: "integer or extremum reduction",
        runs: Runs::OwnerComputes,
        example: "s = maxval(u(1:n)) + sum(k)",
        test: "random_programs_print_what_the_sequential_program_prints",
    },
    Rule {
        construct: "DO nest with replicated work arrays private to its iterations (NEW, or written before read)",
        runs: Runs::OwnerComputes,
        example: "do i = 1, n; do step = 1, n; idx(step) = k(i) + step; end do; do step = 1, n; mat(i, step) = idx(step) * 0.5; end do; end do",
        test: "private_work_arrays_in_subroutines_run_on_the_owners",
    },
    Rule {
        construct: "DO loop on a CYCLIC array, reads on its own cells",
        runs: Runs::OwnerComputes,
        example: "do i = 1, n; c(i) = c(i) * 2.0; end do",
        test: "cyclic_loops_with_shifted_reads_fetch_them_first",
    },
    Rule {
        construct: "floating-point SUM of a distributed section",
        runs: Runs::Combined,
        example: "s = sum(u(1:n))",
        test: "random_programs_print_what_the_sequential_program_prints",
    },
    Rule {
        construct: "scalar floating-point sum in a DO loop",
        runs: Runs::Combined,
        example: "s = 0.0; do i = 1, n; s = s + u(i) * v(i); end do",
        test: "random_programs_print_what_the_sequential_program_prints",
    },
    Rule {
        construct: "scan in a DO loop (the running value stored)",
        runs: Runs::Combined,
        example: "s = 0.0; do i = 1, n; s = s + u(i); w(i) = s; end do",
        test: "scans_written_as_loops_run_as_parallel_prefixes",
    },
    Rule {
        construct: "recurrence on a BLOCK array",
        runs: Runs::Combined,
        example: "do i = 2, n; u(i) = u(i-1) + v(i); end do",
        test: "scans_written_as_loops_run_as_parallel_prefixes",
    },
    Rule {
        construct: "DO loop reading elements that are not neighbours",
        runs: Runs::Fetched,
        example: "do i = 1, n; w(i) = u(n+1-i); end do",
        test: "strided_homes_split_loops_and_element_fetches_run_in_parallel",
    },
    Rule {
        construct: "updates through an index array",
        runs: Runs::Fetched,
        example: "do i = 1, n; k(idx(i)) = k(idx(i)) + 1; end do",
        test: "scatter_updates_through_index_arrays_give_the_sequential_results",
    },
    Rule {
        construct: "CSHIFT, EOSHIFT or TRANSPOSE of whole arrays",
        runs: Runs::Fetched,
        example: "w = cshift(w, 3)",
        test: "transposes_and_shifts_of_whole_arrays_run_in_parallel",
    },
    Rule {
        construct: "MATMUL of whole arrays (matrix by matrix or by vector)",
        runs: Runs::Fetched,
        example: "w = matmul(mat, c)",
        test: "matrix_products_of_distributed_arrays_run_in_parallel",
    },
    Rule {
        construct: "SUM, MAXVAL, COUNT, ... with DIM= of a rank-2 array into an array",
        runs: Runs::OwnerComputes,
        example: "w = sum(mat, dim=2)",
        test: "column_reductions_with_dim_run_in_parallel",
    },
    Rule {
        construct: "DO or IF around parallel statements",
        runs: Runs::EveryProcess,
        example: "do step = 1, 3; u(1:n) = v(1:n) + step; if (step > 1) w = w + 1.0; end do",
        test: "random_programs_print_what_the_sequential_program_prints",
    },
    Rule {
        construct: "DO nest no other rule plans (inner loops, reads of other processes' elements)",
        runs: Runs::Fetched,
        example: "do i = 1, n; do step = 1, 2; c(i) = c(i) + u(n+1-i) * step; end do; end do",
        test: "supported_corpus_programs_print_what_the_sequential_program_prints",
    },
    Rule {
        construct: "FORALL no other rule plans (masks, strides, indirect subscripts, reads of itself)",
        runs: Runs::Fetched,
        example: "forall (i = n:1:-1, u(i) > 0.0) u(i) = u(n+1-i) + c(idx(i))",
        test: "supported_corpus_programs_print_what_the_sequential_program_prints",
    },
    Rule {
        construct: "a section read at an element of a distributed array",
        runs: Runs::Rank0,
        example: "u(1:n) = u(k(1))",
        test: "variables_set_on_rank_zero_arrive_whole_on_every_process",
    },
    Rule {
        construct: "MAXLOC or MINLOC along DIM=1, or without DIM, of BLOCK data",
        runs: Runs::Combined,
        example: "step = maxloc(k, 1)",
        test: "supported_corpus_programs_print_what_the_sequential_program_prints",
    },
    Rule {
        construct: "MAXLOC or MINLOC of CYCLIC data or of a 2-D grid",
        runs: Runs::Rank0,
        example: "step = maxloc(c, 1)",
        test: "variables_set_on_rank_zero_arrive_whole_on_every_process",
    },
    Rule {
        construct: "DO nest with a dependence carried across processes at a constant distance",
        runs: Runs::Pipeline,
        example: "do i = 2, n; u(i) = 0.5 * (u(i-1) + u(i+1)); end do",
        test: "supported_corpus_programs_print_what_the_sequential_program_prints",
    },
    Rule {
        construct: "other DO loop with a dependence carried across processes",
        runs: Runs::EveryProcess,
        example: "do i = 2, n; u(i) = 0.5 * (u(i-1) + u(i+1)); w(i) = u(i); end do",
        test: "random_programs_print_what_the_sequential_program_prints",
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use analysis::model::ModelConfig;
    use syntax::{LineIndex, SourceForm};

    fn repo_file(path: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path);
        std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
    }

    /// The rows of the table of `docs/backend.md`: (construct, runs, example, test).
    fn documented_rows() -> Vec<[String; 4]> {
        let doc = repo_file("docs/backend.md");
        let cell = |text: &str| text.trim().trim_matches('`').to_string();
        doc.lines()
            .filter(|line| line.starts_with('|'))
            .skip(2) // the header and its rule
            .map(|line| {
                let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
                // No cell holds a pipe (no example uses `|`).
                let cells: Vec<&str> = inner.split('|').collect();
                assert_eq!(cells.len(), 4, "a row of four cells: {line}");
                [cell(cells[0]), cell(cells[1]), cell(cells[2]), cell(cells[3])]
            })
            .collect()
    }

    #[test]
    fn the_documented_table_is_the_rule_list() {
        let rows = documented_rows();
        let rules: Vec<[String; 4]> = RULES
            .iter()
            .map(|it| [it.construct.into(), it.runs.label().into(), it.example.into(), it.test.into()])
            .collect();
        assert_eq!(rows, rules, "docs/backend.md's table must list RULES in order (server/backend/src/rules.rs)");
    }

    /// Lowers `rule`'s example: the notes on its line, and the generated source.
    fn lower_example(rule: &Rule) -> (Vec<String>, String) {
        let text = example_program(rule);
        let analysis = analysis::analyze(&text, SourceForm::Free, ModelConfig { number_of_processors: None });
        assert!(
            analysis.diagnostics.iter().all(|it| it.severity != syntax::Severity::Error),
            "{}: {:?}\n{text}",
            rule.construct,
            analysis.diagnostics
        );
        // As `hpf-ls build` lowers by default.
        let generated = crate::lower_with(&analysis, &text, &crate::LowerOptions::default())
            .unwrap_or_else(|errors| panic!("{errors:?}\n{text}"));
        let index = LineIndex::new(&text);
        let notes = generated
            .notes
            .iter()
            .filter(|it| index.line_col(&text, it.range.start).0 + 1 == EXAMPLE_LINE)
            .map(|it| it.message.clone())
            .collect();
        (notes, generated.source)
    }

    /// Whether the generated program runs `rule`'s example as the rule says.
    fn runs_as_said(rule: &Rule, notes: &[String], source: &str) -> bool {
        let on_one_process = notes.iter().any(|it| it.contains("runs on one process"));
        let calls = |name: &str| source.contains(&format!("call {name}"));
        match rule.runs {
            Runs::Rank0 => on_one_process && calls("hpf_gather"),
            Runs::Fetched => {
                !on_one_process
                    && [
                        "hpf_fetch",
                        "hpf_remote_read",
                        "hpf_send_to_owners",
                        "hpf_send_home",
                        "hpf_permute",
                        "hpf_transpose",
                        "hpf_matmul",
                        "hpf_shift",
                        "hpf_nest_move",
                    ]
                    .iter()
                    .any(|it| calls(it))
            }
            Runs::Combined => !on_one_process && (calls("hpf_combine_") || calls("hpf_location_")),
            Runs::OwnerComputes | Runs::EveryProcess => !on_one_process && !calls("hpf_gather"),
            Runs::Pipeline => !on_one_process && calls("hpf_pipe_neighbours"),
        }
    }

    #[test]
    fn every_example_runs_as_its_rule_says() {
        let mut wrong = Vec::new();
        for rule in RULES {
            let (notes, source) = lower_example(rule);
            if !runs_as_said(rule, &notes, &source) {
                eprintln!("{}: {}\nnotes: {notes:?}\n{source}", rule.construct, rule.example);
                wrong.push(format!("{} ({}): notes {notes:?}", rule.construct, rule.runs.label()));
            }
        }
        assert!(wrong.is_empty(), "examples that do not run as their rule says:\n{}", wrong.join("\n"));
    }

    #[test]
    fn every_example_is_one_line_of_the_program() {
        for rule in RULES {
            let program = example_program(rule);
            assert_eq!(program.lines().nth(EXAMPLE_LINE - 1), Some(rule.example), "{program}");
        }
    }

    #[test]
    fn every_rule_names_a_test_that_exists() {
        let suites = ["server/lsp/tests/mpi_run.rs", "server/lsp/tests/random_programs.rs"].map(repo_file);
        for rule in RULES {
            let definition = format!("fn {}(", rule.test);
            assert!(suites.iter().any(|it| it.contains(&definition)), "{}: no test {}", rule.construct, rule.test);
        }
    }
}
