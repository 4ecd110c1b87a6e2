//! Typed streams.

use crate::error::Error;
use crate::Device;
use brook_runtime::element::{as_bytes, as_bytes_mut};
use brook_runtime::{BError, Element, RawStream};
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
        // SAFETY: every bit pattern, all-zero included, is a valid `T` (the `Element` contract).
        let first: T = unsafe { std::mem::zeroed() };
        let mut host = vec![first; self.raw.len()];
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

    /// The untyped stream.
    pub fn raw(&self) -> &RawStream {
        &self.raw
    }
}
