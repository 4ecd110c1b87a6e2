//! Kernel launch: checking arguments against a kernel's signature, finding the domain, and
//! queueing a validated [`Launch`] on the device.
//!
//! [`launch`] checks everything it can before it returns ([`check`]); a refused launch marks
//! every output stream with the error and returns it. The launch itself runs later, in order,
//! on the device's queue ([`crate::queue`]): if an input turns out to hold an error by then
//! (an earlier queued operation failed), the launch is skipped and its outputs get the error, so
//! errors propagate from inputs to outputs as Brook+ defines.

pub mod block;
mod check;
mod reduce;
mod region;
mod vout;

pub use vout::VoutResult;

use crate::element::{Element, ElementType};
use crate::error::{LaunchError, LaunchProblem};
use crate::iter::IterStream;
use crate::stream::{Addressing, RawStream};
use brook_ir::{Kernel, Module};
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
    Iterator(&'a IterStream),
    Constant(Constant),
}

impl Arg<'_> {
    fn describe(&self) -> String {
        match self {
            Arg::Stream(s) => format!("a {} stream", s.element()),
            Arg::Iterator(i) => format!("a {} iterator stream", i.element()),
            Arg::Constant(c) => format!("a {} value", c.element),
        }
    }
}

/// A validated argument, as devices see it.
#[derive(Clone, Debug)]
pub enum Bound {
    /// A stream with its shape (normalized for inputs and outputs, padded with leading 1s to
    /// the declared rank for gather and scatter arrays, the launch domain for a reduction
    /// target) and where the elements of that shape lie in its buffer.
    Stream {
        stream: RawStream,
        shape: Vec<usize>,
        addressing: Addressing,
    },
    /// An iterator bound to an input, with its normalized shape.
    Iterator { iter: IterStream, shape: Vec<usize> },
    /// A constant's bytes, of the parameter's type.
    Constant(Vec<u8>),
}

/// The box of the domain whose instances run: all of it unless `domainOffset`/`domainSize`
/// were given. Slowest axis first, of the domain's rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecRegion {
    pub origin: Vec<usize>,
    pub size: Vec<usize>,
}

/// A validated launch.
#[derive(Clone, Debug)]
pub struct Launch {
    pub module: Arc<Module>,
    /// The kernel's index in the module.
    pub kernel: usize,
    /// The execution domain, slowest axis first, without leading 1s. For a reduction: the
    /// target's shape, of the input's rank.
    pub domain: Vec<usize>,
    /// The instances that run.
    pub region: ExecRegion,
    /// For a reduction: the tile of input elements (per axis) that each target element reduces.
    pub reduction_tile: Option<Vec<usize>>,
    pub args: Vec<Bound>,
}

impl Launch {
    pub fn kernel(&self) -> &Kernel {
        &self.module.kernels[self.kernel]
    }
}

/// What a caller may set beyond the arguments (Brook+ `KernelInterface`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaunchOptions {
    /// `domainOffset`: the first instance, fastest axis first (a `uint4`).
    pub domain_offset: Option<[usize; 4]>,
    /// `domainSize`: how many instances along each axis, fastest axis first (a `uint4`; 0 in
    /// the components past the domain's rank).
    pub domain_size: Option<[usize; 4]>,
    /// One stream may be bound as an input and an output (the BrookGPU dialect; also
    /// `BRT_PERMIT_READ_WRITE_ALIASING`): the input is read from a copy.
    pub permit_read_write_aliasing: bool,
    /// Where the program called the kernel (`file.br:LINE`), for error messages.
    pub call_site: Option<String>,
}

/// What a successful launch reports.
#[derive(Clone, Debug, Default)]
pub struct LaunchReport {
    /// Warnings (also appended to the outputs' error logs).
    pub warnings: Vec<String>,
    /// For a kernel with vouts: the stream of pushed values for each vout argument, which the
    /// caller puts in place of the stream it passed.
    pub vouts: Vec<VoutResult>,
}

/// Validates a launch of kernel `kernel` of `module` and queues it on the device of its streams.
///
/// Arguments are in the kernel's source order. A kernel with vouts ([`brook_ir::vout`]) runs
/// before this returns, and its results are in [`LaunchReport::vouts`].
pub fn launch(
    module: &Arc<Module>,
    kernel: usize,
    args: &[Arg<'_>],
    options: &LaunchOptions,
) -> Result<LaunchReport, Box<LaunchError>> {
    if module.kernels[kernel].vouts.is_empty() {
        launch_ir(module, kernel, args, options)
    } else {
        vout::launch(module, kernel, args, options)
    }
}

/// [`launch`] with arguments in IR parameter order.
fn launch_ir(
    module: &Arc<Module>,
    kernel: usize,
    args: &[Arg<'_>],
    options: &LaunchOptions,
) -> Result<LaunchReport, Box<LaunchError>> {
    let ir = &module.kernels[kernel];
    let outputs: Vec<RawStream> = ir
        .params
        .iter()
        .zip(args)
        .filter(|(p, _)| p.role.is_written())
        .filter_map(|(_, a)| match a {
            Arg::Stream(s) => Some((*s).clone()),
            _ => None,
        })
        .collect();
    let fail = |problem: LaunchProblem| {
        let error = LaunchError {
            kernel: ir.name.clone(),
            call_site: options.call_site.clone(),
            problem,
        };
        for output in &outputs {
            output.record_error(error.code(), &error.to_string());
        }
        Box::new(error)
    };
    let checked = check::Checker {
        module,
        kernel: ir,
        args,
        options,
    }
    .run()
    .map_err(fail)?;
    for output in &outputs {
        output.mark_initialized();
        for warning in &checked.warnings {
            output.record_warning(warning);
        }
    }
    let launch = Launch {
        module: module.clone(),
        kernel,
        domain: checked.domain,
        region: checked.region,
        reduction_tile: checked.reduction_tile,
        args: checked.bound,
    };
    submit(checked.device, launch, outputs, options.call_site.clone());
    Ok(LaunchReport {
        warnings: checked.warnings,
        vouts: Vec::new(),
    })
}

/// Queues a checked launch; errors found when it runs are recorded on its outputs.
fn submit(
    device: Arc<dyn crate::Device>,
    launch: Launch,
    outputs: Vec<RawStream>,
    call_site: Option<String>,
) {
    let streams: Vec<RawStream> = launch
        .args
        .iter()
        .filter_map(|b| match b {
            Bound::Stream { stream, .. } => Some(stream.clone()),
            _ => None,
        })
        .collect();
    let inputs: Vec<(usize, RawStream)> = launch
        .kernel()
        .params
        .iter()
        .zip(&launch.args)
        .enumerate()
        .filter(|(_, (p, _))| !p.role.is_written())
        .filter_map(|(i, (_, b))| match b {
            Bound::Stream { stream, .. } => Some((i, stream.clone())),
            _ => None,
        })
        .collect();
    let runner = device.clone();
    let ticket = device.queue().submit(move || {
        let problem = match inputs.iter().find(|(_, s)| s.error().is_some()) {
            Some((index, stream)) => Some(LaunchProblem::InputInError {
                arg: crate::ArgRef {
                    position: index + 1,
                    name: launch.kernel().params[*index].name.clone(),
                },
                code: stream.error().unwrap_or(crate::BError::Kernel),
            }),
            None => runner.launch(&launch).err(),
        };
        if let Some(problem) = problem {
            let error = LaunchError {
                kernel: launch.kernel().name.clone(),
                call_site,
                problem,
            };
            for output in &outputs {
                output.record_error(error.code(), &error.to_string());
            }
        }
    });
    for stream in &streams {
        stream.note_job(ticket);
    }
}

/// Checks that every element of `shape` under `addressing` lies within `bytes`.
pub(crate) fn check_extent(
    name: &str,
    shape: &[usize],
    addressing: &Addressing,
    element_size: usize,
    bytes: usize,
) -> Result<(), String> {
    let last: Vec<usize> = shape.iter().map(|&n| n.saturating_sub(1)).collect();
    let end = (addressing.element(&last) + 1) * element_size;
    if end > bytes {
        return Err(format!(
            "stream `{name}` ({bytes} bytes) is smaller than its shape {shape:?} needs ({end} bytes)"
        ));
    }
    Ok(())
}

/// Checks that a constant's bytes have the size of its parameter's type.
pub(crate) fn check_constant(name: &str, bytes: &[u8], element_size: usize) -> Result<(), String> {
    if bytes.len() == element_size {
        Ok(())
    } else {
        Err(format!(
            "constant `{name}` has {} bytes, not {element_size}",
            bytes.len()
        ))
    }
}
