//! A Vulkan device as a Brook [`Device`]: buffers in host-visible memory reached by device
//! address; map kernels written by `brook_codegen::spirv::map`, reductions and scans by
//! `brook_codegen::spirv::reduce` and run in passes ([`crate::passes`]); one dispatch at a
//! time, each waited for. Not yet in the registry's list (thread groups come first: a launch
//! of one is a `LaunchProblem` naming it); made by [`device`].

use super::clock::Pair;
use super::context::{Context, Recorder};
use super::info::{GpuInfo, GpuKind};
use super::memory::Buffer as VkBuffer;
use super::Gpu;
use crate::buffer::{Buffer, Span};
use crate::device::{Device, DeviceInfo, DeviceKind};
use crate::error::{DeviceLimit, LaunchProblem, Limit, RuntimeError};
use crate::kernel_cache::KernelCache;
use crate::passes::{PassArgs, PassRunner};
use crate::plan::{block, LaunchPlan};
use crate::queue::Queue;
use brook_codegen::abi::{BlockLayout, ReduceEntry};
use brook_codegen::gpu::reduce::lookback;
use brook_codegen::leaves::first_use_of_kind;
use brook_codegen::spirv::loop_limit::STATUS_BYTES;
use brook_codegen::spirv::map::{self, SpirvMap};
use brook_codegen::spirv::probe::Subnormals;
use brook_codegen::spirv::reduce::{self, SpirvReduce};
use brook_codegen::spirv::SpirvModule;
use brook_ir::{KernelKind, ScalarKind};
use std::any::Any;
use std::cell::RefCell;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Vulkan device `ordinal` as a Brook device, or why it cannot be one.
pub fn device(ordinal: usize) -> Result<Arc<dyn Device>, String> {
    device_with(ordinal, |_| {})
}

/// [`device`] with its code generation options changed by `edit` (tests use it to run a
/// strategy the device would not choose itself).
pub fn device_with(
    ordinal: usize,
    edit: impl FnOnce(&mut map::Options),
) -> Result<Arc<dyn Device>, String> {
    let gpus = super::gpus().as_ref().map_err(Clone::clone)?;
    let gpu: &Gpu = gpus.get(ordinal).ok_or_else(|| {
        format!(
            "there is no vulkan:{ordinal} ({} Vulkan devices)",
            gpus.len()
        )
    })?;
    let context = gpu.context.as_ref().map_err(Clone::clone)?;
    if let Some(why) = &gpu.info.unusable {
        return Err(why.clone());
    }
    let flushes = gpu.info.subnormals_f32 != Some(Subnormals::Preserved);
    let tuning = crate::kernel_cache::process_tuning();
    let mut options = map::Options {
        float64: gpu.info.float64,
        fused_fma: gpu.info.fma_fused == Some(true),
        flushes_f32: flushes,
        preserve_signed_zero: gpu.info.signed_zero_inf_nan,
        unrolled_maps: gpu.info.kind != GpuKind::Cpu,
        subgroup_shuffle: gpu.info.subgroup_shuffle
            && (1..=map::GROUP).contains(&gpu.info.subgroup_size),
        subgroup_size: gpu.info.subgroup_size,
        loop_limit: gpu.info.loop_limit.unwrap_or(0),
        // Scans in one pass only where asked, and never on a device on the CPU: lavapipe ends
        // a subgroup's loops after 65,535 iterations in all, which a waiting tile's
        // fallback may need (see docs/SEMANTICS.md).
        lookback_scans: tuning.scan_one_pass
            && gpu.info.int64_atomics
            && gpu.info.subgroup_vote
            && gpu.info.kind != GpuKind::Cpu,
        tuning,
    };
    edit(&mut options);
    Ok(Arc::new(VulkanDevice {
        info: DeviceInfo {
            kind: DeviceKind::Vulkan,
            rank: None,
            ordinal,
            description: description(ordinal, &gpu.info, flushes),
            target: None,
            flushes_float_subnormals: flushes,
        },
        queue: Queue::new(format!("brook-vulkan-{ordinal}")),
        context: context.clone(),
        options,
        cache: KernelCache::new(format!("vulkan:{ordinal}")),
        timing: Mutex::new(()),
        limits: Limits {
            threads_per_group: gpu
                .info
                .max_group_invocations
                .min(gpu.info.max_group_size[0]),
            shared_bytes: gpu.info.max_shared_memory,
        },
        subgroup_size: u64::from(gpu.info.subgroup_size),
    }))
}

/// The device's line in listings: its name and what differs from the interpreter there.
fn description(ordinal: usize, info: &GpuInfo, flushes: bool) -> String {
    let mut notes = String::new();
    if flushes {
        notes.push_str(", float subnormals flushed");
    }
    if let Some(limit) = info.loop_limit {
        notes.push_str(&format!(", loops end after {limit} iterations"));
    }
    if !info.float64 {
        notes.push_str(", no double arithmetic");
    }
    format!("vulkan:{ordinal} ({}{notes})", info.name)
}

/// A kernel that computes with `double`, or with a `float` operation this dialect computes
/// through `double` (`brook_codegen::spirv::without_doubles`), on a device without
/// `shaderFloat64` (`options`): refused, naming the type or operation, the device and the
/// place.
fn check_types(
    module: &brook_ir::Module,
    kernel: &brook_ir::Kernel,
    options: &map::Options,
    device: &str,
) -> Result<(), LaunchProblem> {
    if options.float64 {
        return Ok(());
    }
    const FEATURE: &str = "64-bit floats (Vulkan's shaderFloat64)";
    if let Some(span) = first_use_of_kind(module, kernel, ScalarKind::F64) {
        return Err(LaunchProblem::DeviceType {
            kernel: kernel.name.clone(),
            ty: "double",
            device: device.to_string(),
            feature: FEATURE,
            at: module.excerpt(span),
        });
    }
    match brook_codegen::spirv::without_doubles::first_use_needing_doubles(kernel) {
        None => Ok(()),
        Some((operation, span)) => Err(LaunchProblem::DeviceOperation {
            kernel: kernel.name.clone(),
            operation,
            device: device.to_string(),
            feature: FEATURE,
            at: module.excerpt(span),
        }),
    }
}

pub struct VulkanDevice {
    info: DeviceInfo,
    queue: Queue,
    context: Arc<Context>,
    options: map::Options,
    cache: KernelCache<Compiled>,
    /// Held by one [`Device::gpu_time`] at a time (they share a timestamp pair).
    timing: Mutex<()>,
    limits: Limits,
    /// Invocations of a subgroup.
    subgroup_size: u64,
}

/// The device's limits a launch is checked against.
struct Limits {
    threads_per_group: u32,
    shared_bytes: u32,
}

/// A kernel's modules.
enum Compiled {
    Map(SpirvMap),
    Reduce(SpirvReduce),
}

/// A Vulkan buffer as a Brook buffer (bytes written through the mapping, under a lock, once
/// the kernels recorded before have run).
struct VulkanBuffer {
    inner: Mutex<VkBuffer>,
    len: usize,
    address: u64,
    context: Arc<Context>,
}

impl Drop for VulkanBuffer {
    fn drop(&mut self) {
        // Recorded kernels may use the buffer: they run before it is freed.
        if let Err(e) = self.context.finish() {
            crate::log::append(&format!("a Vulkan buffer freed after failed kernels: {e}"));
        }
    }
}

impl Buffer for VulkanBuffer {
    fn len(&self) -> usize {
        self.len
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn vulkan_buffer(buffer: &dyn Buffer) -> Result<&VulkanBuffer, String> {
    buffer
        .as_any()
        .downcast_ref::<VulkanBuffer>()
        .ok_or_else(|| "a stream's buffer belongs to another device".to_string())
}

fn address_of(buffer: &dyn Buffer) -> Result<(u64, usize), String> {
    let b = vulkan_buffer(buffer)?;
    Ok((b.address, b.len))
}

impl VulkanDevice {
    fn fail(&self, e: String) -> RuntimeError {
        RuntimeError::NoDevice(self.info.to_string(), e)
    }

    fn with_bytes<R>(
        &self,
        span: Span<'_>,
        f: impl FnOnce(&mut [u8]) -> R,
    ) -> Result<R, RuntimeError> {
        let b = vulkan_buffer(span.buffer()).map_err(|e| self.fail(e))?;
        self.context.finish().map_err(|e| self.fail(e))?;
        let mut inner = b.inner.lock().unwrap_or_else(|e| e.into_inner());
        let bytes = inner.bytes_mut();
        Ok(f(&mut bytes[span.offset()..span.offset() + span.len()]))
    }

    fn compiled(&self, launch: &LaunchPlan) -> Result<Arc<Compiled>, LaunchProblem> {
        if !self.options.float64 {
            let device = self.info.to_string();
            let (module, kernel) = (launch.module.module(), launch.kernel());
            check_types(module, kernel, &self.options, &device)?;
        }
        let variant = block::variant(launch);
        self.cache
            .get_or_make(&launch.module, launch.kernel, &variant, || {
                let (module, kernel) = (launch.module.module(), launch.kernel());
                let compiled = match kernel.kind {
                    KernelKind::Map => {
                        map::compile(module, kernel, &variant, &self.options).map(Compiled::Map)
                    }
                    KernelKind::Reduce => reduce::compile(module, kernel, &variant, &self.options)
                        .map(Compiled::Reduce),
                };
                compiled.map_err(|e| LaunchProblem::compile(module, e))
            })
    }

    fn execution(&self, e: String) -> LaunchProblem {
        LaunchProblem::Execution(format!("{}: {e}", self.info))
    }

    /// A thread-group kernel's group against the device's limits.
    fn check_group(&self, m: &SpirvMap) -> Result<(), LaunchProblem> {
        let limit = |what, requested: u32, limit: u32| {
            (requested > limit).then(|| {
                LaunchProblem::DeviceLimit(DeviceLimit {
                    device: self.info.to_string(),
                    what,
                    requested: u64::from(requested),
                    limit: u64::from(limit),
                    why: None,
                })
            })
        };
        let threads = limit(
            Limit::ThreadsPerGroup,
            m.group_size,
            self.limits.threads_per_group,
        );
        let shared = limit(
            Limit::SharedBytesPerGroup,
            m.shared_bytes,
            self.limits.shared_bytes,
        );
        match threads.or(shared) {
            Some(problem) => Err(problem),
            None => Ok(()),
        }
    }

    /// Records `module` on `threads` invocations (`group` to a workgroup, the workgroups in
    /// rows of up to 65,535; at most 65,535 rows where the module `strides` over its work in a
    /// grid-stride loop) with push words: the parameter block's address, a scratch frame of
    /// `frame_bytes` per invocation, the dispatch's width, then `words`. It runs when the
    /// host next needs results ([`Context::finish`]).
    fn dispatch(
        &self,
        recorder: &mut Recorder<'_>,
        (module, group): (&SpirvModule, u32),
        (threads, strides): (u64, bool),
        (block, frame_bytes): (u64, u32),
        words: &[u64],
    ) -> Result<(), LaunchProblem> {
        if threads == 0 {
            return Ok(());
        }
        let mut groups = threads.div_ceil(u64::from(group));
        if strides && frame_bytes > 0 {
            // Local arrays' frames are per invocation: a grid-stride kernel runs its
            // instances on fewer invocations rather than take more than `FRAMES` bytes.
            groups = groups.min((FRAMES / (u64::from(group) * u64::from(frame_bytes))).max(1));
        }
        let x = groups.min(65_535);
        let y = match groups.div_ceil(x) {
            rows if strides => rows.min(65_535),
            rows => rows,
        };
        if y > 65_535 {
            return Err(self.execution(format!(
                "{threads} invocations are more than one dispatch runs"
            )));
        }
        let threads = x * y * u64::from(group);
        // Kernels without local arrays never read their frames.
        let frames = if frame_bytes == 0 {
            16
        } else {
            threads * u64::from(frame_bytes)
        };
        let scratch = self.frames(recorder, module, frames)?;
        let width = x * u64::from(group);
        let mut push = Vec::with_capacity(8 * (3 + words.len()));
        for word in [block, scratch, width].iter().chain(words) {
            push.extend_from_slice(&word.to_le_bytes());
        }
        recorder
            .record(module, &push, [x as u32, y as u32, 1])
            .map_err(|e| self.execution(e))
    }
}

impl VulkanDevice {
    /// `bytes` of scratch frames for a dispatch of `module`: their address. A module that
    /// counts its loops gets its status word, zeroed, [`STATUS_BYTES`] before them, read
    /// when the dispatch has run ([`VulkanDevice::loops_within_limit`]).
    fn frames(
        &self,
        recorder: &mut Recorder<'_>,
        module: &SpirvModule,
        bytes: u64,
    ) -> Result<u64, LaunchProblem> {
        if !module.counts_loops {
            return recorder.memory(&[], bytes).map_err(|e| self.execution(e));
        }
        let status = recorder
            .memory(&[0; 4], STATUS_BYTES + bytes)
            .map_err(|e| self.execution(e))?;
        recorder.watch(status, module.name());
        Ok(status + STATUS_BYTES)
    }

    /// After a launch (recorded by recorder `id`) on a device that ends loops early
    /// (lavapipe): runs it and fails it where one of its dispatches reached the limit (its
    /// results would be wrong).
    fn loops_within_limit(&self, id: u64) -> Result<(), LaunchProblem> {
        if self.options.loop_limit == 0 {
            return Ok(());
        }
        if self.context.watching() {
            self.context.finish().map_err(|e| self.execution(e))?;
        }
        let tripped = self.context.take_tripped(id);
        let Some(first) = tripped.first() else {
            return Ok(());
        };
        let limit = u64::from(self.options.loop_limit);
        Err(LaunchProblem::DeviceLimit(DeviceLimit {
            device: self.info.to_string(),
            what: Limit::LoopIterations,
            requested: limit,
            limit: limit - 1,
            why: Some(format!(
                "the driver ends a subgroup's loops after {limit} iterations in all (loops \
                 its invocations run apart add up), silently, so the results would be wrong; \
                 {first} reached it: run the kernel on another device"
            )),
        }))
    }
}

impl Device for VulkanDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn queue(&self) -> &Queue {
        &self.queue
    }

    fn allocate(&self, bytes: usize) -> Result<Arc<dyn Buffer>, RuntimeError> {
        let mut inner =
            self.context
                .buffer(bytes as u64)
                .map_err(|reason| RuntimeError::Allocation {
                    device: self.info.to_string(),
                    bytes,
                    reason,
                })?;
        inner.bytes_mut().fill(0);
        let address = inner.address();
        Ok(Arc::new(VulkanBuffer {
            inner: Mutex::new(inner),
            len: bytes,
            address,
            context: self.context.clone(),
        }))
    }

    fn upload(&self, to: Span<'_>, data: &[u8]) -> Result<(), RuntimeError> {
        self.with_bytes(to, |bytes| bytes.copy_from_slice(data))
    }

    fn download(&self, from: Span<'_>, out: &mut [u8]) -> Result<(), RuntimeError> {
        let b = vulkan_buffer(from.buffer()).map_err(|e| self.fail(e))?;
        let inner = b.inner.lock().unwrap_or_else(|e| e.into_inner());
        let out = &mut out[..from.len()];
        self.context
            .read(&inner, from.offset() as u64, out)
            .map_err(|e| self.fail(e))
    }

    fn copy(&self, from: Span<'_>, to: Span<'_>) -> Result<(), RuntimeError> {
        let (source, target) = (
            vulkan_buffer(from.buffer()).map_err(|e| self.fail(e))?,
            vulkan_buffer(to.buffer()).map_err(|e| self.fail(e))?,
        );
        let len = from.len().min(to.len()) as u64;
        if !std::ptr::eq(source, target) {
            // On the device, after the kernels recorded before.
            let s = source.inner.lock().unwrap_or_else(|e| e.into_inner());
            let t = target.inner.lock().unwrap_or_else(|e| e.into_inner());
            let (s_at, t_at) = (from.offset() as u64, to.offset() as u64);
            return self
                .context
                .record_copy((&s, s_at), (&t, t_at), len)
                .map_err(|e| self.fail(e));
        }
        // Within one buffer (the ranges may overlap): through the host.
        let mut staged = crate::host_memory::zeroed(
            "copying on a Vulkan device",
            crate::error::BError::Kernel,
            from.len(),
        )?;
        self.download(from, &mut staged)?;
        self.upload(to, &staged)
    }

    fn launch(&self, launch: &LaunchPlan) -> Result<(), LaunchProblem> {
        let compiled = self.compiled(launch)?;
        let layout = BlockLayout::new(launch.module.module(), launch.kernel());
        let params =
            block::param_block(launch, &layout, &address_of).map_err(LaunchProblem::Execution)?;
        if let Compiled::Map(m) = compiled.as_ref() {
            self.check_group(m)?;
        }
        // SAFETY: the block holds `layout.size()` bytes.
        let block_bytes = unsafe { std::slice::from_raw_parts(params.as_ptr(), layout.size()) };
        let mut recorder = self.context.recorder();
        let id = recorder.id();
        let block = recorder
            .memory(block_bytes, block_bytes.len() as u64)
            .map_err(|e| self.execution(e))?;
        let recorded = match compiled.as_ref() {
            Compiled::Map(m) => {
                let total: u64 = launch.region.size.iter().map(|&n| n as u64).product();
                let module = (&m.module, m.group_size);
                let work = match m.instances_per_step {
                    Some(k) => (total.div_ceil(k), true),
                    None => (total, false),
                };
                let recorded =
                    self.dispatch(&mut recorder, module, work, (block, m.frame_bytes), &[]);
                // The recorder holds the batch: let it go before the batch runs.
                drop(recorder);
                recorded
            }
            Compiled::Reduce(r) => {
                let passes = VulkanPasses {
                    device: self,
                    reduce: r,
                    declared: r.entries.iter().map(|(e, _)| *e).collect(),
                    block,
                    recorder: RefCell::new(recorder),
                };
                match &launch.scan {
                    Some(scan) => crate::passes::scan::run(&passes, launch, r.value_size, scan),
                    None => crate::passes::reduce::run(&passes, launch, r.value_size),
                }
            }
        };
        recorded?;
        self.loops_within_limit(id)
    }

    fn synchronize(&self) -> Result<(), RuntimeError> {
        self.context.finish().map_err(|e| self.fail(e))
    }

    fn settle(&self) -> Result<(), RuntimeError> {
        self.context.finish().map_err(|e| self.fail(e))
    }

    /// Runs what is recorded (Brook+ `isSync` polls this; recorded kernels only run when
    /// someone waits): a failure is the next wait's.
    fn idle(&self) -> bool {
        self.context.run_now();
        true
    }

    /// Timestamps around the launch, read once it has run (the launch is waited for).
    fn launch_timed(&self, plan: &LaunchPlan) -> Result<Option<Duration>, LaunchProblem> {
        if !self.context.has_clock() {
            return self.launch(plan).map(|()| None);
        }
        let stamp =
            |end| (self.context.timestamp(Pair::Launch, end)).map_err(|e| self.execution(e));
        stamp(false)?;
        self.launch(plan)?;
        stamp(true)?;
        (self.context.elapsed(Pair::Launch)).map_err(|e| self.execution(e))
    }

    /// Timestamps around the work, recorded on the device's queue in order with its
    /// launches; `None` where the device has no timestamps.
    fn gpu_time(&self, work: &mut dyn FnMut()) -> Option<Result<Duration, RuntimeError>> {
        if !self.context.has_clock() {
            return None;
        }
        let _one_at_a_time = self.timing.lock().unwrap_or_else(|e| e.into_inner());
        // `Some(end)`: record a timestamp; `None`: run the work and read the pair.
        let on_queue = |stamp: Option<bool>| {
            let context = self.context.clone();
            let job = move || match stamp {
                Some(end) => context.timestamp(Pair::Work, end).map(|_| None),
                None => context.elapsed(Pair::Work),
            };
            (self.queue.run(job)).unwrap_or_else(|| Err("the device queue stopped".into()))
        };
        let mut timed = || {
            on_queue(Some(false))?;
            work();
            on_queue(Some(true))?;
            on_queue(None)
        };
        timed().map_err(|e| self.fail(e)).transpose()
    }
}

/// The most scratch memory the local-array frames of one grid-stride map take.
const FRAMES: u64 = 256 << 20;

/// Threads a Vulkan device is taken to keep busy at once when a reduction plans its pieces
/// (Vulkan does not say; about a mid-sized GPU's).
const PARALLELISM: u64 = 1 << 16;

/// A reduction or scan launch's passes on a Vulkan device.
struct VulkanPasses<'a> {
    device: &'a VulkanDevice,
    reduce: &'a SpirvReduce,
    declared: Vec<ReduceEntry>,
    /// The parameter block's address.
    block: u64,
    /// The launch's hold on the context: its passes' memory and recordings.
    recorder: RefCell<Recorder<'a>>,
}

impl PassRunner for VulkanPasses<'_> {
    /// An address of launch-lived memory ([`Recorder::memory`]): it lives until the launch's
    /// passes have run.
    type Scratch = u64;

    fn entries(&self) -> &[ReduceEntry] {
        &self.declared
    }

    fn parallelism(&self) -> u64 {
        PARALLELISM
    }

    fn scratch(&self, bytes: u64) -> Result<u64, LaunchProblem> {
        let d = self.device;
        let mut recorder = self.recorder.borrow_mut();
        recorder
            .memory(&[], bytes.max(4))
            .map_err(|e| d.execution(e))
    }

    fn zeroed(&self, bytes: u64) -> Result<u64, LaunchProblem> {
        let d = self.device;
        let mut recorder = self.recorder.borrow_mut();
        recorder.zeroed(bytes).map_err(|e| d.execution(e))
    }

    fn scan_tile(&self, value_size: u32) -> (u64, u64) {
        let tuning = &self.device.options.tuning;
        let tile = match tuning.scan_tile {
            0 => lookback::held_tile_leaves(value_size, self.device.subgroup_size, tuning),
            tile => u64::from(tile),
        };
        (tile, lookback::entry_bytes(value_size))
    }

    fn upload(&self, bytes: &[u8]) -> Result<u64, LaunchProblem> {
        let d = self.device;
        let mut recorder = self.recorder.borrow_mut();
        recorder
            .memory(bytes, bytes.len() as u64)
            .map_err(|e| d.execution(e))
    }

    fn address(&self, scratch: &u64) -> u64 {
        *scratch
    }

    fn run_pass(
        &self,
        entry: &ReduceEntry,
        threads: u64,
        args: PassArgs,
        extra: &[u64],
    ) -> Result<(), LaunchProblem> {
        let (_, module) = self
            .reduce
            .entries
            .iter()
            .find(|(e, _)| e.shape == entry.shape)
            .ok_or_else(|| {
                LaunchProblem::NotSupported(format!(
                    "the reduction module has no {:?} entry",
                    entry.shape
                ))
            })?;
        let mut words = vec![
            args.src,
            args.dst,
            args.leaves,
            args.piece,
            args.pieces,
            u64::from(args.mode),
        ];
        words.extend_from_slice(extra);
        let frame = (self.block, self.reduce.frame_bytes);
        let group = reduce::group_size(entry.shape, &self.device.options.tuning);
        let mut recorder = self.recorder.borrow_mut();
        self.device.dispatch(
            &mut recorder,
            (module, group),
            (threads, false),
            frame,
            &words,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brook_ir::{Arena, Block, Kernel, Module, Param, ParamRole, SourceSpan, Type, ValueType};

    fn kernel_with_input(kind: ScalarKind) -> Kernel {
        Kernel {
            name: "scale".into(),
            kind: KernelKind::Map,
            params: vec![Param {
                name: "a".into(),
                ty: Type::Value(ValueType::scalar(kind)),
                role: ParamRole::Input,
                span: SourceSpan::default(),
            }],
            group_size: None,
            vouts: Vec::new(),
            locals: Arena::new(),
            exprs: Arena::new(),
            body: Block::new(),
            span: SourceSpan::default(),
        }
    }

    #[test]
    fn doubles_on_a_device_without_them_are_refused_by_name() {
        let module = Module::default();
        let without = map::Options::default();
        let with = map::Options {
            float64: true,
            ..without
        };
        let doubles = kernel_with_input(ScalarKind::F64);
        let problem = check_types(&module, &doubles, &without, "vulkan:3 (a GPU)")
            .expect_err("refused without shaderFloat64");
        let text = problem.to_string();
        for part in ["`scale`", "`double`", "vulkan:3 (a GPU)", "shaderFloat64"] {
            assert!(text.contains(part), "{part} not in: {text}");
        }
        assert!(check_types(&module, &doubles, &with, "vulkan:0").is_ok());
        let floats = kernel_with_input(ScalarKind::F32);
        assert!(check_types(&module, &floats, &without, "vulkan:0").is_ok());
    }

    #[test]
    fn devices_with_timestamps_time_their_work() {
        let Ok(gpus) = super::super::gpus() else {
            eprintln!("no Vulkan devices: gpu_time was not tried");
            return;
        };
        for (k, gpu) in gpus.iter().enumerate() {
            let Ok(device) = device(k) else { continue };
            let timed = device.gpu_time(&mut || {});
            match (gpu.info.timestamp_bits, timed) {
                (0, None) => {}
                (bits, Some(Ok(t))) if bits > 0 => assert!(t.as_secs_f64() < 10.0, "{t:?}"),
                (bits, other) => panic!("vulkan:{k} ({bits} timestamp bits): {other:?}"),
            }
        }
    }
}
