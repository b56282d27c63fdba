//! The union of the transfers of one array's references in a loop
//! (`analysis::fetch::union_transfer`), what a fetch of all of them together
//! moves: equal to the closed-form count for a single reference on every
//! corpus loop, and equal to counts made element by element outside the
//! analysis (a brute-force script over the iterations) for stencils whose
//! references share elements.

use std::collections::BTreeMap;
use std::path::Path;

use analysis::fetch::union_transfer;
use analysis::loops::{Access, AccessAttr, LoopReport};
use analysis::{FileAnalysis, ModelConfig};
use syntax::SourceForm;

fn corpus() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus")
}

fn analyse(name: &str, processors: Option<i64>) -> (String, FileAnalysis) {
    let text = std::fs::read_to_string(corpus().join(name)).unwrap();
    let form = SourceForm::from_path(Path::new(name));
    let analysis = analysis::analyze(&text, form, ModelConfig { number_of_processors: processors });
    (text, analysis)
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

/// The references (or updates) with a transfer, per array, of the loop at `line`.
fn groups<'a>(
    text: &str,
    analysis: &'a FileAnalysis,
    line: usize,
) -> (&'a LoopReport, BTreeMap<String, Vec<&'a Access>>) {
    let report = analysis
        .loops
        .iter()
        .filter(|it| line_of(text, it.range.start) == line)
        .find(|it| it.accesses.iter().any(|access| access.transfer.is_some()))
        .unwrap_or_else(|| panic!("no loop with transfers at line {line}"));
    let mut by_array: BTreeMap<String, Vec<&Access>> = BTreeMap::new();
    for access in report.accesses.iter().filter(|it| it.transfer.is_some()) {
        by_array.entry(analysis.model.symbol(access.array).name.text.to_lowercase()).or_default().push(access);
    }
    (report, by_array)
}

fn messages_and_elements(count: &analysis::transfer::TransferCount) -> (usize, u64) {
    (count.messages.len(), count.moved_elements)
}

#[test]
fn a_single_reference_counts_what_the_closed_form_counts() {
    let mut checked = 0;
    for entry in std::fs::read_dir(corpus()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let extension = path.extension().map(|it| it.to_string_lossy().to_string()).unwrap_or_default();
        if !["f90", "f", "for", "hpf"].contains(&extension.as_str()) {
            continue;
        }
        for processors in [Some(4), Some(3)] {
            let (_, analysis) = analyse(&name, processors);
            for report in &analysis.loops {
                for access in &report.accesses {
                    let Some(count) = access.transfer.as_ref().and_then(|it| it.count.as_ref()) else { continue };
                    if let Some(union) = union_transfer(&analysis.model_of_loop(report), report, &[access]) {
                        assert_eq!(&union, count, "{name}: {:?}", access.range);
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 300, "only {checked} references compared");
}

/// `stencil9_block_block.f90` on its P(2,3): the figures of a script that
/// lists every (source, destination, element) of the loops' iterations.
#[test]
fn a_stencil_moves_each_shared_element_once() {
    let (text, analysis) = analyse("stencil9_block_block.f90", None);
    // Line 40: all nine neighbours of A.
    let (report, by_array) = groups(&text, &analysis, 41);
    let a = &by_array["a"];
    assert_eq!(a.len(), 8);
    let union = union_transfer(&analysis.model, report, a).unwrap();
    assert_eq!(messages_and_elements(&union), (15, 106));
    let pairs: Vec<(u32, u32, u64)> = union.messages.iter().map(|it| (it.from, it.to, it.elements)).collect();
    assert_eq!(
        pairs,
        vec![
            (0, 1, 10),
            (0, 2, 9),
            (0, 3, 2),
            (1, 3, 9),
            (2, 0, 9),
            (2, 1, 2),
            (2, 3, 10),
            (2, 4, 9),
            (2, 5, 2),
            (3, 1, 9),
            (3, 5, 9),
            (4, 2, 9),
            (4, 3, 2),
            (4, 5, 6),
            (5, 3, 9)
        ]
    );
    let sum: u64 = a.iter().map(|it| it.transfer.as_ref().unwrap().count.as_ref().unwrap().moved_elements).sum();
    assert!(sum > 106, "the references share elements: their sum {sum} counts them again");
    // Line 46, the FORALL: B(i-1, j+1), B(i+1, j-1) (B(i, j) is on the home's cells).
    let (report, by_array) = groups(&text, &analysis, 46);
    let union = union_transfer(&analysis.model, report, &by_array["b"]).unwrap();
    assert_eq!(messages_and_elements(&union), (13, 85));
    // Line 48: A(i+1, j+1) and A(i-1, j-1) share nothing: the union is the sum.
    let (report, by_array) = groups(&text, &analysis, 49);
    let union = union_transfer(&analysis.model, report, &by_array["a"]).unwrap();
    assert_eq!(messages_and_elements(&union), (13, 82));
}

/// `npb_rhs.f` on 4 processes: U(I-2) and U(I-1) both bring the element
/// just left of each block, U(I+1) and U(I+2) the one just right.
#[test]
fn a_wide_halo_counts_its_elements_once() {
    let (text, analysis) = analyse("npb_rhs.f", Some(4));
    let (report, by_array) = groups(&text, &analysis, 36);
    let u = union_transfer(&analysis.model, report, &by_array["u"]).unwrap();
    assert_eq!(messages_and_elements(&u), (6, 12));
    let flux = union_transfer(&analysis.model, report, &by_array["flux"]).unwrap();
    assert_eq!(messages_and_elements(&flux), (6, 6));
    assert!(by_array["u"].iter().all(|it| it.attr == AccessAttr::Reference));
}
