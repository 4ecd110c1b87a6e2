//! Scans a 2^28-float stream and 8192 rows of 8192 floats on the first GPU (for a profiler),
//! printing the median of 11 samples of 10 scans on the GPU clock, as `gpu_bench` times them:
//! `cargo run --release -p brook-lang --example scan_probe`.
use brook::{Device, Program, Stream};

fn main() -> Result<(), brook::Error> {
    let Some(device) = Device::all().into_iter().find(|d| d.type_name() == "cuda") else {
        println!("scan_probe: no CUDA device");
        return Ok(());
    };
    let program = Program::from_source(
        "s.br",
        "reduce void sum(float a<>, reduce float s<>) { s += a; }",
    )?;
    let sum = program.kernel("sum")?;
    for shape in [vec![1usize << 28], vec![8192, 8192]] {
        let n: usize = shape.iter().product();
        let data: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.01).collect();
        let input = Stream::from_slice(&device, &shape, &data)?;
        let output = Stream::<f32>::new(&device, &shape)?;
        let run = || sum.scan(&input, &output).map(|_| ());
        run()?;
        let mut times = Vec::new();
        for _ in 0..11 {
            let mut result = Ok(());
            let t = device
                .gpu_time(|| result = (0..10).try_for_each(|_| run()))
                .expect("a CUDA device has a GPU clock")?;
            result?;
            times.push(t.as_secs_f64() / 10.0);
        }
        times.sort_by(f64::total_cmp);
        println!("{shape:?}: {:.3} ms", times[5] * 1e3);
    }
    Ok(())
}
