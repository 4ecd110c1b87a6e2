//! The conformance suite on the CPU device with gangs of 4 lanes (`BROOK_SPMD=4`, one 128-bit
//! vector per value: what SSE4.1-only x86-64 and ARM hosts run), against the interpreter (its
//! own process, since the variable is read once). The plain suite covers the host's own width
//! (8 lanes on AVX2 hosts).

use brook::Device;
use brook_check::exec;

#[test]
fn conformance_in_gangs_of_four() {
    std::env::set_var("BROOK_SPMD", "4");
    let Ok(cpu) = Device::find("cpu", 0) else {
        println!("conformance (gangs of 4): no CPU device in this build");
        return;
    };
    let outcome = exec::run_suite(&[Device::interp(), cpu]);
    outcome.assert_passed("conformance (gangs of 4)");
}
