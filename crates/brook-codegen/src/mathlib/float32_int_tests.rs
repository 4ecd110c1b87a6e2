//! [`super::float32_int`] against the host's `float` division and square root: special
//! operands in every pair, random bit patterns, operands of nearby magnitudes, quotients in the
//! subnormal range; and the flushing form against the host's on flushed operands.

use super::float32_int::{div_bits, fma_bits, rem_bits, sqrt_bits};
use super::native::Native;

fn div(x: f32, y: f32, flush: bool) -> u32 {
    let bits = div_bits(
        &mut Native,
        i64::from(x.to_bits()),
        i64::from(y.to_bits()),
        flush,
    );
    u32::try_from(bits).expect("a float's bits")
}

fn rem(x: f32, y: f32, flush: bool) -> u32 {
    let bits = rem_bits(
        &mut Native,
        i64::from(x.to_bits()),
        i64::from(y.to_bits()),
        flush,
    );
    u32::try_from(bits).expect("a float's bits")
}

fn fma(x: f32, y: f32, z: f32, flush: bool) -> u32 {
    let bits = |v: f32| i64::from(v.to_bits());
    let r = fma_bits(&mut Native, bits(x), bits(y), bits(z), flush);
    u32::try_from(r).expect("a float's bits")
}

fn sqrt(x: f32, flush: bool) -> u32 {
    u32::try_from(sqrt_bits(&mut Native, i64::from(x.to_bits()), flush)).expect("a float's bits")
}

/// Whether `got` is `expected`'s bits (any NaN for a NaN).
fn same(got: u32, expected: f32) -> bool {
    let got = f32::from_bits(got);
    (got.is_nan() && expected.is_nan()) || got.to_bits() == expected.to_bits()
}

fn specials() -> Vec<f32> {
    let mut values = vec![
        0.0,
        f32::from_bits(1),
        f32::from_bits(2),
        f32::from_bits(0x007F_FFFF),
        f32::from_bits(0x0040_0001),
        f32::MIN_POSITIVE,
        1.0,
        1.5,
        2.0,
        3.0,
        7.0,
        0.1,
        f32::EPSILON,
        1.0 + f32::EPSILON,
        2.0 - f32::EPSILON,
        f32::MAX,
        f32::INFINITY,
        f32::NAN,
        f32::from_bits(0x7F80_0001), // a signalling NaN
        f32::from_bits(0x7FC1_2345),
    ];
    let negatives: Vec<f32> = values.iter().map(|v| -v).collect();
    values.extend(negatives);
    values
}

/// xorshift: deterministic operands.
struct Bits(u64);

impl Bits {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 16) as u32
    }
}

#[test]
fn division_of_special_operands() {
    for &x in &specials() {
        for &y in &specials() {
            assert!(same(div(x, y, false), x / y), "{x:e} / {y:e}");
        }
    }
}

#[test]
fn division_of_random_operands() {
    let mut bits = Bits(0x9E37_79B9_7F4A_7C15);
    for n in 0..200_000 {
        let x = f32::from_bits(bits.next());
        let y = match n % 3 {
            // Nearby magnitudes: quotients in the normal range, every rounding case.
            0 => f32::from_bits((x.to_bits() & 0xFF80_0000) | (bits.next() & 0x007F_FFFF)),
            // Quotients in and around the subnormal range.
            1 => f32::from_bits((bits.next() & 0x807F_FFFF) | 0x7E00_0000),
            _ => f32::from_bits(bits.next()),
        };
        assert!(
            same(div(x, y, false), x / y),
            "{x:e} / {y:e} ({:#x} / {:#x})",
            x.to_bits(),
            y.to_bits()
        );
    }
}

#[test]
fn square_roots() {
    for &x in &specials() {
        assert!(same(sqrt(x, false), x.sqrt()), "sqrt {x:e}");
    }
    let mut bits = Bits(0x2545_F491_4F6C_DD1D);
    for _ in 0..200_000 {
        let x = f32::from_bits(bits.next() & 0x7FFF_FFFF);
        assert!(
            same(sqrt(x, false), x.sqrt()),
            "sqrt {x:e} ({:#x})",
            x.to_bits()
        );
    }
    for k in 1..=0x7F_FFFF_u32 / 997 {
        let x = f32::from_bits(k * 997); // subnormals
        assert!(same(sqrt(x, false), x.sqrt()), "sqrt {x:e}");
    }
}

#[test]
fn flushing_reads_subnormal_operands_as_zeros() {
    let flushed = |x: f32| {
        if x.is_subnormal() {
            0.0f32.copysign(x)
        } else {
            x
        }
    };
    let mut bits = Bits(0x1234_5678_9ABC_DEF1);
    for _ in 0..50_000 {
        // Operands subnormal half of the time.
        let x = f32::from_bits(bits.next() & 0x80FF_FFFF);
        let y = f32::from_bits(bits.next() & 0x80FF_FFFF);
        let expected = flushed(x) / flushed(y);
        assert!(same(div(x, y, true), expected), "{x:e} / {y:e}");
        assert!(same(sqrt(x, true), flushed(x).sqrt()), "sqrt {x:e}");
        assert!(
            same(rem(x, y, true), flushed(x) % flushed(y)),
            "{x:e} % {y:e}"
        );
        let expected = flushed(x).mul_add(flushed(y), flushed(x));
        assert!(
            same(fma(x, y, x, true), expected),
            "fma({x:e}, {y:e}, {x:e})"
        );
    }
    // A quotient in the subnormal range is kept.
    let tiny = f32::MIN_POSITIVE;
    assert_eq!(div(tiny, 4.0, true), (tiny / 4.0).to_bits());
}

#[test]
fn remainders() {
    for &x in &specials() {
        for &y in &specials() {
            assert!(same(rem(x, y, false), x % y), "{x:e} % {y:e}");
        }
    }
    let mut bits = Bits(0x5DEE_CE66_D1CE_4E5B);
    for n in 0..200_000 {
        let x = f32::from_bits(bits.next());
        let y = match n % 3 {
            // Far apart: many doublings; near: few; any bits.
            0 => f32::from_bits(bits.next() & 0x80FF_FFFF),
            1 => f32::from_bits((x.to_bits() & 0xFF80_0000) ^ (bits.next() & 0x0F7F_FFFF)),
            _ => f32::from_bits(bits.next()),
        };
        assert!(
            same(rem(x, y, false), x % y),
            "{x:e} % {y:e} ({:#x} % {:#x})",
            x.to_bits(),
            y.to_bits()
        );
    }
    assert_eq!(rem(f32::MAX, f32::from_bits(1), false), 0);
    assert_eq!(rem(-f32::MAX, 3.0, false), (-f32::MAX % 3.0).to_bits());
}

#[test]
fn fused_multiply_adds() {
    let specials = specials();
    for &x in &specials {
        for &y in &specials {
            for &z in specials.iter().step_by(3) {
                assert!(
                    same(fma(x, y, z, false), x.mul_add(y, z)),
                    "fma({x:e}, {y:e}, {z:e})"
                );
            }
        }
    }
    let mut bits = Bits(0x0123_4567_89AB_CDEF);
    for n in 0..200_000 {
        let x = f32::from_bits(bits.next());
        let y = f32::from_bits(bits.next());
        let z = match n % 4 {
            // Near the product's magnitude, of either sign: cancellations.
            0 => {
                let p = x * y;
                f32::from_bits((p.to_bits() ^ 0x8000_0000) ^ (bits.next() & 0x0000_FFFF))
            }
            1 => -(x * y),
            // Small products against any addend; small exponents (subnormal results).
            2 => f32::from_bits(bits.next() & 0x80FF_FFFF),
            _ => f32::from_bits(bits.next()),
        };
        let (x, y) = if n % 4 == 2 {
            (
                f32::from_bits(x.to_bits() & 0x9FFF_FFFF),
                f32::from_bits(y.to_bits() & 0x9FFF_FFFF),
            )
        } else {
            (x, y)
        };
        assert!(
            same(fma(x, y, z, false), x.mul_add(y, z)),
            "fma({x:e}, {y:e}, {z:e}) ({:#x}, {:#x}, {:#x})",
            x.to_bits(),
            y.to_bits(),
            z.to_bits()
        );
    }
}
