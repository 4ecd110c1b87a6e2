//! The reference interpreter devices (`BRT_RUNTIME=interp`).
//!
//! It walks the IR once per invocation, in domain order, with every access bounds-checked (the
//! IR's clamping rules, and Rust slice checks behind them). It is the semantic oracle: the
//! conformance suite compares every other device with it. Buffers are host memory. There are
//! [`INTERP_DEVICES`] independent interpreter devices (`interp:0`, `interp:1`), each with its
//! own queue and memory, so that programs using several devices can be run and tested anywhere.

mod bind;
mod eval;
mod exec;
mod ops;
mod reduce;
mod single;
mod value;

pub use single::{apply_map, combine};

use crate::device::{Buffer, Device, DeviceInfo, DeviceKind};
use crate::error::{range_error, LaunchProblem, RuntimeError};
use crate::launch::Launch;
use crate::queue::Queue;
use std::any::Any;
use std::sync::{Arc, Mutex, MutexGuard};

/// How many interpreter devices there are.
pub const INTERP_DEVICES: usize = 2;

pub struct InterpDevice {
    info: DeviceInfo,
    queue: Queue,
}

impl InterpDevice {
    pub fn new(ordinal: usize) -> Self {
        InterpDevice {
            info: DeviceInfo {
                kind: DeviceKind::Interp,
                ordinal,
                description: format!("interp:{ordinal} (reference interpreter)"),
            },
            queue: Queue::new(format!("brook-interp-{ordinal}")),
        }
    }
}

struct InterpBuffer {
    data: Mutex<Vec<u8>>,
    len: usize,
}

impl InterpBuffer {
    fn lock(&self) -> MutexGuard<'_, Vec<u8>> {
        self.data.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Buffer for InterpBuffer {
    fn len(&self) -> usize {
        self.len
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn interp_buffer(buffer: &dyn Buffer) -> Result<&InterpBuffer, String> {
    buffer
        .as_any()
        .downcast_ref::<InterpBuffer>()
        .ok_or_else(|| "the buffer belongs to another device".to_string())
}

impl InterpDevice {
    fn buffer<'b>(&self, buffer: &'b dyn Buffer) -> Result<&'b InterpBuffer, RuntimeError> {
        interp_buffer(buffer).map_err(|e| RuntimeError::NoDevice(self.info.to_string(), e))
    }
}

impl Device for InterpDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn queue(&self) -> &Queue {
        &self.queue
    }

    fn allocate(&self, bytes: usize) -> Result<Arc<dyn Buffer>, RuntimeError> {
        let mut data = Vec::new();
        data.try_reserve_exact(bytes)
            .map_err(|e| RuntimeError::Allocation {
                device: self.info.to_string(),
                bytes,
                reason: e.to_string(),
            })?;
        data.resize(bytes, 0);
        Ok(Arc::new(InterpBuffer {
            data: Mutex::new(data),
            len: bytes,
        }))
    }

    fn upload(&self, buffer: &dyn Buffer, offset: usize, bytes: &[u8]) -> Result<(), RuntimeError> {
        let mut data = self.buffer(buffer)?.lock();
        let size = data.len();
        let target = offset
            .checked_add(bytes.len())
            .and_then(|end| data.get_mut(offset..end))
            .ok_or_else(|| range_error("Stream Read", offset, bytes.len(), size))?;
        target.copy_from_slice(bytes);
        Ok(())
    }

    fn download(
        &self,
        buffer: &dyn Buffer,
        offset: usize,
        out: &mut [u8],
    ) -> Result<(), RuntimeError> {
        let data = self.buffer(buffer)?.lock();
        let source = offset
            .checked_add(out.len())
            .and_then(|end| data.get(offset..end))
            .ok_or_else(|| range_error("Stream Write", offset, out.len(), data.len()))?;
        out.copy_from_slice(source);
        Ok(())
    }

    fn copy(
        &self,
        from: &dyn Buffer,
        from_offset: usize,
        to: &dyn Buffer,
        to_offset: usize,
        bytes: usize,
    ) -> Result<(), RuntimeError> {
        let (from, to) = (self.buffer(from)?, self.buffer(to)?);
        let out_of_range = |size: usize| range_error("Stream Copy", to_offset, bytes, size);
        if std::ptr::eq(from, to) {
            let mut data = to.lock();
            let size = data.len();
            if from_offset.max(to_offset).saturating_add(bytes) > size {
                return Err(out_of_range(size));
            }
            data.copy_within(from_offset..from_offset + bytes, to_offset);
            return Ok(());
        }
        let source = from.lock();
        let mut target = to.lock();
        let (Some(source), Some(target)) = (
            source.get(from_offset..from_offset.saturating_add(bytes)),
            target.get_mut(to_offset..to_offset.saturating_add(bytes)),
        ) else {
            return Err(out_of_range(to.len));
        };
        target.copy_from_slice(source);
        Ok(())
    }

    fn launch(&self, launch: &Launch) -> Result<(), LaunchProblem> {
        bind::run_launch(launch).map_err(LaunchProblem::Execution)
    }

    fn synchronize(&self) -> Result<(), RuntimeError> {
        self.queue.wait_all();
        Ok(())
    }
}
