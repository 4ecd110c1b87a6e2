//! What a kernel may compute on a device without `double` arithmetic (no `shaderFloat64`:
//! Apple GPUs through MoltenVK, Intel's Xe graphics, most mobile GPUs).
//!
//! This dialect computes some `float` operations through `double`, exactly, and rounds once:
//! division and square root (and what is built on them: `normalize`, `length`, `distance`,
//! `rsqrt`), the remainder (`fmod`), `fma` and the math library. Without doubles, division,
//! square root and remainder are computed from 64-bit integers instead
//! ([`crate::mathlib::float32_int`], the same bits); `fma` and the math library have no such
//! form yet, and a kernel using one is refused before it is compiled, naming the operation
//! ([`first_use_needing_doubles`]), as a kernel computing with `double` itself is.

use brook_ir::{ExprKind, Kernel, MathFun, ScalarKind, SourceSpan, Type};

/// The first `float` operation of `kernel` that this dialect computes only through `double`
/// (its name, as the program writes it, and its place), or `None`.
pub fn first_use_needing_doubles(kernel: &Kernel) -> Option<(&'static str, SourceSpan)> {
    kernel.exprs.iter().find_map(|(handle, expr)| {
        let is_float = |ty: &Type| matches!(ty, Type::Value(v) if v.kind == ScalarKind::F32);
        let name = match &expr.kind {
            ExprKind::Math { fun, args } => {
                let on_floats = args.first().is_some_and(|&a| is_float(&kernel.exprs[a].ty));
                let needs = *fun == MathFun::Fma || crate::mathlib::Fun::of(*fun).is_some();
                if !(on_floats && needs) {
                    return None;
                }
                fun.name()
            }
            _ => return None,
        };
        Some((name, kernel.exprs.span(handle)))
    })
}
