//! The exact intrinsics (seed 003 section 5) in SPIR-V, component-wise unless the function
//! says otherwise, in the interpreter's operation order (`brook_runtime`'s `interp::ops::math`):
//! `sqrt` and divisions correctly rounded ([`crate::mathlib::exact`]), a `float` `fma` as the
//! exact product plus the addend rounded to odd in `double`, then to `float` (one rounding in
//! effect), `min`/`max` with the interpreter's NaN and signed-zero rules, `round` half away
//! from zero. Sign bits are set with integer operations, never by a multiplication by zero.

use super::libm::SpirvArith;
use super::shell::{glsl, Shell};
use brook_ir::{BinaryOp, MathFun, ScalarKind};
use rspirv::dr::Operand;
use rspirv::spirv::Word;

macro_rules! op {
    ($s:expr, $method:ident, $ty:expr, $($arg:expr),+) => {
        $s.b.$method($ty, None, $($arg),+).expect("in a block")
    };
}

impl Shell {
    fn glsl_op(&mut self, kind: ScalarKind, inst: u32, x: Word) -> Word {
        let t = self.container(kind);
        let set = self.glsl();
        op!(self, ext_inst, t, set, inst, [Operand::IdRef(x)])
    }

    /// `fun` of `args` (each a value's leaves, of `kind`): the exact intrinsics. `None` for a
    /// transcendental function (the math library's, [`Shell::transcendental`]).
    pub fn exact_math(
        &mut self,
        fun: MathFun,
        kind: ScalarKind,
        args: &[Vec<Word>],
    ) -> Option<Vec<Word>> {
        let a = &args[0];
        let whole = match fun {
            MathFun::Dot => Some(vec![self.dot(kind, a, &args[1])]),
            MathFun::Length => Some(vec![self.length(kind, a)]),
            MathFun::Distance => {
                let diff: Vec<Word> = (0..a.len())
                    .map(|i| self.bin(BinaryOp::Sub, kind, a[i], args[1][i]))
                    .collect();
                Some(vec![self.length(kind, &diff)])
            }
            MathFun::Normalize => {
                let len = self.length(kind, a);
                Some(
                    a.iter()
                        .map(|&x| self.bin(BinaryOp::Div, kind, x, len))
                        .collect(),
                )
            }
            MathFun::Cross => {
                let b = &args[1];
                let term = |s: &mut Self, i: usize, j: usize| {
                    let left = s.bin(BinaryOp::Mul, kind, a[i], b[j]);
                    let right = s.bin(BinaryOp::Mul, kind, a[j], b[i]);
                    s.bin(BinaryOp::Sub, kind, left, right)
                };
                Some(vec![term(self, 1, 2), term(self, 2, 0), term(self, 0, 1)])
            }
            _ => None,
        };
        if whole.is_some() {
            return whole;
        }
        let mut out = Vec::with_capacity(a.len());
        for i in 0..a.len() {
            let x = a[i];
            let arg = |k: usize| args[k][i];
            let r = match fun {
                MathFun::Abs => self.abs(kind, x),
                MathFun::Ceil => self.glsl_op(kind, glsl::CEIL, x),
                MathFun::Floor => self.glsl_op(kind, glsl::FLOOR, x),
                MathFun::Sqrt => self.sqrt(kind, x),
                MathFun::Rsqrt => {
                    let root = self.sqrt(kind, x);
                    let one = self.float_literal(kind, 1.0);
                    self.bin(BinaryOp::Div, kind, one, root)
                }
                MathFun::Round => self.round_half_away(kind, x),
                MathFun::Frac => {
                    let floor = self.glsl_op(kind, glsl::FLOOR, x);
                    self.bin(BinaryOp::Sub, kind, x, floor)
                }
                MathFun::Fmod => self.bin(BinaryOp::Rem, kind, x, arg(1)),
                MathFun::Max => self.min_max(kind, x, arg(1), true),
                MathFun::Min => self.min_max(kind, x, arg(1), false),
                MathFun::Clamp => {
                    let low = self.min_max(kind, x, arg(1), true);
                    self.min_max(kind, low, arg(2), false)
                }
                MathFun::Lerp => {
                    let diff = self.bin(BinaryOp::Sub, kind, arg(1), x);
                    let scaled = self.bin(BinaryOp::Mul, kind, diff, arg(2));
                    self.bin(BinaryOp::Add, kind, x, scaled)
                }
                MathFun::Fma => self.fma(kind, x, arg(1), arg(2)),
                MathFun::Sign => self.sign(kind, x),
                MathFun::IsNan => {
                    let bool_ty = self.b.type_bool();
                    op!(self, is_nan, bool_ty, x)
                }
                MathFun::IsInf | MathFun::IsFinite => {
                    let magnitude = self.glsl_op(kind, glsl::FABS, x);
                    let inf = self.float_literal(kind, f64::INFINITY);
                    let bool_ty = self.b.type_bool();
                    if fun == MathFun::IsInf {
                        op!(self, f_ord_equal, bool_ty, magnitude, inf)
                    } else {
                        op!(self, f_ord_less_than, bool_ty, magnitude, inf)
                    }
                }
                _ => return None,
            };
            out.push(r);
        }
        Some(out)
    }

    /// The library function `fun` (`crate::mathlib::Fun`) of one lane: in `double`, a
    /// `float`'s arguments widened and its result rounded once.
    pub fn transcendental(
        &mut self,
        fun: crate::mathlib::Fun,
        kind: ScalarKind,
        lane: &[Word],
    ) -> Word {
        let wide: Vec<Word> = if kind == ScalarKind::F32 {
            lane.iter().map(|&x| self.widen(x)).collect()
        } else {
            lane.to_vec()
        };
        let fused = self.fused_fma;
        let r = {
            let mut a = SpirvArith::new(self, fused);
            fun.build(&mut a, &wide)
        };
        if kind == ScalarKind::F32 {
            let f32_ty = self.b.type_float(32);
            op!(self, f_convert, f32_ty, r)
        } else {
            r
        }
    }

    fn bin(&mut self, op: BinaryOp, kind: ScalarKind, a: Word, b: Word) -> Word {
        self.binary(op, kind, a, b)
            .expect("the intrinsics use operators their kinds have")
    }

    fn float_literal(&mut self, kind: ScalarKind, value: f64) -> Word {
        let bits = if kind == ScalarKind::F32 {
            u64::from((value as f32).to_bits())
        } else {
            value.to_bits()
        };
        self.literal(kind, bits)
    }

    /// The bits of a float as an unsigned integer of its width, and back.
    fn float_bits(&mut self, kind: ScalarKind, x: Word) -> Word {
        let t = if kind == ScalarKind::F32 {
            self.u32_ty()
        } else {
            self.u64_ty()
        };
        op!(self, bitcast, t, x)
    }

    fn bits_float(&mut self, kind: ScalarKind, bits: Word) -> Word {
        let t = self.container(kind);
        op!(self, bitcast, t, bits)
    }

    /// A `float` as a `double`. On a device that flushes `float` subnormals a subnormal is
    /// first made a zero of its sign explicitly (a `float` compare, then a selection of bits):
    /// NVIDIA's compiler otherwise let some uses of one converted subnormal see a zero and
    /// others not (`log2` of 2^-149 gave -1077), where the interpreter's model of such a
    /// device reads it as zero everywhere.
    pub fn widen(&mut self, x: Word) -> Word {
        let f64_ty = self.b.type_float(64);
        if !self.flushes_f32 {
            return op!(self, f_convert, f64_ty, x);
        }
        let magnitude = self.glsl_op(ScalarKind::F32, glsl::FABS, x);
        let min_normal = self.float_literal(ScalarKind::F32, f64::from(f32::MIN_POSITIVE));
        let bool_ty = self.b.type_bool();
        let small = op!(self, f_ord_less_than, bool_ty, magnitude, min_normal);
        let zero = self.float_literal(ScalarKind::F32, 0.0);
        let signed_zero = self.copysign(ScalarKind::F32, zero, x);
        let flushed = self.select(ScalarKind::F32, small, signed_zero, x);
        op!(self, f_convert, f64_ty, flushed)
    }

    /// `magnitude` with the sign of `sign` (both floats of `kind`), by bits.
    fn copysign(&mut self, kind: ScalarKind, magnitude: Word, sign: Word) -> Word {
        let sign_bit = if kind == ScalarKind::F32 {
            1u64 << 31
        } else {
            1u64 << 63
        };
        let int_kind = if kind == ScalarKind::F32 {
            ScalarKind::U32
        } else {
            ScalarKind::U64
        };
        let m = self.float_bits(kind, magnitude);
        let s = self.float_bits(kind, sign);
        let t = self.container(int_kind);
        let mask = self.literal(int_kind, sign_bit);
        let rest = self.literal(int_kind, !sign_bit & (u64::MAX >> (64 - 8 * kind.size())));
        let s = op!(self, bitwise_and, t, s, mask);
        let m = op!(self, bitwise_and, t, m, rest);
        let joined = op!(self, bitwise_or, t, m, s);
        self.bits_float(kind, joined)
    }

    fn abs(&mut self, kind: ScalarKind, x: Word) -> Word {
        if kind.is_float() {
            return self.glsl_op(kind, glsl::FABS, x);
        }
        if !kind.is_signed() {
            return x;
        }
        // (x ^ m) - m with m = x >> (bits - 1): abs(MIN) wraps to MIN, as the interpreter's.
        let t = self.container(kind);
        let top = if kind.size() == 8 { 63 } else { 31 };
        let c = if kind.size() == 8 {
            ScalarKind::U64
        } else {
            ScalarKind::U32
        };
        let shift = self.literal(c, top);
        let m = op!(self, shift_right_arithmetic, t, x, shift);
        // The mask mixed with the opaque zero: NVIDIA's Vulkan compiler (driver 580) took
        // this for an integer `abs` and dropped the sign extension of a `char`'s result
        // (`abs(-128)` became 128, not -128: `fuzz_vulkan_char_abs`).
        let m = match self.opaque_zero {
            Some((zero32, zero64)) => {
                let zero = if kind.size() == 8 { zero64 } else { zero32 };
                op!(self, bitwise_xor, t, m, zero)
            }
            None => m,
        };
        let flipped = op!(self, bitwise_xor, t, x, m);
        let r = op!(self, i_sub, t, flipped, m);
        self.normalize(kind, r)
    }

    fn sqrt(&mut self, kind: ScalarKind, x: Word) -> Word {
        if kind == ScalarKind::F32 && !self.float64 {
            return self.float_from_bits(&[x], |arith, bits, flush| {
                crate::mathlib::float32_int::sqrt_bits(arith, bits[0], flush)
            });
        }
        let wide = if kind == ScalarKind::F32 {
            self.widen(x)
        } else {
            x
        };
        // As division ([`Shell::float_div`]): corrected where `float` subnormals are kept.
        let (fused, corrected) = (self.fused_fma, !self.flushes_f32);
        let r = {
            let mut a = SpirvArith::new(self, fused);
            match kind {
                ScalarKind::F32 if corrected => crate::mathlib::float32::sqrt_f32(&mut a, wide),
                _ => crate::mathlib::exact::sqrt(&mut a, wide),
            }
        };
        if kind == ScalarKind::F32 {
            let f32_ty = self.b.type_float(32);
            op!(self, f_convert, f32_ty, r)
        } else {
            r
        }
    }

    /// `x * y + z` rounded once.
    fn fma(&mut self, kind: ScalarKind, x: Word, y: Word, z: Word) -> Word {
        if kind == ScalarKind::F32 && !self.float64 {
            return self.float_from_bits(&[x, y, z], |arith, bits, flush| {
                crate::mathlib::float32_int::fma_bits(arith, bits[0], bits[1], bits[2], flush)
            });
        }
        let fused = self.fused_fma;
        if kind == ScalarKind::F64 {
            let mut a = SpirvArith::new(self, fused);
            if !fused {
                return crate::mathlib::fma::emulated_wide(&mut a, x, y, z);
            }
            return crate::mathlib::Arith::fma(&mut a, x, y, z);
        }
        // float: the product is exact in double; the sum rounded to odd there, then to float.
        let (wx, wy, wz) = (self.widen(x), self.widen(y), self.widen(z));
        let sum = {
            use crate::mathlib::{Arith, Cmp};
            let mut a = SpirvArith::new(self, fused);
            let p = a.mul(wx, wy);
            let odd = crate::mathlib::fma::add_round_to_odd(&mut a, p, wz);
            // Infinities and NaNs: the plain sum (rounding to odd is for finite sums).
            let plain = a.add(p, wz);
            let magnitude = a.abs(plain);
            let huge = a.num(f64::MAX);
            let finite = a.cmp(Cmp::Le, magnitude, huge);
            a.select(finite, odd, plain)
        };
        let f32_ty = self.b.type_float(32);
        op!(self, f_convert, f32_ty, sum)
    }

    /// C99 `round`: the truncation, one step away from zero when the fraction is at least 1/2.
    fn round_half_away(&mut self, kind: ScalarKind, x: Word) -> Word {
        let truncated = self.glsl_op(kind, glsl::TRUNC, x);
        let fraction = self.bin(BinaryOp::Sub, kind, x, truncated);
        let magnitude = self.glsl_op(kind, glsl::FABS, fraction);
        let half = self.float_literal(kind, 0.5);
        let bool_ty = self.b.type_bool();
        let away = op!(self, f_ord_greater_than_equal, bool_ty, magnitude, half);
        let one = self.float_literal(kind, 1.0);
        let step = self.copysign(kind, one, x);
        let stepped = self.bin(BinaryOp::Add, kind, truncated, step);
        self.select(kind, away, stepped, truncated)
    }

    /// `max` (or `min`): a NaN operand gives the other (the second if both are NaN), equal
    /// operands their bits and-ed (`max`: +0 wins) or or-ed (`min`: -0 wins); integers by
    /// their kind's order.
    fn min_max(&mut self, kind: ScalarKind, a: Word, b: Word, max: bool) -> Word {
        let first_wins = if max { BinaryOp::Gt } else { BinaryOp::Lt };
        let second_wins = if max { BinaryOp::Lt } else { BinaryOp::Gt };
        let pa = self.bin(first_wins, kind, a, b);
        if !kind.is_float() {
            return self.pick_opaquely(kind, pa, a, b);
        }
        let int_kind = if kind == ScalarKind::F32 {
            ScalarKind::U32
        } else {
            ScalarKind::U64
        };
        let t = self.container(int_kind);
        let (ai, bi) = (self.float_bits(kind, a), self.float_bits(kind, b));
        let joined = if max {
            op!(self, bitwise_and, t, ai, bi)
        } else {
            op!(self, bitwise_or, t, ai, bi)
        };
        let tie = self.bits_float(kind, joined);
        let pb = self.bin(second_wins, kind, a, b);
        let r = self.select(kind, pa, a, tie);
        let r = self.select(kind, pb, b, r);
        let bool_ty = self.b.type_bool();
        let b_nan = op!(self, is_nan, bool_ty, b);
        let a_nan = op!(self, is_nan, bool_ty, a);
        let r = self.select(kind, b_nan, a, r);
        self.select(kind, a_nan, b, r)
    }

    /// `c ? a : b` for integers as `b ^ ((a ^ b) & mask)`, the mask all ones when `c` holds,
    /// mixed with the module's opaque zero: NVIDIA's Vulkan compiler (driver 580) turned
    /// nested integer min/max written as compare-and-select into a clamp that assumes its
    /// bounds ordered, and gave 0 for `clamp(x, max(z, -w), 0)` (`fuzz_min_max_negation_3`);
    /// it cannot see this as a selection.
    fn pick_opaquely(&mut self, kind: ScalarKind, c: Word, a: Word, b: Word) -> Word {
        let Some((zero32, zero64)) = self.opaque_zero else {
            return self.select(kind, c, a, b);
        };
        let wide = matches!(kind, ScalarKind::I64 | ScalarKind::U64);
        let t = self.container(kind);
        let (ones, zero, opaque) = if wide {
            (self.const_u64(u64::MAX), self.const_u64(0), zero64)
        } else {
            (self.const_u32(u32::MAX), self.const_u32(0), zero32)
        };
        let mask = op!(self, select, t, c, ones, zero);
        let mask = op!(self, bitwise_xor, t, mask, opaque);
        let differ = op!(self, bitwise_xor, t, a, b);
        let chosen = op!(self, bitwise_and, t, differ, mask);
        op!(self, bitwise_xor, t, b, chosen)
    }

    /// -1, 0 or 1 of the kind; float zeros keep their sign and NaN stays NaN.
    fn sign(&mut self, kind: ScalarKind, x: Word) -> Word {
        let zero = self.literal(kind, 0);
        let bool_ty = self.b.type_bool();
        if kind.is_float() {
            let one = self.float_literal(kind, 1.0);
            let minus_one = self.float_literal(kind, -1.0);
            let signed_zero = self.copysign(kind, zero, x);
            let nan = op!(self, is_nan, bool_ty, x);
            let same = self.select(kind, nan, x, signed_zero);
            let negative = op!(self, f_ord_less_than, bool_ty, x, zero);
            let positive = op!(self, f_ord_greater_than, bool_ty, x, zero);
            let r = self.select(kind, negative, minus_one, same);
            return self.select(kind, positive, one, r);
        }
        // Integers select opaquely: NVIDIA's Vulkan compiler (driver 580) failed ("NVVM
        // compilation failed: 3") on integer `sign` written as compare-and-select, in 48 of
        // 8,759 random kernels.
        let one = self.literal(kind, 1);
        let nonzero = self.bin(BinaryOp::Ne, kind, x, zero);
        let r = self.pick_opaquely(kind, nonzero, one, zero);
        if !kind.is_signed() {
            return r;
        }
        let minus_one = self.literal(kind, u64::MAX);
        let negative = self.bin(BinaryOp::Lt, kind, x, zero);
        self.pick_opaquely(kind, negative, minus_one, r)
    }

    /// The sum of lane products, left to right, without fused operations.
    fn dot(&mut self, kind: ScalarKind, a: &[Word], b: &[Word]) -> Word {
        let mut sum = self.bin(BinaryOp::Mul, kind, a[0], b[0]);
        for i in 1..a.len() {
            let product = self.bin(BinaryOp::Mul, kind, a[i], b[i]);
            sum = self.bin(BinaryOp::Add, kind, sum, product);
        }
        sum
    }

    fn length(&mut self, kind: ScalarKind, a: &[Word]) -> Word {
        let d = self.dot(kind, a, a);
        self.sqrt(kind, d)
    }
}
