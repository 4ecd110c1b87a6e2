//! The in-order work queue of a device.
//!
//! Brook+ work is asynchronous: a kernel launch or a `read` (host to stream) returns as soon as
//! it is queued, and `write` (stream to host) waits for it. Every device owns one [`Queue`]: a
//! worker thread that runs jobs one after another in submission order. A job is numbered by its
//! [`Ticket`]; because the queue is in order, "ticket `t` is done" means every job submitted
//! before it is done too, so a stream only needs to remember the ticket of its last job
//! (`is_sync`, `finish`).
//!
//! Jobs never wait for other jobs or other queues, and the worker never holds a lock while a
//! caller waits, so waiting cannot deadlock. A job that panics is contained: the worker keeps
//! running and the ticket still completes (the job's streams carry the error it recorded, if
//! any).
//!
//! A busy queue costs little per job (launch overhead): the worker takes every queued job at
//! once under the lock and runs them without it, the count of finished jobs is an atomic
//! that callers read without the lock, and each signal is sent only when someone sleeps on
//! it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// The number of a submitted job; later jobs have larger tickets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ticket(pub u64);

type Job = Box<dyn FnOnce() + Send + 'static>;

#[derive(Default)]
struct State {
    jobs: VecDeque<Job>,
    /// Tickets handed out so far (the last ticket is `submitted`).
    submitted: u64,
    worker_started: bool,
    /// The worker sleeps on `work` (so a submission must wake it).
    worker_idle: bool,
}

/// The shared state and its two signals.
#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    /// Every ticket up to this one has finished.
    completed: AtomicU64,
    /// Callers sleeping (or about to sleep) on `done`.
    waiters: AtomicUsize,
    /// Signalled when a job is queued while the worker is idle.
    work: Condvar,
    /// Signalled, under the lock, when a job finishes while callers wait.
    done: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn completed(&self) -> u64 {
        self.completed.load(Ordering::SeqCst)
    }

    /// Counts one more finished job and wakes the callers waiting, if any. A waiter counts
    /// itself in `waiters` before it looks at `completed` a last time (both sequentially
    /// consistent), and sleeps without letting go of the lock in between; the signal is sent
    /// under the lock. So either the waiter sees the new count, or this sees the waiter and
    /// signals after it sleeps.
    fn finish_one(&self) {
        self.completed.fetch_add(1, Ordering::SeqCst);
        if self.waiters.load(Ordering::SeqCst) > 0 {
            let _state = self.lock();
            self.done.notify_all();
        }
    }
}

/// An in-order queue served by one worker thread, started on the first submission.
pub struct Queue {
    name: String,
    shared: Arc<Shared>,
}

/// The worker's stack: compiling and interpreting a kernel recurse over its expression trees,
/// as deep as the frontend accepts (a sum of thousands of terms is a tree that deep). As with the
/// frontend's stack, only the pages touched are committed.
const WORKER_STACK_BYTES: usize = 256 << 20;

impl Queue {
    /// A queue whose worker thread is called `name`.
    pub fn new(name: impl Into<String>) -> Queue {
        Queue {
            name: name.into(),
            shared: Arc::new(Shared::default()),
        }
    }

    /// Queues `job` after every job submitted before it.
    pub fn submit(&self, job: impl FnOnce() + Send + 'static) -> Ticket {
        let mut state = self.shared.lock();
        if !state.worker_started {
            let shared = self.shared.clone();
            let spawned = std::thread::Builder::new()
                .name(self.name.clone())
                .stack_size(WORKER_STACK_BYTES)
                .spawn(move || serve(&shared));
            match spawned {
                Ok(_) => state.worker_started = true,
                Err(_) => {
                    // No thread to be had: run the job here, which keeps the order.
                    drop(state);
                    return self.run_inline(job);
                }
            }
        }
        state.jobs.push_back(Box::new(job));
        state.submitted += 1;
        let ticket = Ticket(state.submitted);
        let wake = state.worker_idle;
        drop(state);
        if wake {
            self.shared.work.notify_one();
        }
        ticket
    }

    fn run_inline(&self, job: impl FnOnce() + Send + 'static) -> Ticket {
        self.wait(Ticket(self.shared.lock().submitted));
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
        let mut state = self.shared.lock();
        state.submitted += 1;
        self.shared
            .completed
            .store(state.submitted, Ordering::SeqCst);
        Ticket(state.submitted)
    }

    /// Whether the job of `ticket` (and every earlier one) has finished.
    pub fn is_done(&self, ticket: Ticket) -> bool {
        self.shared.completed() >= ticket.0
    }

    /// Waits until the job of `ticket` (and every earlier one) has finished.
    pub fn wait(&self, ticket: Ticket) {
        if self.shared.completed() >= ticket.0 {
            return;
        }
        let mut state = self.shared.lock();
        self.shared.waiters.fetch_add(1, Ordering::SeqCst);
        while self.shared.completed() < ticket.0 {
            state = self
                .shared
                .done
                .wait(state)
                .unwrap_or_else(|p| p.into_inner());
        }
        self.shared.waiters.fetch_sub(1, Ordering::SeqCst);
        drop(state);
    }

    /// Waits for every job submitted so far.
    pub fn wait_all(&self) {
        let last = Ticket(self.shared.lock().submitted);
        self.wait(last);
    }

    /// Runs `job` on the queue after all earlier work and waits for its result.
    pub fn run<T: Send + 'static>(&self, job: impl FnOnce() -> T + Send + 'static) -> Option<T> {
        let slot = Arc::new(Mutex::new(None));
        let filled = slot.clone();
        let ticket = self.submit(move || {
            let value = job();
            *filled.lock().unwrap_or_else(|p| p.into_inner()) = Some(value);
        });
        self.wait(ticket);
        let value = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
        value
    }
}

fn serve(shared: &Shared) {
    // The queue's jobs are swapped with this (empty) one, so both keep their capacity: a
    // submission does not allocate the queue anew after every batch the worker takes.
    let mut jobs = VecDeque::new();
    loop {
        {
            let mut state = shared.lock();
            while state.jobs.is_empty() {
                state.worker_idle = true;
                state = shared.work.wait(state).unwrap_or_else(|p| p.into_inner());
                state.worker_idle = false;
            }
            std::mem::swap(&mut state.jobs, &mut jobs);
        }
        for job in jobs.drain(..) {
            // A panicking job must not stop the queue or leave its waiters hanging.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
            shared.finish_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn jobs_run_in_submission_order() {
        let queue = Queue::new("test-queue");
        let seen = Arc::new(Mutex::new(Vec::new()));
        for i in 0..100 {
            let seen = seen.clone();
            queue.submit(move || seen.lock().unwrap().push(i));
        }
        queue.wait_all();
        assert_eq!(*seen.lock().unwrap(), (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn tickets_complete_in_order_and_run_returns_values() {
        let queue = Queue::new("test-queue");
        let count = Arc::new(AtomicUsize::new(0));
        let c = count.clone();
        let first = queue.submit(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            c.fetch_add(1, Ordering::SeqCst);
        });
        assert_eq!(queue.run(|| 7), Some(7));
        assert!(queue.is_done(first));
        assert_eq!(count.load(Ordering::SeqCst), 1);
    }

    /// Callers on several threads wait for jobs that finish while they start to wait: no
    /// wake-up is lost (a lost one would hang here) and every ticket is done when waited for.
    #[test]
    fn waiters_on_many_threads_see_every_job_finish() {
        let queue = Arc::new(Queue::new("test-queue"));
        let finished = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (queue, finished) = (queue.clone(), finished.clone());
                std::thread::spawn(move || {
                    for i in 0..2000 {
                        let f = finished.clone();
                        let ticket = queue.submit(move || {
                            f.fetch_add(1, Ordering::SeqCst);
                        });
                        if i % 3 == 0 {
                            queue.wait(ticket);
                            assert!(queue.is_done(ticket));
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("a caller thread");
        }
        queue.wait_all();
        assert_eq!(finished.load(Ordering::SeqCst), 8000);
    }

    #[test]
    fn a_panicking_job_does_not_stop_the_queue() {
        let queue = Queue::new("test-queue");
        let ticket = queue.submit(|| panic!("job failure"));
        queue.wait(ticket);
        assert_eq!(queue.run(|| "still running"), Some("still running"));
    }
}
