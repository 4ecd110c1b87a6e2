//! `brcc run` on every example program with an expected output (`examples/NAME.br` beside
//! `examples/NAME.expected`) and every program of the compatibility suite (`tests/compat/`:
//! programs in the BrookGPU, Brook+ legacy and Brook+ C++-API styles; a leading comment line
//! `// brcc-flags: ...` gives the flags to build with, `// brcc-with: ...` more files of the
//! program): the program is generated as C++,
//! compiled by the system C++
//! compiler against `libbrook_capi.a`, run on each kind of device this machine has
//! (`BRT_RUNTIME` = cpu, interp, a CPU device group, cuda where a GPU is present, vulkan where
//! a Vulkan device is (lavapipe in CI); each but the group and vulkan again with
//! `BRT_PROFILE=1` and with `BRT_CROSSCHECK=1`), and its output must equal the file. Without a C++ compiler the test says so and checks nothing.

#[path = "../../brook-capi/tests/support/cxx.rs"]
mod cxx;

use std::path::{Path, PathBuf};
use std::process::Command;

fn examples() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut found: Vec<(PathBuf, String)> = ["examples", "tests/compat"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(root.join(dir)).expect("program directory"))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "br"))
        .filter_map(|p| {
            let expected = std::fs::read_to_string(p.with_extension("expected")).ok()?;
            Some((p, expected))
        })
        .collect();
    found.sort();
    found
}

/// The flags a program's first line gives (`// brcc-flags: -g`).
fn build_flags(source: &str) -> Vec<&str> {
    header_words(source, "// brcc-flags:")
}

/// The other files of a program, beside it (`// brcc-with: part.br`, a first line).
fn companion_files(source: &str, program: &Path) -> Vec<PathBuf> {
    let dir = program.parent().unwrap_or(Path::new("."));
    header_words(source, "// brcc-with:")
        .into_iter()
        .map(|f| dir.join(f))
        .collect()
}

/// The words after `prefix` in the first line that starts with it, among the leading `//` lines.
fn header_words<'s>(source: &'s str, prefix: &str) -> Vec<&'s str> {
    source
        .lines()
        .take_while(|l| l.starts_with("//"))
        .find_map(|l| l.strip_prefix(prefix))
        .map(|f| f.split_whitespace().collect())
        .unwrap_or_default()
}

/// The brcc under test with its runtime library built, or `None` (said on stdout) without a
/// C++ compiler.
fn brcc_with_library(what: &str) -> Option<&'static Path> {
    if cxx::compiler().is_none() {
        println!("run_examples: no C++ compiler ($CXX, c++, g++, clang++): {what} not run");
        return None;
    }
    let brcc = Path::new(env!("CARGO_BIN_EXE_brcc"));
    cxx::static_library(brcc.parent().expect("target/<profile>"));
    Some(brcc)
}

/// `brcc build FLAGS INPUTS -o EXE`, which must succeed.
fn build(brcc: &Path, flags: &[&str], inputs: &[PathBuf], exe: &Path) {
    let built = Command::new(brcc)
        .arg("build")
        .args(flags)
        .args(inputs)
        .arg("-o")
        .arg(exe)
        .output()
        .expect("run brcc");
    assert!(
        built.status.success(),
        "brcc build {}:\n{}",
        inputs[0].display(),
        String::from_utf8_lossy(&built.stderr)
    );
}

/// Runs `exe` (in `dir`, if given) on every kind of device, and on each single device again
/// under each observer (`BRT_PROFILE=1`, `BRT_CROSSCHECK=1`: an observer never changes a
/// result); its output must be `expected` every time.
fn prints_on_every_runtime(exe: &Path, dir: Option<&Path>, expected: &str, what: &str) {
    let runtimes = cxx::runtimes();
    // Observers on the devices that are not software Vulkan (lavapipe compiles every
    // kernel with LLVM again in each process: the plain run is the one CI can afford).
    let observed = runtimes
        .iter()
        .filter(|r| !r.contains('+') && **r != "vulkan")
        .flat_map(|r| [(*r, Some("BRT_PROFILE")), (*r, Some("BRT_CROSSCHECK"))]);
    let plain = runtimes.iter().map(|r| (*r, None));
    for (runtime, observer) in plain.chain(observed) {
        let mut command = Command::new(exe);
        if let Some(dir) = dir {
            command.current_dir(dir);
        }
        if let Some(observer) = observer {
            command.env(observer, "1");
        }
        let run = command
            .env("BRT_RUNTIME", runtime)
            .output()
            .expect("run the program");
        assert_eq!(
            String::from_utf8_lossy(&run.stdout),
            expected,
            "{what} on {runtime} (observer {observer:?}): {}",
            String::from_utf8_lossy(&run.stderr)
        );
    }
}

#[test]
fn every_example_prints_its_expected_output_on_every_device() {
    let Some(brcc) = brcc_with_library("examples") else {
        return;
    };
    let examples = examples();
    assert!(
        examples.len() >= 2,
        "examples with expected output: {}",
        examples.len()
    );
    // The examples on as many threads as the machine has cores (each builds with the C++
    // compiler and runs in its own processes; one at a time left CI's second core idle).
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((path, expected)) = examples.get(i) else {
                    break;
                };
                build_and_run_example(brcc, path, expected);
            });
        }
    });
}

/// Builds the example at `path` and checks that it prints `expected` on every runtime.
fn build_and_run_example(brcc: &Path, path: &Path, expected: &str) {
    let exe = std::env::temp_dir().join(format!(
        "brcc-example-{}-{}",
        path.file_stem().and_then(|s| s.to_str()).unwrap_or("x"),
        std::process::id()
    ));
    // Lossy and without a byte-order mark: some programs are saved as Windows editors did.
    let bytes = std::fs::read(path).expect("program text");
    let source = String::from_utf8_lossy(&bytes);
    let source = source.trim_start_matches('\u{feff}');
    let flags = build_flags(source);
    let mut inputs: Vec<PathBuf> = vec![path.to_path_buf()];
    inputs.extend(companion_files(source, path));
    build(brcc, &flags, &inputs, &exe);
    prints_on_every_runtime(&exe, None, expected, &path.display().to_string());
    let _ = std::fs::remove_file(&exe);
}

#[test]
fn brcc_run_passes_arguments_output_and_exit_code() {
    if cxx::compiler().is_none() {
        println!("run_examples: no C++ compiler: not run");
        return;
    }
    let brcc = Path::new(env!("CARGO_BIN_EXE_brcc"));
    cxx::static_library(brcc.parent().expect("target/<profile>"));
    let dir = std::env::temp_dir().join(format!("brcc-run-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let program = dir.join("args.br");
    std::fs::write(
        &program,
        "#include <stdio.h>\n#include <stdlib.h>\n\
         kernel void twice(float a<>, out float b<>) { b = a + a; }\n\
         int main(int argc, char** argv) {\n\
         \x20   float a<3>; float b<3>; float in[3] = {1, 2, 3}; float out[3];\n\
         \x20   streamRead(a, in); twice(a, b); streamWrite(b, out);\n\
         \x20   printf(\"%s %.0f %.0f %.0f\\n\", argv[1], out[0], out[1], out[2]);\n\
         \x20   fprintf(stderr, \"to stderr\\n\");\n\
         \x20   return atoi(argv[2]);\n\
         }\n",
    )
    .expect("write the program");
    let run = Command::new(brcc)
        .arg("run")
        .arg(&program)
        .args(["--", "hello", "7"])
        .output()
        .expect("run brcc");
    assert_eq!(String::from_utf8_lossy(&run.stdout), "hello 2 4 6\n");
    assert!(String::from_utf8_lossy(&run.stderr).contains("to stderr"));
    assert_eq!(run.status.code(), Some(7));
    // A C++ error in host code is reported at the .br line (`run` writes #line by default).
    std::fs::write(&program, "int main() {\n  return undefined_name;\n}\n").expect("write");
    let run = Command::new(brcc)
        .args(["run"])
        .arg(&program)
        .output()
        .expect("run brcc");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success());
    assert!(stderr.contains("args.br:2"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A kernel declared but defined in no file of the program: its launches say so on stderr
/// and leave their outputs in error (a stream target) rather than silently stale.
#[test]
fn a_kernel_no_linked_file_defines_is_reported() {
    if cxx::compiler().is_none() {
        println!("run_examples: no C++ compiler: not run");
        return;
    }
    let brcc = Path::new(env!("CARGO_BIN_EXE_brcc"));
    cxx::static_library(brcc.parent().expect("target/<profile>"));
    let dir = std::env::temp_dir().join(format!("brcc-missing-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let program = dir.join("missing.br");
    std::fs::write(
        &program,
        "#include <stdio.h>\n\
         kernel void gone(float a<>, out float b<>);\n\
         reduce void total(float a<>, reduce float r<>);\n\
         int main() {\n\
         \x20   float a<3>; float b<3>; float in[3] = {1, 2, 3}; float sum = -1;\n\
         \x20   streamRead(a, in); gone(a, b); total(a, sum);\n\
         \x20   printf(\"%d %g\\n\", b.error() == brook::BR_ERROR_KERNEL, sum);\n\
         \x20   return 0;\n\
         }\n",
    )
    .expect("write the program");
    let run = Command::new(brcc)
        .arg("run")
        .arg(&program)
        .output()
        .expect("run brcc");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(String::from_utf8_lossy(&run.stdout), "1 -1\n", "{stderr}");
    assert!(
        stderr.contains("kernel `gone` (called at ")
            && stderr.contains("missing.br:6) did not run"),
        "{stderr}"
    );
    assert!(stderr.contains("kernel `total` (called at "), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cpp_api_style_programs_include_the_generated_headers() {
    let Some(compiler) = cxx::compiler() else {
        println!("run_examples: no C++ compiler: not run");
        return;
    };
    let brcc = Path::new(env!("CARGO_BIN_EXE_brcc"));
    let library = cxx::static_library(brcc.parent().expect("target/<profile>"));
    for name in ["search", "particles"] {
        cpp_style(brcc, &compiler, &library, name);
    }
}

/// `examples/cpp_style/NAME.br` through brcc into NAME.h, and NAME_main.cpp built with it.
fn cpp_style(brcc: &Path, compiler: &str, library: &Path, name: &str) {
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/cpp_style");
    let dir = std::env::temp_dir().join(format!("brcc-cpp-style-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let generated = Command::new(brcc)
        .arg(here.join(format!("{name}.br")))
        .arg("-o")
        .arg(dir.join(name))
        .output()
        .expect("run brcc");
    assert!(
        generated.status.success(),
        "{}",
        String::from_utf8_lossy(&generated.stderr)
    );
    let exe = dir.join("main");
    let compiled = Command::new(compiler)
        .args(["-std=c++11", "-Wall", "-I"])
        .arg(here.join("../../include"))
        .arg("-I")
        .arg(&dir)
        .arg(here.join(format!("{name}_main.cpp")))
        .arg(library)
        .args(["-lpthread", "-ldl", "-lm", "-lrt", "-lutil", "-o"])
        .arg(&exe)
        .output()
        .expect("run the C++ compiler");
    assert!(
        compiled.status.success(),
        "{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    let run = Command::new(&exe).output().expect("run the program");
    let expected =
        std::fs::read_to_string(here.join(format!("{name}_main.expected"))).expect("expected");
    assert_eq!(String::from_utf8_lossy(&run.stdout), expected, "{name}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_a_cpp_compiler_brcc_run_says_so_in_one_sentence() {
    let brcc = Path::new(env!("CARGO_BIN_EXE_brcc"));
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/sum.br");
    let out = Command::new(brcc)
        .arg("run")
        .arg(&example)
        .env("PATH", "")
        .env_remove("CXX")
        .output()
        .expect("run brcc");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("no C++ compiler found") && stderr.contains("install"),
        "{stderr}"
    );
}

/// Every fixture that checks clean (`fixtures/ok`, and the `fixtures/diag` snapshots with
/// warnings only) must also compile as C++: a clean check whose generated C++ does not
/// compile is a brcc bug (issue 16). Syntax only: most fixtures have no `main`.
#[test]
fn every_clean_fixture_compiles_as_cpp() {
    let Some(brcc) = brcc_with_library("clean fixtures") else {
        return;
    };
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../brook-front/tests/fixtures");
    let mut clean: Vec<PathBuf> = ["ok", "diag"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(fixtures.join(dir)).expect("fixture directory"))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "br"))
        .filter(|p| {
            std::fs::read_to_string(p.with_extension("stderr"))
                .map_or(true, |snapshot| !snapshot.contains("error["))
        })
        .collect();
    clean.sort();
    assert!(clean.len() >= 10, "clean fixtures: {}", clean.len());
    for path in clean {
        let source = std::fs::read_to_string(&path).expect("fixture text");
        let flags = build_flags(&source);
        let exe = std::env::temp_dir().join(format!("brcc-fixture-{}", std::process::id()));
        let built = Command::new(brcc)
            .arg("build")
            .args(&flags)
            .arg(&path)
            .arg("-o")
            .arg(&exe)
            .args(["--cxxflags", "-fsyntax-only"])
            .output()
            .expect("run brcc");
        assert!(
            built.status.success(),
            "{} checks clean but its C++ does not compile:\n{}",
            path.display(),
            String::from_utf8_lossy(&built.stderr)
        );
    }
}

#[test]
fn a_cpp_host_runs_loom_kernels() {
    let Some(brcc) = brcc_with_library("the LOOM host program") else {
        return;
    };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/loom");
    let exe = std::env::temp_dir().join(format!("brcc-loom-host-{}", std::process::id()));
    build(brcc, &[], &[dir.join("host.cpp")], &exe);
    let expected = std::fs::read_to_string(dir.join("host.expected")).expect("expected");
    prints_on_every_runtime(&exe, Some(&dir), &expected, "examples/loom/host.cpp");
    let _ = std::fs::remove_file(&exe);
}

/// `.loom` files given to `brcc build` are embedded: the program runs from a directory
/// without them (here one whose `sum_of_squares.loom` is wrong), and an import is embedded
/// with the file that imports it.
#[test]
fn loom_files_given_to_brcc_build_are_embedded() {
    let Some(brcc) = brcc_with_library("the embedded LOOM host program") else {
        return;
    };
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/loom");
    let elsewhere = std::env::temp_dir().join(format!("brcc-loom-embedded-{}", std::process::id()));
    std::fs::create_dir_all(elsewhere.join("lib")).expect("temp dir");
    std::fs::write(elsewhere.join("sum_of_squares.loom"), "not LOOM\n").expect("decoy");
    let exe = elsewhere.join("host");
    let inputs = [
        examples.join("host.cpp"),
        examples.join("sum_of_squares.loom"),
        examples.join("shift_left.loom"),
    ];
    build(brcc, &[], &inputs, &exe);
    let expected = std::fs::read_to_string(examples.join("host.expected")).expect("expected");
    prints_on_every_runtime(
        &exe,
        Some(&elsewhere),
        &expected,
        "host.cpp, .loom embedded",
    );

    // An import, found beside the importing file when building and embedded with it.
    let lib = elsewhere.join("lib");
    std::fs::write(
        lib.join("twice.loom"),
        "func twice(x: Int32): Int32\n  return 2 * x\n",
    )
    .unwrap();
    std::fs::write(
        lib.join("doubled.loom"),
        "import twice.loom\nkernel doubled(a: Int32[THREADS])\n  a[T] <- twice(a[T]) + T\n  return\n",
    )
    .unwrap();
    std::fs::write(
        lib.join("main.cpp"),
        "#include <brook/brook.hpp>\n#include <cstdio>\nint main() {\n    brook::LoomKernel k(\"doubled.loom\", NULL, 4, 2);\n    int v[4] = {1, 2, 3, 4};\n    unsigned n[1] = {4};\n    brook::Stream<int> s(1, n);\n    s.read(v);\n    k(s);\n    s.write(v);\n    std::printf(\"%d %d %d %d\\n\", v[0], v[1], v[2], v[3]);\n    return 0;\n}\n",
    )
    .unwrap();
    let exe2 = elsewhere.join("doubled");
    build(
        brcc,
        &[],
        &[lib.join("main.cpp"), lib.join("doubled.loom")],
        &exe2,
    );
    std::fs::remove_dir_all(&lib).expect("remove the sources");
    prints_on_every_runtime(&exe2, Some(&elsewhere), "2 5 8 11\n", "an embedded import");

    // A .loom file with an error stops the build, with the diagnostic at its line.
    std::fs::write(
        elsewhere.join("bad.loom"),
        "kernel k(a: Int32[THREADS])\n  a[T] <- y\n  return\n",
    )
    .unwrap();
    let built = Command::new(brcc)
        .arg("build")
        .arg(examples.join("host.cpp"))
        .arg(elsewhere.join("bad.loom"))
        .arg("-o")
        .arg(elsewhere.join("never"))
        .output()
        .expect("run brcc");
    let err = String::from_utf8_lossy(&built.stderr);
    assert_eq!(built.status.code(), Some(1), "{err}");
    assert!(
        err.contains("bad.loom:2:11: error[LM0301]: `y` is not declared"),
        "{err}"
    );
    assert!(!elsewhere.join("never").exists());
    let _ = std::fs::remove_dir_all(&elsewhere);
}

/// `brcc run` of an unchanged program reuses its executable (the compiler is not run again);
/// a changed header next to it, or a changed `.br`, builds again; `brcc build` copies the
/// cached executable.
#[test]
fn an_unchanged_program_is_not_built_again() {
    let Some(brcc) = brcc_with_library("the build cache") else {
        return;
    };
    let real = cxx::compiler().expect("a C++ compiler");
    let dir = std::env::temp_dir().join(format!("brcc-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    // A compiler that logs every compile or link, then runs the real one.
    let log = dir.join("compiles.log");
    let wrapper = dir.join("cxx.sh");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\ncase \"$1\" in --version) ;; *) echo \"$@\" >> '{}' ;; esac\nexec {real} \"$@\"\n",
            log.display()
        ),
    )
    .expect("wrapper");
    Command::new("chmod")
        .arg("+x")
        .arg(&wrapper)
        .status()
        .expect("chmod");
    std::fs::write(dir.join("value.h"), "#define VALUE 7\n").expect("header");
    let program = dir.join("prog.br");
    std::fs::write(
        &program,
        "#include <stdio.h>\n#include \"value.h\"\nint main() { printf(\"%d\\n\", VALUE); return 0; }\n",
    )
    .expect("program");
    let run = || {
        let out = Command::new(brcc)
            .arg("run")
            .arg(&program)
            .env("CXX", &wrapper)
            .env("BROOK_CACHE_DIR", dir.join("cache"))
            .output()
            .expect("brcc run");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let compiles = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .count()
    };
    assert_eq!(run(), "7\n");
    let first = compiles();
    assert!(first >= 2, "a compile and a link: {first}");
    assert_eq!(run(), "7\n");
    assert_eq!(compiles(), first, "the second run used the cache");
    std::fs::write(dir.join("value.h"), "#define VALUE 42\n").expect("header");
    assert_eq!(run(), "42\n", "a changed header is a miss");
    assert!(compiles() > first);
    let exe = dir.join("prog");
    let built = Command::new(brcc)
        .args(["build"])
        .arg(&program)
        .arg("-o")
        .arg(&exe)
        .env("CXX", &wrapper)
        .env("BROOK_CACHE_DIR", dir.join("cache"))
        .output()
        .expect("brcc build");
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let out = Command::new(&exe).output().expect("the built program");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "42\n");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `brcc build KERNELS.br MAIN.cpp`: the C++ source finds the kernels' generated header
/// without a `brcc KERNELS.br` first, as `search.h` (before the system's own `search.h`), as
/// `brookgenfiles/search.h` (seed 001's samples) and as `built/search.hpp` (BrookGPU's
/// makefiles); a source that does not compile is named.
#[test]
fn brcc_build_gives_cpp_sources_the_generated_header() {
    let Some(brcc) = brcc_with_library("generated headers") else {
        return;
    };
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/cpp_style");
    let dir = std::env::temp_dir().join(format!("brcc-build-header-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::copy(here.join("search.br"), dir.join("search.br")).expect("copy");
    let main = std::fs::read_to_string(here.join("search_main.cpp")).expect("main");
    let expected = std::fs::read_to_string(here.join("search_main.expected")).expect("expected");
    let sdk_main = main.replace("\"search.h\"", "\"brookgenfiles/search.h\"");
    assert_ne!(sdk_main, main, "search_main.cpp includes \"search.h\"");
    let brookgpu_main = main.replace("\"search.h\"", "\"built/search.hpp\"");
    let mains = [
        ("plain_main.cpp", &main),
        ("sdk_main.cpp", &sdk_main),
        ("brookgpu_main.cpp", &brookgpu_main),
    ];
    for (name, text) in mains {
        std::fs::write(dir.join(name), text).expect("write main");
        let exe = dir.join("search");
        build(brcc, &[], &[dir.join("search.br"), dir.join(name)], &exe);
        let run = Command::new(&exe).output().expect("run the program");
        assert_eq!(String::from_utf8_lossy(&run.stdout), expected, "{name}");
    }
    assert!(
        !dir.join("search.h").exists(),
        "brcc build writes no header beside the source"
    );
    std::fs::write(
        dir.join("bad_main.cpp"),
        "int main() { return undefined_name; }\n",
    )
    .unwrap();
    let failed = Command::new(brcc)
        .arg("build")
        .arg(dir.join("search.br"))
        .arg(dir.join("bad_main.cpp"))
        .arg("-o")
        .arg(dir.join("bad"))
        .output()
        .expect("run brcc");
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(!failed.status.success());
    assert!(
        stderr.contains("could not compile") && stderr.contains("bad_main.cpp (messages above)"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// BrookGPU's makefiles built `built/NAME.hpp` from a Brook header `NAME.brh` (structs and
/// kernel prototypes) for the C++ host, and the kernels from `NAME.br`: `brcc -g NAME.brh -o
/// built/NAME` writes that header (the prototypes as BrookGPU's kernel functions), and the
/// host built with the kernels' file calls them with `brook::stream`s of the header's struct.
#[test]
fn a_brook_header_becomes_the_cpp_header_of_a_brookgpu_host() {
    let Some(brcc) = brcc_with_library("Brook headers") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("brcc-brh-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).expect("write");
    write(
        "rays.brh",
        "typedef struct Ray_t { float3 o; float3 d; } Ray;\n\
         kernel void krnShift(Ray r<>, float dx, out Ray q<>);\n\
         kernel void krnX(Ray r<>, out float x<>);\n\
         reduce void krnSum(float v<>, reduce float s<>);\n",
    );
    write(
        "rays.br",
        "#include \"rays.brh\"\n\
         kernel void krnShift(Ray r<>, float dx, out Ray q<>) { q.o = r.o + float3(dx, 0, 0); q.d = r.d; }\n\
         kernel void krnX(Ray r<>, out float x<>) { x = r.o.x; }\n\
         reduce void krnSum(float v<>, reduce float s<>) { s += v; }\n",
    );
    write(
        "main.cpp",
        "#include <brook/brook.hpp>\n#include <cstdio>\n#include \"built/rays.hpp\"\n\
         int main() {\n\
         \x20   using namespace brook;\n\
         \x20   stream a = stream::create<Ray>(4), b = stream::create<Ray>(4);\n\
         \x20   stream xs = stream::create<float>(4);\n\
         \x20   Ray rv[4];\n\
         \x20   for (int i = 0; i < 4; i++) { rv[i].o = float3(i, 0, 0); rv[i].d = float3(0, 0, 1); }\n\
         \x20   a.read(rv);\n\
         \x20   krnShift(a, 0.5f, b);\n\
         \x20   krnX(b, xs);\n\
         \x20   float sum = 0;\n\
         \x20   krnSum(xs, sum);\n\
         \x20   std::printf(\"sum %g\\n\", sum);\n\
         \x20   return 0;\n\
         }\n",
    );
    let header = Command::new(brcc)
        .arg("-g")
        .arg(dir.join("rays.brh"))
        .arg("-o")
        .arg(dir.join("built/rays"))
        .output()
        .expect("run brcc");
    assert!(
        header.status.success(),
        "{}",
        String::from_utf8_lossy(&header.stderr)
    );
    assert!(dir.join("built/rays.hpp").exists() && !dir.join("built/rays.cpp").exists());
    let exe = dir.join("rays");
    build(
        brcc,
        &["-g"],
        &[dir.join("rays.br"), dir.join("main.cpp")],
        &exe,
    );
    let run = Command::new(&exe).output().expect("run the program");
    assert_eq!(String::from_utf8_lossy(&run.stdout), "sum 8\n");
    let _ = std::fs::remove_dir_all(&dir);
}
