//! Differential tests of the MPI backend on random programs: a seeded
//! generator writes HPF free-form programs inside what the backend lowers:
//! 1-D and 2-D INTEGER arrays, REAL and DOUBLE PRECISION arrays, LOGICAL
//! arrays and 3-D arrays, each with one BLOCK, BLOCK(m), CYCLIC or
//! CYCLIC(m) dimension (m from 1 to past the extent: some processes own
//! nothing), distributed directly or through templates and ALIGN chains at
//! random offsets (and strides, reversed ones too, on BLOCK templates),
//! some with SHADOW widths; DO loops with affine
//! subscripts, loop-carried dependences, INDEPENDENT loops, section
//! assignments, FORALL, WHERE, reductions (SUM, PRODUCT, MAXVAL, MINVAL,
//! COUNT, ANY, ALL, DOT_PRODUCT; floating-point sums over 1e16, 1, -1e16
//! whose value depends on the order of the additions), outer sequential
//! loops, IF constructs and output. Each program is compiled with gfortran
//! (the directives are comments) and run once, then built by `hpf-ls
//! build` and run under `mpirun` on 1 to 5 processes (5 is more than the
//! cores: oversubscribed); stdout must be byte-identical. A last test
//! checks that mappings the backend does not lower are refused with an
//! error naming the line, never turned into a program.
//!
//! A second generator (`random_programs/grid.rs`) writes programs on 2-D
//! grids of processes: BLOCK or BLOCK(m) along both dimensions, shifted and
//! diagonal stencils, FORALL, sections, rows, reductions. A third variant
//! (`generate_in_subroutine`) moves the body of the first generator's
//! programs into an external subroutine whose dummies INHERIT the arrays,
//! so the backend runs the call on every process.
//! A fourth (`random_programs/kinds.rs`) writes programs over INTEGER(8)
//! (values past 2**31), COMPLEX(8) and CHARACTER(len=L) arrays.
//!
//! Every test that runs programs is `#[ignore]`d (a plain `cargo test` lists
//! them as ignored). `cargo test -p hpf-ls --test random_programs -- --ignored
//! --skip many_` runs a few programs of each (as CI does); the `many_` tests
//! run `HPF_RANDOM_PROGRAMS` of them (200 by default), from seed
//! `HPF_RANDOM_SEED` on (1000 by default), on `HPF_RANDOM_JOBS` threads (1
//! by default), and `HPF_RANDOM_GRID_PROGRAMS` 2-D grid programs (100 by
//! default) from the same seed. `HPF_RANDOM_ONLY=SEED` runs that one seed
//! in every test and prints its program. Needs `gfortran`, `mpif90` and
//! `mpirun`, and fails without them.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[path = "random_programs/grid.rs"]
mod grid;
#[path = "random_programs/kinds.rs"]
mod kinds;

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
        assert!(lo <= hi, "an empty range {lo}..={hi}: a generator bug");
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
    /// The element type.
    ty: Ty,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ty {
    Integer,
    Real,
    Double,
    Logical,
}

impl Ty {
    fn decl(self) -> &'static str {
        match self {
            Ty::Integer => "integer",
            Ty::Real => "real",
            Ty::Double => "double precision",
            Ty::Logical => "logical",
        }
    }

    /// The floating-point literal `v` of this type (`2.5`, `2.5d0`).
    fn lit(self, v: f64) -> String {
        let text = if v == v.trunc() { format!("{v:.1}") } else { format!("{v}") };
        match self {
            Ty::Double => format!("{text}d0"),
            _ => text,
        }
    }

    /// The integer expression `e` converted to this type.
    fn conv(self, e: &str) -> String {
        match self {
            Ty::Double => format!("dble({e})"),
            _ => format!("real({e})"),
        }
    }
}

/// A rank-3 array with one distributed dimension `dist`, the others `*`.
#[derive(Clone)]
struct Cube {
    name: String,
    ty: Ty,
    dims: [(i64, i64); 3],
    dist: usize,
}

impl Cube {
    fn bounds(&self) -> String {
        self.dims.iter().map(|(lo, hi)| format!("{lo}:{hi}")).collect::<Vec<_>>().join(", ")
    }

    /// `name(s0, s1, s2)`.
    fn at(&self, subs: [&str; 3]) -> String {
        format!("{}({})", self.name, subs.join(", "))
    }
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

/// A distribution format for an axis of `extent` cells: BLOCK, BLOCK(m)
/// (m from 1, which the runtime widens to BLOCK when the blocks do not
/// cover the axis, to past the extent, which leaves processes empty), and
/// where `cyclic` also CYCLIC and CYCLIC(m) (m up to past the extent).
fn distribution(rng: &mut Rng, extent: i64, cyclic: bool) -> String {
    match rng.below(if cyclic { 10 } else { 6 }) {
        0..=3 => "BLOCK".to_string(),
        4 => format!("BLOCK({})", rng.range(1, extent / 2 + 2)),
        5 => format!("BLOCK({})", rng.range((extent / 2).max(1), extent + 3)),
        6 | 7 => "CYCLIC".to_string(),
        8 => format!("CYCLIC({})", rng.range(1, 4)),
        _ => format!("CYCLIC({})", rng.range(2, extent + 2)),
    }
}

/// `s*I+c`: `I+c`, `c-I`, `2*I-1`, `-2*I+3`.
fn affine(stride: i64, c: i64) -> String {
    match stride {
        1 => offset("I", c),
        -1 if c == 0 => "-I".to_string(),
        -1 => format!("{c}-I"),
        _ => offset(&format!("{stride}*I"), c),
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
    /// Whether CYCLIC and CYCLIC(m) are among the distributions.
    cyclic: bool,
    /// REAL and DOUBLE PRECISION rank-1 arrays (`x`, `y`).
    floats: Vec<Array>,
    /// LOGICAL rank-1 arrays (`la`, `lb`).
    logicals: Vec<Array>,
    /// Rank-3 arrays of one shape (`q`, `qq`).
    cubes: Vec<Cube>,
    /// The distributed rank-1 arrays, of any type (ALIGN targets, SHADOW).
    placed: Vec<Array>,
    /// Templates of the typed arrays written so far.
    xtemplates: usize,
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
            self.arrays.push(Array { name: name.to_string(), lo, hi, other: None, olo: 1, ty: Ty::Integer });
        }
        // Rank-2 arrays, the same distributed dimension in a program.
        if self.rng.chance(55) {
            let dim = self.rng.below(2);
            let m = self.rng.range(2, 4);
            let count = self.rng.range(1, 2);
            let olo = *self.rng.pick(&[1, 1, 1, 0, 2]);
            for name in ["g", "h"].iter().take(count as usize) {
                self.arrays.push(Array {
                    name: name.to_string(),
                    lo: 1,
                    hi: n,
                    other: Some((dim, m)),
                    olo,
                    ty: Ty::Integer,
                });
            }
        }
        self.extras();
        let mut text = String::new();
        let _ = writeln!(text, "program rnd");
        let _ = writeln!(text, "  implicit none");
        let _ = writeln!(text, "  integer, parameter :: n = {n}");
        for array in &self.arrays {
            let _ = writeln!(text, "  integer :: {}({})", array.name, array.bounds());
        }
        for array in self.floats.iter().chain(&self.logicals) {
            let _ = writeln!(text, "  {} :: {}({})", array.ty.decl(), array.name, array.bounds());
        }
        for cube in &self.cubes {
            let _ = writeln!(text, "  {} :: {}({})", cube.ty.decl(), cube.name, cube.bounds());
        }
        let _ = writeln!(text, "  integer :: i, j, k, it, s, t");
        if !self.floats.is_empty() {
            let _ = writeln!(text, "  double precision :: fs");
        }
        text.push_str(&self.directives());
        // The body.
        self.out.clear();
        self.indent = 1;
        self.line("s = 0");
        self.line("t = 1");
        for array in self.arrays.clone() {
            self.init(&array);
        }
        if !self.floats.is_empty() {
            self.line("fs = 0");
        }
        for array in self.floats.clone() {
            self.init_float(&array);
        }
        for array in self.logicals.clone() {
            self.init_logical(&array);
        }
        for cube in self.cubes.clone() {
            self.init_cube(&cube);
        }
        // Where every array holds its first values (`with_bump` calls after it).
        self.line(INITIALISED);
        self.budget = self.rng.range(5, 12);
        while self.budget > 0 {
            self.statement(0);
        }
        // Everything at the end.
        let names: Vec<String> = self
            .arrays
            .iter()
            .chain(&self.floats)
            .chain(&self.logicals)
            .map(|it| it.name.clone())
            .chain(self.cubes.iter().map(|it| it.name.clone()))
            .collect();
        for name in names {
            let label = self.label();
            self.line(&format!("print *, {label}, {name}"));
        }
        self.line("print *, 's t', s, t");
        if !self.floats.is_empty() {
            self.line("print *, 'fs', fs");
        }
        text.push_str(&self.out);
        let _ = writeln!(text, "end program rnd");
        text
    }

    fn directives(&mut self) -> String {
        let mut text = String::new();
        let _ = writeln!(text, "!HPF$ PROCESSORS P(NUMBER_OF_PROCESSORS())");
        let onto = |rng: &mut Rng| if rng.chance(70) { " ONTO P" } else { "" };
        let cyclic = self.cyclic;
        let dist = |rng: &mut Rng, n: i64| distribution(rng, n, cyclic);
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
            // An alignment stride too (reversed when negative), on BLOCK templates.
            let strided = !cyclic && self.rng.chance(60);
            let members: Vec<(Array, i64, i64)> = aligned
                .iter()
                .filter(|it| it.1 == template)
                .map(|it| {
                    let stride = if strided && self.rng.chance(70) { *self.rng.pick(&[-1, 2, -2, 3]) } else { 1 };
                    (it.0.clone(), stride, self.rng.range(-2, 2))
                })
                .collect();
            if members.is_empty() {
                continue;
            }
            let cells = |(a, stride, off): &(Array, i64, i64)| {
                let (x, y) = (stride * a.lo + off, stride * a.hi + off);
                (x.min(y), x.max(y))
            };
            let tlo = members.iter().map(|it| cells(it).0).min().unwrap() - self.rng.range(0, 2);
            let thi = members.iter().map(|it| cells(it).1).max().unwrap() + self.rng.range(0, 2);
            let format = dist(&mut self.rng, thi - tlo + 1);
            let onto = onto(&mut self.rng);
            // Sometimes a 2-D template whose second axis is not distributed:
            // the arrays sit at a constant or `*` there (ALIGN X(I) WITH T1(I+1, 2));
            // the backend takes such alignments at stride 1 only.
            let unit_strides = members.iter().all(|it| it.1 == 1);
            let embed = match self.rng.below(5) {
                _ if !unit_strides => String::new(),
                0 => format!(", {}", self.rng.range(1, 3)),
                1 => ", *".to_string(),
                _ => String::new(),
            };
            if embed.is_empty() {
                let _ = writeln!(text, "!HPF$ TEMPLATE T{template}({tlo}:{thi})");
                let _ = writeln!(text, "!HPF$ DISTRIBUTE T{template}({format}){onto}");
            } else {
                let _ = writeln!(text, "!HPF$ TEMPLATE T{template}({tlo}:{thi}, 3)");
                let _ = writeln!(text, "!HPF$ DISTRIBUTE T{template}({format}, *){onto}");
            }
            let same = members.iter().all(|it| (it.1, it.2) == (members[0].1, members[0].2));
            if same && members.len() > 1 && self.rng.chance(50) {
                let names: Vec<&str> = members.iter().map(|it| it.0.name.as_str()).collect();
                let _ = writeln!(
                    text,
                    "!HPF$ ALIGN (I) WITH T{template}({}{embed}) :: {}",
                    affine(members[0].1, members[0].2),
                    names.join(", ")
                );
            } else {
                for (array, stride, off) in &members {
                    let _ = writeln!(
                        text,
                        "!HPF$ ALIGN {}(I) WITH T{template}({}{embed})",
                        array.name,
                        affine(*stride, *off)
                    );
                }
            }
            for (array, _, _) in members {
                placed.push(array);
            }
        }
        self.placed = if uniform { ones.clone() } else { placed };
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
                let format = dist(&mut self.rng, thi - tlo + 1);
                if self.rng.chance(40) {
                    // A 1-D template, the other dimension collapsed:
                    // ALIGN A(I, *) WITH TG(I+off).
                    let _ = writeln!(text, "!HPF$ TEMPLATE TG({tlo}:{thi})");
                    let _ = writeln!(text, "!HPF$ DISTRIBUTE TG({format}){}", onto(&mut self.rng));
                    let (dummies, sub) = if dim == 0 { ("I, *", offset("I", off)) } else { ("*, J", offset("J", off)) };
                    for array in &twos {
                        let _ = writeln!(text, "!HPF$ ALIGN {}({dummies}) WITH TG({sub})", array.name);
                    }
                } else {
                    let dims = if dim == 0 { format!("{tlo}:{thi}, {other}") } else { format!("{other}, {tlo}:{thi}") };
                    let _ = writeln!(text, "!HPF$ TEMPLATE TG({dims})");
                    let _ = writeln!(text, "!HPF$ DISTRIBUTE TG({}){}", spec(&format), onto(&mut self.rng));
                    let subs = if dim == 0 {
                        format!("{}, {}", offset("I", off), offset("J", toff))
                    } else {
                        format!("{}, {}", offset("I", toff), offset("J", off))
                    };
                    for array in &twos {
                        let _ = writeln!(text, "!HPF$ ALIGN {}(I, J) WITH TG({subs})", array.name);
                    }
                }
            } else {
                for array in &twos {
                    let format = dist(&mut self.rng, self.n);
                    let _ = writeln!(text, "!HPF$ DISTRIBUTE {}({}){}", array.name, spec(&format), onto(&mut self.rng));
                }
            }
        }
        self.extra_directives(&mut text);
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
        if self.rng.chance(self.extra_share()) {
            self.budget -= 1;
            return self.extra_statement(depth);
        }
        self.budget -= 1;
        let has_two = !self.twos().is_empty();
        let kind = self.rng.below(if depth < 2 { 15 } else { 12 });
        match kind {
            0 | 1 if self.rng.chance(35) => self.strided_loop(),
            0 | 1 => self.affine_loop(false),
            2 => self.affine_loop(true),
            3 => self.section(),
            4 => self.forall(),
            5 => self.reduction(),
            6 => self.element(),
            7 => self.print(),
            8 if has_two => self.loop2(),
            9 if has_two => self.section2(),
            8 | 9 if self.rng.chance(50) => self.strided_loop(),
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
        if self.rng.chance(12) {
            // Leaving the iteration or the loop early, on the index or on an
            // element the loop reads (or writes: then not owner-computes).
            let cond = if self.rng.chance(30) {
                format!("mod(i, {}) == {}", self.rng.range(2, 5), self.rng.range(0, 1))
            } else {
                let (array, c) = self.rng.pick(&refs).clone();
                format!("{}({}) > {}", array.name, offset("i", c), self.rng.range(0, 30))
            };
            let leave = if self.rng.chance(50) { "exit" } else { "cycle" };
            self.line(&format!("  if ({cond}) {leave}"));
        }
        let temporary = !self.busy.contains(&"t") && self.rng.chance(15);
        let guarded = self.rng.chance(15);
        let value = if temporary {
            // A private temporary, assigned before it is read in every
            // iteration (and printed at the end: its last value).
            self.line(&format!("  t = {rhs}"));
            "t".to_string()
        } else {
            rhs
        };
        if guarded {
            // An IF on the index or on the home's own element.
            let cond = if self.rng.chance(50) {
                format!("mod(i, {}) == {}", self.rng.range(2, 3), self.rng.range(0, 1))
            } else {
                format!("{target} > {}", self.rng.range(-5, 20))
            };
            self.line(&format!("  if ({cond}) then"));
            self.line(&format!("    {target} = {value}"));
            if self.rng.chance(60) {
                self.line("  else");
                self.line(&format!("    {target} = {target} + 1"));
            }
            self.line("  end if");
        } else {
            self.line(&format!("  {target} = {value}"));
        }
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

    /// The range of `v` for which every `(array, k, c)` reads `array(k*v+c)`
    /// in bounds (`k` not 0).
    fn strided_range(refs: &[(Array, i64, i64)]) -> Option<(i64, i64)> {
        let floor = |x: i64, k: i64| x.div_euclid(k) - i64::from(k < 0 && x.rem_euclid(k) != 0);
        let ceil = |x: i64, k: i64| -floor(-x, k);
        let mut range = (i64::MIN, i64::MAX);
        for (array, k, c) in refs {
            let (lo, hi) = if *k > 0 {
                (ceil(array.lo - c, *k), floor(array.hi - c, *k))
            } else {
                (ceil(array.hi - c, *k), floor(array.lo - c, *k))
            };
            range = (range.0.max(lo), range.1.min(hi));
        }
        (range.0 <= range.1).then_some(range)
    }

    /// A DO loop whose home is `X(a*I+q)` with `a` of 2, 3, -1 or -2 (the
    /// owners of its elements run it) reading other arrays at `Y(b*I+c)`;
    /// or one of two assignments to different arrays, which the backend
    /// splits into two loops when they sit on different template cells.
    fn strided_loop(&mut self) {
        if self.rng.chance(25) {
            return self.scatter_loop();
        }
        let ones = self.ones();
        if ones.len() < 3 {
            return self.affine_loop(false);
        }
        let lhs = self.rng.pick(&ones).clone();
        let others: Vec<Array> = ones.iter().filter(|it| it.name != lhs.name).cloned().collect();
        let split = self.rng.chance(40);
        let second = split.then(|| self.rng.pick(&others).clone());
        let readable: Vec<Array> =
            others.iter().filter(|it| second.as_ref().is_none_or(|s| s.name != it.name)).cloned().collect();
        let a = if split { 1 } else { *self.rng.pick(&[2, 3, -1, -2]) };
        let q = self.rng.range(lhs.lo, lhs.hi) - a * self.rng.range(0, 2);
        let mut refs: Vec<(Array, i64, i64)> = vec![(lhs.clone(), a, q)];
        let q2 = self.rng.range(-1, 1);
        if let Some(second) = &second {
            refs.push((second.clone(), 1, q2));
        }
        let mut reads: Vec<(Array, i64, i64)> = Vec::new();
        for _ in 0..self.rng.range(1, 3) {
            let array = self.rng.pick(&readable).clone();
            let k = *self.rng.pick(&[1, 1, 2, -1]);
            let c = self.rng.range(array.lo, array.hi) - k * self.rng.range(0, 2);
            reads.push((array, k, c));
        }
        refs.extend(reads.iter().cloned());
        let Some((lo, hi)) = Self::strided_range(&refs) else { return self.affine_loop(false) };
        let at = |(array, k, c): &(Array, i64, i64)| match k {
            1 => format!("{}({})", array.name, offset("i", *c)),
            -1 => format!("{}({c}-i)", array.name),
            k => format!("{}({})", array.name, offset(&format!("{k}*i"), *c)),
        };
        let mut terms: Vec<String> = reads.iter().map(at).collect();
        if self.rng.chance(40) {
            let term = self.scalar_term(&["i"]);
            terms.push(term);
        }
        if self.rng.chance(40) {
            self.line("!HPF$ INDEPENDENT");
        }
        let (blo, bhi) = (self.bound(lo), self.bound(hi));
        match *self.rng.pick(&[1, 1, -1, 2, -3]) {
            1 => self.line(&format!("do i = {blo}, {bhi}")),
            step if step > 0 => self.line(&format!("do i = {blo}, {bhi}, {step}")),
            step => self.line(&format!("do i = {bhi}, {blo}, {step}")),
        }
        let split_at = if second.is_some() { self.rng.range(1, terms.len() as i64) as usize } else { terms.len() };
        let rest = terms.split_off(split_at.min(terms.len()));
        let rhs = self.combine(terms);
        self.line(&format!("  {} = {rhs}", at(&refs[0])));
        if let Some(second) = second {
            let rhs = if rest.is_empty() { self.scalar_term(&["i"]) } else { self.combine(rest) };
            self.line(&format!("  {} = {rhs}", at(&(second, 1, q2))));
        }
        self.line("end do");
    }

    /// A DO loop that updates an INTEGER array through an index computed
    /// from another array's element, `X(modulo(Y(I+c) + k*I, ext) + lo) =
    /// X(...) op v` (a histogram), with `op` a sum, a difference, MAX, MIN,
    /// IEOR, the non-commuting `v - X(...)`, or an overwrite `= v`, now and
    /// then under a logical IF; the backend sends each update to the
    /// element's owner.
    fn scatter_loop(&mut self) {
        let ones: Vec<Array> = self.ones().into_iter().filter(|it| it.ty == Ty::Integer).collect();
        if ones.len() < 2 {
            return self.affine_loop(false);
        }
        let target = self.rng.pick(&ones).clone();
        let others: Vec<Array> = ones.iter().filter(|it| it.name != target.name).cloned().collect();
        let source = self.rng.pick(&others).clone();
        let c = self.rng.range(-1, 1);
        let mut refs = vec![(source.clone(), c)];
        let mut terms: Vec<String> = Vec::new();
        if self.rng.chance(60) {
            let array = self.rng.pick(&others).clone();
            let d = self.rng.range(-1, 1);
            terms.push(format!("{}({})", array.name, offset("i", d)));
            refs.push((array, d));
        }
        if terms.is_empty() || self.rng.chance(40) {
            let term = self.scalar_term(&["i"]);
            terms.push(term);
        }
        let Some((lo, hi)) = self.index_range(&refs) else { return };
        let extent = target.hi - target.lo + 1;
        let k = self.rng.range(0, 3);
        let index =
            format!("modulo({}({}) + {k}*i, {extent}) + {}", source.name, offset("i", c), self.bound(target.lo));
        let element = format!("{}({index})", target.name);
        let value = self.combine(terms);
        let rhs = match self.rng.below(7) {
            0 | 1 => format!("{element} + {value}"),
            2 => format!("{element} - {value}"),
            3 => format!("max({element}, {value})"),
            4 => format!("ieor({value}, {element})"),
            5 => value,
            _ => format!("{value} - {element}"),
        };
        let guard =
            self.rng.chance(25).then(|| format!("if (mod(i, {}) /= {}) ", self.rng.range(2, 4), self.rng.range(0, 1)));
        let (blo, bhi) = (self.bound(lo), self.bound(hi));
        match *self.rng.pick(&[1, 1, -1, 2]) {
            1 => self.line(&format!("do i = {blo}, {bhi}")),
            -1 => self.line(&format!("do i = {bhi}, {blo}, -1")),
            step => self.line(&format!("do i = {blo}, {bhi}, {step}")),
        }
        self.line(&format!("  {}{element} = {rhs}", guard.unwrap_or_default()));
        self.line("end do");
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

/// The typed and rank-3 arrays: REAL and DOUBLE PRECISION data whose
/// sequential results are exactly reproducible (small integers, halves,
/// sums in loop order; reductions over 1e16, 1, -1e16 where the order of
/// the additions shows), LOGICAL data with COUNT/ANY/ALL and WHERE, and
/// rank-3 arrays with one distributed dimension.
impl Gen {
    fn extras(&mut self) {
        let n = self.n;
        self.cyclic = self.rng.chance(60);
        self.floats.clear();
        self.logicals.clear();
        self.cubes.clear();
        self.placed.clear();
        self.xtemplates = 0;
        let one = |rng: &mut Rng, name: &str, ty: Ty| {
            let (lo, hi) = if rng.chance(50) { (1, n) } else { (*rng.pick(&[1, 0, 2]), n + *rng.pick(&[0, 1, -1])) };
            Array { name: name.to_string(), lo, hi, other: None, olo: 1, ty }
        };
        if self.rng.chance(50) {
            for name in ["x", "y"].iter().take(self.rng.range(1, 2) as usize) {
                let ty = if self.rng.chance(50) { Ty::Real } else { Ty::Double };
                let array = one(&mut self.rng, name, ty);
                self.floats.push(array);
            }
        }
        if self.rng.chance(35) {
            for name in ["la", "lb"].iter().take(self.rng.range(1, 2) as usize) {
                let array = one(&mut self.rng, name, Ty::Logical);
                self.logicals.push(array);
            }
        }
        if self.rng.chance(30) {
            let dist = self.rng.below(3);
            let ty = *self.rng.pick(&[Ty::Integer, Ty::Real, Ty::Double]);
            let mut dims = [(1, 1); 3];
            for (d, dim) in dims.iter_mut().enumerate() {
                *dim = if d == dist {
                    (*self.rng.pick(&[1, 1, 0, 2]), n + *self.rng.pick(&[0, 0, 1, -1]))
                } else {
                    let lo = *self.rng.pick(&[1, 1, 0, 2]);
                    (lo, lo + self.rng.range(1, 2))
                };
            }
            for name in ["q", "qq"].iter().take(self.rng.range(1, 2) as usize) {
                self.cubes.push(Cube { name: name.to_string(), ty, dims, dist });
            }
        }
    }

    /// The share (percent) of statements on the typed and rank-3 arrays.
    fn extra_share(&self) -> usize {
        let kinds = usize::from(!self.floats.is_empty())
            + usize::from(!self.logicals.is_empty())
            + usize::from(!self.cubes.is_empty());
        // WHERE on the INTEGER arrays is always there.
        10 + 15 * kinds
    }

    /// Places a rank-1 array: replicated, distributed, aligned with a
    /// distributed array, or on a template of its own at an offset.
    fn place1(&mut self, text: &mut String, array: &Array) {
        let onto = if self.rng.chance(60) { " ONTO P" } else { "" };
        let choice = self.rng.below(10);
        if choice == 0 {
            return;
        }
        if choice <= 3 {
            let format = distribution(&mut self.rng, array.hi - array.lo + 1, self.cyclic);
            let _ = writeln!(text, "!HPF$ DISTRIBUTE {}({format}){onto}", array.name);
            self.placed.push(array.clone());
            return;
        }
        if choice <= 6 && !self.placed.is_empty() {
            let base = self.rng.pick(&self.placed).clone();
            let off = self.rng.range(-2, 2);
            if array.lo + off >= base.lo && array.hi + off <= base.hi {
                let _ = writeln!(text, "!HPF$ ALIGN {}(I) WITH {}({})", array.name, base.name, offset("I", off));
                self.placed.push(array.clone());
                return;
            }
        }
        self.xtemplates += 1;
        let template = format!("TX{}", self.xtemplates);
        let off = self.rng.range(-3, 3);
        let tlo = array.lo + off - self.rng.range(0, 2);
        let thi = array.hi + off + self.rng.range(0, 2);
        let format = distribution(&mut self.rng, thi - tlo + 1, self.cyclic);
        let _ = writeln!(text, "!HPF$ TEMPLATE {template}({tlo}:{thi})");
        let _ = writeln!(text, "!HPF$ DISTRIBUTE {template}({format}){onto}");
        let _ = writeln!(text, "!HPF$ ALIGN {}(I) WITH {template}({})", array.name, offset("I", off));
        self.placed.push(array.clone());
    }

    fn extra_directives(&mut self, text: &mut String) {
        for array in self.floats.clone().iter().chain(&self.logicals.clone()) {
            self.place1(text, array);
        }
        // SHADOW widths on some distributed rank-1 arrays.
        if !self.placed.is_empty() && self.rng.chance(40) {
            for _ in 0..self.rng.range(1, 2) {
                let array = self.rng.pick(&self.placed).clone();
                if text.contains(&format!("SHADOW {}(", array.name)) {
                    continue;
                }
                let (low, high) = (self.rng.range(0, 2), self.rng.range(0, 2));
                let widths = if low == high && self.rng.chance(50) { low.to_string() } else { format!("{low}:{high}") };
                let _ = writeln!(text, "!HPF$ SHADOW {}({widths})", array.name);
            }
        }
        let cubes = self.cubes.clone();
        let Some(first) = cubes.first() else { return };
        let dist = first.dist;
        let onto = if self.rng.chance(60) { " ONTO P" } else { "" };
        let (lo, hi) = first.dims[dist];
        if self.rng.chance(50) {
            let off = self.rng.range(-2, 2);
            let (tlo, thi) = (lo + off - self.rng.range(0, 1), hi + off + self.rng.range(0, 1));
            // Offsets along the collapsed dimensions too.
            let offs: Vec<i64> = (0..3)
                .map(|d| {
                    if d == dist {
                        off
                    } else if self.rng.chance(30) {
                        self.rng.range(-1, 1)
                    } else {
                        0
                    }
                })
                .collect();
            let dims: Vec<String> = (0..3)
                .map(|d| {
                    if d == dist {
                        format!("{tlo}:{thi}")
                    } else {
                        format!("{}:{}", first.dims[d].0 + offs[d], first.dims[d].1 + offs[d])
                    }
                })
                .collect();
            let format = distribution(&mut self.rng, thi - tlo + 1, self.cyclic);
            let spec: Vec<&str> = (0..3).map(|d| if d == dist { format.as_str() } else { "*" }).collect();
            let subs: Vec<String> = ["I", "J", "K"].iter().enumerate().map(|(d, v)| offset(v, offs[d])).collect();
            let _ = writeln!(text, "!HPF$ TEMPLATE TQ({})", dims.join(", "));
            let _ = writeln!(text, "!HPF$ DISTRIBUTE TQ({}){onto}", spec.join(", "));
            for cube in &cubes {
                let _ = writeln!(text, "!HPF$ ALIGN {}(I, J, K) WITH TQ({})", cube.name, subs.join(", "));
            }
        } else {
            for cube in &cubes {
                let format = distribution(&mut self.rng, hi - lo + 1, self.cyclic);
                let spec: Vec<&str> = (0..3).map(|d| if d == dist { format.as_str() } else { "*" }).collect();
                let _ = writeln!(text, "!HPF$ DISTRIBUTE {}({}){onto}", cube.name, spec.join(", "));
            }
        }
        if self.rng.chance(40) {
            let widths: Vec<String> =
                (0..3).map(|d| if d == dist { self.rng.range(1, 2).to_string() } else { "0".to_string() }).collect();
            let _ = writeln!(text, "!HPF$ SHADOW {}({})", cubes[0].name, widths.join(", "));
        }
    }

    fn init_float(&mut self, array: &Array) {
        let ty = array.ty;
        let (p, q, r) = (self.rng.range(2, 9), self.rng.range(0, 9), *self.rng.pick(&[7, 11, 13, 17]));
        let shift = self.rng.range(0, r / 2);
        let (blo, bhi) = (self.bound(array.lo), self.bound(array.hi));
        let value = format!("{}*{}", ty.conv(&format!("mod(i*{p} + {q}, {r}) - {shift}")), ty.lit(0.5));
        match self.rng.below(5) {
            0 => {
                self.line(&format!("do i = {blo}, {bhi}"));
                self.line(&format!("  {}(i) = {value}", array.name));
                self.line("end do");
            }
            1 => self.line(&format!("forall (i = {blo}:{bhi}) {}(i) = {value}", array.name)),
            _ => {
                // Values whose sum depends on the order of the additions.
                let big = if ty == Ty::Double { "1.0d16" } else { "1.0e8" };
                let fill = ty.lit(*self.rng.pick(&[1.0, 1.0, 0.5, 3.0]));
                self.line(&format!("{} = {fill}", array.name));
                let mut used = Vec::new();
                for sign in ["", "-", ""].iter().take(self.rng.range(2, 3) as usize) {
                    let e = self.rng.range(array.lo, array.hi);
                    if !used.contains(&e) {
                        used.push(e);
                        self.line(&format!("{}({e}) = {sign}{big}", array.name));
                    }
                }
            }
        }
    }

    fn init_logical(&mut self, array: &Array) {
        let (p, q, r) = (self.rng.range(2, 9), self.rng.range(0, 9), *self.rng.pick(&[5, 7, 11]));
        let (blo, bhi) = (self.bound(array.lo), self.bound(array.hi));
        if self.rng.chance(60) {
            self.line(&format!("do i = {blo}, {bhi}"));
            self.line(&format!("  {}(i) = mod(i*{p} + {q}, {r}) < {}", array.name, r / 2 + 1));
            self.line("end do");
        } else {
            let step = self.rng.range(2, 3);
            self.line(&format!("{} = .false.", array.name));
            self.line(&format!("{}({blo}:{bhi}:{step}) = .true.", array.name));
        }
    }

    fn init_cube(&mut self, cube: &Cube) {
        let (p, q, r) = (self.rng.range(1, 9), self.rng.range(1, 9), self.rng.range(1, 9));
        let m = *self.rng.pick(&[7, 11, 13, 17]);
        let shift = self.rng.range(0, m / 2);
        let value = format!("mod(i*{p} + j*{q} + k*{r}, {m}) - {shift}");
        let value = if cube.ty == Ty::Integer { value } else { cube.ty.conv(&value) };
        self.nest(cube, &format!("{} = {value}", cube.at(["i", "j", "k"])));
    }

    /// A nest over all elements of `cube` (in one of two loop orders) around `body`.
    fn nest(&mut self, cube: &Cube, body: &str) {
        let order: [usize; 3] = if self.rng.chance(50) {
            [2, 1, 0]
        } else {
            let others: Vec<usize> = (0..3).filter(|&d| d != cube.dist).collect();
            [cube.dist, others[0], others[1]]
        };
        let vars = ["i", "j", "k"];
        for (depth, &d) in order.iter().enumerate() {
            let (lo, hi) = cube.dims[d];
            self.line(&format!("{}do {} = {lo}, {hi}", "  ".repeat(depth), vars[d]));
        }
        self.line(&format!("      {body}"));
        for depth in (0..3).rev() {
            self.line(&format!("{}end do", "  ".repeat(depth)));
        }
    }

    /// `terms` combined into a value of type `ty` that stays small:
    /// `mod(...)` for INTEGER, sums with halves for the floating types.
    fn value(&mut self, ty: Ty, terms: Vec<String>) -> String {
        if ty == Ty::Integer {
            return self.combine(terms);
        }
        let mut expr = String::new();
        for (idx, term) in terms.into_iter().enumerate() {
            if idx > 0 {
                expr.push_str(if self.rng.chance(70) { " + " } else { " - " });
            }
            expr.push_str(&term);
        }
        match self.rng.below(4) {
            0 => format!("({expr})*{}", ty.lit(0.5)),
            1 => format!("{expr} - {}", ty.lit(1.5)),
            2 => format!("{}*({expr}) + {}", ty.lit(0.25), ty.lit(1.0)),
            _ => expr,
        }
    }

    fn extra_statement(&mut self, depth: usize) {
        let mut kinds = vec![0];
        if !self.floats.is_empty() {
            kinds.extend([1, 1, 2, 3, 3]);
        }
        if !self.logicals.is_empty() {
            kinds.extend([4, 5, 6]);
        }
        if !self.cubes.is_empty() {
            kinds.extend([7, 7, 8, 9]);
        }
        if depth < 2 && !self.floats.is_empty() {
            kinds.push(10);
        }
        kinds.push(11);
        match *self.rng.pick(&kinds) {
            0 => self.where_integer(),
            1 => self.float_loop(),
            2 => self.float_section(),
            3 => self.float_reduction(),
            4 => self.logical_assignment(),
            5 => self.where_logical(),
            6 => self.logical_reduction(),
            7 => self.cube_assignment(),
            8 => self.cube_reduction(),
            9 => self.cube_print(),
            10 => self.float_if(depth),
            _ => self.shift_assignment(),
        }
    }

    /// `X = CSHIFT(Y, s)` or `X = EOSHIFT(Y, s[, boundary])` of two rank-1
    /// arrays of the same extent and type, the shift a literal or an
    /// expression of the scalars; for integers also inside an expression
    /// (`X = X + 2 * CSHIFT(Y, s)`, `s = s + SUM(CSHIFT(Y, s) * Y)`).
    fn shift_assignment(&mut self) {
        let ones = self.ones();
        let x = self.rng.pick(&ones).clone();
        let sources: Vec<Array> = ones
            .iter()
            .filter(|it| it.name != x.name && it.hi - it.lo == x.hi - x.lo && it.ty == x.ty)
            .cloned()
            .collect();
        if sources.is_empty() {
            return;
        }
        let y = self.rng.pick(&sources).clone();
        let shift = match self.rng.below(3) {
            0 => self.rng.range(-3, 3).to_string(),
            1 => "mod(s, 5) - 2".to_string(),
            _ => format!("{} - t", self.rng.range(0, 3)),
        };
        let call = match self.rng.below(4) {
            0 | 1 => format!("cshift({}, {shift})", y.name),
            2 => format!("eoshift({}, {shift})", y.name),
            _ => format!("eoshift({}, shift = {shift}, boundary = {})", y.name, self.rng.range(-5, 5)),
        };
        // Whole, or inside an expression (through a temporary, `hoist.rs`).
        let statement = match (self.rng.below(4), x.ty) {
            (1, Ty::Integer) => format!("{} = {} + 2 * {call}", x.name, x.name),
            (2, Ty::Integer) => format!("{} = {call} - {}", x.name, y.name),
            (3, Ty::Integer) if !self.busy.contains(&"s") => {
                format!("s = mod(s + sum({call} * {}), 1009)", y.name)
            }
            _ => format!("{} = {call}", x.name),
        };
        self.line(&statement);
    }

    /// Two sections of `len` elements, or None.
    fn two_sections(&mut self, x: &Array, y: &Array, len: i64) -> Option<(String, String)> {
        let a = self.section_of(x, len, 1)?;
        let b = self.section_of(y, len, 1)?;
        Some((a, b))
    }

    fn section_len(&mut self, arrays: &[&Array]) -> i64 {
        let max = arrays.iter().map(|it| it.hi - it.lo + 1).min().unwrap();
        if self.rng.chance(30) {
            max
        } else {
            self.rng.range(1, max)
        }
    }

    /// WHERE on INTEGER arrays (and the floating ones), masked by INTEGER data.
    fn where_integer(&mut self) {
        let ones = self.ones();
        let mask = self.rng.pick(&ones).clone();
        let mut targets = ones.clone();
        targets.extend(self.floats.iter().cloned());
        let target = self.rng.pick(&targets).clone();
        let len = self.section_len(&[&mask, &target]);
        let Some((m, x)) = self.two_sections(&mask, &target, len) else { return };
        let op = *self.rng.pick(&[">", "<", "/=", ">="]);
        let cond = format!("{m} {op} {}", self.rng.range(-1, 5));
        let value = |g: &mut Gen, extra: String| {
            let terms = vec![x.clone(), extra];
            g.value(target.ty, terms)
        };
        if self.rng.chance(50) {
            let rhs = value(self, m.clone());
            self.line(&format!("where ({cond}) {x} = {rhs}"));
        } else {
            let rhs = value(self, m.clone());
            self.line(&format!("where ({cond})"));
            self.line(&format!("  {x} = {rhs}"));
            self.line("elsewhere");
            let c = self.rng.range(1, 4).to_string();
            let rhs = value(self, c);
            self.line(&format!("  {x} = {rhs}"));
            self.line("end where");
        }
    }

    /// `X(i+q) = f(Y(i+c), A(i+c'))` on floating arrays; sometimes carried.
    fn float_loop(&mut self) {
        let floats = self.floats.clone();
        let ones = self.ones();
        let lhs = self.rng.pick(&floats).clone();
        let carried = self.rng.chance(35);
        let backward = carried && self.rng.chance(35);
        let q = if self.rng.chance(60) { 0 } else { self.rng.range(-1, 1) };
        let mut refs: Vec<(Array, i64)> = vec![(lhs.clone(), q)];
        if carried {
            refs.push((lhs.clone(), if backward { q + 1 } else { q - 1 }));
        }
        for _ in 0..self.rng.range(if carried { 0 } else { 1 }, 2) {
            let array = if self.rng.chance(60) { self.rng.pick(&floats).clone() } else { self.rng.pick(&ones).clone() };
            refs.push((array, self.rng.range(-2, 2)));
        }
        let Some((lo, hi)) = self.index_range(&refs) else { return };
        let (blo, bhi) = (self.bound(lo), self.moving_bound(lo, hi));
        let mut terms: Vec<String> =
            refs[1..].iter().map(|(a, c)| format!("{}({})", a.name, offset("i", *c))).collect();
        if terms.is_empty() || self.rng.chance(30) {
            terms.push(self.rng.pick(&["i", "s", "fs"]).to_string());
        }
        let reads_lhs_elsewhere = refs[1..].iter().any(|(a, c)| a.name == lhs.name && *c != q);
        let rhs = self.value(lhs.ty, terms);
        if !reads_lhs_elsewhere && self.rng.chance(40) {
            self.line("!HPF$ INDEPENDENT");
        }
        if backward {
            self.line(&format!("do i = {bhi}, {blo}, -1"));
        } else {
            self.line(&format!("do i = {blo}, {bhi}"));
        }
        self.line(&format!("  {}({}) = {rhs}", lhs.name, offset("i", q)));
        self.line("end do");
    }

    fn float_section(&mut self) {
        let floats = self.floats.clone();
        let lhs = self.rng.pick(&floats).clone();
        let mut sources: Vec<Array> = floats.clone();
        sources.extend(self.ones());
        let other = self.rng.pick(&sources).clone();
        let len = self.section_len(&[&lhs, &other]);
        let Some((target, source)) = self.two_sections(&lhs, &other, len) else { return };
        let rhs = if self.rng.chance(50) {
            self.value(lhs.ty, vec![source, target.clone()])
        } else {
            let c = self.rng.range(1, 3);
            self.value(lhs.ty, vec![source, c.to_string()])
        };
        if self.rng.chance(50) {
            self.line(&format!("{target} = {rhs}"));
        } else {
            let (lo, hi) = (lhs.lo.max(other.lo), lhs.hi.min(other.hi));
            let rhs = self.value(lhs.ty, vec![format!("{}(i)", other.name), "i".to_string()]);
            self.line(&format!("forall (i = {lo}:{hi}) {}(i) = {rhs}", lhs.name));
        }
    }

    /// A floating-point reduction (or COUNT of a floating condition).
    fn float_reduction_expr(&mut self) -> String {
        let floats = self.floats.clone();
        let x = self.rng.pick(&floats).clone();
        // Backwards or strided sections too: the order of the additions changes.
        let stride = *self.rng.pick(&[1, 1, 1, -1, 2, -2]);
        let max_len = (x.hi - x.lo) / i64::abs(stride) + 1;
        let len = if self.rng.chance(30) { max_len } else { self.rng.range(1, max_len) };
        let part = self.section_of(&x, len, stride).unwrap();
        match self.rng.below(9) {
            0 | 1 => format!("sum({part})"),
            2 => format!("product({part})"),
            3 => format!("maxval({part})"),
            4 => format!("minval({part})"),
            5 => format!("count({part} > {})", x.ty.lit(0.5)),
            6 | 7 => {
                let mut others = floats.clone();
                others.extend(self.ones());
                let y = self.rng.pick(&others).clone();
                let stride = *self.rng.pick(&[1, stride]);
                match self.section_of(&y, len, stride) {
                    Some(other) if self.rng.chance(60) => format!("dot_product({part}, {other})"),
                    Some(other) => format!("sum({part}*{} + {other})", x.ty.lit(0.5)),
                    None => format!("sum({part})"),
                }
            }
            _ => format!("sum({part}*{} - {})", x.ty.lit(2.0), x.ty.lit(1.0)),
        }
    }

    fn float_reduction(&mut self) {
        let expr = self.float_reduction_expr();
        match self.rng.below(3) {
            0 if !self.busy.contains(&"fs") => self.line(&format!("fs = {expr}")),
            1 => {
                let second = self.float_reduction_expr();
                let label = self.label();
                self.line(&format!("print *, {label}, {expr}, {second}"));
            }
            _ => {
                let label = self.label();
                self.line(&format!("print *, {label}, {expr}"));
            }
        }
    }

    fn float_if(&mut self, depth: usize) {
        let expr = self.float_reduction_expr();
        let limit = self.rng.range(-4, 30);
        self.line(&format!("if ({expr} > {limit}) then"));
        self.indent += 1;
        self.statement(depth + 1);
        self.indent -= 1;
        if self.rng.chance(40) {
            self.line("else");
            self.indent += 1;
            self.statement(depth + 1);
            self.indent -= 1;
        }
        self.line("end if");
    }

    /// A logical condition on an element `e` of rank-1 data (`e` an index expression).
    fn logical_term(&mut self, array: &Array, index: &str) -> String {
        match array.ty {
            Ty::Logical => {
                if self.rng.chance(50) {
                    format!(".not. {}({index})", array.name)
                } else {
                    format!("{}({index})", array.name)
                }
            }
            Ty::Integer => format!("{}({index}) > {}", array.name, self.rng.range(-1, 5)),
            ty => format!("{}({index}) > {}", array.name, ty.lit(0.5)),
        }
    }

    fn logical_assignment(&mut self) {
        let logicals = self.logicals.clone();
        let lhs = self.rng.pick(&logicals).clone();
        let mut sources = logicals.clone();
        sources.extend(self.ones());
        sources.extend(self.floats.iter().cloned());
        let y = self.rng.pick(&sources).clone();
        if self.rng.chance(60) {
            let q = if self.rng.chance(60) { 0 } else { self.rng.range(-1, 1) };
            let c = self.rng.range(-2, 2);
            let Some((lo, hi)) = self.index_range(&[(lhs.clone(), q), (y.clone(), c)]) else { return };
            let (blo, bhi) = (self.bound(lo), self.moving_bound(lo, hi));
            let mut cond = self.logical_term(&y, &offset("i", c));
            if self.rng.chance(40) {
                let op = *self.rng.pick(&[".and.", ".or.", ".neqv."]);
                cond = format!("({cond}) {op} {}({})", lhs.name, offset("i", q));
            }
            self.line(&format!("do i = {blo}, {bhi}"));
            self.line(&format!("  {}({}) = {cond}", lhs.name, offset("i", q)));
            self.line("end do");
        } else {
            let len = self.section_len(&[&lhs, &y]);
            let Some((target, source)) = self.two_sections(&lhs, &y, len) else { return };
            let cond = match y.ty {
                Ty::Logical => format!(".not. {source}"),
                Ty::Integer => format!("{source} < {}", self.rng.range(0, 5)),
                ty => format!("{source} <= {}", ty.lit(1.0)),
            };
            self.line(&format!("{target} = {cond}"));
        }
    }

    /// WHERE masked by a LOGICAL array.
    fn where_logical(&mut self) {
        let logicals = self.logicals.clone();
        let mask = self.rng.pick(&logicals).clone();
        let mut targets = self.ones();
        targets.extend(self.floats.iter().cloned());
        let target = self.rng.pick(&targets).clone();
        let len = self.section_len(&[&mask, &target]);
        let Some((m, x)) = self.two_sections(&mask, &target, len) else { return };
        let m = if self.rng.chance(30) { format!(".not. {m}") } else { m };
        let c = self.rng.range(1, 5).to_string();
        let rhs = self.value(target.ty, vec![x.clone(), c]);
        if self.rng.chance(50) {
            self.line(&format!("where ({m}) {x} = {rhs}"));
        } else {
            self.line(&format!("where ({m})"));
            self.line(&format!("  {x} = {rhs}"));
            self.line("elsewhere");
            let c = self.rng.range(1, 5).to_string();
            let rhs = self.value(target.ty, vec![x.clone(), c]);
            self.line(&format!("  {x} = {rhs}"));
            self.line("end where");
        }
    }

    fn logical_reduction(&mut self) {
        let logicals = self.logicals.clone();
        let x = self.rng.pick(&logicals).clone();
        let len = self.section_len(&[&x]);
        let part = self.section_of(&x, len, 1).unwrap();
        let expr = match self.rng.below(5) {
            0 => format!("any({part})"),
            1 => format!("all({part})"),
            2 => {
                let y = self.rng.pick(&logicals).clone();
                match self.section_of(&y, len, 1) {
                    Some(other) => format!("count({part} .and. .not. {other})"),
                    None => format!("count({part})"),
                }
            }
            _ => format!("count({part})"),
        };
        if expr.starts_with("count") && !self.busy.contains(&"s") && self.rng.chance(40) {
            self.line(&format!("s = {expr}"));
        } else if self.rng.chance(25) {
            self.line(&format!("if ({expr}) s = mod(s + 1, 1009)").replace("if (count", "if (0 < count"));
        } else {
            let label = self.label();
            self.line(&format!("print *, {label}, {expr}"));
        }
    }

    /// A cube subscript along dimension `d`: `:`, one index, or a range.
    fn cube_sub(&mut self, cube: &Cube, d: usize) -> String {
        let (lo, hi) = cube.dims[d];
        match self.rng.below(3) {
            0 => ":".to_string(),
            1 => self.rng.range(lo, hi).to_string(),
            _ => {
                let l = self.rng.range(lo, hi);
                format!("{l}:{}", self.rng.range(l, hi))
            }
        }
    }

    fn cube_assignment(&mut self) {
        let cubes = self.cubes.clone();
        let g = self.rng.pick(&cubes).clone();
        let h = self.rng.pick(&cubes).clone();
        let ty = g.ty;
        match self.rng.below(3) {
            0 if !self.busy.contains(&"k") => {
                // A nest reading H at a distance along the distributed dimension and rank-1 data.
                let c = self.rng.range(-1, 1);
                let dist = g.dist;
                let (lo, hi) = g.dims[dist];
                let (lo, hi) = (lo.max(lo - c), hi.min(hi - c));
                let vars = ["i", "j", "k"];
                let subs: Vec<String> =
                    (0..3).map(|d| if d == dist { offset(vars[d], c) } else { vars[d].to_string() }).collect();
                let mut terms = vec![format!("{}({})", h.name, subs.join(", "))];
                let ones = self.ones();
                let a = self.rng.pick(&ones).clone();
                let (lo, hi) = if self.rng.chance(50) {
                    terms.push(format!("{}({})", a.name, vars[dist]));
                    (lo.max(a.lo), hi.min(a.hi))
                } else {
                    terms.push(vars[self.rng.below(3)].to_string());
                    (lo, hi)
                };
                if lo > hi {
                    return;
                }
                let rhs = self.value(ty, terms);
                let mut cube = g.clone();
                cube.dims[dist] = (lo, hi);
                let target = g.at(["i", "j", "k"]);
                self.nest(&cube, &format!("{target} = {rhs}"));
            }
            1 => {
                let rhs = self.value(ty, vec![h.name.clone(), g.name.clone()]);
                self.line(&format!("{} = {rhs}", g.name));
            }
            _ => {
                let subs: Vec<String> = (0..3).map(|d| self.cube_sub(&g, d)).collect();
                let target = g.at([&subs[0], &subs[1], &subs[2]]);
                let c = self.rng.range(1, 4).to_string();
                let rhs = if self.rng.chance(50) {
                    self.value(ty, vec![target.clone(), c])
                } else {
                    self.value(ty, vec![h.at([&subs[0], &subs[1], &subs[2]]), c])
                };
                self.line(&format!("{target} = {rhs}"));
            }
        }
    }

    fn cube_reduction(&mut self) {
        let cubes = self.cubes.clone();
        let g = self.rng.pick(&cubes).clone();
        let part = if self.rng.chance(40) {
            g.name.clone()
        } else {
            let mut subs: Vec<String> = (0..3).map(|d| self.cube_sub(&g, d)).collect();
            if !subs.iter().any(|it| it.contains(':')) {
                // An array, not an element.
                subs[self.rng.below(3)] = ":".to_string();
            }
            g.at([&subs[0], &subs[1], &subs[2]])
        };
        let limit = if g.ty == Ty::Integer { self.rng.range(0, 5).to_string() } else { g.ty.lit(0.5) };
        let expr = match self.rng.below(5) {
            0 => format!("maxval({part})"),
            1 => format!("minval({part})"),
            2 => format!("count({part} > {limit})"),
            _ => format!("sum({part})"),
        };
        let label = self.label();
        self.line(&format!("print *, {label}, {expr}"));
    }

    fn cube_print(&mut self) {
        let cubes = self.cubes.clone();
        let g = self.rng.pick(&cubes).clone();
        let label = self.label();
        if self.rng.chance(30) {
            self.line(&format!("print *, {label}, {}", g.name));
        } else {
            let subs: Vec<String> = (0..3).map(|d| self.cube_sub(&g, d)).collect();
            self.line(&format!("print *, {label}, {}", g.at([&subs[0], &subs[1], &subs[2]])));
        }
    }
}

/// The program of `seed`.
fn generate(seed: u64) -> String {
    let mut rng = Rng::new(seed);
    // Now and then tiny arrays: blocks of one or two elements, processes without any.
    let n = if rng.chance(15) { rng.range(3, 7) } else { rng.range(8, 24) };
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
        cyclic: false,
        floats: Vec::new(),
        logicals: Vec::new(),
        cubes: Vec::new(),
        placed: Vec::new(),
        xtemplates: 0,
    };
    generator.program()
}

// ---------------------------------------------------------------------------
// Running them.

/// These tests run only when asked (`--ignored`), so a missing toolchain
/// fails them: a skipped run must never be counted as a passed one.
fn require_toolchain() {
    let found = |program: &str| Command::new(program).arg("--version").output().is_ok_and(|it| it.status.success());
    assert!(
        found("gfortran") && found("mpif90") && found("mpirun"),
        "this test needs gfortran, mpif90 and mpirun: apt-get install -y gfortran libopenmpi-dev openmpi-bin"
    );
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
    /// Printed what gfortran's program prints on every process count;
    /// with the number of "runs on one process" notes of its build.
    Agreed(usize),
    /// `hpf-ls build` refused the program cleanly (its errors).
    Refused(String),
}

fn describe(seed: u64, program: &str, what: &str) -> String {
    format!("seed {seed} (HPF_RANDOM_ONLY={seed}): {what}\n--- program ---\n{program}--- end ---")
}

/// Builds and runs the program `generate` writes for `seed` sequentially and on 1 to 5 processes.
fn check_seed(seed: u64, root: &Path, generate: fn(u64) -> String) -> Result<Outcome, String> {
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
        .args(["build", "--ordered-reductions"])
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
    Ok(Outcome::Agreed(build_log.matches("runs on one process").count()))
}

/// Checks `count` seeds from `first` on `jobs` threads; panics with every
/// failure, or when more than a quarter of the programs are refused.
fn check_seeds(name: &str, first: u64, count: u64, jobs: usize) {
    check_seeds_of(name, first, count, jobs, generate);
}

/// As `check_seeds`, on the programs `generate` writes.
fn check_seeds_of(name: &str, first: u64, count: u64, jobs: usize, generate: fn(u64) -> String) {
    require_toolchain();
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
    let on_rank_zero = AtomicUsize::new(0);
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1) {
            scope.spawn(|| loop {
                let idx = next.fetch_add(1, Ordering::SeqCst) as u64;
                if idx >= count {
                    break;
                }
                let seed = first + idx;
                match check_seed(seed, &scratch.0, generate) {
                    Ok(Outcome::Agreed(notes)) => {
                        on_rank_zero.fetch_add(notes, Ordering::SeqCst);
                    }
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
    let on_rank_zero = on_rank_zero.into_inner();
    eprintln!(
        "{count} random programs from seed {first} in {:.1} s: {} failed, {} refused, {on_rank_zero} statements on rank 0",
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
    check_rank_zero_ratchet(name, first, count, on_rank_zero);
}

/// The "runs on one process" notes of the few-seed runs that CI makes, by
/// test name: a ratchet. More notes than recorded fail the test (something
/// that ran in parallel went back to rank 0); fewer ask for the figure to be
/// lowered, so that the number can only fall.
const RANK_ZERO_RATCHET: &str = include_str!("random_programs/rank0_ratchet.txt");

fn check_rank_zero_ratchet(name: &str, first: u64, count: u64, on_rank_zero: usize) {
    // Only the fixed runs CI makes have a recorded figure.
    let fixed_run = name == "quick" || name.ends_with("-quick");
    if std::env::var("HPF_RANDOM_ONLY").is_ok() || !fixed_run {
        return;
    }
    let recorded = RANK_ZERO_RATCHET.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        (words.next() == Some(name)).then(|| words.next()?.parse::<usize>().ok()).flatten()
    });
    let Some(recorded) = recorded else {
        panic!("random_programs/rank0_ratchet.txt has no line for {name}: add `{name} {on_rank_zero}`");
    };
    assert!(
        on_rank_zero <= recorded,
        "{name} (seeds {first}..{}): {on_rank_zero} statements ran on rank 0, more than the {recorded} recorded in random_programs/rank0_ratchet.txt",
        first + count - 1
    );
    if on_rank_zero < recorded {
        eprintln!("{name}: {on_rank_zero} statements on rank 0, fewer than the {recorded} recorded: lower the figure in random_programs/rank0_ratchet.txt");
    }
}

/// The long run of a random-program test: `HPF_RANDOM_PROGRAMS` programs
/// (200) from seed `HPF_RANDOM_SEED` (1000) on `HPF_RANDOM_JOBS` threads (1).
fn check_many(name: &str, generate: fn(u64) -> String) {
    let count = env_number("HPF_RANDOM_PROGRAMS", 200);
    let first = env_number("HPF_RANDOM_SEED", 1000);
    let jobs = env_number("HPF_RANDOM_JOBS", 1) as usize;
    check_seeds_of(name, first, count, jobs, generate);
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|it| it.parse().ok()).unwrap_or(default)
}

#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test random_programs -- --ignored --skip many_"]
fn random_programs_print_what_the_sequential_program_prints() {
    check_seeds("quick", 1, 12, 1);
}

#[test]
#[ignore = "longest, needs MPI: --ignored many_; HPF_RANDOM_PROGRAMS programs (200 by default)"]
fn many_random_programs_print_what_the_sequential_program_prints() {
    let count = env_number("HPF_RANDOM_PROGRAMS", 200);
    let first = env_number("HPF_RANDOM_SEED", 1000);
    let jobs = env_number("HPF_RANDOM_JOBS", 1) as usize;
    check_seeds("long", first, count, jobs);
}

#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test random_programs -- --ignored --skip many_"]
fn random_grid_programs_print_what_the_sequential_program_prints() {
    check_seeds_of("grid-quick", 1, 4, 1, grid::generate_grid);
}

#[test]
#[ignore = "longest, needs MPI: --ignored many_; HPF_RANDOM_GRID_PROGRAMS 2-D grid programs (100 by default)"]
fn many_random_grid_programs_print_what_the_sequential_program_prints() {
    let count = env_number("HPF_RANDOM_GRID_PROGRAMS", 100);
    let first = env_number("HPF_RANDOM_SEED", 1000);
    let jobs = env_number("HPF_RANDOM_JOBS", 1) as usize;
    check_seeds_of("grid-long", first, count, jobs, grid::generate_grid);
}

#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test random_programs -- --ignored --skip many_"]
fn random_programs_of_other_kinds_print_what_the_sequential_program_prints() {
    check_seeds_of("kinds-quick", 1, 4, 1, kinds::generate_kinds);
}

#[test]
#[ignore = "longest, needs MPI: --ignored many_; HPF_RANDOM_PROGRAMS programs (200 by default) over INTEGER(8), COMPLEX(8), CHARACTER"]
fn many_random_programs_of_other_kinds_print_what_the_sequential_program_prints() {
    check_many("kinds-long", kinds::generate_kinds);
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
    // Strided and reversed alignments come up.
    let aligned = |pattern: &str| (1000..1200).filter(|seed| generate(*seed).contains(pattern)).count();
    let (strided, reversed) = (aligned("*I"), aligned("-I)"));
    eprintln!("{strided} strided and {reversed} reversed alignments in seeds 1000..1200");
    assert!(strided >= 15 && reversed >= 5, "{strided} strided, {reversed} reversed");
    // Loops whose home is strided or reversed (`a(2*i-3) = ...`, `b(7-i) = ...`) come up.
    let strided_homes = (1000..1200)
        .filter(|seed| {
            generate(*seed).lines().any(|line| {
                let lhs = line.trim_start().split(" = ").next().unwrap_or("");
                lhs.contains("*i") || lhs.ends_with("-i)")
            })
        })
        .count();
    eprintln!("{strided_homes} programs with strided homes in seeds 1000..1200");
    assert!(strided_homes >= 20, "{strided_homes} programs with strided homes in seeds 1000..1200");
    // Updates through computed indices (`x(modulo(y(i) + 2*i, 12) + 1) = ...`) come up.
    let scatters = (1000..1200).filter(|seed| generate(*seed).contains("(modulo(")).count();
    eprintln!("{scatters} programs with updates through computed indices in seeds 1000..1200");
    assert!(scatters >= 15, "{scatters} programs with updates through computed indices in seeds 1000..1200");
}

/// A program with one mapping the backend does not lower (a COMPLEX(10)
/// array, a REAL(10) one (x87 extended precision: no MPI datatype), an alignment of stride 2 on a CYCLIC
/// template, a block size of no constant value, a rank-8 array), and the
/// line of the directive (or declaration) it must name.
fn generate_refused(seed: u64) -> (String, usize) {
    let mut rng = Rng::new(seed ^ 0x5EED);
    let n = rng.range(6, 20);
    let mut lines: Vec<String> = vec!["program bad".into(), "  implicit none".into()];
    for _ in 0..rng.range(0, 3) {
        lines.push(format!("  ! filler {}", rng.range(0, 99)));
    }
    lines.push(format!("  integer, parameter :: n = {n}"));
    lines.push("  integer :: i".into());
    let name = *rng.pick(&["a", "w", "big"]);
    let kind = rng.below(5);
    let (decl, directives, bad): (String, Vec<String>, usize) = match kind {
        0 => (format!("  complex(10) :: {name}(n)"), vec![format!("!HPF$ DISTRIBUTE {name}(BLOCK) ONTO P")], 0),
        1 => {
            // x87 extended precision has no MPI datatype.
            let kind = *rng.pick(&["real(10)", "real(kind=10)"]);
            (format!("  {kind} :: {name}(n)"), vec![format!("!HPF$ DISTRIBUTE {name}(BLOCK) ONTO P")], 0)
        }
        2 => (
            format!("  integer :: {name}(n)"),
            vec![
                "!HPF$ TEMPLATE T(2*n+2)".into(),
                format!("!HPF$ DISTRIBUTE T({}) ONTO P", rng.pick(&["CYCLIC", "CYCLIC(2)"])),
                format!("!HPF$ ALIGN {name}(I) WITH T({})", rng.pick(&["2*I", "2*n+1-2*I"])),
            ],
            3,
        ),
        3 => (
            // A block size of no constant value.
            format!("  integer :: {name}(n), nb"),
            vec![format!("!HPF$ DISTRIBUTE {name}({}(NB)) ONTO P", rng.pick(&["BLOCK", "CYCLIC"]))],
            1,
        ),
        _ => (
            format!("  integer :: {name}(n, 2, 2, 2, 2, 2, 2, 2)"),
            vec![format!("!HPF$ DISTRIBUTE {name}(BLOCK, *, *, *, *, *, *, *)")],
            1,
        ),
    };
    lines.push(decl);
    // The declaration for a bad type, else the bad directive.
    let decl_line = lines.len();
    lines.push("!HPF$ PROCESSORS P(NUMBER_OF_PROCESSORS())".into());
    lines.extend(directives);
    let line = if bad == 0 { decl_line } else { decl_line + 1 + bad };
    let value = if kind == 0 { "cmplx(i, 1)".to_string() } else { "i".to_string() };
    lines.push(format!("  {name} = 0"));
    if kind == 0 || kind == 2 {
        lines.push("  do i = 1, n".into());
        lines.push(format!("    {name}(i) = {value}"));
        lines.push("  end do".into());
    }
    lines.push(format!("  print *, sum({name})"));
    lines.push("end program bad".into());
    (lines.join("\n") + "\n", line)
}

/// What the backend cannot lower it refuses: exit status 1, an error on
/// stderr naming the file and line, and no executable (never a wrong program).
#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test random_programs -- --ignored --skip many_"]
fn unsupported_mappings_are_refused_naming_the_line() {
    require_toolchain();
    let scratch = Scratch::new("refused");
    for seed in 0..10 {
        let (program, line) = generate_refused(seed);
        let source = scratch.0.join(format!("bad{seed}.f90"));
        std::fs::write(&source, &program).unwrap();
        let executable = scratch.0.join(format!("bad{seed}"));
        let mut build = Command::new(env!("CARGO_BIN_EXE_hpf-ls"));
        build.arg("build").arg(&source).arg("-o").arg(&executable).current_dir(&scratch.0);
        let built = run_bounded(build, &scratch.0, &format!("build{seed}"));
        let stderr = String::from_utf8_lossy(&built.stderr);
        let context = format!("seed {seed}:\n{program}--- stderr ---\n{stderr}");
        assert_eq!(built.status.and_then(|it| it.code()), Some(1), "{context}");
        assert!(stderr.contains(&format!("bad{seed}.f90:{line}:")) && stderr.contains(": error: "), "{context}");
        assert!(stderr.contains("MPI backend"), "{context}");
        assert!(!executable.exists(), "{context}");
    }
}

/// The program `generate` writes for `seed`, its body moved into an
/// external subroutine that receives every array (INHERIT) and the scalars
/// it sets: the backend runs the call on every process, the copy of the
/// subroutine lowered as the main program was.
fn generate_in_subroutine(seed: u64) -> String {
    let program = generate(seed);
    let lines: Vec<&str> = program.lines().collect();
    let Parts { scalars, floats, body } = Parts::of(&lines);
    let decls = &lines[3..scalars];
    let directives = &lines[scalars + 1 + usize::from(floats)..body];
    let arrays: Vec<&str> = decls
        .iter()
        .map(|it| it.split("::").nth(1).and_then(|it| it.split('(').next()).expect("an array").trim())
        .collect();
    let mut args = arrays.clone();
    args.extend(["s", "t"]);
    if floats {
        args.push("fs");
    }
    // The program: the arrays, their mappings and the scalars, then the call.
    let mut text = String::new();
    for line in &lines[..scalars] {
        let _ = writeln!(text, "{line}");
    }
    let _ = writeln!(text, "  integer :: s, t");
    if floats {
        let _ = writeln!(text, "  double precision :: fs");
    }
    for line in directives {
        let _ = writeln!(text, "{line}");
    }
    let _ = writeln!(text, "  call work({})", args.join(", "));
    let _ = writeln!(text, "end program rnd\n");
    let _ = writeln!(text, "subroutine work({})", args.join(", "));
    let _ = writeln!(text, "{}\n{}", lines[1], lines[2]);
    for line in decls {
        let _ = writeln!(text, "{line}");
    }
    let _ = writeln!(text, "  integer :: i, j, k, it, s, t");
    if floats {
        let _ = writeln!(text, "  double precision :: fs");
    }
    let _ = writeln!(text, "!HPF$ INHERIT {}", arrays.join(", "));
    for line in &lines[body..lines.len() - 1] {
        let _ = writeln!(text, "{line}");
    }
    let _ = writeln!(text, "end subroutine work");
    text
}

/// The lines that begin a top-level statement of the body (after line
/// `body`, before the END): two-space indent, not a continuation, and not a
/// line that continues a construct (END..., ELSE, ELSEWHERE, CASE).
fn top_level_starts(lines: &[&str], body: usize) -> Vec<usize> {
    (body + 1..lines.len() - 1)
        .filter(|&idx| {
            let line = lines[idx];
            let word = line.trim_start().split([' ', '(']).next().unwrap_or("").to_ascii_lowercase();
            line.starts_with("  ")
                && !line.starts_with("   ")
                && !lines[idx - 1].trim_end().ends_with('&')
                && !word.starts_with("end")
                && !["else", "elseif", "elsewhere", "case"].contains(&word.as_str())
        })
        .collect()
}

/// A random program whose directly distributed rank-1 arrays and
/// templates are DYNAMIC and REDISTRIBUTEd (with a new random format)
/// between top-level statements of its body, or now and then inside a
/// construct, one to three times.
fn generate_remapped(seed: u64) -> String {
    let program = generate(seed);
    let mut rng = Rng::new(seed ^ 0x5eed_4e4d);
    let lines: Vec<&str> = program.lines().collect();
    let body = lines.iter().position(|it| it.trim() == "s = 0").expect("the body");
    // `!HPF$ DISTRIBUTE X(format)[ ONTO P]` with one format: (name, onto).
    let distributed: Vec<(String, &str)> = lines[..body]
        .iter()
        .filter_map(|line| {
            let rest = line.strip_prefix("!HPF$ DISTRIBUTE ")?;
            let (name, spec) = rest.split_once('(')?;
            let (formats, after) = spec.rsplit_once(')')?;
            let single = !formats.contains(',') && formats != "*";
            single.then(|| (name.to_string(), if after.contains("ONTO") { " ONTO P" } else { "" }))
        })
        .collect();
    if distributed.is_empty() {
        return program;
    }
    let starts = top_level_starts(&lines, body);
    let cyclic = program.contains("CYCLIC");
    let mut remaps: Vec<(usize, String)> = Vec::new();
    for _ in 0..rng.range(1, 3) {
        // Now and then inside a construct (any line of the body): the
        // backend does not follow such a remap, the arrays keep their mapping.
        let at = if rng.chance(25) {
            rng.range(body as i64 + 1, lines.len() as i64 - 2) as usize
        } else {
            *rng.pick(&starts)
        };
        let (name, onto) = rng.pick(&distributed).clone();
        let format = distribution(&mut rng, 24, cyclic);
        remaps.push((at, format!("!HPF$ REDISTRIBUTE {name}({format}){onto}")));
    }
    let mut text = String::new();
    for (idx, line) in lines.iter().enumerate() {
        if idx == body {
            let names: Vec<&str> = distributed.iter().map(|it| it.0.as_str()).collect();
            let _ = writeln!(text, "!HPF$ DYNAMIC {}", names.join(", "));
        }
        for (_, remap) in remaps.iter().filter(|it| it.0 == idx) {
            let _ = writeln!(text, "{remap}");
        }
        let _ = writeln!(text, "{line}");
    }
    text
}

/// A random program whose arrays and mappings live in a module, with a
/// module subroutine that updates the first rank-1 INTEGER array (by host
/// association: every process calls a copy on its local part) called
/// between two top-level statements of the body, and a function of that
/// array used after the call and printed at the end.
fn generate_in_module(seed: u64) -> String {
    with_bump(seed, true)
}

/// A random program with an internal subroutine that updates the first
/// rank-1 INTEGER array and the scalar `t` by host association, called
/// between two top-level statements of the body.
fn generate_internal(seed: u64) -> String {
    with_bump(seed, false)
}

/// Where the parts of a program `generate` writes start: its line of
/// scalars (the array declarations are the lines from 3 to it), whether a
/// floating-point scalar follows it, and the body's first line (the
/// directives end there).
struct Parts {
    scalars: usize,
    floats: bool,
    body: usize,
}

impl Parts {
    fn of(lines: &[&str]) -> Parts {
        let scalars = lines.iter().position(|it| it.trim() == "integer :: i, j, k, it, s, t").expect("the scalars");
        let floats = lines[scalars + 1].trim() == "double precision :: fs";
        let body = lines.iter().position(|it| it.trim() == "s = 0").expect("the body");
        Parts { scalars, floats, body }
    }
}

/// The comment after the statements that give every array its first values.
const INITIALISED: &str = "! every array initialised";

/// `bump(by)`, in a module that holds the arrays or internal to the program.
fn with_bump(seed: u64, in_module: bool) -> String {
    let program = generate(seed);
    let mut rng = Rng::new(seed ^ 0x000d_01e5);
    let lines: Vec<&str> = program.lines().collect();
    let Parts { scalars, floats, body } = Parts::of(&lines);
    let decls = &lines[3..scalars];
    let directives = &lines[scalars + 1 + usize::from(floats)..body];
    // The first `integer :: x(lo:hi)`.
    let bumped = decls.iter().find_map(|it| {
        let rest = it.trim().strip_prefix("integer :: ")?;
        let (name, dims) = rest.split_once('(')?;
        (!dims.contains(',')).then(|| name.to_string())
    });
    let mut bump = String::new();
    if let Some(name) = &bumped {
        let _ = writeln!(bump, "contains\n  subroutine bump(by)\n    integer, intent(in) :: by\n    integer :: i");
        let _ = writeln!(
            bump,
            "    do i = lbound({name}, 1), ubound({name}, 1)\n      {name}(i) = mod({name}(i) + by * i, 97)"
        );
        if !in_module {
            let _ = writeln!(bump, "      t = mod(t + {name}(i), 89)");
        }
        let _ = writeln!(bump, "    end do\n  end subroutine bump");
        // A function of the array, by host or use association too.
        let _ = writeln!(
            bump,
            "  integer function weight(k)\n    integer, intent(in) :: k\n    weight = mod(sum({name}) + k, 1009)\n  end function weight"
        );
    }
    let mut text = String::new();
    if in_module {
        let _ = writeln!(text, "module rnd_data\n  implicit none\n{}", lines[2]);
        for line in decls.iter().chain(directives) {
            let _ = writeln!(text, "{line}");
        }
        text.push_str(&bump);
        let _ = writeln!(text, "end module rnd_data\n\nprogram rnd\n  use rnd_data\n  implicit none");
        for line in &lines[scalars..=scalars + usize::from(floats)] {
            let _ = writeln!(text, "{line}");
        }
    } else {
        for line in &lines[..body] {
            let _ = writeln!(text, "{line}");
        }
    }
    // After the arrays have values (it reads one), and before the
    // directives (INDEPENDENT) of the statement it precedes.
    let initialised = lines.iter().position(|it| it.trim() == INITIALISED).expect("the initialisation");
    let starts: Vec<usize> = top_level_starts(&lines, body).into_iter().filter(|it| *it > initialised).collect();
    let call_at = bumped.as_ref().map(|_| {
        let mut at = *rng.pick(&starts);
        while lines[at - 1].trim_start().to_ascii_uppercase().starts_with("!HPF$") {
            at -= 1;
        }
        at
    });
    for (idx, line) in lines.iter().enumerate().skip(body) {
        if Some(idx) == call_at {
            let _ = writeln!(text, "  call bump({})", rng.range(1, 5));
            let _ = writeln!(text, "  s = mod(s + weight({}), 1009)", rng.range(0, 9));
        }
        if bumped.is_some() && idx == lines.len() - 1 {
            let _ = writeln!(text, "  print *, 'weight', weight(1)");
        }
        if !in_module && idx == lines.len() - 1 {
            text.push_str(&bump);
        }
        let _ = writeln!(text, "{line}");
    }
    text
}

#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test random_programs -- --ignored --skip many_"]
fn random_programs_with_internal_procedures_print_what_the_sequential_program_prints() {
    check_seeds_of("internal-quick", 1, 4, 1, generate_internal);
}

#[test]
#[ignore = "longest, needs MPI: --ignored many_; HPF_RANDOM_PROGRAMS programs (200 by default) with an internal procedure"]
fn many_random_programs_with_internal_procedures_print_what_the_sequential_program_prints() {
    check_many("internal-many", generate_internal);
}

#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test random_programs -- --ignored --skip many_"]
fn random_programs_with_module_arrays_print_what_the_sequential_program_prints() {
    check_seeds_of("module-quick", 1, 6, 1, generate_in_module);
}

#[test]
#[ignore = "longest, needs MPI: --ignored many_; HPF_RANDOM_PROGRAMS programs (200 by default), their arrays in a module"]
fn many_random_programs_with_module_arrays_print_what_the_sequential_program_prints() {
    check_many("module-many", generate_in_module);
}

#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test random_programs -- --ignored --skip many_"]
fn random_remapped_programs_print_what_the_sequential_program_prints() {
    check_seeds_of("remap-quick", 1, 6, 1, generate_remapped);
}

#[test]
#[ignore = "longest, needs MPI: --ignored many_; HPF_RANDOM_PROGRAMS programs (200 by default) with REDISTRIBUTE between their statements"]
fn many_random_remapped_programs_print_what_the_sequential_program_prints() {
    check_many("remap-many", generate_remapped);
}

#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test random_programs -- --ignored --skip many_"]
fn random_programs_in_subroutines_print_what_the_sequential_program_prints() {
    check_seeds_of("subroutine-quick", 1, 8, 1, generate_in_subroutine);
}

#[test]
#[ignore = "longest, needs MPI: --ignored many_; HPF_RANDOM_PROGRAMS programs (200 by default), their bodies in a subroutine"]
fn many_random_programs_in_subroutines_print_what_the_sequential_program_prints() {
    check_many("subroutine-many", generate_in_subroutine);
}

/// A generated program the MPI compiler rejects is a bug of hpf-ls (issue
/// 28 item 9): programs of every generator, from seeds the differential
/// tests above do not run, compile with `-Wall` (`-fsyntax-only`: every
/// check of the front end; the corpus is compiled so in `generated_compiles.rs`).
#[test]
#[ignore = "needs mpif90: cargo test -p hpf-ls --test random_programs -- --ignored --skip many_"]
fn random_programs_of_every_generator_compile_with_wall() {
    require_toolchain();
    let scratch = Scratch::new("compile-wall");
    type Generator = fn(u64) -> String;
    let generators: [(&str, Generator); 6] = [
        ("plain", generate),
        ("grid", grid::generate_grid),
        ("subroutine", generate_in_subroutine),
        ("remapped", generate_remapped),
        ("module", generate_in_module),
        ("internal", generate_internal),
    ];
    let mut failures = Vec::new();
    for (name, generate) in generators {
        for seed in 500..505 {
            let program = generate(seed);
            let source = scratch.0.join(format!("{name}_{seed}.f90"));
            std::fs::write(&source, &program).unwrap();
            let output = Command::new(env!("CARGO_BIN_EXE_hpf-ls"))
                .args(["build", "--fflags", "-Wall -fsyntax-only", "-o", "/dev/null"])
                .arg(&source)
                .output()
                .unwrap();
            if !output.status.success() {
                failures.push(describe(
                    seed,
                    &program,
                    &format!("{name}: {}", String::from_utf8_lossy(&output.stderr)),
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A program of the subroutine variant whose main program calls `work` from
/// a time loop (an uncounted DO ended by EXIT or by STOP, a DO WHILE, or a
/// counted DO), its step counter in a COMMON block that `work` also
/// declares, and `work` now and then returning early at one step: time
/// loops, calls, EXIT, STOP, RETURN and COMMON, as real codes have them.
fn generate_time_loop(seed: u64) -> String {
    let program = generate_in_subroutine(seed);
    let mut rng = Rng::new(seed ^ 0x7130_100b);
    let steps = rng.range(2, 3);
    let form = rng.range(0, 3);
    let early_return = rng.chance(40).then(|| rng.range(1, steps));
    let mut text = String::new();
    let mut in_work = false;
    let mut returned = false;
    for line in program.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("subroutine work(") {
            in_work = true;
        }
        if let (Some(call), false) = (trimmed.strip_prefix("call work("), in_work) {
            let call = format!("call work({call}");
            let _ = match form {
                0 => writeln!(
                    text,
                    "  nstep = 0\n  do\n    nstep = nstep + 1\n    if (nstep > {steps}) exit\n    {call}\n  end do"
                ),
                1 => writeln!(
                    text,
                    "  nstep = 0\n  do\n    nstep = nstep + 1\n    {call}\n    if (nstep == {steps}) stop\n  end do"
                ),
                2 => writeln!(
                    text,
                    "  nstep = 0\n  do while (nstep < {steps})\n    nstep = nstep + 1\n    {call}\n  end do"
                ),
                _ => writeln!(text, "  do nstep = 1, {steps}\n    {call}\n  end do"),
            };
            continue;
        }
        if in_work && !returned && trimmed == "s = 0" {
            if let Some(step) = early_return {
                let _ = writeln!(text, "  if (nstep == {step}) return");
            }
            returned = true;
        }
        let _ = writeln!(text, "{line}");
        if trimmed == "integer :: s, t" || trimmed == "integer :: i, j, k, it, s, t" {
            let _ = writeln!(text, "  integer :: nstep\n  common /clock/ nstep");
        }
    }
    text
}

#[test]
fn time_loop_programs_have_a_time_loop_and_common() {
    for seed in 1..40 {
        let program = generate_time_loop(seed);
        assert_eq!(program.matches("common /clock/ nstep").count(), 2, "seed {seed}:\n{program}");
        assert!(program.contains("nstep = nstep + 1") || program.contains("do nstep = 1,"), "seed {seed}:\n{program}");
        assert_eq!(program.matches("call work(").count(), 1, "seed {seed}:\n{program}");
    }
}

#[test]
#[ignore = "long, needs MPI: cargo test -p hpf-ls --test random_programs -- --ignored --skip many_"]
fn random_programs_with_time_loops_print_what_the_sequential_program_prints() {
    check_seeds_of("time-loop-quick", 1, 8, 1, generate_time_loop);
}

#[test]
#[ignore = "longest, needs MPI: --ignored many_; HPF_RANDOM_PROGRAMS programs (200 by default) calling their body from a time loop"]
fn many_random_programs_with_time_loops_print_what_the_sequential_program_prints() {
    check_many("time-loop-many", generate_time_loop);
}
