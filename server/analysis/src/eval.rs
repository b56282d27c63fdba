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
                _ => Err(NotFolded::new(expr.range, NotFoldedReason::NotAffine)),
            }
        }
        ExprKind::Literal(_) | ExprKind::Other(_) => Err(NotFolded::new(expr.range, NotFoldedReason::NotInteger)),
    }
}
