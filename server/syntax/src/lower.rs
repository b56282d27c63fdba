//! Lowering of the tree-sitter tree to the owned AST of `ast.rs`.
//!
//! Recursion here is bounded by [`MAX_DEPTH`]: deeper constructs (a
//! 100,000-deep parenthesis, say) are cut off with one `HPF004`
//! diagnostic instead of overflowing the stack. Half-typed code arrives as
//! `ERROR` nodes; their children are lowered as if the error were not
//! there, so a missing `END DO` loses one loop, not the whole unit.

use tree_sitter::Node;

use crate::ast::{Decl, DeclAttr, DeclEntity, LoopControl, Stmt, StmtKind, Unit, UnitKind};
use std::sync::Arc;

use crate::{BinaryOp, Code, Diagnostic, Expr, ExprKind, Name, Subscript, TextRange, UnaryOp};

/// Deepest nesting of statements plus expressions that is lowered.
pub(crate) const MAX_DEPTH: usize = 256;

pub(crate) struct Lowerer<'a> {
    /// The text tree-sitter parsed (normalised for fixed form).
    text: &'a str,
    /// The user's text: every range is moved to its char boundaries, and
    /// names are spelled from it.
    user_text: &'a str,
    diagnostics: &'a mut Vec<Diagnostic>,
    reported_too_deep: bool,
}

fn unit_kind(node_kind: &str) -> Option<UnitKind> {
    Some(match node_kind {
        "program" | "program_statement" => UnitKind::Program,
        "module" | "module_statement" => UnitKind::Module,
        "subroutine" | "subroutine_statement" => UnitKind::Subroutine,
        "function" | "function_statement" => UnitKind::Function,
        "block_data" | "block_data_statement" => UnitKind::BlockData,
        _ => return None,
    })
}

fn is_unit_header(kind: &str) -> bool {
    kind.ends_with("_statement") && unit_kind(kind).is_some()
}

fn named_children(node: Node) -> Vec<Node> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

fn all_children(node: Node) -> Vec<Node> {
    let mut cursor = node.walk();
    node.children(&mut cursor).collect()
}

/// Statements that belong to the specification part of a unit.
fn is_specification(kind: &str) -> bool {
    matches!(
        kind,
        "use_statement"
            | "implicit_statement"
            | "variable_declaration"
            | "variable_modification"
            | "parameter_statement"
            | "import_statement"
            | "derived_type_definition"
            | "interface"
            | "common_statement"
            | "data_statement"
            | "equivalence_statement"
            | "include_statement"
            | "public_statement"
            | "private_statement"
            | "save_statement"
            | "external_statement"
            | "intrinsic_statement"
            | "namelist_statement"
            | "enum"
    )
}

fn is_ignored(kind: &str) -> bool {
    kind == "comment"
        || kind.starts_with("end_")
        || kind == "statement_label"
        || kind == "contains_statement"
        || kind == "preproc_include"
        || kind == "preproc_def"
}

impl<'a> Lowerer<'a> {
    pub(crate) fn new(text: &'a str, user_text: &'a str, diagnostics: &'a mut Vec<Diagnostic>) -> Lowerer<'a> {
        Lowerer { text, user_text, diagnostics, reported_too_deep: false }
    }

    fn range(&self, node: Node) -> TextRange {
        TextRange::new(node.start_byte(), node.end_byte()).snap_to_chars(self.user_text)
    }

    fn text(&self, node: Node) -> &'a str {
        self.text.get(node.byte_range()).unwrap_or("")
    }

    fn name(&self, node: Node) -> Name {
        let range = self.range(node);
        let spelled = &self.user_text[range.to_range()];
        if spelled.contains(char::is_whitespace) {
            // Fixed form `SU M`, squeezed to `SUM` in the parser's text: the
            // range grows over the user's blanks to the name's last letter.
            let squeezed: String = self.text(node).chars().filter(|it| !it.is_whitespace()).collect();
            let mut letters = 0;
            let mut end = range.start;
            for (offset, ch) in self.user_text[range.start..].char_indices() {
                if letters == squeezed.len() || ch == '\n' {
                    break;
                }
                if !ch.is_whitespace() {
                    letters += 1;
                }
                end = range.start + offset + ch.len_utf8();
            }
            return Name::new(&squeezed, TextRange::new(range.start, end.max(range.end)));
        }
        Name::new(spelled, range)
    }

    fn too_deep(&mut self, node: Node) -> bool {
        if !self.reported_too_deep {
            self.reported_too_deep = true;
            self.diagnostics.push(Diagnostic::new(
                Code::TooDeep,
                self.range(node),
                format!("nesting deeper than {MAX_DEPTH} levels; the code inside is not analysed"),
            ));
        }
        true
    }

    /// Lowers the program units of a `translation_unit`.
    pub(crate) fn units(&mut self, root: Node) -> Vec<Arc<Unit>> {
        let mut units = Vec::new();
        // Statements outside any unit node (a main program without PROGRAM,
        // or the pieces of a unit that ended up in an ERROR node).
        let mut loose: Option<UnitBuilder> = None;
        let mut pending = named_children(root);
        pending.reverse();
        while let Some(child) = pending.pop() {
            let kind = child.kind();
            if child.is_error() {
                // Lower the pieces in order, as if the error were absent.
                pending.extend(named_children(child).into_iter().rev());
                continue;
            }
            if let Some(unit_kind) = unit_kind(kind).filter(|_| !kind.ends_with("_statement")) {
                if let Some(builder) = loose.take() {
                    units.push(Arc::new(builder.finish()));
                }
                units.push(Arc::new(self.unit(child, unit_kind, 0)));
                continue;
            }
            if is_unit_header(kind) {
                if let Some(builder) = loose.take() {
                    units.push(Arc::new(builder.finish()));
                }
                let mut builder = UnitBuilder::new(unit_kind(kind).expect("a unit header"), self.range(child));
                self.header(&mut builder, child);
                loose = Some(builder);
                continue;
            }
            if kind.starts_with("end_") && unit_kind(kind.trim_start_matches("end_")).is_some() {
                if let Some(mut builder) = loose.take() {
                    builder.range = builder.range.cover(self.range(child));
                    units.push(Arc::new(builder.finish()));
                }
                continue;
            }
            if kind == "comment" {
                continue;
            }
            let builder =
                loose.get_or_insert_with(|| UnitBuilder::new(UnitKind::Program, TextRange::empty(child.start_byte())));
            self.unit_item(builder, child, 1);
        }
        if let Some(builder) = loose.take() {
            units.push(Arc::new(builder.finish()));
        }
        units
    }

    fn unit(&mut self, node: Node, kind: UnitKind, depth: usize) -> Unit {
        let mut builder = UnitBuilder::new(kind, self.range(node));
        builder.range = self.range(node);
        for child in named_children(node) {
            if is_unit_header(child.kind()) {
                builder.header = self.range(child);
                self.header(&mut builder, child);
            } else {
                self.unit_item(&mut builder, child, depth + 1);
            }
        }
        builder.finish()
    }

    fn header(&mut self, builder: &mut UnitBuilder, node: Node) {
        builder.header = self.range(node);
        builder.range = builder.range.cover(self.range(node));
        for child in named_children(node) {
            match child.kind() {
                "name" if builder.name.is_none() => builder.name = Some(self.name(child)),
                "parameters" => {
                    builder.dummies = named_children(child)
                        .into_iter()
                        .filter(|it| it.kind() == "identifier")
                        .map(|it| self.name(it))
                        .collect()
                }
                _ => {}
            }
        }
    }

    fn unit_item(&mut self, builder: &mut UnitBuilder, node: Node, depth: usize) {
        builder.range = builder.range.cover(self.range(node));
        let kind = node.kind();
        if depth > MAX_DEPTH && self.too_deep(node) {
            return;
        }
        if node.is_error() {
            for child in named_children(node) {
                if is_unit_header(child.kind()) {
                    continue;
                }
                self.unit_item(builder, child, depth + 1);
            }
            return;
        }
        match kind {
            "use_statement" => builder.uses.extend(
                named_children(node).into_iter().filter(|it| it.kind() == "module_name").map(|it| self.name(it)),
            ),
            "variable_declaration" | "variable_modification" => {
                let decl = self.declaration(node, depth);
                builder.decls.push(decl);
            }
            "parameter_statement" => {
                let decl = self.parameter_statement(node, depth);
                builder.decls.push(decl);
            }
            "common_statement" => {
                let decl = self.common_statement(node, depth);
                builder.decls.push(decl);
            }
            "implicit_statement" => builder.implicit.extend(crate::ImplicitRule::parse(self.text(node))),
            "internal_procedures" | "module_procedures" => {
                for child in named_children(node) {
                    if let Some(unit_kind) = unit_kind(child.kind()).filter(|_| !child.kind().ends_with("_statement")) {
                        let unit = self.unit(child, unit_kind, depth + 1);
                        builder.contains.push(unit);
                    }
                }
            }
            "interface" => {
                for child in named_children(node) {
                    if let Some(unit_kind) = unit_kind(child.kind()).filter(|_| !child.kind().ends_with("_statement")) {
                        let unit = self.unit(child, unit_kind, depth + 1);
                        builder.interfaces.push(unit);
                    }
                }
            }
            _ if is_specification(kind) || is_ignored(kind) => {}
            _ => {
                if let Some(stmt) = self.statement(node, depth) {
                    builder.execution_start.get_or_insert(node.start_byte());
                    builder.body.push(stmt);
                }
            }
        }
    }

    fn declaration(&mut self, node: Node, depth: usize) -> Decl {
        let mut decl = Decl {
            type_name: String::new(),
            type_kind: String::new(),
            attrs: Vec::new(),
            entities: Vec::new(),
            range: self.range(node),
        };
        for child in named_children(node) {
            match child.kind() {
                "intrinsic_type" | "derived_type" => {
                    let text = self.text(child);
                    let base = text.split(['(', '*']).next().unwrap_or("");
                    decl.type_name = base.split_whitespace().collect::<Vec<_>>().join(" ").to_ascii_lowercase();
                    decl.type_kind = text[base.len()..]
                        .chars()
                        .filter(|it| !it.is_whitespace())
                        .collect::<String>()
                        .to_ascii_lowercase();
                }
                "type_qualifier" => {
                    let text = self.text(child).trim().to_ascii_lowercase();
                    let word: String = text.chars().take_while(|it| it.is_ascii_alphabetic()).collect();
                    let attr = match word.as_str() {
                        "parameter" => DeclAttr::Parameter,
                        "dimension" => {
                            let dims = named_children(child)
                                .into_iter()
                                .find(|it| it.kind() == "argument_list")
                                .map(|list| self.subscripts(list, depth + 1))
                                .unwrap_or_default();
                            if dims.is_empty() {
                                // `DIMENSION A(10)` statement: the keyword alone.
                                continue;
                            }
                            DeclAttr::Dimension(dims)
                        }
                        "allocatable" => DeclAttr::Allocatable,
                        "pointer" => DeclAttr::Pointer,
                        "target" => DeclAttr::Target,
                        "intent" => DeclAttr::Intent,
                        _ => DeclAttr::Other(word),
                    };
                    decl.attrs.push(attr);
                }
                "identifier" | "sized_declarator" | "init_declarator" | "pointer_init_declarator" => {
                    if let Some(entity) = self.declarator(child, depth + 1) {
                        decl.entities.push(entity);
                    }
                }
                _ => {}
            }
        }
        decl
    }

    fn declarator(&mut self, node: Node, depth: usize) -> Option<DeclEntity> {
        match node.kind() {
            "identifier" => Some(DeclEntity { name: self.name(node), dims: None, init: None, range: self.range(node) }),
            "sized_declarator" => {
                let children = named_children(node);
                let name = children.iter().find(|it| it.kind() == "identifier")?;
                let dims = children.iter().find(|it| it.kind() == "size").map(|size| self.subscripts(*size, depth + 1));
                Some(DeclEntity { name: self.name(*name), dims, init: None, range: self.range(node) })
            }
            "init_declarator" | "pointer_init_declarator" => {
                let left = node.child_by_field_name("left")?;
                let mut entity = self.declarator(left, depth + 1)?;
                entity.init = node.child_by_field_name("right").map(|it| self.expr(it, depth + 1));
                entity.range = self.range(node);
                Some(entity)
            }
            _ => None,
        }
    }

    /// `COMMON /C/ X(10), Y`: the objects of the blocks, as a declaration
    /// without a type (the bounds it gives are the arrays' shapes).
    fn common_statement(&mut self, node: Node, depth: usize) -> Decl {
        let mut decl = Decl {
            type_name: String::new(),
            type_kind: String::new(),
            attrs: vec![DeclAttr::Other("common".to_string())],
            entities: Vec::new(),
            range: self.range(node),
        };
        for child in named_children(node) {
            if child.kind() == "variable_group" {
                // The block's name sits between the first two slashes.
                let mut slashes = 0;
                for item in all_children(child) {
                    if !item.is_named() && self.text(item) == "/" {
                        slashes += 1;
                    } else if slashes >= 2 && item.is_named() {
                        decl.entities.extend(self.declarator(item, depth + 1));
                    }
                }
            } else {
                decl.entities.extend(self.declarator(child, depth + 1));
            }
        }
        decl
    }

    fn parameter_statement(&mut self, node: Node, depth: usize) -> Decl {
        let mut decl = Decl {
            type_name: String::new(),
            type_kind: String::new(),
            attrs: vec![DeclAttr::Parameter],
            entities: Vec::new(),
            range: self.range(node),
        };
        for assignment in named_children(node).into_iter().filter(|it| it.kind() == "parameter_assignment") {
            let children = named_children(assignment);
            let Some(name) = children.first().filter(|it| it.kind() == "identifier") else { continue };
            let init = children.get(1).map(|it| self.expr(*it, depth + 1));
            decl.entities.push(DeclEntity { name: self.name(*name), dims: None, init, range: self.range(assignment) });
        }
        decl
    }

    /// The header of a construct: its text up to the end of its first line.
    fn header_range(&self, node: Node) -> TextRange {
        let whole = TextRange::new(node.start_byte(), node.end_byte());
        let text = self.text(node);
        let end = text.find('\n').map_or(text.len(), |it| it);
        let end = text[..end].trim_end().len();
        TextRange::new(whole.start, whole.start + end).snap_to_chars(self.user_text)
    }

    /// Lowers the statements among `nodes`, flattening ERROR nodes.
    fn statements(&mut self, nodes: Vec<Node>, depth: usize) -> Vec<Stmt> {
        let mut res = Vec::new();
        for node in nodes {
            if node.is_error() {
                if depth <= MAX_DEPTH {
                    res.extend(self.statements(named_children(node), depth + 1));
                }
                continue;
            }
            if is_ignored(node.kind()) || is_specification(node.kind()) || node.kind().ends_with("_clause") {
                continue;
            }
            if let Some(stmt) = self.statement(node, depth) {
                res.push(stmt);
            }
        }
        res
    }

    /// Each kind of statement is lowered by a function of its own: in a
    /// debug build one function with every arm took about 9 KB of stack
    /// per nesting level, so 200 nested DO loops overflowed a 2 MiB stack
    /// before `MAX_DEPTH` was reached.
    fn statement(&mut self, node: Node, depth: usize) -> Option<Stmt> {
        if depth > MAX_DEPTH {
            self.too_deep(node);
            return None;
        }
        let children = named_children(node);
        let kind = match node.kind() {
            "do_loop" | "do_label_loop" => self.do_loop(&children, depth),
            "forall_statement" => self.forall(&children, depth),
            "where_statement" => self.where_construct(&children, depth),
            "if_statement" => self.if_construct(&children, depth),
            "assignment_statement" | "pointer_assignment_statement" => self.assignment(node, depth),
            "subroutine_call" => self.call(node, &children, depth),
            "print_statement" | "write_statement" => self.output(&children, depth),
            _ => self.other_statement(&children, depth),
        };
        Some(Stmt { kind, range: self.range(node), header: self.header_range(node) })
    }

    fn do_loop(&mut self, children: &[Node], depth: usize) -> StmtKind {
        let do_statement = children.iter().find(|it| it.kind() == "do_statement");
        // An F77 loop may end on an action statement (`10 Y(I) = S`), which
        // tree-sitter puts in the loop's end: it is the body's last statement.
        let mut nodes = Vec::new();
        for child in children.iter().copied().filter(|it| it.kind() != "do_statement") {
            if child.kind() == "end_do_label_loop_statement" {
                nodes.extend(named_children(child).into_iter().filter(|it| {
                    is_statement_like(it.kind())
                        && !(it.kind() == "keyword_statement" && self.text(*it).trim().eq_ignore_ascii_case("continue"))
                }));
            } else {
                nodes.push(child);
            }
        }
        let body = self.statements(nodes, depth + 1);
        let mut label = None;
        let mut control = None;
        let mut is_while = None;
        if let Some(do_statement) = do_statement {
            if let Some(it) = do_statement.child_by_field_name("do_label") {
                label = Some(self.text(it).trim().to_string());
            }
            for part in named_children(*do_statement) {
                match part.kind() {
                    "loop_control_expression" => control = self.loop_control(part, depth + 1),
                    "while_statement" => {
                        is_while = Some(
                            named_children(part)
                                .into_iter()
                                .find(|it| it.kind() == "parenthesized_expression")
                                .map(|it| self.expr(it, depth + 1)),
                        )
                    }
                    _ => {}
                }
            }
        }
        match is_while {
            Some(cond) => StmtKind::DoWhile { cond, body },
            None => StmtKind::Do { label, control, body },
        }
    }

    fn forall(&mut self, children: &[Node], depth: usize) -> StmtKind {
        let mut specs = Vec::new();
        let mut mask = None;
        let mut body_nodes = Vec::new();
        for child in children {
            match child.kind() {
                "triplet_spec" => specs.extend(self.loop_control(*child, depth + 1)),
                kind if is_expression(kind) && mask.is_none() && body_nodes.is_empty() => {
                    mask = Some(self.expr(*child, depth + 1))
                }
                _ => body_nodes.push(*child),
            }
        }
        StmtKind::Forall { specs, mask, body: self.statements(body_nodes, depth + 1) }
    }

    fn where_construct(&mut self, children: &[Node], depth: usize) -> StmtKind {
        let mut mask = None;
        let mut body_nodes = Vec::new();
        let mut elsewhere = Vec::new();
        for child in children {
            match child.kind() {
                "parenthesized_expression" if mask.is_none() && body_nodes.is_empty() => {
                    mask = Some(self.expr(*child, depth + 1))
                }
                "elsewhere_clause" => elsewhere.push(self.clause(*child, depth + 1)),
                _ => body_nodes.push(*child),
            }
        }
        StmtKind::Where { mask, body: self.statements(body_nodes, depth + 1), elsewhere }
    }

    fn if_construct(&mut self, children: &[Node], depth: usize) -> StmtKind {
        let mut cond = None;
        let mut body_nodes = Vec::new();
        let mut branches = Vec::new();
        for child in children {
            match child.kind() {
                "parenthesized_expression" if cond.is_none() && body_nodes.is_empty() => {
                    cond = Some(self.expr(*child, depth + 1))
                }
                "elseif_clause" | "else_clause" => branches.push(self.clause(*child, depth + 1)),
                _ => body_nodes.push(*child),
            }
        }
        branches.insert(0, (cond, self.statements(body_nodes, depth + 1)));
        StmtKind::If { branches }
    }

    fn assignment(&mut self, node: Node, depth: usize) -> StmtKind {
        let lhs = node.child_by_field_name("left").map(|it| self.expr(it, depth + 1));
        let rhs = node.child_by_field_name("right").map(|it| self.expr(it, depth + 1));
        match (lhs, rhs) {
            (Some(lhs), Some(rhs)) => StmtKind::Assign { lhs, rhs },
            (lhs, rhs) => StmtKind::Other { exprs: lhs.into_iter().chain(rhs).collect(), body: Vec::new() },
        }
    }

    fn call(&mut self, node: Node, children: &[Node], depth: usize) -> StmtKind {
        let name = node.child_by_field_name("subroutine").map(|it| self.name(it));
        let args = children
            .iter()
            .find(|it| it.kind() == "argument_list")
            .map(|list| self.arguments(*list, depth + 1))
            .unwrap_or_default();
        match name {
            Some(name) => StmtKind::Call { name, args },
            None => StmtKind::Other { exprs: args, body: Vec::new() },
        }
    }

    fn output(&mut self, children: &[Node], depth: usize) -> StmtKind {
        let items = children
            .iter()
            .filter(|it| it.kind() == "output_item_list")
            .flat_map(|it| named_children(*it))
            .filter(|it| is_expression(it.kind()))
            .map(|it| self.expr(it, depth + 1))
            .collect();
        StmtKind::Output { items }
    }

    fn other_statement(&mut self, children: &[Node], depth: usize) -> StmtKind {
        // Keep references and nested statements visible inside
        // constructs this layer does not model (SELECT CASE, BLOCK, ...).
        let mut exprs = Vec::new();
        let mut body_nodes = Vec::new();
        for child in children {
            if is_expression(child.kind()) {
                exprs.push(self.expr(*child, depth + 1));
            } else if let Some(allocation) = self.sized_allocation(*child, depth) {
                exprs.push(allocation);
            } else if is_statement_like(child.kind()) {
                body_nodes.push(*child);
            } else {
                body_nodes.extend(
                    named_children(*child)
                        .into_iter()
                        .filter(|it| is_statement_like(it.kind()) || is_expression(it.kind())),
                );
            }
        }
        let mut body = Vec::new();
        for child in body_nodes {
            if is_expression(child.kind()) {
                exprs.push(self.expr(child, depth + 1));
            } else if !is_ignored(child.kind()) {
                body.extend(self.statement(child, depth + 1));
            }
        }
        StmtKind::Other { exprs, body }
    }

    /// `A(0:N+1, M)` in an ALLOCATE statement, as a reference with its bounds.
    fn sized_allocation(&mut self, node: Node, depth: usize) -> Option<Expr> {
        if node.kind() != "sized_allocation" {
            return None;
        }
        match named_children(node)[..] {
            [name, size] if name.kind() == "identifier" && size.kind() == "size" => Some(Expr {
                kind: ExprKind::Ref { name: self.name(name), args: self.subscripts(size, depth + 1) },
                range: self.range(node),
            }),
            _ => None,
        }
    }

    /// An ELSE IF / ELSE / ELSEWHERE clause: its condition and statements.
    fn clause(&mut self, node: Node, depth: usize) -> (Option<Expr>, Vec<Stmt>) {
        let mut cond = None;
        let mut body_nodes = Vec::new();
        for child in named_children(node) {
            if child.kind() == "parenthesized_expression" && cond.is_none() && body_nodes.is_empty() {
                cond = Some(self.expr(child, depth + 1));
            } else {
                body_nodes.push(child);
            }
        }
        (cond, self.statements(body_nodes, depth + 1))
    }

    /// `I = 1, N, 2` of a DO, or `I = 1:N:2` of a FORALL.
    fn loop_control(&mut self, node: Node, depth: usize) -> Option<LoopControl> {
        let parts: Vec<Node> = named_children(node).into_iter().filter(|it| it.kind() != "comment").collect();
        let var = parts.first().filter(|it| it.kind() == "identifier")?;
        let lo = self.expr(*parts.get(1)?, depth + 1);
        let hi = self.expr(*parts.get(2)?, depth + 1);
        let step = parts.get(3).map(|it| self.expr(*it, depth + 1));
        Some(LoopControl { var: self.name(*var), lo, hi, step })
    }

    fn arguments(&mut self, list: Node, depth: usize) -> Vec<Expr> {
        named_children(list)
            .into_iter()
            .filter(|it| is_expression(it.kind()))
            .map(|it| self.expr(it, depth + 1))
            .collect()
    }

    /// The items of an `argument_list` or a declarator's `size`.
    fn subscripts(&mut self, list: Node, depth: usize) -> Vec<Subscript> {
        let mut res = Vec::new();
        for item in named_children(list) {
            match item.kind() {
                "comment" => {}
                "extent_specifier" => res.push(self.extent(item, depth + 1)),
                "assumed_size" => res.push(Subscript::Star(self.range(item))),
                "keyword_argument" => {
                    let name = item.child_by_field_name("name").map(|it| self.name(it));
                    let value = item.child_by_field_name("value").map(|it| self.expr(it, depth + 1));
                    match (name, value) {
                        (Some(name), Some(value)) => res.push(Subscript::Keyword { name, value }),
                        _ => res.push(Subscript::Expr(self.expr(item, depth + 1))),
                    }
                }
                _ => res.push(Subscript::Expr(self.expr(item, depth + 1))),
            }
        }
        res
    }

    /// `lo:hi:stride` with any part missing: the colons tell which is which.
    fn extent(&mut self, node: Node, depth: usize) -> Subscript {
        let mut parts: [Option<Expr>; 3] = [None, None, None];
        let mut slot = 0;
        for child in all_children(node) {
            if !child.is_named() {
                if self.text(child) == ":" {
                    slot += 1;
                }
                continue;
            }
            if child.kind() == "comment" || slot > 2 {
                continue;
            }
            parts[slot] = Some(self.expr(child, depth + 1));
        }
        let [lo, hi, stride] = parts;
        Subscript::Range { lo, hi, stride, range: self.range(node) }
    }

    pub(crate) fn expr(&mut self, node: Node, depth: usize) -> Expr {
        let node_range = self.range(node);
        if depth > MAX_DEPTH {
            self.too_deep(node);
            return Expr { kind: ExprKind::Other(Vec::new()), range: node_range };
        }
        let kind = match node.kind() {
            "number_literal" => {
                let text = self.text(node);
                let digits = text.split('_').next().unwrap_or("");
                match digits.parse::<i64>() {
                    Ok(value) if digits.bytes().all(|it| it.is_ascii_digit()) => ExprKind::Int(value),
                    _ => ExprKind::Literal(text.to_string()),
                }
            }
            "identifier" | "name" => ExprKind::Name(self.name(node)),
            "call_expression" => {
                let children = named_children(node);
                let callee = children.first().filter(|it| it.kind() == "identifier");
                let list = children.iter().rfind(|it| it.kind() == "argument_list");
                match (callee, list) {
                    (Some(callee), Some(list)) if children.len() == 2 => {
                        ExprKind::Ref { name: self.name(*callee), args: self.subscripts(*list, depth + 1) }
                    }
                    _ => ExprKind::Other(self.sub_exprs(node, depth)),
                }
            }
            "math_expression" => {
                let lhs = node.child_by_field_name("left");
                let rhs = node.child_by_field_name("right");
                let operator = node.child_by_field_name("operator").or_else(|| {
                    all_children(node).into_iter().find(|it| !it.is_named() && !self.text(*it).trim().is_empty())
                });
                let op = match operator.map(|it| self.text(it)) {
                    Some("+") => BinaryOp::Add,
                    Some("-") => BinaryOp::Sub,
                    Some("*") => BinaryOp::Mul,
                    Some("/") => BinaryOp::Div,
                    Some("**") => BinaryOp::Pow,
                    _ => BinaryOp::Other,
                };
                match (lhs, rhs) {
                    (Some(lhs), Some(rhs)) => ExprKind::Binary {
                        op,
                        lhs: Box::new(self.expr(lhs, depth + 1)),
                        rhs: Box::new(self.expr(rhs, depth + 1)),
                    },
                    _ => ExprKind::Other(self.sub_exprs(node, depth)),
                }
            }
            "unary_expression" => {
                let operand = node.child_by_field_name("argument").or_else(|| named_children(node).into_iter().next());
                let operator = all_children(node)
                    .into_iter()
                    .find(|it| !it.is_named())
                    .map(|it| self.text(it).to_ascii_lowercase());
                let op = match operator.as_deref() {
                    Some("-") => Some(UnaryOp::Neg),
                    Some("+") => Some(UnaryOp::Plus),
                    Some(".not.") => Some(UnaryOp::Not),
                    _ => None,
                };
                match (op, operand) {
                    (Some(op), Some(operand)) => {
                        ExprKind::Unary { op, operand: Box::new(self.expr(operand, depth + 1)) }
                    }
                    _ => ExprKind::Other(self.sub_exprs(node, depth)),
                }
            }
            "parenthesized_expression" => match named_children(node).into_iter().find(|it| it.kind() != "comment") {
                Some(inner) if named_children(node).len() == 1 => {
                    ExprKind::Paren(Box::new(self.expr(inner, depth + 1)))
                }
                _ => ExprKind::Other(self.sub_exprs(node, depth)),
            },
            "string_literal" | "boolean_literal" | "complex_literal" | "null_literal" => {
                ExprKind::Literal(self.text(node).to_string())
            }
            "relational_expression" | "logical_expression" | "concatenation_expression" => {
                // `.not. x` is a logical expression with an `argument` only.
                let not =
                    node.child_by_field_name("operator").is_some_and(|it| self.text(it).eq_ignore_ascii_case(".not."));
                match (node.child_by_field_name("left"), node.child_by_field_name("right")) {
                    (Some(lhs), Some(rhs)) => ExprKind::Binary {
                        op: BinaryOp::Other,
                        lhs: Box::new(self.expr(lhs, depth + 1)),
                        rhs: Box::new(self.expr(rhs, depth + 1)),
                    },
                    _ => match node.child_by_field_name("argument") {
                        Some(operand) if not => {
                            ExprKind::Unary { op: UnaryOp::Not, operand: Box::new(self.expr(operand, depth + 1)) }
                        }
                        _ => ExprKind::Other(self.sub_exprs(node, depth)),
                    },
                }
            }
            _ => ExprKind::Other(self.sub_exprs(node, depth)),
        };
        Expr { kind, range: node_range }
    }

    fn sub_exprs(&mut self, node: Node, depth: usize) -> Vec<Expr> {
        let mut res = Vec::new();
        for child in named_children(node) {
            match child.kind() {
                "comment" => {}
                "argument_list" | "output_item_list" => {
                    for item in self.subscripts(child, depth + 1) {
                        match item {
                            Subscript::Expr(expr) | Subscript::Keyword { value: expr, .. } => res.push(expr),
                            Subscript::Range { lo, hi, stride, .. } => {
                                res.extend(lo.into_iter().chain(hi).chain(stride))
                            }
                            Subscript::Star(_) => {}
                        }
                    }
                }
                _ => res.push(self.expr(child, depth + 1)),
            }
        }
        res
    }
}

/// Node kinds that are statements or constructs. `block_construct` is the
/// one construct whose name does not say so; without it, statements in a
/// BLOCK nested two deep were lost.
fn is_statement_like(kind: &str) -> bool {
    kind.ends_with("_statement") || kind.ends_with("_loop") || kind == "block_construct"
}

/// Node kinds that are expressions (as opposed to statements and lists).
fn is_expression(kind: &str) -> bool {
    kind.ends_with("_expression") || kind.ends_with("_literal") || kind == "identifier"
}

struct UnitBuilder {
    kind: UnitKind,
    name: Option<Name>,
    range: TextRange,
    header: TextRange,
    dummies: Vec<Name>,
    uses: Vec<Name>,
    decls: Vec<Decl>,
    implicit: Vec<crate::ImplicitRule>,
    body: Vec<Stmt>,
    contains: Vec<Unit>,
    interfaces: Vec<Unit>,
    execution_start: Option<usize>,
}

impl UnitBuilder {
    fn new(kind: UnitKind, range: TextRange) -> UnitBuilder {
        UnitBuilder {
            kind,
            name: None,
            range,
            header: TextRange::empty(range.start),
            dummies: Vec::new(),
            uses: Vec::new(),
            decls: Vec::new(),
            implicit: Vec::new(),
            body: Vec::new(),
            contains: Vec::new(),
            interfaces: Vec::new(),
            execution_start: None,
        }
    }

    fn finish(self) -> Unit {
        let execution_start =
            self.execution_start.or_else(|| self.contains.first().map(|it| it.range.start)).unwrap_or(self.range.end);
        Unit {
            kind: self.kind,
            name: self.name,
            range: self.range,
            header: self.header,
            dummies: self.dummies,
            uses: self.uses,
            decls: self.decls,
            implicit: self.implicit,
            body: self.body,
            directives: Vec::new(),
            contains: self.contains,
            interfaces: self.interfaces,
            execution_start,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{parse, ExprKind, SourceForm, Stmt, StmtKind, UnaryOp};

    fn count_assignments(stmts: &[Stmt]) -> usize {
        let mut stack: Vec<&Stmt> = stmts.iter().collect();
        let mut res = 0;
        while let Some(stmt) = stack.pop() {
            res += usize::from(matches!(stmt.kind, StmtKind::Assign { .. }));
            stack.extend(stmt.children());
        }
        res
    }

    #[test]
    fn statements_in_nested_blocks_are_lowered() {
        let text = "program p\nblock\nblock\nblock\nx = 1\nend block\nend block\nend block\nend program p\n";
        let file = parse(text, SourceForm::Free);
        assert_eq!(count_assignments(&file.units[0].body), 1, "{:#?}", file.units[0].body);
    }

    #[test]
    fn not_is_a_unary_operator() {
        let text = "program p
logical :: a, b
a = .NOT. b .and. .not.(a)
end program p
";
        let file = parse(text, SourceForm::Free);
        let StmtKind::Assign { rhs, .. } = &file.units[0].body[0].kind else { panic!("{:#?}", file.units[0].body) };
        let ExprKind::Binary { lhs, rhs, .. } = &rhs.kind else { panic!("{rhs:#?}") };
        for (operand, name) in [(lhs, "b"), (rhs, "(a)")] {
            let ExprKind::Unary { op: UnaryOp::Not, operand } = &operand.kind else { panic!("{operand:#?}") };
            assert_eq!(&text[operand.range.to_range()], name);
        }
    }
}
