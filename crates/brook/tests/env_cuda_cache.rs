//! `BROOK_CACHE_DIR`: the CUDA device keeps the GPU binary of each module on disk, so another
//! program (or process) with the same kernel skips the driver's JIT; a damaged entry is
//! rebuilt. Its own process, since it sets the variable. Without a GPU it says so and checks
//! nothing else.

use brook::{args, Device, Program, Stream};
use std::path::Path;

const SOURCE: &str = "kernel void twice(float a<>, out float b<>) { b = a + a; }";

fn run_twice(device: &Device) -> Vec<f32> {
    let program = Program::from_source("cache.br", SOURCE).expect("compiles");
    let a = Stream::from_slice(device, &[1000], &vec![1.25f32; 1000]).expect("a");
    let b = Stream::<f32>::new(device, &[1000]).expect("b");
    program
        .kernel("twice")
        .expect("twice")
        .launch(args![&a, &b])
        .expect("launch");
    b.to_vec().expect("b")
}

fn entries(dir: &Path) -> Vec<(std::path::PathBuf, std::time::SystemTime)> {
    let mut found: Vec<_> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "cubin"))
                .map(|e| {
                    (
                        e.path(),
                        e.metadata().and_then(|m| m.modified()).expect("mtime"),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

#[test]
fn compiled_modules_are_cached_on_disk_and_damage_is_repaired() {
    let Some(device) = Device::all().into_iter().find(|d| d.type_name() == "cuda") else {
        println!("env_cuda_cache: no CUDA device: nothing to cache");
        return;
    };
    let dir = std::env::temp_dir().join(format!("brook-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::env::set_var("BROOK_CACHE_DIR", &dir);
    assert!(run_twice(&device).iter().all(|&v| v == 2.5));
    let first = entries(&dir);
    assert_eq!(first.len(), 1, "one entry for one module: {first:?}");
    // Another program with the same kernel: the same entry, read, not rewritten.
    assert!(run_twice(&device).iter().all(|&v| v == 2.5));
    assert_eq!(entries(&dir), first);
    // A damaged entry is a miss: compiled again and rewritten.
    std::fs::write(&first[0].0, b"damaged").expect("damage");
    assert!(run_twice(&device).iter().all(|&v| v == 2.5));
    let repaired = std::fs::read(&first[0].0).expect("entry");
    assert!(
        repaired.starts_with(b"BROOKCUBIN1\n"),
        "the entry is rewritten"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
