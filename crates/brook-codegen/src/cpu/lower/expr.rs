//! Expressions: each IR expression becomes the flat list of its scalar leaves.

use super::{Binding, Lower, PTR};
use crate::cpu::layout::clif_type;
use crate::cpu::CompileError;
use crate::leaf_walk::LeafOps;
use crate::lower::launch::{self, Launch};
use brook_ir::{
    BinaryOp, Expr, Handle, Kernel, Literal, MathFun, Module, ParamId, Place, ScalarKind, Type,
    UnaryOp,
};
use cranelift_codegen::ir::{condcodes::IntCC, immediates::Ieee32, types, InstBuilder, Value};
use cranelift_frontend::Variable;
use std::collections::HashMap;

impl<'a> LeafOps<'a> for Lower<'a, '_> {
    type Leaf = Value;
    type Error = CompileError;

    fn module(&self) -> &'a Module {
        self.module
    }

    fn kernel(&self) -> &'a Kernel {
        self.kernel
    }

    fn memo(&mut self) -> &mut HashMap<Handle<Expr>, Vec<Value>> {
        &mut self.memo
    }

    fn unsupported(&self, h: Handle<Expr>, what: String) -> CompileError {
        Lower::unsupported(self, h, what)
    }

    fn literal(&mut self, lit: Literal) -> Value {
        match lit.kind {
            ScalarKind::F32 => self.b.ins().f32const(Ieee32::with_bits(lit.bits as u32)),
            ScalarKind::F64 => self.b.ins().f64const(f64::from_bits(lit.bits)),
            k => self.b.ins().iconst(clif_type(k), lit.bits as i64),
        }
    }

    /// The zero value of `ty`, as leaves.
    fn zeros(&mut self, ty: &Type) -> Vec<Value> {
        crate::cpu::layout::leaves(self.module, ty)
            .into_iter()
            .map(|leaf| self.zero(leaf.kind))
            .collect()
    }

    fn load_place(&mut self, place: &Place) -> Result<Vec<Value>, CompileError> {
        Lower::load_place(self, place)
    }

    fn input(&mut self, p: ParamId) -> Vec<Value> {
        launch::input(self, p)
    }

    fn constant(&mut self, p: ParamId) -> Option<Vec<Value>> {
        launch::constant(self, p)
    }

    fn gather(
        &mut self,
        param: ParamId,
        indices: &[Handle<Expr>],
    ) -> Result<Vec<Value>, CompileError> {
        launch::gather(self, param, indices)
    }

    /// An index value as `i64`: integers as they are, floats by `floor(f + 0.25)` (saturating,
    /// NaN gives 0), `ulong`s above the `long` range saturate.
    fn index_value(&mut self, h: Handle<Expr>) -> Result<Value, CompileError> {
        let kind = self.expr_kind(h);
        let v = self.scalar(h)?;
        Ok(match kind {
            ScalarKind::F32 => {
                let quarter = self.b.ins().f32const(0.25);
                let shifted = self.b.ins().fadd(v, quarter);
                let floor = self.b.ins().floor(shifted);
                self.b.ins().fcvt_to_sint_sat(PTR, floor)
            }
            ScalarKind::F64 => {
                let quarter = self.b.ins().f64const(0.25);
                let shifted = self.b.ins().fadd(v, quarter);
                let floor = self.b.ins().floor(shifted);
                self.b.ins().fcvt_to_sint_sat(PTR, floor)
            }
            ScalarKind::I64 => v,
            ScalarKind::U64 => {
                let negative = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, v, 0);
                let max = self.iconst(PTR, i64::MAX);
                self.b.ins().select(negative, max, v)
            }
            k if k.is_signed() => self.b.ins().sextend(PTR, v),
            _ => self.b.ins().uextend(PTR, v),
        })
    }

    fn index_constant(&mut self, value: u64) -> Value {
        self.iconst(PTR, value as i64)
    }

    /// `i` clamped to `[0, extent - 1]`.
    fn clamp_index(&mut self, i: Value, extent: Value) -> Value {
        let zero = self.iconst(PTR, 0);
        let low = self.b.ins().smax(i, zero);
        let last = self.b.ins().iadd_imm_s(extent, -1);
        self.b.ins().umin(low, last)
    }

    fn element_address(&mut self, base: Value, index: Value, size: u32) -> Value {
        Lower::element_address(self, base, index, size)
    }

    fn unary(&mut self, op: UnaryOp, kind: ScalarKind, v: Value) -> Value {
        Lower::unary(self, op, kind, v)
    }

    fn binary(&mut self, op: BinaryOp, kind: ScalarKind, a: Value, b: Value) -> Value {
        Lower::binary(self, op, kind, a, b)
    }

    fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        self.b.ins().select(c, a, b)
    }

    fn convert(&mut self, from: ScalarKind, to: ScalarKind, v: Value) -> Value {
        Lower::convert(self, from, to, v)
    }

    type Helper = crate::cpu::helpers::Helper;

    fn math_helper(&self, fun: MathFun, double: bool) -> Option<crate::cpu::helpers::Helper> {
        crate::cpu::helpers::math_helper(fun, double)
    }

    fn call_math_helper(
        &mut self,
        helper: crate::cpu::helpers::Helper,
        _kind: ScalarKind, // the helper's signature says its types
        lane: &[Value],
    ) -> Value {
        Lower::call_helper(self, helper, lane)
    }

    fn exact_math(&mut self, fun: MathFun, kind: ScalarKind, args: &[Vec<Value>]) -> Vec<Value> {
        Lower::exact_math(self, fun, kind, args)
    }

    fn index_of(&mut self, p: ParamId) -> Vec<Value> {
        launch::index_of(self, p)
    }

    fn instance(&mut self) -> Vec<Value> {
        launch::instance(self)
    }

    fn instance_in_group(&mut self) -> Vec<Value> {
        let mut lanes = vec![self.iconst(types::I32, 0); 4];
        if let Some(g) = self.in_group {
            lanes[0] = self.b.ins().ireduce(types::I32, g);
        }
        lanes
    }
}

impl Lower<'_, '_> {
    pub fn unsupported(&self, h: Handle<Expr>, what: String) -> CompileError {
        CompileError::Unsupported {
            kernel: self.kernel.name.clone(),
            span: self.kernel.exprs.span(h),
            construct: what,
        }
    }
}

impl<'a> Launch<'a> for Lower<'a, '_> {
    type Var = Variable;

    fn binding(&self, p: ParamId) -> Binding {
        self.bindings[p.0 as usize].clone()
    }

    fn read_var(&mut self, var: Variable) -> Value {
        self.b.use_var(var)
    }

    fn position(&mut self) -> Vec<Value> {
        Lower::position(self)
    }

    fn domain(&self) -> Vec<Value> {
        self.domain.clone()
    }

    fn load_element(&mut self, ty: &Type, addr: Value) -> Vec<Value> {
        self.load_value(ty, addr)
    }

    fn element_index(&mut self, offset: Value, at: &[Value], pitch: &[Value]) -> Value {
        Lower::element_index(self, offset, at, pitch)
    }

    fn mul_index(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().imul(a, b)
    }

    fn div_index(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().udiv(a, b)
    }
}
