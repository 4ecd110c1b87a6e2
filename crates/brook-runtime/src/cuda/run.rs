//! Launching compiled kernels: grid shapes, device limits, and the passes of a reduction.

use super::buffer::CudaBuffer;
use super::driver::{launch, Function, Handles, Properties};
use crate::error::{DeviceLimit, LaunchProblem, Limit};
use crate::plan::{Bound, LaunchPlan};
use crate::reduce_plan::{self, Capabilities, Layout};
use crate::stream::addressing::Addressing;
use brook_codegen::abi::{ReduceEntry, ReduceShape};
use brook_codegen::ptx::{EntryKind, PtxKernel};
use brook_ir::ParamRole;
use std::ffi::c_void;

/// Threads per block of map and reduction launches.
pub(super) const BLOCK: u32 = 256;

pub(super) fn blocks(threads: usize, per_block: u32) -> u32 {
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
        let why = (function.max_threads < properties.max_threads_per_block).then(|| {
            format!(
                "the kernel uses {} registers per thread",
                function.registers
            )
        });
        return Err(LaunchProblem::DeviceLimit(DeviceLimit {
            device: properties.name.clone(),
            what: Limit::ThreadsPerGroup,
            requested: u64::from(group_size),
            limit: u64::from(limit),
            why,
        }));
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

/// A reduction's input, when it is a stream: its bound shape and addressing.
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
pub(super) fn tile_is_contiguous(launch: &LaunchPlan, tile: &[usize]) -> bool {
    stream_input(launch)
        .is_some_and(|(shape, addressing)| tiles_are_contiguous(shape, addressing, tile))
}

/// Whether each tile of a stream of `shape` lies consecutively in its buffer, in the tile's
/// row-major order: the tile is 1 on the outer axes, then one partial axis, then whole dense
/// axes.
pub(super) fn tiles_are_contiguous(
    shape: &[usize],
    addressing: &Addressing,
    tile: &[usize],
) -> bool {
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
fn tiles_side_by_side(launch: &LaunchPlan, tile: &[usize]) -> bool {
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

/// A reduction module's loaded entries, with what each declares.
pub struct ReduceEntries<'a> {
    ptx: &'a PtxKernel,
    functions: &'a [Function],
}

impl<'a> ReduceEntries<'a> {
    /// `functions` are loaded in the order of [`PtxKernel::entry_names`].
    pub fn new(ptx: &'a PtxKernel, functions: &'a [Function]) -> ReduceEntries<'a> {
        ReduceEntries { ptx, functions }
    }

    /// The entries the module declares, in the order their functions were loaded.
    fn declared(&self) -> &'a [ReduceEntry] {
        match &self.ptx.entry {
            EntryKind::Reduce { entries, .. } => entries,
            _ => &[],
        }
    }

    /// The reduction's capabilities on a GPU that keeps `parallelism` threads busy.
    fn capabilities(&self, parallelism: u64) -> Capabilities<'a> {
        Capabilities {
            parallelism,
            pieces_per_worker: 1,
            serial_min_piece: SERIAL_MIN_PIECE,
            serial_whole: SERIAL_WHOLE,
            entries: self.declared(),
        }
    }

    /// The loaded function of entry `name`.
    fn function(&self, name: &str) -> Option<&'a Function> {
        let index = self.declared().iter().position(|e| e.name == name)?;
        self.functions.get(index)
    }

    /// The declared entry of a shape, if the module has one.
    pub(super) fn entry(&self, shape: ReduceShape) -> Option<ReduceEntry> {
        self.declared().iter().copied().find(|e| e.shape == shape)
    }

    /// [`Self::function`], or the launch's error when the module lacks it.
    pub(super) fn loaded(&self, name: &str) -> Result<&'a Function, LaunchProblem> {
        self.function(name).ok_or_else(|| {
            LaunchProblem::NotSupported(format!("the reduction module has no entry `{name}`"))
        })
    }
}

/// The parameters every pass entry (reductions' and the scan's) takes after the block.
pub(super) struct PassArgs {
    pub src: u64,
    pub dst: u64,
    pub leaves: u64,
    pub piece: u64,
    pub pieces: u64,
    pub mode: u32,
}

/// Launches a pass entry on `threads` threads in blocks of [`BLOCK`]: the block, `args`, then
/// `extra` (an entry's own 8-byte parameters).
pub(super) fn launch_pass(
    function: &Function,
    handles: &Handles,
    block: *const u8,
    threads: u64,
    mut args: PassArgs,
    extra: &mut [u64],
) -> Result<(), LaunchProblem> {
    let mut params: Vec<*mut c_void> = vec![
        block as *mut c_void,
        (&mut args.src as *mut u64).cast(),
        (&mut args.dst as *mut u64).cast(),
        (&mut args.leaves as *mut u64).cast(),
        (&mut args.piece as *mut u64).cast(),
        (&mut args.pieces as *mut u64).cast(),
        (&mut args.mode as *mut u32).cast(),
    ];
    params.extend(extra.iter_mut().map(|x| (x as *mut u64).cast::<c_void>()));
    launch(
        function,
        handles.stream,
        blocks(threads as usize, BLOCK),
        BLOCK,
        &mut params,
    )
    .map_err(LaunchProblem::Execution)
}

/// The fewest leaves a GPU thread's serial piece gets.
const SERIAL_MIN_PIECE: u64 = 32;
/// Leaves per target that one thread reduces in a final pass without further splitting.
const SERIAL_WHOLE: u64 = 1024;

/// Runs a reduction in the passes [`reduce_plan::plan`] gives (see
/// `brook_codegen::ptx`'s reduction driver).
pub fn run_reduction(
    entries: &ReduceEntries<'_>,
    handles: &Handles,
    properties: &Properties,
    launch_info: &LaunchPlan,
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
    let caps = entries.capabilities(u64::from(properties.multiprocessors.max(1)) * 2048);
    let tile_shape = launch_info.reduction_tile.as_deref().unwrap_or(&[]);
    let first = Layout {
        contiguous: tile_is_contiguous(launch_info, tile_shape),
        side_by_side: tiles_side_by_side(launch_info, tile_shape),
    };
    let mut source: Option<CudaBuffer> = None;
    for pass in reduce_plan::plan(tile, targets, &caps, first) {
        let last = pass.pieces == 1;
        let target_out = if last {
            None
        } else {
            // Every element of the scratch array is written by this pass before the next reads.
            let bytes = (pass.pieces * targets) as usize * value_size as usize;
            Some(CudaBuffer::uninit(*handles, bytes).map_err(LaunchProblem::Execution)?)
        };
        let args = PassArgs {
            src: source.as_ref().map_or(0, CudaBuffer::ptr),
            dst: target_out.as_ref().map_or(0, CudaBuffer::ptr),
            leaves: pass.leaves,
            piece: pass.piece,
            pieces: pass.pieces,
            mode: u32::from(source.is_some()) | if last { 2 } else { 0 },
        };
        let function = entries.loaded(pass.entry.name)?;
        let threads = match pass.entry.shape {
            ReduceShape::Warp => targets * pass.pieces * 32,
            ReduceShape::Columns => targets / 4 * pass.pieces,
            ReduceShape::Serial | ReduceShape::Scan | ReduceShape::ScanTiles => {
                targets * pass.pieces
            }
        };
        launch_pass(function, handles, block, threads, args, &mut [])?;
        // The previous scratch array is freed after this pass on the stream.
        source = target_out;
    }
    Ok(())
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
