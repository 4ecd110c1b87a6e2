//! Stream memory shared with other libraries without a copy (DLPack, in the Python API): a
//! stream's buffer as an address another library may read and write, and memory another
//! library made adopted as a stream's buffer.
//!
//! Only devices whose buffers are plain addresses share memory: the CPU device (host memory)
//! and CUDA devices (device memory of their primary context, which PyTorch, CuPy and JAX use
//! too). Every other device refuses with [`RuntimeError::Sharing`] naming itself.

use crate::element::ElementType;
use crate::error::RuntimeError;
use crate::stream::RawStream;
use std::any::Any;
use std::sync::Arc;

/// Where a device's buffers live, as another library names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemorySpace {
    /// Host memory (the CPU device).
    Host,
    /// Memory of CUDA device `ordinal`; the device's work runs on the CUDA stream `stream`
    /// (a `CUstream`), which another library's work can be ordered against.
    Cuda { ordinal: usize, stream: u64 },
}

/// Memory made by another library, to be used as a stream's buffer: `bytes` bytes at
/// `address` in the device's memory space, kept valid until `keep` is dropped (the buffer
/// drops it when the last stream using it is gone).
pub struct ForeignMemory {
    pub address: u64,
    pub bytes: usize,
    pub keep: Box<dyn Any + Send + Sync>,
}

impl std::fmt::Debug for ForeignMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ForeignMemory({:#x}, {} bytes)",
            self.address, self.bytes
        )
    }
}

/// The refusal of a device that shares no memory.
pub fn not_shared(device: &str) -> RuntimeError {
    RuntimeError::Sharing(format!(
        "{device} does not share stream memory with other libraries (only the CPU device and \
         CUDA devices do): copy through the host instead"
    ))
}

impl RawStream {
    /// A stream of `dims` whose buffer is `memory` (row-major, exactly the stream's bytes,
    /// aligned for its elements), on a device that shares memory.
    pub fn adopt(
        device: &Arc<dyn crate::Device>,
        element: ElementType,
        dims: &[usize],
        memory: ForeignMemory,
    ) -> Result<RawStream, RuntimeError> {
        let len = crate::stream::check_shape(dims, element.size())?;
        let bytes = len * element.size();
        if memory.bytes != bytes {
            return Err(RuntimeError::Sharing(format!(
                "the memory holds {} bytes; a {element} stream of shape {dims:?} needs {bytes}",
                memory.bytes
            )));
        }
        if !memory.address.is_multiple_of(element.align() as u64) {
            return Err(RuntimeError::Sharing(format!(
                "the memory at {:#x} is not aligned for {element} elements ({} bytes)",
                memory.address,
                element.align()
            )));
        }
        let buffer = device.adopt(memory)?;
        let stream = RawStream::with_buffer(device, element, dims, buffer);
        stream.mark_initialized();
        Ok(stream)
    }

    /// The address of the stream's first element in its device's memory space, for another
    /// library to use in place; `Err` for a view that is not one contiguous run, or a device
    /// that shares no memory.
    pub fn shared_address(&self) -> Result<(MemorySpace, u64), RuntimeError> {
        let device = self.device();
        let name = device.info().short_name();
        let space = device.memory_space().ok_or_else(|| not_shared(&name))?;
        let base = device
            .buffer_address(self.buffer().as_ref())
            .ok_or_else(|| not_shared(&name))?;
        let addressing = self.addressing();
        if !addressing.is_contiguous(self.shape()) {
            return Err(RuntimeError::Sharing(
                "a view that is not one contiguous block of its stream cannot be shared in \
                 place: assign it to a new stream first"
                    .into(),
            ));
        }
        let offset = addressing.offset * self.element().size();
        Ok((space, base + offset as u64))
    }
}
