//! The math library written as SPIR-V (`brook_codegen::spirv::libm`) on every Vulkan device
//! with `double`s: each function, over special values and pseudo-random arguments of every
//! magnitude, gives the same bits as the host's evaluation of the same algorithm
//! (`mathlib::native::Native`), as the PTX library does on CUDA devices.

use brook_codegen::mathlib::{native::Native, Fun};
use brook_codegen::spirv::libm::eval_module;
use brook_runtime::vulkan;

/// Arguments per function and argument slot.
const SAMPLES: usize = 2048;

fn arguments(fun: Fun, seed: u64) -> Vec<f64> {
    let specials = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        2.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::MIN_POSITIVE,
        f64::from_bits(1),
        f64::MAX,
        std::f64::consts::PI,
        1e22,
        -700.0,
        710.0,
    ];
    let mut state = seed ^ (fun as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut next = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        state
    };
    (0..SAMPLES * fun.arity())
        .map(|i| {
            if i < specials.len() {
                return specials[i];
            }
            let r = next();
            // Half the samples near the interesting range, half over every exponent.
            if i % 2 == 0 {
                (r >> 11) as f64 / (1u64 << 53) as f64 * 20.0 - 10.0
            } else {
                f64::from_bits(r)
            }
        })
        .collect()
}

#[test]
fn every_function_gives_the_host_bits() {
    let Ok(gpus) = vulkan::gpus() else {
        eprintln!("no Vulkan devices: the SPIR-V math library was not run");
        return;
    };
    let mut ran = 0;
    for (k, gpu) in gpus.iter().enumerate() {
        let (Ok(context), true) = (&gpu.context, gpu.info.float64) else {
            eprintln!("vulkan:{k} ({}): no doubles, skipped", gpu.info.name);
            continue;
        };
        let fused = gpu.info.fma_fused == Some(true);
        for fun in Fun::ALL {
            let args = arguments(fun, 52);
            let mut src = context.buffer(8 * args.len() as u64).unwrap();
            for (chunk, a) in src.bytes_mut().chunks_exact_mut(8).zip(&args) {
                chunk.copy_from_slice(&a.to_le_bytes());
            }
            let dst = context.buffer(8 * SAMPLES as u64).unwrap();
            let mut push = src.address().to_le_bytes().to_vec();
            push.extend_from_slice(&dst.address().to_le_bytes());
            context
                .run(&eval_module(fun, fused), &push, [SAMPLES as u32, 1, 1])
                .unwrap();
            let mut wrong = Vec::new();
            for (i, chunk) in dst.bytes().chunks_exact(8).enumerate() {
                let got = f64::from_le_bytes(chunk.try_into().unwrap());
                let tuple = &args[i * fun.arity()..(i + 1) * fun.arity()];
                let want = Native::eval(fun, tuple);
                if got.to_bits() != want.to_bits() && !(got.is_nan() && want.is_nan()) {
                    wrong.push(format!(
                        "{}({tuple:?}) = {got:e}, host {want:e}",
                        fun.name()
                    ));
                }
            }
            assert!(
                wrong.is_empty(),
                "vulkan:{k}: {} of {SAMPLES} differ, first: {}",
                wrong.len(),
                wrong[..wrong.len().min(5)].join("; ")
            );
            ran += 1;
        }
        eprintln!(
            "vulkan:{k} ({}): {} functions x {SAMPLES} arguments, the host's bits (fma {})",
            gpu.info.name,
            Fun::ALL.len(),
            if fused { "the device's" } else { "emulated" }
        );
    }
    eprintln!("{ran} function runs");
}
