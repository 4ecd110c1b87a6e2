//! A reduction to one value split among a group's members in aligned power-of-two pieces.
//!
//! The input's `L` leaves (row-major; the stream must be contiguous) are cut into pieces of
//! `P` leaves, `P` the power of two that gives at most one piece a member; piece `j` is the
//! canonical tree's node `(j * P, P)` (`brook_ir::reduce_order`), so member `j` reducing it
//! as a stream of its own computes exactly that subtree (a ragged last piece is the node's
//! leaves that exist). The pieces' values go to a partial stream, which the first member
//! reduces into the target: the canonical tree over the pieces is the top of the tree over
//! the leaves, and the result is the single device's bits.
//!
//! Measured on two H100s (`group_bench --detail`): more, smaller pieces spread unevenly (so
//! that the combining member does less) gained nothing, as a member's run of pieces reduced
//! as rows is 3-4% slower than one flat piece.

use crate::buffer::Buffer;
use crate::error::LaunchProblem;
use crate::plan::{Bound, ExecRegion, LaunchPlan};
use crate::stream::addressing::{Addressing, Dims};
use std::sync::Arc;

/// The pieces (member, plan) of a whole-stream reduction and the plan that combines their
/// values, or `None` where it is not split (several targets, an iterator, a strided input,
/// fewer leaves than members).
#[allow(clippy::type_complexity)]
pub(super) fn pieces(
    group: &super::DeviceGroup,
    plan: &LaunchPlan,
) -> Result<Option<(Vec<(usize, LaunchPlan)>, LaunchPlan)>, LaunchProblem> {
    let Some((input, target)) = crate::launch::input_and_target(plan.kernel()) else {
        return Ok(None);
    };
    if plan.domain.iter().product::<usize>() != 1 || super::split::runs_whole(plan) {
        return Ok(None);
    }
    let (
        Bound::Stream {
            shape, addressing, ..
        },
        Bound::Stream { .. },
    ) = (&plan.args[input], &plan.args[target])
    else {
        return Ok(None);
    };
    let members = group.members().len();
    let leaves: usize = shape.iter().product();
    if !addressing.is_contiguous(shape) || leaves < 2 || members < 2 {
        return Ok(None);
    }
    let piece = leaves.div_ceil(members).next_power_of_two();
    let count = leaves.div_ceil(piece);
    if count < 2 {
        return Ok(None);
    }
    let size = plan.module.layout(&plan.kernel().params[target].ty).size as usize;
    let partials = group
        .partials(count * size)
        .map_err(|e| LaunchProblem::Execution(e.to_string()))?;
    let parts = (0..count)
        .map(|j| {
            let len = piece.min(leaves - j * piece);
            (
                j,
                piece_plan(plan, (input, target), &partials, j * piece, len, j),
            )
        })
        .collect();
    let combine = combine_plan(plan, (input, target), partials, count);
    Ok(Some((parts, combine)))
}

/// The `len` leaves from leaf `first`, reduced as a stream of their own into partial `slot`.
fn piece_plan(
    plan: &LaunchPlan,
    (input, target): (usize, usize),
    partials: &Arc<dyn Buffer>,
    first: usize,
    len: usize,
    slot: usize,
) -> LaunchPlan {
    let mut part = into_one(plan, len);
    if let Bound::Stream {
        shape, addressing, ..
    } = &mut part.args[input]
    {
        *shape = smallvec::smallvec![len];
        *addressing = Addressing {
            offset: addressing.offset + first,
            pitches: smallvec::smallvec![1],
        };
    }
    part.args[target] = Bound::Stream {
        buffer: partials.clone(),
        shape: smallvec::smallvec![1],
        addressing: Addressing {
            offset: slot,
            pitches: smallvec::smallvec![1],
        },
    };
    part
}

/// The reduction of the `count` partials into the launch's target.
fn combine_plan(
    plan: &LaunchPlan,
    (input, target): (usize, usize),
    partials: Arc<dyn Buffer>,
    count: usize,
) -> LaunchPlan {
    let mut combine = into_one(plan, count);
    combine.args[input] = Bound::Stream {
        buffer: partials,
        shape: smallvec::smallvec![count],
        addressing: Addressing::row_major(&[count]),
    };
    if let Bound::Stream {
        shape, addressing, ..
    } = &mut combine.args[target]
    {
        *shape = smallvec::smallvec![1];
        *addressing = addressing.fit(1);
    }
    combine
}

/// The plan as a reduction of `leaves` leaves (a 1-D input) into one target.
fn into_one(plan: &LaunchPlan, leaves: usize) -> LaunchPlan {
    let one: Dims = smallvec::smallvec![1];
    let mut reduction = plan.clone();
    reduction.domain = one.clone();
    reduction.region = ExecRegion {
        origin: smallvec::smallvec![0],
        size: one,
    };
    reduction.reduction_tile = Some(smallvec::smallvec![leaves]);
    reduction
}
