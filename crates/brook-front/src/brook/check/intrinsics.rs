//! The kernel intrinsic library (seed 003, section 5): names and type rules.

/// How an intrinsic's result type follows from its arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signature {
    /// `arity` arguments of one float or double type T (scalar or vector); returns T.
    FloatMap(usize),
    /// `arity` arguments of one numeric type T; returns T.
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

    /// The argument types accepted, for messages.
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
}

/// The signature of the intrinsic called `name`, if it is one.
pub fn lookup(name: &str) -> Option<Signature> {
    Some(match name {
        "acos" | "asin" | "atan" | "cos" | "sin" | "tan" | "exp" | "exp2" | "log" | "log2"
        | "sqrt" | "rsqrt" | "floor" | "ceil" | "frac" | "round" | "normalize" => {
            Signature::FloatMap(1)
        }
        "pow" | "fmod" | "atan2" => Signature::FloatMap(2),
        "lerp" | "fma" => Signature::FloatMap(3),
        "abs" | "sign" => Signature::NumericMap(1),
        "min" | "max" => Signature::NumericMap(2),
        "clamp" => Signature::NumericMap(3),
        "dot" => Signature::Dot,
        "cross" => Signature::Cross,
        "length" => Signature::Length,
        "distance" => Signature::Distance,
        "isnan" | "isinf" | "isfinite" => Signature::Classify,
        _ => return None,
    })
}

/// Every intrinsic name, for "did you mean" suggestions and documentation.
pub const NAMES: &[&str] = &[
    "abs",
    "acos",
    "asin",
    "atan",
    "atan2",
    "ceil",
    "clamp",
    "cos",
    "cross",
    "distance",
    "dot",
    "exp",
    "exp2",
    "floor",
    "fma",
    "fmod",
    "frac",
    "isfinite",
    "isinf",
    "isnan",
    "length",
    "lerp",
    "log",
    "log2",
    "max",
    "min",
    "normalize",
    "pow",
    "round",
    "rsqrt",
    "sign",
    "sin",
    "sqrt",
    "tan",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_name_has_a_signature() {
        for name in NAMES {
            assert!(lookup(name).is_some(), "{name}");
        }
        assert_eq!(lookup("printf"), None);
    }
}
