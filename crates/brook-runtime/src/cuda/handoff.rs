//! Bytes between a GPU stream and another rank while the host goes on
//! ([`Device::upload_later`], [`Device::download_later`]).
//!
//! An upload whose bytes come later: the stream runs a host function that waits for a counter
//! (`cuLaunchHostFunc`: the driver holds the stream's later work until it returns; every
//! driver has it, where waits on memory, `cuStreamWaitValue32`, may be missing, and both
//! measured the same), then copies from a page-locked staging block; a helper thread (one per stream) asks for the bytes, writes them
//! into the block and raises the counter. A download for another rank: the stream copies into
//! a staging block and records an event; the helper waits for the event and gives the bytes
//! on. The helper runs both kinds in the order they were queued, as the stream runs its copies
//! and every rank its requests (the order rank 0 queued them in), so no wait depends on a
//! later one; the host functions wait only for the helper.
//!
//! A failure (bytes that never came, a copy that failed) still raises the counter and still
//! gives bytes (zeros): neither the GPU nor another rank waits for ever. It is kept and
//! returned by the device's next wait ([`Handoff::take_failure`]). Where the driver refuses
//! the host function, the upload takes its bytes on the caller's thread.
//!
//! [`Device::upload_later`]: crate::Device::upload_later
//! [`Device::download_later`]: crate::Device::download_later

use super::driver::{check, Event, Handles};
use crate::device::{check_later_len, BytesSink, LaterBytes};
use crate::queue::Queue;
use cudarc::driver::sys;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// A staging block and the event after the stream's last copy of it, if still to come.
type FreeBlock = (Block, Option<Event>);

/// The staging blocks, the counter and the helper thread of one GPU stream.
pub(super) struct Handoff {
    helper: Queue,
    /// The counter the stream's host functions wait on.
    counter: Arc<Counter>,
    /// The last value handed out for the counter.
    next: AtomicU32,
    /// Blocks free for use once their event (the stream's last copy of them) is done.
    free: Arc<Mutex<Vec<FreeBlock>>>,
    /// The first failure since the device's last wait.
    failure: Arc<Mutex<Option<String>>>,
    /// Held while a transfer is queued on the stream and the helper, so that both see the
    /// transfers in one order (a device may be used from two threads: a rank's own and, in
    /// a job of threads, another rank's).
    queuing: Mutex<()>,
}

impl Handoff {
    pub(super) fn new(name: &str) -> Handoff {
        Handoff {
            helper: Queue::new(format!("{name}-handoff")),
            counter: Arc::default(),
            next: AtomicU32::new(0),
            free: Arc::default(),
            failure: Arc::default(),
            queuing: Mutex::new(()),
        }
    }

    /// Waits for the helper's work, then returns the first failure since the last call.
    pub(super) fn take_failure(&self) -> Result<(), String> {
        self.helper.wait_all();
        match lock(&self.failure).take() {
            Some(why) => Err(why),
            None => Ok(()),
        }
    }

    /// Queues on `handles`' stream an upload into `target` (`len` bytes) of what `bytes`
    /// gives. `Ok(Some(bytes))` hands them back where the driver refused the host function:
    /// nothing was queued.
    pub(super) fn upload_later(
        &self,
        handles: &Handles,
        target: sys::CUdeviceptr,
        len: usize,
        bytes: LaterBytes,
    ) -> Result<Option<LaterBytes>, String> {
        let _in_order = lock(&self.queuing);
        let block = self.block(len)?;
        // A value skipped after a failed wait is harmless: the waits are "at least".
        let value = self.next.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
        if wait_on_stream(handles, &self.counter, value).is_err() {
            lock(&self.free).push((block, None));
            return Ok(Some(bytes));
        }
        // SAFETY: the block is page-locked and at least `len` long; the stream reads it after
        // the counter reaches `value`, which the helper raises once the bytes are in.
        let code = unsafe {
            sys::cuMemcpyHtoDAsync_v2(target, block.ptr as *const c_void, len, handles.stream)
        };
        let copied = check(code, "copying bytes from another rank to the GPU");
        let done = Event::after(handles);
        let counter = self.counter.clone();
        let (free, failure) = (self.free.clone(), self.failure.clone());
        self.helper.submit(move || {
            let filled = guarded(|| {
                let data = bytes().map_err(|e| e.to_string())?;
                fill(&block, len, &data)
            });
            counter.raise(value);
            if let Err(why) = filled {
                keep(&failure, why);
            }
            match done {
                Ok(event) => lock(&free).push((block, Some(event))),
                // Nothing tells when the stream is done with it: never used again.
                Err(_) => std::mem::forget(block),
            }
        });
        copied?;
        Ok(None)
    }

    /// Queues on `handles`' stream a download of `source` (`len` bytes), whose bytes the
    /// helper gives to `sink` once the stream has copied them.
    pub(super) fn download_later(
        &self,
        handles: &Handles,
        source: sys::CUdeviceptr,
        len: usize,
        sink: BytesSink,
    ) -> Result<(), String> {
        let _in_order = lock(&self.queuing);
        let block = match self.block(len) {
            Ok(block) => block,
            Err(why) => return Err(refuse(sink, len, why)),
        };
        // SAFETY: the block is page-locked and at least `len` long; it is read after the
        // event recorded behind the copy.
        let code = unsafe {
            sys::cuMemcpyDtoHAsync_v2(block.ptr as *mut c_void, source, len, handles.stream)
        };
        let copied = check(code, "copying bytes for another rank from the GPU");
        let done = copied.and_then(|()| Event::after(handles));
        let (free, failure) = (self.free.clone(), self.failure.clone());
        let handles = *handles;
        self.helper.submit(move || {
            let ready = done.and_then(|event| {
                handles.bind()?;
                super::watch::wait(&handles, "a copy for another rank", || event.query())
            });
            let zeros;
            let bytes: &[u8] = match &ready {
                // SAFETY: the copy into the block is done.
                Ok(()) => unsafe { std::slice::from_raw_parts(block.ptr as *const u8, len) },
                Err(_) => {
                    zeros = vec![0; len];
                    &zeros
                }
            };
            let given = guarded(|| sink(bytes).map_err(|e| e.to_string()));
            if let Err(why) = ready.and(given) {
                keep(&failure, why);
            }
            lock(&free).push((block, None));
        });
        Ok(())
    }

    /// A free block of at least `len` bytes whose last copy is done, or a new one.
    fn block(&self, len: usize) -> Result<Block, String> {
        let mut free = lock(&self.free);
        let usable = free.iter().position(|(block, event)| {
            block.len >= len
                && event
                    .as_ref()
                    .is_none_or(|e| e.query() == sys::CUresult::CUDA_SUCCESS)
        });
        match usable {
            Some(at) => Ok(free.swap_remove(at).0),
            None => Block::new(len.max(MIN_BLOCK).next_power_of_two()),
        }
    }
}

/// Gives `sink` zeros (the receiver is not left waiting) where a download could not be
/// queued; returns `why`.
pub(super) fn refuse(sink: BytesSink, len: usize, why: String) -> String {
    let _ = sink(&vec![0; len]);
    why
}

/// The smallest staging block (a halo row of a few thousand floats fits).
const MIN_BLOCK: usize = 64 << 10;

/// Runs `work`, a panic in it taken as a failure (the counter must still be raised).
fn guarded(work: impl FnOnce() -> Result<(), String>) -> Result<(), String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
        .unwrap_or_else(|_| Err("a transfer from another rank panicked".into()))
}

fn fill(block: &Block, len: usize, data: &[u8]) -> Result<(), String> {
    check_later_len(len, data.len()).map_err(|e| e.to_string())?;
    // SAFETY: the block is at least `len` long and the stream reads it only after the counter
    // is raised, after this.
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), block.ptr as *mut u8, len) };
    Ok(())
}

fn keep(failure: &Mutex<Option<String>>, why: String) {
    lock(failure).get_or_insert(why);
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Page-locked host memory, freed when dropped.
struct Block {
    ptr: usize,
    len: usize,
}

impl Block {
    fn new(len: usize) -> Result<Block, String> {
        let mut ptr = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the caller's thread has the context current.
        let code = unsafe { sys::cuMemHostAlloc(&mut ptr, len, sys::CU_MEMHOSTALLOC_PORTABLE) };
        check(
            code,
            "allocating page-locked memory for another rank's bytes",
        )?;
        Ok(Block {
            ptr: ptr as usize,
            len,
        })
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        // SAFETY: allocated by `Block::new`; no copy uses it any more.
        unsafe { sys::cuMemFreeHost(self.ptr as *mut c_void) };
    }
}

/// A counter that host functions on a stream wait on and the helper raises.
#[derive(Default)]
struct Counter {
    value: Mutex<u32>,
    raised: Condvar,
}

impl Counter {
    fn raise(&self, value: u32) {
        *lock(&self.value) = value;
        self.raised.notify_all();
    }

    /// Waits until the counter reaches `value` (as sequence numbers wrap: the difference,
    /// taken as signed, is not negative).
    fn wait_for(&self, value: u32) {
        let mut now = lock(&self.value);
        while (now.wrapping_sub(value) as i32) < 0 {
            now = self.raised.wait(now).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// Queues on the stream a host function that waits for `counter` to reach `value`.
fn wait_on_stream(handles: &Handles, counter: &Arc<Counter>, value: u32) -> Result<(), String> {
    let waiting = Box::into_raw(Box::new((counter.clone(), value)));
    // SAFETY: `run_wait` takes the box back exactly once; the context is current.
    let code = unsafe { sys::cuLaunchHostFunc(handles.stream, Some(run_wait), waiting.cast()) };
    let queued = check(code, "cuLaunchHostFunc");
    if queued.is_err() {
        // SAFETY: the driver did not take it.
        drop(unsafe { Box::from_raw(waiting) });
    }
    queued
}

/// The host function of [`wait_on_stream`]: it must not unwind into the driver.
unsafe extern "C" fn run_wait(waiting: *mut c_void) {
    // SAFETY: made by `Box::into_raw` in `wait_on_stream`, given to this function once.
    let waiting = unsafe { Box::from_raw(waiting.cast::<(Arc<Counter>, u32)>()) };
    let _ = std::panic::catch_unwind(|| waiting.0.wait_for(waiting.1));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_ends_once_the_counter_reaches_its_value_across_the_wrap() {
        let counter = Arc::new(Counter::default());
        let waiter = {
            let counter = counter.clone();
            std::thread::spawn(move || counter.wait_for(2))
        };
        counter.raise(1);
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(!waiter.is_finished(), "the wait ended before its value");
        counter.raise(2);
        waiter.join().expect("the wait ends");
        // Values are sequence numbers: 1 comes after u32::MAX.
        counter.raise(1);
        counter.wait_for(u32::MAX);
        counter.wait_for(0);
    }
}
