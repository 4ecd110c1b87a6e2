//! The tokens of one line of LOOM text (section 3.2): `--` comments to the end of the line,
//! reserved words, thread parameters, identifiers (`[a-zA-Z][a-zA-Z0-9_']*`), 64-bit integer
//! and floating-point constants (an optional decimal point and signed exponent), and the
//! operators of section 3.2.3, longest spelling first. Whitespace separates tokens. A
//! character that starts no token is reported and skipped, so lexing always finishes.

use super::token::{Keyword, Op, ThreadParam, Token, TokenKind};
use crate::diagnostic::{Code, Diagnostics};
use crate::source::Span;

/// The tokens of `line`, which starts at byte `start` of the file.
pub fn lex_line(line: &str, start: usize, diagnostics: &mut Diagnostics) -> Vec<Token> {
    let bytes = line.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b' ' || c == b'\t' || c == b'\r' {
            i += 1;
        } else if line[i..].starts_with("--") {
            break;
        } else if c.is_ascii_alphabetic() {
            let end = word_end(bytes, i);
            tokens.push(word(&line[i..end], Span::new(start + i, start + end)));
            i = end;
        } else if c.is_ascii_digit() {
            let (end, kind) = number(line, i);
            let span = Span::new(start + i, start + end);
            match kind {
                Some(kind) => tokens.push(Token { kind, span }),
                None => {
                    diagnostics.error(
                        Code::LoomMalformedNumber,
                        span,
                        format!("malformed number `{}`", &line[i..end]),
                    );
                    // A stand-in, so the rest of the line is still parsed and checked.
                    tokens.push(Token {
                        kind: TokenKind::Int(0),
                        span,
                    });
                }
            }
            i = end;
        } else if let Some(op) = Op::BY_LENGTH
            .iter()
            .find(|op| line[i..].starts_with(op.text()))
        {
            let end = i + op.text().len();
            tokens.push(Token {
                kind: TokenKind::Op(*op),
                span: Span::new(start + i, start + end),
            });
            i = end;
        } else if c == b'{' || c == b'}' || c == b';' {
            let kind = match c {
                b'{' => TokenKind::BlockOpen,
                b'}' => TokenKind::BlockClose,
                _ => TokenKind::StmtEnd,
            };
            tokens.push(Token {
                kind,
                span: Span::new(start + i, start + i + 1),
            });
            i += 1;
        } else {
            let width = line[i..].chars().next().map_or(1, char::len_utf8);
            diagnostics.error(
                Code::LoomInvalidToken,
                Span::new(start + i, start + i + width),
                format!(
                    "`{}` is not a LOOM token",
                    line[i..i + width].escape_debug()
                ),
            );
            i += width;
        }
    }
    tokens
}

fn word_end(bytes: &[u8], from: usize) -> usize {
    let mut end = from;
    while end < bytes.len()
        && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_' || bytes[end] == b'\'')
    {
        end += 1;
    }
    end
}

fn word(text: &str, span: Span) -> Token {
    let kind = if let Some(k) = Keyword::from_text(text) {
        TokenKind::Keyword(k)
    } else if let Some(t) = ThreadParam::from_text(text) {
        TokenKind::Thread(t)
    } else {
        TokenKind::Ident(text.to_string())
    };
    Token { kind, span }
}

/// A constant from `from`: its end and value (`None`: malformed). A `.` followed by another
/// `.` is a range, not a decimal point (`1..5`).
fn number(line: &str, from: usize) -> (usize, Option<TokenKind>) {
    let bytes = line.as_bytes();
    let digits = |mut i: usize| {
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let mut end = digits(from);
    let mut float = false;
    if bytes.get(end) == Some(&b'.') && bytes.get(end + 1) != Some(&b'.') {
        float = true;
        end = digits(end + 1);
    }
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        let mut at = end + 1;
        if matches!(bytes.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        if bytes.get(at).is_some_and(u8::is_ascii_digit) {
            float = true;
            end = digits(at);
        }
    }
    // Letters glued to a number (`12abc`) make it malformed.
    let glued = word_end(bytes, end);
    if glued > end {
        return (glued, None);
    }
    let text = &line[from..end];
    let kind = if float {
        text.parse::<f64>().ok().map(TokenKind::Float)
    } else {
        text.parse::<u64>().ok().map(TokenKind::Int)
    };
    (end, kind)
}
