//! The register-blocked Brook+ thread-group multiply (`tiled_matmul_128` in
//! `examples/kernels/group_matmul.br`, `gpu_bench`'s "GroupSize 128x128-tiled matmul") on every
//! device: a 128 x 256 product over k = 48 (two groups side by side, three steps along k) of
//! values whose sums depend on the order, compared bit for bit with a host product computed
//! independently in the kernel's order (each sum along k in order, one `mul_add` a step) and
//! with the interpreter.

use brook::{args, Device, Program, Stream};

const SOURCE: &str = include_str!("../../../examples/kernels/group_matmul.br");

/// Small values with many significant bits, from a fixed sequence.
fn values(count: usize, seed: u64) -> Vec<f32> {
    let mut state = seed;
    (0..count)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// `a` (m x k) times `b` (k x n), row-major: each sum from 0 along k in order, one rounding
/// a step.
fn host_product(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).fold(0.0f32, |sum, p| a[i * k + p].mul_add(b[p * n + j], sum));
        }
    }
    c
}

fn quads(m: &[f32]) -> Vec<[f32; 4]> {
    m.chunks(4).map(|q| [q[0], q[1], q[2], q[3]]).collect()
}

/// The product on `device`, as floats row-major.
fn run(device: &Device, a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    let program = Program::from_source("group_matmul.br", SOURCE).expect("compiles");
    let sa = Stream::from_slice(device, &[m, k / 4], &quads(a)).expect("A");
    let sb = Stream::from_slice(device, &[k, n / 4], &quads(b)).expect("B");
    let sc = Stream::<[f32; 4]>::new(device, &[m, n / 4]).expect("C");
    program
        .kernel("tiled_matmul_128")
        .expect("tiled_matmul_128")
        .with_domain(&[0], &[m * n / 64])
        .launch(args![(k / 4) as i32, (n / 4) as i32, &sa, &sb, &sc])
        .unwrap_or_else(|e| panic!("{}: {e}", device.info()));
    sc.to_vec().expect("C").into_iter().flatten().collect()
}

/// m, k and n of the tested product: two groups side by side, three steps along k.
const SHAPE: (usize, usize, usize) = (128, 48, 256);

/// A (m x k) and B (k x n) of [`SHAPE`].
fn matrices() -> (Vec<f32>, Vec<f32>) {
    let (m, k, n) = SHAPE;
    (values(m * k, 1), values(k * n, 2))
}

#[test]
fn tiled_matmul_128_gives_the_ordered_fused_sums_on_every_device() {
    let (m, k, n) = SHAPE;
    let (a, b) = matrices();
    let want = host_product(&a, &b, m, k, n);
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let reference = run(&Device::interp(), &a, &b, m, k, n);
    assert_eq!(bits(&reference), bits(&want), "the interpreter");
    for device in Device::all().iter().filter(|d| d.type_name() != "interp") {
        let got = run(device, &a, &b, m, k, n);
        assert_eq!(bits(&got), bits(&want), "{}", device.info());
    }
}

/// The same fused sums differ from sums of rounded products: the test can tell them apart.
#[test]
fn fused_sums_differ_from_rounded_products() {
    let (m, k, n) = SHAPE;
    let (a, b) = matrices();
    let fused = host_product(&a, &b, m, k, n);
    let rounded = (0..m * n).filter(|&at| {
        let (i, j) = (at / n, at % n);
        let sum = (0..k).fold(0.0f32, |s, p| s + a[i * k + p] * b[p * n + j]);
        sum.to_bits() != fused[at].to_bits()
    });
    assert!(rounded.count() > m * n / 4);
}
