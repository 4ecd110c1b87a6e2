//! `exp`, `exp2`, `log`, `log2` and `pow`.
//!
//! `exp`: `x = k ln2 + r` with `|r| <= ln2 / 2` (Cody–Waite with a 42-bit `ln2`, so `k ln2_hi`
//! is exact), a degree-13 Taylor polynomial, and `2^k` applied in two halves so that results
//! in the subnormal range are rounded once. `log`: `x = 2^e m`, `m` in `[sqrt(1/2), sqrt(2))`,
//! `log m = 2 atanh(s)` with `s = (m-1)/(m+1)` carried as a double-double, giving `log x` to
//! about 2^-64 relative: enough for `pow = exp(y log x)` to be within about an ulp.

use super::consts::*;
use super::{
    fast_two_sum, horner, inv_factorial, pow2, series, sign_bit, two_prod, Arith, Cmp, Dd,
};

/// Beyond these, `exp` is `inf` or 0 (the argument is clamped to them first).
const EXP_UPPER: f64 = 710.0;
const EXP_LOWER: f64 = -746.0;

/// `exp(x)`.
pub fn exp<A: Arith>(a: &mut A, x: A::F) -> A::F {
    let zero = a.num(0.0);
    exp_dd(a, Dd { hi: x, lo: zero })
}

/// `2^x`.
pub fn exp2<A: Arith>(a: &mut A, x: A::F) -> A::F {
    let x = clamp(a, x, -1076.0, 1025.0);
    let kf = a.rint(x);
    let r = a.sub(x, kf);
    let ln2_hi = a.num(LN2_HI);
    let ln2_lo = a.num(LN2_LO);
    let t = two_prod(a, r, ln2_hi);
    let tail = a.fma(r, ln2_lo, t.lo);
    let k = float_to_int(a, kf);
    exp_core(a, k, t.hi, tail)
}

/// `exp(x.hi + x.lo)`; `x.lo` is ignored where `x.hi` is outside the finite range.
fn exp_dd<A: Arith>(a: &mut A, x: Dd<A::F>) -> A::F {
    let hi = clamp(a, x.hi, EXP_LOWER, EXP_UPPER);
    let same = a.cmp(Cmp::Eq, hi, x.hi);
    let zero = a.num(0.0);
    let lo = a.select(same, x.lo, zero);
    let log2e = a.num(INV_LN2_HI);
    let scaled = a.mul(hi, log2e);
    let kf = a.rint(scaled);
    let nkf = a.neg(kf);
    let cut_hi = a.num(LN2_CUT_HI);
    let cut_lo = a.num(LN2_CUT_LO);
    let r1 = a.fma(nkf, cut_hi, hi);
    let t = a.mul(kf, cut_lo);
    let rh = a.sub(r1, t);
    let d = a.sub(r1, rh);
    let d = a.sub(d, t);
    let rl = a.add(d, lo);
    // x.lo may be up to half an ulp of x.hi: fold it in so that rl is below 2^-54.
    let r = super::two_sum(a, rh, rl);
    let k = float_to_int(a, kf);
    exp_core(a, k, r.hi, r.lo)
}

/// `2^k exp(rh + rl)` for `|rh| <= 0.35` and `-1076 <= k <= 1025`.
fn exp_core<A: Arith>(a: &mut A, k: A::I, rh: A::F, rl: A::F) -> A::F {
    let coeffs = series(2..=13, inv_factorial);
    let p = horner(a, rh, &coeffs);
    let z = a.mul(rh, rh);
    // exp(rh + rl) = exp(rh) (1 + rl): rl (1 + rh) is its first-order part.
    let rl = a.fma(rl, rh, rl);
    let q = a.fma(z, p, rl);
    let sum = a.add(rh, q);
    let one = a.num(1.0);
    let e = a.add(one, sum);
    let one_i = a.int(1);
    let k1 = a.ashr(k, one_i);
    let k2 = a.isub(k, k1);
    let s1 = pow2(a, k1);
    let s2 = pow2(a, k2);
    let e = a.mul(e, s1);
    a.mul(e, s2)
}

fn clamp<A: Arith>(a: &mut A, x: A::F, lower: f64, upper: f64) -> A::F {
    let upper = a.num(upper);
    let lower = a.num(lower);
    let above = a.cmp(Cmp::Gt, x, upper);
    let x = a.select(above, upper, x);
    let below = a.cmp(Cmp::Lt, x, lower);
    a.select(below, lower, x)
}

/// An integral `f64` (within the `i64` range) as an integer.
fn float_to_int<A: Arith>(a: &mut A, x: A::F) -> A::I {
    // 2^52 + x has x in its low mantissa bits for |x| < 2^51.
    let magic = a.num(6755399441055744.0);
    let shifted = a.add(x, magic);
    let bits = a.to_bits(shifted);
    let magic_bits = a.int(6755399441055744.0f64.to_bits() as i64);
    a.isub(bits, magic_bits)
}

/// `log x` as a double-double, for finite `x > 0`.
fn log_dd<A: Arith>(a: &mut A, x: A::F) -> Dd<A::F> {
    let min_normal = a.num(f64::MIN_POSITIVE);
    let sub = a.cmp(Cmp::Lt, x, min_normal);
    let two54 = a.num(18014398509481984.0);
    let scaled = a.mul(x, two54);
    let x = a.select(sub, scaled, x);
    let bits = a.to_bits(x);
    let at = a.int(52);
    let biased = a.lshr(bits, at);
    let bias = a.int(1023);
    let bias_sub = a.int(1023 + 54);
    let bias = a.select_int(sub, bias_sub, bias);
    let e = a.isub(biased, bias);
    let mant_mask = a.int((1i64 << 52) - 1);
    let one_bits = a.int(1023i64 << 52);
    let mbits = a.iand(bits, mant_mask);
    let mbits = a.ior(mbits, one_bits);
    let m = a.bits_to_float(mbits);
    let sqrt2 = a.num(std::f64::consts::SQRT_2);
    let big = a.cmp(Cmp::Gt, m, sqrt2);
    let half = a.num(0.5);
    let m_half = a.mul(m, half);
    let m = a.select(big, m_half, m);
    let one_i = a.int(1);
    let e_up = a.iadd(e, one_i);
    let e = a.select_int(big, e_up, e);
    let ef = a.int_to_float(e);
    let log_m = log_mantissa(a, m);
    // e ln2 + log m, with e * LN2_CUT_HI exact.
    let cut_hi = a.num(LN2_CUT_HI);
    let cut_lo = a.num(LN2_CUT_LO);
    let eh = a.mul(ef, cut_hi);
    let sum = super::two_sum(a, eh, log_m.hi);
    let el = a.mul(ef, cut_lo);
    let low = a.add(log_m.lo, el);
    let low = a.add(sum.lo, low);
    fast_two_sum(a, sum.hi, low)
}

/// `log m` for `m` in `[sqrt(1/2), sqrt(2)]`, as a double-double.
fn log_mantissa<A: Arith>(a: &mut A, m: A::F) -> Dd<A::F> {
    let one = a.num(1.0);
    let two = a.num(2.0);
    let f = a.sub(m, one);
    // s = f / (2 + f) as sh + sl.
    let u = a.add(two, f);
    let u_minus_two = a.sub(u, two);
    let ul = a.sub(f, u_minus_two);
    let sh = a.div(f, u);
    let nsh = a.neg(sh);
    let res = a.fma(nsh, u, f);
    let res = a.fma(nsh, ul, res);
    let sl = a.div(res, u);
    // (2/3) s^3 as a double-double.
    let z = two_prod(a, sh, sh);
    let c = two_prod(a, z.hi, sh);
    let c_lo = a.fma(z.lo, sh, c.lo);
    let two_thirds_hi = a.num(TWO_THIRDS_HI);
    let two_thirds_lo = a.num(TWO_THIRDS_LO);
    let t1 = two_prod(a, c.hi, two_thirds_hi);
    let tl = a.mul(c.hi, two_thirds_lo);
    let tl = a.fma(c_lo, two_thirds_hi, tl);
    let t1_lo = a.add(t1.lo, tl);
    // The rest: (2/5) s^5 + (2/7) s^7 + ... = s^5 Q(s^2).
    let coeffs = series(2..=13, |k| 2.0 / f64::from(2 * k + 1));
    let q = horner(a, z.hi, &coeffs);
    let s5 = a.mul(c.hi, z.hi);
    let tail = a.mul(s5, q);
    // 2 s^2 sl: the first-order effect of sl on (2/3) s^3.
    let zsl = a.mul(z.hi, sl);
    let tail = a.fma(two, zsl, tail);
    let two_sh = a.mul(two, sh);
    let two_sl = a.mul(two, sl);
    let lead = fast_two_sum(a, two_sh, t1.hi);
    let low = a.add(t1_lo, tail);
    let low = a.add(two_sl, low);
    let low = a.add(lead.lo, low);
    Dd {
        hi: lead.hi,
        lo: low,
    }
}

/// Where `log` is defined by a formula (finite, positive): the argument to evaluate it on,
/// else 1; and the special result for the rest.
fn log_special<A: Arith>(a: &mut A, x: A::F) -> (A::F, A::P, A::F) {
    let zero = a.num(0.0);
    let inf = a.num(f64::INFINITY);
    let positive = a.cmp(Cmp::Gt, x, zero);
    let finite = a.cmp(Cmp::Lt, x, inf);
    let regular = a.and(positive, finite);
    let one = a.num(1.0);
    let arg = a.select(regular, x, one);
    // x == 0: -inf; x == +inf: inf; x < 0 or NaN: NaN.
    let is_zero = a.cmp(Cmp::Eq, x, zero);
    let ninf = a.num(f64::NEG_INFINITY);
    let nan = a.num(f64::NAN);
    let is_inf = a.cmp(Cmp::Eq, x, inf);
    let special = a.select(is_inf, inf, nan);
    let special = a.select(is_zero, ninf, special);
    let is_nan = a.is_nan(x);
    let quiet = a.add(x, x);
    let special = a.select(is_nan, quiet, special);
    (arg, regular, special)
}

/// `log(x)`.
pub fn log<A: Arith>(a: &mut A, x: A::F) -> A::F {
    let (arg, regular, special) = log_special(a, x);
    let l = log_dd(a, arg);
    a.select(regular, l.hi, special)
}

/// `log2(x)`.
pub fn log2<A: Arith>(a: &mut A, x: A::F) -> A::F {
    let (arg, regular, special) = log_special(a, x);
    let l = log_dd(a, arg);
    let inv_hi = a.num(INV_LN2_HI);
    let inv_lo = a.num(INV_LN2_LO);
    let t = two_prod(a, l.hi, inv_hi);
    let cross = a.mul(l.hi, inv_lo);
    let cross = a.fma(l.lo, inv_hi, cross);
    let low = a.add(t.lo, cross);
    let r = a.add(t.hi, low);
    a.select(regular, r, special)
}

/// `pow(x, y)` with the special cases of C99 Annex F.
pub fn pow<A: Arith>(a: &mut A, x: A::F, y: A::F) -> A::F {
    let zero = a.num(0.0);
    let one = a.num(1.0);
    let inf = a.num(f64::INFINITY);
    let ax = a.abs(x);
    let ay = a.abs(y);
    // log|x| as a double-double; |x| = 0 or inf give -inf or inf with no low part.
    let (arg, regular, special) = log_special(a, ax);
    let l = log_dd(a, arg);
    let lh = a.select(regular, l.hi, special);
    let ll = a.select(regular, l.lo, zero);
    let p = two_prod(a, y, lh);
    let low = a.fma(y, ll, p.lo);
    let p_abs = a.abs(p.hi);
    let p_inf = a.cmp(Cmp::Eq, p_abs, inf);
    let low = a.select(p_inf, zero, low);
    let magnitude = exp_dd(a, Dd { hi: p.hi, lo: low });
    // Sign: negative x to an odd integer power.
    let y_int = {
        let r = a.rint(y);
        a.cmp(Cmp::Eq, r, y)
    };
    let half = a.num(0.5);
    let y_half = a.mul(y, half);
    let y_half_int = {
        let r = a.rint(y_half);
        a.cmp(Cmp::Eq, r, y_half)
    };
    let not_even = a.not(y_half_int);
    let y_odd = a.and(y_int, not_even);
    let x_neg = sign_bit(a, x);
    let flip = a.and(x_neg, y_odd);
    let negated = a.neg(magnitude);
    let r = a.select(flip, negated, magnitude);
    // Negative finite x to a non-integer power: NaN.
    let not_int = a.not(y_int);
    let bad = a.and(x_neg, not_int);
    let finite_nonzero = a.and(regular, bad);
    let nan = a.num(f64::NAN);
    let r = a.select(finite_nonzero, nan, r);
    let x_nan = a.is_nan(x);
    let y_nan = a.is_nan(y);
    let any_nan = a.or(x_nan, y_nan);
    let quiet = a.add(x, y);
    let r = a.select(any_nan, quiet, r);
    // pow(x, 0) = pow(1, y) = pow(-1, +-inf) = 1.
    let y_zero = a.cmp(Cmp::Eq, y, zero);
    let x_one = a.cmp(Cmp::Eq, x, one);
    let ax_one = a.cmp(Cmp::Eq, ax, one);
    let y_inf = a.cmp(Cmp::Eq, ay, inf);
    let unit = a.and(ax_one, y_inf);
    let unit = a.or(unit, x_one);
    let unit = a.or(unit, y_zero);
    a.select(unit, one, r)
}
