//! Several GPUs: streams and launches on each, `assign` from one GPU to another (device to
//! device, whole streams and views), and a kernel refused when its streams are on two GPUs. Needs two CUDA devices; with
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

#[test]
fn views_assign_between_gpus() {
    let gpus = Device::of_type("cuda").unwrap_or_default();
    if gpus.len() < 2 {
        println!("multi_gpu: {} CUDA device(s): nothing to test", gpus.len());
        return;
    }
    let (first, second) = (&gpus[0], &gpus[1]);
    let (rows, cols) = (300, 500);
    let data: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
    let at = |r: usize, c: usize| (r * cols + c) as f32;
    let grid = Stream::from_slice(first, &[rows, cols], &data).expect("grid");
    // A view of the first GPU into a whole stream of the second.
    let window = grid.domain(&[10, 7], &[110, 207]).expect("window");
    let whole = Stream::<f32>::new(second, &[100, 200]).expect("whole");
    whole.assign(&window).expect("view to whole");
    let got = whole.to_vec().expect("whole");
    assert_eq!(
        (got[0], got[201], got[19999]),
        (at(10, 7), at(11, 8), at(109, 206))
    );
    // A whole stream into a view of the other GPU, and a view into a view.
    let target = Stream::<f32>::new(first, &[rows, cols]).expect("target");
    let slot = target.domain(&[50, 250], &[150, 450]).expect("slot");
    slot.assign(&whole).expect("whole to view");
    let back = target.to_vec().expect("target");
    assert_eq!(back[50 * cols + 250], at(10, 7));
    assert_eq!(back[149 * cols + 449], at(109, 206));
    assert_eq!(back[49 * cols + 250], 0.0, "outside the view untouched");
    let far = Stream::<f32>::new(second, &[rows, cols]).expect("far");
    let far_slot = far.domain(&[0, 0], &[100, 200]).expect("far slot");
    far_slot.assign(&window).expect("view to view");
    let far_back = far.to_vec().expect("far");
    assert_eq!(
        (far_back[0], far_back[99 * cols + 199]),
        (at(10, 7), at(109, 206))
    );
    assert_eq!(far_back[200], 0.0, "outside the view untouched");
}
