//! The CUDA devices (`cuda:N`): kernels written as PTX by `brook_codegen::ptx`, compiled by
//! the driver, and run on one in-order CUDA stream per GPU.
//!
//! The driver library is opened at run time; a machine without it, or without a GPU, simply
//! has no CUDA devices ([`discover`] says why). Every device method runs on the device's
//! queue worker (which makes the GPU's context current first), except `allocate`, which may
//! run on any thread. Work on the GPU is asynchronous: a download waits for the stream, and
//! [`Device::settle`] (used by `finish`) waits for everything queued.

mod buffer;
pub mod disk_cache;
mod driver;
mod run;
mod scan;
mod watch;

use crate::buffer::{Buffer, Rows, Span, Strided};
use crate::device::{Device, DeviceInfo, DeviceKind, Marker, Ready};
use crate::error::{DeviceLimit, LaunchProblem, Limit, RuntimeError};
use crate::kernel_cache::KernelCache;
use crate::plan::{block, LaunchPlan};
use crate::queue::Queue;
use crate::shared_memory::{ForeignMemory, MemorySpace};
use brook_codegen::abi::{ParamBlock, Variant};
use brook_codegen::ptx::{compile, EntryKind, PtxKernel, Target};
use buffer::CudaBuffer;
use cudarc::driver::sys;
use driver::{check, Handles, LoadedModule, Properties};
use std::ffi::c_void;
use std::sync::Arc;
use std::time::Duration;

/// A kernel loaded on the GPU; its module is unloaded when the kernel cache drops it (its
/// program was dropped).
pub struct Loaded {
    pub ptx: PtxKernel,
    /// The module, its entries in the order of [`PtxKernel::entry_names`].
    module: LoadedModule,
}

pub struct CudaDevice {
    info: DeviceInfo,
    queue: Queue,
    handles: Handles,
    properties: Properties,
    cache: KernelCache<Loaded>,
    /// The code generation choices of its kernels (the process's, unless [`device_with`]).
    tuning: brook_codegen::Tuning,
}

/// The CUDA devices of this machine, or why there are none.
pub fn discover() -> Result<Vec<Arc<dyn Device>>, String> {
    if !driver::driver_library_present() {
        return Err("the CUDA driver library (libcuda) is not installed".into());
    }
    let count = driver::device_count()?;
    if count == 0 {
        return Err("the CUDA driver reports no GPU".into());
    }
    let gpus = (0..count)
        .map(|ordinal| CudaDevice::open(ordinal, crate::kernel_cache::process_tuning()))
        .collect::<Result<Vec<_>, _>>()?;
    if gpus.len() > 1 {
        let handles: Vec<_> = gpus.iter().map(|g| (g.info.ordinal, g.handles)).collect();
        driver::enable_peer_access(&handles);
    }
    Ok(gpus
        .into_iter()
        .map(|d| Arc::new(d) as Arc<dyn Device>)
        .collect())
}

/// `cuda:{ordinal}` opened anew with the process's tuning changed by `edit` (its kernels are
/// its own: a test compares code generation choices on one GPU).
pub fn device_with(
    ordinal: usize,
    edit: impl FnOnce(&mut brook_codegen::Tuning),
) -> Result<Arc<dyn Device>, String> {
    if !driver::driver_library_present() {
        return Err("the CUDA driver library (libcuda) is not installed".into());
    }
    let mut tuning = crate::kernel_cache::process_tuning();
    edit(&mut tuning);
    Ok(Arc::new(CudaDevice::open(ordinal, tuning)?))
}

impl CudaDevice {
    fn open(ordinal: usize, tuning: brook_codegen::Tuning) -> Result<CudaDevice, String> {
        let (handles, properties) = driver::open(ordinal)?;
        Ok(CudaDevice {
            info: DeviceInfo {
                kind: DeviceKind::Cuda,
                rank: None,
                ordinal,
                description: format!("cuda:{ordinal} ({}, sm_{})", properties.name, properties.sm),
                target: Some(brook_codegen::CodeTarget::Ptx(Target {
                    sm: properties.sm,
                    tuning,
                })),
                flushes_float_subnormals: false,
            },
            queue: Queue::new(format!("brook-cuda-{ordinal}")),
            handles,
            properties,
            cache: KernelCache::new(format!("cuda:{ordinal}")),
            tuning,
        })
    }

    pub fn target(&self) -> Target {
        Target {
            sm: self.properties.sm,
            tuning: self.tuning,
        }
    }

    fn buffer<'b>(&self, buffer: &'b dyn Buffer) -> Result<&'b CudaBuffer, RuntimeError> {
        buffer::cuda_buffer(buffer).map_err(|e| RuntimeError::NoDevice(self.info.to_string(), e))
    }

    /// The device address of a span's first byte.
    fn address(&self, span: Span<'_>) -> Result<sys::CUdeviceptr, RuntimeError> {
        Ok(self.buffer(span.buffer())?.at(span))
    }

    fn fail(&self, e: String) -> RuntimeError {
        RuntimeError::NoDevice(self.info.to_string(), e)
    }

    /// The loaded variant of a launch's kernel, written and loaded on first use.
    pub fn loaded(
        &self,
        launch: &LaunchPlan,
        variant: &Variant,
    ) -> Result<Arc<Loaded>, LaunchProblem> {
        self.cache
            .get_or_make(&launch.module, launch.kernel, variant, || {
                self.load(launch, variant)
            })
    }

    /// Writes a launch's kernel as PTX and loads it.
    fn load(&self, launch: &LaunchPlan, variant: &Variant) -> Result<Loaded, LaunchProblem> {
        let ptx = compile(&launch.module, launch.kernel, variant, &self.target())
            .map_err(|e| LaunchProblem::compile(&launch.module, e))?;
        self.check_shared_memory(&ptx)?;
        if std::env::var("BROOK_DUMP_PTX").is_ok_and(|v| v == "1") {
            eprintln!("{}", ptx.text);
        }
        let names = ptx.entry_names();
        let compiling = || {
            let kernel = &launch.module.kernels[launch.kernel];
            format!(
                "the driver's compile of kernel `{}` for the GPU",
                kernel.name
            )
        };
        let module = crate::slow_call::reporting(&compiling, || {
            disk_cache::load(&ptx.text, self.target().sm, &names, self.handles)
        })
        .map_err(LaunchProblem::Execution)?;
        Ok(Loaded { ptx, module })
    }
}

impl Device for CudaDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn queue(&self) -> &Queue {
        &self.queue
    }

    fn allocate(&self, bytes: usize) -> Result<Arc<dyn Buffer>, RuntimeError> {
        let buffer =
            CudaBuffer::new(self.handles, bytes).map_err(|reason| RuntimeError::Allocation {
                device: self.info.to_string(),
                bytes,
                reason,
            })?;
        Ok(Arc::new(buffer))
    }

    fn memory_space(&self) -> Option<MemorySpace> {
        Some(MemorySpace::Cuda {
            ordinal: self.info.ordinal,
            stream: self.handles.stream as u64,
        })
    }

    fn buffer_address(&self, buffer: &dyn Buffer) -> Option<u64> {
        Some(buffer::cuda_buffer(buffer).ok()?.ptr())
    }

    fn adopt(&self, memory: ForeignMemory) -> Result<Arc<dyn Buffer>, RuntimeError> {
        Ok(Arc::new(CudaBuffer::adopt(self.handles, memory)))
    }

    fn upload(&self, to: Span<'_>, data: &[u8]) -> Result<(), RuntimeError> {
        self.handles.bind().map_err(|e| self.fail(e))?;
        let target = self.address(to)?;
        let data = &data[..to.len()];
        // SAFETY: the span lies in the buffer; from pageable memory the call returns once the
        // bytes are staged, so `data` may go away afterwards.
        let code = unsafe {
            sys::cuMemcpyHtoDAsync_v2(
                target,
                data.as_ptr().cast(),
                data.len(),
                self.handles.stream,
            )
        };
        check(code, "copying to the GPU").map_err(|e| self.fail(e))
    }

    fn download(&self, from: Span<'_>, out: &mut [u8]) -> Result<(), RuntimeError> {
        // The work before the copy is waited for first, by the patient wait: a copy into
        // pageable memory blocks inside the driver until the stream reaches it, which no
        // timeout could end.
        self.handles.synchronize().map_err(|e| self.fail(e))?;
        let source = self.address(from)?;
        let out = &mut out[..from.len()];
        // SAFETY: the span lies in the buffer; the stream is synchronised before `out` is
        // used.
        let code = unsafe {
            sys::cuMemcpyDtoHAsync_v2(
                out.as_mut_ptr().cast(),
                source,
                out.len(),
                self.handles.stream,
            )
        };
        check(code, "copying from the GPU").map_err(|e| self.fail(e))?;
        self.handles.synchronize().map_err(|e| self.fail(e))
    }

    fn upload_strided(&self, to: Rows<'_>, data: &[u8]) -> Result<(), RuntimeError> {
        let target = self.address(to.span())?;
        let data = &data[..to.layout().packed_len()];
        let copy = memcpy_2d(
            to.layout(),
            Side::Host(data.as_ptr() as usize),
            Side::Device(target),
        );
        self.copy_2d(&copy, "copying rows to the GPU")
    }

    fn download_strided(&self, from: Rows<'_>, out: &mut [u8]) -> Result<(), RuntimeError> {
        // Waited for first, as in `download`.
        self.handles.synchronize().map_err(|e| self.fail(e))?;
        let source = self.address(from.span())?;
        let out = &mut out[..from.layout().packed_len()];
        let copy = memcpy_2d(
            from.layout(),
            Side::Device(source),
            Side::Host(out.as_mut_ptr() as usize),
        );
        self.copy_2d(&copy, "copying rows from the GPU")?;
        self.handles.synchronize().map_err(|e| self.fail(e))
    }

    fn peer_copies(&self) -> bool {
        true
    }

    fn beside(&self) -> Option<Arc<dyn Device>> {
        let handles = self.handles.another_stream().ok()?;
        let ordinal = self.info.ordinal;
        Some(Arc::new(CudaDevice {
            info: DeviceInfo {
                description: format!("{} (second stream)", self.info.description),
                ..self.info.clone()
            },
            queue: Queue::new(format!("brook-cuda-{ordinal}-beside")),
            handles,
            properties: self.properties.clone(),
            cache: KernelCache::new(format!("cuda:{ordinal}")),
            tuning: self.tuning,
        }))
    }

    fn mark(&self) -> Result<Option<Marker>, RuntimeError> {
        let event = driver::Event::after(&self.handles).map_err(|e| self.fail(e))?;
        Ok(Some(Marker(Arc::new(event))))
    }

    fn wait_for_mark(&self, mark: &Marker) -> Result<(), RuntimeError> {
        match mark.0.downcast_ref::<driver::Event>() {
            Some(event) => self.handles.wait_for_event(event).map_err(|e| self.fail(e)),
            None => Ok(()),
        }
    }

    fn copy_from_peer(&self, from: Span<'_>, to: Span<'_>) -> Option<Result<(), RuntimeError>> {
        let (Ok(source), Ok(target)) = (
            buffer::cuda_buffer(from.buffer()),
            buffer::cuda_buffer(to.buffer()),
        ) else {
            return None;
        };
        Some(self.peer_copy((source, from), (target, to)))
    }

    fn upload_in_place(&self, to: Span<'_>, data: &[u8]) -> Result<(), RuntimeError> {
        let pinned = self.pinned(data.as_ptr() as *mut u8, data.len());
        self.upload(to, data)?;
        if pinned.is_some() {
            // The copy reads the pinned memory asynchronously: done before it is unpinned.
            self.handles.synchronize().map_err(|e| self.fail(e))?;
        }
        Ok(())
    }

    fn download_in_place(&self, from: Span<'_>, out: &mut [u8]) -> Result<(), RuntimeError> {
        let _pinned = self.pinned(out.as_mut_ptr(), out.len());
        self.download(from, out)
    }

    fn copy(&self, from: Span<'_>, to: Span<'_>) -> Result<(), RuntimeError> {
        self.handles.bind().map_err(|e| self.fail(e))?;
        let (source, target) = (self.address(from)?, self.address(to)?);
        let bytes = from.len().min(to.len());
        if bytes == 0 {
            return Ok(());
        }
        // SAFETY: both spans lie in their buffers (overlap within one buffer is allowed by the
        // driver for device-to-device copies on one stream).
        let code = unsafe { sys::cuMemcpyDtoDAsync_v2(target, source, bytes, self.handles.stream) };
        check(code, "copying on the GPU").map_err(|e| self.fail(e))
    }

    fn launch(&self, launch: &LaunchPlan) -> Result<(), LaunchProblem> {
        self.handles.bind().map_err(LaunchProblem::Execution)?;
        let variant = block::variant(launch);
        let loaded = self.loaded(launch, &variant)?;
        let params = block::param_block(launch, &loaded.ptx.layout, &buffer::address_of)
            .map_err(LaunchProblem::Execution)?;
        self.start(launch, &loaded, &params)
    }

    fn prepare(&self, plan: &LaunchPlan) -> Option<Ready> {
        block::ready(
            plan,
            &self.cache,
            |loaded: &Loaded| &loaded.ptx.layout,
            &buffer::address_of,
        )
    }

    fn launch_ready(&self, plan: &LaunchPlan, ready: Ready) -> Result<(), LaunchProblem> {
        let Ok(loaded) = ready.kernel.downcast::<Loaded>() else {
            return self.launch(plan);
        };
        self.handles.bind().map_err(LaunchProblem::Execution)?;
        self.start(plan, &loaded, &ready.block)
    }

    fn launch_timed(&self, plan: &LaunchPlan) -> Result<Option<Duration>, LaunchProblem> {
        let events = driver::EventPair::new(&self.handles).map_err(LaunchProblem::Execution)?;
        events
            .record(self.handles.stream, false)
            .map_err(LaunchProblem::Execution)?;
        self.launch(plan)?;
        events
            .record(self.handles.stream, true)
            .map_err(LaunchProblem::Execution)?;
        let ms = events
            .elapsed_ms(&self.handles)
            .map_err(LaunchProblem::Execution)?;
        Ok(Some(Duration::from_secs_f64(f64::from(ms) / 1e3)))
    }

    fn synchronize(&self) -> Result<(), RuntimeError> {
        self.queue.wait_all();
        self.handles.synchronize().map_err(|e| self.fail(e))
    }

    fn settle(&self) -> Result<(), RuntimeError> {
        self.handles.synchronize().map_err(|e| self.fail(e))
    }

    fn idle(&self) -> bool {
        self.handles.idle()
    }

    fn gpu_time(&self, work: &mut dyn FnMut()) -> Option<Result<Duration, RuntimeError>> {
        Some(self.time_with_events(work))
    }
}

/// One end of a 2-D copy: host memory (rows packed) or device memory (rows `pitch` apart).
#[derive(Clone, Copy)]
enum Side {
    Host(usize),
    Device(sys::CUdeviceptr),
}

/// The driver's description of a copy of `rows` between `from` and `to`.
fn memcpy_2d(rows: Strided, from: Side, to: Side) -> sys::CUDA_MEMCPY2D {
    use sys::CUmemorytype::{CU_MEMORYTYPE_DEVICE as DEVICE, CU_MEMORYTYPE_HOST as HOST};
    let end = |side: Side, host_pitch: usize| match side {
        Side::Host(ptr) => (HOST, ptr, 0, host_pitch),
        Side::Device(ptr) => (DEVICE, 0, ptr, rows.pitch),
    };
    let (src_type, src_host, src_device, src_pitch) = end(from, rows.row_bytes);
    let (dst_type, dst_host, dst_device, dst_pitch) = end(to, rows.row_bytes);
    sys::CUDA_MEMCPY2D {
        srcXInBytes: 0,
        srcY: 0,
        srcMemoryType: src_type,
        srcHost: src_host as *const c_void,
        srcDevice: src_device,
        srcArray: std::ptr::null_mut(),
        srcPitch: src_pitch,
        dstXInBytes: 0,
        dstY: 0,
        dstMemoryType: dst_type,
        dstHost: dst_host as *mut c_void,
        dstDevice: dst_device,
        dstArray: std::ptr::null_mut(),
        dstPitch: dst_pitch,
        WidthInBytes: rows.row_bytes,
        Height: rows.rows,
    }
}

/// Host memory registered with the driver (page-locked) for as long as this lives.
struct Pinned(usize);

impl Drop for Pinned {
    fn drop(&mut self) {
        // SAFETY: registered by `CudaDevice::pinned`; no copy uses it any more.
        unsafe { sys::cuMemHostUnregister(self.0 as *mut c_void) };
    }
}

impl CudaDevice {
    /// Starts a launch's loaded kernel with its parameter block on the stream.
    fn start(
        &self,
        launch: &LaunchPlan,
        loaded: &Loaded,
        params: &ParamBlock,
    ) -> Result<(), LaunchProblem> {
        watch::queued(&self.handles, launch);
        let total: usize = launch.region.size.iter().product();
        let f = &loaded.module.functions[0];
        match loaded.ptx.entry {
            EntryKind::Map { per_thread } => {
                run::run_map(f, &self.handles, params.as_ptr(), total, per_thread)
            }
            EntryKind::Group { group_size, .. } => run::run_groups(
                f,
                &self.handles,
                &self.properties,
                params.as_ptr(),
                total,
                group_size,
            ),
            EntryKind::Reduce { value_size, .. } => {
                let entries = run::ReduceEntries::new(&loaded.ptx, &loaded.module.functions);
                let passes = run::CudaPasses {
                    entries: &entries,
                    handles: &self.handles,
                    properties: &self.properties,
                    block: params.as_ptr(),
                    tuning: &self.tuning,
                };
                match &launch.scan {
                    Some(plan) => scan::run_scan(&passes, launch, value_size, plan),
                    None => crate::passes::reduce::run(&passes, launch, value_size),
                }
            }
        }
    }

    /// Pins `len` bytes at `ptr` so copies use them directly; `None` (copies stage through the
    /// driver as usual) where the driver declines, e.g. memory already registered.
    fn pinned(&self, ptr: *mut u8, len: usize) -> Option<Pinned> {
        if len == 0 || self.handles.bind().is_err() {
            return None;
        }
        // SAFETY: the caller's memory is valid for `len` bytes for the duration of the copy.
        let code = unsafe { sys::cuMemHostRegister_v2(ptr.cast(), len, 0) };
        (code == sys::CUresult::CUDA_SUCCESS).then_some(Pinned(ptr as usize))
    }

    /// Queues a 2-D copy on the stream.
    fn copy_2d(&self, copy: &sys::CUDA_MEMCPY2D, what: &str) -> Result<(), RuntimeError> {
        self.handles.bind().map_err(|e| self.fail(e))?;
        // SAFETY: both ends were checked to lie in their memory; a host source is staged by
        // the driver before the call returns (pageable memory), a host target is waited for.
        let code = unsafe { sys::cuMemcpy2DAsync_v2(copy, self.handles.stream) };
        check(code, what).map_err(|e| self.fail(e))
    }

    /// `bytes` from another GPU's buffer into one of this GPU's, on this GPU's stream.
    fn peer_copy(
        &self,
        (from, from_span): (&CudaBuffer, Span<'_>),
        (to, to_span): (&CudaBuffer, Span<'_>),
    ) -> Result<(), RuntimeError> {
        let (source, target) = (from.at(from_span), to.at(to_span));
        let bytes = from_span.len().min(to_span.len());
        let (giver, taker) = (from.handles(), self.handles);
        // Ordered on the GPUs, not on the host: the copy after the work queued on both (the
        // caller orders the giver's later work after it, `Device::copy_from_peer`).
        taker.wait_for(&giver).map_err(|e| self.fail(e))?;
        // SAFETY: both ranges lie in their buffers; each context owns its buffer; the caller
        // keeps the giver from overwriting or freeing the source before the copy is done.
        let code = unsafe {
            sys::cuMemcpyPeerAsync(
                target,
                to.handles().context,
                source,
                giver.context,
                bytes,
                taker.stream,
            )
        };
        check(code, "copying between GPUs").map_err(|e| self.fail(e))
    }

    /// A thread-group kernel's shared memory must fit the device's limit per group.
    fn check_shared_memory(&self, ptx: &PtxKernel) -> Result<(), LaunchProblem> {
        let EntryKind::Group { shared_bytes, .. } = ptx.entry else {
            return Ok(());
        };
        let limit = self.properties.max_shared_per_block;
        if shared_bytes <= limit {
            return Ok(());
        }
        Err(LaunchProblem::DeviceLimit(DeviceLimit {
            device: self.properties.name.clone(),
            what: Limit::SharedBytesPerGroup,
            requested: u64::from(shared_bytes),
            limit: u64::from(limit),
            why: None,
        }))
    }

    /// Records an event on the stream before and after the jobs `work` queues.
    fn time_with_events(&self, work: &mut dyn FnMut()) -> Result<Duration, RuntimeError> {
        let events = Arc::new(driver::EventPair::new(&self.handles).map_err(|e| self.fail(e))?);
        let record = |at_end: bool| {
            let (events, handles) = (events.clone(), self.handles);
            self.queue
                .run(move || {
                    handles.bind()?;
                    events.record(handles.stream, at_end)
                })
                .unwrap_or_else(|| Err("the device queue stopped".into()))
        };
        record(false).map_err(|e| self.fail(e))?;
        work();
        record(true).map_err(|e| self.fail(e))?;
        let ms = events.elapsed_ms(&self.handles).map_err(|e| self.fail(e))?;
        Ok(Duration::from_secs_f64(f64::from(ms) / 1e3))
    }
}
