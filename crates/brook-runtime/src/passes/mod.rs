//! Reductions and scans on a GPU, run as passes of a module's pass entries
//! (`brook_codegen::gpu::reduce`), written once for every GPU device over [`PassRunner`]:
//! what a device does to allocate scratch memory and run one pass.
//!
//! - [`layout`]: what the layout of a launch's leaves allows (consecutive tiles, tiles side
//!   by side), read from the launch plan;
//! - [`reduce`]: a reduction in the passes `reduce_plan` plans;
//! - [`scan`]: a scan in one pass where the module has the one-pass entry, else in levels
//!   (reduction passes for the pieces' totals, a scan of the totals, then the scan entry
//!   from the pieces' prefixes).

pub mod layout;
pub mod reduce;
pub mod scan;

use crate::error::LaunchProblem;
use brook_codegen::abi::{ReduceEntry, ReduceShape};

/// The parameters every pass entry (reductions' and the scan's) takes after the block.
#[derive(Clone, Copy, Debug)]
pub struct PassArgs {
    pub src: u64,
    pub dst: u64,
    pub leaves: u64,
    pub piece: u64,
    pub pieces: u64,
    pub mode: u32,
}

/// What a GPU device does for the passes of one launch.
pub trait PassRunner {
    /// Device memory that lives until it is dropped (in the device's order of work).
    type Scratch;
    /// The entries the launch's module declares (the serial one first).
    fn entries(&self) -> &[ReduceEntry];
    /// Threads the device keeps busy at once.
    fn parallelism(&self) -> u64;
    /// `bytes` of scratch memory (uninitialized).
    fn scratch(&self, bytes: u64) -> Result<Self::Scratch, LaunchProblem>;
    /// `bytes` of scratch memory, zeroed before the passes recorded next run.
    fn zeroed(&self, bytes: u64) -> Result<Self::Scratch, LaunchProblem>;
    /// Leaves per tile of the one-pass scan entry ([`ReduceShape::ScanLookback`]) for values
    /// of `value_size` bytes, and the bytes of an entry of its table.
    fn scan_tile(&self, value_size: u32) -> (u64, u64);
    /// `bytes` copied into new device memory.
    fn upload(&self, bytes: &[u8]) -> Result<Self::Scratch, LaunchProblem>;
    /// The device address of scratch memory.
    fn address(&self, scratch: &Self::Scratch) -> u64;
    /// Runs `entry` on `threads` threads with `args` and then `extra` (a scan's `pre` and
    /// `init`).
    fn run_pass(
        &self,
        entry: &ReduceEntry,
        threads: u64,
        args: PassArgs,
        extra: &[u64],
    ) -> Result<(), LaunchProblem>;

    /// The declared entry of a shape, if the module has one.
    fn entry(&self, shape: ReduceShape) -> Option<ReduceEntry> {
        self.entries().iter().copied().find(|e| e.shape == shape)
    }

    /// [`Self::entry`], or the launch's error when the module lacks it.
    fn required(&self, shape: ReduceShape) -> Result<ReduceEntry, LaunchProblem> {
        self.entry(shape).ok_or_else(|| {
            LaunchProblem::NotSupported(format!("the reduction module has no {shape:?} entry"))
        })
    }
}

/// Threads a pass of `entry` over `targets` targets of `pieces` pieces each takes.
pub fn threads(entry: &ReduceEntry, targets: u64, pieces: u64) -> u64 {
    match entry.shape {
        ReduceShape::Warp | ReduceShape::ScanWarp | ReduceShape::ScanLookback => {
            targets * pieces * 32
        }
        ReduceShape::Columns => targets / 4 * pieces,
        ReduceShape::Serial | ReduceShape::Scan | ReduceShape::ScanTiles => targets * pieces,
    }
}
