//! Predefined functions: `block(b)` (the `Range` of block `b`'s threads, section 1.2.2) and
//! the scalar math functions every device has (`max` and `min` as the seed's `maximum`
//! program uses them, `abs`, `sqrt`, `exp`, `sin`, ...). They take any numeric type whose
//! arguments agree (the math ones that only make sense for floats take floats), so `max /. a`
//! works for an array of any numbers. A device function of the same name hides a predefined
//! one.

use super::ty::Ty;
use crate::loom::ast::BasicType;
use brook_ir::intrinsic::{lookup, INTRINSICS};
use brook_ir::MathFun;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    /// `block(b)`: `{start: b * BLOCKSIZE, end: (b + 1) * BLOCKSIZE}`.
    Block,
    Math(MathFun),
}

impl Builtin {
    pub fn from_name(name: &str) -> Option<Builtin> {
        if name == "block" {
            return Some(Builtin::Block);
        }
        lookup(name)
            .filter(|i| i.in_loom)
            .map(|i| Builtin::Math(i.fun))
    }

    /// The names of every predefined function.
    pub fn names() -> impl Iterator<Item = &'static str> {
        let math = INTRINSICS.iter().filter(|i| i.in_loom).map(|i| i.name);
        std::iter::once("block").chain(math)
    }

    pub fn name(self) -> &'static str {
        match self {
            Builtin::Block => "block",
            Builtin::Math(f) => f.name(),
        }
    }

    pub fn arity(self) -> usize {
        match self {
            Builtin::Block => 1,
            Builtin::Math(f) => f.arity(),
        }
    }

    /// The result type for arguments of these types, or why they do not fit (the arity is
    /// checked by the caller).
    pub fn result(self, args: &[Ty]) -> Result<Ty, String> {
        match self {
            Builtin::Block => match args.first() {
                Some(t) if t.is_integer() || t.is_error() => Ok(Ty::range()),
                Some(t) => Err(format!("`block` takes a block index (an integer), not {t}")),
                None => Ok(Ty::range()),
            },
            Builtin::Math(fun) => math_result(fun, args),
        }
    }
}

fn math_result(fun: MathFun, args: &[Ty]) -> Result<Ty, String> {
    let name = fun.name();
    let mut common = Ty::UntypedInt;
    for arg in args {
        common = match (&common, arg) {
            (_, Ty::Error) | (Ty::Error, _) => Ty::Error,
            (_, t) if !t.is_numeric() => {
                return Err(format!("`{name}` takes numbers, not {t}"));
            }
            (Ty::UntypedInt, t) => t.clone(),
            (Ty::UntypedFloat, Ty::UntypedInt) => Ty::UntypedFloat,
            (Ty::UntypedFloat, Ty::Basic(b)) if b.is_float() => arg.clone(),
            (Ty::Basic(b), Ty::UntypedInt) => Ty::Basic(*b),
            (Ty::Basic(b), Ty::UntypedFloat) if b.is_float() => Ty::Basic(*b),
            (a, b) if a == b => a.clone(),
            (a, b) => {
                return Err(format!(
                    "`{name}` takes arguments of one type, and these are {a} and {b}"
                ))
            }
        };
    }
    if !fun.is_numeric() {
        common = match common {
            Ty::UntypedInt => Ty::UntypedFloat,
            Ty::Basic(b) if !b.is_float() => {
                return Err(format!(
                    "`{name}` takes floating-point numbers, not {}: convert with `: Float32`",
                    b.name()
                ))
            }
            other => other,
        };
    }
    Ok(match fun {
        MathFun::IsFinite | MathFun::IsInf | MathFun::IsNan => Ty::Basic(BasicType::Bool),
        _ => common,
    })
}
