//! Every map kernel of the conformance suite (no thread group), written as SPIR-V for a 1-D
//! and a 2-D launch, is a valid module (`spirv-val`, where installed; CI installs it) or names
//! what it cannot yet write. A step of issue 52: the Vulkan device runs what this writes; the
//! test prints how many kernels compile and which constructs stop the others.

use brook_check::exec;
use brook_codegen::abi::Variant;
use brook_codegen::spirv::{map, validate};
use brook_ir::KernelKind;
use std::collections::BTreeMap;

#[test]
fn map_kernels_are_valid_spirv() {
    let (mut compiled, mut invalid) = (0, Vec::new());
    let mut refused: BTreeMap<String, usize> = BTreeMap::new();
    let options = map::Options {
        float64: true,
        fused_fma: false,
        preserve_signed_zero: (true, true),
    };
    for (name, _, program) in exec::compiled_cases() {
        let module = program.module();
        for kernel in &module.kernels {
            if kernel.kind != KernelKind::Map || kernel.group_size.is_some() {
                continue;
            }
            for rank in 1..=2 {
                let variant = Variant::plain(kernel, rank);
                match map::compile(module, kernel, &variant, &options) {
                    Ok(m) => {
                        compiled += 1;
                        if let Some(Err(message)) = validate::spirv_val(&m.module) {
                            invalid.push(format!(
                                "{name}: `{}` (rank {rank}):\n{message}",
                                kernel.name
                            ));
                        }
                    }
                    Err(e) => *refused.entry(e.to_string()).or_default() += 1,
                }
            }
        }
    }
    println!("spirv_coverage: {compiled} map kernel variants written as SPIR-V");
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
}
