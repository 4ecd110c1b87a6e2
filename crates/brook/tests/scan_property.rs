//! Scans on every device:
//! - property: a non-commutative scan (2x2 integer matrix products, wrapping) equals the
//!   sequential prefix products, inclusive and exclusive, along the last axis of rank 1–4
//!   streams and over whole streams, views included;
//! - a float scan whose values depend on the grouping equals the canonical order computed here
//!   independently (`brook_ir::scan_order::scan_tiled`, a tiled down-sweep executor that no
//!   device uses), bit for bit, on streams long enough that the devices split rows into pieces.

use brook::{Device, Program, ScanRequest, Stream};
use brook_ir::scan_order::scan_tiled;
use proptest::prelude::*;

/// The canonical exclusive prefixes of float addition from `init`, by the tiled executor.
fn canonical_exclusive(items: &[f32], init: Option<f32>) -> Vec<Option<f32>> {
    scan_tiled(items, init, 5, &mut |a: &f32, b: &f32| a + b)
}

const SOURCE: &str = "
reduce void product(int4 m<>, reduce int4 acc<>)
{
    int4 l = acc;
    acc = int4(l.x * m.x + l.y * m.z, l.x * m.y + l.y * m.w,
               l.z * m.x + l.w * m.z, l.z * m.y + l.w * m.w);
}
reduce void add(float a<>, reduce float r<>) { r += a; }
";

type M = [i32; 4];

fn mul(l: M, m: M) -> M {
    let f = |a: i32, b: i32, c: i32, d: i32| a.wrapping_mul(b).wrapping_add(c.wrapping_mul(d));
    [
        f(l[0], m[0], l[1], m[2]),
        f(l[0], m[1], l[1], m[3]),
        f(l[2], m[0], l[3], m[2]),
        f(l[2], m[1], l[3], m[3]),
    ]
}

/// Sequential prefix products of each row of `row` elements (`init`: exclusive from it).
fn prefixes(input: &[M], row: usize, init: Option<M>) -> Vec<M> {
    let mut out = Vec::with_capacity(input.len());
    for chunk in input.chunks(row) {
        let mut acc: Option<M> = init;
        for &m in chunk {
            let next = acc.map_or(m, |a| mul(a, m));
            out.push(match init {
                Some(_) => acc.expect("exclusive prefixes start from init"),
                None => next,
            });
            acc = Some(next);
        }
    }
    out
}

fn random(seed: u64, len: usize) -> Vec<M> {
    let mut state = seed | 1;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % 7) as i32 - 3
    };
    (0..len).map(|_| [next(), next(), next(), next()]).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn scans_equal_the_sequential_prefixes(
        dims in prop::collection::vec(1usize..=7, 1..=4),
        whole in any::<bool>(),
        exclusive in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let program = Program::from_source("product.br", SOURCE).expect("compiles");
        let product = program.kernel("product").expect("kernel");
        let len: usize = dims.iter().product();
        let input = random(seed, len);
        let init: M = [1, 2, 0, 1];
        let row = if whole { len } else { dims[dims.len() - 1] };
        let want = prefixes(&input, row, exclusive.then_some(init));
        let request = match exclusive {
            true => ScanRequest::exclusive(brook_runtime::Constant::of(init)),
            false => ScanRequest::inclusive(),
        };
        let request = if whole { request.whole_stream() } else { request };
        for device in Device::of_type("all").expect("devices") {
            let s = Stream::from_slice(&device, &dims, &input).expect("input");
            let r = Stream::<M>::new(&device, &dims).expect("output");
            product.scan_with(request.clone(), &s, &r).expect("scan");
            prop_assert_eq!(r.to_vec().expect("result"), want.clone(), "on {}", device.info());
        }
    }
}

/// Values spread over many magnitudes, so that float addition's grouping shows in the bits.
fn spread(len: usize) -> Vec<f32> {
    (0..len)
        .map(|i| {
            let x = ((i as u64).wrapping_mul(2654435761) % 1000) as f32;
            let scale = [1.0e-3, 1.0, 1.0e3, 1.0e6][i % 4];
            (x - 500.0) * scale
        })
        .collect()
}

#[test]
fn float_scans_give_the_canonical_bits_on_every_device() {
    let program = Program::from_source("add.br", SOURCE).expect("compiles");
    let add = program.kernel("add").expect("kernel");
    let len = 40_000;
    let input = spread(len);
    let want: Vec<f32> = canonical_exclusive(&input, None)
        .into_iter()
        .zip(&input)
        .map(|(before, x)| before.map_or(*x, |b| b + x))
        .collect();
    let sequential: Vec<f32> = input
        .iter()
        .scan(0.0f32, |acc, x| {
            *acc += x;
            Some(*acc)
        })
        .collect();
    assert_ne!(want, sequential, "the values must show the grouping");
    for device in Device::of_type("all").expect("devices") {
        let s = Stream::from_slice(&device, &[len], &input).expect("input");
        let r = Stream::<f32>::new(&device, &[len]).expect("output");
        add.scan(&s, &r).expect("scan");
        let got = r.to_vec().expect("result");
        println!("scanned {len} floats on {}", device.info());
        let first_difference = got
            .iter()
            .zip(&want)
            .position(|(g, w)| g.to_bits() != w.to_bits());
        assert_eq!(first_difference, None, "on {}", device.info());
    }
}

/// An exclusive float scan from an initial value over a ragged length (pieces of several
/// sizes, blocks and single leaves), bit for bit against the canonical order.
#[test]
fn exclusive_float_scans_give_the_canonical_bits_on_every_device() {
    let program = Program::from_source("add.br", SOURCE).expect("compiles");
    let add = program.kernel("add").expect("kernel");
    let len = 70_003;
    let input = spread(len);
    let init = 0.375f32;
    let want: Vec<f32> = canonical_exclusive(&input, Some(init))
        .into_iter()
        .map(|before| before.expect("an initial value"))
        .collect();
    for device in Device::of_type("all").expect("devices") {
        let s = Stream::from_slice(&device, &[len], &input).expect("input");
        let r = Stream::<f32>::new(&device, &[len]).expect("output");
        add.scan_exclusive(&s, &r, init).expect("scan");
        let got = r.to_vec().expect("result");
        let first_difference = got
            .iter()
            .zip(&want)
            .position(|(g, w)| g.to_bits() != w.to_bits());
        assert_eq!(first_difference, None, "on {}", device.info());
    }
}

#[test]
fn scans_of_views_and_in_rows_of_a_wide_stream() {
    let program = Program::from_source("add.br", SOURCE).expect("compiles");
    let add = program.kernel("add").expect("kernel");
    // Rows of two GPU tiles, the second ragged; rows after the first start off the 16-byte
    // alignment that tiles are copied at, so they are loaded leaf by leaf.
    let (rows, cols) = (3, 20_001);
    let input = spread(rows * cols);
    for device in Device::of_type("all").expect("devices") {
        let s = Stream::from_slice(&device, &[rows, cols], &input).expect("input");
        let r = Stream::<f32>::new(&device, &[rows, cols]).expect("output");
        add.scan_exclusive(&s, &r, 0.5).expect("scan");
        let got = r.to_vec().expect("result");
        for (row, chunk) in input.chunks(cols).enumerate() {
            let want: Vec<f32> = canonical_exclusive(chunk, Some(0.5))
                .into_iter()
                .map(|v| v.expect("from init"))
                .collect();
            let at = row * cols;
            assert!(
                got[at..at + cols]
                    .iter()
                    .zip(&want)
                    .all(|(g, w)| g.to_bits() == w.to_bits()),
                "row {row} on {}",
                device.info()
            );
        }
    }
}

#[test]
fn bad_scans_say_what_is_wrong() {
    let program = Program::from_source(
        "ops.br",
        "
reduce void add(float a<>, reduce float r<>) { r += a; }
reduce void scaled(float a<>, reduce float r<>, float k) { r += k * a; }
kernel void twice(float a<>, out float b<>) { b = 2.0 * a; }
",
    )
    .expect("compiles");
    let device = Device::of_type("cpu").expect("cpu")[0].clone();
    let input = Stream::from_slice(&device, &[2, 3], &[1.0f32; 6]).expect("input");
    let wrong = Stream::<f32>::new(&device, &[3, 2]).expect("output");
    let right = Stream::<f32>::new(&device, &[2, 3]).expect("output");
    let error = |result: Result<brook::LaunchReport, brook::Error>| {
        result.expect_err("the scan is refused").to_string()
    };
    let add = program.kernel("add").expect("add");
    let message = error(add.scan(&input, &wrong));
    assert!(
        message.contains("output's shape [3, 2] must be the input's [2, 3]"),
        "{message}"
    );
    assert!(wrong.to_vec().is_err(), "the output carries the error");
    let message = error(program.kernel("twice").expect("twice").scan(&input, &right));
    assert!(message.contains("`twice` is a map kernel"), "{message}");
    let message = error(
        program
            .kernel("scaled")
            .expect("scaled")
            .scan(&input, &right),
    );
    assert!(
        message.contains("exactly one input and one reduction target"),
        "{message}"
    );
    let request = ScanRequest {
        kind: brook::ScanKind::Exclusive,
        whole: false,
        init: None,
    };
    let message = error(add.scan_with(request, &input, &right));
    assert!(
        message.contains("needs the value of its first prefix"),
        "{message}"
    );
    let int2 = ScanRequest::exclusive(brook_runtime::Constant::of([1i32, 2]));
    let message = error(add.scan_with(int2, &input, &right));
    assert!(
        message.contains("cannot start from a int2 value"),
        "{message}"
    );
}

/// Rows of many tiles (the GPU's one-pass entry publishes and reads groups of tiles), with a
/// non-commutative operator: rows and the whole stream, inclusive and exclusive.
#[test]
fn long_non_commutative_scans_keep_operand_order() {
    let program = Program::from_source("product.br", SOURCE).expect("compiles");
    let product = program.kernel("product").expect("kernel");
    let dims = [3, 5000];
    let input = random(17, dims[0] * dims[1]);
    let init: M = [1, -1, 1, 0];
    for device in Device::of_type("all").expect("devices") {
        let s = Stream::from_slice(&device, &dims, &input).expect("input");
        let r = Stream::<M>::new(&device, &dims).expect("output");
        for (whole, exclusive) in [(false, false), (true, false), (false, true), (true, true)] {
            let request = match exclusive {
                true => ScanRequest::exclusive(brook_runtime::Constant::of(init)),
                false => ScanRequest::inclusive(),
            };
            let request = if whole {
                request.whole_stream()
            } else {
                request
            };
            product.scan_with(request, &s, &r).expect("scan");
            let row = if whole { input.len() } else { dims[1] };
            let want = prefixes(&input, row, exclusive.then_some(init));
            assert!(
                r.to_vec().expect("result") == want,
                "whole {whole}, exclusive {exclusive} on {}",
                device.info()
            );
        }
    }
}

/// Streams of more than 32 x 32 GPU tiles (the one-pass entry's group table then has three
/// levels; rows of more than one tile take tiles of 16384 floats or 4096 matrices): a float
/// scan against the canonical order computed here, and a non-commutative one against the
/// sequential products, on the compiled devices (the interpreter is too slow for these
/// lengths; every shorter test runs on it).
#[test]
fn scans_over_many_tiles_on_compiled_devices() {
    let program = Program::from_source("ops.br", SOURCE).expect("compiles");
    let (add, product) = (
        program.kernel("add").expect("add"),
        program.kernel("product").expect("product"),
    );
    let floats = spread(17_000_000);
    let mut want = vec![0.0f32; floats.len()];
    brook_ir::scan_order::scan_serial(
        floats.iter().copied(),
        None,
        brook_ir::scan_order::ScanKind::Inclusive,
        &mut |a: &f32, b: &f32| a + b,
        &mut |i, v| want[i] = v.expect("inclusive"),
    );
    let matrices = random(5, 4_300_000);
    let products = prefixes(&matrices, matrices.len(), None);
    let compiled: Vec<Device> = Device::of_type("all")
        .expect("devices")
        .into_iter()
        .filter(|d| d.type_name() != "interp")
        .collect();
    for device in compiled {
        let s = Stream::from_slice(&device, &[floats.len()], &floats).expect("input");
        let r = Stream::<f32>::new(&device, &[floats.len()]).expect("output");
        add.scan(&s, &r).expect("scan");
        let got = r.to_vec().expect("result");
        let wrong = got
            .iter()
            .zip(&want)
            .position(|(g, w)| g.to_bits() != w.to_bits());
        assert_eq!(wrong, None, "floats on {}", device.info());
        let s = Stream::from_slice(&device, &[matrices.len()], &matrices).expect("input");
        let r = Stream::<M>::new(&device, &[matrices.len()]).expect("output");
        product.scan(&s, &r).expect("scan");
        assert!(
            r.to_vec().expect("result") == products,
            "matrices on {}",
            device.info()
        );
    }
}

/// The shared one-pass scan entry (`gpu::reduce::lookback`) on every GPU that runs it
/// ([`one_pass_devices`]: Vulkan and CUDA, waiting or not). Floats, doubles and 2x2 matrix
/// products (non-commutative, 16-byte values), inclusive and exclusive, whole streams and
/// rows: the CPU device's bits (the canonical order).
#[test]
fn one_pass_scans_give_the_canonical_bits_waiting_or_not() {
    let devices = one_pass_devices();
    if devices.is_empty() {
        return println!("skipped: no GPU with the shared one-pass scan entry");
    }
    let program = Program::from_source(
        "ops.br",
        &format!("{SOURCE}\nreduce void addd(double a<>, reduce double r<>) {{ r += a; }}"),
    )
    .expect("compiles");
    let cpu = Device::from_spec("cpu:0").expect("cpu");
    for (gpu, label) in devices {
        println!("one-pass scans on {label}");
        let floats = spread(70_007);
        let doubles: Vec<f64> = floats.iter().map(|&x| f64::from(x) * 1.0e-7).collect();
        let matrices = random(23, 3 * 9_001);
        for (dims, whole, exclusive) in [
            (vec![70_007], true, false),
            (vec![70_007], true, true),
            (vec![7, 10_001], false, true),
            (vec![7, 10_001], false, false),
        ] {
            let on = |device: &Device| {
                let add = program.kernel("add").expect("add");
                let s = Stream::from_slice(device, &dims, &floats).expect("input");
                let r = Stream::<f32>::new(device, &dims).expect("output");
                let request = match exclusive {
                    true => ScanRequest::exclusive(brook_runtime::Constant::of(0.25f32)),
                    false => ScanRequest::inclusive(),
                };
                let request = if whole {
                    request.whole_stream()
                } else {
                    request
                };
                add.scan_with(request, &s, &r).expect("scan");
                r.to_vec().expect("result")
            };
            let (want, got) = (on(&cpu), on(&gpu));
            let first = want
                .iter()
                .zip(&got)
                .position(|(w, g)| w.to_bits() != g.to_bits());
            assert_eq!(
                first, None,
                "floats {dims:?} exclusive {exclusive} on {label}"
            );
            let on = |device: &Device| {
                let add = program.kernel("addd").expect("addd");
                let s = Stream::from_slice(device, &dims, &doubles).expect("input");
                let r = Stream::<f64>::new(device, &dims).expect("output");
                let request = if whole {
                    ScanRequest::inclusive().whole_stream()
                } else {
                    ScanRequest::inclusive()
                };
                add.scan_with(request, &s, &r).expect("scan");
                r.to_vec().expect("result")
            };
            let (want, got) = (on(&cpu), on(&gpu));
            let first = want
                .iter()
                .zip(&got)
                .position(|(w, g)| w.to_bits() != g.to_bits());
            assert_eq!(first, None, "doubles {dims:?} on {label}");
        }
        let product = program.kernel("product").expect("product");
        for (dims, whole) in [(vec![3 * 9_001], true), (vec![3, 9_001], false)] {
            let s = Stream::from_slice(&gpu, &dims, &matrices).expect("input");
            let r = Stream::<M>::new(&gpu, &dims).expect("output");
            let request = ScanRequest::exclusive(brook_runtime::Constant::of([1, 2, 0, 1]));
            let request = if whole {
                request.whole_stream()
            } else {
                request
            };
            product.scan_with(request, &s, &r).expect("scan");
            let row = if whole { matrices.len() } else { dims[1] };
            let want = prefixes(&matrices, row, Some([1, 2, 0, 1]));
            assert!(r.to_vec().expect("result") == want, "matrices on {label}");
        }
    }
}

/// Every GPU that runs the shared one-pass scan entry, in each tuning the test runs (held
/// tiles that never wait, so every node not yet published takes the fallback; tiles of 256
/// leaves, loaded twice, with the shipped wait, in workgroups of 256): the Vulkan devices
/// with 64-bit atomics and votes (lavapipe too, which does not choose the entry) and the
/// CUDA devices (the entry in place of PTX's own one-pass scan), each with its label.
fn one_pass_devices() -> Vec<(Device, String)> {
    let shipped = brook_codegen::Tuning::DEFAULT.scan_spins;
    let tunings = [(0, 0, 64), (256, shipped, 256)];
    let label = |device: &Device, (tile, spins, group): (u32, u32, u32)| {
        format!(
            "{}, tiles {tile}, waiting {spins} reads, workgroups of {group}",
            device.info()
        )
    };
    let mut devices = Vec::new();
    let usable = |info: &brook_runtime::vulkan::GpuInfo| {
        info.int64_atomics && info.subgroup_vote && info.unusable.is_none()
    };
    let vulkan: Vec<usize> = match brook_runtime::vulkan::gpus() {
        Ok(gpus) => (0..gpus.len()).filter(|&o| usable(&gpus[o].info)).collect(),
        Err(_) => Vec::new(),
    };
    for ordinal in vulkan {
        for (tile, spins, group) in tunings {
            let raw = brook_runtime::vulkan::device_with(ordinal, |o| {
                o.lookback_scans = true;
                o.tuning.scan_tile = tile;
                o.tuning.scan_spins = spins;
                o.tuning.scan_group = group;
            })
            .expect("the device opens");
            let device = Device::from_raw(raw);
            let name = label(&device, (tile, spins, group));
            devices.push((device, name));
        }
    }
    let cuda = brook_runtime::cuda::discover().map_or(0, |gpus| gpus.len());
    for ordinal in 0..cuda {
        for (tile, spins, group) in tunings {
            let raw = brook_runtime::cuda::device_with(ordinal, |t| {
                t.scan_one_pass = true;
                t.scan_tile = tile;
                t.scan_spins = spins;
                t.scan_group = group;
            })
            .expect("the device opens");
            let device = Device::from_raw(raw);
            let name = label(&device, (tile, spins, group));
            devices.push((device, name));
        }
    }
    devices
}
