//! Diagnostics: what went wrong, where, and how to fix it, rendered with the source line.
//!
//! Every diagnostic has a [`Code`]; each code corresponds to one error or warning kind of the
//! Brook+ specification (seed 003, section 7) or of the preprocessor (seed 001, section 1.15).
//! `docs/DIAGNOSTICS.md` maps the seed's wording to these codes.

pub mod json;

use crate::source::{SourceFile, Span};
use brook_ir::snippet::{Colors, Excerpt, Footer, Tone};
use std::fmt::Write as _;

macro_rules! codes {
    ($($name:ident = $num:literal,)*) => {
        /// The kind of a diagnostic. The number is stable and shown as `BR0404`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Code { $($name,)* }

        impl Code {
            /// Every code, in numeric order.
            pub const ALL: &'static [Code] = &[$(Code::$name,)*];

            pub fn number(self) -> u16 {
                match self { $(Code::$name => $num,)* }
            }

            pub fn name(self) -> &'static str {
                match self { $(Code::$name => stringify!($name),)* }
            }
        }
    };
}

codes! {
    UnterminatedComment = 101,
    InvalidToken = 102,
    UnterminatedLiteral = 103,
    MalformedNumber = 104,
    TooManyErrors = 105,
    DirectiveComment = 110,
    DirectiveMissingName = 111,
    UnknownDirective = 113,
    UnsupportedIf = 114,
    LineDirective = 115,
    UnsupportedDirective = 116,
    MissingEndif = 117,
    MacroRedefinition = 118,
    DirectiveTrailingTokens = 119,
    Syntax = 201,
    StreamDeclaration = 202,
    StreamRank = 203,
    StreamInitializer = 204,
    StreamDimensionType = 205,
    UnsupportedStatement = 206,
    GraphicsOnly = 207,
    UnsupportedType = 301,
    VectorWidth = 302,
    StreamElementType = 303,
    QualifierPlacement = 304,
    StorageClass = 305,
    Vout = 306,
    PointerInKernel = 307,
    OutputNotStream = 308,
    ScatterStruct = 309,
    ScatterSize = 310,
    ArraySize = 311,
    IncompleteArraySize = 312,
    ConstantBufferLimit = 313,
    KernelReturnType = 314,
    ReductionSignature = 315,
    ReduceQualifierMissing = 316,
    ScatterOutputs = 317,
    DuplicateName = 318,
    Attribute = 319,
    SharedArray = 320,
    UninitializedConst = 321,
    StringInKernel = 322,
    SizeofInKernel = 323,
    NonAssociativeReduction = 324,
    Recursion = 325,
    SharedArrayWrite = 326,
    UndefinedName = 401,
    OperandType = 402,
    MismatchedOperands = 403,
    MismatchedType = 404,
    Constructor = 405,
    ConstructorElementType = 406,
    CastComponents = 407,
    Swizzle = 408,
    SwizzleRepetition = 409,
    NotLvalue = 410,
    ReadOnly = 411,
    Condition = 412,
    ConditionType = 413,
    TernaryMismatch = 414,
    Subscript = 415,
    NonCStyleIndex = 416,
    IndexofTarget = 417,
    IntrinsicContext = 418,
    ImplicitConversion = 419,
    MissingReturn = 420,
    Initializer = 421,
    UnknownFunction = 501,
    NoMatchingIntrinsic = 502,
    CallBeforeDefinition = 503,
    NotAFunction = 504,
    KernelCallsHost = 505,
    CallsScatterKernel = 506,
    ArgumentCount = 507,
    ArgumentType = 508,
    ArgumentKind = 509,
    IndirectCall = 510,
    ArgumentsConvertedToFloat = 511,
    ReductionShape = 512,
    InlinedTooLarge = 513,
    // LOOM (`.loom` files): shown as `LM0101`...
    LoomInvalidToken = 1101,
    LoomMalformedNumber = 1102,
    LoomTab = 1103,
    LoomIndentation = 1104,
    LoomUnclosedBracket = 1105,
    LoomImport = 1106,
    LoomSyntax = 1201,
    LoomUndeclared = 1301,
    LoomType = 1302,
    LoomDuplicate = 1303,
    LoomNotAssignable = 1304,
    LoomIndex = 1305,
    LoomArraySize = 1306,
    LoomLoopControl = 1307,
    LoomMemorySpace = 1308,
    LoomArity = 1401,
    LoomRecursion = 1402,
    LoomKernelCount = 1403,
    LoomKernelReturn = 1404,
    LoomMissingReturn = 1405,
    LoomParallelFunction = 1406,
    LoomParallelArray = 1407,
}

impl Code {
    /// Whether the code is one of the LOOM frontend's (numbers from 1000; shown as `LM....`).
    pub fn is_loom(self) -> bool {
        self.number() >= 1000
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_loom() {
            write!(f, "LM{:04}", self.number() - 1000)
        } else {
            write!(f, "BR{:04}", self.number())
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// A secondary message, optionally pointing at another place in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub span: Option<Span>,
    pub message: String,
}

/// One error or warning at one place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: Code,
    pub severity: Severity,
    /// For warnings: the level (0 to 3) from which `-w` shows it. Errors have level 0.
    pub level: u8,
    pub message: String,
    pub span: Span,
    /// Short text written under the underlined source.
    pub label: Option<String>,
    pub notes: Vec<Note>,
    /// Suggestions, each written as a `help:` line.
    pub help: Vec<String>,
    /// A mismatch that strong type checking reports and an implicit conversion resolves: a
    /// level-1 warning shown under strong checking (as Brook+ brcc did), an error under `-x`.
    pub strong_typing: bool,
}

/// The help line of a Brook+ error whose construct the BrookGPU dialect accepts.
pub const BROOKGPU_ACCEPTS: &str = "BrookGPU accepts this: compile with -g";

/// The note the first strong-typing warning of a file carries.
pub const STRONG_TYPING_NOTE: &str = "To disable strong type checking, use -a";

impl Diagnostic {
    pub fn error(code: Code, span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            code,
            severity: Severity::Error,
            level: 0,
            message: message.into(),
            span,
            label: None,
            notes: Vec::new(),
            help: Vec::new(),
            strong_typing: false,
        }
    }

    pub fn warning(code: Code, level: u8, span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            level,
            ..Diagnostic::error(code, span, message)
        }
    }

    /// This diagnostic as a strong-typing warning (see [`Diagnostic::strong_typing`]): the
    /// program compiles with the implicit conversion.
    pub fn into_strong_typing_warning(self) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            level: 1,
            strong_typing: true,
            ..self
        }
    }

    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help.push(help.into());
        self
    }

    /// With the help line saying that the BrookGPU dialect accepts what Brook+ refuses here.
    pub fn with_brookgpu_help(self) -> Self {
        self.with_help(BROOKGPU_ACCEPTS)
    }

    pub fn with_note(mut self, span: Option<Span>, message: impl Into<String>) -> Self {
        self.notes.push(Note {
            span,
            message: message.into(),
        });
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Renders `file:line:col: error[BR0404]: message`, the source line with the span underlined,
    /// then notes and help (plain text).
    pub fn render(&self, file: &SourceFile) -> String {
        self.render_with(file, Colors::Plain)
    }

    /// [`Diagnostic::render`], with ANSI colours when `colors` asks for them (a terminal).
    pub fn render_with(&self, file: &SourceFile, colors: Colors) -> String {
        let (line, col) = file.line_col(self.span.start as usize);
        let tone = match self.severity {
            Severity::Error => Tone::Error,
            Severity::Warning => Tone::Warning,
        };
        let mut out = format!(
            "{} {} {}\n",
            colors.paint(
                &format!("{}:{line}:{col}:", file.file_of(self.span.start as usize)),
                None
            ),
            colors.paint(
                &format!("{}[{}]:", self.severity.word(), self.code),
                Some(tone)
            ),
            colors.paint(&self.message, None),
        );
        let mut footers: Vec<Footer<'_>> = self
            .notes
            .iter()
            .filter(|note| note.span.is_none())
            .map(|note| Footer::Note(&note.message))
            .collect();
        footers.extend(self.help.iter().map(|h| Footer::Help(h)));
        let excerpt = Excerpt {
            label: self.label.as_deref(),
            footers: &footers,
            ..Excerpt::of(self.span.into(), tone)
        };
        out.push_str(&file.render_excerpt(&excerpt, colors));
        for note in &self.notes {
            let Some(span) = note.span else { continue };
            let (line, col) = file.line_col(span.start as usize);
            let name = file.file_of(span.start as usize);
            let _ = writeln!(
                out,
                "{} {}",
                colors.paint("note:", Some(Tone::Note)),
                colors.paint(&format!("{name}:{line}:{col}: {}", note.message), None)
            );
            out.push_str(&file.render_excerpt(&Excerpt::of(span.into(), Tone::Note), colors));
        }
        out
    }
}

impl Severity {
    /// `error` or `warning`, as diagnostics show it.
    pub fn word(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// How warnings are shown: the `-a`, `-w` and `-x` options of seed 003 section 9.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarningPolicy {
    /// Strong type checking (the default; `-a` turns it off).
    pub strong: bool,
    /// `-w N`: warnings of level N or lower are shown. Ignored under strong checking.
    pub level: u8,
    /// `-x`: shown warnings become errors (under strong checking: the level-0 and the
    /// strong-typing warnings).
    pub as_errors: bool,
}

impl Default for WarningPolicy {
    fn default() -> Self {
        WarningPolicy {
            strong: true,
            level: 0,
            as_errors: false,
        }
    }
}

impl WarningPolicy {
    /// What becomes of a warning of the given level: `None` hides it.
    ///
    /// Under strong type checking `-w` and `-x` are disabled: level 0 warnings are shown, level 1
    /// warnings are hidden, and warnings of a level above 1 become errors. Without it (`-a`),
    /// warnings up to `-w` are shown, as errors under `-x`.
    pub fn severity_for(&self, level: u8) -> Option<Severity> {
        let shown = if self.as_errors {
            Severity::Error
        } else {
            Severity::Warning
        };
        if self.strong {
            return match level {
                0 => Some(shown),
                1 => None,
                _ => Some(Severity::Error),
            };
        }
        if level > self.level {
            None
        } else if self.as_errors {
            Some(Severity::Error)
        } else {
            Some(Severity::Warning)
        }
    }
}

/// Errors kept for one file; past them checking still runs but further errors are dropped
/// (one [`Code::TooManyErrors`] says so), so a file of garbage costs time and output in
/// proportion to its size, not to its number of errors times its line lengths.
pub const MAX_ERRORS: usize = 50;

/// Collects the diagnostics of one file, applying the warning policy as they arrive.
#[derive(Clone, Debug, Default)]
pub struct Diagnostics {
    policy: WarningPolicy,
    items: Vec<Diagnostic>,
    errors: usize,
}

impl Diagnostics {
    pub fn new(policy: WarningPolicy) -> Self {
        Diagnostics {
            policy,
            items: Vec::new(),
            errors: 0,
        }
    }

    pub fn policy(&self) -> WarningPolicy {
        self.policy
    }

    pub fn push(&mut self, mut diagnostic: Diagnostic) {
        if diagnostic.strong_typing {
            if self.policy.as_errors {
                // Only Brook+ reports these conversions; BrookGPU makes them silently.
                diagnostic.severity = Severity::Error;
                diagnostic = diagnostic.with_brookgpu_help();
            }
        } else if diagnostic.severity == Severity::Warning {
            match self.policy.severity_for(diagnostic.level) {
                None => return,
                Some(severity) => diagnostic.severity = severity,
            }
        }
        if diagnostic.is_error() {
            self.errors += 1;
            if self.errors == MAX_ERRORS + 1 {
                diagnostic = Diagnostic::error(
                    Code::TooManyErrors,
                    diagnostic.span,
                    format!("too many errors: stopping after {MAX_ERRORS}"),
                )
                .with_label("errors from here on are not shown")
                .with_help("fix the errors above and check again");
            } else if self.errors > MAX_ERRORS {
                return;
            }
        }
        self.items.push(diagnostic);
    }

    pub fn error(&mut self, code: Code, span: Span, message: impl Into<String>) {
        self.push(Diagnostic::error(code, span, message));
    }

    pub fn has_errors(&self) -> bool {
        self.items.iter().any(Diagnostic::is_error)
    }

    pub fn error_count(&self) -> usize {
        self.items.iter().filter(|d| d.is_error()).count()
    }

    /// The diagnostics in source order (stable for equal positions); the first strong-typing
    /// warning carries [`STRONG_TYPING_NOTE`].
    pub fn into_sorted(mut self) -> Vec<Diagnostic> {
        self.items
            .sort_by_key(|d| (d.code == Code::TooManyErrors, d.span.start));
        if let Some(first) = self.items.iter_mut().find(|d| d.strong_typing) {
            first.notes.push(Note {
                span: None,
                message: STRONG_TYPING_NOTE.into(),
            });
        }
        self.items
    }

    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_location_line_and_carets() {
        let file = SourceFile::new("t.br", "kernel void f()\n{\n    x = 1;\n}\n");
        let d = Diagnostic::error(
            Code::UndefinedName,
            Span::new(22, 23),
            "variable not defined",
        )
        .with_label("`x` is not declared")
        .with_help("declare it");
        let text = d.render(&file);
        assert_eq!(
            text,
            "t.br:3:5: error[BR0401]: variable not defined\n  |\n3 |     x = 1;\n  |     ^ `x` is not declared\n  |\n  = help: declare it\n"
        );
    }

    #[test]
    fn spans_past_the_visible_line_render() {
        let file = SourceFile::new("t.br", "a = b\r");
        let end = Span::new(6, 6);
        let text = Diagnostic::error(Code::Syntax, end, "expected `;`").render(&file);
        assert!(text.starts_with("t.br:1:7: error"), "{text}");
        assert!(text.contains("1 | a = b\n  |      ^\n"), "{text}");
    }

    #[test]
    fn strong_checking_turns_high_level_warnings_into_errors() {
        let policy = WarningPolicy::default();
        assert_eq!(policy.severity_for(0), Some(Severity::Warning));
        assert_eq!(policy.severity_for(1), None);
        assert_eq!(policy.severity_for(2), Some(Severity::Error));
        let relaxed = WarningPolicy {
            strong: false,
            level: 2,
            as_errors: true,
        };
        assert_eq!(relaxed.severity_for(2), Some(Severity::Error));
        assert_eq!(relaxed.severity_for(3), None);
    }
}
