"""Prints the constants of crates/brook-codegen/src/mathlib/consts.rs (needs mpmath).

Run: python3 tools/mathlib_constants.py > crates/brook-codegen/src/mathlib/consts.rs
"""
import struct
import mpmath

mpmath.mp.prec = 1400


def bits(x):
    return struct.unpack("<Q", struct.pack("<d", float(x)))[0]


def dd(name, value, doc):
    hi = float(value)
    lo = float(value - mpmath.mpf(hi))
    print(f"/// {doc}: high part (the nearest double).")
    print(f"pub const {name}_HI: f64 = f64::from_bits(0x{bits(hi):016x});")
    print(f"/// {doc}: low part, `{name.lower()} - {name}_HI` rounded.")
    print(f"pub const {name}_LO: f64 = f64::from_bits(0x{bits(lo):016x});")


def main():
    print("//! Constants of the math library, written by `tools/mathlib_constants.py` (mpmath, 1400 bits).")
    print("//! Pairs `_HI`/`_LO` are double-double values: `hi + lo` carries about 106 bits.")
    print()
    ln2 = mpmath.log(2)
    # ln 2 with 42 significant bits, so that e * LN2_CUT_HI is exact for |e| < 2048.
    cut = mpmath.floor(ln2 * 2**43) / 2**43
    print("/// ln 2 cut to 42 significant bits: `e * LN2_CUT_HI` is exact for every exponent `e`.")
    print(f"pub const LN2_CUT_HI: f64 = f64::from_bits(0x{bits(cut):016x});")
    print("/// `ln 2 - LN2_CUT_HI`, rounded.")
    print(f"pub const LN2_CUT_LO: f64 = f64::from_bits(0x{bits(ln2 - cut):016x});")
    dd("LN2", ln2, "ln 2")
    dd("INV_LN2", 1 / ln2, "1 / ln 2")
    dd("PI", mpmath.pi, "pi")
    dd("PIO2", mpmath.pi / 2, "pi / 2")
    dd("PIO4", mpmath.pi / 4, "pi / 4")
    dd("ATAN_HALF", mpmath.atan(mpmath.mpf(1) / 2), "atan(1/2)")
    dd("ATAN_THREE_HALVES", mpmath.atan(mpmath.mpf(3) / 2), "atan(3/2)")
    dd("TWO_THIRDS", mpmath.mpf(2) / 3, "2/3")
    print("/// The largest double not above pi / 4: arguments up to it need no reduction.")
    q = float(mpmath.pi / 4)
    if mpmath.mpf(q) > mpmath.pi / 4:
        q = struct.unpack("<d", struct.pack("<Q", bits(q) - 1))[0]
    print(f"pub const PIO4_BELOW: f64 = f64::from_bits(0x{bits(q):016x});")
    words = 19
    frac = mpmath.mpf(2) / mpmath.pi
    n = int(mpmath.floor(frac * mpmath.mpf(2) ** (64 * words)))
    print()
    print("/// The bits of 2/pi after the binary point, 64 to a word, most significant first, after one")
    print("/// zero word (so that a window may start up to 64 bits before the binary point).")
    print(f"pub const TWO_OVER_PI_WORDS: [u64; {words + 1}] = [")
    print("    0x0000000000000000,")
    for i in range(words):
        w = (n >> (64 * (words - 1 - i))) & ((1 << 64) - 1)
        print(f"    0x{w:016x},")
    print("];")


main()
