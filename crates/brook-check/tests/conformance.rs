//! The conformance suite: every case in `tests/conformance/*.case` (at the repository root) runs
//! on every available device. Each run's outputs must equal the case's expected values (which
//! were computed independently of Brook, by hand or with a short Python script) and, on every
//! device other than the interpreter, the interpreter's bytes too. Adding a device needs no
//! change here or in the cases. The format is described in `brook_check::case`; a case may be
//! LOOM (`language: loom`, compiled for its `grid:`).

use brook::DeviceKind;
use brook_check::exec;

#[test]
fn conformance() {
    // The interpreter runs first: every other device is compared with its outputs.
    let devices = exec::devices_interpreter_first();
    let names: Vec<String> = devices.iter().map(|d| d.info().to_string()).collect();
    println!("conformance: devices: {}", names.join(", "));
    if !devices.iter().any(|d| d.kind() == DeviceKind::Cuda) {
        println!("conformance: no CUDA device in this build or machine: CUDA runs skipped");
    }
    let outcome = exec::run_suite(&devices);
    outcome.assert_passed("conformance");
    let files = outcome.cases;
    assert!(files >= 60, "the suite has only {files} cases");
}
