//! A gang's index arithmetic in 32-bit lanes, for a variant whose indices all fit in 31 bits
//! ([`crate::abi::Variant::narrow_index`]), as the GPU's narrow indices do.
//!
//! Index leaves are then of kind `U32`: uniform `i32`s, or packed in `I32X4` vectors, so a
//! gather's index conversion (`floor(f + 0.25)`, saturating), its per-axis clamp and its
//! row-pitch arithmetic are a few vector instructions per 4 lanes; only the final address
//! (widened to 64 bits) and the load are per lane. Values outside the `int` range saturate
//! to it, so clamps and range checks see what they would in 64 bits: results are the 64-bit
//! lowering's.
//!
//! Positions are packed too (lane `k` at the gang's first position plus its offset), so
//! `indexof`, `instance()` and implicit resize stay in vectors.

use super::lanes::{map_parts, zip_parts};
use super::{Leaf, Spmd, MAX_PARTS};
use brook_ir::ScalarKind::{self, Bool, F32, F64, I32, I64, U32, U64};
use cranelift_codegen::ir::{types, InstBuilder, Value};

impl Spmd<'_, '_, '_> {
    /// An index loaded as a machine word (a `u64` of the block, a scalar binding's `i64`),
    /// as a narrow index leaf.
    pub fn narrow_word(&mut self, word: Value) -> Value {
        self.s.b.ins().ireduce(types::I32, word)
    }

    /// Lane offsets from lane 0 as `I32X4` vectors (`min(k, count - 1)` in a ragged gang).
    fn offset_vectors(&mut self) -> [Value; MAX_PARTS] {
        std::array::from_fn(|p| {
            let iota = self.lane_numbers(p);
            match self.count {
                None => iota,
                Some(count) => {
                    let last = self.s.b.ins().iadd_imm_s(count, -1);
                    let last = self.s.b.ins().ireduce(types::I32, last);
                    let last = self.s.b.ins().splat(types::I32X4, last);
                    self.s.b.ins().umin(iota, last)
                }
            }
        })
    }

    /// The position's fastest axis from lane 0's (an `i64`): packed `U32` lanes.
    pub fn narrow_fastest_position(&mut self, first: Value) -> Leaf {
        let first = self.narrow_word(first);
        let first = self.s.b.ins().splat(types::I32X4, first);
        let offsets = self.offset_vectors();
        let parts = self.parts();
        let ins = &mut self.s.b;
        Leaf::Packed(map_parts(parts, offsets, |o| ins.ins().iadd(first, o)))
    }

    /// `i32::MAX` in every lane, or as a scalar.
    fn int_max(&mut self, vector: bool) -> Value {
        let max = self.s.iconst(types::I32, i64::from(i32::MAX));
        if vector {
            self.s.b.ins().splat(types::I32X4, max)
        } else {
            max
        }
    }

    /// [`crate::lower::Target::to_index`] in 32 bits: floats by `floor(f + 0.25)` saturating to the `int`
    /// range (NaN gives 0), wider integers saturating to it, narrower ones extended.
    pub fn narrow_to_index(&mut self, kind: ScalarKind, v: Leaf) -> Leaf {
        match (kind, v) {
            (F32, Leaf::Uniform(x)) => Leaf::Uniform(self.floor_index_scalar(kind, x)),
            (F32, _) => {
                let x = self.vectors(v, F32);
                let quarter = self.s.b.ins().f32const(0.25);
                let quarter = self.s.b.ins().splat(types::F32X4, quarter);
                let parts = self.parts();
                let ins = &mut self.s.b;
                Leaf::Packed(map_parts(parts, x, |x| {
                    let shifted = ins.ins().fadd(x, quarter);
                    let floor = ins.ins().floor(shifted);
                    ins.ins().fcvt_to_sint_sat(types::I32X4, floor)
                }))
            }
            (I32, _) => v,
            (U32, Leaf::Uniform(x)) => {
                let max = self.int_max(false);
                Leaf::Uniform(self.s.b.ins().umin(x, max))
            }
            (U32, _) => {
                let x = self.vectors(v, U32);
                let max = self.int_max(true);
                let parts = self.parts();
                let ins = &mut self.s.b;
                Leaf::Packed(map_parts(parts, x, |x| ins.ins().umin(x, max)))
            }
            (Bool, Leaf::Packed(masks)) => {
                let one = self.s.iconst(types::I32, 1);
                let one = self.s.b.ins().splat(types::I32X4, one);
                let parts = self.parts();
                let ins = &mut self.s.b;
                Leaf::Packed(map_parts(parts, masks, |m| ins.ins().band(m, one)))
            }
            _ => self.per_lane(&[(v, kind)], U32, |s, x| narrow_scalar(s, kind, x[0])),
        }
    }

    fn floor_index_scalar(&mut self, kind: ScalarKind, x: Value) -> Value {
        narrow_scalar(self.s, kind, x)
    }

    /// [`crate::lower::Target::clamp_index`] in 32 bits: `i` (signed) clamped to `[0, extent - 1]`.
    pub fn narrow_clamp(&mut self, i: Leaf, extent: Leaf) -> Leaf {
        if let (Leaf::Uniform(i), Leaf::Uniform(extent)) = (i, extent) {
            let zero = self.s.iconst(types::I32, 0);
            let low = self.s.b.ins().smax(i, zero);
            let last = self.s.b.ins().iadd_imm_s(extent, -1);
            return Leaf::Uniform(self.s.b.ins().umin(low, last));
        }
        let i = self.vectors(i, U32);
        let extent = self.vectors(extent, U32);
        let zero = self.s.iconst(types::I32, 0);
        let zero = self.s.b.ins().splat(types::I32X4, zero);
        let one = self.s.iconst(types::I32, 1);
        let one = self.s.b.ins().splat(types::I32X4, one);
        let parts = self.parts();
        let ins = &mut self.s.b;
        Leaf::Packed(zip_parts(parts, i, extent, |i, n| {
            let low = ins.ins().smax(i, zero);
            let last = ins.ins().isub(n, one);
            ins.ins().umin(low, last)
        }))
    }

    /// [`crate::lower::Target::element_address`] of a narrow index: `base + index * size` with the index
    /// widened to 64 bits (per lane where the index varies).
    pub fn narrow_address(&mut self, base: Leaf, index: Leaf, size: u32) -> Leaf {
        let widen = |s: &mut crate::cpu::lower::Lower<'_, '_>, base: Value, index: Value| {
            let wide = s.b.ins().uextend(types::I64, index);
            s.element_address(base, wide, size)
        };
        if let (Leaf::Uniform(b), Leaf::Uniform(i)) = (base, index) {
            return Leaf::Uniform(widen(self.s, b, i));
        }
        let lanes = self.per_lane(&[(base, I64), (index, U32)], I64, |s, v| {
            widen(s, v[0], v[1])
        });
        if let (Leaf::Uniform(base), Leaf::Packed(index), Leaf::Lanes(addresses)) =
            (base, index, lanes)
        {
            let gather = super::gather::GatherAddress { base, index, size };
            self.note_gather(&addresses, gather);
        }
        lanes
    }
}

/// One lane's narrow index of a value of `kind` (see [`Spmd::narrow_to_index`]).
fn narrow_scalar(s: &mut crate::cpu::lower::Lower<'_, '_>, kind: ScalarKind, x: Value) -> Value {
    match kind {
        F32 | F64 => {
            let quarter = if kind == F32 {
                s.b.ins().f32const(0.25)
            } else {
                s.b.ins().f64const(0.25)
            };
            let shifted = s.b.ins().fadd(x, quarter);
            let floor = s.b.ins().floor(shifted);
            s.b.ins().fcvt_to_sint_sat(types::I32, floor)
        }
        I64 => {
            let low = s.iconst(types::I64, i64::from(i32::MIN));
            let high = s.iconst(types::I64, i64::from(i32::MAX));
            let x = s.b.ins().smax(x, low);
            let x = s.b.ins().smin(x, high);
            s.b.ins().ireduce(types::I32, x)
        }
        U64 => {
            let high = s.iconst(types::I64, i64::from(i32::MAX));
            let x = s.b.ins().umin(x, high);
            s.b.ins().ireduce(types::I32, x)
        }
        U32 => {
            let high = s.iconst(types::I32, i64::from(i32::MAX));
            s.b.ins().umin(x, high)
        }
        I32 => x,
        Bool => s.b.ins().uextend(types::I32, x),
        k if k.is_signed() => s.b.ins().sextend(types::I32, x),
        _ => s.b.ins().uextend(types::I32, x),
    }
}
