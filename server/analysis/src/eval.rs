//! Integer expressions: constant folding and affine (linear) forms.
//!
//! Directives and subscripts hold expressions such as `N/2+1`,
//! `NUMBER_OF_PROCESSORS()` or `2*I-1`; this module turns them into numbers
//! or into `sum(coef_k * var_k) + constant`, or says precisely why not.

use std::collections::BTreeMap;

use syntax::{BinaryOp, Expr, ExprKind, TextRange, UnaryOp};

/// What an expression may refer to while being folded.
pub trait ConstEnv {
    /// The value of the named constant `key` (lower case), if it is one.
    fn constant(&self, key: &str) -> Option<i64>;
    /// `NUMBER_OF_PROCESSORS()`, when the configuration fixes it.
    fn number_of_processors(&self) -> Option<i64>;
}

/// Why an expression has no value (or no affine form).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotFolded {
    pub range: TextRange,
    pub reason: NotFoldedReason,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotFoldedReason {
    /// A name that is neither a named constant nor a variable of the form.
    NotConstant(String),
    /// `NUMBER_OF_PROCESSORS()` without a configured value.
    ProcessorCountUnknown,
    /// Products of variables, division of a variable, indirect subscripts, ...
    NotAffine,
    /// Real literals, strings, function calls, ...
    NotInteger,
    Overflow,
    DivisionByZero,
}

impl NotFolded {
    fn new(range: TextRange, reason: NotFoldedReason) -> NotFolded {
        NotFolded { range, reason }
    }

    pub fn describe(&self) -> String {
        match &self.reason {
            NotFoldedReason::NotConstant(name) => format!("`{name}` is not a named constant"),
            NotFoldedReason::ProcessorCountUnknown => {
                "NUMBER_OF_PROCESSORS() is only known when the program runs".to_string()
            }
            NotFoldedReason::NotAffine => "the expression is not affine (of the form a*i+b)".to_string(),
            NotFoldedReason::NotInteger => "the expression is not an integer constant expression".to_string(),
            NotFoldedReason::Overflow => "the value overflows a 64-bit integer".to_string(),
            NotFoldedReason::DivisionByZero => "division by zero".to_string(),
        }
    }
}

/// `sum(coefs[v] * v) + constant` over variables named by lower-case keys.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Linear {
    pub coefs: BTreeMap<String, i64>,
    pub constant: i64,
}

impl Linear {
    pub fn constant(value: i64) -> Linear {
        Linear { coefs: BTreeMap::new(), constant: value }
    }

    pub fn var(key: &str) -> Linear {
        Linear { coefs: BTreeMap::from([(key.to_string(), 1)]), constant: 0 }
    }

    pub fn is_constant(&self) -> bool {
        self.coefs.is_empty()
    }

    /// The variables with a non-zero coefficient.
    pub fn vars(&self) -> impl Iterator<Item = (&str, i64)> {
        self.coefs.iter().map(|(k, v)| (k.as_str(), *v))
    }

    fn normalise(mut self) -> Linear {
        self.coefs.retain(|_, coef| *coef != 0);
        self
    }

    fn scale(self, factor: i64) -> Option<Linear> {
        let mut coefs = BTreeMap::new();
        for (key, coef) in self.coefs {
            coefs.insert(key, coef.checked_mul(factor)?);
        }
        Some(Linear { coefs, constant: self.constant.checked_mul(factor)? }.normalise())
    }

    fn add(self, other: Linear, sign: i64) -> Option<Linear> {
        let mut res = self;
        for (key, coef) in other.coefs {
            let entry = res.coefs.entry(key).or_insert(0);
            *entry = entry.checked_add(coef.checked_mul(sign)?)?;
        }
        res.constant = res.constant.checked_add(other.constant.checked_mul(sign)?)?;
        Some(res.normalise())
    }
}

/// Folds an integer constant expression.
/// gfortran's kind of a literal constant: `1.0D0` is 8, `1.0`, `1` and
/// `.TRUE.` are 4, a kind suffix (`1.0_8`) is its number.
fn literal_kind(expr: &Expr) -> Option<i64> {
    let text = match &expr.kind {
        ExprKind::Int(_) => return Some(4),
        ExprKind::Literal(text) => text.to_ascii_lowercase(),
        ExprKind::Paren(inner) => return literal_kind(inner),
        _ => return None,
    };
    if let Some((_, suffix)) = text.rsplit_once('_') {
        return suffix.parse().ok();
    }
    let numeric = text.starts_with(|it: char| it.is_ascii_digit() || it == '.')
        && !text.starts_with(".t")
        && !text.starts_with(".f");
    match () {
        _ if text == ".true." || text == ".false." => Some(4),
        _ if numeric && text.contains('d') => Some(8),
        _ if numeric => Some(4),
        _ => None,
    }
}

/// gfortran's SELECTED_REAL_KIND(P, R): the smallest kind with at least
/// P decimal digits and range R; -1, -2 or -3 when none has them.
fn selected_real_kind(precision: i64, range: i64) -> i64 {
    let kinds = [(4, 6, 37), (8, 15, 307), (10, 18, 4931), (16, 33, 4931)];
    let found = kinds.iter().find(|(_, p, r)| precision <= *p && range <= *r);
    match found {
        Some((kind, _, _)) => *kind,
        None if precision > 33 && range > 4931 => -3,
        None if precision > 33 => -1,
        None => -2,
    }
}

/// gfortran's SELECTED_INT_KIND(R): the smallest kind holding 10**R; -1 if none.
fn selected_int_kind(range: i64) -> i64 {
    [(1, 2), (2, 4), (4, 9), (8, 18), (16, 38)].iter().find(|(_, r)| range <= *r).map_or(-1, |(kind, _)| *kind)
}

pub fn eval_int(expr: &Expr, env: &dyn ConstEnv) -> Result<i64, NotFolded> {
    let linear = linear(expr, &|_| false, env)?;
    Ok(linear.constant)
}

/// The affine form of `expr` in the variables `is_var` accepts (lower-case
/// keys); every other name must be a named constant.
pub fn linear(expr: &Expr, is_var: &dyn Fn(&str) -> bool, env: &dyn ConstEnv) -> Result<Linear, NotFolded> {
    // Expressions nest at most as deep as the syntax layer lowered them
    // (bounded there), so recursion depth is bounded too.
    let overflow = || NotFolded::new(expr.range, NotFoldedReason::Overflow);
    match &expr.kind {
        ExprKind::Int(value) => Ok(Linear::constant(*value)),
        ExprKind::Name(name) => {
            let key = name.key();
            if is_var(&key) {
                Ok(Linear::var(&key))
            } else if let Some(value) = env.constant(&key) {
                Ok(Linear::constant(value))
            } else {
                Err(NotFolded::new(name.range, NotFoldedReason::NotConstant(name.text.clone())))
            }
        }
        ExprKind::Paren(inner) => linear(inner, is_var, env),
        ExprKind::Unary { op, operand } => {
            let value = linear(operand, is_var, env)?;
            match op {
                UnaryOp::Plus => Ok(value),
                UnaryOp::Neg => value.scale(-1).ok_or_else(overflow),
                UnaryOp::Not => Err(NotFolded::new(expr.range, NotFoldedReason::NotInteger)),
            }
        }
        ExprKind::Binary { op, lhs, rhs } => {
            let op = *op;
            if op == BinaryOp::Other {
                return Err(NotFolded::new(expr.range, NotFoldedReason::NotInteger));
            }
            let left = linear(lhs, is_var, env)?;
            let right = linear(rhs, is_var, env)?;
            match op {
                BinaryOp::Add => left.add(right, 1).ok_or_else(overflow),
                BinaryOp::Sub => left.add(right, -1).ok_or_else(overflow),
                BinaryOp::Mul => {
                    if right.is_constant() {
                        left.scale(right.constant).ok_or_else(overflow)
                    } else if left.is_constant() {
                        right.scale(left.constant).ok_or_else(overflow)
                    } else {
                        Err(NotFolded::new(expr.range, NotFoldedReason::NotAffine))
                    }
                }
                BinaryOp::Div => {
                    if !right.is_constant() || !left.is_constant() {
                        return Err(NotFolded::new(expr.range, NotFoldedReason::NotAffine));
                    }
                    if right.constant == 0 {
                        return Err(NotFolded::new(rhs.range, NotFoldedReason::DivisionByZero));
                    }
                    // Fortran integer division truncates toward zero, as Rust's does.
                    left.constant.checked_div(right.constant).map(Linear::constant).ok_or_else(overflow)
                }
                BinaryOp::Pow => {
                    if !right.is_constant() || !left.is_constant() {
                        return Err(NotFolded::new(expr.range, NotFoldedReason::NotAffine));
                    }
                    let (base, exponent) = (left.constant, right.constant);
                    let value = match exponent {
                        exponent if exponent < 0 => match base {
                            1 => Some(1),
                            -1 => Some(if exponent % 2 == 0 { 1 } else { -1 }),
                            0 => return Err(NotFolded::new(expr.range, NotFoldedReason::DivisionByZero)),
                            _ => Some(0),
                        },
                        exponent => u32::try_from(exponent).ok().and_then(|it| base.checked_pow(it)),
                    };
                    value.map(Linear::constant).ok_or_else(overflow)
                }
                BinaryOp::Other => unreachable!("handled above"),
            }
        }
        ExprKind::Ref { name, args } => {
            let constant_args = || -> Result<Vec<i64>, NotFolded> {
                args.iter()
                    .map(|arg| match arg.as_expr() {
                        Some(arg) => eval_int(arg, env),
                        None => Err(NotFolded::new(arg.range(), NotFoldedReason::NotInteger)),
                    })
                    .collect()
            };
            match name.key().as_str() {
                "number_of_processors" if args.is_empty() => env
                    .number_of_processors()
                    .map(Linear::constant)
                    .ok_or_else(|| NotFolded::new(expr.range, NotFoldedReason::ProcessorCountUnknown)),
                "min" | "max" if !args.is_empty() => {
                    let values = constant_args()?;
                    let value = if name.is("min") { values.iter().min() } else { values.iter().max() };
                    Ok(Linear::constant(*value.expect("not empty")))
                }
                "mod" if args.len() == 2 => {
                    let values = constant_args()?;
                    if values[1] == 0 {
                        return Err(NotFolded::new(expr.range, NotFoldedReason::DivisionByZero));
                    }
                    values[0].checked_rem(values[1]).map(Linear::constant).ok_or_else(overflow)
                }
                "abs" if args.len() == 1 => {
                    constant_args()?[0].checked_abs().map(Linear::constant).ok_or_else(overflow)
                }
                // The kind idioms of declarations (`INTEGER, PARAMETER :: DP =
                // KIND(1.0D0)`), with gfortran's kind numbers.
                "kind" if args.len() == 1 => args[0]
                    .as_expr()
                    .and_then(literal_kind)
                    .map(Linear::constant)
                    .ok_or_else(|| NotFolded::new(expr.range, NotFoldedReason::NotInteger)),
                "selected_real_kind" | "selected_int_kind" if !args.is_empty() && args.len() <= 2 => {
                    let mut precision = None;
                    let mut range = None;
                    for (position, arg) in args.iter().enumerate() {
                        let (slot, value) = match arg {
                            syntax::Subscript::Keyword { name, value } if name.is("p") => (&mut precision, value),
                            syntax::Subscript::Keyword { name, value } if name.is("r") => (&mut range, value),
                            syntax::Subscript::Expr(value) if position == 0 => (&mut precision, value),
                            syntax::Subscript::Expr(value) if position == 1 => (&mut range, value),
                            _ => return Err(NotFolded::new(arg.range(), NotFoldedReason::NotInteger)),
                        };
                        *slot = Some(eval_int(value, env)?);
                    }
                    let value = if name.is("selected_int_kind") {
                        // Its one argument is the decimal range, however it is passed.
                        selected_int_kind(precision.or(range).unwrap_or(0))
                    } else {
                        selected_real_kind(precision.unwrap_or(0), range.unwrap_or(0))
                    };
                    Ok(Linear::constant(value))
                }
                _ => Err(NotFolded::new(expr.range, NotFoldedReason::NotAffine)),
            }
        }
        ExprKind::Literal(_) | ExprKind::Other(_) => Err(NotFolded::new(expr.range, NotFoldedReason::NotInteger)),
    }
}
