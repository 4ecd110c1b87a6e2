//! The Brook kernel IR.
//!
//! Every frontend (Brook `.br`, later LOOM) lowers to this IR and every backend (reference
//! interpreter, CPU JIT, CUDA) executes it. So far this crate holds what all of them share:
//!
//! - [`types`]: scalar and vector value types with their C layout;
//! - [`launch`]: the launch semantics (domain, implicit resize, gather and scatter indices,
//!   iterators, integer arithmetic), written down once with the functions that compute them;
//! - [`reduce_order`]: the canonical reduction order that makes reductions bit-identical on every
//!   backend;
//! - [`arena`]: typed arenas with handles and source spans, the storage of IR nodes.

pub mod arena;
pub mod launch;
pub mod reduce_order;
pub mod types;

pub use arena::{Arena, Handle, SourceSpan};
pub use types::{ScalarKind, ValueType};
