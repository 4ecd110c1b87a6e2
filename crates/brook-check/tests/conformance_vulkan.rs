//! The conformance cases of Brook programs (maps, reductions, scans, thread groups), run on
//! every Vulkan device (lavapipe in CI) beside the interpreter: the same outputs bit for bit,
//! the same errors. A step of issue 52 (LOOM is not on Vulkan yet, so its cases are left to
//! the full suite); where there is no Vulkan device, it says so.

use brook::Device;
use brook_check::exec;

#[test]
fn cases_agree_on_vulkan() {
    let vulkan: Vec<Device> = match brook_runtime::vulkan::gpus() {
        Ok(gpus) => (0..gpus.len())
            .filter_map(|k| brook_runtime::vulkan::device(k).ok())
            .map(Device::from_raw)
            .collect(),
        Err(why) => {
            eprintln!("no Vulkan devices ({why}): the cases were not run on Vulkan");
            return;
        }
    };
    if vulkan.is_empty() {
        eprintln!("no usable Vulkan device: the cases were not run on Vulkan");
        return;
    }
    let (mut cases, mut runs, mut failures) = (0, 0, Vec::new());
    for (name, case, program) in exec::compiled_cases() {
        cases += 1;
        let mut devices = vec![Device::interp()];
        devices.extend(vulkan.iter().cloned());
        runs += case.runs.len() * vulkan.len();
        let (found, _) = exec::judge(&case, &program, &devices);
        for f in found {
            let line = case.runs[f.run].line;
            failures.push(format!("{name}:{line} on {}: {}", f.device, f.message));
        }
    }
    println!(
        "conformance_vulkan: {cases} cases, {runs} runs on {} Vulkan devices",
        vulkan.len()
    );
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures[..failures.len().min(40)].join("\n")
    );
}
