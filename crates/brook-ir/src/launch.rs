//! Launch semantics: what a kernel launch computes, defined once for every executor.
//!
//! These rules come from `SEMANTICS.md`. The reference interpreter calls the functions here
//! directly; the CPU and CUDA backends generate code that computes the same values with the same
//! operations, in the same order, so that every backend gives the same bits.
//!
//! # Shapes
//! Shapes are listed slowest dimension first (`float a<H, W>` is `[H, W]`), streams are
//! row-major, and rank is 1 to 4. Leading 1s do not change a stream: `<100>`, `<1, 100>` and
//! `<1, 1, 100>` hold the same elements ([`normalized_shape`]).
//!
//! # The domain
//! A map kernel runs once per element of its output domain: the shape of its first output (or the
//! domain set with `domainOffset`/`domainSize`). `instance()` is the position in that domain,
//! fastest axis first (`.x` is the column); `indexof(s)` is the position in stream `s`.
//!
//! `indexof(s)` is a `float4` and `instance()` an `int4`; unused components are 0. On an input
//! read through implicit resize, `indexof` gives that input's own (resized) element position.
//!
//! # Outputs
//! A kernel may have any number of outputs. An output element that an invocation does not write
//! keeps its previous contents on every backend; reading an output before writing it gives those
//! previous contents. Locals are zero-initialised. One stream bound as both an input and an
//! output is rejected at launch (the runtime reports it on the outputs).
//!
//! # Implicit resize
//! An input whose shape differs from the domain (same rank after [`normalized_shape`]) is read at
//! [`resize_index`] along each axis: `floor(i * n_in / n_out)` in exact integer arithmetic. A
//! smaller input repeats (0 0 1 1 ...), a larger one strides (0 2 4 ...), and ratios need not be
//! integers (7 -> 10 reads 0 0 1 2 2 3 4 4 5 6). Nothing is materialised.
//!
//! # Gathers and scatters
//! A floating-point index `f` selects element [`float_index`]`(f) = floor(f + 0.25)`, computed in
//! the index's own precision; integer indices are used as they are. A gather clamps each axis to
//! `[0, extent - 1]` ([`clamp_index`]): no executor ever reads outside a buffer. A scatter writes
//! only when every axis is in range ([`scatter_index`]); other writes are dropped. A vector index
//! `a[v]` means `a[v.y][v.x]`: component 0 is the fastest axis.
//!
//! # Iterators
//! Element `i` of `iter(a, b)` over `n` elements is [`iterator_value`]: `a + ((b - a) * i) / n`,
//! each operation rounded to `f32`, per component. A one-dimensional iterator interpolates every
//! component along its axis; an iterator of rank `r >= 2` has `r` components and interpolates
//! component `k` along axis `k`, fastest first ([`iterator_axis`]). An iterator passed as an
//! input is resized to the domain like any input.
//!
//! # Reductions
//! A reduce kernel's domain is its target. Each target element reduces a tile of input elements
//! ([`crate::reduce_order::reduction_tile`]) in the canonical order of
//! [`crate::reduce_order`]; the kernel body is the combine step, run with the reduction
//! variable holding the left (earlier) partial result and the input the right one.
//!
//! # Execution regions
//! `domainOffset`/`domainSize` restrict a launch to a box of the domain: only those instances
//! run, and `instance()`/`indexof` still give absolute positions in the domain.
//!
//! # Arithmetic
//! Integers wrap (two's complement); integer division and remainder by zero give 0
//! ([`int_div`], [`int_rem`]). Shift counts are taken modulo the left operand's bit width.
//! Float to integer conversion truncates toward zero and saturates (NaN gives 0). Float `+ - * /`
//! and `sqrt` are correctly rounded and never fused. A local-array index is clamped to the array
//! like a gather index, so no index expression can reach outside its storage.
//! `round(x)` is C99 `round`, halfway cases away from zero, computed exactly as
//! [`round_half_away`] does: `t = trunc(x)`, and `t + copysign(1, x)` when `|x - t| >= 0.5`.

/// A shape without its leading 1s (but never empty): `[1, 1, 100]` -> `[100]`.
pub fn normalized_shape(shape: &[usize]) -> &[usize] {
    let first = shape
        .iter()
        .position(|&d| d != 1)
        .unwrap_or(shape.len().saturating_sub(1));
    &shape[first..]
}

/// The input element read at domain position `i` along an axis of `n_out` elements, when the
/// input has `n_in` elements along it: `floor(i * n_in / n_out)`.
pub fn resize_index(i: usize, n_in: usize, n_out: usize) -> usize {
    if n_out == 0 {
        return 0;
    }
    ((i as u128 * n_in as u128) / n_out as u128) as usize
}

/// The element a floating-point gather or scatter index selects: `floor(f + 0.25)`, so that exact
/// integers are exact and values a rounding error below an integer still hit it. NaN selects 0;
/// infinities saturate.
pub fn float_index(f: f64) -> i64 {
    let rounded = (f + 0.25).floor();
    if rounded.is_nan() {
        0
    } else {
        rounded as i64 // `as` saturates at the i64 range.
    }
}

/// The same rule computed in single precision, as a `float` index is: `f + 0.25` rounds to
/// `f32` before the floor.
pub fn float_index_f32(f: f32) -> i64 {
    let rounded = (f + 0.25f32).floor();
    if rounded.is_nan() {
        0
    } else {
        rounded as i64
    }
}

/// A gather index clamped to `[0, extent - 1]` (an empty axis reads element 0, which the runtime
/// never allows to happen: streams have no empty axis).
pub fn clamp_index(i: i64, extent: usize) -> usize {
    if i <= 0 || extent == 0 {
        0
    } else {
        (i as u64).min(extent as u64 - 1) as usize
    }
}

/// A scatter index: `Some` when in range, `None` when the write is dropped.
pub fn scatter_index(i: i64, extent: usize) -> Option<usize> {
    usize::try_from(i).ok().filter(|&i| i < extent)
}

/// The axis (slowest first, of `rank`) along which component `component` of an iterator runs.
pub fn iterator_axis(rank: usize, component: usize) -> usize {
    if rank <= 1 {
        0
    } else {
        rank - 1 - component.min(rank - 1)
    }
}

/// Element `i` of the iterator `iter(a, b)` over `n` elements: `a + ((b - a) * i) / n` in `f32`.
pub fn iterator_value(a: f32, b: f32, i: usize, n: usize) -> f32 {
    a + ((b - a) * i as f32) / n as f32
}

/// C99 `round` (halfway cases away from zero) by the steps every executor uses: `t =
/// trunc(x)`; `x - t` is exact; when `|x - t| >= 0.5` the result is `t + copysign(1, x)`
/// (exact too, as `|t| < 2^52` there), otherwise `t` (keeping the sign of a zero result).
/// NaN and infinities come back unchanged.
pub fn round_half_away(x: f64) -> f64 {
    let t = x.trunc();
    if (x - t).abs() >= 0.5 {
        t + 1f64.copysign(x)
    } else {
        t
    }
}

/// [`round_half_away`] in `f32` arithmetic.
pub fn round_half_away_f32(x: f32) -> f32 {
    let t = x.trunc();
    if (x - t).abs() >= 0.5 {
        t + 1f32.copysign(x)
    } else {
        t
    }
}

/// Integer division that wraps (`i32::MIN / -1 == i32::MIN`) and gives 0 for a zero divisor.
pub fn int_div(a: i64, b: i64, bits: u32) -> i64 {
    if b == 0 {
        return 0;
    }
    wrap(a.wrapping_div(b), bits)
}

/// Integer remainder with the sign of `a`, 0 for a zero divisor.
pub fn int_rem(a: i64, b: i64, bits: u32) -> i64 {
    if b == 0 {
        return 0;
    }
    wrap(a.wrapping_rem(b), bits)
}

/// Wraps a value to a signed integer of `bits` bits (two's complement).
pub fn wrap(value: i64, bits: u32) -> i64 {
    if bits >= 64 {
        return value;
    }
    let shift = 64 - bits;
    (value << shift) >> shift
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_is_c99_round() {
        for x in [
            -2.5, -1.6, -1.5, -1.0, -0.5, -0.4, 0.0, 0.4, 0.5, 1.5, 2.5, 0.49999997, 1e300,
        ] {
            assert_eq!(round_half_away(x).to_bits(), x.round().to_bits(), "{x}");
            let f = x as f32;
            assert_eq!(round_half_away_f32(f).to_bits(), f.round().to_bits(), "{f}");
        }
        assert_eq!(round_half_away(-0.3).to_bits(), (-0.0f64).to_bits());
        assert!(round_half_away(f64::NAN).is_nan());
        assert_eq!(round_half_away(f64::NEG_INFINITY), f64::NEG_INFINITY);
        assert_eq!(round_half_away_f32(8388609.0), 8388609.0);
    }

    #[test]
    fn leading_ones_do_not_change_a_shape() {
        assert_eq!(normalized_shape(&[1, 1, 100]), &[100]);
        assert_eq!(normalized_shape(&[1, 100, 1]), &[100, 1]);
        assert_eq!(normalized_shape(&[1, 1]), &[1]);
    }

    #[test]
    fn resize_matches_the_seed_examples() {
        let down: Vec<usize> = (0..5).map(|i| resize_index(i, 10, 5)).collect();
        assert_eq!(down, [0, 2, 4, 6, 8]);
        let up: Vec<usize> = (0..10).map(|i| resize_index(i, 5, 10)).collect();
        assert_eq!(up, [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]);
        let odd: Vec<usize> = (0..10).map(|i| resize_index(i, 7, 10)).collect();
        assert_eq!(odd, [0, 0, 1, 2, 2, 3, 4, 4, 5, 6]);
    }

    #[test]
    fn float_indices_round_a_quarter_up() {
        assert_eq!(float_index(3.0), 3);
        assert_eq!(float_index(2.9999), 3);
        assert_eq!(float_index(2.74), 2);
        assert_eq!(float_index(-0.5), -1);
        assert_eq!(float_index(f64::NAN), 0);
        assert_eq!(float_index(f64::INFINITY), i64::MAX);
        assert_eq!(float_index_f32(0.75), 1);
    }

    #[test]
    fn gathers_clamp_and_scatters_drop() {
        assert_eq!(clamp_index(-3, 10), 0);
        assert_eq!(clamp_index(12, 10), 9);
        assert_eq!(clamp_index(i64::MAX, 10), 9);
        assert_eq!(scatter_index(-1, 10), None);
        assert_eq!(scatter_index(10, 10), None);
        assert_eq!(scatter_index(9, 10), Some(9));
    }

    #[test]
    fn iterators_follow_the_seed_examples() {
        let s: Vec<f32> = (0..10).map(|i| iterator_value(2.0, 7.0, i, 10)).collect();
        assert_eq!(s, [2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5]);
        assert_eq!(iterator_value(0.0, 10.0, 2, 4), 5.0);
    }

    #[test]
    fn integers_wrap_and_never_trap() {
        assert_eq!(wrap(120 + 8, 8), -128);
        assert_eq!(int_div(7, 0, 32), 0);
        assert_eq!(int_rem(-7, 2, 32), -1);
        assert_eq!(int_div(i32::MIN as i64, -1, 32), i32::MIN as i64);
    }
}
