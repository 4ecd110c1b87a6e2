//! Kernels and their launch arguments.

use crate::error::Error;
use crate::iter::IterStream;
use crate::stream::Stream;
use brook_ir::{KernelKind, ValidModule};
use brook_runtime::element::{as_bytes_mut, ElementType};
use brook_runtime::{Constant, Element, LaunchOptions, LaunchReport, RawStream};
use std::cell::RefCell;
use std::sync::Arc;

/// A kernel of a program. Cloning is cheap; a clone made by [`Kernel::with_domain`] carries
/// its own execution domain.
#[derive(Clone, Debug)]
pub struct Kernel {
    module: Arc<ValidModule>,
    index: usize,
    options: LaunchOptions,
    /// For a LOOM kernel: per parameter, the extents its array must have (the grid it was
    /// compiled for fixes them), or `None` for a value.
    loom: Option<Arc<crate::loom_launch::LoomShapes>>,
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
    pub(crate) fn with_loom_shapes(
        mut self,
        shapes: Arc<crate::loom_launch::LoomShapes>,
    ) -> Kernel {
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

    /// Launches of this kernel scan (see [`Kernel::scan`]).
    pub(crate) fn set_scan(&mut self, request: brook_runtime::ScanRequest) {
        self.options.scan = Some(request);
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
            let mut made = Vec::new();
            let all = crate::loom_launch::arguments(self, shapes, args, &mut made)?;
            return self.launch_checked(&all);
        }
        self.launch_checked(args)
    }

    fn launch_checked(&self, args: &[Arg<'_>]) -> Result<LaunchReport, Error> {
        self.vout_arguments(args)?;
        let mut host_targets = Vec::new();
        let mut temps: smallvec::SmallVec<[Option<RawStream>; 8]> = smallvec::SmallVec::new();
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
        let raw: smallvec::SmallVec<[brook_runtime::Arg<'_>; 8]> = args
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
        if report.over_nothing {
            return Ok(report); // host targets keep their values
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
        if self.ir().vouts.is_empty() && !args.iter().any(|a| matches!(a, Arg::Vout(_))) {
            return Ok(()); // nothing to check (and nothing to allocate per launch)
        }
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
pub(crate) fn launch_device(args: &[Arg<'_>]) -> Arc<dyn brook_runtime::Device> {
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
