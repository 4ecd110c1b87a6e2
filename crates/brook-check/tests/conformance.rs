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
    for (kind, name) in [(DeviceKind::Cuda, "CUDA"), (DeviceKind::Vulkan, "Vulkan")] {
        if !devices.iter().any(|d| d.kind() == kind) {
            println!("conformance: no {name} device on this machine: {name} runs skipped");
        }
    }
    let outcome = exec::run_suite(&devices);
    outcome.assert_passed("conformance");
    let files = outcome.cases;
    assert!(files >= 60, "the suite has only {files} cases");
}

/// The suite on device groups (each stream split into row blocks among the members), compared
/// with the single interpreter: two interpreters, the CPU with an interpreter, the GPUs (two
/// of them where the machine has two, else the one GPU twice, so that the split and the copies
/// between members still run), the first Vulkan device with the CPU, and the CPU devices of a
/// three-rank job whose ranks are threads of this process.
#[test]
fn conformance_on_device_groups() {
    let mut devices = vec![brook::Device::interp()];
    let mut specs = vec!["interp:0+interp:1", "cpu:0+interp:1"];
    let gpus = brook::Device::of_type("cuda").unwrap_or_default().len();
    match gpus {
        0 => println!("conformance on device groups: no CUDA device: GPU groups skipped"),
        1 => specs.push("cuda:0+cuda:0"),
        _ => specs.push("cuda:all"),
    }
    if brook::Device::of_type("vulkan")
        .unwrap_or_default()
        .is_empty()
    {
        println!("conformance on device groups: no Vulkan device: Vulkan groups skipped");
    } else {
        specs.push("vulkan:0+cpu:0");
    }
    for spec in specs {
        devices.push(brook::Device::from_spec(spec).expect(spec));
    }
    // An MPI-style job of three ranks whose ranks are threads (a ragged split; ranks 1 and 2
    // served through the job's protocol).
    let job = brook::raw::local_job(3, "cpu").expect("a job of threads");
    devices.push(brook::Device::from_raw(job));
    let outcome = exec::run_suite(&devices);
    outcome.assert_passed("conformance on device groups");
}

/// The suite on each Vulkan device as a device without `shaderFloat64` runs it (Apple GPUs
/// through MoltenVK, Intel's Xe graphics): `float` division and square roots from integers,
/// the interpreter's bits. A run that needs doubles is refused with a message naming the type
/// or operation and the missing feature; those are counted and named, never passed silently.
/// The subgroup size is read at run time there, as on a device whose subgroups vary (Intel's),
/// so the strategies' run-time-size form runs the suite too.
#[test]
fn conformance_without_doubles() {
    let vulkan = brook::Device::of_type("vulkan").unwrap_or_default().len();
    if vulkan == 0 {
        println!("conformance without doubles: no Vulkan device: skipped");
        return;
    }
    let mut devices = vec![brook::Device::interp()];
    for ordinal in 0..vulkan {
        let without = brook_runtime::vulkan::device_with(ordinal, |o| {
            o.float64 = false;
            o.subgroup_size = 0;
        })
        .expect("a Vulkan device listed opens");
        devices.push(brook::Device::from_raw(without));
    }
    let mut outcome = exec::run_suite(&devices);
    let refusal = "lacks 64-bit floats (Vulkan's shaderFloat64)";
    let (refused, failures): (Vec<String>, Vec<String>) = outcome
        .failures
        .drain(..)
        .partition(|line| line.contains(refusal));
    outcome.failures = failures;
    let cases: std::collections::BTreeSet<&str> = refused
        .iter()
        .filter_map(|line| line.split(':').next())
        .collect();
    println!(
        "conformance without doubles: {} run(s) refused for needing doubles, in {} case(s): {}",
        refused.len(),
        cases.len(),
        cases.into_iter().collect::<Vec<_>>().join(", ")
    );
    outcome.assert_passed("conformance without doubles");
    assert!(
        refused.len() * 4 < outcome.runs,
        "most runs must run without doubles"
    );
}
