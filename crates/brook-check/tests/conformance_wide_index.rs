//! The conformance suite with `BRT_WIDE_INDEX=1`: every launch does its index arithmetic in
//! 64 bits, as launches with more than 2^31 elements do (their own process, since the
//! variable is read once). The compiled devices take another path for gathers, clamps,
//! positions and implicit resize there (the CPU device's gangs keep indices in 64-bit lanes,
//! the GPU in 64-bit registers); results must stay the interpreter's.

use brook_check::exec;

#[test]
fn conformance_with_wide_indices() {
    std::env::set_var("BRT_WIDE_INDEX", "1");
    let devices = exec::devices_interpreter_first();
    let outcome = exec::run_suite(&devices);
    outcome.assert_passed("conformance (wide indices)");
}
