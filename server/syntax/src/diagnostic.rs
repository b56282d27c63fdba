//! Diagnostics shared by every layer: stable codes, severities, ranges.

use crate::TextRange;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
    Information,
    Hint,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Information => "info",
            Severity::Hint => "hint",
        }
    }

    pub fn from_name(name: &str) -> Option<Severity> {
        Some(match name.to_ascii_lowercase().as_str() {
            "error" => Severity::Error,
            "warning" | "warn" => Severity::Warning,
            "info" | "information" => Severity::Information,
            "hint" => Severity::Hint,
            _ => return None,
        })
    }
}

macro_rules! codes {
    ($($variant:ident = $code:literal, $severity:ident, $summary:literal;)*) => {
        /// Every diagnostic the tool emits has one of these stable codes,
        /// documented in `docs/diagnostics.md`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code {
            $($variant,)*
        }

        impl Code {
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The code as users see it, e.g. `HPF001`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $code,)*
                }
            }

            pub fn default_severity(self) -> Severity {
                match self {
                    $(Code::$variant => Severity::$severity,)*
                }
            }

            /// One line saying what the code means.
            pub fn summary(self) -> &'static str {
                match self {
                    $(Code::$variant => $summary,)*
                }
            }

            pub fn from_name(name: &str) -> Option<Code> {
                Code::ALL.iter().copied().find(|code| code.as_str().eq_ignore_ascii_case(name))
            }
        }
    };
}

codes! {
    DirectiveSyntax = "HPF001", Error, "malformed HPF directive";
    UnknownDirective = "HPF002", Error, "unknown HPF directive keyword";
    FortranSyntax = "HPF003", Warning, "Fortran syntax error";
    TooDeep = "HPF004", Warning, "nesting too deep to analyse";
    TooLarge = "HPF005", Warning, "file too large to analyse";
    IncludeNotFound = "HPF006", Error, "included file not found, or included in a cycle";
    Preprocessor = "HPF007", Error, "C preprocessor directive error";
    UnknownName = "HPF010", Error, "unknown name in a directive";
    Redeclared = "HPF011", Error, "name mapped or declared twice";
    AlignCycle = "HPF012", Error, "ALIGN of an array with itself or in a cycle";
    AligneeDistributed = "HPF013", Error, "an alignee is also a distributee";
    AlignRankMismatch = "HPF014", Error, "ALIGN source list does not match the alignee's rank";
    AlignTargetRankMismatch = "HPF015", Error, "ALIGN subscripts do not match the target's rank";
    AlignOutOfBounds = "HPF016", Error, "alignment maps elements outside the target";
    OntoRankMismatch = "HPF017", Error, "processor arrangement rank does not match the distributed dimensions";
    BlockTooSmall = "HPF018", Error, "BLOCK(m) too small for the extent";
    IndependentNotBeforeLoop = "HPF019", Error, "INDEPENDENT not followed by DO or FORALL";
    InheritWithAlign = "HPF020", Error, "INHERIT together with ALIGN";
    DistributeRankMismatch = "HPF021", Error, "distribution formats do not match the distributee's rank";
    NonAffineAlign = "HPF022", Error, "ALIGN subscript is not of the form m*i+n";
    NotConstant = "HPF023", Information, "expression cannot be evaluated at compile time";
    MisplacedDirective = "HPF024", Warning, "directive not allowed here";
    NotAnArray = "HPF025", Error, "mapped object is not an array or template";
    NotDynamic = "HPF026", Warning, "REALIGN/REDISTRIBUTE of an object without DYNAMIC";
    BadProcessorCount = "HPF027", Error, "non-positive extent or block size";
    Dialect = "HPF030", Information, "a dialect form accepted in place of its HPF 2.0 spelling";
    MisalignedTransfer = "HPF101", Warning, "misalignment forces a transfer";
    HaloTransfer = "HPF102", Information, "several offsets of an array: a halo (SHADOW)";
    Broadcast = "HPF103", Information, "an element is broadcast to every iteration";
    AnalysisGaveUp = "HPF104", Hint, "loop not analysed";
}

/// Another place that explains a diagnostic (the ALIGN directive, the loop...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Related {
    pub range: TextRange,
    pub message: String,
    /// The other file `range` is in (a module USEd from it), as the
    /// analysis was given its name; `None`: the diagnostic's own file.
    pub file: Option<std::sync::Arc<str>>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: Code,
    pub severity: Severity,
    pub range: TextRange,
    pub message: String,
    pub related: Vec<Related>,
    /// The edit that rewrites the text to the standard form (HPF030).
    pub fix: Option<Fix>,
}

/// A rewrite a diagnostic proposes: each edit's text in place of its range
/// (the ranges do not overlap).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    /// What the fix does, as a code action's title.
    pub title: String,
    pub edits: Vec<(TextRange, String)>,
}

impl Diagnostic {
    pub fn new(code: Code, range: TextRange, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code,
            severity: code.default_severity(),
            range,
            message: message.into(),
            related: Vec::new(),
            fix: None,
        }
    }

    pub fn with_fix(mut self, title: impl Into<String>, range: TextRange, new_text: impl Into<String>) -> Diagnostic {
        self.fix = Some(Fix { title: title.into(), edits: vec![(range, new_text.into())] });
        self
    }

    pub fn with_related(mut self, range: TextRange, message: impl Into<String>) -> Diagnostic {
        self.related.push(Related { range, message: message.into(), file: None });
        self
    }

    /// A related place that may be in another file (`file`), see [`Related::file`].
    pub fn with_related_in(
        mut self,
        file: Option<std::sync::Arc<str>>,
        range: TextRange,
        message: impl Into<String>,
    ) -> Diagnostic {
        self.related.push(Related { range, message: message.into(), file });
        self
    }
}
