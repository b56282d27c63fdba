//! Differential tests of the MPI backend on random programs: a seeded
//! generator writes HPF free-form programs inside what the backend lowers
//! (1-D and 2-D INTEGER arrays with one BLOCK or BLOCK(m) dimension,
//! distributed directly or through templates and ALIGN chains at random
//! offsets; DO loops with affine subscripts, loop-carried dependences,
//! INDEPENDENT loops, section assignments, FORALL, reductions, outer
//! sequential loops, IF constructs and output). Each program is compiled
//! with gfortran (the directives are comments) and run once, then built by
//! `hpf-ls build` and run under `mpirun` on 1 to 5 processes (5 is more than
//! the cores: oversubscribed); stdout must be byte-identical.
//!
//! `cargo test` runs a few programs; the ignored test runs
//! `HPF_RANDOM_PROGRAMS` of them (200 by default), from seed
//! `HPF_RANDOM_SEED` on (1000 by default), on `HPF_RANDOM_JOBS` threads (1
//! by default). `HPF_RANDOM_ONLY=SEED` runs that one seed in both tests
//! and prints its program. Needs `gfortran`, `mpif90` and `mpirun`; where
//! `CI` is set their absence fails the test instead of skipping it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The process counts every program runs on.
const PROCESSES: [u32; 5] = [1, 2, 3, 4, 5];
/// Per compilation and per run.
const TIMEOUT: Duration = Duration::from_secs(120);

// ---------------------------------------------------------------------------
// The generator.

/// SplitMix64: small, deterministic, good enough to pick program shapes.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0x9E37_79B9_7F4A_7C15)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Inclusive.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// A generated array: rank 1 (`other` is None) or rank 2 with the
/// distributed dimension `dim` over `lo:hi` and the other one over `1:m`.
#[derive(Clone)]
struct Array {
    name: String,
    lo: i64,
    hi: i64,
    /// Rank 2: (distributed dimension, 0 or 1; extent of the other dimension).
    other: Option<(usize, i64)>,
    /// Rank 2: the lower bound of the other dimension.
    olo: i64,
}

impl Array {
    fn rank2(&self) -> bool {
        self.other.is_some()
    }

    fn m(&self) -> i64 {
        self.other.map_or(1, |it| it.1)
    }

    /// Rank 2: the upper bound of the other dimension.
    fn ohi(&self) -> i64 {
        self.olo + self.m() - 1
    }

    /// The subscripts of a rank-2 reference: `d` along the distributed
    /// dimension, `o` along the other one.
    fn at2(&self, d: &str, o: &str) -> String {
        match self.other {
            Some((0, _)) => format!("{}({d}, {o})", self.name),
            _ => format!("{}({o}, {d})", self.name),
        }
    }

    fn bounds(&self) -> String {
        let own = format!("{}:{}", self.lo, self.hi);
        match self.other {
            None => own,
            Some((0, _)) => format!("{own}, {}:{}", self.olo, self.ohi()),
            Some(_) => format!("{}:{}, {own}", self.olo, self.ohi()),
        }
    }
}

/// `v+c`, `v-c` or `v`.
fn offset(v: &str, c: i64) -> String {
    match c {
        0 => v.to_string(),
        c if c > 0 => format!("{v}+{c}"),
        c => format!("{v}{c}"),
    }
}

struct Gen {
    rng: Rng,
    n: i64,
    arrays: Vec<Array>,
    out: String,
    indent: usize,
    /// The DO variables of the enclosing loops (they may not be reassigned).
    busy: Vec<&'static str>,
    /// Whether all rank-1 arrays have the same bounds and blocks.
    uniform: bool,
    /// Statements left to generate.
    budget: i64,
    labels: usize,
}

const MODULI: [i64; 4] = [97, 101, 251, 1009];

impl Gen {
    fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn label(&mut self) -> String {
        self.labels += 1;
        format!("'L{}'", self.labels)
    }

    fn ones(&self) -> Vec<Array> {
        self.arrays.iter().filter(|it| !it.rank2()).cloned().collect()
    }

    fn twos(&self) -> Vec<Array> {
        self.arrays.iter().filter(|it| it.rank2()).cloned().collect()
    }

    /// A literal, or `n`, `n-1`, `n+1` when it equals one.
    fn bound(&mut self, value: i64) -> String {
        let d = value - self.n;
        if (-2..=1).contains(&d) && self.rng.chance(50) {
            offset("n", d)
        } else {
            value.to_string()
        }
    }

    fn modulus(&mut self) -> i64 {
        *self.rng.pick(&MODULI)
    }

    /// A scalar term: a constant, a scalar variable, or a loop index.
    fn scalar_term(&mut self, indices: &[&str]) -> String {
        match self.rng.below(4) {
            0 => self.rng.range(1, 9).to_string(),
            1 => "s".to_string(),
            2 if !indices.is_empty() => self.rng.pick(indices).to_string(),
            _ => "t".to_string(),
        }
    }

    /// `mod(t1 op t2 op ..., M)` of the given terms (or the term itself).
    fn combine(&mut self, terms: Vec<String>) -> String {
        if terms.len() == 1 && self.rng.chance(40) {
            return terms.into_iter().next().unwrap();
        }
        let mut expr = String::new();
        for (idx, term) in terms.into_iter().enumerate() {
            let coef = if self.rng.chance(25) { format!("{}*", self.rng.range(2, 3)) } else { String::new() };
            if idx > 0 {
                expr.push_str(if self.rng.chance(70) { " + " } else { " - " });
            }
            let _ = write!(expr, "{coef}{term}");
        }
        let m = self.modulus();
        format!("mod({expr}, {m})")
    }

    fn program(&mut self) -> String {
        let n = self.n;
        self.arrays.clear();
        // Rank-1 arrays, mostly over 1:n; in a uniform program all over 1:n
        // and cut in the same blocks, so that most statements run in parallel.
        self.uniform = self.rng.chance(45);
        let count = self.rng.range(2, 4);
        for name in ["a", "b", "c", "d"].iter().take(count as usize) {
            let (lo, hi) = if self.uniform {
                (1, n)
            } else {
                (*self.rng.pick(&[1, 1, 1, 0, 2]), n + *self.rng.pick(&[0, 0, 0, 1, -1]))
            };
            self.arrays.push(Array { name: name.to_string(), lo, hi, other: None, olo: 1 });
        }
        // Rank-2 arrays, the same distributed dimension in a program.
        if self.rng.chance(55) {
            let dim = self.rng.below(2);
            let m = self.rng.range(2, 4);
            let count = self.rng.range(1, 2);
            let olo = *self.rng.pick(&[1, 1, 1, 0, 2]);
            for name in ["g", "h"].iter().take(count as usize) {
                self.arrays.push(Array { name: name.to_string(), lo: 1, hi: n, other: Some((dim, m)), olo });
            }
        }
        let mut text = String::new();
        let _ = writeln!(text, "program rnd");
        let _ = writeln!(text, "  implicit none");
        let _ = writeln!(text, "  integer, parameter :: n = {n}");
        for array in &self.arrays {
            let _ = writeln!(text, "  integer :: {}({})", array.name, array.bounds());
        }
        let _ = writeln!(text, "  integer :: i, j, k, it, s, t");
        text.push_str(&self.directives());
        // The body.
        self.out.clear();
        self.indent = 1;
        self.line("s = 0");
        self.line("t = 1");
        for array in self.arrays.clone() {
            self.init(&array);
        }
        self.budget = self.rng.range(5, 12);
        while self.budget > 0 {
            self.statement(0);
        }
        // Everything at the end.
        for array in self.arrays.clone() {
            let label = self.label();
            self.line(&format!("print *, {label}, {}", array.name));
        }
        self.line("print *, 's t', s, t");
        text.push_str(&self.out);
        let _ = writeln!(text, "end program rnd");
        text
    }

    fn directives(&mut self) -> String {
        let mut text = String::new();
        let _ = writeln!(text, "!HPF$ PROCESSORS P(NUMBER_OF_PROCESSORS())");
        let onto = |rng: &mut Rng| if rng.chance(70) { " ONTO P" } else { "" };
        let dist = |rng: &mut Rng, n: i64| {
            if rng.chance(65) {
                "BLOCK".to_string()
            } else {
                format!("BLOCK({})", rng.range(1, n / 2 + 2))
            }
        };
        let ones = self.ones();
        let twos = self.twos();
        if self.uniform {
            let format = dist(&mut self.rng, self.n);
            if self.rng.chance(50) {
                // One template, every array at its own offset.
                let offsets: Vec<i64> = ones.iter().map(|_| self.rng.range(-2, 2)).collect();
                let tlo = 1 + offsets.iter().min().unwrap() - self.rng.range(0, 1);
                let thi = self.n + offsets.iter().max().unwrap() + self.rng.range(0, 1);
                let _ = writeln!(text, "!HPF$ TEMPLATE T1({tlo}:{thi})");
                let _ = writeln!(text, "!HPF$ DISTRIBUTE T1({format}){}", onto(&mut self.rng));
                for (array, off) in ones.iter().zip(offsets) {
                    let _ = writeln!(text, "!HPF$ ALIGN {}(I) WITH T1({})", array.name, offset("I", off));
                }
            } else {
                // The same distribution for all, or ALIGN with the first one.
                for (idx, array) in ones.iter().enumerate() {
                    if idx > 0 && self.rng.chance(40) {
                        let _ = writeln!(text, "!HPF$ ALIGN {}(I) WITH {}(I)", array.name, ones[0].name);
                    } else {
                        let _ = writeln!(text, "!HPF$ DISTRIBUTE {}({format}){}", array.name, onto(&mut self.rng));
                    }
                }
            }
        }
        // Rank 1: some replicated, some distributed directly, the others on templates.
        let mut templates: usize = 0;
        let mut aligned: Vec<(Array, usize)> = Vec::new();
        let mut placed: Vec<Array> = Vec::new();
        let uniform = self.uniform;
        for array in ones.iter().filter(|_| !uniform) {
            let choice = self.rng.below(10);
            if choice == 0 {
                continue; // replicated
            }
            if choice <= 3 {
                let format = dist(&mut self.rng, self.n);
                let onto = onto(&mut self.rng);
                let _ = writeln!(text, "!HPF$ DISTRIBUTE {}({format}){onto}", array.name);
                placed.push(array.clone());
                continue;
            }
            // An ALIGN chain: with an array placed before, where it fits.
            if choice == 4 && !placed.is_empty() {
                let base = self.rng.pick(&placed).clone();
                let off = self.rng.range(-2, 2);
                if array.lo + off >= base.lo && array.hi + off <= base.hi {
                    let _ = writeln!(text, "!HPF$ ALIGN {}(I) WITH {}({})", array.name, base.name, offset("I", off));
                    placed.push(array.clone());
                    continue;
                }
            }
            let template = if templates == 0 || self.rng.chance(25) {
                templates += 1;
                templates
            } else {
                self.rng.range(1, templates as i64) as usize
            };
            aligned.push((array.clone(), template));
        }
        for template in 1..=templates {
            let members: Vec<(Array, i64)> =
                aligned.iter().filter(|it| it.1 == template).map(|it| (it.0.clone(), self.rng.range(-2, 2))).collect();
            if members.is_empty() {
                continue;
            }
            let tlo = members.iter().map(|(a, off)| a.lo + off).min().unwrap() - self.rng.range(0, 2);
            let thi = members.iter().map(|(a, off)| a.hi + off).max().unwrap() + self.rng.range(0, 2);
            let _ = writeln!(text, "!HPF$ TEMPLATE T{template}({tlo}:{thi})");
            let format = dist(&mut self.rng, thi - tlo + 1);
            let onto = onto(&mut self.rng);
            let _ = writeln!(text, "!HPF$ DISTRIBUTE T{template}({format}){onto}");
            let same = members.iter().all(|it| it.1 == members[0].1);
            if same && members.len() > 1 && self.rng.chance(50) {
                let names: Vec<&str> = members.iter().map(|it| it.0.name.as_str()).collect();
                let _ = writeln!(
                    text,
                    "!HPF$ ALIGN (I) WITH T{template}({}) :: {}",
                    offset("I", members[0].1),
                    names.join(", ")
                );
            } else {
                for (array, off) in &members {
                    let _ = writeln!(text, "!HPF$ ALIGN {}(I) WITH T{template}({})", array.name, offset("I", *off));
                }
            }
            for (array, _) in members {
                placed.push(array);
            }
        }
        // Rank 2: distributed directly, or through a template of the same rank.
        if let Some(first) = twos.first() {
            let (dim, _) = first.other.unwrap();
            // An offset along the collapsed dimension too.
            let toff = if self.rng.chance(30) { self.rng.range(-1, 1) } else { 0 };
            let other = format!("{}:{}", first.olo + toff, first.ohi() + toff);
            let spec = |format: &str| if dim == 0 { format!("{format}, *") } else { format!("*, {format}") };
            let use_template = self.rng.chance(50);
            if use_template {
                let off = self.rng.range(-2, 2);
                let tlo = 1 + off - self.rng.range(0, 1);
                let thi = self.n + off + self.rng.range(0, 1);
                let dims = if dim == 0 { format!("{tlo}:{thi}, {other}") } else { format!("{other}, {tlo}:{thi}") };
                let _ = writeln!(text, "!HPF$ TEMPLATE TG({dims})");
                let format = dist(&mut self.rng, thi - tlo + 1);
                let _ = writeln!(text, "!HPF$ DISTRIBUTE TG({}){}", spec(&format), onto(&mut self.rng));
                let subs = if dim == 0 {
                    format!("{}, {}", offset("I", off), offset("J", toff))
                } else {
                    format!("{}, {}", offset("I", toff), offset("J", off))
                };
                for array in &twos {
                    let _ = writeln!(text, "!HPF$ ALIGN {}(I, J) WITH TG({subs})", array.name);
                }
            } else {
                for array in &twos {
                    let format = dist(&mut self.rng, self.n);
                    let _ = writeln!(text, "!HPF$ DISTRIBUTE {}({}){}", array.name, spec(&format), onto(&mut self.rng));
                }
            }
        }
        text
    }

    /// Every element gets a deterministic value.
    fn init(&mut self, array: &Array) {
        let (p, q, r) = (self.rng.range(2, 9), self.rng.range(0, 9), *self.rng.pick(&[7, 11, 13, 17]));
        let (lo, hi) = (array.lo, array.hi);
        let (blo, bhi) = (self.bound(lo), self.bound(hi));
        let shift = self.rng.range(0, r / 2);
        match (array.other, self.rng.below(3)) {
            (None, 0) => {
                self.line(&format!("do i = {blo}, {bhi}"));
                self.line(&format!("  {}(i) = mod(i*{p} + {q}, {r}) - {shift}", array.name));
                self.line("end do");
            }
            (None, 1) => {
                self.line(&format!("forall (i = {blo}:{bhi}) {}(i) = mod(i*{p} + {q}, {r}) - {shift}", array.name));
            }
            (None, _) => {
                let (fill, step) = (self.rng.range(-3, 5), self.rng.range(1, 3));
                self.line(&format!("{} = {fill}", array.name));
                self.line(&format!("do i = {blo}, {bhi}, {step}"));
                self.line(&format!("  {}(i) = mod(i*{p} + {q}, {r})", array.name));
                self.line("end do");
            }
            (Some(_), 0 | 1) => {
                let (olo, ohi) = (array.olo, array.ohi());
                let element = array.at2("j", "i");
                self.line(&format!("do j = {blo}, {bhi}"));
                self.line(&format!("  do i = {olo}, {ohi}"));
                self.line(&format!("    {element} = mod(i*{p} + j*{q} + 1, {r}) - {shift}"));
                self.line("  end do");
                self.line("end do");
            }
            (Some(_), _) => {
                let (olo, ohi) = (array.olo, array.ohi());
                let element = array.at2("j", "i");
                self.line(&format!(
                    "forall (i = {olo}:{ohi}, j = {blo}:{bhi}) {element} = mod(i*{q} + j*{p}, {r}) - {shift}"
                ));
            }
        }
    }

    /// One statement (or construct) at nesting depth `depth`.
    fn statement(&mut self, depth: usize) {
        self.budget -= 1;
        let has_two = !self.twos().is_empty();
        let kind = self.rng.below(if depth < 2 { 15 } else { 12 });
        match kind {
            0 | 1 => self.affine_loop(false),
            2 => self.affine_loop(true),
            3 => self.section(),
            4 => self.forall(),
            5 => self.reduction(),
            6 => self.element(),
            7 => self.print(),
            8 if has_two => self.loop2(),
            9 if has_two => self.section2(),
            8 | 9 => self.affine_loop(false),
            10 if has_two => {
                if self.rng.chance(50) {
                    self.forall2()
                } else {
                    self.section2()
                }
            }
            10 | 11 => self.scalar(),
            12 | 13 => self.outer_loop(depth),
            _ => self.if_construct(depth),
        }
    }

    /// An upper bound `hi`, or inside a loop over 1..=3 at most 3 below it
    /// (`hi-it`): bounds that change from one trip to the next.
    fn moving_bound(&mut self, lo: i64, hi: i64) -> String {
        match self.busy.last().copied() {
            Some(var) if hi - lo >= 3 && self.rng.chance(35) => format!("{}-{var}", self.bound(hi)),
            _ => self.bound(hi),
        }
    }

    /// The range of `v` for which every `(array, c)` reads `array(v+c)` in bounds.
    fn index_range(&mut self, refs: &[(Array, i64)]) -> Option<(i64, i64)> {
        let lo = refs.iter().map(|(a, c)| a.lo - c).max()?;
        let hi = refs.iter().map(|(a, c)| a.hi - c).min()?;
        let lo = lo + if self.rng.chance(40) { self.rng.range(0, 2) } else { 0 };
        let hi = hi - if self.rng.chance(40) { self.rng.range(0, 2) } else { 0 };
        (lo <= hi).then_some((lo, hi))
    }

    /// `DO I` over rank-1 arrays: `X(I+q) = f(Y(I+c), ...)`; with
    /// `carried`, X is read at its neighbour (a loop-carried dependence).
    fn affine_loop(&mut self, carried: bool) {
        let ones = self.ones();
        let lhs = self.rng.pick(&ones).clone();
        let q = if self.rng.chance(60) { 0 } else { self.rng.range(-1, 1) };
        let backward = carried && self.rng.chance(35);
        let mut refs: Vec<(Array, i64)> = vec![(lhs.clone(), q)];
        if carried {
            refs.push((lhs.clone(), if backward { q + 1 } else { q - 1 }));
        }
        for _ in 0..self.rng.range(if carried { 0 } else { 1 }, 2) {
            let array = self.rng.pick(&ones).clone();
            refs.push((array, self.rng.range(-2, 2)));
        }
        let Some((lo, hi)) = self.index_range(&refs) else { return };
        let (blo, bhi) = (self.bound(lo), self.moving_bound(lo, hi));
        let reads_lhs_elsewhere = refs[1..].iter().any(|(a, c)| a.name == lhs.name && *c != q);
        let mut terms: Vec<String> =
            refs[1..].iter().map(|(a, c)| format!("{}({})", a.name, offset("i", *c))).collect();
        if terms.is_empty() || self.rng.chance(40) {
            let term = self.scalar_term(&["i"]);
            terms.push(term);
        }
        let rhs = self.combine(terms);
        if !reads_lhs_elsewhere && self.rng.chance(50) {
            self.line("!HPF$ INDEPENDENT");
        }
        let step = if backward || (!carried && self.rng.chance(10)) {
            -1
        } else if self.rng.chance(12) {
            2
        } else {
            1
        };
        match step {
            1 => self.line(&format!("do i = {blo}, {bhi}")),
            -1 => self.line(&format!("do i = {bhi}, {blo}, -1")),
            _ => self.line(&format!("do i = {blo}, {bhi}, {step}")),
        }
        let target = format!("{}({})", lhs.name, offset("i", q));
        self.line(&format!("  {target} = {rhs}"));
        if self.rng.chance(20) {
            // A second update of the same element.
            let others: Vec<String> = refs[1..]
                .iter()
                .filter(|(a, _)| a.name != lhs.name)
                .map(|(a, c)| format!("{}({})", a.name, offset("i", *c)))
                .collect();
            let term = if others.is_empty() { self.scalar_term(&["i"]) } else { self.rng.pick(&others).clone() };
            let rhs = self.combine(vec![target.clone(), term]);
            self.line(&format!("  {target} = {rhs}"));
        }
        self.line("end do");
        if self.rng.chance(15) {
            self.line("print *, 'i', i");
        }
    }

    /// A section `X(l:u:st)` of `len` elements, or None when it does not fit.
    fn section_of(&mut self, array: &Array, len: i64, stride: i64) -> Option<String> {
        let span = (len - 1) * stride.abs();
        if span > array.hi - array.lo {
            return None;
        }
        let start = self.rng.range(array.lo, array.hi - span);
        let end = start + span;
        if len == array.hi - array.lo + 1 && stride == 1 && self.rng.chance(50) {
            return Some(if self.rng.chance(50) { array.name.clone() } else { format!("{}(:)", array.name) });
        }
        let (s, e) = (self.bound(start), self.bound(end));
        Some(match stride {
            1 => format!("{}({s}:{e})", array.name),
            st if st > 0 => format!("{}({s}:{e}:{st})", array.name),
            st => format!("{}({e}:{s}:{st})", array.name),
        })
    }

    fn section(&mut self) {
        let ones = self.ones();
        let lhs = self.rng.pick(&ones).clone();
        let stride: i64 = if self.rng.chance(80) { 1 } else { *self.rng.pick(&[2, 3, -1]) };
        let max_len = (lhs.hi - lhs.lo) / stride.abs() + 1;
        let len = if self.rng.chance(30) { max_len } else { self.rng.range(1, max_len) };
        let Some(target) = self.section_of(&lhs, len, stride) else { return };
        let mut terms = Vec::new();
        for _ in 0..self.rng.range(1, 3) {
            let array = self.rng.pick(&ones).clone();
            let stride = if self.rng.chance(85) { stride } else { *self.rng.pick(&[1, 2, -1]) };
            if let Some(term) = self.section_of(&array, len, stride) {
                terms.push(term);
            }
        }
        if terms.is_empty() || self.rng.chance(30) {
            let term = self.scalar_term(&[]);
            terms.push(term);
        }
        let rhs = self.combine(terms);
        self.line(&format!("{target} = {rhs}"));
    }

    fn forall(&mut self) {
        let ones = self.ones();
        let lhs = self.rng.pick(&ones).clone();
        let q = if self.rng.chance(70) { 0 } else { self.rng.range(-1, 1) };
        let mut refs: Vec<(Array, i64)> = vec![(lhs.clone(), q)];
        for _ in 0..self.rng.range(1, 3) {
            let array = self.rng.pick(&ones).clone();
            refs.push((array, self.rng.range(-2, 2)));
        }
        let Some((lo, hi)) = self.index_range(&refs) else { return };
        let (blo, bhi) = (self.bound(lo), self.moving_bound(lo, hi));
        let reads_lhs = refs[1..].iter().any(|(a, _)| a.name == lhs.name);
        let mut terms: Vec<String> =
            refs[1..].iter().map(|(a, c)| format!("{}({})", a.name, offset("i", *c))).collect();
        if self.rng.chance(30) {
            let term = self.scalar_term(&["i"]);
            terms.push(term);
        }
        let rhs = self.combine(terms);
        let mask = if self.rng.chance(15) { format!(", mod(i, {}) /= 0", self.rng.range(2, 3)) } else { String::new() };
        if !reads_lhs && self.rng.chance(40) {
            self.line("!HPF$ INDEPENDENT");
        }
        let target = format!("{}({})", lhs.name, offset("i", q));
        if self.rng.chance(70) {
            self.line(&format!("forall (i = {blo}:{bhi}{mask}) {target} = {rhs}"));
        } else {
            self.line(&format!("forall (i = {blo}:{bhi}{mask})"));
            self.line(&format!("  {target} = {rhs}"));
            self.line("end forall");
        }
    }

    /// A reduction of rank-1 or rank-2 data (bounded so that nothing overflows).
    fn reduction_expr(&mut self) -> String {
        let twos = self.twos();
        if !twos.is_empty() && self.rng.chance(30) {
            let g = self.rng.pick(&twos).clone();
            let k = self.rng.range(g.olo, g.ohi());
            let l = self.rng.range(g.lo, g.hi);
            let u = self.rng.range(l, g.hi);
            let part = match self.rng.below(4) {
                0 => g.name.clone(),
                1 => g.at2(":", &k.to_string()),
                2 => g.at2(&format!("{l}:{u}"), ":"),
                _ => g.at2(&format!("{l}:{u}"), &k.to_string()),
            };
            return match self.rng.below(4) {
                0 => format!("maxval({part})"),
                1 => format!("minval({part})"),
                2 => format!("count({part} > {})", self.rng.range(-2, 6)),
                _ => format!("sum({part})"),
            };
        }
        let ones = self.ones();
        let x = self.rng.pick(&ones).clone();
        let max_len = x.hi - x.lo + 1;
        let len = if self.rng.chance(40) { max_len } else { self.rng.range(1, max_len) };
        let part = self.section_of(&x, len, 1).unwrap();
        match self.rng.below(8) {
            0 => format!("sum({part})"),
            1 => format!("maxval({part})"),
            2 => format!("minval({part})"),
            3 => format!("count({part} > {})", self.rng.range(-2, 6)),
            4 => format!("product(mod(abs({part}), 2) + 1)"),
            5 | 6 => {
                let y = self.rng.pick(&ones).clone();
                match self.section_of(&y, len, 1) {
                    Some(other) if self.rng.chance(60) => format!("dot_product({part}, {other})"),
                    Some(other) => format!("sum({part} + {other})"),
                    None => format!("sum({part})"),
                }
            }
            _ => format!("sum({part} * 2 - 1)"),
        }
    }

    fn reduction(&mut self) {
        let expr = self.reduction_expr();
        // dot products and products can be large: keep the scalars small.
        let bounded = format!("mod({expr}, {})", self.modulus());
        match self.rng.below(4) {
            0 if !self.busy.contains(&"s") => self.line(&format!("s = {bounded}")),
            1 if !self.busy.contains(&"t") => self.line(&format!("t = t + {bounded}")),
            2 => {
                let second = self.reduction_expr();
                let label = self.label();
                self.line(&format!("print *, {label}, {expr}, {second}"));
            }
            _ => {
                let label = self.label();
                self.line(&format!("print *, {label}, {expr}"));
            }
        }
    }

    /// An element assignment `X(e) = f(Y(e+c), s)`.
    fn element(&mut self) {
        let ones = self.ones();
        let x = self.rng.pick(&ones).clone();
        let y = self.rng.pick(&ones).clone();
        let c = self.rng.range(-2, 2);
        let Some((lo, hi)) = self.index_range(&[(x.clone(), 0), (y.clone(), c)]) else { return };
        // Inside a loop over 1..=3, at an index that moves with it.
        let moving = self.busy.last().copied().filter(|_| hi - lo >= 2 && self.rng.chance(50));
        let (index, read) = match moving {
            Some(var) => {
                let e = self.rng.range(lo - 1, hi - 3);
                (offset(var, e), offset(var, e + c))
            }
            None => {
                let e = self.rng.range(lo, hi);
                (e.to_string(), (e + c).to_string())
            }
        };
        let mut terms = vec![format!("{}({read})", y.name)];
        if self.rng.chance(60) {
            let term = self.scalar_term(&[]);
            terms.push(term);
        }
        let rhs = self.combine(terms);
        self.line(&format!("{}({index}) = {rhs}", x.name));
    }

    fn print(&mut self) {
        let label = self.label();
        let arrays = self.arrays.clone();
        let x = self.rng.pick(&arrays).clone();
        match (x.other, self.rng.below(4)) {
            (None, 0) => {
                let e = self.rng.range(x.lo, x.hi);
                let y = self.rng.pick(&arrays).clone();
                let f = self.rng.range(y.lo, y.hi);
                let other =
                    if y.rank2() { y.at2(&f.to_string(), &y.olo.to_string()) } else { format!("{}({f})", y.name) };
                self.line(&format!("print *, {label}, {}({e}), {other}, s", x.name));
            }
            (None, 1) => {
                let stride = *self.rng.pick(&[1, 1, 2, 3, -1, -2]);
                let len = self.rng.range(1, (x.hi - x.lo) / i64::abs(stride) + 1);
                let part = self.section_of(&x, len, stride).unwrap();
                self.line(&format!("print *, {label}, {part}"));
            }
            (None, 2) => self.line(&format!("print *, {label}, s, t")),
            (None, _) => self.line(&format!("print *, {label}, {}", x.name)),
            (Some(_), 0) => {
                let element =
                    x.at2(&self.rng.range(x.lo, x.hi).to_string(), &self.rng.range(x.olo, x.ohi()).to_string());
                self.line(&format!("print *, {label}, {element}"));
            }
            (Some(_), 1) => {
                let row = x.at2(":", &self.rng.range(x.olo, x.ohi()).to_string());
                self.line(&format!("print *, {label}, {row}"));
            }
            (Some(_), 2) => {
                let l = self.rng.range(x.lo, x.hi);
                let u = self.rng.range(l, x.hi);
                let part = x.at2(&format!("{l}:{u}"), ":");
                self.line(&format!("print *, {label}, {part}"));
            }
            (Some(_), _) => self.line(&format!("print *, {label}, {}", x.name)),
        }
    }

    /// A scalar from elements.
    fn scalar(&mut self) {
        let ones = self.ones();
        let x = self.rng.pick(&ones).clone();
        let e = self.rng.range(x.lo, x.hi);
        let target = if self.busy.contains(&"s") { "t" } else { "s" };
        if self.busy.contains(&target) {
            return;
        }
        let term = self.scalar_term(&[]);
        self.line(&format!("{target} = mod({}({e}) + {term}, 1009)", x.name));
    }

    /// A nest over rank-2 data: `G(v, w) = f(H(v+c, w+cw), A(v+c'), w)`.
    fn loop2(&mut self) {
        let twos = self.twos();
        let ones = self.ones();
        let g = self.rng.pick(&twos).clone();
        let m = g.ohi();
        let mut refs: Vec<(Array, i64)> = vec![(g.clone(), 0)];
        let mut terms = Vec::new();
        // Reads along the other dimension may look one back.
        let look_back = self.rng.chance(30);
        let w_lo = g.olo + i64::from(look_back);
        for _ in 0..self.rng.range(1, 2) {
            let h = self.rng.pick(&twos).clone();
            let c = self.rng.range(-1, 1);
            let cw = if look_back && self.rng.chance(60) { -1 } else { 0 };
            terms.push(h.at2(&offset("v", c), &offset("w", cw)));
            refs.push((h, c));
        }
        if self.rng.chance(40) {
            let a = self.rng.pick(&ones).clone();
            let c = self.rng.range(-1, 1);
            terms.push(format!("{}({})", a.name, offset("v", c)));
            refs.push((a, c));
        }
        if self.rng.chance(40) {
            terms.push(self.rng.pick(&["w", "v", "s"]).to_string());
        }
        let Some((lo, hi)) = self.index_range(&refs) else { return };
        let (blo, bhi) = (self.bound(lo), self.bound(hi));
        let reads_other = refs[1..].iter().any(|(a, c)| a.name == g.name && *c != 0);
        let rhs = self.combine(terms).replace('v', "j").replace('w', "i");
        let target = g.at2("j", "i");
        let distributed_outer = self.rng.chance(70);
        if !reads_other && self.rng.chance(40) {
            self.line("!HPF$ INDEPENDENT");
        }
        if distributed_outer {
            self.line(&format!("do j = {blo}, {bhi}"));
            self.line(&format!("  do i = {w_lo}, {m}"));
        } else {
            self.line(&format!("do i = {w_lo}, {m}"));
            self.line(&format!("  do j = {blo}, {bhi}"));
        }
        self.line(&format!("    {target} = {rhs}"));
        self.line("  end do");
        self.line("end do");
    }

    fn forall2(&mut self) {
        let twos = self.twos();
        let g = self.rng.pick(&twos).clone();
        let h = self.rng.pick(&twos).clone();
        let (olo, ohi) = (g.olo, g.ohi());
        let c = self.rng.range(-1, 1);
        let Some((lo, hi)) = self.index_range(&[(g.clone(), 0), (h.clone(), c)]) else { return };
        let (blo, bhi) = (self.bound(lo), self.bound(hi));
        let terms = vec![h.at2(&offset("j", c), "i"), self.rng.pick(&["i", "j", "s", "2"]).to_string()];
        let rhs = self.combine(terms);
        self.line(&format!("forall (i = {olo}:{ohi}, j = {blo}:{bhi}) {} = {rhs}", g.at2("j", "i")));
    }

    fn section2(&mut self) {
        let twos = self.twos();
        let ones = self.ones();
        let g = self.rng.pick(&twos).clone();
        let h = self.rng.pick(&twos).clone();
        match self.rng.below(4) {
            0 => {
                let rhs = self.combine(vec![h.name.clone(), g.name.clone()]);
                self.line(&format!("{} = {rhs}", g.name));
            }
            1 => {
                // A row along the distributed dimension from a rank-1 section.
                let a = self.rng.pick(&ones).clone();
                let len = self.rng.range(1, self.n);
                let Some(source) = self.section_of(&a, len, 1) else { return };
                let l = self.rng.range(g.lo, g.hi - len + 1);
                let k = self.rng.range(g.olo, g.ohi());
                let rhs = self.combine(vec![source]);
                self.line(&format!("{} = {rhs}", g.at2(&format!("{l}:{}", l + len - 1), &k.to_string())));
            }
            2 => {
                // One element, or the elements along the other dimension, read at a distance.
                let c = self.rng.range(-1, 1);
                let e = self.rng.range(g.lo.max(h.lo - c), g.hi.min(h.hi - c));
                let (target, source) = if self.rng.chance(50) {
                    let k = self.rng.range(g.olo, g.ohi()).to_string();
                    let k2 = self.rng.range(h.olo, h.ohi()).to_string();
                    (g.at2(&e.to_string(), &k), h.at2(&(e + c).to_string(), &k2))
                } else {
                    (g.at2(&e.to_string(), ":"), h.at2(&(e + c).to_string(), ":"))
                };
                let term = self.scalar_term(&[]);
                let rhs = self.combine(vec![source, term]);
                self.line(&format!("{target} = {rhs}"));
            }
            _ => {
                let len = self.rng.range(1, self.n);
                let l = self.rng.range(g.lo, g.hi - len + 1);
                let l2 = self.rng.range(h.lo, h.hi - len + 1);
                let rhs = self.combine(vec![h.at2(&format!("{l2}:{}", l2 + len - 1), ":"), "1".to_string()]);
                self.line(&format!("{} = {rhs}", g.at2(&format!("{l}:{}", l + len - 1), ":")));
            }
        }
    }

    /// `DO IT = 1, r` around a few statements.
    fn outer_loop(&mut self, depth: usize) {
        let var = if self.busy.contains(&"it") { "k" } else { "it" };
        if self.busy.contains(&var) {
            return;
        }
        let trips = self.rng.range(1, 3);
        let counted = self.rng.chance(75);
        if counted {
            self.line(&format!("do {var} = 1, {trips}"));
        } else {
            self.line(&format!("{var} = 0"));
            self.line(&format!("do while ({var} < {trips})"));
            self.line(&format!("  {var} = {var} + 1"));
        }
        self.indent += 1;
        self.busy.push(var);
        for _ in 0..self.rng.range(1, 3) {
            self.statement(depth + 1);
        }
        if self.rng.chance(30) && !self.busy.contains(&"s") {
            self.line(&format!("s = mod(s + {var}, 1009)"));
        }
        self.busy.pop();
        self.indent -= 1;
        self.line("end do");
    }

    fn if_construct(&mut self, depth: usize) {
        let ones = self.ones();
        let cond = match self.rng.below(5) {
            0 if self.busy.contains(&"it") => "mod(it, 2) == 0".to_string(),
            4 => {
                // A reduction of distributed data.
                let expr = self.reduction_expr();
                format!("{expr} > {}", self.rng.range(-5, 40))
            }
            1 => {
                // A condition on distributed data (rank 0 decides, the others follow).
                let x = self.rng.pick(&ones).clone();
                format!("{}({}) > {}", x.name, self.rng.range(x.lo, x.hi), self.rng.range(-2, 5))
            }
            _ => format!("s {} {}", self.rng.pick(&[">", "<", ">=", "/="]), self.rng.range(-5, 50)),
        };
        self.line(&format!("if ({cond}) then"));
        self.indent += 1;
        for _ in 0..self.rng.range(1, 2) {
            self.statement(depth + 1);
        }
        self.indent -= 1;
        if self.rng.chance(50) {
            self.line("else");
            self.indent += 1;
            self.statement(depth + 1);
            self.indent -= 1;
        }
        self.line("end if");
    }
}

/// The program of `seed`.
fn generate(seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let n = rng.range(8, 24);
    let mut generator = Gen {
        rng,
        n,
        arrays: Vec::new(),
        out: String::new(),
        indent: 1,
        busy: Vec::new(),
        uniform: false,
        budget: 0,
        labels: 0,
    };
    generator.program()
}

// ---------------------------------------------------------------------------
// Running them.

fn toolchain_present() -> bool {
    let found = |program: &str| Command::new(program).arg("--version").output().is_ok_and(|it| it.status.success());
    let present = found("gfortran") && found("mpif90") && found("mpirun");
    if !present && std::env::var_os("CI").is_some() {
        panic!(
            "CI is set but gfortran/mpif90/mpirun are missing: apt-get install -y gfortran libopenmpi-dev openmpi-bin"
        );
    }
    present
}

/// A scratch directory removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("hpf-ls-random-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct Finished {
    status: Option<std::process::ExitStatus>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// Runs `command` with its output in files, killed (SIGTERM, then SIGKILL) after `TIMEOUT`.
fn run_bounded(mut command: Command, dir: &Path, tag: &str) -> Finished {
    let out_path = dir.join(format!("{tag}.stdout"));
    let err_path = dir.join(format!("{tag}.stderr"));
    let mut child = command
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .expect("the command starts");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > TIMEOUT {
            let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
            std::thread::sleep(Duration::from_secs(3));
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Finished {
        status,
        stdout: std::fs::read(&out_path).unwrap_or_default(),
        stderr: std::fs::read(&err_path).unwrap_or_default(),
    }
}

fn mpirun(executable: &Path, processes: u32, dir: &Path) -> Finished {
    let launch = || {
        let mut command = Command::new("mpirun");
        command
            .args(["--oversubscribe", "-np", &processes.to_string()])
            .arg(executable)
            .current_dir(dir)
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .env("OMPI_MCA_rmaps_base_oversubscribe", "1");
        run_bounded(command, dir, &format!("np{processes}"))
    };
    // Two launchers starting at once (HPF_RANDOM_JOBS > 1, or another test)
    // can race for Open MPI's session directory: that is no failure of the program.
    let mut finished = launch();
    for _ in 0..3 {
        let stderr = String::from_utf8_lossy(&finished.stderr);
        if !finished.stdout.is_empty() || !(stderr.contains("orte_init failed") || stderr.contains("session_dir")) {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
        finished = launch();
    }
    finished
}

enum Outcome {
    Agreed,
    /// `hpf-ls build` refused the program cleanly (its errors).
    Refused(String),
}

fn describe(seed: u64, program: &str, what: &str) -> String {
    format!("seed {seed} (HPF_RANDOM_ONLY={seed}): {what}\n--- program ---\n{program}--- end ---")
}

/// Builds and runs the program of `seed` sequentially and on 1 to 5 processes.
fn check_seed(seed: u64, root: &Path) -> Result<Outcome, String> {
    let program = generate(seed);
    let dir = root.join(format!("s{seed}"));
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("rnd.f90");
    std::fs::write(&source, &program).unwrap();
    let result = check_program(seed, &program, &source, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn check_program(seed: u64, program: &str, source: &Path, dir: &Path) -> Result<Outcome, String> {
    let fail = |what: String| Err(describe(seed, program, &what));
    // The sequential program: the directives are comments.
    let mut gfortran = Command::new("gfortran");
    // Bounds checked: a generator slip reading outside an array must not pass for a backend bug.
    gfortran.args(["-fcheck=bounds", "-o"]).arg(dir.join("seq")).arg(source).current_dir(dir);
    let compiled = run_bounded(gfortran, dir, "gfortran");
    if !compiled.status.is_some_and(|it| it.success()) {
        return fail(format!(
            "the generator wrote a program gfortran rejects:\n{}",
            String::from_utf8_lossy(&compiled.stderr)
        ));
    }
    let sequential = run_bounded(Command::new(dir.join("seq")), dir, "seq");
    if !sequential.status.is_some_and(|it| it.success()) {
        return fail(format!("the sequential program failed:\n{}", String::from_utf8_lossy(&sequential.stderr)));
    }
    // The SPMD program.
    let executable = dir.join("spmd");
    let mut build = Command::new(env!("CARGO_BIN_EXE_hpf-ls"));
    build
        .arg("build")
        .arg(source)
        .arg("-o")
        .arg(&executable)
        .arg("--emit-source")
        .arg(dir.join("spmd.f90"))
        .current_dir(dir);
    let built = run_bounded(build, dir, "build");
    let build_log = String::from_utf8_lossy(&built.stderr).into_owned();
    if build_log.contains("(fix the errors first)") {
        return fail(format!("the analysis rejects the program (a generator or an analysis bug):\n{build_log}"));
    }
    if built.status.and_then(|it| it.code()) == Some(1)
        && build_log.contains(": error: ")
        && !build_log.lines().any(|it| it.starts_with("hpf-ls: "))
    {
        return Ok(Outcome::Refused(build_log));
    }
    if !built.status.is_some_and(|it| it.success()) {
        let spmd = std::fs::read_to_string(dir.join("spmd.f90")).unwrap_or_default();
        return fail(format!(
            "`hpf-ls build` failed ({:?}) without a clean refusal:\n{build_log}\n--- generated ---\n{spmd}",
            built.status
        ));
    }
    for processes in PROCESSES {
        let run = mpirun(&executable, processes, dir);
        if !run.status.is_some_and(|it| it.success()) || run.stdout != sequential.stdout {
            let status = match run.status {
                Some(status) => format!("{status}"),
                None => "killed after the timeout".to_string(),
            };
            return fail(format!(
                "on {processes} processes ({status}) it printed\n{}\ninstead of\n{}\nstderr:\n{}\nbuild notes:\n{build_log}",
                String::from_utf8_lossy(&run.stdout),
                String::from_utf8_lossy(&sequential.stdout),
                String::from_utf8_lossy(&run.stderr)
            ));
        }
    }
    Ok(Outcome::Agreed)
}

/// Checks `count` seeds from `first` on `jobs` threads; panics with every
/// failure, or when more than a quarter of the programs are refused.
fn check_seeds(name: &str, first: u64, count: u64, jobs: usize) {
    if !toolchain_present() {
        eprintln!("skipped: no gfortran/MPI toolchain (and CI is not set)");
        return;
    }
    let (first, count) = match std::env::var("HPF_RANDOM_ONLY").ok().and_then(|it| it.parse().ok()) {
        Some(seed) => {
            eprintln!("{}", generate(seed));
            (seed, 1)
        }
        None => (first, count),
    };
    let scratch = Scratch::new(name);
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let refusals = Mutex::new(Vec::new());
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1) {
            scope.spawn(|| loop {
                let idx = next.fetch_add(1, Ordering::SeqCst) as u64;
                if idx >= count {
                    break;
                }
                let seed = first + idx;
                match check_seed(seed, &scratch.0) {
                    Ok(Outcome::Agreed) => {}
                    Ok(Outcome::Refused(log)) => {
                        eprintln!("seed {seed}: refused:\n{log}");
                        refusals.lock().unwrap().push(seed);
                    }
                    Err(message) => {
                        eprintln!("FAILED {message}");
                        failures.lock().unwrap().push((seed, message));
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    let refusals = refusals.into_inner().unwrap();
    eprintln!(
        "{count} random programs from seed {first} in {:.1} s: {} failed, {} refused",
        started.elapsed().as_secs_f64(),
        failures.len(),
        refusals.len()
    );
    if !failures.is_empty() {
        let seeds: Vec<u64> = failures.iter().map(|it| it.0).collect();
        let all: Vec<String> = failures.into_iter().map(|it| it.1).collect();
        panic!("{} of {count} random programs failed (seeds {seeds:?}):\n\n{}", seeds.len(), all.join("\n\n"));
    }
    assert!(
        refusals.len() * 4 <= count as usize,
        "{} of {count} random programs were refused by `hpf-ls build` (seeds {refusals:?})",
        refusals.len()
    );
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|it| it.parse().ok()).unwrap_or(default)
}

#[test]
fn random_programs_print_what_the_sequential_program_prints() {
    check_seeds("quick", 1, 12, 1);
}

#[test]
#[ignore = "long: HPF_RANDOM_PROGRAMS programs (200 by default)"]
fn many_random_programs_print_what_the_sequential_program_prints() {
    let count = env_number("HPF_RANDOM_PROGRAMS", 200);
    let first = env_number("HPF_RANDOM_SEED", 1000);
    let jobs = env_number("HPF_RANDOM_JOBS", 1) as usize;
    check_seeds("long", first, count, jobs);
}

/// The generator is deterministic and writes what it claims to.
#[test]
fn the_generator_is_deterministic() {
    for seed in 0..50 {
        let program = generate(seed);
        assert_eq!(program, generate(seed));
        assert!(program.starts_with("program rnd\n") && program.ends_with("end program rnd\n"), "{program}");
        assert!(program.contains("!HPF$ PROCESSORS P(NUMBER_OF_PROCESSORS())"), "{program}");
    }
}
