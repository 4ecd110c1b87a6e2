//! Device memory on a Vulkan device: buffers the host maps and kernels reach by device
//! address, and the pool of large internal buffers (launch-lived memory beyond the arena's
//! chunks, `super::arena`) reused instead of allocated each time.

use super::context::Context;
use ash::vk;
use std::sync::{Arc, Mutex};

/// Where a buffer's memory is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Where kernels read it fastest: device-local memory the host maps (a resizable BAR, an
    /// integrated GPU, lavapipe), else host memory.
    Device,
    /// Host memory the host reads fast (cached): where downloads are copied through when the
    /// device's memory is not cached for the host (reading a GPU's memory through the PCIe
    /// BAR runs at a fraction of the bus's speed).
    Readback,
}

/// Device memory the host maps (coherent) and kernels reach at [`Buffer::address`].
pub struct Buffer {
    device: ash::Device,
    /// The context a buffer handed out to a user keeps alive; internal buffers (the pool's)
    /// are owned by their context, which frees them before it closes.
    _context: Option<Arc<Context>>,
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    mapped: *mut u8,
    bytes: u64,
    address: u64,
    /// Whether the host's reads of the mapping are cached (fast).
    cached: bool,
}

// SAFETY: the mapping is plain memory; the handles may be used from any thread.
unsafe impl Send for Buffer {}
// SAFETY: shared access reads the handles; the bytes are written through `&mut self`, or
// through `write` by the pool's one holder.
unsafe impl Sync for Buffer {}

impl Buffer {
    /// A buffer of `bytes` bytes in `memory`'s host-visible memory (device-local where
    /// there is such memory), kept alive by `context` when given.
    pub(super) fn new(
        device: &ash::Device,
        (properties, placement): (&vk::PhysicalDeviceMemoryProperties, Placement),
        context: Option<Arc<Context>>,
        bytes: u64,
    ) -> Result<Buffer, String> {
        let d = device;
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER
            | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS
            | vk::BufferUsageFlags::TRANSFER_SRC
            | vk::BufferUsageFlags::TRANSFER_DST;
        let size = bytes.max(16);
        let oom = |e: vk::Result| format!("out of device memory: {size} bytes ({e})");
        // SAFETY: the device is live; what a failed step made is destroyed before returning.
        unsafe {
            let buffer = d
                .create_buffer(
                    &vk::BufferCreateInfo::default().size(size).usage(usage),
                    None,
                )
                .map_err(oom)?;
            let needs = d.get_buffer_memory_requirements(buffer);
            let Some(kind) = memory_type(properties, needs.memory_type_bits, placement) else {
                d.destroy_buffer(buffer, None);
                return Err("the device has no host-visible memory for buffers".into());
            };
            let mut flags = vk::MemoryAllocateFlagsInfo::default()
                .flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
            let allocate = vk::MemoryAllocateInfo::default()
                .allocation_size(needs.size)
                .memory_type_index(kind)
                .push_next(&mut flags);
            let memory = match d.allocate_memory(&allocate, None) {
                Ok(m) => m,
                Err(e) => {
                    d.destroy_buffer(buffer, None);
                    return Err(oom(e));
                }
            };
            let mapped = d.bind_buffer_memory(buffer, memory, 0).and_then(|()| {
                d.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
            });
            let mapped = match mapped {
                Ok(p) => p.cast::<u8>(),
                Err(e) => {
                    d.destroy_buffer(buffer, None);
                    d.free_memory(memory, None);
                    return Err(format!("mapping a buffer failed: {e}"));
                }
            };
            let address =
                d.get_buffer_device_address(&vk::BufferDeviceAddressInfo::default().buffer(buffer));
            Ok(Buffer {
                device: d.clone(),
                _context: context,
                buffer,
                memory,
                mapped,
                bytes,
                address,
                cached: properties.memory_types[kind as usize]
                    .property_flags
                    .contains(vk::MemoryPropertyFlags::HOST_CACHED),
            })
        }
    }

    /// The Vulkan buffer (for copies).
    pub(super) fn handle(&self) -> vk::Buffer {
        self.buffer
    }

    /// Whether the host reads the buffer's memory through its caches (fast).
    pub fn is_cached(&self) -> bool {
        self.cached
    }

    /// The buffer's device address (what a kernel's push constants carry).
    pub fn address(&self) -> u64 {
        self.address
    }

    pub fn len(&self) -> u64 {
        self.bytes
    }

    /// The 32-bit word at device address `address`, where this buffer holds it.
    pub(super) fn word_at(&self, address: u64) -> Option<u32> {
        let at = address.checked_sub(self.address)?;
        let bytes = self.bytes().get(at as usize..at as usize + 4)?;
        Some(u32::from_le_bytes(bytes.try_into().ok()?))
    }

    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    /// The buffer's bytes (no kernel may be running on it).
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: the mapping covers `bytes` bytes for the buffer's life.
        unsafe { std::slice::from_raw_parts(self.mapped, self.bytes as usize) }
    }

    /// The buffer's bytes to write (no kernel may be running on it).
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, and `&mut self` makes this the only view.
        unsafe { std::slice::from_raw_parts_mut(self.mapped, self.bytes as usize) }
    }

    /// Writes `data` at `offset` of a shared buffer.
    ///
    /// # Safety
    /// No kernel may be using those bytes and no other thread may be reading or writing them:
    /// the pool hands a buffer to one holder at a time ([`Pool::take`]), the arena a piece.
    pub(super) unsafe fn write_at(&self, offset: u64, data: &[u8]) {
        let end = offset + data.len() as u64;
        assert!(end <= self.bytes, "a write past a buffer's end");
        // SAFETY: in bounds (checked), and exclusive by the caller's promise.
        unsafe {
            let at = self.mapped.add(offset as usize);
            std::ptr::copy_nonoverlapping(data.as_ptr(), at, data.len())
        }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        let d = &self.device;
        // SAFETY: no kernel runs on the buffer once its owner drops it (a batch keeps the
        // buffers its kernels use); each handle once.
        unsafe {
            d.unmap_memory(self.memory);
            d.destroy_buffer(self.buffer, None);
            d.free_memory(self.memory, None);
        }
    }
}

/// The memory type for a buffer: host-visible and coherent, and then for
/// [`Placement::Device`] device-local where the device has such memory (discrete GPUs with a
/// resizable BAR, integrated GPUs, lavapipe), for [`Placement::Readback`] cached.
fn memory_type(
    memory: &vk::PhysicalDeviceMemoryProperties,
    allowed: u32,
    placement: Placement,
) -> Option<u32> {
    let wanted = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
    let types = &memory.memory_types[..memory.memory_type_count as usize];
    let fits = |i: usize, flags: vk::MemoryPropertyFlags| {
        allowed & (1 << i) != 0 && types[i].property_flags.contains(flags)
    };
    let fast = wanted
        | match placement {
            Placement::Device => vk::MemoryPropertyFlags::DEVICE_LOCAL,
            Placement::Readback => vk::MemoryPropertyFlags::HOST_CACHED,
        };
    (0..types.len())
        .find(|&i| fits(i, fast))
        .or_else(|| (0..types.len()).find(|&i| fits(i, wanted)))
        .map(|i| i as u32)
}

/// Internal buffers kept for reuse, in power-of-two sizes. A buffer is free when the pool
/// holds its only reference: whoever took it (a launch, then the batch its kernels were
/// recorded in) has let it go.
pub(super) struct Pool {
    buffers: Mutex<Vec<Arc<Buffer>>>,
}

/// The largest buffer the pool keeps (larger ones are allocated each time: their kernels
/// take long enough that the allocation does not show).
const POOLED_MAX: u64 = 16 << 20;
/// Buffers the pool keeps at most.
const POOLED_COUNT: usize = 256;

impl Pool {
    pub(super) fn new() -> Pool {
        Pool {
            buffers: Mutex::new(Vec::new()),
        }
    }

    /// A free buffer of at least `bytes` bytes, or a new one.
    pub(super) fn take(
        &self,
        bytes: u64,
        make: impl FnOnce(u64) -> Result<Buffer, String>,
    ) -> Result<Arc<Buffer>, String> {
        let size = bytes.max(256).next_power_of_two();
        if size > POOLED_MAX {
            return make(bytes).map(Arc::new);
        }
        let mut buffers = self.buffers.lock().unwrap_or_else(|e| e.into_inner());
        let free = buffers
            .iter()
            .find(|b| b.len() == size && Arc::strong_count(b) == 1);
        if let Some(b) = free {
            return Ok(b.clone());
        }
        let made = Arc::new(make(size)?);
        if buffers.len() < POOLED_COUNT {
            buffers.push(made.clone());
        }
        Ok(made)
    }

    /// Frees every buffer (the context is closing; no kernel runs).
    pub(super) fn clear(&self) {
        self.buffers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }
}
