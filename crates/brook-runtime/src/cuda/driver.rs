//! A thin layer over the CUDA driver API (`cudarc::driver::sys`, loaded at run time): calls
//! that return `Result<_, String>` with the driver's error name and text, and the few
//! handles the device keeps.
//!
//! Nothing here is called before [`driver_library_present`] has said the library exists,
//! because loading a missing library inside `cudarc` panics.

use cudarc::driver::sys::{self, CUresult};
use std::ffi::{c_void, CStr};

/// Whether the CUDA driver library can be loaded on this machine.
pub fn driver_library_present() -> bool {
    // SAFETY: only tries to open the library by its known names.
    unsafe { sys::is_culib_present() }
}

/// The driver's name and description of an error code.
pub fn describe(code: CUresult) -> String {
    let mut name: *const std::ffi::c_char = std::ptr::null();
    let mut text: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: the driver returns static strings (or leaves the pointers null).
    unsafe {
        sys::cuGetErrorName(code, &mut name);
        sys::cuGetErrorString(code, &mut text);
        let name = if name.is_null() {
            format!("{code:?}")
        } else {
            CStr::from_ptr(name).to_string_lossy().into_owned()
        };
        if text.is_null() {
            name
        } else {
            format!("{name}: {}", CStr::from_ptr(text).to_string_lossy())
        }
    }
}

/// `Ok` for `CUDA_SUCCESS`, else the error described, after `what`.
pub fn check(code: CUresult, what: &str) -> Result<(), String> {
    if code == CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(format!("{what}: {}", describe(code)))
    }
}

/// One GPU's primary context and the in-order stream the device uses.
#[derive(Clone, Copy, Debug)]
pub struct Handles {
    pub context: sys::CUcontext,
    pub stream: sys::CUstream,
}

// SAFETY: driver handles may be used from any thread once the context is made current there.
unsafe impl Send for Handles {}
// SAFETY: as above; the driver serialises use of a stream.
unsafe impl Sync for Handles {}

impl Handles {
    /// Makes the context current on the calling thread; an error once the GPU was marked
    /// unusable ([`super::watch::failure_of`]).
    pub fn bind(&self) -> Result<(), String> {
        if let Some(reason) = super::watch::failure_of(self) {
            return Err(reason);
        }
        // SAFETY: the context was retained at creation and lives as long as the process.
        check(
            unsafe { sys::cuCtxSetCurrent(self.context) },
            "cuCtxSetCurrent",
        )
    }

    /// Waits for the stream's work ([`super::watch::wait_stream`]: said on stderr once a
    /// minute, ended by `BRT_KERNEL_TIMEOUT`); a fault of earlier work is returned here.
    pub fn synchronize(&self) -> Result<(), String> {
        self.bind()?;
        super::watch::wait_stream(self)
    }

    /// The same context with a new stream of its own.
    pub fn another_stream(&self) -> Result<Handles, String> {
        self.bind()?;
        let mut stream = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the stream is made in the current context.
        // CU_STREAM_NON_BLOCKING: no implicit ordering with the legacy default stream.
        check(
            unsafe { sys::cuStreamCreate(&mut stream, 1) },
            "cuStreamCreate",
        )?;
        Ok(Handles {
            context: self.context,
            stream,
        })
    }

    /// Makes work queued on this stream from now on wait for the work queued so far on
    /// `earlier`'s stream (another GPU's, as a rule), without waiting on the host.
    pub fn wait_for(&self, earlier: &Handles) -> Result<(), String> {
        self.wait_for_event(&Event::after(earlier)?)
    }

    /// Makes work queued on this stream from now on wait for `event` (of any context).
    pub fn wait_for_event(&self, event: &Event) -> Result<(), String> {
        self.bind()?;
        // SAFETY: a recorded event; a stream may wait on another context's event.
        check(
            unsafe { sys::cuStreamWaitEvent(self.stream, event.event, 0) },
            "cuStreamWaitEvent",
        )
    }

    /// Whether the stream has no unfinished work.
    pub fn idle(&self) -> bool {
        // SAFETY: as above.
        self.bind().is_ok() && unsafe { sys::cuStreamQuery(self.stream) } == CUresult::CUDA_SUCCESS
    }
}

/// Initialises the driver and returns the number of GPUs.
pub fn device_count() -> Result<usize, String> {
    // SAFETY: plain driver calls with valid out-pointers.
    unsafe {
        check(sys::cuInit(0), "cuInit")?;
        let mut count = 0;
        check(sys::cuDeviceGetCount(&mut count), "cuDeviceGetCount")?;
        Ok(count.max(0) as usize)
    }
}

/// What the device reports about itself.
#[derive(Clone, Debug)]
pub struct Properties {
    pub name: String,
    /// Compute capability, `major * 10 + minor`.
    pub sm: u32,
    pub multiprocessors: u32,
    pub max_threads_per_block: u32,
    /// Shared memory a block may declare statically, in bytes.
    pub max_shared_per_block: u32,
}

fn attribute(device: sys::CUdevice, attr: sys::CUdevice_attribute) -> Result<u32, String> {
    let mut value = 0;
    // SAFETY: valid out-pointer and device handle.
    check(
        unsafe { sys::cuDeviceGetAttribute(&mut value, attr, device) },
        "cuDeviceGetAttribute",
    )?;
    Ok(value.max(0) as u32)
}

/// Opens GPU `ordinal`: its primary context and a new stream.
pub fn open(ordinal: usize) -> Result<(Handles, Properties), String> {
    use sys::CUdevice_attribute as A;
    let mut device = 0;
    // SAFETY: plain driver calls with valid out-pointers.
    unsafe {
        check(sys::cuDeviceGet(&mut device, ordinal as i32), "cuDeviceGet")?;
    }
    let mut name = [0 as std::ffi::c_char; 256];
    // SAFETY: the buffer holds 256 bytes.
    unsafe {
        check(
            sys::cuDeviceGetName(name.as_mut_ptr(), 256, device),
            "cuDeviceGetName",
        )?;
    }
    // SAFETY: the driver wrote a NUL-terminated string.
    let name = unsafe { CStr::from_ptr(name.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    let properties = Properties {
        name,
        sm: attribute(device, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)? * 10
            + attribute(device, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        multiprocessors: attribute(device, A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        max_threads_per_block: attribute(device, A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
        max_shared_per_block: attribute(
            device,
            A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
        )?,
    };
    let mut context = std::ptr::null_mut();
    let mut stream = std::ptr::null_mut();
    // SAFETY: valid out-pointers; the stream is created in the retained context.
    unsafe {
        check(
            sys::cuDevicePrimaryCtxRetain(&mut context, device),
            "cuDevicePrimaryCtxRetain",
        )?;
        check(sys::cuCtxSetCurrent(context), "cuCtxSetCurrent")?;
        // CU_STREAM_NON_BLOCKING: no implicit ordering with the legacy default stream.
        check(sys::cuStreamCreate(&mut stream, 1), "cuStreamCreate")?;
    }
    Ok((Handles { context, stream }, properties))
}

/// Lets every GPU reach the others' memory directly (over NVLink or PCIe) where the hardware
/// allows: each context may map the others' allocations, and each GPU's default memory pool
/// (where buffers come from) grants the others access. Without it, a copy between two GPUs
/// goes through host memory. Pairs that cannot are left as they are.
pub fn enable_peer_access(gpus: &[(usize, Handles)]) {
    for &(ordinal, handles) in gpus {
        let mut device = 0;
        let mut pool = std::ptr::null_mut();
        // SAFETY: plain driver calls with valid out-pointers.
        let found = unsafe {
            check(sys::cuDeviceGet(&mut device, ordinal as i32), "cuDeviceGet")
                .and_then(|()| check(sys::cuDeviceGetDefaultMemPool(&mut pool, device), "pool"))
        };
        if found.is_err() || handles.bind().is_err() {
            continue;
        }
        for &(peer_ordinal, peer) in gpus {
            let mut peer_device = 0;
            let mut can = 0;
            // SAFETY: as above.
            let ok = unsafe {
                check(
                    sys::cuDeviceGet(&mut peer_device, peer_ordinal as i32),
                    "cuDeviceGet",
                )
                .and_then(|()| {
                    check(
                        sys::cuDeviceCanAccessPeer(&mut can, peer_device, device),
                        "cuDeviceCanAccessPeer",
                    )
                })
            };
            if peer_ordinal == ordinal || ok.is_err() || can != 1 {
                continue;
            }
            let access = sys::CUmemAccessDesc {
                location: sys::CUmemLocation {
                    type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
                    id: peer_ordinal as i32,
                },
                flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
            };
            // SAFETY: the pool is this GPU's; `access` is one valid descriptor. The peer's
            // context maps this context's allocations (an error when already enabled).
            unsafe {
                let _ = sys::cuMemPoolSetAccess(pool, &access, 1);
                if peer.bind().is_ok() {
                    let _ = sys::cuCtxEnablePeerAccess(handles.context, 0);
                }
            }
            let _ = handles.bind();
        }
    }
}

/// A module loaded in a GPU's context, with the entry functions asked for; unloaded when
/// dropped (after the GPU's stream has finished the work that may still run its functions).
pub struct LoadedModule {
    module: sys::CUmodule,
    handles: Handles,
    /// The entries, in the order they were asked for.
    pub functions: Vec<Function>,
}

// SAFETY: a module handle is a plain driver handle usable from any thread with its context.
unsafe impl Send for LoadedModule {}
// SAFETY: as above; nothing mutates the module after loading.
unsafe impl Sync for LoadedModule {}

impl Drop for LoadedModule {
    fn drop(&mut self) {
        // A kernel of the module may still be queued: wait for the stream, then unload. On a
        // failure the module stays loaded (a leak of GPU memory, nothing worse), and it is
        // said on the runtime's log.
        let unloaded = self.handles.synchronize().and_then(|()| {
            // SAFETY: the module was loaded in this context and nothing uses it any more.
            check(
                unsafe { sys::cuModuleUnload(self.module) },
                "cuModuleUnload",
            )
        });
        if let Err(e) = unloaded {
            crate::log::append(&format!(
                "warning: a dropped program's GPU module stays loaded: {e}"
            ));
        }
    }
}

/// The entry function of a loaded module; valid while its [`LoadedModule`] lives.
#[derive(Debug)]
pub struct Function {
    pub function: sys::CUfunction,
    /// Registers per thread and the most threads per block this function can run with.
    pub registers: u32,
    pub max_threads: u32,
    /// The most dynamic shared memory a block of it may ask for, as last allowed
    /// ([`launch_with_shared`]; 0: the default 48 KiB).
    dynamic_shared_allowed: std::sync::atomic::AtomicU32,
}

// SAFETY: function handles are plain driver handles usable from any thread.
unsafe impl Send for Function {}
// SAFETY: as above.
unsafe impl Sync for Function {}

/// `BROOK_JIT_LEVEL`, when it is a level the JIT takes (0 to 4).
pub fn jit_level() -> Option<u32> {
    std::env::var("BROOK_JIT_LEVEL")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .filter(|level| *level <= 4)
}

/// JIT-compiles PTX text to a GPU binary (cubin) for the current context's device; a compile
/// failure returns the JIT's log.
pub fn compile_ptx(ptx: &str) -> Result<Vec<u8>, String> {
    let text = std::ffi::CString::new(ptx).map_err(|_| "PTX text with a NUL byte".to_string())?;
    let mut log = vec![0u8; 16384];
    let mut options = vec![
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    let mut values = vec![log.as_mut_ptr().cast::<c_void>(), log.len() as *mut c_void];
    // `BROOK_JIT_LEVEL=0..4`: the JIT's optimisation level, to tell a JIT bug from a Brook one
    // (the disk cache keys on it too).
    if let Some(level) = jit_level() {
        options.push(sys::CUjit_option::CU_JIT_OPTIMIZATION_LEVEL);
        values.push(level as usize as *mut c_void);
    }
    let mut state = std::ptr::null_mut();
    let failed = |code, log: &[u8]| {
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        let log = String::from_utf8_lossy(&log[..end]).trim().to_string();
        format!(
            "the driver could not compile the kernel's PTX ({}): {log}",
            describe(code)
        )
    };
    // SAFETY: the options point at a live log buffer of the size given; the text is NUL-ended
    // and outlives the link; the image is copied before the link state is destroyed.
    unsafe {
        let code = sys::cuLinkCreate_v2(
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
            &mut state,
        );
        check(code, "cuLinkCreate")?;
        let code = sys::cuLinkAddData_v2(
            state,
            sys::CUjitInputType::CU_JIT_INPUT_PTX,
            text.as_ptr() as *mut c_void,
            text.as_bytes_with_nul().len(),
            c"brook.ptx".as_ptr(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
        if code != CUresult::CUDA_SUCCESS {
            sys::cuLinkDestroy(state);
            return Err(failed(code, &log));
        }
        let (mut image, mut size) = (std::ptr::null_mut(), 0usize);
        let code = sys::cuLinkComplete(state, &mut image, &mut size);
        if code != CUresult::CUDA_SUCCESS {
            sys::cuLinkDestroy(state);
            return Err(failed(code, &log));
        }
        let bytes = std::slice::from_raw_parts(image.cast::<u8>(), size).to_vec();
        sys::cuLinkDestroy(state);
        Ok(bytes)
    }
}

/// Loads a GPU binary made by [`compile_ptx`] into the context of `handles` (current on this
/// thread) and finds its `entries`.
pub fn load_image(
    image: &[u8],
    entries: &[&str],
    handles: Handles,
) -> Result<LoadedModule, String> {
    let mut module = std::ptr::null_mut();
    // SAFETY: the image is a whole cubin in memory; the driver copies what it needs.
    check(
        unsafe { sys::cuModuleLoadData(&mut module, image.as_ptr().cast()) },
        "loading a compiled module",
    )?;
    let mut loaded = LoadedModule {
        module,
        handles,
        functions: Vec::with_capacity(entries.len()),
    };
    for entry in entries {
        loaded.functions.push(function_of(module, entry)?);
    }
    Ok(loaded)
}

/// The driver's version (`major * 1000 + minor * 10`), or 0.
pub fn driver_version() -> i32 {
    let mut version = 0;
    // SAFETY: a plain query with a valid out-pointer.
    let _ = unsafe { sys::cuDriverGetVersion(&mut version) };
    version
}

/// JIT-compiles PTX text and finds its `entries`; a compile failure returns the JIT's log.
pub fn load_ptx(ptx: &str, entries: &[&str], handles: Handles) -> Result<LoadedModule, String> {
    load_image(&compile_ptx(ptx)?, entries, handles)
}

/// The entry `entry` of a loaded module, with its register count and thread limit.
fn function_of(module: sys::CUmodule, entry: &str) -> Result<Function, String> {
    let name = std::ffi::CString::new(entry).map_err(|_| "bad entry name".to_string())?;
    let mut function = std::ptr::null_mut();
    // SAFETY: the module is loaded; the name is NUL-ended.
    check(
        unsafe { sys::cuModuleGetFunction(&mut function, module, name.as_ptr()) },
        "cuModuleGetFunction",
    )?;
    let get = |attr| {
        let mut v = 0;
        // SAFETY: valid function handle and out-pointer.
        let code = unsafe { sys::cuFuncGetAttribute(&mut v, attr, function) };
        check(code, "cuFuncGetAttribute").map(|_| v.max(0) as u32)
    };
    Ok(Function {
        function,
        registers: get(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
        max_threads: get(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
        dynamic_shared_allowed: 0.into(),
    })
}

/// Launches `function` on `stream` with `params` (pointers to each parameter's bytes).
pub fn launch(
    function: &Function,
    stream: sys::CUstream,
    grid: u32,
    block: u32,
    params: &mut [*mut c_void],
) -> Result<(), String> {
    launch_with_shared(function, stream, (grid, block), 0, params)
}

/// Launches `function` with `shared_bytes` of dynamic shared memory a block (allowing the
/// function more than the default 48 KiB first, once, where it asks for more).
pub fn launch_with_shared(
    function: &Function,
    stream: sys::CUstream,
    (grid, block): (u32, u32),
    shared_bytes: u32,
    params: &mut [*mut c_void],
) -> Result<(), String> {
    use std::sync::atomic::Ordering;
    let allowed = &function.dynamic_shared_allowed;
    if shared_bytes > 48 << 10 && shared_bytes > allowed.load(Ordering::Relaxed) {
        // SAFETY: a valid function handle; the attribute takes a byte count.
        let code = unsafe {
            sys::cuFuncSetAttribute(
                function.function,
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                shared_bytes as i32,
            )
        };
        check(code, "allowing a kernel more dynamic shared memory")?;
        allowed.fetch_max(shared_bytes, Ordering::Relaxed);
    }
    // SAFETY: `params` holds one pointer per entry parameter, each to bytes of its size that
    // live until this call returns (the driver copies them).
    let code = unsafe {
        sys::cuLaunchKernel(
            function.function,
            grid,
            1,
            1,
            block,
            1,
            1,
            shared_bytes,
            stream,
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    };
    check(code, "kernel launch")
}

/// A CUDA event recorded after the work queued on a stream (no timing).
pub struct Event {
    event: sys::CUevent,
}

// SAFETY: events may be used from any thread; the driver serialises calls on one event.
unsafe impl Send for Event {}
// SAFETY: as above.
unsafe impl Sync for Event {}

impl Event {
    /// An event recorded after the work queued so far on `handles`' stream.
    pub fn after(handles: &Handles) -> Result<Event, String> {
        handles.bind()?;
        let mut event = std::ptr::null_mut();
        let flags = sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32;
        // SAFETY: a valid out-pointer; the event is recorded on its own context's stream.
        check(
            unsafe { sys::cuEventCreate(&mut event, flags) },
            "cuEventCreate",
        )?;
        let event = Event { event };
        // SAFETY: the event and the stream belong to the current context.
        check(
            unsafe { sys::cuEventRecord(event.event, handles.stream) },
            "cuEventRecord",
        )?;
        Ok(event)
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: created by `after`; the driver defers the destruction of a recorded event
        // until it completes.
        unsafe {
            sys::cuEventDestroy_v2(self.event);
        }
    }
}

/// A pair of CUDA events timing the work queued on a stream between them.
pub struct EventPair {
    start: sys::CUevent,
    end: sys::CUevent,
}

// SAFETY: events may be used from any thread with the context current; the driver
// serialises calls on one event.
unsafe impl Send for EventPair {}
// SAFETY: as above.
unsafe impl Sync for EventPair {}

impl EventPair {
    /// Two new events in `handles`' context (bound first: the calling thread may never have
    /// used this device, as when a program's first GPU work is a launch of iterators alone).
    pub fn new(handles: &Handles) -> Result<EventPair, String> {
        handles.bind()?;
        let mut start = std::ptr::null_mut();
        let mut end = std::ptr::null_mut();
        // SAFETY: valid out-pointers; flags 0 = timing events.
        unsafe {
            check(sys::cuEventCreate(&mut start, 0), "cuEventCreate")?;
            if let Err(e) = check(sys::cuEventCreate(&mut end, 0), "cuEventCreate") {
                sys::cuEventDestroy_v2(start);
                return Err(e);
            }
        }
        Ok(EventPair { start, end })
    }

    /// Records the start (`at_end` false) or the end event on `stream`.
    pub fn record(&self, stream: sys::CUstream, at_end: bool) -> Result<(), String> {
        let event = if at_end { self.end } else { self.start };
        // SAFETY: the event and the stream belong to the current context.
        check(
            unsafe { sys::cuEventRecord(event, stream) },
            "cuEventRecord",
        )
    }

    /// Waits for the end event (as [`Handles::synchronize`] waits); the time between the
    /// two, in milliseconds.
    pub fn elapsed_ms(&self, handles: &Handles) -> Result<f32, String> {
        let mut ms = 0.0f32;
        // SAFETY: the event was recorded.
        super::watch::wait(handles, "the GPU", || unsafe {
            sys::cuEventQuery(self.end)
        })?;
        // SAFETY: both events were recorded and are complete; the out-pointer is valid.
        unsafe {
            check(
                sys::cuEventElapsedTime(&mut ms, self.start, self.end),
                "cuEventElapsedTime",
            )?;
        }
        Ok(ms)
    }
}

impl Drop for EventPair {
    fn drop(&mut self) {
        // SAFETY: the events were created by `new` and are not used after this.
        unsafe {
            sys::cuEventDestroy_v2(self.start);
            sys::cuEventDestroy_v2(self.end);
        }
    }
}
