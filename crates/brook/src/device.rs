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

    /// The reference interpreter (`interp:0`).
    pub fn interp() -> Device {
        Device::find("interp", 0).unwrap_or_else(|_| Device::default_device())
    }

    /// An interpreter that flushes `float` subnormal operands and results to zero: what a
    /// device whose [`DeviceInfo::flushes_float_subnormals`] is set should give (NVIDIA's
    /// Vulkan driver flushes them). Not in the registry; the conformance judge uses it.
    pub fn interp_flushing_float_subnormals() -> Device {
        Device {
            raw: Arc::new(brook_runtime::interp::InterpDevice::flushing_float_subnormals()),
        }
    }

    /// A device by runtime name (`interp`, `cpu`, `cuda`) and index.
    pub fn find(name: &str, ordinal: usize) -> Result<Device, crate::Error> {
        Ok(Device {
            raw: brook_runtime::find_device(name, ordinal)?,
        })
    }

    /// A device group: `members` used as one device. A stream made on it is split into
    /// blocks of rows, one per member; a launch runs on every member over its block, and gives
    /// the bits one device gives (see the guide, "Several devices as one").
    pub fn group(members: &[Device]) -> Result<Device, crate::Error> {
        let raw: Vec<_> = members.iter().map(|d| d.raw.clone()).collect();
        Ok(Device {
            raw: brook_runtime::device_group(&raw)?,
        })
    }

    /// The device a runtime spec names, as `BRT_RUNTIME` takes it: `cuda`, `cuda:1`,
    /// `cuda:all`, or several joined by `+` (`interp:0+interp:1`); more than one device is
    /// a [`Device::group`].
    pub fn from_spec(spec: &str) -> Result<Device, crate::Error> {
        Ok(Device {
            raw: brook_runtime::device_from_spec(spec, 0)?,
        })
    }

    /// The members of a device group, in the order of their blocks; empty for other devices.
    pub fn members(&self) -> Vec<Device> {
        self.raw
            .group_members()
            .unwrap_or_default()
            .iter()
            .map(|raw| Device { raw: raw.clone() })
            .collect()
    }

    /// Every device this build can use.
    pub fn all() -> Vec<Device> {
        brook_runtime::devices()
            .iter()
            .map(|raw| Device { raw: raw.clone() })
            .collect()
    }

    /// The devices of a type (Brook+ `getDevices`): `"all"`, `"interp"`, `"cpu"`, `"cuda"`,
    /// `"vulkan"`, or `"cal"` and `"gpu"` (every GPU: the CUDA devices, then the Vulkan GPUs
    /// CUDA does not reach; with no GPU, `"cal"` gives the CPU device). A type this machine
    /// has no device of gives an empty list; an unknown name is an error.
    pub fn of_type(type_name: &str) -> Result<Vec<Device>, crate::Error> {
        Ok(brook_runtime::get_devices(type_name)?
            .into_iter()
            .map(|raw| Device { raw })
            .collect())
    }

    /// The device the calling thread uses: the first given to [`use_devices`] on this thread,
    /// else the default device.
    pub fn current() -> Device {
        Device {
            raw: brook_runtime::current_device(),
        }
    }

    /// The type name (Brook+ `Device::getType`): `interp`, `cpu`, `cuda`, or `group` for a
    /// device group.
    pub fn type_name(&self) -> &'static str {
        self.kind().name()
    }

    pub fn info(&self) -> &DeviceInfo {
        self.raw.info()
    }

    pub fn kind(&self) -> DeviceKind {
        self.raw.info().kind
    }

    /// A device made outside the registry (a device of a tool's own, a test's): any
    /// implementation of the runtime's `Device` trait.
    pub fn from_raw(raw: Arc<dyn brook_runtime::Device>) -> Device {
        Device { raw }
    }

    pub fn raw(&self) -> &Arc<dyn brook_runtime::Device> {
        &self.raw
    }

    /// The GPU's own time for the work `work` queues on this device, measured with CUDA events
    /// around it (so host overheads are left out), once that work has finished. `None` for
    /// devices without such a clock (`cpu`, `interp`).
    pub fn gpu_time(
        &self,
        mut work: impl FnMut(),
    ) -> Option<Result<std::time::Duration, crate::Error>> {
        self.raw
            .gpu_time(&mut work)
            .map(|r| r.map_err(crate::Error::from))
    }
}

/// Sets the devices the calling thread uses (Brook+ `useDevices`); [`Device::current`] is the
/// first. An empty list returns to the default device. Threads do not inherit it: a new thread
/// starts on the default device.
pub fn use_devices(devices: &[Device]) {
    let raw: Vec<_> = devices.iter().map(|d| d.raw.clone()).collect();
    brook_runtime::use_devices(&raw);
}
