//! A Vulkan device as a Brook [`Device`]: buffers in host-visible memory reached by device
//! address, map kernels written by `brook_codegen::spirv::map` and run one launch at a time
//! (each waited for). Not yet in the registry's list (reductions, scans and thread groups come
//! first: a launch of one is a `LaunchProblem` naming it); made by [`device`].

use super::context::{Buffer as VkBuffer, Context};
use super::Gpu;
use crate::buffer::{Buffer, Span};
use crate::device::{Device, DeviceInfo, DeviceKind};
use crate::error::{LaunchProblem, RuntimeError};
use crate::kernel_cache::KernelCache;
use crate::plan::{block, LaunchPlan};
use crate::queue::Queue;
use brook_codegen::abi::BlockLayout;
use brook_codegen::spirv::map::{self, SpirvMap, GROUP};
use std::any::Any;
use std::sync::{Arc, Mutex};

/// Vulkan device `ordinal` as a Brook device, or why it cannot be one.
pub fn device(ordinal: usize) -> Result<Arc<dyn Device>, String> {
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
    let options = map::Options {
        float64: gpu.info.float64,
        fused_fma: gpu.info.fma_fused == Some(true),
        preserve_signed_zero: gpu.info.signed_zero_inf_nan,
    };
    Ok(Arc::new(VulkanDevice {
        info: DeviceInfo {
            kind: DeviceKind::Vulkan,
            ordinal,
            description: format!("vulkan:{ordinal} ({})", gpu.info.name),
            target: None,
        },
        queue: Queue::new(format!("brook-vulkan-{ordinal}")),
        context: context.clone(),
        options,
        cache: KernelCache::new(format!("vulkan:{ordinal}")),
    }))
}

pub struct VulkanDevice {
    info: DeviceInfo,
    queue: Queue,
    context: Arc<Context>,
    options: map::Options,
    cache: KernelCache<SpirvMap>,
}

/// A Vulkan buffer as a Brook buffer (bytes written through the mapping, under a lock).
struct VulkanBuffer {
    inner: Mutex<VkBuffer>,
    len: usize,
    address: u64,
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
        let mut inner = b.inner.lock().unwrap_or_else(|e| e.into_inner());
        let bytes = inner.bytes_mut();
        Ok(f(&mut bytes[span.offset()..span.offset() + span.len()]))
    }

    fn compiled(&self, launch: &LaunchPlan) -> Result<Arc<SpirvMap>, LaunchProblem> {
        let variant = block::variant(launch);
        self.cache
            .get_or_make(&launch.module, launch.kernel, &variant, || {
                let module = launch.module.module();
                map::compile(module, launch.kernel(), &variant, &self.options)
                    .map_err(|e| LaunchProblem::compile(launch.module.module(), e))
            })
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
        let mut inner = self
            .context
            .buffer(bytes as u64)
            .map_err(|e| self.fail(e))?;
        inner.bytes_mut().fill(0);
        let address = inner.address();
        Ok(Arc::new(VulkanBuffer {
            inner: Mutex::new(inner),
            len: bytes,
            address,
        }))
    }

    fn upload(&self, to: Span<'_>, data: &[u8]) -> Result<(), RuntimeError> {
        self.with_bytes(to, |bytes| bytes.copy_from_slice(data))
    }

    fn download(&self, from: Span<'_>, out: &mut [u8]) -> Result<(), RuntimeError> {
        self.with_bytes(from, |bytes| out.copy_from_slice(bytes))
    }

    fn copy(&self, from: Span<'_>, to: Span<'_>) -> Result<(), RuntimeError> {
        // Through the host: the spans may share a buffer (and its lock).
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
        let execution = |e: String| LaunchProblem::Execution(format!("{}: {e}", self.info));
        let mut block_buffer = self
            .context
            .buffer(layout.size() as u64)
            .map_err(execution)?;
        // SAFETY: the block holds `layout.size()` bytes.
        let block_bytes = unsafe { std::slice::from_raw_parts(params.as_ptr(), layout.size()) };
        block_buffer.bytes_mut()[..layout.size()].copy_from_slice(block_bytes);
        let total: u64 = launch.region.size.iter().map(|&n| n as u64).product();
        if total == 0 {
            return Ok(());
        }
        let scratch_bytes = total * u64::from(compiled.frame_bytes.max(16));
        let scratch = self.context.buffer(scratch_bytes).map_err(execution)?;
        // Workgroups: up to 65,535 along x, rows of them along y.
        let groups = total.div_ceil(u64::from(GROUP));
        let x = groups.min(65_535);
        let y = groups.div_ceil(x);
        if y > 65_535 {
            return Err(execution(format!(
                "{total} instances are more than one dispatch runs"
            )));
        }
        let width = x * u64::from(GROUP);
        let mut push = Vec::with_capacity(24);
        for word in [block_buffer.address(), scratch.address(), width] {
            push.extend_from_slice(&word.to_le_bytes());
        }
        self.context
            .run(&compiled.module, &push, [x as u32, y as u32, 1])
            .map_err(execution)
    }

    fn synchronize(&self) -> Result<(), RuntimeError> {
        Ok(())
    }
}
