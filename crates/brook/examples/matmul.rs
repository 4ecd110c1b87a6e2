//! Runs saxpy and two matrix multiplies (`examples/kernels/matmul.br`) on the default device
//! and checks every result against a plain Rust computation.
//!
//! `cargo run --release -p brook-lang --example matmul` (choose the device with `BRT_RUNTIME`).

use brook::{args, Device, Program, Stream};

const SOURCE: &str = include_str!("../../../examples/kernels/matmul.br");

/// A deterministic pseudo-random matrix of small integers (exact in float arithmetic).
fn matrix(rows: usize, cols: usize, seed: u32) -> Vec<f32> {
    let mut state = seed;
    (0..rows * cols)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            ((state >> 16) % 17) as f32 - 8.0
        })
        .collect()
}

/// The product of an `n x k` and a `k x m` matrix, summed in the kernel's order.
fn reference_matmul(a: &[f32], b: &[f32], n: usize, k: usize, m: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; n * m];
    for row in 0..n {
        for col in 0..m {
            let mut sum = 0.0f32;
            for i in 0..k {
                sum += a[row * k + i] * b[i * m + col];
            }
            c[row * m + col] = sum;
        }
    }
    c
}

fn main() -> Result<(), brook::Error> {
    let program = Program::from_source("examples/kernels/matmul.br", SOURCE)?;
    let device = Device::default_device();
    println!("device: {}", device.info());

    let n = 1000;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let y: Vec<f32> = (0..n).map(|i| 100.0 - i as f32).collect();
    let xs = Stream::from_slice(&device, &[n], &x)?;
    let ys = Stream::from_slice(&device, &[n], &y)?;
    let rs = Stream::<f32>::new(&device, &[n])?;
    program
        .kernel("saxpy")?
        .launch(args![3.0f32, &xs, &ys, &rs])?;
    let expected: Vec<f32> = x.iter().zip(&y).map(|(x, y)| 3.0 * x + y).collect();
    assert_eq!(rs.to_vec()?, expected, "saxpy");
    println!("saxpy of {n} elements: ok");

    let (rows, inner, cols) = (48, 64, 40);
    let a = matrix(rows, inner, 1);
    let b = matrix(inner, cols, 2);
    let expected = reference_matmul(&a, &b, rows, inner, cols);
    let a_stream = Stream::from_slice(&device, &[rows, inner], &a)?;
    let b_stream = Stream::from_slice(&device, &[inner, cols], &b)?;
    let c_stream = Stream::<f32>::new(&device, &[rows, cols])?;

    program.kernel("simple_matmult_indexof")?.launch(args![
        inner as f32,
        &a_stream,
        &b_stream,
        &c_stream
    ])?;
    assert_eq!(c_stream.to_vec()?, expected, "matmul with indexof");
    println!("{rows}x{inner} * {inner}x{cols} matmul with indexof and vector gathers: ok");

    let c_stream = Stream::<f32>::new(&device, &[rows, cols])?;
    program.kernel("simple_matmult_instance")?.launch(args![
        inner as u32,
        &a_stream,
        &b_stream,
        &c_stream
    ])?;
    assert_eq!(c_stream.to_vec()?, expected, "matmul with instance");
    println!("{rows}x{inner} * {inner}x{cols} matmul with instance and C-style gathers: ok");
    Ok(())
}
