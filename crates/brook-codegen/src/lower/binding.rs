//! How compiled code reaches each parameter of a launch.
//!
//! A launch's parameter block ([`crate::abi`]) holds a record per parameter; the kernel's
//! roles and the launch's [`Variant`] decide what of it a parameter needs ([`Access`]), and
//! [`bind_params`] reads that from the block through the backend's [`Target`].

use super::Target;
use crate::abi::{record, BlockLayout, Variant};
use crate::leaves::leaves;
use brook_ir::{Kernel, KernelKind, Param, ParamRole, ScalarKind, Type};

/// How a parameter is reached from compiled code; `L` is a backend's value, `V` its variable.
#[derive(Clone, Debug)]
pub enum Binding<L, V> {
    /// Nothing to read (a parameter this function does not use).
    Unbound,
    /// The element whose address `addr` holds, kept at the current position: inputs of the
    /// domain's shape and outputs.
    Element { addr: V },
    /// An input of another shape, read through implicit resize.
    Resized { stream: StreamRef<L> },
    /// An iterator; `resized` when its shape differs from the domain.
    Iterator {
        start: Vec<L>,
        end: Vec<L>,
        shape: Vec<L>,
        resized: bool,
    },
    /// A gather or scatter array.
    Array { stream: StreamRef<L> },
    /// A constant's leaves.
    Constant(Vec<L>),
    /// A value held in variables that stores overwrite (a reduction's accumulator).
    Vars(Vec<V>),
    /// A read-only value (a reduction's right operand).
    Values(Vec<L>),
}

/// A stream's address, element offset, shape and pitches (`u64`s loaded from its record),
/// and its element size in bytes.
#[derive(Clone, Debug)]
pub struct StreamRef<L> {
    pub base: L,
    pub offset: L,
    pub shape: Vec<L>,
    pub pitch: Vec<L>,
    pub size: u32,
}

/// What of its record a parameter needs: the decision of [`bind_params`], without the reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Nothing: reduction operands are bound by the reduction driver.
    Unbound,
    /// The constant's value, stored in the block.
    Constant,
    /// The array's record with `rank` axes (gathers and scatters).
    Array { rank: usize },
    /// The iterator's range (`width` floats each end) and its shape.
    Iterator { width: usize, resized: bool },
    /// The stream's record, read through implicit resize.
    Resized,
    /// The stream's record, and a variable following the current element.
    Element,
}

/// The stream record's rank that a launch of `variant` binds for parameter `role`.
pub fn bound_rank(variant: &Variant, role: &ParamRole) -> usize {
    match role {
        ParamRole::Gather { dims } => dims.len(),
        ParamRole::Scatter { rank } => usize::from(*rank),
        _ => variant.rank,
    }
}

/// What parameter `index` of `kernel` needs in a launch of `variant`.
pub fn access(kernel: &Kernel, index: usize, variant: &Variant) -> Access {
    let param: &Param = &kernel.params[index];
    let mode = variant.inputs.get(index).copied().flatten();
    match (&param.role, mode) {
        (ParamRole::Constant, _) => Access::Constant,
        (ParamRole::Gather { .. } | ParamRole::Scatter { .. }, _) => Access::Array {
            rank: bound_rank(variant, &param.role),
        },
        (ParamRole::Reduce, _) => Access::Unbound,
        (ParamRole::Input | ParamRole::Iterator, _) if kernel.kind == KernelKind::Reduce => {
            Access::Unbound
        }
        (_, Some(m)) if m.is_iterator() => Access::Iterator {
            width: width(&param.ty),
            resized: m.is_resized(),
        },
        (_, Some(m)) if m.is_resized() => Access::Resized,
        _ => Access::Element,
    }
}

/// Reads the records of a launch's parameter block into one binding per parameter of
/// `kernel` (see [`access`]).
pub fn bind_params<'ir, T: Target<'ir>>(
    target: &mut T,
    layout: &BlockLayout,
    variant: &Variant,
) -> Vec<Binding<T::Leaf, T::Var>> {
    let (module, kernel) = (target.module(), target.kernel());
    (0..kernel.params.len())
        .map(|index| {
            let param = &kernel.params[index];
            let at = layout.param_offset(index);
            let size = module.layout(&param.ty).size;
            match access(kernel, index, variant) {
                Access::Unbound => Binding::Unbound,
                Access::Constant => Binding::Constant(
                    leaves(module, &param.ty)
                        .iter()
                        .map(|leaf| target.block_scalar(leaf.kind, at + leaf.offset))
                        .collect(),
                ),
                Access::Array { rank } => Binding::Array {
                    stream: stream_ref(target, at, rank, size),
                },
                Access::Iterator { width, resized } => Binding::Iterator {
                    start: floats(target, at + record::ITER_START, width),
                    end: floats(target, at + record::ITER_END, width),
                    shape: axes(target, at + record::SHAPE, variant.rank),
                    resized,
                },
                Access::Resized => Binding::Resized {
                    stream: stream_ref(target, at, variant.rank, size),
                },
                Access::Element => {
                    let stream = stream_ref(target, at, variant.rank, size);
                    Binding::Element {
                        addr: target.element_variable(&stream),
                    }
                }
            }
        })
        .collect()
}

/// Where a reduction's leaves come from: its input stream, or the iterator that computes them.
#[derive(Clone, Debug)]
pub enum Source<L> {
    Stream(StreamRef<L>),
    Iterator {
        start: Vec<L>,
        end: Vec<L>,
        shape: Vec<L>,
    },
}

/// Reads the record of reduction input `input` of `kernel` (a stream or an iterator of the
/// launch's rank).
pub fn reduction_source<'ir, T: Target<'ir>>(
    target: &mut T,
    input: usize,
    layout: &BlockLayout,
    variant: &Variant,
) -> Source<T::Leaf> {
    let (module, kernel) = (target.module(), target.kernel());
    let param = &kernel.params[input];
    let at = layout.param_offset(input);
    let iterator = variant
        .inputs
        .get(input)
        .copied()
        .flatten()
        .is_some_and(|m| m.is_iterator());
    if iterator {
        return Source::Iterator {
            start: floats(target, at + record::ITER_START, width(&param.ty)),
            end: floats(target, at + record::ITER_END, width(&param.ty)),
            shape: axes(target, at + record::SHAPE, variant.rank),
        };
    }
    let size = module.layout(&param.ty).size;
    Source::Stream(stream_ref(target, at, variant.rank, size))
}

/// The number of components of an iterator's type.
fn width(ty: &Type) -> usize {
    match ty {
        Type::Value(v) => usize::from(v.width),
        _ => 1,
    }
}

/// A stream record's address, offset, and `rank` axes of shape and pitch.
pub fn stream_ref<'ir, T: Target<'ir>>(
    target: &mut T,
    at: u32,
    rank: usize,
    size: u32,
) -> StreamRef<T::Leaf> {
    StreamRef {
        base: target.block_u64(at + record::ADDRESS),
        offset: target.block_index(at + record::OFFSET),
        shape: axes(target, at + record::SHAPE, rank),
        pitch: axes(target, at + record::PITCH, rank),
        size,
    }
}

/// `count` consecutive `u64`s of the block, as index leaves.
pub fn axes<'ir, T: Target<'ir>>(target: &mut T, at: u32, count: usize) -> Vec<T::Leaf> {
    (0..count)
        .map(|k| target.block_index(at + 8 * k as u32))
        .collect()
}

/// `count` consecutive `f32`s of the block.
pub fn floats<'ir, T: Target<'ir>>(target: &mut T, at: u32, count: usize) -> Vec<T::Leaf> {
    (0..count)
        .map(|c| target.block_scalar(ScalarKind::F32, at + 4 * c as u32))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::InputMode;
    use crate::test_kernels::{kernel, param};

    #[test]
    fn map_parameters_follow_their_role_and_the_launch_mode() {
        let k = kernel(
            KernelKind::Map,
            vec![
                param(ParamRole::Input, 1),
                param(ParamRole::Input, 1),
                param(ParamRole::Iterator, 3),
                param(ParamRole::Constant, 2),
                param(
                    ParamRole::Gather {
                        dims: vec![None; 3],
                    },
                    1,
                ),
                param(ParamRole::Scatter { rank: 2 }, 1),
                param(ParamRole::Output, 4),
            ],
        );
        let variant = Variant {
            rank: 2,
            inputs: vec![
                Some(InputMode::Direct),
                Some(InputMode::Resized),
                Some(InputMode::IteratorResized),
                None,
                None,
                None,
                None,
            ],
            unit_stride: true,
            narrow_index: false,
            scan: false,
        };
        let found: Vec<Access> = (0..7).map(|i| access(&k, i, &variant)).collect();
        assert_eq!(
            found,
            [
                Access::Element,
                Access::Resized,
                Access::Iterator {
                    width: 3,
                    resized: true
                },
                Access::Constant,
                Access::Array { rank: 3 },
                Access::Array { rank: 2 },
                Access::Element,
            ]
        );
    }

    #[test]
    fn reduction_operands_are_left_to_the_reduction_driver() {
        let k = kernel(
            KernelKind::Reduce,
            vec![
                param(ParamRole::Input, 1),
                param(ParamRole::Constant, 1),
                param(ParamRole::Reduce, 1),
            ],
        );
        let variant = Variant {
            rank: 1,
            inputs: vec![Some(InputMode::Direct), None, None],
            unit_stride: true,
            narrow_index: false,
            scan: false,
        };
        let found: Vec<Access> = (0..3).map(|i| access(&k, i, &variant)).collect();
        assert_eq!(found, [Access::Unbound, Access::Constant, Access::Unbound]);
    }
}
