//! Every map, thread-group and reduction kernel of the conformance suite, written as SPIR-V for a 1-D and a 2-D launch (a reduction's serial and scan entries; a map through each form of the grid-stride driver), is a valid module (`spirv-val`, where installed; CI installs it) or names
//! what it cannot yet write. A step of issue 52: the Vulkan device runs what this writes; the
//! test prints how many kernels compile and which constructs stop the others.

use brook_check::exec;
use brook_codegen::abi::Variant;
use brook_codegen::spirv::{map, reduce, validate, SpirvModule};
use brook_ir::KernelKind;
use std::collections::BTreeMap;

#[test]
fn kernels_are_valid_spirv() {
    let (mut compiled, mut invalid) = (0, Vec::new());
    let mut refused: BTreeMap<String, usize> = BTreeMap::new();
    // Map modules by the driver's instances per step (`None`: an invocation per instance).
    let mut steps: BTreeMap<Option<u64>, usize> = BTreeMap::new();
    let options = map::Options {
        float64: true,
        fused_fma: false,
        preserve_signed_zero: (true, true),
        // The widening that flushes explicitly (NVIDIA's driver) validated too.
        flushes_f32: true,
        // A GPU's map modules: every form of the driver.
        unrolled_maps: true,
        // Reductions' subgroup path validated too.
        subgroup_shuffle: true,
        // And scans' one-pass entry.
        lookback_scans: true,
        tuning: Default::default(),
    };
    for (name, _, program) in exec::compiled_cases() {
        let module = program.module();
        for kernel in &module.kernels {
            for rank in 1..=2 {
                let mut variant = Variant::plain(kernel, rank);
                variant.scan = kernel.kind == KernelKind::Reduce;
                let modules: Result<Vec<SpirvModule>, _> = match kernel.kind {
                    KernelKind::Map => map::compile(module, kernel, &variant, &options).map(|m| {
                        *steps.entry(m.instances_per_step).or_default() += 1;
                        vec![m.module]
                    }),
                    KernelKind::Reduce => reduce::compile(module, kernel, &variant, &options)
                        .map(|r| r.entries.into_iter().map(|(_, m)| m).collect()),
                };
                match modules {
                    Ok(modules) => {
                        compiled += 1;
                        for m in &modules {
                            if let Some(Err(message)) = validate::spirv_val(m) {
                                invalid.push(format!(
                                    "{name}: `{}` (rank {rank}):\n{message}",
                                    kernel.name
                                ));
                            }
                        }
                    }
                    Err(e) => *refused.entry(e.to_string()).or_default() += 1,
                }
            }
        }
    }
    println!("spirv_coverage: {compiled} kernel variants written as SPIR-V");
    for (why, n) in &refused {
        println!("  not yet ({n}): {why}");
    }
    assert!(
        invalid.is_empty(),
        "{} invalid modules:\n{}",
        invalid.len(),
        invalid[..invalid.len().min(5)].join("\n")
    );
    assert!(compiled > 100, "only {compiled} variants written");
    println!("spirv_coverage: map modules by instances per grid-stride step: {steps:?}");
    // The suite reaches every form of the shared map driver: unrolled steps, single steps
    // (kernels with loops) and an invocation per instance (groups, a return inside a loop).
    for form in [Some(4), Some(1), None] {
        assert!(
            steps.contains_key(&form),
            "no map module of form {form:?}: {steps:?}"
        );
    }
}
