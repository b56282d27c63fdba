//! The element type of a distributed array: its intrinsic type and kind (or
//! a CHARACTER's length), as the model folds the declaration. It knows the
//! Fortran declaration of a local part, the `mpi_f08` datatype that moves
//! its elements, which reductions apply to it, and the suffix of the
//! runtime routines generated for it (`hpf_fetch_i8_11`, `hpf_gather_ch8_11`).

use std::fmt;

use analysis::model::Symbol;

/// The intrinsic types, in the order of numeric promotion (INTEGER to
/// REAL to COMPLEX), then the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Base {
    Integer,
    Real,
    Complex,
    Logical,
    Character,
}

/// An element type the runtime handles: `kind` is gfortran's kind number
/// (bytes; COMPLEX(8) is two REAL(8)), or a CHARACTER's length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct ElementType {
    pub base: Base,
    pub kind: u32,
}

/// The reductions a type may take (HPF/Fortran intrinsics).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReductionOp {
    /// SUM, PRODUCT, DOT_PRODUCT.
    Arithmetic,
    /// MAXVAL, MINVAL.
    Order,
    /// ANY, ALL, COUNT.
    Logical,
}

impl ElementType {
    pub const I4: ElementType = ElementType { base: Base::Integer, kind: 4 };
    pub const R4: ElementType = ElementType { base: Base::Real, kind: 4 };
    pub const R8: ElementType = ElementType { base: Base::Real, kind: 8 };
    pub const L4: ElementType = ElementType { base: Base::Logical, kind: 4 };

    /// The kinds gfortran on x86-64 has and `mpi_f08` can move (REAL(10)
    /// has no MPI datatype, so it is refused; REAL(16) and COMPLEX(16) are
    /// gfortran's software quad).
    const KINDS: &'static [(Base, &'static [u32])] = &[
        (Base::Integer, &[1, 2, 4, 8]),
        (Base::Real, &[4, 8, 16]),
        (Base::Complex, &[4, 8, 16]),
        (Base::Logical, &[1, 2, 4, 8]),
    ];

    /// Every type of a fixed kind the runtime knows (CHARACTER lengths are
    /// per program), for the whole runtime module.
    pub fn fixed() -> impl Iterator<Item = ElementType> {
        Self::KINDS.iter().flat_map(|(base, kinds)| kinds.iter().map(|kind| ElementType { base: *base, kind: *kind }))
    }

    /// The element type of a declared symbol, or why the backend refuses
    /// it. An implicitly typed name is REAL or INTEGER by its first letter.
    pub fn of_symbol(symbol: &Symbol) -> Result<ElementType, String> {
        let name = symbol.type_name.as_str();
        if name.is_empty() {
            let integer = symbol.name.text.to_ascii_lowercase().starts_with(|c: char| ('i'..='n').contains(&c));
            return Ok(if integer { Self::I4 } else { Self::R4 });
        }
        let declared = || format!("{}{}", name, symbol.type_kind).to_ascii_uppercase();
        if name == "character" {
            return character_length(&symbol.type_kind)
                .map(|len| ElementType { base: Base::Character, kind: len })
                .ok_or_else(|| format!("the length of `{}` is not a literal number", declared()));
        }
        let base = match name {
            "integer" => Base::Integer,
            "real" | "double precision" | "doubleprecision" => Base::Real,
            "complex" | "double complex" | "doublecomplex" => Base::Complex,
            "logical" => Base::Logical,
            _ => return Err(format!("`{}` is not an intrinsic type", declared())),
        };
        let doubled = matches!(name, "double precision" | "doubleprecision" | "double complex" | "doublecomplex");
        let kind = if symbol.type_kind.is_empty() {
            if doubled {
                8
            } else {
                4
            }
        } else {
            // A kind selector that does not fold (`REAL(KIND=WP)` with WP
            // from an unknown module) is refused, never taken for the default.
            let value =
                symbol.kind_value.ok_or_else(|| format!("the kind of `{}` does not fold to a number", declared()))?;
            // COMPLEX*16 counts the bytes of both parts.
            if base == Base::Complex && symbol.type_kind.starts_with('*') {
                value / 2
            } else {
                value
            }
        };
        let known =
            Self::KINDS.iter().find(|it| it.0 == base).is_some_and(|it| it.1.iter().any(|k| i64::from(*k) == kind));
        if !known {
            return Err(format!("`{}` (kind {kind}) has no MPI datatype in the runtime", declared()));
        }
        Ok(ElementType { base, kind: kind as u32 })
    }

    /// The suffix of the runtime routines for this type: `i8`, `r4`,
    /// `c8` (COMPLEX(8)), `l1`, `ch8` (CHARACTER(len=8)).
    pub fn suffix(self) -> String {
        self.to_string()
    }

    /// The declaration of an element in generated code.
    pub fn declaration(self) -> String {
        match (self.base, self.kind) {
            (Base::Integer, 4) => "integer".to_string(),
            (Base::Real, 4) => "real".to_string(),
            (Base::Real, 8) => "double precision".to_string(),
            (Base::Logical, 4) => "logical".to_string(),
            (Base::Integer, kind) => format!("integer({kind})"),
            (Base::Real, kind) => format!("real({kind})"),
            (Base::Complex, kind) => format!("complex({kind})"),
            (Base::Logical, kind) => format!("logical({kind})"),
            (Base::Character, len) => format!("character(len={len})"),
        }
    }

    /// The `mpi_f08` datatype of one element. A CHARACTER element is one
    /// contiguous datatype of its length in characters, which the runtime
    /// builds once (`hpf_mpi_ch8()`), so counts stay in elements.
    pub fn mpi_datatype(self) -> String {
        match (self.base, self.kind) {
            (Base::Integer, 4) => "MPI_INTEGER".to_string(),
            (Base::Integer, kind) => format!("MPI_INTEGER{kind}"),
            (Base::Real, 4) => "MPI_REAL".to_string(),
            (Base::Real, 8) => "MPI_DOUBLE_PRECISION".to_string(),
            (Base::Real, kind) => format!("MPI_REAL{kind}"),
            (Base::Complex, 4) => "MPI_COMPLEX".to_string(),
            (Base::Complex, 8) => "MPI_DOUBLE_COMPLEX".to_string(),
            // Two REAL(16) (gfortran's quad, 32 bytes): Open MPI and MPICH
            // both move it, size 32; neither sums it right (Open MPI adds
            // it as long double, MPICH refuses), so its sums and products
            // are folded by the runtime (`hpf_combine_c16`), as every
            // floating-point one is.
            (Base::Complex, kind) => format!("MPI_COMPLEX{}", 2 * kind),
            (Base::Logical, 4) => "MPI_LOGICAL".to_string(),
            // MPICH's `mpi_f08` has no MPI_LOGICAL1/2/8 (Open MPI's has):
            // these only move (bit copies), as integers of their size.
            (Base::Logical, kind) => format!("MPI_INTEGER{kind}"),
            (Base::Character, _) => format!("hpf_mpi_{self}()"),
        }
    }

    /// Whether a reduction of this kind applies: SUM/PRODUCT to numbers
    /// (complex too), MAXVAL/MINVAL to INTEGER and REAL, ANY/ALL/COUNT to LOGICAL.
    pub fn allows(self, op: ReductionOp) -> bool {
        match op {
            ReductionOp::Arithmetic => self.is_numeric(),
            ReductionOp::Order => matches!(self.base, Base::Integer | Base::Real),
            ReductionOp::Logical => self.base == Base::Logical,
        }
    }

    /// Whether `MPI_Allreduce` computes MAX and MIN of this type: Open MPI
    /// moves REAL(16) but gets its extrema wrong, so the runtime folds them
    /// itself (`hpf_extremum_r16`).
    pub fn mpi_orders(self) -> bool {
        self != ElementType { base: Base::Real, kind: 16 }
    }

    pub fn is_numeric(self) -> bool {
        matches!(self.base, Base::Integer | Base::Real | Base::Complex)
    }

    pub fn is_logical(self) -> bool {
        self.base == Base::Logical
    }

    /// Floating point (REAL or COMPLEX): sums and products depend on the
    /// order, so they are combined in rank order or chained.
    pub fn is_floating(self) -> bool {
        matches!(self.base, Base::Real | Base::Complex)
    }

    /// The type of `a op b` for numeric `a` and `b` (Fortran's promotion):
    /// the higher base, the larger kind; `None` for anything else.
    pub fn promote(a: ElementType, b: ElementType) -> Option<ElementType> {
        if !a.is_numeric() || !b.is_numeric() {
            return None;
        }
        let base = a.base.max(b.base);
        // An INTEGER operand does not widen a REAL or COMPLEX one.
        let kind_of = |it: ElementType| if it.base == Base::Integer && base != Base::Integer { 0 } else { it.kind };
        let kind = kind_of(a).max(kind_of(b)).max(if base == Base::Integer { 1 } else { 4 });
        Some(ElementType { base, kind })
    }

    /// The value a shift fills vacated elements with (EOSHIFT's default).
    pub fn default_fill(self) -> String {
        match self.base {
            Base::Integer => format!("0_{}", self.kind),
            Base::Real => format!("0.0_{}", self.kind),
            Base::Complex => format!("(0.0_{0}, 0.0_{0})", self.kind),
            Base::Logical => format!(".false._{}", self.kind),
            Base::Character => "' '".to_string(),
        }
    }
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let letter = match self.base {
            Base::Integer => "i",
            Base::Real => "r",
            Base::Complex => "c",
            Base::Logical => "l",
            Base::Character => "ch",
        };
        write!(f, "{letter}{}", self.kind)
    }
}

/// The literal length of a CHARACTER declaration (`Decl::type_kind`, lower
/// case, no blanks): none is 1; `*8`, `(8)`, `(len=8)`, `(len=8,kind=1)`,
/// `(8,1)` are 8; `*(*)`, `(len=*)` or a named length give `None`.
fn character_length(type_kind: &str) -> Option<u32> {
    if type_kind.is_empty() {
        return Some(1);
    }
    let selector = match type_kind.strip_prefix('*') {
        Some(star) => star.strip_prefix('(').and_then(|it| it.strip_suffix(')')).unwrap_or(star),
        None => type_kind.strip_prefix('(')?.strip_suffix(')')?,
    };
    let length = selector
        .split(',')
        .enumerate()
        .find_map(|(position, part)| match part.split_once('=') {
            Some(("len", value)) => Some(value),
            Some(_) => None,
            None => (position == 0).then_some(part),
        })
        .unwrap_or("1");
    length.parse().ok().filter(|it| *it > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(source: &str, name: &str) -> Result<ElementType, String> {
        let text = format!("program p\n{source}\nend program p\n");
        let analysis = analysis::analyze(
            &text,
            syntax::SourceForm::Free,
            analysis::model::ModelConfig { number_of_processors: None },
        );
        let unit = &analysis.model.units[0];
        let symbol = unit.symbols.iter().find(|it| it.name.text.eq_ignore_ascii_case(name)).expect("declared");
        ElementType::of_symbol(symbol)
    }

    #[test]
    fn declarations_fold_to_kinds() {
        let cases = [
            ("integer(8) :: a(4)", "i8", "integer(8)", "MPI_INTEGER8"),
            ("integer*8 a(4)", "i8", "integer(8)", "MPI_INTEGER8"),
            (
                "integer, parameter :: k = selected_int_kind(18)\ninteger(kind=k) :: a(4)",
                "i8",
                "integer(8)",
                "MPI_INTEGER8",
            ),
            ("integer(kind=2) :: a(4)", "i2", "integer(2)", "MPI_INTEGER2"),
            ("integer(1) :: a(4)", "i1", "integer(1)", "MPI_INTEGER1"),
            ("integer :: a(4)", "i4", "integer", "MPI_INTEGER"),
            ("real :: a(4)", "r4", "real", "MPI_REAL"),
            ("double precision :: a(4)", "r8", "double precision", "MPI_DOUBLE_PRECISION"),
            (
                "integer, parameter :: dp = kind(1.0d0)\nreal(kind=dp) :: a(4)",
                "r8",
                "double precision",
                "MPI_DOUBLE_PRECISION",
            ),
            ("real(16) :: a(4)", "r16", "real(16)", "MPI_REAL16"),
            ("complex :: a(4)", "c4", "complex(4)", "MPI_COMPLEX"),
            ("complex*16 a(4)", "c8", "complex(8)", "MPI_DOUBLE_COMPLEX"),
            ("complex(8) :: a(4)", "c8", "complex(8)", "MPI_DOUBLE_COMPLEX"),
            ("double complex :: a(4)", "c8", "complex(8)", "MPI_DOUBLE_COMPLEX"),
            ("complex(16) :: a(4)", "c16", "complex(16)", "MPI_COMPLEX32"),
            ("complex*32 a(4)", "c16", "complex(16)", "MPI_COMPLEX32"),
            ("logical(1) :: a(4)", "l1", "logical(1)", "MPI_INTEGER1"),
            ("logical :: a(4)", "l4", "logical", "MPI_LOGICAL"),
            ("character(len=8) :: a(4)", "ch8", "character(len=8)", "hpf_mpi_ch8()"),
            ("character*3 a(4)", "ch3", "character(len=3)", "hpf_mpi_ch3()"),
            ("character a(4)", "ch1", "character(len=1)", "hpf_mpi_ch1()"),
        ];
        for (source, suffix, declaration, mpi) in cases {
            let element = of(source, "a").unwrap_or_else(|why| panic!("{source}: {why}"));
            assert_eq!(
                (element.suffix().as_str(), element.declaration().as_str(), element.mpi_datatype().as_str()),
                (suffix, declaration, mpi),
                "{source}"
            );
        }
    }

    #[test]
    fn unfolded_or_unknown_kinds_are_refused_with_the_reason() {
        let why = of("use some_module\nreal(kind=wp) :: a(4)", "a").unwrap_err();
        assert!(why.contains("REAL(KIND=WP)") && why.contains("does not fold"), "{why}");
        let why = of("real(10) :: a(4)", "a").unwrap_err();
        assert!(why.contains("no MPI datatype"), "{why}");
        let why = of("integer, parameter :: n = 4\ncharacter(len=n) :: a(4)", "a").unwrap_err();
        assert!(why.contains("not a literal"), "{why}");
    }

    #[test]
    fn reductions_follow_the_type() {
        let c8 = ElementType { base: Base::Complex, kind: 8 };
        let i8 = ElementType { base: Base::Integer, kind: 8 };
        let ch = ElementType { base: Base::Character, kind: 8 };
        assert!(c8.allows(ReductionOp::Arithmetic) && !c8.allows(ReductionOp::Order));
        assert!(i8.allows(ReductionOp::Arithmetic) && i8.allows(ReductionOp::Order) && !i8.is_floating());
        assert!(ElementType::L4.allows(ReductionOp::Logical) && !ElementType::L4.allows(ReductionOp::Arithmetic));
        assert!(
            !ch.allows(ReductionOp::Arithmetic) && !ch.allows(ReductionOp::Order) && !ch.allows(ReductionOp::Logical)
        );
        assert!(c8.is_floating() && ElementType::R4.is_floating());
    }

    #[test]
    fn promotion_widens_to_the_higher_type_and_kind() {
        let i8 = ElementType { base: Base::Integer, kind: 8 };
        let c4 = ElementType { base: Base::Complex, kind: 4 };
        let c8 = ElementType { base: Base::Complex, kind: 8 };
        assert_eq!(ElementType::promote(ElementType::I4, ElementType::R4), Some(ElementType::R4));
        assert_eq!(ElementType::promote(i8, ElementType::R4), Some(ElementType::R4));
        assert_eq!(ElementType::promote(ElementType::I4, i8), Some(i8));
        assert_eq!(ElementType::promote(ElementType::R8, c4), Some(c8));
        assert_eq!(ElementType::promote(ElementType::L4, ElementType::I4), None);
    }
}
