//! Counts heap allocations per launch of a one-element `saxpy` on a device (default `cpu`):
//! `cargo run --release -p brook-lang --example alloc_probe [cpu|cuda|interp]`. With
//! `BROOK_ALLOC_TRACE=1` it then prints where each allocation of one more launch comes from
//! (size and the first three source lines of the workspace on its stack). Every allocation a
//! queued launch holds is freed on the device's thread, which costs more than one freed
//! where it was made: this is how the launch path was brought from 33.5 to 5.
use brook::{args, Device, Program, Stream};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;
static ALLOCS: AtomicUsize = AtomicUsize::new(0);
static TRACE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
thread_local! { static INSIDE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) }; }
// SAFETY: forwards to the system allocator.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        if TRACE.load(Ordering::Relaxed) && !INSIDE.with(|i| i.replace(true)) {
            let bt = std::backtrace::Backtrace::force_capture().to_string();
            let frames: Vec<String> = bt
                .lines()
                .filter(|l| l.contains(" at ") && l.contains("/crates/"))
                .map(|l| {
                    l.trim()
                        .trim_start_matches("at ")
                        .rsplit("/crates/")
                        .next()
                        .unwrap_or("")
                        .to_string()
                })
                .take(3)
                .collect();
            eprintln!("ALLOC {} | {}", layout.size(), frames.join(" <- "));
            INSIDE.with(|i| i.set(false));
        }
        // SAFETY: as the caller promised.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as the caller promised.
        unsafe { System.dealloc(ptr, layout) }
    }
}
#[global_allocator]
static GLOBAL: Counting = Counting;

fn main() -> Result<(), brook::Error> {
    let kind = std::env::args().nth(1).unwrap_or("cpu".into());
    let device = Device::of_type(&kind)?.into_iter().next().expect("device");
    let program = Program::from_source(
        "s.br",
        "kernel void saxpy(float a, float x<>, float y<>, out float r<>) { r = a * x + y; }",
    )?;
    let saxpy = program.kernel("saxpy")?;
    let one = || Stream::from_slice(&device, &[1], &[1.0f32]);
    let (x, y, r) = (one()?, one()?, one()?);
    for _ in 0..100 {
        saxpy.launch(args![2.0f32, &x, &y, &r])?;
    }
    r.finish()?;
    let n = 10_000;
    let before = ALLOCS.load(Ordering::Relaxed);
    for _ in 0..n {
        saxpy.launch(args![2.0f32, &x, &y, &r])?;
    }
    r.finish()?;
    let after = ALLOCS.load(Ordering::Relaxed);
    if std::env::var_os("BROOK_ALLOC_TRACE").is_some() {
        TRACE.store(true, Ordering::Relaxed);
        saxpy.launch(args![2.0f32, &x, &y, &r])?;
        r.finish()?;
        TRACE.store(false, Ordering::Relaxed);
    }
    println!(
        "{}: {:.1} allocations per launch",
        device.info(),
        (after - before) as f64 / n as f64
    );
    Ok(())
}
