//! Expressions: each IR expression becomes the registers of its scalar leaves.

use super::{Binding, Lower};
use crate::leaf_walk::LeafOps;
use crate::lower::launch::{self, Launch};
use crate::ptx::emit::{Class, Reg};
use crate::ptx::CompileError;
use brook_ir::{
    BinaryOp, Expr, Handle, Kernel, Literal, MathFun, Module, ParamId, Place, ScalarKind, Type,
    UnaryOp,
};
use std::collections::HashMap;

impl<'a> LeafOps<'a> for Lower<'a> {
    type Leaf = Reg;
    type Error = CompileError;

    fn module(&self) -> &'a Module {
        self.module
    }

    fn kernel(&self) -> &'a Kernel {
        self.kernel
    }

    fn memo(&mut self) -> &mut HashMap<Handle<Expr>, Vec<Reg>> {
        &mut self.memo
    }

    fn unsupported(&self, h: Handle<Expr>, what: String) -> CompileError {
        Lower::unsupported(self, h, what)
    }

    fn literal(&mut self, lit: Literal) -> Reg {
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
    fn zeros(&mut self, ty: &Type) -> Vec<Reg> {
        crate::leaves::leaves(self.module, ty)
            .into_iter()
            .map(|leaf| self.zero(leaf.kind))
            .collect()
    }

    fn load_place(&mut self, place: &Place) -> Result<Vec<Reg>, CompileError> {
        Lower::load_place(self, place)
    }

    fn input(&mut self, p: ParamId) -> Vec<Reg> {
        launch::input(self, p)
    }

    fn constant(&mut self, p: ParamId) -> Option<Vec<Reg>> {
        launch::constant(self, p)
    }

    fn gather(
        &mut self,
        param: ParamId,
        indices: &[Handle<Expr>],
    ) -> Result<Vec<Reg>, CompileError> {
        launch::gather(self, param, indices)
    }

    /// An index value as `s64`: integers as they are, floats by `floor(f + 0.25)`
    /// (saturating, NaN gives 0), `ulong`s above the `long` range saturate.
    fn index_value(&mut self, h: Handle<Expr>) -> Result<Reg, CompileError> {
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

    fn index_constant(&mut self, value: u64) -> Reg {
        self.u64_imm(value)
    }

    /// `i` (signed) clamped to `[0, extent - 1]`.
    fn clamp_index(&mut self, i: Reg, extent: Reg) -> Reg {
        let low = self
            .e
            .compute(Class::B64, |r| format!("max.s64 {r}, {i}, 0"));
        let last = self
            .e
            .compute(Class::B64, |r| format!("add.s64 {r}, {extent}, -1"));
        self.e
            .compute(Class::B64, |r| format!("min.u64 {r}, {low}, {last}"))
    }

    fn element_address(&mut self, base: Reg, index: Reg, size: u32) -> Reg {
        Lower::element_address(self, base, index, size)
    }

    fn unary(&mut self, op: UnaryOp, kind: ScalarKind, v: Reg) -> Reg {
        Lower::unary(self, op, kind, v)
    }

    fn binary(&mut self, op: BinaryOp, kind: ScalarKind, a: Reg, b: Reg) -> Reg {
        Lower::binary(self, op, kind, a, b)
    }

    /// `c ? a : b` for registers of one class.
    fn select(&mut self, c: Reg, a: Reg, b: Reg) -> Reg {
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

    fn convert(&mut self, from: ScalarKind, to: ScalarKind, v: Reg) -> Reg {
        Lower::convert(self, from, to, v)
    }

    type Helper = &'static str;

    fn math_helper(&self, fun: MathFun, double: bool) -> Option<&'static str> {
        crate::ptx::helpers::math_helper(fun, double)
    }

    fn call_math_helper(&mut self, helper: &'static str, kind: ScalarKind, lane: &[Reg]) -> Reg {
        Lower::call_helper(self, helper, Class::of(kind), lane)
    }

    fn exact_math(&mut self, fun: MathFun, kind: ScalarKind, args: &[Vec<Reg>]) -> Vec<Reg> {
        Lower::exact_math(self, fun, kind, args)
    }

    fn index_of(&mut self, p: ParamId) -> Vec<Reg> {
        launch::index_of(self, p)
    }

    fn instance(&mut self) -> Vec<Reg> {
        launch::instance(self)
    }

    fn instance_in_group(&mut self) -> Vec<Reg> {
        let mut lanes = vec![self.e.mov_imm(Class::B32, 0); 4];
        if let Some(g) = self.in_group {
            lanes[0] = self
                .e
                .compute(Class::B32, |r| format!("cvt.u32.u64 {r}, {g}"));
        }
        lanes
    }
}

impl<'a> Launch<'a> for Lower<'a> {
    type Var = Reg;

    fn binding(&self, p: ParamId) -> Binding {
        self.bindings[p.0 as usize].clone()
    }

    fn read_var(&mut self, var: Reg) -> Reg {
        var
    }

    fn position(&mut self) -> Vec<Reg> {
        self.pos.clone()
    }

    fn domain(&self) -> Vec<Reg> {
        self.domain.clone()
    }

    /// Inputs are never written by the kernel (aliased streams are copied first): the
    /// read-only path lets ptxas move these loads ahead of stores.
    fn load_element(&mut self, ty: &Type, addr: Reg) -> Vec<Reg> {
        self.load_value(ty, addr, "global.nc", true)
    }

    fn element_index(&mut self, offset: Reg, at: &[Reg], pitch: &[Reg]) -> Reg {
        Lower::element_index(self, offset, at, pitch)
    }

    fn mul_index(&mut self, a: Reg, b: Reg) -> Reg {
        self.e
            .compute(Class::B64, |r| format!("mul.lo.u64 {r}, {a}, {b}"))
    }

    fn div_index(&mut self, a: Reg, b: Reg) -> Reg {
        self.e
            .compute(Class::B64, |r| format!("div.u64 {r}, {a}, {b}"))
    }
}
