//! Fixture tests of the Brook frontend.
//!
//! - `fixtures/ok/*.br` and the programs in the repository's `examples/` must check clean: no
//!   error, no warning.
//! - `fixtures/diag/*.br` must produce exactly the diagnostics pinned in the `.stderr` file beside
//!   each. Run with `BLESS=1` to rewrite the snapshots, then review the diff.
//! - Every diagnostic code must appear in at least one snapshot.
//!
//! A fixture's first line may be `// brcc-flags: ...` with the flags `-a -c -pp -x -wN -D NAME[=v]`.

mod common;
#[path = "common/snapshot.rs"]
mod snapshot;

use brook_front::{check_source, Code, SourceFile};
use common::options_from;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

fn fixture_dir(kind: &str) -> PathBuf {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    match kind {
        "examples" => crate_dir.join("../../examples"),
        _ => crate_dir.join("tests/fixtures").join(kind),
    }
}

fn fixtures(kind: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(fixture_dir(kind))
        .expect("fixture directory")
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "br"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no fixtures in {kind}");
    files
}

/// Checks one fixture; returns its rendered diagnostics and their codes.
fn run(path: &Path, kind: &str) -> (String, Vec<Code>) {
    let text = fs::read_to_string(path).expect("fixture text");
    let name = format!("{kind}/{}", path.file_name().unwrap().to_string_lossy());
    let checked = check_source(SourceFile::new(name, text.clone()), &options_from(&text));
    let codes = checked.diagnostics.iter().map(|d| d.code).collect();
    (checked.render_diagnostics(), codes)
}

#[test]
fn ok_fixtures_check_clean() {
    let mut failures = String::new();
    let all = fixtures("ok").into_iter().map(|p| (p, "ok"));
    for (path, kind) in all.chain(fixtures("examples").into_iter().map(|p| (p, "examples"))) {
        let (rendered, _) = run(&path, kind);
        if !rendered.is_empty() {
            failures.push_str(&rendered);
        }
    }
    assert!(
        failures.is_empty(),
        "fixtures expected to be clean produced:\n{failures}"
    );
}

#[test]
fn diagnostic_fixtures_match_snapshots() {
    let mut mismatches = Vec::new();
    for path in fixtures("diag") {
        let (rendered, codes) = run(&path, "diag");
        assert!(
            !codes.is_empty(),
            "{} produced no diagnostic",
            path.display()
        );
        mismatches.extend(snapshot::mismatch(
            &path.with_extension("stderr"),
            &rendered,
        ));
    }
    snapshot::assert_none(&mismatches);
}

#[test]
fn every_diagnostic_code_has_a_fixture() {
    let mut seen = BTreeSet::new();
    for path in fixtures("diag") {
        let (_, codes) = run(&path, "diag");
        seen.extend(codes.iter().map(|c| c.number()));
    }
    let missing: Vec<String> = Code::ALL
        .iter()
        .filter(|c| !c.is_loom() && !seen.contains(&c.number()))
        .map(|c| format!("{c} {}", c.name()))
        .collect();
    assert!(
        missing.is_empty(),
        "codes without a diagnostic fixture: {missing:?}"
    );
}
