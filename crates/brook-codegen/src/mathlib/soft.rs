//! `double` arithmetic from 64-bit integer operations: [`Soft`], an [`Arith`] whose values
//! are a double's bits, for devices without `double` hardware (Vulkan devices without
//! `shaderFloat64`: Apple GPUs through MoltenVK, most mobile GPUs).
//!
//! Each operation is IEEE 754's, rounded to nearest even, subnormals included: addition,
//! multiplication, rounding to an integer and conversions are written here over the integer
//! operations of another `Arith`; division and square root are the library's own
//! ([`super::exact`]), and the fused multiply-add is the library's emulation
//! ([`super::fma::emulated`]), as on a device whose `fma` is not fused. So every routine of the
//! library gives the same bits over `Soft` as over hardware doubles, and `float` operations
//! computed through doubles ([`widen_f32`], [`narrow_to_f32`]) need no `double` hardware.
//!
//! A NaN operand gives a quiet NaN (the first NaN operand's, quieted); an invalid operation
//! (`inf - inf`, `0 * inf`) the default NaN.

use super::{Arith, Cmp};

const SIGN: i64 = i64::MIN;
const MAGNITUDE: i64 = i64::MAX;
const INFINITY: i64 = 0x7FF0_0000_0000_0000;
const FRACTION: i64 = 0x000F_FFFF_FFFF_FFFF;
const HIDDEN: i64 = 1 << 52;
const QUIET: i64 = 1 << 51;
/// The NaN an invalid operation gives.
const DEFAULT_NAN: i64 = 0x7FF8_0000_0000_0000;

/// A binary interchange format's fields.
#[derive(Clone, Copy)]
struct Format {
    fraction_bits: i64,
    bias: i64,
}

const BINARY64: Format = Format {
    fraction_bits: 52,
    bias: 1023,
};
const BINARY32: Format = Format {
    fraction_bits: 23,
    bias: 127,
};

impl Format {
    /// The biased exponent of infinities and NaNs.
    fn max_field(self) -> i64 {
        2 * self.bias + 1
    }
}

/// Doubles as their bits, computed with the integer operations of `inner`.
pub struct Soft<'a, A: Arith> {
    pub inner: &'a mut A,
}

impl<'a, A: Arith> Soft<'a, A> {
    pub fn new(inner: &'a mut A) -> Self {
        Soft { inner }
    }

    fn k(&mut self, value: i64) -> A::I {
        self.inner.int(value)
    }

    fn eq_int(&mut self, a: A::I, b: A::I) -> A::P {
        self.inner.icmp(Cmp::Eq, a, b)
    }

    fn is_zero_int(&mut self, a: A::I) -> A::P {
        let zero = self.k(0);
        self.eq_int(a, zero)
    }

    fn magnitude(&mut self, x: A::I) -> A::I {
        let mask = self.k(MAGNITUDE);
        self.inner.iand(x, mask)
    }

    fn sign_of(&mut self, x: A::I) -> A::I {
        let mask = self.k(SIGN);
        self.inner.iand(x, mask)
    }

    fn is_infinite(&mut self, x: A::I) -> A::P {
        let m = self.magnitude(x);
        let inf = self.k(INFINITY);
        self.eq_int(m, inf)
    }

    fn is_zero(&mut self, x: A::I) -> A::P {
        let m = self.magnitude(x);
        self.is_zero_int(m)
    }

    fn quieted(&mut self, x: A::I) -> A::I {
        let quiet = self.k(QUIET);
        self.inner.ior(x, quiet)
    }

    fn max_int(&mut self, a: A::I, b: A::I) -> A::I {
        let less = self.inner.icmp(Cmp::Lt, a, b);
        self.inner.select_int(less, b, a)
    }

    /// `p ? 1 : 0`.
    fn bit(&mut self, p: A::P) -> A::I {
        let (one, zero) = (self.k(1), self.k(0));
        self.inner.select_int(p, one, zero)
    }

    /// A finite double's significand with its hidden bit (53 bits at most) and the biased
    /// exponent it is scaled by (1 for subnormals): `|x| = mant * 2^(field - 1075)`.
    fn fields(&mut self, x: A::I) -> (A::I, A::I) {
        let fifty_two = self.k(52);
        let shifted = self.inner.lshr(x, fifty_two);
        let eleven_bits = self.k(0x7FF);
        let field = self.inner.iand(shifted, eleven_bits);
        let fraction_mask = self.k(FRACTION);
        let fraction = self.inner.iand(x, fraction_mask);
        let subnormal = self.is_zero_int(field);
        let (zero, hidden) = (self.k(0), self.k(HIDDEN));
        let lead = self.inner.select_int(subnormal, zero, hidden);
        let mant = self.inner.ior(fraction, lead);
        let one = self.k(1);
        (mant, self.max_int(field, one))
    }

    /// A finite nonzero double as `m * 2^(exp - 63)` with bit 63 of `m` set: `(exp, m)`.
    fn normalized(&mut self, x: A::I) -> (A::I, A::I) {
        let (mant, field) = self.fields(x);
        let lz = self.inner.clz(mant);
        let m = self.inner.shl(mant, lz);
        // The leading bit of `mant` (bit 63 - lz) is worth 2^(field - 1075 + 63 - lz).
        let base = self.k(-1012);
        let exp = self.inner.iadd(field, base);
        (self.inner.isub(exp, lz), m)
    }

    /// `sign | m * 2^(exp - 63)` rounded to `format` (nearest, ties to even), where `m` has
    /// bit 63 set and `sticky` says whether nonzero bits lie below it; infinities past the
    /// largest finite value, subnormals below the smallest normal one.
    fn round_pack(&mut self, format: Format, sign: A::I, exp: A::I, m: A::I, sticky: A::P) -> A::I {
        let bias = self.k(format.bias);
        let biased = self.inner.iadd(exp, bias);
        // Below the normal range: shifted right to the subnormals' scale.
        let one = self.k(1);
        let tiny = self.inner.icmp(Cmp::Lt, biased, one);
        let by = self.inner.isub(one, biased);
        let shifted = self.inner.lshr(m, by);
        let back = self.inner.shl(shifted, by);
        let exact = self.eq_int(back, m);
        let lost = self.inner.not(exact);
        let m = self.inner.select_int(tiny, shifted, m);
        let tiny_lost = self.inner.and(tiny, lost);
        let sticky = self.inner.or(sticky, tiny_lost);
        let biased = self.inner.select_int(tiny, one, biased);
        // Rounding: the dropped bits against half a unit.
        let drop = 63 - format.fraction_bits;
        let by_drop = self.k(drop);
        let mant = self.inner.lshr(m, by_drop);
        let dropped_mask = self.k((1 << drop) - 1);
        let rest = self.inner.iand(m, dropped_mask);
        let half = self.k(1 << (drop - 1));
        let above = self.inner.ult(half, rest);
        let tie = self.eq_int(rest, half);
        let last = self.inner.iand(mant, one);
        let odd = self.eq_int(last, one);
        let tie_up = self.inner.or(sticky, odd);
        let tie_up = self.inner.and(tie, tie_up);
        let up = self.inner.or(above, tie_up);
        let up = self.bit(up);
        let mant = self.inner.iadd(mant, up);
        // The significand's carry into the exponent field is the right result (to the next
        // binade, or from the subnormals to the smallest normal).
        let below = self.inner.isub(biased, one);
        let fraction_bits = self.k(format.fraction_bits);
        let field = self.inner.shl(below, fraction_bits);
        let bits = self.inner.iadd(field, mant);
        let inf = self.k(format.max_field() << format.fraction_bits);
        let finite = self.inner.ult(bits, inf);
        let max_field = self.k(format.max_field());
        let in_range = self.inner.icmp(Cmp::Lt, biased, max_field);
        let finite = self.inner.and(finite, in_range);
        let bits = self.inner.select_int(finite, bits, inf);
        self.inner.ior(bits, sign)
    }

    /// The sum of two doubles, neither NaN nor infinite nor zero (the caller selects those).
    fn add_finite(&mut self, x: A::I, y: A::I) -> A::I {
        let (ax, ay) = (self.magnitude(x), self.magnitude(y));
        let y_bigger = self.inner.ult(ax, ay);
        let big = self.inner.select_int(y_bigger, y, x);
        let small = self.inner.select_int(y_bigger, x, y);
        let (mant_big, field_big) = self.fields(big);
        let (mant_small, field_small) = self.fields(small);
        // Ten guard bits; the smaller operand's bits shifted out are kept as a sticky bit.
        let ten = self.k(10);
        let big_m = self.inner.shl(mant_big, ten);
        let small_m = self.inner.shl(mant_small, ten);
        let d = self.inner.isub(field_big, field_small);
        let aligned = self.inner.lshr(small_m, d);
        let back = self.inner.shl(aligned, d);
        let exact = self.eq_int(back, small_m);
        let lost = self.inner.not(exact);
        let lost = self.bit(lost);
        let aligned = self.inner.ior(aligned, lost);
        let differ = self.product_sign(big, small);
        let same_sign = self.is_zero_int(differ);
        let sum = self.inner.iadd(big_m, aligned);
        let difference = self.inner.isub(big_m, aligned);
        let s = self.inner.select_int(same_sign, sum, difference);
        let cancelled = self.is_zero_int(s);
        let lz = self.inner.clz(s);
        let m = self.inner.shl(s, lz);
        // `s` is worth s * 2^(field - 1085): its leading bit 2^(field - 1022 - lz).
        let base = self.k(-1022);
        let exp = self.inner.iadd(field_big, base);
        let exp = self.inner.isub(exp, lz);
        let sign = self.sign_of(big);
        let exact = self.never();
        let r = self.round_pack(BINARY64, sign, exp, m, exact);
        let zero = self.k(0);
        self.inner.select_int(cancelled, zero, r)
    }

    /// The product of two finite nonzero doubles.
    fn mul_finite(&mut self, x: A::I, y: A::I) -> A::I {
        let (ex, mx) = self.normalized(x);
        let (ey, my) = self.normalized(y);
        let hi = self.inner.umulhi(mx, my);
        let lo = self.inner.imul(mx, my);
        let zero = self.k(0);
        let top = self.inner.icmp(Cmp::Lt, hi, zero);
        let one = self.k(1);
        let hi_up = self.inner.shl(hi, one);
        let sixty_three = self.k(63);
        let lo_top = self.inner.lshr(lo, sixty_three);
        let lower = self.inner.ior(hi_up, lo_top);
        let m = self.inner.select_int(top, hi, lower);
        let lo_up = self.inner.shl(lo, one);
        let rest = self.inner.select_int(top, lo, lo_up);
        let rest_zero = self.is_zero_int(rest);
        let sticky = self.inner.not(rest_zero);
        let exp = self.inner.iadd(ex, ey);
        let carry = self.bit(top);
        let exp = self.inner.iadd(exp, carry);
        let sign = self.product_sign(x, y);
        self.round_pack(BINARY64, sign, exp, m, sticky)
    }

    /// `r`, unless an operand is a NaN: the first NaN, quieted.
    fn nan_first(&mut self, x: A::I, y: A::I, r: A::I) -> A::I {
        let (nx, ny) = (self.is_nan(x), self.is_nan(y));
        let (qx, qy) = (self.quieted(x), self.quieted(y));
        let r = self.inner.select_int(ny, qy, r);
        self.inner.select_int(nx, qx, r)
    }

    /// An integer's magnitude `mag` (as unsigned) with sign bit `sign`, rounded to a double.
    fn integer_to_double(&mut self, sign: A::I, mag: A::I) -> A::I {
        let zero_in = self.is_zero_int(mag);
        let lz = self.inner.clz(mag);
        let m = self.inner.shl(mag, lz);
        let sixty_three = self.k(63);
        let exp = self.inner.isub(sixty_three, lz);
        let exact = self.never();
        let r = self.round_pack(BINARY64, sign, exp, m, exact);
        let zero = self.k(0);
        self.inner.select_int(zero_in, zero, r)
    }

    /// A false predicate (no bits below a significand).
    fn never(&mut self) -> A::P {
        let one = self.k(1);
        self.inner.icmp(Cmp::Lt, one, one)
    }

    /// The sign bit of `x * y`.
    fn product_sign(&mut self, x: A::I, y: A::I) -> A::I {
        // x ^ y = (x | y) - (x & y).
        let either = self.inner.ior(x, y);
        let both = self.inner.iand(x, y);
        let xor = self.inner.isub(either, both);
        self.sign_of(xor)
    }
}

/// The double of `float` bits `bits` (the low 32 bits of an integer; exact).
pub fn widen_f32<A: Arith>(s: &mut Soft<'_, A>, bits: A::I) -> A::I {
    let thirty_one = s.k(31);
    let sign_bit = s.inner.lshr(bits, thirty_one);
    let sixty_three = s.k(63);
    let sign = s.inner.shl(sign_bit, sixty_three);
    let twenty_three = s.k(23);
    let shifted = s.inner.lshr(bits, twenty_three);
    let byte = s.k(0xFF);
    let field = s.inner.iand(shifted, byte);
    let fraction_mask = s.k(0x7F_FFFF);
    let fraction = s.inner.iand(bits, fraction_mask);
    // Infinities and NaNs: the fraction moved to the top of the double's.
    let twenty_nine = s.k(29);
    let wide_fraction = s.inner.shl(fraction, twenty_nine);
    let inf = s.k(INFINITY);
    let special = s.inner.ior(inf, wide_fraction);
    let special = s.inner.ior(special, sign);
    let is_special = s.eq_int(field, byte);
    // Finite values: `mant * 2^(field - 150)`, normalized and packed (exactly).
    let subnormal = s.is_zero_int(field);
    let (zero, hidden) = (s.k(0), s.k(1 << 23));
    let lead = s.inner.select_int(subnormal, zero, hidden);
    let mant = s.inner.ior(fraction, lead);
    let one = s.k(1);
    let field = s.max_int(field, one);
    let lz = s.inner.clz(mant);
    let m = s.inner.shl(mant, lz);
    let base = s.k(-87);
    let exp = s.inner.iadd(field, base);
    let exp = s.inner.isub(exp, lz);
    let exact = s.never();
    let finite = s.round_pack(BINARY64, sign, exp, m, exact);
    let is_zero = s.is_zero_int(mant);
    let r = s.inner.select_int(is_zero, sign, finite);
    s.inner.select_int(is_special, special, r)
}

/// The `float` nearest double `x`, as bits in the low 32 bits of an integer.
pub fn narrow_to_f32<A: Arith>(s: &mut Soft<'_, A>, x: A::I) -> A::I {
    let sixty_three = s.k(63);
    let sign_bit = s.inner.lshr(x, sixty_three);
    let thirty_one = s.k(31);
    let sign = s.inner.shl(sign_bit, thirty_one);
    let fraction_mask = s.k(FRACTION);
    let fraction = s.inner.iand(x, fraction_mask);
    let twenty_nine = s.k(29);
    let top = s.inner.lshr(fraction, twenty_nine);
    let nan = s.k(0x7FC0_0000);
    let nan = s.inner.ior(nan, top);
    let nan = s.inner.ior(nan, sign);
    let inf = s.k(0x7F80_0000);
    let inf = s.inner.ior(inf, sign);
    let is_nan = s.is_nan(x);
    let is_inf = s.is_infinite(x);
    let is_zero = s.is_zero(x);
    let (exp, m) = s.normalized(x);
    let exact = s.never();
    let finite = s.round_pack(BINARY32, sign, exp, m, exact);
    let r = s.inner.select_int(is_zero, sign, finite);
    let r = s.inner.select_int(is_inf, inf, r);
    s.inner.select_int(is_nan, nan, r)
}

impl<A: Arith> Arith for Soft<'_, A> {
    type F = A::I;
    type I = A::I;
    type P = A::P;

    fn num(&mut self, value: f64) -> A::I {
        self.k(value.to_bits() as i64)
    }
    fn int(&mut self, value: i64) -> A::I {
        self.k(value)
    }

    fn add(&mut self, x: A::I, y: A::I) -> A::I {
        let finite = self.add_finite(x, y);
        // Zeros: the other operand; two zeros: -0 only when both are.
        let (zx, zy) = (self.is_zero(x), self.is_zero(y));
        let r = self.inner.select_int(zy, x, finite);
        let r = self.inner.select_int(zx, y, r);
        let both_zero = self.inner.and(zx, zy);
        let zeros = self.inner.iand(x, y);
        let r = self.inner.select_int(both_zero, zeros, r);
        // Infinities: the infinite operand; opposite infinities: invalid.
        let (ix, iy) = (self.is_infinite(x), self.is_infinite(y));
        let r = self.inner.select_int(iy, y, r);
        let r = self.inner.select_int(ix, x, r);
        let both_inf = self.inner.and(ix, iy);
        let same = self.eq_int(x, y);
        let opposite = self.inner.not(same);
        let invalid = self.inner.and(both_inf, opposite);
        let default_nan = self.k(DEFAULT_NAN);
        let r = self.inner.select_int(invalid, default_nan, r);
        self.nan_first(x, y, r)
    }
    fn sub(&mut self, x: A::I, y: A::I) -> A::I {
        let minus_y = self.neg(y);
        let r = self.add(x, minus_y);
        // A NaN `y` keeps its own sign.
        let ny = self.is_nan(y);
        let qy = self.quieted(y);
        let r = self.inner.select_int(ny, qy, r);
        let nx = self.is_nan(x);
        let qx = self.quieted(x);
        self.inner.select_int(nx, qx, r)
    }
    fn mul(&mut self, x: A::I, y: A::I) -> A::I {
        let finite = self.mul_finite(x, y);
        let sign = self.product_sign(x, y);
        let (zx, zy) = (self.is_zero(x), self.is_zero(y));
        let (ix, iy) = (self.is_infinite(x), self.is_infinite(y));
        let any_zero = self.inner.or(zx, zy);
        let r = self.inner.select_int(any_zero, sign, finite);
        let any_inf = self.inner.or(ix, iy);
        let inf = self.k(INFINITY);
        let signed_inf = self.inner.ior(inf, sign);
        let r = self.inner.select_int(any_inf, signed_inf, r);
        let invalid = self.inner.and(any_zero, any_inf);
        let default_nan = self.k(DEFAULT_NAN);
        let r = self.inner.select_int(invalid, default_nan, r);
        self.nan_first(x, y, r)
    }
    fn div(&mut self, x: A::I, y: A::I) -> A::I {
        super::exact::div(self, x, y)
    }
    fn fma(&mut self, x: A::I, y: A::I, z: A::I) -> A::I {
        super::fma::emulated(self, x, y, z)
    }
    fn sqrt(&mut self, x: A::I) -> A::I {
        super::exact::sqrt(self, x)
    }
    fn round_to_f32(&mut self, x: A::I) -> A::I {
        let narrow = narrow_to_f32(self, x);
        widen_f32(self, narrow)
    }
    fn neg(&mut self, x: A::I) -> A::I {
        let sign = self.k(SIGN);
        let flipped = self.inner.ior(x, sign);
        let cleared = self.magnitude(x);
        let negative = self.inner.icmp(Cmp::Lt, x, cleared);
        self.inner.select_int(negative, cleared, flipped)
    }
    fn abs(&mut self, x: A::I) -> A::I {
        self.magnitude(x)
    }
    fn rint(&mut self, x: A::I) -> A::I {
        // |x| >= 2^52 (integers already), infinities and NaNs: x itself.
        let ax = self.magnitude(x);
        let big = self.k(0x4330_0000_0000_0000);
        let small = self.inner.icmp(Cmp::Lt, ax, big);
        let (mant, field) = self.fields(x);
        // The fraction's bits: 1075 - field of them (53 for 0.5 <= |x| < 1).
        let top = self.k(1075);
        let frac_bits = self.inner.isub(top, field);
        let int_part = self.inner.lshr(mant, frac_bits);
        let back = self.inner.shl(int_part, frac_bits);
        let rest = self.inner.isub(mant, back);
        let one = self.k(1);
        let half_at = self.inner.isub(frac_bits, one);
        let half = self.inner.shl(one, half_at);
        let above = self.inner.ult(half, rest);
        let tie = self.eq_int(rest, half);
        let last = self.inner.iand(int_part, one);
        let odd = self.eq_int(last, one);
        let tie_up = self.inner.and(tie, odd);
        let up = self.inner.or(above, tie_up);
        let up = self.bit(up);
        let rounded = self.inner.iadd(int_part, up);
        let rounded_zero = self.is_zero_int(rounded);
        let mant = self.inner.shl(rounded, frac_bits);
        let below = self.inner.isub(field, one);
        let fifty_two = self.k(52);
        let field_bits = self.inner.shl(below, fifty_two);
        let bits = self.inner.iadd(field_bits, mant);
        let sign = self.sign_of(x);
        let bits = self.inner.ior(bits, sign);
        // Below 1/2, and what rounds to 0: a zero of x's sign.
        let half_value = self.k(0x3FE0_0000_0000_0000);
        let below_half = self.inner.icmp(Cmp::Lt, ax, half_value);
        let to_zero = self.inner.or(below_half, rounded_zero);
        let r = self.inner.select_int(to_zero, sign, bits);
        self.inner.select_int(small, r, x)
    }

    fn cmp(&mut self, op: Cmp, x: A::I, y: A::I) -> A::P {
        // Ordered keys: a negative double's key is minus its magnitude (both zeros 0).
        let key = |s: &mut Self, v: A::I| {
            let m = s.magnitude(v);
            let zero = s.k(0);
            let minus = s.inner.isub(zero, m);
            let negative = s.inner.icmp(Cmp::Lt, v, zero);
            s.inner.select_int(negative, minus, m)
        };
        let (kx, ky) = (key(self, x), key(self, y));
        let r = self.inner.icmp(op, kx, ky);
        let (nx, ny) = (self.is_nan(x), self.is_nan(y));
        let any_nan = self.inner.or(nx, ny);
        let ordered = self.inner.not(any_nan);
        self.inner.and(ordered, r)
    }
    fn is_nan(&mut self, x: A::I) -> A::P {
        let m = self.magnitude(x);
        let inf = self.k(INFINITY);
        self.inner.icmp(Cmp::Gt, m, inf)
    }
    fn and(&mut self, a: A::P, b: A::P) -> A::P {
        self.inner.and(a, b)
    }
    fn or(&mut self, a: A::P, b: A::P) -> A::P {
        self.inner.or(a, b)
    }
    fn not(&mut self, a: A::P) -> A::P {
        self.inner.not(a)
    }
    fn select(&mut self, p: A::P, a: A::I, b: A::I) -> A::I {
        self.inner.select_int(p, a, b)
    }
    fn select_int(&mut self, p: A::P, a: A::I, b: A::I) -> A::I {
        self.inner.select_int(p, a, b)
    }

    fn to_bits(&mut self, a: A::I) -> A::I {
        a
    }
    fn bits_to_float(&mut self, a: A::I) -> A::I {
        a
    }
    fn iadd(&mut self, a: A::I, b: A::I) -> A::I {
        self.inner.iadd(a, b)
    }
    fn isub(&mut self, a: A::I, b: A::I) -> A::I {
        self.inner.isub(a, b)
    }
    fn imul(&mut self, a: A::I, b: A::I) -> A::I {
        self.inner.imul(a, b)
    }
    fn umulhi(&mut self, a: A::I, b: A::I) -> A::I {
        self.inner.umulhi(a, b)
    }
    fn urem(&mut self, a: A::I, b: A::I) -> A::I {
        self.inner.urem(a, b)
    }
    fn iand(&mut self, a: A::I, b: A::I) -> A::I {
        self.inner.iand(a, b)
    }
    fn ior(&mut self, a: A::I, b: A::I) -> A::I {
        self.inner.ior(a, b)
    }
    fn shl(&mut self, a: A::I, by: A::I) -> A::I {
        self.inner.shl(a, by)
    }
    fn lshr(&mut self, a: A::I, by: A::I) -> A::I {
        self.inner.lshr(a, by)
    }
    fn ashr(&mut self, a: A::I, by: A::I) -> A::I {
        self.inner.ashr(a, by)
    }
    fn clz(&mut self, a: A::I) -> A::I {
        self.inner.clz(a)
    }
    fn icmp(&mut self, op: Cmp, a: A::I, b: A::I) -> A::P {
        self.inner.icmp(op, a, b)
    }
    fn ult(&mut self, a: A::I, b: A::I) -> A::P {
        self.inner.ult(a, b)
    }
    fn int_to_float(&mut self, a: A::I) -> A::I {
        let zero = self.k(0);
        let negative = self.inner.icmp(Cmp::Lt, a, zero);
        let minus = self.inner.isub(zero, a);
        let mag = self.inner.select_int(negative, minus, a);
        let sign = self.sign_of(a);
        self.integer_to_double(sign, mag)
    }
    fn uint_to_float(&mut self, a: A::I) -> A::I {
        let zero = self.k(0);
        self.integer_to_double(zero, a)
    }
    fn two_over_pi_word(&mut self, index: A::I) -> A::I {
        self.inner.two_over_pi_word(index)
    }
}
