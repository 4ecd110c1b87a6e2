//! Several GPUs: streams and launches on each, `assign` from one GPU to another (device to
//! device), and a kernel refused when its streams are on two GPUs. Needs two CUDA devices; with
//! fewer the test says so and checks nothing.

use brook::{args, Device, Program, Stream};

#[test]
fn two_gpus_compute_and_assign_between_them() {
    let gpus = Device::of_type("cuda").unwrap_or_default();
    if gpus.len() < 2 {
        println!("multi_gpu: {} CUDA device(s): nothing to test", gpus.len());
        return;
    }
    let program = Program::from_source(
        "multi.br",
        "kernel void add_one(float a<>, out float b<>) { b = a + 1.0f; }",
    )
    .expect("compiles");
    let add_one = program.kernel("add_one").expect("kernel");
    let n = 1 << 20;
    let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let (first, second) = (&gpus[0], &gpus[1]);
    let a = Stream::from_slice(first, &[n], &data).expect("a");
    let b = Stream::<f32>::new(first, &[n]).expect("b");
    add_one
        .launch(args![&a, &b])
        .expect("launch on the first GPU");
    let c = Stream::<f32>::new(second, &[n]).expect("c");
    c.assign(&b).expect("assign across GPUs");
    let d = Stream::<f32>::new(second, &[n]).expect("d");
    add_one
        .launch(args![&c, &d])
        .expect("launch on the second GPU");
    let out = d.to_vec().expect("read back");
    assert!(out.iter().enumerate().all(|(i, &v)| v == i as f32 + 2.0));
    // Back again, into a view-free stream of the first GPU.
    let e = Stream::<f32>::new(first, &[n]).expect("e");
    e.assign(&d).expect("assign back");
    assert_eq!(e.to_vec().expect("e")[12345], 12347.0);
    let err = add_one
        .launch(args![&a, &d])
        .expect_err("streams on two GPUs");
    assert!(err.to_string().contains("device"), "{err}");
}
