//! The scan entry: one thread scans one aligned piece of one row's leaves from the piece's
//! exclusive prefix, in the canonical order of `brook_ir::scan_order` (its `scan_serial`,
//! written out in PTX): slot `k` holds the waiting aligned block of `2^k` leaves and
//! `above[k]` the fold of the prefix and every older waiting block; pushing leaf `n` carries
//! through the set low bits of `n`, and the next prefix is the landing level's `above`
//! combined with the carried block.
//!
//! Besides the reduction entries' parameters (`src`, `dst`, `leaves`, `piece`, `pieces`,
//! `mode`) it takes `pre`, the pieces' exclusive prefixes (`[row][piece]`, read for pieces
//! after the first), and `init`, an exclusive scan's initial value (the first piece's
//! prefix). `mode`: bit 0, leaves come from `src` (`[row][leaf]`), else the input stream;
//! bit 1, prefixes go to the output stream (the reduction target, bound with the input's
//! shape), else to `dst` (`[row][leaf]`); bit 2, the scan is exclusive.

use super::common::{
    advance, combine, combine_after, copy_into, fresh_value, global_thread, mode_bit, slot_count,
    target_ref, unravel_fresh, Held, Pass, Reduction, Share, Source,
};
use crate::abi::BlockLayout;
use crate::ptx::emit::{Class, Reg};
use crate::ptx::lower::Lower;
use crate::CompileError;

/// Levels of a thread's stack: pieces of at most `2^LEVELS` leaves (the runtime gives a
/// thread far fewer; the stack is written out level by level).
const LEVELS: u32 = 16;
/// The most leaves the entry scans in one piece.
pub(super) const MAX_PIECE: u64 = 1 << LEVELS;

/// The scan entry's body after the pass parameters; `pre` and `init` are its own.
pub(super) fn emit(
    lower: &mut Lower<'_>,
    r: &Reduction,
    layout: &BlockLayout,
    pass: &Pass,
    source: &Source,
    (pre, init): (Reg, Reg),
) -> Result<(), CompileError> {
    let rank = pass.domain.len();
    let g = global_thread(lower);
    let Share {
        unit: t,
        piece_index: j,
        lo,
        count,
    } = pass.share(lower, g);
    let tpos = unravel_fresh(lower, t, &pass.domain);
    let from_scratch = mode_bit(lower, pass.mode, 1);
    let to_output = mode_bit(lower, pass.mode, 2);
    let exclusive = mode_bit(lower, pass.mode, 4);
    let e = prefix_of_piece(lower, r, (pre, init), exclusive, (t, j), pass.pieces)?;
    let levels: Vec<Level> = (0..slot_count(LEVELS - 1))
        .map(|_| Level {
            block: fresh_value(lower, r),
            above: Held::fresh(lower, r),
        })
        .collect();
    let lpos = unravel_fresh(lower, lo, &pass.tile);
    let n = lower.e.mov_imm(Class::B64, 0);
    let (head, done) = (lower.e.label(), lower.e.label());
    lower.e.at(head);
    let finished = lower.e.compute(Class::Pred, |reg| {
        format!("setp.ge.u64 {reg}, {n}, {count}")
    });
    lower.e.bra_if(finished, done);
    let leaf = lower
        .e
        .compute(Class::B64, |reg| format!("add.u64 {reg}, {lo}, {n}"));
    let row_slot = lower.e.compute(Class::B64, |reg| {
        format!("mad.lo.u64 {reg}, {t}, {}, {leaf}", pass.leaves_per_target)
    });
    let pos: Vec<Reg> = (0..rank)
        .map(|k| {
            let (tp, tl, lp) = (tpos[k], pass.tile[k], lpos[k]);
            lower.e.compute(Class::B64, |reg| {
                format!("mad.lo.u64 {reg}, {tp}, {tl}, {lp}")
            })
        })
        .collect();
    let x = fresh_value(lower, r);
    load_leaf(
        lower,
        r,
        source,
        (from_scratch, pass.src, row_slot),
        &pos,
        &x,
    );
    // This leaf's prefix.
    let out = fresh_value(lower, r);
    let (inclusive_path, written) = (lower.e.label(), lower.e.label());
    lower.e.bra_unless(exclusive, inclusive_path);
    copy_into(lower, &out, &e.value);
    lower.e.bra(written);
    lower.e.at(inclusive_path);
    combine_after(lower, r, &out, &e, &x)?;
    lower.e.at(written);
    store_prefix(
        lower,
        r,
        layout,
        (to_output, pass.dst, row_slot),
        &pos,
        &out,
    );
    push(lower, r, &levels, n, &x, &e)?;
    advance(lower, &lpos, &pass.tile);
    lower.e.op(format!("add.u64 {n}, {n}, 1"));
    lower.e.bra(head);
    lower.e.at(done);
    lower.e.bra(pass.ret);
    Ok(())
}

/// The exclusive prefix of piece `j` of row `t`: `pre[t][j]` after the first piece; the
/// initial value for an exclusive scan's first piece; nothing for an inclusive one's.
fn prefix_of_piece(
    lower: &mut Lower<'_>,
    r: &Reduction,
    (pre, init): (Reg, Reg),
    exclusive: Reg,
    (t, j): (Reg, Reg),
    pieces: Reg,
) -> Result<Held, CompileError> {
    let e = Held::fresh(lower, r);
    let (first, done) = (lower.e.label(), lower.e.label());
    let is_first = lower
        .e
        .compute(Class::Pred, |reg| format!("setp.eq.u64 {reg}, {j}, 0"));
    lower.e.bra_if(is_first, first);
    {
        let slot = lower.e.compute(Class::B64, |reg| {
            format!("mad.lo.u64 {reg}, {t}, {pieces}, {j}")
        });
        let addr = lower.element_address(pre, slot, r.value_size);
        let v = lower.load_value(&r.ty.clone(), addr, "global", true);
        copy_into(lower, &e.value, &v);
        let yes = lower.pred_const(true);
        lower.e.mov(e.has, yes);
        lower.e.bra(done);
    }
    lower.e.at(first);
    {
        // Inner levels scan totals exclusively without an initial value when the scan has
        // none: their first prefix is never read.
        let given = lower
            .e
            .compute(Class::Pred, |reg| format!("setp.ne.u64 {reg}, {init}, 0"));
        lower
            .e
            .op(format!("and.pred {}, {exclusive}, {given}", e.has));
        lower.e.bra_unless(e.has, done);
        let v = lower.load_value(&r.ty.clone(), init, "global", true);
        copy_into(lower, &e.value, &v);
    }
    lower.e.at(done);
    Ok(e)
}

/// Loads the leaf at `row_slot` of `src`, or the input at `pos`.
fn load_leaf(
    lower: &mut Lower<'_>,
    r: &Reduction,
    source: &Source,
    (from_scratch, src, row_slot): (Reg, Reg, Reg),
    pos: &[Reg],
    into: &[Reg],
) {
    let (from_input, loaded) = (lower.e.label(), lower.e.label());
    lower.e.bra_unless(from_scratch, from_input);
    let addr = lower.element_address(src, row_slot, r.value_size);
    let v = lower.load_value(&r.ty.clone(), addr, "global", true);
    copy_into(lower, into, &v);
    lower.e.bra(loaded);
    lower.e.at(from_input);
    let v = match source {
        Source::Stream(s) => {
            let index = lower.element_index(s.offset, pos, &s.pitch);
            let addr = lower.element_address(s.base, index, s.size);
            lower.load_value(&r.ty.clone(), addr, "global", true)
        }
        Source::Iterator { start, end, shape } => {
            crate::lower::launch::iterator_value(lower, start, end, shape, pos)
        }
    };
    copy_into(lower, into, &v);
    lower.e.at(loaded);
}

/// Stores a prefix into the output stream at `pos`, or at `row_slot` of `dst`.
fn store_prefix(
    lower: &mut Lower<'_>,
    r: &Reduction,
    layout: &BlockLayout,
    (to_output, dst, row_slot): (Reg, Reg, Reg),
    pos: &[Reg],
    value: &[Reg],
) {
    let (to_scratch, stored) = (lower.e.label(), lower.e.label());
    lower.e.bra_unless(to_output, to_scratch);
    let output = target_ref(lower, r, layout, pos.len());
    let index = lower.element_index(output.offset, pos, &output.pitch);
    let addr = lower.element_address(output.base, index, output.size);
    lower.store_value(&r.ty.clone(), value, addr, "global", true);
    lower.e.bra(stored);
    lower.e.at(to_scratch);
    let addr = lower.element_address(dst, row_slot, r.value_size);
    lower.store_value(&r.ty.clone(), value, addr, "global", true);
    lower.e.at(stored);
}

/// One level of the stack: its waiting block and the fold of everything before it.
struct Level {
    block: Vec<Reg>,
    above: Held,
}

/// Pushes leaf `n` (value `x`) and makes `e` the next leaf's exclusive prefix: the carry runs
/// through the set low bits of `n` (each waiting block on the left, its `above` becoming the
/// carry's), lands at the first clear bit, and `e = above ∘ block`. A level is full exactly
/// when its bit of the count is set.
fn push(
    lower: &mut Lower<'_>,
    r: &Reduction,
    levels: &[Level],
    n: Reg,
    x: &[Reg],
    e: &Held,
) -> Result<(), CompileError> {
    let carry = fresh_value(lower, r);
    copy_into(lower, &carry, x);
    let over = Held::fresh(lower, r);
    copy_into(lower, &over.value, &e.value);
    lower.e.mov(over.has, e.has);
    let landed = lower.e.label();
    for (k, level) in levels.iter().enumerate() {
        let bit = lower.e.compute(Class::B64, |reg| {
            format!("and.b64 {reg}, {n}, {}", 1u64 << k)
        });
        let set = lower
            .e
            .compute(Class::Pred, |reg| format!("setp.ne.u64 {reg}, {bit}, 0"));
        let (land, next) = (lower.e.label(), lower.e.label());
        lower.e.bra_unless(set, land);
        let merged = fresh_value(lower, r);
        combine(lower, r, &merged, &level.block, &carry)?;
        copy_into(lower, &carry, &merged);
        copy_into(lower, &over.value, &level.above.value);
        lower.e.mov(over.has, level.above.has);
        lower.e.bra(next);
        lower.e.at(land);
        copy_into(lower, &level.block, &carry);
        copy_into(lower, &level.above.value, &over.value);
        lower.e.mov(level.above.has, over.has);
        lower.e.bra(landed);
        lower.e.at(next);
    }
    lower.e.at(landed);
    combine_after(lower, r, &e.value, &over, &carry)?;
    let yes = lower.pred_const(true);
    lower.e.mov(e.has, yes);
    Ok(())
}
