//! What the layout of a launch's leaves allows a reduction or scan: whether each target's
//! tile lies consecutively in its buffer, whether neighbouring targets' tiles lie side by side
//! (the column entry), read from the launch plan's bound streams.

use crate::plan::{Bound, LaunchPlan};
use crate::stream::addressing::Addressing;
use brook_ir::ParamRole;

fn stream_input(launch: &LaunchPlan) -> Option<(&[usize], &Addressing)> {
    let input = launch
        .kernel()
        .params
        .iter()
        .position(|p| matches!(p.role, ParamRole::Input | ParamRole::Iterator))?;
    match &launch.args[input] {
        Bound::Stream {
            shape, addressing, ..
        } => Some((shape, addressing)),
        _ => None,
    }
}

/// Whether each target's tile of the (stream) input lies consecutively in its buffer, in the
/// tile's row-major order (see [`tiles_are_contiguous`]).
pub fn tile_is_contiguous(launch: &LaunchPlan, tile: &[usize]) -> bool {
    stream_input(launch)
        .is_some_and(|(shape, addressing)| tiles_are_contiguous(shape, addressing, tile))
}

/// Whether each tile of a stream of `shape` lies consecutively in its buffer, in the tile's
/// row-major order: the tile is 1 on the outer axes, then one partial axis, then whole dense
/// axes.
pub fn tiles_are_contiguous(shape: &[usize], addressing: &Addressing, tile: &[usize]) -> bool {
    let Some(first) = tile.iter().position(|&t| t > 1) else {
        return true;
    };
    let mut dense = 1;
    for axis in (first..tile.len()).rev() {
        if addressing.pitches[axis] != dense || (axis > first && tile[axis] != shape[axis]) {
            return false;
        }
        dense *= shape[axis];
    }
    true
}

/// Whether the column entry can read the input: neighbouring targets' tiles lie side by side
/// (groups of four targets along the last axis, each tile one element wide there, with unit
/// pitch), each target's leaves are evenly spaced in memory, and every row of four leaves is
/// 16-byte aligned (buffers are, so the view's offset and pitches must be multiples of 4).
pub fn tiles_side_by_side(launch: &LaunchPlan, tile: &[usize]) -> bool {
    let Some((shape, addressing)) = stream_input(launch) else {
        return false;
    };
    let pitches = &addressing.pitches;
    let Some(last) = pitches.len().checked_sub(1) else {
        return false;
    };
    let aligned = addressing.offset % 4 == 0
        && (0..last).all(|axis| shape[axis] <= 1 || pitches[axis] % 4 == 0);
    launch.domain.last().is_some_and(|&d| d % 4 == 0)
        && tile.last() == Some(&1)
        && pitches[last] == 1
        && aligned
        && leaves_evenly_spaced(tile, pitches)
}

/// Whether a tile's leaves, in row-major order, lie a fixed number of elements apart: each
/// axis longer than one element steps exactly over the whole of the next such axis.
fn leaves_evenly_spaced(tile: &[usize], pitches: &[usize]) -> bool {
    let long: Vec<usize> = (0..tile.len()).filter(|&axis| tile[axis] > 1).collect();
    long.windows(2)
        .all(|w| pitches[w[0]] == tile[w[1]] * pitches[w[1]])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaves_are_evenly_spaced_when_each_long_axis_steps_over_the_next() {
        // A whole [16, 12, 64] stream summed over its two outer axes: one stride of 64.
        assert!(leaves_evenly_spaced(&[16, 12, 1], &[768, 64, 1]));
        // Rows of a [16, 11] view of it: a gap after every 11 rows.
        assert!(!leaves_evenly_spaced(&[16, 11, 1], &[768, 64, 1]));
        // Axes of one element do not count.
        assert!(leaves_evenly_spaced(&[16, 1, 1], &[768, 64, 1]));
        assert!(leaves_evenly_spaced(&[1, 1, 1], &[768, 64, 1]));
    }
}
