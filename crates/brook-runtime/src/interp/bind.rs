//! Turning a validated launch into the interpreter's view of memory, then running it.
//!
//! Each distinct buffer is locked once. Written buffers become [`Memory`] (two outputs that are
//! views of one buffer share it); read-only streams borrow their buffer, except a stream on a
//! buffer the launch also writes (a view beside an output view, which the launch checks made
//! sure do not overlap): it reads a snapshot taken before the launch.

use super::eval::{Context, InputData, Memory, OutputData, StreamData};
use super::{exec, interp_buffer, reduce, value, InterpBuffer};
use crate::plan::{check_constant, check_extent, Bound, LaunchPlan};
use std::sync::MutexGuard;

/// Runs a launch on interpreter buffers.
pub fn run_launch(launch: &LaunchPlan) -> Result<(), String> {
    // The interpreter runs collectives as the canonical stores and barriers.
    let expanded = brook_ir::collective::expand(launch.kernel(), |_| false);
    let kernel = expanded.as_ref().unwrap_or(launch.kernel());
    // Distinct buffers, each with whether the launch writes it.
    let mut distinct: Vec<(&InterpBuffer, bool)> = Vec::new();
    let mut slot_of = Vec::with_capacity(launch.args.len());
    for (param, arg) in kernel.params.iter().zip(&launch.args) {
        let Bound::Stream { buffer, .. } = arg else {
            slot_of.push(None);
            continue;
        };
        let buffer = interp_buffer(buffer.as_ref())?;
        let slot = match distinct.iter().position(|(b, _)| std::ptr::eq(*b, buffer)) {
            Some(slot) => slot,
            None => {
                distinct.push((buffer, false));
                distinct.len() - 1
            }
        };
        distinct[slot].1 |= param.role.is_written();
        slot_of.push(Some(slot));
    }
    let mut guards: Vec<MutexGuard<'_, Vec<u8>>> = distinct.iter().map(|(b, _)| b.lock()).collect();
    // Read-only streams on written buffers read a snapshot.
    let snapshots: Vec<Option<Vec<u8>>> = kernel
        .params
        .iter()
        .zip(&slot_of)
        .map(|(param, slot)| match slot {
            Some(slot) if !param.role.is_written() && distinct[*slot].1 => {
                Some(guards[*slot].clone())
            }
            _ => None,
        })
        .collect();
    let mut reads: Vec<Option<&[u8]>> = Vec::with_capacity(guards.len());
    let mut buffers: Vec<&mut [u8]> = Vec::new();
    let mut written_index: Vec<Option<usize>> = Vec::with_capacity(guards.len());
    for (guard, (_, written)) in guards.iter_mut().zip(&distinct) {
        let data: &mut Vec<u8> = guard;
        if *written {
            written_index.push(Some(buffers.len()));
            reads.push(None);
            buffers.push(data.as_mut_slice());
        } else {
            written_index.push(None);
            reads.push(Some(data.as_slice()));
        }
    }
    let layouts = value::Layouts::new(&launch.module);
    let mut inputs = Vec::with_capacity(launch.args.len());
    let mut outputs = Vec::with_capacity(launch.args.len());
    let mut constants = Vec::with_capacity(launch.args.len());
    for (index, (param, arg)) in kernel.params.iter().zip(&launch.args).enumerate() {
        let element_size = layouts.size(&launch.module, &param.ty);
        let (mut input, mut output, mut constant) = (None, None, None);
        match arg {
            Bound::Constant(bytes) => {
                check_constant(&param.name, bytes, element_size)?;
                constant = Some(layouts.decode(&launch.module, &param.ty, bytes));
            }
            Bound::Iterator { iter, shape } => {
                input = Some(InputData::Iterator {
                    iter: iter.clone(),
                    shape: shape.to_vec(),
                });
            }
            Bound::Stream {
                shape, addressing, ..
            } => {
                let slot = slot_of[index].ok_or("an unbound stream")?;
                if param.role.is_written() {
                    let buffer = written_index[slot].ok_or("a written stream without a buffer")?;
                    let len = buffers[buffer].len();
                    check_extent(&param.name, shape, addressing, element_size, len)?;
                    output = Some(OutputData {
                        buffer,
                        shape: shape.to_vec(),
                        element_size,
                        addressing: addressing.clone(),
                    });
                } else {
                    let bytes = match (&snapshots[index], reads[slot]) {
                        (Some(snapshot), _) => snapshot.as_slice(),
                        (None, Some(bytes)) => bytes,
                        (None, None) => return Err("a read-only stream without a buffer".into()),
                    };
                    check_extent(&param.name, shape, addressing, element_size, bytes.len())?;
                    input = Some(InputData::Stream(StreamData {
                        bytes,
                        shape: shape.to_vec(),
                        element_size,
                        addressing: addressing.clone(),
                    }));
                }
            }
        }
        inputs.push(input);
        outputs.push(output);
        constants.push(constant);
    }
    let ctx = Context {
        module: &launch.module,
        kernel,
        layouts,
        domain: launch.domain.to_vec(),
        region: launch.region.clone(),
        inputs,
        constants,
    };
    let mut memory = Memory { buffers, outputs };
    match &launch.reduction_tile {
        Some(tile) => reduce::run(&ctx, &mut memory, tile, launch.scan.as_ref(), &launch.args),
        None => {
            exec::run(&ctx, &mut memory);
            Ok(())
        }
    }
}
