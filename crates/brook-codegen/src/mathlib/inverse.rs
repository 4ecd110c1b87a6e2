//! `asin`, `acos`, `atan` and `atan2`.
//!
//! `atan`: `|x|` is moved next to 0 by `atan x = atan c + atan((x - c) / (1 + x c))` for the
//! breakpoint `c` in {1/2, 1, 3/2} nearest it, or `pi/2 - atan(1/x)` above 39/16; then a
//! Taylor polynomial on `|t| <= 7/16`. `asin`: a Taylor polynomial on `|x| <= 1/2`, else
//! `asin x = pi/2 - 2 asin(sqrt((1 - x) / 2))` with the square root carried as a double-double.

use super::consts::*;
use super::{fast_two_sum, horner, series, sign_bit, two_sum, Arith, Cmp, Dd};

/// `atan(x)`.
pub fn atan<A: Arith>(a: &mut A, x: A::F) -> A::F {
    let ax = a.abs(x);
    let r = atan_dd(a, ax);
    let neg = sign_bit(a, x);
    let n = a.neg(r.hi);
    a.select(neg, n, r.hi)
}

/// `atan2(y, x)` with the special cases of C99 Annex F.
pub fn atan2<A: Arith>(a: &mut A, y: A::F, x: A::F) -> A::F {
    let ax = a.abs(x);
    let ay = a.abs(y);
    let zero = a.num(0.0);
    let one = a.num(1.0);
    let inf = a.num(f64::INFINITY);
    let ratio = a.div(ay, ax);
    // y = 0: the ratio is 0 even for x = 0; both infinite: atan 1.
    let y_zero = a.cmp(Cmp::Eq, ay, zero);
    let ratio = a.select(y_zero, zero, ratio);
    let x_inf = a.cmp(Cmp::Eq, ax, inf);
    let y_inf = a.cmp(Cmp::Eq, ay, inf);
    let both_inf = a.and(x_inf, y_inf);
    let ratio = a.select(both_inf, one, ratio);
    let t = atan_dd(a, ratio);
    // x negative (or -0): pi - atan.
    let pi_hi = a.num(PI_HI);
    let pi_lo = a.num(PI_LO);
    let nh = a.neg(t.hi);
    let d = two_sum(a, pi_hi, nh);
    let low = a.sub(pi_lo, t.lo);
    let low = a.add(d.lo, low);
    let back = a.add(d.hi, low);
    let x_neg = sign_bit(a, x);
    let r = a.select(x_neg, back, t.hi);
    let y_neg = sign_bit(a, y);
    let nr = a.neg(r);
    let r = a.select(y_neg, nr, r);
    let x_nan = a.is_nan(x);
    let y_nan = a.is_nan(y);
    let any_nan = a.or(x_nan, y_nan);
    let quiet = a.add(x, y);
    a.select(any_nan, quiet, r)
}

/// `atan(ax)` for `ax >= 0` (or NaN) as a normalised double-double.
fn atan_dd<A: Arith>(a: &mut A, ax: A::F) -> Dd<A::F> {
    // Breakpoints: [0, 7/16) c = 0; [7/16, 11/16) 1/2; [11/16, 19/16) 1; [19/16, 39/16) 3/2;
    // above: t = -1/ax around pi/2.
    let bounds = [7.0 / 16.0, 11.0 / 16.0, 19.0 / 16.0, 39.0 / 16.0];
    let centres = [0.5, 1.0, 1.5];
    let bases = [
        (ATAN_HALF_HI, ATAN_HALF_LO),
        (PIO4_HI, PIO4_LO),
        (ATAN_THREE_HALVES_HI, ATAN_THREE_HALVES_LO),
        (PIO2_HI, PIO2_LO),
    ];
    let mut c = a.num(0.0);
    let mut base_hi = a.num(0.0);
    let mut base_lo = a.num(0.0);
    let mut last = None;
    for (i, &bound) in bounds.iter().enumerate() {
        let bound = a.num(bound);
        let above = a.cmp(Cmp::Ge, ax, bound);
        if let Some(&centre) = centres.get(i) {
            let centre = a.num(centre);
            c = a.select(above, centre, c);
        }
        let (h, l) = bases[i];
        let h = a.num(h);
        let l = a.num(l);
        base_hi = a.select(above, h, base_hi);
        base_lo = a.select(above, l, base_lo);
        last = Some(above);
    }
    let far = last.expect("breakpoints");
    let one = a.num(1.0);
    let minus_one = a.num(-1.0);
    let num = a.sub(ax, c);
    let num = a.select(far, minus_one, num);
    let den = a.fma(ax, c, one);
    let den = a.select(far, ax, den);
    let t = a.div(num, den);
    // atan t = t + t^3 P(t^2).
    let coeffs = series(1..=22, |k| {
        let s = if k % 2 == 0 { 1.0 } else { -1.0 };
        s / f64::from(2 * k + 1)
    });
    let z = a.mul(t, t);
    let p = horner(a, z, &coeffs);
    let t3 = a.mul(z, t);
    let poly = a.mul(t3, p);
    let lead = two_sum(a, base_hi, t);
    let low = a.add(base_lo, poly);
    let low = a.add(lead.lo, low);
    fast_two_sum(a, lead.hi, low)
}

/// Taylor coefficients of `(asin x - x) / x^3` in `x^2`.
fn asin_coeffs() -> Vec<f64> {
    // c_n = (2n)! / (4^n (n!)^2 (2n + 1)); c_n / c_{n-1} = (2n - 1)^2 / (2n (2n + 1)).
    let mut c = 1.0f64;
    let mut out = Vec::new();
    for n in 1..=24u32 {
        let n = f64::from(n);
        c *= (2.0 * n - 1.0) / (2.0 * n);
        out.push(c / (2.0 * n + 1.0));
    }
    out
}

/// `asin(s) - s`'s tail `s w R(w)` for `w = s^2 <= 1/4`.
fn asin_tail<A: Arith>(a: &mut A, s: A::F, w: A::F) -> A::F {
    let r = horner(a, w, &asin_coeffs());
    let sw = a.mul(s, w);
    a.mul(sw, r)
}

/// For `ax` in `[1/2, 1]`: `w = (1 - ax) / 2` and `asin(sqrt(w))` as a double-double.
fn asin_of_root<A: Arith>(a: &mut A, w: A::F) -> Dd<A::F> {
    let s = a.sqrt(w);
    let ns = a.neg(s);
    let residue = a.fma(ns, s, w);
    let twice = a.add(s, s);
    let sl = a.div(residue, twice);
    let zero = a.num(0.0);
    let positive = a.cmp(Cmp::Gt, s, zero);
    let sl = a.select(positive, sl, zero);
    let tail = asin_tail(a, s, w);
    let lo = a.add(sl, tail);
    Dd { hi: s, lo }
}

/// `w = (1 - ax) / 2` (exact for `ax` in `[1/2, 1]`).
fn half_complement<A: Arith>(a: &mut A, ax: A::F) -> A::F {
    let one = a.num(1.0);
    let half = a.num(0.5);
    let d = a.sub(one, ax);
    a.mul(d, half)
}

/// `hi + lo - 2 (r.hi + r.lo)` for the double-double `(hi, lo)` (pi/2 or pi).
fn minus_twice<A: Arith>(a: &mut A, hi: f64, lo: f64, r: Dd<A::F>) -> A::F {
    let hi = a.num(hi);
    let lo = a.num(lo);
    let two = a.num(2.0);
    let th = a.mul(two, r.hi);
    let nth = a.neg(th);
    let d = two_sum(a, hi, nth);
    let tl = a.mul(two, r.lo);
    let low = a.sub(lo, tl);
    let low = a.add(d.lo, low);
    a.add(d.hi, low)
}

/// `asin(x)`.
pub fn asin<A: Arith>(a: &mut A, x: A::F) -> A::F {
    let ax = a.abs(x);
    let z = a.mul(ax, ax);
    let tail = asin_tail(a, ax, z);
    let near = a.add(ax, tail);
    let w = half_complement(a, ax);
    let root = asin_of_root(a, w);
    let far = minus_twice(a, PIO2_HI, PIO2_LO, root);
    let half = a.num(0.5);
    let is_near = a.cmp(Cmp::Le, ax, half);
    let r = a.select(is_near, near, far);
    let neg = sign_bit(a, x);
    let nr = a.neg(r);
    a.select(neg, nr, r)
}

/// `acos(x)`.
pub fn acos<A: Arith>(a: &mut A, x: A::F) -> A::F {
    let ax = a.abs(x);
    // |x| <= 1/2: pi/2 - asin x.
    let z = a.mul(x, x);
    let tail = asin_tail(a, x, z);
    let pio2_hi = a.num(PIO2_HI);
    let pio2_lo = a.num(PIO2_LO);
    let nx = a.neg(x);
    let d = two_sum(a, pio2_hi, nx);
    let low = a.sub(pio2_lo, tail);
    let low = a.add(d.lo, low);
    let near = a.add(d.hi, low);
    // |x| > 1/2: 2 asin(sqrt((1 - |x|) / 2)), or pi minus that for negative x.
    let w = half_complement(a, ax);
    let root = asin_of_root(a, w);
    let two = a.num(2.0);
    let th = a.mul(two, root.hi);
    let tl = a.mul(two, root.lo);
    let positive_far = a.add(th, tl);
    let negative_far = minus_twice(a, PI_HI, PI_LO, root);
    let zero = a.num(0.0);
    let x_neg = a.cmp(Cmp::Lt, x, zero);
    let far = a.select(x_neg, negative_far, positive_far);
    let half = a.num(0.5);
    let is_near = a.cmp(Cmp::Le, ax, half);
    a.select(is_near, near, far)
}
