//! The cooperative reduction path: one warp per piece, for pieces whose leaves are
//! consecutive in memory (a whole-stream or row reduction of a dense stream, or a scratch
//! array of one target).
//!
//! A warp takes its piece in chunks of 128 leaves. Lane `l` loads leaves `l`, `l + 32`,
//! `l + 64` and `l + 96` of the chunk (each load instruction reads 128 consecutive leaves
//! of the warp: fully coalesced). Five butterfly shuffle levels combine neighbouring lanes,
//! which builds, in each of the four registers, the canonical tree of 32 consecutive leaves;
//! `(T0 + T1) + (T2 + T3)` completes the chunk's tree. Every lane ends with the same bits, so
//! all lanes keep the same binary-counter stack of chunk subtrees (see [`super::reduce`]). A
//! last, partial chunk is the same tree with its missing leaves pruned, which is the canonical
//! tree of its leaf count; it is combined right of the stack. Lane 0 writes the result.

use super::reduce::{
    combine, finish_stack_onto, insert, unravel_fresh, write_result, Reduction, Written,
};
use super::special;
use crate::abi::BlockLayout;
use crate::leaves::leaves;
use crate::ptx::emit::{Class, Label, Reg};
use crate::ptx::lower::{Lower, StreamRef};
use crate::ptx::CompileError;

/// Chunks of a piece in the stack: a warp reduces at most `2^LEVELS * 128` leaves per pass.
const LEVELS: usize = 16;
/// Leaves of a chunk.
const CHUNK: u64 = 128;

/// The pass parameters the entry has loaded.
pub struct Pass {
    pub src: Reg,
    pub dst: Reg,
    pub leaves_per_target: Reg,
    pub piece: Reg,
    pub pieces: Reg,
    pub mode: Reg,
    pub targets: Reg,
    pub domain: Vec<Reg>,
    pub tile: Vec<Reg>,
    pub ret: Label,
}

/// Where leaf `i` of the piece lies: `base + i * stride`, read as the input's type or (from
/// a scratch array) as the target's.
struct Leaves {
    base: Reg,
    input_size: u32,
    from_scratch: Reg,
}

fn bit_set(lower: &mut Lower<'_>, word: Reg, bit: u32) -> Reg {
    let b = lower
        .e
        .compute(Class::B32, |reg| format!("and.b32 {reg}, {word}, {bit}"));
    lower
        .e
        .compute(Class::Pred, |reg| format!("setp.ne.u32 {reg}, {b}, 0"))
}

fn u64_op(lower: &mut Lower<'_>, text: impl FnOnce(Reg) -> String) -> Reg {
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
    let ctaid = special(lower, "%ctaid.x");
    let ntid = special(lower, "%ntid.x");
    let tid = special(lower, "%tid.x");
    let g = u64_op(lower, |reg| {
        format!("mad.lo.u64 {reg}, {ctaid}, {ntid}, {tid}")
    });
    let lane = u64_op(lower, |reg| format!("and.b64 {reg}, {g}, 31"));
    let warp = u64_op(lower, |reg| format!("shr.u64 {reg}, {g}, 5"));
    let (targets, pieces, piece) = (p.targets, p.pieces, p.piece);
    let warps = u64_op(lower, |reg| {
        format!("mul.lo.u64 {reg}, {targets}, {pieces}")
    });
    let outside = lower.e.compute(Class::Pred, |reg| {
        format!("setp.ge.u64 {reg}, {warp}, {warps}")
    });
    lower.e.bra_if(outside, p.ret);
    let t = u64_op(lower, |reg| format!("rem.u64 {reg}, {warp}, {targets}"));
    let j = u64_op(lower, |reg| format!("div.u64 {reg}, {warp}, {targets}"));
    let lo = u64_op(lower, |reg| format!("mul.lo.u64 {reg}, {j}, {piece}"));
    let end = u64_op(lower, |reg| format!("add.u64 {reg}, {lo}, {piece}"));
    let all = p.leaves_per_target;
    let hi = u64_op(lower, |reg| format!("min.u64 {reg}, {end}, {all}"));
    let count = u64_op(lower, |reg| format!("sub.u64 {reg}, {hi}, {lo}"));
    let tpos = unravel_fresh(lower, t, &p.domain);
    let from_scratch = bit_set(lower, p.mode, 1);
    let to_target = bit_set(lower, p.mode, 2);
    let source = leaves_of_piece(lower, r, p, input, &tpos, lo, from_scratch);
    let kinds = leaves(lower.module, &r.ty);
    let fresh = |lower: &mut Lower<'_>| -> Vec<Reg> {
        kinds
            .iter()
            .map(|l| lower.e.reg(Class::of(l.kind)))
            .collect()
    };
    let slots: Vec<Vec<Reg>> = (0..LEVELS).map(|_| fresh(lower)).collect();
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
    let value = chunk_value(lower, r, &source, lane, offset, valid)?;
    let full = lower.e.compute(Class::Pred, |reg| {
        format!("setp.eq.u64 {reg}, {valid}, {CHUNK}")
    });
    let push = lower.e.label();
    lower.e.bra_if(full, push);
    for (d, s) in tail.iter().zip(&value) {
        lower.e.mov(*d, *s);
    }
    let yes = lower.pred_const(true);
    lower.e.mov(has_tail, yes);
    lower.e.bra(done);
    lower.e.at(push);
    insert(lower, r, &value, &slots, c)?;
    lower.e.op(format!("add.u64 {c}, {c}, 1"));
    lower.e.bra(head);
    lower.e.at(done);
    finish_stack_onto(lower, r, &slots, c, &tail, has_tail)?;
    // Lane 0 writes.
    let not_first = lower
        .e
        .compute(Class::Pred, |reg| format!("setp.ne.u64 {reg}, {lane}, 0"));
    lower.e.bra_if(not_first, p.ret);
    let written = Written {
        to_target,
        dst: p.dst,
        tpos: &tpos,
        piece_index: j,
        target_index: t,
        targets,
    };
    write_result(lower, r, layout, rank, &written, &tail);
    lower.e.bra(p.ret);
    Ok(())
}

/// The address of the piece's first leaf: in the scratch array (one target: leaf `lo`), or
/// in the input at the target's tile start plus `lo`.
fn leaves_of_piece(
    lower: &mut Lower<'_>,
    r: &Reduction,
    p: &Pass,
    input: &StreamRef,
    tpos: &[Reg],
    lo: Reg,
    from_scratch: Reg,
) -> Leaves {
    let base = lower.e.reg(Class::B64);
    let (from_input, known) = (lower.e.label(), lower.e.label());
    lower.e.bra_unless(from_scratch, from_input);
    let at = lower.element_address(p.src, lo, r.value_size);
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
    Leaves {
        base,
        input_size: input.size,
        from_scratch,
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

/// The canonical value of the `valid` (1..=128) leaves of the chunk at `offset`, in every lane.
fn chunk_value(
    lower: &mut Lower<'_>,
    r: &Reduction,
    source: &Leaves,
    lane: Reg,
    offset: Reg,
    valid: Reg,
) -> Result<Vec<Reg>, CompileError> {
    let kinds = leaves(lower.module, &r.ty);
    let mut quarters = Vec::with_capacity(4);
    for s in 0..4u64 {
        let regs: Vec<Reg> = kinds
            .iter()
            .map(|l| lower.e.reg(Class::of(l.kind)))
            .collect();
        let within = u64_op(lower, |reg| format!("add.u64 {reg}, {lane}, {}", 32 * s));
        let present = lower.e.compute(Class::Pred, |reg| {
            format!("setp.lt.u64 {reg}, {within}, {valid}")
        });
        let skip = lower.e.label();
        lower.e.bra_unless(present, skip);
        let i = u64_op(lower, |reg| format!("add.u64 {reg}, {offset}, {within}"));
        load_leaf(lower, r, source, i, &regs);
        lower.e.at(skip);
        quarters.push(regs);
    }
    for level in 0..5u32 {
        let half = 1u64 << level;
        let upper_me = {
            let b = u64_op(lower, |reg| format!("and.b64 {reg}, {lane}, {half}"));
            lower
                .e
                .compute(Class::Pred, |reg| format!("setp.ne.u64 {reg}, {b}, 0"))
        };
        let block = u64_op(lower, |reg| {
            format!("and.b64 {reg}, {lane}, {}", !(2 * half - 1))
        });
        for (s, quarter) in quarters.iter_mut().enumerate() {
            let partner: Vec<Reg> = quarter.iter().map(|&v| shuffle(lower, v, half)).collect();
            let lower_half = select_all(lower, upper_me, &partner, quarter);
            let upper_half = select_all(lower, upper_me, quarter, &partner);
            let first_upper = u64_op(lower, |reg| {
                format!("add.u64 {reg}, {block}, {}", half + 32 * s as u64)
            });
            let upper_present = lower.e.compute(Class::Pred, |reg| {
                format!("setp.lt.u64 {reg}, {first_upper}, {valid}")
            });
            *quarter = pruned_combine(lower, r, upper_present, &lower_half, &upper_half)?;
        }
    }
    let present = |lower: &mut Lower<'_>, first: u64| {
        lower.e.compute(Class::Pred, |reg| {
            format!("setp.lt.u64 {reg}, {first}, {valid}")
        })
    };
    let p1 = present(lower, 32);
    let a = pruned_combine(lower, r, p1, &quarters[0], &quarters[1])?;
    let p3 = present(lower, 96);
    let b = pruned_combine(lower, r, p3, &quarters[2], &quarters[3])?;
    let p2 = present(lower, 64);
    pruned_combine(lower, r, p2, &a, &b)
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
fn shuffle(lower: &mut Lower<'_>, v: Reg, mask: u64) -> Reg {
    let shfl = |lower: &mut Lower<'_>, x: Reg| {
        lower.e.compute(Class::B32, |reg| {
            format!("shfl.sync.bfly.b32 {reg}, {x}, {mask}, 31, 0xffffffff")
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
