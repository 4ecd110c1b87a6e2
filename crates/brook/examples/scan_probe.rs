//! Scans a 2^28-float stream and 8192 rows of 8192 floats a few times on the first GPU (for a
//! profiler): `cargo run --release -p brook-lang --example scan_probe`.
use brook::{Device, Program, Stream};
use std::time::Instant;

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
        for _ in 0..3 {
            let t = Instant::now();
            sum.scan(&input, &output)?;
            output.finish()?;
            println!("{shape:?}: {:.3} ms", t.elapsed().as_secs_f64() * 1e3);
        }
    }
    Ok(())
}
