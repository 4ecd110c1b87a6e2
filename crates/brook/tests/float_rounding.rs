//! `float` division, square root, remainder and `fma` correctly rounded on every device: many random pairs of
//! every class (any bits, ordinary numbers, subnormals, values near the largest, powers of
//! two, small integers whose quotients are exact or ties), each result's bits against the
//! host's IEEE 754 `float` operations, not only against the interpreter. (A Vulkan device
//! divides through the device's approximate double division, corrected:
//! `brook_codegen::mathlib::float32`; each Vulkan device is also tried as a device without
//! doubles would run it, from integers: `brook_codegen::mathlib::float32_int`.)

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

/// Every device, then every Vulkan device again as one without `shaderFloat64` (Apple GPUs
/// through MoltenVK, Intel's Xe graphics) runs kernels.
fn devices_with_and_without_doubles() -> Vec<Device> {
    let mut devices = Device::all();
    let vulkan = Device::of_type("vulkan").expect("a device type").len();
    for ordinal in 0..vulkan {
        let without = brook_runtime::vulkan::device_with(ordinal, |o| o.float64 = false)
            .expect("a Vulkan device listed opens");
        devices.push(Device::from_raw(without));
    }
    devices
}

#[test]
fn float_division_and_square_root_are_correctly_rounded_on_every_device() {
    let source = "kernel void k(float a<>, float b<>, out float q<>, out float s<>, \
                  out float m<>, out float f<>) { q = a / b; s = sqrt(a); m = fmod(a, b); f = fma(a, b, a); }";
    let program = Program::from_source("rounding.br", source).expect("compiles");
    let (a, b) = (random_floats(1), random_floats(2));
    for device in devices_with_and_without_doubles() {
        let sa = Stream::from_slice(&device, &[N], &a).expect("a");
        let sb = Stream::from_slice(&device, &[N], &b).expect("b");
        let q = Stream::<f32>::new(&device, &[N]).expect("q");
        let m = Stream::<f32>::new(&device, &[N]).expect("m");
        let f = Stream::<f32>::new(&device, &[N]).expect("f");
        let s = Stream::<f32>::new(&device, &[N]).expect("s");
        let kernel = program.kernel("k").expect("k");
        kernel
            .launch(args![&sa, &sb, &q, &s, &m, &f])
            .unwrap_or_else(|e| panic!("{}: {e}", device.info()));
        let (q, s) = (q.to_vec().expect("q"), s.to_vec().expect("s"));
        let (m, f) = (m.to_vec().expect("m"), f.to_vec().expect("f"));
        let flushes = device.info().flushes_float_subnormals;
        let mut wrong = Vec::new();
        for i in 0..N {
            let results = [
                ("/", q[i], a[i] / b[i]),
                ("sqrt", s[i], a[i].sqrt()),
                ("fmod", m[i], a[i] % b[i]),
                ("fma", f[i], a[i].mul_add(b[i], a[i])),
            ];
            for (what, got, want) in results {
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

/// Without `shaderFloat64`, what the Vulkan dialect computes only through doubles is refused
/// before it runs, naming the operation, the device and the place; division, square roots and
/// what is built on them run (above).
#[test]
fn operations_through_doubles_are_refused_by_name_without_them() {
    let source = "kernel void wave(float a<>, out float r<>) { r = sin(a); }\n\
                  kernel void rest(float4 a<>, float4 b<>, out float4 r<>) { r = pow(a, b); }\n\
                  kernel void wide(double a<>, out double r<>) { r = a * 2.0; }\n\
                  kernel void unit(float4 a<>, out float4 r<>) { r = normalize(a) / length(a); }\n";
    let program = Program::from_source("doubles.br", source).expect("compiles");
    let vulkan = Device::of_type("vulkan").expect("a device type").len();
    if vulkan == 0 {
        eprintln!("no Vulkan device: the refusals without shaderFloat64 were not tried");
    }
    for ordinal in 0..vulkan {
        let raw = brook_runtime::vulkan::device_with(ordinal, |o| o.float64 = false)
            .expect("a Vulkan device listed opens");
        let device = Device::from_raw(raw);
        let name = device.info().to_string();
        for (kernel, operation, line) in [
            ("wave", "`sin` on `float`", "r = sin(a);"),
            ("rest", "`pow` on `float`", "r = pow(a, b);"),
            ("wide", "computes with `double`", "r = a * 2.0;"),
        ] {
            let four = kernel == "rest";
            let (a, b, r) = if four {
                let v = [[1.0f32; 4]; 2];
                (
                    Stream::from_slice(&device, &[2], &v)
                        .expect("a")
                        .raw()
                        .clone(),
                    Stream::from_slice(&device, &[2], &v)
                        .expect("b")
                        .raw()
                        .clone(),
                    Stream::<[f32; 4]>::new(&device, &[2])
                        .expect("r")
                        .raw()
                        .clone(),
                )
            } else if kernel == "wide" {
                (
                    Stream::from_slice(&device, &[2], &[1.0f64; 2])
                        .expect("a")
                        .raw()
                        .clone(),
                    Stream::from_slice(&device, &[2], &[1.0f64; 2])
                        .expect("b")
                        .raw()
                        .clone(),
                    Stream::<f64>::new(&device, &[2]).expect("r").raw().clone(),
                )
            } else {
                (
                    Stream::from_slice(&device, &[2], &[1.0f32; 2])
                        .expect("a")
                        .raw()
                        .clone(),
                    Stream::from_slice(&device, &[2], &[1.0f32; 2])
                        .expect("b")
                        .raw()
                        .clone(),
                    Stream::<f32>::new(&device, &[2]).expect("r").raw().clone(),
                )
            };
            let args: Vec<brook::Arg<'_>> = if four {
                vec![
                    brook::Arg::Stream(&a),
                    brook::Arg::Stream(&b),
                    brook::Arg::Stream(&r),
                ]
            } else {
                vec![brook::Arg::Stream(&a), brook::Arg::Stream(&r)]
            };
            // Refused when the device's queue reaches the launch: the output holds the error.
            let text = match program.kernel(kernel).expect("kernel").launch(&args) {
                Err(error) => error.to_string(),
                Ok(_) => {
                    assert!(!r.finish(), "{kernel}: refused without doubles on {name}");
                    r.error_log()
                }
            };
            for part in [operation, "shaderFloat64", &name, line] {
                assert!(text.contains(part), "{kernel}: `{part}` not in: {text}");
            }
        }
        let v = [
            [3.0f32, 4.0, 0.0, 0.0],
            [1.0, 2.0, 3.0, 4.0],
            [1e-3, -7.5, 2e10, 0.25],
        ];
        let unit = program.kernel("unit").expect("unit");
        let run = |device: &Device| {
            let a = Stream::from_slice(device, &[3], &v).expect("a");
            let r = Stream::<[f32; 4]>::new(device, &[3]).expect("r");
            unit.launch(args![&a, &r])
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            r.to_vec().expect("r")
        };
        let (got, want) = (run(&device), run(&Device::interp()));
        let bits =
            |v: &[[f32; 4]]| -> Vec<u32> { v.iter().flatten().map(|x| x.to_bits()).collect() };
        assert_eq!(bits(&got), bits(&want), "{name}: {got:?} {want:?}");
    }
}

/// `uint` and `int` to `float` correctly rounded on every device (the CPU's gangs convert
/// `uint`s four at a time in two exact halves): every magnitude, the values just above and
/// below powers of two where rounding ties, and the largest; against the host's `as f32`.
#[test]
fn integers_to_float_are_correctly_rounded_on_every_device() {
    let source = "kernel void k(uint u<>, int i<>, out float fu<>, out float fi<>) \
                  { fu = (float)u; fi = (float)i; }";
    let program = Program::from_source("convert.br", source).expect("compiles");
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let u: Vec<u32> = (0..N)
        .map(|k| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let shift = (state >> 32) as u32 % 32;
            let near = 1u32 << shift;
            match k % 4 {
                0 => state as u32,
                1 => (state as u32) >> shift,
                2 => near.wrapping_add((state >> 40) as u32 % 5).wrapping_sub(2),
                _ => [u32::MAX, u32::MAX - 127, 0x8000_0080, 0x0100_0001, 0][k / 4 % 5],
            }
        })
        .collect();
    let i: Vec<i32> = u.iter().map(|&x| x as i32).collect();
    for device in Device::all() {
        let su = Stream::from_slice(&device, &[N], &u).expect("u");
        let si = Stream::from_slice(&device, &[N], &i).expect("i");
        let fu = Stream::<f32>::new(&device, &[N]).expect("fu");
        let fi = Stream::<f32>::new(&device, &[N]).expect("fi");
        program
            .kernel("k")
            .expect("k")
            .launch(args![&su, &si, &fu, &fi])
            .unwrap_or_else(|e| panic!("{}: {e}", device.info()));
        let (fu, fi) = (fu.to_vec().expect("fu"), fi.to_vec().expect("fi"));
        let wrong: Vec<String> = (0..N)
            .filter(|&k| fu[k] != u[k] as f32 || fi[k] != i[k] as f32)
            .take(10)
            .map(|k| format!("{} -> {:e}, {} -> {:e}", u[k], fu[k], i[k], fi[k]))
            .collect();
        assert!(wrong.is_empty(), "{}:\n{}", device.info(), wrong.join("\n"));
    }
}
