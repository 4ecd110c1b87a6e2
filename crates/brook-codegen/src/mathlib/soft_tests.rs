//! [`Soft`] against the host's doubles: every operation over random and awkward operands
//! gives the same bits (any NaN for a NaN), and every routine of the library the same bits
//! as over hardware doubles.

use super::native::Native;
use super::soft::{narrow_to_f32, widen_f32, Soft};
use super::{Arith, Cmp, Fun};

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A double from one of several classes: any bits, ordinary numbers, subnormals, the
    /// values next to zeros, infinities, powers of two and integers, and specials.
    fn double(&mut self) -> f64 {
        let r = self.next();
        let sign = (r >> 63) << 63;
        let bits = match self.next() % 8 {
            0 => r,
            1 => (r & 0x000F_FFFF_FFFF_FFFF) | sign,
            2 => sign | ((1023 + (r % 64) - 32) << 52) | (r >> 40),
            3 => sign | (r & 0x7) | ((r % 3) << 52),
            4 => sign | (0x7FE << 52) | (r >> 12),
            5 => {
                [
                    0,
                    1,
                    0x7FF0 << 48,
                    0x7FF8 << 48,
                    0x7FEF_FFFF_FFFF_FFFF,
                    1 << 52,
                ][r as usize % 6]
                    | sign
            }
            6 => (((r % 2000) as f64) * 0.25 - 250.0).to_bits() ^ sign,
            _ => sign | ((1023 + (r % 8)) << 52) | ((r >> 20) << 20),
        };
        f64::from_bits(bits)
    }

    /// A double near `x`: the same binade or one next to it (cancellations, ties).
    fn near(&mut self, x: f64) -> f64 {
        let r = self.next();
        let moved = x.to_bits().wrapping_add(r % 2048).wrapping_sub(1024);
        let y = f64::from_bits(moved);
        if r & 1 == 0 {
            -y
        } else {
            y
        }
    }
}

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn soft(x: f64) -> i64 {
    x.to_bits() as i64
}

fn hard(bits: i64) -> f64 {
    f64::from_bits(bits as u64)
}

/// `op` over `Soft` against `reference` on `n` pairs.
fn check_binary(
    name: &str,
    n: usize,
    op: impl Fn(&mut Soft<'_, Native>, i64, i64) -> i64,
    reference: impl Fn(f64, f64) -> f64,
) {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ name.len() as u64);
    let mut native = Native;
    for i in 0..n {
        let x = rng.double();
        let y = if i % 3 == 0 {
            rng.near(x)
        } else {
            rng.double()
        };
        let got = hard(op(&mut Soft::new(&mut native), soft(x), soft(y)));
        let want = reference(x, y);
        assert!(
            same(got, want),
            "{name}({x:e} [{:#x}], {y:e} [{:#x}]) = {got:e} [{:#x}], not {want:e} [{:#x}]",
            x.to_bits(),
            y.to_bits(),
            got.to_bits(),
            want.to_bits()
        );
    }
}

#[test]
fn add_sub_and_mul_round_as_ieee() {
    check_binary("add", 60_000, |s, x, y| s.add(x, y), |x, y| x + y);
    check_binary("sub", 60_000, |s, x, y| s.sub(x, y), |x, y| x - y);
    check_binary("mul", 60_000, |s, x, y| s.mul(x, y), |x, y| x * y);
}

#[test]
fn division_and_square_root_are_correctly_rounded() {
    check_binary("div", 8_000, |s, x, y| s.div(x, y), |x, y| x / y);
    check_binary("sqrt", 8_000, |s, x, _| s.sqrt(x), |x, _| x.sqrt());
}

#[test]
fn fma_is_the_library_emulation() {
    let mut rng = Rng(77);
    let mut native = Native;
    for _ in 0..10_000 {
        let (x, y, z) = (rng.double(), rng.double(), rng.double());
        let got = hard(Soft::new(&mut native).fma(soft(x), soft(y), soft(z)));
        let want = super::fma::emulated(&mut Native, x, y, z);
        assert!(
            same(got, want),
            "fma({x:e}, {y:e}, {z:e}) = {got:e}, not {want:e}"
        );
    }
}

#[test]
fn rint_comparisons_and_conversions() {
    let mut rng = Rng(5);
    let mut native = Native;
    let mut s = Soft::new(&mut native);
    for i in 0..50_000 {
        let x = rng.double();
        let y = if i % 2 == 0 {
            rng.near(x)
        } else {
            rng.double()
        };
        let got = hard(s.rint(soft(x)));
        assert!(same(got, x.round_ties_even()), "rint({x:e}) = {got:e}");
        for (op, want) in [
            (Cmp::Lt, x < y),
            (Cmp::Le, x <= y),
            (Cmp::Gt, x > y),
            (Cmp::Ge, x >= y),
            (Cmp::Eq, x == y),
        ] {
            assert_eq!(s.cmp(op, soft(x), soft(y)), want, "{op:?} {x:e} {y:e}");
        }
        assert_eq!(s.is_nan(soft(x)), x.is_nan());
        let n = rng.next() as i64 >> (rng.next() % 64);
        assert!(same(hard(s.int_to_float(n)), n as f64), "{n} to double");
        assert!(
            same(hard(s.uint_to_float(n)), n as u64 as f64),
            "{n} as unsigned"
        );
    }
}

#[test]
fn floats_widen_and_narrow_as_the_hardware_does() {
    let mut rng = Rng(11);
    let mut native = Native;
    let mut s = Soft::new(&mut native);
    for _ in 0..50_000 {
        let bits = match rng.next() % 4 {
            0 => rng.next() as u32,
            1 => (rng.next() as u32) & 0x807F_FFFF,
            _ => rng.double().to_bits() as u32,
        };
        let f = f32::from_bits(bits);
        let wide = hard(widen_f32(&mut s, i64::from(bits)));
        assert!(
            same(wide, f64::from(f)),
            "widen {f:e} [{bits:#x}] = {wide:e}"
        );
        let x = rng.double();
        let narrow = f32::from_bits(narrow_to_f32(&mut s, soft(x)) as u32);
        let want = x as f32;
        assert!(
            narrow.to_bits() == want.to_bits() || (narrow.is_nan() && want.is_nan()),
            "narrow {x:e} [{:#x}] = {narrow:e}, not {want:e}",
            x.to_bits()
        );
    }
}

/// Every library routine built over `Soft` gives the bits it gives over hardware doubles.
#[test]
fn the_library_gives_the_same_bits_over_soft_doubles() {
    let mut rng = Rng(3);
    for fun in Fun::ALL {
        for _ in 0..80 {
            let args: Vec<f64> = (0..fun.arity())
                .map(|_| match rng.next() % 3 {
                    0 => rng.double(),
                    _ => (rng.next() % 20_000) as f64 / 1000.0 - 10.0,
                })
                .collect();
            let want = Native::eval(fun, &args);
            let mut native = Native;
            let bits: Vec<i64> = args.iter().map(|&a| soft(a)).collect();
            let got = hard(fun.build(&mut Soft::new(&mut native), &bits));
            assert!(
                same(got, want),
                "{}({args:?}) = {got:e}, not {want:e}",
                fun.name()
            );
        }
    }
}
