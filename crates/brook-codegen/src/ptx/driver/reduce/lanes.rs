//! What PTX's one-pass scan tiles share with a warp reducing runs of leaves: runs of
//! [`RUN`] leaves in 16-byte loads and stores, and butterfly shuffles across a warp's lanes.
//! (The reduction's subgroup path itself is written once: [`crate::gpu::reduce::warp`].)

use super::common::{fresh_value, Reduction};
use crate::leaves::leaves;
use crate::ptx::emit::{Class, Reg};
use crate::ptx::lower::Lower;

/// Leaves of a lane's run.
pub(super) const RUN: u64 = 8;

/// Where leaf `i` of the piece lies: `base + i * stride`, read as the input's type or (from
/// a scratch array) as the target's.
pub(super) struct Leaves {
    pub base: Reg,
    pub input_size: u32,
    pub from_scratch: Reg,
    /// Whether `base` is 16-byte aligned (runs may use packed loads).
    pub aligned: Reg,
}

pub(super) fn u64_op(lower: &mut Lower<'_>, text: impl FnOnce(Reg) -> String) -> Reg {
    lower.e.compute(Class::B64, text)
}

/// Loads leaf `i` (relative to the piece) into `into`.
fn load_leaf(lower: &mut Lower<'_>, r: &Reduction, source: &Leaves, i: Reg, into: &[Reg]) {
    let (from_input, loaded) = (lower.e.label(), lower.e.label());
    lower.e.bra_unless(source.from_scratch, from_input);
    let addr = lower.element_address(source.base, i, r.value_size);
    let v = lower.load_value(&r.ty.clone(), addr, "global", true);
    for (d, s) in into.iter().zip(&v) {
        lower.e.mov(*d, *s);
    }
    lower.e.bra(loaded);
    lower.e.at(from_input);
    let addr = lower.element_address(source.base, i, source.input_size);
    let input_ty = lower.kernel.params[r.input].ty.clone();
    let v = lower.load_value(&input_ty, addr, "global", true);
    for (d, s) in into.iter().zip(&v) {
        lower.e.mov(*d, *s);
    }
    lower.e.at(loaded);
}

/// The class of a type that is one 4- or 8-byte scalar (runs of it load packed).
pub(super) fn packable(lower: &Lower<'_>, ty: &brook_ir::Type) -> Option<Class> {
    let parts = leaves(lower.module, ty);
    match parts.as_slice() {
        [leaf] if matches!(leaf.kind.size(), 4 | 8) && Class::of(leaf.kind) != Class::Pred => {
            Some(Class::of(leaf.kind))
        }
        _ => None,
    }
}

/// Which way a [`vector_run`] goes.
#[derive(Clone, Copy)]
pub(super) enum Vector {
    Load,
    Store,
}

/// A run of 4- or 8-byte scalars (one register each) from `addr` on in state space `space`,
/// 16 bytes an access: loaded into the run's registers or stored from them.
pub(super) fn vector_run(
    lower: &mut Lower<'_>,
    way: Vector,
    space: &str,
    addr: Reg,
    run: &[Vec<Reg>],
    value_size: u32,
) {
    let (suffix, ty) = if value_size == 4 {
        ("v4", "b32")
    } else {
        ("v2", "b64")
    };
    for (k, group) in run.chunks((16 / value_size) as usize).enumerate() {
        let list = group
            .iter()
            .map(|v| v[0].to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let at = 16 * k;
        lower.e.op(match way {
            Vector::Load => format!("ld.{space}.{suffix}.{ty} {{{list}}}, [{addr}+{at}]"),
            Vector::Store => format!("st.{space}.{suffix}.{ty} [{addr}+{at}], {{{list}}}"),
        });
    }
}

/// Loads the `RUN` leaves from leaf `first` on: packed 16-byte loads when the leaf type is a
/// 4- or 8-byte scalar (input and scratch alike) and the piece is aligned, else one load each.
pub(super) fn load_run(
    lower: &mut Lower<'_>,
    r: &Reduction,
    source: &Leaves,
    first: Reg,
) -> Vec<Vec<Reg>> {
    let run: Vec<Vec<Reg>> = (0..RUN).map(|_| fresh_value(lower, r)).collect();
    let input_ty = lower.kernel.params[r.input].ty.clone();
    let packed_class = match (packable(lower, &input_ty), packable(lower, &r.ty)) {
        (Some(a), Some(b)) if a == b && source.input_size == r.value_size => Some(a),
        _ => None,
    };
    let (one_by_one, loaded) = (lower.e.label(), lower.e.label());
    if let Some(class) = packed_class {
        lower.e.bra_unless(source.aligned, one_by_one);
        let addr = lower.element_address(source.base, first, r.value_size);
        debug_assert!(run.iter().all(|v| v[0].class == class));
        vector_run(lower, Vector::Load, "global", addr, &run, r.value_size);
        lower.e.bra(loaded);
    }
    lower.e.at(one_by_one);
    for (k, value) in run.iter().enumerate() {
        let i = u64_op(lower, |reg| format!("add.u64 {reg}, {first}, {k}"));
        load_leaf(lower, r, source, i, value);
    }
    lower.e.at(loaded);
    run
}

/// Exchanges `value` with lane `lane ^ half`: the lower and the upper lane's values.
pub(super) fn butterfly(
    lower: &mut Lower<'_>,
    lane: Reg,
    half: u64,
    value: &[Reg],
) -> (Vec<Reg>, Vec<Reg>) {
    let upper_me = {
        let b = u64_op(lower, |reg| format!("and.b64 {reg}, {lane}, {half}"));
        lower
            .e
            .compute(Class::Pred, |reg| format!("setp.ne.u64 {reg}, {b}, 0"))
    };
    let partner: Vec<Reg> = value.iter().map(|&v| shuffle(lower, v, half)).collect();
    let lower_half = select_all(lower, upper_me, &partner, value);
    let upper_half = select_all(lower, upper_me, value, &partner);
    (lower_half, upper_half)
}

fn select_all(lower: &mut Lower<'_>, p: Reg, a: &[Reg], b: &[Reg]) -> Vec<Reg> {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| {
            let ty = match x.class {
                Class::Pred => {
                    let both = lower
                        .e
                        .compute(Class::Pred, |reg| format!("and.pred {reg}, {p}, {x}"));
                    let other = lower
                        .e
                        .compute(Class::Pred, |reg| format!("and.pred {reg}, !{p}, {y}"));
                    return lower
                        .e
                        .compute(Class::Pred, |reg| format!("or.pred {reg}, {both}, {other}"));
                }
                Class::B32 | Class::F32 => "b32",
                Class::B64 | Class::F64 => "b64",
            };
            lower
                .e
                .compute(x.class, |reg| format!("selp.{ty} {reg}, {x}, {y}, {p}"))
        })
        .collect()
}

/// The value `v` of lane `lane ^ mask`.
pub(super) fn shuffle(lower: &mut Lower<'_>, v: Reg, mask: u64) -> Reg {
    shuffle_with(lower, v, "bfly", &mask.to_string())
}

/// The value `v` of the lane a `shfl.sync` of `mode` (`bfly`, `idx`, ...) and `operand` (an
/// immediate or a 32-bit register) names, for a value of any register class.
pub(super) fn shuffle_with(lower: &mut Lower<'_>, v: Reg, mode: &str, operand: &str) -> Reg {
    let shfl = |lower: &mut Lower<'_>, x: Reg| {
        lower.e.compute(Class::B32, |reg| {
            format!("shfl.sync.{mode}.b32 {reg}, {x}, {operand}, 31, 0xffffffff")
        })
    };
    match v.class {
        Class::B32 | Class::F32 => {
            let got = shfl(lower, v);
            let out = lower.e.reg(v.class);
            lower.e.op(format!("mov.b32 {out}, {got}"));
            out
        }
        Class::B64 | Class::F64 => {
            let (a, b) = (lower.e.reg(Class::B32), lower.e.reg(Class::B32));
            lower.e.op(format!("mov.b64 {{{a}, {b}}}, {v}"));
            let (a, b) = (shfl(lower, a), shfl(lower, b));
            let out = lower.e.reg(v.class);
            lower.e.op(format!("mov.b64 {out}, {{{a}, {b}}}"));
            out
        }
        Class::Pred => {
            let word = lower
                .e
                .compute(Class::B32, |reg| format!("selp.u32 {reg}, 1, 0, {v}"));
            let got = shfl(lower, word);
            lower
                .e
                .compute(Class::Pred, |reg| format!("setp.ne.u32 {reg}, {got}, 0"))
        }
    }
}
