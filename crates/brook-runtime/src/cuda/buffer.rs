//! Device memory on a GPU: stream-ordered allocations (`cuMemAllocAsync`), zeroed when made
//! (except scratch arrays) and freed on the device's stream after the work queued before the free;
//! or memory another library made on the GPU (PyTorch's, CuPy's through DLPack), kept alive
//! by the buffer and never freed by it.

use super::driver::{check, Handles};
use crate::buffer::{Buffer, Span};
use crate::shared_memory::ForeignMemory;
use cudarc::driver::sys;
use std::any::Any;

pub struct CudaBuffer {
    ptr: sys::CUdeviceptr,
    len: usize,
    handles: Handles,
    /// For memory another library made ([`CudaBuffer::adopt`]): what keeps it valid. `None`
    /// for the buffer's own allocation.
    foreign: Option<Box<dyn Any + Send + Sync>>,
}

impl CudaBuffer {
    /// `bytes` zeroed bytes of device memory.
    pub fn new(handles: Handles, bytes: usize) -> Result<CudaBuffer, String> {
        let buffer = CudaBuffer::uninit(handles, bytes)?;
        // SAFETY: the allocation is `bytes.max(1)` long and ordered before the memset on the
        // same stream.
        unsafe {
            check(
                sys::cuMemsetD8Async(buffer.ptr, 0, bytes.max(1), handles.stream),
                "cuMemsetD8Async",
            )?;
        }
        Ok(buffer)
    }

    /// `bytes` bytes of device memory with undefined contents, for scratch arrays that the
    /// next kernel writes whole before anything reads them (no memset queued).
    pub fn uninit(handles: Handles, bytes: usize) -> Result<CudaBuffer, String> {
        handles.bind()?;
        let mut ptr = 0;
        // SAFETY: valid out-pointer; the stream belongs to the bound context.
        unsafe {
            check(
                sys::cuMemAllocAsync(&mut ptr, bytes.max(1), handles.stream),
                &format!("allocating {bytes} bytes on the GPU"),
            )?;
        }
        Ok(CudaBuffer {
            ptr,
            len: bytes,
            handles,
            foreign: None,
        })
    }

    /// A buffer over device memory another library made on this GPU (valid while
    /// `memory.keep` lives, which the buffer holds until the work queued on it is done).
    pub fn adopt(handles: Handles, memory: ForeignMemory) -> CudaBuffer {
        CudaBuffer {
            ptr: memory.address,
            len: memory.bytes,
            handles,
            foreign: Some(memory.keep),
        }
    }

    pub fn ptr(&self) -> u64 {
        self.ptr
    }

    /// The context and stream of the GPU that owns the buffer.
    pub fn handles(&self) -> Handles {
        self.handles
    }

    /// The device address of a span's first byte (a span of this buffer lies inside it).
    pub fn at(&self, span: Span<'_>) -> u64 {
        self.ptr + span.offset() as u64
    }
}

impl Buffer for CudaBuffer {
    fn len(&self) -> usize {
        self.len
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Drop for CudaBuffer {
    fn drop(&mut self) {
        if self.foreign.is_some() {
            // Another library's memory: it may reuse it once its keeper is dropped (next), so
            // the work queued on it must be done first. A failure here is the stream's own
            // error, already reported.
            if self.handles.bind().is_ok() {
                // SAFETY: the stream belongs to the bound context.
                let _ = unsafe { sys::cuStreamSynchronize(self.handles.stream) };
            }
            return;
        }
        if self.handles.bind().is_ok() {
            // SAFETY: the pointer came from cuMemAllocAsync on this stream; the free is ordered
            // after every job queued on it. A failure leaks the memory, nothing worse.
            unsafe {
                let _ = sys::cuMemFreeAsync(self.ptr, self.handles.stream);
            }
        }
    }
}

/// A CUDA buffer's address and length, for [`crate::plan::block::param_block`].
pub fn address_of(buffer: &dyn Buffer) -> Result<(u64, usize), String> {
    let buffer = cuda_buffer(buffer)?;
    Ok((buffer.ptr(), buffer.len()))
}

pub fn cuda_buffer(buffer: &dyn Buffer) -> Result<&CudaBuffer, String> {
    buffer
        .as_any()
        .downcast_ref::<CudaBuffer>()
        .ok_or_else(|| "a stream's buffer belongs to another device".to_string())
}
