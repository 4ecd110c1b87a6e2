//! `sin`, `cos` and `tan`.
//!
//! The argument is reduced exactly: `|x| = (q + f) pi/2` with `|f| <= 1/2` computed from 192
//! bits of 2/pi chosen by the exponent of `x` (Payne–Hanek), so even `sin(1e300)` is right.
//! The remainder `r = f pi/2` is a double-double; `sin r` and `cos r` are Taylor polynomials
//! on `|r| <= pi/4`, and `q mod 4` picks the quadrant.

use super::consts::*;
use super::{fast_two_sum, horner, inv_factorial, series, sign_bit, two_prod, Arith, Cmp, Dd};

/// `sin(x)`.
pub fn sin<A: Arith>(a: &mut A, x: A::F) -> A::F {
    let (q, r) = reduce(a, x);
    let (s, c) = kernels(a, r);
    let odd = quadrant_bit(a, q, 1);
    let v = a.select(odd, c, s);
    let flip = quadrant_bit(a, q, 2);
    let v = negate_if(a, flip, v);
    let x_neg = sign_bit(a, x);
    let v = negate_if(a, x_neg, v);
    finite_only(a, x, v)
}

/// `cos(x)`.
pub fn cos<A: Arith>(a: &mut A, x: A::F) -> A::F {
    let (q, r) = reduce(a, x);
    let (s, c) = kernels(a, r);
    let odd = quadrant_bit(a, q, 1);
    let v = a.select(odd, s, c);
    let one = a.int(1);
    let q1 = a.iadd(q, one);
    let flip = quadrant_bit(a, q1, 2);
    let v = negate_if(a, flip, v);
    finite_only(a, x, v)
}

/// `tan(x)`.
pub fn tan<A: Arith>(a: &mut A, x: A::F) -> A::F {
    let (q, r) = reduce(a, x);
    let (s, c) = kernels(a, r);
    let odd = quadrant_bit(a, q, 1);
    let even_value = a.div(s, c);
    let nc = a.neg(c);
    let odd_value = a.div(nc, s);
    let v = a.select(odd, odd_value, even_value);
    let x_neg = sign_bit(a, x);
    let v = negate_if(a, x_neg, v);
    finite_only(a, x, v)
}

fn quadrant_bit<A: Arith>(a: &mut A, q: A::I, bit: i64) -> A::P {
    let mask = a.int(bit);
    let b = a.iand(q, mask);
    let zero = a.int(0);
    let clear = a.icmp(Cmp::Eq, b, zero);
    a.not(clear)
}

fn negate_if<A: Arith>(a: &mut A, p: A::P, v: A::F) -> A::F {
    let n = a.neg(v);
    a.select(p, n, v)
}

/// NaN for infinite or NaN `x`, else `v`.
fn finite_only<A: Arith>(a: &mut A, x: A::F, v: A::F) -> A::F {
    let ax = a.abs(x);
    let inf = a.num(f64::INFINITY);
    let finite = a.cmp(Cmp::Lt, ax, inf);
    let nan = a.sub(x, x);
    a.select(finite, v, nan)
}

/// `sin r` and `cos r` for the double-double `r`, `|r| <= pi/4`.
fn kernels<A: Arith>(a: &mut A, r: Dd<A::F>) -> (A::F, A::F) {
    let z = a.mul(r.hi, r.hi);
    let half = a.num(0.5);
    let hz = a.mul(half, z);
    let one = a.num(1.0);
    // sin r = r + r^3 S(z) + rl (1 - z/2)
    let s_coeffs = series(1..=9, |k| sign(k) * inv_factorial(2 * k + 1));
    let sp = horner(a, z, &s_coeffs);
    let v = a.mul(z, r.hi);
    let one_minus = a.sub(one, hz);
    let corr = a.mul(r.lo, one_minus);
    let tail = a.fma(v, sp, corr);
    let s = a.add(r.hi, tail);
    // cos r = (1 - z/2) + z^2 C(z) - r rl, with the rounding error of 1 - z/2 kept.
    let c_coeffs = series(2..=9, |k| sign(k) * inv_factorial(2 * k));
    let cp = horner(a, z, &c_coeffs);
    let w = a.sub(one, hz);
    let lost = a.sub(one, w);
    let lost = a.sub(lost, hz);
    let z2 = a.mul(z, z);
    let rr = a.mul(r.hi, r.lo);
    let nrr = a.neg(rr);
    let tail = a.fma(z2, cp, nrr);
    let tail = a.add(lost, tail);
    let c = a.add(w, tail);
    (s, c)
}

fn sign(k: u32) -> f64 {
    if k.is_multiple_of(2) {
        1.0
    } else {
        -1.0
    }
}

/// `|x| = q pi/2 + r`: the quadrant `q` (only `q mod 4` matters) and `r`, `|r| <= pi/4`.
fn reduce<A: Arith>(a: &mut A, x: A::F) -> (A::I, Dd<A::F>) {
    let ax = a.abs(x);
    let (q, r) = reduce_large(a, ax);
    let limit = a.num(PIO4_BELOW);
    let small = a.cmp(Cmp::Le, ax, limit);
    let zero_i = a.int(0);
    let zero = a.num(0.0);
    let q = a.select_int(small, zero_i, q);
    let hi = a.select(small, ax, r.hi);
    let lo = a.select(small, zero, r.lo);
    (q, Dd { hi, lo })
}

/// [`reduce`] for `ax >= pi/4` (other values give unused results, never an out-of-range read).
///
/// `ax = M 2^E` with the integer `M < 2^53`. The bits `b_i` of 2/pi (value `sum b_i 2^-i`)
/// with `i <= E - 2` add multiples of 4 to `ax 2/pi`, which do not change the quadrant; the
/// window `b_{E-1} .. b_{E+190}` as an integer `W` gives `ax 2/pi = M W 2^-190 (mod 4)`.
fn reduce_large<A: Arith>(a: &mut A, ax: A::F) -> (A::I, Dd<A::F>) {
    let bits = a.to_bits(ax);
    let c52 = a.int(52);
    let biased = a.lshr(bits, c52);
    let mant_mask = a.int((1i64 << 52) - 1);
    let implicit = a.int(1i64 << 52);
    let m = a.iand(bits, mant_mask);
    let m = a.ior(m, implicit);
    let bias = a.int(1075);
    let e = a.isub(biased, bias);
    let e = clamp_int(a, e, -53, 971);
    // Bit b_i is bit 63 + i of the table counted from the top of word 0 (a zero word).
    let c62 = a.int(62);
    let start = a.iadd(e, c62);
    let c6 = a.int(6);
    let word = a.lshr(start, c6);
    let c63 = a.int(63);
    let shift = a.iand(start, c63);
    let w2 = window_word(a, word, shift, 0);
    let w1 = window_word(a, word, shift, 1);
    let w0 = window_word(a, word, shift, 2);
    // P = M (w2 w1 w0): 4 words, P3 only holds multiples of 4 (ignored).
    let p0 = a.imul(m, w0);
    let a1 = a.umulhi(m, w0);
    let b0 = a.imul(m, w1);
    let b1 = a.umulhi(m, w1);
    let c0 = a.imul(m, w2);
    let p1 = a.iadd(a1, b0);
    let carry = a.ult(p1, a1);
    let one = a.int(1);
    let zero = a.int(0);
    let carry = a.select_int(carry, one, zero);
    let b1c = a.iadd(b1, carry);
    let p2 = a.iadd(c0, b1c);
    // The binary point is 190 bits up: q = P bits 190..191, f = bits 189 down.
    let q = a.lshr(p2, c62);
    let two = a.int(2);
    let hi = a.shl(p2, two);
    let p1_top = a.lshr(p1, c62);
    let hi = a.ior(hi, p1_top);
    let mid = a.shl(p1, two);
    let p0_top = a.lshr(p0, c62);
    let mid = a.ior(mid, p0_top);
    // f >= 1/2: the next quadrant, f - 1 (negated as a 128-bit two's complement).
    let upper = a.icmp(Cmp::Lt, hi, zero);
    let q_up = a.iadd(q, one);
    let q = a.select_int(upper, q_up, q);
    let neg_mid = a.isub(zero, mid);
    let mid_zero = a.icmp(Cmp::Eq, mid, zero);
    let borrow = a.select_int(mid_zero, zero, one);
    let not_hi = a.isub(zero, hi);
    let neg_hi = a.isub(not_hi, borrow);
    let hi = a.select_int(upper, neg_hi, hi);
    let mid = a.select_int(upper, neg_mid, mid);
    let r = fraction_times_pio2(a, hi, mid);
    let rh_neg = a.neg(r.hi);
    let rl_neg = a.neg(r.lo);
    let hi = a.select(upper, rh_neg, r.hi);
    let lo = a.select(upper, rl_neg, r.lo);
    (q, Dd { hi, lo })
}

fn clamp_int<A: Arith>(a: &mut A, v: A::I, lower: i64, upper: i64) -> A::I {
    let lower = a.int(lower);
    let upper = a.int(upper);
    let below = a.icmp(Cmp::Lt, v, lower);
    let v = a.select_int(below, lower, v);
    let above = a.icmp(Cmp::Gt, v, upper);
    a.select_int(above, upper, v)
}

/// 64 window bits starting `shift` bits into table word `word + k`.
fn window_word<A: Arith>(a: &mut A, word: A::I, shift: A::I, k: i64) -> A::I {
    let k0 = a.int(k);
    let k1 = a.int(k + 1);
    let i0 = a.iadd(word, k0);
    let i1 = a.iadd(word, k1);
    let t0 = a.two_over_pi_word(i0);
    let t1 = a.two_over_pi_word(i1);
    let high = a.shl(t0, shift);
    let c64 = a.int(64);
    let back = a.isub(c64, shift);
    let low = a.lshr(t1, back);
    a.ior(high, low)
}

/// `(hi 2^-64 + mid 2^-128) * pi/2` as a double-double, for the 128-bit fraction `hi:mid`.
fn fraction_times_pio2<A: Arith>(a: &mut A, hi: A::I, mid: A::I) -> Dd<A::F> {
    // Normalise so that bit 63 of hi is set.
    let zero = a.int(0);
    let hi_zero = a.icmp(Cmp::Eq, hi, zero);
    let hi = a.select_int(hi_zero, mid, hi);
    let mid = a.select_int(hi_zero, zero, mid);
    let c64 = a.int(64);
    let extra = a.select_int(hi_zero, c64, zero);
    let lz = a.clz(hi);
    let shifted = a.shl(hi, lz);
    let back = a.isub(c64, lz);
    let carried = a.lshr(mid, back);
    let hi = a.ior(shifted, carried);
    let mid = a.shl(mid, lz);
    // hi = top (53 bits, exact as a double) + rest (11 bits).
    let rest_mask = a.int(0x7ff);
    let rest = a.iand(hi, rest_mask);
    let top = a.isub(hi, rest);
    let top = a.uint_to_float(top);
    let rest = a.uint_to_float(rest);
    let mid = a.uint_to_float(mid);
    let two_m64 = a.num(2f64.powi(-64));
    let rest = a.fma(mid, two_m64, rest);
    // Scale by 2^-(64 + lz + extra).
    let exponent = a.iadd(lz, extra);
    let exponent = a.iadd(exponent, c64);
    let neg_exponent = a.isub(zero, exponent);
    let scale = super::pow2(a, neg_exponent);
    let fh = a.mul(top, scale);
    let fl = a.mul(rest, scale);
    let pio2_hi = a.num(PIO2_HI);
    let pio2_lo = a.num(PIO2_LO);
    let p = two_prod(a, fh, pio2_hi);
    let cross = a.mul(fh, pio2_lo);
    let cross = a.fma(fl, pio2_hi, cross);
    let low = a.add(p.lo, cross);
    fast_two_sum(a, p.hi, low)
}
