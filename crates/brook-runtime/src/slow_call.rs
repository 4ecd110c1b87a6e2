//! Calls into a driver that cannot be interrupted (its compiler, on CUDA and Vulkan alike),
//! watched so that a long one is never silent: once a minute it says on stderr (and in
//! `BRT_LOG_FILE`) what is still running and for how long.

use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How often a call that is still running says so.
pub const REPORT_EVERY: Duration = Duration::from_secs(60);

/// Runs `work`, saying once a minute that it is still running, with `what`.
pub fn reporting<T>(what: &dyn Fn() -> String, work: impl FnOnce() -> T) -> T {
    reporting_every(REPORT_EVERY, what, work).0
}

/// [`reporting`] every `every`; also how many times it said so.
fn reporting_every<T>(
    every: Duration,
    what: &dyn Fn() -> String,
    work: impl FnOnce() -> T,
) -> (T, u32) {
    let (done, waiting) = mpsc::channel::<()>();
    let text = what();
    let reporter = std::thread::Builder::new()
        .name("brook-slow-call".into())
        .spawn(move || {
            let started = Instant::now();
            let mut reports = 0;
            while let Err(mpsc::RecvTimeoutError::Timeout) = waiting.recv_timeout(every) {
                reports += 1;
                crate::log::append(&format!(
                    "warning: {text} has taken {} s so far",
                    started.elapsed().as_secs()
                ));
            }
            reports
        });
    let result = work();
    drop(done);
    let reports = reporter.ok().and_then(|r| r.join().ok()).unwrap_or(0);
    (result, reports)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_call_is_reported_and_its_result_comes_back() {
        let what = || "a test call".to_string();
        let (value, reports) = reporting_every(Duration::from_millis(5), &what, || {
            std::thread::sleep(Duration::from_millis(60));
            7
        });
        assert_eq!(value, 7);
        assert!(reports >= 2, "{reports} reports");
    }

    #[test]
    fn a_short_call_is_not_reported() {
        let started = Instant::now();
        let (value, reports) = reporting_every(REPORT_EVERY, &|| "a short call".into(), || "done");
        assert_eq!((value, reports), ("done", 0));
        assert!(started.elapsed() < REPORT_EVERY);
    }
}
