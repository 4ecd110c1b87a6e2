//! A scan in the canonical order of `brook_ir::scan_order`: in one pass where the module has
//! the one-pass entry ([`ReduceShape::ScanLookback`], `brook_codegen::gpu::reduce::lookback`)
//! and the rows' leaves are consecutive, else in levels.
//!
//! The one pass: tiles of [`PassRunner::scan_tile`] leaves, a subgroup each, taken by ticket;
//! a table of the rows' tree nodes and the ticket in one zeroed allocation.
//!
//! In levels: a level scans `rows`
//! rows of `leaves` leaves in aligned pieces of [`PIECE`] leaves, one thread per piece (the
//! module's scan entry), or of [`WARP_PIECE`] leaves, a subgroup per piece, where the module
//! has the subgroup scan entry and the level's leaves are consecutive. When a row has more
//! than one piece, a reduction pass first writes every piece's total (`[row][piece]`), the
//! next level scans the totals exclusively (from the initial value, if any) into the pieces'
//! prefixes, and then this level's pieces are scanned from them. Every piece is an aligned
//! block of its row, so the result is the canonical scan (see `scan_order`, "Why this
//! order"). No workgroup waits for another.

use super::layout::tile_is_contiguous;
use super::{threads, PassArgs, PassRunner};
use crate::error::LaunchProblem;
use crate::plan::{LaunchPlan, ScanPlan};
use brook_codegen::abi::{ReduceEntry, ReduceShape};
use brook_codegen::gpu::reduce::lookback;
use brook_ir::scan_order::ScanKind;

/// Leaves per piece: a thread's serial scan, and a warp's reduction of one chunk.
pub const PIECE: u64 = 256;
/// Leaves per piece of a level scanned by subgroups ([`ReduceShape::ScanWarp`]): the most
/// the entry takes.
pub const WARP_PIECE: u64 = brook_codegen::gpu::reduce::scan_warp::MAX_PIECE;

/// Bytes before the one-pass entry's table: its ticket's, padded.
const TICKET_BYTES: u64 = 256;

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

/// One scan launch's runner and rows.
struct Scan<'a, R> {
    runner: &'a R,
    value_size: u64,
    rows: u64,
    /// The initial value on the device, or 0.
    init: u64,
    /// The first level's leaves lie consecutively, row after row.
    contiguous: bool,
}

/// Runs scan launch `launch` in levels.
pub fn run<R: PassRunner>(
    runner: &R,
    launch: &LaunchPlan,
    value_size: u32,
    scan: &ScanPlan,
) -> Result<(), LaunchProblem> {
    let rows = launch.domain.iter().product::<usize>() as u64;
    let tile = launch.reduction_tile.as_deref().unwrap_or(&[]);
    let leaves = tile.iter().product::<usize>() as u64;
    if rows == 0 || leaves == 0 || launch.reduction_tile.is_none() {
        return Ok(());
    }
    let init = match &scan.init {
        Some(bytes) => Some(runner.upload(bytes)?),
        None => None,
    };
    let s = Scan {
        runner,
        value_size: u64::from(value_size),
        rows,
        init: init.as_ref().map_or(0, |i| runner.address(i)),
        contiguous: tile_is_contiguous(launch, tile),
    };
    let exclusive = scan.kind == ScanKind::Exclusive;
    if let Some(entry) = runner.entry(ReduceShape::ScanLookback) {
        if s.contiguous {
            if let Some(done) = s.one_pass(&entry, leaves, exclusive) {
                return done;
            }
        }
    }
    s.level(Level {
        leaves,
        src: 0,
        dst: 0,
        streams: true,
        exclusive,
    })
    // `init` is freed in the device's order after the launches that read it.
}

impl<R: PassRunner> Scan<'_, R> {
    /// Scans every row in one launch of the one-pass entry; `None` when there are too many
    /// tiles for its tickets (the levels then do it).
    fn one_pass(
        &self,
        entry: &ReduceEntry,
        leaves: u64,
        exclusive: bool,
    ) -> Option<Result<(), LaunchProblem>> {
        let (tile, entry_bytes) = self.runner.scan_tile(self.value_size as u32);
        let pieces = leaves.div_ceil(tile);
        let tiles = self.rows.checked_mul(pieces)?;
        if tiles > u64::from(u32::MAX) || pieces >= 1 << lookback::TILE_BITS {
            return None;
        }
        Some(self.launch_one_pass(entry, (leaves, tile, pieces), entry_bytes, exclusive))
    }

    fn launch_one_pass(
        &self,
        entry: &ReduceEntry,
        (leaves, tile, pieces): (u64, u64, u64),
        entry_bytes: u64,
        exclusive: bool,
    ) -> Result<(), LaunchProblem> {
        // The ticket first, then the table: `2 * pieces` entries a row (none is read when
        // rows have one tile).
        let table_bytes = match pieces {
            1 => 0,
            _ => self.rows * 2 * pieces * entry_bytes,
        };
        let memory = self.runner.zeroed(TICKET_BYTES + table_bytes)?;
        let ticket = self.runner.address(&memory);
        let args = PassArgs {
            src: 0,
            dst: 0,
            leaves,
            piece: tile,
            pieces,
            mode: 2 | if exclusive { 4 } else { 0 },
        };
        let threads = threads(entry, self.rows, pieces);
        let extra = [0, self.init, ticket + TICKET_BYTES, ticket];
        self.runner.run_pass(entry, threads, args, &extra)
    }

    /// The subgroup scan entry, where the module has it and the level's leaves are
    /// consecutive.
    fn warp_entry(&self, level: Level) -> Option<ReduceEntry> {
        self.runner
            .entry(ReduceShape::ScanWarp)
            .filter(|_| !level.streams || self.contiguous)
    }

    /// Leaves per piece of a level: a subgroup's or a thread's.
    fn piece(&self, level: Level) -> u64 {
        match self.warp_entry(level) {
            Some(_) => WARP_PIECE,
            None => PIECE,
        }
    }

    fn level(&self, level: Level) -> Result<(), LaunchProblem> {
        let piece = self.piece(level);
        let pieces = level.leaves.div_ceil(piece);
        if pieces == 1 {
            return self.scan_pieces(level, 0, pieces);
        }
        let bytes = self.rows * pieces * self.value_size;
        let (totals, prefixes) = (self.runner.scratch(bytes)?, self.runner.scratch(bytes)?);
        let (totals, prefixes) = (self.runner.address(&totals), self.runner.address(&prefixes));
        self.totals(level, pieces, totals)?;
        self.level(Level {
            leaves: pieces,
            src: totals,
            dst: prefixes,
            streams: false,
            exclusive: true,
        })?;
        self.scan_pieces(level, prefixes, pieces)
    }

    /// Every piece's total, by a reduction pass (a warp per piece where the module has the
    /// warp entry and the leaves are consecutive).
    fn totals(&self, level: Level, pieces: u64, dst: u64) -> Result<(), LaunchProblem> {
        let warp = self
            .runner
            .entry(ReduceShape::Warp)
            .filter(|_| !level.streams || self.contiguous);
        let entry = match warp {
            Some(warp) => warp,
            None => self.runner.required(ReduceShape::Serial)?,
        };
        let args = PassArgs {
            src: level.src,
            dst,
            leaves: level.leaves,
            piece: self.piece(level),
            pieces,
            mode: u32::from(!level.streams),
        };
        let threads = threads(&entry, self.rows, pieces);
        self.runner.run_pass(&entry, threads, args, &[])
    }

    /// Scans every piece from its prefix (`pre[row][piece]` after each row's first).
    fn scan_pieces(&self, level: Level, pre: u64, pieces: u64) -> Result<(), LaunchProblem> {
        let entry = match self.warp_entry(level) {
            Some(warp) => warp,
            None => self.runner.required(ReduceShape::Scan)?,
        };
        let args = PassArgs {
            src: level.src,
            dst: level.dst,
            leaves: level.leaves,
            piece: self.piece(level),
            pieces,
            mode: u32::from(!level.streams)
                | if level.streams { 2 } else { 0 }
                | if level.exclusive { 4 } else { 0 },
        };
        let threads = threads(&entry, self.rows, pieces);
        self.runner
            .run_pass(&entry, threads, args, &[pre, self.init])
    }
}
