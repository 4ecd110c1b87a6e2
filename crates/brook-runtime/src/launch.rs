//! Kernel launch: checking arguments against a kernel's signature, finding the domain, and
//! handing a validated [`Launch`] to the device.
//!
//! The checks, in order (seed 003 section 8): argument count; each argument's kind (stream or
//! value) and element type; every stream on the launch device; no input carrying an earlier
//! error; outputs of one shape (the domain); inputs of the domain's rank (other shapes are
//! resized); gather and scatter arrays of at most their declared rank and of their declared
//! sizes; no stream bound as both input and output (unless `BRT_PERMIT_READ_WRITE_ALIASING` is
//! set: then the input is copied first, so the result equals the unaliased one). An input never
//! written gets a warning. A refused launch marks every output stream with the error.

use crate::device::{same_device, Device};
use crate::element::{Element, ElementType};
use crate::error::{ArgRef, LaunchError, LaunchProblem, RuntimeError};
use crate::stream::RawStream;
use brook_ir::launch::normalized_shape;
use brook_ir::{Kernel, KernelKind, Module, ParamRole};
use std::sync::Arc;

/// A value passed for a constant parameter: its type and its bytes in C layout.
#[derive(Clone, Debug, PartialEq)]
pub struct Constant {
    pub element: ElementType,
    pub bytes: Vec<u8>,
}

impl Constant {
    pub fn of<T: Element>(value: T) -> Constant {
        Constant {
            element: T::element_type(),
            bytes: crate::element::as_bytes(std::slice::from_ref(&value)).to_vec(),
        }
    }
}

/// One argument of a launch, in parameter order.
#[derive(Clone, Debug)]
pub enum Arg<'a> {
    Stream(&'a RawStream),
    Constant(Constant),
}

impl Arg<'_> {
    fn describe(&self) -> String {
        match self {
            Arg::Stream(s) => format!("a {} stream", s.element()),
            Arg::Constant(c) => format!("a {} value", c.element),
        }
    }
}

/// A validated argument, as devices see it.
#[derive(Clone, Debug)]
pub enum Bound {
    /// A stream with its shape: normalized for inputs and outputs, padded with leading 1s to the
    /// declared rank for gather and scatter arrays.
    Stream {
        stream: RawStream,
        shape: Vec<usize>,
    },
    /// A constant's bytes, of the parameter's type.
    Constant(Vec<u8>),
}

/// A validated launch.
pub struct Launch<'a> {
    pub module: &'a Module,
    pub kernel: &'a Kernel,
    /// The execution domain, slowest axis first, without leading 1s.
    pub domain: Vec<usize>,
    pub args: Vec<Bound>,
}

/// What a successful launch reports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaunchReport {
    /// Warnings (also appended to the outputs' error logs).
    pub warnings: Vec<String>,
}

/// Validates and runs a launch of `kernel` (which must belong to `module`).
pub fn launch(
    module: &Module,
    kernel: &Kernel,
    args: &[Arg<'_>],
) -> Result<LaunchReport, LaunchError> {
    let outputs: Vec<&RawStream> = kernel
        .params
        .iter()
        .zip(args)
        .filter(|(p, _)| p.role.is_written())
        .filter_map(|(_, a)| match a {
            Arg::Stream(s) => Some(*s),
            Arg::Constant(_) => None,
        })
        .collect();
    let fail = |problem: LaunchProblem| {
        let error = LaunchError {
            kernel: kernel.name.clone(),
            problem,
        };
        for output in &outputs {
            output.record_error(error.code(), &error.to_string());
        }
        error
    };
    let checked = Checker {
        module,
        kernel,
        args,
    }
    .run()
    .map_err(fail)?;
    let launch = Launch {
        module,
        kernel,
        domain: checked.domain,
        args: checked.bound,
    };
    checked.device.launch(&launch).map_err(fail)?;
    for output in &outputs {
        output.mark_initialized();
        for warning in &checked.warnings {
            output.record_warning(warning);
        }
    }
    Ok(LaunchReport {
        warnings: checked.warnings,
    })
}

struct Checked {
    device: Arc<dyn Device>,
    domain: Vec<usize>,
    bound: Vec<Bound>,
    warnings: Vec<String>,
}

struct Checker<'a, 'b> {
    module: &'a Module,
    kernel: &'a Kernel,
    args: &'a [Arg<'b>],
}

type Check<T> = Result<T, LaunchProblem>;

impl Checker<'_, '_> {
    fn arg_ref(&self, index: usize) -> ArgRef {
        ArgRef {
            position: index + 1,
            name: self.kernel.params[index].name.clone(),
        }
    }

    fn run(&self) -> Check<Checked> {
        if self.kernel.kind == KernelKind::Reduce {
            return Err(LaunchProblem::NotSupported(
                "No appropriate map technique found: reductions are not supported by this version of the runtime".into(),
            ));
        }
        if self.args.len() != self.kernel.params.len() {
            return Err(LaunchProblem::ArgumentCount {
                expected: self.kernel.params.len(),
                found: self.args.len(),
            });
        }
        for index in 0..self.args.len() {
            self.kind_and_type(index)?;
        }
        let device = self.launch_device()?;
        self.inputs_without_errors()?;
        let domain = self.domain()?;
        let aliasing_allowed = std::env::var_os("BRT_PERMIT_READ_WRITE_ALIASING").is_some();
        let mut bound = Vec::with_capacity(self.args.len());
        for index in 0..self.args.len() {
            bound.push(self.bind(index, &domain, aliasing_allowed)?);
        }
        Ok(Checked {
            device,
            domain,
            bound,
            warnings: self.uninitialized_inputs(),
        })
    }

    fn kind_and_type(&self, index: usize) -> Check<()> {
        let param = &self.kernel.params[index];
        let arg = &self.args[index];
        let expected_type = ElementType::from_ir(self.module, &param.ty);
        let (wants_stream, what) = match &param.role {
            ParamRole::Constant => (false, "value"),
            ParamRole::Gather { .. } => (true, "gather array stream"),
            ParamRole::Scatter { .. } => (true, "scatter array stream"),
            ParamRole::Output => (true, "output stream"),
            _ => (true, "stream"),
        };
        let type_name = self.module.type_name(&param.ty);
        let matches = match (arg, &expected_type) {
            (Arg::Stream(s), Some(t)) => wants_stream && s.element().same_layout(t),
            (Arg::Constant(c), Some(t)) => !wants_stream && c.element.same_layout(t),
            _ => false,
        };
        if matches {
            return Ok(());
        }
        Err(LaunchProblem::ArgumentKind {
            arg: self.arg_ref(index),
            expected: format!("a {type_name} {what}"),
            found: arg.describe(),
        })
    }

    fn streams(&self) -> impl Iterator<Item = (usize, &RawStream)> {
        self.args.iter().enumerate().filter_map(|(i, a)| match a {
            Arg::Stream(s) => Some((i, *s)),
            Arg::Constant(_) => None,
        })
    }

    fn is_written(&self, index: usize) -> bool {
        self.kernel.params[index].role.is_written()
    }

    /// The device of the first output (or first stream); every stream must be on it.
    fn launch_device(&self) -> Check<Arc<dyn Device>> {
        let first = self
            .streams()
            .find(|(i, _)| self.is_written(*i))
            .or_else(|| self.streams().next());
        let Some((_, first)) = first else {
            return Err(LaunchProblem::NoDomain);
        };
        let device = first.device().clone();
        for (index, stream) in self.streams() {
            if !same_device(stream.device(), &device) {
                return Err(LaunchProblem::OtherDevice {
                    arg: self.arg_ref(index),
                    which: if self.is_written(index) {
                        "Output"
                    } else {
                        "Input"
                    },
                    expected: device.info().to_string(),
                    found: stream.device().info().to_string(),
                });
            }
        }
        Ok(device)
    }

    fn inputs_without_errors(&self) -> Check<()> {
        for (index, stream) in self.streams().filter(|(i, _)| !self.is_written(*i)) {
            if let Some(code) = stream.error() {
                return Err(LaunchProblem::InputInError {
                    arg: self.arg_ref(index),
                    code,
                });
            }
        }
        Ok(())
    }

    /// The shape of the first output stream; other outputs must have it. A kernel with only
    /// scatter outputs runs over its first input stream.
    fn domain(&self) -> Check<Vec<usize>> {
        let outputs: Vec<(usize, &RawStream)> = self
            .streams()
            .filter(|(i, _)| self.kernel.params[*i].role == ParamRole::Output)
            .collect();
        if let Some((_, first)) = outputs.first() {
            let domain = normalized_shape(first.shape()).to_vec();
            for (index, other) in &outputs[1..] {
                if normalized_shape(other.shape()) != domain {
                    return Err(LaunchProblem::OutputShape {
                        arg: self.arg_ref(*index),
                        expected: first.shape().to_vec(),
                        found: other.shape().to_vec(),
                    });
                }
            }
            return Ok(domain);
        }
        self.streams()
            .find(|(i, _)| {
                matches!(
                    self.kernel.params[*i].role,
                    ParamRole::Input | ParamRole::Iterator
                )
            })
            .map(|(_, s)| normalized_shape(s.shape()).to_vec())
            .ok_or(LaunchProblem::NoDomain)
    }

    fn bind(&self, index: usize, domain: &[usize], aliasing_allowed: bool) -> Check<Bound> {
        let stream = match &self.args[index] {
            Arg::Constant(c) => return Ok(Bound::Constant(c.bytes.clone())),
            Arg::Stream(s) => *s,
        };
        let role = &self.kernel.params[index].role;
        let shape = match role {
            ParamRole::Gather { dims } => self.array_shape(index, stream, dims)?,
            ParamRole::Scatter { rank } => {
                self.array_shape(index, stream, &vec![None; usize::from(*rank)])?
            }
            ParamRole::Input | ParamRole::Iterator => {
                let shape = normalized_shape(stream.shape()).to_vec();
                if shape.len() != domain.len() {
                    return Err(LaunchProblem::InputRank {
                        arg: self.arg_ref(index),
                        domain: domain.to_vec(),
                        found: stream.shape().to_vec(),
                    });
                }
                shape
            }
            _ => normalized_shape(stream.shape()).to_vec(),
        };
        let stream = if role.is_written() {
            self.distinct_outputs(index, stream)?;
            stream.clone()
        } else {
            self.unaliased_input(index, stream, aliasing_allowed)?
        };
        Ok(Bound::Stream { stream, shape })
    }

    /// A gather or scatter array's shape padded to its rank; its sizes must match the declared.
    fn array_shape(
        &self,
        index: usize,
        stream: &RawStream,
        dims: &[Option<u32>],
    ) -> Check<Vec<usize>> {
        let shape = normalized_shape(stream.shape());
        if shape.len() > dims.len() {
            return Err(LaunchProblem::ArrayShape {
                arg: self.arg_ref(index),
                problem: format!(
                    "the array has {} dimension(s) but the stream has shape {:?}",
                    dims.len(),
                    stream.shape()
                ),
            });
        }
        let mut padded = vec![1; dims.len() - shape.len()];
        padded.extend_from_slice(shape);
        for (axis, (declared, actual)) in dims.iter().zip(&padded).enumerate() {
            if let Some(declared) = declared {
                if *declared as usize != *actual {
                    return Err(LaunchProblem::ArrayShape {
                        arg: self.arg_ref(index),
                        problem: format!(
                            "dimension {} is declared {declared} but the stream has {actual} (shape {:?})",
                            axis + 1,
                            stream.shape()
                        ),
                    });
                }
            }
        }
        Ok(padded)
    }

    fn distinct_outputs(&self, index: usize, stream: &RawStream) -> Check<()> {
        for (other, s) in self
            .streams()
            .filter(|(i, _)| self.is_written(*i) && *i < index)
        {
            if s.same_stream(stream) {
                return Err(LaunchProblem::OutputTwice {
                    arg: self.arg_ref(index),
                    other: self.arg_ref(other),
                });
            }
        }
        Ok(())
    }

    /// An input that is also an output is refused, or copied when aliasing is permitted.
    fn unaliased_input(
        &self,
        index: usize,
        stream: &RawStream,
        aliasing_allowed: bool,
    ) -> Check<RawStream> {
        let output = self
            .streams()
            .find(|(i, s)| self.is_written(*i) && s.same_stream(stream));
        let Some((output, _)) = output else {
            return Ok(stream.clone());
        };
        if !aliasing_allowed {
            return Err(LaunchProblem::Aliased {
                arg: self.arg_ref(index),
                output: self.arg_ref(output),
            });
        }
        let copy = RawStream::new(stream.device(), stream.element().clone(), stream.shape())
            .and_then(|copy| {
                stream
                    .device()
                    .copy(stream.buffer().as_ref(), copy.buffer().as_ref())
                    .map(|()| copy)
            })
            .map_err(|e: RuntimeError| LaunchProblem::Execution(e.to_string()))?;
        Ok(copy)
    }

    fn uninitialized_inputs(&self) -> Vec<String> {
        self.streams()
            .filter(|(i, s)| !self.is_written(*i) && !s.is_initialized())
            .map(|(i, _)| {
                format!(
                    "kernel `{}` {}: Kernel Execution: Uninitialized Input streams. The results might be undefined",
                    self.kernel.name,
                    self.arg_ref(i)
                )
            })
            .collect()
    }
}
