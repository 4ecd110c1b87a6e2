//! Running compiled kernels over the execution region, spread over the cores with rayon.
//!
//! Instances are split into contiguous chunks (row-major within the region), each run by one
//! call of the compiled loop. Thread groups run whole groups per task; inside a group, threads
//! are interleaved at barriers in the interpreter's order, or run in SIMD gangs phase by
//! phase where lockstep gives the same results (`brook_ir::lockstep`). Kernels with scatter outputs run in
//! parallel too where nothing depends on the order of their writes ([`parallel_scatter`]),
//! else in one call, in domain order, as on the interpreter.

use brook_codegen::cpu::{GroupFn, GroupRun, MapFn};
use rayon::prelude::*;

/// Fewer instances than this run on the calling thread.
pub const MIN_CHUNK: usize = 4096;

/// The parameter block's address, shareable between worker threads (it is only read).
#[derive(Clone, Copy)]
pub struct BlockPtr(pub *const u8);
// SAFETY: the block outlives the launch and is never written while kernels run.
unsafe impl Send for BlockPtr {}
// SAFETY: as above.
unsafe impl Sync for BlockPtr {}

impl BlockPtr {
    /// The address (a method, so that closures capture the whole `Send` wrapper).
    pub fn get(self) -> *const u8 {
        self.0
    }
}

/// The stack of each worker thread. Compiled kernels keep their local arrays (and the locals of
/// kernels too large for registers) in their stack frame: up to the checker's per-instance
/// limit plus the frame, far past the 2 MiB of a default thread. Only touched pages are
/// committed.
const WORKER_STACK_BYTES: usize = 64 << 20;

/// The CPU device's own worker threads (one per core), with stacks for large kernel frames;
/// `None` if no thread could be started (then rayon's global pool runs the kernels).
fn workers() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .stack_size(WORKER_STACK_BYTES)
            .thread_name(|i| format!("brook-cpu-worker-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// Runs `f` (which spreads work with rayon) on the device's worker threads.
pub fn on_workers<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    match workers() {
        Some(pool) => pool.install(f),
        None => f(),
    }
}

/// How many threads run kernels.
pub fn worker_count() -> usize {
    workers().map_or_else(rayon::current_num_threads, |p| p.current_num_threads())
}

/// Splits `0..total` into about four chunks per worker thread, none smaller than `min`.
pub fn chunks(total: usize, min: usize) -> Vec<(usize, usize)> {
    let threads = worker_count().max(1);
    let size = total.div_ceil(threads * 16).max(min).max(1);
    (0..total.div_ceil(size))
        .map(|c| (c * size, ((c + 1) * size).min(total)))
        .collect()
}

/// Whether a kernel's instances may run in parallel although it scatters: it never reads an
/// element of a scatter array (an instance would see other instances' writes in an order that
/// depends on the threads), and every scatter array's element is one scalar of at most 8 bytes,
/// so that two instances writing one element leave one of their values, never a mix (aligned
/// scalar stores are single-copy atomic). Conflicting writes then end as SEMANTICS.md allows
/// on parallel devices: the element holds one of the written values. Kernels without scatter
/// arrays always may.
pub fn parallel_scatter(module: &brook_ir::Module, kernel: &brook_ir::Kernel) -> bool {
    use brook_ir::{ParamRole, Type};
    let scatters = kernel
        .params
        .iter()
        .filter(|p| matches!(p.role, ParamRole::Scatter { .. }));
    let single_scalars = scatters
        .clone()
        .all(|p| matches!(&p.ty, Type::Value(v) if v.width == 1) && module.layout(&p.ty).size <= 8);
    scatters.count() == 0 || (single_scalars && !kernel.reads_scatter_array())
}

/// Whether a launch runs in one call on the calling thread: a map kernel whose instances run
/// in order or are too few to split ([`run_map`]).
pub fn runs_alone(entry: &brook_codegen::cpu::Entry, total: usize, in_order: bool) -> bool {
    matches!(entry, brook_codegen::cpu::Entry::Map(_)) && (in_order || total <= MIN_CHUNK)
}

/// Runs instances `0..total` of a map kernel.
pub fn run_map(run: MapFn, block: BlockPtr, total: usize, in_order: bool) {
    if in_order || total <= MIN_CHUNK {
        // SAFETY: the block was built for this kernel and checked against its buffers.
        unsafe { run(block.get(), 0, total as u64) };
        return;
    }
    chunks(total, MIN_CHUNK)
        .into_par_iter()
        .for_each(|(lo, hi)| {
            // SAFETY: as above; chunks write disjoint output elements.
            unsafe { run(block.get(), lo as u64, hi as u64) };
        });
}

/// How a thread-group kernel runs.
#[derive(Clone, Copy)]
pub struct Groups {
    pub run: GroupRun,
    pub shared_size: usize,
    pub group_size: usize,
}

impl Groups {
    /// Runs the groups `first..last` (of `total` instances) one after another.
    fn run_range(&self, block: BlockPtr, total: usize, first: usize, last: usize) {
        let words = |bytes: usize| vec![0u64; bytes.div_ceil(8)];
        let mut shared = words(self.shared_size);
        match self.run {
            GroupRun::Threads { thread, state_size } => {
                let mut state = words(state_size * self.group_size);
                for group in first..last {
                    let start = group * self.group_size;
                    let count = self.group_size.min(total - start);
                    state.fill(0);
                    shared.fill(0);
                    interleave(
                        thread,
                        block,
                        &mut state,
                        state_size,
                        &mut shared,
                        start,
                        count,
                    );
                }
            }
            GroupRun::Gangs {
                group: run,
                state_size,
            } => {
                let mut state = words(state_size);
                for group in first..last {
                    let start = group * self.group_size;
                    let count = self.group_size.min(total - start);
                    shared.fill(0);
                    // SAFETY: `state` and `shared` hold the sizes the compiled code expects;
                    // its phases set every local before they save it.
                    unsafe {
                        run(
                            block.get(),
                            state.as_mut_ptr().cast(),
                            shared.as_mut_ptr().cast(),
                            start as u64,
                            count as u64,
                        )
                    };
                }
            }
        }
    }

    /// Runs every group of `total` instances.
    pub fn run(&self, block: BlockPtr, total: usize, in_order: bool) {
        let groups = total.div_ceil(self.group_size);
        if in_order || total <= MIN_CHUNK {
            self.run_range(block, total, 0, groups);
            return;
        }
        let per_task = MIN_CHUNK.div_ceil(self.group_size);
        chunks(groups, per_task)
            .into_par_iter()
            .for_each(|(lo, hi)| self.run_range(block, total, lo, hi));
    }
}

/// Runs a group's `count` threads (instances `start..`) one at a time, each until it
/// finishes or reaches a barrier, round after round in thread order: the interpreter's order.
fn interleave(
    thread: GroupFn,
    block: BlockPtr,
    state: &mut [u64],
    state_size: usize,
    shared: &mut [u64],
    start: usize,
    count: usize,
) {
    let stride = state_size.div_ceil(8);
    let mut finished = vec![false; count];
    loop {
        let mut waiting = false;
        for (i, done) in finished.iter_mut().enumerate().filter(|(_, d)| !**d) {
            let own = state[i * stride..].as_mut_ptr().cast::<u8>();
            // SAFETY: `own` and `shared` hold the sizes the compiled code expects.
            let status = unsafe {
                thread(
                    block.get(),
                    own,
                    shared.as_mut_ptr().cast(),
                    (start + i) as u64,
                    i as u64,
                )
            };
            if status == 0 {
                *done = true;
            } else {
                waiting = true;
            }
        }
        if !waiting {
            break;
        }
    }
}
