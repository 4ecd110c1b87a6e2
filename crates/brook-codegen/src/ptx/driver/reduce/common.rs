//! What PTX's reduction entries share: the pass parameters, where the leaves come from, and
//! the combine step (the kernel body written inline).

use crate::abi::{BlockLayout, Variant};
use crate::ptx::emit::{Class, Reg};
use crate::ptx::lower::{Binding, Lower};
use crate::CompileError;

pub(super) use crate::gpu::reduce::Reduction;
pub(super) use crate::lower::counter::MAX_PIECE;

/// A pass's parameters, loaded ([`crate::gpu::reduce::Pass`]).
pub(super) type Pass = crate::gpu::reduce::Pass<Reg>;

/// Where a thread's leaves come from when they are the kernel's input.
pub(super) type Source = crate::lower::binding::Source<Reg>;

/// PTX lines of one combine step above which a reduction is heavy. An unrolled serial entry
/// writes the step out about 75 times (two stacks of 23 levels, a batch tree), the warp entry
/// as often again; a step of 600 lines made 67,000 lines that the driver's JIT compiled for
/// minutes. A heavy reduction has the serial entry alone, its stack in local memory walked by
/// one loop (three copies of the step), which costs little next to the step itself.
pub(super) const HEAVY_COMBINE_LINES: usize = 160;

/// Fresh registers for one value of the reduction's type.
pub(super) fn fresh_value(lower: &mut Lower<'_>, r: &Reduction) -> Vec<Reg> {
    crate::leaves::leaves(lower.module, &r.ty)
        .iter()
        .map(|l| lower.e.reg(Class::of(l.kind)))
        .collect()
}

/// Copies a value's registers.
pub(super) fn copy_into(lower: &mut Lower<'_>, to: &[Reg], from: &[Reg]) {
    for (d, s) in to.iter().zip(from) {
        lower.e.mov(*d, *s);
    }
}

/// A scan's value in registers and whether it is there (a prefix may be nothing).
#[derive(Clone)]
pub(super) struct Held {
    pub value: Vec<Reg>,
    pub has: Reg,
}

/// `dest = held ∘ right` when `held` is there, else `right`.
pub(super) fn combine_after(
    lower: &mut Lower<'_>,
    r: &Reduction,
    dest: &[Reg],
    held: &Held,
    right: &[Reg],
) -> Result<(), CompileError> {
    let (alone, done) = (lower.e.label(), lower.e.label());
    lower.e.bra_unless(held.has, alone);
    combine(lower, r, dest, &held.value, right)?;
    lower.e.bra(done);
    lower.e.at(alone);
    copy_into(lower, dest, right);
    lower.e.at(done);
    Ok(())
}

pub(super) fn input_source(
    lower: &mut Lower<'_>,
    r: &Reduction,
    layout: &BlockLayout,
    variant: &Variant,
) -> Source {
    crate::lower::binding::reduction_source(lower, r.input, layout, variant)
}

/// `dest = combine(left, right)`: the kernel body with the accumulator `dest` starting as
/// `left` and the input bound to `right`.
pub(super) fn combine(
    lower: &mut Lower<'_>,
    r: &Reduction,
    dest: &[Reg],
    left: &[Reg],
    right: &[Reg],
) -> Result<(), CompileError> {
    let right: Vec<Reg> = right
        .iter()
        .map(|&v| {
            let copy = lower.e.reg(v.class);
            lower.e.mov(copy, v);
            copy
        })
        .collect();
    for (d, l) in dest.iter().zip(left) {
        lower.e.mov(*d, *l);
    }
    lower.bindings[r.target] = Binding::Vars(dest.to_vec());
    lower.bindings[r.input] = Binding::Values(right);
    lower.zero_locals();
    // The body's `return`s end the combine; the entry's end is restored after it.
    let (end, entry_end) = (lower.e.label(), lower.ret);
    lower.ret = end;
    let body = lower.body();
    lower.ret = entry_end;
    body?;
    lower.e.at(end);
    Ok(())
}
