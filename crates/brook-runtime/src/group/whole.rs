//! A reduction to one value split among a group's members in aligned power-of-two pieces.
//!
//! The input's `L` leaves (row-major; the stream must be contiguous) are cut into pieces of
//! `P` leaves, `P` a power of two; piece `j` is the canonical tree's node `(j * P, P)`
//! (`brook_ir::reduce_order`), so a member reducing it as a row of its own computes exactly
//! that subtree. Each member takes a run of consecutive pieces and reduces them as the rows
//! of a `[k, P]` view (the ragged last piece on its own) into a partial stream, which the
//! first member reduces into the target: the canonical tree over the pieces is the top of the
//! tree over the leaves, and the result is the single device's bits.
//!
//! Large reductions are cut into [`PIECES_PER_MEMBER`] pieces a member, and the first member,
//! which also combines, takes [`COMBINER_SHARE_LESS`] fewer: measured on two H100s, the
//! combine (a copy between the GPUs, the waits on the other GPU, a launch) costs about 25 us,
//! an eighth of a member's half of a 2^28-float sum.

use crate::buffer::Buffer;
use crate::error::LaunchProblem;
use crate::plan::{Bound, ExecRegion, LaunchPlan};
use crate::stream::addressing::{Addressing, Dims};
use std::sync::Arc;

/// Pieces a member gets when the reduction is large enough to spread its pieces unevenly.
const PIECES_PER_MEMBER: usize = 32;
/// Pieces fewer the combining member takes.
const COMBINER_SHARE_LESS: usize = 2;
/// Leaves per member from which the pieces are spread unevenly (below it, one piece each).
const UNEVEN_FROM: usize = 1 << 22;

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
    let piece = piece_size(leaves, members);
    let count = leaves.div_ceil(piece);
    if count < 2 {
        return Ok(None);
    }
    let size = plan.module.layout(&plan.kernel().params[target].ty).size as usize;
    let partials = group
        .partials(count * size)
        .map_err(|e| LaunchProblem::Execution(e.to_string()))?;
    let mut parts = Vec::new();
    for (member, first, end) in runs_of_pieces(count, members) {
        // Whole pieces as rows; a ragged last piece on its own.
        let whole = (first..end).filter(|j| (j + 1) * piece <= leaves).count();
        if whole > 0 {
            let rows = rows_piece(
                plan,
                (input, target),
                &partials,
                (piece, piece),
                first,
                whole,
            );
            parts.push((member, rows));
        }
        if first + whole < end {
            let j = first + whole;
            let ragged = (piece, leaves - j * piece);
            parts.push((
                member,
                rows_piece(plan, (input, target), &partials, ragged, j, 1),
            ));
        }
    }
    let combine = combine_plan(plan, (input, target), partials, count);
    Ok(Some((parts, combine)))
}

/// Leaves per piece: about one piece a member, or [`PIECES_PER_MEMBER`] where those are large.
fn piece_size(leaves: usize, members: usize) -> usize {
    let count = if leaves.div_ceil(members) >= UNEVEN_FROM {
        members * PIECES_PER_MEMBER
    } else {
        members
    };
    leaves.div_ceil(count).next_power_of_two()
}

/// Each member's run of the `count` pieces, `(member, first piece, end)`, in member order; the
/// first member takes [`COMBINER_SHARE_LESS`] fewer where the pieces are many.
fn runs_of_pieces(count: usize, members: usize) -> Vec<(usize, usize, usize)> {
    let less = if count >= members * PIECES_PER_MEMBER {
        COMBINER_SHARE_LESS
    } else {
        0
    };
    let first_share = (count / members).saturating_sub(less).clamp(1, count);
    let mut runs = vec![(0, 0, first_share)];
    let (rest, others) = (count - first_share, members - 1);
    let mut at = first_share;
    for m in 0..others {
        let share = rest / others + usize::from(m < rest % others);
        if share > 0 {
            runs.push((m + 1, at, at + share));
            at += share;
        }
    }
    runs
}

/// Pieces `first..first + rows` (each `piece` leaves apart in the input), reduced as the rows
/// of a `[rows, len]` view into partials `first..`; `len` is `piece` but for a ragged last
/// piece.
fn rows_piece(
    plan: &LaunchPlan,
    (input, target): (usize, usize),
    partials: &Arc<dyn Buffer>,
    (piece, len): (usize, usize),
    first: usize,
    rows: usize,
) -> LaunchPlan {
    let mut part = plan.clone();
    let domain: Dims = smallvec::smallvec![rows, 1];
    part.domain = domain.clone();
    part.region = ExecRegion {
        origin: smallvec::smallvec![0, 0],
        size: domain.clone(),
    };
    part.reduction_tile = Some(smallvec::smallvec![1, len]);
    if let Bound::Stream {
        shape, addressing, ..
    } = &mut part.args[input]
    {
        *shape = smallvec::smallvec![rows, len];
        *addressing = Addressing {
            offset: addressing.offset + first * piece,
            pitches: smallvec::smallvec![piece, 1],
        };
    }
    part.args[target] = Bound::Stream {
        buffer: partials.clone(),
        shape: domain,
        addressing: Addressing {
            offset: first,
            pitches: smallvec::smallvec![1, 1],
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
    let one: Dims = smallvec::smallvec![1];
    let mut combine = plan.clone();
    combine.domain = one.clone();
    combine.region = ExecRegion {
        origin: smallvec::smallvec![0],
        size: one.clone(),
    };
    combine.reduction_tile = Some(smallvec::smallvec![count]);
    combine.args[input] = Bound::Stream {
        buffer: partials,
        shape: smallvec::smallvec![count],
        addressing: Addressing::row_major(&[count]),
    };
    if let Bound::Stream {
        shape, addressing, ..
    } = &mut combine.args[target]
    {
        *shape = one;
        *addressing = addressing.fit(1);
    }
    combine
}
