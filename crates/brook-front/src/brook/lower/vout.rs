//! Lowering of BrookGPU variable outputs (`vout [N] T v<>` and `push`), as
//! [`brook_ir::vout`] defines them: `v` is a local of type `T`; the kernel gets `N` output
//! slots and an `int` count output after its other parameters; the count is 0 on entry and
//! each push stores into the next slot while there is one, then counts.

use super::{fail, ir_type, source_span, Binding, KernelLowerer, Lowered};
use crate::brook::ast::{self, ExprKind as Ast};
use crate::brook::check;
use brook_ir::{
    BinaryOp, Block, Expr, ExprKind, Handle, Local, Param, ParamId, ParamRole, Place, PlaceRoot,
    ScalarKind, Stmt, Type, ValueType, Vout,
};

/// A vout of the kernel being lowered.
pub(super) struct VoutState {
    pub ir: Vout,
    /// The vout's own value (`v = x; push(v);`).
    value: Handle<Local>,
    /// How many values this instance pushed so far.
    pushed: Handle<Local>,
}

fn int() -> Type {
    Type::Value(ValueType::scalar(ScalarKind::I32))
}

fn output(place: ParamId) -> Place {
    Place {
        root: PlaceRoot::Output(place),
        path: Vec::new(),
    }
}

impl KernelLowerer<'_> {
    /// Declares vout `param` (source position `position`): its local, bound to its name.
    pub(super) fn declare_vout(
        &mut self,
        param: &check::ParamInfo,
        position: usize,
        limit: u32,
    ) -> Lowered<()> {
        let ty = ir_type(&param.ty, param.span)?;
        let value = self.new_local(&param.name, ty.clone(), param.span);
        let pushed = self.new_local(&format!("{}__pushed", param.name), int(), param.span);
        self.bind(
            &param.name,
            Binding::Local {
                local: value,
                origin: None,
            },
        );
        self.vouts.push(VoutState {
            ir: Vout {
                name: param.name.clone(),
                ty,
                position,
                limit,
                slots: Vec::new(),
                count: ParamId(0),
            },
            value,
            pushed,
        });
        Ok(())
    }

    /// Appends every vout's slots and count after the other parameters, and sets the counts
    /// to 0 at the start of the body.
    pub(super) fn vout_params(&mut self) {
        let span = crate::source::Span::default();
        for n in 0..self.vouts.len() {
            let (name, ty, limit) = {
                let v = &self.vouts[n].ir;
                (v.name.clone(), v.ty.clone(), v.limit)
            };
            let add = |lowerer: &mut Self, name: String, ty: Type| {
                let id = ParamId(lowerer.b.params.len() as u32);
                lowerer.b.params.push(Param {
                    name,
                    ty,
                    role: ParamRole::Output,
                    span: source_span(span),
                });
                id
            };
            let slots: Vec<ParamId> = (0..limit)
                .map(|k| add(self, format!("{name}__vout{k}"), ty.clone()))
                .collect();
            let count = add(self, format!("{name}__vcount"), int());
            let zero = self.scalar_const(ScalarKind::I32, 0, span);
            self.emit(
                Stmt::Store {
                    place: output(count),
                    value: zero,
                },
                span,
            );
            let ir = &mut self.vouts[n].ir;
            ir.slots = slots;
            ir.count = count;
        }
    }

    /// `push(v)`, `push(v, value)` or `push(value)` (the checker resolved which vout).
    pub(super) fn push(&mut self, args: &[ast::Expr], e: &ast::Expr) -> Lowered<()> {
        let named = |lowerer: &Self, arg: &ast::Expr| match &arg.kind {
            Ast::Ident(name) => lowerer.vouts.iter().position(|v| v.ir.name == *name),
            _ => None,
        };
        let (index, value) = match args {
            [arg] => match named(self, arg) {
                Some(index) => {
                    let local = self.vouts[index].value;
                    let ty = self.vouts[index].ir.ty.clone();
                    let load = self.append(ExprKind::Load(Place::local(local)), ty, arg.span);
                    (index, load)
                }
                None if self.vouts.len() == 1 => (0, self.expr(arg)?),
                None => return fail(e.span, "push: which vout?"),
            },
            [stream, value] => match named(self, stream) {
                Some(index) => (index, self.expr(value)?),
                None => return fail(stream.span, "push: the first argument is not a vout"),
            },
            _ => return fail(e.span, "push takes one or two arguments"),
        };
        let ty = self.vouts[index].ir.ty.clone();
        let value = if ty.value().is_some() {
            self.convert(value, &ty, e.span)?
        } else {
            value
        };
        let value = self.capture("pushed_value", value, e.span);
        self.store_in_slot(index, value, e);
        self.count_push(index, e);
        Ok(())
    }

    /// `if (pushed == 0) slot0 = value; else if (pushed == 1) slot1 = value; ...`
    fn store_in_slot(&mut self, index: usize, value: Handle<Expr>, e: &ast::Expr) {
        let pushed = self.vouts[index].pushed;
        let slots = self.vouts[index].ir.slots.clone();
        let mut chain = Block::new();
        for (k, slot) in slots.iter().enumerate().rev() {
            let load = self.append(ExprKind::Load(Place::local(pushed)), int(), e.span);
            let k = self.scalar_const(ScalarKind::I32, k as i64, e.span);
            let cond = self.append(
                ExprKind::Binary {
                    op: BinaryOp::Eq,
                    left: load,
                    right: k,
                },
                Type::Value(ValueType::scalar(ScalarKind::Bool)),
                e.span,
            );
            let mut accept = Block::new();
            accept.push(
                Stmt::Store {
                    place: output(*slot),
                    value,
                },
                source_span(e.span),
            );
            let reject = std::mem::take(&mut chain);
            chain.push(
                Stmt::If {
                    cond,
                    accept,
                    reject,
                },
                source_span(e.span),
            );
        }
        for stmt in chain.0 {
            self.emit(stmt.stmt, e.span);
        }
    }

    /// `pushed = pushed + 1; count = pushed;`
    fn count_push(&mut self, index: usize, e: &ast::Expr) {
        let (pushed, count) = (self.vouts[index].pushed, self.vouts[index].ir.count);
        let load = self.append(ExprKind::Load(Place::local(pushed)), int(), e.span);
        let one = self.scalar_const(ScalarKind::I32, 1, e.span);
        let next = self.append(
            ExprKind::Binary {
                op: BinaryOp::Add,
                left: load,
                right: one,
            },
            int(),
            e.span,
        );
        self.emit(
            Stmt::Store {
                place: Place::local(pushed),
                value: next,
            },
            e.span,
        );
        let total = self.append(ExprKind::Load(Place::local(pushed)), int(), e.span);
        self.emit(
            Stmt::Store {
                place: output(count),
                value: total,
            },
            e.span,
        );
    }
}
