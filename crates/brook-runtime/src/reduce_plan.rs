//! How a reduction runs, as data: its passes, the piece size of each and the entry that runs
//! it, planned in one place for every compiled device from the reduction's shape, the layout
//! of its leaves and what the device offers ([`Capabilities`]).
//!
//! A pass reduces each target's `leaves` leaves in aligned power-of-two pieces of `piece`
//! leaves (the last may be shorter); the next pass reduces the pieces' values the same way,
//! until one piece is left per target. Because every piece is an aligned subtree of the
//! canonical tree (`brook_ir::reduce_order`), the result does not depend on the plan: the plan
//! decides only how fast it comes.

use brook_codegen::abi::{ReduceEntry, ReduceShape};

/// What a device offers a reduction.
#[derive(Clone, Debug)]
pub struct Capabilities<'a> {
    /// Workers the device keeps busy at once (CPU threads; a GPU's resident threads).
    pub parallelism: u64,
    /// Pieces a split aims for per worker, so that workers finishing at different times
    /// still share the work out evenly.
    pub pieces_per_worker: u64,
    /// The fewest leaves a serial piece gets when a target is split (smaller pieces cost more
    /// in passes and calls than they gain).
    pub serial_min_piece: u64,
    /// Targets of at most this many leaves are reduced whole by a serial worker.
    pub serial_whole: u64,
    /// The compiled reduction's entries (the first is serial).
    pub entries: &'a [ReduceEntry],
}

/// What the layout of a pass's leaves allows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// Each target's leaves are consecutive in memory.
    pub contiguous: bool,
    /// Four neighbouring targets' leaves lie side by side (16 bytes per leaf).
    pub side_by_side: bool,
}

/// One pass of a reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pass {
    /// Leaves per target in this pass.
    pub leaves: u64,
    /// Leaves per piece, a power of two.
    pub piece: u64,
    /// Pieces per target (`leaves / piece`, rounded up); 1 in the last pass.
    pub pieces: u64,
    /// The entry that runs it.
    pub entry: ReduceEntry,
}

/// Threads of a warp.
const WARP: u64 = 32;
/// Nominal waves of warps a warp pass over few targets is split into.
const WARP_WAVES: u64 = 8;
/// Leaves per target from which a warp per piece pays off.
const WARP_MIN_LEAVES: u64 = 64;
/// The smallest piece a warp gets when a target's leaves are split (smaller pieces would only
/// add passes).
const WARP_MIN_PIECE: u64 = 512;
/// The smallest piece a column thread gets.
const COLUMN_MIN_PIECE: u64 = 32;

/// Every pass of a reduction of `leaves` leaves per target into `targets` targets, whose
/// first pass reads leaves laid out as `first`.
pub fn plan(leaves: u64, targets: u64, caps: &Capabilities<'_>, first: Layout) -> Vec<Pass> {
    let mut passes = Vec::new();
    let (mut leaves, mut layout) = (leaves, first);
    loop {
        let pass = plan_pass(leaves, targets, caps, layout);
        passes.push(pass);
        if pass.pieces <= 1 {
            return passes;
        }
        leaves = pass.pieces;
        // A column pass writes its values as `[piece][target]` (rows of targets side by
        // side, read by the column entry again); the others as `[target][piece]`.
        let columns = pass.entry.shape == ReduceShape::Columns;
        layout = Layout {
            contiguous: !columns,
            side_by_side: columns,
        };
    }
}

/// How the next pass splits `leaves` leaves per target: the warp entry where each target's
/// leaves are consecutive (and the module has one), the column entry where neighbouring
/// targets' leaves lie side by side, else the serial one.
pub fn plan_pass(leaves: u64, targets: u64, caps: &Capabilities<'_>, layout: Layout) -> Pass {
    let has = |shape| caps.entries.iter().copied().find(|e| e.shape == shape);
    let serial = caps.entries.first().copied().unwrap_or(ReduceEntry {
        name: "",
        shape: ReduceShape::Serial,
        max_piece: u64::MAX,
    });
    let warp = has(ReduceShape::Warp).filter(|_| layout.contiguous && leaves >= WARP_MIN_LEAVES);
    let columns = has(ReduceShape::Columns).filter(|_| warp.is_none() && layout.side_by_side);
    let parallelism = caps.parallelism.max(1);
    let (entry, workers, least) = if let Some(warp) = warp {
        // Few targets (a whole-stream sum) are split into several waves of warps, so that the
        // last, partial wave is a small part of the time (measured: 1.55 waves left the GPU
        // half idle for a third of a sum). Many targets (row sums) fill the GPU unsplit, and
        // splitting them would cost a pass.
        let warps = (parallelism / WARP).max(1);
        let waves = if targets < warps / 2 { WARP_WAVES } else { 1 };
        (warp, warps * waves, WARP_MIN_PIECE)
    } else if let Some(columns) = columns {
        // A thread covers four targets' pieces, so `parallelism` leaves-per-thread workers
        // make a quarter of the threads the GPU holds: streaming long pieces read faster than
        // a full GPU of short ones (measured on an H200, 8192x8192 column sums: pieces of 256
        // rows 0.082 ms, of 64 rows 0.092 ms).
        (columns, parallelism, COLUMN_MIN_PIECE)
    } else {
        let workers = parallelism * caps.pieces_per_worker.max(1);
        (serial, workers, caps.serial_min_piece.max(1))
    };
    let per_worker = (leaves * targets).div_ceil(workers).max(least);
    let most = entry.max_piece.max(1);
    let mut piece = per_worker.next_power_of_two().min(most);
    // A short tail of pieces is not worth another pass, and a serial worker takes small
    // targets, or as many targets as keep every worker busy, whole. (The column path splits
    // short columns too: a thread per four targets is few threads.)
    let whole = entry.shape == ReduceShape::Serial
        && (leaves <= caps.serial_whole || targets >= 2 * parallelism);
    if piece >= leaves || whole {
        piece = leaves.next_power_of_two().min(most);
    }
    Pass {
        leaves,
        piece,
        pieces: leaves.div_ceil(piece),
        entry,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(shape: ReduceShape, max_piece: u64) -> ReduceEntry {
        ReduceEntry {
            name: "e",
            shape,
            max_piece,
        }
    }

    fn gpu(entries: &[ReduceEntry]) -> Capabilities<'_> {
        Capabilities {
            parallelism: 132 * 2048,
            pieces_per_worker: 1,
            serial_min_piece: 32,
            serial_whole: 1024,
            entries,
        }
    }

    const CPU_ENTRIES: &[ReduceEntry] = &[ReduceEntry {
        name: "e",
        shape: ReduceShape::Serial,
        max_piece: u64::MAX,
    }];

    fn cpu(threads: u64) -> Capabilities<'static> {
        Capabilities {
            parallelism: threads,
            pieces_per_worker: 16,
            serial_min_piece: 1 << 14,
            serial_whole: 1 << 14,
            entries: CPU_ENTRIES,
        }
    }

    fn all_gpu_entries() -> Vec<ReduceEntry> {
        vec![
            entry(ReduceShape::Serial, 1 << 22),
            entry(ReduceShape::Warp, 1 << 22),
            entry(ReduceShape::Columns, 1 << 8),
        ]
    }

    #[test]
    fn passes_end_with_one_piece_per_target_and_always_progress() {
        let all = all_gpu_entries();
        let caps = [gpu(&all), gpu(&all[..1]), cpu(16)];
        for caps in &caps {
            for (leaves, targets) in [
                (1u64 << 28, 1u64),
                (8192, 8192),
                (3, 5),
                (1000, 1),
                (1 << 20, 4),
                (1 << 40, 1),
            ] {
                let first = Layout {
                    contiguous: false,
                    side_by_side: targets % 4 == 0,
                };
                let passes = plan(leaves, targets, caps, first);
                let mut l = leaves;
                for p in &passes {
                    assert_eq!(p.leaves, l);
                    assert!(p.piece.is_power_of_two() && p.piece * p.pieces >= l);
                    assert!(p.piece <= p.entry.max_piece);
                    assert!(p.pieces < l || l == 1, "no progress at {l}");
                    l = p.pieces;
                }
                assert_eq!(passes.last().map(|p| p.pieces), Some(1));
                assert!(passes.len() <= 4, "{leaves} x {targets}: {passes:?}");
            }
        }
    }

    #[test]
    fn the_entry_follows_the_layout_and_what_the_module_has() {
        let all = all_gpu_entries();
        let caps = gpu(&all);
        let contiguous = Layout {
            contiguous: true,
            side_by_side: false,
        };
        let side_by_side = Layout {
            contiguous: false,
            side_by_side: true,
        };
        let shape =
            |leaves, layout, caps: &Capabilities| plan_pass(leaves, 1, caps, layout).entry.shape;
        assert_eq!(shape(1 << 20, contiguous, &caps), ReduceShape::Warp);
        assert_eq!(shape(32, contiguous, &caps), ReduceShape::Serial);
        assert_eq!(shape(1 << 20, side_by_side, &caps), ReduceShape::Columns);
        assert_eq!(
            shape(1 << 20, Layout::default(), &caps),
            ReduceShape::Serial
        );
        let serial_only = gpu(&all[..1]);
        assert_eq!(
            shape(1 << 20, contiguous, &serial_only),
            ReduceShape::Serial
        );
        // A column pass is followed by column passes; the others by contiguous ones.
        let passes = plan(1 << 20, 4, &caps, side_by_side);
        assert!(passes.len() > 1);
        assert!(passes.iter().all(|p| p.entry.shape == ReduceShape::Columns));
    }

    #[test]
    fn a_cpu_splits_only_a_few_large_targets() {
        let caps = cpu(8);
        // Many targets: each is reduced whole by one call.
        assert_eq!(plan(1 << 20, 16, &caps, Layout::default()).len(), 1);
        // Small targets: whole.
        assert_eq!(plan(1 << 14, 1, &caps, Layout::default()).len(), 1);
        // One large target: pieces of at least 2^14 leaves, 16 per thread at most.
        let passes = plan(1 << 24, 1, &caps, Layout::default());
        assert_eq!(passes.len(), 2);
        assert_eq!(passes[0].piece, 1 << 17);
        assert_eq!(passes[0].pieces, 128);
        assert_eq!(passes[1].pieces, 1);
    }

    #[test]
    fn a_whole_stream_sum_on_a_gpu_uses_several_waves_of_warps() {
        let all = all_gpu_entries();
        let caps = gpu(&all);
        let contiguous = Layout {
            contiguous: true,
            side_by_side: false,
        };
        let p = plan_pass(1 << 28, 1, &caps, contiguous);
        // 132 * 64 warps, 8 waves: 2^28 / 67,584 rounds up to pieces of 4,096.
        assert_eq!((p.piece, p.pieces), (4096, 1 << 16));
        // Row sums of 8192 rows fill the GPU unsplit (one wave).
        let rows = plan_pass(8192, 8192, &caps, contiguous);
        assert_eq!(rows.entry.shape, ReduceShape::Warp);
        assert_eq!(rows.pieces, 1);
    }
}
