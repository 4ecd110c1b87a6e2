//! The untyped layer under the typed API, for tools that work with streams whose element type
//! is known only at run time (the conformance runner, the C ABI, benchmarks): untyped and
//! iterator streams, element types, constants, launch errors, `streamGatherOp`/`streamScatterOp`
//! on untyped streams, and why a kind of device is missing. Everything else of the runtime
//! (devices' internals, launch plans, the kernel cache) stays inside it.

pub use brook_runtime::element::{same_component, ElementType};
pub use brook_runtime::ops;
pub use brook_runtime::registry::{cuda_unavailable, unavailable};
pub use brook_runtime::remote::{launched as launched_rank, local_job, local_job_of};
pub use brook_runtime::{
    ArgRef, Constant, DeviceLimit, IterStream, LaunchError, LaunchProblem, Limit, RawStream,
    RuntimeError,
};
