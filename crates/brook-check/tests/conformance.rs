//! The conformance suite: every case in `tests/conformance/*.case` (at the repository root) runs
//! on every available device. Each run's outputs must equal the case's expected values (which
//! were computed independently of Brook, by hand or with a short Python script) and, on every
//! device other than the interpreter, the interpreter's bytes too. Adding a device needs no
//! change here or in the cases. The format is described in `brook_check::case`; a case may be
//! LOOM (`language: loom`, compiled for its `grid:`).

use brook::DeviceKind;
use brook_check::{case, exec};

#[test]
fn conformance() {
    // The interpreter runs first: every other device is compared with its outputs.
    let devices = exec::devices_interpreter_first();
    let names: Vec<String> = devices.iter().map(|d| d.info().to_string()).collect();
    println!("conformance: devices: {}", names.join(", "));
    if !devices.iter().any(|d| d.kind() == DeviceKind::Cuda) {
        println!("conformance: no CUDA device in this build or machine: CUDA runs skipped");
    }
    let files = exec::case_files();
    let mut failures = Vec::new();
    let mut runs = 0;
    for path in &files {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("?")
            .to_string();
        let text = std::fs::read_to_string(path).expect("read case");
        let case = match case::parse(&text) {
            Ok(case) => case,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let program = match exec::compile(&name, &case) {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("{name}: does not compile:\n{e}"));
                continue;
            }
        };
        runs += case.runs.len() * devices.len();
        let (found, _) = exec::judge(&case, &program, &devices);
        for f in found {
            let line = case.runs[f.run].line;
            failures.push(format!("{name}:{line} on {}: {}", f.device, f.message));
        }
    }
    println!("conformance: {} cases, {runs} runs", files.len());
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        files.len() >= 60,
        "the suite has only {} cases",
        files.len()
    );
}
