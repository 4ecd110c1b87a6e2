//! What a device is handed to run: a [`LaunchPlan`] of buffers, shapes and constant bytes,
//! made by [`fn@crate::launch`] after every check. A plan never refers to streams, so devices do
//! not depend on them; [`block`] turns a plan into what compiled code reads.

pub mod block;

use crate::buffer::Buffer;
use crate::iter::IterStream;
use crate::stream::addressing::{Addressing, Dims};
use brook_ir::{Kernel, ValidModule};
use std::sync::Arc;

/// A validated argument, as devices see it.
#[derive(Clone)]
pub enum Bound {
    /// A stream with its shape (normalized for inputs and outputs, padded with leading 1s to
    /// the declared rank for gather and scatter arrays, the launch domain for a reduction
    /// target) and where the elements of that shape lie in its buffer.
    Stream {
        buffer: Arc<dyn Buffer>,
        shape: Dims,
        addressing: Addressing,
    },
    /// An iterator bound to an input, with its normalized shape.
    Iterator { iter: IterStream, shape: Dims },
    /// A constant's bytes, of the parameter's type.
    Constant(ConstantBytes),
}

/// The box of the domain whose instances run: all of it unless `domainOffset`/`domainSize`
/// were given. Slowest axis first, of the domain's rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecRegion {
    pub origin: Dims,
    pub size: Dims,
}

/// A validated launch: everything a device needs to run it, in buffers, shapes and bytes.
#[derive(Clone)]
pub struct LaunchPlan {
    pub module: Arc<ValidModule>,
    /// The kernel's index in the module.
    pub kernel: usize,
    /// The execution domain, slowest axis first, without leading 1s. For a reduction: the
    /// target's shape, of the input's rank.
    pub domain: Dims,
    /// The instances that run.
    pub region: ExecRegion,
    /// For a reduction: the tile of input elements (per axis) that each target element reduces.
    pub reduction_tile: Option<Dims>,
    /// A reduce kernel launched as a scan: each target position's tile is a row whose
    /// prefixes go to the reduction parameter's stream (bound with the input's shape).
    pub scan: Option<ScanPlan>,
    pub args: BoundArgs,
}

/// A constant's bytes, inline up to a `double2`'s.
pub type ConstantBytes = smallvec::SmallVec<[u8; 16]>;
/// The bound arguments of a launch, inline for up to six parameters.
pub type BoundArgs = smallvec::SmallVec<[Bound; 6]>;

/// A scan's kind and, for an exclusive one, its first prefix's bytes (the target's type).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanPlan {
    pub kind: brook_ir::scan_order::ScanKind,
    pub init: Option<Vec<u8>>,
}

impl LaunchPlan {
    pub fn kernel(&self) -> &Kernel {
        &self.module.kernels[self.kernel]
    }
}

/// Checks that every element of `shape` under `addressing` lies within `bytes`.
pub fn check_extent(
    name: &str,
    shape: &[usize],
    addressing: &Addressing,
    element_size: usize,
    bytes: usize,
) -> Result<(), String> {
    let last = addressing.offset
        + shape
            .iter()
            .zip(&addressing.pitches)
            .map(|(&n, pitch)| n.saturating_sub(1) * pitch)
            .sum::<usize>();
    let end = (last + 1) * element_size;
    if end > bytes {
        return Err(format!(
            "stream `{name}` ({bytes} bytes) is smaller than its shape {shape:?} needs ({end} bytes)"
        ));
    }
    Ok(())
}

/// Checks that a constant's bytes have the size of its parameter's type.
pub fn check_constant(name: &str, bytes: &[u8], element_size: usize) -> Result<(), String> {
    if bytes.len() == element_size {
        Ok(())
    } else {
        Err(format!(
            "constant `{name}` has {} bytes, not {element_size}",
            bytes.len()
        ))
    }
}
