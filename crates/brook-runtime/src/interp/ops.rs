//! Component-wise operators, conversions and intrinsics on interpreter numbers, following the
//! arithmetic rules of `brook_ir::launch` (wrapping integers, no trap on division by zero,
//! IEEE floats without fused operations).

use super::value::{flush_f32, normalize, Num};
use brook_ir::launch::{int_div, int_rem, round_half_away, round_half_away_f32};
use brook_ir::{BinaryOp, MathFun, ScalarKind, UnaryOp, ValueType};

fn map(ty: ValueType, f: impl Fn(usize) -> u64) -> Num {
    let mut lanes = [0u64; 4];
    for (i, lane) in lanes.iter_mut().enumerate().take(usize::from(ty.width)) {
        *lane = f(i);
    }
    Num { ty, lanes }
}

/// A `float` result's bits (flushed when subnormal under flushing [`super::value::FloatRules`]).
fn f32_bits(x: f32) -> u64 {
    u64::from(flush_f32(x).to_bits())
}

/// The bits of a `float` result computed through `double` (division, remainder, square root,
/// the math library, a `double` rounded to `float`): a device that flushes `float`
/// subnormals reads them as zero on the way in, but the rounding back to `float` keeps a
/// subnormal result (NVIDIA's Vulkan driver does; `docs/SEMANTICS.md`).
fn f32_bits_through_double(x: f32) -> u64 {
    u64::from(x.to_bits())
}

pub fn unary(op: UnaryOp, a: &Num) -> Num {
    let kind = a.ty.kind;
    map(a.ty, |i| match (op, kind) {
        // A sign flip, which no device flushes.
        (UnaryOp::Neg, ScalarKind::F32) => a.lane(i) ^ 0x8000_0000,
        (UnaryOp::Neg, ScalarKind::F64) => (-a.f64(i)).to_bits(),
        (UnaryOp::Neg, k) => normalize(k, a.lane(i).wrapping_neg()),
        (UnaryOp::Not, _) => u64::from(a.lane(i) == 0),
        (UnaryOp::BitNot, k) => normalize(k, !a.lane(i)),
    })
}

pub fn binary(op: BinaryOp, a: &Num, b: &Num) -> Num {
    let kind = a.ty.kind;
    let ty = if op.is_comparison() {
        a.ty.with_kind(ScalarKind::Bool)
    } else {
        a.ty
    };
    map(ty, |i| match kind {
        ScalarKind::F32 => f32_binary(op, a.f32(i), b.f32(i)),
        ScalarKind::F64 => f64_binary(op, a.f64(i), b.f64(i)),
        k => int_binary(op, k, a.lane(i), b.lane(i)),
    })
}

fn f32_binary(op: BinaryOp, x: f32, y: f32) -> u64 {
    match op {
        BinaryOp::Add => f32_bits(x + y),
        BinaryOp::Sub => f32_bits(x - y),
        BinaryOp::Mul => f32_bits(x * y),
        BinaryOp::Div => f32_bits_through_double(x / y),
        BinaryOp::Rem => f32_bits_through_double(x % y),
        _ => compare(op, x.partial_cmp(&y)),
    }
}

fn f64_binary(op: BinaryOp, x: f64, y: f64) -> u64 {
    match op {
        BinaryOp::Add => (x + y).to_bits(),
        BinaryOp::Sub => (x - y).to_bits(),
        BinaryOp::Mul => (x * y).to_bits(),
        BinaryOp::Div => (x / y).to_bits(),
        BinaryOp::Rem => (x % y).to_bits(),
        _ => compare(op, x.partial_cmp(&y)),
    }
}

fn compare(op: BinaryOp, ord: Option<std::cmp::Ordering>) -> u64 {
    use std::cmp::Ordering::*;
    let result = match (op, ord) {
        (BinaryOp::Ne, None) => true,
        (_, None) => false,
        (BinaryOp::Eq, Some(o)) => o == Equal,
        (BinaryOp::Ne, Some(o)) => o != Equal,
        (BinaryOp::Lt, Some(o)) => o == Less,
        (BinaryOp::Le, Some(o)) => o != Greater,
        (BinaryOp::Gt, Some(o)) => o == Greater,
        (BinaryOp::Ge, Some(o)) => o != Less,
        _ => false,
    };
    u64::from(result)
}

fn int_binary(op: BinaryOp, kind: ScalarKind, x: u64, y: u64) -> u64 {
    let bits = kind.size() * 8;
    let signed = kind.is_signed();
    let n = |v: u64| normalize(kind, v);
    match op {
        BinaryOp::Add => n(x.wrapping_add(y)),
        BinaryOp::Sub => n(x.wrapping_sub(y)),
        BinaryOp::Mul => n(x.wrapping_mul(y)),
        BinaryOp::Div if signed => n(int_div(x as i64, y as i64, bits) as u64),
        BinaryOp::Div => x.checked_div(y).unwrap_or(0),
        BinaryOp::Rem if signed => n(int_rem(x as i64, y as i64, bits) as u64),
        BinaryOp::Rem => x.checked_rem(y).unwrap_or(0),
        BinaryOp::Shl => n(x << (y % u64::from(bits))),
        BinaryOp::Shr if signed => n(((x as i64) >> (y % u64::from(bits))) as u64),
        BinaryOp::Shr => x >> (y % u64::from(bits)),
        BinaryOp::BitAnd => x & y,
        BinaryOp::BitOr => x | y,
        BinaryOp::BitXor => n(x ^ y),
        BinaryOp::LogicAnd => u64::from(x != 0 && y != 0),
        BinaryOp::LogicOr => u64::from(x != 0 || y != 0),
        _ if signed => compare(op, Some((x as i64).cmp(&(y as i64)))),
        _ => compare(op, Some(x.cmp(&y))),
    }
}

/// Converts every lane to `to` (same width).
pub fn convert(a: &Num, to: ScalarKind) -> Num {
    let from = a.ty.kind;
    map(a.ty.with_kind(to), |i| convert_lane(a, i, from, to))
}

fn convert_lane(a: &Num, i: usize, from: ScalarKind, to: ScalarKind) -> u64 {
    if to == ScalarKind::Bool {
        return u64::from(match from {
            ScalarKind::F32 => a.f32(i) != 0.0,
            ScalarKind::F64 => a.f64(i) != 0.0,
            _ => a.lane(i) != 0,
        });
    }
    match from {
        ScalarKind::F32 => float_to(f64::from(a.f32(i)), Some(a.f32(i)), to),
        ScalarKind::F64 => float_to(a.f64(i), None, to),
        _ => {
            let unsigned = !from.is_signed();
            match to {
                ScalarKind::F32 if unsigned => f32_bits(a.lane(i) as f32),
                ScalarKind::F32 => f32_bits(a.int(i) as f32),
                ScalarKind::F64 if unsigned => (a.lane(i) as f64).to_bits(),
                ScalarKind::F64 => (a.int(i) as f64).to_bits(),
                k => normalize(k, a.lane(i)),
            }
        }
    }
}

/// A float to another kind: integers truncate toward zero and saturate, NaN gives 0.
fn float_to(x: f64, single: Option<f32>, to: ScalarKind) -> u64 {
    match to {
        ScalarKind::F32 => match single {
            Some(x) => f32_bits(x),
            None => f32_bits_through_double(x as f32),
        },
        ScalarKind::F64 => x.to_bits(),
        ScalarKind::I8 => x as i8 as i64 as u64,
        ScalarKind::U8 => x as u8 as u64,
        ScalarKind::I16 => x as i16 as i64 as u64,
        ScalarKind::U16 => x as u16 as u64,
        ScalarKind::I32 => x as i32 as i64 as u64,
        ScalarKind::U32 => x as u32 as u64,
        ScalarKind::I64 => x as i64 as u64,
        ScalarKind::U64 => x as u64,
        ScalarKind::Bool => u64::from(x != 0.0),
    }
}

/// A float operation in the precision of the operands' kind.
fn float_map(a: &Num, f32_op: impl Fn(f32) -> f32, f64_op: impl Fn(f64) -> f64) -> Num {
    map(a.ty, |i| match a.ty.kind {
        ScalarKind::F32 => f32_bits(f32_op(a.f32(i))),
        _ => f64_op(a.f64(i)).to_bits(),
    })
}

/// [`float_map`] for a rounding to an integer (`floor`, `ceil`): its operand is read as it is
/// (NVIDIA's Vulkan driver, which flushes `float` subnormals elsewhere, gave `ceil` of a
/// positive subnormal as 1); its result is an integer or a zero, never subnormal.
fn float_map_unflushed(a: &Num, f32_op: impl Fn(f32) -> f32, f64_op: impl Fn(f64) -> f64) -> Num {
    map(a.ty, |i| match a.ty.kind {
        ScalarKind::F32 => u64::from(f32_op(f32::from_bits(a.lanes[i] as u32)).to_bits()),
        _ => f64_op(a.f64(i)).to_bits(),
    })
}

/// [`float_map`] for a function every device computes through `double` (the math library,
/// square roots): see [`f32_bits_through_double`].
fn float_map_wide(a: &Num, f32_op: impl Fn(f32) -> f32, f64_op: impl Fn(f64) -> f64) -> Num {
    map(a.ty, |i| match a.ty.kind {
        ScalarKind::F32 => f32_bits_through_double(f32_op(a.f32(i))),
        _ => f64_op(a.f64(i)).to_bits(),
    })
}

/// [`float_map_wide`] of two operands.
fn float_map2_wide(
    a: &Num,
    b: &Num,
    f32_op: impl Fn(f32, f32) -> f32,
    f64_op: impl Fn(f64, f64) -> f64,
) -> Num {
    map(a.ty, |i| match a.ty.kind {
        ScalarKind::F32 => f32_bits_through_double(f32_op(a.f32(i), b.f32(i))),
        _ => f64_op(a.f64(i), b.f64(i)).to_bits(),
    })
}

/// `a * b + c` rounded once, lane by lane (a `float`'s through `double`).
fn fused_multiply_add(a: &Num, b: &Num, c: &Num) -> Num {
    map(a.ty, |i| match a.ty.kind {
        ScalarKind::F32 => f32_bits_through_double(a.f32(i).mul_add(b.f32(i), c.f32(i))),
        _ => a.f64(i).mul_add(b.f64(i), c.f64(i)).to_bits(),
    })
}

fn classify(a: &Num, f32_test: impl Fn(f32) -> bool, f64_test: impl Fn(f64) -> bool) -> Num {
    map(a.ty.with_kind(ScalarKind::Bool), |i| {
        u64::from(match a.ty.kind {
            ScalarKind::F32 => f32_test(a.f32(i)),
            _ => f64_test(a.f64(i)),
        })
    })
}

/// The sum of lane products, left to right, without fused operations.
fn dot(a: &Num, b: &Num) -> Num {
    let product = binary(BinaryOp::Mul, a, b);
    let scalar = ValueType::scalar(a.ty.kind);
    let mut sum = Num {
        ty: scalar,
        lanes: [product.lanes[0], 0, 0, 0],
    };
    for i in 1..a.width() {
        let next = Num {
            ty: scalar,
            lanes: [product.lanes[i], 0, 0, 0],
        };
        sum = binary(BinaryOp::Add, &sum, &next);
    }
    sum
}

fn length(a: &Num) -> Num {
    let d = dot(a, a);
    float_map_wide(&d, f32::sqrt, f64::sqrt)
}

fn splat(scalar: &Num, ty: ValueType) -> Num {
    map(ty, |_| scalar.lanes[0])
}

/// Float `max` (or `min`): a NaN operand gives the other operand (the second when both are
/// NaN); otherwise the larger (smaller) value, with `-0 < +0`.
fn float_min_max(a: f64, b: f64, max: bool) -> f64 {
    if a.is_nan() {
        return b;
    }
    if b.is_nan() {
        return a;
    }
    let a_wins = if a == b {
        a.is_sign_negative() != max
    } else {
        (a > b) == max
    };
    if a_wins {
        a
    } else {
        b
    }
}

/// `float` `max` (or `min`) of two lanes' bits, as a selection: the operands compared as
/// `float` operands (a subnormal is a zero where subnormals are flushed) and one of them, or
/// on a tie their bits and-ed (`max`: +0 wins) or or-ed (`min`: -0 wins), returned as it
/// is (a selection moves bits; nothing is flushed on the way out). A NaN gives the other.
fn f32_min_max(a: u64, b: u64, max: bool) -> u64 {
    let (x, y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
    if x.is_nan() {
        return b;
    }
    if y.is_nan() {
        return a;
    }
    let (fx, fy) = (flush_f32(x), flush_f32(y));
    match (fx > fy, fx < fy) {
        (true, _) => [b, a][usize::from(max)],
        (_, true) => [a, b][usize::from(max)],
        _ if max => a & b,
        _ => a | b,
    }
}

fn min_max(a: &Num, b: &Num, max: bool) -> Num {
    match a.ty.kind {
        ScalarKind::F32 => map(a.ty, |i| f32_min_max(a.lanes[i], b.lanes[i], max)),
        ScalarKind::F64 => map(a.ty, |i| float_min_max(a.f64(i), b.f64(i), max).to_bits()),
        _ => {
            let less = binary(BinaryOp::Lt, a, b);
            map(a.ty, |i| {
                let a_smaller = less.lanes[i] != 0;
                if a_smaller != max {
                    a.lanes[i]
                } else {
                    b.lanes[i]
                }
            })
        }
    }
}

/// -1, 0 or 1; zeros keep their sign and NaN stays NaN.
fn float_sign(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        x * 0.0
    }
}

fn sign(a: &Num) -> Num {
    match a.ty.kind {
        ScalarKind::F32 | ScalarKind::F64 => {
            float_map(a, |x| float_sign(f64::from(x)) as f32, float_sign)
        }
        k if k.is_signed() => map(a.ty, |i| normalize(k, a.int(i).signum() as u64)),
        _ => map(a.ty, |i| u64::from(a.lanes[i] != 0)),
    }
}

/// Applies an intrinsic to its (type-checked) arguments.
pub fn math(fun: MathFun, args: &[Num]) -> Num {
    let a = &args[0];
    match fun {
        MathFun::Abs => match a.ty.kind {
            ScalarKind::F32 | ScalarKind::F64 => float_map(a, f32::abs, f64::abs),
            k if k.is_signed() => map(a.ty, |i| normalize(k, a.int(i).wrapping_abs() as u64)),
            _ => *a,
        },
        MathFun::Acos => float_map_wide(a, f32::acos, f64::acos),
        MathFun::Asin => float_map_wide(a, f32::asin, f64::asin),
        MathFun::Atan => float_map_wide(a, f32::atan, f64::atan),
        MathFun::Atan2 => float_map2_wide(a, &args[1], f32::atan2, f64::atan2),
        MathFun::Ceil => float_map_unflushed(a, f32::ceil, f64::ceil),
        MathFun::Clamp => min_max(&min_max(a, &args[1], true), &args[2], false),
        MathFun::Cos => float_map_wide(a, f32::cos, f64::cos),
        MathFun::Cross => cross(a, &args[1]),
        MathFun::Distance => length(&binary(BinaryOp::Sub, a, &args[1])),
        MathFun::Dot => dot(a, &args[1]),
        MathFun::Exp => float_map_wide(a, f32::exp, f64::exp),
        MathFun::Exp2 => float_map_wide(a, f32::exp2, f64::exp2),
        MathFun::Floor => float_map_unflushed(a, f32::floor, f64::floor),
        MathFun::Fma => fused_multiply_add(a, &args[1], &args[2]),
        MathFun::Fmod => binary(BinaryOp::Rem, a, &args[1]),
        MathFun::Frac => {
            let floor = float_map_unflushed(a, f32::floor, f64::floor);
            binary(BinaryOp::Sub, a, &floor)
        }
        MathFun::IsFinite => classify(a, f32::is_finite, f64::is_finite),
        MathFun::IsInf => classify(a, f32::is_infinite, f64::is_infinite),
        MathFun::IsNan => classify(a, f32::is_nan, f64::is_nan),
        MathFun::Length => length(a),
        MathFun::Lerp => {
            let diff = binary(BinaryOp::Sub, &args[1], a);
            binary(BinaryOp::Add, a, &binary(BinaryOp::Mul, &diff, &args[2]))
        }
        MathFun::Log => float_map_wide(a, f32::ln, f64::ln),
        MathFun::Log2 => float_map_wide(a, f32::log2, f64::log2),
        MathFun::Max => min_max(a, &args[1], true),
        MathFun::Min => min_max(a, &args[1], false),
        MathFun::Normalize => {
            let len = splat(&length(a), a.ty);
            binary(BinaryOp::Div, a, &len)
        }
        MathFun::Pow => float_map2_wide(a, &args[1], f32::powf, f64::powf),
        MathFun::Round => float_map(a, round_half_away_f32, round_half_away),
        MathFun::Rsqrt => float_map_wide(a, |x| 1.0 / x.sqrt(), |x| 1.0 / x.sqrt()),
        MathFun::Sign => sign(a),
        MathFun::Sin => float_map_wide(a, f32::sin, f64::sin),
        MathFun::Sqrt => float_map_wide(a, f32::sqrt, f64::sqrt),
        MathFun::Tan => float_map_wide(a, f32::tan, f64::tan),
    }
}

fn cross(a: &Num, b: &Num) -> Num {
    let lane = |n: &Num, i: usize| Num {
        ty: ValueType::scalar(n.ty.kind),
        lanes: [n.lanes[i], 0, 0, 0],
    };
    let term = |i: usize, j: usize| {
        let left = binary(BinaryOp::Mul, &lane(a, i), &lane(b, j));
        let right = binary(BinaryOp::Mul, &lane(a, j), &lane(b, i));
        binary(BinaryOp::Sub, &left, &right).lanes[0]
    };
    Num {
        ty: a.ty,
        lanes: [term(1, 2), term(2, 0), term(0, 1), 0],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(kind: ScalarKind, v: i64) -> Num {
        Num {
            ty: ValueType::scalar(kind),
            lanes: [normalize(kind, v as u64), 0, 0, 0],
        }
    }

    fn float(x: f32) -> Num {
        Num {
            ty: ValueType::scalar(ScalarKind::F32),
            lanes: [u64::from(x.to_bits()), 0, 0, 0],
        }
    }

    /// The model of a device that flushes `float` subnormals (NVIDIA's Vulkan driver, as the
    /// H200 runs found it): arithmetic flushes operands and results; what goes through
    /// `double` keeps a subnormal result; selections (min/max), negation and floor/ceil see
    /// or keep the bits as they are.
    #[test]
    fn the_flushing_rules_follow_the_device() {
        let tiny = f32::from_bits(1); // 2^-149
        let min_normal = f32::MIN_POSITIVE;
        let half = float(0.5);
        let bits = |n: Num| n.lanes[0] as u32;
        let exact = binary(BinaryOp::Mul, &float(min_normal), &half);
        assert!(f32::from_bits(bits(exact)).is_subnormal());
        let _rules = super::super::value::FloatRules::enter(true);
        assert_eq!(bits(binary(BinaryOp::Mul, &float(min_normal), &half)), 0);
        assert_eq!(bits(binary(BinaryOp::Add, &float(tiny), &float(0.0))), 0);
        let quotient = binary(BinaryOp::Div, &float(min_normal), &float(2.0));
        assert!(f32::from_bits(bits(quotient)).is_subnormal());
        // min(0, tiny): the compare sees two zeros, the tie ors their bits: tiny.
        let m = math(MathFun::Min, &[float(0.0), float(tiny)]);
        assert_eq!(bits(m), 1);
        assert_eq!(bits(unary(UnaryOp::Neg, &float(tiny))), 0x8000_0001);
        assert_eq!(
            f32::from_bits(bits(math(MathFun::Ceil, &[float(tiny)]))),
            1.0
        );
        assert_eq!(
            bits(math(MathFun::Exp, &[float(-100.0)])),
            (-100.0f32).exp().to_bits()
        );
    }

    #[test]
    fn integers_wrap_and_divide_safely() {
        let r = binary(
            BinaryOp::Add,
            &int(ScalarKind::I8, 120),
            &int(ScalarKind::I8, 8),
        );
        assert_eq!(r.int(0), -128);
        let r = binary(
            BinaryOp::Div,
            &int(ScalarKind::I32, 7),
            &int(ScalarKind::I32, 0),
        );
        assert_eq!(r.int(0), 0);
        let r = binary(
            BinaryOp::Sub,
            &int(ScalarKind::U8, 0),
            &int(ScalarKind::U8, 1),
        );
        assert_eq!(r.lane(0), 255);
        let r = binary(
            BinaryOp::Shr,
            &int(ScalarKind::I32, -8),
            &int(ScalarKind::I32, 1),
        );
        assert_eq!(r.int(0), -4);
    }

    #[test]
    fn float_to_int_truncates_and_saturates() {
        let x = Num {
            ty: ValueType::scalar(ScalarKind::F32),
            lanes: [f32_bits(-2.7), 0, 0, 0],
        };
        assert_eq!(convert(&x, ScalarKind::I32).int(0), -2);
        assert_eq!(convert(&x, ScalarKind::U8).lane(0), 0);
        let nan = Num {
            ty: ValueType::scalar(ScalarKind::F32),
            lanes: [f32_bits(f32::NAN), 0, 0, 0],
        };
        assert_eq!(convert(&nan, ScalarKind::I32).int(0), 0);
    }
}
