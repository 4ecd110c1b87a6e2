//! The `Device` trait, buffers, shapes, and device enumeration and selection.
//!
//! A device owns buffers, an in-order work [`Queue`], and runs launches that the runtime has
//! already validated ([`crate::launch`]). Every method but `info`, `allocate` and `queue` runs
//! on the device's queue, so a device sees its work one job at a time, in order.
//!
//! Devices are enumerated by [`devices`] and [`get_devices`] (by type name); [`default_device`]
//! picks one from `BRT_RUNTIME` (`interp`, `cpu`, `cuda`/`cal`/`gpu`) and `BRT_ADAPTER` as seed
//! 001 describes, falling back, with a message, to the best device this build has.
//! [`use_devices`] sets the devices of the calling thread ([`current_device`]); threads do not
//! inherit it.

use crate::error::RuntimeError;
use crate::launch::Launch;
use crate::queue::Queue;
use std::any::Any;
use std::cell::RefCell;
use std::fmt;
use std::sync::{Arc, OnceLock};

/// What kind of executor a device is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    /// The reference interpreter: slow, bounds-checked, the semantic oracle.
    Interp,
    /// Native code on the host CPU.
    Cpu,
    /// An NVIDIA GPU.
    Cuda,
}

impl DeviceKind {
    /// The type name (`Device::getType` in Brook+): `interp`, `cpu` or `cuda`.
    pub fn name(self) -> &'static str {
        match self {
            DeviceKind::Interp => "interp",
            DeviceKind::Cpu => "cpu",
            DeviceKind::Cuda => "cuda",
        }
    }

    /// The kind a runtime or type name means: `interp`, `cpu`, `cuda` (also `cal`, `gpu`).
    pub fn from_name(name: &str) -> Option<DeviceKind> {
        match name.trim().to_ascii_lowercase().as_str() {
            "interp" => Some(DeviceKind::Interp),
            "cpu" => Some(DeviceKind::Cpu),
            "cuda" | "cal" | "gpu" => Some(DeviceKind::Cuda),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    pub kind: DeviceKind,
    /// The index among devices of its kind.
    pub ordinal: usize,
    /// A description for people (`interp`, `cuda:0 (NVIDIA H200)`).
    pub description: String,
}

impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.description)
    }
}

/// Device memory. A buffer never changes size.
pub trait Buffer: Any + Send + Sync {
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn as_any(&self) -> &dyn Any;
}

/// An executor of kernels with its own memory.
pub trait Device: Send + Sync {
    fn info(&self) -> &DeviceInfo;
    /// The device's in-order work queue.
    fn queue(&self) -> &Queue;
    fn allocate(&self, bytes: usize) -> Result<Arc<dyn Buffer>, RuntimeError>;
    /// Copies host bytes into a buffer at a byte offset; the range is within the buffer.
    fn upload(&self, buffer: &dyn Buffer, offset: usize, bytes: &[u8]) -> Result<(), RuntimeError>;
    /// Copies bytes from a buffer at a byte offset to the host; the range is within the buffer.
    fn download(
        &self,
        buffer: &dyn Buffer,
        offset: usize,
        out: &mut [u8],
    ) -> Result<(), RuntimeError>;
    /// Copies `bytes` bytes between buffers of this device (or within one; the ranges may
    /// overlap). Both ranges are within their buffers.
    fn copy(
        &self,
        from: &dyn Buffer,
        from_offset: usize,
        to: &dyn Buffer,
        to_offset: usize,
        bytes: usize,
    ) -> Result<(), RuntimeError>;
    /// Copies `data` (the rows one after another) into the strided rows `rows` of `buffer`.
    fn upload_strided(
        &self,
        buffer: &dyn Buffer,
        rows: Strided,
        data: &[u8],
    ) -> Result<(), RuntimeError> {
        for (r, row) in data
            .chunks(rows.row_bytes.max(1))
            .take(rows.rows)
            .enumerate()
        {
            self.upload(buffer, rows.first + r * rows.pitch, row)?;
        }
        Ok(())
    }
    /// Copies the strided rows `rows` of `buffer` into `out`, one after another.
    fn download_strided(
        &self,
        buffer: &dyn Buffer,
        rows: Strided,
        out: &mut [u8],
    ) -> Result<(), RuntimeError> {
        for (r, row) in out
            .chunks_mut(rows.row_bytes.max(1))
            .take(rows.rows)
            .enumerate()
        {
            self.download(buffer, rows.first + r * rows.pitch, row)?;
        }
        Ok(())
    }
    /// [`Device::upload`] from host memory the caller keeps unchanged until the job is done
    /// (Brook+ `"nocopy"`): a GPU pins it and copies from it directly.
    fn upload_in_place(
        &self,
        buffer: &dyn Buffer,
        offset: usize,
        bytes: &[u8],
    ) -> Result<(), RuntimeError> {
        self.upload(buffer, offset, bytes)
    }
    /// [`Device::download`] straight into host memory (Brook+ `"nocopy"`).
    fn download_in_place(
        &self,
        buffer: &dyn Buffer,
        offset: usize,
        out: &mut [u8],
    ) -> Result<(), RuntimeError> {
        self.download(buffer, offset, out)
    }
    /// Whether this device copies device to device with others of its kind
    /// ([`Device::copy_from_peer`]).
    fn peer_copies(&self) -> bool {
        false
    }
    /// Copies `bytes` from `from` (a buffer of another device) into `to`, device to device,
    /// waiting for the copy; `None` where this device cannot (the runtime then goes through
    /// the host).
    fn copy_from_peer(
        &self,
        from: &dyn Buffer,
        to: &dyn Buffer,
        bytes: usize,
    ) -> Option<Result<(), RuntimeError>> {
        let _ = (from, to, bytes);
        None
    }
    /// Runs a validated launch.
    fn launch(&self, launch: &Launch) -> Result<(), crate::LaunchProblem>;
    /// Waits for all queued work.
    fn synchronize(&self) -> Result<(), RuntimeError>;
    /// Waits for work the queue has handed to the hardware (a GPU runs it asynchronously);
    /// called after the queue's jobs are done. Devices that finish work inside their jobs
    /// have nothing to wait for.
    fn settle(&self) -> Result<(), RuntimeError> {
        Ok(())
    }
    /// Whether the hardware has no unfinished work (see [`Device::settle`]).
    fn idle(&self) -> bool {
        true
    }
    /// The device's own time for the work `work` queues (GPU events around it), after that
    /// work finished; `None` where the device has no such clock (the CPU and the interpreter).
    fn gpu_time(
        &self,
        work: &mut dyn FnMut(),
    ) -> Option<Result<std::time::Duration, RuntimeError>> {
        let _ = work;
        None
    }
}

/// Equally long rows at equal distances in a buffer (a 2-D box of a view), in bytes: `rows`
/// rows of `row_bytes`, the first at `first`, each `pitch` after the one before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strided {
    pub first: usize,
    pub row_bytes: usize,
    pub pitch: usize,
    pub rows: usize,
}

impl Strided {
    /// The rows of element runs `(first element, length)` of `size`-byte elements, when they
    /// are equally long and equally spaced (more than one).
    pub fn of_runs(runs: &[(usize, usize)], size: usize) -> Option<Strided> {
        let (&(first, len), rest) = runs.split_first()?;
        let &(second, _) = rest.first()?;
        let step = second.checked_sub(first)?;
        let regular = runs
            .iter()
            .enumerate()
            .all(|(r, &(start, l))| l == len && start == first + r * step);
        regular.then_some(Strided {
            first: first * size,
            row_bytes: len * size,
            pitch: step * size,
            rows: runs.len(),
        })
    }
}

/// The devices this build can use, in order of preference for the default device.
pub fn devices() -> &'static [Arc<dyn Device>] {
    static DEVICES: OnceLock<Vec<Arc<dyn Device>>> = OnceLock::new();
    DEVICES.get_or_init(|| {
        let gpus = cuda_devices();
        let cpu = Arc::new(crate::cpu::CpuDevice::new()) as Arc<dyn Device>;
        let interps = (0..crate::interp::INTERP_DEVICES)
            .map(|ordinal| Arc::new(crate::interp::InterpDevice::new(ordinal)) as Arc<dyn Device>);
        gpus.into_iter()
            .chain(std::iter::once(cpu))
            .chain(interps)
            .collect()
    })
}

/// The GPUs of this machine; none (with the reason kept for [`cuda_unavailable`]) when the
/// driver or a GPU is missing.
fn cuda_devices() -> Vec<Arc<dyn Device>> {
    match crate::cuda::discover() {
        Ok(found) => found
            .into_iter()
            .map(|d| Arc::new(d) as Arc<dyn Device>)
            .collect(),
        Err(why) => {
            let _ = CUDA_UNAVAILABLE.set(why);
            Vec::new()
        }
    }
}

static CUDA_UNAVAILABLE: OnceLock<String> = OnceLock::new();

/// Why this machine has no CUDA device (`None` when it has one, or before [`devices`] ran).
pub fn cuda_unavailable() -> Option<&'static str> {
    devices();
    CUDA_UNAVAILABLE.get().map(String::as_str)
}

/// The devices of a type name (Brook+ `getDevices`): `all`, `interp`, `cpu`, `cuda` or `cal`
/// (the same as `cuda`). An unknown name is an error listing the known ones; a known type this
/// machine has no device of gives an empty list.
pub fn get_devices(type_name: &str) -> Result<Vec<Arc<dyn Device>>, RuntimeError> {
    if type_name.trim().eq_ignore_ascii_case("all") {
        return Ok(devices().to_vec());
    }
    let kind = DeviceKind::from_name(type_name).ok_or_else(|| {
        RuntimeError::NoDevice(
            type_name.to_string(),
            "known device types are all, interp, cpu, cuda and cal".into(),
        )
    })?;
    Ok(devices()
        .iter()
        .filter(|d| d.info().kind == kind)
        .cloned()
        .collect())
}

thread_local! {
    static THREAD_DEVICES: RefCell<Option<Vec<Arc<dyn Device>>>> = const { RefCell::new(None) };
}

/// Sets the devices the calling thread uses (Brook+ `useDevices`): new streams and host-side
/// operations of this thread go to the first. An empty list returns the thread to the default
/// device. Other threads, including threads started later by this one, are not affected.
pub fn use_devices(devices: &[Arc<dyn Device>]) {
    THREAD_DEVICES.with(|d| {
        *d.borrow_mut() = if devices.is_empty() {
            None
        } else {
            Some(devices.to_vec())
        }
    });
}

/// The devices set by [`use_devices`] on this thread, or the default device.
pub fn thread_devices() -> Vec<Arc<dyn Device>> {
    THREAD_DEVICES
        .with(|d| d.borrow().clone())
        .unwrap_or_else(|| vec![default_device()])
}

/// The device this thread uses: the first of [`use_devices`], or [`default_device`].
pub fn current_device() -> Arc<dyn Device> {
    THREAD_DEVICES
        .with(|d| d.borrow().as_ref().and_then(|v| v.first().cloned()))
        .unwrap_or_else(default_device)
}

/// The device a program uses when it names none: `BRT_RUNTIME` (and `BRT_ADAPTER` for the
/// index), or the first device. A requested runtime that is not available falls back with a
/// message on stderr, never a failure.
pub fn default_device() -> Arc<dyn Device> {
    static DEFAULT: OnceLock<Arc<dyn Device>> = OnceLock::new();
    DEFAULT
        .get_or_init(|| {
            let requested = std::env::var("BRT_RUNTIME").ok();
            let adapter = std::env::var("BRT_ADAPTER")
                .ok()
                .and_then(|a| a.trim().parse::<usize>().ok())
                .unwrap_or(0);
            match requested.as_deref().map(str::trim) {
                None | Some("") => devices()[0].clone(),
                Some(name) => match find_device(name, adapter) {
                    Ok(device) => device,
                    Err(e) => {
                        let fallback = devices()[0].clone();
                        eprintln!("brook: BRT_RUNTIME={name}: {e}; using {}", fallback.info());
                        fallback
                    }
                },
            }
        })
        .clone()
}

/// The device of a runtime name (`interp`, `cpu`, `cuda`, `cal`, `gpu`) and index.
pub fn find_device(name: &str, ordinal: usize) -> Result<Arc<dyn Device>, RuntimeError> {
    let Some(kind) = DeviceKind::from_name(name) else {
        return Err(RuntimeError::NoDevice(
            name.to_string(),
            "known runtimes are interp, cpu and cuda (also cal, gpu)".into(),
        ));
    };
    devices()
        .iter()
        .find(|d| d.info().kind == kind && d.info().ordinal == ordinal)
        .cloned()
        .ok_or_else(|| {
            let why = match kind {
                DeviceKind::Cuda => "no CUDA device: this build has no CUDA backend yet",
                DeviceKind::Cpu => "the CPU device is cpu:0",
                DeviceKind::Interp => "the interpreter devices are interp:0 and interp:1",
            };
            RuntimeError::NoDevice(format!("{}:{ordinal}", kind.name()), why.into())
        })
}

/// Whether two device handles are the same device.
pub fn same_device(a: &Arc<dyn Device>, b: &Arc<dyn Device>) -> bool {
    Arc::ptr_eq(a, b)
}

#[cfg(test)]
mod strided_tests {
    use super::Strided;

    #[test]
    fn equal_rows_at_equal_distances_are_one_strided_copy() {
        let rows = Strided::of_runs(&[(5, 3), (15, 3), (25, 3)], 4);
        assert_eq!(
            rows,
            Some(Strided {
                first: 20,
                row_bytes: 12,
                pitch: 40,
                rows: 3
            })
        );
        assert_eq!(
            Strided::of_runs(&[(5, 3)], 4),
            None,
            "one run is contiguous"
        );
        assert_eq!(
            Strided::of_runs(&[(0, 2), (10, 2), (30, 2)], 4),
            None,
            "uneven gaps"
        );
        assert_eq!(
            Strided::of_runs(&[(0, 2), (10, 3)], 4),
            None,
            "uneven lengths"
        );
    }
}
