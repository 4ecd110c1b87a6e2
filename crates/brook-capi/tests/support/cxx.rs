//! What the tests that compile C++ against `libbrook_capi.a` share: this crate's
//! `tests/cpp.rs`, and brcc's `tests/run_examples.rs` and `tests/runtime_errors.rs`, which
//! include this file by path.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The C++ compiler: `$CXX`, else the first of `c++`, `g++`, `clang++` that runs.
pub fn compiler() -> Option<String> {
    first_that_runs("CXX", &["c++", "g++", "clang++"])
}

/// The program the environment variable `variable` names, else the first of `names` that
/// runs (`--version` succeeds).
pub fn first_that_runs(variable: &str, names: &[&str]) -> Option<String> {
    let candidates = std::env::var(variable)
        .ok()
        .into_iter()
        .chain(names.iter().map(|n| n.to_string()));
    candidates.into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Builds `libbrook_capi.a` into `profile` (a `target/<profile>` directory: `cargo test`
/// builds the crate only as a Rust library) and returns its path.
pub fn static_library(profile: &Path) -> PathBuf {
    let target = profile.parent().expect("target directory");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .args([
            "build",
            "--quiet",
            "-p",
            "brook-capi",
            "--lib",
            "--target-dir",
        ])
        .arg(target);
    if profile.file_name().is_some_and(|n| n == "release") {
        build.arg("--release");
    }
    let status = build.status().expect("run cargo");
    assert!(status.success(), "building libbrook_capi.a failed");
    let library = profile.join("libbrook_capi.a");
    assert!(library.exists(), "{} is missing", library.display());
    library
}

/// The `BRT_RUNTIME` values to run a program with: every kind of device this machine has, and
/// a device group (the CPU twice: each launch split into two blocks, with the group's copies).
pub fn runtimes() -> Vec<&'static str> {
    let mut runtimes = vec!["cpu", "interp", "cpu:0+cpu:0"];
    for gpu in ["cuda", "vulkan"] {
        if !brook::Device::of_type(gpu).unwrap_or_default().is_empty() {
            runtimes.push(gpu);
        }
    }
    runtimes
}
