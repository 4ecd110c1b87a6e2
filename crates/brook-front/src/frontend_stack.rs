//! The stack the frontends run on: deep (but bounded: each parser's `MAX_DEPTH`) nesting
//! recurses through parsing, checking and lowering, and unoptimised builds use large frames.

use std::sync::Mutex;

/// The frontend thread's stack. Only the pages touched are ever committed.
const FRONTEND_STACK_BYTES: usize = 256 << 20;

/// Runs `run(input)` on a thread with a stack large enough for the deepest nesting the
/// parsers accept; where no thread can be started, on this one. `placeholder` stands in for
/// an input already taken (which cannot happen: a thread that ran returns its result).
pub(crate) fn on_frontend_stack<I: Send, T: Send>(
    input: I,
    run: impl Fn(I) -> T + Sync,
    placeholder: impl FnOnce() -> I,
) -> T {
    let slot = Mutex::new(Some(input));
    let take = || slot.lock().ok().and_then(|mut held| held.take());
    let result = std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("brook-frontend".into())
            .stack_size(FRONTEND_STACK_BYTES)
            .spawn_scoped(scope, || take().map(&run));
        match spawned {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => None,
        }
    });
    result.unwrap_or_else(|| run(take().unwrap_or_else(placeholder)))
}
