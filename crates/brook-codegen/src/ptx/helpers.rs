//! Helper functions (`.func`) that generated code calls: `fmod` (PTX text written here) and
//! the transcendental intrinsics (written from [`crate::mathlib`] by [`libm`]). A module gets
//! the helpers its kernel calls, after the 2/pi table if one of them reads it.

use super::libm;
use crate::mathlib::Fun;
use brook_ir::MathFun;

/// `fmod` of two `f64`s, exact (the integer long division of musl's `fmod`).
pub const FMOD_F64: &str = "brook_fmod_f64";

/// The helper computing `fun` for `f32` (or `f64` with `double`), if `fun` is transcendental.
pub fn math_helper(fun: MathFun, double: bool) -> Option<&'static str> {
    let name = match (fun, double) {
        (MathFun::Sin, false) => "brook_sin_f32",
        (MathFun::Cos, false) => "brook_cos_f32",
        (MathFun::Tan, false) => "brook_tan_f32",
        (MathFun::Asin, false) => "brook_asin_f32",
        (MathFun::Acos, false) => "brook_acos_f32",
        (MathFun::Atan, false) => "brook_atan_f32",
        (MathFun::Atan2, false) => "brook_atan2_f32",
        (MathFun::Exp, false) => "brook_exp_f32",
        (MathFun::Exp2, false) => "brook_exp2_f32",
        (MathFun::Log, false) => "brook_log_f32",
        (MathFun::Log2, false) => "brook_log2_f32",
        (MathFun::Pow, false) => "brook_pow_f32",
        (MathFun::Sin, true) => "brook_sin_f64",
        (MathFun::Cos, true) => "brook_cos_f64",
        (MathFun::Tan, true) => "brook_tan_f64",
        (MathFun::Asin, true) => "brook_asin_f64",
        (MathFun::Acos, true) => "brook_acos_f64",
        (MathFun::Atan, true) => "brook_atan_f64",
        (MathFun::Atan2, true) => "brook_atan2_f64",
        (MathFun::Exp, true) => "brook_exp_f64",
        (MathFun::Exp2, true) => "brook_exp2_f64",
        (MathFun::Log, true) => "brook_log_f64",
        (MathFun::Log2, true) => "brook_log2_f64",
        (MathFun::Pow, true) => "brook_pow_f64",
        _ => return None,
    };
    Some(name)
}

/// A helper's PTX text, and whether it reads the 2/pi table ([`libm::table_text`]).
pub struct HelperText {
    pub text: String,
    pub uses_table: bool,
}

/// The PTX text of helper `name`, if this backend has it.
pub fn helper_text(name: &str) -> Option<HelperText> {
    if name == FMOD_F64 {
        return Some(HelperText {
            text: FMOD_F64_TEXT.to_string(),
            uses_table: false,
        });
    }
    for math in MathFun::all() {
        for double in [false, true] {
            if math_helper(math, double) == Some(name) {
                let fun = Fun::of(math)?;
                return Some(HelperText {
                    text: libm::function_text(name, fun, double),
                    uses_table: fun.uses_table(),
                });
            }
        }
    }
    None
}

const FMOD_F64_TEXT: &str = r"
.func (.reg .f64 %res) brook_fmod_f64(.reg .f64 %x, .reg .f64 %y)
{
	.reg .pred %p<4>;
	.reg .b64 %ux, %uy, %i, %sx, %t, %ax2, %ay2;
	.reg .b32 %ex, %ey, %s;
	mov.b64 %ux, %x;
	mov.b64 %uy, %y;
	shr.u64 %t, %ux, 52;
	cvt.u32.u64 %ex, %t;
	and.b32 %ex, %ex, 2047;
	shr.u64 %t, %uy, 52;
	cvt.u32.u64 %ey, %t;
	and.b32 %ey, %ey, 2047;
	and.b64 %sx, %ux, 0x8000000000000000;
	shl.b64 %ay2, %uy, 1;
	setp.eq.u64 %p1, %ay2, 0;
	setp.nan.f64 %p2, %y, %y;
	or.pred %p1, %p1, %p2;
	setp.eq.u32 %p2, %ex, 2047;
	or.pred %p1, %p1, %p2;
	@!%p1 bra $FINITE;
	mul.rn.f64 %res, %x, %y;
	div.rn.f64 %res, %res, %res;
	ret;
$FINITE:
	shl.b64 %ax2, %ux, 1;
	setp.gt.u64 %p1, %ax2, %ay2;
	@%p1 bra $BIG;
	setp.eq.u64 %p2, %ax2, %ay2;
	@%p2 bra $ZERO;
	mov.f64 %res, %x;
	ret;
$BIG:
	setp.ne.u32 %p1, %ex, 0;
	@%p1 bra $XNORMAL;
	shl.b64 %i, %ux, 12;
$XSCAN:
	setp.lt.s64 %p2, %i, 0;
	@%p2 bra $XSCANNED;
	sub.s32 %ex, %ex, 1;
	shl.b64 %i, %i, 1;
	bra $XSCAN;
$XSCANNED:
	neg.s32 %s, %ex;
	add.s32 %s, %s, 1;
	shl.b64 %ux, %ux, %s;
	bra $YSTART;
$XNORMAL:
	and.b64 %ux, %ux, 4503599627370495;
	or.b64 %ux, %ux, 4503599627370496;
$YSTART:
	setp.ne.u32 %p1, %ey, 0;
	@%p1 bra $YNORMAL;
	shl.b64 %i, %uy, 12;
$YSCAN:
	setp.lt.s64 %p2, %i, 0;
	@%p2 bra $YSCANNED;
	sub.s32 %ey, %ey, 1;
	shl.b64 %i, %i, 1;
	bra $YSCAN;
$YSCANNED:
	neg.s32 %s, %ey;
	add.s32 %s, %s, 1;
	shl.b64 %uy, %uy, %s;
	bra $DIVIDE;
$YNORMAL:
	and.b64 %uy, %uy, 4503599627370495;
	or.b64 %uy, %uy, 4503599627370496;
$DIVIDE:
	setp.le.s32 %p1, %ex, %ey;
	@%p1 bra $LAST;
	sub.u64 %i, %ux, %uy;
	setp.lt.s64 %p2, %i, 0;
	@%p2 bra $SHIFT;
	setp.eq.u64 %p3, %i, 0;
	@%p3 bra $ZERO;
	mov.b64 %ux, %i;
$SHIFT:
	shl.b64 %ux, %ux, 1;
	sub.s32 %ex, %ex, 1;
	bra $DIVIDE;
$LAST:
	sub.u64 %i, %ux, %uy;
	setp.lt.s64 %p2, %i, 0;
	@%p2 bra $RENORM;
	setp.eq.u64 %p3, %i, 0;
	@%p3 bra $ZERO;
	mov.b64 %ux, %i;
$RENORM:
	shr.u64 %t, %ux, 52;
	setp.ne.u64 %p1, %t, 0;
	@%p1 bra $SCALE;
	shl.b64 %ux, %ux, 1;
	sub.s32 %ex, %ex, 1;
	bra $RENORM;
$SCALE:
	setp.gt.s32 %p1, %ex, 0;
	@!%p1 bra $SUBNORMAL;
	sub.u64 %ux, %ux, 4503599627370496;
	cvt.u64.u32 %t, %ex;
	shl.b64 %t, %t, 52;
	or.b64 %ux, %ux, %t;
	bra $SIGN;
$SUBNORMAL:
	neg.s32 %s, %ex;
	add.s32 %s, %s, 1;
	shr.u64 %ux, %ux, %s;
$SIGN:
	or.b64 %ux, %ux, %sx;
	mov.b64 %res, %ux;
	ret;
$ZERO:
	mul.rn.f64 %res, %x, 0d0000000000000000;
	ret;
}
";
