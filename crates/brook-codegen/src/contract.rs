//! The contract every backend keeps with the runtime and brcc: one compile shape
//! ([`Backend::compile`]) and one error type, which keeps the IR span of what could not be
//! compiled so the error can point at the `.br` line ([`brook_ir::Module::excerpt`]).

use crate::abi::Variant;
use brook_ir::{SourceSpan, ValidModule};
use std::fmt;

/// Which backend an error comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BackendKind {
    /// Native code for the host CPU ([`crate::cpu`]).
    Cpu,
    /// PTX for NVIDIA GPUs ([`crate::ptx`]).
    Ptx,
    /// SPIR-V for Vulkan devices ([`crate::spirv`]).
    Spirv,
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BackendKind::Cpu => "the CPU",
            BackendKind::Ptx => "CUDA (PTX)",
            BackendKind::Spirv => "Vulkan (SPIR-V)",
        })
    }
}

/// What a device compiles kernels for (the options of its backend), so that tools compile
/// exactly what the device would.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CodeTarget {
    /// Native code for the host CPU.
    Cpu,
    /// PTX for this GPU.
    Ptx(crate::ptx::Target),
}

/// Why a kernel could not be compiled.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CompileError {
    /// The kernel uses something the backend cannot compile.
    #[error("kernel `{kernel}` cannot be compiled for {backend}: {construct} is not supported")]
    Unsupported {
        backend: BackendKind,
        kernel: String,
        span: SourceSpan,
        construct: String,
    },
    /// The backend's code generator rejected what it was given (a defect in the backend).
    #[error("kernel `{kernel}`: the code generator of {backend} failed: {message}")]
    Codegen {
        backend: BackendKind,
        kernel: String,
        message: String,
    },
    /// The machine is not one the backend can compile for.
    #[error("{backend} cannot compile for this machine: {message}")]
    Host {
        backend: BackendKind,
        message: String,
    },
}

impl CompileError {
    /// Where in the source the problem is, when it has a place.
    pub fn span(&self) -> Option<SourceSpan> {
        match self {
            CompileError::Unsupported { span, .. } => Some(*span),
            _ => None,
        }
    }
}

/// A backend: IR kernels in, something the runtime can run out.
pub trait Backend {
    const KIND: BackendKind;
    /// What the backend is told of the machine (the PTX target; nothing for the host CPU).
    type Options;
    /// What it makes: compiled code, or text for a driver to compile.
    type Artifact;

    /// Compiles kernel `kernel` of `module`, specialised for `variant`.
    fn compile(
        module: &ValidModule,
        kernel: usize,
        variant: &Variant,
        options: &Self::Options,
    ) -> Result<Self::Artifact, CompileError>;
}
