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
