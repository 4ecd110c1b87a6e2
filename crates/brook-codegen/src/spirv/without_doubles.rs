//! What a kernel may compute on a device without `double` arithmetic (no `shaderFloat64`:
//! Apple GPUs through MoltenVK, Intel's Xe graphics, most mobile GPUs).
//!
//! This dialect computes some `float` operations through `double`, exactly, and rounds once:
//! division and square root (and what is built on them: `normalize`, `length`, `distance`,
//! `rsqrt`), the remainder (`fmod`), `fma` and the math library. Without doubles, division,
//! square root, remainder and `fma` are computed from 64-bit integers instead
//! ([`crate::mathlib::float32_int`], the same bits); the math library has no such form yet,
//! and a kernel using one of its functions is refused before it is compiled, naming it
//! ([`first_use_needing_doubles`]), as a kernel computing with `double` itself is.

use brook_ir::{ExprKind, Kernel, ScalarKind, SourceSpan, Type};

/// The first math library function of `kernel` on `float`s, which this dialect computes only
/// through `double` (its name, as the program writes it, and its place), or `None`.
pub fn first_use_needing_doubles(kernel: &Kernel) -> Option<(&'static str, SourceSpan)> {
    kernel.exprs.iter().find_map(|(handle, expr)| {
        let ExprKind::Math { fun, args } = &expr.kind else {
            return None;
        };
        let on_floats = args.first().is_some_and(
            |&a| matches!(kernel.exprs[a].ty, Type::Value(v) if v.kind == ScalarKind::F32),
        );
        let library = crate::mathlib::Fun::of(*fun).is_some();
        (on_floats && library).then(|| (fun.name(), kernel.exprs.span(handle)))
    })
}
