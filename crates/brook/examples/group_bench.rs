//! Measures a device group against its first member alone and prints a table:
//! `cargo run --release -p brook-lang --example group_bench [-- SPEC] [--small]`.
//!
//! `SPEC` is a device spec as `BRT_RUNTIME` takes it (default `cuda:all`: every GPU). Each
//! operation runs on the first member alone and on the group, with the same data; the group's
//! results must be bit-identical to the single device's (else the program stops). Strong
//! scaling: the same size on both; weak: twice the size on the group. Times are host wall
//! clock over a batch of launches ending when the results are ready, the median of several
//! batches. `--small` uses small sizes (a quick check on a CPU: `-- cpu:0+cpu:0 --small`);
//! `--only WORD` runs the operations whose names contain WORD; `--detail` times the parts of a
//! split sum on their own.

use brook::{args, Device, Program, Stream};
use std::time::Instant;

const SOURCE: &str = r#"
kernel void saxpy(float a, float x<>, float y<>, out float r<>) { r = a * x + y; }
reduce void sum(float a<>, reduce float s<>) { s += a; }
kernel void stencil(float g[][], float w, float h, out float r<>)
{
    float2 p = indexof(r).xy;
    float left = g[float2(max(p.x - 1.0f, 0.0f), p.y)];
    float right = g[float2(min(p.x + 1.0f, w - 1.0f), p.y)];
    float up = g[float2(p.x, max(p.y - 1.0f, 0.0f))];
    float down = g[float2(p.x, min(p.y + 1.0f, h - 1.0f))];
    r = 0.2f * (g[p] + left + right + up + down);
}
"#;

const BATCHES: usize = 7;
const BATCH: usize = 10;

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Seconds per run of `run` (which queues work and returns the stream to wait for).
fn time_per_run(mut run: impl FnMut() -> Stream<f32>) -> f64 {
    run().finish().expect("warm-up");
    let samples = (0..BATCHES)
        .map(|_| {
            let start = Instant::now();
            let mut last = None;
            for _ in 0..BATCH {
                last = Some(run());
            }
            last.expect("a run").finish().expect("finish");
            start.elapsed().as_secs_f64() / BATCH as f64
        })
        .collect();
    median(samples)
}

fn pseudo_random(n: usize, seed: u32) -> Vec<f32> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            ((state >> 8) as f32 / (1u32 << 24) as f32 - 0.5) * 8.0
        })
        .collect()
}

/// One operation on a device: the time per run and the result's bits.
struct Run {
    seconds: f64,
    bits: Vec<u32>,
}

fn bits_of(s: &Stream<f32>) -> Vec<u32> {
    s.to_vec()
        .expect("result")
        .iter()
        .map(|v| v.to_bits())
        .collect()
}

fn saxpy(program: &Program, device: &Device, n: usize) -> Result<Run, brook::Error> {
    let kernel = program.kernel("saxpy")?;
    let x = Stream::from_slice(device, &[n], &pseudo_random(n, 1))?;
    let y = Stream::from_slice(device, &[n], &pseudo_random(n, 2))?;
    let r = Stream::<f32>::new(device, &[n])?;
    let seconds = time_per_run(|| {
        kernel.launch(args![2.0f32, &x, &y, &r]).expect("saxpy");
        r.clone()
    });
    Ok(Run {
        seconds,
        bits: bits_of(&r),
    })
}

fn sum(
    program: &Program,
    device: &Device,
    shape: &[usize],
    targets: &[usize],
) -> Result<Run, brook::Error> {
    let kernel = program.kernel("sum")?;
    let n: usize = shape.iter().product();
    let x = Stream::from_slice(device, shape, &pseudo_random(n, 3))?;
    let r = Stream::<f32>::new(device, targets)?;
    let seconds = time_per_run(|| {
        kernel.launch(args![&x, &r]).expect("sum");
        r.clone()
    });
    Ok(Run {
        seconds,
        bits: bits_of(&r),
    })
}

/// Two steps of a 5-point stencil per run (there and back).
fn stencil(
    program: &Program,
    device: &Device,
    side: usize,
    rows: usize,
) -> Result<Run, brook::Error> {
    let kernel = program.kernel("stencil")?;
    let a = Stream::from_slice(device, &[rows, side], &pseudo_random(rows * side, 4))?;
    let b = Stream::<f32>::new(device, &[rows, side])?;
    let (w, h) = (side as f32, rows as f32);
    let seconds = time_per_run(|| {
        kernel.launch(args![&a, w, h, &b]).expect("stencil");
        kernel.launch(args![&b, w, h, &a]).expect("stencil back");
        a.clone()
    }) / 2.0;
    Ok(Run {
        seconds,
        bits: bits_of(&a),
    })
}

/// What a split sum is made of, each on its own: a member's half, the combine of two
/// partials, and a one-element copy between the members.
fn detail(program: &Program, members: &[Device], n: usize) -> Result<(), brook::Error> {
    let (first, second) = (&members[0], &members[1]);
    let half = sum(program, first, &[n / 2], &[1])?;
    let whole = sum(program, first, &[n], &[1])?;
    let pair = sum(program, first, &[2], &[1])?;
    let rows = sum(program, first, &[32, n / 64], &[32])?;
    let more_rows = sum(program, first, &[64, n / 128], &[64])?;
    let there = Stream::from_slice(second, &[1], &[1.0f32])?;
    let here = Stream::<f32>::new(first, &[1])?;
    let copy = time_per_run(|| {
        here.assign(&there).expect("assign");
        here.clone()
    });
    for (what, seconds) in [
        ("sum of n alone", whole.seconds),
        ("sum of n/2 alone", half.seconds),
        ("sum of 2 alone", pair.seconds),
        ("n/2 as 32 row sums alone", rows.seconds),
        ("n/2 as 64 row sums alone", more_rows.seconds),
        ("one float between members", copy),
    ] {
        println!("{what:<48} {:>10.3} ms", seconds * 1e3);
    }
    Ok(())
}

fn main() -> Result<(), brook::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let small = args.iter().any(|a| a == "--small");
    // `--only WORD`: the operations whose names contain WORD.
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .cloned();
    let spec = args
        .iter()
        .enumerate()
        .find(|(i, a)| !a.starts_with("--") && (*i == 0 || args[i - 1] != "--only"))
        .map(|(_, a)| a)
        .cloned()
        .unwrap_or_else(|| "cuda:all".to_string());
    let gpus = Device::of_type("cuda").unwrap_or_default().len();
    let spec = match (spec.as_str(), gpus) {
        ("cuda:all", 0) => {
            println!(
                "group_bench: no CUDA device: nothing measured (try `-- cpu:0+cpu:0 --small`)"
            );
            return Ok(());
        }
        ("cuda:all", 1) => {
            println!("group_bench: one GPU: measuring cuda:0+cuda:0 (the path, not the scaling)");
            "cuda:0+cuda:0".to_string()
        }
        _ => spec,
    };
    let group = Device::from_spec(&spec)?;
    let members = group.members();
    if members.len() < 2 {
        return Err(brook::Error::Usage(format!(
            "{spec} is one device, not a group"
        )));
    }
    let single = members[0].clone();
    let program = Program::from_source("group_bench.br", SOURCE)?;
    let (n, side) = if small {
        (1usize << 20, 1024)
    } else {
        (1usize << 28, 16384)
    };
    let parts = members.len();
    if args.iter().any(|a| a == "--detail") {
        return detail(&program, &members, n);
    }
    println!(
        "group {} ({} members) against {} alone; host wall clock per run",
        group.info(),
        parts,
        single.info()
    );
    println!(
        "{:<48} {:>10} {:>10} {:>8}  bits",
        "operation", "1 dev ms", "group ms", "speedup"
    );
    type Op<'a> = Box<dyn Fn(&Device, usize) -> Result<Run, brook::Error> + 'a>;
    let ops: Vec<(String, Op)> = vec![
        (
            format!("saxpy 2^{}", n.trailing_zeros()),
            Box::new(|d, k| saxpy(&program, d, n * k)),
        ),
        (
            format!("sum 2^{}", n.trailing_zeros()),
            Box::new(|d, k| sum(&program, d, &[n * k], &[1])),
        ),
        (
            format!("row sums {side}x{side}"),
            Box::new(|d, k| sum(&program, d, &[side * k, side], &[side * k])),
        ),
        (
            format!("5-point stencil {side}^2 (per step)"),
            Box::new(|d, k| stencil(&program, d, side, side * k)),
        ),
    ];
    for (what, op) in &ops {
        if only
            .as_ref()
            .is_some_and(|word| !what.contains(word.as_str()))
        {
            continue;
        }
        let one = op(&single, 1)?;
        let many = op(&group, 1)?;
        let same = if one.bits == many.bits {
            "identical"
        } else {
            "DIFFER"
        };
        println!(
            "{:<48} {:>10.3} {:>10.3} {:>7.2}x  {same}",
            format!("{what}, strong"),
            one.seconds * 1e3,
            many.seconds * 1e3,
            one.seconds / many.seconds
        );
        if one.bits != many.bits {
            return Err(brook::Error::Usage(format!(
                "{what}: the group's result differs"
            )));
        }
        let weak = op(&group, parts)?;
        println!(
            "{:<48} {:>10.3} {:>10.3} {:>7.2}x  (efficiency)",
            format!("{what}, weak (x{parts} on the group)"),
            one.seconds * 1e3,
            weak.seconds * 1e3,
            one.seconds / weak.seconds
        );
    }
    Ok(())
}
