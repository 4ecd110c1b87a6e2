//! Random input values, written as case text: special values (zeros of both signs,
//! infinities, NaN, subnormals, the extremes of each integer type) mixed with small and
//! full-range numbers.

use super::rng::Rng;
use brook_ir::ScalarKind;

/// One component of `kind`, as text the case format reads back to the same bits.
pub fn component(rng: &mut Rng, kind: ScalarKind) -> String {
    match kind {
        ScalarKind::F32 => format!("{:?}", float(rng) as f32),
        ScalarKind::F64 => format!("{:?}", float(rng)),
        ScalarKind::Bool => rng.below(2).to_string(),
        _ => integer(rng, kind).to_string(),
    }
}

/// `count` components of `kind`.
pub fn components(rng: &mut Rng, kind: ScalarKind, count: usize) -> Vec<String> {
    (0..count).map(|_| component(rng, kind)).collect()
}

fn float(rng: &mut Rng) -> f64 {
    const SPECIAL: [f64; 16] = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        2.0,
        3.0,
        -2.5,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1e-45,
        1.2e-38,
        3.4e38,
        1e300,
        4e-320,
    ];
    match rng.below(10) {
        0 | 1 => *rng.pick(&SPECIAL),
        2..=4 => rng.between(-20, 20) as f64,
        5 => rng.between(-8, 8) as f64 / 4.0,
        6 => f64::from_bits(rng.next_u64()),
        7 => f64::from(f32::from_bits(rng.next_u64() as u32)),
        _ => (rng.next_u64() % 20_001) as f64 / 100.0 - 100.0,
    }
}

fn integer(rng: &mut Rng, kind: ScalarKind) -> i128 {
    let bits = kind.size() * 8;
    let signed = matches!(
        kind,
        ScalarKind::I8 | ScalarKind::I16 | ScalarKind::I32 | ScalarKind::I64
    );
    let (min, max): (i128, i128) = if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    let value = match rng.below(8) {
        0 => *rng.pick(&[min, max, 0, 1, min + 1, max - 1]),
        1 | 2 => rng.between(-40, 40) as i128,
        3..=5 => rng.between(-6, 9) as i128,
        _ => rng.next_u64() as i128,
    };
    // Into the type's range, wrapping like the type does.
    let span = max - min + 1;
    (value - min).rem_euclid(span) + min
}
