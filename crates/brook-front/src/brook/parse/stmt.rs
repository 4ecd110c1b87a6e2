//! Statements and local declarations inside kernel bodies.

use super::{Failed, PResult, Parser};
use crate::brook::ast::{
    ArrayDims, Block, Decl, Declarator, ExprKind, Init, Qualifiers, Stmt, StmtKind, TypeSpec,
    UnsupportedStmt,
};
use crate::brook::token::{Punct, TokenKind};
use crate::diagnostic::{Code, Diagnostic};
use crate::source::Span;

impl Parser<'_, '_> {
    /// `{ statements }`, recovering from errors statement by statement.
    pub(super) fn block(&mut self) -> PResult<Block> {
        let open = self.expect(Punct::LBrace)?;
        self.enter()?;
        let mut stmts = Vec::new();
        while !self.at(Punct::RBrace) && !self.at_eof() {
            let before = self.pos;
            match self.statement() {
                Ok(stmt) => stmts.push(stmt),
                Err(_) => {
                    self.recover_to_statement_end();
                    if self.pos == before {
                        self.bump();
                    }
                }
            }
        }
        self.leave();
        self.expect(Punct::RBrace)?;
        Ok(Block {
            stmts,
            span: self.span_from(open),
        })
    }

    fn statement(&mut self) -> PResult<Stmt> {
        self.enter()?;
        let result = self.statement_inner();
        self.leave();
        result
    }

    fn statement_inner(&mut self) -> PResult<Stmt> {
        let start = self.peek().span;
        let kind = match self.peek_keyword() {
            Some("if") => self.if_stmt()?,
            Some("while") => {
                self.bump();
                let cond = self.paren_expr()?;
                let body = Box::new(self.statement()?);
                StmtKind::While { cond, body }
            }
            Some("do") => self.do_while()?,
            Some("for") => self.for_stmt()?,
            Some("break") => self.keyword_stmt(StmtKind::Break)?,
            Some("continue") => self.keyword_stmt(StmtKind::Continue)?,
            Some("return") => {
                self.bump();
                let value = if self.at(Punct::Semi) {
                    None
                } else {
                    Some(self.expr()?)
                };
                self.expect(Punct::Semi)?;
                StmtKind::Return(value)
            }
            Some("switch") => self.unsupported(UnsupportedStmt::Switch)?,
            Some("goto") => self.unsupported(UnsupportedStmt::Goto)?,
            Some("case" | "default") => self.label()?,
            _ if self.peek().kind == TokenKind::Ident && self.nth(1).is_punct(Punct::Colon) => {
                self.label()?
            }
            _ => match self.peek().kind {
                TokenKind::Punct(Punct::LBrace) => StmtKind::Block(self.block()?),
                TokenKind::Punct(Punct::Semi) => {
                    self.bump();
                    StmtKind::Empty
                }
                _ if self.at_declaration() => StmtKind::Decl(self.declaration()?),
                _ if self.at_macro_type() => return Err(self.macro_type()),
                _ => {
                    let expr = self.expr()?;
                    self.expect(Punct::Semi)?;
                    StmtKind::Expr(expr)
                }
            },
        };
        Ok(Stmt {
            kind,
            span: self.span_from(start),
        })
    }

    fn peek_keyword(&self) -> Option<&str> {
        (self.peek().kind == TokenKind::Ident).then(|| self.peek_text())
    }

    /// `break;` or `continue;`
    fn keyword_stmt(&mut self, kind: StmtKind) -> PResult<StmtKind> {
        self.bump();
        self.expect(Punct::Semi)?;
        Ok(kind)
    }

    fn paren_expr(&mut self) -> PResult<crate::brook::ast::Expr> {
        self.expect(Punct::LParen)?;
        let expr = self.expr()?;
        self.expect(Punct::RParen)?;
        Ok(expr)
    }

    fn if_stmt(&mut self) -> PResult<StmtKind> {
        self.bump();
        let cond = self.paren_expr()?;
        let then = Box::new(self.statement()?);
        let otherwise = if self.eat_ident("else").is_some() {
            Some(Box::new(self.statement()?))
        } else {
            None
        };
        Ok(StmtKind::If {
            cond,
            then,
            otherwise,
        })
    }

    fn do_while(&mut self) -> PResult<StmtKind> {
        self.bump();
        let body = Box::new(self.statement()?);
        if self.eat_ident("while").is_none() {
            return Err(self.expected("`while` after the body of `do`"));
        }
        let cond = self.paren_expr()?;
        self.expect(Punct::Semi)?;
        Ok(StmtKind::DoWhile { body, cond })
    }

    fn for_stmt(&mut self) -> PResult<StmtKind> {
        self.bump();
        self.expect(Punct::LParen)?;
        let init = if self.eat(Punct::Semi).is_some() {
            None
        } else if self.at_declaration() {
            let start = self.peek().span;
            let decl = self.declaration()?;
            Some(Box::new(Stmt {
                kind: StmtKind::Decl(decl),
                span: self.span_from(start),
            }))
        } else {
            let expr = self.expr()?;
            self.expect(Punct::Semi)?;
            Some(Box::new(Stmt {
                span: expr.span,
                kind: StmtKind::Expr(expr),
            }))
        };
        let cond = if self.at(Punct::Semi) {
            None
        } else {
            Some(self.expr()?)
        };
        self.expect(Punct::Semi)?;
        let step = if self.at(Punct::RParen) {
            None
        } else {
            Some(self.expr()?)
        };
        self.expect(Punct::RParen)?;
        let body = Box::new(self.statement()?);
        Ok(StmtKind::For {
            init,
            cond,
            step,
            body,
        })
    }

    /// `switch (...) { ... }` or `goto label;`: parsed over, to be reported by the checker.
    fn unsupported(&mut self, what: UnsupportedStmt) -> PResult<StmtKind> {
        self.bump();
        if what == UnsupportedStmt::Switch {
            self.paren_expr()?;
            self.block()?;
        } else {
            self.recover_to_statement_end();
        }
        Ok(StmtKind::Unsupported(what))
    }

    fn label(&mut self) -> PResult<StmtKind> {
        while !self.at(Punct::Colon) && !self.at_eof() {
            self.bump();
        }
        self.expect(Punct::Colon)?;
        Ok(StmtKind::Unsupported(UnsupportedStmt::Label))
    }

    /// A declaration starts here: qualifiers or a type, but not a constructor call such as
    /// `float4(a, b, c, d)` used as an expression.
    fn at_declaration(&self) -> bool {
        if !(self.at_type_start() || self.at_qualified_type()) {
            return false;
        }
        !(self.at_type_start() && self.nth(1).is_punct(Punct::LParen))
    }

    /// `T t` where `T` is a macro left for the C++ compiler (without -pp) that is not a
    /// built-in type brcc can read (`#define T pair`, or `REAL` defined in two `#if` branches):
    /// a declaration brcc cannot read.
    fn at_macro_type(&self) -> bool {
        let name = self.peek_text();
        self.peek().kind == TokenKind::Ident
            && self.nth(1).kind == TokenKind::Ident
            && (self.macro_bodies.contains_key(name) || self.ambiguous_macros.contains(name))
    }

    fn macro_type(&mut self) -> Failed {
        let token = self.peek();
        let name = self.peek_text().to_string();
        let why = if self.ambiguous_macros.contains(&name) {
            "is defined by more than one `#define` (in `#if` branches, or around an `#undef`): brcc cannot tell which type the C++ compiler sees"
        } else {
            "is not a built-in type: without -pp brcc reads a macro in kernel code as an expression or a built-in type (`#define REAL float`)"
        };
        self.report(
            Diagnostic::error(
                Code::Syntax,
                token.span,
                format!("the macro `{name}` {why}"),
            )
            .with_label("a macro used as a type")
            .with_help("compile with -pp to have brcc expand macros as text, or use a typedef"),
        );
        Failed
    }

    /// `const float a = 1.0f, b[4];` and the like.
    pub(super) fn declaration(&mut self) -> PResult<Decl> {
        let start = self.peek().span;
        let qualifiers: Qualifiers = self.qualifiers();
        let ty = self.type_spec()?;
        let mut declarators = Vec::new();
        loop {
            declarators.push(self.declarator(&ty)?);
            if self.eat(Punct::Comma).is_none() {
                break;
            }
        }
        self.expect(Punct::Semi)?;
        Ok(Decl {
            qualifiers,
            ty,
            declarators,
            span: self.span_from(start),
        })
    }

    fn declarator(&mut self, ty: &TypeSpec) -> PResult<Declarator> {
        let start = self.peek().span;
        let pointer = self.eat(Punct::Star);
        while self.eat(Punct::Star).is_some() {}
        let name = self.ident("a variable name")?;
        let stream_dims = self.stream_dims()?;
        let array_dims = self.array_dims()?;
        let init = if self.eat(Punct::Assign).is_some() {
            Some(self.initializer()?)
        } else if self.at(Punct::LParen) {
            // BrookGPU's constructor declaration: `float4 a(1.0f, 2.0f, 3.0f, 4.0f);`
            let open = self.peek().span;
            let args = self.call_args()?;
            let span = self.span_from(open);
            let construct = ExprKind::Construct(ty.clone(), args);
            Some(Init::Expr(self.new_expr(construct, span)))
        } else {
            None
        };
        Ok(Declarator {
            name,
            pointer,
            array_dims,
            stream_dims,
            init,
            span: self.span_from(start),
        })
    }

    pub(super) fn initializer(&mut self) -> PResult<Init> {
        let Some(open) = self.eat(Punct::LBrace) else {
            return Ok(Init::Expr(self.assign_expr()?));
        };
        self.enter()?;
        let mut items = Vec::new();
        while !self.at(Punct::RBrace) {
            items.push(self.initializer()?);
            if self.eat(Punct::Comma).is_none() {
                break;
            }
        }
        self.leave();
        self.expect(Punct::RBrace)?;
        Ok(Init::List(items, self.span_from(open)))
    }

    /// `<>`, `<10, 20>`, `<, 100>`: `None` entries are unspecified lengths.
    pub(super) fn stream_dims(&mut self) -> PResult<Option<(ArrayDims, Span)>> {
        let Some(open) = self.eat(Punct::Lt) else {
            return Ok(None);
        };
        let mut dims = Vec::new();
        if self.eat(Punct::Gt).is_some() {
            return Ok(Some((dims, self.span_from(open))));
        }
        loop {
            if self.at(Punct::Comma) || self.at(Punct::Gt) {
                dims.push(None);
            } else {
                dims.push(Some(self.dimension_expr()?));
            }
            if self.eat(Punct::Comma).is_none() {
                break;
            }
        }
        self.expect(Punct::Gt)?;
        Ok(Some((dims, self.span_from(open))))
    }

    /// `[]`, `[N][M]`: `None` entries are unspecified sizes.
    pub(super) fn array_dims(&mut self) -> PResult<Option<(ArrayDims, Span)>> {
        if !self.at(Punct::LBracket) {
            return Ok(None);
        }
        let open = self.peek().span;
        let mut dims = Vec::new();
        while self.eat(Punct::LBracket).is_some() {
            if self.eat(Punct::RBracket).is_some() {
                dims.push(None);
                continue;
            }
            dims.push(Some(self.expr()?));
            self.expect(Punct::RBracket)?;
        }
        Ok(Some((dims, self.span_from(open))))
    }
}
