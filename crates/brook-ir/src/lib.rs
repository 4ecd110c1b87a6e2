//! The Brook kernel IR.
//!
//! Every frontend (Brook `.br`, later LOOM) lowers to this IR and every backend (reference
//! interpreter, CPU JIT, CUDA) executes it.
//!
//! - [`module`]: a [`Module`] of struct declarations and [`Kernel`]s; each kernel has typed
//!   parameters with their launch roles, locals, an expression arena and a structured body. The
//!   module docs say when expressions are evaluated.
//! - [`expr`] and [`stmt`]: pure typed expression trees and structured statements.
//! - [`intrinsic`]: the intrinsic library in one table (names, operands, exactness) that the
//!   checkers, the validator and the tests read.
//! - [`valid`]: the validator, whose checklist is what every backend may assume.
//! - [`mod@print`]: the text form (`brcc --emit ir`).
//! - [`types`]: scalar and vector value types with their C layout;
//! - [`launch`]: the launch semantics (domain, implicit resize, gather and scatter indices,
//!   iterators, integer arithmetic), written down once with the functions that compute them;
//! - [`reduce_order`]: the canonical reduction order that makes reductions bit-identical on every
//!   backend;
//! - [`lockstep`]: when a thread group's threads may run in lockstep (SIMD lanes) with the
//!   interpreter's results;
//! - [`collective`]: thread-group reduces and scans, their canonical order, and their
//!   expansion into stores and barriers for backends without a native form;
//! - [`builder`]: the [`builder::KernelBuilder`] frontends lower through;
//! - [`unassigned`]: which locals a read may find unassigned (the backends zero only those);
//! - [`weight`]: how much code statements stand for, which unrolling decisions bound;
//! - [`arena`]: typed arenas with handles and source spans, the storage of IR nodes.

pub mod arena;
pub mod builder;
pub mod collective;
pub mod early_exit;
pub mod expr;
pub mod footprint;
pub mod induction;
pub mod intrinsic;
pub mod launch;
pub mod lockstep;
pub mod module;
pub mod print;
pub mod reaching;
pub mod reduce_order;
pub mod same;
pub mod scan_order;
pub mod scope;
pub mod snippet;
pub mod source;
pub mod stmt;
pub mod types;
pub mod unassigned;
pub mod unroll;
pub mod valid;
pub mod vout;
pub mod weight;

pub use arena::{Arena, Handle, SourceSpan};
pub use collective::{Collective, CollectiveOp, Combiner};
pub use expr::{
    Access, BinaryOp, Expr, ExprKind, Literal, MathFun, Place, PlaceRoot, UnaryOp, NO_SPAN,
};
pub use module::{
    FieldDecl, Kernel, KernelKind, Layout, Local, Module, Param, ParamId, ParamRole, StructDecl,
    StructId, Type,
};
pub use source::SourceFile;
pub use stmt::{Block, Statement, Stmt};
pub use types::{ScalarKind, ValueType};
pub use valid::{validate, ValidModule, ValidationError};
pub use vout::{source_params, SourceParam, Vout};
