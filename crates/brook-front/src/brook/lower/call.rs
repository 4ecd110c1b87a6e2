//! Lowering of calls: intrinsics, `indexof`/`instance`/`instanceInGroup`/`syncGroup`, and
//! subkernels, which are inlined.

use super::{fail, ir_type, Binding, InlineFrame, KernelLowerer, Lowered};
use crate::brook::ast::{self, ExprKind as Ast};
use crate::brook::check::{self, ParamRole};
use brook_ir::{Expr, ExprKind, Handle, MathFun, Place, ScalarKind, Stmt, Type, ValueType};
use std::collections::HashMap;

impl KernelLowerer<'_> {
    /// Lowers a call; `None` for a call without a value.
    pub(super) fn call(
        &mut self,
        callee: &ast::Expr,
        args: &[ast::Expr],
        e: &ast::Expr,
    ) -> Lowered<Option<Handle<Expr>>> {
        let Ast::Ident(name) = &callee.kind else {
            return fail(callee.span, "indirect calls are not supported");
        };
        let int4 = Type::Value(ValueType::vector(ScalarKind::I32, 4));
        match name.as_str() {
            "indexof" => return self.indexof(args, e).map(Some),
            "instance" => return Ok(Some(self.append(ExprKind::Instance, int4, e.span))),
            "instanceInGroup" => {
                return Ok(Some(self.append(ExprKind::InstanceInGroup, int4, e.span)))
            }
            "syncGroup" => {
                self.emit(Stmt::Barrier, e.span);
                return Ok(None);
            }
            _ => {}
        }
        if let Some(fun) = MathFun::from_name(name) {
            let mut values = Vec::with_capacity(args.len());
            for arg in args {
                values.push(self.expr(arg)?);
            }
            let ty = self.checked_type(e)?;
            return Ok(Some(self.append(
                ExprKind::Math { fun, args: values },
                ty,
                e.span,
            )));
        }
        if name == "push" && self.shared.info.kernel("push").is_none() {
            self.push(args, e)?;
            return Ok(None);
        }
        self.inline(name, args, e)
    }

    fn indexof(&mut self, args: &[ast::Expr], e: &ast::Expr) -> Lowered<Handle<Expr>> {
        let [arg] = args else {
            return fail(e.span, "indexof takes one stream");
        };
        let Ast::Ident(name) = &arg.kind else {
            return fail(arg.span, "indexof takes a stream name");
        };
        let param = match self.lookup(name, arg.span)? {
            Binding::Input(p) | Binding::Output(p) | Binding::Scatter(p) => p,
            Binding::Local {
                origin: Some(p), ..
            } => p,
            Binding::Alias(Place {
                root: brook_ir::PlaceRoot::Output(p),
                ..
            }) => p,
            _ => {
                return fail(
                    arg.span,
                    format!("indexof(`{name}`): the argument passed for `{name}` is not a stream"),
                )
            }
        };
        let ty = Type::Value(ValueType::vector(ScalarKind::F32, 4));
        Ok(self.append(ExprKind::IndexOf(param), ty, e.span))
    }

    /// The stream parameter a subkernel argument names, for `indexof` in the callee.
    fn origin_of(&self, arg: &ast::Expr) -> Option<brook_ir::ParamId> {
        let Ast::Ident(name) = &arg.kind else {
            return None;
        };
        match self.lookup(name, arg.span).ok()? {
            Binding::Input(p) | Binding::Output(p) | Binding::Scatter(p) => Some(p),
            Binding::Local { origin, .. } => origin,
            _ => None,
        }
    }

    fn argument_binding(&mut self, arg: &ast::Expr, param: &check::ParamInfo) -> Lowered<Binding> {
        match &param.role {
            ParamRole::Input | ParamRole::Iterator | ParamRole::Constant => {
                let value = self.expr(arg)?;
                let ty = ir_type(&param.ty, param.span)?;
                let value = if ty.value().is_some() {
                    self.convert(value, &ty, arg.span)?
                } else {
                    value
                };
                let origin = self.origin_of(arg);
                let local = self.new_local(&param.name, ty, arg.span);
                self.emit(
                    Stmt::Store {
                        place: Place::local(local),
                        value,
                    },
                    arg.span,
                );
                Ok(Binding::Local { local, origin })
            }
            ParamRole::Output | ParamRole::Reduce => Ok(Binding::Alias(self.place(arg)?)),
            ParamRole::Gather { .. } => match &arg.kind {
                Ast::Ident(name) => match self.lookup(name, arg.span)? {
                    binding @ Binding::Gather(_) => Ok(binding),
                    _ => fail(arg.span, "a gather parameter needs a gather array"),
                },
                _ => fail(arg.span, "a gather parameter needs a gather array"),
            },
            ParamRole::Scatter { .. } => fail(arg.span, "scatter kernels cannot be called"),
            ParamRole::Vout { .. } => fail(arg.span, "vout kernels cannot be called"),
        }
    }

    /// Inlines a subkernel: arguments are bound, the body runs inside a loop that `return`
    /// leaves, and the result is a local. A body whose only `return` is its last statement needs
    /// no loop: its statements go inline, so straight-line subkernels stay straight-line code.
    fn inline(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        e: &ast::Expr,
    ) -> Lowered<Option<Handle<Expr>>> {
        let (Some(info), Some(ast)) = (
            self.shared.info.kernel(name),
            self.shared.bodies.get(name).copied(),
        ) else {
            return fail(e.span, format!("`{name}` has no body to inline"));
        };
        let Some(body) = &ast.body else {
            return fail(e.span, format!("`{name}` has no body to inline"));
        };
        let mut bindings = Vec::with_capacity(args.len());
        for (arg, param) in args.iter().zip(&info.params) {
            bindings.push((param.name.clone(), self.argument_binding(arg, param)?));
        }
        let result = match &info.return_type {
            check::Type::Void => None,
            ty => {
                let ty = ir_type(ty, e.span)?;
                Some(self.new_local(&format!("{name}_result"), ty, e.span))
            }
        };
        self.frames.push(InlineFrame {
            result,
            done: None,
            loop_depth: 0,
            returns_in_loops: 0,
        });
        let caller_scopes = std::mem::replace(&mut self.scopes, vec![HashMap::new()]);
        for (param_name, binding) in bindings {
            self.bind(&param_name, binding);
        }
        let lowered = self.in_block(|this| {
            this.block_items(&body.stmts)?;
            this.emit(Stmt::Break, e.span);
            Ok(())
        });
        self.scopes = caller_scopes;
        self.frames.pop();
        let (body, ()) = lowered?;
        self.b.emit_inlined(body, super::source_span(e.span));
        Ok(result.map(|local| {
            let ty = self.b.locals[local].ty.clone();
            self.append(ExprKind::Load(Place::local(local)), ty, e.span)
        }))
    }
}
