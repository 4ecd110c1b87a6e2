//! Expressions: each IR expression becomes the registers of its scalar leaves.

use super::{Binding, Lower, StreamRef};
use crate::leaves::{field_leaf, leaf_count};
use crate::ptx::emit::{Class, Reg};
use crate::ptx::CompileError;
use brook_ir::launch::iterator_axis;
use brook_ir::{Expr, ExprKind, Handle, Literal, ParamId, ScalarKind, Type};

impl Lower<'_> {
    /// The leaves of expression `h`, computed once per statement.
    pub fn expr(&mut self, h: Handle<Expr>) -> Result<Vec<Reg>, CompileError> {
        if let Some(values) = self.memo.get(&h) {
            return Ok(values.clone());
        }
        let values = self.compute(h)?;
        self.memo.insert(h, values.clone());
        Ok(values)
    }

    /// The single leaf of a scalar expression.
    pub fn scalar(&mut self, h: Handle<Expr>) -> Result<Reg, CompileError> {
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

    fn compute(&mut self, h: Handle<Expr>) -> Result<Vec<Reg>, CompileError> {
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
                    .map(|(x, y)| self.select(c, x, y))
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
                let at = self.pos.clone();
                self.position_vector(&at, ScalarKind::I32)
            }
            ExprKind::InstanceInGroup => {
                let mut lanes = vec![self.e.mov_imm(Class::B32, 0); 4];
                if let Some(g) = self.in_group {
                    lanes[0] = self
                        .e
                        .compute(Class::B32, |r| format!("cvt.u32.u64 {r}, {g}"));
                }
                lanes
            }
        })
    }

    /// `c ? a : b` for registers of one class.
    pub fn select(&mut self, c: Reg, a: Reg, b: Reg) -> Reg {
        if a.class == Class::Pred {
            // (c & a) | (!c & b)
            let x = self
                .e
                .compute(Class::Pred, |r| format!("and.pred {r}, {c}, {a}"));
            let y = self
                .e
                .compute(Class::Pred, |r| format!("and.pred {r}, !{c}, {b}"));
            return self
                .e
                .compute(Class::Pred, |r| format!("or.pred {r}, {x}, {y}"));
        }
        let ty = match a.class {
            Class::B64 => "b64",
            Class::F32 => "f32",
            Class::F64 => "f64",
            _ => "b32",
        };
        self.e
            .compute(a.class, |r| format!("selp.{ty} {r}, {a}, {b}, {c}"))
    }

    pub fn literal(&mut self, lit: Literal) -> Reg {
        match lit.kind {
            ScalarKind::Bool => self.pred_const(lit.bits != 0),
            ScalarKind::F32 => self
                .e
                .mov_imm(Class::F32, format!("0f{:08X}", lit.bits as u32)),
            ScalarKind::F64 => self.e.mov_imm(Class::F64, format!("0d{:016X}", lit.bits)),
            ScalarKind::I64 | ScalarKind::U64 => self.e.mov_imm(Class::B64, lit.bits),
            k => {
                // Narrow kinds are held extended from their width.
                let bits = 8 * k.size();
                let raw = lit.bits & ((1u64 << bits) - 1);
                let value = if k.is_signed() && raw >> (bits - 1) == 1 {
                    (raw | !((1u64 << bits) - 1)) as u32
                } else {
                    raw as u32
                };
                self.e.mov_imm(Class::B32, value)
            }
        }
    }

    /// The zero value of `ty`, as leaves.
    pub fn zeros(&mut self, ty: &Type) -> Vec<Reg> {
        crate::leaves::leaves(self.module, ty)
            .into_iter()
            .map(|leaf| self.zero(leaf.kind))
            .collect()
    }

    /// The current element of an input, iterator or reduction operand.
    fn input(&mut self, p: ParamId) -> Vec<Reg> {
        let ty = self.kernel.params[p.0 as usize].ty.clone();
        match self.bindings[p.0 as usize].clone() {
            // Inputs are never written by the kernel (aliased streams are copied first): the
            // read-only path lets ptxas move these loads ahead of stores.
            Binding::Element { addr } => self.load_value(&ty, addr, "global.nc", true),
            Binding::Resized { stream } => {
                let at = self.resized(&stream.shape);
                let index = self.element_index(stream.offset, &at, &stream.pitch);
                let addr = self.element_address(stream.base, index, stream.size);
                self.load_value(&ty, addr, "global.nc", true)
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
                    self.pos.clone()
                };
                self.iterator_value(&start, &end, &shape, &at)
            }
            Binding::Vars(values) | Binding::Values(values) => values,
            _ => self.zeros(&ty),
        }
    }

    /// Element `at` of an iterator: `start + ((end - start) * i) / n` per component, in `f32`.
    pub fn iterator_value(
        &mut self,
        start: &[Reg],
        end: &[Reg],
        shape: &[Reg],
        at: &[Reg],
    ) -> Vec<Reg> {
        let rank = shape.len();
        (0..start.len())
            .map(|c| {
                let axis = iterator_axis(rank, c);
                let (p, n) = (at[axis], shape[axis]);
                let i = self
                    .e
                    .compute(Class::F32, |r| format!("cvt.rn.f32.u64 {r}, {p}"));
                let n = self
                    .e
                    .compute(Class::F32, |r| format!("cvt.rn.f32.u64 {r}, {n}"));
                let (s, e) = (start[c], end[c]);
                let span = self
                    .e
                    .compute(Class::F32, |r| format!("sub.rn.f32 {r}, {e}, {s}"));
                let scaled = self
                    .e
                    .compute(Class::F32, |r| format!("mul.rn.f32 {r}, {span}, {i}"));
                let step = self
                    .e
                    .compute(Class::F32, |r| format!("div.rn.f32 {r}, {scaled}, {n}"));
                self.e
                    .compute(Class::F32, |r| format!("add.rn.f32 {r}, {s}, {step}"))
            })
            .collect()
    }

    /// The input position read at the current position through implicit resize:
    /// `floor(pos * n_in / n_out)` per axis.
    fn resized(&mut self, shape: &[Reg]) -> Vec<Reg> {
        let pos = self.pos.clone();
        let domain = self.domain.clone();
        pos.into_iter()
            .zip(shape)
            .zip(domain)
            .map(|((p, &n_in), n_out)| {
                let product = self
                    .e
                    .compute(Class::B64, |r| format!("mul.lo.u64 {r}, {p}, {n_in}"));
                self.e
                    .compute(Class::B64, |r| format!("div.u64 {r}, {product}, {n_out}"))
            })
            .collect()
    }

    /// The position `indexof(p)` reports.
    fn index_of(&mut self, p: ParamId) -> Vec<Reg> {
        match self.bindings[p.0 as usize].clone() {
            Binding::Resized { stream } => self.resized(&stream.shape),
            Binding::Iterator {
                shape,
                resized: true,
                ..
            } => self.resized(&shape),
            _ => self.pos.clone(),
        }
    }

    /// A position (slowest first) as a 4-vector of `kind`, fastest axis in `.x`.
    fn position_vector(&mut self, at: &[Reg], kind: ScalarKind) -> Vec<Reg> {
        (0..4)
            .map(
                |lane| match at.len().checked_sub(lane + 1).map(|axis| at[axis]) {
                    Some(p) if kind == ScalarKind::F32 => self
                        .e
                        .compute(Class::F32, |r| format!("cvt.rn.f32.u64 {r}, {p}")),
                    Some(p) => self
                        .e
                        .compute(Class::B32, |r| format!("cvt.u32.u64 {r}, {p}")),
                    None => self.zero(kind),
                },
            )
            .collect()
    }

    /// An index value as `s64`: integers as they are, floats by `floor(f + 0.25)`
    /// (saturating, NaN gives 0), `ulong`s above the `long` range saturate.
    pub fn index_value(&mut self, h: Handle<Expr>) -> Result<Reg, CompileError> {
        let kind = self.expr_kind(h);
        let v = self.scalar(h)?;
        Ok(match kind {
            ScalarKind::F32 | ScalarKind::F64 => {
                let t = if kind == ScalarKind::F32 {
                    "f32"
                } else {
                    "f64"
                };
                let quarter = if kind == ScalarKind::F32 {
                    "0f3E800000"
                } else {
                    "0d3FD0000000000000"
                };
                let shifted = self
                    .e
                    .compute(v.class, |r| format!("add.rn.{t} {r}, {v}, {quarter}"));
                // cvt.rmi: floor, saturating; NaN gives 0.
                self.e
                    .compute(Class::B64, |r| format!("cvt.rmi.s64.{t} {r}, {shifted}"))
            }
            ScalarKind::I64 => v,
            ScalarKind::U64 => {
                let negative = self
                    .e
                    .compute(Class::Pred, |r| format!("setp.lt.s64 {r}, {v}, 0"));
                let max = self.e.mov_imm(Class::B64, i64::MAX);
                self.select(negative, max, v)
            }
            ScalarKind::Bool => self
                .e
                .compute(Class::B64, |r| format!("selp.u64 {r}, 1, 0, {v}")),
            k if k.is_signed() => self
                .e
                .compute(Class::B64, |r| format!("cvt.s64.s32 {r}, {v}")),
            _ => self
                .e
                .compute(Class::B64, |r| format!("cvt.u64.u32 {r}, {v}")),
        })
    }

    /// `i` (signed) clamped to `[0, extent - 1]`.
    pub fn clamp_index(&mut self, i: Reg, extent: Reg) -> Reg {
        let low = self
            .e
            .compute(Class::B64, |r| format!("max.s64 {r}, {i}, 0"));
        let last = self
            .e
            .compute(Class::B64, |r| format!("add.s64 {r}, {extent}, -1"));
        self.e
            .compute(Class::B64, |r| format!("min.u64 {r}, {low}, {last}"))
    }

    /// The clamped element index of a gather (or of a scatter place read).
    pub fn clamped_element(
        &mut self,
        stream: &StreamRef,
        indices: &[Handle<Expr>],
    ) -> Result<Reg, CompileError> {
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
    ) -> Result<Vec<Reg>, CompileError> {
        let ty = self.kernel.params[param.0 as usize].ty.clone();
        let Binding::Array { stream } = self.bindings[param.0 as usize].clone() else {
            return Ok(self.zeros(&ty));
        };
        let index = self.clamped_element(&stream, indices)?;
        let addr = self.element_address(stream.base, index, stream.size);
        Ok(self.load_value(&ty, addr, "global.nc", true))
    }
}
