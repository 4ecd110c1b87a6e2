//! Vulkan devices: every GPU with a Vulkan driver (AMD, Intel, NVIDIA, Apple through MoltenVK)
//! and Mesa's lavapipe (a Vulkan device on the CPU), reached through the Vulkan loader, which
//! is opened at run time as the CUDA driver is: a machine without Vulkan builds and runs, and
//! simply has no Vulkan devices.
//!
//! - [`instance`]: the loader and the instance.
//! - [`info`]: what each physical device offers ([`GpuInfo`]) and whether Brook can use it.
//! - [`context`]: a logical device with one compute queue, buffers addressed by device
//!   address, and running a SPIR-V module.
//! - [`probe`]: the probe kernel run when a device opens (what it does with subnormals).
//!
//! So far this layer opens devices, describes them and runs SPIR-V modules; kernels of Brook
//! programs come with the SPIR-V lowering (issue 52).

pub mod context;
pub mod device;
pub mod info;
pub mod instance;
pub mod probe;
#[cfg(test)]
mod scalar_tests;

pub use context::{Buffer, Context};
pub use device::device;
pub use info::{GpuInfo, GpuKind};

use std::sync::{Arc, OnceLock};

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
