//! What a piece of a group's launch reads and writes: byte ranges of its streams, found from
//! its plan alone (the rows of its block, the halo its gathers reach, whole streams where
//! nothing narrower is known).

use crate::plan::{Bound, LaunchPlan};
use crate::stream::addressing::{Addressing, Dims};
use brook_ir::ParamRole;

/// How a piece uses one of its streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Access {
    Read,
    /// `exact`: the piece writes every byte of the range (else it must be up to date first,
    /// as the bytes in between keep their values).
    Write {
        exact: bool,
    },
}

/// The byte range of each stream argument a piece reads or writes.
pub(super) fn accesses(plan: &LaunchPlan) -> Vec<(usize, (usize, usize), Access)> {
    let kernel = plan.kernel();
    let reduction = plan.reduction_tile.is_some();
    let mut found = Vec::new();
    let halos = if reduction {
        Vec::new()
    } else {
        gather_halos(plan)
    };
    for (index, (param, bound)) in kernel.params.iter().zip(&plan.args).enumerate() {
        let Bound::Stream {
            shape, addressing, ..
        } = bound
        else {
            continue;
        };
        let size = plan.module.layout(&param.ty).size as usize;
        let whole = span(addressing, shape, &full_box(shape), size);
        let access = match &param.role {
            ParamRole::Input if !reduction => {
                (input_rows(plan, shape, addressing, size), Access::Read)
            }
            ParamRole::Gather { .. } if !reduction => {
                let reach = halos.iter().find(|(p, _)| p.0 as usize == index);
                let rows = shape.first().copied().unwrap_or(1);
                match reach.and_then(|(_, r)| r.rows(rows)) {
                    Some((first, end)) => {
                        let (mut origin, mut extent) = full_box(shape);
                        origin[0] = first;
                        extent[0] = end - first;
                        (
                            span(addressing, shape, &(origin, extent), size),
                            Access::Read,
                        )
                    }
                    None => (whole, Access::Read),
                }
            }
            ParamRole::Input | ParamRole::Gather { .. } => (whole, Access::Read),
            ParamRole::Output if shape.len() == plan.region.size.len() => {
                let region = (&plan.region.origin[..], &plan.region.size[..]);
                // Every byte of the rows written: whole rows, and every instance stores its
                // element (an instance that returns first keeps the old contents there).
                let stores = kernel
                    .body
                    .always_stores_output(brook_ir::ParamId(index as u32));
                let exact = stores
                    && addressing.is_contiguous(shape)
                    && (1..shape.len()).all(|a| region.0[a] == 0 && region.1[a] == shape[a]);
                (
                    span(addressing, shape, &region, size),
                    Access::Write { exact },
                )
            }
            ParamRole::Reduce => {
                let exact = addressing.is_contiguous(shape);
                (whole, Access::Write { exact })
            }
            // Scatter targets and outputs of another rank: all of it, kept where unwritten.
            _ => (whole, Access::Write { exact: false }),
        };
        found.push((index, access.0, access.1));
    }
    found
}

/// The region's rows on the domain's slowest axis, `[first, end)`.
fn block_rows(plan: &LaunchPlan) -> (usize, usize) {
    match (plan.region.origin.first(), plan.region.size.first()) {
        (Some(&o), Some(&n)) => (o, o + n),
        _ => (0, 1),
    }
}

/// The rows each gather array may be read at by the piece's block
/// ([`brook_ir::footprint`]), with the launch's constants known.
fn gather_halos(plan: &LaunchPlan) -> Vec<(brook_ir::ParamId, brook_ir::footprint::Reach)> {
    let kernel = plan.kernel();
    let constant = |p: brook_ir::ParamId| {
        let index = p.0 as usize;
        let Bound::Constant(bytes) = plan.args.get(index)? else {
            return None;
        };
        scalar_value(kernel.params[index].ty.value()?.kind, bytes)
    };
    brook_ir::footprint::gather_rows(kernel, plan.domain.len(), block_rows(plan), &constant)
}

/// A scalar constant's value as a number.
fn scalar_value(kind: brook_ir::ScalarKind, bytes: &[u8]) -> Option<f64> {
    use brook_ir::ScalarKind as K;
    let mut word = [0u8; 8];
    let n = bytes.len().min(8);
    word[..n].copy_from_slice(&bytes[..n]);
    Some(match kind {
        K::F32 => f64::from(f32::from_le_bytes(word[..4].try_into().ok()?)),
        K::F64 => f64::from_le_bytes(word),
        K::I8 => f64::from(word[0] as i8),
        K::U8 => f64::from(word[0]),
        K::I16 => f64::from(i16::from_le_bytes(word[..2].try_into().ok()?)),
        K::U16 => f64::from(u16::from_le_bytes(word[..2].try_into().ok()?)),
        K::I32 => f64::from(i32::from_le_bytes(word[..4].try_into().ok()?)),
        K::U32 => f64::from(u32::from_le_bytes(word[..4].try_into().ok()?)),
        K::I64 => i64::from_le_bytes(word) as f64,
        K::U64 => u64::from_le_bytes(word) as f64,
        K::Bool => return None,
    })
}

/// The bytes of a map's input that its region's rows read: the same rows where the input
/// has the domain's rows, else (implicit resize) the rows they map to and one more each side.
fn input_rows(
    plan: &LaunchPlan,
    shape: &[usize],
    addressing: &Addressing,
    size: usize,
) -> (usize, usize) {
    let whole = full_box(shape);
    let (Some(&rows), Some(&domain_rows)) = (shape.first(), plan.domain.first()) else {
        return span(addressing, shape, &whole, size);
    };
    if shape.len() != plan.domain.len() || domain_rows == 0 {
        return span(addressing, shape, &whole, size);
    }
    let (lo, hi) = (
        plan.region.origin[0],
        plan.region.origin[0] + plan.region.size[0],
    );
    let (first, end) = if rows == domain_rows {
        (lo, hi)
    } else {
        let first = (lo * rows / domain_rows).saturating_sub(1);
        let end = ((hi * rows).div_ceil(domain_rows) + 1).min(rows);
        (first, end)
    };
    let mut origin = whole.0;
    let mut extent = whole.1;
    origin[0] = first;
    extent[0] = end.saturating_sub(first);
    span(addressing, shape, &(&origin[..], &extent[..]), size)
}

/// The origin and size of a whole shape.
fn full_box(shape: &[usize]) -> (Dims, Dims) {
    (smallvec::smallvec![0; shape.len()], Dims::from_slice(shape))
}

/// The bytes from the first to the last element of the box `(origin, size)` of a stream.
fn span<O: AsRef<[usize]>>(
    addressing: &Addressing,
    shape: &[usize],
    (origin, extent): &(O, O),
    size: usize,
) -> (usize, usize) {
    let (origin, extent) = (origin.as_ref(), extent.as_ref());
    if extent.contains(&0) {
        return (0, 0);
    }
    let first = addressing.element(&origin[..shape.len()]);
    let last: Dims = origin.iter().zip(extent).map(|(o, n)| o + n - 1).collect();
    let last = addressing.element(&last[..shape.len()]);
    (first * size, (last + 1) * size)
}
