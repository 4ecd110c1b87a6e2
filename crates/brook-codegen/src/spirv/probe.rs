//! The device probe: what a Vulkan device does with subnormal floats, which Vulkan lets a
//! device flush unless it promises otherwise (`shaderDenormPreserveFloat32`, which lavapipe
//! and NVIDIA's driver both leave false).
//!
//! One invocation reads its operands from memory (so no compiler can fold them) and writes
//! three results per float type:
//! - `MIN_NORMAL * 0.5`: a subnormal *result* (flushed to zero or kept);
//! - `SUBNORMAL * 1.0`: a subnormal *input* to a multiplication;
//! - `SUBNORMAL + 0.0`: a subnormal input to an addition.
//!
//! It checks that `0.0 * -1.0` with a literal zero stays `-0.0` (a compiler allowed to
//! ignore signed zeros folds it to `+0.0`: lavapipe does unless the module asks it not to).
//! With `double`s it also checks that `Fma` (GLSL.std.450) is fused, as the math library needs:
//! `fma(1 + 2^-30, 1 - 2^-30, -1)` is `-2^-60` fused and 0 when the product is rounded first.
//! And it counts a loop of [`LOOP_COUNT`] iterations (the count read from `src` at byte
//! [`LOOP_COUNT_AT`], the iterations run written to `dst` at [`LOOP_RESULT_AT`]): lavapipe ends
//! a subgroup's loops after 65,535 iterations in all.
//!
//! Memory: `src` holds, per type, `[MIN_NORMAL, 0.5, SUBNORMAL, 1.0, 0.0]` (`f32` at byte 0,
//! `f64` at byte 32), then the three `fma` operands at byte [`FMA_OPERANDS_AT`]; `dst` gets the
//! three results per type (`f32` at 0, `f64` at 16) and the `fma` at byte [`FMA_RESULT_AT`].
//! Push constants: word 0 `src`, word 1 `dst`.

use super::shell::{Scalar, Shell};
use super::SpirvModule;
use rspirv::spirv::Capability;

/// The operands, per float type, as [`operands_f32`] and [`operands_f64`] lay them out.
pub const OPERANDS: usize = 5;
/// The results per float type.
pub const RESULTS: usize = 3;

/// Where the `fma` operands start in `src` and its result lies in `dst`.
pub const FMA_OPERANDS_AT: u64 = 72;
pub const FMA_RESULT_AT: u64 = 40;
/// Where the loop's count (a `u32`) lies in `src`, and the iterations it ran in `dst`.
pub const LOOP_COUNT_AT: u64 = FMA_OPERANDS_AT + 24;
pub const LOOP_RESULT_AT: u64 = SIGNED_ZERO_AT + 8;
/// The iterations the loop probe asks for: more than any limit a driver is known to have.
pub const LOOP_COUNT: u32 = 100_000;
/// Bytes of the probe's `src` and `dst`.
pub const SRC_BYTES: u64 = LOOP_COUNT_AT + 8;
/// Where the signed-zero probe's `float` result lies in `dst`.
pub const SIGNED_ZERO_AT: u64 = FMA_RESULT_AT + 8;
pub const DST_BYTES: u64 = LOOP_RESULT_AT + 8;

/// The `fma` operands: its result is `-2^-60` when fused.
pub fn fma_operands() -> [f64; 3] {
    let e = 2f64.powi(-30);
    [1.0 + e, 1.0 - e, -1.0]
}

/// Whether the probe's `fma` result shows a fused operation.
pub fn fma_fused(result: f64) -> bool {
    result == -(2f64.powi(-60))
}

/// `f32` operands: the smallest normal, 0.5, a subnormal (2^-140), 1.0, 0.0.
pub fn operands_f32() -> [f32; OPERANDS] {
    [f32::MIN_POSITIVE, 0.5, f32::from_bits(1 << 9), 1.0, 0.0]
}

/// `f64` operands: as [`operands_f32`] (the subnormal is 2^-1064).
pub fn operands_f64() -> [f64; OPERANDS] {
    [f64::MIN_POSITIVE, 0.5, f64::from_bits(1 << 10), 1.0, 0.0]
}

/// The probe for `f32` and, when `f64` holds, also `f64` (its operands follow the `f32`
/// ones in `src` at byte 32, its results the `f32` ones in `dst` at byte 16).
/// `preserve`: the module asks to keep signed zeros (`SignedZeroInfNanPreserve`), as kernels
/// do on the device.
pub fn module(f64: bool, preserve: (bool, bool)) -> SpirvModule {
    let extra: &[Capability] = if f64 { &[Capability::Float64] } else { &[] };
    let mut s = Shell::new(2, [1, 1, 1], extra);
    s.preserve_signed_zero = preserve;
    let src = s.push_word(0);
    let dst = s.push_word(1);
    probe_type(&mut s, Scalar::F32, src, dst);
    probe_signed_zero(&mut s, src, dst);
    probe_loop(&mut s, src, dst);
    if f64 {
        let at = s.const_u64(32);
        let src64 = s.b.i_add(s.u64_ty(), None, src, at).expect("in a block");
        let at = s.const_u64(16);
        let dst64 = s.b.i_add(s.u64_ty(), None, dst, at).expect("in a block");
        probe_type(&mut s, Scalar::F64, src64, dst64);
        probe_fma(&mut s, src, dst);
    }
    s.finish()
}

fn probe_type(s: &mut Shell, ty: Scalar, src: rspirv::spirv::Word, dst: rspirv::spirv::Word) {
    let operand = |s: &mut Shell, k: u64| {
        let index = s.const_u64(k);
        let addr = s.address(src, index, ty.bytes());
        s.load(ty, addr)
    };
    let [min_normal, half, subnormal, one, zero] = [0, 1, 2, 3, 4].map(|k| operand(s, k));
    let t = s.ty(ty);
    let results = [
        s.b.f_mul(t, None, min_normal, half).expect("in a block"),
        s.b.f_mul(t, None, subnormal, one).expect("in a block"),
        s.b.f_add(t, None, subnormal, zero).expect("in a block"),
    ];
    for (k, r) in results.into_iter().enumerate() {
        let r = s.exact(r);
        let index = s.const_u64(k as u64);
        let addr = s.address(dst, index, ty.bytes());
        s.store(ty, addr, r);
    }
}

/// `0.0 * x` for the operand `-1.0` (at byte 12 of `src`): -0 unless the compiler folds the
/// product to +0; written at byte [`SIGNED_ZERO_AT`] of `dst`.
fn probe_signed_zero(s: &mut Shell, src: rspirv::spirv::Word, dst: rspirv::spirv::Word) {
    let t = s.ty(Scalar::F32);
    let at = s.const_u64(12);
    let addr = s.b.i_add(s.u64_ty(), None, src, at).expect("in a block");
    let one = s.load(Scalar::F32, addr);
    let minus_one = s.b.f_negate(t, None, one).expect("in a block");
    let zero = s.constant32(t, 0);
    let product = s.b.f_mul(t, None, zero, minus_one).expect("in a block");
    let product = s.exact(product);
    let at = s.const_u64(SIGNED_ZERO_AT);
    let addr = s.b.i_add(s.u64_ty(), None, dst, at).expect("in a block");
    s.store(Scalar::F32, addr, product);
}

/// Counts the iterations of a loop that asks for the count at [`LOOP_COUNT_AT`] of `src`;
/// writes them at [`LOOP_RESULT_AT`] of `dst`.
fn probe_loop(s: &mut Shell, src: rspirv::spirv::Word, dst: rspirv::spirv::Word) {
    let at = s.const_u64(LOOP_COUNT_AT);
    let addr = s.b.i_add(s.u64_ty(), None, src, at).expect("in a block");
    let count = s.load(Scalar::U32, addr);
    let t = s.u32_ty();
    let done = s.function_variable(t);
    let zero = s.const_u32(0);
    s.write(done, zero);
    let frame = s.begin_loop();
    let n = s.read(t, done);
    let bool_ty = s.b.type_bool();
    let end =
        s.b.u_greater_than_equal(bool_ty, None, n, count)
            .expect("in a block");
    let stop = s.begin_if(end);
    s.jump_break(frame);
    s.end_if(stop);
    let one = s.const_u32(1);
    let next = s.b.i_add(t, None, n, one).expect("in a block");
    s.write(done, next);
    s.begin_continuing(frame);
    s.end_loop(frame);
    let n = s.read(t, done);
    let at = s.const_u64(LOOP_RESULT_AT);
    let addr = s.b.i_add(s.u64_ty(), None, dst, at).expect("in a block");
    s.store(Scalar::U32, addr, n);
}

fn probe_fma(s: &mut Shell, src: rspirv::spirv::Word, dst: rspirv::spirv::Word) {
    let [a, b, c] = [0, 1, 2].map(|k| {
        let at = s.const_u64(FMA_OPERANDS_AT + 8 * k);
        let addr = s.b.i_add(s.u64_ty(), None, src, at).expect("in a block");
        s.load(Scalar::F64, addr)
    });
    let t = s.ty(Scalar::F64);
    let glsl = s.glsl();
    let operands = [a, b, c].map(rspirv::dr::Operand::IdRef);
    let r =
        s.b.ext_inst(t, None, glsl, super::shell::glsl::FMA, operands)
            .expect("in a block");
    let r = s.exact(r);
    let at = s.const_u64(FMA_RESULT_AT);
    let addr = s.b.i_add(s.u64_ty(), None, dst, at).expect("in a block");
    s.store(Scalar::F64, addr, r);
}

/// What a device does with subnormals of one float type, from the probe's results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subnormals {
    /// Every result exact: subnormal inputs and results kept, as IEEE 754 and the
    /// interpreter have them.
    Preserved,
    /// Subnormal results become zero (and subnormal inputs are read as zero).
    Flushed,
    /// Some other mix (the three results' exactness, in probe order).
    Mixed([bool; RESULTS]),
}

impl Subnormals {
    /// Judges the three results of one type: `exact[k]` says whether result `k` was right.
    pub fn from_exactness(exact: [bool; RESULTS]) -> Subnormals {
        match exact {
            [true, true, true] => Subnormals::Preserved,
            [false, false, false] => Subnormals::Flushed,
            mixed => Subnormals::Mixed(mixed),
        }
    }

    /// The `f32` verdict from the results' bits.
    pub fn judge_f32(results: [f32; RESULTS]) -> Subnormals {
        let [min_normal, half, subnormal, _, _] = operands_f32();
        let want = [min_normal * half, subnormal, subnormal];
        Subnormals::from_exactness(std::array::from_fn(|k| {
            results[k].to_bits() == want[k].to_bits()
        }))
    }

    /// The `f64` verdict from the results' bits.
    pub fn judge_f64(results: [f64; RESULTS]) -> Subnormals {
        let [min_normal, half, subnormal, _, _] = operands_f64();
        let want = [min_normal * half, subnormal, subnormal];
        Subnormals::from_exactness(std::array::from_fn(|k| {
            results[k].to_bits() == want[k].to_bits()
        }))
    }
}

impl std::fmt::Display for Subnormals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Subnormals::Preserved => f.write_str("preserved"),
            Subnormals::Flushed => f.write_str("flushed to zero"),
            Subnormals::Mixed([result, mul, add]) => write!(
                f,
                "mixed (a subnormal result {}, a subnormal times 1 {}, plus 0 {})",
                kept(*result),
                kept(*mul),
                kept(*add)
            ),
        }
    }
}

fn kept(exact: bool) -> &'static str {
    if exact {
        "kept"
    } else {
        "flushed"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operands_are_what_the_probe_needs() {
        let [min, half, sub, _, _] = operands_f32();
        assert!((min * half).is_subnormal() && sub.is_subnormal());
        let [min, half, sub, _, _] = operands_f64();
        assert!((min * half).is_subnormal() && sub.is_subnormal());
        let [a, b, c] = fma_operands();
        assert!(fma_fused(a.mul_add(b, c)) && !fma_fused(a * b + c));
        assert_eq!(Subnormals::judge_f32([0.0, 0.0, 0.0]), Subnormals::Flushed);
        let [min, half, sub, _, _] = operands_f32();
        assert_eq!(
            Subnormals::judge_f32([min * half, sub, sub]),
            Subnormals::Preserved
        );
    }

    /// The module validates (`spirv-val`, where it is installed; CI installs it).
    #[test]
    fn the_probe_validates() {
        for f64 in [false, true] {
            for preserve in [(false, false), (true, f64)] {
                crate::spirv::validate::check(&module(f64, preserve), "probe");
            }
        }
    }
}
