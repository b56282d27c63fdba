//! Random programs on 2-D grids of processes (the port of
//! `tests/grid_fuzz.py`): two INTEGER arrays distributed BLOCK or BLOCK(m)
//! along both dimensions through a template onto a 2-D arrangement, at
//! random alignment offsets; DO nests in both orders with negative or
//! larger steps reading shifted (also diagonal) neighbours, FORALLs,
//! shifted section assignments, row updates with a scalar subscript along
//! a distributed dimension, whole-array assignments, reductions, elements,
//! some of it inside an outer sequential loop.

use super::{offset, Rng};

/// `BLOCK` or `BLOCK(m)` for `extent` cells over `p` processes (m from the
/// even share to 3 past it).
fn block(rng: &mut Rng, extent: i64, p: i64) -> String {
    if rng.chance(50) {
        "BLOCK".to_string()
    } else {
        format!("BLOCK({})", (extent + p - 1) / p + rng.range(0, 3))
    }
}

/// An alignment offset in -2..=2 keeping `lo..=hi` inside `tlo..=thi`.
fn align_offset(rng: &mut Rng, (lo, hi): (i64, i64), (tlo, thi): (i64, i64)) -> i64 {
    let candidates: Vec<i64> = (-2..=2).filter(|o| lo + o >= tlo && hi + o <= thi).collect();
    *rng.pick(&candidates)
}

/// The template cell `T(I+o1, J+o2)`.
fn aligned((o1, o2): (i64, i64)) -> String {
    format!("T({}, {})", offset("I", o1), offset("J", o2))
}

/// `v = lo, hi[, step]`, walked backwards for a negative step.
fn control(v: &str, lo: i64, hi: i64, step: i64) -> String {
    match step {
        1 => format!("{v} = {lo}, {hi}"),
        s if s > 0 => format!("{v} = {lo}, {hi}, {s}"),
        s => format!("{v} = {hi}, {lo}, {s}"),
    }
}

/// The loop bounds `lo..=hi` along both dimensions keeping every read in `1..=n`, `1..=m`.
fn bounds(reads: &[(i64, i64)], n: i64, m: i64) -> [(i64, i64); 2] {
    let lo1 = 1 + (-reads.iter().map(|it| it.0).min().unwrap()).max(0);
    let hi1 = n - reads.iter().map(|it| it.0).max().unwrap().max(0);
    let lo2 = 1 + (-reads.iter().map(|it| it.1).min().unwrap()).max(0);
    let hi2 = m - reads.iter().map(|it| it.1).max().unwrap().max(0);
    [(lo1, hi1), (lo2, hi2)]
}

/// The 2-D grid program of `seed`.
pub(crate) fn generate_grid(seed: u64) -> String {
    let mut rng = Rng::new(seed ^ 0x6772_6964);
    let r = &mut rng;
    let n = r.range(5, 14);
    let m = r.range(4, 12);
    let (p1, p2) = *r.pick(&[(2, 2), (1, 3), (3, 1), (2, 3), (4, 1)]);
    let t1 = (r.range(-1, 1), n + r.range(0, 2));
    let t2 = (r.range(0, 1), m + r.range(0, 2));
    let f1 = block(r, t1.1 - t1.0 + 1, p1);
    let f2 = block(r, t2.1 - t2.0 + 1, p2);
    let oa = (align_offset(r, (1, n), t1), align_offset(r, (1, m), t2));
    let ob = (align_offset(r, (1, n), t1), align_offset(r, (1, m), t2));
    let mut out = String::new();
    let mut line = |text: String| {
        out.push_str(&text);
        out.push('\n');
    };
    line("program grid".to_string());
    line("  implicit none".to_string());
    line(format!("  integer, parameter :: n = {n}, m = {m}"));
    line("  integer :: a(n, m), b(n, m), i, j, k, s, it".to_string());
    line(format!("!HPF$ PROCESSORS P({p1}, {p2})"));
    line(format!("!HPF$ TEMPLATE T({}:{}, {}:{})", t1.0, t1.1, t2.0, t2.1));
    line(format!("!HPF$ DISTRIBUTE T({f1}, {f2}) ONTO P"));
    line(format!("!HPF$ ALIGN A(I, J) WITH {}", aligned(oa)));
    line(format!("!HPF$ ALIGN B(I, J) WITH {}", aligned(ob)));
    line("  do j = 1, m\n    do i = 1, n".to_string());
    line(format!("      a(i, j) = mod(i * {} + j * {}, 17)", r.range(1, 9), r.range(1, 9)));
    line(format!("      b(i, j) = mod(i * {} - j * {}, 13)", r.range(1, 9), r.range(1, 9)));
    line("    end do\n  end do".to_string());
    // Some statements inside an outer sequential loop (every process runs it).
    let statements = r.range(3, 7);
    let outer = if r.chance(30) { Some((r.range(0, statements - 1), r.range(2, 3))) } else { None };
    for statement in 0..statements {
        let indent = if outer.is_some_and(|(first, _)| statement >= first) { "  " } else { "" };
        if let Some((first, trips)) = outer {
            if statement == first {
                line(format!("  do it = 1, {trips}"));
            }
        }
        let (src, dst) = *r.pick(&[("a", "b"), ("b", "a")]);
        let kind = r.below(8);
        let mut text = String::new();
        let mut push = |it: String| {
            text.push_str(indent);
            text.push_str(&it);
            text.push('\n');
        };
        match kind {
            0 | 1 => {
                // A DO nest, the column loop outside (0) or inside (1).
                let count = r.range(1, 4);
                let reads: Vec<(i64, i64)> = (0..count).map(|_| (r.range(-2, 2), r.range(-2, 2))).collect();
                let [(lo1, hi1), (lo2, hi2)] = bounds(&reads, n, m);
                let expr: Vec<String> =
                    reads.iter().map(|(c1, c2)| format!("{src}({}, {})", offset("i", *c1), offset("j", *c2))).collect();
                let st1 = *r.pick(&[1, 1, 2, -1]);
                let st2 = *r.pick(&[1, 1, -1, 3]);
                if kind == 0 {
                    push(format!("  do {}", control("j", lo2, hi2, st2)));
                    push(format!("    do {}", control("i", lo1, hi1, st1)));
                } else {
                    push(format!("  do {}", control("i", lo1, hi1, st1)));
                    push(format!("    do {}", control("j", lo2, hi2, st2)));
                }
                // Now and then the home read at another element (a dependence: rank 0 runs it).
                let e1 = r.range(-(lo1 - 1), n - hi1);
                let e2 = r.range(-(lo2 - 1), m - hi2);
                let extra = if r.chance(20) {
                    format!(" + {dst}({}, {})", offset("i", e1), offset("j", e2))
                } else {
                    String::new()
                };
                // Now and then a branch on an element the nest reads.
                let guard = r.below(7);
                let cond = format!("mod({}, {}) == {}", expr[0], r.range(2, 4), r.range(0, 1));
                let update = format!("{dst}(i, j) = mod({dst}(i, j) + {}{extra}, 101)", expr.join(" + "));
                match guard {
                    0 => {
                        push(format!("      if ({cond}) cycle"));
                        push(format!("      {update}"));
                    }
                    1 => {
                        push(format!("      if ({cond}) then"));
                        push(format!("        {update}"));
                        push("      else".to_string());
                        push(format!("        {dst}(i, j) = {dst}(i, j) - 1"));
                        push("      end if".to_string());
                    }
                    _ => push(format!("      {update}")),
                }
                push("    end do".to_string());
                push("  end do".to_string());
            }
            2 => {
                let count = r.range(1, 3);
                let reads: Vec<(i64, i64)> = (0..count).map(|_| (r.range(-2, 2), r.range(-2, 2))).collect();
                let arrays: Vec<&str> = reads.iter().map(|_| *r.pick(&["a", "b"])).collect();
                let [(lo1, hi1), (lo2, hi2)] = bounds(&reads, n, m);
                let expr: Vec<String> = reads
                    .iter()
                    .zip(&arrays)
                    .map(|((c1, c2), x)| format!("{x}({}, {})", offset("i", *c1), offset("j", *c2)))
                    .collect();
                push(format!(
                    "  forall (i = {lo1}:{hi1}, j = {lo2}:{hi2}) {dst}(i, j) = mod({}, 97)",
                    expr.join(" + ")
                ));
            }
            3 => {
                let (c1, c2) = (r.range(-2, 2), r.range(-2, 2));
                let [(lo1, hi1), (lo2, hi2)] = bounds(&[(c1, c2)], n, m);
                push(format!(
                    "  {dst}({lo1}:{hi1}, {lo2}:{hi2}) = mod({src}({}:{}, {}:{}) * 3 + {dst}({lo1}:{hi1}, {lo2}:{hi2}), 89)",
                    lo1 + c1,
                    hi1 + c1,
                    lo2 + c2,
                    hi2 + c2
                ));
            }
            4 => {
                // Rows with a scalar subscript along the first distributed dimension.
                let (c1, c2) = (r.range(-2, 2), r.range(-2, 2));
                let [(lo1, hi1), (lo2, hi2)] = bounds(&[(c1, c2)], n, m);
                push(format!("  do k = {lo1}, {hi1}"));
                push(format!("    {dst}(k, {lo2}:{hi2}) = {src}({}, {}:{}) + 1", offset("k", c1), lo2 + c2, hi2 + c2));
                push("  end do".to_string());
            }
            5 => push(format!("  {dst} = {src} + {dst} - {}", r.range(0, 5))),
            6 => {
                push(format!(
                    "  s = sum({src}) + count({dst} > {}) + maxval({src}(2:n, :) - {dst}(1:n-1, :))",
                    r.range(0, 10)
                ));
                push("  print *, s".to_string());
            }
            _ => {
                push(format!("  {dst}({}, {}) = {}", r.range(1, n), r.range(1, m), r.range(-9, 9)));
                push(format!("  print *, {src}({}, {}), minval({dst})", r.range(1, n), r.range(1, m)));
            }
        }
        out_push(&mut line, text);
    }
    if outer.is_some() {
        line("  end do".to_string());
    }
    line("  print *, a\n  print *, b".to_string());
    line("end program grid".to_string());
    out
}

fn out_push(line: &mut impl FnMut(String), text: String) {
    line(text.trim_end_matches('\n').to_string());
}
