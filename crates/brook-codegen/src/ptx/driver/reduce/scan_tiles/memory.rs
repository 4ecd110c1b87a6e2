//! A tile's memory traffic: its leaves loaded (by runs into registers, or staged in shared
//! memory by `cp.async`) and its outputs stored.

use super::shared::Shared;
use super::{aligned_16, THREADS};
use crate::ptx::driver::reduce::common::{copy_into, fresh_value, Reduction};
use crate::ptx::driver::reduce::lanes::{
    load_run, packable, u64_op, vector_run, Leaves, Vector, RUN,
};
use crate::ptx::emit::{Class, Reg};
use crate::ptx::lower::Lower;

/// The prefetching entry's tile, staged in shared memory and then read back as this lane's
/// runs: where the tile is whole and its first leaf 16-byte aligned, 16-byte `cp.async`s,
/// each thread's `THREADS * 16` bytes apart; else (a row's ragged last tile, a view off the
/// alignment) loads of the valid leaves and shared stores, a chunk at a time. (`.ca`,
/// through L1: measured on an H100, 2^28 floats 0.807-0.821 ms against
/// 0.831-0.878 for `.cg`, whose zero-filling form in full tiles too cost 0.853-0.872.)
pub(super) fn stage_tile(
    lower: &mut Lower<'_>,
    r: &Reduction,
    shared: &Shared,
    tid: Reg,
    (source, firsts): (&Leaves, &[Reg]),
    (full, valid): (Reg, Reg),
    tile_len: u64,
) -> Vec<Vec<Vec<Reg>>> {
    let buffer = shared
        .leaves
        .expect("the prefetching entry stages its tile");
    let (by_hand, staged) = (lower.e.label(), lower.e.label());
    lower.e.bra_unless(source.aligned, by_hand);
    let pieces = tile_len * u64::from(r.value_size) / (16 * u64::from(THREADS));
    let first = u64_op(lower, |reg| format!("shl.b64 {reg}, {tid}, 4"));
    let offsets: Vec<Reg> = (0..pieces)
        .map(|k| {
            u64_op(lower, |reg| {
                format!("add.u64 {reg}, {first}, {}", k * 16 * u64::from(THREADS))
            })
        })
        .collect();
    let base = source.base;
    // A row's ragged last tile is loaded leaf by leaf (below): a 16-byte `cp.async` whose
    // source size covers only the valid bytes still reads the whole 16 bytes for the
    // sanitizer (compute-sanitizer's memcheck flags the bytes past the stream's end).
    lower.e.bra_unless(full, by_hand);
    for &offset in &offsets {
        let from = u64_op(lower, |reg| format!("add.u64 {reg}, {base}, {offset}"));
        let to = u64_op(lower, |reg| format!("add.u64 {reg}, {buffer}, {offset}"));
        lower
            .e
            .op(format!("cp.async.ca.shared.global [{to}], [{from}], 16"));
    }
    lower.e.op("cp.async.wait_all");
    lower.e.bra(staged);
    lower.e.at(by_hand);
    for &first in firsts {
        let run = load_runs(lower, r, source, (full, valid), &[first]);
        shared.put_run(lower, r, first, &run[0]);
    }
    lower.e.at(staged);
    lower.e.op("bar.sync 0");
    firsts
        .iter()
        .map(|&first| shared.run(lower, r, first))
        .collect()
}

/// The runs of leaves from each of `firsts` (tile-relative): packed loads in a full tile, else
/// one by one with the index clamped to the last valid leaf (a missing leaf repeats a real
/// one; its blocks are never anyone's prefix).
pub(super) fn load_runs(
    lower: &mut Lower<'_>,
    r: &Reduction,
    source: &Leaves,
    (full, valid): (Reg, Reg),
    firsts: &[Reg],
) -> Vec<Vec<Vec<Reg>>> {
    let runs: Vec<Vec<Vec<Reg>>> = firsts
        .iter()
        .map(|_| (0..RUN).map(|_| fresh_value(lower, r)).collect())
        .collect();
    let (ragged, done) = (lower.e.label(), lower.e.label());
    lower.e.bra_unless(full, ragged);
    for (run, &first) in runs.iter().zip(firsts) {
        let loaded = load_run(lower, r, source, first);
        for (d, s) in run.iter().zip(&loaded) {
            copy_into(lower, d, s);
        }
    }
    lower.e.bra(done);
    lower.e.at(ragged);
    let last = u64_op(lower, |reg| format!("sub.u64 {reg}, {valid}, 1"));
    let input_ty = lower.kernel.params[r.input].ty.clone();
    for (run, &first) in runs.iter().zip(firsts) {
        for (k, d) in run.iter().enumerate() {
            let i = u64_op(lower, |reg| format!("add.u64 {reg}, {first}, {k}"));
            let i = u64_op(lower, |reg| format!("min.u64 {reg}, {i}, {last}"));
            let addr = lower.element_address(source.base, i, source.input_size);
            let v = lower.load_value(&input_ty, addr, "global", true);
            copy_into(lower, d, &v);
        }
    }
    lower.e.at(done);
    runs
}

/// Stores a run's outputs: packed in a full, aligned tile of 4- or 8-byte scalars; else each
/// leaf that lies before `valid`.
pub(super) fn store_run(
    lower: &mut Lower<'_>,
    r: &Reduction,
    (base, size): (Reg, u32),
    (full, valid): (Reg, Reg),
    first: Reg,
    outs: &[Vec<Reg>],
) {
    let done = lower.e.label();
    let one_by_one = lower.e.label();
    if packable(lower, &r.ty).is_some() && size == r.value_size {
        let aligned = aligned_16(lower, base);
        let both = lower.e.compute(Class::Pred, |reg| {
            format!("and.pred {reg}, {full}, {aligned}")
        });
        lower.e.bra_unless(both, one_by_one);
        let addr = lower.element_address(base, first, size);
        vector_run(lower, Vector::Store, "global", addr, outs, size);
        lower.e.bra(done);
    }
    lower.e.at(one_by_one);
    for (k, out) in outs.iter().enumerate() {
        let i = u64_op(lower, |reg| format!("add.u64 {reg}, {first}, {k}"));
        let inside = lower.e.compute(Class::Pred, |reg| {
            format!("setp.lt.u64 {reg}, {i}, {valid}")
        });
        let skip = lower.e.label();
        lower.e.bra_unless(inside, skip);
        let addr = lower.element_address(base, i, size);
        lower.store_value(&r.ty.clone(), out, addr, "global", true);
        lower.e.at(skip);
    }
    lower.e.at(done);
}
