//! Launching compiled kernels: grid shapes, device limits, and the passes of a reduction.

use super::buffer::CudaBuffer;
use super::driver::{launch, Function, Handles, Properties};
use crate::error::{DeviceLimit, LaunchProblem, Limit};
use crate::passes::{PassArgs, PassRunner};
use brook_codegen::abi::ReduceEntry;
use brook_codegen::ptx::{EntryKind, PtxKernel};
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
    pub(super) fn declared(&self) -> &'a [ReduceEntry] {
        match &self.ptx.entry {
            EntryKind::Reduce { entries, .. } => entries,
            _ => &[],
        }
    }

    /// The loaded function of entry `name`.
    fn function(&self, name: &str) -> Option<&'a Function> {
        let index = self.declared().iter().position(|e| e.name == name)?;
        self.functions.get(index)
    }

    /// [`Self::function`], or the launch's error when the module lacks it.
    pub(super) fn loaded(&self, name: &str) -> Result<&'a Function, LaunchProblem> {
        self.function(name).ok_or_else(|| {
            LaunchProblem::NotSupported(format!("the reduction module has no entry `{name}`"))
        })
    }
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

/// A reduction or scan launch's passes on the GPU ([`crate::passes`]).
pub struct CudaPasses<'a> {
    pub entries: &'a ReduceEntries<'a>,
    pub handles: &'a Handles,
    pub properties: &'a Properties,
    pub block: *const u8,
    pub tuning: &'a brook_codegen::Tuning,
}

impl PassRunner for CudaPasses<'_> {
    type Scratch = CudaBuffer;

    fn entries(&self) -> &[ReduceEntry] {
        self.entries.declared()
    }

    fn parallelism(&self) -> u64 {
        u64::from(self.properties.multiprocessors.max(1)) * 2048
    }

    fn scratch(&self, bytes: u64) -> Result<CudaBuffer, LaunchProblem> {
        CudaBuffer::uninit(*self.handles, bytes as usize).map_err(LaunchProblem::Execution)
    }

    fn zeroed(&self, bytes: u64) -> Result<CudaBuffer, LaunchProblem> {
        CudaBuffer::new(*self.handles, bytes as usize).map_err(LaunchProblem::Execution)
    }

    /// The shared entry's tiles, where the tuning asks for it in place of PTX's own one-pass
    /// entry (`ScanTiles`).
    fn scan_tile(&self, value_size: u32) -> (u64, u64) {
        use brook_codegen::gpu::reduce::lookback;
        let tile = match self.tuning.scan_tile {
            0 => lookback::held_tile_leaves(value_size, 32, self.tuning),
            tile => u64::from(tile),
        };
        (tile, lookback::entry_bytes(value_size))
    }

    fn upload(&self, bytes: &[u8]) -> Result<CudaBuffer, LaunchProblem> {
        super::scan::upload(self.handles, bytes)
    }

    fn address(&self, scratch: &CudaBuffer) -> u64 {
        scratch.ptr()
    }

    fn run_pass(
        &self,
        entry: &ReduceEntry,
        threads: u64,
        args: PassArgs,
        extra: &[u64],
    ) -> Result<(), LaunchProblem> {
        let function = self.entries.loaded(entry.name)?;
        let mut extra = extra.to_vec();
        launch_pass(
            function,
            self.handles,
            self.block,
            threads,
            args,
            &mut extra,
        )
    }
}
