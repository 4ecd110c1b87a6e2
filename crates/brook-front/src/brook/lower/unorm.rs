//! BrookGPU's `fixed`/`shortfixed` streams (`SEMANTICS.md`, "Dialects"): stored unsigned
//! normalized, computed as `float`. A kernel's parameter of such a type has the storage type in
//! the IR (`uchar`/`ushort` of the width), so every device loads and stores the bytes as they
//! are; the body sees a `float` local: an input's is `stored / max` from the start, a gather's
//! element is converted where it is read, and an output's local is stored back as
//! `convert(v * max + rounding)` (the conversion saturates: below 0 gives 0, above 1 the
//! maximum, NaN 0) where the kernel ends or returns.

use super::{Binding, KernelLowerer, Lowered};
use crate::brook::ast::Unorm;
use crate::source::Span;
use brook_ir::{
    BinaryOp, Expr, ExprKind, Handle, Literal, Local, ParamId, Place, PlaceRoot, Stmt, Type,
    ValueType,
};

/// An output whose float local is stored back as unsigned normalized values.
#[derive(Clone, Debug)]
pub(super) struct UnormOutput {
    param: ParamId,
    local: Handle<Local>,
    unorm: Unorm,
    computed: ValueType,
}

impl KernelLowerer<'_> {
    /// The IR type of a parameter of `unorm` elements computed as `computed`.
    pub(super) fn unorm_storage(unorm: Unorm, computed: &Type) -> Type {
        match computed {
            Type::Value(v) => Type::Value(ValueType::vector(unorm.storage(), v.width)),
            other => other.clone(),
        }
    }

    /// Binds an input stream parameter of unsigned normalized elements: its name is a `float`
    /// local holding `stored / max`.
    pub(super) fn bind_unorm_input(
        &mut self,
        name: &str,
        id: ParamId,
        unorm: Unorm,
        computed: &Type,
        span: Span,
    ) -> Lowered<()> {
        let stored = self.b.params[id.0 as usize].ty.clone();
        let raw = self.append(ExprKind::Input(id), stored, span);
        let value = self.unorm_value(raw, unorm, computed, span)?;
        let local = self.new_local(name, computed.clone(), span);
        self.emit(
            Stmt::Store {
                place: Place::local(local),
                value,
            },
            span,
        );
        self.bind(
            name,
            Binding::Local {
                local,
                origin: Some(id),
            },
        );
        Ok(())
    }

    /// Binds an output stream parameter of unsigned normalized elements: its name is a `float`
    /// local (zero at first), stored back where the kernel ends or returns.
    pub(super) fn bind_unorm_output(
        &mut self,
        name: &str,
        id: ParamId,
        unorm: Unorm,
        computed: &Type,
        span: Span,
    ) -> Lowered<()> {
        let Type::Value(v) = computed else {
            return super::fail(
                span,
                "fixed storage of a value that is not a scalar or vector",
            );
        };
        let local = self.new_local(name, computed.clone(), span);
        let zero = self.value_const(*v, 0, span);
        self.emit(
            Stmt::Store {
                place: Place::local(local),
                value: zero,
            },
            span,
        );
        self.bind(
            name,
            Binding::Local {
                local,
                origin: Some(id),
            },
        );
        self.unorm_outputs.push(UnormOutput {
            param: id,
            local,
            unorm,
            computed: *v,
        });
        Ok(())
    }

    /// `stored / max` as the computed `float` type.
    pub(super) fn unorm_value(
        &mut self,
        stored: Handle<Expr>,
        unorm: Unorm,
        computed: &Type,
        span: Span,
    ) -> Lowered<Handle<Expr>> {
        let Type::Value(v) = computed else {
            return super::fail(
                span,
                "fixed storage of a value that is not a scalar or vector",
            );
        };
        let as_float = self.append(ExprKind::Convert(stored), computed.clone(), span);
        Ok(self.with_constant(BinaryOp::Div, as_float, unorm.max(), *v, span))
    }

    /// Stores every unsigned normalized output's local into its stream (at the kernel's end
    /// and before a `return` of the kernel itself).
    pub(super) fn store_unorm_outputs(&mut self, span: Span) {
        for out in self.unorm_outputs.clone() {
            let computed = Type::Value(out.computed);
            let value = self.append(
                ExprKind::Load(Place::local(out.local)),
                computed.clone(),
                span,
            );
            let v = out.computed;
            let scaled = self.with_constant(BinaryOp::Mul, value, out.unorm.max(), v, span);
            let rounded = self.with_constant(BinaryOp::Add, scaled, out.unorm.rounding(), v, span);
            let stored_type = self.b.params[out.param.0 as usize].ty.clone();
            let stored = self.append(ExprKind::Convert(rounded), stored_type, span);
            self.emit(
                Stmt::Store {
                    place: Place {
                        root: PlaceRoot::Output(out.param),
                        path: Vec::new(),
                    },
                    value: stored,
                },
                span,
            );
        }
    }

    /// `left op constant`, the float `constant` in every component of `v`.
    fn with_constant(
        &mut self,
        op: BinaryOp,
        left: Handle<Expr>,
        constant: f32,
        v: ValueType,
        span: Span,
    ) -> Handle<Expr> {
        let scalar = self.literal(Literal::f32(constant), span);
        let right = self.splat(scalar, v.width, span);
        self.append(ExprKind::Binary { op, left, right }, Type::Value(v), span)
    }
}
