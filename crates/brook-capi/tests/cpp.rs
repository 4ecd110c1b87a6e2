//! The C++ API (`include/brook/brook.hpp` over this crate's C ABI), compiled with the system
//! C++ compiler against `libbrook_capi.a` and run (with `BRT_RUNTIME` naming each kind of
//! device, and two device groups): each program's output must equal its `.expected` file. Without a C++ compiler the test says so and checks nothing.

#[path = "support/cxx.rs"]
mod cxx;

use cxx::{compiler, static_library};
use std::path::{Path, PathBuf};
use std::process::Command;

/// `target/<profile>`: where cargo put this test and the static library.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps")
        .to_path_buf()
}

fn run_program(name: &str) {
    let Some(cxx) = compiler() else {
        println!("cpp: no C++ compiler ($CXX, c++, g++, clang++): C++ API not tested");
        return;
    };
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let include = here.join("../../include");
    let source = here.join("tests/cpp").join(format!("{name}.cpp"));
    let library = static_library(&profile_dir());
    let exe = std::env::temp_dir().join(format!("brook-cpp-{name}-{}", std::process::id()));
    let compiled = Command::new(&cxx)
        .args(["-std=c++11", "-Wall", "-Wextra", "-o"])
        .arg(&exe)
        .arg("-I")
        .arg(&include)
        .arg(&source)
        .arg(&library)
        .args(["-lpthread", "-ldl", "-lm", "-lrt", "-lutil"])
        .output()
        .expect("run the C++ compiler");
    assert!(
        compiled.status.success(),
        "{cxx} failed on {name}.cpp:\n{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    let expected = std::fs::read_to_string(here.join("tests/cpp").join(format!("{name}.expected")))
        .expect("expected output");
    // The program on every kind of device this machine has (BRT_RUNTIME picks the default),
    // and on device groups (the CPU twice, both interpreters).
    let mut runtimes = cxx::runtimes();
    runtimes.extend(["cpu:0+cpu:0", "interp:0+interp:1"]);
    for runtime in runtimes {
        let run = Command::new(&exe)
            .env("BRT_RUNTIME", runtime)
            .output()
            .expect("run the program");
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert!(
            run.status.success(),
            "{name} on {runtime} exited with {}:\n{stdout}\n{}",
            run.status,
            String::from_utf8_lossy(&run.stderr)
        );
        assert_eq!(stdout, expected, "{name} on {runtime}: output differs");
    }
    let _ = std::fs::remove_file(&exe);
}

#[test]
fn the_stream_api_from_cpp() {
    run_program("stream_api");
}

#[test]
fn device_groups_from_cpp() {
    run_program("group_api");
}

#[test]
fn loom_kernels_from_cpp() {
    run_program("loom_api");
}

/// `Stream<T>` derives from the untyped `brook::stream`, so typed streams bind to
/// `brook::stream&`; a typed stream of another element type must still not compile as a
/// `Stream<T>` (only one that stores the same bytes: `fixed4` as `uchar4`).
#[test]
fn typed_streams_of_other_elements_do_not_convert() {
    let Some(cxx) = compiler() else {
        println!("cpp: no C++ compiler ($CXX, c++, g++, clang++): C++ API not tested");
        return;
    };
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../include");
    let program = "#include <brook/brook.hpp>\n\
        void typed(const brook::Stream<int>&) {}\n\
        void bytes(const brook::Stream<uchar4>&) {}\n\
        void untyped(brook::stream&) {}\n\
        int main() {\n\
            unsigned int d[1] = {4};\n\
            brook::Stream<float> a(1, d);\n\
            brook::Stream<fixed4> b(1, d);\n\
            brook::stream u = a;\n\
            untyped(a); bytes(b); typed(u);\n\
        #ifdef MISMATCH\n\
            typed(a);\n\
        #endif\n\
            return 0;\n\
        }\n";
    let source = std::env::temp_dir().join(format!("brook-cpp-typed-{}.cpp", std::process::id()));
    std::fs::write(&source, program).expect("write the program");
    let syntax = |define: Option<&str>| {
        Command::new(&cxx)
            .args(["-std=c++11", "-fsyntax-only", "-I"])
            .arg(&include)
            .args(define)
            .arg(&source)
            .output()
            .expect("run the C++ compiler")
    };
    let fine = syntax(None);
    assert!(
        fine.status.success(),
        "{}",
        String::from_utf8_lossy(&fine.stderr)
    );
    let mismatch = syntax(Some("-DMISMATCH"));
    assert!(
        !mismatch.status.success(),
        "a Stream<float> was taken as a Stream<int>"
    );
    let _ = std::fs::remove_file(&source);
}
