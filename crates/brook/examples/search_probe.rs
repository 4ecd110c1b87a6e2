//! Runs the binary searches of `examples/kernels/binary_search.br` (seed 001's walk, the lower
//! bound, and the lower bound with splitters in shared memory) of 2^24 queries in 2^24 sorted
//! keys a few times each on the first GPU (for a profiler), as `gpu_bench` does:
//! `cargo run --release -p brook-lang --example search_probe [STRIDE...]`; each STRIDE (a
//! multiple of 256, default 98304) is a thread count for `staged_lower_bound`.
use brook::{args, Device, Program, Stream};
use std::time::Instant;

const SOURCE: &str = include_str!("../../../examples/kernels/binary_search.br");

fn main() -> Result<(), brook::Error> {
    let Some(device) = Device::all().into_iter().find(|d| d.type_name() == "cuda") else {
        println!("search_probe: no CUDA device");
        return Ok(());
    };
    let program = Program::from_source("examples/kernels/binary_search.br", SOURCE)?;
    let count = 1usize << 24;
    let keys: Vec<f32> = (0..count).map(|i| i as f32).collect();
    let queries: Vec<f32> = (0..count as u64)
        .map(|i| (i * 2_654_435_761 % count as u64) as f32 + if i % 2 == 0 { 0.0 } else { 0.5 })
        .collect();
    let keys = Stream::from_slice(&device, &[count], &keys)?;
    let queries = Stream::from_slice(&device, &[count], &queries)?;
    let found = Stream::<f32>::new(&device, &[count])?;
    for name in ["binary_search", "lower_bound"] {
        let kernel = program.kernel(name)?;
        for _ in 0..3 {
            let t = Instant::now();
            if name == "binary_search" {
                kernel.launch(args![&queries, &keys, &found, count as f32, 24i32])?;
            } else {
                kernel.launch(args![&queries, &keys, &found, count as i32])?;
            }
            found.finish()?;
            println!("{name} 2^24: {:.3} ms", t.elapsed().as_secs_f64() * 1e3);
        }
    }
    let mut strides: Vec<usize> = std::env::args()
        .skip(1)
        .map(|s| s.parse().expect("a thread count"))
        .collect();
    if strides.is_empty() {
        strides.push(98_304);
    }
    let step = (count / 4096) as i32;
    let splitters = Stream::<[f32; 4]>::new(&device, &[1024])?;
    let split = program.kernel("search_splitters")?;
    for stride in strides {
        let search = program
            .kernel("staged_lower_bound")?
            .with_domain(&[0], &[stride]);
        for _ in 0..3 {
            let t = Instant::now();
            split.launch(args![&keys, count as i32, step, &splitters])?;
            search.launch(args![
                &queries,
                &keys,
                &splitters,
                &found,
                count as i32,
                step,
                count as i32,
                stride as i32
            ])?;
            found.finish()?;
            let ms = t.elapsed().as_secs_f64() * 1e3;
            println!("staged_lower_bound over {stride} threads 2^24: {ms:.3} ms");
        }
    }
    Ok(())
}
