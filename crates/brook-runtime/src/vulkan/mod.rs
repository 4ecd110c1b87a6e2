//! Vulkan devices: every GPU with a Vulkan driver (AMD, Intel, NVIDIA, Apple through MoltenVK)
//! and Mesa's lavapipe (a Vulkan device on the CPU), reached through the Vulkan loader, which
//! is opened at run time as the CUDA driver is: a machine without Vulkan builds and runs, and
//! simply has no Vulkan devices.
//!
//! - [`instance`]: the loader and the instance.
//! - [`info`]: what each physical device offers ([`GpuInfo`]) and whether Brook can use it.
//! - [`context`]: a logical device with one compute queue, its pipelines, and kernels
//!   recorded into batches (`batch`: launches submitted together, a barrier between each
//!   two, when the host needs their results).
//! - [`memory`]: buffers the host maps and kernels reach by device address, and the pool of
//!   internal buffers launches reuse.
//! - [`probe`]: the probe kernel run when a device opens (what it does with subnormals).
//! - [`statistics`]: the driver's statistics of each compiled kernel (`BRT_VULKAN_STATISTICS`).
//!
//! - [`mod@device`]: a Vulkan device as a Brook device (`vulkan:0`, ...), found by [`discover`].

mod arena;
mod batch;
pub mod clock;
pub mod context;
pub mod device;
pub mod info;
pub mod instance;
pub mod memory;
pub mod probe;
#[cfg(test)]
mod scalar_tests;
pub mod statistics;
mod submit;

pub use context::Context;
pub use device::{device, device_with};
pub use info::{GpuInfo, GpuKind};
pub use memory::Buffer;

use crate::device::Device;
use std::sync::{Arc, OnceLock};

/// NVIDIA's PCI vendor id: its GPUs are CUDA devices too.
const NVIDIA: u32 = 0x10de;

/// The Vulkan devices Brook can use, as Brook devices (`vulkan:N`, N the driver's index); a
/// device it cannot use is said on stderr once and left out. `Err` says why there are none.
pub fn discover() -> Result<Vec<Arc<dyn Device>>, String> {
    let gpus = gpus().as_ref().map_err(Clone::clone)?;
    let (mut found, mut why) = (Vec::new(), Vec::new());
    for (k, gpu) in gpus.iter().enumerate() {
        match device::device(k) {
            Ok(d) => found.push(d),
            Err(e) => {
                crate::log::append(&format!(
                    "warning: vulkan:{k} ({}) cannot run Brook kernels: {e}",
                    gpu.info.name
                ));
                why.push(format!("vulkan:{k}: {e}"));
            }
        }
    }
    if found.is_empty() && !why.is_empty() {
        return Err(why.join("; "));
    }
    Ok(found)
}

/// Whether `vulkan:ordinal` runs on the CPU (lavapipe): listed, never the default device.
pub fn is_software(ordinal: usize) -> bool {
    info(ordinal).is_some_and(|i| i.kind == GpuKind::Cpu)
}

/// Whether `vulkan:ordinal` is an NVIDIA GPU (which CUDA reaches too).
pub fn is_nvidia(ordinal: usize) -> bool {
    info(ordinal).is_some_and(|i| i.vendor_id == NVIDIA)
}

fn info(ordinal: usize) -> Option<&'static GpuInfo> {
    gpus().as_ref().ok()?.get(ordinal).map(|g| &g.info)
}

/// One Vulkan device: what it offers and, when Brook can use it, its open context.
pub struct Gpu {
    pub info: GpuInfo,
    /// The open device, or why it could not be opened or used.
    pub context: Result<Arc<Context>, String>,
}

/// The Vulkan devices of this machine, in the driver's order, found once: `Err` says why
/// there are none (no loader, no instance).
pub fn gpus() -> &'static Result<Vec<Gpu>, String> {
    static GPUS: OnceLock<Result<Vec<Gpu>, String>> = OnceLock::new();
    GPUS.get_or_init(find_gpus)
}

fn find_gpus() -> Result<Vec<Gpu>, String> {
    let vulkan = instance::Vulkan::open()?;
    let vulkan = Arc::new(vulkan);
    let physical = vulkan.physical_devices()?;
    Ok(physical
        .into_iter()
        .map(|device| {
            let mut info = info::describe(&vulkan, device);
            let context = match &info.unusable {
                Some(why) => Err(why.clone()),
                None => Context::open(vulkan.clone(), device, &info).map(Arc::new),
            };
            if let Ok(context) = &context {
                probe::subnormals(context, &mut info);
            }
            Gpu { info, context }
        })
        .collect())
}
