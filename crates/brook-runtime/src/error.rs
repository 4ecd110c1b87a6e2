//! Runtime errors: the Brook+ `BError` codes kept on streams, and the typed errors the Rust API
//! returns. Messages follow seed 003 section 8 and name the kernel, argument and expectation.

use std::fmt;

/// The Brook+ stream error codes (seed 001), in their C order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[repr(C)]
pub enum BError {
    NoError = 0,
    Declaration,
    Read,
    Write,
    Kernel,
    Domain,
    InvalidParameter,
    NotSupported,
}

impl BError {
    /// The C name (`BR_ERROR_KERNEL`).
    pub fn c_name(self) -> &'static str {
        match self {
            BError::NoError => "BR_NO_ERROR",
            BError::Declaration => "BR_ERROR_DECLARATION",
            BError::Read => "BR_ERROR_READ",
            BError::Write => "BR_ERROR_WRITE",
            BError::Kernel => "BR_ERROR_KERNEL",
            BError::Domain => "BR_ERROR_DOMAIN",
            BError::InvalidParameter => "BR_ERROR_INVALID_PARAMATER",
            BError::NotSupported => "BR_ERROR_NOT_SUPPORTED",
        }
    }
}

impl fmt::Display for BError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.c_name())
    }
}

/// An argument of a launch, for messages: position (1-based) and parameter name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgRef {
    pub position: usize,
    pub name: String,
}

impl fmt::Display for ArgRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "argument {} (`{}`)", self.position, self.name)
    }
}

/// Why a launch was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LaunchProblem {
    #[error("expected {expected} arguments, got {found}")]
    ArgumentCount { expected: usize, found: usize },
    #[error("{arg}: expected {expected}, got {found}")]
    ArgumentKind {
        arg: ArgRef,
        expected: String,
        found: String,
    },
    #[error("{arg}: Kernel Execution: {which} stream device is different from current device: the stream is on {found}, the launch runs on {expected}")]
    OtherDevice {
        arg: ArgRef,
        which: &'static str,
        expected: String,
        found: String,
    },
    #[error("{arg}: Kernel Execution: Invalid Input stream: it holds an earlier error ({code})")]
    InputInError { arg: ArgRef, code: super::BError },
    #[error("{arg}: Kernel Execution: Invalid stream: it was not created ({reason})")]
    NotCreated { arg: ArgRef, reason: String },
    #[error("{arg}: Kernel Execution: Input stream is same as output stream. Binding kernels read-write is prohibited (build with brcc -g, the BrookGPU dialect, or set BRT_PERMIT_READ_WRITE_ALIASING to allow it)")]
    Aliased { arg: ArgRef, output: ArgRef },
    #[error("{arg}: the same stream is bound to two outputs ({other})")]
    OutputTwice { arg: ArgRef, other: ArgRef },
    #[error("{arg}: Kernel Execution: output stream dimension doesn't match with first output dimension: {found:?} vs {expected:?}")]
    OutputShape {
        arg: ArgRef,
        expected: Vec<usize>,
        found: Vec<usize>,
    },
    #[error("{arg}: Kernel Execution: input stream rank doesn't match with first output rank: shape {found:?} onto domain {domain:?}")]
    InputRank {
        arg: ArgRef,
        domain: Vec<usize>,
        found: Vec<usize>,
    },
    #[error("{arg}: {problem}")]
    ArrayShape { arg: ArgRef, problem: String },
    #[error("the kernel has no output and no input stream to define its domain: set one with a domain size")]
    NoDomain,
    #[error("{arg}: Kernel Execution: Reduction operation don't allow output rank > input rank: target {target:?}, input {input:?}")]
    ReduceRank {
        arg: ArgRef,
        input: Vec<usize>,
        target: Vec<usize>,
    },
    #[error("{arg}: Kernel Execution: Input dimensions should be integral multiple of output dimensions: {detail}")]
    ReduceShape { arg: ArgRef, detail: String },
    #[error("{arg}: {problem}")]
    Iterator { arg: ArgRef, problem: String },
    /// A scan the kernel or its streams cannot do, and why.
    #[error("{arg}: Kernel Execution: a scan {problem}")]
    Scan { arg: ArgRef, problem: String },
    #[error("Kernel Execution: invalid execution domain: {0}")]
    ExecDomain(String),
    #[error("Kernel Execution: {0}")]
    NotSupported(String),
    /// The device's backend cannot compile the kernel; `at` shows the source line, when the
    /// program kept its source.
    #[error("{error}{}", at.as_ref().map(|a| format!("\n{a}")).unwrap_or_default())]
    Compile {
        error: brook_codegen::CompileError,
        at: Option<String>,
    },
    /// The launch asks more of the device than it has.
    #[error("Kernel Execution: {0}")]
    DeviceLimit(DeviceLimit),
    /// The kernel computes with a type the device has no arithmetic for; `at` shows where,
    /// when the program kept its source.
    #[error("Kernel Execution: kernel `{kernel}` computes with `{ty}`, which {device} cannot: it lacks {feature}; run it on another device (the CPU device always has `{ty}`){}", at.as_ref().map(|a| format!("\n{a}")).unwrap_or_default())]
    DeviceType {
        kernel: String,
        ty: &'static str,
        device: String,
        feature: &'static str,
        at: Option<String>,
    },
    /// The kernel uses an operation on `float` that the device computes only through
    /// `double`, which it lacks; `at` shows where, when the program kept its source.
    #[error("Kernel Execution: kernel `{kernel}` uses `{operation}` on `float`, which {device} computes through `double` and cannot: it lacks {feature}; run it on another device (the CPU device always can){}", at.as_ref().map(|a| format!("\n{a}")).unwrap_or_default())]
    DeviceOperation {
        kernel: String,
        operation: &'static str,
        device: String,
        feature: &'static str,
        at: Option<String>,
    },
    #[error("execution failed: {0}")]
    Execution(String),
    #[error("vout `{name}`: the instance at {position:?} (x first) pushed {pushed} values, more than its bound of {limit}; its first {limit} were kept (declare a larger `vout [N]`)")]
    VoutOverflow {
        name: String,
        position: Vec<usize>,
        pushed: u32,
        limit: u32,
    },
    #[error("{arg}: the stream is empty (a vout kernel pushed no values into it)")]
    EmptyStream { arg: ArgRef },
}

impl LaunchProblem {
    /// A backend's compile error, with the source line of its span when `module` kept its
    /// source.
    pub fn compile(module: &brook_ir::Module, error: brook_codegen::CompileError) -> Self {
        let at = error.span().and_then(|span| module.excerpt(span));
        LaunchProblem::Compile { error, at }
    }
}

/// A limit of a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// Threads in one thread group (a CUDA block).
    ThreadsPerGroup,
    /// Bytes of shared memory one thread group uses.
    SharedBytesPerGroup,
    /// Loop iterations one subgroup runs, all its loops together, loops its invocations run
    /// apart added (lavapipe ends them).
    LoopIterations,
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Limit::ThreadsPerGroup => "threads per thread group",
            Limit::SharedBytesPerGroup => "bytes of shared memory per thread group",
            Limit::LoopIterations => "loop iterations (or more) in one subgroup",
        })
    }
}

/// A launch that needs more of a device than it has: what, how much, and the device's limit.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the kernel needs {requested} {what}; {device} allows at most {limit}{}", why.as_ref().map(|w| format!(" ({w})")).unwrap_or_default())]
pub struct DeviceLimit {
    pub device: String,
    pub what: Limit,
    pub requested: u64,
    pub limit: u64,
    /// Why the limit is lower than the device's own, where it is (registers per thread).
    pub why: Option<String>,
}

/// A launch error: the kernel, where the program called it (a `.br` line, when known) and
/// what was wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchError {
    pub kernel: String,
    /// `file.br:LINE` of the call in the program's host code.
    pub call_site: Option<String>,
    pub problem: LaunchProblem,
}

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.call_site {
            Some(site) => write!(
                f,
                "kernel `{}` (called at {site}): {}",
                self.kernel, self.problem
            ),
            None => write!(f, "kernel `{}`: {}", self.kernel, self.problem),
        }
    }
}

impl std::error::Error for LaunchError {}

impl LaunchError {
    /// The stream error code the outputs get.
    pub fn code(&self) -> BError {
        match self.problem {
            LaunchProblem::NotSupported(_)
            | LaunchProblem::Compile { .. }
            | LaunchProblem::DeviceLimit(_)
            | LaunchProblem::DeviceType { .. }
            | LaunchProblem::DeviceOperation { .. } => BError::NotSupported,
            LaunchProblem::ArgumentCount { .. }
            | LaunchProblem::ArgumentKind { .. }
            | LaunchProblem::Iterator { .. }
            | LaunchProblem::Scan { .. } => BError::InvalidParameter,
            _ => BError::Kernel,
        }
    }
}

/// Every runtime error.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RuntimeError {
    #[error("Stream Allocation: invalid shape {dims:?}: {problem}")]
    Shape {
        dims: Vec<usize>,
        problem: &'static str,
    },
    #[error("{operation}: the host buffer has {found} elements, the stream {expected}")]
    HostLength {
        operation: &'static str,
        expected: usize,
        found: usize,
    },
    #[error("{operation}: the stream holds {expected} elements, not {found}")]
    ElementType {
        operation: &'static str,
        expected: String,
        found: String,
    },
    #[error("{operation}: the stream has an error ({code}): {log}")]
    StreamInError {
        operation: &'static str,
        code: BError,
        log: String,
    },
    #[error("Stream Allocation: Failed to create buffer of {bytes} bytes on {device}: {reason}")]
    Allocation {
        device: String,
        bytes: usize,
        reason: String,
    },
    #[error("no device `{0}`: {1}")]
    NoDevice(String, String),
    /// A stream operation (assign, domain, ...) refused: its code and message.
    #[error("{message}")]
    Stream { code: BError, message: String },
    #[error(transparent)]
    Launch(Box<LaunchError>),
    /// Memory could not be shared with another library in place ([`crate::shared_memory`]).
    #[error("Shared Memory: {0}")]
    Sharing(String),
}

impl RuntimeError {
    /// The stream error code for this error.
    pub fn code(&self) -> BError {
        match self {
            RuntimeError::Shape { .. } | RuntimeError::Allocation { .. } => BError::Declaration,
            RuntimeError::HostLength { operation, .. }
            | RuntimeError::ElementType { operation, .. }
            | RuntimeError::StreamInError { operation, .. } => {
                if operation.contains("Write") {
                    BError::Write
                } else {
                    BError::Read
                }
            }
            RuntimeError::NoDevice(..) | RuntimeError::Sharing(_) => BError::NotSupported,
            RuntimeError::Stream { code, .. } => *code,
            RuntimeError::Launch(e) => e.code(),
        }
    }
}

impl From<LaunchError> for RuntimeError {
    fn from(e: LaunchError) -> Self {
        RuntimeError::Launch(Box::new(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brook_codegen::{BackendKind, CompileError};
    use brook_ir::{Module, SourceFile, SourceSpan};
    use std::sync::Arc;

    #[test]
    fn a_compile_error_shows_the_source_line_of_its_span() {
        let module = Module {
            source: Some(Arc::new(SourceFile::new(
                "k.br",
                "kernel void k(float x<>, out float r<>) {\n    r = f(x);\n}\n",
            ))),
            ..Module::default()
        };
        let error = CompileError::Unsupported {
            backend: BackendKind::Ptx,
            kernel: "k".into(),
            span: SourceSpan { start: 50, end: 54 },
            construct: "`f`".into(),
        };
        let text = LaunchProblem::compile(&module, error.clone()).to_string();
        assert!(text.starts_with(&error.to_string()), "{text}");
        assert!(text.contains("--> k.br:2:9"), "{text}");
        assert!(text.contains("2 |     r = f(x);"), "{text}");
        let without_source = LaunchProblem::compile(&Module::default(), error.clone());
        assert_eq!(without_source.to_string(), error.to_string());
    }

    #[test]
    fn a_device_limit_names_what_how_much_and_the_limit() {
        let problem = LaunchProblem::DeviceLimit(DeviceLimit {
            device: "NVIDIA H200".into(),
            what: Limit::ThreadsPerGroup,
            requested: 2048,
            limit: 1024,
            why: None,
        });
        assert_eq!(
            problem.to_string(),
            "Kernel Execution: the kernel needs 2048 threads per thread group; NVIDIA H200 allows at most 1024"
        );
        let error = LaunchError {
            kernel: "k".into(),
            call_site: None,
            problem,
        };
        assert_eq!(error.code(), BError::NotSupported);
    }
}
