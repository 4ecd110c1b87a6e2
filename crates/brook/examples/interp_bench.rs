//! Measures the reference interpreter on a 2^20-element saxpy and prints a table, with a plain
//! Rust loop on one core for scale. `cargo run --release -p brook-lang --example interp_bench`.

use brook::{args, Device, Program, Stream};
use std::time::Instant;

const ELEMENTS: usize = 1 << 20;
const REPEATS: usize = 5;

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn main() -> Result<(), brook::Error> {
    let program = Program::from_source(
        "saxpy.br",
        "kernel void saxpy(float a, float x<>, float y<>, out float r<>) { r = a * x + y; }",
    )?;
    let kernel = program.kernel("saxpy")?;
    let device = Device::interp();
    let x: Vec<f32> = (0..ELEMENTS).map(|i| i as f32).collect();
    let y: Vec<f32> = (0..ELEMENTS).map(|i| (ELEMENTS - i) as f32).collect();
    let xs = Stream::from_slice(&device, &[ELEMENTS], &x)?;
    let ys = Stream::from_slice(&device, &[ELEMENTS], &y)?;
    let rs = Stream::<f32>::new(&device, &[ELEMENTS])?;

    let mut launch_times = Vec::new();
    for _ in 0..REPEATS {
        let start = Instant::now();
        kernel.launch(args![2.0f32, &xs, &ys, &rs])?;
        rs.finish()?; // launches are queued: wait for this one
        launch_times.push(start.elapsed().as_secs_f64());
    }
    let mut host = vec![0.0f32; ELEMENTS];
    let mut copy_times = Vec::new();
    for _ in 0..REPEATS {
        let start = Instant::now();
        xs.read(&x)?;
        rs.write(&mut host)?;
        copy_times.push(start.elapsed().as_secs_f64());
    }
    let mut native_times = Vec::new();
    for _ in 0..REPEATS {
        let start = Instant::now();
        for ((r, x), y) in host.iter_mut().zip(&x).zip(&y) {
            *r = std::hint::black_box(2.0f32) * x + y;
        }
        std::hint::black_box(&host);
        native_times.push(start.elapsed().as_secs_f64());
    }
    let expected: Vec<f32> = x.iter().zip(&y).map(|(x, y)| 2.0 * x + y).collect();
    assert_eq!(rs.to_vec()?, expected);

    println!("saxpy, {ELEMENTS} float elements, median of {REPEATS} runs");
    println!("{:<34} {:>12} {:>16}", "what", "time (ms)", "elements/s");
    for (name, times) in [
        ("interp launch", launch_times),
        ("stream read + write (8 MiB)", copy_times),
        ("plain Rust loop, one core", native_times),
    ] {
        let t = median(times);
        println!(
            "{name:<34} {:>12.3} {:>16.3e}",
            t * 1e3,
            ELEMENTS as f64 / t
        );
    }
    Ok(())
}
