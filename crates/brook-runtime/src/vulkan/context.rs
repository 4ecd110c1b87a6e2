//! An open Vulkan device: one compute queue, buffers addressed by device address, and
//! running a SPIR-V module on it.

use super::info::GpuInfo;
use super::instance::Vulkan;
use ash::vk;
use brook_codegen::spirv::SpirvModule;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A logical device with its compute queue.
pub struct Context {
    /// The instance, kept alive as long as a device made from it.
    _vulkan: Arc<Vulkan>,
    pub device: ash::Device,
    memory: vk::PhysicalDeviceMemoryProperties,
    /// The queue and the one command buffer recorded for it, used one submission at a time.
    queue: Mutex<Submitter>,
    /// The pipelines made so far, by their module's code (a kernel's second launch reuses
    /// its pipeline: lavapipe compiles each one with LLVM). Lock order: this, then `queue`.
    pipelines: Mutex<HashMap<Vec<u32>, Pipeline>>,
}

/// Pipelines kept at most; past it the cache starts over (a fuzz run makes thousands).
const MAX_PIPELINES: usize = 512;

struct Submitter {
    queue: vk::Queue,
    pool: vk::CommandPool,
    commands: vk::CommandBuffer,
    fence: vk::Fence,
}

/// How long a submission may run before the wait gives up with an error.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

impl Context {
    /// Opens `physical` with the features Brook uses (device addresses; 8- and 16-bit storage,
    /// `shaderInt64`, `shaderFloat64` where the device has them).
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
            .shader_int8(info.storage8);
        let core = vk::PhysicalDeviceFeatures::default()
            .shader_int64(true)
            .shader_int16(info.storage16)
            .shader_float64(info.float64);
        let mut features = vk::PhysicalDeviceFeatures2::default()
            .features(core)
            .push_next(&mut f11)
            .push_next(&mut f12);
        let create = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .push_next(&mut features);
        let instance = &vulkan.instance;
        // SAFETY: `physical` comes from this instance; the create info lives across the call.
        let device = unsafe { instance.create_device(physical, &create, None) }
            .map_err(|e| format!("opening the device failed: {e}"))?;
        // SAFETY: as above.
        let memory = unsafe { instance.get_physical_device_memory_properties(physical) };
        match Submitter::new(&device, family) {
            Ok(queue) => Ok(Context {
                _vulkan: vulkan.clone(),
                device,
                memory,
                queue: Mutex::new(queue),
                pipelines: Mutex::new(HashMap::new()),
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
        Buffer::new(self.clone(), bytes)
    }

    /// Runs `module` over `groups` workgroups with `push` as its push constants, and waits.
    pub fn run(&self, module: &SpirvModule, push: &[u8], groups: [u32; 3]) -> Result<(), String> {
        let mut pipelines = self.pipelines.lock().unwrap_or_else(|e| e.into_inner());
        if !pipelines.contains_key(&module.words) {
            if pipelines.len() >= MAX_PIPELINES {
                // No submission is pending: each is waited for, under these locks.
                for (_, pipeline) in pipelines.drain() {
                    pipeline.destroy(&self.device);
                }
            }
            let pipeline = Pipeline::new(&self.device, module)?;
            pipelines.insert(module.words.clone(), pipeline);
        }
        let pipeline = &pipelines[&module.words];
        self.submit(pipeline, push, groups)
    }

    fn submit(&self, pipeline: &Pipeline, push: &[u8], groups: [u32; 3]) -> Result<(), String> {
        let s = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        let d = &self.device;
        let fail = |what: &str, e: vk::Result| format!("{what} failed: {e}");
        // SAFETY: the command buffer is this context's and no submission of it is pending
        // (each ends with a wait on the fence, under the lock).
        unsafe {
            d.reset_command_buffer(s.commands, vk::CommandBufferResetFlags::empty())
                .map_err(|e| fail("resetting the command buffer", e))?;
            let begin = vk::CommandBufferBeginInfo::default()
                .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
            d.begin_command_buffer(s.commands, &begin)
                .map_err(|e| fail("recording", e))?;
            d.cmd_bind_pipeline(
                s.commands,
                vk::PipelineBindPoint::COMPUTE,
                pipeline.pipeline,
            );
            if !push.is_empty() {
                d.cmd_push_constants(
                    s.commands,
                    pipeline.layout,
                    vk::ShaderStageFlags::COMPUTE,
                    0,
                    push,
                );
            }
            let [x, y, z] = groups;
            d.cmd_dispatch(s.commands, x, y, z);
            d.end_command_buffer(s.commands)
                .map_err(|e| fail("recording", e))?;
            let commands = [s.commands];
            let submit = [vk::SubmitInfo::default().command_buffers(&commands)];
            d.reset_fences(&[s.fence])
                .map_err(|e| fail("resetting the fence", e))?;
            d.queue_submit(s.queue, &submit, s.fence)
                .map_err(|e| fail("submitting", e))?;
            let timeout = DEFAULT_TIMEOUT.as_nanos() as u64;
            match d.wait_for_fences(&[s.fence], true, timeout) {
                Ok(()) => Ok(()),
                Err(vk::Result::TIMEOUT) => Err(format!(
                    "the kernel did not finish in {} s",
                    DEFAULT_TIMEOUT.as_secs()
                )),
                Err(e) => Err(fail("waiting for the kernel", e)),
            }
        }
    }

    fn memory_type(&self, allowed: u32) -> Option<u32> {
        let wanted = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let types = &self.memory.memory_types[..self.memory.memory_type_count as usize];
        let fits = |i: usize, flags: vk::MemoryPropertyFlags| {
            allowed & (1 << i) != 0 && types[i].property_flags.contains(flags)
        };
        let fast = wanted | vk::MemoryPropertyFlags::DEVICE_LOCAL;
        (0..types.len())
            .find(|&i| fits(i, fast))
            .or_else(|| (0..types.len()).find(|&i| fits(i, wanted)))
            .map(|i| i as u32)
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        let pipelines = self.pipelines.get_mut().unwrap_or_else(|e| e.into_inner());
        let pipelines: Vec<Pipeline> = pipelines.drain().map(|(_, p)| p).collect();
        let s = self.queue.get_mut().unwrap_or_else(|e| e.into_inner());
        // SAFETY: no submission is pending (each is waited for); the handles are this
        // context's and are destroyed once.
        unsafe {
            let _ = self.device.device_wait_idle();
            for pipeline in pipelines {
                pipeline.destroy(&self.device);
            }
            self.device.destroy_fence(s.fence, None);
            self.device.destroy_command_pool(s.pool, None);
            self.device.destroy_device(None);
        }
    }
}

impl Submitter {
    fn new(device: &ash::Device, family: u32) -> Result<Submitter, String> {
        // SAFETY: the device is live; the create infos live across the calls.
        unsafe {
            let queue = device.get_device_queue(family, 0);
            let pool = device
                .create_command_pool(
                    &vk::CommandPoolCreateInfo::default()
                        .queue_family_index(family)
                        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                    None,
                )
                .map_err(|e| format!("creating a command pool failed: {e}"))?;
            let commands = device
                .allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(pool)
                        .level(vk::CommandBufferLevel::PRIMARY)
                        .command_buffer_count(1),
                )
                .map_err(|e| format!("allocating a command buffer failed: {e}"))?[0];
            let fence = device
                .create_fence(&vk::FenceCreateInfo::default(), None)
                .map_err(|e| format!("creating a fence failed: {e}"))?;
            Ok(Submitter {
                queue,
                pool,
                commands,
                fence,
            })
        }
    }
}

/// A compute pipeline for one module.
struct Pipeline {
    shader: vk::ShaderModule,
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
}

impl Pipeline {
    fn new(device: &ash::Device, module: &SpirvModule) -> Result<Pipeline, String> {
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
            let create = [vk::ComputePipelineCreateInfo::default()
                .stage(stage)
                .layout(layout)];
            match device.create_compute_pipelines(vk::PipelineCache::null(), &create, None) {
                Ok(pipelines) => Ok(Pipeline {
                    shader,
                    layout,
                    pipeline: pipelines[0],
                }),
                Err((_, e)) => {
                    device.destroy_pipeline_layout(layout, None);
                    device.destroy_shader_module(shader, None);
                    Err(format!("the driver could not compile the kernel: {e}"))
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

/// Device memory the host maps (coherent) and kernels reach at [`Buffer::address`].
pub struct Buffer {
    context: Arc<Context>,
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    mapped: *mut u8,
    bytes: u64,
    address: u64,
}

// SAFETY: the mapping is plain memory; the handles may be used from any thread.
unsafe impl Send for Buffer {}
// SAFETY: shared access only reads the handles; the bytes are written through `&mut self`.
unsafe impl Sync for Buffer {}

impl Buffer {
    fn new(context: Arc<Context>, bytes: u64) -> Result<Buffer, String> {
        let d = &context.device;
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER
            | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS
            | vk::BufferUsageFlags::TRANSFER_SRC
            | vk::BufferUsageFlags::TRANSFER_DST;
        let size = bytes.max(16);
        let oom = |e: vk::Result| format!("out of device memory: {size} bytes ({e})");
        // SAFETY: the device is live; what a failed step made is destroyed before returning.
        unsafe {
            let buffer = d
                .create_buffer(
                    &vk::BufferCreateInfo::default().size(size).usage(usage),
                    None,
                )
                .map_err(oom)?;
            let needs = d.get_buffer_memory_requirements(buffer);
            let Some(kind) = context.memory_type(needs.memory_type_bits) else {
                d.destroy_buffer(buffer, None);
                return Err("the device has no host-visible memory for buffers".into());
            };
            let mut flags = vk::MemoryAllocateFlagsInfo::default()
                .flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
            let allocate = vk::MemoryAllocateInfo::default()
                .allocation_size(needs.size)
                .memory_type_index(kind)
                .push_next(&mut flags);
            let memory = match d.allocate_memory(&allocate, None) {
                Ok(m) => m,
                Err(e) => {
                    d.destroy_buffer(buffer, None);
                    return Err(oom(e));
                }
            };
            let mapped = d.bind_buffer_memory(buffer, memory, 0).and_then(|()| {
                d.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
            });
            let mapped = match mapped {
                Ok(p) => p.cast::<u8>(),
                Err(e) => {
                    d.destroy_buffer(buffer, None);
                    d.free_memory(memory, None);
                    return Err(format!("mapping a buffer failed: {e}"));
                }
            };
            let address =
                d.get_buffer_device_address(&vk::BufferDeviceAddressInfo::default().buffer(buffer));
            Ok(Buffer {
                context: context.clone(),
                buffer,
                memory,
                mapped,
                bytes,
                address,
            })
        }
    }

    /// The buffer's device address (what a kernel's push constants carry).
    pub fn address(&self) -> u64 {
        self.address
    }

    pub fn len(&self) -> u64 {
        self.bytes
    }

    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    /// The buffer's bytes (no kernel may be running on it).
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: the mapping covers `bytes` bytes for the buffer's life.
        unsafe { std::slice::from_raw_parts(self.mapped, self.bytes as usize) }
    }

    /// The buffer's bytes to write (no kernel may be running on it).
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, and `&mut self` makes this the only view.
        unsafe { std::slice::from_raw_parts_mut(self.mapped, self.bytes as usize) }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        let d = &self.context.device;
        // SAFETY: no kernel runs on the buffer once its owner drops it; each handle once.
        unsafe {
            d.unmap_memory(self.memory);
            d.destroy_buffer(self.buffer, None);
            d.free_memory(self.memory, None);
        }
    }
}
