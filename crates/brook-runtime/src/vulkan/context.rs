//! An open Vulkan device: one compute queue, buffers addressed by device address, and
//! kernels (SPIR-V modules) recorded into batches (the `batch` module) and run on it.

use super::arena::CHUNK;
use super::batch::Batch;
use super::clock::Pair;
use super::info::GpuInfo;
use super::instance::Vulkan;
use super::memory::{Buffer, Placement, Pool};
use super::statistics::{self, Statistics};
use ash::vk;
use brook_codegen::spirv::SpirvModule;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// A logical device with its compute queue.
pub struct Context {
    /// The instance, kept alive as long as a device made from it.
    _vulkan: Arc<Vulkan>,
    pub device: ash::Device,
    memory: vk::PhysicalDeviceMemoryProperties,
    /// The queue, its command buffer and the kernels recorded in it.
    batch: Mutex<Batch>,
    /// The pipelines made so far, by their module's code (a kernel's second launch reuses
    /// its pipeline: lavapipe compiles each one with LLVM). Lock order: this, then `batch`.
    pipelines: Mutex<Pipelines>,
    /// Internal buffers for launch-lived memory larger than the arena's chunks.
    pool: Pool,
    /// Cached host memory downloads are copied through ([`Context::read`]).
    readback: Mutex<Option<Buffer>>,
    /// The driver's statistics of each pipeline, printed where asked for
    /// (`BRT_VULKAN_STATISTICS=1`).
    statistics: Option<Statistics>,
}

/// The most a download copies through cached host memory at a time.
const READBACK_PIECE: u64 = 64 << 20;

/// Pipelines by a sample of their module's words ([`sample_key`]), the whole code compared
/// on a hit.
type Pipelines = HashMap<(usize, u64), Vec<(Vec<u32>, Pipeline)>>;

/// Pipelines kept at most; past it the cache starts over (a fuzz run makes thousands).
const MAX_PIPELINES: usize = 512;

impl Context {
    /// Opens `physical` with the features Brook uses (device addresses; 8- and 16-bit storage,
    /// `shaderInt64`, `shaderFloat64`, 64-bit atomics in buffers where the device has them).
    pub fn open(
        vulkan: Arc<Vulkan>,
        physical: vk::PhysicalDevice,
        info: &GpuInfo,
    ) -> Result<Context, String> {
        let family = info
            .compute_queue
            .ok_or("the device has no compute queue")?;
        let priorities = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&priorities)];
        let mut f11 = vk::PhysicalDeviceVulkan11Features::default()
            .storage_buffer16_bit_access(info.storage16);
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default()
            .buffer_device_address(true)
            .storage_buffer8_bit_access(info.storage8)
            .shader_int8(info.storage8)
            .shader_buffer_int64_atomics(info.int64_atomics);
        let core = vk::PhysicalDeviceFeatures::default()
            .shader_int64(true)
            .shader_int16(info.storage16)
            .shader_float64(info.float64);
        let mut features = vk::PhysicalDeviceFeatures2::default()
            .features(core)
            .push_next(&mut f11)
            .push_next(&mut f12);
        let instance = &vulkan.instance;
        let wanted = statistics::extension_to_enable(instance, physical);
        let mut statistics_feature = statistics::feature();
        if wanted.is_some() {
            features = features.push_next(&mut statistics_feature);
        }
        let extensions: Vec<_> = wanted.iter().map(|name| name.as_ptr()).collect();
        let create = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&extensions)
            .push_next(&mut features);
        // SAFETY: `physical` comes from this instance; the create info lives across the call.
        let device = unsafe { instance.create_device(physical, &create, None) }
            .map_err(|e| format!("opening the device failed: {e}"))?;
        // SAFETY: as above.
        let memory = unsafe { instance.get_physical_device_memory_properties(physical) };
        let clock = (info.timestamp_bits, info.timestamp_period);
        match Batch::new(&device, family, clock) {
            Ok(batch) => Ok(Context {
                _vulkan: vulkan.clone(),
                memory,
                batch: Mutex::new(batch),
                pipelines: Mutex::new(HashMap::new()),
                pool: Pool::new(),
                readback: Mutex::new(None),
                statistics: wanted.map(|_| Statistics::new(instance, &device)),
                device,
            }),
            Err(e) => {
                // SAFETY: nothing was made from the device.
                unsafe { device.destroy_device(None) };
                Err(e)
            }
        }
    }

    /// A buffer of `bytes` bytes that the host maps and kernels reach by device address.
    pub fn buffer(self: &Arc<Self>, bytes: u64) -> Result<Buffer, String> {
        let memory = (&self.memory, Placement::Device);
        Buffer::new(&self.device, memory, Some(self.clone()), bytes)
    }

    /// An internal buffer of at least `bytes` bytes from the pool, no kernel using it; it
    /// returns to the pool when its last holder (a batch's keep list) lets it go.
    fn pooled(&self, bytes: u64) -> Result<Arc<Buffer>, String> {
        let memory = (&self.memory, Placement::Device);
        self.pool
            .take(bytes, |size| Buffer::new(&self.device, memory, None, size))
    }

    /// Runs `module` over `groups` workgroups with `push` as its push constants, and waits
    /// (after the kernels recorded before it).
    pub fn run(&self, module: &SpirvModule, push: &[u8], groups: [u32; 3]) -> Result<(), String> {
        self.record(module, push, groups)?;
        self.finish()
    }

    /// Records `module` over `groups` workgroups with `push` as its push constants, to run
    /// after the kernels recorded before it. Nothing waits: [`Context::finish`] does.
    pub fn record(
        &self,
        module: &SpirvModule,
        push: &[u8],
        groups: [u32; 3],
    ) -> Result<(), String> {
        self.recorder().record(module, push, groups)
    }

    /// A launch's hold on the context: until it is dropped, the launch records its kernels
    /// and cuts their memory from the arena, and no one else records or finishes a batch
    /// (so no one takes the launch's memory back before its kernels are recorded).
    pub fn recorder(&self) -> Recorder<'_> {
        let pipelines = self.pipelines.lock().unwrap_or_else(|e| e.into_inner());
        let mut batch = self.batch.lock().unwrap_or_else(|e| e.into_inner());
        batch.in_launch = true;
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Recorder {
            context: self,
            pipelines,
            batch,
            id: NEXT.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Records a copy of `bytes` bytes from `from` at `from_offset` to `to` at `to_offset`
    /// (the two ranges do not overlap), after the kernels recorded before it.
    pub fn record_copy(
        &self,
        (from, from_offset): (&Buffer, u64),
        (to, to_offset): (&Buffer, u64),
        bytes: u64,
    ) -> Result<(), String> {
        let region = vk::BufferCopy::default()
            .src_offset(from_offset)
            .dst_offset(to_offset)
            .size(bytes);
        let mut batch = self.batch.lock().unwrap_or_else(|e| e.into_inner());
        batch.record_copy(&self.device, (from.handle(), to.handle()), region)
    }

    /// `out.len()` bytes of `from` at `offset`, once the kernels recorded before have run:
    /// read through the mapping where the host's reads of it are cached, else copied on the
    /// device into cached host memory a piece at a time and read there.
    pub fn read(&self, from: &Buffer, offset: u64, out: &mut [u8]) -> Result<(), String> {
        self.finish()?;
        if from.is_cached() || out.len() < 4096 {
            let at = offset as usize;
            out.copy_from_slice(&from.bytes()[at..at + out.len()]);
            return Ok(());
        }
        let piece = (out.len() as u64).min(READBACK_PIECE);
        let mut staging = self.readback.lock().unwrap_or_else(|e| e.into_inner());
        if staging.as_ref().is_none_or(|s| s.len() < piece) {
            let memory = (&self.memory, Placement::Readback);
            *staging = Some(Buffer::new(&self.device, memory, None, piece)?);
        }
        let staging = staging.as_ref().expect("made above");
        for (k, chunk) in out.chunks_mut(piece as usize).enumerate() {
            let at = offset + k as u64 * piece;
            self.record_copy((from, at), (staging, 0), chunk.len() as u64)?;
            self.finish()?;
            chunk.copy_from_slice(&staging.bytes()[..chunk.len()]);
        }
        Ok(())
    }

    /// Whether dispatches recorded and not yet run have status words to read
    /// ([`Recorder::watch`]).
    pub fn watching(&self) -> bool {
        let batch = self.batch.lock().unwrap_or_else(|e| e.into_inner());
        batch.watching()
    }

    /// The dispatches recorder `id` watched ([`Recorder::watch`]) that have run with their
    /// status word set.
    pub fn take_tripped(&self, id: u64) -> Vec<String> {
        let mut batch = self.batch.lock().unwrap_or_else(|e| e.into_inner());
        batch.take_tripped(id)
    }

    /// Runs the recorded kernels and waits for them: their results are then in memory, and
    /// the host may read or write the buffers they used. An error (a kernel that did not
    /// finish, a lost device) is the batch's.
    pub fn finish(&self) -> Result<(), String> {
        let mut batch = self.batch.lock().unwrap_or_else(|e| e.into_inner());
        batch.finish(&self.device)
    }

    /// Whether the device has timestamps ([`Context::timestamp`]).
    pub fn has_clock(&self) -> bool {
        let batch = self.batch.lock().unwrap_or_else(|e| e.into_inner());
        batch.has_clock()
    }

    /// Records the start (`end` false) or end of timestamp pair `pair` after the work
    /// recorded so far; `false` where the device has no timestamps.
    pub fn timestamp(&self, pair: Pair, end: bool) -> Result<bool, String> {
        let mut batch = self.batch.lock().unwrap_or_else(|e| e.into_inner());
        batch.record_timestamp(&self.device, (pair, end))
    }

    /// Runs the recorded work and returns the time between the start and the end of `pair`
    /// (`None` without timestamps).
    pub fn elapsed(&self, pair: Pair) -> Result<Option<Duration>, String> {
        let mut batch = self.batch.lock().unwrap_or_else(|e| e.into_inner());
        batch.elapsed(&self.device, pair)
    }

    /// Runs the recorded kernels now; a failure is kept for the next [`Context::finish`].
    pub fn run_now(&self) {
        let mut batch = self.batch.lock().unwrap_or_else(|e| e.into_inner());
        batch.run_now(&self.device);
    }
}

/// A launch's hold on a context ([`Context::recorder`]). While one is held on a thread, that
/// thread must not free a stream's buffer nor call [`Context::finish`] (both lock the batch
/// it holds): a launch's stream buffers are held by its plan, which outlives the recorder.
pub struct Recorder<'c> {
    context: &'c Context,
    pipelines: MutexGuard<'c, Pipelines>,
    batch: MutexGuard<'c, Batch>,
    /// The recorder's number in the process: its launch's, for [`Context::take_tripped`].
    id: u64,
}

impl Recorder<'_> {
    /// `bytes` bytes of device memory that live until the kernels recorded next have run
    /// (uninitialized past `data`, which is written at their start); their address.
    pub fn memory(&mut self, data: &[u8], bytes: u64) -> Result<u64, String> {
        let c = self.context;
        let bytes = bytes.max(data.len() as u64);
        if bytes <= CHUNK {
            let memory = (&c.memory, Placement::Device);
            return self.batch.arena.take(data, bytes, |size| {
                Buffer::new(&c.device, memory, None, size)
            });
        }
        let buffer = c.pooled(bytes)?;
        // SAFETY: a buffer from the pool is this launch's alone, and no kernel uses it.
        unsafe { buffer.write_at(0, data) };
        let address = buffer.address();
        self.batch.keep_until_run(buffer);
        Ok(address)
    }

    /// `bytes` bytes of device memory, zeroed before the kernels recorded next run, that live
    /// until they have run; their address.
    pub fn zeroed(&mut self, bytes: u64) -> Result<u64, String> {
        let c = self.context;
        let bytes = bytes.max(4).next_multiple_of(4);
        let d = &c.device;
        if bytes <= CHUNK {
            let memory = (&c.memory, Placement::Device);
            let (buffer, at) = self
                .batch
                .arena
                .take_buffer(bytes, |size| Buffer::new(&c.device, memory, None, size))?;
            let (handle, address) = (buffer.handle(), buffer.address() + at);
            self.batch.record_zeroing(d, handle, (at, bytes))?;
            return Ok(address);
        }
        let buffer = c.pooled(bytes)?;
        let (handle, address) = (buffer.handle(), buffer.address());
        self.batch.keep_until_run(buffer);
        self.batch.record_zeroing(d, handle, (0, bytes))?;
        Ok(address)
    }

    /// Reads the status word at `address` (in memory this recorder gave) once the kernels
    /// recorded so far have run: [`Context::take_tripped`] with this recorder's
    /// [`Recorder::id`] then names `what` if it is set.
    pub fn watch(&mut self, address: u64, what: String) {
        self.batch.watch((self.id, address), what);
    }

    /// The recorder's number (its launch's).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Records `module` over `groups` workgroups with `push` as its push constants, after
    /// the kernels recorded before it.
    pub fn record(
        &mut self,
        module: &SpirvModule,
        push: &[u8],
        groups: [u32; 3],
    ) -> Result<(), String> {
        let d = &self.context.device;
        let key = sample_key(&module.words);
        let known = self
            .pipelines
            .get(&key)
            .and_then(|v| v.iter().position(|(w, _)| *w == module.words));
        let at = match known {
            Some(at) => at,
            None => {
                if self.pipelines.values().map(Vec::len).sum::<usize>() >= MAX_PIPELINES {
                    // Recorded kernels may use the pipelines: run them first.
                    self.batch.finish(d)?;
                    for (_, pipeline) in self.pipelines.drain().flat_map(|(_, v)| v) {
                        pipeline.destroy(d);
                    }
                }
                let compiling = || format!("the Vulkan driver's compile of {}", module.describe());
                let statistics = self.context.statistics.as_ref();
                let pipeline = crate::slow_call::reporting(&compiling, || {
                    Pipeline::new(d, module, statistics)
                })?;
                let same_key = self.pipelines.entry(key).or_default();
                same_key.push((module.words.clone(), pipeline));
                same_key.len() - 1
            }
        };
        let (_, pipeline) = &self.pipelines[&key][at];
        self.batch.record(d, pipeline, (push, groups))
    }
}

impl Drop for Recorder<'_> {
    fn drop(&mut self) {
        self.batch.end_launch(&self.context.device);
    }
}

/// A cheap key for a module's code: its length and a hash of up to 256 of its words, spread
/// over it (hashing a whole module on each launch would cost microseconds).
fn sample_key(words: &[u32]) -> (usize, u64) {
    let step = (words.len() / 256).max(1);
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for &w in words.iter().step_by(step) {
        hash = (hash ^ u64::from(w)).wrapping_mul(0x0100_0000_01b3);
    }
    (words.len(), hash)
}

impl Drop for Context {
    fn drop(&mut self) {
        let pipelines = self.pipelines.get_mut().unwrap_or_else(|e| e.into_inner());
        let pipelines: Vec<Pipeline> = pipelines
            .drain()
            .flat_map(|(_, v)| v)
            .map(|(_, p)| p)
            .collect();
        let batch = self.batch.get_mut().unwrap_or_else(|e| e.into_inner());
        let _ = batch.finish(&self.device);
        // SAFETY: nothing is pending (the batch was finished, the device waited for); the
        // handles are this context's and are destroyed once, the internal buffers first.
        unsafe {
            let _ = self.device.device_wait_idle();
            batch.destroy(&self.device);
            self.pool.clear();
            *self.readback.get_mut().unwrap_or_else(|e| e.into_inner()) = None;
            for pipeline in pipelines {
                pipeline.destroy(&self.device);
            }
            self.device.destroy_device(None);
        }
    }
}

/// A compute pipeline for one module.
pub(super) struct Pipeline {
    shader: vk::ShaderModule,
    pub(super) layout: vk::PipelineLayout,
    pub(super) pipeline: vk::Pipeline,
}

impl Pipeline {
    /// `module`'s pipeline; its statistics printed where `statistics` is given.
    fn new(
        device: &ash::Device,
        module: &SpirvModule,
        statistics: Option<&Statistics>,
    ) -> Result<Pipeline, String> {
        let ranges = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::COMPUTE)
            .offset(0)
            .size(module.push_bytes.max(4))];
        let entry = std::ffi::CString::new(module.entry).map_err(|e| e.to_string())?;
        // SAFETY: the device is live; the create infos and the code live across the calls;
        // what a failed step made is destroyed before returning.
        unsafe {
            let shader = device
                .create_shader_module(
                    &vk::ShaderModuleCreateInfo::default().code(&module.words),
                    None,
                )
                .map_err(|e| format!("the driver refused the SPIR-V module: {e}"))?;
            let layout = match device.create_pipeline_layout(
                &vk::PipelineLayoutCreateInfo::default().push_constant_ranges(&ranges),
                None,
            ) {
                Ok(layout) => layout,
                Err(e) => {
                    device.destroy_shader_module(shader, None);
                    return Err(format!("creating a pipeline layout failed: {e}"));
                }
            };
            let stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(shader)
                .name(&entry);
            let flags = match statistics {
                Some(_) => vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR,
                None => vk::PipelineCreateFlags::empty(),
            };
            let create = [vk::ComputePipelineCreateInfo::default()
                .flags(flags)
                .stage(stage)
                .layout(layout)];
            let started = std::time::Instant::now();
            let made = device.create_compute_pipelines(vk::PipelineCache::null(), &create, None);
            if statistics::wanted() {
                statistics::print_compile(
                    &module.describe(),
                    module.words.len(),
                    started.elapsed(),
                );
            }
            match made {
                Ok(pipelines) => {
                    if let Some(statistics) = statistics {
                        statistics.print(pipelines[0], &module.describe());
                    }
                    Ok(Pipeline {
                        shader,
                        layout,
                        pipeline: pipelines[0],
                    })
                }
                Err((_, e)) => {
                    device.destroy_pipeline_layout(layout, None);
                    device.destroy_shader_module(shader, None);
                    Err(format!(
                        "the driver could not compile {}: {e}",
                        module.describe()
                    ))
                }
            }
        }
    }

    fn destroy(self, device: &ash::Device) {
        // SAFETY: the pipeline's submission was waited for; each handle is destroyed once.
        unsafe {
            device.destroy_pipeline(self.pipeline, None);
            device.destroy_pipeline_layout(self.layout, None);
            device.destroy_shader_module(self.shader, None);
        }
    }
}
