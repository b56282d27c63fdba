//! Which statement of the user's program each line of the generated
//! program comes from, so that the compiler's and the run-time checks'
//! messages, which name generated lines, can point at the user's source
//! (`hpf-ls run --check`, and the internal error of a generated program the
//! compiler rejects).
//!
//! The lowering appends its output in order; [`Lowering::emit`] marks where
//! each part starts and which user text it comes from ([`Region`]). A line
//! of a part is then mapped to the line of that text that reads the same
//! (blanks and case aside), searching forward from the last one found: the
//! statements a loop body copies keep their own lines, and what the backend
//! adds (fetches, bounds, statistics) takes the line before it, or the
//! part's first statement.

use syntax::TextRange;

/// A part of the generated program, from byte `start` of the output on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Region {
    pub start: usize,
    pub from: Origin,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Origin {
    /// This text of the user's (a statement, a unit).
    Text(TextRange),
    /// Copies of the user's procedures: their lines are looked for in the whole text.
    Anywhere,
    /// The backend's own lines (set-up, statistics, modules of other files).
    Backend,
}

/// One candidate line of the user's text: where its first non-blank
/// character is, and its text without blanks, in lower case.
struct UserLine {
    offset: usize,
    key: String,
}

fn key(line: &str) -> String {
    line.chars().filter(|it| !it.is_whitespace()).flat_map(char::to_lowercase).collect()
}

/// The lines of `text` that begin inside `range`.
fn user_lines(text: &str, range: TextRange) -> Vec<UserLine> {
    let mut lines = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let start = at;
        at += line.len();
        if start + line.len() <= range.start || start >= range.end.max(range.start + 1) {
            continue;
        }
        let blanks = line.len() - line.trim_start().len();
        lines.push(UserLine { offset: (start + blanks).max(range.start), key: key(line) });
    }
    lines
}

/// For each line of `output` (0-based), the offset in `text` of the user's
/// line it comes from; `None` for the backend's own lines.
pub(crate) fn map_lines(output: &str, text: &str, regions: &[Region]) -> Vec<Option<usize>> {
    let mut mapped = Vec::new();
    let mut line_start = 0;
    let mut region = 0;
    let mut candidates: Vec<UserLine> = Vec::new();
    let mut cursor = 0;
    let mut current: Option<usize> = None;
    let whole = TextRange::new(0, text.len());
    for line in output.split_inclusive('\n') {
        // The region that holds this line's start.
        let mut entered = false;
        while region < regions.len() && regions[region].start <= line_start {
            region += 1;
            entered = true;
        }
        if entered {
            let from = regions[region - 1].from;
            (candidates, current) = match from {
                Origin::Text(range) => {
                    let lines = user_lines(text, range);
                    let first = lines.first().map(|it| it.offset);
                    (lines, first)
                }
                Origin::Anywhere => (user_lines(text, whole), None),
                Origin::Backend => (Vec::new(), None),
            };
            cursor = 0;
        }
        let wanted = key(line);
        if !wanted.is_empty() {
            if let Some(found) = candidates[cursor..].iter().position(|it| it.key == wanted) {
                current = Some(candidates[cursor + found].offset);
                cursor += found + 1;
            }
        }
        mapped.push(if region == 0 { None } else { current });
        line_start += line.len();
    }
    mapped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copied_lines_keep_their_own_line_and_added_lines_take_the_one_before() {
        let text = "program p\n  do i = 1, n\n    a(i) = b(i + 1)\n    c(i) = 0\n  end do\nend program p\n";
        let loop_start = text.find("do i").unwrap();
        let loop_end = text.find("end program").unwrap();
        let output = "program p\n  call hpf_init()\n  call hpf_fetch(b)\n  do i = hpf_lo, hpf_hi\n    a(i) = b(i+1)\n    call hpf_note()\n    c(i) = 0\n  end do\n";
        let regions = [
            Region { start: 0, from: Origin::Text(TextRange::new(0, 10)) },
            Region { start: output.find("  call hpf_init").unwrap(), from: Origin::Backend },
            Region {
                start: output.find("  call hpf_fetch").unwrap(),
                from: Origin::Text(TextRange::new(loop_start, loop_end)),
            },
        ];
        let lines = map_lines(output, text, &regions);
        let line_of = |offset: Option<usize>| offset.map(|it| text[..it].matches('\n').count() + 1);
        let got: Vec<Option<usize>> = lines.into_iter().map(line_of).collect();
        // The fetch and the rewritten DO take the DO's line; each assignment its own.
        assert_eq!(got, [Some(1), None, Some(2), Some(2), Some(3), Some(3), Some(4), Some(5)]);
    }
}
