//! Items: `type` definitions, top-level `const` declarations, device functions and the
//! kernel (sections 3.3.2, 3.6).

use super::{Failed, Parsed, Parser};
use crate::loom::ast::{Block, Func, FuncKind, Item, Param, Space};
use crate::loom::token::{Keyword, Op, TokenKind};

impl Parser<'_, '_> {
    pub(super) fn program(&mut self) -> Vec<Item> {
        let mut items = Vec::new();
        while let Some(kind) = self.peek() {
            if matches!(kind, TokenKind::StmtEnd) {
                self.bump();
                continue;
            }
            match self.item() {
                Ok(item) => items.push(item),
                Err(Failed) => self.skip_item(),
            }
        }
        items
    }

    fn item(&mut self) -> Parsed<Item> {
        match self.peek() {
            Some(TokenKind::Keyword(Keyword::Type)) => {
                self.bump();
                let name = self.expect_ident("a name for the type")?;
                let ty = self.type_expr()?;
                self.statement_end()?;
                Ok(Item::Type { name, ty })
            }
            Some(TokenKind::Keyword(Keyword::Const)) => {
                self.bump();
                let decl = self.declaration_after_space(Space::Const)?;
                self.statement_end()?;
                Ok(Item::Const(decl))
            }
            Some(TokenKind::Keyword(Keyword::Func)) => self.func(FuncKind::Device).map(Item::Func),
            Some(TokenKind::Keyword(Keyword::Kernel)) => {
                self.func(FuncKind::Kernel).map(Item::Func)
            }
            _ => self.error_expected(
                "`kernel`, `func`, `type` or `const` (a program holds definitions only)",
            ),
        }
    }

    /// `kernel name(params) block` or `func name(params): T block`.
    fn func(&mut self, kind: FuncKind) -> Parsed<Func> {
        let start = self.span();
        self.bump();
        let name = self.expect_ident("a function name")?;
        self.expect_op(Op::LeftParen, "to open the parameter list")?;
        let mut params = Vec::new();
        if !self.eat_op(Op::RightParen) {
            loop {
                let name = self.expect_ident("a parameter name")?;
                self.expect_op(Op::Colon, "and the parameter's type")?;
                let ty = self.type_expr()?;
                params.push(Param { name, ty });
                if self.eat_op(Op::RightParen) {
                    break;
                }
                self.expect_op(Op::Comma, "or `)` after a parameter")?;
            }
        }
        let ret = match kind {
            FuncKind::Device => {
                self.expect_op(Op::Colon, "and the function's return type")?;
                Some(self.type_expr()?)
            }
            FuncKind::Kernel if self.at_op(Op::Colon) => {
                let span = self.span();
                return self.error(
                    span,
                    "a kernel has no return type: it acts only through the arrays it is given",
                );
            }
            FuncKind::Kernel => None,
        };
        let span = start.to(self.last_span());
        let body = self.block()?;
        Ok(Func {
            kind,
            name,
            params,
            ret,
            body,
            span,
        })
    }

    /// `{ statements }`: the block the layout (or the text) opens.
    pub(super) fn block(&mut self) -> Parsed<Block> {
        let start = self.span();
        if !self.eat(&TokenKind::BlockOpen) {
            return self.error_expected("an indented block");
        }
        self.enter()?;
        let mut stmts = Vec::new();
        loop {
            match self.peek() {
                None => break,
                Some(TokenKind::BlockClose) => {
                    self.bump();
                    break;
                }
                Some(TokenKind::StmtEnd) => self.bump(),
                Some(_) => match self.statement() {
                    Ok(stmt) => stmts.push(stmt),
                    Err(Failed) => self.skip_statement(),
                },
            }
        }
        self.leave();
        Ok(Block {
            stmts,
            span: start.to(self.last_span()),
        })
    }

    /// Expects the end of a statement (a line's end or `;`; a line that ends with a record
    /// type's `}` gets none from the layout).
    pub(super) fn statement_end(&mut self) -> Parsed<()> {
        let after_braces = self.pos > 0
            && self.tokens.get(self.pos - 1).map(|t| &t.kind) == Some(&TokenKind::BlockClose);
        if self.eat(&TokenKind::StmtEnd)
            || after_braces
            || matches!(self.peek(), Some(TokenKind::BlockClose) | None)
        {
            Ok(())
        } else {
            self.error_expected("the end of the statement")
        }
    }

    /// Skips to the next item: the next `kernel`, `func`, `type` or `const` outside blocks.
    fn skip_item(&mut self) {
        let mut depth = 0usize;
        let start = self.pos;
        while let Some(kind) = self.peek() {
            match kind {
                TokenKind::BlockOpen => depth += 1,
                TokenKind::BlockClose => depth = depth.saturating_sub(1),
                TokenKind::Keyword(
                    Keyword::Kernel | Keyword::Func | Keyword::Type | Keyword::Const,
                ) if depth == 0 && self.pos > start => return,
                _ => {}
            }
            self.bump();
        }
    }
}
