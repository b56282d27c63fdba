//! The syntax of HPF directives, with a range for every name and subscript.

use crate::{Expr, Name, Subscript, TextRange};

/// One directive, possibly joined from several continued lines.
#[derive(Clone, Debug, PartialEq)]
pub struct Directive {
    /// From the first sentinel to the end of the last line's content.
    pub range: TextRange,
    /// The physical lines it spans (sentinel to end of line, without the terminator).
    pub lines: Vec<TextRange>,
    /// The directive keyword (`ALIGN`, `TEMPLATE` in `TEMPLATE, DISTRIBUTE ...`),
    /// or the first word when that is not a known keyword.
    pub keyword: Name,
    pub body: DirectiveBody,
}

#[derive(Clone, Debug, PartialEq)]
pub enum DirectiveBody {
    /// Every mapping directive, in statement form (`ALIGN B(I) WITH A(I)`)
    /// or attribute form (`ALIGN (I) WITH A(I) :: B, C`).
    Mapping(Mapping),
    Independent(Independent),
    On(On),
    EndOn,
    Resident(Resident),
    EndResident,
    /// The directive could not be parsed; its diagnostics say why.
    Invalid,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MappingForm {
    /// `DISTRIBUTE A(BLOCK)`: one entity, named before the specification.
    Statement,
    /// `DISTRIBUTE (BLOCK) :: A, B`: attributes, `::`, entity list; also
    /// the dialect `ALIGN J(I), K(I) WITH T(I)` (several alignees, no `::`).
    Attributed,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Mapping {
    pub form: MappingForm,
    pub attrs: Vec<MappingAttr>,
    pub entities: Vec<Entity>,
    /// The `::` token, when present.
    pub double_colon: Option<TextRange>,
}

/// A name in a mapping directive, with the parenthesised list after it: a
/// shape for PROCESSORS/TEMPLATE, an align-source list for statement-form
/// ALIGN (moved into [`AlignSpec::sources`]), a shadow list for statement-form
/// SHADOW, a format list for statement-form DISTRIBUTE (moved into
/// [`DistSpec::formats`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Entity {
    pub name: Name,
    /// For an alignee (`ALIGN WITH T(I) :: S(*, I), P(I)`): its own
    /// align-source list, when the ALIGN attribute has none.
    pub args: Option<Vec<Subscript>>,
    pub range: TextRange,
}

#[derive(Clone, Debug, PartialEq)]
pub struct MappingAttr {
    pub kind: AttrKind,
    /// The attribute from its keyword to its end (`DISTRIBUTE(BLOCK) ONTO P`).
    pub range: TextRange,
    pub keyword: Name,
}

#[derive(Clone, Debug, PartialEq)]
pub enum AttrKind {
    Processors,
    Template,
    Dimension(Vec<Subscript>),
    Distribute(DistSpec),
    Redistribute(DistSpec),
    Align(AlignSpec),
    Realign(AlignSpec),
    Dynamic,
    Inherit,
    Shadow(Vec<Subscript>),
    Sequence,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DistSpec {
    /// `None` when there is no format clause (`DISTRIBUTE ONTO P :: X`).
    pub formats: Option<DistFormats>,
    pub onto: Option<Onto>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DistFormats {
    /// A leading `*` before the list: descriptive (`*(BLOCK)`), or alone: transcriptive.
    pub star: Option<TextRange>,
    /// `None` for the transcriptive bare `*`.
    pub list: Option<Vec<DistFormat>>,
    pub range: TextRange,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DistFormat {
    pub kind: DistFormatKind,
    pub range: TextRange,
    pub keyword: Option<Name>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum DistFormatKind {
    Block(Option<Expr>),
    Cyclic(Option<Expr>),
    /// `*`: the dimension is not distributed.
    Collapsed,
    GenBlock(Expr),
    Indirect(Expr),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Onto {
    /// `None` for `ONTO *`.
    pub target: Option<Name>,
    /// `ONTO *P` (descriptive) or `ONTO *`.
    pub star: Option<TextRange>,
    pub range: TextRange,
}

#[derive(Clone, Debug, PartialEq)]
pub struct AlignSpec {
    /// `(I, :, *)`; `None` for the shorthand `ALIGN A WITH T` / `ALIGN WITH T :: A`.
    pub sources: Option<Vec<Subscript>>,
    pub with_keyword: Name,
    pub target: Name,
    /// `WITH *T`: descriptive (dummy arguments).
    pub star: Option<TextRange>,
    /// `T(I+1, *)`; `None` when the target has no subscript list.
    pub subscripts: Option<Vec<Subscript>>,
    /// The target with its subscripts.
    pub target_range: TextRange,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Independent {
    /// The old `INDEPENDENT (I, J)` form naming a whole nest.
    pub indices: Option<Vec<Name>>,
    pub new: Vec<Name>,
    pub reduction: Vec<Name>,
    /// `ON HOME (U(I))` / `ONHOME (U(I))` clause (an extension of
    /// ADAPTOR-era compilers): the home of each iteration.
    pub on_home: Option<Expr>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct On {
    /// `HOME (A(I))` / `HOME (T(I))` / `(P(2))`: the name and its subscripts.
    pub home: Expr,
    pub resident: Option<Resident>,
    pub new: Vec<Name>,
    /// `ON ... BEGIN` opens a block that `END ON` closes.
    pub begin: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Resident {
    pub objects: Vec<Expr>,
    pub begin: bool,
}

impl Mapping {
    pub fn attr(&self, pred: impl Fn(&AttrKind) -> bool) -> Option<&MappingAttr> {
        self.attrs.iter().find(|attr| pred(&attr.kind))
    }
}
