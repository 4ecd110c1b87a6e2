//! Launching compiled kernels: grid shapes, device limits, and the passes of a reduction.

use super::buffer::CudaBuffer;
use super::driver::{launch, Function, Handles, Properties};
use crate::error::LaunchProblem;
use crate::launch::{Bound, Launch};
use crate::stream::Addressing;
use brook_codegen::ptx::{PtxKernel, COLUMNS_ENTRY, MAX_COLUMN_PIECE, MAX_PIECE, WARP_ENTRY};
use brook_ir::ParamRole;
use std::ffi::c_void;

/// Threads per block of map and reduction launches.
const BLOCK: u32 = 256;

fn blocks(threads: usize, per_block: u32) -> u32 {
    threads.div_ceil(per_block as usize).min(i32::MAX as usize) as u32
}

/// Runs a map kernel over the execution region.
pub fn run_map(
    function: &Function,
    handles: &Handles,
    block: *const u8,
    total: usize,
    per_thread: u64,
) -> Result<(), LaunchProblem> {
    if total == 0 {
        return Ok(());
    }
    let mut params = [block as *mut c_void];
    let threads = total.div_ceil(per_thread.max(1) as usize);
    launch(
        function,
        handles.stream,
        blocks(threads, BLOCK),
        BLOCK,
        &mut params,
    )
    .map_err(LaunchProblem::Execution)
}

/// Runs a thread-group kernel: one block per group, after checking the group fits.
pub fn run_groups(
    function: &Function,
    handles: &Handles,
    properties: &Properties,
    block: *const u8,
    total: usize,
    group_size: u32,
) -> Result<(), LaunchProblem> {
    let limit = properties.max_threads_per_block.min(function.max_threads);
    if group_size > limit {
        let why = if function.max_threads < properties.max_threads_per_block {
            format!(
                "the kernel uses {} registers per thread, which allows at most {} threads per group on {}",
                function.registers, function.max_threads, properties.name
            )
        } else {
            format!(
                "{} runs at most {} threads per group",
                properties.name, properties.max_threads_per_block
            )
        };
        return Err(LaunchProblem::NotSupported(format!(
            "thread group of {group_size} threads is too large: {why}"
        )));
    }
    if total == 0 {
        return Ok(());
    }
    let mut params = [block as *mut c_void];
    launch(
        function,
        handles.stream,
        blocks(total, group_size),
        group_size,
        &mut params,
    )
    .map_err(LaunchProblem::Execution)
}

/// Leaves per target that one thread reduces in a final pass without further splitting.
const SINGLE_PASS: u64 = 1024;

/// The shape of one reduction pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pass {
    pub leaves: u64,
    pub piece: u64,
    pub pieces: u64,
    /// One warp per piece (leaves consecutive in memory), else one thread per piece.
    pub cooperative: bool,
    /// One thread per four neighbouring targets (and piece).
    pub columns: bool,
}

/// What the layout of a pass's leaves allows.
#[derive(Clone, Copy, Debug, Default)]
pub struct Shape {
    /// Each target's leaves are consecutive in memory.
    pub contiguous: bool,
    /// Four neighbouring targets' leaves lie side by side (16 bytes per leaf).
    pub side_by_side: bool,
}

/// Nominal waves of warps a cooperative pass is split into.
const WARP_WAVES: u64 = 8;

/// Leaves per target from which a warp per piece pays off.
const COOPERATIVE_MIN: u64 = 64;
/// The smallest piece a warp gets when a target's leaves are split (smaller pieces would only
/// add passes).
const COOPERATIVE_PIECE: u64 = 512;

/// How the next pass splits `leaves` leaves per target over threads, for `targets` targets
/// on a GPU that keeps about `want` threads busy, and which entry runs it: the warp entry
/// where `shape` says each target's leaves are consecutive, the column entry where
/// neighbouring targets' leaves lie side by side, else the serial one.
pub fn plan_pass(leaves: u64, targets: u64, want: u64, shape: Shape) -> Pass {
    let cooperative = shape.contiguous && leaves >= COOPERATIVE_MIN;
    let columns = !cooperative && shape.side_by_side;
    let warps = (want / 32).max(1);
    let (workers, least) = if cooperative {
        // Few targets (a whole-stream sum) are split into several waves of warps, so that the
        // last, partial wave is a small part of the time (measured: 1.55 waves left the GPU
        // half idle for a third of a sum). Many targets (row sums) fill the GPU unsplit, and
        // splitting them would cost a pass.
        let splits = targets < warps / 2;
        let waves = if splits { WARP_WAVES } else { 1 };
        (warps * waves, COOPERATIVE_PIECE)
    } else if columns {
        // A thread covers four targets' pieces, so `want` leaves-per-thread workers make a
        // quarter of the threads the GPU holds: streaming long pieces read faster than a
        // full GPU of short ones (measured on an H200, 8192x8192 column sums: pieces of 256
        // rows 0.082 ms, of 64 rows 0.092 ms).
        (want.max(1), 32)
    } else {
        (want.max(1), 32)
    };
    let per_worker = (leaves * targets).div_ceil(workers).max(least);
    let most = if columns { MAX_COLUMN_PIECE } else { MAX_PIECE };
    let mut piece = per_worker.next_power_of_two().min(most);
    // A short tail of pieces is not worth another pass.
    // (The column path splits short columns too: a thread per four targets is few threads.)
    if piece >= leaves || (!cooperative && !columns && leaves <= SINGLE_PASS) {
        piece = leaves.next_power_of_two().min(most);
    }
    Pass {
        leaves,
        piece,
        pieces: leaves.div_ceil(piece),
        cooperative,
        columns,
    }
}

/// A reduction's input, when it is a stream: its bound shape and addressing.
fn stream_input(launch: &Launch) -> Option<(&[usize], &Addressing)> {
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
/// tile's row-major order: the tile is 1 on the outer axes, then one partial axis, then whole
/// dense axes.
fn tile_is_contiguous(launch: &Launch, tile: &[usize]) -> bool {
    let Some((shape, addressing)) = stream_input(launch) else {
        return false;
    };
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
fn tiles_side_by_side(launch: &Launch, tile: &[usize]) -> bool {
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

/// The entries of a reduction module: the serial one, and the faster ones it has.
pub struct ReduceEntries<'a> {
    serial: &'a Function,
    warp: Option<&'a Function>,
    columns: Option<&'a Function>,
}

impl<'a> ReduceEntries<'a> {
    /// Picks the entries out of `functions` (loaded in the order of `entry_names`).
    pub fn new(ptx: &PtxKernel, functions: &'a [Function]) -> ReduceEntries<'a> {
        let names = ptx.entry_names();
        let named = |name: &str| {
            names
                .iter()
                .position(|n| *n == name)
                .and_then(|i| functions.get(i))
        };
        ReduceEntries {
            serial: &functions[0],
            warp: named(WARP_ENTRY),
            columns: named(COLUMNS_ENTRY),
        }
    }
}

/// Runs a reduction in passes (see `brook_codegen::ptx`'s reduction driver).
pub fn run_reduction(
    entries: &ReduceEntries<'_>,
    handles: &Handles,
    properties: &Properties,
    launch_info: &Launch,
    block: *const u8,
    value_size: u32,
) -> Result<(), LaunchProblem> {
    let targets: u64 = launch_info.domain.iter().product::<usize>() as u64;
    let tile: u64 = launch_info
        .reduction_tile
        .as_ref()
        .map_or(0, |t| t.iter().product::<usize>() as u64);
    if targets == 0 || tile == 0 {
        return Ok(());
    }
    let want = u64::from(properties.multiprocessors.max(1)) * 2048;
    let tile_shape = launch_info.reduction_tile.as_deref().unwrap_or(&[]);
    let (has_warp, has_columns) = (entries.warp.is_some(), entries.columns.is_some());
    let mut shape = Shape {
        contiguous: has_warp && tile_is_contiguous(launch_info, tile_shape),
        side_by_side: has_columns && tiles_side_by_side(launch_info, tile_shape),
    };
    let mut leaves = tile;
    let mut source: Option<CudaBuffer> = None;
    loop {
        let pass = plan_pass(leaves, targets, want, shape);
        let last = pass.pieces == 1;
        let target_out = if last {
            None
        } else {
            // Every element of the scratch array is written by this pass before the next reads.
            let bytes = (pass.pieces * targets) as usize * value_size as usize;
            Some(CudaBuffer::uninit(*handles, bytes).map_err(LaunchProblem::Execution)?)
        };
        let mut src = source.as_ref().map_or(0, CudaBuffer::ptr);
        let mut dst = target_out.as_ref().map_or(0, CudaBuffer::ptr);
        let (mut leaves_p, mut piece, mut pieces) = (pass.leaves, pass.piece, pass.pieces);
        let mut mode: u32 = u32::from(source.is_some()) | if last { 2 } else { 0 };
        let function = match (pass.cooperative, pass.columns) {
            (true, _) => entries.warp.unwrap_or(entries.serial),
            (_, true) => entries.columns.unwrap_or(entries.serial),
            _ => entries.serial,
        };
        let mut params = [
            block as *mut c_void,
            (&mut src as *mut u64).cast(),
            (&mut dst as *mut u64).cast(),
            (&mut leaves_p as *mut u64).cast(),
            (&mut piece as *mut u64).cast(),
            (&mut pieces as *mut u64).cast(),
            (&mut mode as *mut u32).cast(),
        ];
        let threads = if pass.cooperative {
            targets * pass.pieces * 32
        } else if pass.columns {
            targets / 4 * pass.pieces
        } else {
            targets * pass.pieces
        } as usize;
        launch(
            function,
            handles.stream,
            blocks(threads, BLOCK),
            BLOCK,
            &mut params,
        )
        .map_err(LaunchProblem::Execution)?;
        if last {
            return Ok(());
        }
        // The previous scratch array is freed after this pass on the stream.
        source = target_out;
        leaves = pass.pieces;
        // A column pass writes its scratch array as `[piece][target]` (rows of targets side
        // by side, read by the column entry again); the others as `[target][piece]` (each
        // target's pieces consecutive).
        shape = Shape {
            contiguous: has_warp && !pass.columns,
            side_by_side: pass.columns,
        };
    }
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

    #[test]
    fn passes_end_with_one_piece_per_target() {
        for (leaves, targets) in [
            (1u64 << 28, 1u64),
            (8192, 8192),
            (3, 5),
            (1000, 1),
            (1 << 20, 4),
        ] {
            let mut l = leaves;
            let mut passes = 0;
            loop {
                let shape = Shape {
                    contiguous: passes > 0,
                    side_by_side: passes == 0 && targets % 4 == 0,
                };
                let p = plan_pass(l, targets, 132 * 2048, shape);
                assert!(p.piece.is_power_of_two() && p.piece * p.pieces >= l);
                passes += 1;
                if p.pieces == 1 {
                    break;
                }
                assert!(p.pieces < l, "no progress at {l}");
                l = p.pieces;
            }
            assert!(passes <= 4, "{leaves} x {targets}: {passes} passes");
        }
    }
}
