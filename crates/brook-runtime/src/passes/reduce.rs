//! A reduction in the passes [`reduce_plan::plan`] gives: each pass reduces every target's
//! leaves in pieces into a scratch array (`[target][piece]`, or `[piece][target]` after a
//! column pass) or, in the last pass, into the targets.

use super::layout::{tile_is_contiguous, tiles_side_by_side};
use super::{threads, PassArgs, PassRunner};
use crate::error::LaunchProblem;
use crate::plan::LaunchPlan;
use crate::reduce_plan::{self, Capabilities, Layout};

/// The fewest leaves a GPU thread's serial piece gets.
const SERIAL_MIN_PIECE: u64 = 32;
/// Leaves per target that one thread reduces in a final pass without further splitting.
const SERIAL_WHOLE: u64 = 1024;

/// The reduction's capabilities on a device running `runner`'s entries.
pub fn capabilities<R: PassRunner>(runner: &R) -> Capabilities<'_> {
    Capabilities {
        parallelism: runner.parallelism(),
        pieces_per_worker: 1,
        serial_min_piece: SERIAL_MIN_PIECE,
        serial_whole: SERIAL_WHOLE,
        entries: runner.entries(),
    }
}

/// Runs the reduction `launch` whose values are `value_size` bytes.
pub fn run<R: PassRunner>(
    runner: &R,
    launch: &LaunchPlan,
    value_size: u32,
) -> Result<(), LaunchProblem> {
    let targets: u64 = launch.domain.iter().product::<usize>() as u64;
    let tile_shape = launch.reduction_tile.as_deref().unwrap_or(&[]);
    let tile: u64 = launch
        .reduction_tile
        .as_ref()
        .map_or(0, |t| t.iter().product::<usize>() as u64);
    if targets == 0 || tile == 0 {
        return Ok(());
    }
    let caps = capabilities(runner);
    let first = Layout {
        contiguous: tile_is_contiguous(launch, tile_shape),
        side_by_side: tiles_side_by_side(launch, tile_shape),
    };
    let mut source: Option<R::Scratch> = None;
    for pass in reduce_plan::plan(tile, targets, &caps, first) {
        let last = pass.pieces == 1;
        let target_out = if last {
            None
        } else {
            // Every element of the scratch array is written by this pass before the next reads.
            Some(runner.scratch(pass.pieces * targets * u64::from(value_size))?)
        };
        let args = PassArgs {
            src: source.as_ref().map_or(0, |s| runner.address(s)),
            dst: target_out.as_ref().map_or(0, |s| runner.address(s)),
            leaves: pass.leaves,
            piece: pass.piece,
            pieces: pass.pieces,
            mode: u32::from(source.is_some()) | if last { 2 } else { 0 },
        };
        let threads = threads(&pass.entry, targets, pass.pieces);
        runner.run_pass(&pass.entry, threads, args, &[])?;
        // The previous scratch array is freed after this pass, in the device's order.
        source = target_out;
    }
    Ok(())
}
