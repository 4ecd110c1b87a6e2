//! The transcendental functions of backends without a system libm (the PTX backend).
//!
//! Each function is written once, generic over [`Arith`]: a small instruction set of IEEE
//! binary64 operations (each correctly rounded, as PTX's `.rn` forms are), 64-bit integer
//! operations, predicates and selects. Two implementations exist:
//! - [`native::Native`] evaluates the operations on the host. Tests use it to measure each
//!   function's error against the system libm over many inputs, without a GPU.
//! - `ptx::libm` writes them as PTX instructions, one `.func` per function.
//!
//! Both give the same bits for the same input, because every operation is exactly specified.
//!
//! The algorithms are branch-free (every path computed, the answer selected), so one trace of
//! operations serves both. `f32` functions evaluate the `f64` algorithm and round once more.
//! Error bounds, measured by this module's tests against glibc: see docs/GUIDE.md.

pub mod consts;
pub mod exact;
mod exp_log;
pub mod float32;
pub mod float32_int;
pub mod fma;
mod inverse;
pub mod native;
pub mod soft;
mod trig;

use brook_ir::MathFun;

/// Ordered comparisons (false when either operand is NaN).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
}

/// The operations the algorithms are written in.
///
/// `F` is a binary64 value, `I` a 64-bit integer (signed unless an operation says otherwise),
/// `P` a predicate. Shifts by 64 or more give 0 (`shl`, `lshr`) or the sign (`ashr`), as in PTX.
pub trait Arith {
    type F: Copy;
    type I: Copy;
    type P: Copy;

    fn num(&mut self, value: f64) -> Self::F;
    fn int(&mut self, value: i64) -> Self::I;

    fn add(&mut self, a: Self::F, b: Self::F) -> Self::F;
    fn sub(&mut self, a: Self::F, b: Self::F) -> Self::F;
    fn mul(&mut self, a: Self::F, b: Self::F) -> Self::F;
    fn div(&mut self, a: Self::F, b: Self::F) -> Self::F;
    /// `a * b + c` rounded once.
    fn fma(&mut self, a: Self::F, b: Self::F, c: Self::F) -> Self::F;
    fn sqrt(&mut self, a: Self::F) -> Self::F;
    /// `a / b` within 2^-20 relative, for `b` in `[1, 2]` or a `float` value's range (a
    /// device's own division; [`float32`]): the correctly rounded one unless a device's is
    /// faster.
    fn approx_div(&mut self, a: Self::F, b: Self::F) -> Self::F {
        self.div(a, b)
    }
    /// `sqrt(a)` within 2^-20 relative, for `a` in `[1, 4)` (as [`Arith::approx_div`]).
    fn approx_sqrt(&mut self, a: Self::F) -> Self::F {
        self.sqrt(a)
    }
    /// The `float` nearest `a` (ties to even), as a double; infinity past the largest. By
    /// default from its bits ([`soft::narrow_to_f32`]), for a device that converts natively.
    fn round_to_f32(&mut self, a: Self::F) -> Self::F
    where
        Self: Sized,
    {
        let bits = self.to_bits(a);
        let mut soft = soft::Soft::new(self);
        let narrow = soft::narrow_to_f32(&mut soft, bits);
        let wide = soft::widen_f32(&mut soft, narrow);
        self.bits_to_float(wide)
    }
    fn neg(&mut self, a: Self::F) -> Self::F;
    fn abs(&mut self, a: Self::F) -> Self::F;
    /// Round to the nearest integer, ties to even.
    fn rint(&mut self, a: Self::F) -> Self::F;

    fn cmp(&mut self, op: Cmp, a: Self::F, b: Self::F) -> Self::P;
    fn is_nan(&mut self, a: Self::F) -> Self::P;
    fn and(&mut self, a: Self::P, b: Self::P) -> Self::P;
    fn or(&mut self, a: Self::P, b: Self::P) -> Self::P;
    fn not(&mut self, a: Self::P) -> Self::P;
    /// `p ? a : b`.
    fn select(&mut self, p: Self::P, a: Self::F, b: Self::F) -> Self::F;
    /// `p ? a : b` on integers.
    fn select_int(&mut self, p: Self::P, a: Self::I, b: Self::I) -> Self::I;

    fn to_bits(&mut self, a: Self::F) -> Self::I;
    fn bits_to_float(&mut self, a: Self::I) -> Self::F;
    fn iadd(&mut self, a: Self::I, b: Self::I) -> Self::I;
    fn isub(&mut self, a: Self::I, b: Self::I) -> Self::I;
    /// The low 64 bits of the product.
    fn imul(&mut self, a: Self::I, b: Self::I) -> Self::I;
    /// The high 64 bits of the unsigned 128-bit product.
    fn umulhi(&mut self, a: Self::I, b: Self::I) -> Self::I;
    /// The remainder of unsigned `a / b` (`b` not zero).
    fn urem(&mut self, a: Self::I, b: Self::I) -> Self::I;
    fn iand(&mut self, a: Self::I, b: Self::I) -> Self::I;
    fn ior(&mut self, a: Self::I, b: Self::I) -> Self::I;
    fn shl(&mut self, a: Self::I, by: Self::I) -> Self::I;
    fn lshr(&mut self, a: Self::I, by: Self::I) -> Self::I;
    fn ashr(&mut self, a: Self::I, by: Self::I) -> Self::I;
    /// Leading zero bits (64 for 0).
    fn clz(&mut self, a: Self::I) -> Self::I;
    /// Signed comparison.
    fn icmp(&mut self, op: Cmp, a: Self::I, b: Self::I) -> Self::P;
    /// Unsigned `a < b`.
    fn ult(&mut self, a: Self::I, b: Self::I) -> Self::P;
    /// Signed integer to the nearest double.
    fn int_to_float(&mut self, a: Self::I) -> Self::F;
    /// Unsigned integer to the nearest double.
    fn uint_to_float(&mut self, a: Self::I) -> Self::F;
    /// Word `index` of [`consts::TWO_OVER_PI_WORDS`] (the algorithms keep it in bounds).
    fn two_over_pi_word(&mut self, index: Self::I) -> Self::I;
}

/// A function of the library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fun {
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Atan2,
    Exp,
    Exp2,
    Log,
    Log2,
    Pow,
}

impl Fun {
    pub const ALL: [Fun; 12] = [
        Fun::Sin,
        Fun::Cos,
        Fun::Tan,
        Fun::Asin,
        Fun::Acos,
        Fun::Atan,
        Fun::Atan2,
        Fun::Exp,
        Fun::Exp2,
        Fun::Log,
        Fun::Log2,
        Fun::Pow,
    ];

    /// The routine behind intrinsic `fun`: every [`Exactness::Library`] intrinsic has one.
    ///
    /// [`Exactness::Library`]: brook_ir::intrinsic::Exactness::Library
    pub fn of(fun: MathFun) -> Option<Fun> {
        Fun::ALL.into_iter().find(|f| f.intrinsic() == fun)
    }

    /// The intrinsic this routine computes.
    pub fn intrinsic(self) -> MathFun {
        match self {
            Fun::Sin => MathFun::Sin,
            Fun::Cos => MathFun::Cos,
            Fun::Tan => MathFun::Tan,
            Fun::Asin => MathFun::Asin,
            Fun::Acos => MathFun::Acos,
            Fun::Atan => MathFun::Atan,
            Fun::Atan2 => MathFun::Atan2,
            Fun::Exp => MathFun::Exp,
            Fun::Exp2 => MathFun::Exp2,
            Fun::Log => MathFun::Log,
            Fun::Log2 => MathFun::Log2,
            Fun::Pow => MathFun::Pow,
        }
    }

    pub fn name(self) -> &'static str {
        self.intrinsic().name()
    }

    pub fn arity(self) -> usize {
        self.intrinsic().arity()
    }

    /// Whether the function reads the 2/pi table ([`consts::TWO_OVER_PI_WORDS`]).
    pub fn uses_table(self) -> bool {
        matches!(self, Fun::Sin | Fun::Cos | Fun::Tan)
    }

    /// Writes the `f64` function of `args` (`arity` values) with `a`.
    pub fn build<A: Arith>(self, a: &mut A, args: &[A::F]) -> A::F {
        match self {
            Fun::Sin => trig::sin(a, args[0]),
            Fun::Cos => trig::cos(a, args[0]),
            Fun::Tan => trig::tan(a, args[0]),
            Fun::Asin => inverse::asin(a, args[0]),
            Fun::Acos => inverse::acos(a, args[0]),
            Fun::Atan => inverse::atan(a, args[0]),
            Fun::Atan2 => inverse::atan2(a, args[0], args[1]),
            Fun::Exp => exp_log::exp(a, args[0]),
            Fun::Exp2 => exp_log::exp2(a, args[0]),
            Fun::Log => exp_log::log(a, args[0]),
            Fun::Log2 => exp_log::log2(a, args[0]),
            Fun::Pow => exp_log::pow(a, args[0], args[1]),
        }
    }
}

/// A double-double value `hi + lo`.
#[derive(Clone, Copy)]
pub(crate) struct Dd<F> {
    pub hi: F,
    pub lo: F,
}

/// `p(x) = coeffs[0] + coeffs[1] x + ...`, by Horner's rule with fused multiply-adds.
pub(crate) fn horner<A: Arith>(a: &mut A, x: A::F, coeffs: &[f64]) -> A::F {
    let (last, rest) = coeffs.split_last().expect("a polynomial has coefficients");
    let mut acc = a.num(*last);
    for &c in rest.iter().rev() {
        let c = a.num(c);
        acc = a.fma(acc, x, c);
    }
    acc
}

/// `x + y` exactly, as the rounded sum and its error (any magnitudes).
pub(crate) fn two_sum<A: Arith>(a: &mut A, x: A::F, y: A::F) -> Dd<A::F> {
    let s = a.add(x, y);
    let yy = a.sub(s, x);
    let xx = a.sub(s, yy);
    let ex = a.sub(x, xx);
    let ey = a.sub(y, yy);
    let lo = a.add(ex, ey);
    Dd { hi: s, lo }
}

/// `x + y` exactly when `|x| >= |y|` (or `x` is 0).
pub(crate) fn fast_two_sum<A: Arith>(a: &mut A, x: A::F, y: A::F) -> Dd<A::F> {
    let s = a.add(x, y);
    let t = a.sub(s, x);
    let lo = a.sub(y, t);
    Dd { hi: s, lo }
}

/// `x * y` exactly, as the rounded product and its error.
pub(crate) fn two_prod<A: Arith>(a: &mut A, x: A::F, y: A::F) -> Dd<A::F> {
    let p = a.mul(x, y);
    let np = a.neg(p);
    let lo = a.fma(x, y, np);
    Dd { hi: p, lo }
}

/// Whether the sign bit of `x` is set (true for -0 and negative NaNs).
pub(crate) fn sign_bit<A: Arith>(a: &mut A, x: A::F) -> A::P {
    let bits = a.to_bits(x);
    let zero = a.int(0);
    a.icmp(Cmp::Lt, bits, zero)
}

/// `2^k` for `-1022 <= k <= 1023`.
pub(crate) fn pow2<A: Arith>(a: &mut A, k: A::I) -> A::F {
    let bias = a.int(1023);
    let biased = a.iadd(k, bias);
    let at = a.int(52);
    let bits = a.shl(biased, at);
    a.bits_to_float(bits)
}

/// Taylor coefficients `sign^n / denominator(n)` for `n` in `range`.
pub(crate) fn series(range: std::ops::RangeInclusive<u32>, term: impl Fn(u32) -> f64) -> Vec<f64> {
    range.map(term).collect()
}

/// `1 / n!` rounded once (n! is exact in binary64 up to 22!).
pub(crate) fn inv_factorial(n: u32) -> f64 {
    1.0 / (1..=n).map(f64::from).product::<f64>()
}

/// The distance between two doubles in units in the last place (0 for two NaNs; a NaN and a
/// number are as far apart as can be). Used to state and check the library's error bounds.
pub fn ulps(a: f64, b: f64) -> u64 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() {
            0
        } else {
            u64::MAX
        };
    }
    let order = |v: f64| {
        let bits = v.to_bits() as i64;
        if bits < 0 {
            i64::MIN.wrapping_sub(bits)
        } else {
            bits
        }
    };
    order(a).abs_diff(order(b))
}

/// [`ulps`] for floats.
pub fn ulps_f32(a: f32, b: f32) -> u64 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() {
            0
        } else {
            u64::MAX
        };
    }
    let order = |v: f32| {
        let bits = v.to_bits() as i32;
        if bits < 0 {
            i32::MIN.wrapping_sub(bits)
        } else {
            bits
        }
    };
    u64::from(order(a).abs_diff(order(b)))
}

#[cfg(test)]
mod float32_int_tests;
#[cfg(test)]
mod float32_tests;
#[cfg(test)]
mod soft_tests;
#[cfg(test)]
mod tests;
