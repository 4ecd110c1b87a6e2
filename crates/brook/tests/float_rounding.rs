//! `float` division and square root correctly rounded on every device: many random pairs of
//! every class (any bits, ordinary numbers, subnormals, values near the largest, powers of
//! two, small integers whose quotients are exact or ties), each result's bits against the
//! host's IEEE 754 `float` operations, not only against the interpreter. (A Vulkan device
//! divides through the device's approximate double division, corrected:
//! `brook_codegen::mathlib::float32`.)

use brook::{args, Device, Program, Stream};

const N: usize = 1 << 18;

fn random_floats(seed: u64) -> Vec<f32> {
    let mut state = seed;
    (0..N)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let r = state;
            let sign = ((r >> 63) as u32) << 31;
            let bits = match (r >> 8) % 7 {
                0 => r as u32,
                1 => sign | ((107 + (r % 40) as u32) << 23) | ((r >> 20) as u32 & 0x7F_FFFF),
                2 => sign | ((r >> 16) as u32 & 0x7F_FFFF),
                3 => sign | (0xFE << 23) | ((r >> 24) as u32 & 0x7F_FFFF),
                4 => sign | ((((r >> 24) % 254 + 1) as u32) << 23),
                5 => (((r >> 24) % 4096) as f32).to_bits() ^ sign,
                _ => [0, 0x7F80_0000, 1, 0x0080_0000, 0x7F7F_FFFF][(r >> 24) as usize % 5] | sign,
            };
            f32::from_bits(bits)
        })
        .collect()
}

#[test]
fn float_division_and_square_root_are_correctly_rounded_on_every_device() {
    let source = "kernel void k(float a<>, float b<>, out float q<>, out float s<>) \
                  { q = a / b; s = sqrt(a); }";
    let program = Program::from_source("rounding.br", source).expect("compiles");
    let (a, b) = (random_floats(1), random_floats(2));
    for device in Device::all() {
        let sa = Stream::from_slice(&device, &[N], &a).expect("a");
        let sb = Stream::from_slice(&device, &[N], &b).expect("b");
        let q = Stream::<f32>::new(&device, &[N]).expect("q");
        let s = Stream::<f32>::new(&device, &[N]).expect("s");
        let kernel = program.kernel("k").expect("k");
        kernel
            .launch(args![&sa, &sb, &q, &s])
            .unwrap_or_else(|e| panic!("{}: {e}", device.info()));
        let (q, s) = (q.to_vec().expect("q"), s.to_vec().expect("s"));
        let flushes = device.info().flushes_float_subnormals;
        let mut wrong = Vec::new();
        for i in 0..N {
            for (what, got, want) in [("/", q[i], a[i] / b[i]), ("sqrt", s[i], a[i].sqrt())] {
                let same = got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan());
                // A device that flushes float subnormals: operands and results that are
                // subnormal are zeros (docs/SEMANTICS.md), checked by the conformance suite.
                let subnormal = |v: f32| v != 0.0 && v.abs() < f32::MIN_POSITIVE;
                let flushed = flushes && (subnormal(a[i]) || subnormal(b[i]) || subnormal(want));
                if !same && !flushed && wrong.len() < 10 {
                    wrong.push(format!(
                        "{:e} {what} {:e} = {got:e}, not {want:e}",
                        a[i], b[i]
                    ));
                }
            }
        }
        assert!(wrong.is_empty(), "{}:\n{}", device.info(), wrong.join("\n"));
    }
}
