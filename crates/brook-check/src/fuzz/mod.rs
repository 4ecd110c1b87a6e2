//! The differential fuzzer: random well-typed kernels with their inputs, each compiled once and
//! run on the interpreter and on every other device chosen, every output word compared
//! ([`crate::exec::judge`], the conformance suite's judge). Case `i` of seed `s` is the same
//! kernel on every machine. A failing kernel is cut down ([`shrink`]) and written as a
//! conformance case with the interpreter's outputs as its expected values.

mod ast;
mod gen;
mod kernel;
mod rng;
pub mod shrink;
mod values;

use crate::case::{self, Case, Expectation, Run};
use crate::exec::{self, FailureKind};
use ast::Stmt;
use brook::{CompileOptions, Device, DeviceKind, Program};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A random kernel: its source (a fixed head, a body the minimiser may cut) and its runs.
#[derive(Clone, Debug)]
pub struct Generated {
    /// Structs and the kernel's signature, up to its opening brace.
    prelude: String,
    body: Vec<Stmt>,
    runs: Vec<Run>,
    /// Outputs may differ from the interpreter's by this many ulps (transcendental outputs).
    ulp: Option<u64>,
    /// The arguments that are results (outputs, reduction targets).
    results: Vec<String>,
}

impl Generated {
    pub fn source(&self) -> String {
        let mut s = self.prelude.clone();
        ast::write_block(&self.body, 1, &mut s);
        s.push_str("}\n");
        s
    }

    pub fn case(&self) -> Case {
        Case {
            flags: Vec::new(),
            ulp: self.ulp,
            source: self.source(),
            runs: self.runs.clone(),
            ..Case::default()
        }
    }
}

/// Case `index` of the run with `seed`.
pub fn generate(seed: u64, index: u64) -> Generated {
    kernel::generate(&mut rng::Rng::for_case(seed, index))
}

/// What went wrong with a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FindingKind {
    /// The compiler refused a program the generator meant to be valid.
    DoesNotCompile,
    /// A run failed (on the interpreter: the generator made a bad run, or the runtime refused
    /// a valid one; elsewhere: the device refused what the interpreter ran).
    Failed,
    /// The outputs differ from the interpreter's.
    Differs,
    /// Something panicked.
    Panicked,
}

#[derive(Clone, Debug)]
pub struct Finding {
    pub kind: FindingKind,
    /// The device it happened on (`compiler` when it did not compile).
    pub device: String,
    pub message: String,
}

impl Finding {
    /// Whether `other` is the same failure (for the minimiser: same kind, same device).
    pub fn same_as(&self, other: &Finding) -> bool {
        self.kind == other.kind && self.device == other.device
    }
}

/// Compiles and runs a kernel on `devices` (the interpreter first) and compares.
pub fn check(generated: &Generated, devices: &[Device]) -> Option<Finding> {
    check_counting(generated, devices).0
}

/// As [`check`], and whether some device's outputs differed only as its flushing of `float`
/// subnormals makes them ([`exec::Judgement::flushed_subnormals`]: counted apart, not a
/// finding).
pub fn check_counting(generated: &Generated, devices: &[Device]) -> (Option<Finding>, bool) {
    let result = catch_unwind(AssertUnwindSafe(|| check_inner(generated, devices)));
    result.unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic".to_string());
        let finding = Finding {
            kind: FindingKind::Panicked,
            device: "?".to_string(),
            message,
        };
        (Some(finding), false)
    })
}

fn check_inner(generated: &Generated, devices: &[Device]) -> (Option<Finding>, bool) {
    let case = generated.case();
    let program = match Program::compile("fuzz.br", &case.source, &CompileOptions::default()) {
        Ok(p) => p,
        Err(e) => {
            let finding = Finding {
                kind: FindingKind::DoesNotCompile,
                device: "compiler".to_string(),
                message: e.to_string(),
            };
            return (Some(finding), false);
        }
    };
    let judgement = exec::judge(&case, &program, devices);
    let failures = judgement.failures;
    let flushed = !judgement.flushed_subnormals.is_empty();
    let first = failures
        .iter()
        .find(|f| f.device.starts_with("interp"))
        .or(failures.first());
    let finding = first.map(|first| Finding {
        kind: match first.kind {
            FailureKind::Failed | FailureKind::Unexpected => FindingKind::Failed,
            FailureKind::Differs => FindingKind::Differs,
        },
        device: first.device.clone(),
        message: first.message.clone(),
    });
    (finding, flushed)
}

/// The devices to compare: the interpreter, then every device whose type is in `types` (or
/// every other device when `types` is empty).
pub fn devices(types: &[String]) -> Vec<Device> {
    exec::devices_interpreter_first()
        .into_iter()
        .enumerate()
        .filter(|(i, d)| {
            *i == 0
                || (d.kind() != DeviceKind::Interp
                    && (types.is_empty() || types.iter().any(|t| t == d.type_name())))
        })
        .map(|(_, d)| d)
        .collect()
}

/// The minimised kernel written as a conformance case: the interpreter's outputs are its
/// expected values, the comment says where it came from.
pub fn case_text(generated: &Generated, finding: &Finding, origin: &str) -> String {
    let comment = format!(
        "Found by brook-fuzz ({origin}), minimised.\n{:?} on {}: {}",
        finding.kind,
        finding.device,
        finding.message.lines().next().unwrap_or("")
    );
    expected_case_text(generated, &comment)
}

/// The generated kernel as a conformance case whose expected values are the interpreter's
/// outputs (none where the interpreter cannot run it), headed by `comment`.
pub fn expected_case_text(generated: &Generated, comment: &str) -> String {
    let mut case = generated.case();
    let interp = Device::interp();
    if let Ok(program) = Program::compile("fuzz.br", &case.source, &CompileOptions::default()) {
        let reference = exec::judge(&case, &program, std::slice::from_ref(&interp)).reference;
        for (r, run) in case.runs.iter_mut().enumerate() {
            if let Some(outputs) = reference.get(&r) {
                run.outputs = expectations(&program, run, outputs, generated);
            }
        }
    }
    case::write(&case, comment)
}

fn expectations(
    program: &Program,
    run: &Run,
    outputs: &std::collections::HashMap<String, Vec<u8>>,
    generated: &Generated,
) -> Vec<Expectation> {
    let mut out = Vec::new();
    for name in &generated.results {
        let (Some(bytes), Some(ty)) = (outputs.get(name), exec::spec_type(run, name)) else {
            continue;
        };
        let Ok(element) = exec::element_type(program, &ty) else {
            continue;
        };
        let mut parts = Vec::new();
        exec::components(&element, 0, &mut parts);
        let mut values = Vec::new();
        for e in 0..bytes.len() / element.size() {
            for &(kind, offset) in &parts {
                values.push(exec::component_text(
                    kind,
                    &bytes[e * element.size() + offset..],
                ));
            }
        }
        out.push(Expectation {
            name: name.clone(),
            values,
            tolerance: generated.ulp.map(|_| 1e-6),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_and_index_always_give_the_same_kernel() {
        for index in 0..50 {
            let (a, b) = (generate(7, index), generate(7, index));
            assert_eq!(a.source(), b.source());
            assert_eq!(case::write(&a.case(), ""), case::write(&b.case(), ""));
        }
        assert_ne!(generate(7, 0).source(), generate(8, 0).source());
    }

    #[test]
    fn a_written_case_reads_back_to_the_same_case() {
        for index in 0..50 {
            let text = case::write(&generate(3, index).case(), "a comment");
            let back = case::parse(&text).expect("the written case parses");
            assert_eq!(case::write(&back, "a comment"), text);
        }
    }

    #[test]
    fn the_minimiser_keeps_the_failure_and_drops_the_rest() {
        // A kernel made invalid by one assignment to an undeclared name at its end.
        let mut generated = (0..)
            .map(|i| generate(11, i))
            .find(|g| g.body.len() >= 4)
            .expect("a kernel with a few statements");
        let bad = Stmt::Assign("undeclared".to_string(), "=", gen::zero(generated_ty()));
        generated.body.push(bad);
        let devices = vec![Device::interp()];
        let finding = check(&generated, &devices).expect("it does not compile");
        assert_eq!(finding.kind, FindingKind::DoesNotCompile);
        let small = shrink::minimise(&generated, &finding, &devices, 500);
        assert!(small.source().contains("undeclared"), "{}", small.source());
        assert!(
            small.body.len() < generated.body.len(),
            "nothing was dropped:\n{}",
            small.source()
        );
        let again = check(&small, &devices).expect("it still fails");
        assert!(again.same_as(&finding));
    }

    /// The kernels call every exact intrinsic of the table that returns a number (a new
    /// intrinsic fails this until the generator calls it); the library's transcendentals are
    /// left out, their results differing by device within their ulp bounds.
    #[test]
    fn kernels_call_every_exact_intrinsic() {
        use brook_ir::intrinsic::{Exactness, Signature, INTRINSICS};
        let sources: Vec<String> = (0..400).map(|i| generate(5, i).source()).collect();
        let missing: Vec<&str> = INTRINSICS
            .iter()
            .filter(|i| i.exactness == Exactness::Exact && i.signature != Signature::Classify)
            .map(|i| i.name)
            .filter(|name| {
                let call = format!("{name}(");
                !sources.iter().any(|s| {
                    s.match_indices(&call).any(|(at, _)| {
                        !s[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_')
                    })
                })
            })
            .collect();
        assert!(missing.is_empty(), "never called: {missing:?}");
    }

    fn generated_ty() -> ast::Ty {
        ast::Ty::new(brook_ir::ScalarKind::I32, 1)
    }
}
