//! From a launch plan to what compiled code reads, for the native devices: the kernel
//! variant it needs and the parameter block (`brook_codegen::abi`).

use super::{check_constant, check_extent, Bound, LaunchPlan};
use crate::buffer::Buffer;
use brook_codegen::abi::{
    header, record, BlockLayout, InputBinding, ParamBlock, Variant, NARROW_INDEX_LIMIT,
};
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
    let narrow = narrow_index(launch);
    Variant::new(
        kernel,
        launch.domain.len(),
        (unit_stride, narrow),
        |index| {
            let (iterator, shape) = match &launch.args[index] {
                Bound::Stream { shape, .. } => (false, shape),
                Bound::Iterator { shape, .. } => (true, shape),
                Bound::Constant(_) => return None,
            };
            Some(InputBinding {
                iterator,
                other_shape: *shape != launch.domain,
            })
        },
    )
}

/// Whether every index the launch's code computes stays below [`NARROW_INDEX_LIMIT`]: the
/// domain's instances (with a group's worth of threads past its end), every stream's
/// elements, and `position * extent` of every implicit resize.
fn narrow_index(launch: &LaunchPlan) -> bool {
    domain_fits(&launch.domain, &launch.region)
        && launch.args.iter().all(|arg| match arg {
            Bound::Stream {
                shape, addressing, ..
            } => stream_fits(shape, addressing) && resize_fits(shape, &launch.domain),
            Bound::Iterator { shape, .. } => resize_fits(shape, &launch.domain),
            Bound::Constant(_) => true,
        })
}

fn below_limit(n: Option<usize>) -> bool {
    n.is_some_and(|n| (n as u64) < NARROW_INDEX_LIMIT)
}

/// The domain's instances, plus the threads of a last thread group (up to 1,024) past its
/// end, and the region's corner.
fn domain_fits(domain: &[usize], region: &super::ExecRegion) -> bool {
    let total = domain.iter().try_fold(1usize, |acc, &n| acc.checked_mul(n));
    below_limit(total.and_then(|t| t.checked_add(2048)))
        && region
            .origin
            .iter()
            .zip(&region.size)
            .all(|(&o, &n)| below_limit(o.checked_add(n)))
}

/// The stream's last element (its offset plus the last position's place) and its pitches.
fn stream_fits(shape: &[usize], addressing: &crate::stream::Addressing) -> bool {
    let last = shape
        .iter()
        .zip(&addressing.pitches)
        .try_fold(addressing.offset, |acc, (&n, &pitch)| {
            acc.checked_add(n.saturating_sub(1).checked_mul(pitch)?)
        });
    below_limit(last) && addressing.pitches.iter().all(|&p| below_limit(Some(p)))
}

/// `position * extent` of an implicit resize from `shape` to `domain`.
fn resize_fits(shape: &[usize], domain: &[usize]) -> bool {
    shape
        .iter()
        .zip(domain)
        .all(|(&n, &d)| below_limit(n.checked_mul(d)))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::ExecRegion;
    use crate::stream::Addressing;

    fn whole(domain: &[usize]) -> ExecRegion {
        ExecRegion {
            origin: vec![0; domain.len()],
            size: domain.to_vec(),
        }
    }

    #[test]
    fn indices_are_narrow_only_below_two_to_the_31() {
        assert!(domain_fits(&[1 << 26], &whole(&[1 << 26])));
        assert!(domain_fits(&[16384, 16384], &whole(&[16384, 16384])));
        assert!(!domain_fits(&[1 << 31], &whole(&[1 << 31])));
        // A last group's threads past the end count too.
        assert!(!domain_fits(&[(1 << 31) - 1024], &whole(&[1])));

        let row_major = Addressing::row_major(&[1 << 16, 1 << 14]);
        assert!(stream_fits(&[1 << 16, 1 << 14], &row_major));
        let past = Addressing {
            offset: (1 << 30) + 1,
            pitches: row_major.pitches.clone(),
        };
        assert!(!stream_fits(&[1 << 16, 1 << 14], &past));
        let huge_pitch = Addressing {
            offset: 0,
            pitches: vec![1 << 32, 1],
        };
        assert!(!stream_fits(&[1, 8], &huge_pitch));

        assert!(resize_fits(&[1000, 1000], &[2000, 2000]));
        assert!(!resize_fits(&[100_000], &[100_000]));
    }
}
