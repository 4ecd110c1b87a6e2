//! The intrinsic library (seed 003 section 5), component-wise unless the function says
//! otherwise. Exact functions (`sqrt`, `floor`, `min`, `dot`, ...) are inline instructions in
//! the interpreter's operation order; transcendental functions and `fmod` call the helper
//! functions of [`crate::ptx::helpers`].

use super::Lower;
use crate::lower::Target;
use crate::ptx::emit::{op_type, Class, Reg};
use crate::ptx::helpers::FMOD_F64;
use brook_ir::{BinaryOp, MathFun, ScalarKind};

impl Lower<'_> {
    /// Calls the helper function `name` (registering it for the module).
    pub fn call_helper(&mut self, name: &'static str, class: Class, args: &[Reg]) -> Reg {
        if !self.helpers.contains(&name) {
            self.helpers.push(name);
        }
        let r = self.e.reg(class);
        let list = args
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        self.e.op(format!("call ({r}), {name}, ({list})"));
        r
    }

    /// `fmod` (exact): computed in `f64` for both kinds, where every `f32` result is exact.
    pub fn fmod(&mut self, kind: ScalarKind, a: Reg, b: Reg) -> Reg {
        if kind == ScalarKind::F64 {
            return self.call_helper(FMOD_F64, Class::F64, &[a, b]);
        }
        let wa = self
            .e
            .compute(Class::F64, |r| format!("cvt.f64.f32 {r}, {a}"));
        let wb = self
            .e
            .compute(Class::F64, |r| format!("cvt.f64.f32 {r}, {b}"));
        let m = self.call_helper(FMOD_F64, Class::F64, &[wa, wb]);
        self.e
            .compute(Class::F32, |r| format!("cvt.rn.f32.f64 {r}, {m}"))
    }

    fn float_const(&mut self, kind: ScalarKind, value: f64) -> Reg {
        if kind == ScalarKind::F64 {
            self.e
                .mov_imm(Class::F64, format!("0d{:016X}", value.to_bits()))
        } else {
            self.e
                .mov_imm(Class::F32, format!("0f{:08X}", (value as f32).to_bits()))
        }
    }

    /// One instruction `name.<type>` on the operands, giving a value of `a`'s class.
    fn inst(&mut self, name: &str, kind: ScalarKind, operands: &[Reg]) -> Reg {
        let t = op_type(kind);
        let list = operands
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        let types = if name.starts_with("cvt.") {
            format!("{t}.{t}")
        } else {
            t.to_string()
        };
        self.e
            .compute(Class::of(kind), |r| format!("{name}.{types} {r}, {list}"))
    }

    pub fn exact_math(&mut self, fun: MathFun, kind: ScalarKind, v: &[Vec<Reg>]) -> Vec<Reg> {
        let a = v[0].clone();
        let n = a.len();
        let mut out = Vec::with_capacity(n);
        match fun {
            MathFun::Dot => return vec![self.dot(kind, &a, &v[1])],
            MathFun::Length => return vec![self.length(kind, &a)],
            MathFun::Distance => {
                let diff: Vec<Reg> = (0..n)
                    .map(|i| self.binary(BinaryOp::Sub, kind, a[i], v[1][i]))
                    .collect();
                return vec![self.length(kind, &diff)];
            }
            MathFun::Normalize => {
                let len = self.length(kind, &a);
                return (0..n)
                    .map(|i| self.binary(BinaryOp::Div, kind, a[i], len))
                    .collect();
            }
            MathFun::Cross => {
                let b = &v[1];
                let term = |l: &mut Self, i: usize, j: usize| {
                    let left = l.binary(BinaryOp::Mul, kind, a[i], b[j]);
                    let right = l.binary(BinaryOp::Mul, kind, a[j], b[i]);
                    l.binary(BinaryOp::Sub, kind, left, right)
                };
                return vec![term(self, 1, 2), term(self, 2, 0), term(self, 0, 1)];
            }
            _ => {}
        }
        for i in 0..n {
            let x = a[i];
            let r = match fun {
                MathFun::Abs => self.abs(kind, x),
                MathFun::Ceil => self.inst("cvt.rpi", kind, &[x]),
                MathFun::Floor => self.inst("cvt.rmi", kind, &[x]),
                MathFun::Sqrt => self.inst("sqrt.rn", kind, &[x]),
                MathFun::Rsqrt => {
                    let root = self.inst("sqrt.rn", kind, &[x]);
                    let one = self.float_const(kind, 1.0);
                    self.binary(BinaryOp::Div, kind, one, root)
                }
                MathFun::Round => self.round_half_away(kind, x),
                MathFun::Frac => {
                    let floor = self.inst("cvt.rmi", kind, &[x]);
                    self.binary(BinaryOp::Sub, kind, x, floor)
                }
                MathFun::Fmod => self.fmod(kind, x, v[1][i]),
                MathFun::Max => self.min_max(kind, x, v[1][i], true),
                MathFun::Min => self.min_max(kind, x, v[1][i], false),
                MathFun::Clamp => {
                    let low = self.min_max(kind, x, v[1][i], true);
                    self.min_max(kind, low, v[2][i], false)
                }
                MathFun::Lerp => {
                    let diff = self.binary(BinaryOp::Sub, kind, v[1][i], x);
                    let scaled = self.binary(BinaryOp::Mul, kind, diff, v[2][i]);
                    self.binary(BinaryOp::Add, kind, x, scaled)
                }
                MathFun::Fma => self.inst("fma.rn", kind, &[x, v[1][i], v[2][i]]),
                MathFun::Sign => self.sign(kind, x),
                MathFun::IsNan => {
                    let t = op_type(kind);
                    self.e
                        .compute(Class::Pred, |r| format!("setp.nan.{t} {r}, {x}, {x}"))
                }
                MathFun::IsInf | MathFun::IsFinite => {
                    let t = op_type(kind);
                    let magnitude = self.inst("abs", kind, &[x]);
                    let inf = self.float_const(kind, f64::INFINITY);
                    let cc = if fun == MathFun::IsInf { "eq" } else { "lt" };
                    self.e.compute(Class::Pred, |r| {
                        format!("setp.{cc}.{t} {r}, {magnitude}, {inf}")
                    })
                }
                // Transcendental functions are helper calls (handled by the caller).
                _ => x,
            };
            out.push(r);
        }
        out
    }

    /// C99 `round` by the steps of `brook_ir::launch::round_half_away`.
    fn round_half_away(&mut self, kind: ScalarKind, x: Reg) -> Reg {
        let t = op_type(kind);
        let truncated = self.inst("cvt.rzi", kind, &[x]);
        let fraction = self.binary(BinaryOp::Sub, kind, x, truncated);
        let magnitude = self.inst("abs", kind, &[fraction]);
        let half = self.float_const(kind, 0.5);
        let away = self.e.compute(Class::Pred, |r| {
            format!("setp.ge.{t} {r}, {magnitude}, {half}")
        });
        let one = self.float_const(kind, 1.0);
        let step = self
            .e
            .compute(x.class, |r| format!("copysign.{t} {r}, {x}, {one}"));
        let stepped = self.binary(BinaryOp::Add, kind, truncated, step);
        self.e.compute(x.class, |r| {
            format!("selp.{t} {r}, {stepped}, {truncated}, {away}")
        })
    }

    fn abs(&mut self, kind: ScalarKind, x: Reg) -> Reg {
        if kind.is_float() {
            return self.inst("abs", kind, &[x]);
        }
        if !kind.is_signed() {
            return x;
        }
        // (x ^ m) - m with m = x >> (bits - 1), so that abs(MIN) wraps to MIN. Not PTX `abs`:
        // ptxas takes its result to be non-negative and turned a later signed remainder of
        // abs(MIN) into an unsigned one (found by brook-fuzz).
        let (bits, top) = if x.class == Class::B64 {
            ("b64", 63)
        } else {
            ("b32", 31)
        };
        let t = op_type(kind);
        let mask = self
            .e
            .compute(x.class, |r| format!("shr.{t} {r}, {x}, {top}"));
        let flipped = self
            .e
            .compute(x.class, |r| format!("xor.{bits} {r}, {x}, {mask}"));
        let a = self
            .e
            .compute(x.class, |r| format!("sub.{t} {r}, {flipped}, {mask}"));
        self.normalize(kind, a)
    }

    /// `max` (`max == true`) or `min`. For floats: a NaN operand gives the other operand (the
    /// second if both are NaN), and `-0 < +0`; integers compare by their kind's order.
    fn min_max(&mut self, kind: ScalarKind, a: Reg, b: Reg, max: bool) -> Reg {
        if !kind.is_float() {
            // A compare and a select, not PTX `min`/`max`: ptxas miscompiled nested integer
            // min/max over a negation on sm_90 (`min(0, min(a, -b))` gave -2^30; found by
            // brook-fuzz).
            let t = op_type(kind);
            let bits = if a.class == Class::B64 { "b64" } else { "b32" };
            let cmp = if max { "gt" } else { "lt" };
            let first = self
                .e
                .compute(Class::Pred, |r| format!("setp.{cmp}.{t} {r}, {a}, {b}"));
            return self
                .e
                .compute(a.class, |r| format!("selp.{bits} {r}, {a}, {b}, {first}"));
        }
        let t = op_type(kind);
        let (bits_class, bits) = if kind == ScalarKind::F64 {
            (Class::B64, "b64")
        } else {
            (Class::B32, "b32")
        };
        // Equal operands: their bits and-ed (max: +0 wins) or or-ed (min: -0 wins).
        let ai = self
            .e
            .compute(bits_class, |r| format!("mov.{bits} {r}, {a}"));
        let bi = self
            .e
            .compute(bits_class, |r| format!("mov.{bits} {r}, {b}"));
        let join = if max { "and" } else { "or" };
        let tie_bits = self
            .e
            .compute(bits_class, |r| format!("{join}.{bits} {r}, {ai}, {bi}"));
        let tie = self
            .e
            .compute(a.class, |r| format!("mov.{bits} {r}, {tie_bits}"));
        let (a_wins, b_wins) = if max { ("gt", "lt") } else { ("lt", "gt") };
        let pa = self
            .e
            .compute(Class::Pred, |r| format!("setp.{a_wins}.{t} {r}, {a}, {b}"));
        let pb = self
            .e
            .compute(Class::Pred, |r| format!("setp.{b_wins}.{t} {r}, {a}, {b}"));
        let r = self.select(kind, pa, a, tie);
        let r = self.select(kind, pb, b, r);
        let b_nan = self
            .e
            .compute(Class::Pred, |r| format!("setp.nan.{t} {r}, {b}, {b}"));
        let a_nan = self
            .e
            .compute(Class::Pred, |r| format!("setp.nan.{t} {r}, {a}, {a}"));
        let r = self.select(kind, b_nan, a, r);
        self.select(kind, a_nan, b, r)
    }

    /// -1, 0 or 1 of the kind; float zeros keep their sign and NaN stays NaN.
    fn sign(&mut self, kind: ScalarKind, x: Reg) -> Reg {
        let t = op_type(kind);
        if kind.is_float() {
            let zero = self.float_const(kind, 0.0);
            let one = self.float_const(kind, 1.0);
            let minus_one = self.float_const(kind, -1.0);
            let same = self.binary(BinaryOp::Mul, kind, x, zero);
            let negative = self
                .e
                .compute(Class::Pred, |r| format!("setp.lt.{t} {r}, {x}, {zero}"));
            let positive = self
                .e
                .compute(Class::Pred, |r| format!("setp.gt.{t} {r}, {x}, {zero}"));
            let r = self.select(kind, negative, minus_one, same);
            return self.select(kind, positive, one, r);
        }
        let class = Class::of(kind);
        let bits = if class == Class::B64 { "b64" } else { "b32" };
        let nonzero = self
            .e
            .compute(Class::Pred, |r| format!("setp.ne.{t} {r}, {x}, 0"));
        let one = self
            .e
            .compute(class, |r| format!("selp.{bits} {r}, 1, 0, {nonzero}"));
        if !kind.is_signed() {
            return one;
        }
        let negative = self
            .e
            .compute(Class::Pred, |r| format!("setp.lt.{t} {r}, {x}, 0"));
        self.e
            .compute(class, |r| format!("selp.{bits} {r}, -1, {one}, {negative}"))
    }

    /// The sum of lane products, left to right, without fused operations.
    fn dot(&mut self, kind: ScalarKind, a: &[Reg], b: &[Reg]) -> Reg {
        let mut sum = self.binary(BinaryOp::Mul, kind, a[0], b[0]);
        for i in 1..a.len() {
            let product = self.binary(BinaryOp::Mul, kind, a[i], b[i]);
            sum = self.binary(BinaryOp::Add, kind, sum, product);
        }
        sum
    }

    fn length(&mut self, kind: ScalarKind, a: &[Reg]) -> Reg {
        let d = self.dot(kind, a, a);
        self.inst("sqrt.rn", kind, &[d])
    }
}
