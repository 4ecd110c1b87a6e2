//! The reference interpreter device (`BRT_RUNTIME=interp`).
//!
//! It walks the IR once per invocation, in domain order, with every access bounds-checked (the
//! IR's clamping rules, and Rust slice checks behind them). It is the semantic oracle: the
//! conformance suite compares every other device with it. Buffers are host memory.

mod eval;
mod exec;
mod ops;
mod value;

use crate::device::{Buffer, Device, DeviceInfo, DeviceKind};
use crate::error::{LaunchProblem, RuntimeError};
use crate::launch::{Bound, Launch};
use eval::{Context, Memory, OutputData, StreamData};
use std::any::Any;
use std::sync::{Arc, Mutex, MutexGuard};

pub struct InterpDevice {
    info: DeviceInfo,
}

impl InterpDevice {
    pub fn new() -> Self {
        InterpDevice {
            info: DeviceInfo {
                kind: DeviceKind::Interp,
                ordinal: 0,
                description: "interp (reference interpreter)".into(),
            },
        }
    }
}

impl Default for InterpDevice {
    fn default() -> Self {
        InterpDevice::new()
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

fn range_error(what: &'static str, offset: usize, len: usize, size: usize) -> RuntimeError {
    RuntimeError::HostLength {
        operation: what,
        expected: size.saturating_sub(offset),
        found: len,
    }
}

impl Device for InterpDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
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
        let buffer =
            interp_buffer(buffer).map_err(|e| RuntimeError::NoDevice(self.info.to_string(), e))?;
        let mut data = buffer.lock();
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
        let buffer =
            interp_buffer(buffer).map_err(|e| RuntimeError::NoDevice(self.info.to_string(), e))?;
        let data = buffer.lock();
        let source = offset
            .checked_add(out.len())
            .and_then(|end| data.get(offset..end))
            .ok_or_else(|| range_error("Stream Write", offset, out.len(), data.len()))?;
        out.copy_from_slice(source);
        Ok(())
    }

    fn copy(&self, from: &dyn Buffer, to: &dyn Buffer) -> Result<(), RuntimeError> {
        let no_device = |e| RuntimeError::NoDevice(self.info.to_string(), e);
        let from = interp_buffer(from).map_err(no_device)?;
        let to = interp_buffer(to).map_err(no_device)?;
        if std::ptr::eq(from, to) {
            return Ok(());
        }
        let source = from.lock().clone();
        let mut target = to.lock();
        if source.len() != target.len() {
            return Err(range_error("Stream Copy", 0, source.len(), target.len()));
        }
        target.copy_from_slice(&source);
        Ok(())
    }

    fn launch(&self, launch: &Launch<'_>) -> Result<(), LaunchProblem> {
        run_launch(launch).map_err(LaunchProblem::Execution)
    }

    fn synchronize(&self) -> Result<(), RuntimeError> {
        Ok(())
    }
}

/// Locks each distinct buffer once, then runs every invocation.
fn run_launch(launch: &Launch<'_>) -> Result<(), String> {
    let kernel = launch.kernel;
    // Distinct buffers, each with whether the kernel writes it.
    let mut distinct: Vec<(&InterpBuffer, bool)> = Vec::new();
    let mut slot_of = Vec::with_capacity(launch.args.len());
    for (param, arg) in kernel.params.iter().zip(&launch.args) {
        let Bound::Stream { stream, .. } = arg else {
            slot_of.push(None);
            continue;
        };
        let buffer = interp_buffer(stream.buffer().as_ref())?;
        let written = param.role.is_written();
        let slot = match distinct.iter().position(|(b, _)| std::ptr::eq(*b, buffer)) {
            Some(slot) if written || distinct[slot].1 => {
                return Err(format!(
                    "stream `{}` is bound twice with a write",
                    param.name
                ))
            }
            Some(slot) => slot,
            None => {
                distinct.push((buffer, written));
                distinct.len() - 1
            }
        };
        slot_of.push(Some(slot));
    }
    let mut guards: Vec<MutexGuard<'_, Vec<u8>>> = distinct.iter().map(|(b, _)| b.lock()).collect();
    let mut reads: Vec<Option<&[u8]>> = Vec::with_capacity(guards.len());
    let mut writes: Vec<Option<&mut [u8]>> = Vec::with_capacity(guards.len());
    for (guard, (_, written)) in guards.iter_mut().zip(&distinct) {
        let data: &mut Vec<u8> = guard;
        if *written {
            reads.push(None);
            writes.push(Some(data.as_mut_slice()));
        } else {
            reads.push(Some(data.as_slice()));
            writes.push(None);
        }
    }
    let layouts = value::Layouts::new(launch.module);
    let mut inputs = Vec::with_capacity(launch.args.len());
    let mut outputs = Vec::with_capacity(launch.args.len());
    let mut constants = Vec::with_capacity(launch.args.len());
    for ((param, arg), slot) in kernel.params.iter().zip(&launch.args).zip(&slot_of) {
        let element_size = layouts.size(launch.module, &param.ty);
        let (mut input, mut output, mut constant) = (None, None, None);
        match (arg, slot) {
            (Bound::Constant(bytes), _) => {
                if bytes.len() != element_size {
                    return Err(format!(
                        "constant `{}` has {} bytes, not {element_size}",
                        param.name,
                        bytes.len()
                    ));
                }
                constant = Some(layouts.decode(launch.module, &param.ty, bytes));
            }
            (Bound::Stream { shape, .. }, Some(slot)) => {
                let needed = shape.iter().product::<usize>() * element_size;
                if let Some(bytes) = writes[*slot].take() {
                    if bytes.len() < needed {
                        return Err(format!("stream `{}` is smaller than its shape", param.name));
                    }
                    output = Some(OutputData {
                        bytes,
                        shape: shape.clone(),
                        element_size,
                    });
                } else if let Some(bytes) = reads[*slot] {
                    if bytes.len() < needed {
                        return Err(format!("stream `{}` is smaller than its shape", param.name));
                    }
                    input = Some(StreamData {
                        bytes,
                        shape: shape.clone(),
                        element_size,
                        same_as_domain: *shape == launch.domain,
                    });
                }
            }
            (Bound::Stream { .. }, None) => {}
        }
        inputs.push(input);
        outputs.push(output);
        constants.push(constant);
    }
    let ctx = Context {
        module: launch.module,
        kernel,
        layouts,
        domain: launch.domain.clone(),
        inputs,
        constants,
    };
    let mut memory = Memory { outputs };
    exec::run(&ctx, &mut memory);
    Ok(())
}
