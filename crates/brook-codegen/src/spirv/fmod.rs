//! `fmod` of two doubles, exact: musl's integer long division (as the PTX dialect's helper),
//! the quotient's bits shifted out one a step in a loop of at most 2,100 steps. (A `float`
//! remainder takes `mathlib::float32_int::rem_bits`, which needs no loop.)

use super::libm::SpirvArith;
use super::shell::Shell;
use crate::mathlib::{Arith, Cmp};
use rspirv::spirv::Word;

const IMPLICIT: i64 = 1 << 52;

impl Shell {
    /// `x - trunc(x / y) * y` exactly, with the sign of `x`; NaN for a zero or NaN `y` or an
    /// infinite or NaN `x`.
    pub fn fmod_f64(&mut self, x: Word, y: Word) -> Word {
        let fused = self.fused_fma;
        let mut a = SpirvArith::new(self, fused);
        let (ux, uy) = (a.to_bits(x), a.to_bits(y));
        let (ex, ey) = (exponent(&mut a, ux), exponent(&mut a, uy));
        let (mx, ex) = mantissa(&mut a, ux, ex);
        let (my, ey) = mantissa(&mut a, uy, ey);
        // Loop: while ex > ey, subtract when it fits, then shift left.
        let i64_ty = a.s.u64_ty();
        let bool_ty = a.s.b.type_bool();
        let (vm, ve, vz) = (
            a.s.function_variable(i64_ty),
            a.s.function_variable(i64_ty),
            a.s.function_variable(bool_ty),
        );
        a.s.write(vm, mx);
        a.s.write(ve, ex);
        let no = a.s.b.constant_false(bool_ty);
        a.s.write(vz, no);
        let frame = a.s.begin_loop();
        {
            let e = a.s.read(i64_ty, ve);
            let z = a.s.read(bool_ty, vz);
            let more = a.icmp(Cmp::Gt, e, ey);
            let nz = a.not(z);
            let go = a.and(more, nz);
            let stop = a.not(go);
            let leave = a.s.begin_if(stop);
            a.s.jump_break(frame);
            a.s.end_if(leave);
            let m = a.s.read(i64_ty, vm);
            let (m, zero) = subtract_step(&mut a, m, my);
            let one = a.int(1);
            let shifted = a.shl(m, one);
            a.s.write(vm, shifted);
            a.s.write(vz, zero);
            let e1 = a.isub(e, one);
            a.s.write(ve, e1);
        }
        a.s.begin_continuing(frame);
        a.s.end_loop(frame);
        let m = a.s.read(i64_ty, vm);
        let e = a.s.read(i64_ty, ve);
        let z = a.s.read(bool_ty, vz);
        let (m, zero_last) = subtract_step(&mut a, m, my);
        let zero = a.or(z, zero_last);
        // Normalise (the leading bit to 52) and pack, subnormal results shifted down.
        let lz = a.clz(m);
        let eleven = a.int(11);
        let shift = a.isub(lz, eleven);
        let m = a.shl(m, shift);
        let e = a.isub(e, shift);
        let zero_i = a.int(0);
        let normal = a.icmp(Cmp::Gt, e, zero_i);
        let implicit = a.int(IMPLICIT);
        let frac = a.isub(m, implicit);
        let fifty_two = a.int(52);
        let exp_field = a.shl(e, fifty_two);
        let packed_normal = a.ior(frac, exp_field);
        let one = a.int(1);
        let down = a.isub(one, e);
        let packed_small = a.lshr(m, down);
        let packed = a.select_int(normal, packed_normal, packed_small);
        let sign_mask = a.int(i64::MIN);
        let sign = a.iand(ux, sign_mask);
        let signed = a.ior(packed, sign);
        let result = a.bits_to_float(signed);
        // Zero remainders keep x's sign; |x| <= |y| and the invalid cases apart.
        // 0 with x's sign, from bits (a driver may fold 0 * x to +0).
        let zero_f = a.num(0.0);
        let signed_zero = a.bits_to_float(sign);
        let result = a.select(zero, signed_zero, result);
        let (ax, ay) = (a.abs(x), a.abs(y));
        let equal = a.cmp(Cmp::Eq, ax, ay);
        let smaller = a.cmp(Cmp::Lt, ax, ay);
        let result = a.select(smaller, x, result);
        let result = a.select(equal, signed_zero, result);
        let inf = a.num(f64::INFINITY);
        let y_zero = a.cmp(Cmp::Eq, ay, zero_f);
        let y_nan = a.is_nan(y);
        let x_inf = a.cmp(Cmp::Eq, ax, inf);
        let x_nan = a.is_nan(x);
        let bad = a.or(y_zero, y_nan);
        let bad = a.or(bad, x_inf);
        let bad = a.or(bad, x_nan);
        let nan = a.num(f64::NAN);
        a.select(bad, nan, result)
    }
}

/// The biased exponent field of the bits `u`.
fn exponent(a: &mut SpirvArith<'_>, u: Word) -> Word {
    let fifty_two = a.int(52);
    let shifted = a.lshr(u, fifty_two);
    let mask = a.int(0x7FF);
    a.iand(shifted, mask)
}

/// The significand with its leading bit at 52 and the matching exponent (subnormals
/// normalised: musl's loop, as a count of leading zeros).
fn mantissa(a: &mut SpirvArith<'_>, u: Word, e: Word) -> (Word, Word) {
    let frac_mask = a.int((1 << 52) - 1);
    let frac = a.iand(u, frac_mask);
    let implicit = a.int(IMPLICIT);
    let normal_m = a.ior(frac, implicit);
    let lz = a.clz(frac);
    let eleven = a.int(11);
    let shift = a.isub(lz, eleven);
    let small_m = a.shl(frac, shift);
    let one = a.int(1);
    let small_e = a.isub(one, shift);
    let zero = a.int(0);
    let subnormal = a.icmp(Cmp::Eq, e, zero);
    let m = a.select_int(subnormal, small_m, normal_m);
    let e = a.select_int(subnormal, small_e, e);
    (m, e)
}

/// One step of the long division: `m - my` when it does not go below zero; whether it
/// reached zero.
fn subtract_step(a: &mut SpirvArith<'_>, m: Word, my: Word) -> (Word, Word) {
    let i = a.isub(m, my);
    let zero = a.int(0);
    let fits = a.icmp(Cmp::Ge, i, zero);
    let exact = a.icmp(Cmp::Eq, i, zero);
    let reached = a.and(fits, exact);
    (a.select_int(fits, i, m), reached)
}

#[cfg(test)]
mod tests {
    use crate::spirv::shell::{Scalar, Shell};
    use rspirv::spirv::Capability;

    /// A module of one remainder (its loop, `if` and `break`) validates.
    #[test]
    fn the_remainder_validates() {
        let mut s = Shell::new(2, [1, 1, 1], &[Capability::Float64]);
        let (src, dst) = (s.push_word(0), s.push_word(1));
        let x = s.load(Scalar::F64, src);
        let y = s.load(Scalar::F64, dst);
        let r = s.fmod_f64(x, y);
        s.store(Scalar::F64, dst, r);
        crate::spirv::validate::check(&s.finish(), "fmod");
    }
}
