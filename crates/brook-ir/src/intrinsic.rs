//! The intrinsic library (seed 003, section 5) in one table, [`INTRINSICS`]: each function's
//! name, the operands it takes ([`Signature`]), how exactly devices compute it
//! ([`Exactness`]) and whether LOOM offers it.
//!
//! The Brook checker, the IR validator, LOOM's checker, the fuzz generator and the tests read
//! the table; the interpreter and each backend implement every [`MathFun`] in one `match`,
//! so the compiler names a backend that lacks one. A new intrinsic is a `MathFun` variant, its
//! row here, and its implementations (the interpreter, the CPU's scalar and SIMD lowerings,
//! PTX, SPIR-V; a [`Exactness::Library`] function also its `brook_codegen::mathlib` routine).

use crate::expr::MathFun;

/// The operands an intrinsic takes and the type it returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signature {
    /// `arity` operands of one float or double type T (scalar or vector); returns T.
    FloatMap(usize),
    /// `arity` operands of one numeric type T; returns T.
    NumericMap(usize),
    /// `dot(v, v)`: one float type; returns its scalar.
    Dot,
    /// `cross(float3, float3)`: returns float3.
    Cross,
    /// `length(v)`: returns the scalar.
    Length,
    /// `distance(a, b)`: returns the scalar.
    Distance,
    /// `isnan(x)`, `isinf(x)`, `isfinite(x)`: bool of the same shape.
    Classify,
}

impl Signature {
    pub fn arity(self) -> usize {
        match self {
            Signature::FloatMap(n) | Signature::NumericMap(n) => n,
            Signature::Length | Signature::Classify => 1,
            Signature::Dot | Signature::Cross | Signature::Distance => 2,
        }
    }

    /// The operand types accepted, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Signature::FloatMap(_) => "float or double scalars or vectors, all of one type",
            Signature::NumericMap(_) => "numeric scalars or vectors, all of one type",
            Signature::Dot | Signature::Distance => "two float or double vectors of one type",
            Signature::Cross => "two float3 vectors",
            Signature::Length => "a float or double vector",
            Signature::Classify => "a float or double scalar or vector",
        }
    }

    /// Integer operands are accepted too.
    pub fn takes_integers(self) -> bool {
        matches!(self, Signature::NumericMap(_))
    }
}

/// How exactly the devices compute an intrinsic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exactness {
    /// Every device gives the interpreter's bits (IEEE 754 operations, correctly rounded).
    Exact,
    /// Brook's math library: every compiled device evaluates the same routine (in `double`,
    /// a `float` result rounded once), the interpreter the host's `libm`; they agree within a
    /// few ulps (docs/GUIDE.md, the math library).
    Library,
}

/// One intrinsic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Intrinsic {
    pub fun: MathFun,
    /// The name Brook and LOOM programs call it by.
    pub name: &'static str,
    pub signature: Signature,
    pub exactness: Exactness,
    /// LOOM offers it (its math functions on scalars).
    pub in_loom: bool,
}

const fn row(
    fun: MathFun,
    name: &'static str,
    signature: Signature,
    exactness: Exactness,
    in_loom: bool,
) -> Intrinsic {
    Intrinsic {
        fun,
        name,
        signature,
        exactness,
        in_loom,
    }
}

use Exactness::{Exact, Library};
use Signature::{Classify, FloatMap, NumericMap};

/// Every intrinsic, in the order of [`MathFun`]'s variants.
pub const INTRINSICS: [Intrinsic; 34] = [
    row(MathFun::Abs, "abs", NumericMap(1), Exact, true),
    row(MathFun::Acos, "acos", FloatMap(1), Library, true),
    row(MathFun::Asin, "asin", FloatMap(1), Library, true),
    row(MathFun::Atan, "atan", FloatMap(1), Library, true),
    row(MathFun::Atan2, "atan2", FloatMap(2), Library, true),
    row(MathFun::Ceil, "ceil", FloatMap(1), Exact, true),
    row(MathFun::Clamp, "clamp", NumericMap(3), Exact, true),
    row(MathFun::Cos, "cos", FloatMap(1), Library, true),
    row(MathFun::Cross, "cross", Signature::Cross, Exact, false),
    row(
        MathFun::Distance,
        "distance",
        Signature::Distance,
        Exact,
        false,
    ),
    row(MathFun::Dot, "dot", Signature::Dot, Exact, false),
    row(MathFun::Exp, "exp", FloatMap(1), Library, true),
    row(MathFun::Exp2, "exp2", FloatMap(1), Library, true),
    row(MathFun::Floor, "floor", FloatMap(1), Exact, true),
    row(MathFun::Fma, "fma", FloatMap(3), Exact, false),
    row(MathFun::Fmod, "fmod", FloatMap(2), Exact, true),
    row(MathFun::Frac, "frac", FloatMap(1), Exact, true),
    row(MathFun::IsFinite, "isfinite", Classify, Exact, true),
    row(MathFun::IsInf, "isinf", Classify, Exact, true),
    row(MathFun::IsNan, "isnan", Classify, Exact, true),
    row(MathFun::Length, "length", Signature::Length, Exact, false),
    row(MathFun::Lerp, "lerp", FloatMap(3), Exact, false),
    row(MathFun::Log, "log", FloatMap(1), Library, true),
    row(MathFun::Log2, "log2", FloatMap(1), Library, true),
    row(MathFun::Max, "max", NumericMap(2), Exact, true),
    row(MathFun::Min, "min", NumericMap(2), Exact, true),
    row(MathFun::Normalize, "normalize", FloatMap(1), Exact, false),
    row(MathFun::Pow, "pow", FloatMap(2), Library, true),
    row(MathFun::Round, "round", FloatMap(1), Exact, true),
    row(MathFun::Rsqrt, "rsqrt", FloatMap(1), Exact, true),
    row(MathFun::Sign, "sign", NumericMap(1), Exact, true),
    row(MathFun::Sin, "sin", FloatMap(1), Library, true),
    row(MathFun::Sqrt, "sqrt", FloatMap(1), Exact, true),
    row(MathFun::Tan, "tan", FloatMap(1), Library, true),
];

/// The intrinsic called `name`, if there is one.
pub fn lookup(name: &str) -> Option<&'static Intrinsic> {
    INTRINSICS.iter().find(|i| i.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_follow_the_variants_and_names_are_unique() {
        for (index, row) in INTRINSICS.iter().enumerate() {
            assert_eq!(row.fun as usize, index, "{}", row.name);
            assert_eq!(row.fun.intrinsic(), row);
            assert_eq!(lookup(row.name), Some(row));
            assert_eq!(MathFun::from_name(row.name), Some(row.fun));
        }
        assert_eq!(lookup("printf"), None);
    }
}
