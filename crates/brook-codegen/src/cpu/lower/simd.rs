//! Four instances at once in SIMD registers, for the simplest kernels.
//!
//! A kernel qualifies ([`vectorizable`]) when its body is a straight line of stores to scalar
//! outputs and scalar locals, every stream is a `float`, `int` or `uint` stream of the domain's
//! shape with unit stride, and every expression is a literal, a constant, an input, a load of
//! a scalar local or output, or `+ - *` (and `/` for floats, bitwise operators for integers),
//! or a float negation. Lane `k` then computes exactly what instance `k` computes alone (the
//! same IEEE operations), so results stay bit-identical to the interpreter.

use super::{Binding, Lower};
use crate::abi::{InputMode, Variant};
use crate::CompileError;
use brook_ir::{
    BinaryOp, ExprKind, Handle, Kernel, Literal, ParamRole, PlaceRoot, ScalarKind, Stmt, Type,
    UnaryOp, ValueType,
};
use cranelift_codegen::ir::{immediates::Ieee32, types, InstBuilder, MemFlagsData, Value};
use cranelift_frontend::Variable;
use std::collections::HashMap;

/// Lanes per vector.
pub const LANES: u64 = 4;

fn lane_kind(ty: &Type) -> Option<ScalarKind> {
    match ty {
        Type::Value(ValueType { kind, width: 1 })
            if matches!(kind, ScalarKind::F32 | ScalarKind::I32 | ScalarKind::U32) =>
        {
            Some(*kind)
        }
        _ => None,
    }
}

fn vector_type(kind: ScalarKind) -> types::Type {
    if kind == ScalarKind::F32 {
        types::F32X4
    } else {
        types::I32X4
    }
}

/// Whether the kernel's body can run four instances at once (see the module docs).
pub fn vectorizable(kernel: &Kernel, variant: &Variant) -> bool {
    if !variant.unit_stride || kernel.group_size.is_some() {
        return false;
    }
    let params_ok = kernel.params.iter().enumerate().all(|(i, p)| match p.role {
        ParamRole::Input => {
            lane_kind(&p.ty).is_some()
                && variant.inputs.get(i).copied().flatten() == Some(InputMode::Direct)
        }
        ParamRole::Output => lane_kind(&p.ty).is_some(),
        ParamRole::Constant => lane_kind(&p.ty).is_some(),
        _ => false,
    });
    let locals_ok = kernel
        .locals
        .iter()
        .all(|(_, l)| !l.shared && lane_kind(&l.ty).is_some());
    let stmts_ok = kernel.body.iter().all(|s| match &s.stmt {
        Stmt::Store { place, .. } => {
            place.path.is_empty() && !matches!(place.root, PlaceRoot::Scatter { .. })
        }
        _ => false,
    });
    let exprs_ok = kernel.exprs.iter().all(|(_, e)| {
        let Some(kind) = lane_kind(&e.ty) else {
            return false;
        };
        match &e.kind {
            ExprKind::Literal(_) | ExprKind::Input(_) | ExprKind::Constant(_) => true,
            ExprKind::Load(place) => place.path.is_empty(),
            ExprKind::Unary { op, .. } => *op == UnaryOp::Neg && kind == ScalarKind::F32,
            ExprKind::Binary { op, .. } => match op {
                BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul => true,
                BinaryOp::Div => kind == ScalarKind::F32,
                BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor => kind != ScalarKind::F32,
                _ => false,
            },
            _ => false,
        }
    });
    params_ok && locals_ok && stmts_ok && exprs_ok
}

/// The vector state of one lowering: a vector variable per local.
pub struct Simd {
    locals: Vec<Variable>,
}

impl Simd {
    pub fn new(lower: &mut Lower<'_, '_>) -> Simd {
        let kinds: Vec<ScalarKind> = lower
            .kernel
            .locals
            .iter()
            .map(|(_, l)| lane_kind(&l.ty).unwrap_or(ScalarKind::F32))
            .collect();
        let locals = kinds
            .into_iter()
            .map(|k| lower.b.declare_var(vector_type(k)))
            .collect();
        Simd { locals }
    }

    /// Runs the body for the four instances at the cursors (which the caller then advances).
    pub fn body(&self, lower: &mut Lower<'_, '_>) -> Result<(), CompileError> {
        let kernel = lower.kernel;
        for (var, (_, local)) in self.locals.iter().zip(kernel.locals.iter()) {
            let kind = lane_kind(&local.ty).unwrap_or(ScalarKind::F32);
            let zero = splat_literal(lower, Literal { kind, bits: 0 });
            lower.b.def_var(*var, zero);
        }
        for statement in kernel.body.iter() {
            let mut memo = HashMap::new();
            let Stmt::Store { place, value } = &statement.stmt else {
                continue;
            };
            let v = self.expr(lower, &mut memo, *value)?;
            match &place.root {
                PlaceRoot::Local(l) => lower.b.def_var(self.locals[l.index()], v),
                PlaceRoot::Output(p) => {
                    if let Binding::Element { addr: cursor } = lower.bindings[p.0 as usize] {
                        let addr = lower.b.use_var(cursor);
                        lower.b.ins().store(unaligned(), v, addr, 0);
                    }
                }
                PlaceRoot::Scatter { .. } => {}
            }
        }
        Ok(())
    }

    fn expr(
        &self,
        lower: &mut Lower<'_, '_>,
        memo: &mut HashMap<Handle<brook_ir::Expr>, Value>,
        h: Handle<brook_ir::Expr>,
    ) -> Result<Value, CompileError> {
        if let Some(&v) = memo.get(&h) {
            return Ok(v);
        }
        let expr = &lower.kernel.exprs[h];
        let kind = lane_kind(&expr.ty).unwrap_or(ScalarKind::F32);
        let ty = vector_type(kind);
        let value = match &expr.kind {
            ExprKind::Literal(lit) => splat_literal(lower, *lit),
            ExprKind::Constant(p) => match &lower.bindings[p.0 as usize] {
                Binding::Constant(values) => {
                    let scalar = values[0];
                    lower.b.ins().splat(ty, scalar)
                }
                _ => splat_literal(lower, Literal { kind, bits: 0 }),
            },
            ExprKind::Input(p) => self.cursor_load(lower, p.0 as usize, ty),
            ExprKind::Load(place) => match &place.root {
                PlaceRoot::Local(l) => lower.b.use_var(self.locals[l.index()]),
                PlaceRoot::Output(p) => self.cursor_load(lower, p.0 as usize, ty),
                PlaceRoot::Scatter { .. } => splat_literal(lower, Literal { kind, bits: 0 }),
            },
            ExprKind::Unary { arg, .. } => {
                let a = self.expr(lower, memo, *arg)?;
                lower.b.ins().fneg(a)
            }
            ExprKind::Binary { op, left, right } => {
                let a = self.expr(lower, memo, *left)?;
                let b = self.expr(lower, memo, *right)?;
                let float = kind == ScalarKind::F32;
                let ins = lower.b.ins();
                match op {
                    BinaryOp::Add if float => ins.fadd(a, b),
                    BinaryOp::Sub if float => ins.fsub(a, b),
                    BinaryOp::Mul if float => ins.fmul(a, b),
                    BinaryOp::Div => ins.fdiv(a, b),
                    BinaryOp::Add => ins.iadd(a, b),
                    BinaryOp::Sub => ins.isub(a, b),
                    BinaryOp::Mul => ins.imul(a, b),
                    BinaryOp::BitAnd => ins.band(a, b),
                    BinaryOp::BitOr => ins.bor(a, b),
                    _ => ins.bxor(a, b),
                }
            }
            _ => {
                return Err(lower.unsupported(h, "a vectorized expression".into()));
            }
        };
        memo.insert(h, value);
        Ok(value)
    }

    fn cursor_load(&self, lower: &mut Lower<'_, '_>, param: usize, ty: types::Type) -> Value {
        match lower.bindings[param] {
            Binding::Element { addr: cursor } => {
                let addr = lower.b.use_var(cursor);
                lower.b.ins().load(ty, unaligned(), addr, 0)
            }
            _ => {
                let zero = lower.b.ins().iconst(types::I32, 0);
                lower.b.ins().splat(types::I32X4, zero)
            }
        }
    }
}

fn splat_literal(lower: &mut Lower<'_, '_>, lit: Literal) -> Value {
    if lit.kind == ScalarKind::F32 {
        let scalar = lower.b.ins().f32const(Ieee32::with_bits(lit.bits as u32));
        lower.b.ins().splat(types::F32X4, scalar)
    } else {
        let scalar = lower.b.ins().iconst(types::I32, lit.bits as u32 as i64);
        lower.b.ins().splat(types::I32X4, scalar)
    }
}

/// Vector accesses are only element-aligned.
fn unaligned() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}
