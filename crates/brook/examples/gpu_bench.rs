//! Measures the CUDA device on the operations of docs/PERFORMANCE.md and prints a table (and
//! writes the figures as JSON): `cargo run --release -p brook-lang --example gpu_bench [-- out.json]`.
//! `bench/gpu_peers.py` measures the same operations with PyTorch and CuPy.
//!
//! Each time is the median of several runs of "launch, then wait for the GPU" after a warm-up
//! run, so module loading and the driver's JIT stay out of the figures (they are reported on
//! their own). Without a CUDA device the program says so and measures nothing.

#[path = "common/blocked_matmul.rs"]
mod blocked_matmul;
#[path = "common/data.rs"]
mod data;

use blocked_matmul::quads;
use brook::{args, host_var, Device, Grid, LoomProgram, Program, Stream};
use brook_codegen::abi::Variant;
use brook_codegen::ptx::{compile, Target};
use brook_codegen::CodeTarget;
use data::pseudo_random;
use std::time::Instant;

const REPEATS: usize = 21;
/// Runs per sample of the fast operations.
const BATCH: usize = 10;

const SOURCE: &str = concat!(
    include_str!("../../../examples/kernels/gather_matmul.br"),
    include_str!("../../../examples/kernels/group_matmul.br"),
    include_str!("../../../examples/kernels/binary_search.br"),
    r#"
kernel void saxpy(float a, float x<>, float y<>, out float r<>) { r = a * x + y; }
kernel void saxpy4(float4 a, float4 x<>, float4 y<>, out float4 r<>) { r = a * x + y; }
kernel void widen(float x<>, out float4 r<>) { r = float4(x, x + 1.0f, x + 2.0f, x + 3.0f); }
kernel void nothing(out float r<>) { r = 1.0f; }
reduce void sum(float a<>, reduce float s<>) { s += a; }
reduce void sum4(float4 a<>, reduce float4 s<>) { s += a; }

"#
);

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Median times of `run` in seconds, after one warm-up run: on the GPU's clock (CUDA events
/// around the work, as the peers are timed) and on the host's (first launch to all finished).
/// `run` only queues work; [`Device::gpu_time`] waits for it.
struct Timing {
    gpu: f64,
    host: f64,
}

fn measure(device: &Device, run: impl FnMut()) -> Timing {
    measure_batched(device, BATCH, run)
}

/// [`measure`] with `batch` runs per sample (each sample's time divided by `batch`), which
/// spreads the host's hand-off before the first launch of a sample over the batch.
fn measure_batched(device: &Device, batch: usize, mut run: impl FnMut()) -> Timing {
    run();
    let mut gpu = Vec::with_capacity(REPEATS);
    let mut host = Vec::with_capacity(REPEATS);
    for _ in 0..REPEATS {
        let start = Instant::now();
        let t = device
            .gpu_time(|| (0..batch).for_each(|_| run()))
            .expect("a CUDA device has a GPU clock")
            .expect("GPU events");
        host.push(start.elapsed().as_secs_f64() / batch as f64);
        gpu.push(t.as_secs_f64() / batch as f64);
    }
    Timing {
        gpu: median(gpu),
        host: median(host),
    }
}

struct Row {
    what: String,
    time: Timing,
    /// Bytes moved through device memory (each input read once, each output written once).
    bytes: f64,
}

/// Stops the benchmark unless each of `count` sums equals the canonical tree over its run of
/// `len` leaves of `data` (the first at `first(k)`, the next `step` further), bit for bit: a
/// fast wrong answer is no figure.
fn check_sums(
    what: &str,
    got: &[f32],
    data: &[f32],
    count: usize,
    len: usize,
    first: impl Fn(usize) -> usize,
    step: usize,
) {
    for k in 0..count {
        let leaves: Vec<f32> = (0..len).map(|i| data[first(k) + i * step]).collect();
        let want = brook_ir::reduce_order::reduce_canonical(&leaves, &mut |a: &f32, b: &f32| a + b)
            .unwrap_or(0.0);
        assert_eq!(
            got[k].to_bits(),
            want.to_bits(),
            "{what}: result {k} is {}, the canonical sum is {want}",
            got[k]
        );
    }
}

/// LOOM block collectives (issue 20): a block reduce (one float per block) and a block scan
/// (one float per element) of `n` floats in blocks of 256, each its own kernel, checked
/// against the host.
fn loom_rows(device: &Device, x: &Stream<f32>, n: usize) -> Result<Vec<Row>, brook::Error> {
    const ADD: &str = "func add(x: Float32, y: Float32): Float32\n  return x + y\n\n";
    let reduce = LoomProgram::from_source(
        "reduce.loom",
        &format!("{ADD}kernel sums(in: Float32[THREADS], out: Float32[BLOCKS])\n  out[B] <- add /. in\n  return\n"),
    )?;
    let scan = LoomProgram::from_source(
        "scan.loom",
        &format!("{ADD}kernel scans(in: Float32[THREADS], out: Float32[THREADS])\n  out <- add /: in\n  return\n"),
    )?;
    let block = 256;
    let grid = Grid::one_d(n as u32, block as u32);
    let (reduce, scan) = (reduce.kernel(grid)?, scan.kernel(grid)?);
    let sums = Stream::<f32>::new(device, &[n / block])?;
    let scans = Stream::<f32>::new(device, &[n])?;
    reduce.launch(args![x, &sums])?;
    scan.launch(args![x, &scans])?;
    let data = x.to_vec()?;
    let got = sums.to_vec()?;
    check_sums(
        "LOOM block reduce",
        &got,
        &data,
        n / block,
        block,
        |k| k * block,
        1,
    );
    let scanned = scans.to_vec()?;
    for b in [0, n / block - 1] {
        let chunk = &data[b * block..(b + 1) * block];
        let v = brook_ir::collective::scan_canonical(chunk, true, &mut |a, b| a + b);
        for (l, want) in v.iter().enumerate() {
            assert_eq!(
                scanned[b * block + l].to_bits(),
                want.to_bits(),
                "LOOM block scan, block {b}, lane {l}"
            );
        }
    }
    let reduce_time = measure(device, || {
        reduce.launch(args![x, &sums]).expect("reduce");
    });
    let scan_time = measure(device, || {
        scan.launch(args![x, &scans]).expect("scan");
    });
    Ok(vec![
        Row {
            what: "LOOM block reduce 2^26 (256)".into(),
            time: reduce_time,
            bytes: 4.0 * (n + n / block) as f64,
        },
        Row {
            what: "LOOM block scan 2^26 (256)".into(),
            time: scan_time,
            bytes: 8.0 * n as f64,
        },
    ])
}

/// An inclusive `+` scan of `data` (shape `shape`, along the last axis), checked bit for bit
/// against `brook_ir::scan_order`'s serial executor on the host.
fn scan_row(
    program: &Program,
    device: &Device,
    what: &str,
    data: &[f32],
    shape: &[usize],
) -> Result<Row, brook::Error> {
    let sum = program.kernel("sum")?;
    let input = Stream::from_slice(device, shape, data)?;
    let output = Stream::<f32>::new(device, shape)?;
    sum.scan(&input, &output)?;
    let got = output.to_vec()?;
    let row = shape[shape.len() - 1];
    for (r, (chunk, found)) in data.chunks(row).zip(got.chunks(row)).enumerate() {
        let mut first_wrong = None;
        brook_ir::scan_order::scan_serial(
            chunk.iter().copied(),
            None,
            brook_ir::scan_order::ScanKind::Inclusive,
            &mut |a: &f32, b: &f32| a + b,
            &mut |i, want: Option<f32>| {
                if first_wrong.is_none() && want.map(f32::to_bits) != Some(found[i].to_bits()) {
                    first_wrong = Some((i, want));
                }
            },
        );
        if let Some((i, want)) = first_wrong {
            panic!(
                "{what}: row {r}, element {i} is {}, the canonical prefix {want:?}",
                found[i]
            );
        }
    }
    let time = measure(device, || {
        sum.scan(&input, &output).expect("scan");
    });
    Ok(Row {
        what: what.into(),
        time,
        bytes: 8.0 * data.len() as f64,
    })
}

fn main() -> Result<(), brook::Error> {
    let Some(device) = Device::all().into_iter().find(|d| d.type_name() == "cuda") else {
        let why = brook::raw::cuda_unavailable().unwrap_or("no GPU found");
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
    let copy = measure(&device, || {
        r.assign(&x).expect("copy");
    });
    let copy_bytes = 2.0 * 4.0 * n as f64;
    let copy_rate = copy_bytes / copy.gpu;
    rows.push(Row {
        what: "copy 2^26 floats (assign)".into(),
        time: Timing { ..copy },
        bytes: copy_bytes,
    });

    rows.extend(loom_rows(&device, &x, n)?);

    // First launch (PTX written, JIT-compiled by the driver) and cached launches.
    let saxpy = program.kernel("saxpy")?;
    let start = Instant::now();
    saxpy.launch(args![2.0f32, &x, &y, &r])?;
    r.finish()?;
    let first = start.elapsed().as_secs_f64();
    let t = measure(&device, || {
        saxpy.launch(args![2.0f32, &x, &y, &r]).expect("saxpy");
    });
    rows.push(Row {
        what: "saxpy 2^26 float".into(),
        time: t,
        bytes: 12.0 * n as f64,
    });

    let n4 = 1usize << 26;
    let x4 = Stream::<[f32; 4]>::new(&device, &[n4])?;
    let y4 = Stream::<[f32; 4]>::new(&device, &[n4])?;
    let r4 = Stream::<[f32; 4]>::new(&device, &[n4])?;
    let widen = program.kernel("widen")?;
    widen.launch(args![&x, &x4])?;
    widen.launch(args![&y, &y4])?;
    let saxpy4 = program.kernel("saxpy4")?;
    let t = measure(&device, || {
        saxpy4
            .launch(args![[2.0f32; 4], &x4, &y4, &r4])
            .expect("saxpy4");
    });
    rows.push(Row {
        what: "saxpy 2^26 float4".into(),
        time: t,
        bytes: 48.0 * n4 as f64,
    });

    // Sums into a host variable, in the canonical order.
    let sum = program.kernel("sum")?;
    let big = 1usize << 28;
    let big_data = pseudo_random(big, 3);
    let values = Stream::from_slice(&device, &[big], &big_data)?;
    // Into a one-element stream: the figure is the reduction, not a read-back.
    let total = Stream::<f32>::new(&device, &[1])?;
    let t = measure(&device, || {
        sum.launch(args![&values, &total]).expect("sum");
    });
    rows.push(Row {
        what: "sum 2^28 floats".into(),
        time: t,
        bytes: 4.0 * big as f64,
    });
    check_sums(
        "sum 2^28 floats",
        &total.to_vec()?,
        &big_data,
        1,
        big,
        |_| 0,
        1,
    );
    rows.push(scan_row(
        &program,
        &device,
        "scan 2^28 floats (inclusive +)",
        &big_data,
        &[big],
    )?);
    drop(big_data);
    let mut scalar = 0.0f32;
    let t = measure_batched(&device, 1, || {
        sum.launch(args![&values, host_var(&mut scalar)])
            .expect("sum to a host float");
    });
    rows.push(Row {
        what: "sum 2^28 floats to host".into(),
        time: t,
        bytes: 4.0 * big as f64,
    });
    drop(values);
    let sum4 = program.kernel("sum4")?;
    let small = 1usize << 20;
    let v4 = Stream::<[f32; 4]>::new(&device, &[small])?;
    widen.launch(args![&x, &v4])?;
    let total4 = Stream::<[f32; 4]>::new(&device, &[1])?;
    let t = measure(&device, || {
        sum4.launch(args![&v4, &total4]).expect("sum4");
    });
    rows.push(Row {
        what: "sum 2^20 float4".into(),
        time: t,
        bytes: 16.0 * small as f64,
    });

    // Row and column sums of an 8192x8192 matrix.
    let side = 8192usize;
    let matrix = pseudo_random(side * side, 4);
    let m = Stream::from_slice(&device, &[side, side], &matrix)?;
    let rows_out = Stream::<f32>::new(&device, &[side])?;
    let cols_out = Stream::<f32>::new(&device, &[1, side])?;
    let t = measure(&device, || {
        sum.launch(args![&m, &rows_out]).expect("row sums");
    });
    rows.push(Row {
        what: "row sums 8192x8192".into(),
        time: t,
        bytes: 4.0 * (side * side) as f64,
    });
    let t = measure(&device, || {
        sum.launch(args![&m, &cols_out]).expect("column sums");
    });
    rows.push(Row {
        what: "column sums 8192x8192".into(),
        time: t,
        bytes: 4.0 * (side * side) as f64,
    });
    let (rows_got, cols_got) = (rows_out.to_vec()?, cols_out.to_vec()?);
    check_sums("row sums", &rows_got, &matrix, side, side, |k| k * side, 1);
    check_sums("column sums", &cols_got, &matrix, side, side, |k| k, side);
    drop((m, rows_out, cols_out));
    rows.push(scan_row(
        &program,
        &device,
        "row scans 8192x8192 (inclusive +)",
        &matrix,
        &[side, side],
    )?);
    drop(matrix);

    let compute = compute_rows(&program, &device)?;

    // Launch overhead: many launches of a one-element kernel, then one wait.
    let nothing = program.kernel("nothing")?;
    let one = Stream::<f32>::new(&device, &[1])?;
    let launches = 2000;
    let t = measure(&device, || {
        for _ in 0..launches {
            nothing.launch(args![&one]).expect("nothing");
        }
        one.finish().expect("finish");
    });
    let overhead_us = t.host / launches as f64 * 1e6;
    // The caller's share: how long a launch call takes to return (the device's worker
    // thread issues it to the driver meanwhile).
    let call_us = median(
        (0..REPEATS)
            .map(|_| {
                let start = Instant::now();
                for _ in 0..launches {
                    nothing.launch(args![&one]).expect("nothing");
                }
                let calls = start.elapsed().as_secs_f64();
                one.finish().expect("finish");
                calls / launches as f64 * 1e6
            })
            .collect(),
    );

    // PTX generation for saxpy.
    let index = program
        .module()
        .kernels
        .iter()
        .position(|k| k.name == "saxpy")
        .unwrap_or(0);
    let variant = Variant::plain(&program.module().kernels[index], 1);
    let target = match device.info().target {
        Some(CodeTarget::Ptx(target)) => target,
        _ => Target::DEFAULT,
    };
    let ptx_ms = median(
        (0..REPEATS)
            .map(|_| {
                let s = Instant::now();
                let _ = compile(program.module(), index, &variant, &target);
                s.elapsed().as_secs_f64() * 1e3
            })
            .collect(),
    );

    println!(
        "CUDA device {}, median of {REPEATS} runs; ms on the GPU clock (CUDA events), host ms from launch to finished",
        device.info()
    );
    println!(
        "{:<30} {:>10} {:>10} {:>10} {:>10}",
        "what", "ms", "host ms", "GB/s", "% copy"
    );
    let mut json = Vec::new();
    for row in &rows {
        let rate = row.bytes / row.time.gpu;
        println!(
            "{:<30} {:>10.3} {:>10.3} {:>10.0} {:>9.1}%",
            row.what,
            row.time.gpu * 1e3,
            row.time.host * 1e3,
            rate / 1e9,
            100.0 * rate / copy_rate
        );
        json.push(format!(
            "{{\"what\": \"{}\", \"ms\": {:.4}, \"host_ms\": {:.4}, \"gbps\": {:.1}}}",
            row.what,
            row.time.gpu * 1e3,
            row.time.host * 1e3,
            rate / 1e9
        ));
    }
    for (what, time, rate, unit) in &compute {
        let (ms, host) = (time.gpu * 1e3, time.host * 1e3);
        println!("{what:<30} {ms:>10.3} {host:>10.3} {rate:>10.1} {unit}");
        json.push(format!(
            "{{\"what\": \"{what}\", \"ms\": {ms:.4}, \"host_ms\": {host:.4}, \"{unit}\": {rate:.2}}}"
        ));
    }
    println!(
        "{:<30} {:>10.2} us",
        "launch overhead (1 element)", overhead_us
    );
    println!("{:<30} {:>10.2} us", "  of which the call returns", call_us);
    println!("{:<30} {:>10.3} ms", "PTX generation (saxpy)", ptx_ms);
    println!(
        "{:<30} {:>10.3} ms",
        "first saxpy launch (JIT)",
        first * 1e3
    );
    if let Some(path) = json_path {
        let text = format!(
            "{{\"device\": \"{}\", \"rows\": [{}], \"launch_overhead_us\": {overhead_us:.3}, \"launch_call_us\": {call_us:.3}, \"ptx_generation_ms\": {ptx_ms:.4}, \"first_launch_ms\": {:.3}}}\n",
            device.info(),
            json.join(", "),
            first * 1e3
        );
        std::fs::write(&path, text).map_err(|e| brook::Error::Usage(format!("{path}: {e}")))?;
    }
    Ok(())
}

/// Matrix multiplies (GFLOP/s) and binary search (G keys/s): (what, times, rate, unit).
fn compute_rows(
    program: &Program,
    device: &Device,
) -> Result<Vec<(String, Timing, f64, &'static str)>, brook::Error> {
    let mut rows = Vec::new();
    let n = 4096usize;
    let a = pseudo_random(n * n, 5);
    let b = pseudo_random(n * n, 6);
    let flops = 2.0 * (n as f64).powi(3);
    // The simple multiply: one thread per element of C, gathering a row of A and a column of B.
    let sa = Stream::from_slice(device, &[n, n], &a)?;
    let sb = Stream::from_slice(device, &[n, n], &b)?;
    let sc = Stream::<f32>::new(device, &[n, n])?;
    let simple = program.kernel("simple_matmult")?;
    let t = measure_batched(device, 1, || {
        simple
            .launch(args![n as f32, &sa, &sb, &sc])
            .expect("simple_matmult");
    });
    let c = sc.to_vec()?;
    check_product(&a, &b, n, |i, j| c[i * n + j], "simple_matmult");
    let rate = flops / t.gpu / 1e9;
    rows.push((
        "simple gather matmul 4096^3".to_string(),
        t,
        rate,
        "GFLOP/s",
    ));
    drop((sa, sb, sc));
    // The 8x4-blocked multiply.
    let a_parts: Vec<Stream<[f32; 4]>> = (0..8)
        .map(|i| Stream::from_slice(device, &[n / 8, n / 4], &quads(&a, n, n / 8, 8, i)))
        .collect::<Result<_, _>>()?;
    let b_parts: Vec<Stream<[f32; 4]>> = (0..4)
        .map(|j| Stream::from_slice(device, &[n / 4, n / 4], &quads(&b, n, n / 4, 4, j)))
        .collect::<Result<_, _>>()?;
    let c_parts: Vec<Stream<[f32; 4]>> = (0..8)
        .map(|_| Stream::new(device, &[n / 8, n / 4]))
        .collect::<Result<_, _>>()?;
    let blocked = program.kernel("optimized_matmult")?;
    let t = measure_batched(device, 1, || {
        blocked_matmul::launch(&blocked, n, &a_parts, &b_parts, &c_parts)
            .expect("optimized_matmult");
    });
    let c: Vec<Vec<[f32; 4]>> = c_parts
        .iter()
        .map(Stream::to_vec)
        .collect::<Result<_, _>>()?;
    check_product(
        &a,
        &b,
        n,
        |i, j| c[i % 8][(i / 8) * (n / 4) + j / 4][j % 4],
        "optimized_matmult",
    );
    let rate = flops / t.gpu / 1e9;
    rows.push(("8x4-blocked matmul 4096^3".to_string(), t, rate, "GFLOP/s"));
    drop((a_parts, b_parts, c_parts));
    rows.extend(group_tiled_rows(program, device, (&a, &b, n), flops)?);
    rows.extend(search_rows(program, device)?);
    Ok(rows)
}

/// Binary searches of 2^24 queries (half of them present) in 2^24 sorted keys
/// (`examples/kernels/binary_search.br`): seed 001's walk, a lower bound as
/// `torch.searchsorted` walks; each result checked.
fn search_rows(
    program: &Program,
    device: &Device,
) -> Result<Vec<(String, Timing, f64, &'static str)>, brook::Error> {
    let count = 1usize << 24;
    let keys: Vec<f32> = (0..count).map(|i| i as f32).collect();
    let queries: Vec<f32> = (0..count as u64)
        .map(|i| (i * 2_654_435_761 % count as u64) as f32 + if i % 2 == 0 { 0.0 } else { 0.5 })
        .collect();
    let sk = Stream::from_slice(device, &[count], &keys)?;
    let sq = Stream::from_slice(device, &[count], &queries)?;
    let found = Stream::<f32>::new(device, &[count])?;
    let forms = [
        ("binary_search", "binary search 2^24 keys"),
        ("lower_bound", "binary search, lower bound"),
    ];
    let mut rows = Vec::new();
    for (name, what) in forms {
        let kernel = program.kernel(name)?;
        let t = measure(device, || {
            let launched = if name == "binary_search" {
                kernel.launch(args![&sq, &sk, &found, count as f32, 24i32])
            } else {
                kernel.launch(args![&sq, &sk, &found, count as i32])
            };
            launched.expect(name);
        });
        let at = found.to_vec()?;
        for i in (0..count).step_by(9973) {
            let want = if queries[i].fract() == 0.0 {
                queries[i]
            } else {
                -1.0
            };
            assert_eq!(at[i], want, "{name} of {}", queries[i]);
        }
        let rate = count as f64 / t.gpu / 1e9;
        rows.push((what.to_string(), t, rate, "Gkeys/s"));
    }
    rows.push(staged_search_row(
        program,
        device,
        (&sk, &sq, &found),
        &queries,
    )?);
    Ok(rows)
}

/// The lower bound with 4096 splitters staged in each group's shared memory, 98304 threads
/// looping over the queries (`search_splitters`, then `staged_lower_bound`, both timed), each
/// result checked.
fn staged_search_row(
    program: &Program,
    device: &Device,
    (keys, queries, found): (&Stream<f32>, &Stream<f32>, &Stream<f32>),
    query_values: &[f32],
) -> Result<(String, Timing, f64, &'static str), brook::Error> {
    let count = query_values.len();
    let step = count.div_ceil(4096) as i32;
    // About 750 threads per SM of an H100 (fewer searches in flight than a thread each).
    let stride = 98_304;
    let splitters = Stream::<[f32; 4]>::new(device, &[1024])?;
    let split = program.kernel("search_splitters")?;
    let search = program
        .kernel("staged_lower_bound")?
        .with_domain(&[0], &[stride]);
    found.read(&vec![0.0; count])?;
    let t = measure(device, || {
        split
            .launch(args![keys, count as i32, step, &splitters])
            .expect("search_splitters");
        search
            .launch(args![
                queries,
                keys,
                &splitters,
                found,
                count as i32,
                step,
                count as i32,
                stride as i32
            ])
            .expect("staged_lower_bound");
    });
    let at = found.to_vec()?;
    for i in (0..count).step_by(9973) {
        let q = query_values[i];
        let want = if q.fract() == 0.0 { q } else { -1.0 };
        assert_eq!(at[i], want, "staged_lower_bound of {q}");
    }
    let rate = count as f64 / t.gpu / 1e9;
    Ok((
        "binary search, splitters in shared memory".to_string(),
        t,
        rate,
        "Gkeys/s",
    ))
}

/// The Brook+ thread-group multiplies of `examples/kernels/group_matmul.br`, A, B and C as
/// rows of float4s: `tiled_matmul` (C = 0 + A B, a float4 of C a thread) and the
/// register-blocked `tiled_matmul_128` (128 x 128 tiles of C, 8 x 8 sums a thread, `fma`).
fn group_tiled_rows(
    program: &Program,
    device: &Device,
    (a, b, n): (&[f32], &[f32], usize),
    flops: f64,
) -> Result<Vec<(String, Timing, f64, &'static str)>, brook::Error> {
    let rows_of_quads =
        |m: &[f32]| -> Vec<[f32; 4]> { m.chunks(4).map(|q| [q[0], q[1], q[2], q[3]]).collect() };
    let sa = Stream::from_slice(device, &[n, n / 4], &rows_of_quads(a))?;
    let sb = Stream::from_slice(device, &[n, n / 4], &rows_of_quads(b))?;
    let sc = Stream::<[f32; 4]>::new(device, &[n, n / 4])?;
    let seed = Stream::from_slice(device, &[n * n / 4], &vec![[0.0f32; 4]; n * n / 4])?;
    let tiled = program.kernel("tiled_matmul")?;
    let blocked = program
        .kernel("tiled_matmul_128")?
        .with_domain(&[0], &[n * n / 64]);
    let quads = (n / 4) as i32;
    let product = (a, b, n, flops);
    Ok(vec![
        product_row(
            device,
            product,
            &sc,
            "GroupSize-tiled matmul 4096^3",
            || {
                tiled
                    .launch(args![(n / 4) as f32, &sa, &sb, &seed, &sc])
                    .expect("tiled_matmul");
            },
        )?,
        product_row(
            device,
            product,
            &sc,
            "GroupSize 128x128-tiled matmul (fma) 4096^3",
            || {
                blocked
                    .launch(args![quads, quads, &sa, &sb, &sc])
                    .expect("tiled_matmul_128");
            },
        )?,
    ])
}

/// Times `launch`, which writes the product of `a` and `b` (n x n) into `c` as rows of
/// float4s, and checks a few of its elements.
fn product_row(
    device: &Device,
    (a, b, n, flops): (&[f32], &[f32], usize, f64),
    c: &Stream<[f32; 4]>,
    what: &str,
    launch: impl FnMut(),
) -> Result<(String, Timing, f64, &'static str), brook::Error> {
    let t = measure_batched(device, 1, launch);
    let c = c.to_vec()?;
    check_product(a, b, n, |i, j| c[i * (n / 4) + j / 4][j % 4], what);
    let rate = flops / t.gpu / 1e9;
    Ok((what.to_string(), t, rate, "GFLOP/s"))
}

/// Checks a few elements of a product against the host.
fn check_product(a: &[f32], b: &[f32], n: usize, c: impl Fn(usize, usize) -> f32, what: &str) {
    for (i, j) in [(0, 0), (1, 2), (n - 1, n - 1), (777, 3001), (4000, 5)] {
        let want: f64 = (0..n)
            .map(|k| f64::from(a[i * n + k]) * f64::from(b[k * n + j]))
            .sum();
        let got = f64::from(c(i, j));
        assert!(
            (got - want).abs() <= 1e-4 * want.abs().max(1.0),
            "{what}: C[{i}][{j}] = {got}, expected {want}"
        );
    }
}
