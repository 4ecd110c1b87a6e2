//! The one-pass scan entry: a block of eight warps scans one tile of a row whose leaves lie
//! consecutively in memory, reading and writing each leaf once, in the canonical order of
//! `brook_ir::scan_order`.
//!
//! Each warp holds [`chunks_per_tile`] chunks of 256 leaves; lane `l` holds the run
//! `8l .. 8l + 8` of each chunk in registers (every chunk's loads are issued before any is
//! combined). The runs' trees, five butterfly levels (keeping, in each lane, the left
//! neighbour's block at every level where the lane is on the right) and the chunks' tree
//! give the warp's total, as the reduction's warp entry computes it; the warps' totals meet
//! in shared memory, where every thread builds the tile's tree over them.
//!
//! While the block waits for the tile's prefix, the leaves wait in shared memory (tiles of
//! up to 32 KiB of leaves), not in registers: after the wait each chunk's tree is built
//! again from there just before its down-sweep, so one chunk's tree is live at a time and
//! five blocks fit an SM, whose loads and sums go on while others wait (the same operations
//! on the same values give the same bits).
//!
//! Tiles take tickets in order, so a tile waits only on tiles that are running or done. The
//! group table holds, per level `m`, the value of every aligned group of `32^m` tiles of a
//! row, with a flag released once it is written. Warp 0 of tile `j` publishes the tile's
//! total (level 0) and every group the tile ends, each the canonical tree over its 32 parts
//! one level down, which the warp's lanes acquire together and reduce by butterflies. The
//! tile's exclusive prefix folds, for each base-32 digit of `j` from the highest, the blocks
//! of the digit's binary digits: each an aligned node of the tree over the groups the digit
//! spans, which the lanes again acquire together. Those are exactly the canonical blocks of
//! the tile's first leaf, and a wait is never longer than a few round trips: a base-2 table
//! made a tile after `2^k` tiles wait for `k` groups published one after another. A down-sweep
//! through the warps' tree, the chunks' tree, the lanes' kept blocks and the runs' trees gives
//! every leaf its prefix.
//!
//! The second entry, `brook_scan_tiles_ahead` (for rows of more than one tile of staged
//! values, GPUs with `cp.async`: sm_80 on), scans tiles twice as
//! long ([`ahead_tile_leaves`]: 16384 floats), so half as many tiles look back: their leaves
//! come straight into dynamic shared memory by `cp.async` ([`stage_tile`]; the runtime asks
//! for [`ahead_stage_bytes`] a block, three blocks an SM), not through registers. It also
//! keeps memory busy during the wait: thread 0 plans, before its loads, which input lines a
//! later tile will read (the tile one per SM further on, about the one that starts when a
//! block now running ends; [`plan_prefetch`]), and while warp 0 looks back the other warps ask
//! L2 for them ([`prefetch_ahead`]). A row's first tile never waits, and the plan's registers
//! make rows of one tile slower, so those keep the first entry.
//!
//! Parameters after the block: `leaves` (per row), `tiles` (per row), `mode` (bit 2: the scan
//! is exclusive), `init` (the initial value, or 0), `values` and `flags` (the group table:
//! level `k`, tile index `t` at entry `k * rows * tiles + t`; each entry has an 8-byte word
//! in `flags`, zeroed, whose high half is its flag; a value of one 4-byte scalar lives in the
//! low half, written and read with its flag as one 64-bit access, so a reader waits for one
//! round trip to L2 instead of two; larger values are in `values`), `ticket` (a zeroed
//! counter).

use super::common::Reduction;
use super::lanes::{u64_op, Leaves, RUN};
use crate::abi::{header, BlockLayout};
use crate::gpu::reduce::{mode_bit, target_ref, unravel};
use crate::ptx::driver::special;
use crate::ptx::emit::{Class, Reg};
use crate::ptx::lower::{Lower, StreamRef};
use crate::CompileError;

mod lookback;
mod memory;
mod shared;
mod trees;

use lookback::{packed_scalar, publish, tile_prefix, Table};
use memory::{load_runs, stage_tile, store_run};
use shared::{Shared, STAGED_BYTES};
use trees::{
    chunk_tree, chunk_trees, down_sweep, lane_down, pick, root, run_outputs, run_start, tree_levels,
};

/// Leaves of a chunk: a warp's lanes times a run.
pub(super) const CHUNK: u64 = 32 * RUN;
/// The group table's radix: level `m` holds groups of `32^m` tiles.
const RADIX: u64 = 32;
const RADIX_BITS: u64 = 5;
/// Levels of the group table: a row has at most `32^TABLE_LEVELS` tiles.
pub(crate) const TABLE_LEVELS: u64 = 5;
/// Bytes of an entry's word in the group table's `flags` (its flag, and a packed value).
pub(crate) const TABLE_WORD_BYTES: u64 = 8;

/// Chunks per tile for values of `value_size` bytes (what a lane keeps in registers).
fn chunks_per_tile(value_size: u32) -> u64 {
    match value_size {
        0..=4 => 4,
        5..=8 => 2,
        _ => 1,
    }
}

/// Warps of a block: the runtime launches a block of [`THREADS`] per tile. (Measured on an
/// H100: 4 warps made 8192 rows of 8192 floats 20% slower and a whole 2^28 no faster.)
const WARPS: u64 = 8;
/// Threads of a block of the entry.
pub(crate) const THREADS: u32 = WARPS as u32 * 32;
/// The entry's performance directives: its block size, and `blocks` per SM
/// ([`crate::Tuning::scan_blocks`], 5 unless changed). Measured on an H100 with the leaves
/// staged in shared memory (2^28 floats / 8192 rows of 8192, ms): 3 blocks 1.046 / 0.198, 4
/// 0.962 / 0.194, 5 0.931 / 0.197.
pub(super) fn attributes(blocks: u32) -> String {
    format!("\n.maxntid {THREADS}, 1, 1\n.minnctapersm {blocks}")
}

/// Blocks of the prefetching entry an SM holds: what its tiles of 64 KiB of floats let fit.
const AHEAD_BLOCKS: u32 = 3;

/// The prefetching entry's performance directives: its block size, and [`AHEAD_BLOCKS`].
pub(super) fn ahead_attributes() -> String {
    format!("\n.maxntid {THREADS}, 1, 1\n.minnctapersm {AHEAD_BLOCKS}")
}

/// Leaves of a tile for values of `value_size` bytes.
pub(crate) fn tile_leaves(value_size: u32) -> u64 {
    WARPS * chunks_per_tile(value_size) * CHUNK
}

/// How many times [`tile_leaves`] a tile of the prefetching entry has: its leaves come into
/// dynamic shared memory by `cp.async`, not through registers.
/// (Measured on an H100, 2^28 floats: 8192 leaves by `cp.async` 0.93 ms, 16384 by `cp.async`
/// 0.81-0.82, 8192 through registers 0.86-0.89.)
const BIG: u64 = 2;

/// Leaves of a tile of the prefetching entry (`brook_scan_tiles_ahead`).
pub(crate) fn ahead_tile_leaves(value_size: u32) -> u64 {
    BIG * tile_leaves(value_size)
}

/// Bytes of dynamic shared memory a block of the prefetching entry stages its tile in.
pub(crate) fn ahead_stage_bytes(value_size: u32) -> u64 {
    ahead_tile_leaves(value_size) * u64::from(value_size)
}

/// The module-scope dynamic shared array of the prefetching entry's tile.
const STAGE: &str = "brook_scan_stage";

/// Its declaration, written once before the entry.
pub(super) fn stage_declaration() -> String {
    format!(".extern .shared .align 16 .b8 {STAGE}[];\n")
}

/// The entry's parameters.
struct Params {
    leaves: Reg,
    tiles: Reg,
    exclusive: Reg,
    init: Reg,
    values: Reg,
    flags: Reg,
    ticket: Reg,
}

fn param_u64(lower: &mut Lower<'_>, name: &str) -> Reg {
    lower
        .e
        .compute(Class::B64, |r| format!("ld.param.u64 {r}, [{name}]"))
}

/// The entry's extra parameters, after the block.
pub(super) const PARAMS: &str = ",\n\t.param .u64 leaves, .param .u64 tiles, .param .u32 mode, .param .u64 init, .param .u64 values, .param .u64 flags, .param .u64 ticket";

/// The entry's body.
pub(super) fn emit(
    lower: &mut Lower<'_>,
    r: &Reduction,
    layout: &BlockLayout,
    rank: usize,
    input: &StreamRef,
    ahead: bool,
) -> Result<(), CompileError> {
    let ahead = ahead && prefetches(r.value_size);
    let domain = lower.param_axes(header::DOMAIN, rank);
    let tile_shape = lower.param_axes(header::TILE, rank);
    let mode = lower
        .e
        .compute(Class::B32, |reg| format!("ld.param.u32 {reg}, [mode]"));
    let p = Params {
        leaves: param_u64(lower, "leaves"),
        tiles: param_u64(lower, "tiles"),
        exclusive: mode_bit(lower, mode, 4),
        init: param_u64(lower, "init"),
        values: param_u64(lower, "values"),
        flags: param_u64(lower, "flags"),
        ticket: param_u64(lower, "ticket"),
    };
    let mut rows = lower.u64_imm(1);
    for &d in &domain {
        rows = u64_op(lower, |reg| format!("mul.lo.u64 {reg}, {rows}, {d}"));
    }
    let tiles = p.tiles;
    let total = u64_op(lower, |reg| format!("mul.lo.u64 {reg}, {rows}, {tiles}"));
    let tid = special(lower, "%tid.x");
    let lane = u64_op(lower, |reg| format!("and.b64 {reg}, {tid}, 31"));
    let warp = u64_op(lower, |reg| format!("shr.u64 {reg}, {tid}, 5"));
    let shared = Shared::declare(lower, r.value_size, ahead);
    let ticket = take_ticket(lower, &shared, tid, p.ticket);
    let past = lower.e.compute(Class::Pred, |reg| {
        format!("setp.ge.u64 {reg}, {ticket}, {total}")
    });
    let ret = lower.ret;
    lower.e.bra_if(past, ret);
    let big = if ahead { BIG } else { 1 };
    let chunks = big * chunks_per_tile(r.value_size);
    let tile_len = big * tile_leaves(r.value_size);
    let geometry = TileGeometry {
        p: &p,
        domain: &domain,
        tile_shape: &tile_shape,
        tile_len,
    };
    let TilePlace {
        row,
        j,
        start,
        valid,
        first,
    } = geometry.place(lower, ticket);
    let full = lower.e.compute(Class::Pred, |reg| {
        format!("setp.eq.u64 {reg}, {valid}, {tile_len}")
    });
    // The tile's first leaf in the input and the output.
    let in_base = tile_base(lower, input, &first, start);
    let output = target_ref(lower, r, layout, rank);
    let out_base = tile_base(lower, &output, &first, start);
    let source = Leaves {
        base: in_base,
        input_size: input.size,
        from_scratch: lower.pred_const(false),
        aligned: aligned_16(lower, in_base),
    };
    if ahead {
        let tile = TileAt { ticket, j, total };
        plan_prefetch(lower, &geometry, &shared, tid, &tile, input);
    }
    // This warp's part of the tile: `chunks` chunks from `warp_first`.
    let warp_first = u64_op(lower, |reg| {
        format!("mul.lo.u64 {reg}, {warp}, {}", chunks * CHUNK)
    });
    // Every chunk's loads are issued before any is combined, so they are in flight together.
    let firsts: Vec<Reg> = (0..chunks)
        .map(|c| run_start(lower, warp_first, lane, c))
        .collect();
    let runs = if ahead {
        stage_tile(
            lower,
            r,
            &shared,
            tid,
            (&source, &firsts),
            (full, valid),
            tile_len,
        )
    } else {
        let runs = load_runs(lower, r, &source, (full, valid), &firsts);
        // Staged, the leaves wait for the prefix in shared memory, not in registers; each
        // chunk's tree is built again from there after the wait (the same operations on the
        // same values: the same bits). Otherwise the leaves and their trees wait in registers.
        if shared.leaves.is_some() {
            for (run, &first) in runs.iter().zip(&firsts) {
                shared.put_run(lower, r, first, run);
            }
        }
        runs
    };
    let (held_chunks, chunk_levels) = chunk_trees(lower, r, lane, runs)?;
    let warp_total = root(&chunk_levels);
    // The warps' totals through shared memory; every thread builds the tile's tree.
    shared.put_warp_total(lower, r, lane, warp, &warp_total);
    lower.e.op("bar.sync 0");
    let warp_totals: Vec<Vec<Reg>> = (0..WARPS).map(|w| shared.warp_total(lower, r, w)).collect();
    let warp_levels = tree_levels(lower, r, warp_totals)?;
    let tile_total = root(&warp_levels);
    let table = Table {
        values: p.values,
        flags: p.flags,
        total,
        row_base: u64_op(lower, |reg| format!("mul.lo.u64 {reg}, {row}, {tiles}")),
        size: r.value_size,
        packed: packed_scalar(lower, r),
    };
    // Warp 0 publishes and looks back; the prefix reaches the others through shared memory.
    // Meanwhile the others ask L2 for a later tile's input (staged tiles).
    let (after, first_warp) = (lower.e.label(), lower.e.label());
    let other_warp = lower
        .e
        .compute(Class::Pred, |reg| format!("setp.ne.u64 {reg}, {warp}, 0"));
    lower.e.bra_unless(other_warp, first_warp);
    if ahead {
        prefetch_ahead(lower, &shared, tid, tile_len * u64::from(input.size));
    }
    lower.e.bra(after);
    lower.e.at(first_warp);
    publish(lower, r, &table, lane, j, &tile_total)?;
    let prefix = tile_prefix(lower, r, &table, lane, j, &p)?;
    shared.put_prefix(lower, r, lane, &prefix);
    lower.e.at(after);
    lower.e.op("bar.sync 0");
    let prefix = shared.prefix(lower, r);
    // Staged, the warps' tree is built again from their totals in shared memory, and each
    // chunk's tree from its leaves there just before its down-sweep (one chunk's tree live
    // at a time); the chunks' tree over their totals stays in registers.
    let (mut kept_chunks, warp_levels) = if shared.leaves.is_some() {
        let warp_totals: Vec<Vec<Reg>> =
            (0..WARPS).map(|w| shared.warp_total(lower, r, w)).collect();
        (None, tree_levels(lower, r, warp_totals)?)
    } else {
        (Some(held_chunks.into_iter()), warp_levels)
    };
    // Down the warps' tree to this warp, the chunks' tree, then each chunk's lanes and runs.
    let warp_prefixes = down_sweep(lower, r, &prefix, &warp_levels)?;
    let warp_prefix = pick(lower, warp, &warp_prefixes);
    let chunk_prefixes = down_sweep(lower, r, &warp_prefix, &chunk_levels)?;
    for (c, before) in chunk_prefixes.into_iter().enumerate() {
        let chunk = match kept_chunks.as_mut().and_then(Iterator::next) {
            Some(chunk) => chunk,
            None => {
                let run = shared.run(lower, r, firsts[c]);
                chunk_tree(lower, r, lane, run)?
            }
        };
        let lane_prefix = lane_down(lower, r, lane, &before, &chunk.left)?;
        let run_prefixes = down_sweep(lower, r, &lane_prefix, &chunk.run_levels)?;
        let outs = run_outputs(lower, r, &p, &chunk.run_levels[0], run_prefixes)?;
        let first_leaf = run_start(lower, warp_first, lane, c as u64);
        store_run(
            lower,
            r,
            (out_base, output.size),
            (full, valid),
            first_leaf,
            &outs,
        );
    }
    lower.e.bra(ret);
    Ok(())
}

/// Whether tiles of values of `value_size` bytes can prefetch a later tile's input while they
/// wait (staged tiles: their leaves wait in shared memory; `brook_scan_tiles_ahead` is written
/// only for them).
pub(super) fn prefetches(value_size: u32) -> bool {
    tile_leaves(value_size) * u64::from(value_size) <= STAGED_BYTES
}

/// Tiles per SM between a tile and the one whose input its block prefetches
/// ([`crate::Tuning::scan_ahead`], 1 unless changed; 0: none). Measured on an H100 (2^28
/// floats): 1: 0.849-0.853 ms, 2: 0.885-0.892, none: 0.931-0.933; 4 and more were slower than
/// none (the lines wait in L2 too long).
fn tiles_ahead_per_sm(lower: &Lower<'_>) -> u64 {
    u64::from(lower.tuning.scan_ahead)
}

/// Where the tiles of a launch lie: rows of the domain, cut into tiles of `tile_len` leaves.
struct TileGeometry<'a> {
    p: &'a Params,
    domain: &'a [Reg],
    tile_shape: &'a [Reg],
    tile_len: u64,
}

/// Where one tile lies.
struct TilePlace {
    row: Reg,
    /// Its index in its row.
    j: Reg,
    /// Its first leaf in its row.
    start: Reg,
    /// Its leaves (fewer than `tile_len` in a row's last tile).
    valid: Reg,
    /// Its row's first position.
    first: Vec<Reg>,
}

impl TileGeometry<'_> {
    /// Where the tile of `ticket` lies (tickets run row by row, tile by tile).
    fn place(&self, lower: &mut Lower<'_>, ticket: Reg) -> TilePlace {
        let (tiles, leaves, tile_len) = (self.p.tiles, self.p.leaves, self.tile_len);
        let row = u64_op(lower, |reg| format!("div.u64 {reg}, {ticket}, {tiles}"));
        let j = u64_op(lower, |reg| format!("rem.u64 {reg}, {ticket}, {tiles}"));
        let start = u64_op(lower, |reg| format!("mul.lo.u64 {reg}, {j}, {tile_len}"));
        let rest = u64_op(lower, |reg| format!("sub.u64 {reg}, {leaves}, {start}"));
        let valid = u64_op(lower, |reg| format!("min.u64 {reg}, {rest}, {tile_len}"));
        let tpos = unravel(lower, row, self.domain);
        let first = tpos
            .iter()
            .zip(self.tile_shape)
            .map(|(&tp, &tl)| u64_op(lower, |reg| format!("mul.lo.u64 {reg}, {tp}, {tl}")))
            .collect();
        TilePlace {
            row,
            j,
            start,
            valid,
            first,
        }
    }
}

/// This tile, for [`plan_prefetch`].
struct TileAt {
    ticket: Reg,
    /// The tile's index in its row.
    j: Reg,
    /// Tiles of all rows.
    total: Reg,
}

/// Thread 0 plans, before its loads, the prefetch [`prefetch_ahead`] issues later: the input
/// of the tile [`tiles_ahead_per_sm`] times the SMs further on (about the one that starts
/// when a block now running is done), if this tile will wait for a prefix (not a row's first
/// tile) and that tile exists. The plan waits in shared memory, so nothing of it stays live in
/// registers across the tile's loads and trees.
fn plan_prefetch(
    lower: &mut Lower<'_>,
    geometry: &TileGeometry<'_>,
    shared: &Shared,
    tid: Reg,
    tile: &TileAt,
    input: &StreamRef,
) {
    let per_sm = tiles_ahead_per_sm(lower);
    if per_sm == 0 {
        return;
    }
    let done = lower.e.label();
    let other = lower
        .e
        .compute(Class::Pred, |reg| format!("setp.ne.u64 {reg}, {tid}, 0"));
    lower.e.bra_if(other, done);
    let (ticket, total, j) = (tile.ticket, tile.total, tile.j);
    let sms = special(lower, "%nsmid");
    let later = u64_op(lower, |reg| {
        format!("mad.lo.u64 {reg}, {sms}, {per_sm}, {ticket}")
    });
    let none = lower.e.compute(Class::Pred, |reg| {
        format!("setp.ge.u64 {reg}, {later}, {total}")
    });
    // A row's first tile does not wait for a prefix (row scans of one tile never do).
    let first_tile = lower
        .e
        .compute(Class::Pred, |reg| format!("setp.eq.u64 {reg}, {j}, 0"));
    let none = lower.e.compute(Class::Pred, |reg| {
        format!("or.pred {reg}, {none}, {first_tile}")
    });
    let zero = lower.u64_imm(0);
    let plan = lower.e.label();
    lower.e.bra_unless(none, plan);
    shared.put_ahead(lower, zero, zero);
    lower.e.bra(done);
    lower.e.at(plan);
    let place = geometry.place(lower, later);
    let (valid, size) = (place.valid, input.size);
    let bytes = u64_op(lower, |reg| format!("mul.lo.u64 {reg}, {valid}, {size}"));
    let base = tile_base(lower, input, &place.first, place.start);
    shared.put_ahead(lower, base, bytes);
    lower.e.at(done);
}

/// While warp 0 looks back for the tile's prefix, the block's other threads ask L2 for the
/// input [`plan_prefetch`] planned, a 128-byte line each (line `tid - 32`, then every
/// `THREADS - 32` lines): the memory is otherwise idle during the wait.
fn prefetch_ahead(lower: &mut Lower<'_>, shared: &Shared, tid: Reg, tile_bytes: u64) {
    if tiles_ahead_per_sm(lower) == 0 {
        return;
    }
    let skip = lower.e.label();
    let (base, bytes) = shared.ahead(lower);
    let helpers = u64::from(THREADS) - 32;
    let mut offset = u64_op(lower, |reg| format!("sub.u64 {reg}, {tid}, 32"));
    offset = u64_op(lower, |reg| format!("shl.b64 {reg}, {offset}, 7"));
    for _ in 0..tile_bytes.div_ceil(128 * helpers) {
        let beyond = lower.e.compute(Class::Pred, |reg| {
            format!("setp.ge.u64 {reg}, {offset}, {bytes}")
        });
        lower.e.bra_if(beyond, skip);
        let line = u64_op(lower, |reg| format!("add.u64 {reg}, {base}, {offset}"));
        lower.e.op(format!("prefetch.global.L2 [{line}]"));
        let at = offset;
        offset = u64_op(lower, |reg| {
            format!("add.u64 {reg}, {at}, {}", 128 * helpers)
        });
    }
    lower.e.at(skip);
}

/// Thread 0 takes the next ticket; every thread of the block receives it.
fn take_ticket(lower: &mut Lower<'_>, shared: &Shared, tid: Reg, counter: Reg) -> Reg {
    let skip = lower.e.label();
    let other = lower
        .e
        .compute(Class::Pred, |reg| format!("setp.ne.u64 {reg}, {tid}, 0"));
    lower.e.bra_if(other, skip);
    let got = lower.e.compute(Class::B32, |reg| {
        format!("atom.global.add.u32 {reg}, [{counter}], 1")
    });
    shared.put_ticket(lower, got);
    lower.e.at(skip);
    lower.e.op("bar.sync 0");
    let all = shared.ticket(lower);
    lower
        .e
        .compute(Class::B64, |reg| format!("cvt.u64.u32 {reg}, {all}"))
}

/// The address of leaf `start` of the row that begins at position `first`.
fn tile_base(lower: &mut Lower<'_>, stream: &StreamRef, first: &[Reg], start: Reg) -> Reg {
    let index = lower.element_index(stream.offset, first, &stream.pitch);
    let index = u64_op(lower, |reg| format!("add.u64 {reg}, {index}, {start}"));
    lower.element_address(stream.base, index, stream.size)
}

fn aligned_16(lower: &mut Lower<'_>, addr: Reg) -> Reg {
    let low = u64_op(lower, |reg| format!("and.b64 {reg}, {addr}, 15"));
    lower
        .e
        .compute(Class::Pred, |reg| format!("setp.eq.u64 {reg}, {low}, 0"))
}
