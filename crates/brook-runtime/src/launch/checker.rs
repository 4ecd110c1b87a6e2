//! The state of one launch's checks ([`super::check`]) and what the checks of reductions and
//! regions read from it: argument references, streams, roles and input shapes.

use super::args::{Arg, LaunchOptions};
use crate::error::{ArgRef, LaunchProblem};
use crate::plan::ExecRegion;
use crate::stream::addressing::Dims;
use crate::stream::RawStream;
use brook_ir::launch::normalized_shape;
use brook_ir::{Kernel, Module};

/// One launch being checked: the kernel, the caller's arguments and options.
pub struct Checker<'a, 'b> {
    pub module: &'a Module,
    pub kernel: &'a Kernel,
    pub args: &'a [Arg<'b>],
    pub options: &'a LaunchOptions,
}

pub type Check<T> = Result<T, LaunchProblem>;

/// The shapes a launch runs over.
pub struct Shapes {
    pub domain: Dims,
    pub region: ExecRegion,
    pub reduction_tile: Option<Dims>,
}

impl Checker<'_, '_> {
    pub fn arg_ref(&self, index: usize) -> ArgRef {
        ArgRef {
            position: index + 1,
            name: self.kernel.params[index].name.clone(),
        }
    }

    pub fn streams(&self) -> impl Iterator<Item = (usize, &RawStream)> {
        self.args.iter().enumerate().filter_map(|(i, a)| match a {
            Arg::Stream(s) => Some((i, *s)),
            _ => None,
        })
    }

    pub fn is_written(&self, index: usize) -> bool {
        self.kernel.params[index].role.is_written()
    }

    /// The normalized shape of an input-like argument (stream or iterator).
    pub fn input_shape(&self, index: usize) -> Option<Dims> {
        match &self.args[index] {
            Arg::Stream(s) => Some(Dims::from_slice(normalized_shape(s.shape()))),
            Arg::Iterator(i) => Some(Dims::from_slice(normalized_shape(i.shape()))),
            Arg::Constant(_) => None,
        }
    }
}
