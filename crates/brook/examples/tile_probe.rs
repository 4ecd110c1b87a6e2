//! Times a thread-group multiply read from a file (`tile_probe FILE KERNEL [N]`), for trying
//! variants of `tiled_matmul_128` without rebuilding: the kernel takes `(int k4, int n4,
//! float4 A[][], float4 B[][], out float4 C[][])` and runs over N^2 / 64 instances.

use brook::{args, Device, Program, Stream};

fn main() {
    let mut argv = std::env::args().skip(1);
    let (Some(file), Some(name)) = (argv.next(), argv.next()) else {
        eprintln!("usage: tile_probe FILE KERNEL [N]");
        std::process::exit(2);
    };
    let n: usize = argv.next().map_or(4096, |s| s.parse().expect("N"));
    let source = std::fs::read_to_string(&file).expect("read the file");
    let program = Program::from_source(&file, &source).expect("compiles");
    let Some(device) = Device::all().into_iter().find(|d| d.type_name() == "cuda") else {
        println!("tile_probe: no CUDA device: nothing measured");
        return;
    };
    let a: Vec<f32> = (0..n * n)
        .map(|i| ((i * 7 + 3) % 17) as f32 - 8.0)
        .collect();
    let b: Vec<f32> = (0..n * n)
        .map(|i| ((i * 5 + 1) % 13) as f32 - 6.0)
        .collect();
    let quads =
        |m: &[f32]| -> Vec<[f32; 4]> { m.chunks(4).map(|q| [q[0], q[1], q[2], q[3]]).collect() };
    let sa = Stream::from_slice(&device, &[n, n / 4], &quads(&a)).expect("A");
    let sb = Stream::from_slice(&device, &[n, n / 4], &quads(&b)).expect("B");
    let sc = Stream::<[f32; 4]>::new(&device, &[n, n / 4]).expect("C");
    let kernel = program
        .kernel(&name)
        .expect("kernel")
        .with_domain(&[0], &[n * n / 64]);
    let q = (n / 4) as i32;
    let run = || {
        kernel.launch(args![q, q, &sa, &sb, &sc]).expect("launch");
    };
    run();
    let mut times: Vec<f64> = (0..11)
        .map(|_| {
            device
                .gpu_time(run)
                .expect("a GPU")
                .expect("events")
                .as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let c: Vec<f32> = sc.to_vec().expect("C").into_iter().flatten().collect();
    for (i, j) in [(0, 0), (1, 2), (n - 1, n - 1), (n / 3, n / 2 + 1)] {
        let want: f32 = (0..n).map(|k| a[i * n + k] * b[k * n + j]).sum();
        assert_eq!(c[i * n + j], want, "C[{i}][{j}]");
    }
    let t = times[times.len() / 2];
    let flops = 2.0 * (n as f64).powi(3);
    println!(
        "{file} {name} n={n}: {:.3} ms, {:.2} TFLOP/s",
        t * 1e3,
        flops / t / 1e12
    );
}
