//! Seed 001's gather matrix multiplies at 1024^3 (`examples/kernels/gather_matmul.br`): the simple one
//! (an element of C per instance, a row of A and a column of B gathered) and the 8x4-blocked
//! one (`float4`s of four consecutive k, eight rows of C per instance). The native loops compute
//! the same sums in the same order, so the results are compared bit for bit.

use super::{measure_n, Filter, Row};
use crate::blocked_matmul::{self, quads};
use brook::{args, Device, Program, Stream};
use rayon::prelude::*;

const SOURCE: &str = include_str!("../../../../examples/kernels/gather_matmul.br");
const N: usize = 1024;
const REPEATS: usize = 3;

/// Pseudo-random hundredths in [0, 10) (the comparison is bit for bit: both sides add in the
/// same order).
fn matrix(seed: u32) -> Vec<f32> {
    let mut state = seed.wrapping_mul(2654435761).max(1);
    (0..N * N)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state % 1000) as f32 / 100.0
        })
        .collect()
}

pub fn rows(device: &Device, filter: &Filter, rows: &mut Vec<Row>) -> Result<(), brook::Error> {
    if !filter.wants("matmul") {
        return Ok(());
    }
    let program = Program::from_source("examples/kernels/gather_matmul.br", SOURCE)?;
    let (a, b) = (matrix(5), matrix(6));
    rows.push(simple(&program, device, &a, &b)?);
    rows.push(blocked(&program, device, &a, &b)?);
    Ok(())
}

const FLOPS: f64 = 2.0 * (N * N * N) as f64;

fn simple(program: &Program, device: &Device, a: &[f32], b: &[f32]) -> Result<Row, brook::Error> {
    let kernel = program.kernel("simple_matmult")?;
    let sa = Stream::from_slice(device, &[N, N], a)?;
    let sb = Stream::from_slice(device, &[N, N], b)?;
    let sc = Stream::<f32>::new(device, &[N, N])?;
    let mut native = vec![0.0f32; N * N];
    let (brook_time, native_time) = measure_n(
        REPEATS,
        || {
            kernel
                .launch(args![N as f32, &sa, &sb, &sc])
                .expect("simple_matmult");
            sc.finish().expect("finish");
        },
        || {
            native.par_chunks_mut(N).enumerate().for_each(|(i, row)| {
                for (j, c) in row.iter_mut().enumerate() {
                    let mut sum = 0.0f32;
                    for k in 0..N {
                        sum += a[i * N + k] * b[k * N + j];
                    }
                    *c = sum;
                }
            });
        },
    );
    assert_eq!(sc.to_vec()?, native, "simple_matmult results differ");
    Ok(Row {
        what: "simple gather matmul 1024^3".into(),
        brook: brook_time,
        native: native_time,
        target: 1.0,
        flops: Some(FLOPS),
    })
}

/// The blocked kernel's sums for one `float4` of C: row `8 * r + i`, columns `4 * q ..`.
fn blocked_quad(
    a: &[Vec<[f32; 4]>],
    b: &[Vec<[f32; 4]>],
    i: usize,
    r: usize,
    q: usize,
) -> [f32; 4] {
    let mut acc = [0.0f32; 4];
    for k in 0..N / 4 {
        let x = a[i][r * (N / 4) + k];
        let rows = [
            b[0][k * (N / 4) + q],
            b[1][k * (N / 4) + q],
            b[2][k * (N / 4) + q],
            b[3][k * (N / 4) + q],
        ];
        for c in 0..4 {
            acc[c] += x[0] * rows[0][c] + x[1] * rows[1][c] + x[2] * rows[2][c] + x[3] * rows[3][c];
        }
    }
    acc
}

fn blocked(program: &Program, device: &Device, a: &[f32], b: &[f32]) -> Result<Row, brook::Error> {
    let kernel = program.kernel("optimized_matmult")?;
    let a_parts: Vec<Vec<[f32; 4]>> = (0..8).map(|i| quads(a, N, N / 8, 8, i)).collect();
    let b_parts: Vec<Vec<[f32; 4]>> = (0..4).map(|j| quads(b, N, N / 4, 4, j)).collect();
    let upload =
        |parts: &[Vec<[f32; 4]>], rows: usize| -> Result<Vec<Stream<[f32; 4]>>, brook::Error> {
            parts
                .iter()
                .map(|p| Stream::from_slice(device, &[rows, N / 4], p))
                .collect()
        };
    let (ap, bp) = (upload(&a_parts, N / 8)?, upload(&b_parts, N / 4)?);
    let cp: Vec<Stream<[f32; 4]>> = (0..8)
        .map(|_| Stream::new(device, &[N / 8, N / 4]))
        .collect::<Result<_, _>>()?;
    let mut native = vec![vec![[0.0f32; 4]; N / 8 * (N / 4)]; 8];
    let (brook_time, native_time) = measure_n(
        REPEATS,
        || {
            blocked_matmul::launch(&kernel, N, &ap, &bp, &cp).expect("optimized_matmult");
            cp[7].finish().expect("finish");
        },
        || {
            for (i, c) in native.iter_mut().enumerate() {
                c.par_chunks_mut(N / 4).enumerate().for_each(|(r, line)| {
                    for (q, slot) in line.iter_mut().enumerate() {
                        *slot = blocked_quad(&a_parts, &b_parts, i, r, q);
                    }
                });
            }
        },
    );
    for (i, c) in cp.iter().enumerate() {
        assert!(
            c.to_vec()? == native[i],
            "optimized_matmult C{} differs",
            i + 1
        );
    }
    Ok(Row {
        what: "8x4-blocked gather matmul 1024^3".into(),
        brook: brook_time,
        native: native_time,
        target: 1.0,
        flops: Some(FLOPS),
    })
}
