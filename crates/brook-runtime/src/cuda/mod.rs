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

use crate::device::{Buffer, Device, DeviceInfo, DeviceKind, Strided};
use crate::error::{range_error, LaunchProblem, RuntimeError};
use crate::kernel_cache::KernelCache;
use crate::launch::{block, Launch};
use crate::queue::Queue;
use brook_codegen::abi::Variant;
use brook_codegen::ptx::{compile, EntryKind, PtxKernel, Target};
use buffer::CudaBuffer;
use cudarc::driver::sys;
use driver::{check, Function, Handles, Properties};
use std::ffi::c_void;
use std::sync::Arc;
use std::time::Duration;

/// A kernel loaded on the GPU.
pub struct Loaded {
    pub ptx: PtxKernel,
    /// The module's entries, in the order of [`PtxKernel::entry_names`].
    functions: Vec<Function>,
}

pub struct CudaDevice {
    info: DeviceInfo,
    queue: Queue,
    handles: Handles,
    properties: Properties,
    cache: KernelCache<Loaded>,
}

/// The CUDA devices of this machine, or why there are none.
pub fn discover() -> Result<Vec<CudaDevice>, String> {
    if !driver::driver_library_present() {
        return Err("the CUDA driver library (libcuda) is not installed".into());
    }
    let count = driver::device_count()?;
    if count == 0 {
        return Err("the CUDA driver reports no GPU".into());
    }
    (0..count).map(CudaDevice::open).collect()
}

impl CudaDevice {
    fn open(ordinal: usize) -> Result<CudaDevice, String> {
        let (handles, properties) = driver::open(ordinal)?;
        Ok(CudaDevice {
            info: DeviceInfo {
                kind: DeviceKind::Cuda,
                ordinal,
                description: format!("cuda:{ordinal} ({}, sm_{})", properties.name, properties.sm),
            },
            queue: Queue::new(format!("brook-cuda-{ordinal}")),
            handles,
            properties,
            cache: KernelCache::default(),
        })
    }

    pub fn target(&self) -> Target {
        Target {
            sm: self.properties.sm,
        }
    }

    fn buffer<'b>(&self, buffer: &'b dyn Buffer) -> Result<&'b CudaBuffer, RuntimeError> {
        buffer::cuda_buffer(buffer).map_err(|e| RuntimeError::NoDevice(self.info.to_string(), e))
    }

    fn fail(&self, e: String) -> RuntimeError {
        RuntimeError::NoDevice(self.info.to_string(), e)
    }

    /// The loaded variant of a launch's kernel, written and loaded on first use.
    pub fn loaded(&self, launch: &Launch, variant: &Variant) -> Result<Arc<Loaded>, LaunchProblem> {
        self.cache
            .get_or_make(&launch.module, launch.kernel, variant, || {
                self.load(launch, variant)
            })
    }

    /// Writes a launch's kernel as PTX and loads it.
    fn load(&self, launch: &Launch, variant: &Variant) -> Result<Loaded, LaunchProblem> {
        let ptx = compile(&launch.module, launch.kernel, variant, self.target())
            .map_err(|e| LaunchProblem::NotSupported(e.to_string()))?;
        self.check_shared_memory(launch, &ptx)?;
        if std::env::var("BROOK_DUMP_PTX").is_ok_and(|v| v == "1") {
            eprintln!("{}", ptx.text);
        }
        let functions = disk_cache::load(&ptx.text, self.target().sm, &ptx.entry_names())
            .map_err(LaunchProblem::Execution)?;
        Ok(Loaded { ptx, functions })
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

    fn upload(&self, buffer: &dyn Buffer, offset: usize, bytes: &[u8]) -> Result<(), RuntimeError> {
        self.handles.bind().map_err(|e| self.fail(e))?;
        let buffer = self.buffer(buffer)?;
        let target = buffer
            .range(offset, bytes.len())
            .ok_or_else(|| range_error("Stream Read", offset, bytes.len(), buffer.len()))?;
        // SAFETY: the range is inside the buffer; from pageable memory the call returns once
        // the bytes are staged, so `bytes` may go away afterwards.
        let code = unsafe {
            sys::cuMemcpyHtoDAsync_v2(
                target,
                bytes.as_ptr().cast(),
                bytes.len(),
                self.handles.stream,
            )
        };
        check(code, "copying to the GPU").map_err(|e| self.fail(e))
    }

    fn download(
        &self,
        buffer: &dyn Buffer,
        offset: usize,
        out: &mut [u8],
    ) -> Result<(), RuntimeError> {
        self.handles.bind().map_err(|e| self.fail(e))?;
        let buffer = self.buffer(buffer)?;
        let source = buffer
            .range(offset, out.len())
            .ok_or_else(|| range_error("Stream Write", offset, out.len(), buffer.len()))?;
        // SAFETY: the range is inside the buffer; the stream is synchronised before `out` is
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

    fn upload_strided(
        &self,
        buffer: &dyn Buffer,
        rows: Strided,
        data: &[u8],
    ) -> Result<(), RuntimeError> {
        let target = self.strided_range(buffer, rows, "Stream Read")?;
        let copy = memcpy_2d(
            rows,
            Side::Host(data.as_ptr() as usize),
            Side::Device(target),
        );
        self.copy_2d(&copy, "copying rows to the GPU")
    }

    fn download_strided(
        &self,
        buffer: &dyn Buffer,
        rows: Strided,
        out: &mut [u8],
    ) -> Result<(), RuntimeError> {
        let source = self.strided_range(buffer, rows, "Stream Write")?;
        let copy = memcpy_2d(
            rows,
            Side::Device(source),
            Side::Host(out.as_mut_ptr() as usize),
        );
        self.copy_2d(&copy, "copying rows from the GPU")?;
        self.handles.synchronize().map_err(|e| self.fail(e))
    }

    fn peer_copies(&self) -> bool {
        true
    }

    fn copy_from_peer(
        &self,
        from: &dyn Buffer,
        to: &dyn Buffer,
        bytes: usize,
    ) -> Option<Result<(), RuntimeError>> {
        let (Ok(from), Ok(to)) = (buffer::cuda_buffer(from), buffer::cuda_buffer(to)) else {
            return None;
        };
        Some(self.peer_copy(from, to, bytes))
    }

    fn upload_in_place(
        &self,
        buffer: &dyn Buffer,
        offset: usize,
        bytes: &[u8],
    ) -> Result<(), RuntimeError> {
        let pinned = self.pinned(bytes.as_ptr() as *mut u8, bytes.len());
        self.upload(buffer, offset, bytes)?;
        if pinned.is_some() {
            // The copy reads the pinned memory asynchronously: done before it is unpinned.
            self.handles.synchronize().map_err(|e| self.fail(e))?;
        }
        Ok(())
    }

    fn download_in_place(
        &self,
        buffer: &dyn Buffer,
        offset: usize,
        out: &mut [u8],
    ) -> Result<(), RuntimeError> {
        let _pinned = self.pinned(out.as_mut_ptr(), out.len());
        self.download(buffer, offset, out)
    }

    fn copy(
        &self,
        from: &dyn Buffer,
        from_offset: usize,
        to: &dyn Buffer,
        to_offset: usize,
        bytes: usize,
    ) -> Result<(), RuntimeError> {
        self.handles.bind().map_err(|e| self.fail(e))?;
        let (from, to) = (self.buffer(from)?, self.buffer(to)?);
        let out_of_range = || range_error("Stream Copy", to_offset, bytes, to.len());
        let source = from.range(from_offset, bytes).ok_or_else(out_of_range)?;
        let target = to.range(to_offset, bytes).ok_or_else(out_of_range)?;
        if bytes == 0 {
            return Ok(());
        }
        // SAFETY: both ranges lie in their buffers (overlap within one buffer is allowed by
        // the driver for device-to-device copies on one stream).
        let code = unsafe { sys::cuMemcpyDtoDAsync_v2(target, source, bytes, self.handles.stream) };
        check(code, "copying on the GPU").map_err(|e| self.fail(e))
    }

    fn launch(&self, launch: &Launch) -> Result<(), LaunchProblem> {
        self.handles.bind().map_err(LaunchProblem::Execution)?;
        let variant = block::variant(launch);
        let loaded = self.loaded(launch, &variant)?;
        let params = block::param_block(launch, &loaded.ptx.layout, &buffer::address_of)
            .map_err(LaunchProblem::Execution)?;
        let total: usize = launch.region.size.iter().product();
        let f = &loaded.functions[0];
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
            EntryKind::Reduce { value_size, .. } => run::run_reduction(
                &run::ReduceEntries::new(&loaded.ptx, &loaded.functions),
                &self.handles,
                &self.properties,
                launch,
                params.as_ptr(),
                value_size,
            ),
        }
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

    /// The device address of the first of `rows`, when all of them lie in `buffer`.
    fn strided_range(
        &self,
        buffer: &dyn Buffer,
        rows: Strided,
        operation: &'static str,
    ) -> Result<sys::CUdeviceptr, RuntimeError> {
        let buffer = self.buffer(buffer)?;
        let span = (rows.rows.saturating_sub(1)) * rows.pitch + rows.row_bytes;
        buffer
            .range(rows.first, span)
            .ok_or_else(|| range_error(operation, rows.first, span, buffer.len()))
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
        from: &CudaBuffer,
        to: &CudaBuffer,
        bytes: usize,
    ) -> Result<(), RuntimeError> {
        let out_of_range = || range_error("Stream Assign", 0, bytes, to.len());
        let source = from.range(0, bytes).ok_or_else(out_of_range)?;
        let target = to.range(0, bytes).ok_or_else(out_of_range)?;
        self.handles.bind().map_err(|e| self.fail(e))?;
        // SAFETY: both ranges lie in their buffers; each context owns its buffer; the copy is
        // waited for before the buffers can go away.
        let code = unsafe {
            sys::cuMemcpyPeerAsync(
                target,
                to.handles().context,
                source,
                from.handles().context,
                bytes,
                self.handles.stream,
            )
        };
        check(code, "copying between GPUs").map_err(|e| self.fail(e))?;
        self.handles.synchronize().map_err(|e| self.fail(e))
    }

    /// A thread-group kernel's shared memory must fit the device's limit per group.
    fn check_shared_memory(&self, launch: &Launch, ptx: &PtxKernel) -> Result<(), LaunchProblem> {
        let EntryKind::Group { shared_bytes, .. } = ptx.entry else {
            return Ok(());
        };
        let limit = self.properties.max_shared_per_block;
        if shared_bytes <= limit {
            return Ok(());
        }
        Err(LaunchProblem::NotSupported(format!(
            "kernel `{}` needs {shared_bytes} bytes of shared memory per thread group; {} allows at most {limit} bytes per group",
            launch.kernel().name,
            self.properties.name
        )))
    }

    /// Records an event on the stream before and after the jobs `work` queues.
    fn time_with_events(&self, work: &mut dyn FnMut()) -> Result<Duration, RuntimeError> {
        self.handles.bind().map_err(|e| self.fail(e))?;
        let events = Arc::new(driver::EventPair::new().map_err(|e| self.fail(e))?);
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
        let ms = events.elapsed_ms().map_err(|e| self.fail(e))?;
        Ok(Duration::from_secs_f64(f64::from(ms) / 1e3))
    }
}
