//! Flattening IR types into scalar leaves, for every backend.
//!
//! Compiled code keeps every value as a flat list of scalars: a `float3` is three `f32`s, a
//! struct is its fields' leaves in order, an array its elements' leaves. Each leaf also has its
//! byte offset in the C layout, which is how the value lies in memory.

use brook_ir::{Module, ScalarKind, Type};

/// One scalar of a flattened value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Leaf {
    pub kind: ScalarKind,
    /// Byte offset in the C layout of the whole value.
    pub offset: u32,
}

/// The leaves of `ty`, in order.
pub fn leaves(module: &Module, ty: &Type) -> Vec<Leaf> {
    let mut out = Vec::new();
    push_leaves(module, ty, 0, &mut out);
    out
}

fn push_leaves(module: &Module, ty: &Type, base: u32, out: &mut Vec<Leaf>) {
    match ty {
        Type::Value(v) => {
            for c in 0..u32::from(v.width) {
                out.push(Leaf {
                    kind: v.kind,
                    offset: base + c * v.kind.size(),
                });
            }
        }
        Type::Struct(id) => {
            let (_, offsets) = module.struct_layout(*id);
            if let Some(decl) = module.struct_decl(*id) {
                for (field, offset) in decl.fields.iter().zip(offsets) {
                    push_leaves(module, &field.ty, base + offset, out);
                }
            }
        }
        Type::Array { elem, len } => {
            let size = module.layout(elem).size;
            for i in 0..*len {
                push_leaves(module, elem, base + i * size, out);
            }
        }
    }
}

/// How many leaves `ty` has.
pub fn leaf_count(module: &Module, ty: &Type) -> usize {
    match ty {
        Type::Value(v) => usize::from(v.width),
        Type::Struct(id) => module.struct_decl(*id).map_or(0, |d| {
            d.fields.iter().map(|f| leaf_count(module, &f.ty)).sum()
        }),
        Type::Array { elem, len } => leaf_count(module, elem) * *len as usize,
    }
}

/// The first leaf of field `index` of struct type `ty`, and the field's type.
pub fn field_leaf(module: &Module, ty: &Type, index: u32) -> (usize, Type) {
    let Type::Struct(id) = ty else {
        return (0, ty.clone());
    };
    let Some(decl) = module.struct_decl(*id) else {
        return (0, ty.clone());
    };
    let first = decl.fields[..index as usize]
        .iter()
        .map(|f| leaf_count(module, &f.ty))
        .sum();
    (first, decl.fields[index as usize].ty.clone())
}

/// The byte offset of field `index` of struct type `ty`.
pub fn field_offset(module: &Module, ty: &Type, index: u32) -> u32 {
    match ty {
        Type::Struct(id) => module.struct_layout(*id).1[index as usize],
        _ => 0,
    }
}

/// Whether a value of `ty` contains an array (such locals live in memory).
pub fn has_array(module: &Module, ty: &Type) -> bool {
    match ty {
        Type::Value(_) => false,
        Type::Array { .. } => true,
        Type::Struct(id) => module
            .struct_decl(*id)
            .is_some_and(|d| d.fields.iter().any(|f| has_array(module, &f.ty))),
    }
}

/// Whether a value of `ty` holds a scalar of `kind` anywhere.
pub fn holds_kind(module: &Module, ty: &Type, kind: ScalarKind) -> bool {
    match ty {
        Type::Value(v) => v.kind == kind,
        Type::Array { elem, .. } => holds_kind(module, elem, kind),
        Type::Struct(id) => module
            .struct_decl(*id)
            .is_some_and(|d| d.fields.iter().any(|f| holds_kind(module, &f.ty, kind))),
    }
}

/// Where `kernel` first computes with scalars of `kind`: the span of a parameter that holds
/// one, else of a local or an expression that does; `None` where it never does.
pub fn first_use_of_kind(
    module: &Module,
    kernel: &brook_ir::Kernel,
    kind: ScalarKind,
) -> Option<brook_ir::SourceSpan> {
    let param = kernel
        .params
        .iter()
        .find(|p| holds_kind(module, &p.ty, kind))
        .map(|p| p.span);
    let local = || {
        let (h, _) = (kernel.locals.iter()).find(|(_, l)| holds_kind(module, &l.ty, kind))?;
        Some(kernel.locals.span(h))
    };
    let expr = || {
        let (h, _) = (kernel.exprs.iter()).find(|(_, e)| holds_kind(module, &e.ty, kind))?;
        Some(kernel.exprs.span(h))
    };
    param.or_else(local).or_else(expr)
}

/// Walks a place's path through a value held as leaves: the first leaf of the part reached,
/// with `ty` set to its type. Array indices must be integer literals (clamped to the array);
/// a computed index is returned as the error.
pub fn leaf_path(
    kernel: &brook_ir::Kernel,
    module: &Module,
    ty: &mut Type,
    path: &[brook_ir::Access],
) -> Result<usize, brook_ir::Handle<brook_ir::Expr>> {
    use brook_ir::{Access, ExprKind};
    let mut first = 0usize;
    for access in path {
        match *access {
            Access::Field(f) => {
                let (leaf, field_ty) = field_leaf(module, ty, f);
                first += leaf;
                *ty = field_ty;
            }
            Access::Component(c) => {
                if let Type::Value(v) = ty {
                    first += usize::from(c);
                    *ty = Type::Value(brook_ir::ValueType::scalar(v.kind));
                }
            }
            Access::Index(h) => {
                let Type::Array { elem, len } = ty.clone() else {
                    continue;
                };
                let i = match &kernel.exprs[h].kind {
                    ExprKind::Literal(lit) if lit.kind.is_integer() => lit.bits as i64,
                    _ => return Err(h),
                };
                let i = i.clamp(0, i64::from(len) - 1) as usize;
                first += i * leaf_count(module, &elem);
                *ty = *elem;
            }
        }
    }
    Ok(first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use brook_ir::{Expr, ExprKind, KernelKind, Literal, ParamRole, SourceSpan, ValueType};

    #[test]
    fn the_first_use_of_a_kind_is_found_in_params_and_expressions() {
        let module = Module::default();
        let mut kernel = crate::test_kernels::kernel(
            KernelKind::Map,
            vec![crate::test_kernels::param(ParamRole::Input, 1)],
        );
        assert_eq!(first_use_of_kind(&module, &kernel, ScalarKind::F64), None);
        let at = SourceSpan::default();
        let double = Expr {
            kind: ExprKind::Literal(Literal {
                kind: ScalarKind::F64,
                bits: 0,
            }),
            ty: Type::Value(ValueType::scalar(ScalarKind::F64)),
        };
        kernel.exprs.append(double, at);
        assert_eq!(
            first_use_of_kind(&module, &kernel, ScalarKind::F64),
            Some(at)
        );
        assert!(first_use_of_kind(&module, &kernel, ScalarKind::F32).is_some());
        assert_eq!(first_use_of_kind(&module, &kernel, ScalarKind::I8), None);
    }
}
