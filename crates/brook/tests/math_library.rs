//! The transcendental intrinsics on every device, for `float` and `double`, over special and
//! random arguments. The CUDA device runs the library of `brook_codegen::mathlib` and must give
//! exactly its host evaluation's bits; the CPU device and the interpreter call the system libm
//! and must be within the library's documented bound of it (1 ulp; `tan` on doubles 2).

use brook::{args, Device, Program, Stream};
use brook_codegen::mathlib::{native::Native, ulps, ulps_f32, Fun};

fn source() -> String {
    let mut s = String::new();
    for fun in Fun::ALL {
        for (suffix, ty) in [("f", "float"), ("d", "double")] {
            let call = if fun.arity() == 2 {
                format!("{}(x, y)", fun.name())
            } else {
                format!("{}(x)", fun.name())
            };
            s.push_str(&format!(
                "kernel void {}_{suffix}({ty} x<>, {ty} y<>, out {ty} r<>) {{ r = {call}; }}\n",
                fun.name()
            ));
        }
    }
    s
}

/// Arguments: specials crossed with each other, then values spread over the useful ranges.
fn arguments(fun: Fun) -> (Vec<f64>, Vec<f64>) {
    let specials = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -2.5,
        3.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1e-310,
        1e300,
    ];
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for &x in &specials {
        for &y in &specials {
            xs.push(x);
            ys.push(y);
        }
    }
    let mut state = 0x2545_f491_4f6c_dd1du64 ^ fun as u64;
    let mut unit = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let (lo, hi) = match fun {
        Fun::Asin | Fun::Acos => (-1.1, 1.1),
        Fun::Exp => (-750.0, 720.0),
        Fun::Exp2 => (-1080.0, 1030.0),
        Fun::Log | Fun::Log2 => (0.0, 1e6),
        Fun::Pow => (0.0, 8.0),
        _ => (-1e4, 1e4),
    };
    for i in 0..4000 {
        let x = lo + (hi - lo) * unit();
        let y = match fun {
            Fun::Pow if i % 2 == 0 => (unit() * 40.0 - 20.0).round(),
            Fun::Pow => unit() * 60.0 - 30.0,
            _ => unit() * 8.0 - 4.0,
        };
        // Negative bases for pow with integral exponents.
        let x = if fun == Fun::Pow && i % 4 == 0 { -x } else { x };
        xs.push(x);
        ys.push(y);
    }
    (xs, ys)
}

/// 0 for the same bits (any NaN equals any NaN: payloads differ between machines), else the
/// distance in ulps, at least 1 (so `-0` and `+0` differ).
fn distance(same_bits: bool, both_nan: bool, ulps: u64) -> u64 {
    if same_bits || both_nan {
        0
    } else {
        ulps.max(1)
    }
}

fn bound(fun: Fun, double: bool) -> u64 {
    if fun == Fun::Tan && double {
        2
    } else {
        1
    }
}

/// Runs `fun` on `device`; the first argument that is out of bounds, if any.
fn check(program: &Program, device: &Device, fun: Fun, double: bool) -> Option<String> {
    let (xs, ys) = arguments(fun);
    let n = xs.len();
    let exact = device.type_name() == "cuda";
    let limit = if exact { 0 } else { bound(fun, double) };
    let suffix = if double { "d" } else { "f" };
    let kernel = program
        .kernel(&format!("{}_{suffix}", fun.name()))
        .expect("kernel");
    let found: Vec<(f64, u64, Vec<f64>)> = if double {
        let x = Stream::from_slice(device, &[n], &xs).expect("x");
        let y = Stream::from_slice(device, &[n], &ys).expect("y");
        let r = Stream::<f64>::new(device, &[n]).expect("r");
        kernel.launch(args![&x, &y, &r]).expect("launch");
        let r = r.to_vec().expect("read back");
        (0..n)
            .map(|i| {
                let args = [xs[i], ys[i]];
                let want = Native::eval(fun, &args[..fun.arity()]);
                let d = distance(
                    r[i].to_bits() == want.to_bits(),
                    r[i].is_nan() && want.is_nan(),
                    ulps(r[i], want),
                );
                (r[i], d, args.to_vec())
            })
            .collect()
    } else {
        let xf: Vec<f32> = xs.iter().map(|&v| v as f32).collect();
        let yf: Vec<f32> = ys.iter().map(|&v| v as f32).collect();
        let x = Stream::from_slice(device, &[n], &xf).expect("x");
        let y = Stream::from_slice(device, &[n], &yf).expect("y");
        let r = Stream::<f32>::new(device, &[n]).expect("r");
        kernel.launch(args![&x, &y, &r]).expect("launch");
        let r = r.to_vec().expect("read back");
        (0..n)
            .map(|i| {
                let args = [xf[i], yf[i]];
                let want = Native::eval_f32(fun, &args[..fun.arity()]);
                let d = distance(
                    r[i].to_bits() == want.to_bits(),
                    r[i].is_nan() && want.is_nan(),
                    ulps_f32(r[i], want),
                );
                let args = args.iter().map(|&v| f64::from(v)).collect();
                (f64::from(r[i]), d, args)
            })
            .collect()
    };
    found
        .into_iter()
        .find(|(_, d, _)| *d > limit)
        .map(|(value, d, args)| {
            format!(
                "{} {}{args:?} on {}: {value:e} is {d} ulp from the library's value (allowed {limit})",
                fun.name(),
                if double { "double" } else { "float" },
                device.info()
            )
        })
}

#[test]
fn transcendental_intrinsics_match_the_library_on_every_device() {
    let program = Program::from_source("math.br", &source()).expect("compiles");
    let devices = Device::all();
    if !devices.iter().any(|d| d.type_name() == "cuda") {
        println!("math_library: no CUDA device: CUDA runs skipped");
    }
    let mut failures = Vec::new();
    for device in &devices {
        for fun in Fun::ALL {
            for double in [false, true] {
                failures.extend(check(&program, device, fun, double));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
