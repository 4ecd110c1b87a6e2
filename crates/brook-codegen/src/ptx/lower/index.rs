//! Index arithmetic on the GPU, in 64 bits or — for a variant whose indices all fit in 31
//! bits ([`crate::abi::Variant::narrow_index`]) — in 32 bits.
//!
//! 64-bit integer arithmetic is several instructions each on an NVIDIA GPU (a 64-bit
//! multiply-add is three, a 64-bit clamp four), so a gather or a store in 64 bits costs
//! about three times its narrow form. A narrow index leaf is a `b32` register holding a
//! signed value (negative only where [`Lower::index_of_value`] made it so); an element's
//! address is still 64 bits, widened once by `mad.wide.u32`.

use super::Lower;
use crate::ptx::emit::{Class, Reg};
use brook_ir::ScalarKind;

/// The width of index leaves in one entry function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexWidth {
    /// `u64` registers (every launch can use it; reductions always do).
    Wide,
    /// `b32` registers.
    Narrow,
}

impl IndexWidth {
    /// The width a map or group entry of `variant` uses.
    pub fn of(variant: &crate::abi::Variant) -> IndexWidth {
        if variant.narrow_index {
            IndexWidth::Narrow
        } else {
            IndexWidth::Wide
        }
    }

    pub fn class(self) -> Class {
        match self {
            IndexWidth::Wide => Class::B64,
            IndexWidth::Narrow => Class::B32,
        }
    }

    /// The unsigned PTX type (`u64`/`u32`).
    pub fn unsigned(self) -> &'static str {
        match self {
            IndexWidth::Wide => "u64",
            IndexWidth::Narrow => "u32",
        }
    }

    /// The signed PTX type (`s64`/`s32`).
    pub fn signed(self) -> &'static str {
        match self {
            IndexWidth::Wide => "s64",
            IndexWidth::Narrow => "s32",
        }
    }

    pub fn kind(self) -> ScalarKind {
        match self {
            IndexWidth::Wide => ScalarKind::U64,
            IndexWidth::Narrow => ScalarKind::U32,
        }
    }
}

impl Lower<'_> {
    /// An index register holding `value`.
    pub fn index_imm(&mut self, value: u64) -> Reg {
        self.e.mov_imm(self.index.class(), value)
    }

    /// An index field (a `u64` extent, pitch or offset) of the parameter block; a narrow
    /// index reads its low word (the runtime checked it fits).
    pub fn param_index(&mut self, at: u32) -> Reg {
        let u = self.index.unsigned();
        self.e.compute(self.index.class(), |r| {
            format!("ld.param.{u} {r}, [{}+{at}]", super::PARAMS)
        })
    }

    /// A special register (`%tid.x`, `%ctaid.x`, ...) as an index.
    pub fn special_index(&mut self, name: &str) -> Reg {
        let narrow = self
            .e
            .compute(Class::B32, |r| format!("mov.u32 {r}, {name}"));
        match self.index {
            IndexWidth::Narrow => narrow,
            IndexWidth::Wide => self
                .e
                .compute(Class::B64, |r| format!("cvt.u64.u32 {r}, {narrow}")),
        }
    }

    /// An index as a `u32` (the low word of a wide one).
    pub fn index_low_word(&mut self, i: Reg) -> Reg {
        match self.index {
            IndexWidth::Narrow => i,
            IndexWidth::Wide => self
                .e
                .compute(Class::B32, |r| format!("cvt.u32.u64 {r}, {i}")),
        }
    }

    /// `a <op>.<type> b` on index registers (`op` an instruction such as `mul.lo`, `div`,
    /// `rem`, `add`, of the unsigned type).
    pub fn index_op(&mut self, op: &str, a: Reg, b: impl std::fmt::Display) -> Reg {
        let u = self.index.unsigned();
        self.e
            .compute(self.index.class(), |r| format!("{op}.{u} {r}, {a}, {b}"))
    }

    /// A value of `kind` as a signed index (see [`crate::lower::Target::to_index`]); in 32
    /// bits, values outside the `int` range saturate to it, so clamping and range checks see
    /// what they would in 64 bits.
    pub fn index_of_value(&mut self, kind: ScalarKind, v: Reg) -> Reg {
        match self.index {
            IndexWidth::Wide => self.wide_index_of_value(kind, v),
            IndexWidth::Narrow => self.narrow_index_of_value(kind, v),
        }
    }

    fn wide_index_of_value(&mut self, kind: ScalarKind, v: Reg) -> Reg {
        match kind {
            ScalarKind::F32 | ScalarKind::F64 => self.floor_index(kind, v, "s64"),
            ScalarKind::I64 => v,
            ScalarKind::U64 => {
                let negative = self
                    .e
                    .compute(Class::Pred, |r| format!("setp.lt.s64 {r}, {v}, 0"));
                let max = self.e.mov_imm(Class::B64, i64::MAX);
                crate::lower::Target::select(self, kind, negative, max, v)
            }
            ScalarKind::Bool => self
                .e
                .compute(Class::B64, |r| format!("selp.u64 {r}, 1, 0, {v}")),
            k if k.is_signed() => self
                .e
                .compute(Class::B64, |r| format!("cvt.s64.s32 {r}, {v}")),
            _ => self
                .e
                .compute(Class::B64, |r| format!("cvt.u64.u32 {r}, {v}")),
        }
    }

    fn narrow_index_of_value(&mut self, kind: ScalarKind, v: Reg) -> Reg {
        let b32 = Class::B32;
        match kind {
            ScalarKind::F32 | ScalarKind::F64 => self.floor_index(kind, v, "s32"),
            ScalarKind::I64 => {
                let low = self.e.compute(Class::B64, |r| {
                    format!("max.s64 {r}, {v}, {}", i64::from(i32::MIN))
                });
                let high = self
                    .e
                    .compute(Class::B64, |r| format!("min.s64 {r}, {low}, {}", i32::MAX));
                self.e.compute(b32, |r| format!("cvt.u32.u64 {r}, {high}"))
            }
            ScalarKind::U64 => {
                let high = self
                    .e
                    .compute(Class::B64, |r| format!("min.u64 {r}, {v}, {}", i32::MAX));
                self.e.compute(b32, |r| format!("cvt.u32.u64 {r}, {high}"))
            }
            ScalarKind::U32 => self
                .e
                .compute(b32, |r| format!("min.u32 {r}, {v}, {}", i32::MAX)),
            ScalarKind::Bool => self.e.compute(b32, |r| format!("selp.u32 {r}, 1, 0, {v}")),
            // Narrower kinds are held extended to 32 bits already.
            _ => v,
        }
    }

    /// `floor(f + 0.25)` as a signed `ty` (`cvt.rmi` saturates; NaN gives 0).
    fn floor_index(&mut self, kind: ScalarKind, v: Reg, ty: &str) -> Reg {
        let (t, quarter) = if kind == ScalarKind::F32 {
            ("f32", "0f3E800000")
        } else {
            ("f64", "0d3FD0000000000000")
        };
        let shifted = self
            .e
            .compute(v.class, |r| format!("add.rn.{t} {r}, {v}, {quarter}"));
        self.e.compute(self.index.class(), |r| {
            format!("cvt.rmi.{ty}.{t} {r}, {shifted}")
        })
    }

    /// `i` (signed) clamped to `[0, extent - 1]`.
    pub fn clamp_to_extent(&mut self, i: Reg, extent: Reg) -> Reg {
        let (s, u, class) = (
            self.index.signed(),
            self.index.unsigned(),
            self.index.class(),
        );
        let low = self.e.compute(class, |r| format!("max.{s} {r}, {i}, 0"));
        let last = self
            .e
            .compute(class, |r| format!("add.{s} {r}, {extent}, -1"));
        self.e
            .compute(class, |r| format!("min.{u} {r}, {low}, {last}"))
    }

    /// `offset + sum(index[k] * pitch[k])`: an element index.
    pub fn element_index(&mut self, offset: Reg, index: &[Reg], pitch: &[Reg]) -> Reg {
        let mut sum = offset;
        for (&i, &p) in index.iter().zip(pitch) {
            let u = self.index.unsigned();
            sum = self.e.compute(self.index.class(), |r| {
                format!("mad.lo.{u} {r}, {i}, {p}, {sum}")
            });
        }
        sum
    }

    /// `base + index * size`: an element's (64-bit) address.
    pub fn element_address(&mut self, base: Reg, index: Reg, size: u32) -> Reg {
        if base.class == Class::B32 {
            // A shared-memory address: 32 bits, wrapping like the hardware's.
            let index = match index.class {
                Class::B64 => self
                    .e
                    .compute(Class::B32, |r| format!("cvt.u32.u64 {r}, {index}")),
                _ => index,
            };
            return self.e.compute(Class::B32, |r| {
                format!("mad.lo.u32 {r}, {index}, {size}, {base}")
            });
        }
        let mad = match self.index {
            IndexWidth::Wide => "mad.lo.u64",
            IndexWidth::Narrow => "mad.wide.u32",
        };
        self.e.compute(Class::B64, |r| {
            format!("{mad} {r}, {index}, {size}, {base}")
        })
    }
}
