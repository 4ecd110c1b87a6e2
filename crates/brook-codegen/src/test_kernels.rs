//! Kernels with empty bodies for unit tests of decisions that depend only on a kernel's
//! signature (parameter roles, types, kind).

use brook_ir::{
    Arena, Block, Kernel, KernelKind, Param, ParamRole, ScalarKind, SourceSpan, Type, ValueType,
};

/// A parameter of role `role` holding `width` floats.
pub fn param(role: ParamRole, width: u8) -> Param {
    Param {
        name: "p".into(),
        ty: Type::Value(ValueType {
            kind: ScalarKind::F32,
            width,
        }),
        role,
        span: SourceSpan::default(),
    }
}

/// A kernel of `kind` with `params` and an empty body.
pub fn kernel(kind: KernelKind, params: Vec<Param>) -> Kernel {
    Kernel {
        name: "k".into(),
        kind,
        params,
        group_size: None,
        vouts: Vec::new(),
        locals: Arena::new(),
        exprs: Arena::new(),
        body: Block::new(),
        span: SourceSpan::default(),
    }
}
