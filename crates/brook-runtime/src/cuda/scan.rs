//! Scans on a GPU, in the canonical order of `brook_ir::scan_order`.
//!
//! Where each row of the input and of the output lies consecutively in memory, one launch of
//! the module's one-pass entry scans every row: a block per tile, tiles publishing their
//! groups' values in a table that later tiles read (`brook_codegen::ptx`'s `scan_tiles`).
//! Rows of more than one tile take the prefetching entry where the module has it: its tiles
//! are larger (`scan_ahead_tile_leaves`) and each block asks for `scan_ahead_stage_bytes` of
//! dynamic shared memory.
//!
//! Otherwise the scan runs in levels, as on every GPU ([`crate::passes::scan`]).

use super::buffer::CudaBuffer;
use super::driver::{check, launch, launch_with_shared, Function, Handles};
use super::run::{blocks, CudaPasses};
use crate::error::LaunchProblem;
use crate::passes::layout::tiles_are_contiguous;
use crate::passes::PassRunner;
use crate::plan::{Bound, LaunchPlan, ScanPlan};
use brook_codegen::abi::ReduceShape;
use brook_codegen::ptx::{
    scan_ahead_stage_bytes, scan_ahead_tile_leaves, scan_tile_leaves, SCAN_TABLE_LEVELS,
    SCAN_TABLE_WORD_BYTES, SCAN_TILES_AHEAD_ENTRY, SCAN_TILE_THREADS,
};
use brook_ir::scan_order::ScanKind;
use brook_ir::ParamRole;
use cudarc::driver::sys;
use std::ffi::c_void;

/// Runs a scan launch.
pub fn run_scan(
    passes: &CudaPasses<'_>,
    plan: &LaunchPlan,
    value_size: u32,
    scan: &ScanPlan,
) -> Result<(), LaunchProblem> {
    let (entries, handles, block) = (passes.entries, passes.handles, passes.block);
    let rows = plan.domain.iter().product::<usize>() as u64;
    let tile = plan.reduction_tile.as_deref().unwrap_or(&[]);
    let leaves = tile.iter().product::<usize>() as u64;
    if rows == 0 || leaves == 0 || plan.reduction_tile.is_none() {
        return Ok(());
    }
    if let Some(entry) = passes.entry(ReduceShape::ScanTiles) {
        if rows_are_contiguous(plan, tile) {
            let init = match &scan.init {
                Some(bytes) => Some(upload(handles, bytes)?),
                None => None,
            };
            let one_pass = OnePass {
                function: entries.loaded(entry.name)?,
                ahead: entries.loaded(SCAN_TILES_AHEAD_ENTRY).ok(),
                handles,
                block,
                value_size: u64::from(value_size),
            };
            let init_ptr = init.as_ref().map_or(0, CudaBuffer::ptr);
            if let Some(done) = one_pass.run(rows, leaves, scan, init_ptr) {
                return done;
            }
        }
    }
    crate::passes::scan::run(passes, plan, value_size, scan)
}

/// Whether every row of the input and of the output lies consecutively in memory.
fn rows_are_contiguous(plan: &LaunchPlan, tile: &[usize]) -> bool {
    let kernel = plan.kernel();
    let contiguous = |role: &dyn Fn(&ParamRole) -> bool| {
        kernel
            .params
            .iter()
            .position(|p| role(&p.role))
            .and_then(|index| match &plan.args[index] {
                Bound::Stream {
                    shape, addressing, ..
                } => Some(tiles_are_contiguous(shape, addressing, tile)),
                _ => None,
            })
            .unwrap_or(false)
    };
    contiguous(&|r| matches!(r, ParamRole::Input)) && contiguous(&|r| *r == ParamRole::Reduce)
}

/// The one-pass entry and what its launch needs.
struct OnePass<'a> {
    function: &'a Function,
    /// The entry that prefetches a later tile's input while a tile waits for its prefix: for
    /// rows of more than one tile (a row's first tile never waits).
    ahead: Option<&'a Function>,
    handles: &'a Handles,
    block: *const u8,
    value_size: u64,
}

impl OnePass<'_> {
    /// Scans every row in one launch; `None` when a row has more tiles than the group table
    /// holds (the levels then do it).
    fn run(
        &self,
        rows: u64,
        leaves: u64,
        scan: &ScanPlan,
        init: u64,
    ) -> Option<Result<(), LaunchProblem>> {
        let size = self.value_size as u32;
        let mut tiles = leaves.div_ceil(scan_tile_leaves(size));
        // Rows of more than one tile go to the prefetching entry, whose tiles are larger.
        let ahead = self.ahead.filter(|_| tiles > 1);
        if ahead.is_some() {
            tiles = leaves.div_ceil(scan_ahead_tile_leaves(size));
        }
        // Base-32 digits of the tile count: the table's levels.
        let mut levels = 1;
        while tiles >> (5 * levels) > 0 {
            levels += 1;
        }
        if levels > SCAN_TABLE_LEVELS {
            return None;
        }
        Some(self.launch(rows, leaves, (tiles, ahead), levels, scan, init))
    }

    fn launch(
        &self,
        rows: u64,
        leaves: u64,
        (tiles, ahead): (u64, Option<&Function>),
        levels: u64,
        scan: &ScanPlan,
        init: u64,
    ) -> Result<(), LaunchProblem> {
        let entries = levels * rows * tiles;
        let values = CudaBuffer::uninit(*self.handles, (entries * self.value_size) as usize)
            .map_err(LaunchProblem::Execution)?;
        // The entries' flag words, then the ticket counter: all zero.
        let words = entries * SCAN_TABLE_WORD_BYTES / 4 + 1;
        let flags = CudaBuffer::uninit(*self.handles, (words * 4) as usize)
            .map_err(LaunchProblem::Execution)?;
        // SAFETY: the buffer holds `words` 4-byte words.
        let code =
            unsafe { sys::cuMemsetD32Async(flags.ptr(), 0, words as usize, self.handles.stream) };
        check(code, "clearing a scan's group table").map_err(LaunchProblem::Execution)?;
        let (mut leaves, mut tiles_p, mut init) = (leaves, tiles, init);
        let mut mode: u32 = if scan.kind == ScanKind::Exclusive {
            4
        } else {
            0
        };
        let (mut values_ptr, mut flags_ptr) = (values.ptr(), flags.ptr());
        let mut ticket = flags.ptr() + entries * SCAN_TABLE_WORD_BYTES;
        let mut params = [
            self.block as *mut c_void,
            (&mut leaves as *mut u64).cast(),
            (&mut tiles_p as *mut u64).cast(),
            (&mut mode as *mut u32).cast(),
            (&mut init as *mut u64).cast(),
            (&mut values_ptr as *mut u64).cast(),
            (&mut flags_ptr as *mut u64).cast(),
            (&mut ticket as *mut u64).cast(),
        ];
        // A block per tile.
        let tiles_total = (rows * tiles) as usize;
        let grid = blocks(tiles_total * SCAN_TILE_THREADS as usize, SCAN_TILE_THREADS);
        let Some(ahead) = ahead else {
            return launch(
                self.function,
                self.handles.stream,
                grid,
                SCAN_TILE_THREADS,
                &mut params,
            )
            .map_err(LaunchProblem::Execution);
        };
        let stage = scan_ahead_stage_bytes(self.value_size as u32) as u32;
        launch_with_shared(
            ahead,
            self.handles.stream,
            (grid, SCAN_TILE_THREADS),
            stage,
            &mut params,
        )
        .map_err(LaunchProblem::Execution)
        // The table is freed in stream order after the launch.
    }
}

/// `bytes` in a new device buffer, copied in stream order.
pub(super) fn upload(handles: &Handles, bytes: &[u8]) -> Result<CudaBuffer, LaunchProblem> {
    let buffer = CudaBuffer::uninit(*handles, bytes.len()).map_err(LaunchProblem::Execution)?;
    // SAFETY: the buffer holds `bytes.len()` bytes; from pageable memory the call returns
    // once the bytes are staged.
    let code = unsafe {
        sys::cuMemcpyHtoDAsync_v2(
            buffer.ptr(),
            bytes.as_ptr().cast(),
            bytes.len(),
            handles.stream,
        )
    };
    check(code, "copying a scan's initial value to the GPU").map_err(LaunchProblem::Execution)?;
    Ok(buffer)
}
