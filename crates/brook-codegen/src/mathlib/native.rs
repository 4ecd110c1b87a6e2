//! [`Arith`] evaluated on the host: each operation with the exact semantics PTX gives it.

use super::{consts::TWO_OVER_PI_WORDS, Arith, Cmp, Fun};

/// Evaluates the library's algorithms on the host (for tests and reference values).
pub struct Native;

impl Native {
    /// The `f64` function `fun` of `args`.
    pub fn eval(fun: Fun, args: &[f64]) -> f64 {
        fun.build(&mut Native, args)
    }

    /// The `f32` function `fun` of `args`: the `f64` result rounded to `f32`.
    pub fn eval_f32(fun: Fun, args: &[f32]) -> f32 {
        let wide: Vec<f64> = args.iter().map(|&x| f64::from(x)).collect();
        Native::eval(fun, &wide) as f32
    }
}

fn compare<T: PartialOrd>(op: Cmp, a: T, b: T) -> bool {
    match op {
        Cmp::Lt => a < b,
        Cmp::Le => a <= b,
        Cmp::Gt => a > b,
        Cmp::Ge => a >= b,
        Cmp::Eq => a == b,
    }
}

impl Arith for Native {
    type F = f64;
    type I = i64;
    type P = bool;

    fn num(&mut self, value: f64) -> f64 {
        value
    }
    fn int(&mut self, value: i64) -> i64 {
        value
    }
    fn add(&mut self, a: f64, b: f64) -> f64 {
        a + b
    }
    fn sub(&mut self, a: f64, b: f64) -> f64 {
        a - b
    }
    fn mul(&mut self, a: f64, b: f64) -> f64 {
        a * b
    }
    fn div(&mut self, a: f64, b: f64) -> f64 {
        a / b
    }
    fn fma(&mut self, a: f64, b: f64, c: f64) -> f64 {
        a.mul_add(b, c)
    }
    fn sqrt(&mut self, a: f64) -> f64 {
        a.sqrt()
    }
    fn round_to_f32(&mut self, a: f64) -> f64 {
        f64::from(a as f32)
    }
    fn neg(&mut self, a: f64) -> f64 {
        -a
    }
    fn abs(&mut self, a: f64) -> f64 {
        a.abs()
    }
    fn rint(&mut self, a: f64) -> f64 {
        a.round_ties_even()
    }
    fn cmp(&mut self, op: Cmp, a: f64, b: f64) -> bool {
        compare(op, a, b)
    }
    fn is_nan(&mut self, a: f64) -> bool {
        a.is_nan()
    }
    fn and(&mut self, a: bool, b: bool) -> bool {
        a && b
    }
    fn or(&mut self, a: bool, b: bool) -> bool {
        a || b
    }
    fn not(&mut self, a: bool) -> bool {
        !a
    }
    fn select(&mut self, p: bool, a: f64, b: f64) -> f64 {
        if p {
            a
        } else {
            b
        }
    }
    fn select_int(&mut self, p: bool, a: i64, b: i64) -> i64 {
        if p {
            a
        } else {
            b
        }
    }
    fn to_bits(&mut self, a: f64) -> i64 {
        a.to_bits() as i64
    }
    fn bits_to_float(&mut self, a: i64) -> f64 {
        f64::from_bits(a as u64)
    }
    fn iadd(&mut self, a: i64, b: i64) -> i64 {
        a.wrapping_add(b)
    }
    fn isub(&mut self, a: i64, b: i64) -> i64 {
        a.wrapping_sub(b)
    }
    fn imul(&mut self, a: i64, b: i64) -> i64 {
        a.wrapping_mul(b)
    }
    fn umulhi(&mut self, a: i64, b: i64) -> i64 {
        ((u128::from(a as u64) * u128::from(b as u64)) >> 64) as i64
    }
    fn urem(&mut self, a: i64, b: i64) -> i64 {
        ((a as u64) % (b as u64).max(1)) as i64
    }
    fn iand(&mut self, a: i64, b: i64) -> i64 {
        a & b
    }
    fn ior(&mut self, a: i64, b: i64) -> i64 {
        a | b
    }
    fn shl(&mut self, a: i64, by: i64) -> i64 {
        if (by as u64) >= 64 {
            0
        } else {
            ((a as u64) << by) as i64
        }
    }
    fn lshr(&mut self, a: i64, by: i64) -> i64 {
        if (by as u64) >= 64 {
            0
        } else {
            ((a as u64) >> by) as i64
        }
    }
    fn ashr(&mut self, a: i64, by: i64) -> i64 {
        a >> (by as u64).min(63)
    }
    fn clz(&mut self, a: i64) -> i64 {
        i64::from(a.leading_zeros())
    }
    fn icmp(&mut self, op: Cmp, a: i64, b: i64) -> bool {
        compare(op, a, b)
    }
    fn ult(&mut self, a: i64, b: i64) -> bool {
        (a as u64) < (b as u64)
    }
    fn int_to_float(&mut self, a: i64) -> f64 {
        a as f64
    }
    fn uint_to_float(&mut self, a: i64) -> f64 {
        a as u64 as f64
    }
    fn two_over_pi_word(&mut self, index: i64) -> i64 {
        TWO_OVER_PI_WORDS[index as usize] as i64
    }
}
