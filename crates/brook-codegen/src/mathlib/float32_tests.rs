//! [`super::float32`] against the host's `float` division and square root, over doubles whose
//! division and square root are off by up to 2^-20 relative (as a device's may be), rounded
//! to `float` from their bits (the default [`Arith::round_to_f32`]): every result the
//! correctly rounded one.

use super::float32::{div_f32, sqrt_f32};
use super::native::Native;
use super::{Arith, Cmp};
use std::cell::Cell;

/// Native doubles whose `approx_div` and `approx_sqrt` err by a pseudo-random amount up to
/// 2^-20 relative.
struct Sloppy {
    state: Cell<u64>,
}

impl Sloppy {
    fn error(&self) -> f64 {
        let mut s = self.state.get();
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        self.state.set(s);
        // Uniform in [-2^-20, 2^-20], and now and then the extremes.
        match s % 8 {
            0 => 2f64.powi(-20),
            1 => -(2f64.powi(-20)),
            _ => ((s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) * 2f64.powi(-20),
        }
    }
}

macro_rules! delegate {
    ($($name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {
        $(fn $name(&mut self, $($arg: $ty),*) -> $ret { Native.$name($($arg),*) })*
    };
}

impl Arith for Sloppy {
    type F = f64;
    type I = i64;
    type P = bool;

    fn approx_div(&mut self, a: f64, b: f64) -> f64 {
        a / b * (1.0 + self.error())
    }
    fn approx_sqrt(&mut self, a: f64) -> f64 {
        a.sqrt() * (1.0 + self.error())
    }
    fn cmp(&mut self, op: Cmp, a: f64, b: f64) -> bool {
        Native.cmp(op, a, b)
    }
    fn icmp(&mut self, op: Cmp, a: i64, b: i64) -> bool {
        Native.icmp(op, a, b)
    }
    delegate! {
        num(value: f64) -> f64;
        int(value: i64) -> i64;
        add(a: f64, b: f64) -> f64;
        sub(a: f64, b: f64) -> f64;
        mul(a: f64, b: f64) -> f64;
        div(a: f64, b: f64) -> f64;
        fma(a: f64, b: f64, c: f64) -> f64;
        sqrt(a: f64) -> f64;
        neg(a: f64) -> f64;
        abs(a: f64) -> f64;
        rint(a: f64) -> f64;
        is_nan(a: f64) -> bool;
        and(a: bool, b: bool) -> bool;
        or(a: bool, b: bool) -> bool;
        not(a: bool) -> bool;
        select(p: bool, a: f64, b: f64) -> f64;
        select_int(p: bool, a: i64, b: i64) -> i64;
        to_bits(a: f64) -> i64;
        bits_to_float(a: i64) -> f64;
        iadd(a: i64, b: i64) -> i64;
        isub(a: i64, b: i64) -> i64;
        imul(a: i64, b: i64) -> i64;
        umulhi(a: i64, b: i64) -> i64;
        urem(a: i64, b: i64) -> i64;
        iand(a: i64, b: i64) -> i64;
        ior(a: i64, b: i64) -> i64;
        shl(a: i64, by: i64) -> i64;
        lshr(a: i64, by: i64) -> i64;
        ashr(a: i64, by: i64) -> i64;
        clz(a: i64) -> i64;
        ult(a: i64, b: i64) -> bool;
        int_to_float(a: i64) -> f64;
        uint_to_float(a: i64) -> f64;
        two_over_pi_word(index: i64) -> i64;
    }
}

/// A float from one of several classes: any bits, ordinary numbers, subnormals, values near
/// the largest, powers of two, and small integers (exact quotients and ties).
fn random_f32(state: &mut u64) -> f32 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    let r = *state;
    let sign = ((r >> 63) as u32) << 31;
    let bits = match (r >> 8) % 7 {
        0 => r as u32,
        1 => sign | ((127 + (r % 40) as u32 - 20) << 23) | ((r >> 20) as u32 & 0x7F_FFFF),
        2 => sign | ((r >> 16) as u32 & 0x7F_FFFF),
        3 => sign | (0xFE << 23) | ((r >> 24) as u32 & 0x7F_FFFF),
        4 => sign | (((r >> 24) % 254 + 1) as u32) << 23,
        5 => ((r >> 24) % 4096) as f32 as u32 ^ sign,
        _ => {
            [0, 0x7F80_0000, 0x7FC0_0000, 1, 0x0080_0000, 0x7F7F_FFFF][(r >> 24) as usize % 6]
                | sign
        }
    };
    f32::from_bits(bits)
}

fn same(got: f32, want: f32) -> bool {
    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan())
}

#[test]
fn float_division_is_correctly_rounded_from_a_sloppy_one() {
    let mut sloppy = Sloppy {
        state: Cell::new(0x1234_5678_9ABC_DEF1),
    };
    let mut state = 42u64;
    for _ in 0..300_000 {
        let (x, y) = (random_f32(&mut state), random_f32(&mut state));
        let got = div_f32(&mut sloppy, f64::from(x), f64::from(y)) as f32;
        let want = x / y;
        assert!(
            same(got, want),
            "{x:e} / {y:e} = {got:e} [{:#x}], not {want:e} [{:#x}]",
            got.to_bits(),
            want.to_bits()
        );
    }
}

#[test]
fn float_square_root_is_correctly_rounded_from_a_sloppy_one() {
    let mut sloppy = Sloppy {
        state: Cell::new(0x0FED_CBA9_8765_4321),
    };
    let mut state = 7u64;
    for _ in 0..300_000 {
        let x = random_f32(&mut state);
        let got = sqrt_f32(&mut sloppy, f64::from(x)) as f32;
        let want = x.sqrt();
        assert!(same(got, want), "sqrt({x:e}) = {got:e}, not {want:e}");
    }
}
