//! CPU device memory: zeroed, 64-byte aligned host allocations that compiled kernels address
//! directly.
//!
//! A buffer may also be host memory another library made (a NumPy array shared through
//! DLPack), which it keeps alive and never frees itself.
//!
//! A buffer is only read or written by work on its device's queue (transfers and launches run
//! there one at a time), or by the worker threads of one launch, which the launch checks made
//! sure write disjoint elements.

use crate::buffer::{Buffer, Span};
use crate::error::RuntimeError;
use crate::shared_memory::ForeignMemory;
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::any::Any;

const ALIGN: usize = 64;

pub struct CpuBuffer {
    ptr: *mut u8,
    len: usize,
    /// For memory another library made ([`CpuBuffer::adopt`]): what keeps it valid. `None`
    /// for the buffer's own allocation.
    foreign: Option<Box<dyn Any + Send + Sync>>,
}

// SAFETY: the memory is owned by the buffer, or kept valid by the keeper it holds; access is
// serialised by the device queue (see the module docs).
unsafe impl Send for CpuBuffer {}
// SAFETY: as above.
unsafe impl Sync for CpuBuffer {}

impl CpuBuffer {
    pub fn new(device: &str, len: usize) -> Result<CpuBuffer, RuntimeError> {
        let fail = |reason: String| RuntimeError::Allocation {
            device: device.to_string(),
            bytes: len,
            reason,
        };
        let layout = Layout::from_size_align(len.max(1), ALIGN).map_err(|e| fail(e.to_string()))?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(fail("out of memory".into()));
        }
        Ok(CpuBuffer {
            ptr,
            len,
            foreign: None,
        })
    }

    /// A buffer over host memory another library made (it stays valid while `memory.keep`
    /// lives, which the buffer holds).
    pub fn adopt(memory: ForeignMemory) -> CpuBuffer {
        CpuBuffer {
            ptr: memory.address as *mut u8,
            len: memory.bytes,
            foreign: Some(memory.keep),
        }
    }

    pub fn len_bytes(&self) -> usize {
        self.len
    }

    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// The address of a span's first byte (a span of this buffer lies inside it).
    pub fn at(&self, span: Span<'_>) -> *mut u8 {
        // SAFETY: `span.offset() + span.len() <= self.len` (checked when the span was made,
        // against this buffer's length), inside the allocation.
        unsafe { self.ptr.add(span.offset()) }
    }
}

impl Drop for CpuBuffer {
    fn drop(&mut self) {
        if self.foreign.is_some() {
            return; // another library's memory: its keeper (dropped next) frees it
        }
        // SAFETY: allocated in `new` with this layout.
        unsafe {
            dealloc(
                self.ptr,
                Layout::from_size_align_unchecked(self.len.max(1), ALIGN),
            )
        }
    }
}

impl Buffer for CpuBuffer {
    fn len(&self) -> usize {
        self.len
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
