//! A GPU kernel that never returns (it loops until a flag the host never sets): with
//! `BRT_KERNEL_TIMEOUT=2` reading its output ends in an error naming the kernel and its line,
//! the GPU is then refused with that reason, and the program exits (a child process, since the
//! variable is read once). Needs a CUDA device; without one the test says so.

use brook::{args, Device, Program, Stream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SPIN: &str = "\n\
kernel void spin(float flag[], out float o<>)\n\
{\n\
    int turns = 0;\n\
    while (flag[0] == 0.0f) {\n\
        turns = turns + 1;\n\
    }\n\
    o = (float)turns;\n\
}\n";

/// The child: launches the kernel that never ends, reads its output, then tries the GPU again.
fn spin_on_the_gpu(gpu: &Device) {
    let program = Program::from_source("spin.br", SPIN).expect("compiles");
    let spin = program.kernel("spin").expect("kernel");
    let flag = Stream::from_slice(gpu, &[1], &[0.0f32]).expect("flag");
    let out = Stream::<f32>::new(gpu, &[64]).expect("out");
    spin.launch(args![&flag, &out]).expect("queued");
    let started = Instant::now();
    let read = out.to_vec();
    let err = read
        .expect_err("a kernel that never ends cannot be read")
        .to_string();
    println!("read after {:.1} s: {err}", started.elapsed().as_secs_f64());
    assert!(err.contains("BRT_KERNEL_TIMEOUT=2"), "{err}");
    assert!(err.contains("kernel `spin` (spin.br:2)"), "{err}");
    let again = Stream::from_slice(gpu, &[1], &[1.0f32]);
    let err = match again {
        Ok(s) => s.to_vec().expect_err("the GPU is unusable").to_string(),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("unusable"), "later use: {err}");
    println!("later use: {err}");
}

#[test]
fn a_kernel_that_never_ends_is_ended_by_the_timeout() {
    let gpus = Device::of_type("cuda").unwrap_or_default();
    let Some(gpu) = gpus.first() else {
        println!("gpu_hang: no CUDA device: the timeout of a GPU wait is not tested here");
        return;
    };
    if std::env::var_os("BROOK_HANG_CHILD").is_some() {
        spin_on_the_gpu(gpu);
        return;
    }
    let mut child = Command::new(std::env::current_exe().expect("this test"))
        .args([
            "--exact",
            "a_kernel_that_never_ends_is_ended_by_the_timeout",
            "--nocapture",
        ])
        .env("BROOK_HANG_CHILD", "1")
        .env("BRT_KERNEL_TIMEOUT", "2")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the child");
    let started = Instant::now();
    while child.try_wait().expect("child state").is_none() {
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("the child still ran after 120 s: the wait was not ended");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().expect("child output");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    println!("{stdout}{stderr}");
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("later use:"), "{stdout}");
}
