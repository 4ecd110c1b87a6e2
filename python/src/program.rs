//! `brook.Program` and `brook.LoomProgram`: source compiled once, kernels taken by name.

use crate::errors::{to_py, usage, BrookWarning};
use crate::kernel::{Launcher, PyKernel};
use pyo3::prelude::*;
use std::ffi::CString;

/// A compiled Brook program. `Program(source, name="program.br")` compiles `source`; errors
/// raise `brook.CompileError` with every diagnostic, warnings go through `warnings.warn`.
#[pyclass(name = "Program", module = "brook", frozen)]
pub struct PyProgram {
    program: brook::Program,
}

#[pymethods]
impl PyProgram {
    /// `dialect`: `"brookplus"` (the default) or `"brookgpu"` (`brcc -g`); `strict=False` is
    /// `brcc -a` (weak type checking); `defines` are `-D` values (`["N=4", "FAST"]`) for the
    /// preprocessor, which `preprocess=True` runs.
    #[new]
    #[pyo3(signature = (source, name="program.br", *, dialect="brookplus", strict=true, defines=None, preprocess=false))]
    fn new(
        py: Python<'_>,
        source: &str,
        name: &str,
        dialect: &str,
        strict: bool,
        defines: Option<Vec<String>>,
        preprocess: bool,
    ) -> PyResult<PyProgram> {
        let options = brook::CompileOptions {
            strong_types: strict,
            preprocess,
            defines: defines.unwrap_or_default(),
            dialect: match dialect {
                "brookplus" | "brook+" => brook::Dialect::BrookPlus,
                "brookgpu" => brook::Dialect::BrookGpu,
                other => {
                    return Err(usage(format!(
                        "unknown dialect `{other}`: use \"brookplus\" or \"brookgpu\""
                    )))
                }
            },
            ..brook::CompileOptions::default()
        };
        let (name, source) = (name.to_string(), source.to_string());
        let program = py
            .detach(move || brook::Program::compile(&name, &source, &options))
            .map_err(to_py)?;
        warn(py, program.warnings())?;
        Ok(PyProgram { program })
    }

    /// Compiles the file at `path` (its `#include`d headers are read next to it).
    #[staticmethod]
    #[pyo3(signature = (path, *, dialect="brookplus", strict=true, defines=None, preprocess=false))]
    fn from_file(
        py: Python<'_>,
        path: &str,
        dialect: &str,
        strict: bool,
        defines: Option<Vec<String>>,
        preprocess: bool,
    ) -> PyResult<PyProgram> {
        let source = std::fs::read_to_string(path)
            .map_err(|e| usage(format!("cannot read `{path}`: {e}")))?;
        PyProgram::new(py, &source, path, dialect, strict, defines, preprocess)
    }

    /// The kernel called `name`: call it to launch it.
    fn kernel(&self, name: &str) -> PyResult<PyKernel> {
        let kernel = self.program.kernel(name).map_err(to_py)?;
        Ok(PyKernel::new(Launcher::Brook(kernel)))
    }

    /// The names of the kernels that can be launched.
    #[getter]
    fn kernels(&self) -> Vec<String> {
        self.program.kernel_names()
    }

    /// The compiler's warnings, rendered with their source lines ("" when none).
    #[getter]
    fn warnings(&self) -> String {
        self.program.warnings().to_string()
    }

    /// The program's IR as text (what `brcc --emit ir` prints).
    fn ir(&self) -> String {
        self.program.ir_text()
    }

    fn __getattr__(&self, name: &str) -> PyResult<PyKernel> {
        if self.program.kernel_names().iter().any(|k| k == name) {
            return self.kernel(name);
        }
        Err(pyo3::exceptions::PyAttributeError::new_err(format!(
            "the program has no kernel `{name}` (kernels: {})",
            self.program.kernel_names().join(", ")
        )))
    }
}

/// A checked LOOM program: `LoomProgram(source, name="program.loom")`; its kernel is compiled
/// for each grid it runs on (`program.kernel(threads=1024, block=256)`).
#[pyclass(name = "LoomProgram", module = "brook", frozen)]
pub struct PyLoomProgram {
    program: brook::LoomProgram,
}

#[pymethods]
impl PyLoomProgram {
    #[new]
    #[pyo3(signature = (source, name="program.loom"))]
    fn new(source: &str, name: &str) -> PyResult<PyLoomProgram> {
        let program = brook::LoomProgram::from_source(name, source).map_err(to_py)?;
        Ok(PyLoomProgram { program })
    }

    #[staticmethod]
    fn from_file(path: &str) -> PyResult<PyLoomProgram> {
        let program = brook::LoomProgram::from_file(path).map_err(to_py)?;
        Ok(PyLoomProgram { program })
    }

    /// The kernel's name.
    #[getter]
    fn name(&self) -> String {
        self.program.kernel_name().to_string()
    }

    /// The kernel compiled for a grid of `threads` threads in blocks of `block` (ints, or
    /// `(x, y)` pairs for a 2-D grid); `blocks_per_group` as the Rust API's `kernel_grouped`.
    #[pyo3(signature = (threads, block, blocks_per_group=None))]
    fn kernel(
        &self,
        py: Python<'_>,
        threads: &Bound<'_, PyAny>,
        block: &Bound<'_, PyAny>,
        blocks_per_group: Option<u32>,
    ) -> PyResult<PyKernel> {
        let grid = brook::Grid {
            threads: pair(threads)?,
            block: pair(block)?,
        };
        let program = &self.program;
        let kernel = py
            .detach(|| match blocks_per_group {
                Some(n) => program.kernel_grouped(grid, n),
                None => program.kernel(grid),
            })
            .map_err(to_py)?;
        Ok(PyKernel::new(Launcher::Loom(kernel)))
    }
}

/// A grid size: an int (`x`, with `y` 1) or an `(x, y)` pair.
fn pair(value: &Bound<'_, PyAny>) -> PyResult<[u32; 2]> {
    if let Ok(x) = value.extract::<u32>() {
        return Ok([x, 1]);
    }
    value
        .extract::<(u32, u32)>()
        .map(|(x, y)| [x, y])
        .map_err(|_| {
            usage(format!(
                "a grid size is an int or an (x, y) pair, not {}",
                crate::values::describe(value)
            ))
        })
}

/// Sends compiler or launch warnings (rendered text) through Python's `warnings` module.
pub fn warn(py: Python<'_>, text: &str) -> PyResult<()> {
    if text.trim().is_empty() {
        return Ok(());
    }
    let message =
        CString::new(text.trim_end().replace('\0', " ")).map_err(|e| usage(e.to_string()))?;
    PyErr::warn(py, &py.get_type::<BrookWarning>(), &message, 1)
}
