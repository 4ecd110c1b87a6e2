//! Types (section 3.3): basic types, names (`type` definitions, `Range`), records
//! `{a: T, b: U}` and 1-D and 2-D arrays `T[N]`, `T[N, M]`, `T[]`.

use super::{Parsed, Parser};
use crate::loom::ast::{BasicType, TypeExpr, TypeExprKind};
use crate::loom::token::{Keyword, Op, TokenKind};

impl Parser<'_, '_> {
    pub(super) fn type_expr(&mut self) -> Parsed<TypeExpr> {
        self.enter()?;
        let result = self.type_inner();
        self.leave();
        result
    }

    fn type_inner(&mut self) -> Parsed<TypeExpr> {
        let start = self.span();
        let kind = match self.peek() {
            Some(TokenKind::Keyword(k)) => match basic(*k) {
                Some(b) => {
                    self.bump();
                    TypeExprKind::Basic(b)
                }
                None => return self.error_expected("a type"),
            },
            Some(TokenKind::Ident(name)) => {
                let name = name.clone();
                self.bump();
                TypeExprKind::Named(name)
            }
            Some(TokenKind::BlockOpen) => self.record()?,
            _ => return self.error_expected("a type"),
        };
        let mut ty = TypeExpr {
            kind,
            span: start.to(self.last_span()),
        };
        if self.eat_op(Op::LeftBracket) {
            let mut dims = Vec::new();
            if !self.at_op(Op::RightBracket) {
                dims.push(Some(self.expression()?));
                if self.eat_op(Op::Comma) {
                    dims.push(Some(self.expression()?));
                }
            } else {
                dims.push(None);
            }
            self.expect_op(
                Op::RightBracket,
                "to close the array's size (arrays have 1 or 2 dimensions)",
            )?;
            ty = TypeExpr {
                kind: TypeExprKind::Array {
                    elem: Box::new(ty),
                    dims,
                },
                span: start.to(self.last_span()),
            };
        }
        if self.at_op(Op::LeftBracket) {
            let span = self.span();
            return self.error(
                span,
                "arrays of arrays are not LOOM types: write a 2-D array `T[N, M]`",
            );
        }
        Ok(ty)
    }

    /// `{a: T, b: U}` (the braces are block tokens).
    fn record(&mut self) -> Parsed<TypeExprKind> {
        self.bump();
        let mut fields = Vec::new();
        loop {
            let name = self.expect_ident("a field name")?;
            self.expect_op(Op::Colon, "and the field's type")?;
            let ty = self.type_expr()?;
            fields.push((name, ty));
            if self.eat(&TokenKind::BlockClose) {
                return Ok(TypeExprKind::Record(fields));
            }
            self.expect_op(Op::Comma, "or `}` after a field")?;
        }
    }
}

fn basic(keyword: Keyword) -> Option<BasicType> {
    Some(match keyword {
        Keyword::Bool => BasicType::Bool,
        Keyword::Byte => BasicType::Byte,
        Keyword::Int32 => BasicType::Int32,
        Keyword::Int64 => BasicType::Int64,
        Keyword::UInt32 => BasicType::UInt32,
        Keyword::UInt64 => BasicType::UInt64,
        Keyword::Float32 => BasicType::Float32,
        Keyword::Float64 => BasicType::Float64,
        _ => return None,
    })
}
