//! The column path: one thread reduces four neighbouring targets at once, for reductions
//! whose targets' leaves lie side by side (column sums: each target is a column, so the four
//! leaves of one row for four neighbouring columns are 16 consecutive bytes).
//!
//! The thread does what the serial path does (see [`super::reduce`]: batches of leaves, a
//! binary-counter stack, the canonical tree of its piece) for four targets with four stacks,
//! loading each row's four leaves with one 16-byte load when aligned. A warp then reads 512
//! consecutive bytes per load instead of 128, and the address arithmetic is shared by four
//! targets. The runtime chooses this path for a first pass (it reads the input, never a
//! scratch array, whose `[target][piece]` rows suit the warp entry) when the value is one
//! 4-byte scalar, the domain's last axis is a multiple of 4, and each target's tile is one
//! element wide on the last axis, which has unit pitch.

use super::reduce::{
    advance, combine, finish_stack_onto, insert, mode_bit, share, unravel_fresh, write_result,
    Pass, Reduction, Share, Written, BATCH,
};
use super::special;
use crate::abi::BlockLayout;
use crate::leaves::leaves;
use crate::ptx::emit::{Class, Reg};
use crate::ptx::lower::{Lower, StreamRef};
use crate::ptx::CompileError;

/// Targets per thread.
const WIDTH: u64 = 4;
/// Levels of each stack: a thread reduces at most `2^LEVELS` leaves per target in a pass.
/// Four deep stacks would cost registers and so occupancy (measured: 110 registers, a
/// quarter of the warps, at 14 levels); more passes over small scratch arrays cost less.
const LEVELS: u32 = 8;
/// The most leaves per target one thread of this path reduces in a pass.
pub const MAX_PIECE: u64 = 1 << LEVELS;

/// Whether the reduction's values (input and target alike) are one 4-byte scalar.
pub(super) fn applies(module: &brook_ir::Module, kernel: &brook_ir::Kernel, r: &Reduction) -> bool {
    let input_ty = &kernel.params[r.input].ty;
    let one = |ty| match leaves(module, ty).as_slice() {
        [leaf] if leaf.kind.size() == 4 && Class::of(leaf.kind) != Class::Pred => Some(leaf.kind),
        _ => None,
    };
    one(input_ty).is_some() && one(input_ty) == one(&r.ty)
}

fn u64_op(lower: &mut Lower<'_>, text: impl FnOnce(Reg) -> String) -> Reg {
    lower.e.compute(Class::B64, text)
}

/// What loading a row of four leaves needs.
struct Quad<'a> {
    r: &'a Reduction,
    input: &'a StreamRef,
    tpos: &'a [Reg],
    tile: &'a [Reg],
    lpos: &'a [Reg],
}

pub(super) fn emit(
    lower: &mut Lower<'_>,
    r: &Reduction,
    layout: &BlockLayout,
    p: &Pass,
    input: &StreamRef,
) -> Result<(), CompileError> {
    let ctaid = special(lower, "%ctaid.x");
    let ntid = special(lower, "%ntid.x");
    let tid = special(lower, "%tid.x");
    let g = u64_op(lower, |reg| {
        format!("mad.lo.u64 {reg}, {ctaid}, {ntid}, {tid}")
    });
    let targets = p.targets;
    let quads = u64_op(lower, |reg| format!("shr.u64 {reg}, {targets}, 2"));
    let Share {
        unit: q,
        piece_index: j,
        lo,
        count,
    } = share(
        lower,
        g,
        quads,
        p.pieces,
        p.piece,
        p.leaves_per_target,
        p.ret,
    );
    let t = u64_op(lower, |reg| format!("shl.b64 {reg}, {q}, 2"));
    let tpos = unravel_fresh(lower, t, &p.domain);
    let to_target = mode_bit(lower, p.mode, 2);
    let class = Class::of(leaves(lower.module, &r.ty)[0].kind);
    let slots: Vec<Vec<Vec<Reg>>> = (0..WIDTH)
        .map(|_| (0..LEVELS).map(|_| vec![lower.e.reg(class)]).collect())
        .collect();
    let lpos: Vec<Reg> = (0..p.tile.len()).map(|_| lower.e.reg(Class::B64)).collect();
    let first = unravel_fresh(lower, lo, &p.tile);
    for (l, f) in lpos.iter().zip(&first) {
        lower.e.mov(*l, *f);
    }
    let quad = Quad {
        r,
        input,
        tpos: &tpos,
        tile: &p.tile,
        lpos: &lpos,
    };
    let n = lower.e.mov_imm(Class::B64, 0);
    let (batch_head, single_head, done) = (lower.e.label(), lower.e.label(), lower.e.label());
    lower.e.at(batch_head);
    let next = u64_op(lower, |reg| format!("add.u64 {reg}, {n}, {BATCH}"));
    let short = lower.e.compute(Class::Pred, |reg| {
        format!("setp.gt.u64 {reg}, {next}, {count}")
    });
    lower.e.bra_if(short, single_head);
    let rows: Vec<Vec<Reg>> = (0..BATCH).map(|_| load_quad(lower, &quad, class)).collect();
    let batches = u64_op(lower, |reg| {
        format!("shr.u64 {reg}, {n}, {}", BATCH.trailing_zeros())
    });
    for (c, stack) in slots.iter().enumerate() {
        let mut level: Vec<Vec<Reg>> = rows.iter().map(|row| vec![row[c]]).collect();
        while level.len() > 1 {
            let mut up = Vec::with_capacity(level.len() / 2);
            for pair in level.chunks(2) {
                let out = vec![lower.e.reg(class)];
                combine(lower, r, &out, &pair[0], &pair[1])?;
                up.push(out);
            }
            level = up;
        }
        let skip = BATCH.trailing_zeros() as usize;
        insert(lower, r, &level[0], &stack[skip..], batches)?;
    }
    lower.e.mov(n, next);
    lower.e.bra(batch_head);
    lower.e.at(single_head);
    let finished = lower.e.compute(Class::Pred, |reg| {
        format!("setp.ge.u64 {reg}, {n}, {count}")
    });
    lower.e.bra_if(finished, done);
    let row = load_quad(lower, &quad, class);
    for (c, stack) in slots.iter().enumerate() {
        insert(lower, r, &[row[c]], stack, n)?;
    }
    lower.e.op(format!("add.u64 {n}, {n}, 1"));
    lower.e.bra(single_head);
    lower.e.at(done);
    for (c, stack) in slots.iter().enumerate() {
        let result = vec![lower.e.reg(class)];
        let has = lower.e.reg(Class::Pred);
        let no = lower.pred_const(false);
        lower.e.mov(has, no);
        finish_stack_onto(lower, r, stack, count, &result, has)?;
        // Target `t + c` lies `c` further along the last axis.
        let mut pos = tpos.clone();
        if let Some(last) = pos.last_mut() {
            let base = *last;
            *last = u64_op(lower, |reg| format!("add.u64 {reg}, {base}, {c}"));
        }
        let target = u64_op(lower, |reg| format!("add.u64 {reg}, {t}, {c}"));
        let written = Written {
            to_target,
            dst: p.dst,
            tpos: &pos,
            piece_index: j,
            target_index: target,
            pieces: p.pieces,
        };
        write_result(lower, r, layout, pos.len(), &written, &result);
    }
    lower.e.bra(p.ret);
    Ok(())
}

/// Loads the next input leaf of the four targets (one 16-byte load when aligned).
fn load_quad(lower: &mut Lower<'_>, q: &Quad<'_>, class: Class) -> Vec<Reg> {
    let row: Vec<Reg> = (0..WIDTH).map(|_| lower.e.reg(class)).collect();
    let pos: Vec<Reg> = (0..q.tpos.len())
        .map(|k| {
            let (tp, tl, lp) = (q.tpos[k], q.tile[k], q.lpos[k]);
            u64_op(lower, |reg| format!("mad.lo.u64 {reg}, {tp}, {tl}, {lp}"))
        })
        .collect();
    let index = lower.element_index(q.input.offset, &pos, &q.input.pitch);
    let addr = lower.element_address(q.input.base, index, q.input.size);
    advance(lower, q.lpos, q.tile);
    let low = u64_op(lower, |reg| format!("and.b64 {reg}, {addr}, 15"));
    let aligned = lower
        .e
        .compute(Class::Pred, |reg| format!("setp.eq.u64 {reg}, {low}, 0"));
    let (one_by_one, loaded) = (lower.e.label(), lower.e.label());
    lower.e.bra_unless(aligned, one_by_one);
    let list = row
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    lower.e.op(format!("ld.global.v4.b32 {{{list}}}, [{addr}]"));
    lower.e.bra(loaded);
    lower.e.at(one_by_one);
    let kind = leaves(lower.module, &q.r.ty)[0].kind;
    for (c, &reg) in row.iter().enumerate() {
        let v = lower.load_scalar(kind, addr, 4 * c as u32, "global");
        lower.e.mov(reg, v);
    }
    lower.e.at(loaded);
    row
}
