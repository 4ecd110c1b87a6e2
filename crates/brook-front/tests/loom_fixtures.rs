//! Fixture tests of the LOOM frontend.
//!
//! - The LOOM programs in the repository's `examples/loom/` must check clean.
//! - `fixtures/loom_diag/*.loom` must produce exactly the diagnostics pinned in the `.stderr`
//!   file beside each (imports are read from that directory). Run with `BLESS=1` to rewrite
//!   the snapshots, then review the diff.
//! - Every LOOM diagnostic code must appear in at least one snapshot.

#[path = "common/snapshot.rs"]
mod snapshot;

use brook_front::loom::{check_source, Checked};
use brook_front::Code;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn loom_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .expect("fixture directory")
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "loom"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no LOOM files in {}", dir.display());
    files
}

/// Checks a file, named `label/file.loom`; imports resolve to `dir`.
fn check(path: &Path, label: &str) -> Checked {
    let dir = path.parent().expect("a directory").to_path_buf();
    let text = fs::read_to_string(path).expect("fixture text");
    let name = format!("{label}/{}", path.file_name().unwrap().to_string_lossy());
    let prefix = format!("{label}/");
    check_source(&name, &text, &mut |import: &str| {
        let relative = import.strip_prefix(&prefix).unwrap_or(import);
        fs::read_to_string(dir.join(relative)).map_err(|e| e.kind().to_string())
    })
}

#[test]
fn loom_examples_check_clean() {
    let mut failures = String::new();
    for path in loom_files(&crate_dir().join("../../examples/loom")) {
        failures.push_str(&check(&path, "examples/loom").render_diagnostics());
    }
    assert!(failures.is_empty(), "LOOM examples produced:\n{failures}");
}

#[test]
fn loom_diagnostic_fixtures_match_snapshots() {
    let mut mismatches = Vec::new();
    for path in loom_files(&crate_dir().join("tests/fixtures/loom_diag")) {
        let checked = check(&path, "loom_diag");
        assert!(checked.has_errors(), "{} produced no error", path.display());
        let rendered = checked.render_diagnostics();
        mismatches.extend(snapshot::mismatch(
            &path.with_extension("stderr"),
            &rendered,
        ));
    }
    snapshot::assert_none(&mismatches);
}

#[test]
fn every_loom_code_has_a_fixture_named_for_it() {
    let mut seen = BTreeSet::new();
    for path in loom_files(&crate_dir().join("tests/fixtures/loom_diag")) {
        let checked = check(&path, "loom_diag");
        let named = path.file_name().unwrap().to_string_lossy()[..6].to_string();
        assert!(
            checked
                .diagnostics
                .iter()
                .any(|d| d.code.to_string() == named),
            "{} does not produce {named}",
            path.display()
        );
        seen.extend(checked.diagnostics.iter().map(|d| d.code.number()));
    }
    let missing: Vec<String> = Code::ALL
        .iter()
        .filter(|c| c.is_loom() && !seen.contains(&c.number()))
        .map(|c| format!("{c} {}", c.name()))
        .collect();
    assert!(
        missing.is_empty(),
        "LOOM codes without a fixture: {missing:?}"
    );
}
