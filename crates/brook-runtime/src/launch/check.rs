//! The launch checks, in order (seed 003 section 8): argument count; each argument's kind
//! (stream, iterator or value) and element type; every stream on the launch device; no input
//! carrying an earlier error; the domain (outputs of one shape, or the reduction shapes, or the
//! execution region); inputs of the domain's rank (other shapes are resized); gather and scatter
//! arrays of at most their declared rank and of their declared sizes; no stream bound as both
//! input and output where their elements overlap (unless `BRT_PERMIT_READ_WRITE_ALIASING` is
//! set: then the input is copied first, so the result equals the unaliased one). An input never
//! written gets a warning.

use super::args::Arg;
use super::checker::{Check, Checker, Shapes};
use super::{reduce, region, scan};
use crate::device::{same_device, Device};
use crate::element::ElementType;
use crate::error::LaunchProblem;
use crate::plan::{Bound, BoundArgs, ConstantBytes, ExecRegion, ScanPlan};
use crate::stream::addressing::Dims;
use crate::stream::RawStream;
use brook_ir::launch::normalized_shape;
use brook_ir::{KernelKind, ParamRole};
use std::sync::Arc;

/// A launch that passed every check: its device, shapes, bound arguments and warnings.
pub struct Checked {
    pub device: Arc<dyn Device>,
    pub domain: Dims,
    pub region: ExecRegion,
    pub reduction_tile: Option<Dims>,
    pub scan: Option<ScanPlan>,
    pub bound: BoundArgs,
    pub warnings: Vec<String>,
}

impl Checker<'_, '_> {
    pub fn run(&self) -> Check<Checked> {
        // A scan's operator first: it decides how many arguments there are.
        let operator = match &self.options.scan {
            Some(_) => Some(scan::operator(self)?),
            None => None,
        };
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
        if let Some(shapes) = self.over_nothing()? {
            return Ok(Checked {
                device,
                domain: shapes.domain,
                region: shapes.region,
                reduction_tile: None,
                scan: None,
                bound: BoundArgs::new(),
                warnings: Vec::new(),
            });
        }
        self.no_empty_streams()?;
        let (shapes, scan) = match (operator, &self.options.scan) {
            (Some(roles), Some(request)) => {
                let (shapes, plan) = scan::shapes(self, request, roles)?;
                (shapes, Some(plan))
            }
            _ if self.kernel.kind == KernelKind::Reduce => (reduce::shapes(self)?, None),
            _ => (self.map_shapes()?, None),
        };
        let mut bound = BoundArgs::new();
        for index in 0..self.args.len() {
            bound.push(self.bind(index, &shapes)?);
        }
        let warnings = self
            .uninitialized_inputs()
            .into_iter()
            .chain(self.partial_group(&shapes.region))
            .collect();
        Ok(Checked {
            device,
            domain: shapes.domain,
            region: shapes.region,
            reduction_tile: shapes.reduction_tile,
            scan,
            bound,
            warnings,
        })
    }

    /// A thread-group kernel with a shared array over instances that are not a whole number
    /// of groups: the last group's threads past the domain do not run, so their shares of the
    /// shared array hold 0 (a program whose every thread stages a share reads those).
    fn partial_group(&self, region: &ExecRegion) -> Option<String> {
        let threads: usize = self
            .kernel
            .group_size?
            .iter()
            .map(|&t| t as usize)
            .product();
        let instances: usize = region.size.iter().product();
        let shares = self.kernel.locals.iter().any(|(_, l)| l.shared);
        (shares && threads > 1 && !instances.is_multiple_of(threads)).then(|| {
            format!(
                "kernel `{}`: Kernel Execution: {instances} instances are not a whole number of thread groups of {threads}: the last group has {} threads, and the shares of the shared array that its missing threads would write hold 0",
                self.kernel.name,
                instances % threads
            )
        })
    }

    /// A launch over an empty domain (an empty `domain()` view, seed 003 section 8 refusing only
    /// a start past its end): a map whose outputs are empty, a reduction or scan whose input or
    /// target is empty. It does nothing and records no error; its shapes are an empty region.
    /// Kernels with vouts keep their own rules.
    fn over_nothing(&self) -> Check<Option<Shapes>> {
        if !self.kernel.vouts.is_empty() {
            return Ok(None);
        }
        let empty = |role: &ParamRole| {
            self.streams()
                .any(|(i, s)| &self.kernel.params[i].role == role && s.is_empty())
        };
        let nothing = match (&self.options.scan, self.kernel.kind) {
            (None, KernelKind::Map) => empty(&ParamRole::Output),
            _ => empty(&ParamRole::Input) || empty(&ParamRole::Reduce),
        };
        if !nothing {
            return Ok(None);
        }
        if self.options.scan.is_none() && self.kernel.kind == KernelKind::Map {
            // Outputs of one shape still (an empty one beside a full one is a mistake).
            self.map_shapes()?;
        }
        Ok(Some(Shapes {
            domain: Dims::new(),
            region: ExecRegion {
                origin: Dims::new(),
                size: smallvec::smallvec![0],
            },
            reduction_tile: None,
        }))
    }

    /// Outside an empty domain, no argument may be an empty stream (a vout kernel may have
    /// pushed no values into it): an instance would read or write nothing.
    fn no_empty_streams(&self) -> Check<()> {
        match self.streams().find(|(_, s)| s.is_empty()) {
            Some((index, _)) => Err(LaunchProblem::EmptyStream {
                arg: self.arg_ref(index),
            }),
            None => Ok(()),
        }
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
            ParamRole::Reduce => (true, "reduction target stream"),
            _ => (true, "stream"),
        };
        if let Arg::Iterator(_) = arg {
            if !matches!(param.role, ParamRole::Input | ParamRole::Iterator) {
                let problem = if param.role.is_written() {
                    "Passing an iterator stream as an output to a kernel is not allowed"
                } else {
                    "an iterator stream can be passed only where the kernel takes an input stream (`T s<>` or `iter T s<>`), not as a gather array or a value"
                };
                return Err(LaunchProblem::Iterator {
                    arg: self.arg_ref(index),
                    problem: problem.into(),
                });
            }
        }
        let matches = match (arg, &expected_type) {
            (Arg::Stream(s), Some(t)) => wants_stream && s.element().same_layout(t),
            (Arg::Iterator(i), Some(t)) => i.element().same_layout(t),
            (Arg::Constant(c), Some(t)) => {
                !wants_stream
                    && (c.element.same_layout(t) || super::convert::converted(c, t).is_some())
            }
            _ => false,
        };
        if matches {
            return Ok(());
        }
        Err(LaunchProblem::ArgumentKind {
            arg: self.arg_ref(index),
            expected: format!("a {} {what}", self.module.type_name(&param.ty)),
            found: arg.describe(),
        })
    }

    /// The device of the first output (or first stream); every stream must be on it. A launch
    /// of iterators and values only runs on the calling thread's device.
    fn launch_device(&self) -> Check<Arc<dyn Device>> {
        let first = self
            .streams()
            .find(|(i, _)| self.is_written(*i))
            .or_else(|| self.streams().next());
        let Some((_, first)) = first else {
            return Ok(crate::registry::current_device());
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

    /// The domain of a map kernel: the shape of its first output stream (other outputs must
    /// have it), else its first input; then the execution region within it.
    fn map_shapes(&self) -> Check<Shapes> {
        let outputs: smallvec::SmallVec<[(usize, &RawStream); 6]> = self
            .streams()
            .filter(|(i, _)| self.kernel.params[*i].role == ParamRole::Output)
            .collect();
        let domain = if let Some((_, first)) = outputs.first() {
            let domain = Dims::from_slice(normalized_shape(first.shape()));
            for (index, other) in &outputs[1..] {
                if normalized_shape(other.shape()) != domain.as_slice() {
                    return Err(LaunchProblem::OutputShape {
                        arg: self.arg_ref(*index),
                        expected: first.shape().to_vec(),
                        found: other.shape().to_vec(),
                    });
                }
            }
            Some(domain)
        } else {
            (0..self.args.len())
                .find(|&i| {
                    matches!(
                        self.kernel.params[i].role,
                        ParamRole::Input | ParamRole::Iterator
                    )
                })
                .and_then(|i| self.input_shape(i))
        };
        region::exec_region(domain, self.options)
    }

    fn bind(&self, index: usize, shapes: &Shapes) -> Check<Bound> {
        let stream = match &self.args[index] {
            Arg::Constant(c) => {
                let param = &self.kernel.params[index];
                let bytes = match ElementType::from_ir(self.module, &param.ty) {
                    Some(t) if !c.element.same_layout(&t) => super::convert::converted(c, &t)
                        .map_or_else(
                            || ConstantBytes::from_slice(&c.bytes),
                            ConstantBytes::from_vec,
                        ),
                    _ => ConstantBytes::from_slice(&c.bytes),
                };
                return Ok(Bound::Constant(bytes));
            }
            Arg::Iterator(iter) => {
                let shape = self.input_shape(index).unwrap_or_default();
                self.input_rank(index, &shape, shapes)?;
                return Ok(Bound::Iterator {
                    iter: (*iter).clone(),
                    shape,
                });
            }
            Arg::Stream(s) => *s,
        };
        let role = &self.kernel.params[index].role;
        let (shape, addressing) = match role {
            ParamRole::Gather { dims } => {
                let shape = self.array_shape(index, stream, dims)?;
                let addressing = stream.addressing().fit(shape.len());
                (shape, addressing)
            }
            ParamRole::Scatter { rank } => {
                let shape = self.array_shape(index, stream, &vec![None; usize::from(*rank)])?;
                let addressing = stream.addressing().fit(shape.len());
                (shape, addressing)
            }
            ParamRole::Reduce if self.options.scan.is_none() => {
                reduce::target_binding(stream, &shapes.domain)
            }
            _ => {
                let shape = Dims::from_slice(normalized_shape(stream.shape()));
                if !role.is_written() {
                    self.input_rank(index, &shape, shapes)?;
                }
                let addressing = stream.addressing().fit(shape.len());
                (shape, addressing)
            }
        };
        let stream = if role.is_written() {
            self.distinct_outputs(index, stream)?;
            stream.clone()
        } else {
            self.unaliased_input(index, stream)?
        };
        let addressing = if stream.same_stream(self.stream_arg(index)) {
            addressing
        } else {
            // An aliased input's copy is a whole, row-major stream.
            crate::stream::Addressing::row_major(stream.shape()).fit(shape.len())
        };
        Ok(Bound::Stream {
            buffer: stream.buffer().clone(),
            shape,
            addressing,
        })
    }

    fn stream_arg(&self, index: usize) -> &RawStream {
        match &self.args[index] {
            Arg::Stream(s) => s,
            _ => unreachable!("stream_arg is called for stream arguments"),
        }
    }

    /// An input's rank must be the domain's (a reduction input defines the domain's rank).
    fn input_rank(&self, index: usize, shape: &[usize], shapes: &Shapes) -> Check<()> {
        if self.kernel.kind == KernelKind::Reduce || shape.len() == shapes.domain.len() {
            return Ok(());
        }
        let found = match &self.args[index] {
            Arg::Stream(s) => s.shape().to_vec(),
            Arg::Iterator(i) => i.shape().to_vec(),
            Arg::Constant(_) => Vec::new(),
        };
        Err(LaunchProblem::InputRank {
            arg: self.arg_ref(index),
            domain: shapes.domain.to_vec(),
            found,
        })
    }

    /// A gather or scatter array's shape padded to its rank; its sizes must match the declared.
    fn array_shape(&self, index: usize, stream: &RawStream, dims: &[Option<u32>]) -> Check<Dims> {
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
        let mut padded: Dims = smallvec::smallvec![1; dims.len() - shape.len()];
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

    /// Two outputs may not share an element.
    fn distinct_outputs(&self, index: usize, stream: &RawStream) -> Check<()> {
        for (other, s) in self
            .streams()
            .filter(|(i, _)| self.is_written(*i) && *i < index)
        {
            if s.overlaps(stream) {
                return Err(LaunchProblem::OutputTwice {
                    arg: self.arg_ref(index),
                    other: self.arg_ref(other),
                });
            }
        }
        Ok(())
    }

    /// An input sharing elements with an output is read from a copy, so the result is as if
    /// every input element were read before any output element is written. One stream bound as
    /// both is refused unless aliasing is permitted; two different views of one stream (or a
    /// stream and a view of it) are always allowed, as Brook+ allowed them.
    fn unaliased_input(&self, index: usize, stream: &RawStream) -> Check<RawStream> {
        let overlapped = self
            .streams()
            .any(|(i, s)| self.is_written(i) && s.overlaps(stream));
        if !overlapped {
            return Ok(stream.clone());
        }
        let same = self
            .streams()
            .find(|(i, s)| self.is_written(*i) && s.same_stream(stream));
        // The environment is read only here, where it matters (a program may set it).
        let allowed = || {
            self.options.permit_read_write_aliasing
                || std::env::var_os("BRT_PERMIT_READ_WRITE_ALIASING").is_some()
        };
        if let Some((output, _)) = same.filter(|_| !allowed()) {
            return Err(LaunchProblem::Aliased {
                arg: self.arg_ref(index),
                output: self.arg_ref(output),
            });
        }
        let copy = RawStream::new(stream.device(), stream.element().clone(), stream.shape())
            .and_then(|copy| copy.assign(stream).map(|()| copy))
            .map_err(|e| LaunchProblem::Execution(e.to_string()))?;
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
