//! Every kernel of the conformance suite written as PTX (1-D and 2-D launches; a reduction's
//! entries with its scan's, also with the shared one-pass scan entry) branches only to labels
//! its function defines, each defined once: what `ptxas` would refuse first, checked without
//! a GPU (CI has none; a missing label once reached the GPU machine's JIT).

use brook_check::exec;
use brook_codegen::abi::Variant;
use brook_codegen::ptx::{compile, Target};
use brook_ir::KernelKind;
use std::collections::HashSet;

/// The label problems of one module's text: a branch to an undefined label, a label defined
/// twice.
fn label_problems(text: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let entries = text.split("\n.visible .entry ").skip(1);
    for function in entries.chain(text.split("\n.func ").skip(1)) {
        let (mut defined, mut used) = (HashSet::new(), Vec::new());
        for line in function.lines().map(str::trim) {
            if let Some(label) = line.strip_suffix(':').filter(|l| l.starts_with("$L")) {
                if !defined.insert(label.to_string()) {
                    problems.push(format!("{label} defined twice"));
                }
            } else if line.contains("bra ") {
                let target = line.rsplit(' ').next().unwrap_or("").trim_end_matches(';');
                used.push(target.to_string());
            }
            if line == "}" {
                break;
            }
        }
        for label in used.iter().filter(|l| l.starts_with("$L")) {
            if !defined.contains(label) {
                problems.push(format!("a branch to {label}, which is not defined"));
            }
        }
    }
    problems
}

#[test]
fn every_branch_has_its_label() {
    let (mut modules, mut problems) = (0, Vec::new());
    let mut one_pass = Target::DEFAULT;
    one_pass.tuning.scan_one_pass = true;
    let targets = [Target::DEFAULT, one_pass];
    for (name, _, program) in exec::compiled_cases() {
        let valid = program.module();
        for (index, kernel) in valid.module().kernels.iter().enumerate() {
            let reduces = kernel.kind == KernelKind::Reduce;
            // A scan's module also with the shared one-pass entry in place of PTX's own.
            let targets = if reduces { &targets[..] } else { &targets[..1] };
            for (rank, target) in (1..=2).flat_map(|rank| targets.iter().map(move |t| (rank, t))) {
                let mut variant = Variant::plain(kernel, rank);
                variant.scan = reduces;
                let Ok(ptx) = compile(valid, index, &variant, target) else {
                    continue;
                };
                modules += 1;
                for p in label_problems(&ptx.text) {
                    problems.push(format!("{name}: `{}` (rank {rank}): {p}", kernel.name));
                }
            }
        }
    }
    println!("ptx_labels: {modules} modules");
    assert!(modules > 200, "only {modules} modules written");
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems[..problems.len().min(10)].join("\n")
    );
}
