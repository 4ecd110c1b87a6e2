//! The `brook` Python module's native part (`brook._brook`): Brook programs, kernels, streams
//! and devices for Python, over the Rust API (`brook-lang`). `python/brook/__init__.py` is the
//! module users import; it re-exports these and adds what is simpler written in Python.
//!
//! Every Rust error becomes a `brook.BrookError` subclass carrying the rendered diagnostic;
//! launches, waits and copies run without the GIL.

mod device;
mod dlpack;
mod elements;
mod errors;
mod kernel;
mod program;
mod stream;
mod values;

use pyo3::prelude::*;

/// Turns the runtime's profile on or off (`BRT_PROFILE=1` does too).
#[pyfunction]
fn set_profile(on: bool) {
    brook::set_profile(on);
}

/// The profile gathered so far, as the table `BRT_PROFILE=1` prints at exit.
#[pyfunction]
fn profile_report() -> String {
    brook::profile_report()
}

/// Forgets the profile gathered so far.
#[pyfunction]
fn reset_profile() {
    brook::reset_profile();
}

/// Whether this build runs programs over MPI ranks (built with the `mpi` feature).
#[pyfunction]
fn mpi_available() -> bool {
    cfg!(feature = "mpi")
}

#[pymodule]
fn _brook(module: &Bound<'_, PyModule>) -> PyResult<()> {
    // Under `mpirun`, every rank but 0 serves its devices from here on and never returns to
    // its script (rank 0 runs it); a build without MPI says on stderr that each rank runs
    // the script alone.
    brook_runtime::remote::join_job();
    errors::register(module)?;
    module.add_class::<device::PyDevice>()?;
    module.add_class::<stream::PyStream>()?;
    module.add_class::<program::PyProgram>()?;
    module.add_class::<program::PyLoomProgram>()?;
    module.add_class::<kernel::PyKernel>()?;
    module.add_class::<kernel::PyIter>()?;
    module.add_function(wrap_pyfunction!(device::devices, module)?)?;
    module.add_function(wrap_pyfunction!(device::default_device, module)?)?;
    module.add_function(wrap_pyfunction!(set_profile, module)?)?;
    module.add_function(wrap_pyfunction!(profile_report, module)?)?;
    module.add_function(wrap_pyfunction!(reset_profile, module)?)?;
    module.add_function(wrap_pyfunction!(mpi_available, module)?)?;
    Ok(())
}
