//! Reductions on the CPU, in the canonical order of `brook_ir::reduce_order`, in the passes
//! [`crate::reduce_plan`] gives.
//!
//! One pass (many target elements, as row sums, or small tiles): each task reduces whole
//! tiles. More (few targets with large tiles, as a full sum): the first pass cuts each tile
//! into aligned power-of-two pieces reduced in parallel by the compiled `range` function; the
//! later passes are done at once on the host by combining the pieces' values with the same
//! canonical tree (the later passes' trees together are that tree), which gives exactly the
//! canonical result (see `brook_ir::reduce_order`, "Why this order").

use super::run::{chunks, BlockPtr};
use crate::buffer::Span;
use crate::plan::{Bound, LaunchPlan};
use crate::reduce_plan::{self, Capabilities, Layout};
use crate::stream::addressing::unravel;
use brook_codegen::cpu::{CombineFn, RangeFn, ScanFn, REDUCE_ENTRY};
use brook_ir::reduce_order::reduce_canonical;
use brook_ir::ParamRole;
use rayon::prelude::*;

/// Leaves below which a tile is reduced by one call.
const MIN_PIECE: usize = 1 << 14;
/// Pieces per thread a split tile is cut into (threads finish at different times).
const PIECES_PER_THREAD: u64 = 16;

#[derive(Clone, Copy)]
struct OutPtr(*mut u8);
// SAFETY: each target element is written by exactly one task.
unsafe impl Send for OutPtr {}
// SAFETY: as above.
unsafe impl Sync for OutPtr {}

pub struct Reduction {
    pub range: RangeFn,
    pub combine: CombineFn,
    /// Compiled for a launch as a scan.
    pub scan: Option<ScanFn>,
    pub value_size: usize,
}

impl Reduction {
    /// Reduces every tile of the launch into its target element.
    pub fn run(&self, launch: &LaunchPlan, block: BlockPtr) -> Result<(), String> {
        let tile: usize = launch
            .reduction_tile
            .as_ref()
            .map_or(0, |t| t.iter().product());
        let targets: usize = launch.domain.iter().product();
        if tile == 0 || targets == 0 {
            return Ok(());
        }
        let outputs = target_addresses(launch, self.value_size)?;
        let threads = super::run::worker_count().max(1);
        let caps = Capabilities {
            parallelism: threads as u64,
            pieces_per_worker: PIECES_PER_THREAD,
            serial_min_piece: MIN_PIECE as u64,
            serial_whole: MIN_PIECE as u64,
            entries: std::slice::from_ref(&REDUCE_ENTRY),
        };
        let passes = reduce_plan::plan(tile as u64, targets as u64, &caps, Layout::default());
        if let Some(first) = passes.first().filter(|p| p.pieces > 1) {
            for (t, out) in outputs.iter().enumerate() {
                self.run_split(block, t, tile, first.piece as usize, *out);
            }
        } else {
            let chunk_min = (MIN_PIECE / tile).max(1);
            chunks(targets, chunk_min)
                .into_par_iter()
                .for_each(|(lo, hi)| {
                    for (t, out) in outputs.iter().enumerate().take(hi).skip(lo) {
                        // SAFETY: the block was checked against the buffers; `out` is the target
                        // element's address.
                        unsafe { (self.range)(block.get(), t as u64, 0, tile as u64, out.0) };
                    }
                });
        }
        Ok(())
    }

    /// One target's tile, in aligned power-of-two pieces of `piece` leaves.
    fn run_split(&self, block: BlockPtr, target: usize, tile: usize, piece: usize, out: OutPtr) {
        let count = tile.div_ceil(piece);
        let stride = self.value_size.div_ceil(8).max(1);
        let mut partials = vec![0u64; stride * count];
        partials
            .par_chunks_mut(stride)
            .enumerate()
            .for_each(|(j, slot)| {
                let (lo, hi) = (j * piece, ((j + 1) * piece).min(tile));
                // SAFETY: `slot` holds one value.
                unsafe {
                    (self.range)(
                        block.get(),
                        target as u64,
                        lo as u64,
                        hi as u64,
                        slot.as_mut_ptr().cast(),
                    )
                };
            });
        let pieces: Vec<Vec<u64>> = partials.chunks(stride).map(<[u64]>::to_vec).collect();
        let mut combine = |left: &Vec<u64>, right: &Vec<u64>| {
            let mut result = left.clone();
            // SAFETY: both hold one value of the reduction's type.
            unsafe {
                (self.combine)(
                    block.get(),
                    result.as_mut_ptr().cast(),
                    right.as_ptr().cast(),
                )
            };
            result
        };
        if let Some(result) = reduce_canonical(&pieces, &mut combine) {
            // SAFETY: `out` is the target element, `value_size` bytes.
            unsafe {
                std::ptr::copy_nonoverlapping(result.as_ptr().cast::<u8>(), out.0, self.value_size)
            };
        }
    }
}

/// The address of every target element, in row-major order of the domain.
fn target_addresses(launch: &LaunchPlan, value_size: usize) -> Result<Vec<OutPtr>, String> {
    let kernel = launch.kernel();
    let index = kernel
        .params
        .iter()
        .position(|p| p.role == ParamRole::Reduce)
        .ok_or("a reduction without a target")?;
    let Bound::Stream {
        buffer, addressing, ..
    } = &launch.args[index]
    else {
        return Err("the reduction target is not a stream".into());
    };
    let buffer = super::bind::cpu_buffer(buffer.as_ref())?;
    let targets: usize = launch.domain.iter().product();
    let mut pos = vec![0; launch.domain.len()];
    (0..targets)
        .map(|t| {
            unravel(t, &launch.domain, &mut pos);
            let offset = addressing.element(&pos) * value_size;
            Span::new("Kernel Execution", buffer, offset, value_size)
                .map(|span| OutPtr(buffer.at(span)))
                .map_err(|_| "the reduction target is smaller than its shape".to_string())
        })
        .collect()
}
