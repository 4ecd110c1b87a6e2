//! Untyped streams: a device buffer with a shape, an element type and a Brook+ error state.
//!
//! Shapes are slowest dimension first (`float a<H, W>` is `[H, W]`), rank 1 to 4, every extent
//! at least 1. `read` copies host memory into the stream and `write` copies the stream out, as
//! in Brook+ (`streamRead`/`streamWrite`); each copies once, straight between the host slice
//! and the device buffer. An error is kept on the stream (first code, accumulated log) as
//! Brook+ does, and also returned.

use crate::device::{Buffer, Device};
use crate::element::ElementType;
use crate::error::{BError, RuntimeError};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// The largest rank of a stream.
pub const MAX_RANK: usize = 4;

/// Checks a shape: rank 1 to 4, no zero extent, and a byte size that fits in memory.
pub fn check_shape(dims: &[usize], element_size: usize) -> Result<usize, RuntimeError> {
    let problem = if dims.is_empty() || dims.len() > MAX_RANK {
        Some("a stream has 1 to 4 dimensions")
    } else if dims.contains(&0) {
        Some("every dimension must be at least 1")
    } else {
        None
    };
    if let Some(problem) = problem {
        return Err(RuntimeError::Shape {
            dims: dims.to_vec(),
            problem,
        });
    }
    let len = dims
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .filter(|n| {
            n.checked_mul(element_size)
                .is_some_and(|b| b <= isize::MAX as usize)
        });
    len.ok_or_else(|| RuntimeError::Shape {
        dims: dims.to_vec(),
        problem: "the stream is larger than the address space",
    })
}

#[derive(Debug, Default)]
struct StreamState {
    error: Option<BError>,
    log: String,
    /// Written by `read`, a kernel or a copy at least once.
    initialized: bool,
}

struct StreamInner {
    id: u64,
    device: Arc<dyn Device>,
    buffer: Arc<dyn Buffer>,
    shape: Vec<usize>,
    len: usize,
    element: ElementType,
    state: Mutex<StreamState>,
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
            self.inner.shape,
            self.inner.device.info()
        )
    }
}

impl RawStream {
    pub fn new(
        device: &Arc<dyn Device>,
        element: ElementType,
        dims: &[usize],
    ) -> Result<RawStream, RuntimeError> {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let len = check_shape(dims, element.size())?;
        let buffer = device.allocate(len * element.size())?;
        Ok(RawStream {
            inner: Arc::new(StreamInner {
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                device: device.clone(),
                buffer,
                shape: dims.to_vec(),
                len,
                element,
                state: Mutex::new(StreamState::default()),
            }),
        })
    }

    /// A number unique to this stream (shared by its clones).
    pub fn id(&self) -> u64 {
        self.inner.id
    }

    pub fn device(&self) -> &Arc<dyn Device> {
        &self.inner.device
    }

    pub fn buffer(&self) -> &Arc<dyn Buffer> {
        &self.inner.buffer
    }

    /// Dimensions, slowest first.
    pub fn shape(&self) -> &[usize] {
        &self.inner.shape
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
        // A panic while the lock was held cannot leave the state inconsistent: recover it.
        self.inner
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Copies host bytes (one element after another, C layout) into the stream.
    pub fn read_bytes(&self, element: &ElementType, bytes: &[u8]) -> Result<(), RuntimeError> {
        let result = self
            .check_host("Stream Read", element, bytes.len())
            .and_then(|()| {
                self.inner
                    .device
                    .upload(self.inner.buffer.as_ref(), 0, bytes)
            });
        match &result {
            Ok(()) => self.state().initialized = true,
            Err(e) => self.record_error(e.code(), &e.to_string()),
        }
        result
    }

    /// Copies the stream's elements out to host bytes.
    pub fn write_bytes(&self, element: &ElementType, out: &mut [u8]) -> Result<(), RuntimeError> {
        let result = self
            .check_host("Stream Write", element, out.len())
            .and_then(|()| self.check_no_error("Stream Write"))
            .and_then(|()| {
                self.inner
                    .device
                    .download(self.inner.buffer.as_ref(), 0, out)
            });
        if let Err(e) = &result {
            if !matches!(e, RuntimeError::StreamInError { .. }) {
                self.record_error(e.code(), &e.to_string());
            }
        }
        result
    }

    fn check_host(
        &self,
        operation: &'static str,
        element: &ElementType,
        bytes: usize,
    ) -> Result<(), RuntimeError> {
        if !element.same_layout(&self.inner.element) {
            return Err(RuntimeError::ElementType {
                operation,
                expected: self.inner.element.to_string(),
                found: element.to_string(),
            });
        }
        let size = element.size().max(1);
        if bytes != self.inner.len * size {
            return Err(RuntimeError::HostLength {
                operation,
                expected: self.inner.len,
                found: bytes / size,
            });
        }
        Ok(())
    }

    fn check_no_error(&self, operation: &'static str) -> Result<(), RuntimeError> {
        let state = self.state();
        match state.error {
            Some(code) => Err(RuntimeError::StreamInError {
                operation,
                code,
                log: state.log.trim_end().to_string(),
            }),
            None => Ok(()),
        }
    }

    /// Records an error: the first code is kept, the log accumulates.
    pub fn record_error(&self, code: BError, message: &str) {
        let mut state = self.state();
        state.error.get_or_insert(code);
        state.log.push_str(message);
        state.log.push('\n');
    }

    /// Appends a warning to the log without setting an error code.
    pub fn record_warning(&self, message: &str) {
        let mut state = self.state();
        state.log.push_str("warning: ");
        state.log.push_str(message);
        state.log.push('\n');
    }

    /// The first error since the last call, and clears it (Brook+ `Stream::error()`).
    pub fn take_error(&self) -> BError {
        self.state().error.take().unwrap_or(BError::NoError)
    }

    /// The error code without clearing it.
    pub fn error(&self) -> Option<BError> {
        self.state().error
    }

    /// Every error and warning logged on this stream (Brook+ `Stream::errorLog()`).
    pub fn error_log(&self) -> String {
        self.state().log.clone()
    }

    pub fn is_initialized(&self) -> bool {
        self.state().initialized
    }

    pub fn mark_initialized(&self) {
        self.state().initialized = true;
    }

    /// Whether two handles are the same stream.
    pub fn same_stream(&self, other: &RawStream) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}
