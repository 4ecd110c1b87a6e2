//! `brook.Kernel`: a kernel called like a Python function.
//!
//! Arguments go in parameter order: a `brook.Stream` for a stream parameter (a NumPy array is
//! copied to a stream first where the kernel only reads it), a number or a sequence for a
//! value, a `brook.Iter` for an iterator. A reduction called without its target returns the
//! result as a Python value; a `vout` parameter's stream is replaced by the pushed values.

use crate::errors::{to_py, usage};
use crate::stream::PyStream;
use brook::Arg;
use brook_ir::{KernelKind, ParamRole, SourceParam};
use brook_runtime::{Constant, ElementType, LaunchReport, RawStream, ScanRequest};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use std::cell::RefCell;

/// What launches: a Brook kernel, or a LOOM kernel compiled for its grid.
#[derive(Clone)]
pub enum Launcher {
    Brook(brook::Kernel),
    Loom(brook::LoomKernel),
}

impl Launcher {
    fn ir(&self) -> &brook_ir::Kernel {
        match self {
            Launcher::Brook(k) => k.ir(),
            Launcher::Loom(k) => k.ir(),
        }
    }

    fn module(&self) -> &brook_ir::Module {
        match self {
            Launcher::Brook(k) => k.module().module(),
            Launcher::Loom(k) => k.module().module(),
        }
    }

    fn launch(&self, args: &[Arg<'_>]) -> Result<LaunchReport, brook::Error> {
        match self {
            Launcher::Brook(k) => k.launch(args),
            Launcher::Loom(k) => k.launch(args),
        }
    }
}

/// How a parameter takes its argument.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Takes {
    /// A stream the kernel only reads (a NumPy array is copied to one).
    ReadStream,
    /// A stream the kernel writes.
    WrittenStream,
    Iterator,
    Value,
    Reduce,
    Vout,
}

#[derive(Clone, Debug)]
struct ParamInfo {
    name: String,
    role: &'static str,
    takes: Takes,
    element: Option<ElementType>,
}

/// A kernel of a program: `kernel(a, x, y, out)` launches it.
#[pyclass(name = "Kernel", module = "brook", frozen)]
pub struct PyKernel {
    launcher: Launcher,
    params: Vec<ParamInfo>,
}

/// One argument, converted, holding what the launch borrows.
enum Slot {
    Stream(RawStream),
    Iterator(brook_runtime::IterStream),
    Value(Constant),
    Host(Vec<u8>, ElementType),
    Vout(RawStream),
}

impl PyKernel {
    pub fn new(launcher: Launcher) -> PyKernel {
        let params = parameters(&launcher);
        PyKernel { launcher, params }
    }

    fn is_reduction(&self) -> bool {
        self.launcher.ir().kind == KernelKind::Reduce
            && self.params.last().map(|p| p.takes) == Some(Takes::Reduce)
    }

    /// Converts the arguments, launches, and gives back a host reduction's value.
    fn call<'py>(
        &self,
        py: Python<'py>,
        args: Vec<Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let host_result = self.is_reduction() && args.len() + 1 == self.params.len();
        if args.len() != self.params.len() && !host_result {
            return Err(usage(format!(
                "kernel `{}` takes {} argument(s) ({}), not {}",
                self.launcher.ir().name,
                self.params.len(),
                self.signature(),
                args.len()
            )));
        }
        let device = launch_device(py, &args)?;
        let mut slots = Vec::with_capacity(self.params.len());
        for (param, arg) in self.params.iter().zip(&args) {
            slots.push(self.slot(py, param, arg, &device)?);
        }
        if host_result {
            let element = self.params.last().and_then(|p| p.element.clone());
            let element = element.ok_or_else(|| usage("the reduction has no element type"))?;
            slots.push(Slot::Host(vec![0; element.size()], element));
        }
        let report = {
            let args: Vec<Arg<'_>> = slots.iter_mut().map(as_arg).collect();
            let launcher = self.launcher.clone();
            py.detach(move || launcher.launch(&args)).map_err(to_py)?
        };
        for warning in &report.warnings {
            crate::program::warn(py, warning)?;
        }
        for (result, arg) in report
            .vouts
            .iter()
            .filter_map(|v| Some((v, args.get(v.position)?)))
        {
            arg.cast::<PyStream>()?.get().replace(result.stream.clone());
        }
        match slots.pop() {
            Some(Slot::Host(bytes, element)) if host_result => {
                Ok(Some(crate::values::from_bytes(py, &bytes, &element)?))
            }
            _ => Ok(None),
        }
    }

    /// The argument for one parameter.
    fn slot(
        &self,
        py: Python<'_>,
        param: &ParamInfo,
        arg: &Bound<'_, PyAny>,
        device: &brook::Device,
    ) -> PyResult<Slot> {
        let refuse = |wanted: &str| {
            usage(format!(
                "argument `{}` of kernel `{}` ({}) takes {wanted}, not {}",
                param.name,
                self.launcher.ir().name,
                param.role,
                crate::values::describe(arg)
            ))
        };
        match param.takes {
            Takes::Value => {
                let element = param.element.clone().ok_or_else(|| refuse("a value"))?;
                let bytes = crate::values::to_bytes(arg, &element).map_err(|e| {
                    usage(format!(
                        "argument `{}` of kernel `{}` ({}): {}",
                        param.name,
                        self.launcher.ir().name,
                        param.role,
                        e.value(py)
                    ))
                })?;
                Ok(Slot::Value(Constant { element, bytes }))
            }
            Takes::Iterator => match arg.cast::<PyIter>() {
                Ok(iter) => Ok(Slot::Iterator(iter.get().raw.clone())),
                Err(_) => Err(refuse("a brook.Iter")),
            },
            Takes::Vout => match arg.cast::<PyStream>() {
                Ok(stream) => Ok(Slot::Vout(stream.get().raw())),
                Err(_) => Err(refuse("a brook.Stream (it receives the pushed values)")),
            },
            Takes::WrittenStream | Takes::Reduce => match arg.cast::<PyStream>() {
                Ok(stream) => Ok(Slot::Stream(stream.get().raw())),
                Err(_) => Err(refuse("a brook.Stream (the kernel writes it)")),
            },
            Takes::ReadStream => {
                if let Ok(stream) = arg.cast::<PyStream>() {
                    return Ok(Slot::Stream(stream.get().raw()));
                }
                if arg.hasattr("__array_interface__")? || arg.hasattr("__array__")? {
                    let stream = crate::stream::upload(py, arg, device, param.element.as_ref())?;
                    return Ok(Slot::Stream(stream));
                }
                Err(refuse("a brook.Stream or a NumPy array"))
            }
        }
    }

    fn signature(&self) -> String {
        self.params
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn as_arg(slot: &mut Slot) -> Arg<'_> {
    match slot {
        Slot::Stream(s) => Arg::Stream(s),
        Slot::Iterator(i) => Arg::Iterator(i),
        Slot::Value(c) => Arg::Constant(c.clone()),
        Slot::Host(bytes, element) => Arg::HostValue {
            bytes: RefCell::new(&mut bytes[..]),
            element: element.clone(),
        },
        Slot::Vout(s) => Arg::Vout(RefCell::new(s)),
    }
}

/// The device of the first stream argument, else the calling thread's.
fn launch_device(py: Python<'_>, args: &[Bound<'_, PyAny>]) -> PyResult<brook::Device> {
    for arg in args {
        if let Ok(stream) = arg.cast::<PyStream>() {
            return Ok(brook::Device::from_raw(stream.get().raw().device().clone()));
        }
    }
    Ok(py.detach(brook::Device::current))
}

/// The parameters a caller passes, in order.
fn parameters(launcher: &Launcher) -> Vec<ParamInfo> {
    let (ir, module) = (launcher.ir(), launcher.module());
    let given = match launcher {
        Launcher::Brook(k) => k.argument_count(),
        Launcher::Loom(k) => k.argument_count(),
    };
    brook_ir::source_params(ir)
        .into_iter()
        .take(given)
        .map(|param| match param {
            SourceParam::Vout(v) => ParamInfo {
                name: v.name.clone(),
                role: "vout",
                takes: Takes::Vout,
                element: None,
            },
            SourceParam::Param(_, p) => ParamInfo {
                name: p.name.clone(),
                role: p.role.name(),
                takes: match p.role {
                    ParamRole::Input | ParamRole::Gather { .. } => Takes::ReadStream,
                    ParamRole::Output | ParamRole::Scatter { .. } => Takes::WrittenStream,
                    ParamRole::Iterator => Takes::Iterator,
                    ParamRole::Constant => Takes::Value,
                    ParamRole::Reduce => Takes::Reduce,
                },
                element: ElementType::from_ir(module, &p.ty),
            },
        })
        .collect()
}

#[pymethods]
impl PyKernel {
    /// Launches the kernel. A reduction called without its target returns the result.
    #[pyo3(signature = (*args, out=None))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        out: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let mut args: Vec<Bound<'py, PyAny>> = args.iter().collect();
        args.extend(out);
        self.call(py, args)
    }

    /// The reduction of the arguments (the target left out), as a Python value.
    #[pyo3(signature = (*args))]
    fn reduce<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if !self.is_reduction() {
            return Err(usage(format!(
                "kernel `{}` is not a reduction",
                self.launcher.ir().name
            )));
        }
        let args: Vec<Bound<'py, PyAny>> = args.iter().collect();
        if args.len() + 1 != self.params.len() {
            return Err(usage(format!(
                "reduction `{}` takes {} argument(s) before its target ({}), not {}",
                self.launcher.ir().name,
                self.params.len() - 1,
                self.signature(),
                args.len()
            )));
        }
        let value = self.call(py, args)?;
        value.ok_or_else(|| usage("the reduction ran over nothing"))
    }

    /// The scan of `input` under this reduction's operator into `output` (a new stream of the
    /// input's shape if `None`), which it returns: inclusive, or exclusive from `init`; along
    /// the last axis, or over the whole stream in row-major order (`whole=True`).
    #[pyo3(signature = (input, output=None, *, exclusive=false, init=None, whole=false))]
    fn scan(
        &self,
        py: Python<'_>,
        input: &Bound<'_, PyStream>,
        output: Option<Bound<'_, PyStream>>,
        exclusive: bool,
        init: Option<&Bound<'_, PyAny>>,
        whole: bool,
    ) -> PyResult<Py<PyStream>> {
        let Launcher::Brook(kernel) = &self.launcher else {
            return Err(usage("a LOOM kernel does not scan"));
        };
        let source = input.get().raw();
        let element = source.element().clone();
        let output = match output {
            Some(output) => output,
            None => {
                let fresh = RawStream::new(source.device(), element.clone(), source.shape())
                    .map_err(crate::errors::runtime)?;
                Bound::new(py, PyStream::wrap(fresh))?
            }
        };
        let mut request = match (exclusive, init) {
            (false, None) => ScanRequest::inclusive(),
            (true, Some(init)) => ScanRequest::exclusive(Constant {
                bytes: crate::values::to_bytes(init, &element)?,
                element: element.clone(),
            }),
            (true, None) => return Err(usage("an exclusive scan needs init= (its first value)")),
            (false, Some(_)) => return Err(usage("init= is for exclusive scans (exclusive=True)")),
        };
        if whole {
            request = request.whole_stream();
        }
        let scanned = PyKernel::new(Launcher::Brook(kernel.with_scan(request)));
        let args = vec![input.clone().into_any(), output.clone().into_any()];
        scanned.call(py, args)?;
        Ok(output.unbind())
    }

    /// This kernel over the instances from `offset` of `size` (slowest axis first): Brook+
    /// `domainOffset`/`domainSize`.
    fn with_domain(
        &self,
        offset: &Bound<'_, PyAny>,
        size: &Bound<'_, PyAny>,
    ) -> PyResult<PyKernel> {
        let Launcher::Brook(kernel) = &self.launcher else {
            return Err(usage("a LOOM kernel runs over its grid"));
        };
        let (offset, size) = (
            crate::stream::shape_of(offset)?,
            crate::stream::shape_of(size)?,
        );
        Ok(PyKernel::new(Launcher::Brook(
            kernel.with_domain(&offset, &size),
        )))
    }

    #[getter]
    fn name(&self) -> String {
        self.launcher.ir().name.clone()
    }

    /// The parameters a call takes, in order: `(name, role)` pairs (`in`, `out`, `const`,
    /// `gather`, `scatter`, `reduce`, `iter`, `vout`).
    #[getter]
    fn params(&self) -> Vec<(String, &'static str)> {
        self.params
            .iter()
            .map(|p| (p.name.clone(), p.role))
            .collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "brook.Kernel({}({}))",
            self.launcher.ir().name,
            self.signature()
        )
    }
}

/// An iterator stream, `iter float s<n> = iter(start, end)`: element `i` is
/// `start + (end - start) * i / n`, computed where it is read. `Iter(shape, start, end)`;
/// a 2-D iterator has `float2` starts and ends (`.x` along the columns).
#[pyclass(name = "Iter", module = "brook", frozen)]
pub struct PyIter {
    raw: brook_runtime::IterStream,
}

#[pymethods]
impl PyIter {
    #[new]
    fn new(
        shape: &Bound<'_, PyAny>,
        start: &Bound<'_, PyAny>,
        end: &Bound<'_, PyAny>,
    ) -> PyResult<PyIter> {
        let floats = |v: &Bound<'_, PyAny>| -> PyResult<Vec<f32>> {
            if let Ok(x) = v.extract::<f32>() {
                return Ok(vec![x]);
            }
            v.extract::<Vec<f32>>().map_err(|_| {
                usage(format!(
                    "an iterator's start and end are floats or tuples of 2 to 4 floats, not {}",
                    crate::values::describe(v)
                ))
            })
        };
        let dims = crate::stream::shape_of(shape)?;
        let raw = brook_runtime::IterStream::new(&dims, &floats(start)?, &floats(end)?)
            .map_err(crate::errors::runtime)?;
        Ok(PyIter { raw })
    }

    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.raw.shape())
    }
}
