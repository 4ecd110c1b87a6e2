//! Expressions: each IR expression becomes the flat list of its scalar leaves.

use super::{Binding, Lower, StreamRef, PTR};
use crate::cpu::layout::clif_type;
use crate::cpu::CompileError;
use crate::leaf_walk::LeafOps;
use brook_ir::launch::iterator_axis;
use brook_ir::{
    BinaryOp, Expr, Handle, Kernel, Literal, MathFun, Module, ParamId, Place, ScalarKind, Type,
    UnaryOp,
};
use cranelift_codegen::ir::{condcodes::IntCC, immediates::Ieee32, types, InstBuilder, Value};
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

    /// The current element of an input, iterator or reduction operand.
    fn input(&mut self, p: ParamId) -> Vec<Value> {
        let ty = self.kernel.params[p.0 as usize].ty.clone();
        match self.bindings[p.0 as usize].clone() {
            Binding::Element { addr: cursor } => {
                let addr = self.b.use_var(cursor);
                self.load_value(&ty, addr)
            }
            Binding::Resized { stream } => {
                let at = self.resized(&stream.shape);
                let index = self.element_index(stream.offset, &at, &stream.pitch);
                let addr = self.element_address(stream.base, index, stream.size);
                self.load_value(&ty, addr)
            }
            Binding::Iterator {
                start,
                end,
                shape,
                resized,
            } => {
                let at = if resized {
                    self.resized(&shape)
                } else {
                    self.position()
                };
                self.iterator_value(&start, &end, &shape, &at)
            }
            Binding::Vars(vars) => vars.into_iter().map(|v| self.b.use_var(v)).collect(),
            Binding::Values(values) => values,
            _ => self.zeros(&ty),
        }
    }

    fn constant(&mut self, p: ParamId) -> Option<Vec<Value>> {
        match &self.bindings[p.0 as usize] {
            Binding::Constant(values) => Some(values.clone()),
            _ => None,
        }
    }

    fn gather(
        &mut self,
        param: ParamId,
        indices: &[Handle<Expr>],
    ) -> Result<Vec<Value>, CompileError> {
        let ty = self.kernel.params[param.0 as usize].ty.clone();
        let Binding::Array { stream } = self.bindings[param.0 as usize].clone() else {
            return Ok(self.zeros(&ty));
        };
        let index = self.clamped_element(&stream, indices)?;
        let addr = self.element_address(stream.base, index, stream.size);
        Ok(self.load_value(&ty, addr))
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
        let at = self.index_position(p);
        self.position_vector(&at, ScalarKind::F32)
    }

    fn instance(&mut self) -> Vec<Value> {
        let at = self.position();
        self.position_vector(&at, ScalarKind::I32)
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

    /// Element `at` of an iterator: `start + ((end - start) * i) / n` per component, in `f32`,
    /// component `c` running along [`iterator_axis`].
    pub fn iterator_value(
        &mut self,
        start: &[Value],
        end: &[Value],
        shape: &[Value],
        at: &[Value],
    ) -> Vec<Value> {
        let rank = shape.len();
        (0..start.len())
            .map(|c| {
                let axis = iterator_axis(rank, c);
                let i = self.b.ins().fcvt_from_uint(types::F32, at[axis]);
                let n = self.b.ins().fcvt_from_uint(types::F32, shape[axis]);
                let span = self.b.ins().fsub(end[c], start[c]);
                let scaled = self.b.ins().fmul(span, i);
                let step = self.b.ins().fdiv(scaled, n);
                self.b.ins().fadd(start[c], step)
            })
            .collect()
    }

    /// The input position read at the current position through implicit resize:
    /// `floor(pos * n_in / n_out)` per axis.
    fn resized(&mut self, shape: &[Value]) -> Vec<Value> {
        let pos = self.position();
        let domain = self.domain.clone();
        pos.into_iter()
            .zip(shape)
            .zip(domain)
            .map(|((p, &n_in), n_out)| {
                let product = self.b.ins().imul(p, n_in);
                self.b.ins().udiv(product, n_out)
            })
            .collect()
    }

    /// The position `indexof(p)` reports.
    fn index_position(&mut self, p: ParamId) -> Vec<Value> {
        match self.bindings[p.0 as usize].clone() {
            Binding::Resized { stream } => self.resized(&stream.shape),
            Binding::Iterator {
                shape,
                resized: true,
                ..
            } => self.resized(&shape),
            _ => self.position(),
        }
    }

    /// A position (slowest first) as a 4-vector of `kind`, fastest axis in `.x`.
    fn position_vector(&mut self, at: &[Value], kind: ScalarKind) -> Vec<Value> {
        let mut lanes = Vec::with_capacity(4);
        for lane in 0..4 {
            let value = match at.len().checked_sub(lane + 1).map(|axis| at[axis]) {
                Some(p) if kind == ScalarKind::F32 => self.b.ins().fcvt_from_uint(types::F32, p),
                Some(p) => self.b.ins().ireduce(types::I32, p),
                None => self.zero(kind),
            };
            lanes.push(value);
        }
        lanes
    }

    /// The clamped element index of a gather (or of a scatter place read).
    pub fn clamped_element(
        &mut self,
        stream: &StreamRef,
        indices: &[Handle<Expr>],
    ) -> Result<Value, CompileError> {
        let mut at = Vec::with_capacity(indices.len());
        for (&h, &extent) in indices.iter().zip(&stream.shape) {
            let i = self.index_value(h)?;
            at.push(self.clamp_index(i, extent));
        }
        let pitch = stream.pitch[..at.len()].to_vec();
        Ok(self.element_index(stream.offset, &at, &pitch))
    }
}
