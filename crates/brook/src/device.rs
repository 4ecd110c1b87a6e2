//! Devices as the Rust API sees them.

use brook_runtime::{DeviceInfo, DeviceKind};
use std::sync::Arc;

/// A device that runs kernels: the reference interpreter, the CPU, or a GPU.
#[derive(Clone)]
pub struct Device {
    raw: Arc<dyn brook_runtime::Device>,
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Device({})", self.raw.info())
    }
}

impl Device {
    /// The device chosen by `BRT_RUNTIME`/`BRT_ADAPTER`, or the best one available.
    pub fn default_device() -> Device {
        Device {
            raw: brook_runtime::default_device(),
        }
    }

    /// The reference interpreter.
    pub fn interp() -> Device {
        Device::find("interp", 0).unwrap_or_else(|_| Device::default_device())
    }

    /// A device by runtime name (`interp`, `cpu`, `cuda`) and index.
    pub fn find(name: &str, ordinal: usize) -> Result<Device, crate::Error> {
        Ok(Device {
            raw: brook_runtime::find_device(name, ordinal)?,
        })
    }

    /// Every device this build can use.
    pub fn all() -> Vec<Device> {
        brook_runtime::devices()
            .iter()
            .map(|raw| Device { raw: raw.clone() })
            .collect()
    }

    pub fn info(&self) -> &DeviceInfo {
        self.raw.info()
    }

    pub fn kind(&self) -> DeviceKind {
        self.raw.info().kind
    }

    pub fn raw(&self) -> &Arc<dyn brook_runtime::Device> {
        &self.raw
    }
}
