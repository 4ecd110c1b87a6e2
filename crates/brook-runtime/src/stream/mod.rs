//! Untyped streams: a device buffer with a shape, an element type and a Brook+ error state.
//!
//! Shapes are slowest dimension first (`float a<H, W>` is `[H, W]`), rank 1 to 4, every extent
//! at least 1. A stream either owns a row-major buffer or is a `domain()` view sharing its
//! parent's ([`addressing`]). Transfers and kernel launches go through the device's in-order
//! queue ([`crate::queue`]): `read` (host to stream) and launches return once queued, `write`
//! (stream to host) waits (`transfer`). An error is kept on the stream (first code,
//! accumulated log) as Brook+ does, and also returned.

pub mod addressing;
pub mod shape;
mod transfer;
mod view;

pub use addressing::{Addressing, Region};
pub use shape::{check_shape, MAX_RANK};
pub use transfer::PendingWrite;

use crate::buffer::Buffer;
use crate::device::Device;
use crate::element::ElementType;
use crate::error::{BError, RuntimeError};
use crate::queue::Ticket;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

#[derive(Debug, Default)]
struct StreamState {
    error: Option<BError>,
    log: String,
}

/// What a stream shares with its views: the buffer, and facts about the buffer's contents.
struct Storage {
    device: Arc<dyn Device>,
    buffer: Arc<dyn Buffer>,
    root_shape: Vec<usize>,
    /// Written by `read`, a kernel or a copy at least once.
    initialized: AtomicBool,
    /// The last queued job that touches the buffer.
    last_job: Mutex<Ticket>,
}

struct StreamInner {
    id: u64,
    storage: Arc<Storage>,
    /// The box of the root stream this stream is (the whole root for a new stream).
    region: Region,
    len: usize,
    element: ElementType,
    state: Mutex<StreamState>,
    /// The stream this view was made from (`None` for a new stream): an error recorded on a
    /// view is also the program's stream's error (Brook+ `s.domain(..)` temporaries).
    parent: Option<RawStream>,
}

/// A stream of any element type. Clones share the stream.
#[derive(Clone)]
pub struct RawStream {
    inner: Arc<StreamInner>,
}

impl std::fmt::Debug for RawStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "RawStream({} {:?} on {})",
            self.inner.element,
            self.inner.region.shape,
            self.device().info()
        )
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while a lock was held cannot leave these plain values inconsistent: recover.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn next_id() -> u64 {
    static NEXT_ID: AtomicU64 = AtomicU64::new(1);
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

impl RawStream {
    /// A zero-filled stream of `dims` (slowest first) on `device`.
    pub fn new(
        device: &Arc<dyn Device>,
        element: ElementType,
        dims: &[usize],
    ) -> Result<RawStream, RuntimeError> {
        let len = check_shape(dims, element.size())?;
        let buffer = device.allocate(len * element.size())?;
        Ok(RawStream::with_buffer(device, element, dims, buffer))
    }

    /// A stream of `dims` (checked) over `buffer` (exactly its bytes).
    pub(crate) fn with_buffer(
        device: &Arc<dyn Device>,
        element: ElementType,
        dims: &[usize],
        buffer: Arc<dyn Buffer>,
    ) -> RawStream {
        let len = dims.iter().product();
        RawStream {
            inner: Arc::new(StreamInner {
                id: next_id(),
                storage: Arc::new(Storage {
                    device: device.clone(),
                    buffer,
                    root_shape: dims.to_vec(),
                    initialized: AtomicBool::new(false),
                    last_job: Mutex::new(Ticket::default()),
                }),
                region: Region {
                    origin: vec![0; dims.len()],
                    shape: dims.to_vec(),
                },
                len,
                element,
                state: Mutex::new(StreamState::default()),
                parent: None,
            }),
        }
    }

    /// A one-dimensional stream of no elements: what a vout kernel whose instances pushed
    /// nothing leaves (ordinary declarations need at least one element).
    pub fn empty(
        device: &Arc<dyn Device>,
        element: ElementType,
    ) -> Result<RawStream, RuntimeError> {
        let stream = RawStream::new(device, element, &[1])?;
        let inner = StreamInner {
            id: next_id(),
            storage: stream.inner.storage.clone(),
            region: Region {
                origin: vec![0],
                shape: vec![0],
            },
            len: 0,
            element: stream.inner.element.clone(),
            state: Mutex::new(StreamState::default()),
            parent: None,
        };
        let empty = RawStream {
            inner: Arc::new(inner),
        };
        empty.mark_initialized();
        Ok(empty)
    }

    /// A view of `region` of this stream's root, sharing the buffer.
    fn view(&self, region: Region) -> RawStream {
        let view = RawStream {
            inner: Arc::new(StreamInner {
                id: next_id(),
                storage: self.inner.storage.clone(),
                len: region.shape.iter().product(),
                region,
                element: self.inner.element.clone(),
                state: Mutex::new(StreamState::default()),
                parent: Some(self.clone()),
            }),
        };
        if let Some(code) = self.error() {
            crate::log::append(&format!(
                "error: {code}: Domain Operator: the parent stream holds an error"
            ));
            view.keep_error(code, "Domain Operator: the parent stream holds an error");
        }
        view
    }

    /// A number unique to this stream (shared by its clones, not by its views).
    pub fn id(&self) -> u64 {
        self.inner.id
    }

    pub fn device(&self) -> &Arc<dyn Device> {
        &self.inner.storage.device
    }

    pub fn buffer(&self) -> &Arc<dyn Buffer> {
        &self.inner.storage.buffer
    }

    /// Dimensions, slowest first.
    pub fn shape(&self) -> &[usize] {
        &self.inner.region.shape
    }

    /// Where the elements lie in the buffer.
    pub fn addressing(&self) -> Addressing {
        let root = Addressing::row_major(&self.inner.storage.root_shape);
        Addressing {
            offset: root.element(&self.inner.region.origin),
            pitches: root.pitches,
        }
    }

    /// Whether this stream is a view of part of a larger buffer.
    pub fn is_view(&self) -> bool {
        self.inner.region.shape != self.inner.storage.root_shape
    }

    /// Whether two streams use the same buffer (a stream, its clones and its views).
    pub fn shares_buffer(&self, other: &RawStream) -> bool {
        Arc::ptr_eq(&self.inner.storage, &other.inner.storage)
    }

    /// Whether two streams share an element.
    pub fn overlaps(&self, other: &RawStream) -> bool {
        self.shares_buffer(other) && self.inner.region.overlaps(&other.inner.region)
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.inner.len
    }

    pub fn is_empty(&self) -> bool {
        self.inner.len == 0
    }

    pub fn element(&self) -> &ElementType {
        &self.inner.element
    }

    fn state(&self) -> MutexGuard<'_, StreamState> {
        lock(&self.inner.state)
    }

    /// Records an error: the first code is kept, the log accumulates (and `BRT_LOG_FILE`).
    /// A view's error is also kept by every stream it was made from, so `s.error()` sees a
    /// failure recorded on `s.domain(..)`.
    pub fn record_error(&self, code: BError, message: &str) {
        crate::log::append(&format!("error: {code}: {message}"));
        let mut stream = Some(self);
        while let Some(s) = stream {
            s.keep_error(code, message);
            stream = s.inner.parent.as_ref();
        }
    }

    /// Records an error in this stream's state only, printing nothing (it was printed where
    /// it happened).
    pub(crate) fn keep_error(&self, code: BError, message: &str) {
        let mut state = self.state();
        state.error.get_or_insert(code);
        state.log.push_str(message);
        state.log.push('\n');
    }

    /// Appends a warning to the log (and `BRT_LOG_FILE`) without setting an error code.
    pub fn record_warning(&self, message: &str) {
        crate::log::append(&format!("warning: {message}"));
        let mut state = self.state();
        state.log.push_str("warning: ");
        state.log.push_str(message);
        state.log.push('\n');
    }

    /// The first error since the last call, and clears it (Brook+ `Stream::error()`). Waits
    /// for the stream's queued work, whose errors count.
    pub fn take_error(&self) -> BError {
        self.finish();
        self.state().error.take().unwrap_or(BError::NoError)
    }

    /// The error code recorded so far, without waiting or clearing it.
    pub fn error(&self) -> Option<BError> {
        self.state().error
    }

    /// Every error and warning logged on this stream (Brook+ `Stream::errorLog()`), after the
    /// stream's queued work.
    pub fn error_log(&self) -> String {
        self.finish();
        self.state().log.clone()
    }

    pub fn is_initialized(&self) -> bool {
        self.inner.storage.initialized.load(Ordering::Acquire)
    }

    pub fn mark_initialized(&self) {
        self.inner
            .storage
            .initialized
            .store(true, Ordering::Release);
    }

    /// Whether two handles are the same stream.
    pub fn same_stream(&self, other: &RawStream) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Notes that `ticket` (a job on this stream's device queue) touches this stream.
    pub fn note_job(&self, ticket: crate::queue::Ticket) {
        let mut last = lock(&self.inner.storage.last_job);
        *last = (*last).max(ticket);
    }

    fn last_job(&self) -> Ticket {
        *lock(&self.inner.storage.last_job)
    }

    /// Whether every queued operation on this stream has finished (Brook+ `isSync`).
    pub fn is_sync(&self) -> bool {
        self.device().queue().is_done(self.last_job()) && self.device().idle()
    }

    /// Waits for every queued operation on this stream (Brook+ `finish`). Returns whether the
    /// stream is free of errors. Calling it again, or with nothing queued, returns at once.
    pub fn finish(&self) -> bool {
        self.device().queue().wait(self.last_job());
        if let Err(e) = self.device().settle() {
            self.record_error(crate::BError::Kernel, &e.to_string());
        }
        self.error().is_none()
    }
}
