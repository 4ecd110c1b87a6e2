//! How a launch on a device group is divided among its members, and the running of the
//! pieces.
//!
//! A piece is the group's plan narrowed to what one member runs: a block of the region's rows
//! (maps), a block of target rows (reductions, row scans: the input's and target's streams are
//! narrowed, not the region, because devices reduce whole domains), or one aligned
//! power-of-two run of a single target's leaves whose value goes to a partial result. What a
//! piece reads and writes follows from its plan alone ([`accesses`]).

use super::buffer::group_buffer;
use super::coherence::fetch;
use crate::device::Device;
use crate::error::LaunchProblem;
use crate::plan::{Bound, ExecRegion, LaunchPlan};
use crate::stream::addressing::{Addressing, Dims};
use brook_ir::ParamRole;
use std::sync::Arc;

/// Runs `plan` on the group `members`.
pub(super) fn launch(members: &[Arc<dyn Device>], plan: &LaunchPlan) -> Result<(), LaunchProblem> {
    let parts = members.len();
    if plan.reduction_tile.is_some() {
        if let Some(pieces) = target_rows(plan, parts) {
            return run(members, pieces);
        }
        if plan.scan.is_none() {
            if let Some((pieces, combine)) = super::whole::pieces(members, plan)? {
                run(members, pieces)?;
                return run(members, vec![(0, combine)]);
            }
        }
    } else if let Some(pieces) = region_rows(plan, parts) {
        return run(members, pieces);
    }
    run(members, vec![(0, plan.clone())])
}

/// Whether the kernel's result depends on which instances run together: it then runs whole
/// on one member.
pub(super) fn runs_whole(plan: &LaunchPlan) -> bool {
    let kernel = plan.kernel();
    kernel.group_size.is_some()
        || !kernel.vouts.is_empty()
        || kernel
            .params
            .iter()
            .any(|p| matches!(p.role, ParamRole::Scatter { .. }))
}

/// `count` contiguous blocks of `extent` rows, as `(first, end)`, none empty.
fn blocks(extent: usize, count: usize) -> Vec<(usize, usize)> {
    let count = count.min(extent);
    (0..count)
        .map(|k| (extent * k / count, extent * (k + 1) / count))
        .collect()
}

/// A map split into blocks of its region's slowest axis.
fn region_rows(plan: &LaunchPlan, parts: usize) -> Option<Vec<(usize, LaunchPlan)>> {
    let rows = *plan.region.size.first()?;
    if runs_whole(plan) || rows < 2 || parts < 2 {
        return None;
    }
    let pieces = blocks(rows, parts)
        .into_iter()
        .enumerate()
        .map(|(member, (lo, hi))| {
            let mut piece = plan.clone();
            piece.region.origin[0] += lo;
            piece.region.size[0] = hi - lo;
            (member, piece)
        })
        .collect();
    Some(pieces)
}

/// A reduction (or a scan of rows) split into blocks of its targets' slowest axis.
fn target_rows(plan: &LaunchPlan, parts: usize) -> Option<Vec<(usize, LaunchPlan)>> {
    let rows = *plan.domain.first()?;
    let tile = plan.reduction_tile.as_ref()?;
    let (input, target) = crate::launch::input_and_target(plan.kernel())?;
    if runs_whole(plan) || rows < 2 || parts < 2 {
        return None;
    }
    if !matches!(plan.args[input], Bound::Stream { .. }) {
        return None;
    }
    // A scan's target has the input's shape; a reduction's the domain's.
    let target_rows_per_row = if plan.scan.is_some() { tile[0] } else { 1 };
    let pieces = blocks(rows, parts)
        .into_iter()
        .enumerate()
        .map(|(member, (lo, hi))| {
            let mut piece = plan.clone();
            piece.domain[0] = hi - lo;
            piece.region = ExecRegion {
                origin: smallvec::smallvec![0; piece.domain.len()],
                size: piece.domain.clone(),
            };
            narrow(&mut piece.args[input], lo * tile[0], (hi - lo) * tile[0]);
            narrow(
                &mut piece.args[target],
                lo * target_rows_per_row,
                (hi - lo) * target_rows_per_row,
            );
            (member, piece)
        })
        .collect();
    Some(pieces)
}

/// Keeps `len` rows of a bound stream's slowest axis from row `first`.
fn narrow(bound: &mut Bound, first: usize, len: usize) {
    if let Bound::Stream {
        shape, addressing, ..
    } = bound
    {
        addressing.offset += first * addressing.pitches[0];
        shape[0] = len;
    }
}

/// How a piece uses one of its streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Access {
    Read,
    /// `exact`: the piece writes every byte of the range (else it must be up to date first,
    /// as the bytes in between keep their values).
    Write {
        exact: bool,
    },
}

/// The byte ranges of the stream arguments a piece reads or writes (an argument may have
/// several: the rows a stencil gathers around its block).
fn accesses(plan: &LaunchPlan) -> Vec<(usize, (usize, usize), Access)> {
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
                let (block, rows) = (block_rows(plan), shape.first().copied().unwrap_or(1));
                match reach.and_then(|(_, r)| r.rows(block.0, block.1, rows)) {
                    Some(ranges) => {
                        for (first, end) in ranges {
                            let (mut origin, mut extent) = full_box(shape);
                            origin[0] = first;
                            extent[0] = end - first;
                            let range = span(addressing, shape, &(origin, extent), size);
                            found.push((index, range, Access::Read));
                        }
                        continue;
                    }
                    None => (whole, Access::Read),
                }
            }
            ParamRole::Input | ParamRole::Gather { .. } => (whole, Access::Read),
            ParamRole::Output if shape.len() == plan.region.size.len() => {
                let region = (&plan.region.origin[..], &plan.region.size[..]);
                let exact = addressing.is_contiguous(shape)
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

/// The rows each gather array may be read at around the piece's block
/// ([`brook_ir::footprint`]), with the launch's constants known.
fn gather_halos(plan: &LaunchPlan) -> Vec<(brook_ir::ParamId, brook_ir::footprint::RowReach)> {
    let kernel = plan.kernel();
    let constant = |p: brook_ir::ParamId| {
        let index = p.0 as usize;
        let Bound::Constant(bytes) = plan.args.get(index)? else {
            return None;
        };
        scalar_value(kernel.params[index].ty.value()?.kind, bytes)
    };
    brook_ir::footprint::gather_rows(kernel, plan.domain.len(), &constant)
}

/// A scalar constant's value as a number.
fn scalar_value(kind: brook_ir::ScalarKind, bytes: &[u8]) -> Option<f64> {
    use brook_ir::ScalarKind as K;
    let array = |n: usize| -> Option<[u8; 8]> {
        let mut out = [0u8; 8];
        out[..n].copy_from_slice(bytes.get(..n)?);
        Some(out)
    };
    let word = array(8.min(bytes.len()))?;
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

/// Runs each piece on its member: what it reads is fetched there first; what it wrote is
/// recorded once every piece is queued.
pub(super) fn run(
    members: &[Arc<dyn Device>],
    pieces: Vec<(usize, LaunchPlan)>,
) -> Result<(), LaunchProblem> {
    let failed = |member: usize| {
        let name = members[member].info().to_string();
        move |e: crate::error::RuntimeError| LaunchProblem::Execution(format!("on {name}: {e}"))
    };
    let mut written = Vec::new();
    for (member, plan) in &pieces {
        let member = *member;
        for (index, range, access) in accesses(plan) {
            let Bound::Stream { buffer, .. } = &plan.args[index] else {
                continue;
            };
            let group = group_buffer(buffer.as_ref()).map_err(failed(member))?;
            if access != (Access::Write { exact: true }) {
                fetch(members, group, member, range).map_err(failed(member))?;
            }
            if matches!(access, Access::Write { .. }) {
                written.push((buffer.clone(), member, range));
            }
        }
        let local = on_member(plan, member).map_err(failed(member))?;
        crate::launch::profiled::launch(members[member].as_ref(), &local).map_err(|problem| {
            match problem {
                LaunchProblem::Execution(e) => failed(member)(crate::error::RuntimeError::Stream {
                    code: crate::BError::Kernel,
                    message: e,
                }),
                other => other,
            }
        })?;
    }
    for (buffer, member, (start, end)) in written {
        group_buffer(buffer.as_ref())
            .map_err(failed(member))?
            .written(member, start, end);
    }
    Ok(())
}

/// The plan with member `member`'s copies of its buffers.
fn on_member(plan: &LaunchPlan, member: usize) -> Result<LaunchPlan, crate::error::RuntimeError> {
    let mut local = plan.clone();
    for bound in local.args.iter_mut() {
        if let Bound::Stream { buffer, .. } = bound {
            *buffer = group_buffer(buffer.as_ref())?.copies[member].clone();
        }
    }
    Ok(local)
}
