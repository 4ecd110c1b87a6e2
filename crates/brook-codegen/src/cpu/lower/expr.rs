//! Expressions: each IR expression becomes the flat list of its scalar leaves.

use super::{Binding, Lower, StreamRef, PTR};
use crate::cpu::layout::{clif_type, field_leaf, leaf_count};
use crate::cpu::CompileError;
use brook_ir::launch::iterator_axis;
use brook_ir::{Expr, ExprKind, Handle, Literal, ParamId, ScalarKind, Type};
use cranelift_codegen::ir::{condcodes::IntCC, immediates::Ieee32, types, InstBuilder, Value};

impl Lower<'_, '_> {
    /// The leaves of expression `h`, computed once per statement.
    pub fn expr(&mut self, h: Handle<Expr>) -> Result<Vec<Value>, CompileError> {
        if let Some(values) = self.memo.get(&h) {
            return Ok(values.clone());
        }
        let values = self.compute(h)?;
        self.memo.insert(h, values.clone());
        Ok(values)
    }

    /// The single leaf of a scalar expression.
    pub fn scalar(&mut self, h: Handle<Expr>) -> Result<Value, CompileError> {
        let values = self.expr(h)?;
        values
            .first()
            .copied()
            .ok_or_else(|| self.unsupported(h, "a scalar expression without a value".to_string()))
    }

    pub fn expr_type(&self, h: Handle<Expr>) -> &Type {
        &self.kernel.exprs[h].ty
    }

    /// The scalar kind of a value-typed expression.
    pub fn expr_kind(&self, h: Handle<Expr>) -> ScalarKind {
        match self.expr_type(h) {
            Type::Value(v) => v.kind,
            _ => ScalarKind::I32,
        }
    }

    pub fn unsupported(&self, h: Handle<Expr>, what: String) -> CompileError {
        CompileError::Unsupported {
            kernel: self.kernel.name.clone(),
            span: self.kernel.exprs.span(h),
            construct: what,
        }
    }

    fn compute(&mut self, h: Handle<Expr>) -> Result<Vec<Value>, CompileError> {
        let expr = &self.kernel.exprs[h];
        let ty = expr.ty.clone();
        Ok(match &expr.kind {
            ExprKind::Literal(lit) => vec![self.literal(*lit)],
            ExprKind::Compose(parts) => {
                let mut out = Vec::new();
                for &p in parts {
                    out.extend(self.expr(p)?);
                }
                out
            }
            ExprKind::Splat(a) => {
                let a = self.scalar(*a)?;
                let width = ty.value().map_or(1, |v| usize::from(v.width));
                vec![a; width]
            }
            ExprKind::Load(place) => self.load_place(place)?,
            ExprKind::Input(p) => self.input(*p),
            ExprKind::Constant(p) => match &self.bindings[p.0 as usize] {
                Binding::Constant(values) => values.clone(),
                _ => self.zeros(&ty),
            },
            ExprKind::Gather { param, indices } => self.gather(*param, indices)?,
            ExprKind::Field { base, index } => {
                let base_ty = self.expr_type(*base).clone();
                let values = self.expr(*base)?;
                let (first, field_ty) = field_leaf(self.module, &base_ty, *index);
                let count = leaf_count(self.module, &field_ty);
                values[first..first + count].to_vec()
            }
            ExprKind::Component { base, index } => {
                vec![self.expr(*base)?[usize::from(*index)]]
            }
            ExprKind::Swizzle { base, pattern } => {
                let values = self.expr(*base)?;
                pattern.iter().map(|&c| values[usize::from(c)]).collect()
            }
            ExprKind::Unary { op, arg } => {
                let kind = self.expr_kind(*arg);
                let values = self.expr(*arg)?;
                values
                    .into_iter()
                    .map(|v| self.unary(*op, kind, v))
                    .collect()
            }
            ExprKind::Binary { op, left, right } => {
                let kind = self.expr_kind(*left);
                let a = self.expr(*left)?;
                let b = self.expr(*right)?;
                a.into_iter()
                    .zip(b)
                    .map(|(x, y)| self.binary(*op, kind, x, y))
                    .collect()
            }
            ExprKind::Select {
                cond,
                accept,
                reject,
            } => {
                let c = self.scalar(*cond)?;
                let a = self.expr(*accept)?;
                let r = self.expr(*reject)?;
                a.into_iter()
                    .zip(r)
                    .map(|(x, y)| self.b.ins().select(c, x, y))
                    .collect()
            }
            ExprKind::Convert(a) => {
                let from = self.expr_kind(*a);
                let to = ty.value().map_or(ScalarKind::I32, |v| v.kind);
                let values = self.expr(*a)?;
                values
                    .into_iter()
                    .map(|v| self.convert(from, to, v))
                    .collect()
            }
            ExprKind::Math { fun, args } => self.math(h, *fun, args)?,
            ExprKind::IndexOf(p) => {
                let at = self.index_of(*p);
                self.position_vector(&at, ScalarKind::F32)
            }
            ExprKind::Instance => {
                let at = self.position();
                self.position_vector(&at, ScalarKind::I32)
            }
            ExprKind::InstanceInGroup => {
                let mut lanes = vec![self.iconst(types::I32, 0); 4];
                if let Some(g) = self.in_group {
                    lanes[0] = self.b.ins().ireduce(types::I32, g);
                }
                lanes
            }
        })
    }

    pub fn literal(&mut self, lit: Literal) -> Value {
        match lit.kind {
            ScalarKind::F32 => self.b.ins().f32const(Ieee32::with_bits(lit.bits as u32)),
            ScalarKind::F64 => self.b.ins().f64const(f64::from_bits(lit.bits)),
            k => self.b.ins().iconst(clif_type(k), lit.bits as i64),
        }
    }

    /// The zero value of `ty`, as leaves.
    pub fn zeros(&mut self, ty: &Type) -> Vec<Value> {
        crate::cpu::layout::leaves(self.module, ty)
            .into_iter()
            .map(|leaf| self.zero(leaf.kind))
            .collect()
    }

    /// The current element of an input, iterator or reduction operand.
    fn input(&mut self, p: ParamId) -> Vec<Value> {
        let ty = self.kernel.params[p.0 as usize].ty.clone();
        match self.bindings[p.0 as usize].clone() {
            Binding::Cursor { cursor } => {
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
    fn index_of(&mut self, p: ParamId) -> Vec<Value> {
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

    /// An index value as `i64`: integers as they are, floats by `floor(f + 0.25)` (saturating,
    /// NaN gives 0), `ulong`s above the `long` range saturate.
    pub fn index_value(&mut self, h: Handle<Expr>) -> Result<Value, CompileError> {
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

    /// `i` clamped to `[0, extent - 1]`.
    pub fn clamp_index(&mut self, i: Value, extent: Value) -> Value {
        let zero = self.iconst(PTR, 0);
        let low = self.b.ins().smax(i, zero);
        let last = self.b.ins().iadd_imm_s(extent, -1);
        self.b.ins().umin(low, last)
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
}
