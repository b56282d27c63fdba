//! Closed-form counting of the array elements that must move between processors for one array reference in one rectangular loop nest.
//!
//! # Model
//!
//! Under the HPF owner-computes rule an iteration runs on the processor that
//! owns the element the loop updates (the *destination*), while a referenced
//! element lives where its own alignment and distribution put it (the
//! *source*). Along every processor-arrangement dimension both sides are given
//! as a [`Placement`]: either [`Placement::Everywhere`] (replicated or
//! collapsed) or a block-cyclic placement of an affine template position
//! `start + stride * k_var`. BLOCK(m) and CYCLIC(m) are both the block-cyclic
//! map `coord = floor((r - 1) / m) mod p` of the 1-based template position `r`.
//!
//! Per dimension the coordinates are chosen as follows:
//!
//! * both sides `Cyclic`: each side's coordinate comes from its own position;
//! * source `Everywhere`: the element already exists at the destination's
//!   coordinate, so the source coordinate equals the destination coordinate;
//! * destination `Everywhere`: the iteration is treated as running at the
//!   source coordinate, so nothing moves along that dimension;
//! * both `Everywhere`: the iteration runs at every coordinate `c` and finds
//!   its element at the same `c`, so the pattern of the other dimensions is
//!   repeated once per coordinate `c` of this dimension.
//!
//! [`count_transfer`] counts the distinct triples (element, source rank,
//! destination rank) with source != destination that some iteration produces,
//! grouped into one [`Message`] per (source, destination) pair. An element is
//! identified by the values of the counters in
//! [`TransferProblem::element_vars`]. When the source placement only depends
//! on element counters (the consistent case), this equals the number of
//! distinct (element, destination) pairs whose destination does not hold the
//! element. If a caller lets the source depend on a non-element counter, each
//! distinct source of the same element is counted separately.
//!
//! # Algorithm and complexity
//!
//! Nothing is ever enumerated per element or per iteration:
//!
//! 1. Every placement that depends on a counter is normalised to
//!    `k -> floor((c + s*k) / m) mod p` with `0 <= c < m*p` and `s` reduced
//!    into `(-m*p/2, m*p/2]`, which leaves the coordinate unchanged and bounds
//!    the number of runs. Constant positions, zero strides and `p == 1` give a
//!    constant coordinate. Identical normalised placements are shared.
//! 2. For every counter `k` the joint histogram of the coordinates of all
//!    placements it drives is computed (coordinate tuple -> number of values
//!    of `k`).
//!    * One placement: the sequence is periodic with period
//!      `P = m*p / gcd(|s|, m*p)`; one period is counted either run by run
//!      (a run is a maximal interval of constant coordinate, found by jumping
//!      to the next block boundary in O(1)) or, when there are more runs than
//!      processors, with `p - 1` floor sums (`O(p log(m*p))`). The result is
//!      scaled by the number of whole periods plus the remainder. The cost is
//!      `O(min(p*|s| + 1, p*log(m*p)))`, independent of the trip count and
//!      of `m`.
//!    * Several placements (e.g. the source and destination of a shift along
//!      the same dimension): the joint sequence is periodic with
//!      `L = lcm(P_i)`; one window of `min(n, L)` iterations (plus a
//!      remainder) is cut into the runs of the placement with the fewest runs
//!      and the other placements are counted inside each run as above. For
//!      equal distributions on both sides this is `O(p * (|s_from| + |s_to|))`
//!      runs. For a BLOCK side against a CYCLIC side the BLOCK side has at most
//!      `p*|s| + 2` runs over the whole loop, again independent of `n`.
//!      **Fallback:** when both sides are multi-course block-cyclic with
//!      different periods (for example CYCLIC(1000) against CYCLIC(1001)), the
//!      number of runs visited is that of the cheaper side within `min(n, L)`,
//!      roughly `min(n, L) * |s| / m`, which grows with `m` while `L` (about
//!      `m^2 * p`) is below `n` and falls as `n / m` beyond; it peaks near
//!      `sqrt(n * p)` runs (tens of thousands for `n = 10^9`, milliseconds).
//! 3. Counters are grouped into connected components: two counters are
//!    coupled when they drive the source and the destination of the same
//!    processor dimension (a transpose couples `I` and `J`). Inside a group the
//!    product of the histograms' supports is enumerated: element counters
//!    contribute their multiplicities, non-element counters only the set of
//!    reachable (source, destination) coordinates, so an element needed by
//!    many iterations on the same destination is sent once. The cost is
//!    `O(prod_v |support_v|)`, where a support has at most the product of the
//!    processor counts of the placements that counter drives (in practice
//!    about the number of distinct coordinate pairs, e.g. `2p` for a shift).
//! 4. Groups, constant dimensions and fully replicated dimensions are
//!    independent, so their partial ranks are combined by a product whose size
//!    is bounded by the number of (source, destination) rank pairs.
//!
//! Counts are kept in `u128` with saturating products and saturate at
//! `u64::MAX` in the result. Intermediate positions are computed in `i128`,
//! which is exact as long as `block * procs < 2^62` for every placement.

use std::collections::{BTreeMap, HashMap, HashSet};

/// A template index as an affine function of at most one loop counter.
///
/// The value is `start + stride * k_var`; with `var == None` or
/// `stride == 0` it is the constant `start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Affine {
    /// The loop counter (index into [`TransferProblem::trips`]) driving the position.
    pub var: Option<usize>,
    /// The position at counter value 0.
    pub start: i64,
    /// The change of position per counter step.
    pub stride: i64,
}

impl Affine {
    /// Returns the constant position `start`.
    pub fn constant(start: i64) -> Self {
        Affine { var: None, start, stride: 0 }
    }

    /// Returns the position `start + stride * k_var`.
    pub fn of(var: usize, start: i64, stride: i64) -> Self {
        Affine { var: Some(var), start, stride }
    }

    /// Evaluates the position for the given counter values (missing counters count as 0).
    pub fn eval(&self, counters: &[u64]) -> i128 {
        let k = self.var.and_then(|v| counters.get(v).copied()).unwrap_or(0);
        i128::from(self.start) + i128::from(self.stride) * i128::from(k)
    }
}

/// Where an element lives (source side) or where an iteration runs
/// (destination side) along one processor-arrangement dimension.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Placement {
    /// Every coordinate along this processor dimension holds the element (replicated or collapsed).
    Everywhere,
    /// Block-cyclic placement of an affine template position.
    Cyclic {
        /// Block size `m >= 1` (values below 1 are treated as 1).
        block: i64,
        /// Number of processors `p >= 1` along this dimension (values below 1 are treated as 1); it should equal the arrangement's extent.
        procs: i64,
        /// Lower bound of the template axis.
        lower: i64,
        /// Template index as a function of the loop counters.
        pos: Affine,
    },
}

impl Placement {
    /// Returns a block-cyclic placement.
    pub fn cyclic(block: i64, procs: i64, lower: i64, pos: Affine) -> Self {
        Placement::Cyclic { block, procs, lower, pos }
    }

    /// Returns the processor coordinate for the given counter values, or `None` for [`Placement::Everywhere`].
    pub fn coord(&self, counters: &[u64]) -> Option<i64> {
        match self {
            Placement::Everywhere => None,
            Placement::Cyclic { block, procs, lower, pos } => {
                Some(owner_coord_wide(*block, *procs, *lower, pos.eval(counters)))
            }
        }
    }
}

/// One array reference in one rectangular loop nest.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TransferProblem {
    /// Iterations of each loop counter; counter `v` runs over `0..trips[v]`.
    pub trips: Vec<u64>,
    /// Extents of the processor arrangement (rank 1..=7); ranks are numbered column-major from 0.
    pub proc_shape: Vec<i64>,
    /// Where the referenced element lives, one placement per processor dimension.
    pub from: Vec<Placement>,
    /// Where the iteration runs, one placement per processor dimension.
    pub to: Vec<Placement>,
    /// The counters whose values identify the referenced element; the others re-touch the same element.
    pub element_vars: Vec<usize>,
}

/// The elements sent from one rank to another, vectorised into one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Message {
    /// The sending rank.
    pub from: u32,
    /// The receiving rank.
    pub to: u32,
    /// The number of elements in the message.
    pub elements: u64,
}

/// The result of [`count_transfer`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TransferCount {
    /// The total number of elements moved (the sum over `messages`).
    pub moved_elements: u64,
    /// One message per (source, destination) pair with a non-zero count, sorted by `(from, to)`.
    pub messages: Vec<Message>,
}

/// Returns the processor coordinate owning template index `index` under a
/// block-cyclic distribution with block size `block` over `procs` processors
/// of a template axis starting at `lower`.
///
/// This is `floor((index - lower) / block) mod procs`, using floor division so
/// that indices outside the template are still well-defined. `block` and
/// `procs` below 1 are treated as 1.
pub fn owner_coord(block: i64, procs: i64, lower: i64, index: i64) -> i64 {
    owner_coord_wide(block, procs, lower, i128::from(index))
}

/// Computes [`owner_coord`] for a wide index, because positions of long loops may exceed `i64`.
fn owner_coord_wide(block: i64, procs: i64, lower: i64, index: i128) -> i64 {
    let m = i128::from(block.max(1));
    let p = i128::from(procs.max(1));
    // The result lies in 0..p, so it fits in i64.
    (index - i128::from(lower)).div_euclid(m).rem_euclid(p) as i64
}

/// Counts the elements moved by one reference in one loop nest, in closed form.
///
/// See the module documentation for the exact semantics and the complexity.
///
/// # Panics
///
/// Panics if `from` or `to` does not have one placement per entry of
/// `proc_shape`, or if a placement or `element_vars` names a counter outside
/// `trips`.
pub fn count_transfer(problem: &TransferProblem) -> TransferCount {
    let ndims = problem.proc_shape.len();
    assert_eq!(problem.from.len(), ndims, "one source placement per processor dimension");
    assert_eq!(problem.to.len(), ndims, "one destination placement per processor dimension");
    let nvars = problem.trips.len();
    for placement in problem.from.iter().chain(&problem.to) {
        if let Placement::Cyclic { pos: Affine { var: Some(v), .. }, .. } = placement {
            assert!(*v < nvars, "placement uses counter {v} but the nest has {nvars}");
        }
    }
    for &v in &problem.element_vars {
        assert!(v < nvars, "element counter {v} but the nest has {nvars}");
    }
    // A rectangular nest with an empty loop executes no iteration at all.
    if problem.trips.contains(&0) {
        return TransferCount::default();
    }

    let mut is_element = vec![false; nvars];
    for &v in &problem.element_vars {
        is_element[v] = true;
    }

    // Column-major rank weights of the processor dimensions.
    let mut rank_weight = Vec::with_capacity(ndims);
    let mut weight: u64 = 1;
    for &extent in &problem.proc_shape {
        rank_weight.push(weight);
        weight = weight.saturating_mul(extent.max(1) as u64);
    }

    // Normalise every placement and attach counter-driven ones to their counter.
    let mut lins: Vec<Vec<Lin>> = vec![Vec::new(); nvars];
    let mut side = |placement: &Placement| -> Side {
        let Placement::Cyclic { block, procs, lower, pos } = placement else {
            unreachable!("only block-cyclic placements have a side");
        };
        match resolve(*block, *procs, *lower, pos) {
            Coord::Const(c) => Side::Const(c),
            Coord::Var { var, lin } => {
                let slot = match lins[var].iter().position(|l| *l == lin) {
                    Some(slot) => slot,
                    None => {
                        lins[var].push(lin);
                        lins[var].len() - 1
                    }
                };
                Side::Var { var, slot }
            }
        }
    };
    let dims: Vec<Dim> = problem
        .from
        .iter()
        .zip(&problem.to)
        .map(|(from, to)| match (from, to) {
            (Placement::Everywhere, Placement::Everywhere) => Dim::Free,
            (Placement::Everywhere, to) => {
                let s = side(to);
                Dim::Fixed { src: s, dst: s }
            }
            (from, Placement::Everywhere) => {
                let s = side(from);
                Dim::Fixed { src: s, dst: s }
            }
            (from, to) => Dim::Fixed { src: side(from), dst: side(to) },
        })
        .collect();

    // Couple the counters that meet in one processor dimension.
    let mut parent: Vec<usize> = (0..nvars).collect();
    for dim in &dims {
        if let Dim::Fixed { src: Side::Var { var: a, .. }, dst: Side::Var { var: b, .. } } = dim {
            let (ra, rb) = (find(&mut parent, *a), find(&mut parent, *b));
            parent[ra] = rb;
        }
    }

    // Element counters that drive no placement only multiply the element count.
    let mut multiplier: u128 = 1;
    for (v, var_lins) in lins.iter().enumerate() {
        if var_lins.is_empty() && is_element[v] {
            multiplier = multiplier.saturating_mul(u128::from(problem.trips[v]));
        }
    }

    let mut acc: HashMap<(u64, u64), u128> = HashMap::from([((0, 0), multiplier)]);
    let mut groups: BTreeMap<usize, Group> = BTreeMap::new();
    for (v, var_lins) in lins.iter().enumerate() {
        if !var_lins.is_empty() {
            let root = find(&mut parent, v);
            groups.entry(root).or_default().0.push(v);
        }
    }
    for (d, dim) in dims.iter().enumerate() {
        let w = rank_weight[d];
        match *dim {
            Dim::Free => {
                // The pattern repeats at every coordinate of a fully replicated dimension.
                let extent = problem.proc_shape[d].max(1) as u64;
                let entries: Vec<_> = (0..extent).map(|c| (c * w, c * w, 1)).collect();
                acc = combine(&acc, &entries);
            }
            Dim::Fixed { src: Side::Const(s), dst: Side::Const(t) } => {
                acc = combine(&acc, &[(s as u64 * w, t as u64 * w, 1)]);
            }
            Dim::Fixed { src, dst } => {
                let var = match (src, dst) {
                    (Side::Var { var, .. }, _) | (_, Side::Var { var, .. }) => var,
                    _ => unreachable!("constant dimensions are handled above"),
                };
                let root = find(&mut parent, var);
                groups.get_mut(&root).expect("a counter with placements has a group").1.push((src, dst, w));
            }
        }
    }

    for (vars, group_dims) in groups.values() {
        let hists: HashMap<usize, Vec<(Vec<i64>, u128)>> =
            vars.iter().map(|&v| (v, var_hist(&lins[v], problem.trips[v]))).collect();
        let entries = eval_group(vars, group_dims, &hists, &is_element);
        acc = combine(&acc, &entries);
    }

    let mut messages: BTreeMap<(u32, u32), u128> = BTreeMap::new();
    for ((src, dst), n) in acc {
        if src != dst && n > 0 {
            let key = (to_rank(src), to_rank(dst));
            let slot = messages.entry(key).or_default();
            *slot = slot.saturating_add(n);
        }
    }
    let messages: Vec<Message> =
        messages.into_iter().map(|((from, to), n)| Message { from, to, elements: saturate(n) }).collect();
    let moved_elements = messages.iter().fold(0u64, |sum, m| sum.saturating_add(m.elements));
    TransferCount { moved_elements, messages }
}

/// Converts a rank to `u32`, saturating because ranks beyond `u32` cannot be addressed anyway.
fn to_rank(rank: u64) -> u32 {
    u32::try_from(rank).unwrap_or(u32::MAX)
}

/// Converts a count to `u64`, saturating because the public result is `u64`.
fn saturate(n: u128) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// Finds the union-find root of a counter, compressing the path.
fn find(parent: &mut [usize], v: usize) -> usize {
    let mut root = v;
    while parent[root] != root {
        root = parent[root];
    }
    let mut cur = v;
    while parent[cur] != root {
        let next = parent[cur];
        parent[cur] = root;
        cur = next;
    }
    root
}

/// Multiplies two independent sets of (partial source rank, partial destination rank) weights.
fn combine(acc: &HashMap<(u64, u64), u128>, entries: &[(u64, u64, u128)]) -> HashMap<(u64, u64), u128> {
    let mut out: HashMap<(u64, u64), u128> = HashMap::with_capacity(acc.len() * entries.len());
    for (&(a, b), &w) in acc {
        for &(x, y, v) in entries {
            let slot = out.entry((a + x, b + y)).or_default();
            *slot = slot.saturating_add(w.saturating_mul(v));
        }
    }
    out
}

/// The counters of one coupled group and its dimensions as (source side, destination side, rank weight).
type Group = (Vec<usize>, Vec<(Side, Side, u64)>);

/// The coordinate of one side of one processor dimension after normalisation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    /// The coordinate does not depend on any counter.
    Const(i64),
    /// The coordinate is entry `slot` of counter `var`'s coordinate tuple.
    Var { var: usize, slot: usize },
}

/// One processor dimension after applying the `Everywhere` rules.
#[derive(Debug, Clone, Copy)]
enum Dim {
    /// Both sides are replicated: the pattern repeats at every coordinate.
    Free,
    /// The source and destination coordinates.
    Fixed { src: Side, dst: Side },
}

/// A resolved block-cyclic placement.
enum Coord {
    /// The same coordinate for every iteration.
    Const(i64),
    /// A coordinate driven by counter `var`.
    Var { var: usize, lin: Lin },
}

/// The coordinate function `k -> floor((c + s*k) / m) mod p`, normalised so
/// that `0 <= c < m*p`, `s` lies in `(-m*p/2, m*p/2]`, `s != 0` and `p >= 2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Lin {
    c: i128,
    s: i128,
    m: i128,
    p: i128,
}

impl Lin {
    /// The modulus `m*p` after which positions repeat their coordinate.
    fn modulus(&self) -> i128 {
        self.m * self.p
    }

    /// A period of the coordinate sequence in `k`.
    fn period(&self) -> i128 {
        let modulus = self.modulus();
        modulus / gcd(self.s.abs(), modulus)
    }

    /// An upper bound on the number of runs within `len` consecutive counter values.
    fn estimated_runs(&self, len: i128) -> i128 {
        (self.s.abs().saturating_mul(len) / self.m).saturating_add(2).min(len)
    }
}

/// Normalises a block-cyclic placement, detecting coordinates that cannot change.
fn resolve(block: i64, procs: i64, lower: i64, pos: &Affine) -> Coord {
    let m = i128::from(block.max(1));
    let p = i128::from(procs.max(1));
    let constant = Coord::Const(owner_coord(block, procs, lower, pos.start));
    let Some(var) = pos.var else {
        return constant;
    };
    if p == 1 || pos.stride == 0 {
        return constant;
    }
    let modulus = m * p;
    let c = (i128::from(pos.start) - i128::from(lower)).rem_euclid(modulus);
    let mut s = i128::from(pos.stride).rem_euclid(modulus);
    if s == 0 {
        return constant;
    }
    // A stride and its complement give the same coordinates; the shorter one has fewer runs.
    if 2 * s > modulus {
        s -= modulus;
    }
    Coord::Var { var, lin: Lin { c, s, m, p } }
}

/// Greatest common divisor of non-negative numbers.
fn gcd(mut a: i128, mut b: i128) -> i128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Returns `sum_{i=0}^{n-1} floor((a*i + b) / m)` for `n >= 0`, `m > 0` and any `a`, `b`.
fn floor_sum(n: i128, m: i128, a: i128, b: i128) -> i128 {
    if n <= 0 {
        return 0;
    }
    let (mut n, mut m) = (n, m);
    let mut ans = 0i128;
    // Reduce a and b into 0..m first so that the Euclid-like loop works on non-negative values.
    let qa = a.div_euclid(m);
    let mut a = a - qa * m;
    ans += qa * (n * (n - 1) / 2);
    let qb = b.div_euclid(m);
    let mut b = b - qb * m;
    ans += qb * n;
    loop {
        if a >= m {
            ans += n * (n - 1) / 2 * (a / m);
            a %= m;
        }
        if b >= m {
            ans += n * (b / m);
            b %= m;
        }
        let y_max = a * n + b;
        if y_max < m {
            break;
        }
        n = y_max / m;
        b = y_max % m;
        std::mem::swap(&mut m, &mut a);
    }
    ans
}

/// Calls `f(start, len, coord)` for every maximal run of constant coordinate in `k0..k0+len`, jumping from block boundary to block boundary.
fn for_each_run(l: &Lin, k0: i128, len: i128, mut f: impl FnMut(i128, i128, i64)) {
    let end = k0 + len;
    let mut k = k0;
    let mut current: Option<(i128, i64)> = None;
    while k < end {
        let x = l.c + l.s * k;
        let q = x.div_euclid(l.m);
        // The number of steps until the position leaves block q.
        let step = if l.s > 0 { ((q + 1) * l.m - x + l.s - 1) / l.s } else { (x - q * l.m) / (-l.s) + 1 };
        let coord = q.rem_euclid(l.p) as i64;
        match current {
            Some((_, c)) if c == coord => {}
            Some((start, c)) => {
                f(start, k - start, c);
                current = Some((k, coord));
            }
            None => current = Some((k, coord)),
        }
        k = (k + step).min(end);
    }
    if let Some((start, c)) = current {
        f(start, end - start, c);
    }
}

/// Counts how many `k` in `k0..k0+len` map to each coordinate.
fn coord_counts(l: &Lin, k0: i128, len: i128) -> BTreeMap<i64, u128> {
    let period = l.period();
    if len <= period {
        return counts_within_period(l, k0, len);
    }
    // Whole periods repeat the same counts, and the remainder starts at a coordinate-equivalent offset.
    let full = (len / period) as u128;
    let mut out = counts_within_period(l, k0, period);
    for n in out.values_mut() {
        *n = n.saturating_mul(full);
    }
    for (c, n) in counts_within_period(l, k0, len % period) {
        *out.entry(c).or_default() += n;
    }
    out
}

/// Counts coordinates over at most one period, by runs or by floor sums, whichever is cheaper.
fn counts_within_period(l: &Lin, k0: i128, len: i128) -> BTreeMap<i64, u128> {
    let mut out = BTreeMap::new();
    if len <= 0 {
        return out;
    }
    if l.estimated_runs(len) <= l.p {
        for_each_run(l, k0, len, |_, n, c| *out.entry(c).or_default() += n as u128);
        return out;
    }
    // #{k : x mod M < t} = sum floor(x/M) - floor((x - t)/M), so the count of
    // coordinate b is fs(b*m) - fs((b+1)*m) with fs(t) = sum floor((x - t)/M).
    let modulus = l.modulus();
    let base = (l.c + l.s * k0).rem_euclid(modulus);
    let fs = |t: i128| floor_sum(len, modulus, l.s, base - t);
    let fs0 = fs(0);
    let mut lower = fs0;
    for b in 0..l.p {
        // Shifting by the whole modulus lowers every floor by one, so fs(M) needs no floor sum.
        let upper = if b + 1 == l.p { fs0 - len } else { fs((b + 1) * l.m) };
        let n = lower - upper;
        if n > 0 {
            out.insert(b as i64, n as u128);
        }
        lower = upper;
    }
    out
}

/// Joint histogram of the coordinates of several placements over `k0..k0+len`.
fn hist(lins: &[Lin], k0: i128, len: i128) -> HashMap<Vec<i64>, u128> {
    let mut out: HashMap<Vec<i64>, u128> = HashMap::new();
    if len <= 0 || lins.is_empty() {
        return out;
    }
    if lins.len() == 1 {
        for (c, n) in coord_counts(&lins[0], k0, len) {
            out.insert(vec![c], n);
        }
        return out;
    }
    // Cut the interval along the placement with the fewest runs and count the others inside each run.
    let pick = (0..lins.len()).min_by_key(|&i| lins[i].estimated_runs(len)).expect("at least two placements");
    let rest: Vec<Lin> = lins.iter().enumerate().filter(|&(i, _)| i != pick).map(|(_, l)| *l).collect();
    for_each_run(&lins[pick], k0, len, |start, run, coord| {
        for (mut key, n) in hist(&rest, start, run) {
            key.insert(pick, coord);
            *out.entry(key).or_default() += n;
        }
    });
    out
}

/// Histogram of the coordinate tuple of one counter over its whole range `0..n`, using the joint period.
fn var_hist(lins: &[Lin], n: u64) -> Vec<(Vec<i64>, u128)> {
    let n = i128::from(n);
    let mut joint: i128 = 1;
    for l in lins {
        let p = l.period();
        joint = joint / gcd(joint, p) * p;
        if joint >= n {
            break;
        }
    }
    let out = if joint < n {
        let full = (n / joint) as u128;
        let mut out = hist(lins, 0, joint);
        for v in out.values_mut() {
            *v = v.saturating_mul(full);
        }
        for (key, v) in hist(lins, 0, n % joint) {
            *out.entry(key).or_default() += v;
        }
        out
    } else {
        hist(lins, 0, n)
    };
    out.into_iter().filter(|(_, v)| *v > 0).collect()
}

/// Calls `f` for every index tuple of a mixed-radix odometer with the given sizes (once for no sizes).
fn for_each_tuple(sizes: &[usize], mut f: impl FnMut(&[usize])) {
    if sizes.contains(&0) {
        return;
    }
    let mut idx = vec![0usize; sizes.len()];
    loop {
        f(&idx);
        let mut d = 0;
        loop {
            if d == sizes.len() {
                return;
            }
            idx[d] += 1;
            if idx[d] < sizes[d] {
                break;
            }
            idx[d] = 0;
            d += 1;
        }
    }
}

/// Counts, for one group of coupled counters, the distinct element-counter tuples per reachable (partial source rank, partial destination rank).
fn eval_group(
    vars: &[usize],
    dims: &[(Side, Side, u64)],
    hists: &HashMap<usize, Vec<(Vec<i64>, u128)>>,
    is_element: &[bool],
) -> Vec<(u64, u64, u128)> {
    let evars: Vec<usize> = vars.iter().copied().filter(|&v| is_element[v]).collect();
    let nvars: Vec<usize> = vars.iter().copied().filter(|&v| !is_element[v]).collect();
    let esizes: Vec<usize> = evars.iter().map(|v| hists[v].len()).collect();
    let nsizes: Vec<usize> = nvars.iter().map(|v| hists[v].len()).collect();
    let mut chosen: HashMap<usize, usize> = HashMap::new();
    let mut out: HashMap<(u64, u64), u128> = HashMap::new();
    for_each_tuple(&esizes, |eidx| {
        let mut weight: u128 = 1;
        for (i, &v) in evars.iter().enumerate() {
            chosen.insert(v, eidx[i]);
            weight = weight.saturating_mul(hists[&v][eidx[i]].1);
        }
        // Non-element counters only decide where the element is needed, so collect a set.
        let mut reach: HashSet<(u64, u64)> = HashSet::new();
        for_each_tuple(&nsizes, |nidx| {
            for (i, &v) in nvars.iter().enumerate() {
                chosen.insert(v, nidx[i]);
            }
            let coord = |side: Side| -> u64 {
                match side {
                    Side::Const(c) => c as u64,
                    Side::Var { var, slot } => hists[&var][chosen[&var]].0[slot] as u64,
                }
            };
            let (mut src, mut dst) = (0u64, 0u64);
            for &(s, t, w) in dims {
                src += coord(s) * w;
                dst += coord(t) * w;
            }
            reach.insert((src, dst));
        });
        for key in reach {
            let slot = out.entry(key).or_default();
            *slot = slot.saturating_add(weight);
        }
    });
    out.into_iter().map(|((s, t), n)| (s, t, n)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    /// A(1:16) BLOCK over 4 processors, `DO I = 2, 16: A(I) = B(I-1)` with B aligned to A.
    #[test]
    fn worked_example_shift_by_one_under_block() {
        let problem = TransferProblem {
            trips: vec![15],
            proc_shape: vec![4],
            from: vec![Placement::cyclic(4, 4, 1, Affine::of(0, 1, 1))],
            to: vec![Placement::cyclic(4, 4, 1, Affine::of(0, 2, 1))],
            element_vars: vec![0],
        };
        let result = count_transfer(&problem);
        assert_eq!(result.moved_elements, 3);
        expect![[r#"
            TransferCount {
                moved_elements: 3,
                messages: [
                    Message {
                        from: 0,
                        to: 1,
                        elements: 1,
                    },
                    Message {
                        from: 1,
                        to: 2,
                        elements: 1,
                    },
                    Message {
                        from: 2,
                        to: 3,
                        elements: 1,
                    },
                ],
            }
        "#]]
        .assert_debug_eq(&result);
    }

    #[test]
    fn owner_coord_uses_floor_division() {
        assert_eq!(owner_coord(4, 4, 1, 1), 0);
        assert_eq!(owner_coord(4, 4, 1, 5), 1);
        assert_eq!(owner_coord(4, 4, 1, 16), 3);
        // Out-of-range positions wrap cyclically instead of panicking.
        assert_eq!(owner_coord(4, 4, 1, 17), 0);
        assert_eq!(owner_coord(4, 4, 1, 0), 3);
        assert_eq!(owner_coord(2, 3, -3, -3), 0);
        assert_eq!(owner_coord(0, 0, 0, 7), 0);
    }

    #[test]
    fn floor_sum_matches_naive_sum() {
        for m in 1..7i128 {
            for a in -9..10i128 {
                for b in -9..10i128 {
                    for n in 0..8i128 {
                        let naive: i128 = (0..n).map(|i| (a * i + b).div_euclid(m)).sum();
                        assert_eq!(floor_sum(n, m, a, b), naive, "n={n} m={m} a={a} b={b}");
                    }
                }
            }
        }
    }

    #[test]
    fn coord_counts_match_naive_counts() {
        for m in 1..5i128 {
            for p in 2..5i128 {
                for s in -6..7i128 {
                    let modulus = m * p;
                    let s_norm = s.rem_euclid(modulus);
                    if s_norm == 0 {
                        continue;
                    }
                    let s_sym = if 2 * s_norm > modulus { s_norm - modulus } else { s_norm };
                    for c in 0..modulus {
                        let l = Lin { c, s: s_sym, m, p };
                        for k0 in 0..3i128 {
                            for len in 0..40i128 {
                                let mut naive: BTreeMap<i64, u128> = BTreeMap::new();
                                for k in k0..k0 + len {
                                    let coord = (c + s * k).div_euclid(m).rem_euclid(p) as i64;
                                    *naive.entry(coord).or_default() += 1;
                                }
                                assert_eq!(coord_counts(&l, k0, len), naive);
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn scalar_statement_moves_one_element() {
        let problem = TransferProblem {
            trips: vec![],
            proc_shape: vec![3],
            from: vec![Placement::cyclic(1, 3, 1, Affine::constant(1))],
            to: vec![Placement::cyclic(1, 3, 1, Affine::constant(3))],
            element_vars: vec![],
        };
        let result = count_transfer(&problem);
        assert_eq!(result.messages, vec![Message { from: 0, to: 2, elements: 1 }]);
    }
}
