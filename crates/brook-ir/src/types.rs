//! Scalar and short-vector value types, with their C layout.
//!
//! A Brook value is a scalar or a vector of 2 to 4 scalars of one kind (`float4`, `uchar2`).
//! Layout follows C: a vector is laid out like an array of its components (`float3` is 12 bytes,
//! aligned to 4), so a host `struct { float x, y, z; }` has the same bytes as a `float3` element.

use std::fmt;

/// The kind of a scalar, or of each component of a vector.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum ScalarKind {
    Bool,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
}

impl ScalarKind {
    /// Every kind, in promotion order (see [`ScalarKind::promotion_rank`]).
    pub const ALL: [ScalarKind; 11] = [
        ScalarKind::Bool,
        ScalarKind::I8,
        ScalarKind::U8,
        ScalarKind::I16,
        ScalarKind::U16,
        ScalarKind::I32,
        ScalarKind::U32,
        ScalarKind::I64,
        ScalarKind::U64,
        ScalarKind::F32,
        ScalarKind::F64,
    ];

    /// The Brook spelling of the scalar type (`uchar`, `float`).
    pub fn brook_name(self) -> &'static str {
        match self {
            ScalarKind::Bool => "bool",
            ScalarKind::I8 => "char",
            ScalarKind::U8 => "uchar",
            ScalarKind::I16 => "short",
            ScalarKind::U16 => "ushort",
            ScalarKind::I32 => "int",
            ScalarKind::U32 => "uint",
            ScalarKind::I64 => "long",
            ScalarKind::U64 => "ulong",
            ScalarKind::F32 => "float",
            ScalarKind::F64 => "double",
        }
    }

    /// Size in bytes.
    pub fn size(self) -> u32 {
        match self {
            ScalarKind::Bool | ScalarKind::I8 | ScalarKind::U8 => 1,
            ScalarKind::I16 | ScalarKind::U16 => 2,
            ScalarKind::I32 | ScalarKind::U32 | ScalarKind::F32 => 4,
            ScalarKind::I64 | ScalarKind::U64 | ScalarKind::F64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, ScalarKind::F32 | ScalarKind::F64)
    }

    pub fn is_integer(self) -> bool {
        !self.is_float() && self != ScalarKind::Bool
    }

    pub fn is_signed(self) -> bool {
        matches!(
            self,
            ScalarKind::I8 | ScalarKind::I16 | ScalarKind::I32 | ScalarKind::I64
        ) || self.is_float()
    }

    /// Position in the Brook+ promotion order `char < uchar < short < ushort < int < uint < float
    /// < double` (seed 003, section 6.3.3). A kind may be promoted implicitly to any kind of a
    /// higher rank; bool ranks lowest.
    pub fn promotion_rank(self) -> u8 {
        match self {
            ScalarKind::Bool => 0,
            ScalarKind::I8 => 1,
            ScalarKind::U8 => 2,
            ScalarKind::I16 => 3,
            ScalarKind::U16 => 4,
            ScalarKind::I32 => 5,
            ScalarKind::U32 => 6,
            ScalarKind::I64 => 7,
            ScalarKind::U64 => 8,
            ScalarKind::F32 => 9,
            ScalarKind::F64 => 10,
        }
    }

    /// True when every value of `self` converts to `to` without loss, as the promotion table of
    /// seed 003 section 6.3.3 lists (`int -> float` is listed there, and so counts as a promotion).
    pub fn promotes_to(self, to: ScalarKind) -> bool {
        self == to || self.promotion_rank() < to.promotion_rank()
    }
}

impl fmt::Display for ScalarKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.brook_name())
    }
}

/// A scalar (`width == 1`) or a short vector (`width` 2 to 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct ValueType {
    pub kind: ScalarKind,
    pub width: u8,
}

impl ValueType {
    /// The type a Brook name spells: `float`, `uint`, `float4`, `char2` (widths 2 to 4).
    pub fn from_brook_name(name: &str) -> Option<ValueType> {
        let base = name.trim_end_matches(|c: char| c.is_ascii_digit());
        let width: u8 = match &name[base.len()..] {
            "" => 1,
            w => w.parse().ok().filter(|w| (2..=4).contains(w))?,
        };
        let kind = ScalarKind::ALL
            .into_iter()
            .find(|k| k.brook_name() == base)?;
        Some(ValueType::vector(kind, width))
    }

    pub const fn scalar(kind: ScalarKind) -> Self {
        ValueType { kind, width: 1 }
    }

    pub const fn vector(kind: ScalarKind, width: u8) -> Self {
        ValueType { kind, width }
    }

    pub fn is_scalar(self) -> bool {
        self.width == 1
    }

    /// The same shape with another component kind (`float3` -> `bool3`).
    pub fn with_kind(self, kind: ScalarKind) -> Self {
        ValueType { kind, ..self }
    }

    /// Size in bytes under C layout.
    pub fn size(self) -> u32 {
        self.kind.size() * u32::from(self.width)
    }

    /// Alignment in bytes under C layout: that of one component.
    pub fn align(self) -> u32 {
        self.kind.size()
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.width == 1 {
            write!(f, "{}", self.kind)
        } else {
            write!(f, "{}{}", self.kind, self.width)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_layout() {
        let f3 = ValueType::vector(ScalarKind::F32, 3);
        assert_eq!(f3.to_string(), "float3");
        assert_eq!(f3.size(), 12);
        assert_eq!(f3.align(), 4);
        assert_eq!(ValueType::scalar(ScalarKind::U8).to_string(), "uchar");
        assert_eq!(ValueType::vector(ScalarKind::F64, 2).size(), 16);
    }

    #[test]
    fn promotion_follows_the_brook_table() {
        assert!(ScalarKind::I8.promotes_to(ScalarKind::U8));
        assert!(ScalarKind::I32.promotes_to(ScalarKind::F32));
        assert!(ScalarKind::F32.promotes_to(ScalarKind::F64));
        assert!(!ScalarKind::F64.promotes_to(ScalarKind::F32));
        assert!(!ScalarKind::U32.promotes_to(ScalarKind::I32));
    }
}
