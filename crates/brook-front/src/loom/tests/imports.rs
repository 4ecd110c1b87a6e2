//! `import`: splicing, once per file, cycles, missing files, positions in imported files.

use crate::diagnostic::Code;
use crate::loom::check_source;
use std::collections::HashMap;

fn check_with(files: &[(&str, &str)], main: &str) -> crate::loom::Checked {
    let files: HashMap<String, String> = files
        .iter()
        .map(|(n, t)| (n.to_string(), t.to_string()))
        .collect();
    let text = files[main].clone();
    check_source(main, &text, &mut |path: &str| {
        files
            .get(path)
            .cloned()
            .ok_or_else(|| "no such file".to_string())
    })
}

#[test]
fn an_import_splices_types_and_functions_once() {
    let checked = check_with(
        &[
            ("dir/main.loom", "import <lib/util.loom>\nimport \"lib/vec.loom\"\n\nkernel k(a: Float32[THREADS])\n  v: Vec <- {x: 1}\n  a[T] <- sq(a[T])\n  return\n"),
            ("dir/lib/util.loom", "import vec.loom -- also imported by main: spliced once\nfunc sq(x: Float32): Float32\n  return x * x\n"),
            ("dir/lib/vec.loom", "type Vec {x: Float32, y: Float32}\n"),
        ],
        "dir/main.loom",
    );
    let syntax_free: Vec<_> = checked
        .diagnostics
        .iter()
        .filter(|d| d.code != Code::LoomSyntax)
        .collect();
    // `{x: 1}` is not an expression: only that syntax error is expected.
    assert!(syntax_free.is_empty(), "{}", checked.render_diagnostics());
    assert_eq!(checked.file.text().matches("type Vec").count(), 1);
}

#[test]
fn errors_in_an_imported_file_name_that_file_and_line() {
    let checked = check_with(
        &[
            (
                "main.loom",
                "import lib.loom\nkernel k(a: Float32[THREADS])\n  a[T] <- sq(a[T])\n  return\n",
            ),
            (
                "lib.loom",
                "-- helpers\nfunc sq(x: Float32): Float32\n  return x * y\n",
            ),
        ],
        "main.loom",
    );
    let rendered = checked.render_diagnostics();
    assert!(
        rendered.starts_with("lib.loom:3:14: error[LM0301]: `y` is not declared"),
        "{rendered}"
    );
}

#[test]
fn cycles_missing_files_and_nested_imports_are_errors() {
    let checked = check_with(
        &[
            (
                "a.loom",
                "import b.loom\nkernel k(x: Int32[THREADS])\n  import c.loom\n  return\n",
            ),
            ("b.loom", "import a.loom\n"),
        ],
        "a.loom",
    );
    let messages: Vec<String> = checked
        .diagnostics
        .iter()
        .map(|d| format!("{} {}", d.code, d.message))
        .collect();
    assert_eq!(
        messages,
        [
            "LM0106 import cycle: a.loom imports b.loom imports a.loom",
            "LM0106 `import` must be at the top level (column 1): it splices definitions, not statements",
        ],
        "{}",
        checked.render_diagnostics()
    );
    let missing = check_with(&[("m.loom", "import gone.loom\n")], "m.loom");
    assert!(missing.diagnostics[0]
        .message
        .contains("cannot import `gone.loom` (gone.loom): no such file"));
}
