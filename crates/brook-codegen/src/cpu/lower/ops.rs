//! Scalar operators and conversions, following `brook_ir::launch`'s arithmetic rules exactly:
//! integers wrap, integer division and remainder by zero give 0 (never a trap), shift counts
//! are taken modulo the width, float operations are single IEEE operations (never fused), and
//! float-to-integer conversions truncate and saturate with NaN giving 0.

use super::{Lower, PTR};
use crate::cpu::helpers::fmod_helper;
use crate::cpu::layout::clif_type;
use brook_ir::{BinaryOp, ScalarKind, UnaryOp};
use cranelift_codegen::ir::{
    condcodes::{FloatCC, IntCC},
    types, InstBuilder, Value,
};

impl Lower<'_, '_> {
    /// A bool from any integer: 0 or 1.
    fn normalize_bool(&mut self, v: Value) -> Value {
        self.b.ins().icmp_imm_s(IntCC::NotEqual, v, 0)
    }

    pub fn unary(&mut self, op: UnaryOp, kind: ScalarKind, v: Value) -> Value {
        match (op, kind) {
            (UnaryOp::Neg, k) if k.is_float() => self.b.ins().fneg(v),
            (UnaryOp::Neg, ScalarKind::Bool) => v,
            (UnaryOp::Neg, _) => self.b.ins().ineg(v),
            (UnaryOp::Not, _) => {
                let is_zero = self.b.ins().icmp_imm_s(IntCC::Equal, v, 0);
                is_zero
            }
            (UnaryOp::BitNot, ScalarKind::Bool) => self.iconst(types::I8, 1),
            (UnaryOp::BitNot, _) => self.b.ins().bnot(v),
        }
    }

    pub fn binary(&mut self, op: BinaryOp, kind: ScalarKind, a: Value, b: Value) -> Value {
        if kind.is_float() {
            return self.float_binary(op, kind, a, b);
        }
        let result = self.int_binary(op, kind, a, b);
        if kind == ScalarKind::Bool && !op.is_comparison() {
            self.normalize_bool(result)
        } else {
            result
        }
    }

    fn float_binary(&mut self, op: BinaryOp, kind: ScalarKind, a: Value, b: Value) -> Value {
        let cc = match op {
            BinaryOp::Add => return self.b.ins().fadd(a, b),
            BinaryOp::Sub => return self.b.ins().fsub(a, b),
            BinaryOp::Mul => return self.b.ins().fmul(a, b),
            BinaryOp::Div => return self.b.ins().fdiv(a, b),
            BinaryOp::Rem => {
                let helper = fmod_helper(kind == ScalarKind::F64);
                return self.call_helper(helper, &[a, b]);
            }
            BinaryOp::Eq => FloatCC::Equal,
            BinaryOp::Ne => FloatCC::NotEqual,
            BinaryOp::Lt => FloatCC::LessThan,
            BinaryOp::Le => FloatCC::LessThanOrEqual,
            BinaryOp::Gt => FloatCC::GreaterThan,
            BinaryOp::Ge => FloatCC::GreaterThanOrEqual,
            // Bitwise and logical operators never reach floats (the validator checks).
            _ => return a,
        };
        self.b.ins().fcmp(cc, a, b)
    }

    fn int_binary(&mut self, op: BinaryOp, kind: ScalarKind, a: Value, b: Value) -> Value {
        let signed = kind.is_signed();
        let ins = self.b.ins();
        match op {
            BinaryOp::Add => ins.iadd(a, b),
            BinaryOp::Sub => ins.isub(a, b),
            BinaryOp::Mul => ins.imul(a, b),
            BinaryOp::Div | BinaryOp::Rem => self.int_divide(op, kind, a, b),
            BinaryOp::Shl => ins.ishl(a, b),
            BinaryOp::Shr if signed => ins.sshr(a, b),
            BinaryOp::Shr => ins.ushr(a, b),
            BinaryOp::BitAnd | BinaryOp::LogicAnd => ins.band(a, b),
            BinaryOp::BitOr | BinaryOp::LogicOr => ins.bor(a, b),
            BinaryOp::BitXor => ins.bxor(a, b),
            BinaryOp::Eq => ins.icmp(IntCC::Equal, a, b),
            BinaryOp::Ne => ins.icmp(IntCC::NotEqual, a, b),
            BinaryOp::Lt if signed => ins.icmp(IntCC::SignedLessThan, a, b),
            BinaryOp::Lt => ins.icmp(IntCC::UnsignedLessThan, a, b),
            BinaryOp::Le if signed => ins.icmp(IntCC::SignedLessThanOrEqual, a, b),
            BinaryOp::Le => ins.icmp(IntCC::UnsignedLessThanOrEqual, a, b),
            BinaryOp::Gt if signed => ins.icmp(IntCC::SignedGreaterThan, a, b),
            BinaryOp::Gt => ins.icmp(IntCC::UnsignedGreaterThan, a, b),
            BinaryOp::Ge if signed => ins.icmp(IntCC::SignedGreaterThanOrEqual, a, b),
            BinaryOp::Ge => ins.icmp(IntCC::UnsignedGreaterThanOrEqual, a, b),
        }
    }

    /// Division and remainder that never trap: a zero divisor gives 0, and `MIN / -1` wraps to
    /// `MIN` (remainder 0). Narrow kinds are computed in 32 bits.
    fn int_divide(&mut self, op: BinaryOp, kind: ScalarKind, a: Value, b: Value) -> Value {
        let ty = clif_type(kind);
        let signed = kind.is_signed();
        let narrow = ty.bits() < 32;
        let (wa, wb) = if narrow {
            let ins = |l: &mut Self, v| {
                if signed {
                    l.b.ins().sextend(types::I32, v)
                } else {
                    l.b.ins().uextend(types::I32, v)
                }
            };
            (ins(self, a), ins(self, b))
        } else {
            (a, b)
        };
        let wide = if narrow { types::I32 } else { ty };
        let zero = self.iconst(wide, 0);
        let one = self.iconst(wide, 1);
        let divisor_zero = self.b.ins().icmp_imm_s(IntCC::Equal, wb, 0);
        let result = if signed {
            let minus_one = self.b.ins().icmp_imm_s(IntCC::Equal, wb, -1);
            let unsafe_divisor = self.b.ins().bor(divisor_zero, minus_one);
            let safe = self.b.ins().select(unsafe_divisor, one, wb);
            let (plain, by_minus_one) = if op == BinaryOp::Div {
                (self.b.ins().sdiv(wa, safe), self.b.ins().ineg(wa))
            } else {
                (self.b.ins().srem(wa, safe), zero)
            };
            let r = self.b.ins().select(minus_one, by_minus_one, plain);
            self.b.ins().select(divisor_zero, zero, r)
        } else {
            let safe = self.b.ins().select(divisor_zero, one, wb);
            let plain = if op == BinaryOp::Div {
                self.b.ins().udiv(wa, safe)
            } else {
                self.b.ins().urem(wa, safe)
            };
            self.b.ins().select(divisor_zero, zero, plain)
        };
        if narrow {
            self.b.ins().ireduce(ty, result)
        } else {
            result
        }
    }

    /// Component conversion from `from` to `to` (see `brook_ir::ExprKind::Convert`).
    pub fn convert(&mut self, from: ScalarKind, to: ScalarKind, v: Value) -> Value {
        if from == to {
            return v;
        }
        if to == ScalarKind::Bool {
            return match from {
                ScalarKind::F32 => {
                    let zero = self.b.ins().f32const(0.0);
                    self.b.ins().fcmp(FloatCC::NotEqual, v, zero)
                }
                ScalarKind::F64 => {
                    let zero = self.b.ins().f64const(0.0);
                    self.b.ins().fcmp(FloatCC::NotEqual, v, zero)
                }
                _ => self.normalize_bool(v),
            };
        }
        match (from.is_float(), to.is_float()) {
            (true, true) if to == ScalarKind::F64 => self.b.ins().fpromote(types::F64, v),
            (true, true) => self.b.ins().fdemote(types::F32, v),
            (true, false) => self.float_to_int(to, v),
            (false, true) => self.int_to_float(from, to, v),
            (false, false) => self.int_to_int(from, to, v),
        }
    }

    fn int_to_int(&mut self, from: ScalarKind, to: ScalarKind, v: Value) -> Value {
        let (a, b) = (clif_type(from), clif_type(to));
        if a.bits() == b.bits() {
            v
        } else if a.bits() > b.bits() {
            self.b.ins().ireduce(b, v)
        } else if from.is_signed() {
            self.b.ins().sextend(b, v)
        } else {
            self.b.ins().uextend(b, v)
        }
    }

    fn int_to_float(&mut self, from: ScalarKind, to: ScalarKind, v: Value) -> Value {
        let ty = clif_type(to);
        if from == ScalarKind::U64 {
            return self.b.ins().fcvt_from_uint(ty, v);
        }
        // Every other kind fits a signed 64-bit integer exactly.
        let wide = self.int_to_int(from, ScalarKind::I64, v);
        self.b.ins().fcvt_from_sint(ty, wide)
    }

    /// Truncating, saturating float-to-integer conversion (NaN gives 0).
    fn float_to_int(&mut self, to: ScalarKind, v: Value) -> Value {
        let ty = clif_type(to);
        match to {
            ScalarKind::I64 | ScalarKind::I32 => self.b.ins().fcvt_to_sint_sat(ty, v),
            ScalarKind::U64 | ScalarKind::U32 => self.b.ins().fcvt_to_uint_sat(ty, v),
            _ => {
                let (wide, low, high) = match to {
                    ScalarKind::I8 => (self.b.ins().fcvt_to_sint_sat(PTR, v), -128, 127),
                    ScalarKind::I16 => (self.b.ins().fcvt_to_sint_sat(PTR, v), -32768, 32767),
                    ScalarKind::U8 => (self.b.ins().fcvt_to_sint_sat(PTR, v), 0, 255),
                    _ => (self.b.ins().fcvt_to_sint_sat(PTR, v), 0, 65535),
                };
                let low = self.iconst(PTR, low);
                let high = self.iconst(PTR, high);
                let clamped = self.b.ins().smax(wide, low);
                let clamped = self.b.ins().smin(clamped, high);
                self.b.ins().ireduce(ty, clamped)
            }
        }
    }
}
