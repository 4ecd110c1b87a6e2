//! LOOM tokens (seed 004, section 3.2): reserved words, thread parameters, operators and
//! delimiters, identifiers and constants, and the block tokens the layout rules insert.

use crate::source::Span;

#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    /// `[a-zA-Z][a-zA-Z0-9_']*` that is not reserved.
    Ident(String),
    /// An integer constant (64 bits).
    Int(u64),
    /// A floating-point constant (a decimal point or an exponent).
    Float(f64),
    Keyword(Keyword),
    /// `B`, `BLOCKS`, `BLOCKSIZE`, `T`, `THREADS` and their `X_`/`Y_` forms.
    Thread(ThreadParam),
    Op(Op),
    /// The start of a block: `{` written, or inserted at the end of a block-introducing line.
    BlockOpen,
    /// The end of a block: `}` written, or inserted where the indentation goes back.
    BlockClose,
    /// The end of a statement: `;` written, or inserted at the end of a line.
    StmtEnd,
}

macro_rules! keywords {
    ($($name:ident = $text:literal,)*) => {
        /// Reserved words: keywords, type names and the predefined constants.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Keyword { $($name,)* }

        impl Keyword {
            /// Every reserved word.
            pub const ALL: &[Keyword] = &[$(Keyword::$name,)*];

            pub fn from_text(text: &str) -> Option<Keyword> {
                match text { $($text => Some(Keyword::$name),)* _ => None }
            }

            pub fn text(self) -> &'static str {
                match self { $(Keyword::$name => $text,)* }
            }
        }
    };
}

keywords! {
    Break = "break",
    Const = "const",
    Continue = "continue",
    Else = "else",
    If = "if",
    Import = "import",
    For = "for",
    Func = "func",
    Global = "global",
    Kernel = "kernel",
    Local = "local",
    Return = "return",
    Shared = "shared",
    Then = "then",
    Type = "type",
    While = "while",
    Bool = "Bool",
    Byte = "Byte",
    Float32 = "Float32",
    Float64 = "Float64",
    Int32 = "Int32",
    Int64 = "Int64",
    UInt32 = "UInt32",
    UInt64 = "UInt64",
    True = "TRUE",
    False = "FALSE",
}

impl Keyword {
    /// Whether a line holding this word opens a block (rule 1 of section 3.1: `if-then`,
    /// `else`, `for`, `while`, `func`, `kernel`).
    pub fn opens_block(self) -> bool {
        matches!(
            self,
            Keyword::Then
                | Keyword::Else
                | Keyword::For
                | Keyword::While
                | Keyword::Func
                | Keyword::Kernel
        )
    }
}

/// Which thread parameter, and along which axis (`None`: the 1-D form).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ThreadParam {
    pub name: ThreadName,
    pub axis: Option<Axis>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ThreadName {
    /// `B`: the index of the current thread block.
    Block,
    /// `BLOCKS`: the number of blocks in the grid.
    Blocks,
    /// `BLOCKSIZE`: threads per block.
    BlockSize,
    /// `T`: the index of the current thread.
    Thread,
    /// `THREADS`: threads in the grid.
    Threads,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Axis {
    X,
    Y,
}

impl ThreadParam {
    pub fn from_text(text: &str) -> Option<ThreadParam> {
        let (axis, rest) = match text.split_at_checked(2) {
            Some(("X_", rest)) => (Some(Axis::X), rest),
            Some(("Y_", rest)) => (Some(Axis::Y), rest),
            _ => (None, text),
        };
        let name = match rest {
            "B" => ThreadName::Block,
            "BLOCKS" => ThreadName::Blocks,
            "BLOCKSIZE" => ThreadName::BlockSize,
            "T" => ThreadName::Thread,
            "THREADS" => ThreadName::Threads,
            _ => return None,
        };
        Some(ThreadParam { name, axis })
    }
}

crate::token_table::spelled_tokens! {
    /// Operators and delimiters (section 3.2.3), longest spellings first.
    pub enum Op {
        Range3 = "...",
        LeftBrackets = "[[",
        RightBrackets = "]]",
        Assign = "<-",
        Map = "//",
        Reduce = "/.",
        ScanLeft = "/:",
        ScanRight = ":/",
        Range2 = "..",
        Shl = "<<",
        Shr = ">>",
        Le = "<=",
        Ge = ">=",
        Ne = "!=",
        AndAnd = "&&",
        OrOr = "||",
        AddAssign = "+=",
        SubAssign = "-=",
        MulAssign = "*=",
        LeftParen = "(",
        RightParen = ")",
        LeftBracket = "[",
        RightBracket = "]",
        Colon = ":",
        Comma = ",",
        Dot = ".",
        Not = "!",
        Star = "*",
        Slash = "/",
        Percent = "%",
        Amp = "&",
        Plus = "+",
        Minus = "-",
        Pipe = "|",
        Caret = "^",
        Eq = "=",
        Lt = "<",
        Gt = ">",
    }
}

impl TokenKind {
    /// The token as LOOM text (inserted block tokens as the braces and semicolons of the
    /// preprocessed form).
    pub fn text(&self) -> String {
        match self {
            TokenKind::Ident(name) => name.clone(),
            TokenKind::Int(v) => v.to_string(),
            TokenKind::Float(v) => format!("{v:?}"),
            TokenKind::Keyword(k) => k.text().to_string(),
            TokenKind::Thread(t) => {
                let axis = match t.axis {
                    Some(Axis::X) => "X_",
                    Some(Axis::Y) => "Y_",
                    None => "",
                };
                let name = match t.name {
                    ThreadName::Block => "B",
                    ThreadName::Blocks => "BLOCKS",
                    ThreadName::BlockSize => "BLOCKSIZE",
                    ThreadName::Thread => "T",
                    ThreadName::Threads => "THREADS",
                };
                format!("{axis}{name}")
            }
            TokenKind::Op(op) => op.text().to_string(),
            TokenKind::BlockOpen => "{".into(),
            TokenKind::BlockClose => "}".into(),
            TokenKind::StmtEnd => ";".into(),
        }
    }
}
