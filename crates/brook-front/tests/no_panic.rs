//! The frontends never panic, whatever the input: random text, random token soup, and
//! mutations of the fixtures (Brook under random options; LOOM too, with imports of other
//! fixtures and of itself). Deep nesting gets an error, not a stack overflow. Whatever program
//! checks clean lowers to IR that passes the validator (a LOOM program for two grids, or a
//! lowering error that says what is not lowered yet).
//!
//! `BROOK_FUZZ_CASES=N` sets the number of cases per property (default 300, for CI); a long run
//! is `BROOK_FUZZ_CASES=200000 cargo test --release -p brook-front --test no_panic`.

use brook_front::brook::{CheckOptions, Define};
use brook_front::{check_source, compile_source, SourceFile};
use proptest::prelude::*;
use std::path::Path;
use std::sync::OnceLock;

fn cases() -> u32 {
    std::env::var("BROOK_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

fn options(preprocess: bool, strong: bool, constant_buffers: bool) -> CheckOptions {
    CheckOptions {
        strong_types: strong,
        warning_level: 3,
        preprocess,
        constant_buffers,
        defines: vec![
            Define::parse("N=4").unwrap(),
            Define::parse("FLAG").unwrap(),
        ],
        ..CheckOptions::default()
    }
}

/// Checks `text` and renders every diagnostic: neither may panic. A program that checks clean
/// must lower to IR that validates.
fn run(text: &str, options: &CheckOptions) {
    let compiled = compile_source(SourceFile::new("fuzz.br", text), options);
    let _ = compiled.checked.render_diagnostics();
    if let Some(module) = compiled.module {
        let module = module.unwrap_or_else(|e| panic!("lowering failed: {e}\n{text}"));
        if let Err(e) = brook_ir::validate(module) {
            panic!("invalid IR: {e}\n{text}");
        }
    }
}

const VOCABULARY: &[&str] = &[
    "kernel",
    "reduce",
    "void",
    "float",
    "float2",
    "float4",
    "int",
    "uint",
    "char",
    "double",
    "double2",
    "bool",
    "out",
    "iter",
    "const",
    "shared",
    "struct",
    "typedef",
    "Attribute",
    "GroupSize",
    "if",
    "else",
    "for",
    "while",
    "do",
    "return",
    "break",
    "switch",
    "goto",
    "a",
    "b",
    "s",
    "t",
    "indexof",
    "instance",
    "instanceInGroup",
    "syncGroup",
    "streamRead",
    "sin",
    "dot",
    "main",
    "<",
    ">",
    "<>",
    "[",
    "]",
    "[]",
    "(",
    ")",
    "{",
    "}",
    ";",
    ",",
    ".",
    ".xyzw",
    "=",
    "+=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "&&",
    "?",
    ":",
    "->",
    "&",
    "1",
    "2.0f",
    "0.5",
    "0x10",
    "'c'",
    "\"s\"",
    "#define X",
    "#define Y X",
    "X",
    "Y",
    "#if 1",
    "#ifdef X",
    "#else",
    "#endif",
    "#include <x>",
    "\n",
    "/*",
    "*/",
    "//",
    "\\",
];

/// Words for macro bodies and the kernel expressions that use them (`macros_in_kernels`).
const MACRO_WORDS: &[&str] = &[
    "X", "Y", "Z", "a", "i", "t", "b", "1", "2.5f", "0x3", "(", ")", "+", "-", "*", "/", "<", "?",
    ":", ",", ".x", "float2", "sin", "=", "float", "[", "]",
];

/// The texts of the files with extension `ext` in `dirs`, sorted.
fn texts_in(dirs: &[std::path::PathBuf], ext: &str) -> Vec<String> {
    let mut texts = Vec::new();
    for dir in dirs {
        for entry in std::fs::read_dir(dir).expect("fixture directory") {
            let path = entry.expect("directory entry").path();
            if path.extension().is_some_and(|e| e == ext) {
                texts.push(std::fs::read_to_string(path).expect("fixture text"));
            }
        }
    }
    texts.sort();
    texts
}

/// The fixture and example texts, read once.
fn fixture_texts() -> &'static [String] {
    static TEXTS: OnceLock<Vec<String>> = OnceLock::new();
    TEXTS.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let dirs = [
            root.join("tests/fixtures/ok"),
            root.join("tests/fixtures/diag"),
            root.join("../../examples"),
        ];
        texts_in(&dirs, "br")
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_text(text in "[ -~\t\n\r]{0,300}", pp: bool, strong: bool, cb: bool) {
        run(&text, &options(pp, strong, cb));
    }

    #[test]
    fn random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        run(&String::from_utf8_lossy(&bytes), &options(true, true, true));
    }

    #[test]
    fn token_soup(words in proptest::collection::vec(proptest::sample::select(VOCABULARY), 0..120), pp: bool, strong: bool) {
        run(&words.join(" "), &options(pp, strong, true));
    }

    #[test]
    fn macros_in_kernels(bodies in proptest::collection::vec(proptest::collection::vec(proptest::sample::select(MACRO_WORDS), 0..8), 3), uses in proptest::collection::vec(proptest::sample::select(MACRO_WORDS), 1..12), strong: bool) {
        let mut text = String::new();
        for (name, body) in ["X", "Y", "Z"].iter().zip(&bodies) {
            text += &format!("#define {name} {}\n", body.join(" "));
        }
        text += &format!("kernel void k(float a<>, int i<>, out float b<>) {{ float t = a; b = {}; }}\n", uses.join(" "));
        run(&text, &options(false, strong, true));
    }

    #[test]
    fn mutated_fixtures(index in any::<proptest::sample::Index>(), edits in proptest::collection::vec((any::<proptest::sample::Index>(), 0usize..12, "[ -~\n\r\t]{0,6}"), 1..6), pp: bool, strong: bool) {
        let mut text = index.get(fixture_texts()).clone().into_bytes();
        for (at, remove, insert) in edits {
            let start = at.index(text.len() + 1);
            let end = (start + remove).min(text.len());
            text.splice(start..end, insert.bytes());
        }
        run(&String::from_utf8_lossy(&text), &options(pp, strong, true));
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let depth = 100_000;
    let texts = [
        format!(
            "kernel void k(float a<>, out float b<>) {{ b = {}a{}; }}",
            "(".repeat(depth),
            ")".repeat(depth)
        ),
        format!(
            "kernel void k(float a<>, out float b<>) {{ {} }}",
            "{".repeat(depth)
        ),
        format!(
            "kernel void k(float a<>, out float b<>) {{ b = {}a; }}",
            "-".repeat(depth)
        ),
        format!(
            "kernel void k(float a<>, out float b<>) {{ {} b = a; }}",
            "if (a) ".repeat(depth)
        ),
        format!(
            "kernel void k(float a<>, out float b<>) {{ float x; {} a; }}",
            "x = ".repeat(depth)
        ),
        format!("int main() {{ {} }}", "(".repeat(depth)),
        format!("#define A \\\n{}", "x \\\n".repeat(depth)),
    ];
    for text in &texts {
        for pp in [false, true] {
            let checked = check_source(
                SourceFile::new("deep.br", text.clone()),
                &options(pp, true, true),
            );
            let _ = checked.render_diagnostics();
        }
    }
    let checked = check_source(
        SourceFile::new("deep.br", texts[0].clone()),
        &CheckOptions::default(),
    );
    assert!(checked.render_diagnostics().contains("nesting is too deep"));
}

/// Checks `text` as LOOM and renders every diagnostic: neither may panic. Imports read the
/// LOOM fixtures by index (`import 3`), and `self` imports the file itself.
fn run_loom(text: &str) {
    let checked = brook_front::loom::check_source("fuzz.loom", text, &mut |path: &str| {
        if path == "self" {
            return Ok(text.to_string());
        }
        let index: usize = path.parse().map_err(|_| "no such file".to_string())?;
        loom_texts()
            .get(index % loom_texts().len().max(1))
            .cloned()
            .ok_or_else(|| "no such file".to_string())
    });
    let _ = checked.render_diagnostics();
    if checked.has_errors() {
        return;
    }
    // What checks clean lowers (or says what it cannot lower yet) to IR that validates.
    // Each grid once with one block per thread group and once with two.
    use brook_front::loom::lower::{lower_grouped, Grid};
    for grid in [
        Grid::one_d(8, 4),
        Grid {
            threads: [4, 6],
            block: [2, 3],
        },
    ] {
        for copies in [None, Some(2)] {
            if let Ok(lowered) = lower_grouped(&checked, grid, copies) {
                let module = brook_ir::validate(lowered.module);
                let module =
                    module.unwrap_or_else(|e| panic!("invalid IR for {grid:?}: {e}\n{text}"));
                // What a device without native collectives runs validates too.
                for kernel in &module.kernels {
                    if let Some(expanded) = brook_ir::collective::expand(kernel, |_| false) {
                        let check = brook_ir::Module {
                            structs: module.structs.clone(),
                            kernels: vec![expanded],
                            source: None,
                        };
                        if let Err(e) = brook_ir::validate(check) {
                            panic!("invalid expanded IR for {grid:?}: {e}\n{text}");
                        }
                    }
                }
            }
        }
    }
}

const LOOM_VOCABULARY: &[&str] = &[
    "kernel",
    "func",
    "type",
    "const",
    "local",
    "shared",
    "global",
    "import",
    "if",
    "then",
    "else",
    "while",
    "for",
    "break",
    "continue",
    "return",
    "Bool",
    "Byte",
    "Int32",
    "Int64",
    "UInt32",
    "UInt64",
    "Float32",
    "Float64",
    "Range",
    "TRUE",
    "FALSE",
    "B",
    "BLOCKS",
    "BLOCKSIZE",
    "T",
    "THREADS",
    "X_T",
    "Y_THREADS",
    "X_BLOCKS",
    "a",
    "b",
    "f",
    "x'",
    "max",
    "block",
    "sqrt",
    "0",
    "1",
    "2.5",
    "1e3",
    "(",
    ")",
    "[",
    "]",
    "[[",
    "]]",
    "{",
    "}",
    ";",
    ":",
    ",",
    ".",
    "!",
    "*",
    "/",
    "%",
    "<<",
    ">>",
    "&",
    "+",
    "-",
    "|",
    "^",
    "=",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "&&",
    "||",
    "//",
    "/.",
    "/:",
    ":/",
    "..",
    "...",
    "<-",
    "+=",
    "\n",
    "\n  ",
    "\n    ",
    "--",
];

/// The LOOM examples and diagnostic fixtures, read once.
fn loom_texts() -> &'static [String] {
    static TEXTS: OnceLock<Vec<String>> = OnceLock::new();
    TEXTS.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let dirs = [
            root.join("tests/fixtures/loom_diag"),
            root.join("../../examples/loom"),
        ];
        texts_in(&dirs, "loom")
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn loom_random_text(text in "[ -~\t\n\r]{0,300}") {
        run_loom(&text);
    }

    #[test]
    fn loom_token_soup(words in proptest::collection::vec(proptest::sample::select(LOOM_VOCABULARY), 0..150)) {
        let text = words.join(" ").replace("\\n", "\n");
        run_loom(&text);
    }

    #[test]
    fn loom_mutated_fixtures(index in any::<proptest::sample::Index>(), edits in proptest::collection::vec((any::<proptest::sample::Index>(), 0usize..12, "([ -~\n\t]{0,6}|\nimport [0-9]\n|\nimport self\n)"), 1..6)) {
        let mut text = index.get(loom_texts()).clone().into_bytes();
        for (at, remove, insert) in edits {
            let start = at.index(text.len() + 1);
            let end = (start + remove).min(text.len());
            text.splice(start..end, insert.bytes());
        }
        run_loom(&String::from_utf8_lossy(&text));
    }
}

#[test]
fn loom_deep_nesting_is_an_error_not_a_crash() {
    let depth = 100_000;
    let texts = [
        format!(
            "kernel k(x: Int32)\n  x <- {}1{}\n  return\n",
            "(".repeat(depth),
            ")".repeat(depth)
        ),
        format!(
            "kernel k(x: Int32)\n  x <- {}1\n  return\n",
            "-".repeat(depth)
        ),
        format!(
            "kernel k(x: Int32)\n  x <- {}x\n  return\n",
            "x + ".repeat(depth)
        ),
        format!(
            "kernel k(x: Int32)\n  x <- {}x\n  return\n",
            "f // ".repeat(depth)
        ),
        format!(
            "kernel k(x: Int32)\n  x <- a{}\n  return\n",
            "[0]".repeat(depth)
        ),
        format!(
            "type P {}Int32{}\n",
            "{a: ".repeat(depth),
            "}".repeat(depth)
        ),
        (0..2_000)
            .map(|i| format!("{}if x > 0 then\n", " ".repeat(i)))
            .collect::<String>()
            + &" ".repeat(2_000)
            + "return\n",
    ];
    for text in &texts {
        let checked = brook_front::loom::check_source("deep.loom", text, &mut |_: &str| {
            Err("no imports".to_string())
        });
        assert!(checked.has_errors(), "{}", &text[..80.min(text.len())]);
        let _ = checked.render_diagnostics();
    }
}
