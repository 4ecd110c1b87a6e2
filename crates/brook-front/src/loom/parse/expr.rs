//! Expressions (section 3.4) by the precedence table of section 3.2.3, loosest first:
//! parallel operators (`f // a`, `/.`, `/:`, `:/`: a function name on the left, grouping to
//! the right), `&& ||`, comparisons, `+ - | ^`, `* / % << >> &` (binary operators group to
//! the left), the prefix operators `! - ^`, the type tag `e: T`, and indexing, fields and
//! calls.

use super::{Parsed, Parser};
use crate::loom::ast::{BinaryOp, Expr, ExprKind, ParallelOp, UnaryOp};
use crate::loom::token::{Keyword, Op, TokenKind};

/// The tightest binary level (`* / % << >> &`).
const TIGHTEST: u8 = 4;

impl Parser<'_, '_> {
    pub(super) fn expression(&mut self) -> Parsed<Expr> {
        self.enter()?;
        let result = self.parallel();
        self.leave();
        result
    }

    fn parallel(&mut self) -> Parsed<Expr> {
        let op = match (self.peek(), self.peek_at(1)) {
            (Some(TokenKind::Ident(_)), Some(TokenKind::Op(op))) => ParallelOp::from_op(*op),
            _ => None,
        };
        let Some(op) = op else {
            return self.binary(1);
        };
        let func = self.expect_ident("a function name")?;
        self.bump();
        let array = self.expression()?;
        let span = func.span.to(array.span);
        Ok(self.expr(
            ExprKind::Parallel {
                op,
                func,
                array: Box::new(array),
            },
            span,
        ))
    }

    fn binary(&mut self, level: u8) -> Parsed<Expr> {
        if level > TIGHTEST {
            return self.unary();
        }
        let mut left = self.binary(level + 1)?;
        // A chain `a + b + ...` nests to the left: its operators are counted, so later
        // passes over the tree do not recurse without bound either.
        let mut chained = 0;
        let result = loop {
            let found = match self.peek() {
                Some(TokenKind::Op(op)) => BinaryOp::from_op(*op),
                _ => None,
            };
            let Some((op, _)) = found.filter(|&(_, l)| l == level) else {
                break Ok(left);
            };
            if let Err(failed) = self.enter_chain() {
                break Err(failed);
            }
            chained += 1;
            self.bump();
            let right = match self.binary(level + 1) {
                Ok(right) => right,
                Err(failed) => break Err(failed),
            };
            let span = left.span.to(right.span);
            left = self.expr(
                ExprKind::Binary {
                    op,
                    left: Box::new(left),
                    right: Box::new(right),
                },
                span,
            );
        };
        self.chain -= chained;
        result
    }

    fn unary(&mut self) -> Parsed<Expr> {
        let op = match self.peek() {
            Some(TokenKind::Op(Op::Not)) => UnaryOp::Not,
            Some(TokenKind::Op(Op::Minus)) => UnaryOp::Neg,
            Some(TokenKind::Op(Op::Caret)) => UnaryOp::Complement,
            _ => return self.tagged(),
        };
        let start = self.span();
        self.bump();
        self.enter()?;
        let arg = self.unary();
        self.leave();
        let arg = arg?;
        let span = start.to(arg.span);
        Ok(self.expr(
            ExprKind::Unary {
                op,
                arg: Box::new(arg),
            },
            span,
        ))
    }

    /// `e: T`.
    fn tagged(&mut self) -> Parsed<Expr> {
        let mut value = self.postfix()?;
        let start = self.chain;
        let result = self.tags(&mut value);
        self.chain = start;
        result.map(|()| value)
    }

    fn tags(&mut self, value: &mut Expr) -> Parsed<()> {
        while self.eat_op(Op::Colon) {
            self.enter_chain()?;
            let ty = self.type_expr()?;
            let span = value.span.to(ty.span);
            let inner = std::mem::replace(value, self.expr(ExprKind::Bool(false), span));
            value.kind = ExprKind::Tagged {
                value: Box::new(inner),
                ty,
            };
        }
        Ok(())
    }

    /// Indexing and fields, each counted as an operator of a chain (`a[0][0]...` nests).
    fn postfix(&mut self) -> Parsed<Expr> {
        let base = self.primary()?;
        let start = self.chain;
        let result = self.postfix_ops(base);
        self.chain = start;
        result
    }

    fn postfix_ops(&mut self, mut base: Expr) -> Parsed<Expr> {
        loop {
            if self.at_op(Op::LeftBracket) || self.at_op(Op::LeftBrackets) || self.at_op(Op::Dot) {
                self.enter_chain()?;
            }
            let safe = if self.eat_op(Op::LeftBracket) {
                false
            } else if self.eat_op(Op::LeftBrackets) {
                true
            } else if self.eat_op(Op::Dot) {
                let field = self.expect_ident("a field name after `.`")?;
                let span = base.span.to(field.span);
                base = self.expr(
                    ExprKind::Field {
                        base: Box::new(base),
                        field,
                    },
                    span,
                );
                continue;
            } else {
                return Ok(base);
            };
            let mut indices = vec![self.expression()?];
            if self.eat_op(Op::Comma) {
                indices.push(self.expression()?);
            }
            let (close, what) = if safe {
                (Op::RightBrackets, "to close the safe index `[[`")
            } else {
                (
                    Op::RightBracket,
                    "to close the index `[` (an array has at most 2 indices)",
                )
            };
            let end = self.expect_op(close, what)?;
            let span = base.span.to(end);
            base = self.expr(
                ExprKind::Index {
                    base: Box::new(base),
                    indices,
                    safe,
                },
                span,
            );
        }
    }

    fn primary(&mut self) -> Parsed<Expr> {
        let span = self.span();
        let kind = match self.peek() {
            Some(TokenKind::Int(v)) => ExprKind::Int(*v),
            Some(TokenKind::Float(v)) => ExprKind::Float(*v),
            Some(TokenKind::Keyword(Keyword::True)) => ExprKind::Bool(true),
            Some(TokenKind::Keyword(Keyword::False)) => ExprKind::Bool(false),
            Some(TokenKind::Thread(t)) => ExprKind::Thread(*t),
            Some(TokenKind::Ident(_)) if self.peek_at(1) == Some(&TokenKind::Op(Op::LeftParen)) => {
                return self.call();
            }
            Some(TokenKind::Ident(name)) => ExprKind::Name(name.clone()),
            Some(TokenKind::Op(Op::LeftParen)) => {
                self.bump();
                let inner = self.expression()?;
                let end = self.expect_op(Op::RightParen, "to close `(`")?;
                return Ok(Expr {
                    span: span.to(end),
                    ..inner
                });
            }
            _ => return self.error_expected("an expression"),
        };
        self.bump();
        Ok(self.expr(kind, span))
    }

    /// `f(a, b)`.
    fn call(&mut self) -> Parsed<Expr> {
        let func = self.expect_ident("a function name")?;
        self.bump();
        let mut args = Vec::new();
        if !self.eat_op(Op::RightParen) {
            loop {
                args.push(self.expression()?);
                if self.eat_op(Op::RightParen) {
                    break;
                }
                self.expect_op(Op::Comma, "or `)` after an argument")?;
            }
        }
        let span = func.span.to(self.last_span());
        Ok(self.expr(ExprKind::Call { func, args }, span))
    }
}
