//! Scatter kernels on launches large enough for the CPU device to split across threads. Where
//! nothing depends on the order of the writes (the kernel never reads its scatter arrays, whose
//! elements are single scalars) instances run in parallel: distinct targets give the
//! interpreter's result, and an element written by several instances holds one of the written
//! values (SEMANTICS.md). On the CPU device, kernels that read a scatter array, or scatter
//! vectors, run in domain order, one instance at a time, and give the interpreter's result
//! even where writes collide (GPUs run them in parallel: which colliding write lands is
//! unspecified there).

use brook::{args, Device, Program, Stream};

const KERNELS: &str = "
kernel void permute(float a<>, int to<>, out float r[]) { r[to] = a * 2.0f + 1.0f; }

kernel void collide(int n, int i<>, out int r[]) { r[i % n] = i; }

kernel void chain(int n, int i<>, out int r[]) { r[(i + 1) % n] = r[i % n] + 1; }

kernel void collide4(int n, int i<>, out float4 r[])
{
    float f = (float)i;
    r[i % n] = float4(f, f + 0.5f, -f, 1.0f);
}
";

const N: usize = 1 << 20;

fn devices() -> Vec<Device> {
    Device::all()
        .into_iter()
        .filter(|d| d.type_name() != "interp")
        .collect()
}

fn program() -> Program {
    Program::from_source("scatter.br", KERNELS).expect("compiles")
}

/// A permutation of `0..n` (a multiplicative step coprime to the power of two `n`).
fn iota(n: usize) -> Vec<i32> {
    (0..n as i32).collect()
}

fn permutation(n: usize) -> Vec<i32> {
    (0..n).map(|i| ((i * 40_503 + 17) % n) as i32).collect()
}

/// `permute` of `a` to the targets `to` on `device`, into a stream holding `before`.
fn permute_on(device: &Device, a: &[f32], to: &[i32], before: &[f32]) -> Vec<f32> {
    let sa = Stream::from_slice(device, &[a.len()], a).expect("a");
    let st = Stream::from_slice(device, &[to.len()], to).expect("to");
    let r = Stream::from_slice(device, &[before.len()], before).expect("r");
    program()
        .kernel("permute")
        .expect("permute")
        .launch(args![&sa, &st, &r])
        .expect("launch");
    r.to_vec().expect("r")
}

#[test]
fn distinct_targets_give_the_interpreters_result() {
    let a: Vec<f32> = (0..N).map(|i| i as f32 * 0.25 - 1000.0).collect();
    let to = permutation(N);
    let zeros = vec![0.0f32; N];
    let run = |d: &Device| permute_on(d, &a, &to, &zeros);
    let reference = run(&Device::interp());
    for device in devices() {
        assert!(run(&device) == reference, "{}", device.info());
    }
}

/// Targets in runs of eight (a CPU gang's width): consecutive, reversed, consecutive in a
/// second region, and consecutive with a lane out of range (dropped); a ragged length. The
/// CPU device stores a whole gang at once only where every lane is in range and the targets
/// turn out consecutive.
#[test]
fn runs_of_consecutive_targets_give_the_interpreters_result() {
    let n = N + 5;
    let to: Vec<i32> = (0..n)
        .map(|i| {
            let (run, lane) = (i / 8, i % 8);
            match run % 4 {
                0 => i as i32,
                1 => (run * 8 + 7 - lane) as i32,
                2 => (n + i) as i32,
                _ if lane == 3 => [-1, 2 * n as i32 + 7][run / 4 % 2],
                _ => i as i32,
            }
        })
        .collect();
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 77.0).collect();
    let before: Vec<f32> = (0..2 * n).map(|i| -(i as f32)).collect();
    let run = |d: &Device| permute_on(d, &a, &to, &before);
    let reference = run(&Device::interp());
    assert_ne!(reference, before, "the reference wrote nothing");
    for device in devices() {
        assert!(run(&device) == reference, "{}", device.info());
    }
}

#[test]
fn colliding_writes_leave_one_of_the_written_values() {
    let program = program();
    let targets = 1000usize;
    for device in devices() {
        let i = Stream::from_slice(&device, &[N], &iota(N)).expect("i");
        let r = Stream::<i32>::new(&device, &[targets]).expect("r");
        program
            .kernel("collide")
            .expect("collide")
            .launch(args![targets as i32, &i, &r])
            .expect("launch");
        for (element, value) in r.to_vec().expect("r").into_iter().enumerate() {
            assert!(
                value >= 0 && (value as usize) < N && value as usize % targets == element,
                "{}: element {element} holds {value}, which no instance wrote there",
                device.info()
            );
        }
    }
}

#[test]
fn kernels_that_read_their_scatter_array_or_scatter_vectors_run_in_order() {
    let program = program();
    let targets = 4099usize;
    let instances = 3 * targets + 5;
    let chain = |d: &Device| {
        let i = Stream::from_slice(d, &[instances], &iota(instances)).expect("i");
        let r = Stream::<i32>::new(d, &[targets]).expect("r");
        program
            .kernel("chain")
            .expect("chain")
            .launch(args![targets as i32, &i, &r])
            .expect("launch");
        r.to_vec().expect("r")
    };
    let vectors = |d: &Device| {
        let i = Stream::from_slice(d, &[instances], &iota(instances)).expect("i");
        let r = Stream::<[f32; 4]>::new(d, &[targets]).expect("r");
        program
            .kernel("collide4")
            .expect("collide4")
            .launch(args![targets as i32, &i, &r])
            .expect("launch");
        r.to_vec().expect("r")
    };
    let (reference_chain, reference_vectors) =
        (chain(&Device::interp()), vectors(&Device::interp()));
    for device in devices().into_iter().filter(|d| d.type_name() == "cpu") {
        assert!(
            chain(&device) == reference_chain,
            "{}: chain",
            device.info()
        );
        assert!(
            vectors(&device) == reference_vectors,
            "{}: float4",
            device.info()
        );
    }
}
