//! Prints the raw tree-sitter tree of a Fortran file (named, ERROR and MISSING nodes
//! with byte ranges), before any fixed-form normalisation or lowering:
//! `cargo run -p syntax --example dump -- FILE`.

fn main() {
    let path = std::env::args().nth(1).unwrap();
    let text = std::fs::read_to_string(path).unwrap();
    let mut p = tree_sitter::Parser::new();
    p.set_language(&tree_sitter_fortran::LANGUAGE.into()).unwrap();
    let t = p.parse(&text, None).unwrap();
    let mut c = t.walk();
    let mut depth = 0;
    loop {
        let n = c.node();
        let fname = c.field_name().map(|f| format!("{f}: ")).unwrap_or_default();
        if n.is_named() || n.is_error() || n.is_missing() {
            let snippet: String = text[n.byte_range()].chars().take(40).collect::<String>().replace('\n', "\\n");
            println!(
                "{}{}{}{} [{}..{}] {:?}",
                "  ".repeat(depth),
                fname,
                n.kind(),
                if n.is_missing() { " MISSING" } else { "" },
                n.start_byte(),
                n.end_byte(),
                snippet
            );
        }
        if c.goto_first_child() {
            depth += 1;
            continue;
        }
        loop {
            if c.goto_next_sibling() {
                break;
            }
            if !c.goto_parent() {
                return;
            }
            depth -= 1;
        }
    }
}
