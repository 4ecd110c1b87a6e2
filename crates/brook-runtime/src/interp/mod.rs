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
pub(crate) mod ops;
mod reduce;
mod single;
pub(crate) mod value;

pub use single::{apply_map, combine};

use crate::buffer::{Buffer, Span};
use crate::device::{Device, DeviceInfo, DeviceKind};
use crate::error::{LaunchProblem, RuntimeError};
use crate::plan::LaunchPlan;
use crate::queue::Queue;
use std::any::Any;
use std::sync::{Arc, Mutex, MutexGuard};

/// How many interpreter devices there are.
pub const INTERP_DEVICES: usize = 2;

/// The interpreter devices `interp:0` and `interp:1`.
pub fn discover() -> Result<Vec<Arc<dyn Device>>, String> {
    Ok((0..INTERP_DEVICES)
        .map(|ordinal| Arc::new(InterpDevice::new(ordinal)) as Arc<dyn Device>)
        .collect())
}

pub struct InterpDevice {
    info: DeviceInfo,
    queue: Queue,
}

impl InterpDevice {
    pub fn new(ordinal: usize) -> Self {
        InterpDevice {
            info: DeviceInfo {
                kind: DeviceKind::Interp,
                rank: None,
                ordinal,
                description: format!("interp:{ordinal} (reference interpreter)"),
                target: None,
                flushes_float_subnormals: false,
            },
            queue: Queue::new(format!("brook-interp-{ordinal}")),
        }
    }

    /// An interpreter that flushes `float` subnormal operands and results to zero, as a
    /// device whose `flushes_float_subnormals` is set does: the model the conformance judge
    /// checks such a device's differing results against (`docs/SEMANTICS.md`). It is not in
    /// the registry.
    pub fn flushing_float_subnormals() -> Self {
        let mut device = InterpDevice::new(0);
        device.info.description = "interp (float subnormals flushed)".to_string();
        device.info.flushes_float_subnormals = true;
        device
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

    fn upload(&self, to: Span<'_>, data: &[u8]) -> Result<(), RuntimeError> {
        let mut memory = self.buffer(to.buffer())?.lock();
        memory[to.offset()..][..to.len()].copy_from_slice(&data[..to.len()]);
        Ok(())
    }

    fn download(&self, from: Span<'_>, out: &mut [u8]) -> Result<(), RuntimeError> {
        let memory = self.buffer(from.buffer())?.lock();
        out[..from.len()].copy_from_slice(&memory[from.offset()..][..from.len()]);
        Ok(())
    }

    fn copy(&self, from: Span<'_>, to: Span<'_>) -> Result<(), RuntimeError> {
        let (source, target) = (self.buffer(from.buffer())?, self.buffer(to.buffer())?);
        let len = from.len().min(to.len());
        if std::ptr::eq(source, target) {
            let start = from.offset();
            target.lock().copy_within(start..start + len, to.offset());
            return Ok(());
        }
        let source = source.lock();
        target.lock()[to.offset()..][..len].copy_from_slice(&source[from.offset()..][..len]);
        Ok(())
    }

    fn launch(&self, launch: &LaunchPlan) -> Result<(), LaunchProblem> {
        let _rules = value::FloatRules::enter(self.info.flushes_float_subnormals);
        bind::run_launch(launch).map_err(LaunchProblem::Execution)
    }

    fn synchronize(&self) -> Result<(), RuntimeError> {
        self.queue.wait_all();
        Ok(())
    }
}
