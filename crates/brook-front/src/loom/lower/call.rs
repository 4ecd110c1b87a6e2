//! Calls: device functions are inlined (value parameters become locals, array parameters
//! stand for the caller's array, slice or computed array, `return` leaves a wrapper loop);
//! predefined functions become IR math or, for `block(b)`, the `Range` of block `b`. A body
//! whose only `return` ends it is inlined as straight-line statements.

use super::expr::{ArrayValue, Val};
use super::{fail, kind_for, source_span, Binding, Frame, Lowered, Lowerer};
use crate::loom::ast::{Expr, Ident, Item};
use crate::loom::check::{Builtin, Callee, Ty};
use crate::source::Span;
use brook_ir::{BinaryOp, ExprKind, Handle, MathFun, Place, ScalarKind, Type, ValueType};
use std::collections::HashMap;

type IrExpr = brook_ir::Expr;

/// An argument of an inlined call.
enum Arg {
    Value(Handle<IrExpr>),
    Array(ArrayValue),
}

impl Lowerer<'_> {
    pub(super) fn call(
        &mut self,
        e: &Expr,
        func: &Ident,
        args: &[Expr],
    ) -> Lowered<Handle<IrExpr>> {
        let Some(&callee) = self.checked.info.callees.get(&e.id) else {
            return fail(func.span, "a call the checker did not resolve");
        };
        match callee {
            Callee::Builtin(b) => {
                let kind = self.builtin_arg_kind(b, args);
                let mut values = Vec::new();
                for arg in args {
                    values.push(self.scalar_as(arg, kind)?);
                }
                self.apply(callee, values, e.span)
            }
            Callee::Func(item) => {
                let params = self.param_types(item, e.span)?;
                let mut values = Vec::new();
                for (arg, ty) in args.iter().zip(&params) {
                    values.push(match ty {
                        Ty::Array { .. } => match self.value(arg, None)? {
                            Val::Array(array) => Arg::Array(self.publish_within(array, arg.span)?),
                            Val::Scalar(_) => {
                                return fail(arg.span, "a value for an array parameter")
                            }
                        },
                        ty => Arg::Value(self.converted(arg, ty)?),
                    });
                }
                self.inline(item, values, e.span)
            }
        }
    }

    /// Calls a function on values (the elements of a parallel operator's array).
    pub(super) fn apply(
        &mut self,
        callee: Callee,
        values: Vec<Handle<IrExpr>>,
        span: Span,
    ) -> Lowered<Handle<IrExpr>> {
        let s = source_span(span);
        match callee {
            Callee::Builtin(Builtin::Block) => {
                let b = match values.first() {
                    Some(&v) => self.b.convert(v, ScalarKind::I32, s),
                    None => return fail(span, "`block` needs a block index"),
                };
                let size = self.b.int(i64::from(self.grid.block_threads()), s);
                let start = self.b.binary(BinaryOp::Mul, b, size, s);
                let end = self.b.binary(BinaryOp::Add, start, size, s);
                let ty = self.ir_type(&Ty::range(), span)?;
                Ok(self.b.append(ExprKind::Compose(vec![start, end]), ty, s))
            }
            Callee::Builtin(Builtin::Math(fun)) => {
                let kind = values
                    .first()
                    .and_then(|&v| self.b.scalar_kind(v))
                    .unwrap_or(ScalarKind::F32);
                let args: Vec<Handle<IrExpr>> =
                    values.iter().map(|&v| self.b.convert(v, kind, s)).collect();
                let result = match fun {
                    MathFun::IsFinite | MathFun::IsInf | MathFun::IsNan => ScalarKind::Bool,
                    _ => kind,
                };
                Ok(self.b.append(
                    ExprKind::Math { fun, args },
                    Type::Value(ValueType::scalar(result)),
                    s,
                ))
            }
            Callee::Func(item) => {
                let params = self.param_types(item, span)?;
                let mut args = Vec::new();
                for (&v, ty) in values.iter().zip(&params) {
                    let v = match ty {
                        Ty::Basic(b) => self.b.convert(v, super::scalar_kind(*b), s),
                        _ => v,
                    };
                    args.push(Arg::Value(v));
                }
                self.inline(item, args, span)
            }
        }
    }

    /// The kind a predefined function's arguments are computed in.
    fn builtin_arg_kind(&self, b: Builtin, args: &[Expr]) -> ScalarKind {
        if b == Builtin::Block {
            return ScalarKind::I32;
        }
        let tys: Vec<&Ty> = args.iter().map(|a| self.ty_of(a)).collect();
        if let Some(Ty::Basic(x)) = tys.iter().find(|t| matches!(t, Ty::Basic(_))) {
            return super::scalar_kind(*x);
        }
        let float_only = matches!(b, Builtin::Math(f) if !f.is_numeric());
        if float_only || tys.iter().any(|t| **t == Ty::UntypedFloat) {
            ScalarKind::F64
        } else {
            kind_for(&Ty::UntypedInt, None)
        }
    }

    fn param_types(&self, item: usize, span: Span) -> Lowered<Vec<Ty>> {
        let Some(Item::Func(func)) = self.checked.program.items.get(item) else {
            return fail(span, "a call of what is not a function");
        };
        func.params
            .iter()
            .map(|p| {
                let id = self.declared(&p.name)?;
                Ok(self.checked.info.vars[id.0 as usize].ty.clone())
            })
            .collect()
    }

    /// The device function at `item` inlined with these arguments: its value.
    fn inline(&mut self, item: usize, args: Vec<Arg>, span: Span) -> Lowered<Handle<IrExpr>> {
        let s = source_span(span);
        let Some(Item::Func(func)) = self.checked.program.items.get(item) else {
            return fail(span, "a call of what is not a function");
        };
        let Some(ret) = self.checked.info.returns.get(&item).cloned() else {
            return fail(span, "a function without a return type");
        };
        let ret = self.ir_type(&ret, span)?;
        let result = self
            .b
            .new_local(&format!("{}.result", func.name.name), ret, false, s);
        let bool_ty = Type::Value(ValueType::scalar(ScalarKind::Bool));
        let done = self
            .b
            .new_local(&format!("{}.done", func.name.name), bool_ty, false, s);
        let mut bindings = HashMap::new();
        for (param, arg) in func.params.iter().zip(args) {
            let id = self.declared(&param.name)?;
            let binding = match arg {
                Arg::Array(ArrayValue::Ref {
                    array,
                    start: None,
                    len: None,
                    safe: false,
                    ..
                }) => Binding::Array(array),
                Arg::Array(view) => Binding::View(view),
                Arg::Value(v) => {
                    let ty = self.b.ty(v).clone();
                    let local = self.b.new_local(&param.name.name, ty, false, s);
                    self.b.store(Place::local(local), v, s);
                    Binding::Value(Place::local(local))
                }
            };
            bindings.insert(id, binding);
        }
        // `done` may hold `true` from an earlier iteration of a loop around the call.
        let no = self.b.literal(brook_ir::Literal::bool(false), s);
        self.b.store(Place::local(done), no, s);
        self.frames.push(Frame {
            bindings,
            ret: Some((result, done)),
            loops: 0,
        });
        self.b.open_block();
        let lowered = self.block(&func.body);
        self.b.emit(brook_ir::Stmt::Break, s);
        let body = self.b.close_block();
        self.frames.pop();
        lowered?;
        self.b.emit_inlined(body, s);
        Ok(self.b.load(Place::local(result), s))
    }
}
