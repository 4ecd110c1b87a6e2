//! `x * y + z` rounded once, from operations that round each result (for devices whose `fma`
//! rounds the product first: Mesa's lavapipe does, the device probe finds out).
//!
//! The algorithm of Boldo and Melquiond ("Emulation of FMA and correctly rounded sums: proved
//! algorithms using rounding to odd", IEEE Trans. Computers 57(4), 2008): the product exactly
//! as `uh + ul` (Dekker's product over Veltkamp's split), `z + uh` exactly as `th + tl`, the
//! tail `tl + ul` rounded *to odd* (the rounded sum, moved one unit toward the exact sum when
//! inexact and even), and `th + tail` rounded to nearest: one rounding of the exact value.
//!
//! Exact where the split cannot overflow (`|x|, |y| < 2^995`), the product is finite and its
//! error term does not underflow (`|x y| >= 2^-969`, or a product of 0); elsewhere (infinities,
//! NaNs, huge or tiny products) it is the product rounded, then the sum (an infinite `z` kept
//! when the factors are finite): the fused result for every infinity and NaN; the math library
//! never relies on it elsewhere.

use super::{two_sum, Arith, Cmp, Dd};

/// Veltkamp's constant for binary64: `2^27 + 1`.
const SPLITTER: f64 = 134_217_729.0;

/// `x` as `hi + lo` with 26 significant bits in `hi` (exact below `2^996`).
fn split<A: Arith>(a: &mut A, x: A::F) -> Dd<A::F> {
    let c = a.num(SPLITTER);
    let t = a.mul(c, x);
    let d = a.sub(t, x);
    let hi = a.sub(t, d);
    let lo = a.sub(x, hi);
    Dd { hi, lo }
}

/// Dekker's exact product `x * y = hi + lo` (in the domain above).
fn exact_product<A: Arith>(a: &mut A, x: A::F, y: A::F) -> Dd<A::F> {
    let p = a.mul(x, y);
    let xs = split(a, x);
    let ys = split(a, y);
    let hh = a.mul(xs.hi, ys.hi);
    let e = a.sub(hh, p);
    let hl = a.mul(xs.hi, ys.lo);
    let e = a.add(e, hl);
    let lh = a.mul(xs.lo, ys.hi);
    let e = a.add(e, lh);
    let ll = a.mul(xs.lo, ys.lo);
    let lo = a.add(e, ll);
    Dd { hi: p, lo }
}

/// `p + q` rounded to odd: the nearest sum, moved one unit toward the exact sum when it is
/// inexact and its last significand bit is even.
pub(crate) fn add_round_to_odd<A: Arith>(a: &mut A, p: A::F, q: A::F) -> A::F {
    let Dd { hi: s, lo: e } = two_sum(a, p, q);
    let bits = a.to_bits(s);
    let one = a.int(1);
    let last = a.iand(bits, one);
    let zero = a.int(0);
    let even = a.icmp(Cmp::Eq, last, zero);
    let zero_f = a.num(0.0);
    let exact = a.cmp(Cmp::Eq, e, zero_f);
    let inexact = a.not(exact);
    let adjust = a.and(even, inexact);
    // Toward `e`: away from zero when `e` has the sign of `s`.
    let s_negative = super::sign_bit(a, s);
    let e_negative = super::sign_bit(a, e);
    let both = a.and(s_negative, e_negative);
    let neither_s = a.not(s_negative);
    let neither_e = a.not(e_negative);
    let neither = a.and(neither_s, neither_e);
    let same = a.or(both, neither);
    let up = a.iadd(bits, one);
    let down = a.isub(bits, one);
    let moved = a.select_int(same, up, down);
    let out = a.select_int(adjust, moved, bits);
    a.bits_to_float(out)
}

/// `x * y + z` with one rounding (see the module's domain).
pub fn emulated<A: Arith>(a: &mut A, x: A::F, y: A::F, z: A::F) -> A::F {
    let u = exact_product(a, x, y);
    let t = two_sum(a, z, u.hi);
    let tail = add_round_to_odd(a, t.lo, u.lo);
    let fused = a.add(t.hi, tail);
    // A zero result is exact (the product is then exact too): the plain sum has its sign
    // (-0 * y + -0 is -0; the steps above would give +0).
    let sum_plain = a.add(u.hi, z);
    let zero_f = a.num(0.0);
    let fused_zero = a.cmp(Cmp::Eq, fused, zero_f);
    let fused = a.select(fused_zero, sum_plain, fused);
    // Outside the domain: the product rounded, then the sum; an infinite `z` wins over a
    // product that overflowed (the exact product is finite).
    let sum = a.add(u.hi, z);
    let ax = a.abs(x);
    let ay = a.abs(y);
    let huge = a.num(f64::MAX);
    let x_finite = a.cmp(Cmp::Le, ax, huge);
    let y_finite = a.cmp(Cmp::Le, ay, huge);
    let az = a.abs(z);
    let z_finite = a.cmp(Cmp::Le, az, huge);
    let z_nan = a.is_nan(z);
    let z_real = a.not(z_nan);
    let z_unbounded = a.not(z_finite);
    let z_infinite = a.and(z_real, z_unbounded);
    let factors_finite = a.and(x_finite, y_finite);
    let z_wins = a.and(factors_finite, z_infinite);
    let naive = a.select(z_wins, z, sum);
    // A zero `z` beside nonzero factors adds nothing: the fused result is the product
    // rounded once, its sign kept where it underflows to zero (`-0 + 0` would be `+0`).
    let zero_z = a.num(0.0);
    let z_is_zero = a.cmp(Cmp::Eq, z, zero_z);
    let x_zero = a.cmp(Cmp::Eq, x, zero_z);
    let y_zero = a.cmp(Cmp::Eq, y, zero_z);
    let a_factor_zero = a.or(x_zero, y_zero);
    let factors_nonzero = a.not(a_factor_zero);
    let product_alone = a.and(factors_nonzero, z_is_zero);
    let naive = a.select(product_alone, u.hi, naive);
    let ap = a.abs(u.hi);
    let big = a.num(2f64.powi(995));
    let tiny = a.num(2f64.powi(-969));
    let x_ok = a.cmp(Cmp::Lt, ax, big);
    let y_ok = a.cmp(Cmp::Lt, ay, big);
    let p_finite = a.cmp(Cmp::Le, ap, huge);
    let p_big_enough = a.cmp(Cmp::Ge, ap, tiny);
    // An exact zero product (a factor is zero); not one that underflowed to zero.
    let p_range = a.or(p_big_enough, a_factor_zero);
    let ok = a.and(x_ok, y_ok);
    let ok = a.and(ok, p_finite);
    let ok = a.and(ok, p_range);
    let ok = a.and(ok, z_finite);
    a.select(ok, fused, naive)
}

/// `x * y + z` rounded once, as [`emulated`], over a wider domain: a finite factor of
/// `2^995` or more (whose split would overflow) is scaled down by `2^64`, and `z` with it,
/// and the result scaled back up, where every step stays exact: `z` is 0 or at least
/// `2^-958` (so its scaled value keeps every bit) and the scaled result is 0 or normal (so
/// its one rounding is the unscaled one's). Elsewhere, as [`emulated`] (the product rounded,
/// then the sum). For the `fma` a kernel writes; the math library's own are in [`emulated`]'s
/// domain.
pub fn emulated_wide<A: Arith>(a: &mut A, x: A::F, y: A::F, z: A::F) -> A::F {
    let (ax, ay, az) = (a.abs(x), a.abs(y), a.abs(z));
    let x_larger = a.cmp(Cmp::Ge, ax, ay);
    let larger = a.select(x_larger, ax, ay);
    let big = a.num(2f64.powi(995));
    let huge = a.num(f64::MAX);
    let over = a.cmp(Cmp::Ge, larger, big);
    let finite = a.cmp(Cmp::Le, larger, huge);
    let large = a.and(over, finite);
    let zero = a.num(0.0);
    let z_zero = a.cmp(Cmp::Eq, az, zero);
    let least = a.num(2f64.powi(-958));
    let z_kept = a.cmp(Cmp::Ge, az, least);
    let z_scales = a.or(z_zero, z_kept);
    let scale = a.and(large, z_scales);
    let down = a.num(2f64.powi(-64));
    let (xd, yd, zd) = (a.mul(x, down), a.mul(y, down), a.mul(z, down));
    let scale_x = a.and(scale, x_larger);
    let y_larger = a.not(x_larger);
    let scale_y = a.and(scale, y_larger);
    let xs = a.select(scale_x, xd, x);
    let ys = a.select(scale_y, yd, y);
    let zs = a.select(scale, zd, z);
    let r = emulated(a, xs, ys, zs);
    let up = a.num(2f64.powi(64));
    let back = a.mul(r, up);
    // A subnormal scaled result was rounded too early: the product rounded, then the sum.
    let ar = a.abs(r);
    let normal = a.num(f64::MIN_POSITIVE);
    let r_normal = a.cmp(Cmp::Ge, ar, normal);
    let r_zero = a.cmp(Cmp::Eq, ar, zero);
    let r_exact = a.or(r_normal, r_zero);
    let p = a.mul(x, y);
    let naive = a.add(p, z);
    let scaled = a.select(r_exact, back, naive);
    a.select(scale, scaled, r)
}

#[cfg(test)]
mod tests {
    use super::super::native::Native;
    use super::*;

    fn check(x: f64, y: f64, z: f64) {
        check_with(emulated, x, y, z);
        check_with(emulated_wide, x, y, z);
    }

    fn check_with(f: fn(&mut Native, f64, f64, f64) -> f64, x: f64, y: f64, z: f64) {
        let got = f(&mut Native, x, y, z);
        let want = x.mul_add(y, z);
        assert!(
            got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
            "fma({x:e}, {y:e}, {z:e}) = {got:e}, fused {want:e}"
        );
    }

    /// Random operands over the domain, cancellations, ties, zeros and infinities.
    #[test]
    fn equals_the_fused_operation() {
        let mut state = 0x5EED_u64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            state
        };
        let mut random = |spread: i32| {
            let m = (next() >> 11) as f64 / (1u64 << 53) as f64 + 0.5;
            let e = (next() % (2 * spread as u64 + 1)) as i32 - spread;
            let sign = if next() & 1 == 0 { 1.0 } else { -1.0 };
            sign * m * 2f64.powi(e)
        };
        for _ in 0..200_000 {
            let (x, y) = (random(400), random(400));
            check(x, y, random(800));
            // Cancellation: z near -x*y, and near ties of the sum.
            let p = x * y;
            check(x, y, -p);
            let ulp = f64::from_bits(p.abs().to_bits() + 1) - p.abs();
            check(x, y, -p + ulp * 0.5);
            check(x, y, ulp * 0.5);
            check(x, y, -p * 0.5);
            // Double rounding: `x * (1 / x)` is `1 + eta` with `eta` below half an ulp, and
            // `2^53 + 1` is a tie: only rounding the tail to odd sees `eta`.
            let w = 1.0 + random(0).abs().fract();
            let inverse = 1.0 / w;
            for big in [2f64.powi(53), -(2f64.powi(53)), 2f64.powi(54) + 4.0] {
                check(w, inverse, big);
                check(-w, inverse, big);
            }
        }
        for (x, y, z) in [
            (0.0, 5.0, -0.0),
            (-0.0, 5.0, 0.0),
            (-0.0, 5.0, -0.0),
            (3.0, -0.0, -0.0),
            (-0.0, -5.0, -0.0),
            (2.0, 3.0, -6.0),
            (-2.0, 3.0, 6.0),
            (f64::INFINITY, 2.0, 1.0),
            (f64::INFINITY, 0.0, 1.0),
            (1.0, 1.0, f64::NAN),
            (f64::MAX, 2.0, f64::NEG_INFINITY),
            (1.0 + 2f64.powi(-30), 1.0 - 2f64.powi(-30), -1.0),
            // A product that underflows to -0 plus a zero (fuzz seed 59101 kernel 25864).
            (4e-320, -2.702295626777651e-30, 0.0),
            (-1e-300, 1e-300, 0.0),
            (1e-300, 1e-300, -0.0),
            (-1e-300, -1e-300, 0.0),
            (3e-200, -5e-200, 0.0),
        ] {
            check(x, y, z);
        }
    }

    /// A factor of `2^995` or more: the wide form is still the fused operation (fuzz seed
    /// 59002 kernel 8751 on lavapipe: `fma(1e300, 255.0, -1e300)`).
    #[test]
    fn the_wide_form_takes_huge_factors() {
        let mut state = 0xB16_u64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            state
        };
        let mut random = |low: i32, high: i32| {
            let m = (next() >> 11) as f64 / (1u64 << 53) as f64 + 0.5;
            let e = low + (next() % (high - low + 1) as u64) as i32;
            let sign = if next() & 1 == 0 { 1.0 } else { -1.0 };
            sign * m * 2f64.powi(e)
        };
        check_with(emulated_wide, 1e300, 255.0, -1e300);
        check_with(emulated_wide, -1e300, 255.0, 1e300);
        for _ in 0..100_000 {
            let x = random(995, 1023);
            let y = random(-60, 20);
            let p = x * y;
            let z = if p.is_finite() { -p } else { random(900, 1000) };
            check_with(emulated_wide, x, y, z);
            check_with(emulated_wide, y, x, random(-900, 1000));
            check_with(emulated_wide, x, y, random(-958, 1000));
        }
    }
}
