//! The trees of a tile in registers: each run's, each chunk's through the lanes' butterflies,
//! the chunks' and the warps'; and the down-sweeps that give every leaf its prefix.

use super::{Params, CHUNK};
use crate::ptx::driver::reduce::common::{
    combine, combine_after, copy_into, fresh_value, Held, Reduction,
};
use crate::ptx::driver::reduce::lanes::{butterfly, u64_op, RUN};
use crate::ptx::emit::{Class, Reg};
use crate::ptx::lower::Lower;
use crate::CompileError;

/// The levels of a tree of values (each a list of registers), leaves first.
pub(super) type TreeLevels = Vec<Vec<Vec<Reg>>>;

/// Each chunk's tree in this lane, and the tree over the chunks' totals.
pub(super) fn chunk_trees(
    lower: &mut Lower<'_>,
    r: &Reduction,
    lane: Reg,
    runs: Vec<Vec<Vec<Reg>>>,
) -> Result<(Vec<ChunkTree>, TreeLevels), CompileError> {
    let mut held_chunks = Vec::with_capacity(runs.len());
    for x in runs {
        held_chunks.push(chunk_tree(lower, r, lane, x)?);
    }
    let chunk_totals: Vec<Vec<Reg>> = held_chunks.iter().map(|c| c.total.clone()).collect();
    let chunk_levels = tree_levels(lower, r, chunk_totals)?;
    Ok((held_chunks, chunk_levels))
}

/// The tile-relative first leaf of this lane's run in chunk `c` of its warp's part.
pub(super) fn run_start(lower: &mut Lower<'_>, warp_first: Reg, lane: Reg, c: u64) -> Reg {
    let within = u64_op(lower, |reg| {
        format!("mad.lo.u64 {reg}, {lane}, {RUN}, {}", c * CHUNK)
    });
    u64_op(lower, |reg| {
        format!("add.u64 {reg}, {warp_first}, {within}")
    })
}

/// The root of a tree's levels.
pub(super) fn root(levels: &[Vec<Vec<Reg>>]) -> Vec<Reg> {
    levels
        .last()
        .and_then(|top| top.first())
        .cloned()
        .unwrap_or_default()
}

/// `choices[index]` (`index` a register below `choices.len()`), by selects.
pub(super) fn pick(lower: &mut Lower<'_>, index: Reg, choices: &[Held]) -> Held {
    let chosen = Held {
        value: choices[0]
            .value
            .iter()
            .map(|v| lower.e.reg(v.class))
            .collect(),
        has: lower.e.reg(Class::Pred),
    };
    copy_into(lower, &chosen.value, &choices[0].value);
    lower.e.mov(chosen.has, choices[0].has);
    for (i, choice) in choices.iter().enumerate().skip(1) {
        let this = lower.e.compute(Class::Pred, |reg| {
            format!("setp.eq.u64 {reg}, {index}, {i}")
        });
        let skip = lower.e.label();
        lower.e.bra_unless(this, skip);
        copy_into(lower, &chosen.value, &choice.value);
        lower.e.mov(chosen.has, choice.has);
        lower.e.at(skip);
    }
    chosen
}

/// A chunk in a lane: its run's tree levels (leaves, pairs, quads, the run), the left
/// neighbours' blocks kept at each butterfly level, and the chunk's total.
pub(super) struct ChunkTree {
    pub(super) run_levels: Vec<Vec<Vec<Reg>>>,
    /// Per butterfly level `k`: the block of the lanes `2^k` to the left, when this lane is
    /// on the right of its pair of blocks.
    pub(super) left: Vec<Vec<Reg>>,
    pub(super) total: Vec<Reg>,
}

pub(super) fn chunk_tree(
    lower: &mut Lower<'_>,
    r: &Reduction,
    lane: Reg,
    run: Vec<Vec<Reg>>,
) -> Result<ChunkTree, CompileError> {
    let run_levels = tree_levels(lower, r, run)?;
    let mut value = run_levels
        .last()
        .and_then(|top| top.first())
        .cloned()
        .unwrap_or_default();
    let mut left = Vec::with_capacity(5);
    for k in 0..5u32 {
        let (lower_half, upper_half) = butterfly(lower, lane, 1u64 << k, &value);
        left.push(lower_half.clone());
        let out = fresh_value(lower, r);
        combine(lower, r, &out, &lower_half, &upper_half)?;
        value = out;
    }
    Ok(ChunkTree {
        run_levels,
        left,
        total: value,
    })
}

/// Every level of the aligned tree over `items` (a power of two of them): the items, their
/// pairs, ..., the root.
pub(super) fn tree_levels(
    lower: &mut Lower<'_>,
    r: &Reduction,
    items: Vec<Vec<Reg>>,
) -> Result<Vec<Vec<Vec<Reg>>>, CompileError> {
    let mut levels = vec![items];
    while levels.last().is_some_and(|l| l.len() > 1) {
        let below = levels.last().cloned().unwrap_or_default();
        let mut up = Vec::with_capacity(below.len() / 2);
        for pair in below.chunks(2) {
            let out = fresh_value(lower, r);
            combine(lower, r, &out, &pair[0], &pair[1])?;
            up.push(out);
        }
        levels.push(up);
    }
    Ok(levels)
}

/// The prefix of each item of a tree given its levels: the left half starts from `before`,
/// the right half from `before ∘ left half`.
pub(super) fn down_sweep(
    lower: &mut Lower<'_>,
    r: &Reduction,
    before: &Held,
    levels: &[Vec<Vec<Reg>>],
) -> Result<Vec<Held>, CompileError> {
    let mut prefixes = vec![before.clone()];
    for level in levels.iter().rev().skip(1) {
        let mut next = Vec::with_capacity(prefixes.len() * 2);
        for (i, prefix) in prefixes.iter().enumerate() {
            let right = fold(lower, r, prefix, &level[2 * i])?;
            next.push(prefix.clone());
            next.push(right);
        }
        prefixes = next;
    }
    Ok(prefixes)
}

/// `held ∘ value` (or `value` when `held` is nothing), always there.
pub(super) fn fold(
    lower: &mut Lower<'_>,
    r: &Reduction,
    held: &Held,
    value: &[Reg],
) -> Result<Held, CompileError> {
    let out = fresh_value(lower, r);
    combine_after(lower, r, &out, held, value)?;
    Ok(Held {
        value: out,
        has: lower.pred_const(true),
    })
}

/// The prefix of this lane's run: the chunk's prefix folded with the left blocks of the
/// butterfly levels where the lane is on the right, largest first.
pub(super) fn lane_down(
    lower: &mut Lower<'_>,
    r: &Reduction,
    lane: Reg,
    before: &Held,
    left: &[Vec<Reg>],
) -> Result<Held, CompileError> {
    let acc = Held {
        value: fresh_value(lower, r),
        has: lower.e.reg(Class::Pred),
    };
    copy_into(lower, &acc.value, &before.value);
    lower.e.mov(acc.has, before.has);
    for (k, block) in left.iter().enumerate().rev() {
        let bit = u64_op(lower, |reg| format!("and.b64 {reg}, {lane}, {}", 1u64 << k));
        let right = lower
            .e
            .compute(Class::Pred, |reg| format!("setp.ne.u64 {reg}, {bit}, 0"));
        let skip = lower.e.label();
        lower.e.bra_unless(right, skip);
        let folded = fold(lower, r, &acc, block)?;
        copy_into(lower, &acc.value, &folded.value);
        lower.e.mov(acc.has, folded.has);
        lower.e.at(skip);
    }
    Ok(acc)
}

/// Each leaf's output: its exclusive prefix, or the prefix combined with the leaf.
pub(super) fn run_outputs(
    lower: &mut Lower<'_>,
    r: &Reduction,
    p: &Params,
    run: &[Vec<Reg>],
    prefixes: Vec<Held>,
) -> Result<Vec<Vec<Reg>>, CompileError> {
    let mut outs = Vec::with_capacity(run.len());
    for (x, before) in run.iter().zip(prefixes) {
        let out = fresh_value(lower, r);
        let (inclusive, done) = (lower.e.label(), lower.e.label());
        lower.e.bra_unless(p.exclusive, inclusive);
        copy_into(lower, &out, &before.value);
        lower.e.bra(done);
        lower.e.at(inclusive);
        let folded = fold(lower, r, &before, x)?;
        copy_into(lower, &out, &folded.value);
        lower.e.at(done);
        outs.push(out);
    }
    Ok(outs)
}
