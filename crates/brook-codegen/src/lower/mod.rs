//! The target-independent part of lowering a kernel body, written once over [`Target`]: the
//! primitive operations a backend offers (Cranelift instructions for the CPU, PTX for the GPU).
//!
//! - [`binding`]: how each parameter of a launch is reached (the decision from its role and
//!   the launch's variant, and the reads of the parameter block it needs).
//! - [`launch`]: the executable forms of `brook_ir::launch` (what inputs, gathers, `indexof`
//!   and `instance()` read: implicit resize, iterators, clamped indices), over
//!   [`launch::Launch`], which extends the expression walk's [`crate::leaf_walk::LeafOps`].
//!
//! The expression walk over scalar leaves is [`crate::leaf_walk`]; the backends keep their
//! instruction selection for Brook's arithmetic rules, math, memory access details and drivers.

pub mod binding;
pub mod launch;

pub use binding::{bind_params, bound_rank, Binding, StreamRef};

use brook_ir::ScalarKind;

/// The primitive operations of a backend that the shared lowering is written over.
pub trait Target {
    /// One scalar value (a Cranelift `Value`, a PTX register).
    type Leaf: Copy + std::fmt::Debug;
    /// A variable: a value that later code may overwrite (a Cranelift `Variable`, a PTX
    /// register written by `mov`).
    type Var: Copy + std::fmt::Debug;

    /// The `u64` at byte `at` of the launch's parameter block.
    fn block_u64(&mut self, at: u32) -> Self::Leaf;
    /// The scalar of `kind` at byte `at` of the parameter block (a bool is one byte, read as
    /// true when not zero).
    fn block_scalar(&mut self, kind: ScalarKind, at: u32) -> Self::Leaf;
    /// A variable that holds the address of `stream`'s element at the current position: the
    /// backend keeps it up to date as the position moves.
    fn element_variable(&mut self, stream: &StreamRef<Self::Leaf>) -> Self::Var;
}
