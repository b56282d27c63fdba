//! Prints the lowered AST and the syntax diagnostics of a file (debug aid).
fn main() {
    for path in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&path).unwrap();
        let file = syntax::parse(&text, syntax::SourceForm::from_path(std::path::Path::new(&path)));
        let index = syntax::LineIndex::new(&text);
        println!("== {path}: {} units, {} directives", file.units.len(), file.directives().len());
        for d in &file.diagnostics {
            let (l, c) = index.line_col(&text, d.range.start);
            println!("  {}:{}: {} {}", l + 1, c + 1, d.code.as_str(), d.message);
        }
        if std::env::var("AST").is_ok() {
            println!("{:#?}", file.units);
        }
    }
}
