//! Test values shared by the integration tests that compare devices bit for bit.

/// Pseudo-random floats of mixed magnitudes, whose float sums depend on the order of the
/// additions (so a reduction combined in another order shows in the bits).
pub fn wobbly(n: usize, seed: u32) -> Vec<f32> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let unit = (state >> 8) as f32 / (1u32 << 24) as f32;
            (unit - 0.5) * [1e-3f32, 1.0, 1e3, 1e7][(state >> 3) as usize % 4]
        })
        .collect()
}

/// Floats as their bits (so NaN and -0 compare exactly).
pub fn bits(values: &[f32]) -> Vec<u32> {
    values.iter().map(|v| v.to_bits()).collect()
}
