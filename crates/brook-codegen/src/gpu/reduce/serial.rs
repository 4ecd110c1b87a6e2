//! The serial path: one thread reduces one aligned piece of one target's leaves with the
//! binary-counter stack of aligned subtrees ([`crate::lower::counter`]), which gives exactly
//! the canonical tree of the piece. Threads are numbered target-fastest, so neighbouring
//! threads read neighbouring targets (columns of a matrix lie side by side). Where the stack
//! is in variables, leaves are loaded in batches of [`BATCH`] while they last (their loads in
//! flight together), each batch an aligned subtree inserted above the levels it fills.

use super::{
    advance, index_vars, load_run, load_slot, mode_bit, mul_add, read_all, tree, u64_op, unravel,
    value_vars, write_all, write_piece, Pass, Reduction, Run, Share, BATCH,
};
use crate::abi::BlockLayout;
use crate::gpu::Gpu;
use crate::lower::binding::Source;
use crate::lower::counter::{self, slot_count, Combine, Slots, LEVELS};
use brook_ir::{BinaryOp, Literal, ScalarKind};

/// The serial entry's body: reduces this thread's piece and writes its value.
pub fn emit<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    layout: &BlockLayout,
    pass: &Pass<G::Leaf>,
    source: &Source<G::Leaf>,
) -> Result<(), G::Error> {
    let worker = g.global_thread();
    let Share {
        unit: t,
        piece_index: j,
        lo,
        count,
    } = pass.share(g, worker);
    let tpos = unravel(g, t, &pass.domain);
    let leaves = SerialLeaves {
        from_scratch: mode_bit(g, pass.mode, 1),
        src: pass.src,
        lo,
        leaves: pass.leaves_per_target,
        t,
        tpos: &tpos,
        tile: &pass.tile,
        lpos: {
            let first = unravel(g, lo, &pass.tile);
            index_vars(g, &first)
        },
        contiguous: Run::contiguous(g, source, &pass.tile, lo, BATCH),
        source,
    };
    let slots = g.stack_slots(r, slot_count(LEVELS));
    let n = g.temporary(ScalarKind::U64);
    if let Slots::Vars(vars) = &slots {
        batches(
            g,
            r,
            &leaves,
            (n, count),
            &vars[BATCH.trailing_zeros() as usize..],
        )?;
    }
    // The rest, one leaf at a time.
    let each = g.begin_loop();
    let at = g.read_var(n);
    let finished = u64_op(g, BinaryOp::Ge, at, count);
    let stop = g.begin_if(finished);
    g.jump_break(each);
    g.end_if(stop);
    let value = load_leaf(g, r, &leaves, at);
    counter::insert(g, &slots, 0, at, value, &mut combine_fn(r))?;
    let one = g.index_constant(1);
    let next = u64_op(g, BinaryOp::Add, at, one);
    g.write_var(n, next);
    g.begin_continuing(each);
    g.end_loop(each);
    let result = finish_stack(g, r, &slots, count)?;
    let slot = mul_add(g, t, pass.pieces, j);
    write_piece(g, r, layout, pass, (&tpos, slot), &result);
    Ok(())
}

/// The combine step as the counter stack calls it.
pub fn combine_fn<'ir, 'r, G: Gpu<'ir>>(r: &'r Reduction) -> impl Combine<'ir, G> + 'r {
    move |g, left, right| g.combine_step(r, left, right)
}

/// Folds the stack of `count` leaves: the canonical value of the piece.
pub fn finish_stack<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    slots: &Slots<G::Leaf, G::Var>,
    count: G::Leaf,
) -> Result<Vec<G::Leaf>, G::Error> {
    let result = value_vars(g, r);
    let has = g.temporary(ScalarKind::Bool);
    let no = g.literal(Literal::bool(false));
    g.write_var(has, no);
    counter::finish_onto(g, slots, count, &result, has, &mut combine_fn(r))?;
    Ok(read_all(g, &result))
}

/// Leaves in batches of [`BATCH`] while they last: their loads are independent (in flight
/// together), and each batch is an aligned subtree inserted into the stack `upper` of the
/// levels above the ones it fills. Leaves `n` as the first leaf left over.
fn batches<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    leaves: &SerialLeaves<'_, G::Leaf, G::Var>,
    (n, count): (G::Var, G::Leaf),
    upper: &[Vec<G::Var>],
) -> Result<(), G::Error> {
    let each = g.begin_loop();
    let at = g.read_var(n);
    let size = g.index_constant(BATCH);
    let next = u64_op(g, BinaryOp::Add, at, size);
    let short = u64_op(g, BinaryOp::Lt, count, next);
    let stop = g.begin_if(short);
    g.jump_break(each);
    g.end_if(stop);
    let loaded = load_batch(g, r, leaves, at);
    let value = tree(g, r, loaded)?;
    let shift = g.index_constant(u64::from(BATCH.trailing_zeros()));
    let batch = u64_op(g, BinaryOp::Shr, at, shift);
    let stack = Slots::Vars(upper.to_vec());
    counter::insert(g, &stack, 0, batch, value, &mut combine_fn(r))?;
    g.write_var(n, next);
    g.begin_continuing(each);
    g.end_loop(each);
    Ok(())
}

/// Where a serial thread's leaves come from.
struct SerialLeaves<'a, L, V> {
    from_scratch: L,
    src: L,
    lo: L,
    /// Leaves per target in this pass (the scratch array's row length).
    leaves: L,
    t: L,
    tpos: &'a [L],
    tile: &'a [L],
    /// The position of the next input leaf in the tile (advanced by each load).
    lpos: Vec<V>,
    /// Batches of the input lie side by side ([`Run::contiguous`]).
    contiguous: L,
    source: &'a Source<L>,
}

/// Leaves `lo + n ..` of a batch, from the scratch array or the input, decided once for the
/// batch ([`super::load_run`]).
fn load_batch<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    l: &SerialLeaves<'_, G::Leaf, G::Var>,
    n: G::Leaf,
) -> Vec<Vec<G::Leaf>> {
    let first = u64_op(g, BinaryOp::Add, l.lo, n);
    let first_slot = mul_add(g, l.t, l.leaves, first);
    let run = Run {
        from_scratch: l.from_scratch,
        src: l.src,
        source: l.source,
        tpos: l.tpos,
        tile: l.tile,
        lpos: &l.lpos,
        contiguous: l.contiguous,
    };
    load_run(g, r, &run, (first_slot, BATCH))
}

/// Leaf `lo + n`: from the scratch array (`src[t][lo + n]`), or the next input leaf.
fn load_leaf<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    l: &SerialLeaves<'_, G::Leaf, G::Var>,
    n: G::Leaf,
) -> Vec<G::Leaf> {
    let into = value_vars(g, r);
    let from = g.begin_if(l.from_scratch);
    {
        let leaf = u64_op(g, BinaryOp::Add, l.lo, n);
        let slot = mul_add(g, l.t, l.leaves, leaf);
        let v = load_slot(g, r, l.src, slot);
        write_all(g, &into, &v);
    }
    g.begin_else(&from);
    {
        let lpos = read_all(g, &l.lpos);
        let v = input_leaf(g, r, l.source, l.tpos, l.tile, &lpos);
        write_all(g, &into, &v);
        advance(g, &l.lpos, l.tile);
    }
    g.end_if(from);
    read_all(g, &into)
}

/// The input leaf at `lpos` in the tile of the target at `tpos`.
pub fn input_leaf<'ir, G: Gpu<'ir>>(
    g: &mut G,
    r: &Reduction,
    source: &Source<G::Leaf>,
    tpos: &[G::Leaf],
    tile: &[G::Leaf],
    lpos: &[G::Leaf],
) -> Vec<G::Leaf> {
    let pos: Vec<G::Leaf> = (0..tpos.len())
        .map(|k| mul_add(g, tpos[k], tile[k], lpos[k]))
        .collect();
    match source {
        Source::Stream(s) => {
            let index = g.element_index(s.offset, &pos, &s.pitch);
            let addr = g.element_address(s.base, index, s.size);
            let input_ty = g.kernel().params[r.input].ty.clone();
            g.load_element(&input_ty, addr)
        }
        Source::Iterator { start, end, shape } => {
            crate::lower::launch::iterator_value(g, start, end, shape, &pos)
        }
    }
}
