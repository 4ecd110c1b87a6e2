//! A few hundred random kernels on every available device, each compared with the interpreter
//! bit for bit (the differential fuzzer of `brook_check::fuzz`); every third of them on the
//! Vulkan devices (lavapipe compiles each kernel with LLVM: all 300 took CI 4 minutes). The seed changes every day so
//! that CI keeps covering new kernels; `BROOK_FUZZ_SEED` and `BROOK_FUZZ_COUNT` override it
//! (`brook-fuzz show SEED INDEX` prints one kernel).

use brook_check::fuzz::{self, shrink};
use std::time::{SystemTime, UNIX_EPOCH};

/// `brook-fuzz shrink`, end to end (`fuzz_shrink/`).
mod fuzz_shrink;

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok()?.parse().ok()
}

#[test]
fn random_kernels_give_the_interpreters_bits_on_every_device() {
    let day = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400);
    let seed = env_number("BROOK_FUZZ_SEED").unwrap_or(day);
    let count = env_number("BROOK_FUZZ_COUNT").unwrap_or(300);
    let devices = fuzz::devices(&[]);
    let without_vulkan: Vec<_> = devices
        .iter()
        .filter(|d| d.kind() != brook::DeviceKind::Vulkan)
        .cloned()
        .collect();
    let names: Vec<String> = devices.iter().map(|d| d.info().to_string()).collect();
    println!(
        "fuzz: seed {seed}, {count} kernels on {} (BROOK_FUZZ_SEED={seed} reproduces)",
        names.join(", ")
    );
    let mut findings = Vec::new();
    for index in 0..count {
        let generated = fuzz::generate(seed, index);
        let devices = if index % 3 == 0 {
            &devices
        } else {
            &without_vulkan
        };
        if let Some(finding) = fuzz::check(&generated, devices) {
            let small = shrink::minimise(&generated, &finding, devices, 300);
            let origin = format!("seed {seed} kernel {index}");
            findings.push(format!(
                "kernel {index}: {:?} on {}: {}\nminimised:\n{}",
                finding.kind,
                finding.device,
                finding.message,
                fuzz::case_text(&small, &finding, &origin)
            ));
        }
    }
    assert!(
        findings.is_empty(),
        "{} of {count} random kernels (seed {seed}) went wrong:\n{}",
        findings.len(),
        findings.join("\n")
    );
}
