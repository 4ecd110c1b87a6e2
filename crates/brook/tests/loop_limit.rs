//! Instances that loop long, on every device: their values where the device runs loops to
//! the end, and a launch error naming the limit where the device ends them early (Mesa's
//! lavapipe ends a subgroup's loops after 65,535 iterations in all, silently: Brook counts
//! them there and refuses the results, `brook_codegen::spirv::loop_limit`).

use brook::{args, Device, Program, Stream};

const SOURCE: &str = "kernel void spin(float a<>, int n, out float b<>) {
    float s = a;
    int i;
    for (i = 0; i < n; i++) { s = s + 1.0f; }
    b = s;
}
reduce void slow_sum(float a<>, reduce float s<>) {
    float t = a;
    int i;
    for (i = 0; i < 40000; i++) { t = t * 1.0f; }
    s += t;
}
kernel void apart(float a<>, int n, out float b<>) {
    float s = a;
    int i;
    if (fmod(a, 2.0f) == 0.0f) {
        for (i = 0; i < n; i++) { s = s + 1.0f; }
    } else {
        for (i = 0; i < n; i++) { s = s + 2.0f; }
    }
    b = s;
}
kernel void apart_return(float a<>, int n, out float b<>) {
    float s = a;
    int i;
    if (fmod(a, 2.0f) == 0.0f) {
        for (i = 0; i < n; i++) { s = s + 1.0f; }
        b = s;
        return;
    } else {
        for (i = 0; i < n; i++) { s = s + 2.0f; }
    }
    b = s;
}
kernel void apart_break(float a<>, int n, out float b<>) {
    float s = a;
    int i;
    int k;
    for (k = 0; k < 3; k++) {
        if (fmod(a, 2.0f) == 0.0f) {
            for (i = 0; i < n; i++) { s = s + 1.0f; }
            if (k == 0) break;
        } else {
            for (i = 0; i < n; i++) { s = s + 2.0f; }
            if (k == 0) break;
        }
    }
    b = s;
}
reduce void heavy(float4 a<>, reduce float4 r<>) {
    float4 t = a;
    int i;
    for (i = 0; i < 62; i++) { t = t * 1.0f; }
    r = fmod(r + t, float4(3.0f, 5.0f, 7.0f, 9.0f)) / (t * t + float4(1.0f, 2.0f, 3.0f, 4.0f));
}";

/// `spin` over `[0, 1, .., len)` with `n` iterations an instance: its values, or the
/// launch's error.
fn spin(device: &Device, n: i32, len: usize) -> Result<Vec<f32>, String> {
    let program = Program::from_source("loop_limit.br", SOURCE).expect("compiles");
    let kernel = program.kernel("spin").expect("a kernel");
    let a: Vec<f32> = (0..len).map(|i| i as f32).collect();
    let input = Stream::from_slice(device, &[len], &a).expect("input");
    let output = Stream::<f32>::new(device, &[len]).expect("output");
    kernel
        .launch(args![&input, n, &output])
        .map_err(|e| e.to_string())?;
    output.to_vec().map_err(|e| e.to_string())
}

fn ends_loops_early(device: &Device) -> bool {
    device.info().description.contains("loops end after")
}

#[test]
fn long_loops_give_their_values_or_the_limit_by_name_on_every_device() {
    let len = 8;
    let expected = |n: i32| -> Vec<f32> { (0..len).map(|i| (i as i32 + n) as f32).collect() };
    for device in Device::all() {
        for n in [1_000, 60_000] {
            let got = spin(&device, n, len);
            assert_eq!(
                got.as_ref(),
                Ok(&expected(n)),
                "{n} iterations on {}",
                device.info()
            );
        }
        let n = 70_000;
        match spin(&device, n, len) {
            Ok(values) => {
                assert!(
                    !ends_loops_early(&device),
                    "wrong values passed on {}",
                    device.info()
                );
                assert_eq!(values, expected(n), "on {}", device.info());
            }
            Err(e) => {
                assert!(ends_loops_early(&device), "on {}: {e}", device.info());
                for part in ["loop iterations", "65535", "`spin`", "another device"] {
                    assert!(e.contains(part), "{part:?} not in: {e}");
                }
                eprintln!("note: {e}");
            }
        }
    }
}

/// A reduction whose combine loops 40,000 times (within the limit on its own). Its sum of 8
/// leaves: on lavapipe each invocation of a reduction whose step loops combines two values a
/// pass, so the sum is right everywhere. Its scan: an invocation that scans the 8 leaves
/// passes the limit in all, so on lavapipe the launch is refused by name; elsewhere the
/// prefix sums.
#[test]
fn loops_of_a_reductions_combines_count_together() {
    let program = Program::from_source("loop_limit.br", SOURCE).expect("compiles");
    let kernel = program.kernel("slow_sum").expect("a kernel");
    let values: Vec<f32> = (0..8).map(|i| i as f32).collect();
    for device in Device::all() {
        let input = Stream::from_slice(&device, &[values.len()], &values).expect("input");
        let mut total = 0.0f32;
        kernel
            .launch(args![&input, brook::host_var(&mut total)])
            .expect("the sum");
        assert_eq!(total, 28.0, "on {}", device.info());
        let scanned = Stream::<f32>::new(&device, &[values.len()]).expect("output");
        let ran = kernel
            .scan(&input, &scanned)
            .map_err(|e| e.to_string())
            .and_then(|_| scanned.to_vec().map_err(|e| e.to_string()));
        match ran {
            Ok(prefixes) => {
                assert!(
                    !ends_loops_early(&device),
                    "wrong scan passed on {}",
                    device.info()
                );
                let expected = [0.0, 1.0, 3.0, 6.0, 10.0, 15.0, 21.0, 28.0];
                assert_eq!(prefixes, expected, "on {}", device.info());
            }
            Err(e) => {
                assert!(ends_loops_early(&device), "on {}: {e}", device.info());
                for part in ["loop iterations", "`slow_sum`"] {
                    assert!(e.contains(part), "{part:?} not in: {e}");
                }
                eprintln!("note: {e}");
            }
        }
    }
}

/// Even and odd instances loop `n` times each in the two arms of an `if`: lanes of one
/// subgroup run the two loops one after the other, and lavapipe's limit counts both (40,000
/// each gave 51,069 for 80,001, silently, when each lane counted its own loops).
#[test]
fn loops_that_lanes_run_apart_count_together() {
    lanes_apart("apart");
}

/// The same with the even instances returning inside their arm: their loop steps still
/// count where the arms meet.
#[test]
fn loops_of_lanes_that_return_inside_an_arm_count_too() {
    lanes_apart("apart_return");
}

/// The same with both arms leaving an outer loop by `break`.
#[test]
fn loops_of_lanes_that_break_inside_an_arm_count_too() {
    lanes_apart("apart_break");
}

/// Runs kernel `name` (the shape of `apart`) for 30,000 and 40,000 iterations an arm.
fn lanes_apart(name: &str) {
    let program = Program::from_source("loop_limit.br", SOURCE).expect("compiles");
    let kernel = program.kernel(name).expect("a kernel");
    let len = 8;
    let a: Vec<f32> = (0..len).map(|i| i as f32).collect();
    for device in Device::all() {
        for n in [30_000, 40_000] {
            let input = Stream::from_slice(&device, &[len], &a).expect("input");
            let output = Stream::<f32>::new(&device, &[len]).expect("output");
            let ran = kernel
                .launch(args![&input, n, &output])
                .map_err(|e| e.to_string())
                .and_then(|_| output.to_vec().map_err(|e| e.to_string()));
            let expected: Vec<f32> = (0..len)
                .map(|i| i as f32 + (n * (1 + i as i32 % 2)) as f32)
                .collect();
            match ran {
                Ok(values) => assert_eq!(values, expected, "n = {n} on {}", device.info()),
                Err(e) => {
                    assert!(ends_loops_early(&device), "on {}: {e}", device.info());
                    assert!(n == 40_000, "30,000 twice is within the limit: {e}");
                    for part in ["loop iterations", &format!("`{name}`")] {
                        assert!(e.contains(part), "{part:?} not in: {e}");
                    }
                }
            }
        }
    }
}

/// A reduction whose combine step is long (one invocation walks a piece's stack in loops,
/// `spirv::reduce`'s heavy form) and loops 62 times: over 1,000 leaves its loops pass
/// lavapipe's limit (fuzz seed 54103 kernel 8721 gave wrong values there, unreported): the
/// interpreter's bits, or the limit by name.
#[test]
fn a_heavy_reductions_loops_are_counted() {
    let program = Program::from_source("loop_limit.br", SOURCE).expect("compiles");
    let kernel = program.kernel("heavy").expect("a kernel");
    let leaves: Vec<[f32; 4]> = (0..1000)
        .map(|i| {
            let x = (i % 17) as f32 * 0.5 - 3.0;
            [x, x + 1.0, -x, x * 0.25]
        })
        .collect();
    let sum = |device: &Device| -> Result<[u32; 4], String> {
        let input = Stream::from_slice(device, &[leaves.len()], &leaves).expect("input");
        let mut total = [0.0f32; 4];
        kernel
            .launch(args![&input, brook::host_var(&mut total)])
            .map_err(|e| e.to_string())?;
        Ok(total.map(f32::to_bits))
    };
    let expected = sum(&Device::interp()).expect("the interpreter's");
    for device in Device::all() {
        match sum(&device) {
            Ok(bits) => assert_eq!(bits, expected, "on {}", device.info()),
            Err(e) => {
                assert!(ends_loops_early(&device), "on {}: {e}", device.info());
                for part in ["loop iterations", "`heavy`"] {
                    assert!(e.contains(part), "{part:?} not in: {e}");
                }
                eprintln!("note: {e}");
            }
        }
    }
}
