//! The errors of the Rust API.

use brook_runtime::{LaunchError, RuntimeError};

/// Everything that can go wrong through the `brook` API. `Debug` prints the same text as
/// `Display` (so `fn main() -> Result<(), brook::Error>` shows diagnostics as lines); match
/// on the variants for the parts.
#[derive(Clone, thiserror::Error)]
pub enum Error {
    /// The source has errors; the message holds every diagnostic, rendered with source lines.
    #[error("{file}: {count} error(s)\n{rendered}")]
    Compile {
        file: String,
        count: usize,
        rendered: String,
    },
    /// The compiler failed on a program the checker accepted (a defect in Brook).
    #[error("{file}:{line}:{column}: internal compiler error: {message}")]
    Internal {
        file: String,
        line: usize,
        column: usize,
        message: String,
    },
    /// No kernel of this name (only kernels with a body and a `void` result can be launched).
    #[error("no kernel `{name}` in {file}; launchable kernels: {available}")]
    UnknownKernel {
        name: String,
        file: String,
        available: String,
    },
    /// The API was used in a way that cannot work (the message says how to fix it).
    #[error("{0}")]
    Usage(String),
    /// A stream holds an error (after `finish`): its first code and its whole log.
    #[error("the stream holds an error ({code}): {log}")]
    Stream {
        code: brook_runtime::BError,
        log: String,
    },
    #[error(transparent)]
    Launch(Box<LaunchError>),
    #[error(transparent)]
    Runtime(Box<RuntimeError>),
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl From<LaunchError> for Error {
    fn from(e: LaunchError) -> Self {
        Error::Launch(Box::new(e))
    }
}

impl From<Box<LaunchError>> for Error {
    fn from(e: Box<LaunchError>) -> Self {
        Error::Launch(e)
    }
}

impl From<RuntimeError> for Error {
    fn from(e: RuntimeError) -> Self {
        match e {
            RuntimeError::Launch(launch) => Error::Launch(launch),
            other => Error::Runtime(Box::new(other)),
        }
    }
}
