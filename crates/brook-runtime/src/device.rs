//! The `Device` trait, buffers, shapes, and device enumeration and selection.
//!
//! A device owns buffers and runs launches that the runtime has already validated
//! ([`crate::launch`]). Devices are enumerated by [`devices`]; [`default_device`] picks one from
//! `BRT_RUNTIME` (`interp`, `cpu`, `cuda`/`cal`/`gpu`) and `BRT_ADAPTER` as seed 001 describes,
//! falling back, with a message, to the best device this build has.

use crate::error::RuntimeError;
use crate::launch::Launch;
use std::any::Any;
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
    pub fn name(self) -> &'static str {
        match self {
            DeviceKind::Interp => "interp",
            DeviceKind::Cpu => "cpu",
            DeviceKind::Cuda => "cuda",
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
    /// Copies a whole buffer into another of the same size on this device.
    fn copy(&self, from: &dyn Buffer, to: &dyn Buffer) -> Result<(), RuntimeError>;
    /// Runs a validated launch.
    fn launch(&self, launch: &Launch<'_>) -> Result<(), crate::LaunchProblem>;
    /// Waits for all queued work.
    fn synchronize(&self) -> Result<(), RuntimeError>;
}

/// The devices this build can use, in order of preference for the default device.
pub fn devices() -> &'static [Arc<dyn Device>] {
    static DEVICES: OnceLock<Vec<Arc<dyn Device>>> = OnceLock::new();
    DEVICES.get_or_init(|| vec![Arc::new(crate::interp::InterpDevice::new()) as Arc<dyn Device>])
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
    let kind = match name.to_ascii_lowercase().as_str() {
        "interp" => DeviceKind::Interp,
        "cpu" => DeviceKind::Cpu,
        "cuda" | "cal" | "gpu" => DeviceKind::Cuda,
        other => {
            return Err(RuntimeError::NoDevice(
                other.to_string(),
                "known runtimes are interp, cpu and cuda (also cal, gpu)".into(),
            ))
        }
    };
    devices()
        .iter()
        .find(|d| d.info().kind == kind && d.info().ordinal == ordinal)
        .cloned()
        .ok_or_else(|| {
            let why = match kind {
                DeviceKind::Cuda => "no CUDA device: this build has no CUDA backend yet",
                DeviceKind::Cpu => "no CPU JIT device: this build has no CPU backend yet",
                DeviceKind::Interp => "there is one interpreter device, index 0",
            };
            RuntimeError::NoDevice(format!("{}:{ordinal}", kind.name()), why.into())
        })
}

/// Whether two device handles are the same device.
pub fn same_device(a: &Arc<dyn Device>, b: &Arc<dyn Device>) -> bool {
    Arc::ptr_eq(a, b)
}
