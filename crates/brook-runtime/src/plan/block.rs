//! From a launch plan to what compiled code reads, for the native devices: the kernel
//! variant it needs and the parameter block (`brook_codegen::abi`).

use super::{check_constant, check_extent, Bound, LaunchPlan};
use crate::buffer::Buffer;
use crate::device::Ready;
use crate::kernel_cache::KernelCache;
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
    let mut variant = Variant::new(
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
    );
    variant.scan = launch.scan.is_some();
    variant
}

/// `BRT_WIDE_INDEX=1`: every launch does its index arithmetic in 64 bits, as launches past
/// [`NARROW_INDEX_LIMIT`] do (to test that path with small streams, or compare the two).
static WIDE_INDEX: crate::env_switch::EnvSwitch =
    crate::env_switch::EnvSwitch::new("BRT_WIDE_INDEX");

/// Whether every index the launch's code computes stays below [`NARROW_INDEX_LIMIT`]: the
/// domain's instances (with a group's worth of threads past its end), every stream's
/// elements, and `position * extent` of every implicit resize (and `BRT_WIDE_INDEX` is off).
fn narrow_index(launch: &LaunchPlan) -> bool {
    let params = &launch.kernel().params;
    !WIDE_INDEX.is_on()
        && domain_fits(&launch.domain, &launch.region)
        && params.iter().zip(&launch.args).all(|(param, arg)| {
            // Only inputs of another shape are read through implicit resize (gather and
            // scatter arrays never are).
            let resize_ok = |shape: &[usize]| {
                param.role != ParamRole::Input
                    || shape == launch.domain.as_slice()
                    || resize_fits(shape, &launch.domain)
            };
            match arg {
                Bound::Stream {
                    shape, addressing, ..
                } => stream_fits(shape, addressing) && resize_ok(shape),
                Bound::Iterator { shape, .. } => resize_ok(shape),
                Bound::Constant(_) => true,
            }
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

/// [`Device::prepare`] for a compiled device: the launch's kernel, if `cache` holds it as the
/// launch's variant, and its parameter block. `None` where the kernel is not made yet or the
/// block cannot be built (the launch then runs as it comes and reports why).
///
/// [`Device::prepare`]: crate::Device::prepare
pub fn ready<T: Send + Sync + 'static>(
    plan: &LaunchPlan,
    cache: &KernelCache<T>,
    layout: impl Fn(&T) -> &BlockLayout,
    address_of: &AddressOf,
) -> Option<Ready> {
    let kernel = cache.find(&plan.module, plan.kernel, variant(plan))?;
    let block = param_block(plan, layout(&kernel), address_of).ok()?;
    Some(Ready { kernel, block })
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
            origin: smallvec::smallvec![0; domain.len()],
            size: domain.into(),
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
            pitches: smallvec::smallvec![1 << 32, 1],
        };
        assert!(!stream_fits(&[1, 8], &huge_pitch));

        assert!(resize_fits(&[1000, 1000], &[2000, 2000]));
        assert!(!resize_fits(&[100_000], &[100_000]));
    }

    struct Bytes(usize);

    impl Buffer for Bytes {
        fn len(&self) -> usize {
            self.0
        }
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
    }

    /// A map kernel `(input, scatter array)` launched over `domain` with streams of those
    /// lengths.
    fn launch(domain: usize, input: usize, array: usize) -> LaunchPlan {
        use brook_ir::{KernelKind, Param, Type, ValueType};
        let float = Type::Value(ValueType::scalar(brook_ir::ScalarKind::F32));
        let mut b = brook_ir::builder::KernelBuilder::new();
        for (name, role) in [
            ("x", ParamRole::Input),
            ("a", ParamRole::Scatter { rank: 1 }),
        ] {
            b.params.push(Param {
                name: name.into(),
                ty: float.clone(),
                role,
                span: brook_ir::expr::NO_SPAN,
            });
        }
        let kernel = b.finish("k".into(), KernelKind::Map, None, brook_ir::expr::NO_SPAN);
        let module = brook_ir::Module {
            kernels: vec![kernel],
            ..Default::default()
        };
        let stream = |n: usize| Bound::Stream {
            buffer: std::sync::Arc::new(Bytes(4 * n)),
            shape: smallvec::smallvec![n],
            addressing: Addressing::row_major(&[n]),
        };
        LaunchPlan {
            module: std::sync::Arc::new(brook_ir::validate(module).expect("valid")),
            kernel: 0,
            domain: smallvec::smallvec![domain],
            region: whole(&[domain]),
            reduction_tile: None,
            scan: None,
            args: smallvec::smallvec![stream(input), stream(array)],
        }
    }

    #[test]
    fn a_large_array_beside_a_smaller_domain_keeps_the_narrow_index() {
        // A LOOM block reduce: the IR domain is a quarter of the array read.
        assert!(narrow_index(&launch(1 << 24, 1 << 24, 1 << 26)));
        // An input read through implicit resize: position times extent must fit.
        assert!(!narrow_index(&launch(1 << 24, 1 << 20, 1 << 26)));
        assert!(!narrow_index(&launch(1 << 24, 1 << 24, (1 << 31) + 1)));
        assert!(variant(&launch(1 << 20, 1 << 20, 1 << 20)).narrow_index);
    }
}
