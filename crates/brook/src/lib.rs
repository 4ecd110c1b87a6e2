//! Brook from Rust: write kernels in Brook, run them on any device.
//!
//! ```
//! use brook::{Device, Program, Stream};
//!
//! let program = Program::from_source(
//!     "saxpy.br",
//!     "kernel void saxpy(float a, float x<>, float y<>, out float r<>) { r = a * x + y; }",
//! )?;
//! let device = Device::default_device();
//! let x = Stream::from_slice(&device, &[4], &[1.0f32, 2.0, 3.0, 4.0])?;
//! let y = Stream::from_slice(&device, &[4], &[10.0f32, 20.0, 30.0, 40.0])?;
//! let r = Stream::<f32>::new(&device, &[4])?;
//! program.kernel("saxpy")?.launch(brook::args![2.0f32, &x, &y, &r])?;
//! assert_eq!(r.to_vec()?, vec![12.0, 24.0, 36.0, 48.0]);
//! # Ok::<(), brook::Error>(())
//! ```
//!
//! Element types: Rust numbers are the Brook scalars (`f32` is `float`, `i8` is `char`, `u32`
//! is `uint`...), `[T; N]` (N = 2..4) are the vectors (`[f32; 4]` is `float4`), and
//! [`brook_struct!`] declares structs. Shapes are listed slowest dimension first.

mod device;
mod error;
mod iter;
mod kernel;
mod loom;
mod loom_files;
mod loom_launch;
mod ops;
mod program;
pub mod raw;
mod scan;
mod stream;

pub use brook_runtime::{
    brook_struct, corrupt_next_crosschecked_result, crosscheck_enabled, profile_report, profiling,
    reset_profile, set_crosscheck, set_profile, BError, DeviceKind, Element, LaunchReport,
    RawStream, ScanKind, ScanRequest,
};
pub use device::{use_devices, Device};
pub use error::Error;
pub use iter::{IterElement, IterStream};
pub use kernel::{host_var, vout, Arg, Kernel};
pub use loom::{Grid, LoomKernel, LoomProgram};
pub use loom_files::{embed_loom_file, read_loom_file};
pub use ops::{gather_op, scatter_op, GatherOp, ScatterOp};
pub use program::{CompileOptions, Dialect, Program};
pub use stream::{PendingWrite, Stream};
