//! Typed streams.

use crate::error::Error;
use crate::Device;
use brook_runtime::element::{as_bytes, as_bytes_mut};
use brook_runtime::{BError, Element, RawStream, RuntimeError};
use std::marker::PhantomData;

/// A stream of `T` on a device: `f32` is a `float` stream, `[f32; 4]` a `float4` stream, and a
/// struct declared with [`crate::brook_struct!`] a struct stream.
///
/// Dimensions are listed slowest first, as `float s<H, W>` is written (`&[h, w]`). As in
/// Brook+, [`Stream::read`] copies host data *into* the stream and [`Stream::write`] copies the
/// stream *out* to host memory.
#[derive(Clone, Debug)]
pub struct Stream<T: Element> {
    raw: RawStream,
    marker: PhantomData<T>,
}

impl<T: Element> Stream<T> {
    /// A zero-filled stream of the given shape (rank 1 to 4, every extent at least 1).
    pub fn new(device: &Device, dims: &[usize]) -> Result<Self, Error> {
        let raw = RawStream::new(device.raw(), T::element_type(), dims)?;
        Ok(Stream {
            raw,
            marker: PhantomData,
        })
    }

    /// A zero-filled stream with dimensions listed fastest first, as the Brook+ C++ API's
    /// `Stream<T>(rank, dims)` takes them (`&[w, h]` is the same stream as `new(&[h, w])`).
    pub fn new_x_first(device: &Device, dims_x_first: &[usize]) -> Result<Self, Error> {
        let dims: Vec<usize> = dims_x_first.iter().rev().copied().collect();
        Stream::new(device, &dims)
    }

    /// A stream holding `data`, of the given shape.
    pub fn from_slice(device: &Device, dims: &[usize], data: &[T]) -> Result<Self, Error> {
        let stream = Stream::new(device, dims)?;
        stream.read(data)?;
        Ok(stream)
    }

    /// Copies `host` (exactly one value per element, row-major) into the stream.
    pub fn read(&self, host: &[T]) -> Result<(), Error> {
        Ok(self.raw.read_bytes(&T::element_type(), as_bytes(host))?)
    }

    /// Copies the stream into `host` (exactly one value per element).
    pub fn write(&self, host: &mut [T]) -> Result<(), Error> {
        Ok(self
            .raw
            .write_bytes(&T::element_type(), as_bytes_mut(host))?)
    }

    /// The stream's elements in a new vector.
    pub fn to_vec(&self) -> Result<Vec<T>, Error> {
        let mut host = zeroed_vec(self.raw.len(), "Stream Write")?;
        self.write(&mut host)?;
        Ok(host)
    }

    /// Dimensions, slowest first.
    pub fn shape(&self) -> &[usize] {
        self.raw.shape()
    }

    pub fn len(&self) -> usize {
        self.raw.len()
    }

    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }

    /// The first error since the last call (`BR_NO_ERROR` if none), and clears it.
    pub fn error(&self) -> BError {
        self.raw.take_error()
    }

    /// Every error and warning logged on this stream.
    pub fn error_log(&self) -> String {
        self.raw.error_log()
    }

    /// The untyped stream, to replace (a vout's result; same element type).
    pub(crate) fn raw_mut(&mut self) -> &mut RawStream {
        &mut self.raw
    }

    /// The untyped stream.
    pub fn raw(&self) -> &RawStream {
        &self.raw
    }

    fn wrap(raw: RawStream) -> Stream<T> {
        Stream {
            raw,
            marker: PhantomData,
        }
    }

    /// The view of the box from `start` to `end` (exclusive), both slowest axis first with one
    /// value per dimension (Brook+ `domain`, which lists positions fastest first). The view
    /// shares this stream's memory: use it as a kernel input, output or gather array, read or
    /// write it, view it again; changes reach this stream at once.
    pub fn domain(&self, start: &[usize], end: &[usize]) -> Result<Stream<T>, Error> {
        let start: Vec<usize> = start.iter().rev().copied().collect();
        let end: Vec<usize> = end.iter().rev().copied().collect();
        Ok(Stream::wrap(self.raw.domain(&start, &end)?))
    }

    /// The view of the first `threads` elements of a one-dimensional stream (Brook+
    /// `execDomain`).
    pub fn exec_domain(&self, threads: usize) -> Result<Stream<T>, Error> {
        Ok(Stream::wrap(self.raw.exec_domain(threads)?))
    }

    /// Copies `source` (same shape, possibly on another device) into this stream.
    pub fn assign(&self, source: &Stream<T>) -> Result<(), Error> {
        Ok(self.raw.assign(&source.raw)?)
    }

    /// Whether every queued operation on this stream has finished (Brook+ `isSync`).
    pub fn is_sync(&self) -> bool {
        self.raw.is_sync()
    }

    /// Waits for the stream's queued operations; `Err` if the stream then holds an error.
    /// Calling it again returns at once.
    pub fn finish(&self) -> Result<(), Error> {
        if self.raw.finish() {
            return Ok(());
        }
        Err(Error::Stream {
            code: self.raw.error().unwrap_or(BError::Kernel),
            log: self.raw.error_log().trim_end().to_string(),
        })
    }

    /// Queues a copy of the stream to the host (Brook+ `write(ptr, "async")`); the returned
    /// [`PendingWrite`] gives the elements when they have arrived.
    pub fn write_async(&self) -> Result<PendingWrite<T>, Error> {
        Ok(PendingWrite {
            raw: self.raw.write_async(&T::element_type())?,
            len: self.raw.len(),
            marker: PhantomData,
        })
    }
}

/// A stream's contents on their way to the host.
pub struct PendingWrite<T: Element> {
    raw: brook_runtime::PendingWrite,
    len: usize,
    marker: PhantomData<T>,
}

impl<T: Element> PendingWrite<T> {
    /// Whether the transfer has finished.
    pub fn is_done(&self) -> bool {
        self.raw.is_done()
    }

    /// Waits for the transfer and returns the elements.
    pub fn wait(self) -> Result<Vec<T>, Error> {
        from_bytes(&self.raw.wait()?, self.len)
    }
}

/// `len` zero elements, or an error of `operation` when the memory cannot be had (a stream's
/// contents on the host are a data path: never an abort).
pub(crate) fn zeroed_vec<T: Element>(len: usize, operation: &str) -> Result<Vec<T>, Error> {
    // SAFETY: every bit pattern, all-zero included, is a valid `T` (the `Element` contract).
    let zero: T = unsafe { std::mem::zeroed() };
    let mut out = Vec::new();
    if out.try_reserve_exact(len).is_err() {
        let bytes = len.saturating_mul(std::mem::size_of::<T>());
        let message = format!(
            "{operation}: out of memory: a host vector of {bytes} bytes could not be allocated"
        );
        brook_runtime::log::append(&format!("error: {}: {message}", BError::Write));
        return Err(RuntimeError::Stream {
            code: BError::Write,
            message,
        }
        .into());
    }
    out.resize(len, zero);
    Ok(out)
}

/// `len` elements from their bytes (exactly `len` elements' worth).
pub(crate) fn from_bytes<T: Element>(bytes: &[u8], len: usize) -> Result<Vec<T>, Error> {
    let mut out = zeroed_vec(len, "Stream Write")?;
    as_bytes_mut(&mut out).copy_from_slice(bytes);
    Ok(out)
}
