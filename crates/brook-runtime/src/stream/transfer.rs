//! Moving stream contents: `read` (host to stream), `write` (stream to host), `assign` (stream
//! to stream, also across devices).
//!
//! As in Brook+, `read` is asynchronous: the host bytes are copied before it returns and the
//! transfer is queued on the device (`"nocopy"` therefore needs no special care). `write` waits
//! for the stream's queued work and returns the contents; [`RawStream::write_async`] queues the
//! transfer and returns a [`PendingWrite`] to collect it. A view's elements are transferred row
//! by row, in place in its parent's buffer.

use super::{lock, RawStream};
use crate::buffer::{Rows, Span, Strided};
use crate::element::ElementType;
use crate::error::{BError, RuntimeError};
use crate::queue::Ticket;
use std::sync::{Arc, Mutex};

type Slot = Arc<Mutex<Option<Result<Vec<u8>, RuntimeError>>>>;

/// A queued `write`: the stream's contents once the queue reaches it.
pub struct PendingWrite {
    stream: RawStream,
    ticket: Ticket,
    slot: Slot,
}

impl PendingWrite {
    /// Whether the transfer has finished.
    pub fn is_done(&self) -> bool {
        self.stream.device().queue().is_done(self.ticket)
    }

    /// Waits for the transfer and returns the stream's bytes.
    pub fn wait(self) -> Result<Vec<u8>, RuntimeError> {
        self.stream.device().queue().wait(self.ticket);
        let result = lock(&self.slot).take();
        result.unwrap_or_else(|| {
            // The job stopped without a result (a contained panic): the stream says so.
            let message = "Stream Write: the transfer did not complete";
            self.stream.record_error(BError::Write, message);
            Err(RuntimeError::Stream {
                code: BError::Write,
                message: message.into(),
            })
        })
    }
}

/// Host memory a `"nocopy"` transfer reads or writes when its job runs (address and length).
struct HostMemory(usize, usize);

impl RawStream {
    /// Copies host bytes (one element after another, C layout) into the stream.
    pub fn read_bytes(&self, element: &ElementType, bytes: &[u8]) -> Result<(), RuntimeError> {
        if let Err(e) = self.check_host("Stream Read", element, bytes.len()) {
            self.record_error(e.code(), &e.to_string());
            return Err(e);
        }
        if bytes.is_empty() {
            return Ok(()); // an empty view: nothing to copy, no device involved
        }
        let data = match crate::host_memory::copy_of("Stream Read", BError::Read, bytes) {
            Ok(data) => data,
            Err(e) => {
                self.record_error(e.code(), &e.to_string());
                return Err(e);
            }
        };
        let stream = self.clone();
        self.mark_initialized();
        let ticket = self.device().queue().submit(move || {
            if let Err(e) = stream.upload_now(&data) {
                stream.record_error(e.code(), &e.to_string());
            }
        });
        self.note_job(ticket);
        Ok(())
    }

    /// Brook+ `read(ptr, "nocopy")` on a whole stream: the transfer is queued and reads the host
    /// memory when it runs, without a staging copy (a GPU pins it). A view is read the usual
    /// way.
    ///
    /// # Safety
    /// `ptr` points at `len` readable bytes that stay valid and unchanged until the stream is
    /// in sync (`is_sync`, `finish`), as Brook+ requires of `"nocopy"`.
    pub unsafe fn read_in_place(
        &self,
        element: &ElementType,
        ptr: *const u8,
        len: usize,
    ) -> Result<(), RuntimeError> {
        if self.is_view() {
            // SAFETY: as documented.
            return self.read_bytes(element, unsafe { std::slice::from_raw_parts(ptr, len) });
        }
        if let Err(e) = self.check_host("Stream Read", element, len) {
            self.record_error(e.code(), &e.to_string());
            return Err(e);
        }
        if len == 0 {
            return Ok(()); // an empty view: nothing to pin or copy
        }
        let stream = self.clone();
        let host = HostMemory(ptr as usize, len);
        self.mark_initialized();
        let ticket = self.device().queue().submit(move || {
            // SAFETY: the caller keeps the memory valid until this job is done.
            let bytes = unsafe { std::slice::from_raw_parts(host.0 as *const u8, host.1) };
            let at = stream.addressing().offset * stream.element().size();
            let buffer = stream.buffer();
            let done = Span::new("Stream Read", buffer.as_ref(), at, bytes.len())
                .and_then(|to| stream.device().upload_in_place(to, bytes));
            if let Err(e) = done {
                stream.record_error(e.code(), &e.to_string());
            }
        });
        self.note_job(ticket);
        Ok(())
    }

    /// Brook+ `write(ptr, "nocopy")` of a whole stream: queued; the stream's elements land in
    /// the host memory when the job runs, without a staging copy. A view is written the usual
    /// way (at once).
    ///
    /// # Safety
    /// `ptr` points at `len` writable bytes that stay valid, and are not read, until the
    /// stream is in sync (`is_sync`, `finish`).
    pub unsafe fn write_in_place(
        &self,
        element: &ElementType,
        ptr: *mut u8,
        len: usize,
    ) -> Result<(), RuntimeError> {
        if self.is_view() {
            // SAFETY: as documented.
            let out = unsafe { std::slice::from_raw_parts_mut(ptr, len) };
            return self.write_bytes(element, out);
        }
        if let Err(e) = self.check_host("Stream Write", element, len) {
            self.record_error(e.code(), &e.to_string());
            return Err(e);
        }
        if len == 0 {
            return Ok(()); // an empty view: nothing to pin or copy
        }
        if !self.is_initialized() {
            self.record_warning(
                "Stream Write: Uninitialized stream: nothing was read into or computed in it; its elements are zero",
            );
        }
        let stream = self.clone();
        let host = HostMemory(ptr as usize, len);
        let ticket = self.device().queue().submit(move || {
            if stream.check_no_error("Stream Write").is_err() {
                return;
            }
            // SAFETY: the caller keeps the memory valid and unread until this job is done.
            let out = unsafe { std::slice::from_raw_parts_mut(host.0 as *mut u8, host.1) };
            let at = stream.addressing().offset * stream.element().size();
            let buffer = stream.buffer();
            let done = Span::new("Stream Write", buffer.as_ref(), at, out.len())
                .and_then(|from| stream.device().download_in_place(from, out));
            if let Err(e) = done {
                stream.record_error(e.code(), &e.to_string());
            }
        });
        self.note_job(ticket);
        Ok(())
    }

    /// `assign` from a stream of another device when both copy device to device (two GPUs):
    /// whole stream to whole stream directly; a view through a dense stream of its shape on
    /// its own device, filled or emptied there device to device. `None` where the devices
    /// cannot (then the copy goes through the host).
    fn assign_from_peer(&self, source: &RawStream) -> Option<Result<(), RuntimeError>> {
        if !(self.device().peer_copies() && source.device().peer_copies()) {
            return None;
        }
        if source.is_view() {
            let dense =
                match RawStream::new(source.device(), source.element().clone(), source.shape()) {
                    Ok(dense) => dense,
                    Err(e) => return Some(Err(e)),
                };
            if let Err(e) = dense.assign(source) {
                return Some(Err(e));
            }
            return self.assign_from_peer(&dense);
        }
        if self.is_view() {
            let dense = match RawStream::new(self.device(), self.element().clone(), self.shape()) {
                Ok(dense) => dense,
                Err(e) => return Some(Err(e)),
            };
            return match dense.assign_from_peer(source)? {
                Ok(()) => {
                    dense.mark_initialized();
                    Some(self.assign(&dense))
                }
                Err(e) => Some(Err(e)),
            };
        }
        if !source.finish() {
            return None;
        }
        let bytes = self.len() * self.element().size();
        let (target, giver) = (self.clone(), source.clone());
        self.device()
            .queue()
            .run(move || {
                let (source, sink) = (giver.buffer(), target.buffer());
                let spans = Span::new("Stream Assign", source.as_ref(), 0, bytes).and_then(|f| {
                    Span::new("Stream Assign", sink.as_ref(), 0, bytes).map(|t| (f, t))
                });
                match spans {
                    Ok((from, to)) => target.device().copy_from_peer(from, to).map(|done| {
                        // The source's later work (a write, its free) waits for the copy.
                        done?;
                        match target.device().mark()? {
                            Some(mark) => giver.device().wait_for_mark(&mark),
                            None => Ok(()),
                        }
                    }),
                    Err(e) => Some(Err(e)),
                }
            })
            .flatten()
    }

    /// Copies the stream's elements out to host bytes, after its queued work.
    pub fn write_bytes(&self, element: &ElementType, out: &mut [u8]) -> Result<(), RuntimeError> {
        if let Err(e) = self.check_host("Stream Write", element, out.len()) {
            self.record_error(e.code(), &e.to_string());
            return Err(e);
        }
        let bytes = self.write_async(element)?.wait()?;
        out.copy_from_slice(&bytes);
        Ok(())
    }

    /// Queues a copy of the stream's elements to the host; [`PendingWrite::wait`] returns them.
    pub fn write_async(&self, element: &ElementType) -> Result<PendingWrite, RuntimeError> {
        if let Err(e) = self.check_host("Stream Write", element, self.len() * element.size()) {
            self.record_error(e.code(), &e.to_string());
            return Err(e);
        }
        if !self.is_initialized() {
            self.record_warning(
                "Stream Write: Uninitialized stream: nothing was read into or computed in it; its elements are zero",
            );
        }
        let slot: Slot = Arc::default();
        let filled = slot.clone();
        let stream = self.clone();
        let ticket = self.device().queue().submit(move || {
            let result = stream
                .check_no_error("Stream Write")
                .and_then(|()| stream.download_now());
            match &result {
                Err(RuntimeError::StreamInError { code, .. }) => crate::log::append(&format!(
                    "error: Stream Write: the stream has an error ({code}); the host memory was not written"
                )),
                Err(e) => stream.record_error(e.code(), &e.to_string()),
                Ok(_) => {}
            }
            *lock(&filled) = Some(result);
        });
        self.note_job(ticket);
        Ok(PendingWrite {
            stream: self.clone(),
            ticket,
            slot,
        })
    }

    /// The stream's bytes after its queued work, for the runtime's own use (no warning for
    /// an uninitialized stream, no error recorded).
    pub(crate) fn contents(&self, operation: &'static str) -> Result<Vec<u8>, RuntimeError> {
        let stream = self.clone();
        self.device()
            .queue()
            .run(move || {
                stream
                    .check_no_error(operation)
                    .and_then(|()| stream.download_now())
            })
            .unwrap_or_else(|| {
                Err(RuntimeError::Stream {
                    code: BError::Read,
                    message: format!("{operation}: the transfer did not complete"),
                })
            })
    }

    /// Copies `source` into this stream (Brook+ `Stream::assign`): same element type and
    /// shape; the source may be on another device. Queued like a kernel launch.
    pub fn assign(&self, source: &RawStream) -> Result<(), RuntimeError> {
        let result = self.check_assign(source);
        if let Err(e) = &result {
            self.record_error(e.code(), &e.to_string());
            return result;
        }
        if self.is_empty() {
            return Ok(()); // an empty view: nothing to copy, no device involved
        }
        if !source.is_initialized() {
            self.record_warning("Stream Assign: Uninitialized input stream: its elements are zero");
        }
        self.mark_initialized();
        if !crate::device::same_device(self.device(), source.device()) {
            if let Some(result) = self.assign_from_peer(source) {
                if let Err(e) = &result {
                    self.record_error(e.code(), &format!("Stream Assign: {e}"));
                }
                return result;
            }
            let result = source
                .contents("Stream Assign")
                .and_then(|bytes| self.read_bytes(source.element(), &bytes));
            if let Err(e) = &result {
                self.record_error(
                    e.code(),
                    &format!("Stream Assign: Invalid input stream: {e}"),
                );
            }
            return result;
        }
        let (target, source) = (self.clone(), source.clone());
        let ticket = self.device().queue().submit(move || {
            if let Some(code) = source.error() {
                target.record_error(
                    code,
                    "Stream Assign: Invalid input stream: the source holds an error",
                );
            } else if let Err(e) = target.copy_now(&source) {
                target.record_error(e.code(), &e.to_string());
            }
        });
        self.note_job(ticket);
        Ok(())
    }

    fn check_assign(&self, source: &RawStream) -> Result<(), RuntimeError> {
        let problem = if !source.element().same_layout(self.element()) {
            format!(
                "Stream Assign: the source holds {} elements, the destination {}",
                source.element(),
                self.element()
            )
        } else if source.shape() != self.shape() {
            format!(
                "Stream Assign: Input stream rank and dimension doesn't match with destination: source {:?}, destination {:?}",
                source.shape(),
                self.shape()
            )
        } else if let Some(code) = source.error() {
            format!("Stream Assign: Invalid input stream: the source holds an error ({code})")
        } else {
            return Ok(());
        };
        Err(RuntimeError::Stream {
            code: BError::InvalidParameter,
            message: problem,
        })
    }

    /// On the queue: writes host bytes to the stream's elements (profiled: [`crate::profile`]).
    pub(crate) fn upload_now(&self, data: &[u8]) -> Result<(), RuntimeError> {
        if !crate::profile::profiling() {
            return self.upload_unprofiled(data);
        }
        let started = std::time::Instant::now();
        let result = self.upload_unprofiled(data);
        let device = self.device().info().to_string();
        crate::profile::record_transfer(&device, "to device", data.len() as u64, started.elapsed());
        result
    }

    fn upload_unprofiled(&self, data: &[u8]) -> Result<(), RuntimeError> {
        let size = self.element().size();
        let runs = self.addressing().runs(self.shape());
        let buffer = self.buffer();
        if let Some(rows) = Strided::of_runs(&runs, size) {
            let to = Rows::new("Stream Read", buffer.as_ref(), rows)?;
            return self.device().upload_strided(to, data);
        }
        let mut at = 0;
        for (first, len) in runs {
            let bytes = &data[at..at + len * size];
            let to = Span::new("Stream Read", buffer.as_ref(), first * size, bytes.len())?;
            self.device().upload(to, bytes)?;
            at += len * size;
        }
        Ok(())
    }

    /// On the queue: the stream's elements as host bytes (profiled: [`crate::profile`]).
    pub(crate) fn download_now(&self) -> Result<Vec<u8>, RuntimeError> {
        if !crate::profile::profiling() {
            return self.download_unprofiled();
        }
        let started = std::time::Instant::now();
        let result = self.download_unprofiled();
        let device = self.device().info().to_string();
        let bytes = result.as_ref().map_or(0, |b| b.len() as u64);
        crate::profile::record_transfer(&device, "to host", bytes, started.elapsed());
        result
    }

    fn download_unprofiled(&self) -> Result<Vec<u8>, RuntimeError> {
        if self.is_empty() {
            return Ok(Vec::new()); // an empty view: no device involved
        }
        let size = self.element().size();
        let mut out = crate::host_memory::zeroed("Stream Write", BError::Write, self.len() * size)?;
        let runs = self.addressing().runs(self.shape());
        let buffer = self.buffer();
        if let Some(rows) = Strided::of_runs(&runs, size) {
            let from = Rows::new("Stream Write", buffer.as_ref(), rows)?;
            self.device().download_strided(from, &mut out)?;
            return Ok(out);
        }
        let mut at = 0;
        for (first, len) in runs {
            let target = &mut out[at..at + len * size];
            let from = Span::new("Stream Write", buffer.as_ref(), first * size, target.len())?;
            self.device().download(from, target)?;
            at += len * size;
        }
        Ok(out)
    }

    /// On the queue: copies a stream of the same shape on the same device.
    pub(crate) fn copy_now(&self, source: &RawStream) -> Result<(), RuntimeError> {
        let size = self.element().size();
        let shape = self.shape();
        let (to, from) = (self.addressing(), source.addressing());
        let pairs: Vec<((usize, usize), (usize, usize))> =
            if to.is_contiguous(shape) && from.is_contiguous(shape) {
                vec![((to.offset, self.len()), (from.offset, self.len()))]
            } else {
                to.rows(shape).into_iter().zip(from.rows(shape)).collect()
            };
        let (from_buffer, to_buffer) = (source.buffer(), self.buffer());
        for ((to_first, len), (from_first, _)) in pairs {
            let bytes = len * size;
            let from = Span::new(
                "Stream Copy",
                from_buffer.as_ref(),
                from_first * size,
                bytes,
            )?;
            let to = Span::new("Stream Copy", to_buffer.as_ref(), to_first * size, bytes)?;
            self.device().copy(from, to)?;
        }
        Ok(())
    }

    fn check_host(
        &self,
        operation: &'static str,
        element: &ElementType,
        bytes: usize,
    ) -> Result<(), RuntimeError> {
        if !element.same_layout(self.element()) {
            return Err(RuntimeError::ElementType {
                operation,
                expected: self.element().to_string(),
                found: element.to_string(),
            });
        }
        let size = element.size().max(1);
        if bytes != self.len() * size {
            return Err(RuntimeError::HostLength {
                operation,
                expected: self.len(),
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
}
