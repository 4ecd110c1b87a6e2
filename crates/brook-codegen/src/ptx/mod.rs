//! The PTX backend: kernel IR to PTX text, which the CUDA driver compiles for the GPU.
//!
//! [`compile`] turns one kernel, specialised for a launch [`Variant`], into a PTX module with
//! one entry function, `brook_main` (`driver`), taking the launch's parameter block
//! ([`crate::abi`]) as a `.param` byte array. Arithmetic follows the exact rules of
//! `docs/SEMANTICS.md`: every float operation is written with `.rn` (so `ptxas` never
//! contracts `a*b+c` into an `fma`), no flush-to-zero, integer division never traps, and float
//! literals come from `.const` memory so the JIT folds no float arithmetic (`literals`).
//! No CUDA toolkit is needed: the text is written here and JIT-compiled by the driver.

mod driver;
mod emit;
mod helpers;
mod libm;
mod literals;
mod lower;

/// Leaves of one tile of the one-pass scan entry for values of a size (chunks of 256).
pub fn scan_tile_leaves(value_size: u32) -> u64 {
    driver::reduce::scan_tile_leaves(value_size)
}

/// Levels of the one-pass scan's group table: a row has at most `32^SCAN_TABLE_LEVELS` tiles.
pub const SCAN_TABLE_LEVELS: u64 = driver::reduce::SCAN_TABLE_LEVELS;

/// Bytes of an entry's word in the one-pass scan's group table flags (zeroed before a launch).
pub const SCAN_TABLE_WORD_BYTES: u64 = driver::reduce::SCAN_TABLE_WORD_BYTES;

/// The one-pass scan entry for rows of more than one tile (sm_80 on): its tiles are
/// [`scan_ahead_tile_leaves`] long, staged in [`scan_ahead_stage_bytes`] of dynamic shared
/// memory a block, and its blocks prefetch a later tile's input while they wait for their prefix.
pub const SCAN_TILES_AHEAD_ENTRY: &str = driver::reduce::SCAN_TILES_AHEAD_ENTRY;

/// Leaves of one tile of [`SCAN_TILES_AHEAD_ENTRY`] for values of a size.
pub fn scan_ahead_tile_leaves(value_size: u32) -> u64 {
    driver::reduce::scan_ahead_tile_leaves(value_size)
}

/// Bytes of dynamic shared memory a block of [`SCAN_TILES_AHEAD_ENTRY`] needs.
pub fn scan_ahead_stage_bytes(value_size: u32) -> u64 {
    driver::reduce::scan_ahead_stage_bytes(value_size)
}

/// Threads of a block of the one-pass scan entry (a block per tile).
pub const SCAN_TILE_THREADS: u32 = driver::reduce::SCAN_TILE_THREADS;

use crate::abi::{BlockLayout, ReduceEntry, Variant};
use crate::{Backend, BackendKind, CompileError};
use brook_ir::{KernelKind, ValidModule};
use std::time::{Duration, Instant};

/// The GPU a module is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    /// Compute capability as `major * 10 + minor` (`90` for an H100/H200).
    pub sm: u32,
    /// The code generation choices.
    pub tuning: crate::Tuning,
}

impl Target {
    /// The target where no GPU is there to ask (`brcc --emit ptx`): an H100/H200.
    pub const DEFAULT: Target = Target {
        sm: 90,
        tuning: crate::Tuning::DEFAULT,
    };

    /// The PTX ISA version written in the module: the oldest that knows `sm`.
    pub fn ptx_version(&self) -> &'static str {
        match self.sm {
            120.. => "8.7",
            100.. => "8.6",
            90.. => "7.8",
            89 => "7.8",
            86..=88 => "7.1",
            80..=85 => "7.0",
            75..=79 => "6.3",
            _ => "6.0",
        }
    }
}

/// What kind of launch the entry expects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// A grid-stride loop over the region (any grid works); `per_thread` instances per
    /// thread make full use of the unrolled loop.
    Map { per_thread: u64 },
    /// One CTA of `group_size` threads per group of instances, using `shared_bytes` of shared
    /// memory.
    Group { group_size: u32, shared_bytes: u32 },
    /// The reduction passes of `driver::reduce`; `value_size` bytes per value; `entries`:
    /// the entries the module has, serial first, each with its shape and limit.
    Reduce {
        value_size: u32,
        entries: Vec<ReduceEntry>,
    },
}

/// A kernel written as a PTX module.
#[derive(Clone, Debug)]
pub struct PtxKernel {
    /// The module's text (readable: `brcc --emit ptx` prints it).
    pub text: String,
    pub entry: EntryKind,
    pub layout: BlockLayout,
    /// How long writing the text took.
    pub generate_time: Duration,
}

impl PtxKernel {
    /// The names of the module's entry functions, the main one first (for a reduction, the
    /// declared entries in their order).
    pub fn entry_names(&self) -> Vec<&'static str> {
        match &self.entry {
            EntryKind::Reduce { entries, .. } => entries.iter().map(|e| e.name).collect(),
            _ => vec![driver::ENTRY],
        }
    }
}

/// The PTX backend ([`Backend`]): its options are the GPU [`Target`].
pub struct Ptx;

impl Backend for Ptx {
    const KIND: BackendKind = BackendKind::Ptx;
    type Options = Target;
    type Artifact = PtxKernel;

    fn compile(
        module: &ValidModule,
        kernel: usize,
        variant: &Variant,
        target: &Target,
    ) -> Result<PtxKernel, CompileError> {
        compile(module, kernel, variant, target)
    }
}

/// Writes kernel `kernel` of `module`, specialised for `variant`, as PTX for `target`.
pub fn compile(
    module: &ValidModule,
    kernel: usize,
    variant: &Variant,
    target: &Target,
) -> Result<PtxKernel, CompileError> {
    let started = Instant::now();
    let module = module.module();
    let k = &module.kernels[kernel];
    // Collectives without a native form become the canonical stores and barriers.
    let group = k.group_size.map_or(1, |g| g.iter().product::<u32>());
    let prepared =
        crate::lower::prepared_kernel(k, |c| lower::is_native(c, group, k), &target.tuning);
    let k: &brook_ir::Kernel = &prepared;
    let layout = BlockLayout::new(module, k);
    let (entry_text, helper_names, entry) = match (k.kind, k.group_size) {
        (KernelKind::Reduce, _) => {
            let built = driver::reduce::build(module, k, variant, &layout, target)?;
            let entry = EntryKind::Reduce {
                value_size: built.value_size,
                entries: built.entries,
            };
            (built.text, built.helpers, entry)
        }
        (KernelKind::Map, Some(size)) => {
            let group_size = size.iter().product::<u32>().max(1);
            let (text, helpers, shared_bytes) =
                driver::group::build(module, k, variant, &layout, group_size, &target.tuning)?;
            (
                text,
                helpers,
                EntryKind::Group {
                    group_size,
                    shared_bytes,
                },
            )
        }
        (KernelKind::Map, None) => {
            let (text, helpers, per_thread) =
                driver::map::build(module, k, variant, &layout, &target.tuning)?;
            (text, helpers, EntryKind::Map { per_thread })
        }
    };
    let header = format!(
        "// Brook kernel `{}` (rank {}), written by brook-codegen\n.version {}\n.target sm_{}\n.address_size 64\n",
        k.name,
        variant.rank,
        target.ptx_version(),
        target.sm
    );
    let mut text = String::new();
    let mut bodies = Vec::new();
    for name in helper_names {
        let Some(helper) = helpers::helper_text(name) else {
            return Err(CompileError::Unsupported {
                backend: crate::BackendKind::Ptx,
                kernel: k.name.clone(),
                span: k.span,
                construct: format!("the intrinsic behind `{name}`"),
            });
        };
        if helper.uses_table && !bodies.iter().any(|b: &helpers::HelperText| b.uses_table) {
            text.push_str(&libm::table_text());
        }
        bodies.push(helper);
    }
    for helper in &bodies {
        text.push_str(&helper.text);
    }
    text.push('\n');
    text.push_str(&entry_text);
    let text = format!("{header}{}{text}", literals::declarations(&text));
    Ok(PtxKernel {
        text,
        entry,
        layout,
        generate_time: started.elapsed(),
    })
}
