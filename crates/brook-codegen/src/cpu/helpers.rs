//! Functions that compiled code calls: transcendental intrinsics and float remainders.
//!
//! Each is the Rust standard library's function (the system libm behind it), the same one the
//! reference interpreter calls, so the CPU device gives the interpreter's bits for these too.
//! Their accuracy is the platform libm's (glibc: within 1 ulp for `f32`, see docs/GUIDE.md).

use brook_ir::MathFun;

/// The helper's argument count and precision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HelperSig {
    F32Unary,
    F32Binary,
    F64Unary,
    F64Binary,
}

/// A function compiled code may call (through its address).
#[derive(Clone, Copy, Debug)]
pub struct Helper {
    pub sig: HelperSig,
    pub address: *const u8,
}

macro_rules! unary {
    ($name:ident, $t:ty, $method:ident) => {
        extern "C" fn $name(x: $t) -> $t {
            x.$method()
        }
    };
}

macro_rules! binary {
    ($name:ident, $t:ty, |$x:ident, $y:ident| $body:expr) => {
        extern "C" fn $name($x: $t, $y: $t) -> $t {
            $body
        }
    };
}

unary!(brook_acosf, f32, acos);
unary!(brook_asinf, f32, asin);
unary!(brook_atanf, f32, atan);
unary!(brook_cosf, f32, cos);
unary!(brook_sinf, f32, sin);
unary!(brook_tanf, f32, tan);
unary!(brook_expf, f32, exp);
unary!(brook_exp2f, f32, exp2);
unary!(brook_logf, f32, ln);
unary!(brook_log2f, f32, log2);
unary!(brook_acos, f64, acos);
unary!(brook_asin, f64, asin);
unary!(brook_atan, f64, atan);
unary!(brook_cos, f64, cos);
unary!(brook_sin, f64, sin);
unary!(brook_tan, f64, tan);
unary!(brook_exp, f64, exp);
unary!(brook_exp2, f64, exp2);
unary!(brook_log, f64, ln);
unary!(brook_log2, f64, log2);
binary!(brook_atan2f, f32, |y, x| y.atan2(x));
binary!(brook_powf, f32, |x, y| x.powf(y));
binary!(brook_fmodf, f32, |x, y| x % y);
binary!(brook_atan2, f64, |y, x| y.atan2(x));
binary!(brook_pow, f64, |x, y| x.powf(y));
binary!(brook_fmod, f64, |x, y| x % y);

/// The helper computing `fun` in single (`double == false`) or double precision, if `fun` is
/// computed by a call.
pub fn math_helper(fun: MathFun, double: bool) -> Option<Helper> {
    let (single, wide): (extern "C" fn(f32) -> f32, extern "C" fn(f64) -> f64) = match fun {
        MathFun::Acos => (brook_acosf, brook_acos),
        MathFun::Asin => (brook_asinf, brook_asin),
        MathFun::Atan => (brook_atanf, brook_atan),
        MathFun::Cos => (brook_cosf, brook_cos),
        MathFun::Sin => (brook_sinf, brook_sin),
        MathFun::Tan => (brook_tanf, brook_tan),
        MathFun::Exp => (brook_expf, brook_exp),
        MathFun::Exp2 => (brook_exp2f, brook_exp2),
        MathFun::Log => (brook_logf, brook_log),
        MathFun::Log2 => (brook_log2f, brook_log2),
        MathFun::Atan2 => return Some(binary_helper(fun, double)),
        MathFun::Pow => return Some(binary_helper(fun, double)),
        _ => return None,
    };
    Some(if double {
        Helper {
            sig: HelperSig::F64Unary,
            address: wide as *const u8,
        }
    } else {
        Helper {
            sig: HelperSig::F32Unary,
            address: single as *const u8,
        }
    })
}

fn binary_helper(fun: MathFun, double: bool) -> Helper {
    let (single, wide): (
        extern "C" fn(f32, f32) -> f32,
        extern "C" fn(f64, f64) -> f64,
    ) = match fun {
        MathFun::Atan2 => (brook_atan2f, brook_atan2),
        MathFun::Pow => (brook_powf, brook_pow),
        _ => (brook_fmodf, brook_fmod),
    };
    if double {
        Helper {
            sig: HelperSig::F64Binary,
            address: wide as *const u8,
        }
    } else {
        Helper {
            sig: HelperSig::F32Binary,
            address: single as *const u8,
        }
    }
}

/// The float remainder (`%`, `fmod`): C `fmod`, the sign of the dividend.
pub fn fmod_helper(double: bool) -> Helper {
    binary_helper(MathFun::Fmod, double)
}
