//! The lower bound with the top of its search in shared memory (`search_splitters` and
//! `staged_lower_bound` in `examples/kernels/binary_search.br`, `gpu_bench`'s "binary search,
//! splitters in shared memory") on every device: for sorted keys with duplicates, of a count
//! that is not a multiple of the 4096 splitters (so the last splitters stand past the end),
//! and queries below, between, on and above the keys (more queries than threads, not a multiple
//! of them), each result is the host's lower bound (the first key not below the query, when it
//! equals the query; else -1) and the interpreter's.

use brook::{args, Device, Program, Stream};

const SOURCE: &str = include_str!("../../../examples/kernels/binary_search.br");
const SPLITTERS: usize = 4096;

/// The first index whose key is not below `q`, when that key is `q`; else -1.
fn host_search(keys: &[f32], q: f32) -> f32 {
    let start = keys.partition_point(|&k| k < q);
    if start < keys.len() && keys[start] == q {
        start as f32
    } else {
        -1.0
    }
}

fn run(device: &Device, keys: &[f32], queries: &[f32]) -> Vec<f32> {
    let program = Program::from_source("binary_search.br", SOURCE).expect("compiles");
    let count = keys.len();
    let step = count.div_ceil(SPLITTERS);
    let sk = Stream::from_slice(device, &[count], keys).expect("keys");
    let sq = Stream::from_slice(device, &[queries.len()], queries).expect("queries");
    // Two groups of 256 threads, each answering every 512th query.
    let stride = 512;
    let splitters = Stream::<[f32; 4]>::new(device, &[SPLITTERS / 4]).expect("splitters");
    let found = Stream::<f32>::new(device, &[queries.len()]).expect("found");
    program
        .kernel("search_splitters")
        .expect("search_splitters")
        .launch(args![&sk, count as i32, step as i32, &splitters])
        .unwrap_or_else(|e| panic!("{}: {e}", device.info()));
    program
        .kernel("staged_lower_bound")
        .expect("staged_lower_bound")
        .with_domain(&[0], &[stride])
        .launch(args![
            &sq,
            &sk,
            &splitters,
            &found,
            count as i32,
            step as i32,
            queries.len() as i32,
            stride as i32
        ])
        .unwrap_or_else(|e| panic!("{}: {e}", device.info()));
    found.to_vec().expect("found")
}

#[test]
fn staged_lower_bound_finds_what_the_host_finds_on_every_device() {
    // 20011 keys: runs of equal keys, gaps, a step of 5 keys per splitter.
    let keys: Vec<f32> = (0..20011u32).map(|i| (i / 3 * 2) as f32).collect();
    let mut queries: Vec<f32> = (0..3000u32)
        .map(|i| ((i as u64 * 2_654_435_761) % 14000) as f32 - 100.0)
        .collect();
    queries.extend([
        -1.0,
        0.0,
        0.5,
        13338.0,
        13340.0,
        1e9,
        keys[20010],
        keys[20009] + 1.0,
    ]);
    let want: Vec<f32> = queries.iter().map(|&q| host_search(&keys, q)).collect();
    assert!(want.iter().filter(|&&w| w >= 0.0).count() > 1000);
    let reference = run(&Device::interp(), &keys, &queries);
    assert_eq!(reference, want, "the interpreter");
    for device in Device::all().iter().filter(|d| d.type_name() != "interp") {
        assert_eq!(run(device, &keys, &queries), want, "{}", device.info());
    }
}

#[test]
fn fewer_keys_than_splitters() {
    let keys: Vec<f32> = (0..100u32).map(|i| i as f32 * 0.5).collect();
    let queries: Vec<f32> = (0..300u32).map(|i| i as f32 * 0.25 - 3.0).collect();
    let want: Vec<f32> = queries.iter().map(|&q| host_search(&keys, q)).collect();
    for device in Device::all() {
        assert_eq!(run(&device, &keys, &queries), want, "{}", device.info());
    }
}
