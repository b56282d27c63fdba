//! The what-if table's figures equal brute-force counts: random small
//! programs, every alternative distribution, every iteration enumerated.

use std::collections::BTreeSet;

use analysis::model::Format;
use analysis::whatif::{what_if_unit, WhatIfRow};
use analysis::ModelConfig;
use proptest::prelude::*;
use syntax::SourceForm;

/// The owner's rank of a target position (1-based positions, column-major ranks).
fn owner(row: &WhatIfRow, extents: &[i64], position: &[i64]) -> i64 {
    let mut rank = 0;
    let mut weight = 1;
    let mut proc_dim = 0;
    for (dim, format) in row.alternative.formats.iter().enumerate() {
        let procs = match format {
            Format::Collapsed => continue,
            _ => row.alternative.procs[proc_dim],
        };
        proc_dim += 1;
        let block = match format {
            Format::Block => (extents[dim] + procs - 1) / procs,
            Format::BlockOf(Some(m)) | Format::Cyclic(Some(m)) => *m,
            other => panic!("unexpected format {other:?}"),
        };
        rank += ((position[dim] - 1) / block % procs) * weight;
        weight *= procs;
    }
    rank
}

/// Distinct (element, destination) pairs that are not local, and distinct (source, destination) pairs.
fn brute_force(row: &WhatIfRow, extents: &[i64], iterations: &[(Vec<i64>, Vec<i64>, Vec<i64>)]) -> (u64, u64) {
    let mut moved: BTreeSet<(Vec<i64>, i64)> = BTreeSet::new();
    let mut messages: BTreeSet<(i64, i64)> = BTreeSet::new();
    for (home_position, element, element_position) in iterations {
        let to = owner(row, extents, home_position);
        let from = owner(row, extents, element_position);
        if from != to {
            moved.insert((element.clone(), to));
            messages.insert((from, to));
        }
    }
    (moved.len() as u64, messages.len() as u64)
}

fn check(text: &str, extents: &[i64], iterations: &[(Vec<i64>, Vec<i64>, Vec<i64>)]) -> Result<(), TestCaseError> {
    let analysis =
        analysis::analyze(text, SourceForm::Fixed { line_length: 72 }, ModelConfig { number_of_processors: None });
    let loop_idx = analysis.loops.iter().position(|it| it.home.is_some()).expect("a loop with a home");
    let what_if = what_if_unit(&analysis, loop_idx).expect("a what-if table");
    prop_assert!(what_if.rows.len() >= 4, "{:?}", what_if.rows);
    for row in &what_if.rows {
        prop_assert_eq!(row.uncounted, 0, "{}\n{:?}", text, row);
        let expected = brute_force(row, extents, iterations);
        prop_assert_eq!((row.moved_elements, row.messages), expected, "{}\nunder {}", text, row.alternative.label());
    }
    Ok(())
}

fn format_text(format: u8, n: i64, p: i64) -> String {
    match format {
        0 => "BLOCK".into(),
        1 => "CYCLIC".into(),
        2 => "CYCLIC(3)".into(),
        _ => format!("BLOCK({})", (n + p - 1) / p + 1),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// `A(c*I+d) = B(e*I+f)` with `ALIGN B(I) WITH A(s*I+o)`, A distributed over P(p).
    #[test]
    fn one_dimension(
        n in 8i64..40,
        p in 1i64..6,
        format in 0u8..4,
        c in 1i64..3,
        d in -2i64..3,
        e in prop_oneof![Just(1i64), Just(-1), Just(2)],
        reverse in any::<bool>(),
        slack in 0i64..8,
        trips in 1i64..12,
    ) {
        // The home A(c*I+d) stays in 1..n for I in lo..hi.
        let lo = (1 - d + c - 1).div_euclid(c).max(1);
        let hi = (lo + trips - 1).min((n - d).div_euclid(c));
        prop_assume!(hi >= lo);
        // B(e*I+f) stays in 1..mb.
        let first = e * lo;
        let last = e * hi;
        let f = 1 - first.min(last);
        let mb = first.max(last) + f;
        prop_assume!(mb <= n);
        let (s, o) = if reverse { (-1, mb + 1 + slack.min(n - mb)) } else { (1, slack.min(n - mb)) };
        let align = if reverse { format!("A({o}-I)") } else { format!("A(I+{o})") };
        let text = format!(
            "      PROGRAM R\n      REAL A({n}), B({mb})\n!HPF$ PROCESSORS P({p})\n!HPF$ DISTRIBUTE A({}) ONTO P\n!HPF$ ALIGN B(I) WITH {align}\n      DO I = {lo}, {hi}\n        A({c}*I+({d})) = B({e}*I+({f}))\n      END DO\n      END\n",
            format_text(format, n, p)
        );
        let iterations: Vec<_> = (lo..=hi)
            .map(|i| (vec![c * i + d], vec![e * i + f], vec![s * (e * i + f) + o]))
            .collect();
        check(&text, &[n], &iterations)?;
    }

    /// `A(I,J) = B(I+a,J+b)` with B aligned to A, A distributed over one dimension of P(p): the other dimension is tried too.
    #[test]
    fn two_dimensions(
        n1 in 4i64..14,
        n2 in 4i64..14,
        p in 2i64..5,
        second in any::<bool>(),
        format in 0u8..3,
        a in -1i64..2,
        b in -1i64..2,
    ) {
        let formats = if second {
            format!("*,{}", format_text(format, n2, p))
        } else {
            format!("{},*", format_text(format, n1, p))
        };
        let text = format!(
            "      PROGRAM R\n      REAL A({n1},{n2}), B({n1},{n2})\n!HPF$ PROCESSORS P({p})\n!HPF$ DISTRIBUTE A({formats}) ONTO P\n!HPF$ ALIGN B(I,J) WITH A(I,J)\n      DO J = 2, {}\n        DO I = 2, {}\n          A(I,J) = B(I+({a}),J+({b}))\n        END DO\n      END DO\n      END\n",
            n2 - 1,
            n1 - 1
        );
        let mut iterations = Vec::new();
        for j in 2..n2 {
            for i in 2..n1 {
                iterations.push((vec![i, j], vec![i + a, j + b], vec![i + a, j + b]));
            }
        }
        let analysis = analysis::analyze(&text, SourceForm::Fixed { line_length: 72 }, ModelConfig { number_of_processors: None });
        let loop_idx = analysis.loops.iter().position(|it| it.home.is_some()).expect("a loop with a home");
        let what_if = what_if_unit(&analysis, loop_idx).expect("a what-if table");
        // Both dimensions are offered.
        prop_assert!(what_if.rows.iter().any(|it| it.alternative.formats[0] == Format::Collapsed));
        prop_assert!(what_if.rows.iter().any(|it| it.alternative.formats[1] == Format::Collapsed));
        check(&text, &[n1, n2], &iterations)?;
    }
}

/// A billion elements: the table comes from the closed forms, not from enumeration.
#[test]
fn a_billion_elements_is_instant() {
    let text = "      PROGRAM BIG\n      REAL A(1000000000), B(1000000000)\n!HPF$ PROCESSORS P(16)\n!HPF$ DISTRIBUTE A(CYCLIC) ONTO P\n!HPF$ ALIGN B(I) WITH A(I)\n      DO I = 2, 1000000000\n        A(I) = B(I-1)\n      END DO\n      END\n";
    let analysis =
        analysis::analyze(text, SourceForm::Fixed { line_length: 72 }, ModelConfig { number_of_processors: None });
    let loop_idx = analysis.loops.iter().position(|it| it.home.is_some()).unwrap();
    let started = std::time::Instant::now();
    let what_if = what_if_unit(&analysis, loop_idx).unwrap();
    assert!(started.elapsed().as_secs_f64() < 5.0, "took {:?}", started.elapsed());
    // CYCLIC sends every element but the last one's neighbour: all 999999999 move; BLOCK only 15.
    assert_eq!(what_if.rows[0].moved_elements, 999_999_999);
    let block = what_if.rows.iter().find(|it| it.alternative.formats == vec![Format::Block]).unwrap();
    assert_eq!((block.moved_elements, block.messages), (15, 15));
    assert_eq!(what_if.best().map(|it| it.alternative.formats.clone()), Some(vec![Format::Block]));
}
