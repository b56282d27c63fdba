//! Expressions and subscripts, shared by Fortran statements and HPF directives.

use crate::TextRange;

/// A name as the user wrote it. Fortran names are case-insensitive:
/// compare with [`Name::key`] or [`Name::is`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Name {
    pub text: String,
    pub range: TextRange,
}

impl Name {
    pub fn new(text: impl Into<String>, range: TextRange) -> Name {
        Name { text: text.into(), range }
    }

    /// The lower-case spelling, used as the key of every symbol table.
    pub fn key(&self) -> String {
        self.text.to_ascii_lowercase()
    }

    pub fn is(&self, word: &str) -> bool {
        self.text.eq_ignore_ascii_case(word)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Plus,
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
    /// Relational, logical, concatenation, user-defined: not integer arithmetic.
    Other,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub range: TextRange,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Int(i64),
    /// Any other literal (real, logical, string, too large an integer), as written.
    Literal(String),
    Name(Name),
    /// `A(I, 2:N)`: an array element or section, or a function call; only the
    /// symbol table can tell which.
    Ref {
        name: Name,
        args: Vec<Subscript>,
    },
    Unary {
        op: UnaryOp,
        operand: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    Paren(Box<Expr>),
    /// Anything else (array constructors, components, ...), with the
    /// expressions found inside it so that references stay visible.
    Other(Vec<Expr>),
}

/// One item of a parenthesised list after a name: a subscript, a section
/// triplet, a `*`, or a keyword argument.
#[derive(Clone, Debug, PartialEq)]
pub enum Subscript {
    Expr(Expr),
    /// `lo:hi:stride`, each part optional (`:` alone has none).
    Range {
        lo: Option<Expr>,
        hi: Option<Expr>,
        stride: Option<Expr>,
        range: TextRange,
    },
    Star(TextRange),
    Keyword {
        name: Name,
        value: Expr,
    },
}

impl Subscript {
    pub fn range(&self) -> TextRange {
        match self {
            Subscript::Expr(expr) => expr.range,
            Subscript::Range { range, .. } | Subscript::Star(range) => *range,
            Subscript::Keyword { name, value } => name.range.cover(value.range),
        }
    }

    pub fn as_expr(&self) -> Option<&Expr> {
        match self {
            Subscript::Expr(expr) => Some(expr),
            _ => None,
        }
    }
}

impl Expr {
    pub fn as_name(&self) -> Option<&Name> {
        match &self.kind {
            ExprKind::Name(name) => Some(name),
            _ => None,
        }
    }

    /// Calls `f` on this expression and every expression inside it, parents
    /// first, without recursion (expressions can nest deeply).
    pub fn walk<'a>(&'a self, mut f: impl FnMut(&'a Expr)) {
        let mut stack = vec![self];
        while let Some(expr) = stack.pop() {
            f(expr);
            let before = stack.len();
            match &expr.kind {
                ExprKind::Int(_) | ExprKind::Literal(_) | ExprKind::Name(_) => {}
                ExprKind::Ref { args, .. } => {
                    for arg in args {
                        push_subscript_exprs(arg, &mut stack);
                    }
                }
                ExprKind::Unary { operand, .. } => stack.push(operand),
                ExprKind::Binary { lhs, rhs, .. } => {
                    stack.push(lhs);
                    stack.push(rhs);
                }
                ExprKind::Paren(inner) => stack.push(inner),
                ExprKind::Other(children) => stack.extend(children.iter()),
            }
            // Visit children in source order.
            stack[before..].reverse();
        }
    }
}

fn push_subscript_exprs<'a>(subscript: &'a Subscript, stack: &mut Vec<&'a Expr>) {
    match subscript {
        Subscript::Expr(expr) | Subscript::Keyword { value: expr, .. } => stack.push(expr),
        Subscript::Range { lo, hi, stride, .. } => {
            stack.extend(lo.iter());
            stack.extend(hi.iter());
            stack.extend(stride.iter());
        }
        Subscript::Star(_) => {}
    }
}
