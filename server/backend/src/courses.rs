//! Local positions in a loop over a CYCLIC(m) dimension, course by course.
//!
//! A CYCLIC array is stored compressed, so its subscript `v + c` along the
//! distributed dimension becomes the local position `hpf_lx(d, v + c)`. In
//! one course (one block of m template cells of this process) the local
//! positions of consecutive cells are consecutive, so that position is
//! `v + s` with `s = hpf_lx(d, hpf_lo + c) - hpf_lo`, computed once per
//! course: the inner loops index the array with a plain offset (no call per
//! element) and vectorise as the sequential loop does.
//!
//! An owner-computes DO nest of step 1 that fetches nothing also computes
//! each course's bounds without a call: `hpf_course_frame` gives, once per
//! loop, the course period, this rank's first cell and the block size, and
//! the course's bounds and the home cells' shift are arithmetic on them
//! (`framed_courses`; gauss's update ran 1.2 M courses, two calls each).
//!
//! A DO loop its owner runs on one slice `A(I,K)` of a 1-D CYCLIC array
//! (`A(I,K) = A(I,K) / PIVOT`) likewise computes `hpf_lx(d, K)` once
//! before the loop.
//!
//! Only references on the course's own cells are rewritten (the
//! owner-computes nests read no others locally; what they fetch is replaced
//! before), with the loop index itself plus a constant as subscript.

use std::fmt::Write;

use analysis::model::SymbolId;
use syntax::{Stmt, StmtKind, TextRange};

use crate::Lowering;

/// The shift variables of one course and the rewritten subscripts.
pub(crate) struct CourseShifts {
    /// `block` with the declarations and the assignments, to open right
    /// after the course's bounds (`hpf_lo`, `hpf_hi`) are known; empty when
    /// nothing was rewritten.
    pub(crate) open: String,
    /// What closes `open`.
    pub(crate) close: &'static str,
}

impl CourseShifts {
    pub(crate) fn none() -> CourseShifts {
        CourseShifts { open: String::new(), close: "" }
    }
}

impl Lowering<'_> {
    /// Rewrites in `edits` every `hpf_lx(hpf_d_X, v + c)` of a 1-D CYCLIC
    /// array X (`v` the distributing loop's index `var`) into `v + hpf_cs_N`,
    /// one `hpf_cs_N` per array and constant.
    pub(crate) fn course_shifts(&self, var: &str, edits: &mut [(TextRange, String)]) -> CourseShifts {
        self.framed_course_shifts(var, edits, None)
    }

    /// `course_shifts` in a course loop opened by `framed_courses` over the
    /// home array's descriptor `frame.0` with home offset `frame.1`: the
    /// shift of the home cells themselves is arithmetic on the frame
    /// (`hpf_cp`, `hpf_cb`, `hpf_cm`), no call.
    pub(crate) fn framed_course_shifts(
        &self,
        var: &str,
        edits: &mut [(TextRange, String)],
        frame: Option<(&str, i64)>,
    ) -> CourseShifts {
        let key = var.to_ascii_lowercase();
        let mut shifts: Vec<(String, i64)> = Vec::new();
        for (range, text) in edits.iter_mut() {
            let Some(descriptor) = text.strip_prefix("hpf_lx(").and_then(|it| it.split_once(", ")).map(|it| it.0)
            else {
                continue;
            };
            let plain = self.distributed.values().any(|it| {
                it.cyclic && it.second.is_none() && it.stride == 1 && format!("hpf_d_{}", it.name) == descriptor
            });
            let Some(offset) = plain.then(|| index_plus_constant(&self.one_line(*range), &key)).flatten() else {
                continue;
            };
            let shift = (descriptor.to_string(), offset);
            let k = match shifts.iter().position(|it| *it == shift) {
                Some(k) => k,
                None => {
                    shifts.push(shift);
                    shifts.len() - 1
                }
            };
            *text = format!("{var} + hpf_cs_{}", k + 1);
        }
        if shifts.is_empty() {
            return CourseShifts::none();
        }
        let names: Vec<String> = (1..=shifts.len()).map(|k| format!("hpf_cs_{k}")).collect();
        let mut open = format!("    block\n    integer :: {}\n", names.join(", "));
        for (name, (descriptor, offset)) in names.iter().zip(&shifts) {
            if frame == Some((descriptor.as_str(), *offset)) {
                let _ = writeln!(open, "    {name} = hpf_c * (hpf_cm - hpf_cp) - hpf_cb");
            } else {
                let _ = writeln!(open, "    {name} = hpf_lx({descriptor}, hpf_lo + ({offset})) - hpf_lo");
            }
        }
        CourseShifts { open, close: "    end block\n" }
    }
}

impl Lowering<'_> {
    /// In a DO loop `stmt` that the owner of `array`'s slice at `index`
    /// runs: rewrites in `edits` every `hpf_lx(hpf_d_A, index)` into
    /// `hpf_cs_1`, computed once before the loop. Nothing for other
    /// statements, or a labelled DO (a branch from outside may target it).
    pub(crate) fn owner_slice_position(
        &self,
        (array, index): (SymbolId, &str),
        stmt: &Stmt,
        edits: &mut [(TextRange, String)],
    ) -> CourseShifts {
        let distributed = &self.distributed[&array];
        let StmtKind::Do { control: Some(control), .. } = &stmt.kind else { return CourseShifts::none() };
        let line_start = self.text[..stmt.range.start].rfind('\n').map_or(0, |it| it + 1);
        let labelled = self.text[line_start..stmt.range.end].trim_start().starts_with(|it: char| it.is_ascii_digit());
        if !distributed.cyclic
            || distributed.second.is_some()
            || labelled
            || crate::private::mentions_word(index, &control.var.key())
        {
            return CourseShifts::none();
        }
        let normal = |text: &str| text.split_whitespace().collect::<String>().to_ascii_lowercase();
        let position = format!("hpf_lx(hpf_d_{}, {})", distributed.name, index.trim());
        let mut rewritten = false;
        for (_, text) in edits.iter_mut() {
            if normal(text) == normal(&position) {
                *text = "hpf_cs_1".to_string();
                rewritten = true;
            }
        }
        if !rewritten {
            return CourseShifts::none();
        }
        CourseShifts {
            open: format!("    block\n    integer :: hpf_cs_1\n    hpf_cs_1 = {position}\n"),
            close: "    end block\n",
        }
    }
}

/// The loop over the courses of `hpf_d_{home}` for `DO I = lo, hi` (step 1)
/// whose home cells are `I + offset`: the course frame computed once
/// (`hpf_course_frame`), then each course's bounds by arithmetic. Opens a
/// `block` (the frame's variables) and the loop; closed by `end do` and
/// `end block`.
pub(crate) fn framed_courses(home: &str, offset: i64, lo: &str, hi: &str) -> String {
    format!(
        "  block\n  integer :: hpf_cp, hpf_cb, hpf_cm\n  call hpf_course_frame(hpf_d_{home}, {offset}, hpf_cp, hpf_cb, hpf_cm)\n  do hpf_c = 0, hpf_courses(hpf_d_{home}) - 1\n    hpf_lo = max({lo}, hpf_c * hpf_cp + hpf_cb)\n    hpf_hi = min({hi}, hpf_c * hpf_cp + hpf_cb + hpf_cm - 1)"
    )
}

/// `c` when `text` is `var`, `var + c`, `var - c` or `c + var` (`c` an
/// integer literal), else `None`.
fn index_plus_constant(text: &str, var: &str) -> Option<i64> {
    let text: String = text.split_whitespace().collect::<String>().to_ascii_lowercase();
    if text == var {
        return Some(0);
    }
    if let Some(rest) = text.strip_prefix(var) {
        return match rest.as_bytes().first()? {
            b'+' => rest[1..].parse::<u32>().ok().map(i64::from),
            b'-' => rest[1..].parse::<u32>().ok().map(|it| -i64::from(it)),
            _ => None,
        };
    }
    let constant = text.strip_suffix(var)?.strip_suffix('+')?;
    constant.parse::<u32>().ok().map(i64::from)
}

#[cfg(test)]
mod tests {
    use super::index_plus_constant;

    #[test]
    fn only_the_index_plus_a_literal_is_recognised() {
        assert_eq!(index_plus_constant("j", "j"), Some(0));
        assert_eq!(index_plus_constant("J + 2", "j"), Some(2));
        assert_eq!(index_plus_constant("j-1", "j"), Some(-1));
        assert_eq!(index_plus_constant("3 + j", "j"), Some(3));
        assert_eq!(index_plus_constant("jj", "j"), None);
        assert_eq!(index_plus_constant("j + k", "j"), None);
        assert_eq!(index_plus_constant("2*j", "j"), None);
        assert_eq!(index_plus_constant("j+1+1", "j"), None);
        assert_eq!(index_plus_constant("k+j", "j"), None);
    }
}
