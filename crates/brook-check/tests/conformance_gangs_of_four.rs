//! The conformance suite on a CPU device compiling in gangs of 4 lanes (one 128-bit vector
//! per value: what SSE4.1-only x86-64 and ARM hosts run, `BROOK_SPMD=4`), against the
//! interpreter. The plain suite covers the host's own width (8 lanes on AVX2 hosts).

use brook::Device;
use brook_check::exec;
use brook_codegen::{cpu, Gangs, Tuning};
use brook_runtime::cpu::CpuDevice;
use std::sync::Arc;

#[test]
fn conformance_in_gangs_of_four() {
    let tuning = Tuning {
        gangs: Gangs::Four,
        ..Tuning::DEFAULT
    };
    let options = cpu::Options { tuning };
    // The tuning reaches the compiler: map kernels are planned in gangs of 4.
    let in_fours = exec::compiled_cases()
        .filter(|(_, _, program)| {
            (0..program.module().module().kernels.len())
                .any(|k| cpu::planned_gang_lanes(program.module(), k, 1, &options) == 4)
        })
        .count();
    assert!(in_fours > 10, "{in_fours} cases have kernels in gangs of 4");
    let cpu = CpuDevice::with_options(options);
    let outcome = exec::run_suite(&[Device::interp(), Device::from_raw(Arc::new(cpu))]);
    outcome.assert_passed("conformance (gangs of 4)");
}
