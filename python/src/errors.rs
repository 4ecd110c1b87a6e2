//! Brook's errors as Python exceptions: `BrookError` and one subclass per kind, each carrying
//! the rendered diagnostic (file, line, caret) as its text.

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyUserWarning};
use pyo3::prelude::*;

create_exception!(
    brook,
    BrookError,
    PyException,
    "Every error Brook raises; the text is the rendered diagnostic."
);
create_exception!(
    brook,
    CompileError,
    BrookError,
    "The program has errors: each is shown with its file, line, column and source line."
);
create_exception!(
    brook,
    LaunchError,
    BrookError,
    "A launch was refused: wrong arguments, shapes or a kernel the device cannot run."
);
create_exception!(
    brook,
    StreamError,
    BrookError,
    "A stream holds an error, or a transfer or allocation failed."
);
create_exception!(
    brook,
    UsageError,
    BrookError,
    "The API was used in a way that cannot work; the text says how to fix it."
);
create_exception!(
    brook,
    BrookWarning,
    PyUserWarning,
    "A compiler warning (the program still runs)."
);

/// The Python exception for an error of the Rust API.
pub fn to_py(error: brook::Error) -> PyErr {
    let text = error.to_string();
    match error {
        brook::Error::Compile { .. } | brook::Error::Internal { .. } => CompileError::new_err(text),
        brook::Error::UnknownKernel { .. } | brook::Error::Usage(_) => UsageError::new_err(text),
        brook::Error::Launch(_) => LaunchError::new_err(text),
        brook::Error::Stream { .. } | brook::Error::Runtime(_) => StreamError::new_err(text),
    }
}

/// [`to_py`] for the runtime's errors.
pub fn runtime(error: brook_runtime::RuntimeError) -> PyErr {
    to_py(brook::Error::from(error))
}

/// A usage error with `text`.
pub fn usage(text: impl Into<String>) -> PyErr {
    UsageError::new_err(text.into())
}

/// Registers the exception classes on the module.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    module.add("BrookError", py.get_type::<BrookError>())?;
    module.add("CompileError", py.get_type::<CompileError>())?;
    module.add("LaunchError", py.get_type::<LaunchError>())?;
    module.add("StreamError", py.get_type::<StreamError>())?;
    module.add("UsageError", py.get_type::<UsageError>())?;
    module.add("BrookWarning", py.get_type::<BrookWarning>())?;
    Ok(())
}
