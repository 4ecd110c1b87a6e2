//! The scan entry: one thread scans one aligned piece of one row's leaves from the piece's
//! exclusive prefix, in the canonical order of `brook_ir::scan_order` (its `scan_serial`):
//! slot `k` holds the waiting aligned block of `2^k` leaves and `above[k]` the fold of the
//! prefix and every older waiting block; pushing leaf `n` carries through the set low bits
//! of `n`, and the next prefix is the landing level's `above` combined with the carried
//! block.
//!
//! Besides the reduction passes' parameters it takes [`PassParam::Pre`], the pieces'
//! exclusive prefixes (`[row][piece]`, read for pieces after the first), and
//! [`PassParam::Init`], an exclusive scan's initial value (the first piece's prefix). Mode
//! bit 0: leaves come from `src` (`[row][leaf]`), else the input stream; bit 1: prefixes go to
//! the output stream (the reduction target, bound with the input's shape), else to `dst`
//! (`[row][leaf]`); bit 2: the scan is exclusive.

use super::{
    index_vars, load_run, load_slot, mode_bit, mul_add, next_positions, read_all, store_element,
    store_slot, target_ref, u64_op, unravel, value_at, value_vars, write_all, Pass, Reduction, Run,
    Share,
};
use crate::abi::BlockLayout;
use crate::gpu::{Gpu, PassParam};
use crate::lower::binding::Source;
use crate::lower::counter::slot_count;
use brook_ir::{BinaryOp, Literal, ScalarKind};

/// Levels of a thread's stack: pieces of at most `2^LEVELS` leaves (the runtime gives a
/// thread far fewer; the stack is written out level by level).
const LEVELS: u32 = 16;
/// The most leaves the entry scans in one piece.
pub const MAX_PIECE: u64 = 1 << LEVELS;

/// A scan's value in variables and whether it is there (a prefix may be nothing).
#[derive(Clone)]
pub(super) struct Held<V> {
    pub value: Vec<V>,
    pub has: V,
}

impl<V: Copy> Held<V> {
    pub(super) fn fresh<'ir, G: Gpu<'ir, Var = V>>(g: &mut G, r: &Reduction) -> Held<V> {
        Held {
            value: value_vars(g, r),
            has: g.temporary(ScalarKind::Bool),
        }
    }

    /// Copies `from` into this one.
    pub(super) fn copy_from<'ir, G: Gpu<'ir, Var = V>>(&self, g: &mut G, from: &Held<V>) {
        let value = read_all(g, &from.value);
        write_all(g, &self.value, &value);
        let has = g.read_var(from.has);
        g.write_var(self.has, has);
    }
}

/// One level of the stack: its waiting block and the fold of everything before it.
pub(super) struct Level<V> {
    pub block: Vec<V>,
    pub above: Held<V>,
}

/// The scan entry's body: scans this thread's piece.
pub fn emit<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    layout: &BlockLayout,
    pass: &Pass<G::Leaf>,
    source: &Source<G::Leaf>,
) -> Result<(), G::Error> {
    let (pre, init) = (g.pass_param(PassParam::Pre), g.pass_param(PassParam::Init));
    let worker = g.global_thread();
    let Share {
        unit: t,
        piece_index: j,
        lo,
        count,
    } = pass.share(g, worker);
    let tpos = unravel(g, t, &pass.domain);
    let from_scratch = mode_bit(g, pass.mode, 1);
    let to_output = mode_bit(g, pass.mode, 2);
    let exclusive = mode_bit(g, pass.mode, 4);
    let e = prefix_of_piece(g, r, (pre, init), exclusive, (t, j), pass.pieces);
    let levels: Vec<Level<G::Var>> = (0..slot_count(LEVELS - 1))
        .map(|_| Level {
            block: value_vars(g, r),
            above: Held::fresh(g, r),
        })
        .collect();
    let first = unravel(g, lo, &pass.tile);
    let lpos = index_vars(g, &first);
    let n = g.temporary(ScalarKind::U64);
    let contiguous = Run::contiguous(g, source, &pass.tile, lo, RUN);
    let piece = PieceScan {
        r,
        layout,
        pass,
        tpos: &tpos,
        e: &e,
        levels: &levels,
        exclusive,
        to_output,
    };
    // Runs of [`RUN`] leaves while they last (their loads in flight together), then one by one.
    for run_length in [RUN, 1] {
        let each = g.begin_loop();
        let at = g.read_var(n);
        let length = g.index_constant(run_length);
        let next = u64_op(g, BinaryOp::Add, at, length);
        let short = u64_op(g, BinaryOp::Lt, count, next);
        let stop = g.begin_if(short);
        g.jump_break(each);
        g.end_if(stop);
        let leaf = u64_op(g, BinaryOp::Add, lo, at);
        let first_slot = mul_add(g, t, pass.leaves_per_target, leaf);
        // The run's positions (for its outputs), then its leaves from the first; `lpos`
        // ends after the run whichever way the leaves come.
        let positions = next_positions(g, &lpos, &pass.tile, run_length);
        let after: Vec<G::Leaf> = lpos.iter().map(|&v| g.snapshot_var(v)).collect();
        write_all(g, &lpos, &positions[0]);
        let run = Run {
            from_scratch,
            src: pass.src,
            source,
            tpos: &tpos,
            tile: &pass.tile,
            lpos: &lpos,
            contiguous,
        };
        let xs = load_run(g, r, &run, (first_slot, run_length));
        write_all(g, &lpos, &after);
        for (k, (x, here)) in xs.iter().zip(&positions).enumerate() {
            let offset = g.index_constant(k as u64);
            let n_k = u64_op(g, BinaryOp::Add, at, offset);
            let slot = u64_op(g, BinaryOp::Add, first_slot, offset);
            piece.leaf(g, (n_k, slot), here, x)?;
        }
        g.write_var(n, next);
        g.begin_continuing(each);
        g.end_loop(each);
    }
    Ok(())
}

/// Leaves a thread loads together.
const RUN: u64 = 4;

/// A thread's piece being scanned.
struct PieceScan<'a, L, V> {
    r: &'a Reduction,
    layout: &'a BlockLayout,
    pass: &'a Pass<L>,
    tpos: &'a [L],
    /// The next leaf's exclusive prefix.
    e: &'a Held<V>,
    levels: &'a [Level<V>],
    exclusive: L,
    to_output: L,
}

impl<L: Copy, V: Copy> PieceScan<'_, L, V> {
    /// Leaf `n` of the piece (value `x`, at `here` in the tile, `row_slot` in a scratch
    /// row): its prefix written, then pushed.
    fn leaf<'ir, G: Gpu<'ir, Leaf = L, Var = V>>(
        &self,
        g: &mut G,
        (n, row_slot): (L, L),
        here: &[L],
        x: &[L],
    ) -> Result<(), G::Error> {
        let (r, pass) = (self.r, self.pass);
        let pos: Vec<L> = (0..self.tpos.len())
            .map(|k| mul_add(g, self.tpos[k], pass.tile[k], here[k]))
            .collect();
        let out = value_vars(g, r);
        let kind = g.begin_if(self.exclusive);
        let prefix = read_all(g, &self.e.value);
        write_all(g, &out, &prefix);
        g.begin_else(&kind);
        combine_after(g, r, &out, self.e, x)?;
        g.end_if(kind);
        let out = read_all(g, &out);
        let to = g.begin_if(self.to_output);
        let output = target_ref(g, r, self.layout, pos.len());
        store_element(g, r, &output, &pos, &out);
        g.begin_else(&to);
        store_slot(g, r, (pass.dst, row_slot), &out);
        g.end_if(to);
        push(g, r, self.levels, n, x, self.e)
    }
}

/// The exclusive prefix of piece `j` of row `t`: `pre[t][j]` after the first piece; the
/// initial value for an exclusive scan's first piece; nothing for an inclusive one's.
pub(super) fn prefix_of_piece<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    (pre, init): (G::Leaf, G::Leaf),
    exclusive: G::Leaf,
    (t, j): (G::Leaf, G::Leaf),
    pieces: G::Leaf,
) -> Held<G::Var> {
    let e = Held::fresh(g, r);
    let zero = g.index_constant(0);
    let later = u64_op(g, BinaryOp::Ne, j, zero);
    let which = g.begin_if(later);
    {
        let slot = mul_add(g, t, pieces, j);
        let v = load_slot(g, r, pre, slot);
        write_all(g, &e.value, &v);
        let yes = g.literal(Literal::bool(true));
        g.write_var(e.has, yes);
    }
    g.begin_else(&which);
    initial_prefix(g, r, init, exclusive, &e);
    g.end_if(which);
    e
}

/// Sets `e` to a row's first exclusive prefix: the initial value for an exclusive scan that
/// has one (`init`, its address, is not 0), else nothing.
pub(super) fn initial_prefix<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    init: G::Leaf,
    exclusive: G::Leaf,
    e: &Held<G::Var>,
) {
    // Inner levels scan totals exclusively without an initial value when the scan has none:
    // their first prefix is never read.
    let zero = g.index_constant(0);
    let given = u64_op(g, BinaryOp::Ne, init, zero);
    let has = g.binary(BinaryOp::LogicAnd, ScalarKind::Bool, exclusive, given);
    g.write_var(e.has, has);
    let load = g.begin_if(has);
    let at = value_at(g.module(), &r.ty, init);
    let v = g.load_memory(&at);
    write_all(g, &e.value, &v);
    g.end_if(load);
}

/// `dest = held ∘ right` when `held` is there, else `right`.
pub(super) fn combine_after<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    dest: &[G::Var],
    held: &Held<G::Var>,
    right: &[G::Leaf],
) -> Result<(), G::Error> {
    let has = g.read_var(held.has);
    let some = g.begin_if(has);
    let left = read_all(g, &held.value);
    let merged = g.combine_step(r, &left, right)?;
    write_all(g, dest, &merged);
    g.begin_else(&some);
    write_all(g, dest, right);
    g.end_if(some);
    Ok(())
}

/// Pushes leaf `n` (value `x`) and makes `e` the next leaf's exclusive prefix: the carry runs
/// through the set low bits of `n` (each waiting block on the left, its `above` becoming the
/// carry's), lands at the first clear bit, and `e = above ∘ block`. A level is full exactly
/// when its bit of the count is set.
pub(super) fn push<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    levels: &[Level<G::Var>],
    n: G::Leaf,
    x: &[G::Leaf],
    e: &Held<G::Var>,
) -> Result<(), G::Error> {
    let carry = value_vars(g, r);
    write_all(g, &carry, x);
    let over = Held::fresh(g, r);
    over.copy_from(g, e);
    carry_from(g, r, levels, 0, n, (&carry, &over))?;
    let carried = read_all(g, &carry);
    combine_after(g, r, &e.value, &over, &carried)?;
    let yes = g.literal(Literal::bool(true));
    g.write_var(e.has, yes);
    Ok(())
}

/// The carry at level `k`: merged with the waiting block and on to the next level when bit
/// `k` of `n` is set, else landed here.
fn carry_from<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    levels: &[Level<G::Var>],
    k: usize,
    n: G::Leaf,
    (carry, over): (&[G::Var], &Held<G::Var>),
) -> Result<(), G::Error> {
    let Some(level) = levels.get(k) else {
        return Ok(());
    };
    let mask = g.index_constant(1 << k);
    let bit = u64_op(g, BinaryOp::BitAnd, n, mask);
    let zero = g.index_constant(0);
    let set = u64_op(g, BinaryOp::Ne, bit, zero);
    let full = g.begin_if(set);
    {
        let block = read_all(g, &level.block);
        let right = read_all(g, carry);
        let merged = g.combine_step(r, &block, &right)?;
        write_all(g, carry, &merged);
        over.copy_from(g, &level.above);
        carry_from(g, r, levels, k + 1, n, (carry, over))?;
    }
    g.begin_else(&full);
    {
        let value = read_all(g, carry);
        write_all(g, &level.block, &value);
        level.above.copy_from(g, over);
    }
    g.end_if(full);
    Ok(())
}
