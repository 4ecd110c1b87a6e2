//! Scalar leaves ([`crate::leaves`]) and the Cranelift types that hold them.

pub use crate::leaves::*;
use brook_ir::ScalarKind;
use cranelift_codegen::ir::types;

/// The Cranelift type that holds a scalar of `kind` (bool is an `i8` holding 0 or 1).
pub fn clif_type(kind: ScalarKind) -> types::Type {
    match kind {
        ScalarKind::Bool | ScalarKind::I8 | ScalarKind::U8 => types::I8,
        ScalarKind::I16 | ScalarKind::U16 => types::I16,
        ScalarKind::I32 | ScalarKind::U32 => types::I32,
        ScalarKind::I64 | ScalarKind::U64 => types::I64,
        ScalarKind::F32 => types::F32,
        ScalarKind::F64 => types::F64,
    }
}
