//! Edit-sequence differential test: random sequences of editor changes,
//! applied as `didChange` content changes, must leave the server where
//! opening the final text fresh does: the same text, syntax tree,
//! diagnostics, loops, hovers and inlay hints.
//!
//! The edits are what people do: typing and deleting (inside directives,
//! across line ends), replacing, pasting whole corpus files, replacing the
//! whole text, undoing the last edits in reverse order, on LF and CRLF text
//! with multi-byte characters, with positions in UTF-8 or UTF-16, several
//! changes in one `didChange`, and analyses skipped between some of them
//! (the server coalesces a burst of edits and reparses from the last tree
//! it analysed).
//!
//! In-process through the server's own hooks (`server::hooks`: the change
//! application of `did_change` and the incremental reparse and analysis of
//! the document store), then through the real binary over stdio for fewer
//! sequences. `HPF_EDIT_SEQUENCES=N` bounds the long (ignored) versions:
//! `cargo test --release -p hpf-ls --test edit_sequences -- --ignored`;
//! `HPF_EDIT_FIRST=K` starts the in-process one at sequence K.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use analysis::ide::{hover, inlay_hints, HintConfig};
use common::{without_related_uris, Client};
use hpf_ls::server::hooks::{analyse, apply_changes, Parse};
use hpf_ls::server::position::PositionEncoding;
use hpf_ls::server::settings::Settings;
use hpf_ls::server::Analysed;
use ropey::Rope;
use serde_json::{json, Value};
use syntax::SourceForm;
use tower_lsp_server::ls_types::{Position, Range, TextDocumentContentChangeEvent};

/// Sequences of the fast in-process test.
const FAST_SEQUENCES: u64 = 200;
/// Sequences of the fast test over stdio.
const FAST_STDIO_SEQUENCES: u64 = 12;

struct Random(u64);

impl Random {
    fn new(seed: u64) -> Random {
        Random(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5eed_0000_0000_1234 | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

struct CorpusFile {
    name: String,
    text: String,
    form: SourceForm,
}

fn corpus() -> Vec<CorpusFile> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus");
    let mut paths: Vec<PathBuf> = Vec::new();
    for dir in [root.clone(), root.join("errors")] {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let known = path.extension().is_some_and(|it| syntax::FORTRAN_EXTENSIONS.iter().any(|e| it == *e));
            if path.is_file() && known {
                paths.push(path);
            }
        }
    }
    paths.sort();
    assert!(paths.len() >= 40, "the corpus is missing");
    paths
        .into_iter()
        .map(|path| CorpusFile {
            name: path.file_name().unwrap().to_string_lossy().into_owned(),
            text: String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned(),
            form: SourceForm::from_path(&path),
        })
        .collect()
}

const SNIPPETS: &[&str] = &[
    "A",
    "(",
    ")",
    "I",
    "+1",
    "-1",
    "\n",
    "\r\n",
    "!HPF$ ",
    ",",
    " ",
    "é",
    "日本",
    "𝄞",
    "::",
    "ALIGN",
    "WITH",
    "0",
    "&",
    "&\n",
    "*",
    "BLOCK",
    "(BLOCK)",
    "CHPF$",
    "      ",
    "\t",
    "do i = 1, 10\n",
    "end do\n",
    "!HPF$ INDEPENDENT\n",
    "!HPF$ ALIGN B(I) WITH A(I+1)\n",
    "!HPF$ DISTRIBUTE A(BLOCK) ONTO P\n",
    "real a(16), b(16)\n",
    "'",
    "\"",
    "!",
    "end program\n",
    "program q\n",
    "C",
    "     &",
    "ONTO",
];

/// LSP's line breaks: `\n`, `\r\n` and a lone `\r`.
fn position(text: &str, offset: usize, utf16: bool) -> Position {
    let bytes = text.as_bytes();
    let (mut line, mut line_start) = (0u32, 0usize);
    let mut idx = 0;
    while idx < offset {
        match bytes[idx] {
            b'\n' => {
                line += 1;
                line_start = idx + 1;
            }
            b'\r' if bytes.get(idx + 1) != Some(&b'\n') => {
                line += 1;
                line_start = idx + 1;
            }
            _ => {}
        }
        idx += 1;
    }
    let prefix = &text[line_start..offset];
    let character = if utf16 { prefix.encode_utf16().count() } else { prefix.len() };
    Position { line, character: character as u32 }
}

/// A valid edit point at or before `offset`: a character boundary, not inside a CRLF.
fn point_at(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset)
        || (offset > 0 && text[..offset].ends_with('\r') && text[offset..].starts_with('\n'))
    {
        offset -= 1;
    }
    offset
}

/// One ranged change in the model text: replace `start..end` by `new_text`.
#[derive(Clone, Debug)]
struct Edit {
    start: usize,
    end: usize,
    new_text: String,
}

/// The model of the editor: its text and what undo would restore.
struct Editor {
    text: String,
    /// (start, inserted length, removed text), most recent last.
    undo: Vec<(usize, usize, String)>,
}

impl Editor {
    /// A random edit (ranged), or `None` for a whole-text replacement (in `text`).
    fn random_edit(&mut self, random: &mut Random, corpus: &[CorpusFile]) -> Result<Edit, String> {
        let text = &self.text;
        let len = text.len();
        let snippet = |random: &mut Random| SNIPPETS[random.below(SNIPPETS.len())].to_string();
        let edit = match random.below(100) {
            // Undo the last edits, in reverse order.
            0..=9 if !self.undo.is_empty() => {
                let (start, inserted, removed) = self.undo.pop().unwrap();
                return Ok(Edit { start, end: start + inserted, new_text: removed });
            }
            // Paste a whole corpus file.
            10..=12 => {
                let at = point_at(text, random.below(len + 1));
                Edit { start: at, end: at, new_text: corpus[random.below(corpus.len())].text.clone() }
            }
            // Replace the whole text (a change without a range).
            13 => return Err(corpus[random.below(corpus.len())].text.clone()),
            // Inside a directive: after a sentinel.
            14..=39 => {
                let sentinels: Vec<usize> = (0..len.saturating_sub(3))
                    .filter(|idx| text.as_bytes()[*idx..idx + 4].eq_ignore_ascii_case(b"hpf$"))
                    .collect();
                if sentinels.is_empty() {
                    let at = point_at(text, random.below(len + 1));
                    Edit { start: at, end: at, new_text: snippet(random) }
                } else {
                    let base = sentinels[random.below(sentinels.len())] + 4;
                    let start = point_at(text, base + random.below(30));
                    let end = point_at(text, start + random.below(6)).max(start);
                    let new_text = if random.chance(30) { String::new() } else { snippet(random) };
                    Edit { start, end, new_text }
                }
            }
            // Across a line end.
            40..=54 => {
                let newlines: Vec<usize> = text.match_indices('\n').map(|(idx, _)| idx).collect();
                if newlines.is_empty() {
                    Edit { start: 0, end: 0, new_text: snippet(random) }
                } else {
                    let at = newlines[random.below(newlines.len())];
                    let start = point_at(text, at.saturating_sub(random.below(5)));
                    let end = point_at(text, at + 1 + random.below(5)).max(start);
                    let new_text = if random.chance(50) { String::new() } else { snippet(random) };
                    Edit { start, end, new_text }
                }
            }
            // Delete a range, small or large.
            55..=69 => {
                let start = point_at(text, random.below(len + 1));
                let width = if random.chance(10) { random.below(400) } else { random.below(8) };
                Edit { start, end: point_at(text, start + width).max(start), new_text: String::new() }
            }
            // Replace a range.
            70..=79 => {
                let start = point_at(text, random.below(len + 1));
                Edit { start, end: point_at(text, start + random.below(6)).max(start), new_text: snippet(random) }
            }
            // Type.
            _ => {
                let at = point_at(text, random.below(len + 1));
                Edit { start: at, end: at, new_text: snippet(random) }
            }
        };
        self.undo.push((edit.start, edit.new_text.len(), text[edit.start..edit.end].to_string()));
        Ok(edit)
    }
}

/// A change, as a client sends it, and the model text after it.
fn change_for(
    editor: &mut Editor,
    random: &mut Random,
    corpus: &[CorpusFile],
    utf16: bool,
) -> TextDocumentContentChangeEvent {
    match editor.random_edit(random, corpus) {
        Ok(edit) => {
            let range = Range {
                start: position(&editor.text, edit.start, utf16),
                end: position(&editor.text, edit.end, utf16),
            };
            editor.text.replace_range(edit.start..edit.end, &edit.new_text);
            TextDocumentContentChangeEvent { range: Some(range), range_length: None, text: edit.new_text }
        }
        Err(whole) => {
            editor.text = whole.clone();
            editor.undo.clear();
            TextDocumentContentChangeEvent { range: None, range_length: None, text: whole }
        }
    }
}

fn settings() -> Settings {
    Settings { processors: Some(4), ..Settings::default() }
}

/// Everything an editor sees of one analysis, in comparable form: its
/// chunks (where they start, their units and loops), the diagnostics in
/// document offsets, inlay hints and hovers through the chunk that holds them.
fn observe(analysed: &Analysed, probes: &[usize]) -> Vec<String> {
    let starts: Vec<(usize, syntax::ChunkKind)> = analysed.chunks.iter().map(|it| (it.start, it.kind)).collect();
    let hints: Vec<String> = analysed
        .chunks
        .iter()
        .map(|it| {
            let hints = inlay_hints(
                &it.chunk.analysis(),
                it.chunk.analysed_text(),
                HintConfig { loops: true, references: true },
                None,
            );
            format!("{}: {hints:?}", it.start)
        })
        .collect();
    let mut res = vec![
        analysed.text().to_string(),
        format!("{starts:?}"),
        format!("{:?}", analysed.chunks.iter().map(|it| it.chunk.analysis().file.units.clone()).collect::<Vec<_>>()),
        format!("{:?}", analysed.diagnostics()),
        format!("{:?}", analysed.chunks.iter().map(|it| it.chunk.analysis().loops.clone()).collect::<Vec<_>>()),
        format!("{hints:?}"),
    ];
    for probe in probes {
        let placed = analysed.chunk_at(*probe);
        let hovered = hover(&placed.chunk.analysis(), placed.chunk.analysed_text(), placed.local(*probe), true);
        // Its range in the document, through the host for a name declared there.
        res.push(format!("{:?}", hovered.map(|it| (it.contents, placed.global(it.range)))));
    }
    res
}

const LABELS: &[&str] = &["text", "chunks", "units", "diagnostics", "loops", "inlay hints"];

/// Where hovers are asked: the start of each diagnostic and loop, and random places.
fn probes(text: &str, analysed: &Analysed, random: &mut Random) -> Vec<usize> {
    let mut res: Vec<usize> = analysed.diagnostics().iter().take(4).map(|it| it.range.start).collect();
    let loops: Vec<usize> = analysed
        .chunks
        .iter()
        .flat_map(|placed| {
            placed.chunk.analysis().loops.iter().map(|it| placed.start + it.range.start + 1).collect::<Vec<_>>()
        })
        .collect();
    res.extend(loops.into_iter().take(3));
    for _ in 0..6 {
        res.push(point_at(text, random.below(text.len() + 1)));
    }
    res.retain(|it| *it <= text.len());
    res
}

/// A module whose procedures compute on its mapped arrays, and a main
/// program that USEs it with internal procedures of its own: edits inside a
/// procedure reanalyse it in its host, edits of the host's specification
/// part its procedures.
fn module_shaped(random: &mut Random) -> CorpusFile {
    let mut text = String::from(
        "module field\n  integer, parameter :: n = 32\n!HPF$ PROCESSORS procs(4)\n!HPF$ TEMPLATE grid(n)\n!HPF$ DISTRIBUTE grid(BLOCK) ONTO procs\n  real :: u(n), v(n), w(n)\n!HPF$ ALIGN u(i) WITH grid(i)\n!HPF$ ALIGN v(i) WITH grid(i+1)\n!HPF$ ALIGN w(i) WITH grid(i)\ncontains\n",
    );
    let bodies = ["u(i) = v(i-1)", "v(i) = u(i+1) + w(i)", "w(i) = 0.5 * (u(i-1) + u(i+1))", "u(i) = w(i)"];
    for idx in 0..2 + random.below(4) {
        let body = bodies[random.below(bodies.len())];
        text.push_str(&format!(
            "\n  ! kernel {idx}\n  subroutine kernel{idx}(steps)\n    integer :: steps, i, k\n    do k = 1, steps\n!HPF$ INDEPENDENT\n      do i = 2, n - 1\n        {body}\n      end do\n    end do\n  end subroutine kernel{idx}\n"
        ));
    }
    text.push_str("end module field\n\nprogram main\n  use field\n  real :: z(n)\n!HPF$ ALIGN z(i) WITH grid(i)\n  call kernel0(2)\n  call local(3)\ncontains\n  subroutine local(m)\n    integer :: m, i\n    do i = 2, n\n      z(i) = u(i-1) * m\n    end do\n  end subroutine local\n  integer function twice(k)\n    integer :: k\n    twice = 2 * k\n  end function\nend program main\n");
    CorpusFile { name: "module_shaped.f90".to_string(), text, form: SourceForm::Free }
}

struct Outcome {
    changes: usize,
    /// The text the analysis panicked on (fresh and incremental alike).
    panicked: Option<String>,
}

/// One in-process sequence; `Err` describes the first difference.
fn run_sequence(seed: u64, corpus: &[CorpusFile]) -> Result<Outcome, String> {
    let mut random = Random::new(seed);
    // A third of the sequences edit a module and a main program with procedures after CONTAINS.
    let shaped;
    let start = if random.chance(33) {
        shaped = module_shaped(&mut random);
        &shaped
    } else {
        &corpus[random.below(corpus.len())]
    };
    let mut text = start.text.clone();
    if random.chance(25) && !text.contains('\r') {
        text = text.replace('\n', "\r\n");
    }
    let form = start.form;
    let utf16 = random.chance(50);
    let encoding = if utf16 { PositionEncoding::Utf16 } else { PositionEncoding::Utf8 };
    let settings = settings();
    let mut editor = Editor { text: text.clone(), undo: Vec::new() };
    let mut rope = Rope::from_str(&text);
    let mut parse: Parse = analyse(rope.clone(), form, None, &settings);
    let steps = 1 + random.below(20);
    let mut changes_applied = 0;
    for step in 0..steps {
        let batch: Vec<TextDocumentContentChangeEvent> =
            (0..1 + random.below(3)).map(|_| change_for(&mut editor, &mut random, corpus, utf16)).collect();
        changes_applied += batch.len();
        apply_changes(&mut rope, &batch, encoding);
        if rope != editor.text.as_str() {
            return Err(format!("step {step}: the store's text differs from the client's after {batch:?}"));
        }
        // The server skips the analysis of some revisions (a burst of edits).
        let last = step + 1 == steps;
        if random.chance(30) && !last {
            continue;
        }
        let incremental = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            analyse(rope.clone(), form, Some(parse), &settings)
        }));
        let Ok(analysed) = incremental else {
            let fresh = std::panic::catch_unwind(|| analyse(Rope::from_str(&editor.text), form, None, &settings));
            if fresh.is_err() {
                // FIXME: the analysis panics on some texts (both ways alike, so
                // not an incremental bug), e.g. a rank-2 array aligned and
                // referenced with three subscripts in a loop (`loops.rs`,
                // `symbol.shape[dim]`), and so does the hover on others
                // (`hover.rs`). Counted and printed, not failed here.
                return Ok(Outcome { changes: changes_applied, panicked: Some(editor.text.clone()) });
            }
            return Err(format!(
                "step {step}: the incremental analysis panicked, a fresh open does not, on this {form:?} text:\n{}",
                editor.text
            ));
        };
        parse = analysed.clone();
        if last || random.chance(10) {
            let fresh = analyse(Rope::from_str(&editor.text), form, None, &settings);
            let probes = probes(&editor.text, &fresh, &mut random);
            let observed = |analysed: &Analysed| {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| observe(analysed, &probes)))
            };
            let (incremental, opened) = match (observed(&analysed), observed(&fresh)) {
                (Ok(incremental), Ok(opened)) => (incremental, opened),
                // FIXME: an editor feature panics on this text, both ways alike (see above).
                (Err(_), Err(_)) => {
                    return Ok(Outcome { changes: changes_applied, panicked: Some(editor.text.clone()) })
                }
                _ => return Err(format!("step {step}: an editor feature panics on one side only:\n{}", editor.text)),
            };
            for (idx, (a, b)) in incremental.iter().zip(&opened).enumerate() {
                if a != b {
                    let what = LABELS
                        .get(idx)
                        .map_or_else(|| format!("hover at {}", probes[idx - LABELS.len()]), |it| it.to_string());
                    return Err(format!(
                        "step {step} ({} from {}): the {what} differs\nedited: {a}\nfresh:  {b}\n--- text ---\n{}",
                        if utf16 { "UTF-16" } else { "UTF-8" },
                        start.name,
                        editor.text
                    ));
                }
            }
        }
    }
    Ok(Outcome { changes: changes_applied, panicked: None })
}

fn sequences(default: u64) -> u64 {
    std::env::var("HPF_EDIT_SEQUENCES").ok().and_then(|it| it.parse().ok()).unwrap_or(default)
}

/// The first sequence of the long versions: `HPF_EDIT_FIRST` (0 by default),
/// to rerun one failure without the sequences before it.
fn first_sequence() -> u64 {
    std::env::var("HPF_EDIT_FIRST").ok().and_then(|it| it.parse().ok()).unwrap_or(0)
}

fn in_process(seeds: std::ops::Range<u64>) {
    let corpus = corpus();
    let count = seeds.end - seeds.start;
    let (mut changes, mut panicked) = (0, 0);
    for seed in seeds {
        match run_sequence(seed, &corpus) {
            Ok(outcome) => {
                changes += outcome.changes;
                if let Some(text) = outcome.panicked {
                    panicked += 1;
                    eprintln!("sequence {seed}: the analysis panics on this text:\n{text}\n---");
                }
            }
            Err(problem) => panic!("sequence {seed}: {problem}"),
        }
    }
    eprintln!("{count} edit sequences, {changes} changes: each ended like a fresh open");
    // The server survives an analysis panic (it answers with an error), but
    // `hpf-ls check` does not: each such text is a bug to fix.
    assert_eq!(panicked, 0, "the analysis panicked on {panicked} text(s), printed above");
}

#[test]
fn edit_sequences_end_like_a_fresh_open() {
    in_process(0..FAST_SEQUENCES);
}

/// Found by the long version: from `red_black_sor.f90`, six batches of edits
/// left syntax errors that tree-sitter recovered from differently when
/// reparsing from the old tree than when parsing fresh (the store now parses
/// a text with errors fresh).
#[test]
fn error_recovery_after_edits_is_that_of_a_fresh_parse() {
    let corpus = corpus();
    for seed in [9874] {
        if let Err(problem) = run_sequence(seed, &corpus) {
            panic!("sequence {seed}: {problem}");
        }
    }
}

/// A module whose procedures use different names of its host, and edits of
/// its host's specification part: (from, to, how many chunks at most the
/// edit analyses).
fn host_document() -> (String, Vec<(&'static str, &'static str, usize)>) {
    let host = "module field\n  integer, parameter :: n = 32\n!HPF$ PROCESSORS procs(4)\n!HPF$ TEMPLATE grid(n)\n!HPF$ DISTRIBUTE grid(BLOCK) ONTO procs\n  real :: u(n), v(n)\n  real :: w(n)\n!HPF$ ALIGN u(i) WITH grid(i)\n!HPF$ ALIGN v(i) WITH grid(i+1)\n!HPF$ ALIGN w(i) WITH grid(i)\n  type pair\n    real :: first\n  end type pair\n  interface\n    subroutine ext(a)\n      real :: a(:)\n    end subroutine\n  end interface\ncontains\n";
    let bodies = ["u(i) = v(i-1)", "w(i) = 0.5 * w(i+1)", "v(i) = u(i+1)", "x = 1.0\n    y(i) = x", "call ext(y)"];
    let mut text = host.to_string();
    for (idx, body) in bodies.iter().enumerate() {
        text.push_str(&format!(
            "  subroutine kernel{idx}(steps)\n    integer :: steps, i\n    real :: y(n)\n!HPF$ ALIGN y(i) WITH grid(i)\n    do i = 2, n - 1\n      {body}\n    end do\n  end subroutine kernel{idx}\n"
        ));
    }
    text.push_str("end module field\n");
    // (from, to, how many chunks at most the edit analyses)
    let edits = vec![
        // A type no procedure uses; the interface one procedure calls.
        ("    real :: first\n", "    real :: first, second\n", 1),
        ("      real :: a(:)\n", "      real :: a(*)\n", 2),
        ("  real :: w(n)\n", "  ! the weights\n\n  real :: w(n)\n", 1),
        ("  real :: w(n)\n", "  real :: w(n)\n  real :: spare(n)\n", 1),
        ("ALIGN w(i) WITH grid(i)", "ALIGN w(i) WITH grid(i+2)", 2),
        ("!HPF$ ALIGN v(i) WITH grid(i+1)\n", "", 3),
        ("  real :: u(n), v(n)\n", "  real :: u(n), v(n), x\n", 4),
        ("DISTRIBUTE grid(BLOCK)", "DISTRIBUTE grid(CYCLIC)", 6),
        ("procs(4)", "procs(2)", 6),
        ("contains\n", "  implicit none\ncontains\n", 6),
        ("n = 32", "n = 16", 6),
        ("  ! the weights\n", "", 1),
    ];
    (text, edits)
}

/// Edits of a host's specification part, one after the other, each
/// analysed from the last: what no procedure mentions (comments, blank
/// lines, a new array, the alignment of an array one procedure uses) keeps
/// the other procedures' analyses, moved onto the new host text; what they
/// may all see (IMPLICIT, USE, PROCESSORS, a parameter) analyses them all.
/// Each ends as a fresh open does.
#[test]
fn host_specification_edits_end_like_a_fresh_open() {
    let (mut text, edits) = host_document();
    let settings = settings();
    let mut previous: Parse = analyse(Rope::from_str(&text), SourceForm::Free, None, &settings);
    let mut random = Random::new(30);
    for (from, to, at_most) in edits {
        assert!(text.contains(from), "{from:?}");
        text = text.replacen(from, to, 1);
        let edited = analyse(Rope::from_str(&text), SourceForm::Free, Some(previous), &settings);
        let fresh = analyse(Rope::from_str(&text), SourceForm::Free, None, &settings);
        assert!(edited.computed_chunks <= at_most, "{from:?} -> {to:?}: {} chunks analysed", edited.computed_chunks);
        let probes = probes(&text, &fresh, &mut random);
        let (seen, fresh_seen) = (observe(&edited, &probes), observe(&fresh, &probes));
        for (idx, (a, b)) in seen.iter().zip(&fresh_seen).enumerate() {
            let what =
                LABELS.get(idx).map_or_else(|| format!("hover at {}", probes[idx - LABELS.len()]), |it| it.to_string());
            assert_eq!(a, b, "{from:?} -> {to:?}: the {what} differs");
        }
        previous = edited;
    }
}

/// The long version: `HPF_EDIT_SEQUENCES` sequences (10,000 by default).
#[test]
#[ignore = "long: run with --ignored, bounded by HPF_EDIT_SEQUENCES"]
fn many_edit_sequences_end_like_a_fresh_open() {
    in_process(first_sequence()..sequences(10_000));
}

// Over stdio: the real binary, its `did_change`, scheduling and coalescing.

fn start(utf8: bool) -> Client {
    let encodings = if utf8 { json!(["utf-8", "utf-16"]) } else { json!(["utf-16"]) };
    let client = Client::builder()
        .capabilities(json!({"general": {"positionEncodings": encodings}}))
        .initialization_options(json!({"hpf": {"processors": 4}}))
        .timeout(Duration::from_secs(120))
        .exit_within(Duration::from_secs(10), false)
        .start();
    let result = &client.initialize_result;
    let negotiated = result["capabilities"]["positionEncoding"].as_str().unwrap_or("utf-16").to_string();
    assert_eq!(negotiated == "utf-8", utf8, "{result}");
    client
}

/// The diagnostics published for `uri` at `version`, related locations
/// without their URI; what else is pending about `uri` is dropped.
fn diagnostics(client: &mut Client, uri: &str, version: i64) -> Vec<Value> {
    let diagnostics = without_related_uris(client.diagnostics(uri, version));
    client.pending.retain(|it| it["params"]["uri"] != uri);
    diagnostics
}

/// Hovers at `probes` and every inlay hint: what an editor shows.
fn observe_over_stdio(client: &mut Client, uri: &str, text: &str, probes: &[usize], utf16: bool) -> Vec<Value> {
    let mut res = Vec::new();
    let end = position(text, text.len(), utf16);
    let range = json!({"start": {"line": 0, "character": 0}, "end": {"line": end.line + 1, "character": 0}});
    res.push(client.request("textDocument/inlayHint", json!({"textDocument": {"uri": uri}, "range": range})));
    for probe in probes {
        let at = position(text, *probe, utf16);
        let params = json!({"textDocument": {"uri": uri}, "position": {"line": at.line, "character": at.character}});
        res.push(client.request("textDocument/hover", params.clone()));
        // Into the host, for a name a procedure's host declares.
        res.push(client.request("textDocument/definition", params.clone()));
        let mut references = params;
        references["context"] = json!({"includeDeclaration": true});
        res.push(client.request("textDocument/references", references));
    }
    for method in ["textDocument/documentSymbol", "textDocument/foldingRange", "textDocument/semanticTokens/full"] {
        res.push(client.request(method, json!({"textDocument": {"uri": uri}})));
    }
    // Locations name the document, which differs between the edited and the fresh one.
    res.into_iter().map(|it| serde_json::from_str(&it.to_string().replace(uri, "DOCUMENT")).expect("JSON")).collect()
}

fn over_stdio(count: u64) {
    let corpus = corpus();
    for utf8 in [false, true] {
        let mut client = start(utf8);
        let utf16 = !utf8;
        for seed in 0..count {
            let mut random = Random::new(seed ^ 0xabcd);
            let shaped;
            let start = if random.chance(33) {
                shaped = module_shaped(&mut random);
                &shaped
            } else {
                &corpus[random.below(corpus.len())]
            };
            let mut text = start.text.clone();
            if random.chance(25) && !text.contains('\r') {
                text = text.replace('\n', "\r\n");
            }
            let uri = format!("file:///hpf-ls-edits/{seed}/edited-{}", start.name);
            let fresh_uri = format!("file:///hpf-ls-edits/{seed}/fresh-{}", start.name);
            client.open(&uri, &text);
            let mut editor = Editor { text, undo: Vec::new() };
            let mut version = 1;
            for _ in 0..1 + random.below(40) {
                let batch: Vec<TextDocumentContentChangeEvent> =
                    (0..1 + random.below(3)).map(|_| change_for(&mut editor, &mut random, &corpus, utf16)).collect();
                version += 1;
                client.notify(
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": batch}),
                );
            }
            let edited = diagnostics(&mut client, &uri, version);
            client.open(&fresh_uri, &editor.text);
            let fresh = diagnostics(&mut client, &fresh_uri, 1);
            let context =
                || format!("sequence {seed} from {} (utf-8: {utf8})\n--- text ---\n{}", start.name, editor.text);
            assert_eq!(edited, fresh, "diagnostics differ: {}", context());
            let probes: Vec<usize> =
                (0..6).map(|_| point_at(&editor.text, random.below(editor.text.len() + 1))).collect();
            let seen = observe_over_stdio(&mut client, &uri, &editor.text, &probes, utf16);
            let fresh_seen = observe_over_stdio(&mut client, &fresh_uri, &editor.text, &probes, utf16);
            assert_eq!(seen, fresh_seen, "hovers, hints or symbols differ: {}", context());
            for it in [&uri, &fresh_uri] {
                client.notify("textDocument/didClose", json!({"textDocument": {"uri": it}}));
            }
        }
        client.shutdown();
    }
}

#[test]
fn edit_sequences_over_stdio_end_like_a_fresh_open() {
    over_stdio(FAST_STDIO_SEQUENCES);
}

/// The host edits of [`host_document`] over stdio, one `didChange` each:
/// the published diagnostics (whose JSON a procedure moved onto its new
/// host keeps when nothing it points at in the host moved) are those of a fresh open.
#[test]
fn host_specification_edits_over_stdio_publish_what_a_fresh_open_does() {
    let (mut text, edits) = host_document();
    let mut client = start(true);
    let uri = "file:///hpf-ls-edits/host/edited.f90";
    client.open(uri, &text);
    diagnostics(&mut client, uri, 1);
    for (version, (from, to, _)) in (2..).zip(edits) {
        text = text.replacen(from, to, 1);
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
        );
        let edited = diagnostics(&mut client, uri, version);
        let fresh_uri = format!("file:///hpf-ls-edits/host/fresh-{version}.f90");
        client.open(&fresh_uri, &text);
        let fresh = diagnostics(&mut client, &fresh_uri, 1);
        let edited = serde_json::to_string(&edited).expect("JSON").replace(uri, "DOCUMENT");
        let fresh = serde_json::to_string(&fresh).expect("JSON").replace(&fresh_uri, "DOCUMENT");
        assert_eq!(edited, fresh, "{from:?} -> {to:?}");
        client.notify("textDocument/didClose", json!({"textDocument": {"uri": fresh_uri}}));
    }
    client.shutdown();
}

/// The long version over stdio: `HPF_EDIT_SEQUENCES / 20` sequences per encoding.
#[test]
#[ignore = "long: run with --ignored, bounded by HPF_EDIT_SEQUENCES"]
fn many_edit_sequences_over_stdio_end_like_a_fresh_open() {
    over_stdio((sequences(10_000) / 20).max(1));
}
