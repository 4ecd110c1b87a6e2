//! `float` division and square root correctly rounded, computed in doubles from a device's
//! approximate double division and square root ([`Arith::approx_div`],
//! [`Arith::approx_sqrt`]: Vulkan promises them only to about 2^-21 relative).
//!
//! A first result is rounded to a `float`, corrected once by its exact remainder, rounded
//! again (now within a tiny fraction of an ulp of the exact value), and then settled against
//! the exact remainders at its two midpoints: up or down one `float` where the exact value
//! lies past a midpoint, ties to even. Every product is of a `float` and a `float` or a
//! midpoint (at most 49 significant bits: exact in a double) and every remainder a difference
//! of two nearby doubles (exact by Sterbenz's lemma, or at least of the right sign and zero
//! only when exact). About 60 operations, where the double routines ([`super::exact`]) take
//! about 700: a reduction's combine step with `float` divisions compiles in seconds on
//! lavapipe, where it took minutes.
//!
//! Values are doubles holding `float` values; the result is one too.

use super::exact::{special_div, special_sqrt, unpack};
use super::{pow2, Arith, Cmp};

const FRACTION: i64 = 0x000F_FFFF_FFFF_FFFF;

/// `x / y` rounded to the nearest `float` (ties to even), as IEEE 754's `float` division.
pub fn div_f32<A: Arith>(a: &mut A, x: A::F, y: A::F) -> A::F {
    let (ax, ay) = (a.abs(x), a.abs(y));
    let (mx, ex) = unpack(a, ax);
    let (my, ey) = unpack(a, ay);
    // |x / y| = big_x / my, the divisor in [1, 2) (where the device's division is accurate).
    let k = a.isub(ex, ey);
    let scale = pow2(a, k);
    let big_x = a.mul(mx, scale);
    let q0 = a.approx_div(big_x, my);
    let q1 = to_float(a, q0);
    let p = a.mul(q1, my);
    let r1 = a.sub(big_x, p);
    let c = a.approx_div(r1, my);
    let q2 = a.add(q1, c);
    let q = to_float(a, q2);
    let q = settle(a, q, |a, mid| {
        let p = a.mul(mid, my);
        a.sub(big_x, p)
    });
    // Past the largest float: infinity.
    let q = a.round_to_f32(q);
    let xb = a.to_bits(x);
    let yb = a.to_bits(y);
    let sign_mask = a.int(i64::MIN);
    let xs = a.iand(xb, sign_mask);
    let ys = a.iand(yb, sign_mask);
    let sign = a.isub(xs, ys);
    let sign = a.iand(sign, sign_mask);
    let q_bits = a.to_bits(q);
    let signed = a.ior(q_bits, sign);
    let finite = a.bits_to_float(signed);
    special_div(a, x, y, sign, finite)
}

/// `sqrt(x)` rounded to the nearest `float`, as IEEE 754's `float` square root.
pub fn sqrt_f32<A: Arith>(a: &mut A, x: A::F) -> A::F {
    // x = m * 2^(2k) with m in [1, 4) (where the device's square root is accurate).
    let (m1, e) = unpack(a, x);
    let one = a.int(1);
    let odd = a.iand(e, one);
    let is_odd = a.icmp(Cmp::Eq, odd, one);
    let two = a.num(2.0);
    let m2 = a.mul(m1, two);
    let m = a.select(is_odd, m2, m1);
    let even_e = a.isub(e, odd);
    let k = a.ashr(even_e, one);
    let root = a.approx_sqrt(m);
    let scale = pow2(a, k);
    let s0 = a.mul(root, scale);
    let s1 = to_float(a, s0);
    let square = a.mul(s1, s1);
    let r1 = a.sub(x, square);
    let twice = a.mul(s1, two);
    let c = a.approx_div(r1, twice);
    let s2 = a.add(s1, c);
    let s = to_float(a, s2);
    let s = settle(a, s, |a, mid| {
        let square = a.mul(mid, mid);
        a.sub(x, square)
    });
    special_sqrt(a, x, s)
}

/// The `float` nearest a nonnegative `v`, the largest finite one for anything larger (so
/// that it has neighbours to settle between).
fn to_float<A: Arith>(a: &mut A, v: A::F) -> A::F {
    let max = a.num(f64::from(f32::MAX));
    let over = a.cmp(Cmp::Gt, v, max);
    let v = a.select(over, max, v);
    a.round_to_f32(v)
}

/// The `float` nearest the exact value, from `q` (a nonnegative `float` within an ulp of it)
/// and `excess(mid)`, the exact value's excess over a midpoint `mid` (positive above it),
/// exact in sign and zero only when exact.
fn settle<A: Arith>(a: &mut A, q: A::F, excess: impl Fn(&mut A, A::F) -> A::F) -> A::F {
    let (up, down, odd) = spacing(a, q);
    let half = a.num(0.5);
    let half_up = a.mul(up, half);
    let half_down = a.mul(down, half);
    let mid_hi = a.add(q, half_up);
    let mid_lo = a.sub(q, half_down);
    let r_hi = excess(a, mid_hi);
    let r_lo = excess(a, mid_lo);
    let zero = a.num(0.0);
    let above = a.cmp(Cmp::Gt, r_hi, zero);
    let tie_hi = a.cmp(Cmp::Eq, r_hi, zero);
    let tie_up = a.and(tie_hi, odd);
    let go_up = a.or(above, tie_up);
    let below = a.cmp(Cmp::Lt, r_lo, zero);
    let tie_lo = a.cmp(Cmp::Eq, r_lo, zero);
    let tie_down = a.and(tie_lo, odd);
    let go_down = a.or(below, tie_down);
    let q_up = a.add(q, up);
    let q_down = a.sub(q, down);
    let r = a.select(go_down, q_down, q);
    a.select(go_up, q_up, r)
}

/// For a nonnegative `float` value `q`: the distance to the next `float` up, to the next
/// one down (half as far below a power of two, except at the smallest normal one), and
/// whether its significand is odd.
fn spacing<A: Arith>(a: &mut A, q: A::F) -> (A::F, A::F, A::P) {
    let bits = a.to_bits(q);
    let at = a.int(52);
    let field = a.lshr(bits, at);
    let bias = a.int(1023);
    let e = a.isub(field, bias);
    let min_e = a.int(-126);
    let subnormal = a.icmp(Cmp::Lt, e, min_e);
    let e = a.select_int(subnormal, min_e, e);
    let digits = a.int(23);
    let unit_e = a.isub(e, digits);
    let up = pow2(a, unit_e);
    let fraction_mask = a.int(FRACTION);
    let fraction = a.iand(bits, fraction_mask);
    let zero = a.int(0);
    let power_of_two = a.icmp(Cmp::Eq, fraction, zero);
    // The double exponent field of the smallest normal float, 2^-126.
    let min_normal = a.int(1023 - 126);
    let above_min = a.icmp(Cmp::Gt, field, min_normal);
    let halves = a.and(power_of_two, above_min);
    let half = a.num(0.5);
    let half_up = a.mul(up, half);
    let down = a.select(halves, half_up, up);
    // The significand q / up, an integer below 2^24: odd when half of it is not whole.
    let zero_i = a.int(0);
    let minus_unit = a.isub(zero_i, unit_e);
    let inverse = pow2(a, minus_unit);
    let n = a.mul(q, inverse);
    let n_half = a.mul(n, half);
    let whole = a.rint(n_half);
    let even = a.cmp(Cmp::Eq, whole, n_half);
    (up, down, a.not(even))
}
