//! Division and square root correctly rounded from additions, multiplications and fused
//! multiply-adds (each correctly rounded: [`Arith::fma`], emulated where a device's is not
//! fused) and integer operations, for devices whose own division and square root are
//! approximations (Vulkan promises `double` division and square roots only as accurate as
//! `float`'s 2.5 ulps).
//!
//! Both scale the operands to `[1, 2)` (or `[1, 4)`) by their exponents, start from a few-bit
//! seed improved by Newton's iterations to about 60 bits, round the scaled result, and then
//! decide between the rounded value and its neighbours from exact remainders (`fma`). The
//! special operands (zeros, infinities, NaNs) are selected apart; a quotient in the subnormal
//! range is rounded once from the exact quotient's position (the remainder's sign breaks a
//! tie that the 53-bit quotient cannot see).

use super::{sign_bit, Arith, Cmp};

const SIGN: i64 = i64::MIN;
const EXPONENT: i64 = 0x7FF0_0000_0000_0000;
const FRACTION: i64 = 0x000F_FFFF_FFFF_FFFF;
/// The exponent field of 1.0.
const ONE: i64 = 0x3FF0_0000_0000_0000;

/// `|x|` (finite, not zero) as `m * 2^e` with `m` in `[1, 2)`: `(m, e)`, subnormals
/// included.
pub(super) fn unpack<A: Arith>(a: &mut A, x: A::F) -> (A::F, A::I) {
    let ax = a.abs(x);
    // Subnormals are brought into the normal range first (exactly).
    let tiny = a.num(f64::MIN_POSITIVE);
    let is_tiny = a.cmp(Cmp::Lt, ax, tiny);
    let big = a.num(2f64.powi(64));
    let scaled = a.mul(ax, big);
    let v = a.select(is_tiny, scaled, ax);
    let bits = a.to_bits(v);
    let field = a.int(EXPONENT);
    let exp_bits = a.iand(bits, field);
    let fifty_two = a.int(52);
    let biased = a.lshr(exp_bits, fifty_two);
    let bias = a.int(1023);
    let e = a.isub(biased, bias);
    let sixty_four = a.int(64);
    let e_tiny = a.isub(e, sixty_four);
    let e = a.select_int(is_tiny, e_tiny, e);
    let fraction = a.int(FRACTION);
    let frac_bits = a.iand(bits, fraction);
    let one = a.int(ONE);
    let m_bits = a.ior(frac_bits, one);
    (a.bits_to_float(m_bits), e)
}

/// `x * 2^k` for `|k| <= 2200`, by four normal powers of two of `k`'s sign (`k` split
/// toward zero): the partial products move monotonically toward the result, so only the last
/// can round (a subnormal or an overflowing result); elsewhere the scaling is exact.
fn scale<A: Arith>(a: &mut A, x: A::F, k: A::I) -> A::F {
    let zero = a.int(0);
    let negative = a.icmp(Cmp::Lt, k, zero);
    let minus_k = a.isub(zero, k);
    let magnitude = a.select_int(negative, minus_k, k);
    let two = a.int(2);
    let quarter = a.lshr(magnitude, two);
    let minus_quarter = a.isub(zero, quarter);
    let k1 = a.select_int(negative, minus_quarter, quarter);
    let k1_twice = a.iadd(k1, k1);
    let k1_thrice = a.iadd(k1_twice, k1);
    let k4 = a.isub(k, k1_thrice);
    let f1 = super::pow2(a, k1);
    let f4 = super::pow2(a, k4);
    let y = a.mul(x, f1);
    let y = a.mul(y, f1);
    let y = a.mul(y, f1);
    a.mul(y, f4)
}

/// The neighbour of a positive finite `x` one unit up (`up`) or down.
fn step<A: Arith>(a: &mut A, x: A::F, up: bool) -> A::F {
    let bits = a.to_bits(x);
    let one = a.int(1);
    let moved = if up {
        a.iadd(bits, one)
    } else {
        a.isub(bits, one)
    };
    a.bits_to_float(moved)
}

/// `1 / d` for `d` in `[1, 2)`, to about 60 bits: the linear seed `48/17 - 32/17 (d / 2)`
/// (4 bits) and four Newton steps.
fn reciprocal<A: Arith>(a: &mut A, d: A::F) -> A::F {
    let half = a.num(0.5);
    let dh = a.mul(d, half);
    let c0 = a.num(48.0 / 17.0);
    let c1 = a.num(-32.0 / 17.0);
    let mut y = a.fma(c1, dh, c0);
    let one = a.num(1.0);
    for _ in 0..4 {
        let ndh = a.neg(dh);
        let e = a.fma(ndh, y, one);
        y = a.fma(y, e, y);
    }
    a.mul(y, half)
}

/// `x / y` correctly rounded (ties to even), as IEEE 754 division.
pub fn div<A: Arith>(a: &mut A, x: A::F, y: A::F) -> A::F {
    // The quotient of the magnitudes, scaled: q in (0.5, 2).
    let (mx, ex) = unpack(a, x);
    let (my, ey) = unpack(a, y);
    let r = reciprocal(a, my);
    // q = mx r, then one correction (r is a few ulps off): q + (mx - q my) r.
    let q_first = a.mul(mx, r);
    let nq = a.neg(q_first);
    let r_first = a.fma(nq, my, mx);
    let q0 = a.fma(r_first, r, q_first);
    // The remainder mx - q my is exact for a q within an ulp of the quotient, and its sign is
    // right for any q (a rounded nonzero value keeps its sign).
    let remainder = |a: &mut A, q: A::F| {
        let nq = a.neg(q);
        a.fma(nq, my, mx)
    };
    let zero = a.num(0.0);
    // q1: the largest value with q1 my <= mx (q0 is within an ulp of the quotient).
    let r0 = remainder(a, q0);
    let q0_above = a.cmp(Cmp::Lt, r0, zero);
    let q0_down = step(a, q0, false);
    let q1 = a.select(q0_above, q0_down, q0);
    let q1_up = step(a, q1, true);
    let r_up = remainder(a, q1_up);
    let up_fits = a.cmp(Cmp::Ge, r_up, zero);
    let q1 = a.select(up_fits, q1_up, q1);
    // Up iff the quotient passes the midpoint: mx - q1 my > (u / 2) my, both sides exact.
    // (A quotient of two 53-bit numbers is never a midpoint of 53-bit numbers: no ties.)
    let q2 = step(a, q1, true);
    let u = a.sub(q2, q1);
    let half = a.num(0.5);
    let half_u = a.mul(u, half);
    let h = a.mul(half_u, my);
    let r1 = remainder(a, q1);
    let up = a.cmp(Cmp::Gt, r1, h);
    let q = a.select(up, q2, q1);
    let rq = remainder(a, q);
    let k = a.isub(ex, ey);
    let magnitude = round_scaled(a, q, rq, k);
    // Sign and the special operands.
    let xb = a.to_bits(x);
    let yb = a.to_bits(y);
    let sign_mask = a.int(SIGN);
    let xs = a.iand(xb, sign_mask);
    let ys = a.iand(yb, sign_mask);
    let sign = a.isub(xs, ys);
    let sign = a.iand(sign, sign_mask);
    let mag_bits = a.to_bits(magnitude);
    let signed_bits = a.ior(mag_bits, sign);
    let finite = a.bits_to_float(signed_bits);
    special_div(a, x, y, sign, finite)
}

/// `q * 2^k` rounded once, `q` being the nearest 53-bit value to a quotient whose remainder
/// is `rq` (positive: the exact quotient is above `q`).
fn round_scaled<A: Arith>(a: &mut A, q: A::F, rq: A::F, k: A::I) -> A::F {
    let t = scale(a, q, k);
    // In the subnormal range the scaling rounds: exactly half-way between two subnormals,
    // the exact quotient is on the remainder's side.
    let zero_i = a.int(0);
    let nk = a.isub(zero_i, k);
    let back = scale(a, t, nk);
    let d = a.sub(q, back);
    let zero = a.num(0.0);
    let exact = a.cmp(Cmp::Eq, d, zero);
    let ulp = a.num(f64::from_bits(1));
    let half_ulp_scaled = scale(a, ulp, nk);
    let half = a.num(0.5);
    let half_ulp_scaled = a.mul(half_ulp_scaled, half);
    let ad = a.abs(d);
    let tie = a.cmp(Cmp::Eq, ad, half_ulp_scaled);
    // Round-half-even made `t`; the exact value is above `q` when `rq > 0`.
    let above = a.cmp(Cmp::Gt, rq, zero);
    let below = a.cmp(Cmp::Lt, rq, zero);
    // Which side of q*2^k is `t`: up when q > back.
    let t_below = a.cmp(Cmp::Gt, d, zero);
    let up = step_any(a, t, true);
    let down = step_any(a, t, false);
    // A tie resolved toward `t`'s side is right; else the other grid point.
    let want_up = a.and(tie, above);
    let want_down = a.and(tie, below);
    let fix_up = a.and(want_up, t_below);
    let t_above = a.not(t_below);
    let fix_down = a.and(want_down, t_above);
    let not_exact = a.not(exact);
    let fix_up = a.and(fix_up, not_exact);
    let fix_down = a.and(fix_down, not_exact);
    let r = a.select(fix_up, up, t);
    a.select(fix_down, down, r)
}

/// The neighbour of a non-negative `x` one unit up or down (down from 0 stays 0).
fn step_any<A: Arith>(a: &mut A, x: A::F, up: bool) -> A::F {
    let bits = a.to_bits(x);
    let one = a.int(1);
    if up {
        let moved = a.iadd(bits, one);
        return a.bits_to_float(moved);
    }
    let zero = a.int(0);
    let at_zero = a.icmp(Cmp::Eq, bits, zero);
    let moved = a.isub(bits, one);
    let moved = a.select_int(at_zero, bits, moved);
    a.bits_to_float(moved)
}

/// The quotient for zeros, infinities and NaNs; `finite` otherwise.
pub(super) fn special_div<A: Arith>(a: &mut A, x: A::F, y: A::F, sign: A::I, finite: A::F) -> A::F {
    let zero = a.num(0.0);
    let inf = a.num(f64::INFINITY);
    let ax = a.abs(x);
    let ay = a.abs(y);
    let x_zero = a.cmp(Cmp::Eq, ax, zero);
    let y_zero = a.cmp(Cmp::Eq, ay, zero);
    let x_inf = a.cmp(Cmp::Eq, ax, inf);
    let y_inf = a.cmp(Cmp::Eq, ay, inf);
    let x_nan = a.is_nan(x);
    let y_nan = a.is_nan(y);
    let signed = |a: &mut A, v: A::F| {
        let bits = a.to_bits(v);
        let with = a.ior(bits, sign);
        a.bits_to_float(with)
    };
    let signed_zero = signed(a, zero);
    let signed_inf = signed(a, inf);
    let nan = a.num(f64::NAN);
    let to_inf = a.or(x_inf, y_zero);
    let r = a.select(to_inf, signed_inf, finite);
    let to_zero = a.or(x_zero, y_inf);
    let r = a.select(to_zero, signed_zero, r);
    let both_zero = a.and(x_zero, y_zero);
    let both_inf = a.and(x_inf, y_inf);
    let invalid = a.or(both_zero, both_inf);
    let any_nan = a.or(x_nan, y_nan);
    let invalid = a.or(invalid, any_nan);
    a.select(invalid, nan, r)
}

/// `sqrt(x)` correctly rounded, as IEEE 754's.
pub fn sqrt<A: Arith>(a: &mut A, x: A::F) -> A::F {
    // x = m * 2^(2k) with m in [1, 4).
    let (m1, e) = unpack(a, x);
    let one = a.int(1);
    let odd = a.iand(e, one);
    let is_odd = a.icmp(Cmp::Eq, odd, one);
    let two = a.num(2.0);
    let m2 = a.mul(m1, two);
    let m = a.select(is_odd, m2, m1);
    let even_e = a.isub(e, odd);
    let k = a.ashr(even_e, one);
    // 1/sqrt(m) from a linear seed (m in [1, 4): within 30%) and seven Newton steps.
    let c0 = a.num(1.2);
    let c1 = a.num(-0.15);
    let mut y = a.fma(c1, m, c0);
    let half = a.num(0.5);
    let three_halves = a.num(1.5);
    let hm = a.mul(m, half);
    for _ in 0..7 {
        let yy = a.mul(y, y);
        let nhm = a.neg(hm);
        let t = a.fma(nhm, yy, three_halves);
        y = a.mul(y, t);
    }
    // s = m y, then one correction in the root's own terms (the rounding errors of the steps
    // leave y a few ulps off): s0 + (m - s0^2) y / 2, within an ulp of the root.
    let s_first = a.mul(m, y);
    let ns = a.neg(s_first);
    let r_first = a.fma(ns, s_first, m);
    let hy = a.mul(y, half);
    let s0 = a.fma(r_first, hy, s_first);
    // The lower neighbour s1 <= sqrt(m) < s1 + ulp, from the exact remainder m - s0^2.
    let rem = |a: &mut A, s: A::F| {
        let ns = a.neg(s);
        a.fma(ns, s, m)
    };
    let r0 = rem(a, s0);
    let zero = a.num(0.0);
    let s0_above = a.cmp(Cmp::Lt, r0, zero);
    let s0_down = step(a, s0, false);
    let s1 = a.select(s0_above, s0_down, s0);
    // s0 may also be an ulp too low: then s1 + ulp is still <= sqrt(m).
    let s1_up = step(a, s1, true);
    let r_up = rem(a, s1_up);
    let up_fits = a.cmp(Cmp::Ge, r_up, zero);
    let s1 = a.select(up_fits, s1_up, s1);
    // Round up iff m > (s1 + u/2)^2 = s1 s2 + u^2/4; m - s1 s2 lies on the grid of u^2, so
    // that is m - s1 s2 > 0 (no square root is a tie), a sign the rounded fma keeps.
    let s2 = step(a, s1, true);
    let ns1 = a.neg(s1);
    let beyond = a.fma(ns1, s2, m);
    let round_up = a.cmp(Cmp::Gt, beyond, zero);
    let s = a.select(round_up, s2, s1);
    let result = scale(a, s, k);
    special_sqrt(a, x, result)
}

/// `sqrt(x)` given `root`, the root of a positive finite `x`: zeros (keeping their sign),
/// +infinity and NaN as they are; negative numbers: NaN.
pub(super) fn special_sqrt<A: Arith>(a: &mut A, x: A::F, root: A::F) -> A::F {
    let zero = a.num(0.0);
    let ax = a.abs(x);
    let is_zero = a.cmp(Cmp::Eq, ax, zero);
    let inf = a.num(f64::INFINITY);
    let is_inf = a.cmp(Cmp::Eq, x, inf);
    let keep = a.or(is_zero, is_inf);
    let r = a.select(keep, x, root);
    let negative = sign_bit(a, x);
    let not_zero = a.not(is_zero);
    let invalid_neg = a.and(negative, not_zero);
    let nan_in = a.is_nan(x);
    let invalid = a.or(invalid_neg, nan_in);
    let nan = a.num(f64::NAN);
    a.select(invalid, nan, r)
}

#[cfg(test)]
mod tests {
    use super::super::native::Native;
    use super::*;

    fn same(got: f64, want: f64) -> bool {
        got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan())
    }

    fn random_f64(state: &mut u64) -> f64 {
        *state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        f64::from_bits(*state)
    }

    fn specials() -> Vec<f64> {
        let mut v = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            3.0,
            0.1,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::from_bits(1),
            f64::from_bits(0x000F_FFFF_FFFF_FFFF),
            2f64.powi(-1022) * 1.5,
            1.0 + f64::EPSILON,
            2.0 - f64::EPSILON,
        ];
        let negatives: Vec<f64> = v.iter().map(|x| -x).collect();
        v.extend(negatives);
        v
    }

    #[test]
    fn division_is_ieee() {
        let sp = specials();
        for &x in &sp {
            for &y in &sp {
                let got = div(&mut Native, x, y);
                assert!(same(got, x / y), "{x:e} / {y:e} = {got:e}, not {:e}", x / y);
            }
        }
        let mut state = 11;
        for i in 0..400_000 {
            let x = random_f64(&mut state);
            let mut y = random_f64(&mut state);
            if i % 4 == 0 {
                // Quotients in the subnormal range and near overflow.
                y = f64::from_bits(
                    (y.to_bits() & !EXPONENT as u64)
                        | ((x.to_bits() & EXPONENT as u64) ^ (0x7FE0_0000_0000_0000)),
                );
            }
            let got = div(&mut Native, x, y);
            assert!(same(got, x / y), "{x:e} / {y:e} = {got:e}, not {:e}", x / y);
        }
        // Near representable quotients and their midpoints: x = q y rounded, and neighbours.
        for _ in 0..200_000 {
            let q = 1.0 + (random_f64(&mut state).to_bits() >> 12) as f64 / (1u64 << 52) as f64;
            let y = 1.0 + (random_f64(&mut state).to_bits() >> 12) as f64 / (1u64 << 52) as f64;
            let p = q * y;
            for x in [
                p,
                f64::from_bits(p.to_bits() + 1),
                f64::from_bits(p.to_bits() - 1),
            ] {
                for scale in [1.0, 2f64.powi(-1030), 2f64.powi(1000)] {
                    let (x, y) = (x * scale, y);
                    let got = div(&mut Native, x, y);
                    assert!(same(got, x / y), "{x:e} / {y:e} = {got:e}, not {:e}", x / y);
                }
            }
        }
        // Exact quotients and halfway cases of small integers.
        for n in 1..2000u32 {
            for d in [3.0, 7.0, 10.0, 1024.0, 3.0 * 2f64.powi(-1060)] {
                let x = f64::from(n);
                assert!(same(div(&mut Native, x, d), x / d), "{x} / {d:e}");
            }
        }
    }

    #[test]
    fn square_root_is_ieee() {
        for x in specials() {
            let got = sqrt(&mut Native, x);
            assert!(
                same(got, x.sqrt()),
                "sqrt({x:e}) = {got:e}, not {:e}",
                x.sqrt()
            );
        }
        let mut state = 5;
        for _ in 0..400_000 {
            let x = random_f64(&mut state).abs();
            let got = sqrt(&mut Native, x);
            assert!(
                same(got, x.sqrt()),
                "sqrt({x:e}) = {got:e}, not {:e}",
                x.sqrt()
            );
        }
        // Near squares: x = s^2 rounded and its neighbours.
        for _ in 0..200_000 {
            let r = 1.0 + (random_f64(&mut state).to_bits() >> 12) as f64 / (1u64 << 52) as f64;
            let p = r * r;
            for x in [
                p,
                f64::from_bits(p.to_bits() + 1),
                f64::from_bits(p.to_bits() - 1),
            ] {
                for scale in [1.0, 2f64.powi(-1060), 2f64.powi(-1073), 2f64.powi(1000)] {
                    let x = x * scale;
                    let got = sqrt(&mut Native, x);
                    assert!(
                        same(got, x.sqrt()),
                        "sqrt({x:e}) = {got:e}, not {:e}",
                        x.sqrt()
                    );
                }
            }
        }
        for n in 1..100_000u32 {
            let x = f64::from(n);
            assert!(same(sqrt(&mut Native, x), x.sqrt()), "sqrt({x})");
        }
    }
}
