//! Measures the CUDA device on the operations of docs/PERFORMANCE.md and prints a table (and
//! writes the figures as JSON): `cargo run --release -p brook --example gpu_bench [-- out.json]`.
//! `bench/gpu_peers.py` measures the same operations with PyTorch and CuPy.
//!
//! Each time is the median of several runs of "launch, then wait for the GPU" after a warm-up
//! run, so module loading and the driver's JIT stay out of the figures (they are reported on
//! their own). Without a CUDA device the program says so and measures nothing.

use brook::{args, host_var, Device, Program, Stream};
use brook_codegen::abi::{InputMode, Variant};
use brook_codegen::ptx::{compile, Target};
use std::time::Instant;

const REPEATS: usize = 21;

const SOURCE: &str = r#"
kernel void saxpy(float a, float x<>, float y<>, out float r<>) { r = a * x + y; }
kernel void saxpy4(float4 a, float4 x<>, float4 y<>, out float4 r<>) { r = a * x + y; }
kernel void nothing(out float r<>) { r = 1.0f; }
reduce void sum(float a<>, reduce float s<>) { s += a; }
reduce void sum4(float4 a<>, reduce float4 s<>) { s += a; }
"#;

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// The median time of `run` in seconds, after one warm-up run.
fn measure(mut run: impl FnMut()) -> f64 {
    run();
    median(
        (0..REPEATS)
            .map(|_| {
                let start = Instant::now();
                run();
                start.elapsed().as_secs_f64()
            })
            .collect(),
    )
}

struct Row {
    what: String,
    ms: f64,
    /// Bytes moved through device memory (each input read once, each output written once).
    bytes: f64,
}

fn pseudo_random(n: usize, seed: u32) -> Vec<f32> {
    let mut state = seed.wrapping_mul(2654435761).max(1);
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state % 1000) as f32 / 100.0
        })
        .collect()
}

fn main() -> Result<(), brook::Error> {
    let Some(device) = Device::all().into_iter().find(|d| d.type_name() == "cuda") else {
        let why = brook::runtime::device::cuda_unavailable().unwrap_or("no GPU found");
        println!("gpu_bench: no CUDA device ({why}): nothing measured");
        return Ok(());
    };
    let json_path = std::env::args().nth(1);
    let program = Program::from_source("gpu_bench.br", SOURCE)?;
    let mut rows = Vec::new();

    // Device-to-device copy: the bandwidth ceiling.
    let n = 1usize << 26;
    let x = Stream::from_slice(&device, &[n], &pseudo_random(n, 1))?;
    let y = Stream::from_slice(&device, &[n], &pseudo_random(n, 2))?;
    let r = Stream::<f32>::new(&device, &[n])?;
    let copy = measure(|| {
        r.assign(&x).expect("copy");
        r.finish().expect("finish");
    });
    let copy_bytes = 2.0 * 4.0 * n as f64;
    rows.push(Row {
        what: "copy 2^26 floats (assign)".into(),
        ms: copy * 1e3,
        bytes: copy_bytes,
    });

    // First launch (PTX written, JIT-compiled by the driver) and cached launches.
    let saxpy = program.kernel("saxpy")?;
    let start = Instant::now();
    saxpy.launch(args![2.0f32, &x, &y, &r])?;
    r.finish()?;
    let first = start.elapsed().as_secs_f64();
    let t = measure(|| {
        saxpy.launch(args![2.0f32, &x, &y, &r]).expect("saxpy");
        r.finish().expect("finish");
    });
    rows.push(Row {
        what: "saxpy 2^26 float".into(),
        ms: t * 1e3,
        bytes: 12.0 * n as f64,
    });

    let n4 = 1usize << 26;
    let x4 = Stream::<[f32; 4]>::new(&device, &[n4])?;
    let y4 = Stream::<[f32; 4]>::new(&device, &[n4])?;
    let r4 = Stream::<[f32; 4]>::new(&device, &[n4])?;
    let saxpy4 = program.kernel("saxpy4")?;
    let t = measure(|| {
        saxpy4
            .launch(args![[2.0f32; 4], &x4, &y4, &r4])
            .expect("saxpy4");
        r4.finish().expect("finish");
    });
    rows.push(Row {
        what: "saxpy 2^26 float4".into(),
        ms: t * 1e3,
        bytes: 48.0 * n4 as f64,
    });

    // Sums into a host variable, in the canonical order.
    let sum = program.kernel("sum")?;
    let big = 1usize << 28;
    let values = Stream::from_slice(&device, &[big], &pseudo_random(big, 3))?;
    let mut total = 0.0f32;
    let t = measure(|| {
        sum.launch(args![&values, host_var(&mut total)])
            .expect("sum");
    });
    rows.push(Row {
        what: "sum 2^28 floats".into(),
        ms: t * 1e3,
        bytes: 4.0 * big as f64,
    });
    drop(values);
    let sum4 = program.kernel("sum4")?;
    let small = 1usize << 20;
    let v4 = Stream::<[f32; 4]>::new(&device, &[small])?;
    let mut total4 = [0.0f32; 4];
    let t = measure(|| {
        sum4.launch(args![&v4, host_var(&mut total4)])
            .expect("sum4");
    });
    rows.push(Row {
        what: "sum 2^20 float4".into(),
        ms: t * 1e3,
        bytes: 16.0 * small as f64,
    });

    // Row and column sums of an 8192x8192 matrix.
    let side = 8192usize;
    let m = Stream::from_slice(&device, &[side, side], &pseudo_random(side * side, 4))?;
    let rows_out = Stream::<f32>::new(&device, &[side])?;
    let cols_out = Stream::<f32>::new(&device, &[1, side])?;
    let t = measure(|| {
        sum.launch(args![&m, &rows_out]).expect("row sums");
        rows_out.finish().expect("finish");
    });
    rows.push(Row {
        what: "row sums 8192x8192".into(),
        ms: t * 1e3,
        bytes: 4.0 * (side * side) as f64,
    });
    let t = measure(|| {
        sum.launch(args![&m, &cols_out]).expect("column sums");
        cols_out.finish().expect("finish");
    });
    rows.push(Row {
        what: "column sums 8192x8192".into(),
        ms: t * 1e3,
        bytes: 4.0 * (side * side) as f64,
    });

    // Launch overhead: many launches of a one-element kernel, then one wait.
    let nothing = program.kernel("nothing")?;
    let one = Stream::<f32>::new(&device, &[1])?;
    let launches = 2000;
    let t = measure(|| {
        for _ in 0..launches {
            nothing.launch(args![&one]).expect("nothing");
        }
        one.finish().expect("finish");
    });
    let overhead_us = t / launches as f64 * 1e6;

    // PTX generation for saxpy.
    let index = program
        .module()
        .kernels
        .iter()
        .position(|k| k.name == "saxpy")
        .unwrap_or(0);
    let variant = Variant {
        rank: 1,
        inputs: vec![None, Some(InputMode::Direct), Some(InputMode::Direct), None],
        unit_stride: true,
    };
    let ptx_ms = median(
        (0..REPEATS)
            .map(|_| {
                let s = Instant::now();
                let _ = compile(program.module(), index, &variant, Target { sm: 90 });
                s.elapsed().as_secs_f64() * 1e3
            })
            .collect(),
    );

    println!("CUDA device {}, median of {REPEATS} runs", device.info());
    println!(
        "{:<30} {:>10} {:>10} {:>10}",
        "what", "ms", "GB/s", "% copy"
    );
    let copy_rate = copy_bytes / copy;
    let mut json = Vec::new();
    for row in &rows {
        let rate = row.bytes / (row.ms / 1e3);
        println!(
            "{:<30} {:>10.3} {:>10.0} {:>9.1}%",
            row.what,
            row.ms,
            rate / 1e9,
            100.0 * rate / copy_rate
        );
        json.push(format!(
            "{{\"what\": \"{}\", \"ms\": {:.4}, \"gbps\": {:.1}}}",
            row.what,
            row.ms,
            rate / 1e9
        ));
    }
    println!(
        "{:<30} {:>10.2} us",
        "launch overhead (1 element)", overhead_us
    );
    println!("{:<30} {:>10.3} ms", "PTX generation (saxpy)", ptx_ms);
    println!(
        "{:<30} {:>10.3} ms",
        "first saxpy launch (JIT)",
        first * 1e3
    );
    if let Some(path) = json_path {
        let text = format!(
            "{{\"device\": \"{}\", \"rows\": [{}], \"launch_overhead_us\": {overhead_us:.3}, \"ptx_generation_ms\": {ptx_ms:.4}, \"first_launch_ms\": {:.3}}}\n",
            device.info(),
            json.join(", "),
            first * 1e3
        );
        std::fs::write(&path, text).map_err(|e| brook::Error::Usage(format!("{path}: {e}")))?;
    }
    Ok(())
}
