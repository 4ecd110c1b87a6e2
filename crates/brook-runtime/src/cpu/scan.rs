//! Scans on the CPU, in the canonical order of `brook_ir::scan_order`.
//!
//! Each row (a reduction tile, see [`crate::launch`]'s scan shapes) is cut into the aligned
//! power-of-two pieces that [`crate::reduce_plan`] gives its first pass. The compiled `range`
//! function reduces every piece but a row's last, in parallel; each row's piece totals are
//! scanned serially (exclusively, from the initial value, each combine one call of the
//! compiled `combine`) into the pieces' prefixes; then every piece is scanned from its prefix
//! in parallel by the compiled `scan` function (`scan_serial` in native code, the operator
//! inlined). Every piece is an aligned block, so the result is the canonical scan whatever
//! the pieces.

use super::reduce::Reduction;
use super::run::{chunks, BlockPtr};
use crate::plan::{LaunchPlan, ScanPlan};
use crate::reduce_plan::{self, Capabilities, Layout};
use brook_codegen::cpu::{ScanFn, REDUCE_ENTRY};
use brook_ir::scan_order::{scan_serial, ScanKind};
use rayon::prelude::*;

/// Leaves below which a row is one piece.
const MIN_PIECE: u64 = 1 << 14;
/// Pieces per thread a split row is cut into.
const PIECES_PER_THREAD: u64 = 16;

/// Words a value keeps inline (larger values live on the heap).
const INLINE: usize = 8;

/// A value of the operator's type: whole 8-byte words, so the compiled code may read and
/// write it in place; inline up to 64 bytes, so a step allocates nothing.
#[derive(Clone)]
enum Value {
    Inline([u64; INLINE]),
    Heap(Vec<u64>),
}

impl Value {
    fn zeroed(words: usize) -> Value {
        if words <= INLINE {
            Value::Inline([0; INLINE])
        } else {
            Value::Heap(vec![0; words])
        }
    }

    fn as_ptr(&self) -> *const u64 {
        match self {
            Value::Inline(words) => words.as_ptr(),
            Value::Heap(words) => words.as_ptr(),
        }
    }

    fn as_mut_ptr(&mut self) -> *mut u64 {
        match self {
            Value::Inline(words) => words.as_mut_ptr(),
            Value::Heap(words) => words.as_mut_ptr(),
        }
    }
}

/// One scan launch's rows, streams and operator.
struct Rows<'a> {
    reduction: &'a Reduction,
    scan: ScanFn,
    block: BlockPtr,
    words: usize,
}

impl Reduction {
    /// Scans every row of the launch into the output.
    pub fn scan(
        &self,
        launch: &LaunchPlan,
        block: BlockPtr,
        scan: &ScanPlan,
    ) -> Result<(), String> {
        let tile = launch.reduction_tile.as_deref().unwrap_or(&[]);
        let leaves: usize = tile.iter().product();
        let rows: usize = launch.domain.iter().product();
        if leaves == 0 || rows == 0 {
            return Ok(());
        }
        let r = Rows {
            reduction: self,
            scan: self
                .scan
                .ok_or("a scan launch compiled without its scan function")?,
            block,
            words: self.value_size.div_ceil(8).max(1),
        };
        let threads = super::run::worker_count().max(1) as u64;
        let caps = Capabilities {
            parallelism: threads,
            pieces_per_worker: PIECES_PER_THREAD,
            serial_min_piece: MIN_PIECE,
            serial_whole: MIN_PIECE,
            entries: std::slice::from_ref(&REDUCE_ENTRY),
        };
        let first = reduce_plan::plan_pass(leaves as u64, rows as u64, &caps, Layout::default());
        let piece = (first.piece as usize).min(leaves.next_power_of_two());
        let init = scan.init.as_ref().map(|bytes| r.value_of(bytes));
        if piece >= leaves {
            chunks(rows, (MIN_PIECE as usize / leaves).max(1))
                .into_par_iter()
                .for_each(|(lo, hi)| {
                    for row in lo..hi {
                        r.scan_piece(row, 0, leaves, init.clone(), scan.kind);
                    }
                });
            return Ok(());
        }
        for row in 0..rows {
            let prefixes = r.piece_prefixes(row, leaves, piece, init.clone());
            prefixes
                .into_par_iter()
                .enumerate()
                .for_each(|(j, before)| {
                    let (lo, hi) = (j * piece, ((j + 1) * piece).min(leaves));
                    r.scan_piece(row, lo, hi, before, scan.kind);
                });
        }
        Ok(())
    }
}

impl Rows<'_> {
    fn value_of(&self, bytes: &[u8]) -> Value {
        let mut value = Value::zeroed(self.words);
        let n = bytes.len().min(self.reduction.value_size);
        // SAFETY: `value` holds at least `value_size` bytes.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), value.as_mut_ptr().cast(), n) };
        value
    }

    fn combine(&self, left: &Value, right: &Value) -> Value {
        let mut result = left.clone();
        // SAFETY: both hold one value of the operator's type.
        unsafe {
            (self.reduction.combine)(
                self.block.get(),
                result.as_mut_ptr().cast(),
                right.as_ptr().cast(),
            )
        };
        result
    }

    /// The exclusive prefixes of row `row`'s pieces of `piece` leaves: the pieces reduced by
    /// the compiled `range` in parallel, their totals scanned serially (the last piece's
    /// total is pushed after its prefix is out, and goes nowhere).
    fn piece_prefixes(
        &self,
        row: usize,
        leaves: usize,
        piece: usize,
        init: Option<Value>,
    ) -> Vec<Option<Value>> {
        let count = leaves.div_ceil(piece);
        let mut totals = vec![Value::zeroed(self.words); count];
        totals.par_iter_mut().enumerate().for_each(|(j, slot)| {
            // SAFETY: `slot` holds one value; the block was checked against the buffers.
            unsafe {
                (self.reduction.range)(
                    self.block.get(),
                    row as u64,
                    (j * piece) as u64,
                    ((j + 1) * piece).min(leaves) as u64,
                    slot.as_mut_ptr().cast(),
                )
            };
        });
        let mut prefixes = vec![None; count];
        scan_serial(
            totals,
            init,
            ScanKind::Exclusive,
            &mut |a: &Value, b: &Value| self.combine(a, b),
            &mut |j, prefix| prefixes[j] = prefix,
        );
        prefixes
    }

    /// Scans leaves `lo..hi` of row `row` (an aligned piece) from `before` into the output.
    fn scan_piece(&self, row: usize, lo: usize, hi: usize, before: Option<Value>, kind: ScanKind) {
        let before = before
            .as_ref()
            .map_or(std::ptr::null(), |v| v.as_ptr().cast::<u8>());
        // SAFETY: the block was checked against the buffers (the output has the input's
        // shape); `before` is null or one value of the operator's type; each task writes its
        // own piece's output elements.
        unsafe {
            (self.scan)(
                self.block.get(),
                row as u64,
                lo as u64,
                hi as u64,
                before,
                u64::from(kind == ScanKind::Exclusive),
            )
        };
    }
}
