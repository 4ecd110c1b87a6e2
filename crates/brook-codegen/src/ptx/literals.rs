//! A kernel's literals live in `.const` memory, where the JIT cannot see their values.
//!
//! The driver's JIT folds arithmetic on values it knows at compile time, and it does not
//! always fold the way the instructions it replaces compute (found by brook-fuzz on sm_90 with
//! driver 580: `cvt(2) * 101.0 + -0.40000153` folded to the odd neighbour of a tie, one ulp
//! from `mul.rn` then `add.rn`; `selp.f32` between `-0.0` and `-1.0` rewritten as an integer
//! select converted to float, which loses the sign of zero). A `.const` variable may be
//! written by the host before a launch, so the JIT must load it: a float that comes from a
//! literal is never a compile-time constant to it, and every operation on it runs as written.
//! On the GPU the load is free: constant-bank values are direct operands of arithmetic.
//!
//! Integer literals too: with a value it knew, the JIT of driver 580 (sm_90, every level
//! above 0) lost a component of a reduction whose combine was `r = 8 * sign(r)` or
//! `r = (r != 0) ? 8 : 0` on unsigned values (0 where 8 was due; brook-fuzz seed 50506 kernel
//! 5430); the same kernel with the 8 passed as an argument was right, as at level 0.
//!
//! The lowering still folds operations whose operands are all literals itself, exactly
//! (see [`crate::ptx::emit::Emitter::float_bits`]), and loads the result; it still divides
//! by a literal divisor as an immediate ([`crate::ptx::emit::Emitter::int_bits`]): ptxas
//! divides by a register the slow way.
//!
//! Codegen's own constants (offsets, masks, counts) stay immediates.

use std::collections::BTreeSet;
use std::fmt::Write;

const F32_PREFIX: &str = "brook_f32_";
const F64_PREFIX: &str = "brook_f64_";
const U32_PREFIX: &str = "brook_u32_";
const U64_PREFIX: &str = "brook_u64_";

/// The bits of a float immediate written as PTX (`0fXXXXXXXX` for a `float`,
/// `0dXXXXXXXXXXXXXXXX` for a `double`).
pub fn float_bits(double: bool, value: &str) -> Option<u64> {
    let hex = if double {
        value.strip_prefix("0d").filter(|h| h.len() == 16)?
    } else {
        value.strip_prefix("0f").filter(|h| h.len() == 8)?
    };
    u64::from_str_radix(hex, 16).ok()
}

/// The instruction loading the float literal of `bits` into register `r` (a `double` or a
/// `float` register).
pub fn load(r: impl std::fmt::Display, double: bool, bits: u64) -> String {
    if double {
        format!("ld.const.f64 {r}, [{F64_PREFIX}{bits:016X}]")
    } else {
        format!("ld.const.f32 {r}, [{F32_PREFIX}{:08X}]", bits as u32)
    }
}

/// The instruction loading the integer literal `bits` into register `r` (64 bits wide when
/// `wide`, else the low 32).
pub fn load_int(r: impl std::fmt::Display, wide: bool, bits: u64) -> String {
    if wide {
        format!("ld.const.u64 {r}, [{U64_PREFIX}{bits:016X}]")
    } else {
        format!("ld.const.u32 {r}, [{U32_PREFIX}{:08X}]", bits as u32)
    }
}

/// The `.const` declarations of every literal that `text` (a whole module) loads, once each.
pub fn declarations(text: &str) -> String {
    let f32s = names(text, F32_PREFIX, 8);
    let f64s = names(text, F64_PREFIX, 16);
    let u32s = names(text, U32_PREFIX, 8);
    let u64s = names(text, U64_PREFIX, 16);
    let mut out = String::new();
    for (prefix, hexes) in [(F32_PREFIX, &f32s), (U32_PREFIX, &u32s)] {
        for hex in hexes {
            let _ = writeln!(out, ".const .align 4 .b32 {prefix}{hex} = 0x{hex};");
        }
    }
    for (prefix, hexes) in [(F64_PREFIX, &f64s), (U64_PREFIX, &u64s)] {
        for hex in hexes {
            let _ = writeln!(out, ".const .align 8 .b64 {prefix}{hex} = 0x{hex};");
        }
    }
    out
}

/// The hex digits after each `prefix` in `text` (`digits` of them).
fn names<'t>(text: &'t str, prefix: &str, digits: usize) -> BTreeSet<&'t str> {
    text.match_indices(prefix)
        .filter_map(|(at, _)| text.get(at + prefix.len()..at + prefix.len() + digits))
        .filter(|hex| hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declares_each_loaded_literal_once() {
        let text = "ld.const.f32 %f0, [brook_f32_3F800000];\n\
                    ld.const.f32 %f1, [brook_f32_3F800000];\n\
                    ld.const.f64 %fd0, [brook_f64_8000000000000000];\n\
                    ld.const.u32 %r0, [brook_u32_00000008];\n\
                    ld.const.u64 %rd0, [brook_u64_FFFFFFFFFFFFFFFF];\n";
        assert_eq!(
            declarations(text),
            ".const .align 4 .b32 brook_f32_3F800000 = 0x3F800000;\n\
             .const .align 4 .b32 brook_u32_00000008 = 0x00000008;\n\
             .const .align 8 .b64 brook_f64_8000000000000000 = 0x8000000000000000;\n\
             .const .align 8 .b64 brook_u64_FFFFFFFFFFFFFFFF = 0xFFFFFFFFFFFFFFFF;\n"
        );
        assert_eq!(
            load_int("%r1", false, 8),
            "ld.const.u32 %r1, [brook_u32_00000008]"
        );
    }

    #[test]
    fn reads_float_immediates() {
        assert_eq!(float_bits(false, "0f80000000"), Some(0x8000_0000));
        assert_eq!(float_bits(true, "0d3FF0000000000000"), Some(0x3FF0 << 48));
        assert_eq!(float_bits(true, "0f80000000"), None);
        assert_eq!(float_bits(false, "7"), None);
        assert_eq!(float_bits(false, "local_1"), None);
    }
}
