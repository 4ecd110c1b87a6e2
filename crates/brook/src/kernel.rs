//! Kernels and their launch arguments.

use crate::error::Error;
use crate::iter::IterStream;
use crate::stream::Stream;
use brook_ir::{KernelKind, ValidModule};
use brook_runtime::element::{as_bytes_mut, ElementType};
use brook_runtime::{Constant, Element, LaunchOptions, LaunchReport, RawStream};
use std::cell::RefCell;
use std::sync::Arc;

/// What a LOOM kernel's launches need beyond a Brook kernel's.
#[derive(Debug)]
pub(crate) struct LoomShapes {
    /// Per IR parameter: the extents its array must have (`None` for an axis of any
    /// length), or `None` for a value.
    pub extents: Vec<Option<Vec<Option<usize>>>>,
    /// The caller gives the first `arguments` parameters; each launch makes the rest.
    pub arguments: usize,
    /// What each of the rest is: a zeroed `global` array, or a given array's extent.
    pub hidden: Vec<brook_front::loom::lower::Hidden>,
}

/// A kernel of a program. Cloning is cheap; a clone made by [`Kernel::with_domain`] carries
/// its own execution domain.
#[derive(Clone, Debug)]
pub struct Kernel {
    module: Arc<ValidModule>,
    index: usize,
    options: LaunchOptions,
    /// For a LOOM kernel: per parameter, the extents its array must have (the grid it was
    /// compiled for fixes them), or `None` for a value.
    loom: Option<Arc<LoomShapes>>,
}

impl Kernel {
    /// Kernel `index` of `module`; `permit_read_write_aliasing` for programs compiled in the
    /// BrookGPU dialect.
    pub(crate) fn new(
        module: Arc<ValidModule>,
        index: usize,
        permit_read_write_aliasing: bool,
    ) -> Kernel {
        Kernel {
            module,
            index,
            options: LaunchOptions {
                permit_read_write_aliasing,
                ..LaunchOptions::default()
            },
            loom: None,
        }
    }

    /// This kernel as a LOOM kernel: arrays checked against their extents, `global` arrays
    /// made by each launch.
    pub(crate) fn with_loom_shapes(mut self, shapes: Arc<LoomShapes>) -> Kernel {
        self.loom = Some(shapes);
        self
    }

    /// How many arguments a launch takes (a LOOM kernel's `global` arrays are not given).
    pub fn argument_count(&self) -> usize {
        match &self.loom {
            Some(shapes) => shapes.arguments,
            None => self.ir().params.len(),
        }
    }

    /// A LOOM launch's arguments: the given ones, checked against their extents, then a
    /// zeroed stream for each `global` array, on the device of the first stream given.
    fn loom_arguments<'s>(
        &self,
        shapes: &LoomShapes,
        args: &'s [Arg<'_>],
        made: &'s mut Vec<RawStream>,
    ) -> Result<Vec<Arg<'s>>, Error> {
        let params = &self.ir().params;
        let mut all = Vec::with_capacity(params.len());
        for ((arg, extents), param) in args.iter().zip(&shapes.extents).zip(params) {
            all.push(match arg {
                Arg::Stream(stream) => {
                    if let Some(extents) = extents {
                        let fits = stream.shape().len() == extents.len()
                            && stream
                                .shape()
                                .iter()
                                .zip(extents)
                                .all(|(&n, e)| e.is_none_or(|e| e == n));
                        if !fits {
                            let wanted: Vec<String> = extents
                                .iter()
                                .map(|e| e.map_or_else(|| "any".to_string(), |n| n.to_string()))
                                .collect();
                            return Err(Error::Usage(format!(
                                "`{}` of kernel `{}` is an array of [{}] on the grid the kernel was compiled for, and the stream has shape {:?}",
                                param.name,
                                self.name(),
                                wanted.join(", "),
                                stream.shape()
                            )));
                        }
                    }
                    Arg::Stream(stream)
                }
                Arg::Constant(c) => Arg::Constant(c.clone()),
                _ => {
                    return Err(Error::Usage(format!(
                        "kernel `{}` takes streams for arrays and values for the rest",
                        self.name()
                    )))
                }
            });
        }
        let device = launch_device(args);
        // The hidden values in their order: `None` where a made stream goes.
        let mut values: Vec<Option<Constant>> = Vec::with_capacity(shapes.hidden.len());
        for (k, hidden) in shapes.hidden.iter().enumerate() {
            let index = shapes.arguments + k;
            match hidden {
                brook_front::loom::lower::Hidden::Global => {
                    let param = &params[index];
                    let dims: Vec<usize> = shapes
                        .extents
                        .get(index)
                        .cloned()
                        .flatten()
                        .unwrap_or_default()
                        .into_iter()
                        .map(|d| d.unwrap_or(1))
                        .collect();
                    let element =
                        ElementType::from_ir(self.module(), &param.ty).ok_or_else(|| {
                            Error::Usage(format!(
                                "global array `{}` has no element type",
                                param.name
                            ))
                        })?;
                    let stream = RawStream::new(&device, element.clone(), &dims)?;
                    stream.read_bytes(&element, &vec![0u8; stream.len() * element.size()])?;
                    made.push(stream);
                    values.push(None);
                }
                brook_front::loom::lower::Hidden::Extent { param, axis } => {
                    let length = match args.get(*param) {
                        Some(Arg::Stream(s)) => s.shape().get(*axis).copied().unwrap_or(0),
                        _ => 0,
                    };
                    let length = i32::try_from(length).map_err(|_| {
                        Error::Usage(format!("an array of {length} elements along an axis is longer than a LOOM index reaches (2^31 - 1)"))
                    })?;
                    values.push(Some(Constant {
                        element: ElementType::Value(brook_ir::ValueType::scalar(
                            brook_ir::ScalarKind::I32,
                        )),
                        bytes: length.to_le_bytes().to_vec(),
                    }));
                }
            }
        }
        let mut streams = made.iter();
        for value in values {
            match value {
                Some(constant) => all.push(Arg::Constant(constant)),
                None => {
                    if let Some(stream) = streams.next() {
                        all.push(Arg::Stream(stream));
                    }
                }
            }
        }
        Ok(all)
    }

    pub fn name(&self) -> &str {
        &self.module.kernels[self.index].name
    }

    pub fn ir(&self) -> &brook_ir::Kernel {
        &self.module.kernels[self.index]
    }

    /// The program's IR, which the kernel belongs to.
    pub fn module(&self) -> &ValidModule {
        &self.module
    }

    /// This kernel restricted to the instances from `offset` of `size` (both slowest axis
    /// first, of the domain's rank): Brook+ `domainOffset`/`domainSize`. A kernel whose
    /// streams define no domain (a scatter over values) runs over `offset + size`.
    pub fn with_domain(&self, offset: &[usize], size: &[usize]) -> Kernel {
        let x_first = |v: &[usize]| {
            let mut out = [0; 4];
            for (slot, &value) in out.iter_mut().zip(v.iter().rev()) {
                *slot = value;
            }
            out
        };
        let mut kernel = self.clone();
        kernel.options = LaunchOptions {
            domain_offset: Some(x_first(offset)),
            domain_size: Some(x_first(size)),
            ..self.options.clone()
        };
        kernel
    }

    /// [`Kernel::with_domain`] as the Brook+ C++ `KernelInterface` gives it: `uint4`s, x-first,
    /// components past the domain's rank 0 in `size`.
    pub fn with_domain_x_first(&self, offset: [usize; 4], size: [usize; 4]) -> Kernel {
        let mut kernel = self.clone();
        kernel.options = LaunchOptions {
            domain_offset: Some(offset),
            domain_size: Some(size),
            ..self.options.clone()
        };
        kernel
    }

    /// This kernel with its launch errors naming where the program called it (`sum.br:33`).
    pub fn with_call_site(&self, site: &str) -> Kernel {
        let mut kernel = self.clone();
        kernel.options.call_site = Some(site.to_string());
        kernel
    }

    /// Where launch errors say the kernel was called, if set.
    pub fn call_site(&self) -> Option<&str> {
        self.options.call_site.as_deref()
    }

    /// Launches the kernel with arguments in parameter order (see [`crate::args!`]).
    ///
    /// The launch is checked at once (a refused launch is an `Err`, also recorded on the
    /// output streams) and then queued on the device of its streams: it runs asynchronously,
    /// and reading an output ([`Stream::to_vec`], [`Stream::write`]) waits for it. A reduction
    /// into a host variable (`&mut total`) waits for its result before returning.
    ///
    /// A `vout` parameter takes [`vout`]`(&mut stream)`: when the launch returns, `stream`
    /// holds the values the instances pushed, in domain order (a one-dimensional stream).
    pub fn launch(&self, args: &[Arg<'_>]) -> Result<LaunchReport, Error> {
        if let Some(shapes) = &self.loom {
            if args.len() != shapes.arguments {
                return Err(Error::Usage(format!(
                    "kernel `{}` takes {} arguments, and {} are given",
                    self.name(),
                    shapes.arguments,
                    args.len()
                )));
            }
            let mut made = Vec::new();
            let all = self.loom_arguments(shapes, args, &mut made)?;
            return self.launch_checked(&all);
        }
        self.launch_checked(args)
    }

    fn launch_checked(&self, args: &[Arg<'_>]) -> Result<LaunchReport, Error> {
        self.vout_arguments(args)?;
        let mut host_targets = Vec::new();
        let mut temps: Vec<Option<RawStream>> = Vec::with_capacity(args.len());
        for (index, arg) in args.iter().enumerate() {
            temps.push(match arg {
                Arg::HostValue { element, .. } => {
                    host_targets.push(index);
                    Some(self.host_target(args, element)?)
                }
                Arg::Vout(stream) => Some(stream.borrow().clone()),
                _ => None,
            });
        }
        let raw: Vec<brook_runtime::Arg<'_>> = args
            .iter()
            .zip(&temps)
            .map(|(a, temp)| match (a, temp) {
                (_, Some(temp)) => brook_runtime::Arg::Stream(temp),
                (Arg::Stream(s), None) => brook_runtime::Arg::Stream(s),
                (Arg::Iterator(i), None) => brook_runtime::Arg::Iterator(i),
                (Arg::Constant(c), None) => brook_runtime::Arg::Constant(c.clone()),
                (Arg::HostValue { .. } | Arg::Vout(_), None) => {
                    unreachable!("host values and vouts have a stream")
                }
            })
            .collect();
        let report = brook_runtime::launch(&self.module, self.index, &raw, &self.options)?;
        for result in &report.vouts {
            if let Some(Arg::Vout(stream)) = args.get(result.position) {
                **stream.borrow_mut() = result.stream.clone();
            }
        }
        for index in host_targets {
            let (Arg::HostValue { bytes, element }, Some(temp)) = (&args[index], &temps[index])
            else {
                continue;
            };
            let mut bytes = bytes.borrow_mut();
            temp.write_bytes(element, &mut bytes)?;
        }
        Ok(report)
    }

    /// Each vout parameter gets [`vout`]`(&mut stream)`, and only those do.
    fn vout_arguments(&self, args: &[Arg<'_>]) -> Result<(), Error> {
        let params = brook_ir::source_params(self.ir());
        for (n, (param, arg)) in params.iter().zip(args).enumerate() {
            let is_vout = matches!(param, brook_ir::SourceParam::Vout(_));
            if is_vout != matches!(arg, Arg::Vout(_)) {
                let wanted = if is_vout {
                    "is a vout: pass brook::vout(&mut stream), which receives the pushed values"
                } else {
                    "is not a vout: brook::vout(..) is only for `vout` parameters"
                };
                return Err(Error::Usage(format!(
                    "kernel `{}`: argument {} (`{}`) {wanted}",
                    self.name(),
                    n + 1,
                    param.name()
                )));
            }
        }
        Ok(())
    }

    /// A one-element stream receiving a reduction into a host variable, on the launch's
    /// device.
    fn host_target(&self, args: &[Arg<'_>], element: &ElementType) -> Result<RawStream, Error> {
        let ir = self.ir();
        if ir.kind != KernelKind::Reduce {
            return Err(Error::Usage(format!(
                "kernel `{}`: a host variable (`host_var`) can only receive a reduction; `{}` is not a reduce kernel",
                ir.name, ir.name
            )));
        }
        let device = launch_device(args);
        Ok(RawStream::new(&device, element.clone(), &[1])?)
    }
}

/// The device a launch runs on: its first stream's, else the thread's current device.
fn launch_device(args: &[Arg<'_>]) -> Arc<dyn brook_runtime::Device> {
    args.iter()
        .find_map(|a| match a {
            Arg::Stream(s) => Some(s.device().clone()),
            _ => None,
        })
        .unwrap_or_else(brook_runtime::current_device)
}

/// One argument of a kernel launch: a stream, an iterator, a constant value, or a host variable
/// receiving a reduction.
#[derive(Debug)]
pub enum Arg<'a> {
    Stream(&'a RawStream),
    Iterator(&'a brook_runtime::IterStream),
    Constant(Constant),
    /// [`host_var`]`(&mut total)`: the reduction's result is stored here when the launch
    /// returns.
    HostValue {
        bytes: RefCell<&'a mut [u8]>,
        element: ElementType,
    },
    /// [`vout`]`(&mut stream)`: a vout parameter's stream, replaced by the pushed values.
    Vout(RefCell<&'a mut RawStream>),
}

/// A stream receiving a `vout` parameter's values: after
/// `filter.launch(brook::args![&x, brook::vout(&mut kept)])`, `kept` is a one-dimensional
/// stream of every value pushed, in domain order.
pub fn vout<T: Element>(stream: &mut Stream<T>) -> Arg<'_> {
    Arg::Vout(RefCell::new(stream.raw_mut()))
}

impl<'a, T: Element> From<&'a Stream<T>> for Arg<'a> {
    fn from(stream: &'a Stream<T>) -> Self {
        Arg::Stream(stream.raw())
    }
}

impl<'a, T: crate::iter::IterElement> From<&'a IterStream<T>> for Arg<'a> {
    fn from(iter: &'a IterStream<T>) -> Self {
        Arg::Iterator(iter.raw())
    }
}

impl<T: Element> From<T> for Arg<'_> {
    fn from(value: T) -> Self {
        Arg::Constant(Constant::of(value))
    }
}

/// A host variable receiving a reduction: `sum.launch(brook::args![&x, brook::host_var(&mut total)])`
/// stores the sum of `x` in `total` before `launch` returns.
pub fn host_var<T: Element>(value: &mut T) -> Arg<'_> {
    Arg::HostValue {
        bytes: RefCell::new(as_bytes_mut(std::slice::from_mut(value))),
        element: T::element_type(),
    }
}

/// Builds a launch argument list: `kernel.launch(brook::args![&x, &y, 2.0f32, &out])`; a
/// reduction into a host variable takes [`host_var`]`(&mut total)`.
#[macro_export]
macro_rules! args {
    ($($arg:expr),* $(,)?) => {
        &[$($crate::Arg::from($arg)),*]
    };
}
