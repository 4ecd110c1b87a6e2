//! Cross-check mode: every launch on a device other than the interpreter also runs on the
//! interpreter, and a difference fails the launch with a report (its own process, since the
//! mode is process-wide).

use brook::{args, host_var, BError, Device, DeviceKind, Grid, LoomProgram, Program, Stream};

const KERNELS: &str = "
kernel void waves(float x<>, out float y<>) { y = sin(x) * exp(x * 0.25f) + pow(x, 1.5f); }
reduce void sum(float a<>, reduce float s<>) { s += a; }
kernel void spread(float v<>, out float dst[]) { int i = instance().x; dst[i * 2] = v; }
kernel void affine(float x<>, out float y<>) { y = x * 3.0f + 1.0f; }
";

#[test]
fn every_device_agrees_with_the_interpreter_and_a_difference_is_reported() {
    brook::set_crosscheck(true);
    assert!(brook::crosscheck_enabled());
    let program = Program::from_source("cross.br", KERNELS).expect("compiles");
    let scan = LoomProgram::from_source(
        "scan.loom",
        "func add(x: Float32, y: Float32): Float32\n  return x + y\n\nkernel scans(in: Float32[THREADS], out: Float32[THREADS])\n  out <- add /: in\n  return\n",
    )
    .expect("LOOM compiles");
    let data: Vec<f32> = (0..1000).map(|i| i as f32 * 0.013 - 3.0).collect();
    let positive: Vec<f32> = (0..1000).map(|i| i as f32 * 0.013 + 0.5).collect();
    for device in Device::of_type("all").expect("devices") {
        let at = device.info().to_string();
        let x = Stream::from_slice(&device, &[1000], &data).expect("x");
        let y = Stream::<f32>::new(&device, &[1000]).expect("y");
        program
            .kernel("waves")
            .unwrap()
            .launch(args![&x, &y])
            .expect("map");
        let mut total = 0.0f32;
        program
            .kernel("sum")
            .unwrap()
            .launch(args![&x, host_var(&mut total)])
            .expect("reduce");
        let dst = Stream::<f32>::new(&device, &[2000]).expect("dst");
        program
            .kernel("spread")
            .unwrap()
            .launch(args![&x, &dst])
            .expect("scatter");
        let scanned = Stream::<f32>::new(&device, &[1024]).expect("scanned");
        let input = Stream::from_slice(&device, &[1024], &vec![0.5f32; 1024]).expect("in");
        scan.kernel(Grid::one_d(1024, 256))
            .unwrap()
            .launch(args![&input, &scanned])
            .expect("LOOM");
        for (name, s) in [("y", &y), ("dst", &dst), ("scanned", &scanned)] {
            s.finish().unwrap_or_else(|e| panic!("{name} on {at}: {e}"));
            assert_eq!(
                s.error(),
                BError::NoError,
                "{name} on {at}: {}",
                s.error_log()
            );
        }
    }
    // A device whose result differs (altered by the test hook) is caught at the element.
    let cpu = Device::of_type("all")
        .expect("devices")
        .into_iter()
        .find(|d| d.kind() != DeviceKind::Interp)
        .expect("a device other than the interpreter");
    let x = Stream::from_slice(&cpu, &[1000], &positive).expect("x");
    let y = Stream::<f32>::new(&cpu, &[1000]).expect("y");
    brook::corrupt_next_crosschecked_result();
    program
        .kernel("affine")
        .unwrap()
        .launch(args![&x, &y])
        .expect("queued");
    assert!(y.finish().is_err());
    let log = y.error_log();
    assert!(
        log.contains("crosscheck: output `y` element [0] differs from the reference interpreter's")
            && log.contains("(1 ulp apart); 1 of 1000 elements differ")
            && log.contains("cross.br:5:")
            && log.contains("kernel void affine"),
        "{log}"
    );
    // A kernel that calls transcendental functions may be a few ulps off: 1 ulp passes.
    let z = Stream::<f32>::new(&cpu, &[1000]).expect("z");
    brook::corrupt_next_crosschecked_result();
    program
        .kernel("waves")
        .unwrap()
        .launch(args![&x, &z])
        .expect("queued");
    z.finish().expect("within the transcendental tolerance");
    brook::set_crosscheck(false);
    assert!(!brook::crosscheck_enabled());
}
