//! Random programs over distributed arrays of other types and kinds than
//! the default ones: INTEGER(8) holding values past 2**31 (a 4-byte move
//! would cut them), COMPLEX(8) and CHARACTER(len=L) arrays, each
//! distributed BLOCK, BLOCK(m), CYCLIC or CYCLIC(m), directly or aligned
//! with another at an offset; DO loops reading shifted neighbours, section
//! assignments, FORALL, WHERE, element assignments and reads, branches on
//! CHARACTER comparisons, SUM, MAXVAL, MINVAL of INTEGER(8), SUM of
//! COMPLEX(8), COUNT and ANY of CHARACTER comparisons, and output of every
//! array at the end.

use super::{distribution, offset, Rng};

/// A loop `lo..=hi` whose reads at `i + c` for each `c` of `shifts` stay in `1..=n`.
fn bounds(shifts: &[i64], n: i64) -> (i64, i64) {
    let lo = 1 + (-shifts.iter().copied().min().unwrap_or(0)).max(0);
    let hi = n - shifts.iter().copied().max().unwrap_or(0).max(0);
    (lo, hi)
}

/// The program of `seed`.
pub(crate) fn generate_kinds(seed: u64) -> String {
    let mut rng = Rng::new(seed ^ 0x6b69_6e64);
    let r = &mut rng;
    let n = r.range(6, 24);
    let len = r.range(1, 8) as usize;
    let words: Vec<String> =
        ["alpha", "beta", "gamma", "delta", "eps"].iter().map(|it| format!("'{:<len$.len$}'", it)).collect();
    let mut out = String::new();
    let mut line = |text: String| {
        out.push_str(&text);
        out.push('\n');
    };
    line("program kinds".to_string());
    line("  implicit none".to_string());
    line("  integer, parameter :: i8 = selected_int_kind(18), dp = kind(1.0d0)".to_string());
    line(format!("  integer, parameter :: n = {n}"));
    line(format!("  character(len={len}), parameter :: words(5) = [{}]", words.join(", ")));
    line("  integer(i8) :: k(n), kk(n), t8".to_string());
    line("  complex(dp) :: z(n), zz(n)".to_string());
    line(format!("  character(len={len}) :: c(n), cc(n), word"));
    line("  integer :: i, j, it".to_string());
    // BLOCK(m) of too few cells is widened at run time (on a literal count
    // of processors the analysis would refuse it).
    line("!HPF$ PROCESSORS P(NUMBER_OF_PROCESSORS())".to_string());
    // Each pair: the first distributed, the second either distributed its
    // own way or aligned with the first at an offset.
    for (first, second) in [("k", "kk"), ("z", "zz"), ("c", "cc")] {
        line(format!("!HPF$ DISTRIBUTE {first}({}) ONTO P", distribution(r, n, true)));
        if r.chance(50) {
            line(format!("!HPF$ DISTRIBUTE {second}({}) ONTO P", distribution(r, n, true)));
        } else {
            line(format!("!HPF$ ALIGN {second}(I) WITH {first}(I)"));
        }
    }
    let (ka, kb) = (r.range(1_000_000_007, 3_000_000_000), r.range(1, 99_999));
    line("  do i = 1, n".to_string());
    line(format!("    k(i) = {ka}_i8 * i + {kb}_i8"));
    line(format!("    kk(i) = {}_i8 - 7_i8 * i * i", r.range(5_000_000_000, 9_000_000_000)));
    line(format!("    z(i) = cmplx(i, {} - 2 * i, kind=dp) * (0.5_dp, 0.25_dp)", r.range(-5, 5)));
    line("    zz(i) = cmplx(1.0_dp / i, -1.0_dp, kind=dp)".to_string());
    line(format!("    c(i) = words(mod(i * {}, 5) + 1)", r.range(1, 4)));
    line(format!("    cc(i) = words(mod(i + {}, 5) + 1)", r.range(0, 4)));
    line("  end do".to_string());
    let statements = r.range(3, 8);
    let outer = r.chance(25).then(|| (r.range(0, statements - 1), r.range(2, 3)));
    for statement in 0..statements {
        if outer.is_some_and(|(first, _)| statement == first) {
            line(format!("  do it = 1, {}", outer.unwrap().1));
        }
        let (ki, ko) = *r.pick(&[("k", "kk"), ("kk", "k")]);
        let (zi, zo) = *r.pick(&[("z", "zz"), ("zz", "z")]);
        let (ci, co) = *r.pick(&[("c", "cc"), ("cc", "c")]);
        match r.below(11) {
            0 => {
                let shifts = [r.range(-2, 2), r.range(-2, 2)];
                let (lo, hi) = bounds(&shifts, n);
                line(format!("  do i = {lo}, {hi}"));
                line(format!(
                    "    {ko}(i) = mod({ki}({}) * 3_i8 + {ki}({}), 900000000000_i8) + {ko}(i) / 2_i8",
                    offset("i", shifts[0]),
                    offset("i", shifts[1])
                ));
                line("  end do".to_string());
            }
            1 => {
                let shift = r.range(-2, 2);
                let (lo, hi) = bounds(&[shift], n);
                line(format!("  do i = {lo}, {hi}"));
                line(format!("    {zo}(i) = {zi}({}) * (0.5_dp, -0.5_dp) + {zo}(i) / 3", offset("i", shift)));
                line("  end do".to_string());
            }
            2 => {
                let shift = r.range(-2, 2);
                let (lo, hi) = bounds(&[shift], n);
                line(format!("  do i = {lo}, {hi}"));
                line(format!("    {co}(i) = {ci}({})", offset("i", shift)));
                line("  end do".to_string());
            }
            3 => {
                let shift = r.range(-3, 3);
                let (lo, hi) = bounds(&[shift], n);
                let (slo, shi) = (lo + shift, hi + shift);
                match r.below(3) {
                    0 => line(format!("  {ko}({lo}:{hi}) = {ki}({slo}:{shi}) + 1_i8")),
                    1 => line(format!("  {zo}({lo}:{hi}) = conjg({zi}({slo}:{shi}))")),
                    _ => line(format!("  {co}({lo}:{hi}) = {ci}({slo}:{shi})")),
                }
            }
            4 => {
                line(format!("  t8 = sum({ki}) + maxval({ko}) - minval({ki})"));
                line("  print *, t8".to_string());
            }
            5 => line(format!("  print '(2f22.10)', sum({zi})")),
            6 => {
                line(format!("  print *, count({ci} == words({})), any({ci} == {co})", r.range(1, 5)));
            }
            7 => {
                let (a, b, e) = (r.range(1, n), r.range(1, n), r.range(1, n));
                line(format!("  {ko}({a}) = {}_i8", r.range(3_000_000_000, 4_000_000_000)));
                line(format!("  {co}({b}) = words({})", r.range(1, 5)));
                line(format!("  word = {ci}({e})"));
                line(format!("  print *, {ki}({}), ' ', word, {zi}({})", r.range(1, n), r.range(1, n)));
            }
            8 => {
                let (lo, hi) = (r.range(1, n), n);
                line(format!(
                    "  forall (i = {lo}:{hi}) {ko}(i) = mod({ko}(i) * 2_i8, 1000000000000_i8) - {}_i8",
                    r.range(0, 9)
                ));
            }
            9 => line(format!("  where ({ki} > {}_i8) {ko} = {ko} + 1_i8", r.range(1_000_000_000, 20_000_000_000))),
            _ => {
                line("  do i = 1, n".to_string());
                line(format!("    if ({ci}(i) == words({})) then", r.range(1, 5)));
                line(format!("      {ko}(i) = {ko}(i) + 5000000000_i8"));
                line(format!("      {zo}(i) = {zo}(i) * (0.0_dp, 1.0_dp)"));
                line("    end if".to_string());
                line("  end do".to_string());
            }
        }
        if outer.is_some() && statement == statements - 1 {
            line("  end do".to_string());
        }
    }
    line("  print '(3i20)', k".to_string());
    line("  print '(3i20)', kk".to_string());
    line("  print '(2f22.10)', z".to_string());
    line("  print '(2f22.10)', zz".to_string());
    line("  print '(6(a, \"|\"))', c".to_string());
    line("  print '(6(a, \"|\"))', cc".to_string());
    line("end program kinds".to_string());
    out
}
