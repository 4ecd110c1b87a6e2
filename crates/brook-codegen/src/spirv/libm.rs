//! The math library ([`crate::mathlib`]) written as SPIR-V: [`SpirvArith`] implements
//! [`Arith`] by appending one instruction per operation to the function being written.
//!
//! Vulkan makes `OpFAdd`, `OpFSub` and `OpFMul` correctly rounded; every float result carries
//! `NoContraction`. `Fma` (GLSL.std.450) is used where the device probe found it fused
//! (`probe::fma_fused`); elsewhere (Mesa's lavapipe) `mathlib::fma::emulated` computes the fused
//! result from rounded operations. Division and square root, which Vulkan does not promise to
//! round correctly for `double`, come from `mathlib::exact`. The tests compare every function
//! with the host's evaluation bit for bit on the devices they run on.

use super::shell::{glsl, Scalar, Shell};
use super::SpirvModule;
use crate::mathlib::{consts::TWO_OVER_PI_WORDS, Arith, Cmp, Fun};
use rspirv::dr::Operand;
use rspirv::spirv::{Capability, StorageClass, Word};
use std::collections::HashMap;

/// Writes the library's operations into `shell`'s open block.
pub struct SpirvArith<'s> {
    pub s: &'s mut Shell,
    glsl: Word,
    bool_ty: Word,
    floats: HashMap<u64, Word>,
    ints: HashMap<i64, Word>,
    table: Option<Word>,
    fused_fma: bool,
}

impl<'s> SpirvArith<'s> {
    /// Needs the `Float64` capability in `shell` once a `double` operation is written (its
    /// integer operations do not); `fused_fma`: the device's `Fma` is fused.
    pub fn new(s: &'s mut Shell, fused_fma: bool) -> SpirvArith<'s> {
        let glsl = s.glsl();
        let bool_ty = s.b.type_bool();
        SpirvArith {
            s,
            glsl,
            bool_ty,
            floats: HashMap::new(),
            ints: HashMap::new(),
            table: None,
            fused_fma,
        }
    }

    /// The `double` type (declared on first use).
    fn f64_ty(&mut self) -> Word {
        self.s.ty(Scalar::F64)
    }

    fn u64_ty(&self) -> Word {
        self.s.u64_ty()
    }

    fn ext(&mut self, ty: Word, inst: u32, args: &[Word]) -> Word {
        let operands = args.iter().map(|&a| Operand::IdRef(a));
        self.s
            .b
            .ext_inst(ty, None, self.glsl, inst, operands)
            .expect("in a block")
    }

    fn exact(&mut self, r: Word) -> Word {
        self.s.exact(r)
    }

    /// A shift amount of 64 or more, as PTX gives it: `big` when `by >= 64`.
    fn shift(
        &mut self,
        a: Word,
        by: Word,
        op: fn(&mut rspirv::dr::Builder, Word, Word, Word) -> Word,
        big: Word,
    ) -> Word {
        let t = self.u64_ty();
        let limit = self.int(64);
        let within = self
            .s
            .b
            .u_less_than(self.bool_ty, None, by, limit)
            .expect("in a block");
        let sixty_three = self.int(63);
        let safe_by = self
            .s
            .b
            .select(t, None, within, by, sixty_three)
            .expect("in a block");
        let shifted = op(&mut self.s.b, t, a, safe_by);
        self.s
            .b
            .select(t, None, within, shifted, big)
            .expect("in a block")
    }

    /// The 2/pi table: a private array with its words, read at a computed index.
    fn table(&mut self) -> Word {
        if let Some(t) = self.table {
            return t;
        }
        let t = self.u64_ty();
        let words: Vec<Word> = TWO_OVER_PI_WORDS
            .iter()
            .map(|&w| self.s.constant64(t, w))
            .collect();
        let len = self.s.const_u32(words.len() as u32);
        let array = self.s.b.type_array(t, len);
        let init = self.s.b.constant_composite(array, words);
        let ptr = self.s.b.type_pointer(None, StorageClass::Private, array);
        let var = self
            .s
            .global_variable(ptr, StorageClass::Private, Some(init));
        self.table = Some(var);
        var
    }
}

fn cmp_float(b: &mut rspirv::dr::Builder, op: Cmp, ty: Word, x: Word, y: Word) -> Word {
    match op {
        Cmp::Lt => b.f_ord_less_than(ty, None, x, y),
        Cmp::Le => b.f_ord_less_than_equal(ty, None, x, y),
        Cmp::Gt => b.f_ord_greater_than(ty, None, x, y),
        Cmp::Ge => b.f_ord_greater_than_equal(ty, None, x, y),
        Cmp::Eq => b.f_ord_equal(ty, None, x, y),
    }
    .expect("in a block")
}

fn cmp_int(b: &mut rspirv::dr::Builder, op: Cmp, ty: Word, x: Word, y: Word) -> Word {
    match op {
        Cmp::Lt => b.s_less_than(ty, None, x, y),
        Cmp::Le => b.s_less_than_equal(ty, None, x, y),
        Cmp::Gt => b.s_greater_than(ty, None, x, y),
        Cmp::Ge => b.s_greater_than_equal(ty, None, x, y),
        Cmp::Eq => b.i_equal(ty, None, x, y),
    }
    .expect("in a block")
}

macro_rules! float_op {
    ($self:ident, $method:ident, $($arg:expr),+) => {{
        let t = $self.f64_ty();
        let r = $self.s.b.$method(t, None, $($arg),+).expect("in a block");
        $self.exact(r)
    }};
}

macro_rules! int_op {
    ($self:ident, $method:ident, $($arg:expr),+) => {{
        let t = $self.u64_ty();
        $self.s.b.$method(t, None, $($arg),+).expect("in a block")
    }};
}

impl Arith for SpirvArith<'_> {
    type F = Word;
    type I = Word;
    type P = Word;

    fn num(&mut self, value: f64) -> Word {
        let bits = value.to_bits();
        if let Some(&w) = self.floats.get(&bits) {
            return w;
        }
        let t = self.f64_ty();
        let w = self.s.constant64(t, bits);
        self.floats.insert(bits, w);
        w
    }
    fn int(&mut self, value: i64) -> Word {
        if let Some(&w) = self.ints.get(&value) {
            return w;
        }
        let w = self.s.const_u64(value as u64);
        self.ints.insert(value, w);
        w
    }
    fn add(&mut self, a: Word, b: Word) -> Word {
        float_op!(self, f_add, a, b)
    }
    fn sub(&mut self, a: Word, b: Word) -> Word {
        float_op!(self, f_sub, a, b)
    }
    fn mul(&mut self, a: Word, b: Word) -> Word {
        float_op!(self, f_mul, a, b)
    }
    fn div(&mut self, a: Word, b: Word) -> Word {
        crate::mathlib::exact::div(self, a, b)
    }
    fn fma(&mut self, a: Word, b: Word, c: Word) -> Word {
        if !self.fused_fma {
            return crate::mathlib::fma::emulated(self, a, b, c);
        }
        let t = self.f64_ty();
        let r = self.ext(t, glsl::FMA, &[a, b, c]);
        self.exact(r)
    }
    fn sqrt(&mut self, a: Word) -> Word {
        crate::mathlib::exact::sqrt(self, a)
    }
    fn approx_div(&mut self, a: Word, b: Word) -> Word {
        float_op!(self, f_div, a, b)
    }
    fn approx_sqrt(&mut self, a: Word) -> Word {
        let t = self.f64_ty();
        let r = self.ext(t, glsl::SQRT, &[a]);
        self.exact(r)
    }
    fn round_to_f32(&mut self, a: Word) -> Word {
        let f32_ty = self.s.ty(Scalar::F32);
        let narrow = self.s.b.f_convert(f32_ty, None, a).expect("in a block");
        let t = self.f64_ty();
        let wide = self.s.b.f_convert(t, None, narrow).expect("in a block");
        self.exact(wide)
    }
    fn neg(&mut self, a: Word) -> Word {
        float_op!(self, f_negate, a)
    }
    fn abs(&mut self, a: Word) -> Word {
        let t = self.f64_ty();
        self.ext(t, glsl::FABS, &[a])
    }
    fn rint(&mut self, a: Word) -> Word {
        let t = self.f64_ty();
        self.ext(t, glsl::ROUND_EVEN, &[a])
    }
    fn cmp(&mut self, op: Cmp, a: Word, b: Word) -> Word {
        cmp_float(&mut self.s.b, op, self.bool_ty, a, b)
    }
    fn is_nan(&mut self, a: Word) -> Word {
        self.s.b.is_nan(self.bool_ty, None, a).expect("in a block")
    }
    fn and(&mut self, a: Word, b: Word) -> Word {
        let t = self.bool_ty;
        self.s.b.logical_and(t, None, a, b).expect("in a block")
    }
    fn or(&mut self, a: Word, b: Word) -> Word {
        let t = self.bool_ty;
        self.s.b.logical_or(t, None, a, b).expect("in a block")
    }
    fn not(&mut self, a: Word) -> Word {
        let t = self.bool_ty;
        self.s.b.logical_not(t, None, a).expect("in a block")
    }
    fn select(&mut self, p: Word, a: Word, b: Word) -> Word {
        let t = self.f64_ty();
        self.s.b.select(t, None, p, a, b).expect("in a block")
    }
    fn select_int(&mut self, p: Word, a: Word, b: Word) -> Word {
        int_op!(self, select, p, a, b)
    }
    fn to_bits(&mut self, a: Word) -> Word {
        int_op!(self, bitcast, a)
    }
    fn bits_to_float(&mut self, a: Word) -> Word {
        let t = self.f64_ty();
        self.s.b.bitcast(t, None, a).expect("in a block")
    }
    fn iadd(&mut self, a: Word, b: Word) -> Word {
        int_op!(self, i_add, a, b)
    }
    fn isub(&mut self, a: Word, b: Word) -> Word {
        int_op!(self, i_sub, a, b)
    }
    fn imul(&mut self, a: Word, b: Word) -> Word {
        int_op!(self, i_mul, a, b)
    }
    fn umulhi(&mut self, a: Word, b: Word) -> Word {
        let t = self.u64_ty();
        let pair = self.s.b.type_struct([t, t]);
        let both = self
            .s
            .b
            .u_mul_extended(pair, None, a, b)
            .expect("in a block");
        self.s
            .b
            .composite_extract(t, None, both, [1])
            .expect("in a block")
    }
    fn urem(&mut self, a: Word, b: Word) -> Word {
        int_op!(self, u_mod, a, b)
    }
    fn iand(&mut self, a: Word, b: Word) -> Word {
        int_op!(self, bitwise_and, a, b)
    }
    fn ior(&mut self, a: Word, b: Word) -> Word {
        int_op!(self, bitwise_or, a, b)
    }
    fn shl(&mut self, a: Word, by: Word) -> Word {
        let zero = self.int(0);
        self.shift(
            a,
            by,
            |b, t, x, y| b.shift_left_logical(t, None, x, y).expect("in a block"),
            zero,
        )
    }
    fn lshr(&mut self, a: Word, by: Word) -> Word {
        let zero = self.int(0);
        self.shift(
            a,
            by,
            |b, t, x, y| b.shift_right_logical(t, None, x, y).expect("in a block"),
            zero,
        )
    }
    fn ashr(&mut self, a: Word, by: Word) -> Word {
        let sixty_three = self.int(63);
        let sign = int_op!(self, shift_right_arithmetic, a, sixty_three);
        self.shift(
            a,
            by,
            |b, t, x, y| b.shift_right_arithmetic(t, None, x, y).expect("in a block"),
            sign,
        )
    }
    fn clz(&mut self, a: Word) -> Word {
        // GLSL.std.450's FindUMsb takes 32-bit integers: the two halves, -1 for zero.
        let u32_ty = self.s.u32_ty();
        let thirty_two = self.int(32);
        let high64 = int_op!(self, shift_right_logical, a, thirty_two);
        let high = self
            .s
            .b
            .u_convert(u32_ty, None, high64)
            .expect("in a block");
        let low = self.s.b.u_convert(u32_ty, None, a).expect("in a block");
        let msb_high = self.ext(u32_ty, glsl::FIND_U_MSB, &[high]);
        let msb_low = self.ext(u32_ty, glsl::FIND_U_MSB, &[low]);
        // As signed 64-bit values: -1 stays -1.
        let i64_of = |me: &mut Self, v: Word| {
            let t = me.u64_ty();
            me.s.b.s_convert(t, None, v).expect("in a block")
        };
        let (msb_high, msb_low) = (i64_of(self, msb_high), i64_of(self, msb_low));
        let minus_one = self.int(-1);
        let high_set = cmp_int(&mut self.s.b, Cmp::Eq, self.bool_ty, msb_high, minus_one);
        let high_set = self.not(high_set);
        let low_set = cmp_int(&mut self.s.b, Cmp::Eq, self.bool_ty, msb_low, minus_one);
        let low_set = self.not(low_set);
        let (c31, c63, c64) = (self.int(31), self.int(63), self.int(64));
        let from_high = self.isub(c31, msb_high);
        let from_low = self.isub(c63, msb_low);
        let low_or_none = self.select_int(low_set, from_low, c64);
        self.select_int(high_set, from_high, low_or_none)
    }
    fn icmp(&mut self, op: Cmp, a: Word, b: Word) -> Word {
        cmp_int(&mut self.s.b, op, self.bool_ty, a, b)
    }
    fn ult(&mut self, a: Word, b: Word) -> Word {
        let t = self.bool_ty;
        self.s.b.u_less_than(t, None, a, b).expect("in a block")
    }
    fn int_to_float(&mut self, a: Word) -> Word {
        let t = self.f64_ty();
        self.s.b.convert_s_to_f(t, None, a).expect("in a block")
    }
    fn uint_to_float(&mut self, a: Word) -> Word {
        let t = self.f64_ty();
        self.s.b.convert_u_to_f(t, None, a).expect("in a block")
    }
    fn two_over_pi_word(&mut self, index: Word) -> Word {
        let table = self.table();
        let t = self.u64_ty();
        let ptr_ty = self.s.b.type_pointer(None, StorageClass::Private, t);
        let at = self
            .s
            .b
            .access_chain(ptr_ty, None, table, [index])
            .expect("in a block");
        self.s.b.load(t, None, at, None, []).expect("in a block")
    }
}

/// A module that evaluates `fun` in `double` on `count` argument tuples: invocation `i`
/// (one per workgroup) reads `fun.arity()` doubles at `src + 8 * arity * i` and writes the
/// result at `dst + 8 * i`. Push constants: `src`, `dst`. `fused_fma`: the device's `Fma` is
/// fused (else it is emulated).
pub fn eval_module(fun: Fun, fused_fma: bool) -> SpirvModule {
    let mut s = Shell::new(2, [1, 1, 1], &[Capability::Float64]);
    let src = s.push_word(0);
    let dst = s.push_word(1);
    let i = s.workgroup_x();
    let arity = fun.arity() as u64;
    let args: Vec<Word> = (0..arity)
        .map(|k| {
            let stride = s.const_u64(arity);
            let first = s.b.i_mul(s.u64_ty(), None, i, stride).expect("in a block");
            let offset = s.const_u64(k);
            let index =
                s.b.i_add(s.u64_ty(), None, first, offset)
                    .expect("in a block");
            let addr = s.address(src, index, 8);
            s.load(Scalar::F64, addr)
        })
        .collect();
    let result = {
        let mut a = SpirvArith::new(&mut s, fused_fma);
        fun.build(&mut a, &args)
    };
    let addr = s.address(dst, i, 8);
    s.store(Scalar::F64, addr, result);
    s.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_function_validates() {
        for fun in Fun::ALL {
            for fused in [false, true] {
                crate::spirv::validate::check(&eval_module(fun, fused), fun.name());
            }
        }
    }
}
