//! Runs the device probe ([`brook_codegen::spirv::probe`]) on an open device and records
//! what it found in the device's [`GpuInfo`]: subnormals, signed zeros, `fma`, loop limits.

use super::context::Context;
use super::info::GpuInfo;
use brook_codegen::spirv::probe::{self, Subnormals};
use std::sync::Arc;

/// Probes `context`'s device; a probe that fails leaves the verdicts unset and says why in
/// `info.unusable`.
pub fn subnormals(context: &Arc<Context>, info: &mut GpuInfo) {
    if let Err(why) = run(context, info) {
        info.unusable = Some(format!("the device probe failed: {why}"));
    }
}

fn run(context: &Arc<Context>, info: &mut GpuInfo) -> Result<(), String> {
    let mut src = context.buffer(probe::SRC_BYTES)?;
    let dst = context.buffer(probe::DST_BYTES)?;
    {
        let bytes = src.bytes_mut();
        for (k, v) in probe::operands_f32().iter().enumerate() {
            bytes[4 * k..4 * k + 4].copy_from_slice(&v.to_le_bytes());
        }
        for (k, v) in probe::operands_f64().iter().enumerate() {
            bytes[32 + 8 * k..40 + 8 * k].copy_from_slice(&v.to_le_bytes());
        }
        let at = probe::FMA_OPERANDS_AT as usize;
        for (k, v) in probe::fma_operands().iter().enumerate() {
            bytes[at + 8 * k..at + 8 * k + 8].copy_from_slice(&v.to_le_bytes());
        }
        let at = probe::LOOP_COUNT_AT as usize;
        bytes[at..at + 4].copy_from_slice(&probe::LOOP_COUNT.to_le_bytes());
    }
    let preserve = (
        info.signed_zero_inf_nan.0,
        info.signed_zero_inf_nan.1 && info.float64,
    );
    let module = probe::module(info.float64, preserve);
    let mut push = Vec::with_capacity(16);
    push.extend_from_slice(&src.address().to_le_bytes());
    push.extend_from_slice(&dst.address().to_le_bytes());
    context.run(&module, &push, [1, 1, 1])?;
    let out = dst.bytes();
    let f32_at = |k: usize| f32::from_le_bytes(out[4 * k..4 * k + 4].try_into().unwrap());
    info.subnormals_f32 = Some(Subnormals::judge_f32(std::array::from_fn(f32_at)));
    let at = probe::SIGNED_ZERO_AT as usize;
    let product = f32::from_le_bytes(out[at..at + 4].try_into().unwrap());
    info.signed_zero_kept = Some(product.to_bits() == (-0.0f32).to_bits());
    let at = probe::LOOP_RESULT_AT as usize;
    let iterations = u32::from_le_bytes(out[at..at + 4].try_into().unwrap());
    info.loop_limit = (iterations < probe::LOOP_COUNT).then_some(iterations);
    if info.float64 {
        let f64_at = |k: usize| f64::from_le_bytes(out[16 + 8 * k..24 + 8 * k].try_into().unwrap());
        info.subnormals_f64 = Some(Subnormals::judge_f64(std::array::from_fn(f64_at)));
        let at = probe::FMA_RESULT_AT as usize;
        let fma = f64::from_le_bytes(out[at..at + 8].try_into().unwrap());
        info.fma_fused = Some(probe::fma_fused(fma));
    }
    Ok(())
}
