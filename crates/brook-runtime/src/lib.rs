//! The Brook runtime: devices, streams, kernel launch, and the reference interpreter.
//!
//! The runtime never parses: it takes an IR [`brook_ir::Module`] from a frontend and runs its
//! kernels on a [`Device`]. Launch semantics (domain, implicit resize, gather clamping, ...) are
//! defined in [`brook_ir::launch`]; [`launch()`] checks arguments against a kernel's signature
//! and hands a validated [`Launch`] to the device.
//!
//! - [`device`]: the `Device` trait, enumeration and `BRT_RUNTIME` selection;
//! - [`stream`]: untyped streams with the Brook+ error state;
//! - [`element`]: element types and the [`Element`] trait for host data;
//! - [`launch`](mod@launch): argument checking and binding;
//! - [`interp`]: the reference interpreter device;
//! - [`error`]: `BError` codes and typed errors.

pub mod device;
pub mod element;
pub mod error;
pub mod interp;
pub mod launch;
pub mod stream;

pub use device::{default_device, devices, find_device, Buffer, Device, DeviceInfo, DeviceKind};
pub use element::{Element, ElementType};
pub use error::{ArgRef, BError, LaunchError, LaunchProblem, RuntimeError};
pub use launch::{launch, Arg, Bound, Constant, Launch, LaunchReport};
pub use stream::RawStream;
