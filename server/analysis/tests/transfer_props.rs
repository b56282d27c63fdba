//! Property tests of the closed-form transfer counts against a brute-force oracle, plus closed-form checks for loops of 10^9 iterations.

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

use analysis::transfer::{count_transfer, Affine, Message, Placement, TransferCount, TransferProblem};
use proptest::collection::vec;
use proptest::prelude::*;

/// The number of cases per property; the brief asks for at least 2000.
const CASES: u32 = 2000;

/// Computes a processor coordinate straight from the HPF definition, independently of the crate.
fn oracle_coord(block: i64, procs: i64, lower: i64, pos: &Affine, k: &[u64]) -> i64 {
    let index = match pos.var {
        Some(v) => pos.start as i128 + pos.stride as i128 * k[v] as i128,
        None => pos.start as i128,
    };
    let r = index - lower as i128 + 1;
    ((r - 1).div_euclid(block as i128)).rem_euclid(procs as i128) as i64
}

/// Enumerates every iteration and collects the distinct (element, source, destination) triples.
fn oracle(problem: &TransferProblem) -> Vec<Message> {
    let nv = problem.trips.len();
    if problem.trips.contains(&0) {
        return Vec::new();
    }
    let mut triples: HashSet<(Vec<u64>, u32, u32)> = HashSet::new();
    let mut k = vec![0u64; nv];
    loop {
        // Every dimension offers one or more (source, destination) coordinate pairs.
        let mut options: Vec<Vec<(i64, i64)>> = Vec::new();
        for (d, (from, to)) in problem.from.iter().zip(&problem.to).enumerate() {
            let at = |pl: &Placement| match pl {
                Placement::Everywhere => None,
                Placement::Cyclic { block, procs, lower, pos } => Some(oracle_coord(*block, *procs, *lower, pos, &k)),
            };
            options.push(match (at(from), at(to)) {
                (None, None) => (0..problem.proc_shape[d]).map(|c| (c, c)).collect(),
                (None, Some(t)) => vec![(t, t)],
                (Some(s), None) => vec![(s, s)],
                (Some(s), Some(t)) => vec![(s, t)],
            });
        }
        let element: Vec<u64> = problem.element_vars.iter().map(|&v| k[v]).collect();
        let mut choice = vec![0usize; options.len()];
        'combos: loop {
            let (mut src, mut dst, mut weight) = (0i64, 0i64, 1i64);
            for (d, opts) in options.iter().enumerate() {
                let (s, t) = opts[choice[d]];
                src += s * weight;
                dst += t * weight;
                weight *= problem.proc_shape[d];
            }
            if src != dst {
                triples.insert((element.clone(), src as u32, dst as u32));
            }
            let mut d = 0;
            loop {
                if d == options.len() {
                    break 'combos;
                }
                choice[d] += 1;
                if choice[d] < options[d].len() {
                    break;
                }
                choice[d] = 0;
                d += 1;
            }
        }
        let mut v = 0;
        loop {
            if v == nv {
                let mut grouped: BTreeMap<(u32, u32), u64> = BTreeMap::new();
                for (_, s, t) in triples {
                    *grouped.entry((s, t)).or_default() += 1;
                }
                return grouped.into_iter().map(|((from, to), elements)| Message { from, to, elements }).collect();
            }
            k[v] += 1;
            if k[v] < problem.trips[v] {
                break;
            }
            k[v] = 0;
            v += 1;
        }
    }
}

/// Checks the internal consistency of a result.
fn assert_consistent(result: &TransferCount) {
    let sum: u64 = result.messages.iter().map(|m| m.elements).sum();
    assert_eq!(result.moved_elements, sum);
    assert!(result.messages.iter().all(|m| m.from != m.to && m.elements > 0));
    assert!(result.messages.windows(2).all(|w| (w[0].from, w[0].to) < (w[1].from, w[1].to)));
}

/// A distribution (block size, template lower bound) over `p` processors: BLOCK of a random extent, or CYCLIC(m).
fn distribution(p: i64) -> impl Strategy<Value = (i64, i64)> {
    prop_oneof![
        (1i64..=30, -3i64..=3).prop_map(move |(extent, lower)| ((extent + p - 1) / p, lower)),
        (1i64..=5, -3i64..=3),
    ]
}

/// A template position driven by one of `nvars` counters, or constant.
fn affine(nvars: usize) -> impl Strategy<Value = Affine> {
    (prop_oneof![1 => Just(None), 4 => (0..nvars).prop_map(Some)], -5i64..=20, -4i64..=4)
        .prop_map(|(var, start, stride)| Affine { var, start, stride })
}

/// A (from, to) pair of placements for one dimension with `p` processors, sharing the distribution half of the time.
fn dim_pair(p: i64, nvars: usize) -> impl Strategy<Value = (Placement, Placement)> {
    (distribution(p), distribution(p), any::<bool>(), affine(nvars), affine(nvars), 0u8..10).prop_map(
        move |(df, dt, same, af, at, kind)| {
            let dt = if same { df } else { dt };
            let from = Placement::cyclic(df.0, p, df.1, af);
            let to = Placement::cyclic(dt.0, p, dt.1, at);
            match kind {
                0 => (Placement::Everywhere, to),
                1 => (from, Placement::Everywhere),
                2 => (Placement::Everywhere, Placement::Everywhere),
                _ => (from, to),
            }
        },
    )
}

/// A random element-counter subset of `nvars` counters.
fn element_vars(nvars: usize) -> impl Strategy<Value = Vec<usize>> {
    vec(any::<bool>(), nvars).prop_map(|keep| keep.iter().enumerate().filter(|(_, &k)| k).map(|(v, _)| v).collect())
}

/// A random problem with a 1-D or 2-D arrangement and 1 to 3 counters.
fn problem() -> impl Strategy<Value = TransferProblem> {
    (1usize..=2, 1usize..=3)
        .prop_flat_map(|(ndims, nvars)| (vec(1i64..=6, ndims), Just(nvars)))
        .prop_flat_map(|(shape, nvars)| {
            let dims: Vec<_> = shape.iter().map(|&p| dim_pair(p, nvars)).collect();
            let trips = vec(prop_oneof![1 => Just(0u64), 12 => 1u64..=12], nvars);
            (Just(shape), dims, trips, element_vars(nvars))
        })
        .prop_map(|(proc_shape, dims, trips, element_vars)| {
            let (from, to) = dims.into_iter().unzip();
            TransferProblem { trips, proc_shape, from, to, element_vars }
        })
}

/// A transpose `A(I,J) = B(J,I)` style problem on a 2-D arrangement.
fn transpose() -> impl Strategy<Value = TransferProblem> {
    (1i64..=6, 1i64..=6)
        .prop_flat_map(|(p0, p1)| {
            (
                Just((p0, p1)),
                (distribution(p0), distribution(p0), distribution(p1), distribution(p1)),
                vec((-5i64..=20, -4i64..=4), 4),
                vec(1u64..=12, 2),
                element_vars(2),
            )
        })
        .prop_map(|((p0, p1), (f0, t0, f1, t1), pos, trips, element_vars)| {
            let at = |i: usize, var: usize| Affine::of(var, pos[i].0, pos[i].1);
            TransferProblem {
                trips,
                proc_shape: vec![p0, p1],
                from: vec![Placement::cyclic(f0.0, p0, f0.1, at(0, 1)), Placement::cyclic(f1.0, p1, f1.1, at(1, 0))],
                to: vec![Placement::cyclic(t0.0, p0, t0.1, at(2, 0)), Placement::cyclic(t1.0, p1, t1.1, at(3, 1))],
                element_vars,
            }
        })
}

/// A 1-D problem with one long loop, so that whole periods and remainders are exercised.
fn long_loop() -> impl Strategy<Value = TransferProblem> {
    (1i64..=6, 1usize..=2)
        .prop_flat_map(|(p, nvars)| {
            let lens = (1u64..=400, 1u64..=6);
            (Just(p), dim_pair(p, nvars), lens, element_vars(nvars), Just(nvars))
        })
        .prop_map(|(p, (from, to), (n0, n1), element_vars, nvars)| TransferProblem {
            trips: if nvars == 1 { vec![n0] } else { vec![n0, n1] },
            proc_shape: vec![p],
            from: vec![from],
            to: vec![to],
            element_vars,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn matches_brute_force(problem in problem()) {
        let result = count_transfer(&problem);
        assert_consistent(&result);
        prop_assert_eq!(result.messages, oracle(&problem));
    }

    #[test]
    fn transpose_matches_brute_force(problem in transpose()) {
        let result = count_transfer(&problem);
        assert_consistent(&result);
        prop_assert_eq!(result.messages, oracle(&problem));
    }

    #[test]
    fn long_loops_match_brute_force(problem in long_loop()) {
        let result = count_transfer(&problem);
        assert_consistent(&result);
        prop_assert_eq!(result.messages, oracle(&problem));
    }

    #[test]
    fn identical_placements_move_nothing(mut problem in problem()) {
        problem.to = problem.from.clone();
        let result = count_transfer(&problem);
        prop_assert_eq!(result, TransferCount::default());
    }
}

/// Runs `count_transfer` and checks that it did not enumerate the 10^9 iterations.
fn timed(problem: &TransferProblem) -> TransferCount {
    let started = Instant::now();
    let result = count_transfer(problem);
    assert!(started.elapsed() < Duration::from_secs(2), "took {:?}", started.elapsed());
    assert_consistent(&result);
    result
}

const N: u64 = 1_000_000_000;

/// `DO I = 2, N+1: A(I) = B(I-1)` under BLOCK(N/p): only the first element of each block but the first comes from the left neighbour.
#[test]
fn block_shift_by_one_moves_p_minus_one_elements() {
    for p in [1i64, 2, 4, 5, 8] {
        let block = N as i64 / p;
        let problem = TransferProblem {
            trips: vec![N - 1],
            proc_shape: vec![p],
            from: vec![Placement::cyclic(block, p, 1, Affine::of(0, 1, 1))],
            to: vec![Placement::cyclic(block, p, 1, Affine::of(0, 2, 1))],
            element_vars: vec![0],
        };
        let result = timed(&problem);
        let expected: Vec<Message> = (0..p as u32 - 1).map(|r| Message { from: r, to: r + 1, elements: 1 }).collect();
        assert_eq!(result.moved_elements, p as u64 - 1);
        assert_eq!(result.messages, expected);
    }
}

/// The same shift under CYCLIC(1): every one of the N elements moves to the next rank, N/p per neighbour pair.
#[test]
fn cyclic_shift_by_one_moves_every_element() {
    for p in [2i64, 4, 5, 8] {
        let problem = TransferProblem {
            trips: vec![N],
            proc_shape: vec![p],
            from: vec![Placement::cyclic(1, p, 1, Affine::of(0, 1, 1))],
            to: vec![Placement::cyclic(1, p, 1, Affine::of(0, 2, 1))],
            element_vars: vec![0],
        };
        let result = timed(&problem);
        let mut expected: Vec<Message> =
            (0..p as u32).map(|r| Message { from: r, to: (r + 1) % p as u32, elements: N / p as u64 }).collect();
        expected.sort();
        assert_eq!(result.moved_elements, N);
        assert_eq!(result.messages, expected);
    }
}

/// Redistribution from CYCLIC(1) to BLOCK(N/4): in each destination block of N/4 elements, N/16 come from each rank.
#[test]
fn cyclic_to_block_redistribution() {
    let p = 4i64;
    let problem = TransferProblem {
        trips: vec![N],
        proc_shape: vec![p],
        from: vec![Placement::cyclic(1, p, 1, Affine::of(0, 1, 1))],
        to: vec![Placement::cyclic(N as i64 / p, p, 1, Affine::of(0, 1, 1))],
        element_vars: vec![0],
    };
    let result = timed(&problem);
    let mut expected = Vec::new();
    for from in 0..4u32 {
        for to in 0..4u32 {
            if from != to {
                expected.push(Message { from, to, elements: N / 16 });
            }
        }
    }
    assert_eq!(result.moved_elements, 3 * N / 4);
    assert_eq!(result.messages, expected);
}

/// `A(I,J) = B(J,I)` on a 4x4 grid under BLOCK: element (i,j) moves unless i and j lie in the same block, (N/4)^2 per off-diagonal block pair.
#[test]
fn block_transpose_of_a_billion_square() {
    let p = 4i64;
    let block = N as i64 / p;
    let problem = TransferProblem {
        trips: vec![N, N],
        proc_shape: vec![p, p],
        from: vec![
            Placement::cyclic(block, p, 1, Affine::of(1, 1, 1)),
            Placement::cyclic(block, p, 1, Affine::of(0, 1, 1)),
        ],
        to: vec![
            Placement::cyclic(block, p, 1, Affine::of(0, 1, 1)),
            Placement::cyclic(block, p, 1, Affine::of(1, 1, 1)),
        ],
        element_vars: vec![0, 1],
    };
    let result = timed(&problem);
    let per_pair = (N / 4) * (N / 4);
    let mut expected = Vec::new();
    for a in 0..4u32 {
        for b in 0..4u32 {
            if a != b {
                // Block (i in a, j in b) lives at coordinates (b, a) and is needed at (a, b).
                expected.push(Message { from: b + 4 * a, to: a + 4 * b, elements: per_pair });
            }
        }
    }
    expected.sort();
    assert_eq!(result.moved_elements, 12 * per_pair);
    assert_eq!(result.messages, expected);
}

/// `A(I,J) = B(I)` with B BLOCK along the only processor dimension and A's second index J distributed: each B(i) goes once to every other rank.
#[test]
fn broadcast_counts_each_element_once_per_destination() {
    let p = 5i64;
    let block = N as i64 / p;
    let problem = TransferProblem {
        trips: vec![N, N],
        proc_shape: vec![p],
        from: vec![Placement::cyclic(block, p, 1, Affine::of(0, 1, 1))],
        to: vec![Placement::cyclic(block, p, 1, Affine::of(1, 1, 1))],
        element_vars: vec![0],
    };
    let result = timed(&problem);
    let mut expected = Vec::new();
    for from in 0..5u32 {
        for to in 0..5u32 {
            if from != to {
                expected.push(Message { from, to, elements: N / 5 });
            }
        }
    }
    assert_eq!(result.moved_elements, 4 * N);
    assert_eq!(result.messages, expected);
}

/// CYCLIC(3) over 4 processors with a stride-2 read `B(2I+1)` into `A(2I+4)`: the positions differ by 3 = one block, so every element moves one rank right.
#[test]
fn cyclic_block_shift_with_stride_two() {
    let p = 4i64;
    let problem = TransferProblem {
        trips: vec![N],
        proc_shape: vec![p],
        from: vec![Placement::cyclic(3, p, 1, Affine::of(0, 1, 2))],
        to: vec![Placement::cyclic(3, p, 1, Affine::of(0, 4, 2))],
        element_vars: vec![0],
    };
    let result = timed(&problem);
    // The source coordinate is floor(2k/3) mod 4, periodic with period 6 in k:
    // k = 0..6 gives 0, 0, 1, 2, 2, 3. N = 6 * 166_666_666 + 4 and the
    // remainder k = 0..4 gives 0, 0, 1, 2.
    let full = N / 6;
    let per_source = [2 * full + 2, full + 1, 2 * full + 1, full];
    let mut expected: Vec<Message> =
        (0..4u32).map(|r| Message { from: r, to: (r + 1) % 4, elements: per_source[r as usize] }).collect();
    expected.sort();
    assert_eq!(result.moved_elements, N);
    assert_eq!(result.messages, expected);
}
