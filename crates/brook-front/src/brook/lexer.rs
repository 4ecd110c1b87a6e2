//! The lexer: source text to tokens, skipping comments. It never fails: malformed input becomes
//! a diagnostic and lexing continues after it.

use super::token::{Punct, Token, TokenKind};
use crate::diagnostic::{Code, Diagnostic, Diagnostics};
use crate::source::{SourceFile, Span};

/// Splits `file` into tokens, ending with one `Eof` token.
pub fn lex(file: &SourceFile, diags: &mut Diagnostics) -> Vec<Token> {
    let mut lexer = Lexer {
        bytes: file.text().as_bytes(),
        pos: 0,
        line_start: true,
        directive_line: false,
        tokens: Vec::new(),
        diags,
    };
    lexer.run();
    lexer.tokens
}

struct Lexer<'a, 'd> {
    bytes: &'a [u8],
    pos: usize,
    /// No token has been produced yet on the current line.
    line_start: bool,
    /// The current line is a preprocessor directive.
    directive_line: bool,
    tokens: Vec<Token>,
    diags: &'d mut Diagnostics,
}

impl Lexer<'_, '_> {
    fn peek(&self, ahead: usize) -> u8 {
        self.bytes.get(self.pos + ahead).copied().unwrap_or(0)
    }

    fn run(&mut self) {
        while self.skip_trivia() {
            let start = self.pos;
            let kind = self.token_kind();
            self.push(kind, start);
        }
        let end = self.bytes.len();
        self.tokens.push(Token {
            kind: TokenKind::Eof,
            span: Span::new(end, end),
            text: Span::new(end, end),
            line_start: true,
        });
    }

    fn push(&mut self, kind: TokenKind, start: usize) {
        let span = Span::new(start, self.pos);
        if self.line_start {
            self.directive_line = kind == TokenKind::Punct(Punct::Hash);
        }
        self.tokens.push(Token {
            kind,
            span,
            text: span,
            line_start: self.line_start,
        });
        self.line_start = false;
    }

    /// Skips white space and comments; false at end of input.
    fn skip_trivia(&mut self) -> bool {
        loop {
            match self.peek(0) {
                b'\n' => {
                    self.line_start = true;
                    self.directive_line = false;
                    self.pos += 1;
                }
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c => self.pos += 1,
                b'/' if self.peek(1) == b'/' => {
                    let start = self.pos;
                    while self.pos < self.bytes.len() && self.peek(0) != b'\n' {
                        self.pos += 1;
                    }
                    self.refuse_nul(start);
                }
                b'/' if self.peek(1) == b'*' => {
                    let start = self.pos;
                    self.block_comment();
                    self.refuse_nul(start);
                }
                _ => return self.pos < self.bytes.len(),
            }
        }
    }

    fn block_comment(&mut self) {
        let start = self.pos;
        self.pos += 2;
        let mut spans_lines = false;
        loop {
            if self.pos >= self.bytes.len() {
                let span = Span::new(start, start + 2);
                self.diags.push(
                    Diagnostic::error(Code::UnterminatedComment, span, "Expecting end of comment")
                        .with_label("this comment is never closed")
                        .with_help("close it with `*/`"),
                );
                return;
            }
            if self.peek(0) == b'*' && self.peek(1) == b'/' {
                self.pos += 2;
                break;
            }
            spans_lines |= self.peek(0) == b'\n';
            self.pos += 1;
        }
        if spans_lines && self.directive_line {
            let span = Span::new(start, start + 2);
            self.diags.push(
                Diagnostic::error(
                    Code::DirectiveComment,
                    span,
                    "comment should end in the same line if it is in the preprocessor directive line",
                )
                .with_label("this comment continues past the end of the directive line"),
            );
        }
        if spans_lines {
            self.line_start = true;
            self.directive_line = false;
        }
    }

    /// A NUL byte inside the comment or literal that began at `start` and ends here: C
    /// compilers stop there, and so would the copy of the kernels brcc embeds in the C++ it
    /// writes (every kernel after it would silently vanish), so it is an error. Outside
    /// comments and literals a NUL is an invalid character like any other.
    fn refuse_nul(&mut self, start: usize) {
        let Some(at) = self.bytes[start..self.pos].iter().position(|&b| b == 0) else {
            return;
        };
        let at = start + at;
        self.diags.push(
            Diagnostic::error(
                Code::InvalidToken,
                Span::new(at, at + 1),
                "a NUL byte (\\0) in the source",
            )
            .with_label("this byte is 0")
            .with_help(
                "remove it: C compilers and the program's embedded kernel source stop at a NUL",
            ),
        );
    }

    fn token_kind(&mut self) -> TokenKind {
        let c = self.peek(0);
        if c.is_ascii_alphabetic() || c == b'_' {
            while self.peek(0).is_ascii_alphanumeric() || self.peek(0) == b'_' {
                self.pos += 1;
            }
            return TokenKind::Ident;
        }
        if c.is_ascii_digit() || (c == b'.' && self.peek(1).is_ascii_digit()) {
            return self.number();
        }
        if c == b'"' || c == b'\'' {
            return self.quoted(c);
        }
        let rest = &self.bytes[self.pos..];
        for &p in Punct::BY_LENGTH {
            if rest.starts_with(p.text().as_bytes()) {
                self.pos += p.text().len();
                return TokenKind::Punct(p);
            }
        }
        self.invalid_character()
    }

    fn invalid_character(&mut self) -> TokenKind {
        let start = self.pos;
        // At most one character's bytes are decoded (decoding the rest of the file for each
        // invalid character made a file of them quadratic).
        let head = &self.bytes[start..(start + 4).min(self.bytes.len())];
        let valid = match std::str::from_utf8(head) {
            Ok(text) => text,
            Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or(""),
        };
        let ch_len = valid.chars().next().map_or(1, char::len_utf8);
        // Step over a whole UTF-8 sequence even when the slice above was not valid UTF-8.
        let mut len = ch_len.max(1);
        while start + len < self.bytes.len() && (self.bytes[start + len] & 0xC0) == 0x80 {
            len += 1;
        }
        self.pos += len;
        self.diags.push(
            Diagnostic::error(
                Code::InvalidToken,
                Span::new(start, self.pos),
                "invalid character in source",
            )
            .with_label("not part of any Brook or C token"),
        );
        TokenKind::Punct(Punct::Backslash)
    }

    fn number(&mut self) -> TokenKind {
        let start = self.pos;
        if self.peek(0) == b'0' && matches!(self.peek(1), b'x' | b'X') {
            self.pos += 2;
            while self.peek(0).is_ascii_hexdigit() {
                self.pos += 1;
            }
            return self.int_suffix(start);
        }
        let mut is_float = false;
        self.digits();
        if self.peek(0) == b'.' {
            is_float = true;
            self.pos += 1;
            self.digits();
        }
        if matches!(self.peek(0), b'e' | b'E') {
            let sign = usize::from(matches!(self.peek(1), b'+' | b'-'));
            if self.peek(1 + sign).is_ascii_digit() {
                is_float = true;
                self.pos += 1 + sign;
                self.digits();
            }
        }
        if is_float {
            if matches!(self.peek(0), b'f' | b'F' | b'l' | b'L') {
                self.pos += 1;
            }
            return self.end_number(start, TokenKind::FloatLit);
        }
        self.int_suffix(start)
    }

    fn digits(&mut self) {
        while self.peek(0).is_ascii_digit() {
            self.pos += 1;
        }
    }

    fn int_suffix(&mut self, start: usize) -> TokenKind {
        while matches!(self.peek(0), b'u' | b'U' | b'l' | b'L') {
            self.pos += 1;
        }
        self.end_number(start, TokenKind::IntLit)
    }

    /// A number running straight into letters (`12abc`, `1.0q`) is malformed.
    fn end_number(&mut self, start: usize, kind: TokenKind) -> TokenKind {
        if self.peek(0).is_ascii_alphanumeric() || self.peek(0) == b'_' || self.peek(0) == b'.' {
            while self.peek(0).is_ascii_alphanumeric() || matches!(self.peek(0), b'_' | b'.') {
                self.pos += 1;
            }
            self.diags.push(
                Diagnostic::error(
                    Code::MalformedNumber,
                    Span::new(start, self.pos),
                    "malformed number literal",
                )
                .with_help(
                    "write integers as `12`, `0x1F` or `12u`, and floats as `1.5f` or `2.0`",
                ),
            );
        }
        kind
    }

    fn quoted(&mut self, quote: u8) -> TokenKind {
        let start = self.pos;
        self.pos += 1;
        loop {
            match self.peek(0) {
                b'\\' if self.pos + 1 < self.bytes.len() => self.pos += 2,
                b'\n' | 0 if self.pos >= self.bytes.len() || self.peek(0) == b'\n' => {
                    self.diags.push(
                        Diagnostic::error(
                            Code::UnterminatedLiteral,
                            Span::new(start, self.pos),
                            "unterminated literal",
                        )
                        .with_label(format!("missing closing {}", quote as char)),
                    );
                    break;
                }
                c if c == quote => {
                    self.pos += 1;
                    break;
                }
                _ => self.pos += 1,
            }
        }
        self.refuse_nul(start);
        if quote == b'"' {
            TokenKind::StrLit
        } else {
            TokenKind::CharLit
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::WarningPolicy;

    fn kinds(text: &str) -> Vec<(TokenKind, String)> {
        let file = SourceFile::new("t.br", text);
        let mut diags = Diagnostics::new(WarningPolicy::default());
        let tokens = lex(&file, &mut diags);
        assert!(!diags.has_errors(), "{:?}", diags.into_sorted());
        tokens
            .iter()
            .map(|t| (t.kind, file.slice(t.text.range()).to_string()))
            .collect()
    }

    #[test]
    fn numbers_and_punctuation() {
        let toks = kinds("a<<=1.5f>>.5 0x1Fu 1e3 1.f");
        let texts: Vec<_> = toks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(
            texts,
            ["a", "<<=", "1.5f", ">>", ".5", "0x1Fu", "1e3", "1.f", ""]
        );
        assert_eq!(toks[2].0, TokenKind::FloatLit);
        assert_eq!(toks[5].0, TokenKind::IntLit);
        assert_eq!(toks[6].0, TokenKind::FloatLit);
    }

    #[test]
    fn comments_are_skipped_and_lines_tracked() {
        let file = SourceFile::new("t.br", "a /* x\n y */ b // c\n#d");
        let mut diags = Diagnostics::new(WarningPolicy::default());
        let tokens = lex(&file, &mut diags);
        assert_eq!(tokens.len(), 5);
        assert!(tokens[0].line_start);
        assert!(
            tokens[1].line_start,
            "a token after a multi-line comment starts a line"
        );
        assert!(tokens[2].line_start && tokens[2].is_punct(Punct::Hash));
    }

    #[test]
    fn bad_input_is_reported_not_fatal() {
        let file = SourceFile::new("t.br", "a @ \"open\n/* never");
        let mut diags = Diagnostics::new(WarningPolicy::default());
        let tokens = lex(&file, &mut diags);
        assert_eq!(diags.error_count(), 3);
        assert_eq!(tokens.last().unwrap().kind, TokenKind::Eof);
    }

    #[test]
    fn a_nul_byte_in_a_comment_or_literal_is_an_error_at_its_place() {
        for text in ["a // x\0y\nb", "a /* \0 */ b", "a \"x\0\" b", "a '\0' b"] {
            let file = SourceFile::new("t.br", text);
            let mut diags = Diagnostics::new(WarningPolicy::default());
            lex(&file, &mut diags);
            let errors = diags.into_sorted();
            assert_eq!(errors.len(), 1, "{text:?}: {errors:?}");
            let at = text.find('\0').unwrap();
            assert_eq!(errors[0].span, Span::new(at, at + 1), "{text:?}");
            assert!(errors[0].message.contains("NUL"), "{text:?}");
        }
    }
}
