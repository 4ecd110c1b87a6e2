//! Waiting for a GPU without waiting forever in silence.
//!
//! Every wait for a GPU's work (a stream, a timing event) polls the driver instead of blocking
//! in it: spinning for the first millisecond and yielding the processor between queries up to
//! [`SPIN`] (short kernels cost no latency, as with the driver's own spinning wait), then
//! sleeping [`POLL`] between queries. A wait that has lasted a minute says on stderr, once a minute,
//! which kernel was the last work queued on that GPU (its name and `.br` line), and a driver
//! compile that takes a minute says so too ([`crate::slow_call::reporting`]). With `BRT_KERNEL_TIMEOUT=SECONDS`
//! a wait that lasts longer ends with an error, and the GPU is marked unusable: the driver
//! cannot stop a running kernel short of ending the process, so every later use of that GPU
//! fails at once with the reason ([`failure_of`], checked when its context is bound) instead of
//! queueing behind the kernel that never ends.

use super::driver::{describe, Handles};
use crate::plan::LaunchPlan;
use brook_ir::{SourceFile, ValidModule};
use cudarc::driver::sys::{self, CUresult};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long a wait spins (then yields) before it sleeps between queries.
const SPIN: Duration = Duration::from_millis(20);
/// The sleep between queries after that.
const POLL: Duration = Duration::from_micros(500);
use crate::slow_call::REPORT_EVERY;

/// The last kernel queued on one GPU context.
struct Queued {
    module: Arc<ValidModule>,
    kernel: usize,
}

/// Contexts are keyed by their handle's address.
fn key(handles: &Handles) -> usize {
    handles.context as usize
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn last_queued() -> &'static Mutex<HashMap<usize, Queued>> {
    static LAST: OnceLock<Mutex<HashMap<usize, Queued>>> = OnceLock::new();
    LAST.get_or_init(Default::default)
}

/// Notes `plan`'s kernel as the last work queued on the GPU of `handles`.
pub fn queued(handles: &Handles, plan: &LaunchPlan) {
    let queued = Queued {
        module: plan.module.clone(),
        kernel: plan.kernel,
    };
    lock(last_queued()).insert(key(handles), queued);
}

/// `kernel `name` (file.br:line)`, where the module kept its source.
fn kernel_label(module: &ValidModule, kernel: usize) -> String {
    match module.kernels.get(kernel) {
        Some(k) => label(&k.name, k.span.start as usize, module.source.as_deref()),
        None => "a kernel".into(),
    }
}

fn label(name: &str, at: usize, source: Option<&SourceFile>) -> String {
    match source {
        Some(file) => {
            let (line, _) = file.line_col(at);
            format!("kernel `{name}` ({}:{line})", file.file_of(at))
        }
        None => format!("kernel `{name}`"),
    }
}

/// What the GPU of `handles` was last given to run, for a message.
fn running_on(handles: &Handles) -> String {
    lock(last_queued()).get(&key(handles)).map_or_else(
        || "work queued before any kernel".into(),
        |q| kernel_label(&q.module, q.kernel),
    )
}

/// Set once any GPU has been marked unusable (so binding a context costs one load).
static ANY_FAILED: AtomicBool = AtomicBool::new(false);

fn failures() -> &'static Mutex<HashMap<usize, String>> {
    static FAILED: OnceLock<Mutex<HashMap<usize, String>>> = OnceLock::new();
    FAILED.get_or_init(Default::default)
}

/// Why the GPU of `handles` may no longer be used, if it was marked unusable.
pub fn failure_of(handles: &Handles) -> Option<String> {
    if !ANY_FAILED.load(Ordering::Acquire) {
        return None;
    }
    lock(failures()).get(&key(handles)).cloned()
}

fn mark_failed(handles: &Handles, reason: &str) {
    lock(failures()).insert(key(handles), reason.to_string());
    ANY_FAILED.store(true, Ordering::Release);
}

/// `BRT_KERNEL_TIMEOUT` in seconds (read once; a value that is no positive number is said on
/// stderr and ignored).
fn timeout() -> Option<Duration> {
    static TIMEOUT: OnceLock<Option<Duration>> = OnceLock::new();
    *TIMEOUT.get_or_init(|| {
        let text = std::env::var("BRT_KERNEL_TIMEOUT").ok()?;
        match text.trim().parse::<f64>() {
            Ok(s) if s > 0.0 && s.is_finite() => Some(Duration::from_secs_f64(s)),
            _ => {
                crate::log::append(&format!(
                    "warning: BRT_KERNEL_TIMEOUT={text} is not a number of seconds; ignored"
                ));
                None
            }
        }
    })
}

/// Waits until `query` (a `cuStreamQuery` or `cuEventQuery` of the GPU of `handles`) says
/// the work is done; `what` names the wait in errors.
pub fn wait(handles: &Handles, what: &str, query: impl Fn() -> CUresult) -> Result<(), String> {
    let started = Instant::now();
    let mut reports = 1u32;
    loop {
        match query() {
            CUresult::CUDA_SUCCESS => return Ok(()),
            CUresult::CUDA_ERROR_NOT_READY => {}
            code => return Err(format!("{what}: {}", describe(code))),
        }
        let waited = started.elapsed();
        if waited < SPIN / 20 {
            std::hint::spin_loop();
        } else if waited < SPIN {
            std::thread::yield_now();
        } else {
            std::thread::sleep(POLL);
        }
        if let Some(limit) = timeout().filter(|&limit| waited >= limit) {
            let reason = format!(
                "{what}: {} did not finish within BRT_KERNEL_TIMEOUT={} s; this GPU is \
                 unusable for the rest of the program (the driver cannot stop a running \
                 kernel; it ends with the process)",
                running_on(handles),
                limit.as_secs_f64()
            );
            mark_failed(handles, &reason);
            return Err(reason);
        }
        if waited >= REPORT_EVERY * reports {
            crate::log::append(&format!(
                "warning: the GPU has made no progress for {} s: still waiting for {} \
                 (BRT_KERNEL_TIMEOUT=SECONDS ends such a wait)",
                waited.as_secs(),
                running_on(handles)
            ));
            reports += 1;
        }
    }
}

/// Waits for the work queued on the stream of `handles` (its context current).
pub fn wait_stream(handles: &Handles) -> Result<(), String> {
    // SAFETY: the stream belongs to the current context.
    wait(handles, "the GPU", || unsafe {
        sys::cuStreamQuery(handles.stream)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_is_named_with_its_line() {
        let file = SourceFile::new("k.br", "\nkernel void twice(float a<>, out float b<>) {}\n");
        assert_eq!(label("twice", 1, Some(&file)), "kernel `twice` (k.br:2)");
        assert_eq!(label("twice", 1, None), "kernel `twice`");
    }
}
