//! `include/brook/brook_c.h`, the C interface: every function it declares is one this crate
//! exports with the same parameter and return types (and every exported function is declared),
//! so the header cannot drift from the Rust definitions; and `examples/c/sum.c` compiles as
//! C99 (`-pedantic -Werror`) against `libbrook_capi.a` and prints `sum.expected` on every kind
//! of device (and builds as C++ too). Without a C compiler the second part says so and checks nothing.

#[path = "support/cxx.rs"]
mod cxx;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A function's return type and parameter types, spelled as C spells them (`const char*`).
type Signature = (String, Vec<String>);

/// A C type with its spaces normalised: `const char *` and `const char*` are the same.
fn normal_c(ty: &str) -> String {
    let ty = ty.split_whitespace().collect::<Vec<_>>().join(" ");
    ty.replace(" *", "*")
}

/// A Rust FFI type as C spells it.
fn rust_to_c(ty: &str) -> String {
    let ty = ty.trim();
    if let Some(inner) = ty.strip_prefix("*const ") {
        return format!("const {}*", pointee(inner));
    }
    if let Some(inner) = ty.strip_prefix("*mut ") {
        return format!("{}*", rust_to_c_pointee_mut(inner));
    }
    match ty.trim_start_matches("std::ffi::") {
        "" | "()" => "void",
        "c_int" => "int",
        "u32" => "uint32_t",
        "usize" => "size_t",
        "f32" => "float",
        other => other,
    }
    .to_string()
}

/// What a `*const` points at: bytes are `void` in C (any buffer), the rest as themselves.
fn pointee(inner: &str) -> String {
    match inner.trim() {
        "u8" | "c_void" => "void".into(),
        "c_char" => "char".into(),
        other => rust_to_c(other),
    }
}

fn rust_to_c_pointee_mut(inner: &str) -> String {
    if let Some(rest) = inner.trim().strip_prefix("*mut ") {
        return format!("{}*", rust_to_c_pointee_mut(rest));
    }
    pointee(inner)
}

/// Every `extern "C" fn` the crate's sources export (`#[no_mangle]`), by name.
fn rust_functions() -> BTreeMap<String, Signature> {
    const EXTERN_FN: &str = "extern \"C\" fn ";
    let mut found = BTreeMap::new();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for entry in std::fs::read_dir(src).expect("src") {
        let text = std::fs::read_to_string(entry.expect("entry").path()).expect("source");
        for exported in text.split("#[no_mangle]").skip(1) {
            let Some(at) = exported.find(EXTERN_FN) else {
                continue;
            };
            let piece = &exported[at + EXTERN_FN.len()..];
            let name = piece[..piece.find('(').expect("(")].trim().to_string();
            let params_end = matching_paren(piece);
            let params = &piece[piece.find('(').unwrap() + 1..params_end];
            let after = &piece[params_end + 1..piece.find('{').expect("{")];
            let ret = after.trim().strip_prefix("->").unwrap_or("").trim();
            let params = split_top(params)
                .into_iter()
                .filter(|p| !p.trim().is_empty())
                .map(|p| rust_to_c(p.split_once(':').expect("name: type").1))
                .collect();
            found.insert(name, (rust_to_c(ret), params));
        }
    }
    found
}

fn matching_paren(text: &str) -> usize {
    let mut depth = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    panic!("unbalanced parentheses in {text}")
}

fn split_top(params: &str) -> Vec<&str> {
    params.split(',').collect()
}

/// C text without its `/* */` and `//` comments.
fn without_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("/*") {
        out.push_str(&rest[..start]);
        rest = rest[start..]
            .split_once("*/")
            .map_or("", |(_, after)| after);
    }
    out.push_str(rest);
    out.lines()
        .map(|l| l.split_once("//").map_or(l, |(code, _)| code))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every function the header declares, by name (declarations may span lines).
fn header_functions() -> BTreeMap<String, Signature> {
    let text = std::fs::read_to_string(repo().join("include/brook/brook_c.h")).expect("header");
    let mut found = BTreeMap::new();
    let code: String = without_comments(&text)
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join(" ");
    for statement in code.split(';') {
        let statement = statement.trim();
        let Some(open) = statement.find("brk_") else {
            continue;
        };
        let Some(paren) = statement[open..].find('(').map(|p| p + open) else {
            continue;
        };
        let name = statement[open..paren].trim().to_string();
        let ret = normal_c(&statement[..open]);
        let params = &statement[paren + 1..statement.rfind(')').expect(")")];
        let params = if params.trim() == "void" {
            Vec::new()
        } else {
            params
                .split(',')
                .map(|p| {
                    let p = p.trim();
                    // Drop the parameter's name: the last word, after any `*`.
                    let cut = p.rfind(['*', ' ']).expect("type name");
                    normal_c(&p[..=cut])
                })
                .collect()
        };
        found.insert(name, (ret, params));
    }
    found
}

#[test]
fn the_c_header_declares_exactly_what_the_library_exports() {
    let rust = rust_functions();
    let header = header_functions();
    assert!(rust.len() >= 40, "{} Rust functions found", rust.len());
    let mut problems = Vec::new();
    for (name, signature) in &rust {
        match header.get(name) {
            None => problems.push(format!("{name}: exported but not declared in brook_c.h")),
            Some(declared) if declared != signature => problems.push(format!(
                "{name}: brook_c.h says {declared:?}, the Rust definition {signature:?}"
            )),
            Some(_) => {}
        }
    }
    for name in header.keys().filter(|n| !rust.contains_key(*n)) {
        problems.push(format!("{name}: declared in brook_c.h but not exported"));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Builds `examples/c/sum.c` with `compiler` (`language`: its flags before the file) against
/// the static library into `program`, which must succeed.
fn build_example(compiler: &str, language: &[&str], library: &Path, program: &Path) {
    let compiled = Command::new(compiler)
        .args(language)
        .arg("-I")
        .arg(repo().join("include"))
        .arg(repo().join("examples/c/sum.c"))
        .args(["-x", "none"])
        .arg(library)
        .args(["-lpthread", "-ldl", "-lm", "-lrt", "-lutil", "-o"])
        .arg(program)
        .output()
        .expect("run the compiler");
    assert!(
        compiled.status.success(),
        "{compiler} {language:?} failed on examples/c/sum.c:\n{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
}

#[test]
fn a_c99_program_uses_the_header() {
    let Some(cc) = cxx::first_that_runs("CC", &["cc", "gcc", "clang"]) else {
        println!("c_header: no C compiler ($CC, cc, gcc, clang): the C example is not built");
        return;
    };
    let exe = std::env::current_exe().expect("test executable");
    let profile = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>");
    let library = cxx::static_library(profile);
    let program = std::env::temp_dir().join(format!("brook-c-sum-{}", std::process::id()));
    let c99 = [
        "-x",
        "c",
        "-std=c99",
        "-Wall",
        "-Wextra",
        "-pedantic",
        "-Werror",
    ];
    build_example(&cc, &c99, &library, &program);
    let expected =
        std::fs::read_to_string(repo().join("examples/c/sum.expected")).expect("expected");
    for runtime in cxx::runtimes() {
        let run = Command::new(&program)
            .env("BRT_RUNTIME", runtime)
            .output()
            .expect("run the C program");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(run.status.success(), "{runtime}: {stderr}");
        assert_eq!(
            String::from_utf8_lossy(&run.stdout),
            expected,
            "{runtime}: {stderr}"
        );
        assert!(
            stderr.contains("no kernel `missing`"),
            "{runtime}: {stderr}"
        );
    }
    let _ = std::fs::remove_file(&program);
    // The same file as C++: the header's `extern "C"` guard links it against the library.
    let Some(cxx) = cxx::compiler() else {
        println!("c_header: no C++ compiler: the header is not built as C++");
        return;
    };
    build_example(
        &cxx,
        &["-x", "c++", "-std=c++11", "-Wall", "-Werror"],
        &library,
        &program,
    );
    let run = Command::new(&program).output().expect("run the C++ build");
    assert_eq!(String::from_utf8_lossy(&run.stdout), expected);
    let _ = std::fs::remove_file(&program);
}
