//! The library against the system libm (glibc): each function over random and special
//! inputs, `f64` and `f32`, with its error bound in ulps. `BROOK_MATHLIB_SAMPLES` sets the
//! number of random inputs per function (default 20000).

use super::native::Native;
use super::{ulps, ulps_f32, Fun};

/// The largest distance from glibc, in ulps, each function may have.
fn bound(fun: Fun, double: bool) -> u64 {
    match (fun, double) {
        (Fun::Tan, true) => 2,
        (_, true) => 1,
        (_, false) => 1,
    }
}

fn reference(fun: Fun, args: &[f64]) -> f64 {
    let x = args[0];
    match fun {
        Fun::Sin => x.sin(),
        Fun::Cos => x.cos(),
        Fun::Tan => x.tan(),
        Fun::Asin => x.asin(),
        Fun::Acos => x.acos(),
        Fun::Atan => x.atan(),
        Fun::Atan2 => x.atan2(args[1]),
        Fun::Exp => x.exp(),
        Fun::Exp2 => x.exp2(),
        Fun::Log => x.ln(),
        Fun::Log2 => x.log2(),
        Fun::Pow => x.powf(args[1]),
    }
}

fn reference_f32(fun: Fun, args: &[f32]) -> f32 {
    let x = args[0];
    match fun {
        Fun::Sin => x.sin(),
        Fun::Cos => x.cos(),
        Fun::Tan => x.tan(),
        Fun::Asin => x.asin(),
        Fun::Acos => x.acos(),
        Fun::Atan => x.atan(),
        Fun::Atan2 => x.atan2(args[1]),
        Fun::Exp => x.exp(),
        Fun::Exp2 => x.exp2(),
        Fun::Log => x.ln(),
        Fun::Log2 => x.log2(),
        Fun::Pow => x.powf(args[1]),
    }
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
    /// Any finite double (random bits), with the sign cleared if `positive`.
    fn bits(&mut self, positive: bool) -> f64 {
        loop {
            let mut v = f64::from_bits(self.next());
            if positive {
                v = v.abs();
            }
            if v.is_finite() {
                return v;
            }
        }
    }
}

const SPECIALS: [f64; 20] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    2.0,
    3.0,
    -3.0,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    f64::MIN_POSITIVE,
    5e-324,
    f64::MAX,
    -f64::MAX,
    std::f64::consts::PI,
    std::f64::consts::FRAC_PI_2,
    1e-300,
    0.999_999_999_999,
];

/// Random arguments for `fun`.
fn argument(fun: Fun, rng: &mut Rng) -> Vec<f64> {
    let pick = rng.next() % 4;
    match fun {
        Fun::Sin | Fun::Cos | Fun::Tan => match pick {
            0 => vec![rng.bits(false)],
            1 => vec![rng.uniform(-10.0, 10.0)],
            2 => vec![rng.uniform(-1e6, 1e6)],
            _ => {
                // Near a multiple of pi/2.
                let k = (rng.next() % 100_000) as f64;
                vec![k * std::f64::consts::FRAC_PI_2 + rng.uniform(-1e-9, 1e-9)]
            }
        },
        Fun::Asin | Fun::Acos => vec![rng.uniform(-1.05, 1.05)],
        Fun::Atan => match pick {
            0 | 1 => vec![rng.bits(false)],
            _ => vec![rng.uniform(-4.0, 4.0)],
        },
        Fun::Atan2 => match pick {
            0 | 1 => vec![rng.bits(false), rng.bits(false)],
            _ => vec![rng.uniform(-4.0, 4.0), rng.uniform(-4.0, 4.0)],
        },
        Fun::Exp => vec![rng.uniform(-750.0, 712.0)],
        Fun::Exp2 => vec![rng.uniform(-1080.0, 1030.0)],
        Fun::Log | Fun::Log2 => match pick {
            0 | 1 => vec![rng.bits(true)],
            _ => vec![rng.uniform(0.5, 2.0)],
        },
        Fun::Pow => match pick {
            0 => vec![rng.uniform(0.0, 4.0), rng.uniform(-40.0, 40.0)],
            1 => vec![rng.bits(true), rng.uniform(-2.0, 2.0)],
            2 => {
                // Results near the ends of the range, where y log x is large.
                let x = rng.uniform(0.5, 2.0);
                let y = rng.uniform(-700.0, 700.0) / x.ln();
                vec![x, y]
            }
            _ => vec![-rng.uniform(0.0, 4.0), (rng.next() % 61) as f64 - 30.0],
        },
    }
}

fn samples() -> usize {
    std::env::var("BROOK_MATHLIB_SAMPLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000)
}

/// Inputs for `fun`: the specials (all pairs for two arguments) and random ones.
fn inputs(fun: Fun) -> Vec<Vec<f64>> {
    let mut all = Vec::new();
    for &x in &SPECIALS {
        if fun.arity() == 2 {
            all.extend(SPECIALS.iter().map(|&y| vec![x, y]));
        } else {
            all.push(vec![x]);
        }
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ fun as u64);
    all.extend((0..samples()).map(|_| argument(fun, &mut rng)));
    all
}

/// The largest distance from glibc over the inputs, and the worst input.
fn worst(fun: Fun, double: bool) -> (u64, Vec<f64>, f64, f64) {
    let mut worst = (0, Vec::new(), 0.0, 0.0);
    for args in inputs(fun) {
        let (found, expected, d) = if double {
            let f = Native::eval(fun, &args);
            let e = reference(fun, &args);
            (f, e, ulps(f, e))
        } else {
            let narrow: Vec<f32> = args.iter().map(|&v| v as f32).collect();
            let f = Native::eval_f32(fun, &narrow);
            let e = reference_f32(fun, &narrow);
            (f64::from(f), f64::from(e), ulps_f32(f, e))
        };
        if d > worst.0 || worst.1.is_empty() {
            worst = (d, args, found, expected);
        }
    }
    worst
}

#[test]
fn every_function_is_within_its_bound_of_glibc() {
    let mut failures = Vec::new();
    for fun in Fun::ALL {
        for double in [true, false] {
            let (d, args, found, expected) = worst(fun, double);
            let ty = if double { "f64" } else { "f32" };
            println!("{:>6} {ty}: max {d} ulp (at {args:?})", fun.name());
            if d > bound(fun, double) {
                failures.push(format!(
                    "{} {ty}{args:?}: {found:e} (glibc {expected:e}), {d} ulp > {}",
                    fun.name(),
                    bound(fun, double)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn exact_cases_are_exact() {
    let cases: [(Fun, &[f64], f64); 10] = [
        (Fun::Exp, &[0.0], 1.0),
        (Fun::Exp2, &[10.0], 1024.0),
        (Fun::Exp2, &[-1074.0], 5e-324),
        (Fun::Log, &[1.0], 0.0),
        (Fun::Log2, &[8.0], 3.0),
        (Fun::Pow, &[2.0, 10.0], 1024.0),
        (Fun::Pow, &[-2.0, 3.0], -8.0),
        (Fun::Pow, &[0.25, 1.5], 0.125),
        (Fun::Sin, &[-0.0], -0.0),
        (Fun::Atan2, &[0.0, -0.0], std::f64::consts::PI),
    ];
    for (fun, args, expected) in cases {
        let found = Native::eval(fun, args);
        assert_eq!(
            found.to_bits(),
            expected.to_bits(),
            "{}{args:?} = {found:e}, expected {expected:e}",
            fun.name()
        );
    }
}

/// The library has a routine for each intrinsic the table says it computes, and for no other.
#[test]
fn every_library_intrinsic_has_its_routine() {
    use brook_ir::intrinsic::{Exactness, INTRINSICS};
    for row in INTRINSICS {
        let routine = Fun::of(row.fun);
        assert_eq!(
            routine.is_some(),
            row.exactness == Exactness::Library,
            "{}",
            row.name
        );
        if let Some(f) = routine {
            assert_eq!((f.name(), f.arity()), (row.name, row.signature.arity()));
        }
    }
}
