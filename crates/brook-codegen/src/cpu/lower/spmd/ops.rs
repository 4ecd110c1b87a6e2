//! A gang's operators, conversions and math: one vector instruction per 4 lanes where one
//! computes exactly the scalar lowering's result in every lane (IEEE `+ - * /`, `sqrt`,
//! comparisons, wrapping integer arithmetic, saturating conversions, masks), else the scalar
//! lowering's operation lane by lane ([`Spmd::per_lane`]).

use super::lanes::{map_parts, uniform_values, zip_parts};
use super::{packs, Leaf, Spmd, MAX_PARTS};
use crate::cpu::helpers::Helper;
use crate::lower::Target;
use brook_ir::{BinaryOp, MathFun, ScalarKind, UnaryOp};
use cranelift_codegen::ir::{
    condcodes::{FloatCC, IntCC},
    types, InstBuilder, MemFlagsData, Value,
};

use ScalarKind::{Bool, F32, I32, U32};

impl Spmd<'_, '_, '_> {
    pub fn gang_unary(&mut self, op: UnaryOp, kind: ScalarKind, v: Leaf) -> Leaf {
        if let Leaf::Uniform(x) = v {
            return Leaf::Uniform(self.s.unary(op, kind, x));
        }
        let parts = self.parts();
        let vector = match (op, kind) {
            (UnaryOp::Neg, F32) => Some((F32, false)),
            (UnaryOp::Neg, I32 | U32) | (UnaryOp::BitNot, I32 | U32) => Some((kind, false)),
            (UnaryOp::Neg, Bool) => return v,
            (UnaryOp::Not, Bool | I32 | U32) => Some((Bool, true)),
            _ => None,
        };
        let Some((out, test_zero)) = vector else {
            let result = if op == UnaryOp::Not { Bool } else { kind };
            return self.per_lane(&[(v, kind)], result, |s, x| s.unary(op, kind, x[0]));
        };
        let a = self.vectors(v, kind);
        let zero = self.zero_vector(I32);
        let b = &mut self.s.b;
        let r = map_parts(parts, a, |x| match op {
            UnaryOp::Neg if kind == F32 => b.ins().fneg(x),
            UnaryOp::Neg => b.ins().ineg(x),
            UnaryOp::Not if test_zero && kind != Bool => b.ins().icmp(IntCC::Equal, x, zero),
            _ => b.ins().bnot(x),
        });
        debug_assert!(packs(out));
        Leaf::Packed(r)
    }

    pub fn gang_binary(&mut self, op: BinaryOp, kind: ScalarKind, a: Leaf, b: Leaf) -> Leaf {
        if let (Leaf::Uniform(x), Leaf::Uniform(y)) = (a, b) {
            return Leaf::Uniform(self.s.binary(op, kind, x, y));
        }
        if matches!(kind, ScalarKind::I64 | ScalarKind::U64) {
            if let Some(linear) = self.linear_binary(op, a, b) {
                return linear;
            }
        }
        if let Some(result) = self.power_of_two_division(op, kind, a, b) {
            return result;
        }
        let out = if op.is_comparison() { Bool } else { kind };
        if !vector_binary(op, kind, b) {
            return self.per_lane(&[(a, kind), (b, kind)], out, |s, v| {
                s.binary(op, kind, v[0], v[1])
            });
        }
        let parts = self.parts();
        let x = self.vectors(a, kind);
        if matches!(op, BinaryOp::Shl | BinaryOp::Shr) {
            let Leaf::Uniform(amount) = b else {
                unreachable!("vector shifts take a uniform amount")
            };
            let signed = kind.is_signed();
            let ins = &mut self.s.b;
            return Leaf::Packed(map_parts(parts, x, |v| match op {
                BinaryOp::Shl => ins.ins().ishl(v, amount),
                _ if signed => ins.ins().sshr(v, amount),
                _ => ins.ins().ushr(v, amount),
            }));
        }
        let y = self.vectors(b, kind);
        let ins = &mut self.s.b;
        Leaf::Packed(zip_parts(parts, x, y, |v, w| match (kind, op) {
            (F32, BinaryOp::Add) => ins.ins().fadd(v, w),
            (F32, BinaryOp::Sub) => ins.ins().fsub(v, w),
            (F32, BinaryOp::Mul) => ins.ins().fmul(v, w),
            (F32, BinaryOp::Div) => ins.ins().fdiv(v, w),
            (F32, _) => ins.ins().fcmp(float_cc(op), v, w),
            (Bool, BinaryOp::Eq) => ins.ins().icmp(IntCC::Equal, v, w),
            (Bool, BinaryOp::Ne) => ins.ins().bxor(v, w),
            (_, BinaryOp::Add) => ins.ins().iadd(v, w),
            (_, BinaryOp::Sub) => ins.ins().isub(v, w),
            (_, BinaryOp::Mul) => ins.ins().imul(v, w),
            (_, BinaryOp::BitAnd | BinaryOp::LogicAnd) => ins.ins().band(v, w),
            (_, BinaryOp::BitOr | BinaryOp::LogicOr) => ins.ins().bor(v, w),
            (_, BinaryOp::BitXor) => ins.ins().bxor(v, w),
            _ => ins.ins().icmp(int_cc(op, kind == ScalarKind::I32), v, w),
        }))
    }

    /// `a / 2^k` and `a % 2^k` of `int`/`uint` lanes by a literal power of two, as vector
    /// shifts and masks: truncating toward zero, the remainder taking the dividend's sign,
    /// as the scalar division does (no vector instruction divides).
    fn power_of_two_division(
        &mut self,
        op: BinaryOp,
        kind: ScalarKind,
        a: Leaf,
        b: Leaf,
    ) -> Option<Leaf> {
        let (BinaryOp::Div | BinaryOp::Rem, I32 | U32, Leaf::Uniform(d)) = (op, kind, b) else {
            return None;
        };
        let divisor = self.constant_of(d)? as u32;
        let signed = kind == I32;
        if !divisor.is_power_of_two() || (signed && divisor > i32::MAX as u32) {
            return None;
        }
        let k = i64::from(divisor.trailing_zeros());
        let parts = self.parts();
        let x = self.vectors(a, kind);
        if k == 0 {
            // By 1: the dividend, remainder 0.
            return Some(match op {
                BinaryOp::Div => Leaf::Packed(x),
                _ => Leaf::Packed([self.zero_vector(I32); MAX_PARTS]),
            });
        }
        let ins = &mut self.s.b;
        Some(Leaf::Packed(map_parts(parts, x, |v| {
            // The quotient toward zero: a negative dividend is biased by 2^k - 1 first.
            let quotient = if signed {
                let sign = ins.ins().sshr_imm_u(v, 31);
                let bias = ins.ins().ushr_imm_u(sign, 32 - k);
                let biased = ins.ins().iadd(v, bias);
                ins.ins().sshr_imm_u(biased, k)
            } else {
                ins.ins().ushr_imm_u(v, k)
            };
            match op {
                BinaryOp::Div => quotient,
                _ => {
                    let multiple = ins.ins().ishl_imm_u(quotient, k);
                    ins.ins().isub(v, multiple)
                }
            }
        })))
    }

    /// Index arithmetic that keeps a [`Leaf::Linear`] linear: `+` and `*` with uniform values.
    fn linear_binary(&mut self, op: BinaryOp, a: Leaf, b: Leaf) -> Option<Leaf> {
        let b_ = &mut self.s.b;
        match (op, a, b) {
            (BinaryOp::Add, Leaf::Linear { base, step }, Leaf::Uniform(u))
            | (BinaryOp::Add, Leaf::Uniform(u), Leaf::Linear { base, step }) => {
                Some(Leaf::Linear {
                    base: b_.ins().iadd(base, u),
                    step,
                })
            }
            (BinaryOp::Add, Leaf::Linear { base, step }, Leaf::Linear { base: c, step: d }) => {
                Some(Leaf::Linear {
                    base: b_.ins().iadd(base, c),
                    step: b_.ins().iadd(step, d),
                })
            }
            (BinaryOp::Mul, Leaf::Linear { base, step }, Leaf::Uniform(u))
            | (BinaryOp::Mul, Leaf::Uniform(u), Leaf::Linear { base, step }) => {
                Some(Leaf::Linear {
                    base: b_.ins().imul(base, u),
                    step: b_.ins().imul(step, u),
                })
            }
            _ => None,
        }
    }

    /// `c ? a : b` leaf by leaf, for values of `kind`.
    pub fn gang_select(&mut self, kind: ScalarKind, c: Leaf, a: Leaf, b: Leaf) -> Leaf {
        if let Leaf::Uniform(cond) = c {
            if let (Leaf::Uniform(x), Leaf::Uniform(y)) = (a, b) {
                return Leaf::Uniform(self.s.b.ins().select(cond, x, y));
            }
            let (x, y) = (self.varying(a, kind), self.varying(b, kind));
            return match (x, y) {
                (Leaf::Packed(x), Leaf::Packed(y)) => {
                    let ins = &mut self.s.b;
                    Leaf::Packed(zip_parts(self.gang.parts, x, y, |v, w| {
                        ins.ins().select(cond, v, w)
                    }))
                }
                _ => self.per_lane(&[(x, kind), (y, kind)], kind, |s, v| {
                    s.b.ins().select(cond, v[0], v[1])
                }),
            };
        }
        if !packs(kind) {
            return self.per_lane(&[(c, Bool), (a, kind), (b, kind)], kind, |s, v| {
                s.b.ins().select(v[0], v[1], v[2])
            });
        }
        let m = self.vectors(c, Bool);
        let x = self.vectors(a, kind);
        let y = self.vectors(b, kind);
        Leaf::Packed(self.blend(kind, m, x, y))
    }

    /// Lane by lane `m ? x : y` of packed values of `kind` under mask `m` (all-ones or zero
    /// lanes).
    pub fn blend(
        &mut self,
        kind: ScalarKind,
        m: [Value; MAX_PARTS],
        x: [Value; MAX_PARTS],
        y: [Value; MAX_PARTS],
    ) -> [Value; MAX_PARTS] {
        let mut out = x;
        for p in 0..self.parts() {
            out[p] = self.blend_vector(kind == F32, m[p], x[p], y[p]);
        }
        out
    }

    /// `m ? x : y` lane by lane for one vector (`F32X4` where `float`, else `I32X4`) under an
    /// `I32X4` mask of all-ones or zero lanes: one `blendvps` on x86-64 (gangs need SSE4.1
    /// there), a bit select elsewhere.
    pub fn blend_vector(&mut self, float: bool, m: Value, x: Value, y: Value) -> Value {
        let ins = &mut self.s.b;
        let flags = MemFlagsData::new().with_endianness(cranelift_codegen::ir::Endianness::Little);
        if cfg!(target_arch = "x86_64") {
            if float {
                let a = ins.ins().bitcast(types::I32X4, flags, x);
                let b = ins.ins().bitcast(types::I32X4, flags, y);
                let r = ins.ins().blendv(m, a, b);
                ins.ins().bitcast(types::F32X4, flags, r)
            } else {
                ins.ins().blendv(m, x, y)
            }
        } else if float {
            let mask = ins.ins().bitcast(types::F32X4, flags, m);
            ins.ins().bitselect(mask, x, y)
        } else {
            ins.ins().bitselect(m, x, y)
        }
    }

    pub fn gang_convert(&mut self, from: ScalarKind, to: ScalarKind, v: Leaf) -> Leaf {
        if from == to {
            return v;
        }
        if let Leaf::Uniform(x) = v {
            return Leaf::Uniform(self.s.convert(from, to, x));
        }
        let parts = self.parts();
        let vector = matches!(
            (from, to),
            (I32 | U32, I32 | U32)
                | (F32, I32)
                | (I32 | U32, F32)
                | (F32 | I32 | U32, Bool)
                | (Bool, I32 | U32 | F32)
        );
        if !vector {
            return self.per_lane(&[(v, from)], to, |s, x| s.convert(from, to, x[0]));
        }
        let a = self.vectors(v, from);
        let zero_f = self.zero_vector(F32);
        let zero_i = self.zero_vector(I32);
        let one = self.s.iconst(types::I32, 1);
        let one = self.s.b.ins().splat(types::I32X4, one);
        let low_half = self.s.iconst(types::I32, 0xffff);
        let low_half = self.s.b.ins().splat(types::I32X4, low_half);
        let high_unit = self.s.b.ins().f32const(65536.0);
        let high_unit = self.s.b.ins().splat(types::F32X4, high_unit);
        let ins = &mut self.s.b;
        Leaf::Packed(map_parts(parts, a, |x| match (from, to) {
            (I32 | U32, I32 | U32) => x,
            (F32, I32) => ins.ins().fcvt_to_sint_sat(types::I32X4, x),
            (I32, F32) => ins.ins().fcvt_from_sint(types::F32X4, x),
            // Both halves convert exactly and `high * 65536` is exact, so the one rounding
            // is the sum's: the correctly rounded value, as the scalar conversion gives.
            (U32, F32) => {
                let high = ins.ins().ushr_imm_u(x, 16);
                let high = ins.ins().fcvt_from_sint(types::F32X4, high);
                let high = ins.ins().fmul(high, high_unit);
                let low = ins.ins().band(x, low_half);
                let low = ins.ins().fcvt_from_sint(types::F32X4, low);
                ins.ins().fadd(high, low)
            }
            (F32, Bool) => ins.ins().fcmp(FloatCC::NotEqual, x, zero_f),
            (_, Bool) => ins.ins().icmp(IntCC::NotEqual, x, zero_i),
            (Bool, F32) => {
                let int = ins.ins().band(x, one);
                ins.ins().fcvt_from_sint(types::F32X4, int)
            }
            _ => ins.ins().band(x, one),
        }))
    }

    fn zero_vector(&mut self, kind: ScalarKind) -> Value {
        let zero = self.s.zero(kind);
        self.s.b.ins().splat(super::vector_type(kind), zero)
    }

    /// The inline math functions: vector forms for `float`s where one exists, else lane by
    /// lane through the scalar lowering.
    pub fn gang_exact_math(
        &mut self,
        fun: MathFun,
        kind: ScalarKind,
        args: &[Vec<Leaf>],
    ) -> Vec<Leaf> {
        let all_uniform = uniform_values(args.iter().flatten().copied()).is_some();
        if kind == F32 && !all_uniform {
            if let Some(values) = self.float_math(fun, args) {
                return values;
            }
        }
        let out = match fun {
            MathFun::IsNan | MathFun::IsInf | MathFun::IsFinite => Bool,
            _ => kind,
        };
        self.per_lane_values(args, kind, out, |s, v| s.exact_math(fun, kind, v))
    }

    /// `float` math in vectors, in the scalar lowering's operation order.
    fn float_math(&mut self, fun: MathFun, args: &[Vec<Leaf>]) -> Option<Vec<Leaf>> {
        let parts = self.parts();
        let a = &args[0];
        let each = |t: &mut Self, f: &mut dyn FnMut(&mut Self, usize) -> Leaf| -> Vec<Leaf> {
            (0..a.len()).map(|i| f(t, i)).collect()
        };
        let unary =
            |t: &mut Self,
             x: Leaf,
             f: fn(&mut cranelift_frontend::FunctionBuilder, Value) -> Value| {
                let v = t.vectors(x, F32);
                let b = &mut t.s.b;
                Leaf::Packed(map_parts(parts, v, |x| f(b, x)))
            };
        Some(match fun {
            MathFun::Abs => each(self, &mut |t, i| unary(t, a[i], |b, x| b.ins().fabs(x))),
            MathFun::Floor => each(self, &mut |t, i| unary(t, a[i], |b, x| b.ins().floor(x))),
            MathFun::Ceil => each(self, &mut |t, i| unary(t, a[i], |b, x| b.ins().ceil(x))),
            MathFun::Sqrt => each(self, &mut |t, i| unary(t, a[i], |b, x| b.ins().sqrt(x))),
            MathFun::Rsqrt => each(self, &mut |t, i| {
                let root = unary(t, a[i], |b, x| b.ins().sqrt(x));
                let one = t.float(1.0);
                t.gang_binary(BinaryOp::Div, F32, one, root)
            }),
            MathFun::Frac => each(self, &mut |t, i| {
                let floor = unary(t, a[i], |b, x| b.ins().floor(x));
                t.gang_binary(BinaryOp::Sub, F32, a[i], floor)
            }),
            MathFun::Lerp => each(self, &mut |t, i| {
                let diff = t.gang_binary(BinaryOp::Sub, F32, args[1][i], a[i]);
                let scaled = t.gang_binary(BinaryOp::Mul, F32, diff, args[2][i]);
                t.gang_binary(BinaryOp::Add, F32, a[i], scaled)
            }),
            MathFun::Fma => each(self, &mut |t, i| {
                let x = t.vectors(a[i], F32);
                let y = t.vectors(args[1][i], F32);
                let z = t.vectors(args[2][i], F32);
                let mut fused = x;
                for p in 0..parts {
                    fused[p] = t.s.b.ins().fma(x[p], y[p], z[p]);
                }
                Leaf::Packed(fused)
            }),
            MathFun::Max => each(self, &mut |t, i| t.min_max(a[i], args[1][i], true)),
            MathFun::Min => each(self, &mut |t, i| t.min_max(a[i], args[1][i], false)),
            MathFun::Clamp => each(self, &mut |t, i| {
                let low = t.min_max(a[i], args[1][i], true);
                t.min_max(low, args[2][i], false)
            }),
            MathFun::Dot => vec![self.dot(a, &args[1])],
            MathFun::Length => vec![self.length(a)],
            MathFun::Distance => {
                let diff: Vec<Leaf> = (0..a.len())
                    .map(|i| self.gang_binary(BinaryOp::Sub, F32, a[i], args[1][i]))
                    .collect();
                vec![self.length(&diff)]
            }
            MathFun::Normalize => {
                let len = self.length(a);
                each(self, &mut |t, i| {
                    t.gang_binary(BinaryOp::Div, F32, a[i], len)
                })
            }
            MathFun::Cross => {
                let b = &args[1];
                let mut term = |i: usize, j: usize| {
                    let left = self.gang_binary(BinaryOp::Mul, F32, a[i], b[j]);
                    let right = self.gang_binary(BinaryOp::Mul, F32, a[j], b[i]);
                    self.gang_binary(BinaryOp::Sub, F32, left, right)
                };
                vec![term(1, 2), term(2, 0), term(0, 1)]
            }
            _ => return None,
        })
    }

    fn float(&mut self, value: f32) -> Leaf {
        Leaf::Uniform(self.s.b.ins().f32const(value))
    }

    /// `max` or `min` as the scalar lowering computes it: IEEE `fmax`/`fmin`, then a NaN
    /// operand gives the other operand (the second if both are NaN).
    fn min_max(&mut self, a: Leaf, b: Leaf, max: bool) -> Leaf {
        let x = self.vectors(a, F32);
        let y = self.vectors(b, F32);
        let parts = self.parts();
        let ins = &mut self.s.b;
        let ieee = zip_parts(parts, x, y, |v, w| {
            if max {
                ins.ins().fmax(v, w)
            } else {
                ins.ins().fmin(v, w)
            }
        });
        let b_nan = zip_parts(parts, y, y, |v, w| ins.ins().fcmp(FloatCC::Unordered, v, w));
        let a_nan = zip_parts(parts, x, x, |v, w| ins.ins().fcmp(FloatCC::Unordered, v, w));
        let r = self.blend(F32, b_nan, x, ieee);
        Leaf::Packed(self.blend(F32, a_nan, y, r))
    }

    fn dot(&mut self, a: &[Leaf], b: &[Leaf]) -> Leaf {
        let mut sum = self.gang_binary(BinaryOp::Mul, F32, a[0], b[0]);
        for i in 1..a.len() {
            let product = self.gang_binary(BinaryOp::Mul, F32, a[i], b[i]);
            sum = self.gang_binary(BinaryOp::Add, F32, sum, product);
        }
        sum
    }

    fn length(&mut self, a: &[Leaf]) -> Leaf {
        let d = self.dot(a, a);
        let v = self.vectors(d, F32);
        let parts = self.parts();
        let ins = &mut self.s.b;
        Leaf::Packed(map_parts(parts, v, |x| ins.ins().sqrt(x)))
    }

    /// A transcendental helper called for each lane (once where its arguments are uniform).
    pub fn gang_helper(&mut self, helper: Helper, kind: ScalarKind, args: &[Leaf]) -> Leaf {
        let typed: Vec<(Leaf, ScalarKind)> = args.iter().map(|&a| (a, kind)).collect();
        self.per_lane(&typed, kind, |s, v| s.call_helper(helper, v))
    }

    /// A value of index kind as a signed `i64` index, lane by lane.
    pub fn gang_to_index(&mut self, kind: ScalarKind, v: Leaf) -> Leaf {
        if matches!(v, Leaf::Linear { .. }) && kind == ScalarKind::I64 {
            return v;
        }
        self.per_lane(&[(v, kind)], ScalarKind::I64, |s, x| {
            Target::to_index(s, kind, x[0])
        })
    }
}

/// Whether `op` on `kind` has a vector form here (shifts only by a uniform amount).
fn vector_binary(op: BinaryOp, kind: ScalarKind, amount: Leaf) -> bool {
    use BinaryOp::*;
    match kind {
        F32 => matches!(op, Add | Sub | Mul | Div | Eq | Ne | Lt | Le | Gt | Ge),
        I32 | U32 => match op {
            Add | Sub | Mul | BitAnd | BitOr | BitXor | Eq | Ne | Lt | Le | Gt | Ge => true,
            Shl | Shr => matches!(amount, Leaf::Uniform(_)),
            _ => false,
        },
        Bool => matches!(op, LogicAnd | LogicOr | BitAnd | BitOr | BitXor | Eq | Ne),
        _ => false,
    }
}

fn float_cc(op: BinaryOp) -> FloatCC {
    match op {
        BinaryOp::Eq => FloatCC::Equal,
        BinaryOp::Ne => FloatCC::NotEqual,
        BinaryOp::Lt => FloatCC::LessThan,
        BinaryOp::Le => FloatCC::LessThanOrEqual,
        BinaryOp::Gt => FloatCC::GreaterThan,
        _ => FloatCC::GreaterThanOrEqual,
    }
}

fn int_cc(op: BinaryOp, signed: bool) -> IntCC {
    match (op, signed) {
        (BinaryOp::Eq, _) => IntCC::Equal,
        (BinaryOp::Ne, _) => IntCC::NotEqual,
        (BinaryOp::Lt, true) => IntCC::SignedLessThan,
        (BinaryOp::Lt, false) => IntCC::UnsignedLessThan,
        (BinaryOp::Le, true) => IntCC::SignedLessThanOrEqual,
        (BinaryOp::Le, false) => IntCC::UnsignedLessThanOrEqual,
        (BinaryOp::Gt, true) => IntCC::SignedGreaterThan,
        (BinaryOp::Gt, false) => IntCC::UnsignedGreaterThan,
        (_, true) => IntCC::SignedGreaterThanOrEqual,
        (_, false) => IntCC::UnsignedGreaterThanOrEqual,
    }
}
