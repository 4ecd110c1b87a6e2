//! Statements (sections 3.3.1, 3.5): declarations, assignments, calls, `if`/`else`, `while`,
//! `for`, `break`, `continue` and `return`.

use super::{Parsed, Parser};
use crate::loom::ast::{AssignOp, Block, Decl, Space, Stmt, StmtKind};
use crate::loom::token::{Keyword, Op, TokenKind};

impl Parser<'_, '_> {
    pub(super) fn statement(&mut self) -> Parsed<Stmt> {
        let start = self.span();
        let kind = match self.peek() {
            Some(TokenKind::Keyword(Keyword::If)) => return self.if_statement(),
            Some(TokenKind::Keyword(Keyword::While)) => {
                self.bump();
                let cond = self.expression()?;
                let body = self.block()?;
                StmtKind::While { cond, body }
            }
            Some(TokenKind::Keyword(Keyword::For)) => return self.for_statement(),
            Some(TokenKind::Keyword(Keyword::Break)) => {
                self.bump();
                self.statement_end()?;
                StmtKind::Break
            }
            Some(TokenKind::Keyword(Keyword::Continue)) => {
                self.bump();
                self.statement_end()?;
                StmtKind::Continue
            }
            Some(TokenKind::Keyword(Keyword::Return)) => {
                self.bump();
                let value = if matches!(
                    self.peek(),
                    Some(TokenKind::StmtEnd | TokenKind::BlockClose) | None
                ) {
                    None
                } else {
                    Some(self.expression()?)
                };
                self.statement_end()?;
                StmtKind::Return(value)
            }
            Some(TokenKind::Keyword(Keyword::Else)) => {
                return self.error(start, "`else` without an `if ... then` before it");
            }
            Some(TokenKind::Keyword(
                keyword @ (Keyword::Local | Keyword::Shared | Keyword::Global | Keyword::Const),
            )) => {
                let space = match keyword {
                    Keyword::Local => Space::Local,
                    Keyword::Shared => Space::Shared,
                    Keyword::Global => Space::Global,
                    _ => Space::Const,
                };
                self.bump();
                let decl = self.declaration_after_space(space)?;
                self.statement_end()?;
                StmtKind::Decl(decl)
            }
            Some(TokenKind::Ident(_)) if self.peek_at(1) == Some(&TokenKind::Op(Op::Colon)) => {
                let decl = self.declaration_after_space(Space::Local)?;
                self.statement_end()?;
                StmtKind::Decl(decl)
            }
            _ => {
                let target = self.expression()?;
                let op = match self.peek() {
                    Some(TokenKind::Op(Op::Assign)) => Some(AssignOp::Set),
                    Some(TokenKind::Op(Op::AddAssign)) => Some(AssignOp::Add),
                    Some(TokenKind::Op(Op::SubAssign)) => Some(AssignOp::Sub),
                    Some(TokenKind::Op(Op::MulAssign)) => Some(AssignOp::Mul),
                    _ => None,
                };
                match op {
                    Some(op) => {
                        self.bump();
                        let value = self.expression()?;
                        self.statement_end()?;
                        StmtKind::Assign { target, op, value }
                    }
                    None => {
                        self.statement_end()?;
                        StmtKind::Expr(target)
                    }
                }
            }
        };
        Ok(Stmt {
            kind,
            span: start.to(self.last_span()),
        })
    }

    /// `name: T` with an optional `<- init`, after the memory space (if any).
    pub(super) fn declaration_after_space(&mut self, space: Space) -> Parsed<Decl> {
        let name = self.expect_ident("the name of the variable")?;
        self.expect_op(Op::Colon, "and the variable's type")?;
        let ty = self.type_expr()?;
        let init = if self.eat_op(Op::Assign) {
            Some(self.expression()?)
        } else {
            None
        };
        Ok(Decl {
            space,
            name,
            ty,
            init,
        })
    }

    /// `if c then block` with an optional `else block` or `else if ...`.
    fn if_statement(&mut self) -> Parsed<Stmt> {
        let start = self.span();
        self.enter()?;
        let result = self.if_rest();
        self.leave();
        let (cond, then, otherwise) = result?;
        Ok(Stmt {
            kind: StmtKind::If {
                cond,
                then,
                otherwise,
            },
            span: start.to(self.last_span()),
        })
    }

    #[allow(clippy::type_complexity)]
    fn if_rest(&mut self) -> Parsed<(crate::loom::ast::Expr, Block, Option<Block>)> {
        self.bump();
        let cond = self.expression()?;
        self.expect_keyword(Keyword::Then, "after the condition of `if`")?;
        let then = self.block()?;
        if !self.eat_keyword(Keyword::Else) {
            return Ok((cond, then, None));
        }
        let otherwise = if self.at_keyword(Keyword::If) {
            // `else if c then`: the layout opened one block, for the `if`'s own `then`.
            let nested = self.if_statement()?;
            Block {
                span: nested.span,
                stmts: vec![nested],
            }
        } else {
            self.block()?
        };
        Ok((cond, then, Some(otherwise)))
    }

    /// `for i: T <- a .. b` (`b` excluded) or `for i <- a ... b` (`b` included).
    fn for_statement(&mut self) -> Parsed<Stmt> {
        let start = self.span();
        self.bump();
        let var = self.expect_ident("the loop variable")?;
        let ty = if self.eat_op(Op::Colon) {
            Some(self.type_expr()?)
        } else {
            None
        };
        self.expect_op(
            Op::Assign,
            "and the loop's range (`for i: Int32 <- 0 .. n`)",
        )?;
        let from = self.expression()?;
        let inclusive = if self.eat_op(Op::Range2) {
            false
        } else if self.eat_op(Op::Range3) {
            true
        } else {
            return self.error_expected("`..` (end excluded) or `...` (end included)");
        };
        let to = self.expression()?;
        let body = self.block()?;
        Ok(Stmt {
            kind: StmtKind::For {
                var,
                ty,
                from,
                to,
                inclusive,
                body,
            },
            span: start.to(self.last_span()),
        })
    }
}
