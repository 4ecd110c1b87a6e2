//! The `brcc` binary as a user runs it: exit codes, output streams, flags.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn brcc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_brcc"))
        .args(args)
        .output()
        .expect("run brcc")
}

fn fixture(kind: &str, name: &str) -> String {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../brook-front/tests/fixtures")
        .join(kind)
        .join(name);
    path.to_string_lossy().into_owned()
}

fn temp_file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("brcc-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write temp file");
    path.to_string_lossy().into_owned()
}

#[test]
fn a_loom_program_is_checked_with_its_imports() {
    let lib = temp_file(
        "lib.loom",
        "func sqr(x: Float32): Float32\n  return x * x\n",
    );
    let good = temp_file(
        "good.loom",
        "import lib.loom\nkernel k(a: Float32[THREADS])\n  a[T] <- sqr(a[T])\n  return\n",
    );
    assert!(lib.ends_with("lib.loom"));
    let out = brcc(&["check", &good]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
    let bad = temp_file(
        "bad.loom",
        "kernel k(a: Int32[THREADS])\n\treturn\n  a[T] <- 12abc + y\n",
    );
    let out = brcc(&["check", &bad]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("error[LM0103]") && err.contains("bad.loom:2:1"),
        "{err}"
    );
    assert!(
        err.contains("LM0102") && err.contains("bad.loom:3:19: error[LM0301]: `y` is not declared"),
        "{err}"
    );
    assert!(err.contains("4 error(s)"), "{err}");
}

#[test]
fn clean_file_exits_zero_silently() {
    let out = brcc(&["check", &fixture("ok", "matmul.br")]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/sum.br");
    let out = brcc(&["check", &example.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
}

#[test]
fn errors_go_to_stderr_with_location_and_exit_one() {
    let file = temp_file(
        "bad.br",
        "kernel void k(float a<>, out float b<>)\n{\n    b = a + c;\n}\n",
    );
    let out = brcc(&["check", &file]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bad.br:3:13: error[BR0401]"), "{stderr}");
    assert!(stderr.contains("3 |     b = a + c;"), "{stderr}");
    assert!(stderr.contains("1 error(s), 0 warning(s)"), "{stderr}");
}

/// Brook+ 1.4's brcc reported operand mismatches under strong type checking as level-1
/// warnings and compiled the program; `-x` makes them errors, `-g` (BrookGPU) silent.
#[test]
fn strong_typing_mismatches_are_warnings_and_x_makes_them_errors() {
    let file = temp_file(
        "mixed.br",
        "kernel void k(float a<>, out float b<>)\n{\n    b = a + 1.0;\n}\n",
    );
    let out = brcc(&["check", &file]);
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("mixed.br:3:9: warning[BR0403]: Mismatched operands"),
        "{stderr}"
    );
    assert!(
        stderr.contains("note: To disable strong type checking, use -a"),
        "{stderr}"
    );
    // float + double is a double (one warning), stored into a float (another).
    assert!(stderr.contains("0 error(s), 2 warning(s)"), "{stderr}");
    let out = brcc(&["check", "-x", &file]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("error[BR0403]"), "{stderr}");
    let out = brcc(&["check", "-g", &file]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn relaxed_checking_turns_the_error_into_a_conversion() {
    let file = temp_file(
        "relaxed.br",
        "kernel void k(float a<>, out float b<>)\n{\n    b = a + 1.0;\n}\n",
    );
    let out = brcc(&["check", "-a", &file]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shown = brcc(&["check", "-a", "-w", "2", &file]);
    assert!(String::from_utf8_lossy(&shown.stderr).contains("warning[BR0419]"));
    let strict = brcc(&["check", "-a", "-w2", "-x", &file]);
    assert_eq!(strict.status.code(), Some(1));
}

#[test]
fn preprocessor_flags_reach_the_frontend() {
    let file = temp_file("pp.br", "kernel void k(float a<>, out float b<>)\n{\n#ifdef TWICE\n    b = a + a;\n#else\n    b = a;\n#endif\n}\n");
    assert_eq!(
        brcc(&["check", "-pp", "-D", "TWICE", &file]).status.code(),
        Some(0)
    );
    let bad_value = brcc(&["check", "-pp", "-D", "N=0x10", &file]);
    assert_eq!(bad_value.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad_value.stderr).contains("Follow signed integer semantics"));
}

#[test]
fn help_lists_the_seed_flags() {
    let out = brcc(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "-h", "-k", "-r", "-o", "-p", "-s", "-b", "-f", "-i", "-l", "-w", "-x", "-a", "-e", "-c",
        "-pp", "-D", "-n",
    ] {
        assert!(text.contains(&format!("  {flag} ")), "help lacks {flag}");
    }
}

#[test]
fn usage_errors_exit_two() {
    assert_eq!(
        brcc(&["check", "/nonexistent/file.br"]).status.code(),
        Some(2)
    );
    assert_eq!(brcc(&["check"]).status.code(), Some(2));
    assert_eq!(brcc(&["check", "-w", "9", "f.br"]).status.code(), Some(2));
    assert_eq!(brcc(&["--frobnicate"]).status.code(), Some(2));
}

#[test]
fn emit_ir_prints_the_kernel_ir() {
    let file = temp_file(
        "saxpy.br",
        "kernel void saxpy(float a, float x<>, float y<>, out float r<>) { r = a * x + y; }\n",
    );
    let out = brcc(&[&file, "--emit", "ir"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "kernel saxpy(const a: float, in x: float, in y: float, out r: float) {\n    r = ((a * x) + y)\n}\n"
    );
    // A name of its own: tests run in parallel and share the directory.
    let bad = temp_file("undefined.br", "kernel void f(out float r<>) { r = q; }\n");
    let out = brcc(&[&bad, "--emit", "ir"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("undefined.br:1:"));
    let out = brcc(&[&file, "--emit", "wasm"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn emit_ptx_prints_one_module_per_kernel() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/sum.br");
    let out = brcc(&[&example.to_string_lossy(), "--emit", "ptx"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(".target sm_90") && text.contains(".visible .entry brook_main"));
    assert!(
        text.contains("add.rn.f32"),
        "float additions keep their rounding mode"
    );
    let older = brcc(&[&example.to_string_lossy(), "--emit", "ptx", "--sm", "80"]);
    let text = String::from_utf8_lossy(&older.stdout);
    assert!(text.contains(".target sm_80") && text.contains(".version 7.0"));
    let bad = brcc(&[&example.to_string_lossy(), "--emit", "ptx", "--sm", "8.0"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--sm takes a compute capability"));
}

#[test]
fn a_heavy_reduction_writes_its_combine_step_a_few_times() {
    let case = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/conformance/reduce_heavy_combine.case");
    let case = std::fs::read_to_string(case).unwrap();
    let source = case
        .split("source:\n")
        .nth(1)
        .and_then(|rest| rest.split("run ").next())
        .unwrap();
    let heavy = temp_file("heavy.br", source);
    let out = brcc(&[&heavy, "--emit", "ptx"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches(".entry").count(), 1, "the serial entry alone");
    assert!(text.contains(".local"), "its stack lives in local memory");
    assert!(
        text.lines().count() < 2_000,
        "{} lines",
        text.lines().count()
    );
    let light = temp_file(
        "light.br",
        "reduce void sum(float a<>, reduce float r<>) { r += a; }\n",
    );
    let out = brcc(&[&light, "--emit", "ptx"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains(".entry brook_warp"));
}

#[test]
fn generated_cpp_keeps_lines_and_marks_functions_extern_c_with_e() {
    let source = "#include <stdio.h>\n\
                  kernel void twice(float a<>, out float b<>)\n{\n    b = a + a;\n}\n\
                  unsigned int helper(const char* text) { return (unsigned int)text[0]; }\n\
                  static int hidden(void) { return 1; }\n\
                  int main(void)\n{\n    float a<4, 2>;\n    return hidden();\n}\n";
    let path = temp_file("gen.br", source);
    let out = brcc(&[&path, "-e", "-l", "--emit", "cpp"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cpp = String::from_utf8_lossy(&out.stdout);
    let body = cpp
        .split_once("#line 1 ")
        .expect("a #line directive with -l")
        .1;
    let lines: Vec<&str> = body.lines().skip(1).collect();
    assert_eq!(
        lines.len(),
        source.lines().count(),
        "line for line:\n{body}"
    );
    assert!(
        lines[1].contains("struct brook_kernel_twice_"),
        "{}",
        lines[1]
    );
    assert!(
        lines[5].starts_with("extern \"C\" unsigned int helper"),
        "{}",
        lines[5]
    );
    assert!(lines[6].starts_with("static int hidden"), "{}", lines[6]);
    assert!(
        lines[9].contains("::brook::Stream<float > a(::brook::Declared(")
            && lines[9].contains("gen.br\", 10), {(unsigned int)(4), (unsigned int)(2)})"),
        "{}",
        lines[9]
    );
    let plain = brcc(&[&path, "--emit", "cpp"]);
    assert!(!String::from_utf8_lossy(&plain.stdout).contains("extern \"C\""));
}

#[test]
fn a_program_with_errors_generates_nothing() {
    let path = temp_file(
        "arrays.br",
        "typedef struct { float v[2]; } pair;\nkernel void f(pair p<>, out pair q<>) { q = p; }\n",
    );
    let prefix = path.trim_end_matches(".br").to_string();
    let out = brcc(&[&path]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr.contains("arrays.br:2:"), "{stderr}");
    assert!(!Path::new(&format!("{prefix}.cpp")).exists());
}

#[test]
fn k_keeps_the_device_code_beside_the_cpp() {
    let path = temp_file(
        "keep.br",
        "kernel void twice(float a<>, out float b<>) { b = a + a; }\n",
    );
    let prefix = path.trim_end_matches(".br").replace("keep", "kept");
    let out = brcc(&[&path, "-k", "-o", &prefix]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for ext in ["cpp", "h", "ir", "ptx"] {
        let file = format!("{prefix}.{ext}");
        let text = std::fs::read_to_string(&file).unwrap_or_else(|_| panic!("{file} is missing"));
        assert!(text.contains("twice"), "{file}");
    }
    assert!(std::fs::read_to_string(format!("{prefix}.ptx"))
        .unwrap()
        .contains(".entry brook_main"));
}

/// `-o brookgenfiles/NAME` (the folder seed 001's samples include from) makes the folder.
#[test]
fn o_into_a_new_folder_makes_it() {
    let path = temp_file(
        "folder.br",
        "kernel void twice(float a<>, out float b<>) { b = a + a; }\n",
    );
    let dir = Path::new(&path).with_file_name(format!("gen-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let prefix = dir.join("brookgenfiles/folder");
    let out = brcc(&[&path, "-o", &prefix.to_string_lossy()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for ext in ["cpp", "h"] {
        assert!(prefix.with_extension(ext).exists(), "{ext}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn p_makes_the_program_prefer_device_types_in_order() {
    let path = temp_file("targets.br", "int main(void) { return 0; }\n");
    let out = brcc(&[&path, "-p", "cal", "-p", "cpu", "--emit", "cpp"]);
    let cpp = String::from_utf8_lossy(&out.stdout);
    assert!(
        cpp.contains("::brook::detail::select_targets(\"cuda,cpu\")"),
        "{cpp}"
    );
    let plain = brcc(&[&path, "--emit", "cpp"]);
    assert!(!String::from_utf8_lossy(&plain.stdout).contains("select_targets"));
}

/// A hand-written `X.h` beside `X.br` is never replaced: brcc writes nothing and says why,
/// unless `--force`; files brcc wrote itself are rewritten.
#[test]
fn brcc_never_overwrites_a_file_it_did_not_write() {
    let dir = std::env::temp_dir().join(format!("brcc-keep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let source = dir.join("mine.br");
    std::fs::write(
        &source,
        "kernel void k(float a<>, out float b<>) { b = a; }\n",
    )
    .unwrap();
    let header = dir.join("mine.h");
    std::fs::write(&header, "// my own header\n").unwrap();
    let source = source.to_string_lossy().into_owned();
    let out = brcc(&[&source]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("refusing to overwrite") && stderr.contains("mine.h"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&header).unwrap(),
        "// my own header\n"
    );
    assert!(!dir.join("mine.cpp").exists(), "nothing is written");
    assert_eq!(brcc(&[&source, "--force"]).status.code(), Some(0));
    assert!(std::fs::read_to_string(&header)
        .unwrap()
        .contains("Generated by brcc"));
    // Generated files are rewritten without --force.
    assert_eq!(brcc(&[&source]).status.code(), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `CXX` naming a compiler that does not exist is an error, never a silent fallback.
#[test]
fn a_cxx_that_does_not_run_is_an_error() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/sum.br");
    let out = Command::new(env!("CARGO_BIN_EXE_brcc"))
        .args(["run", &example.to_string_lossy()])
        .env("CXX", "/nonexistent/c++")
        .output()
        .expect("run brcc");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("CXX=/nonexistent/c++"), "{stderr}");
}

#[test]
fn a_loom_kernel_is_emitted_for_a_grid() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/loom/maximum.loom");
    let example = example.to_string_lossy();
    let out = brcc(&[&example, "--emit", "ir", "--grid", "64x32/8x4"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ir = String::from_utf8_lossy(&out.stdout);
    assert!(
        ir.contains("kernel maximum(") && ir.contains("group(32, 1, 1)"),
        "{ir}"
    );
    let out = brcc(&[&example, "--emit", "ptx", "--grid", "64x32/8x4"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("bar.sync"));
    let out = brcc(&[&example, "--emit", "ir", "--grid", "64x32/8x3"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("whole blocks"));
    // A `for` may count in a `global` value (once lowering refused it).
    let global_counter = temp_file(
        "global_counter.loom",
        "kernel k(a: Int32[THREADS])\n  global g: Int32\n  for g <- 0 .. 3\n    a[T] <- g\n  return\n",
    );
    let out = brcc(&[&global_counter, "--emit", "ir"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("kernel k("));
}

/// `brcc ... | head`: a reader that has gone is not an error and never a panic.
#[test]
fn a_closed_output_pipe_ends_brcc_quietly() {
    let source = temp_file(
        "pipe.br",
        "kernel void k(float a<>, out float b<>) { b = a * 2.0f; }\n",
    );
    for emit in ["ir", "ptx", "cpp"] {
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        let out = Command::new(env!("CARGO_BIN_EXE_brcc"))
            .args([&source, "--emit", emit])
            .stdout(writer)
            .output()
            .expect("run brcc");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "--emit {emit}: {err}");
        assert!(!err.contains("panicked"), "--emit {emit}: {err}");
    }
}

/// `brcc build` takes the host program first; a `.loom` file there is refused with the order.
#[test]
fn a_loom_file_is_not_a_host_program() {
    let loom = temp_file(
        "first.loom",
        "kernel k(a: Int32[THREADS])\n  a[T] <- T\n  return\n",
    );
    let out = brcc(&["build", &loom, "-o", "/nonexistent/never"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the first file is the host program (.br or C++)"),
        "{err}"
    );
}

/// `brcc --version` names the version, the commit and its date.
#[test]
fn the_version_names_the_commit_and_its_date() {
    let out = brcc(&["--version"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    let (name, rest) = text
        .trim()
        .split_once(" (")
        .expect("brcc VERSION (COMMIT DATE)");
    assert_eq!(name, concat!("brcc ", env!("CARGO_PKG_VERSION")));
    let words: Vec<&str> = rest.trim_end_matches(')').split(' ').collect();
    assert_eq!(words.len(), 2, "{text}");
    let date_like = |d: &str| d == "unknown" || (d.len() == 10 && d.as_bytes()[4] == b'-');
    assert!(date_like(words[1]), "{text}");
}

/// A megabyte of garbage (much of it on one line) gives a bounded report: at most
/// `MAX_ERRORS` errors and the one that says the rest are not shown, each excerpt a window of
/// its line. (It used to take 24 s and 2.8 GB for 20,000 bad bytes on one line; a megabyte of
/// them now checks in about 0.1 s, docs/TESTING.md.)
#[test]
fn a_megabyte_of_garbage_gives_a_bounded_report() {
    let mut text = String::from("kernel void k(float a<>, out float b<>) { b = a");
    let mut state = 12345u32;
    while text.len() < 1 << 20 {
        state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
        text.push(b"@$`\\ ;{}(<"[(state >> 16) as usize % 10] as char);
        if state.is_multiple_of(5000) {
            text.push('\n');
        }
    }
    let path = temp_file("garbage.br", &text);
    let out = brcc(&["check", &path]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("error[BR0105]: too many errors: stopping after 50"),
        "{err}"
    );
    assert_eq!(err.matches(": error[").count(), 51, "{err}");
    assert!(err.len() < 64 * 1024, "{} bytes of messages", err.len());
}

/// A NUL byte in a comment is an error at its place: the C++ compiler and the kernels' source
/// that brcc embeds would stop there, and every kernel after it would silently vanish.
#[test]
fn a_nul_byte_in_a_comment_is_an_error() {
    let path = temp_file(
        "nul.br",
        "// one \0 byte\nkernel void k(float a<>, out float b<>) { b = a; }\n",
    );
    let out = brcc(&["check", &path]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nul.br:1:8: error[BR0102]: a NUL byte"),
        "{err}"
    );
}
