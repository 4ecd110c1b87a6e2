//! The cooperative reduction path: one warp per piece, for pieces whose leaves are
//! consecutive in memory (a whole-stream or row reduction of a dense stream, or a scratch
//! array laid out `[target][piece]`).
//!
//! A warp takes its piece in chunks of 256 leaves. Lane `l` reduces the run of 8 leaves
//! `8l .. 8l + 8` of the chunk in registers (the run's canonical tree; 4- and 8-byte scalars
//! arrive in two or four 16-byte loads when the run is aligned), then five butterfly shuffle
//! levels combine the runs of neighbouring lanes into the chunk's tree. Every lane ends with
//! the same bits, so all lanes keep the same binary-counter stack of chunk subtrees (see
//! [`super::serial`]). A last, partial chunk is the same tree with its missing leaves pruned,
//! which is the canonical tree of its leaf count; it is combined right of the stack. Lane 0
//! writes the result. No combine ever runs on a missing leaf.

use super::common::{
    combine, finish_stack_onto, fresh_value, insert, mode_bit, unravel, write_result, Pass,
    Reduction, Scratch, Share, Slots, Written,
};
use crate::abi::BlockLayout;
use crate::gpu::Gpu;
use crate::leaves::leaves;
use crate::ptx::emit::{Class, Reg};
use crate::ptx::lower::{Lower, StreamRef};
use crate::CompileError;

/// Chunks of a piece in the stack: up to `2^LEVELS - 1` chunks, more than a piece of
/// `MAX_PIECE` leaves has.
const LEVELS: usize = 16;
/// Leaves of a lane's run.
pub(super) const RUN: u64 = 8;
/// Leaves of a chunk.
const CHUNK: u64 = 32 * RUN;

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

pub fn emit(
    lower: &mut Lower<'_>,
    r: &Reduction,
    layout: &BlockLayout,
    p: &Pass,
    input: &StreamRef,
) -> Result<(), CompileError> {
    let rank = p.domain.len();
    let g = lower.global_thread();
    let lane = u64_op(lower, |reg| format!("and.b64 {reg}, {g}, 31"));
    let warp = u64_op(lower, |reg| format!("shr.u64 {reg}, {g}, 5"));
    let Share {
        unit: t,
        piece_index: j,
        lo,
        count,
    } = p.share(lower, warp);
    let tpos = unravel(lower, t, &p.domain);
    let from_scratch = mode_bit(lower, p.mode, 1);
    let to_target = mode_bit(lower, p.mode, 2);
    let source = leaves_of_piece(lower, r, p, input, (&tpos, t, lo), from_scratch);
    let kinds = leaves(lower.module, &r.ty);
    let fresh = |lower: &mut Lower<'_>| -> Vec<Reg> {
        kinds
            .iter()
            .map(|l| lower.e.reg(Class::of(l.kind)))
            .collect()
    };
    let slots = Slots::Vars((0..LEVELS).map(|_| fresh(lower)).collect());
    let tail = fresh(lower);
    let has_tail = lower.e.reg(Class::Pred);
    let no = lower.pred_const(false);
    lower.e.mov(has_tail, no);
    // Chunks: full ones go onto the stack; a partial last one is kept in `tail`.
    let c = lower.e.mov_imm(Class::B64, 0);
    let (head, done) = (lower.e.label(), lower.e.label());
    lower.e.at(head);
    let offset = u64_op(lower, |reg| format!("mul.lo.u64 {reg}, {c}, {CHUNK}"));
    let finished = lower.e.compute(Class::Pred, |reg| {
        format!("setp.ge.u64 {reg}, {offset}, {count}")
    });
    lower.e.bra_if(finished, done);
    let left = u64_op(lower, |reg| format!("sub.u64 {reg}, {count}, {offset}"));
    let valid = u64_op(lower, |reg| format!("min.u64 {reg}, {left}, {CHUNK}"));
    let full = lower.e.compute(Class::Pred, |reg| {
        format!("setp.eq.u64 {reg}, {valid}, {CHUNK}")
    });
    let push = lower.e.label();
    lower.e.bra_if(full, push);
    let value = partial_chunk(lower, r, &source, lane, offset, valid)?;
    for (d, s) in tail.iter().zip(&value) {
        lower.e.mov(*d, *s);
    }
    let yes = lower.pred_const(true);
    lower.e.mov(has_tail, yes);
    lower.e.bra(done);
    lower.e.at(push);
    let value = full_chunk(lower, r, &source, lane, offset)?;
    insert(lower, r, &value, &slots, c)?;
    lower.e.op(format!("add.u64 {c}, {c}, 1"));
    lower.e.bra(head);
    lower.e.at(done);
    finish_stack_onto(lower, r, &slots, c, &tail, has_tail)?;
    // Lane 0 writes.
    let not_first = lower
        .e
        .compute(Class::Pred, |reg| format!("setp.ne.u64 {reg}, {lane}, 0"));
    let ret = lower.ret;
    lower.e.bra_if(not_first, ret);
    let written = Written {
        to_target,
        dst: p.dst,
        tpos: &tpos,
        piece_index: j,
        target_index: t,
        scratch: Scratch::TargetMajor { pieces: p.pieces },
    };
    write_result(lower, r, layout, rank, &written, &tail);
    lower.e.bra(ret);
    Ok(())
}

/// The address of the piece's first leaf: in the scratch array (`[target][piece]`: the
/// target's row, leaf `lo`), or in the input at the target's tile start plus `lo`.
fn leaves_of_piece(
    lower: &mut Lower<'_>,
    r: &Reduction,
    p: &Pass,
    input: &StreamRef,
    (tpos, t, lo): (&[Reg], Reg, Reg),
    from_scratch: Reg,
) -> Leaves {
    let base = lower.e.reg(Class::B64);
    let (from_input, known) = (lower.e.label(), lower.e.label());
    lower.e.bra_unless(from_scratch, from_input);
    let leaves = p.leaves_per_target;
    let slot = u64_op(lower, |reg| {
        format!("mad.lo.u64 {reg}, {t}, {leaves}, {lo}")
    });
    let at = lower.element_address(p.src, slot, r.value_size);
    lower.e.mov(base, at);
    lower.e.bra(known);
    lower.e.at(from_input);
    let first: Vec<Reg> = tpos
        .iter()
        .zip(&p.tile)
        .map(|(&tp, &tl)| u64_op(lower, |reg| format!("mul.lo.u64 {reg}, {tp}, {tl}")))
        .collect();
    let index = lower.element_index(input.offset, &first, &input.pitch);
    let index = u64_op(lower, |reg| format!("add.u64 {reg}, {index}, {lo}"));
    let at = lower.element_address(input.base, index, input.size);
    lower.e.mov(base, at);
    lower.e.at(known);
    let low = u64_op(lower, |reg| format!("and.b64 {reg}, {base}, 15"));
    let aligned = lower
        .e
        .compute(Class::Pred, |reg| format!("setp.eq.u64 {reg}, {low}, 0"));
    Leaves {
        base,
        input_size: input.size,
        from_scratch,
        aligned,
    }
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

/// The canonical value of a whole chunk at `offset`, in every lane.
fn full_chunk(
    lower: &mut Lower<'_>,
    r: &Reduction,
    source: &Leaves,
    lane: Reg,
    offset: Reg,
) -> Result<Vec<Reg>, CompileError> {
    let first = u64_op(lower, |reg| {
        format!("mad.lo.u64 {reg}, {lane}, {RUN}, {offset}")
    });
    let mut level = load_run(lower, r, source, first);
    while level.len() > 1 {
        let mut next = Vec::with_capacity(level.len() / 2);
        for pair in level.chunks(2) {
            let out = fresh_value(lower, r);
            combine(lower, r, &out, &pair[0], &pair[1])?;
            next.push(out);
        }
        level = next;
    }
    let mut value = level.pop().expect("a run has leaves");
    for k in 0..5u32 {
        let half = 1u64 << k;
        let (lower_half, upper_half) = butterfly(lower, lane, half, &value);
        let out = fresh_value(lower, r);
        combine(lower, r, &out, &lower_half, &upper_half)?;
        value = out;
    }
    Ok(value)
}

/// The canonical value of the first `valid` (< 256) leaves of the chunk at `offset`, in every
/// lane: the chunk's tree with the missing leaves pruned.
fn partial_chunk(
    lower: &mut Lower<'_>,
    r: &Reduction,
    source: &Leaves,
    lane: Reg,
    offset: Reg,
    valid: Reg,
) -> Result<Vec<Reg>, CompileError> {
    let own = u64_op(lower, |reg| format!("mul.lo.u64 {reg}, {lane}, {RUN}"));
    // Leaf `own + k` is present when it is below `valid`.
    let present = |lower: &mut Lower<'_>, k: u64| {
        let at = u64_op(lower, |reg| format!("add.u64 {reg}, {own}, {k}"));
        lower.e.compute(Class::Pred, |reg| {
            format!("setp.lt.u64 {reg}, {at}, {valid}")
        })
    };
    let mut level = Vec::with_capacity(RUN as usize);
    for k in 0..RUN {
        let value = fresh_value(lower, r);
        let here = present(lower, k);
        let skip = lower.e.label();
        lower.e.bra_unless(here, skip);
        let i = u64_op(lower, |reg| format!("add.u64 {reg}, {offset}, {own}"));
        let i = u64_op(lower, |reg| format!("add.u64 {reg}, {i}, {k}"));
        load_leaf(lower, r, source, i, &value);
        lower.e.at(skip);
        level.push(value);
    }
    let mut width = 1;
    while level.len() > 1 {
        let mut next = Vec::with_capacity(level.len() / 2);
        for (p, pair) in level.chunks(2).enumerate() {
            let right_first = (2 * p as u64 + 1) * width;
            let right_here = present(lower, right_first);
            next.push(pruned_combine(lower, r, right_here, &pair[0], &pair[1])?);
        }
        level = next;
        width *= 2;
    }
    let mut value = level.pop().expect("a run has leaves");
    for k in 0..5u32 {
        let half = 1u64 << k;
        let (lower_half, upper_half) = butterfly(lower, lane, half, &value);
        // The upper block's first lane is (lane & !(2 half - 1)) + half.
        let block = u64_op(lower, |reg| {
            format!("and.b64 {reg}, {lane}, {}", !(2 * half - 1))
        });
        let first = u64_op(lower, |reg| format!("add.u64 {reg}, {block}, {half}"));
        let first_leaf = u64_op(lower, |reg| format!("mul.lo.u64 {reg}, {first}, {RUN}"));
        let upper_here = lower.e.compute(Class::Pred, |reg| {
            format!("setp.lt.u64 {reg}, {first_leaf}, {valid}")
        });
        value = pruned_combine(lower, r, upper_here, &lower_half, &upper_half)?;
    }
    Ok(value)
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

/// `present ? left + right : left` (the tree with an empty right subtree pruned).
fn pruned_combine(
    lower: &mut Lower<'_>,
    r: &Reduction,
    present: Reg,
    left: &[Reg],
    right: &[Reg],
) -> Result<Vec<Reg>, CompileError> {
    let out: Vec<Reg> = left.iter().map(|v| lower.e.reg(v.class)).collect();
    let (alone, joined) = (lower.e.label(), lower.e.label());
    lower.e.bra_unless(present, alone);
    combine(lower, r, &out, left, right)?;
    lower.e.bra(joined);
    lower.e.at(alone);
    for (d, s) in out.iter().zip(left) {
        lower.e.mov(*d, *s);
    }
    lower.e.at(joined);
    Ok(out)
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
