//! Benchmark inputs: the same pseudo-random floats on every run and machine, shared by
//! `gpu_bench` and `vulkan_bench`.

/// `n` floats in `[0, 10)` with two decimals, from an xorshift generator seeded by `seed`.
pub fn pseudo_random(n: usize, seed: u32) -> Vec<f32> {
    let mut state = seed.wrapping_mul(2654435761).max(1);
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state % 1000) as f32 / 100.0
        })
        .collect()
}
