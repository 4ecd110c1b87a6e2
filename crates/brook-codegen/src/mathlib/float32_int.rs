//! `float` division, square root and remainder (`fmod`) correctly rounded from 64-bit integer
//! operations alone,
//! for devices without doubles (Vulkan devices without `shaderFloat64`: Apple GPUs through
//! MoltenVK, Intel's Xe graphics, most mobile GPUs), where [`super::float32`] cannot run.
//!
//! Values are a `float`'s bits in the low 32 bits of an integer. The significands are
//! normalised to 24 bits (subnormals too), the quotient is found bit by bit (restoring
//! division, 27 bits) and the root digit by digit (25 bits), each with its exact remainder,
//! and the result is rounded once to nearest even from its guard bit and the remainder (the
//! remainder of `fmod` is exact: integer remainders, 40 doublings at a time):
//! IEEE 754's results, subnormal quotients included. About 200 integer operations each,
//! without branches. NaN operands give a quiet NaN (the first operand's), invalid operations
//! the default NaN. `flush`: operands that are subnormal read as zeros of their sign, as on a
//! device that flushes `float` subnormals (results are kept, as the interpreter's model of such
//! a device keeps a quotient computed through doubles: `docs/SEMANTICS.md`).

use super::{Arith, Cmp};

const SIGN: i64 = 0x8000_0000;
const MAGNITUDE: i64 = 0x7FFF_FFFF;
const INFINITY: i64 = 0x7F80_0000;
const FRACTION: i64 = 0x007F_FFFF;
const HIDDEN: i64 = 0x0080_0000;
const QUIET: i64 = 0x0040_0000;
/// The NaN an invalid operation gives.
const DEFAULT_NAN: i64 = 0x7FC0_0000;

/// The bits of `x / y` (both `float` bits) rounded to the nearest `float`, ties to even.
pub fn div_bits<A: Arith>(a: &mut A, x: A::I, y: A::I, flush: bool) -> A::I {
    let (x, y) = if flush {
        (flush_subnormal(a, x), flush_subnormal(a, y))
    } else {
        (x, y)
    };
    let sign_x = masked(a, x, SIGN);
    let sign_y = masked(a, y, SIGN);
    let sign = a.isub(sign_x, sign_y);
    let sign = masked(a, sign, SIGN);
    let (mx, ex) = significand(a, x);
    let (my, ey) = significand(a, y);
    // The quotient's first 27 bits (one before the point) and the exact remainder.
    let (quotient, remainder) = restoring_divide(a, mx, my, 27);
    let two_26 = a.int(1 << 26);
    let at_least_one = a.icmp(Cmp::Ge, quotient, two_26);
    // mx / my in [1, 2): the exponent ex - ey, 3 bits past the 24 kept; in (1/2, 1): one less.
    let bias = a.int(127);
    let e = a.isub(ex, ey);
    let e = a.iadd(e, bias);
    let minus_one = a.int(-1);
    let e_below = a.iadd(e, minus_one);
    let e = a.select_int(at_least_one, e, e_below);
    let (three, two) = (a.int(3), a.int(2));
    let past = a.select_int(at_least_one, three, two);
    let magnitude = round(a, quotient, remainder, e, past);
    let finite = a.ior(sign, magnitude);
    special_div(a, x, y, sign, finite)
}

/// The bits of `sqrt(x)` (`float` bits) rounded to the nearest `float`.
pub fn sqrt_bits<A: Arith>(a: &mut A, x: A::I, flush: bool) -> A::I {
    let x = if flush { flush_subnormal(a, x) } else { x };
    let (m, e) = significand(a, x);
    // x = m * 2^t with t = e - 150; made m' * 2^t' with t' even and m' in [2^24, 2^26).
    let offset = a.int(-150);
    let t = a.iadd(e, offset);
    let one = a.int(1);
    let odd_bit = a.iand(t, one);
    let odd = a.icmp(Cmp::Eq, odd_bit, one);
    let two = a.int(2);
    let shift = a.select_int(odd, one, two);
    let m = a.shl(m, shift);
    let t = a.isub(t, shift);
    // sqrt(m' * 2^24) has exactly 25 bits.
    let twenty_four = a.int(24);
    let n = a.shl(m, twenty_four);
    let (root, remainder) = digit_sqrt(a, n, 25);
    // sqrt(x) = root * 2^((t' - 24) / 2); its 24 kept bits are root >> 1, whose unit is
    // 2^((t' - 24) / 2 + 1), so the biased exponent is that + 23 + 127.
    let t = a.isub(t, twenty_four);
    let half = a.ashr(t, one);
    let bias = a.int(1 + 23 + 127);
    let e = a.iadd(half, bias);
    let magnitude = round(a, root, remainder, e, one);
    special_sqrt(a, x, magnitude)
}

/// The bits of `fmod(x, y)` (both `float` bits): `x - n * y` for the integer `n` that
/// truncates `x / y`, which is exact (it has the sign of `x` and is smaller than `y`).
pub fn rem_bits<A: Arith>(a: &mut A, x: A::I, y: A::I, flush: bool) -> A::I {
    let (x, y) = if flush {
        (flush_subnormal(a, x), flush_subnormal(a, y))
    } else {
        (x, y)
    };
    let (mx, ex) = significand(a, x);
    let (my, ey) = significand(a, y);
    // |x| = mx * 2^d units of y's (d = ex - ey >= 0 where |x| >= |y|): the remainder of
    // mx * 2^d by my, taken 40 doublings at a time (mx, my < 2^24), at most 7 steps.
    let zero = a.int(0);
    let mut left = a.isub(ex, ey);
    let mut rest = a.urem(mx, my);
    let forty = a.int(40);
    for _ in 0..7 {
        let more = a.icmp(Cmp::Gt, left, forty);
        let step = a.select_int(more, forty, left);
        let negative = a.icmp(Cmp::Lt, step, zero);
        let step = a.select_int(negative, zero, step);
        let moved = a.shl(rest, step);
        rest = a.urem(moved, my);
        left = a.isub(left, step);
    }
    // rest * 2^(ey - 150): normalised to 24 bits, or a subnormal (exact either way).
    let leading = a.clz(rest);
    let forty_leading = a.int(40);
    let shift = a.isub(leading, forty_leading);
    let m = a.shl(rest, shift);
    let e = a.isub(ey, shift);
    let one = a.int(1);
    let below_normal = a.isub(one, e);
    let subnormal = a.icmp(Cmp::Gt, below_normal, zero);
    let extra = a.select_int(subnormal, below_normal, zero);
    let e = a.select_int(subnormal, one, e);
    let kept = a.lshr(m, extra);
    let twenty_three = a.int(23);
    let e_below = a.isub(e, one);
    let field = a.shl(e_below, twenty_three);
    let magnitude = a.iadd(field, kept);
    let is_zero = a.icmp(Cmp::Eq, rest, zero);
    let magnitude = a.select_int(is_zero, zero, magnitude);
    let sign = masked(a, x, SIGN);
    let finite = a.ior(sign, magnitude);
    // |x| < |y|: x itself.
    let ax = masked(a, x, MAGNITUDE);
    let ay = masked(a, y, MAGNITUDE);
    let smaller = a.icmp(Cmp::Lt, ax, ay);
    let finite = a.select_int(smaller, x, finite);
    special_rem(a, x, y, finite)
}

/// The bits of `x * y + z` (`float` bits) rounded once to the nearest `float`.
pub fn fma_bits<A: Arith>(a: &mut A, x: A::I, y: A::I, z: A::I, flush: bool) -> A::I {
    let (x, y, z) = if flush {
        let (x, y) = (flush_subnormal(a, x), flush_subnormal(a, y));
        (x, y, flush_subnormal(a, z))
    } else {
        (x, y, z)
    };
    let (mx, ex) = significand(a, x);
    let (my, ey) = significand(a, y);
    let (mz, ez) = significand(a, z);
    // The exact product (46 to 48 bits) and the addend, each moved up to about bit 61, with
    // the exponent of their lowest bit.
    let product = a.imul(mx, my);
    let fourteen = a.int(14);
    let product = a.shl(product, fourteen);
    let e_sum = a.iadd(ex, ey);
    let offset = a.int(-314);
    let unit_p = a.iadd(e_sum, offset);
    let thirty_eight = a.int(38);
    let addend = a.shl(mz, thirty_eight);
    let offset = a.int(-188);
    let unit_z = a.iadd(ez, offset);
    // The one with the lower unit moves down to the other's, its lost bits kept as one
    // sticky bit (enough guard bits remain below a float's 24 for one rounding).
    let p_first = a.icmp(Cmp::Ge, unit_p, unit_z);
    let big = a.select_int(p_first, product, addend);
    let small = a.select_int(p_first, addend, product);
    let unit = a.select_int(p_first, unit_p, unit_z);
    let low_unit = a.select_int(p_first, unit_z, unit_p);
    let distance = a.isub(unit, low_unit);
    let moved = a.lshr(small, distance);
    let one = a.int(1);
    let lost_mask = a.shl(one, distance);
    let lost_mask = a.isub(lost_mask, one);
    let lost = a.iand(small, lost_mask);
    let zero = a.int(0);
    let sticky = a.icmp(Cmp::Gt, lost, zero);
    let jam = a.select_int(sticky, one, zero);
    let small = a.ior(moved, jam);
    // Same signs add; else the smaller magnitude is taken from the larger, whose sign wins.
    let sign_p = {
        let sx = masked(a, x, SIGN);
        let sy = masked(a, y, SIGN);
        let s = a.isub(sx, sy);
        masked(a, s, SIGN)
    };
    let sign_z = masked(a, z, SIGN);
    let sign_big = a.select_int(p_first, sign_p, sign_z);
    let sign_small = a.select_int(p_first, sign_z, sign_p);
    let same = a.icmp(Cmp::Eq, sign_big, sign_small);
    let sum = a.iadd(big, small);
    let small_wins = a.ult(big, small);
    let forward = a.isub(big, small);
    let backward = a.isub(small, big);
    let difference = a.select_int(small_wins, backward, forward);
    let sign_difference = a.select_int(small_wins, sign_small, sign_big);
    let total = a.select_int(same, sum, difference);
    let sign = a.select_int(same, sign_big, sign_difference);
    // Normalised to bit 62, then rounded from its top 24 bits.
    let leading = a.clz(total);
    let up = a.isub(leading, one);
    let normal = a.shl(total, up);
    let unit = a.isub(unit, up);
    let bias = a.int(39 + 150);
    let e = a.iadd(unit, bias);
    let past = a.int(39);
    let magnitude = round(a, normal, zero, e, past);
    let finite = a.ior(sign, magnitude);
    // An exact zero sum is +0 (rounding to nearest).
    let cancelled = a.icmp(Cmp::Eq, total, zero);
    let finite = a.select_int(cancelled, zero, finite);
    special_fma(a, [x, y, z], sign_p, finite)
}

/// `value & mask`.
fn masked<A: Arith>(a: &mut A, value: A::I, mask: i64) -> A::I {
    let mask = a.int(mask);
    a.iand(value, mask)
}

/// `x`, or a zero of its sign when it is subnormal.
fn flush_subnormal<A: Arith>(a: &mut A, x: A::I) -> A::I {
    let exponent = masked(a, x, INFINITY);
    let zero = a.int(0);
    let subnormal = a.icmp(Cmp::Eq, exponent, zero);
    let sign = masked(a, x, SIGN);
    a.select_int(subnormal, sign, x)
}

/// A finite, nonzero `float`'s magnitude as `m * 2^(e - 150)` with `m` in `[2^23, 2^24)`:
/// `(m, e)` (`e` is the biased exponent, below 1 for a subnormal).
fn significand<A: Arith>(a: &mut A, x: A::I) -> (A::I, A::I) {
    let fraction = masked(a, x, FRACTION);
    let field = masked(a, x, INFINITY);
    let twenty_three = a.int(23);
    let biased = a.lshr(field, twenty_three);
    let zero = a.int(0);
    let subnormal = a.icmp(Cmp::Eq, biased, zero);
    // A subnormal's fraction moved up to the hidden bit: 40 leading zeros in 64 bits.
    let leading = a.clz(fraction);
    let forty = a.int(40);
    let shift = a.isub(leading, forty);
    let moved = a.shl(fraction, shift);
    let one = a.int(1);
    let e_subnormal = a.isub(one, shift);
    let hidden = a.int(HIDDEN);
    let normal = a.ior(fraction, hidden);
    let m = a.select_int(subnormal, moved, normal);
    let e = a.select_int(subnormal, e_subnormal, biased);
    (m, e)
}

/// `floor(n * 2^(bits - 1) / d)` for `n, d` in `[2^23, 2^24)`, bit by bit, and whether
/// a remainder is left (nonzero when the quotient is inexact).
fn restoring_divide<A: Arith>(a: &mut A, n: A::I, d: A::I, bits: u32) -> (A::I, A::I) {
    let (zero, one) = (a.int(0), a.int(1));
    let mut rest = n;
    let mut quotient = zero;
    for _ in 0..bits {
        let fits = a.icmp(Cmp::Ge, rest, d);
        let less = a.isub(rest, d);
        rest = a.select_int(fits, less, rest);
        let bit = a.select_int(fits, one, zero);
        let shifted = a.shl(quotient, one);
        quotient = a.ior(shifted, bit);
        rest = a.shl(rest, one);
    }
    (quotient, rest)
}

/// `floor(sqrt(n))` for `n < 2^(2 * digits)`, digit by digit, and the remainder
/// `n - root^2`.
fn digit_sqrt<A: Arith>(a: &mut A, n: A::I, digits: u32) -> (A::I, A::I) {
    let (zero, one, two) = (a.int(0), a.int(1), a.int(2));
    let mut rest = n;
    let mut root = zero;
    let mut bit = a.int(1 << (2 * (digits - 1)));
    for _ in 0..digits {
        let trial = a.iadd(root, bit);
        let fits = a.icmp(Cmp::Ge, rest, trial);
        let less = a.isub(rest, trial);
        rest = a.select_int(fits, less, rest);
        let halved = a.lshr(root, one);
        let raised = a.iadd(halved, bit);
        root = a.select_int(fits, raised, halved);
        bit = a.lshr(bit, two);
    }
    (root, rest)
}

/// The magnitude bits of `value` rounded to a `float`: its bits above `past` (24 of them for a
/// normal result) with biased exponent `e`, moved further right into a subnormal when `e` is
/// below 1, rounded to nearest even from the next bit, the bits below it and `remainder`
/// (nonzero when the value lies past `value`); infinity past the largest `float`.
fn round<A: Arith>(a: &mut A, value: A::I, remainder: A::I, e: A::I, past: A::I) -> A::I {
    let (zero, one) = (a.int(0), a.int(1));
    let below_normal = a.isub(one, e);
    let subnormal = a.icmp(Cmp::Gt, below_normal, zero);
    let extra = a.select_int(subnormal, below_normal, zero);
    let e = a.select_int(subnormal, one, e);
    let shift = a.iadd(past, extra);
    let cap = a.int(64);
    let capped = a.icmp(Cmp::Gt, shift, cap);
    let shift = a.select_int(capped, cap, shift);
    let kept = a.lshr(value, shift);
    let guard_at = a.isub(shift, one);
    let guard = a.lshr(value, guard_at);
    let guard = a.iand(guard, one);
    let low_mask = a.shl(one, guard_at);
    let low_mask = a.isub(low_mask, one);
    let low = a.iand(value, low_mask);
    let low_left = a.icmp(Cmp::Gt, low, zero);
    let rest_left = a.icmp(Cmp::Gt, remainder, zero);
    let sticky = a.or(low_left, rest_left);
    let odd = a.iand(kept, one);
    let odd = a.icmp(Cmp::Eq, odd, one);
    let tie_or_more = a.or(sticky, odd);
    let guard_set = a.icmp(Cmp::Eq, guard, one);
    let up = a.and(guard_set, tie_or_more);
    let step = a.select_int(up, one, zero);
    let rounded = a.iadd(kept, step);
    // The hidden bit adds one to the exponent field (a subnormal's carries into the first
    // normal, a normal's overflowing significand into the next binade).
    let twenty_three = a.int(23);
    let e_below = a.isub(e, one);
    let field = a.shl(e_below, twenty_three);
    let bits = a.iadd(field, rounded);
    let infinity = a.int(INFINITY);
    let overflow = a.icmp(Cmp::Ge, bits, infinity);
    a.select_int(overflow, infinity, bits)
}

/// The quiet form of a NaN's bits.
fn quiet<A: Arith>(a: &mut A, x: A::I) -> A::I {
    let q = a.int(QUIET);
    a.ior(x, q)
}

/// Whether `x`'s magnitude is `compared` to `bits` (`x` a `float`'s bits).
fn magnitude_is<A: Arith>(a: &mut A, x: A::I, op: Cmp, bits: i64) -> A::P {
    let magnitude = masked(a, x, MAGNITUDE);
    let bits = a.int(bits);
    a.icmp(op, magnitude, bits)
}

/// What an operand is besides a finite nonzero number: a NaN, an infinity, a zero.
struct Class<P> {
    nan: P,
    inf: P,
    zero: P,
}

fn class<A: Arith>(a: &mut A, x: A::I) -> Class<A::P> {
    Class {
        nan: magnitude_is(a, x, Cmp::Gt, INFINITY),
        inf: magnitude_is(a, x, Cmp::Eq, INFINITY),
        zero: magnitude_is(a, x, Cmp::Eq, 0),
    }
}

/// `r`, unless an operand is a NaN: then the first NaN operand, quieted.
fn first_nan<A: Arith>(a: &mut A, operands: &[(A::I, &Class<A::P>)], r: A::I) -> A::I {
    operands.iter().rev().fold(r, |r, &(v, c)| {
        let quieted = quiet(a, v);
        a.select_int(c.nan, quieted, r)
    })
}

/// `finite` unless an operand is a NaN, an infinity or a zero.
fn special_div<A: Arith>(a: &mut A, x: A::I, y: A::I, sign: A::I, finite: A::I) -> A::I {
    let (cx, cy) = (class(a, x), class(a, y));
    let infinity = a.int(INFINITY);
    let signed_infinity = a.ior(sign, infinity);
    let to_infinity = a.or(cx.inf, cy.zero);
    let r = a.select_int(to_infinity, signed_infinity, finite);
    let to_zero = a.or(cy.inf, cx.zero);
    let r = a.select_int(to_zero, sign, r);
    let both_inf = a.and(cx.inf, cy.inf);
    let both_zero = a.and(cx.zero, cy.zero);
    let invalid = a.or(both_inf, both_zero);
    let nan = a.int(DEFAULT_NAN);
    let r = a.select_int(invalid, nan, r);
    first_nan(a, &[(x, &cx), (y, &cy)], r)
}

/// `finite` unless an operand is a NaN, `x` an infinity or a zero, or `y` an infinity or a
/// zero.
fn special_rem<A: Arith>(a: &mut A, x: A::I, y: A::I, finite: A::I) -> A::I {
    let (cx, cy) = (class(a, x), class(a, y));
    let keep_x = a.or(cx.zero, cy.inf);
    let r = a.select_int(keep_x, x, finite);
    let invalid = a.or(cx.inf, cy.zero);
    let nan = a.int(DEFAULT_NAN);
    let r = a.select_int(invalid, nan, r);
    first_nan(a, &[(x, &cx), (y, &cy)], r)
}

/// `finite` unless an operand is a NaN, an infinity or a zero (`sign_p`: the product's sign).
fn special_fma<A: Arith>(a: &mut A, [x, y, z]: [A::I; 3], sign_p: A::I, finite: A::I) -> A::I {
    let (cx, cy, cz) = (class(a, x), class(a, y), class(a, z));
    let product_inf = a.or(cx.inf, cy.inf);
    let product_zero = a.or(cx.zero, cy.zero);
    // x * y + z where the product is a zero: z, or a zero whose sign the two zeros share
    // (+0 when they differ); where z is a zero and the product is not: the product alone.
    let sign_z = masked(a, z, SIGN);
    let same_zero_sign = a.icmp(Cmp::Eq, sign_p, sign_z);
    let zero = a.int(0);
    let zero_sum = a.select_int(same_zero_sign, sign_z, zero);
    let z_or_zero = a.select_int(cz.zero, zero_sum, z);
    let r = a.select_int(product_zero, z_or_zero, finite);
    // Infinities: inf * 0 and inf - inf are invalid; else the infinite term.
    let infinity = a.int(INFINITY);
    let product_infinity = a.ior(sign_p, infinity);
    let r = a.select_int(product_inf, product_infinity, r);
    let r = a.select_int(cz.inf, z, r);
    let zero_times_inf = a.and(product_inf, product_zero);
    let both_inf = a.and(product_inf, cz.inf);
    let opposite = a.icmp(Cmp::Eq, sign_p, sign_z);
    let opposite = a.not(opposite);
    let cancelling = a.and(both_inf, opposite);
    let invalid = a.or(zero_times_inf, cancelling);
    let default_nan = a.int(DEFAULT_NAN);
    let r = a.select_int(invalid, default_nan, r);
    first_nan(a, &[(x, &cx), (y, &cy), (z, &cz)], r)
}

/// `finite` unless `x` is a NaN, an infinity, a zero or negative.
fn special_sqrt<A: Arith>(a: &mut A, x: A::I, finite: A::I) -> A::I {
    let c = class(a, x);
    let sign = masked(a, x, SIGN);
    let nothing = a.int(0);
    let negative = a.icmp(Cmp::Gt, sign, nothing);
    let r = a.select_int(c.inf, x, finite);
    let default_nan = a.int(DEFAULT_NAN);
    let r = a.select_int(negative, default_nan, r);
    let r = a.select_int(c.zero, x, r);
    first_nan(a, &[(x, &c)], r)
}
