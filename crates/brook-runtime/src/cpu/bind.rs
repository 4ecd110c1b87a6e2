//! The CPU device's view of buffers for the shared parameter block
//! ([`crate::plan::block`]).

use super::buffer::CpuBuffer;

pub fn cpu_buffer(buffer: &dyn crate::buffer::Buffer) -> Result<&CpuBuffer, String> {
    buffer
        .as_any()
        .downcast_ref::<CpuBuffer>()
        .ok_or_else(|| "a stream's buffer belongs to another device".to_string())
}

/// A CPU buffer's address and length, for [`crate::plan::block::param_block`].
pub fn address_of(buffer: &dyn crate::buffer::Buffer) -> Result<(u64, usize), String> {
    let buffer = cpu_buffer(buffer)?;
    Ok((buffer.ptr() as u64, buffer.len_bytes()))
}
