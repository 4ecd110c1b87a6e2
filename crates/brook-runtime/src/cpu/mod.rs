//! The CPU device (`cpu:0`): kernels compiled to native code by `brook_codegen::cpu`
//! (Cranelift), run over all cores.
//!
//! A kernel is compiled once per program and [`Variant`] (the domain's rank and how each input
//! is bound) and cached for the life of the device. Buffers are host memory
//! (`buffer::CpuBuffer`); transfers are plain copies on the device queue.

mod bind;
mod buffer;
mod reduce;
mod run;
mod scan;

use crate::buffer::{Buffer, Span};
use crate::device::{Device, DeviceInfo, DeviceKind};
use crate::error::{LaunchProblem, RuntimeError};
use crate::kernel_cache::KernelCache;
use crate::plan::{block, LaunchPlan};
use crate::queue::Queue;
use crate::shared_memory::{ForeignMemory, MemorySpace};
use brook_codegen::abi::Variant;
use brook_codegen::cpu::{compile, CompiledKernel, Entry, Options};
use buffer::CpuBuffer;
use run::BlockPtr;
use std::sync::Arc;

/// The CPU device: every machine has one.
pub fn discover() -> Result<Vec<Arc<dyn Device>>, String> {
    Ok(vec![Arc::new(CpuDevice::new())])
}

pub struct CpuDevice {
    info: DeviceInfo,
    queue: Queue,
    cache: KernelCache<CompiledKernel>,
    options: Options,
}

impl CpuDevice {
    /// The CPU device, with the process's tuning ([`crate::kernel_cache::process_tuning`]).
    pub fn new() -> Self {
        CpuDevice::with_options(Options {
            tuning: crate::kernel_cache::process_tuning(),
        })
    }

    /// The CPU device compiling with `options` (a test of another SIMD width, say).
    pub fn with_options(options: Options) -> Self {
        let threads = run::worker_count();
        CpuDevice {
            info: DeviceInfo {
                kind: DeviceKind::Cpu,
                rank: None,
                ordinal: 0,
                description: format!("cpu:0 (native code, {threads} threads)"),
                target: Some(brook_codegen::CodeTarget::Cpu),
                flushes_float_subnormals: false,
            },
            queue: Queue::new("brook-cpu-0"),
            cache: KernelCache::new("cpu:0"),
            options,
        }
    }

    /// The address of a span's first byte.
    fn address(&self, span: Span<'_>) -> Result<*mut u8, RuntimeError> {
        let buffer = bind::cpu_buffer(span.buffer())
            .map_err(|e| RuntimeError::NoDevice(self.info.to_string(), e))?;
        Ok(buffer.at(span))
    }

    /// The compiled variant of a launch's kernel, compiling it on first use.
    pub fn compiled(
        &self,
        launch: &LaunchPlan,
        variant: &Variant,
    ) -> Result<Arc<CompiledKernel>, LaunchProblem> {
        self.cache
            .get_or_make(&launch.module, launch.kernel, variant, || {
                compile(&launch.module, launch.kernel, variant, &self.options)
                    .map_err(|e| LaunchProblem::compile(&launch.module, e))
            })
    }
}

impl Default for CpuDevice {
    fn default() -> Self {
        CpuDevice::new()
    }
}

impl Device for CpuDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn queue(&self) -> &Queue {
        &self.queue
    }

    fn allocate(&self, bytes: usize) -> Result<Arc<dyn Buffer>, RuntimeError> {
        Ok(Arc::new(CpuBuffer::new(&self.info.description, bytes)?))
    }

    fn memory_space(&self) -> Option<MemorySpace> {
        Some(MemorySpace::Host)
    }

    fn buffer_address(&self, buffer: &dyn Buffer) -> Option<u64> {
        let buffer = bind::cpu_buffer(buffer).ok()?;
        Some(buffer.ptr() as u64)
    }

    fn adopt(&self, memory: ForeignMemory) -> Result<Arc<dyn Buffer>, RuntimeError> {
        Ok(Arc::new(CpuBuffer::adopt(memory)))
    }

    fn upload(&self, to: Span<'_>, data: &[u8]) -> Result<(), RuntimeError> {
        let target = self.address(to)?;
        let data = &data[..to.len()];
        // SAFETY: the span lies in the buffer; queue work is serialised.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), target, data.len()) };
        Ok(())
    }

    fn download(&self, from: Span<'_>, out: &mut [u8]) -> Result<(), RuntimeError> {
        let source = self.address(from)?;
        let out = &mut out[..from.len()];
        // SAFETY: as for `upload`.
        unsafe { std::ptr::copy_nonoverlapping(source, out.as_mut_ptr(), out.len()) };
        Ok(())
    }

    fn copy(&self, from: Span<'_>, to: Span<'_>) -> Result<(), RuntimeError> {
        let (source, target) = (self.address(from)?, self.address(to)?);
        // SAFETY: both spans lie in their buffers; `copy` allows overlap.
        unsafe { std::ptr::copy(source, target, from.len().min(to.len())) };
        Ok(())
    }

    fn launch(&self, launch: &LaunchPlan) -> Result<(), LaunchProblem> {
        let variant = block::variant(launch);
        let compiled = self.compiled(launch, &variant)?;
        let block = block::param_block(launch, &compiled.layout, &bind::address_of)
            .map_err(LaunchProblem::Execution)?;
        let ptr = BlockPtr(block.as_ptr());
        let total: usize = launch.region.size.iter().product();
        // Launches too small to split run in one call anyway: only larger ones ask (the
        // question walks the kernel's body).
        let in_order = total > run::MIN_CHUNK
            && !run::parallel_scatter(launch.module.module(), launch.kernel());
        if run::runs_alone(&compiled.entry, total, in_order) {
            // On the queue's own thread (its stack is as large as a worker's): handing a
            // small launch to the pool and waiting for it costs more than running it.
            execute(&compiled.entry, launch, ptr, total, in_order)?;
        } else {
            run::on_workers(|| execute(&compiled.entry, launch, ptr, total, in_order))?;
        }
        drop(block);
        Ok(())
    }

    fn synchronize(&self) -> Result<(), RuntimeError> {
        self.queue.wait_all();
        Ok(())
    }
}

/// Runs a compiled kernel's instances (on the worker threads).
fn execute(
    entry: &Entry,
    launch: &LaunchPlan,
    ptr: BlockPtr,
    total: usize,
    in_order: bool,
) -> Result<(), LaunchProblem> {
    match *entry {
        Entry::Map(f) => run::run_map(f, ptr, total, in_order),
        Entry::Group {
            run,
            shared_size,
            group_size,
        } => run::Groups {
            run,
            shared_size,
            group_size,
        }
        .run(ptr, total, in_order),
        Entry::Reduce {
            range,
            combine,
            scan,
            value_size,
        } => {
            let reduction = reduce::Reduction {
                range,
                combine,
                scan,
                value_size,
            };
            match &launch.scan {
                Some(scan) => reduction.scan(launch, ptr, scan),
                None => reduction.run(launch, ptr),
            }
            .map_err(LaunchProblem::Execution)?
        }
    }
    Ok(())
}
