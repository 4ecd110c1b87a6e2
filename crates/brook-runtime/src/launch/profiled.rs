//! A device launch, measured when profiling is on ([`crate::profile`]): the device's own
//! time (the wall clock where it has none), the bytes of the streams bound and the instances
//! run, per device and kernel.

use crate::device::Device;
use crate::error::LaunchProblem;
use crate::plan::{Bound, LaunchPlan};
use crate::profile;

/// Runs `plan` on `device`, recording it when profiling.
pub fn launch(device: &dyn Device, plan: &LaunchPlan) -> Result<(), LaunchProblem> {
    if !profile::profiling() {
        return device.launch(plan);
    }
    let started = std::time::Instant::now();
    let gpu = device.launch_timed(plan)?;
    let (time, gpu_clock) = match gpu {
        Some(time) => (time, true),
        None => (started.elapsed(), false),
    };
    let kernel = plan.kernel();
    let bytes: u64 = kernel
        .params
        .iter()
        .zip(&plan.args)
        .map(|(param, arg)| match arg {
            Bound::Stream { shape, .. } => {
                let size = plan.module.layout(&param.ty).size as u64;
                shape.iter().product::<usize>() as u64 * size
            }
            _ => 0,
        })
        .sum();
    let elements = plan.region.size.iter().product::<usize>() as u64;
    let device_name = device.info().to_string();
    profile::record_launch(&device_name, &kernel.name, time, gpu_clock, bytes, elements);
    Ok(())
}
