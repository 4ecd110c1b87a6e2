//! A scan block's shared memory: the warps' totals, the tile's prefix, the ticket, the
//! planned prefetch, then the tile's leaves while the block waits for its prefix.

use super::{tile_leaves, STAGE, WARPS};
use crate::ptx::driver::reduce::common::{copy_into, fresh_value, Held, Reduction};
use crate::ptx::driver::reduce::lanes::{packable, u64_op, vector_run, Vector, RUN};
use crate::ptx::emit::{Class, Reg};
use crate::ptx::lower::Lower;

/// The block's shared memory: the warps' totals, the tile's prefix (and whether there is one),
/// the ticket, then the tile's leaves in order while the block waits for its prefix (in the
/// dynamic [`STAGE`] array for the prefetching entry).
pub(super) struct Shared {
    pub(super) base: Reg,
    pub(super) size: u32,
    /// Where the tile's leaves wait, if they are staged ([`STAGED_BYTES`]).
    pub(super) leaves: Option<Reg>,
}

/// The most bytes of leaves a tile stages in shared memory while it waits for its prefix
/// (tiles of larger values keep their leaves and trees in registers).
pub(super) const STAGED_BYTES: u64 = 32 << 10;

impl Shared {
    /// The head; the tile's leaves after it where they are staged, or in the dynamic
    /// array [`STAGE`] for the prefetching entry (`dynamic`).
    pub(super) fn declare(lower: &mut Lower<'_>, size: u32, dynamic: bool) -> Shared {
        let head = (Self::ahead_offset_for(size) + 16).next_multiple_of(16) as u32;
        let tile_bytes = tile_leaves(size) * u64::from(size);
        let staged = tile_bytes <= STAGED_BYTES && !dynamic;
        let bytes = head + if staged { tile_bytes as u32 } else { 0 };
        let name = lower.e.memory(true, bytes, 16);
        let base = lower
            .e
            .compute(Class::B64, |reg| format!("mov.u64 {reg}, {name}"));
        let leaves = if dynamic {
            Some(
                lower
                    .e
                    .compute(Class::B64, |reg| format!("mov.u64 {reg}, {STAGE}")),
            )
        } else {
            staged.then(|| u64_op(lower, |reg| format!("add.u64 {reg}, {base}, {head}")))
        };
        Shared { base, size, leaves }
    }

    /// The address of the tile's leaf `t` (tile-relative) in shared memory.
    pub(super) fn leaf_address(&self, lower: &mut Lower<'_>, t: Reg) -> Reg {
        let (leaves, size) = (self.leaves.unwrap_or(self.base), self.size);
        u64_op(lower, |reg| {
            format!("mad.lo.u64 {reg}, {t}, {size}, {leaves}")
        })
    }

    /// Writes a run of leaves from leaf `first` on: packed 16-byte stores for a 4- or 8-byte
    /// scalar, else one leaf at a time.
    pub(super) fn put_run(
        &self,
        lower: &mut Lower<'_>,
        r: &Reduction,
        first: Reg,
        run: &[Vec<Reg>],
    ) {
        let addr = self.leaf_address(lower, first);
        if packable(lower, &r.ty).is_some() {
            vector_run(lower, Vector::Store, "shared", addr, run, self.size);
            return;
        }
        for (k, v) in run.iter().enumerate() {
            let at = self.nth_after(lower, addr, k);
            lower.store_value(&r.ty.clone(), v, at, "shared", true);
        }
    }

    /// The run of leaves from leaf `first` on.
    pub(super) fn run(&self, lower: &mut Lower<'_>, r: &Reduction, first: Reg) -> Vec<Vec<Reg>> {
        let addr = self.leaf_address(lower, first);
        let run: Vec<Vec<Reg>> = (0..RUN).map(|_| fresh_value(lower, r)).collect();
        if packable(lower, &r.ty).is_some() {
            vector_run(lower, Vector::Load, "shared", addr, &run, self.size);
            return run;
        }
        for (k, into) in run.iter().enumerate() {
            let at = self.nth_after(lower, addr, k);
            let v = lower.load_value(&r.ty.clone(), at, "shared", true);
            copy_into(lower, into, &v);
        }
        run
    }

    /// The address of the `k`-th leaf after the one at `addr`.
    pub(super) fn nth_after(&self, lower: &mut Lower<'_>, addr: Reg, k: usize) -> Reg {
        let offset = k as u64 * u64::from(self.size);
        u64_op(lower, |reg| format!("add.u64 {reg}, {addr}, {offset}"))
    }

    pub(super) fn at(&self, lower: &mut Lower<'_>, offset: u64) -> Reg {
        let base = self.base;
        u64_op(lower, |reg| format!("add.u64 {reg}, {base}, {offset}"))
    }

    pub(super) fn flag_offset(&self) -> u64 {
        u64::from((WARPS as u32 + 1) * self.size)
    }

    /// Where the prefetch of a later tile's input is planned ([`plan_prefetch`](super::plan_prefetch)): its first
    /// byte's address, then its length in bytes (0: none).
    pub(super) fn ahead_offset_for(size: u32) -> u64 {
        (u64::from((WARPS as u32 + 1) * size) + 8).next_multiple_of(8)
    }

    pub(super) fn put_ahead(&self, lower: &mut Lower<'_>, base: Reg, bytes: Reg) {
        let at = self.at(lower, Self::ahead_offset_for(self.size));
        lower.e.op(format!("st.shared.u64 [{at}], {base}"));
        lower.e.op(format!("st.shared.u64 [{at}+8], {bytes}"));
    }

    pub(super) fn ahead(&self, lower: &mut Lower<'_>) -> (Reg, Reg) {
        let at = self.at(lower, Self::ahead_offset_for(self.size));
        let base = u64_op(lower, |reg| format!("ld.shared.u64 {reg}, [{at}]"));
        let bytes = u64_op(lower, |reg| format!("ld.shared.u64 {reg}, [{at}+8]"));
        (base, bytes)
    }

    pub(super) fn put_ticket(&self, lower: &mut Lower<'_>, ticket: Reg) {
        let addr = self.at(lower, self.flag_offset() + 4);
        lower.e.op(format!("st.shared.u32 [{addr}], {ticket}"));
    }

    pub(super) fn ticket(&self, lower: &mut Lower<'_>) -> Reg {
        let addr = self.at(lower, self.flag_offset() + 4);
        lower
            .e
            .compute(Class::B32, |reg| format!("ld.shared.u32 {reg}, [{addr}]"))
    }

    pub(super) fn put_warp_total(
        &self,
        lower: &mut Lower<'_>,
        r: &Reduction,
        lane: Reg,
        warp: Reg,
        v: &[Reg],
    ) {
        let skip = lower.e.label();
        let other = lower
            .e
            .compute(Class::Pred, |reg| format!("setp.ne.u64 {reg}, {lane}, 0"));
        lower.e.bra_if(other, skip);
        let (base, size) = (self.base, self.size);
        let addr = u64_op(lower, |reg| {
            format!("mad.lo.u64 {reg}, {warp}, {size}, {base}")
        });
        lower.store_value(&r.ty.clone(), v, addr, "shared", true);
        lower.e.at(skip);
    }

    pub(super) fn warp_total(&self, lower: &mut Lower<'_>, r: &Reduction, w: u64) -> Vec<Reg> {
        let addr = self.at(lower, w * u64::from(self.size));
        lower.load_value(&r.ty.clone(), addr, "shared", true)
    }

    pub(super) fn put_prefix(
        &self,
        lower: &mut Lower<'_>,
        r: &Reduction,
        lane: Reg,
        prefix: &Held,
    ) {
        let skip = lower.e.label();
        let other = lower
            .e
            .compute(Class::Pred, |reg| format!("setp.ne.u64 {reg}, {lane}, 0"));
        lower.e.bra_if(other, skip);
        let addr = self.at(lower, WARPS * u64::from(self.size));
        lower.store_value(&r.ty.clone(), &prefix.value, addr, "shared", true);
        let has = lower.e.compute(Class::B32, |reg| {
            format!("selp.u32 {reg}, 1, 0, {}", prefix.has)
        });
        let flag = self.at(lower, self.flag_offset());
        lower.e.op(format!("st.shared.u32 [{flag}], {has}"));
        lower.e.at(skip);
    }

    pub(super) fn prefix(&self, lower: &mut Lower<'_>, r: &Reduction) -> Held {
        let addr = self.at(lower, WARPS * u64::from(self.size));
        let value = lower.load_value(&r.ty.clone(), addr, "shared", true);
        let flag = self.at(lower, self.flag_offset());
        let word = lower
            .e
            .compute(Class::B32, |reg| format!("ld.shared.u32 {reg}, [{flag}]"));
        let has = lower
            .e
            .compute(Class::Pred, |reg| format!("setp.ne.u32 {reg}, {word}, 0"));
        Held { value, has }
    }
}
