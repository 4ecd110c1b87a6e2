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
//! one 4-byte scalar ([`applies`]), the domain's last axis is a multiple of 4, each target's
//! tile is one element wide on the last axis, which has unit pitch, each target's leaves are
//! evenly spaced in memory, and every row of four targets' leaves is 16-byte aligned.

use super::serial::{combine_fn, finish_stack};
use super::{
    mode_bit, mul_add, one_quad_scalar, share, tree, u64_op, unravel, write_piece, Pass, Reduction,
    Share, BATCH,
};
use crate::abi::BlockLayout;
use crate::gpu::Gpu;
use crate::lower::counter::{self, slot_count, Slots};
use crate::lower::StreamRef;
use brook_ir::{BinaryOp, ScalarKind};

/// Targets per thread.
const WIDTH: u64 = 4;
/// Levels of each stack: a thread reduces at most `2^LEVELS` leaves per target in a pass.
/// Four deep stacks would cost registers and so occupancy (measured on PTX: 110 registers, a
/// quarter of the warps, at 14 levels); more passes over small scratch arrays cost less.
const LEVELS: u32 = 8;
/// The most leaves per target one thread of this path reduces in a pass.
pub const MAX_PIECE: u64 = 1 << LEVELS;

/// Whether the reduction's values (input and target alike) are one 4-byte scalar.
pub fn applies(module: &brook_ir::Module, kernel: &brook_ir::Kernel, r: &Reduction) -> bool {
    one_quad_scalar(module, kernel, r).is_some()
}

/// The entry's body: this thread's piece of four targets' leaves, written.
pub fn emit<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    layout: &BlockLayout,
    pass: &Pass<G::Leaf>,
    input: &StreamRef<G::Leaf>,
) -> Result<(), G::Error> {
    let kind = one_quad_scalar(g.module(), g.kernel(), r)
        .expect("the column entry is written for one 4-byte scalar");
    let worker = g.global_thread();
    let two = g.index_constant(2);
    let quads = u64_op(g, BinaryOp::Shr, pass.targets, two);
    let Share {
        unit: q,
        piece_index: j,
        lo,
        count,
    } = pass_share(g, pass, worker, quads);
    let t = u64_op(g, BinaryOp::Shl, q, two);
    let tpos = unravel(g, t, &pass.domain);
    let stacks: Vec<Vec<Vec<G::Var>>> = (0..WIDTH)
        .map(|_| {
            (0..slot_count(LEVELS))
                .map(|_| vec![g.temporary(kind)])
                .collect()
        })
        .collect();
    let from_scratch = mode_bit(g, pass.mode, 1);
    let walk = Walk::start(g, (input, &tpos), pass, (t, lo), from_scratch);
    let n = g.temporary(ScalarKind::U64);
    let zero = g.index_constant(0);
    g.write_var(n, zero);
    batches(g, r, (&walk, kind), (n, count), &stacks)?;
    // The rest, one row at a time.
    let each = g.begin_loop();
    let at = g.read_var(n);
    let finished = u64_op(g, BinaryOp::Ge, at, count);
    let stop = g.begin_if(finished);
    g.jump_break(each);
    g.end_if(stop);
    let row = walk.load_rows(g, 1, kind).remove(0);
    for (c, stack) in stacks.iter().enumerate() {
        let slots = Slots::Vars(stack.clone());
        counter::insert(g, &slots, 0, at, vec![row[c]], &mut combine_fn(r))?;
    }
    let one = g.index_constant(1);
    let next = u64_op(g, BinaryOp::Add, at, one);
    g.write_var(n, next);
    g.begin_continuing(each);
    g.end_loop(each);
    for (c, stack) in stacks.iter().enumerate() {
        let result = finish_stack(g, r, &Slots::Vars(stack.clone()), count)?;
        // Target `t + c` lies `c` further along the last axis; the scratch array is
        // `[piece][target]`.
        let c = g.index_constant(c as u64);
        let mut pos = tpos.clone();
        if let Some(last) = pos.last_mut() {
            *last = u64_op(g, BinaryOp::Add, *last, c);
        }
        let target = u64_op(g, BinaryOp::Add, t, c);
        let slot = mul_add(g, j, pass.targets, target);
        write_piece(g, r, layout, pass, (&pos, slot), &result);
    }
    Ok(())
}

/// This thread's share: a group of four targets, one piece of their leaves.
fn pass_share<'ir, G: Gpu<'ir>>(
    g: &mut G,
    pass: &Pass<G::Leaf>,
    worker: G::Leaf,
    quads: G::Leaf,
) -> Share<G::Leaf> {
    share(
        g,
        worker,
        quads,
        (pass.pieces, pass.piece),
        pass.leaves_per_target,
    )
}

/// Rows in batches of [`BATCH`] while they last, each batch an aligned subtree of each
/// target inserted above the levels it fills. Leaves `n` as the first row left over.
fn batches<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    (walk, kind): (&Walk<G::Leaf, G::Var>, ScalarKind),
    (n, count): (G::Var, G::Leaf),
    stacks: &[Vec<Vec<G::Var>>],
) -> Result<(), G::Error> {
    let each = g.begin_loop();
    let at = g.read_var(n);
    let size = g.index_constant(BATCH);
    let next = u64_op(g, BinaryOp::Add, at, size);
    let short = u64_op(g, BinaryOp::Lt, count, next);
    let stop = g.begin_if(short);
    g.jump_break(each);
    g.end_if(stop);
    let rows = walk.load_rows(g, BATCH as usize, kind);
    let shift = g.index_constant(u64::from(BATCH.trailing_zeros()));
    let batch = u64_op(g, BinaryOp::Shr, at, shift);
    let skip = BATCH.trailing_zeros() as usize;
    for (c, stack) in stacks.iter().enumerate() {
        let column: Vec<Vec<G::Leaf>> = rows.iter().map(|row| vec![row[c]]).collect();
        let value = tree(g, r, column)?;
        let slots = Slots::Vars(stack[skip..].to_vec());
        counter::insert(g, &slots, 0, batch, value, &mut combine_fn(r))?;
    }
    g.write_var(n, next);
    g.begin_continuing(each);
    g.end_loop(each);
    Ok(())
}

/// A thread's walk down its four targets' leaves: the address of the next row of four and
/// the bytes between rows. The runtime uses this entry only where each target's leaves are
/// evenly spaced in memory and every row of four is 16-byte aligned (a scratch array of
/// this entry always is), so a row is one 16-byte load and the next row lies a fixed
/// stride further.
struct Walk<L, V> {
    addr: V,
    stride: L,
}

impl<L: Copy, V: Copy> Walk<L, V> {
    /// The walk from leaf `lo` of targets `t..t + 4` (at `tpos`): in the input or, when
    /// `from_scratch`, in the `[piece][target]` scratch array of an earlier column pass.
    fn start<'ir, G: Gpu<'ir, Leaf = L, Var = V>>(
        g: &mut G,
        (input, tpos): (&StreamRef<L>, &[L]),
        pass: &Pass<L>,
        (t, lo): (L, L),
        from_scratch: L,
    ) -> Walk<L, V> {
        let (input_addr, input_stride) = input_start(g, input, (tpos, &pass.tile), lo);
        let slot = mul_add(g, lo, pass.targets, t);
        let scratch_addr = g.element_address(pass.src, slot, 4);
        let four = g.index_constant(4);
        let scratch_stride = u64_op(g, BinaryOp::Mul, pass.targets, four);
        let first = g.select(ScalarKind::U64, from_scratch, scratch_addr, input_addr);
        let stride = g.select(ScalarKind::U64, from_scratch, scratch_stride, input_stride);
        let addr = g.temporary(ScalarKind::U64);
        g.write_var(addr, first);
        Walk { addr, stride }
    }

    /// Loads the next `count` rows of four leaves and moves past them.
    fn load_rows<'ir, G: Gpu<'ir, Leaf = L, Var = V>>(
        &self,
        g: &mut G,
        count: usize,
        kind: ScalarKind,
    ) -> Vec<[L; 4]> {
        let mut at = g.read_var(self.addr);
        let rows = (0..count)
            .map(|k| {
                if k > 0 {
                    at = u64_op(g, BinaryOp::Add, at, self.stride);
                }
                g.load_aligned_quad(kind, at)
            })
            .collect();
        let next = u64_op(g, BinaryOp::Add, at, self.stride);
        g.write_var(self.addr, next);
        rows
    }
}

/// The address of leaf `lo` of the input tiles of the targets at `tpos`, and the bytes between
/// consecutive leaves (they step along the innermost tile axis longer than one element).
fn input_start<'ir, G: Gpu<'ir>>(
    g: &mut G,
    input: &StreamRef<G::Leaf>,
    (tpos, tile): (&[G::Leaf], &[G::Leaf]),
    lo: G::Leaf,
) -> (G::Leaf, G::Leaf) {
    let first = unravel(g, lo, tile);
    let pos: Vec<G::Leaf> = (0..tpos.len())
        .map(|k| mul_add(g, tpos[k], tile[k], first[k]))
        .collect();
    let index = g.element_index(input.offset, &pos, &input.pitch);
    let start = g.element_address(input.base, index, input.size);
    let one = g.index_constant(1);
    let mut pitch = g.index_constant(0);
    for (&extent, &axis_pitch) in tile.iter().zip(&input.pitch) {
        let long = u64_op(g, BinaryOp::Gt, extent, one);
        pitch = g.select(ScalarKind::U64, long, axis_pitch, pitch);
    }
    let size = g.index_constant(u64::from(input.size));
    (start, u64_op(g, BinaryOp::Mul, pitch, size))
}
