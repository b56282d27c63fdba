//! Pictures of loops: golden text pictures and the structure of the SVG
//! (cells per processor, one arrow per message, counts in the labels), for
//! the seed's worked example and a 2-D Jacobi halo; the what-if table and
//! the DISTRIBUTE rewrite.

use std::collections::BTreeSet;

use analysis::picture::{loop_at_line, loop_picture, render_compact, render_svg, render_text, Grid, LoopPicture};
use analysis::whatif::{redistribute_actions, render_table, what_if_loop};
use analysis::{FileAnalysis, ModelConfig};
use expect_test::expect;
use syntax::{SourceForm, TextRange};

const SEED: &str = include_str!("../../../tests/corpus/seed_fig6.f90");
const JACOBI: &str = include_str!("../../../tests/corpus/jacobi2d_block_block.f90");

fn analyse(text: &str) -> FileAnalysis {
    analysis::analyze(text, SourceForm::Free, ModelConfig { number_of_processors: None })
}

/// The picture of the loop on the 1-based `line`.
fn picture(text: &str, line: usize) -> LoopPicture {
    let analysis = analyse(text);
    let idx = loop_at_line(&analysis, text, line - 1).expect("a loop at the line");
    loop_picture(&analysis, text, idx)
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|it| it.contains(needle)).expect("the line is there") + 1
}

/// Every `<g class="message" ...>` as (from, to, elements, label text).
fn messages(svg: &str) -> Vec<(u32, u32, u64, String)> {
    svg.lines()
        .filter(|it| it.starts_with("<g class=\"message\""))
        .map(|line| {
            let attr = |name: &str| {
                let start = line.find(&format!("{name}=\"")).expect("attribute") + name.len() + 2;
                line[start..start + line[start..].find('"').unwrap()].to_string()
            };
            let text_start = line.rfind("\">").unwrap();
            let label = line[..line.rfind("</text>").unwrap()][text_start + 2..].to_string();
            (
                attr("data-from").parse().unwrap(),
                attr("data-to").parse().unwrap(),
                attr("data-elements").parse().unwrap(),
                label,
            )
        })
        .collect()
}

fn count(svg: &str, needle: &str) -> usize {
    svg.matches(needle).count()
}

#[test]
fn seed_text_picture() {
    let picture = picture(SEED, line_of(SEED, "DO I = 2, 16"));
    expect![[r#"
        DO I = 2, 16 (line 12)
        iterations run where A(I) lives, loop triple [2:16:1]
        target A(16) distributed (BLOCK) onto P(4)

        position            | 1  2  3  4| 5  6  7  8| 9 10 11 12|13 14 15 16|
        processor           | 1  1  1  1| 2  2  2  2| 3  3  3  3| 4  4  4  4|
        iterations (I)      | .  2  3  4| 5  6  7  8| 9 10 11 12|13 14 15 16|
        A declared [1:16:1] | 1  2  3  4| 5  6  7  8| 9 10 11 12|13 14 15 16|
        B declared [1:15:1] | 1  2  3  4| 5  6  7  8| 9 10 11 12|13 14 15  .|
        B optimal [2:16:1]  | .  1  2  3| 4  5  6  7| 8  9 10 11|12 13 14 15|
        (| separates processors; '.' nothing there)

        accesses:
          A(I) (home): declared [1:16:1], optimal [1:16:1], local
          B(I-1) (read): declared [1:15:1], optimal [2:16:1], shift by +1: 3 element(s) in 3 message(s) before the loop

        messages before the loop:
          P(1) -> P(2)  B: 1 element (B(4))
          P(2) -> P(3)  B: 1 element (B(8))
          P(3) -> P(4)  B: 1 element (B(12))

        total: 3 elements in 3 messages
    "#]]
    .assert_eq(&render_text(&picture));
}

#[test]
fn seed_svg_structure() {
    let picture = picture(SEED, line_of(SEED, "DO I = 2, 16"));
    let svg = render_svg(&picture);
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert_eq!(count(&svg, "<g"), count(&svg, "</g>"), "balanced groups");
    assert_eq!(count(&svg, "<text"), count(&svg, "</text>"), "text is text");
    // The target row: four cells per processor, blocks of 4.
    for proc in 1..=4 {
        assert_eq!(count(&svg, &format!("<g class=\"cell\" data-proc=\"{proc}\"")), 4, "cells of P({proc})");
    }
    // The iterations I = 2..16 and the 15 elements of B at both alignments.
    assert_eq!(count(&svg, "<g class=\"iteration\""), 15);
    assert_eq!(count(&svg, "<g class=\"optimal\""), 15);
    // One arrow per message, P(1)->P(2), P(2)->P(3), P(3)->P(4), carrying B(4), B(8), B(12).
    let arrows = messages(&svg);
    assert_eq!(
        arrows,
        vec![
            (1, 2, 1, "P(1)→P(2) B(4): 1 element".to_string()),
            (2, 3, 1, "P(2)→P(3) B(8): 1 element".to_string()),
            (3, 4, 1, "P(3)→P(4) B(12): 1 element".to_string()),
        ]
    );
    assert_eq!(count(&svg, "marker-end=\"url(#arrowhead)\""), 3);
    // A legend with every processor.
    for proc in 1..=4 {
        assert!(svg.contains(&format!(">P({proc})</text>")));
    }
}

#[test]
fn seed_compact_picture_for_hovers() {
    let picture = picture(SEED, line_of(SEED, "DO I = 2, 16"));
    let compact = render_compact(&picture);
    assert!(compact.contains("iterations (I)      | .  2  3  4| 5"), "{compact}");
    assert!(compact.contains("P(3) -> P(4)  B: 1 element (B(12))"), "{compact}");
    assert!(compact.lines().count() < 14, "compact: {compact}");
}

#[test]
fn jacobi_text_picture() {
    let picture = picture(JACOBI, line_of(JACOBI, "do j = 2, n-1"));
    let Grid::Plane(grid) = &picture.grid else { panic!("a 2-D picture: {:?}", picture.grid) };
    assert_eq!(grid.extent, [24, 24]);
    expect![[r#"
        do i = 2, n-1 (line 22)
        iterations run where v(i, j) lives, loop triple [2:23:1] x [2:23:1]
        target v(24,24) distributed (BLOCK,BLOCK) onto Q(2,2)

        dimension 1 down (1..24), dimension 2 across (1..24)
          ............|............
          .1111111111#|#3333333333.
          .1111111111#|#3333333333.
          .1111111111#|#3333333333.
          .1111111111#|#3333333333.
          .1111111111#|#3333333333.
          .1111111111#|#3333333333.
          .1111111111#|#3333333333.
          .1111111111#|#3333333333.
          .1111111111#|#3333333333.
          .1111111111#|#3333333333.
          .###########|###########.
          -------------------------
          .###########|###########.
          .2222222222#|#4444444444.
          .2222222222#|#4444444444.
          .2222222222#|#4444444444.
          .2222222222#|#4444444444.
          .2222222222#|#4444444444.
          .2222222222#|#4444444444.
          .2222222222#|#4444444444.
          .2222222222#|#4444444444.
          .2222222222#|#4444444444.
          .2222222222#|#4444444444.
          ............|............
        (digit: the processor that runs the iteration there, 1=Q(1,1) 2=Q(2,1) 3=Q(1,2) 4=Q(2,2); '#' an element that travels; '.' no iteration)

        accesses:
          v(i, j) (home): declared [1:24:1] x [1:24:1], optimal [1:24:1] x [1:24:1], local
          u(i-1, j) (read): declared [1:24:1] x [1:24:1], no optimal triple (halo), halo of width 1:1,1:1: 22 element(s) in 2 message(s) before the loop
          u(i+1, j) (read): declared [1:24:1] x [1:24:1], no optimal triple (halo), halo of width 1:1,1:1: 22 element(s) in 2 message(s) before the loop
          u(i, j-1) (read): declared [1:24:1] x [1:24:1], no optimal triple (halo), halo of width 1:1,1:1: 22 element(s) in 2 message(s) before the loop
          u(i, j+1) (read): declared [1:24:1] x [1:24:1], no optimal triple (halo), halo of width 1:1,1:1: 22 element(s) in 2 message(s) before the loop

        messages before the loop:
          Q(1,1) -> Q(2,1)  u: 11 elements (u(12,2), u(12,3), u(12,4), u(12,5), u(12,6), u(12,7), ...)
          Q(1,2) -> Q(2,2)  u: 11 elements (u(12,13), u(12,14), u(12,15), u(12,16), u(12,17), u(12,18), ...)
          Q(2,1) -> Q(1,1)  u: 11 elements (u(13,2), u(13,3), u(13,4), u(13,5), u(13,6), u(13,7), ...)
          Q(2,2) -> Q(1,2)  u: 11 elements (u(13,13), u(13,14), u(13,15), u(13,16), u(13,17), u(13,18), ...)
          Q(1,1) -> Q(1,2)  u: 11 elements (u(2,12), u(3,12), u(4,12), u(5,12), u(6,12), u(7,12), ...)
          Q(2,1) -> Q(2,2)  u: 11 elements (u(13,12), u(14,12), u(15,12), u(16,12), u(17,12), u(18,12), ...)
          Q(1,2) -> Q(1,1)  u: 11 elements (u(2,13), u(3,13), u(4,13), u(5,13), u(6,13), u(7,13), ...)
          Q(2,2) -> Q(2,1)  u: 11 elements (u(13,13), u(14,13), u(15,13), u(16,13), u(17,13), u(18,13), ...)

        total: 88 elements in 8 messages
    "#]]
    .assert_eq(&render_text(&picture));
}

#[test]
fn jacobi_svg_structure() {
    let picture = picture(JACOBI, line_of(JACOBI, "do j = 2, n-1"));
    let svg = render_svg(&picture);
    assert_eq!(count(&svg, "<g"), count(&svg, "</g>"), "balanced groups");
    // 24 x 24 cells, a 12 x 12 block per processor of the 2 x 2 grid.
    for proc in 1..=4 {
        let cells = count(&svg, &format!("class=\"cell\" data-proc=\"{proc}\""))
            + count(&svg, &format!("class=\"cell halo\" data-proc=\"{proc}\""));
        assert_eq!(cells, 144, "cells of processor {proc}");
    }
    // The halo strips: rows 12 and 13 and columns 12 and 13 inside 2..23, once each.
    let strips: BTreeSet<(i64, i64)> = (2..=23).flat_map(|k| [(12, k), (13, k), (k, 12), (k, 13)]).collect();
    assert_eq!(count(&svg, "class=\"cell halo\""), strips.len());
    // One arrow per message: each neighbour pair both ways, 11 elements each, no diagonal.
    let arrows = messages(&svg);
    assert_eq!(arrows.len(), 8);
    let pairs: BTreeSet<(u32, u32)> = arrows.iter().map(|(from, to, _, _)| (*from, *to)).collect();
    assert_eq!(pairs, BTreeSet::from([(1, 2), (2, 1), (3, 4), (4, 3), (1, 3), (3, 1), (2, 4), (4, 2)]));
    for (_, _, elements, label) in &arrows {
        assert_eq!(*elements, 11);
        assert_eq!(label, "u: 11");
    }
}

#[test]
fn what_if_table_of_the_seed() {
    let analysis = analyse(SEED);
    let idx = loop_at_line(&analysis, SEED, line_of(SEED, "DO I = 2, 16") - 1).unwrap();
    let table = what_if_loop(&analysis, idx).expect("a table");
    expect![[r#"
        What if A were distributed otherwise (this loop):

        | distribution                 |     elements | messages |
        |------------------------------|-------------:|---------:|
        | (BLOCK) on 4 current         |            3 |        3 |
        | (CYCLIC) on 4                |           15 |        4 |
        | (CYCLIC(2)) on 4             |            7 |        4 |
        | (BLOCK) on 2                 |            1 |        1 |
        | (BLOCK) on 8                 |            7 |        7 |
    "#]]
    .assert_eq(&render_table(&analysis, &table));
    // BLOCK is already the cheapest on four processors: no rewrite is offered.
    assert!(table.best().is_none());
    let range = TextRange::empty(SEED.rfind("A(I) = B(I-1)").unwrap());
    assert!(redistribute_actions(&analysis, SEED, range).is_empty());
}

#[test]
fn rewrite_a_cyclic_distribution_to_the_cheapest() {
    let text = SEED.replace("DISTRIBUTE A(BLOCK)", "DISTRIBUTE A(CYCLIC)");
    let analysis = analyse(&text);
    let range = TextRange::empty(text.rfind("A(I) = B(I-1)").unwrap());
    let actions = redistribute_actions(&analysis, &text, range);
    assert_eq!(actions.len(), 1);
    let action = &actions[0];
    assert_eq!(
        action.title,
        "Distribute A (BLOCK) instead of (CYCLIC): 15 → 3 elements, 4 → 3 messages over the unit's 2 loops"
    );
    assert_eq!(action.edits.len(), 1);
    let edit = &action.edits[0];
    let mut after = text.clone();
    after.replace_range(edit.range.to_range(), &edit.new_text);
    assert!(after.contains("!HPF$ DISTRIBUTE A(BLOCK) ONTO P\n"), "{after}");
}

#[test]
fn markdown_hover_on_a_loop_ends_with_the_picture() {
    let analysis = analyse(SEED);
    let offset = SEED.find("DO I = 2, 16").unwrap() + 1;
    let hover = analysis::ide::hover(&analysis, SEED, offset, true).expect("a hover");
    let picture = hover.contents.rsplit("```text\n").next().expect("a text block");
    assert!(hover.contents.trim_end().ends_with("```"), "{}", hover.contents);
    assert!(picture.contains("processor           | 1  1  1  1| 2"), "{picture}");
    assert!(picture.contains("P(1) -> P(2)  B: 1 element (B(4))"), "{picture}");
    // Plain-text clients get no picture.
    let plain = analysis::ide::hover(&analysis, SEED, offset, false).expect("a hover");
    assert!(!plain.contents.contains("```"), "{}", plain.contents);
}

#[test]
fn large_targets_are_described_not_drawn() {
    let text = "program big\n  integer, parameter :: n = 1000000\n  real :: a(n), b(n)\n!HPF$ PROCESSORS P(4)\n!HPF$ DISTRIBUTE A(BLOCK) ONTO P\n!HPF$ ALIGN B(I) WITH A(I)\n  do i = 2, n\n    a(i) = b(i-1)\n  end do\nend program big\n";
    let picture = picture(text, 7);
    assert_eq!(picture.grid, Grid::None);
    let rendered = render_text(&picture);
    assert!(
        rendered.contains("dimension 1: blocks of 250000, P(1): 1..250000, P(2): 250001..500000, P(3): 500001..750000, P(4): 750001..1000000"),
        "{rendered}"
    );
    assert!(rendered.contains("P(3) -> P(4)  b: 1 element\n"), "{rendered}");
    assert_eq!(messages(&render_svg(&picture)).len(), 3);
    let cyclic = text.replace("A(BLOCK)", "A(CYCLIC(3))");
    let rendered = render_text(&self::picture(&cyclic, 7));
    assert!(rendered.contains("dimension 1: blocks of 3 dealt round-robin to P(1)..P(4)"), "{rendered}");
}
