//! The intrinsic library (seed 003 section 5), component-wise unless the function says
//! otherwise. Exact functions (`sqrt`, `floor`, `min`, `dot`, ...) are inline instructions with
//! the interpreter's operation order; transcendental ones call the helpers of
//! [`crate::cpu::helpers`].

use super::Lower;
use crate::cpu::helpers::Helper;
use brook_ir::{BinaryOp, MathFun, ScalarKind};
use cranelift_codegen::ir::{
    condcodes::{FloatCC, IntCC},
    InstBuilder, Value,
};

impl Lower<'_, '_> {
    pub fn call_helper(&mut self, helper: Helper, args: &[Value]) -> Value {
        let sig = self.helper_sig(helper.sig);
        let callee = self.iconst(super::PTR, helper.address as i64);
        let call = self.b.ins().call_indirect(sig, callee, args);
        self.b.inst_results(call)[0]
    }

    /// C99 `round` by the steps of `brook_ir::launch::round_half_away`.
    fn round_half_away(&mut self, kind: ScalarKind, x: Value) -> Value {
        let t = self.b.ins().trunc(x);
        let fraction = self.b.ins().fsub(x, t);
        let magnitude = self.b.ins().fabs(fraction);
        let half = self.float_const(kind, 0.5);
        let away = self
            .b
            .ins()
            .fcmp(FloatCC::GreaterThanOrEqual, magnitude, half);
        let one = self.float_const(kind, 1.0);
        let step = self.b.ins().fcopysign(one, x);
        let stepped = self.b.ins().fadd(t, step);
        self.b.ins().select(away, stepped, t)
    }

    pub fn exact_math(&mut self, fun: MathFun, kind: ScalarKind, v: &[Vec<Value>]) -> Vec<Value> {
        let a = &v[0];
        let lanes = |l: &mut Self, f: &mut dyn FnMut(&mut Self, usize) -> Value| -> Vec<Value> {
            (0..a.len()).map(|i| f(l, i)).collect()
        };
        match fun {
            MathFun::Abs => lanes(self, &mut |l, i| l.abs(kind, a[i])),
            MathFun::Ceil => lanes(self, &mut |l, i| l.b.ins().ceil(a[i])),
            MathFun::Floor => lanes(self, &mut |l, i| l.b.ins().floor(a[i])),
            MathFun::Sqrt => lanes(self, &mut |l, i| l.b.ins().sqrt(a[i])),
            MathFun::Rsqrt => lanes(self, &mut |l, i| {
                let root = l.b.ins().sqrt(a[i]);
                let one = l.float_const(kind, 1.0);
                l.b.ins().fdiv(one, root)
            }),
            MathFun::Round => lanes(self, &mut |l, i| l.round_half_away(kind, a[i])),
            MathFun::Frac => lanes(self, &mut |l, i| {
                let floor = l.b.ins().floor(a[i]);
                l.b.ins().fsub(a[i], floor)
            }),
            MathFun::Fmod => lanes(self, &mut |l, i| {
                l.binary(BinaryOp::Rem, kind, a[i], v[1][i])
            }),
            MathFun::Max => lanes(self, &mut |l, i| l.min_max(kind, a[i], v[1][i], true)),
            MathFun::Min => lanes(self, &mut |l, i| l.min_max(kind, a[i], v[1][i], false)),
            MathFun::Clamp => lanes(self, &mut |l, i| {
                let low = l.min_max(kind, a[i], v[1][i], true);
                l.min_max(kind, low, v[2][i], false)
            }),
            MathFun::Lerp => lanes(self, &mut |l, i| {
                let diff = l.b.ins().fsub(v[1][i], a[i]);
                let scaled = l.b.ins().fmul(diff, v[2][i]);
                l.b.ins().fadd(a[i], scaled)
            }),
            MathFun::Fma => lanes(self, &mut |l, i| l.b.ins().fma(a[i], v[1][i], v[2][i])),
            MathFun::Sign => lanes(self, &mut |l, i| l.sign(kind, a[i])),
            MathFun::IsNan => lanes(self, &mut |l, i| {
                l.b.ins().fcmp(FloatCC::Unordered, a[i], a[i])
            }),
            MathFun::IsInf | MathFun::IsFinite => lanes(self, &mut |l, i| {
                let magnitude = l.b.ins().fabs(a[i]);
                let inf = l.float_const(kind, f64::INFINITY);
                let cc = if fun == MathFun::IsInf {
                    FloatCC::Equal
                } else {
                    FloatCC::LessThan
                };
                l.b.ins().fcmp(cc, magnitude, inf)
            }),
            MathFun::Dot => vec![self.dot(kind, a, &v[1])],
            MathFun::Length => vec![self.length(kind, a)],
            MathFun::Distance => {
                let diff: Vec<Value> = (0..a.len())
                    .map(|i| self.b.ins().fsub(a[i], v[1][i]))
                    .collect();
                vec![self.length(kind, &diff)]
            }
            MathFun::Normalize => {
                let len = self.length(kind, a);
                lanes(self, &mut |l, i| l.b.ins().fdiv(a[i], len))
            }
            MathFun::Cross => {
                let b = &v[1];
                let term = |l: &mut Self, i: usize, j: usize| {
                    let left = l.b.ins().fmul(a[i], b[j]);
                    let right = l.b.ins().fmul(a[j], b[i]);
                    l.b.ins().fsub(left, right)
                };
                vec![term(self, 1, 2), term(self, 2, 0), term(self, 0, 1)]
            }
            // Transcendental functions are helper calls (handled by the caller).
            _ => a.clone(),
        }
    }

    fn float_const(&mut self, kind: ScalarKind, value: f64) -> Value {
        if kind == ScalarKind::F64 {
            self.b.ins().f64const(value)
        } else {
            self.b.ins().f32const(value as f32)
        }
    }

    fn abs(&mut self, kind: ScalarKind, x: Value) -> Value {
        if kind.is_float() {
            return self.b.ins().fabs(x);
        }
        if !kind.is_signed() {
            return x;
        }
        let negative = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, x, 0);
        let negated = self.b.ins().ineg(x);
        self.b.ins().select(negative, negated, x)
    }

    /// `max` (`max == true`) or `min`. For floats: a NaN operand gives the other operand (the
    /// second if both are NaN), and `-0 < +0`; integers compare by their kind's order.
    fn min_max(&mut self, kind: ScalarKind, a: Value, b: Value, max: bool) -> Value {
        if kind.is_float() {
            let ieee = if max {
                self.b.ins().fmax(a, b)
            } else {
                self.b.ins().fmin(a, b)
            };
            let b_nan = self.b.ins().fcmp(FloatCC::Unordered, b, b);
            let a_nan = self.b.ins().fcmp(FloatCC::Unordered, a, a);
            let r = self.b.ins().select(b_nan, a, ieee);
            return self.b.ins().select(a_nan, b, r);
        }
        let cc = match (kind.is_signed(), max) {
            (true, true) => IntCC::SignedGreaterThan,
            (true, false) => IntCC::SignedLessThan,
            (false, true) => IntCC::UnsignedGreaterThan,
            (false, false) => IntCC::UnsignedLessThan,
        };
        let a_wins = self.b.ins().icmp(cc, a, b);
        self.b.ins().select(a_wins, a, b)
    }

    /// -1, 0 or 1 of the kind; float zeros keep their sign and NaN stays NaN.
    fn sign(&mut self, kind: ScalarKind, x: Value) -> Value {
        let ty = crate::cpu::layout::clif_type(kind);
        if kind.is_float() {
            let zero = self.float_const(kind, 0.0);
            let one = self.float_const(kind, 1.0);
            let minus_one = self.float_const(kind, -1.0);
            let same = self.b.ins().fmul(x, zero);
            let negative = self.b.ins().fcmp(FloatCC::LessThan, x, zero);
            let positive = self.b.ins().fcmp(FloatCC::GreaterThan, x, zero);
            let r = self.b.ins().select(negative, minus_one, same);
            return self.b.ins().select(positive, one, r);
        }
        let nonzero = self.b.ins().icmp_imm_s(IntCC::NotEqual, x, 0);
        let one = if ty == cranelift_codegen::ir::types::I8 {
            nonzero
        } else {
            self.b.ins().uextend(ty, nonzero)
        };
        if !kind.is_signed() {
            return one;
        }
        let negative = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, x, 0);
        let minus_one = self.iconst(ty, -1);
        self.b.ins().select(negative, minus_one, one)
    }

    /// The sum of lane products, left to right, without fused operations.
    fn dot(&mut self, kind: ScalarKind, a: &[Value], b: &[Value]) -> Value {
        let mut sum = self.binary(BinaryOp::Mul, kind, a[0], b[0]);
        for i in 1..a.len() {
            let product = self.binary(BinaryOp::Mul, kind, a[i], b[i]);
            sum = self.binary(BinaryOp::Add, kind, sum, product);
        }
        sum
    }

    fn length(&mut self, kind: ScalarKind, a: &[Value]) -> Value {
        let d = self.dot(kind, a, a);
        self.b.ins().sqrt(d)
    }
}
