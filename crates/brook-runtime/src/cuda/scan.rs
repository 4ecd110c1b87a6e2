//! Scans on a GPU, in the canonical order of `brook_ir::scan_order`.
//!
//! Where each row of the input and of the output lies consecutively in memory, one launch of
//! the module's one-pass entry scans every row: a block per tile, tiles publishing their
//! groups' values in a table that later tiles read (`brook_codegen::ptx`'s `scan_tiles`).
//! Rows of more than one tile take the prefetching entry where the module has it: its tiles
//! are larger (`scan_ahead_tile_leaves`) and each block asks for `scan_ahead_stage_bytes` of
//! dynamic shared memory.
//!
//! Otherwise the scan runs in levels. A level scans `rows` rows of `leaves` leaves in aligned
//! pieces of [`PIECE`] leaves, one thread per piece (the module's scan entry). When a row has more than one piece, a
//! reduction pass first writes every piece's total (`[row][piece]`), the next level scans the
//! totals exclusively (from the initial value, if any) into the pieces' prefixes, and then
//! this level's pieces are scanned from them. Every piece is an aligned block of its row, so
//! the result is the canonical scan (see `scan_order`, "Why this order").

use super::buffer::CudaBuffer;
use super::driver::{check, launch, launch_with_shared, Function, Handles};
use super::run::{blocks, launch_pass, tiles_are_contiguous, PassArgs, ReduceEntries};
use crate::error::LaunchProblem;
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

/// Leaves per piece: a thread's serial scan, and a warp's reduction of one chunk.
const PIECE: u64 = 256;

/// Where a level's leaves come from and its prefixes go: the launch's streams (the first
/// level) or scratch arrays (`[row][leaf]`).
#[derive(Clone, Copy)]
struct Level {
    leaves: u64,
    src: u64,
    dst: u64,
    /// The first level: the input stream in, the output stream out.
    streams: bool,
    exclusive: bool,
}

/// One scan launch's entries and rows.
struct Scan<'a> {
    entries: &'a ReduceEntries<'a>,
    handles: &'a Handles,
    block: *const u8,
    value_size: u64,
    rows: u64,
    /// The initial value on the device, or 0.
    init: u64,
    /// The first level's leaves lie consecutively, row after row.
    contiguous: bool,
}

/// Runs a scan launch.
pub fn run_scan(
    entries: &ReduceEntries<'_>,
    handles: &Handles,
    plan: &LaunchPlan,
    block: *const u8,
    value_size: u32,
    scan: &ScanPlan,
) -> Result<(), LaunchProblem> {
    let rows = plan.domain.iter().product::<usize>() as u64;
    let leaves = plan
        .reduction_tile
        .as_ref()
        .map_or(0, |t| t.iter().product::<usize>() as u64);
    if rows == 0 || leaves == 0 {
        return Ok(());
    }
    let init = match &scan.init {
        Some(bytes) => Some(upload(handles, bytes)?),
        None => None,
    };
    let tile = plan.reduction_tile.as_deref().unwrap_or(&[]);
    let init_ptr = init.as_ref().map_or(0, CudaBuffer::ptr);
    if let Some(entry) = entries.entry(ReduceShape::ScanTiles) {
        if rows_are_contiguous(plan, tile) {
            let one_pass = OnePass {
                function: entries.loaded(entry.name)?,
                ahead: entries.loaded(SCAN_TILES_AHEAD_ENTRY).ok(),
                handles,
                block,
                value_size: u64::from(value_size),
            };
            if let Some(done) = one_pass.run(rows, leaves, scan, init_ptr) {
                return done;
            }
        }
    }
    let s = Scan {
        entries,
        handles,
        block,
        value_size: u64::from(value_size),
        rows,
        init: init_ptr,
        contiguous: super::run::tile_is_contiguous(plan, tile),
    };
    s.level(Level {
        leaves,
        src: 0,
        dst: 0,
        streams: true,
        exclusive: scan.kind == ScanKind::Exclusive,
    })
    // `init` is freed in stream order after the launches that read it.
}

impl Scan<'_> {
    fn level(&self, level: Level) -> Result<(), LaunchProblem> {
        let pieces = level.leaves.div_ceil(PIECE);
        if pieces == 1 {
            return self.scan_pieces(level, 0, pieces);
        }
        let bytes = (self.rows * pieces * self.value_size) as usize;
        let scratch = || CudaBuffer::uninit(*self.handles, bytes).map_err(LaunchProblem::Execution);
        let (totals, prefixes) = (scratch()?, scratch()?);
        self.totals(level, pieces, totals.ptr())?;
        self.level(Level {
            leaves: pieces,
            src: totals.ptr(),
            dst: prefixes.ptr(),
            streams: false,
            exclusive: true,
        })?;
        self.scan_pieces(level, prefixes.ptr(), pieces)
    }

    /// Every piece's total, by a reduction pass (a warp per piece where the leaves are
    /// consecutive).
    fn totals(&self, level: Level, pieces: u64, dst: u64) -> Result<(), LaunchProblem> {
        let warp = self
            .entries
            .entry(ReduceShape::Warp)
            .filter(|_| !level.streams || self.contiguous);
        let entry = match warp {
            Some(warp) => warp,
            None => self.entries.entry(ReduceShape::Serial).ok_or_else(|| {
                LaunchProblem::NotSupported("the reduction module has no serial entry".into())
            })?,
        };
        let function = self.entries.loaded(entry.name)?;
        let threads = match entry.shape {
            ReduceShape::Warp => self.rows * pieces * 32,
            _ => self.rows * pieces,
        };
        let args = PassArgs {
            src: level.src,
            dst,
            leaves: level.leaves,
            piece: PIECE,
            pieces,
            mode: u32::from(!level.streams),
        };
        launch_pass(function, self.handles, self.block, threads, args, &mut [])
    }

    /// Scans every piece from its prefix (`pre[row][piece]` after each row's first).
    fn scan_pieces(&self, level: Level, pre: u64, pieces: u64) -> Result<(), LaunchProblem> {
        let entry = self.entries.entry(ReduceShape::Scan).ok_or_else(|| {
            LaunchProblem::NotSupported("the reduction module has no scan entry".into())
        })?;
        let function = self.entries.loaded(entry.name)?;
        let args = PassArgs {
            src: level.src,
            dst: level.dst,
            leaves: level.leaves,
            piece: PIECE,
            pieces,
            mode: u32::from(!level.streams)
                | if level.streams { 2 } else { 0 }
                | if level.exclusive { 4 } else { 0 },
        };
        let threads = self.rows * pieces;
        launch_pass(
            function,
            self.handles,
            self.block,
            threads,
            args,
            &mut [pre, self.init],
        )
    }
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
fn upload(handles: &Handles, bytes: &[u8]) -> Result<CudaBuffer, LaunchProblem> {
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
