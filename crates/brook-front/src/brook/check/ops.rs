//! Operators and conversions: the operator table of seed 003 section 6.3.12 and the conversion
//! rules of section 6.3.3. Every mismatch that a C99/Cg implicit conversion resolves is
//! converted; how it is reported depends on the dialect and `-a`
//! ([`super::ConversionReporting`]): a level-1 strong-typing warning (Brook+ default, as Brook+
//! 1.4's brcc did), the conversion-rule warnings (`-a`), or nothing (BrookGPU).

use super::{Checker, ConversionReporting, Type};
use crate::brook::ast::{BinaryOp, Expr, ExprKind, UnaryOp};
use crate::diagnostic::{Code, Diagnostic};
use crate::source::Span;
use brook_ir::{ScalarKind, ValueType};

/// Where a value is converted to an expected type, for the message.
#[derive(Clone, Copy, Debug)]
pub enum ConvContext<'a> {
    Initialization,
    Assignment,
    Return,
    /// Argument `n` (1-based) of a call to the named function.
    Argument(usize, &'a str),
}

/// Which operand classes an operator accepts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OperandClass {
    /// Scalars and vectors of every numeric type (not bool).
    Arithmetic,
    /// Any value type, bool included (`==`, `!=`).
    Any,
    /// char to uint (`%`).
    Integer,
    /// int and uint only (bitwise operators and shifts).
    Int32,
    /// Any value type: non-zero is true (`&&`, `||`, `!`).
    Logical,
}

fn class_of(op: BinaryOp) -> OperandClass {
    match op {
        BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div => OperandClass::Arithmetic,
        BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => OperandClass::Arithmetic,
        BinaryOp::Eq | BinaryOp::Ne => OperandClass::Any,
        BinaryOp::Rem => OperandClass::Integer,
        BinaryOp::Shl | BinaryOp::Shr | BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor => {
            OperandClass::Int32
        }
        BinaryOp::LogicAnd | BinaryOp::LogicOr => OperandClass::Logical,
    }
}

fn accepts(class: OperandClass, kind: ScalarKind) -> bool {
    match class {
        OperandClass::Arithmetic => kind != ScalarKind::Bool,
        OperandClass::Any => true,
        OperandClass::Integer => kind.is_integer(),
        OperandClass::Int32 => matches!(kind, ScalarKind::I32 | ScalarKind::U32),
        // Floats too, as C and Cg allow (non-zero is true): BrookGPU code relies on it.
        OperandClass::Logical => true,
    }
}

fn class_name(class: OperandClass) -> &'static str {
    match class {
        OperandClass::Arithmetic | OperandClass::Any => "a Arithmetic type",
        OperandClass::Integer | OperandClass::Logical => "a Integer type",
        OperandClass::Int32 => "a Integer type (bitwise operators take int or uint)",
    }
}

/// The type both operands are converted to under `-a`: the higher kind, the wider shape.
fn common_type(a: ValueType, b: ValueType) -> ValueType {
    let kind = if a.kind.promotion_rank() >= b.kind.promotion_rank() {
        a.kind
    } else {
        b.kind
    };
    ValueType::vector(kind, a.width.max(b.width))
}

/// The warning level and text for an implicit conversion under `-a`.
fn conversion_warning(from: ValueType, to: ValueType) -> (u8, String) {
    let mut problems = Vec::new();
    if !from.kind.promotes_to(to.kind) {
        problems.push("possible lose of data");
    }
    if from.width > to.width {
        problems.push("lose of components");
    } else if from.width < to.width && from.width != 1 {
        problems.push("uninitialized components");
    }
    if problems.is_empty() {
        return (
            2,
            format!("Mismatched types: conversion from \"{from}\" to \"{to}\""),
        );
    }
    (
        1,
        format!(
            "Conversion from \"{from}\" to \"{to}\": {}",
            problems.join(" and ")
        ),
    )
}

/// A hint for the commonest strong-typing warning: a literal of another type than expected.
pub fn literal_help_for(expr: &Expr, to: &Type) -> Option<String> {
    let Type::Value(to) = to else { return None };
    match (&expr.kind, to.kind) {
        (ExprKind::FloatLit { single: false, .. }, ScalarKind::F32) => {
            Some("a floating literal without a suffix is a double: add `f` (as in `1.0f`)".into())
        }
        (ExprKind::IntLit { .. }, k) if k.is_float() && to.width == 1 => {
            Some("an integer literal is an int: write a floating literal such as `1.0f`".into())
        }
        (ExprKind::IntLit { .. }, k) if !k.is_float() && k != ScalarKind::I32 => {
            Some(format!("write the literal with a cast, as in `({k})5`"))
        }
        _ => None,
    }
}

/// What to write instead of a scalar `d` that broadcasts to the vector type `ty`:
/// `float3(d, d, d)`, or the scalar swizzle `d.xxx`.
fn broadcast_help(ty: ValueType) -> String {
    let n = usize::from(ty.width);
    let args = vec!["d"; n].join(", ");
    format!(
        "the scalar is repeated in every component; to say so, write `{ty}({args})` or `d.{}`",
        "x".repeat(n)
    )
}

impl Checker<'_> {
    /// Converts `expr` (of type `from`) to `to`, reporting as the dialect and flags say; an
    /// error when no implicit conversion exists (structs, arrays).
    pub fn coerce(&mut self, expr: &Expr, from: &Type, to: &Type, ctx: ConvContext) {
        if from == to || from.is_error() || to.is_error() {
            return;
        }
        let (Type::Value(f), Type::Value(t)) = (from, to) else {
            let diagnostic = self.mismatch(expr, from, to, ctx);
            self.diags.push(diagnostic);
            return;
        };
        match self.conversion_reporting() {
            ConversionReporting::Silent => {}
            ConversionReporting::StrongTyping => {
                let mut warning = self.mismatch(expr, from, to, ctx);
                if f.width == 1 && t.width > 1 {
                    warning = warning.with_help(broadcast_help(*t));
                }
                self.diags.push(warning.into_strong_typing_warning());
            }
            ConversionReporting::Rules => {
                let (level, message) = conversion_warning(*f, *t);
                let message = match ctx {
                    ConvContext::Argument(n, callee) => {
                        format!("argument {n} of `{callee}`: {message}")
                    }
                    _ => message,
                };
                self.diags.push(Diagnostic::warning(
                    Code::ImplicitConversion,
                    level,
                    expr.span,
                    message,
                ));
            }
        }
        self.convert_quietly(expr, to);
    }

    /// Records that `expr` converts to `to` (lowering makes it explicit), without a message.
    pub fn convert_quietly(&mut self, expr: &Expr, to: &Type) {
        self.info.conversions.push((expr.id, to.clone()));
    }

    /// Converts the operands of an operator (or the arms of `?:`) to their common type: one
    /// strong-typing warning for the pair (`warning`), or the conversion-rule warnings of each
    /// operand under `-a`.
    pub fn convert_operands(
        &mut self,
        operands: [(&Expr, &Type); 2],
        common: &Type,
        warning: Diagnostic,
    ) {
        match self.conversion_reporting() {
            ConversionReporting::Rules => {
                for (expr, ty) in operands {
                    self.coerce(expr, ty, common, ConvContext::Assignment);
                }
                return;
            }
            ConversionReporting::StrongTyping => {
                self.diags.push(warning.into_strong_typing_warning());
            }
            ConversionReporting::Silent => {}
        }
        for (expr, ty) in operands {
            if ty != common {
                self.convert_quietly(expr, common);
            }
        }
    }

    /// The strong-typing mismatch at `expr`: an error where no conversion exists, else turned
    /// into a warning by the caller.
    fn mismatch(&mut self, expr: &Expr, from: &Type, to: &Type, ctx: ConvContext) -> Diagnostic {
        let (from_name, to_name) = (self.type_name(from), self.type_name(to));
        let (code, message) = match ctx {
            ConvContext::Argument(n, callee) => (
                Code::ArgumentType,
                format!("Mismatched type for argument {n} of `{callee}`: actual type is \"{from_name}\" but expected type is \"{to_name}\""),
            ),
            _ => (
                Code::MismatchedType,
                format!("Mismatched type: actual type is {from_name} but expected type is {to_name}"),
            ),
        };
        let label = match ctx {
            ConvContext::Initialization => "in this initialization",
            ConvContext::Assignment => "in this assignment",
            ConvContext::Return => "in this return",
            ConvContext::Argument(..) => "this argument",
        };
        let mut diagnostic = Diagnostic::error(code, expr.span, message).with_label(label);
        if let Some(help) = literal_help_for(expr, to) {
            diagnostic = diagnostic.with_help(help);
        }
        diagnostic
    }

    /// Checks one operand against an operator's class; returns its value type if acceptable.
    fn operand(
        &mut self,
        ty: &Type,
        side: &str,
        class: OperandClass,
        span: Span,
        op: &str,
    ) -> Option<ValueType> {
        let problem = match ty {
            Type::Error => return None,
            Type::Array { .. } => format!("Illegal to use array type as {side}operand"),
            Type::Value(v) if accepts(class, v.kind) => return Some(*v),
            _ => format!("{side}operand is not {}", class_name(class)),
        };
        let found = self.type_name(ty);
        self.diags.push(
            Diagnostic::error(Code::OperandType, span, problem)
                .with_label(format!("`{op}` cannot take {found}")),
        );
        None
    }

    /// The type of `left op right`.
    pub fn binary_type(
        &mut self,
        op: BinaryOp,
        left: &Expr,
        lt: &Type,
        right: &Expr,
        rt: &Type,
    ) -> Type {
        let class = class_of(op);
        let l = self.operand(lt, "left ", class, left.span, op.symbol());
        let r = self.operand(rt, "right ", class, right.span, op.symbol());
        let (Some(l), Some(r)) = (l, r) else {
            return Type::Error;
        };
        if class == OperandClass::Logical {
            return Type::value(ScalarKind::Bool, l.width.max(r.width));
        }
        let common = if l == r {
            l
        } else if op.is_shift() && l.width == r.width {
            // C shifts take the left operand's type; the count converts without a message.
            self.convert_quietly(right, &Type::Value(l));
            l
        } else {
            let common = common_type(l, r);
            let mut warning = Diagnostic::error(
                Code::MismatchedOperands,
                left.span.to(right.span),
                format!("Mismatched operands: both must have same type and same number of components: left is {l}, right is {r}"),
            );
            if l.width != r.width && l.width.min(r.width) == 1 {
                warning = warning.with_help(broadcast_help(common));
            }
            self.convert_operands([(left, lt), (right, rt)], &Type::Value(common), warning);
            common
        };
        if op.is_comparison() {
            Type::value(ScalarKind::Bool, common.width)
        } else {
            Type::Value(common)
        }
    }

    /// The type of a prefix or postfix operator applied to an operand of type `ty`.
    pub fn unary_type(&mut self, op: UnaryOp, operand: &Expr, ty: &Type, span: Span) -> Type {
        let (class, symbol) = match op {
            UnaryOp::Neg => (OperandClass::Arithmetic, "-"),
            UnaryOp::Plus => (OperandClass::Arithmetic, "+"),
            UnaryOp::Not => (OperandClass::Logical, "!"),
            UnaryOp::BitNot => (OperandClass::Int32, "~"),
            UnaryOp::PreInc | UnaryOp::PostInc => (OperandClass::Arithmetic, "++"),
            UnaryOp::PreDec | UnaryOp::PostDec => (OperandClass::Arithmetic, "--"),
            UnaryOp::AddrOf | UnaryOp::Deref => {
                let what = if op == UnaryOp::AddrOf {
                    "variable address(&)"
                } else {
                    "pointer dereference(*)"
                };
                self.diags.push(Diagnostic::error(
                    Code::PointerInKernel,
                    span,
                    format!("pointers not allowed inside kernel: {what}"),
                ));
                return Type::Error;
            }
        };
        let Some(v) = self.operand(ty, "", class, operand.span, symbol) else {
            return Type::Error;
        };
        if op == UnaryOp::Not {
            return Type::value(ScalarKind::Bool, v.width);
        }
        Type::Value(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversion_warnings_name_the_problem() {
        let f = ValueType::scalar(ScalarKind::F32);
        let d = ValueType::scalar(ScalarKind::F64);
        let f4 = ValueType::vector(ScalarKind::F32, 4);
        let i2 = ValueType::vector(ScalarKind::I32, 2);
        assert_eq!(conversion_warning(f, d).0, 2);
        assert_eq!(
            conversion_warning(d, f),
            (
                1,
                "Conversion from \"double\" to \"float\": possible lose of data".into()
            )
        );
        assert!(conversion_warning(f4, f).1.ends_with("lose of components"));
        assert!(conversion_warning(i2, f4)
            .1
            .ends_with("uninitialized components"));
        assert_eq!(common_type(i2, f4), f4);
    }
}
