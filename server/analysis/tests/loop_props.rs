//! Property tests of the per-loop analysis (`analysis::analyze`) on random
//! small HPF programs written as free-form text, 1-D and 2-D, against a
//! brute-force oracle written here from DESIGN.md §2 (owner computes, the
//! distribution formats, column-major processor ranks):
//!
//! * the transfer count of the reference `B(...)` (moved elements and one
//!   message per (from, to) rank pair) equals the distinct (element, from,
//!   to) triples found by enumerating every iteration, and a missing
//!   transfer means nothing moves;
//! * the access range, declared triple and loop triple equal the values of
//!   the first and last iteration and the stride between iterations;
//! * the optimal triple equals equations (1)-(3) computed here, and it is
//!   optimal: with the suggested `ALIGN` of `B` written into the program,
//!   the oracle moves nothing and the analysis reports no transfer.
//!
//! The oracle uses nothing from `analysis::transfer` or `analysis::loops`.

use std::collections::{BTreeMap, BTreeSet};

use analysis::loops::{Access, LoopReport, NoOptimal, Triple};
use analysis::transfer::Message;
use analysis::{FileAnalysis, ModelConfig};
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::TestCaseError;
use syntax::SourceForm;

/// Cases per property (four properties; the file runs in a few seconds in a debug build).
const CASES: u32 = 500;

/// A distribution format of one template dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fmt {
    Block,
    /// `BLOCK(m)` with `m = ceil(extent/p) + extra`, so that `m*p >= extent`.
    BlockOf(i64),
    Cyclic,
    CyclicOf(i64),
    Star,
}

/// `DO X = lo, hi, st` as random raw numbers: `trips` iterations (0: empty),
/// `hi` a little past the last value, or a little before `lo` when empty.
#[derive(Clone, Debug)]
struct LoopRaw {
    lo: i64,
    trips: i64,
    st: i64,
    extra: i64,
    gap: i64,
    /// Write `DO X = lo, hi` when the step is 1.
    omit_step: bool,
}

/// One subscript `coef*X + offset` and the slack of the array's bounds around what it touches.
#[derive(Clone, Debug)]
struct SubRaw {
    coef: i64,
    offset: i64,
    lo_slack: i64,
    hi_slack: i64,
}

/// One template dimension: the alignments of A and B into it, its slack and its distribution.
#[derive(Clone, Debug)]
struct DimRaw {
    a_stride: i64,
    a_offset: i64,
    b_stride: i64,
    b_offset: i64,
    lo_slack: i64,
    hi_slack: i64,
    fmt: Fmt,
    procs: i64,
}

#[derive(Clone, Debug)]
struct Raw {
    loops: Vec<LoopRaw>,
    a_subs: Vec<SubRaw>,
    b_subs: Vec<SubRaw>,
    dims: Vec<DimRaw>,
    /// `A(sub(J), sub(I))` instead of `A(sub(I), sub(J))` (2-D).
    a_swap: bool,
    b_swap: bool,
    /// `ALIGN A(I,J) WITH T(..J.., ..I..)` (2-D).
    a_transpose: bool,
    b_transpose: bool,
    /// A template dimension along which B is replicated (`*` in its ALIGN).
    b_replicated: Option<usize>,
}

/// `(loop index, coef, offset)`: the subscript `coef*X + offset` with `X` the loop index.
type Sub = (usize, i64, i64);

/// `(source dim, stride, offset)`: `X(.., i, ..) <-> T(.., stride*i + offset, ..)`; `None` is `*`.
type AlignDim = Option<(usize, i64, i64)>;

/// A concrete program, derived from [`Raw`] so that every touched element is
/// in bounds and every array fits in the template.
#[derive(Clone, Debug)]
struct Prog {
    rank: usize,
    /// `(lo, hi, st)` of I (and J), outermost first.
    loops: Vec<(i64, i64, i64)>,
    /// Per loop: write no step (the step is 1).
    omit_step: Vec<bool>,
    /// Per array dimension.
    a_subs: Vec<Sub>,
    b_subs: Vec<Sub>,
    a_bounds: Vec<(i64, i64)>,
    b_bounds: Vec<(i64, i64)>,
    /// Per template dimension.
    a_align: Vec<AlignDim>,
    b_align: Vec<AlignDim>,
    t_bounds: Vec<(i64, i64)>,
    formats: Vec<Fmt>,
    /// Per template dimension (ignored for `*`).
    procs: Vec<i64>,
}

const VARS: [&str; 2] = ["I", "J"];

fn loop_raw() -> impl Strategy<Value = LoopRaw> {
    (
        -6i64..=8,
        prop_oneof![1 => Just(0i64), 7 => 1i64..=7],
        select(vec![-2i64, -1, 1, 2, 3]),
        0i64..3,
        1i64..4,
        any::<bool>(),
    )
        .prop_map(|(lo, trips, st, extra, gap, omit_step)| LoopRaw { lo, trips, st, extra, gap, omit_step })
}

fn sub_raw() -> impl Strategy<Value = SubRaw> {
    (prop_oneof![1 => Just(0i64), 8 => select(vec![-2i64, -1, 1, 2, 3])], -4i64..=4, 0i64..=2, 0i64..=2)
        .prop_map(|(coef, offset, lo_slack, hi_slack)| SubRaw { coef, offset, lo_slack, hi_slack })
}

fn fmt(star: bool) -> impl Strategy<Value = Fmt> {
    let star_weight = if star { 1 } else { 0 };
    prop_oneof![
        2 => Just(Fmt::Block),
        2 => (0i64..3).prop_map(Fmt::BlockOf),
        2 => Just(Fmt::Cyclic),
        2 => (1i64..=4).prop_map(Fmt::CyclicOf),
        star_weight => Just(Fmt::Star),
    ]
}

fn dim_raw(star: bool) -> impl Strategy<Value = DimRaw> {
    let stride = || select(vec![-2i64, -1, 1, 2, 3]);
    ((stride(), -6i64..=6, stride(), -6i64..=6), (0i64..=8, 0i64..=8), fmt(star), 1i64..=4).prop_map(
        |((a_stride, a_offset, b_stride, b_offset), (lo_slack, hi_slack), fmt, procs)| DimRaw {
            a_stride,
            a_offset,
            b_stride,
            b_offset,
            lo_slack,
            hi_slack,
            fmt,
            procs,
        },
    )
}

fn raw(rank: usize) -> impl Strategy<Value = Raw> {
    let two = rank == 2;
    (
        proptest::collection::vec(loop_raw(), rank),
        proptest::collection::vec(sub_raw(), rank),
        proptest::collection::vec(sub_raw(), rank),
        proptest::collection::vec(dim_raw(two), rank),
        (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
        prop_oneof![4 => Just(None), 1 => (0..rank).prop_map(Some)],
    )
        .prop_map(
            move |(loops, a_subs, b_subs, dims, (a_swap, b_swap, a_transpose, b_transpose), b_replicated)| Raw {
                loops,
                a_subs,
                b_subs,
                dims,
                a_swap: two && a_swap,
                b_swap: two && b_swap,
                a_transpose: two && a_transpose,
                b_transpose: two && b_transpose,
                b_replicated: b_replicated.filter(|_| two),
            },
        )
}

/// The values a DO index takes, in order (Fortran trip count `max(0, (hi-lo+st)/st)`).
fn values((lo, hi, st): (i64, i64, i64)) -> Vec<i64> {
    let trips = ((hi - lo + st) / st).max(0);
    (0..trips).map(|k| lo + k * st).collect()
}

/// The lowest and highest value of `coef*X + offset` over the loop (over `lo` when empty).
fn touched(bounds: (i64, i64, i64), coef: i64, offset: i64) -> (i64, i64) {
    let vals = values(bounds);
    let xs: Vec<i64> = if vals.is_empty() { vec![bounds.0] } else { vals };
    let images: Vec<i64> = xs.iter().map(|x| coef * x + offset).collect();
    (*images.iter().min().unwrap(), *images.iter().max().unwrap())
}

fn build(raw: &Raw) -> Prog {
    let rank = raw.loops.len();
    let loops: Vec<(i64, i64, i64)> = raw
        .loops
        .iter()
        .map(|it| {
            let hi = if it.trips > 0 {
                it.lo + (it.trips - 1) * it.st + it.st.signum() * (it.extra % it.st.abs())
            } else {
                it.lo - it.st.signum() * it.gap
            };
            (it.lo, hi, it.st)
        })
        .collect();
    let subs = |list: &[SubRaw], swap: bool| -> (Vec<Sub>, Vec<(i64, i64)>) {
        list.iter()
            .enumerate()
            .map(|(dim, it)| {
                let index = if swap { 1 - dim } else { dim };
                let (lo, hi) = touched(loops[index], it.coef, it.offset);
                ((index, it.coef, it.offset), (lo - it.lo_slack, hi + it.hi_slack))
            })
            .unzip()
    };
    let (a_subs, a_bounds) = subs(&raw.a_subs, raw.a_swap);
    let (b_subs, b_bounds) = subs(&raw.b_subs, raw.b_swap);
    let mut a_align = Vec::new();
    let mut b_align = Vec::new();
    let mut t_bounds = Vec::new();
    for (t, dim) in raw.dims.iter().enumerate() {
        let a_src = if raw.a_transpose { 1 - t } else { t };
        let b_src = if raw.b_transpose { 1 - t } else { t };
        a_align.push(Some((a_src, dim.a_stride, dim.a_offset)));
        let b = (raw.b_replicated != Some(t)).then_some((b_src, dim.b_stride, dim.b_offset));
        b_align.push(b);
        let mut images = Vec::new();
        let (lo, hi) = a_bounds[a_src];
        images.extend([dim.a_stride * lo + dim.a_offset, dim.a_stride * hi + dim.a_offset]);
        if b.is_some() {
            let (lo, hi) = b_bounds[b_src];
            images.extend([dim.b_stride * lo + dim.b_offset, dim.b_stride * hi + dim.b_offset]);
        }
        let lo = images.iter().min().unwrap() - dim.lo_slack;
        let hi = images.iter().max().unwrap() + dim.hi_slack;
        t_bounds.push((lo, hi));
    }
    let mut formats: Vec<Fmt> = raw.dims.iter().map(|it| it.fmt).collect();
    if formats.iter().all(|it| *it == Fmt::Star) {
        formats[0] = Fmt::Block;
    }
    // BLOCK(m) needs m*p >= extent.
    for (t, format) in formats.iter_mut().enumerate() {
        if let Fmt::BlockOf(extra) = *format {
            let extent = t_bounds[t].1 - t_bounds[t].0 + 1;
            let p = raw.dims[t].procs;
            *format = Fmt::BlockOf((extent + p - 1) / p + extra);
        }
    }
    let procs = raw.dims.iter().map(|it| it.procs).collect();
    let omit_step = raw.loops.iter().map(|it| it.omit_step && it.st == 1).collect();
    Prog { rank, loops, omit_step, a_subs, b_subs, a_bounds, b_bounds, a_align, b_align, t_bounds, formats, procs }
}

/// `coef*X+offset` in Fortran.
fn affine_text(var: &str, coef: i64, offset: i64) -> String {
    let scaled = match coef {
        0 => return offset.to_string(),
        1 => var.to_string(),
        -1 => format!("-{var}"),
        coef => format!("{coef}*{var}"),
    };
    match offset {
        0 => scaled,
        o if o > 0 => format!("{scaled}+{o}"),
        o => format!("{scaled}{o}"),
    }
}

fn bounds_text(bounds: &[(i64, i64)]) -> String {
    bounds.iter().map(|(lo, hi)| format!("{lo}:{hi}")).collect::<Vec<_>>().join(",")
}

fn align_text(name: &str, rank: usize, align: &[AlignDim]) -> String {
    let dummies = VARS[..rank].join(",");
    let subs: Vec<String> = align
        .iter()
        .map(|it| match *it {
            None => "*".to_string(),
            Some((src, stride, offset)) => affine_text(VARS[src], stride, offset),
        })
        .collect();
    format!("ALIGN {name}({dummies}) WITH T({})", subs.join(","))
}

fn ref_text(name: &str, subs: &[Sub]) -> String {
    let parts: Vec<String> = subs.iter().map(|&(index, coef, offset)| affine_text(VARS[index], coef, offset)).collect();
    format!("{name}({})", parts.join(","))
}

impl Prog {
    fn text(&self) -> String {
        let formats: Vec<String> = self
            .formats
            .iter()
            .map(|it| match it {
                Fmt::Block => "BLOCK".to_string(),
                Fmt::BlockOf(m) => format!("BLOCK({m})"),
                Fmt::Cyclic => "CYCLIC".to_string(),
                Fmt::CyclicOf(m) => format!("CYCLIC({m})"),
                Fmt::Star => "*".to_string(),
            })
            .collect();
        let procs: Vec<String> =
            (0..self.rank).filter(|&t| self.formats[t] != Fmt::Star).map(|t| self.procs[t].to_string()).collect();
        let mut text = String::from("PROGRAM GEN\n  INTEGER I, J\n");
        text += &format!("  REAL A({}), B({})\n", bounds_text(&self.a_bounds), bounds_text(&self.b_bounds));
        text += &format!("!HPF$ PROCESSORS P({})\n", procs.join(","));
        text += &format!("!HPF$ TEMPLATE T({})\n", bounds_text(&self.t_bounds));
        text += &format!("!HPF$ DISTRIBUTE T({}) ONTO P\n", formats.join(","));
        text += &format!("!HPF$ {}\n", align_text("A", self.rank, &self.a_align));
        text += &format!("!HPF$ {}\n", align_text("B", self.rank, &self.b_align));
        for (index, &(lo, hi, st)) in self.loops.iter().enumerate() {
            let step = if self.omit_step[index] { String::new() } else { format!(", {st}") };
            text += &format!("{}DO {} = {lo}, {hi}{step}\n", "  ".repeat(index + 1), VARS[index]);
        }
        text += &format!(
            "{}{} = {}\n",
            "  ".repeat(self.rank + 1),
            ref_text("A", &self.a_subs),
            ref_text("B", &self.b_subs)
        );
        for index in (0..self.rank).rev() {
            text += &format!("{}END DO\n", "  ".repeat(index + 1));
        }
        text += "END PROGRAM GEN\n";
        text
    }

    /// Every iteration of the nest, as the index values, in execution order.
    fn iterations(&self) -> Vec<Vec<i64>> {
        let mut all = vec![Vec::new()];
        for &bounds in &self.loops {
            let vals = values(bounds);
            all = all.iter().flat_map(|prefix| vals.iter().map(move |v| [prefix.clone(), vec![*v]].concat())).collect();
        }
        all
    }

    fn non_empty(&self) -> bool {
        self.loops.iter().all(|&it| !values(it).is_empty())
    }

    /// The processor coordinate owning template index `j` of dimension `t` (DESIGN.md §2).
    fn owner(&self, t: usize, j: i64) -> i64 {
        let (lo, hi) = self.t_bounds[t];
        assert!(lo <= j && j <= hi, "template index {j} outside {lo}:{hi}: the generator is wrong");
        let p = self.procs[t];
        match self.formats[t] {
            Fmt::Block => (j - lo) / ((hi - lo + 1 + p - 1) / p),
            Fmt::BlockOf(m) => (j - lo) / m,
            Fmt::Cyclic => (j - lo) % p,
            Fmt::CyclicOf(m) => ((j - lo) / m) % p,
            Fmt::Star => unreachable!("not a processor dimension"),
        }
    }

    /// The distinct (element of B, from rank, to rank) triples with from != to, per (from, to).
    fn oracle(&self) -> Vec<Message> {
        let eval = |subs: &[Sub], it: &[i64]| -> Vec<i64> {
            subs.iter().map(|&(index, coef, offset)| coef * it[index] + offset).collect()
        };
        let mut moved: BTreeSet<(Vec<i64>, u32, u32)> = BTreeSet::new();
        for it in self.iterations() {
            let a = eval(&self.a_subs, &it);
            let b = eval(&self.b_subs, &it);
            for (d, &x) in b.iter().enumerate() {
                assert!(self.b_bounds[d].0 <= x && x <= self.b_bounds[d].1, "B out of bounds: the generator is wrong");
            }
            for (d, &x) in a.iter().enumerate() {
                assert!(self.a_bounds[d].0 <= x && x <= self.a_bounds[d].1, "A out of bounds: the generator is wrong");
            }
            let (mut from, mut to, mut weight) = (0i64, 0i64, 1i64);
            for t in 0..self.rank {
                if self.formats[t] == Fmt::Star {
                    continue;
                }
                let (src, stride, offset) = self.a_align[t].expect("A is never replicated");
                let home = self.owner(t, stride * a[src] + offset);
                let there = match self.b_align[t] {
                    Some((src, stride, offset)) => self.owner(t, stride * b[src] + offset),
                    // Replicated along this processor dimension: a copy is at the home's coordinate.
                    None => home,
                };
                from += there * weight;
                to += home * weight;
                weight *= self.procs[t];
            }
            if from != to {
                moved.insert((b, from as u32, to as u32));
            }
        }
        let mut grouped: BTreeMap<(u32, u32), u64> = BTreeMap::new();
        for (_, from, to) in moved {
            *grouped.entry((from, to)).or_default() += 1;
        }
        grouped.into_iter().map(|((from, to), elements)| Message { from, to, elements }).collect()
    }

    /// Equations (1)-(3) per dimension of B, or `None` where no optimal triple exists:
    /// `(target dim, triple)`; the outer `None` when some dimension has none.
    fn equations(&self) -> Option<Vec<Option<(usize, Triple)>>> {
        let mut res = Vec::new();
        for (dim, &(index, r, s)) in self.b_subs.iter().enumerate() {
            // A constant subscript in a dimension of B that is not distributed
            // (collapsed by its ALIGN, or on a `*` template dimension) picks no
            // processor: the dimension is best collapsed.
            let followed = self.b_align.iter().position(|it| it.is_some_and(|(src, _, _)| src == dim));
            let distributed = followed.is_some_and(|t| self.formats[t] != Fmt::Star);
            if r == 0 && !distributed {
                res.push(None);
                continue;
            }
            let (lo, _, st) = self.loops[index];
            // The home dimension that the same index drives, and its alignment.
            let home_dim = self.a_subs.iter().position(|&(i, p, _)| i == index && p != 0)?;
            let (_, p, q) = self.a_subs[home_dim];
            let t = self.a_align.iter().position(|it| it.is_some_and(|(src, _, _)| src == home_dim))?;
            let (_, a, b) = self.a_align[t].unwrap();
            let l_loop = a * (p * lo + q) + b;
            let s_loop = p * st * a;
            let l_access = r * lo + s;
            let s_access = r * st;
            if s_access == 0 || s_loop % s_access != 0 {
                return None;
            }
            let s_opt = s_loop / s_access; // (1)
            let (lbound, ubound) = self.b_bounds[dim];
            let l_opt = l_loop - (l_access - lbound) * s_opt; // (2)
            let u_opt = (ubound - lbound) * s_opt + l_opt; // (3)
            let (t_lo, t_hi) = self.t_bounds[t];
            if l_opt.min(u_opt) < t_lo || l_opt.max(u_opt) > t_hi {
                return None;
            }
            res.push(Some((t, Triple { lo: l_opt, hi: u_opt, stride: s_opt })));
        }
        Some(res)
    }
}

fn analyze(text: &str) -> FileAnalysis {
    analysis::analyze(text, SourceForm::Free, ModelConfig { number_of_processors: None })
}

/// The innermost loop's report and its reference to B.
fn find_b<'a>(fa: &'a FileAnalysis, prog: &Prog, text: &str) -> Result<(&'a LoopReport, &'a Access), TestCaseError> {
    let report = fa
        .loops
        .iter()
        .find(|it| it.nest.len() == prog.rank && !it.accesses.is_empty())
        .ok_or_else(|| TestCaseError::fail(format!("no loop report with accesses in\n{text}")))?;
    let home = report.home.as_ref().ok_or_else(|| TestCaseError::fail(format!("no home in\n{text}")))?;
    prop_assert_eq!(&fa.model.symbol(home.array).name.text, "A", "home in\n{}", text);
    let b = report
        .accesses
        .iter()
        .find(|it| !it.is_home && fa.model.symbol(it.array).name.text == "B")
        .ok_or_else(|| TestCaseError::fail(format!("no access to B in\n{text}")))?;
    Ok((report, b))
}

/// The analysis' count for B equals the oracle's.
fn check_transfer(b: &Access, oracle: &[Message], text: &str) -> Result<(), TestCaseError> {
    let moved: u64 = oracle.iter().map(|it| it.elements).sum();
    match &b.transfer {
        None => prop_assert_eq!(moved, 0, "no transfer reported, but the oracle moves {:?} in\n{}", oracle, text),
        Some(transfer) => {
            let count = transfer
                .count
                .as_ref()
                .ok_or_else(|| TestCaseError::fail(format!("uncounted ({:?}) in\n{text}", transfer.uncounted)))?;
            prop_assert_eq!(count.moved_elements, moved, "moved elements in\n{}", text);
            prop_assert_eq!(&count.messages[..], oracle, "messages in\n{}", text);
        }
    }
    Ok(())
}

/// Access range, declared triple and loop triple against the enumeration.
fn check_ranges(prog: &Prog, report: &LoopReport, b: &Access, text: &str) -> Result<(), TestCaseError> {
    let declared: Vec<Option<Triple>> = (0..prog.rank)
        .map(|dim| {
            let (lo, hi) = prog.b_bounds[dim];
            prog.b_align.iter().flatten().find(|it| it.0 == dim).map(|&(_, stride, offset)| Triple {
                lo: stride * lo + offset,
                hi: stride * hi + offset,
                stride,
            })
        })
        .collect();
    prop_assert_eq!(&b.declared, &declared, "declared triple of B in\n{}", text);
    if !prog.non_empty() {
        return Ok(());
    }
    let iterations = prog.iterations();
    let (first, last) = (iterations.first().unwrap(), iterations.last().unwrap());
    let range = |&(index, coef, offset): &Sub| {
        // The stride: the change of the subscript when its index advances by one step.
        let mut next = first.clone();
        next[index] += prog.loops[index].2;
        let at = |it: &[i64]| coef * it[index] + offset;
        Triple { lo: at(first), hi: at(last), stride: at(&next) - at(first) }
    };
    let expected: Vec<Option<Triple>> = prog.b_subs.iter().map(|it| Some(range(it))).collect();
    prop_assert_eq!(&b.access, &expected, "access range of B in\n{}", text);
    // The loop's triple: the home's access range through A's alignment.
    let home = report.home.as_ref().unwrap();
    let loop_triple: Vec<Option<Triple>> = prog
        .a_subs
        .iter()
        .enumerate()
        .map(|(dim, sub)| {
            let r = range(sub);
            let &(_, a, b) = prog.a_align.iter().flatten().find(|it| it.0 == dim).unwrap();
            Some(Triple { lo: a * r.lo + b, hi: a * r.hi + b, stride: a * r.stride })
        })
        .collect();
    prop_assert_eq!(&home.triple, &loop_triple, "loop triple in\n{}", text);
    Ok(())
}

/// Reads the analysis' suggested `ALIGN B(I[,J]) WITH T(...)` back into per-target-dimension form.
fn parse_align(align: &str, rank: usize) -> Option<Vec<AlignDim>> {
    let squeezed: String = align.chars().filter(|it| !it.is_whitespace()).collect::<String>().to_ascii_uppercase();
    let head = format!("ALIGNB({})WITHT(", VARS[..rank].join(","));
    let body = squeezed.strip_prefix(&head)?.strip_suffix(')')?;
    body.split(',')
        .map(|sub| {
            if sub == "*" {
                return Some(None);
            }
            let (pos, var) = sub.char_indices().find(|(_, c)| *c == 'I' || *c == 'J')?;
            let src = if var == 'I' { 0 } else { 1 };
            let coef = match &sub[..pos] {
                "" => 1,
                "-" => -1,
                text => text.strip_suffix('*')?.parse().ok()?,
            };
            let rest = &sub[pos + 1..];
            let offset = if rest.is_empty() { 0 } else { rest.strip_prefix('+').unwrap_or(rest).parse().ok()? };
            Some(Some((src, coef, offset)))
        })
        .collect()
}

/// Equations (1)-(3) against the analysis, and the rewrite with the optimal ALIGN.
fn check_optimal(prog: &Prog, b: &Access, text: &str) -> Result<(), TestCaseError> {
    if !prog.non_empty() {
        return Ok(());
    }
    let expected = prog.equations();
    match (&expected, &b.optimal) {
        (None, None) => {}
        (Some(dims), Some(optimal)) => {
            let triples: Vec<Option<Triple>> = dims.iter().map(|it| it.map(|dim| dim.1)).collect();
            prop_assert_eq!(optimal, &triples, "optimal triple of B in\n{}", text);
            let alignment = b.optimal_alignment.as_ref().unwrap();
            let targets: Vec<Option<usize>> = alignment.dims.iter().map(|it| it.map(|dim| dim.0)).collect();
            let expected_targets: Vec<Option<usize>> = dims.iter().map(|it| it.map(|dim| dim.0)).collect();
            prop_assert_eq!(targets, expected_targets, "target dimensions of the optimal alignment in\n{}", text);
        }
        _ => prop_assert!(
            false,
            "equations (1)-(3) give {:?}, the analysis {:?} ({:?}) in\n{}",
            expected,
            b.optimal,
            b.reason,
            text
        ),
    }
    if prog.rank == 1 {
        // The reason, when there is none, in the 1-D case.
        let (_, p, _) = prog.a_subs[0];
        let (_, r, _) = prog.b_subs[0];
        let (_, a, _) = prog.a_align[0].unwrap();
        let kind = b.reason.as_ref().map(NoOptimal::kind);
        let want = if r == 0 {
            Some("broadcast")
        } else if p == 0 {
            Some("not expressible")
        } else if (p * a) % r != 0 {
            Some("non-integer stride")
        } else if expected.is_none() {
            Some("out of bounds")
        } else {
            None
        };
        prop_assert_eq!(kind, want, "reason {:?} in\n{}", b.reason, text);
    }
    if b.optimal.is_none() {
        return Ok(());
    }
    let suggested =
        b.optimal_align.as_ref().ok_or_else(|| TestCaseError::fail(format!("no optimal_align in\n{text}")))?;
    let parsed = parse_align(suggested, prog.rank)
        .ok_or_else(|| TestCaseError::fail(format!("cannot read `{suggested}` from\n{text}")))?;
    let mut fixed = prog.clone();
    fixed.b_align = parsed;
    let new_text = fixed.text();
    prop_assert!(new_text.contains(&format!("!HPF$ {suggested}\n")), "`{}` not written into\n{}", suggested, new_text);
    let oracle = fixed.oracle();
    prop_assert!(oracle.is_empty(), "with `{}` the oracle still moves {:?} in\n{}", suggested, oracle, new_text);
    let fa = analyze(&new_text);
    let (_, b) = find_b(&fa, &fixed, &new_text)?;
    let moved = b.transfer.as_ref().map(|it| it.count.as_ref().map_or(u64::MAX, |it| it.moved_elements));
    prop_assert!(
        moved.is_none() || moved == Some(0),
        "with `{}` the analysis still reports {:?} in\n{}",
        suggested,
        b.transfer,
        new_text
    );
    prop_assert!(
        b.optimal.as_ref().is_some_and(|it| *it == b.declared),
        "with `{}` the optimal triple {:?} is not the declared {:?} in\n{}",
        suggested,
        b.optimal,
        b.declared,
        new_text
    );
    Ok(())
}

fn check_counts(prog: &Prog) -> Result<(), TestCaseError> {
    let text = prog.text();
    let fa = analyze(&text);
    let (report, b) = find_b(&fa, prog, &text)?;
    check_transfer(b, &prog.oracle(), &text)?;
    check_ranges(prog, report, b, &text)
}

fn check_optimality(prog: &Prog) -> Result<(), TestCaseError> {
    let text = prog.text();
    let fa = analyze(&text);
    let (_, b) = find_b(&fa, prog, &text)?;
    check_optimal(prog, b, &text)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    /// 1-D: transfer counts, messages, access range, declared and loop triples.
    #[test]
    fn counts_match_brute_force_1d(raw in raw(1)) {
        check_counts(&build(&raw))?;
    }

    /// 2-D (transposes, `*` formats, replicated B): the same.
    #[test]
    fn counts_match_brute_force_2d(raw in raw(2)) {
        check_counts(&build(&raw))?;
    }

    /// 1-D: the optimal triple is equations (1)-(3), with the right reason when
    /// there is none, and applying it moves nothing.
    #[test]
    fn optimal_triple_is_optimal_1d(raw in raw(1)) {
        check_optimality(&build(&raw))?;
    }

    /// 2-D: the optimal triple per dimension is equations (1)-(3) and applying it moves nothing.
    #[test]
    fn optimal_triple_is_optimal_2d(raw in raw(2)) {
        check_optimality(&build(&raw))?;
    }
}

/// The generator writes what it means: the seed's FIG. 6 loop as a generated program.
#[test]
fn generator_renders_the_seed_example() {
    let prog = Prog {
        rank: 1,
        loops: vec![(2, 16, 1)],
        omit_step: vec![true],
        a_subs: vec![(0, 1, 0)],
        b_subs: vec![(0, 1, -1)],
        a_bounds: vec![(1, 16)],
        b_bounds: vec![(1, 15)],
        a_align: vec![Some((0, 1, 0))],
        b_align: vec![Some((0, 1, 0))],
        t_bounds: vec![(1, 16)],
        formats: vec![Fmt::Block],
        procs: vec![4],
    };
    let text = prog.text();
    assert!(
        text.contains("!HPF$ ALIGN B(I) WITH T(I)\n")
            && text.contains("DO I = 2, 16\n")
            && text.contains("A(I) = B(I-1)\n"),
        "{text}"
    );
    let oracle = prog.oracle();
    assert_eq!(
        oracle,
        vec![
            Message { from: 0, to: 1, elements: 1 },
            Message { from: 1, to: 2, elements: 1 },
            Message { from: 2, to: 3, elements: 1 },
        ]
    );
    check_counts(&prog).unwrap();
    check_optimality(&prog).unwrap();
    assert_eq!(parse_align("ALIGN B(I,J) WITH T(-2*J+3,*)", 2), Some(vec![Some((1, -2, 3)), None]));
}
