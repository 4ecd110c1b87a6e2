//! The LOOM parser: tokens (with the layout's blocks and statement ends) to a [`Program`].
//!
//! Recursive descent over the grammar of sections 3.3–3.6 with the precedence table of
//! section 3.2.3 (the decisions are in `docs/LOOM.md`). A syntax error is reported
//! (`LM0201`) and the parser skips to the end of the statement or item, so one run reports
//! every error; nesting deeper than [`MAX_DEPTH`] (or chains longer than [`MAX_CHAIN`]) is
//! an error, never a stack overflow.

mod expr;
mod items;
mod stmt;
mod types;

use super::ast::{Expr, ExprId, ExprKind, Program};
use super::token::{Keyword, Op, Token, TokenKind};
use crate::diagnostic::{Code, Diagnostics};
use crate::source::Span;

/// How deep expressions, types and blocks may nest.
pub const MAX_DEPTH: usize = 200;

/// How many binary operators the chains open at once may hold (`a + b + ... + z` is a tree
/// as deep as it has terms).
pub const MAX_CHAIN: usize = 2_000;

/// Parses a whole program's tokens.
pub fn parse(tokens: &[Token], end: usize, diagnostics: &mut Diagnostics) -> Program {
    let mut parser = Parser {
        tokens,
        pos: 0,
        end: Span::new(end, end),
        next_id: 0,
        depth: 0,
        chain: 0,
        diagnostics,
    };
    let items = parser.program();
    Program {
        items,
        expr_count: parser.next_id,
    }
}

/// A parse failed here; the error is already reported.
struct Failed;

type Parsed<T> = Result<T, Failed>;

struct Parser<'t, 'd> {
    tokens: &'t [Token],
    pos: usize,
    /// Where the text ends (for errors at the end).
    end: Span,
    next_id: u32,
    depth: usize,
    /// Binary operators in the chains being parsed.
    chain: usize,
    diagnostics: &'d mut Diagnostics,
}

impl Parser<'_, '_> {
    fn peek(&self) -> Option<&TokenKind> {
        self.tokens.get(self.pos).map(|t| &t.kind)
    }

    fn peek_at(&self, ahead: usize) -> Option<&TokenKind> {
        self.tokens.get(self.pos + ahead).map(|t| &t.kind)
    }

    /// The span of the next token (the end of the text when there is none).
    fn span(&self) -> Span {
        self.tokens.get(self.pos).map_or(self.end, |t| t.span)
    }

    /// The span of the token just consumed.
    fn last_span(&self) -> Span {
        self.pos
            .checked_sub(1)
            .and_then(|i| self.tokens.get(i))
            .map_or(self.end, |t| t.span)
    }

    fn bump(&mut self) {
        self.pos = (self.pos + 1).min(self.tokens.len());
    }

    fn at_op(&self, op: Op) -> bool {
        self.peek() == Some(&TokenKind::Op(op))
    }

    fn at_keyword(&self, keyword: Keyword) -> bool {
        self.peek() == Some(&TokenKind::Keyword(keyword))
    }

    fn eat_op(&mut self, op: Op) -> bool {
        let found = self.at_op(op);
        if found {
            self.bump();
        }
        found
    }

    fn eat_keyword(&mut self, keyword: Keyword) -> bool {
        let found = self.at_keyword(keyword);
        if found {
            self.bump();
        }
        found
    }

    fn eat(&mut self, kind: &TokenKind) -> bool {
        let found = self.peek() == Some(kind);
        if found {
            self.bump();
        }
        found
    }

    fn expect_op(&mut self, op: Op, context: &str) -> Parsed<Span> {
        if self.eat_op(op) {
            Ok(self.last_span())
        } else {
            self.error_expected(&format!("`{}` {context}", op.text()))
        }
    }

    fn expect_keyword(&mut self, keyword: Keyword, context: &str) -> Parsed<()> {
        if self.eat_keyword(keyword) {
            Ok(())
        } else {
            self.error_expected(&format!("`{}` {context}", keyword.text()))
        }
    }

    fn expect_ident(&mut self, what: &str) -> Parsed<super::ast::Ident> {
        match self.peek() {
            Some(TokenKind::Ident(name)) => {
                let ident = super::ast::Ident {
                    name: name.clone(),
                    span: self.span(),
                };
                self.bump();
                Ok(ident)
            }
            _ => self.error_expected(what),
        }
    }

    /// Reports "expected X, found Y" at the next token.
    fn error_expected<T>(&mut self, expected: &str) -> Parsed<T> {
        let found = describe(self.peek());
        let span = self.span();
        self.diagnostics.error(
            Code::LoomSyntax,
            span,
            format!("expected {expected}, found {found}"),
        );
        Err(Failed)
    }

    fn error<T>(&mut self, span: Span, message: impl Into<String>) -> Parsed<T> {
        self.diagnostics.error(Code::LoomSyntax, span, message);
        Err(Failed)
    }

    /// Enters one level of nesting; an error past [`MAX_DEPTH`].
    fn enter(&mut self) -> Parsed<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let span = self.span();
            self.depth -= 1;
            return self.error(span, format!("nesting deeper than {MAX_DEPTH} levels"));
        }
        Ok(())
    }

    /// Counts one more operator of a chain; an error past [`MAX_CHAIN`].
    fn enter_chain(&mut self) -> Parsed<()> {
        if self.chain >= MAX_CHAIN {
            let span = self.span();
            return self.error(
                span,
                format!("more than {MAX_CHAIN} operators in a chain: split the expression"),
            );
        }
        self.chain += 1;
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn expr(&mut self, kind: ExprKind, span: Span) -> Expr {
        let id = ExprId(self.next_id);
        self.next_id += 1;
        Expr { id, kind, span }
    }

    /// Skips to the end of the current statement: past its statement end, or up to the end
    /// of the enclosing block, stepping over nested blocks.
    fn skip_statement(&mut self) {
        let mut depth = 0usize;
        while let Some(kind) = self.peek() {
            match kind {
                TokenKind::BlockOpen => depth += 1,
                TokenKind::BlockClose if depth == 0 => return,
                TokenKind::BlockClose => {
                    depth -= 1;
                    if depth == 0 && !self.continues_after_block() {
                        self.bump();
                        return;
                    }
                }
                TokenKind::StmtEnd if depth == 0 => {
                    self.bump();
                    return;
                }
                _ => {}
            }
            self.bump();
        }
    }

    /// Whether the token after a closing brace continues the statement (`else`).
    fn continues_after_block(&self) -> bool {
        self.peek_at(1) == Some(&TokenKind::Keyword(Keyword::Else))
    }
}

/// A token as an error message names it.
fn describe(kind: Option<&TokenKind>) -> String {
    match kind {
        None => "the end of the file".into(),
        Some(TokenKind::BlockOpen) => "the start of a block".into(),
        Some(TokenKind::BlockClose) => "the end of a block".into(),
        Some(TokenKind::StmtEnd) => "the end of the statement".into(),
        Some(TokenKind::Ident(name)) => format!("`{name}`"),
        Some(kind) => format!("`{}`", kind.text()),
    }
}
