//! Types as written to checker types, and the constant expressions they hold: `const`
//! values (known when compiled) and array extents (known when compiled, or at launch from
//! the grid's sizes `THREADS`, `BLOCKS`, `BLOCKSIZE` and their `X_`/`Y_` forms).

use super::ty::{Dim, Record, Size, SizeOp, Ty};
use super::{Checker, VarKind};
use crate::diagnostic::{Code, Diagnostic};
use crate::loom::ast::{BinaryOp, Expr, ExprKind, TypeExpr, TypeExprKind, UnaryOp};
use crate::loom::token::ThreadName;
use crate::source::Span;
use std::sync::Arc;

/// The value of a `const`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ConstValue {
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl Checker<'_, '_> {
    /// The type a type expression names; problems are reported and give [`Ty::Error`].
    pub(super) fn resolve_type(&mut self, ty: &TypeExpr) -> Ty {
        match &ty.kind {
            TypeExprKind::Basic(b) => Ty::Basic(*b),
            TypeExprKind::Named(name) if name == "Range" => Ty::range(),
            TypeExprKind::Named(name) => self.named_type(name, ty.span),
            TypeExprKind::Record(fields) => {
                let mut resolved: Vec<(String, Ty)> = Vec::new();
                for (name, field_ty) in fields {
                    let field = self.resolve_type(field_ty);
                    if resolved.iter().any(|(n, _)| *n == name.name) {
                        self.diagnostics.error(
                            Code::LoomDuplicate,
                            name.span,
                            format!("the record has two fields named `{}`", name.name),
                        );
                        continue;
                    }
                    if field.is_array() {
                        self.check_constant_dims(&field, field_ty.span, "a record's array field");
                    }
                    resolved.push((name.name.clone(), field));
                }
                Ty::Record(Arc::new(Record {
                    name: None,
                    fields: resolved,
                }))
            }
            TypeExprKind::Array { elem, dims } => {
                let elem_ty = self.resolve_type(elem);
                if elem_ty.is_array() {
                    return Ty::Error;
                }
                let dims = dims
                    .iter()
                    .map(|d| match d {
                        None => Dim::Unsized,
                        Some(e) => self.dim(e),
                    })
                    .collect();
                Ty::Array {
                    elem: Box::new(elem_ty),
                    dims,
                }
            }
        }
    }

    /// A `type`-defined name, resolved once; a definition that contains itself is an error.
    pub(super) fn named_type(&mut self, name: &str, span: Span) -> Ty {
        if let Some(resolved) = self.named.get(name) {
            return match resolved {
                Some(ty) => ty.clone(),
                None => {
                    self.diagnostics.error(
                        Code::LoomType,
                        span,
                        format!("type `{name}` contains itself"),
                    );
                    Ty::Error
                }
            };
        }
        let Some(&index) = self.type_items.get(name) else {
            let mut d =
                Diagnostic::error(Code::LoomUndeclared, span, format!("unknown type `{name}`"));
            if self.funcs.contains_key(name) {
                d = d.with_help(format!("`{name}` is a function, not a type"));
            }
            self.diagnostics.push(d);
            return Ty::Error;
        };
        self.named.insert(name.to_string(), None);
        let program = self.program;
        let ty = match &program.items[index] {
            crate::loom::ast::Item::Type { ty, .. } => self.resolve_type(ty),
            _ => Ty::Error,
        };
        let ty = match ty {
            Ty::Record(record) if record.name.is_none() => Ty::Record(Arc::new(Record {
                name: Some(name.to_string()),
                fields: record.fields.clone(),
            })),
            other => other,
        };
        self.named.insert(name.to_string(), Some(ty.clone()));
        ty
    }

    /// An array extent.
    fn dim(&mut self, expr: &Expr) -> Dim {
        match self.size(expr) {
            Ok(size) => match evaluate(&size) {
                Some(n) if n > 0 => Dim::Const(n as u64),
                Some(n) => {
                    self.diagnostics.error(
                        Code::LoomArraySize,
                        expr.span,
                        format!("an array extent must be positive, and this one is {n}"),
                    );
                    Dim::Const(1)
                }
                None => Dim::Launch(size),
            },
            Err(why) => {
                self.diagnostics.error(Code::LoomArraySize, expr.span, why);
                Dim::Const(1)
            }
        }
    }

    /// An extent expression: integer constants, integer `const`s, the grid's sizes and
    /// `+ - * /` of those.
    fn size(&mut self, expr: &Expr) -> Result<Size, String> {
        match &expr.kind {
            ExprKind::Int(v) => i64::try_from(*v)
                .map(|_| Size::Literal(*v))
                .map_err(|_| "an array extent too large".to_string()),
            ExprKind::Thread(param) => match param.name {
                ThreadName::Threads | ThreadName::Blocks | ThreadName::BlockSize => {
                    Ok(Size::Grid(*param))
                }
                _ => Err(format!(
                    "an array extent cannot use `{}`: it differs from thread to thread (use THREADS, BLOCKS or BLOCKSIZE)",
                    crate::loom::token::TokenKind::Thread(*param).text()
                )),
            },
            ExprKind::Name(name) => match self.lookup(name).map(|id| self.var(id).kind.clone()) {
                Some(VarKind::Const(ConstValue::Int(v))) if v >= 0 => Ok(Size::Literal(v as u64)),
                Some(VarKind::Const(_)) => {
                    Err(format!("`{name}` is not a non-negative integer constant"))
                }
                Some(_) => Err(format!(
                    "an array extent must be known before the kernel runs, and `{name}` is a variable"
                )),
                None => Err(format!("`{name}` is not declared (an extent may use `const` names)")),
            },
            ExprKind::Binary { op, left, right } => {
                let op = match op {
                    BinaryOp::Add => SizeOp::Add,
                    BinaryOp::Sub => SizeOp::Sub,
                    BinaryOp::Mul => SizeOp::Mul,
                    BinaryOp::Div => SizeOp::Div,
                    _ => {
                        return Err(format!(
                            "an array extent may use `+ - * /`, not `{}`",
                            op.symbol()
                        ))
                    }
                };
                let left = self.size(left)?;
                let right = self.size(right)?;
                Ok(Size::Binary(op, Box::new(left), Box::new(right)))
            }
            _ => Err(
                "an array extent is an integer constant expression (constants, `const` names, THREADS, BLOCKS, BLOCKSIZE)"
                    .into(),
            ),
        }
    }

    /// Every extent of an array known when compiled (local arrays, record fields).
    pub(super) fn check_constant_dims(&mut self, ty: &Ty, span: Span, what: &str) {
        if let Ty::Array { dims, .. } = ty {
            if dims.iter().any(|d| !matches!(d, Dim::Const(_))) {
                self.diagnostics.error(
                    Code::LoomArraySize,
                    span,
                    format!(
                        "{what} needs extents known when compiling (integer constants), not {ty}"
                    ),
                );
            }
        }
    }

    /// No slices among a parameter's extents.
    pub(super) fn check_dims_known_at_launch(&mut self, ty: &Ty, span: Span) {
        if let Ty::Array { dims, .. } = ty {
            if dims.iter().any(|d| matches!(d, Dim::Slice)) {
                self.diagnostics
                    .error(Code::LoomArraySize, span, "an extent cannot be a slice");
            }
        }
    }

    /// The value of a `const` initializer: constants, other `const`s and operators on them.
    pub(super) fn const_value(&self, expr: &Expr) -> Result<ConstValue, String> {
        use ConstValue::{Bool, Float, Int};
        Ok(match &expr.kind {
            ExprKind::Int(v) => {
                Int(i64::try_from(*v).map_err(|_| "the constant does not fit in 64 bits")?)
            }
            ExprKind::Float(v) => Float(*v),
            ExprKind::Bool(b) => Bool(*b),
            ExprKind::Name(name) => match self.lookup(name).map(|id| &self.var(id).kind) {
                Some(VarKind::Const(value)) => *value,
                _ => return Err(format!("`{name}` is not a constant")),
            },
            ExprKind::Tagged { value, ty } => {
                let v = self.const_value(value)?;
                match (&ty.kind, v) {
                    (TypeExprKind::Basic(b), Int(i)) if b.is_float() => Float(i as f64),
                    (TypeExprKind::Basic(b), Float(f)) if b.is_integer() => Int(f as i64),
                    _ => v,
                }
            }
            ExprKind::Unary { op, arg } => match (op, self.const_value(arg)?) {
                (UnaryOp::Neg, Int(i)) => Int(i.wrapping_neg()),
                (UnaryOp::Neg, Float(f)) => Float(-f),
                (UnaryOp::Not, Bool(b)) => Bool(!b),
                (UnaryOp::Complement, Int(i)) => Int(!i),
                _ => return Err("an operator that does not apply to this constant".into()),
            },
            ExprKind::Binary { op, left, right } => {
                binary(*op, self.const_value(left)?, self.const_value(right)?)?
            }
            _ => return Err("a `const` is initialized by a constant expression".into()),
        })
    }
}

fn binary(op: BinaryOp, a: ConstValue, b: ConstValue) -> Result<ConstValue, String> {
    use ConstValue::{Bool, Float, Int};
    Ok(match (a, b) {
        (Int(a), Int(b)) => Int(match op {
            BinaryOp::Add => a.wrapping_add(b),
            BinaryOp::Sub => a.wrapping_sub(b),
            BinaryOp::Mul => a.wrapping_mul(b),
            BinaryOp::Div => a.checked_div(b).unwrap_or(0),
            BinaryOp::Rem => a.checked_rem(b).unwrap_or(0),
            BinaryOp::Shl => a.wrapping_shl(b as u32),
            BinaryOp::Shr => a.wrapping_shr(b as u32),
            BinaryOp::BitAnd => a & b,
            BinaryOp::BitOr => a | b,
            BinaryOp::BitXor => a ^ b,
            _ => return compare(op, a as f64, b as f64),
        }),
        (Float(_) | Int(_), Float(_) | Int(_)) => {
            let (a, b) = (as_f64(a), as_f64(b));
            Float(match op {
                BinaryOp::Add => a + b,
                BinaryOp::Sub => a - b,
                BinaryOp::Mul => a * b,
                BinaryOp::Div => a / b,
                BinaryOp::Rem => a % b,
                _ => return compare(op, a, b),
            })
        }
        (Bool(a), Bool(b)) => Bool(match op {
            BinaryOp::And => a && b,
            BinaryOp::Or => a || b,
            BinaryOp::Eq => a == b,
            BinaryOp::Ne => a != b,
            _ => return Err("an operator that does not apply to Bool".into()),
        }),
        _ => return Err("operands of different kinds".into()),
    })
}

fn compare(op: BinaryOp, a: f64, b: f64) -> Result<ConstValue, String> {
    Ok(ConstValue::Bool(match op {
        BinaryOp::Eq => a == b,
        BinaryOp::Ne => a != b,
        BinaryOp::Lt => a < b,
        BinaryOp::Le => a <= b,
        BinaryOp::Gt => a > b,
        BinaryOp::Ge => a >= b,
        _ => return Err(format!("`{}` does not apply here", op.symbol())),
    }))
}

fn as_f64(v: ConstValue) -> f64 {
    match v {
        ConstValue::Int(i) => i as f64,
        ConstValue::Float(f) => f,
        ConstValue::Bool(b) => f64::from(u8::from(b)),
    }
}

/// The value of a size without grid sizes (`None` when it has some, or overflows).
pub fn evaluate(size: &Size) -> Option<i64> {
    match size {
        Size::Literal(n) => i64::try_from(*n).ok(),
        Size::Grid(_) => None,
        Size::Binary(op, a, b) => {
            let (a, b) = (evaluate(a)?, evaluate(b)?);
            match op {
                SizeOp::Add => a.checked_add(b),
                SizeOp::Sub => a.checked_sub(b),
                SizeOp::Mul => a.checked_mul(b),
                SizeOp::Div => a.checked_div(b),
            }
        }
    }
}

/// A `const`'s value as its declared type holds it.
pub fn convert_const(value: ConstValue, to: crate::loom::ast::BasicType) -> ConstValue {
    match value {
        ConstValue::Int(i) if to.is_float() => ConstValue::Float(i as f64),
        ConstValue::Float(f) if to.is_integer() => ConstValue::Int(f as i64),
        other => other,
    }
}

/// Whether an integer constant fits a basic integer type.
pub fn fits(value: i64, to: crate::loom::ast::BasicType) -> bool {
    use crate::loom::ast::BasicType;
    match to {
        BasicType::Byte => (0..=255).contains(&value),
        BasicType::Int32 => i32::try_from(value).is_ok(),
        BasicType::UInt32 => u32::try_from(value).is_ok(),
        BasicType::UInt64 => value >= 0,
        _ => true,
    }
}
