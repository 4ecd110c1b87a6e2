//! Profiling (`BRT_PROFILE=1`, or [`set_profile`]): per device and kernel, the launches, the
//! device time, the bytes the launches bind and the elements they run over (with the rates
//! they give), the compiles and their time, and the kernel cache's hits; transfers between
//! host and device listed apart. [`profile_report`] gives the table; the first launch or
//! transfer profiled arranges for it to be printed on stderr when the process exits.
//!
//! Device time is the GPU's own clock (CUDA events around the launch, which then waits for
//! it, so a profiled program runs its launches one at a time) and the wall clock of the
//! launch on the CPU and the interpreter, which run launches to completion.

use crate::env_switch::EnvSwitch;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// On with `BRT_PROFILE` (read when first asked) or [`set_profile`].
static MODE: EnvSwitch = EnvSwitch::new("BRT_PROFILE");
static PRINT_AT_EXIT: AtomicBool = AtomicBool::new(false);
static KERNELS: Mutex<BTreeMap<(String, String), KernelStats>> = Mutex::new(BTreeMap::new());
static TRANSFERS: Mutex<BTreeMap<(String, &'static str), TransferStats>> =
    Mutex::new(BTreeMap::new());

/// Turns profiling on or off for the rest of the process (overriding `BRT_PROFILE`).
pub fn set_profile(on: bool) {
    MODE.set(on);
}

/// Whether launches and transfers are profiled.
pub fn profiling() -> bool {
    MODE.is_on()
}

#[derive(Clone, Copy, Debug, Default)]
struct KernelStats {
    launches: u64,
    time: Duration,
    /// Whether the time is a GPU clock's.
    gpu_clock: bool,
    bytes: u64,
    elements: u64,
    compiles: u64,
    compile_time: Duration,
    cache_hits: u64,
}

#[derive(Clone, Copy, Debug, Default)]
struct TransferStats {
    count: u64,
    bytes: u64,
    time: Duration,
}

/// One launch of `kernel` on `device`: its device time (`gpu_clock` when the GPU measured
/// it), the bytes of the streams it binds and the instances it runs.
pub fn record_launch(
    device: &str,
    kernel: &str,
    time: Duration,
    gpu_clock: bool,
    bytes: u64,
    elements: u64,
) {
    with_kernel(device, kernel, |s| {
        s.launches += 1;
        s.time += time;
        s.gpu_clock |= gpu_clock;
        s.bytes += bytes;
        s.elements += elements;
    });
}

/// A kernel compiled for `device` (a kernel-cache miss), and how long it took.
pub fn record_compile(device: &str, kernel: &str, time: Duration) {
    with_kernel(device, kernel, |s| {
        s.compiles += 1;
        s.compile_time += time;
    });
}

/// A kernel found compiled in `device`'s cache.
pub fn record_cache_hit(device: &str, kernel: &str) {
    with_kernel(device, kernel, |s| s.cache_hits += 1);
}

/// A copy between the host and `device` (`direction`: `"to device"`, `"to host"`).
pub fn record_transfer(device: &str, direction: &'static str, bytes: u64, time: Duration) {
    arrange_report_at_exit();
    let mut table = TRANSFERS.lock().unwrap_or_else(|p| p.into_inner());
    let s = table
        .entry((short(device).to_string(), direction))
        .or_default();
    s.count += 1;
    s.bytes += bytes;
    s.time += time;
}

fn with_kernel(device: &str, kernel: &str, update: impl FnOnce(&mut KernelStats)) {
    arrange_report_at_exit();
    let mut table = KERNELS.lock().unwrap_or_else(|p| p.into_inner());
    update(
        table
            .entry((short(device).to_string(), kernel.to_string()))
            .or_default(),
    );
}

/// The profile so far, as a table (empty when nothing was profiled).
pub fn profile_report() -> String {
    let kernels = KERNELS.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let transfers = TRANSFERS.lock().unwrap_or_else(|p| p.into_inner()).clone();
    if kernels.is_empty() && transfers.is_empty() {
        return String::new();
    }
    let mut out = String::from("brook profile (BRT_PROFILE): device time is the GPU clock on GPUs that have one (cuda, vulkan with timestamps), the wall clock elsewhere\n");
    let _ = writeln!(
        out,
        "{:<10} {:<24} {:>8} {:>11} {:>10} {:>9} {:>10} {:>9} {:>11} {:>6}",
        "device",
        "kernel",
        "launches",
        "time ms",
        "avg us",
        "GB/s",
        "Gelem/s",
        "compiles",
        "compile ms",
        "hits"
    );
    for ((device, kernel), s) in &kernels {
        let seconds = s.time.as_secs_f64();
        let rate = |n: u64| {
            if seconds > 0.0 {
                n as f64 / seconds / 1e9
            } else {
                0.0
            }
        };
        let average = if s.launches > 0 {
            seconds * 1e6 / s.launches as f64
        } else {
            0.0
        };
        let _ = writeln!(
            out,
            "{:<10} {:<24} {:>8} {:>11.3} {:>10.1} {:>9.1} {:>10.3} {:>9} {:>11.2} {:>6}",
            device,
            kernel,
            s.launches,
            seconds * 1e3,
            average,
            rate(s.bytes),
            rate(s.elements),
            s.compiles,
            s.compile_time.as_secs_f64() * 1e3,
            s.cache_hits
        );
    }
    if !transfers.is_empty() {
        let _ = writeln!(out, "transfers (host wall clock):");
        let _ = writeln!(
            out,
            "{:<10} {:<10} {:>8} {:>12} {:>11} {:>9}",
            "device", "direction", "count", "MB", "time ms", "GB/s"
        );
        for ((device, direction), s) in &transfers {
            let seconds = s.time.as_secs_f64();
            let rate = if seconds > 0.0 {
                s.bytes as f64 / seconds / 1e9
            } else {
                0.0
            };
            let _ = writeln!(
                out,
                "{:<10} {:<10} {:>8} {:>12.3} {:>11.3} {:>9.2}",
                device,
                direction,
                s.count,
                s.bytes as f64 / 1e6,
                seconds * 1e3,
                rate
            );
        }
    }
    out
}

/// `cuda:0 (NVIDIA H100, sm_90)` as `cuda:0`: the key of a device's rows.
fn short(device: &str) -> &str {
    device.split_whitespace().next().unwrap_or(device)
}

/// Clears what was recorded (a program may profile one phase).
pub fn reset_profile() {
    KERNELS.lock().unwrap_or_else(|p| p.into_inner()).clear();
    TRANSFERS.lock().unwrap_or_else(|p| p.into_inner()).clear();
}

extern "C" {
    fn atexit(callback: extern "C" fn()) -> std::ffi::c_int;
}

extern "C" fn print_report() {
    let report = profile_report();
    if !report.is_empty() {
        eprint!("{report}");
    }
}

fn arrange_report_at_exit() {
    if !PRINT_AT_EXIT.swap(true, Ordering::SeqCst) {
        // SAFETY: registers a plain function without arguments with the C library.
        unsafe {
            atexit(print_report);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_lists_kernels_and_transfers_with_rates() {
        for _ in 0..2 {
            record_launch(
                "cpu:0 (native code)",
                "probe_saxpy",
                Duration::from_millis(2),
                false,
                4_000_000,
                1_000_000,
            );
        }
        record_compile(
            "cpu:0 (native code)",
            "probe_saxpy",
            Duration::from_millis(5),
        );
        record_cache_hit("cpu:0 (native code)", "probe_saxpy");
        record_transfer(
            "cpu:0 (native code)",
            "to device",
            8_000_000,
            Duration::from_millis(4),
        );
        let report = profile_report();
        let row = report
            .lines()
            .find(|l| l.contains("probe_saxpy"))
            .expect("a row");
        let cells: Vec<&str> = row.split_whitespace().collect();
        // device, kernel, launches, ms, avg us, GB/s, Gelem/s, compiles, compile ms, hits
        assert_eq!(
            cells,
            [
                "cpu:0",
                "probe_saxpy",
                "2",
                "4.000",
                "2000.0",
                "2.0",
                "0.500",
                "1",
                "5.00",
                "1"
            ],
            "{report}"
        );
        let transfer = report
            .lines()
            .find(|l| l.contains("to device"))
            .expect("a transfer row");
        assert!(
            transfer.contains("8.000") && transfer.contains("2.00"),
            "{report}"
        );
        reset_profile();
        assert_eq!(profile_report(), "");
    }
}
