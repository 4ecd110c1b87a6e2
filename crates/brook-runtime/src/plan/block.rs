//! From a launch plan to what compiled code reads, for the native devices: the kernel
//! variant it needs and the parameter block (`brook_codegen::abi`).

use super::{check_constant, check_extent, Bound, LaunchPlan};
use crate::buffer::Buffer;
use brook_codegen::abi::{header, record, BlockLayout, InputBinding, ParamBlock, Variant};
use brook_ir::ParamRole;

/// A device's view of one of its buffers: its address and its length in bytes.
pub type AddressOf = dyn Fn(&dyn Buffer) -> Result<(u64, usize), String>;

/// The variant of the launch's kernel that this launch runs.
pub fn variant(launch: &LaunchPlan) -> Variant {
    let kernel = launch.kernel();
    let unit_stride = kernel
        .params
        .iter()
        .zip(&launch.args)
        .filter(|(p, _)| matches!(p.role, ParamRole::Input | ParamRole::Output))
        .all(|(_, arg)| match arg {
            Bound::Stream { addressing, .. } => addressing.pitches.last() == Some(&1),
            _ => true,
        });
    Variant::new(kernel, launch.domain.len(), unit_stride, |index| {
        let (iterator, shape) = match &launch.args[index] {
            Bound::Stream { shape, .. } => (false, shape),
            Bound::Iterator { shape, .. } => (true, shape),
            Bound::Constant(_) => return None,
        };
        Some(InputBinding {
            iterator,
            other_shape: *shape != launch.domain,
        })
    })
}

/// The parameter block of a launch. Every stream's elements (of its bound shape) are checked
/// to lie inside its buffer, so compiled code never addresses outside one.
pub fn param_block(
    launch: &LaunchPlan,
    layout: &BlockLayout,
    address_of: &AddressOf,
) -> Result<ParamBlock, String> {
    let kernel = launch.kernel();
    let rank = launch.domain.len();
    let mut block = ParamBlock::new(layout);
    block.put_axes(header::DOMAIN, &launch.domain);
    block.put_axes(header::REGION_ORIGIN, &launch.region.origin);
    block.put_axes(header::REGION_SIZE, &launch.region.size);
    if let Some(tile) = &launch.reduction_tile {
        block.put_axes(header::TILE, tile);
    }
    for (index, (param, arg)) in kernel.params.iter().zip(&launch.args).enumerate() {
        let at = layout.param_offset(index);
        let element_size = launch.module.layout(&param.ty).size as usize;
        match arg {
            Bound::Constant(bytes) => {
                check_constant(&param.name, bytes, element_size)?;
                block.put_bytes(at, bytes);
            }
            Bound::Iterator { iter, shape } => {
                expect_rank(&param.name, shape, rank)?;
                block.put_axes(at + record::SHAPE, shape);
                for (k, (s, e)) in iter.start().iter().zip(iter.end()).enumerate() {
                    block.put_f32(at + record::ITER_START + 4 * k as u32, *s);
                    block.put_f32(at + record::ITER_END + 4 * k as u32, e);
                }
            }
            Bound::Stream {
                buffer,
                shape,
                addressing,
            } => {
                if !matches!(
                    param.role,
                    ParamRole::Gather { .. } | ParamRole::Scatter { .. }
                ) {
                    expect_rank(&param.name, shape, rank)?;
                }
                let (address, len_bytes) = address_of(buffer.as_ref())?;
                if shape.contains(&0) {
                    return Err(format!("stream `{}` has an empty axis", param.name));
                }
                check_extent(&param.name, shape, addressing, element_size, len_bytes)?;
                block.put_u64(at + record::ADDRESS, address);
                block.put_u64(at + record::OFFSET, addressing.offset as u64);
                block.put_axes(at + record::SHAPE, shape);
                block.put_axes(at + record::PITCH, &addressing.pitches);
            }
        }
    }
    Ok(block)
}

fn expect_rank(name: &str, shape: &[usize], rank: usize) -> Result<(), String> {
    if shape.len() == rank {
        Ok(())
    } else {
        Err(format!(
            "stream `{name}` of shape {shape:?} is bound to a domain of rank {rank}"
        ))
    }
}
