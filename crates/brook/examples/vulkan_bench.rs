//! The Vulkan device against CUDA on one GPU, in one run: saxpy, a whole-stream sum, row and
//! column sums, a whole-stream scan and the launch overhead, each timed on every device
//! chosen, with the outputs compared bit for bit between the devices (a fast wrong answer is
//! no figure). Prints a table with each Vulkan device's speed as a share of CUDA's.
//!
//! `cargo run --release -p brook-lang --example vulkan_bench [-- --small] [-- --software]`
//!
//! Devices: `cuda:0` when there is one, and every Vulkan GPU (`--software` adds a Vulkan
//! device on the CPU, lavapipe; `--small` shrinks the sizes 64 times, for such a device).
//! Times are on the host's clock, the same way for every device: the median of 15 samples,
//! each 10 runs of "launch" then a wait for the output, divided by 10; the first run of each
//! operation (pipeline creation, the driver's compiler) is not timed. A second table gives the
//! GPU's own clock for the same samples (timestamps around the 10 runs: the kernels and the
//! gaps between them, without the host's recording, submission and wake-up).

#[path = "common/data.rs"]
mod data;

use brook::{args, Device, Kernel, Program, Stream};
use data::pseudo_random;
use std::time::Instant;

const REPEATS: usize = 15;
const BATCH: usize = 10;

const SOURCE: &str = r#"
kernel void saxpy(float a, float x<>, float y<>, out float r<>) { r = a * x + y; }
kernel void nothing(out float r<>) { r = 1.0f; }
reduce void sum(float a<>, reduce float s<>) { s += a; }
"#;

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Seconds per run of `run` (which only queues work; `wait` waits for it) on the host's
/// clock, then on the GPU's (`None` where the device has no clock).
fn time(device: &Device, mut run: impl FnMut(), wait: impl Fn()) -> (f64, Option<f64>) {
    run();
    wait();
    let host = median(
        (0..REPEATS)
            .map(|_| {
                let start = Instant::now();
                (0..BATCH).for_each(|_| run());
                wait();
                start.elapsed().as_secs_f64() / BATCH as f64
            })
            .collect(),
    );
    let gpu: Option<Vec<f64>> = (0..REPEATS)
        .map(|_| {
            let took = device.gpu_time(|| (0..BATCH).for_each(|_| run()))?;
            Some(took.expect("the GPU clock").as_secs_f64() / BATCH as f64)
        })
        .collect();
    (host, gpu.map(median))
}

/// The sizes: elements of the 1-D operations and the side of the square matrix.
struct Sizes {
    n: usize,
    side: usize,
}

/// One operation's time on a device (the host's clock, the GPU's), and its output's bits
/// (to compare devices).
struct Measured {
    seconds: f64,
    gpu_seconds: Option<f64>,
    bits: Vec<u32>,
}

/// `run` (which queues `per_call` runs of an operation writing `out`) timed with a wait for
/// `out`, and `out`'s bits after.
fn measured(
    device: &Device,
    out: &Stream<f32>,
    per_call: usize,
    mut run: impl FnMut(),
) -> Result<Measured, brook::Error> {
    let wait = || out.finish().expect("the operation");
    let (seconds, gpu_seconds) = time(device, &mut run, wait);
    let bits = out.to_vec()?.into_iter().map(f32::to_bits).collect();
    Ok(Measured {
        seconds: seconds / per_call as f64,
        gpu_seconds: gpu_seconds.map(|s| s / per_call as f64),
        bits,
    })
}

/// Every operation on `device`, in the table's order.
fn measure(device: &Device, sizes: &Sizes) -> Result<Vec<Measured>, brook::Error> {
    let program = Program::from_source("vulkan_bench.br", SOURCE)?;
    let (saxpy, sum): (Kernel, Kernel) = (program.kernel("saxpy")?, program.kernel("sum")?);
    let n = sizes.n;
    let x = Stream::from_slice(device, &[n], &pseudo_random(n, 1))?;
    let y = Stream::from_slice(device, &[n], &pseudo_random(n, 2))?;
    let r = Stream::<f32>::new(device, &[n])?;
    let mut rows = vec![measured(device, &r, 1, || {
        saxpy.launch(args![2.0f32, &x, &y, &r]).expect("saxpy");
    })?];
    let total = Stream::<f32>::new(device, &[1])?;
    rows.push(measured(device, &total, 1, || {
        sum.launch(args![&x, &total]).expect("sum");
    })?);
    let side = sizes.side;
    let m = Stream::from_slice(device, &[side, side], &pseudo_random(side * side, 4))?;
    // Row sums into `[side]`, column sums into `[1, side]`.
    for out_shape in [vec![side], vec![1, side]] {
        let out = Stream::<f32>::new(device, &out_shape)?;
        rows.push(measured(device, &out, 1, || {
            sum.launch(args![&m, &out]).expect("row/column sums");
        })?);
    }
    let scanned = Stream::<f32>::new(device, &[n])?;
    rows.push(measured(device, &scanned, 1, || {
        sum.scan(&x, &scanned).expect("scan");
    })?);
    let nothing = program.kernel("nothing")?;
    let one = Stream::<f32>::new(device, &[1])?;
    let launches = 1000;
    rows.push(measured(device, &one, launches, || {
        for _ in 0..launches {
            nothing.launch(args![&one]).expect("nothing");
        }
    })?);
    Ok(rows)
}

fn main() -> Result<(), brook::Error> {
    let flags: Vec<String> = std::env::args().skip(1).collect();
    let small = flags.iter().any(|f| f == "--small");
    let software = flags.iter().any(|f| f == "--software");
    let sizes = match small {
        true => Sizes {
            n: 1 << 22,
            side: 1024,
        },
        false => Sizes {
            n: 1 << 28,
            side: 8192,
        },
    };
    let devices: Vec<Device> = Device::all()
        .into_iter()
        .filter(|d| match d.type_name() {
            "cuda" => d.info().ordinal == 0,
            "vulkan" => software || !d.info().description.contains("llvmpipe"),
            _ => false,
        })
        .collect();
    if !devices.iter().any(|d| d.type_name() == "vulkan") {
        println!("vulkan_bench: no Vulkan GPU (--software takes lavapipe): nothing measured");
        return Ok(());
    }
    let ops = [
        format!("saxpy 2^{} float", sizes.n.ilog2()),
        format!("sum 2^{} floats", sizes.n.ilog2()),
        format!("row sums {0}x{0}", sizes.side),
        format!("column sums {0}x{0}", sizes.side),
        format!("scan 2^{} floats (inclusive +)", sizes.n.ilog2()),
        "launch overhead (1 element)".to_string(),
    ];
    let mut results = Vec::new();
    for device in &devices {
        let started = Instant::now();
        let measured = measure(device, &sizes)?;
        let times: Vec<String> = measured
            .iter()
            .map(|m| format!("{:.3}", m.seconds * 1e3))
            .collect();
        println!(
            "{}: ms {} ({:.0} s with uploads and checks)",
            device.info(),
            times.join(" "),
            started.elapsed().as_secs_f64()
        );
        results.push(measured);
    }
    for (d, device) in devices.iter().enumerate().skip(1) {
        for (k, op) in ops.iter().enumerate() {
            assert!(
                results[d][k].bits == results[0][k].bits,
                "{op}: {} gives other bits than {}",
                device.info(),
                devices[0].info()
            );
        }
    }
    println!("outputs equal bit for bit on every device");
    println!("\nhost clock, median of {REPEATS} samples of {BATCH} runs:");
    print_table(&devices, &ops, &results, |m| Some(m.seconds));
    println!("\nGPU clock (timestamps around the same samples):");
    print_table(&devices, &ops, &results, |m| m.gpu_seconds);
    Ok(())
}

/// The table of `results` (a row per operation, a column per device, then each Vulkan
/// device's speed as a share of CUDA's) on the clock `seconds` reads.
fn print_table(
    devices: &[Device],
    ops: &[String],
    results: &[Vec<Measured>],
    seconds: impl Fn(&Measured) -> Option<f64>,
) {
    let mut header = format!("| {:<32} |", "operation");
    for device in devices {
        header.push_str(&format!(" {} |", device.info()));
    }
    let cuda = devices.iter().position(|d| d.type_name() == "cuda");
    if cuda.is_some() {
        header.push_str(" Vulkan speed / CUDA's |");
    }
    println!("{header}");
    println!(
        "|---|{}",
        "---|".repeat(devices.len() + usize::from(cuda.is_some()))
    );
    let shown =
        |s: Option<f64>, unit: f64| s.map_or("-".to_string(), |s| format!("{:.3}", s * unit));
    for (k, op) in ops.iter().enumerate() {
        let (unit, suffix) = if k == ops.len() - 1 {
            (1e6, "us")
        } else {
            (1e3, "ms")
        };
        let mut line = format!("| {op:<32} |");
        for r in results {
            line.push_str(&format!(" {} {suffix} |", shown(seconds(&r[k]), unit)));
        }
        if let Some(c) = cuda {
            let ratios: Vec<String> = devices
                .iter()
                .enumerate()
                .filter(|(_, d)| d.type_name() == "vulkan")
                .map(
                    |(v, _)| match (seconds(&results[c][k]), seconds(&results[v][k])) {
                        (Some(c), Some(v)) => format!("{:.0}%", 100.0 * c / v),
                        _ => "-".to_string(),
                    },
                )
                .collect();
            line.push_str(&format!(" {} |", ratios.join(", ")));
        }
        println!("{line}");
    }
}
