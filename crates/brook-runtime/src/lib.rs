//! The Brook runtime: devices, streams, kernel launch, and the reference interpreter.
//!
//! The runtime never parses: it takes an IR [`brook_ir::Module`] from a frontend and runs its
//! kernels on a [`Device`]. Launch semantics (domain, implicit resize, gather clamping, ...) are
//! defined in [`brook_ir::launch`]; [`launch()`] checks arguments against a kernel's signature
//! and hands a validated [`LaunchPlan`] to the device.
//!
//! - [`device`]: the `Device` trait; [`buffer`]: device memory and checked byte ranges;
//! - [`registry`]: the device modules, discovery, `BRT_RUNTIME` selection, per-thread devices;
//! - [`plan`]: the launch plan a device runs (buffers, shapes, constants) and its parameter
//!   block;
//! - [`queue`]: the in-order work queue each device owns (asynchronous work);
//! - [`stream`]: untyped streams with the Brook+ error state, transfers, `domain()` views;
//! - [`iter`]: iterator streams;
//! - [`kernel_cache`]: the compiled kernels of the compiled devices, one entry per program,
//!   kernel and variant;
//! - [`element`]: element types and the [`Element`] trait for host data;
//! - [`launch`](mod@launch): argument checking, binding and queueing of kernel launches;
//! - [`ops`]: `streamScatterOp` and `streamGatherOp`;
//! - [`reduce_plan`]: the passes of a reduction on a compiled device, planned as data;
//! - [`passes`]: reductions and scans run as passes on any GPU device;
//! - [`group`]: device groups: several devices used as one, streams split into row blocks;
//! - [`remote`]: devices of other MPI ranks (members of a group), and a rank that serves them;
//! - [`cpu`]: the CPU device: kernels compiled to native code (Cranelift), run on all cores;
//! - [`interp`]: the reference interpreter devices;
//! - [`error`]: `BError` codes and typed errors; [`log`]: `BRT_LOG_FILE`.

pub mod buffer;
pub mod cpu;
pub mod cuda;
pub mod device;
pub mod element;
mod env_switch;
pub mod error;
pub mod group;
pub mod host_memory;
pub mod interp;
pub mod iter;
pub mod kernel_cache;
pub mod launch;
pub mod log;
pub mod ops;
pub mod passes;
pub mod plan;
pub mod profile;
pub mod queue;
pub mod reduce_plan;
pub mod registry;
pub mod remote;
pub mod shared_memory;
pub mod slow_call;
pub mod stream;
pub mod vulkan;

pub use buffer::Buffer;
pub use device::{Device, DeviceInfo, DeviceKind, Marker};
pub use element::{same_component, Element, ElementType};
pub use error::{ArgRef, BError, DeviceLimit, LaunchError, LaunchProblem, Limit, RuntimeError};
pub use iter::IterStream;
pub use launch::{
    corrupt_next_crosschecked_result, crosscheck_enabled, launch, set_crosscheck, Arg, Constant,
    LaunchOptions, LaunchReport, ScanKind, ScanRequest, VoutResult,
};
pub use plan::{Bound, ExecRegion, LaunchPlan, ScanPlan};
pub use profile::{profile_report, profiling, reset_profile, set_profile};
pub use registry::{
    current_device, default_device, device_from_spec, device_group, devices, find_device,
    get_devices, spec_for_host_place, thread_devices, use_devices, HostPlace,
};
pub use stream::{PendingWrite, RawStream};
