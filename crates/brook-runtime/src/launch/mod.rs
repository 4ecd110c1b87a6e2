//! Kernel launch: checking arguments against a kernel's signature, finding the domain, and
//! queueing a validated [`LaunchPlan`](crate::plan::LaunchPlan) on the device.
//!
//! [`launch`] checks everything it can before it returns (`check`); a refused launch marks
//! every output stream with the error and returns it. The launch itself runs later, in order,
//! on the device's queue ([`crate::queue`]): if an input turns out to hold an error by then
//! (an earlier queued operation failed), the launch is skipped and its outputs get the error, so
//! errors propagate from inputs to outputs as Brook+ defines.

mod args;
mod check;
mod checker;
mod convert;
mod crosscheck;
mod plain;
pub(crate) mod profiled;
mod reduce;
pub(crate) use reduce::input_and_target;
mod region;
mod scan;
mod vout;

pub use args::{Arg, Constant, LaunchOptions, LaunchReport, ScanKind, ScanRequest, VoutResult};
pub use crosscheck::{corrupt_next_crosschecked_result, crosscheck_enabled, set_crosscheck};

use crate::error::LaunchError;
use brook_ir::ValidModule;
use std::sync::Arc;

/// Validates a launch of kernel `kernel` of `module` and queues it on the device of its streams.
///
/// Arguments are in the kernel's source order. A kernel with vouts ([`brook_ir::vout`]) runs
/// before this returns, and its results are in [`LaunchReport::vouts`].
pub fn launch(
    module: &Arc<ValidModule>,
    kernel: usize,
    args: &[Arg<'_>],
    options: &LaunchOptions,
) -> Result<LaunchReport, Box<LaunchError>> {
    if module.kernels[kernel].vouts.is_empty() {
        plain::launch_ir(module, kernel, args, options)
    } else {
        vout::launch(module, kernel, args, options)
    }
}
