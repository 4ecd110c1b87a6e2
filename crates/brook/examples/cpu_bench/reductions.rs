//! The sum and the inclusive scan of 2^24 floats, row scans of 4096x4096, and a reduction whose combine is a few
//! integer operations (neither commutative nor associative: the native side computes the
//! canonical tree, which for 2^24 leaves is the perfect binary tree).

use super::{measure, Filter, Row};
use brook::{host_var, Device, Program, Stream};
use rayon::prelude::*;
use std::hint::black_box;

const N: usize = 1 << 24;

pub fn rows(
    program: &Program,
    device: &Device,
    filter: &Filter,
    rows: &mut Vec<Row>,
) -> Result<(), brook::Error> {
    let sum = program.kernel("sum")?;
    let ones: Vec<f32> = (0..N).map(|i| (i % 3) as f32).collect();
    let values = Stream::from_slice(device, &[N], &ones)?;
    if filter.wants("sum") {
        let mut total = 0.0f32;
        let mut native_total = 0.0f32;
        let (brook, native) = measure(
            || {
                sum.launch(brook::args![&values, host_var(&mut total)])
                    .expect("sum");
            },
            || native_total = black_box(&ones).par_iter().sum::<f32>(),
        );
        assert_eq!(total, native_total, "sums differ (both are exact here)");
        rows.push(Row {
            what: "sum, 2^24 floats".into(),
            brook,
            native,
            target: 1.0,
            flops: None,
        });
    }
    if filter.wants("sum") {
        rows.push(sum4(program, device, &ones)?);
    }
    if filter.wants("mix") {
        rows.push(mix(program, device)?);
    }
    if filter.wants("scan") {
        rows.push(scans(
            &sum,
            device,
            &ones,
            &[N],
            "inclusive scan, 2^24 floats",
        )?);
        let side = 1 << 12;
        let what = "row scans, 4096 rows of 4096 floats";
        rows.push(scans(&sum, device, &ones, &[side, side], what)?);
    }
    Ok(())
}

/// The sum of 2^22 `float4`s (the same 2^24 floats; native: rayon's sum of 4-arrays). Exact
/// here: small integers.
fn sum4(program: &Program, device: &Device, ones: &[f32]) -> Result<Row, brook::Error> {
    let sum4 = program.kernel("sum4")?;
    let quads: Vec<[f32; 4]> = ones
        .chunks_exact(4)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect();
    let values = Stream::from_slice(device, &[N / 4], &quads)?;
    let mut total = [0.0f32; 4];
    let mut native_total = [0.0f32; 4];
    let (brook, native) = measure(
        || {
            sum4.launch(brook::args![&values, host_var(&mut total)])
                .expect("sum4");
        },
        || {
            native_total = black_box(&quads).par_iter().copied().reduce(
                || [0.0; 4],
                |a, b| [a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]],
            );
        },
    );
    assert_eq!(
        total, native_total,
        "float4 sums differ (both are exact here)"
    );
    Ok(Row {
        what: "sum, 2^22 float4".into(),
        brook,
        native,
        target: 1.0,
        flops: None,
    })
}

/// Inclusive scans of `ones` as a stream of `shape`, along its last axis (native: a running
/// sum per row, rows in parallel with rayon; one row is a sequential loop). Exact here: small
/// integers.
fn scans(
    sum: &brook::Kernel,
    device: &Device,
    ones: &[f32],
    shape: &[usize],
    what: &str,
) -> Result<Row, brook::Error> {
    let row = *shape.last().expect("a shape has an axis");
    let values = Stream::from_slice(device, shape, ones)?;
    let scanned = Stream::<f32>::new(device, shape)?;
    let mut native_scan = vec![0.0f32; ones.len()];
    let (brook, native) = measure(
        || {
            sum.scan(&values, &scanned).expect("scan");
            scanned.finish().expect("scan");
        },
        || {
            native_scan
                .par_chunks_mut(row)
                .zip(black_box(ones).par_chunks(row))
                .for_each(|(out, row)| {
                    let mut acc = 0.0f32;
                    for (out, x) in out.iter_mut().zip(row) {
                        acc += x;
                        *out = acc;
                    }
                });
        },
    );
    assert!(
        scanned.to_vec()? == native_scan,
        "{what}: scans differ (both are exact here)"
    );
    Ok(Row {
        what: what.into(),
        brook,
        native,
        target: 1.0,
        flops: None,
    })
}

/// The `mix` reduce kernel's combine.
fn mix_combine(h: u32, a: u32) -> u32 {
    let x = (h ^ a.wrapping_mul(2_654_435_761)).wrapping_mul(31);
    (x ^ (x >> 15))
        .wrapping_mul(2_246_822_519)
        .wrapping_add(a >> 3)
}

/// The perfect binary tree of `mix_combine` over `leaves` (a power of two), halves in
/// parallel down to 2^14 leaves.
fn mix_tree(leaves: &[u32]) -> u32 {
    if leaves.len() == 1 {
        return leaves[0];
    }
    let (left, right) = leaves.split_at(leaves.len() / 2);
    let (l, r) = if leaves.len() > 1 << 14 {
        rayon::join(|| mix_tree(left), || mix_tree(right))
    } else {
        (mix_tree(left), mix_tree(right))
    };
    mix_combine(l, r)
}

fn mix(program: &Program, device: &Device) -> Result<Row, brook::Error> {
    let kernel = program.kernel("mix")?;
    let data: Vec<u32> = (0..N as u32)
        .map(|i| i.wrapping_mul(747_796_405) ^ 0x5bd1e995)
        .collect();
    let values = Stream::from_slice(device, &[N], &data)?;
    let (mut total, mut native_total) = (0u32, 0u32);
    let (brook, native) = measure(
        || {
            kernel
                .launch(brook::args![&values, host_var(&mut total)])
                .expect("mix");
        },
        || native_total = mix_tree(black_box(&data)),
    );
    assert_eq!(total, native_total, "mix: the canonical trees differ");
    Ok(Row {
        what: "reduce with an integer-mix combine, 2^24".into(),
        brook,
        native,
        target: 1.0,
        flops: None,
    })
}
