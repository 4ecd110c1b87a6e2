//! Constants of the math library, written by `tools/mathlib_constants.py` (mpmath, 1400 bits).
//! Pairs `_HI`/`_LO` are double-double values: `hi + lo` carries about 106 bits.

/// ln 2 cut to 42 significant bits: `e * LN2_CUT_HI` is exact for every exponent `e`.
pub const LN2_CUT_HI: f64 = f64::from_bits(0x3fe62e42fefa3800);
/// `ln 2 - LN2_CUT_HI`, rounded.
pub const LN2_CUT_LO: f64 = f64::from_bits(0x3d2ef35793c76730);
/// ln 2: high part (the nearest double).
pub const LN2_HI: f64 = f64::from_bits(0x3fe62e42fefa39ef);
/// ln 2: low part, `ln2 - LN2_HI` rounded.
pub const LN2_LO: f64 = f64::from_bits(0x3c7abc9e3b39803f);
/// 1 / ln 2: high part (the nearest double).
pub const INV_LN2_HI: f64 = f64::from_bits(0x3ff71547652b82fe);
/// 1 / ln 2: low part, `inv_ln2 - INV_LN2_HI` rounded.
pub const INV_LN2_LO: f64 = f64::from_bits(0x3c7777d0ffda0d24);
/// pi: high part (the nearest double).
pub const PI_HI: f64 = f64::from_bits(0x400921fb54442d18);
/// pi: low part, `pi - PI_HI` rounded.
pub const PI_LO: f64 = f64::from_bits(0x3ca1a62633145c07);
/// pi / 2: high part (the nearest double).
pub const PIO2_HI: f64 = f64::from_bits(0x3ff921fb54442d18);
/// pi / 2: low part, `pio2 - PIO2_HI` rounded.
pub const PIO2_LO: f64 = f64::from_bits(0x3c91a62633145c07);
/// pi / 4: high part (the nearest double).
pub const PIO4_HI: f64 = f64::from_bits(0x3fe921fb54442d18);
/// pi / 4: low part, `pio4 - PIO4_HI` rounded.
pub const PIO4_LO: f64 = f64::from_bits(0x3c81a62633145c07);
/// atan(1/2): high part (the nearest double).
pub const ATAN_HALF_HI: f64 = f64::from_bits(0x3fddac670561bb4f);
/// atan(1/2): low part, `atan_half - ATAN_HALF_HI` rounded.
pub const ATAN_HALF_LO: f64 = f64::from_bits(0x3c7a2b7f222f65e2);
/// atan(3/2): high part (the nearest double).
pub const ATAN_THREE_HALVES_HI: f64 = f64::from_bits(0x3fef730bd281f69b);
/// atan(3/2): low part, `atan_three_halves - ATAN_THREE_HALVES_HI` rounded.
pub const ATAN_THREE_HALVES_LO: f64 = f64::from_bits(0x3c7007887af0cbbd);
/// 2/3: high part (the nearest double).
pub const TWO_THIRDS_HI: f64 = f64::from_bits(0x3fe5555555555555);
/// 2/3: low part, `two_thirds - TWO_THIRDS_HI` rounded.
pub const TWO_THIRDS_LO: f64 = f64::from_bits(0x3c85555555555555);
/// The largest double not above pi / 4: arguments up to it need no reduction.
pub const PIO4_BELOW: f64 = f64::from_bits(0x3fe921fb54442d18);

/// The bits of 2/pi after the binary point, 64 to a word, most significant first, after one
/// zero word (so that a window may start up to 64 bits before the binary point).
pub const TWO_OVER_PI_WORDS: [u64; 20] = [
    0x0000000000000000,
    0xa2f9836e4e441529,
    0xfc2757d1f534ddc0,
    0xdb6295993c439041,
    0xfe5163abdebbc561,
    0xb7246e3a424dd2e0,
    0x06492eea09d1921c,
    0xfe1deb1cb129a73e,
    0xe88235f52ebb4484,
    0xe99c7026b45f7e41,
    0x3991d639835339f4,
    0x9c845f8bbdf9283b,
    0x1ff897ffde05980f,
    0xef2f118b5a0a6d1f,
    0x6d367ecf27cb09b7,
    0x4f463f669e5fea2d,
    0x7527bac7ebe5f17b,
    0x3d0739f78a5292ea,
    0x6bfb5fb11f8d5d08,
    0x56033046fc7b6bab,
];
