//! The Brook kernel IR.
//!
//! Every frontend (Brook `.br`, later LOOM) lowers to this IR and every backend (reference
//! interpreter, CPU JIT, CUDA) executes it. This crate currently holds the part of the IR that the
//! frontends already share: the value type system ([`types`]) with its C layout rules. The module
//! arena, the validator and the text printer join it when kernels are lowered.

pub mod launch;
pub mod reduce_order;
pub mod types;

pub use types::{ScalarKind, ValueType};
