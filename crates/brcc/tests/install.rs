//! `brcc install PREFIX`: an installed brcc finds its library and headers relative to itself,
//! so a prefix that is moved keeps working; programs link against the shared library by
//! default (their run path names it) and `--static` ones need no library at run time.

#[path = "../../brook-capi/tests/support/cxx.rs"]
mod cxx;

use std::path::Path;
use std::process::{Command, Output};

fn succeeded(output: Output, what: &str) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{what} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// Runs the installed brcc with no hint of the checkout (no BROOK_HOME, no build cache, no
/// library path: cargo's names `target/<profile>`).
fn installed_brcc(prefix: &Path) -> Command {
    let mut command = Command::new(prefix.join("bin/brcc"));
    command
        .env_remove("BROOK_HOME")
        .env_remove("LD_LIBRARY_PATH")
        .env("BROOK_CACHE_DIR", "off")
        .env("BRT_RUNTIME", "cpu");
    command
}

#[test]
fn an_installed_prefix_builds_programs_after_it_is_moved() {
    if cxx::compiler().is_none() {
        println!("install: no C++ compiler ($CXX, c++, g++, clang++): not run");
        return;
    }
    let brcc = Path::new(env!("CARGO_BIN_EXE_brcc"));
    cxx::static_library(brcc.parent().expect("target/<profile>"));
    let dir = std::env::temp_dir().join(format!("brcc-install-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (first, moved) = (dir.join("first"), dir.join("moved"));
    let listed = succeeded(
        Command::new(brcc)
            .arg("install")
            .arg(&first)
            .output()
            .unwrap(),
        "brcc install",
    );
    for file in [
        "bin/brcc",
        "lib/libbrook_capi.so",
        "include/brook/brook.hpp",
    ] {
        assert!(
            first.join(file).is_file(),
            "{file} not installed:\n{listed}"
        );
        assert!(listed.contains(file), "{file} not listed:\n{listed}");
    }
    std::fs::rename(&first, &moved).expect("move the prefix");

    let program = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/sum.br");
    let expected = std::fs::read_to_string(program.with_extension("expected")).unwrap();
    let run = installed_brcc(&moved).arg("run").arg(&program).output();
    assert_eq!(succeeded(run.unwrap(), "brcc run (shared)"), expected);

    let exe = dir.join("sum-static");
    let build = installed_brcc(&moved)
        .args(["build", "--static"])
        .arg(&program)
        .arg("-o")
        .arg(&exe)
        .output();
    succeeded(build.unwrap(), "brcc build --static");
    let shared_exe = dir.join("sum-shared");
    let build = installed_brcc(&moved)
        .arg("build")
        .arg(&program)
        .arg("-o")
        .arg(&shared_exe)
        .output();
    succeeded(build.unwrap(), "brcc build");
    // Without the prefix, the static program still runs; the shared one says what is missing.
    std::fs::remove_dir_all(&moved).expect("remove the prefix");
    for runtime in cxx::runtimes() {
        let ran = Command::new(&exe).env("BRT_RUNTIME", runtime).output();
        assert_eq!(succeeded(ran.unwrap(), runtime), expected, "on {runtime}");
    }
    let ran = Command::new(&shared_exe)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    assert!(!ran.status.success());
    assert!(
        String::from_utf8_lossy(&ran.stderr).contains("libbrook_capi.so"),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn install_without_a_prefix_says_so() {
    let out = Command::new(env!("CARGO_BIN_EXE_brcc"))
        .arg("install")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs the prefix"));
}

#[test]
fn a_brook_home_without_headers_is_named() {
    let empty = std::env::temp_dir().join(format!("brcc-empty-home-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let program = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/sum.br");
    let out = Command::new(env!("CARGO_BIN_EXE_brcc"))
        .env("BROOK_HOME", &empty)
        .env("BROOK_CACHE_DIR", "off")
        .arg("run")
        .arg(&program)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("BROOK_HOME=") && stderr.contains("no include/brook/brook.hpp"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&empty);
}
