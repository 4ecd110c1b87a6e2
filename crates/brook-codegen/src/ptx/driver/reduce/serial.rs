//! The serial path: one thread reduces one aligned piece of one target's leaves with a
//! binary-counter stack of aligned subtrees (level `k` holds a subtree of `2^k` leaves), which
//! gives exactly the canonical tree of the piece. Threads are numbered target-fastest, so
//! neighbouring threads read neighbouring targets (columns of a matrix lie side by side).
//! Leaves are loaded in batches of [`BATCH`] while they last (their loads are in flight
//! together), each batch an aligned subtree inserted above the levels it fills. A heavy
//! reduction (a long combine step) loads one leaf at a time into a stack in local memory.

use super::common::{
    advance, combine, finish_stack, fresh_value, global_thread, insert, stack_slots, unravel_fresh,
    write_result, Pass, Reduction, Scratch, Share, Slots, Source, Written, BATCH,
};
use crate::abi::BlockLayout;
use crate::ptx::emit::{Class, Label, Reg};
use crate::ptx::lower::Lower;
use crate::CompileError;

/// The serial entry's body after the pass parameters.
pub(super) fn emit(
    lower: &mut Lower<'_>,
    r: &Reduction,
    layout: &BlockLayout,
    pass: &Pass,
    source: &Source,
) -> Result<(), CompileError> {
    let Pass {
        src,
        dst,
        leaves_per_target,
        pieces,
        mode,
        ..
    } = *pass;
    let (domain, tile) = (&pass.domain, &pass.tile);
    let rank = domain.len();
    let g = global_thread(lower);
    let Share {
        unit: t,
        piece_index: j,
        lo,
        count,
    } = pass.share(lower, g);
    // The target's position and, for input leaves, the tile's first position.
    let tpos = unravel_fresh(lower, t, domain);
    let from_scratch = {
        let bit = lower
            .e
            .compute(Class::B32, |reg| format!("and.b32 {reg}, {mode}, 1"));
        lower
            .e
            .compute(Class::Pred, |reg| format!("setp.ne.u32 {reg}, {bit}, 0"))
    };
    let to_target = {
        let bit = lower
            .e
            .compute(Class::B32, |reg| format!("and.b32 {reg}, {mode}, 2"));
        lower
            .e
            .compute(Class::Pred, |reg| format!("setp.ne.u32 {reg}, {bit}, 0"))
    };
    let value = fresh_value(lower, r);
    let slots = stack_slots(lower, r);
    // Position of the current leaf inside the tile (input leaves only).
    let lpos: Vec<Reg> = (0..rank).map(|_| lower.e.reg(Class::B64)).collect();
    let first = unravel_fresh(lower, lo, tile);
    for (p, f) in lpos.iter().zip(&first) {
        lower.e.mov(*p, *f);
    }
    let n = lower.e.mov_imm(Class::B64, 0);
    let leaf_source = SerialLeaves {
        from_scratch,
        src,
        lo,
        leaves: leaves_per_target,
        t,
        tpos: &tpos,
        tile,
        lpos: &lpos,
        source,
    };
    let (single_head, done) = (lower.e.label(), lower.e.label());
    if let Slots::Vars(vars) = &slots {
        batches(
            lower,
            r,
            &leaf_source,
            (n, count),
            &vars[BATCH.trailing_zeros() as usize..],
            single_head,
        )?;
    }
    // The rest, one leaf at a time.
    lower.e.at(single_head);
    let finished = lower.e.compute(Class::Pred, |reg| {
        format!("setp.ge.u64 {reg}, {n}, {count}")
    });
    lower.e.bra_if(finished, done);
    load_serial_leaf(lower, r, &leaf_source, n, &value);
    insert(lower, r, &value, &slots, n)?;
    lower.e.op(format!("add.u64 {n}, {n}, 1"));
    lower.e.bra(single_head);
    lower.e.at(done);
    let result = finish_stack(lower, r, &slots, count)?;
    let written = Written {
        to_target,
        dst,
        tpos: &tpos,
        piece_index: j,
        target_index: t,
        scratch: Scratch::TargetMajor { pieces },
    };
    write_result(lower, r, layout, rank, &written, &result);
    Ok(())
}

/// Leaves in batches of [`BATCH`] while they last (unless the reduction is heavy): their
/// loads are independent (in flight together), and each batch is an aligned subtree inserted
/// into the stack `upper` of the levels above the ones it fills. Leaves `n` as the first leaf
/// left over and goes on at `single_head`.
fn batches(
    lower: &mut Lower<'_>,
    r: &Reduction,
    leaf_source: &SerialLeaves<'_>,
    (n, count): (Reg, Reg),
    upper: &[Vec<Reg>],
    single_head: Label,
) -> Result<(), CompileError> {
    let batch_head = lower.e.label();
    lower.e.at(batch_head);
    let next = lower
        .e
        .compute(Class::B64, |reg| format!("add.u64 {reg}, {n}, {BATCH}"));
    let short = lower.e.compute(Class::Pred, |reg| {
        format!("setp.gt.u64 {reg}, {next}, {count}")
    });
    lower.e.bra_if(short, single_head);
    let mut level: Vec<Vec<Reg>> = Vec::with_capacity(BATCH as usize);
    for k in 0..BATCH {
        let at = lower
            .e
            .compute(Class::B64, |reg| format!("add.u64 {reg}, {n}, {k}"));
        let v = fresh_value(lower, r);
        load_serial_leaf(lower, r, leaf_source, at, &v);
        level.push(v);
    }
    while level.len() > 1 {
        let mut up = Vec::with_capacity(level.len() / 2);
        for pair in level.chunks(2) {
            let out: Vec<Reg> = pair[0].iter().map(|v| lower.e.reg(v.class)).collect();
            combine(lower, r, &out, &pair[0], &pair[1])?;
            up.push(out);
        }
        level = up;
    }
    let batches = lower.e.compute(Class::B64, |reg| {
        format!("shr.u64 {reg}, {n}, {}", BATCH.trailing_zeros())
    });
    insert(lower, r, &level[0], &Slots::Vars(upper.to_vec()), batches)?;
    lower.e.mov(n, next);
    lower.e.bra(batch_head);
    Ok(())
}

/// Where a serial thread's leaves come from.
struct SerialLeaves<'a> {
    from_scratch: Reg,
    src: Reg,
    lo: Reg,
    /// Leaves per target in this pass (the scratch array's row length).
    leaves: Reg,
    t: Reg,
    tpos: &'a [Reg],
    tile: &'a [Reg],
    /// The position of the next input leaf in the tile (advanced by each load).
    lpos: &'a [Reg],
    source: &'a Source,
}

/// Loads leaf `lo + n` into `into`: from the scratch array, or the next input leaf.
fn load_serial_leaf(
    lower: &mut Lower<'_>,
    r: &Reduction,
    l: &SerialLeaves<'_>,
    n: Reg,
    into: &[Reg],
) {
    let (from_input, loaded) = (lower.e.label(), lower.e.label());
    lower.e.bra_unless(l.from_scratch, from_input);
    {
        let (lo, leaves, t) = (l.lo, l.leaves, l.t);
        let leaf = lower
            .e
            .compute(Class::B64, |reg| format!("add.u64 {reg}, {lo}, {n}"));
        let slot = lower.e.compute(Class::B64, |reg| {
            format!("mad.lo.u64 {reg}, {t}, {leaves}, {leaf}")
        });
        let addr = lower.element_address(l.src, slot, r.value_size);
        let v = lower.load_value(&r.ty, addr, "global", true);
        for (d, s) in into.iter().zip(&v) {
            lower.e.mov(*d, *s);
        }
        lower.e.bra(loaded);
    }
    lower.e.at(from_input);
    {
        let pos: Vec<Reg> = (0..l.tpos.len())
            .map(|k| {
                let (tp, tl, lp) = (l.tpos[k], l.tile[k], l.lpos[k]);
                lower.e.compute(Class::B64, |reg| {
                    format!("mad.lo.u64 {reg}, {tp}, {tl}, {lp}")
                })
            })
            .collect();
        let v = match l.source {
            Source::Stream(s) => {
                let index = lower.element_index(s.offset, &pos, &s.pitch);
                let addr = lower.element_address(s.base, index, s.size);
                let input_ty = lower.kernel.params[r.input].ty.clone();
                lower.load_value(&input_ty, addr, "global", true)
            }
            Source::Iterator { start, end, shape } => {
                crate::lower::launch::iterator_value(lower, start, end, shape, &pos)
            }
        };
        for (d, s) in into.iter().zip(&v) {
            lower.e.mov(*d, *s);
        }
        advance(lower, l.lpos, l.tile);
    }
    lower.e.at(loaded);
}
