//! Measures the CPU device (Cranelift JIT over all cores, kernels in SIMD gangs) against native
//! Rust in one run, and prints a table with the ratios:
//! `cargo run --release -p brook-lang --example cpu_bench [NAME ...]` (only the rows whose
//! names contain one of the NAMEs; `BROOK_SPMD=off` runs one instance at a time, to compare).
//!
//! - [`maps`]: saxpy on 2^24 floats and on 2^22 `float4`s (memory-bound); Mandelbrot, 1024x1024,
//!   up to 256 iterations of a `while` loop with `break` (compute-bound, lanes diverge); a 3x3
//!   box blur of a 1024x1024 image, 20 passes, with `for` loops over the taps and with the taps
//!   written out (native: the same loops, clamped at the edges, single-threaded as most C is
//!   written and with rayon);
//! - [`groups`]: a thread-group kernel of Brook+ (`GroupSize(64)`, neighbours through a
//!   `shared` array) on 2^22 elements, beside the same per-group loop with rayon; a scatter
//!   through a permutation of 2^22 elements, beside rayon writing through it;
//! - [`matmul`]: seed 001's simple gather matrix multiply and its 8x4-blocked form, 1024^3, in
//!   GFLOP/s beside native Rust loops with rayon computing the same sums in the same order;
//! - [`reductions`]: the sum of 2^24 floats (Brook: the canonical order; native: rayon's sum),
//!   a reduction of 2^24 `uint`s with an integer-mix combine (native: the same canonical tree
//!   with rayon), an inclusive scan of 2^24 floats (native: a sequential running sum) and
//!   row scans of 4096x4096 floats (native: a running sum per row, rows with rayon);
//! - JIT compile time of the saxpy, Mandelbrot and sum kernels, and the launch overhead of a
//!   one-element kernel.
//!
//! Each figure is the median of several runs after a warm-up run; every Brook result is
//! checked against the native one.

#[path = "../common/blocked_matmul.rs"]
mod blocked_matmul;
mod groups;
mod maps;
mod matmul;
mod reductions;

use brook::{Device, Program, Stream};
use std::time::Instant;

const REPEATS: usize = 9;

/// One row of the table.
pub struct Row {
    pub what: String,
    pub brook: f64,
    pub native: f64,
    /// The largest Brook/native time ratio aimed at.
    pub target: f64,
    /// Floating-point operations of one run, for a GFLOP/s column.
    pub flops: Option<f64>,
}

/// Which rows run: those whose names contain one of the command line's words (all without).
pub struct Filter(Vec<String>);

impl Filter {
    pub fn wants(&self, name: &str) -> bool {
        self.0.is_empty() || self.0.iter().any(|w| name.contains(w.as_str()))
    }
}

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn time(f: &mut impl FnMut()) -> f64 {
    let start = Instant::now();
    f();
    start.elapsed().as_secs_f64()
}

/// Runs both once to warm up, then `repeats` times alternately (so that a slow spell of the
/// machine hits both); the medians in seconds.
pub fn measure_n(repeats: usize, mut brook: impl FnMut(), mut native: impl FnMut()) -> (f64, f64) {
    brook();
    native();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..repeats {
        a.push(time(&mut brook));
        b.push(time(&mut native));
    }
    (median(a), median(b))
}

pub fn measure(brook: impl FnMut(), native: impl FnMut()) -> (f64, f64) {
    measure_n(REPEATS, brook, native)
}

fn print_table(device: &Device, rows: &[Row]) {
    println!(
        "CPU device ({}) vs native Rust + rayon, median of {REPEATS} runs",
        device.info()
    );
    println!(
        "{:<42} {:>11} {:>11} {:>7} {:>8} {:>16}",
        "what", "brook (ms)", "native (ms)", "ratio", "target", "GFLOP/s b / n"
    );
    for row in rows {
        let rates = row.flops.map_or(String::new(), |f| {
            format!("{:.2} / {:.2}", f / row.brook / 1e9, f / row.native / 1e9)
        });
        println!(
            "{:<42} {:>11.3} {:>11.3} {:>7.2} {:>8} {:>16}",
            row.what,
            row.brook * 1e3,
            row.native * 1e3,
            row.brook / row.native,
            format!("<= {}", row.target),
            rates
        );
    }
}

/// The median JIT compile time of each named kernel of `program` (rank 2 for `mandel`).
fn compile_times(program: &Program, names: &[&str]) -> Result<(), brook::Error> {
    for &name in names {
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

/// Launch overhead: many launches of `saxpy` over one element, then one wait (the figure per
/// launch is the median of several such runs).
fn launch_overhead(program: &Program, device: &Device) -> Result<(), brook::Error> {
    const LAUNCHES: usize = 20_000;
    let saxpy = program.kernel("saxpy")?;
    let one = || Stream::from_slice(device, &[1], &[1.0f32]);
    let (xs, ys, rs) = (one()?, one()?, one()?);
    let mut run = || {
        for _ in 0..LAUNCHES {
            saxpy
                .launch(brook::args![2.0f32, &xs, &ys, &rs])
                .expect("saxpy");
        }
        rs.finish().expect("saxpy");
    };
    run();
    let times: Vec<f64> = (0..REPEATS).map(|_| time(&mut run)).collect();
    println!(
        "launch overhead (1 element, {LAUNCHES} launches then one wait): {:.2} us a launch",
        median(times) / LAUNCHES as f64 * 1e6
    );
    Ok(())
}

fn main() -> Result<(), brook::Error> {
    let filter = Filter(std::env::args().skip(1).collect());
    let device = Device::find("cpu", 0)?;
    let program = Program::from_source("bench.br", maps::SOURCE)?;
    let mut rows = Vec::new();
    maps::rows(&program, &device, &filter, &mut rows)?;
    groups::rows(&device, &filter, &mut rows)?;
    groups::scatter_rows(&device, &filter, &mut rows)?;
    matmul::rows(&device, &filter, &mut rows)?;
    reductions::rows(&program, &device, &filter, &mut rows)?;
    print_table(&device, &rows);
    if filter.wants("JIT") {
        compile_times(&program, &["saxpy", "mandel", "sum"])?;
    }
    if filter.wants("launch") {
        launch_overhead(&program, &device)?;
    }
    Ok(())
}
