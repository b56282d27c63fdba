//! The Fortran program as plain data: units, declarations, statements.
//!
//! Lowered from the tree-sitter tree by `lower`; the layers above never see
//! tree-sitter nodes.

use crate::directive::Directive;
use crate::{Expr, Name, Subscript, TextRange};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnitKind {
    Program,
    Module,
    Subroutine,
    Function,
    BlockData,
}

impl UnitKind {
    pub fn as_str(self) -> &'static str {
        match self {
            UnitKind::Program => "program",
            UnitKind::Module => "module",
            UnitKind::Subroutine => "subroutine",
            UnitKind::Function => "function",
            UnitKind::BlockData => "block data",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Unit {
    pub kind: UnitKind,
    /// `None` for a main program without a PROGRAM statement.
    pub name: Option<Name>,
    pub range: TextRange,
    /// The unit's first statement (PROGRAM/SUBROUTINE/... line).
    pub header: TextRange,
    pub dummies: Vec<Name>,
    pub uses: Vec<Name>,
    pub decls: Vec<Decl>,
    /// Its IMPLICIT statements, in order.
    pub implicit: Vec<ImplicitRule>,
    pub body: Vec<Stmt>,
    /// The directives inside this unit (not inside its contained units), in text order.
    pub directives: Vec<Directive>,
    /// Units after CONTAINS.
    pub contains: Vec<Unit>,
    /// Interface bodies of INTERFACE blocks: scoping units of their own
    /// (their dummies can carry INHERIT or descriptive mappings).
    pub interfaces: Vec<Unit>,
    /// Offset of the first executable statement (the end of the
    /// specification part), or the end of the unit.
    pub execution_start: usize,
}

/// One IMPLICIT statement's type for a set of first letters
/// (`IMPLICIT DOUBLE PRECISION (A-H,O-Z)`, `IMPLICIT REAL*8 (A-H), INTEGER
/// (I-N)` gives two), or IMPLICIT NONE (no letters, no type).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImplicitRule {
    /// As [`Decl::type_name`]: `double precision`, `real`, ...; empty for NONE.
    pub type_name: String,
    /// As [`Decl::type_kind`]: `*8`, `(kind=8)`, `(8)`, or empty.
    pub type_kind: String,
    /// Inclusive letter ranges, lower case.
    pub letters: Vec<(char, char)>,
}

impl ImplicitRule {
    /// The rules of one IMPLICIT statement's text (any case, blanks and
    /// continuation marks anywhere, as fixed form allows); empty when it
    /// does not read as one.
    pub fn parse(statement: &str) -> Vec<ImplicitRule> {
        let text: String =
            statement.chars().filter(|it| !it.is_whitespace() && *it != '&').collect::<String>().to_ascii_lowercase();
        let Some(rest) = text.strip_prefix("implicit") else { return Vec::new() };
        if rest == "none" || rest.starts_with("none(") {
            return vec![ImplicitRule { type_name: String::new(), type_kind: String::new(), letters: Vec::new() }];
        }
        // Specs split at the commas outside parentheses.
        let mut specs = Vec::new();
        let (mut depth, mut start) = (0usize, 0usize);
        for (at, ch) in rest.char_indices() {
            match ch {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                ',' if depth == 0 => {
                    specs.push(&rest[start..at]);
                    start = at + 1;
                }
                _ => {}
            }
        }
        specs.push(&rest[start..]);
        let mut res = Vec::new();
        for spec in specs {
            // The letter list is the last parenthesised group.
            let Some(open) = spec.rfind('(') else { return Vec::new() };
            let (type_spec, letters) = (&spec[..open], spec[open + 1..].trim_end_matches(')'));
            let Some((type_name, type_kind)) =
                ["doubleprecision", "doublecomplex", "integer", "real", "logical", "complex", "character"]
                    .iter()
                    .find_map(|name| Some((*name, type_spec.strip_prefix(name)?)))
            else {
                return Vec::new();
            };
            let mut ranges = Vec::new();
            for item in letters.split(',') {
                let mut ends = item.split('-').map(|it| it.chars().next());
                match (ends.next().flatten(), ends.next().flatten()) {
                    (Some(first), None) if first.is_ascii_alphabetic() => ranges.push((first, first)),
                    (Some(first), Some(last)) if first.is_ascii_alphabetic() && last.is_ascii_alphabetic() => {
                        ranges.push((first, last))
                    }
                    _ => return Vec::new(),
                }
            }
            let type_name = match type_name {
                "doubleprecision" => "double precision",
                "doublecomplex" => "double complex",
                other => other,
            };
            res.push(ImplicitRule {
                type_name: type_name.to_string(),
                type_kind: type_kind.to_string(),
                letters: ranges,
            });
        }
        res
    }

    /// Whether it types names that begin with `letter` (lower case).
    pub fn covers(&self, letter: char) -> bool {
        self.letters.iter().any(|(first, last)| (*first..=*last).contains(&letter))
    }

    /// Whether it is IMPLICIT NONE.
    pub fn is_none(&self) -> bool {
        self.type_name.is_empty()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Decl {
    /// `real`, `double precision`, `integer`, ... in lower case; empty for
    /// DIMENSION and PARAMETER statements without a type.
    pub type_name: String,
    /// What follows the type's name in the type specifier, lower case and
    /// without blanks: `(8)`, `(kind=8)`, `*8`, `(len=6)`; empty for none.
    pub type_kind: String,
    pub attrs: Vec<DeclAttr>,
    pub entities: Vec<DeclEntity>,
    pub range: TextRange,
}

#[derive(Clone, Debug, PartialEq)]
pub enum DeclAttr {
    Parameter,
    Dimension(Vec<Subscript>),
    Allocatable,
    Pointer,
    Target,
    Intent,
    Other(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct DeclEntity {
    pub name: Name,
    /// The entity's own array spec, `A(0:N+1)`.
    pub dims: Option<Vec<Subscript>>,
    pub init: Option<Expr>,
    pub range: TextRange,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    /// The whole statement or construct.
    pub range: TextRange,
    /// The first line of it (`DO I = 1, N`, `FORALL (...)`).
    pub header: TextRange,
}

#[derive(Clone, Debug, PartialEq)]
pub struct LoopControl {
    pub var: Name,
    pub lo: Expr,
    pub hi: Expr,
    pub step: Option<Expr>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    Do {
        label: Option<String>,
        control: Option<LoopControl>,
        body: Vec<Stmt>,
    },
    DoWhile {
        cond: Option<Expr>,
        body: Vec<Stmt>,
    },
    Forall {
        specs: Vec<LoopControl>,
        mask: Option<Expr>,
        body: Vec<Stmt>,
    },
    Assign {
        lhs: Expr,
        rhs: Expr,
    },
    Where {
        mask: Option<Expr>,
        body: Vec<Stmt>,
        elsewhere: Vec<(Option<Expr>, Vec<Stmt>)>,
    },
    If {
        branches: Vec<(Option<Expr>, Vec<Stmt>)>,
    },
    Call {
        name: Name,
        args: Vec<Expr>,
    },
    /// PRINT and WRITE with their output items.
    Output {
        items: Vec<Expr>,
    },
    /// Any other statement or construct (SELECT CASE, BLOCK, ...), with the
    /// expressions and statements found in it.
    Other {
        exprs: Vec<Expr>,
        body: Vec<Stmt>,
    },
}

impl Stmt {
    /// The statements nested directly inside this one.
    pub fn children(&self) -> Vec<&Stmt> {
        match &self.kind {
            StmtKind::Do { body, .. } | StmtKind::DoWhile { body, .. } | StmtKind::Forall { body, .. } => {
                body.iter().collect()
            }
            StmtKind::Where { body, elsewhere, .. } => {
                body.iter().chain(elsewhere.iter().flat_map(|(_, it)| it.iter())).collect()
            }
            StmtKind::If { branches } => branches.iter().flat_map(|(_, it)| it.iter()).collect(),
            StmtKind::Other { body, .. } => body.iter().collect(),
            _ => Vec::new(),
        }
    }
}

impl Unit {
    /// This unit and every unit it contains or declares in an interface block, depth first.
    pub fn all_units(&self) -> Vec<&Unit> {
        let mut res = Vec::new();
        let mut stack = vec![self];
        while let Some(unit) = stack.pop() {
            res.push(unit);
            stack.extend(unit.interfaces.iter().rev());
            stack.extend(unit.contains.iter().rev());
        }
        res
    }
}

#[cfg(test)]
mod implicit_tests {
    use super::ImplicitRule;

    #[test]
    fn implicit_statements_read_as_rules() {
        let rules = ImplicitRule::parse("IMPLICIT DOUBLE PRECISION (A-H,O-Z)");
        assert_eq!(rules.len(), 1);
        assert_eq!(rules[0].type_name, "double precision");
        assert!(rules[0].covers('a') && rules[0].covers('z') && !rules[0].covers('i'));
        let rules = ImplicitRule::parse("implicit real*8 (a-h), integer (i - n), logical(l)");
        assert_eq!((rules[0].type_name.as_str(), rules[0].type_kind.as_str()), ("real", "*8"));
        assert_eq!(rules[1].letters, vec![('i', 'n')]);
        assert_eq!(rules[2].letters, vec![('l', 'l')]);
        let rules = ImplicitRule::parse("implicit real(kind=8) (a-h,o-z)");
        assert_eq!(rules[0].type_kind, "(kind=8)");
        assert!(ImplicitRule::parse("IMPLICIT NONE")[0].is_none());
        assert!(ImplicitRule::parse("implicit whatever").is_empty());
    }
}
