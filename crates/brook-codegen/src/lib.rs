//! Brook code generators: the kernel IR to native code.
//!
//! - [`abi`]: the launch ABI shared by the native backends: the packed parameter block the
//!   runtime fills for each launch, and the [`abi::Variant`] a kernel is specialised for.
//! - [`cpu`]: IR to x86-64/AArch64 code through Cranelift, compiled in memory.
//! - [`ptx`]: IR to PTX text for NVIDIA GPUs, compiled by the CUDA driver.
//! - [`spirv`]: IR to SPIR-V modules for Vulkan devices.
//! - [`leaves`]: flattening IR types into scalar leaves (shared by every backend).
//! - [`lower`]: lowering a kernel body, written once for every backend over its primitive
//!   operations ([`lower::Target`]).
//! - [`gpu`]: the GPU strategies (the map driver, the reduction and scan entries), written
//!   once for PTX and SPIR-V over their GPU primitives.
//! - [`mathlib`]: Brook's math library, written once over a backend's arithmetic.
//! - [`tuning`]: the code generation choices kept to compare against, in every backend's
//!   options.
//! - [`contract`]: what every backend keeps: [`Backend`] (one `compile(&ValidModule, kernel,
//!   &Variant, &Options)` shape) and [`CompileError`], which keeps the span of the problem.

pub mod abi;
pub mod contract;
pub mod cpu;
pub mod gpu;
pub mod leaves;
pub mod lower;
pub mod mathlib;
pub mod ptx;
pub mod spirv;
#[cfg(test)]
mod test_kernels;
pub mod tuning;

pub use contract::{Backend, BackendKind, CodeTarget, CompileError};
pub use tuning::{Gangs, Tuning};
