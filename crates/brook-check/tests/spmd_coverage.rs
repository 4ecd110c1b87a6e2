//! Every map kernel of the conformance suite that the CPU device plans to run in SIMD gangs
//! compiles as gangs, and every reduction whose blocks of leaves it plans to combine in lanes
//! compiles so: a kernel whose gangs fail to compile falls back to one at a time (correct,
//! but slow), and this test names it. Thread groups whose threads may run in lockstep
//! (`group_gangs.case`) must run in gangs too. On a host without SIMD gangs
//! (`BROOK_SPMD=off`, or no SSE4.1/NEON) it checks that every kernel runs one at a time.

use brook_check::exec;
use brook_codegen::abi::Variant;
use brook_codegen::cpu;
use brook_ir::KernelKind;

#[test]
fn planned_gangs_compile() {
    let mut checked = 0;
    let mut in_gangs = 0;
    let mut groups_in_gangs = 0;
    let mut failures = Vec::new();
    // The CPU device's options: the environment's tuning (`BROOK_SPMD`).
    let options = cpu::Options {
        tuning: brook_runtime::kernel_cache::process_tuning(),
    };
    for (name, _, program) in exec::compiled_cases() {
        let module = program.module();
        for (index, kernel) in module.kernels.iter().enumerate() {
            if !matches!(kernel.kind, KernelKind::Map | KernelKind::Reduce) {
                continue;
            }
            for rank in 1..=2 {
                let planned = cpu::planned_gang_lanes(module, index, rank, &options);
                let variant = Variant::plain(kernel, rank);
                let compiled = match cpu::compile(module, index, &variant, &options) {
                    Ok(c) => c,
                    Err(e) => {
                        failures.push(format!("{name}: `{}`: {e}", kernel.name));
                        continue;
                    }
                };
                checked += 1;
                in_gangs += usize::from(compiled.gang_lanes > 1);
                groups_in_gangs +=
                    usize::from(compiled.gang_lanes > 1 && kernel.group_size.is_some());
                if compiled.gang_lanes != planned {
                    failures.push(format!(
                        "{name}: `{}` (rank {rank}) runs {} at a time, planned {planned}",
                        kernel.name, compiled.gang_lanes
                    ));
                }
            }
        }
    }
    println!(
        "spmd_coverage: {checked} map and reduce variants compiled, {in_gangs} in gangs \
         ({groups_in_gangs} of them thread groups)"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // group_gangs.case's `phases` runs in gangs wherever anything does.
    assert!(
        in_gangs == 0 || groups_in_gangs > 0,
        "no thread group runs in gangs"
    );
    assert!(checked > 100, "only {checked} variants");
}
