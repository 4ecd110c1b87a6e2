//! The layout rules of section 3.1: where a LOOM program's line breaks and indentation put
//! blocks and statements. They insert tokens, not text, so every position a diagnostic names
//! is the user's own.
//!
//! Per line (blank, comment-only and `import` lines do not count; a line that leaves a `(`, `[` or `[[`
//! open continues on the next ones, which form one logical line with it):
//! 1. a line holding a block-introducing word (`then`, `else`, `for`, `while`, `func`,
//!    `kernel`) ends with an inserted block start (unless it ends with a written `{`);
//! 2. the line after it must be indented further: its indentation opens the block's level;
//! 3. another line ends with an inserted statement end, and must be indented as the line
//!    before it;
//! 4. a line indented less closes every block whose level is deeper, and must then be
//!    indented exactly as an enclosing level.
//!
//! At the end of the text every open block is closed. Indentation is spaces: a tab in it is an
//! error (the draft leaves it undefined), counted as one column so that layout goes on.
//! Wrong indentation is reported and the line taken at the level it should have, so one run
//! reports every problem.

use super::lexer::lex_line;
use super::token::{Op, Token, TokenKind};
use crate::diagnostic::{Code, Diagnostics};
use crate::source::{SourceFile, Span};

/// One logical line: its indentation (columns), where that indentation ends, its tokens, and
/// the byte offset just after its last token.
struct Line {
    indent: usize,
    first: usize,
    tokens: Vec<Token>,
    end: usize,
}

/// The tokens of a LOOM file with the layout's block and statement tokens inserted.
pub fn layout(file: &SourceFile, diagnostics: &mut Diagnostics) -> Vec<Token> {
    let lines = logical_lines(file, diagnostics);
    let mut out = Vec::new();
    let mut levels: Vec<usize> = Vec::new();
    let base = lines.first().map_or(0, |l| l.indent);
    let mut opened: Option<usize> = None;
    for line in lines {
        let at = Span::new(line.first, line.first);
        match opened.take() {
            Some(header) if line.indent > header => levels.push(line.indent),
            Some(_) => {
                diagnostics.error(
                    Code::LoomIndentation,
                    at,
                    "expected an indented block: the line before opens one, so this line must be indented further",
                );
                out.push(inserted(TokenKind::BlockClose, at));
                close_to(&mut levels, line.indent, base, at, &mut out, diagnostics);
            }
            None => close_to(&mut levels, line.indent, base, at, &mut out, diagnostics),
        }
        let opens = line
            .tokens
            .iter()
            .any(|t| matches!(&t.kind, TokenKind::Keyword(k) if k.opens_block()));
        let ends_with_brace = line
            .tokens
            .last()
            .is_some_and(|t| t.kind == TokenKind::BlockOpen);
        let end = Span::new(line.end, line.end);
        let indent = line.indent;
        out.extend(line.tokens);
        if opens {
            if !ends_with_brace {
                out.push(inserted(TokenKind::BlockOpen, end));
            }
            opened = Some(indent);
        } else if !matches!(
            out.last().map(|t| &t.kind),
            Some(TokenKind::StmtEnd | TokenKind::BlockClose)
        ) {
            out.push(inserted(TokenKind::StmtEnd, end));
        }
    }
    let end = Span::new(file.text().len(), file.text().len());
    if opened.is_some() {
        diagnostics.error(
            Code::LoomIndentation,
            end,
            "expected an indented block at the end of the file: the last line opens one",
        );
        out.push(inserted(TokenKind::BlockClose, end));
    }
    for _ in levels.drain(..) {
        out.push(inserted(TokenKind::BlockClose, end));
    }
    out
}

fn inserted(kind: TokenKind, span: Span) -> Token {
    Token { kind, span }
}

/// Closes the blocks deeper than `indent` (rule 4); the line must then sit on a level.
fn close_to(
    levels: &mut Vec<usize>,
    indent: usize,
    base: usize,
    at: Span,
    out: &mut Vec<Token>,
    diagnostics: &mut Diagnostics,
) {
    let top = levels.last().copied().unwrap_or(base);
    if indent > top {
        diagnostics.error(
            Code::LoomIndentation,
            at,
            format!("unexpected indentation: {indent} columns where the block's lines have {top} (only a line after `then`, `else`, `for`, `while`, `func` or `kernel` starts a deeper block)"),
        );
        return;
    }
    // Close the deeper blocks; a line between two levels stays in the deeper one (the
    // likelier reading of a slip, and the block keeps its statements).
    while levels.last().is_some_and(|&level| indent < level) {
        let below = levels.len().checked_sub(2).map_or(base, |i| levels[i]);
        if below < indent {
            break;
        }
        levels.pop();
        out.push(inserted(TokenKind::BlockClose, at));
    }
    let now = levels.last().copied().unwrap_or(base);
    if indent != now {
        let mut known: Vec<String> = std::iter::once(base)
            .chain(levels.iter().copied())
            .map(|l| l.to_string())
            .collect();
        known.dedup();
        diagnostics.error(
            Code::LoomIndentation,
            at,
            format!(
                "indentation error: {indent} columns match no enclosing block (their lines have {} columns)",
                known.join(", ")
            ),
        );
    }
}

/// The file's logical lines: physical lines with tokens, a line that leaves a bracket open
/// joined with the lines up to the one that closes it.
fn logical_lines(file: &SourceFile, diagnostics: &mut Diagnostics) -> Vec<Line> {
    let mut lines: Vec<Line> = Vec::new();
    let mut open: Vec<Span> = Vec::new();
    for index in 0..file.line_count() {
        let start = file.line_start(index);
        let raw = file.line_text(index);
        if super::import::import_path(raw).is_some() {
            // Spliced by `import`, which reports its problems.
            continue;
        }
        let tokens = lex_line(raw, start, diagnostics);
        let Some(last) = tokens.last() else {
            continue;
        };
        let end = last.span.end as usize;
        let continues = !open.is_empty();
        track_brackets(&tokens, &mut open);
        match lines.last_mut() {
            Some(line) if continues => {
                line.tokens.extend(tokens);
                line.end = end;
            }
            _ => {
                let (indent, first) = indentation(raw, start, diagnostics);
                lines.push(Line {
                    indent,
                    first,
                    tokens,
                    end,
                });
            }
        }
    }
    if let Some(&first) = open.first() {
        diagnostics.error(
            Code::LoomUnclosedBracket,
            first,
            "this bracket is never closed (a line that leaves `(`, `[` or `[[` open continues on the next lines)",
        );
    }
    lines
}

/// Updates the open brackets (`[[` counts as two `[`, `]]` closes two).
fn track_brackets(tokens: &[Token], open: &mut Vec<Span>) {
    for token in tokens {
        match token.kind {
            TokenKind::Op(Op::LeftParen | Op::LeftBracket) => open.push(token.span),
            TokenKind::Op(Op::LeftBrackets) => open.extend([token.span, token.span]),
            TokenKind::Op(Op::RightParen | Op::RightBracket) => {
                open.pop();
            }
            TokenKind::Op(Op::RightBrackets) => {
                open.pop();
                open.pop();
            }
            _ => {}
        }
    }
}

/// A line's indentation in columns and the offset where it ends. A tab is reported and
/// counted as one column.
fn indentation(raw: &str, start: usize, diagnostics: &mut Diagnostics) -> (usize, usize) {
    let width = raw.len() - raw.trim_start_matches([' ', '\t']).len();
    if let Some(tab) = raw[..width].find('\t') {
        diagnostics.error(
            Code::LoomTab,
            Span::new(start + tab, start + tab + 1),
            "a tab in indentation: LOOM indents with spaces only",
        );
    }
    (width, start + width)
}
