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

use super::common::{
    combine, combine_after, copy_into, fresh_value, mode_bit, target_ref, unravel_fresh, Held,
    Reduction,
};
use super::warp::{
    butterfly, load_run, packable, shuffle_with, u64_op, vector_run, Leaves, Vector, RUN,
};
use crate::abi::{header, BlockLayout};
use crate::ptx::driver::special;
use crate::ptx::emit::{Class, Reg};
use crate::ptx::lower::{Lower, StreamRef};
use crate::CompileError;

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
/// The entry's performance directives: its block size, and blocks per SM
/// (`BROOK_SCAN_BLOCKS`, 5 unless set; read once, to compare). Measured on an H100 with the
/// leaves staged in shared memory (2^28 floats / 8192 rows of 8192, ms): 3 blocks 1.046 /
/// 0.198, 4 0.962 / 0.194, 5 0.931 / 0.197.
pub(super) fn attributes() -> String {
    static BLOCKS: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    let blocks = *BLOCKS.get_or_init(|| {
        let Ok(text) = std::env::var("BROOK_SCAN_BLOCKS") else {
            return 5;
        };
        match text.trim().parse().ok().filter(|b| (1..=8).contains(b)) {
            Some(blocks) => blocks,
            None => {
                eprintln!("brook: BROOK_SCAN_BLOCKS={text:?} is not a number from 1 to 8; scans use 5 blocks per SM");
                5
            }
        }
    });
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
/// (`BROOK_SCAN_AHEAD`, 1 unless set; 0: none; read once, to compare). Measured on an H100
/// (2^28 floats): 1: 0.849-0.853 ms, 2: 0.885-0.892, none: 0.931-0.933; 4 and more were
/// slower than none (the lines wait in L2 too long).
fn tiles_ahead_per_sm() -> u64 {
    static AHEAD: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *AHEAD.get_or_init(|| {
        let Ok(text) = std::env::var("BROOK_SCAN_AHEAD") else {
            return 1;
        };
        match text.trim().parse().ok().filter(|a| *a <= 16) {
            Some(ahead) => ahead,
            None => {
                eprintln!("brook: BROOK_SCAN_AHEAD={text:?} is not a number from 0 to 16; scans prefetch 1 tile per SM ahead");
                1
            }
        }
    })
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
        let tpos = unravel_fresh(lower, row, self.domain);
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
    let per_sm = tiles_ahead_per_sm();
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
    if tiles_ahead_per_sm() == 0 {
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

/// The levels of a tree of values (each a list of registers), leaves first.
type TreeLevels = Vec<Vec<Vec<Reg>>>;

/// Each chunk's tree in this lane, and the tree over the chunks' totals.
fn chunk_trees(
    lower: &mut Lower<'_>,
    r: &Reduction,
    lane: Reg,
    runs: Vec<Vec<Vec<Reg>>>,
) -> Result<(Vec<ChunkTree>, TreeLevels), CompileError> {
    let mut held_chunks = Vec::with_capacity(runs.len());
    for x in runs {
        held_chunks.push(chunk_tree(lower, r, lane, x)?);
    }
    let chunk_totals: Vec<Vec<Reg>> = held_chunks.iter().map(|c| c.total.clone()).collect();
    let chunk_levels = tree_levels(lower, r, chunk_totals)?;
    Ok((held_chunks, chunk_levels))
}

/// The tile-relative first leaf of this lane's run in chunk `c` of its warp's part.
fn run_start(lower: &mut Lower<'_>, warp_first: Reg, lane: Reg, c: u64) -> Reg {
    let within = u64_op(lower, |reg| {
        format!("mad.lo.u64 {reg}, {lane}, {RUN}, {}", c * CHUNK)
    });
    u64_op(lower, |reg| {
        format!("add.u64 {reg}, {warp_first}, {within}")
    })
}

/// The root of a tree's levels.
fn root(levels: &[Vec<Vec<Reg>>]) -> Vec<Reg> {
    levels
        .last()
        .and_then(|top| top.first())
        .cloned()
        .unwrap_or_default()
}

/// `choices[index]` (`index` a register below `choices.len()`), by selects.
fn pick(lower: &mut Lower<'_>, index: Reg, choices: &[Held]) -> Held {
    let chosen = Held {
        value: choices[0]
            .value
            .iter()
            .map(|v| lower.e.reg(v.class))
            .collect(),
        has: lower.e.reg(Class::Pred),
    };
    copy_into(lower, &chosen.value, &choices[0].value);
    lower.e.mov(chosen.has, choices[0].has);
    for (i, choice) in choices.iter().enumerate().skip(1) {
        let this = lower.e.compute(Class::Pred, |reg| {
            format!("setp.eq.u64 {reg}, {index}, {i}")
        });
        let skip = lower.e.label();
        lower.e.bra_unless(this, skip);
        copy_into(lower, &chosen.value, &choice.value);
        lower.e.mov(chosen.has, choice.has);
        lower.e.at(skip);
    }
    chosen
}

/// The block's shared memory: the warps' totals, the tile's prefix (and whether there is one),
/// the ticket, then the tile's leaves in order while the block waits for its prefix.
struct Shared {
    base: Reg,
    size: u32,
    /// Where the tile's leaves wait, if they are staged ([`STAGED_BYTES`]).
    leaves: Option<Reg>,
}

/// The most bytes of leaves a tile stages in shared memory while it waits for its prefix
/// (tiles of larger values keep their leaves and trees in registers).
const STAGED_BYTES: u64 = 32 << 10;

impl Shared {
    /// The head; the tile's leaves after it where they are staged, or in the dynamic
    /// array [`STAGE`] for the prefetching entry (`dynamic`).
    fn declare(lower: &mut Lower<'_>, size: u32, dynamic: bool) -> Shared {
        let head = (Self::ahead_offset_for(size) + 16).next_multiple_of(16) as u32;
        let tile_bytes = tile_leaves(size) * u64::from(size);
        let staged = tile_bytes <= STAGED_BYTES && !dynamic;
        let bytes = head + if staged { tile_bytes as u32 } else { 0 };
        let name = lower.e.memory(true, bytes, 16);
        let base = lower
            .e
            .compute(Class::B64, |reg| format!("mov.u64 {reg}, {name}"));
        let leaves = if dynamic {
            Some(
                lower
                    .e
                    .compute(Class::B64, |reg| format!("mov.u64 {reg}, {STAGE}")),
            )
        } else {
            staged.then(|| u64_op(lower, |reg| format!("add.u64 {reg}, {base}, {head}")))
        };
        Shared { base, size, leaves }
    }

    /// The address of the tile's leaf `t` (tile-relative) in shared memory.
    fn leaf_address(&self, lower: &mut Lower<'_>, t: Reg) -> Reg {
        let (leaves, size) = (self.leaves.unwrap_or(self.base), self.size);
        u64_op(lower, |reg| {
            format!("mad.lo.u64 {reg}, {t}, {size}, {leaves}")
        })
    }

    /// Writes a run of leaves from leaf `first` on: packed 16-byte stores for a 4- or 8-byte
    /// scalar, else one leaf at a time.
    fn put_run(&self, lower: &mut Lower<'_>, r: &Reduction, first: Reg, run: &[Vec<Reg>]) {
        let addr = self.leaf_address(lower, first);
        if packable(lower, &r.ty).is_some() {
            vector_run(lower, Vector::Store, "shared", addr, run, self.size);
            return;
        }
        for (k, v) in run.iter().enumerate() {
            let at = self.nth_after(lower, addr, k);
            lower.store_value(&r.ty.clone(), v, at, "shared", true);
        }
    }

    /// The run of leaves from leaf `first` on.
    fn run(&self, lower: &mut Lower<'_>, r: &Reduction, first: Reg) -> Vec<Vec<Reg>> {
        let addr = self.leaf_address(lower, first);
        let run: Vec<Vec<Reg>> = (0..RUN).map(|_| fresh_value(lower, r)).collect();
        if packable(lower, &r.ty).is_some() {
            vector_run(lower, Vector::Load, "shared", addr, &run, self.size);
            return run;
        }
        for (k, into) in run.iter().enumerate() {
            let at = self.nth_after(lower, addr, k);
            let v = lower.load_value(&r.ty.clone(), at, "shared", true);
            copy_into(lower, into, &v);
        }
        run
    }

    /// The address of the `k`-th leaf after the one at `addr`.
    fn nth_after(&self, lower: &mut Lower<'_>, addr: Reg, k: usize) -> Reg {
        let offset = k as u64 * u64::from(self.size);
        u64_op(lower, |reg| format!("add.u64 {reg}, {addr}, {offset}"))
    }

    fn at(&self, lower: &mut Lower<'_>, offset: u64) -> Reg {
        let base = self.base;
        u64_op(lower, |reg| format!("add.u64 {reg}, {base}, {offset}"))
    }

    fn flag_offset(&self) -> u64 {
        u64::from((WARPS as u32 + 1) * self.size)
    }

    /// Where the prefetch of a later tile's input is planned ([`plan_prefetch`]): its first
    /// byte's address, then its length in bytes (0: none).
    fn ahead_offset_for(size: u32) -> u64 {
        (u64::from((WARPS as u32 + 1) * size) + 8).next_multiple_of(8)
    }

    fn put_ahead(&self, lower: &mut Lower<'_>, base: Reg, bytes: Reg) {
        let at = self.at(lower, Self::ahead_offset_for(self.size));
        lower.e.op(format!("st.shared.u64 [{at}], {base}"));
        lower.e.op(format!("st.shared.u64 [{at}+8], {bytes}"));
    }

    fn ahead(&self, lower: &mut Lower<'_>) -> (Reg, Reg) {
        let at = self.at(lower, Self::ahead_offset_for(self.size));
        let base = u64_op(lower, |reg| format!("ld.shared.u64 {reg}, [{at}]"));
        let bytes = u64_op(lower, |reg| format!("ld.shared.u64 {reg}, [{at}+8]"));
        (base, bytes)
    }

    fn put_ticket(&self, lower: &mut Lower<'_>, ticket: Reg) {
        let addr = self.at(lower, self.flag_offset() + 4);
        lower.e.op(format!("st.shared.u32 [{addr}], {ticket}"));
    }

    fn ticket(&self, lower: &mut Lower<'_>) -> Reg {
        let addr = self.at(lower, self.flag_offset() + 4);
        lower
            .e
            .compute(Class::B32, |reg| format!("ld.shared.u32 {reg}, [{addr}]"))
    }

    fn put_warp_total(
        &self,
        lower: &mut Lower<'_>,
        r: &Reduction,
        lane: Reg,
        warp: Reg,
        v: &[Reg],
    ) {
        let skip = lower.e.label();
        let other = lower
            .e
            .compute(Class::Pred, |reg| format!("setp.ne.u64 {reg}, {lane}, 0"));
        lower.e.bra_if(other, skip);
        let (base, size) = (self.base, self.size);
        let addr = u64_op(lower, |reg| {
            format!("mad.lo.u64 {reg}, {warp}, {size}, {base}")
        });
        lower.store_value(&r.ty.clone(), v, addr, "shared", true);
        lower.e.at(skip);
    }

    fn warp_total(&self, lower: &mut Lower<'_>, r: &Reduction, w: u64) -> Vec<Reg> {
        let addr = self.at(lower, w * u64::from(self.size));
        lower.load_value(&r.ty.clone(), addr, "shared", true)
    }

    fn put_prefix(&self, lower: &mut Lower<'_>, r: &Reduction, lane: Reg, prefix: &Held) {
        let skip = lower.e.label();
        let other = lower
            .e
            .compute(Class::Pred, |reg| format!("setp.ne.u64 {reg}, {lane}, 0"));
        lower.e.bra_if(other, skip);
        let addr = self.at(lower, WARPS * u64::from(self.size));
        lower.store_value(&r.ty.clone(), &prefix.value, addr, "shared", true);
        let has = lower.e.compute(Class::B32, |reg| {
            format!("selp.u32 {reg}, 1, 0, {}", prefix.has)
        });
        let flag = self.at(lower, self.flag_offset());
        lower.e.op(format!("st.shared.u32 [{flag}], {has}"));
        lower.e.at(skip);
    }

    fn prefix(&self, lower: &mut Lower<'_>, r: &Reduction) -> Held {
        let addr = self.at(lower, WARPS * u64::from(self.size));
        let value = lower.load_value(&r.ty.clone(), addr, "shared", true);
        let flag = self.at(lower, self.flag_offset());
        let word = lower
            .e
            .compute(Class::B32, |reg| format!("ld.shared.u32 {reg}, [{flag}]"));
        let has = lower
            .e
            .compute(Class::Pred, |reg| format!("setp.ne.u32 {reg}, {word}, 0"));
        Held { value, has }
    }
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

/// The prefetching entry's tile, staged in shared memory and then read back as this lane's
/// runs: where the tile's first leaf is 16-byte aligned, 16-byte `cp.async`s, each thread's
/// `THREADS * 16` bytes apart (in a row's last tile the valid bytes, the rest zero-filled:
/// those leaves' blocks are never anyone's prefix); else loads and shared stores, a chunk at
/// a time. (`.ca`, through L1: measured on an H100, 2^28 floats 0.807-0.821 ms against
/// 0.831-0.878 for `.cg`, whose zero-filling form in full tiles too cost 0.853-0.872.)
fn stage_tile(
    lower: &mut Lower<'_>,
    r: &Reduction,
    shared: &Shared,
    tid: Reg,
    (source, firsts): (&Leaves, &[Reg]),
    (full, valid): (Reg, Reg),
    tile_len: u64,
) -> Vec<Vec<Vec<Reg>>> {
    let buffer = shared
        .leaves
        .expect("the prefetching entry stages its tile");
    let (by_hand, ragged, staged) = (lower.e.label(), lower.e.label(), lower.e.label());
    lower.e.bra_unless(source.aligned, by_hand);
    let pieces = tile_len * u64::from(r.value_size) / (16 * u64::from(THREADS));
    let first = u64_op(lower, |reg| format!("shl.b64 {reg}, {tid}, 4"));
    let offsets: Vec<Reg> = (0..pieces)
        .map(|k| {
            u64_op(lower, |reg| {
                format!("add.u64 {reg}, {first}, {}", k * 16 * u64::from(THREADS))
            })
        })
        .collect();
    let base = source.base;
    lower.e.bra_unless(full, ragged);
    for &offset in &offsets {
        let from = u64_op(lower, |reg| format!("add.u64 {reg}, {base}, {offset}"));
        let to = u64_op(lower, |reg| format!("add.u64 {reg}, {buffer}, {offset}"));
        lower
            .e
            .op(format!("cp.async.ca.shared.global [{to}], [{from}], 16"));
    }
    lower.e.op("cp.async.wait_all");
    lower.e.bra(staged);
    lower.e.at(ragged);
    let size = source.input_size;
    let bytes = u64_op(lower, |reg| format!("mul.lo.u64 {reg}, {valid}, {size}"));
    for &offset in &offsets {
        let rest = u64_op(lower, |reg| format!("sub.s64 {reg}, {bytes}, {offset}"));
        let rest = u64_op(lower, |reg| format!("max.s64 {reg}, {rest}, 0"));
        let rest = u64_op(lower, |reg| format!("min.s64 {reg}, {rest}, 16"));
        let copied = lower
            .e
            .compute(Class::B32, |reg| format!("cvt.u32.u64 {reg}, {rest}"));
        // A piece past the row's end reads nothing; its address stays the tile's first.
        let inside = lower
            .e
            .compute(Class::Pred, |reg| format!("setp.ne.u32 {reg}, {copied}, 0"));
        let from = u64_op(lower, |reg| format!("add.u64 {reg}, {base}, {offset}"));
        let from = u64_op(lower, |reg| {
            format!("selp.b64 {reg}, {from}, {base}, {inside}")
        });
        let to = u64_op(lower, |reg| format!("add.u64 {reg}, {buffer}, {offset}"));
        lower.e.op(format!(
            "cp.async.ca.shared.global [{to}], [{from}], 16, {copied}"
        ));
    }
    lower.e.op("cp.async.wait_all");
    lower.e.bra(staged);
    lower.e.at(by_hand);
    for &first in firsts {
        let run = load_runs(lower, r, source, (full, valid), &[first]);
        shared.put_run(lower, r, first, &run[0]);
    }
    lower.e.at(staged);
    lower.e.op("bar.sync 0");
    firsts
        .iter()
        .map(|&first| shared.run(lower, r, first))
        .collect()
}

/// The runs of leaves from each of `firsts` (tile-relative): packed loads in a full tile, else
/// one by one with the index clamped to the last valid leaf (a missing leaf repeats a real
/// one; its blocks are never anyone's prefix).
fn load_runs(
    lower: &mut Lower<'_>,
    r: &Reduction,
    source: &Leaves,
    (full, valid): (Reg, Reg),
    firsts: &[Reg],
) -> Vec<Vec<Vec<Reg>>> {
    let runs: Vec<Vec<Vec<Reg>>> = firsts
        .iter()
        .map(|_| (0..RUN).map(|_| fresh_value(lower, r)).collect())
        .collect();
    let (ragged, done) = (lower.e.label(), lower.e.label());
    lower.e.bra_unless(full, ragged);
    for (run, &first) in runs.iter().zip(firsts) {
        let loaded = load_run(lower, r, source, first);
        for (d, s) in run.iter().zip(&loaded) {
            copy_into(lower, d, s);
        }
    }
    lower.e.bra(done);
    lower.e.at(ragged);
    let last = u64_op(lower, |reg| format!("sub.u64 {reg}, {valid}, 1"));
    let input_ty = lower.kernel.params[r.input].ty.clone();
    for (run, &first) in runs.iter().zip(firsts) {
        for (k, d) in run.iter().enumerate() {
            let i = u64_op(lower, |reg| format!("add.u64 {reg}, {first}, {k}"));
            let i = u64_op(lower, |reg| format!("min.u64 {reg}, {i}, {last}"));
            let addr = lower.element_address(source.base, i, source.input_size);
            let v = lower.load_value(&input_ty, addr, "global", true);
            copy_into(lower, d, &v);
        }
    }
    lower.e.at(done);
    runs
}

/// A chunk in a lane: its run's tree levels (leaves, pairs, quads, the run), the left
/// neighbours' blocks kept at each butterfly level, and the chunk's total.
struct ChunkTree {
    run_levels: Vec<Vec<Vec<Reg>>>,
    /// Per butterfly level `k`: the block of the lanes `2^k` to the left, when this lane is
    /// on the right of its pair of blocks.
    left: Vec<Vec<Reg>>,
    total: Vec<Reg>,
}

fn chunk_tree(
    lower: &mut Lower<'_>,
    r: &Reduction,
    lane: Reg,
    run: Vec<Vec<Reg>>,
) -> Result<ChunkTree, CompileError> {
    let run_levels = tree_levels(lower, r, run)?;
    let mut value = run_levels
        .last()
        .and_then(|top| top.first())
        .cloned()
        .unwrap_or_default();
    let mut left = Vec::with_capacity(5);
    for k in 0..5u32 {
        let (lower_half, upper_half) = butterfly(lower, lane, 1u64 << k, &value);
        left.push(lower_half.clone());
        let out = fresh_value(lower, r);
        combine(lower, r, &out, &lower_half, &upper_half)?;
        value = out;
    }
    Ok(ChunkTree {
        run_levels,
        left,
        total: value,
    })
}

/// Every level of the aligned tree over `items` (a power of two of them): the items, their
/// pairs, ..., the root.
fn tree_levels(
    lower: &mut Lower<'_>,
    r: &Reduction,
    items: Vec<Vec<Reg>>,
) -> Result<Vec<Vec<Vec<Reg>>>, CompileError> {
    let mut levels = vec![items];
    while levels.last().is_some_and(|l| l.len() > 1) {
        let below = levels.last().cloned().unwrap_or_default();
        let mut up = Vec::with_capacity(below.len() / 2);
        for pair in below.chunks(2) {
            let out = fresh_value(lower, r);
            combine(lower, r, &out, &pair[0], &pair[1])?;
            up.push(out);
        }
        levels.push(up);
    }
    Ok(levels)
}

/// The prefix of each item of a tree given its levels: the left half starts from `before`,
/// the right half from `before ∘ left half`.
fn down_sweep(
    lower: &mut Lower<'_>,
    r: &Reduction,
    before: &Held,
    levels: &[Vec<Vec<Reg>>],
) -> Result<Vec<Held>, CompileError> {
    let mut prefixes = vec![before.clone()];
    for level in levels.iter().rev().skip(1) {
        let mut next = Vec::with_capacity(prefixes.len() * 2);
        for (i, prefix) in prefixes.iter().enumerate() {
            let right = fold(lower, r, prefix, &level[2 * i])?;
            next.push(prefix.clone());
            next.push(right);
        }
        prefixes = next;
    }
    Ok(prefixes)
}

/// `held ∘ value` (or `value` when `held` is nothing), always there.
fn fold(
    lower: &mut Lower<'_>,
    r: &Reduction,
    held: &Held,
    value: &[Reg],
) -> Result<Held, CompileError> {
    let out = fresh_value(lower, r);
    combine_after(lower, r, &out, held, value)?;
    Ok(Held {
        value: out,
        has: lower.pred_const(true),
    })
}

/// The prefix of this lane's run: the chunk's prefix folded with the left blocks of the
/// butterfly levels where the lane is on the right, largest first.
fn lane_down(
    lower: &mut Lower<'_>,
    r: &Reduction,
    lane: Reg,
    before: &Held,
    left: &[Vec<Reg>],
) -> Result<Held, CompileError> {
    let acc = Held {
        value: fresh_value(lower, r),
        has: lower.e.reg(Class::Pred),
    };
    copy_into(lower, &acc.value, &before.value);
    lower.e.mov(acc.has, before.has);
    for (k, block) in left.iter().enumerate().rev() {
        let bit = u64_op(lower, |reg| format!("and.b64 {reg}, {lane}, {}", 1u64 << k));
        let right = lower
            .e
            .compute(Class::Pred, |reg| format!("setp.ne.u64 {reg}, {bit}, 0"));
        let skip = lower.e.label();
        lower.e.bra_unless(right, skip);
        let folded = fold(lower, r, &acc, block)?;
        copy_into(lower, &acc.value, &folded.value);
        lower.e.mov(acc.has, folded.has);
        lower.e.at(skip);
    }
    Ok(acc)
}

/// Each leaf's output: its exclusive prefix, or the prefix combined with the leaf.
fn run_outputs(
    lower: &mut Lower<'_>,
    r: &Reduction,
    p: &Params,
    run: &[Vec<Reg>],
    prefixes: Vec<Held>,
) -> Result<Vec<Vec<Reg>>, CompileError> {
    let mut outs = Vec::with_capacity(run.len());
    for (x, before) in run.iter().zip(prefixes) {
        let out = fresh_value(lower, r);
        let (inclusive, done) = (lower.e.label(), lower.e.label());
        lower.e.bra_unless(p.exclusive, inclusive);
        copy_into(lower, &out, &before.value);
        lower.e.bra(done);
        lower.e.at(inclusive);
        let folded = fold(lower, r, &before, x)?;
        copy_into(lower, &out, &folded.value);
        lower.e.at(done);
        outs.push(out);
    }
    Ok(outs)
}

/// Stores a run's outputs: packed in a full, aligned tile of 4- or 8-byte scalars; else each
/// leaf that lies before `valid`.
fn store_run(
    lower: &mut Lower<'_>,
    r: &Reduction,
    (base, size): (Reg, u32),
    (full, valid): (Reg, Reg),
    first: Reg,
    outs: &[Vec<Reg>],
) {
    let done = lower.e.label();
    let one_by_one = lower.e.label();
    if packable(lower, &r.ty).is_some() && size == r.value_size {
        let aligned = aligned_16(lower, base);
        let both = lower.e.compute(Class::Pred, |reg| {
            format!("and.pred {reg}, {full}, {aligned}")
        });
        lower.e.bra_unless(both, one_by_one);
        let addr = lower.element_address(base, first, size);
        vector_run(lower, Vector::Store, "global", addr, outs, size);
        lower.e.bra(done);
    }
    lower.e.at(one_by_one);
    for (k, out) in outs.iter().enumerate() {
        let i = u64_op(lower, |reg| format!("add.u64 {reg}, {first}, {k}"));
        let inside = lower.e.compute(Class::Pred, |reg| {
            format!("setp.lt.u64 {reg}, {i}, {valid}")
        });
        let skip = lower.e.label();
        lower.e.bra_unless(inside, skip);
        let addr = lower.element_address(base, i, size);
        lower.store_value(&r.ty.clone(), out, addr, "global", true);
        lower.e.at(skip);
    }
    lower.e.at(done);
}

/// The group table of a launch.
struct Table {
    values: Reg,
    flags: Reg,
    /// Tiles of all rows (one level's entries).
    total: Reg,
    /// The first entry of this tile's row.
    row_base: Reg,
    size: u32,
    /// Values are one 4-byte scalar, kept beside their flags.
    packed: bool,
}

/// Whether the scan's values are one 4-byte scalar (they then share a 64-bit word with their
/// flag in the group table).
fn packed_scalar(lower: &Lower<'_>, r: &Reduction) -> bool {
    matches!(crate::leaves::leaves(lower.module, &r.ty).as_slice(), [leaf] if leaf.kind.size() == 4)
}

impl Table {
    /// The entry of group `g` of the row at level `k`.
    fn entry(&self, lower: &mut Lower<'_>, k: Reg, g: Reg) -> Reg {
        let (total, row_base) = (self.total, self.row_base);
        let at = u64_op(lower, |reg| format!("add.u64 {reg}, {row_base}, {g}"));
        u64_op(lower, |reg| format!("mad.lo.u64 {reg}, {k}, {total}, {at}"))
    }

    /// The entry's word in `flags` (its flag in the high half).
    fn word_address(&self, lower: &mut Lower<'_>, entry: Reg) -> Reg {
        lower.element_address(self.flags, entry, TABLE_WORD_BYTES as u32)
    }

    fn value_address(&self, lower: &mut Lower<'_>, entry: Reg) -> Reg {
        lower.element_address(self.values, entry, self.size)
    }

    /// Writes a group's value and releases its flag: one 64-bit store of both where packed,
    /// else the value, then the flag.
    fn write(&self, lower: &mut Lower<'_>, r: &Reduction, entry: Reg, value: &[Reg]) {
        let word = self.word_address(lower, entry);
        if self.packed {
            let bits = lower
                .e
                .compute(Class::B32, |reg| format!("mov.b32 {reg}, {}", value[0]));
            let one = lower.e.mov_imm(Class::B32, 1);
            let both = lower.e.compute(Class::B64, |reg| {
                format!("mov.b64 {reg}, {{{bits}, {one}}}")
            });
            lower
                .e
                .op(format!("st.release.gpu.global.b64 [{word}], {both}"));
            return;
        }
        let addr = self.value_address(lower, entry);
        lower.store_value(&r.ty.clone(), value, addr, "global", true);
        lower
            .e
            .op(format!("st.release.gpu.global.u32 [{word}+4], 1"));
    }

    /// Waits for a group's flag (acquiring it) and reads its value: from the same 64-bit load
    /// where packed, else from L2, where other SMs' writes are.
    fn read(&self, lower: &mut Lower<'_>, r: &Reduction, entry: Reg) -> Vec<Reg> {
        let word = self.word_address(lower, entry);
        let spin = lower.e.label();
        lower.e.at(spin);
        let (low, flag) = (lower.e.reg(Class::B32), lower.e.reg(Class::B32));
        if self.packed {
            let both = lower.e.compute(Class::B64, |reg| {
                format!("ld.acquire.gpu.global.b64 {reg}, [{word}]")
            });
            lower.e.op(format!("mov.b64 {{{low}, {flag}}}, {both}"));
        } else {
            lower
                .e
                .op(format!("ld.acquire.gpu.global.u32 {flag}, [{word}+4]"));
        }
        let unset = lower
            .e
            .compute(Class::Pred, |reg| format!("setp.eq.u32 {reg}, {flag}, 0"));
        lower.e.bra_if(unset, spin);
        if self.packed {
            let value = fresh_value(lower, r);
            lower.e.op(format!("mov.b32 {}, {low}", value[0]));
            return value;
        }
        let addr = self.value_address(lower, entry);
        lower.load_value(&r.ty.clone(), addr, "global.cg", true)
    }
}

/// Lane 0 publishes the tile's total (level 0); then, while `j + 1` is a multiple of
/// `32^(m+1)`, the warp reads the 32 level-`m` groups that end with this tile (lane `l`
/// acquires the `l`-th), reduces them by the canonical tree (butterflies) and lane 0
/// publishes the level-`m + 1` group.
fn publish(
    lower: &mut Lower<'_>,
    r: &Reduction,
    table: &Table,
    lane: Reg,
    j: Reg,
    total: &[Reg],
) -> Result<(), CompileError> {
    let first_lane = lower
        .e
        .compute(Class::Pred, |reg| format!("setp.eq.u64 {reg}, {lane}, 0"));
    let level = lower.e.mov_imm(Class::B64, 0);
    let wrote = lower.e.label();
    lower.e.bra_unless(first_lane, wrote);
    let entry = table.entry(lower, level, j);
    table.write(lower, r, entry, total);
    lower.e.at(wrote);
    lower.e.op("bar.warp.sync 0xffffffff");
    let (head, done) = (lower.e.label(), lower.e.label());
    lower.e.at(head);
    let next = u64_op(lower, |reg| format!("add.u64 {reg}, {level}, 1"));
    let too_high = lower.e.compute(Class::Pred, |reg| {
        format!("setp.ge.u64 {reg}, {next}, {TABLE_LEVELS}")
    });
    lower.e.bra_if(too_high, done);
    // `j + 1` a multiple of 32^(level + 1): this tile ends a group of the next level.
    let shift = u64_op(lower, |reg| {
        format!("mul.lo.u64 {reg}, {next}, {RADIX_BITS}")
    });
    let shift = narrow(lower, shift);
    let after = u64_op(lower, |reg| format!("add.u64 {reg}, {j}, 1"));
    let high = u64_op(lower, |reg| format!("shr.u64 {reg}, {after}, {shift}"));
    let back = u64_op(lower, |reg| format!("shl.b64 {reg}, {high}, {shift}"));
    let ends = lower.e.compute(Class::Pred, |reg| {
        format!("setp.eq.u64 {reg}, {back}, {after}")
    });
    lower.e.bra_unless(ends, done);
    // The group's 32 parts: level-`level` groups `32 (high - 1) + lane`.
    let group = u64_op(lower, |reg| format!("sub.u64 {reg}, {high}, 1"));
    let part = u64_op(lower, |reg| {
        format!("mad.lo.u64 {reg}, {group}, {RADIX}, {lane}")
    });
    let entry = table.entry(lower, level, part);
    let value = table.read(lower, r, entry);
    lower.e.op("bar.warp.sync 0xffffffff");
    let levels = lane_tree(lower, r, lane, value)?;
    let root = levels.last().cloned().unwrap_or_default();
    let skip = lower.e.label();
    lower.e.bra_unless(first_lane, skip);
    let entry = table.entry(lower, next, group);
    table.write(lower, r, entry, &root);
    lower.e.at(skip);
    lower.e.op("bar.warp.sync 0xffffffff");
    lower.e.mov(level, next);
    lower.e.bra(head);
    lower.e.at(done);
    Ok(())
}

/// The values of the aligned blocks of 1, 2, ..., 32 lanes containing this lane: the lane's
/// value, then each butterfly level's combine (the canonical tree over the lanes).
fn lane_tree(
    lower: &mut Lower<'_>,
    r: &Reduction,
    lane: Reg,
    value: Vec<Reg>,
) -> Result<Vec<Vec<Reg>>, CompileError> {
    let mut levels = vec![value];
    for k in 0..RADIX_BITS {
        let below = levels.last().cloned().unwrap_or_default();
        let (lower_half, upper_half) = butterfly(lower, lane, 1u64 << k, &below);
        let out = fresh_value(lower, r);
        combine(lower, r, &out, &lower_half, &upper_half)?;
        levels.push(out);
    }
    Ok(levels)
}

/// The tile's exclusive prefix: for each base-32 digit `d` of `j`, highest first, the warp
/// acquires the `d` level-`m` groups the digit spans (lane `l` the `l`-th; the others repeat
/// lane 0's), builds their lanes' tree, and folds the blocks of `d`'s binary digits (each an
/// aligned node of that tree, largest first) onto the prefix, from the initial value (for an
/// exclusive scan that has one). These are exactly the canonical blocks of `j`'s binary
/// digits.
fn tile_prefix(
    lower: &mut Lower<'_>,
    r: &Reduction,
    table: &Table,
    lane: Reg,
    j: Reg,
    p: &Params,
) -> Result<Held, CompileError> {
    let acc = Held {
        value: fresh_value(lower, r),
        has: lower.e.reg(Class::Pred),
    };
    let given = lower.e.compute(Class::Pred, |reg| {
        format!("setp.ne.u64 {reg}, {}, 0", p.init)
    });
    lower
        .e
        .op(format!("and.pred {}, {}, {given}", acc.has, p.exclusive));
    let no_init = lower.e.label();
    lower.e.bra_unless(acc.has, no_init);
    let v = lower.load_value(&r.ty.clone(), p.init, "global", true);
    copy_into(lower, &acc.value, &v);
    lower.e.at(no_init);
    // Digits from the highest level down; `j` is the same in every lane (uniform branches).
    let level = lower.e.mov_imm(Class::B64, TABLE_LEVELS);
    let (head, done) = (lower.e.label(), lower.e.label());
    lower.e.at(head);
    let finished = lower
        .e
        .compute(Class::Pred, |reg| format!("setp.eq.u64 {reg}, {level}, 0"));
    lower.e.bra_if(finished, done);
    lower.e.op(format!("sub.u64 {level}, {level}, 1"));
    let shift = u64_op(lower, |reg| {
        format!("mul.lo.u64 {reg}, {level}, {RADIX_BITS}")
    });
    let shift = narrow(lower, shift);
    let shifted = u64_op(lower, |reg| format!("shr.u64 {reg}, {j}, {shift}"));
    let digit = u64_op(lower, |reg| {
        format!("and.b64 {reg}, {shifted}, {}", RADIX - 1)
    });
    let zero = lower
        .e
        .compute(Class::Pred, |reg| format!("setp.eq.u64 {reg}, {digit}, 0"));
    lower.e.bra_if(zero, head);
    // Lane `l < digit` holds group `first + l` of this level.
    let first = u64_op(lower, |reg| format!("sub.u64 {reg}, {shifted}, {digit}"));
    let value = fresh_value(lower, r);
    let inside = lower.e.compute(Class::Pred, |reg| {
        format!("setp.lt.u64 {reg}, {lane}, {digit}")
    });
    let fetched = lower.e.label();
    lower.e.bra_unless(inside, fetched);
    let part = u64_op(lower, |reg| format!("add.u64 {reg}, {first}, {lane}"));
    let entry = table.entry(lower, level, part);
    let v = table.read(lower, r, entry);
    copy_into(lower, &value, &v);
    lower.e.at(fetched);
    lower.e.op("bar.warp.sync 0xffffffff");
    // Lanes past the digit take lane 0's value, so no combine sees an unset register.
    let zero_lane = lower.e.mov_imm(Class::B32, 0);
    let from_first: Vec<Reg> = value
        .iter()
        .map(|&v| shuffle_from(lower, v, zero_lane))
        .collect();
    let skip_copy = lower.e.label();
    lower.e.bra_if(inside, skip_copy);
    copy_into(lower, &value, &from_first);
    lower.e.at(skip_copy);
    let levels = lane_tree(lower, r, lane, value)?;
    for k in (0..RADIX_BITS as usize).rev() {
        let bit = u64_op(lower, |reg| {
            format!("and.b64 {reg}, {digit}, {}", 1u64 << k)
        });
        let unset = lower
            .e
            .compute(Class::Pred, |reg| format!("setp.eq.u64 {reg}, {bit}, 0"));
        let skip = lower.e.label();
        lower.e.bra_if(unset, skip);
        // The block starts after the digit's higher set bits.
        let start = u64_op(lower, |reg| {
            format!("and.b64 {reg}, {digit}, {}", !((2u64 << k) - 1))
        });
        let start = narrow(lower, start);
        let block: Vec<Reg> = levels[k]
            .iter()
            .map(|&v| shuffle_from(lower, v, start))
            .collect();
        let folded = fold(lower, r, &acc, &block)?;
        copy_into(lower, &acc.value, &folded.value);
        lower.e.mov(acc.has, folded.has);
        lower.e.at(skip);
    }
    lower.e.bra(head);
    lower.e.at(done);
    Ok(acc)
}

/// A small 64-bit value as the 32-bit operand shifts take.
fn narrow(lower: &mut Lower<'_>, v: Reg) -> Reg {
    lower
        .e
        .compute(Class::B32, |reg| format!("cvt.u32.u64 {reg}, {v}"))
}

/// The value `v` of lane `from` (a 32-bit register).
fn shuffle_from(lower: &mut Lower<'_>, v: Reg, from: Reg) -> Reg {
    shuffle_with(lower, v, "idx", &from.to_string())
}
