use brook::{args, Device, Program, Stream};
use std::time::Instant;
fn main() -> Result<(), brook::Error> {
    let program = Program::from_source("n.br", "kernel void nothing(out float r<>) { r = 1.0f; }\nkernel void saxpy(float a, float x<>, float y<>, out float r<>) { r = a * x + y; }")?;
    let kind = std::env::args().nth(1).unwrap_or("cuda".into());
    let device = Device::of_type(&kind)?.into_iter().next().unwrap();
    let nothing = program.kernel("nothing")?;
    let saxpy = program.kernel("saxpy")?;
    let one = Stream::<f32>::new(&device, &[1])?;
    let x = Stream::from_slice(&device, &[1], &[1.0f32])?;
    let mut res = vec![];
    for round in 0..15 {
        let n = 2000;
        let start = Instant::now();
        for _ in 0..n {
            if round % 2 == 0 {
                nothing.launch(args![&one]).expect("nothing");
            } else {
                saxpy.launch(args![2.0f32, &x, &x, &one]).expect("saxpy");
            }
        }
        let calls = start.elapsed().as_secs_f64();
        one.finish()?;
        let all = start.elapsed().as_secs_f64();
        if round >= 1 {
            res.push((round % 2, calls / n as f64 * 1e6, all / n as f64 * 1e6));
        }
    }
    for k in 0..2 {
        let mut v: Vec<f64> = res.iter().filter(|r| r.0 == k).map(|r| r.2).collect();
        v.sort_by(f64::total_cmp);
        let mut c: Vec<f64> = res.iter().filter(|r| r.0 == k).map(|r| r.1).collect();
        c.sort_by(f64::total_cmp);
        println!(
            "{}: per launch median {:.2} us (min {:.2}), caller {:.2} us",
            if k == 0 { "nothing" } else { "saxpy" },
            v[v.len() / 2],
            v[0],
            c[c.len() / 2]
        );
    }
    Ok(())
}
