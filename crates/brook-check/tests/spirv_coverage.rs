//! Every map, thread-group and reduction kernel of the conformance suite, written as SPIR-V for a 1-D and a 2-D launch (a reduction's serial and scan entries; a map through each form of the grid-stride driver), is a valid module (`spirv-val`, where installed; CI installs it) or names
//! what it cannot yet write (2-D launches as a device without doubles writes them, where the
//! kernel allows). A step of issue 52: the Vulkan device runs what this writes; the
//! test prints how many kernels compile and which constructs stop the others.

use brook_check::exec;
use brook_codegen::abi::Variant;
use brook_codegen::spirv::{map, reduce, validate, SpirvModule};
use brook_ir::KernelKind;
use std::collections::BTreeMap;

/// Heavy reductions: the serial entry alone, its stack walked in loops (`spirv_heavy/`).
mod spirv_heavy;

/// What one thread's share of the cases gave.
#[derive(Default)]
struct Tally {
    compiled: usize,
    invalid: Vec<String>,
    refused: BTreeMap<String, usize>,
    /// Map modules by the driver's instances per step (`None`: an invocation per instance).
    steps: BTreeMap<Option<u64>, usize>,
}

impl Tally {
    fn merge(mut self, other: Tally) -> Tally {
        self.compiled += other.compiled;
        self.invalid.extend(other.invalid);
        for (why, n) in other.refused {
            *self.refused.entry(why).or_default() += n;
        }
        for (form, n) in other.steps {
            *self.steps.entry(form).or_default() += n;
        }
        self
    }

    /// Writes and validates every kernel of case `name` for a 1-D and a 2-D launch.
    fn case(&mut self, name: &str, program: &brook::Program) {
        let module = program.module();
        for kernel in &module.kernels {
            for rank in 1..=2 {
                let mut variant = Variant::plain(kernel, rank);
                variant.scan = kernel.kind == KernelKind::Reduce;
                let mut options = options(rank);
                // 2-D launches as a device without doubles writes them (integer division
                // and square roots), where the kernel needs none.
                options.float64 = rank == 1 || needs_doubles(module, kernel);
                let modules: Result<Vec<SpirvModule>, _> = match kernel.kind {
                    KernelKind::Map => map::compile(module, kernel, &variant, &options).map(|m| {
                        *self.steps.entry(m.instances_per_step).or_default() += 1;
                        vec![m.module]
                    }),
                    KernelKind::Reduce => reduce::compile(module, kernel, &variant, &options)
                        .map(|r| r.entries.into_iter().map(|(_, m)| m).collect()),
                };
                match modules {
                    Ok(modules) => {
                        self.compiled += 1;
                        for m in &modules {
                            if let Some(Err(message)) = validate::spirv_val(m) {
                                self.invalid.push(format!(
                                    "{name}: `{}` (rank {rank}):\n{message}",
                                    kernel.name
                                ));
                            }
                        }
                    }
                    Err(e) => *self.refused.entry(e.to_string()).or_default() += 1,
                }
            }
        }
    }
}

/// Whether `kernel` computes with `double` or with an operation this dialect computes
/// through it.
fn needs_doubles(module: &brook_ir::Module, kernel: &brook_ir::Kernel) -> bool {
    use brook_codegen::{leaves, spirv::without_doubles};
    leaves::first_use_of_kind(module, kernel, brook_ir::ScalarKind::F64).is_some()
        || without_doubles::first_use_needing_doubles(kernel).is_some()
}

/// The options the modules are written with for a launch of `rank` axes.
fn options(rank: usize) -> map::Options {
    map::Options {
        float64: true,
        fused_fma: false,
        preserve_signed_zero: (true, true),
        // The widening that flushes explicitly (NVIDIA's driver) validated too.
        flushes_f32: true,
        // A GPU's map modules: every form of the driver.
        unrolled_maps: true,
        // Reductions' subgroup path validated too.
        subgroup_shuffle: true,
        // Read at run time for rank 1, compiled in for the others: both forms validated.
        subgroup_size: if rank == 1 { 0 } else { 32 },
        // Loops counted against a limit (lavapipe's) for rank 2: validated too.
        loop_limit: if rank == 2 { 65_535 } else { 0 },
        // And scans' one-pass entry, for 1-D launches (its rows are the other entries').
        lookback_scans: rank == 1,
        tuning: Default::default(),
    }
}

#[test]
fn kernels_are_valid_spirv() {
    let cases: Vec<(String, brook::Program)> = exec::compiled_cases()
        .map(|(name, _, program)| (name, program))
        .collect();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(8));
    let tally = std::thread::scope(|scope| {
        let shares: Vec<_> = (0..threads)
            .map(|t| {
                let cases = &cases;
                scope.spawn(move || {
                    let mut tally = Tally::default();
                    for (name, program) in cases.iter().skip(t).step_by(threads) {
                        tally.case(name, program);
                    }
                    tally
                })
            })
            .collect();
        shares
            .into_iter()
            .map(|share| share.join().expect("a share of the cases"))
            .fold(Tally::default(), Tally::merge)
    });
    let Tally {
        compiled,
        invalid,
        refused,
        steps,
    } = tally;
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
