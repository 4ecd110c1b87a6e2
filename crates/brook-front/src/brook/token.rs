//! Tokens of `.br` source: C tokens plus nothing else (Brook's extensions are spelled with C
//! tokens and contextual keywords).

use crate::source::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TokenKind {
    Ident,
    IntLit,
    FloatLit,
    CharLit,
    StrLit,
    Punct(Punct),
    /// A whole preprocessor line kept as host text (when the brcc preprocessor is off, or for
    /// directives that belong to the C++ compiler such as `#include`).
    Directive,
    Eof,
}

crate::token_table::spelled_tokens! {
    pub enum Punct {
        ShlAssign = "<<=",
        ShrAssign = ">>=",
        Ellipsis = "...",
        Arrow = "->",
        Inc = "++",
        Dec = "--",
        Shl = "<<",
        Shr = ">>",
        Le = "<=",
        Ge = ">=",
        EqEq = "==",
        Ne = "!=",
        AndAnd = "&&",
        OrOr = "||",
        AddAssign = "+=",
        SubAssign = "-=",
        MulAssign = "*=",
        DivAssign = "/=",
        RemAssign = "%=",
        AndAssign = "&=",
        XorAssign = "^=",
        OrAssign = "|=",
        ColonColon = "::",
        HashHash = "##",
        Plus = "+",
        Minus = "-",
        Star = "*",
        Slash = "/",
        Percent = "%",
        Lt = "<",
        Gt = ">",
        Assign = "=",
        Bang = "!",
        Amp = "&",
        Pipe = "|",
        Caret = "^",
        Tilde = "~",
        Question = "?",
        Colon = ":",
        Semi = ";",
        Comma = ",",
        Dot = ".",
        LParen = "(",
        RParen = ")",
        LBrace = "{",
        RBrace = "}",
        LBracket = "[",
        RBracket = "]",
        Hash = "#",
        Backslash = "\\",
    }
}

/// One token. `span` is where diagnostics point; `text` is where its spelling is. The two differ
/// only for tokens produced by macro expansion, which point at the macro use but are spelled as
/// in the definition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
    pub text: Span,
    /// The token is the first on its source line (directives start with such a `#`).
    pub line_start: bool,
}

impl Token {
    pub fn is_punct(&self, p: Punct) -> bool {
        self.kind == TokenKind::Punct(p)
    }
}
