//! Measures the CPU device (Cranelift JIT over all cores) against native Rust with rayon, in
//! one run, and prints a table with the ratios:
//! `cargo run --release -p brook-lang --example cpu_bench`.
//!
//! - saxpy on 2^24 floats (memory-bound);
//! - Mandelbrot, 1024x1024, up to 256 iterations of a `while` loop with `break` (compute-bound);
//! - the sum of 2^24 floats (Brook: the canonical order; native: rayon's parallel sum);
//! - an inclusive scan of 2^24 floats (Brook: the canonical order, one compiled combine call
//!   per step; native: a sequential running sum, the order most code writes);
//! - a 3x3 box blur of a 1024x1024 image, 20 passes, with `for` loops over the taps and with
//!   the taps written out (native: the same loops, clamped at the edges, single-threaded as
//!   most C is written and with rayon);
//! - JIT compile time of the saxpy and Mandelbrot kernels.
//!
//! Each figure is the median of several runs after a warm-up run.

use brook::{args, host_var, Device, Program, Stream};
use rayon::prelude::*;
use std::hint::black_box;
use std::time::Instant;

const N: usize = 1 << 24;
const SIDE: usize = 1024;
const MAX_ITER: i32 = 256;
const REPEATS: usize = 9;

const SOURCE: &str = r#"
kernel void saxpy(float a, float x<>, float y<>, out float r<>) { r = a * x + y; }

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

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn time(f: &mut impl FnMut()) -> f64 {
    let start = Instant::now();
    f();
    start.elapsed().as_secs_f64()
}

/// Runs both once to warm up, then `REPEATS` times alternately (so that a slow spell of the
/// machine hits both); the medians in seconds.
fn measure(mut brook: impl FnMut(), mut native: impl FnMut()) -> (f64, f64) {
    brook();
    native();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..REPEATS {
        a.push(time(&mut brook));
        b.push(time(&mut native));
    }
    (median(a), median(b))
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

struct Row {
    what: &'static str,
    brook: f64,
    native: f64,
    target: f64,
}

fn main() -> Result<(), brook::Error> {
    let device = Device::find("cpu", 0)?;
    let program = Program::from_source("bench.br", SOURCE)?;
    let mut rows = Vec::new();

    // saxpy
    let saxpy = program.kernel("saxpy")?;
    let x: Vec<f32> = (0..N).map(|i| (i % 1000) as f32).collect();
    let y: Vec<f32> = (0..N).map(|i| (i % 777) as f32).collect();
    let xs = Stream::from_slice(&device, &[N], &x)?;
    let ys = Stream::from_slice(&device, &[N], &y)?;
    let rs = Stream::<f32>::new(&device, &[N])?;
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
    rows.push(Row {
        what: "saxpy, 2^24 floats",
        brook,
        native,
        target: 1.25,
    });

    // Mandelbrot
    let mandel = program.kernel("mandel")?;
    let counts = Stream::<i32>::new(&device, &[SIDE, SIDE])?;
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
    rows.push(Row {
        what: "Mandelbrot 1024x1024, 256 iterations",
        brook,
        native,
        target: 1.5,
    });

    // 3x3 blur, 20 passes (ping-pong between two streams)
    const PASSES: usize = 20;
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
        let a = Stream::from_slice(&device, &[SIDE, SIDE], &image)?;
        let b = Stream::<f32>::new(&device, &[SIDE, SIDE])?;
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
                "blur 3x3 unrolled, 20 passes (rayon)"
            } else {
                "blur 3x3 for-loops, 20 passes (1 thread)"
            },
            brook,
            native,
            target: if native_parallel { 1.5 } else { 1.0 },
        });
    }

    // sum
    let sum = program.kernel("sum")?;
    let ones: Vec<f32> = (0..N).map(|i| (i % 3) as f32).collect();
    let values = Stream::from_slice(&device, &[N], &ones)?;
    let mut total = 0.0f32;
    let mut native_total = 0.0f32;
    let (brook, native) = measure(
        || {
            sum.launch(args![&values, host_var(&mut total)])
                .expect("sum");
        },
        || native_total = black_box(&ones).par_iter().sum::<f32>(),
    );
    assert_eq!(total, native_total, "sums differ (both are exact here)");
    rows.push(Row {
        what: "sum, 2^24 floats",
        brook,
        native,
        target: 1.5,
    });

    // inclusive scan (exact here: small integers)
    let scanned = Stream::<f32>::new(&device, &[N])?;
    let mut native_scan = vec![0.0f32; N];
    let (brook, native) = measure(
        || {
            sum.scan(&values, &scanned).expect("scan");
            scanned.finish().expect("scan");
        },
        || {
            let mut acc = 0.0f32;
            for (out, x) in native_scan.iter_mut().zip(black_box(&ones)) {
                acc += x;
                *out = acc;
            }
        },
    );
    assert!(
        scanned.to_vec()? == native_scan,
        "scans differ (both are exact here)"
    );
    rows.push(Row {
        what: "inclusive scan, 2^24 floats",
        brook,
        native,
        target: 4.0,
    });

    println!(
        "CPU device ({}) vs native Rust + rayon, median of {REPEATS} runs",
        device.info()
    );
    println!(
        "{:<38} {:>12} {:>12} {:>8} {:>8}",
        "what", "brook (ms)", "native (ms)", "ratio", "target"
    );
    for row in &rows {
        println!(
            "{:<38} {:>12.3} {:>12.3} {:>8.2} {:>8}",
            row.what,
            row.brook * 1e3,
            row.native * 1e3,
            row.brook / row.native,
            format!("<= {}", row.target)
        );
    }
    for name in ["saxpy", "mandel", "sum"] {
        let kernel = program.kernel(name)?;
        let index = program
            .module()
            .kernels
            .iter()
            .position(|k| k.name == kernel.name())
            .unwrap_or(0);
        let rank = if name == "mandel" { 2 } else { 1 };
        let variant = brook_codegen::abi::Variant::plain(kernel.ir(), rank);
        let times: Vec<f64> = (0..REPEATS)
            .map(|_| {
                brook_codegen::cpu::compile(program.module(), index, &variant, &Default::default())
                    .map(|c| c.compile_time.as_secs_f64())
                    .unwrap_or(f64::NAN)
            })
            .collect();
        println!(
            "JIT compile of `{name}`: {:.3} ms (target <= 2 ms)",
            median(times) * 1e3
        );
    }
    Ok(())
}
