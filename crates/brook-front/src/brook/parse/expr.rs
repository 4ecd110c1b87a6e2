//! Expressions, with C precedence and associativity.

use super::types::builtin_type;
use super::{Failed, PResult, Parser};
use crate::brook::ast::{BinaryOp, Expr, ExprKind, UnaryOp};
use crate::brook::preprocess::parse_int;
use crate::brook::token::{Punct, TokenKind};
use crate::diagnostic::{Code, Diagnostic};

/// Binary operators with their precedence (higher binds tighter).
fn binary_op(p: Punct) -> Option<(BinaryOp, u8)> {
    Some(match p {
        Punct::OrOr => (BinaryOp::LogicOr, 1),
        Punct::AndAnd => (BinaryOp::LogicAnd, 2),
        Punct::Pipe => (BinaryOp::BitOr, 3),
        Punct::Caret => (BinaryOp::BitXor, 4),
        Punct::Amp => (BinaryOp::BitAnd, 5),
        Punct::EqEq => (BinaryOp::Eq, 6),
        Punct::Ne => (BinaryOp::Ne, 6),
        Punct::Lt => (BinaryOp::Lt, 7),
        Punct::Gt => (BinaryOp::Gt, 7),
        Punct::Le => (BinaryOp::Le, 7),
        Punct::Ge => (BinaryOp::Ge, 7),
        Punct::Shl => (BinaryOp::Shl, 8),
        Punct::Shr => (BinaryOp::Shr, 8),
        Punct::Plus => (BinaryOp::Add, 9),
        Punct::Minus => (BinaryOp::Sub, 9),
        Punct::Star => (BinaryOp::Mul, 10),
        Punct::Slash => (BinaryOp::Div, 10),
        Punct::Percent => (BinaryOp::Rem, 10),
        _ => return None,
    })
}

/// The precedence of shifts: a stream dimension inside `< >` binds at least this tightly, so
/// that the closing `>` is not read as "greater than".
const SHIFT_PRECEDENCE: u8 = 8;

/// How deep macro bodies may name further macros (`#define A B`, `#define B 1.0f`).
const MAX_MACRO_NESTING: usize = 32;

/// How many tokens of macro bodies a file's expansions may parse in all (as `-pp` bounds its
/// expansion), so that macros doubling at each level cannot make parsing exponential.
pub(super) const MAX_MACRO_TOKENS: usize = 1_000_000;

fn assign_op(p: Punct) -> Option<Option<BinaryOp>> {
    Some(match p {
        Punct::Assign => None,
        Punct::AddAssign => Some(BinaryOp::Add),
        Punct::SubAssign => Some(BinaryOp::Sub),
        Punct::MulAssign => Some(BinaryOp::Mul),
        Punct::DivAssign => Some(BinaryOp::Div),
        Punct::RemAssign => Some(BinaryOp::Rem),
        Punct::ShlAssign => Some(BinaryOp::Shl),
        Punct::ShrAssign => Some(BinaryOp::Shr),
        Punct::AndAssign => Some(BinaryOp::BitAnd),
        Punct::OrAssign => Some(BinaryOp::BitOr),
        Punct::XorAssign => Some(BinaryOp::BitXor),
        _ => return None,
    })
}

fn punct_of(kind: TokenKind) -> Option<Punct> {
    match kind {
        TokenKind::Punct(p) => Some(p),
        _ => None,
    }
}

impl Parser<'_, '_> {
    /// A full expression, including the comma operator.
    pub(super) fn expr(&mut self) -> PResult<Expr> {
        self.in_chain(|this| {
            let mut left = this.assign_expr()?;
            while this.eat(Punct::Comma).is_some() {
                this.extend_chain()?;
                let right = this.assign_expr()?;
                let span = left.span.to(right.span);
                left = this.new_expr(ExprKind::Comma(Box::new(left), Box::new(right)), span);
            }
            Ok(left)
        })
    }

    /// An assignment expression: what a function argument or initializer is.
    pub(super) fn assign_expr(&mut self) -> PResult<Expr> {
        self.enter()?;
        let result = self.assign_inner();
        self.leave();
        result
    }

    fn assign_inner(&mut self) -> PResult<Expr> {
        let left = self.ternary()?;
        let Some(op) = punct_of(self.peek().kind).and_then(assign_op) else {
            return Ok(left);
        };
        self.bump();
        let right = self.assign_expr()?;
        let span = left.span.to(right.span);
        Ok(self.new_expr(ExprKind::Assign(op, Box::new(left), Box::new(right)), span))
    }

    fn ternary(&mut self) -> PResult<Expr> {
        let cond = self.binary(1)?;
        if self.eat(Punct::Question).is_none() {
            return Ok(cond);
        }
        let then = self.expr()?;
        self.expect(Punct::Colon)?;
        self.enter()?;
        let otherwise = self.ternary();
        self.leave();
        let otherwise = otherwise?;
        let span = cond.span.to(otherwise.span);
        let kind = ExprKind::Ternary(Box::new(cond), Box::new(then), Box::new(otherwise));
        Ok(self.new_expr(kind, span))
    }

    /// A stream dimension: an expression without relational operators.
    pub(super) fn dimension_expr(&mut self) -> PResult<Expr> {
        self.binary(SHIFT_PRECEDENCE)
    }

    fn binary(&mut self, min_precedence: u8) -> PResult<Expr> {
        self.in_chain(|this| {
            let mut left = this.unary()?;
            while let Some((op, precedence)) = punct_of(this.peek().kind).and_then(binary_op) {
                if precedence < min_precedence {
                    break;
                }
                this.extend_chain()?;
                this.bump();
                let right = this.binary(precedence + 1)?;
                let span = left.span.to(right.span);
                left = this.new_expr(ExprKind::Binary(op, Box::new(left), Box::new(right)), span);
            }
            Ok(left)
        })
    }

    fn unary(&mut self) -> PResult<Expr> {
        self.enter()?;
        let result = self.unary_inner();
        self.leave();
        result
    }

    fn unary_inner(&mut self) -> PResult<Expr> {
        let token = self.peek();
        let op = match token.kind {
            TokenKind::Punct(Punct::Minus) => Some(UnaryOp::Neg),
            TokenKind::Punct(Punct::Plus) => Some(UnaryOp::Plus),
            TokenKind::Punct(Punct::Bang) => Some(UnaryOp::Not),
            TokenKind::Punct(Punct::Tilde) => Some(UnaryOp::BitNot),
            TokenKind::Punct(Punct::Inc) => Some(UnaryOp::PreInc),
            TokenKind::Punct(Punct::Dec) => Some(UnaryOp::PreDec),
            TokenKind::Punct(Punct::Amp) => Some(UnaryOp::AddrOf),
            TokenKind::Punct(Punct::Star) => Some(UnaryOp::Deref),
            _ => None,
        };
        if let Some(op) = op {
            self.bump();
            let operand = self.unary()?;
            let span = token.span.to(operand.span);
            return Ok(self.new_expr(ExprKind::Unary(op, Box::new(operand)), span));
        }
        if self.at_ident("sizeof") {
            return self.sizeof();
        }
        if self.at(Punct::LParen) && self.token_starts_type(1) {
            if let Some(ty) = self.speculate(|p| {
                p.bump();
                let ty = p.type_spec()?;
                p.expect(Punct::RParen)?;
                Ok(ty)
            }) {
                let operand = self.unary()?;
                let span = token.span.to(operand.span);
                return Ok(self.new_expr(ExprKind::Cast(ty, Box::new(operand)), span));
            }
        }
        self.postfix()
    }

    /// `sizeof(type)` or `sizeof expr`: parsed so that the checker can reject it in kernels.
    fn sizeof(&mut self) -> PResult<Expr> {
        let start = self.bump().span;
        if self.at(Punct::LParen) && self.token_starts_type(1) {
            self.bump();
            self.type_spec()?;
            while self.eat(Punct::Star).is_some() {}
            self.expect(Punct::RParen)?;
        } else {
            self.unary()?;
        }
        let span = self.span_from(start);
        Ok(self.new_expr(ExprKind::Sizeof, span))
    }

    fn postfix(&mut self) -> PResult<Expr> {
        let mut expr = self.primary()?;
        loop {
            let token = self.peek();
            expr = match token.kind {
                TokenKind::Punct(Punct::LBracket) => {
                    self.bump();
                    let index = self.expr()?;
                    self.expect(Punct::RBracket)?;
                    let span = self.span_from(expr.span);
                    self.new_expr(ExprKind::Index(Box::new(expr), Box::new(index)), span)
                }
                TokenKind::Punct(Punct::LParen) => {
                    let args = self.call_args()?;
                    let span = self.span_from(expr.span);
                    self.new_expr(ExprKind::Call(Box::new(expr), args), span)
                }
                TokenKind::Punct(Punct::Dot) => {
                    self.bump();
                    let field = self.ident("a field or swizzle name")?;
                    let span = expr.span.to(field.span);
                    self.new_expr(ExprKind::Member(Box::new(expr), field), span)
                }
                TokenKind::Punct(Punct::Arrow) => {
                    self.bump();
                    let field = self.ident("a field name")?;
                    let span = expr.span.to(field.span);
                    self.new_expr(ExprKind::Arrow(Box::new(expr), field), span)
                }
                TokenKind::Punct(p @ (Punct::Inc | Punct::Dec)) => {
                    self.bump();
                    let op = if p == Punct::Inc {
                        UnaryOp::PostInc
                    } else {
                        UnaryOp::PostDec
                    };
                    let span = expr.span.to(token.span);
                    self.new_expr(ExprKind::Unary(op, Box::new(expr)), span)
                }
                _ => return Ok(expr),
            };
        }
    }

    /// `( a, b, c )`
    pub(super) fn call_args(&mut self) -> PResult<Vec<Expr>> {
        self.expect(Punct::LParen)?;
        self.list_until_rparen(Self::assign_expr)
    }

    fn primary(&mut self) -> PResult<Expr> {
        let token = self.peek();
        match token.kind {
            TokenKind::Ident => self.primary_ident(),
            TokenKind::IntLit => {
                self.bump();
                let kind = self.int_literal(token.span);
                Ok(self.new_expr(kind, token.span))
            }
            TokenKind::FloatLit => {
                self.bump();
                let text = self.text_of(token);
                let single = text.ends_with(['f', 'F']);
                let kind = match text.trim_end_matches(['f', 'F', 'l', 'L']).parse() {
                    Ok(value) => ExprKind::FloatLit { value, single },
                    Err(_) => ExprKind::Error,
                };
                Ok(self.new_expr(kind, token.span))
            }
            TokenKind::CharLit => {
                self.bump();
                let value = char_value(self.text_of(token));
                Ok(self.new_expr(ExprKind::CharLit(value), token.span))
            }
            TokenKind::StrLit => {
                self.bump();
                while self.peek().kind == TokenKind::StrLit {
                    self.bump();
                }
                let span = self.span_from(token.span);
                Ok(self.new_expr(ExprKind::StrLit, span))
            }
            TokenKind::Punct(Punct::LParen) => {
                self.bump();
                let inner = self.expr()?;
                self.expect(Punct::RParen)?;
                let span = self.span_from(token.span);
                Ok(Expr { span, ..inner })
            }
            _ => Err(self.expected("an expression")),
        }
    }

    fn primary_ident(&mut self) -> PResult<Expr> {
        let token = self.peek();
        let text = self.text_of(token).to_string();
        match text.as_str() {
            "true" | "false" => {
                self.bump();
                return Ok(self.new_expr(ExprKind::BoolLit(text == "true"), token.span));
            }
            // BrookGPU's operator form `indexof x` is the call `indexof(x)`.
            "indexof" if self.nth(1).kind == TokenKind::Ident => {
                self.bump();
                let operand = self.nth(0);
                self.bump();
                let callee = self.new_expr(ExprKind::Ident(text), token.span);
                let name = self.text_of(operand).to_string();
                let arg = self.new_expr(ExprKind::Ident(name), operand.span);
                let span = token.span.to(operand.span);
                return Ok(self.new_expr(ExprKind::Call(Box::new(callee), vec![arg]), span));
            }
            "unsigned" | "signed" | "long" => {
                let ty = self.type_spec()?;
                let args = self.call_args()?;
                let span = self.span_from(token.span);
                return Ok(self.new_expr(ExprKind::Construct(ty, args), span));
            }
            _ => {}
        }
        if builtin_type(&text).is_some() || self.type_macros.contains_key(&text) {
            let ty = self.type_spec()?;
            if !self.at(Punct::LParen) {
                return Err(
                    self.expected("`(` after a type name (a constructor such as `float2(x, y)`)")
                );
            }
            let args = self.call_args()?;
            let span = self.span_from(token.span);
            return Ok(self.new_expr(ExprKind::Construct(ty, args), span));
        }
        self.bump();
        let ident = self.new_expr(ExprKind::Ident(text), token.span);
        self.expand_macro(&ident);
        Ok(ident)
    }

    /// When `ident` names an object-like macro whose body is one expression, records the body
    /// parsed ([`Program::macro_expansions`](crate::brook::ast::Program)); nested macros are
    /// expanded in turn. A macro met again inside its own expansion leaves the whole expansion
    /// out, so the name is reported where it was used.
    fn expand_macro(&mut self, ident: &Expr) {
        let ExprKind::Ident(name) = &ident.kind else {
            return;
        };
        let bodies = self.macro_bodies;
        let Some(body) = bodies.get(name) else {
            return;
        };
        let over_budget = self.macro_tokens_left < body.len();
        if self.expanding.contains(name) || self.expanding.len() >= MAX_MACRO_NESTING || over_budget
        {
            // `#define A B`, `#define B A` (or `#define A B B`, `#define B C C`, ... growing
            // past the budget): no expansion of the outermost name holds.
            self.macro_cycle = true;
            return;
        }
        self.macro_tokens_left -= body.len();
        if body.first().is_none_or(|t| t.kind == TokenKind::Eof) {
            return;
        }
        let saved = (
            std::mem::replace(&mut self.tokens, body),
            self.pos,
            self.chain,
        );
        self.pos = 0;
        self.expanding.push(name.clone());
        let parsed = self.speculate(|p| {
            let e = p.expr()?;
            if p.at_eof() {
                Ok(e)
            } else {
                Err(Failed)
            }
        });
        self.expanding.pop();
        (self.tokens, self.pos, self.chain) = saved;
        let cycle = self.macro_cycle;
        if self.expanding.is_empty() {
            self.macro_cycle = false;
        }
        if let Some(mut expansion) = parsed.filter(|_| !cycle) {
            expansion.place_at(ident.span);
            self.macro_expansions.insert(ident.id, expansion);
        }
    }

    fn int_literal(&mut self, span: crate::source::Span) -> ExprKind {
        let text = self.text_of(self.tokens[self.pos - 1]).to_string();
        let suffix: String = text
            .chars()
            .rev()
            .take_while(|c| matches!(c, 'u' | 'U' | 'l' | 'L'))
            .collect();
        let digits = text.trim_end_matches(['u', 'U', 'l', 'L']);
        let well_formed = digits.bytes().all(|b| b.is_ascii_digit())
            || (digits.len() > 2
                && digits[..2].eq_ignore_ascii_case("0x")
                && digits[2..].bytes().all(|b| b.is_ascii_hexdigit()));
        if !well_formed {
            return ExprKind::Error; // The lexer reported it.
        }
        let Some(value) = parse_int(&text).and_then(|v| u64::try_from(v).ok()) else {
            self.report(
                Diagnostic::error(Code::MalformedNumber, span, "integer literal is too large")
                    .with_label("does not fit in 64 bits"),
            );
            return ExprKind::Error;
        };
        ExprKind::IntLit {
            value,
            unsigned: suffix.contains(['u', 'U']),
            long: suffix.contains(['l', 'L']),
        }
    }
}

/// The value of a character literal such as `'a'`, `'\n'` or `'\x41'`.
fn char_value(text: &str) -> i64 {
    let inner = text.trim_start_matches('\'').trim_end_matches('\'');
    let mut chars = inner.chars();
    match (chars.next(), chars.next()) {
        (Some('\\'), Some(escape)) => match escape {
            'n' => 10,
            't' => 9,
            'r' => 13,
            '0'..='7' => i64::from_str_radix(&inner[1..], 8).unwrap_or(0),
            'x' => i64::from_str_radix(&inner[2..], 16).unwrap_or(0),
            'a' => 7,
            'b' => 8,
            'f' => 12,
            'v' => 11,
            other => other as i64,
        },
        (Some(c), _) => c as i64,
        (None, _) => 0,
    }
}
