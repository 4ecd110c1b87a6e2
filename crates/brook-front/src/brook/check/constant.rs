//! Integer constant expressions where Brook needs a number at compile time: array sizes,
//! `GroupSize`, stream dimensions. A size is an integer literal, an object-like macro (`#define
//! N 16`: without `-pp` the line stays in the text and brcc still evaluated it), or an
//! expression of those with `+ - * / % << >>`, unary minus and parentheses (`NUM_ROWS + 1`).

use crate::brook::ast::{BinaryOp, Expr, ExprId, ExprKind, Program, UnaryOp};
use std::collections::{HashMap, HashSet};

/// What a constant-size expression (`a[16]`, `GroupSize(64)`) turned out to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConstSize {
    Value(i64),
    /// A literal that is not an integer (`a[2.0]`).
    NotInt,
    /// Anything that is not an integer constant expression (`a[n]`).
    NotSimple,
}

/// How deep macro bodies may name other macros (a cycle stops here).
const MAX_MACRO_DEPTH: u32 = 32;

/// The object-like macros of a file, for evaluating sizes, and their uses in kernel code.
#[derive(Clone, Debug, Default)]
pub struct Constants {
    macros: HashMap<String, String>,
    /// Macros defined more than once with different bodies (kernel code does not read them).
    ambiguous: HashSet<String>,
    expansions: HashMap<ExprId, Expr>,
}

impl Constants {
    /// The program's macros (`#define` lines in file order, a later definition wins), those
    /// defined twice, and the parsed bodies of the identifiers that name them
    /// ([`Program::macro_expansions`]).
    pub fn new(program: &Program) -> Self {
        Constants {
            macros: program.object_macros.iter().cloned().collect(),
            ambiguous: program.ambiguous_macros.clone(),
            expansions: program.macro_expansions.clone(),
        }
    }

    /// The text of the object-like macro `name`, if the file defines one.
    pub fn macro_body(&self, name: &str) -> Option<&str> {
        self.macros.get(name).map(String::as_str)
    }

    /// Whether the file defines the macro `name` more than once, with different bodies.
    pub fn macro_is_ambiguous(&self, name: &str) -> bool {
        self.ambiguous.contains(name)
    }

    /// The body of the macro the identifier `id` names, parsed, if it is an expression.
    pub fn expansion(&self, id: ExprId) -> Option<&Expr> {
        self.expansions.get(&id)
    }

    /// The value of a size expression.
    pub fn size_of(&self, expr: &Expr) -> ConstSize {
        match &expr.kind {
            ExprKind::IntLit { value, .. } => ConstSize::Value(*value as i64),
            ExprKind::FloatLit { .. } | ExprKind::CharLit(_) | ExprKind::BoolLit(_) => {
                ConstSize::NotInt
            }
            ExprKind::Error => ConstSize::Value(1),
            ExprKind::Ident(name) => match self.macro_value(name, 0) {
                Some(value) => ConstSize::Value(value),
                None => ConstSize::NotSimple,
            },
            ExprKind::Unary(UnaryOp::Neg, operand) => match self.size_of(operand) {
                ConstSize::Value(v) => v
                    .checked_neg()
                    .map_or(ConstSize::NotSimple, ConstSize::Value),
                other => other,
            },
            ExprKind::Unary(UnaryOp::Plus, operand) => self.size_of(operand),
            ExprKind::Binary(op, left, right) => match (self.size_of(left), self.size_of(right)) {
                (ConstSize::Value(a), ConstSize::Value(b)) => {
                    apply(*op, a, b).map_or(ConstSize::NotSimple, ConstSize::Value)
                }
                (ConstSize::NotInt, _) | (_, ConstSize::NotInt) => ConstSize::NotInt,
                _ => ConstSize::NotSimple,
            },
            _ => ConstSize::NotSimple,
        }
    }

    fn macro_value(&self, name: &str, depth: u32) -> Option<i64> {
        if depth > MAX_MACRO_DEPTH {
            return None;
        }
        let body = self.macros.get(name)?;
        let mut text = TextExpr {
            constants: self,
            chars: body.as_bytes(),
            pos: 0,
            depth,
        };
        let value = text.sum()?;
        text.skip_space();
        (text.pos == text.chars.len()).then_some(value)
    }
}

fn apply(op: BinaryOp, a: i64, b: i64) -> Option<i64> {
    match op {
        BinaryOp::Add => a.checked_add(b),
        BinaryOp::Sub => a.checked_sub(b),
        BinaryOp::Mul => a.checked_mul(b),
        BinaryOp::Div => a.checked_div(b),
        BinaryOp::Rem => a.checked_rem(b),
        BinaryOp::Shl => u32::try_from(b).ok().and_then(|b| a.checked_shl(b)),
        BinaryOp::Shr => u32::try_from(b).ok().and_then(|b| a.checked_shr(b)),
        _ => None,
    }
}

/// A macro body read as an integer expression: `16`, `0x10`, `(N + 1) * 2`, `M`.
struct TextExpr<'a> {
    constants: &'a Constants,
    chars: &'a [u8],
    pos: usize,
    depth: u32,
}

impl TextExpr<'_> {
    fn skip_space(&mut self) {
        while self
            .chars
            .get(self.pos)
            .is_some_and(u8::is_ascii_whitespace)
        {
            self.pos += 1;
        }
    }

    /// The operator at the cursor among `ops`, consumed.
    fn operator(&mut self, ops: &[(&str, BinaryOp)]) -> Option<BinaryOp> {
        self.skip_space();
        let rest = &self.chars[self.pos..];
        let (text, op) = ops.iter().find(|(t, _)| rest.starts_with(t.as_bytes()))?;
        self.pos += text.len();
        Some(*op)
    }

    fn sum(&mut self) -> Option<i64> {
        let mut value = self.product()?;
        while let Some(op) = self.operator(&[
            ("<<", BinaryOp::Shl),
            (">>", BinaryOp::Shr),
            ("+", BinaryOp::Add),
            ("-", BinaryOp::Sub),
        ]) {
            value = apply(op, value, self.product()?)?;
        }
        Some(value)
    }

    fn product(&mut self) -> Option<i64> {
        let mut value = self.atom()?;
        while let Some(op) = self.operator(&[
            ("*", BinaryOp::Mul),
            ("/", BinaryOp::Div),
            ("%", BinaryOp::Rem),
        ]) {
            value = apply(op, value, self.atom()?)?;
        }
        Some(value)
    }

    fn atom(&mut self) -> Option<i64> {
        self.skip_space();
        let c = *self.chars.get(self.pos)?;
        match c {
            b'(' => {
                self.pos += 1;
                let value = self.sum()?;
                self.skip_space();
                (self.chars.get(self.pos) == Some(&b')')).then(|| self.pos += 1)?;
                Some(value)
            }
            b'-' => {
                self.pos += 1;
                self.atom()?.checked_neg()
            }
            b'+' => {
                self.pos += 1;
                self.atom()
            }
            b'0'..=b'9' => self.number(),
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = self.pos;
                while self
                    .chars
                    .get(self.pos)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
                {
                    self.pos += 1;
                }
                let name = std::str::from_utf8(&self.chars[start..self.pos]).ok()?;
                self.constants.macro_value(name, self.depth + 1)
            }
            _ => None,
        }
    }

    /// A decimal, hex (`0x`) or octal integer literal with optional `u`/`l` suffixes.
    fn number(&mut self) -> Option<i64> {
        let start = self.pos;
        while self
            .chars
            .get(self.pos)
            .is_some_and(|c| c.is_ascii_alphanumeric())
        {
            self.pos += 1;
        }
        let text = std::str::from_utf8(&self.chars[start..self.pos]).ok()?;
        let digits = text.trim_end_matches(['u', 'U', 'l', 'L']);
        if let Some(hex) = digits
            .strip_prefix("0x")
            .or_else(|| digits.strip_prefix("0X"))
        {
            i64::from_str_radix(hex, 16).ok()
        } else if digits.len() > 1 && digits.starts_with('0') {
            i64::from_str_radix(&digits[1..], 8).ok()
        } else {
            digits.parse().ok()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn constants(defs: &[(&str, &str)]) -> Constants {
        let defs: Vec<(String, String)> = defs
            .iter()
            .map(|(n, b)| (n.to_string(), b.to_string()))
            .collect();
        Constants::new(&Program {
            object_macros: defs,
            ..Program::default()
        })
    }

    #[test]
    fn macro_bodies_evaluate() {
        let c = constants(&[
            ("N", "16"),
            ("ROWS", "(N + 1) * 2"),
            ("HEX", "0x10u"),
            ("LOOP", "LOOP + 1"),
            ("F", "1.5"),
        ]);
        assert_eq!(c.macro_value("N", 0), Some(16));
        assert_eq!(c.macro_value("ROWS", 0), Some(34));
        assert_eq!(c.macro_value("HEX", 0), Some(16));
        assert_eq!(c.macro_value("LOOP", 0), None);
        assert_eq!(c.macro_value("F", 0), None);
        assert_eq!(c.macro_value("MISSING", 0), None);
    }
}
