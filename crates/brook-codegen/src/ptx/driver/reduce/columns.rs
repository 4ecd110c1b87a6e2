//! The column path: one thread reduces four neighbouring targets at once, for reductions
//! whose targets' leaves lie side by side (column sums: each target is a column, so the four
//! leaves of one row for four neighbouring columns are 16 consecutive bytes).
//!
//! The thread does what the serial path does (see [`super::serial`]: batches of leaves, a
//! binary-counter stack, the canonical tree of its piece) for four targets with four stacks,
//! loading each row's four leaves with one 16-byte load. A warp then reads 512 consecutive
//! bytes per load instead of 128, and the address arithmetic (one add per row) is shared by
//! four targets. A pass of this entry that is not the last writes its scratch array as
//! `[piece][target]`, so that the next pass is again a column pass over rows of targets.
//! The runtime chooses this path (for the first pass, and so for the rest) when the value is
//! one 4-byte scalar, the domain's last axis is a multiple of 4, each target's tile is one
//! element wide on the last axis, which has unit pitch, each target's leaves are evenly
//! spaced in memory, and every row of four targets' leaves is 16-byte aligned.

use super::common::{
    combine, finish_stack_onto, insert, mode_bit, slot_count, unravel, write_result, Pass,
    Reduction, Share, Slots, Written, BATCH,
};
use crate::abi::BlockLayout;
use crate::gpu::reduce::share;
use crate::leaves::leaves;
use crate::ptx::driver::special;
use crate::ptx::emit::{Class, Reg};
use crate::ptx::lower::{Lower, StreamRef};
use crate::CompileError;

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
    } = share(lower, g, quads, (p.pieces, p.piece), p.leaves_per_target);
    let t = u64_op(lower, |reg| format!("shl.b64 {reg}, {q}, 2"));
    let tpos = unravel(lower, t, &p.domain);
    let to_target = mode_bit(lower, p.mode, 2);
    let class = Class::of(leaves(lower.module, &r.ty)[0].kind);
    let slots: Vec<Vec<Vec<Reg>>> = (0..WIDTH)
        .map(|_| {
            (0..slot_count(LEVELS))
                .map(|_| vec![lower.e.reg(class)])
                .collect()
        })
        .collect();
    let from_scratch = mode_bit(lower, p.mode, 1);
    let rows = Rows {
        from_scratch,
        src: p.src,
        targets,
        t,
        lo,
        value_size: r.value_size,
    };
    let walk = Walk::start(lower, input, &tpos, &p.tile, &rows);
    let n = lower.e.mov_imm(Class::B64, 0);
    let (batch_head, single_head, done) = (lower.e.label(), lower.e.label(), lower.e.label());
    lower.e.at(batch_head);
    let next = u64_op(lower, |reg| format!("add.u64 {reg}, {n}, {BATCH}"));
    let short = lower.e.compute(Class::Pred, |reg| {
        format!("setp.gt.u64 {reg}, {next}, {count}")
    });
    lower.e.bra_if(short, single_head);
    let rows = walk.load_rows(lower, BATCH as usize, class);
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
        insert(
            lower,
            r,
            &level[0],
            &Slots::Vars(stack[skip..].to_vec()),
            batches,
        )?;
    }
    lower.e.mov(n, next);
    lower.e.bra(batch_head);
    lower.e.at(single_head);
    let finished = lower.e.compute(Class::Pred, |reg| {
        format!("setp.ge.u64 {reg}, {n}, {count}")
    });
    lower.e.bra_if(finished, done);
    let row = walk.load_rows(lower, 1, class).remove(0);
    for (c, stack) in slots.iter().enumerate() {
        insert(lower, r, &[row[c]], &Slots::Vars(stack.clone()), n)?;
    }
    lower.e.op(format!("add.u64 {n}, {n}, 1"));
    lower.e.bra(single_head);
    lower.e.at(done);
    for (c, stack) in slots.iter().enumerate() {
        let result = vec![lower.e.reg(class)];
        let has = lower.e.reg(Class::Pred);
        let no = lower.pred_const(false);
        lower.e.mov(has, no);
        finish_stack_onto(lower, r, &Slots::Vars(stack.clone()), count, &result, has)?;
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
            targets: p.targets,
        };
        write_result(lower, r, layout, pos.len(), &written, &result);
    }
    let ret = lower.ret;
    lower.e.bra(ret);
    Ok(())
}

/// Where a thread's rows start: leaf `lo` of targets `t..t + 4`, in the input or, when
/// `from_scratch`, in the `[piece][target]` scratch array `src` of an earlier column pass.
struct Rows {
    from_scratch: Reg,
    src: Reg,
    targets: Reg,
    t: Reg,
    lo: Reg,
    value_size: u32,
}

/// A thread's walk down its four targets' leaves: the address of the next row of four and
/// the bytes between rows. The runtime uses this entry only where each target's leaves are
/// evenly spaced in memory and every row of four is 16-byte aligned (a scratch array of
/// this entry always is), so a row is one 16-byte load and the next row lies a fixed
/// stride further.
struct Walk {
    addr: Reg,
    stride: Reg,
}

impl Walk {
    fn start(
        lower: &mut Lower<'_>,
        input: &StreamRef,
        tpos: &[Reg],
        tile: &[Reg],
        rows: &Rows,
    ) -> Walk {
        let (input_addr, input_stride) = Walk::input_start(lower, input, tpos, tile, rows.lo);
        let Rows {
            from_scratch,
            src,
            targets,
            t,
            lo,
            value_size,
        } = *rows;
        let slot = u64_op(lower, |reg| {
            format!("mad.lo.u64 {reg}, {lo}, {targets}, {t}")
        });
        let scratch_addr = lower.element_address(src, slot, value_size);
        let scratch_stride = u64_op(lower, |reg| {
            format!("mul.lo.u64 {reg}, {targets}, {value_size}")
        });
        let addr = lower.e.reg(Class::B64);
        lower.e.op(format!(
            "selp.b64 {addr}, {scratch_addr}, {input_addr}, {from_scratch}"
        ));
        let stride = u64_op(lower, |reg| {
            format!("selp.b64 {reg}, {scratch_stride}, {input_stride}, {from_scratch}")
        });
        Walk { addr, stride }
    }

    /// The address of leaf `lo` of the input tiles of the targets at `tpos`, and the bytes
    /// between consecutive leaves.
    fn input_start(
        lower: &mut Lower<'_>,
        input: &StreamRef,
        tpos: &[Reg],
        tile: &[Reg],
        lo: Reg,
    ) -> (Reg, Reg) {
        let first = unravel(lower, lo, tile);
        let pos: Vec<Reg> = (0..tpos.len())
            .map(|k| {
                let (tp, tl, lp) = (tpos[k], tile[k], first[k]);
                u64_op(lower, |reg| format!("mad.lo.u64 {reg}, {tp}, {tl}, {lp}"))
            })
            .collect();
        let index = lower.element_index(input.offset, &pos, &input.pitch);
        let start = lower.element_address(input.base, index, input.size);
        // Consecutive leaves step along the innermost tile axis longer than one element.
        let pitch = lower.e.mov_imm(Class::B64, 0);
        for (&extent, &axis_pitch) in tile.iter().zip(&input.pitch) {
            let long = lower
                .e
                .compute(Class::Pred, |reg| format!("setp.gt.u64 {reg}, {extent}, 1"));
            lower.e.op(format!("@{long} mov.u64 {pitch}, {axis_pitch}"));
        }
        let size = input.size;
        let stride = u64_op(lower, |reg| format!("mul.lo.u64 {reg}, {pitch}, {size}"));
        (start, stride)
    }

    /// Loads the next `count` rows of four leaves and moves past them.
    fn load_rows(&self, lower: &mut Lower<'_>, count: usize, class: Class) -> Vec<Vec<Reg>> {
        let (addr, stride) = (self.addr, self.stride);
        let mut at = addr;
        let rows = (0..count)
            .map(|k| {
                if k > 0 {
                    let previous = at;
                    at = u64_op(lower, |reg| format!("add.u64 {reg}, {previous}, {stride}"));
                }
                let row: Vec<Reg> = (0..WIDTH).map(|_| lower.e.reg(class)).collect();
                let list = row
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ");
                lower
                    .e
                    .op(format!("ld.global.nc.v4.b32 {{{list}}}, [{at}]"));
                row
            })
            .collect();
        lower.e.op(format!("add.u64 {addr}, {at}, {stride}"));
        rows
    }
}
