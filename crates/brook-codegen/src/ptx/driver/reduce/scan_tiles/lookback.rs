//! The group table and the look-back: warp 0 publishes the tile's total and the groups it
//! ends, and folds the tile's exclusive prefix from the groups before it.

use super::trees::fold;
use super::{Params, RADIX, RADIX_BITS, TABLE_LEVELS, TABLE_WORD_BYTES};
use crate::ptx::driver::reduce::common::{combine, copy_into, fresh_value, Held, Reduction};
use crate::ptx::driver::reduce::lanes::{butterfly, shuffle_with, u64_op};
use crate::ptx::emit::{Class, Reg};
use crate::ptx::lower::Lower;
use crate::CompileError;

/// The group table of a launch.
pub(super) struct Table {
    pub(super) values: Reg,
    pub(super) flags: Reg,
    /// Tiles of all rows (one level's entries).
    pub(super) total: Reg,
    /// The first entry of this tile's row.
    pub(super) row_base: Reg,
    pub(super) size: u32,
    /// Values are one 4-byte scalar, kept beside their flags.
    pub(super) packed: bool,
}

/// Whether the scan's values are one 4-byte scalar (they then share a 64-bit word with their
/// flag in the group table).
pub(super) fn packed_scalar(lower: &Lower<'_>, r: &Reduction) -> bool {
    matches!(crate::leaves::leaves(lower.module, &r.ty).as_slice(), [leaf] if leaf.kind.size() == 4)
}

impl Table {
    /// The entry of group `g` of the row at level `k`.
    pub(super) fn entry(&self, lower: &mut Lower<'_>, k: Reg, g: Reg) -> Reg {
        let (total, row_base) = (self.total, self.row_base);
        let at = u64_op(lower, |reg| format!("add.u64 {reg}, {row_base}, {g}"));
        u64_op(lower, |reg| format!("mad.lo.u64 {reg}, {k}, {total}, {at}"))
    }

    /// The entry's word in `flags` (its flag in the high half).
    pub(super) fn word_address(&self, lower: &mut Lower<'_>, entry: Reg) -> Reg {
        lower.element_address(self.flags, entry, TABLE_WORD_BYTES as u32)
    }

    pub(super) fn value_address(&self, lower: &mut Lower<'_>, entry: Reg) -> Reg {
        lower.element_address(self.values, entry, self.size)
    }

    /// Writes a group's value and releases its flag: one 64-bit store of both where packed,
    /// else the value, then the flag.
    pub(super) fn write(&self, lower: &mut Lower<'_>, r: &Reduction, entry: Reg, value: &[Reg]) {
        let word = self.word_address(lower, entry);
        if self.packed {
            let bits = lower
                .e
                .compute(Class::B32, |reg| format!("mov.b32 {reg}, {}", value[0]));
            let one = lower.e.mov_imm(Class::B32, 1);
            let both = lower.e.compute(Class::B64, |reg| {
                format!("mov.b64 {reg}, {{{bits}, {one}}}")
            });
            lower
                .e
                .op(format!("st.release.gpu.global.b64 [{word}], {both}"));
            return;
        }
        let addr = self.value_address(lower, entry);
        lower.store_value(&r.ty.clone(), value, addr, "global", true);
        lower
            .e
            .op(format!("st.release.gpu.global.u32 [{word}+4], 1"));
    }

    /// Waits for a group's flag (acquiring it) and reads its value: from the same 64-bit load
    /// where packed, else from L2, where other SMs' writes are.
    pub(super) fn read(&self, lower: &mut Lower<'_>, r: &Reduction, entry: Reg) -> Vec<Reg> {
        let word = self.word_address(lower, entry);
        let spin = lower.e.label();
        lower.e.at(spin);
        let (low, flag) = (lower.e.reg(Class::B32), lower.e.reg(Class::B32));
        if self.packed {
            let both = lower.e.compute(Class::B64, |reg| {
                format!("ld.acquire.gpu.global.b64 {reg}, [{word}]")
            });
            lower.e.op(format!("mov.b64 {{{low}, {flag}}}, {both}"));
        } else {
            lower
                .e
                .op(format!("ld.acquire.gpu.global.u32 {flag}, [{word}+4]"));
        }
        let unset = lower
            .e
            .compute(Class::Pred, |reg| format!("setp.eq.u32 {reg}, {flag}, 0"));
        lower.e.bra_if(unset, spin);
        if self.packed {
            let value = fresh_value(lower, r);
            lower.e.op(format!("mov.b32 {}, {low}", value[0]));
            return value;
        }
        let addr = self.value_address(lower, entry);
        lower.load_value(&r.ty.clone(), addr, "global.cg", true)
    }
}

/// Lane 0 publishes the tile's total (level 0); then, while `j + 1` is a multiple of
/// `32^(m+1)`, the warp reads the 32 level-`m` groups that end with this tile (lane `l`
/// acquires the `l`-th), reduces them by the canonical tree (butterflies) and lane 0
/// publishes the level-`m + 1` group.
pub(super) fn publish(
    lower: &mut Lower<'_>,
    r: &Reduction,
    table: &Table,
    lane: Reg,
    j: Reg,
    total: &[Reg],
) -> Result<(), CompileError> {
    let first_lane = lower
        .e
        .compute(Class::Pred, |reg| format!("setp.eq.u64 {reg}, {lane}, 0"));
    let level = lower.e.mov_imm(Class::B64, 0);
    let wrote = lower.e.label();
    lower.e.bra_unless(first_lane, wrote);
    let entry = table.entry(lower, level, j);
    table.write(lower, r, entry, total);
    lower.e.at(wrote);
    lower.e.op("bar.warp.sync 0xffffffff");
    let (head, done) = (lower.e.label(), lower.e.label());
    lower.e.at(head);
    let next = u64_op(lower, |reg| format!("add.u64 {reg}, {level}, 1"));
    let too_high = lower.e.compute(Class::Pred, |reg| {
        format!("setp.ge.u64 {reg}, {next}, {TABLE_LEVELS}")
    });
    lower.e.bra_if(too_high, done);
    // `j + 1` a multiple of 32^(level + 1): this tile ends a group of the next level.
    let shift = u64_op(lower, |reg| {
        format!("mul.lo.u64 {reg}, {next}, {RADIX_BITS}")
    });
    let shift = narrow(lower, shift);
    let after = u64_op(lower, |reg| format!("add.u64 {reg}, {j}, 1"));
    let high = u64_op(lower, |reg| format!("shr.u64 {reg}, {after}, {shift}"));
    let back = u64_op(lower, |reg| format!("shl.b64 {reg}, {high}, {shift}"));
    let ends = lower.e.compute(Class::Pred, |reg| {
        format!("setp.eq.u64 {reg}, {back}, {after}")
    });
    lower.e.bra_unless(ends, done);
    // The group's 32 parts: level-`level` groups `32 (high - 1) + lane`.
    let group = u64_op(lower, |reg| format!("sub.u64 {reg}, {high}, 1"));
    let part = u64_op(lower, |reg| {
        format!("mad.lo.u64 {reg}, {group}, {RADIX}, {lane}")
    });
    let entry = table.entry(lower, level, part);
    let value = table.read(lower, r, entry);
    lower.e.op("bar.warp.sync 0xffffffff");
    let levels = lane_tree(lower, r, lane, value)?;
    let root = levels.last().cloned().unwrap_or_default();
    let skip = lower.e.label();
    lower.e.bra_unless(first_lane, skip);
    let entry = table.entry(lower, next, group);
    table.write(lower, r, entry, &root);
    lower.e.at(skip);
    lower.e.op("bar.warp.sync 0xffffffff");
    lower.e.mov(level, next);
    lower.e.bra(head);
    lower.e.at(done);
    Ok(())
}

/// The values of the aligned blocks of 1, 2, ..., 32 lanes containing this lane: the lane's
/// value, then each butterfly level's combine (the canonical tree over the lanes).
pub(super) fn lane_tree(
    lower: &mut Lower<'_>,
    r: &Reduction,
    lane: Reg,
    value: Vec<Reg>,
) -> Result<Vec<Vec<Reg>>, CompileError> {
    let mut levels = vec![value];
    for k in 0..RADIX_BITS {
        let below = levels.last().cloned().unwrap_or_default();
        let (lower_half, upper_half) = butterfly(lower, lane, 1u64 << k, &below);
        let out = fresh_value(lower, r);
        combine(lower, r, &out, &lower_half, &upper_half)?;
        levels.push(out);
    }
    Ok(levels)
}

/// The tile's exclusive prefix: for each base-32 digit `d` of `j`, highest first, the warp
/// acquires the `d` level-`m` groups the digit spans (lane `l` the `l`-th; the others repeat
/// lane 0's), builds their lanes' tree, and folds the blocks of `d`'s binary digits (each an
/// aligned node of that tree, largest first) onto the prefix, from the initial value (for an
/// exclusive scan that has one). These are exactly the canonical blocks of `j`'s binary
/// digits.
pub(super) fn tile_prefix(
    lower: &mut Lower<'_>,
    r: &Reduction,
    table: &Table,
    lane: Reg,
    j: Reg,
    p: &Params,
) -> Result<Held, CompileError> {
    let acc = Held {
        value: fresh_value(lower, r),
        has: lower.e.reg(Class::Pred),
    };
    let given = lower.e.compute(Class::Pred, |reg| {
        format!("setp.ne.u64 {reg}, {}, 0", p.init)
    });
    lower
        .e
        .op(format!("and.pred {}, {}, {given}", acc.has, p.exclusive));
    let no_init = lower.e.label();
    lower.e.bra_unless(acc.has, no_init);
    let v = lower.load_value(&r.ty.clone(), p.init, "global", true);
    copy_into(lower, &acc.value, &v);
    lower.e.at(no_init);
    // Digits from the highest level down; `j` is the same in every lane (uniform branches).
    let level = lower.e.mov_imm(Class::B64, TABLE_LEVELS);
    let (head, done) = (lower.e.label(), lower.e.label());
    lower.e.at(head);
    let finished = lower
        .e
        .compute(Class::Pred, |reg| format!("setp.eq.u64 {reg}, {level}, 0"));
    lower.e.bra_if(finished, done);
    lower.e.op(format!("sub.u64 {level}, {level}, 1"));
    let shift = u64_op(lower, |reg| {
        format!("mul.lo.u64 {reg}, {level}, {RADIX_BITS}")
    });
    let shift = narrow(lower, shift);
    let shifted = u64_op(lower, |reg| format!("shr.u64 {reg}, {j}, {shift}"));
    let digit = u64_op(lower, |reg| {
        format!("and.b64 {reg}, {shifted}, {}", RADIX - 1)
    });
    let zero = lower
        .e
        .compute(Class::Pred, |reg| format!("setp.eq.u64 {reg}, {digit}, 0"));
    lower.e.bra_if(zero, head);
    // Lane `l < digit` holds group `first + l` of this level.
    let first = u64_op(lower, |reg| format!("sub.u64 {reg}, {shifted}, {digit}"));
    let value = fresh_value(lower, r);
    let inside = lower.e.compute(Class::Pred, |reg| {
        format!("setp.lt.u64 {reg}, {lane}, {digit}")
    });
    let fetched = lower.e.label();
    lower.e.bra_unless(inside, fetched);
    let part = u64_op(lower, |reg| format!("add.u64 {reg}, {first}, {lane}"));
    let entry = table.entry(lower, level, part);
    let v = table.read(lower, r, entry);
    copy_into(lower, &value, &v);
    lower.e.at(fetched);
    lower.e.op("bar.warp.sync 0xffffffff");
    // Lanes past the digit take lane 0's value, so no combine sees an unset register.
    let zero_lane = lower.e.mov_imm(Class::B32, 0);
    let from_first: Vec<Reg> = value
        .iter()
        .map(|&v| shuffle_from(lower, v, zero_lane))
        .collect();
    let skip_copy = lower.e.label();
    lower.e.bra_if(inside, skip_copy);
    copy_into(lower, &value, &from_first);
    lower.e.at(skip_copy);
    let levels = lane_tree(lower, r, lane, value)?;
    for k in (0..RADIX_BITS as usize).rev() {
        let bit = u64_op(lower, |reg| {
            format!("and.b64 {reg}, {digit}, {}", 1u64 << k)
        });
        let unset = lower
            .e
            .compute(Class::Pred, |reg| format!("setp.eq.u64 {reg}, {bit}, 0"));
        let skip = lower.e.label();
        lower.e.bra_if(unset, skip);
        // The block starts after the digit's higher set bits.
        let start = u64_op(lower, |reg| {
            format!("and.b64 {reg}, {digit}, {}", !((2u64 << k) - 1))
        });
        let start = narrow(lower, start);
        let block: Vec<Reg> = levels[k]
            .iter()
            .map(|&v| shuffle_from(lower, v, start))
            .collect();
        let folded = fold(lower, r, &acc, &block)?;
        copy_into(lower, &acc.value, &folded.value);
        lower.e.mov(acc.has, folded.has);
        lower.e.at(skip);
    }
    lower.e.bra(head);
    lower.e.at(done);
    Ok(acc)
}

/// A small 64-bit value as the 32-bit operand shifts take.
pub(super) fn narrow(lower: &mut Lower<'_>, v: Reg) -> Reg {
    lower
        .e
        .compute(Class::B32, |reg| format!("cvt.u32.u64 {reg}, {v}"))
}

/// The value `v` of lane `from` (a 32-bit register).
pub(super) fn shuffle_from(lower: &mut Lower<'_>, v: Reg, from: Reg) -> Reg {
    shuffle_with(lower, v, "idx", &from.to_string())
}
