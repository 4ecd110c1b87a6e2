//! Map kernels: saxpy on floats and `float4`s, Mandelbrot, and a 3x3 blur with and without
//! `for` loops over its taps.

use super::{measure, Filter, Row};
use brook::{args, Device, Program, Stream};
use rayon::prelude::*;
use std::hint::black_box;

const N: usize = 1 << 24;
const SIDE: usize = 1024;
const MAX_ITER: i32 = 256;
const PASSES: usize = 20;

pub const SOURCE: &str = r#"
kernel void saxpy(float a, float x<>, float y<>, out float r<>) { r = a * x + y; }

kernel void saxpy4(float4 a, float4 x<>, float4 y<>, out float4 r<>) { r = a * x + y; }

kernel void mandel(float scale, out int count<>)
{
    float2 p = indexof(count).xy;
    float cx = p.x * scale - 2.0f;
    float cy = p.y * scale - 1.5f;
    float x = 0.0f;
    float y = 0.0f;
    int i = 0;
    while (i < 256) {
        float xx = x * x;
        float yy = y * y;
        if (xx + yy > 4.0f) break;
        y = 2.0f * x * y + cy;
        x = xx - yy + cx;
        i = i + 1;
    }
    count = i;
}

reduce void sum(float a<>, reduce float s<>) { s += a; }
reduce void sum4(float4 a<>, reduce float4 s<>) { s += a; }

reduce void mix(uint a<>, reduce uint h<>)
{
    uint x = (h ^ (a * 2654435761u)) * 31u;
    h = (x ^ (x >> 15u)) * 2246822519u + (a >> 3u);
}

kernel void blur_loops(float img[][], out float o<>)
{
    float2 p = indexof(o).xy;
    float s = 0.0f;
    int dy;
    int dx;
    for (dy = -1; dy <= 1; dy++) {
        for (dx = -1; dx <= 1; dx++) {
            s += img[p.y + (float)dy][p.x + (float)dx];
        }
    }
    o = s / 9.0f;
}

kernel void blur_unrolled(float img[][], out float o<>)
{
    float2 p = indexof(o).xy;
    float s = 0.0f;
    s += img[p.y - 1.0f][p.x - 1.0f];
    s += img[p.y - 1.0f][p.x];
    s += img[p.y - 1.0f][p.x + 1.0f];
    s += img[p.y][p.x - 1.0f];
    s += img[p.y][p.x];
    s += img[p.y][p.x + 1.0f];
    s += img[p.y + 1.0f][p.x - 1.0f];
    s += img[p.y + 1.0f][p.x];
    s += img[p.y + 1.0f][p.x + 1.0f];
    o = s / 9.0f;
}
"#;

pub fn rows(
    program: &Program,
    device: &Device,
    filter: &Filter,
    rows: &mut Vec<Row>,
) -> Result<(), brook::Error> {
    if filter.wants("saxpy") {
        rows.push(saxpy(program, device)?);
        rows.push(saxpy4(program, device)?);
    }
    if filter.wants("Mandelbrot") {
        rows.push(mandelbrot(program, device)?);
    }
    if filter.wants("blur") {
        blur(program, device, rows)?;
    }
    Ok(())
}

fn saxpy(program: &Program, device: &Device) -> Result<Row, brook::Error> {
    let saxpy = program.kernel("saxpy")?;
    let x: Vec<f32> = (0..N).map(|i| (i % 1000) as f32).collect();
    let y: Vec<f32> = (0..N).map(|i| (i % 777) as f32).collect();
    let xs = Stream::from_slice(device, &[N], &x)?;
    let ys = Stream::from_slice(device, &[N], &y)?;
    let rs = Stream::<f32>::new(device, &[N])?;
    let mut out = vec![0.0f32; N];
    let (brook, native) = measure(
        || {
            saxpy.launch(args![2.0f32, &xs, &ys, &rs]).expect("saxpy");
            rs.finish().expect("finish");
        },
        || {
            let a = black_box(2.0f32);
            out.par_chunks_mut(1 << 16)
                .zip(x.par_chunks(1 << 16).zip(y.par_chunks(1 << 16)))
                .for_each(|(r, (x, y))| {
                    for ((r, x), y) in r.iter_mut().zip(x).zip(y) {
                        *r = a * x + y;
                    }
                });
        },
    );
    assert_eq!(rs.to_vec()?, out, "saxpy results differ");
    Ok(Row {
        what: "saxpy, 2^24 floats".into(),
        brook,
        native,
        target: 1.0,
        flops: Some(2.0 * N as f64),
    })
}

fn saxpy4(program: &Program, device: &Device) -> Result<Row, brook::Error> {
    let saxpy = program.kernel("saxpy4")?;
    let n = N / 4;
    let quad =
        |i: usize, m: usize| -> [f32; 4] { std::array::from_fn(|c| ((4 * i + c) % m) as f32) };
    let x: Vec<[f32; 4]> = (0..n).map(|i| quad(i, 1000)).collect();
    let y: Vec<[f32; 4]> = (0..n).map(|i| quad(i, 777)).collect();
    let a = [2.0f32, 3.0, 0.5, -1.0];
    let xs = Stream::from_slice(device, &[n], &x)?;
    let ys = Stream::from_slice(device, &[n], &y)?;
    let rs = Stream::<[f32; 4]>::new(device, &[n])?;
    let mut out = vec![[0.0f32; 4]; n];
    let (brook, native) = measure(
        || {
            saxpy.launch(args![a, &xs, &ys, &rs]).expect("saxpy4");
            rs.finish().expect("finish");
        },
        || {
            let a = black_box(a);
            out.par_chunks_mut(1 << 14)
                .zip(x.par_chunks(1 << 14).zip(y.par_chunks(1 << 14)))
                .for_each(|(r, (x, y))| {
                    for ((r, x), y) in r.iter_mut().zip(x).zip(y) {
                        *r = std::array::from_fn(|c| a[c] * x[c] + y[c]);
                    }
                });
        },
    );
    assert_eq!(rs.to_vec()?, out, "saxpy4 results differ");
    Ok(Row {
        what: "saxpy, 2^22 float4s".into(),
        brook,
        native,
        target: 1.0,
        flops: Some(2.0 * N as f64),
    })
}

fn mandel_native(scale: f32, out: &mut [i32]) {
    out.par_chunks_mut(SIDE)
        .enumerate()
        .for_each(|(row, line)| {
            for (col, slot) in line.iter_mut().enumerate() {
                let cx = col as f32 * scale - 2.0;
                let cy = row as f32 * scale - 1.5;
                let (mut x, mut y, mut i) = (0.0f32, 0.0f32, 0);
                while i < MAX_ITER {
                    let (xx, yy) = (x * x, y * y);
                    if xx + yy > 4.0 {
                        break;
                    }
                    y = 2.0 * x * y + cy;
                    x = xx - yy + cx;
                    i += 1;
                }
                *slot = i;
            }
        });
}

fn mandelbrot(program: &Program, device: &Device) -> Result<Row, brook::Error> {
    let mandel = program.kernel("mandel")?;
    let counts = Stream::<i32>::new(device, &[SIDE, SIDE])?;
    let scale = 3.0f32 / SIDE as f32;
    let mut native_counts = vec![0i32; SIDE * SIDE];
    let (brook, native) = measure(
        || {
            mandel.launch(args![scale, &counts]).expect("mandel");
            counts.finish().expect("finish");
        },
        || mandel_native(black_box(scale), &mut native_counts),
    );
    assert_eq!(counts.to_vec()?, native_counts, "Mandelbrot results differ");
    Ok(Row {
        what: "Mandelbrot 1024x1024, 256 iterations".into(),
        brook,
        native,
        target: 0.33,
        flops: None,
    })
}

/// One 3x3 box blur pass, taps summed in the kernels' order, edges clamped.
fn blur_row(img: &[f32], row: usize, line: &mut [f32]) {
    let at = |y: i64, x: i64| {
        let y = y.clamp(0, SIDE as i64 - 1) as usize;
        let x = x.clamp(0, SIDE as i64 - 1) as usize;
        img[y * SIDE + x]
    };
    for (col, slot) in line.iter_mut().enumerate() {
        let mut s = 0.0f32;
        for dy in -1..=1 {
            for dx in -1..=1 {
                s += at(row as i64 + dy, col as i64 + dx);
            }
        }
        *slot = s / 9.0;
    }
}

/// 20 passes ping-ponging between two streams, with each blur kernel.
fn blur(program: &Program, device: &Device, rows: &mut Vec<Row>) -> Result<(), brook::Error> {
    let image: Vec<f32> = (0..SIDE * SIDE)
        .map(|i| ((i * 7919) % 256) as f32)
        .collect();
    let mut native_a = image.clone();
    let mut native_b = vec![0.0f32; SIDE * SIDE];
    let native_blur = |a: &mut Vec<f32>, b: &mut Vec<f32>, parallel: bool| {
        for _ in 0..PASSES {
            if parallel {
                b.par_chunks_mut(SIDE)
                    .enumerate()
                    .for_each(|(row, line)| blur_row(a, row, line));
            } else {
                for (row, line) in b.chunks_mut(SIDE).enumerate() {
                    blur_row(a, row, line);
                }
            }
            std::mem::swap(a, b);
        }
    };
    native_blur(&mut native_a, &mut native_b, true);
    let expected = native_a.clone();
    for (name, native_parallel) in [("blur_loops", false), ("blur_unrolled", true)] {
        let kernel = program.kernel(name)?;
        let a = Stream::from_slice(device, &[SIDE, SIDE], &image)?;
        let b = Stream::<f32>::new(device, &[SIDE, SIDE])?;
        let brook_blur = || {
            a.read(&image).expect("reset");
            for pass in 0..PASSES {
                let (from, to) = if pass % 2 == 0 { (&a, &b) } else { (&b, &a) };
                kernel.launch(args![from, to]).expect("blur");
            }
            a.finish().expect("finish");
        };
        brook_blur();
        assert_eq!(a.to_vec()?, expected, "{name}: results differ");
        let (brook, native) = measure(brook_blur, || {
            native_a.copy_from_slice(&image);
            native_blur(&mut native_a, &mut native_b, native_parallel)
        });
        rows.push(Row {
            what: if native_parallel {
                "blur 3x3 unrolled, 20 passes (rayon)".into()
            } else {
                "blur 3x3 for-loops, 20 passes (1 thread)".into()
            },
            brook,
            native,
            target: if native_parallel { 1.5 } else { 1.0 },
            flops: None,
        });
    }
    Ok(())
}
