//! Brook's scalar operations in SPIR-V, following `brook_ir::launch`'s arithmetic rules as the
//! interpreter and the PTX dialect do: integers wrap, integer division and remainder by zero
//! give 0 (never undefined behaviour: SPIR-V leaves those, shifts past the width and
//! out-of-range float-to-integer conversions undefined, so each is guarded), shift counts
//! are taken modulo the width, float operations are single correctly rounded operations with
//! `NoContraction`, and float-to-integer conversions truncate and saturate with NaN giving 0.
//!
//! Values live in containers: `bool` in `OpTypeBool`; `char`, `short` and their unsigned
//! kinds in 32-bit integers, sign- or zero-extended from their width ([`Shell::normalize`]
//! after every operation that can leave the range), as in PTX's registers; the others in
//! their own types. Float division is `mathlib::exact::div` (Vulkan's `OpFDiv` may be off by
//! 2.5 ulps); a `float` quotient is the `double` quotient of the widened operands rounded
//! once more, which is the correctly rounded `float` quotient (53 >= 2 * 24 + 2). Float
//! remainders are exact and loop-free for `float` (`mathlib::float32_int::rem_bits`), a
//! long division for `double` ([`Shell::fmod_f64`]).

use super::libm::SpirvArith;
use super::shell::Shell;
use brook_ir::{BinaryOp, ScalarKind, UnaryOp};
use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{Op, Word};

macro_rules! op {
    ($s:expr, $method:ident, $ty:expr, $($arg:expr),+) => {
        $s.b.$method($ty, None, $($arg),+).expect("in a block")
    };
}

impl Shell {
    /// The container type of a kind's values.
    pub fn container(&mut self, kind: ScalarKind) -> Word {
        match kind {
            ScalarKind::Bool => self.b.type_bool(),
            ScalarKind::F32 => self.b.type_float(32),
            ScalarKind::F64 => self.b.type_float(64),
            ScalarKind::I64 | ScalarKind::U64 => self.u64_ty(),
            _ => self.u32_ty(),
        }
    }

    /// The constant of `kind` whose bits are `bits` (as `brook_ir::Literal` holds them).
    pub fn literal(&mut self, kind: ScalarKind, bits: u64) -> Word {
        let ty = self.container(kind);
        match kind {
            ScalarKind::Bool if bits != 0 => self.b.constant_true(ty),
            ScalarKind::Bool => self.b.constant_false(ty),
            ScalarKind::F32 | ScalarKind::F64 if self.literal_zero.is_some() => {
                self.opaque_float(kind, bits)
            }
            ScalarKind::F64 | ScalarKind::I64 | ScalarKind::U64 => self.constant64(ty, bits),
            ScalarKind::F32 => self.constant32(ty, bits as u32),
            k => {
                let width = 8 * k.size();
                let raw = bits & ((1u64 << width) - 1);
                let value = if k.is_signed() && raw >> (width - 1) == 1 {
                    (raw | !((1u64 << width) - 1)) as u32
                } else {
                    raw as u32
                };
                self.constant32(ty, value)
            }
        }
    }

    /// A float literal the driver's compiler cannot see through: its bits xor-ed with a zero
    /// it cannot prove ([`Shell::literal_zero`]). Mesa's lavapipe folds `x * 0.0` to `+0.0`
    /// (and NaN times zero to zero) even when the module asks to keep signed zeros and NaNs.
    /// Each literal is computed once a function, in its first block right after the zero
    /// (NVIDIA's Vulkan compiler took seconds more per thousand copies in a large kernel).
    fn opaque_float(&mut self, kind: ScalarKind, bits: u64) -> Word {
        if let Some(&value) = self.hoisted_literals.get(&(kind, bits)) {
            return value;
        }
        let (zero32, zero64) = self.literal_zero.expect("set by the driver");
        let ty = self.container(kind);
        let (int_ty, c, zero) = if kind == ScalarKind::F32 {
            let t = self.u32_ty();
            (t, self.constant32(t, bits as u32), zero32)
        } else {
            let t = self.u64_ty();
            (t, self.constant64(t, bits), zero64)
        };
        let (mixed, value) = (self.b.id(), self.b.id());
        let code = [
            Instruction::new(
                Op::BitwiseXor,
                Some(int_ty),
                Some(mixed),
                vec![Operand::IdRef(c), Operand::IdRef(zero)],
            ),
            Instruction::new(
                Op::Bitcast,
                Some(ty),
                Some(value),
                vec![Operand::IdRef(mixed)],
            ),
        ];
        if !self.insert_after_in_first_block(&[zero32, zero64], code) {
            let mixed = op!(self, bitwise_xor, int_ty, c, zero);
            return op!(self, bitcast, ty, mixed);
        }
        self.hoisted_literals.insert((kind, bits), value);
        value
    }

    /// A narrow integer held in 32 bits brought back to its kind's range.
    pub fn normalize(&mut self, kind: ScalarKind, v: Word) -> Word {
        let t = self.u32_ty();
        let width = 8 * kind.size();
        match kind {
            ScalarKind::I8 | ScalarKind::I16 => {
                let shift = self.const_u32(32 - width);
                // The shift mixed with the opaque zero: NVIDIA's Vulkan compiler (driver 580)
                // dropped this sign extension after a `char` negation or `abs` that wrapped
                // (`-(-128)` gave 128 into a `min`: `fuzz_vulkan_char_negate_min`).
                let shift = match self.opaque_zero {
                    Some((zero32, _)) => op!(self, bitwise_xor, t, shift, zero32),
                    None => shift,
                };
                let up = op!(self, shift_left_logical, t, v, shift);
                op!(self, shift_right_arithmetic, t, up, shift)
            }
            ScalarKind::U8 | ScalarKind::U16 => {
                let mask = self.const_u32((1 << width) - 1);
                op!(self, bitwise_and, t, v, mask)
            }
            _ => v,
        }
    }

    /// `v != 0` as a bool.
    pub fn nonzero(&mut self, kind: ScalarKind, v: Word) -> Word {
        let bool_ty = self.b.type_bool();
        match kind {
            ScalarKind::Bool => v,
            k if k.is_float() => {
                let zero = self.literal(k, 0);
                op!(self, f_unord_not_equal, bool_ty, v, zero)
            }
            k => {
                let zero = self.literal(k, 0);
                op!(self, i_not_equal, bool_ty, v, zero)
            }
        }
    }

    pub fn unary(&mut self, op: UnaryOp, kind: ScalarKind, v: Word) -> Word {
        let ty = self.container(kind);
        match (op, kind) {
            (UnaryOp::Neg, ScalarKind::Bool) => v,
            (UnaryOp::Neg, ScalarKind::F32) => {
                // The sign bit flipped as an integer: NVIDIA's Vulkan compiler flushed a
                // subnormal `-x` but not `-(-x)` (it cancelled the pair); a flip is the same
                // everywhere and is what IEEE's negate is. The mask is mixed with the opaque
                // zero: with a plain constant the compiler saw the flip as its own negation
                // and flushed again (driver 580).
                let u32_ty = self.u32_ty();
                let bits = op!(self, bitcast, u32_ty, v);
                let sign = self.const_u32(0x8000_0000);
                let sign = match self.opaque_zero {
                    Some((zero32, _)) => op!(self, bitwise_xor, u32_ty, sign, zero32),
                    None => sign,
                };
                let flipped = op!(self, bitwise_xor, u32_ty, bits, sign);
                op!(self, bitcast, ty, flipped)
            }
            (UnaryOp::Neg, ScalarKind::F64) => {
                // The sign bit flipped too: lavapipe's compiler took minutes over a
                // reduction multiplying by `-(a * a)` with `OpFNegate` (fuzz seed 56001
                // kernel 5572), and seconds with the flip.
                let u64_ty = self.u64_ty();
                let bits = op!(self, bitcast, u64_ty, v);
                let sign = self.const_u64(1 << 63);
                let sign = match self.opaque_zero {
                    Some((_, zero64)) => op!(self, bitwise_xor, u64_ty, sign, zero64),
                    None => sign,
                };
                let flipped = op!(self, bitwise_xor, u64_ty, bits, sign);
                op!(self, bitcast, ty, flipped)
            }
            (UnaryOp::Neg, k) if k.is_float() => {
                let r = op!(self, f_negate, ty, v);
                self.exact(r)
            }
            (UnaryOp::Neg, k) => {
                let r = op!(self, s_negate, ty, v);
                self.normalize(k, r)
            }
            (UnaryOp::Not, k) => {
                let nz = self.nonzero(k, v);
                let bool_ty = self.b.type_bool();
                op!(self, logical_not, bool_ty, nz)
            }
            (UnaryOp::BitNot, ScalarKind::Bool) => self.literal(ScalarKind::Bool, 1),
            (UnaryOp::BitNot, k) => {
                let r = op!(self, not, ty, v);
                self.normalize(k, r)
            }
        }
    }

    /// `a op b` (`None` for an operator the IR does not allow on the kind).
    pub fn binary(&mut self, op: BinaryOp, kind: ScalarKind, a: Word, b: Word) -> Option<Word> {
        if op.is_comparison() {
            return Some(self.compare(op, kind, a, b));
        }
        if kind == ScalarKind::Bool || op.is_logic() {
            let (x, y) = (self.nonzero(kind, a), self.nonzero(kind, b));
            return Some(self.bool_binary(op, x, y));
        }
        if kind.is_float() {
            return self.float_binary(op, kind, a, b);
        }
        Some(self.int_binary(op, kind, a, b))
    }

    /// Logic directly; other operators on 0 and 1 as `uint`s, the result's truth.
    fn bool_binary(&mut self, op: BinaryOp, a: Word, b: Word) -> Word {
        let t = self.b.type_bool();
        match op {
            BinaryOp::BitAnd | BinaryOp::LogicAnd => op!(self, logical_and, t, a, b),
            BinaryOp::BitOr | BinaryOp::LogicOr => op!(self, logical_or, t, a, b),
            BinaryOp::BitXor => op!(self, logical_not_equal, t, a, b),
            _ => {
                let (x, y) = (self.bool_to_u32(a), self.bool_to_u32(b));
                let v = self.int_binary(op, ScalarKind::U32, x, y);
                self.nonzero(ScalarKind::U32, v)
            }
        }
    }

    fn compare(&mut self, op: BinaryOp, kind: ScalarKind, a: Word, b: Word) -> Word {
        let t = self.b.type_bool();
        if kind == ScalarKind::Bool {
            return match op {
                BinaryOp::Eq => op!(self, logical_equal, t, a, b),
                BinaryOp::Ne => op!(self, logical_not_equal, t, a, b),
                _ => {
                    // false < true: compare as 0 and 1.
                    let (x, y) = (self.bool_to_u32(a), self.bool_to_u32(b));
                    self.compare(op, ScalarKind::U32, x, y)
                }
            };
        }
        if kind.is_float() {
            return match op {
                BinaryOp::Eq => op!(self, f_ord_equal, t, a, b),
                BinaryOp::Ne => op!(self, f_unord_not_equal, t, a, b),
                BinaryOp::Lt => op!(self, f_ord_less_than, t, a, b),
                BinaryOp::Le => op!(self, f_ord_less_than_equal, t, a, b),
                BinaryOp::Gt => op!(self, f_ord_greater_than, t, a, b),
                _ => op!(self, f_ord_greater_than_equal, t, a, b),
            };
        }
        let signed = kind.is_signed();
        match (op, signed) {
            (BinaryOp::Eq, _) => op!(self, i_equal, t, a, b),
            (BinaryOp::Ne, _) => op!(self, i_not_equal, t, a, b),
            (BinaryOp::Lt, true) => op!(self, s_less_than, t, a, b),
            (BinaryOp::Le, true) => op!(self, s_less_than_equal, t, a, b),
            (BinaryOp::Gt, true) => op!(self, s_greater_than, t, a, b),
            (_, true) => op!(self, s_greater_than_equal, t, a, b),
            (BinaryOp::Lt, false) => op!(self, u_less_than, t, a, b),
            (BinaryOp::Le, false) => op!(self, u_less_than_equal, t, a, b),
            (BinaryOp::Gt, false) => op!(self, u_greater_than, t, a, b),
            (_, false) => op!(self, u_greater_than_equal, t, a, b),
        }
    }

    /// 0 or 1 as a 32-bit integer.
    pub fn bool_to_u32(&mut self, p: Word) -> Word {
        let t = self.u32_ty();
        let (one, zero) = (self.const_u32(1), self.const_u32(0));
        op!(self, select, t, p, one, zero)
    }

    fn float_binary(&mut self, op: BinaryOp, kind: ScalarKind, a: Word, b: Word) -> Option<Word> {
        let t = self.container(kind);
        let r = match op {
            BinaryOp::Add => op!(self, f_add, t, a, b),
            BinaryOp::Sub => op!(self, f_sub, t, a, b),
            BinaryOp::Mul => op!(self, f_mul, t, a, b),
            BinaryOp::Div => return Some(self.float_div(kind, a, b)),
            BinaryOp::Rem => return Some(self.float_rem(kind, a, b)),
            _ => return None,
        };
        Some(self.exact(r))
    }

    /// Correctly rounded division: a `float`'s from the device's double division corrected
    /// ([`crate::mathlib::float32::div_f32`]) where the device keeps `float` subnormals, else
    /// (and a `double`'s) the library's ([`crate::mathlib::exact::div`]): on NVIDIA's driver,
    /// which flushes them, the corrected quotients in the subnormal range came out unflushed
    /// where the library's are flushed, as the interpreter's model of such a device wants
    /// (fuzz seed 52400, kernels 574, 2741, 2877, 4871).
    fn float_div(&mut self, kind: ScalarKind, a: Word, b: Word) -> Word {
        let fused = self.fused_fma;
        if kind == ScalarKind::F32 && !self.float64 {
            return self.float_from_bits(&[a, b], |arith, bits, flush| {
                crate::mathlib::float32_int::div_bits(arith, bits[0], bits[1], flush)
            });
        }
        if kind == ScalarKind::F64 {
            let mut arith = SpirvArith::new(self, fused);
            return crate::mathlib::exact::div(&mut arith, a, b);
        }
        let (x, y) = (self.widen(a), self.widen(b));
        let corrected = !self.flushes_f32;
        let q = {
            let mut arith = SpirvArith::new(self, fused);
            match corrected {
                true => crate::mathlib::float32::div_f32(&mut arith, x, y),
                false => crate::mathlib::exact::div(&mut arith, x, y),
            }
        };
        let f32_ty = self.b.type_float(32);
        op!(self, f_convert, f32_ty, q)
    }

    /// A `float` operation computed on its operands' bits with 64-bit integers (for a device
    /// without `double`): `op` gets them zero-extended, and whether `float` subnormals
    /// flush, and gives the result's bits.
    pub fn float_from_bits(
        &mut self,
        operands: &[Word],
        op: impl FnOnce(&mut SpirvArith<'_>, &[Word], bool) -> Word,
    ) -> Word {
        let (u32_ty, u64_ty) = (self.u32_ty(), self.u64_ty());
        let bits: Vec<Word> = operands
            .iter()
            .map(|&x| {
                let narrow = op!(self, bitcast, u32_ty, x);
                op!(self, u_convert, u64_ty, narrow)
            })
            .collect();
        let (fused, flush) = (self.fused_fma, self.flushes_f32);
        let result = {
            let mut arith = SpirvArith::new(self, fused);
            op(&mut arith, &bits, flush)
        };
        let narrow = op!(self, u_convert, u32_ty, result);
        let f32_ty = self.b.type_float(32);
        op!(self, bitcast, f32_ty, narrow)
    }

    /// The exact remainder: a `float`'s from integer operations without a loop
    /// ([`crate::mathlib::float32_int::rem_bits`]: a loop in a reduction's combine, written
    /// into every level of its entries, took lavapipe's JIT minutes, and NVIDIA's compiler
    /// too), a `double`'s by long division ([`Shell::fmod_f64`]).
    fn float_rem(&mut self, kind: ScalarKind, a: Word, b: Word) -> Word {
        if kind == ScalarKind::F64 {
            return self.fmod_f64(a, b);
        }
        self.float_from_bits(&[a, b], |arith, bits, flush| {
            crate::mathlib::float32_int::rem_bits(arith, bits[0], bits[1], flush)
        })
    }

    fn int_binary(&mut self, op: BinaryOp, kind: ScalarKind, a: Word, b: Word) -> Word {
        let t = self.container(kind);
        let signed = kind.is_signed();
        let r = match op {
            BinaryOp::Add => op!(self, i_add, t, a, b),
            BinaryOp::Sub => op!(self, i_sub, t, a, b),
            BinaryOp::Mul => op!(self, i_mul, t, a, b),
            BinaryOp::Div | BinaryOp::Rem => return self.int_divide(op, kind, a, b),
            BinaryOp::Shl | BinaryOp::Shr => {
                // The count modulo the kind's width (a power of two).
                let mask = self.literal(kind_of_container(kind), u64::from(8 * kind.size() - 1));
                let by = op!(self, bitwise_and, t, b, mask);
                match (op, signed) {
                    (BinaryOp::Shl, _) => op!(self, shift_left_logical, t, a, by),
                    (_, true) => op!(self, shift_right_arithmetic, t, a, by),
                    (_, false) => op!(self, shift_right_logical, t, a, by),
                }
            }
            BinaryOp::BitAnd => op!(self, bitwise_and, t, a, b),
            BinaryOp::BitOr => op!(self, bitwise_or, t, a, b),
            _ => op!(self, bitwise_xor, t, a, b),
        };
        self.normalize(kind, r)
    }

    /// Division and remainder without undefined cases: a zero divisor gives 0, and the
    /// signed `MIN / -1` (whose quotient wraps to `MIN`, remainder 0) divides by 1 instead.
    fn int_divide(&mut self, op: BinaryOp, kind: ScalarKind, a: Word, b: Word) -> Word {
        let t = self.container(kind);
        let bool_ty = self.b.type_bool();
        let c = kind_of_container(kind);
        let zero = self.literal(c, 0);
        let one = self.literal(c, 1);
        let by_zero = op!(self, i_equal, bool_ty, b, zero);
        let mut unsafe_divisor = by_zero;
        if kind.is_signed() {
            // Containers of narrow kinds never hold their type's MIN / -1 overflow in 32 bits.
            let min = match kind {
                ScalarKind::I64 => self.literal(c, 1 << 63),
                _ => self.literal(c, 1 << 31),
            };
            let minus_one = self.literal(c, u64::MAX);
            let is_min = op!(self, i_equal, bool_ty, a, min);
            let is_minus_one = op!(self, i_equal, bool_ty, b, minus_one);
            let both = op!(self, logical_and, bool_ty, is_min, is_minus_one);
            unsafe_divisor = op!(self, logical_or, bool_ty, by_zero, both);
        }
        let divisor = op!(self, select, t, unsafe_divisor, one, b);
        let r = if kind.is_signed() {
            // The signed remainder is `a - (a / b) b`, not `OpSRem`: NVIDIA's Vulkan driver
            // (580.159) narrows `OpSRem` of a `char` loaded and sign-extended to an 8-bit
            // *unsigned* remainder (`-1 % 2` gave 1).
            let q = op!(self, s_div, t, a, divisor);
            match op {
                BinaryOp::Div => q,
                _ => {
                    let back = op!(self, i_mul, t, q, divisor);
                    op!(self, i_sub, t, a, back)
                }
            }
        } else {
            match op {
                BinaryOp::Div => op!(self, u_div, t, a, divisor),
                _ => op!(self, u_mod, t, a, divisor),
            }
        };
        // MIN / 1 is MIN, as the wrapped quotient; MIN % 1 is 0, as the remainder.
        let r = op!(self, select, t, by_zero, zero, r);
        self.normalize(kind, r)
    }

    /// `c ? a : b`.
    pub fn select(&mut self, kind: ScalarKind, c: Word, a: Word, b: Word) -> Word {
        let t = self.container(kind);
        op!(self, select, t, c, a, b)
    }

    /// `v` converted from `from` to `to`, as `brook_ir::launch` converts.
    pub fn convert(&mut self, from: ScalarKind, to: ScalarKind, v: Word) -> Word {
        if from == to {
            return v;
        }
        if to == ScalarKind::Bool {
            return self.nonzero(from, v);
        }
        let t = self.container(to);
        if from == ScalarKind::Bool {
            let one = self.literal(to, one_bits(to));
            let zero = self.literal(to, 0);
            return op!(self, select, t, v, one, zero);
        }
        match (from.is_float(), to.is_float()) {
            (true, true) if from == ScalarKind::F32 => self.widen(v),
            (true, true) => op!(self, f_convert, t, v),
            (false, true) => {
                // The integer mixed with the opaque zero: converted from a constant, the
                // float was a literal lavapipe's LLVM folded `x * 0.0` with, to +0 for a
                // negative `x` (`fuzz_vulkan_convert_zero_sign`), as it did float literals.
                let v = self.hidden_int(from, v);
                if from.is_signed() {
                    op!(self, convert_s_to_f, t, v)
                } else {
                    op!(self, convert_u_to_f, t, v)
                }
            }
            (true, false) => self.float_to_int(from, to, v),
            (false, false) => self.int_to_int(from, to, v),
        }
    }

    /// An integer of `kind` xor-ed with the module's opaque zero, where it has one: the same
    /// value, which the driver's compiler cannot take for a constant.
    fn hidden_int(&mut self, kind: ScalarKind, v: Word) -> Word {
        let Some((zero32, zero64)) = self.opaque_zero else {
            return v;
        };
        let t = self.container(kind);
        let zero = if kind.size() == 8 { zero64 } else { zero32 };
        op!(self, bitwise_xor, t, v, zero)
    }

    fn int_to_int(&mut self, from: ScalarKind, to: ScalarKind, v: Word) -> Word {
        let (wide_from, wide_to) = (from.size() == 8, to.size() == 8);
        let t = self.container(to);
        let v = match (wide_from, wide_to) {
            (true, false) => op!(self, u_convert, t, v),
            (false, true) if from.is_signed() => {
                // Sign extension by shifts, not `OpSConvert`: lavapipe's compiled
                // `OpSConvert` then `OpSLessThan` took a negative `int` index for a large one.
                let wide = op!(self, u_convert, t, v);
                let by = self.literal(ScalarKind::U64, 32);
                let up = op!(self, shift_left_logical, t, wide, by);
                op!(self, shift_right_arithmetic, t, up, by)
            }
            (false, true) => op!(self, u_convert, t, v),
            _ => v,
        };
        self.normalize(to, v)
    }

    /// Truncation toward zero, saturating at the kind's range; NaN gives 0.
    fn float_to_int(&mut self, from: ScalarKind, to: ScalarKind, v: Word) -> Word {
        let (lo, hi) = int_range(to);
        let bool_ty = self.b.type_bool();
        let ft = self.container(from);
        let float_of = |s: &mut Shell, x: f64| {
            if from == ScalarKind::F32 {
                s.constant32(ft, (x as f32).to_bits())
            } else {
                s.constant64(ft, x.to_bits())
            }
        };
        // In range: lo <= v < hi + 1 (both bounds exact powers of two or their negatives).
        let low = float_of(self, lo);
        let high = float_of(self, hi + 1.0);
        let below = op!(self, f_ord_less_than, bool_ty, v, low);
        let above = op!(self, f_ord_greater_than_equal, bool_ty, v, high);
        let nan = op!(self, is_nan, bool_ty, v);
        let zero = float_of(self, 0.0);
        let safe = op!(self, select, ft, below, zero, v);
        let safe = op!(self, select, ft, above, zero, safe);
        let safe = op!(self, select, ft, nan, zero, safe);
        let t = self.container(to);
        let wide = to.size() == 8;
        let converted = match (to.is_signed(), wide) {
            (true, true) => op!(self, convert_f_to_s, t, safe),
            (false, true) => op!(self, convert_f_to_u, t, safe),
            (true, false) => {
                let i32_ty = self.b.type_int(32, 1);
                let s = op!(self, convert_f_to_s, i32_ty, safe);
                op!(self, bitcast, t, s)
            }
            (false, false) => op!(self, convert_f_to_u, t, safe),
        };
        let min = self.literal(to, lo as i64 as u64);
        let max = self.literal(
            to,
            if to.is_signed() {
                hi as i64 as u64
            } else {
                hi as u64
            },
        );
        let r = op!(self, select, t, below, min, converted);
        let r = op!(self, select, t, above, max, r);
        let zero_i = self.literal(to, 0);
        op!(self, select, t, nan, zero_i, r)
    }
}

impl Shell {
    /// A scalar of `kind` at `addr` (aligned to its size) in its container: narrow integers
    /// extended from their width, a `bool` (one byte) as its truth.
    pub fn load_kind(&mut self, kind: ScalarKind, addr: Word) -> Word {
        let stored = self.stored_type(kind);
        let raw = self.load_typed(stored, kind.size(), addr);
        let t = self.container(kind);
        match kind {
            ScalarKind::Bool => {
                let zero = self.constant32(stored, 0);
                let bool_ty = self.b.type_bool();
                op!(self, i_not_equal, bool_ty, raw, zero)
            }
            ScalarKind::I8 | ScalarKind::I16 => op!(self, s_convert, t, raw),
            ScalarKind::U8 | ScalarKind::U16 => op!(self, u_convert, t, raw),
            _ => raw,
        }
    }

    /// Stores `value` (a container of `kind`) at `addr` in `kind`'s width.
    pub fn store_kind(&mut self, kind: ScalarKind, addr: Word, value: Word) {
        let stored = self.stored_type(kind);
        let v = match kind {
            ScalarKind::Bool => {
                let one = self.constant32(stored, 1);
                let zero = self.constant32(stored, 0);
                op!(self, select, stored, value, one, zero)
            }
            ScalarKind::I8 | ScalarKind::I16 | ScalarKind::U8 | ScalarKind::U16 => {
                op!(self, u_convert, stored, value)
            }
            _ => value,
        };
        self.store_typed(stored, kind.size(), addr, v);
    }

    /// A value of narrow `kind` (bool, 8- or 16-bit) from its bits in the low bits of a
    /// `u32` (the rest zero), in the kind's container.
    pub fn from_stored_bits(&mut self, kind: ScalarKind, raw: Word) -> Word {
        let u32_ty = self.u32_ty();
        match kind {
            ScalarKind::Bool => {
                let zero = self.constant32(u32_ty, 0);
                let bool_ty = self.b.type_bool();
                op!(self, i_not_equal, bool_ty, raw, zero)
            }
            ScalarKind::I8 | ScalarKind::I16 => {
                let spare = self.constant32(u32_ty, 32 - 8 * kind.size());
                let up = op!(self, shift_left_logical, u32_ty, raw, spare);
                op!(self, shift_right_arithmetic, u32_ty, up, spare)
            }
            _ => raw,
        }
    }

    /// The bits of a narrow `kind`'s value in the low bits of a `u32` (the rest unspecified).
    pub fn to_stored_bits(&mut self, kind: ScalarKind, value: Word) -> Word {
        if kind != ScalarKind::Bool {
            return value;
        }
        let u32_ty = self.u32_ty();
        let one = self.constant32(u32_ty, 1);
        let zero = self.constant32(u32_ty, 0);
        op!(self, select, u32_ty, value, one, zero)
    }

    /// The type a kind has in memory (8- and 16-bit integers for the narrow kinds, declaring
    /// the capabilities they need).
    fn stored_type(&mut self, kind: ScalarKind) -> Word {
        use rspirv::spirv::Capability;
        match kind.size() {
            1 => {
                self.require(&[Capability::Int8, Capability::StorageBuffer8BitAccess]);
                self.b.type_int(8, 0)
            }
            2 => {
                self.require(&[Capability::Int16, Capability::StorageBuffer16BitAccess]);
                self.b.type_int(16, 0)
            }
            _ => self.container(kind),
        }
    }
}

/// The kind whose container a kind's operations use for their constants.
fn kind_of_container(kind: ScalarKind) -> ScalarKind {
    match kind {
        ScalarKind::I64 | ScalarKind::U64 => ScalarKind::U64,
        _ => ScalarKind::U32,
    }
}

/// The bits of 1 in `kind`.
fn one_bits(kind: ScalarKind) -> u64 {
    match kind {
        ScalarKind::F32 => u64::from(1f32.to_bits()),
        ScalarKind::F64 => 1f64.to_bits(),
        _ => 1,
    }
}

/// An integer kind's range as floats (`lo`, `hi`).
fn int_range(kind: ScalarKind) -> (f64, f64) {
    let bits = 8 * kind.size() as i32;
    if kind.is_signed() {
        (-(2f64.powi(bits - 1)), 2f64.powi(bits - 1) - 1.0)
    } else {
        (0.0, 2f64.powi(bits) - 1.0)
    }
}
