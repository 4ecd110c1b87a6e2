//! Seed 001's 8x4-blocked gather matrix multiply (`optimized_matmult` in
//! `examples/kernels/gather_matmul.br`): its operands' layout and its launch, shared by
//! `gpu_bench` and `cpu_bench`.

use brook::{args, Kernel, Stream};

/// Rows `first, first + step, ...` (`rows` of them) of an `n x n` matrix, each as `float4`s of
/// 4 consecutive columns: `A_i` is `quads(a, n, n / 8, 8, i)`, `B_j` `quads(b, n, n / 4, 4, j)`.
pub fn quads(m: &[f32], n: usize, rows: usize, step: usize, first: usize) -> Vec<[f32; 4]> {
    (0..rows)
        .flat_map(|r| {
            m[(r * step + first) * n..][..n]
                .chunks_exact(4)
                .map(|q| [q[0], q[1], q[2], q[3]])
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Launches the multiply of `n x n` matrices: `a` the 8 parts of A, `b` the 4 of B, `c` the 8
/// of C.
pub fn launch(
    kernel: &Kernel,
    n: usize,
    a: &[Stream<[f32; 4]>],
    b: &[Stream<[f32; 4]>],
    c: &[Stream<[f32; 4]>],
) -> Result<(), brook::Error> {
    kernel
        .launch(args![
            (n / 4) as f32,
            &a[0],
            &a[1],
            &a[2],
            &a[3],
            &a[4],
            &a[5],
            &a[6],
            &a[7],
            &b[0],
            &b[1],
            &b[2],
            &b[3],
            &c[0],
            &c[1],
            &c[2],
            &c[3],
            &c[4],
            &c[5],
            &c[6],
            &c[7]
        ])
        .map(|_| ())
}
